"""PPSyn-DP's fit time against our AIM's (the target: no more time than AIM).

Runs, one after the other in fresh processes (the `ppsyn_paper.py` worker and protocol: the training part
of fold `seed`, seeded noise, NOT private), PPSyn-DP and AIM on discretised Adult and BR2000 at every
eps <= 0.5 of the grid. An unrecorded AIM run first loads the libraries into the page cache, and the
order alternates (PPSyn-DP first on even seeds, AIM first on odd ones), so neither pays for the other's
start. Every ratio compares runs of the same invocation; the load average before each run is recorded,
because this machine is shared. Results: benchmarks/results/ppsyn_time.md.

    python benchmarks/ppsyn_time.py              # seeds 0-4, what `make bench-full` runs (about 15 minutes)
    python benchmarks/ppsyn_time.py --seeds 0
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from freshness import stamp  # noqa: E402
from ppsyn_paper import RESULTS, run  # noqa: E402

SETTINGS = [(ds, eps) for ds in ("adult", "br2000") for eps in (0.05, 0.1, 0.2, 0.5)]  # every eps <= 0.5 of the grid
VARIANTS = [("ppsyn", "ppsyn", "{}"), ("aim", "aim", "{}")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    rows = []
    run(
        [
            "--dataset",
            "br2000",
            "--mechanism",
            "aim",
            "--epsilon",
            "0.1",
            "--seed",
            "0",
            "--svm-folds",
            "0",
            "--svm-fold",
            "0",
            "--no-svm",
        ],
        single_thread=True,
    )  # warm-up, not recorded
    for ds, eps in SETTINGS:
        for s in seeds:
            for name, mech, opts in VARIANTS if s % 2 == 0 else VARIANTS[::-1]:
                load = os.getloadavg()[0]
                row = run(
                    [
                        "--dataset",
                        ds,
                        "--mechanism",
                        mech,
                        "--epsilon",
                        str(eps),
                        "--seed",
                        str(s),
                        "--svm-folds",
                        "0",
                        "--svm-fold",
                        str(s),
                        "--no-svm",
                        "--options",
                        opts,
                        "--phases",
                    ],
                    single_thread=True,
                )
                row.update(variant=name, load=load)
                rows.append(row)
                print(
                    f"{ds} eps={eps} seed={s} {name}: fit {row['fit_s']:.1f}s, {row['rounds']} rounds, "
                    f"error {row['workload_error']:.4f} (load {load:.2f})",
                    flush=True,
                )
    lines = [
        "# PPSyn-DP's fit time against AIM's (`benchmarks/ppsyn_time.py`)",
        "",
        f"Generated {time.strftime('%Y-%m-%d %H:%M')}; seeds {a.seeds}; each run a fresh single-threaded worker "
        "process (BLAS/XLA threads 1), run one after the other; protocol of "
        "`ppsyn_paper.py` (training part of fold = seed, seeded noise: NOT private). `fit` includes sampling "
        "the synthetic table; `estimate` is the Private-PGM fitting inside it. Load: 1-minute load average "
        "before the run (2 cores).",
        "",
        "| dataset | ε | seed | variant | fit s | estimate s | rounds | model MB | 3-way error | fit / AIM's | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        aim = next(
            x
            for x in rows
            if (x["dataset"], x["epsilon"], x["seed"], x["variant"]) == (r["dataset"], r["epsilon"], r["seed"], "aim")
        )
        lines.append(
            f"| {r['dataset']} | {r['epsilon']:g} | {r['seed']} | {r['variant']} | {r['fit_s']:.1f} | "
            f"{float(r['estimate_s'] or 0):.1f} | {r['rounds']} | {float(r['model_mb'] or 0):.2f} | "
            f"{r['workload_error']:.4f} | {r['fit_s'] / aim['fit_s']:.2f}× | {r['load']:.2f} |"
        )
    ratios = {
        v: [
            r["fit_s"]
            / next(
                x
                for x in rows
                if (x["dataset"], x["epsilon"], x["seed"], x["variant"])
                == (r["dataset"], r["epsilon"], r["seed"], "aim")
            )["fit_s"]
            for r in rows
            if r["variant"] == v
        ]
        for v, _, _ in VARIANTS[:1]
    }
    lines += [
        "",
        "Geometric mean of fit / AIM's fit: "
        + "; ".join(f"{v} {statistics.geometric_mean(x):.2f}×" for v, x in ratios.items())
        + ".",
        "",
        "Per setting (means over the seeds):",
        "",
        "| dataset | ε | PPSyn-DP fit s | AIM fit s | ratio of means | geometric mean of ratios | largest ratio "
        "| PPSyn-DP 3-way error | AIM 3-way error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for ds, eps in SETTINGS:
        mine = [r for r in rows if (r["dataset"], r["epsilon"]) == (ds, eps)]
        p, q = ([r for r in mine if r["variant"] == v] for v in ("ppsyn", "aim"))
        if not p or not q:
            continue
        by_seed = (sorted(p, key=lambda r: r["seed"]), sorted(q, key=lambda r: r["seed"]))
        rat = [a["fit_s"] / b["fit_s"] for a, b in zip(*by_seed)]
        mp, mq = (statistics.mean(r["fit_s"] for r in x) for x in (p, q))
        ep, eq = (statistics.mean(r["workload_error"] for r in x) for x in (p, q))
        lines.append(
            f"| {ds} | {eps:g} | {mp:.2f} | {mq:.2f} | {mp / mq:.2f}× | "
            f"{statistics.geometric_mean(rat):.2f}× | "
            f"{max(rat):.2f}× | {ep:.4f} | {eq:.4f} |"
        )
    names = ["partition paths", "model marginals", "size filter", "selection"]
    lines += [
        "",
        "Where PPSyn-DP's rounds spend their time (seconds; `fit` also holds initialisation, measuring, "
        "building the model and sampling the table):",
        "",
        "| dataset | ε | seed | estimation | " + " | ".join(names) + " | rest of fit |",
        "|---|---|---|---|" + "---|" * (len(names) + 1),
    ]
    for r in rows:
        ph = r.get("phases") or {}
        if r["variant"] != "ppsyn" or not ph:
            continue
        est = float(r["estimate_s"] or 0)
        lines.append(
            f"| {r['dataset']} | {r['epsilon']:g} | {r['seed']} | {est:.1f} | "
            + " | ".join(f"{ph.get(n, 0.0):.1f}" for n in names)
            + f" | {r['fit_s'] - est - sum(ph.values()):.1f} |"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "ppsyn_time.md").write_text("\n".join(lines) + "\n")
    stamp(__file__, RESULTS / "ppsyn_time.md")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
