"""The rules that read a histogram of public cells: which cells hold records (the presence threshold), which hold
most of them (the core threshold), and the range of cells holding the records (``grid_range``). Post-processing of
noisy counts, shared by private discovery's numeric grid (``privsample.data.numeric_discovery``), its calendar
(``calendar_discovery``), its edge cells (``edge_bounds``) and its null cells.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "EXTEND_SIGMAS",
    "STRICT_SIGMAS",
    "PRESENCE_SHARE",
    "GAP_CELLS",
    "GAP_SIGMAS",
    "PASS_FALSE",
    "core_threshold",
    "presence_threshold",
    "grid_range",
]

EXTEND_SIGMAS = 2.0  # the range grows over a cell (and a code keeps a value) whose noisy count passes this
STRICT_SIGMAS = 3.5  # the presence threshold rises up to this many sigmas (an empty cell passes: p = 2.3e-4)
PRESENCE_SHARE = 0.05  # ... as far as a cell holding this share of n_hat still passes with EXTEND_SIGMAS to spare
GAP_CELLS = 2  # the range also grows over this many failing cells to reach one passing GAP_SIGMAS
GAP_SIGMAS = 3.0  # a cell reached over failing ones must pass this (fewer noise cells reached: invented values)
PASS_FALSE = 1e-3  # chance that some empty cell passes the core threshold


def core_threshold(cells: int) -> float:
    """In sigmas: an empty cell's noisy count passes with probability <= PASS_FALSE over ``cells`` cells."""
    return math.sqrt(2.0 * math.log(max(cells, 1) / PASS_FALSE))


def presence_threshold(sigma: float, n_hat: float | None = None, sigmas: float = EXTEND_SIGMAS) -> float:
    """The noisy count above which a cell is taken to hold records (a range grows over it, a code keeps it, a
    column is nullable): ``sigmas`` sigma, raised towards ``STRICT_SIGMAS`` sigma only as far as a cell holding
    ``PRESENCE_SHARE`` of n_hat still passes with ``sigmas`` sigma to spare (PRESENCE_SHARE * n_hat - ``sigmas``
    sigma). A fixed number of sigmas lets an empty cell pass at the same rate (2.3% at 2 sigma) at every epsilon;
    this threshold keeps that rate where the noise is large against the records that matter (small tables, small
    epsilon: a value of 5% of the records must not be lost) and lowers it to 2.3e-4 where it is small. A function
    of sigma and n_hat (public or noisy): post-processing."""
    t = sigmas * sigma
    if n_hat is None:
        return t
    return max(t, min(STRICT_SIGMAS * sigma, PRESENCE_SHARE * float(n_hat) - t))


def grid_range(noisy: np.ndarray, sigma: float, n_hat: float | None = None) -> tuple[int, int]:
    """(first, last) grid cell of the range: the core (cells passing :func:`core_threshold`, or the largest
    cell), every cell between, then outward while the next cell passes :func:`presence_threshold` (or, over
    at most GAP_CELLS failing cells, GAP_SIGMAS sigma and that threshold). Post-processing."""
    passed = np.flatnonzero(noisy > core_threshold(len(noisy)) * sigma)
    if len(passed):
        i0, i1 = int(passed[0]), int(passed[-1])
    else:
        i0 = i1 = int(np.argmax(noisy))
    t_near = presence_threshold(sigma, n_hat)
    near, far = noisy > t_near, noisy > max(GAP_SIGMAS * sigma, t_near)
    while True:  # outward: the next cell passing EXTEND_SIGMAS, or one beyond failing cells passing GAP_SIGMAS
        step = next((k for k in range(1, GAP_CELLS + 2) if i0 - k >= 0 and (near if k == 1 else far)[i0 - k]), 0)
        if not step:
            break
        i0 -= step
    while True:
        step = next(
            (k for k in range(1, GAP_CELLS + 2) if i1 + k < len(noisy) and (near if k == 1 else far)[i1 + k]), 0
        )
        if not step:
            break
        i1 += step
    return i0, i1
