"""benchmarks/reproduce.py on a temporary repository with a toy grid (a script whose worker takes milliseconds):
rows that rerun equal turn a stale stamp into a reproduced one that check_fresh reads fresh, a row that differs
leaves the stamp alone and names the field, the choice of rows is seeded, cheapest first round the groups and
within the budget; and the real grids call their scripts' workers with options those scripts declare."""

from __future__ import annotations

import ast
import csv
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

TOY = '''"""A toy grid: one seeded figure per (method, seed)."""
import argparse
import json
import time

import toylib

ap = argparse.ArgumentParser()
ap.add_argument("--worker", action="store_true")
ap.add_argument("--method", default="a")
ap.add_argument("--seed", type=int, default=0)
a = ap.parse_args()
t = time.perf_counter()
err = toylib.error(a.method, a.seed)
print(json.dumps({"method": a.method, "seed": a.seed, "err": err, "rounds": a.seed + 1,
                  "secs": time.perf_counter() - t}))
'''

TOYLIB = """SCALE = 1.0


def error(method, seed):
    return (seed + 1) / 3 * (SCALE if method == "b" else 1.0)
"""

RUNNER = """import sys

import reproduce

reproduce.GRIDS["toy.csv"] = reproduce.Grid(
    script="toy.py",
    args=lambda r: ["--method", r["method"], "--seed", r["seed"]],
    key=("method", "seed"),
    cost="secs",
    seeded=("err", "rounds"),
    ignore=frozenset({"secs"}),
    group=lambda r: r["method"],
    overhead_s=0.5,
)
sys.exit(reproduce.main())
"""


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the freshness tools, the toy script (its digest covers ``toylib.py``) and its grid: six
    finished rows and one that timed out."""
    bench = tmp_path / "benchmarks"
    (bench / "results").mkdir(parents=True)
    for name in ("check_fresh.py", "reproduce.py"):
        shutil.copy(BENCH / name, bench / name)
    (bench / "freshness.py").write_text(
        (BENCH / "freshness.py").read_text() + '\nSOURCES["toy.py"] = ("benchmarks/toylib.py",)\n'
    )
    (bench / "toy.py").write_text(TOY)
    (bench / "toylib.py").write_text(TOYLIB)
    (bench / "run_toy.py").write_text(RUNNER)
    rows = []
    for method in ("a", "b"):
        for seed in range(3):
            out = subprocess.run(
                [sys.executable, str(bench / "toy.py"), "--worker", "--method", method, "--seed", str(seed)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append({"status": "ok", **json.loads(out.stdout)})
    rows.append({"method": "b", "seed": 9, "status": "timeout (1 s)", "err": "", "rounds": "", "secs": ""})
    with open(bench / "results" / "toy.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, ["method", "seed", "status", "err", "rounds", "secs"])
        w.writeheader()
        w.writerows(rows)
    fresh = _load("freshness_repro_test", bench / "freshness.py")
    fresh.stamp(bench / "toy.py", bench / "results" / "toy.csv")
    return tmp_path


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(repo / "benchmarks" / "run_toy.py"), "toy.csv", "--root", str(repo), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def check(repo: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(repo / "benchmarks" / "check_fresh.py"), "--root", str(repo), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def lines(res: subprocess.CompletedProcess, start: str) -> int:
    return sum(line.startswith(start) for line in res.stdout.splitlines())


def stamps(repo: Path) -> dict:
    return json.loads((repo / "benchmarks" / "results" / "stamps.json").read_text())


def test_equal_rows_make_the_file_fresh(repo: Path):
    before = stamps(repo)["toy.csv"]
    res = run(repo)  # written by today's code: compared, the stamp stays
    assert res.returncode == 0, res.stdout + res.stderr
    assert lines(res, "equal ") == 6 and "written by today's code" in res.stdout
    assert stamps(repo)["toy.csv"] == before

    lib = repo / "benchmarks" / "toylib.py"
    lib.write_text(TOYLIB + "\nUNUSED = 2\n")  # code that changes no figure
    assert check(repo).returncode == 1
    res = run(repo, "--random", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    assert lines(res, "equal ") == 6 and "DIFFERS" not in res.stdout
    after = stamps(repo)["toy.csv"]
    assert after["code_digest"] != before["code_digest"] and after["date"] == before["date"]
    assert after["reproduced"]["rows"] == 6 and after["reproduced"]["of"] == 7
    assert after["reproduced"]["from_digest"] == before["code_digest"]
    res = check(repo)
    assert res.returncode == 0 and res.stdout == "", res.stdout
    listed = check(repo, "--list")
    assert "fresh      (reproduced 6 of 7 rows on" in listed.stdout
    assert "1 fresh (1 by reproduction)" in listed.stdout

    lib.write_text(TOYLIB + "\nUNUSED = 3\n")  # a later change: stale again, naming the reproduction
    listed = check(repo, "--list")
    assert listed.returncode == 1 and "stale" in listed.stdout and "reproduced 6 of 7 rows" in listed.stdout


def test_a_differing_row_leaves_the_stamp(repo: Path):
    before = stamps(repo)
    (repo / "benchmarks" / "toylib.py").write_text(TOYLIB.replace("SCALE = 1.0", "SCALE = 1.5"))
    res = run(repo)
    assert res.returncode == 1
    assert lines(res, "equal ") == 3 and lines(res, "DIFFERS") == 3
    assert "err: stored 0.3333333333333333, now 0.5" in res.stdout and "rounds:" not in res.stdout
    assert "stamp left as it was" in res.stdout
    assert stamps(repo) == before
    assert check(repo).returncode == 1


def test_a_failing_worker_or_no_budget_leaves_the_stamp(repo: Path):
    before = stamps(repo)
    lib = repo / "benchmarks" / "toylib.py"
    lib.write_text(TOYLIB + "\nUNUSED = 2\n")
    res = run(repo, "--budget-s", "0.1")  # no row fits
    assert res.returncode == 2 and "no row rerun" in res.stdout
    lib.write_text(TOYLIB.replace("return", "raise ValueError('broken')\n    return"))
    res = run(repo)
    assert res.returncode == 1 and "FAILED" in res.stdout and "broken" in res.stdout
    assert stamps(repo) == before


@pytest.fixture
def reproduce():
    path, mods = list(sys.path), dict(sys.modules)
    try:
        spec = importlib.util.spec_from_file_location("reproduce_under_test", BENCH / "reproduce.py")
        mod = sys.modules["reproduce_under_test"] = importlib.util.module_from_spec(spec)  # for its dataclasses
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.path[:] = path
        for name in set(sys.modules) - set(mods):
            del sys.modules[name]


def test_exact_comparison(reproduce):
    same = reproduce.same
    assert same("0.1", 0.1) and same("11", 11) and same("", None) and same("", "") and same("nan", float("nan"))
    assert same("adult", "adult") and same("0", False)
    assert not same("0.30000000000000004", 0.3) and not same("", 0.0) and not same("1.0", "1")


def test_choice_is_seeded_cheapest_first_round_the_groups(reproduce):
    grid = reproduce.Grid(
        script="toy.py", args=lambda r: [], key=("m", "s"), cost="t", seeded=(), ignore=frozenset(),
        group=lambda r: r["m"], overhead_s=1.0,
    )  # fmt: skip
    rows = [{"m": m, "s": str(s), "t": str(t), "status": "ok"} for m, t0 in (("a", 1), ("b", 10)) for s, t in
            enumerate(range(t0, t0 + 5))]  # fmt: skip
    rows.append({"m": "a", "s": "9", "t": "0.1", "status": "error: x"})
    rows.append({"m": "a", "s": "8", "t": "", "status": "ok"})
    order = reproduce.order(grid, rows, budget_s=100, n_random=0, seed=0)
    assert order == [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]  # cheapest of each group in turn; failed or untimed rows never
    picks = reproduce.order(grid, rows, budget_s=30, n_random=2, seed=3)
    assert picks == reproduce.order(grid, rows, budget_s=30, n_random=2, seed=3)
    assert sorted(picks) == list(range(10)) and picks[:2] == [0, 5]  # then the random ones, within half the budget
    assert sum(float(rows[i]["t"]) + 1 for i in picks[2:4]) <= 15
    seeds = {tuple(reproduce.order(grid, rows, 30, 2, s)[2:4]) for s in range(10)}
    assert len(seeds) > 1


def test_real_grids_call_declared_options(reproduce):
    """Every grid's worker command uses options its script declares, and names fields its results file has."""
    for name, grid in reproduce.GRIDS.items():
        tree = ast.parse((BENCH / grid.script).read_text(encoding="utf-8"))
        declared = {
            a.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "add_argument"
            for a in n.args
            if isinstance(a, ast.Constant)
        }
        path = BENCH / "results" / name
        if not path.exists():
            continue
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        header = set(rows[0])
        assert set(grid.key) | {grid.cost} <= header, name
        for row in rows:
            if grid.rerun(row):
                args = grid.args(row)
                assert {a for a in args if a.startswith("--")} <= declared, (name, args)
                assert "--worker" in declared
                break
