"""Conditional generation (``where``): exact conditional sampling from a fitted model, the condition syntax and
its errors, the command line (``sample --where``, ``evaluate --where``), and no change to unconditioned draws."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from privsample.data.condition import Where, bin_share
from privsample.data.decoding import decode
from privsample.data.encoding import encode
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.synth import pgm
from privsample.synth.model import SynthModel, decompress_codes
from tests.cli import invoke
from tests.test_sampling_stream import small_model

N = 200_000  # records of a conditional sample: a cell's frequency is within 5 sd + 1/N of its probability


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    return small_model(tmp_path_factory)


def compressed_model() -> SynthModel:
    """A model over a compressed domain: column 'k' has 4 categories, the model 3 codes (p and q merged)."""
    rng = np.random.default_rng(1)
    domain = pgm.Domain(["k", "v"], [3, 4])
    joint = rng.random((3, 4)) * 1000
    measurements = [pgm.LinearMeasurement(joint.ravel(), ("k", "v"), stddev=1.0)]
    fit = pgm.estimate(domain, measurements, known_total=float(joint.sum()), iters=300)
    schema = Schema(
        columns=[Categorical("k", ("m", "n", "p", "q")), Numeric("v", lower=0.0, upper=8.0, bins=4)],
        provenance="user",
    )
    return SynthModel(
        mechanism="test",
        domain={"k": 4, "v": 4},
        model=fit,
        ledger={"summary": {"private": False}, "entries": []},
        schema=schema,
        compression={"k": np.array([0, 1, 2, 2])},
    )


def joint(m: SynthModel) -> np.ndarray:
    """The model's exact joint over the schema's codes (brute force over the log-potentials; a compressed
    code's mass shared evenly by its preimage), normalised to 1."""
    attrs = list(m.model.domain.attributes)
    shape = tuple(m.model.domain.shape)
    logp = np.zeros(shape)
    for cl in m.model.cliques:
        t = np.asarray(m.model.potentials[cl].values, dtype=float)
        t = np.transpose(t, [list(cl).index(a) for a in attrs if a in cl])
        logp = logp + t.reshape([shape[i] if a in cl else 1 for i, a in enumerate(attrs)])
    p = np.exp(logp - logp.max())
    for i, a in enumerate(attrs):
        if a in m.compression:
            mp = np.asarray(m.compression[a])
            p = np.take(p, mp, axis=i) / np.bincount(mp)[mp].reshape([-1 if j == i else 1 for j in range(len(attrs))])
    p = np.transpose(p, [attrs.index(a) for a in m.domain])
    return p / p.sum()


def conditional(m: SynthModel, where) -> np.ndarray:
    """The model's exact conditional distribution of decoded records' codes given ``where``: the joint times
    the share of each code's decoded values that satisfy the condition, renormalised."""
    p = joint(m)
    cols = Where.parse(where).resolve(m.schema)
    for i, a in enumerate(m.domain):
        if a in cols:
            p = p * cols[a].weights.reshape([-1 if j == i else 1 for j in range(p.ndim)])
    return p / p.sum()


def code_frequencies(m: SynthModel, df: pd.DataFrame) -> np.ndarray:
    codes = encode(df, m.schema)
    counts = np.zeros(tuple(m.domain.values()))
    np.add.at(counts, tuple(codes[a] for a in m.domain), 1)
    return counts / len(df)


def assert_matches(freq: np.ndarray, p: np.ndarray, n: int) -> None:
    tol = 5 * np.sqrt(p * (1 - p) / n) + 1.0 / n
    worst = np.max(np.abs(freq - p) - tol)
    assert worst <= 0, f"a cell's frequency is off by {worst:.2e} beyond 5 sd"
    assert np.all(freq[p == 0] == 0)


def satisfies(df: pd.DataFrame, where) -> np.ndarray:
    return Where.parse(where).mask(df)


# -- exactness ------------------------------------------------------------------------------------------
CONDITIONS = [
    "a=x",
    "a=x,z; c=0.1..0.6",  # the range cuts two bins of c
    {"b": [1, (3, None)], "c": None},  # an integer range cutting no bin, and the missing value
    "b=3; c=..0.3",  # b=3 is half of the bin {3, 4}
    {"a": ["y"], "b": (0, 2), "c": [(0.2, 0.3), (0.9, 1.0)]},
]


@pytest.mark.parametrize("where", CONDITIONS, ids=str)
def test_conditional_frequencies_match_the_models_exact_conditional(fitted, where):
    m, _ = fitted
    df = m.sample_table(N, np.random.default_rng(3), where=where)
    assert len(df) == N
    assert satisfies(df, where).all()  # every record satisfies the condition, cut bins included
    assert_matches(code_frequencies(m, df), conditional(m, where), N)


def test_brute_force_joint_is_the_models_marginal(fitted):
    """The reference joint agrees with the model's own marginal (its stored total aside)."""
    from privsample.synth.model_marginals import model_marginal

    m, _ = fitted
    mm = model_marginal(m.model, ("a", "b", "c"))
    np.testing.assert_allclose(joint(m).ravel(), mm / mm.sum(), atol=1e-9)


def test_probability_and_default_rows(fitted):
    m, _ = fitted
    p = conditional(m, "a=x")  # unnormalised check below: P(a=x) from the joint
    prob = joint(m)[0].sum()
    assert m.condition_probability("a=x") == pytest.approx(prob, rel=1e-9)
    assert p[1:].sum() == 0
    assert m.resolve_rows(None, "a=x") == max(1, round(m.estimated_rows * prob))
    assert m.resolve_rows(17, "a=x") == 17
    assert len(m.sample_table(None, np.random.default_rng(0), where="a=x")) == m.resolve_rows(None, "a=x")
    # a half-bin of the integer column and a cut bin of the float one carry their share of the probability
    j = joint(m)
    assert m.condition_probability("b=3") == pytest.approx(j[:, 3].sum() / 2, rel=1e-9)
    assert m.condition_probability("c=0..0.125") == pytest.approx(j[:, :, 0].sum() / 2, rel=1e-9)


def test_compressed_columns_are_conditioned_within_their_preimage():
    """A condition on one of two merged categories: its share is half the merged code's, and every drawn
    record has it (weighted decompression)."""
    m = compressed_model()
    for where in ("k=p", "k=m,q; v=1..7", {"k": ["n", "p"], "v": (None, 3.0)}):
        df = m.sample_table(N, np.random.default_rng(5), where=where)
        assert satisfies(df, where).all()
        assert_matches(code_frequencies(m, df), conditional(m, where), N)
    assert m.condition_probability("k=p") == pytest.approx(joint(m)[2].sum(), rel=1e-9)


def test_chunks_and_codes_take_the_condition(fitted):
    m, _ = fitted
    chunks = list(m.sample_chunks(2500, np.random.default_rng(2), chunk_rows=1000, where="a=y; c=<null>"))
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    whole = pd.concat(chunks, ignore_index=True)
    assert (whole["a"] == "y").all() and whole["c"].isna().all()
    codes = m.sample(500, np.random.default_rng(2), where={"a": "z"})
    assert (codes["a"] == 2).all()


def test_decoding_within_a_cut_bin_is_uniform_on_the_intersection():
    col = Numeric("x", lower=0.0, upper=1.0, bins=2)
    codes = {"x": np.zeros(100_000, dtype=np.int64)}
    df = decode(codes, Schema([col], provenance="user"), np.random.default_rng(0), {"x": ((0.1, 0.2), (0.4, 0.7))})
    x = df["x"].to_numpy()
    assert ((x >= 0.1) & (x <= 0.2) | (x >= 0.4) & (x < 0.5)).all()
    assert np.mean(x <= 0.2) == pytest.approx(0.5, abs=0.01)  # pieces of equal length (0.1 each)
    assert bin_share(col, 0.0, 0.5, False, ((0.1, 0.2), (0.4, 0.7))) == pytest.approx(0.4)
    icol = Numeric("i", lower=0, upper=9, bins=2, integer=True)  # bins 0..4, 5..9
    d = decode(
        {"i": np.ones(50_000, dtype=np.int64)},
        Schema([icol], provenance="user"),
        np.random.default_rng(0),
        {"i": ((4.0, 6.0),)},
    )
    assert set(np.unique(d["i"])) == {5, 6}


# -- no change without a condition ----------------------------------------------------------------------
def test_unconditioned_draws_are_unchanged(fitted):
    """``where=None`` gives the rows of the unconditioned sampler for the same seed: the junction-tree draw,
    then uniform decompression and decoding by the model's bin counts, as before conditions existed."""
    m, _ = fitted
    for seed, n in itertools.product((0, 9), (1, 777)):
        rng = np.random.default_rng(seed)
        codes = pgm.record_sampler(m.model)(n, int(rng.integers(2**32)))
        for a, mp in m.compression.items():
            codes[a] = decompress_codes(codes[a], mp, rng)
        expected = decode({a: codes[a] for a in m.domain}, m.schema, rng, bin_counts=m.bin_counts())
        pd.testing.assert_frame_equal(m.sample_table(n, np.random.default_rng(seed)), expected)
        pd.testing.assert_frame_equal(m.sample_table(n, np.random.default_rng(seed), where=None), expected)
        first = next(m.sample_chunks(n, np.random.default_rng(seed)))
        pd.testing.assert_frame_equal(first, expected)


# -- errors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "where, words",
    [
        ("d=1", "no column 'd'"),
        ("a=w", "has no value 'w'"),
        ("b=1.5", "whole numbers"),
        ("c=0.5", "give a range"),
        ("c=2..3", "holds no value"),
        ("c=0.5..0.2", "is empty"),
        ("b=0.2..0.8", "holds no value"),  # no whole number in it
        ("a", "expected 'col=value"),
        ("a=", "expected 'col=value"),
        ("a=x,,y", "empty value"),
        ("a=x; a=y", "twice"),
        (";", "empty"),
        ({"a": (1, 2)}, "categorical"),
        ("b=x", "not a finite number"),
        ("c=1..nan", "not a finite number"),
        ({"b": []}, "empty list"),
        ("b=<null>", "not nullable"),
        (3, "text or a mapping"),
    ],
)
def test_bad_conditions_raise_one_line(fitted, where, words):
    m, _ = fitted
    with pytest.raises(InputError) as exc:
        m.sample_table(10, np.random.default_rng(0), where=where)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_an_impossible_condition_is_refused_naming_it(fitted):
    m, _ = fitted
    m2 = SynthModel.load(fitted[1])
    cl = next(c for c in m2.model.cliques if "a" in c)
    pot = np.asarray(m2.model.potentials[cl].values).copy()
    pot[(slice(None),) * list(cl).index("a") + (2,)] = -1e5  # code z: probability exp(-1e5) = 0 in floats
    meta, arrays = pgm.model_to_arrays(m2.model)
    arrays[f"potential_{m2.model.cliques.index(cl)}"] = pot
    m2.model = pgm.model_from_arrays(meta, arrays)
    with pytest.raises(InputError, match="the condition 'a=z' has probability zero under the model"):
        m2.sample_table(10, np.random.default_rng(0), where="a=z")
    assert m2.condition_probability("a=z") == 0.0
    assert (m2.sample_table(100, np.random.default_rng(0), where="a=x,z")["a"] == "x").all()
    assert len(m.sample_table(5, where="a=z")) == 5  # the original model allows it


def test_a_model_without_a_schema_cannot_be_conditioned(fitted):
    m = SynthModel.load(fitted[1])
    m.schema = None
    with pytest.raises(InputError, match="no schema"):
        m.sample_table(5, where="a=x")


def test_text_and_mapping_forms_agree(fitted):
    m, _ = fitted
    text = m.sample_table(300, np.random.default_rng(4), where="a=x,y; b=1..; c=<null>")
    mapping = m.sample_table(300, np.random.default_rng(4), where={"a": ["x", "y"], "b": (1, None), "c": None})
    pd.testing.assert_frame_equal(text, mapping)


def test_a_category_holding_a_comma_matches_whole():
    col = Categorical("k", ("a,b", "a", "b"))
    w = Where.parse("k=a,b").resolve(Schema([col], provenance="user"))["k"].weights
    assert list(w) == [1, 0, 0]
    w = Where.parse(" k = a , b ;").resolve(Schema([Categorical("k", ("a", "b", "c"))], provenance="user"))["k"].weights
    assert list(w) == [1, 1, 0]


def test_mask_selects_table_values():
    df = pd.DataFrame({"s": ["F", "M", None, "F"], "n": [30, 41.5, 35.0, None], "t": ["3", "3.0", "x", "4"]})
    assert list(Where.parse("s=F; n=30..40").mask(df)) == [True, False, False, False]
    assert list(Where.parse("s=<null>").mask(df)) == [False, False, True, False]
    assert list(Where.parse("t=3").mask(df)) == [True, True, False, False]
    assert list(Where.parse({"n": [None, 35]}).mask(df)) == [False, False, True, True]
    with pytest.raises(InputError, match="no column 'q'"):
        Where.parse("q=1").mask(df)


# -- the API and the command line -----------------------------------------------------------------------
def test_synthesizer_sample_where(fitted):
    import privsample

    s = privsample.load(fitted[1])
    df = s.sample(400, seed=1, where={"a": "x", "c": (0.1, 0.6)})
    assert len(df) == 400 and (df["a"] == "x").all() and df["c"].between(0.1, 0.6).all()
    pd.testing.assert_frame_equal(df, s.sample(400, seed=1, where="a=x; c=0.1..0.6"))
    pd.testing.assert_frame_equal(s.sample(50, seed=1), fitted[0].sample_table(50, np.random.default_rng(1)))
    assert s.condition_probability("a=x") == pytest.approx(fitted[0].condition_probability("a=x"))


run = invoke  # (exit code, stdout, stderr)


def test_cli_sample_where(fitted, tmp_path, capsys):
    out = tmp_path / "s.csv"
    code, _, err = run(["sample", fitted[1], "--where", "a=x,z; c=0.1..0.6", "-n", 500, "--seed", 3, "-o", out], capsys)
    assert code == 0, err
    df = pd.read_csv(out)
    assert len(df) == 500 and satisfies(df, "a=x,z; c=0.1..0.6").all()
    expected = fitted[0].sample_table(500, np.random.default_rng(3), where="a=x,z; c=0.1..0.6")
    assert (df["a"] == expected["a"]).all()
    code, _, err = run(["sample", fitted[1], "--where", "a=y", "-o", tmp_path / "d.csv"], capsys)
    assert code == 0 and len(pd.read_csv(tmp_path / "d.csv")) == fitted[0].resolve_rows(None, "a=y")


@pytest.mark.parametrize("where", ["a=w", "zz=1", "c=0.9..0.1", "a:x", "b=1.5"])
def test_cli_sample_bad_where_is_exit_2_one_line_nothing_written(fitted, tmp_path, capsys, where):
    out = tmp_path / "s.csv"
    code, _, err = run(["sample", fitted[1], "--where", where, "-n", 10, "-o", out], capsys)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err
    assert not out.exists()


def test_cli_evaluate_where_scores_a_subgroup(fitted, tmp_path, capsys):
    m, path = fitted
    real, synth = tmp_path / "real.csv", tmp_path / "synth.csv"
    m.sample_table(2000, np.random.default_rng(0)).to_csv(real, index=False)
    m.sample_table(1000, np.random.default_rng(1)).to_csv(synth, index=False)
    code, out, err = run(["evaluate", real, synth, "--where", "a=x; b=0..1", "-w", 2], capsys)
    assert code == 0, err
    assert "subgroup: a=x; b=0..1" in out
    import privsample

    ev = privsample.evaluate(real, synth, workload=1, where="a=x; b=0..1")
    r = pd.read_csv(real)
    assert ev.n_real == int(((r["a"] == "x") & r["b"].between(0, 1)).sum())
    code, _, err = run(["evaluate", real, synth, "--where", "a=nothing"], capsys)
    assert code == 2 and "no record of the real table" in err
