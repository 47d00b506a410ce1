"""Bin edges at private quantiles: a tree of private medians over public candidates, for one numeric column.

``median_tree`` splits the column's range [lower, upper] recursively: level l splits each of the 2^(l-1)
current cells (public intervals) at a median chosen by the exponential mechanism (McSherry & Talwar 2007) over
public candidates inside the cell (``split_candidates``: linear points plus the points of ``bound_grid``), scoring
u(c) = -|#{y in cell: y < c} - #cell / 2| over the column's clipped values y (the recursive splitting of Kaplan,
Schnapp & Stemmer 2022, "Differentially private approximate quantiles").

Guarantee: each level is rho_l-zCDP (an exponential mechanism with epsilon_l is epsilon_l^2 / 8-zCDP; Cesar &
Rogers 2021) under add/remove-one-record neighbours, and the levels compose adaptively (a level's cells are
the earlier levels' outputs). Sensitivity: one record lies in exactly one cell of a level and changes that
cell's score by at most 1/2 (the count below c by 1 or 0, the half size by 1/2); the cells of a level are
disjoint, so a level costs one selection's rho_l (parallel composition). Each level is charged before its
selections are drawn. The values may be given with multiplicities (``weights``: each distinct value and its
number of records): the scores are the same counts, so the same mechanism.
Under the accountant's privacy unit (one person, at most k records; ``privsample.privacy.unit``) every selection
runs with score sensitivity k/2: each cell holding c_j of the person's records (sum_j c_j <= k) is then
(epsilon_l c_j / k)-DP, so a level is still epsilon_l-DP, epsilon_l^2 / 8-zCDP.

``tree_levels`` plans how many levels a budget supports from a noisy record count (public).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.privacy.mechanisms import epsilon_for_rho
from privsample.privacy.noise import SEEDED_LABEL

__all__ = [
    "GRID_STEPS",
    "INT_GRID",
    "MIN_TREE_LEVELS",
    "SPLIT_CANDIDATES",
    "TREE_MARGIN",
    "bound_grid",
    "exact_split",
    "median_scores",
    "median_tree",
    "split_candidates",
    "tree_levels",
]

FLOAT_MIN_EXPONENT = -8  # as the grid of ``numeric_discovery``: float octaves down to +-2^-8
MAX_EXPONENT = 63
INT_MAX_EXPONENT = 52
GRID_STEPS = 16  # geometric candidate points per octave for the median tree (4.4% apart)
INT_GRID = 128  # every integer in [-128, 128] is a median candidate
TREE_MARGIN = 16.0  # a tree level runs if its cells hold >= TREE_MARGIN times the median's rank error
MIN_TREE_LEVELS = 2  # a tree shallower than this is not worth its budget: equal-mass bins instead
SPLIT_CANDIDATES = 128  # linear candidates per cell for a median (plus grid points inside the cell)
CANDIDATES = 2 * SPLIT_CANDIDATES + GRID_STEPS * 8  # the candidate count a plan assumes


def bound_grid(integer: bool) -> np.ndarray:
    """The public candidate points, sorted: integers in [-INT_GRID, INT_GRID] and +-2^(j/GRID_STEPS)."""
    kmin = 0 if integer else FLOAT_MIN_EXPONENT
    kmax = INT_MAX_EXPONENT if integer else MAX_EXPONENT
    pos = np.exp2(np.arange(kmin * GRID_STEPS, kmax * GRID_STEPS + 1) / GRID_STEPS)
    if integer:
        pos = np.ceil(pos)
    ints = np.arange(-INT_GRID, INT_GRID + 1, dtype=float)
    return np.unique(np.concatenate([-pos, ints, pos]))


def exact_split(total: float, weights: list[float]) -> list[float]:
    """Floats proportional to ``weights`` whose exact sum is ``total``: every part but the last is rounded
    down to a multiple of ulp(total), so the remainder is a multiple of it below total, hence a float."""
    u = math.ulp(total)
    w = math.fsum(weights)
    parts = [math.floor(Fraction(total) * Fraction(wi) / Fraction(w) / Fraction(u)) * u for wi in weights[:-1]]
    last = Fraction(total) - sum((Fraction(p) for p in parts), Fraction(0))
    parts.append(float(last))
    assert Fraction(parts[-1]) == last and last >= 0
    return parts


def tree_levels(
    rho_tree: float, n_rest: float, max_levels: int, candidates: int = CANDIDATES, max_rows: int = 1
) -> int:
    """Deepest level count L <= max_levels whose smallest cells (n_rest / 2^(L-1) records expected)
    hold TREE_MARGIN times the rank error k ln(m) / epsilon_L of a median (sensitivity k/2, k = ``max_rows`` the
    privacy unit's). Public."""
    for levels in range(max_levels, 0, -1):
        eps = epsilon_for_rho(rho_tree / levels)
        if n_rest / 2.0 ** (levels - 1) >= max_rows * TREE_MARGIN * (math.log(candidates) + 1.0) / eps:
            return levels
    return 0


def split_candidates(a: float, b: float, integer: bool, grid: np.ndarray) -> np.ndarray:
    """Public candidate split points strictly inside (a, b): half-integers for integer columns."""
    if integer:
        lo, hi = math.floor(a) + 0.5, math.ceil(b) - 0.5
        if hi < lo:
            return np.zeros(0)
        if hi - lo <= 2 * SPLIT_CANDIDATES:
            c = np.arange(lo, hi + 0.5, 1.0)
        else:
            inner = grid[(grid > a) & (grid < b)]
            c = np.floor(np.concatenate([np.linspace(a, b, SPLIT_CANDIDATES + 1), inner])) + 0.5
    else:
        inner = grid[(grid > a) & (grid < b)]
        c = np.concatenate([np.linspace(a, b, SPLIT_CANDIDATES + 1), inner])
    c = np.unique(c)
    return c[(c > a) & (c < b)]


def median_scores(cell: np.ndarray, cand: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """u(c) = -|#{y < c} - #cell / 2| for the sorted values of one cell (each counted ``weights`` times, or once):
    sensitivity 1/2."""
    if weights is None:
        return -np.abs(np.searchsorted(cell, cand, side="left") - 0.5 * len(cell))
    cw = np.concatenate([[0], np.cumsum(np.asarray(weights, dtype=np.int64))])
    return -np.abs(cw[np.searchsorted(cell, cand, side="left")] - 0.5 * cw[-1])


def _details(noise) -> dict[str, Any]:
    return {} if noise.private else {"note": SEEDED_LABEL}


def median_tree(name, y, lower, upper, integer, grid, levels, accountant, noise, rho_tree, weights=None):
    """Split points from ``levels`` levels of private medians (one spend per level, parallel cells; see the
    module docstring for the guarantee). ``y``: the clipped non-point values (sorted, or they are sorted), each
    counted ``weights`` times (its number of records) or once."""
    cuts: list[float] = []
    rhos = exact_split(rho_tree, [1.0] * levels)
    y = np.asarray(y)
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    if len(y) >= 2 and not bool(np.all(y[1:] >= y[:-1])):  # the values usually come sorted from a scan
        order = np.argsort(y, kind="stable")
        y, w = y[order], (None if w is None else w[order])
    if w is not None and bool(np.all(w == 1)):
        w = None  # one record per value: positions are counts (no prefix sums to hold in memory)
    cw = None if w is None else np.concatenate([[0], np.cumsum(w)])  # records before each position
    score_sensitivity = accountant.unit.sensitivity(0.5)  # k/2 under a person-level unit (module docstring)

    def before(i):
        return i if cw is None else cw[i]

    for level, rho in enumerate(rhos, start=1):
        eps = epsilon_for_rho(rho)
        accountant.spend(
            rho,
            f"schema: {name}: bin edges level {level}",
            mechanism="exponential",
            measured=f"median of each of the {2 ** (level - 1)} disjoint cells over public candidates",
            noise_scale=2.0 * score_sensitivity / eps,
            private=noise.private,
            sensitivity=0.5,
            epsilon=eps,
            cells=2 ** (level - 1),
            **_details(noise),
        )
        bounds = [lower] + sorted(cuts) + [upper]
        for a, b in zip(bounds, bounds[1:]):
            cand = split_candidates(a, b, integer, grid)
            if len(cand) == 0:
                continue  # a public fact about (a, b): nothing to choose, nothing released
            i0 = np.searchsorted(y, a, side="left")
            i1 = np.searchsorted(y, b, side="right" if b == upper else "left")
            below = before(np.searchsorted(y, cand, side="left")) - before(i0)  # the cell's records below each
            scores = -np.abs(below - 0.5 * (before(i1) - before(i0)))
            cuts.append(float(cand[noise.exponential(scores, eps, score_sensitivity)]))
    return sorted(set(cuts))
