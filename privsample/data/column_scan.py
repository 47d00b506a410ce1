"""What schema discovery reads of a column and of a table's header, shared by the draft and private discovery.

``Scan``: a column's distinct non-missing values with their exact counts and parsed numbers (sensitive: for a
DP mechanism's input, or for the loudly non-private draft). ``sorted_categories`` and ``other_label`` order
and name a categorical column's categories; ``check_names`` checks a table's column names (public).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from privsample.data.column_values import ColumnValues, ValueSource, series_values, value_numbers
from privsample.data.format_classes import coarse_classes
from privsample.data.schema import DEFAULT_OTHER_LABEL
from privsample.errors import InputError

__all__ = ["Scan", "scan_series", "scan_values", "sorted_categories", "other_label", "check_names"]


@dataclass(frozen=True)
class Scan:
    """The distinct non-missing values of a column with their counts and parsed numbers."""

    n_missing: int
    # distinct non-missing values in canonical order (``ColumnValues``): object array of str, or the int64 / float64
    # array of a numeric-typed column (``str()`` of an element is its text)
    values: np.ndarray
    counts: np.ndarray  # int64 count of each value
    numbers: np.ndarray  # float64 parsed value, NaN where not a finite number

    def texts(self) -> list[str]:
        """The values' text (``str`` of each)."""
        return [str(v) for v in self.values]

    @property
    def numbers_or_inf(self) -> np.ndarray:
        """``numbers`` with -inf and inf where a value is an infinite number (``inf``, ``-Infinity``)."""
        classes = coarse_classes(self.values)
        return np.where(classes == 3, np.inf, np.where(classes == 4, -np.inf, self.numbers))

    @property
    def is_number(self) -> np.ndarray:
        return np.isfinite(self.numbers)

    @property
    def is_integral(self) -> np.ndarray:
        x = self.numbers
        ok = np.isfinite(x)
        out = np.zeros(x.shape, dtype=bool)
        out[ok] = np.floor(x[ok]) == x[ok]
        return out


def scan_series(column: pd.Series) -> Scan:
    """The scan of a pandas column."""
    return scan_values(series_values(column))


def scan_values(cv: ColumnValues) -> Scan:
    """The scan of a column's exact counts (``ColumnValues``: canonical order, the same on every engine)."""
    return Scan(cv.n_missing, cv.values, cv.counts, value_numbers(cv.values))


def sorted_categories(values: Sequence[str]) -> list[str]:
    """Sort numerically when every value parses as a finite number, else as strings."""
    vals = [str(v) for v in values]
    if not vals:
        return []
    nums = np.asarray(pd.to_numeric(pd.Series(vals, dtype=object), errors="coerce"), dtype=np.float64)
    if np.all(np.isfinite(nums)):
        order = sorted(range(len(vals)), key=lambda i: (nums[i], vals[i]))
        return [vals[i] for i in order]
    return sorted(vals)


def other_label(categories: Sequence[str]) -> str:
    """The catch-all label: ``DEFAULT_OTHER_LABEL``, numbered when a category already has that text."""
    label, i, taken = DEFAULT_OTHER_LABEL, 2, set(categories)
    while label in taken:
        label, i = f"{DEFAULT_OTHER_LABEL[:-1]} {i})", i + 1
    return label


def check_names(table: pd.DataFrame | ValueSource) -> list[str]:
    """The column names of a DataFrame or of a ``ValueSource``: text, at least one, distinct."""
    if isinstance(table, ValueSource):
        names = [str(n) for n in table.names]
    elif isinstance(table, pd.DataFrame):
        names = [str(c) for c in table.columns]
    else:
        raise InputError(f"expected a pandas DataFrame, got {type(table).__name__}")
    if not names:
        raise InputError("the table has no columns")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"the table has duplicate column names: {', '.join(dup)}")
    return names
