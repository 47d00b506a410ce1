"""A plan before the first spend: what ``privsample synth`` would do at each epsilon, from public facts only.

``plan(path, epsilon=[0.3, 1, 3], schema=..., method=..., rows=...)`` reads the column names (a CSV file's header
line alone, or a Parquet file's schema) and nothing else of the file, and states per epsilon and method: the budget
split (``make_accountant``, ``plan_discovery`` and the synthesizers' own split functions: ``mst.budget_split``,
``AIM.rounds_and_sigma``, ``PPSyn.rounds_and_share``), the smallest category frequency discovery releases
(``min_category_records``) and, without a schema, what discovery keeps per column kind (``discovery_forecast``),
the noise of each measured marginal, the model's size, and time and peak memory on this machine (a calibration
fitted on benchmarks/results, ``plan_calibration.json``, scaled by a ~0.2 s speed probe).

The figures that depend on the number of records (discovery's share and threshold, hence the synthesizer's noise
without a schema; noise as a share of the rows; time and memory) are computed for ``rows`` when the caller states
it (a public count), else for each row count of a fixed public grid (``GRID_ROWS``): assumed row counts, never
estimates.

Privacy: nothing here reads the data, so nothing is spent and nothing needs a proof; the output is a function of
the column names, the schema, the options and this machine's speed. Neither the file's size nor anything else
computed from its records reaches the output, so two neighbouring files (one record added, removed or changed)
give the same plan. It is a forecast, not a measurement: the times and memory come from fitted formulas (their
accuracy on the benchmark tables: benchmarks/results/planner.md).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from privsample.api.forecast import features, load_calibration, machine_speed, predict, size_check
from privsample.errors import InputError

PLAN_METHODS = ("mst", "aim", "ppsyn")
HEADER_MAX = 1 << 20  # bytes searched for the end of the header line
GRID_ROWS = (1_000, 10_000, 100_000, 1_000_000)  # row counts assumed when the caller states none (public)


# -- public facts about the file ---------------------------------------------------------------------
def header_names(path: Path, delimiter: str | None = None, encoding: str | None = None) -> list[str]:
    """The column names from the first non-blank line of a CSV file (bytes up to its end only), or from a
    Parquet file's schema (its footer). Never reads a record."""
    from privsample.data.table import parquet_names, table_format
    from privsample.data.csv_layout import check_header, detect_delimiter, check_delimiter

    fmt = table_format(path)
    if fmt == "parquet":
        return parquet_names(path)
    delimiter = check_delimiter(delimiter)
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    raw = b""
    try:
        with opener(path, "rb") as fh:
            while len(raw) < HEADER_MAX:
                line = fh.readline(HEADER_MAX)
                if not line:
                    break
                raw += line
                if raw.count(b'"') % 2 == 0 and raw.strip(b" \t\r\n\xef\xbb\xbf"):  # a whole, non-blank line
                    break
                if raw.count(b'"') % 2 == 0:
                    raw = b""  # a blank line before the header
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: cannot read the header ({exc.__class__.__name__})") from None
    try:
        text = raw.decode(encoding or "utf-8-sig")
    except (UnicodeDecodeError, LookupError):
        raise InputError(f"{path}: cannot decode the header line as {encoding or 'UTF-8'}: pass --encoding") from None
    if not text.strip():
        raise InputError(f"{path}: no header line")
    delimiter = delimiter or detect_delimiter(path, text.rstrip("\r\n"))
    row = next(csv.reader(io.StringIO(text), delimiter=delimiter, quotechar='"', doublequote=True, strict=False))
    return check_header(path, row)


# -- the plan --------------------------------------------------------------------------------------
@dataclass
class MethodPlan:
    """One method at one epsilon, for one row count (stated by the caller or assumed from ``GRID_ROWS``)."""

    epsilon: float
    method: str
    row_count: int  # the number of records this entry assumes (``Plan.rows_from`` says where it comes from)
    rho_total: float
    rho_discovery: float  # row count and columns together (0 with a schema)
    rho_synth: float
    budget: dict[str, Any]  # the synthesizer's split (per-measurement rho, rounds)
    noise: dict[str, Any]  # sigma of the measured marginals, also as a share of ``row_count``
    min_category_records: int | None  # discovery only
    model_mb: float | None
    memory_bound_mb: float | None  # the size check run before any spend (refused above --max-memory-mb)
    seconds: float
    peak_rss_mb: float
    verdict: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """What ``privsample synth`` would do, per row count, epsilon and method (``rows``: one entry each).

    ``row_counts``: the numbers of records the entries assume: ``[rows]`` when the caller stated it
    (``rows_from`` "given"), else ``GRID_ROWS`` (``rows_from`` "grid"). ``discovery`` (without a schema): per row
    count and epsilon, what private discovery would keep (``privsample.data.discovery_plan.discovery_forecast``:
    the records a category needs, the noise sd of a numeric column's grid histogram and the records a value or
    tail needs, about 2 sigma). Nothing here comes from the file but the column names."""

    path: str
    columns: list[str]
    row_counts: list[int]
    rows_from: str  # "given" or "grid"
    schema: bool
    delta: float
    max_memory_mb: float
    speed: float  # this machine's probe time over the reference's (1: as fast)
    rows: list[MethodPlan]
    verdict: list[str]
    discovery: list[dict] = field(default_factory=list)  # without a schema: what discovery keeps, per count and ε
    unit: dict | None = None  # with a privacy unit: how the noise grows with k (``privsample.api.person``)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict) -> "Plan":
        d = dict(d)
        d["rows"] = [MethodPlan(**r) for r in d["rows"]]
        return cls(**d)


def parse_epsilons(value) -> list[float]:
    """A number, a list of numbers or text such as '0.3,1,3' -> finite epsilons > 0 (InputError otherwise)."""
    items = value.split(",") if isinstance(value, str) else (value if isinstance(value, (list, tuple)) else [value])
    out = []
    for it in items:
        try:
            e = float(it.strip()) if isinstance(it, str) else float(it)
        except (TypeError, ValueError):
            raise InputError(f"--epsilon must be a number or a list such as 0.3,1,3 (got {value!r})") from None
        if isinstance(it, bool) or not math.isfinite(e) or e <= 0:
            raise InputError(f"--epsilon must be finite numbers > 0 (got {it!r})")
        out.append(e)
    if not out:
        raise InputError("--epsilon names no value")
    return out


def _synth(method: str, max_memory_mb: float):
    from privsample.synth import make_synthesizer

    return make_synthesizer(method, max_memory_mb=max_memory_mb)


def _model_mb(method: str, domain) -> float:
    """Largest model the fit may build (MB): MST the heaviest spanning tree of pairs; AIM and PPSyn-DP the
    junction tree of their whole workload, capped at max_model_size."""
    from privsample.synth.mst import find_root
    from privsample.synth.selection import model_size_mb

    attrs, sizes = list(domain.attributes), dict(zip(domain.attributes, domain.shape))
    if method == "mst":
        parent = {a: a for a in attrs}
        cells = float(sum(sizes.values()))
        for w, a, b in sorted(((sizes[a] * sizes[b], a, b) for i, a in enumerate(attrs) for b in attrs[i + 1 :]))[::-1]:
            ra, rb = find_root(parent, a), find_root(parent, b)
            if ra != rb:
                parent[ra] = rb
                cells += w
        return cells * 8 / 2**20
    synth = _synth(method, 1e18)
    try:
        whole = model_size_mb(domain, list(synth._workload(domain)))
    except Exception:  # noqa: BLE001 - a huge workload: the cap applies
        whole = math.inf
    return min(whole, synth.max_model_size)


def _noise(method: str, rho: float, d: int, sizes: Sequence[int], n: int) -> tuple[dict, dict]:
    """(budget split, noise) of ``method`` given ``rho`` for the synthesizer, from its own split functions."""
    from privsample.privacy.mechanisms import rho_for_sigma, sigma_for_rho

    if method == "mst":
        from privsample.synth.mst import budget_split

        b = budget_split(rho, d)
        sig1, sig2 = b["sigma_1way"], sigma_for_rho(b["rho_2way"])
        budget = {k: b[k] for k in ("rho_1way", "rho_select", "rho_2way")}
        budget.update({"one_way": d, "tree_edges": d - 1})
        noise = {"sigma_1way": sig1, "sigma_2way": sig2}
    elif method == "aim":
        synth = _synth("aim", 1e18)
        T, sigma, rho_sel = synth.rounds_and_sigma(rho, d)
        rho_left = rho - d * rho_for_sigma(sigma)  # after the one-way initialisation
        best = sigma_for_rho(synth.alpha * rho_left)  # one measurement with everything left: the floor
        budget = {"rounds_T": T, "rho_1way": rho_for_sigma(sigma), "rho_select": rho_sel}
        noise = {"sigma_1way": sigma, "sigma_2way": sigma, "sigma_min": best, "sigma_max": sigma}
    else:
        from privsample.synth.ppsyn_steps import one_way_budgets

        synth = _synth("ppsyn", 1e18)
        T, share = synth.rounds_and_share(d)
        init = one_way_budgets(list(sizes), share * rho)
        rho_m, rho_sel = synth.round_split(rho - float(init.sum()), T)
        sig1 = [sigma_for_rho(float(r)) for r in init]
        sig_m = sigma_for_rho(rho_m)
        budget = {"rounds_T": T, "one_way_share": share, "rho_measure": rho_m, "rho_select": rho_sel}
        noise = {
            "sigma_1way": max(sig1),
            "sigma_1way_min": min(sig1),
            "sigma_2way": sig_m,
            "sigma_min": sigma_for_rho(synth.alpha * (rho - float(init.sum()))),
            "sigma_max": sig_m,
        }
    noise["share_of_rows"] = {k: v / max(n, 1) for k, v in noise.items()}
    return budget, noise


def plan(
    source: str | Path,
    *,
    epsilon: float | Sequence[float] | str = 1.0,
    delta: float | None = None,
    schema=None,
    method: str | Sequence[str] | None = None,
    rows: int | None = None,
    max_memory_mb: float | None = None,
    probe: bool = True,
    delimiter: str | None = None,
    encoding: str | None = None,
    privacy_unit: str | None = None,
    max_rows_per_unit: int | None = None,
) -> Plan:
    """The plan of ``privsample synth`` on the table at ``source`` for each epsilon (a number, a list or
    '0.3,1,3') and method (default: mst, aim and ppsyn), without reading a record (module docstring).

    ``schema``: a reviewed or private schema (path or ``Schema``); without it the plan includes private
    discovery. ``rows``: the number of records, if that count is public; without it the figures that depend on
    it are stated for each row count of ``GRID_ROWS`` (assumed, not estimated: the file is not measured).
    ``probe``: time this machine (about 0.2 s); False assumes the reference speed. ``delimiter`` /
    ``encoding``: a CSV file's (default: detected from the header line; UTF-8). ``privacy_unit`` /
    ``max_rows_per_unit``: a person-level run (``unit_forecast``: the noise at each k). ``InputError`` for bad
    input."""
    from privsample.data.schema import Schema, check_schema_usable
    from privsample.data.table import table_format
    from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_BINS, worst_case_domain
    from privsample.api.person import unit_forecast
    from privsample.checks import check_budget, check_number, cli_option
    from privsample.data.encoding import release_domain
    from privsample.synth.registry import DEFAULT_MAX_MEMORY_MB

    epsilons = parse_epsilons(epsilon)
    delta = DEFAULT_DELTA if delta is None else delta
    max_memory_mb = DEFAULT_MAX_MEMORY_MB if max_memory_mb is None else max_memory_mb
    check_number(max_memory_mb, "max_memory_mb", cli_option, positive=True)
    for e in epsilons:
        check_budget(e, delta, cli_option)
    methods = [method] if isinstance(method, str) else list(method or PLAN_METHODS)
    for m in methods:
        if m not in PLAN_METHODS:
            raise InputError(f"unknown method '{m}' for the plan (choose from: {', '.join(PLAN_METHODS)})")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
        raise InputError(f"--rows must be a whole number >= 1 (got {rows!r})")
    path = Path(source)
    table_format(path)  # missing file, directory, unknown type: InputError
    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    if schema is not None:
        check_schema_usable(schema)
    names, unit, k = _modelled_names(path, delimiter, encoding, privacy_unit, max_rows_per_unit)
    if schema is not None:
        missing = [c.name for c in schema.columns if c.name not in names]
        if missing:
            raise InputError(f"the schema's column(s) {', '.join(missing)} are not in the header of {path}")
        coding = release_domain(schema, other=False)
        domain = coding.domain()
        sizes = list(domain.shape)
    else:
        domain = worst_case_domain(names)  # what the run's size check uses before discovery
        sizes = [DISCOVERY_BINS + 1] * len(names)  # typical discovered sizes, for time and noise
    row_counts = [rows] if rows is not None else list(GRID_ROWS)
    calibration = load_calibration()
    speed = machine_speed(calibration) if probe else 1.0
    out: list[MethodPlan] = []
    checks = {m: size_check(m, domain, schema, max_memory_mb) for m in methods}
    model = {m: _model_mb(m, domain) for m in methods}
    forecast = []
    for n in row_counts:
        for e in epsilons:
            out += _entries(n, e, delta, schema, names, methods, sizes, checks, model, calibration, speed)
            if schema is None:
                forecast.append(_discovery_forecast(n, e, delta, len(names)))
    return Plan(
        path=str(path),
        columns=names,
        row_counts=row_counts,
        rows_from="given" if rows is not None else "grid",
        schema=schema is not None,
        delta=delta,
        max_memory_mb=float(max_memory_mb),
        speed=speed,
        rows=out,
        verdict=_verdict(
            out, row_counts, rows is None, _choices(row_counts, max(epsilons), delta, schema, names, max_memory_mb)
        ),
        discovery=forecast,
        unit=None if unit is None else unit_forecast(out, unit, k),
    )


def _choices(row_counts, epsilon: float, delta: float, schema, names, max_memory_mb: float) -> dict:
    """{(row count, epsilon): ``choose_method``'s choice}: the plan states what ``--method auto`` would run."""
    from privsample.api.choice import choose_method

    return {
        (n, epsilon): choose_method(
            epsilon, delta, None if schema is not None else names, n, schema=schema, max_memory_mb=max_memory_mb
        )
        for n in row_counts
    }


def _modelled_names(path: Path, delimiter, encoding, privacy_unit, max_rows_per_unit) -> tuple[list, Any, Any]:
    """(the header's column names a run models, the privacy unit's column, k): the unit's column is never
    modelled (``privsample.api.person``)."""
    from privsample.data.unit_names import check_unit_column
    from privsample.checks import check_unit, cli_option

    names = header_names(path, delimiter, encoding)
    unit, k = check_unit(privacy_unit, max_rows_per_unit, cli_option)
    if unit is not None:
        check_unit_column(unit, names, str(path), cli_option)
        names = [c for c in names if c != unit]
    return names, unit, k


def _discovery_forecast(n: int, e: float, delta: float, m: int) -> dict:
    """What discovery keeps at ``n`` records and epsilon ``e`` (the run's own split: ``make_accountant``, then
    ``discovery_forecast`` with the run's bins)."""
    from privsample.data.discovery_plan import discovery_forecast
    from privsample.api.accounting import DISCOVERY_BINS, make_accountant

    acc, d_disc = make_accountant(e, delta, None, None)
    return {"epsilon": e, **discovery_forecast(acc.rho_total, d_disc, n, m, bins=DISCOVERY_BINS)}


def _entries(n, e, delta, schema, names, methods, sizes, checks, model, calibration, speed) -> list[MethodPlan]:
    """The entries of ``n`` records at epsilon ``e``, one per method (``plan``'s loop body)."""
    from privsample.api.accounting import make_accountant

    d = len(sizes)
    acc, d_disc = make_accountant(e, delta, schema, None)
    rho_total, rho_synth, rho_disc, need = acc.rho_total, acc.remaining, 0.0, None
    if schema is None:
        from privsample.data.discovery_plan import plan_discovery, row_count_rho

        count_rho = row_count_rho(rho_total)
        rho_cols, details = plan_discovery(rho_total, d_disc, float(n), len(names), count_rho=count_rho)
        rho_disc = count_rho + rho_cols
        rho_synth = rho_total - rho_disc
        need = details["min_category_records"]
    out = []
    for m in methods:
        budget, noise = _noise(m, rho_synth, d, sizes, n)
        secs, mb = predict(m, features(n, sizes, rho_synth), calibration, speed)
        bound, refusal = checks[m]
        notes = []
        if refusal:
            notes.append(refusal)
        if need is not None:
            notes.append(f"categories below ~{need:,} records merge into (other)")
        out.append(
            MethodPlan(
                epsilon=e,
                method=m,
                row_count=int(n),
                rho_total=rho_total,
                rho_discovery=rho_disc,
                rho_synth=rho_synth,
                budget=budget,
                noise=noise,
                min_category_records=need,
                model_mb=model[m],
                memory_bound_mb=bound,
                seconds=secs,
                peak_rss_mb=max(mb, bound or 0.0) if refusal and bound else mb,
                verdict=notes,
            )
        )
    return out


def _verdict(rows: list[MethodPlan], row_counts: list[int], assumed: bool, choices: dict | None = None) -> list[str]:
    """Short advice from the plan (public): refusals, discovery's threshold per epsilon (a given row count only:
    with assumed counts each entry's ``min_category_records`` states it), the method to pick (per row count when
    they are assumed: consecutive counts with the same pick share a line): ``choices``, the rule of
    ``--method auto`` (``privsample.api.choice``) at each row count and the largest epsilon."""
    lines = []
    refused = sorted({r.method for r in rows if r.verdict and r.verdict[0].startswith(("this domain", "max_"))})
    for m in refused:
        first = next(r for r in rows if r.method == m)
        lines.append(f"{m}: {first.verdict[0]}")
    for r in rows if not assumed else []:  # the thresholds of assumed row counts: each entry's own
        if r.min_category_records is not None and r.method == rows[0].method:
            lines.append(f"at ε={r.epsilon:g}, categories below ~{r.min_category_records:,} records merge into (other)")
    ok = [r for r in rows if r.method not in refused]
    if len({r.method for r in ok}) > 1 and choices:
        eps = max(r.epsilon for r in ok)
        picks: list[tuple[str, list[int], str]] = []  # (method, row counts, reason) per run with the same pick
        for n in row_counts:
            c = choices[n, eps]
            if picks and picks[-1][0] == c.method:
                picks[-1][1].append(n)
            else:
                picks.append((c.method, [n], c.reason))
        for m, ns, reason in picks:
            where = f"at {_counts(ns)} rows (assumed), " if assumed else ""
            lines.append(f"{where}pick {m} at ε={eps:g} (what --method auto would choose): {reason.split(': ', 1)[-1]}")
    return lines


def _counts(ns: list[int]) -> str:
    """'1,000 / 10,000' for two row counts; '1,000 to 1,000,000' for a longer run; '1,000' for one."""
    if len(ns) > 2:
        return f"{ns[0]:,} to {ns[-1]:,}"
    return " / ".join(f"{n:,}" for n in ns)


__all__ = [
    "plan",
    "Plan",
    "MethodPlan",
    "parse_epsilons",
    "PLAN_METHODS",
]
