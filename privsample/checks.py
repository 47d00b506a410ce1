"""The rules of the arguments every front end takes: one rule per kind of parameter, one wording.

Each check raises a one-line ``InputError`` (the command line exits 2 with it) naming the option as the caller
wrote it: ``name`` is an option-naming function, ``python_option`` (``epsilon``, ``max_memory_mb``) for the
Python API, ``cli_option`` (``--epsilon``, ``--max-memory-mb``) for the command line. The same bad value gets
the same message from both, up to that name. The checks read public arguments only.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from privsample.errors import InputError

OptionName = Callable[..., str]
"""How a front end names an option in a message: ``option(name)``, or ``option(name, value)`` for the option set to
a value (``True``: a switch turned on; a list or tuple: a list of names)."""

MAX_ROWS = 10**12  # the most rows one request may ask for
MAX_EPSILON = 1e6  # the largest epsilon: far past any meaningful guarantee, and every step of a run stays finite
MAX_NUMBER = 1e12  # the largest other number option (sizes in MB stay within an int64 count of bytes)
MAX_COUNT = 10**9  # the largest whole-number option (iterations, candidates)


def python_option(name: str, value: Any = None) -> str:
    """An option as Python names it: the keyword argument itself (``epsilon``), with a value ``k=3``,
    ``skip_accuracy_check=True`` or ``categories=['a', 'b']``."""
    if value is None:
        return name
    return f"{name}={list(value)!r}" if isinstance(value, (list, tuple)) else f"{name}={value}"


def cli_option(name: str, value: Any = None) -> str:
    """An option as the command line names it: ``small_delta`` -> ``--small-delta``; with a value ``--k 3``, a
    switch alone (``--skip-accuracy-check``) and a list separated by ',' (``--categories a,b``)."""
    flag = "--" + name.replace("_", "-")
    if value is None or value is True:
        return flag
    return f"{flag} {','.join(map(str, value))}" if isinstance(value, (list, tuple)) else f"{flag} {value}"


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def check_epsilon(epsilon: Any, name: OptionName = python_option, option: str = "epsilon") -> float:
    """``epsilon`` a finite number > 0, at most ``MAX_EPSILON``."""
    if not _real(epsilon) or epsilon <= 0:
        raise InputError(f"{name(option)} must be a finite number > 0 (got {epsilon!r})")
    if epsilon > MAX_EPSILON:
        raise InputError(f"{name(option)} must be at most {MAX_EPSILON:g} (got {epsilon!r})")
    return epsilon


def check_delta(delta: Any, name: OptionName = python_option, option: str = "delta") -> float:
    """``delta`` a number in (0, 1)."""
    if not _real(delta) or not 0 < delta < 1:
        raise InputError(f"{name(option)} must be in (0, 1) (got {delta!r})")
    return delta


def check_budget(epsilon: Any, delta: Any, name: OptionName = python_option) -> None:
    """A privacy budget: ``epsilon`` > 0 and finite, ``delta`` in (0, 1)."""
    check_epsilon(epsilon, name)
    check_delta(delta, name)


def check_number(value: Any, option: str, name: OptionName = python_option, positive: bool = False) -> float:
    """``value`` a finite real number (and > 0 with ``positive``) of size at most ``MAX_NUMBER``."""
    if not _real(value) or (positive and value <= 0):
        raise InputError(f"{name(option)} must be a finite number{' > 0' if positive else ''} (got {value!r})")
    if abs(value) > MAX_NUMBER:
        raise InputError(f"{name(option)} must be at most {MAX_NUMBER:g} in size (got {value!r})")
    return value


def check_fraction(value: Any, option: str, name: OptionName = python_option) -> float:
    """``value`` a number in (0, 1]."""
    if not _real(value) or not 0 < value <= 1:
        raise InputError(f"{name(option)} must be in (0, 1] (got {value!r})")
    return value


def check_count(value: Any, option: str, name: OptionName = python_option) -> int | None:
    """None, or a whole number in [1, ``MAX_COUNT``] (not a bool)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"{name(option)} must be a whole number >= 1 (got {value!r})")
    if value > MAX_COUNT:
        raise InputError(f"{name(option)} must be at most {MAX_COUNT:,} (got {value:,})")
    return int(value)


def check_rows(rows: Any, name: OptionName = cli_option) -> int:
    """A number of rows to draw: a whole number in [0, ``MAX_ROWS``]."""
    if isinstance(rows, bool) or not isinstance(rows, numbers.Integral):
        raise InputError(f"{name('rows')} must be a whole number (got {rows!r})")
    rows = int(rows)
    if rows < 0:
        raise InputError(f"{name('rows')} must be >= 0 (got {rows})")
    if rows > MAX_ROWS:
        raise InputError(f"{name('rows')} {rows:,} is more than the limit of {MAX_ROWS:,} rows")
    return rows


def check_rows_written(rows: int | None, output: Any, save_model: Any, name: OptionName = python_option) -> None:
    """``InputError`` for a run that would spend its budget to write nothing: 0 rows to ``output`` and no model
    saved."""
    if output is not None and rows == 0 and save_model is None:
        raise InputError(
            f"{name('rows', 0)} would spend the budget to write no rows: give {name('rows')} N >= 1, or "
            f"{name('save_model')} to keep the model (and 'privsample sample' to draw from it later)"
        )


def check_seed(seed: Any, name: OptionName = python_option) -> int | None:
    """None, or a whole number >= 0 (an integer of Python or NumPy, not a bool)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise InputError(f"{name('seed')} must be a whole number >= 0 (got {seed!r})")
    return int(seed)


def check_index_col(value: Any, name: OptionName = python_option) -> str | int | None:
    """None, a column name (non-empty text) or a 1-based column position (a whole number >= 1, not a bool)."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    raise InputError(f"{name('index_col')} must be a column name or a 1-based column position (got {value!r})")


MAX_ROWS_PER_UNIT = 1024  # the largest k of contribution bounding (the last value of its public grid)


def check_unit(
    unit: Any, max_rows: Any, name: OptionName = python_option, unit_ids: Any = "none"
) -> tuple[str | None, int | None]:
    """(privacy unit column, k): None or a column name (non-empty text); k None (chosen privately) or a whole number
    in [1, ``MAX_ROWS_PER_UNIT``], given only with a unit; ``unit_ids`` none or fresh (fresh only with a unit)."""
    if unit is not None and not (isinstance(unit, str) and unit.strip()):
        raise InputError(f"{name('privacy_unit')} must be a column name (got {unit!r})")
    if unit_ids not in ("none", "fresh"):
        raise InputError(f"{name('unit_ids')} must be none or fresh (got {unit_ids!r})")
    if unit_ids == "fresh" and unit is None:
        raise InputError(f"{name('unit_ids')} fresh needs {name('privacy_unit')}: the column the ids go in")
    if max_rows is None:
        return unit, None
    if unit is None:
        raise InputError(f"{name('max_rows_per_unit')} needs {name('privacy_unit')}: the column that names a person")
    if isinstance(max_rows, bool) or not isinstance(max_rows, numbers.Integral) or not 1 <= max_rows:
        raise InputError(f"{name('max_rows_per_unit')} must be a whole number >= 1 (got {max_rows!r})")
    if max_rows > MAX_ROWS_PER_UNIT:
        raise InputError(f"{name('max_rows_per_unit')} {max_rows:,} is more than the limit of {MAX_ROWS_PER_UNIT:,}")
    return unit, int(max_rows)


def check_choice(value: Any, choices: Iterable[str], option: str, name: OptionName = python_option) -> str:
    """``value`` one of ``choices``."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"unknown {name(option)} {value!r} (choose from: {', '.join(choices)})")
    return value


def check_columns(
    table: Any,
    header: Sequence[str],
    columns: Sequence[str],
    schema_name: str,
    name: OptionName = python_option,
    delimiters: Iterable[str] = (),
) -> list[str]:
    """The names of ``header`` (the column names of the file ``table``, public) that a schema of ``columns`` leaves
    out, in header order; ``InputError`` when the schema names a column the header lacks, with a hint when a name
    of the header holds one of ``delimiters`` (the delimiter may be wrong)."""
    missing = [c for c in columns if c not in header]
    if missing:
        held = [d for d in delimiters if any(d in h for h in header)]
        hint = ""
        if held:
            hint = (
                f" (a column name of the header holds {'tab' if held[0] == chr(9) else repr(held[0])}: "
                f"is {name('delimiter')} right?)"
            )
        many = len(missing) > 1
        raise InputError(
            f"{table}: column{'s' if many else ''} {', '.join(repr(c) for c in missing)} "
            f"of {schema_name} {'are' if many else 'is'} not in the data{hint}"
        )
    return [str(h) for h in header if str(h) not in columns]


COMPARISON_OPERATORS = ("<=", ">=", "<", ">")
_COMPARISON = re.compile(r"(<=|>=|==|!=|=<|=>|<|>|=)")


def parse_comparison(text: Any, where: str) -> tuple[str, str, str]:
    """(left, operator, right) of a comparison ``A OP B`` (``OP``: ``<=``, ``<``, ``>=`` or ``>``; either side a
    column name or a constant, spaces around them stripped); ``InputError`` starting with ``where`` for anything
    else: not text, no operator or more than one, another operator (``=``, ``==``, ``!=``), an empty side."""
    if not isinstance(text, str):
        raise InputError(f"{where}: must be a comparison as text, such as 'discharged >= admitted' (got {text!r})")
    parts = _COMPARISON.split(text)
    ops = parts[1::2]
    if len(ops) != 1 or ops[0] not in COMPARISON_OPERATORS:
        found = f"; found {', '.join(repr(o) for o in ops)}" if ops else ""
        raise InputError(
            f"{where}: needs exactly one comparison operator ({', '.join(COMPARISON_OPERATORS)}) between two "
            f"sides, as in 'discharged >= admitted'{found}"
        )
    left, op, right = parts[0].strip(), ops[0], parts[2].strip()
    if not left or not right:
        raise InputError(f"{where}: '{op}' needs a column or a constant on each side")
    return left, op, right


def check_require(require: Any, name: OptionName = python_option) -> list[str]:
    """``require`` (None or a list of comparisons ``A OP B``, ``parse_comparison``) as a list of stripped texts;
    only the syntax is checked here (which sides are columns is the schema's business)."""
    if require is None:
        return []
    if isinstance(require, str) or not isinstance(require, (list, tuple)):
        raise InputError(
            f"{name('require')} must be a list of comparisons such as ['discharged >= admitted'] (got {require!r})"
        )
    out = []
    for text in require:
        where = f"{name('require')} {text!r}"
        parse_comparison(text, where)
        out.append(text.strip())
    return out


def left_out_note(left: Sequence[str], table: Any, schema_name: str) -> str:
    """The warning that names the columns ``left`` of ``table`` that a schema leaves out (column names, public)."""
    many = len(left) > 1
    return (
        f"column{'s' if many else ''} {', '.join(repr(c) for c in left)} of {Path(table).name} "
        f"{'are' if many else 'is'} not in {schema_name} and {'are' if many else 'is'} left out"
    )


def check_width(columns: int, limit: int | None, what: str, method: str, schema_option: str = "schema") -> None:
    """``InputError`` when a table of ``columns`` columns is wider than ``limit``, the widest that ``method`` models
    (``Synthesizer.max_columns``; None: no limit). ``what`` names the table; public: a count of column names."""
    if limit is not None and columns > limit:
        raise InputError(
            f"{what} has {columns:,} columns, more than {method} models (at most {limit:,}): keep at most "
            f"{limit:,} of them, e.g. with a reviewed {schema_option} that lists only those (the others are left "
            "out); nothing was spent"
        )


__all__ = [
    "check_rows_written",
    "check_unit",
    "MAX_ROWS_PER_UNIT",
    "check_width",
    "OptionName",
    "MAX_ROWS",
    "MAX_EPSILON",
    "MAX_NUMBER",
    "MAX_COUNT",
    "python_option",
    "cli_option",
    "check_epsilon",
    "check_delta",
    "check_budget",
    "check_number",
    "check_fraction",
    "check_count",
    "check_rows",
    "check_seed",
    "check_index_col",
    "check_choice",
    "check_columns",
    "left_out_note",
    "COMPARISON_OPERATORS",
    "parse_comparison",
    "check_require",
]
