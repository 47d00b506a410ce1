"""SparkEngine (local mode) gives the NumPy engine's marginals; bad input fails fast with one line."""

from __future__ import annotations

import itertools
import json
import time

import numpy as np
import pandas as pd
import pytest

from privsample.data.encoding import encode, parse_number
from privsample.data.schema import Categorical as C
from privsample.data.schema import Numeric as N
from privsample.data.schema import Schema
from privsample.data.sql_dialect import SPARK
from privsample.data.table import read_table
from privsample.errors import InputError
from privsample.marginals.numpy_engine import NumpyEngine
from privsample.marginals.spark_engine import _java_home_ok, check_master
from tests.conftest import SHARED_DATA, needs_shared
from tests.test_engines import ADULT, NUMBERS, SMALL, adult_schema, all_cliques, assert_same, write

# CI installs the spark extra, so a missing pyspark fails here; only a machine without Java skips.
try:
    import pyspark  # noqa: F401
except ImportError:  # pragma: no cover
    pytest.fail("pyspark is not installed: pip install -c constraints.txt -e '.[test,spark]'", pytrace=False)
NO_JAVA = "Spark needs Java 17+: no 'java' on PATH and JAVA_HOME not set"
needs_java = pytest.mark.skipif(not _java_home_ok(), reason=NO_JAVA)
DATA = SHARED_DATA
DISCRETISED = DATA / "adult.csv"


@pytest.fixture(scope="module")
def spark():
    if not _java_home_ok():
        pytest.skip(NO_JAVA)
    from privsample.marginals.spark_engine import start_session

    session = start_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()


def engine(source, schema, spark, **kw):
    from privsample.marginals.spark_engine import SparkEngine

    return SparkEngine(source, schema, spark=spark, **kw)


def discretised_schema() -> Schema:
    dom = json.loads((DATA / "adult-domain.json").read_text())
    return Schema(
        [
            N(a, 0, k - 1, bins=k, integer=True) if k > 50 else C(a, tuple(str(i) for i in range(k)))
            for a, k in dom.items()
        ]
    )


@needs_shared("adult.csv", "adult-domain.json")
def test_discretised_adult_file_and_dataframe(spark):
    schema = discretised_schema()
    df = pd.read_csv(DISCRETISED)
    ref = NumpyEngine({a: df[a].to_numpy().astype("int64") for a in schema.names}, schema.domain())
    cliques = (
        [(a,) for a in schema.names]
        + list(itertools.combinations(schema.names, 2))
        + [("age", "sex", "income>50K"), ("income>50K", "race", "workclass")]
    )
    expected = ref.marginals(cliques)
    with engine(DISCRETISED, schema, spark) as eng:
        assert eng.total() == len(df)
        assert_same(eng.marginals(cliques), expected)
        queries = eng.stats["queries"]
        again = eng.marginals([("sex", "age"), ("race",), ("age", "sex", "income>50K")])
        assert eng.stats["queries"] == queries  # all cached
        assert np.array_equal(again[("sex", "age")], expected[("age", "sex")].T)
    typed = spark.createDataFrame(df)  # a DataFrame of integer columns
    some = cliques[:5] + cliques[-12:]
    with engine(typed, schema, spark, batching="sets") as eng:
        assert_same(eng.marginals(some), {c: expected[c] for c in some})


@needs_shared("adult_raw.csv")
def test_raw_adult_csv_equals_numpy(spark):
    """Text cleaning, NA values, number parsing, bins, nullable and other codes: as ``encode``."""
    schema = adult_schema()
    cliques = all_cliques(schema)
    ref = NumpyEngine(encode(read_table(ADULT), schema, other=True), schema.domain())
    with engine(ADULT, schema, spark, other=True) as eng:
        assert_same(eng.marginals(cliques), ref.marginals(cliques))


def test_small_csv_policies(spark, tmp_path):
    text = (
        "x , k,c,d,extra\n"
        " 0,0,a,1,z\n2.5,,b, 2 ,z\n10,9, ? ,3,z\n7.5,3,NA,(other),z\n 9.99 ,8,a,1,z\n"
        '1e0,+4,"b",2,z\n\n5,NaN,a,3,z\n'
    )
    p = write(tmp_path, text)
    cliques = [(a,) for a in SMALL.names] + [tuple(SMALL.names)]
    ref = NumpyEngine(encode(read_table(p), SMALL), SMALL.domain())
    with engine(p, SMALL, spark) as eng:
        assert_same(eng.marginals(cliques), ref.marginals(cliques))
    p = write(tmp_path, "x,k,c,d\n-5,0,a,1\n11,12,b,7\n3,-1,zz,\n4,4,,2\n")
    schema = Schema([SMALL["x"], SMALL["k"], C("c", ("a", "b"), nullable=True, other="(o)"), SMALL["d"]])
    ref = NumpyEngine(encode(read_table(p), schema, clip=True, other=True), schema.domain())
    with engine(p, schema, spark, clip=True, other=True) as eng:
        assert_same(eng.marginals(cliques), ref.marginals(cliques))


def test_number_grammar_agrees(spark):
    """The Spark dialect's number parser accepts exactly what ``parse_number`` accepts."""
    exprs = ", ".join(f"{SPARK.number(SPARK.lit(s))} AS v{i}" for i, s in enumerate(NUMBERS))
    row = spark.sql(f"SELECT {exprs}").collect()[0]
    for i, s in enumerate(NUMBERS):
        want = parse_number(s)
        got = row[f"v{i}"]
        assert (got is None) == (want is None), s
        if want is not None:
            assert got == want or (np.isnan(got) and np.isnan(want)), s


@pytest.mark.parametrize(
    "text, column",
    [
        ("x,k,c,d\n11,1,a,1\n", "x"),
        ("x,k,c,d\nabc,1,a,1\n", "x"),
        ("x,k,c,d\n1,1,zz,1\n", "c"),
        ("x,k,c,d\n1,1,a,\n", "d"),
        ("x,k,c\n1,1,a\n", "d"),
    ],
)
def test_errors_match_encode(spark, tmp_path, text, column):
    p = write(tmp_path, text)
    with pytest.raises(InputError, match=f"'{column}'") as exc:
        engine(p, SMALL, spark)
    with pytest.raises(InputError, match=f"'{column}'"):
        encode(read_table(p), SMALL)
    assert "\n" not in str(exc.value)


def test_bad_sources(spark, tmp_path):
    for name, text in [("t.json", "{}"), ("t.csv", "")]:
        with pytest.raises(InputError):
            engine(write(tmp_path, text, name), SMALL, spark)
    with pytest.raises(InputError, match="not found"):
        engine(tmp_path / "missing.parquet", SMALL, spark)
    with pytest.raises(InputError, match="fields|Malformed"):
        engine(write(tmp_path, "x,k,c,d\n1,2\n"), SMALL, spark)
    df = spark.createDataFrame([(1.0, 2, "a")], ["x", "k", "c"])
    with pytest.raises(InputError, match="column 'd' is in the schema but not in the data"):
        engine(df, SMALL, spark)
    dup = spark.createDataFrame([(1.0, 2, "a", "1", "1")], ["x", "k", "c", "d", "d"])
    with pytest.raises(InputError, match="duplicate"):
        engine(dup, SMALL, spark)


def test_master_checks_fail_fast():
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="cannot reach the Spark master"):
        check_master("spark://127.0.0.1:1", timeout=3)
    assert time.perf_counter() - t0 < 5
    for bad in ("foo://host:1", "local[x]", "spark://host"):
        with pytest.raises(InputError):
            check_master(bad)
    check_master("local[2]")


@needs_java
def test_cli_synth_with_spark(spark, tmp_path, capsys):
    from privsample.cli import main

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "x": rng.uniform(0, 10, 400).round(2),
            "k": rng.integers(0, 10, 400),
            "c": rng.choice(["a", "b"], 400),
            "d": rng.choice(["1", "2", "3"], 400),
        }
    )
    data, sch, out = tmp_path / "t.parquet", tmp_path / "s.yaml", tmp_path / "out.csv"
    df.to_parquet(data, index=False)
    SMALL.save(sch)
    args = [
        "synth",
        str(data),
        "-o",
        str(out),
        "--epsilon",
        "2",
        "--schema",
        str(sch),
        "--method",
        "mst",
        "--iters",
        "20",
        "--seed",
        "0",
        "--quiet",
        "--engine",
        "spark",
    ]
    with pytest.raises(SystemExit) as ex:
        main(args + ["--spark-master", "spark://127.0.0.1:1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and "cannot reach the Spark master" in err[-1] and not out.exists()
    main(args)  # the module's session (getOrCreate) is reused and left running
    assert len(pd.read_csv(out)) > 0
    assert spark.range(2).count() == 2


def test_python_api_takes_a_spark_dataframe(spark, tmp_path):
    """``synthesize`` on a Spark DataFrame (engine auto -> spark) gives the seeded NumPy run's table."""
    from privsample.api.synthesizer import synthesize

    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "x": rng.uniform(0, 10, 300),
            "k": rng.integers(0, 10, 300).astype(float),
            "c": rng.choice(["a", "b"], 300),
            "d": rng.choice(["1", "2", "3"], 300),
        }
    )
    df.loc[::7, "k"] = np.nan
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    kw = dict(epsilon=2.0, method="mst", schema=SMALL, rows=40, seed=5, method_options={"iters": 20})
    ref = synthesize(path, engine="numpy", **kw)
    got = synthesize(spark.read.parquet(str(path)), **kw)
    assert got.model.params["engine"] == "spark"
    pd.testing.assert_frame_equal(ref.table, got.table)
    with pytest.raises(InputError, match="needs the spark engine"):
        synthesize(spark.read.parquet(str(path)), engine="duckdb", **kw)
    odd = spark.createDataFrame([(1.0, "a", "b", "1")], ["x", "k", "c", "d"])  # 'a' in a numeric column
    assert len(synthesize(odd, **kw).table) == 40  # the release rule: a non-number is a missing value
    from privsample import Synthesizer

    fitted = Synthesizer("mst", epsilon=2.0, iters=20).fit(spark.read.parquet(str(path)), schema=SMALL, seed=5)
    assert fitted.model.params["engine"] == "spark"
    drawn = fitted.sample(40, seed=5)
    assert list(drawn.columns) == list(ref.table.columns) and len(drawn) == 40


def test_running_session_with_another_master_warns(spark):
    """Spark keeps one session per process: asking for another master cannot be honoured, and says so."""
    from privsample.marginals.spark_engine import start_session

    with pytest.warns(UserWarning, match="already running"):
        assert start_session("local[1]") is spark


@needs_java
def test_release_rule_agrees_with_numpy(spark, tmp_path):
    """The release path's per-record rule (clip, catch-all, null code, else left out) and an empty table."""
    from privsample.data.encoding import release_schema
    from tests.test_engines import RELEASE_TEXT

    p = write(tmp_path, RELEASE_TEXT)
    cliques = [(a,) for a in SMALL.names] + [tuple(SMALL.names)]
    for schema in (SMALL, release_schema(SMALL)):
        ref = NumpyEngine(encode(read_table(p), schema, release=True), schema.domain())
        with engine(p, schema, spark, release=True) as eng:
            assert_same(eng.marginals(cliques), ref.marginals(cliques))
    with engine(write(tmp_path, "x,k,c,d\n", "empty.csv"), SMALL, spark, release=True) as eng:
        assert eng.total() == 0


@needs_java
def test_spark_engine_uses_the_detected_delimiter_and_encoding(spark, tmp_path):
    """Semicolons, a forced tab, UTF-16 (byte-order mark, also gzipped) and latin-1: as read_table reads; cp1252
    (not one of Spark's charsets) is refused."""
    import gzip

    from tests.test_engines import LAYOUT_TEXT, LAYOUTS

    schema = Schema([SMALL["x"], SMALL["k"], C("c", ("a", "b", "é"), nullable=True), SMALL["d"]])
    cliques = [(a,) for a in schema.names] + [tuple(schema.names)]
    for name, codec, bom, kw in LAYOUTS:
        if codec == "cp1252":
            p = write(tmp_path, LAYOUT_TEXT, "cp.csv")
            with pytest.raises(InputError, match="Spark reads CSV in UTF-8.* not windows-1252"):
                engine(p, schema, spark, **kw)
            continue
        text = LAYOUT_TEXT.replace(";", "\t") if name.startswith("tab") else LAYOUT_TEXT
        data = bom + text.encode(codec)
        p = tmp_path / name
        p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        ref = NumpyEngine(encode(read_table(p, **kw), schema, release=True), schema.domain())
        with engine(p, schema, spark, release=True, **kw) as eng:
            assert_same(eng.marginals(cliques), ref.marginals(cliques))
    with pytest.raises(InputError, match="the likely one is ';'"):
        engine(write(tmp_path, "x;k,c;d\n1;2;3\n", "amb.csv"), schema, spark)
