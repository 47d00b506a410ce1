"""Person-level privacy: contribution bounding at a fixed k against the privately chosen k, and the row-level run.

Tables (our own, seeded, one row per visit; ``patient_id`` names the person and is never modelled):

* ``visits`` (``SEED``): 7,000 people whose number of rows is lognormal (median 3, sigma 1.1, at most 600; older
  people have more: 39,830 rows, 6 people past 100 rows, the largest 152); person attributes constant across their
  rows: ``sex`` (2), ``age_band`` (8), ``region`` (6); visit attributes drawn per row from the person: a
  ``department`` (8; from age, sex and a department the person returns to, more so with more visits), a
  ``cost_band`` (5; from the department and the person's severity, which grows with their number of visits) and
  a ``weekday`` (7; from the region and a day the person prefers).
* ``mostly_one`` (``SEED + 1``): the same columns, 16,000 people of whom 80% have one row, 18% two to six and 2%
  a discrete Pareto number (tail index 0.9, 5 to 600; 33,945 rows in all, 18 people past 100 rows): the frequent
  visitors hold a large share of the rows and differ from the others.

Arms (epsilon 1, and 0.3 for the visits table; delta 1e-9; a public schema of the six categorical columns, so
that no budget goes to discovery; seeds 0-2: seeded noise and seeded bounding, NOT private; one process per run):

* ``row``: no privacy unit (the ``patient_id`` column dropped), the same epsilon but a weaker guarantee
  (neighbours differ by one row): the reference;
* ``k=1``, ``k=2``, ``k=5``, ``k=10``, ``k=20``: ``privacy_unit="patient_id"``, ``max_rows_per_unit=k``;
* ``chosen``: ``privacy_unit="patient_id"``, k chosen privately from the noisy unit profile (the k of each seed
  is reported).

Methods: MST and AIM at epsilon 1, MST at 0.3 (``--methods``). Metrics against the REAL full table (all its
rows, not the bounded one), exact and NOT private: mean 1-way and mean 2-way error over all columns and pairs (L1
of the normalised marginals, 0..2, ``privsample.evaluation.evaluate``); the share of rows bounding removed (exact,
from the real table and k; for this report only); for person-level runs the profile's estimate of that share
(released) beside it; the fit's wall time and the worker's peak RSS (``resource.getrusage``, measured before the
evaluation).

    python benchmarks/person_level.py --seeds 0,1,2 --methods mst,aim    # visits and mostly_one, epsilon 1
    python benchmarks/person_level.py --tables visits --epsilons 0.3
    python benchmarks/person_level.py --report                           # rewrite the page and the figure
    python benchmarks/person_level.py --profiles --tag before            # the chosen k over 200 noise draws

Results: benchmarks/results/person_level.{csv,md}, person_level.png; notes in person_level.notes.md. Rows of a
new run replace the rows of the same (tag, table, method, epsilon, arm, seed). ``--tag`` labels the version of
the unit profile (``before``/``after`` tuning).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time

import numpy as np
import pandas as pd

from common import RESULTS, ROOT, peak_rss_mb, run_worker
from freshness import stamp

sys.path.insert(0, str(ROOT))  # the privsample of this checkout (its worker processes run this file too)

SEED = 20261201
DELTA = 1e-9
CACHE = ROOT / "benchmarks" / ".cache"
CSV_PATH = RESULTS / "person_level.csv"
MD_PATH = RESULTS / "person_level.md"
PNG_PATH = RESULTS / "person_level.png"
PROFILES_PATH = RESULTS / "person_level.profiles.csv"
UNIT = "patient_id"
FIXED_K = (1, 2, 5, 10, 20)
ARMS = ("row", *(f"k={k}" for k in FIXED_K), "chosen")
TABLES = ("visits", "mostly_one")
MAX_ROWS = 600

SEXES = ("F", "M")
AGE_BANDS = ("0-17", "18-29", "30-39", "40-49", "50-59", "60-69", "70-79", "80+")
REGIONS = ("north", "south", "east", "west", "centre", "islands")
DEPARTMENTS = ("general", "cardiology", "oncology", "orthopaedics", "paediatrics", "psychiatry", "renal", "emergency")
COST_BANDS = ("<100", "100-500", "500-2k", "2k-10k", "10k+")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DOMAINS = {
    "sex": SEXES,
    "age_band": AGE_BANDS,
    "region": REGIONS,
    "department": DEPARTMENTS,
    "cost_band": COST_BANDS,
    "weekday": WEEKDAYS,
}


def _rows_visits(rng, age: np.ndarray) -> np.ndarray:
    mu = np.log(3.0) + 0.12 * (age - 3.5)  # older people visit more; the median over all stays near 3
    return np.clip(np.round(np.exp(rng.normal(mu, 1.1))), 1, MAX_ROWS).astype(np.int64)


def _rows_mostly_one(rng, n: int) -> np.ndarray:
    kind = rng.choice(3, n, p=[0.80, 0.18, 0.02])
    rows = np.ones(n, dtype=np.int64)
    rows[kind == 1] = rng.integers(2, 7, int((kind == 1).sum()))
    heavy = kind == 2
    pareto = np.floor(5 * (1 - rng.random(int(heavy.sum()))) ** (-1 / 0.9))  # discrete Pareto, index 0.9
    rows[heavy] = np.clip(pareto, 5, MAX_ROWS).astype(np.int64)
    return rows


def make_table(name: str) -> pd.DataFrame:
    """The table ``name`` (module docstring), from its seed."""
    rng = np.random.default_rng(SEED + TABLES.index(name))
    n = 7000 if name == "visits" else 16000
    sex = rng.integers(0, 2, n)
    age = rng.choice(8, n, p=[0.12, 0.12, 0.13, 0.13, 0.14, 0.14, 0.13, 0.09])
    region = rng.choice(6, n, p=[0.25, 0.2, 0.2, 0.15, 0.15, 0.05])
    rows = _rows_visits(rng, age) if name == "visits" else _rows_mostly_one(rng, n)
    if name == "mostly_one":  # the frequent visitors are older
        heavy = rows >= 5
        age[heavy] = np.minimum(age[heavy] + rng.integers(1, 4, int(heavy.sum())), 7)
    frequent = np.log1p(rows) / np.log1p(MAX_ROWS)  # 0..1: how much of a frequent visitor the person is
    home = rng.choice(8, n, p=[0.25, 0.15, 0.1, 0.1, 0.05, 0.1, 0.1, 0.15])  # the department they return to
    home = np.where((frequent > 0.45) & (rng.random(n) < 0.7), rng.choice([1, 2, 6], n), home)  # chronic care
    severity = rng.gamma(1.0 + 3 * frequent, 0.6)
    day = rng.integers(0, 7, n)
    person = np.repeat(np.arange(n), rows)
    m = len(person)
    # department: the person's home department with probability rising with their visits, else by age and sex
    age_dept = np.array(
        [[0.2, 0.02, 0.02, 0.1, 0.46, 0.05, 0.01, 0.14]] * 1
        + [[0.3, 0.05, 0.05, 0.2, 0.0, 0.15, 0.05, 0.2]] * 3
        + [[0.3, 0.15, 0.1, 0.15, 0.0, 0.08, 0.07, 0.15]] * 2
        + [[0.25, 0.25, 0.15, 0.1, 0.0, 0.03, 0.12, 0.1]] * 2
    )
    a = age[person]
    p_home = 0.3 + 0.6 * frequent[person]
    drawn = (rng.random(m)[:, None] > np.cumsum(age_dept[a], axis=1)).sum(axis=1).clip(0, 7)
    drawn = np.where((sex[person] == 0) & (drawn == 3) & (rng.random(m) < 0.3), 0, drawn)
    dept = np.where(rng.random(m) < p_home, home[person], drawn)
    dept_cost = np.array([0.2, 1.4, 2.0, 1.0, 0.0, 0.3, 1.6, 0.8])
    z = dept_cost[dept] + severity[person] + rng.normal(0, 0.7, m)
    cost = np.digitize(z, [0.4, 1.2, 2.2, 3.2])
    weekend = np.where(region[person] == 5, 0.35, 0.15)
    wd = np.where(
        rng.random(m) < 0.5,
        day[person],
        np.where(rng.random(m) < weekend, rng.integers(5, 7, m), rng.integers(0, 5, m)),
    )
    ids = rng.permutation(n)  # ids in no order of size
    order = rng.permutation(m)  # rows shuffled
    df = pd.DataFrame(
        {
            UNIT: np.array([f"P{i:06d}" for i in ids])[person],
            "sex": np.array(SEXES)[sex[person]],
            "age_band": np.array(AGE_BANDS)[a],
            "region": np.array(REGIONS)[region[person]],
            "department": np.array(DEPARTMENTS)[dept],
            "cost_band": np.array(COST_BANDS)[cost],
            "weekday": np.array(WEEKDAYS)[wd],
        }
    )  # fmt: skip
    return df.iloc[order].reset_index(drop=True)


def table_path(name: str):
    path = CACHE / f"person_level-{name}.csv"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        make_table(name).to_csv(path, index=False)
    return path


def public_schema():
    """The public codebook of the six modelled columns (every value listed)."""
    from privsample.data.columns import Categorical
    from privsample.data.schema import Schema

    return Schema([Categorical(c, tuple(v)) for c, v in DOMAINS.items()], provenance="user")


def exact_removed(df: pd.DataFrame, k: int) -> float:
    """The exact share of rows that keeping at most k rows per person removes (NOT private)."""
    sizes = df[UNIT].value_counts().to_numpy()
    return float(1 - np.minimum(sizes, k).sum() / sizes.sum())


# -- one run --------------------------------------------------------------------------------------------
def worker(table: str, method: str, epsilon: float, arm: str, seed: int) -> dict:
    import warnings

    import privsample
    from privsample.evaluation import evaluate

    warnings.simplefilter("ignore")
    df = pd.read_csv(table_path(table), dtype=str)
    real = df.drop(columns=[UNIT])
    opts = {}
    if arm == "row":
        source = real
    else:
        source = df
        opts = {"privacy_unit": UNIT, "max_rows_per_unit": None if arm == "chosen" else int(arm[2:])}
    t0 = time.perf_counter()
    s = privsample.synthesize(source, epsilon=epsilon, delta=DELTA, method=method, schema=public_schema(), seed=seed,
                              **opts)  # fmt: skip
    fit_s = time.perf_counter() - t0
    rss = peak_rss_mb()
    ev = evaluate(real, s.table, workload=2)
    err = ev.errors[ev.errors["domain"] == "real values"].set_index("order")["mean"]
    row = {"k": "", "removed_exact": 0.0, "removed_noisy": ""}
    unit = s.model.params.get("unit")
    if unit is not None:
        row = {"k": unit["k"], "removed_exact": exact_removed(df, unit["k"]), "removed_noisy": unit["removed_share"]}
    return {"err1": float(err[1]), "err2": float(err[2]), **row, "fit_s": fit_s, "peak_rss_mb": rss}


# -- the unit profile alone: the chosen k over many noise draws (no synthesis) --------------------------
def profile_draws(table: str, epsilon: float, draws: int = 200) -> dict:
    """k chosen and noisy share removed over ``draws`` seeded draws of the profile's noise, as a person-level run
    at ``epsilon`` with this table's public schema draws them (its accountant, share and synthesis budget; NOT
    private: for tuning)."""
    from fractions import Fraction

    from privsample.data.unit_profile import PROFILE_SHARE, unit_profile
    from privsample.marginals.bounding import UNIT_GRID, size_histogram
    from privsample.privacy.accountant import Accountant
    from privsample.privacy.noise import SeededNoise
    from privsample.privacy.unit import PrivacyUnit

    df = pd.read_csv(table_path(table), dtype=str)
    hist = size_histogram(df[UNIT].to_numpy(dtype=object), UNIT_GRID)
    ks, est = [], []
    for d in range(draws):
        acc = Accountant.from_epsilon_delta(epsilon, DELTA, unit=PrivacyUnit(UNIT, 1))
        rho_u = float(Fraction(PROFILE_SHARE) * Fraction(acc.rho_total))
        prof = unit_profile(hist, acc, SeededNoise(10_000 + d, quiet=True), rho_u, column=UNIT, grid=UNIT_GRID,
                            k=None, synthesis_rho=acc.remaining, columns=len(DOMAINS))  # fmt: skip
        ks.append(prof.k)
        est.append(prof.removed_share)
    return {"ks": ks, "est": est, "hist": hist}


# -- the grid and the report ----------------------------------------------------------------------------
def load_rows() -> list[dict]:
    if not CSV_PATH.exists():
        return []
    with open(CSV_PATH) as f:
        return list(csv.DictReader(f))


KEY = ("tag", "table", "method", "epsilon", "arm", "seed")


def save_rows(rows: list[dict]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(CSV_PATH, "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)


def _f(x) -> float:
    return float(x) if x not in ("", None) else float("nan")


def _spread(vals: list[float], fmt: str = "{:.3f}") -> str:
    if not vals:
        return "—"
    m = statistics.mean(vals)
    return f"{fmt.format(m)} ({fmt.format(min(vals))}–{fmt.format(max(vals))})"


def _order(combo: tuple[str, str, str]) -> tuple:
    table, method, eps = combo
    return (-float(eps), TABLES.index(table), method)


def write_report(rows: list[dict]) -> None:
    from collections import defaultdict

    groups: dict = defaultdict(list)
    for r in rows:
        groups[(r["tag"], r["table"], r["method"], r["epsilon"], r["arm"])].append(r)
    lines = [
        "# Person-level privacy: contribution bounding (`benchmarks/person_level.py`)",
        "",
        "Tables of our own (module docstring): `visits` (7,000 people, lognormal rows per person, median 3, "
        "39,830 rows) and `mostly_one` (16,000 people, 80% with one row, 2% with a Pareto tail up to 600 rows, "
        "33,945 rows). δ = 1e-9, a public schema of the six columns, seeds 0-2 (seeded noise and bounding: NOT "
        "private). Errors are against the REAL full table (mean L1 of normalised marginals over all columns and "
        "all pairs, 0..2); mean (min–max) over the seeds. `row` is the row-level run at the same ε: a weaker "
        "guarantee (one row, not one person), the reference. `removed` is exact (NOT private, for this report "
        "only); `est.` is the profile's noisy estimate, which the run releases. Time: the fit (synthesis and "
        "sampling; it varies with the load of the shared machine); memory: the worker's peak RSS before the "
        "evaluation. `before`: the unit profile with `PROFILE_SHARE` 0.03, `CELLS` 16 and its noisy counts only "
        "clipped at zero; `after`: denoised (`unit_profile.denoise`), `PROFILE_SHARE` 0.05, `CELLS` 48. What was "
        "tried, and the estimate of rows removed against the truth: `person_level.notes.md`.",
        "",
    ]
    tags = list(dict.fromkeys(r["tag"] for r in rows))
    for tag in tags:
        lines += [f"## Unit profile: {tag}", ""]
        for table, method, eps in sorted(
            dict.fromkeys((t, m, e) for (tg, t, m, e, _a) in groups if tg == tag), key=_order
        ):
            lines += [
                f"### `{table}`, {method.upper()}, ε = {eps}",
                "",
                "| arm | k per seed | 1-way error | 2-way error | removed (exact) | removed (est.) | fit s | peak MB |",
                "|---|---|---|---|---|---|---|---|",
            ]
            best = None
            for arm in ARMS:
                g = sorted(groups.get((tag, table, method, eps, arm), []), key=lambda r: int(r["seed"]))
                if not g:
                    continue
                e2 = [_f(r["err2"]) for r in g]
                if arm.startswith("k=") and (best is None or statistics.mean(e2) < best[1]):
                    best = (arm, statistics.mean(e2))
                ks = ", ".join(str(r["k"]) for r in g) if arm != "row" else "—"
                est = [_f(r["removed_noisy"]) for r in g if r["removed_noisy"] != ""]
                lines.append(
                    f"| {arm} | {ks} | {_spread([_f(r['err1']) for r in g])} | {_spread(e2)} | "
                    f"{_spread([_f(r['removed_exact']) for r in g], '{:.1%}')} | "
                    f"{_spread(est, '{:.1%}') if est else '—'} | {_spread([_f(r['fit_s']) for r in g], '{:.1f}')} | "
                    f"{_spread([_f(r['peak_rss_mb']) for r in g], '{:.0f}')} |"
                )
            chosen = groups.get((tag, table, method, eps, "chosen"))
            if best and chosen:
                c2 = statistics.mean(_f(r["err2"]) for r in chosen)
                bk = int(best[0][2:])
                ks = [int(r["k"]) for r in chosen]
                within_k = all(bk / 2 <= k <= 2 * bk for k in ks)
                lines += [
                    "",
                    f"Best fixed k: {bk} (2-way {best[1]:.3f}); chosen k: 2-way {c2:.3f} = {c2 / best[1]:.2f}× "
                    "the best "
                    f"({'within' if c2 <= 2 * best[1] else 'NOT within'} 2×); chosen k {ks}: "
                    f"{'all within' if within_k else 'not all within'} a factor 2 of {bk}.",
                ]
            lines.append("")
    if PROFILES_PATH.exists():
        lines += profile_section()
    lines += [f"![2-way error against k]({PNG_PATH.name})", ""]
    MD_PATH.write_text("\n".join(lines))
    plot(rows)
    stamp(__file__, MD_PATH, PNG_PATH, like=CSV_PATH)  # a page of the stored runs


def profile_section() -> list[str]:
    with open(PROFILES_PATH) as f:
        prof = list(csv.DictReader(f))
    lines = [
        "## The chosen k over 200 draws of the profile's noise (no synthesis)",
        "",
        "The profile alone, drawn 200 times with seeded noise at each version of `unit_profile` (NOT private): "
        "how often each k is chosen, and the noisy share removed at the chosen k against the exact share.",
        "",
        "| profile | table | ε | k chosen (share of draws) | est. removed − exact: mean (5%–95%) |",
        "|---|---|---|---|---|",
    ]
    for r in prof:
        lines.append(f"| {r['tag']} | `{r['table']}` | {r['epsilon']} | {r['ks']} | {r['bias']} |")
    return lines + [""]


def plot(rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    combos = sorted(dict.fromkeys((r["table"], r["method"], r["epsilon"]) for r in rows), key=_order)
    ncols = min(3, len(combos))
    nrows = -(-len(combos) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.8 * ncols, 3.6 * nrows), squeeze=False)
    for ax in axes.ravel()[len(combos) :]:
        ax.axis("off")
    tags = list(dict.fromkeys(r["tag"] for r in rows))
    for ax, (table, method, eps) in zip(axes.ravel(), combos):
        sel = [r for r in rows if (r["table"], r["method"], r["epsilon"]) == (table, method, eps)]
        fixed = [r for r in sel if r["arm"].startswith("k=") and r["tag"] == tags[0]]
        ks = sorted({int(r["arm"][2:]) for r in fixed})
        for s in sorted({r["seed"] for r in fixed}):
            ax.plot(ks, [next((_f(r["err2"]) for r in fixed if r["seed"] == s and r["arm"] == f"k={k}"), np.nan)
                         for k in ks], color="0.7", lw=0.8)  # fmt: skip
        ax.plot(ks, [statistics.mean(_f(r["err2"]) for r in fixed if r["arm"] == f"k={k}") for k in ks], "o-",
                color="k", label="fixed k (mean, seeds in grey)")  # fmt: skip
        rowref = [_f(r["err2"]) for r in sel if r["arm"] == "row"]
        if rowref:
            ax.axhline(statistics.mean(rowref), color="tab:green", ls="--", label="row-level (weaker guarantee)")
        for tag, colour in zip(tags, ("tab:red", "tab:blue", "tab:purple")):
            ch = [r for r in sel if r["arm"] == "chosen" and r["tag"] == tag]
            if ch:
                ax.scatter([int(r["k"]) for r in ch], [_f(r["err2"]) for r in ch], marker="x", s=60, color=colour,
                           label=f"chosen k ({tag})", zorder=3)  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlabel("k (rows kept per person)")
        ax.set_ylabel("mean 2-way error")
        ax.set_title(f"{table}, {method.upper()}, ε = {eps}", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(PNG_PATH, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--table", default="visits")
    ap.add_argument("--method", default="mst")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--arm", default="row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--methods", default="mst")
    ap.add_argument("--epsilons", default="1")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--tag", default="after")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--profiles", action="store_true")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.table, a.method, a.epsilon, a.arm, a.seed)))
        return
    if a.profiles:
        profiles(a.tag, a.tables.split(","), [float(e) for e in a.epsilons.split(",")])
        write_report(load_rows())
        return
    rows = load_rows()
    if not a.report:
        for table in a.tables.split(","):
            table_path(table)
            for method in a.methods.split(","):
                for eps in a.epsilons.split(","):
                    for arm in a.arms.split(","):
                        for seed in [int(s) for s in a.seeds.split(",")]:
                            args = ["--table", table, "--method", method, "--epsilon", eps, "--arm", arm]
                            r = run_worker(__file__, [*args, "--seed", str(seed)])
                            key = {"tag": a.tag, "table": table, "method": method, "epsilon": eps, "arm": arm,
                                   "seed": str(seed)}  # fmt: skip
                            rows = [x for x in rows if tuple(x[k] for k in KEY) != tuple(key.values())]
                            rows.append({**key, **{k: v for k, v in r.items() if k != "process_s"}})
                            print(key, {k: r[k] for k in ("err1", "err2", "k", "removed_exact", "removed_noisy")},
                                  flush=True)  # fmt: skip
                            save_rows(rows)
                            stamp(__file__, CSV_PATH)  # the code of the last run added
    write_report(rows)


def profiles(tag: str, tables: list[str], epsilons: list[float]) -> None:
    from collections import Counter

    old = []
    if PROFILES_PATH.exists():
        with open(PROFILES_PATH) as f:
            old = [r for r in csv.DictReader(f) if r["tag"] != tag]
    out = []
    for table in tables:
        df = pd.read_csv(table_path(table), dtype=str)
        for eps in epsilons:
            d = profile_draws(table, eps)
            c = Counter(d["ks"])
            ks = ", ".join(f"{k}: {n / len(d['ks']):.0%}" for k, n in sorted(c.items()))
            bias = np.array([e - exact_removed(df, k) for e, k in zip(d["est"], d["ks"])])
            q5, q95 = np.quantile(bias, [0.05, 0.95])
            out.append({"tag": tag, "table": table, "epsilon": eps, "ks": ks,
                        "bias": f"{bias.mean():+.1%} ({q5:+.1%} to {q95:+.1%})"})  # fmt: skip
            print(out[-1], flush=True)
    with open(PROFILES_PATH, "w", newline="") as f:
        w = csv.DictWriter(f, ["tag", "table", "epsilon", "ks", "bias"])
        w.writeheader()
        w.writerows(old + out)
    stamp(__file__, PROFILES_PATH)


if __name__ == "__main__":
    sys.exit(main())
