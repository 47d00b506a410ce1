"""The papers' claims beside the stored runs: one table per paper, a verdict for each claim.

Each module of ``benchmarks/claims/`` covers one paper: it transcribes the paper's numbers and claims (tables,
figures' readings, statements in the text) and reads what the stored runs of its benchmark measured
(``benchmarks/results/*.csv``), and returns a markdown page that opens with the table

    | claim (where in the paper) | paper | ours | verdict |

with a verdict per row: **matches**, **differs** (and why, with the figures), or **not reproducible** (and why).
This script writes each page to ``benchmarks/results/<name>.claims.md`` and stamps it; the benchmarks' own reports
link to it. It reads stored CSVs only (seconds); the pages go stale when those CSVs or this code change.

The claims of the PPSyn paper (Zhang, Deng and Yin 2023) open ``ppsyn_paper.md`` and those of Pierquin, Zimmermann
and Boussard (2023) are ``cube_bounds_tables.md``; the pages written here cover the other three papers:

* Husain, Cranko and Nock, MBDE (``mbde_paper.csv``, ``mbde_paper.q0.csv``): ``mbde_paper.claims.md``;
* Raskhodnikova, Sivakumar, Smith and Swanberg (2021), *Differentially private sampling from distributions*
  (``samplers_accuracy.csv``): ``samplers_accuracy.claims.md``;
* Boedihardjo, Strohmer and Vershynin (2021), *Private sampling: a noiseless approach for generating
  differentially private synthetic data* (``cube_study.csv``, ``cube_solver.csv``): ``cube_study.claims.md``.

    python benchmarks/paper_claims.py            # every page
    python benchmarks/paper_claims.py mbde       # one (the module's name)
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.freshness import stamp  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
#: module of benchmarks/claims -> the page it writes under results/
PAGES = {
    "mbde": "mbde_paper.claims.md",
    "samplers": "samplers_accuracy.claims.md",
    "bsv": "cube_study.claims.md",
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("papers", nargs="*", help=f"the papers to write (default: all of {', '.join(PAGES)})")
    a = ap.parse_args(argv)
    unknown = sorted(set(a.papers) - set(PAGES))
    if unknown:
        ap.error(f"unknown paper(s): {', '.join(unknown)} (known: {', '.join(PAGES)})")
    for name in a.papers or PAGES:
        module = importlib.import_module(f"benchmarks.claims.{name}")
        lines = module.page(RESULTS)
        path = RESULTS / PAGES[name]
        path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
        stamp(__file__, path)
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
