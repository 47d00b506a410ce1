"""Encoding a table into the schema's integer codes, and decoding codes back into records.

The code layout is the one documented in ``privsample.data.schema``. ``encode`` treats only null
values (None, NaN, pd.NA) as missing; turning text such as ``?`` into missing is the job of
``read_table`` (``na_values``). The ``other`` label itself always encodes to the other code, so
``encode(decode(codes)) == codes`` holds for every column kind.
"""

from __future__ import annotations

import math

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from privsample.data.cells import NUMBER_RE, WHITESPACE
from privsample.data.identifiers import IdFormat
from privsample.data.schema import DEFAULT_NA_VALUES, DEFAULT_OTHER_LABEL, Categorical, Column, Numeric, Schema
from privsample.errors import InputError

# Problem kinds (shared with the DuckDB engine so that both report the same way).
MISSING, NOT_A_NUMBER, OUT_OF_RANGE, UNKNOWN, NEEDS_OTHER = 1, 2, 3, 4, 5
_MAX_EXACT = 2.0**53
_NUMBER = re.compile(NUMBER_RE, re.ASCII | re.IGNORECASE)


def _show(value: Any) -> str:
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_problem(column: Column, kind: int, value: Any = None, row: int | None = None) -> str:
    """One-line message for a bad value in ``column`` (``row``: 1-based data row, if known)."""
    where = f"column '{column.name}'" + (f", data row {row}" if row is not None else "")
    if kind == MISSING:
        return f"{where}: missing value, but the schema column is not nullable (set nullable: true)"
    if kind == NOT_A_NUMBER:
        return f"{where}: value {_show(value)} is not a number"
    if kind == OUT_OF_RANGE:
        assert isinstance(column, Numeric)
        return (
            f"{where}: value {_show(value)} is outside the schema bounds "
            f"[{column.lower:g}, {column.upper:g}] (fix the bounds, or clip)"
        )
    if kind == UNKNOWN:
        return f"{where}: value {_show(value)} is not one of the schema's categories (add it, or map it to other)"
    if kind == NEEDS_OTHER:
        return (
            f"{where}: value {_show(value)} is not one of the schema's categories and the schema column "
            f"has no `other:` label to map it to (add `other: <label>` to the column)"
        )
    raise ValueError(f"unknown problem kind {kind}")


def value_text(value: Any) -> str:
    """The string a categorical value is compared as: integral floats print as integers (3.0 -> '3')."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return str(int(f)) if f.is_integer() and abs(f) < _MAX_EXACT else str(f)
    return str(value)


# -- encode -----------------------------------------------------------------------------------------
def code_dtype(size: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds the codes 0 .. size - 1 (int64 beyond uint32)."""
    for t in (np.uint8, np.uint16, np.uint32):
        if size - 1 <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


def _is_arrow_text(values: Any) -> bool:
    """``values`` is an Arrow string array (coded through Arrow's dictionary encoding)."""
    import pyarrow as pa

    return isinstance(values, pa.Array) and (pa.types.is_string(values.type) or pa.types.is_large_string(values.type))


def _factorize(values: Any) -> tuple[np.ndarray, Sequence]:
    """(index of each value into the distinct values, -1 for a missing one; the distinct values) of a pandas
    Series, or of an Arrow string array (``read_table`` turns it into the same ``str`` values, None for null)."""
    if not _is_arrow_text(values):
        return pd.factorize(values, use_na_sentinel=True)
    import pyarrow.compute as pc

    d = pc.dictionary_encode(values)
    return pc.fill_null(d.indices, -1).to_numpy(zero_copy_only=False), d.dictionary.to_pylist()


def _raise_first(column: Column, problem: np.ndarray, series: Any) -> None:
    bad = np.flatnonzero(problem)
    if bad.size:
        i = int(bad[0])
        value = series[i].as_py() if _is_arrow_text(series) else series.iloc[i]
        if pd.api.types.is_scalar(value) and pd.isna(value):
            value = None
        raise InputError(describe_problem(column, int(problem[i]), value, i + 1))


def _encode_categorical(col: Categorical, s: Any, other: bool, release: bool = False) -> np.ndarray:
    idx, uniques = _factorize(s)
    lookup = {c: i for i, c in enumerate(col.categories)}
    if col.other is not None:
        lookup[col.other] = col.other_code
    ucode = np.array([lookup.get(value_text(u), -1) for u in uniques], dtype=np.int64)
    missing = idx < 0
    codes = np.full(len(s), -1, dtype=np.int64)
    codes[~missing] = ucode[idx[~missing]]
    unknown = ~missing & (codes < 0)
    if release:  # fixed per-record rule, never an error: see ``encode``
        fallback = [c for c in (col.other_code, col.null_code) if c is not None]
        codes[unknown] = fallback[0] if fallback else -1
        fallback = [c for c in (col.null_code, col.other_code) if c is not None]
        codes[missing] = fallback[0] if fallback else -1
        return codes
    coerce = other and col.other is not None
    if col.nullable:
        codes[missing] = col.null_code
    elif coerce:
        codes[missing] = col.other_code
    if coerce:
        codes[unknown] = col.other_code
    problem = np.zeros(len(s), dtype=np.int8)
    problem[missing & (codes < 0)] = MISSING
    problem[unknown & (codes < 0)] = NEEDS_OTHER if other else UNKNOWN
    _raise_first(col, problem, s)
    return codes


def parse_number(value: Any) -> float | None:
    """The number a (non-null) value denotes, or None if it is not one.

    Numbers and booleans convert directly; text must match ``NUMBER_RE`` (after stripping
    whitespace): decimal or scientific notation, ``inf``/``infinity``/``nan`` in any case, with an
    optional sign. A value that parses to NaN counts as missing.
    """
    if isinstance(value, (bool, np.bool_, int, np.integer, float, np.floating)):
        return float(value)
    text = str(value).strip(WHITESPACE)
    return float(text) if _NUMBER.fullmatch(text) else None


def as_float(s: Any) -> tuple[np.ndarray, np.ndarray]:
    """(float values with NaN for missing, 'not a number' mask) of a Series or an Arrow string array."""
    if not _is_arrow_text(s) and (pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype)):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), dtype=bool)
    idx, uniques = _factorize(s)  # parse each distinct value once
    parsed = [parse_number(u) for u in uniques]
    ux = np.array([np.nan if p is None else p for p in parsed] + [np.nan], dtype=np.float64)
    ubad = np.array([p is None for p in parsed] + [False], dtype=bool)
    return ux[idx], ubad[idx]  # idx -1 (missing) picks the sentinel at the end


def _encode_numeric(col: Numeric, s: Any, clip: bool, release: bool = False) -> np.ndarray:
    x, bad = as_float(s)
    missing = np.isnan(x) & ~bad
    out = ~missing & ~bad & ((x < col.lower) | (x > col.upper))
    clip = clip or release
    if clip:
        x = np.clip(x, col.lower, col.upper)
    edges = col.bin_edges
    codes = np.searchsorted(edges[1:-1], np.where(missing | bad, col.lower, x), side="right").astype(np.int64)
    if release:  # a non-number counts as missing; without a null code the record has no code (-1)
        codes[missing | bad] = col.null_code if col.nullable else -1
        return codes
    if col.nullable:
        codes[missing] = col.null_code
    problem = np.zeros(len(s), dtype=np.int8)
    if not col.nullable:
        problem[missing] = MISSING
    problem[bad] = NOT_A_NUMBER
    if not clip:
        problem[out] = OUT_OF_RANGE
    _raise_first(col, problem, s)
    return codes


def _encode_columns(
    columns: Iterable[tuple[Column, Any]], *, clip: bool, other: bool, release: bool, compact: bool
) -> list[np.ndarray]:
    """The codes of each (schema column, values) in turn (see ``encode``); ``compact``: in ``code_dtype``."""
    out: list[np.ndarray] = []
    keep = None
    for col, s in columns:
        if isinstance(col, Categorical):
            c = _encode_categorical(col, s, other, release)
        else:
            c = _encode_numeric(col, s, clip, release)
        if release:
            keep = c >= 0 if keep is None else keep & (c >= 0)
        # only a left-out record (release) has a negative code: its wrapped-around value is dropped below
        out.append(c.astype(code_dtype(col.size), copy=False) if compact else c)
    if keep is not None and not keep.all():
        out = [c[keep] for c in out]
    return out


def encode(
    df: pd.DataFrame,
    schema: Schema,
    *,
    clip: bool = False,
    other: bool = False,
    release: bool = False,
    compact: bool = False,
) -> dict[str, np.ndarray]:
    """{column: int64 codes} in schema order (layout: ``privsample.data.schema``); ``compact``: each
    column's codes in the smallest unsigned dtype that holds them (``code_dtype``), the same values.

    Strict (``release=False``, for validation and evaluation, which are not releases): bad values
    raise InputError naming the column, the first bad 1-based data row and the value: a non-number
    in a numeric column; a number outside [lower, upper] (unless ``clip``, which clamps it to the
    bounds); a value outside a categorical column's categories (unless ``other``, which maps it to
    the column's other code; the column then needs an ``other`` label); a missing value in a
    non-nullable column (with ``other``, a non-nullable categorical column with an ``other`` label
    maps it to other).

    Release (``release=True``): a fixed rule applied to each record on its own, never an error, so
    that no message, exit code or decision depends on one record's value: a number outside the
    bounds is clipped; an unknown category goes to the column's ``other`` code, else its null code;
    a missing value goes to the null code, else the ``other`` code; a non-number in a numeric column
    counts as missing. A record with a value for which the schema has no code (a missing value or a
    non-number in a non-nullable numeric column; an unknown or missing category in a column with
    neither an ``other`` label nor a null code) is left out. Mapping and leaving out are per-record
    transformations (stability 1 under add/remove-one neighbours), so any mechanism run on the
    result keeps its guarantee; how many records were affected is never reported.
    ``release_schema`` gives every column a code for every value, so that nothing is left out.
    Columns of ``df`` not in the schema are ignored.
    """

    def columns() -> Iterator[tuple[Column, pd.Series]]:
        for col in schema.columns:
            if col.name not in df.columns:
                raise InputError(f"column '{col.name}' is in the schema but not in the data")
            s = df[col.name]
            if isinstance(s, pd.DataFrame):
                raise InputError(f"column '{col.name}' appears more than once in the data")
            yield col, s.reset_index(drop=True)

    codes = _encode_columns(columns(), clip=clip, other=other, release=release, compact=compact)
    return dict(zip(schema.names, codes))


def read_codes(
    path: str | Path,
    schema: Schema,
    *,
    na_values: Sequence[str] = DEFAULT_NA_VALUES,
    allow_empty: bool = False,
    delimiter: str | None = None,
    encoding: str | None = None,
    batch_rows: int | None = None,
) -> dict[str, np.ndarray]:
    """``encode(read_table(path, ...), schema, release=True, compact=True)`` without the table in memory.

    The file is read in Arrow batches (``table_batches``, ``batch_rows`` rows each) and each batch is coded
    column by column by the same rules, text columns through Arrow's dictionary encoding (each distinct
    value looked up or parsed once, as ``encode`` does); only the codes are kept. The codes are identical to
    ``encode``'s, in the same order; every bad file raises ``InputError`` as ``read_table`` does. A schema
    column missing from the file is refused before the records are read.
    """
    from privsample.data.table import BATCH_ROWS, empty_table_error, table_batches, to_pandas_column

    p = Path(path)
    parts: list[list[np.ndarray]] = [[] for _ in schema.columns]
    rows = 0
    with table_batches(
        p, na_values=na_values, delimiter=delimiter, encoding=encoding, batch_rows=batch_rows or BATCH_ROWS
    ) as (names, kinds, batches):
        where = {name: i for i, name in enumerate(names)}
        for col in schema.columns:
            if col.name not in where:
                raise InputError(f"column '{col.name}' is in the schema but not in the data")
        for batch in batches:
            rows += batch.num_rows

            def columns(batch=batch) -> Iterator[tuple[Column, Any]]:
                for col in schema.columns:
                    i = where[col.name]
                    values = batch.column(i)
                    yield col, values if _is_arrow_text(values) else pd.Series(to_pandas_column(values, kinds[i]))

            for part, c in zip(parts, _encode_columns(columns(), clip=True, other=False, release=True, compact=True)):
                part.append(c)
            del batch
    if rows == 0 and not allow_empty:
        raise empty_table_error(p)
    out = {}
    for col, part in zip(schema.columns, parts):
        out[col.name] = np.concatenate(part) if part else np.zeros(0, dtype=code_dtype(col.size))
        part.clear()
    return out


# -- decode -----------------------------------------------------------------------------------------
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
    n = len(next(iter(cols.values()))) if cols else 0
    if schema.identifiers:
        from privsample.data.identifiers import draw_ids

        formats = ids if ids is not None else id_formats(schema, n)
        for col in schema.identifiers:
            data[col.name] = pd.Series(draw_ids(formats.get(col.name, col.id_format), n, rng), dtype=object)
        data = {name: data[name] for name in schema.output_names}
    return pd.DataFrame(data, index=pd.RangeIndex(n))


# -- schema helper ----------------------------------------------------------------------------------
def schema_with_other(schema: Schema, label: str = DEFAULT_OTHER_LABEL) -> Schema:
    """A copy of ``schema`` where every categorical column without an ``other`` label gets one.

    Data-independent: the label is ``label``, or ``label`` plus a number if that is a category.
    """
    cols: list[Column] = []
    for col in schema.columns:
        if isinstance(col, Categorical) and col.other is None:
            name, i = label, 2
            while name in col.categories:
                name, i = f"{label} {i}", i + 1
            col = dataclasses.replace(col, other=name)
        cols.append(col)
    return dataclasses.replace(schema, columns=cols, ledger=copy.deepcopy(schema.ledger), notes=list(schema.notes))


def release_schema(schema: Schema, label: str = DEFAULT_OTHER_LABEL) -> Schema:
    """A copy of ``schema`` with a code for every value: categorical columns without an ``other``
    label get one (as ``schema_with_other``) and every column becomes nullable (missing values, and in a
    numeric column non-numbers, get the null code, never the catch-all). Data-independent, so the result is
    as public as ``schema``. Used for privately discovered schemas, whose noisy domain may miss values of
    some records; a null code whose noisy count did not pass is fixed at probability 0 by the synthesizers
    (``privsample.synth.zeros.StructuralZeros.noise_born``).
    """
    base = schema_with_other(schema, label)
    cols = [c if c.nullable else dataclasses.replace(c, nullable=True) for c in base.columns]
    return dataclasses.replace(base, columns=cols)


RELEASE_RULE = (
    "values outside the schema are handled record by record: numbers are clipped to the bounds, "
    "unknown categories go to the catch-all, missing values and non-numbers to the null code; a "
    "record the schema cannot hold is left out (no count is disclosed; 'privsample check' lists "
    "them for the data owner and is not private)"
)


def release_domain(schema: Schema, other: bool) -> Schema:
    """The schema the release path encodes with, a function of the public ``schema`` and flags only.

    A privately discovered schema is noisy, so every column gets a code for every value
    (``release_schema``: catch-alls and null codes) and no record is left out. A reviewed schema is
    used as declared (``other``: catch-alls for its categorical columns)."""
    if schema.provenance == "private":
        return release_schema(schema)
    return schema_with_other(schema) if other else schema
