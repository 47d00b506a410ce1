"""The dtypes of an input pandas DataFrame, given back to the synthetic tables drawn from a model fitted on it.

A DataFrame is read as the same data written to CSV (every value as its text, ``privsample.data.frames``), so the
decoded table has the schema's types: text (``object``), ``float64``, ``int64`` or ``Int64``. ``frame_dtypes``
records the input frame's dtypes; ``dtype_specs`` turns them into what the fitted model keeps (its ``params``, saved
with it); ``restore_dtypes`` converts each synthetic column back to its column's dtype: ``bool``, ``boolean``, the
integer and float dtypes (numpy and nullable), ``category``, ``string`` / ``str``, ``datetime64`` (with its time
zone, from a date or datetime column). ``object`` columns (and any other dtype) are left as decoded.

The dtypes are public: metadata of the input (the column types the caller chose), not records; recording them
reads no value. One part of a dtype can hold what the records hold: the categories of a ``category`` column. The
model keeps only those the release holds too, the categories of its schema (discovered privately, or the reviewed
schema): the output's categories are the input's categories that the schema released, in the input's order, then
the schema's other values (a category the input dtype lacks, the catch-all), so a category the release left out
never reaches the model file or the output. The conversion is post-processing of the synthetic table. A Parquet
output of ``privsample sample`` (and ``synth``) is converted the same way, chunk by chunk (``streamed_specs``:
one dtype per column in every chunk).

A synthetic value the input dtype cannot hold changes the dtype to the nearest one that can: a missing value in a
``bool`` or numpy integer column gives ``boolean`` / ``Int64`` (the model may draw the missing values that a
discovered schema's null code allows); a value that is not a number or a truth value (a catch-all such as
``(other)``) leaves the column as decoded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privsample.data.cells import WHITESPACE
from privsample.data.schema import Categorical

_TRUTH = {"True": True, "False": False}


def frame_dtypes(data: Any) -> dict[str, Any] | None:
    """{column name, as ``frame_table`` cleans it: dtype} of a pandas DataFrame; None for any other input (a pyarrow
    Table, a polars DataFrame, a file: their tables come back as decoded). Public: the dtypes, not the values."""
    if not isinstance(data, pd.DataFrame):
        return None
    return {name.strip(WHITESPACE): dtype for name, dtype in data.dtypes.items() if isinstance(name, str)}


def dtype_specs(dtypes: dict[str, Any] | None, schema) -> dict[str, Any]:
    """What a model fitted on a DataFrame of ``dtypes`` keeps of them (JSON): {column: dtype name}, or for a
    ``category`` column {"categories": the input's categories that ``schema`` released, "ordered": ...}; columns
    of the schema only, and only those ``restore_dtypes`` converts."""
    out: dict[str, Any] = {}
    for name, dtype in (dtypes or {}).items():
        col = _column(schema, name)
        if col is None:
            continue
        if isinstance(dtype, pd.CategoricalDtype):
            released = set(col.categories) if isinstance(col, Categorical) else set()
            cats, seen = [], set()
            for c in dtype.categories:
                if str(c) in released and str(c) not in seen:
                    seen.add(str(c))
                    cats.append(_json_value(c))
            out[name] = {"categories": cats, "ordered": bool(dtype.ordered)}
        elif _converted(dtype):
            out[name] = str(dtype)
    return out


def restore_dtypes(table: pd.DataFrame, specs: dict[str, Any] | None, schema) -> pd.DataFrame:
    """``table`` (decoded by ``schema``) with each column given back the dtype ``specs`` (``dtype_specs``) records
    for it (module docstring); other columns, and everything without ``specs``, are left as they are. A spec that
    does not read (a model file edited by hand) leaves its column as decoded."""
    if not specs or not isinstance(specs, dict) or table is None:
        return table
    out = {}
    for name in table.columns:
        values, spec = table[name], specs.get(name)
        out[name] = values if spec is None else _restore(values, spec, _column(schema, name))
    return pd.DataFrame(out, index=table.index)


def streamed_specs(specs: dict[str, Any] | None, schema) -> dict[str, Any] | None:
    """``specs`` for a table written in chunks that must all have one type per column (Parquet): where a chunk may
    hold a missing value (a nullable column of the schema), ``bool`` and the numpy integer dtypes become their
    nullable forms (``boolean``, ``Int64``, ...) for every chunk, not only for those that draw one."""
    if not specs or not isinstance(specs, dict):
        return specs
    out = dict(specs)
    for name, spec in specs.items():
        col = _column(schema, name)
        if isinstance(spec, dict) or not getattr(col, "nullable", False):
            continue
        try:
            dtype = pd.api.types.pandas_dtype(spec)
        except TypeError:
            continue
        if isinstance(dtype, np.dtype) and dtype.kind == "b":
            out[name] = "boolean"
        elif isinstance(dtype, np.dtype) and dtype.kind in "iu":
            out[name] = ("UInt" if dtype.kind == "u" else "Int") + str(8 * dtype.itemsize)
    return out


def _converted(dtype) -> bool:
    """Whether ``restore_dtypes`` converts a column to ``dtype`` (not ``object``, ...)."""
    if isinstance(dtype, (pd.StringDtype, pd.BooleanDtype, pd.DatetimeTZDtype)):
        return True
    return isinstance(dtype, (np.dtype, pd.api.extensions.ExtensionDtype)) and dtype.kind in "biufM"


def _json_value(v):
    if isinstance(v, np.generic):
        v = v.item()
    return v if isinstance(v, (str, bool, int, float)) else str(v)


def _column(schema, name: str):
    try:
        return schema[name] if schema is not None else None
    except (KeyError, IndexError, TypeError):
        return None


def _restore(values: pd.Series, spec, col) -> pd.Series:
    """``values`` as the dtype ``spec`` names (or the nearest dtype that holds them; as they are when none does)."""
    try:
        if isinstance(spec, dict):
            return _categorical(values, list(spec["categories"]), bool(spec.get("ordered")), col)
        dtype = pd.api.types.pandas_dtype(spec)
        if isinstance(dtype, pd.StringDtype):
            return values.astype(dtype)
        if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "M"):
            return _datetime(values, dtype, col)
        if isinstance(dtype, pd.BooleanDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "b"):
            return _boolean(values, dtype, col)
        if _converted(dtype):
            return _numeric(values, dtype)
    except (TypeError, ValueError, OverflowError, KeyError):
        pass
    return values


def _datetime(values: pd.Series, dtype, col) -> pd.Series:
    """Datetimes of a date or datetime column (text in its format, ``privsample.data.formats``): an instant
    converted to the dtype's time zone, or a naive datetime; a column of another kind is left as decoded."""
    fmt = getattr(col, "value_format", None)
    if getattr(col, "temporal", None) not in ("date", "datetime") or fmt is None:
        return values
    x = fmt.parse(list(values))
    seconds = pd.to_datetime(np.where(np.isfinite(x), x, np.nan) * fmt.unit, unit="s")
    out = pd.Series(seconds, index=values.index)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return out.dt.tz_localize("UTC").dt.tz_convert(dtype.tz).astype(dtype)
    return out.astype(dtype)


def _boolean(values: pd.Series, dtype, col) -> pd.Series:
    """Truth values; a boolean column holds only True and False (its dtype says so, and is public), so the schema's
    catch-all stands for the one of them the schema did not release, or is missing when it released both or
    neither."""
    if values.dtype.kind == "b":
        truth, present = values, values.notna()
    else:
        text = pd.Series([None if _missing(v) else str(v) for v in values], index=values.index, dtype=object)
        if isinstance(col, Categorical) and col.other is not None:
            unreleased = [t for t in _TRUTH if t not in col.categories]
            text = text.mask(text == col.other, unreleased[0] if len(unreleased) == 1 else None)
        present = text.notna()
        if not text[present].isin(list(_TRUTH)).all():
            return values  # a number or another category: not a truth value
        truth = pd.Series(pd.NA, index=values.index, dtype="boolean")
        truth[present] = text[present].map(_TRUTH).astype(bool)
    if isinstance(dtype, pd.BooleanDtype) or not present.all():
        return truth.astype("boolean")
    return truth.astype(bool)


def _numeric(values: pd.Series, dtype) -> pd.Series:
    numbers = pd.to_numeric(values, errors="raise")
    if dtype.kind == "f":
        return numbers.astype(dtype)
    present = numbers.notna()
    if not np.all(np.mod(numbers[present].astype(float), 1) == 0):
        return numbers  # a fraction in an integer column: kept as decoded
    if isinstance(dtype, np.dtype):
        info = np.iinfo(dtype)
        fits = numbers[present].between(info.min, info.max).all()
        if present.all() and fits:
            return numbers.astype(dtype)
        nullable = pd.api.types.pandas_dtype(("UInt" if dtype.kind == "u" else "Int") + str(8 * dtype.itemsize))
        return numbers.astype(nullable) if fits else numbers
    return numbers.astype(dtype)


def _categorical(values: pd.Series, kept: list, ordered: bool, col) -> pd.Series:
    """The input's categories ``kept`` (those the schema released, in the input's order), then the other values
    the column can take (the schema's categories the input lacks, its catch-all; for a numeric column, the values
    drawn, sorted)."""
    of_text = {str(c): c for c in kept}
    cats = list(of_text.values())
    mapped = [None if _missing(v) else of_text.get(v if isinstance(v, str) else str(v), v) for v in values]
    if isinstance(col, Categorical):
        rest = [v for v in (*col.categories, col.other) if v is not None and v not in of_text]
    else:
        rest = sorted({v for v in mapped if v is not None and v not in cats})
    cats += [v for v in rest if v not in cats]
    return pd.Series(pd.Categorical(mapped, categories=cats, ordered=ordered), index=values.index)


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


__all__ = ["frame_dtypes", "dtype_specs", "restore_dtypes", "streamed_specs"]
