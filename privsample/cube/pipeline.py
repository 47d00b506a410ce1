"""From a table file to a private-sampling release on the Boolean cube (``privsample cube sample``).

Privacy: the release (:class:`privsample.cube.sampler.BooleanCubeSampler`) is pure epsilon-DP for
**replace-one** neighbours with n public. Reading must therefore be a fixed, data-independent map from
each record to a point of the public domain, applied record by record: a record is never refused and
never dropped (dropping would change n), so neighbouring tables stay neighbouring tables of the same
size after the map, and nothing here decides, prints or raises anything from a value.

* Without a schema every column is binary with the public domain {0, 1}: a value that is the number 1
  (``1``, ``1.0``, `` 1 ``, a boolean true) is 1, and **every other value, missing ones included, is read as 0**.
  Whether a column "is binary" is never looked up in the data.
* With a schema, the schema is made total before encoding, a change of the public domain that does not
  look at the data: categorical columns get an ``(other)`` catch-all
  (:func:`privsample.data.encoding.schema_with_other`), numeric columns become nullable; then values
  that are not numbers in a numeric column are read as missing, numbers are clipped to the bounds,
  unknown categories (and missing values of a non-nullable categorical column) map to ``(other)``.

:func:`reading_rule` is the sentence the command prints, unconditionally. A table with no data rows is
refused: n is public in the replace-one model, so this reveals nothing. A draft schema read off the
data without review, and a privately discovered schema (its zCDP cost for add/remove neighbours cannot
be composed into the pure epsilon replace-one guarantee), are refused before the data is read. To list
the values the rule rewrites, use ``privsample check`` (not private).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privsample.cube.encoding import CubeEncoding
from privsample.data.schema import Categorical, Schema
from privsample.errors import InputError

BINARY_RULE = (
    "reading every column as binary: the value 1 is 1, any other value (missing included) is read as 0; "
    "run 'privsample check INPUT --binary' (not private) to list such values"
)
SCHEMA_RULE = (
    "reading through the schema, per record: numbers are clipped to the bounds, non-numbers and missing "
    "numbers are missing, unknown or missing categories are '(other)'; run 'privsample check INPUT "
    "--schema SCHEMA' (not private) to list such values"
)


def reading_rule(schema_given: bool) -> str:
    """The per-record reading rule, printed whatever the data (it never says whether the rule fired)."""
    return SCHEMA_RULE if schema_given else BINARY_RULE


def check_schema_for_cube(schema: Schema, source: str = "schema") -> None:
    """Refuse a draft schema read off the data, and a privately discovered one (public files: exit 2)."""
    from privsample.data.schema import check_schema_usable

    if schema.provenance == "private":
        raise InputError(
            f"{source} was discovered privately (zCDP, add/remove neighbours), which cannot be "
            "composed into the cube sampler's pure epsilon (replace-one): use a reviewed public schema"
        )
    check_schema_usable(schema, source)


def binary_schema(columns) -> Schema:
    """The public schema of the no-schema reading: every column binary with codes 0, 1 (from the header only)."""
    cols = [str(c) for c in columns]
    if not cols:
        raise InputError("the table has no columns")
    return Schema(
        [Categorical(c, ("0", "1")) for c in cols],
        provenance="user",
        notes=["binary columns: the value 1 is 1, any other value (missing included) is read as 0"],
    )


def binary_codes(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """{column: 0/1 codes}: 1 exactly where the value is the number 1, else 0 (per record, never raises)."""
    from privsample.data.encoding import as_float

    out = {}
    for c in df.columns:
        x, _ = as_float(df[c].reset_index(drop=True))  # NaN for missing and for non-numbers
        out[str(c)] = (x == 1.0).astype(np.int64)
    return out


def total_schema(schema: Schema) -> Schema:
    """``schema`` with an ``(other)`` code in every categorical column and every numeric column nullable:
    a data-independent widening of the public domain on which every value has a code."""
    from privsample.data.encoding import release_schema

    return release_schema(schema)


def schema_codes(df: pd.DataFrame, schema: Schema) -> dict[str, np.ndarray]:
    """Codes of ``df`` on the total ``schema`` (:func:`total_schema`) by the release path's per-record rule
    (``encode(..., release=True)``), which on a total schema has a code for every value: no record is left out."""
    from privsample.data.encoding import encode

    return encode(df, schema, release=True)


def cube_schema(schema: Schema | str | Path | None) -> Schema | None:
    """The public schema of a cube release, loaded from its file if need be, refused if it is a draft or was
    discovered privately (:func:`check_schema_for_cube`); None stays None (the binary reading). No data is read."""
    if isinstance(schema, (str, Path)):
        path = schema
        schema = Schema.load(schema)
        check_schema_for_cube(schema, str(path))
    elif schema is not None:
        check_schema_for_cube(schema)
    return schema


def cube_codes(df: pd.DataFrame, schema: Schema | None, source: str | Path = "the table"):
    """(engine, encoding, schema) for a table read as ``read_table`` reads a file (all text), by the per-record
    rule of the module docstring; ``schema`` already checked (:func:`cube_schema`). A table with no data rows
    is refused (n is public under replace-one). The returned schema is the one the codes are in."""
    from privsample.data.table import empty_table_error
    from privsample.marginals import NumpyEngine

    if len(df) == 0:
        raise empty_table_error(source)  # n is public (replace-one)
    if schema is None:
        schema = binary_schema(df.columns)
        codes = binary_codes(df)
    else:
        schema = total_schema(schema)
        codes = schema_codes(df, schema)
    return NumpyEngine(codes, schema.domain()), CubeEncoding.from_schema(schema), schema


def load_for_cube(
    source: str | Path,
    schema: Schema | str | Path | None = None,
    *,
    delimiter: str | None = None,
    encoding: str | None = None,
):
    """(engine, encoding, schema) for a CSV/Parquet table, read by the per-record rule of the module docstring.

    ``delimiter`` / ``encoding``: a CSV file's, as for ``read_table`` (default: detected).

    The returned schema is the one the codes are in (the total schema when one was given)."""
    from privsample.data.table import read_table

    schema = cube_schema(schema)  # before the data is read
    df = read_table(
        source,
        delimiter=delimiter,
        encoding=encoding,
        **({"na_values": schema.na_values} if schema is not None else {}),
    )
    return cube_codes(df, schema, source)


def decode_table(codes: dict[str, np.ndarray], schema: Schema, rng: np.random.Generator) -> pd.DataFrame:
    from privsample.data.decoding import decode

    return decode(codes, schema, rng)


__all__ = [
    "binary_schema",
    "binary_codes",
    "total_schema",
    "schema_codes",
    "check_schema_for_cube",
    "reading_rule",
    "cube_schema",
    "cube_codes",
    "load_for_cube",
    "decode_table",
]
