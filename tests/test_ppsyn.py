"""PPSyn (Zhang, Deng and Yin 2023, Section 4): partitions, the paper's stopping rules, exact budget use,
data access confined to the three private steps, paper mode flagged unsafe, utility on a toy chain."""

from __future__ import annotations

import warnings

import functools
import inspect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.marginals.base import MarginalEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import partition as partition_module, pgm, ppsyn, ppsyn_steps, selection
from privsample.synth.ppsyn import annealed, note
from privsample.synth.partition import (
    MergePath,
    PartitionQuery,
    SplitPath,
    paper_stop,
    partition_sums,
    plan_reference,
    reconstruction_error,
    required_rho,
    uniform_spread,
)
from privsample.synth.ppsyn import DATA_STEPS, PPSyn, UnsafeMechanismWarning
from privsample.synth.ppsyn_steps import PAPER_NOTE
from privsample.synth.model_marginals import ModelMarginals


def chain_engine(n=4000, seed=0):
    """a -> b -> c -> d (strong dependencies), small domains."""
    rng = np.random.default_rng(seed)
    a = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    b = np.where(rng.random(n) < 0.85, a, rng.integers(0, 4, n))
    c = np.where(rng.random(n) < 0.8, b, rng.integers(0, 4, n))
    d = np.where(rng.random(n) < 0.8, (c + 1) % 5, rng.integers(0, 5, n))
    domain = pgm.Domain(["a", "b", "c", "d"], [3, 4, 4, 5])
    return NumpyEngine({"a": a, "b": b, "c": c, "d": d}, domain)


class RecordingEngine(MarginalEngine):
    """Delegates to an engine and records which PPSyn step asked for which marginals."""

    def __init__(self, inner, synth):
        self.inner, self.synth, self.domain = inner, synth, inner.domain
        self.calls: list[tuple[str | None, list]] = []
        self.planning = False

    def marginals(self, cliques):
        cliques = [tuple(c) for c in cliques]
        assert not self.planning, "the data was read while planning"
        self.calls.append((self.synth.data_step, cliques))
        return self.inner.marginals(cliques)


def exact_spend(acc):
    total = sum(Fraction(e.rho) for e in acc.ledger)
    assert total <= Fraction(acc.rho_total) * (1 + Fraction(1, 10**9))
    assert float(total) == pytest.approx(acc.rho_total, rel=1e-9)


ROUND_STEPS = {"note": ["select", "contribution", "measure"], "annealed": ["select", "measure"]}


@pytest.fixture(scope="module", params=["annealed", "note"])
def dp_fit(request):
    schedule = request.param
    synth = PPSyn(workload_k=2, rounds=3 if schedule == "note" else 6, iters=150, max_model_size=1.0, schedule=schedule)
    eng = RecordingEngine(chain_engine(), synth)
    plans, rules = [], []

    def public_only(real, record):
        """Wrap a planning function: it must run outside the data steps and must not read the engine."""

        def wrapped(*args, **kw):
            assert synth.data_step is None
            record(args)
            eng.planning = True
            try:
                return real(*args, **kw)
            finally:
                eng.planning = False

        return wrapped

    def record_plan(args):  # the planners get model marginals, never the data
        plans.append({cl: np.array(v) for cl, v in args[0].items()})

    mp = pytest.MonkeyPatch()
    mp.setattr(note, "public_plan", public_only(ppsyn_steps.public_plan, record_plan))
    mp.setattr(annealed, "public_options", public_only(ppsyn_steps.public_options, record_plan))
    mp.setattr(note, "budget_rule", public_only(ppsyn_steps.budget_rule, rules.append))
    try:
        acc = Accountant.from_epsilon_delta(2.0, 1e-9)
        model = synth.fit(eng, acc, SeededNoise(0, quiet=True))
    finally:
        mp.undo()
    return eng, acc, model, plans, rules, schedule


# -- PartitionQuery ---------------------------------------------------------------------------------


def test_partition_query_round_trip():
    """A (nearly) noiseless partition measurement is reproduced by the fitted model's group sums."""
    eng = chain_engine(n=2000)
    cl = ("b", "c")
    x = eng.marginal(cl).ravel()
    labels = np.array([0, 0, 1, 1, 2, 3, 3, 3, 4, 4, 4, 4, 5, 6, 6, 0])
    q = PartitionQuery(labels, 7)
    assert q.op_norm_sq() == 4.0 and q == q and q != PartitionQuery(labels, 7) and hash(q) == id(q)
    y = partition_sums(x, labels, 7)
    m = pgm.LinearMeasurement(y, cl, stddev=1e-3, query=q)
    assert pgm.estimation.minimum_variance_unbiased_total([m]) == 1.0  # never used for the total
    model = pgm.estimate(eng.domain, [m], known_total=2000.0, iters=2000)
    fitted = np.asarray(model.project(cl).datavector())
    np.testing.assert_allclose(partition_sums(fitted, labels, 7), y, atol=1e-3)
    np.testing.assert_allclose(np.asarray(q(model.project(cl))), partition_sums(fitted, labels, 7), rtol=1e-9)


def test_reconstruction_error_and_uniform_spread():
    v = np.array([1.0, 3.0, 10.0, 0.0])
    labels = np.array([0, 0, 1, 1])
    np.testing.assert_allclose(uniform_spread(v, labels), [2, 2, 5, 5])
    assert reconstruction_error(v, labels) == pytest.approx(1 + 1 + 5 + 5)
    assert required_rho(3, 10.0, 2.0, 0.5) == pytest.approx(9 / (math.pi * 9))
    assert required_rho(3, 10.0, 5.0, 0.5) == math.inf


# -- Alg. 3 and 4 ---------------------------------------------------------------------------------------


def test_alg3_returns_the_first_local_minimum_of_rho():
    v = np.array([2.0, 1.0, 1.0, 0.0, 4.0, 5.0])
    path = MergePath(v)
    entries = list(path)
    assert [e.parts for e in entries] == [6, 5, 4, 3, 2, 1]
    rhos = [required_rho(e.parts, 9.0, e.re, 0.7) for e in entries]
    np.testing.assert_allclose(rhos[:5], [0.28872, 0.2005, 0.18131, 0.18207, 0.11692], atol=1e-5)
    assert rhos[5] == math.inf
    t, rho = paper_stop(path, 9.0, 0.7)
    assert t == 2 and rho == rhos[2]  # the first local minimum, not the global one (t = 4)
    # merges are of runs in sorted order; the tie at step 3 goes to the leftmost pair
    groups = entries[3].labels
    assert groups[3] == groups[1] == groups[2] != groups[0] and groups[4] == groups[5] != groups[0]
    for e in entries:
        assert reconstruction_error(v, e.labels) == pytest.approx(e.re)


NATIVE = [False] + ([True] if partition_module.native_split is not None else [])


def test_the_c_split_path_is_built():
    """The C path is optional for installs without a compiler; ours (and CI's) must have it."""
    assert partition_module.native_split is not None


@pytest.mark.parametrize("native", NATIVE)
def test_alg4_splits_round_robin_and_respects_the_cap(native):
    v = np.zeros((4, 6))
    v[:2, :] = 10.0
    v[:, 3:] += 5.0
    SplitPath = functools.partial(partition_module.SplitPath, native=native)
    path = SplitPath(v, max_parts=3)
    entries = list(path)
    assert [e.parts for e in entries] == [1, 2, 3]
    top_bottom = np.repeat([[0], [1]], 2, axis=0) * np.ones((1, 6), dtype=int)
    np.testing.assert_array_equal(entries[1].labels.reshape(4, 6), top_bottom)  # step 0: axis 0
    second = top_bottom.copy()
    second[:2, 3:] = 2  # step 1: axis 1; top and bottom tie on RE -> the older (top) box
    np.testing.assert_array_equal(entries[2].labels.reshape(4, 6), second)
    assert entries[2].re < entries[1].re < entries[0].re
    for e in entries:
        assert reconstruction_error(v, e.labels) == pytest.approx(e.re)
    full = list(SplitPath(v))
    assert full[-1].parts == v.size and full[-1].re == pytest.approx(0.0)  # ends when no box can be split
    # the paper's Alg. 4 rule: rho is infinite while RE >= eta C
    t, rho = paper_stop(SplitPath(v), 60.0, 0.7)
    assert math.isfinite(rho) and SplitPath(v).re(t) < 0.7 * 60.0


@pytest.mark.skipif(partition_module.native_split is None, reason="C split path not built")
@pytest.mark.parametrize("kind", ["gamma", "integers", "uniform"])
def test_c_and_numpy_split_paths_agree(kind):
    """Same partitions and RE at every step; integer counts have many exact ties (boxes and split points
    with equal RE), which both break the same way (to 9 decimals: oldest box, smallest split point)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        k = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 30 if k < 3 else 12, size=k))
        v = {
            "gamma": lambda: rng.gamma(0.5, size=shape) * 100,
            "integers": lambda: rng.integers(0, 5, size=shape) * 1.0,
            "uniform": lambda: rng.random(shape),
        }[kind]()
        max_parts = int(rng.choice([1, 4, 64, 300]))
        ref, fast = SplitPath(v, max_parts, native=False), SplitPath(v, max_parts, native=True)
        assert len(fast) == len(ref)
        assert fast.splits == ref.splits
        np.testing.assert_allclose(fast._re, ref._re, rtol=1e-9, atol=1e-7)
        for t in (0, len(ref) // 2, len(ref) - 1):
            np.testing.assert_array_equal(fast.labels(t), ref.labels(t))
    big = rng.gamma(0.5, size=(40, 30, 9)) * 100  # boxes above _DIRECT_CELLS: the sorted-slab branch
    ref, fast = SplitPath(big, 200, native=False), SplitPath(big, 200, native=True)
    assert fast.splits == ref.splits and fast.parts(150) == 151  # lazy: extends past the first 64 parts


def test_plan_reference_is_the_first_local_minimum_of_f():
    v = np.random.default_rng(3).poisson(20, size=(5, 6)).astype(float)
    path = SplitPath(v)
    k, e = plan_reference(path, 0.01)
    unit = 1 / math.sqrt(math.pi * 0.01)
    f = [path.re(i) + path.parts(i) * unit for i in range(k + 2) if path.has(i)]
    assert e == pytest.approx(f[k])
    assert all(f[i + 1] <= f[i] for i in range(k)) and (len(f) == k + 1 or f[k + 1] > f[k])


# -- configuration ------------------------------------------------------------------------------------


@pytest.mark.parametrize("eta", [0.0, -0.1, 1.01, 2])
def test_eta_outside_unit_interval_is_an_input_error(eta):
    with pytest.raises(InputError, match="eta"):
        PPSyn(eta=eta)


def test_bad_mode_and_size_are_input_errors():
    PPSyn(eta=1.0)
    with pytest.raises(InputError, match="mode"):
        PPSyn(mode="fast")
    acc = Accountant(1.0)
    with pytest.raises(InputError, match="too small"):
        PPSyn(max_model_size=1e-6).fit(chain_engine(n=100), acc, SeededNoise(0, quiet=True))
    assert acc.spent == 0


# -- PPSyn-DP -------------------------------------------------------------------------------------------


def test_dp_spends_exactly_its_budget(dp_fit):
    _, acc, model, _, _, schedule = dp_fit
    exact_spend(acc)
    kinds = [e.label.split("/")[1] for e in acc.ledger]
    assert kinds[:4] == ["init"] * 4
    rounds, per = kinds[4:], ROUND_STEPS[schedule]
    assert rounds == per * (len(rounds) // len(per)) and len(rounds) == len(per) * len(model.info["rounds"])
    assert model.params["schedule"] == schedule
    init = [e.rho for e in acc.ledger[:4]]
    assert math.fsum(init) == pytest.approx(0.1 * acc.rho_total, rel=1e-9)
    assert init[3] > init[1] > init[0]  # PrivSyn: rho_i grows with cells^(2/3)
    assert model.info["rounds"] and model.private is False  # seeded noise
    for r in model.info["rounds"]:
        assert {"clique", "parts", "rho_m", "sigma_m"} <= set(r)
        assert r["sigma_m"] == pytest.approx((2 * r["rho_m"]) ** -0.5, rel=1e-9)
    if schedule == "annealed":  # rho_m is 0.9 * 0.9 rho / T, times 4 per annealing step, until the final round
        regular = [r["rho_m"] for r in model.info["rounds"] if not r["final"]]
        assert regular[0] == pytest.approx(0.81 * acc.rho_total / model.params["T"], rel=1e-9)
        ratios = [b / a for a, b in zip(regular, regular[1:])]
        assert all(q == pytest.approx(1.0) or q == pytest.approx(4.0) for q in ratios)
        assert model.info["rounds"][-1]["final"]


def test_annealed_rounds_get_their_share_of_what_the_fit_was_given():
    """With a spend before the fit (private schema discovery), rho = what remains is the fit's budget: the
    rounds share 0.9 rho (init takes 0.1 rho), and the earlier spend is not subtracted a second time."""
    acc = Accountant.from_epsilon_delta(2.0, 1e-9)
    acc.spend(0.1 * acc.rho_total, "discover/schema", mechanism="test")  # e.g. private schema discovery
    rho = acc.remaining
    synth = PPSyn(workload_k=2, rounds=6, iters=100, max_model_size=1.0)
    model = synth.fit(chain_engine(n=2000), acc, SeededNoise(0, quiet=True))
    exact_spend(acc)
    T, alpha = model.params["T"], model.params["alpha"]
    regular = [r["rho_m"] for r in model.info["rounds"] if not r["final"]]
    assert regular, "no regular round to check"
    assert regular[0] == pytest.approx(alpha * 0.9 * rho / T, rel=1e-9)  # was alpha (0.9 rho - 0.1 rho_total) / T
    sel = [e.rho for e in acc.ledger if e.label.startswith("ppsyn/select/")]
    assert sel[0] == pytest.approx((1 - alpha) * 0.9 * rho / T, rel=1e-9)


def test_dp_model_saves_and_loads(dp_fit, tmp_path):
    from privsample.synth.model import SynthModel

    _, _, model, _, _, _ = dp_fit
    back = SynthModel.load(model.save(tmp_path / "ppsyn.zip"))
    assert back.mechanism == "ppsyn" and back.params["mode"] == "dp" and back.info["rounds"] == model.info["rounds"]
    assert sum(back.sample(50, np.random.default_rng(0))["a"] >= 0) == 50


def test_saved_dp_model_has_no_timings(dp_fit, tmp_path):
    from tests.test_mst import assert_no_timings_saved

    _, _, model, _, _, schedule = dp_fit
    assert {"seconds", "estimate_seconds", "phase_seconds"} <= set(model.timings)  # benchmarks/ppsyn_*.py
    if schedule == "annealed":
        assert model.timings["phase_seconds"]
    assert_no_timings_saved(model, tmp_path)


def test_dp_reads_the_data_only_in_the_private_steps(dp_fit):
    eng, _, model, plans, rules, schedule = dp_fit
    steps = [s for s, _ in eng.calls]
    assert set(steps) <= set(DATA_STEPS) and None not in steps
    assert steps[0] == "init" and all(len(cl) == 1 for cl in eng.calls[0][1])
    rounds, per = model.info["rounds"], ROUND_STEPS[schedule]
    assert steps[1:] == per * len(rounds)
    for i, r in enumerate(rounds):
        chosen = tuple(r["clique"])
        for j in range(1, len(per)):  # after selection, only the chosen clique is read
            assert eng.calls[1 + len(per) * i + j][1] == [chosen]
    assert len(plans) == len(rounds)
    assert (len(rules) > 0) == (schedule == "note")
    # the plan's inputs are model marginals (floats summing to the model total), not counts
    assert all(abs(v.sum() - model.info["estimated_total"]) < 1e-6 * v.sum() for p in plans for v in p.values())
    for fn in (
        ppsyn_steps.public_plan,
        ppsyn_steps.public_options,
        ppsyn_steps.budget_rule,
        ppsyn_steps.round_budgets,
        ppsyn_steps.one_way_budgets,
        paper_stop,
        plan_reference,
    ):
        assert not {"engine", "data", "x", "counts"} & set(inspect.signature(fn).parameters)


def test_dp_beats_the_independent_baseline(dp_fit):
    eng, _, model, _, _, _ = dp_fit
    real = eng.inner
    n = real.total()
    mm = ModelMarginals(model.model)
    attrs = list(real.domain.attributes)
    err, base = [], []
    for i, a in enumerate(attrs):
        for b in attrs[i + 1 :]:
            x = real.marginal((a, b)).ravel() / n
            mu = mm((a, b))
            indep = np.multiply.outer(real.marginal((a,)), real.marginal((b,))).ravel() / n / n
            err.append(np.abs(x - mu / mu.sum()).sum())
            base.append(np.abs(x - indep).sum())
    assert np.mean(err) < 0.9 * np.mean(base)


def test_round_budgets_and_budget_rule():
    b = ppsyn_steps.round_budgets(1.0, 0.01, 0.005, 0.08)
    assert not b.final and (b.rho_sel, b.rho_c, b.rho_plan) == (0.01, 0.005, 0.08)
    b = ppsyn_steps.round_budgets(0.1, 0.01, 0.005, 0.08)
    assert b.final and (b.rho_sel, b.rho_c, b.rho_plan) == pytest.approx((0.01, 0.005, 0.085))
    assert ppsyn_steps.round_budgets(1.0, 0.01, 0.005, 0.08, last=True).final  # round 10 T
    v = np.array([[50.0, 1.0, 0.0], [2.0, 40.0, 3.0]])
    plan = ppsyn_steps.public_plan({("a", "b"): v}, 0.01, 4096)[("a", "b")]
    k, rho = ppsyn_steps.budget_rule(plan, 200.0, 0.7, 0.01, cap=1.0)
    assert (k, rho) == paper_stop(plan.path, 200.0, 0.7) and rho < 0.01
    assert ppsyn_steps.budget_rule(plan, 200.0, 0.7, 0.01, cap=1.0, floor=True) == (plan.k_ref, 0.01)
    assert ppsyn_steps.budget_rule(plan, 0.0, 0.7, 0.01, cap=0.004) == (plan.k_ref, 0.004)  # rho = inf -> plan, capped
    assert ppsyn_steps.one_way_budgets([8, 1], 0.3) == pytest.approx([0.24, 0.06])


# -- paper mode -----------------------------------------------------------------------------------------


def test_paper_mode_warns_and_is_labelled_unsafe():
    eng = chain_engine(n=2000)
    acc = Accountant.from_epsilon_delta(2.0, 1e-9)
    with pytest.warns(UnsafeMechanismWarning, match="NOT differentially private"):
        model = PPSyn(mode="paper", workload_k=2, rounds=1, iters=100, max_model_size=1.0).fit(
            eng, acc, SeededNoise(0, quiet=True)
        )
    exact_spend(acc)
    assert model.private is False and model.params["unsafe"] is True and model.mechanism == "ppsyn-paper"
    assert all(
        e.label.startswith("UNSAFE-paper/") and e.private is False and e.details["note"] == PAPER_NOTE
        for e in acc.ledger
    )
    assert model.ledger["summary"]["private"] is False
    assert model.info["rounds"] and len(model.info["rounds"]) <= 10  # max_rounds = 10 T


# -- annealed schedule: options and the selection quality's sensitivity ------------------------------------


def test_public_options_grow_and_end_with_the_identity():
    v = np.random.default_rng(1).gamma(0.5, 10.0, size=(6, 7))
    opts = ppsyn_steps.public_options({("a", "b"): v}, max_parts=4096)[("a", "b")]
    parts = [o.parts for o in opts]
    assert parts[0] == 1 and parts[-1] == v.size and parts == sorted(parts)
    assert np.array_equal(opts[-1].labels, np.arange(v.size))
    for o in opts:
        assert o.labels.shape == (v.size,) and set(np.unique(o.labels)) == set(range(o.parts))
    assert [o.parts for o in ppsyn_steps.public_options({("a",): np.array([5.0])}, 16)[("a",)]] == [1]


def test_public_options_cache_keeps_unmoved_cliques():
    """Options are recomputed only for cliques whose model marginal moved by more than ``refresh``."""
    rng = np.random.default_rng(2)
    mus = {
        (f"a{i}", "b"): rng.gamma(0.5, 10.0, size=(int(rng.integers(2, 9)), int(rng.integers(2, 9)))) for i in range(6)
    }
    cache = {}
    first = ppsyn_steps.public_options(mus, 64, cache)
    moved = dict(mus)
    moved[("a0", "b")] = np.roll(mus[("a0", "b")], 1)  # moves a lot
    moved[("a1", "b")] = mus[("a1", "b")] * (1 + 1e-6)  # moves by far less than 5%
    second = ppsyn_steps.public_options(moved, 64, cache)
    assert list(second) == list(mus)
    assert second[("a1", "b")] is first[("a1", "b")] and second[("a0", "b")] is not first[("a0", "b")]


def test_selection_quality_has_sensitivity_three_and_not_less():
    """q = C − misfit changes by at most 3 when one record is added (EM run with Δ = 3); the bound is
    nearly attained, so a mechanism claiming Δ = 1 would be caught."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 12))
        x = rng.integers(0, 6, n).astype(float)
        mu = rng.gamma(0.7, 3.0, n) * rng.integers(0, 2, n)  # some zero model cells
        parts = int(rng.integers(1, n + 1))
        labels = np.concatenate([np.arange(parts), rng.integers(0, parts, n - parts)])
        rng.shuffle(labels)
        q = np.abs(x - mu).sum() - ppsyn_steps.misfit(x, mu, labels, parts)
        for i in range(n):
            y = x.copy()
            y[i] += 1
            dm = abs(ppsyn_steps.misfit(y, mu, labels, parts) - ppsyn_steps.misfit(x, mu, labels, parts))
            assert dm <= 2 + 1e-9
            dq = abs(np.abs(y - mu).sum() - ppsyn_steps.misfit(y, mu, labels, parts) - q)
            assert dq <= ppsyn_steps.SELECT_SENSITIVITY + 1e-9
            worst = max(worst, dq)
    assert worst > 2.0  # Δ = 1 (the bound for C − E with public E) would be wrong here


def test_group_quality_has_sensitivity_one_and_it_is_attained():
    """The default quality G = ||Q_P (x − mu)||₁ moves by at most 1 when one record is added or removed
    (EM run with Δ = max c_w, as AIM); the bound is attained, so it cannot be tightened."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 12))
        x = rng.integers(0, 6, n).astype(float)
        mu = rng.gamma(0.7, 3.0, n)
        parts = int(rng.integers(1, n + 1))
        labels = np.concatenate([np.arange(parts), rng.integers(0, parts, n - parts)])
        rng.shuffle(labels)
        opt = ppsyn_steps.Option(labels, parts)
        g = ppsyn_steps.selection_gain(x, mu, opt)
        for i in range(n):
            for step in (1, -1):
                y = x.copy()
                y[i] += step
                d = abs(ppsyn_steps.selection_gain(y, mu, opt) - g)
                assert d <= ppsyn_steps.QUALITY_SENSITIVITY["group"] + 1e-9
                worst = max(worst, d)
    assert worst == pytest.approx(1.0)
    assert ppsyn_steps.QUALITY_SENSITIVITY == {"group": 1.0, "gain": 3.0}


def test_stacked_group_errors_equal_option_by_option():
    """GroupErrors (one pass over the cells, coarser options from the finest one's sums) gives the EM the
    same qualities as selection_gain option by option, up to float rounding."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        shape = tuple(int(n) for n in rng.integers(1, 25, size=int(rng.integers(1, 4))))
        mu = rng.gamma(0.5, 50.0, size=shape)
        x = np.rint(np.maximum(mu + rng.normal(0, 5, size=shape), 0))
        opts = ppsyn_steps.clique_options(mu, int(rng.choice([4, 64])))
        got = ppsyn_steps.GroupErrors(opts)(x, mu)
        want = [ppsyn_steps.selection_gain(x, mu, o) for o in opts]
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-9)


def test_labels_at_replays_the_path_once_for_many_steps():
    v = np.random.default_rng(2).gamma(0.5, 10.0, size=(9, 7, 3))
    path = SplitPath(v, 64)
    ts = [0, 1, 3, 7, 15, 31, 63]
    for t, lab in zip(ts, path.labels_at(ts)):
        ref = np.zeros(v.shape, dtype=np.int64)
        for i, region in enumerate(path.splits[:t]):
            ref[region] = i + 1
        np.testing.assert_array_equal(lab, ref.ravel())
        assert len(np.unique(lab)) == path.parts(t)


def test_annealed_first_model_is_the_converged_one_way_fit():
    """PPSyn-DP selects its first clique against the one-way model fitted to convergence (1000 steps),
    not after mbi's 50 (which left a marginal up to 29% away on Adult)."""
    synth = PPSyn()
    assert synth.init_iters == ppsyn.ANNEALED_INIT_ITERS == 1000
    assert synth.max_model_size == ppsyn.DP_MAX_MODEL_SIZE == 0.5
    assert PPSyn(schedule="note").init_iters == PPSyn(schedule="note").round_iters


def test_one_way_share_and_rounds_are_functions_of_the_width_only():
    """PrivSyn's 0.1 of rho and T = 16 d up to 25 columns (Adult, BR2000: unchanged); beyond, the annealed
    schedule gives the one-way marginals 0.1 d / 25 of rho (at most 0.2) and caps T at 16 * 25."""
    share = ppsyn_steps.one_way_share
    assert [share(d) for d in (2, 14, 25, 30, 50, 100, 200)] == pytest.approx([0.1, 0.1, 0.1, 0.12, 0.2, 0.2, 0.2])
    assert share(100, annealed=False) == 0.1  # the note schedule and paper mode keep PrivSyn's split
    synth = PPSyn()
    assert synth.round_factor == 16 and synth.round_width_cap == ppsyn_steps.WIDE_COLUMNS == 25
    assert synth.one_way_share is None


def test_annealed_selection_is_calibrated_to_the_quality_sensitivity(dp_fit):
    """Every EM in the annealed schedule is run with Δ = max c_w of that round's candidates (quality "group")."""
    eng, acc, model, plans, rules, schedule = dp_fit
    if schedule != "annealed":
        pytest.skip("annealed schedule only")
    weights = set(eng.synth._weights.values())
    assert weights == set(selection.candidate_weights([(cl, 1.0) for cl in itertools.combinations("abcd", 2)]).values())
    sel = [e for e in acc.ledger if e.label.startswith("ppsyn/select/")]
    assert sel and all(e.details["sensitivity"] in weights for e in sel)
    with pytest.raises(InputError, match="quality"):
        PPSyn(quality="best")


def test_default_workload_falls_back_to_smaller_cliques_on_large_domains():
    big = pgm.Domain(["a", "b", "c", "d"], [200, 200, 200, 3])
    wl = PPSyn()._workload(big)  # no triple within 10^4 cells: the pairs that fit
    assert wl and all(len(cl) == 2 for cl, _ in wl) and all(big.size(cl) <= 10_000 for cl, _ in wl)
    huge = pgm.Domain(["a", "b"], [20_000, 20_000])
    assert [cl for cl, _ in PPSyn()._workload(huge)] == [("a",), ("b",)]


@pytest.mark.parametrize(
    "mode,schedule,step,size",
    [("dp", "annealed", True, 0.5), ("dp", "note", False, 80.0), ("paper", "annealed", False, 80.0)],
)
def test_refit_step_and_size_limit_defaults_reach_the_refit(monkeypatch, mode, schedule, step, size):
    """PPSyn-DP's annealed schedule refits with the optimistic step under a 0.5 MB size limit; paper mode and
    the note schedule keep mbi's step and the static 80 MB limit."""
    synth = PPSyn(mode=mode, schedule=schedule)
    assert (synth.optimistic_step, synth.max_model_size) == (step, size)
    # refit steps: 50 per round and 100 for the last fit in the annealed schedule, mbi's 1000 otherwise
    assert (synth.round_iters, synth.final_iters) == ((50, 100) if step else (1000, 1000))
    assert PPSyn(final_iters=400).final_iters == 400 and PPSyn(iters=50).final_iters == 50
    assert PPSyn(optimistic_step=False, max_model_size=5.0).optimistic_step is False
    seen = []
    real = pgm.estimate
    monkeypatch.setattr(pgm, "estimate", lambda *a, **k: seen.append(k.get("optimistic_step")) or real(*a, **k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PPSyn(mode=mode, schedule=schedule, workload_k=2, rounds=2, iters=50, max_model_size=1.0).fit(
            chain_engine(800), Accountant(1.0), SeededNoise(0, quiet=True)
        )
    assert step in seen and (not step) not in seen[1:]


def test_round_log_saved_with_the_model_holds_only_public_values(dp_fit):
    """model.info["rounds"] is saved with the model: only the public state, noisy releases and budgets,
    never the (data-dependent) selection scores."""
    _, _, model, _, _, schedule = dp_fit
    public = {
        "round",
        "clique",
        "parts",
        "cells",
        "rho_m",
        "sigma_m",
        "final",
        "moved",
        "expected_noise",
        "k_ref",
        "expected_error",
        "c_tilde",
    }
    keys = set().union(*(r.keys() for r in model.info["rounds"]))
    assert keys <= public, keys - public


def test_one_cell_domain_stops_after_initialisation():
    """Every candidate has one cell (e.g. a tiny table whose private schema put every value in '(other)'):
    there is no partition to choose, so the rounds stop instead of running an exponential mechanism over
    no candidates."""
    dom = pgm.Domain(["x", "y", "z"], [1, 1, 1])
    codes = {a: np.zeros(3, dtype=np.int64) for a in dom.attributes}
    acc = Accountant.from_epsilon_delta(1.0, 1e-9)
    model = PPSyn(iters=20).fit(NumpyEngine(codes, dom), acc, SeededNoise(0, quiet=True))
    assert model.info["rounds"] == [] and acc.spent <= acc.rho_total


# -- the candidate subsets of the annealed schedule ----------------------------------------------------


def test_random_order_is_a_uniform_permutation():
    noise = SeededNoise(3, quiet=True)
    for n in (0, 1, 2, 7, 50):
        assert sorted(ppsyn_steps.random_order(n, noise)) == list(range(n))
    first = np.bincount([next(ppsyn_steps.random_order(5, noise)) for _ in range(5000)], minlength=5)
    last = np.bincount([list(ppsyn_steps.random_order(5, noise))[-1] for _ in range(5000)], minlength=5)
    assert np.all(np.abs(first - 1000) < 120) and np.all(np.abs(last - 1000) < 120)


def test_candidate_subset_is_a_uniform_subset_of_the_fitting_candidates():
    dom = pgm.Domain([f"a{i}" for i in range(7)], [2, 3, 4, 5, 6, 7, 8])
    cands = list(selection.candidate_weights([(c, 1.0) for c in itertools.combinations(dom.attributes, 3)]))
    model_cliques = [("a0", "a1"), ("a5",)]
    limit = 0.001  # MB: some triples do not fit
    fitting = ppsyn_steps.size_filter(dom, model_cliques, cands, limit)
    assert 5 < len(fitting) < len(cands)
    assert ppsyn_steps.candidate_subset(dom, model_cliques, cands, limit, None, None) == fitting
    assert ppsyn_steps.candidate_subset(dom, model_cliques, cands, limit, len(cands), None) == fitting
    noise = SeededNoise(1, quiet=True)
    seen = np.zeros(len(fitting))
    for _ in range(600):
        sub = ppsyn_steps.candidate_subset(dom, model_cliques, cands, limit, 5, noise)
        assert len(sub) == 5 and sub == [c for c in fitting if c in sub]  # fitting ones, in candidate order
        seen += [c in sub for c in fitting]
    share = seen / 600
    assert np.all(np.abs(share - 5 / len(fitting)) < 0.04)  # 600 draws: sd 0.012
    kept = ppsyn_steps.candidate_subset(dom, model_cliques, cands, limit, 5, noise, keep=sub[:3] + [cands[-1]])
    assert len(kept) == 5 and set(sub[:3]) <= set(kept) and set(kept) <= set(fitting)  # cands[-1] does not fit


def _subset_fit(engine, cap=8, seed=0, **kw):
    """A 3-way annealed fit with at most ``cap`` candidates a round, recording every round's subset, the
    cliques whose options were built, the EM's number of scores and the data reads."""
    synth = PPSyn(workload_k=3, rounds=5, iters=100, max_model_size=1.0, max_candidates=cap, **kw)
    eng = RecordingEngine(engine, synth)
    subsets, option_cliques, scores = [], [], []

    def subset(*args, **kw):
        assert synth.data_step is None  # public: no data step is running, and the engine is not read
        eng.planning = True
        try:
            out = ppsyn_steps.candidate_subset(*args, **kw)
        finally:
            eng.planning = False
        subsets.append(list(out))
        return out

    def options(mu, *args, **kw):
        out = ppsyn_steps.public_options(mu, *args, **kw)
        option_cliques.append((list(mu), sum(o.parts > 1 for opts in out.values() for o in opts)))
        return out

    def select(accountant, noise, q, *args, **kw):
        scores.append(len(q))
        return real_select(accountant, noise, q, *args, **kw)

    real_select = ppsyn_steps.exponential_select
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(annealed, "candidate_subset", subset)
        mp.setattr(annealed, "public_options", options)
        mp.setattr(ppsyn_steps, "exponential_select", select)
        acc = Accountant.from_epsilon_delta(2.0, 1e-9)
        model = synth.fit(eng, acc, SeededNoise(seed, quiet=True))
    return model, acc, subsets, option_cliques, scores


def _five_columns(n=3000, seed=0, independent=False):
    rng = np.random.default_rng(seed)
    dom = pgm.Domain(["a", "b", "c", "d", "e"], [3, 4, 4, 5, 2])
    cols = {"a": rng.integers(0, 3, n)}
    for prev, a, k in (("a", "b", 4), ("b", "c", 4), ("c", "d", 5), ("d", "e", 2)):
        noise = rng.integers(0, k, n)
        cols[a] = noise if independent else np.where(rng.random(n) < 0.8, cols[prev] % k, noise)
    return dom, cols


def test_round_subsets_do_not_depend_on_the_data():
    """Neighbouring tables (one record removed) and an unrelated table over the same domain get the same
    first subset under the same seed (so does any table: only the public state and the randomness choose
    it), and every exponential mechanism runs over the options of that round's subset and nothing else."""
    dom, cols = _five_columns()
    _, other = _five_columns(seed=1, independent=True)
    tables = [cols, {a: v[1:] for a, v in cols.items()}, other]
    runs = [_subset_fit(NumpyEngine(t, dom)) for t in tables]
    cands = list(selection.candidate_weights([(c, 1.0) for c in itertools.combinations(dom.attributes, 3)]))
    assert len(cands) > 8  # the cap is binding
    assert runs[0][2][0] == runs[1][2][0] == runs[2][2][0]
    for model, acc, subsets, option_cliques, scores in runs:
        exact_spend(acc)
        rounds = model.info["rounds"]
        assert rounds and len(subsets) == len(option_cliques) == len(scores) == len(rounds)
        assert len({tuple(s) for s in subsets}) > 1  # a new draw every round
        for r, sub, (opts, opts_parts), k in zip(rounds, subsets, option_cliques, scores):
            assert 1 <= len(sub) <= 8 and set(sub) <= set(cands)
            assert opts == sub  # model marginals and options of the subset only
            assert tuple(r["clique"]) in sub
            assert k == opts_parts  # one score per option of more than one part, of the subset's cliques
        sel = [e for e in acc.ledger if e.label.startswith("ppsyn/select/")]
        assert [e.details["candidates"] for e in sel] == scores


def test_a_workload_within_the_cap_is_scored_whole_and_unchanged():
    """With no more candidates than max_candidates nothing is drawn: the fit equals the uncapped one."""
    dom, cols = _five_columns()
    a = _subset_fit(NumpyEngine(cols, dom), cap=None)
    b = _subset_fit(NumpyEngine(cols, dom), cap=10_000)
    assert a[2] == b[2] and a[4] == b[4]
    assert [(e.label, e.rho) for e in a[1].ledger] == [(e.label, e.rho) for e in b[1].ledger]
    assert a[0].info["rounds"] == b[0].info["rounds"]
