"""Benchmark: time and peak memory of the empirical privacy check (``evaluate --holdout``) on mixed tables.

Tables of n records each (REAL, HOLDOUT, synthetic) drawn from raw UCI Adult (``../shared/data/adult_raw.csv``,
6 numeric and 9 categorical columns), with replacement and fnlwgt moved by a random integer in [-500, 500] so
that almost every record is distinct (identical records are merged before the distances, which would flatter the
timing). One fresh interpreter per size; reported: seconds of ``privacy_check`` alone (both checks: the
synthetic table and the baseline, 3 passes over n x n distances), the process's peak RSS, and the results
(independent draws: share and AUC near 0.5; baseline near 1).

    python benchmarks/privacy_check.py                 # n = 10,000 and 50,000
    python benchmarks/privacy_check.py --sizes 10000
Results: benchmarks/results/privacy_check.{csv,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from common import DATA, RESULTS, peak_rss_mb, run_worker, write_csv
from freshness import stamp


def worker(n: int) -> dict:
    import numpy as np
    import pandas as pd

    from privsample.evaluation.privacy_check import coding, privacy_check
    from privsample.evaluation.tables import real_domain

    raw = pd.read_csv(DATA / "adult_raw.csv", skipinitialspace=True)
    rng = np.random.default_rng(0)

    def draw() -> pd.DataFrame:
        df = raw.iloc[rng.integers(0, len(raw), n)].reset_index(drop=True)
        df["fnlwgt"] = df["fnlwgt"] + rng.integers(-500, 501, n)
        return df

    real, holdout, synthetic = draw(), draw(), draw()
    code = coding(real_domain(real))
    t0 = time.perf_counter()
    pc = privacy_check(real, synthetic, holdout, code)
    sec = time.perf_counter() - t0
    s, b = pc.synthetic, pc.baseline
    return {
        "n": n,
        "seconds": round(sec, 1),
        "peak_rss_mb": round(peak_rss_mb()),
        "closer_to_real": round(s.share, 4),
        "auc": round(s.auc, 4),
        "auc_ci": f"{s.auc_low:.3f}-{s.auc_high:.3f}",
        "baseline_closer": round(b.share, 4),
        "baseline_auc": round(b.auc, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sizes", default="10000,50000")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.n)))
        return
    rows = []
    for n in (int(x) for x in a.sizes.split(",")):
        r = run_worker(__file__, ["--n", str(n)])
        print(r, file=sys.stderr)
        rows.append(r)
    write_csv(RESULTS / "privacy_check.csv", rows)
    stamp(__file__, RESULTS / "privacy_check.csv")


if __name__ == "__main__":
    main()
