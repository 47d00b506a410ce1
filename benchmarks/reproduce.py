"""Freshness by reproduction: rerun a sample of a stored grid's rows with today's code and compare them exactly.

The long resumable grids (``ppsyn_paper.csv``, ``method_choice.csv``, ``wide_tables.csv``, ``latent_wide.csv``)
take hours, and their code digest (``benchmarks/freshness.py``) covers whole layers of the package, so they are
stale after almost any change below them, often one that cannot touch a number they hold. Every run of these grids
uses seeded noise and seeded sampling, so a stored row is a deterministic function of its arguments and the code:
rerunning it with the script's own worker (``--worker``, in a fresh process, as the grid ran it) must print the
same figures to the last digit, unless the code's results changed.

For each results file named, this script

* picks rows to rerun under a wall-time budget (``--budget-s``): first the cheapest row (by the time the row
  records) of every group (mechanism or method), so that each code path is tried; then ``--random`` rows drawn at
  random (seeded by ``--seed``) among those that fit half the budget; then the cheapest of the rest, taken in turn
  from every group. A row's cost is its recorded seconds plus the largest overhead (process start, data, scoring)
  seen so far; a row that does not fit what is left of the budget is passed over, and a rerun still going when
  the budget ends is stopped and not counted. Rows that did not finish when they ran (timeouts, errors) are not
  rerun;
* reruns each one and compares every seeded figure the worker prints with the stored one, exactly (numbers as
  floats, equal or not; text as text): errors, rounds, privacy budgets, row and clique counts. Wall times, memory
  and load are not compared (each grid's ``ignore`` lists them);
* prints one line per row, ``equal`` or ``DIFFERS`` with the fields that differ (stored value, new value), and
* when every rerun row is equal (at least one, no rerun failed), records it in the file's stamp: today's code
  digest and ``"reproduced": {"rows": k, "of": n, "date": ...}`` (with the digest and commit of the stamp it
  replaces), so that ``check_fresh.py`` reads it fresh and ``--list`` says ``fresh (reproduced k of n rows)``.
  When a row differs or fails, the stamp is left as it was. A stamp that today's code wrote is left alone too.

What a reproduced stamp claims: k of the file's n rows, run again with the code of its digest, gave the same
figures; every row was run with seeded noise. It does not claim that the other n - k rows would (a change may
touch one mechanism, budget or table only: the picks cover every group the budget allows), nor that timings hold.
Proof sketch of what it does claim: a worker's output is a function of its arguments, the code and the data
(seeded noise; the synthesizers take no decision on time); equal outputs under today's code and the stored row
mean today's code computes that row as stored. The stamp is written under ``freshness.locked_stamps`` only if
neither the results file nor the code digest changed while the rows ran.

    python benchmarks/reproduce.py ppsyn_paper.csv --budget-s 300
    python benchmarks/reproduce.py method_choice.csv --budget-s 300 --random 2 --seed 1
    python benchmarks/reproduce.py ppsyn_paper.csv --dry-run            # the rows it would rerun
    python benchmarks/reproduce.py ppsyn_paper.csv --no-stamp           # compare only

Exit status: 0 when every rerun row is equal, 1 when one differs or fails, 2 when no row was rerun.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import hashlib
import json
import math
import os
import random
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from freshness import ROOT, code_digest, locked_stamps, read_stamps, reproduced, results_dir  # noqa: E402

#: ``benchmarks/ppsyn_paper.py``'s grid runs its workers single-threaded
SINGLE_THREAD = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

TIMINGS = frozenset({"wall_s", "total_s", "engine_s", "selection_s", "measurement_s", "estimation_s", "sampling_s"})
MEMORY = frozenset({"rss_mb", "self_rss_mb", "peak_rss_mb"})


@dataclasses.dataclass(frozen=True)
class Grid:
    """How to rerun the rows of one results CSV with its script's worker."""

    script: str  #: the file of benchmarks/ that writes the CSV
    args: Callable[[dict[str, str]], list[str]]  #: the worker's arguments for a stored row (after ``--worker``)
    key: tuple[str, ...]  #: the fields that name a row
    cost: str  #: the field holding a row's recorded seconds
    seeded: tuple[str, ...]  #: figures the worker must print and that are compared (others it prints are, too)
    ignore: frozenset[str]  #: fields not compared: timings, memory, load, dates
    group: Callable[[dict[str, str]], str] = lambda r: ""  #: picks go round the groups, cheapest first in each
    env: tuple[tuple[str, str], ...] = ()  #: environment of the grid's workers (beyond PYTHONWARNINGS)
    overhead_s: float = 10.0  #: first guess of a rerun's seconds beyond its recorded ones
    rerun: Callable[[dict[str, str]], bool] = lambda r: r.get("status", "ok") == "ok"  #: finished rows only


def _ppsyn_args(r: dict[str, str]) -> list[str]:
    """As ``ppsyn_paper.py``'s grid calls its worker: one fit on the training part of fold ``svm_fold`` (none: all
    rows, no SVM score), ``--quick`` for the quick run's rows."""
    fold = r["svm_fold"] or "-1"
    folds = "0" if fold != "-1" else (r["svm_folds"] or "0")
    args = ["--dataset", r["dataset"], "--mechanism", r["mechanism"], "--epsilon", r["epsilon"], "--seed", r["seed"]]
    args += ["--eta", r["eta"], "--k", r["k"], "--svm-folds", folds, "--svm-fold", fold]
    return args + (["--quick"] if r["quick"] == "1" else [])


def _wide_args(r: dict[str, str]) -> list[str]:
    args = ["--table", r["table"], "--method", r["method"], "--epsilon", r["epsilon"]]
    return args + ["--seed", r.get("seed") or "0"]


_WIDE_SEEDED = ("rounds", "model_cliques", "model_size_mb", "err2", "base_err2", "err3", "base_err3")

#: results file (a name under benchmarks/results/) -> how to rerun its rows
GRIDS: dict[str, Grid] = {
    "ppsyn_paper.csv": Grid(
        script="ppsyn_paper.py",
        args=_ppsyn_args,
        key=("dataset", "mechanism", "epsilon", "seed", "eta", "k", "quick"),
        cost="fit_s",
        seeded=("workload_error", "range3_mse", "range5_mse", "svm_error", "rounds", "rho_spent", "rho_total"),
        ignore=frozenset({"fit_s", "estimate_s", "rss_mb"}),
        group=lambda r: r["mechanism"],
        env=tuple(SINGLE_THREAD.items()),
        overhead_s=30.0,  # reading the table, range queries and the SVM score
    ),
    "method_choice.csv": Grid(
        script="method_choice.py",
        args=lambda r: ["--table", r["table"], "--method", r["method"], "--epsilon", r["epsilon"], "--seed", r["seed"]],
        key=("table", "epsilon", "method", "seed"),
        cost="wall_s",
        seeded=("err2", "err3", "rows_out"),
        ignore=frozenset({"wall_s", "load_before", "when"}),
        group=lambda r: r["method"],
        overhead_s=8.0,
    ),
    "wide_tables.csv": Grid(
        script="wide_tables.py",
        args=_wide_args,
        key=("table", "method", "epsilon"),
        cost="process_s",
        seeded=_WIDE_SEEDED,
        ignore=TIMINGS | MEMORY | {"process_s", "load_before", "when"},
        group=lambda r: r["method"],
        overhead_s=10.0,  # a generated table is written on first use
    ),
    "latent_wide.csv": Grid(
        script="latent_wide.py",
        args=_wide_args,
        key=("table", "method", "epsilon", "seed"),
        cost="process_s",
        seeded=_WIDE_SEEDED + ("exact_err2", "exact_err3"),
        ignore=TIMINGS | MEMORY | {"process_s", "load_before", "when"},
        group=lambda r: r["method"],
        overhead_s=20.0,
    ),
}


# -- comparing ------------------------------------------------------------------------------------------
def same(stored: str, new: object) -> bool:
    """Whether a figure a worker printed equals the CSV's text of it: numbers as floats (NaN equals NaN), exactly;
    anything else as text (None as the empty cell)."""
    if new is None:
        new = ""
    if isinstance(new, (bool, int, float)):
        try:
            old = float(stored)
        except ValueError:
            return False
        return old == float(new) or (math.isnan(old) and math.isnan(float(new)))
    return stored == str(new)


def differences(grid: Grid, row: dict[str, str], out: dict) -> list[tuple[str, str, object]]:
    """(field, stored, new) of every compared field that differs: each seeded one (missing from the worker's
    output counts as a difference) and every other field both hold that is not ignored."""
    fields = [f for f in row if f in out and f not in grid.ignore]
    fields += [f for f in grid.seeded if f not in fields]
    return [(f, row.get(f, ""), out.get(f, "<missing>")) for f in fields if f not in out or not same(row[f], out[f])]


# -- choosing ---------------------------------------------------------------------------------------------
def recorded_s(grid: Grid, row: dict[str, str]) -> float | None:
    try:
        x = float(row.get(grid.cost) or "nan")
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def candidates(grid: Grid, rows: list[dict[str, str]]) -> list[int]:
    """Indices of the rows that can be rerun: finished when they ran, with a recorded time."""
    return [i for i, r in enumerate(rows) if grid.rerun(r) and recorded_s(grid, r) is not None]


def order(grid: Grid, rows: list[dict[str, str]], budget_s: float, n_random: int, seed: int) -> list[int]:
    """The rows to try, in order: the cheapest row of each group (every code path first), then ``n_random``
    seeded random picks among the rest that fit half the budget (at the first guess of the overhead), then the
    rest cheapest first, taken in turn from each group (groups ordered by their cheapest row)."""
    cand = candidates(grid, rows)
    est = {i: recorded_s(grid, rows[i]) + grid.overhead_s for i in cand}
    groups: dict[str, list[int]] = {}
    for i in sorted(cand, key=lambda i: (est[i], i)):
        groups.setdefault(grid.group(rows[i]), []).append(i)
    first = [g[0] for g in groups.values()]
    pool = sorted(set(cand) - set(first))
    random.Random(seed).shuffle(pool)
    picked, spent = [], 0.0
    for i in pool:
        if len(picked) >= n_random:
            break
        if spent + est[i] <= budget_s / 2:
            picked.append(i)
            spent += est[i]
    turns = [[i for i in g[1:] if i not in picked] for g in groups.values()]
    rest = [g[t] for t in range(max(map(len, turns), default=0)) for g in turns if t < len(g)]
    return first + picked + rest


# -- running ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Rerun:
    index: int
    status: str  # equal, differs, failed, unfinished
    seconds: float
    cpu_s: float
    diffs: list[tuple[str, str, object]] = dataclasses.field(default_factory=list)
    error: str = ""


def run_worker(grid: Grid, row: dict[str, str], root: Path, timeout: float) -> tuple[str, dict | str, float]:
    """Run the script's worker for ``row``: ("ok", its JSON row, CPU s), ("failed", stderr's end, CPU s) or
    ("unfinished", "", CPU s) when stopped after ``timeout`` seconds."""
    cmd = [sys.executable, str(root / "benchmarks" / grid.script), "--worker", *grid.args(row)]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(root), **dict(grid.env)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = p.communicate(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the worker's own process group (start_new_session)
        p.communicate()
        stdout, stderr = None, ""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if stdout is None:
        return "unfinished", "", cpu
    if p.returncode != 0:
        return "failed", (stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1][:300], cpu
    try:
        return "ok", json.loads(stdout.strip().splitlines()[-1]), cpu
    except (IndexError, json.JSONDecodeError):
        return "failed", "the worker printed no JSON row", cpu


def _say(text: str) -> None:
    print(text, flush=True)


def label(grid: Grid, row: dict[str, str]) -> str:
    return ",".join(row.get(k, "") for k in grid.key)


def reproduce(
    grid: Grid,
    rows: list[dict[str, str]],
    root: Path,
    budget_s: float,
    n_random: int = 3,
    seed: int = 0,
    out=None,
) -> list[Rerun]:
    """Rerun rows in ``order`` while they fit the budget; print and return what each gave."""
    out = out or _say
    t0 = time.perf_counter()
    overhead, measured = grid.overhead_s, False
    done: list[Rerun] = []
    for i in order(grid, rows, budget_s, n_random, seed):
        left = budget_s - (time.perf_counter() - t0)
        recorded = recorded_s(grid, rows[i])
        if recorded + overhead > left:
            continue
        t = time.perf_counter()
        status, result, cpu = run_worker(grid, rows[i], root, left)
        secs = time.perf_counter() - t
        r = Rerun(i, status, secs, cpu)
        if status == "ok":
            overhead = max(overhead if measured else 0.0, secs - recorded)
            measured = True
            r.diffs = differences(grid, rows[i], result)
            r.status = "differs" if r.diffs else "equal"
        elif status == "failed":
            r.error = str(result)
        done.append(r)
        out(f"{r.status.upper() if r.status != 'equal' else r.status:<10}  row {i + 2}  {label(grid, rows[i])}  "
            f"({secs:.0f} s, {cpu:.0f} CPU s; recorded {recorded:.1f} s)")  # fmt: skip
        for field, old, new in r.diffs:
            out(f"            {field}: stored {old}, now {new}")
        if r.error:
            out(f"            {r.error}")
    return done


# -- recording ------------------------------------------------------------------------------------------------
def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(name: str, grid: Grid, equal: int, total: int, csv_sha: str, digest: str, root: Path) -> str:
    """Write the reproduced stamp of ``name`` (see the module's text); returns what was done."""
    path = results_dir(root) / name
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if code_digest(grid.script, root) != digest:
        return "stamp left as it was: the code changed while the rows ran"
    with locked_stamps(root) as stamps:
        if file_digest(path) != csv_sha:
            return "stamp left as it was: the file changed while the rows ran"
        old = stamps.get(name)
        if old and old.get("script") == grid.script and old.get("code_digest") == digest and "reproduced" not in old:
            return "stamp left as it was: the file was written by today's code"
        done = {"rows": equal, "of": total, "date": today}
        if old and old.get("code_digest") != digest:
            done["from_digest"] = old.get("code_digest")
            if old.get("commit"):
                done["from_commit"] = old["commit"]
        elif old and "reproduced" in old:  # reproduced again under the same code: keep where it came from
            done.update({k: v for k, v in old["reproduced"].items() if k.startswith("from_")})
        stamps[name] = {
            "script": grid.script,
            "code_digest": digest,
            "date": old["date"] if old and old.get("date") else today,
            "reproduced": done,
        }
    return f"stamped: code {digest}, reproduced {equal} of {total} rows"


def reproduce_file(
    name: str,
    grid: Grid,
    root: Path,
    budget_s: float,
    n_random: int,
    seed: int,
    write: bool = True,
    dry_run: bool = False,
    out=None,
) -> int:
    out = out or _say
    path = results_dir(root) / name
    csv_sha = file_digest(path)
    digest = code_digest(grid.script, root)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    stamp = read_stamps(root).get(name)
    then = f"stamp: code {stamp['code_digest']} of {stamp['date']}" if stamp else "no stamp"
    if stamp and reproduced(stamp):
        then += f", {reproduced(stamp)}"
    out(f"{name}: {len(rows)} rows, {len(candidates(grid, rows))} can be rerun; code now {digest}, {then}")
    if dry_run:
        est, picks = 0.0, []
        for i in order(grid, rows, budget_s, n_random, seed):
            cost = recorded_s(grid, rows[i]) + grid.overhead_s
            if est + cost <= budget_s:
                est += cost
                picks.append(i)
                out(f"would rerun  row {i + 2}  {label(grid, rows[i])}  (about {cost:.0f} s)")
        out(f"{len(picks)} rows, about {est:.0f} s")
        return 0
    runs = reproduce(grid, rows, root, budget_s, n_random, seed, out=out)
    counts = {s: sum(r.status == s for r in runs) for s in ("equal", "differs", "failed", "unfinished")}
    cpu = sum(r.cpu_s for r in runs)
    groups = sorted({grid.group(rows[r.index]) for r in runs if r.status == "equal"})
    out(
        f"{name}: {', '.join(f'{n} {s}' for s, n in counts.items() if n) or 'no row rerun'} "
        f"({cpu:.0f} CPU s); equal rows cover {', '.join(groups) or 'nothing'}"
    )
    rerun = counts["equal"] + counts["differs"] + counts["failed"]
    if not rerun:
        out("stamp left as it was: no row rerun (raise --budget-s)")
        return 2
    if counts["differs"] or counts["failed"]:
        out("stamp left as it was: not every rerun row is equal")
        return 1
    if write:
        out(record(name, grid, counts["equal"], len(rows), csv_sha, digest, root))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help=f"results files (names under benchmarks/results/): {', '.join(GRIDS)}")
    ap.add_argument("--budget-s", type=float, default=300.0, help="wall seconds of reruns per file (default 300)")
    ap.add_argument("--random", type=int, default=3, help="rows drawn at random before the cheapest (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random picks (default 0)")
    ap.add_argument("--no-stamp", action="store_true", help="compare only; never write the stamp")
    ap.add_argument("--dry-run", action="store_true", help="print the rows it would rerun, run nothing")
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    a = ap.parse_args(argv)
    root = a.root.resolve()
    codes = []
    for f in a.files:
        name = Path(f).name
        if name not in GRIDS:
            ap.error(f"{name}: no worker known to rerun its rows (known: {', '.join(GRIDS)})")
        codes.append(reproduce_file(name, GRIDS[name], root, a.budget_s, a.random, a.seed, not a.no_stamp, a.dry_run))
    return 1 if 1 in codes else max(codes)


if __name__ == "__main__":
    sys.exit(main())
