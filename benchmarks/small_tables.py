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
Results: benchmarks/results/small_tables.{csv,md}.
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
    from privsample.evaluate.workload import all_cliques, workload_error

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
    from privsample.pipeline import DEFAULT_DELTA, DISCOVERY_DELTA_SHARE
    from privsample.privacy.conversion import cdp_rho

    d_disc = DISCOVERY_DELTA_SHARE * DEFAULT_DELTA
    total = cdp_rho(epsilon, DEFAULT_DELTA - d_disc)
    return plan_discovery(total, d_disc, float(n_rows), n_columns, count_rho=COUNT_SHARE * total)[1]["share"]


def default_threshold(epsilon: float, n_columns: int, n_rows: int, share: float | None = None) -> float:
    """The count a category needs at ``epsilon`` under the pipeline's no-schema plan, for a table of
    ``n_rows`` rows (standing in for the noisy row count) and ``n_columns`` columns.

    Mirrors ``synthesize``/``private_schema``: the run's rho is cdp_rho(epsilon, delta - delta_disc), delta_disc
    = DISCOVERY_DELTA_SHARE * delta (planned) or share * delta (fixed ``share``); ``plan_discovery`` gives the
    columns' rho, split evenly over the columns; ``_column_split`` gives a categorical column's rho for its
    thresholded histogram, with tau = category_threshold(sigma_for_rho(that), delta_disc / columns)."""
    from privsample.data.discovery_plan import COUNT_SHARE, _column_split, _split, category_threshold, plan_discovery
    from privsample.pipeline import DEFAULT_DELTA, DISCOVERY_DELTA_SHARE
    from privsample.privacy.conversion import cdp_rho
    from privsample.privacy.mechanisms import sigma_for_rho

    delta = DEFAULT_DELTA
    d_disc = (DISCOVERY_DELTA_SHARE if share is None else share) * delta
    total = cdp_rho(epsilon, delta - d_disc)
    rho, _ = plan_discovery(total, d_disc, float(n_rows), n_columns, count_rho=COUNT_SHARE * total, share=share)
    col = _split(rho, [1.0] * n_columns)[0]
    return category_threshold(sigma_for_rho(_column_split(col, float(n_rows))[1]), d_disc / n_columns)


# -- one run (in a fresh interpreter) --------------------------------------------------------------------
def worker(a) -> dict:
    import dataclasses
    import tempfile

    from privsample.data.discovery import draft_schema
    from privsample.data.schema import Categorical, Numeric
    from privsample.data.table import read_table
    from privsample.errors import InputError, PrivsampleError
    from privsample.pipeline import method_options, synthesize, write_table

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
        th = ledger_thresholds(res.accountant.ledger)
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
    md_path.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


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
        print(json.dumps(worker(a)))
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


if __name__ == "__main__":
    main()
