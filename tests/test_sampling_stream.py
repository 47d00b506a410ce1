"""Large outputs: sampling and writing in chunks (bounded memory, the same per-row law), the default row
count refused when it is mostly noise, and requests that cannot fit refused with the size they would take."""

from __future__ import annotations

import errno
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.io import check_output_size, estimate_output_bytes, write_chunks
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import model as model_mod
from privsample.synth import pgm
from privsample.checks import MAX_ROWS
from privsample.synth.model import MAX_DEFAULT_ROWS, SynthModel
from privsample.synth.mst import MST
from tests.cli import run


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    return small_model(tmp_path_factory)


def small_model(tmp_path_factory):
    """A small MST model (categorical, integer and nullable float columns), saved as a .zip: (model, path)."""
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = np.where(a == 0, rng.integers(0, 2, n), rng.integers(2, 5, n))
    domain = pgm.Domain(["a", "b", "c"], [3, 4, 5])
    eng = NumpyEngine({"a": a, "b": b, "c": c}, domain)
    schema = Schema(
        columns=[
            Categorical("a", ("x", "y", "z")),
            Numeric("b", lower=0, upper=4, bins=4, integer=True),  # bins {0}, {1}, {2}, {3, 4}
            Numeric("c", lower=0.0, upper=1.0, bins=4, nullable=True),  # bins of width 0.25, then <null>
        ],
        provenance="user",
    )
    model = MST(iters=200).fit(eng, Accountant.from_epsilon_delta(8.0, 1e-9), SeededNoise(0, quiet=True), schema=schema)
    path = tmp_path_factory.mktemp("model") / "m.zip"
    model.save(path)
    return SynthModel.load(path), path


def one_line_error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), text
    assert "Traceback" not in text
    return lines[0]


def frequencies(df: pd.DataFrame, cols) -> pd.Series:
    return df[list(cols)].astype(str).value_counts(normalize=True)


def l1(p: pd.Series, q: pd.Series) -> float:
    idx = p.index.union(q.index)
    return float((p.reindex(idx, fill_value=0) - q.reindex(idx, fill_value=0)).abs().sum())


# -- chunked sampling -----------------------------------------------------------------------------


def test_first_chunk_is_the_unchunked_table_and_chunks_add_up(fitted):
    m, _ = fitted
    whole = m.sample_table(2500, np.random.default_rng(7))
    (one,) = list(m.sample_chunks(2500, np.random.default_rng(7), chunk_rows=2500))
    pd.testing.assert_frame_equal(one, whole)
    chunks = list(m.sample_chunks(2500, np.random.default_rng(7), chunk_rows=1000))
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    pd.testing.assert_frame_equal(chunks[0], m.sample_table(1000, np.random.default_rng(7)))
    assert all(list(c.columns) == ["a", "b", "c"] and (c.dtypes == chunks[0].dtypes).all() for c in chunks)
    (empty,) = list(m.sample_chunks(0, np.random.default_rng(0)))
    assert len(empty) == 0 and list(empty.columns) == ["a", "b", "c"]


def test_chunking_keeps_the_per_row_law(fitted):
    """Marginals of a table drawn in many small chunks match one drawn at once (same seed), 1- and 2-way."""
    m, _ = fitted
    n = 30_000
    at_once = m.sample_table(n, np.random.default_rng(11))
    chunked = pd.concat(list(m.sample_chunks(n, np.random.default_rng(11), chunk_rows=50)), ignore_index=True)
    assert len(chunked) == n
    chunked["c"] = pd.cut(chunked["c"], [0, 0.25, 0.5, 0.75, 1], include_lowest=True)  # numeric values: by bin
    at_once["c"] = pd.cut(at_once["c"], [0, 0.25, 0.5, 0.75, 1], include_lowest=True)
    for cols in (["a"], ["b"], ["c"], ["a", "b"], ["a", "c"], ["b", "c"]):
        assert l1(frequencies(chunked, cols), frequencies(at_once, cols)) < 0.04, cols
    # and both follow the model's own marginal of a
    mu = np.asarray(m.model.project(("a",)).datavector())
    expected = pd.Series(mu / mu.sum(), index=pd.MultiIndex.from_tuples([(v,) for v in ["x", "y", "z"]], names=["a"]))
    assert l1(frequencies(chunked, ["a"]), expected) < 0.03


# -- streaming writers ----------------------------------------------------------------------------


def chunk_frames():
    """Three chunks whose first has a text column of missing values only (Parquet must still use strings)."""
    return [
        pd.DataFrame(
            {"t": pd.Series([None, None], dtype=object), "i": pd.array([1, None], dtype="Int64"), "f": [0.5, np.nan]}
        ),
        pd.DataFrame({"t": pd.Series(["a,b", "é\n"], dtype=object), "i": np.array([3, 4]), "f": [1.0, 2.0]}),
        pd.DataFrame(
            {"t": pd.Series(["c", None], dtype=object), "i": pd.array([None, 6], dtype="Int64"), "f": [np.nan, 3.5]}
        ),
    ]


@pytest.mark.parametrize("name", ["out.csv", "out.csv.gz", "out.parquet"])
def test_write_chunks_streams_every_format(name, tmp_path):
    path = tmp_path / name
    assert write_chunks(iter(chunk_frames()), path) == 6
    back = pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)
    assert list(back.columns) == ["t", "i", "f"] and len(back) == 6
    assert back["t"].tolist()[2:5] == ["a,b", "é\n", "c"] and back["t"].isna().tolist() == [1, 1, 0, 0, 0, 1]
    assert back["i"].isna().tolist() == [0, 1, 0, 0, 1, 0] and back["i"].dropna().astype(int).tolist() == [1, 3, 4, 6]
    assert back["f"].isna().sum() == 2
    assert {p.name for p in tmp_path.iterdir()} == {name}


@pytest.mark.parametrize("name", ["out.csv", "out.parquet"])
def test_write_chunks_zero_rows_keeps_the_columns(name, tmp_path):
    path = tmp_path / name
    assert write_chunks([pd.DataFrame({"a": pd.Series([], dtype=object), "b": np.zeros(0)})], path) == 0
    back = pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)
    assert list(back.columns) == ["a", "b"] and len(back) == 0


@pytest.mark.parametrize("name", ["out.csv", "out.parquet"])
def test_running_out_of_disk_is_exit_2_and_leaves_nothing(name, tmp_path):
    def chunks():
        yield chunk_frames()[1]
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(InputError, match="not enough disk space"):
        write_chunks(chunks(), tmp_path / name)
    assert list(tmp_path.iterdir()) == []


# -- size of the request --------------------------------------------------------------------------


def test_output_size_estimate_and_refusal(fitted, tmp_path, monkeypatch):
    """From the schema and the rows alone (public), never from the records or a draw."""
    m, _ = fitted
    columns = list(m.schema.columns)
    per_row = estimate_output_bytes(columns, 10_000, tmp_path / "x.csv") / 10_000
    written = len(m.sample_table(10_000, np.random.default_rng(0)).to_csv(index=False).encode()) / 10_000
    assert 0.5 * written < per_row < 2 * written
    assert estimate_output_bytes(columns, 10**9, tmp_path / "x.parquet") < estimate_output_bytes(
        columns, 10**9, tmp_path / "x.csv"
    )
    check_output_size(columns, 50_000, tmp_path / "x.csv")  # fits
    import privsample.io

    monkeypatch.setattr(privsample.io, "free_bytes", lambda path: 100_000)
    with pytest.raises(InputError, match=r"50,000 rows would take about [\d.]+ MB in x.csv, more than the 100.0 KB"):
        check_output_size(columns, 50_000, tmp_path / "x.csv")
    check_output_size(columns, 50_000, "-")  # standard output: not checked
    names = [c.name for c in columns]  # names only (before discovery): one byte a value, the least it takes
    assert estimate_output_bytes(names, 1000, "x.csv") == sum(len(n) + 1 for n in names) + 1000 * 2 * len(names)


def test_sample_impossible_rows_exit_2_with_the_size(fitted, tmp_path, capsys):
    _, path = fitted
    out = tmp_path / "big.parquet"
    code, text = run(["sample", path, "--rows", 10**12, "-o", out], capsys)
    assert code == 2
    line = one_line_error(text)
    assert "1,000,000,000,000 rows would take about" in line and "TB" in line and "--rows" in line
    code, text = run(["sample", path, "--rows", MAX_ROWS + 1, "-o", out], capsys)
    assert code == 2 and "limit" in one_line_error(text)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["s.csv", "s.csv.gz", "s.parquet"])
def test_sample_writes_many_chunks(name, fitted, tmp_path, capsys, monkeypatch):
    _, path = fitted
    monkeypatch.setattr(model_mod, "CHUNK_CELLS", 1)  # 1,000-row chunks
    out = tmp_path / name
    code, text = run(["sample", path, "--rows", 3500, "-o", out, "--seed", 3], capsys)
    assert code == 0, text
    back = pd.read_parquet(out) if name.endswith(".parquet") else pd.read_csv(out)
    assert len(back) == 3500 and list(back.columns) == ["a", "b", "c"]
    assert set(back["a"]) <= {"x", "y", "z"} and back["b"].between(0, 4).all()
    assert "wrote 3,500 rows" in text


# -- the default number of rows -------------------------------------------------------------------


def stub(total: float, sd: float | None) -> SynthModel:
    return SynthModel(
        mechanism="mst",
        domain={"a": 2},
        model=SimpleNamespace(total=total),
        ledger={},
        info={} if sd is None else {"total_sd": sd},
    )


@pytest.mark.parametrize(
    "total, sd, expected",
    [
        (500.0, 1e4, 500),  # small: the noisy count, however noisy
        (5e6, 100.0, 5_000_000),  # large and precise
        (5e6, None, 5_000_000),  # a model without the noise figure: only the hard cap applies
        (5e6, 1e6, "mostly noise"),  # large and noisy (sd 20% of it)
        (4.6e9, 1.2e9, "above 100,000,000"),  # what a tiny epsilon draws
        (2e8, 10.0, "above 100,000,000"),  # precise but above the cap of the default
    ],
)
def test_default_rows_rule(total, sd, expected):
    m = stub(total, sd)
    if isinstance(expected, int):
        assert m.resolve_rows(None) == expected
    else:
        with pytest.raises(InputError, match=expected):
            m.resolve_rows(None)
    assert m.resolve_rows(12) == 12  # an explicit number is always taken
    with pytest.raises(InputError):
        m.resolve_rows(-1)
    with pytest.raises(InputError, match="limit"):
        m.resolve_rows(MAX_ROWS + 1)


def test_sample_with_a_mostly_noise_count_needs_rows(fitted, tmp_path, capsys):
    import json
    import zipfile

    _, path = fitted
    with zipfile.ZipFile(path) as zf:
        meta, raw = json.loads(zf.read("model.json")), zf.read("arrays.npz")
    meta["model"]["total"], meta["info"]["total_sd"] = 4.6e9, 1.2e9
    noisy = tmp_path / "noisy.zip"
    with zipfile.ZipFile(noisy, "w") as zf:
        zf.writestr("model.json", json.dumps(meta))
        zf.writestr("arrays.npz", raw)
    out = tmp_path / "o.csv"
    code, text = run(["sample", noisy, "-o", out], capsys)
    assert code == 2 and "pass --rows" in one_line_error(text) and not out.exists()
    code, text = run(["sample", noisy, "-o", out, "--rows", 20], capsys)
    assert code == 0 and len(pd.read_csv(out)) == 20


def test_synth_tiny_epsilon_with_schema_needs_rows(tmp_path, capsys):
    """ε = 1e-9: the noisy row count is about 1e9 (seed 1); exit 2 asking for --rows, nothing written."""
    from tests.test_cli import small_schema, small_table

    csv, sch = tmp_path / "data.csv", tmp_path / "schema.yaml"
    small_table().to_csv(csv, index=False)
    sch.write_text(yaml.safe_dump(small_schema()))
    out, saved = tmp_path / "s.csv", tmp_path / "m.zip"
    args = [
        "synth",
        csv,
        "-o",
        out,
        "--epsilon",
        "1e-9",
        "--schema",
        sch,
        "--seed",
        1,
        "--save-model",
        saved,
        "--iters",
        30,
        "--quiet",
        "--method",
        "mst",
    ]
    code, text = run(args, capsys)
    assert code == 2, text
    line = [ln for ln in text.splitlines() if ln.startswith("error:")]
    assert len(line) == 1 and "pass --rows" in line[0] and "Traceback" not in text
    assert {p.name for p in tmp_path.iterdir()} == {"data.csv", "schema.yaml"}
    code, text = run(args + ["--rows", 40], capsys)
    assert code == 0, text
    assert len(pd.read_csv(out)) == 40 and saved.exists()


def test_synth_rows_above_the_limit_refused_before_reading(tmp_path, capsys):
    code, text = run(
        ["synth", tmp_path / "missing.csv", "-o", tmp_path / "s.csv", "--epsilon", 1, "--rows", MAX_ROWS + 1], capsys
    )
    assert code == 2 and "limit" in one_line_error(text)
    assert MAX_DEFAULT_ROWS < MAX_ROWS
