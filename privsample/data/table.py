"""Reading a table file (CSV or Parquet), with a one-line ``InputError`` for every kind of bad input.

One parser serves both paths: ``read_table`` (in memory) and the out-of-core DuckDB marginal engine
read files through ``source_sql`` (DuckDB SQL), so both see exactly the same values.

Cleaning rules (identical for both paths):
* CSV: RFC 4180 (double quote, ``""`` escape), a header row; every column is text. Blank lines are
  skipped (in a one-column file a blank line is an empty value).
* The delimiter (``,`` ``;`` tab ``|``) is read off the header line alone (column names are public):
  the one candidate that occurs outside quotes; none means one column; several are refused, naming
  the likely one, unless ``delimiter`` forces it. Data lines never change the choice.
* The encoding: a byte-order mark decides (UTF-8, UTF-16 LE/BE); else ``encoding`` (default UTF-8).
  DuckDB reads UTF-8 itself; any other encoding is transcoded (Python's codec) to a temporary UTF-8
  copy first. Only the header line decides a refusal before reading (not valid text, NUL bytes).
* Records: a line that is not one record of the header's width (a wrong number of fields, a quote left
  open, text not valid in the encoding) stops the read with ``malformed_error``, a ``DataError`` whose
  message names no line, field count or value (the records are private; a budget file keeps the run's
  charge); its ``detail`` and ``malformed_lines`` give the lines to ``privsample check`` (NOT private).
* Text values (CSV fields, Parquet strings) and header names lose surrounding ``WHITESPACE``;
  a text value equal to one of ``na_values`` becomes missing.
* An index column (``index_col``: a name, or a 1-based position for a column with no name, as ``df.to_csv()``
  writes a pandas index) is decided from the header alone, parsed but never selected: no reader returns it.
* Parquet keeps its types: integers stay integers, floats/decimals become float64 (NaN -> missing),
  booleans stay booleans, anything else (dates, ...) becomes its DuckDB text form.

``read_table`` returns text and boolean columns as ``object`` dtype holding ``str``/``bool`` with
``None`` for missing (never the pandas 3 ``str`` dtype, whose missing value is NaN); integer columns
as ``int64`` (``Int64`` with ``pd.NA`` when they contain nulls); float columns as ``float64`` (NaN).
"""

from __future__ import annotations

import codecs
import hashlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from privsample.data.cells import WHITESPACE
from privsample.data.csv_layout import (
    INDEX_HINT,
    CsvLayout,
    IndexCol,
    csv_layout,
    encoding_error,
    index_position,
    open_bytes,
)
from privsample.data.read_errors import (  # re-exported: callers import them from this module
    duckdb_input_error,
    empty_table_error,
    error_reason,
    malformed_error,
)
from privsample.data.schema import DEFAULT_NA_VALUES
from privsample.data.sql_dialect import DUCKDB, clean_sql, sql_ident, sql_str
from privsample.errors import InputError

FORMATS = {".csv": "csv", ".csv.gz": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
_CHUNK = 1 << 20  # bytes per step when transcoding
DUCKDB_CONFIG = {"disabled_optimizers": "in_clause"}
_INT_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
_FLOAT_TYPES = {"FLOAT", "DOUBLE", "HUGEINT", "UHUGEINT"}


# -- cleaning SQL (DuckDB) -------------------------------------------------------------------------
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


def clean_select(
    from_sql: str, names: Sequence[str], types: Sequence[str], na_values: Sequence[str]
) -> tuple[str, list[str]]:
    """SQL selecting the cleaned columns of ``from_sql`` (see the module docstring), and their kinds:
    :func:`privsample.data.sql_dialect.clean_sql` in DuckDB, the cleaning the marginal engines use too."""
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


def transcode(path: str | Path, layout: CsvLayout, directory: str | Path) -> Path:
    """A UTF-8 copy of the CSV file (same lines; a ``.gz`` file is decompressed) in ``directory``.

    InputError (one line, no bytes or line numbers) if the file is not valid in ``layout.encoding``."""
    p = Path(path)
    target = Path(directory) / "transcoded.csv"
    decoder = codecs.getincrementaldecoder(layout.encoding)()
    try:
        with open_bytes(p) as src, open(target, "wb") as dst:
            while chunk := src.read(_CHUNK):
                dst.write(decoder.decode(chunk).encode("utf-8"))
            dst.write(decoder.decode(b"", final=True).encode("utf-8"))
    except UnicodeDecodeError:
        target.unlink(missing_ok=True)
        raise malformed_error(p, str(encoding_error(p, layout.encoding, layout.chosen_by))) from None
    except (OSError, EOFError, zlib.error) as exc:
        target.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == str(target):
            raise InputError(f"cannot write a UTF-8 copy of {p} to {directory}: {exc.strerror}") from None
        raise InputError(f"{p}: cannot read ({error_reason(exc)})") from None
    return target


def parquet_names(p: Path, index_col: IndexCol = None) -> list[str]:
    """The column names of a Parquet file, from its schema (the footer) alone, without the index column
    ``index_col`` names (``index_position``); ``InputError`` for an unreadable file, no columns, an empty name
    (its 1-based position) or duplicate names."""
    names, index = parquet_header(p, index_col)
    return [n for i, n in enumerate(names) if i != index]


def parquet_header(p: Path, index_col: IndexCol = None) -> tuple[list[str], int | None]:
    """(every column name of a Parquet file, the 0-based position of the index column ``index_col`` names or
    None), checked as ``parquet_names`` says."""
    import pyarrow.parquet as pq

    try:
        names = list(pq.read_schema(p).names)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
        raise InputError(f"{p}: not a readable Parquet file ({error_reason(exc)})") from None
    if not names:
        raise InputError(f"{p}: the Parquet file has no columns")
    index = index_position(p, names, index_col)
    empty = [i + 1 for i, n in enumerate(names) if not str(n).strip(WHITESPACE) and i != index]
    if empty:
        hint = f" (an index column? {INDEX_HINT.format(n=empty[0])})" if empty[0] == 1 else ""
        raise InputError(f"{p}: column {empty[0]} of the Parquet file has no name{hint}: name every column")
    kept = [n for i, n in enumerate(names) if i != index]
    dup = sorted({n for n in kept if kept.count(n) > 1})
    if dup:
        raise InputError(f"{p}: duplicate column name(s): {', '.join(repr(d) for d in dup)}")
    return names, index


def _csv_scan(read: Path, layout: CsvLayout, duck: str, rejects: bool = False) -> str:
    """DuckDB's ``read_csv`` of the file at ``read`` (in DuckDB's encoding ``duck``) as every reader reads it: all
    columns text, strict RFC 4180; ``rejects`` skips the lines that do not parse and stores them in DuckDB's
    ``reject_errors`` table instead (for ``malformed_lines``)."""
    names = layout.scan_names
    cols = "{" + ", ".join(f"{sql_str(n)}: 'VARCHAR'" for n in names) + "}"
    fnn = "[" + ", ".join(sql_str(n) for n in names) + "]"
    errors = "ignore_errors = true, store_rejects = true" if rejects else "ignore_errors = false"
    return (
        f"read_csv({sql_str(str(read))}, header = true, skip = {layout.skip}, delim = {sql_str(layout.delimiter)}, "
        f"quote = '\"', escape = '\"', auto_detect = false, columns = {cols}, force_not_null = {fnn}, "
        f"strict_mode = true, null_padding = false, {errors}, encoding = {sql_str(duck)})"
    )


def malformed_lines(
    path: str | Path, *, delimiter: str | None = None, encoding: str | None = None, limit: int = 20
) -> tuple[int, list[tuple[int, str, str]]]:
    """NOT PRIVATE, for the data owner (``privsample check``): the lines of a CSV file that do not read as
    records of its header's columns, as (how many, the first ``limit`` as (line number, problem, line text))."""
    import duckdb

    p = Path(path)
    layout = csv_layout(p, delimiter, encoding)
    with tempfile.TemporaryDirectory(prefix="privsample-check-") as tmp:
        read, duck = p, layout.duckdb_encoding
        if duck is None:
            read, duck = transcode(p, layout, tmp), "utf-8"
        con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
        try:
            con.sql(f"SELECT count(*) FROM {_csv_scan(read, layout, duck, rejects=True)}").fetchall()
            found = con.sql(
                "SELECT line, min(error_type), min(csv_line) FROM reject_errors GROUP BY line ORDER BY line"
            ).fetchall()
        except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
            raise InputError(f"{p}: cannot list the malformed lines ({error_reason(exc)})") from None
        finally:
            con.close()
    lines = [(int(line), str(kind).lower(), str(text)[:200]) for line, kind, text in found]
    return len(lines), lines[:limit]


def source_sql(
    con,
    path: str | Path,
    na_values: Sequence[str] = DEFAULT_NA_VALUES,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
    workdir: str | Path | Callable[[], str | Path] | None = None,
    index_col: IndexCol = None,
) -> tuple[str, list[str], list[str]]:
    """(SQL selecting the cleaned columns of the file, column names, column kinds) on ``con``; the index column
    ``index_col`` names (``index_position``, from the header alone) is neither selected nor named.

    CSV only: ``delimiter`` / ``encoding`` force them (else detected, ``csv_layout``); a file in an
    encoding DuckDB does not read is first transcoded to a UTF-8 copy in ``workdir`` (a directory, or a
    function that makes one when it is needed), which must then outlive every query of the returned
    SQL (the caller removes it)."""
    p = Path(path)
    fmt = table_format(p)
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty (0 bytes)")
    if fmt == "csv":
        layout = csv_layout(p, delimiter, encoding, index_col)
        names = list(layout.names)
        read, duck = p, layout.duckdb_encoding
        if duck is None:
            if workdir is None:
                raise ValueError("source_sql needs a workdir to read a file that must be transcoded")
            read, duck = transcode(p, layout, workdir() if callable(workdir) else workdir), "utf-8"
        scan = _csv_scan(read, layout, duck)
        types = ["VARCHAR"] * len(names)
    else:
        all_names, index = parquet_header(p, index_col)
        names = [n for i, n in enumerate(all_names) if i != index]
        scan = f"read_parquet({sql_str(str(p))})"
        try:
            rel = con.sql(f"SELECT * FROM {scan}")
            types = [str(t) for i, t in enumerate(rel.types) if i != index]
        except Exception as exc:  # noqa: BLE001
            raise duckdb_input_error(exc, p) from None
    sql, kinds = clean_select(scan, names, types, na_values)
    return sql, names, kinds


def table_columns(
    path: str | Path, *, delimiter: str | None = None, encoding: str | None = None, index_col: IndexCol = None
) -> list[str]:
    """The column names of a CSV or Parquet file, from its header alone (the names ``read_table`` gives), without
    the index column ``index_col`` names."""
    p = Path(path)
    if table_format(p) == "csv":
        if p.stat().st_size == 0:
            raise InputError(f"{p}: the file is empty (0 bytes)")
        return list(csv_layout(p, delimiter, encoding, index_col).names)
    return parquet_names(p, index_col)


# -- in-memory reading --------------------------------------------------------------------------------
BATCH_ROWS = 1 << 17  # rows per Arrow batch of ``table_batches``


def to_pandas_column(col, kind: str) -> pd.Series | np.ndarray:
    """An Arrow column (or array) of kind ``kind`` (``column_kind``) as ``read_table`` returns it."""
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


@contextmanager
def _cleaned_source(
    p: Path, na_values: Sequence[str], delimiter: str | None, encoding: str | None, index_col: IndexCol = None
):
    """(DuckDB connection, cleaning SQL, column names, column kinds) of the file at ``p`` (``source_sql``);
    the connection is closed and any UTF-8 copy removed on exit."""
    import duckdb

    con = duckdb.connect(":memory:", config=DUCKDB_CONFIG)
    workdir = None

    def make_workdir() -> str:
        nonlocal workdir
        try:
            workdir = tempfile.mkdtemp(prefix="privsample-read-")
        except OSError as exc:
            raise InputError(
                f"cannot create a temporary directory for a UTF-8 copy of {p} in "
                f"{tempfile.gettempdir()}: {exc.strerror}"
            ) from None
        return workdir

    try:
        sql, names, kinds = source_sql(
            con, p, tuple(na_values), delimiter=delimiter, encoding=encoding, workdir=make_workdir, index_col=index_col
        )
        yield con, sql, names, kinds
    finally:
        con.close()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def read_table(
    path: str | Path,
    *,
    na_values: Sequence[str] = DEFAULT_NA_VALUES,
    allow_empty: bool = False,
    delimiter: str | None = None,
    encoding: str | None = None,
    index_col: IndexCol = None,
) -> pd.DataFrame:
    """Read a CSV (``.csv``, ``.csv.gz``, ``.txt``) or Parquet (``.parquet``, ``.pq``) file.

    CSV: ``delimiter`` and ``encoding`` force them, else they are detected (module docstring); a
    file DuckDB cannot decode itself is transcoded to a temporary UTF-8 copy, removed afterwards.
    ``index_col``: an index column (``IndexCol``, decided from the header alone), never read nor returned.

    Missing values are ``None`` in text/boolean (object) columns, ``pd.NA`` in nullable-integer
    columns and NaN in float columns (see the module docstring). Every bad input raises
    ``InputError`` with one line naming the file and, where known, the line. A table with a header and
    no rows is an error unless ``allow_empty`` (release paths under add/remove neighbours, where
    refusing n = 0 but not n = 1 would itself reveal something).
    """
    p = Path(path)
    with _cleaned_source(p, na_values, delimiter, encoding, index_col) as (con, sql, names, kinds):
        try:
            table = con.sql(sql).to_arrow_table()
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
            raise duckdb_input_error(exc, p) from None
    if table.num_rows == 0 and not allow_empty:
        raise empty_table_error(p)
    data = {name: to_pandas_column(table.column(i), kind) for i, (name, kind) in enumerate(zip(names, kinds))}
    return pd.DataFrame(data, index=pd.RangeIndex(table.num_rows))


@contextmanager
def table_batches(
    path: str | Path,
    *,
    na_values: Sequence[str] = DEFAULT_NA_VALUES,
    delimiter: str | None = None,
    encoding: str | None = None,
    batch_rows: int = BATCH_ROWS,
    index_col: IndexCol = None,
) -> Iterator[tuple[list[str], list[str], Iterator]]:
    """The file at ``path`` as ``read_table`` reads it (same cleaning, same errors), a batch at a time:
    ``with table_batches(path) as (names, kinds, batches)``; ``batches`` yields Arrow record batches of at
    most ``batch_rows`` rows in file order, column i of kind ``kinds[i]`` (``to_pandas_column`` turns it into
    ``read_table``'s column). Only one batch is in memory at a time. A bad file raises ``InputError``,
    on entry or while iterating."""
    p = Path(path)
    with _cleaned_source(p, na_values, delimiter, encoding, index_col) as (con, sql, names, kinds):
        yield names, kinds, _batches(con, sql, p, batch_rows)


def _batches(con, sql: str, p: Path, batch_rows: int) -> Iterator:
    try:
        reader = con.sql(sql).to_arrow_reader(batch_rows)
    except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
        raise duckdb_input_error(exc, p) from None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001
            raise duckdb_input_error(exc, p) from None
        yield batch


IN_MEMORY = "in-memory"  # the fingerprint of a table that cannot be hashed


def fingerprint(source) -> str:
    """What identifies an input in a budget file: 'sha256:HEX' of a local file's bytes; for a pandas DataFrame,
    'values:HEX' of its names and values; else ``IN_MEMORY``. Kept in the steward's budget file only (never
    printed nor released); read only once the run's charge is reserved."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            return f"not a local file: {source}"
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return "sha256:" + h.hexdigest()
    if isinstance(source, pd.DataFrame):
        try:
            h = hashlib.sha256(",".join(map(str, source.columns)).encode())
            h.update(pd.util.hash_pandas_object(source, index=False).values.tobytes())
            return "values:" + h.hexdigest()
        except Exception:  # values pandas cannot hash: no fingerprint
            pass
    return IN_MEMORY


def check_not_private(public, private) -> None:
    """``InputError`` (one line) when the public table ``public`` is the private table ``private``: the same file
    (links resolved, hard links too), a byte-identical copy (the same SHA-256 as the budget file records), or an
    equal in-memory table of the same kind. Files that do not exist are left to the other checks.

    Called before any budget is reserved or spent. The refusal reads the private table, but reveals one bit
    only: whether it is exactly a table the user declared public. On that one table every record is public by
    the user's declaration, so there is no guarantee to protect; on every other table the run is unchanged. (An
    adversary who already knew that the private table is the public one with or without a single record would
    learn which; such a public table overlaps the private one, which voids the guarantee anyway.)"""
    if public is None or private is None:
        return
    if isinstance(public, (str, os.PathLike)) and isinstance(private, (str, os.PathLike)):
        from privsample.io import same_file

        pub, priv = Path(public), Path(private)
        if not (pub.is_file() and priv.is_file()):
            return
        if same_file(pub, priv):
            why = "is the private input itself (the same file)"
        # equal sizes first, only to skip hashing: the outcome is whether the bytes are equal, nothing more
        elif pub.stat().st_size == priv.stat().st_size and fingerprint(pub) == fingerprint(priv):
            why = "is a byte-identical copy of the private input"
        else:
            return
        raise InputError(f"public table {pub.name} {why}: a public table must not overlap the private one")
    if public is private or (type(public) is type(private) and _equal_tables(public, private)):
        raise InputError("the public table equals the private one: a public table must not overlap the private one")


def _equal_tables(a, b) -> bool:
    """Whether two in-memory tables of one kind (pandas, pyarrow, polars) are equal; False if they cannot say."""
    equals = getattr(a, "equals", None)
    try:
        return callable(equals) and bool(equals(b))
    except Exception:  # noqa: BLE001 - tables that cannot be compared are not refused
        return False
