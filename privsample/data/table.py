"""Reading a table file (CSV or Parquet), with a one-line ``InputError`` for every kind of bad input.

One parser serves both paths: ``read_table`` (in memory) and the out-of-core DuckDB marginal engine
read files through ``source_sql`` (DuckDB SQL), so both see exactly the same values.

Cleaning rules (identical for both paths):
* CSV: RFC 4180 (comma, double quote, ``""`` escape), UTF-8 (a BOM is ignored), a header row;
  every column is text. Blank lines are skipped (in a one-column file a blank line is an empty value).
* Text values (CSV fields, Parquet strings) and header names lose surrounding ``WHITESPACE``;
  a text value equal to one of ``na_values`` becomes missing.
* Parquet keeps its types: integers stay integers, floats/decimals become float64 (NaN -> missing),
  booleans stay booleans, anything else (dates, ...) becomes its DuckDB text form.

``read_table`` returns text and boolean columns as ``object`` dtype holding ``str``/``bool`` with
``None`` for missing (never the pandas 3 ``str`` dtype, whose missing value is NaN); integer columns
as ``int64`` (``Int64`` with ``pd.NA`` when they contain nulls); float columns as ``float64`` (NaN).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import re
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from privsample.data.schema import DEFAULT_NA_VALUES
from privsample.errors import InputError

FORMATS = {".csv": "csv", ".csv.gz": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
WHITESPACE = " \t\n\r\f\v"
_SNIFF = 1 << 16  # bytes inspected for NUL (binary) content

# DuckDB settings of every connection that reads a table: the IN-list optimizer takes time superlinear in the
# number of columns on the cleaning query (about 25 s for 200 columns and 30 rows; 1 s without it).
DUCKDB_CONFIG = {"disabled_optimizers": "in_clause"}

_INT_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
_FLOAT_TYPES = {"FLOAT", "DOUBLE", "HUGEINT", "UHUGEINT"}


# -- small SQL helpers (shared with the DuckDB engine) ---------------------------------------------
def sql_str(s: str) -> str:
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_ident(s: str) -> str:
    """A quoted SQL identifier."""
    return '"' + str(s).replace('"', '""') + '"'


def sql_isnan(x: str) -> str:
    """SQL: is the DOUBLE ``x`` NaN. Not ``isnan(x)``: DuckDB 2.0 folds that to false for Parquet
    columns whose min/max statistics exclude NaN (so NaN would escape as a value)."""
    return f"(NOT isfinite({x}) AND NOT isinf({x}))"


def column_kind(duckdb_type: str) -> str:
    """'text' | 'int' | 'float' | 'bool' for a DuckDB type name (as cleaned by ``clean_select``)."""
    t = str(duckdb_type).upper()
    if t in _INT_TYPES:
        return "int"
    if t in _FLOAT_TYPES or t.startswith("DECIMAL"):
        return "float"
    if t == "BOOLEAN":
        return "bool"
    return "text"


def clean_select(from_sql: str, names: Sequence[str], types: Sequence[str],
                 na_values: Sequence[str]) -> tuple[str, list[str]]:
    """SQL selecting the cleaned columns of ``from_sql`` (see the module docstring), and their kinds:
    :func:`privsample.data.sql_dialect.clean_sql` in DuckDB, the cleaning the marginal engines use too."""
    from privsample.data.sql_dialect import DUCKDB, clean_sql  # it builds on this module's SQL helpers

    kinds = [column_kind(t) for t in types]
    return clean_sql(from_sql, [(sql_ident(n), n, k) for n, k in zip(names, kinds)], na_values, DUCKDB), kinds


# -- files ------------------------------------------------------------------------------------------
def table_format(path: str | Path) -> str:
    """'csv' or 'parquet' for an existing data file; InputError otherwise."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"data file not found: {p}")
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a data file")
    if not p.is_file():
        raise InputError(f"{p} is not a regular file")
    name = p.name.lower()
    for suffix, fmt in FORMATS.items():
        if name.endswith(suffix):
            return fmt
    raise InputError(f"{p}: unknown file type (expected {', '.join(FORMATS)})")


def _open_bytes(p: Path):
    return gzip.open(p, "rb") if p.name.lower().endswith(".gz") else open(p, "rb")


def _bad_utf8_line(p: Path) -> int | None:
    """1-based number of the first line that is not valid UTF-8 (error path only)."""
    try:
        with _open_bytes(p) as fh:
            decoder = codecs.getincrementaldecoder("utf-8")()
            for i, line in enumerate(fh, start=1):
                try:
                    decoder.decode(line)
                except UnicodeDecodeError:
                    return i
    except (OSError, EOFError, zlib.error):
        return None
    return None


def csv_header(path: str | Path) -> tuple[list[str], int]:
    """The cleaned column names of a CSV file and the number of (blank) lines before its header.

    Raises InputError for an empty, binary, non-UTF-8 or header-less file, or duplicate names.
    Empty names become ``Unnamed: i`` (0-based, as pandas does).
    """
    p = Path(path)
    try:
        with _open_bytes(p) as fh:
            head = fh.read(_SNIFF)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{p}: cannot read ({_reason(exc)})") from None
    if not head:
        raise InputError(f"{p}: the file is empty (no header, no rows)")
    if b"\x00" in head:
        raise InputError(f"{p}: looks like a binary file, not CSV text (it contains NUL bytes)")
    record: list[str] | None = None
    skip = 0
    try:
        with _open_bytes(p) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
            reader = csv.reader(text, delimiter=",", quotechar='"', doublequote=True, strict=False)
            for row in reader:
                if any(field.strip(WHITESPACE) for field in row):
                    record = row
                    break
                skip = reader.line_num
    except UnicodeDecodeError:
        line = _bad_utf8_line(p)
        raise InputError(f"{p}: not valid UTF-8 text" + (f" (line {line})" if line else "")) from None
    except (csv.Error, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{p}: cannot parse the CSV header ({_reason(exc)})") from None
    if record is None:
        raise InputError(f"{p}: no header row (the file has only blank lines)")
    names = [f.strip(WHITESPACE) or f"Unnamed: {i}" for i, f in enumerate(record)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"{p}: duplicate column name(s) in the header: {', '.join(repr(d) for d in dup)}")
    return names, skip


def _parquet_names(p: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        names = list(pq.read_schema(p).names)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
        raise InputError(f"{p}: not a readable Parquet file ({_reason(exc)})") from None
    if not names:
        raise InputError(f"{p}: the Parquet file has no columns")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"{p}: duplicate column name(s): {', '.join(repr(d) for d in dup)}")
    return names


def source_sql(con, path: str | Path, na_values: Sequence[str] = DEFAULT_NA_VALUES) -> tuple[str, list[str], list[str]]:
    """(SQL selecting the cleaned columns of the file, column names, column kinds) on ``con``."""
    p = Path(path)
    fmt = table_format(p)
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty (0 bytes)")
    if fmt == "csv":
        names, skip = csv_header(p)
        cols = "{" + ", ".join(f"{sql_str(n)}: 'VARCHAR'" for n in names) + "}"
        fnn = "[" + ", ".join(sql_str(n) for n in names) + "]"
        scan = (f"read_csv({sql_str(str(p))}, header = true, skip = {skip}, delim = ',', quote = '\"', "
                f"escape = '\"', auto_detect = false, columns = {cols}, force_not_null = {fnn}, "
                f"strict_mode = true, null_padding = false, ignore_errors = false, encoding = 'utf-8')")
        types = ["VARCHAR"] * len(names)
    else:
        names = _parquet_names(p)
        scan = f"read_parquet({sql_str(str(p))})"
        try:
            rel = con.sql(f"SELECT * FROM {scan}")
            types = [str(t) for t in rel.types]
        except Exception as exc:  # noqa: BLE001
            raise duckdb_input_error(exc, p) from None
    sql, kinds = clean_select(scan, names, types, na_values)
    return sql, names, kinds


# -- errors -----------------------------------------------------------------------------------------
def _reason(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else type(exc).__name__
    text = re.sub(r"^[A-Za-z ]*(Error|Exception): ", "", text)
    return text[:200]


def duckdb_input_error(exc: BaseException, source: str | Path) -> InputError:
    """Turn a (multi-line) DuckDB reader error into a one-line InputError naming the file and line."""
    text = str(exc)
    m = re.search(r"CSV Error on Line: (\d+)", text)
    where = f"line {m.group(1)}: " if m else ""
    if mm := re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text):
        reason = f"expected {mm.group(1)} fields (as in the header), found {mm.group(2)}"
    elif "unterminated quote" in text:
        reason = "a quoted value is not terminated"
    elif "Invalid unicode" in text or "not utf-8" in text:
        reason = "not valid UTF-8 text"
    elif "Maximum line size" in text:
        reason = "a line exceeds the CSV reader's maximum line size"
    elif "Parquet" in text or "magic bytes" in text:
        reason = f"not a readable Parquet file ({_reason(exc)})"
    elif m:
        after = text.split("Original Line:", 1)[-1].splitlines()[1:]
        cand = [ln.strip() for ln in after if ln.strip() and not ln.strip().startswith("Possible")]
        reason = cand[0][:200] if cand else "cannot parse the CSV"
    else:
        reason = _reason(exc)
    return InputError(f"{source}: {where}{reason}")


def empty_table_error(source: str | Path) -> InputError:
    return InputError(f"{source}: the table has no data rows")


# -- in-memory reading --------------------------------------------------------------------------------
def _to_pandas(col, kind: str) -> pd.Series | np.ndarray:
    import pyarrow.compute as pc

    if kind == "float":
        return col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    if kind == "int":
        if col.null_count == 0:
            return col.to_numpy(zero_copy_only=False)
        values = pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
        mask = col.is_null().to_numpy(zero_copy_only=False)
        return pd.Series(pd.arrays.IntegerArray(values, mask))
    return pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)


def read_table(path: str | Path, *, na_values: Sequence[str] = DEFAULT_NA_VALUES,
               allow_empty: bool = False) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.csv.gz``, ``.txt``) or Parquet (``.parquet``, ``.pq``) file.

    Missing values are ``None`` in text/boolean (object) columns, ``pd.NA`` in nullable-integer
    columns and NaN in float columns (see the module docstring). Every bad input raises
    ``InputError`` with one line naming the file and, where known, the line. A table with a header and
    no rows is an error unless ``allow_empty`` (release paths under add/remove neighbours, where
    refusing n = 0 but not n = 1 would itself reveal something).
    """
    import duckdb

    p = Path(path)
    con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
    try:
        sql, names, kinds = source_sql(con, p, tuple(na_values))
        try:
            table = con.sql(sql).to_arrow_table()
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
            raise duckdb_input_error(exc, p) from None
    finally:
        con.close()
    if table.num_rows == 0 and not allow_empty:
        raise empty_table_error(p)
    data = {name: _to_pandas(table.column(i), kind) for i, (name, kind) in enumerate(zip(names, kinds))}
    return pd.DataFrame(data, index=pd.RangeIndex(table.num_rows))
