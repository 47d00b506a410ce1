"""Private discovery of a date, datetime or time-of-day column's domain: bounds and bins on the calendar.

``discover_calendar`` turns the numbers of one such column (days, minutes or seconds: ``privsample.data.formats``)
into a ``Numeric`` schema column with the column's format, whose bounds and bin edges are month starts (dates and
datetimes) or whole hours (times of day). Every cell is fixed in advance by the calendar, so no step needs a
release threshold or a delta.

Guarantee: rho-zCDP (Bun & Steinke 2016) under add/remove-one-record neighbours, for exactly ``rho`` spent through
the accountant (the amounts never depend on the data). Each step is charged before its noise is drawn:

1. Years (``YEAR_SHARE`` of rho; dates and datetimes): discrete Gaussian counts (Canonne, Kamath & Steinke 2020) of the
   records in each calendar year from ``FIRST_YEAR`` to ``LAST_YEAR``, with one cell for the years before, one for those
   after, and one for the records without a date (the null code; nullable when it passes the presence threshold). A
   record is in exactly one cell: L2 sensitivity 1. The year range is a window for step 2 that errs wide (a record
   outside it is clipped whatever step 2 finds): the decades holding the records (the grid's rule,
   ``grid_rules.grid_range``: the cells holding most of the mass, grown over cells passing the presence threshold)
   widened by ``WINDOW_PAD`` years; where some years hold most records, the grid's rule on the years, grown over the
   blocks of thin years beyond it that pass ``TAIL_SIGMAS`` sd (``_tail``): post-processing. Where no decade, nor any
   window of consecutive decades, stands above the noise (``grid_rules.core``), the same rule on the years themselves
   (dates within a few years: a window of 2 or 4 years has less noise than a decade); where nothing stands out there
   either, the dates are not located: the column is the catch-all (a ``Categorical`` with no category,
   ``info["unlocated"]``, named as a loss by ``discovery_report``), not a guessed decade, and step 2's rho is charged
   unused (so the amount spent never depends on the data; the outcome is a function of the year counts alone: the
   guarantee is unchanged).
2. Months (the rest; all of rho for a time of day, whose range is public): discrete Gaussian counts of the
   records in each month of the year range (each hour of the day): disjoint cells, sensitivity 1.
   A range of ``MONTHS_UP_TO`` years or more has year cells instead, each then counted twice: the two noisy
   counts are averaged with inverse-variance weights (post-processing), and the rules below read that average.

Post-processing of the month counts (or years): each bound is the first month start, from that end of the window,
with more than ``CUT_SIGMAS`` sd of noisy records beyond it (``_cuts``, ``edge_bounds.edge_cut``): it lies inside the
records' range unless noise made empty months pass, and the records beyond it are clipped to it (the report's
``clipped_share``, a noisy estimate). Where that leaves no room (a column within a month or two), the range is the
months holding records. The bins cut the range at month starts by the months' noisy mass (about equal noisy mass per
bin, at most ``bins``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privsample.data.edge_bounds import edge_cut
from privsample.data.grid_rules import core_threshold, grid_range, presence_threshold
from privsample.data.schema import DEFAULT_OTHER_LABEL, Categorical, Numeric
from privsample.privacy.mechanisms import gaussian_measure
from privsample.privacy.noise import SEEDED_LABEL

__all__ = ["discover_calendar", "FIRST_YEAR", "LAST_YEAR", "CUT_SIGMAS"]

FIRST_YEAR, LAST_YEAR = 1800, 2199  # 40 whole decades of public year cells (and one cell each side for beyond)
YEAR_SHARE = 0.3  # of rho: the year counts (the months, or years, of the range get the rest)
MONTHS_UP_TO = 30  # a range of fewer years has month cells; a longer one year cells
CUT_SIGMAS = 3.0  # a bound has this many sd of noisy records beyond it
WINDOW_PAD = 5  # years beyond the edge decades that step 2 counts where the years do not close the range
EDGE_YEAR_SHARE = 0.5  # a cut in a located end year clipping more of its noisy records falls back to its edge
TAIL_SIGMAS = 4.0  # a block of years beyond the years' grid range widens the window when it passes this many sd
DAY = 86400


def _spend(name, label, measured, counts, accountant, noise, rho) -> tuple[np.ndarray, float]:
    y, sigma = gaussian_measure(
        accountant, noise, np.asarray(counts, dtype=np.int64), rho, f"schema: {name}: {label}", measured=measured
    )
    return np.asarray(y, dtype=np.float64), sigma


def _months(days: np.ndarray) -> np.ndarray:
    """Months since 1970-01 of days since 1970-01-01."""
    return np.floor(days).astype("int64").astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)


def _month_start(month: int) -> int:
    """Days since 1970-01-01 of the first day of a month counted from 1970-01."""
    return int(np.datetime64(int(month), "M").astype("datetime64[D]").astype(np.int64))


def _cuts(noisy: np.ndarray, sigma: float, end_years: bool = False) -> tuple[int, int, str]:
    """(j_lo, j_hi, how): cell boundaries with records before j_lo and after j_hi (``edge_cut`` from each end;
    with ``end_years``, month cells whose window's end years hold records: ``_within_end_years``), how "inside";
    where that leaves no room, the range of the cells that hold records, how "present"."""
    j_lo, j_hi = edge_cut(noisy, sigma, CUT_SIGMAS), len(noisy) - edge_cut(noisy[::-1], sigma, CUT_SIGMAS)
    if end_years:  # the end years hold records: a cut stays within them
        j_lo, j_hi = _within_end_years(noisy, j_lo, j_hi)
    if j_hi <= j_lo:  # no room inside
        return 0, len(noisy), "present"
    return j_lo, j_hi, "inside"


def _year_range(gy: np.ndarray, sy: float, n_plan: float) -> tuple[int, int, bool] | None:
    """(first, last) year cell of the window whose months (or years) step 2 counts: records outside it are clipped
    whatever step 2 finds, so it errs wide and step 2 places the bounds. The decades holding the records
    (``grid_range`` of the noisy year counts summed by decade, sd sigma sqrt(10)), widened by ``WINDOW_PAD`` years
    each side (a decade holding a few percent of the records fails the decades' presence threshold); where some
    years pass the core threshold, an end is the grid's rule on the years (from those, outward over years passing
    the presence threshold), grown outward over the blocks of years beyond it that hold records above the noise
    (``_tail``: a tail of years each too thin to pass). Where no decade (nor window of
    decades) holds records above the noise, the grid's rule on the years themselves (windows of 2, 4, ... years);
    None where that finds none either. The third item: whether the window's end years were found holding records
    (the grid's rule on years), not padded. Post-processing."""
    inner = gy[1:-1]  # the public years; cells 0 and -1 hold the years before and after
    dec = inner.reshape(-1, 10).sum(axis=1)
    decades = grid_range(dec, sy * math.sqrt(10.0), n_plan)
    if decades is None:  # no decade stands out: the years themselves (windows of 2, 4, ... years: dates in a few)
        years = grid_range(inner, sy, n_plan)
        return None if years is None else (years[0] + 1, years[1] + 1, True)
    d0, d1 = decades
    first, last = 10 * d0, 10 * d1 + 9
    span = inner[first : last + 1]
    lo, hi = max(first - WINDOW_PAD, 0), min(last + WINDOW_PAD, len(inner) - 1)
    located = bool(np.any(span > core_threshold(len(span)) * sy))
    if located:  # years holding most records: the grid's rule from them
        y0, y1 = grid_range(span, sy, n_plan)
        lo = first + y0 - _tail(inner[lo : first + y0][::-1], sy)  # from the grid's range outward
        hi = first + y1 + _tail(inner[first + y1 + 1 : hi + 1], sy)
    return lo + 1, hi + 1, located  # cells of ``gy``; whether its end years hold records (not a padded window)


def _within_end_years(g: np.ndarray, j_lo: int, j_hi: int) -> tuple[int, int]:
    """(j_lo, j_hi) of month cells kept within the window's first and last years, whose year counts showed records:
    each end's cut by ``CUT_SIGMAS`` over that year's 12 months alone (the cumulative noise of a long thin stretch
    would carry the cut far into the records: 1,000 dates over 5 years, 17 a month against a month's sd of 25,
    were cut 20 months in from each end); where that cut would clip more than ``EDGE_YEAR_SHARE`` of the year's
    noisy records (months too thin to place it), the year's own edge: the year holds records, and where in it the
    noise does not tell, so the bound may lie up to 11 months beyond them. ``j_lo``, ``len(g) - j_hi``: the cuts
    of ``edge_cut`` over all of ``g`` from each end; ``edge_cut`` takes the first boundary that passes, so its cut
    over the year's months alone is the same cut where that lies within the year and none (12) where it does not.
    Post-processing."""

    def cut(months: np.ndarray, whole: int) -> int:
        j = min(whole, len(months))  # edge_cut(months, sigma, CUT_SIGMAS): the cut over all cells, capped
        year = float(months.sum())
        return j if j < len(months) and float(months[:j].sum()) <= EDGE_YEAR_SHARE * year else 0

    j_lo = min(j_lo, cut(g[:12], j_lo))
    j_hi = max(j_hi, len(g) - cut(g[::-1][:12], len(g) - j_hi))
    return j_lo, j_hi


def _tail(cells: np.ndarray, sigma: float) -> int:
    """How many of ``cells`` (ordered outward from a range) its end grows over: block after block, the cells up to
    the first whose noisy sum from the block's start passes ``TAIL_SIGMAS`` sd (``edge_cut``); 0 where none does.
    A block of empty years passing by noise would leave step 2 a long empty stretch before the records (whose
    ``edge_cut`` then cuts deep into them): hence more sd than ``CUT_SIGMAS``."""
    grown = 0
    while grown < len(cells):
        j = edge_cut(cells[grown:], sigma, TAIL_SIGMAS)
        if j >= len(cells) - grown:
            break
        grown += j
    return grown


def _averaged(a: np.ndarray, sa: float, b: np.ndarray, sb: float) -> tuple[np.ndarray, float]:
    """(estimate, its sd) of the same cells counted twice with independent noise of sd ``sa`` and ``sb``: the
    inverse-variance weighted average. Post-processing."""
    return (a * sb**2 + b * sa**2) / (sa**2 + sb**2), sa * sb / math.hypot(sa, sb)


def _mass_edges(noisy: np.ndarray, j_lo: int, j_hi: int, bins: int) -> list[int]:
    """Interior cell boundaries cutting cells j_lo..j_hi-1 into at most ``bins`` bins of about equal noisy mass."""
    mass = np.maximum(noisy[j_lo:j_hi], 0.0)
    k = min(bins, j_hi - j_lo)
    if k <= 1 or mass.sum() <= 0:
        return [j_lo + round(i * (j_hi - j_lo) / k) for i in range(1, k)] if k > 1 else []
    cum = np.cumsum(mass) / mass.sum()
    out = sorted({j_lo + 1 + int(np.searchsorted(cum, q)) for q in np.arange(1, k) / k})
    return [j for j in out if j_lo < j < j_hi]


def discover_calendar(
    name: str, x: np.ndarray, weights: np.ndarray, fmt, accountant, noise, *, rho: float, n_hat: float,
    bins: int, n_null: int, notes: list[str] | None = None,
) -> tuple[Numeric | Categorical, dict[str, Any]]:  # fmt: skip
    """(column, report entry) of a date, datetime or time column with ``fmt`` (``formats.DateFormat``), from its
    distinct numbers ``x`` (in ``fmt.unit``; NaN: not a date in the format) and their numbers of records
    ``weights``; ``n_null`` records are missing. Those and the values that do not read are one more cell of the
    first histogram (the null code): the column is nullable when its noisy count passes the presence threshold.
    The catch-all (a ``Categorical`` with no category) where the year counts do not locate the dates. Module
    docstring: guarantee."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(weights, dtype=np.int64)
    ok = np.isfinite(x)
    n_null = int(n_null + w[~ok].sum())
    x, w = x[ok], w[ok]
    per_day = DAY / fmt.unit  # units per day
    n_plan = max(float(n_hat), 1.0)
    if fmt.kind == "time":
        hour = per_day / 24
        cells = np.clip(np.floor(x / hour), 0, 23).astype(np.int64)
        counts = np.append(np.bincount(cells, w, 24), n_null)
        g, sigma = _spend(name, "hours", "records per hour of the day, and without a time", counts, accountant,
                          noise, rho)  # fmt: skip
        g, null, s_null = g[:-1], float(g[-1]), sigma
        starts = [j * hour for j in range(25)]
        outside, out_var = 0.0, 0.0
    else:
        # months as the output shows them: at the offset a datetime is written at (UTC without one)
        shift = fmt.offset_seconds() / fmt.unit
        days = (x + shift) / per_day
        year = np.floor(days).astype("int64").astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970
        ycell = np.clip(year - FIRST_YEAR + 1, 0, LAST_YEAR - FIRST_YEAR + 2)
        ny = LAST_YEAR - FIRST_YEAR + 3
        half = rho * YEAR_SHARE
        counts = np.append(np.bincount(ycell, w, ny), n_null)
        gy, sy = _spend(name, "years", f"records per year {FIRST_YEAR}-{LAST_YEAR} (and before, after, without one)",
                        counts, accountant, noise, half)  # fmt: skip
        gy, null, s_null = gy[:-1], float(gy[-1]), sy
        years = _year_range(gy, sy, n_plan)
        if years is None:  # no year located: the catch-all, step 2 charged unused
            return _unlocated(name, fmt, null > presence_threshold(s_null, n_plan), (null, s_null), accountant,
                              noise, rho - half, notes)  # fmt: skip
        i0, i1, located = years
        y0, y1 = FIRST_YEAR + i0 - 1, FIRST_YEAR + i1 - 1
        by_month = y1 - y0 < MONTHS_UP_TO  # else the cells are years
        m0 = (y0 - 1970) * 12
        nm = (y1 - y0 + 1) * (12 if by_month else 1)
        mcell = (_months(days) - m0) // (1 if by_month else 12)
        inside = (mcell >= 0) & (mcell < nm)
        unit = "month" if by_month else "year"
        g, sigma = _spend(name, f"{unit}s", f"records per {unit} of {y0}-{y1}",
                          np.bincount(mcell[inside], w[inside], nm), accountant, noise, rho - half)  # fmt: skip
        g, sigma = (g, sigma) if by_month else _averaged(g, sigma, gy[i0 : i1 + 1], sy)  # years counted twice
        starts = [_month_start(m0 + j * (1 if by_month else 12)) * per_day - shift for j in range(nm + 1)]
        near = [gy[i] for i in (i0 - 2, i0 - 1, i1 + 1, i1 + 2) if 0 <= i < ny]  # signed: an unbiased estimate
        outside, out_var = float(sum(near)), len(near) * sy * sy
    j_lo, j_hi, how = _cuts(g, sigma, fmt.kind != "time" and by_month and located)
    nullable = null > presence_threshold(s_null, n_plan)
    lower, upper = starts[j_lo], starts[j_hi] - (1 if fmt.integer else 0)
    inner = [starts[j] for j in _mass_edges(g, j_lo, j_hi, bins)]
    col = Numeric(name, lower, upper, edges=tuple([lower, *inner, upper]) if upper > lower else None,
                  integer=fmt.integer, nullable=nullable, format=fmt.spec(), temporal=fmt.kind,
                  offset=fmt.offset)  # fmt: skip
    clipped = outside + float(g[:j_lo].sum() + g[j_hi:].sum())  # signed noisy counts of the records clipped
    info = {
        "kind": fmt.kind,
        "format": fmt.spec(),
        "lower": fmt.text(lower),
        "upper": fmt.text(upper),
        "bins": col.bins,
        "bounds": how,
        "clipped_share": min(max(clipped / n_plan, 0.0), 1.0),
        "clipped_sd": math.sqrt(out_var + sigma * sigma * max(j_lo + len(g) - j_hi, 1)) / n_plan,
        "null_count": null,
        "null_sigma": s_null,
        "nullable": bool(nullable),
    }
    if notes is not None and info["clipped_share"] > 0.05:
        notes.append(
            f"column '{name}': about {info['clipped_share']:.0%} of the records lie outside "
            f"[{info['lower']}, {info['upper']}] (noisy) and are clipped to it"
        )
    return col, info


def _unlocated(name, fmt, nullable, null, accountant, noise, rho, notes) -> tuple[Categorical, dict[str, Any]]:
    """The catch-all of a date or datetime column whose years the noisy counts do not locate: step 2's ``rho``
    charged unused (measured: nothing), and a report that says why."""
    accountant.spend(
        rho,
        f"schema: {name}: months (not needed: no year located)",
        mechanism="none",
        measured="nothing (charged so that the cost does not depend on the data)",
        private=noise.private,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    if notes is not None:
        notes.append(
            f"column '{name}': {fmt.kind}, but its years could not be located above the noise of its private year "
            f"counts: only the catch-all '{DEFAULT_OTHER_LABEL}' remains"
        )
    col = Categorical(name, (), nullable=bool(nullable), other=DEFAULT_OTHER_LABEL)
    info = {
        "kind": fmt.kind,
        "format": fmt.spec(),
        "unlocated": fmt.kind,
        "null_count": null[0],
        "null_sigma": null[1],
        "nullable": bool(nullable),
    }
    return col, info
