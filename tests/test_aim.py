"""AIM: exact budget use, model-size filter, bad configuration, utility on a toy chain."""

from __future__ import annotations

import io
import math
import time
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.aim import AIM
from privsample.synth.model import FOLDER_FILES, ZIP_DATE, SynthModel
from privsample.synth.model_marginals import ModelMarginals, model_marginal
from privsample.synth.selection import candidate_weights
from tests.test_mst import assert_no_timings_saved, toy_engine


@pytest.fixture(scope="module")
def fitted():
    eng = toy_engine(n=4000)
    acc = Accountant.from_epsilon_delta(3.0, 1e-9)
    model = AIM(max_model_size=1.0, rounds=8, iters=100).fit(eng, acc, SeededNoise(0, quiet=True))
    return eng, acc, model


def test_aim_spends_exactly_its_budget(fitted):
    _, acc, model = fitted
    total = sum(Fraction(e.rho) for e in acc.ledger)
    assert total <= Fraction(acc.rho_total)
    assert float(total) == pytest.approx(acc.rho_total, rel=1e-12)
    kinds = {e.label.split("/")[1] for e in acc.ledger}
    assert kinds == {"init", "select", "measure"}
    # every selection is followed by exactly one measurement
    labels = [e.label.split("/")[1] for e in acc.ledger if not e.label.startswith("aim/init")]
    assert labels[0::2] == ["select"] * (len(labels) // 2) and labels[1::2] == ["measure"] * (len(labels) // 2)
    assert model.info["rounds"]


def test_aim_learns_the_chain(fitted):
    eng, _, model = fitted
    syn = NumpyEngine(model.sample(rng=np.random.default_rng(0)), eng.domain)
    for cl in [("a", "b"), ("b", "c")]:
        x, y = eng.marginal(cl), syn.marginal(cl)
        assert np.abs(x / x.sum() - y / y.sum()).sum() < 0.15


def test_saved_aim_model_has_no_timings(fitted, tmp_path):
    _, _, model = fitted
    assert {"seconds", "estimate_seconds"} <= set(model.timings)  # benchmarks/aim_adult.py
    assert_no_timings_saved(model, tmp_path)


def test_saved_aim_model_has_no_cache_clears(fitted, tmp_path):
    """How often AIM dropped JAX's compiled code depends on the memory a fit used, which grows with the number
    of records: in ``timings`` (benchmarks), never in the saved model."""
    _, _, model = fitted
    assert "cache_clears" in model.timings and "cache_clears" not in model.info
    model.save(tmp_path / "m.zip")
    assert "cache_clears" not in SynthModel.read_meta(tmp_path / "m.zip")["info"]
    assert "cache_clears" not in SynthModel.load(tmp_path / "m.zip").info


def zip_dates(data: bytes) -> dict[str, tuple]:
    """The date of every entry of a zip file, and of the entries of any ``.npz`` inside it."""
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            out[info.filename] = info.date_time
            if info.filename.endswith(".npz"):
                out.update({f"{info.filename}/{k}": v for k, v in zip_dates(zf.read(info)).items()})
    return out


@pytest.mark.parametrize("suffix", [".zip", ""])
def test_two_saves_of_a_model_are_byte_identical(fitted, tmp_path, monkeypatch, suffix):
    """Saving writes no time: every zip entry (the .zip and the arrays.npz inside it or in the folder) carries
    ZIP_DATE, so a save a day later gives the same bytes."""
    _, _, model = fitted
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    model.save(first)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 86_400 + 7)
    model.save(second)
    if suffix:
        assert first.read_bytes() == second.read_bytes()
        dates = zip_dates(first.read_bytes())
    else:
        for name in FOLDER_FILES:
            assert (first / name).read_bytes() == (second / name).read_bytes()
        dates = zip_dates((first / "arrays.npz").read_bytes())
    assert any(k.endswith(".npy") for k in dates) and set(dates.values()) == {ZIP_DATE}, dates
    assert ZIP_DATE == (1980, 1, 1, 0, 0, 0)


def test_candidate_weights_follow_the_reference():
    w = candidate_weights([(("a", "b"), 1.0), (("b", "c"), 2.0)])
    assert w[("a",)] == 1 and w[("b",)] == 3 and w[("c",)] == 2
    assert w[("a", "b")] == 4 and w[("b", "c")] == 5


def test_numpy_model_marginals_match_mbi(fitted):
    _, _, model = fitted
    mm = ModelMarginals(model.model)
    for cl in [("a", "c"), ("d", "a"), ("b",), ("e", "c", "a")]:
        np.testing.assert_allclose(mm(cl), model_marginal(model.model, cl), rtol=1e-6, atol=1e-6)
        attrs, out = mm._eliminate_log(cl)  # the log-space path (used when the linear one underflows)
        out = np.transpose(out, [attrs.index(a) for a in cl])
        np.testing.assert_allclose(
            (out * (mm.total / out.sum())).ravel(), model_marginal(model.model, cl), rtol=1e-6, atol=1e-6
        )


def test_bad_configurations_are_input_errors():
    eng = toy_engine(n=200)
    with pytest.raises(InputError, match="unknown column"):
        AIM(workload=[(("a", "zz"), 1.0)]).fit(eng, Accountant(1.0), SeededNoise(0, quiet=True))
    acc = Accountant(1.0)
    with pytest.raises(InputError, match="too small"):
        AIM(max_model_size=1e-6).fit(eng, acc, SeededNoise(0, quiet=True))
    assert acc.spent == 0


def test_junction_tree_size_equals_mbis_hypothetical_model_size():
    """The size filter's fast count (bit masks) against mbi's junction tree, on random clique sets:
    trees (DFS order), graphs needing fill-in (greedy order, ties by domain order), isolated attributes."""
    import random

    from mbi import Domain
    from mbi.junction_tree import hypothetical_model_size

    from privsample.synth.selection import junction_tree_cells

    rng = random.Random(0)
    for _ in range(400):
        attrs = [f"x{i}" for i in range(rng.randint(1, 8))]
        dom = Domain(attrs, [rng.randint(1, 5) for _ in attrs])
        cliques = [tuple(rng.sample(attrs, rng.randint(1, min(3, len(attrs))))) for _ in range(rng.randint(0, 6))]
        assert junction_tree_cells(dom, cliques) * 8 / 2**20 == pytest.approx(
            hypothetical_model_size(dom, cliques), rel=1e-12, abs=0
        )


def test_model_marginals_through_the_junction_tree_match_mbi():
    """Cliques spanning several super-cliques (a cycle a-b-d-e-a plus c) go through the calibrated
    junction tree's subtree factors; they must equal mbi's exact inference."""
    from tests.test_numpy_md import _problem

    dom, ms = _problem(5)
    model = pgm.estimate(dom, ms, known_total=float(np.mean([M.noisy_measurement.sum() for M in ms[:5]])), iters=100)
    mm = ModelMarginals(model)
    for cl in [("a", "d"), ("c", "e"), ("a", "c", "e"), ("e", "b", "c"), ("a", "b", "c", "d", "e")]:
        np.testing.assert_allclose(mm(cl), model_marginal(model, cl), rtol=1e-5, atol=1e-6)
    assert mm._beliefs  # the tree path ran


def test_cached_einsum_path_gives_the_same_numbers(monkeypatch):
    """ModelMarginals reuses the greedy contraction order np.einsum(optimize=True) would search for; the
    marginals are bit-identical to searching it every time."""
    from privsample.synth import model_marginals as S
    from tests.test_numpy_md import _problem

    dom, ms = _problem(5)
    model = pgm.estimate(dom, ms, known_total=float(np.mean([M.noisy_measurement.sum() for M in ms[:5]])), iters=100)
    cls = [("a", "d"), ("c", "e"), ("a", "c", "e"), ("e", "b", "c"), ("a", "b", "c", "d", "e")]
    cached = [ModelMarginals(model)._eliminate(cl)[1] for cl in cls]
    monkeypatch.setattr(S, "_einsum_path", lambda ops, out: True)  # search every time
    monkeypatch.setattr(S, "_PLANS", {})  # plan the eliminations again (the plans hold the contraction orders)
    searched = [ModelMarginals(model)._eliminate(cl)[1] for cl in cls]
    for a, b in zip(cached, searched):
        np.testing.assert_array_equal(a, b)


def test_size_filter_keyed_by_graph_equals_rebuilding_each_model():
    """size_filter computes each (model + candidate) size from the clique graph with a cache keyed by
    graph; it keeps exactly the candidates whose rebuilt model fits (the definition)."""
    import itertools

    from privsample.synth.selection import downward_closure, model_size_mb, size_filter

    rng = np.random.default_rng(4)
    dom = pgm.Domain([f"a{i}" for i in range(8)], [int(n) for n in rng.integers(2, 30, size=8)])
    cands = [c for k in (1, 2, 3) for c in itertools.combinations(dom.attributes, k)]
    for _ in range(15):
        model = [(a,) for a in dom.attributes] + [cands[i] for i in rng.choice(len(cands), 4, replace=False)]
        limit = float(rng.choice([0.01, 0.05, 0.2]))
        inside = {frozenset(s) for c in model for s in downward_closure([c])}
        want = [c for c in cands if frozenset(c) in inside or model_size_mb(dom, model + [c]) <= limit]
        assert size_filter(dom, model, cands, limit) == want


@pytest.mark.parametrize(
    "seed, runs, widths, sizes, cliques, tree_p, tree_only",
    [
        (11, 500, (2, 16), (1, 120), (0, 12), 0.2, False),  # small graphs; a chain added to some
        (5, 30, (60, 200), (1, 12), (0, 150), 0.3, True),  # beyond 64 attributes; some graphs a chain only
    ],
)
def test_c_graph_cells_equal_the_python_reference(seed, runs, widths, sizes, cliques, tree_p, tree_only):
    """The C junction-tree size (graphcells.c) equals the Python reference on random clique graphs,
    trees included, on small graphs and beyond 64 attributes."""
    from privsample.synth import selection as S

    if S.native_cells is None:
        pytest.skip("the C extension was not built")
    rng = np.random.default_rng(seed)
    for _ in range(runs):
        k = int(rng.integers(*widths))
        dom = pgm.Domain([f"a{i}" for i in range(k)], [int(x) for x in rng.integers(*sizes, size=k)])
        cls = [
            tuple(sorted(set(rng.choice(dom.attributes, size=int(rng.integers(1, 4)))), key=dom.attributes.index))
            for _ in range(int(rng.integers(*cliques)))
        ]
        if rng.random() < tree_p:
            chain = [(dom.attributes[i], dom.attributes[i + 1]) for i in range(k - 1)]
            cls = chain if tree_only else cls + chain
        nbr, cov = S.clique_graph(dom, cls)
        size = tuple(int(x) for x in dom.shape)
        assert S.native_cells.graph_cells(size, nbr, cov) == S.graph_cells_py(size, nbr, cov)


def test_c_graph_cells_hand_sizes_beyond_63_bits_back_to_python():
    from privsample.synth import selection as S

    if S.native_cells is None:
        pytest.skip("the C extension was not built")
    dom = pgm.Domain([f"a{i}" for i in range(20)], [10**4] * 20)
    nbr, cov = S.clique_graph(dom, [tuple(dom.attributes)])
    size = tuple(int(x) for x in dom.shape)
    assert S.native_cells.graph_cells(size, nbr, cov) == -1
    assert S.graph_cells(size, nbr, cov) == 10**80


def test_c_graph_cells_exact_when_only_an_unchosen_candidate_exceeds_63_bits():
    """A hub of 1000 values joined to ten attributes of 100 (and a triangle, so the graph is no tree): eliminating
    the hub first would span 1000 * 100**10 cells, beyond 63 bits, but the greedy order eliminates the small ones
    first, and the junction tree fits: C gives the exact size, as Python does, without falling back."""
    from privsample.synth import selection as S

    if S.native_cells is None:
        pytest.skip("the C extension was not built")
    dom = pgm.Domain(["hub"] + [f"l{i}" for i in range(10)], [1000] + [100] * 10)
    cls = [("hub", f"l{i}") for i in range(10)] + [("hub", "l0", "l1")]
    nbr, cov = S.clique_graph(dom, cls)
    size = tuple(int(x) for x in dom.shape)
    assert 1000 * 100**10 >= 2**63
    want = S.graph_cells_py(size, nbr, cov)
    assert want == 1000 * 100 * 100 + 8 * 1000 * 100  # {hub, l0, l1} and {hub, li} for i >= 2
    assert S.native_cells.graph_cells(size, nbr, cov) == want


@pytest.mark.parametrize("seed", [3, 8])
def test_c_graph_cells_beyond_63_bits_only_when_the_chosen_tree_is(seed):
    """On random graphs of large attributes (many elimination candidates beyond 63 bits): C gives Python's exact
    size whenever it fits in 63 bits, else -1, and :func:`graph_cells` gives Python's exact size either way."""
    from privsample.synth import selection as S

    if S.native_cells is None:
        pytest.skip("the C extension was not built")
    rng = np.random.default_rng(seed)
    seen = {"fits, a candidate beyond": 0, "beyond": 0}
    for _ in range(300):
        k = int(rng.integers(4, 40))
        sizes = [int(x) for x in rng.choice([1, 2, 7, 100, 10**4, 10**6, 2**31], size=k)]
        dom = pgm.Domain([f"a{i}" for i in range(k)], sizes)
        cls = [
            tuple(sorted(set(rng.choice(dom.attributes, size=int(rng.integers(1, 5)))), key=dom.attributes.index))
            for _ in range(int(rng.integers(1, 2 * k)))
        ]
        nbr, cov = S.clique_graph(dom, cls)
        size = tuple(sizes)
        want = S.graph_cells_py(size, nbr, cov)
        got = S.native_cells.graph_cells(size, nbr, cov)
        assert got == (want if want < 2**63 else -1)
        assert S.graph_cells.__wrapped__(size, nbr, cov) == want
        first = [math.prod(s for j, s in enumerate(size) if (nbr[i] | 1 << i) >> j & 1) for i in range(k)]
        if want >= 2**63:
            seen["beyond"] += 1
        elif max(first) >= 2**63:
            seen["fits, a candidate beyond"] += 1
    assert min(seen.values()) >= 20, seen


def test_c_graph_cells_leave_sizes_below_one_to_python():
    """A size of 0 (products no longer grow with the clique): C hands over to Python's exact integers."""
    from privsample.synth import selection as S

    if S.native_cells is None:
        pytest.skip("the C extension was not built")
    dom = pgm.Domain(["a", "b", "c", "d"], [5, 0, 3, 2])
    nbr, cov = S.clique_graph(dom, [("a", "b", "c"), ("c", "d"), ("a", "d")])
    size = (5, 0, 3, 2)
    assert S.native_cells.graph_cells(size, nbr, cov) == -1
    assert S.graph_cells.__wrapped__(size, nbr, cov) == S.graph_cells_py(size, nbr, cov)


def _greedy_reference(clique, scopes, sizes, rank):
    """The elimination calls planned as ModelMarginals first did, with sets (selection._pop_variable)."""
    from privsample.synth import model_marginals as S

    factors = [(list(cl), i) for i, cl in enumerate(scopes)]
    todo = {a for cl in scopes for a in cl} - set(clique)
    steps, slot = [], len(scopes)
    while todo:
        z, inv, factors = S._pop_variable(factors, todo, sizes, rank)
        scope = sorted(set().union(*[set(cl) for cl, _ in inv]) - {z}, key=rank.__getitem__)
        steps.append((z, [i for _, i in inv], *S._step_call(z, [cl for cl, _ in inv], sizes, rank)))
        factors.append((scope, slot))
        slot += 1
    return steps, [i for _, i in factors]


def test_elimination_plan_on_bit_sets_is_the_greedy_order():
    """The planner's bit-set greedy choice (smallest joint scope, ties to domain order) is _pop_variable's, on
    random scopes, sizes and domain orders: the same einsum calls, hence the same marginals."""
    import random

    from privsample.synth import model_marginals as S

    rng = random.Random(0)
    for _ in range(3000):
        attrs = [f"x{i}" for i in range(rng.randint(3, 12))]
        rng.shuffle(attrs)  # domain order unlike the names' order
        rank = {a: i for i, a in enumerate(attrs)}
        sizes = {a: rng.choice([2, 2, 3, 5]) for a in attrs}
        scopes = tuple(tuple(rng.sample(attrs, rng.randint(1, min(6, len(attrs))))) for _ in range(rng.randint(1, 6)))
        used = sorted({a for cl in scopes for a in cl})
        clique = tuple(rng.sample(used, rng.randint(1, min(3, len(used)))))
        steps, products, _, slot_scopes = S._elimination_plan(clique, scopes, sizes, rank)
        planned = [(z, slots, *S._step_call(z, [slot_scopes[i] for i in slots], sizes, rank)) for z, slots, _ in steps]
        assert (planned, [p[0] for p in products]) == _greedy_reference(clique, scopes, sizes, rank)


@pytest.mark.parametrize("cap", [None, 0, 200])
def test_shared_elimination_steps_give_the_same_numbers(cap, monkeypatch):
    """One ModelMarginals shares elimination steps and product parts between cliques; each marginal is
    bit-identical to the one a fresh object (nothing shared) computes, also when the memory cap keeps
    none or only some of the tables."""
    from privsample.synth import model_marginals as S
    from tests.test_numpy_md import _problem

    if cap is not None:
        monkeypatch.setattr(S, "STEP_CACHE_BYTES", cap)

    dom, ms = _problem(5)
    model = pgm.estimate(dom, ms, known_total=float(np.mean([M.noisy_measurement.sum() for M in ms[:5]])), iters=100)
    cls = [("a", "d"), ("c", "e"), ("a", "c", "e"), ("e", "b", "c"), ("a", "b", "c", "d", "e"), ("b", "d")]
    shared = ModelMarginals(model)
    for cl in cls:
        np.testing.assert_array_equal(shared(cl), ModelMarginals(model)(cl))
    assert bool(shared._steps) == (cap != 0)  # steps were kept (and shared) unless the cap is 0
