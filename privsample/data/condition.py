"""Conditions on column values (``where``): parsed, checked against a public schema, applied to tables.

A condition is a conjunction of clauses, one per column; a clause allows any of its items. In text:
clauses separated by ``;``, ``col=value``, ``col=v1,v2`` (any of), ``col=lo..hi`` for a numeric column (a
closed range; either end may be empty), ``col=<null>`` for the missing value of a nullable column. As a
mapping: column -> a value, a list of items, a ``(lo, hi)`` tuple (a range; ``None`` for an open end), or
``None`` (the missing value). Categorical values compare as the schema's labels (strings, the ``other``
label included); numbers in a numeric column compare as numbers.

``Where.resolve(schema)`` gives, per column, the weight of every code: the probability that a record of
that code, decoded by :func:`privsample.data.decoding.decode` (a value drawn uniformly in its bin, or among
the integers of an integer column's bin), satisfies the clause; and, for numeric columns, the allowed
intervals, so that decoding can draw within bin ∩ range. Conditioning a model on these weights and
decoding within the intervals gives exactly the model's conditional distribution of decoded records.
``Where.mask(df)`` selects the records of a table that satisfy the condition (for evaluation).

Everything here reads the public schema and the condition, never the private data: messages may name
values of the condition and of the schema.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from privsample.data.encoding import parse_number, value_text
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError

NULL = "<null>"  # the item that selects a nullable column's missing value
SYNTAX = "expected 'col=value; col=v1,v2; col=lo..hi'"


@dataclass(frozen=True)
class Range:
    """A closed range of numbers; ``None`` for an open end."""

    lo: float | None
    hi: float | None

    def __str__(self) -> str:
        return f"{'' if self.lo is None else _num(self.lo)}..{'' if self.hi is None else _num(self.hi)}"


@dataclass(frozen=True)
class Clause:
    """One column's clause: any of ``items`` (text, numbers, ``Range``, ``None`` for missing). ``raw``: the
    text after ``=`` in the text form (a category holding a comma matches it whole)."""

    column: str
    items: tuple
    raw: str | None = None

    def __str__(self) -> str:
        if self.raw is not None:
            return f"{self.column}={self.raw}"
        return f"{self.column}=" + ",".join(NULL if i is None else str(i) for i in self.items)


@dataclass(frozen=True)
class ColumnCondition:
    """A clause resolved on a schema column: ``weights[code]`` in [0, 1] (the share of the code's decoded
    values that satisfy it) and, for a numeric column, the allowed closed ``intervals`` (merged, sorted;
    integer columns: whole-number ends) or None for a categorical one."""

    column: str
    weights: np.ndarray
    intervals: tuple[tuple[float, float], ...] | None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def _number(item: Any, clause: str) -> float:
    """A finite number from text or a number, else ``InputError``."""
    ok = not isinstance(item, (bool, np.bool_)) and isinstance(item, (str, numbers.Real))
    x = (parse_number(item.strip()) if isinstance(item, str) else float(item)) if ok else None
    if x is None or not math.isfinite(x):
        raise InputError(f"condition '{clause}': {item!r} is not a finite number")
    return x


class Where:
    """A parsed condition (see the module docstring): ``Where.parse(text_or_mapping)``."""

    def __init__(self, clauses: tuple[Clause, ...]):
        self.clauses = clauses

    def __str__(self) -> str:
        return "; ".join(str(c) for c in self.clauses)

    def __repr__(self) -> str:
        return f"Where({str(self)!r})"

    @property
    def columns(self) -> list[str]:
        return [c.column for c in self.clauses]

    @classmethod
    def parse(cls, where: Any) -> "Where":
        """A ``Where`` from its text form or a mapping (or a ``Where``); ``InputError`` on bad syntax."""
        if isinstance(where, Where):
            return where
        if isinstance(where, str):
            clauses = _text_clauses(where)
        elif isinstance(where, Mapping):
            clauses = _mapping_clauses(where)
        else:
            raise InputError(f"a condition is a text or a mapping of column -> values, not {type(where).__name__}")
        if not clauses:
            raise InputError(f"the condition is empty: {SYNTAX}")
        seen: set[str] = set()
        for c in clauses:
            if c.column in seen:
                raise InputError(f"the condition names column '{c.column}' twice (give its values in one clause)")
            seen.add(c.column)
        return cls(tuple(clauses))

    # -- on a schema (sampling) ---------------------------------------------------------------------
    def resolve(self, schema: Schema) -> dict[str, ColumnCondition]:
        """Per column of the condition, its weights over the schema's codes (module docstring); ``InputError``
        for an unknown column, a value the schema does not hold, an empty range or a range on a categorical
        column."""
        out = {}
        for clause in self.clauses:
            if clause.column not in schema:
                close = difflib.get_close_matches(clause.column, schema.names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise InputError(f"condition '{clause}': no column '{clause.column}' in the model's schema{hint}")
            col = schema[clause.column]
            if isinstance(col, Categorical):
                out[col.name] = _categorical(col, clause)
            else:
                out[col.name] = _numeric(col, clause)
        return out

    # -- on a table (evaluation) --------------------------------------------------------------------
    def mask(self, df) -> np.ndarray:
        """True for the records of ``df`` (a pandas DataFrame of values, as read from a file) that satisfy the
        condition: a value matches an item when its text (integral numbers without '.0') is the item's, or
        both are the same number; a range holds the numbers in it; ``<null>``/``None`` holds missing values."""
        import pandas as pd

        keep = np.ones(len(df), dtype=bool)
        for clause in self.clauses:
            if clause.column not in df.columns:
                raise InputError(f"condition '{clause}': the table has no column '{clause.column}'")
            s = df[clause.column]
            codes, uniques = pd.factorize(s, use_na_sentinel=True)
            items = _table_items(clause)
            ok = np.zeros(len(uniques) + 1, dtype=bool)  # the last: missing values
            ok[-1] = any(i is None for i in items)
            for j, u in enumerate(uniques):
                text, x = value_text(u), parse_number(u)
                for i in items:
                    if isinstance(i, Range):
                        ok[j] = x is not None and (i.lo is None or x >= i.lo) and (i.hi is None or x <= i.hi)
                    elif i is not None:
                        ok[j] = text == value_text(i) or (x is not None and x == parse_number(i))
                    if ok[j]:
                        break
            keep &= ok[codes]
        return keep


def _text_clauses(where: str) -> list[Clause]:
    """The clauses of a condition's text form ``col=v1,v2; col2=lo..hi`` (empty parts skipped)."""
    clauses = []
    for part in where.split(";"):
        text = part.strip()
        if not text:
            continue
        col, eq, raw = text.partition("=")
        col, raw = col.strip(), raw.strip()
        if not eq or not col or not raw:
            raise InputError(f"bad condition clause {text!r}: {SYNTAX}")
        items = tuple(s.strip() for s in raw.split(","))
        if any(not s for s in items):
            raise InputError(f"bad condition clause {text!r}: an empty value between commas")
        clauses.append(Clause(col, items, raw))
    return clauses


def _mapping_clauses(where: Mapping) -> list[Clause]:
    """The clauses of a condition given as a mapping column -> value, list or set of values, or (lo, hi)."""
    clauses = []
    for col, v in where.items():
        if not isinstance(col, str) or not col:
            raise InputError(f"condition: column names must be non-empty strings (got {col!r})")
        items = tuple(v) if isinstance(v, (list, set, frozenset)) else (v,)
        if not items:
            raise InputError(f"condition on '{col}': an empty list of values")
        for item in items:
            if isinstance(item, tuple) and len(item) != 2:
                raise InputError(f"condition on '{col}': a range is a (lo, hi) tuple (got {item!r})")
        clauses.append(Clause(col, tuple(sorted(items, key=str)) if isinstance(v, set) else items))
    return clauses


def _table_items(clause: Clause) -> list:
    """A clause's items for matching table values: text ranges become ``Range``, ``<null>`` becomes None."""
    out = []
    for i in clause.items:
        if isinstance(i, str) and i == NULL:
            out.append(None)
        elif isinstance(i, tuple) or (isinstance(i, str) and ".." in i):
            out.append(_range(i, str(clause)))
        else:
            out.append(i)
    return out


def _range(item: Any, clause: str) -> Range:
    if isinstance(item, tuple):
        lo, hi = item
        lo = None if lo is None else _number(lo, clause)
        hi = None if hi is None else _number(hi, clause)
    else:
        a, _, b = item.partition("..")
        lo = _number(a.strip(), clause) if a.strip() else None
        hi = _number(b.strip(), clause) if b.strip() else None
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"condition '{clause}': the range {Range(lo, hi)} is empty (its start is above its end)")
    return Range(lo, hi)


def _categorical(col: Categorical, clause: Clause) -> ColumnCondition:
    labels = {c: i for i, c in enumerate(col.categories)}
    if col.other is not None:
        labels[col.other] = col.other_code
    items = clause.items
    if clause.raw is not None and clause.raw in labels:  # a label holding a comma, whole
        items = (clause.raw,)
    w = np.zeros(col.size)
    for item in items:
        if isinstance(item, tuple) or isinstance(item, Range):
            raise InputError(f"condition '{clause}': '{col.name}' is categorical: a range applies to numeric columns")
        text = None if item is None else value_text(item)
        if text in labels:
            w[labels[text]] = 1.0
        elif (text is None or text == NULL) and col.nullable:
            w[col.null_code] = 1.0
        else:
            shown = list(labels)
            close = difflib.get_close_matches(str(text), shown, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            listed = ", ".join(shown[:12]) + (", ..." if len(shown) > 12 else "")
            what = "missing value (not nullable)" if text in (None, NULL) else f"value {text!r}"
            raise InputError(f"condition '{clause}': column '{col.name}' has no {what} ({hint}values: {listed})")
    return ColumnCondition(col.name, w, None)


def _numeric(col: Numeric, clause: Clause) -> ColumnCondition:
    w = np.zeros(col.size)
    spans: list[tuple[float, float]] = []
    bounds = f"[{_num(col.lower)}, {_num(col.upper)}]"
    for item in clause.items:
        if item is None or (isinstance(item, str) and item == NULL):
            if not col.nullable:
                raise InputError(f"condition '{clause}': column '{col.name}' has no missing value (not nullable)")
            w[col.null_code] = 1.0
            continue
        if isinstance(item, tuple) or (isinstance(item, str) and ".." in item):
            r = _range(item, str(clause))
            lo = col.lower if r.lo is None else max(r.lo, col.lower)
            hi = col.upper if r.hi is None else min(r.hi, col.upper)
            if col.integer:
                lo, hi = float(math.ceil(lo)), float(math.floor(hi))
            if lo > hi or (lo == hi and not col.integer and col.lower < col.upper):
                raise InputError(
                    f"condition '{clause}': the range {r} holds no value of column '{col.name}' "
                    f"({'whole numbers in ' if col.integer else ''}{bounds})"
                )
            spans.append((lo, hi))
            continue
        x = _number(item, str(clause))
        if not col.lower <= x <= col.upper:
            raise InputError(f"condition '{clause}': {_num(x)} is outside the bounds {bounds} of column '{col.name}'")
        if col.integer and not x.is_integer():
            raise InputError(f"condition '{clause}': column '{col.name}' holds whole numbers, not {_num(x)}")
        if not col.integer and col.lower < col.upper:
            raise InputError(
                f"condition '{clause}': column '{col.name}' is continuous, so one value has probability zero: "
                "give a range lo..hi"
            )
        spans.append((x, x))
    merged: list[list[float]] = []
    for lo, hi in sorted(spans):  # merge overlapping (integer columns: also adjacent) spans
        if merged and lo <= merged[-1][1] + (1 if col.integer else 0):
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    intervals = tuple((a, b) for a, b in merged)
    edges = col.bin_edges
    for b in range(int(col.bins)):
        w[b] = bin_share(col, edges[b], edges[b + 1], b == int(col.bins) - 1, intervals)
    return ColumnCondition(col.name, w, intervals)


def bin_share(col: Numeric, lo: float, hi: float, last: bool, intervals) -> float:
    """The share of the values decoded from the bin [lo, hi) ([lo, hi] if ``last``) that fall in ``intervals``
    (uniform on the bin; integer columns: uniform on its integers, or its rounded midpoint if it has none)."""
    if col.integer:
        ilo, ihi = math.ceil(lo), (math.floor(hi) if last else math.ceil(hi) - 1)
        if ihi < ilo:
            v = round((lo + hi) / 2)
            return float(any(a <= v <= b for a, b in intervals))
        n = sum(max(0, min(ihi, b) - max(ilo, a) + 1) for a, b in intervals)
        return n / (ihi - ilo + 1)
    if hi <= lo:
        return float(any(a <= lo <= b for a, b in intervals))
    return min(1.0, sum(max(0.0, min(hi, b) - max(lo, a)) for a, b in intervals) / (hi - lo))


__all__ = ["Where", "Clause", "Range", "ColumnCondition", "NULL", "bin_share"]
