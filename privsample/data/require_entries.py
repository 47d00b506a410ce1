"""A schema's ``require`` entries: comparisons between its numeric columns, or a column and a constant, checked
against the columns, turned into structural zeros, and added to a schema (``--require``; public: a person wrote
them). The comparisons themselves, their zeros and the repair at decoding: ``privsample.data.require``.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
from typing import Any

import numpy as np

from privsample.checks import parse_comparison
from privsample.data.format_classes import coarse_classes
from privsample.data.require import Comparison, infeasible_column, zero_codes
from privsample.errors import InputError

__all__ = ["comparison", "parse_require", "require_comparisons", "require_codes", "add_require", "check_require_names"]


def comparison(text: Any, columns: list, where: str) -> Comparison:
    """The comparison ``text`` (``A OP B``) between columns of ``columns`` or a column and a constant (read by the
    column's ``parse_constant``), as ``low <= high`` / ``low < high``; ``InputError`` starting with ``where``."""
    left, op, right = parse_comparison(text, where)
    by_name = {c.name: c for c in columns}
    lcol, rcol = by_name.get(left), by_name.get(right)
    if lcol is None and rcol is None:
        close = [m for side in (left, right) for m in difflib.get_close_matches(side, list(by_name), n=1)]
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InputError(f"{where}: names no column ({left!r} and {right!r} are not columns of the schema){hint}")
    for col in (lcol, rcol):
        if col is not None and not col.kind == "numeric":
            raise InputError(f"{where}: column '{col.name}' is categorical; comparisons need numeric columns")
    if lcol is not None and rcol is not None:
        if left == right:
            raise InputError(f"{where}: compares column '{left}' with itself")
        lside: str | float = left
        rside: str | float = right
    else:
        col, other = (lcol, right) if lcol is not None else (rcol, left)
        try:
            value = col.parse_constant(other)
        except (ValueError, InputError):
            close = difflib.get_close_matches(other, list(by_name), n=1)
            hint = f" (did you mean column '{close[0]}'?)" if close else ""
            raise InputError(
                f"{where}: {other!r} is neither a column of the schema nor a constant of column '{col.name}'{hint}"
            ) from None
        lside, rside = (left, value) if lcol is not None else (value, right)
    text = str(text).strip()
    if op in ("<=", "<"):
        return Comparison(text, lside, rside, op == "<")
    return Comparison(text, rside, lside, op == ">")


def parse_require(entries: Any, columns: list, source: str = "schema", label: str | None = None) -> list[str]:
    """Check ``require`` entries (comparisons ``A OP B``, ``comparison``) against the columns, each and jointly;
    return them as stripped texts, each once. Jointly: some values within the columns' bounds (every column
    present) satisfy them all, and no cycle of comparisons holds a strict one. Messages name an entry as
    ``label 'text'`` when ``label`` is given (an option of a run), else as ``source: require entry #i 'text'``."""
    if entries is None:
        return []
    if isinstance(entries, str) or not isinstance(entries, (list, tuple)):
        where = label or f"{source}: 'require'"
        raise InputError(f"{where} must be a list of comparisons such as 'discharged >= admitted'")
    out: list[str] = []
    parsed = []
    for i, text in enumerate(entries):
        where = f"{label} {text!r}" if label else f"{source}: require entry #{i + 1} {text!r}"
        parsed.append(comparison(text, columns, where))
        if parsed[-1].text not in out:
            out.append(parsed[-1].text)
    if parsed:
        bad, settled = infeasible_column(parsed, {c.name: c for c in columns})
        where = label or f"{source}: 'require'"
        if not settled:
            raise InputError(
                f"{where}: the comparisons contradict each other (a cycle holding a strict comparison: "
                f"{'; '.join(out)})"
            )
        if bad is not None:
            raise InputError(
                f"{where}: no value of column '{bad}' within its bounds satisfies the comparisons ({'; '.join(out)})"
            )
    return out


def require_comparisons(schema: Any) -> list[Comparison]:
    """The schema's ``require`` entries as comparisons ``low <= high`` / ``low < high``."""
    return [comparison(text, schema.columns, f"schema: require entry {text!r}") for text in schema.require]


def require_codes(schema: Any) -> list[dict[str, tuple[int, ...]]]:
    """The structural zeros of the schema's ``require`` entries, as ``forbid_codes`` gives them
    (``privsample.data.require.zero_codes``): public, a function of the schema only."""
    if not schema.require:
        return []
    return zero_codes(require_comparisons(schema), {c.name: c for c in schema.columns})


def add_require(schema: Any, entries: list[str], label: str) -> Any:
    """A copy of ``schema`` with the comparisons ``entries`` added to its ``require`` list (public: a person
    wrote them), checked against its columns (``InputError`` naming an entry as ``label 'text'``)."""
    if not entries:
        return schema
    merged = parse_require(list(schema.require) + list(entries), schema.columns, label=label)
    return dataclasses.replace(schema, require=merged, ledger=copy.deepcopy(schema.ledger))


def check_require_names(entries: list[str], names: list[str], label: str, source: Any) -> None:
    """Before any spend, without a schema: every comparison of ``entries`` names a column of ``names`` (the
    table's header, public), and its other side is a column too, or a number, a date or time, or a formatted number
    (what a discovered numeric column may read). Whether the columns are numeric is known only once the schema is
    discovered."""

    def number(text: str) -> bool:  # a number, a date or time, or a formatted number
        return int(coarse_classes(np.array([text.strip()], dtype=object))[0]) in (1, 2, 5, 6)

    def hint(text: str) -> str:
        close = difflib.get_close_matches(text, list(names), n=1)
        return f" (did you mean '{close[0]}'?)" if close else ""

    for text in entries:
        where = f"{label} {text!r}"
        left, _, right = parse_comparison(text, where)
        others = [s for s in (left, right) if s not in names]
        if len(others) == 2:
            words = [s for s in others if not number(s)]
            if len(words) == 1:
                raise InputError(f"{where}: {words[0]!r} is not a column of {source}{hint(words[0])}")
            raise InputError(
                f"{where}: names no column of {source} ({left!r} and {right!r}){hint(left) or hint(right)}"
            )
        for side in others:
            if not number(side):
                raise InputError(f"{where}: {side!r} is neither a column of {source} nor a number{hint(side)}")
