"""A schema from a codebook a data steward already has: a Frictionless Table Schema or SDV single-table metadata.

A codebook is a public document, so the schema written from it reads no record and costs no privacy budget; it is
written with ``provenance: user`` (the codebook's lists and ranges are what a person would have written), with a
header that names the file, lists what was guessed (the bins: a codebook gives none), and, where they stood, every
field that could not be mapped, commented out with what a person must fill in. Nothing here reads data.

Frictionless Table Schema (JSON or YAML, a ``fields`` list):

* ``constraints.enum`` -> categorical with the listed values (any type but boolean);
* ``integer``/``number``/``year`` with ``minimum`` and ``maximum`` (or the exclusive forms) -> numeric (``integer``
  for integers and years), 16 equal-width bins; without both bounds: not mapped (bounds are required and must be
  public; none is ever invented);
* ``boolean`` -> categorical of its ``trueValues`` then ``falseValues`` (default ``true``, ``false``);
* ``date``/``datetime``/``time``/``yearmonth`` with both bounds -> date/datetime/time, 16 bins, the ``format``
  (a ``strftime`` pattern, also written ``fmt:%d/%m/%Y``; ``default`` is ``%Y-%m-%d``, ``%Y-%m-%dT%H:%M:%SZ``,
  ``%H:%M:%S``, ``%Y-%m``; ``any`` is read as the default, a guess);
* ``string`` without ``enum`` (free text or an identifier), ``object``, ``array``, ``duration``, ``geopoint``,
  ``geojson``, ``any``: not mapped;
* the ``primaryKey`` fields -> identifiers (``type: id``: fresh ids in the output), of the ``format`` that the
  field's ``constraints.pattern`` describes when it is of the id family (``P-[0-9]{6}`` -> ``P-{6 digits}``), a
  UUID for ``format: uuid`` or when no pattern maps (a guess, listed);
* a field may be missing unless ``constraints.required`` is true (or it is in the primary key): ``nullable``;
  ``missingValues`` (default ``[""]``, the specification's) -> ``na_values``; a field's own ``missingValues`` join
  them (a schema has one list).

SDV metadata (JSON: ``columns`` mapping names to ``sdtype``; or ``{"tables": {...}}`` holding one table; the legacy
``fields`` with ``type``/``subtype``/``format`` alike): SDV lists no categories and no bounds, so only ``boolean``
(categories ``True``, ``False``: how pandas writes booleans) maps in full; ``categorical``, ``numerical``
(``integer`` from an ``Int``/``UInt`` ``computer_representation``) and ``datetime`` (date, datetime or time after
``datetime_format``) are written as templates to fill in; ``id`` and the primary key as identifiers (the
``format`` from ``regex_format`` as for a Frictionless ``pattern``, else a UUID); every other
sdtype (email, phone_number, text, ...) is not mapped. SDV says nothing about missing values: every column is
nullable and the reading's default ``na_values`` apply.
"""

from __future__ import annotations

import datetime
import re
import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privsample.data.columns import Identifier
from privsample.data.encoding import value_text
from privsample.data.formats import DateFormat
from privsample.data.identifiers import FORMAT_HELP, format_from_regex
from privsample.data.schema import SCHEMA_VERSION, Schema
from privsample.errors import InputError

__all__ = ["Codebook", "Unmapped", "read_codebook", "codebook_from_dict", "FILL_IN", "DEFAULT_BINS"]

FILL_IN = "FILL-IN"  # a value a person must give; the schema loader refuses it (not a number, not a list)
DEFAULT_BINS = 16  # equal-width bins of a numeric or date column: a codebook gives none
FRICTIONLESS = "Frictionless Table Schema"
SDV = "SDV metadata"
DEFAULT_ID_FORMAT = "{uuid}"  # an identifier's format when the codebook gives none of the family
FRICTIONLESS_MISSING = ("",)  # the Table Schema specification's default missingValues
DEFAULT_PATTERNS = {
    "date": "%Y-%m-%d",
    "datetime": "%Y-%m-%dT%H:%M:%SZ",  # the specification's form, in UTC
    "time": "%H:%M:%S",
    "yearmonth": "%Y-%m",
}
UNMAPPED_TYPES = {
    "object": "a JSON object",
    "array": "a JSON array",
    "duration": "a duration",
    "geopoint": "a geographic point",
    "geojson": "a GeoJSON object",
    "any": "a field of any type",
}
SDV_SDTYPES = ("categorical", "numerical", "datetime", "boolean", "id")
REMEDY = (
    "remove it from the data, recode it into public categories, or discover the schema privately "
    "(privsample schema DATA --private-epsilon)"
)


@dataclass
class Unmapped:
    """A field of the codebook that is not a column of the written schema: why, and (``template``) the column a
    person completes by replacing every ``FILL-IN``, or None when nothing in a codebook could make one."""

    name: str
    reason: str
    template: dict[str, Any] | None = None


@dataclass
class Codebook:
    """What a codebook says, as schema columns (dicts, validated) and ``Unmapped`` fields, in the codebook's order."""

    source: str
    kind: str  # FRICTIONLESS or SDV
    entries: list[dict[str, Any] | Unmapped]
    na_values: tuple[str, ...] | None = None  # None: the reading's default
    guesses: list[str] = field(default_factory=list)

    @property
    def columns(self) -> list[dict[str, Any]]:
        return [e for e in self.entries if isinstance(e, dict)]

    @property
    def synthesized(self) -> list[dict[str, Any]]:
        """The columns that are synthesized (all but the identifiers): a usable schema needs one."""
        return [c for c in self.columns if c["type"] != "id"]

    @property
    def unmapped(self) -> list[Unmapped]:
        return [e for e in self.entries if isinstance(e, Unmapped)]

    def schema(self) -> Schema:
        """The written schema as a ``Schema`` (``InputError`` when no column to synthesize could be mapped)."""
        return Schema.from_dict(self._top(self.columns), source=f"the schema from {self.source}")

    def _top(self, columns: list) -> dict[str, Any]:
        d: dict[str, Any] = {"version": SCHEMA_VERSION, "provenance": "user"}
        if self.na_values is not None:
            d["na_values"] = list(self.na_values)
        d["columns"] = columns
        return d

    def header(self, comments: bool = True) -> list[str]:
        """The lines that say where the schema came from, what was guessed and what was not mapped (``comments``:
        the YAML file, where the unmapped fields stand commented out; else JSON ``notes``, which list them)."""
        lines = [
            f"Written by 'privsample schema --from' from {self.source} ({self.kind}); no data was read.",
            "provenance: user -- the categories and bounds below are copied from that codebook, a public document.",
            "Check that its lists and ranges were not themselves read off the records (they would not be public).",
        ]
        if self.guesses:
            lines.append("Guessed (not in the codebook; review):")
            lines += [f"  - {g}" for g in self.guesses]
        if self.unmapped and comments:
            lines.append(
                f"Not mapped: {len(self.unmapped)} field(s), commented out where they stand. Fill in public values "
                f"for every {FILL_IN} and uncomment one to use it; a column left out is not synthesized."
            )
        elif self.unmapped:
            lines.append(
                f"Not mapped: {len(self.unmapped)} field(s), listed below. Add one to 'columns' with public values "
                "to use it; a column left out is not synthesized."
            )
        if not self.columns:
            lines.append("No field could be mapped: this file cannot be used until at least one column is filled in.")
        elif not self.synthesized:
            lines.append(
                "Only identifiers could be mapped: this file cannot be used until at least one column to synthesize "
                "is filled in."
            )
        return lines

    def yaml_text(self) -> str:
        import yaml

        def dump(obj) -> str:
            return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True)

        def comment(line: str, indent: str = "") -> str:
            return "".join(f"# {t}\n" for t in textwrap.wrap(line, 116, subsequent_indent=indent))

        text = "".join(comment(line, "    " if line.startswith("  - ") else "") for line in self.header())
        top = self._top([])
        del top["columns"]
        text += dump(top) + "columns:\n"
        for e in self.entries:
            if isinstance(e, dict):
                text += dump([e])
                continue
            text += comment(f"NOT MAPPED '{e.name}': {e.reason}", "  ")
            if e.template is not None:
                text += "".join(f"# {line}\n" for line in dump([e.template]).splitlines())
        return text

    def json_text(self) -> str:
        notes = self.header(comments=False)
        notes += [f"not mapped '{u.name}': {u.reason}" for u in self.unmapped]
        return json.dumps({**self._top(self.columns), "notes": notes}, indent=2, ensure_ascii=False)

    def save(self, path: str | Path) -> None:
        """Write YAML (``.yaml``/``.yml``, with comments) or JSON (the header in ``notes``), atomically."""
        from privsample.io import atomic_write_text

        path = Path(path)
        if self.synthesized:
            self.schema()  # the file written is read back as it stands (InputError before anything is written)
        yaml_out = path.suffix.lower() in (".yaml", ".yml")
        atomic_write_text(path, self.yaml_text() if yaml_out else self.json_text())


# -- reading ------------------------------------------------------------------------------------------------------
def read_codebook(path: str | Path) -> Codebook:
    """The ``Codebook`` of a Frictionless Table Schema (JSON/YAML) or SDV metadata file; ``InputError`` (one line)
    when the file is missing, does not parse, or is neither."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"codebook file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
        if path.suffix.lower() == ".json":
            d = json.loads(text)
        else:
            import yaml

            d = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parse failure is bad input
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(f"codebook {path}: cannot parse ({type(exc).__name__}: {first})") from None
    return codebook_from_dict(d, str(path))


def codebook_from_dict(d: Any, source: str = "codebook") -> Codebook:
    """The ``Codebook`` of a parsed Frictionless Table Schema or SDV metadata mapping."""
    book = _codebook(d, source)
    names = [e.name if isinstance(e, Unmapped) else e["name"] for e in book.entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"codebook {source} lists field(s) more than once: {', '.join(twice)}")
    return book


def _codebook(d: Any, source: str) -> Codebook:
    if not isinstance(d, dict):
        raise InputError(f"codebook {source}: expected a mapping (a Frictionless Table Schema or SDV metadata)")
    if isinstance(d.get("fields"), list):
        return _frictionless(d, source)
    if isinstance(d.get("columns"), dict) or isinstance(d.get("fields"), dict):
        return _sdv_table(d, source)
    if isinstance(d.get("tables"), dict):
        tables = d["tables"]
        if len(tables) != 1:
            names = ", ".join(map(str, tables)) or "none"
            raise InputError(
                f"codebook {source}: SDV metadata with {len(tables)} tables ({names}); privsample reads one table: "
                "save that table's metadata alone"
            )
        (table,) = tables.values()
        if not isinstance(table, dict):
            raise InputError(f"codebook {source}: the table of its 'tables' must be a mapping")
        return _sdv_table(table, source)
    if isinstance(d.get("columns"), list) and "provenance" in d:
        raise InputError(f"codebook {source} is already a privsample schema: pass it to --schema")
    if "resources" in d:
        raise InputError(
            f"codebook {source} is a Data Package: save the 'schema' of the resource to synthesize in a file of "
            "its own and pass that"
        )
    raise InputError(
        f"codebook {source} is neither a Frictionless Table Schema (a 'fields' list) nor SDV metadata (a "
        "'columns' mapping, or 'tables' with one table)"
    )


def _mapped(col: dict[str, Any], source: str) -> dict[str, Any]:
    """``col`` as the schema writes it (bounds in the column's format, bins capped); ``InputError`` if refused."""
    sch = Schema.from_dict({"provenance": "user", "columns": [col]}, source=f"codebook {source}")
    out = sch.columns[0].to_dict()
    for key in ("lower", "upper"):  # 3.0 -> 3 for readability
        if isinstance(out.get(key), float) and out[key].is_integer() and out.get("integer"):
            out[key] = int(out[key])
    return out


def _identifier(name: str, source: str, guesses: list[str], pattern: Any = None, uuid: bool = False) -> dict:
    """An identifier column (``type: id``): its output gets fresh ids, drawn independently of the data. The format
    is the one the codebook's ``pattern`` (a regular expression) describes when it is of the id family, a UUID
    when the codebook says so (``uuid``), else the default (a UUID, noted as a guess). Validated on its own (a
    schema of it alone would have no column to synthesize)."""
    fmt = format_from_regex(pattern)
    if fmt is None and not uuid:
        said = f"its pattern {pattern!r} is no format of the id family" if pattern else "it gives no id pattern"
        guesses.append(
            f"format of '{name}': {said}; fresh ids are written as {DEFAULT_ID_FORMAT}: give the data's form "
            f"({FORMAT_HELP}) if they look otherwise"
        )
    try:
        return Identifier(name, str(fmt or DEFAULT_ID_FORMAT)).to_dict()
    except InputError as exc:  # cannot happen for the formats above; one line all the same
        raise InputError(f"codebook {source}: field '{name}': {exc}") from None


def _text(v: Any) -> str:
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    return value_text(v)


# -- Frictionless Table Schema ---------------------------------------------------------------------------------------
def _frictionless(d: dict, source: str) -> Codebook:
    missing = d.get("missingValues", list(FRICTIONLESS_MISSING))
    if not d["fields"]:
        raise InputError(f"codebook {source}: the Table Schema lists no fields")
    if not isinstance(missing, list):
        raise InputError(f"codebook {source}: 'missingValues' must be a list of texts")
    na = [str(v) for v in missing]
    pk = d.get("primaryKey") or []
    pk = [pk] if isinstance(pk, str) else list(pk) if isinstance(pk, list) else []
    book = Codebook(source, FRICTIONLESS, [], None)
    binned: list[str] = []
    for i, f in enumerate(d["fields"]):
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not f["name"]:
            raise InputError(f"codebook {source}: field #{i + 1} needs a 'name'")
        own = f.get("missingValues")
        if isinstance(own, list) and any(str(v) not in na for v in own):
            added = [str(v) for v in own if str(v) not in na]
            na += added
            book.guesses.append(
                f"na_values: field '{f['name']}' reads {', '.join(map(repr, added))} as missing; a schema has one "
                "list, so every column now does"
            )
        entry = _frictionless_field(f, f["name"] in pk, d, source, book.guesses)
        if isinstance(entry, dict) and "bins" in entry and "edges" not in entry:
            binned.append(entry["name"])
        book.entries.append(entry)
    if binned:
        book.guesses.insert(
            0,
            f"bins: {DEFAULT_BINS} equal-width bins (fewer for short integer ranges) for {', '.join(binned)}; choose "
            "'bins' or 'edges' that suit the use",
        )
    book.na_values = tuple(na)
    return book


def _fmt_pattern(f: dict, kind: str, guesses: list[str]) -> str:
    fmt = f.get("format", "default")
    fmt = "default" if fmt is None else str(fmt)
    if fmt.startswith("fmt:"):
        fmt = fmt[4:]
    name = f["name"]
    if fmt == "default":
        pattern = DEFAULT_PATTERNS[kind]
        if kind == "datetime":
            guesses.append(
                f"format of '{name}': the default datetime form read as {pattern} (UTC, with a Z); change it if "
                "the data write no Z, or an offset (%:z)"
            )
        return pattern
    if fmt == "any":
        pattern = DEFAULT_PATTERNS[kind]
        guesses.append(f"format of '{name}': 'any' in the codebook; read as {pattern}: give the data's pattern")
        return pattern
    return fmt


def _bounds(c: dict, integer: bool) -> tuple[Any, Any]:
    lo, hi = c.get("minimum"), c.get("maximum")
    if lo is None and c.get("exclusiveMinimum") is not None:
        lo = c["exclusiveMinimum"] + 1 if integer and isinstance(c["exclusiveMinimum"], int) else c["exclusiveMinimum"]
    if hi is None and c.get("exclusiveMaximum") is not None:
        hi = c["exclusiveMaximum"] - 1 if integer and isinstance(c["exclusiveMaximum"], int) else c["exclusiveMaximum"]
    return lo, hi


def _frictionless_field(f: dict, key: bool, d: dict, source: str, guesses: list[str]) -> dict[str, Any] | Unmapped:
    name = f["name"]
    kind = str(f.get("type") or "string")
    c = f.get("constraints") or {}
    if not isinstance(c, dict):
        raise InputError(f"codebook {source}: field '{name}': 'constraints' must be a mapping")
    nullable = not (key or c.get("required") is True)
    if key:
        return _identifier(name, source, guesses, c.get("pattern"), uuid=f.get("format") == "uuid")
    try:
        if kind == "boolean":
            true = f.get("trueValues", d.get("trueValues", ["true"]))
            false = f.get("falseValues", d.get("falseValues", ["false"]))
            if not isinstance(true, list) or not isinstance(false, list):
                return Unmapped(name, "'trueValues' and 'falseValues' must be lists")
            cats = [_text(v) for v in [*true, *false]]
            return _mapped({"name": name, "type": "categorical", "categories": cats, "nullable": nullable}, source)
        enum = c.get("enum")
        if enum is not None:
            if not isinstance(enum, list):
                return Unmapped(name, "'enum' is not a list")
            cats = [_text(v) for v in enum]
            return _mapped({"name": name, "type": "categorical", "categories": cats, "nullable": nullable}, source)
        if kind in ("integer", "number", "year"):
            integer = kind != "number"
            lo, hi = _bounds(c, integer)
            col = {"name": name, "type": "numeric", "lower": lo, "upper": hi, "bins": DEFAULT_BINS}
            col.update({"integer": True} if integer else {})
            col.update({"nullable": True} if nullable else {})
            if lo is None or hi is None:
                template = {**col, "lower": FILL_IN if lo is None else lo, "upper": FILL_IN if hi is None else hi}
                return Unmapped(
                    name,
                    f"{kind} without {'minimum and maximum' if lo is None and hi is None else 'both bounds'} in the "
                    "codebook: a numeric column needs public bounds (none is invented)",
                    template,
                )
            _number_format(f, col, integer, guesses)
            return _mapped(col, source)
        if kind in DEFAULT_PATTERNS:
            pattern = _fmt_pattern(f, kind, guesses)
            target = "date" if kind == "yearmonth" else kind
            lo, hi = _bounds(c, False)
            col = {"name": name, "type": target, "format": pattern, "lower": lo, "upper": hi, "bins": DEFAULT_BINS}
            col.update({"nullable": True} if nullable else {})
            if lo is None or hi is None:
                template = {**col, "lower": _text(lo) if lo is not None else FILL_IN}
                template["upper"] = _text(hi) if hi is not None else FILL_IN
                return Unmapped(
                    name,
                    f"{kind} without minimum and maximum in the codebook: a {target} column needs public bounds",
                    template,
                )
            col["lower"], col["upper"] = _text(lo), _text(hi)
            offset = re.search(r"(Z|[+-]\d{2}:?\d{2})$", col["lower"]) if "%z" in pattern or "%:z" in pattern else None
            if offset:
                col["offset"] = offset.group(1)  # the bounds' offset (public): the one the output is written at
            return _mapped(col, source)
    except InputError as exc:
        return Unmapped(name, f"refused as written in the codebook ({_reason(exc)})")
    if kind == "string":
        what = f"string of format {f['format']}" if f.get("format") not in (None, "default") else "string"
        return Unmapped(name, f"{what} without 'enum': free text or an identifier; {REMEDY}")
    return Unmapped(name, f"{UNMAPPED_TYPES.get(kind, 'a field of type ' + repr(kind))}: {REMEDY}")


def _number_format(f: dict, col: dict, integer: bool, guesses: list[str]) -> None:
    """A display ``format`` from the codebook's public separators (``groupChar``, ``decimalChar``), and a guess
    noted for the reviewer when it gives them or says the numbers are not bare."""
    extra = sorted({"decimalChar", "groupChar"} & set(f)) + (["bareNumber"] if f.get("bareNumber") is False else [])
    if not extra:
        return
    group, decimal = str(f.get("groupChar", "")), str(f.get("decimalChar", "."))
    if group or decimal != ".":
        col["format"] = ("#" + group + "##0" if group else "0") + ("" if integer else decimal + "00")
    guesses.append(
        f"format of '{col['name']}': the codebook gives {', '.join(extra)}"
        + (f"; written as '{col['format']}' (decimals guessed)" if "format" in col else "")
        + "; add the symbols of the data to its display 'format' (e.g. '$#,##0.00', '0.0%') if it shows any"
    )


def _reason(exc: InputError) -> str:
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("codebook ") and ": " in text else text


# -- SDV metadata ----------------------------------------------------------------------------------------------------
def _sdv_table(t: dict, source: str) -> Codebook:
    cols = t.get("columns") if isinstance(t.get("columns"), dict) else t.get("fields")
    if not isinstance(cols, dict) or not cols:
        raise InputError(f"codebook {source}: SDV metadata needs a 'columns' mapping of column names")
    pk = t.get("primary_key") or []
    pk = [pk] if isinstance(pk, str) else list(pk) if isinstance(pk, (list, tuple)) else []
    book = Codebook(source, SDV, [], None)
    for name, meta in cols.items():
        if not isinstance(meta, dict):
            raise InputError(f"codebook {source}: column '{name}' must be a mapping (with its 'sdtype')")
        book.entries.append(_sdv_column(str(name), meta, str(name) in pk, source, book.guesses))
    book.guesses.append("nullable: SDV metadata does not say whether a column may be missing; every column is nullable")
    return book


def _sdv_column(name: str, m: dict, key: bool, source: str, guesses: list[str]) -> dict[str, Any] | Unmapped:
    sdtype = m.get("sdtype", m.get("type"))
    if sdtype == "numerical" and "subtype" in m:
        integer = m["subtype"] == "integer"
    else:
        integer = str(m.get("computer_representation", "")).lower().startswith(("int", "uint"))
    if key or sdtype == "id":
        return _identifier(name, source, guesses, m.get("regex_format"))
    if sdtype == "boolean":
        return _mapped({"name": name, "type": "categorical", "categories": ["True", "False"], "nullable": True}, source)
    if sdtype == "categorical":
        return Unmapped(
            name,
            "categorical: SDV metadata lists no categories; list the public ones",
            {"name": name, "type": "categorical", "categories": FILL_IN, "nullable": True},
        )
    if sdtype == "numerical":
        col = {"name": name, "type": "numeric", "lower": FILL_IN, "upper": FILL_IN, "bins": DEFAULT_BINS}
        col.update({"integer": True} if integer else {})
        col["nullable"] = True
        return Unmapped(name, "numerical: SDV metadata gives no bounds; give public ones", col)
    if sdtype == "datetime":
        pattern = m.get("datetime_format", m.get("format"))
        kind, note = "datetime", "; no datetime_format, so ISO 8601 is assumed"
        if pattern:
            try:
                kind, note = DateFormat(str(pattern)).kind, ""
            except InputError as exc:
                return Unmapped(name, f"datetime: {exc}")
        col = {"name": name, "type": kind}
        col.update({"format": str(pattern)} if pattern else {})
        col.update(lower=FILL_IN, upper=FILL_IN, bins=DEFAULT_BINS, nullable=True)
        return Unmapped(name, f"datetime: SDV metadata gives no bounds; give public ones{note}", col)
    return Unmapped(name, f"sdtype {sdtype!r} (personal data or free text): {REMEDY}")
