"""read_table, encode, decode, schema_with_other: round trips, the error policy, malformed input."""

from __future__ import annotations

import gzip
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privsample.data.decoding import decode
from privsample.data.encoding import encode, schema_with_other
from privsample.data.schema import DEFAULT_OTHER_LABEL, Schema
from privsample.data.schema import Categorical as C
from privsample.data.schema import Numeric as N
from privsample.data.table import read_table
from privsample.errors import DataError, InputError

ALL_KINDS = Schema(
    [
        C("cat", ("a", "b", "c")),
        C("cat_null", ("a", "b"), nullable=True),
        C("cat_other", ("x", "y"), other="(other)"),
        C("cat_other_null", ("1", "2", "3"), nullable=True, other="(other)"),
        N("num", -1.0, 1.0, bins=7),
        N("num_null", 0.0, 1e-3, bins=3, nullable=True),
        N("num_edges", 0.0, 100.0, edges=(0.0, 0.5, 2.0, 50.0, 100.0)),
        N("int", 17, 90, bins=8, integer=True),
        N("int_null", 0, 9, bins=3, integer=True, nullable=True),
        N("int_edges", -5, 5, edges=(-5, -1, 0, 1, 5), integer=True),
        N("point", 3, 3, bins=4, integer=True),
    ]
)


def random_codes(schema: Schema, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {c.name: rng.integers(0, c.size, n) for c in schema.columns}


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# -- round trips ----------------------------------------------------------------------------------------
def test_round_trip_every_kind():
    codes = random_codes(ALL_KINDS, 2000)
    df = decode(codes, ALL_KINDS, np.random.default_rng(1))
    back = encode(df, ALL_KINDS)
    for name in ALL_KINDS.names:
        assert back[name].dtype == np.int64
        assert np.array_equal(back[name], codes[name]), name


def test_round_trip_through_csv_and_parquet(tmp_path):
    codes = random_codes(ALL_KINDS, 500, seed=3)
    df = decode(codes, ALL_KINDS, np.random.default_rng(4))
    df.to_csv(tmp_path / "s.csv", index=False)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "s.parquet")
    for name in ("s.csv", "s.parquet"):
        back = encode(read_table(tmp_path / name), ALL_KINDS)
        for col in ALL_KINDS.names:
            assert np.array_equal(back[col], codes[col]), (name, col)


def test_round_trip_2d_array_and_determinism():
    codes = random_codes(ALL_KINDS, 300, seed=5)
    arr = np.column_stack([codes[n] for n in ALL_KINDS.names])
    a = decode(arr, ALL_KINDS, np.random.default_rng(7))
    b = decode(codes, ALL_KINDS, np.random.default_rng(7))
    pd.testing.assert_frame_equal(a, b)
    assert all(np.array_equal(encode(a, ALL_KINDS)[n], codes[n]) for n in ALL_KINDS.names)


def test_decode_values():
    schema = Schema(
        [
            N("i", 0, 10, bins=4, integer=True, nullable=True),
            N("f", 0, 1, bins=2),
            C("c", ("a",), nullable=True, other="zz"),
            N("gap", 0, 1, edges=(0, 0.2, 0.4, 1), integer=True),
        ]
    )
    codes = {
        "i": np.array([0, 1, 2, 3, 4] * 200),
        "f": np.array([0, 1] * 500),
        "c": np.array([0, 1, 2, 0, 1] * 200),
        "gap": np.array([0, 1, 2, 0, 2] * 200),
    }
    df = decode(codes, schema, np.random.default_rng(0))
    i = df["i"]
    assert str(i.dtype) == "Int64" and i.isna().sum() == 200
    v = i.dropna().to_numpy(dtype=np.int64)
    c = codes["i"][codes["i"] < 4]
    e = schema["i"].bin_edges  # integer-aligned: [0, 1.5, 4.5, 7.5, 10]
    lo, hi = e[:-1][c], e[1:][c]
    assert np.all((v >= lo) & ((v < hi) | ((c == 3) & (v <= hi))))
    assert set(v[c == 3]) == {8, 9, 10} and set(v[c == 0]) == {0, 1}
    assert df["f"].dtype == np.float64 and np.all((df["f"] >= 0) & (df["f"] <= 1))
    assert df["c"].dtype == object and df["c"].tolist()[:5] == ["a", "zz", None, "a", "zz"]
    assert df["gap"].dtype == np.int64 and set(df["gap"][codes["gap"] == 1]) == {0}  # no integer in [0.2, 0.4)


def test_decode_rejects_bad_codes():
    with pytest.raises(ValueError):
        decode({"cat": np.array([3])}, Schema([C("cat", ("a", "b", "c"))]), np.random.default_rng(0))
    with pytest.raises(ValueError):
        decode(np.zeros((3, 2), dtype=int), Schema([C("cat", ("a",))]), np.random.default_rng(0))


def test_schema_with_other():
    schema = Schema([C("a", ("x",)), C("b", ("x", DEFAULT_OTHER_LABEL)), C("c", ("x",), other="rest"), N("n", 0, 1)])
    s = schema_with_other(schema)
    assert s["a"].other == DEFAULT_OTHER_LABEL and s["b"].other == f"{DEFAULT_OTHER_LABEL} 2"
    assert s["c"].other == "rest" and s["n"] == schema["n"]
    assert schema["a"].other is None  # the input is unchanged
    assert s.domain_dict()["a"] == 2


# -- encode policy ---------------------------------------------------------------------------------------
POLICY = Schema(
    [N("x", 0, 10, bins=5), C("c", ("a", "b")), C("o", ("a",), other="(o)"), N("k", 0, 4, bins=2, nullable=True)]
)


def frame(**cols) -> pd.DataFrame:
    base = {"x": ["1"], "c": ["a"], "o": ["a"], "k": ["1"]}
    base.update(cols)
    return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in base.items()})


@pytest.mark.parametrize(
    "cols, column, fragment",
    [
        ({"x": ["1", "abc"]}, "x", "data row 2: value 'abc' is not a number"),
        ({"x": ["10.5"]}, "x", "outside the schema bounds [0, 10]"),
        ({"x": ["-0.1"]}, "x", "data row 1"),
        ({"x": ["inf"]}, "x", "outside"),
        ({"x": [None]}, "x", "not nullable"),
        ({"c": ["a", "a", "z"]}, "c", "data row 3: value 'z' is not one of"),
        ({"c": [None]}, "c", "not nullable"),
        ({"o": ["q"]}, "o", "'q' is not one of"),
        ({"k": ["1_000"]}, "k", "not a number"),
    ],
)
def test_encode_errors(cols, column, fragment):
    """Strict mode names the value and the row: it serves ``privsample check`` and evaluation, which are
    not releases. The release path (``release=True``) never raises for a value (tests below)."""
    n = max(len(v) for v in cols.values())
    df = frame(**{k: v * n for k, v in {"x": ["1"], "c": ["a"], "o": ["a"], "k": ["1"]}.items()})
    for k, v in cols.items():
        df[k] = pd.Series(v, dtype=object)
    with pytest.raises(InputError, match=f"column '{column}'") as err:
        encode(df, POLICY)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_encode_missing_column_and_extra_columns():
    df = frame(extra=["whatever"]).drop(columns=["o"])
    with pytest.raises(InputError, match="column 'o' is in the schema but not in the data"):
        encode(df, POLICY)
    assert set(encode(frame(extra=["z"]), POLICY)) == set(POLICY.names)


def test_clip_and_other():
    df = frame(x=["-3", "12", "10", "0"], c=["a"] * 4, o=["zz", None, "(o)", "a"], k=[None, "4", "0", "2"])
    with pytest.raises(InputError):
        encode(df, POLICY, clip=True)  # 'zz' is still unknown
    with pytest.raises(InputError):
        encode(df, POLICY, other=True)  # -3 is still out of range
    codes = encode(df, POLICY, clip=True, other=True)
    assert codes["x"].tolist() == [0, 4, 4, 0]
    assert codes["o"].tolist() == [1, 1, 1, 0]  # unknown and missing -> other
    assert codes["k"].tolist() == [2, 1, 0, 1]  # missing -> null code, 4 -> last bin
    with pytest.raises(InputError, match="other:"):
        encode(frame(c=["zz"]), POLICY, other=True)


def test_encode_typed_values():
    schema = Schema([C("n", ("1", "2", "2.5", "True")), N("b", 0, 1, bins=2), N("i", 0, 10, bins=2)])
    df = pd.DataFrame(
        {"n": [1.0, 2.0, 2.5, np.nan], "b": [True, False, True, False], "i": pd.array([1, 10, 5, None], dtype="Int64")}
    )
    with pytest.raises(InputError, match="column 'n', data row 4: missing"):
        encode(df, schema)
    df.loc[3, "n"] = 1.0
    codes = encode(df, schema.__class__([C("n", ("1", "2", "2.5")), schema["b"], N("i", 0, 10, bins=2, nullable=True)]))
    assert codes["n"].tolist() == [0, 1, 2, 0] and codes["b"].tolist() == [1, 0, 1, 0]
    assert codes["i"].tolist() == [0, 1, 1, 2]
    obj = pd.DataFrame({"n": pd.Series([True, "2", 2, None], dtype=object)})
    assert encode(obj, Schema([C("n", ("True", "2"), nullable=True)]))["n"].tolist() == [0, 1, 1, 2]


# -- read_table ------------------------------------------------------------------------------------------
def test_read_table_values_and_missing(tmp_path):
    p = write(tmp_path, ' a ,"b" , c\n 1 ,?, x \n2,"","y, z"\n\nNA,NULL,"  q"\n')
    df = read_table(p)
    assert list(df.columns) == ["a", "b", "c"] and all(df[c].dtype == object for c in df.columns)
    assert df.to_dict("list") == {"a": ["1", "2", None], "b": [None, None, None], "c": ["x", "y, z", "q"]}
    assert read_table(p, na_values=())["b"].tolist() == ["?", "", "NULL"]


def test_read_table_gzip_and_parquet(tmp_path):
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(b"a,b\n1,x\n2,?\n"))
    assert read_table(p).to_dict("list") == {"a": ["1", "2"], "b": ["x", None]}
    q = tmp_path / "t.pq"
    pq.write_table(
        pa.table(
            {
                "i": pa.array([1, None, 3]),
                "f": pa.array([1.5, None, float("nan")]),
                "s": pa.array([" x ", None, "?"]),
                "t": pa.array([True, None, False]),
                "j": pa.array([4, 5, 6], type=pa.int32()),
            }
        ),
        q,
    )
    df = read_table(q)
    assert str(df["i"].dtype) == "Int64" and df["i"].isna().tolist() == [False, True, False]
    assert df["f"].dtype == np.float64 and df["f"].isna().tolist() == [False, True, True]
    assert df["s"].tolist() == ["x", None, None] and df["t"].tolist() == [True, None, False]
    assert df["j"].dtype.kind == "i"


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "empty"),
        (b"\n\n  \n", "no header"),
        (b"a,b\n", "no data rows"),
        (b"a,b\n1,2\n3,4,5\n", "line 3: expected 2 fields"),
        (b"a,b\n1,2\n3\n", "line 3: expected 2 fields"),
        (b"a,a\n1,2\n", "duplicate column name"),
        (b"a, b ,b\n1,2,3\n", "duplicate column name"),
        (b'a,b\n1,"2\n', "not terminated"),
        (b"a,b\n1,\xff\xfe\n", "UTF-8"),
        (b"a,\xffb\n1,2\n", "not valid UTF-8 text (the default); pass --encoding"),
        (b"\xff\xfea,b\n1,2\n3", "not valid UTF-16 text (its byte-order mark says UTF-16 LE)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not valid UTF-8"),
        (b"PK\x03\x04\x00\x00\n", "binary"),
    ],
)
def test_read_table_bad_csv(tmp_path, content, fragment):
    """One line naming the file; a problem in the records (a ``DataError``) names no line, field count or value
    (its ``detail``, for ``check``, does)."""
    p = tmp_path / "bad.csv"
    p.write_bytes(content)
    with pytest.raises(InputError, match="bad.csv") as err:
        read_table(p)
    message = str(err.value)
    assert "\n" not in message
    if isinstance(err.value, DataError):
        assert "not a well-formed CSV table" in message and not re.search(r"\d", message.replace(str(p), ""))
        assert fragment in err.value.detail
    else:
        assert fragment in message


def test_read_table_bad_paths(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="directory"):
        read_table(tmp_path)
    with pytest.raises(InputError, match="unknown file type"):
        read_table(write(tmp_path, "a\n1\n", "t.xlsx"))
    with pytest.raises(InputError, match="Parquet"):
        read_table(write(tmp_path, "a,b\n1,2\n", "t.parquet"))
    with pytest.raises(InputError, match="gz"):
        read_table(write(tmp_path, "a,b\n1,2\n", "t.csv.gz"))
    empty = tmp_path / "e.parquet"
    pq.write_table(pa.table({"a": pa.array([], type=pa.int64())}), empty)
    with pytest.raises(InputError, match="no data rows"):
        read_table(empty)


# -- malformed input raises only InputError ----------------------------------------------------------------
PROPERTY = Schema(
    [N("a", 0, 10, bins=3, nullable=True), C("b", ("x", "y"), other="(other)"), N("c", -5, 5, bins=2, integer=True)]
)
FIELD = st.one_of(
    st.sampled_from(
        [
            "",
            "?",
            "NA",
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
            "-7",
            '"x"',
            '"a,b"',
            '"',
            '""',
            'x"y',
            "(other)",
            "1_0",
            "\u00a0",
        ]
    ),
    st.text(max_size=4),
)
TEXT_TABLE = st.tuples(
    st.lists(st.sampled_from(["a", "b", "c", "d", " a ", "", "b"]), max_size=5),
    st.lists(st.lists(FIELD, max_size=5), max_size=6),
    st.sampled_from(["\n", "\r\n", ""]),
)


def _encode_file(content: bytes, suffix: str, clip: bool, other: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"t{suffix}"
        p.write_bytes(gzip.compress(content) if suffix.endswith(".gz") else content)
        try:
            encode(read_table(p), PROPERTY, clip=clip, other=other)
        except InputError as exc:
            assert "\n" not in str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT_TABLE, st.sampled_from([".csv", ".txt", ".csv.gz"]), st.booleans(), st.booleans())
def test_malformed_text_tables_raise_only_input_error(table, suffix, clip, other):
    header, rows, end = table
    text = "\n".join(",".join(r) for r in [header, *rows]) + end
    _encode_file(text.encode("utf-8", "surrogatepass"), suffix, clip, other)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=80), st.sampled_from([".csv", ".csv.gz", ".parquet"]))
def test_random_bytes_raise_only_input_error(content, suffix):
    _encode_file(content, suffix, False, True)


_ODD = st.one_of(
    st.none(),
    st.text(max_size=8),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.booleans(),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(*[_ODD] * len(ALL_KINDS.columns)), min_size=0, max_size=12))
def test_release_mode_never_raises_for_a_value(rows):
    """Release mode: any value in any cell gives valid codes or leaves its record out, never an error; on
    ``release_schema`` every record keeps a code."""
    from privsample.data.encoding import release_schema

    df = pd.DataFrame({c.name: pd.Series([r[j] for r in rows], dtype=object) for j, c in enumerate(ALL_KINDS.columns)})
    for schema in (ALL_KINDS, release_schema(ALL_KINDS)):
        codes = encode(df, schema, release=True)
        lengths = {len(v) for v in codes.values()}
        assert len(lengths) == 1 and lengths.pop() <= len(rows)
        for col in schema.columns:
            c = codes[col.name]
            assert c.size == 0 or (c.min() >= 0 and c.max() < col.size)
    assert len(codes[ALL_KINDS.names[0]]) == len(rows)  # the total schema leaves no record out


def test_bounds_at_the_float_limit_give_finite_bins_and_values():
    """Bounds whose width overflows a float are refused (exit 2); the widest allowed ones (about +-max/2, what the
    draft writes for a column holding +-1e308) keep bins, encoding and decoding finite."""
    with pytest.raises(InputError, match="too far apart"):
        N("x", -1e308, 1e308, bins=16)
    lim = 8.98e307
    col = N("x", -lim, lim, bins=16)
    edges = col.bin_edges
    assert np.isfinite(edges).all() and (np.diff(edges) > 0).all() and edges[0] == -lim and edges[-1] == lim
    sch = Schema([col])
    codes = encode(pd.DataFrame({"x": [-1e308, 0.0, 5.0, 1e308]}), sch, release=True)["x"]
    assert list(codes) == sorted(codes) and codes[0] == 0 and codes[-1] == 15
    x = np.asarray(decode({"x": np.arange(16)}, sch, np.random.default_rng(0))["x"], dtype=float)
    assert np.isfinite(x).all() and (x >= -lim).all() and (x <= lim).all()
    wide = N("w", -lim, lim, bins=1)
    w = np.asarray(decode({"w": np.zeros(50, dtype=np.int64)}, Schema([wide]), np.random.default_rng(1))["w"])
    assert np.isfinite(w).all() and w.min() < 0 < w.max()


def test_decode_follows_the_neighbouring_densities_within_a_bin():
    """A bin between a denser and a sparser one decodes with more values on the dense side (a linear density from
    the neighbours' counts); equal counts decode uniformly; every value stays in its bin (re-encodes to it)."""
    from privsample.data.decoding import bin_slopes

    col = N("x", 0, 100, bins=10)
    falling = np.repeat(np.arange(10), [40000 // 2**i + 300 for i in range(10)])
    a = bin_slopes(col, np.bincount(falling, minlength=10))
    assert np.all(a[:9] < 0) and np.all(np.abs(a) <= 2)
    assert np.all(bin_slopes(col, np.full(10, 500)) == 0)
    assert np.all(bin_slopes(col, np.full(10, 50)) == 0)  # too few records to tell
    sch = Schema([col, N("i", 0, 99, bins=10, integer=True)])
    df = decode({"x": falling, "i": falling}, sch, np.random.default_rng(3))
    for name in ("x", "i"):
        v = np.asarray(df[name], dtype=float)
        assert np.array_equal(encode(df[[name]], Schema([sch[name]]))[name], falling)
        within = v[falling == 1] - sch[name].bin_edges[1]
        assert within.mean() < 0.45 * (sch[name].bin_edges[2] - sch[name].bin_edges[1])  # uniform: about 0.5
    flat = decode({"x": np.repeat(np.arange(10), 500)}, Schema([col]), np.random.default_rng(4))["x"]
    assert abs(float(np.mean(flat)) - 50) < 1.5
