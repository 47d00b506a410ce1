"""The Python API: ``Synthesizer`` / ``load`` / ``synthesize`` on in-memory tables (pandas, pyarrow, polars)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import InputError, Schema, Synthesizer
from privsample.data.frames import frame_table
from privsample.data.table import read_table
from privsample.api.synthesizer import synthesize
from privsample.privacy.accountant import Accountant

FAST = {"iters": 30}


@pytest.fixture(autouse=True)
def _quiet_seeded_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning (NOT private: reproducible tests)
        yield


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 3000
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B", "C"], n, p=[0.6, 0.3, 0.1])
    age = rng.integers(17, 91, n)
    income = np.where((sex == "M") & (age > 40), ">50K", rng.choice(["<=50K", ">50K"], n, p=[0.8, 0.2]))
    return pd.DataFrame({"sex": sex, "race": race, "age": age, "income": income})


def assert_same_values(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """The same values (missing as None), whatever the dtypes: a DataFrame's synthetic table has its dtypes."""
    pd.testing.assert_frame_equal(a.astype(object).where(a.notna(), None), b.astype(object).where(b.notna(), None))


def spy_spend(monkeypatch) -> list:
    """Records every budget spend (``Accountant.spend``) of the test."""
    spent: list = []
    original = Accountant.spend

    def spend(self, *args, **kwargs):
        spent.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Accountant, "spend", spend)
    return spent


def test_top_level_exports():
    for name in ("Synthesizer", "load", "synthesize", "InputError", "Schema", "__version__"):
        assert name in privsample.__all__
        assert getattr(privsample, name) is not None
    assert privsample.synthesize is synthesize
    assert privsample.InputError is privsample.errors.InputError


def test_fit_sample_mst_on_a_dataframe(df):
    s = Synthesizer("mst", epsilon=2, **FAST)
    assert s.fit(df, seed=1) is s
    out = s.sample(500, seed=3)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(df.columns) and len(out) == 500
    assert set(out["sex"].dropna()) <= {"F", "M", "(other)"}
    ledger = s.ledger
    assert ledger["summary"]["rho_spent"] <= ledger["summary"]["rho_total"] * (1 + 1e-9)
    assert s.model.mechanism == "mst" and isinstance(s.schema, Schema) and s.schema.provenance == "private"
    assert not s.private  # seeded noise
    assert s.sample(200, seed=4).equals(s.sample(200, seed=4))
    assert len(s.sample(seed=0)) > 0  # default: the noisy row count


def test_second_fit_refused_and_sample_before_fit(df):
    s = Synthesizer("mst", epsilon=2, **FAST)
    with pytest.raises(InputError, match="not fitted"):
        s.sample(10)
    s.fit(df, seed=1)
    with pytest.raises(InputError, match="already been fitted"):
        s.fit(df, seed=1)


def test_save_load_round_trip(df, tmp_path):
    s = Synthesizer("mst", epsilon=2, **FAST).fit(df, seed=1)
    for path in (tmp_path / "model.zip", tmp_path / "model"):
        s.save(path)
        loaded = privsample.load(path)
        assert loaded.sample(300, seed=5).equals(s.sample(300, seed=5))
        assert loaded.ledger == s.ledger and loaded.method == "mst" and loaded.epsilon == 2
        assert loaded.schema.to_dict() == s.schema.to_dict()
        with pytest.raises(InputError, match="already been fitted"):
            loaded.fit(df)


@pytest.mark.parametrize(
    "bad, match",
    [
        ("not a table", "data file not found"),
        (42, "expected a pandas DataFrame"),
        ([[1, 2]], "expected a pandas DataFrame"),
        (pd.DataFrame({"a": [1], " ": [2]}), "empty name"),
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "duplicate column"),
        (pd.DataFrame([[1, 2]], columns=["a", " a "]), "duplicate column"),
        (pd.DataFrame([[1, 2]], columns=[0, 1]), "must be text"),
        (pd.DataFrame(), "no columns"),
    ],
)
def test_bad_input_raises_before_any_spend(bad, match, monkeypatch):
    spent = spy_spend(monkeypatch)
    s = Synthesizer("mst", epsilon=1, **FAST)
    with pytest.raises(InputError, match=match):
        s.fit(bad)
    with pytest.raises(InputError, match=match):
        synthesize(bad, epsilon=1, method="mst", method_options=FAST)
    assert spent == []
    assert not s._spent  # refused before the fit started: the object may still be fitted


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("nope",), {}, "unknown method"),
        (("mst",), {"epsilon": 0}, "epsilon"),
        (("mst",), {"delta": 2}, "delta"),
        (("mst",), {"bogus": 1}, "unknown option"),
        (("mst",), {"seed": 1}, r"unknown option\(s\) seed \(mst takes: iters, max_memory_mb\)"),
        (("aim",), {"unsafe_as_published": True}, "applies to ppsyn-paper, not aim"),
        (("mst",), {"workload": "a,b"}, "apply to aim and ppsyn"),
        (("ppsyn-paper",), {}, "NOT differentially private"),
        (("aim",), {"workload": [1, 2]}, "workload must be"),
    ],
)
def test_bad_options_raise_input_error(args, kwargs, match):
    with pytest.raises(InputError, match=match):
        Synthesizer(*args, **kwargs)


def test_workload_as_text_or_tuples():
    from privsample.synth.registry import method_options

    text = method_options("aim", workload="sex,race;age")["workload"]
    assert text == method_options("aim", workload=[("sex", "race"), ("age",)])["workload"]
    assert text == [(("sex", "race"), 1.0), (("age",), 1.0)]


def test_dataframe_and_its_csv_give_the_same_seeded_output(df, tmp_path):
    frame = df.copy()
    frame.loc[::7, "age"] = np.nan  # a float column with missing values, as to_csv writes it
    frame.loc[::11, "race"] = None
    frame.loc[5, "sex"] = "  F "  # trimmed like a CSV field
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    assert frame_table(frame).equals(read_table(path))
    a = synthesize(frame, epsilon=2, method="mst", seed=11, method_options=FAST)
    b = synthesize(path, epsilon=2, method="mst", seed=11, method_options=FAST)
    assert_same_values(a.table, b.table)  # the frame's table has its dtypes
    assert a.schema.to_dict() == b.schema.to_dict()
    assert_same_values(
        Synthesizer("mst", epsilon=2, **FAST).fit(frame, seed=11).sample(400, seed=2),
        Synthesizer("mst", epsilon=2, **FAST).fit(str(path), seed=11).sample(400, seed=2),
    )


def test_pyarrow_table_input(df):
    pa = pytest.importorskip("pyarrow")
    table = pa.Table.from_pandas(df, preserve_index=False)
    assert frame_table(table).equals(frame_table(df))
    a = Synthesizer("mst", epsilon=2, **FAST).fit(table, seed=1).sample(300, seed=2)
    b = Synthesizer("mst", epsilon=2, **FAST).fit(df, seed=1).sample(300, seed=2)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)  # the same values; b has df's dtypes


def test_polars_input(df):
    pl = pytest.importorskip("polars")
    table = pl.from_pandas(df)
    assert frame_table(table).equals(frame_table(df))
    a = Synthesizer("mst", epsilon=2, **FAST).fit(table, seed=1).sample(300, seed=2)
    b = Synthesizer("mst", epsilon=2, **FAST).fit(df, seed=1).sample(300, seed=2)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)  # the same values; b has df's dtypes


def test_reviewed_schema_and_in_memory_engine(df):
    from privsample.data.discovery import draft_schema

    sch = draft_schema(frame_table(df))
    sch.provenance = "user"
    s = Synthesizer("mst", epsilon=1, **FAST).fit(df, schema=sch, seed=0)
    assert s.schema.provenance == "user" and len(s.sample(50, seed=0)) == 50
    with pytest.raises(InputError, match="numpy engine"):
        synthesize(df, epsilon=1, method="mst", schema=sch, engine="duckdb")
    with pytest.raises(InputError, match="schema must be"):
        Synthesizer("mst", epsilon=1).fit(df, schema=42)


def test_empty_dataframe_is_an_input_like_any_other():
    empty = pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=float)})
    t = frame_table(empty)
    assert list(t.columns) == ["a", "b"] and len(t) == 0


def test_docstring_examples_run():
    import doctest

    import privsample.api.release
    import privsample.api.synthesizer
    import privsample.privacy.ledger

    for module in (privsample, privsample.api.synthesizer, privsample.api.release, privsample.privacy.ledger):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


@pytest.mark.parametrize(
    "make",
    [
        lambda: Synthesizer("aim", iters=0),
        lambda: Synthesizer("aim", iters="many"),
        lambda: Synthesizer("aim", max_model_size=-1),
        lambda: Synthesizer("aim", max_memory_mb=float("nan")),
        lambda: Synthesizer("ppsyn", schedule="fast"),
        lambda: Synthesizer("ppsyn", schedule="note", eta=2),
        lambda: Synthesizer("ppsyn", max_candidates=0),
        lambda: Synthesizer("ppsyn", max_candidates=2.5),
        lambda: Synthesizer("aim", max_candidates=10),
        lambda: Synthesizer("ppsyn", schedule="note", max_candidates=10),
    ],
)
def test_bad_options_raise_input_error_at_construction(make):
    with pytest.raises(InputError):
        make()


def test_bad_sample_arguments_raise_input_error(df):
    s = Synthesizer("mst", epsilon=2, **FAST).fit(df, seed=1)
    for rows in ("x", 2.5, -1, True):
        with pytest.raises(InputError, match="^rows must"):
            s.sample(rows)
    with pytest.raises(InputError, match="seed"):
        s.sample(5, seed="x")


def test_every_public_name_is_exported_and_documented():
    """``privsample.__all__`` is the lazy map plus the light names (errors, version); each has a docstring."""
    import privsample

    assert set(privsample.__all__) == set(privsample._LAZY) | {
        "InputError",
        "DataError",
        "DiscoveryLossWarning",
        "__version__",
    }
    for name in privsample.__all__:
        if name != "__version__":
            assert getattr(privsample, name).__doc__, name


def test_max_candidates_reaches_ppsyn_from_python_and_the_command_line(df, tmp_path):
    """``max_candidates`` is passed to PPSyn-DP (recorded in the model's parameters), from both front ends."""
    from privsample.cli import main

    s = Synthesizer("ppsyn", epsilon=2, max_candidates=3, iters=20).fit(df, seed=1)
    assert s.model.params["max_candidates"] == 3
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    out, model = tmp_path / "s.csv", tmp_path / "m.zip"
    args = [
        "synth",
        str(src),
        "-o",
        str(out),
        "--save-model",
        str(model),
        "--seed",
        "1",
        "-q",
        "--iters",
        "20",
        "-e",
        "2",
    ]
    try:
        main([*args, "--max-candidates", "3"])
    except SystemExit as done:
        assert done.code in (0, None)
    assert privsample.load(model).model.params["max_candidates"] == 3
