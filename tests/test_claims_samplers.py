"""benchmarks/claims/samplers.py (Raskhodnikova, Sivakumar, Smith and Swanberg 2021 beside samplers_accuracy.csv):
the page renders from the stored CSV and opens with the claims table, every row carries one of the three
verdicts, and the verdicts are computed from the CSV (a doctored copy flips them)."""

from __future__ import annotations

import csv
import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
HEADER = "| claim (where in the paper) | paper | ours | verdict |"


@pytest.fixture(scope="module")
def claims():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("benchmarks.claims.samplers")


def table(lines: list[str]) -> dict[str, list[str]]:
    """The claims table: claim cell -> [paper, ours, verdict]."""
    start = lines.index(HEADER)
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 4, line
        rows[cells[0]] = cells[1:]
    return rows


def verdict_of(cell: str) -> str:
    m = re.match(r"\*\*(matches|differs|not reproducible)\*\*(: .+)?$", cell)
    assert m, f"not a verdict: {cell!r}"
    assert m.group(1) == "matches" or m.group(2), f"a {m.group(1)} verdict must say why: {cell!r}"
    return m.group(1)


def doctored(tmp_path: Path, change) -> Path:
    """A copy of the stored CSV with change(row) applied to every row (it edits in place)."""
    src = RESULTS / "samplers_accuracy.csv"
    with src.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    for r in rows:
        change(r)
    with (tmp_path / src.name).open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return tmp_path


def test_page_renders_and_opens_with_the_table(claims):
    lines = claims.page(RESULTS)
    assert lines[0] == claims.TITLE
    assert lines[0].startswith("# Raskhodnikova, Sivakumar, Smith and Swanberg (2021), Differentially private")
    assert HEADER in lines[:6], "the page must open with the claims table"
    rows = table(lines)
    assert len(rows) == len(claims.claim_rows(claims.read(RESULTS)))
    assert "## How each figure was computed" in lines and "## Summary" in lines
    for claim, (paper, ours, verdict) in rows.items():
        assert re.search(r"\((Thm|Claim|§|Abstract)", claim), f"no place in the paper: {claim}"
        assert paper and ours
        verdict_of(verdict)


def test_every_verdict_kind_is_allowed_and_lower_bounds_are_not_measured(claims):
    rows = table(claims.page(RESULTS))
    kinds = {claim: verdict_of(v) for claim, (_, _, v) in rows.items()}
    assert set(kinds.values()) <= set(claims.VERDICTS)
    for c in (claims.THM41, claims.THM15, claims.THM19, claims.THM17):
        assert kinds[c.claim] == "not reproducible"


def _verdicts(claims, results: Path) -> dict[str, str]:
    return {c.claim: claims.verdict_kind(v) for c, _, v in claims.claim_rows(claims.read(results))}


def _tv_over_bound(r):  # one k-ary point above 2k/(εn)
    if r["section"] == "kary" and r["profile"] == "point mass" and float(r["k_or_d"]) == 10 and float(r["n"]) == 400:
        r["tv"] = str(3 * float(r["bound"]))


def _bernoulli_above_hoeffding(r):
    if r["section"] == "bernoulli" and float(r["n"]) == 161:
        r["tv"] = str(2 * float(r["bound"]))


def _alg4_below_naive(r):  # Alg. 4's bias sums on zeros shrunk far below the noisy-means sampler's
    if r["section"] == "alg4" and r["profile"] == "zeros" and r["sampler"] == "Alg. 4":
        r["proxy"] = str(float(r["proxy"]) / 100)


def _learner_cheap(r):  # the k-ary learner suddenly as good as the sampler's bias
    if r["section"] == "kary":
        r["learn_err"] = str(float(r["tv"]) / 100)


@pytest.mark.parametrize(
    "change, claim, before, after",
    [
        (_tv_over_bound, "THM14_BOUND", "matches", "differs"),
        (_bernoulli_above_hoeffding, "CLAIM62_BOUND", "matches", "differs"),
        (_alg4_below_naive, "NAIVE", "differs", "matches"),
        (_learner_cheap, "KARY_LEARN", "matches", "differs"),
    ],
)
def test_a_doctored_csv_flips_the_verdict(claims, tmp_path, change, claim, before, after):
    name = getattr(claims, claim).claim
    stored = _verdicts(claims, RESULTS)
    flipped = _verdicts(claims, doctored(tmp_path, change))
    assert flipped[name] == after
    if stored[name] != before:
        pytest.skip(f"the stored runs give {stored[name]!r} for {name!r}, not {before!r}: nothing to flip")
