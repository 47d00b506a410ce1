"""NumpyEngine (read_table + encode) and DuckDBEngine give identical marginals; DuckDB-specific checks."""

from __future__ import annotations

import codecs
import datetime
import decimal
import gzip
import itertools
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privsample.data.encoding import encode
from privsample.data.schema import Categorical as C
from privsample.data.schema import Numeric as N
from privsample.data.schema import Schema
from privsample.data.table import read_table
from privsample.errors import InputError
from privsample.marginals import sql, sql_engine
from privsample.marginals.duckdb_engine import DuckDBEngine
from privsample.marginals.numpy_engine import NumpyEngine
from tests.conftest import SHARED_DATA, needs_shared

ADULT = SHARED_DATA / "adult_raw.csv"
needs_adult = needs_shared("adult_raw.csv")


def adult_schema() -> Schema:
    return Schema(
        [
            N("age", 17, 90, bins=8, integer=True),
            C(
                "workclass",
                (
                    "Private",
                    "Self-emp-not-inc",
                    "Self-emp-inc",
                    "Federal-gov",
                    "Local-gov",
                    "State-gov",
                    "Without-pay",
                    "Never-worked",
                ),
                nullable=True,
            ),
            N("fnlwgt", 0, 1.5e6, bins=10, integer=True),
            C(
                "education",
                (
                    "Bachelors",
                    "HS-grad",
                    "11th",
                    "Masters",
                    "9th",
                    "Some-college",
                    "Assoc-acdm",
                    "Assoc-voc",
                    "7th-8th",
                    "Doctorate",
                    "Prof-school",
                    "5th-6th",
                    "10th",
                    "1st-4th",
                    "Preschool",
                    "12th",
                ),
            ),
            C("education-num", tuple(str(i) for i in range(1, 17))),  # integers compared as text
            C(
                "marital-status",
                (
                    "Never-married",
                    "Married-civ-spouse",
                    "Divorced",
                    "Married-spouse-absent",
                    "Separated",
                    "Married-AF-spouse",
                    "Widowed",
                ),
            ),
            C(
                "occupation",
                (
                    "Adm-clerical",
                    "Exec-managerial",
                    "Handlers-cleaners",
                    "Prof-specialty",
                    "Other-service",
                    "Sales",
                    "Craft-repair",
                    "Transport-moving",
                    "Farming-fishing",
                    "Machine-op-inspct",
                    "Tech-support",
                    "Protective-serv",
                    "Armed-Forces",
                    "Priv-house-serv",
                ),
                nullable=True,
            ),
            C("relationship", ("Not-in-family", "Husband", "Wife", "Own-child", "Unmarried", "Other-relative")),
            C("race", ("White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other")),
            C("sex", ("Male", "Female")),
            N("capital-gain", 0, 99999, edges=(0, 1, 5000, 10000, 99999), integer=True),
            N("capital-loss", 0, 4356, edges=(0, 1, 2000, 4356)),
            N("hours-per-week", 1, 99, bins=10),
            C(
                "native-country",
                ("United-States", "Mexico", "Philippines", "Germany", "Canada"),
                nullable=True,
                other="(other)",
            ),  # the other countries need other=True
            C("income-per-year", ("<=50K", ">50K")),
        ]
    )


CLIQUES = [
    ("age", "sex"),
    ("sex", "age"),
    ("workclass", "occupation"),
    ("education", "education-num"),
    ("native-country", "race"),
    ("capital-gain", "capital-loss"),
    ("hours-per-week", "income-per-year"),
    ("age", "fnlwgt", "hours-per-week"),
    ("workclass", "occupation", "income-per-year"),
    ("income-per-year", "occupation", "workclass"),
    ("relationship", "marital-status", "sex"),
    ("native-country", "education", "capital-gain"),
    ("race", "sex", "income-per-year"),
]


def all_cliques(schema: Schema) -> list[tuple[str, ...]]:
    return [(a,) for a in schema.names] + CLIQUES


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for cl in a:
        assert a[cl].dtype == np.int64 and b[cl].dtype == np.int64, cl
        assert a[cl].shape == b[cl].shape, cl
        assert np.array_equal(a[cl], b[cl]), cl


@pytest.fixture(scope="module")
def adult_numpy():
    schema = adult_schema()
    return NumpyEngine(encode(read_table(ADULT), schema, other=True), schema.domain())


@needs_adult
def test_adult_csv_numpy_equals_duckdb(adult_numpy):
    schema = adult_schema()
    cliques = all_cliques(schema)
    with DuckDBEngine(ADULT, schema, other=True, threads=2, memory_limit="512MB") as eng:
        assert eng.domain == schema.domain()
        got = eng.marginals(cliques)
        assert eng.total() == adult_numpy.total() == 32561
        assert_same(got, adult_numpy.marginals(cliques))
        # cached, and a permuted clique is the transpose
        assert np.array_equal(eng.marginal(("sex", "age")), eng.marginal(("age", "sex")).T)
        assert int(eng.marginal(("workclass",))[-1]) == 1836  # '?' -> null code
        assert eng.marginal(()) == 32561


@needs_adult
def test_adult_parquet_numpy_equals_duckdb(tmp_path, adult_numpy):
    """Typed Parquet (ints, floats, nullable strings) gives the same codes as the raw CSV."""
    schema = adult_schema()
    df = read_table(ADULT)
    table = pa.table(
        {
            name: (
                pa.array(pd.to_numeric(df[name]).astype("int64"))
                if name in ("age", "education-num", "capital-gain")
                else pa.array(pd.to_numeric(df[name]).astype("float64"))
                if name in ("fnlwgt", "capital-loss", "hours-per-week")
                else pa.array(list(df[name]), type=pa.string())
            )
            for name in df.columns
        }
    )
    path = tmp_path / "adult.parquet"
    pq.write_table(table, path)
    cliques = all_cliques(schema)
    in_memory = read_table(path)
    assert in_memory["age"].dtype == np.int64 and in_memory["fnlwgt"].dtype == np.float64
    assert in_memory["workclass"].dtype == object and in_memory["workclass"].isna().sum() == 1836
    expected = adult_numpy.marginals(cliques)
    assert_same(NumpyEngine(encode(in_memory, schema, other=True), schema.domain()).marginals(cliques), expected)
    with DuckDBEngine(path, schema, other=True) as eng:
        assert_same(eng.marginals(cliques), expected)


def test_parquet_typed_columns_agree(tmp_path):
    """Booleans, NaN floats (DuckDB's isnan is wrong on Parquet stats), dates, decimals, uint64."""
    path = tmp_path / "typed.parquet"
    pq.write_table(
        pa.table(
            {
                "b": pa.array([True, False, None, True]),
                "bn": pa.array([True, False, None, True]),
                "f": pa.array([1.0, 2.5, float("nan"), 1e20]),
                "fn": pa.array([0.5, float("nan"), None, 1.0]),
                "d": pa.array([datetime.date(2020, 1, 1), datetime.date(2021, 1, 1), None, datetime.date(2020, 1, 1)]),
                "dec": pa.array([decimal.Decimal("1.50"), decimal.Decimal("2"), None, decimal.Decimal("3.25")]),
                "u": pa.array([1, 2, 3, 2**63 + 5], type=pa.uint64()),
                "s": pa.array(["a", " NA ", "b", None]),
            }
        ),
        path,
    )
    schema = Schema(
        [
            C("b", ("True", "False"), nullable=True),
            N("bn", 0, 1, bins=2, nullable=True),
            C("f", ("1", "2.5", "1e+20"), nullable=True),
            N("fn", 0, 1, bins=2, nullable=True),
            C("d", ("2020-01-01", "2021-01-01"), nullable=True),
            N("dec", 0, 4, bins=4, nullable=True),
            C("u", ("1", "2", "3", str(2**63 + 5))),
            C("s", ("a", "b"), nullable=True),
        ]
    )
    cliques = [(a,) for a in schema.names] + [("f", "fn", "s")]
    ref = NumpyEngine(encode(read_table(path), schema), schema.domain()).marginals(cliques)
    with DuckDBEngine(path, schema) as eng:
        got = eng.marginals(cliques)
    assert_same(got, ref)
    assert got[("f",)].tolist() == [1, 1, 1, 1] and got[("fn",)].tolist() == [0, 2, 2]


# -- small files: policy, errors, sources ----------------------------------------------------------------
SMALL = Schema(
    [
        N("x", 0, 10, bins=4),
        N("k", 0, 9, bins=3, integer=True, nullable=True),
        C("c", ("a", "b"), nullable=True),
        C("d", ("1", "2", "3"), other="(other)"),
    ]
)


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def both(path: Path, schema: Schema = SMALL, **kw) -> tuple[dict, dict]:
    cliques = [(a,) for a in schema.names] + [tuple(schema.names)]
    ref = NumpyEngine(encode(read_table(path, na_values=schema.na_values), schema, **kw), schema.domain())
    with DuckDBEngine(path, schema, **kw) as eng:
        return eng.marginals(cliques), ref.marginals(cliques)


def test_small_csv_edges_whitespace_and_nulls(tmp_path):
    text = (
        "x , k,c,d,extra\n"
        " 0,0,a,1,z\n2.5,,b, 2 ,z\n10,9, ? ,3,z\n7.5,3,NA,(other),z\n 9.99 ,8,a,1,z\n"
        '1e0,+4,"b",2,z\n\n5,NaN,a,3,z\n'
    )
    a, b = both(write(tmp_path, text))
    assert_same(a, b)
    assert a[("x",)].tolist() == [2, 1, 1, 3]  # 0, 1 | 2.5 | 5 | 7.5, 9.99, 10 (last bin closed)
    assert a[("k",)].tolist() == [1, 2, 2, 2]  # 0 | 3, 4 | 8, 9 | two missing -> null code
    assert a[("c",)].tolist() == [3, 2, 2]  # '?' and 'NA' are missing
    assert a[("d",)].tolist() == [2, 2, 2, 1]  # the other label itself is the other code


@pytest.mark.parametrize("kw", [{"clip": True}, {"other": True}, {"clip": True, "other": True}])
def test_clip_and_other_agree(tmp_path, kw):
    text = "x,k,c,d\n-5,0,a,1\n11,12,b,7\n3,-1,zz,\n4,4,,2\n"
    p = write(tmp_path, text)
    if kw.get("clip") and kw.get("other"):
        schema = Schema([SMALL["x"], SMALL["k"], C("c", ("a", "b"), nullable=True, other="(o)"), SMALL["d"]])
        a, b = both(p, schema, **kw)
        assert_same(a, b)
        assert a[("d",)].tolist() == [1, 1, 0, 2]  # unknown '7' and missing -> other
        assert a[("x",)].tolist() == [1, 2, 0, 1]  # -5 -> 0, 11 -> 10
        assert a[("k",)].tolist() == [2, 1, 1, 0]
        assert a[("c",)].tolist() == [1, 1, 1, 1]  # 'zz' -> other, '' -> null
    else:
        for eng in (lambda: DuckDBEngine(p, SMALL, **kw), lambda: encode(read_table(p), SMALL, **kw)):
            with pytest.raises(InputError):
                eng()


@pytest.mark.parametrize(
    "text, column",
    [
        ("x,k,c,d\n11,1,a,1\n", "x"),  # out of range
        ("x,k,c,d\nabc,1,a,1\n", "x"),  # not a number
        ("x,k,c,d\n1_0,1,a,1\n", "x"),  # DuckDB's cast would accept this; pandas does not
        ("x,k,c,d\n+-1,1,a,1\n", "x"),
        ("x,k,c,d\n,1,a,1\n", "x"),  # missing, not nullable
        ("x,k,c,d\n1,1,zz,1\n", "c"),  # unknown category
        ("x,k,c,d\n1,1,a,9\n", "d"),  # unknown category (other exists but other=False)
        ("x,k,c,d\n1,1,a,\n", "d"),  # missing, not nullable
        ("x,k,c\n1,1,a\n", "d"),  # schema column not in the data
    ],
)
def test_errors_match_encode(tmp_path, text, column):
    p = write(tmp_path, text)
    with pytest.raises(InputError, match=f"'{column}'") as duck:
        DuckDBEngine(p, SMALL)
    with pytest.raises(InputError, match=f"'{column}'") as mem:
        encode(read_table(p), SMALL)
    assert "\n" not in str(duck.value) and "\n" not in str(mem.value)


def test_other_without_label_needs_other(tmp_path):
    p = write(tmp_path, "x,k,c,d\n1,1,zz,1\n")
    with pytest.raises(InputError, match="other:"):
        DuckDBEngine(p, SMALL, other=True)
    with pytest.raises(InputError, match="other:"):
        encode(read_table(p), SMALL, other=True)


@pytest.mark.parametrize("text", ["", "x,k\n1,2,3\n", "x,k,c,d\n", "\n\n", "x,x,c,d\n1,1,a,1\n"])
def test_bad_files(tmp_path, text):
    with pytest.raises(InputError):
        DuckDBEngine(write(tmp_path, text), SMALL)


def test_missing_file_and_table():
    with pytest.raises(InputError, match="not found"):
        DuckDBEngine("/nonexistent/t.csv", SMALL)
    with pytest.raises(InputError, match="no such"):
        DuckDBEngine("no_such_table_xyz", SMALL, connection=duckdb.connect())


NUMBERS = [
    "1e5",
    "1E+05",
    "+.5",
    "-.5e-3",
    "5.",
    ".5",
    "0005",
    "-0",
    "inf",
    "-Infinity",
    "NaN",
    "nan",
    "+nan",
    "1_0",
    "+-1",
    "0x10",
    '"1,5"',
    "\u00a05",
    "1e-99999",
    "1e99999",
    "5.0e+1",
    "1e",
    "e5",
    ".",
    "1..",
    "١٢",
    "1 2",
    "1e1.5",
    "--1",
    "True",
    "9" * 40,
]


def test_number_grammar_agrees(tmp_path):
    """Each string is accepted (as the same number or missing) by both, or rejected by both."""
    schema = Schema([N("x", -1e300, 1e300, bins=1, nullable=True)], na_values=())
    for s in NUMBERS:
        p = write(tmp_path, f"x\n{s}\n")
        outcome = []
        for f in (
            lambda: encode(read_table(p, na_values=schema.na_values), schema),
            lambda: DuckDBEngine(p, schema).marginal(("x",)),
        ):
            try:
                r = f()
                outcome.append(int(np.asarray(r["x"] if isinstance(r, dict) else np.argmax(r)).ravel()[0]))
            except InputError:
                outcome.append("error")
        assert outcome[0] == outcome[1], (s, outcome)


def test_relation_table_and_join_sources(tmp_path, monkeypatch):
    p = write(tmp_path, "x,k,c,d\n1,1,a,1\n2,,b,2\n9,9,,3\n9,4,a,3\n")
    a, b = both(p)
    con = duckdb.connect()
    con.sql(f"CREATE TABLE t AS SELECT * FROM read_csv('{p}', all_varchar=true)")
    cliques = list(a)
    assert_same(DuckDBEngine("t", SMALL, connection=con).marginals(cliques), b)
    assert_same(DuckDBEngine(con.sql("SELECT * FROM t"), SMALL).marginals(cliques), b)
    typed = con.sql("SELECT CAST(x AS DOUBLE) x, CAST(k AS INTEGER) k, c, CAST(d AS DOUBLE) d FROM t")
    assert_same(DuckDBEngine(typed, SMALL).marginals(cliques), b)  # 1.0 compares as '1'
    monkeypatch.setattr(sql, "CASE_LIMIT", 1)  # categoricals via a join
    assert_same(DuckDBEngine(p, SMALL).marginals(cliques), b)


def test_batches_many_cliques(tmp_path, monkeypatch):
    p = write(tmp_path, "x,k,c,d\n1,1,a,1\n2,,b,2\n9,9,,3\n9,4,a,3\n")
    monkeypatch.setattr(sql_engine.CodedTableEngine, "max_sets", 2)  # two grouping sets a query
    cliques = [("x",), ("k", "x"), ("c", "d"), ("d",), ("x", "k", "c", "d"), ("d", "x")]
    a, ref = DuckDBEngine(p, SMALL).marginals(cliques), NumpyEngine(encode(read_table(p), SMALL), SMALL.domain())
    assert_same(a, ref.marginals(cliques))
    with pytest.raises(InputError):
        DuckDBEngine(p, SMALL).marginals([("x", "nope")])


def test_bounded_query_results_give_the_same_counts(tmp_path):
    """``max_result`` (and ``max_sets``) only split the counting into more queries: the same counts."""
    p = write(tmp_path, "x,k,c,d\n1,1,a,1\n2,,b,2\n9,9,,3\n9,4,a,3\n3,3,b,1\n")
    cliques = [c for k in (1, 2, 3) for c in itertools.combinations(SMALL.names, k)]
    ref = NumpyEngine(encode(read_table(p), SMALL), SMALL.domain()).marginals(cliques)
    queries = []
    for max_result, max_sets in [(sql_engine.MAX_RESULT, 64), (1, 64), (100, 64), (10**9, 3)]:
        eng = DuckDBEngine(p, SMALL, cache_mb=0, batching="sets")  # a group per clique
        eng.max_result, eng.max_sets = max_result, max_sets
        assert_same(eng.marginals(cliques), ref)
        queries.append(eng.stats["queries"])
        eng.close()
    assert queries == [1, 4, 2, 2]  # the 4 triples are counted (up to 5 rows each), the rest summed out


# -- random small tables: both engines accept the same files and agree ----------------------------------------
AGREE = Schema(
    [N("a", 0, 10, bins=3, nullable=True), C("b", ("x", "y"), other="(other)"), N("c", -5, 5, bins=2, integer=True)]
)
FIELD = st.one_of(
    st.sampled_from(
        [
            "",
            "?",
            "x",
            "y",
            "z",
            " x ",
            "1",
            "5",
            "10",
            "-3",
            "11",
            "1e3",
            "nan",
            "inf",
            "3.5",
            '"x"',
            '"a,b"',
            '"',
            "(other)",
            "1_0",
            "\u00a01",
            " 2\t",
        ]
    ),
    st.text(max_size=3),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", " a ", ""]), min_size=1, max_size=4),
    st.lists(st.lists(FIELD, min_size=1, max_size=4), max_size=5),
    st.booleans(),
    st.booleans(),
)
def test_random_tables_agree(header, rows, clip, other):
    text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    cliques = [("a",), ("b",), ("c",), ("a", "b", "c")]
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.csv"
        p.write_bytes(text.encode("utf-8", "surrogatepass"))
        outcomes = []
        for run in (
            lambda: NumpyEngine(encode(read_table(p), AGREE, clip=clip, other=other), AGREE.domain()).marginals(
                cliques
            ),
            lambda: DuckDBEngine(p, AGREE, clip=clip, other=other).marginals(cliques),
        ):
            try:
                outcomes.append(run())
            except InputError as exc:
                outcomes.append(str(exc).split(":")[0])
    if isinstance(outcomes[0], dict) and isinstance(outcomes[1], dict):
        assert_same(*outcomes)
    else:
        assert isinstance(outcomes[0], dict) == isinstance(outcomes[1], dict), outcomes


# -- scale: cache, batching, engine choice, CLI -----------------------------------------------------------
def random_parquet(tmp_path: Path, n: int = 5000, seed: int = 0) -> Path:
    """A Parquet file written by the test: floats (binned), nullable ints, nullable text, coerced text."""
    rng = np.random.default_rng(seed)
    k = pd.array(rng.integers(0, 10, n), dtype="Int64")
    k[rng.random(n) < 0.1] = pd.NA
    c = rng.choice(np.array(["a", "b", None], dtype=object), n)
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "k": k, "c": c, "d": rng.choice(["1", "2", "3"], n)})
    p = tmp_path / "t.parquet"
    df.to_parquet(p, index=False, row_group_size=1000)
    return p


def test_parquet_written_by_test_all_cliques_and_cache(tmp_path):
    import itertools

    p = random_parquet(tmp_path)
    ref = NumpyEngine(encode(read_table(p), SMALL), SMALL.domain())
    cliques = [c for r in (1, 2, 3) for c in itertools.combinations(SMALL.names, r)]
    with DuckDBEngine(p, SMALL, memory_limit="256MB", threads=1) as eng:
        assert_same(eng.marginals(cliques), ref.marginals(cliques))
        assert eng.stats["queries"] == 1  # the 4 maximal 3-way cliques share one joint GROUP BY
        q = eng.stats["queries"]
        again = eng.marginals([("d", "x"), ("c",), ("x", "k", "c")])  # asked again, in another order
        assert eng.stats["queries"] == q and eng.stats["cache_hits"] > 0
        assert np.array_equal(again[("d", "x")], ref.marginals([("d", "x")])[("d", "x")])
    with DuckDBEngine(p, SMALL, batching="sets", cache_mb=0) as eng:  # no cache: every call scans
        assert_same(eng.marginals(cliques), ref.marginals(cliques))
        q = eng.stats["queries"]
        eng.marginals([("x", "k")])
        assert eng.stats["queries"] == q + 1


def test_marginal_cache_sums_out_and_evicts():
    from privsample.marginals.cache import MarginalCache

    cache = MarginalCache(max_bytes=100)  # (0, 1) and (2, 3) fit (96 bytes), not with (1,) too
    ab = np.arange(6, dtype=np.int64).reshape(2, 3)
    cache.put((0, 1), ab)
    assert cache.holder((1,)) == (0, 1)
    assert np.array_equal(cache.get((1,)), ab.sum(axis=0)) and cache.derived == 1
    assert np.array_equal(cache.get((0, 1)), ab) and cache.hits == 1
    cache.put((2, 3), np.zeros((2, 3), dtype=np.int64))  # over the limit: least recently used goes
    assert (1,) not in cache and cache.nbytes <= cache.max_bytes
    cache.put((5, 6, 7), np.zeros((10, 10, 10), dtype=np.int64))  # larger than the cache: not held
    assert (5, 6, 7) not in cache


def test_check_source_chooses_the_engine(tmp_path, monkeypatch):
    from privsample.marginals import open as engines

    p = random_parquet(tmp_path, n=50)
    assert engines.check_source(p, "auto", SMALL) == (None, "numpy")
    assert engines.check_source(p, "duckdb", None) == (None, "duckdb")
    monkeypatch.setitem(engines.AUTO_SHARE, "parquet", 10**12)  # as if the file were larger than memory
    assert engines.check_source(p, "auto", SMALL) == (None, "numpy")  # with a schema only the codes are held
    monkeypatch.setitem(engines.AUTO_SHARE_CODED, "parquet", 10**12)
    assert engines.check_source(p, "auto", SMALL) == (None, "duckdb")
    assert engines.check_source(p, "auto", None) == (None, "duckdb")  # discovery out of core too
    with pytest.raises(InputError, match="unknown engine"):
        engines.check_source(p, "pandas", SMALL)
    with pytest.raises(InputError, match="unknown file type"):
        engines.check_source(write(tmp_path, "{}", "t.json"), "auto", SMALL)


def test_synth_auto_engine_on_large_file_uses_duckdb(tmp_path, monkeypatch):
    """The same seeded run gives the same model whichever engine reads the records."""
    from privsample.api.synthesizer import synthesize
    from privsample.marginals import open as engines

    p = random_parquet(tmp_path, n=2000)
    kw = dict(epsilon=2.0, method="mst", schema=SMALL, rows=50, seed=3, method_options={"iters": 30})
    a = synthesize(p, engine="numpy", **kw)
    monkeypatch.setitem(engines.AUTO_SHARE_CODED, "parquet", 10**12)
    b = synthesize(p, engine="auto", engine_options={"memory_limit": "256MB"}, **kw)
    assert a.model.params["engine"] == "numpy" and b.model.params["engine"] == "duckdb"
    pd.testing.assert_frame_equal(a.table, b.table)


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("t.json", ["--engine", "duckdb"], "unknown file type"),
        ("t.json", [], "unknown file type"),
        ("t.parquet", ["--engine", "pandas"], "unknown engine"),
        ("missing.parquet", ["--engine", "duckdb"], "not found"),
        ("t.parquet", ["--engine", "spark", "--spark-master", "spark://127.0.0.1:1"], "cannot reach the Spark master"),
        ("t.parquet", ["--engine", "spark", "--spark-master", "nowhere"], "not a Spark master URL"),
    ],
)
def test_cli_engine_bad_input(tmp_path, capsys, name, args, message):
    from privsample.cli import main

    random_parquet(tmp_path, n=20)
    write(tmp_path, "{}", "t.json")
    sch, out = tmp_path / "s.yaml", tmp_path / "out.csv"
    SMALL.save(sch)
    with pytest.raises(SystemExit) as ex:
        main(["synth", str(tmp_path / name), "-o", str(out), "--epsilon", "1", "--schema", str(sch), "--quiet", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert ex.value.code == 2 and len(err) == 1 and message in err[0], err
    assert not out.exists()


# -- release path: the per-record rule on every engine --------------------------------------------------
RELEASE_TEXT = (
    "x,k,c,d\n-5,0,a,1\n11,12,b,7\n3,-1,zz,\n4,4,,2\nabc,1,a,1\n,2,b,3\n1,x7,a,1\n2,3,a,3\n1_0,1,a,1\n5,5,ZEBRA,ZEBRA\n"
)


@pytest.mark.parametrize(
    "schema",
    [
        SMALL,
        Schema([N("x", 0, 10, bins=4, nullable=True), SMALL["k"], C("c", ("a", "b"), other="(o)"), C("d", ("1", "2"))]),
    ],
)
def test_release_rule_agrees_and_never_raises(tmp_path, schema):
    p = write(tmp_path, RELEASE_TEXT)
    a, b = both(p, schema, release=True)
    assert_same(a, b)
    full = a[tuple(schema.names)]
    assert 0 < int(full.sum()) < 10  # some records were left out, none raised


def test_release_rule_codes():
    df = pd.DataFrame(
        {
            "x": [-5, 11, "abc", None, 4.0],
            "k": [0, 12, -1, None, 4],
            "c": ["a", "zz", None, "b", "a"],
            "d": ["1", "7", None, "2", "3"],
        }
    )
    codes = encode(df, SMALL, release=True)
    # x is not nullable: the non-number and the missing value have no code, so rows 2 and 3 are left out
    assert codes["x"].tolist() == [0, 3, 1]
    assert codes["k"].tolist() == [0, 2, 1]  # clipped 0 and 9 (bins 0-2, 3-5, 6-9); 4 -> bin 1
    assert codes["c"].tolist() == [0, 2, 0]  # unknown 'zz' -> null code (no other label)
    assert codes["d"].tolist() == [0, 3, 2]  # unknown '7' -> other
    from privsample.data.encoding import release_schema

    total = release_schema(SMALL)
    codes = encode(df, total, release=True)
    assert len(codes["x"]) == len(df)  # a code for every value: nothing is left out
    assert codes["x"].tolist()[2:4] == [total["x"].null_code] * 2


def test_release_allows_empty_table(tmp_path):
    p = write(tmp_path, "x,k,c,d\n")
    with DuckDBEngine(p, SMALL, release=True) as eng:
        assert eng.total() == 0
        assert eng.marginals([("x",)])[("x",)].tolist() == [0, 0, 0, 0]
    assert len(read_table(p, allow_empty=True)) == 0


# -- delimiters and encodings: the DuckDB engine reads what read_table reads ----------------------------
LAYOUT_TEXT = "x;k;c;d\n0;0;a;1\n2,5;;b;2\n10;9;é;3\n7.5;3;NA;(other)\n"
LAYOUTS = [
    ("semi.csv", "utf-8", b"", {}),
    ("semi.csv", "cp1252", b"", {"encoding": "cp1252"}),
    ("u16.csv", "utf-16-le", codecs.BOM_UTF16_LE, {}),
    ("u16be.csv.gz", "utf-16-be", codecs.BOM_UTF16_BE, {}),
    ("tab.txt", "latin-1", b"", {"encoding": "latin-1", "delimiter": "\t"}),
]


@pytest.mark.parametrize("name, codec, bom, kw", LAYOUTS)
def test_duckdb_engine_uses_the_detected_delimiter_and_encoding(tmp_path, name, codec, bom, kw):
    text = LAYOUT_TEXT.replace(";", "\t") if name.startswith("tab") else LAYOUT_TEXT
    data = bom + text.encode(codec)
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    schema = Schema([SMALL["x"], SMALL["k"], C("c", ("a", "b", "é"), nullable=True), SMALL["d"]])
    df = read_table(p, **kw)
    assert df["c"].tolist() == ["a", "b", "é", None] and df["x"].tolist()[1] == "2,5"
    cliques = [(a,) for a in schema.names] + [tuple(schema.names)]
    ref = NumpyEngine(encode(df, schema, release=True), schema.domain())
    with DuckDBEngine(p, schema, release=True, **kw) as eng:
        assert_same(eng.marginals(cliques), ref.marginals(cliques))
        assert not list(Path(eng._workdir).glob("transcoded*"))  # the UTF-8 copy is gone once coded


def test_duckdb_engine_refuses_an_ambiguous_header_and_bad_encoding(tmp_path):
    p = write(tmp_path, "x;k,c;d\n1;2;3\n")
    with pytest.raises(InputError, match="the likely one is ';'"):
        DuckDBEngine(p, SMALL)
    q = tmp_path / "l.csv"
    q.write_bytes("x,k,c,d\n1,2,é,3\n".encode("latin-1"))
    with pytest.raises(InputError, match="not a well-formed CSV table .*--encoding"):
        DuckDBEngine(q, SMALL)
