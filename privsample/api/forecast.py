"""The planner's forecasts of a run's time and peak memory, from public features and a calibration.

``features`` describes a run from public quantities (rows, domain sizes, budget); ``predict`` applies the fitted
formulas of ``plan_calibration.json`` (fitted by ``benchmarks/planner.py``); ``machine_speed`` scales them to this
machine now (a fixed NumPy probe and the load average). Used by ``privsample plan`` (``privsample.api.plan``) and by
``--method auto`` (``privsample.api.choice``). Nothing here reads a record.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Sequence

CALIBRATION = Path(__file__).with_name("plan_calibration.json")


def features(rows: float, sizes: Sequence[int], rho: float) -> dict[str, float]:
    """Public features of a run for the calibration: rows, columns, rows x columns, cells of all pairs, cells of
    the largest pair (the two largest columns), the geometric mean of the columns' sizes, budget."""
    s = [float(x) for x in sizes]
    total, squares = sum(s), sum(x * x for x in s)
    top = sorted(s)[-2:]
    return {
        "rows": float(rows),
        "cols": float(len(s)),
        "cells": float(rows) * len(s),
        "pair_cells": max((total * total - squares) / 2.0, 1.0),
        "max_pair_cells": max(math.prod(top), 1.0) if len(top) == 2 else 1.0,
        "size_gmean": math.exp(sum(math.log(max(x, 1.0)) for x in s) / max(len(s), 1)),
        "rho": float(rho),
    }


def predict(method: str, feats: dict[str, float], calibration: dict, speed: float) -> tuple[float, float]:
    """(seconds, peak RSS MB) from the calibration's formulas: seconds = speed * exp(a + sum b_k log f_k)
    and MB = c0 + sum c_k f_k (coefficients per method, fitted by benchmarks/planner.py)."""
    m = calibration["methods"][method]
    log_t = m["time"]["intercept"] + sum(b * math.log(feats[k]) for k, b in m["time"]["log"].items())
    seconds = speed * math.exp(log_t)
    mb = m["memory"]["intercept"] + sum(c * feats[k] * scale for k, (c, scale) in m["memory"]["linear"].items())
    return seconds, mb


def load_calibration() -> dict:
    with open(CALIBRATION, encoding="utf-8") as fh:
        return json.load(fh)


def speed_probe() -> float:
    """Seconds a fixed NumPy job takes here now (counts and a sort, about 0.2 s on the reference machine)."""
    import numpy as np

    rng = np.random.default_rng(0)  # not noise: a fixed workload
    x = rng.integers(0, 1000, 2_000_000)
    times = []
    for _ in range(3):  # three rounds, the median (robust to one hiccup), scaled to the three rounds' time
        t0 = time.perf_counter()
        np.bincount(x * 7 % 997, minlength=1000)
        np.sort(x[:500_000])
        times.append(time.perf_counter() - t0)
    return 3 * sorted(times)[1]


def load_factor(load: float, cores: int | None = None) -> float:
    """How much slower a CPU-bound run is expected to be at this 1-minute load average: (load + 1) / cores,
    at least 1 (a run shares the cores with ``load`` others)."""
    import os

    cores = cores or os.cpu_count() or 1
    return max(1.0, (float(load) + 1.0) / cores)


def machine_speed(calibration: dict) -> float:
    """Time factor against the calibration runs: the geometric mean of the probe's (``speed_probe`` over its
    reference scaled to the runs' load) and of the load average's (``load_factor`` over the runs'), two noisy views
    of the same slowdown; both load scalings raised to the calibration's ``load_exponent`` (how much the load
    average before a run explained its time); in [0.25, 8]."""
    import os

    k = calibration.get("load_exponent", 1.0)
    probe = speed_probe() / (calibration["probe_seconds"] * calibration["load_factor"] ** k)
    load = (load_factor(os.getloadavg()[0]) / calibration["load_factor"]) ** k
    return min(max(math.sqrt(probe * load), 0.25), 8.0)


def size_check(method: str, domain, schema, limit: float) -> tuple[float | None, str | None]:
    """(memory bound MB of ``method``'s size check before any spend, or None; a refusal message, or None): what a
    run with ``--max-memory-mb limit`` would check (``privsample plan`` and ``--method auto``)."""
    from privsample.errors import PrivsampleError
    from privsample.synth.registry import make_synthesizer

    try:
        mb = make_synthesizer(method, max_memory_mb=1e18).check_size(domain, schema)
    except PrivsampleError as exc:  # max_model_size too small: refused whatever the memory limit
        return None, " ".join(str(exc).split())
    if mb > limit:
        return mb, f"this domain needs --max-memory-mb {math.ceil(mb / 100) * 100:.0f}"
    return mb, None


def duration(s: float) -> str:
    """Seconds as a reader wants them: '42 s', '7 min', '2.5 h'."""
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


__all__ = [
    "size_check",
    "duration",
    "CALIBRATION",
    "features",
    "predict",
    "load_calibration",
    "speed_probe",
    "load_factor",
    "machine_speed",
]
