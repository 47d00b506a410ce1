"""Command-line options shared by every command that reads a table: the CSV delimiter and encoding, and the
warning that names the table's columns a schema leaves out (column names are public)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import typer

DELIMITER_HELP = ("CSV delimiter: ',', ';', tab or '|' (or any one character). Default: read off the header line; "
                  "a header that splits on several is refused.")
ENCODING_HELP = ("CSV encoding when the file has no byte-order mark (which decides: UTF-8, UTF-16), e.g. latin-1, "
                 "cp1252. Default: UTF-8.")


def delimiter_option(help: str = DELIMITER_HELP):
    return typer.Option(None, "--delimiter", help=help)


def encoding_option(help: str = ENCODING_HELP):
    return typer.Option(None, "--encoding", help=help)


def unused_columns(columns: Iterable, schema) -> list[str]:
    """The table's column names that ``schema`` does not list, in table order."""
    return [str(c) for c in columns if str(c) not in schema]


def warn_unused_columns(console, columns: Iterable, schema, table, schema_path) -> list[str]:
    """Print one warning naming the columns of ``table`` that ``schema`` leaves out; returns them."""
    left = unused_columns(columns, schema)
    if left:
        many = len(left) > 1
        console.print(f"[bold yellow]warning: column{'s' if many else ''} {', '.join(repr(c) for c in left)} of "
                      f"{Path(table).name} {'are' if many else 'is'} not in {Path(schema_path).name} and "
                      f"{'are' if many else 'is'} left out[/bold yellow]", highlight=False, soft_wrap=True)
    return left


def warn_unused_file_columns(console, table, schema, schema_path, *, delimiter=None, encoding=None) -> list[str]:
    """``warn_unused_columns`` for a local table file, from its header alone (nothing when ``table`` is not a
    local file, e.g. a Spark URI: the engine reports its own problems)."""
    from privsample.data.table import DELIMITERS, table_columns
    from privsample.errors import InputError

    if not Path(table).is_file():
        return []
    names = table_columns(table, delimiter=delimiter, encoding=encoding)
    missing = [c for c in schema.names if c not in names]
    if missing:  # refused later anyway: say it now, with the likely cause
        held = [d for d in DELIMITERS if any(d in n for n in names)]
        hint = ""
        if held:
            hint = (f" (a column name of the header holds {'tab' if held[0] == chr(9) else repr(held[0])}: "
                    "is --delimiter right?)")
        raise InputError(f"{table}: column{'s' if len(missing) > 1 else ''} {', '.join(repr(c) for c in missing)} "
                         f"of {Path(schema_path).name} {'are' if len(missing) > 1 else 'is'} not in the data{hint}")
    return warn_unused_columns(console, names, schema, table, schema_path)
