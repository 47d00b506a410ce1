"""Small real tables: `privsample synth` without a schema (private discovery) against a reviewed schema.

Tables: a 1,000-row sample of ``adult_raw.csv`` (rows drawn with the fixed seed ``ADULT_SAMPLE_SEED``, written
once to ``benchmarks/.cache/``), the full ``car_raw.csv`` (1,728 rows) and ``mushroom_raw.csv`` (8,124 rows).
Grid: epsilon in {0.5, 1, 2}, methods mst / aim / ppsyn, seeds 0-2, two arms:

* ``none``: no schema, what ``privsample synth data.csv`` does (``synthesize(path, epsilon=..., method=...)``:
  private discovery with the pipeline's own plan);
* ``reviewed``: the non-private draft (``draft_schema`` of the table) with provenance "user", all of the
  budget to the synthesizer.

Each run is a fresh single-threaded worker process (BLAS/OpenMP/XLA threads 1), with seeded noise (``seed`` =
the run's seed): reproducible and NOT private, which is what a benchmark needs. Scoring (not private, as
``privsample evaluate``): the synthetic table is written to CSV and read back, then both tables are coded by the
REAL table's own domain (``schema_with_other(draft_schema(real))``, built independently of the arm) with
``encode(..., clip=True, other=True)``; unknown categories go to the catch-all, numbers are clipped, and a value
that is not a number in a numeric column (``(other)`` from a column discovery left with only the catch-all) or a
missing value in a non-nullable numeric column gets an extra cell that the real table never uses, so it counts
as error in full instead of stopping the run. Scores: mean L1 workload error over all 1-, 2- and 3-way marginals.

*Merging floor*: the 2-way error of the real table against itself after every category (of the draft's
categorical columns) with fewer records than the release threshold is merged into the catch-all: what the
thresholded histogram cannot avoid at that size. Two thresholds: the one the run actually used (read from its
ledger: the ``threshold`` of each column's "category counts" entry), recorded per no-schema run, and the one of
the current default plan at that epsilon (``default_threshold``).

Resumable: rows are appended to the CSV as runs finish, and done (table, epsilon, method, arm, seed, share)
keys are skipped; the Markdown report is rewritten from the whole CSV at the end (or with ``--report``).

    python benchmarks/small_tables.py --quick        # smoke run: eps 1, mst, seed 0 (small_tables.quick.csv)
    python benchmarks/small_tables.py                # the full grid (162 runs; see the .md for the time)
    python benchmarks/small_tables.py --tables car --eps 1 --methods aim --seeds 0,1
    python benchmarks/small_tables.py --report       # rewrite small_tables.md from small_tables.csv
    python benchmarks/small_tables.py --credit --quick   # the credit-like table, seed 0 (18 runs without --quick)
Results: benchmarks/results/small_tables.{csv,md}.

Credit-like table (``--credit``): ``credit_like`` makes a 1,000-row table of our own, shaped like the public German
credit table (text codes, small integer codes, a 1/2 label, skewed amounts; one column partly empty), from a fixed
seed. At epsilon 1, for mst / aim / ppsyn, without a schema and with the exact public schema of the generator's
domain, each run records per column what survives (frequent values kept, real records clipped or merged, a
single synthetic value, invented values, extra empties) and for the table the 2-way error (all columns; the number
columns among themselves), the discovered category threshold and its merging floor. Results:
``benchmarks/results/small_tables_credit.csv`` (one row per run and column) and a section of small_tables.md that
the other parts of this script keep when they rewrite the page.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed copy
from benchmarks.freshness import stamp  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / ".cache"

ADULT_ROWS = 1000
ADULT_SAMPLE_SEED = 20240919
TABLES = ("adult", "car", "mushroom")
EPSILONS = (0.5, 1.0, 2.0)
METHODS = ("mst", "aim", "ppsyn")
SEEDS = (0, 1, 2)
ARMS = ("none", "reviewed")
TARGET_EPS = 1.0
RATIO_TARGET = 1.5  # car, mushroom: no-schema error within 1.5x of the reviewed-schema error
SINGLE_THREAD = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
KEY = ("table", "epsilon", "method", "arm", "seed", "share")
FIELDS = [
    *KEY,
    "status",
    "rows_real",
    "rows_synth",
    "err1",
    "err2",
    "err3",
    "floor_run",
    "threshold_run",
    "catchall_cols",
    "numeric_catchall",
    "numeric_catchall_names",
    "synth_s",
    "score_s",
    "process_s",
    "load",
    "message",
    "when",
]


# -- tables ------------------------------------------------------------------------------------------
def table_path(name: str) -> Path:
    """The CSV of a benchmark table (the Adult sample is written to the cache on first use)."""
    if name == "car":
        return DATA / "car_raw.csv"
    if name == "mushroom":
        return DATA / "mushroom_raw.csv"
    if name != "adult":
        raise SystemExit(f"unknown table {name!r} ({', '.join(TABLES)})")
    path = CACHE / f"adult_{ADULT_ROWS}_{ADULT_SAMPLE_SEED}.csv"
    if not path.exists():
        import pandas as pd

        raw = pd.read_csv(DATA / "adult_raw.csv", dtype=str, keep_default_na=False)  # the raw text, unchanged
        sample = raw.sample(n=ADULT_ROWS, random_state=ADULT_SAMPLE_SEED).sort_index()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        sample.to_csv(tmp, index=False)
        os.replace(tmp, path)
    return path


def read_real(name: str):
    from privsample.data.table import read_table

    return read_table(table_path(name))


# -- scoring on the real table's own domain ------------------------------------------------------------
def eval_schema(real_df):
    """The real table's own domain: its non-private draft with a catch-all in every categorical column."""
    from privsample.data.discovery import draft_schema
    from privsample.data.encoding import schema_with_other

    return schema_with_other(draft_schema(real_df))


def eval_domain(ev) -> dict[str, int]:
    """Sizes of the scoring domain: the schema's, plus one 'not a number' cell per numeric column."""
    from privsample.data.schema import Numeric

    return {c.name: c.size + isinstance(c, Numeric) for c in ev.columns}


def score_codes(df, ev) -> dict:
    """Codes of ``df`` in the scoring domain; never fails on values outside it (see the module docstring)."""
    import numpy as np
    import pandas as pd

    from privsample.data.encoding import encode
    from privsample.data.schema import Numeric

    df = df.copy()
    outside = {}
    for col in ev.columns:
        if col.name not in df.columns:  # a column the synthetic table lacks: every record outside
            df[col.name] = None
        if isinstance(col, Numeric):
            s = df[col.name]
            x = pd.to_numeric(s.astype(object).where(s.notna(), None), errors="coerce").astype(float).to_numpy()
            missing = s.isna().to_numpy()
            bad = (~missing & ~np.isfinite(x)) | (missing & (not col.nullable))
            df[col.name] = np.where(bad, col.lower, x)
            outside[col.name] = bad
    codes = encode(df[ev.names], ev, clip=True, other=True)
    for name, bad in outside.items():
        codes[name] = codes[name].copy()
        codes[name][bad] = ev[name].size  # the extra cell (real values never land there)
    return codes


def engine(codes, ev):
    from privsample.marginals import NumpyEngine
    from privsample.synth.pgm import Domain

    dom = eval_domain(ev)
    return NumpyEngine(codes, Domain(list(dom), list(dom.values())))


def workload_scores(real_codes, synth_codes, ev, ks=(1, 2, 3)) -> dict[int, float]:
    from privsample.evaluation.workload import all_cliques, workload_error

    r, s = engine(real_codes, ev), engine(synth_codes, ev)
    return {k: workload_error(r, s, all_cliques(ev.names, k)) for k in ks if k <= len(ev.names)}


# -- the merging floor ---------------------------------------------------------------------------------
def merged_codes(real_codes, ev, thresholds):
    """The real codes with every category counted fewer than its column's threshold mapped to the catch-all.

    ``thresholds``: one number for every categorical column, or {column: threshold} (columns left out keep
    their categories: e.g. a column the run discovered as numeric)."""
    import numpy as np

    from privsample.data.schema import Categorical

    out = dict(real_codes)
    for col in ev.columns:
        t = thresholds.get(col.name) if isinstance(thresholds, dict) else thresholds
        if not isinstance(col, Categorical) or t is None:
            continue
        c = real_codes[col.name]
        counts = np.bincount(c, minlength=col.size)
        rare = np.flatnonzero(counts[: len(col.categories)] < t)
        if len(rare):
            c = c.copy()
            c[np.isin(c, rare)] = col.other_code
            out[col.name] = c
    return out


def merging_floor(real_codes, ev, thresholds, k: int = 2) -> float:
    """k-way error of the real table against itself merged at ``thresholds`` (``merged_codes``)."""
    return workload_scores(real_codes, merged_codes(real_codes, ev, thresholds), ev, ks=(k,))[k]


def ledger_thresholds(entries) -> dict[str, float]:
    """{column: release threshold} from a run's ledger: its "category counts" entries' ``threshold``.

    ``entries``: LedgerEntry objects or their dicts; labels read "schema: <column>: category counts"."""
    out = {}
    for e in entries:
        d = e if isinstance(e, dict) else e.to_dict()
        t = (d.get("details") or {}).get("threshold")
        label = str(d.get("label", ""))
        if t is not None and "category counts" in label:
            name = label.split(": ", 1)[-1].rsplit(": category counts", 1)[0]
            out[name] = float(t)
    return out


def planned_share(epsilon: float, n_columns: int, n_rows: int) -> float:
    """The discovery share the pipeline plans at ``epsilon`` (the row count standing in for the noisy one)."""
    from privsample.data.discovery_plan import COUNT_SHARE, plan_discovery
    from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_DELTA_SHARE
    from privsample.privacy.conversion import cdp_rho

    d_disc = DISCOVERY_DELTA_SHARE * DEFAULT_DELTA
    total = cdp_rho(epsilon, DEFAULT_DELTA - d_disc)
    return plan_discovery(total, d_disc, float(n_rows), n_columns, count_rho=COUNT_SHARE * total)[1]["share"]


def default_threshold(epsilon: float, n_columns: int, n_rows: int, share: float | None = None) -> float:
    """The count a category needs at ``epsilon`` under the pipeline's no-schema plan, for a table of
    ``n_rows`` rows (standing in for the noisy row count) and ``n_columns`` columns.

    Mirrors ``synthesize``/``private_schema``: the run's rho is cdp_rho(epsilon, delta - delta_disc), delta_disc
    = DISCOVERY_DELTA_SHARE * delta (planned) or share * delta (fixed ``share``); ``plan_discovery`` gives the
    columns' rho, split evenly over the columns; ``column_split`` gives a categorical column's rho for its
    thresholded histogram, with tau = category_threshold(sigma_for_rho(that), delta_disc / columns)."""
    from privsample.data.discovery_plan import (
        COUNT_SHARE,
        category_threshold,
        column_split,
        plan_discovery,
        split_exact,
    )
    from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_DELTA_SHARE
    from privsample.privacy.conversion import cdp_rho
    from privsample.privacy.mechanisms import sigma_for_rho

    delta = DEFAULT_DELTA
    d_disc = (DISCOVERY_DELTA_SHARE if share is None else share) * delta
    total = cdp_rho(epsilon, delta - d_disc)
    rho, _ = plan_discovery(total, d_disc, float(n_rows), n_columns, count_rho=COUNT_SHARE * total, share=share)
    col = split_exact(rho, [1.0] * n_columns)[0]
    return category_threshold(sigma_for_rho(column_split(col, float(n_rows))[1]), d_disc / n_columns)


# -- one run (in a fresh interpreter) --------------------------------------------------------------------
def worker(a) -> dict:
    import dataclasses
    import tempfile

    from privsample.data.discovery import draft_schema
    from privsample.data.schema import Categorical, Numeric
    from privsample.data.table import read_table
    from privsample.errors import InputError, PrivsampleError
    from privsample.api.synthesizer import synthesize
    from privsample.io import write_table
    from privsample.synth.registry import method_options

    path = table_path(a.table)
    rdf = read_table(path)
    ev = eval_schema(rdf)
    row = {
        "table": a.table,
        "epsilon": a.epsilon,
        "method": a.method,
        "arm": a.arm,
        "seed": a.seed,
        "share": a.share if a.share is not None else "",
        "rows_real": len(rdf),
    }
    schema = dataclasses.replace(draft_schema(rdf), provenance="user") if a.arm == "reviewed" else None
    kw = {"schema_share": a.share} if a.share is not None else {}
    t0 = time.perf_counter()
    try:
        res = synthesize(
            path,
            epsilon=a.epsilon,
            method=a.method,
            schema=schema,
            seed=a.seed,
            method_options=method_options(a.method, max_memory_mb=8192.0),
            **kw,
        )
    except (InputError, PrivsampleError) as exc:  # e.g. a refusal before the synthesis budget is spent
        row.update(status="refused", synth_s=time.perf_counter() - t0, message=str(exc).splitlines()[0][:300])
        return row
    row["synth_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:  # score what the user gets: the CSV, read back
        write_table(res.table, Path(d) / "synth.csv")
        sdf = read_table(Path(d) / "synth.csv", allow_empty=True)
    real = score_codes(rdf, ev)
    errs = workload_scores(real, score_codes(sdf, ev), ev) if len(sdf) else {k: 2.0 for k in (1, 2, 3)}
    row.update(status="ok", rows_synth=len(sdf), err1=errs.get(1, ""), err2=errs.get(2, ""), err3=errs.get(3, ""))
    if a.arm == "none":
        th = ledger_thresholds(res.ledger["entries"])
        row["floor_run"] = merging_floor(real, ev, th) if th else ""
        row["threshold_run"] = statistics.median(th.values()) if th else ""
    draft = {c.name: c for c in ev.columns}
    lost = [c.name for c in res.schema.columns if isinstance(c, Categorical) and not c.categories]
    num_lost = [n for n in lost if isinstance(draft.get(n), Numeric)]
    row.update(
        catchall_cols=len(lost),
        numeric_catchall=len(num_lost),
        numeric_catchall_names=";".join(num_lost),
        score_s=time.perf_counter() - t1,
    )
    return row


# -- the driver -------------------------------------------------------------------------------------------
def run_worker(args: list[str]) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, __file__, "--worker", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **SINGLE_THREAD},
    )
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-3000:])
    row = json.loads(p.stdout.strip().splitlines()[-1])
    row["process_s"] = time.perf_counter() - t0
    return row


def key_of(r: dict) -> tuple:
    share = r.get("share", "")
    return (
        r["table"],
        float(r["epsilon"]),
        r["method"],
        r["arm"],
        int(r["seed"]),
        "" if share in ("", None) else float(share),
    )


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def append_row(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow({k: ("" if row.get(k) is None else row.get(k, "")) for k in FIELDS})


# -- the report -------------------------------------------------------------------------------------------
def _f(r: dict, k: str) -> float | None:
    v = r.get(k, "")
    try:
        return float(v) if v not in ("", None) else None
    except ValueError:
        return None


def _ms(xs: list[float], digits: int = 3) -> str:
    if not xs:
        return "–"
    if len(xs) == 1:
        return f"{xs[0]:.{digits}f}"
    return f"{statistics.mean(xs):.{digits}f} ± {statistics.stdev(xs):.{digits}f}"


def _mean(xs):
    return statistics.mean(xs) if xs else None


def floors(tables, epsilons) -> dict:
    """{(table, eps): (default threshold, 2-way floor at it)} for the current default plan."""
    out = {}
    for t in tables:
        rdf = read_real(t)
        ev = eval_schema(rdf)
        real = score_codes(rdf, ev)
        for e in epsilons:
            try:
                tau = default_threshold(e, len(ev.names), len(rdf))
            except Exception as exc:  # noqa: BLE001 - the plan's constants moved: ledger floors only
                print(f"default plan threshold unavailable ({exc}); using the runs' ledgers", flush=True)
                return {}
            out[(t, e)] = (tau, merging_floor(real, ev, tau))
    return out


def estimate_lines(paths: list[Path]) -> list[str]:
    """Duration of the full grid from one timed run per (table, method, arm) at epsilon 1 (rows of ``paths``)."""
    runs = {}
    for p in paths:
        for r in read_rows(p):
            if float(r["epsilon"]) == TARGET_EPS and r.get("share", "") == "" and _f(r, "process_s") is not None:
                runs.setdefault((r["table"], r["method"], r["arm"]), []).append(r)
    if not runs:
        return []
    out = [
        f"One run of each (table, method, arm) at ε = {TARGET_EPS:g}, seed 0 (`"
        + "`, `".join(str(p.relative_to(ROOT)) for p in paths if p.exists())
        + "`): process seconds "
        "(start-up, `synthesize`, scoring) and the 1-minute load average before the run (2 shared cores).",
        "",
        "| table | method | s none | s reviewed | load |",
        "|---|---|---|---|---|",
    ]
    total = 0.0
    for t in TABLES:
        for m in METHODS:
            a, b = runs.get((t, m, "none"), []), runs.get((t, m, "reviewed"), [])
            if not a and not b:
                continue
            ta = statistics.mean(_f(r, "process_s") for r in a) if a else None
            tb = statistics.mean(_f(r, "process_s") for r in b) if b else None
            total += (ta or 0.0) + (tb or 0.0)
            loads = ", ".join(r.get("load", "") for r in a + b)
            out.append(
                f"| {t} | {m} | {'–' if ta is None else f'{ta:.0f}'} | {'–' if tb is None else f'{tb:.0f}'} | {loads} |"
            )
    n = len(EPSILONS) * len(SEEDS)
    out += [
        "",
        f"Sum over the {len(runs)} timed (table, method, arm) cells: {total / 60:.1f} min per (ε, seed); "
        f"the full grid ({len(EPSILONS)} ε × {len(SEEDS)} seeds) takes about {n} × that = "
        f"**{n * total / 3600:.1f} h** at this load, if the time does not depend on ε (MST's does not; AIM and "
        "PPSyn-DP run more rounds at larger ε, so ε = 2 costs more and ε = 0.5 less).",
    ]
    other = [r for p in paths for r in read_rows(p) if float(r["epsilon"]) != TARGET_EPS and r.get("share", "") == ""]
    for r in other:
        base = runs.get((r["table"], r["method"], r["arm"]))
        ref = f" (ε = {TARGET_EPS:g}: {statistics.mean(_f(x, 'process_s') for x in base):.0f} s)" if base else ""
        out.append(
            f"* {r['table']} {r['method']} {r['arm']} at ε = {float(r['epsilon']):g}: "
            f"{_f(r, 'process_s'):.0f} s{ref}, load {r.get('load', '')}."
        )
    return out


def share_lines(csv_path: Path, planned: list[dict]) -> list[str]:
    """The discovery-share sweep (rows with a ``share``, from the results CSV and ``small_tables.shares.csv``)
    beside the planned runs of the same seeds: the measurement behind the plan's ``max_share``."""
    fixed = [
        r
        for p in {csv_path, RESULTS / "small_tables.shares.csv"}
        if p.exists()
        for r in read_rows(p)
        if r.get("share", "") != "" and r["status"] == "ok" and r["arm"] == "none"
    ]
    if not fixed:
        return []
    shares = sorted({float(r["share"]) for r in fixed})
    keys = sorted(
        {(r["table"], float(r["epsilon"]), r["method"]) for r in fixed},
        key=lambda k: (TABLES.index(k[0]) if k[0] in TABLES else 99, k[1], k[2]),
    )
    lines = [
        "",
        "## Discovery share",
        "",
        "2-way error without a schema when discovery takes a fixed share of the budget, against the "
        "pipeline's plan (its mean chosen share in brackets), over the seeds run at every share (mean; "
        "n = seeds). This is the measurement behind the plan's largest share.",
        "",
        "| table | ε | method | n | " + " | ".join(f"share {x:g}" for x in shares) + " | planned |",
        "|---|---|---|---|" + "---|" * (len(shares) + 1),
    ]
    for t, e, m in keys:
        sel = [r for r in fixed if (r["table"], float(r["epsilon"]), r["method"]) == (t, e, m)]
        plan = {
            int(r["seed"]): r
            for r in planned
            if (r["table"], float(r["epsilon"]), r["method"], r["arm"], r["status"]) == (t, e, m, "none", "ok")
        }
        seeds = set(plan)
        for x in shares:
            seeds &= {int(r["seed"]) for r in sel if float(r["share"]) == x}
        if not seeds:
            continue
        means = [
            statistics.mean(_f(r, "err2") for r in sel if float(r["share"]) == x and int(r["seed"]) in seeds)
            for x in shares
        ]
        cells = [f"{v:.3f}" for v in means]
        pl = statistics.mean(_f(plan[k], "err2") for k in seeds)
        rdf = read_real(t)
        lines.append(
            f"| {t} | {e:g} | {m} | {len(seeds)} | "
            + " | ".join(cells)
            + f" | {pl:.3f} ({planned_share(e, rdf.shape[1], len(rdf)):.2f}) |"
        )
    return lines


def write_report(csv_path: Path, md_path: Path, smoke: bool, estimate: list[str] | None = None) -> None:
    rows = [r for r in read_rows(csv_path) if r.get("share", "") == ""]  # the pipeline's default plan
    if not rows:
        print(f"no rows in {csv_path}")
        return
    tables = [t for t in TABLES if any(r["table"] == t for r in rows)]
    epsilons = sorted({float(r["epsilon"]) for r in rows})
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    seeds = sorted({int(r["seed"]) for r in rows})
    fl = floors(tables, epsilons)

    def sel(t, e, m, arm):
        return [r for r in rows if (r["table"], float(r["epsilon"]), r["method"], r["arm"]) == (t, e, m, arm)]

    def errs(rs, k="err2"):
        return [_f(r, k) for r in rs if r["status"] == "ok" and _f(r, k) is not None]

    lines = ["# Small tables: no schema against a reviewed schema (`benchmarks/small_tables.py`)", ""]
    if smoke:
        lines += [
            "**SMOKE RUN (`--quick`): one seed, ε = 1, MST only; it checks that the harness works and is "
            "not the benchmark's result.**",
            "",
        ]
    lines += [
        f"Generated {time.strftime('%Y-%m-%d %H:%M')} from `{csv_path.relative_to(ROOT)}`; seeds "
        f"{','.join(map(str, seeds))}. Seeded noise: **NOT PRIVATE** (reproducible runs; the mechanisms and "
        "their budgets are those of the private path). Each run is a fresh single-threaded process "
        f"(BLAS/OpenMP/XLA threads 1) on a shared {os.cpu_count()}-core machine.",
        "",
        f"Tables: `adult` = {ADULT_ROWS} rows of `adult_raw.csv` (sample seed {ADULT_SAMPLE_SEED}), `car` = "
        "`car_raw.csv` (1,728 rows), `mushroom` = `mushroom_raw.csv` (8,124 rows). Arms: **none** = no "
        "schema (`privsample synth data.csv`: private discovery with the pipeline's plan); **reviewed** = "
        "the non-private draft (`privsample schema`) with `provenance: user`.",
        "",
        "Errors: mean L1 distance of normalised marginals (0-2) over all 2-way (3-way) marginals, synthetic "
        "against real, both coded by the real table's own draft domain with a catch-all (unknown categories "
        "-> catch-all, numbers clipped, a non-number in a numeric column -> an extra cell: counted as error). "
        "Mean ± sd over seeds. Floor: 2-way error of the real table against itself with every category "
        "(of the draft's categorical columns) counted fewer than the release threshold merged into the "
        "catch-all; *plan*: threshold τ of the current default plan at that ε; *run*: the thresholds in the "
        "no-schema runs' ledgers (mean over runs). Catch-all cols: columns the discovered schema left with "
        "only the catch-all (mean per run); numeric lost: of those, columns numeric in the draft (total "
        "over runs). Time: `synthesize` wall seconds (mean), discovery and sampling included.",
        "",
    ]
    lines += [
        "| table | ε | method | 2-way none | 2-way reviewed | none / reviewed | floor (plan τ) | floor (run) "
        "| 3-way none | 3-way reviewed | catch-all cols | numeric lost | refused | s none | s reviewed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary = {}
    for t in tables:
        for e in epsilons:
            for m in methods:
                a, b = sel(t, e, m, "none"), sel(t, e, m, "reviewed")
                if not a and not b:
                    continue
                ea, eb = errs(a), errs(b)
                ratio = _mean(ea) / _mean(eb) if ea and eb and _mean(eb) > 0 else None
                fr = [x for x in (_f(r, "floor_run") for r in a) if x is not None]
                tau, fp = fl.get((t, e), (None, None))
                cc = [x for x in (_f(r, "catchall_cols") for r in a if r["status"] == "ok") if x is not None]
                nl = sum(int(_f(r, "numeric_catchall") or 0) for r in a)
                ref = sum(r["status"] == "refused" for r in a)
                sa = [x for x in (_f(r, "synth_s") for r in a) if x is not None]
                sb = [x for x in (_f(r, "synth_s") for r in b) if x is not None]
                summary[(t, e, m)] = dict(
                    ea=ea,
                    eb=eb,
                    ratio=ratio,
                    fr=_mean(fr),
                    fp=fp,
                    nl=nl,
                    ref=ref,
                    names={n for r in a for n in r.get("numeric_catchall_names", "").split(";") if n},
                )
                lines.append(
                    f"| {t} | {e:g} | {m} | {_ms(ea)} | {_ms(eb)} | {'–' if ratio is None else f'{ratio:.2f}×'} | "
                    f"{'–' if fp is None else f'{fp:.3f} (τ {tau:.0f})'} | {_ms(fr)} | {_ms(errs(a, 'err3'))} | "
                    f"{_ms(errs(b, 'err3'))} | {_ms(cc, 1)} | {nl} | {ref}/{len(a)} | "
                    f"{'–' if not sa else f'{statistics.mean(sa):.1f}'} | "
                    f"{'–' if not sb else f'{statistics.mean(sb):.1f}'} |"
                )
    lines += [
        "",
        f"## Targets at ε = {TARGET_EPS:g}",
        "",
        f"car and mushroom: no-schema 2-way error within {RATIO_TARGET}× of the reviewed schema's; adult "
        f"({ADULT_ROWS} rows): at most floor + reviewed error (floor of the runs' thresholds, else of the "
        "plan's); every table: no numeric column of the draft left with only the catch-all. Means over "
        "seeds.",
        "",
        "| table | method | none | reviewed | bound | target | numeric lost | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in tables:
        for m in methods:
            s = summary.get((t, TARGET_EPS, m))
            if s is None:
                continue
            a, b = _mean(s["ea"]), _mean(s["eb"])
            floor = s["fr"] if s["fr"] is not None else s["fp"]
            if t == "adult":
                bound = None if b is None or floor is None else floor + b
                what = "≤ floor + reviewed"
            else:
                bound = None if b is None else RATIO_TARGET * b
                what = f"≤ {RATIO_TARGET}× reviewed"
            ok = a is not None and bound is not None and a <= bound and s["nl"] == 0 and s["ref"] == 0
            why = (
                []
                if ok
                else (
                    ["no result"]
                    if a is None or bound is None
                    else (
                        [
                            f"error {a:.3f} > {bound:.3f}; the merging floor alone is "
                            f"{s['fr'] if s['fr'] is not None else float('nan'):.3f} "
                            f"({(s['fr'] or 0) / bound:.0%} of the bound) and discovery took "
                            f"{planned_share(TARGET_EPS, read_real(t).shape[1], len(read_real(t))):.0%} "
                            "of the budget"
                        ]
                        if a > bound
                        else []
                    )
                    + ([f"numeric in catch-all: {', '.join(sorted(s['names']))}"] if s["nl"] else [])
                    + ([f"refused in {s['ref']} run(s)"] if s["ref"] else [])
                )
            )
            lines.append(
                f"| {t} | {m} | {'–' if a is None else f'{a:.3f}'} | {'–' if b is None else f'{b:.3f}'} | "
                f"{'–' if bound is None else f'{bound:.3f}'} | {what} | {s['nl']} | "
                f"{'yes' if ok else 'NO: ' + '; '.join(why)} |"
            )
    lines += [
        "",
        "Why a target is missed: without a schema a category needs a noisy count above τ to be released, so "
        "every category rarer than that is merged into the catch-all (the floor), and the budget that "
        "discovery takes is not available to the synthesizer (its released category counts are reused as "
        "1-way measurements, which recovers part of it). On car the two rarest classes (about 4% of the "
        "records each) stay below τ at ε = 1; on mushroom the floor alone is most of the reviewed error.",
    ]
    stale = sorted(
        {
            f"{r['table']} ε={float(r['epsilon']):g}"
            for r in rows
            if _f(r, "threshold_run") is not None
            and (r["table"], float(r["epsilon"])) in fl
            and abs(_f(r, "threshold_run") / fl[(r["table"], float(r["epsilon"]))][0] - 1) > 0.01
        }
    )
    if stale:
        lines += [
            "",
            "**The runs' ledger thresholds differ from `default_threshold` (the pipeline's plan changed) "
            f"for {', '.join(stale)}: use the floor (run) column; the plan-τ column describes the old plan.**",
        ]
    if fl:
        lines += [
            "",
            "## Release threshold of the current default plan",
            "",
            "τ: the noisy count a category must exceed to be released without a schema (the planned "
            "discovery share, with the table's row count standing in for the noisy one, split evenly over "
            "the columns); the floor is the 2-way error of merging every category counted below τ.",
            "",
            "| table | columns | ε | τ | floor (2-way) |",
            "|---|---|---|---|---|",
        ]
        for (t, e), (tau, fp) in fl.items():
            n = len(eval_schema(read_real(t)).names)
            lines.append(f"| {t} | {n} | {e:g} | {tau:.0f} | {fp:.3f} |")
    lines += share_lines(csv_path, rows)
    refusals = [r for r in rows if r["status"] == "refused"]
    if refusals:
        lines += ["", "## Refusals", ""] + sorted(
            {f"* {r['table']} ε={r['epsilon']} {r['method']}: {r['message']}" for r in refusals}
        )
    if estimate:
        lines += ["", "## Duration of the full run", ""] + estimate
    keep = old_credit_section(md_path)  # the credit-like section has its own CSV: keep it as it is
    md_path.write_text("\n".join(lines) + "\n" + (f"\n{keep}\n" if keep else ""))
    print("\n".join(lines))


# -- a credit-like table of our own making (per-column outcomes) ------------------------------------------
CREDIT_ROWS = 1000
CREDIT_SEED = 20250107
CREDIT_EPS = 1.0
CREDIT_CSV = RESULTS / "small_tables_credit.csv"
CREDIT_BEGIN = "<!-- credit-like table: begin -->"
CREDIT_END = "<!-- credit-like table: end -->"
KEEP_SHARE = 0.10  # a real value is "frequent" when it holds at least this share of the records
SCORE_BINS = 10  # equal-width bins (integer-aligned) of a numeric column over the real range, for the 2-way error
TABLE_ROW = "(table)"
CREDIT_FIELDS = [
    "method",
    "arm",
    "seed",
    "column",
    "group",
    "discovered",
    "kept",
    "lost",
    "one_value",
    "invented",
    "invented_values",
    "empty_gain",
    "err2_all",
    "err2_num",
    "threshold",
    "floor",
    "floor_run",
    "share",
    "rows_synth",
    "synth_s",
    "load",
    "commit",
    "when",
    "status",
    "message",
]

# The generator's public domain. Text codes: {level: share in %}; small integer codes 1..4 and the 1/2 columns
# hold their codes as integers; continuous columns are integers within (lower, upper).
CREDIT_TEXT = {
    "checking_status": {"A11": 27.4, "A12": 26.9, "A13": 6.3, "A14": 39.4},
    "credit_history": {"A30": 4.0, "A31": 4.9, "A32": 53.0, "A33": 8.8, "A34": 29.3},
    "purpose": {
        "A40": 23.4,
        "A41": 10.3,
        "A42": 18.1,
        "A43": 28.0,
        "A44": 1.2,
        "A45": 2.2,
        "A46": 5.0,
        "A48": 0.9,
        "A49": 9.7,
        "A410": 1.2,
    },
    "savings_status": {"A61": 60.3, "A62": 10.3, "A63": 6.3, "A64": 4.8, "A65": 18.3},
    "employment": {"A71": 6.2, "A72": 17.2, "A73": 33.9, "A74": 17.4, "A75": 25.3},
    "personal_status": {"A91": 5.0, "A92": 31.0, "A93": 54.8, "A94": 9.2},
    "other_parties": {"A101": 90.7, "A102": 4.1, "A103": 5.2},
    "property_magnitude": {"A121": 28.2, "A122": 23.2, "A123": 33.2, "A124": 15.4},
    "other_payment_plans": {"A141": 13.9, "A142": 4.7, "A143": 81.4},
    "housing": {"A151": 17.9, "A152": 71.3, "A153": 10.8},
    "own_telephone": {"A191": 59.6, "A192": 40.4},
    "foreign_worker": {"A201": 96.3, "A202": 3.7},
}
CREDIT_MISSING = {"employment": 0.117}  # share of records left empty (exactly)
CREDIT_CODES = {  # small integer codes
    "investment_as_income_percentage": (1, 2, 3, 4),
    "residence_since": (1, 2, 3, 4),
    "existing_credits": (1, 2, 3, 4),
    "job": (1, 2, 3, 4),
}
CREDIT_BINARY = {"people_liable_for": (1, 2), "credit": (1, 2)}  # credit: the label, 1 good / 2 bad
CREDIT_RANGES = {"month": (4, 72), "credit_amount": (250, 18424), "age": (19, 75)}
CREDIT_COLUMNS = [
    "checking_status",
    "month",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings_status",
    "employment",
    "investment_as_income_percentage",
    "personal_status",
    "other_parties",
    "residence_since",
    "property_magnitude",
    "age",
    "other_payment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable_for",
    "own_telephone",
    "foreign_worker",
    "credit",
]


def credit_group(name: str) -> str:
    """text | small-int | binary | continuous."""
    if name in CREDIT_TEXT:
        return "text"
    if name in CREDIT_CODES:
        return "small-int"
    if name in CREDIT_BINARY:
        return "binary"
    return "continuous"


NUMBER_GROUPS = ("small-int", "binary", "continuous")  # the columns whose values are numbers


def credit_like(n: int = CREDIT_ROWS, seed: int = CREDIT_SEED):
    """A table shaped like the public 1,000-row German credit table, from a fixed seed (no real records).

    21 columns: 12 text codes (2-10 levels, skewed; ``employment`` 11.7% empty), 4 small integer codes 1..4
    with skewed shares, ``people_liable_for`` 1/2 (about 85/15), the label ``credit`` 1/2 (exactly 70/30),
    and three skewed integer amounts: ``month`` 4..72 with spikes at 6/12/24/36/48, ``credit_amount``
    250..18,424 (log-normal, rising with the month), ``age`` 19..75 (depending on housing). Dependence: the
    label on checking_status, credit_history and month; the amount on the month; the installment rate on the
    amount; property and age on housing; existing credits on the history; dependants on personal status; the
    telephone on the job. Each range's two ends are held by one record each, so the real min..max is the
    public range."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)

    def pick(levels, weights, size=n):
        p = np.asarray(weights, dtype=float)
        return rng.choice(np.asarray(levels, dtype=object), size=size, p=p / p.sum())

    def text(name):
        d = CREDIT_TEXT[name]
        return pick(list(d), list(d.values()))

    def pick_by(parent, table, default):
        """Levels and weights chosen by the parent's value (``default`` for other values)."""
        out = np.empty(n, dtype=object)
        keys = list(table)
        rest = ~np.isin(parent, keys)
        for key, mask in [(k, parent == k) for k in keys] + [(None, rest)]:
            levels, w = table[key] if key is not None else default
            out[mask] = pick(levels, w, int(mask.sum()))
        return out

    df = pd.DataFrame(index=range(n))
    df["checking_status"] = text("checking_status")
    df["credit_history"] = text("credit_history")
    df["purpose"] = text("purpose")
    longer = np.isin(df["purpose"], ["A41", "A49", "A410"])  # used car, business, other: longer loans
    raw = np.exp(rng.normal(np.log(17.0) + 0.25 * longer, 0.55))
    spikes = np.array([6, 12, 24, 36, 48])
    snap = spikes[np.abs(raw[:, None] - spikes[None, :]).argmin(axis=1)]
    month = np.where(rng.random(n) < 0.65, snap, np.rint(raw))
    lo, hi = CREDIT_RANGES["month"]
    df["month"] = np.clip(month, lo, hi).astype(int)
    amount = np.exp(rng.normal(7.25 + 0.030 * df["month"].to_numpy(), 0.55))
    lo, hi = CREDIT_RANGES["credit_amount"]
    df["credit_amount"] = np.clip(np.rint(amount), lo, hi).astype(int)
    df["savings_status"] = text("savings_status")
    emp = text("employment")
    emp[rng.choice(n, size=round(CREDIT_MISSING["employment"] * n), replace=False)] = None
    df["employment"] = emp
    codes = CREDIT_CODES["investment_as_income_percentage"]
    big = np.where(df["credit_amount"] > 5000, "big", "small")
    df["investment_as_income_percentage"] = pick_by(
        big, {"big": (codes, [30, 30, 15, 25])}, (codes, [11, 22, 16, 51])
    ).astype(int)
    df["personal_status"] = text("personal_status")
    df["other_parties"] = text("other_parties")
    df["residence_since"] = pick(CREDIT_CODES["residence_since"], [13, 31, 15, 41]).astype(int)
    housing = text("housing")
    prop = list(CREDIT_TEXT["property_magnitude"])
    df["property_magnitude"] = pick_by(housing, {"A153": (prop, [5, 10, 25, 60])}, (prop, [31, 26, 34, 9]))
    scale = np.select([housing == "A151", housing == "A153"], [11.0, 22.0], 14.0)
    lo, hi = CREDIT_RANGES["age"]
    df["age"] = np.clip(np.rint(lo + np.exp(rng.normal(np.log(scale), 0.6))), lo, hi).astype(int)
    df["other_payment_plans"] = text("other_payment_plans")
    df["housing"] = housing
    codes = CREDIT_CODES["existing_credits"]
    df["existing_credits"] = pick_by(
        df["credit_history"].to_numpy(), {"A34": (codes, [35, 55, 7, 3])}, (codes, [75, 22, 2, 1])
    ).astype(int)
    df["job"] = pick(CREDIT_CODES["job"], [2.2, 20.0, 63.0, 14.8]).astype(int)
    df["people_liable_for"] = pick_by(
        df["personal_status"].to_numpy(), {"A93": ((1, 2), [80, 20])}, ((1, 2), [92, 8])
    ).astype(int)
    phone = list(CREDIT_TEXT["own_telephone"])
    df["own_telephone"] = pick_by(df["job"].to_numpy(), {4: (phone, [25, 75])}, (phone, [65, 35]))
    df["foreign_worker"] = text("foreign_worker")
    ends = rng.choice(n, size=2 * len(CREDIT_RANGES), replace=False)
    for i, (name, (lo, hi)) in enumerate(CREDIT_RANGES.items()):
        df.loc[ends[2 * i], name], df.loc[ends[2 * i + 1], name] = lo, hi
    checking = {"A11": 1.0, "A12": 0.6, "A13": -0.1, "A14": -1.1}
    history = {"A30": 1.2, "A31": 1.1, "A32": 0.1, "A33": 0.0, "A34": -0.6}
    z = (
        df["checking_status"].map(checking).to_numpy(float)
        + df["credit_history"].map(history).to_numpy(float)
        + 0.03 * (df["month"].to_numpy(float) - 20.0)
    )
    odds = np.exp(z - z.max())  # 30% bad, drawn without replacement with weights rising with the odds
    bad = np.zeros(n, dtype=bool)
    bad[rng.choice(n, size=round(0.3 * n), replace=False, p=odds / odds.sum())] = True
    df["credit"] = np.where(bad, 2, 1)
    return df[CREDIT_COLUMNS]


def credit_path(n: int = CREDIT_ROWS, seed: int = CREDIT_SEED, write: bool = False) -> Path:
    """The credit-like table as a CSV in the cache; ``write`` (or no file yet) writes it from ``credit_like``
    when its text differs, so that a changed generator never leaves a stale table behind."""
    path = CACHE / f"credit_like_{n}_{seed}.csv"
    if write or not path.exists():
        text = credit_like(n, seed).to_csv(index=False)
        if not path.exists() or path.read_text() != text:
            CACHE.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
    return path


def credit_schema():
    """The exact public schema of the generator's domain (provenance user): every text level, the codes as
    categories, the continuous columns as integers within their ranges (16 bins, as ``draft_schema``)."""
    from privsample.data.schema import Categorical, Numeric, Schema

    cols = []
    for name in CREDIT_COLUMNS:
        if name in CREDIT_TEXT:
            cols.append(Categorical(name, tuple(CREDIT_TEXT[name]), nullable=name in CREDIT_MISSING))
        elif name in CREDIT_CODES or name in CREDIT_BINARY:
            codes = CREDIT_CODES.get(name) or CREDIT_BINARY[name]
            cols.append(Categorical(name, tuple(str(c) for c in codes)))
        else:
            lo, hi = CREDIT_RANGES[name]
            cols.append(Numeric(name, lo, hi, bins=16, integer=True))
    return Schema(cols, provenance="user")


# -- per-column outcomes (NOT private: they read the real table exactly) ----------------------------------
def _key(v) -> str:
    """A value as compared across tables (``privsample.evaluation.tables.value_key``)."""
    from privsample.evaluation.tables import value_key

    return value_key(v)


def _present(s) -> list:
    """The non-missing values of a column."""
    import pandas as pd

    return [v for v in s.tolist() if not (v is None or (not isinstance(v, str) and pd.isna(v)))]


def _number(v) -> float | None:
    from privsample.data.encoding import parse_number

    return parse_number(v)


def describe_column(col) -> str:
    """A schema column in a few characters: ``[lo, hi]`` / ``N cats`` (+ catch-all, + null)."""
    from privsample.data.encoding import value_text
    from privsample.data.schema import Numeric

    if isinstance(col, Numeric):
        out = f"[{value_text(col.lower)}, {value_text(col.upper)}]"
    else:
        out = f"{len(col.categories)} cats" + (f": {','.join(col.categories)}" if len(col.categories) <= 4 else "")
        out += "+other" if col.other is not None else ""
    return out + ("+null" if col.nullable else "")


def column_outcomes(real, synth, group: str) -> dict:
    """kept / one value / invented / empty gain of one column (real and synthetic pandas Series).

    kept (text, small-int, binary): the share of the real values holding >= ``KEEP_SHARE`` of the records that
    appear in the synthetic column. invented: the share of synthetic records whose value the real column does
    not hold: for number columns a non-number, a non-integer or a number outside the real min..max; for text a
    value not in the real value set. empty gain: synthetic missing share minus real missing share."""
    from collections import Counter

    rv, sv = _present(real), _present(synth)
    rk, sk = [_key(v) for v in rv], [_key(v) for v in sv]
    counts = Counter(rk)
    frequent = [k for k, c in counts.items() if c >= KEEP_SHARE * len(real)]
    kept = None
    if group != "continuous":
        kept = sum(k in set(sk) for k in frequent) / len(frequent) if frequent else 1.0
    if group == "text":
        bad = [k for k in sk if k not in counts]
    else:
        xs = [_number(v) for v in rv]
        lo, hi = min(xs), max(xs)
        bad = [k for v, k in zip(sv, sk) if (x := _number(v)) is None or x != int(x) or not lo <= x <= hi]
    ns = len(synth)
    return {
        "kept": kept,
        "one_value": int(len(set(sk)) <= 1),
        "invented": len(bad) / ns if ns else 0.0,
        "invented_values": ";".join(sorted(set(bad), key=lambda k: (len(k), k))[:5]),
        "empty_gain": (1 - len(sv) / ns if ns else 0.0) - (1 - len(rv) / len(real)),
    }


def credit_scores(rdf, sdf, threshold: float | None, discovered: set[str] | None = None) -> dict:
    """2-way error over all columns and over the number columns among themselves, on the real table's own
    domain (``privsample.evaluation.tables.real_domain``: numeric columns in ``SCORE_BINS`` integer-aligned
    equal-width bins over the real range, no point masses; a value the real table lacks in its own cell), and
    the merging floor: the 2-way error of the real table against itself with every category (of the domain's
    categorical columns) counted fewer than ``threshold`` merged into one value (``floor``), and the same over
    only the ``discovered`` columns (those the run's schema made categorical: ``floor_run``)."""
    import numpy as np

    from privsample.evaluation.tables import real_domain
    from privsample.evaluation.workload import all_cliques, workload_error
    from privsample.marginals import NumpyEngine

    dom = real_domain(rdf, bins=SCORE_BINS, point_mass=2.0)  # a share above 1: no point masses
    mdom = dom.domain()
    real = dom.encode(rdf, "the real table")
    reng = NumpyEngine(real, mdom)
    nums = [c for c in dom.names if credit_group(c) in NUMBER_GROUPS]
    out = {}
    if len(sdf):
        seng = NumpyEngine(dom.encode(sdf, "the synthetic table"), mdom)
        out["err2_all"] = workload_error(reng, seng, all_cliques(dom.names, 2))
        out["err2_num"] = workload_error(reng, seng, all_cliques(nums, 2))
    else:
        out["err2_all"] = out["err2_num"] = 2.0
    if threshold is None:
        return out
    for key, names in (("floor", set(dom.names)), ("floor_run", discovered or set())):
        merged = dict(real)
        for col in dom.columns:
            if col.kind != "categorical" or col.name not in names:
                continue
            c = real[col.name]
            counts = np.bincount(c, minlength=col.size)
            rare = np.flatnonzero(counts[: col.n_main] < threshold)
            if len(rare):
                merged[col.name] = np.where(np.isin(c, rare), col.outside_code, c)  # one value for them all
        out[key] = workload_error(reng, NumpyEngine(merged, mdom), all_cliques(dom.names, 2))
    return out


def credit_worker(a) -> dict:
    """One run on the credit-like table: {"rows": per-column rows + one table row} (``CREDIT_FIELDS``)."""
    import tempfile

    from privsample.data.table import read_table
    from privsample.errors import InputError, PrivsampleError
    from privsample.evaluation.tables import schema_loss
    from privsample.api.synthesizer import synthesize
    from privsample.io import write_table
    from privsample.synth.registry import method_options

    path = credit_path()
    rdf = read_table(path)
    base = {"method": a.method, "arm": a.arm, "seed": a.seed}
    t0 = time.perf_counter()
    try:
        res = synthesize(
            path,
            epsilon=a.epsilon,
            method=a.method,
            schema=credit_schema() if a.arm == "reviewed" else None,
            seed=a.seed,
            method_options=method_options(a.method, max_memory_mb=8192.0),
            # experiment arms only (not the defaults' results): e.g. CREDIT_DISCOVERY='{"max_share": 0.6}'
            discovery_options=json.loads(os.environ.get("CREDIT_DISCOVERY", "{}")) or None,
        )
    except (InputError, PrivsampleError) as exc:
        msg = str(exc).splitlines()[0][:300]
        return {"rows": [{**base, "column": TABLE_ROW, "status": "refused", "message": msg}]}
    synth_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:  # score what the user gets: the CSV, read back
        write_table(res.table, Path(d) / "synth.csv")
        sdf = read_table(Path(d) / "synth.csv", allow_empty=True)
    disc = res.schema.discovery or {}
    threshold = disc.get("min_category_records")
    lost = {x.column: x.lost for x in schema_loss(rdf, res.schema)}
    rows = []
    for name in CREDIT_COLUMNS:
        s = sdf[name] if name in sdf.columns else rdf[name].iloc[:0]
        group = credit_group(name)
        rows.append(
            {
                **base,
                "column": name,
                "group": group,
                "discovered": describe_column(res.schema[name]) if name in res.schema else "absent",
                "lost": lost.get(name, 1.0),
                "status": "ok",
                **column_outcomes(rdf[name], s, group),
            }
        )
    rows.append(
        {
            **base,
            "column": TABLE_ROW,
            "status": "ok",
            "threshold": "" if threshold is None else threshold,
            "share": disc.get("share", ""),
            "rows_synth": len(sdf),
            "synth_s": synth_s,
            **credit_scores(rdf, sdf, threshold, {c.name for c in res.schema.columns if c.kind == "categorical"}),
        }
    )
    return {"rows": rows}


def code_commit() -> str:
    """The checkout's commit, with "+changes" when the package has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "privsample"], capture_output=True, text=True, cwd=ROOT
        )
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def run_credit(methods: list[str], arms: list[str], seeds: list[int], csv_path: Path) -> None:
    """Run the missing (method, arm, seed) cells (each in a fresh worker), appending their rows to ``csv_path``."""
    done = {(r["method"], r["arm"], int(r["seed"])) for r in read_rows(csv_path) if r["column"] == TABLE_ROW}
    grid = [(m, arm, s) for m in methods for s in seeds for arm in arms]
    todo = [g for g in grid if g not in done]
    print(f"credit-like: {len(grid)} runs, {len(grid) - len(todo)} already in {csv_path.name}", flush=True)
    credit_path(write=True)  # the table of the current generator, written once outside the timed workers
    commit = code_commit()
    for m, arm, s in todo:
        load = os.getloadavg()[0]
        args = ["--credit", "--epsilon", str(CREDIT_EPS), "--method", m, "--arm", arm, "--seed", str(s)]
        try:
            out = run_worker(args)
        except RuntimeError as exc:
            print(f"FAILED credit {m} {arm} seed={s}: {str(exc)[-800:]}", flush=True)
            continue
        extra = {"load": f"{load:.2f}", "commit": commit, "when": time.strftime("%Y-%m-%d %H:%M")}
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        new = not csv_path.exists()
        with open(csv_path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CREDIT_FIELDS, extrasaction="ignore")
            if new:
                w.writeheader()
            for r in out["rows"]:
                w.writerow({k: "" if r.get(k) is None else r.get(k, "") for k in CREDIT_FIELDS} | extra)
        stamp(__file__, csv_path)  # the code of the last run added
        t = next(r for r in out["rows"] if r["column"] == TABLE_ROW)
        print(
            f"credit {m} {arm} seed={s}: {t['status']} 2-way {t.get('err2_all', '')!s:.6} "
            f"numeric {t.get('err2_num', '')!s:.6} threshold {t.get('threshold', '')!s:.6} "
            f"(process {out['process_s']:.1f}s, load {load:.2f})",
            flush=True,
        )


# -- the credit section of the report ----------------------------------------------------------------------
def _rng(xs: list[float], digits: int = 3, pct: bool = False) -> str:
    """mean (min–max) of ``xs``; as percentages with ``pct``."""
    if not xs:
        return "–"
    f = (lambda x: f"{100 * x:.{max(digits - 2, 0)}f}%") if pct else (lambda x: f"{x:.{digits}f}")
    if len(xs) == 1 or min(xs) == max(xs):
        return f(xs[0])
    return f"{f(statistics.mean(xs))} ({f(min(xs))}–{f(max(xs))})"


def real_lines() -> dict[str, str]:
    """{column: what the real table holds}: levels (how many hold >= 10%), the range, the missing share."""
    from collections import Counter

    from privsample.data.table import read_table

    rdf = read_table(credit_path())
    out = {}
    for name in CREDIT_COLUMNS:
        vals = [_key(v) for v in _present(rdf[name])]
        miss = 1 - len(vals) / len(rdf)
        if credit_group(name) == "continuous":
            xs = [float(v) for v in vals]
            d = f"{min(xs):g}..{max(xs):g}"
        else:
            c = Counter(vals)
            freq = sum(x >= KEEP_SHARE * len(rdf) for x in c.values())
            d = f"{len(c)} values, {freq} ≥10%" if len(c) > 4 else ", ".join(f"{k}: {c[k]}" for k in sorted(c))
        out[name] = d + (f"; {miss:.1%} empty" if miss else "")
    return out


def credit_section(csv_path: Path) -> list[str]:
    """The Markdown section of the credit-like runs (between ``CREDIT_BEGIN`` and ``CREDIT_END``)."""
    from collections import Counter

    rows = read_rows(csv_path)
    lines = [CREDIT_BEGIN, "", "## Credit-like table (1,000 rows, 21 columns): per-column outcomes at ε = 1", ""]
    if not rows:
        return lines + ["No runs yet.", "", CREDIT_END]
    tab = [r for r in rows if r["column"] == TABLE_ROW]
    ok = [r for r in tab if r["status"] == "ok"]
    methods = [m for m in METHODS if any(r["method"] == m for r in tab)]
    seeds = sorted({int(r["seed"]) for r in tab})
    loads = [float(r["load"]) for r in tab if r.get("load")]
    where = csv_path.relative_to(ROOT) if csv_path.is_relative_to(ROOT) else csv_path
    lines += [
        f"Runs from `{where}` (one row per run and column; the table row is `{TABLE_ROW}`): "
        f"{len(tab)} runs, seeds {','.join(map(str, seeds))}, dated "
        f"{min(r['when'] for r in tab)}–{max(r['when'] for r in tab)}, code at commit(s) "
        f"{', '.join(sorted({r['commit'] for r in tab}))}, on a shared {os.cpu_count()}-core machine (1-minute "
        f"load before the runs {min(loads):.2f}–{max(loads):.2f}). Each run is a fresh single-threaded process "
        "with seeded noise: **NOT PRIVATE** (reproducible; the mechanisms and budgets are those of the private "
        "path). Rerun with `python benchmarks/small_tables.py --credit` (`--quick`: seed 0 only; runs already "
        "in the CSV are skipped).",
        "",
        f"Table: `credit_like(n={CREDIT_ROWS}, seed={CREDIT_SEED})` in `benchmarks/small_tables.py`, a table of "
        "our own making shaped like the public 1,000-row German credit table: 12 text codes (2-10 levels, "
        "skewed; `employment` 11.7% empty), 4 small integer codes 1..4, `people_liable_for` 1/2 (85/15), the "
        "label `credit` 1/2 (70/30) depending on `checking_status`, `credit_history` and `month`, and three "
        "skewed integer amounts (`month` 4..72 with spikes, `credit_amount` 250..18,424 log-normal, `age` "
        "19..75). Schema: **none** = `privsample synth credit.csv --epsilon 1` (private discovery with the "
        "pipeline's plan); **reviewed** = the exact public schema of the generator's domain (`credit_schema()`: "
        "every level, codes as categories, amounts as integers in their ranges, 16 bins; provenance user).",
        "",
        "Outcomes (NOT private: they read the real table exactly; mean over seeds, (min–max) when they differ):",
        "",
        f"* **kept**: of the real values holding ≥ {KEEP_SHARE:.0%} of the records, the share that appears in the "
        "synthetic column (text and code columns);",
        "* **clipped/merged**: the share of real records the run's schema does not hold as they are (numbers "
        "outside the discovered bounds, categories sent to the catch-all; `privsample.evaluation.tables."
        "schema_loss`); for the continuous columns this is the clipped share;",
        "* **one value**: runs whose synthetic column holds at most one distinct non-missing value;",
        "* **invented**: the share of synthetic records with a value the real column does not hold (number "
        "columns: not an integer within the real min..max; text: not a real value), with examples;",
        "* **empty gain**: synthetic missing share minus real missing share;",
        f"* **2-way all / numeric**: mean L1 distance (0-2) of the normalised 2-way marginals over all 210 pairs "
        f"/ over the 36 pairs of the 9 number columns (codes, 1/2 columns, amounts), on the real table's own "
        f"domain (`privsample.evaluation.tables.real_domain`, amounts in {SCORE_BINS} integer-aligned equal-width "
        "bins over the real range, a value the real table lacks in a cell of its own);",
        "* **threshold**: `min_category_records` of the discovered schema's plan (noisy count a category needs); "
        "**merging floor**: the 2-way error of the real table against itself with every category (text, code "
        "and 1/2 columns) counted below that threshold merged into one value: what the threshold costs by "
        "itself (an upper figure: it treats the code and 1/2 columns as categories); **floor (run)**: the same "
        "over only the columns the run discovered as categorical; **share**: the discovery share of the budget; "
        "**s**: `synthesize` wall seconds.",
        "",
        "| method | schema | runs | 2-way all | 2-way numeric | threshold | merging floor | floor (run) | share | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def vals(rs, k):
        return [x for x in (_f(r, k) for r in rs) if x is not None]

    for m in methods:
        for arm in ARMS:
            rs = [r for r in ok if (r["method"], r["arm"]) == (m, arm)]
            n_all = sum((r["method"], r["arm"]) == (m, arm) for r in tab)
            if not n_all:
                continue
            lines.append(
                f"| {m} | {arm} | {len(rs)}/{n_all} | {_rng(vals(rs, 'err2_all'))} | {_rng(vals(rs, 'err2_num'))} "
                f"| {_rng(vals(rs, 'threshold'), 0)} | {_rng(vals(rs, 'floor'))} | {_rng(vals(rs, 'floor_run'))} "
                f"| {_rng(vals(rs, 'share'), 2)} "
                f"| {_rng(vals(rs, 'synth_s'), 0)} |"
            )
    real = real_lines()
    for m in methods:
        per = {
            arm: {
                c: [r for r in rows if (r["method"], r["arm"], r["column"]) == (m, arm, c) and r["status"] == "ok"]
                for c in CREDIT_COLUMNS
            }
            for arm in ARMS
        }
        lines += [
            "",
            f"### {m}",
            "",
            "Cells: no schema / reviewed schema where both are shown. Discovered: the no-schema runs' column "
            "(count of runs when they differ).",
            "",
            "| column | group | real | discovered (none) | kept none | kept reviewed | clipped/merged none "
            "| one value none / rev | invented none | invented reviewed | empty gain none / rev |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in CREDIT_COLUMNS:
            a, b = per["none"][c], per["reviewed"][c]
            disc = Counter(r["discovered"] for r in a)
            dtxt = "; ".join(f"{k}" + (f" ×{v}" if len(disc) > 1 else "") for k, v in disc.most_common()) or "–"

            def inv(rs):
                ex = sorted({x for r in rs for x in r["invented_values"].split(";") if x}, key=lambda k: (len(k), k))
                return _rng(vals(rs, "invented"), pct=True) + (f"; {', '.join(ex[:4])}" if ex else "")

            one = f"{sum(int(r['one_value']) for r in a)}/{len(a)} / {sum(int(r['one_value']) for r in b)}/{len(b)}"
            gain = f"{_rng(vals(a, 'empty_gain'), pct=True)} / {_rng(vals(b, 'empty_gain'), pct=True)}"
            lines.append(
                f"| {c} | {credit_group(c)} | {real[c]} | {dtxt} | {_rng(vals(a, 'kept'), 2)} | "
                f"{_rng(vals(b, 'kept'), 2)} | {_rng(vals(a, 'lost'), pct=True)} | {one} | {inv(a)} | {inv(b)} | "
                f"{gain} |"
            )
    refused = [r for r in tab if r["status"] != "ok"]
    if refused:
        lines += ["", "Refused runs:", ""] + [
            f"* {r['method']} {r['arm']} seed {r['seed']}: {r['message']}" for r in refused
        ]
    return lines + ["", CREDIT_END]


def with_credit_section(text: str, section: list[str]) -> str:
    """``text`` with its credit section replaced by ``section`` (appended when it has none)."""
    block = "\n".join(section)
    i, j = text.find(CREDIT_BEGIN), text.find(CREDIT_END)
    if i >= 0 and j > i:
        return text[:i] + block + text[j + len(CREDIT_END) :]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def old_credit_section(md_path: Path) -> str:
    """The credit section of the current report ("" when it has none), to keep it when the rest is rewritten."""
    if not md_path.exists():
        return ""
    text = md_path.read_text()
    i, j = text.find(CREDIT_BEGIN), text.find(CREDIT_END)
    return text[i : j + len(CREDIT_END)] if i >= 0 and j > i else ""


def write_credit_report(csv_path: Path, md_path: Path) -> None:
    text = md_path.read_text() if md_path.exists() else ""
    md_path.write_text(with_credit_section(text, credit_section(csv_path)))
    print("\n".join(credit_section(csv_path)))


# -- main -------------------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--table", help=argparse.SUPPRESS)
    ap.add_argument("--epsilon", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--method", help=argparse.SUPPRESS)
    ap.add_argument("--arm", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--share", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="smoke run: seed 0, eps 1, mst, both arms")
    ap.add_argument(
        "--credit",
        action="store_true",
        help="only the credit-like table's per-column outcomes (eps 1, mst/aim/ppsyn, both arms, seeds 0-2; "
        "with --quick seed 0): results in small_tables_credit.csv and a section of small_tables.md",
    )
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--eps", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument(
        "--shares",
        default="",
        help="discovery shares to try in the no-schema arm (default: the "
        "pipeline's plan); rows with a share are kept in the CSV but left out of the report",
    )
    ap.add_argument("--csv", type=Path, default=None, help="results CSV (default small_tables[.quick].csv)")
    ap.add_argument("--md", type=Path, default=RESULTS / "small_tables.md", help="report to write")
    ap.add_argument("--report", action="store_true", help="only rewrite the .md from the CSV")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(credit_worker(a) if a.credit else worker(a)))
        return
    if a.credit:
        if not a.report:
            seeds = [0] if a.quick else [int(x) for x in a.seeds.split(",")]
            run_credit(a.methods.split(","), a.arms.split(","), seeds, (a.csv or CREDIT_CSV).resolve())
        write_credit_report((a.csv or CREDIT_CSV).resolve(), a.md)
        stamp(__file__, a.md, like=[RESULTS / "small_tables.csv", (a.csv or CREDIT_CSV).resolve()])
        return
    if a.quick:
        a.eps, a.methods, a.seeds = "1", "mst", "0"
    csv_path = (a.csv or RESULTS / ("small_tables.quick.csv" if a.quick else "small_tables.csv")).resolve()
    md_path = a.md
    if not a.report:
        done = {key_of(r) for r in read_rows(csv_path)}
        shares = [None] + [float(s) for s in a.shares.split(",") if s]
        grid = [
            (t, float(e), m, arm, int(s), sh)
            for t in a.tables.split(",")
            for e in a.eps.split(",")
            for m in a.methods.split(",")
            for s in a.seeds.split(",")
            for arm in a.arms.split(",")
            for sh in (shares if arm == "none" else [None])
        ]
        todo = [g for g in grid if (*g[:5], "" if g[5] is None else g[5]) not in done]
        print(f"{len(grid)} runs, {len(grid) - len(todo)} already in {csv_path.name}", flush=True)
        for t, e, m, arm, s, sh in todo:
            table_path(t)  # write the Adult sample once, outside the timed workers
            load = os.getloadavg()[0]
            args = ["--table", t, "--epsilon", str(e), "--method", m, "--arm", arm, "--seed", str(s)]
            try:
                row = run_worker(args + ([] if sh is None else ["--share", str(sh)]))
            except RuntimeError as exc:  # keep going; the run is retried next time
                print(f"FAILED {t} eps={e:g} {m} {arm} seed={s}: {str(exc)[-800:]}", flush=True)
                continue
            row.update(load=f"{load:.2f}", when=time.strftime("%Y-%m-%d %H:%M"))
            append_row(csv_path, row)
            stamp(__file__, csv_path)  # the code of the last run added
            print(
                f"{t} eps={e:g} {m} {arm} seed={s}{'' if sh is None else f' share={sh:g}'}: {row['status']} "
                f"2-way {row.get('err2', '')!s:.6} synth {row['synth_s']:.1f}s "
                f"(process {row['process_s']:.1f}s, load {load:.2f})",
                flush=True,
            )
    timing = [RESULTS / "small_tables.quick.csv", RESULTS / "small_tables.timing.csv"]
    write_report(
        csv_path,
        md_path,
        smoke=a.quick or csv_path.name.endswith(".quick.csv"),
        estimate=estimate_lines(timing) if csv_path in timing else None,
    )
    stamp(__file__, md_path, like=[csv_path] + ([CREDIT_CSV] if CREDIT_CSV.exists() else []))  # the stored runs


if __name__ == "__main__":
    main()
