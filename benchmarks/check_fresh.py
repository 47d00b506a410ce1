"""Check that every stored benchmark result came from today's code (version stamps only; runs no benchmark).

Recomputes each script's code digest (``benchmarks/freshness.py``) and compares it with the stamps in
``benchmarks/results/stamps.json``. Prints one line per stale, unstamped or missing results file and exits 1 if
there is any (0 otherwise); ``--list`` prints every file of ``results/`` with its status (fresh, stale, unstamped,
kept, missing) and, where the stamp names one, the commit its code was matched to.

The digest covers code, not text: a Python file counts by its syntax tree without docstrings, other files by their
bytes. A docstring, a comment or a reformatting cannot change a number a benchmark computes, so it leaves every
result fresh and the check can run on every commit; a change to what runs makes the results above it stale. It
reads no git metadata and no file times (a clean clone gives the same answer) and takes about a second.

A stamp written by ``benchmarks/reproduce.py`` carries ``"reproduced": {"rows": k, "of": n, "date": ...}``: k of the
file's n rows (seeded runs) were run again with the code of its digest and gave the same figures to the last digit,
so the file is fresh although its rows were first run with older code; ``--list`` shows it as ``fresh (reproduced k
of n rows on DATE)``. Like any stamp it turns stale when the code changes again.

    python benchmarks/check_fresh.py            # the check
    python benchmarks/check_fresh.py --list     # the status of every results file
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from freshness import ROOT, status  # noqa: E402

FAILING = ("stale", "unstamped", "missing")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="print every results file with its status")
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository to check (default: this one)")
    a = ap.parse_args(argv)
    rows = status(a.root.resolve())
    width = max((len(name) for name, _, _ in rows), default=0)
    bad = [r for r in rows if r[1] in FAILING]
    for name, state, detail in rows if a.list else bad:
        print(f"{name:<{width}}  {state:<9}  {detail}")
    if a.list:
        counts = {s: sum(r[1] == s for r in rows) for s in ("fresh", "stale", "unstamped", "kept", "missing")}
        by_rerun = sum(r[1] == "fresh" and r[2].startswith("(reproduced") for r in rows)
        line = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        print(line.replace(" fresh", f" fresh ({by_rerun} by reproduction)", 1) if by_rerun else line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
