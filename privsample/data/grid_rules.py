"""The rules that read a histogram of public cells: which cells hold records (the presence threshold), which hold
most of them (the core threshold, and where no cell passes it, the windows of consecutive cells that do: ``core``),
and the range of cells holding the records (``grid_range``), or none when the records cannot be told from the noise.
Post-processing of noisy counts, shared by private discovery's numeric grid (``privsample.data.numeric_discovery``),
its calendar (``calendar_discovery``), its edge cells (``edge_bounds``) and its null cells: nothing here reads a
record or draws noise, so these rules change no privacy guarantee (Dwork & Roth 2014, Prop. 2.1).
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
    "core",
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


def core(noisy: np.ndarray, sigma: float) -> tuple[int, int] | None:
    """(first, last) cell of the core: the cells whose noisy count passes :func:`core_threshold` (over all cells).
    Where none does (records spread over cells that each hold too few to pass), the same rule at coarser scales:
    the noisy sums of w consecutive cells, w = 2, 4, 8, ... up to the number of cells, have sd sqrt(w) sigma (the
    cells' noises are independent); at each scale a window passes ``core_threshold(windows) sqrt(w) sigma`` (a
    window of empty cells passes with probability <= PASS_FALSE over the scale's windows), and the first scale
    where some window passes gives the core: from the first cell of its first passing window to the last cell of
    its last. Windows run over every run of consecutive cells (across 0 too: the grid is ordered by value, and
    data around 0 fill the cells on both sides). None when no window passes at any scale: the records, if any,
    cannot be told from the noise. An all-empty histogram gives a core with probability at most PASS_FALSE at each
    scale, so at most PASS_FALSE (1 + floor(log2 cells)) in all (8e-3 for the 160 cells of the float grid).
    Post-processing."""
    n = len(noisy)
    passed = np.flatnonzero(noisy > core_threshold(n) * sigma)
    if len(passed):
        return int(passed[0]), int(passed[-1])
    total = np.concatenate(([0.0], np.cumsum(np.asarray(noisy, dtype=np.float64))))
    w = 2
    while w <= n:
        sums = total[w:] - total[:-w]  # the n - w + 1 windows of w cells
        passed = np.flatnonzero(sums > core_threshold(n - w + 1) * math.sqrt(w) * sigma)
        if len(passed):
            return int(passed[0]), int(passed[-1]) + w - 1
        w *= 2
    return None


def grid_range(noisy: np.ndarray, sigma: float, n_hat: float | None = None) -> tuple[int, int] | None:
    """(first, last) grid cell of the range: the :func:`core`, every cell between, then outward while the next cell
    passes :func:`presence_threshold` (or, over at most GAP_CELLS failing cells, GAP_SIGMAS sigma and that
    threshold). None when there is no core (no cell or window of cells holds records above the noise): the caller
    must not guess a range. Post-processing."""
    located = core(noisy, sigma)
    if located is None:
        return None
    i0, i1 = located
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
