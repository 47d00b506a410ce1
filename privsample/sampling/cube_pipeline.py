"""From a table file to a private-sampling release on the Boolean cube (``privsample cube sample``).

Reading: with a schema, the table is encoded through it (binary columns one bit, the others
one-hot; :mod:`privsample.data.cube`); without one, every column must already be binary (0/1), as
in NLTCS and ACS, and anything else is refused (a cube encoding of other values needs a public domain).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from privsample.data.cube import CubeEncoding
from privsample.data.schema import Categorical, Schema
from privsample.errors import InputError


def binary_schema(df: pd.DataFrame, source: str = "table") -> Schema:
    """The schema of an all-binary table (every value 0 or 1, no missing values); otherwise an error.

    Checking that values lie in {0, 1} is a check against a *public* domain (it reveals nothing when it
    passes, and refuses the whole job when it fails)."""
    if df.shape[1] == 0:
        raise InputError(f"{source} has no columns")
    for c in df.columns:
        v = df[c]
        if v.isna().any():
            raise InputError(f"column '{c}' has missing values: the cube needs a schema (--schema) to encode them")
        s = set(pd.unique(v.astype(str).str.strip()))
        if not s <= {"0", "1", "0.0", "1.0"}:
            raise InputError(f"column '{c}' is not binary (values other than 0/1): give a schema (--schema) "
                             "to encode it on the cube")
    return Schema([Categorical(str(c), ("0", "1")) for c in df.columns], provenance="user",
                  notes=["binary columns (0/1), checked against the public domain {0, 1}"])


def load_for_cube(source: str | Path, schema: Schema | str | Path | None = None):
    """(engine, encoding, schema) for a CSV/Parquet table."""
    from privsample.data.encoding import encode
    from privsample.data.table import empty_table_error, read_table
    from privsample.marginals import NumpyEngine

    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    df = read_table(source, **({"na_values": schema.na_values} if schema is not None else {}))
    if len(df) == 0:
        raise empty_table_error(source)
    if schema is None:
        schema = binary_schema(df, str(source))
        df = df.astype(str).apply(lambda s: s.str.strip().str.replace(".0", "", regex=False))
    codes = encode(df, schema)
    return NumpyEngine(codes, schema.domain()), CubeEncoding.from_schema(schema), schema


def decode_table(codes: dict[str, np.ndarray], schema: Schema, rng: np.random.Generator) -> pd.DataFrame:
    from privsample.data.encoding import decode

    return decode(codes, schema, rng)


__all__ = ["binary_schema", "load_for_cube", "decode_table"]
