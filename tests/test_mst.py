"""MST: budget accounting, faithfulness of the shortcuts, persistence, size refusal."""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest

from privsample.errors import ResourceLimitError
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.model import SynthModel, decompress_codes
from privsample.synth.mst import MST, compress_counts, weighted_simplex_projection


def toy_engine(n=3000, seed=0):
    """A small chain a -> b -> c -> d plus an independent rare-valued e."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = (b * 2 + rng.integers(0, 2, n)) % 5
    d = (c + (rng.random(n) < 0.1)) % 5
    e = np.where(rng.random(n) < 0.97, 0, rng.integers(1, 30, n))  # many empty values: compression
    domain = pgm.Domain(["a", "b", "c", "d", "e"], [3, 4, 5, 5, 30])
    return NumpyEngine({"a": a, "b": b, "c": c, "d": d, "e": e}, domain)


@pytest.fixture(scope="module")
def fitted():
    eng = toy_engine()
    acc = Accountant.from_epsilon_delta(4.0, 1e-9)
    model = MST(iters=300).fit(eng, acc, SeededNoise(0, quiet=True))
    return eng, acc, model


def test_mst_spends_exactly_its_budget_in_thirds(fitted):
    _, acc, model = fitted
    total = sum(Fraction(e.rho) for e in acc.ledger)
    assert total <= Fraction(acc.rho_total)
    assert float(total) == pytest.approx(acc.rho_total, rel=1e-12)
    groups = {}
    for e in acc.ledger:
        groups.setdefault(e.label.split("/")[1], []).append(e.rho)
    assert set(groups) == {"1-way", "select", "2-way"}
    assert len(groups["1-way"]) == 5 and len(groups["select"]) == 4 and len(groups["2-way"]) == 4
    for g in groups.values():
        assert math.fsum(g) == pytest.approx(acc.rho_total / 3, rel=1e-9)
    # noise scales: one-way sd = sigma*sqrt(d), sigma = sqrt(3/(2 rho))
    sigma = math.sqrt(3 / (2 * acc.rho_total))
    one = [e for e in acc.ledger if e.label.startswith("mst/1-way")]
    assert one[0].noise_scale == pytest.approx(sigma * math.sqrt(5), rel=1e-9)
    assert model.ledger["summary"]["private"] is False  # seeded


def test_mst_learns_the_chain(fitted):
    eng, _, model = fitted
    codes = model.sample(rng=np.random.default_rng(1))
    syn = NumpyEngine(codes, eng.domain)
    for cl in [("a", "b"), ("b", "c"), ("c", "d")]:
        x, y = eng.marginal(cl), syn.marginal(cl)
        assert np.abs(x / x.sum() - y / y.sum()).sum() < 0.1
    assert "e" in model.compression  # the rare values of e were merged


def test_closed_form_independent_fit_matches_mirror_descent():
    rng = np.random.default_rng(0)
    dom = pgm.Domain(["x"], [6])
    y = np.array([50.0, 30.0, -4.0, 10.0, 2.0, -1.0]) + rng.normal(0, 1, 6)
    mapping = {"x": np.array([0, 1, 3, 2, 3, 3])}
    M = pgm.LinearMeasurement(y, ("x",), stddev=2.0).compress(mapping, dom)
    cdom = pgm.Domain(["x"], [4])
    total = 95.0
    md = np.asarray(pgm.estimate(cdom, [M], known_total=total, iters=3000).project(("x",)).datavector())
    w = np.asarray(M.query.weights)
    cf = weighted_simplex_projection(np.asarray(M.noisy_measurement) / w, w**2, total)
    np.testing.assert_allclose(cf, md, atol=2e-2 * total / 4)


def test_compress_counts_sums_merged_cells():
    x = np.arange(12).reshape(3, 4)
    m = {"b": np.array([0, 1, 1, 0])}
    out = compress_counts(x, ("a", "b"), m)
    np.testing.assert_array_equal(out, np.stack([x[:, 0] + x[:, 3], x[:, 1] + x[:, 2]], axis=1))


def test_decompress_is_uniform_within_preimage():
    m = np.array([0, 1, 1, 2, 1])
    rng = np.random.default_rng(0)
    out = decompress_codes(np.full(30000, 1), m, rng)
    assert set(np.unique(out)) == {1, 2, 4}
    np.testing.assert_allclose(np.bincount(out, minlength=5)[[1, 2, 4]] / 30000, 1 / 3, atol=0.02)


TIMING_WORDS = ("second", "timing", "time", "clock", "wall", "elapsed", "duration", "cache", "memory", "rss")


def saved_keys(model, path) -> set[str]:
    """Every key anywhere in the saved model.json, and the names of the saved arrays."""
    import io
    import json
    import zipfile

    model.save(path)
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("model.json"))
        with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
            names = set(npz.files)
    keys: set[str] = set()

    def walk(o):
        if isinstance(o, dict):
            keys.update(map(str, o))
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(meta)
    return keys | names


def assert_no_timings_saved(model, tmp_path):
    """Wall-clock timings of the phases that read the data, and the memory a fit used (AIM's cache clears), are
    side channels: kept in memory for the benchmarks (``model.timings``) but never in the saved model (JSON keys,
    array names, ledger, schema)."""
    assert model.timings and all(isinstance(v, (int, float, dict)) for v in model.timings.values())
    keys = saved_keys(model, tmp_path / "timed.zip")
    assert not {k for k in keys if any(w in k.lower() for w in TIMING_WORDS)}, keys
    # a model whose info still holds timings (an older version's) does not write them either
    old = dict(seconds=1.5, estimate_seconds=0.5, phase_seconds={"selection": 0.1}, timings={"x": 1.0}, cache_clears=3)
    model.info.update(old)
    try:
        keys = saved_keys(model, tmp_path / "old.zip")
    finally:
        for k in old:
            model.info.pop(k, None)
    assert not {k for k in keys if any(w in k.lower() for w in TIMING_WORDS)}, keys


def test_saved_mst_model_has_no_timings(fitted, tmp_path):
    _, _, model = fitted
    assert set(model.timings) == {"measure_1way", "select", "measure_2way", "estimate"}  # benchmarks/mst_adult.py
    assert_no_timings_saved(model, tmp_path)


@pytest.mark.parametrize("suffix", ["", ".zip"])
def test_save_load_gives_same_model(fitted, tmp_path, suffix):
    eng, _, model = fitted
    path = tmp_path / f"model{suffix}"
    model.save(path)
    loaded = SynthModel.load(path)
    assert loaded.ledger == model.ledger and loaded.domain == model.domain
    for cl in [("a", "b"), ("c", "d"), ("a", "e")]:
        np.testing.assert_allclose(
            np.asarray(loaded.model.project(cl).datavector()),
            np.asarray(model.model.project(cl).datavector()),
            rtol=1e-9,
            atol=1e-9,
        )
    # same seed -> same rows: sampling depends only on the model
    a = model.sample(500, np.random.default_rng(5))
    b = loaded.sample(500, np.random.default_rng(5))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # the archive has no pickles
    import zipfile

    if suffix == ".zip":
        with zipfile.ZipFile(path) as zf:
            assert sorted(zf.namelist()) == ["arrays.npz", "model.json"]


def test_too_big_domain_refused_before_any_spend():
    rng = np.random.default_rng(0)
    dom = pgm.Domain(["a", "b", "c"], [200_000, 200_000, 3])
    eng = NumpyEngine({k: rng.integers(0, 3, 10) for k in "abc"}, dom)
    acc = Accountant(1.0)
    with pytest.raises(ResourceLimitError):
        MST(max_memory_mb=1024).fit(eng, acc, SeededNoise(0, quiet=True))
    assert acc.spent == 0 and not acc.ledger


def test_weighted_simplex_projection_kkt_and_one_cell():
    """Regression: a single cell holding more than the total looped forever (seen at eps=0.05 on Adult)."""
    assert weighted_simplex_projection(np.array([43399.0]), np.array([0.0118]), 39066.5) == pytest.approx([39066.5])
    assert weighted_simplex_projection(np.array([10.0]), np.array([2.0]), 50.0) == pytest.approx([50.0])
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 30))
        t = rng.normal(0, 100, n) + rng.choice([0, 1000], n)
        w = rng.uniform(0.01, 5, n)
        total = float(rng.uniform(1, 5000))
        mu = weighted_simplex_projection(t, w, total)
        assert mu.min() >= 0 and mu.sum() == pytest.approx(total)
        g = w * (mu - t)  # KKT: g = -lam on the support, g >= -lam off it
        pos = mu > 1e-9 * total
        lam = -g[pos].mean()
        assert np.allclose(g[pos], -lam, atol=1e-6 * (1 + abs(lam)))
        assert np.all(g[~pos] >= -lam - 1e-6 * (1 + abs(lam)))


def test_seeded_sample_is_the_same_in_every_process():
    """mbi's sampler iterates over sets of attribute names, whose order follows PYTHONHASHSEED; sample_model
    samples a copy with integer names, so a seed gives the same records in every process."""
    import subprocess
    import sys

    script = (
        "import numpy as np, warnings; warnings.filterwarnings('ignore')\n"
        "from privsample.marginals import NumpyEngine\n"
        "from privsample.synth import pgm\n"
        "rng = np.random.default_rng(0)\n"
        "names = ['alpha', 'beta', 'gamma', 'delta', 'eps']\n"
        "dom = pgm.Domain(names, [3, 4, 2, 5, 3])\n"
        "codes = {a: rng.integers(0, n, 500) for a, n in zip(names, dom.shape)}\n"
        "codes['beta'] = (codes['alpha'] + codes['gamma']) % 4\n"
        "cls = [('alpha', 'beta', 'gamma'), ('beta', 'gamma', 'delta'), ('gamma', 'delta', 'eps'), ('alpha', 'eps')]\n"
        "ms = [pgm.LinearMeasurement(NumpyEngine(codes, dom).marginals([c])[c].astype(float).ravel(), c, stddev=1.0)"
        " for c in cls]\n"
        "model = pgm.estimate(dom, ms, known_total=500.0, iters=20)\n"
        "s = pgm.sample_model(model, 400, seed=3)\n"
        "print([int((v * np.arange(len(v))).sum()) for v in s.values()])\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": h},
        ).stdout
        for h in ("1", "2", "3")
    }
    assert len(outs) == 1, outs


def test_stratified_draw_keeps_every_group_within_one_of_its_expected_counts():
    """tree_sampler's randomised rounding: in each parent group of c records, value j appears c p_j ± 1 times."""
    from privsample.synth.tree_sampler import conditional_cdf, stratified_draw

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(5), size=7)
    cdf = conditional_cdf(probs)
    key = rng.integers(0, 7, size=5000)
    out = stratified_draw(key, cdf, rng)
    for g in range(7):
        c = int((key == g).sum())
        counts = np.bincount(out[key == g], minlength=5)
        assert np.all(np.abs(counts - c * probs[g]) < 2.0)
    # a parent configuration the model gives no mass: uniform
    assert np.allclose(conditional_cdf(np.zeros((1, 4))), [[0.25, 0.5, 0.75, 1.0]])


def test_numpy_sampler_matches_the_model_like_mbis_and_is_seeded(fitted):
    """The NumPy junction-tree sampler (default) reproduces the model's marginals as closely as mbi's
    JAX sampler on a fitted chain model, and a seed fixes its output."""
    from privsample.synth.model_marginals import ModelMarginals

    model = fitted[2].model
    rows = 3000
    ours, theirs = pgm.sample_model(model, rows, 5), pgm.sample_model(model, rows, 5, backend="mbi")
    again = pgm.sample_model(model, rows, 5)
    assert all(np.array_equal(ours[a], again[a]) for a in ours)
    marg = ModelMarginals(model)
    for cl in [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")]:
        shape = model.domain.project(cl).shape
        want = marg(cl) / float(model.total) * rows

        def gap(x):
            got = np.bincount(np.ravel_multi_index(tuple(x[a] for a in cl), shape), minlength=int(np.prod(shape)))
            return np.abs(got - want).sum() / rows

        assert gap(ours) < 0.03 and gap(ours) < gap(theirs) + 0.02


def test_decompression_follows_the_noisy_counts_within_a_preimage():
    """A merged code is decompressed in proportion to its values' noisy 1-way counts (clipped at 0), uniformly
    where they are all 0."""
    from privsample.synth.model import decompress_weighted, preimage_weights

    m = np.array([0, 1, 1, 2, 1, 2])
    w = preimage_weights(m, np.array([5.0, 90.0, -3.0, 0.0, 10.0, -1.0]))
    assert w.tolist() == [5.0, 90.0, 0.0, 1.0, 10.0, 1.0]  # preimage 2 has no positive count: uniform
    out = decompress_weighted(np.full(40000, 1), m, w, np.random.default_rng(0))
    share = np.bincount(out, minlength=6) / 40000
    assert share[2] == 0 and share[1] == pytest.approx(0.9, abs=0.01) and share[4] == pytest.approx(0.1, abs=0.01)


class _Recording(SeededNoise):
    def __init__(self, seed):
        super().__init__(seed, quiet=True)
        self.calls = []

    def gaussian(self, counts, sigma):
        out = super().gaussian(counts, sigma)
        self.calls.append((np.asarray(counts).copy(), np.asarray(out).copy()))
        return out


def test_mst_decompresses_by_its_one_way_noisy_counts(tmp_path):
    """The saved decompression weights are exactly the step-1 noisy counts clipped at 0 (not the true counts), and
    survive a save and load."""
    rng = np.random.default_rng(0)
    n = 3000
    k = rng.choice(6, n, p=[0.55, 0.4, 0.02, 0.015, 0.01, 0.005])
    j = rng.integers(0, 2, n)
    dom = pgm.Domain(["k", "j"], [6, 2])
    noise = _Recording(3)
    model = MST(iters=100).fit(NumpyEngine({"k": k, "j": j}, dom), Accountant(0.01), noise)
    assert "k" in model.compression and model.decompression.keys() == model.compression.keys()
    true = np.bincount(k, minlength=6)
    (y,) = [out for cnt, out in noise.calls if cnt.shape == (6,) and (cnt == true).all()]
    np.testing.assert_array_equal(model.decompression["k"], np.maximum(y, 0))
    assert not np.array_equal(model.decompression["k"], true)
    model.save(tmp_path / "m.zip")
    back = SynthModel.load(tmp_path / "m.zip")
    np.testing.assert_array_equal(back.decompression["k"], model.decompression["k"])


def test_combined_one_way_weighs_discovery_counts_by_inverse_variance():
    from privsample.synth.mst import combined_one_way

    M = pgm.LinearMeasurement(
        np.array([90.0, 0.0, 30.0]), ("a",), stddev=1.0, query=pgm.mbi.WeightedQuery(np.array([1.0, 0.0, 1.0]))
    )
    y, sd = combined_one_way(np.array([110.0, 5.0, -10.0]), 2.0, M)
    # precision 1/4 + 1 = 1.25 where discovery measured the cell; the unmeasured one keeps the 1-way count
    np.testing.assert_allclose(y, [(110 / 4 + 90) / 1.25, 5.0, (-10 / 4 + 30) / 1.25])
    np.testing.assert_allclose(sd, [1.25**-0.5, 2.0, 1.25**-0.5])
    y0, sd0 = combined_one_way(np.array([1.0, 2.0, 3.0]), 2.0)
    np.testing.assert_array_equal(y0, [1.0, 2.0, 3.0]) and np.testing.assert_array_equal(sd0, [2.0, 2.0, 2.0])
