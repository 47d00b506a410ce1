"""Helpers shared by the benchmarks: data loading and one-subprocess-per-run workers."""

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
