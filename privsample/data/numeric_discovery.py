"""Private discovery of one numeric column's public domain: bounds, point masses and bins, on a public grid.

``discover_numeric`` turns the numbers of one column into a ``Numeric`` schema column with differential
privacy: finite bounds and valid bins, however small the column is, wherever its noisy counts show where its
values lie; where they do not (no cell, nor any window of consecutive cells, stands above the noise), it does not
guess: the column is the catch-all (a ``Categorical`` with no category, every value becoming its label), reported
as lost (``info["unlocated"]``; ``discovery_report`` names it). Every candidate value and range is a cell of a grid
fixed in advance, so no step needs a release threshold or a delta: what the noisy counts show is post-processing
(Dwork & Roth 2014, Prop. 2.1).

Guarantee: rho-zCDP (Bun & Steinke 2016) under add/remove-one-record neighbours (or the accountant's person-level
unit, ``privsample.privacy.unit``: every sensitivity below times k, the noise calibrated to it), for exactly ``rho``
spent through the accountant (the amounts never depend on the data; no delta). Steps, each charged before its noise
is drawn and composed adaptively (a step uses the data and earlier *noisy* outputs only):

1. Grid histogram (all of ``rho``, or ``1 - TREE_SHARE`` of it when a tree is planned): discrete Gaussian
   counts (Canonne, Kamath & Steinke 2020) of the values in the cells of :func:`grid_cells`: one cell per
   integer in [-UNIT_GRID, UNIT_GRID], signed octaves [2^k, 2^(k+1)) beyond (down to 2^-8 for floats, with one
   cell for |x| < 2^-8), and one cell for the records without a number (missing or text: the null code) when
   ``n_null`` is given. A record is in exactly one cell (:func:`grid_index`): L2 sensitivity 1. The column is
   nullable when the null cell's noisy count passes :func:`presence_threshold` (with a cell for the values that
   are not numbers, also missing in the output: their two cells' sum passes as many of its sd, sqrt(2) sigma, so
   that a complete column gets an invented null code no more often than with one cell); -inf and inf keep a cell
   of their own when it passes the threshold at ``STRICT_SIGMAS`` (rare values, and an invented one shows in every
   output).
   Post-processing (:func:`grid_range`): the *core* is every cell whose noisy count passes :func:`core_threshold` (an
   empty cell passes with probability <= 1e-3 over all cells); where none does, the span of the windows of w
   consecutive cells whose noisy sums pass the same rule at sd sqrt(w) sigma, at the smallest scale w = 2, 4, 8, ...
   where one does (``grid_rules.core``); where none does at any scale, no range: the column is the catch-all and
   the budget planned for the edge cells and the tree is charged unused (so the amount spent never depends on the
   data; the outcome is a function of the same noisy counts, so the guarantee below is unchanged). The range grows
   outward to the next cell passing ``EXTEND_SIGMAS`` sigma, or over at most ``GAP_CELLS`` failing cells to one
   passing ``GAP_SIGMAS`` sigma (``EXTEND_SIGMAS`` and ``GAP_SIGMAS`` rise to :func:`presence_threshold` where the
   noise is small against the records). So a bound is never narrower than the cells that hold most of the mass. A
   range of unit cells only is a code: it keeps exactly the integers whose noisy counts pass that threshold (unit
   bins; every value decodes exactly). A unit cell in the range above the core threshold and ``POINT_MIN_SHARE`` of
   n_hat gets a bin of its own (0 capital gain). Without a tree, the bins follow the cells' noisy mass (equal-mass at
   the grid's resolution: geometric bins for skewed amounts); with one, each tree cell's bins follow the noisy mass
   of the grid cells inside it (:func:`_mass_cuts`; equal width where that mass is too small to guide them).
2. Bin edges (``TREE_SHARE``, only when planned from n_hat): equal-frequency edges from a tree of private
   medians (the recursive splitting of Kaplan, Schnapp & Stemmer 2022; ``median_tree``): sensitivity 1/2
   within a cell and disjoint cells, so a level costs one selection's rho_l. If fewer than
   ``MIN_TREE_LEVELS`` levels pay (``TREE_MARGIN``), the whole budget goes to the grid histogram.

The report (``info``) holds only public or noisy values; ``clipped_share`` is a noisy estimate of the share of
values outside the bounds (the signed noisy counts of the ``CLIP_CELLS`` grid cells next to each bound, and of the
unit cells a code leaves out, over n_hat; ``clipped_sd`` its noise sd) and ``tail_floor`` the planned blind spot:
the share of the records that a cell beyond a bound can hold without being seen. Values outside the bounds are
clipped by the encoder (a fixed per-record rule). How the rule was chosen: benchmarks/results/numeric_discovery.md.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from privsample.data.edge_bounds import edge_budget, inner_bounds
from privsample.data.grid_rules import (  # re-exported: the grid's rules, used by the other discoveries too
    EXTEND_SIGMAS,
    STRICT_SIGMAS,
    core_threshold,
    grid_range,
    presence_threshold,
)
from privsample.data.median_tree import (
    MIN_TREE_LEVELS,
    TREE_MARGIN,
    bound_grid,
    exact_split,
    median_tree,
    tree_levels,
)
from privsample.data.schema import DEFAULT_OTHER_LABEL, Categorical, Numeric
from privsample.privacy.mechanisms import sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL

__all__ = [
    "discover_numeric",
    "grid_budget",
    "point_edges",
    "number_text",
    "grid_range",
    "core_threshold",
    "grid_cells",
    "grid_index",
    "bound_grid",
    "TREE_SHARE",
    "UNIT_GRID",
    "UNIT_MAX",
    "EXTEND_SIGMAS",
    "presence_threshold",
    "POINT_MIN_SHARE",
    "TREE_MARGIN",
    "MIN_TREE_LEVELS",
]

TREE_SHARE = 0.5  # of the column's rho: the median tree, when planned; the rest (or all) for the grid histogram
SPECIAL_CELLS = ("-inf", "inf")  # values kept as codes of their own when their cells show them
UNIT_GRID = 8  # integers in [-8, 8] have a grid cell of their own
UNIT_MAX = 32  # integer ranges with at most this many integers get unit bins (codes)
POINT_MIN_SHARE = 0.03  # a point mass needs a noisy count above this share of n_hat (and the core threshold)
CLIP_CELLS = 2  # grid cells next to each bound summed for the clipped-share estimate
FLOAT_MIN_EXPONENT = -8  # float octaves go down to +-2^-8 (|x| < 2^-8: one cell)
MAX_EXPONENT = 63  # outermost octave +-2^63 (floats)
INT_MAX_EXPONENT = 52  # integer columns: +-2^52 (half-integer edges are exact below 2^52)


# ---------------------------------------------------------------------------------------------------
# The public grid
# ---------------------------------------------------------------------------------------------------
def grid_cells(integer: bool) -> list[tuple[float, float, bool]]:
    """The grid's cells in order, as (lo, hi, unit): a unit cell holds the one integer lo = hi; an octave
    holds [lo, hi) (negative octaves (lo, hi], read as the mirror image); for floats one cell holds
    |x| < 2^-8 (non-integral). Public: a function of ``integer`` only."""
    kmin = 0 if integer else FLOAT_MIN_EXPONENT
    kmax = INT_MAX_EXPONENT if integer else MAX_EXPONENT
    octaves = [(2.0**k, 2.0 ** (k + 1)) for k in range(kmin, kmax)]
    if integer:
        octaves = [(max(a, UNIT_GRID + 1.0), b) for a, b in octaves if b > UNIT_GRID + 1]
    else:
        octaves = [(a, b) for a, b in octaves]
    cells = [(-b, -a, False) for a, b in reversed(octaves)]
    if not integer:
        tiny = 2.0**FLOAT_MIN_EXPONENT
        cells.append((-tiny, tiny, False))
    cells.extend((float(v), float(v), True) for v in range(-UNIT_GRID, UNIT_GRID + 1))
    cells.extend((a, b, False) for a, b in octaves)
    return sorted(cells, key=lambda c: (c[0], c[1]))


def grid_index(x: np.ndarray, integer: bool) -> np.ndarray:
    """The index in :func:`grid_cells` of each value (a function of the value alone: one record, one cell).
    Integral values in [-UNIT_GRID, UNIT_GRID] go to their unit cell, others to their octave (the outermost
    octaves also hold what lies beyond them)."""
    cells = grid_cells(integer)
    unit_lo = np.array([lo for lo, _, unit in cells if unit])  # ascending: -UNIT_GRID..UNIT_GRID
    unit_i = np.array([i for i, (_, _, unit) in enumerate(cells) if unit])
    pos = [(i, lo, hi) for i, (lo, hi, unit) in enumerate(cells) if not unit and lo > 0]  # positive octaves
    neg = [(i, lo, hi) for i, (lo, hi, unit) in enumerate(cells) if not unit and hi < 0]  # negative octaves
    pos_lo = np.array([lo for _, lo, _ in pos])
    pos_i = np.array([i for i, _, _ in pos])
    neg_hi = np.array([-hi for _, _, hi in neg])  # |x| lower end of each negative octave, mirrored
    neg_i = np.array([i for i, _, _ in neg])
    order_n = np.argsort(neg_hi)
    neg_hi, neg_i = neg_hi[order_n], neg_i[order_n]
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(len(x), dtype=np.int64)
    ax = np.abs(x)
    integral = np.isfinite(x) & (x == np.round(x))
    unit = integral & (ax <= UNIT_GRID)
    if unit.any():
        out[unit] = unit_i[np.searchsorted(unit_lo, x[unit])]
    rest = ~unit
    tiny = rest & (ax < 2.0**FLOAT_MIN_EXPONENT) if not integer else np.zeros(len(x), bool)
    if tiny.any():
        out[tiny] = next(i for i, (lo, hi, u) in enumerate(cells) if not u and lo < 0 < hi)
    p = rest & ~tiny & (x > 0)
    if p.any():
        out[p] = pos_i[np.clip(np.searchsorted(pos_lo, x[p], side="right") - 1, 0, len(pos_i) - 1)]
    n = rest & ~tiny & (x < 0)
    if n.any():
        out[n] = neg_i[np.clip(np.searchsorted(neg_hi, -x[n], side="right") - 1, 0, len(neg_i) - 1)]
    return out


def grid_budget(
    rho: float, n_hat: float, bins: int = 16, binning: str = "auto", max_rows: int = 1
) -> tuple[float, float, int]:
    """(rho of the grid histogram, rho of the median tree, tree levels planned) of one numeric column given its
    ``rho``: the tree runs only if ``n_hat`` can support ``MIN_TREE_LEVELS`` levels (``binning`` "auto"), else the
    grid histogram gets all of ``rho``; less the edge cells' part (``column_budget``). A function of public values
    and n_hat (a noisy count): no privacy cost. ``max_rows``: the privacy unit's k."""
    rho_grid, _, rho_tree, planned = column_budget(rho, n_hat, bins, binning, max_rows)
    return rho_grid, rho_tree, planned


def column_budget(
    rho: float, n_hat: float, bins: int = 16, binning: str = "auto", max_rows: int = 1
) -> tuple[float, float, float, int]:
    """(rho of the grid histogram, of the edge cells, of the median tree, tree levels planned): ``grid_budget``'s
    split, the edge cells' part taken from the grid's where it pays (``edge_bounds.edge_budget``). The parts add up
    to ``rho`` exactly."""
    n_plan = max(float(n_hat), 1.0)
    bins = max(1, int(bins))
    depth = math.floor(math.log2(bins))
    planned = tree_levels(TREE_SHARE * rho, n_plan, depth, max_rows=max_rows) if binning == "auto" else 0
    planned = planned if planned >= MIN_TREE_LEVELS else 0
    rho_grid, rho_tree = exact_split(rho, [1.0 - TREE_SHARE, TREE_SHARE]) if planned else (rho, 0.0)
    rho_grid, rho_edge = edge_budget(rho_grid, n_plan, max_rows)
    return rho_grid, rho_edge, rho_tree, planned


def _equal_width(a: float, b: float, k: int, integer: bool) -> np.ndarray:
    """Inner edges splitting [a, b] into k equal-width pieces (half-integers for integer columns)."""
    if k <= 1 or b <= a:
        return np.zeros(0)
    e = np.linspace(a, b, k + 1)[1:-1]
    if integer:
        e = np.floor(e) + 0.5
    e = np.unique(e)
    return e[(e > a) & (e < b)]


def _details(noise) -> dict[str, Any]:
    return {} if noise.private else {"note": SEEDED_LABEL}


def _share_out(total: int, cells: int) -> list[int]:
    base, extra = divmod(max(total, cells), cells)
    return [base + (i < extra) for i in range(cells)]


def _cell_span(cell: tuple[float, float, bool], integer: bool) -> tuple[float, float]:
    """The smallest and largest value a grid cell can hold (closed)."""
    lo, hi, unit = cell
    if unit:
        return lo, hi
    if integer:
        return (lo, hi - 1.0) if lo > 0 else (lo + 1.0, hi)
    return lo, hi


def _measure(name, label, measured, counts, accountant, noise, rho) -> tuple[np.ndarray, float]:
    """Discrete Gaussian counts of disjoint public cells (one record in at most one cell: L2 sensitivity 1,
    rho-zCDP; k under a person-level unit, sigma calibrated to it), charged before the noise is drawn."""
    sigma = sigma_for_rho(rho, accountant.unit.sensitivity(1.0))
    accountant.spend(
        rho,
        f"schema: {name}: {label}",
        mechanism="discrete Gaussian",
        measured=measured,
        noise_scale=sigma,
        private=noise.private,
        sensitivity=1.0,
        cells=int(len(counts)),
        **_details(noise),
    )
    return np.asarray(noise.gaussian(np.asarray(counts, dtype=np.int64), sigma), dtype=np.float64), sigma


def discover_numeric(
    name: str,
    x: np.ndarray,
    accountant,
    noise,
    *,
    rho: float,
    delta: float = 0.0,
    integer: bool,
    nullable: bool,
    n_hat: float,
    bins: int = 16,
    notes: list[str] | None = None,
    n_null: int | None = None,
    weights: np.ndarray | None = None,
    specials: dict[str, int] | None = None,
) -> tuple[Numeric | Categorical, dict]:
    """Discover bounds, point masses and bins of one numeric column privately (see the module docstring): a
    ``Numeric`` column, or the catch-all (a ``Categorical`` with no category; ``info["unlocated"]`` True) when the
    grid histogram's noisy counts do not locate the values above the noise.

    ``n_null``: the number of the column's records without a number (missing or not numeric), counted as one
    more public cell of the grid histogram (a record is in exactly one cell); the column is then nullable when
    that noisy count passes :func:`presence_threshold` (``nullable`` is ignored) and ``info["null_count"]`` holds
    it. Without ``n_null``, ``nullable`` is used as given.

    ``x``: the column's finite numbers (one per record that has one), or its distinct numbers with ``weights``
    their numbers of records (the same counts, without a value per record). ``n_hat``: a noisy record count, used
    for planning only. Spends exactly ``rho`` and no delta (``delta`` is accepted and unused: every candidate
    is public): rho-zCDP under add/remove-one-record neighbours. Returns the ``Numeric`` column and a report
    dict holding only public or noisy values.

    ``specials`` ({"-inf": records, "inf": records, "text": records}): more public cells of the grid histogram (a
    record is still in exactly one cell); the column keeps -inf or inf (a code of its own) when its noisy count
    passes :func:`presence_threshold`; "text" counts the values that are not numbers (missing in the output:
    ``info["mistyped"]``, its noisy count, with the grid's sigma; the column is nullable when it passes)."""
    col, info = _discover(
        name,
        x,
        accountant,
        noise,
        rho=rho,
        integer=integer,
        nullable=nullable,
        n_hat=n_hat,
        bins=bins,
        notes=notes,
        n_null=n_null,
        weights=weights,
        specials=specials,
    )
    if info.get("special") and isinstance(col, Numeric):
        col = replace(col, special=tuple(info["special"]))
    return col, info


def _unused(name, label, accountant, noise, rho, why="unit bins") -> None:
    accountant.spend(
        rho,
        f"schema: {name}: {label} (not needed: {why})",
        mechanism="none",
        measured="nothing (charged so that the cost does not depend on the data)",
        private=noise.private,
        **_details(noise),
    )


def _discover(
    name, x, accountant, noise, *, rho, integer, nullable, n_hat, bins=16, notes=None, binning="auto", n_null=None,
    weights=None, specials=None,
):  # fmt: skip
    """``discover_numeric`` with a choice of binning for measurements: "auto" (median tree where n_hat
    supports it), "equal-mass" (never a tree). The cost is the same either way."""
    if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be a finite number > 0, got {rho!r}")
    bins = max(1, int(bins))
    x = np.asarray(x, dtype=np.float64).ravel()
    w = np.ones(len(x), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64).ravel()
    finite = np.isfinite(x)
    if not finite.all():
        x, w = x[finite], w[finite]
    if integer:  # a non-integral number in an integer column is rounded (per-record rule)
        x = np.round(x)
    n_plan = max(float(n_hat), 1.0)
    k = accountant.unit.max_rows
    rho_grid, rho_edge, rho_tree, planned = column_budget(rho, n_plan, bins, binning, k)

    # 1. the grid histogram; everything below is post-processing of its noisy counts (and the tree's output)
    cells = grid_cells(integer)
    cell_of = grid_index(x, integer) if len(x) else np.zeros(0, np.int64)
    g, sg, nullable, null_info = _grid_histogram(
        name, (x, w, cell_of), cells, integer, nullable, (n_null, specials or {}), accountant, noise, rho_grid, n_plan
    )
    located = grid_range(g, sg, n_plan)
    if located is None:  # nothing above the noise: the catch-all, not a guess
        return _unlocated(name, integer, nullable, null_info, (rho_tree, rho_edge), accountant, noise, notes)
    i0, i1, keep, unsupported, outside, t_keep = _support(cells, g, sg, n_plan, located)
    spans = [_cell_span(cells[i], integer) for i in range(i0, i1 + 1)]
    lower, upper = min(a for a, _ in spans), max(b for _, b in spans)
    used = min(i0, CLIP_CELLS) + min(len(g) - 1 - i1, CLIP_CELLS)  # cells in the clipped-share estimate
    info: dict[str, Any] = {
        "kind": "numeric",
        "integer": bool(integer),
        "clipped_share": _share(outside, n_plan),
        "clipped_sd": sg * math.sqrt(max(used, 1)) / n_plan,  # the estimate's noise sd (public given n_hat)
        "tail_floor": t_keep / n_plan,  # the share a cell beyond the bounds can hold unseen
    }
    info.update(null_info)
    if integer and upper - lower + 1 <= UNIT_MAX:
        for r, label in ((rho_tree, "bin edges"), (rho_edge, "edge cells")):
            if r:
                _unused(name, label, accountant, noise, r)
        col = Numeric(name, lower, upper, bins=int(upper - lower + 1), integer=True, nullable=nullable)
        info.update(lower=lower, upper=upper, bins=col.bins, points=[], binning="unit", unsupported=unsupported)
        # the kept values' noisy counts: released, so the synthesizers reuse them as 1-way measurements
        if keep:
            info.update(counts={number_text(cells[i][0]): float(g[i]) for i in keep}, sigma=sg)
        _note(notes, name, col, info)
        return col, info
    if rho_edge:  # 1b. the bounds inside the edge cells (``edge_bounds``)
        spend = (accountant, noise, rho_edge)
        lower, upper = _inside(name, (x, w, cell_of), cells, (i0, i1), (lower, upper), integer, spend, info, n_plan)
    # point masses: the unit cells inside the range that hold a large noisy share (0 capital gain, 1 child)
    t = core_threshold(len(cells))
    big = [i for i in range(i0, i1 + 1) if cells[i][2] and g[i] > t * sg and g[i] > POINT_MIN_SHARE * n_plan]
    big = [i for i in big if lower <= cells[i][0] <= upper]
    points = sorted(float(cells[i][0]) for i in sorted(big, key=lambda i: -g[i])[: max(0, bins // 2)])
    if not integer and upper == lower:
        upper = float(np.nextafter(lower, np.inf))  # one bin [v, nextafter(v)] that decodes to v
    if not integer and points and points[-1] >= upper:
        upper = float(np.nextafter(points[-1], np.inf))  # room for the point bin [v, nextafter(v))

    # 2. bin edges on the non-point values
    inner, how, levels = _inner_edges(
        name, (x, w), cells, g, (i0, i1), (lower, upper), points, bins, integer, planned, rho_tree, n_plan, accountant,
        noise,
    )  # fmt: skip
    edges_out = point_edges(sorted(set(inner)), points, lower, upper, integer)
    col = Numeric(name, lower, upper, edges=tuple(edges_out), integer=integer, nullable=nullable)
    info.update(lower=lower, upper=upper, bins=col.bins, points=list(points), binning=how, tree_levels=levels)
    _note(notes, name, col, info)
    return col, info


def _inside(name, xw, cells, cell_range, bounds, integer, spend, info, n_plan) -> tuple[float, float]:
    """Step 1b of ``_discover``: the bounds refined inside the edge cells (``edge_bounds.inner_bounds``, spending
    ``spend`` = (accountant, noise, rho)); the records it clips join the noisy clipped-share estimate in ``info``."""
    i0, i1 = cell_range
    spans = (_cell_span(cells[i0], integer), _cell_span(cells[i1], integer))
    cell_of = xw[2] if len(xw) > 2 else grid_index(xw[0], integer)  # each value's grid cell, computed once
    lower, upper, extra = inner_bounds(name, xw[:2], cell_of, (i0, i1), spans, bounds, integer, *spend, n_plan)
    info["clipped_share"] = min(1.0, max(0.0, info["clipped_share"] + extra["edge_clipped"] / n_plan))
    info["clipped_sd"] = math.hypot(info["clipped_sd"], extra["edge_clipped_sd"] / n_plan)
    return lower, upper


def _grid_histogram(name, xw, cells, integer, nullable, extra, accountant, noise, rho_grid, n_plan):
    """Step 1 of ``_discover``: spend ``rho_grid`` on the grid histogram of ``x``, with (``n_null``, ``specials``)
    = ``extra`` as more public cells. Returns (noisy cell counts, their sigma, nullable, the report of the null
    count and of the special values: {} without them). ``xw``: (values, their records, their grid cells)."""
    x, w = xw[0], xw[1]
    n_null, specials = extra
    counts = np.zeros(len(cells), np.int64)
    if len(x):  # records per cell: each distinct value's count in its cell (exact integers in float64 below 2^53)
        counts = np.rint(np.bincount(xw[2], weights=w, minlength=len(cells))).astype(np.int64)
    counts = np.append(counts, [int(v) for v in specials.values()]).astype(np.int64)  # -inf, inf: a cell each
    if n_null is not None:  # one more public cell: the records without a number (the null code)
        counts = np.append(counts, int(n_null))
    g, sg = _measure(
        name,
        "grid histogram",
        "counts of the values in public cells (unit integers near 0, signed octaves)"
        + (f", of the values {' and '.join(specials)}" if specials else "")
        + (" and of the records without a number" if n_null is not None else ""),
        counts,
        accountant,
        noise,
        rho_grid,
    )
    info: dict[str, Any] = {}
    if n_null is not None:
        null_count, g = float(g[-1]), g[:-1]
        nullable = null_count > presence_threshold(sg, n_plan)
        info = {"null_count": null_count, "null_sigma": sg, "nullable": bool(nullable)}
    if specials:
        g, kept = g[: len(cells)], g[len(cells) :]
        rare = presence_threshold(sg, n_plan, sigmas=STRICT_SIGMAS)  # -inf, inf: rare, and invented ones show
        info["special"] = [v for v, y in zip(specials, kept) if v in SPECIAL_CELLS and y > rare]
        if "text" in specials:  # values that are not numbers: missing in the output (named when they show)
            info["mistyped"] = float(kept[list(specials).index("text")])
            if n_null is not None:  # one test of the null code: the two cells' sum (sd sqrt(2) sigma) at as many sd
                nullable = null_count + info["mistyped"] > math.sqrt(2.0) * presence_threshold(sg, n_plan)
                info["nullable"] = bool(nullable)
            else:
                nullable = nullable or info["mistyped"] > presence_threshold(sg, n_plan)
    return g, sg, nullable, info


def _unlocated(name, integer, nullable, null_info, unspent, accountant, noise, notes):
    """``_discover``'s outcome when the grid histogram does not locate the values (``grid_range`` is None): the
    catch-all column (a ``Categorical`` with no category: every value becomes its label), the rest of the planned
    budget charged unused (the amount never depends on the data), and a report that says why."""
    for r, label in zip(unspent, ("bin edges", "edge cells")):
        if r:
            _unused(name, label, accountant, noise, r, "no bounds")
    col = Categorical(name, (), nullable=nullable, other=DEFAULT_OTHER_LABEL)
    info: dict[str, Any] = {"kind": "numeric", "integer": bool(integer), "unlocated": True}
    info.update({k: v for k, v in null_info.items() if k != "special"})  # no bounds: -inf, inf go to the catch-all
    if notes is not None:
        notes.append(
            f"column '{name}': numeric, but its values could not be located above the noise of its private grid "
            f"histogram: only the catch-all '{DEFAULT_OTHER_LABEL}' remains"
        )
    return col, info


def _support(cells, g, sg, n_plan, located):
    """(i0, i1, kept unit cells, unsupported values between them, noisy mass clipped off, presence threshold): the
    grid range of the bounds (``located``), narrowed to the values a code's noisy counts support. Post-processing."""
    i0, i1 = located
    t_keep = presence_threshold(sg, n_plan)
    unsupported: list[float] = []
    keep: list[int] = []  # a code's kept unit cells
    outside = float(g[max(0, i0 - CLIP_CELLS) : i0].sum() + g[i1 + 1 : i1 + 1 + CLIP_CELLS].sum())
    if all(cells[i][2] for i in range(i0, i1 + 1)):  # only unit cells: a code keeps the values its counts support
        keep = [i for i in range(i0, i1 + 1) if g[i] > t_keep] or [int(i0 + np.argmax(g[i0 : i1 + 1]))]
        outside += float(sum(max(g[i], 0.0) for i in range(i0, i1 + 1) if i < keep[0] or i > keep[-1]))
        i0, i1 = keep[0], keep[-1]
        # values between the kept ones whose noisy counts did not pass: the synthesizers give them probability 0
        unsupported = [float(cells[i][0]) for i in range(i0, i1 + 1) if i not in keep]
    return i0, i1, keep, unsupported, outside, t_keep


def _inner_edges(name, xw, cells, g, cell_range, bounds, points, bins, integer, planned, rho_tree, n_plan, acc, noise):
    """Step 2 of ``_discover``: (inner edges on the non-point values, binning, tree levels), from the median tree
    (``planned``: spends ``rho_tree``) or the grid histogram's noisy mass."""
    (i0, i1), (lower, upper), (x, w) = cell_range, bounds, xw
    target = max(1, bins - len(points))
    if planned:
        xc = np.clip(x, lower, upper)
        if points:
            keep = ~np.isin(xc, points)
            xc, w = xc[keep], w[keep]
        depth = math.floor(math.log2(target))
        levels = min(planned, max(1, tree_levels(rho_tree, n_plan, depth, max_rows=acc.unit.max_rows)))
        grid = bound_grid(integer)
        cuts = median_tree(name, xc, lower, upper, integer, grid, levels, acc, noise, rho_tree, w)
        how = "quantile"
    else:
        levels = 0
        cuts = _octave_cuts([cells[i] for i in range(i0, i1 + 1)], g[i0 : i1 + 1], lower, upper, target, integer)
        how = "equal-mass" if cuts else "equal-width"
    edges = [lower] + cuts + [upper]
    per = _share_out(target, len(edges) - 1)
    inner = list(cuts)
    for (a, b), k in zip(zip(edges, edges[1:]), per):
        within = _mass_cuts(cells, g, i0, i1, a, b, k, integer) if planned else []
        inner.extend(within or _equal_width(a, b, k, integer).tolist())
    return inner, how, levels


def _mass_cuts(cells, noisy, i0: int, i1: int, a: float, b: float, k: int, integer: bool) -> list[float]:
    """Cut points splitting the tree cell [a, b] into about ``k`` bins by the grid histogram's noisy mass in it
    (a grid cell partly inside counts in proportion to its overlap, as if uniform): :func:`_octave_cuts` on the
    grid cells clipped to [a, b]. Post-processing; [] when the mass is too small to guide the cuts."""
    sub, mass = [], []
    for i in range(i0, i1 + 1):
        lo, hi = _cell_span(cells[i], integer)
        u, v = max(lo, a), min(hi, b)
        if v < u:
            continue
        one = 1.0 if integer else 0.0  # an integer stretch lo..hi holds hi - lo + 1 values
        part = (v - u + one) / (hi - lo + one) if hi - lo + one > 0 else 1.0
        sub.append(cells[i])
        mass.append(max(float(noisy[i]), 0.0) * min(max(part, 0.0), 1.0))
    return _octave_cuts(sub, np.asarray(mass), a, b, k, integer)


def _octave_cuts(cells, noisy, lower: float, upper: float, k: int, integer: bool) -> list[float]:
    """Cut points giving the range's cells bins in proportion to their noisy mass (negative counts as 0): the
    cells' own edges where a cell gets a bin or more, so skewed columns get fine bins where the mass is (a
    geometric binning for amounts). Post-processing of the grid histogram; [] when the mass is too small."""
    mass = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0)
    if k <= 1 or mass.sum() <= 0:
        return []
    share = mass / mass.sum() * k
    cuts: list[float] = []
    for (lo, hi, unit), s in zip(cells, share):
        a, b = _cell_span((lo, hi, unit), integer)
        a, b = max(a, lower), min(b, upper)
        pieces = int(round(s))
        if unit or b <= a or pieces < 1:
            continue
        e = np.linspace(a, b + (1.0 if integer else 0.0), pieces + 1)
        e = np.floor(e) - 0.5 if integer else e
        cuts.extend(float(v) for v in e)
    return sorted({c for c in cuts if lower < c < upper})


def number_text(v: float) -> str:
    """A number as a key or label: an integral value without ``.0`` (below 2^53), else its repr."""
    return str(int(v)) if float(v).is_integer() and abs(v) < 2.0**53 else repr(float(v))


def _share(mass: float, n: float) -> float:
    """A noisy mass as a share of n_hat, within [0, 1] (post-processing)."""
    return float(min(max(mass / max(n, 1.0), 0.0), 1.0))


def point_edges(inner: list[float], points: list[float], lower: float, upper: float, integer: bool) -> list[float]:
    """Edges lower < inner... < upper, with a bin [v - 1/2, v + 1/2) (integers) or [v, nextafter(v)) per point."""
    e = [v for v in inner if lower < v < upper]
    for v in points:
        a, b = (v - 0.5, v + 0.5) if integer else (v, float(np.nextafter(v, np.inf)))
        e = [t for t in e if not (a <= t <= b)]
        e.extend(t for t in (a, b) if lower < t < upper)
    return [lower] + sorted(set(e)) + [upper]


def _note(notes, name, col, info) -> None:
    if notes is None:
        return
    notes.append(
        f"column '{name}': numeric, bounds [{col.lower:g}, {col.upper:g}] from a private histogram on a public "
        f"grid (about {info['clipped_share']:.0%} of the values outside, a noisy estimate), {col.bins} "
        f"{info['binning']} bins"
        + (f", own bins for {', '.join(f'{p:g}' for p in info['points'])}" if info.get("points") else "")
    )
