"""The MBDE paper's claims page (``benchmarks/claims/mbde.py``): it renders from the stored CSVs, opens with the
claims table, gives every row a verdict from the allowed set, and computes the verdicts from the rows (a doctored
CSV turns them)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from benchmarks.claims import mbde

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
HEADER = "| claim (where in the paper) | paper | ours | verdict |"


def table(lines: list[str]) -> dict[str, tuple[str, str, str]]:
    """Claim cell -> (paper, ours, verdict) of the page's first table."""
    start = lines.index(HEADER)
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == 4, line
        rows[cells[0]] = tuple(cells[1:])
    return rows


def verdict(rows: dict, claim: mbde.Claim) -> str:
    v = rows[claim.cell][2]
    return next(x for x in mbde.VERDICTS if v.startswith(f"**{x}**"))


def doctored(tmp_path: Path, factor: float) -> Path:
    """A copy of the stored results with MBDE's NLLs (q0 = N(0, I) rows) multiplied by ``factor``."""
    shutil.copy(RESULTS / "mbde_paper.q0.csv", tmp_path / "mbde_paper.q0.csv")
    with open(RESULTS / "mbde_paper.csv", newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    for r in rows:
        if r["method"] == "mbde":
            r["nll"] = repr(float(r["nll"]) * factor)
    with open(tmp_path / "mbde_paper.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return tmp_path


def test_page_renders_from_the_stored_csvs():
    lines = mbde.page(RESULTS)
    assert lines[0].startswith("# Husain, Cranko and Nock (2018), ")
    assert lines[0].endswith(": the paper's claims beside ours")
    assert [x for x in lines[1:] if x.strip()][0] == HEADER  # the page opens with the table
    rows = table(lines)
    assert len(rows) == len(mbde.ROWS)
    for claim, (paper, ours, v) in rows.items():
        assert paper.startswith("“") and ours, claim
        assert any(v.startswith(f"**{x}**") for x in mbde.VERDICTS), (claim, v)
        assert "nan" not in ours and "nan" not in v, (claim, ours, v)
    assert "## How each figure was computed" in lines and "## Verdict" in lines


def test_verdicts_follow_the_rows(tmp_path):
    stored = table(mbde.page(RESULTS))
    better = table(mbde.page(doctored(tmp_path, 0.5)))  # MBDE's NLLs halved: it beats DPB everywhere
    assert verdict(better, mbde.BEATS_MIX) == "matches"
    assert verdict(better, mbde.BEATS_R1) == "matches"
    assert verdict(better, mbde.RING) == "matches"
    worse = table(mbde.page(doctored(tmp_path, 2.0)))  # doubled: DPB wins on the ring
    assert verdict(worse, mbde.RING) == "differs"
    assert verdict(worse, mbde.RANDOM_2D) == "differs"
    assert stored[mbde.RING.cell][1] != worse[mbde.RING.cell][1]  # "ours" is computed too


def test_missing_csvs_give_not_reproducible(tmp_path):
    rows = table(mbde.page(tmp_path))
    assert {verdict(rows, c) for c in (mbde.RING, mbde.BEATS_MIX, mbde.STD100)} == {"not reproducible"}
