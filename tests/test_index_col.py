"""An index column (``--index-col`` / ``index_col=``): dropped from the header (public) before any record is read,
on every engine, never synthesized, counted or written; a file with it and the same file without it give the same
run for the same seed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

import privsample
from privsample.data.table import read_table, table_columns
from privsample.data.csv_layout import csv_layout
from privsample.errors import InputError
from tests.cli import run
from tests.test_cli import FAST, small_schema, small_table

E = ["--epsilon", 1, "--seed", 3]


@pytest.fixture
def tables(tmp_path):
    """plain.csv (no index), indexed.csv (``df.to_csv()``: header ``,color,size,flag``), indexed.parquet (an
    unnamed first column), named.csv (an index column named 'id', last), schema.yaml."""
    df = small_table()
    df.to_csv(tmp_path / "plain.csv", index=False)
    df.to_csv(tmp_path / "indexed.csv")
    t = pa.table({"": np.arange(len(df)), **{c: df[c].to_numpy() for c in df.columns}})
    pq.write_table(t, tmp_path / "indexed.parquet")
    df.assign(id=np.arange(len(df))).to_csv(tmp_path / "named.csv", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(small_schema()))
    return tmp_path


# -- the table layer ------------------------------------------------------------------------------------------
def test_the_header_decides_the_index_column(tables):
    assert list(csv_layout(tables / "indexed.csv", index_col=1).names) == ["color", "size", "flag"]
    assert csv_layout(tables / "indexed.csv", index_col="1").index == 0  # text: a whole number is a position
    assert table_columns(tables / "named.csv", index_col="id") == ["color", "size", "flag"]
    assert table_columns(tables / "named.csv", index_col=4) == ["color", "size", "flag"]
    assert table_columns(tables / "indexed.parquet", index_col=1) == ["color", "size", "flag"]
    plain = read_table(tables / "plain.csv")
    for path in ("indexed.csv", "indexed.parquet"):
        got = read_table(tables / path, index_col=1)
        assert list(got.columns) == ["color", "size", "flag"]
        assert got["color"].equals(plain["color"]) and (got["size"].astype(str) == plain["size"]).all()


def test_a_name_wins_over_a_position(tmp_path):
    (tmp_path / "t.csv").write_text("a,2,b\n1,2,3\n")
    assert table_columns(tmp_path / "t.csv", index_col="2") == ["a", "b"]  # the column named '2'
    assert table_columns(tmp_path / "t.csv", index_col=2) == ["a", "b"]  # an int is a position
    assert table_columns(tmp_path / "t.csv", index_col="3") == ["a", "2"]  # no column named '3': position 3


@pytest.mark.parametrize(
    "index_col, message",
    [
        ("id", r"--index-col 'id' is not a column of the header \('', 'color', 'size', 'flag'\)"),
        (5, r"--index-col 5 is not a column position of the header \(1 to 4\)"),
        ("0", r"--index-col 0 is not a column position"),
        (2.0, "must be a column name or a 1-based position"),
    ],
)
def test_an_index_column_that_is_not_there_is_refused(tables, index_col, message):
    with pytest.raises(InputError, match=message):
        table_columns(tables / "indexed.csv", index_col=index_col)


def test_the_empty_header_cell_refusal_names_the_option(tables):
    for path in ("indexed.csv", "indexed.parquet"):
        with pytest.raises(InputError, match=r"column 1 of .* has no name \(.*--index-col 1 \(Python: index_col=1\)"):
            table_columns(tables / path)
    (tables / "two.csv").write_text(",a,\n1,2,3\n")
    with pytest.raises(InputError, match="column 3 of the header has no name"):  # only the index is dropped
        table_columns(tables / "two.csv", index_col=1)


# -- the command line -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("path", ["indexed.csv", "indexed.parquet"])
@pytest.mark.parametrize("schema", [False, True])
def test_synth_drops_the_index_column(tables, engine, path, schema, capsys):
    """The output has the data columns only, and equals the run on the file without the index column."""
    more = ["--engine", engine, *(["--schema", tables / "schema.yaml"] if schema else [])]
    code, text = run(["synth", tables / "plain.csv", "-o", tables / "a.csv", *E, *FAST, *more], capsys)
    assert code == 0, text
    argv = ["synth", tables / path, "-o", tables / "b.csv", "--index-col", "1", *E, *FAST, *more]
    code, text = run(argv, capsys)
    assert code == 0, text
    a, b = pd.read_csv(tables / "a.csv"), pd.read_csv(tables / "b.csv")
    assert list(b.columns) == ["color", "size", "flag"]
    pd.testing.assert_frame_equal(a, b)


def test_synth_drops_a_named_index_column(tables, capsys):
    argv = ["synth", tables / "named.csv", "-o", tables / "b.csv", "--index-col", "id", *E, *FAST]
    code, text = run(argv, capsys)
    assert code == 0, text
    assert list(pd.read_csv(tables / "b.csv").columns) == ["color", "size", "flag"]


def test_synth_refuses_a_missing_index_column_before_any_spend(tables, capsys, monkeypatch):
    import privsample.privacy.accountant as accountant

    monkeypatch.setattr(accountant.Accountant, "spend", lambda *a, **k: pytest.fail("spent"))
    argv = ["synth", tables / "plain.csv", "-o", tables / "b.csv", "--index-col", "id", *E, *FAST]
    code, text = run(argv, capsys)
    assert code == 2 and "--index-col 'id' is not a column of the header" in text, text
    assert not (tables / "b.csv").exists()


# -- Python ---------------------------------------------------------------------------------------------------
OPTS = {"iters": 30}


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("path", ["indexed.csv", "indexed.parquet"])
def test_synthesize_drops_the_index_column(tables, engine, path):
    kw = {"epsilon": 1, "method": "mst", "seed": 3, "engine": engine, "method_options": OPTS}
    a = privsample.synthesize(tables / "plain.csv", **kw).table
    b = privsample.synthesize(tables / path, index_col=1, **kw).table
    pd.testing.assert_frame_equal(a, b)


def test_synthesizer_fit_drops_the_index_column(tables):
    s = privsample.Synthesizer("mst", epsilon=1, **OPTS).fit(tables / "indexed.csv", seed=3, index_col=1)
    assert list(s.sample(10, seed=0).columns) == ["color", "size", "flag"]
    s = privsample.Synthesizer("mst", epsilon=1, **OPTS).fit(tables / "named.csv", seed=3, index_col="id")
    assert list(s.sample(10, seed=0).columns) == ["color", "size", "flag"]


def test_an_in_memory_table_drops_the_index_column_too(tables):
    """``pd.read_csv`` of a file with a pandas index names it 'Unnamed: 0'."""
    df = pd.read_csv(tables / "indexed.csv")
    kw = {"epsilon": 1, "method": "mst", "seed": 3, "method_options": OPTS}
    a = privsample.synthesize(df.drop(columns="Unnamed: 0"), **kw).table
    pd.testing.assert_frame_equal(privsample.synthesize(df, index_col="Unnamed: 0", **kw).table, a)
    b = privsample.synthesize(pa.Table.from_pandas(df), index_col=1, **kw).table  # decoded dtypes
    pd.testing.assert_frame_equal(b, a, check_dtype=False)


@pytest.mark.parametrize("index_col", [0, -1, True, "", 1.5])
def test_a_bad_index_col_argument_is_refused(tables, index_col):
    with pytest.raises(InputError, match="index_col must be a column name or a 1-based column position"):
        privsample.Synthesizer("mst", epsilon=1).fit(tables / "indexed.csv", index_col=index_col)


# -- Spark ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["indexed.csv", "indexed.parquet"])
@pytest.mark.parametrize("schema", [False, True])
def test_spark_drops_the_index_column(tables, spark, path, schema):
    """The Spark engine reads the same columns (and so gives the run of the NumPy engine on the plain file)."""
    kw = {"epsilon": 1, "method": "mst", "seed": 3, "method_options": OPTS}
    if schema:
        kw["schema"] = tables / "schema.yaml"
    a = privsample.synthesize(tables / "plain.csv", engine="numpy", **kw).table
    b = privsample.synthesize(tables / path, index_col=1, engine="spark", engine_options={"spark": spark}, **kw).table
    assert list(b.columns) == ["color", "size", "flag"]
    pd.testing.assert_frame_equal(a, b)


@pytest.fixture(scope="module")
def spark():
    import shutil

    from privsample.marginals.spark_engine import start_session

    if not shutil.which("java"):
        pytest.skip("Spark needs Java 17+")
    session = start_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()
