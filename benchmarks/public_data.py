"""Benchmark: AIM with and without a biased public table (joint selection of public and private marginals).

Discretised Adult (../shared/data/adult.csv) is split once, independently of the runs: the public table is a
sample of ``PUBLIC_ROWS`` records drawn with weight ``BIAS`` for one group (``--bias sex``: sex code 0, about a
third of Adult; ``--bias age``: age codes below 30) and 1 for the others, so it over-represents that group; the
private table is the rest. Variants, each in a fresh subprocess:
* ``aim``: AIM on the private table (published settings: 2-way workload, max_model_size 80, T = 16 d);
* ``aim+public``: the same with the public table by joint selection (``AIM.fit(..., public=...)``);
* ``aim+pretrain``: the public table as a prior (``AIM(public_prior=True)``): its one-ways and a Chow-Liu tree of
  two-ways measured before the private rounds;
* ``public-only``: the public table itself taken as the synthetic table (no privacy cost, no fit): how far the
  biased sample is from the private one.
Errors: mean L1 distance between normalised marginals of the private table and the synthetic one, over all 2-way
and all 3-way marginals. Seeded noise for reproducibility: these runs are NOT private.

    python benchmarks/public_data.py                          # eps 0.1, 0.3, 1; seeds 0-2; bias sex
    python benchmarks/public_data.py --epsilons 1 --seeds 0   # one epsilon, one seed
Results: benchmarks/results/public_data_<bias>.csv (each run adds or replaces its rows) and public_data.md /
public_data.png, written from the CSVs after every grid (``--report``: only rewrite them).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package, not an installed copy
from common import DATA, RESULTS, run_worker, worker_parser, write_csv
from freshness import stamp

PUBLIC_ROWS = 2500
BIAS = 4.0
SPLIT_SEED = 12345


def split(bias: str):
    """(private engine, public codes, domain) of the biased split (fixed seed: the same in every run)."""
    import numpy as np
    import pandas as pd

    from privsample.marginals import NumpyEngine
    from privsample.synth import pgm

    dom = json.loads((DATA / "adult-domain.json").read_text())
    df = pd.read_csv(DATA / "adult.csv")
    domain = pgm.Domain(list(dom), [int(v) for v in dom.values()])
    group = (df["sex"] == 0).to_numpy() if bias == "sex" else (df["age"] < 30 - 17).to_numpy()
    w = np.where(group, BIAS, 1.0)
    rng = np.random.default_rng(SPLIT_SEED)
    pub_idx = rng.choice(len(df), size=PUBLIC_ROWS, replace=False, p=w / w.sum())
    is_pub = np.zeros(len(df), dtype=bool)
    is_pub[pub_idx] = True
    codes = {a: df[a].to_numpy().astype("int64") for a in dom}
    private = NumpyEngine({a: c[~is_pub] for a, c in codes.items()}, domain)
    public = {a: c[is_pub] for a, c in codes.items()}
    return private, public, domain, float(group[~is_pub].mean()), float(group[is_pub].mean())


def _aim(use: str | None):
    from privsample.synth.aim import AIM

    return AIM(public_prior=use == "pretrain")


# A variant is a method and how it takes the public table: None (not at all), "public" (joint selection, the
# method's ``fit(..., public=...)``) or "pretrain" (a public prior before the private rounds). Adding a variant
# is one line here (and a maker in METHODS for a new method, whose fit takes ``public=``).
def _mst(use: str | None):
    from privsample.synth.mst import MST

    return MST()


def _ppsyn(use: str | None):
    from privsample.synth.ppsyn import PPSyn

    return PPSyn()


METHODS = {"aim": _aim, "mst": _mst, "ppsyn": _ppsyn}
VARIANTS = {
    "aim": ("aim", None),
    "aim+public": ("aim", "public"),
    "aim+pretrain": ("aim", "pretrain"),
    "mst": ("mst", None),
    "mst+public": ("mst", "public"),
    "ppsyn": ("ppsyn", None),
    "ppsyn+public": ("ppsyn", "public"),
}


def worker(epsilon: float, seed: int, variant: str, bias: str) -> dict:
    import numpy as np

    from privsample.evaluation.workload import all_cliques, workload_error
    from privsample.marginals import NumpyEngine
    from privsample.privacy import Accountant, SeededNoise
    from privsample.synth.public import public_data

    eng, pub_codes, domain, share_priv, share_pub = split(bias)
    attrs = list(domain.attributes)
    row = {"bias": bias, "variant": variant, "epsilon": epsilon, "seed": seed}
    if variant == "public-only":
        syn, info, rho = NumpyEngine(pub_codes, domain), {"rounds": [], "public_rounds": ""}, 0.0
    else:
        acc = Accountant.from_epsilon_delta(epsilon, 1e-9)
        method, use = VARIANTS[variant]
        pub = public_data(pub_codes, domain, f"adult-public-{bias}") if use else None
        model = METHODS[method](use).fit(eng, acc, SeededNoise(seed, quiet=True), public=pub)
        syn, info, rho = NumpyEngine(model.sample(rng=np.random.default_rng(seed)), domain), model.info, acc.spent
    row.update(
        {
            "err2": workload_error(eng, syn, all_cliques(attrs, 2)),
            "err3": workload_error(eng, syn, all_cliques(attrs, 3)),
            # MST: its tree's draws (d - 1) and the edges taken from the public table
            "rounds": len(info["rounds"]) if "rounds" in info else len(attrs) - 1,
            "public_rounds": info.get("public_rounds", len(info.get("public_edges", []))),
            "rho_spent": rho,
            "cpu_s": round(time.process_time(), 1),  # this process's CPU time: less sensitive to a shared machine
            "group_share_private": round(share_priv, 4),
            "group_share_public": round(share_pub, 4),
        }
    )
    return row


KEY = ("bias", "variant", "epsilon", "seed")
NUMERIC = ("epsilon", "err2", "err3", "rho_spent", "group_share_private", "group_share_public", "process_s", "cpu_s")


def load_rows(bias: str) -> list[dict]:
    """The rows of results/public_data_<bias>.csv (numbers parsed; empty if there is none)."""
    import csv

    path = RESULTS / f"public_data_{bias}.csv"
    if not path.exists():
        return []
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        for k in NUMERIC:
            r[k] = float(r[k]) if r.get(k) not in (None, "") else float("nan")  # cpu_s: absent in older rows
        r["seed"], r["rounds"] = int(r["seed"]), int(r["rounds"])
    return rows


def save_row(row: dict) -> None:
    """Add ``row`` to results/public_data_<bias>.csv, replacing a row of the same (variant, epsilon, seed)."""
    rows = [r for r in load_rows(row["bias"]) if tuple(r[k] for k in KEY) != tuple(row[k] for k in KEY)]
    write_csv(RESULTS / f"public_data_{row['bias']}.csv", [*rows, row])
    stamp(__file__, RESULTS / f"public_data_{row['bias']}.csv")  # the code of the last run added


def main() -> None:
    ap = worker_parser(default_epsilons="0.1,0.3,1")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"some of {', '.join(VARIANTS)}")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--bias", default="sex", choices=list(SPLIT_TEXT))
    ap.add_argument("--report", action="store_true", help="only rewrite public_data.md/.png from the CSVs")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.epsilon, args.seed, args.variant, args.bias)))
        return
    if not args.report:
        common = ["--bias", args.bias]
        r = run_worker(__file__, ["--variant", "public-only", *common])
        save_row(r)
        print(f"public-only: 2-way {r['err2']:.4f} 3-way {r['err3']:.4f}", flush=True)
        for eps in [float(e) for e in args.epsilons.split(",")]:
            for seed in [int(s) for s in args.seeds.split(",")]:
                for variant in args.variants.split(","):
                    args_ = ["--epsilon", str(eps), "--seed", str(seed), "--variant", variant, *common]
                    r = run_worker(__file__, args_)
                    save_row(r)  # after every run: an interrupted grid keeps what it measured
                    print(
                        f"eps={eps:g} seed={seed} {variant:10s} 2-way {r['err2']:.4f} 3-way {r['err3']:.4f} "
                        f"rounds {r['rounds']} (public {r['public_rounds']}) {r['process_s']:.0f}s",
                        flush=True,
                    )
    report()


GRID_EPS, GRID_SEEDS = (0.1, 0.3, 1.0), (0, 1, 2)
SPLIT_TEXT = {"sex": "sex code 0", "age": "age codes below 30"}
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _errs(rows: list[dict], eps: float, variant: str, key: str = "err2") -> list[float]:
    return [r[key] for r in sorted(rows, key=lambda r: r["seed"]) if r["epsilon"] == eps and r["variant"] == variant]


def verdict(base: list[float], other: list[float], names: tuple[str, str] = ("aim", "aim+public")) -> str:
    """``names[1]`` against ``names[0]`` at one epsilon, by the range of the seeds (lower error is better)."""
    b, o = names
    if not base or not other:
        return "not compared (a variant was not run)"
    m_b, m_o = sum(base) / len(base), sum(other) / len(other)
    head = f"{o} {m_o:.4f} against {b} {m_b:.4f} ({m_o / m_b - 1:+.0%})"
    seeds = f"{len(other)} seed(s) against {len(base)}"
    if max(len(base), len(other)) < 2:
        return f"{head}; {seeds}: no spread to judge by"
    if max(other) < min(base):
        word = f"lower beyond the seeds' spread (every {o} seed below every {b} seed)"
    elif min(other) > max(base):
        word = f"higher beyond the seeds' spread (every {o} seed above every {b} seed)"
    else:
        word = "within the seeds' spread (the ranges overlap)"
    if min(len(base), len(other)) < 2:
        seeds += ": the spread of one side only"
    return f"{head}, {word}; {seeds}"


def report() -> None:
    """Write results/public_data.md and public_data.png from the CSVs of every split measured."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = {b: rows for b in SPLIT_TEXT if (rows := load_rows(b))}
    present = [v for v in VARIANTS if any(r["variant"] == v for rows in data.values() for r in rows)]
    L = [
        "# Public data for AIM: joint selection and a public prior (discretised Adult, δ = 1e-9)",
        "",
        "Generated by `python benchmarks/public_data.py` from `results/public_data_<split>.csv` (each run adds its "
        "rows; `--report` only rewrites this page and the figure). The public table is "
        f"{PUBLIC_ROWS:,} records of discretised Adult drawn with weight {BIAS:g} for one group (the *split*: "
        f"`--bias sex`: {SPLIT_TEXT['sex']}; `--bias age`: {SPLIT_TEXT['age']}); the private table is the other "
        "records. AIM with the published settings (2-way workload, max_model_size 80, T = 16 d): without the "
        "public table (`aim`), with it by joint selection (`aim+public`, JAM) and with it as a prior "
        "(`aim+pretrain`: its one-way marginals and the two-way marginals of a maximum spanning tree of its "
        "mutual information measured before the first round, then AIM's private rounds). Errors are the mean L1 "
        "distance between normalised marginals of the private table and the synthetic one, over all 2-way and "
        "all 3-way marginals. Seeded noise: these runs are NOT private. Run one at a time on a shared 2-core "
        "machine: the times are indicative only.",
        "",
        "![2-way error against ε](public_data.png)",
        "",
        "Figure: 2-way error against ε, a panel per method (columns) and split (rows); lines join the means over "
        "seeds, bars span the seeds' min–max, dots are single seeds; the dashed line is the public table's own error "
        "(taken as the synthetic table, no fit).",
        "",
        "## Which cells were run",
        "",
        f"Grid: ε ∈ {{0.1, 0.3, 1}} × seeds {{0, 1, 2}} × {{{', '.join(present)}}} for each split.",
        "",
        "| split | ε | " + " | ".join(f"{v}: seeds run" for v in present) + " | not run |",
        "|---|---|" + "---|" * len(present) + "---|",
    ]
    for b, rows in data.items():
        for eps in GRID_EPS:
            done = {v: sorted(r["seed"] for r in rows if r["variant"] == v and r["epsilon"] == eps) for v in present}
            missing = [f"{v} seed {s}" for v in present for s in GRID_SEEDS if s not in done[v]]
            cells = [", ".join(map(str, done[v])) or "–" for v in present]
            L.append(f"| {b} | {eps:g} | {' | '.join(cells)} | {'; '.join(missing) or '–'} |")
    for b, rows in data.items():
        pub = next(r for r in rows if r["variant"] == "public-only")
        L += [
            "",
            f"## Split `{b}` ({SPLIT_TEXT[b]}: {pub['group_share_public']:.0%} of the public table, "
            f"{pub['group_share_private']:.0%} of the private one)",
            "",
            "| ε | variant | seeds | 2-way: mean (min–max) | 2-way per seed | 3-way: mean (min–max) | rounds (public) "
            "| wall (s) | CPU (s) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for eps in GRID_EPS:
            for v in present:
                rs = sorted((r for r in rows if r["epsilon"] == eps and r["variant"] == v), key=lambda r: r["seed"])
                if not rs:
                    continue
                e2, e3 = np.array([r["err2"] for r in rs]), np.array([r["err3"] for r in rs])
                per_seed = ", ".join(f"{r['seed']}: {r['err2']:.4f}" for r in rs)
                rounds = np.mean([r["rounds"] for r in rs])
                prounds = np.mean([float(r["public_rounds"] or 0) for r in rs])
                L.append(
                    f"| {eps:g} | {v} | {len(rs)} | {e2.mean():.4f} ({e2.min():.4f}–{e2.max():.4f}) | {per_seed} | "
                    f"{e3.mean():.4f} ({e3.min():.4f}–{e3.max():.4f}) | {rounds:.0f} ({prounds:.0f}) | "
                    f"{np.mean([r['process_s'] for r in rs]):.0f} | {np.mean([r['cpu_s'] for r in rs]):.0f} |"
                )
        L.append(f"| – | public table as is | – | {pub['err2']:.4f} | – | {pub['err3']:.4f} | – | – | – |")
        for v in present:
            base = VARIANTS[v][0]
            if v == base or base not in present:
                continue
            L += ["", f"{v} against {base}, by ε (mean 2-way error over the seeds run):", ""]
            for eps in GRID_EPS:
                L.append(f"* ε = {eps:g}: {verdict(_errs(rows, eps, base), _errs(rows, eps, v), (base, v))}.")
    L += ["", READING.strip(), ""]
    (RESULTS / "public_data.md").write_text("\n".join(L))

    methods = list(dict.fromkeys(VARIANTS[v][0] for v in present))
    uses = {None: ("without the public table", "tab:blue"), "public": ("with it (joint selection)", "tab:orange")}
    uses["pretrain"] = ("with it as a prior", "tab:green")
    fig, axes = plt.subplots(len(data), len(methods), figsize=(4 * len(methods), 3.4 * len(data)), squeeze=False)
    for row_axes, (b, rows) in zip(axes, data.items()):
        top = max(r["err2"] for r in rows)
        for ax, method in zip(row_axes, methods):
            mine = [v for v in present if VARIANTS[v][0] == method]
            for i, v in enumerate(mine):
                label, color = uses[VARIANTS[v][1]]
                dx = 1 + 0.04 * (i - (len(mine) - 1) / 2)
                eps = [e for e in GRID_EPS if _errs(rows, e, v)]
                if not eps:
                    continue
                errs = [np.array(_errs(rows, e, v)) for e in eps]
                x = np.array(eps) * dx  # a small offset so the variants' bars do not hide each other
                mean = np.array([e.mean() for e in errs])
                yerr = [mean - [e.min() for e in errs], [e.max() for e in errs] - mean]
                ax.errorbar(x, mean, yerr=yerr, fmt="o-", color=color, capsize=4, label=label)
                for xi, e in zip(x, errs):
                    ax.plot([xi] * len(e), e, ".", color=color, alpha=0.5)
                    if len(e) < 3:  # fewer seeds than the grid's: say how many
                        ax.annotate(f"n={len(e)}", (xi, e.max()), textcoords="offset points", xytext=(4, 4),
                                    fontsize=7, color=color)  # fmt: skip
            pub = next(r for r in rows if r["variant"] == "public-only")
            ax.axhline(pub["err2"], color="gray", ls="--", label="public table as is")
            ax.set_xscale("log")
            ax.set_xticks(GRID_EPS, [f"{e:g}" for e in GRID_EPS])
            ax.minorticks_off()
            ax.set_ylim(0, top * 1.08)
            ax.set_xlabel("ε (δ = 1e-9)")
            ax.set_ylabel("2-way error (mean L1)")
            ax.set_title(f"{method}: public table biased by {b}", fontsize=10)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "public_data.png", dpi=110)
    plt.close(fig)
    sources = [RESULTS / f"public_data_{b}.csv" for b in SPLIT_TEXT if (RESULTS / f"public_data_{b}.csv").exists()]
    stamp(__file__, RESULTS / "public_data.md", RESULTS / "public_data.png", like=sources)


READING = """
## Reading

The comparisons above are computed from the runs; this text is not, so it states no figures. With three seeds at
most, a range is the min–max of three runs, not a confidence interval. At ε = 0.1 the selection's exponential
mechanism is close to uniform (ε per round about 1e-3), so single runs vary a lot.

* Joint selection (`+public`) keeps every candidate within a model of 2^19 cells (`public_max_cells`); the
  measurements behind that cap (speed and error at 2^17, 2^19, 2^21 cells and without a cap) are in
  `public_data.notes.md`. `public_max_cells=float("inf")` restores the uncapped behaviour.
* aim+pretrain (a public Chow–Liu prior, then private AIM) is a baseline: the biased prior, weighted like a
  measurement at the first round's σ, is never outweighed by the private rounds, so it can be worse than AIM where
  the public table is far from the private one (compare the two splits). Joint selection weighs each public
  marginal against the private data instead.
* MST and PPSyn-DP with the public table: see their rows; MST's "rounds" are its tree's d − 1 draws and its
  public rounds the edges taken from the public table; PPSyn-DP's public rounds count public marginals only (its
  public partition plan measures privately, so those rounds count as private).
* ACS across groups was not run: the ACS table here has 23 unnamed binary columns and no state, region or year
  column to split on (a split on a binary column would be a resample, not a shift between groups).
"""


if __name__ == "__main__":
    main()
