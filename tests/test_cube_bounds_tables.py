"""benchmarks/results/cube_bounds_tables.{md,csv} (Pierquin, Zimmermann and Boussard 2023, Tables 1-3 beside
privsample's values) are not stale: the benchmark's cells, recomputed in memory from today's code, equal the stored
CSV, and the md names the code version it came from and opens with the summary."""

from __future__ import annotations

import csv
import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest

import privsample

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "cube_bounds_tables.py"
RESULTS = ROOT / "benchmarks" / "results"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("cube_bounds_tables_bench", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the script runs
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def fresh(bench):
    return [c.record() for c in bench.build_cells()]


def test_stored_csv_matches_todays_code(bench, fresh):
    with (RESULTS / "cube_bounds_tables.csv").open(newline="", encoding="utf-8") as fh:
        stored = list(csv.DictReader(fh))
    hint = "stale: rerun `python benchmarks/cube_bounds_tables.py` and commit its results"
    assert [(r["table"], r["row"], r["quantity"]) for r in stored] == [
        (r["table"], r["row"], r["quantity"]) for r in fresh
    ], hint
    for s, f in zip(stored, fresh):
        where = f"{s['table']} / {s['row']} / {s['quantity']}"
        for key in bench.FIELDS:
            if key in bench.NUMERIC_FIELDS and s[key] and f[key]:
                assert math.isclose(float(s[key]), float(f[key]), rel_tol=1e-9), f"{where}: {key}; {hint}"
            else:
                assert s[key] == f[key], f"{where}: {key}; {hint}"


def test_every_difference_is_explained(fresh):
    """A value that moves away from the printed one without an explanation, or a package value that stops agreeing
    with the formulas written out in the script, shows up as its own verdict."""
    verdicts = {r["verdict"] for r in fresh}
    assert verdicts <= {
        "matches",
        "input",
        "differs: the paper's error",
        "differs: rounded input",
        "not reproducible",
    }, verdicts
    assert all(r["reason"] for r in fresh if r["verdict"].startswith(("differs", "not")))


def test_known_findings(fresh):
    """The paper's Table 3 thresholds (46, 68, 75 printed; 54, 69, 76 by eq. (4)) and the two text claims."""
    cell = {(r["table"], r["row"], r["quantity"]): r for r in fresh}
    t3 = [cell[("Table 3", f"k = {k}", "p >=")] for k in (1, 100, 1000, 10000)]
    assert [(int(float(r["paper"])), int(float(r["ours"]))) for r in t3] == [(46, 54), (68, 69), (75, 76), (83, 83)]
    assert [r["verdict"] for r in t3][-1] == "matches"
    years = cell[("text", "QP time at m = 1.2e8", "years")]
    assert round(float(years["ours"]), 1) == 45.6 and years["verdict"] == "differs: the paper's error"
    month = cell[("text", "largest p whose QP takes under 1 month", "p <=")]
    assert (float(month["paper"]), float(month["ours"])) == (7, 9)


def test_md_names_its_version_and_opens_with_the_summary():
    md = (RESULTS / "cube_bounds_tables.md").read_text(encoding="utf-8")
    head = md.splitlines()[:5]
    version = next(line for line in head if line.startswith("Code version:"))
    assert f"privsample {privsample.__version__}, commit " in version
    assert re.search(r"commit [0-9a-f]{40}", version)
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[0].startswith("## Summary")
