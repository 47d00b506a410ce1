"""In-memory tables (pandas, pyarrow, polars) read as ``read_table`` reads a CSV file.

A CSV file's columns are all text: ``read_table`` returns them as ``object`` columns of ``str`` trimmed of
``WHITESPACE``, with ``None`` where a value is one of ``na_values``. :func:`frame_table` gives an in-memory
table the same form, so that a DataFrame and the same data written to CSV (``DataFrame.to_csv(index=False)``)
are one input: the same schema, the same encoding, the same synthetic table for the same seed.

Each value becomes its text, ``str(value)`` (as ``to_csv`` writes it), for pandas and for a pyarrow Table or a
polars DataFrame alike (read through Arrow as Python values; polars is optional and never imported unless the
object is one), so that the same data gives the same table whichever library holds it. Missing values (None,
NaN, NA, NaT) become ``None``. The index of a pandas DataFrame is not a column. Column names must be
non-empty, distinct text; anything else is an ``InputError``, raised before any value is read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from privsample.data.cells import WHITESPACE
from privsample.data.schema import DEFAULT_NA_VALUES
from privsample.errors import InputError

KINDS = ("pandas", "arrow", "polars")
ACCEPTED = "a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path"


def frame_kind(data) -> str | None:
    """'pandas' | 'arrow' | 'polars' for an in-memory table, else None (polars is not imported)."""
    if isinstance(data, pd.DataFrame):
        return "pandas"
    module = type(data).__module__.split(".")[0]
    if module == "pyarrow":
        import pyarrow as pa

        if isinstance(data, pa.Table):
            return "arrow"
    if module == "polars":
        import polars as pl

        if isinstance(data, pl.DataFrame):
            return "polars"
    return None


def frame_names(data, kind: str, label: str) -> list[str]:
    """The cleaned column names of the in-memory table (``InputError`` for names a CSV header cannot hold)."""
    raw = list(data.columns) if kind == "pandas" else list(data.column_names if kind == "arrow" else data.columns)
    if not raw:
        raise InputError(f"{label}: the table has no columns")
    bad = [n for n in raw if not isinstance(n, str)]
    if bad:
        raise InputError(f"{label}: column names must be text (got {bad[0]!r})")
    names = [n.strip(WHITESPACE) for n in raw]
    empty = [i for i, n in enumerate(names) if not n]
    if empty:
        raise InputError(f"{label}: column {empty[0] + 1} has an empty name")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"{label}: duplicate column name(s): {', '.join(repr(d) for d in dup)}")
    return names


def _clean(values: np.ndarray, na_values: Sequence[str]) -> pd.Series:
    """Object column of trimmed ``str`` (``None`` for missing and for ``na_values``), as ``read_table``."""
    s = pd.Series(values, dtype=object)
    present = s.notna().to_numpy()
    out = np.full(len(s), None, dtype=object)
    if present.any():
        text = np.array([v.strip(WHITESPACE) for v in s[present]], dtype=object)
        text[np.isin(text, np.asarray(list(na_values), dtype=object))] = None
        out[present] = text
    return pd.Series(out, dtype=object)


def _pandas_text(col: pd.Series) -> np.ndarray:
    missing = col.isna().to_numpy()
    values = col.to_numpy(dtype=object)
    out = np.full(len(values), None, dtype=object)
    out[~missing] = [str(v) for v in values[~missing]]
    return out


def _arrow_text(col) -> np.ndarray:
    values = col.to_pylist()  # Python values, so that the text is what the pandas path gives
    return np.array([None if v is None or v != v else str(v) for v in values], dtype=object)


def drop_index_column(data, kind: str, index_col, label: str):
    """``data`` without the column ``index_col`` names (``privsample.data.table.index_position``: a name, or a
    1-based position), as ``read_table(..., index_col=...)`` leaves it out of a file; ``(data, kind)``."""
    if index_col is None:
        return data, kind
    from privsample.data.csv_layout import index_position

    raw = list(data.columns) if kind == "pandas" else list(data.column_names if kind == "arrow" else data.columns)
    i = index_position(label, raw, index_col)
    if kind == "pandas":
        return data.iloc[:, [j for j in range(len(raw)) if j != i]], kind
    if kind == "polars":
        data, kind = data.to_arrow(), "arrow"
    return data.remove_column(i), kind


def frame_table(
    data, *, na_values: Sequence[str] = DEFAULT_NA_VALUES, label: str = "the table", index_col=None
) -> pd.DataFrame:
    """The in-memory table ``data`` as ``read_table`` returns a CSV file of it (module docstring), without the
    column ``index_col`` names (``drop_index_column``).

    An empty table (names, no rows) is returned empty: on release paths n = 0 is an input like any other."""
    kind = frame_kind(data)
    if kind is None:
        raise InputError(f"expected {ACCEPTED}, not {type(data).__name__}")
    data, kind = drop_index_column(data, kind, index_col, label)
    names = frame_names(data, kind, label)
    if kind == "polars":
        data, kind = data.to_arrow(), "arrow"
    if kind == "pandas":
        cols = [_pandas_text(data.iloc[:, i]) for i in range(data.shape[1])]
    else:
        cols = [_arrow_text(data.column(i)) for i in range(data.num_columns)]
    n = len(cols[0])
    return pd.DataFrame({name: _clean(c, na_values) for name, c in zip(names, cols)}, index=pd.RangeIndex(n))


__all__ = ["frame_kind", "frame_names", "frame_table", "drop_index_column", "ACCEPTED"]
