"""Wide tables (more columns than einsum has subscripts): fits end to end, sizes from the domain alone."""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from privsample import Schema, Synthesizer
from privsample.data.schema import Categorical
from privsample.errors import ResourceLimitError
from privsample.synth import pgm
from privsample.synth import model_marginals as MM
from privsample.synth import selection as S
from privsample.synth.aim import AIM
from privsample.synth.ppsyn import PPSyn

WIDTH = 120
# every 3-way clique of neighbouring columns (the default workloads have 7,140 and 280,840 cliques here: they
# fit, but take minutes; the size check with the default workload is tested below)
CHAIN = [tuple(f"c{j:03d}" for j in range(i, i + 3)) for i in range(WIDTH - 2)]
OPTIONS = {"aim": {"workload": [c[:2] for c in CHAIN]}, "ppsyn": {"workload": CHAIN}, "mst": {}}


@pytest.fixture(scope="module")
def wide():
    rng = np.random.default_rng(23)
    n = 600
    sizes = rng.integers(2, 4, WIDTH)
    cols, prev = {}, None
    for i, k in enumerate(sizes):
        x = rng.integers(0, k, n)
        if prev is not None and i % 2:
            x = np.where(rng.random(n) < 0.7, prev % k, x)
        cols[f"c{i:03d}"] = x.astype(str)
        prev = x
    df = pd.DataFrame(cols)
    schema = Schema([Categorical(c, [str(v) for v in range(int(k))]) for c, k in zip(cols, sizes)])
    return df, schema


@pytest.mark.parametrize("method", ["aim", "ppsyn", "mst"])
def test_wide_fit_spends_its_budget_and_samples_every_column(wide, method):
    df, schema = wide
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise: NOT private (reproducible test)
        s = Synthesizer(method, epsilon=1.0, iters=10, **OPTIONS[method]).fit(df, schema=schema, seed=0)
    ledger = s.model.ledger
    spent = sum(Fraction(e["rho"]) for e in ledger["entries"])
    assert 0 < spent <= Fraction(ledger["summary"]["rho_total"])
    out = s.sample(50, seed=0)
    assert out.shape == (50, WIDTH) and list(out.columns) == list(df.columns)
    if method == "ppsyn":  # past 25 columns: T = 16 * 25 rounds and 0.2 of rho for the one-way marginals
        assert s.model.params["T"] == 16 * 25 and s.model.params["one_way_share"] == 0.2
        init = sum(Fraction(e["rho"]) for e in ledger["entries"] if "/init/" in e["label"])
        assert float(init) == pytest.approx(0.2 * float(spent), rel=1e-6)


def test_model_marginals_of_a_wide_model_match_mbi():
    """More than 52 attributes in the model: einsum subscripts are numbered per elimination."""
    d = 70
    dom = pgm.Domain([f"a{i}" for i in range(d)], [2 + i % 3 for i in range(d)])
    rng = np.random.default_rng(1)
    cliques = [(f"a{i}", f"a{i + 1}") for i in range(d - 1)] + [("a0", "a35", "a69")]
    ms = [pgm.LinearMeasurement(rng.random(dom.size(c)) * 10, c, stddev=1.0) for c in cliques]
    model = pgm.estimate(dom, ms, iters=20, known_total=1000.0)
    mm = MM.ModelMarginals(model)
    for cl in [("a3", "a60"), ("a0", "a69"), ("a10", "a40", "a65")]:
        np.testing.assert_allclose(mm(cl), MM.model_marginal(model, cl), rtol=1e-6, atol=1e-6)
        attrs, out = mm._eliminate(cl)  # every potential, not the tree's beliefs
        out = np.transpose(out, [attrs.index(a) for a in cl])
        np.testing.assert_allclose(
            (out * (mm.total / out.sum())).ravel(), MM.model_marginal(model, cl), rtol=1e-6, atol=1e-6
        )


@pytest.mark.parametrize("k,max_cells", [(2, None), (2, 30), (3, 100), (3, 10_000)])
def test_clique_census_counts_what_listing_would(k, max_cells):
    rng = np.random.default_rng(k)
    dom = pgm.Domain([f"a{i}" for i in range(14)], [int(x) for x in rng.integers(1, 15, 14)])
    census = S.clique_census(dom, k, max_cells)
    for j in range(1, k + 1):
        cls = [c for c in itertools.combinations(dom.attributes, j) if max_cells is None or dom.size(c) <= max_cells]
        n, cells, largest = census[j]
        assert n == len(cls) and cells == sum(dom.size(c) for c in cls)
        assert dom.size(largest) == max(dom.size(c) for c in cls)


def test_candidate_weights_equal_the_direct_sum():
    wl = [(("a", "b"), 1.0), (("b", "c"), 2.0), (("a", "c", "d"), 0.3), (("d",), 0.7)]
    got = S.candidate_weights(wl)
    for cl in S.downward_closure(c for c, _ in wl):
        assert got[cl] == pytest.approx(sum(w * len(set(cl) & set(W)) for W, w in wl), rel=1e-15)


def test_size_check_is_quick_on_200_columns_and_agrees_with_listing():
    dom = pgm.Domain([f"a{i}" for i in range(200)], [3] * 200)
    for syn in (AIM(), PPSyn()):
        assert syn.check_size(dom) > 0  # no candidate listed: 1.3 million 3-way cliques
    small = pgm.Domain([f"a{i}" for i in range(9)], [2, 3, 4, 5, 6, 7, 8, 9, 30])
    syn = PPSyn(max_cells=200)
    count, cells, largest, smallest = syn.candidate_census(small)
    listed = S.candidate_weights(syn._workload(small))
    assert count <= len(listed) + 9 and cells >= sum(small.size(c) for c in listed)
    assert small.size(largest) == max(small.size(c) for c in listed)


def test_memory_refusal_names_the_largest_clique():
    dom = pgm.Domain([f"a{i}" for i in range(40)], [20] * 38 + [21, 22])  # 9,880 3-way cliques of ~8,000 cells
    assert PPSyn(max_memory_mb=1000).check_size(dom) < 1000  # a round scores at most max_candidates of them
    with pytest.raises(ResourceLimitError) as exc:
        PPSyn(max_memory_mb=1000, max_candidates=None).check_size(dom)
    msg = str(exc.value)
    assert "a38,a39" in msg and "max_model_size" in msg and "--max-memory-mb" in msg and "nothing was spent" in msg


def test_model_marginals_across_components_are_products_and_match_mbi():
    """A clique spanning several connected components of the model's graph is the product of its parts'
    marginals (independent under the model), in the clique's order; equal to mbi's inference."""
    dom = pgm.Domain([f"a{i}" for i in range(8)], [2, 3, 4, 2, 3, 2, 5, 2])
    rng = np.random.default_rng(4)
    cliques = [("a0", "a1"), ("a1", "a2"), ("a3", "a4"), ("a5",), ("a6",), ("a7",)]
    ms = [pgm.LinearMeasurement(rng.random(dom.size(c)) * 10, c, stddev=1.0) for c in cliques]
    model = pgm.estimate(dom, ms, iters=30, known_total=100.0)
    mm = MM.ModelMarginals(model)
    assert len(set(mm._component.values())) == 5
    for cl in [("a0", "a3"), ("a4", "a0"), ("a2", "a5", "a0"), ("a6", "a4", "a1", "a7"), ("a0", "a2"), ("a3", "a4")]:
        np.testing.assert_allclose(mm(cl), MM.model_marginal(model, cl), rtol=1e-9, atol=1e-9)
        assert mm(cl).sum() == pytest.approx(model.total)
