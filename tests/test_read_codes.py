"""The memory-saving coding path gives the same codes and counts as ``encode(read_table(...))``.

``read_codes`` reads a file a batch at a time and codes text through Arrow's dictionary encoding, and the
NumPy engine holds codes in the smallest unsigned dtype and counts with its own flat index: every code
and every count must equal the reference (int64 codes of ``encode(..., release=True)``, counted with
``np.ravel_multi_index`` and ``np.bincount``), on tables with missing values, non-numbers, values outside
the bounds, unknown categories (the catch-all or the null code) and records that are left out.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from privsample.api.synthesizer import synthesize
from privsample.data import encoding
from privsample.data.encoding import code_dtype, encode, read_codes
from privsample.data.schema import Categorical as C
from privsample.data.schema import Numeric as N
from privsample.data.schema import Schema
from privsample.data.table import read_table
from privsample.errors import InputError
from privsample.marginals.numpy_engine import NumpyEngine
from privsample.synth.pgm import Domain

SCHEMA = Schema(
    [
        C("colour", ("red", "green", "blue"), other="(other)"),  # unknown -> catch-all, missing -> catch-all
        C("size", ("s", "m"), nullable=True, other="(other)"),  # unknown -> catch-all, missing -> null code
        C("pet", ("cat", "dog"), nullable=True),  # unknown and missing -> null code
        C("strict", ("p", "q")),  # unknown or missing -> the record is left out
        C("k", ("1", "2", "3"), other="(other)"),  # integers in Parquet, text in CSV
        N("x", -1.0, 1.0, bins=5, nullable=True),  # out of range -> clipped; non-number -> null code
        N("age", 18, 90, bins=6, integer=True),  # missing or non-number -> the record is left out
        N("w", 0.0, 100.0, edges=(0.0, 0.5, 2.0, 50.0, 100.0), nullable=True),
        C("wide", tuple(f"v{i}" for i in range(299)), nullable=True),  # 300 codes: uint16
    ]
)


def messy_table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)

    def pick(values, p_missing=0.1):
        out = rng.choice(np.array(values, dtype=object), n)
        out[rng.random(n) < p_missing] = None
        return out

    x = rng.normal(0, 1, n).round(3).astype(object)
    x[rng.random(n) < 0.05] = "n/a!"
    x[rng.random(n) < 0.05] = None
    age = rng.integers(10, 100, n).astype(object)
    age[rng.random(n) < 0.01] = None
    age[rng.random(n) < 0.01] = "old"
    k = pd.array(rng.integers(0, 6, n), dtype="Int64")
    k[rng.random(n) < 0.1] = pd.NA
    return pd.DataFrame(
        {
            "colour": pick(["red", "green", "blue", "mauve", "(other)", " red "]),
            "size": pick(["s", "m", "xl"]),
            "pet": pick(["cat", "dog", "eel"]),
            "strict": pick(["p", "q", "r"], 0.002),
            "k": k,
            "x": x,
            "age": age,
            "w": np.where(rng.random(n) < 0.1, np.nan, rng.uniform(-10, 120, n)),
            "wide": pick([f"v{i}" for i in range(320)]),
            "unused": pick(["a", "b"]),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("codes")
    df = messy_table()
    df.to_csv(d / "t.csv", index=False)
    typed = df.assign(x=df["x"].astype(str), age=df["age"].astype(str))  # Parquet: one type a column
    pq.write_table(pa.Table.from_pandas(typed, preserve_index=False), d / "t.parquet", row_group_size=300)
    return {"csv": d / "t.csv", "parquet": d / "t.parquet"}


def reference_counts(codes: dict[str, np.ndarray], domain, clique) -> np.ndarray:
    shape = domain.project(clique).shape
    idx = np.ravel_multi_index([codes[a].astype(np.int64) for a in clique], shape)
    return np.bincount(idx, minlength=int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("batch_rows", [3, 64, 300, None])
def test_read_codes_equals_encode_of_read_table(files, fmt, batch_rows):
    path = files[fmt]
    ref = encode(read_table(path), SCHEMA, release=True)
    got = read_codes(path, SCHEMA, batch_rows=batch_rows)
    assert list(got) == list(ref) == SCHEMA.names
    n = len(ref["colour"])
    assert 1000 < n < 2000  # some records left out, most kept
    for col in SCHEMA.columns:
        assert got[col.name].dtype == code_dtype(col.size), col.name
        np.testing.assert_array_equal(got[col.name], ref[col.name], err_msg=col.name)
    # every code kind occurs: the catch-all, the null code, clipped bins
    assert (ref["colour"] == SCHEMA["colour"].other_code).any() and (ref["size"] == SCHEMA["size"].null_code).any()
    assert (ref["pet"] == SCHEMA["pet"].null_code).any() and (ref["x"] == SCHEMA["x"].null_code).any()
    assert (ref["k"] == SCHEMA["k"].other_code).any() and (ref["w"] == 0).any() and (ref["w"] == 3).any()
    assert code_dtype(SCHEMA["wide"].size) == np.uint16


def test_encode_compact_and_engine_counts_are_exact(files):
    df = read_table(files["parquet"])
    ref = encode(df, SCHEMA, release=True)
    small = encode(df, SCHEMA, release=True, compact=True)
    assert all(small[a].dtype.kind == "u" and np.array_equal(small[a], ref[a]) for a in SCHEMA.names)
    domain = SCHEMA.domain()
    engines = [NumpyEngine(ref, domain), NumpyEngine(small, domain)]
    cliques = [c for k in (1, 2, 3) for c in itertools.combinations(SCHEMA.names, k)] + [tuple(SCHEMA.names)]
    for eng in engines:
        assert all(v.dtype == code_dtype(domain[a]) for a, v in eng._codes.items())
        got = eng.marginals(cliques)
        for cl in cliques:
            expected = reference_counts(ref, domain, cl)
            assert got[cl].dtype == np.int64
            np.testing.assert_array_equal(got[cl], expected, err_msg=str(cl))


def test_engine_flat_index_wide_cliques():
    """Cliques whose cells need a uint16, uint32 and int64 index, and axes of length 1."""
    rng = np.random.default_rng(1)
    sizes = {"one": 1, "a": 256, "b": 257, "c": 70000, "d": 2, "e": 65536}
    domain = Domain(list(sizes), list(sizes.values()))
    codes = {a: rng.integers(0, k, 5000) for a, k in sizes.items()}
    eng = NumpyEngine(codes, domain)
    assert eng.codes("a").dtype == np.uint8 and eng.codes("b").dtype == np.uint16
    assert eng.codes("c").dtype == np.uint32
    for cl in [("one", "e"), ("e", "one"), ("a", "one", "b"), ("a", "b"), ("c", "d"), ("d", "e", "one")]:
        np.testing.assert_array_equal(eng.marginal(cl), reference_counts(codes, domain, cl), err_msg=str(cl))
    for cl, dtype in [(("a", "one"), np.uint16), (("a", "b"), np.uint32), (("c", "e"), np.int64)]:
        shape = domain.project(cl).shape
        idx = eng._flat_index(cl, shape, int(np.prod(shape)))
        assert idx.dtype == dtype
        np.testing.assert_array_equal(idx, np.ravel_multi_index([codes[a] for a in cl], shape))


def test_engine_refuses_codes_outside_the_domain():
    domain = Domain(["a"], [3])
    for bad in ([0, 3], [-1, 0]):
        with pytest.raises(ValueError, match="must lie in"):
            NumpyEngine({"a": np.array(bad)}, domain)
    assert NumpyEngine({"a": [0, 2, 2]}, domain).marginal(("a",)).tolist() == [1, 0, 2]


def test_read_codes_empty_and_missing_column(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("colour,size\n")
    schema = Schema([C("colour", ("red",)), C("size", ("s",), nullable=True)])
    got = read_codes(p, schema, allow_empty=True)
    assert all(len(v) == 0 and v.dtype == np.uint8 for v in got.values())
    with pytest.raises(InputError, match="no data rows"):
        read_codes(p, schema)
    with pytest.raises(InputError, match="column 'pet' is in the schema but not in the data"):
        read_codes(p, Schema([C("pet", ("cat",))]), allow_empty=True)
    bad = tmp_path / "bad.csv"
    bad.write_text("colour,size\nred,s\nred,s,extra\n")
    with pytest.raises(InputError) as err:
        read_codes(bad, schema)
    with pytest.raises(InputError) as ref:
        read_table(bad)
    assert str(err.value) == str(ref.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_synthesize_releases_the_same_as_before(files, fmt, monkeypatch):
    """A reviewed schema's run (seeded noise) is identical with the batch reader and with the reference
    ``encode(read_table(...), release=True)`` coding in int64."""
    kw = dict(epsilon=1.0, method="mst", schema=SCHEMA, seed=5, rows=300, engine="numpy")
    new = synthesize(files[fmt], **kw)
    calls = []

    def reference(path, schema, *, na_values, allow_empty, delimiter, encoding, index_col=None):
        calls.append(path)
        df = read_table(
            path,
            na_values=na_values,
            allow_empty=allow_empty,
            delimiter=delimiter,
            encoding=encoding,
            index_col=index_col,
        )
        return encode(df, schema, release=True)

    monkeypatch.setattr(encoding, "read_codes", reference)
    old = synthesize(files[fmt], **kw)
    assert calls == [files[fmt]]
    pd.testing.assert_frame_equal(new.table, old.table)
    assert new.ledger == old.ledger
