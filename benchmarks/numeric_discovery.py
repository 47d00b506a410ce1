"""Private numeric discovery: how much a discovered domain loses on real numeric columns.

For each numeric column of adult_raw.csv (a 1,000-row sample and the full table), discover the
column's domain with ``privsample.data.numeric_discovery`` at several per-column budgets, encode the
real column with the release rule (clip to the bounds) and decode it again: the loss of the domain
itself, before any synthesis. Metrics against the real column: Wasserstein-1 distance divided by the
real standard deviation, the L1 distance of the two histograms over 100 reference cells (the real
column's percentiles; evaluation only), and the share of exact zeros. Binning "auto" (median tree
where the noisy record count supports it) against "equal-width"; 5 seeded runs each (seeded noise
for speed: the measurement, not a release).

Run: python benchmarks/numeric_discovery.py  (writes benchmarks/results/numeric_discovery.md)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import DATA, RESULTS  # noqa: E402
from benchmarks.freshness import stamp  # noqa: E402
from privsample.data import numeric_discovery as nd  # noqa: E402
from privsample.data.decoding import decode  # noqa: E402
from privsample.data.encoding import encode  # noqa: E402
from privsample.data.schema import Schema  # noqa: E402
from privsample.privacy import Accountant, SeededNoise  # noqa: E402

COLUMNS = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
RHOS = [3e-4, 3e-3, 3e-2]
SEEDS = range(5)


def wasserstein(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.sort(a), np.sort(b)
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(a, grid[:-1], side="right") / len(a)
    fb = np.searchsorted(b, grid[:-1], side="right") / len(b)
    return float(np.sum(np.abs(fa - fb) * np.diff(grid)))


def ref_l1(real: np.ndarray, dec: np.ndarray) -> float:
    edges = np.unique(np.percentile(real, np.arange(1, 100)))
    pr = np.bincount(np.searchsorted(edges, real, side="right"), minlength=len(edges) + 1) / len(real)
    pd_ = np.bincount(np.searchsorted(edges, dec, side="right"), minlength=len(edges) + 1) / len(dec)
    return float(np.abs(pr - pd_).sum())


def one(x: np.ndarray, name: str, rho: float, binning: str, seed: int, margin: float) -> dict:
    nd.BOUND_MARGIN = margin
    acc = Accountant(1.0, delta_slack=1e-6)
    col, info = nd._discover(
        name,
        x,
        acc,
        SeededNoise(seed, quiet=True),
        rho=rho,
        delta=1e-7,
        integer=True,
        nullable=False,
        n_hat=len(x),
        binning=binning,
    )
    schema = Schema([col], provenance="private")
    codes = encode(pd.DataFrame({name: x}), schema, release=True)
    dec = decode(codes, schema, np.random.default_rng(seed))[name].to_numpy(dtype=float)
    return {
        "w1": wasserstein(x, dec) / x.std(),
        "l1": ref_l1(x, dec),
        "zero": float(np.mean(dec == 0)),
        "bins": col.bins,
        "binning": info["binning"],
        "q": info["clipped_share_design"][0],
    }


VARIANTS = [(1.0, "auto"), (1.0, "equal-width"), (2.0, "auto"), (2.0, "equal-width")]
CHOSEN = (1.0, "auto")
CHOICE = [  # written after reading the tables below
    "**Choice.** Margin 1 (margin 2 clips twice as much and loses everywhere; since the bounds select grid *cells*,",
    "no run blew up at either margin). Binning `auto`: the private median tree when the noisy row count pays for at",
    "least two of its levels, else equal width (the bounds then get the tree's share) -- on 1,000 rows that is equal",
    "width at every budget here. Equal width is 0.005-0.02 better in W1/sd on Adult's full-size columns, but the tree",
    "is about 4x better in L1 on heavy-tailed amounts (0.12 against 0.52) and on columns narrow relative to their",
    "position (0.19 against 1.61), where equal-width bins put nearly every record into one bin. Point bins keep the",
    "share of exact zeros of capital-gain/-loss (0.917/0.953) whenever the upper bound is above 0. Budget: on 1,000",
    "rows a column needs rho of about 0.03 for bounds that clip about 6% at each end (rho 0.003: 19%; rho 0.0003: the",
    "range shrinks to the median, and capital-gain becomes the single value 0).",
    "",
]


def main() -> None:
    df = pd.read_csv(DATA / "adult_raw.csv")
    tables = {"1,000": df.sample(1000, random_state=0), "32,561": df}
    runs = {}
    for tname, t in tables.items():
        for rho in RHOS:
            for c in COLUMNS:
                x = t[c].to_numpy(dtype=float)
                for margin, binning in VARIANTS:
                    runs[tname, rho, c, margin, binning] = [one(x, c, rho, binning, s, margin) for s in SEEDS]
            print(tname, rho, flush=True)
    lines = [
        "# Private numeric discovery on Adult's numeric columns",
        "",
        "Loss of the discovered domain itself (real column -> clip to the private bounds -> bins -> decoded),",
        "before any synthesis, for age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week;",
        "5 seeded runs each (`python benchmarks/numeric_discovery.py`). `W1/sd`: Wasserstein-1 distance over",
        "the real standard deviation (capped at 10 per run before averaging); `L1`: histogram distance over",
        "the real column's 100 percentile cells (max 2); `blow-ups`: runs (of 30) with W1/sd > 1 (a bound",
        "far outside the data). rho: the column's own budget (zCDP). Margin: q n_hat = margin x the bound",
        "selection's rank error 2 (ln m + 2) / epsilon. `auto`: private median tree where n_hat supports it",
        "(else equal width, bounds then get the tree's share); `equal-width`: never a tree.",
        "",
        *CHOICE,
        "| rows | rho | " + " | ".join(f"margin {m:g} {b}: W1/sd, L1, blow-ups" for m, b in VARIANTS) + " |",
        "|---|---|" + "---|" * len(VARIANTS),
    ]
    for tname in tables:
        for rho in RHOS:
            cells = []
            for margin, binning in VARIANTS:
                rs = [r for c in COLUMNS for r in runs[tname, rho, c, margin, binning]]
                w1 = np.mean([min(r["w1"], 10.0) for r in rs])
                cells.append(f"{w1:.3f}, {np.mean([r['l1'] for r in rs]):.3f}, {sum(r['w1'] > 1 for r in rs)}")
            lines.append(f"| {tname} | {rho:g} | " + " | ".join(cells) + " |")
    m, b = CHOSEN
    lines += [
        "",
        f"Per column, the chosen setting (margin {m:g}, {b}); `0s`: share of exact zeros after decoding",
        "(real: capital-gain 0.917, capital-loss 0.953); q: the designed tail share clipped at each end.",
        "",
        "| rows | rho | column | q | binning | W1/sd | L1 | 0s | bins |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tname in tables:
        for rho in RHOS:
            for c in COLUMNS:
                rs = runs[tname, rho, c, m, b]
                kinds = "/".join(sorted({r["binning"] for r in rs}))
                lines.append(
                    f"| {tname} | {rho:g} | {c} | {rs[0]['q']:.3f} | {kinds} | "
                    f"{np.mean([min(r['w1'], 10.0) for r in rs]):.3f} | "
                    f"{np.mean([r['l1'] for r in rs]):.3f} | "
                    f"{np.mean([r['zero'] for r in rs]):.3f} | {np.mean([r['bins'] for r in rs]):.1f} |"
                )
    rng = np.random.default_rng(0)
    others = {
        "capital-gain": df["capital-gain"].to_numpy(dtype=float),
        "fnlwgt": df["fnlwgt"].to_numpy(dtype=float),
        "lognormal amounts": np.round(np.exp(rng.normal(7.0, 1.5, len(df)))),
        "narrow (1e6 +- 100)": np.round(rng.normal(1e6, 100.0, len(df))),
    }
    lines += [
        "",
        "Skewed and narrow columns (margin 1): `auto` against `equal-width`, W1/sd and L1 as above; the",
        "last two are synthetic (32,561 draws of exp(N(7, 1.5^2)) and of N(10^6, 100^2), rounded).",
        "",
        "| column | rows | rho | auto W1/sd | auto L1 | equal-width W1/sd | equal-width L1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, x in others.items():
        for n in (1000, len(df)):
            xx = x[np.random.default_rng(1).permutation(len(x))[:n]] if n < len(x) else x
            for rho in RHOS[1:]:
                cells = []
                for b in ("auto", "equal-width"):
                    rs = [one(xx, name, rho, b, s, 1.0) for s in SEEDS]
                    cells += [
                        f"{np.mean([min(r['w1'], 10.0) for r in rs]):.3f}",
                        f"{np.mean([r['l1'] for r in rs]):.3f}",
                    ]
                lines.append(f"| {name} | {n:,} | {rho:g} | " + " | ".join(cells) + " |")
    out = RESULTS / "numeric_discovery.md"
    out.write_text("\n".join(lines) + "\n")
    stamp(__file__, out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
