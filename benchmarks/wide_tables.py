"""Benchmark: MST, AIM and PPSyn-DP on wide tables (time by phase, peak memory, workload error).

Tables: drawn from seeded random Bayesian networks (``common.network``: at most 3 parents a column,
Dirichlet(0.5) CPTs) with 25, 50, 100 and 200 columns and 100,000 and 1,000,000 rows, written once to
``benchmarks/.cache/wide-<cols>x<rows>.parquet`` with the generator's schema (the public domain,
provenance "user": a reviewed schema). Cardinalities are log-uniform on 2-50; the column types cycle
through nullable text (the last value written as a missing value), integer categories, binned floats and
integer ``Numeric`` columns. Also the real ACS (23 binary columns, 47,461 rows) and NLTCS (16 binary
columns, 21,574 rows) tables of ``../shared/data``, with their domain files as schema.

Each fit runs ``privsample.synthesize`` (NumPy engine, seeded noise: NOT private) in a fresh
process under a time limit (``--timeout``); a failure is a result (status "error: ..." or "timeout"),
never the end of the grid. Phases, from the worker's own instrumentation of the library:
``engine`` reading and coding the table and every marginal count; ``estimation`` every Private-PGM fit
(``pgm.estimate``); ``measurement`` the Gaussian measurements; ``selection`` the rest of the fit
(candidate scoring, model marginals, the exponential mechanism); ``sampling`` drawing 100,000 synthetic
records (codes). Peak RSS: the worker process's, up to the end of sampling (not the scoring).

Error: the mean L1 distance between normalised real and synthetic marginals (McKenna et al. 2022) on a
seeded uniform sample of at most 256 two-way and 256 three-way cliques of the table (the same cliques for
every method), against a baseline measured in the same process: a product of noisy one-way marginals at
the same budget (every column's 1-way counts with Gaussian noise, rho split evenly; negative counts set
to 0), sampled to 100,000 records. Ratios < 1 beat the baseline.

    python benchmarks/wide_tables.py --quick        # 25 columns x 100,000 rows, eps = 1 (a few minutes)
    python benchmarks/wide_tables.py                # the full grid (hours; resumable)
    python benchmarks/wide_tables.py --tables wide-100x1000000 --methods mst --epsilons 1
    python benchmarks/wide_tables.py --retry-failed # rerun the errors and timeouts of earlier runs
Results (finished runs are kept and skipped): benchmarks/results/wide_tables.{csv,md,png}.
Experiments: ``PPSYN_ATTRS='{"one_way_share": 0.2}'`` (a JSON of PPSyn attributes) overrides PPSyn's settings
in ``--worker`` runs (benchmarks/results/ppsyn_wide.md); such runs are not the defaults' results.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time

import numpy as np

import common
from common import DATA, RESULTS, ROOT, peak_rss_mb
from freshness import stamp

CACHE = ROOT / "benchmarks" / ".cache"
SEED = 20240917
WIDTHS = (25, 50, 100, 200)
ROW_COUNTS = (100_000, 1_000_000)
METHODS = ("mst", "aim", "ppsyn")
LABEL = {"mst": "MST", "aim": "AIM", "ppsyn": "PPSyn-DP"}
EPSILONS = (1.0, 0.3)
DELTA = 1e-9
SYNTH_ROWS = 100_000
MAX_CLIQUES = 256
KIND_CYCLE = ["text", "int", "text", "float", "text", "intnum", "text", "int", "float", "text"]
CSV_PATH = RESULTS / "wide_tables.csv"


# -- the tables -----------------------------------------------------------------------------------------
def log_uniform_size(rng) -> int:
    return int(np.exp(rng.uniform(np.log(2), np.log(51))))


def wide_network(cols: int) -> list[dict]:
    kinds = [KIND_CYCLE[i % len(KIND_CYCLE)] for i in range(cols)]
    return common.network(cols, SEED + cols, kinds, size=log_uniform_size, max_configs=2500)


def table_names() -> list[str]:
    """Every table of the grid, in the order it is run (small first)."""
    return ["acs", "nltcs"] + [f"wide-{c}x{r}" for r in ROW_COUNTS for c in WIDTHS]


def table_shape(name: str) -> tuple[int, int]:
    """(columns, rows), public."""
    if name == "acs":
        return 23, 47_461
    if name == "nltcs":
        return 16, 21_574
    cols, rows = name.removeprefix("wide-").split("x")
    return int(cols), int(rows)


def table(name: str):
    """(path, reviewed schema) of a table, written on first use."""
    from privsample.data.schema import Categorical, Schema

    if name in ("acs", "nltcs"):
        dom = json.loads((DATA / f"{name}-domain.json").read_text())
        return DATA / f"{name}.csv", Schema([Categorical(a, tuple(str(v) for v in range(n))) for a, n in dom.items()])
    cols, rows = table_shape(name)
    nodes = wide_network(cols)
    path = common.write_network_table(nodes, rows, CACHE / f"{name}.parquet", SEED + 7 * cols + rows)
    return path, common.network_schema(nodes)


# -- one run (in a fresh interpreter) -------------------------------------------------------------------
class Clock:
    """Wall time inside wrapped functions, outermost calls only (a call inside another is not counted twice)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.active = True
        self._depth = 0

    def wrap(self, phase: str, f):
        def run(*a, **k):
            if not self.active or self._depth:
                return f(*a, **k)
            self._depth += 1
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                self._depth -= 1
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - t

        return run


def instrument(clock: Clock, engines: list) -> None:
    """Time the library's phases (module attributes the synthesizers call) and keep every NumPy engine built."""
    import privsample.data.encoding as encoding
    import privsample.data.table as table_mod
    import privsample.synth.aim as aim
    import privsample.synth.mst as mst
    import privsample.synth.pgm as pgm
    import privsample.synth.ppsyn_steps as ppsyn_steps
    from privsample.marginals import NumpyEngine

    table_mod.read_table = clock.wrap("engine", table_mod.read_table)
    encoding.encode = clock.wrap("engine", encoding.encode)
    encoding.read_codes = clock.wrap("engine", encoding.read_codes)
    NumpyEngine.marginals = clock.wrap("engine", NumpyEngine.marginals)
    init = NumpyEngine.__init__

    def keep(self, *a, **k):
        init(self, *a, **k)
        engines.append(self)

    NumpyEngine.__init__ = clock.wrap("engine", keep)
    pgm.estimate = clock.wrap("estimation", pgm.estimate)
    for mod in (mst, aim, ppsyn_steps):
        mod.gaussian_measure = clock.wrap("measurement", mod.gaussian_measure)


def sample_cliques(names: list[str], k: int, rng: np.random.Generator) -> list[tuple[str, ...]]:
    """All k-way cliques if at most MAX_CLIQUES, else a uniform sample of MAX_CLIQUES distinct ones."""
    n = math.comb(len(names), k)
    if n <= MAX_CLIQUES:
        import itertools

        return [tuple(c) for c in itertools.combinations(names, k)]
    out: set[tuple[str, ...]] = set()
    while len(out) < MAX_CLIQUES:
        out.add(tuple(names[i] for i in sorted(rng.choice(len(names), size=k, replace=False))))
    return sorted(out)


def independent_codes(real, epsilon: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The baseline: each column drawn independently from its noisy 1-way marginal (rho of (epsilon, DELTA)
    split evenly over the columns, sensitivity 1 each)."""
    from privsample.privacy.conversion import cdp_rho

    names = list(real.domain.attributes)
    sigma = math.sqrt(len(names) / (2 * cdp_rho(epsilon, DELTA)))
    ones = real.marginals([(a,) for a in names])
    out = {}
    for a in names:
        p = np.clip(ones[(a,)].astype(float) + rng.normal(0, sigma, real.domain[a]), 0, None)
        p = p / p.sum() if p.sum() > 0 else np.full(len(p), 1 / len(p))
        out[a] = rng.choice(len(p), size=SYNTH_ROWS, p=p).astype(np.int64)
    return out


def exact_product_errors(real, cliques: list[tuple[str, ...]]) -> list[float]:
    """Each clique's L1 distance between the real normalised marginal and the exact product of the real 1-way
    marginals (independent columns, no noise, no sampling): the outer product of the 1-way marginals."""
    out = []
    for cl in cliques:
        p = real.marginals([cl])[cl].astype(float)
        p /= p.sum()
        q = np.ones(())
        for i in range(len(cl)):
            q = np.multiply.outer(q, p.sum(axis=tuple(j for j in range(len(cl)) if j != i)))
        out.append(float(np.abs(p - q).sum()))
    return out


def override_attributes(cls, variable: str) -> None:
    """Experiments: set the attributes of the JSON object in the environment ``variable`` on every ``cls``
    synthesizer before it fits (nothing when the variable is unset)."""
    attrs = json.loads(os.environ.get(variable, "{}"))
    if not attrs:
        return
    fit = cls.fit

    def fit_with(self, *a, **k):
        for key_, value in attrs.items():
            setattr(self, key_, value)
        return fit(self, *a, **k)

    cls.fit = fit_with


def worker(name: str, method: str, epsilon: float, seed: int, table_fn=None) -> dict:
    """One fit of ``method`` on table ``name`` (``table_fn(name)`` -> (path, schema); default ``table``)."""
    from privsample.marginals import NumpyEngine
    from privsample.evaluation.workload import workload_errors
    from privsample.api.synthesizer import synthesize
    from privsample.synth.selection import model_size_mb

    path, sch = (table_fn or table)(name)
    from privsample.synth.aim import AIM
    from privsample.synth.ppsyn import PPSyn

    override_attributes(PPSyn, "PPSYN_ATTRS")  # experiments: synthesizer attributes to override (JSON)
    override_attributes(AIM, "AIM_ATTRS")
    clock, engines = Clock(), []
    instrument(clock, engines)
    t0 = time.perf_counter()
    res = synthesize(path, epsilon=epsilon, delta=DELTA, method=method, schema=sch, seed=seed, engine="numpy",
                     sample=False)  # fmt: skip
    synth_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    codes = res.model.sample(SYNTH_ROWS, np.random.default_rng(seed))
    sample_s = time.perf_counter() - t1
    rss = peak_rss_mb()
    clock.active = False
    sec = clock.seconds
    m = res.model
    info = m.info
    rounds = len(info["rounds"]) if isinstance(info.get("rounds"), list) else len(info.get("tree", []))
    out = {
        "total_s": synth_s + sample_s,
        "engine_s": sec.get("engine", 0.0),
        "selection_s": synth_s - sum(sec.get(p, 0.0) for p in ("engine", "estimation", "measurement")),
        "measurement_s": sec.get("measurement", 0.0),
        "estimation_s": sec.get("estimation", 0.0),
        "sampling_s": sample_s,
        "self_rss_mb": rss,
        "rounds": rounds,
        "model_cliques": len(m.model.cliques),
        "model_size_mb": model_size_mb(m.model.domain, m.model.cliques),
    }
    # scoring (not timed, not in the peak RSS): the real codes are the engine's
    real = next(e for e in engines if e.total() > 0 and set(e.domain.attributes) == set(sch.names))
    synth = NumpyEngine(codes, real.domain)
    base = NumpyEngine(independent_codes(real, epsilon, np.random.default_rng(seed + 1)), real.domain)
    rng = np.random.default_rng(SEED)
    for k in (2, 3):
        cliques = sample_cliques(list(real.domain.attributes), k, rng)
        err = float(np.mean(list(workload_errors(real, synth, cliques).values())))
        b = float(np.mean(list(workload_errors(real, base, cliques).values())))
        x = float(np.mean(exact_product_errors(real, cliques)))
        out.update({f"err{k}": err, f"base_err{k}": b, f"ratio{k}": err / b, f"cliques{k}": len(cliques),
                    f"exact_err{k}": x, f"exact_ratio{k}": err / x})  # fmt: skip
    return out


# -- results --------------------------------------------------------------------------------------------
FIELDS = [
    "table", "cols", "rows", "method", "epsilon", "status", "total_s", "engine_s", "selection_s", "measurement_s",
    "estimation_s", "sampling_s", "process_s", "peak_rss_mb", "rounds", "model_cliques", "model_size_mb",
    "err2", "base_err2", "ratio2", "cliques2", "err3", "base_err3", "ratio3", "cliques3", "load_before", "when",
]  # fmt: skip


def key(r: dict) -> tuple:
    return r["table"], r["method"], float(r["epsilon"])


def load() -> list[dict]:
    return list(csv.DictReader(open(CSV_PATH))) if CSV_PATH.exists() else []


def save(rows: list[dict]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    order = {t: i for i, t in enumerate(table_names())}
    rows = sorted(
        rows, key=lambda r: (float(r["epsilon"]) != 1.0, order.get(r["table"], 99), METHODS.index(r["method"]))
    )
    with open(CSV_PATH, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    write_md(rows)
    write_figure(rows)


def num(r: dict, k: str) -> float | None:
    try:
        x = float(r.get(k, ""))
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def cell(r: dict, k: str, digits: int = 1) -> str:
    x = num(r, k)
    return "" if x is None else f"{x:,.{digits}f}"


def ok(r: dict) -> bool:
    return r.get("status") == "ok"


PHASES = {"engine_s": "engine", "selection_s": "select", "measurement_s": "measure", "estimation_s": "estimate",
          "sampling_s": "sample"}  # fmt: skip


def largest(r: dict) -> str:
    """The phase that took the longest, with its share of the total."""
    if not ok(r) or not num(r, "total_s"):
        return ""
    k = max(PHASES, key=lambda p: num(r, p) or 0.0)
    return f"{PHASES[k]} {100 * (num(r, k) or 0.0) / num(r, 'total_s'):.0f}%"


def write_md(rows: list[dict]) -> None:
    lines = [
        "# Wide tables: MST, AIM and PPSyn-DP (`benchmarks/wide_tables.py`)",
        "",
        f"Machine: {os.cpu_count()} cores shared with other work (load average before each run in the CSV), "
        f"{_mem_gb():.0f} GB RAM. Each fit is a fresh process (NumPy engine, reviewed schema, seeded noise), "
        "stopped at its time limit. Times in seconds, without interpreter start-up; `total` = engine + "
        "selection + measurement + estimation + sampling (100,000 records). Peak RSS: the fit's process, to "
        "the end of sampling. Error: mean L1 distance of normalised marginals over sampled 2-way/3-way "
        "cliques (at most 256 each); `ratio` = the method's error / the same-process baseline's (a product of "
        "noisy 1-way marginals at the same ε; < 1 is better than independent columns). "
        "`rounds`: measured cliques (MST: tree edges).",
        "",
    ]
    for eps in sorted({float(r["epsilon"]) for r in rows}, reverse=True):
        lines += [
            f"## ε = {eps:g} (δ = {DELTA:g})",
            "",
            "| table | cols | rows | method | status | total | engine | select | measure | estimate | sample "
            "| largest phase | peak RSS MB | rounds | model MB | err 2-way | ratio | err 3-way | ratio | total / MST |",
            "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            if float(r["epsilon"]) != eps:
                continue
            mst = next((x for x in rows if ok(x) and key(x) == (r["table"], "mst", eps)), None)
            rel = ""
            if ok(r) and mst is not None:
                rel = f"{float(r['total_s']) / float(mst['total_s']):.1f}x"
            status = r["status"] if len(r["status"]) <= 90 else r["status"][:87] + "..."
            lines.append(
                f"| {r['table']} | {r['cols']} | {int(r['rows']):,} | {LABEL[r['method']]} | {status} | "
                + " | ".join(
                    cell(r, k)
                    for k in ("total_s", "engine_s", "selection_s", "measurement_s", "estimation_s", "sampling_s")
                )
                + f" | {largest(r)} | {cell(r, 'peak_rss_mb', 0)} | {cell(r, 'rounds', 0)} | "
                f"{cell(r, 'model_size_mb', 3)} | "
                f"{cell(r, 'err2', 3)} | {cell(r, 'ratio2', 2)} | {cell(r, 'err3', 3)} | {cell(r, 'ratio3', 2)} "
                f"| {rel} |"
            )
        lines.append("")
    lines += ["## Targets (ε = 1)", ""] + targets(rows) + ["", "## Missing rows", ""] + missing(rows)
    loads = [float(r["load_before"].split()[0]) for r in rows if r.get("load_before")]
    if loads:
        lines += [
            "",
            f"Load average (1 min) before the runs: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores. "
            "A timed-out run records the peak RSS it reached before it was stopped and no times.",
        ]
    lines += ["", "## Notes", ""] + NOTES
    (RESULTS / "wide_tables.md").write_text("\n".join(lines) + "\n")


NOTES = [
    "* This machine is shared (two cores; other test suites and benchmarks ran at the same time), so times "
    "are upper bounds of an idle machine's; the ratios compare runs of the same invocation.",
    "* `engine` overlaps no other phase: the marginal counts requested during selection or measurement "
    "are counted in `engine` only. `select` is the rest of the fit (candidate scoring with the model's "
    "marginals, the exponential mechanism, size checks).",
    "* Errors and timeouts are kept as results; `--retry-failed` reruns them (with `--timeout`, default 900 s; "
    "the limit a run had is in its status).",
    "* Memory: with a reviewed schema the NumPy engine reads the file a batch of rows at a time and holds only "
    "the codes, in the smallest unsigned type of each column's domain (MST at 100 columns x 1,000,000 rows: "
    "peak 967 MB; 5.3 GB when the table was first loaded into pandas).",
    "* PPSyn-DP scores at most `max_candidates` = 1,000 candidates a round, drawn uniformly among those that fit, "
    "independently of the data (100 columns have about 160,000 3-way candidates); at 25 columns this is within "
    "the seed-to-seed spread of scoring them all (`ppsyn_wide.md`).",
    "* AIM misses the 10-minute target: 100 columns x 1,000,000 rows took 1,715 s (2.9x the limit; load 2-6 on "
    "2 cores during the run, so an idle machine's time is lower), in 1.4 GB, with the lowest 2-way error of the three "
    "(ratio 0.56; MST 0.59, PPSyn-DP 0.99). Estimation 1,021 s, candidate scoring and size checks 650 s, 94 rounds. "
    "Why: AIM's model grows with the budget spent up to `max_model_size` (80 MB, the reference default) and every "
    "round refits it with 250 warm-started iterations and scores all 4,950 pair candidates on it. The first 85 "
    "rounds (model under 2 MB) take about 3 s each; once the size filter lets the junction tree reach 46 MB (at 65% "
    "of the budget) a round takes 60-90 s (refit 40-70 s, scoring 20-27 s), and the final fit (1,000 iterations) of "
    "the 60 MB model several minutes (`aim_wide.md`). With 1,000,000 rows the noise is smaller relative to the "
    "counts, so AIM anneals later and runs more rounds than at 100,000. Fewer iterations a round raised AIM's error "
    "on Adult beyond the seeds' spread, so they are not the default. Exact speed-ups so far (answers equal up to "
    "float rounding): Hugin sweeps in the estimator, marginals across the model's components as products, empty "
    "separators skipped, reused tables. AIM on 25 columns x 1,000,000 rows did not finish in 2,400 s (peak 1.7 GB): "
    "traced, by round 48 of at most 107 (40% of the budget) its junction tree is 13 MB and each refit takes 30-37 s; "
    "with fewer columns the measured cliques share attributes sooner, so the tree grows earlier than at 100 columns.",
    "* PPSyn-DP beyond 25 columns: T = 16 min(d, 25) rounds and a one-way share of min(0.2, 0.1 d / 25) of the "
    "budget (functions of d only; `ppsyn_wide.md`). It stays near independent columns from 100 columns on.",
    "* MST's error on NLTCS (ratio 0.52) is what a tree can do there: the noise-free Chow-Liu tree of NLTCS has a "
    "2-way error of 0.159 (MST at eps = 1: 0.168).",
]


def find(rows, table_name, method, eps=1.0):
    return next((r for r in rows if key(r) == (table_name, method, eps)), None)


def verdict(r, limit_s: float, limit_mb: float = 4096) -> str:
    if r is None:
        return "not measured"
    if not ok(r):
        return f"missed ({r['status']})"
    t, m = float(r["total_s"]), float(r["peak_rss_mb"])
    good = t < limit_s and m < limit_mb
    return (
        f"{'met' if good else 'MISSED'}: {t:,.0f} s ({t / limit_s:.2f}x the limit), {m:,.0f} MB "
        f"({m / limit_mb:.2f}x the limit)"
    )


def targets(rows: list[dict]) -> list[str]:
    t = "wide-100x1000000"
    out = [
        f"* 100 columns x 1,000,000 rows, MST under 2 minutes and 4 GB: {verdict(find(rows, t, 'mst'), 120)}",
        f"* ... AIM under 10 minutes and 4 GB: {verdict(find(rows, t, 'aim'), 600)}",
        f"* ... PPSyn-DP under 10 minutes and 4 GB: {verdict(find(rows, t, 'ppsyn'), 600)}",
    ]
    for n in ROW_COUNTS:
        t = f"wide-200x{n}"
        done = {m: find(rows, t, m) for m in METHODS}
        if all(v is None for v in done.values()):
            out.append(f"* 200 columns x {n:,} rows completes for MST and AIM or PPSyn-DP: not measured")
            continue
        state = ", ".join(f"{LABEL[m]} {'ok' if v and ok(v) else (v['status'] if v else 'not run')}"
                          for m, v in done.items())  # fmt: skip
        good = done["mst"] and ok(done["mst"]) and any(done[m] and ok(done[m]) for m in ("aim", "ppsyn"))
        out.append(f"* 200 columns x {n:,} rows completes for MST and AIM or PPSyn-DP: "
                   f"{'met' if good else 'MISSED'} ({state})")  # fmt: skip
    slower = []
    compared = 0
    for r in rows:
        if r["method"] == "mst":
            continue
        mst = find(rows, r["table"], "mst", float(r["epsilon"]))
        if mst is None or not ok(mst):
            continue
        compared += 1
        if ok(r) and float(r["total_s"]) <= float(mst["total_s"]):
            ratio = float(r["total_s"]) / float(mst["total_s"])
            slower.append(f"{r['table']} ε={float(r['epsilon']):g} ({LABEL[r['method']]} {ratio:.2f}x MST)")
    if not compared:
        return out + ["* MST the fastest of the three on every table: not measured (no table with MST and another run)"]
    out.append(
        f"* MST the fastest of the three on every table and ε: {'MISSED on ' + ', '.join(slower) if slower else 'met'} "
        f"({compared} comparisons with a finished MST run; a failed or timed-out run counts as slower)"
    )
    return out


def missing(rows: list[dict]) -> list[str]:
    done = {key(r) for r in rows}
    failed = [f"{r['table']} {LABEL[r['method']]} ε={float(r['epsilon']):g}: {r['status']}" for r in rows if not ok(r)]
    todo = [
        f"{t} {LABEL[m]} ε={e:g}" for e in EPSILONS for t in table_names() for m in METHODS if (t, m, e) not in done
    ]
    out = [f"* failed: {x}" for x in failed] or ["* no failed runs"]
    if todo:
        out.append(f"* not run yet ({len(todo)}; the grid did not fit in the time available): " + ", ".join(todo))
    return out


def write_figure(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = {"mst": "C0", "aim": "C1", "ppsyn": "C2"}
    for n, style in zip(ROW_COUNTS, ("-", "--")):
        for m in METHODS:
            pts = sorted(
                (table_shape(r["table"])[0], float(r["total_s"]), float(r["peak_rss_mb"]))
                for r in rows
                if ok(r) and r["method"] == m and float(r["epsilon"]) == 1.0 and r["table"].startswith("wide-")
                and int(r["rows"]) == n
            )  # fmt: skip
            if not pts:
                continue
            x = [p[0] for p in pts]
            label = f"{LABEL[m]}, {n:,} rows"
            axes[0].plot(x, [p[1] for p in pts], style, marker="o", color=colors[m], label=label)
            axes[1].plot(x, [p[2] for p in pts], style, marker="o", color=colors[m], label=label)
    for ax, title in zip(axes, ("wall time (s)", "peak RSS (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(20, 250)
        ax.set_xticks(WIDTHS, [str(w) for w in WIDTHS])
        ax.set_xticks([], minor=True)
        ax.set_xlabel("columns")
        ax.set_title(f"{title}, ε = 1")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "wide_tables.png", dpi=110)
    plt.close(fig)


def _mem_gb() -> float:
    import psutil

    return psutil.virtual_memory().total / 2**30


# -- the driver -----------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--table", default="wide-25x100000")
    ap.add_argument("--method", default="mst")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="25 columns x 100,000 rows, eps = 1, all three methods")
    ap.add_argument("--tables", default=",".join(table_names()))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run (default 15 minutes)")
    ap.add_argument("--retry-failed", action="store_true", help="rerun runs recorded as errors or timeouts")
    a = ap.parse_args()
    if a.worker:
        row = worker(a.table, a.method, a.epsilon, a.seed)
        print(json.dumps(row), flush=True)
        return
    tables = ["wide-25x100000"] if a.quick else a.tables.split(",")
    epsilons = [1.0] if a.quick else [float(e) for e in a.epsilons.split(",")]
    rows = load()
    for eps in epsilons:
        for name in tables:
            table(name)  # written once, outside the measurements
            for method in a.methods.split(","):
                old = next((r for r in rows if key(r) == (name, method, eps)), None)
                if old is not None and (ok(old) or not a.retry_failed):
                    continue
                cols, n = table_shape(name)
                before = " ".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"{name:18s} {LABEL[method]:8s} eps={eps:g} ... (load {before})", flush=True)
                row = {"table": name, "cols": cols, "rows": n, "method": method, "epsilon": eps}
                args = ["--table", name, "--method", method, "--epsilon", str(eps)]
                try:
                    row.update(common.run_measured(__file__, args, timeout=a.timeout), status="ok")
                except common.RunTimeout as exc:
                    row.update(status=f"timeout ({a.timeout:.0f} s)", peak_rss_mb=exc.peak_rss_mb)
                except RuntimeError as exc:
                    last = (str(exc).strip().splitlines() or ["?"])[-1]
                    row.update(status=f"error: {last}".replace("|", "/"), peak_rss_mb=exc.peak_rss_mb)
                row.update(load_before=before, when=time.strftime("%Y-%m-%d %H:%M"))
                print(f"  {row['status']}, total {cell(row, 'total_s')} s, peak {cell(row, 'peak_rss_mb', 0)} MB, "
                      f"ratio2 {cell(row, 'ratio2', 2)}", flush=True)  # fmt: skip
                # merged with the file as it is now (another invocation may have added rows meanwhile)
                rows = [r for r in load() if key(r) != key(row)] + [{k: str(v) for k, v in row.items()}]
                save(rows)
                # the code of the last run added
                stamp(__file__, CSV_PATH, RESULTS / "wide_tables.md", RESULTS / "wide_tables.png")
    if rows:
        save(load())


if __name__ == "__main__":
    main()
