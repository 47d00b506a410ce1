"""``privsample mbde``: the released table, the ledger, and bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.test_cli import run

FAST = ["--epochs", "5", "--hidden", "8"]


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"income": np.clip(rng.normal(40, 10, n), 0, 100), "age": rng.integers(18, 90, n),
                       "colour": rng.choice(["red", "blue"], n), "note": rng.choice(["x", "1.5"], n)})
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    sch = tmp_path / "schema.yaml"
    sch.write_text(yaml.safe_dump({"columns": [
        {"name": "income", "type": "numeric", "lower": 0, "upper": 100, "bins": 10},
        {"name": "age", "type": "numeric", "lower": 0, "upper": 120, "bins": 12, "integer": True},
        {"name": "colour", "type": "categorical", "categories": ["red", "blue"]},
        {"name": "note", "type": "numeric", "lower": 0, "upper": 2}]}))
    return csv, sch


def test_release(data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "out.csv"
    code, text = run(["mbde", csv, "--schema", sch, "--columns", "income,age", "--epsilon", 3, "--samples", 30,
                      "-o", out, "--seed", 1, *FAST], capsys)
    assert code == 0, text
    df = pd.read_csv(out)
    assert list(df.columns) == ["income", "age"] and len(df) == 30
    assert df["income"].between(0, 100).all() and df["age"].between(0, 120).all()
    assert pd.api.types.is_integer_dtype(df["age"])
    assert "Privacy ledger" in text and "integral privacy" in text and "per-sample ε 0.1" in text
    assert "NOT" in text  # seeded: labelled not private


@pytest.mark.parametrize("args, message", [
    (["--columns", "income,missing"], "not in the table"),
    (["--columns", "colour"], "categorical"),
    (["--columns", "note"], "non-numeric"),
    (["--columns", "income", "--epsilon", "0"], "--epsilon must be > 0"),
    (["--columns", "income", "--epsilon", "-1"], "--epsilon must be > 0"),
    (["--columns", "income", "--samples", "0"], "--samples must be >= 1"),
    (["--columns", "income,income"], "twice"),
])
def test_bad_input(data, tmp_path, capsys, args, message):
    csv, sch = data
    out = tmp_path / "out.csv"
    base = {"--epsilon": "1", "--samples": "5"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = ["mbde", csv, "--schema", sch, "-o", out, "--seed", 0, *FAST]
    for k, v in base.items():
        argv += [k, v]
    code, text = run(argv, capsys)
    lines = [ln for ln in text.strip().splitlines() if ln.startswith("error:")]
    assert code == 2 and len(lines) == 1 and message in lines[0], text
    assert not out.exists()


def test_unwritable_output_is_bad_input(data, tmp_path, capsys):
    csv, sch = data
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = blocker / "out.csv"  # a folder that cannot exist
    code, text = run(["mbde", csv, "--schema", sch, "--columns", "income", "--epsilon", 1, "--samples", 5, "-o", out,
                      *FAST], capsys)
    assert code == 2 and text.startswith("error: cannot create the output folder") and not out.exists()


def test_numeric_column_without_bounds(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    sch = tmp_path / "s.yaml"
    sch.write_text(yaml.safe_dump({"columns": [{"name": "a", "type": "numeric", "lower": 0, "upper": 10},
                                               {"name": "b", "type": "numeric"}]}))
    out = tmp_path / "out.csv"
    code, text = run(["mbde", csv, "--schema", sch, "--columns", "a,b", "--epsilon", 1, "--samples", 2, "-o", out],
                     capsys)
    assert code == 2 and "'lower' and 'upper'" in text and len(text.strip().splitlines()) == 1 and not out.exists()


def test_no_public_bounds(data, tmp_path, capsys):
    csv, _ = data
    sch = tmp_path / "partial.yaml"
    sch.write_text(yaml.safe_dump({"columns": [{"name": "colour", "type": "categorical", "categories": ["red", "blue"]}]}))
    out = tmp_path / "out.csv"
    code, text = run(["mbde", csv, "--schema", sch, "--columns", "income", "--epsilon", 1, "--samples", 5, "-o", out],
                     capsys)
    assert code == 2 and "no public bounds" in text and not out.exists()


def test_many_samples_warn_with_the_number(data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "out.csv"
    code, text = run(["mbde", csv, "--schema", sch, "--columns", "income", "--epsilon", 1, "--samples", 200, "-o", out,
                      "--seed", 2, *FAST], capsys)
    assert code == 0 and "warning" in text and "0.005" in text
    assert len(pd.read_csv(out)) == 200
