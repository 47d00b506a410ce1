"""``privsample mbde``: the released table, the ledger, bad input (one line, exit 2, nothing written), the
public-schema requirement, and the per-record input rule (one odd row changes no message)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.cli import run

FAST = ["--epochs", "5", "--hidden", "8"]


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "income": np.clip(rng.normal(40, 10, n), 0, 100),
            "age": rng.integers(18, 90, n),
            "colour": rng.choice(["red", "blue"], n),
            "note": rng.choice(["x", "1.5"], n),
        }
    )
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    sch = tmp_path / "schema.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "income", "type": "numeric", "lower": 0, "upper": 100, "bins": 10},
                    {"name": "age", "type": "numeric", "lower": 0, "upper": 120, "bins": 12, "integer": True},
                    {"name": "colour", "type": "categorical", "categories": ["red", "blue"]},
                    {"name": "note", "type": "numeric", "lower": 0, "upper": 2},
                ],
            }
        )
    )
    return csv, sch


def test_release(data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "out.csv"
    code, text = run(
        [
            "mbde",
            csv,
            "--schema",
            sch,
            "--columns",
            "income,age",
            "--epsilon",
            3,
            "--samples",
            30,
            "-o",
            out,
            "--seed",
            1,
            *FAST,
        ],
        capsys,
    )
    assert code == 0, text
    df = pd.read_csv(out)
    assert list(df.columns) == ["income", "age"] and len(df) == 30
    assert df["income"].between(0, 100).all() and df["age"].between(0, 120).all()
    assert pd.api.types.is_integer_dtype(df["age"])
    assert "Privacy ledger" in text and "integral privacy" in text and "per-sample ε 0.1" in text
    assert "NOT" in text  # seeded: labelled not private


@pytest.mark.parametrize(
    "args, message",
    [
        (["--columns", "income,missing"], "not in the table"),
        (["--columns", "colour"], "categorical"),
        (["--columns", "income", "--epsilon", "0"], "--epsilon must be > 0"),
        (["--columns", "income", "--epsilon", "-1"], "--epsilon must be > 0"),
        (["--columns", "income", "--samples", "0"], "--samples must be >= 1"),
        (["--columns", "income,income"], "twice"),
    ],
)
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
    code, text = run(
        ["mbde", csv, "--schema", sch, "--columns", "income", "--epsilon", 1, "--samples", 5, "-o", out, *FAST], capsys
    )
    assert code == 2 and text.startswith("error: cannot create the output folder") and not out.exists()


def test_numeric_column_without_bounds(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n1,2\n3,4\n")
    sch = tmp_path / "s.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "a", "type": "numeric", "lower": 0, "upper": 10},
                    {"name": "b", "type": "numeric"},
                ],
            }
        )
    )
    out = tmp_path / "out.csv"
    code, text = run(
        ["mbde", csv, "--schema", sch, "--columns", "a,b", "--epsilon", 1, "--samples", 2, "-o", out], capsys
    )
    assert code == 2 and "'lower' and 'upper'" in text and len(text.strip().splitlines()) == 1 and not out.exists()


def test_no_public_bounds(data, tmp_path, capsys):
    csv, _ = data
    sch = tmp_path / "partial.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [{"name": "colour", "type": "categorical", "categories": ["red", "blue"]}],
            }
        )
    )
    out = tmp_path / "out.csv"
    code, text = run(
        ["mbde", csv, "--schema", sch, "--columns", "income", "--epsilon", 1, "--samples", 5, "-o", out], capsys
    )
    assert code == 2 and "no public bounds" in text and not out.exists()


def test_many_samples_warn_with_the_number(data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "out.csv"
    code, text = run(
        [
            "mbde",
            csv,
            "--schema",
            sch,
            "--columns",
            "income",
            "--epsilon",
            1,
            "--samples",
            200,
            "-o",
            out,
            "--seed",
            2,
            *FAST,
        ],
        capsys,
    )
    assert code == 0 and "warning" in text and "0.005" in text
    assert len(pd.read_csv(out)) == 200


def test_text_in_a_numeric_column_is_a_per_record_rule(data, tmp_path, capsys):
    """'note' holds text and numbers: the text rows are left out by the printed rule, not refused."""
    csv, sch = data
    out = tmp_path / "out.csv"
    code, text = run(
        [
            "mbde",
            csv,
            "--schema",
            sch,
            "--columns",
            "note",
            "--epsilon",
            1,
            "--samples",
            5,
            "-o",
            out,
            "--seed",
            0,
            *FAST,
        ],
        capsys,
    )
    assert code == 0, text
    assert "non-numeric value in a chosen column is left out" in " ".join(text.split())
    assert pd.read_csv(out)["note"].between(0, 2).all()


@pytest.mark.parametrize(
    "provenance, message",
    [
        ("draft-nonprivate", "unreviewed non-private draft"),
        ("private", "needs a reviewed public schema"),
    ],
)
def test_schema_must_be_public(data, tmp_path, capsys, provenance, message):
    """A draft's bounds are the data's own min/max, a private schema's cost is zCDP (add/remove): both refused,
    before the data are read."""
    csv, sch = data
    d = yaml.safe_load(sch.read_text())
    d["provenance"] = provenance
    if provenance == "private":
        d["ledger"] = {"rho": 0.01}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(d))
    out = tmp_path / "out.csv"
    code, text = run(
        [
            "mbde",
            tmp_path / "no-such-table.csv",
            "--schema",
            bad,
            "--columns",
            "income",
            "--epsilon",
            1,
            "--samples",
            5,
            "-o",
            out,
            *FAST,
        ],
        capsys,
    )
    assert code == 2 and text.startswith("error: ") and message in " ".join(text.split()), text
    assert not out.exists()


ODD = 987654321


def _masked(text: str, *paths) -> str:
    text = " ".join(text.split())
    for p in paths:
        text = text.replace(str(p), "<path>")
    return re.sub(r"\d[\d,.]*(e-?\d+)?", "#", text)


@pytest.mark.parametrize(
    "column, odd", [("income", ODD), ("income", -ODD), ("age", "HIV-ZZZ"), ("income", None), ("age", "inf")]
)
def test_one_odd_row_changes_no_message(data, tmp_path, capsys, column, odd):
    """An outlier, a non-numeric or a missing value in one row: same exit code, same messages (numbers masked),
    the released values inside the public bounds, and the value itself nowhere in the output."""
    csv, sch = data
    df = pd.read_csv(csv).astype(object)
    base, adv = tmp_path / "base.csv", tmp_path / "advx.csv"
    df.to_csv(base, index=False)
    df.loc[len(df)] = {"income": 41.0, "age": 40, "colour": "red", "note": "x", column: odd}
    df.to_csv(adv, index=False)
    runs = []
    for src, out in ((base, tmp_path / "o_base.csv"), (adv, tmp_path / "o_advx.csv")):
        code, text = run(
            [
                "mbde",
                src,
                "--schema",
                sch,
                "--columns",
                "income,age",
                "--epsilon",
                3,
                "--samples",
                20,
                "-o",
                out,
                "--seed",
                4,
                *FAST,
            ],
            capsys,
        )
        runs.append((code, _masked(text, src, out), text, out))
    assert runs[0][0] == runs[1][0] == 0, runs[1][2]
    assert runs[0][1] == runs[1][1]
    assert "input rule" in runs[1][2] and "987654321" not in runs[1][2] and "HIV" not in runs[1][2]
    written = runs[1][3].read_text()
    assert "987654321" not in written and "HIV" not in written and "inf" not in written
    released = pd.read_csv(runs[1][3])
    assert released["income"].between(0, 100).all() and released["age"].between(0, 120).all()


def test_no_usable_row_still_releases_from_q0(tmp_path, capsys):
    """Every row has a missing or text value: no refusal (it would say so about the data); draws from q0."""
    csv = tmp_path / "d.csv"
    pd.DataFrame({"a": [None, "x", "HIV-ZZZ"], "b": [1, None, 2]}).to_csv(csv, index=False)
    sch = tmp_path / "s.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "a", "type": "numeric", "lower": 0, "upper": 10},
                    {"name": "b", "type": "numeric", "lower": 0, "upper": 10},
                ],
            }
        )
    )
    out = tmp_path / "out.csv"
    code, text = run(
        ["mbde", csv, "--schema", sch, "--columns", "a,b", "--epsilon", 1, "--samples", 5, "-o", out, *FAST], capsys
    )
    assert code == 0, text
    assert "HIV" not in text and len(pd.read_csv(out)) == 5
