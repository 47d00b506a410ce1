"""Structural zeros a schema lists (``forbid``): checked against the columns, and turned into codes.

A ``forbid`` entry maps 2 or more columns to values (categories, numbers, ranges ``lo..hi`` of a numeric column,
in the column's own format for dates and times); it forbids every combination of them. The entries are public
(a person wrote them), so the synthesizers fix those cells at zero at no privacy cost
(``privsample.synth.zeros``).
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from privsample.errors import InputError

__all__ = ["forbidden_bins", "parse_forbid", "forbid_codes"]


def _range_bounds(text: str, col, where: str) -> tuple[float, float]:
    """``lo..hi`` (either end may be left out: the column's bound) as two floats."""
    lo_s, _, hi_s = text.partition("..")
    try:
        lo = col.parse_constant(lo_s.strip()) if lo_s.strip() else col.lower
        hi = col.parse_constant(hi_s.strip()) if hi_s.strip() else col.upper
    except InputError:
        raise InputError(f"{where}: {text!r} is not a range lo..hi of numbers for column '{col.name}'") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise InputError(f"{where}: range {text!r} of column '{col.name}' needs finite lo <= hi")
    return lo, hi


def forbidden_bins(col, value: Any, where: str = "forbid") -> tuple[int, ...]:
    """The bins of ``col`` lying entirely inside ``value`` (a number x, i.e. x..x, or a text ``lo..hi``).

    An integer column's bin holds whole numbers (its label's run a–b), and lies inside when a and b do;
    another bin [e_i, e_i+1) lies inside when lo <= e_i and e_i+1 <= hi. No bin inside is an error."""
    if isinstance(value, bool):
        raise InputError(f"{where}: {value!r} is not a value of numeric column '{col.name}' (use a range lo..hi)")
    if isinstance(value, (int, float)):
        lo = hi = float(value)
        text = f"{value:g}"
    elif isinstance(value, str) and ".." in value:
        lo, hi = _range_bounds(value, col, where)
        text = value
    elif isinstance(value, str) and col.value_format is not None:  # one date, time or formatted number
        lo = hi = col.parse_constant(value)
        text = value
    else:
        raise InputError(f"{where}: {value!r} is not a number or a range lo..hi for numeric column '{col.name}'")
    e = col.bin_edges
    b = len(e) - 1
    out = []
    for i in range(b):
        if col.integer:
            a_i = math.ceil(e[i])
            b_i = math.floor(e[i + 1]) if i == b - 1 else math.ceil(e[i + 1]) - 1
            inside = lo <= a_i and b_i <= hi
        else:
            inside = lo <= e[i] and e[i + 1] <= hi
        if inside:
            out.append(i)
    if not out:
        raise InputError(f"{where}: range {text!r} holds no whole bin of column '{col.name}' (see its bins)")
    return tuple(out)


def parse_forbid(entries: Any, columns: list, source: str = "schema") -> list[dict[str, Any]]:
    """Check ``forbid`` entries against the columns; return them normalised (column -> value or list).

    Each entry maps 2 or more columns to a value or a list of values: categories of a categorical column
    (as text), numbers or ranges ``lo..hi`` of a numeric one. It forbids every combination of the listed
    values. An unknown column or value, a single-column entry or a range holding no whole bin is an
    ``InputError`` naming it."""
    if entries is None:
        return []
    if not isinstance(entries, (list, tuple)):
        raise InputError(f"{source}: 'forbid' must be a list of mappings column -> value(s)")
    by_name = {c.name: c for c in columns}
    out = []
    for i, entry in enumerate(entries):
        where = f"{source}: forbid entry #{i + 1}"
        if not isinstance(entry, dict) or not entry:
            raise InputError(f"{where} must be a mapping column -> value(s), e.g. {{sex: Male, relationship: Wife}}")
        for name in entry:
            if name not in by_name:
                close = difflib.get_close_matches(str(name), list(by_name), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise InputError(f"{where}: unknown column {str(name)!r}{hint}")
        if len(entry) < 2:
            (name,) = entry
            raise InputError(
                f"{where} names only column '{name}': an entry needs 2 or more columns "
                "(to rule out a value of one column, leave it out of the column's categories)"
            )
        norm: dict[str, Any] = {}
        for name, value in entry.items():
            col = by_name[name]
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            if not values:
                raise InputError(f"{where}: column '{name}' lists no value")
            if col.kind == "categorical":
                labels = set(col.categories) | ({col.other} if col.other is not None else set())
                values = [str(v) for v in values]
                for v in values:
                    if v not in labels:
                        close = difflib.get_close_matches(v, list(labels), n=1)
                        hint = f" (did you mean '{close[0]}'?)" if close else ""
                        raise InputError(f"{where}: {v!r} is not a category of column '{name}'{hint}")
            else:
                for v in values:
                    forbidden_bins(col, v, where)
            norm[str(name)] = values[0] if len(values) == 1 else values
        out.append(norm)
    return out


def forbid_codes(schema) -> list[dict[str, tuple[int, ...]]]:
    """Every ``forbid`` entry of ``schema`` as column -> the codes it forbids (categories' and bins' codes).

    An entry forbids the cells of the product of its columns' code sets. Codes are those of
    ``schema``'s columns; adding a catch-all or a null code (``release_domain``) leaves them unchanged."""
    out = []
    for entry in schema.forbid:
        codes: dict[str, tuple[int, ...]] = {}
        for name, value in entry.items():
            col = schema[name]
            values = value if isinstance(value, list) else [value]
            if col.kind == "categorical":
                index = {c: i for i, c in enumerate(col.categories)}
                if col.other is not None:
                    index[col.other] = col.other_code
                codes[name] = tuple(sorted({index[str(v)] for v in values}))
            else:
                codes[name] = tuple(sorted({b for v in values for b in forbidden_bins(col, v)}))
        out.append(codes)
    return out
