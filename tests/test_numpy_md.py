"""The NumPy mirror descent (synth/numpy_md.py) gives mbi's answers, so switching backends changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from privsample.synth import jtree, numpy_md, pgm
from privsample.synth.partition import PartitionQuery


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    dom = pgm.Domain(["a", "b", "c", "d", "e"], [3, 4, 2, 5, 3])

    def meas(cl, part=None, weighted=False):
        n = dom.size(cl)
        x = rng.integers(0, 50, n).astype(float)
        if weighted:  # PPSyn paper mode's uniform reconstruction
            w = np.sqrt(rng.integers(1, 4, n).astype(float))
            return pgm.LinearMeasurement(w * (x + rng.normal(0, 2, n)), cl, stddev=2.0, query=pgm.mbi.WeightedQuery(w))
        if part:
            labels = rng.integers(0, part, n)
            labels[:part] = np.arange(part)
            return pgm.LinearMeasurement(
                np.bincount(labels, x, part) + rng.normal(0, 3, part),
                cl,
                stddev=3.0,
                query=PartitionQuery(labels, part),
            )
        return pgm.LinearMeasurement(x + rng.normal(0, 2, n), cl, stddev=2.0)

    ms = [meas((a,)) for a in dom.attributes]
    ms += [meas(("a", "b")), meas(("b", "d", "c"), part=5), meas(("e", "a")), meas(("d", "e"), weighted=True)]
    return dom, ms


@pytest.mark.parametrize("warm", [False, True])
def test_numpy_mirror_descent_equals_mbi(warm):
    dom, ms = _problem()
    start = pgm.estimate(dom, ms[:7], known_total=1000.0, iters=120, backend="jax") if warm else None
    a = pgm.estimate(dom, ms, known_total=1000.0, iters=120, warm_start=start, backend="jax")
    b = pgm.estimate(dom, ms, known_total=1000.0, iters=120, warm_start=start, backend="numpy")
    assert [tuple(c) for c in a.cliques] == [tuple(c) for c in b.cliques]
    for cl in a.cliques:
        np.testing.assert_allclose(
            np.asarray(b.marginals[cl].values), np.asarray(a.marginals[cl].values), atol=1e-8, rtol=0
        )
        np.testing.assert_allclose(
            np.asarray(b.potentials[cl].values), np.asarray(a.potentials[cl].values), atol=1e-8, rtol=0
        )
    for cl in [("a", "c", "e"), ("b",)]:  # inference on cliques outside the model agrees as well
        np.testing.assert_allclose(
            np.asarray(b.project(cl).datavector()), np.asarray(a.project(cl).datavector()), atol=1e-8, rtol=0
        )


def test_auto_backend_picks_numpy_for_small_models_only(monkeypatch):
    dom, ms = _problem(1)
    called = []
    real = numpy_md.estimate
    monkeypatch.setattr(numpy_md, "estimate", lambda *a, **k: called.append(1) or real(*a, **k))
    pgm.estimate(dom, ms, known_total=1000.0, iters=50)
    assert called == [1]
    monkeypatch.setattr(pgm, "NUMPY_MAX_ITERS", 10)
    pgm.estimate(dom, ms, known_total=1000.0, iters=50)
    assert called == [1]
    with pytest.raises(ValueError, match="backend"):
        pgm.estimate(dom, ms, known_total=1000.0, iters=50, backend="torch")


def _loss(model, ms):
    total = 0.0
    for M in ms:
        mu = model.project(M.clique)
        diff = (np.asarray(M.query(mu)) - np.asarray(M.noisy_measurement)) / M.stddev
        total += 0.5 * float(diff @ diff)
    return total


def test_optimistic_step_reaches_the_same_optimum_faster():
    """A partition query with big groups makes mbi's first step tiny; the optimistic start (Armijo
    backtracking from a larger step) gets much further in few steps and converges to the same loss."""
    rng = np.random.default_rng(2)
    dom = pgm.Domain(["a", "b", "c"], [8, 9, 10])
    x = rng.integers(0, 40, dom.size(("a", "b", "c"))).astype(float)
    labels = rng.integers(0, 4, x.size)
    ms = [
        pgm.LinearMeasurement(x.reshape(8, 9, 10).sum(axis=(1, 2)) + rng.normal(0, 5, 8), ("a",), stddev=5.0),
        pgm.LinearMeasurement(
            np.bincount(labels, x, 4) * 1.3, ("a", "b", "c"), stddev=5.0, query=PartitionQuery(labels, 4)
        ),
    ]
    kw = dict(known_total=float(x.sum()), backend="numpy")
    best = _loss(pgm.estimate(dom, ms, iters=3000, **kw), ms)
    fast_long = _loss(pgm.estimate(dom, ms, iters=3000, optimistic_step=True, **kw), ms)
    assert fast_long == pytest.approx(best, rel=1e-4)
    slow = _loss(pgm.estimate(dom, ms, iters=100, **kw), ms) - best
    fast = _loss(pgm.estimate(dom, ms, iters=100, optimistic_step=True, **kw), ms) - best
    assert fast < 0.1 * slow


def test_linear_and_log_space_message_passing_agree():
    dom, ms = _problem(3)
    tree = jtree.JunctionTree(dom, numpy_md.model_cliques(ms))
    rng = np.random.default_rng(4)
    for scale in (1.0, 50.0):
        theta = {c: rng.normal(0, scale, tree.shape[c]) for c in tree.cliques}
        lin, log = tree.beliefs(theta, 100.0), tree.log_beliefs(tree.log_potentials(theta), 100.0)
        hugin = tree.hugin_beliefs(theta, 100.0)
        for J in tree.supers:
            np.testing.assert_allclose(lin[J], log[J], rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(hugin[J], log[J], rtol=1e-9, atol=1e-12)


def test_hugin_sweeps_match_shafer_shenoy_on_a_forest_with_tiny_values():
    from mbi import Domain

    dom = Domain(["a", "b", "c", "d", "e", "f", "g"], [3, 4, 2, 5, 3, 2, 4])
    cliques = [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e"), ("f", "g")]  # two trees and a lone attribute
    rng = np.random.default_rng(7)
    for scale in (1.0, 300.0):  # 300: some cells underflow to 0 in linear space, not a whole belief
        one, other = jtree.JunctionTree(dom, cliques), jtree.JunctionTree(dom, cliques)
        theta = {c: rng.normal(0, scale, one.shape[c]) for c in cliques}
        ss, hugin = one.beliefs(theta, 10.0), other.hugin_beliefs(theta, 10.0)
        assert not one.log_space and not other.log_space
        for J in one.supers:
            np.testing.assert_allclose(hugin[J], ss[J], rtol=1e-9, atol=1e-12)
            assert hugin[J].sum() == pytest.approx(10.0)


@pytest.mark.parametrize("warm", [False, True])
def test_one_way_fast_path_is_bit_identical_to_the_general_loop(warm, monkeypatch):
    dom, ms = _problem(2)
    one_way = ms[:5]
    assert numpy_md._is_product([tuple(M.clique) for M in one_way], one_way)
    assert not numpy_md._is_product(numpy_md.model_cliques(ms), ms)
    start = pgm.estimate(dom, one_way, known_total=1000.0, iters=30, backend="numpy") if warm else None
    fast = numpy_md.estimate(dom, one_way, known_total=1000.0, iters=300, warm_start=start, optimistic_step=warm)
    monkeypatch.setattr(numpy_md, "_is_product", lambda *a: False)
    slow = numpy_md.estimate(dom, one_way, known_total=1000.0, iters=300, warm_start=start, optimistic_step=warm)
    for cl in slow.cliques:
        assert np.array_equal(np.asarray(fast.potentials[cl].values), np.asarray(slow.potentials[cl].values))
        assert np.array_equal(np.asarray(fast.marginals[cl].values), np.asarray(slow.marginals[cl].values))
    mbi_fit = pgm.estimate(dom, one_way, known_total=1000.0, iters=300, warm_start=start, backend="jax")
    if not warm:  # (mbi has no optimistic step)
        for cl in slow.cliques:
            np.testing.assert_allclose(
                np.asarray(fast.marginals[cl].values), np.asarray(mbi_fit.marginals[cl].values), atol=0, rtol=1e-6
            )  # float rounding over 300 steps


def test_reused_tables_give_bit_identical_fits(monkeypatch):
    """The estimator's calibrations reuse the super-cliques' tables (``work``): the fit is bit-identical to one
    that allocates them every time, including marginals that are a super-clique's own table."""
    rng = np.random.default_rng(0)
    d = 30
    dom = pgm.Domain([f"x{i:02d}" for i in range(d)], [int(s) for s in rng.integers(2, 12, d)])
    cls = [(a,) for a in dom.attributes] + [(f"x{i:02d}", f"x{i + 1:02d}") for i in range(0, d - 1, 2)]
    cls += [("x00", "x05", "x09"), ("x03", "x04")]
    ms = [pgm.LinearMeasurement(rng.random(dom.size(c)) * 1e4 / dom.size(c), c, stddev=10.0) for c in cls]
    tree = jtree.JunctionTree(dom, [("x00", "x01"), ("x02",)])  # each clique is its own super-clique
    work: dict = {}
    first = tree.marginals({c: rng.normal(size=tree.shape[c]) for c in tree.cliques}, 1.0, work)
    kept = {c: v.copy() for c, v in first.items()}
    tree.marginals({c: rng.normal(size=tree.shape[c]) for c in tree.cliques}, 1.0, work)
    assert all(np.array_equal(first[c], kept[c]) for c in kept)  # the next calibration did not overwrite them
    reused = pgm.estimate(dom, ms, iters=100, known_total=1e4, backend="numpy")
    orig = jtree.JunctionTree.marginals
    monkeypatch.setattr(
        jtree.JunctionTree, "marginals", lambda self, th, tot, work=None, single=False: orig(self, th, tot)
    )
    fresh = pgm.estimate(dom, ms, iters=100, known_total=1e4, backend="numpy")
    for c in fresh.cliques:
        assert np.array_equal(np.asarray(reused.potentials[c].values), np.asarray(fresh.potentials[c].values))


def test_accelerated_descent_reaches_a_lower_loss_in_fewer_steps():
    """Restarted momentum: from the same start, fewer steps reach plain mirror descent's loss, both head for the
    same optimum, and the model is still a graphical model of the tree (its marginals agree on shared axes)."""
    dom, ms = _problem(3)
    kw = dict(known_total=150.0 * 60, backend="numpy")
    best = _loss(pgm.estimate(dom, ms, iters=4000, **kw), ms)
    plain = _loss(pgm.estimate(dom, ms, iters=200, **kw), ms) - best
    fast = _loss(pgm.estimate(dom, ms, iters=200, accelerated=True, **kw), ms) - best
    assert 0 <= fast < 0.5 * plain
    assert _loss(pgm.estimate(dom, ms, iters=60, accelerated=True, **kw), ms) - best < plain
    long = pgm.estimate(dom, ms, iters=4000, accelerated=True, **kw)
    assert _loss(long, ms) == pytest.approx(best, rel=1e-3)
    a = np.asarray(long.project(("a",)).datavector())
    assert np.allclose(a, np.asarray(long.project(("a", "b")).datavector()).reshape(3, 4).sum(axis=1))


def test_accelerated_descent_keeps_forbidden_cells_at_zero():
    from privsample.synth.zeros import StructuralZeros

    dom, ms = _problem(4)
    zeros = StructuralZeros(dom, ((("a", "b"), ((0,), (1,))), (("a", "b"), ((2,), (3,)))))
    model = pgm.estimate(dom, ms, known_total=9000.0, iters=150, accelerated=True, zeros=zeros)
    ab = np.asarray(model.project(("a", "b")).datavector()).reshape(3, 4)
    assert ab[0, 1] == 0.0 and ab[2, 3] == 0.0 and ab.sum() == pytest.approx(9000.0)
