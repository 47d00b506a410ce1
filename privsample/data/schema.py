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

Identifier and free-text columns (``Identifier``, ``FreeText``; ``type: id`` and ``type: text`` in a file) are not
part of the synthesized domain: they are kept apart from ``columns`` (``Schema.identifiers``, ``Schema.text``), each
with its position in the column order (``Schema.layout``), so that a file lists every column in the table's order.
The output gets fresh ids in an identifier column's place (``privsample.data.identifiers``) and leaves free text out.

Schema files are strict: an unknown key (at the top or in a column) is refused with a suggestion, so a
misspelled optional key cannot be silently ignored. ``version`` (default 1) names the file format:
later formats add keys on purpose under a higher version.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from privsample.data.identifiers import IdFormat, parse_format
from privsample.errors import InputError

DEFAULT_NA_VALUES = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")
DEFAULT_OTHER_LABEL = "(other)"
PROVENANCES = ("user", "private", "draft-nonprivate")
SCHEMA_VERSION = 1  # the file format this version reads and writes
# The fields of a saved schema (privsample.privacy.released): public (the format and the column names, and every
# field of a schema a person wrote), or, in a privately discovered schema, mechanism outputs (kinds, categories,
# bounds, bins and nullability chosen from noisy counts; the discovery's noisy figures, ledger and notes). A
# field in neither list fails the leak test (tests/test_leaks.py) until it is declared here.
PUBLIC_FIELDS = ("version", "provenance", "na_values*", "columns[].name", "forbid*")
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
    "columns[].format",
    "columns[].keep",
    "notes*",
    "ledger.*",
    "discovery.*",
)
MAX_INTEGER_BOUND = 2**52  # integer columns: |bound| <= 2**52 (half-integers are exact floats below it)
MAX_FLOAT_BOUND = sys.float_info.max / 2  # bounds within +-this always have a finite upper - lower
SCHEMA_KEYS = ("version", "provenance", "columns", "na_values", "notes", "ledger", "discovery", "forbid")
SUGGESTED_FORBID_KEY = "suggested_forbid"  # a draft's candidate zeros (JSON): refused until reviewed and renamed
COLUMN_KEYS = {
    "categorical": ("name", "type", "categories", "nullable", "other"),
    "numeric": ("name", "type", "lower", "upper", "bins", "edges", "integer", "nullable"),
    "id": ("name", "type", "format"),
    "text": ("name", "type", "keep", "categories", "nullable", "other"),
}
TEXT_KEEP = ("drop", "frequent")  # a text column: dropped from the output, or its frequent values kept


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


@dataclass(frozen=True)
class Identifier:
    """An identifier column (a patient or customer id: every record its own value), left out of the synthesized
    domain: the marginal engines and the models never see it, and the output gets fresh ids of ``format``
    (``privsample.data.identifiers``: ``{k digits}``, ``{k hex}`` or ``{uuid}``, with an optional literal prefix
    and suffix) drawn independently of the data, at ``position`` in the column order (None: after the others).

    The fresh ids are never compared with the real ones: such a check would make the output depend on single
    records and is not differentially private. Instead the digit part is widened when the format's space is too
    small for a match to be negligible (``identifiers.widened``; the output warns, naming the column and the format
    used)."""

    name: str
    format: str = "{uuid}"
    position: int | None = None

    kind = "id"

    def __post_init__(self):
        object.__setattr__(self, "format", str(parse_format(self.format, f"schema column '{self.name}'")))

    @property
    def id_format(self) -> IdFormat:
        return parse_format(self.format)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": "id", "format": self.format}


@dataclass(frozen=True)
class FreeText:
    """A free-text column (long or nearly all-distinct values), dropped from the output (``keep: drop``): not
    synthesized, and absent from the output table (a warning names it). ``categories``: its frequent values where
    private discovery released some (noisy counts above the threshold); ``keep: frequent`` in a schema file makes
    the column categorical with them (``as_categorical``). ``position``: its place in the column order."""

    name: str
    position: int | None = None
    categories: tuple[str, ...] = ()

    kind = "text"

    def __post_init__(self):
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if len(set(self.categories)) != len(self.categories):
            raise InputError(f"schema column '{self.name}': duplicate categories")

    def as_categorical(self, nullable: bool = False, other: str | None = None) -> Categorical:
        """The column with its frequent values kept (``keep: frequent``): categorical, with a catch-all."""
        if other is None:
            other, i = DEFAULT_OTHER_LABEL, 2
            while other in self.categories:
                other, i = f"{DEFAULT_OTHER_LABEL[:-1]} {i})", i + 1
        return Categorical(self.name, self.categories, nullable=nullable, other=other)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": "text", "keep": "drop"}
        if self.categories:
            d["categories"] = list(self.categories)
        return d


Outside = Union[Identifier, FreeText]  # a column of the table that is not synthesized


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


def _text_from_dict(c: dict, name: str, i: int, source: str) -> Column | Outside:
    """A ``type: text`` column #i + 1: ``FreeText`` (``keep: drop``, the default) or, with ``keep: frequent``, the
    ``Categorical`` of its listed frequent values."""
    keep = c.get("keep", "drop")
    if keep not in TEXT_KEEP:
        raise InputError(f"{source}: text column '{name}': keep must be {' or '.join(TEXT_KEEP)} (got {keep!r})")
    cats = c.get("categories", [])
    if not isinstance(cats, list):
        raise InputError(f"{source}: text column '{name}': 'categories' must be a list")
    if keep == "drop":
        return FreeText(name, i, tuple(cats))
    if not cats:
        raise InputError(
            f"{source}: text column '{name}' has keep: frequent but lists no categories (its frequent values, "
            "public or privately discovered)"
        )
    return FreeText(name, i, tuple(cats)).as_categorical(bool(c.get("nullable", False)), c.get("other"))


def _column_from_dict(c: Any, i: int, source: str) -> Column | Outside:
    """Column #i + 1 of a schema mapping (``Schema.from_dict``); ``InputError`` naming it when it is malformed.
    An ``id`` or ``text`` column (not synthesized) has position i."""
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
        if kind == "id":
            fmt = parse_format(c.get("format", "{uuid}"), f"{source}: id column '{name}'")
            return Identifier(name, str(fmt), i)
        if kind == "text":
            return _text_from_dict(c, name, i, source)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: column '{name}': {exc}") from None
    raise InputError(f"{source}: column '{name}' has unknown type '{kind}' (categorical|numeric|id|text)")


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
    # columns of the table that are not synthesized, each with its ``position`` in the column order (``layout``):
    # identifiers (fresh ids in the output) and free text (dropped from the output)
    identifiers: list[Identifier] = field(default_factory=list)
    text: list[FreeText] = field(default_factory=list)

    def __post_init__(self):
        self._place_outside()
        names = [c.name for c in self.layout()]
        if not names:
            raise InputError("schema has no columns")
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InputError(f"schema lists column(s) more than once: {', '.join(sorted(dup))}")
        if not self.columns:
            raise InputError(
                "schema has no column to synthesize (only identifier or free-text columns): keep at least one "
                "categorical or numeric column"
            )
        self.na_values = tuple(self.na_values)
        self.forbid = parse_forbid(self.forbid, self.columns)

    def _place_outside(self) -> None:
        """Move identifier and free-text columns given in ``columns`` to their lists, at their place in it; give
        those without a position the places after the others; check that the positions are distinct and in range."""
        given = list(self.columns)
        outside = [c for c in (*self.identifiers, *self.text)]
        if any(isinstance(c, (Identifier, FreeText)) for c in given):
            kept = []
            for i, c in enumerate(given):
                if isinstance(c, (Identifier, FreeText)):
                    outside.append(c if c.position is not None else dataclasses.replace(c, position=i))
                else:
                    kept.append(c)
            self.columns = kept
        total = len(self.columns) + len(outside)
        taken = {c.position for c in outside if c.position is not None}
        free = iter(p for p in range(total - 1, -1, -1) if p not in taken)
        unplaced = [i for i, c in enumerate(outside) if c.position is None]
        for i, p in zip(reversed(unplaced), free):
            outside[i] = dataclasses.replace(outside[i], position=p)
        positions = [c.position for c in outside]
        if len(set(positions)) != len(positions) or any(not (isinstance(p, int) and 0 <= p < total) for p in positions):
            raise InputError("schema: identifier and text columns need distinct positions within the columns")
        self.identifiers = [c for c in outside if isinstance(c, Identifier)]
        self.text = [c for c in outside if isinstance(c, FreeText)]

    def layout(self) -> list:
        """Every column in the table's order: the synthesized ``columns`` with the identifier and free-text columns
        at their positions."""
        placed = {c.position: c for c in (*self.identifiers, *self.text)}
        rest = iter(self.columns)
        return [placed[i] if i in placed else next(rest) for i in range(len(self.columns) + len(placed))]

    @property
    def output_names(self) -> list[str]:
        """The columns of a synthetic table, in order: the synthesized and identifier columns (free text is left
        out)."""
        return [c.name for c in self.layout() if not isinstance(c, FreeText)]

    @property
    def all_names(self) -> list[str]:
        """Every column the schema declares (synthesized, identifier and free text), in order."""
        return [c.name for c in self.layout()]

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
            "columns": [c.to_dict() for c in self.layout()],
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
        outside: list[Outside] = []
        for i, c in enumerate(d["columns"]):
            col = _column_from_dict(c, i, source)
            (outside if isinstance(col, (Identifier, FreeText)) else cols).append(col)
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
            [c for c in outside if isinstance(c, Identifier)],
            [c for c in outside if isinstance(c, FreeText)],
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
