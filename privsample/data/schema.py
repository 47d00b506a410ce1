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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from privsample.data.columns import (  # the column kinds, re-exported: callers import them from this module
    DEFAULT_OTHER_LABEL as DEFAULT_OTHER_LABEL,
    MAX_FLOAT_BOUND as MAX_FLOAT_BOUND,
    MAX_INTEGER_BOUND as MAX_INTEGER_BOUND,
    TEXT_KEEP,
    Categorical,
    Column,
    FreeText,
    Identifier,
    Numeric,
    Outside,
)
from privsample.data.forbid import parse_forbid
from privsample.data.formats import TEMPORAL_UNIT
from privsample.data.require_entries import parse_require
from privsample.data.identifiers import parse_format
from privsample.errors import InputError

DEFAULT_NA_VALUES = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")
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
    "columns[].keep",
    "notes*",
    "ledger.*",
    "discovery.*",
)
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
    "id": ("name", "type", "format"),
    "text": ("name", "type", "keep", "categories", "nullable", "other"),
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
        if kind == "id":
            fmt = parse_format(c.get("format", "{uuid}"), f"{source}: id column '{name}'")
            return Identifier(name, str(fmt), i)
        if kind == "text":
            return _text_from_dict(c, name, i, source)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: column '{name}': {exc}") from None
    raise InputError(
        f"{source}: column '{name}' has unknown type '{kind}' (categorical|numeric|date|datetime|time|id|text)"
    )


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
        self.require = parse_require(self.require, self.columns)

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
    def output_columns(self) -> list:
        """The columns of a synthetic table, in order: the synthesized and identifier columns (free text is left
        out)."""
        return [c for c in self.layout() if not isinstance(c, FreeText)]

    @property
    def output_names(self) -> list[str]:
        """The names of ``output_columns``."""
        return [c.name for c in self.output_columns]

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
            parse_require(d.get("require"), cols, source),
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
