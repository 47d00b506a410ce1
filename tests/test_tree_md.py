"""The forest-of-pairs mirror descent (MST's estimation) gives numpy_md's (hence mbi's) model."""

from __future__ import annotations

import numpy as np
import pytest

from privsample.privacy import Accountant, SeededNoise
from privsample.synth import mst as mst_module
from privsample.synth import numpy_md, pgm, tree_md


def mst_measurements():
    """The measurements MST fits on the small chain table of tests/test_mst.py (compressed domain)."""
    from tests.test_mst import toy_engine

    seen = {}

    def capture(progress, accountant, stage, iters, domain, measurements, **kw):
        seen.update(domain=domain, measurements=measurements, total=kw["known_total"], backend=kw.get("backend"))
        return pgm.estimate(domain, measurements, known_total=kw["known_total"], iters=1, backend="numpy")

    original = mst_module.estimate_phase
    mst_module.estimate_phase = capture
    try:
        mst_module.MST().fit(toy_engine(), Accountant.from_epsilon_delta(4.0, 1e-9), SeededNoise(0, quiet=True))
    finally:
        mst_module.estimate_phase = original
    return seen


def test_mst_uses_the_tree_path_and_it_matches_numpy_md():
    seen = mst_measurements()
    assert seen["backend"] == "tree"
    dom, ms, total = seen["domain"], seen["measurements"], seen["total"]
    assert tree_md.applies(dom, ms)
    a = tree_md.estimate(dom, ms, known_total=total, iters=150)
    b = numpy_md.estimate(dom, ms, known_total=total, iters=150)
    c = pgm.estimate(dom, ms, known_total=total, iters=150, backend="tree")
    assert a.cliques == b.cliques == c.cliques
    for cl in a.cliques:
        np.testing.assert_allclose(a.marginals[cl].values, b.marginals[cl].values, rtol=1e-8, atol=1e-8 * total)
        np.testing.assert_allclose(a.marginals[cl].values, c.marginals[cl].values, rtol=0, atol=0)
        # same distribution; potentials agree up to where the one-way terms are stored, here the same cliques
        np.testing.assert_allclose(a.potentials[cl].values, b.potentials[cl].values, rtol=1e-8, atol=1e-8)


def test_tree_path_stays_close_to_numpy_md_over_mst_fit_length():
    """Later, float rounding can flip an Armijo test whose two sides tie, after which the paths differ a
    little (on this table from about step 200): the models stay within 0.1% of N of each other."""
    seen = mst_measurements()
    dom, ms, total = seen["domain"], seen["measurements"], seen["total"]
    a = tree_md.estimate(dom, ms, known_total=total, iters=1000)
    b = numpy_md.estimate(dom, ms, known_total=total, iters=1000)
    for cl in a.cliques:
        np.testing.assert_allclose(a.marginals[cl].values, b.marginals[cl].values, rtol=0, atol=1e-3 * total)


def test_applies_only_to_forests_of_pairs_without_warm_start():
    dom = pgm.Domain(["a", "b", "c"], [2, 3, 2])
    y = lambda *s: np.ones(s)  # noqa: E731
    M = pgm.LinearMeasurement
    chain = [M(y(2), ("a",), stddev=1.0), M(y(6), ("a", "b"), stddev=1.0), M(y(6), ("b", "c"), stddev=1.0)]
    assert tree_md.applies(dom, chain)
    cycle = chain + [M(y(4), ("a", "c"), stddev=1.0)]
    assert not tree_md.applies(dom, cycle)
    triple = [M(y(12), ("a", "b", "c"), stddev=1.0)]
    assert not tree_md.applies(dom, triple)
    assert not tree_md.applies(dom, chain, warm_start=object())
    alone = pgm.Domain(["a", "b", "c", "d"], [2, 3, 2, 2])
    assert not tree_md.applies(alone, chain + [M(y(2), ("d",), stddev=1.0)])  # d is in no pair


def test_underflow_falls_back_to_numpy_md(monkeypatch):
    seen = mst_measurements()
    dom, ms, total = seen["domain"], seen["measurements"], seen["total"]

    def underflow(self, theta, total):
        raise tree_md._Underflow

    monkeypatch.setattr(tree_md._Forest, "marginals", underflow)
    a = tree_md.estimate(dom, ms, known_total=total, iters=60)
    b = numpy_md.estimate(dom, ms, known_total=total, iters=60)
    for cl in a.cliques:
        np.testing.assert_array_equal(a.marginals[cl].values, b.marginals[cl].values)


@pytest.mark.parametrize("iters", [1, 120])
def test_tree_path_reports_progress_like_numpy_md(iters):
    seen = mst_measurements()
    got = []
    tree_md.estimate(seen["domain"], seen["measurements"], known_total=seen["total"], iters=iters, on_block=got.append)
    assert got[-1] == iters and got == sorted(got)
