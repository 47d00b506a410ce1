"""The schema: a *public* description of every column, from which the finite domain is built.

A schema must not be read off the sensitive data unless that reading is either private (see
``privsample.data.discovery.private_schema``, whose cost goes into the ledger) or an explicit,
loudly labelled non-private draft (``draft_schema``) that a person reviews before use.

Codes (what the marginal engines count, C order):
* ``Categorical``: code i for ``categories[i]``; then, if ``other`` is set, the catch-all code for
  values outside ``categories`` (only used when coercing); then, if ``nullable``, the null code.
* ``Numeric``: bin i for edges[i] <= x < edges[i+1] (the last bin is closed on the right); then, if
  ``nullable``, the null code. Values outside [lower, upper] are an error, or clipped when coercing.

Bounds are finite and ``upper - lower`` is a finite float, so every arithmetic on them (bin widths,
midpoints, decoding) stays finite; integer columns keep within +-``MAX_INTEGER_BOUND`` (2**52), where
half-integer bin edges are exact floats.

``forbid`` lists structural zeros: combinations of values of two or more columns that cannot occur
(e.g. ``{sex: Male, relationship: Wife}``). They are public, like the rest of the schema, so the
synthesizers fix those cells at zero at no privacy cost. A numeric column's range ``lo..hi`` forbids
the bins lying entirely inside it (a bin only partly inside stays allowed).

``require`` lists order constraints: comparisons ``A OP B`` (``<=``, ``<``, ``>=``, ``>``) between two numeric
columns, or a numeric column and a constant (``discharged >= admitted``, ``copay >= 0``). They are public too:
the cells where one cannot hold are structural zeros, and decoding keeps every record within them
(``privsample.data.require``). A null value violates no comparison (SQL semantics).

Schema files are strict: an unknown key (at the top or in a column) is refused with a suggestion, so a
misspelled optional key cannot be silently ignored. ``version`` (default 1) names the file format:
later formats add keys on purpose under a higher version.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from privsample.checks import parse_comparison
from privsample.data.require import Comparison, infeasible_column, zero_codes
from privsample.errors import InputError

DEFAULT_NA_VALUES = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")
DEFAULT_OTHER_LABEL = "(other)"
PROVENANCES = ("user", "private", "draft-nonprivate")
SCHEMA_VERSION = 1  # the file format this version reads and writes
# The fields of a saved schema (privsample.privacy.released): public (the format and the column names, and every
# field of a schema a person wrote), or, in a privately discovered schema, mechanism outputs (kinds, categories,
# bounds, bins and nullability chosen from noisy counts; the discovery's noisy figures, ledger and notes). A
# field in neither list fails the leak test (tests/test_leaks.py) until it is declared here.
PUBLIC_FIELDS = ("version", "provenance", "na_values*", "columns[].name", "forbid*", "require*")
RELEASED_FIELDS = (
    "columns[].type",
    "columns[].categories*",
    "columns[].other",
    "columns[].lower",
    "columns[].upper",
    "columns[].bins",
    "columns[].edges*",
    "columns[].integer",
    "columns[].nullable",
    "notes*",
    "ledger.*",
    "discovery.*",
)
MAX_INTEGER_BOUND = 2**52  # integer columns: |bound| <= 2**52 (half-integers are exact floats below it)
MAX_FLOAT_BOUND = sys.float_info.max / 2  # bounds within +-this always have a finite upper - lower
SCHEMA_KEYS = (
    "version",
    "provenance",
    "columns",
    "na_values",
    "notes",
    "ledger",
    "discovery",
    "forbid",
    "require",
)
SUGGESTED_FORBID_KEY = "suggested_forbid"  # a draft's candidate zeros (JSON): refused until reviewed and renamed
COLUMN_KEYS = {
    "categorical": ("name", "type", "categories", "nullable", "other"),
    "numeric": ("name", "type", "lower", "upper", "bins", "edges", "integer", "nullable"),
}


def mbi_domain(names, sizes):
    """``mbi.Domain(names, sizes)``. Importing mbi before the synthesizers have set JAX up (float64, no
    compilation cache: ``privsample.synth.jax_setup``) makes it warn about JAX's defaults, which says nothing
    useful to a user who only reads or evaluates tables: that import is quiet here; the set-up still applies
    when a synthesizer runs."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from mbi import Domain

    return Domain(list(names), [int(n) for n in sizes])


@dataclass(frozen=True)
class Categorical:
    """A column with a public, finite list of categories (compared as strings)."""

    name: str
    categories: tuple[str, ...]
    nullable: bool = False
    other: str | None = None  # catch-all label for values outside ``categories`` (coercion target)

    kind = "categorical"

    def __post_init__(self):
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if len(self.categories) == 0 and self.other is None:
            raise InputError(f"schema column '{self.name}': a categorical column needs at least one category")
        if len(set(self.categories)) != len(self.categories):
            raise InputError(f"schema column '{self.name}': duplicate categories")
        if self.other is not None and self.other in self.categories:
            raise InputError(f"schema column '{self.name}': other label '{self.other}' is also a category")

    @property
    def size(self) -> int:
        return len(self.categories) + (self.other is not None) + self.nullable

    @property
    def other_code(self) -> int | None:
        return len(self.categories) if self.other is not None else None

    @property
    def null_code(self) -> int | None:
        return self.size - 1 if self.nullable else None

    def labels(self) -> list[str]:
        """Human-readable label of every code."""
        out = list(self.categories)
        if self.other is not None:
            out.append(self.other)
        if self.nullable:
            out.append("<null>")
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": "categorical", "categories": list(self.categories)}
        if self.nullable:
            d["nullable"] = True
        if self.other is not None:
            d["other"] = self.other
        return d


@dataclass(frozen=True)
class Numeric:
    """A numeric column with public bounds, discretised into bins (``bins`` equal-width, or ``edges``)."""

    name: str
    lower: float
    upper: float
    bins: int | None = None
    edges: tuple[float, ...] | None = None
    integer: bool = False
    nullable: bool = False

    kind = "numeric"

    def __post_init__(self):
        lo, hi = float(self.lower), float(self.upper)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise InputError(f"schema column '{self.name}': bounds must be finite with lower <= upper")
        if not math.isfinite(hi - lo):
            raise InputError(
                f"schema column '{self.name}': bounds [{lo:g}, {hi:g}] are too far apart (upper - lower "
                f"overflows a float); keep them within +-{MAX_FLOAT_BOUND:.4g}"
            )
        if self.integer and max(abs(lo), abs(hi)) > MAX_INTEGER_BOUND:
            raise InputError(
                f"schema column '{self.name}': an integer column's bounds must lie within "
                f"+-{MAX_INTEGER_BOUND} (2**52); use 'integer: false' for larger numbers"
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        if self.edges is not None:
            e = tuple(float(x) for x in self.edges)
            if not all(math.isfinite(x) for x in e):
                raise InputError(f"schema column '{self.name}': edges must be finite numbers")
            if len(e) < 2 or any(b <= a for a, b in zip(e, e[1:])):
                raise InputError(f"schema column '{self.name}': edges must be strictly increasing (>= 2 values)")
            if e[0] != lo or e[-1] != hi:
                raise InputError(f"schema column '{self.name}': edges must start at lower and end at upper")
            object.__setattr__(self, "edges", e)
            object.__setattr__(self, "bins", len(e) - 1)
        else:
            b = 1 if self.bins is None else int(self.bins)
            if b < 1:
                raise InputError(f"schema column '{self.name}': bins must be >= 1")
            if lo == hi:
                b = 1
            if self.integer:  # integer-aligned bins: never more bins than integers
                n_int = math.floor(hi) - math.ceil(lo) + 1
                b = max(1, min(b, n_int))
            object.__setattr__(self, "bins", b)

    @property
    def bin_edges(self) -> np.ndarray:
        if self.edges is not None:
            return np.asarray(self.edges, dtype=float)
        if self.lower == self.upper:
            return np.array([self.lower, self.upper], dtype=float)
        if self.integer:
            # Integer columns: bins hold whole runs of integers (sizes differ by at most one); interior
            # edges sit at half-integers so every integer falls strictly inside one bin.
            first = math.ceil(self.lower)
            n_int = math.floor(self.upper) - first + 1
            b = int(self.bins)
            if n_int >= 1 and b > 1:  # exact integer arithmetic (Python ints), then floats
                inner = [first + (i * n_int) // b - 0.5 for i in range(1, b)]
                return np.array([self.lower, *inner, self.upper], dtype=float)
        if math.isinf(self.upper - self.lower):  # bounds near the float limit: halve, so no step overflows
            return 2 * np.linspace(self.lower / 2, self.upper / 2, int(self.bins) + 1)
        return np.linspace(self.lower, self.upper, int(self.bins) + 1)

    @property
    def size(self) -> int:
        return int(self.bins) + self.nullable

    def parse_constant(self, text: str) -> float:
        """The value a constant of a ``require`` comparison with this column denotes (``copay >= 0``): a finite
        number; ``ValueError`` for anything else."""
        value = float(str(text).strip())
        if not math.isfinite(value):
            raise ValueError(f"{text!r} is not a finite number")
        return value

    @property
    def null_code(self) -> int | None:
        return self.size - 1 if self.nullable else None

    def labels(self) -> list[str]:
        e = self.bin_edges
        if self.integer and self.edges is None:
            lo = [math.ceil(e[0])] + [int(x + 0.5) for x in e[1:-1]]
            hi = [int(x - 0.5) for x in e[1:-1]] + [math.floor(e[-1])]
            out = [str(a) if a == b else f"{a}–{b}" for a, b in zip(lo, hi)]
        else:
            out = [f"[{e[i]:g}, {e[i + 1]:g}{']' if i == len(e) - 2 else ')'}" for i in range(len(e) - 1)]
        if self.nullable:
            out.append("<null>")
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": "numeric", "lower": self.lower, "upper": self.upper}
        if self.edges is not None:
            d["edges"] = list(self.edges)
        else:
            d["bins"] = int(self.bins)
        if self.integer:
            d["integer"] = True
        if self.nullable:
            d["nullable"] = True
        return d


Column = Union[Categorical, Numeric]


def _check_keys(d: dict, allowed: tuple[str, ...], source: str, where: str) -> None:
    """InputError naming the first key of ``d`` not in ``allowed``, with the closest allowed key if any."""
    for key in d:
        if key in allowed:
            continue
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise InputError(f"{source}: {where}unknown key {str(key)!r} ({hint}allowed: {', '.join(allowed)})")


def _range_bounds(text: str, col: Numeric, where: str) -> tuple[float, float]:
    """``lo..hi`` (either end may be left out: the column's bound) as two floats."""
    lo_s, _, hi_s = text.partition("..")
    try:
        lo = float(lo_s) if lo_s.strip() else col.lower
        hi = float(hi_s) if hi_s.strip() else col.upper
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a range lo..hi of numbers for column '{col.name}'") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise InputError(f"{where}: range {text!r} of column '{col.name}' needs finite lo <= hi")
    return lo, hi


def forbidden_bins(col: Numeric, value: Any, where: str = "forbid") -> tuple[int, ...]:
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
            if isinstance(col, Categorical):
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


def forbid_codes(schema: "Schema") -> list[dict[str, tuple[int, ...]]]:
    """Every ``forbid`` entry of ``schema`` as column -> the codes it forbids (categories' and bins' codes).

    An entry forbids the cells of the product of its columns' code sets. Codes are those of
    ``schema``'s columns; adding a catch-all or a null code (``release_domain``) leaves them unchanged."""
    out = []
    for entry in schema.forbid:
        codes: dict[str, tuple[int, ...]] = {}
        for name, value in entry.items():
            col = schema[name]
            values = value if isinstance(value, list) else [value]
            if isinstance(col, Categorical):
                index = {c: i for i, c in enumerate(col.categories)}
                if col.other is not None:
                    index[col.other] = col.other_code
                codes[name] = tuple(sorted({index[str(v)] for v in values}))
            else:
                codes[name] = tuple(sorted({b for v in values for b in forbidden_bins(col, v)}))
        out.append(codes)
    return out


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
        if col is not None and not isinstance(col, Numeric):
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
        except ValueError:
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


def require_comparisons(schema: "Schema") -> list[Comparison]:
    """The schema's ``require`` entries as comparisons ``low <= high`` / ``low < high``."""
    return [comparison(text, schema.columns, f"schema: require entry {text!r}") for text in schema.require]


def require_codes(schema: "Schema") -> list[dict[str, tuple[int, ...]]]:
    """The structural zeros of the schema's ``require`` entries, as ``forbid_codes`` gives them
    (``privsample.data.require.zero_codes``): public, a function of the schema only."""
    if not schema.require:
        return []
    return zero_codes(require_comparisons(schema), {c.name: c for c in schema.columns})


def add_require(schema: "Schema", entries: list[str], label: str) -> "Schema":
    """A copy of ``schema`` with the comparisons ``entries`` added to its ``require`` list (public: a person
    wrote them), checked against its columns (``InputError`` naming an entry as ``label 'text'``)."""
    if not entries:
        return schema
    merged = parse_require(list(schema.require) + list(entries), schema.columns, label=label)
    return dataclasses.replace(schema, require=merged, ledger=copy.deepcopy(schema.ledger))


def check_require_names(entries: list[str], names: list[str], label: str, source: Any) -> None:
    """Before any spend, without a schema: every comparison of ``entries`` names a column of ``names`` (the
    table's header, public), and its other side is a column too or a number (the only constants that discovered
    columns, numeric or categorical, read). Whether the columns are numeric is known only once the schema is
    discovered."""

    def number(text: str) -> bool:
        try:
            return math.isfinite(float(text))
        except ValueError:
            return False

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


class NamedColumns:
    """Access by name to an ordered ``columns`` list of objects with a ``name``."""

    columns: list

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __getitem__(self, name: str):
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def __contains__(self, name: str) -> bool:
        return name in self.names


def _column_from_dict(c: Any, i: int, source: str) -> Column:
    """Column #i + 1 of a schema mapping (``Schema.from_dict``); ``InputError`` naming it when it is malformed."""
    if not isinstance(c, dict) or "name" not in c or "type" not in c:
        raise InputError(f"{source}: column #{i + 1} needs 'name' and 'type'")
    name = str(c["name"])
    kind = c["type"]
    if kind in COLUMN_KEYS:
        _check_keys(c, COLUMN_KEYS[kind], source, f"{kind} column '{name}': ")
    try:
        if kind == "categorical":
            cats = c.get("categories")
            if not isinstance(cats, list):
                raise InputError(f"{source}: column '{name}' needs a 'categories' list")
            return Categorical(name, tuple(cats), bool(c.get("nullable", False)), c.get("other"))
        if kind == "numeric":
            if "lower" not in c or "upper" not in c:
                raise InputError(f"{source}: numeric column '{name}' needs 'lower' and 'upper'")
            return Numeric(
                name,
                float(c["lower"]),
                float(c["upper"]),
                c.get("bins"),
                tuple(c["edges"]) if c.get("edges") is not None else None,
                bool(c.get("integer", False)),
                bool(c.get("nullable", False)),
            )
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: column '{name}': {exc}") from None
    raise InputError(f"{source}: column '{name}' has unknown type '{kind}' (categorical|numeric)")


@dataclass
class Schema(NamedColumns):
    """Ordered public columns plus reading options; ``provenance`` says where it came from.

    provenance: "user" (written or reviewed by a person), "draft-nonprivate" (read off the data,
    must be reviewed before use) or "private" (discovered with DP; ``ledger`` holds the cost).
    """

    columns: list[Column]
    na_values: tuple[str, ...] = DEFAULT_NA_VALUES
    provenance: str = "user"
    ledger: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    discovery: dict[str, Any] | None = None  # private discovery's plan and per-column report (noisy/public values)
    forbid: list[dict[str, Any]] = field(default_factory=list)  # structural zeros (public), see ``parse_forbid``
    require: list[str] = field(default_factory=list)  # order constraints (public), see ``parse_require``

    def __post_init__(self):
        names = [c.name for c in self.columns]
        if not names:
            raise InputError("schema has no columns")
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InputError(f"schema lists column(s) more than once: {', '.join(sorted(dup))}")
        self.na_values = tuple(self.na_values)
        self.forbid = parse_forbid(self.forbid, self.columns)
        self.require = parse_require(self.require, self.columns)

    # -- access: names, schema[name], name in schema (``NamedColumns``) --------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.columns)

    def domain(self):
        """The finite domain as an ``mbi.Domain`` (attribute order = schema order)."""
        return mbi_domain(self.names, self.shape)

    def domain_dict(self) -> dict[str, int]:
        return {c.name: c.size for c in self.columns}

    # -- (de)serialisation ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": SCHEMA_VERSION,
            "provenance": self.provenance,
            "columns": [c.to_dict() for c in self.columns],
        }
        if tuple(self.na_values) != DEFAULT_NA_VALUES:
            d["na_values"] = list(self.na_values)
        if self.notes:
            d["notes"] = list(self.notes)
        if self.ledger is not None:
            d["ledger"] = self.ledger
        if self.discovery is not None:
            d["discovery"] = self.discovery
        if self.forbid:
            d["forbid"] = [dict(e) for e in self.forbid]
        if self.require:
            d["require"] = list(self.require)
        return d

    @classmethod
    def from_dict(cls, d: Any, source: str = "schema") -> "Schema":
        if not isinstance(d, dict) or not isinstance(d.get("columns"), list):
            raise InputError(f"{source}: expected a mapping with a 'columns' list")
        version = d.get("version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InputError(f"{source}: 'version' must be a whole number >= 1 (got {version!r})")
        if version > SCHEMA_VERSION:
            raise InputError(
                f"{source}: schema format version {version} is newer than this privsample reads "
                f"(version {SCHEMA_VERSION}); upgrade privsample"
            )
        if SUGGESTED_FORBID_KEY in d:
            raise InputError(
                f"{source}: '{SUGGESTED_FORBID_KEY}' lists NON-PRIVATE candidates read from the data: keep only "
                "combinations that are impossible by public knowledge, move them under 'forbid', delete the key"
            )
        _check_keys(d, SCHEMA_KEYS, source, "")
        cols: list[Column] = []
        for i, c in enumerate(d["columns"]):
            cols.append(_column_from_dict(c, i, source))
        provenance = d.get("provenance")
        if provenance is None:
            raise InputError(
                f"{source} has no 'provenance': a schema is trusted as public only when it says where it "
                "came from; after reviewing it, add 'provenance: user'"
            )
        if provenance not in PROVENANCES:
            raise InputError(f"{source}: unknown provenance {provenance!r} ({' | '.join(PROVENANCES)})")
        discovery = d.get("discovery")
        if discovery is not None and not isinstance(discovery, dict):
            raise InputError(f"{source}: 'discovery' must be a mapping")
        return cls(
            cols,
            tuple(d.get("na_values", DEFAULT_NA_VALUES)),
            provenance,
            d.get("ledger"),
            list(d.get("notes", [])),
            discovery,
            parse_forbid(d.get("forbid"), cols, source),
            parse_require(d.get("require"), cols, source),
        )

    def save(self, path: str | Path, suggested_forbid: list[dict[str, Any]] | None = None) -> None:
        """Write YAML (``.yaml``/``.yml``) or JSON, atomically.

        ``suggested_forbid`` (a draft's NON-PRIVATE candidate zeros, ``discovery.suggest_forbid``): written as
        a commented-out ``forbid:`` block in YAML, as a ``suggested_forbid`` key in JSON, which the loader
        refuses until a person has reviewed it and renamed it; never added to ``forbid`` here."""
        from privsample.io import atomic_write_text

        path = Path(path)
        d = self.to_dict()
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            header = ""
            if self.provenance == "draft-nonprivate":
                header = (
                    "# NON-PRIVATE DRAFT: categories and bounds below were read directly from the data.\n"
                    "# Review and edit (remove rare categories, use public bounds) before using it.\n"
                )
            text = header + yaml.safe_dump(d, sort_keys=False, allow_unicode=True)
            if suggested_forbid:
                block = yaml.safe_dump(
                    {"forbid": suggested_forbid}, sort_keys=False, allow_unicode=True, default_flow_style=None
                )
                text += (
                    "# NON-PRIVATE SUGGESTIONS: combinations no record has among frequent values, read directly\n"
                    "# from the data. An empty cell may be merely rare: keep only combinations that are\n"
                    "# impossible by public knowledge, and uncomment them (one 'forbid:' key) to use them.\n"
                    + "".join(f"# {line}\n" for line in block.splitlines())
                )
        else:
            if suggested_forbid:
                d[SUGGESTED_FORBID_KEY] = list(suggested_forbid)
            text = json.dumps(d, indent=2)
        atomic_write_text(path, text)

    @classmethod
    def load(cls, path: str | Path) -> "Schema":
        path = Path(path)
        if not path.exists():
            raise InputError(f"schema file not found: {path}")
        try:
            text = path.read_text()
            if path.suffix.lower() in (".yaml", ".yml"):
                import yaml

                d = yaml.safe_load(text)
            else:
                d = json.loads(text)
        except Exception as exc:  # noqa: BLE001 - any parse failure is bad input
            raise InputError(
                f"schema file {path}: cannot parse ({type(exc).__name__}: {str(exc).splitlines()[0]})"
            ) from None
        return cls.from_dict(d, source=f"schema file {path}")


def check_schema_usable(schema: Schema, source: str = "schema") -> None:
    """Refuse a schema that is not public: an unreviewed draft, or a private one without its ledger."""
    if schema.provenance == "draft-nonprivate":
        raise InputError(
            f"{source} is an unreviewed non-private draft read from the data: review it, then set "
            "'provenance: user' in its file or call schema.reviewed() in Python (or discover it privately: "
            "'privsample schema --private-epsilon', Schema.discover)"
        )
    if schema.provenance == "private" and not (schema.ledger or {}).get("entries"):
        raise InputError(
            f"{source} says it was discovered privately but carries no ledger of its cost: use the "
            "file 'privsample schema --private-epsilon' wrote, or review it and set 'provenance: user'"
        )
