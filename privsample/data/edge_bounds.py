"""Bounds inside the records' range: a numeric column's bounds refined within the grid cells at its edges.

The grid of private discovery (``privsample.data.numeric_discovery``) gives bounds at cell edges: an octave
[2^k, 2^(k+1)) holding the largest values gives the bound 2^(k+1), often far above the largest value (ages up to
127 for a maximum of 90), so synthetic values would lie outside the real range. Where the noisy row count makes it
cheap (``edge_budget``), ``EDGE_SHARE`` of the grid's rho buys noisy counts of the records in ``EDGE_CELLS`` equal
sub-cells of each edge cell. The sub-cells holding records are the grid's rule again (``grid_rules.grid_range``:
from the sub-cells holding most of them outward over those passing 2 sigma); each bound moves inward to the inner
edge of the outermost such sub-cell, so that records lie beyond it unless noise made an empty sub-cell pass (about
2%), and the records of that sub-cell are clipped to it (about 1/``EDGE_CELLS`` of the edge cell); a sub-cell of one
integer gives its own value as the bound (the records hold it). Where no sub-cell clearly holds records (a tail
spread thin), the bound is the edge cell's inner end when the cell holds few records (they are clipped), else the
grid's bound stays; so does a bound whose sub-cells beyond hold a noisy ``EDGE_MAX_CLIP`` of the records or more (a
long thin tail that the grid's cells see and the sub-cells do not).

Guarantee: rho-zCDP under add/remove-one-record neighbours for the rho spent (charged before the noise is drawn):
the sub-cells are disjoint public intervals (the edge cells are outputs of the grid histogram), a record is in at
most one of them, so the vector of counts has L2 sensitivity 1; discrete Gaussian noise (Canonne, Kamath &
Steinke 2020). The cut and the bounds are post-processing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privsample.data.median_tree import exact_split
from privsample.data.grid_rules import core_threshold, grid_range
from privsample.privacy.mechanisms import gaussian_measure, sigma_for_rho

__all__ = ["EDGE_SHARE", "EDGE_CELLS", "EDGE_SIGMAS", "EDGE_MAX_CLIP", "edge_cut", "edge_budget", "inner_bounds"]

EDGE_SHARE = 0.2  # of the grid histogram's rho, where the refinement pays
EDGE_CELLS = 32  # equal sub-cells of an edge cell
EDGE_SIGMAS = 3.0  # ``edge_cut``: a bound has this many sd of noisy records beyond it
EDGE_MAX_CLIP = 0.02  # refine only where a sub-cell passing 2 sigma holds at most this share of n_hat


def edge_cut(noisy: np.ndarray, sigma: float, sigmas: float = EDGE_SIGMAS) -> int:
    """The first boundary j >= 1 (cells ordered from the outside in) with more than ``sigmas`` sd of noisy records
    before it (the sum of cells 0..j-1, sd sigma sqrt(j)); ``len(noisy)`` when there is none. Post-processing."""
    before = np.cumsum(np.asarray(noisy, dtype=float))
    j = np.arange(1, len(before) + 1)
    hit = np.flatnonzero(before > sigmas * sigma * np.sqrt(j))
    return int(hit[0]) + 1 if len(hit) else len(before)


def edge_budget(rho_grid: float, n_hat: float, max_rows: int = 1) -> tuple[float, float]:
    """(rho of the grid histogram, rho of the edge refinement): the refinement gets ``EDGE_SHARE`` where a sub-cell
    passing 2 sigma (what it may clip at one end) holds at most ``EDGE_MAX_CLIP`` of ``n_hat``, else nothing. A
    function of public values and n_hat (a noisy count); sigma is that of the privacy unit's k = ``max_rows``."""
    if not rho_grid > 0:
        return rho_grid, 0.0
    grid, part = exact_split(rho_grid, [1.0 - EDGE_SHARE, EDGE_SHARE])  # parts summing to rho_grid exactly
    if not part > 0 or 2.0 * sigma_for_rho(part, max_rows * 1.0) > EDGE_MAX_CLIP * max(float(n_hat), 1.0):
        return rho_grid, 0.0
    return grid, part


def _sub_edges(span: tuple[float, float], integer: bool) -> np.ndarray | None:
    """The boundaries of ``EDGE_CELLS`` equal sub-cells of a closed span (integers: at most one sub-cell per integer,
    whole-number boundaries); None when the span is too short to split."""
    a, b = span
    if integer:  # sub-cells of whole runs of integers (one integer each in a short span)
        k = int(min(EDGE_CELLS, b - a + 1))
        return np.unique(np.round(np.linspace(a, b + 1, k + 1))) if k >= 2 else None
    if not (b > a and math.isfinite(b - a)):
        return None
    return np.linspace(a, b, EDGE_CELLS + 1)


def _outermost(noisy: np.ndarray | None, sigma: float, end: int, n_hat: float) -> int | None:
    """The outermost sub-cell holding records at the low (``end`` 0) or high (1) end, or None to keep the grid's
    bound. Where some sub-cell passes the core threshold: the grid's range of cells (``grid_range`` at a flat 2
    sigma). Else (a tail spread thin): past the cells (len, or -1: the whole cell is clipped) when its noisy count is
    under ``EDGE_MAX_CLIP`` of ``n_hat`` by 2 sd, else None. Post-processing."""
    if noisy is None:
        return None
    if np.any(noisy > core_threshold(len(noisy)) * sigma):
        return grid_range(noisy, sigma)[end]
    if float(noisy.sum()) + 2.0 * sigma * math.sqrt(len(noisy)) > EDGE_MAX_CLIP * n_hat:  # not surely few
        return None
    return len(noisy) if end == 0 else -1


def inner_bounds(
    name: str, xw: tuple[np.ndarray, np.ndarray], cell_of: np.ndarray, cells: tuple[int, int],
    spans: tuple[tuple[float, float], tuple[float, float]], bounds: tuple[float, float], integer: bool, accountant,
    noise, rho: float, n_hat: float,
) -> tuple[float, float, dict[str, Any]]:  # fmt: skip
    """(lower, upper, report) of a column whose range runs from the edge grid cell ``cells[0]`` to ``cells[1]`` (the
    same cell twice for a range of one cell), with closed ``spans``; ``cell_of``: each value's grid cell (so a record
    is counted in the one cell the grid put it in), ``bounds`` the grid's. Spends ``rho`` (module docstring). The
    report holds the noisy count of the records clipped at the new bounds (``edge_clipped``) and its sd."""
    x, w = xw
    lo_edges, hi_edges = _sub_edges(spans[0], integer), _sub_edges(spans[1], integer)
    same = spans[0] == spans[1]
    parts = [e for e in (lo_edges, None if same else hi_edges) if e is not None]
    counts = []
    members = [cells[0]] if same else [c for c, e in zip(cells, (lo_edges, hi_edges)) if e is not None]
    for c, e in zip(members, parts):  # records per sub-cell of their own grid cell
        inside = cell_of == c
        idx = np.clip(np.searchsorted(e, x[inside], side="right") - 1, 0, len(e) - 2)
        counts.append(np.bincount(idx, weights=w[inside], minlength=len(e) - 1))
    true = np.rint(np.concatenate(counts)).astype(np.int64) if counts else np.zeros(0, np.int64)
    noisy, sigma = gaussian_measure(
        accountant, noise, true, rho, f"schema: {name}: edge cells",
        measured="counts of the values in equal sub-cells of the grid cells at the bounds",
    )  # fmt: skip
    noisy = np.asarray(noisy, dtype=float)
    lower, upper = bounds
    clipped, cells_cut = 0.0, 0
    n_lo = len(lo_edges) - 1 if lo_edges is not None else 0
    lo_noisy = noisy[:n_lo] if lo_edges is not None else None
    hi_noisy = (lo_noisy if same else noisy[len(noisy) - (len(hi_edges) - 1) :]) if hi_edges is not None else None
    q = _outermost(lo_noisy, sigma, 0, n_hat)  # the lowest sub-cell holding records (len: none clearly does)
    r = _outermost(hi_noisy, sigma, 1, n_hat)  # the highest (-1: none clearly does)
    if same and q is not None and r is not None and (q + 1 >= r or q == len(lo_noisy) or r < 0):
        q = r = None  # no room inside one cell: keep the grid's bounds
    limit = EDGE_MAX_CLIP * max(float(n_hat), 1.0)  # a bound that would clip more (a noisy estimate) is not taken
    if q is not None:  # the bound at the top of the lowest sub-cell holding records (which is clipped to it) ...
        q = min(q, len(lo_noisy) - 1)  # (no sub-cell clearly holds records: the whole sparse cell is clipped)
        one = integer and lo_edges[q + 1] - lo_edges[q] == 1  # ... or at its value, where it holds one integer
        cut = q if one else q + 1
        if float(lo_noisy[:cut].sum()) <= limit:
            lower = float(lo_edges[cut])
            clipped, cells_cut = clipped + float(lo_noisy[:cut].sum()), cells_cut + cut
    if r is not None:
        r = max(r, 0)
        one = integer and hi_edges[r + 1] - hi_edges[r] == 1
        cut = r + 1 if one else r
        if float(hi_noisy[cut:].sum()) <= limit:
            upper = float(hi_edges[cut]) - (1.0 if integer else 0.0)
            clipped, cells_cut = clipped + float(hi_noisy[cut:].sum()), cells_cut + len(hi_noisy) - cut
    if upper < lower:
        lower, upper = bounds
        clipped, cells_cut = 0.0, 0
    return lower, upper, {"edge_clipped": clipped, "edge_clipped_sd": sigma * math.sqrt(max(cells_cut, 1))}
