"""Table plans (many marginals of one large table at once, and the adjoint broadcasts) and the junction tree's use
of them for large super-cliques: every answer equals the one-at-a-time computation up to float rounding."""

import math

import numpy as np
import pytest

from privsample.synth import jtree, pgm
from privsample.synth.table_plan import SMALL_CELLS, TablePlan

AXES = tuple("abcdefgh")
SHAPE = (3, 5, 2, 7, 4, 2, 6, 3)
TARGETS = [("b", "h"), ("h", "b"), ("a",), ("c", "d", "e"), AXES, ("g", "a", "f"), ("b", "h"), ("d",), ("e", "f")]


def direct(table, target):
    return jtree.sum_to(table, AXES, target)


def test_a_plan_gives_every_marginal_through_smaller_tables():
    assert math.prod(SHAPE) > SMALL_CELLS
    plan = TablePlan(AXES, SHAPE, TARGETS)
    assert plan.children, "the plan sums out axes into intermediates"
    table = np.random.default_rng(0).random(SHAPE)
    out = plan.marginals(table)
    assert set(out) == set(TARGETS) == set(plan.targets())
    for t in TARGETS:
        np.testing.assert_allclose(out[t], direct(table, t), rtol=1e-12)
    assert not np.shares_memory(out[AXES], table)  # the whole table as a target: a copy


@pytest.mark.parametrize("op", [np.add, np.multiply])
def test_expand_is_the_sum_or_product_of_the_broadcast_tables(op):
    rng = np.random.default_rng(1)
    plan = TablePlan(AXES, SHAPE, TARGETS)
    size = dict(zip(AXES, SHAPE))
    given = {t: rng.random([size[a] for a in t]) + 0.5 for t in set(TARGETS) if t != ("d",)}  # ("d",) missing
    start = rng.random(SHAPE)
    expected = start.copy()
    for t, v in given.items():
        expected = op(expected, jtree.broadcast_to(v, t, AXES))
    got = plan.expand(given, start.copy(), op)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def random_model(seed: int):
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(12)]
    dom = pgm.Domain(names, [int(s) for s in rng.integers(2, 7, len(names))])
    cliques = [("x0", "x1", "x2", "x3"), ("x2", "x3", "x4", "x5"), ("x0", "x5", "x6"), ("x1", "x4", "x6")]
    cliques += [("x6", "x7"), ("x6", "x8"), ("x8", "x9"), ("x9", "x10", "x11"), ("x3",), ("x0", "x1")]
    return dom, cliques, rng


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tree_with_planned_super_cliques_calibrates_as_without(seed, monkeypatch):
    dom, cliques, rng = random_model(seed)
    plain = jtree.JunctionTree(dom, cliques)
    monkeypatch.setattr(jtree, "PLAN_MIN_CELLS", 64)
    planned = jtree.JunctionTree(dom, cliques)
    large = [J for J in planned.supers if planned.plans(J) is not None]
    assert large and any(math.prod(planned.shape[J]) <= 64 for J in planned.supers)  # both kinds in one tree
    work: dict = {}
    for scale in (1.0, 30.0):
        theta = {c: rng.normal(0, scale, plain.shape[c]) for c in cliques}
        ref = plain.marginals(theta, 1000.0)
        for _ in range(2):  # the second call reuses the tables of the first
            got = planned.marginals(theta, 1000.0, work)
            for c in cliques:
                np.testing.assert_allclose(got[c], ref[c], rtol=1e-9, atol=1e-9)
                assert got[c].sum() == pytest.approx(1000.0)
        beliefs = planned.hugin_beliefs(theta, 1000.0)
        for J in planned.supers:
            np.testing.assert_allclose(beliefs[J], plain.hugin_beliefs(theta, 1000.0)[J], rtol=1e-9, atol=1e-9)
    planned.log_space = True  # the log-space sweep: every marginal from its beliefs, none from the plans
    theta = {c: rng.normal(0, 1.0, plain.shape[c]) for c in cliques}
    got, ref = planned.marginals(theta, 10.0), plain.marginals(theta, 10.0)
    for c in cliques:
        np.testing.assert_allclose(got[c], ref[c], rtol=1e-9, atol=1e-12)


def test_a_fit_with_planned_super_cliques_equals_the_plain_fit(monkeypatch):
    dom, cliques, rng = random_model(3)
    ms = [pgm.LinearMeasurement(rng.random(dom.size(c)) * 1e4 / dom.size(c), c, stddev=5.0) for c in cliques]
    jtree.cached_tree.cache_clear()
    plain = pgm.estimate(dom, ms, iters=200, known_total=1e4, backend="numpy")
    monkeypatch.setattr(jtree, "PLAN_MIN_CELLS", 64)
    jtree.cached_tree.cache_clear()
    planned = pgm.estimate(dom, ms, iters=200, known_total=1e4, backend="numpy")
    jtree.cached_tree.cache_clear()
    for c in plain.cliques:
        np.testing.assert_allclose(
            np.asarray(planned.marginals[c].values), np.asarray(plain.marginals[c].values), rtol=1e-7, atol=1e-7
        )


def test_a_bare_super_clique_calibrates_to_the_same_bits(monkeypatch):
    # (x1, x4, x6) is a super-clique of the triangulation that holds no clique: its table starts as ones, which
    # the sweep never writes out; every marginal and belief is the same float as with the table written
    names = [f"x{i}" for i in range(7)]
    dom = pgm.Domain(names, [6, 4, 6, 4, 6, 2, 3])
    pairs = ["03", "04", "06", "12", "14", "15", "26", "34", "36", "45"]
    cliques = [(f"x{a}", f"x{b}") for a, b in pairs]
    monkeypatch.setattr(jtree, "PLAN_MIN_CELLS", 64)
    bare = jtree.JunctionTree(dom, cliques)
    assert bare.bare == {("x1", "x4", "x6")}
    written = jtree.JunctionTree(dom, cliques)
    written.bare = set()
    rng = np.random.default_rng(4)
    work_a: dict = {}
    work_b: dict = {}
    for scale in (1.0, 30.0, 1.0):  # the last call reuses tables that hold the previous call's numbers
        theta = {c: rng.normal(0, scale, bare.shape[c]) for c in cliques}
        got, ref = bare.marginals(theta, 1000.0, work_a), written.marginals(theta, 1000.0, work_b)
        for c in cliques:
            assert np.array_equal(got[c], ref[c])
        got, ref = bare.hugin_beliefs(theta, 1000.0), written.hugin_beliefs(theta, 1000.0)
        for J in bare.supers:
            assert np.array_equal(got[J], ref[J])


@pytest.mark.parametrize("seed", [0, 1])
def test_single_precision_tables_calibrate_to_about_a_millionth(seed, monkeypatch):
    # the huge super-cliques in float32 (halved memory traffic): every marginal within 1e-5 of the double sweep's,
    # returned as float64, and the work tables switch precision when asked for the other
    dom, cliques, rng = random_model(seed)
    monkeypatch.setattr(jtree, "PLAN_MIN_CELLS", 64)
    monkeypatch.setattr(jtree, "SINGLE_MIN_CELLS", 256)
    tree = jtree.JunctionTree(dom, cliques)
    assert tree.huge and any(J not in tree.huge for J in tree.supers)
    work: dict = {}
    for scale in (1.0, 30.0):
        theta = {c: rng.normal(0, scale, tree.shape[c]) for c in cliques}
        ref = tree.marginals(theta, 1e6)
        got = tree.marginals(theta, 1e6, work, single=True)
        if scale == 1.0:  # at scale 30 some table falls deep into float32's underflow: that sweep runs in double
            assert all(work[J].dtype == np.float32 for J in tree.huge)
        for c in cliques:
            assert got[c].dtype == np.float64
            np.testing.assert_allclose(got[c], ref[c], rtol=1e-5, atol=1e-6 * 1e6 / got[c].size)
        again = tree.marginals(theta, 1e6, work)
        assert all(work[J].dtype == np.float64 for J in tree.supers)
        for c in cliques:
            np.testing.assert_allclose(again[c], ref[c], rtol=1e-12)


def test_a_single_precision_table_far_below_one_is_rescaled_or_sent_to_double():
    # float32's smallest normal number is 1.2e-38: a table whose largest cell is near 1e-25 after its children's
    # messages is rescaled to max 1 (so total / z stays in range); one below 1e-30 has lost digits: not usable
    b = np.array([[1e-25, 5e-26], [0.0, 2.5e-26]], dtype=np.float32)
    assert jtree._rescaled(b) and b.dtype == np.float32
    np.testing.assert_allclose(b, [[1.0, 0.5], [0.0, 0.25]], rtol=1e-6)
    for bad in ([[1e-35, 0.0]], [[0.0, 0.0]], [[np.nan, 1.0]]):
        assert not jtree._rescaled(np.array(bad, dtype=np.float32))
    ok = np.array([0.3, 0.1], dtype=np.float32)
    assert jtree._rescaled(ok) and ok.tolist() == np.array([0.3, 0.1], dtype=np.float32).tolist()  # untouched


def test_a_sweep_that_underflows_float32_runs_in_double(monkeypatch):
    dom, cliques, rng = random_model(0)
    monkeypatch.setattr(jtree, "PLAN_MIN_CELLS", 64)
    monkeypatch.setattr(jtree, "SINGLE_MIN_CELLS", 256)
    tree = jtree.JunctionTree(dom, cliques)
    verdicts = []
    real = jtree._rescaled
    monkeypatch.setattr(jtree, "_rescaled", lambda b: verdicts.append(real(b)) or verdicts[-1])
    for _ in range(10):  # sharp potentials, until a table falls below 1e-30 (the first or second draw)
        theta = {c: rng.normal(0, 30.0, tree.shape[c]) for c in cliques}
        work: dict = {}
        got = tree.marginals(theta, 1e6, work, single=True)
        if False in verdicts:
            break
    assert False in verdicts and all(w.dtype == np.float64 for w in work.values())
    ref = tree.marginals(theta, 1e6)
    for c in cliques:
        np.testing.assert_allclose(got[c], ref[c], rtol=1e-12, atol=1e-9)


def test_a_belief_whose_total_is_subnormal_is_computed_in_log_space():
    # two cliques whose potentials put every cell 720 below the other's peak: each belief's total is about
    # 3e-313 (subnormal), where total / z overflows; the sweep must notice and answer in log space
    dom = pgm.Domain(["a", "b", "c"], [2, 2, 2])
    t1 = np.full((2, 2), -720.0)
    t1[0, 0] = 0.0
    t2 = np.full((2, 2), -720.0)
    t2[1, 0] = 0.0
    theta = {("a", "b"): t1, ("b", "c"): t2}
    for use_hugin in (False, True):
        tree = jtree.JunctionTree(dom, list(theta))
        ref = tree.log_beliefs(tree._init(theta), 100.0)
        got = tree.hugin_beliefs(theta, 100.0) if use_hugin else tree.beliefs(theta, 100.0)
        assert tree.log_space
        for J in tree.supers:
            assert np.all(np.isfinite(got[J]))
            np.testing.assert_allclose(got[J], ref[J], rtol=1e-9, atol=1e-9)
