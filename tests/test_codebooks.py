"""Schemas from codebooks (``privsample schema --from``): Frictionless Table Schemas and SDV metadata, JSON and
YAML; every mapping rule, the fields that cannot be mapped, and the command line end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from privsample.data.codebook import DEFAULT_BINS, FILL_IN, Unmapped, codebook_from_dict, read_codebook
from privsample.data.schema import Schema
from privsample.errors import InputError
from tests.cli import run


def field_of(field: dict, **top) -> dict | Unmapped:
    """The one entry a Frictionless field maps to."""
    (entry,) = codebook_from_dict({"fields": [field], **top}, "t.json").entries
    return entry


# -- Frictionless: every mapping rule -------------------------------------------------------------------------------
FRICTIONLESS_RULES = [
    (  # integer with bounds -> integer numeric; required -> not nullable
        {"name": "age", "type": "integer", "constraints": {"minimum": 0, "maximum": 120, "required": True}},
        {"name": "age", "type": "numeric", "lower": 0, "upper": 120, "bins": DEFAULT_BINS, "integer": True},
    ),
    (  # number with bounds -> numeric; may be missing -> nullable
        {"name": "score", "type": "number", "constraints": {"minimum": 0, "maximum": 1}},
        {"name": "score", "type": "numeric", "lower": 0.0, "upper": 1.0, "bins": DEFAULT_BINS, "nullable": True},
    ),
    (  # a short integer range: one bin per integer
        {"name": "likert", "type": "integer", "constraints": {"minimum": 1, "maximum": 5, "required": True}},
        {"name": "likert", "type": "numeric", "lower": 1, "upper": 5, "bins": 5, "integer": True},
    ),
    (  # exclusive bounds of an integer: the integers inside
        {
            "name": "n",
            "type": "integer",
            "constraints": {"exclusiveMinimum": 0, "exclusiveMaximum": 10, "required": True},
        },
        {"name": "n", "type": "numeric", "lower": 1, "upper": 9, "bins": 9, "integer": True},
    ),
    (  # year -> integer numeric
        {"name": "yr", "type": "year", "constraints": {"minimum": 1990, "maximum": 2020, "required": True}},
        {"name": "yr", "type": "numeric", "lower": 1990, "upper": 2020, "bins": DEFAULT_BINS, "integer": True},
    ),
    (  # string enum -> categorical
        {"name": "sex", "type": "string", "constraints": {"enum": ["F", "M"], "required": True}},
        {"name": "sex", "type": "categorical", "categories": ["F", "M"]},
    ),
    (  # integer enum -> categorical of the values as the data compare them
        {"name": "level", "type": "integer", "constraints": {"enum": [1, 2, 3.0]}},
        {"name": "level", "type": "categorical", "categories": ["1", "2", "3"], "nullable": True},
    ),
    (  # a field without a type is a string: its enum -> categorical
        {"name": "c", "constraints": {"enum": ["x", "y"], "required": True}},
        {"name": "c", "type": "categorical", "categories": ["x", "y"]},
    ),
    (  # boolean -> categorical of trueValues, falseValues
        {"name": "smoker", "type": "boolean", "trueValues": ["yes", "Y"], "falseValues": ["no"]},
        {"name": "smoker", "type": "categorical", "categories": ["yes", "Y", "no"], "nullable": True},
    ),
    (  # boolean without them -> true, false
        {"name": "b", "type": "boolean", "constraints": {"required": True}},
        {"name": "b", "type": "categorical", "categories": ["true", "false"]},
    ),
    (  # date with a pattern and bounds in it
        {
            "name": "born",
            "type": "date",
            "format": "%d/%m/%Y",
            "constraints": {"minimum": "01/01/1900", "maximum": "31/12/2020", "required": True},
        },
        {
            "name": "born",
            "type": "date",
            "lower": "01/01/1900",
            "upper": "31/12/2020",
            "bins": 16,
            "format": "%d/%m/%Y",
        },
    ),
    (  # the older fmt: prefix
        {
            "name": "d",
            "type": "date",
            "format": "fmt:%Y/%m/%d",
            "constraints": {"minimum": "2020/01/01", "maximum": "2020/12/31"},
        },
        {
            "name": "d",
            "type": "date",
            "lower": "2020/01/01",
            "upper": "2020/12/31",
            "bins": 16,
            "nullable": True,
            "format": "%Y/%m/%d",
        },
    ),
    (  # date, default format: ISO
        {
            "name": "d",
            "type": "date",
            "constraints": {"minimum": "2020-01-01", "maximum": "2020-12-31", "required": True},
        },
        {"name": "d", "type": "date", "lower": "2020-01-01", "upper": "2020-12-31", "bins": 16, "format": "%Y-%m-%d"},
    ),
    (  # datetime, default format: the specification's UTC form
        {
            "name": "t",
            "type": "datetime",
            "constraints": {"minimum": "2020-01-01T00:00:00Z", "maximum": "2021-01-01T00:00:00Z", "required": True},
        },
        {
            "name": "t",
            "type": "datetime",
            "lower": "2020-01-01T00:00:00Z",
            "upper": "2021-01-01T00:00:00Z",
            "bins": 16,
            "format": "%Y-%m-%dT%H:%M:%SZ",
        },
    ),
    (  # time
        {"name": "at", "type": "time", "constraints": {"minimum": "08:00:00", "maximum": "18:00:00", "required": True}},
        {"name": "at", "type": "time", "lower": "08:00:00", "upper": "18:00:00", "bins": 16, "format": "%H:%M:%S"},
    ),
    (  # yearmonth -> a date written %Y-%m
        {
            "name": "ym",
            "type": "yearmonth",
            "constraints": {"minimum": "2020-01", "maximum": "2020-12", "required": True},
        },
        {"name": "ym", "type": "date", "lower": "2020-01", "upper": "2020-12", "bins": 16, "format": "%Y-%m"},
    ),
]


@pytest.mark.parametrize("field,column", FRICTIONLESS_RULES, ids=[f[0]["name"] for f in FRICTIONLESS_RULES])
def test_frictionless_rules(field, column):
    entry = field_of(field)
    assert entry == column
    Schema.from_dict({"provenance": "user", "columns": [entry]})  # the loader reads it


UNMAPPED = [
    ({"name": "income", "type": "number"}, "without minimum and maximum", True),
    ({"name": "n", "type": "integer", "constraints": {"minimum": 0}}, "without both bounds", True),
    ({"name": "d", "type": "date"}, "needs public bounds", True),
    ({"name": "note", "type": "string"}, "free text or an identifier", False),
    ({"name": "mail", "type": "string", "format": "email"}, "string of format email", False),
    ({"name": "loc", "type": "geopoint"}, "geographic point", False),
    ({"name": "o", "type": "object"}, "JSON object", False),
    ({"name": "w", "type": "weird"}, "type 'weird'", False),
    ({"name": "tv", "type": "boolean", "trueValues": "yes"}, "must be lists", False),
    ({"name": "bad", "type": "integer", "constraints": {"minimum": 5, "maximum": 1}}, "lower <= upper", False),
    (
        {"name": "d2", "type": "date", "constraints": {"minimum": "x", "maximum": "2020-01-01"}},
        "'x' is not a date",
        False,
    ),
]


@pytest.mark.parametrize("field,reason,template", UNMAPPED, ids=[u[0]["name"] for u in UNMAPPED])
def test_frictionless_unmapped(field, reason, template):
    entry = field_of(field)
    assert isinstance(entry, Unmapped) and entry.name == field["name"]
    assert reason in entry.reason
    assert (entry.template is not None) == template
    if "free text" in reason or "geographic" in reason:
        assert "--private-epsilon" in entry.reason


def test_numbers_without_bounds_get_none_invented():
    entry = field_of({"name": "n", "type": "integer", "constraints": {"minimum": 0, "required": True}})
    assert entry.template == {
        "name": "n",
        "type": "numeric",
        "lower": 0,
        "upper": FILL_IN,
        "bins": DEFAULT_BINS,
        "integer": True,
    }
    with pytest.raises(InputError, match="'FILL-IN' is not a number"):  # uncommented as is: refused
        Schema.from_dict({"provenance": "user", "columns": [entry.template]})


def test_missing_values_and_nullable():
    fields = [
        {"name": "a", "constraints": {"enum": ["x"]}},
        {"name": "b", "constraints": {"enum": ["x"], "required": True}},
    ]
    book = codebook_from_dict({"fields": fields}, "t.json")
    assert book.na_values == ("",)  # the specification's default, not the reader's longer list
    assert [c.get("nullable", False) for c in book.columns] == [True, False]
    book = codebook_from_dict({"fields": fields, "missingValues": ["", "-99"]}, "t.json")
    assert book.na_values == ("", "-99") and book.schema().na_values == ("", "-99")
    fields[0]["missingValues"] = ["", "n/a"]  # a field's own list joins the schema's (one list), noted as a guess
    book = codebook_from_dict({"fields": fields}, "t.json")
    assert book.na_values == ("", "n/a") and any("'n/a'" in g for g in book.guesses)


def test_primary_key_is_an_identifier():
    book = codebook_from_dict(
        {
            "fields": [{"name": "pid", "type": "integer", "constraints": {"minimum": 1, "maximum": 9}}],
            "primaryKey": ["pid"],
        },
        "t.json",
    )
    (entry,) = book.entries
    assert entry == {"name": "pid", "type": "id", "format": "{uuid}"}  # no pattern: the default, noted as a guess
    assert any(g.startswith("format of 'pid': it gives no id pattern") for g in book.guesses)
    assert "- name: pid\n  type: id\n  format: '{uuid}'\n" in book.yaml_text()
    assert "Only identifiers could be mapped" in book.yaml_text()
    with pytest.raises(InputError, match="no column to synthesize"):
        book.schema()


@pytest.mark.parametrize(
    "pattern,fmt,guessed",
    [
        ("P-[0-9]{6}", "P-{6 digits}", False),
        ("^P-\\d{6}$", "P-{6 digits}", False),
        ("INV\\/[0-9]{8}\\/A", "INV/{8 digits}/A", False),
        ("[0-9a-f]{16}", "{16 hex}", False),
        ("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{uuid}", False),
        ("[A-Z]{2}[0-9]{4}", "{uuid}", True),  # not of the family: the default
        ("P [0-9]{6}", "{uuid}", True),  # a space is no literal of a format
        ("P-[0-9]{6,8}", "{uuid}", True),
    ],
)
def test_primary_key_pattern_gives_the_id_format(pattern, fmt, guessed):
    f = {"name": "k", "type": "string", "constraints": {"pattern": pattern}}
    book = codebook_from_dict({"fields": [f], "primaryKey": "k"}, "t.json")
    assert book.entries == [{"name": "k", "type": "id", "format": fmt}]
    assert any(g.startswith("format of 'k'") for g in book.guesses) == guessed
    sdv = codebook_from_dict({"columns": {"k": {"sdtype": "id", "regex_format": pattern}}}, "m.json")
    assert sdv.entries == [{"name": "k", "type": "id", "format": fmt}]
    uuid = codebook_from_dict({"fields": [{"name": "k", "format": "uuid"}], "primaryKey": "k"}, "t.json")
    assert uuid.entries == [{"name": "k", "type": "id", "format": "{uuid}"}] and not uuid.guesses


def test_guesses_are_listed():
    fields = [
        {"name": "a", "type": "integer", "constraints": {"minimum": 0, "maximum": 100}},
        {
            "name": "t",
            "type": "datetime",
            "constraints": {"minimum": "2020-01-01T00:00:00Z", "maximum": "2020-02-01T00:00:00Z"},
        },
        {
            "name": "d",
            "type": "date",
            "format": "any",
            "constraints": {"minimum": "2020-01-01", "maximum": "2020-02-01"},
        },
        {"name": "x", "type": "number", "decimalChar": ",", "constraints": {"minimum": 0, "maximum": 1}},
    ]
    guesses = codebook_from_dict({"fields": fields}, "t.json").guesses
    text = "\n".join(guesses)
    assert guesses[0].startswith(f"bins: {DEFAULT_BINS} equal-width bins") and "a, t, d, x" in guesses[0]
    assert (
        "'t': the default datetime form" in text
        and "'d': 'any'" in text
        and "'x': the codebook gives decimalChar" in text
    )


def test_separators_and_offsets_of_the_codebook_are_used():
    x = field_of({"name": "x", "type": "number", "groupChar": ",", "constraints": {"minimum": 0, "maximum": 9}})
    assert x["format"] == "#,##0.00" and Schema.from_dict({"provenance": "user", "columns": [x]})["x"].format
    y = field_of({"name": "y", "type": "number", "decimalChar": ",", "constraints": {"minimum": 0, "maximum": 9}})
    assert y["format"] == "0,00"
    t = field_of(
        {
            "name": "t",
            "type": "datetime",
            "format": "%Y-%m-%dT%H:%M:%S%z",
            "constraints": {"minimum": "2020-01-01T00:00:00+01:00", "maximum": "2021-01-01T00:00:00+01:00"},
        }
    )
    assert t["offset"] == "+01:00"
    assert Schema.from_dict({"provenance": "user", "columns": [t]})["t"].offset == "+01:00"


def frictionless_codebook() -> dict:
    return {
        "fields": [
            {"name": "id", "type": "string", "constraints": {"pattern": "P-[0-9]{6}"}},
            {"name": "age", "type": "integer", "constraints": {"minimum": 18, "maximum": 90, "required": True}},
            {"name": "sex", "type": "string", "constraints": {"enum": ["F", "M"], "required": True}},
            {"name": "smoker", "type": "boolean", "trueValues": ["yes"], "falseValues": ["no"]},
            {"name": "income", "type": "number"},
            {"name": "visit", "type": "date", "constraints": {"minimum": "2020-01-01", "maximum": "2020-12-31"}},
            {"name": "comment", "type": "string"},
        ],
        "primaryKey": "id",
    }


def test_json_and_yaml_codebooks_agree(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(frictionless_codebook()))
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(frictionless_codebook()).replace("'2020-01-01'", "2020-01-01"))
    assert yaml.safe_load((tmp_path / "t.yaml").read_text())["fields"][5]["constraints"]["minimum"].year == 2020
    a, b = read_codebook(tmp_path / "t.json"), read_codebook(tmp_path / "t.yaml")
    assert a.entries == b.entries and a.na_values == b.na_values
    assert [c["name"] for c in a.columns] == ["id", "age", "sex", "smoker", "visit"]
    assert a.columns[0] == {"name": "id", "type": "id", "format": "P-{6 digits}"}
    assert [u.name for u in a.unmapped] == ["income", "comment"]


def test_yaml_file_comments_and_reads_back(tmp_path):
    book = codebook_from_dict(frictionless_codebook(), "t.json")
    book.save(tmp_path / "s.yaml")
    text = (tmp_path / "s.yaml").read_text()
    assert text.startswith("# Written by 'privsample schema --from' from t.json (Frictionless Table Schema)")
    assert "provenance: user" in text and "# Guessed (not in the codebook; review):" in text
    for u in book.unmapped:
        assert f"# NOT MAPPED '{u.name}': " in text
    assert "# - name: income\n#   type: numeric\n#   lower: FILL-IN\n#   upper: FILL-IN\n" in text
    s = Schema.load(tmp_path / "s.yaml")
    assert s.provenance == "user" and s.all_names == [c["name"] for c in book.columns]
    assert s.names == ["age", "sex", "smoker", "visit"] and str(s.identifiers[0].id_format) == "P-{6 digits}"
    assert s.na_values == ("",)
    # a person fills in the bounds and uncomments the template: it is read where it stood
    lines = text.splitlines()
    start = lines.index("# - name: income")
    end = start + 1
    while lines[end].startswith("#   "):
        end += 1
    lines[start:end] = [line[2:] for line in lines[start:end]]
    edited = "\n".join(lines).replace("lower: FILL-IN", "lower: 0").replace("upper: FILL-IN", "upper: 250000")
    (tmp_path / "filled.yaml").write_text(edited)
    s = Schema.load(tmp_path / "filled.yaml")
    assert s.all_names == ["id", "age", "sex", "smoker", "income", "visit"] and s["income"].upper == 250000


def test_json_output_has_notes(tmp_path):
    book = codebook_from_dict(frictionless_codebook(), "t.json")
    book.save(tmp_path / "s.json")
    d = json.loads((tmp_path / "s.json").read_text())
    assert d["provenance"] == "user" and d["na_values"] == [""]
    assert any(n.startswith("not mapped 'income': ") for n in d["notes"])
    assert Schema.load(tmp_path / "s.json").all_names == ["id", "age", "sex", "smoker", "visit"]


# -- SDV -------------------------------------------------------------------------------------------------------------
SDV_COLUMNS = {
    "user_id": {"sdtype": "id", "regex_format": "U_[0-9]{3}"},
    "age": {"sdtype": "numerical", "computer_representation": "Int64"},
    "amount": {"sdtype": "numerical", "computer_representation": "Float"},
    "start": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
    "stamp": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d %H:%M:%S"},
    "when": {"sdtype": "datetime"},
    "gender": {"sdtype": "categorical"},
    "active": {"sdtype": "boolean"},
    "email": {"sdtype": "email", "pii": True},
}


def test_sdv_single_table():
    book = codebook_from_dict({"METADATA_SPEC_VERSION": "SINGLE_TABLE_V1", "columns": SDV_COLUMNS}, "m.json")
    by = {e.name if isinstance(e, Unmapped) else e["name"]: e for e in book.entries}
    assert by["active"] == {"name": "active", "type": "categorical", "categories": ["True", "False"], "nullable": True}
    assert by["age"].template["integer"] is True and by["age"].template["lower"] == FILL_IN
    assert "integer" not in by["amount"].template and "no bounds" in by["amount"].reason
    assert by["start"].template["type"] == "date" and by["start"].template["format"] == "%Y-%m-%d"
    assert by["stamp"].template["type"] == "datetime"
    assert "format" not in by["when"].template and "ISO 8601 is assumed" in by["when"].reason
    assert by["gender"].template["categories"] == FILL_IN and "lists no categories" in by["gender"].reason
    assert by["email"].template is None and "'email'" in by["email"].reason
    assert by["user_id"] == {"name": "user_id", "type": "id", "format": "U_{3 digits}"}
    assert book.na_values is None and any("nullable" in g for g in book.guesses)
    s = book.schema()
    assert s.names == ["active"] and s.na_values == Schema([s.columns[0]]).na_values
    with pytest.raises(InputError, match="categories"):  # a template uncommented as is: refused
        Schema.from_dict({"provenance": "user", "columns": [by["gender"].template]})


def test_sdv_primary_key_and_legacy_tables():
    meta = {
        "tables": {
            "users": {
                "primary_key": "age",
                "fields": {
                    "age": {"type": "numerical", "subtype": "integer"},
                    "ok": {"type": "boolean"},
                    "n": {"type": "numerical", "subtype": "float"},
                    "day": {"type": "datetime", "format": "%d.%m.%Y"},
                },
            }
        }
    }
    book = codebook_from_dict(meta, "m.json")
    by = {e.name if isinstance(e, Unmapped) else e["name"]: e for e in book.entries}
    assert by["age"] == {"name": "age", "type": "id", "format": "{uuid}"}
    assert by["ok"]["type"] == "categorical"
    assert "integer" not in by["n"].template
    assert by["day"].template["format"] == "%d.%m.%Y" and by["day"].template["type"] == "date"
    multi = {"METADATA_SPEC_VERSION": "MULTI_TABLE_V1", "tables": {"t": {"columns": {"b": {"sdtype": "boolean"}}}}}
    assert codebook_from_dict(multi, "m.json").schema().names == ["b"]


def test_sdv_nothing_mapped_writes_a_template(tmp_path):
    book = codebook_from_dict({"columns": {"g": {"sdtype": "categorical"}}}, "m.json")
    book.save(tmp_path / "s.yaml")
    text = (tmp_path / "s.yaml").read_text()
    assert "No field could be mapped" in text and "# - name: g" in text
    with pytest.raises(InputError, match="'columns' list"):
        Schema.load(tmp_path / "s.yaml")


# -- bad codebooks ---------------------------------------------------------------------------------------------------
BAD = [
    ("list.json", "[1, 2]", "expected a mapping"),
    ("neither.json", '{"x": 1}', "neither a Frictionless Table Schema"),
    ("broken.json", '{"fields": [', "cannot parse (JSONDecodeError"),
    ("broken.yaml", "fields: [a, b\n", "cannot parse"),
    ("noname.json", '{"fields": [{"type": "integer"}]}', "field #1 needs a 'name'"),
    ("constraints.json", '{"fields": [{"name": "a", "constraints": [1]}]}', "'constraints' must be a mapping"),
    ("missing.json", '{"fields": [{"name": "a"}], "missingValues": ""}', "'missingValues' must be a list"),
    ("two.json", '{"tables": {"a": {"columns": {}}, "b": {"columns": {}}}}', "2 tables (a, b)"),
    ("sdvempty.json", '{"columns": {}}', "needs a 'columns' mapping"),
    ("nofields.json", '{"fields": []}', "lists no fields"),
    ("sdvcol.json", '{"columns": {"a": "categorical"}}', "column 'a' must be a mapping"),
    ("schema.json", '{"provenance": "user", "columns": []}', "already a privsample schema"),
    ("twice.json", '{"fields": [{"name": "a"}, {"name": "a", "type": "boolean"}]}', "more than once: a"),
    ("package.json", '{"resources": [{"schema": {"fields": []}}]}', "is a Data Package"),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_codebooks_exit_2_with_one_line(name, text, message, tmp_path, capsys):
    (tmp_path / name).write_text(text)
    code, err = run(["schema", "--from", tmp_path / name, "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "s.yaml").exists()


def test_missing_codebook(tmp_path, capsys):
    code, err = run(["schema", "--from", tmp_path / "nope.json", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and "nope.json" in err and len(err.strip().splitlines()) == 1


# -- the command line -----------------------------------------------------------------------------------------------
def small_data(path: Path, n: int = 300) -> None:
    rng = np.random.default_rng(0)
    pd.DataFrame(
        {
            "id": [f"P-{i:06d}" for i in range(n)],
            "age": rng.integers(18, 91, n),
            "sex": rng.choice(["F", "M"], n),
            "smoker": rng.choice(["yes", "no", ""], n),
            "income": rng.integers(0, 100000, n),
            "visit": [str(d) for d in np.datetime64("2020-01-01") + rng.integers(0, 366, n)],
            "comment": rng.choice(["ok", "late"], n),
        }
    ).to_csv(path, index=False)


def test_cli_end_to_end(tmp_path, capsys):
    (tmp_path / "tableschema.json").write_text(json.dumps(frictionless_codebook()))
    small_data(tmp_path / "data.csv")
    code, err = run(["schema", "--from", tmp_path / "tableschema.json", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 0, err
    assert "warning: 'income' not mapped" in err and "warning: 'comment' not mapped" in err
    assert "5 of 7 field(s) mapped" in " ".join(err.split())
    out = tmp_path / "out.csv"
    argv = ["synth", tmp_path / "data.csv", "--schema", tmp_path / "s.yaml", "--epsilon", 1, "--seed", 0, "-o", out]
    code, err = run(argv, capsys)
    assert code == 0, err
    syn = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert list(syn.columns) == ["id", "age", "sex", "smoker", "visit"]
    real = set(pd.read_csv(tmp_path / "data.csv", dtype=str)["id"])
    assert syn["id"].str.fullmatch(r"P-\d{6,}").all() and syn["id"].is_unique  # fresh ids (widened if needed)
    assert not set(syn["id"]) & real
    assert set(syn["sex"]) <= {"F", "M"} and set(syn["smoker"]) <= {"yes", "no", ""}
    assert syn["age"].astype(int).between(18, 90).all()
    visits = pd.to_datetime(syn["visit"][syn["visit"] != ""], format="%Y-%m-%d")  # nullable: may be empty
    assert visits.between("2020-01-01", "2020-12-31").all() and len(visits) > 0


def test_cli_sdv_all_templates(tmp_path, capsys):
    (tmp_path / "m.json").write_text(json.dumps({"columns": {"g": {"sdtype": "categorical"}}}))
    code, err = run(["schema", "--from", tmp_path / "m.json", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 0 and "No field could be mapped" in " ".join(err.split())
    assert (tmp_path / "s.yaml").exists()


@pytest.mark.parametrize(
    "extra,named",
    [
        (["data.csv"], "INPUT"),
        (["--private-epsilon", "0.1"], "--private-epsilon"),
        (["--seed", "1"], "--seed"),
        (["--delta", "1e-9"], "--delta"),
        (["--delimiter", ";"], "--delimiter"),
        (["--encoding", "latin-1"], "--encoding"),
        (["--budget-file", "b.json"], "--budget-file"),
    ],
)
def test_cli_refuses_data_options_with_from(extra, named, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.json").write_text(json.dumps(frictionless_codebook()))
    small_data(tmp_path / "data.csv", 20)
    code, err = run(["schema", "--from", "t.json", "-o", "s.yaml", *extra], capsys)
    assert code == 2 and f"--from reads a public codebook and no data, so it takes no {named}" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s.yaml").exists() and not (tmp_path / "b.json").exists()


def test_cli_budget_file_from_environment_is_left_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PRIVSAMPLE_BUDGET_FILE", str(tmp_path / "b.json"))
    (tmp_path / "t.json").write_text(json.dumps(frictionless_codebook()))
    code, err = run(["schema", "--from", tmp_path / "t.json", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 0, err
    assert not (tmp_path / "b.json").exists()


def test_cli_needs_input_or_from(tmp_path, capsys):
    code, err = run(["schema", "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and "give the table to describe (INPUT), or a codebook with --from" in err


def test_cli_from_and_output_are_different_files(tmp_path, capsys):
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(frictionless_codebook()))
    code, err = run(["schema", "--from", tmp_path / "t.yaml", "-o", tmp_path / "t.yaml"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert yaml.safe_load((tmp_path / "t.yaml").read_text()) == frictionless_codebook()
