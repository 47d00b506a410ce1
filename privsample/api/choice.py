"""Which method to run (``--method auto``): a rule on public quantities only.

``choose_method(epsilon, delta, columns, rows)`` picks ``ppsyn``, ``aim`` or ``mst`` from the budget, the columns
(the domain sizes of a reviewed or privately discovered schema, or only the column names: then the sizes private
discovery typically produces, as ``privsample plan`` assumes) and a row count that is either public (stated by
the user, as ``privsample plan --rows``) or a noisy count (a DP output). It never sees a record. With it come the
calibrated forecasts of ``privsample.api.plan`` (time on this machine, peak memory, the memory check run before
any spend) and one sentence for the steward.

The rule
--------
Two public quantities drive it:

* the **signal** ``S = rows * sqrt(2 rho)``: the number of records over the noise sd of one count measured with
  the synthesizer's whole budget rho (zCDP; a person-level run with at most k rows per person: divided by k);
  ``rows x epsilon / 5.3`` to ``/ 6.1`` at delta = 1e-9 for epsilon 0.1 to 3 (Adult, 48,842 rows: S = 920,
  2,650, 8,450 and 24,000 at epsilon 0.1, 0.3, 1 and 3). With a noisy row count it is a DP output, like the count;
* the **time cap** ``max(10 x MST's forecast, 60 s)``: a method may take ten times MST's time, and any method
  may take a minute (MST takes 1-3 s on the narrow benchmark tables, where PPSyn-DP needs 3-55 s and is up to 60x
  more accurate).

Then, in this order:

1. a method whose memory check would refuse the domain (``--max-memory-mb``) is out;
2. **wide tables** (at least ``WIDE_COLUMNS`` = 25 columns): ``aim`` if the table has at most ``AIM_MAX_COLUMNS`` =
   60 columns and its time forecast (below) is within the cap, else ``mst``; never ``ppsyn``;
3. **narrow tables, large signal** (S at least ``AIM_SIGNAL`` = 10,000) whose columns are not all small (geometric
   mean of the domain sizes above ``SMALL_VALUES`` = 3): ``aim`` if its time forecast is within the cap;
4. otherwise ``ppsyn``.

AIM's time forecast is the calibrated one (``plan_calibration.json``, whose formula for AIM has a row-count term)
times ``max(1, S / AIM_SLOW_SIGNAL)`` (``AIM_SLOW_SIGNAL`` = 200,000): a guard beyond the largest signal measured,
where AIM may run more rounds on larger models than the calibration saw.

What it rests on (``benchmarks/results``; errors are mean L1 distances of normalised 2-way marginals)
---------------------------------------------------------------------------------------------------
* Narrow tables (``method_choice.md``: Adult, BR2000, NLTCS and ACS, 14-23 columns, at epsilon 0.1, 0.3, 1 and 3,
  seeds 0 and 1, reviewed schemas): PPSyn-DP had the best 2-way error or one within 5% (or the seeds' spread) of
  it in 11 of 16 cells, and the best 3-way error in 11 (within 5% of it in 14). MST was behind both everywhere
  (1.5-60x PPSyn-DP's error on the two-valued tables NLTCS and ACS). AIM pulls clearly ahead only with a large
  signal on tables of larger domains: Adult at epsilon 3 (S = 24,000: 0.049 against PPSyn-DP's 0.065) and BR2000
  at epsilon 3 (S = 18,700: 0.013 against 0.018); not at epsilon 1 (S = 6,600-8,500: within 6%), nor on the
  two-valued tables (NLTCS at epsilon 3: PPSyn-DP 0.0029 against AIM's 0.0031, 3-way 0.007 against 0.012; ACS at
  epsilon 1 and 3: AIM's 2-way 8-9% lower, its 3-way 2-20% higher). On Adult and BR2000 at epsilon 3 AIM took
  14-19 and 38-47 CPU s (``aim_cap_adult.csv``, ``aim_cap_br2000.csv``), 10-40x MST's time; its forecasts (46 s
  and 52 s) are within the default cap, so the rule picks AIM there.
* Wide tables (``wide_tables.md``: 25-200 columns of 2-10 values drawn from Bayesian networks, 10^5 and 10^6
  rows, epsilon 1, one seed): PPSyn-DP had the worst 2-way error of the three everywhere (0.73-1.09 times noisy
  independent columns): its rounds stop growing with the width (16 min(d, 25)). AIM (20 MB model cap) was the
  most accurate where it finished, except at 100 x 10^5 (0.058 against MST's 0.049): 0.40 against MST's 0.50
  (ratio to noisy independent columns) at 25 x 10^5, 0.53 against 0.60 at 50 x 10^5, 0.23 against 0.39 at
  25 x 10^6, 0.34 against 0.49 at 50 x 10^6, 0.56 against 0.59 at 100 x 10^6; it took 26-237 s, 9-40x MST's time,
  and did not finish 200 columns in 600 s. On latent-class tables (``latent_wide.md``: weak dependence spread over
  every pair) PPSyn-DP is the most accurate (0.55-0.63 times the exact independent product at 50-60 columns,
  MST 0.82-0.84) and AIM does not finish (it runs up to 16 d rounds at 1-3 s each). The rule cannot tell the two
  kinds of table apart from public quantities: it keeps ``aim`` within the cap up to 60 columns, else ``mst``.
* AIM's time (``planner_calibration.csv``, ``wide_tables.csv``, ``aim_wide.md``): the calibration, refitted on
  today's AIM, forecasts 45 s, 61 s and 80 s at 25, 50 and 100 columns x 10^5 rows (measured 26 s, 118 s, 63 s)
  and 174 s, 239 s and 311 s at 10^6 rows (measured 193 s, 237 s, 210 s; S = 173,000); on the narrow tables at
  epsilon 3 (S = 18,700-24,000) 46-52 s against 14-47 s measured. No signal-driven growth is left to correct
  within the measured range, so ``AIM_SLOW_SIGNAL`` sits beyond it.

The rule sees the table's shape, not its structure: ``benchmarks/results/method_choice.md`` lists where it misses
the best method by more than 5% (on the narrow tables Adult at epsilon 0.1 and ACS at epsilon 1 and 3; on the
wide tables 100 x 10^5, where MST is 16% better than AIM, and 25-100 columns x 10^6 rows, where AIM is 6-41%
better than MST but over the time cap).

Privacy: the inputs are public (the budget, a schema's domain sizes or the column names, options) or DP outputs (a
noisy row count, a privately discovered schema); the choice is their post-processing and spends nothing.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from privsample.api.forecast import duration, size_check

from privsample.errors import InputError

METHODS = ("ppsyn", "aim", "mst")
WIDE_COLUMNS = 25  # from here on: aim within the cap, else mst (PPSyn-DP's rounds stop growing with the width) ...
AIM_MAX_COLUMNS = 60  # ... and beyond this many columns mst (aim measured less accurate or unfinished there)
AIM_SIGNAL = 10_000.0  # narrow tables at or above this signal: aim within the cap (its error pulls ahead) ...
SMALL_VALUES = 3.0  # ... unless the columns hold this many values or fewer (geometric mean): ppsyn
AIM_SLOW_SIGNAL = 200_000.0  # AIM's time forecast times max(1, S / this): beyond the signals measured
TIME_FACTOR = 10.0  # the time cap: TIME_FACTOR x MST's forecast ...
TIME_FLOOR = 60.0  # ... or this many seconds, whichever is larger


@dataclass
class MethodForecast:
    """A method's forecast: seconds (``seconds_used``: the figure the rule compares with the cap, AIM's scaled by the
    signal), peak RSS in MB, the memory bound of the check before any spend and its refusal (None: not refused)."""

    seconds: float
    seconds_used: float
    peak_rss_mb: float
    memory_bound_mb: float | None
    refusal: str | None = None


@dataclass
class Choice:
    """The method, one sentence why, each method's forecast and the rule's inputs (``signal``, ``cap_seconds``,
    ``columns``, ``rows``, ``rho``)."""

    method: str
    reason: str
    forecasts: dict[str, MethodForecast]
    signal: float
    cap_seconds: float
    columns: int
    rows: float
    rho: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def synth_rho(epsilon: float, delta: float, n_columns: int, rows: float, discovery: bool, k: int = 1) -> float:
    """The synthesizer's zCDP budget: the whole (epsilon, delta) budget with a schema; without one, what the run's
    planned discovery (noisy row count and columns, ``plan_discovery``; ``k``: the privacy unit's rows per person)
    leaves at ``rows`` records."""
    from privsample.api.accounting import make_accountant
    from privsample.data.discovery_plan import plan_discovery, row_count_rho
    from privsample.privacy.conversion import cdp_rho

    if not discovery:
        return cdp_rho(epsilon, delta)
    acc, d_disc = make_accountant(epsilon, delta, None, None)

    count_rho = row_count_rho(acc.rho_total)
    rho_cols, _ = plan_discovery(acc.rho_total, d_disc, float(rows), n_columns, count_rho=count_rho, max_rows=k)
    return acc.rho_total - count_rho - rho_cols


def choose_method(
    epsilon: float,
    delta: float,
    columns: Sequence[int] | Sequence[str] | None,
    rows: float,
    *,
    schema=None,
    rho: float | None = None,
    speed: float = 1.0,
    max_memory_mb: float | None = None,
    time_factor: float = TIME_FACTOR,
    time_floor: float = TIME_FLOOR,
    calibration: dict | None = None,
    max_rows_per_unit: int = 1,
) -> Choice:
    """The method for a run (module docstring: the rule and its evidence), from public quantities only.

    ``columns``: the domain sizes (a reviewed or privately discovered schema's), or the column names (before
    discovery: the sizes discovery typically keeps for time, its worst case for the memory check). ``schema``: a
    reviewed or privately discovered ``Schema`` instead (its release domain; ``columns`` None or the same).
    ``rows``: a public row count or a noisy one (any real number; below 1 counts as 1). ``rho``: the synthesizer's
    zCDP budget when the caller knows it (after discovery: what is left); default ``synth_rho``. ``speed``: this
    machine's time factor (``forecast.machine_speed``; 1: the reference machine). ``max_memory_mb``: the run's limit
    (default the synthesizers'). ``time_factor`` / ``time_floor``: the time cap, max(time_factor x MST's forecast,
    time_floor seconds). ``max_rows_per_unit``: k of a person-level run (every count's noise is k times a
    record-level run's: the signal is divided by k, and the forecasts see rho / k^2). ``InputError`` for bad
    input."""
    from privsample.api.accounting import DISCOVERY_BINS, worst_case_domain
    from privsample.api.forecast import features, load_calibration, predict
    from privsample.checks import check_budget, check_count, check_number, python_option
    from privsample.synth import pgm
    from privsample.synth.registry import DEFAULT_MAX_MEMORY_MB

    check_budget(epsilon, delta, python_option)
    max_memory_mb = DEFAULT_MAX_MEMORY_MB if max_memory_mb is None else max_memory_mb
    check_number(max_memory_mb, "max_memory_mb", python_option, positive=True)
    check_number(speed, "speed", python_option, positive=True)
    if isinstance(rows, bool) or not isinstance(rows, (int, float)) or not math.isfinite(rows):
        raise InputError(f"rows must be a number (a public or noisy row count), not {rows!r}")
    n = max(float(rows), 1.0)
    names, sizes, domain, discovery = _columns(columns, schema)
    if discovery:
        domain = worst_case_domain(names)
        sizes = [DISCOVERY_BINS + 1] * len(names)
    elif domain is None:
        domain = pgm.Domain(names, sizes)
    d = len(sizes)
    k = check_count(max_rows_per_unit, "max_rows_per_unit", python_option) or 1
    if rho is None:
        rho = synth_rho(epsilon, delta, d, n, discovery, k)
    check_number(rho, "rho", python_option, positive=True)
    cal = calibration or load_calibration()
    signal = n * math.sqrt(2.0 * rho) / k
    feats = features(n, sizes, rho / (k * k))
    forecasts = {}
    for m in METHODS:
        secs, mb = predict(m, feats, cal, speed)
        bound, refusal = size_check(m, domain, schema, max_memory_mb)
        used = secs * max(1.0, signal / AIM_SLOW_SIGNAL) if m == "aim" else secs
        forecasts[m] = MethodForecast(secs, used, max(mb, bound or 0.0), bound, refusal)
    cap = max(time_factor * forecasts["mst"].seconds, time_floor)
    small = math.exp(sum(math.log(k) for k in sizes) / d) <= SMALL_VALUES
    method, reason = _rule(d, signal, cap, forecasts, small)
    notes = [f"{m}: {f.refusal}" for m, f in forecasts.items() if f.refusal]
    return Choice(method, reason, forecasts, signal, cap, d, n, float(rho), notes)


def _columns(columns, schema) -> tuple[list[str], list[int], Any, bool]:
    """(names, sizes, domain or None, discovery?) from the caller's columns or schema."""
    from privsample.data.encoding import release_domain

    if schema is not None:  # its release domain (names, sizes and the structural zeros of the memory check)
        domain = release_domain(schema, other=False).domain()
        sizes = [int(k) for k in domain.shape]
        if columns is not None and list(columns) not in (sizes, list(domain.attributes)):
            raise InputError("choose_method: the columns differ from the schema's (pass one or the other)")
        return list(domain.attributes), sizes, domain, False
    if columns is None:
        raise InputError("choose_method needs the columns (domain sizes or names) or a schema")
    if isinstance(columns, (str, bytes)) or not hasattr(columns, "__len__") or len(columns) == 0:
        raise InputError(f"columns must be a non-empty list of domain sizes or column names, not {columns!r}")
    if all(isinstance(c, str) for c in columns):
        return list(columns), [], None, True
    sizes = []
    for k in columns:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"a domain size must be a whole number >= 1 (got {k!r})")
        sizes.append(int(k))
    return [f"c{i}" for i in range(len(sizes))], sizes, None, False


def _rule(d: int, signal: float, cap: float, fc: dict[str, MethodForecast], small: bool) -> tuple[str, str]:
    """(method, reason): the module docstring's rule."""
    ok = {m for m, f in fc.items() if f.refusal is None}
    aim_s = fc["aim"].seconds_used
    aim_fits = "aim" in ok and aim_s <= cap
    over = (
        f"aim's forecast {duration(aim_s)} is over the {duration(cap)} cap"
        if "aim" in ok
        else "aim's model is too large"
    )
    if d > AIM_MAX_COLUMNS:
        over = f"beyond {AIM_MAX_COLUMNS} columns aim was measured less accurate than mst, or unfinished"
    if d >= WIDE_COLUMNS:
        if aim_fits and d <= AIM_MAX_COLUMNS:
            return "aim", (
                f"aim: the lowest error on wide tables ({d} columns) when it finishes, forecast {duration(aim_s)} "
                f"(cap {duration(cap)})"
            )
        if "mst" in ok:
            return "mst", (
                f"mst: on {d} columns ppsyn measures too few column pairs and {over}; "
                f"mst forecast {duration(fc['mst'].seconds)}"
            )
    elif signal >= AIM_SIGNAL and aim_fits and not small:
        return "aim", (
            f"aim: the best error at this budget on narrow tables ({signal:,.0f} records per noise sd), "
            f"forecast {duration(aim_s)} (cap {duration(cap)})"
        )
    elif "ppsyn" in ok:
        slow = signal >= AIM_SIGNAL and not small  # aim is out for its time (or memory) only
        why = f"; aim would be more accurate at this budget but {over}" if slow else ""
        what = "narrow tables of few-valued columns" if small else "narrow tables"
        best = "the best error within the time cap" if slow else "the best error at this budget"
        return "ppsyn", (
            f"ppsyn: {best} on {what} ({d} columns, {signal:,.0f} records per noise sd), "
            f"forecast {duration(fc['ppsyn'].seconds)}{why}"
        )
    for m in ("mst", "ppsyn", "aim"):
        if m in ok:
            return m, f"{m}: the only method whose model fits the memory limit, forecast {duration(fc[m].seconds)}"
    return "mst", "mst: every method's model exceeds the memory limit; the run will refuse it before any spend"


AUTO_COUNT_SHARE = 0.01  # of the budget left, for the noisy row count of a run with a schema


def choose_for_run(settings, accountant, noise, schema, engine) -> tuple[Any, Choice]:
    """(the synthesizer ``--method auto`` runs, the choice) once the schema is known (given or discovered), before
    the synthesis spends: from the budget left, the release schema and a noisy row count, the one private
    discovery released (its plan's ``n_hat``) or, with a given schema, one measured here (``AUTO_COUNT_SHARE`` of
    what is left; L2 sensitivity 1 per record, times the unit's k: ``gaussian_measure``). The rest is the rule on
    public quantities (``choose_method``, at the reference speed so that a seeded run's choice never depends on the
    machine's load)."""
    from fractions import Fraction

    import numpy as np

    from privsample.privacy.mechanisms import gaussian_measure
    from privsample.synth.registry import make_synthesizer, method_options

    plan = [e for e in accountant.ledger if e.label == "schema: plan" and "n_hat" in e.details]
    if plan:
        rows = float(plan[-1].details["n_hat"])
    else:
        rho_c = float(Fraction(AUTO_COUNT_SHARE) * Fraction(accountant.remaining))
        counts = np.array([int(engine.total())], dtype=np.int64)  # exact: only through the mechanism
        noisy, _ = gaussian_measure(
            accountant, noise, counts, rho_c, "auto: row count", measured="number of records (the method's choice)"
        )
        rows = float(max(int(noisy[0]), 1))
    choice = choose_method(
        settings.epsilon,
        settings.delta,
        None,
        rows,
        schema=schema,
        rho=accountant.remaining,
        max_memory_mb=settings.options.get("max_memory_mb"),
        max_rows_per_unit=accountant.unit.max_rows,
    )
    synth = make_synthesizer(choice.method, **method_options(choice.method, **settings.options))
    return synth, choice


__all__ = [
    "choose_for_run",
    "AUTO_COUNT_SHARE",
    "choose_method",
    "Choice",
    "MethodForecast",
    "synth_rho",
    "WIDE_COLUMNS",
    "AIM_SIGNAL",
    "METHODS",
]
