"""Private discovery on every engine: exact value counts in canonical order (``ColumnValues``), the same noisy
schema and ledger from the NumPy, DuckDB and Spark paths under the same seeded noise."""

from __future__ import annotations

import decimal
import warnings

import numpy as np
import pandas as pd
import pytest

from privsample.data.column_values import ColumnValues, ValueSource, frame_values
from privsample.data.discovery import private_schema
from privsample.data.table import read_table
from privsample.marginals.duckdb_engine import DuckDBEngine, DuckDBValues
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import make_noise


def table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Missing values, text, integer codes, numbers written in several ways, floats, dates, booleans."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "cat": rng.choice(["b", "a", " c ", None, "NA"], n, p=[0.4, 0.3, 0.15, 0.1, 0.05]),
            "code": rng.choice(["007", "7", "1.50", "1.5", "x", "1e3"], n),
            "num": np.round(rng.normal(50, 10, n), 2),
            "float": rng.choice([1.0, 2.5, -0.0, 0.0, np.nan, 1e-5, 1e16], n),
            "int": pd.array(rng.choice([3, 1, 2, None], n), dtype="Int64"),
            "flag": rng.choice([True, False], n),
            "day": pd.to_datetime(rng.choice(["2020-01-01", "2021-05-06", "1999-12-31"], n)),
            "age": rng.integers(18, 90, n),
        }
    )


def discover(src, seed: int = 7) -> dict:
    acc = Accountant.from_epsilon_delta(1.0, 1e-6, delta_slack=1e-7)
    schema = private_schema(src, acc, make_noise(seed, quiet=True), rho=acc.rho_total, delta=1e-7, share=None)
    return {"schema": schema.to_dict(), "ledger": acc.to_dict()}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("disc")
    df = table()
    df.to_csv(d / "t.csv", index=False)
    pq = df.copy()
    pq["dec"] = [decimal.Decimal(f"{v:.2f}") for v in np.linspace(0, 5, len(df))]
    pq.to_parquet(d / "t.parquet", index=False)
    return {"csv": d / "t.csv", "parquet": d / "t.parquet"}


# -- ColumnValues -------------------------------------------------------------------------------------
def test_column_values_canonical_form():
    cv = ColumnValues(1, np.array(["b", "10", "2", "a", "2", "1.50"], dtype=object), np.array([1, 2, 3, 4, 5, 6]))
    assert cv.values.tolist() == ["1.50", "2", "10", "a", "b"]  # numbers by number, then text
    assert cv.counts.tolist() == [6, 8, 2, 4, 1] and cv.n_missing == 1
    f = ColumnValues(0, np.array([2.0, -0.0, np.nan, 0.0, 1e-5]), np.array([1, 2, 3, 4, 5]))
    assert f.values.dtype == np.float64 and [str(v) for v in f.values] == ["0.0", "1e-05", "2.0"]
    assert f.counts.tolist() == [6, 5, 1] and f.n_missing == 3  # -0.0 is 0.0, NaN is missing
    b = ColumnValues(0, np.array([True, False, True]), np.array([1, 2, 3]))
    assert b.texts() == ["False", "True"] and b.counts.tolist() == [2, 4]


def test_frame_order_does_not_change_the_schema():
    df = table(1500)
    shuffled = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    assert discover(df) == discover(shuffled)
    assert isinstance(frame_values(df), ValueSource)


# -- NumPy against DuckDB (and Spark) -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_numpy_and_duckdb_discover_the_same_schema(files, kind):
    path = files[kind]
    expected = discover(read_table(path, allow_empty=True))
    with DuckDBValues(path, threads=1) as values:
        got = discover(values)
        frame = read_table(path, allow_empty=True)
        for name in values.names:
            a, b = values.column_values(name), frame_values(frame).column_values(name)
            assert a.n_missing == b.n_missing and a.texts() == b.texts() and a.counts.tolist() == b.counts.tolist()
    assert got == expected
    assert any(c["kind"] == "numeric" for c in got["schema"]["discovery"]["columns"])


def test_duckdb_engine_takes_over_the_cleaned_rows(files):
    from privsample.data.encoding import release_domain

    path = files["csv"]
    values = DuckDBValues(path, threads=1)
    acc = Accountant.from_epsilon_delta(1.0, 1e-6, delta_slack=1e-7)
    schema = release_domain(
        private_schema(values, acc, make_noise(1, quiet=True), rho=acc.rho_total, delta=1e-7), False
    )
    adopted = DuckDBEngine(values, schema, release=True, clip=True)
    fresh = DuckDBEngine(path, schema, release=True, clip=True, threads=1)
    try:
        cliques = [(a,) for a in schema.names] + [(schema.names[0], schema.names[2])]
        ma, mf = adopted.marginals(cliques), fresh.marginals(cliques)
        assert all(np.array_equal(ma[c], mf[c]) for c in cliques)
    finally:
        adopted.close()
        fresh.close()
    with pytest.raises(Exception, match="closed"):
        values.row_count()


def test_spark_discovers_the_same_schema(files):
    pytest.importorskip("pyspark")
    from privsample.marginals.spark_engine import SparkValues, _java_home_ok, start_session

    if not _java_home_ok():
        pytest.skip("Spark needs Java 17+")
    spark = start_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    try:
        for kind in ("csv", "parquet"):
            expected = discover(read_table(files[kind], allow_empty=True))
            with SparkValues(str(files[kind]), spark=spark) as values:
                assert discover(values) == expected, kind
        # the pipeline: discovery by Spark, then the engine codes the same persisted rows
        from privsample.api.synthesizer import synthesize

        runs = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for engine, opts in (("numpy", None), ("spark", {"spark": spark})):
                runs[engine] = synthesize(
                    files["csv"],
                    epsilon=1.0,
                    method="mst",
                    seed=3,
                    engine=engine,
                    rows=200,
                    engine_options=opts,
                    method_options={"iters": 30},
                )
        assert runs["numpy"].schema.to_dict() == runs["spark"].schema.to_dict()
        assert runs["numpy"].table.equals(runs["spark"].table)
    finally:
        spark.stop()


# -- the pipeline -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_synthesize_without_a_schema_on_duckdb(files, kind):
    from privsample.api.synthesizer import synthesize

    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for engine in ("numpy", "duckdb"):
            runs[engine] = synthesize(
                files[kind], epsilon=1.0, method="mst", seed=3, engine=engine, rows=300, method_options={"iters": 30}
            )
    a, b = runs["numpy"], runs["duckdb"]
    assert a.schema.to_dict() == b.schema.to_dict()
    assert a.ledger == b.ledger
    assert a.table.equals(b.table)
    assert b.model.params["engine"] == "duckdb"


def test_auto_picks_duckdb_for_a_large_file_without_a_schema(files, monkeypatch):
    import psutil

    from privsample.marginals.open import check_source

    class Small:
        available = 1000

    monkeypatch.setattr(psutil, "virtual_memory", lambda: Small())
    assert check_source(files["parquet"], "auto", None) == (None, "duckdb")


def test_model_size_is_refused_before_reading(files, monkeypatch):
    """Without a schema the worst case of discovery (column names only) is checked before any record is read."""
    from privsample.errors import ResourceLimitError
    from privsample.marginals import duckdb_engine
    from privsample.api.synthesizer import synthesize

    def no_read(self):
        raise AssertionError("records read")

    monkeypatch.setattr(duckdb_engine.DuckDBValues, "_read", no_read)
    with pytest.raises(ResourceLimitError, match="nothing was spent"):
        synthesize(
            files["csv"],
            epsilon=1.0,
            method="aim",
            seed=0,
            engine="duckdb",
            method_options={"max_memory_mb": 0.001},
        )


def test_sorted_runs_counts_like_unique():
    from privsample.marginals.duckdb_engine import sorted_runs

    rng = np.random.default_rng(0)
    x = np.sort(rng.integers(0, 50, 1000).astype(float))
    v, c = sorted_runs(x)
    u, k = np.unique(x, return_counts=True)
    assert np.array_equal(v, u) and np.array_equal(c, k) and c.dtype == np.int64
    e = sorted_runs(np.zeros(0))
    assert len(e[0]) == 0 and len(e[1]) == 0
