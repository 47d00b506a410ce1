"""benchmarks/claims/bsv.py (Boedihardjo, Strohmer and Vershynin 2021 beside the cube study and the cube solver
benchmark): the page renders from the stored CSVs, opens with the claims table, gives every row an allowed verdict,
and its verdicts are computed from the CSVs (a doctored CSV flips them)."""

from __future__ import annotations

import csv
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "benchmarks" / "claims" / "bsv.py"
RESULTS = ROOT / "benchmarks" / "results"
CSVS = ("cube_study.csv", "cube_solver.csv")
HEADER = "| claim (where in the paper) | paper | ours | verdict |"


@pytest.fixture(scope="module")
def bsv():
    spec = importlib.util.spec_from_file_location("claims_bsv_under_test", MODULE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while it runs
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


def table(lines: list[str]) -> dict[str, tuple[str, str]]:
    """The claims table: where -> (ours, verdict)."""
    start = lines.index(HEADER)
    out = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 4, line
        out[cells[0]] = (cells[2], cells[3])
    return out


def verdict_of(rows: dict, prefix: str) -> str:
    (key,) = [k for k in rows if k.startswith(prefix)]
    return rows[key][1]


def copy_results(tmp_path: Path) -> Path:
    for name in CSVS:
        shutil.copy(RESULTS / name, tmp_path / name)
    return tmp_path


def edit_csv(path: Path, change) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    for r in rows:
        change(r)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def test_page_renders_from_the_stored_csvs_with_a_verdict_per_row(bsv):
    for name in CSVS:
        assert (RESULTS / name).exists(), name
    lines = bsv.page(RESULTS)
    assert lines[0] == bsv.TITLE and "(2021)" in lines[0]
    assert lines[2] == HEADER  # the page opens with the table
    rows = table(lines)
    assert len(rows) >= 12
    for where, (ours, verdict) in rows.items():
        assert re.match(r"\*\*(matches|differs|not reproducible)\*\*", verdict), (where, verdict)
        assert ours, where
    assert "## How each figure was computed" in lines and "## Summary" in lines
    # what the stored runs say today: Theorem 12.2's formula holds row by row, the solvers agree
    assert verdict_of(rows, "Theorem 12.2").startswith("**matches**")
    assert verdict_of(rows, "Algorithm 2 step 5").startswith("**matches**")
    text = "\n".join(lines)
    for word in ("session", "issue", "helper"):
        assert word not in text.lower()


def test_verdicts_flip_with_doctored_csvs(bsv, tmp_path):
    results = copy_results(tmp_path)
    before = table(bsv.page(results))
    assert before == table(bsv.page(RESULTS))

    first = {"done": False}

    def bump_one_epsilon(r):  # one certified epsilon no longer Thm 12.2's
        if not first["done"]:
            r["certified_epsilon"] = str(float(r["certified_epsilon"]) * 1.01)
            first["done"] = True

    edit_csv(results / "cube_study.csv", bump_one_epsilon)
    after = table(bsv.page(results))
    assert verdict_of(after, "Theorem 12.2").startswith("**differs**")
    assert verdict_of(after, "Lemma 3.3").startswith("**differs**")

    def perfect_accuracy(r):  # every error far below 16 delta
        r["error"] = r["density_error"] = "0.001"

    edit_csv(results / "cube_study.csv", perfect_accuracy)
    after = table(bsv.page(results))
    assert "outside them none exceeds" in verdict_of(after, "Theorem 12.4 (accuracy), its conclusion")
    assert verdict_of(before, "Theorem 12.4 (accuracy), its conclusion") != verdict_of(
        after, "Theorem 12.4 (accuracy), its conclusion"
    )

    def disagree_with_quadprog(r):
        if r["solver"] == "quadprog" and r["status"] == "ok":
            r["max_diff_g"] = "0.001"

    def no_shrinkage(r):  # lambda* = 0 while h* still misses the data's marginals
        r["lam"] = "0"

    edit_csv(results / "cube_study.csv", no_shrinkage)
    after = table(bsv.page(results))
    assert verdict_of(before, "Proof of Theorem 12.4, (12.3)").startswith("**matches**")
    assert verdict_of(after, "Proof of Theorem 12.4, (12.3)").startswith("**differs**")

    edit_csv(results / "cube_solver.csv", disagree_with_quadprog)
    assert verdict_of(table(bsv.page(results)), "Algorithm 2 step 5").startswith("**differs**")


def test_missing_csvs_give_not_reproducible_rows(bsv, tmp_path):
    rows = table(bsv.page(tmp_path))
    assert rows
    assert all(v.startswith(("**not reproducible**", "**matches**", "**differs**")) for _, v in rows.values())
    assert verdict_of(rows, "Theorem 12.2").startswith("**not reproducible**")
    assert verdict_of(rows, "Algorithm 2 step 4").startswith("**not reproducible**")
