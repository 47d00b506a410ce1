"""Encoding a table into the schema's integer codes (decoding them back: ``privsample.data.decoding``).

The code layout is the one documented in ``privsample.data.schema``. ``encode`` treats only null
values (None, NaN, pd.NA) as missing; turning text such as ``?`` into missing is the job of
``read_table`` (``na_values``). The ``other`` label itself always encodes to the other code, so
``encode(decode(codes)) == codes`` holds for every column kind.
"""

from __future__ import annotations


import copy
import dataclasses
import re
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from privsample.data.cells import NUMBER_RE, WHITESPACE
from privsample.data.schema import (
    DEFAULT_NA_VALUES,
    DEFAULT_OTHER_LABEL,
    Categorical,
    Column,
    Numeric,
    Schema,
)
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


def as_float(s: Any, fmt: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(float values with NaN for missing, 'not a number' mask) of a Series or an Arrow string array; with
    ``fmt`` (a ``privsample.data.formats`` format: dates, times, formatted numbers), text is read in it."""
    if not _is_arrow_text(s) and (pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype)):
        return s.to_numpy(dtype=np.float64, na_value=np.nan), np.zeros(len(s), dtype=bool)
    idx, uniques = _factorize(s)  # parse each distinct value once
    if fmt is not None:
        ux = np.append(fmt.parse(list(uniques)), np.nan)
        ubad = np.append(np.isnan(ux[:-1]), False)
        return ux[idx], ubad[idx]
    parsed = [parse_number(u) for u in uniques]
    ux = np.array([np.nan if p is None else p for p in parsed] + [np.nan], dtype=np.float64)
    ubad = np.array([p is None for p in parsed] + [False], dtype=bool)
    return ux[idx], ubad[idx]  # idx -1 (missing) picks the sentinel at the end


def _encode_numeric(col: Numeric, s: Any, clip: bool, release: bool = False) -> np.ndarray:
    x, bad = as_float(s, col.value_format)
    special = [(x == v, col.bins + i) for i, v in enumerate(col.special_values)]  # -inf, inf: codes of their own
    for m, _ in special:
        x = np.where(m, col.lower, x)
    missing = np.isnan(x) & ~bad
    out = ~missing & ~bad & ((x < col.lower) | (x > col.upper))
    clip = clip or release
    if clip:
        x = np.clip(x, col.lower, col.upper)
    edges = col.bin_edges
    codes = np.searchsorted(edges[1:-1], np.where(missing | bad, col.lower, x), side="right").astype(np.int64)
    for m, code in special:
        codes[m] = code
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
    index_col: str | int | None = None,
) -> dict[str, np.ndarray]:
    """``encode(read_table(path, ...), schema, release=True, compact=True)`` without the table in memory.

    The file is read in Arrow batches (``table_batches``, ``batch_rows`` rows each) and each batch is coded
    column by column by the same rules, text columns through Arrow's dictionary encoding (each distinct
    value looked up or parsed once, as ``encode`` does); only the codes are kept. The codes are identical to
    ``encode``'s, in the same order; every bad file raises ``InputError`` as ``read_table`` does. A schema
    column missing from the file is refused before the records are read. ``index_col``: ``read_table``'s.
    """
    from privsample.data.table import BATCH_ROWS, empty_table_error, table_batches, to_pandas_column

    p = Path(path)
    parts: list[list[np.ndarray]] = [[] for _ in schema.columns]
    rows = 0
    with table_batches(
        p,
        na_values=na_values,
        delimiter=delimiter,
        encoding=encoding,
        batch_rows=batch_rows or BATCH_ROWS,
        index_col=index_col,
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
