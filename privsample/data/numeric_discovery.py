"""Private discovery of one numeric column's public domain: bounds, point masses and bins.

``discover_numeric`` turns the numbers of one column into a ``Numeric`` schema column with
differential privacy and never gives up: it always returns finite bounds and valid bins, however
small or empty the column is (with little data the bounds are just less accurate).

Guarantee: (rho, delta)-approximate zCDP (Bun & Steinke 2016, Def. 8.1) under add/remove-one-record
neighbours, for exactly ``rho`` and at most ``delta`` spent through the accountant (the amounts never
depend on the data). Steps, each charged before its noise is drawn, composed adaptively (every step
only uses the data and the earlier *noisy* outputs; a record touches the column once). Each step's
function gives its sensitivity argument in full:

1. Bounds (``BOUNDS_SHARE`` of rho, half per bound; all but the point share when no tree is planned).
   Half of the bounds' share first pays for a coarse histogram: discrete Gaussian counts in public
   log-scale buckets [+-2^k, +-2^(k+1)) (one record in one bucket: L2 sensitivity 1, rho_h-zCDP;
   :func:`_coarse_range`). Where some bucket passes, the range runs from the lowest to the highest passing
   bucket, and the rest of the bounds' share refines it: noisy counts in linear sub-buckets of the two
   extreme buckets (disjoint cells, sensitivity 1; :func:`_refine_range`). Otherwise that share pays for
   the exponential mechanism (McSherry & Talwar 2007) selecting a low and a high q-quantile cell of a
   PUBLIC grid (sensitivity max(q, 1 - q) <= 1, rho_b-zCDP; :func:`_select_bound`), q planned from the
   noisy record count ``n_hat``. Which step runs is post-processing of the histogram; the cost is the same
   either way. lower <= upper by post-processing.
2. Point masses (``POINT_SHARE``; skipped for unit bins): values of the column clipped to the bounds (a
   per-record map) that hold a large share get a bin of their own: the stability-based histogram
   (Korolova et al. 2009; Bun & Steinke 2016 section 8), (rho_p, delta)-approximate zCDP; with delta = 0
   only the public candidate 0 is counted (pure rho_p-zCDP; :func:`_point_masses`).
3. Bin edges (the rest): equal-frequency edges from a tree of private medians (the recursive splitting of
   Kaplan, Schnapp & Stemmer 2022; :func:`_median_tree`): sensitivity 1/2 within a cell and disjoint cells,
   so a level costs one selection's rho_l. The number of levels is planned from n_hat, rho and ``bins``
   (public) before anything is spent; if fewer than ``MIN_TREE_LEVELS`` levels pay (``TREE_MARGIN``), the
   tree's share goes to the bounds and the bins are equal width. Cells get equal-width sub-bins up to
   ``bins`` (public). A share that the plan cannot use once the bounds are out (unit bins need no points
   and no tree) is still charged, so the cost never depends on the data.

Integer columns whose range holds at most ``UNIT_MAX`` integers get unit bins (every value is
recovered exactly). Point bins are [v - 1/2, v + 1/2) for integers and [v, nextafter(v)) for floats,
which ``privsample.data.encoding.decode`` turns back into exactly v. Values outside the bounds are
clipped by the encoder (a fixed per-record rule). How the margins and the binning were chosen:
benchmarks/results/numeric_discovery.md.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.data.schema import Numeric
from privsample.privacy.mechanisms import epsilon_for_rho, sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL

__all__ = [
    "discover_numeric",
    "point_edges",
    "bound_grid",
    "design_quantile",
    "BOUNDS_SHARE",
    "POINT_SHARE",
    "UNIT_MAX",
    "POINT_MIN_SHARE",
    "HIST_SHARE",
    "coarse_edges",
    "GRID_STEPS",
    "INT_GRID",
    "INT_MAX_EXPONENT",
    "BOUND_MARGIN",
    "Q_MIN",
    "Q_MAX",
    "TREE_MARGIN",
    "MIN_TREE_LEVELS",
]

BOUNDS_SHARE = 0.4  # share of the column's rho for the bounds
HIST_SHARE = 0.5  # of the bounds' share: the coarse log-scale histogram; the rest for the two quantiles
REFINE_CELLS = 16  # linear sub-buckets of each extreme passing bucket
REFINE_SIGMAS = 3.0  # a sub-bucket passes above 3 sigma
POINT_SHARE = 0.2  # share for the point masses; the rest pays for the bin edges
UNIT_MAX = 32  # integer ranges with at most this many integers get unit bins
POINT_MIN_SHARE = 0.03  # a point mass needs a noisy count above this share of n_hat (and above tau)
GRID_STEPS = 16  # geometric grid points per octave (4.4% apart)
INT_GRID = 128  # every integer in [-128, 128] is a candidate
FLOAT_MIN_EXPONENT = -8  # float grid goes down to +-2^-8
MAX_EXPONENT = 63  # outermost candidates +-2^63 (floats)
INT_MAX_EXPONENT = 52  # integer columns: +-2^52 (half-integers are exact below 2^52)
BOUND_MARGIN = 2.0  # q n_hat = BOUND_MARGIN * (ln m + 2) * 2 / epsilon: a far cell wins with prob. <= e^-4 / m
Q_MIN, Q_MAX = 0.005, 0.5  # design tail shares are kept within [Q_MIN, Q_MAX]
TREE_MARGIN = 16.0  # a tree level runs if its cells hold >= TREE_MARGIN times the median's rank error
MIN_TREE_LEVELS = 2  # a tree shallower than this is not worth its budget: equal width instead
SPLIT_CANDIDATES = 128  # linear candidates per cell for a median (plus grid points inside the cell)


# ---------------------------------------------------------------------------------------------------
# Public grids and plans (data-independent)
# ---------------------------------------------------------------------------------------------------
def bound_grid(integer: bool) -> np.ndarray:
    """The public candidate bounds, sorted: integers in [-INT_GRID, INT_GRID] and +-2^(j/GRID_STEPS)."""
    kmin = 0 if integer else FLOAT_MIN_EXPONENT
    kmax = INT_MAX_EXPONENT if integer else MAX_EXPONENT
    pos = np.exp2(np.arange(kmin * GRID_STEPS, kmax * GRID_STEPS + 1) / GRID_STEPS)
    if integer:
        pos = np.ceil(pos)
    ints = np.arange(-INT_GRID, INT_GRID + 1, dtype=float)
    return np.unique(np.concatenate([-pos, ints, pos]))


def design_quantile(rho_bound: float, n_hat: float, candidates: int) -> float:
    """Tail share q for a bound selected with ``rho_bound``: q n_hat is BOUND_MARGIN times the rank error
    2 (ln m + 2) / epsilon of the exponential mechanism, kept within [Q_MIN, Q_MAX] (public)."""
    eps = epsilon_for_rho(rho_bound)
    need = BOUND_MARGIN * 2.0 * (math.log(candidates) + 2.0) / eps
    return float(min(Q_MAX, max(Q_MIN, need / max(float(n_hat), 1.0))))


def _split(total: float, weights: list[float]) -> list[float]:
    """Floats proportional to ``weights`` whose exact sum is ``total``: every part but the last is rounded
    down to a multiple of ulp(total), so the remainder is a multiple of it below total, hence a float."""
    u = math.ulp(total)
    w = math.fsum(weights)
    parts = [math.floor(Fraction(total) * Fraction(wi) / Fraction(w) / Fraction(u)) * u for wi in weights[:-1]]
    last = Fraction(total) - sum((Fraction(p) for p in parts), Fraction(0))
    parts.append(float(last))
    assert Fraction(parts[-1]) == last and last >= 0
    return parts


def _tree_levels(rho_tree: float, n_rest: float, max_levels: int, candidates: int) -> int:
    """Deepest level count L <= max_levels whose smallest cells (n_rest / 2^(L-1) records expected)
    hold TREE_MARGIN times the rank error ln(m) / epsilon_L of a median (sensitivity 1/2). Public."""
    for levels in range(max_levels, 0, -1):
        eps = epsilon_for_rho(rho_tree / levels)
        if n_rest / 2.0 ** (levels - 1) >= TREE_MARGIN * (math.log(candidates) + 1.0) / eps:
            return levels
    return 0


def _split_candidates(a: float, b: float, integer: bool, grid: np.ndarray) -> np.ndarray:
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


def _equal_width(a: float, b: float, k: int, integer: bool) -> np.ndarray:
    """Inner edges splitting [a, b] into k equal-width pieces (half-integers for integer columns)."""
    if k <= 1 or b <= a:
        return np.zeros(0)
    e = np.linspace(a, b, k + 1)[1:-1]
    if integer:
        e = np.floor(e) + 0.5
    e = np.unique(e)
    return e[(e > a) & (e < b)]


# ---------------------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------------------
def _details(noise) -> dict[str, Any]:
    return {} if noise.private else {"note": SEEDED_LABEL}


def _rank_scores(xs: np.ndarray, grid: np.ndarray, q: float, side: str) -> np.ndarray:
    """Score of each grid cell [g_i, g_(i+1)) for holding the tail q-quantile of the sorted values ``xs``:
    minus the rank distance between the cell and the q-quantile (0 iff the quantile lies in the cell).

    lower: u_i = -max(#{x < g_i} - q n, q n - #{x < g_(i+1)}, 0); upper, on cells (g_i, g_(i+1)]:
    u_i = -max(#{x > g_(i+1)} - q n, q n - #{x > g_i}, 0). Some cell always scores 0 (however narrow the
    data), and each term moves by at most max(q, 1 - q) when one record is added or removed."""
    n = len(xs)
    if side == "lower":
        below = np.searchsorted(xs, grid, side="left")  # #{x < g}
        lo, hi = below[:-1], below[1:]
        terms = (lo - q * n, q * n - hi)
    else:
        above = n - np.searchsorted(xs, grid, side="right")  # #{x > g}
        terms = (above[1:] - q * n, q * n - above[:-1])
    return -np.maximum(np.maximum(terms[0], terms[1]), 0.0)


def _select_bound(name, xs, grid, q, side, accountant, noise, rho) -> float:
    """Exponential mechanism over ``grid`` for the low (side 'lower') or high tail quantile q.

    The PUBLIC grid (:func:`bound_grid`: the integers in [-128, 128] and a geometric grid of ``GRID_STEPS``
    points per octave up to 2^63, down to 2^-8 for floats; integer columns stop at 2^52 so that half-integer
    edges stay exact) is cut into CELLS [g_i, g_(i+1)), scored by minus the rank distance between the cell and
    the q-quantile (:func:`_rank_scores`); the lower bound is g_i (for the upper bound, mirrored with #{x > .}
    on (g_i, g_(i+1)], the bound is g_(i+1)). Some cell always scores 0, however narrow the data (scoring grid
    points instead would leave data between two points no better than far-away points). Adding or removing
    one record with value v changes #{x < g} by 1[v < g] in {0, 1} and q n by q, so each term moves by 1 - q
    or -q, and so does their max with 0: sensitivity max(q, 1 - q) <= 1 (a record without a number changes
    nothing). With epsilon = sqrt(8 rho) the selection is epsilon-DP and rho-zCDP (bounded range, Cesar &
    Rogers 2021). q is planned from the noisy record count n_hat (public after its own spend,
    :func:`design_quantile`): q n_hat is ``BOUND_MARGIN`` times the selection's rank error, within
    [``Q_MIN``, ``Q_MAX``]; with too little data q reaches 1/2 and the range shrinks towards the median
    instead of running off to +-2^63."""
    scores = _rank_scores(xs, grid, q, side)
    sens = max(q, 1.0 - q)
    eps = epsilon_for_rho(rho)
    tail = "low" if side == "lower" else "high"
    accountant.spend(
        rho,
        f"schema: {name}: {side} bound",
        mechanism="exponential",
        measured=f"cell of a public grid holding the {tail} {q:.4g}-tail quantile",
        noise_scale=2.0 * sens / eps,
        private=noise.private,
        candidates=int(len(grid) - 1),
        sensitivity=sens,
        epsilon=eps,
        **_details(noise),
    )
    i = noise.exponential(scores, eps, sens)
    return float(grid[i] if side == "lower" else grid[i + 1])  # the cell's outer end


def coarse_edges(integer: bool) -> np.ndarray:
    """Public log-scale buckets: [+-2^k, +-2^(k+1)) and [0, 2^kmin), [-2^kmin, 0), out to +-2^63
    (kmin = 0 for integer columns, -8 otherwise)."""
    kmin = 0 if integer else FLOAT_MIN_EXPONENT
    kmax = INT_MAX_EXPONENT if integer else MAX_EXPONENT
    pos = np.exp2(np.arange(kmin, kmax + 1, dtype=float))
    return np.concatenate([-pos[::-1], [0.0], pos])


def _coarse_range(name, xs, integer, accountant, noise, rho) -> tuple[float, float] | None:
    """Noisy counts of the values in the public log-scale buckets (one record is in one bucket: L2
    sensitivity 1, discrete Gaussian, rho-zCDP); the range from the lowest to the highest bucket whose noisy
    count passes sigma sqrt(2 ln(B / 1e-3)) (an empty bucket anywhere passes with probability <= 1e-3), or
    None when none passes. Values beyond +-2^kmax count in the outermost buckets."""
    edges = coarse_edges(integer)
    nb = len(edges) - 1
    idx = np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, nb - 1)
    counts = np.bincount(idx, minlength=nb).astype(np.int64)
    sigma = sigma_for_rho(rho)
    accountant.spend(
        rho,
        f"schema: {name}: range buckets",
        mechanism="discrete Gaussian",
        measured="counts of the values in public log-scale buckets [+-2^k, +-2^(k+1))",
        noise_scale=sigma,
        private=noise.private,
        sensitivity=1.0,
        cells=int(nb),
        **_details(noise),
    )
    noisy = noise.gaussian(counts, sigma)
    passed = np.flatnonzero(noisy > sigma * math.sqrt(2.0 * math.log(nb / 1e-3)))
    if not len(passed):
        return None
    lower, upper = float(edges[passed[0]]), float(edges[passed[-1] + 1])
    if integer:  # integers in [a, b) are a .. b - 1
        upper = max(lower, upper - 1.0)
    return lower, upper


def _sub_edges(a: float, b: float, integer: bool) -> np.ndarray:
    """REFINE_CELLS linear sub-buckets of [a, b) (integer-aligned for integer columns)."""
    if integer:
        return np.unique(np.round(np.linspace(a, b, REFINE_CELLS + 1)))
    return np.linspace(a, b, REFINE_CELLS + 1)


def _refine_range(name, xs, integer, coarse, accountant, noise, rho) -> tuple[float, float]:
    """Noisy counts in linear sub-buckets of the lowest and the highest passing bucket (disjoint cells: L2
    sensitivity 1, discrete Gaussian, rho-zCDP); each bound moves in to the outermost sub-bucket whose noisy
    count passes REFINE_SIGMAS sigma (a false pass only widens the range within its bucket). It runs only
    where a sub-bucket can carry signal (the caller's public plan)."""
    edges = coarse_edges(integer)
    lo_a = float(coarse[0])
    lo_b = float(edges[np.searchsorted(edges, lo_a, side="right")])
    hi_b = float(coarse[1] + 1.0) if integer else float(coarse[1])
    hi_a = float(edges[np.searchsorted(edges, hi_b, side="left") - 1])
    grids = [_sub_edges(lo_a, lo_b, integer)] + ([_sub_edges(hi_a, hi_b, integer)] if hi_a != lo_a else [])
    parts = []
    for g in grids:
        sel = xs[(xs >= g[0]) & (xs < g[-1])]
        parts.append(
            np.bincount(np.clip(np.searchsorted(g, sel, side="right") - 1, 0, len(g) - 2), minlength=len(g) - 1)
        )
    sigma = sigma_for_rho(rho)
    accountant.spend(
        rho,
        f"schema: {name}: range refinement",
        mechanism="discrete Gaussian",
        measured="counts in linear sub-buckets of the lowest and highest passing buckets",
        noise_scale=sigma,
        private=noise.private,
        sensitivity=1.0,
        **_details(noise),
    )
    noisy = noise.gaussian(np.concatenate(parts).astype(np.int64), sigma)
    lo_noisy, hi_noisy = noisy[: len(parts[0])], noisy[len(parts[0]) :] if len(parts) == 2 else noisy
    # The outermost sub-bucket whose noisy count passes REFINE_SIGMAS sigma; where none does, the bucket's edge.
    lo_pass = np.flatnonzero(lo_noisy > REFINE_SIGMAS * sigma)
    hi_pass = np.flatnonzero(hi_noisy > REFINE_SIGMAS * sigma)
    lower = float(grids[0][lo_pass[0]]) if len(lo_pass) else lo_a
    upper = float(grids[-1][hi_pass[-1] + 1]) if len(hi_pass) else hi_b
    if integer:
        upper -= 1.0
    return min(lower, upper), max(lower, upper)


def _point_masses(name, xc, integer, lower, upper, accountant, noise, rho, delta, n_hat, max_points):
    """Values with a large noisy count (stability histogram, or the public candidate 0 if delta == 0).

    With delta > 0: discrete Gaussian counts (Canonne, Kamath & Steinke 2020) of every observed value of the
    clipped column, released iff the noisy count exceeds tau = 1 + sigma sqrt(2 ln(1/delta)) and
    ``POINT_MIN_SHARE`` of n_hat. A neighbour's record either changes one existing count by 1 (L2 sensitivity 1,
    rho-zCDP) or adds a value of count 1, released with probability <= delta (sigma-subgaussian tail):
    (rho, delta)-approximate zCDP. With delta = 0 only the public candidate 0 is counted (sensitivity 1, pure
    rho-zCDP)."""
    sigma = sigma_for_rho(rho)
    floor_count = POINT_MIN_SHARE * max(float(n_hat), 1.0)
    if delta > 0:
        tau = 1.0 + sigma * math.sqrt(2.0 * math.log(1.0 / delta))
        # Spent by hand: the number of distinct values is sensitive and stays out of the ledger.
        accountant.spend(
            rho,
            f"schema: {name}: point masses",
            delta=delta,
            mechanism="discrete Gaussian, thresholded (stability histogram)",
            measured="count of each observed value (clipped to the bounds); released iff the noisy "
            "count > max(tau, share * n_hat)",
            noise_scale=sigma,
            private=noise.private,
            threshold=tau,
            sensitivity=1.0,
            min_share=POINT_MIN_SHARE,
            **_details(noise),
        )
        values, counts = np.unique(xc, return_counts=True)
        noisy = noise.gaussian(counts.astype(np.int64), sigma) if len(values) else np.zeros(0, np.int64)
    else:
        tau = 0.0
        accountant.spend(
            rho,
            f"schema: {name}: point masses",
            mechanism="discrete Gaussian",
            measured="count of the value 0",
            noise_scale=sigma,
            private=noise.private,
            cells=1,
            sensitivity=1.0,
            min_share=POINT_MIN_SHARE,
            **_details(noise),
        )
        values = np.array([0.0])
        noisy = noise.gaussian(np.array([int(np.count_nonzero(xc == 0.0))], dtype=np.int64), sigma)
    ok = (noisy > max(tau, floor_count)) & (values >= lower) & (values <= upper)
    idx = np.flatnonzero(ok)
    idx = sorted(idx.tolist(), key=lambda i: (-int(noisy[i]), float(values[i])))[:max_points]
    pts = sorted(float(values[i]) for i in idx)
    return pts, float(sum(int(noisy[i]) for i in idx)), sigma


def _median_scores(cell: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """u(c) = -|#{y < c} - #cell / 2| for the sorted values of one cell: sensitivity 1/2."""
    return -np.abs(np.searchsorted(cell, cand, side="left") - 0.5 * len(cell))


def _median_tree(name, y, lower, upper, integer, grid, levels, accountant, noise, rho_tree):
    """Split points from ``levels`` levels of private medians (one spend per level, parallel cells).

    Level l splits each of the 2^(l-1) current cells (public intervals) at a median chosen by the exponential
    mechanism over public candidates inside the cell, scoring u(c) = -|#{y in cell: y < c} - #cell / 2| over
    the clipped non-point values y. One record is in exactly one cell and moves that cell's score by at most
    1/2 (the count by 1 or 0, the half size by 1/2): sensitivity 1/2, and the cells of a level are disjoint,
    so a level costs one selection's rho_l (parallel composition)."""
    cuts: list[float] = []
    rhos = _split(rho_tree, [1.0] * levels)
    ys = np.sort(y)
    for level, rho in enumerate(rhos, start=1):
        eps = epsilon_for_rho(rho)
        accountant.spend(
            rho,
            f"schema: {name}: bin edges level {level}",
            mechanism="exponential",
            measured=f"median of each of the {2 ** (level - 1)} disjoint cells over public candidates",
            noise_scale=2.0 * 0.5 / eps,
            private=noise.private,
            sensitivity=0.5,
            epsilon=eps,
            cells=2 ** (level - 1),
            **_details(noise),
        )
        bounds = [lower] + sorted(cuts) + [upper]
        for a, b in zip(bounds, bounds[1:]):
            cand = _split_candidates(a, b, integer, grid)
            if len(cand) == 0:
                continue  # a public fact about (a, b): nothing to choose, nothing released
            last = b == upper
            i0 = np.searchsorted(ys, a, side="left")
            i1 = np.searchsorted(ys, b, side="right" if last else "left")
            cell = ys[i0:i1]
            scores = _median_scores(cell, cand)
            cuts.append(float(cand[noise.exponential(scores, eps, 0.5)]))
    return sorted(set(cuts))


# ---------------------------------------------------------------------------------------------------
# The column
# ---------------------------------------------------------------------------------------------------
def discover_numeric(
    name: str,
    x: np.ndarray,
    accountant,
    noise,
    *,
    rho: float,
    delta: float,
    integer: bool,
    nullable: bool,
    n_hat: float,
    bins: int = 16,
    notes: list[str] | None = None,
) -> tuple[Numeric, dict]:
    """Discover bounds, point masses and bins of one numeric column privately (see the module docstring).

    ``x``: the column's finite numbers (one per record that has one). ``n_hat``: a noisy record count,
    used for planning only. Spends exactly ``rho`` (and ``delta`` if > 0 and a point-mass step runs;
    at most ``delta`` in all): (rho, delta)-approximate zCDP under add/remove-one-record neighbours.
    Returns the ``Numeric`` column and a report dict holding only public or noisy values.
    """
    return _discover(
        name,
        x,
        accountant,
        noise,
        rho=rho,
        delta=delta,
        integer=integer,
        nullable=nullable,
        n_hat=n_hat,
        bins=bins,
        notes=notes,
    )


def _discover(name, x, accountant, noise, *, rho, delta, integer, nullable, n_hat, bins=16, notes=None, binning="auto"):
    """``discover_numeric`` with a choice of binning for measurements: "auto" (median tree where n_hat
    supports it), "equal-width" (never a tree). The cost is the same either way."""
    if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho!r}")
    if not (0 <= delta < 1):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    bins = max(1, int(bins))
    x = np.asarray(x, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if integer:  # a non-integral number in an integer column is rounded (per-record rule)
        x = np.round(x)
    xs = np.sort(x)
    n_plan = max(float(n_hat), 1.0)
    # Plan (public: rho, n_hat, bins): the tree runs only if n_hat can support a level; else its share
    # goes to the bounds.
    tree_share = 1.0 - BOUNDS_SHARE - POINT_SHARE
    cand_size = 2 * SPLIT_CANDIDATES + GRID_STEPS * 8
    planned = _tree_levels(tree_share * rho, n_plan, math.floor(math.log2(bins)), cand_size) if binning == "auto" else 0
    planned = planned if planned >= MIN_TREE_LEVELS else 0
    if planned:
        rho_lo, rho_hi, rho_pt, rho_tree = _split(rho, [BOUNDS_SHARE / 2, BOUNDS_SHARE / 2, POINT_SHARE, tree_share])
    else:
        rho_lo, rho_hi, rho_pt = _split(rho, [(1.0 - POINT_SHARE) / 2, (1.0 - POINT_SHARE) / 2, POINT_SHARE])
        rho_tree = 0.0
    grid = bound_grid(integer)
    # the bounds' budget: half for the coarse histogram, half for the two quantile selections
    rho_hist, rho_lo, rho_hi = _split(rho_lo + rho_hi, [HIST_SHARE, (1 - HIST_SHARE) / 2, (1 - HIST_SHARE) / 2])
    q = design_quantile(min(rho_lo, rho_hi), n_plan, len(grid) - 1)

    # 1. bounds: the coarse histogram's range where some bucket passes (full coverage at any size it
    # reaches), else the quantile selections (a range at any size). Both are always paid for.
    coarse = _coarse_range(name, xs, integer, accountant, noise, rho_hist)
    # Refinement only where a sub-bucket can carry signal: n_hat / (2 REFINE_CELLS) records against
    # REFINE_SIGMAS times its noise (a public plan); on smaller tables the bounds stay at the buckets' edges.
    refine = n_plan / (2 * REFINE_CELLS) >= REFINE_SIGMAS * sigma_for_rho(rho_lo + rho_hi)
    if coarse is not None and refine:  # refine inside the extreme buckets with the quantiles' budget
        lower, upper = _refine_range(name, xs, integer, coarse, accountant, noise, rho_lo + rho_hi)
    elif coarse is not None:
        accountant.spend(
            rho_lo + rho_hi,
            f"schema: {name}: range refinement (not needed: too few records)",
            mechanism="none",
            measured="nothing (charged so that the cost does not depend on the data)",
            private=noise.private,
            **_details(noise),
        )
        lower, upper = coarse
    else:
        lower = _select_bound(name, xs, grid, q, "lower", accountant, noise, rho_lo)
        upper = _select_bound(name, xs, grid, q, "upper", accountant, noise, rho_hi)
        lower, upper = min(lower, upper), max(lower, upper)
    if not integer and upper == lower:
        upper = float(np.nextafter(lower, np.inf))  # one bin [v, nextafter(v)] that decodes to v
    info: dict[str, Any] = {"kind": "numeric", "integer": bool(integer), "clipped_share_design": (q, q)}

    n_int = upper - lower + 1 if integer else math.inf
    if integer and n_int <= UNIT_MAX:
        for label, r in (("point masses", rho_pt), ("bin edges", rho_tree)):
            if r > 0:
                accountant.spend(
                    r,
                    f"schema: {name}: {label} (not needed: unit bins)",
                    mechanism="none",
                    measured="nothing (charged so that the cost does not depend on the data)",
                    private=noise.private,
                    **_details(noise),
                )
        col = Numeric(name, lower, upper, bins=int(n_int), integer=True, nullable=nullable)
        info.update(lower=lower, upper=upper, bins=col.bins, points=[], binning="unit")
        _note(notes, name, col, info)
        return col, info

    # 2. point masses (on the values clipped to the bounds: the encoder's own per-record rule)
    xc = np.clip(x, lower, upper)
    points, point_mass, _ = _point_masses(
        name, xc, integer, lower, upper, accountant, noise, rho_pt, delta, n_plan, max(0, bins // 2)
    )
    if not integer and points and points[-1] >= upper:
        upper = float(np.nextafter(points[-1], np.inf))  # room for the point bin [v, nextafter(v))

    # 3. bin edges on the non-point values
    target = max(1, bins - len(points))
    max_levels = math.floor(math.log2(target))
    n_rest = max(n_plan - point_mass, 0.0)
    levels = min(planned, max(1, _tree_levels(rho_tree, n_rest, max_levels, cand_size))) if planned else 0
    if levels:
        y = xc[~np.isin(xc, points)] if points else xc
        cuts = _median_tree(name, y, lower, upper, integer, grid, levels, accountant, noise, rho_tree)
        binning = "quantile"
    else:
        cuts, binning = [], "equal-width"
    cells = [lower] + cuts + [upper]
    per = _share_out(target, len(cells) - 1)
    inner = list(cuts)
    for (a, b), k in zip(zip(cells, cells[1:]), per):
        inner.extend(_equal_width(a, b, k, integer).tolist())
    edges = point_edges(sorted(set(inner)), points, lower, upper, integer)
    col = Numeric(name, lower, upper, edges=tuple(edges), integer=integer, nullable=nullable)
    info.update(lower=lower, upper=upper, bins=col.bins, points=list(points), binning=binning, tree_levels=levels)
    _note(notes, name, col, info)
    return col, info


def _share_out(total: int, cells: int) -> list[int]:
    base, extra = divmod(max(total, cells), cells)
    return [base + (i < extra) for i in range(cells)]


def point_edges(inner: list[float], points: list[float], lower: float, upper: float, integer: bool) -> list[float]:
    """Edges lower < inner... < upper, with a bin [v - 1/2, v + 1/2) (integers) or [v, nextafter(v)) per point.

    Inner edges inside a point's bin are dropped; ``privsample.data.encoding.decode`` turns a point bin back into v.
    Also used by the non-private draft (``privsample.data.discovery.draft_schema``), so that both mark a point
    mass the same way."""
    e = [v for v in inner if lower < v < upper]
    for v in points:
        a, b = (v - 0.5, v + 0.5) if integer else (v, float(np.nextafter(v, np.inf)))
        e = [t for t in e if not (a <= t <= b)]
        e.extend(t for t in (a, b) if lower < t < upper)
    return [lower] + sorted(set(e)) + [upper]


def _note(notes, name, col, info) -> None:
    if notes is None:
        return
    q = info["clipped_share_design"][0]
    notes.append(
        f"column '{name}': numeric, bounds [{col.lower:g}, {col.upper:g}] from private quantiles "
        f"(designed to clip about {q:.1%} of the values at each end), {col.bins} {info['binning']} bins"
        + (f", own bins for {', '.join(f'{p:g}' for p in info['points'])}" if info.get("points") else "")
    )
