"""One column's exact value counts, in a canonical order, whatever engine counted them.

Private discovery (``privsample.data.discovery.private_schema``) needs, per column, only the exact count of
each distinct non-missing value and of the missing values. ``ColumnValues`` holds them; ``ValueSource`` is
what gives them column by column: a pandas DataFrame (``frame_values``), or an out-of-core engine's reader
(``privsample.marginals``), which counts with ``GROUP BY`` and never holds the records.

Canonical form (``ColumnValues`` puts every input in it, so that the same data gives the same object on
every engine and discovery draws its noise in the same order):

* a value's text is ``str(value)``, as in a CSV file; text columns keep their text exactly (``1.50``,
  ``007``); a numeric-typed column (a Parquet/DuckDB/Spark integer or floating-point column, a NumPy
  integer or float array) keeps its distinct values as an int64 / float64 array (compact: millions of
  distinct floats are not turned into Python strings), whose ``str()`` of each element is the value's text
  (Python's shortest round-trip form, ``1.0``, ``1e-05``: the same on every engine, because every engine
  hands over the same binary doubles); booleans become ``True`` / ``False``;
* float ``-0.0`` counts as ``0.0``, and NaN as missing (as ``read_table`` cleans it);
* equal values are merged (their counts added) and the distinct values sorted: values that parse as finite
  numbers (``pd.to_numeric``) first, by number, then the others; ties and the others by text (code-point
  order). A numeric-typed column is simply in ascending order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import numpy as np
import pandas as pd

__all__ = ["ColumnValues", "ValueSource", "FrameValues", "frame_values", "value_numbers"]


@dataclass(frozen=True)
class ColumnValues:
    """The exact counts of one column: ``n_missing`` missing values, and ``counts[i]`` records holding
    ``values[i]`` (distinct, non-missing, canonical order: module docstring). Built from any values and
    counts (duplicates merged, sorted on construction). Sensitive: for a DP mechanism's input only."""

    n_missing: int
    values: np.ndarray  # object array of str, or int64 / float64 array of a numeric-typed column
    counts: np.ndarray  # int64, one per value

    def __post_init__(self) -> None:
        values, counts, extra = _canonical(self.values, self.counts)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "n_missing", int(self.n_missing) + extra)

    @property
    def n_present(self) -> int:
        return int(self.counts.sum())

    def texts(self) -> list[str]:
        """The values' text (``str`` of each)."""
        return [str(v) for v in self.values]


@runtime_checkable
class ValueSource(Protocol):
    """A table that discovery reads column by column: its column names (public, the header), its number of
    records and each column's ``ColumnValues`` (both exact: sensitive, for a DP mechanism's input only)."""

    @property
    def names(self) -> Sequence[str]: ...

    def row_count(self) -> int: ...

    def column_values(self, name: str) -> ColumnValues: ...


class FrameValues:
    """``ValueSource`` of a pandas DataFrame (its column names as text)."""

    def __init__(self, df: pd.DataFrame):
        self._df = df
        self._keys = {str(c): c for c in df.columns}
        self.names = [str(c) for c in df.columns]

    def row_count(self) -> int:
        return len(self._df)

    def column_values(self, name: str) -> ColumnValues:
        return series_values(self._df[self._keys[name]])


def frame_values(df: pd.DataFrame) -> FrameValues:
    return FrameValues(df)


def series_values(column) -> ColumnValues:
    """The ``ColumnValues`` of a pandas Series (or array): missing = ``isna``; numeric dtypes stay compact."""
    s = pd.Series(column, copy=False)
    missing = s.isna().to_numpy(dtype=bool)
    n_missing = int(missing.sum())
    present = s[~missing]
    dtype = present.dtype
    if pd.api.types.is_bool_dtype(dtype):
        values = present.to_numpy(dtype=bool)
    elif pd.api.types.is_float_dtype(dtype):
        values = present.to_numpy(dtype=np.float64)
    elif pd.api.types.is_integer_dtype(dtype):
        values = present.to_numpy(dtype=np.uint64 if str(dtype).lower().startswith("uint") else np.int64)
    else:
        values = present.astype(str).to_numpy(dtype=object)
    if len(values) == 0:
        return ColumnValues(n_missing, np.zeros(0, dtype=object), np.zeros(0, np.int64))
    if values.dtype == object:
        codes, uniques = pd.factorize(values, sort=False)
        counts = np.bincount(codes, minlength=len(uniques))
        return ColumnValues(n_missing, np.asarray(uniques, dtype=object), counts)
    uniques, counts = np.unique(values, return_counts=True)
    return ColumnValues(n_missing, uniques, counts)


def value_numbers(values: np.ndarray) -> np.ndarray:
    """float64 number of each value (``pd.to_numeric`` of its text), NaN where it is not a finite number."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.float64)
    if values.dtype.kind in "iuf":
        x = values.astype(np.float64)
    else:
        parsed = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        with np.errstate(all="ignore"):
            x = np.asarray(parsed, dtype=np.float64)
    return np.where(np.isfinite(x), x, np.nan)


def _canonical(values, counts) -> tuple[np.ndarray, np.ndarray, int]:
    """(distinct values, their counts, count of NaN values moved to missing) in canonical form."""
    values = np.asarray(values)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if values.ndim != 1 or len(values) != len(counts):
        raise ValueError("values and counts must be 1-d arrays of the same length")
    kind = values.dtype.kind
    if kind == "u" and len(values) and values.max() <= np.iinfo(np.int64).max:
        values, kind = values.astype(np.int64), "i"
    if kind == "f":
        values = values.astype(np.float64) + 0.0  # -0.0 -> 0.0
        nan = np.isnan(values)
        extra = int(counts[nan].sum())
        values, counts = values[~nan], counts[~nan]
    else:
        extra = 0
        if kind != "i":  # text, booleans, anything else: its text
            values = np.asarray([str(v) for v in values.tolist()], dtype=object)
    if kind in "if":
        if len(values) < 2 or bool(np.all(values[1:] > values[:-1])):  # already distinct and sorted
            return values, counts, extra
        uniques, inverse = np.unique(values, return_inverse=True)
        if len(uniques) == len(values) and np.array_equal(uniques, values):
            return values, counts, extra
        return uniques, _sum_by(inverse, counts, len(uniques)), extra
    if len(values) == 0:
        return np.zeros(0, dtype=object), np.zeros(0, np.int64), extra
    codes, uniques = pd.factorize(values, sort=False)
    if len(uniques) < len(values):
        counts = _sum_by(codes, counts, len(uniques))
        values = np.asarray(uniques, dtype=object)
    by_text = np.argsort(values, kind="stable")
    values, counts = values[by_text], counts[by_text]
    numbers = value_numbers(values)
    finite = np.isfinite(numbers)
    order = np.lexsort((np.where(finite, numbers, 0.0), ~finite))  # stable: text order among ties
    return values[order], counts[order], extra


def _sum_by(groups: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """int64 sums of ``counts`` by group index (exact, unlike ``np.bincount`` with weights)."""
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, groups.reshape(-1), counts)
    return out
