"""Private numeric discovery: what the discovered bounds and bins lose on real and synthetic numeric columns.

``privsample.data.numeric_discovery.discover_numeric`` chooses a numeric column's bounds, point masses and bins from
noisy counts of a public grid (unit integers near 0, signed octaves), refines the bounds inside the edge cells and,
where the row count pays for it, places bin edges with a tree of private medians. This script runs it alone, as
private discovery calls it (the column's distinct numbers with their record counts; a null cell and the -inf / inf
cells of the grid, all empty here; 16 bins), on:

* Adult (adult_raw.csv): age, hours-per-week, capital-gain, fnlwgt (integers);
* synthetic columns: lognormal amounts round(exp(N(7, 1.5^2))) (integers), Pareto amounts 100 (1 + Pareto(1.2))
  (floats, heavy tail), zero-inflated floats (40% exactly 0, else exp(N(3, 1))), t(3) x 10 (floats, both signs),
  and a narrow column far from 0, round(N(10^6, 100^2)) (integers);

at n = 1,000 / 10,000 / 100,000 records (Adult: a sample without replacement, with replacement at 100,000) and
table epsilons 0.3 / 1 / 3 (delta 1e-9, the synthesis defaults). The column's rho is the one private discovery gives
the numeric step of one column of a 15-column table (Adult's width) of n rows: ``make_accountant``'s rho,
``plan_discovery``'s share (row count taken as exact), an even split over the columns, ``column_split``, and for an
integer column the identifier check and the codes test taken out first (``discovery_forecast``'s reckoning; checked
against the ledger of ``private_schema`` on Adult). In a full discovery the codes test may also decide that an
integer column is codes (numeric discovery then does not run), and a mostly distinct integer column (fnlwgt) may skip
the test and keep its share. Each seed draws its own sample and its own noise.

Metrics, per run, against the sample's real values: ``clipped``, the share of records outside the discovered bounds
(and ``est.``, discovery's own noisy estimate of it, ``info["clipped_share"]``); ``past``, the share of runs whose
bounds reach beyond the real min or max, and ``excess``, the range beyond them over the real range; ``bins``;
``W1/range``, the Wasserstein-1 distance between the real values and the binned column decoded again (encoded with
the release rule, so clipped to the bounds, then ``decode`` with the densities of these codes: values drawn within
their bins as a synthetic table's would be), over the real range (max - min); ``L1``, the L1 distance of the two
histograms over the real sample's percentile cells (100 cells at most, evaluation only; max 2); ``ms``, the time of
the discovery call; a *blow-up* is a run with W1 above the real range. A run is *lost* when discovery does not
locate the values above the noise (no grid cell, nor window of consecutive cells, passes the core threshold) and
returns the catch-all (no bounds; named as a loss to the user); lost runs are counted (``lost``) and left out of
every other metric's mean and sd, which are over the located runs. Baselines from the same samples, without
privacy: ``draft`` (``draft_schema``: the real min and max, 16 equal-width bins and a bin for every value held by 5%
of the records, what a reviewed schema with public bounds near the real ones gives) and ``quantiles`` (the real min
and max, edges at the exact 1/16 quantiles). Noise is seeded (``SeededNoise``): a measurement, NOT a private release.

Run: nice python benchmarks/numeric_discovery.py [--seeds 50] [--rows 1000,10000,100000] [--out DIR]
(writes numeric_discovery.md and numeric_discovery.csv, the mean and sd of every metric per cell, into
benchmarks/results; about 3 minutes on one core)
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import DATA, RESULTS  # noqa: E402
from benchmarks.freshness import stamp  # noqa: E402
from privsample.data.decoding import decode  # noqa: E402
from privsample.data.discovery_plan import (  # noqa: E402
    code_test_rho,
    column_split,
    distinct_rho,
    plan_discovery,
    round_down,
    row_count_rho,
    split_exact,
)
from privsample.data.draft import draft_schema  # noqa: E402
from privsample.data.encoding import encode  # noqa: E402
from privsample.data.numeric_discovery import discover_numeric  # noqa: E402
from privsample.data.schema import Numeric, Schema  # noqa: E402
from privsample.privacy import Accountant, SeededNoise  # noqa: E402

ROWS = [1_000, 10_000, 100_000]
EPSILONS = [0.3, 1.0, 3.0]
DELTA = 1e-9  # the synthesis default (privsample.api.accounting.DEFAULT_DELTA)
DISCOVERY_DELTA = 0.1 * DELTA  # planned discovery's delta slack (DISCOVERY_DELTA_SHARE of delta)
BINS = 16  # discovery's bins (privsample.api.accounting.DISCOVERY_BINS)
TABLE_COLUMNS = 15  # the width of the table whose discovery plan gives the column its rho (Adult's)
SEEDS = 50
ADULT = ["age", "hours-per-week", "capital-gain", "fnlwgt"]


def synthetic(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if name == "lognormal amounts":
        return np.round(np.exp(rng.normal(7.0, 1.5, n)))
    if name == "Pareto amounts":
        return 100.0 * (1.0 + rng.pareto(1.2, n))
    if name == "zero-inflated":
        return np.where(rng.random(n) < 0.4, 0.0, np.exp(rng.normal(3.0, 1.0, n)))
    if name == "t(3) x 10":
        return 10.0 * rng.standard_t(3, n)
    if name == "narrow 1e6 +- 100":
        return np.round(rng.normal(1e6, 100.0, n))
    raise KeyError(name)


SYNTHETIC = ["lognormal amounts", "Pareto amounts", "zero-inflated", "t(3) x 10", "narrow 1e6 +- 100"]
INTEGER = {**{c: True for c in ADULT}, "lognormal amounts": True, "narrow 1e6 +- 100": True}


def column_rho(eps: float, n: int, integer: bool) -> float:
    """The rho of the numeric step of one column of a TABLE_COLUMNS-column table of n rows (module docstring)."""
    d_disc = DISCOVERY_DELTA
    total = Accountant.from_epsilon_delta(eps, DELTA, delta_slack=d_disc).rho_total  # as make_accountant's
    m = TABLE_COLUMNS
    rho_cols, _ = plan_discovery(total, d_disc, float(n), m, count_rho=row_count_rho(total))
    rho_b = column_split(split_exact(rho_cols, [1.0] * m)[0], float(n))[1]
    if not integer:
        return rho_b
    spent = distinct_rho(rho_b, float(n))  # the identifier check (none where n is below ten of its sd)
    rho_c = code_test_rho(rho_b, round_down(Fraction(d_disc) / m), float(n), spent)
    return round_down(Fraction(rho_b) - Fraction(spent) - Fraction(max(rho_c, 0.0)))


def sample(name: str, n: int, seed: int, adult: pd.DataFrame) -> np.ndarray:
    rng = np.random.default_rng(10_000 + seed)
    if name in ADULT:
        col = adult[name].to_numpy(dtype=float)
        return col[rng.choice(len(col), size=n, replace=n > len(col))]
    return synthetic(name, n, rng)


def wasserstein(a: np.ndarray, b: np.ndarray) -> float:
    """W1 of two samples of the same size: the mean distance of their sorted values."""
    return float(np.mean(np.abs(np.sort(a) - np.sort(b))))


def ref_l1(real: np.ndarray, dec: np.ndarray) -> float:
    edges = np.unique(np.percentile(real, np.arange(1, 100)))
    pr = np.bincount(np.searchsorted(edges, real, side="right"), minlength=len(edges) + 1) / len(real)
    pd_ = np.bincount(np.searchsorted(edges, dec, side="right"), minlength=len(edges) + 1) / len(dec)
    return float(np.abs(pr - pd_).sum())


def binned_loss(x: np.ndarray, col, seed: int) -> dict:
    """Clip and bin the real values with ``col`` (the release rule), decode them again; the losses."""
    schema = Schema([col], provenance="draft-nonprivate")
    codes = encode(pd.DataFrame({col.name: x}), schema, release=True)
    dec = decode(codes, schema, np.random.default_rng(seed))[col.name].to_numpy(dtype=float)
    span = float(x.max() - x.min()) or 1.0
    bins = col.bins if isinstance(col, Numeric) else len(col.categories)
    return {"w1": wasserstein(x, dec) / span, "l1": ref_l1(x, dec), "bins": bins}


def private_run(x: np.ndarray, name: str, rho: float, integer: bool, seed: int) -> dict:
    values, counts = np.unique(x, return_counts=True)
    acc = Accountant(1.0)
    t0 = time.perf_counter()
    col, info = discover_numeric(
        name,
        values,
        acc,
        SeededNoise(seed, quiet=True),
        rho=rho,
        integer=integer,
        nullable=False,
        n_hat=float(len(x)),
        bins=BINS,
        n_null=0,
        weights=counts,
        specials={"-inf": 0, "inf": 0},
    )
    ms = 1000.0 * (time.perf_counter() - t0)
    assert abs(acc.spent - rho) <= 1e-12 * rho, (acc.spent, rho)
    if not isinstance(col, Numeric):  # not located: the catch-all, no bounds (module docstring: lost)
        assert info.get("unlocated") is True
        nan = float("nan")
        return dict(
            lost=1.0, clipped=nan, est=nan, past=nan, excess=nan, w1=nan, l1=nan, bins=nan, binning="lost", ms=ms
        )
    lo, hi = float(x.min()), float(x.max())
    span = hi - lo or 1.0
    out = binned_loss(x, col, seed)
    out.update(
        lost=0.0,
        clipped=float(np.mean((x < col.lower) | (x > col.upper))),
        est=float(info["clipped_share"]),
        past=float(col.lower < lo or col.upper > hi),
        excess=(max(0.0, lo - col.lower) + max(0.0, col.upper - hi)) / span,
        binning=info["binning"],
        ms=ms,
    )
    return out


def quantile_column(x: np.ndarray, name: str, integer: bool, bins: int) -> Numeric:
    lo, hi = float(x.min()), float(x.max())
    e = np.quantile(x, np.arange(1, bins) / bins)
    if integer:
        e = np.floor(e) + 0.5
    inner = sorted({float(v) for v in e if lo < v < hi})
    if hi == lo:
        hi = lo + 1.0
    return Numeric(name, lo, hi, edges=tuple([lo] + inner + [hi]), integer=integer)


def baseline_runs(x: np.ndarray, name: str, integer: bool, seed: int) -> dict[str, dict]:
    draft = draft_schema(pd.DataFrame({name: x}), bins=BINS).columns[0]
    return {
        "draft": binned_loss(x, draft, seed),
        "quantiles": binned_loss(x, quantile_column(x, name, integer, BINS), seed),
    }


SUMMARY_SKIP = ["narrow 1e6 +- 100"]  # left out of the summary's means (its own rows show it)
BLOWUP = 1.0  # W1/range above this: the decoded values lie further from the real ones than the real range


def fmt(values, digits: int = 2, scale: float = 1.0) -> str:
    """mean ± sd (ddof 1) over the seeds (NaN, a lost run, left out; "-" when every run is); three significant
    digits where the values are large."""
    a = np.asarray(values, dtype=float) * scale
    a = a[~np.isnan(a)]
    if not len(a):
        return "-"
    m, sd = a.mean(), (a.std(ddof=1) if len(a) > 1 else 0.0)
    if abs(m) >= 1e4:
        return f"{m:.3g} ± {sd:.3g}"
    return f"{m:.{digits}f} ± {sd:.{digits}f}"


def mean(values, digits: int) -> str:
    """The mean in % over the located runs ("-" when every run is lost)."""
    a = np.asarray(values, dtype=float)
    a = a[~np.isnan(a)]
    return f"{100 * a.mean():.{digits}f}" if len(a) else "-"


METRICS = ["clipped", "est", "past", "excess", "bins", "w1", "l1", "ms"]


def aggregate(runs: pd.DataFrame, bases: pd.DataFrame) -> pd.DataFrame:
    """One row per (column, rows, method, epsilon): mean and sd over the seeds of every metric."""
    both = pd.concat([runs.assign(method="private"), bases.assign(epsilon=np.nan, rho=np.nan)], ignore_index=True)
    keys = ["column", "rows", "method", "epsilon"]
    metrics = [m for m in METRICS if m in both]
    g = both.groupby(keys, dropna=False, sort=False)
    out = g[metrics].agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out.insert(0, "rho", g["rho"].first())
    out.insert(1, "seeds", g.size())
    out["blowups"] = g["w1"].apply(lambda v: int((v > BLOWUP).sum()))
    out["lost"] = g["lost"].apply(lambda v: int(np.nansum(v)))
    return out.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--rows", default=",".join(str(n) for n in ROWS))
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    rows = [int(v) for v in args.rows.split(",")]
    adult = pd.read_csv(DATA / "adult_raw.csv")
    names = ADULT + SYNTHETIC
    records, base = [], []
    t_start = time.perf_counter()
    for name in names:
        integer = INTEGER.get(name, False)
        for n in rows:
            rhos = {eps: column_rho(eps, n, integer) for eps in EPSILONS}
            for s in seeds:
                x = sample(name, n, s, adult)
                for kind, r in baseline_runs(x, name, integer, s).items():
                    base.append({"column": name, "rows": n, "seed": s, "method": kind, **r})
                for eps in EPSILONS:
                    r = private_run(x, name, rhos[eps], integer, s)
                    records.append({"column": name, "rows": n, "epsilon": eps, "rho": rhos[eps], "seed": s, **r})
            print(f"{name} n={n}: {time.perf_counter() - t_start:.0f}s", flush=True)
    runs, bases = pd.DataFrame(records), pd.DataFrame(base)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv = out_dir / "numeric_discovery.csv"
    aggregate(runs, bases).to_csv(csv, index=False, float_format="%.6g")
    md = out_dir / "numeric_discovery.md"
    md.write_text(report(runs, bases, seeds, rows) + "\n")
    stamp(__file__, md, csv)
    print(md.read_text())


READING = [  # written from the tables below
    "**Reading.**",
    "",
    "* **Columns not located at 1,000 rows and epsilon 0.3** (rho about 5e-5: grid noise sd about 100 against 1,000",
    "  records): no blow-up. Where no grid cell passes the core threshold, windows of 2, 4, 8, ... consecutive cells",
    "  are tried; where none passes either, discovery does not guess: the column is lost (the catch-all, named to the",
    "  user). 141 of the 400 runs of the eight columns are lost (t(3) 50 of 50, lognormal 41, zero-inflated 33,",
    "  Pareto 11, fnlwgt 6), and 2 of 400 at epsilon 1 (t(3)); none at epsilon 3, or at 10,000 rows or more. (Taking",
    "  the largest noisy cell instead, as discovery did before, gave 33 blow-ups in these 400 runs: bounds on one",
    "  empty cell such as the octave [2^27, 2^28] for values within +-230.) The located runs of these columns still",
    "  clip much at epsilon 0.3: fnlwgt 32%, lognormal 31%, Pareto 23%, zero-inflated 60% (bounds on its zeros).",
    "* **Narrow column far from 0** (10^6 +- 100): every run keeps the octave [2^19, 2^20) as its bounds (about",
    "  590-900 real ranges beyond the data); the records fall into one or two of the 16 bins (L1 1.93; W1 10-26 real",
    "  ranges; 40-50 blow-ups of 50 in every cell). Only the median tree at 100,000 rows helps at times (L1 1.41 at",
    "  epsilon 3).",
    "* **Clipping** (mean of the eight over their located runs; t(3) is lost in every run at 1,000 rows and epsilon",
    "  0.3, so that cell is a mean of seven): 25 / 15 / 3.2% at 1,000 rows (epsilon 0.3 / 1 / 3), 3.6 / 1.4 / 1.2% at",
    "  10,000, 1.3 / 0.95 / 0.69% at 100,000. capital-gain at 1,000 rows (and 10,000 at epsilon 0.3) becomes a code",
    "  holding only 0: all of its 8.4% non-zero gains are clipped to 0. The noisy estimate `est.` is within about 2",
    "  points at 10,000 rows or more, except capital-gain, whose clipped gains lie beyond the two cells it reads",
    "  (8.1% clipped, 1.2% estimated).",
    "* **Bounds past the data**: age's upper bound is 127, the end of the octave [64, 128), in nearly every run at",
    "  10,000 rows and at 100,000 rows below epsilon 3 (0.50-0.52 of its range beyond the data; W1 10.2-10.5 against",
    "  the draft's 0.6-1.1); hours-per-week's is 127 for a maximum of 99 (0.29). At 100,000 rows and epsilon 3 the",
    "  edge cells moved age's bounds inside the data in 64% of the runs (0.9% clipped on average).",
    "* **Point masses outside -8..8 get no bin**: hours-per-week (47% at 40) has L1 0.73-0.82 with the grid's",
    "  equal-mass bins and 0.31-0.35 where the median tree runs, against 0.22-0.24 for the draft's peak bin.",
    "* **Skewed columns**: the grid's geometric bins beat the draft's equal-width ones by far at 10,000 rows or more",
    "  (W1 x 1000: Pareto 0.10-0.53 against 30-31, lognormal 0.6-2.1 against 22-23, t(3) 0.46-2.1 against 9-14;",
    "  L1 0.06-0.20 against 0.54-1.92) and beat the exact-quantile bins in L1 (lognormal 0.06-0.09 against 0.14 at",
    "  100,000). fnlwgt: 1.3-2.0 against the draft's 2.7, except 100,000 rows at epsilon 3 (5.3).",
    "* **More budget, coarser tails at 100,000 rows**: epsilon 3 does worse than 1 in W1 on fnlwgt (5.34 against",
    "  1.31), t(3) (1.48 / 0.46), lognormal (0.99 / 0.59): the tree pays for all four levels, its 16 cells are the",
    "  16 bins (equal-frequency, wide in the tails, as the quantiles baseline), where with fewer levels the grid's",
    "  mass splits each tree cell further (17.7-23.8 bins).",
    "* **Small tables**: at 1,000 rows the private bins lose to the draft on every Adult column (W1 age 10-19",
    "  against 3.0, hours-per-week 15-20 against 4.1, capital-gain 10.8 against 1.0) and win on the amounts at",
    "  epsilon 1 or more (Pareto 3.1-3.6 against 27, lognormal 4.7-8.4 against 18).",
    "* **Time**: 1-10 ms a discovery call (distinct values with their counts).",
]


def report(runs: pd.DataFrame, bases: pd.DataFrame, seeds: list[int], rows: list[int]) -> str:
    cap = 1000 * BLOWUP
    kept = [c for c in runs.column.unique() if c not in SUMMARY_SKIP]
    summary_runs, summary_bases = runs[runs.column.isin(kept)], bases[bases.column.isin(kept)]
    lines = [
        "# Private numeric discovery on real and synthetic numeric columns",
        "",
        "`python benchmarks/numeric_discovery.py` (its module docstring states the setup); per cell, mean and sd "
        "over the seeds are in `numeric_discovery.csv`. "
        f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} runs a cell, mean ± sd over them); each seed draws its own "
        "sample and its own noise. SEEDED noise: a measurement, not a private release.",
        "",
        "Columns: `rho`, the column's own budget (zCDP) for its numeric step in the discovery of a 15-column "
        "table of that many rows at that table epsilon (delta 1e-9); `clipped`, % of the records outside the "
        "discovered bounds (`est.`: discovery's noisy estimate of it, mean); `past`, % of runs whose bounds reach "
        "beyond the real min or max; `excess`, the range beyond them over the real range (mean); `W1`, "
        "Wasserstein-1 distance between the real values and the binned-and-decoded ones over the real range, "
        f"x 1000; `blow-ups`, runs with W1 above the real range (W1 x 1000 > {cap:g}); `lost`, runs where discovery "
        "located no values above the noise and returned the catch-all (no bounds; the user is warned, naming the "
        "column): left out of every other column's mean and sd, which are over the located runs; `L1`, histogram "
        "distance "
        "over the real sample's percentile cells (max 2); `ms`, the discovery call. `draft` / `quantiles`: the "
        "non-private baselines on the same samples (real min/max bounds; the draft schema's equal-width bins with "
        "peak bins, or edges at the exact 1/16 quantiles).",
        "",
        *READING,
        "",
        "## Summary over the columns",
        "",
        f"Mean over the {len(kept)} columns other than {', '.join(SUMMARY_SKIP)} (a blow-up in nearly every run: "
        f"per-column table) of each cell's mean over its located runs, W1 capped at {cap:g} per run (x 1000); "
        "blow-ups and lost: runs of these columns' (the per-column table has the spreads).",
        "",
        "| rows | epsilon | clipped % | past % | W1 (capped) | blow-ups | lost | L1 | bins | draft W1 | draft L1 "
        "| quantiles W1 | quantiles L1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in rows:
        bn = summary_bases[summary_bases.rows == n].groupby(["method", "column"])[["w1", "l1"]].mean()
        bn = bn.groupby("method").mean()
        for eps in EPSILONS:
            r = summary_runs[(summary_runs.rows == n) & (summary_runs.epsilon == eps)]
            r = r.assign(w1c=r.w1.clip(upper=BLOWUP))
            m = r.groupby("column")[["clipped", "past", "w1c", "l1", "bins"]].mean().mean()
            lines.append(
                f"| {n:,} | {eps:g} | {100 * m.clipped:.2f} | {100 * m.past:.0f} | {1000 * m.w1c:.2f} "
                f"| {int((r.w1 > BLOWUP).sum())} of {len(r)} | {int(r.lost.sum())} of {len(r)} | {m.l1:.3f} "
                f"| {m.bins:.1f} "
                f"| {1000 * bn.loc['draft', 'w1']:.2f} | {bn.loc['draft', 'l1']:.3f} "
                f"| {1000 * bn.loc['quantiles', 'w1']:.2f} | {bn.loc['quantiles', 'l1']:.3f} |"
            )
    lines += [
        "",
        "## Per column",
        "",
        "| column | rows | epsilon | rho | clipped % | est. % | past % | excess | bins | binning | W1 | blow-ups "
        "| lost | L1 | ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in runs.column.unique():
        for n in rows:
            b = bases[(bases.column == name) & (bases.rows == n)]
            for eps in EPSILONS:
                r = runs[(runs.column == name) & (runs.rows == n) & (runs.epsilon == eps)]
                kinds = "/".join(sorted(set(r.binning)))
                lines.append(
                    f"| {name} | {n:,} | {eps:g} | {r.rho.iloc[0]:.3g} | {fmt(r.clipped, 2, 100)} "
                    f"| {mean(r.est, 2)} | {mean(r.past, 0)} | {fmt(r.excess, 3)} "
                    f"| {fmt(r.bins, 1)} | {kinds} | {fmt(r.w1, 2, 1000)} | {int((r.w1 > BLOWUP).sum())} "
                    f"| {int(r.lost.sum())} | {fmt(r.l1, 3)} | {r.ms.mean():.0f} |"
                )
            for kind in ("draft", "quantiles"):
                k = b[b.method == kind]
                lines.append(
                    f"| {name} | {n:,} | {kind} | - | 0 | - | 0 | 0 | {fmt(k.bins, 1)} | - "
                    f"| {fmt(k.w1, 2, 1000)} | {int((k.w1 > BLOWUP).sum())} | - | {fmt(k.l1, 3)} | - |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
