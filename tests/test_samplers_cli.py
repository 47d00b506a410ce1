"""``privsample draw kary | bernoulli | product``: the main jobs, refusals and bad input (one line, exit 2,
nothing written), and the per-record input rules: one odd record changes neither the exit code nor any message."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.cli import run


def flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    n = 2400
    df = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "a": (rng.random(n) < 0.4).astype(int),
            "b": (rng.random(n) < 0.6).astype(int),
            "c": (rng.random(n) < 0.5).astype(int),
        }
    )
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def only(directory: Path, names: set[str]) -> bool:
    return {p.name for p in directory.iterdir()} <= names


def test_kary_writes_draws_ledger_and_parts(table, tmp_path, capsys):
    out = tmp_path / "k.csv"
    code, err = run(
        [
            "draw",
            "kary",
            table,
            "--column",
            "color",
            "--categories",
            "red,green,blue",
            "--epsilon",
            1,
            "--samples",
            8,
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0, err
    df = pd.read_csv(out)
    # unseeded (private) draws: the catch-all is a possible outcome of the sampler, though no record holds it
    assert list(df.columns) == ["color"] and len(df) == 8
    assert set(df["color"]) <= {"red", "green", "blue", "(other)"}
    assert "Privacy ledger" in err and "per-part n: 8 × 300" in flat(err) and "pure ε-DP with ε = 1" in flat(err)


def test_kary_integer_codes_with_k(tmp_path, capsys):
    src, out = tmp_path / "codes.csv", tmp_path / "o.csv"
    pd.DataFrame({"x": np.arange(500) % 4}).to_csv(src, index=False)
    code, err = run(["draw", "kary", src, "--column", "x", "--k", 4, "--epsilon", 2, "-o", out], capsys)
    assert code == 0, err
    assert pd.read_csv(out)["x"].between(0, 3).all()
    # code 3 lies outside --k 3: it is counted as the catch-all, written as code 3 (k + 1 = 4 outcomes), not refused
    code, err = run(
        ["draw", "kary", src, "--column", "x", "--k", 3, "--epsilon", 2, "--samples", 5, "-o", out.with_name("p.csv")],
        capsys,
    )
    assert code == 0, err
    assert pd.read_csv(out.with_name("p.csv"))["x"].between(0, 3).all()
    assert "counts as code 3 ('(other)'), an extra outcome: k = 3 + 1 = 4 outcomes" in flat(err)
    code, err = run(
        ["draw", "kary", src, "--column", "x", "--k", 3, "--other", 0, "--epsilon", 2, "-o", out.with_name("q.csv")],
        capsys,
    )
    assert code == 0 and "counts as code 0" in flat(err) and "extra outcome" not in err
    assert pd.read_csv(out.with_name("q.csv"))["x"].between(0, 2).all()


def test_bernoulli_pure_and_zcdp(table, tmp_path, capsys):
    out = tmp_path / "b.csv"
    code, err = run(["draw", "bernoulli", table, "--columns", "a,b", "--epsilon", 1, "--samples", 4, "-o", out], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    assert list(df.columns) == ["a", "b"] and df.shape == (4, 2) and set(df.values.ravel()) <= {0, 1}
    assert "pure ε-DP" in flat(err) and "per-part n: 4 × 600" in flat(err)
    out2 = tmp_path / "b2.csv"
    code, err = run(
        ["draw", "bernoulli", table, "--columns", "a,b,c", "--epsilon", 1, "--delta", 1e-6, "-o", out2], capsys
    )
    assert code == 0 and "ρ-zCDP" in flat(err) and pd.read_csv(out2).shape == (1, 3)


def test_product_seeded_and_accuracy_refusal(table, tmp_path, capsys):
    out = tmp_path / "p.csv"
    code, err = run(["draw", "product", table, "--columns", "a,b,c", "--epsilon", 1, "-o", out], capsys)
    assert code == 2 and "records per draw for TV <= alpha = 0.1" in err and not out.exists()
    assert len(err.strip().splitlines()) == 1
    code, err = run(
        [
            "draw",
            "product",
            table,
            "--columns",
            "a,b,c",
            "--epsilon",
            1,
            "--samples",
            2,
            "--skip-accuracy-check",
            "--seed",
            3,
            "-o",
            out,
        ],
        capsys,
    )
    assert code == 0, err
    assert "NOT differentially private" in flat(err) and "NOT PRIVATE" in err
    assert pd.read_csv(out).shape == (2, 3)


def test_bernoulli_privacy_refusal_says_how_many(tmp_path, capsys):
    src, out = tmp_path / "small.csv", tmp_path / "o.csv"
    pd.DataFrame({"a": [0, 1] * 200, "b": [1, 0] * 200}).to_csv(src, index=False)
    code, err = run(["draw", "bernoulli", src, "--epsilon", 0.01, "--skip-accuracy-check", "-o", out], capsys)
    assert code == 2 and "records per draw" in err and "n >= " in err and not out.exists()


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            [
                "draw",
                "kary",
                "{t}",
                "--column",
                "color",
                "--categories",
                "red,green",
                "--other",
                "blue",
                "--epsilon",
                1,
            ],
            "--other 'blue' is not one of the declared",
        ),
        (["draw", "kary", "{t}", "--column", "color", "--epsilon", 1], "declare the public domain"),
        (["draw", "kary", "{t}", "--column", "colour", "--categories", "red", "--epsilon", 1], "not in"),
        (["draw", "bernoulli", "{t}", "--columns", "a,zz", "--epsilon", 1], "not in"),
        (["draw", "kary", "{t}", "--column", "color", "--categories", "red,green,blue", "--epsilon", 0], "--epsilon"),
        (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", -1], "--epsilon"),
        (["draw", "product", "{t}", "--columns", "a", "--epsilon", 1, "--delta", 2], "--delta"),
        (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--samples", 5000], "disjoint non-empty parts"),
        (
            [
                "draw",
                "kary",
                "{t}",
                "--column",
                "color",
                "--categories",
                "red,green,blue",
                "--epsilon",
                0.1,
                "--samples",
                10,
            ],
            "records per draw",
        ),
        (["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--clip", "1/2"], "clip margin"),
    ],
)
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
    assert code == 0, err
    assert "a cell reads 1 iff it is exactly one" in flat(err) and "missing values" not in err
    pq = tmp_path / "t.parquet"
    pd.DataFrame({"f": np.arange(400) % 3 == 0, "g": (np.arange(400) % 2).astype("int64")}).to_parquet(pq)
    code, err = run(["draw", "bernoulli", pq, "--epsilon", 1, "--delta", 1e-6, "-o", tmp_path / "o.parquet"], capsys)
    assert code == 0, err
    assert pd.read_parquet(tmp_path / "o.parquet").shape == (1, 2)


# -- one odd record changes nothing that is printed (per-record rules, not refusals) ------------------------
ODD = "HIV-ZZZ-987654321"  # a distinctive value that must never reach a message or a file


def masked(text: str, *paths: Path) -> str:
    text = flat(text)
    for p in paths:
        text = text.replace(str(p), "<path>")
    return re.sub(r"\d[\d,.]*(e-?\d+)?", "#", text)


def _odd_tables(tmp_path, column: str, odd) -> tuple[Path, Path]:
    rng = np.random.default_rng(1)
    n = 2400
    df = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "a": (rng.random(n) < 0.4).astype(int),
            "b": (rng.random(n) < 0.6).astype(int),
        }
    )
    plain, odd_df = df.astype(object), df.astype(object)
    plain.loc[len(df)] = {"color": "red", "a": 0, "b": 1}  # D plus an ordinary record ...
    odd_df.loc[len(df)] = {"color": "red", "a": 0, "b": 1, column: odd}  # ... or plus one with an odd cell
    base, adv = tmp_path / "base.csv", tmp_path / "advx.csv"  # same length: rich wraps alike
    plain.to_csv(base, index=False)
    odd_df.to_csv(adv, index=False)
    return base, adv


@pytest.mark.parametrize(
    "argv,column,odd",
    [
        (
            ["draw", "kary", "--column", "color", "--categories", "red,green,blue", "--epsilon", 1, "--samples", 4],
            "color",
            ODD,
        ),
        (["draw", "kary", "--column", "color", "--categories", "red,green,blue", "--epsilon", 1], "color", None),
        (["draw", "kary", "--column", "a", "--k", 2, "--epsilon", 1, "--samples", 2], "a", 987654321),
        (["draw", "bernoulli", "--columns", "a,b", "--epsilon", 1], "a", 987654321),
        (["draw", "bernoulli", "--columns", "a,b", "--epsilon", 1, "--delta", 1e-6, "--samples", 2], "b", ODD),
        (["draw", "bernoulli", "--epsilon", 1, "--delta", 1e-6], "b", None),  # default columns: the header's
        (["draw", "product", "--columns", "a,b", "--epsilon", 1, "--skip-accuracy-check"], "a", ODD),
        (["draw", "product", "--columns", "a,b", "--epsilon", 1, "--skip-accuracy-check"], "b", None),
        (["draw", "product", "--columns", "a,b", "--epsilon", 1, "--skip-accuracy-check"], "b", 0.5),
    ],
)
def test_one_odd_record_changes_no_message(tmp_path, capsys, argv, column, odd):
    """Adding a record with a value outside the declared categories, a non-binary, missing or text value
    instead of an ordinary one (replace-one neighbours, same public n): the exit code and every printed line
    (numbers masked) are unchanged, and the value reaches no output."""
    base, adv = _odd_tables(tmp_path, column, odd)
    results = []
    for src, out in ((base, tmp_path / "o_base.csv"), (adv, tmp_path / "o_advx.csv")):
        code, err = run(argv[:2] + [src] + argv[2:] + ["--seed", 5, "-o", out], capsys)
        results.append((code, masked(err, src, out), err, out))
    (code0, text0, _, _), (code1, text1, raw1, out1) = results
    assert code0 == code1 == 0, raw1
    assert text0 == text1
    assert "input rule" in text1
    assert "987654321" not in raw1 and "HIV" not in raw1
    written = out1.read_text()
    assert "987654321" not in written and "HIV" not in written and "0.5" not in written


def test_odd_record_near_a_refusal_threshold_keeps_the_refusal(tmp_path, capsys):
    """Refusals depend on n and public parameters only: a data set refused for accuracy stays refused, with the
    same message up to n, when one record with an odd value is added."""
    base, adv = _odd_tables(tmp_path, "color", ODD)
    texts = []
    for src in (base, adv):
        code, err = run(
            [
                "draw",
                "kary",
                src,
                "--column",
                "color",
                "--categories",
                "red,green,blue",
                "--epsilon",
                0.1,
                "--samples",
                10,
                "-o",
                tmp_path / "o.csv",
            ],
            capsys,
        )
        assert code == 2 and "records per draw" in err and ODD not in err
        texts.append(masked(err, src))
    assert texts[0] == texts[1] and not (tmp_path / "o.csv").exists()
