"""The main job as a Python API: table -> schema -> engine -> synthesizer -> synthetic table.

``synthesize`` is what ``privsample synth`` runs. Budget plan for a user budget (epsilon, delta):

* With a reviewed schema (provenance "user"): all of rho = cdp_rho(epsilon, delta) goes to the
  synthesizer.
* With a schema produced by ``privsample schema --private-epsilon``: its ledger (rho_s, delta_s) is
  added to this run's accountant, which covers both: rho = cdp_rho(epsilon, delta - delta_s).
* Without a schema: the domain is discovered privately (``private_schema``). A noisy row count is
  measured first with 1% of rho; from it and public parameters only (post-processing) the discovery
  share of rho is planned (``plan_discovery``: from 5% for large tables up to 50% for small ones, 70% at ~1,000 rows,
  so that categories above a stated frequency survive the threshold), with a delta slack of
  ``DISCOVERY_DELTA_SHARE * delta`` (10%) for thresholded release. An explicit ``schema_share``
  fixes the share instead (and the delta slack at ``schema_share * delta``). The rest of rho goes
  to the synthesizer. Domains are never read from the data silently.
Every step's (epsilon, delta) is covered by the one accountant, which refuses overruns.

Records reach the mechanisms only through the marginal engine, which encodes every record by the
fixed rule of ``encode(..., release=True)`` on every engine (clip, catch-all, null code; a record the
schema cannot hold is left out). The rule is per record, so it is 1-stable under add/remove-one
neighbours and the guarantee above holds for the raw table; no message, exit code or decision depends
on how many records it touched. An empty table is released from like any other (n = 0 and n = 1 are
neighbours).

A public table (``public``, AIM, MST and PPSyn-DP, with a reviewed schema) is read and coded by the same rule
into a marginal engine of its own, before any spend; it is the user's declared public input, charged nothing and
listed in the ledger as such (``privsample.synth.public``).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from privsample.data.schema import Categorical, Schema, check_schema_usable
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant, LedgerEntry
from privsample.privacy.conversion import cdp_rho
from privsample.privacy.noise import NoiseSource, make_noise
from privsample.synth.base import no_progress, progress_phase

DEFAULT_DELTA = 1e-9
DEFAULT_SCHEMA_SHARE = None  # planned from the noisy row count (``plan_discovery``)
DISCOVERY_DELTA_SHARE = 0.1  # delta slack of planned discovery, as a share of the user's delta
DISCOVERY_BINS = 16
DISCOVERY_MAX_CATEGORIES = 64


def check_budget(epsilon: float, delta: float) -> None:
    if epsilon is None or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise InputError(f"--epsilon must be a finite number > 0 (got {epsilon})")
    if delta is None or not isinstance(delta, (int, float)) or not (0 < delta < 1):
        raise InputError(f"--delta must be in (0, 1) (got {delta})")


ENGINES = ("auto", "numpy", "duckdb", "spark")
# ``auto``: NumPy while the table, loaded and encoded in memory, would take well under the available
# memory (peak RSS about 14-18x the file size for Parquet, ``benchmarks/results/engines.md``; about
# 10x for CSV), else DuckDB out of core.
AUTO_SHARE = {"parquet": 40, "csv.gz": 40, "csv": 20}  # numpy while file size * share <= available memory
# With a reviewed schema the file is coded a batch at a time and only the codes (1-4 bytes a cell) are held:
# peak RSS about 5x the Parquet file on the 100-column, 1,000,000-row table of benchmarks/wide_tables.py.
AUTO_SHARE_CODED = {"parquet": 10, "csv.gz": 10, "csv": 3}


def choose_engine(source, engine: str, schema: Schema | None) -> str:
    """The engine to use: ``engine``, or for ``auto`` Spark for a Spark DataFrame, else NumPy or DuckDB
    by file size (``AUTO_SHARE``, or ``AUTO_SHARE_CODED`` with a schema; without one, DuckDB discovers the
    schema out of core too)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' ({'|'.join(ENGINES)})")
    from privsample.marginals.spark_engine import is_dataframe  # does not import pyspark

    if is_dataframe(source):
        if engine not in ("auto", "spark"):
            raise InputError(f"a Spark DataFrame needs the spark engine (got --engine {engine})")
        return "spark"
    if engine != "auto":
        return engine
    import psutil

    from privsample.data.table import table_format

    path = Path(source)
    fmt = table_format(path)
    if fmt == "csv" and path.name.lower().endswith(".gz"):
        fmt = "csv.gz"
    size, available = path.stat().st_size, psutil.virtual_memory().available
    if size * (AUTO_SHARE if schema is None else AUTO_SHARE_CODED)[fmt] <= available:
        return "numpy"
    return "duckdb"


def make_engine(
    engine: str,
    source,
    schema: Schema,
    *,
    clip: bool,
    other: bool,
    spark_master: str,
    engine_options: dict | None,
    release: bool = True,
    delimiter: str | None = None,
    encoding: str | None = None,
):
    """A DuckDB or Spark engine on ``source`` coded by ``schema`` (``engine_options``: its keyword options).

    ``release`` (default): the per-record rule of ``encode(..., release=True)``, as on the NumPy path.
    ``delimiter`` / ``encoding``: a CSV file's, as for ``read_table`` (default: detected)."""
    opts = {"delimiter": delimiter, "encoding": encoding, **(engine_options or {})}
    if engine == "duckdb":
        from privsample.marginals.duckdb_engine import DuckDBEngine

        return DuckDBEngine(source, schema, clip=clip, other=other, release=release, **opts)
    from privsample.marginals.spark_engine import SparkEngine

    return SparkEngine(source, schema, clip=clip, other=other, release=release, master=spark_master, **opts)


VALUES_OPTIONS = {
    "duckdb": ("memory_limit", "threads", "temp_directory"),
    "spark": ("spark", "config", "connect_timeout"),
}


def make_values(
    engine: str,
    source,
    *,
    spark_master: str,
    engine_options: dict | None,
    delimiter: str | None = None,
    encoding: str | None = None,
):
    """The DuckDB or Spark reader of ``source``'s exact value counts (``DuckDBValues``, ``SparkValues``), for
    private discovery; ``make_engine`` on it then codes the same cleaned rows. ``engine_options``: the engine's
    options, of which the reader takes those that concern reading (``VALUES_OPTIONS``). Reads the header only:
    the records are read on the first count."""
    opts = {k: v for k, v in (engine_options or {}).items() if k in VALUES_OPTIONS[engine]}
    if engine == "duckdb":
        from privsample.marginals.duckdb_engine import DuckDBValues

        return DuckDBValues(source, delimiter=delimiter, encoding=encoding, **opts)
    from privsample.marginals.spark_engine import SparkValues

    return SparkValues(source, master=spark_master, delimiter=delimiter, encoding=encoding, **opts)


RELEASE_RULE = (
    "values outside the schema are handled record by record: numbers are clipped to the bounds, "
    "unknown categories go to the catch-all, missing values and non-numbers to the null code; a "
    "record the schema cannot hold is left out (no count is disclosed; 'privsample check' lists "
    "them for the data owner and is not private)"
)


def release_domain(schema: Schema, other: bool) -> Schema:
    """The schema the release path encodes with, a function of the public ``schema`` and flags only.

    A privately discovered schema is noisy, so every column gets a code for every value
    (``release_schema``: catch-alls and null codes) and no record is left out. A reviewed schema is
    used as declared (``other``: catch-alls for its categorical columns)."""
    from privsample.data.encoding import release_schema, schema_with_other

    if schema.provenance == "private":
        return release_schema(schema)
    return schema_with_other(schema) if other else schema


def worst_case_domain(names: list[str]):
    """The largest domain private discovery can produce for these columns (for size checks before spending).

    A categorical column has at most ``DISCOVERY_MAX_CATEGORIES`` categories plus the catch-all and the
    null code; a numeric one its bins plus the null code, within the same bound. Public: names only."""
    from privsample.synth.pgm import Domain

    cells = max(DISCOVERY_MAX_CATEGORIES + 2, DISCOVERY_BINS + 1)
    return Domain(list(names), [cells] * len(names))


DEFAULT_MAX_MEMORY_MB = 8192.0


def parse_workload(text: str) -> list[tuple[tuple[str, ...], float]]:
    """'a,b;c,d' -> [(('a','b'), 1.0), (('c','d'), 1.0)]."""
    out = []
    for part in text.split(";"):
        cols = tuple(c.strip() for c in part.split(",") if c.strip())
        if cols:
            out.append((cols, 1.0))
    if not out:
        raise InputError(f"--workload '{text}' names no cliques")
    return out


def check_number(flag: str, value, positive: bool = False) -> bool:
    """``value`` is a finite real number (and > 0 with ``positive``), else ``InputError`` naming ``flag``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (positive and value <= 0):
        raise InputError(f"{flag} must be a finite number{' > 0' if positive else ''} (got {value!r})")
    return True


def method_options(
    method: str,
    *,
    max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
    iters=None,
    workload=None,
    max_model_size=None,
    eta=None,
    schedule=None,
    max_candidates=None,
    unsafe_as_published: bool = False,
) -> dict:
    """Keyword options for ``make_synthesizer`` from the command line's flags (or the Python API's keywords);
    refuses unsafe/unsupported combinations (``InputError``).

    ``workload``: cliques as text ('a,b;c,d', columns by ',', cliques by ';') or a sequence of column tuples."""
    if method == "ppsyn-paper" and not unsafe_as_published:
        raise InputError(
            "--method ppsyn-paper runs the published PPSyn, which is NOT differentially private; "
            "add --unsafe-as-published to run it for reproduction only"
        )
    check_number("--max-memory-mb", max_memory_mb, positive=True)
    _check_count("--iters", iters)
    if max_model_size is not None:
        check_number("--max-model-size", max_model_size, positive=True)
    if eta is not None and not (check_number("--eta", eta) and 0 < eta <= 1):
        raise InputError(f"--eta must be in (0, 1] (got {eta!r})")
    from privsample.synth.ppsyn import SCHEDULES

    if schedule is not None and schedule not in SCHEDULES:
        raise InputError(f"--schedule must be one of {', '.join(SCHEDULES)} (got {schedule!r})")
    _check_count("--max-candidates", max_candidates)
    opts: dict = {"max_memory_mb": max_memory_mb}
    if iters is not None:
        opts["iters"] = int(iters)
    if method in ("aim", "ppsyn", "ppsyn-paper"):
        if workload is not None:
            opts["workload"] = parse_workload(workload) if isinstance(workload, str) else _workload(workload)
        if max_model_size is not None:
            opts["max_model_size"] = max_model_size
    elif workload is not None or max_model_size is not None:
        raise InputError(f"--workload/--max-model-size apply to aim and ppsyn, not {method}")
    if schedule is not None:
        if method != "ppsyn":
            raise InputError(f"--schedule applies to ppsyn, not {method}")
        opts["schedule"] = schedule
    if max_candidates is not None:
        if method != "ppsyn":
            raise InputError(f"--max-candidates applies to ppsyn, not {method}")
        if schedule == "note":
            raise InputError("--max-candidates applies to ppsyn's annealed schedule, not --schedule note")
        opts["max_candidates"] = int(max_candidates)
    if eta is not None:
        if method != "ppsyn-paper" and not (method == "ppsyn" and schedule == "note"):
            raise InputError(
                "--eta sets the budget rule of 'ppsyn --schedule note' and of ppsyn-paper; "
                f"{method}{' (annealed schedule)' if method == 'ppsyn' else ''} does not use it"
            )
        opts["eta"] = eta
    return opts


def _check_count(flag: str, value) -> None:
    """None, or a whole number >= 1 (not a bool), else InputError naming ``flag``."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
        raise InputError(f"{flag} must be a whole number >= 1 (got {value!r})")


def _workload(cliques) -> list[tuple[tuple[str, ...], float]]:
    """A workload given as a sequence of column tuples (or of (columns, weight) pairs)."""
    out = []
    try:
        for c in cliques:
            if len(c) == 2 and not isinstance(c[0], str) and isinstance(c[1], (int, float)):
                cols, weight = tuple(c[0]), float(c[1])
            else:
                cols, weight = tuple(c), 1.0
            if not cols or not all(isinstance(x, str) for x in cols):
                raise TypeError
            out.append((cols, weight))
    except TypeError:
        raise InputError(f"workload must be text ('a,b;c,d') or a list of column tuples, not {cliques!r}") from None
    if not out:
        raise InputError("the workload names no cliques")
    return out


@dataclass
class SynthResult:
    model: Any  # SynthModel
    table: Any  # pandas DataFrame of synthetic records
    accountant: Accountant
    schema: Schema


def make_accountant(
    epsilon: float, delta: float, schema: Schema | None, schema_share: float | None
) -> tuple[Accountant, float]:
    """(accountant for the whole run, delta reserved for private discovery).

    ``schema_share`` None (planned discovery): the discovery delta is ``DISCOVERY_DELTA_SHARE * delta``;
    a fixed share s in (0, 1): ``s * delta``, as its rho share."""
    check_budget(epsilon, delta)
    if schema is not None and schema.provenance == "private" and schema.ledger:
        entries = [LedgerEntry.from_dict(e) for e in schema.ledger.get("entries", [])]
        exact = sum((Fraction(e.delta) for e in entries), Fraction(0))
        d_s = float(exact)
        if Fraction(d_s) < exact:  # round up, so that the accountant's exact sum fits the slack
            d_s = math.nextafter(d_s, math.inf)
        if d_s >= delta:
            raise InputError(f"the schema's discovery used delta={d_s:g}, not below --delta {delta:g}")
        acc = Accountant(cdp_rho(epsilon, delta - d_s), delta_slack=d_s, target=(epsilon, delta))
        acc.absorb(entries)  # raises BudgetExceeded if the schema alone costs more than the budget
        return acc, 0.0
    if schema is not None:
        return Accountant.from_epsilon_delta(epsilon, delta), 0.0
    if schema_share is None:
        d_disc = DISCOVERY_DELTA_SHARE * delta
    elif not (isinstance(schema_share, (int, float)) and 0 < schema_share < 1):
        raise InputError("schema share must be in (0, 1)")
    else:
        d_disc = schema_share * delta
    return Accountant.from_epsilon_delta(epsilon, delta, delta_slack=d_disc), d_disc


def synth_charge(
    epsilon: float, delta: float, schema, schema_share: float | None, method: str, command: str = "synth"
) -> dict:
    """What a synthesis run is charged in a budget file, from its options and the (public) schema only: its
    accountant's whole ρ and δ slack (``privsample.privacy.budget``)."""
    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    if schema is not None:
        check_schema_usable(schema)
    acc, _ = make_accountant(epsilon, delta, schema, schema_share)
    return {
        "command": command,
        "mechanism": method + ("" if schema is not None else " + discovery"),
        "rho": acc.rho_total,
        "delta": acc.delta_slack,
        "neighbouring": acc.neighbouring,
        "epsilon_asked": epsilon,
        "delta_asked": delta,
    }


def discovery_charge(epsilon: float, delta: float) -> dict:
    """What ``discover_schema`` (``privsample schema --private-epsilon``) is charged in a budget file."""
    check_budget(epsilon, delta)
    acc = Accountant.from_epsilon_delta(epsilon, delta, delta_slack=delta / 2)
    return {
        "command": "schema --private-epsilon",
        "mechanism": "private schema discovery",
        "rho": acc.rho_total,
        "delta": acc.delta_slack,
        "neighbouring": acc.neighbouring,
        "epsilon_asked": epsilon,
        "delta_asked": delta,
    }


def discover_schema(df, epsilon: float, delta: float, noise: NoiseSource) -> Schema:
    """The schema of ``df`` discovered under (epsilon, delta)-DP, as ``privsample schema --private-epsilon``
    discovers it: the whole budget goes to discovery (``private_schema`` with ``rho`` of (epsilon, delta/2)
    and delta/2 for the category thresholds, ``DISCOVERY_BINS`` bins, at most ``DISCOVERY_MAX_CATEGORIES``
    categories a column). The schema has provenance "private" and carries the accountant's ledger, so that a
    later fit with it adds this cost to its own. ``InputError`` for a bad budget, before any spend."""
    from privsample.data.discovery import private_schema

    check_budget(epsilon, delta)
    acc = Accountant.from_epsilon_delta(epsilon, delta, delta_slack=delta / 2)
    s = private_schema(
        df,
        acc,
        noise,
        rho=acc.rho_total,
        delta=delta / 2,
        bins=DISCOVERY_BINS,
        max_categories=DISCOVERY_MAX_CATEGORIES,
    )
    s.ledger = acc.to_dict()
    s.provenance = "private"
    from privsample.data.discovery_report import warn_losses

    warn_losses(s)  # one DiscoveryLossWarning per column discovery lost (post-processing)
    return s


def in_memory_table(source, engine: str, schema: Schema | None):
    """``source`` as ``read_table`` would read it from CSV when it is an in-memory table (``frame_table``),
    None for a path or a Spark DataFrame; ``InputError`` for anything else (before any budget is spent)."""
    import os

    from privsample.data.frames import ACCEPTED, frame_kind, frame_table
    from privsample.marginals.spark_engine import is_dataframe  # does not import pyspark

    if frame_kind(source) is None:
        if isinstance(source, (str, os.PathLike)) or is_dataframe(source):
            return None
        raise InputError(f"expected {ACCEPTED}, not {type(source).__name__}")
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}' ({'|'.join(ENGINES)})")
    if engine not in ("auto", "numpy"):
        raise InputError(f"an in-memory table is read by the numpy engine (got --engine {engine})")
    return frame_table(source, label="the input table", **({"na_values": schema.na_values} if schema else {}))


def synthesize(
    source,
    *,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    method: str = "ppsyn",
    schema: Schema | str | Path | None = None,
    rows: int | None = None,
    seed: int | None = None,
    clip: bool = False,
    other: bool = False,
    engine: str = "auto",
    spark_master: str = "local[2]",
    engine_options: dict | None = None,
    schema_share: float | None = DEFAULT_SCHEMA_SHARE,
    method_options: dict | None = None,
    noise: NoiseSource | None = None,
    progress=no_progress,
    discovery_options: dict | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    sample: bool = True,
    public=None,
    budget=None,
) -> SynthResult:
    """Fit ``method`` on the table at ``source`` under (epsilon, delta)-DP and sample a synthetic table.

    ``source``: a CSV/Parquet path (for ``engine="spark"`` also a URI or a Spark DataFrame), or an in-memory
    table (a pandas DataFrame, a pyarrow Table, a polars DataFrame), read as ``read_table`` reads the same data
    written to CSV (``privsample.data.frames``) on the numpy engine. Bad input raises ``InputError`` before
    any budget is spent.
    ``engine``: numpy | duckdb | spark | auto (``choose_engine``); without ``schema``, duckdb and spark discover
    it privately from their own per-column value counts (``make_values``), as numpy does in memory.
    ``engine_options``: keyword options of the DuckDB/Spark engine (e.g. ``memory_limit``, ``threads``).
    Values outside the schema never stop the run: ``RELEASE_RULE`` (``encode(..., release=True)``) handles
    them record by record on every engine. ``clip`` is accepted for compatibility; clipping is always on.
    ``schema_share``: None (default) plans the discovery share from a noisy row count; a number fixes it.
    ``discovery_options``: keyword options of ``plan_discovery`` (``target_fraction``, ``min_share``,
    ``max_share``, ``pass_probability``) for planned discovery.
    ``delimiter`` / ``encoding``: a CSV file's (``read_table``; default: detected from the header line and
    a byte-order mark, else UTF-8).
    ``sample``: False leaves ``table`` None, for callers that stream the rows (``SynthModel.sample_chunks``
    with ``np.random.default_rng(seed)``, as here, gives the same rows).
    ``public``: a public table (path or in-memory table) with the schema's columns, for ``method`` "aim", "mst" or
    "ppsyn" with a ``schema``: coded by the same rule, measured at no privacy cost (``privsample.synth.aim``,
    ``mst``, ``ppsyn``). Read with the same ``delimiter``/``encoding``; a missing column or no rows is an
    ``InputError`` before any spend.
    ``budget``: a ``Budget`` (or its file): the run's whole budget is charged to it before the data are read,
    or the run is refused (``BudgetExceeded``) (``privsample.privacy.budget``).
    Without a schema, every loss of private discovery (a column left with at most one value, a numeric column
    clipping more than 5% of its values: ``privsample.data.discovery_report.discovery_losses``) is emitted as a
    ``DiscoveryLossWarning``, before the run may stop because more than half of the columns kept one value.
    """
    if budget is not None:
        args = dict(locals(), budget=None)  # the arguments, before any other local name
        check_public(public, method, schema, source)  # before the budget file is charged
        from privsample.privacy.budget import as_budget, refuse_seeded

        budget = as_budget(budget)
        refuse_seeded(budget, seed)
        charge = synth_charge(epsilon, delta, schema, schema_share, method)
        with budget.spending(**charge, source=source, output="in-memory result"):
            return synthesize(**args)
    from privsample.data.encoding import encode
    from privsample.data.table import read_table
    from privsample.marginals import NumpyEngine
    from privsample.synth import make_synthesizer

    check_budget(epsilon, delta)
    if rows is not None:
        from privsample.synth.model import check_rows

        rows = check_rows(rows)
    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    if schema is not None:
        check_schema_usable(schema)
    check_public(public, method, schema, source)  # before the accountant is made
    frame = in_memory_table(source, engine, schema)  # None for a path or a Spark DataFrame
    synth = make_synthesizer(method, **(method_options or {}))
    if public is not None and hasattr(synth, "check_public"):
        synth.check_public()  # a method's own conditions on a public table (PPSyn: the annealed schedule)
    accountant, d_disc = make_accountant(epsilon, delta, schema, schema_share)
    pub = None
    if public is not None:  # public: read and coded before anything private, at no cost
        from privsample.synth.public import read_public

        with progress_phase(progress, "read public table", message="no privacy cost"):
            pub = read_public(public, release_domain(schema, other), delimiter=delimiter, encoding=encoding)
    noise = noise if noise is not None else make_noise(seed)  # seeded noise warns: NOT private
    rng = np.random.default_rng(seed)  # sampling/decoding randomness (post-processing)

    # Release path: every engine encodes by the same per-record rule (``encode(..., release=True)``),
    # so no value, count, message or exit code depends on one record; the table may even be empty.
    engine = "numpy" if frame is not None else choose_engine(source, engine, schema)
    if engine != "spark" and frame is None:
        source = Path(source)
    if engine in ("duckdb", "spark"):
        values = None  # without a schema: the engine's reader of exact value counts, for private discovery
        try:
            if schema is None:
                values = make_values(
                    engine,
                    source,
                    spark_master=spark_master,
                    engine_options=engine_options,
                    delimiter=delimiter,
                    encoding=encoding,
                )
                schema = _discover(
                    values, synth, accountant, noise, d_disc, schema_share, discovery_options, epsilon, delta, progress
                )
            schema = release_domain(schema, other)
            synth.check_size(schema.domain(), schema)
            eng = make_engine(
                engine,
                values if values is not None else source,  # the engine takes over the reader's cleaned rows
                schema,
                clip=True,
                other=other,
                spark_master=spark_master,
                engine_options=engine_options,
                release=True,
                delimiter=delimiter,
                encoding=encoding,
            )
        finally:
            if values is not None:
                values.close()  # nothing left to close once the engine took it over
    elif frame is None and schema is not None:
        # A reviewed schema and a file: read and code it a batch at a time, so that the table itself is
        # never in memory, only its codes (the same codes as ``encode(read_table(...), release=True)``).
        from privsample.data.encoding import read_codes

        with progress_phase(progress, "read table"):
            coding = release_domain(schema, other)
            codes = read_codes(
                source,
                coding,
                na_values=schema.na_values,
                allow_empty=True,
                delimiter=delimiter,
                encoding=encoding,
            )
        with progress_phase(progress, "encode table", accountant=accountant):
            schema = coding
            synth.check_size(schema.domain(), schema)
            eng = NumpyEngine(codes, schema.domain())
        del codes
    else:
        with progress_phase(progress, "read table"):
            df = (
                frame
                if frame is not None
                else read_table(
                    source,
                    allow_empty=True,
                    delimiter=delimiter,
                    encoding=encoding,
                    **({"na_values": schema.na_values} if schema is not None else {}),
                )
            )
        if schema is None:
            schema = _discover(
                df, synth, accountant, noise, d_disc, schema_share, discovery_options, epsilon, delta, progress
            )
        with progress_phase(progress, "encode table", accountant=accountant):
            schema = release_domain(schema, other)
            synth.check_size(schema.domain(), schema)
            eng = NumpyEngine(encode(df, schema, release=True, compact=True), schema.domain())
        del df, frame  # only the codes are needed from here on

    try:
        model = synth.fit(eng, accountant, noise, progress, schema=schema, **({"public": pub} if pub else {}))
    finally:
        getattr(eng, "close", lambda: None)()
    model.params.update({"epsilon": epsilon, "delta": delta, "seed": seed, "engine": engine})
    table = None
    if sample:
        with progress_phase(
            progress, "sample", accountant=accountant, message="draw synthetic records (no privacy cost)"
        ):
            table = model.sample_table(rows, rng)
    return SynthResult(model=model, table=table, accountant=accountant, schema=schema)


def _discover(
    table, synth, accountant, noise, d_disc, schema_share, discovery_options, epsilon, delta, progress
) -> Schema:
    """The schema of ``table`` (a DataFrame, or an engine's ``ValueSource``) discovered privately with a share of
    the run's budget. The model size is checked first on the worst case of discovery (the column names only,
    public), before any spend; the losses are warned of and a collapsed schema refused before the synthesis
    spends anything."""
    from privsample.data.column_values import ValueSource
    from privsample.data.discovery import private_schema
    from privsample.data.discovery_report import check_not_collapsed, warn_losses

    names = list(table.names) if isinstance(table, ValueSource) else [str(c) for c in table.columns]
    with progress_phase(progress, "check model size", message="worst case of discovery"):
        synth.check_size(worst_case_domain(names))  # before any spend
    with progress_phase(
        progress, "discover schema", accountant=accountant, message="private category/bounds discovery"
    ):
        # Discovery takes a share of the whole budget: planned from a noisy row count (share=None) or fixed.
        schema = private_schema(
            table,
            accountant,
            noise,
            rho=accountant.rho_total,
            delta=d_disc,
            share=schema_share,
            bins=DISCOVERY_BINS,
            max_categories=DISCOVERY_MAX_CATEGORIES,
            **(discovery_options or {}),
        )
    warn_losses(schema)  # one DiscoveryLossWarning per column discovery lost (post-processing)
    check_not_collapsed(schema, accountant.epsilon_spent(delta), epsilon)  # before the synthesis spend
    return schema


def check_public(public, method: str, schema: Schema | None, source=None) -> None:
    """``InputError`` unless a public table can be used: ``method`` takes one, the schema is reviewed, and it is
    not the private table ``source`` (the same file, a byte-identical copy or an equal in-memory table:
    ``privsample.synth.public.check_not_private``). Call it before any budget is reserved or spent."""
    if public is None:
        return
    from privsample.synth.public import PUBLIC_ONLY, check_not_private

    if method not in PUBLIC_ONLY:
        raise InputError(f"--public is supported by {', '.join(PUBLIC_ONLY)}, not {method}")
    if schema is None:
        raise InputError(
            "--public needs --schema: both tables are coded by the same schema "
            "('privsample schema PUBLIC' drafts one from the public table at no privacy cost)"
        )
    # Reads the private table, but refuses only when it IS the declared public table, where no guarantee is left to
    # protect (check_not_private); done before the budget file or the accountant is charged.
    check_not_private(public, source)


def table_kind(path: str | Path) -> str:
    """The output format of ``path`` by its extension: "parquet", "csv.gz" or "csv"."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return "parquet"
    return "csv.gz" if "".join(path.suffixes[-2:]).lower().endswith(".gz") else "csv"


def write_table(df, path: str | Path) -> None:
    """Write CSV (or Parquet by extension) atomically: temp file, then rename."""
    from privsample.io import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        if table_kind(path) == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, compression="gzip" if table_kind(path) == "csv.gz" else None)


def _arrow_schema(df):
    """The Parquet schema of every chunk, fixed by the first: a column of text or of missing values only
    is a string column, a nullable integer column an int64 one."""
    import pyarrow as pa

    fields = []
    for f in pa.Schema.from_pandas(df, preserve_index=False):
        fields.append(pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f)
    return pa.schema(fields)


def write_chunks(chunks, path: str | Path, on_chunk=None) -> int:
    """Write an iterable of DataFrames (same columns) as one table, CSV, .csv.gz or Parquet by extension,
    streaming: one chunk in memory at a time. Atomic (temporary file, then rename); returns the number of
    rows. Running out of disk space is an ``InputError`` and leaves no file. ``on_chunk(rows_so_far)``
    is called after each chunk."""
    import errno
    import gzip

    from privsample.io import atomic_path

    path = Path(path)
    kind = table_kind(path)
    rows = 0
    try:
        with atomic_path(path) as tmp:
            if kind == "parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq

                writer = None
                try:
                    for df in chunks:
                        if writer is None:
                            schema = _arrow_schema(df)
                            writer = pq.ParquetWriter(tmp, schema)
                        writer.write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False))
                        rows += len(df)
                        on_chunk and on_chunk(rows)
                finally:
                    if writer is not None:
                        writer.close()
            else:
                first = True
                with (
                    gzip.open(tmp, "wt", newline="", encoding="utf-8", compresslevel=GZIP_LEVEL)
                    if kind == "csv.gz"
                    else open(tmp, "w", newline="", encoding="utf-8")
                ) as fh:
                    for df in chunks:
                        df.to_csv(fh, index=False, header=first)
                        first = False
                        rows += len(df)
                        on_chunk and on_chunk(rows)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise InputError(f"not enough disk space to write {path} (nothing was written)") from None
        raise
    return rows


GZIP_LEVEL = 6  # zlib's default: on synthetic Adult, 1.6x faster than level 9 for a 4% larger file
ESTIMATE_ROWS = 10_000  # rows drawn (not written) to estimate the size of a large output


def free_bytes(path: str | Path) -> int:
    """Free disk space where ``path`` would be written (its nearest existing ancestor directory)."""
    import shutil

    p = Path(path).absolute().parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def _human(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} PB"


def estimate_output_bytes(model, rows: int, path: str | Path) -> float:
    """Bytes that ``rows`` rows from ``model`` would take at ``path`` (its format by extension), from
    ``ESTIMATE_ROWS`` rows drawn with a fixed generator of their own (so that the output for a seed does
    not change) and written in memory. Post-processing of the model only."""
    import gzip
    import io

    n0 = min(int(rows), ESTIMATE_ROWS)
    if n0 <= 0:
        return 0.0
    df = model.sample_table(n0, np.random.default_rng(0))
    kind = table_kind(path)
    if kind == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        size = len(buf.getvalue())
    else:
        data = df.to_csv(index=False).encode("utf-8")
        size = len(gzip.compress(data, compresslevel=GZIP_LEVEL)) if kind == "csv.gz" else len(data)
    return size / n0 * int(rows)


def check_output_size(model, rows: int, path: str | Path) -> None:
    """Refuse (``InputError``) ``rows`` rows that would not fit in the free disk space at ``path``,
    stating the size they would take. Outputs of at most ``ESTIMATE_ROWS`` rows are not estimated."""
    if rows <= ESTIMATE_ROWS:
        return
    need, free = estimate_output_bytes(model, rows, path), free_bytes(path)
    if need > free:
        raise InputError(
            f"{rows:,} rows would take about {_human(need)} in {Path(path).name}, more than the "
            f"{_human(free)} free on its disk: pass a smaller --rows"
        )


__all__ = [
    "synthesize",
    "method_options",
    "parse_workload",
    "write_table",
    "write_chunks",
    "check_output_size",
    "estimate_output_bytes",
    "make_accountant",
    "check_budget",
    "synth_charge",
    "discovery_charge",
    "SynthResult",
    "Categorical",
    "release_domain",
    "RELEASE_RULE",
]
