"""A pandas DataFrame's dtypes come back on its synthetic tables (``privsample.data.dtypes``): bool, nullable Int64 and
boolean, category (the released categories only), string / str, and plain int64, float64 and object; pyarrow,
polars and file inputs keep their decoded dtypes."""

from __future__ import annotations

import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import Synthesizer
from privsample.data.dtypes import dtype_specs, restore_dtypes, streamed_specs
from privsample.data.schema import Categorical, Numeric, Schema

FAST = {"iters": 30}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise, discovery losses
        yield


@pytest.fixture(scope="module")
def typed() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 3000
    return pd.DataFrame(
        {
            "b": rng.random(n) < 0.4,
            "I": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 5, n)), dtype="Int64"),
            "B": pd.array(np.where(rng.random(n) < 0.1, None, rng.random(n) < 0.5), dtype="boolean"),
            # 'w' is a category no record holds: never released, never in the output
            "c": pd.Categorical(rng.choice(["x", "y", "z"], n), categories=["z", "y", "x", "w"], ordered=True),
            "s": pd.array(rng.choice(["p", "q"], n), dtype="string"),
            "t": pd.Series(rng.choice(["u", "v"], n), dtype="str"),
            "i": rng.integers(17, 90, n),
            "f": rng.normal(size=n),
            "o": pd.Series(rng.choice(["k", "l"], n), dtype=object),
        }
    )


def check_dtypes(out: pd.DataFrame, typed: pd.DataFrame, schema) -> None:
    assert list(out.columns) == list(typed.columns)
    assert out["b"].dtype in ("bool", "boolean")  # boolean when a missing value was drawn
    assert out["i"].dtype in ("int64", "Int64")
    for name in ("I", "B", "s", "t", "f", "o"):
        assert out[name].dtype == typed[name].dtype, name
    c = out["c"].dtype
    released = [v for v in ["z", "y", "x"] if v in schema["c"].categories]
    assert isinstance(c, pd.CategoricalDtype) and c.ordered
    assert list(c.categories) == released + ([schema["c"].other] if schema["c"].other else [])
    assert "w" not in c.categories
    assert set(out["c"].dropna()) <= set(c.categories)


def test_synthesizer_gives_the_dtypes_back(typed):
    s = Synthesizer("mst", epsilon=4, **FAST).fit(typed, seed=1)
    out = s.sample(500, seed=2)
    check_dtypes(out, typed, s.model.schema)
    assert out["b"].isin([True, False]).all() or out["b"].dtype == "boolean"
    where = s.sample(50, seed=2, where={"s": "p"})  # conditional draws too
    assert where["s"].dtype == "string" and (where["s"] == "p").all()


def test_synthesize_gives_the_dtypes_back(typed):
    res = privsample.synthesize(typed, epsilon=4, method="mst", seed=1, rows=500, method_options=FAST)
    check_dtypes(res.table, typed, res.model.schema)


def test_a_saved_model_keeps_the_dtypes_and_only_released_categories(typed, tmp_path):
    s = Synthesizer("mst", epsilon=4, **FAST).fit(typed, seed=1)
    s.save(tmp_path / "m.zip")
    with zipfile.ZipFile(tmp_path / "m.zip") as z:
        saved = json.loads(z.read("model.json"))["params"]["dtypes"]
    assert saved["c"] == {"categories": [v for v in ["z", "y", "x"] if v in s.model.schema["c"].categories],
                          "ordered": True}  # fmt: skip
    assert "o" not in saved  # object columns come back as decoded
    loaded = privsample.load(tmp_path / "m.zip")
    pd.testing.assert_frame_equal(loaded.sample(200, seed=4), s.sample(200, seed=4))


def test_a_reviewed_schema_gives_its_categories(typed):
    schema = Schema(
        [
            Categorical("c", ["x", "y", "v"]),  # 'v' is not among the input's categories; 'z' is left out
            Categorical("b", ["True", "False"]),
            Numeric("i", 17, 90, bins=8, integer=True),
        ],
        provenance="user",
    )
    out = Synthesizer("mst", epsilon=4, **FAST).fit(typed, schema=schema, seed=1).sample(300, seed=0)
    assert list(out["c"].cat.categories) == ["y", "x", "v"]  # the input's order, then the schema's others
    assert out["b"].dtype == "bool" and out["i"].dtype == "int64"  # nothing missing: the plain dtypes


def test_other_inputs_keep_their_decoded_dtypes(typed, tmp_path):
    pa = pytest.importorskip("pyarrow")
    plain = typed[["i", "f", "o"]]
    expected = {"i": "Int64", "f": "float64", "o": "object"}
    arrow = Synthesizer("mst", epsilon=4, **FAST).fit(pa.Table.from_pandas(plain), seed=1)
    assert "dtypes" not in arrow.model.params
    assert arrow.sample(50, seed=0).dtypes.astype(str).to_dict() == expected
    plain.to_csv(tmp_path / "t.csv", index=False)
    assert (
        privsample.synthesize(tmp_path / "t.csv", epsilon=4, method="mst", seed=1, rows=50)
        .table.dtypes.astype(str)
        .to_dict()
        == expected
    )
    pl = pytest.importorskip("polars")
    polars = Synthesizer("mst", epsilon=4, **FAST).fit(pl.from_pandas(plain), seed=1)
    assert polars.sample(50, seed=0).dtypes.astype(str).to_dict() == expected


# -- the conversion of one column -----------------------------------------------------------------------------
SCHEMA = Schema(
    [
        Categorical("b", ["True"], nullable=True, other="(other)"),  # 'False' not released
        Categorical("b2", ["True", "False"], nullable=True, other="(other)"),
        Numeric("i", 0, 10, bins=5, integer=True, nullable=True),
        Categorical("n", ["1", "2"], other="(other)"),
        Categorical("k", ["x"], other="(other)"),
    ],
    provenance="user",
)


def restored(column: str, values: list, dtype):
    table = pd.DataFrame({column: pd.Series(values, dtype="Int64" if column == "i" else object)})
    return restore_dtypes(table, dtype_specs({column: dtype}, SCHEMA), SCHEMA)[column]


def test_a_bool_catch_all_is_the_value_not_released():
    out = restored("b", ["True", "(other)", "True"], np.dtype(bool))
    assert out.dtype == "bool" and out.tolist() == [True, False, True]
    out = restored("b2", ["True", "(other)", None], np.dtype(bool))  # both released: the catch-all is missing
    assert out.dtype == "boolean" and out.isna().tolist() == [False, True, True]


def test_a_value_the_dtype_cannot_hold_gives_the_nearest_dtype():
    assert restored("i", [1, None, 3], np.dtype("int64")).dtype == "Int64"
    assert restored("i", [1, 2, 3], np.dtype("int64")).dtype == "int64"
    assert restored("i", [1, 200, 3], np.dtype("int8")).dtype == "Int64"  # 200 does not fit an int8
    assert restored("n", ["1", "(other)"], np.dtype("int64")).dtype == object  # a catch-all: as decoded
    assert restored("n", ["1", "2"], np.dtype("float64")).tolist() == [1.0, 2.0]
    assert restored("k", ["x", "(other)"], pd.StringDtype()).dtype == "string"


def test_a_model_file_edited_by_hand_leaves_the_column_as_decoded():
    table = pd.DataFrame({"k": pd.Series(["x"], dtype=object)})
    for spec in ("no such dtype", {"categories": 3}, 42):
        assert restore_dtypes(table, {"k": spec}, SCHEMA)["k"].dtype == object


# -- the command line: Parquet holds the dtypes -------------------------------------------------------------------
def run_cli(argv) -> None:
    from privsample.cli import main

    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        assert not exc.code, exc.code


@pytest.fixture(scope="module")
def dated_model(typed, tmp_path_factory):
    """A model fitted on a DataFrame with datetime64 (naive and with a time zone), bool, Int64, boolean, category,
    string and plain columns, saved."""
    rng = np.random.default_rng(8)
    n = len(typed)
    frame = typed.assign(
        day=pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D"),
        at=(pd.Timestamp("2022-01-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 300 * 86400, n), unit="s"))
        .tz_convert("Europe/Paris"),
    )  # fmt: skip
    path = tmp_path_factory.mktemp("dated") / "m.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Synthesizer("mst", epsilon=4, **FAST).fit(frame, seed=1).save(path)
    return frame, path


def test_cli_sample_to_parquet_writes_the_dtypes_python_returns(dated_model, tmp_path):
    frame, model = dated_model
    run_cli(["sample", model, "-o", tmp_path / "out.parquet", "--rows", 400, "--seed", 2, "--quiet"])
    expected = privsample.load(model).sample(400, seed=2)
    got = pd.read_parquet(tmp_path / "out.parquet")
    assert got["o"].dtype == "str" and expected["o"].dtype == object  # text: pandas reads Parquet text as str
    got["o"] = got["o"].astype(object)
    assert got.dtypes.to_dict() == expected.dtypes.to_dict()
    pd.testing.assert_frame_equal(got, expected)
    for name in ("day", "at", "I", "B", "s", "f"):
        assert got[name].dtype == frame[name].dtype, name
    assert isinstance(got["c"].dtype, pd.CategoricalDtype) and "w" not in got["c"].cat.categories  # as released
    # CSV is text in the columns' own formats, as before: the same values
    run_cli(["sample", model, "-o", tmp_path / "out.csv", "--rows", 400, "--seed", 2, "--quiet"])
    text = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert (pd.to_datetime(text["at"], format="ISO8601") == expected["at"]).all()
    assert (text["b"] == expected["b"].astype(str)).all() and (text["c"] == expected["c"].astype(str)).all()


def test_cli_sample_in_chunks_keeps_one_dtype_per_column(dated_model, tmp_path, monkeypatch):
    from privsample.synth import model as synth_model

    monkeypatch.setattr(synth_model, "CHUNK_ROWS", 1000)  # three chunks, each with its own Parquet row group
    frame, model = dated_model
    run_cli(["sample", model, "-o", tmp_path / "out.parquet", "--rows", 2500, "--seed", 2, "--quiet"])
    got = pd.read_parquet(tmp_path / "out.parquet")
    one = privsample.load(model).sample(1000, seed=2)  # the first chunk is the draw of as many rows
    assert len(got) == 2500
    for name in ("day", "at", "I", "B", "s", "f"):
        assert got[name].dtype == frame[name].dtype, name
    assert isinstance(got["c"].dtype, pd.CategoricalDtype)
    assert got["b"].dtype in ("bool", "boolean") and got["i"].dtype in ("int64", "Int64")
    pd.testing.assert_frame_equal(got.iloc[:1000], one, check_dtype=False, check_categorical=False)


def test_streamed_specs_are_nullable_where_a_chunk_may_draw_a_missing_value():
    specs = dtype_specs({"b": np.dtype(bool), "i": np.dtype("int32"), "n": np.dtype("int64")}, SCHEMA)
    assert streamed_specs(specs, SCHEMA) == {"b": "boolean", "i": "Int32", "n": "int64"}  # 'n' is not nullable
    table = pd.DataFrame({"b": ["True", "True"], "i": pd.array([1, 2], dtype="Int64")})
    out = restore_dtypes(table, streamed_specs(specs, SCHEMA), SCHEMA)
    assert out["b"].dtype == "boolean" and out["i"].dtype == "Int32"  # in every chunk, a missing value drawn or not
