"""The one-line refusals of table reading: DuckDB reader errors mapped to ``InputError`` / ``DataError``.

A malformed record is refused by ``malformed_error``, whose message names no line, field count or value (the
records are private); the reader's own description, naming them, is kept in its ``detail`` for
``privsample check`` (NOT private). ``privsample.data.table`` imports these and re-exports them.
"""

from __future__ import annotations

import re
from pathlib import Path

from privsample.errors import DataError, InputError

__all__ = ["ENCODING_HINT", "error_reason", "malformed_error", "duckdb_input_error", "empty_table_error"]

ENCODING_HINT = "pass --encoding with the file's encoding (e.g. --encoding latin-1, cp1252 or utf-16)"


def error_reason(exc: BaseException) -> str:
    """The first line of an exception's message, without its type prefix, at most 200 characters."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else type(exc).__name__
    text = re.sub(r"^[A-Za-z ]*(Error|Exception): ", "", text)
    return text[:200]


def malformed_error(source: str | Path, detail: str = "") -> DataError:
    """The one refusal for records that are not well-formed CSV: it names no line, field count or value (the
    reader's description, with those, is kept in ``detail`` for ``privsample check``)."""
    return DataError(
        f"{source}: not a well-formed CSV table (a line with a wrong number of fields, a quote left open, or text "
        f"not valid in its encoding: see --encoding); the records are private, so no line is named: "
        f"'privsample check {source}' lists them (NOT private)",
        detail,
    )


def duckdb_input_error(exc: BaseException, source: str | Path) -> InputError:
    """Turn a DuckDB reader error while reading records into ``malformed_error`` (a ``DataError``: a release path
    shows no line, field count or value); its ``detail`` is one line naming the file and line, for ``check``.

    A query stopped by Ctrl-C is not bad input: DuckDB's InterruptException (or, from a batch reader, the
    RuntimeError "Query interrupted") is raised again as the KeyboardInterrupt it was (the CLI exits 130)."""
    import duckdb

    text = str(exc)
    if isinstance(exc, duckdb.InterruptException) or (isinstance(exc, RuntimeError) and "Query interrupted" in text):
        raise KeyboardInterrupt from None
    m = re.search(r"CSV Error on Line: (\d+)", text)
    where = f"line {m.group(1)}: " if m else ""
    if mm := re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text):
        reason = f"expected {mm.group(1)} fields (as in the header), found {mm.group(2)}"
    elif "unterminated quote" in text:
        reason = "a quoted value is not terminated"
    elif "Invalid unicode" in text or "not utf-8" in text:
        reason = f"not valid UTF-8 text; {ENCODING_HINT}"
    elif "Maximum line size" in text:
        reason = "a line exceeds the CSV reader's maximum line size"
    elif "Parquet" in text or "magic bytes" in text:
        reason = f"not a readable Parquet file ({error_reason(exc)})"
    elif m:
        after = text.split("Original Line:", 1)[-1].splitlines()[1:]
        cand = [ln.strip() for ln in after if ln.strip() and not ln.strip().startswith("Possible")]
        reason = cand[0][:200] if cand else "cannot parse the CSV"
    else:
        reason = error_reason(exc)
    return malformed_error(source, f"{source}: {where}{reason}")


def empty_table_error(source: str | Path) -> InputError:
    return InputError(f"{source}: the table has no data rows")
