"""Order constraints between numeric columns (a schema's ``require`` list): bounds, structural zeros, repair.

A comparison ``low <= high`` or ``low < high`` (``>=``/``>`` are written the other way round) relates two numeric
columns, or a numeric column and a constant. It is public (a person wrote it), so using it costs nothing:

* the cells of the domain where it cannot hold are structural zeros (``zero_codes``): for a pair of columns, the
  pairs of bins where no value of the first bin and no value of the second satisfy it, for a constant the bins
  entirely on the wrong side. Comparisons are chained (``a <= b <= c`` also rules out bins of ``a`` above every
  value of a bin of ``c``), through columns that cannot be null;
* decoding (``privsample.data.decoding.decode``) draws every value inside its bin as usual, then swaps values
  between records of the same bin (``exchange``: each bin keeps the values it drew, so the 1-way shapes within
  bins stay those of decoding without comparisons), and only for the records that still break a comparison
  redraws, and at last repairs inside the bins, their values (``repair``), so that every record satisfies every
  comparison.

A null value never violates a comparison (SQL semantics: a comparison with a null is unknown, and only a false
one is a violation), so a record with a null takes part only in the comparisons between its non-null values.

Values: an integer column takes whole numbers, a float column any float (a strict comparison ``x < y`` between
floats needs ``y`` at least the next float after ``x``). Every function here reads the public schema and, for
decoding, synthetic values only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np


@dataclass(frozen=True)
class Comparison:
    """``low <= high`` (``low < high`` when ``strict``); ``low`` and ``high`` are column names (``str``) or
    constants (``float``), at least one of them a column. ``text``: the comparison as written."""

    text: str
    low: str | float
    high: str | float
    strict: bool

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(x for x in (self.low, self.high) if isinstance(x, str))

    @property
    def pair(self) -> bool:
        """Between two columns (not a column and a constant)."""
        return isinstance(self.low, str) and isinstance(self.high, str)


def at_least(col: Any, x: Any, strict: bool) -> np.ndarray:
    """The smallest value ``col`` can take that is > ``x`` (``strict``) or >= ``x``: whole numbers in an integer
    column, floats in another."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        if col.integer:
            return np.floor(x) + 1.0 if strict else np.ceil(x)
        return np.nextafter(x, np.inf) if strict else x


def at_most(col: Any, x: Any, strict: bool) -> np.ndarray:
    """The largest value ``col`` can take that is < ``x`` (``strict``) or <= ``x``."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        if col.integer:
            return np.ceil(x) - 1.0 if strict else np.floor(x)
        return np.nextafter(x, -np.inf) if strict else x


def bin_value_ranges(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """(smallest, largest) value that decoding can give in each bin of the numeric column ``col``: an integer
    column's bin holds ``ceil(lo)..ceil(hi) - 1`` (the last one ``ceil(lo)..floor(hi)``; a bin without a whole
    number decodes to its rounded midpoint), a float column's ``[lo, hi)`` (the last one ``[lo, hi]``)."""
    edges = np.asarray(col.bin_edges, dtype=np.float64)
    lo, hi = edges[:-1], edges[1:]
    last = np.arange(len(lo)) == len(lo) - 1
    if col.integer:
        ilo, ihi = np.ceil(lo), np.where(last, np.floor(hi), np.ceil(hi) - 1)
        empty = ihi < ilo
        mid = np.round((lo + hi) / 2)
        return np.where(empty, mid, ilo), np.where(empty, mid, ihi)
    top = np.where(last, hi, np.maximum(np.nextafter(hi, -np.inf), lo))
    return lo.copy(), top


def column_range(col: Any) -> tuple[float, float]:
    """(smallest, largest) value that decoding can give in ``col`` (over all its bins)."""
    mins, maxs = bin_value_ranges(col)
    return float(mins.min()), float(maxs.max())


def propagate(
    comparisons: Sequence[Comparison],
    cols: Mapping[str, Any],
    lo: dict[str, np.ndarray],
    hi: dict[str, np.ndarray],
    present: Mapping[str, Any],
) -> bool:
    """Tighten the bounds ``lo``/``hi`` (column -> array, one entry per case, changed in place) by the
    comparisons: ``low <= high`` raises ``high``'s lower bound to the smallest value it can take at or above
    ``low``'s lower bound, and lowers ``low``'s upper bound likewise. A comparison between two columns acts only
    where both are ``present`` (column -> bool or bool array: a null value constrains nothing). The bounds that
    result hold for every assignment within the given bounds that satisfies the comparisons (and, with order
    constraints only, they are the tightest: the smallest bounds are a solution when ``lo <= hi`` everywhere).
    Returns False when the bounds still moved after as many passes as there are columns, plus one (the
    comparisons contradict each other: a cycle with a strict comparison)."""
    for _ in range(len(cols) + 2):
        moved = False
        for c in comparisons:
            if c.pair:
                a, b = c.low, c.high
                act = np.asarray(present[a]) & np.asarray(present[b])
                new_lo = np.where(act, np.maximum(lo[b], at_least(cols[b], lo[a], c.strict)), lo[b])
                new_hi = np.where(act, np.minimum(hi[a], at_most(cols[a], hi[b], c.strict)), hi[a])
                moved |= bool(np.any(new_lo != lo[b]) or np.any(new_hi != hi[a]))
                lo[b], hi[a] = new_lo, new_hi
            elif isinstance(c.low, str):
                a = c.low
                new_hi = np.minimum(hi[a], at_most(cols[a], c.high, c.strict))
                moved |= bool(np.any(new_hi != hi[a]))
                hi[a] = new_hi
            else:
                b = c.high
                new_lo = np.maximum(lo[b], at_least(cols[b], c.low, c.strict))
                moved |= bool(np.any(new_lo != lo[b]))
                lo[b] = new_lo
        if not moved:
            return True
    return False


def involved(comparisons: Sequence[Comparison]) -> list[str]:
    """The columns the comparisons name, each once, in order of appearance."""
    return list(dict.fromkeys(n for c in comparisons for n in c.columns))


def components(comparisons: Sequence[Comparison]) -> list[list[Comparison]]:
    """The comparisons grouped by the columns they link (connected components: two comparisons sharing a column,
    directly or through others, are in one group), in order of appearance."""
    parent: dict[str, str] = {}

    def root(n: str) -> str:
        while parent.setdefault(n, n) != n:
            n = parent[n]
        return n

    for c in comparisons:
        first, *rest = c.columns
        for n in rest:
            parent[root(n)] = root(first)
    groups: dict[str, list[Comparison]] = {}
    for c in comparisons:
        groups.setdefault(root(c.columns[0]), []).append(c)
    return list(groups.values())


def infeasible_column(comparisons: Sequence[Comparison], cols: Mapping[str, Any]) -> tuple[str | None, bool]:
    """(a column no value of which satisfies the comparisons within the columns' ranges, with every column
    present; None if each has one) and whether the bounds settled (False: the comparisons contradict each other
    in a cycle with a strict comparison)."""
    names = involved(comparisons)
    sub = {n: cols[n] for n in names}
    lo, hi = {}, {}
    for n in names:
        a, b = column_range(cols[n])
        lo[n], hi[n] = np.array([a]), np.array([b])
    settled = propagate(comparisons, sub, lo, hi, {n: True for n in names})
    bad = next((n for n in names if lo[n][0] > hi[n][0]), None)
    return bad, settled


def zero_codes(comparisons: Sequence[Comparison], cols: Mapping[str, Any]) -> list[dict[str, tuple[int, ...]]]:
    """The structural zeros of the comparisons, as ``forbid_codes`` gives them (column -> codes; an entry forbids
    the product of its code sets): for each column, its bins no value of which satisfies the comparisons (a
    constant, or a chain of comparisons through columns that cannot be null); for each pair of columns linked by
    comparisons, the pairs of bins no two values of which do. Null codes are never forbidden. Sound: a cell is
    forbidden only if no record in it can satisfy the comparisons (a chain through a column that may be null is
    not used, as a null there cuts it); three or more columns' bins can still be jointly impossible, which
    decoding repairs (``repair``)."""
    names = involved(comparisons)
    sub = {n: cols[n] for n in names}
    ranges = {n: bin_value_ranges(cols[n]) for n in names}
    one_way: dict[str, np.ndarray] = {}
    out: list[dict[str, tuple[int, ...]]] = []
    for t in names:  # bins of t that no value satisfying the comparisons reaches
        lo, hi = _column_bounds(names, cols, 1)
        present = {n: n == t or not cols[n].nullable for n in names}
        propagate(comparisons, sub, lo, hi, present)
        mins, maxs = ranges[t]
        dead = (maxs < lo[t][0]) | (mins > hi[t][0])
        one_way[t] = dead
        if dead.any():
            out.append({t: tuple(int(i) for i in np.flatnonzero(dead))})
    for i, a in enumerate(names):
        for c in names[i + 1 :]:
            m = _pair_zeros(comparisons, sub, ranges, a, c) | _pair_zeros(comparisons, sub, ranges, c, a).T
            m[one_way[a], :] = False  # already forbidden alone
            m[:, one_way[c]] = False
            groups: dict[tuple[int, ...], list[int]] = {}
            for row in np.flatnonzero(m.any(axis=1)):
                groups.setdefault(tuple(int(j) for j in np.flatnonzero(m[row])), []).append(int(row))
            out += [{a: tuple(rows), c: js} for js, rows in groups.items()]
    return out


def _column_bounds(names: Sequence[str], cols: Mapping[str, Any], k: int) -> tuple[dict, dict]:
    lo, hi = {}, {}
    for n in names:
        a, b = column_range(cols[n])
        lo[n], hi[n] = np.full(k, a), np.full(k, b)
    return lo, hi


def _pair_zeros(comparisons, cols, ranges, a: str, c: str) -> np.ndarray:
    """Bool (bins of a) x (bins of c): True where no value of c's bin can go with any value of a's bin (a and c
    present, the other columns within their ranges, present unless they can be null)."""
    mins, maxs = ranges[a]
    names = list(cols)
    lo, hi = _column_bounds(names, cols, len(mins))
    lo[a], hi[a] = mins.copy(), maxs.copy()
    present = {n: n in (a, c) or not cols[n].nullable for n in names}
    propagate(comparisons, cols, lo, hi, present)
    cmins, cmaxs = ranges[c]
    return (cmaxs[None, :] < lo[c][:, None]) | (cmins[None, :] > hi[c][:, None]) | (lo[a] > hi[a])[:, None]


def violations(comparisons: Sequence[Comparison], x: Mapping[str, np.ndarray]) -> np.ndarray:
    """Bool per record: some comparison is false for it (NaN is a null value, which violates none)."""
    n = len(next(iter(x.values()))) if x else 0
    bad = np.zeros(n, dtype=bool)
    with np.errstate(invalid="ignore"):
        for c in comparisons:
            low = x[c.low] if isinstance(c.low, str) else c.low
            high = x[c.high] if isinstance(c.high, str) else c.high
            ok = (low < high) if c.strict else (low <= high)
            bad |= ~ok & ~np.isnan(low) & ~np.isnan(high)
    return bad


def _breach(comparisons, x, rows: np.ndarray, name: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(how many comparisons naming ``name`` are false, by how much in all: the sum of ``low - high``) for each
    record of ``rows`` once its value of ``name`` is ``values`` (the other columns as in ``x``; NaN is null, which
    breaks none)."""
    count = np.zeros(len(rows), dtype=np.int64)
    gap = np.zeros(len(rows))
    with np.errstate(invalid="ignore"):
        for c in comparisons:
            if name not in c.columns:
                continue
            low = values if c.low == name else (x[c.low][rows] if isinstance(c.low, str) else c.low)
            high = values if c.high == name else (x[c.high][rows] if isinstance(c.high, str) else c.high)
            ok = (low < high) if c.strict else (low <= high)
            bad = ~ok & ~np.isnan(low) & ~np.isnan(high)
            count += bad
            gap += np.where(bad, np.asarray(low, dtype=np.float64) - high, 0.0)
    return count, gap


def _wanted(comparisons, cols, x, rows: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(least, largest) value of ``name`` with which each record of ``rows`` satisfies the comparisons naming it,
    the other columns' values as in ``x`` (a null one bounds nothing)."""
    lo, hi = np.full(len(rows), -np.inf), np.full(len(rows), np.inf)
    for c in comparisons:
        if c.high == name:
            low = x[c.low][rows] if isinstance(c.low, str) else np.full(len(rows), c.low)
            lo = np.fmax(lo, at_least(cols[name], low, c.strict))
        elif c.low == name:
            high = x[c.high][rows] if isinstance(c.high, str) else np.full(len(rows), c.high)
            hi = np.fmin(hi, at_most(cols[name], high, c.strict))
    return lo, hi


def exchange(
    comparisons: Sequence[Comparison],
    cols: Mapping[str, Any],
    codes: Mapping[str, np.ndarray],
    x: dict[str, np.ndarray],
    rng: np.random.Generator,
    rounds: int,
) -> None:
    """Swap values between records that share a bin so that more records satisfy the comparisons. For each
    column in turn, each record breaking a comparison that names it picks a partner uniformly among the records
    with the same code (``codes``: column -> code per record) whose value would satisfy its comparisons (any of
    them if none would), and the two exchange their values if that lowers the number of comparisons naming the
    column that the two break (or leaves it and lowers by how much); ``rounds`` passes over the columns, or until
    no record breaks one. ``x`` (column -> float array, NaN for null) is changed in place.

    Every value stays in its bin and every bin keeps the very values it had, so the values of each column per bin
    (hence its 1-way law at any resolution) are those of the independent draws within bins: a pair of bins that
    overlap does not skew its values towards the ends, as drawing them again until the comparison holds does. A
    function of synthetic codes and values only (post-processing): no record is read."""
    names = involved(comparisons)
    index = {}
    for n in names:
        c = np.asarray(codes[n], dtype=np.int64)
        order = np.lexsort((np.nan_to_num(x[n], nan=np.inf), c))  # by code, then value: a group's values sorted
        values = x[n][order]
        pos = np.empty_like(order)
        pos[order] = np.arange(len(order))
        size = np.bincount(c, minlength=int(c.max()) + 1 if c.size else 0)
        index[n] = (c, order, pos, values, np.concatenate([[0], np.cumsum(size)[:-1]]), size)
    bad = violations(comparisons, x)
    for _ in range(rounds):
        if not bad.any():
            return
        for n in names:
            bad = _exchange_column(comparisons, cols, x, n, index[n], bad, rng)


def _exchange_column(comparisons, cols, x, n, index, bad, rng) -> np.ndarray:
    """One pass of ``exchange`` over the column ``n``; returns the records that still break a comparison."""
    c, holder, pos, values, start, size = index
    i = np.flatnonzero(bad & ~np.isnan(x[n]))
    ci, gi = _breach(comparisons, x, i, n, x[n][i])
    i, ci, gi = i[ci > 0], ci[ci > 0], gi[ci > 0]
    if i.size == 0:
        return bad
    g = c[i]
    lo, hi = _wanted(comparisons, cols, x, i, n)
    a, z = start[g], start[g] + size[g]  # the group's positions in the sorted values
    first = np.clip(_search(values, c, g, lo, a, z, "left"), a, z)
    last = np.clip(_search(values, c, g, hi, a, z, "right"), a, z)
    none = last <= first
    first, last = np.where(none, a, first), np.where(none, z, last)
    j = holder[first + np.minimum((rng.random(i.size) * (last - first)).astype(np.int64), last - first - 1)]
    xi, xj = x[n][i], x[n][j]
    cj, gj = _breach(comparisons, x, j, n, xj)
    ci2, gi2 = _breach(comparisons, x, i, n, xj)
    cj2, gj2 = _breach(comparisons, x, j, n, xi)
    before, after = ci + cj, ci2 + cj2
    ok = (i != j) & ~np.isnan(xj) & ((after < before) | ((after == before) & (gi2 + gj2 < gi + gj)))
    i, j = i[ok], j[ok]
    seen = np.bincount(np.concatenate([i, j]), minlength=len(c))  # disjoint pairs only
    keep = (seen[i] == 1) & (seen[j] == 1)
    i, j = i[keep], j[keep]
    x[n][i], x[n][j] = x[n][j], x[n][i].copy()
    pi, pj = pos[i].copy(), pos[j].copy()
    pos[i], pos[j] = pj, pi
    holder[pi], holder[pj] = j, i
    both = np.concatenate([i, j])
    bad[both] = violations(comparisons, {m: v[both] for m, v in x.items()})
    return bad


def _search(values, codes, g, v, a, z, side) -> np.ndarray:
    """Per query: the position of ``v`` among the sorted values ``values[a:z]`` of its group (``searchsorted``)."""
    out = np.empty(len(g), dtype=np.int64)
    for code in np.unique(g):
        m = g == code
        lo, hi = int(a[m][0]), int(z[m][0])
        out[m] = lo + np.searchsorted(values[lo:hi], v[m], side=side)
    return out


def repair(
    comparisons: Sequence[Comparison],
    cols: Mapping[str, Any],
    x: dict[str, np.ndarray],
    lo: dict[str, np.ndarray],
    hi: dict[str, np.ndarray],
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Move the values ``x`` (column -> float array, NaN for null; changed in place) so that every comparison
    holds, each value staying within its bounds ``lo``/``hi`` (its bin, say). The bounds are tightened first
    (``propagate``: with order constraints, every value within the tightened bounds of a column goes with some
    values of the others). With ``rng``, column by column: a value within its tightened bounds is kept, another
    is drawn uniformly within them; it is then fixed and the bounds of the rest tightened again. Whatever still
    breaks a comparison (and everything without ``rng``) is repaired deterministically: each value clamped into
    its tightened bounds, then every comparison ``low <= high`` raises ``high`` to the least value the order
    allows (repeated until nothing moves; values never pass their upper bounds, which the tightening made
    consistent). Returns a bool per record: False where no values within the bounds satisfy the comparisons
    (those records are left as they were, for the caller to repair within wider bounds)."""
    lo = {n: v.copy() for n, v in lo.items()}
    hi = {n: v.copy() for n, v in hi.items()}
    present = {n: ~np.isnan(v) for n, v in x.items()}
    settled = propagate(comparisons, cols, lo, hi, present)
    ok = np.ones(len(next(iter(x.values()))) if x else 0, dtype=bool)
    for n in x:
        ok &= ~present[n] | (lo[n] <= hi[n])
    if not settled:
        ok[:] = False
    todo = ok.copy()
    if rng is not None and ok.any():
        flo = {n: v.copy() for n, v in lo.items()}
        fhi = {n: v.copy() for n, v in hi.items()}
        drawn = {n: v.copy() for n, v in x.items()}
        for n in x:
            act = ok & present[n]
            inside = (drawn[n] >= flo[n]) & (drawn[n] <= fhi[n])
            new = _uniform(cols[n], flo[n], fhi[n], rng)
            drawn[n] = np.where(act & ~inside, new, drawn[n])
            flo[n] = np.where(act, drawn[n], flo[n])
            fhi[n] = np.where(act, drawn[n], fhi[n])
            propagate(comparisons, cols, flo, fhi, present)
        good = ok & ~violations(comparisons, drawn)
        for n in x:
            good &= ~present[n] | ((drawn[n] >= lo[n]) & (drawn[n] <= hi[n]))
            x[n][:] = np.where(good, drawn[n], x[n])
        todo &= ~good
    if todo.any():
        _push_up(comparisons, cols, x, lo, hi, present, todo)
    return ok


def _uniform(col: Any, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A value of ``col`` drawn uniformly in [lo, hi] per entry (whole numbers in an integer column); where
    hi < lo, lo."""
    u = rng.random(len(lo))
    with np.errstate(invalid="ignore", over="ignore"):
        if col.integer:
            n = np.maximum(hi - lo + 1, 1)
            v = lo + np.minimum(np.floor(u * n), n - 1)
        else:
            v = lo + (hi - lo) * u
    return np.where(np.isfinite(v), np.clip(v, lo, np.maximum(lo, hi)), lo)


def _push_up(comparisons, cols, x, lo, hi, present, rows) -> None:
    """The deterministic repair of ``repair`` on ``rows``: clamp into the tightened bounds, then raise."""
    fixed = {n: np.where(rows, np.clip(v, lo[n], hi[n]), v) for n, v in x.items()}
    pairs = [c for c in comparisons if c.pair]
    for _ in range(len(cols) + 2):
        moved = False
        for c in pairs:
            a, b = c.low, c.high
            act = rows & present[a] & present[b]
            new = np.where(act, np.maximum(fixed[b], at_least(cols[b], fixed[a], c.strict)), fixed[b])
            moved |= bool(np.any(new[act] != fixed[b][act]))
            fixed[b] = new
        if not moved:
            break
    for n in x:
        x[n][:] = fixed[n]


__all__ = [
    "Comparison",
    "at_least",
    "at_most",
    "bin_value_ranges",
    "column_range",
    "propagate",
    "involved",
    "components",
    "infeasible_column",
    "zero_codes",
    "violations",
    "exchange",
    "repair",
]
