"""Decoding: records from the integer codes of a schema (the inverse of ``privsample.data.encoding.encode``).

A category code becomes its category, a bin a value drawn inside the bin (with a shaped density, ``bin_slopes``),
the null code a missing value; dates, times and formatted numbers are written in their column's format; the
values of records that break a ``require`` comparison are swapped with other records' values of the same bins, and
what that leaves is redrawn and repaired inside the bins. Every step is a
function of the codes, the public schema and counts given by the caller (a model's own): post-processing.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from privsample.data.identifiers import IdFormat
from privsample.data.require import (
    bin_value_ranges,
    column_range,
    components,
    exchange,
    involved,
    repair,
    violations,
)
from privsample.data.require_entries import require_comparisons
from privsample.data.schema import Categorical, Numeric, Schema

__all__ = ["decode", "id_formats", "bin_slopes", "SHAPE_MIN_RECORDS", "REQUIRE_REDRAWS"]


def _code_columns(codes: Mapping[str, np.ndarray] | np.ndarray, schema: Schema) -> dict[str, np.ndarray]:
    if isinstance(codes, Mapping):
        missing = [n for n in schema.names if n not in codes]
        if missing:
            raise ValueError(f"codes lack column(s): {', '.join(missing)}")
        cols = {n: np.asarray(codes[n]) for n in schema.names}
    else:
        arr = np.asarray(codes)
        if arr.ndim != 2 or arr.shape[1] != len(schema.columns):
            raise ValueError(f"codes must be a 2-D array with {len(schema.columns)} columns, got shape {arr.shape}")
        cols = {n: arr[:, j] for j, n in enumerate(schema.names)}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise ValueError("code columns have different lengths")
    out = {}
    for col in schema.columns:
        c = cols[col.name]
        if c.ndim != 1 or (c.size and not np.issubdtype(c.dtype, np.integer)):
            raise ValueError(f"codes of column '{col.name}' must be a 1-D integer array")
        c = c.astype(np.int64, copy=False)
        if c.size and (c.min() < 0 or c.max() >= col.size):
            raise ValueError(f"codes of column '{col.name}' must lie in [0, {col.size})")
        out[col.name] = c
    return out


# a bin's slope is read off its neighbours only when it and they hold this many draws (fewer: the counts are
# too noisy to tell a slope, and a uniform draw is the safer guess)
SHAPE_MIN_RECORDS = 200


def _bin_spans(col: Numeric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, width, continuous) of each bin as a stretch of the number line: for an integer column the integers
    ``ilo..ihi`` a bin decodes to, as [ilo - 1/2, ihi + 1/2] (width: their number, 0 without one); for a float
    column [lo, hi]. ``continuous``: the bin has room for a shape (two integers or more, or a float bin wider
    than a point bin [v, nextafter(v)))."""
    edges = np.asarray(col.bin_edges, dtype=np.float64)
    lo, hi = edges[:-1], edges[1:]
    if col.integer:
        last = np.arange(len(lo)) == len(lo) - 1
        ilo, ihi = np.ceil(lo), np.where(last, np.floor(hi), np.ceil(hi) - 1)
        n = np.maximum(ihi - ilo + 1, 0.0)
        return ilo - 0.5, n, n >= 2
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo
    return lo, width, np.nextafter(lo, np.inf) < hi


def bin_slopes(col: Numeric, counts: np.ndarray) -> np.ndarray:
    """The shape of the values within each bin of ``col`` given how many records each bin holds (``counts``):
    a linear density on the bin, ``1 + a (u - 1/2)`` at the relative position u in [0, 1], with ``a`` in
    [-2, 2] (0: uniform; -2: a triangle falling to 0 at the upper end). ``a`` follows the densities (records per
    unit of width) of the neighbouring bins (a frequency polygon that keeps each bin's own count): at each inner
    edge the density is interpolated linearly between the two bins' centres; an outer bin takes the slope
    towards its one neighbour. Point bins (a float bin [v, nextafter(v)), an integer bin without an integer) are
    no neighbours, and a bin or a neighbour holding fewer than ``SHAPE_MIN_RECORDS`` records gives no slope.
    A function of the counts and the public schema only (for synthetic codes: post-processing)."""
    start, width, cont = _bin_spans(col)
    k = len(width)
    counts = np.asarray(counts, dtype=np.float64)[:k]
    a = np.zeros(k)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        centre = start + width / 2
        dens = np.where(width > 0, counts / width, 0.0)
        ok = (counts >= SHAPE_MIN_RECORDS) & (width > 0) & np.isfinite(dens) & np.isfinite(centre)
        for b in np.flatnonzero(cont & ok):
            slopes = []
            for nb in (b - 1, b + 1):
                if 0 <= nb < k and ok[nb] and (cont[nb] or col.integer):
                    slopes.append((dens[nb] - dens[b]) / (centre[nb] - centre[b]))
            if not slopes:
                continue
            if len(slopes) == 2:  # interpolated densities at the two edges, joined by a line
                left = dens[b] - slopes[0] * width[b] / 2
                right = dens[b] + slopes[1] * width[b] / 2
                s = (right - left) / width[b]
            else:
                s = slopes[0]
            v = s * width[b] / dens[b]
            a[b] = float(np.clip(v, -2.0, 2.0)) if np.isfinite(v) else 0.0
    return a


def _linear_draw(a: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Positions u in [0, 1] with density ``1 + a (u - 1/2)`` (|a| <= 2) from uniform ``t``: the inverse of
    F(u) = u + a (u^2 - u) / 2, in a form without cancellation (``a`` = 0 gives u = t)."""
    b = 1.0 - a / 2
    root = np.sqrt(np.maximum(b * b + 2.0 * a * t, 0.0))
    den = b + root
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(den > 0, 2.0 * t / den, 0.0)
    return np.clip(u, 0.0, 1.0)


def _decode_numeric(
    col: Numeric, c: np.ndarray, rng: np.random.Generator, counts: np.ndarray | None = None
) -> pd.Series | np.ndarray:
    edges = col.bin_edges
    k = int(col.bins)
    null = (c == col.null_code) if col.nullable else np.zeros(len(c), dtype=bool)
    special = (c >= k) & ~null  # -inf, inf (``Numeric.special``)
    if special.any():  # a float column: the bins' values, and the special values at their codes
        plain = _decode_numeric(replace(col, special=()), np.where(special, 0, np.where(null, k, c)), rng, counts)
        x = np.where(null, np.nan, pd.Series(plain).to_numpy(dtype=np.float64, na_value=np.nan))
        return np.where(special, col.special_values[np.clip(c - k, 0, len(col.special) - 1)], x)
    b = np.where(null, 0, c)
    lo, hi = edges[b], edges[b + 1]
    last = b == k - 1
    # the shape within each bin, from the bin counts of these codes (``bin_slopes``)
    a = bin_slopes(col, np.bincount(c[~null], minlength=k) if counts is None else counts)[b]
    u = _linear_draw(a, rng.random(len(c)))
    if col.integer and max(abs(col.lower), abs(col.upper)) < 2**62:
        ilo = np.ceil(lo)
        ihi = np.where(last, np.floor(hi), np.ceil(hi) - 1)
        empty = ihi < ilo
        n = np.where(empty, 1.0, ihi - ilo + 1)
        draw = ilo + np.minimum(np.floor(u * n), n - 1)  # the integer whose stretch of [0, 1) holds u
        values = np.where(empty, np.round((lo + hi) / 2), draw).astype(np.int64)
        if col.nullable:
            return pd.Series(pd.arrays.IntegerArray(values, null))
        return values
    with np.errstate(over="ignore", invalid="ignore"):
        x = lo + (hi - lo) * u
        # a bin wider than the largest float (bounds near ±1.8e308): the same draw on halved values
        x = np.where(np.isfinite(hi - lo), x, 2 * (lo / 2 + (hi / 2 - lo / 2) * u))
    # keep x inside its half-open bin despite rounding (the last bin is closed)
    x = np.where(last, np.minimum(x, hi), np.minimum(x, np.nextafter(hi, -np.inf)))
    x = np.maximum(x, lo)
    if col.integer:  # bounds beyond int64: whole numbers as floats
        x = np.clip(np.round(x), math.ceil(col.lower), math.floor(col.upper))
    return np.where(null, np.nan, x)


def _decode_within(
    col: Numeric, c: np.ndarray, rng: np.random.Generator, intervals: Sequence[tuple[float, float]]
) -> pd.Series | np.ndarray:
    """As ``_decode_numeric``, but each value is drawn uniformly in its bin ∩ ``intervals`` (closed, merged,
    sorted; integer columns: whole-number ends), i.e. from its decoded distribution given that it lies in
    them. Every bin of ``c`` (the null code aside) must meet them (weight > 0, ``condition.bin_share``)."""
    edges = col.bin_edges
    k = int(col.bins)
    null = (c == col.null_code) if col.nullable else np.zeros(len(c), dtype=bool)
    values = np.zeros(len(c), dtype=np.int64 if col.integer else float)
    for b in np.unique(c[~null]):
        idx = np.flatnonzero((c == b) & ~null)
        lo, hi, last = float(edges[b]), float(edges[b + 1]), int(b) == k - 1
        if col.integer:
            ilo, ihi = math.ceil(lo), (math.floor(hi) if last else math.ceil(hi) - 1)
            if ihi < ilo:  # no integer in the bin: its rounded midpoint (which lies in the intervals)
                values[idx] = round((lo + hi) / 2)
                continue
            pieces = [(max(ilo, int(a)), min(ihi, int(b2))) for a, b2 in intervals if max(ilo, a) <= min(ihi, b2)]
            starts = np.array([p[0] for p in pieces], dtype=np.int64)
            cum = np.cumsum([p[1] - p[0] + 1 for p in pieces])
            j = rng.integers(0, int(cum[-1]), size=idx.size)  # the j-th allowed integer of the bin
            piece = np.searchsorted(cum, j, side="right")
            values[idx] = starts[piece] + j - np.concatenate([[0], cum[:-1]])[piece]
            continue
        if hi <= lo:
            values[idx] = lo
            continue
        pieces = [(max(lo, a), min(hi, b2)) for a, b2 in intervals if min(hi, b2) - max(lo, a) > 0]
        a = np.array([p[0] for p in pieces])
        z = np.array([p[1] for p in pieces])
        cum = np.cumsum(z - a)
        t = rng.random(idx.size) * cum[-1]
        piece = np.minimum(np.searchsorted(cum, t, side="right"), len(pieces) - 1)
        x = np.clip(a[piece] + (t - np.concatenate([[0.0], cum[:-1]])[piece]), a[piece], z[piece])
        values[idx] = x if last else np.minimum(x, np.nextafter(hi, -np.inf))
    if col.integer:
        return pd.Series(pd.arrays.IntegerArray(values, null)) if col.nullable else values
    return np.where(null, np.nan, values)


def _outside_level() -> int:
    """The ``stacklevel`` of the caller's first frame outside privsample: a warning names the user's line."""
    import sys

    level, frame = 2, sys._getframe(2)
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "privsample":
        level, frame = level + 1, frame.f_back
    return level


def id_formats(schema: Schema, n_out: int, n_real: float | None = None) -> dict[str, IdFormat]:
    """The format of the fresh ids of each identifier column of ``schema`` for an output of ``n_out`` rows: its own,
    or widened (``identifiers.widened``: more digits, the same prefix and suffix) where the expected number of
    synthetic ids equal to a real one or to one another would exceed ``MAX_EXPECTED_MATCHES``. ``n_real``: an
    estimate of the number of real records, a noisy count (default: private discovery's noisy row count, else
    ``n_out``); never an exact one. Each widening is warned of (``IdentifierFormatWarning``), naming the column and
    the format used. A function of public numbers only (post-processing)."""
    import warnings

    from privsample.data.identifiers import MAX_EXPECTED_MATCHES, widened
    from privsample.errors import IdentifierFormatWarning
    from privsample.privacy.released import released

    if n_real is None:
        n_real = float((schema.discovery or {}).get("n_hat") or n_out)
    out = {}
    for col in schema.identifiers:
        fmt = col.id_format
        out[col.name] = wide = widened(fmt, int(n_out), float(n_real))
        if wide != fmt:
            warnings.warn(
                f"identifier column '{col.name}': the format {str(fmt)!r} is too small for fresh ids to stay apart "
                f"from about {released(n_real, ',.0f')} real ones; the output uses {released(str(wide))} (more "
                f"digits, the same prefix), so that the expected number of synthetic ids equal to a real one is at "
                f"most {MAX_EXPECTED_MATCHES:g}",
                IdentifierFormatWarning,
                stacklevel=_outside_level(),
            )
    return out


def decode(
    codes: Mapping[str, np.ndarray] | np.ndarray,
    schema: Schema,
    rng: np.random.Generator,
    within: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    bin_counts: Mapping[str, np.ndarray] | None = None,
    ids: Mapping[str, IdFormat] | None = None,
) -> pd.DataFrame:
    """Records from codes ({column: codes} or a 2-D array with columns in schema order).

    Categorical: code -> its category; the other code -> the ``other`` label; the null code -> None
    (object column). Numeric: a bin -> a value drawn in the bin, ``[lo, hi)`` (the last bin ``[lo, hi]``) as
    float64; integer columns draw an integer among the integers in the bin, i.e. in ``[ceil(lo), ceil(hi) - 1]``
    (last bin ``[ceil(lo), floor(hi)]``), falling back to ``round(midpoint)`` when the bin holds no integer (such
    a value need not re-encode to its bin). Within a bin the values follow a linear density whose slope comes
    from the densities of the neighbouring bins (``bin_slopes``; uniform where the counts are too small to tell):
    a skewed amount's wide bins decode with more values towards the dense side, as the records they came from
    lie. The densities are those of ``bin_counts`` (numeric column -> records per bin, e.g. a model's own
    expected counts, so that a table drawn in chunks follows the same law as one drawn at once), else of these
    codes. A function of the codes, the counts given and the schema only: decoding synthetic codes with a
    model's counts remains post-processing.
    The null code -> NaN (float) or ``pd.NA`` (integer columns, which are then ``Int64``; else ``int64``).
    ``within`` (numeric column -> allowed closed intervals, ``condition.ColumnCondition.intervals``): that
    column's values are drawn within bin ∩ intervals (conditional sampling; every bin must meet them).
    Vectorised; draws come from ``rng`` column by column in schema order.
    ``schema.require`` (order constraints): every record satisfies every comparison (``_require``), its values
    still in their bins.
    Identifier columns (``schema.identifiers``) get fresh ids drawn from ``rng`` after the other columns, uniformly
    from the format's space and independently of the data (``identifiers.draw_ids``), with the formats ``ids``
    (default: ``id_formats(schema, rows)``, widened if need be); the columns come in the order of
    ``schema.output_names`` (free-text columns are not in the output).
    """
    cols = _code_columns(codes, schema)
    data: dict[str, Any] = {}
    for col in schema.columns:
        c = cols[col.name]
        if isinstance(col, Categorical):
            labels = np.array(
                list(col.categories)
                + ([col.other] if col.other is not None else [])
                + ([None] if col.nullable else []),
                dtype=object,
            )
            data[col.name] = pd.Series(labels[c], dtype=object)
        elif within and col.name in within:
            data[col.name] = _decode_within(col, c, rng, within[col.name])
        else:
            data[col.name] = _decode_numeric(col, c, rng, (bin_counts or {}).get(col.name))
    if schema.require and cols:
        _require(schema, cols, data, rng, within or {}, bin_counts or {})
    for col in schema.columns:  # dates, times and formatted numbers: text in the column's format
        fmt = col.value_format if isinstance(col, Numeric) else None
        if fmt is not None:
            x = pd.Series(data[col.name]).to_numpy(dtype=np.float64, na_value=np.nan)
            data[col.name] = pd.Series(fmt.write(x), dtype=object)
    n = len(next(iter(cols.values()))) if cols else 0
    if schema.identifiers:
        from privsample.data.identifiers import draw_ids

        formats = ids if ids is not None else id_formats(schema, n)
        for col in schema.identifiers:
            data[col.name] = pd.Series(draw_ids(formats.get(col.name, col.id_format), n, rng), dtype=object)
        data = {name: data[name] for name in schema.output_names}
    return pd.DataFrame(data, index=pd.RangeIndex(n))


REQUIRE_EXCHANGES = 32  # rounds of swapping values within bins between records (``require.exchange``)
REQUIRE_REDRAWS = 32  # rounds of redrawing the records that break a comparison, before the deterministic repair


def _as_float(values: Any) -> np.ndarray:
    """Decoded numeric values as float64, NaN for null (integer columns: exact below 2**53)."""
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(values, dtype=np.float64)


def _from_float(col: Numeric, x: np.ndarray) -> pd.Series | np.ndarray:
    """Values as ``decode`` gives them for ``col`` from float64 (NaN for null)."""
    if not col.integer:
        return x
    null = np.isnan(x)
    values = np.where(null, 0.0, x).astype(np.int64)
    return pd.Series(pd.arrays.IntegerArray(values, null)) if col.nullable else values


def _require(schema: Schema, cols: dict, data: dict, rng: np.random.Generator, within: Mapping, bin_counts: Mapping):
    """Make every decoded record satisfy every ``require`` comparison, each value staying in its bin (and in the
    ``within`` intervals' hull). Post-processing of the codes, of the values drawn from them and of the public
    schema; no record is read. A record that breaks a comparison (possible only where its bins overlap; the pairs of
    bins where one cannot hold are structural zeros) first swaps values with records of the same bins
    (``require.exchange``, ``REQUIRE_EXCHANGES`` rounds): each bin keeps the very values it drew, so the shape of
    every column within its bins is that of decoding without comparisons (drawing again until a comparison holds
    would push the values of a pair of overlapping bins apart, towards their ends). A record no swap mends (the
    model put more records in a sliver where two bins overlap than the bins' values there) has the values of the
    columns linked to it by comparisons redrawn in their bins, from the same within-bin law, up to
    ``REQUIRE_REDRAWS`` times (a kept redraw follows that law given the comparisons).
    What still breaks one (bins that overlap only in a sliver) is repaired within the bins (``require.repair``):
    the bins are narrowed to the values that can go together, a value outside them is drawn uniformly within
    them, column by column, and a deterministic repair (values raised to the least that the order allows)
    catches the rest. A record whose bins admit no values satisfying the comparisons together (three or more
    columns' bins can, where the pairwise zeros do not see it) is repaired within the columns' bounds instead,
    which always admit some (``parse_require``)."""
    comparisons = require_comparisons(schema)
    names = involved(comparisons)
    columns = {n: schema[n] for n in names}
    x = {n: _as_float(data[n]) for n in names}
    counts = {}
    for n in names:
        col, c = columns[n], cols[n]
        given = bin_counts.get(n)
        counts[n] = given if given is not None else np.bincount(c[c != col.null_code], minlength=int(col.bins))
    for group in components(comparisons):  # columns linked by comparisons are redrawn together, others apart
        group_names = involved(group)
        exchange(group, columns, {n: cols[n] for n in group_names}, x, rng, REQUIRE_EXCHANGES)
        bad = violations(group, x)
        for _ in range(REQUIRE_REDRAWS):
            idx = np.flatnonzero(bad)
            if idx.size == 0:
                break
            for n in group_names:
                col, c = columns[n], cols[n][idx]
                if n in within:
                    x[n][idx] = _as_float(_decode_within(col, c, rng, within[n]))
                else:
                    x[n][idx] = _as_float(_decode_numeric(col, c, rng, counts[n]))
            bad[idx] = violations(group, {n: x[n][idx] for n in group_names})
    bad = violations(comparisons, x)
    idx = np.flatnonzero(bad)
    if idx.size:
        sub = {n: v[idx] for n, v in x.items()}
        lo, hi = {}, {}
        for n in names:
            col, c = columns[n], cols[n][idx]
            mins, maxs = bin_value_ranges(col)
            b = np.where(c == col.null_code, 0, c) if col.nullable else c
            lo[n], hi[n] = mins[b], maxs[b]
            if n in within and within[n]:  # the intervals' hull, within the bin
                lo[n] = np.maximum(lo[n], min(a for a, _ in within[n]))
                hi[n] = np.minimum(hi[n], max(z for _, z in within[n]))
        ok = repair(comparisons, columns, sub, lo, hi, rng)
        if not ok.all():  # bins jointly impossible: within the columns' bounds (which admit a solution)
            rest = {n: v[~ok] for n, v in sub.items()}
            wide = {n: np.full(int((~ok).sum()), column_range(columns[n])[0]) for n in names}
            top = {n: np.full(int((~ok).sum()), column_range(columns[n])[1]) for n in names}
            repair(comparisons, columns, rest, wide, top, rng)
            for n in names:
                sub[n][~ok] = rest[n]
        for n in names:
            x[n][idx] = sub[n]
    for n in names:
        data[n] = _from_float(columns[n], x[n])


# -- schema helper ----------------------------------------------------------------------------------
