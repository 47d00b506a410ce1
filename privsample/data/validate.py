"""NON-PRIVATE validation of a table against a schema, for the data owner (``privsample check``).

The release path never stops on a value: ``encode(..., release=True)`` clips, maps to catch-all or
null codes, or leaves a record out, and says nothing about which records it touched, because a
message or an exit code that depends on one record is a disclosure. A data owner still needs to
know whether the schema fits the data before a release. ``validate`` tells them exactly: for every
column, how many values fall outside the schema, of which kind, in which rows, with examples, and
what the release path will do with them.

There is NO privacy guarantee here: the report names values, rows and exact counts of the sensitive
table. It is for the person who already holds the data, never for publication.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from privsample.data.encoding import MISSING, NOT_A_NUMBER, OUT_OF_RANGE, UNKNOWN, as_float, value_text
from privsample.data.schema import Categorical, Column, Numeric, Schema

KIND_TEXT = {
    MISSING: "missing value",
    NOT_A_NUMBER: "not a number",
    OUT_OF_RANGE: "outside the bounds",
    UNKNOWN: "not a category",
}
NOT_BINARY = 100  # a number that is neither 0 nor 1 (the binary reading of the cube sampler)
KIND_TEXT[NOT_BINARY] = "not 0 or 1"
EXAMPLES = 5


@dataclass
class ColumnProblems:
    """Values of one column that the schema does not hold, by kind (exact: NOT private)."""

    column: str
    counts: dict[int, int] = field(default_factory=dict)  # kind -> number of values
    examples: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # kind -> [(1-based row, value)]
    actions: dict[int, str] = field(default_factory=dict)  # kind -> what the release path does

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _release_action(col: Column, kind: int) -> str:
    """What ``encode(..., release=True)`` does with a value of this kind in this column."""
    if kind == OUT_OF_RANGE:
        return "clipped to the bounds"
    if isinstance(col, Numeric):
        return "null code" if col.nullable else "record left out"
    if kind == UNKNOWN:
        return "catch-all" if col.other is not None else "null code" if col.nullable else "record left out"
    return "null code" if col.nullable else ("catch-all" if col.other is not None else "record left out")


def _show(value) -> str:
    text = value_text(value) if value is not None else "<missing>"
    return text if len(text) <= 40 else text[:37] + "..."


def _column_kinds(col: Column, s: pd.Series) -> np.ndarray:
    kind = np.zeros(len(s), dtype=np.int8)
    if isinstance(col, Numeric):
        x, bad = as_float(s, col.value_format)
        missing = np.isnan(x) & ~bad
        out = ~missing & ~bad & ((x < col.lower) | (x > col.upper))
        if not col.nullable:
            kind[missing] = MISSING
        kind[bad] = NOT_A_NUMBER
        kind[out] = OUT_OF_RANGE
        return kind
    idx, uniques = pd.factorize(s, use_na_sentinel=True)
    known = set(col.categories) | ({col.other} if col.other is not None else set())
    uok = np.array([value_text(u) in known for u in uniques] + [True], dtype=bool)
    missing = idx < 0
    kind[~uok[idx] & ~missing] = UNKNOWN
    if not col.nullable:
        kind[missing] = MISSING
    return kind


def validate(
    df: pd.DataFrame, schema: Schema, examples: int = EXAMPLES, release: Schema | None = None
) -> list[ColumnProblems]:
    """The problems of every schema column of ``df`` (only columns with problems are listed).

    ``release``: the schema the release path encodes with (``privsample.data.encoding.release_domain``; default
    ``schema``), which decides the action reported for each problem. Columns of the schema missing
    from ``df`` raise ``InputError`` (that is about the header, which is public)."""
    from privsample.errors import InputError

    release = release if release is not None else schema
    out = []
    for col in schema.columns:
        if col.name not in df.columns:
            raise InputError(f"column '{col.name}' is in the schema but not in the data")
        s = df[col.name].reset_index(drop=True)
        kind = _column_kinds(col, s)
        if not kind.any():
            continue
        cp = ColumnProblems(col.name)
        for k in sorted(set(kind[kind > 0].tolist())):
            rows = np.flatnonzero(kind == k)
            cp.counts[k] = int(len(rows))
            vals = [s.iloc[i] for i in rows[:examples]]
            cp.examples[k] = [
                (int(i) + 1, _show(None if pd.api.types.is_scalar(v) and pd.isna(v) else v))
                for i, v in zip(rows[:examples], vals)
            ]
            cp.actions[k] = _release_action(release[col.name], k)
        out.append(cp)
    return out


def validate_binary(df: pd.DataFrame, examples: int = EXAMPLES) -> list[ColumnProblems]:
    """The values of every column of ``df`` that are not the number 0 or 1 (missing ones included), which the
    binary reading of ``privsample cube sample`` without a schema reads as 0 (only columns with such values)."""
    out = []
    for c in df.columns:
        s = df[c].reset_index(drop=True)
        x, bad = as_float(s)
        kind = np.zeros(len(s), dtype=np.int8)
        kind[np.isnan(x) & ~bad] = MISSING
        kind[bad] = NOT_A_NUMBER
        kind[~np.isnan(x) & (x != 0.0) & (x != 1.0)] = NOT_BINARY
        if not kind.any():
            continue
        cp = ColumnProblems(str(c))
        for k in sorted(set(kind[kind > 0].tolist())):
            rows = np.flatnonzero(kind == k)
            cp.counts[k] = int(len(rows))
            cp.examples[k] = [(int(i) + 1, _show(None if k == MISSING else s.iloc[i])) for i in rows[:examples]]
            cp.actions[k] = "read as 0"
        out.append(cp)
    return out


def left_out(df: pd.DataFrame, schema: Schema) -> int:
    """How many records the release path leaves out (exact: NOT private)."""
    from privsample.data.encoding import encode

    codes = encode(df, schema, release=True)
    return len(df) - (len(next(iter(codes.values()))) if codes else len(df))


__all__ = ["validate", "validate_binary", "left_out", "NOT_BINARY", "ColumnProblems", "KIND_TEXT", "Categorical"]
