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

import datetime
import difflib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from privsample.data.forbid import parse_forbid
from privsample.data.formats import TEMPORAL_UNIT, value_format
from privsample.data.require_entries import parse_require
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
    "columns[].format",
    "columns[].special*",
    "columns[].offset",
    "notes*",
    "ledger.*",
    "discovery.*",
)
SPECIALS = ("-inf", "inf")  # the values a numeric column may hold beyond its bounds, each a code of its own
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
    "numeric": ("name", "type", "lower", "upper", "bins", "edges", "integer", "nullable", "format", "special"),
    **{t: ("name", "type", "lower", "upper", "bins", "edges", "nullable", "format", "offset") for t in TEMPORAL_UNIT},
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
    format: str | None = None  # display pattern of a formatted number, or the pattern of a date/datetime/time
    temporal: str | None = None  # "date", "datetime" or "time": the numbers are days, minutes or seconds
    offset: str | None = None  # a datetime with an offset in its pattern is written at this offset
    special: tuple[str, ...] = ()  # "-inf", "inf": point masses of their own, coded after the bins

    kind = "numeric"

    def __post_init__(self):
        if self.temporal is not None or self.format is not None:
            fmt = value_format(self.format, self.temporal, self.offset)  # InputError when malformed
            if self.temporal is not None:
                object.__setattr__(self, "format", fmt.spec())
                object.__setattr__(self, "integer", fmt.integer)
        special = tuple(str(v).strip().lower() for v in self.special)
        if any(v not in SPECIALS for v in special) or len(set(special)) != len(special):
            raise InputError(f"schema column '{self.name}': 'special' lists values of {', '.join(SPECIALS)} only")
        object.__setattr__(self, "special", tuple(v for v in SPECIALS if v in special))
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
    def value_format(self):
        """The column's ``privsample.data.formats`` format (``DateFormat``, ``NumberFormat``) or None."""
        return value_format(self.format, self.temporal, self.offset) if self.format or self.temporal else None

    def parse_constant(self, text: Any) -> float:
        """The number of a value written by a person (a bound, an edge, a constant): text in the column's format
        (a date as ISO 8601 too), or a number."""
        fmt = self.value_format
        if isinstance(text, (datetime.date, datetime.time)) and self.temporal:  # YAML reads ISO dates as dates
            text = text.isoformat()
        if isinstance(text, str) and fmt is not None:
            return fmt.value(text)
        if isinstance(text, bool) or not isinstance(text, (int, float, str)):
            raise InputError(f"column '{self.name}': {text!r} is not a number")
        try:
            value = float(str(text).strip())
        except ValueError:
            raise InputError(f"column '{self.name}': {text!r} is not a number") from None
        if not math.isfinite(value):
            raise InputError(f"column '{self.name}': {text!r} is not a finite number")
        return value

    @property
    def size(self) -> int:
        return int(self.bins) + len(self.special) + self.nullable

    @property
    def special_values(self) -> np.ndarray:
        """The special values (-inf, inf) in code order: code ``bins + i`` is ``special_values[i]``."""
        return np.array([float(v) for v in self.special], dtype=np.float64)

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
        out += list(self.special)
        if self.nullable:
            out.append("<null>")
        return out

    def to_dict(self) -> dict[str, Any]:
        fmt = self.value_format
        show = fmt.text if self.temporal else (lambda x: x)  # dates and times in their own format
        d: dict[str, Any] = {"name": self.name, "type": self.temporal or "numeric"}
        d.update(lower=show(self.lower), upper=show(self.upper))
        if self.edges is not None:
            d["edges"] = [show(x) for x in self.edges]
        else:
            d["bins"] = int(self.bins)
        if self.integer and not self.temporal:
            d["integer"] = True
        if self.nullable:
            d["nullable"] = True
        if self.format is not None:
            d["format"] = self.format
        if self.offset is not None:
            d["offset"] = self.offset
        if self.special:
            d["special"] = list(self.special)
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
        if kind == "numeric" or kind in TEMPORAL_UNIT:
            if "lower" not in c or "upper" not in c:
                raise InputError(f"{source}: {kind} column '{name}' needs 'lower' and 'upper'")
            temporal = kind if kind in TEMPORAL_UNIT else None
            fmt = Numeric(name, 0, 0, format=c.get("format"), temporal=temporal, offset=c.get("offset"))

            def num(v: Any) -> float:  # a bound or edge; ``Numeric`` checks that it is finite
                if fmt.value_format is not None:
                    return fmt.parse_constant(v)
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    raise InputError(f"{source}: column '{name}': {v!r} is not a number")
                try:
                    return float(v)
                except ValueError:
                    raise InputError(f"{source}: column '{name}': {v!r} is not a number") from None

            return Numeric(
                name,
                num(c["lower"]),
                num(c["upper"]),
                c.get("bins"),
                tuple(num(x) for x in c["edges"]) if c.get("edges") is not None else None,
                fmt.integer if temporal else bool(c.get("integer", False)),
                bool(c.get("nullable", False)),
                fmt.format,
                temporal,
                fmt.offset,
                tuple(c.get("special") or ()),
            )
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: column '{name}': {exc}") from None
    raise InputError(f"{source}: column '{name}' has unknown type '{kind}' (categorical|numeric|date|datetime|time)")


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
