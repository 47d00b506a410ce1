"""``privsample draw kary | bernoulli | product``: the main jobs, refusals and bad input (one line, exit 2,
nothing written)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.test_cli import run


def flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    n = 2400
    df = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], n), "a": (rng.random(n) < 0.4).astype(int),
                       "b": (rng.random(n) < 0.6).astype(int), "c": (rng.random(n) < 0.5).astype(int)})
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def only(directory: Path, names: set[str]) -> bool:
    return {p.name for p in directory.iterdir()} <= names


def test_kary_writes_draws_ledger_and_parts(table, tmp_path, capsys):
    out = tmp_path / "k.csv"
    code, err = run(["draw", "kary", table, "--column", "color", "--categories", "red,green,blue",
                     "--epsilon", 1, "--samples", 8, "-o", out], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    assert list(df.columns) == ["color"] and len(df) == 8 and set(df["color"]) <= {"red", "green", "blue"}
    assert "Privacy ledger" in err and "per-part n: 8 × 300" in flat(err) and "pure ε-DP with ε = 1" in flat(err)


def test_kary_integer_codes_with_k(tmp_path, capsys):
    src, out = tmp_path / "codes.csv", tmp_path / "o.csv"
    pd.DataFrame({"x": np.arange(500) % 4}).to_csv(src, index=False)
    code, err = run(["draw", "kary", src, "--column", "x", "--k", 4, "--epsilon", 2, "-o", out], capsys)
    assert code == 0, err
    assert pd.read_csv(out)["x"].between(0, 3).all()
    code, err = run(["draw", "kary", src, "--column", "x", "--k", 3, "--epsilon", 2, "-o", out.with_name("p.csv")],
                    capsys)
    assert code == 2 and "outside the declared domain of k = 3" in err and not out.with_name("p.csv").exists()


def test_bernoulli_pure_and_zcdp(table, tmp_path, capsys):
    out = tmp_path / "b.csv"
    code, err = run(["draw", "bernoulli", table, "--columns", "a,b", "--epsilon", 1, "--samples", 4, "-o", out], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    assert list(df.columns) == ["a", "b"] and df.shape == (4, 2) and set(df.values.ravel()) <= {0, 1}
    assert "pure ε-DP" in flat(err) and "per-part n: 4 × 600" in flat(err)
    out2 = tmp_path / "b2.csv"
    code, err = run(["draw", "bernoulli", table, "--columns", "a,b,c", "--epsilon", 1, "--delta", 1e-6, "-o", out2],
                    capsys)
    assert code == 0 and "ρ-zCDP" in flat(err) and pd.read_csv(out2).shape == (1, 3)


def test_product_seeded_and_accuracy_refusal(table, tmp_path, capsys):
    out = tmp_path / "p.csv"
    code, err = run(["draw", "product", table, "--columns", "a,b,c", "--epsilon", 1, "-o", out], capsys)
    assert code == 2 and "records per draw for TV <= alpha = 0.1" in err and not out.exists()
    assert len(err.strip().splitlines()) == 1
    code, err = run(["draw", "product", table, "--columns", "a,b,c", "--epsilon", 1, "--samples", 2,
                     "--skip-accuracy-check", "--seed", 3, "-o", out], capsys)
    assert code == 0, err
    assert "NOT differentially private" in flat(err) and "NOT PRIVATE" in err
    assert pd.read_csv(out).shape == (2, 3)


def test_bernoulli_privacy_refusal_says_how_many(tmp_path, capsys):
    src, out = tmp_path / "small.csv", tmp_path / "o.csv"
    pd.DataFrame({"a": [0, 1] * 200, "b": [1, 0] * 200}).to_csv(src, index=False)
    code, err = run(["draw", "bernoulli", src, "--epsilon", 0.01, "--skip-accuracy-check", "-o", out], capsys)
    assert code == 2 and "records per draw" in err and "n >= " in err and not out.exists()


@pytest.mark.parametrize("argv,message", [
    (["draw", "bernoulli", "{t}", "--epsilon", 1], "is not binary"),
    (["draw", "product", "{t}", "--columns", "a,color", "--epsilon", 1], "is not binary"),
    (["draw", "kary", "{t}", "--column", "color", "--categories", "red,green", "--epsilon", 1], "outside the declared"),
    (["draw", "kary", "{t}", "--column", "color", "--epsilon", 1], "declare the public domain"),
    (["draw", "kary", "{t}", "--column", "colour", "--categories", "red", "--epsilon", 1], "not in"),
    (["draw", "bernoulli", "{t}", "--columns", "a,zz", "--epsilon", 1], "not in"),
    (["draw", "kary", "{t}", "--column", "color", "--categories", "red,green,blue", "--epsilon", 0], "--epsilon"),
    (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", -1], "--epsilon"),
    (["draw", "product", "{t}", "--columns", "a", "--epsilon", 1, "--delta", 2], "--delta"),
    (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--samples", 5000], "disjoint non-empty parts"),
    (["draw", "kary", "{t}", "--column", "color", "--categories", "red,green,blue", "--epsilon", 0.1,
      "--samples", 10], "records per draw"),
    (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--clip", "1/2"], "clip margin"),
])
def test_bad_input_one_line_exit_2_nothing_written(table, tmp_path, capsys, argv, message):
    out = tmp_path / "out.csv"
    code, err = run([str(table) if a == "{t}" else a for a in argv] + ["-o", out], capsys)
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert only(tmp_path, {"data.csv"})


def test_missing_values_and_parquet_booleans(tmp_path, capsys):
    src = tmp_path / "m.csv"
    pd.DataFrame({"a": [0, 1, None, 1] * 50}).to_csv(src, index=False)
    code, err = run(["draw", "bernoulli", src, "--epsilon", 1, "-o", tmp_path / "o.csv"], capsys)
    assert code == 2 and "missing values" in err
    pq = tmp_path / "t.parquet"
    pd.DataFrame({"f": np.arange(400) % 3 == 0, "g": (np.arange(400) % 2).astype("int64")}).to_parquet(pq)
    code, err = run(["draw", "bernoulli", pq, "--epsilon", 1, "--delta", 1e-6, "-o", tmp_path / "o.parquet"], capsys)
    assert code == 0, err
    assert pd.read_parquet(tmp_path / "o.parquet").shape == (1, 2)
