"""Private schema discovery on a wide mixed table: `privsample synth` without a schema against a reviewed one.

Table (``mixed_table``): 60 columns x 100,000 records drawn from a seeded random Bayesian network
(``common.network``: at most 3 parents a column, Dirichlet(0.5) CPTs, latent levels log-uniform on 2-50),
written once to ``benchmarks/.cache/wide-mixed-60x100000.parquet``. Each column's latent level becomes a value
by its kind (``KIND_CYCLE``, ten columns a cycle):

* ``text``: a text category per level, the last level written as a missing value; ``label``: the same, never
  missing (24 text columns, 12 of them nullable; cardinalities 2-50, skewed by the Dirichlet CPTs);
* ``code``: integer codes 1..k; ``code3``: k sparse 3-digit integer codes (a public code list per column);
* ``amount``: a skewed continuous amount (cents): the level's scale times a Gamma(2) draw; every other amount
  column is zero-inflated (level 0 is exactly 0.00);
* ``count``: an integer count, Poisson with the level's mean (log-uniform on 0.5-40).

Dependencies between columns are the network's; numeric values depend on the others through their levels.

Arms (epsilon 1, delta 1e-9, ``synthesize`` on the Parquet file, NumPy engine, seeded noise: NOT private):

* ``none``: no schema, what ``privsample synth data.parquet`` does (private discovery, the planned share);
* ``reviewed``: the non-private draft (``draft_schema`` of the table, 16 bins) with provenance "user": all of
  the budget to the synthesizer;
* ``product``: the exact product of the real 1-way marginals on the measuring domain (no privacy, no fit);
* diagnosis arms, each the discovered schema of the same seed (provenance "private", with its ledger, so the
  run pays the same discovery share and reuses the released category counts of the columns it keeps) with the
  columns of some generator kinds replaced by the reviewed columns (their discovery outcomes dropped):
  ``swap:text`` (text and label), ``swap:code`` (code and code3), ``swap:numeric`` (amount and count),
  ``swap:all`` (every column: the reviewed domain at the no-schema run's synthesis budget);
* experiment arms ``none:KEY=VALUE,...``: no schema with ``discovery_options`` of ``plan_discovery``
  (``target_fraction``, ``min_share``, ``max_share``, ``pass_probability``).

Error: the mean L1 distance of normalised 2-way marginals over all 1,770 pairs, on one fixed measuring domain
read off the real table for every arm (``privsample.evaluation.tables.real_domain``: categories one by one, numeric
columns in 10 integer-aligned equal-width bins over the real range, no point masses; a value the real table lacks
in its own cell). The synthetic table (100,000 records) is scored as returned by ``synthesize``.
Also per run, exact and NOT private (diagnosis only): the share of real records each schema merges into its
catch-all or clips (``schema_loss``), per generator kind; the model domain (cells per kind); the *schema floor*:
the 2-way error of the real table passed through the arm's schema (encoded by the release rule, decoded) with no
noise; and from ``schema.discovery`` the planned share and the category threshold.

Each fit runs in a fresh single-threaded process with a time limit; rows are appended to
``benchmarks/results/wide_discovery.csv`` as runs finish, done runs are skipped, and the report is rewritten.

    python benchmarks/wide_discovery.py --methods ppsyn,mst --seeds 0,1,2     # arms none, reviewed, product
    python benchmarks/wide_discovery.py --arms swap:text,swap:code,swap:numeric,swap:all --methods ppsyn
    python benchmarks/wide_discovery.py --arms none:min_share=0.15 --methods ppsyn
    python benchmarks/wide_discovery.py --methods aim --seeds 0 --timeout 900
    python benchmarks/wide_discovery.py --report
Results: benchmarks/results/wide_discovery.{csv,md}.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import common
from common import RESULTS, ROOT
from freshness import stamp
from small_tables import SCORE_BINS, SINGLE_THREAD
from wide_tables import CACHE, DELTA, log_uniform_size

sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed copy

COLS, ROWS = 60, 100_000
SEED = 20250301
EPSILON = 1.0
ALPHA = 0.1  # Dirichlet concentration of the CPTs: strong dependencies
KIND_CYCLE = ["text", "code", "amount", "label", "count", "text", "code3", "amount", "label", "count"]
GROUPS = {"text": "text", "label": "text", "code": "code", "code3": "code", "amount": "numeric", "count": "numeric"}
METHODS = ("ppsyn", "mst", "aim")
SWAPS = {"swap:text": {"text"}, "swap:code": {"code"}, "swap:numeric": {"numeric"}, "swap:all": set(GROUPS.values())}
CSV_PATH = RESULTS / "wide_discovery.csv"
MD_PATH = RESULTS / "wide_discovery.md"
SCHEMAS = CACHE / "wide_discovery"
PATH = CACHE / f"wide-mixed-{COLS}x{ROWS}.parquet"


# -- the table -----------------------------------------------------------------------------------------
def mixed_network() -> list[dict]:
    """The network with each column's public value parameters (a function of ``SEED`` only)."""
    kinds = [KIND_CYCLE[i % len(KIND_CYCLE)] for i in range(COLS)]
    nodes = common.network(COLS, SEED, kinds, size=log_uniform_size, max_configs=2500, alpha=ALPHA)
    rng = np.random.default_rng(SEED + 1)
    amounts = 0
    for node in nodes:
        k, kind = node["size"], node["kind"]
        if kind == "code3":
            node["codes"] = np.sort(rng.choice(np.arange(100, 1000), size=k, replace=False))
        elif kind == "amount":
            node["scale"] = np.exp(rng.normal(np.log(200.0), 1.0, size=k))
            node["zero"] = amounts % 2 == 0  # every other amount column: level 0 is exactly 0
            amounts += 1
        elif kind == "count":
            node["mean"] = np.exp(rng.uniform(np.log(0.5), np.log(40.0), size=k))
    return nodes


def mixed_arrow(nodes: list[dict], codes: list, rng):
    """Codes -> the Arrow table of values (module docstring)."""
    import pyarrow as pa

    cols = {}
    for node, c in zip(nodes, codes):
        name, k, kind = node["name"], node["size"], node["kind"]
        if kind in ("text", "label"):
            labels = [f"{name}_{v}" for v in range(k)]
            if kind == "text":
                labels[-1] = None
            cols[name] = pa.array(np.array(labels, dtype=object)[c], type=pa.string())
        elif kind == "code":
            cols[name] = pa.array(c + 1)
        elif kind == "code3":
            cols[name] = pa.array(node["codes"][c])
        elif kind == "amount":
            x = np.round(node["scale"][c] * rng.gamma(2.0, 1.0, size=len(c)), 2)
            cols[name] = pa.array(np.where((c == 0) & node["zero"], 0.0, x))
        else:
            cols[name] = pa.array(rng.poisson(node["mean"][c]).astype(np.int64))
    return pa.table(cols)


def table_path() -> Path:
    return common.write_network_table(mixed_network(), ROWS, PATH, SEED + 7, convert=mixed_arrow)


def kinds() -> dict[str, str]:
    """{column: generator kind}."""
    return {n["name"]: n["kind"] for n in mixed_network()}


# -- schemas -------------------------------------------------------------------------------------------
def reviewed_schema(rdf):
    """The non-private draft with provenance "user" (every real category, the real bounds, 16 bins), the integer
    code columns reviewed into categories (their public code lists, as a person would)."""
    import dataclasses

    from privsample.data.discovery import draft_schema
    from privsample.data.schema import Categorical

    draft = draft_schema(rdf)
    cols = []
    for node in mixed_network():
        col = draft[node["name"]]
        if node["kind"] in ("code", "code3"):
            codes = node["codes"] if node["kind"] == "code3" else np.arange(1, node["size"] + 1)
            col = Categorical(node["name"], tuple(str(int(v)) for v in codes))
        cols.append(col)
    return dataclasses.replace(draft, columns=cols, provenance="user")


def discovered_path(seed: int) -> Path:
    return SCHEMAS / f"discovered-seed{seed}.json"


def swapped_schema(rdf, seed: int, groups: set[str]):
    """The discovered schema of ``seed`` (its ledger and discovery report kept) with the columns of the generator
    kinds in ``groups`` replaced by the reviewed ones."""
    import dataclasses

    from privsample.data.schema import Schema

    path = discovered_path(seed)
    if not path.exists():
        raise SystemExit(f"{path} is missing: run the 'none' arm of seed {seed} first")
    disc = Schema.load(path)
    rev = reviewed_schema(rdf)
    kind = kinds()
    swap = {c.name for c in disc.columns if GROUPS[kind[c.name]] in groups}
    cols = [rev[c.name] if c.name in swap else c for c in disc.columns]
    report = dict(disc.discovery, columns=[e for e in disc.discovery["columns"] if e["name"] not in swap])
    return dataclasses.replace(disc, columns=cols, discovery=report)  # no discovery outcome for swapped columns


def arm_options(arm: str) -> dict:
    """``none:KEY=VALUE,...`` -> {KEY: float(VALUE)} (discovery options of an experiment arm)."""
    if ":" not in arm or not arm.startswith("none"):
        return {}
    return {k: float(v) for k, v in (kv.split("=") for kv in arm.split(":", 1)[1].split(","))}


# -- scoring -------------------------------------------------------------------------------------------
def measuring_domain(rdf):
    from privsample.evaluation.tables import real_domain

    return real_domain(rdf, bins=SCORE_BINS, point_mass=2.0)  # a share above 1: no point masses


def err2(dom, real_codes, synth_df) -> float:
    from privsample.evaluation.workload import all_cliques, workload_error
    from privsample.marginals import NumpyEngine

    mdom = dom.domain()
    return workload_error(
        NumpyEngine(real_codes, mdom), NumpyEngine(dom.encode(synth_df, "the synthetic table"), mdom),
        all_cliques(dom.names, 2),
    )  # fmt: skip


def product_err2(dom, real_codes) -> float:
    """2-way error of the exact product of the real 1-way marginals (no sampling)."""
    from privsample.evaluation.workload import all_cliques, marginal_error
    from privsample.marginals import NumpyEngine

    eng = NumpyEngine(real_codes, dom.domain())
    one = {a: eng.marginal((a,)).astype(float) for a in dom.names}
    errs = [marginal_error(eng.marginal(c), np.outer(one[c[0]], one[c[1]])) for c in all_cliques(dom.names, 2)]
    return float(np.mean(errs))


def schema_floor(dom, real_codes, rdf, schema, seed: int) -> float:
    """2-way error of the real table encoded by the release rule on ``schema`` and decoded (no noise)."""
    from privsample.data.decoding import decode
    from privsample.data.encoding import encode, release_schema

    rs = release_schema(schema)
    back = decode(encode(rdf[rs.names], rs, release=True), rs, np.random.default_rng(seed))
    return err2(dom, real_codes, back)


def schema_stats(rdf, schema) -> dict:
    """Per generator kind group: mean share of real records merged / clipped (exact), summed cells, and how many
    columns the schema made numeric."""
    from privsample.data.encoding import release_schema
    from privsample.evaluation.tables import schema_loss

    kind = kinds()
    rs = release_schema(schema)
    loss = {x.column: x for x in schema_loss(rdf, rs)}
    out = {}
    for g in sorted(set(GROUPS.values())):
        names = [c.name for c in rs.columns if GROUPS[kind[c.name]] == g]
        out[f"merged_{g}"] = float(np.mean([loss[n].merged for n in names]))
        out[f"clipped_{g}"] = float(np.mean([loss[n].clipped for n in names]))
        out[f"cells_{g}"] = int(sum(rs[n].size for n in names))
        out[f"numeric_{g}"] = sum(rs[n].kind == "numeric" for n in names)
    return out


# -- one run (in a fresh interpreter) ------------------------------------------------------------------
def worker(arm: str, method: str, seed: int) -> dict:
    from privsample.data.table import read_table
    from privsample.api.synthesizer import synthesize
    from privsample.synth.selection import model_size_mb

    path = table_path()
    rdf = read_table(path)
    dom = measuring_domain(rdf)
    real = dom.encode(rdf, "the real table")
    if arm == "product":
        return {"err2": product_err2(dom, real), "synth_s": 0.0}
    if arm.startswith("swap:"):
        schema = swapped_schema(rdf, seed, SWAPS[arm])
    else:
        schema = reviewed_schema(rdf) if arm == "reviewed" else None
    opts = arm_options(arm)
    t0 = time.perf_counter()
    res = synthesize(path, epsilon=EPSILON, delta=DELTA, method=method, schema=schema, seed=seed, engine="numpy",
                     discovery_options=opts or None)  # fmt: skip
    out = {"synth_s": time.perf_counter() - t0}
    if arm == "none":
        SCHEMAS.mkdir(parents=True, exist_ok=True)
        res.schema.save(discovered_path(seed))  # the same for every method: discovery runs before the fit
    t1 = time.perf_counter()
    out["err2"] = err2(dom, real, res.table)
    m = res.model.model
    out.update(model_cells=int(sum(m.domain.shape)), model_size_mb=model_size_mb(m.domain, m.cliques))
    used = schema if schema is not None else res.schema
    out.update(schema_stats(rdf, used))
    out["floor2"] = schema_floor(dom, real, rdf, used, seed)
    disc = getattr(res.schema, "discovery", None) or {}
    out.update(share=disc.get("share", 0.0), threshold=disc.get("min_category_records", ""))
    out["score_s"] = time.perf_counter() - t1
    return out


# -- results -------------------------------------------------------------------------------------------
KEY = ("arm", "method", "seed")
FIELDS = [*KEY, "status", "err2", "floor2", "share", "threshold", "synth_s", "score_s", "process_s", "peak_rss_mb",
          "model_cells", "model_size_mb"] + [
    f"{s}_{g}" for s in ("merged", "clipped", "cells", "numeric") for g in ("code", "numeric", "text")
]  # fmt: skip


def load() -> list[dict]:
    return list(csv.DictReader(open(CSV_PATH))) if CSV_PATH.exists() else []


def save_row(row: dict) -> None:
    rows = [r for r in load() if tuple(r[k] for k in KEY) != tuple(str(row[k]) for k in KEY)]
    rows.append({k: str(row.get(k, "")) for k in FIELDS})
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(CSV_PATH, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    stamp(__file__, CSV_PATH)  # the code of the last run added


def num(r: dict, k: str) -> float | None:
    try:
        return float(r[k])
    except (KeyError, TypeError, ValueError):
        return None


def spread(xs: list[float], d: int = 3) -> str:
    if not xs:
        return ""
    if len(xs) == 1:
        return f"{xs[0]:.{d}f}"
    return f"{statistics.mean(xs):.{d}f} ({min(xs):.{d}f}-{max(xs):.{d}f})"


def write_report() -> None:
    rows = load()
    ok = [r for r in rows if r["status"] == "ok"]
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    lines = [
        "# Private discovery on a wide mixed table (`benchmarks/wide_discovery.py`)",
        "",
        f"{COLS} columns x {ROWS:,} records of our own (module docstring of the script: 24 text columns, 12 "
        "integer codes, 12 skewed amounts, 12 integer counts; `KIND_CYCLE`), epsilon = 1, delta = 1e-9, "
        "seeded noise (not private). 2-way error: mean L1 over all 1,770 pairs on one measuring domain read off "
        f"the real table (numeric columns in {SCORE_BINS} bins). Single-threaded fresh process per run on a shared "
        "2-core machine.",
        "",
        "## Runs",
        "",
        "| arm | method | seed | status | 2-way error | schema floor | discovery share | category threshold "
        "| fit s | model cells | model MB |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['arm']} | {r['method']} | {r['seed']} | {r['status']} | {r['err2'][:5]} | {r['floor2'][:5]} | "
            f"{r['share'][:5]} | {r['threshold']} | {r['synth_s'][:6]} | {r['model_cells']} | "
            f"{r['model_size_mb'][:6]} |"
        )
    lines += ["", "## Summary (mean over seeds, min-max)", "", "| method | arm | runs | 2-way error | / reviewed |",
              "|---|---|---:|---:|---:|"]  # fmt: skip
    for method in METHODS:
        rev = {r["seed"]: num(r, "err2") for r in ok if r["arm"] == "reviewed" and r["method"] == method}
        for arm in arms:
            sel = [r for r in ok if r["arm"] == arm and r["method"] in (method, "-")]
            if not sel or (arm == "product" and method != METHODS[0]):
                continue
            ratios = [num(r, "err2") / rev[r["seed"]] for r in sel if rev.get(r["seed"])]
            lines.append(f"| {method} | {arm} | {len(sel)} | {spread([num(r, 'err2') for r in sel])} | "
                         f"{spread(ratios, 2)} |")  # fmt: skip
    lines += ["", "## Schemas by column kind (exact shares of real records, NOT private; seed means)", "",
              "| arm | kind | merged into catch-all | clipped | cells (sum) | columns made numeric |",
              "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for arm in arms:
        sel = [r for r in ok if r["arm"] == arm and num(r, "merged_text") is not None]
        for g in ("text", "code", "numeric"):
            if sel:
                vals = {s: statistics.mean(num(r, f"{s}_{g}") for r in sel) for s in ("merged", "clipped", "cells",
                                                                                       "numeric")}  # fmt: skip
                lines.append(f"| {arm} | {g} | {100 * vals['merged']:.1f}% | {100 * vals['clipped']:.1f}% | "
                             f"{vals['cells']:.0f} | {vals['numeric']:.0f} |")  # fmt: skip
    extra = MD_PATH.with_suffix(".notes.md")
    if extra.exists():
        lines += ["", extra.read_text().rstrip()]
    MD_PATH.write_text("\n".join(lines) + "\n")
    stamp(__file__, MD_PATH, like=CSV_PATH)  # a page of the stored runs


# -- the driver ----------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--arm", default="none")
    ap.add_argument("--method", default="ppsyn")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arms", default="none,reviewed,product")
    ap.add_argument("--methods", default="ppsyn,mst")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.arm, a.method, a.seed)), flush=True)
        return
    if a.report:
        write_report()
        return
    table_path()  # written once, outside the measurements
    os.environ.update(SINGLE_THREAD)
    done = {tuple(r[k] for k in KEY) for r in load() if r["status"] == "ok"}
    for seed in a.seeds.split(","):
        for arm in a.arms.split(","):
            for method in ["-"] if arm == "product" else a.methods.split(","):
                if (arm, method, seed) in done:
                    continue
                print(f"{arm} {method} seed {seed} ...", flush=True)
                row = {"arm": arm, "method": method, "seed": seed}
                args = ["--arm", arm, "--method", method if method != "-" else "mst", "--seed", seed]
                try:
                    row.update(common.run_measured(__file__, args, timeout=a.timeout), status="ok")
                except common.RunTimeout:
                    row.update(status=f"timeout ({a.timeout:.0f} s)")
                except RuntimeError as exc:
                    row.update(status="error: " + (str(exc).strip().splitlines() or ["?"])[-1][:150].replace("|", "/"))
                print(f"  {row['status']} err2 {row.get('err2', '')} fit {row.get('synth_s', '')}", flush=True)
                save_row(row)
                write_report()


if __name__ == "__main__":
    main()
