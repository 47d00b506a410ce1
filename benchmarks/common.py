"""Helpers shared by the benchmarks: data loading, seeded Bayesian-network and latent-class tables and
one-subprocess-per-run workers."""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"

# this checkout's privsample first, not an installed copy (an editable install of another checkout included)
if sys.path[:1] != [str(ROOT)]:
    sys.path.insert(0, str(ROOT))


def worker_parser(default_epsilons: str = "1,0.1") -> argparse.ArgumentParser:
    """Arguments every variant benchmark takes: one run (``--worker --epsilon --seed --variant``) or a grid
    of ``--epsilons``."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", default="ours")
    ap.add_argument("--epsilons", default=default_epsilons)
    return ap


def load_discretised(name: str = "adult"):
    """A NumpyEngine on ../shared/data/<name>.csv with its public domain file."""
    import pandas as pd

    from privsample.marginals import NumpyEngine
    from privsample.synth import pgm

    dom = json.loads((DATA / f"{name}-domain.json").read_text())
    df = pd.read_csv(DATA / f"{name}.csv")
    domain = pgm.Domain(list(dom), [int(v) for v in dom.values()])
    return NumpyEngine({a: df[a].to_numpy().astype("int64") for a in dom}, domain)


def process_wall_s() -> float:
    """Seconds since this process started (interpreter, imports and JAX start-up included)."""
    import psutil

    return time.time() - psutil.Process().create_time()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_worker(script: str, args: list[str]) -> dict:
    """Run ``script --worker ARGS`` in a fresh interpreter and parse the JSON on its last stdout line."""
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, script, "--worker", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-3000:])
    row = json.loads(p.stdout.strip().splitlines()[-1])
    row["process_s"] = time.perf_counter() - t0
    return row


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = list(rows[0])
    with open(path, "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(str(r[k]) for k in keys) + "\n")


# -- tables drawn from a seeded random Bayesian network -------------------------------------------------
def default_size(rng) -> int:
    return int(rng.integers(2, 11))


def network(
    d: int,
    seed: int,
    kinds: list[str],
    size=default_size,
    max_parents: int = 3,
    max_configs: int | None = None,
    alpha: float = 0.5,
) -> list[dict]:
    """A random DAG over ``d`` nodes in topological order: {name, size, parents, cpt (configs x size), kind}.

    Each node has ``size(rng)`` values, up to ``max_parents`` parents drawn among the earlier nodes and
    Dirichlet(``alpha``) CPTs (smaller: stronger dependencies); ``max_configs`` drops the last parents while their
    joint size is above it (bounded CPTs for wide tables). ``kinds[i]``: the column's type (``to_arrow``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    nodes: list[dict] = []
    for i in range(d):
        k_size = size(rng)
        k = int(min(i, rng.integers(0, max_parents + 1)))
        parents = sorted(int(p) for p in rng.choice(i, size=k, replace=False)) if k else []
        if max_configs is not None:
            while parents and int(np.prod([nodes[p]["size"] for p in parents])) > max_configs:
                parents.pop()
        configs = int(np.prod([nodes[p]["size"] for p in parents])) if parents else 1
        cpt = rng.dirichlet(np.full(k_size, alpha), size=configs)
        nodes.append({"name": f"x{i:02d}", "size": k_size, "parents": parents, "cpt": cpt, "kind": kinds[i]})
    return nodes


def network_schema(nodes: list[dict]):
    """The public schema of a network's table (codes = the network's values), provenance "user".

    ``text``: nullable categories, the last value written as a missing value; ``float``: values in
    [0, size) binned by unit bins; ``int``: integer categories; ``intnum``: an integer ``Numeric`` column."""
    from privsample.data.schema import Categorical, Numeric, Schema

    cols = []
    for node in nodes:
        name, k, kind = node["name"], node["size"], node["kind"]
        if kind == "text":
            cols.append(Categorical(name, tuple(f"{name}_{v}" for v in range(k - 1)), nullable=True))
        elif kind == "float":
            cols.append(Numeric(name, 0.0, float(k), bins=k))
        elif kind == "int":
            cols.append(Categorical(name, tuple(str(v) for v in range(k))))
        else:
            cols.append(Numeric(name, 0, k - 1, bins=k, integer=True))
    return Schema(cols)


def sample_codes(nodes: list[dict], n: int, rng) -> list:
    """n ancestral samples of the network: one code array per node."""
    import numpy as np

    codes: list = []
    for node in nodes:
        config = np.zeros(n, dtype=np.int64)
        for p in node["parents"]:
            config = config * nodes[p]["size"] + codes[p]
        cdf = np.cumsum(node["cpt"], axis=1)[config]
        u = rng.random(n)
        codes.append(np.minimum((u[:, None] > cdf).sum(axis=1), node["size"] - 1).astype(np.int64))
    return codes


def to_arrow(nodes: list[dict], codes: list, rng):
    """The records as an Arrow table, by kind (``network_schema``)."""
    import numpy as np
    import pyarrow as pa

    cols = {}
    for node, c in zip(nodes, codes):
        name, k, kind = node["name"], node["size"], node["kind"]
        if kind == "text":
            labels = np.array([f"{name}_{v}" for v in range(k - 1)] + [None], dtype=object)
            cols[name] = pa.array(labels[c], type=pa.string())
        elif kind == "float":
            cols[name] = pa.array(c + rng.random(len(c)))
        else:
            cols[name] = pa.array(c)
    return pa.table(cols)


def write_network_table(
    nodes: list[dict], rows: int, path: Path, seed: int, chunk: int = 1_000_000, convert=None
) -> Path:
    """Write ``rows`` samples of the network to the Parquet file ``path`` in chunks (never the whole table in
    memory); an existing file is kept. ``convert(nodes, codes, rng)``: codes -> Arrow table (default ``to_arrow``)."""
    import numpy as np
    import pyarrow.parquet as pq

    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    writer = None
    t0 = time.perf_counter()
    for start in range(0, rows, chunk):
        table = (convert or to_arrow)(nodes, sample_codes(nodes, min(chunk, rows - start), rng), rng)
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema, compression="snappy")
        writer.write_table(table, row_group_size=chunk)
    writer.close()
    os.replace(tmp, path)
    size = path.stat().st_size / 2**20
    print(f"wrote {path} ({rows:,} rows, {size:.0f} MB) in {time.perf_counter() - t0:.0f}s", flush=True)
    return path


# -- measured subprocesses ------------------------------------------------------------------------------
class RunTimeout(RuntimeError):
    """A measured run passed its time limit and was stopped."""


def run_measured(script: str, args: list[str], timeout: float | None = None) -> dict:
    """Run ``script --worker ARGS`` in a fresh interpreter; parse the JSON on its last stdout line.

    ``peak_rss_mb``: the largest RSS of the worker's process tree, sampled every 0.1 s (and the worker's own
    ``self_rss_mb``, if it reports one); ``process_s``: wall time. After ``timeout`` seconds the tree is
    killed and ``RunTimeout`` raised (with the peak so far in ``.peak_rss_mb``); a failed run raises
    ``RuntimeError`` with the end of its stderr (``.peak_rss_mb`` too)."""
    import psutil

    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, script, "--worker", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    peak = 0
    proc = psutil.Process(p.pid)
    timed_out = False
    while p.poll() is None:
        try:
            tree = [proc] + proc.children(recursive=True)
            peak = max(peak, sum(q.memory_info().rss for q in tree if q.is_running()))
        except psutil.Error:
            pass
        if timeout is not None and time.perf_counter() - t0 > timeout:
            for q in proc.children(recursive=True):
                q.kill()
            p.kill()
            timed_out = True
            break
        time.sleep(0.1)
    stdout, stderr = p.communicate()
    if timed_out or p.returncode != 0:
        exc = RunTimeout(f"timeout after {timeout:.0f} s") if timed_out else RuntimeError(stderr[-3000:])
        exc.peak_rss_mb = peak / 2**20
        raise exc
    row = json.loads(stdout.strip().splitlines()[-1])
    row["peak_rss_mb"] = max(peak / 2**20, row.pop("self_rss_mb", 0.0))
    row["process_s"] = time.perf_counter() - t0
    return row


# -- tables drawn from a seeded latent-class model ------------------------------------------------------
def latent_class_model(
    d: int, seed: int, kinds: list[str], classes: int = 6, concentration: float = 1.0, size=default_size
) -> list[dict]:
    """A latent-class model as network nodes (``network``'s format): a hidden first node ``class`` (``classes``
    values, mixing weights Dirichlet(2)) and ``d`` columns whose only parent is the class.

    Column i has ``size(rng)`` values (default 2-10), a shared base distribution b ~ Dirichlet(1) and, for each
    class, P(x_i | class) ~ Dirichlet(``concentration`` * size * b): the classes differ moderately around the base
    (larger ``concentration``: smaller differences), so every pair of columns is weakly dependent through the
    class and no pair strongly (as in surveys). ``kinds[i]``: the column's type (``to_arrow``). Drop the first
    node for the table's schema and columns (``latent_columns``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(classes, 2.0))
    nodes = [{"name": "class", "size": classes, "parents": [], "cpt": weights[None, :], "kind": "int"}]
    for i in range(d):
        k = size(rng)
        base = rng.dirichlet(np.ones(k))
        cpt = rng.dirichlet(concentration * k * base, size=classes)
        cpt = np.maximum(cpt, 1e-12)
        nodes.append({"name": f"x{i:03d}", "size": k, "parents": [0], "cpt": cpt / cpt.sum(1, keepdims=True),
                      "kind": kinds[i]})  # fmt: skip
    return nodes


def latent_columns(nodes: list[dict], codes: list, rng):
    """``to_arrow`` of a latent-class model's records without the hidden class (``write_network_table``'s
    ``convert``)."""
    return to_arrow(nodes[1:], codes[1:], rng)
