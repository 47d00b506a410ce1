"""The category threshold of private discovery: the exact discrete Gaussian tail against the sub-Gaussian bound.

For each table size n, epsilon and number of columns m (delta = 1e-9, the synth defaults: discovery
planned from the noisy row count, delta slack 10% of delta), run ``private_schema`` as ``synthesize``
does on a table of m categorical columns (seeded noise: a measurement, not a release) and read from its
ledger the category step's sigma, delta_col and tau (discovery uses the exact tail). Then:

* tau sub-Gaussian: 1 + sigma sqrt(2 ln(1/delta_col)), the bound discovery used before the exact tail;
* tau exact: ``stability_threshold(sigma, delta_col)``, the smallest threshold whose exact release
  probability for a count-1 value (discrete Gaussian tail, summed) is <= delta_col (checked equal to the
  ledger's tau);
* delta used: ``stability_delta(sigma, tau)`` at the sub-Gaussian tau, what that tau really cost (it was
  charged delta_col);
* records: what a category needs to pass with probability about 0.9, tau + 1.2816 sigma (the planner's
  normal approximation, ``min_category_records``), rounded up, with each tau.

Same sigma and delta_col in both columns: the plan is run once, with the exact threshold.

Run: python benchmarks/category_threshold.py  (writes the table into benchmarks/results/category_threshold.md)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS  # noqa: E402
from benchmarks.freshness import stamp  # noqa: E402
from privsample.data.discovery import private_schema  # noqa: E402
from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_BINS, DISCOVERY_MAX_CATEGORIES, make_accountant  # noqa: E402
from privsample.privacy import SeededNoise  # noqa: E402
from privsample.privacy.sparse_histogram import stability_delta, stability_threshold  # noqa: E402

ROWS = [1_000, 10_000, 100_000]
EPSILONS = [0.3, 1.0, 3.0]
COLUMNS = [15, 21]
Z90 = NormalDist().inv_cdf(0.9)
BEGIN, END = "<!-- table: begin -->", "<!-- table: end -->"


def table(n: int, m: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    p = 0.5 ** np.arange(1, 9)
    p /= p.sum()
    return pd.DataFrame({f"c{j}": rng.choice([f"v{i}" for i in range(8)], size=n, p=p) for j in range(m)})


def row(n: int, eps: float, m: int) -> dict:
    df = table(n, m)
    acc, d_disc = make_accountant(eps, DEFAULT_DELTA, None, None)
    private_schema(
        df,
        acc,
        SeededNoise(0, quiet=True),
        rho=acc.rho_total,
        delta=d_disc,
        share=None,
        bins=DISCOVERY_BINS,
        max_categories=DISCOVERY_MAX_CATEGORIES,
    )
    plan = next(e for e in acc.ledger if e.label == "schema: plan")
    cat = next(e for e in acc.ledger if e.label.endswith("category counts"))
    sigma, delta_col, used = cat.noise_scale, cat.delta, cat.details["threshold"]
    exact = stability_threshold(sigma, delta_col)
    assert math.isclose(used, exact), (used, exact)  # discovery's threshold is the exact one
    tau = 1.0 + sigma * math.sqrt(2.0 * math.log(1.0 / delta_col))  # the sub-Gaussian bound
    before = math.ceil(tau + Z90 * sigma)
    after = math.ceil(exact + Z90 * sigma)
    return {
        "n": n,
        "eps": eps,
        "m": m,
        "share": plan.details["share"],
        "sigma": sigma,
        "delta_col": delta_col,
        "tau": tau,
        "tau_exact": exact,
        "delta_used": stability_delta(sigma, tau),
        "before": before,
        "after": after,
    }


def markdown(rows: list[dict]) -> str:
    out = [
        "| rows | epsilon | columns | share | sigma | delta_col | tau sub-Gaussian | tau exact | delta the "
        "sub-Gaussian tau uses | records sub-Gaussian | records exact | change |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['n']:,} | {r['eps']:g} | {r['m']} | {r['share']:.3f} | {r['sigma']:.2f} | {r['delta_col']:.3g} "
            f"| {r['tau']:.1f} | {r['tau_exact']:.0f} | {r['delta_used']:.2g} | {r['before']:,} | {r['after']:,} "
            f"| {100 * (r['after'] - r['before']) / r['before']:+.1f}% |"
        )
    return "\n".join(out)


def main() -> None:
    rows = [row(n, eps, m) for m in COLUMNS for n in ROWS for eps in EPSILONS]
    text = markdown(rows)
    print(text)
    path = RESULTS / "category_threshold.md"
    page = path.read_text(encoding="utf-8")
    head, rest = page.split(BEGIN, 1)
    path.write_text(head + BEGIN + "\n" + text + "\n" + END + rest.split(END, 1)[1], encoding="utf-8")
    stamp(__file__, path)


if __name__ == "__main__":
    main()
