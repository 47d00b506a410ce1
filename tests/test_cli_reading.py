"""Reading real files from the command line: delimiters, encodings, strict schema files, huge values, and the
warning that names data columns a schema leaves out. Bad input: one line, exit 2, nothing written."""

from __future__ import annotations

import codecs

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.cli import run
from tests.test_cli import FAST, only_inputs_left

N = 600


def one_error(text: str) -> bool:
    """Exactly one 'error:' line, the last one (a --seed warning may come first)."""
    lines = text.strip().splitlines()
    return bool(lines) and lines[-1].startswith("error: ") and sum(ln.startswith("error") for ln in lines) == 1


def frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id,x": np.arange(n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, 10, n),
            "a": rng.integers(0, 2, n),
            "b": rng.integers(0, 2, n),
        }
    )


SCHEMA = {
    "provenance": "user",
    "columns": [
        {"name": "colour", "type": "categorical", "categories": ["red", "green", "blue"]},
        {"name": "size", "type": "numeric", "lower": 0, "upper": 10, "bins": 5, "integer": True},
        {"name": "a", "type": "categorical", "categories": ["0", "1"]},
        {"name": "b", "type": "categorical", "categories": ["0", "1"]},
    ],
}


@pytest.fixture
def files(tmp_path):
    """A semicolon file whose header also holds a comma (so only --delimiter ';' reads it), a schema that
    leaves out its first column, and a comma-separated synthetic table."""
    src = tmp_path / "semi.csv"
    src.write_text(frame().to_csv(index=False, sep=";", quoting=3))
    sch = tmp_path / "schema.yaml"
    sch.write_text(yaml.safe_dump(SCHEMA))
    syn = tmp_path / "syn.csv"
    frame(seed=1).drop(columns=["id,x"]).to_csv(syn, index=False)
    return src, sch, syn


COMMANDS = {
    "synth": lambda s, sch, syn, o: ["synth", s, "-o", o, "--epsilon", 1, "--schema", sch, "--seed", 0, *FAST],
    "schema": lambda s, sch, syn, o: ["schema", s, "-o", o.with_suffix(".yaml")],
    "check": lambda s, sch, syn, o: ["check", s, "--schema", sch],
    "evaluate": lambda s, sch, syn, o: ["evaluate", s, syn, "--schema", sch, "--workload", 1],
    "draw kary": lambda s, sch, syn, o: [
        "draw",
        "kary",
        s,
        "--column",
        "colour",
        "--categories",
        "red,green,blue",
        "--epsilon",
        1,
        "-o",
        o,
        "--skip-accuracy-check",
    ],
    "draw bernoulli": lambda s, sch, syn, o: [
        "draw",
        "bernoulli",
        s,
        "--columns",
        "a,b",
        "--epsilon",
        1,
        "-o",
        o,
        "--skip-accuracy-check",
    ],
    "draw product": lambda s, sch, syn, o: [
        "draw",
        "product",
        s,
        "--columns",
        "a,b",
        "--epsilon",
        1,
        "-o",
        o,
        "--skip-accuracy-check",
    ],
    "mbde": lambda s, sch, syn, o: [
        "mbde",
        s,
        "--schema",
        sch,
        "--columns",
        "size",
        "--epsilon",
        3,
        "--samples",
        5,
        "-o",
        o,
        "--seed",
        1,
        "--epochs",
        5,
        "--hidden",
        8,
    ],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_that_reads_a_table_detects_or_takes_the_delimiter(command, files, tmp_path, capsys):
    src, sch, syn = files
    out = tmp_path / "out.csv"
    args = COMMANDS[command](src, sch, syn, out)
    code, text = run(args, capsys)
    assert code == 2 and one_error(text), text
    assert "cannot tell the delimiter from the header (5 columns on ';', 2 columns on ',')" in text
    assert "pass --delimiter ';'" in text
    assert only_inputs_left(tmp_path, {"semi.csv", "schema.yaml", "syn.csv"})
    code, text = run([*args, "--delimiter", ";"], capsys)
    assert code == 0, text
    if command in ("synth", "check", "evaluate"):  # a --schema that leaves out a data column says so
        assert "warning: column 'id,x' of semi.csv is not in schema.yaml and is left out" in " ".join(text.split())
    if command == "synth":
        assert list(pd.read_csv(out).columns) == ["colour", "size", "a", "b"]


def test_synth_detects_semicolons_tabs_and_pipes(tmp_path, capsys):
    sch = tmp_path / "schema.yaml"
    sch.write_text(yaml.safe_dump(SCHEMA))
    df = frame().drop(columns=["id,x"])
    for sep, name in ((";", "semi.csv"), ("\t", "tab.txt"), ("|", "pipe.csv")):
        src, out = tmp_path / name, tmp_path / f"out-{name}.csv"
        df.to_csv(src, index=False, sep=sep)
        code, text = run(["synth", src, "-o", out, "--epsilon", 1, "--schema", sch, "--seed", 0, *FAST], capsys)
        assert code == 0 and "warning" not in text, text
        assert list(pd.read_csv(out).columns) == ["colour", "size", "a", "b"]
    src = tmp_path / "semi.csv"  # no schema: private discovery sees the four columns
    code, text = run(["synth", src, "-o", tmp_path / "d.csv", "--epsilon", 2, "--seed", 0, *FAST], capsys)
    assert code == 0 and list(pd.read_csv(tmp_path / "d.csv").columns) == ["colour", "size", "a", "b"], text


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_synth_reads_utf16_and_latin1(engine, tmp_path, capsys):
    sch = tmp_path / "schema.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "größe", "type": "numeric", "lower": 0, "upper": 10, "bins": 5, "integer": True},
                    {"name": "name", "type": "categorical", "categories": ["Müller", "Ødegård"]},
                ],
            }
        )
    )
    rng = np.random.default_rng(0)
    text = "größe\tname\r\n" + "".join(
        f"{rng.integers(0, 10)}\t{rng.choice(['Müller', 'Ødegård'])}\r\n" for _ in range(N)
    )
    u16, lat = tmp_path / "excel.txt", tmp_path / "latin.csv"
    u16.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))  # Excel's "Unicode text"
    lat.write_bytes(text.replace("\t", ";").encode("latin-1"))
    base = ["--epsilon", 1, "--schema", sch, "--seed", 0, "--engine", engine, *FAST]
    code, err = run(["synth", u16, "-o", tmp_path / "a.csv", *base], capsys)
    assert code == 0, err
    out = pd.read_csv(tmp_path / "a.csv")
    assert list(out.columns) == ["größe", "name"] and set(out["name"]) <= {"Müller", "Ødegård"}
    code, err = run(["synth", lat, "-o", tmp_path / "b.csv", *base], capsys)
    assert code == 2 and one_error(err) and "not valid UTF-8 text" in err and "--encoding" in err
    assert "ller" not in err and "line" not in err and not (tmp_path / "b.csv").exists()  # no value, no line number
    code, err = run(["synth", lat, "-o", tmp_path / "b.csv", *base, "--encoding", "latin-1"], capsys)
    assert code == 0, err
    assert set(pd.read_csv(tmp_path / "b.csv")["name"]) <= {"Müller", "Ødegård"}


def test_utf16_without_mark_gz_and_bad_flags(tmp_path, capsys):
    import gzip

    src = tmp_path / "u16.csv"
    src.write_bytes("colour,size\nred,1\nblue,2\n".encode("utf-16-le"))
    code, err = run(["schema", src, "-o", tmp_path / "s.yaml"], capsys)
    assert code == 2 and "looks like UTF-16 text without a byte-order mark: pass --encoding utf-16-le" in err
    assert run(["schema", src, "-o", tmp_path / "s.yaml", "--encoding", "utf-16-le"], capsys)[0] == 0
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress("colour;size\nrøde;1\n".encode("cp1252")))
    assert run(["schema", gz, "-o", tmp_path / "g.yaml", "--encoding", "cp1252"], capsys)[0] == 0
    assert yaml.safe_load((tmp_path / "g.yaml").read_text())["columns"][0]["categories"] == ["røde"]
    for flag, value, message in (
        ("--delimiter", ";;", "--delimiter must be one character"),
        ("--encoding", "klingon", "--encoding 'klingon' is not a text encoding"),
    ):
        code, err = run(["schema", gz, "-o", tmp_path / "h.yaml", flag, value], capsys)
        assert code == 2 and message in err and one_error(err) and not (tmp_path / "h.yaml").exists()


def test_wrong_delimiter_names_the_likely_cause(files, tmp_path, capsys):
    src, sch, _ = files
    code, err = run(
        ["synth", src, "-o", tmp_path / "o.csv", "--epsilon", 1, "--schema", sch, "--delimiter", ",", *FAST], capsys
    )
    assert code == 2 and one_error(err) and "is --delimiter right?" in err, err


def test_schema_file_with_an_unknown_key(files, tmp_path, capsys):
    src, sch, _ = files
    bad = tmp_path / "bad.yaml"
    d = yaml.safe_load(sch.read_text())
    d["columns"][1]["bin"] = 3
    bad.write_text(yaml.safe_dump(d))
    code, err = run(
        ["synth", src, "-o", tmp_path / "o.csv", "--epsilon", 1, "--schema", bad, "--delimiter", ";", *FAST], capsys
    )
    assert code == 2 and one_error(err) and "unknown key 'bin' (did you mean 'bins'?" in err, err
    assert not (tmp_path / "o.csv").exists()


def test_huge_values_draft_synth_and_evaluate(tmp_path, capsys):
    """1e308 and -1.7e308: the draft's bounds keep a finite width; synth and evaluate run (values are clipped)."""
    rng = np.random.default_rng(0)
    x = [str(v) for v in rng.integers(0, 100, 200)] + ["1e308", "-1.7e308", "1.7e308"]
    src = tmp_path / "x.csv"
    pd.DataFrame({"x": x, "y": rng.choice(["a", "b"], len(x))}).to_csv(src, index=False)
    draft = tmp_path / "draft.yaml"
    code, err = run(["schema", src, "-o", draft], capsys)
    assert code == 0, err
    d = yaml.safe_load(draft.read_text())
    col = d["columns"][0]
    assert col["type"] == "numeric" and np.isfinite(col["upper"] - col["lower"]) and not col.get("integer")
    d["provenance"] = "user"
    draft.write_text(yaml.safe_dump(d))
    out = tmp_path / "s.csv"
    code, err = run(["synth", src, "-o", out, "--epsilon", 1, "--schema", draft, "--seed", 0, *FAST], capsys)
    assert code == 0, err
    assert np.isfinite(pd.read_csv(out)["x"]).all()
    code, err = run(["evaluate", src, out, "--schema", draft], capsys)
    assert code == 0, err
    d["columns"][0].update(lower=-1.7e308, upper=1.7e308)  # a hand-written schema with absurd bounds
    draft.write_text(yaml.safe_dump(d))
    code, err = run(["synth", src, "-o", tmp_path / "t.csv", "--epsilon", 1, "--schema", draft, *FAST], capsys)
    assert code == 2 and "'x'" in err and "too far apart" in err and one_error(err)
