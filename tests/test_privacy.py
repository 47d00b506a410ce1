"""Privacy core: conversions, the accountant filter, noise scales and the exponential mechanism.

These tests are meant to fail if a sensitivity, noise scale or budget rule were wrong.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privsample.privacy.mechanisms as mech
from privsample.errors import InputError
from privsample.privacy import (
    Accountant,
    BudgetExceeded,
    SecureNoise,
    SeededNoise,
    cdp_delta,
    cdp_epsilon,
    cdp_rho,
    exponential_select,
    gaussian_measure,
)
from privsample.privacy.noise import NoiseSource


# -- conversions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps,rho", [(0.05, 4.649e-5), (1.0, 0.014973), (2.0, 0.056131)])
def test_cdp_rho_matches_reference_values(eps, rho):
    assert cdp_rho(eps, 1e-9) == pytest.approx(rho, rel=2e-4)


def test_conversion_agrees_with_opendp_and_is_conservative():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for eps in (0.1, 1.0, 4.0):
        rho = cdp_rho(eps, 1e-9)
        assert cdp_delta(rho, eps) <= 1e-9
        m = dp.m.make_gaussian(
            dp.atom_domain(T=dp.f64, nan=False), dp.absolute_distance(T=dp.f64), scale=1 / math.sqrt(2 * rho)
        )
        curve = dp.c.make_zCDP_to_approxDP(m).map(1.0)
        assert curve.epsilon(1e-9) == pytest.approx(eps, rel=1e-4)
        assert cdp_epsilon(rho, 1e-9) == pytest.approx(eps, rel=1e-6)


def _full_bisection(lo, hi, below, steps=1000):
    """All ``steps`` halvings (what conversion.py did before it stopped at the fixed point)."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
    return lo, hi


def test_conversions_stop_at_the_fixed_point_with_the_full_bisections_answer():
    rng = np.random.default_rng(0)
    for _ in range(300):
        rho, eps = 10 ** rng.uniform(-9, 2), 10 ** rng.uniform(-3, 1.5)
        amin, amax = _full_bisection(
            1.01, (eps + 1) / (2 * rho) + 2, lambda a: (2 * a - 1) * rho - eps + math.log1p(-1.0 / a) < 0
        )
        a = (amin + amax) / 2
        log_delta = (a - 1) * (a * rho - eps) + a * math.log1p(-1.0 / a) - math.log(a - 1)
        assert cdp_delta(rho, eps) == (min(math.exp(log_delta), 1.0) if log_delta < 700 else 1.0)
    for eps in (0.05, 0.1, 0.5, 1.0, 2.0, 10.0):
        for delta in (1e-12, 1e-9, 1e-5):
            lo, _ = _full_bisection(0.0, eps + 1.0, lambda r: cdp_delta(r, eps) <= delta, steps=200)
            assert cdp_rho(eps, delta) == lo


@pytest.mark.parametrize(
    "eps,delta", [(0, 1e-9), (-1, 1e-9), (float("nan"), 1e-9), (float("inf"), 1e-9), (1, 0), (1, 1), (1, -0.1)]
)
def test_bad_budgets_are_input_errors(eps, delta):
    with pytest.raises(InputError):
        cdp_rho(eps, delta)


# -- accountant -------------------------------------------------------------------------------------


class SpyNoise(NoiseSource):
    """Counts noise draws, to show refusal happens before any draw."""

    private = True

    def __init__(self):
        self.calls = 0

    def gaussian(self, counts, sigma):
        self.calls += 1
        return np.asarray(counts)

    def laplace(self, counts, scale):
        self.calls += 1
        return np.asarray(counts)

    def exponential(self, scores, epsilon, sensitivity):
        self.calls += 1
        return 0


def test_overrun_is_refused_before_noise_is_drawn():
    acc = Accountant(1.0)
    spy = SpyNoise()
    gaussian_measure(acc, spy, np.zeros(3, dtype=int), 0.6, "a")
    with pytest.raises(BudgetExceeded):
        gaussian_measure(acc, spy, np.zeros(3, dtype=int), 0.5, "b")
    with pytest.raises(BudgetExceeded):
        exponential_select(acc, spy, np.zeros(3), 0.41, "c")
    assert spy.calls == 1
    assert [e.label for e in acc.ledger] == ["a"]
    assert acc.spent == pytest.approx(0.6)


@settings(max_examples=200, deadline=None)
@given(total=st.floats(1e-6, 10.0), fracs=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40))
def test_spends_never_exceed_total_including_rounding(total, fracs):
    from fractions import Fraction

    acc = Accountant(total)
    for f in fracs:
        r = acc.remaining * f
        if acc.can_spend(r):
            acc.spend(r, "x")
        acc.spend(acc.remaining, "rest") if f > 0.9 else None
        assert sum(Fraction(e.rho) for e in acc.ledger) <= Fraction(total)
    acc.spend(acc.remaining, "final")
    assert sum(Fraction(e.rho) for e in acc.ledger) <= Fraction(total)
    assert acc.remaining == 0.0 or acc.remaining < 1e-15 * total
    with pytest.raises(BudgetExceeded):
        acc.spend(max(acc.remaining * 2, 1e-300) + 1e-12, "over")


def test_ledger_roundtrip_and_seeded_marking():
    acc = Accountant.from_epsilon_delta(1.0, 1e-9)
    gaussian_measure(acc, SeededNoise(0, quiet=True), np.zeros(4, dtype=int), acc.remaining / 2, "m", measured="age")
    d = acc.to_dict()
    assert d["summary"]["private"] is False
    assert d["entries"][0]["details"]["note"] == "not private: seeded noise"
    again = Accountant.from_dict(d)
    assert again.spent == acc.spent and again.private is False


def test_sigma_rounding_never_undercharges():
    for rho in np.geomspace(1e-9, 10, 200):
        s = mech.sigma_for_rho(float(rho))
        assert 1 / (2 * s * s) <= rho
        e = mech.epsilon_for_rho(float(rho))
        assert e * e / 8 <= rho


# -- Gaussian noise scale (statistical audit) -------------------------------------------------------


def _audit_gaussian(noise: NoiseSource, rho: float, n: int) -> None:
    """The released noise must have variance 1/(2 rho) (sensitivity 1): 5-sigma test on the variance."""
    acc = Accountant(rho)
    counts = np.full(n, 1000, dtype=np.int64)
    y, sigma = gaussian_measure(acc, noise, counts, rho, "audit")
    z = (y - counts).astype(float)
    expected = 1.0 / (2.0 * rho)
    var = z.var()
    # discrete Gaussian variance is within a hair of sigma^2 for sigma >= 1; se(var) ~ sqrt(2/n) var
    assert abs(var / expected - 1.0) < 5 * math.sqrt(2.0 / n) + 0.005, (var, expected)
    assert abs(z.mean()) < 5 * math.sqrt(expected / n)


@pytest.mark.parametrize("rho", [0.5, 0.01, 1e-4])
def test_gaussian_noise_scale_seeded(rho):
    _audit_gaussian(SeededNoise(1, quiet=True), rho, 200_000)


def test_gaussian_noise_scale_secure_opendp():
    _audit_gaussian(SecureNoise(), 0.02, 20_000)


def test_audit_catches_a_broken_noise_scale(monkeypatch):
    monkeypatch.setattr(mech, "sigma_for_rho", lambda rho, sensitivity=1.0: 0.8 / math.sqrt(2 * rho))
    with pytest.raises(AssertionError):
        _audit_gaussian(SeededNoise(2, quiet=True), 0.01, 200_000)


# -- exponential mechanism: exact distribution --------------------------------------------------------


def _em_probs(scores, eps, sens):
    logits = 0.5 * eps / sens * (np.asarray(scores) - np.max(scores))
    p = np.exp(logits)
    return p / p.sum()


@pytest.mark.parametrize("noise,n", [(SeededNoise(3, quiet=True), 40_000), (SecureNoise(), 3_000)])
def test_exponential_mechanism_distribution(noise, n):
    scores = np.array([0.0, 1.0, 2.5, 2.0])
    eps, sens = 1.2, 1.0
    p = _em_probs(scores, eps, sens)
    counts = np.bincount([noise.exponential(scores, eps, sens) for _ in range(n)], minlength=4)
    chi2 = float((((counts - n * p) ** 2) / (n * p)).sum())
    assert chi2 < 25.0, (counts / n, p)  # df=3: P(chi2 > 25) ~ 1.6e-5


# Neighbouring quality vectors of sensitivity 1 that (nearly) attain the exponential mechanism's bound: on D every
# candidate scores 0; on D' candidate 0 gains 1 and the K - 1 others lose 1. Then P'(0) / P(0) = K e^eps /
# (e^eps + K - 1) (log 1.72 for eps = 2, K = 20), and a mechanism with half the noise scale gives log 2.70 > eps.
EM_K, EM_RHO = 20, 0.5  # epsilon = sqrt(8 rho) = 2
EM_Q = np.zeros(EM_K)
EM_Q2 = np.r_[1.0, -np.ones(EM_K - 1)]


def _em_frequencies(noise, scores, n):
    """Selection counts of privsample's exponential mechanism (``exponential_select``: accountant, epsilon from
    rho, the noise source's Gumbel noisy max) over n runs."""
    acc = Accountant(EM_RHO * (n + 1))
    return np.bincount([exponential_select(acc, noise, scores, EM_RHO, "em") for _ in range(n)], minlength=EM_K)


def _em_worst_log_ratio(noise, n, z=5.0):
    """max over outputs i and both directions of |log P(i) - log P'(i)| minus z standard errors (delta method,
    sqrt(1/c + 1/c')), and the largest estimated log-ratio; eps-DP needs the first to be <= eps."""
    c, c2 = _em_frequencies(noise, EM_Q, n), _em_frequencies(noise, EM_Q2, n)
    assert c.min() > 0 and c2.min() > 0, (c, c2)
    lr = np.abs(np.log(c / n) - np.log(c2 / n))
    se = np.sqrt(1 / c + 1 / c2)
    return float((lr - z * se).max()), float(lr.max())


@pytest.mark.parametrize("noise,n", [(SeededNoise(4, quiet=True), 20_000), (SecureNoise(), 4_000)])
def test_exponential_mechanism_ratio_on_neighbours_is_bounded(noise, n):
    """privsample's exponential mechanism on neighbouring quality vectors (sensitivity 1): the empirical
    log-ratio of every output's frequency stays within eps (plus five standard errors), and the case is
    nearly tight (so the check has power: see the next test)."""
    eps = math.sqrt(8 * EM_RHO)
    lower, worst = _em_worst_log_ratio(noise, n)
    assert lower <= eps, (lower, worst, eps)
    exact = math.log(EM_K * math.exp(eps) / (math.exp(eps) + EM_K - 1))
    assert abs(worst - exact) < 0.45, (worst, exact)  # about the theoretical ratio (6 SE for n = 4000), near eps


@pytest.mark.parametrize("broken", ["epsilon", "scale"])
def test_exponential_mechanism_check_catches_a_wrong_scale(monkeypatch, broken):
    """The same check fails for a mechanism whose noise is half as large as it should be, whether the
    epsilon conversion or the noise source's scale is off by a factor of 2."""
    noise = SeededNoise(5, quiet=True)
    if broken == "epsilon":
        monkeypatch.setattr(mech, "epsilon_for_rho", lambda rho: 2 * math.sqrt(8 * rho))
    else:
        real = noise.exponential
        monkeypatch.setattr(noise, "exponential", lambda scores, eps, sens: real(scores, eps, sens / 2))
    lower, worst = _em_worst_log_ratio(noise, 20_000)
    assert lower > math.sqrt(8 * EM_RHO), (lower, worst)


def test_exponential_zcdp_cost_matches_opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    rho = 0.03
    eps = mech.epsilon_for_rho(rho)
    nm = dp.m.make_noisy_max(
        dp.vector_domain(dp.atom_domain(T=dp.f64, nan=False)),
        dp.linf_distance(T=dp.f64),
        dp.zero_concentrated_divergence(),
        scale=2.0 / eps,
    )
    assert nm.map(1.0) == pytest.approx(rho, rel=1e-9)


def test_pure_target_reports_pure_epsilon():
    """A pure-DP target (delta = 0): epsilon_spent adds the spends' pure epsilons (no zCDP conversion at delta 0)."""
    acc = Accountant(0.5**2 / 2 + 0.25**2 / 2 + 1e-12, target=(0.75, 0.0))
    acc.spend(0.5**2 / 2, "a", pure_epsilon=0.5)
    acc.spend(0.25**2 / 2, "b", pure_epsilon=0.25)
    assert acc.epsilon_spent() == pytest.approx(0.75)
    assert acc.to_dict()["summary"]["epsilon_spent"] == pytest.approx(0.75)
    acc.spend(1e-12, "c")  # a spend without a pure epsilon: back to the zCDP conversion
    assert acc.pure_epsilon_spent() is None


def test_private_schema_ledger_absorbs_when_float_sum_rounds_down():
    """A private schema's delta spends are summed exactly: a float sum that rounds below the exact sum
    must not make the run refuse its own schema's cost."""
    import math
    from fractions import Fraction

    from privsample.data.schema import Categorical, Schema
    from privsample.api.accounting import make_accountant
    from privsample.privacy.accountant import Accountant

    for m in range(3, 200):
        d = float(Fraction(5e-10) / m)
        if Fraction(math.fsum([d] * m)) < Fraction(d) * m:
            break
    else:
        pytest.skip("no rounding case found")
    acc = Accountant(1.0, delta_slack=1e-9)
    for i in range(m):
        acc.spend(1e-4, f"schema: c{i}: category counts", delta=d)
    schema = Schema([Categorical("c", ("a",))], provenance="private", ledger=acc.to_dict())
    run, _ = make_accountant(1.0, 1e-9, schema, 0.1)
    assert run.delta_spent == pytest.approx(m * d)
