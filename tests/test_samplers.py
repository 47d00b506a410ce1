"""RSSS samplers (Raskhodnikova et al. 2021): exact privacy checks, property tests and negative controls
(accuracy simulations as in RSSS 2021).

Each privacy check is a function that returns the measured loss (or a verdict); the tests assert that it
passes for the samplers as implemented *and* that it fails for a deliberately broken variant (a wrong clip
interval, a forgotten factor 2 in a noise scale or a sensitivity), injected with ``monkeypatch`` into the
very functions the samplers call.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privsample.errors import InputError
from privsample.privacy import Accountant, SeededNoise
from privsample.privacy.conversion import cdp_delta
from privsample.samplers import bernoulli, exact_draw, kary, parallel, product

QUARTER = Fraction(1, 4)


def seeded(seed=0):
    return SeededNoise(seed, quiet=True)


# ================================================================================================
# exact draws
# ================================================================================================
def test_exact_draw_secure_path_uses_secrets(monkeypatch):
    calls = []

    def fake_randbelow(n):
        calls.append(n)
        return n - 1

    monkeypatch.setattr(secrets, "randbelow", fake_randbelow)

    class Private:
        private = True

    assert exact_draw.bernoulli(Fraction(2, 3), Private()) == 0 and calls == [3]
    assert exact_draw.bernoulli(Fraction(1), Private()) == 1
    assert exact_draw.categorical([1, 0, 5], Private()) == 2 and calls[-1] == 6
    assert exact_draw.bernoulli_many([0, 7, 7], 7, Private()).tolist() == [0, 1, 1]


def test_exact_draw_seeded_frequencies_and_edges():
    nz = seeded(1)
    assert all(exact_draw.bernoulli(Fraction(0), nz) == 0 for _ in range(50))
    assert all(exact_draw.bernoulli(Fraction(1), nz) == 1 for _ in range(50))
    freq = exact_draw.bernoulli_many([1] * 20000, 3, nz).mean()
    assert abs(freq - 1 / 3) < 0.02
    counts = np.bincount([exact_draw.categorical([1, 0, 3], nz) for _ in range(4000)], minlength=3)
    assert counts[1] == 0 and abs(counts[2] / 4000 - 0.75) < 0.03
    with pytest.raises(ValueError):
        exact_draw.bernoulli(Fraction(3, 2), nz)
    with pytest.raises(ValueError):
        exact_draw.categorical([0, 0], nz)


# ================================================================================================
# parallel composition over m disjoint parts
# ================================================================================================
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 500), m=st.integers(1, 60))
def test_part_sizes_floor_ceil(n, m):
    if n < m:
        with pytest.raises(InputError):
            parallel.part_sizes(n, m)
        return
    sizes = parallel.part_sizes(n, m)
    assert sum(sizes) == n and len(sizes) == m and set(sizes) <= {n // m, -(-n // m)}
    parts = parallel.partition(n, m, np.random.default_rng(n))
    allidx = np.concatenate(parts)
    assert sorted(allidx.tolist()) == list(range(n)) and [len(p) for p in parts] == sizes


def test_one_ledger_entry_for_m_parts():
    rng = np.random.default_rng(0)
    acc = Accountant(0.5)
    d = kary.kary_sample(rng.integers(0, 4, 1003), 4, epsilon=1.0, accountant=acc, noise=seeded(), samples=10, rng=rng)
    assert len(acc.ledger) == 1 and acc.spent == pytest.approx(0.5)
    e = acc.ledger[0]
    assert e.details["parts"] == 10 and e.details["per_part_n"] == [101, 101, 101] + [100] * 7
    assert e.details["pure_epsilon"] == 1.0 and e.private is False
    assert d.samples.shape == (10,) and d.per_part_n == e.details["per_part_n"]


# ================================================================================================
# k-ary sampler (Alg. 3)
# ================================================================================================
def l1_nearest_gap(z: np.ndarray, q: np.ndarray) -> float:
    """||q - z||_1 minus the minimum over the simplex, sum max(-z, 0) + |1 - s_+|."""
    best = np.maximum(-z, 0).sum() + abs(1 - np.maximum(z, 0).sum())
    return float(np.abs(q - z).sum() - best)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-30, 60), min_size=1, max_size=8), st.integers(1, 40))
def test_projection_exact_euclidean_and_l1_nearest(noisy, n):
    nums, den = kary.project_counts(noisy, n)
    q = np.array(nums) / den
    z = np.array(noisy) / n
    assert min(nums) >= 0 and sum(nums) == den
    # Euclidean projection: q = max(z - tau, 0) with a common tau on the support
    tau = (z - q)[q > 0]
    assert np.allclose(tau, tau[0]) and np.all(z[q == 0] <= tau[0] + 1e-12)
    assert l1_nearest_gap(z, q) < 1e-9
    if len(noisy) == 2:  # for k = 2: Pi(z)_1 = clip((1 + z1 - z2)/2, 0, 1), exactly
        assert Fraction(nums[0], den) == min(max((Fraction(n + noisy[0] - noisy[1], 2 * n)), Fraction(0)), Fraction(1))


def kary_release_loss(counts, moved, z, epsilon) -> float:
    """Privacy loss of the noisy counts z on neighbours c and c' (one unit moved), for the sampler's scale."""
    t = kary.noise_scale(epsilon)
    c = np.array(counts)
    c2 = c.copy()
    i, j = moved
    c2[i] -= 1
    c2[j] += 1
    return (np.abs(np.array(z) - c2).sum() - np.abs(np.array(z) - c).sum()) / t


kary_case = st.integers(2, 6).flatmap(
    lambda k: st.tuples(
        st.lists(st.integers(1, 6), min_size=k, max_size=k),
        st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)),
        st.lists(st.integers(-10, 15), min_size=k, max_size=k),
        st.sampled_from([0.1, 0.5, 1.0, 3.0]),
    )
)


@settings(max_examples=200, deadline=None)
@given(kary_case)
def test_kary_release_level_privacy(case):
    counts, moved, z, eps = case
    assert kary_release_loss(counts, moved, z, eps) <= eps * (1 + 1e-12)


def test_kary_release_level_negative_control(monkeypatch):
    monkeypatch.setattr(kary, "noise_scale", lambda eps: 1.0 / eps)  # forgot replace-one's factor 2
    assert kary_release_loss([3, 3], (0, 1), [3, 3], 1.0) > 1.0 + 1e-9  # the same check now fails


# -- k = 2, end to end, exact rationals ----------------------------------------------------------
def _k2_output_one(n: int, c: int, p: Fraction) -> Fraction:
    """P(output = 1 | c ones among n) for Alg. 3 with k = 2 and discrete Laplace of ratio p on both counts.

    Projection: Pi(z)_1 = clip((2c + W) / (2n), 0, 1), W = Z1 - Z2, with
    P(W = w) = C^2 p^|w| (|w| + (1 + p^2)/(1 - p^2)), C = (1 - p)/(1 + p); tails summed in closed form."""
    C2 = ((1 - p) / (1 + p)) ** 2
    K = (1 + p * p) / (1 - p * p)
    lo, hi = -2 * c, 2 * n - 2 * c  # clip is 0 for w <= lo, 1 for w >= hi (hi >= 2)
    total = sum((C2 * p ** abs(w) * (abs(w) + K) * Fraction(2 * c + w, 2 * n) for w in range(lo + 1, hi)), Fraction(0))
    tail = p**hi * (Fraction(hi) / (1 - p) + p / (1 - p) ** 2 + K / (1 - p))  # sum_{w >= hi} p^w (w + K)
    return total + C2 * tail


def kary2_max_ratio(n: int, epsilon: float) -> Fraction:
    """Largest P(out | c) / P(out | c') over neighbours c, c' = c + 1 and both outputs, exactly, for the
    scale the sampler uses (p = exp(-1 / noise_scale(epsilon)) must be rational for the chosen epsilons)."""
    p_float = math.exp(-1.0 / kary.noise_scale(epsilon))
    p = Fraction(p_float).limit_denominator(1000)
    assert abs(float(p) - p_float) < 1e-12, "choose epsilon so that the discrete Laplace ratio is rational"
    best = Fraction(0)
    for c in range(n):
        a, b = _k2_output_one(n, c, p), _k2_output_one(n, c + 1, p)
        for x, y in ((a, b), (1 - a, 1 - b)):
            best = max(best, x / y, y / x)
    return best


K2_CASES = [(2 * math.log(2), Fraction(4)), (2 * math.log(Fraction(3, 2)), Fraction(9, 4))]  # (eps, e^eps exactly)


def test_k2_output_law_sums_and_matches_simulation():
    p = Fraction(1, 2)
    assert _k2_output_one(5, 0, p) + _k2_output_one(5, 5, p) == 1  # symmetry: P(1 | c) = 1 - P(1 | n - c)
    nz = seeded(3)
    eps, n, c = K2_CASES[0][0], 6, 2
    reps = 4000
    noisy = nz.laplace(np.tile([c, n - c], (reps, 1)), kary.noise_scale(eps))
    sim = np.mean(
        [Fraction(*[kary.project_counts(row, n)[0][0], kary.project_counts(row, n)[1]]) for row in noisy.tolist()]
    )
    assert abs(float(sim) - float(_k2_output_one(n, c, p))) < 0.02


@pytest.mark.parametrize("eps,exp_eps", K2_CASES)
def test_kary_k2_end_to_end_exact(eps, exp_eps):
    for n in list(range(1, 9)) + [15]:
        assert kary2_max_ratio(n, eps) <= exp_eps


def test_kary_k2_end_to_end_negative_control(monkeypatch):
    monkeypatch.setattr(kary, "noise_scale", lambda e: 1.0 / e)  # half the noise
    eps, exp_eps = K2_CASES[0]
    assert max(kary2_max_ratio(n, eps) for n in (2, 4, 8)) > exp_eps  # 4.57 > 4: the check catches it


def test_kary_k3_monte_carlo_ratio():
    """k > 2: Rao-Blackwellised Monte Carlo of P(out | x) on neighbours, checked with a 4-sigma margin."""
    eps, reps, nz = 1.0, 6000, seeded(5)
    rows = {}
    for counts in ((3, 0, 0), (2, 1, 0)):
        noisy = nz.laplace(np.tile(counts, (reps, 1)), kary.noise_scale(eps))
        qs = np.array([np.array(a) / b for a, b in (kary.project_counts(r, 3) for r in noisy.tolist())])
        rows[counts] = (qs.mean(0), qs.std(0) / math.sqrt(reps))
    (m1, s1), (m2, s2) = rows[(3, 0, 0)], rows[(2, 1, 0)]
    lower = np.maximum(m1 - 4 * s1, 1e-9) / (m2 + 4 * s2)
    lower2 = np.maximum(m2 - 4 * s2, 1e-9) / (m1 + 4 * s1)
    assert np.all(lower <= math.exp(eps)) and np.all(lower2 <= math.exp(eps))


def test_kary_accuracy_point_mass_matches_note():
    """Point mass, k = 2, eps = 1, n = 200: TV / (2k/(eps n)) is about 0.19 (a reference simulation)."""
    nz, reps, n, k = seeded(7), 3000, 200, 2
    noisy = nz.laplace(np.tile([n, 0], (reps, 1)), kary.noise_scale(1.0))
    q = np.mean([np.array(a) / b for a, b in (kary.project_counts(r, n) for r in noisy.tolist())], axis=0)
    ratio = 0.5 * np.abs(q - [1, 0]).sum() / kary.tv_bound(k, 1.0, n)
    assert 0.12 < ratio < 0.26


def test_kary_sample_rejects_outside_domain_and_bad_epsilon():
    acc = Accountant(1.0)
    with pytest.raises(InputError):
        kary.kary_sample(np.array([0, 1, 3]), 3, epsilon=1.0, accountant=acc, noise=seeded())
    with pytest.raises(InputError):
        kary.kary_sample(np.array([0, 1, 2]), 3, epsilon=0.0, accountant=acc, noise=seeded())
    assert acc.spent == 0
    assert kary.required_n(10, 1.0, 0.1) == 200 and kary.tv_bound(10, 1.0, 200) == pytest.approx(0.1)


# ================================================================================================
# bounded-bias Bernoulli sampler (Thm 6.1) and product (Thm 6.4)
# ================================================================================================
def bernoulli_max_ratio(n: int, a: Fraction = QUARTER) -> Fraction:
    """Exact max over c < n and outputs of P(out | c) / P(out | c + 1) (both orders), through the function the
    sampler draws with (``bernoulli.clipped_mean``); infinite if a probability vanishes."""
    best = Fraction(0)
    for c in range(n):
        s, t = bernoulli.clipped_mean(c, n, a), bernoulli.clipped_mean(c + 1, n, a)
        for x, y in ((s, t), (1 - s, 1 - t)):
            if x == 0 or y == 0:
                if x != y:
                    return Fraction(10**18)
                continue
            best = max(best, x / y, y / x)
    return best


def test_sampler_draws_with_clipped_mean(monkeypatch):
    seen = []
    real = exact_draw.bernoulli
    monkeypatch.setattr(exact_draw, "bernoulli", lambda p, noise: seen.append(p) or real(p, noise))
    X = np.array([[1, 0], [1, 0], [1, 1], [0, 0], [1, 0], [1, 0], [1, 0], [1, 0]])
    bernoulli.bounded_bias_sample(X, epsilon=5.0, accountant=Accountant(100.0), noise=seeded())
    assert seen == [Fraction(3, 4), Fraction(1, 4)]  # 7/8 -> 3/4, 1/8 -> 1/4


@pytest.mark.parametrize("a", [Fraction(1, 4), Fraction(1, 5), Fraction(1, 10)])
def test_bernoulli_exact_loss(a):
    for n in range(1, 81):
        ratio = bernoulli_max_ratio(n, a)
        bound = 1 + 1 / (a * n)
        if (a * n).denominator == 1 and n * (1 - 2 * a) >= 1:
            assert ratio == bound  # the loss ln(1 + 1/(a n)) is attained when a n is an integer
        else:
            assert ratio <= bound
        assert math.log(ratio) <= bernoulli.column_epsilon(n, a)  # the sampler certifies at least this


def test_bernoulli_negative_control_wrong_clip(monkeypatch):
    certified = {n: bernoulli.column_epsilon(n, QUARTER) for n in (8, 16, 40)}
    monkeypatch.setattr(bernoulli, "clipped_mean", _clip_to(Fraction(1, 8)))
    assert any(math.log(bernoulli_max_ratio(n)) > eps for n, eps in certified.items())
    monkeypatch.setattr(bernoulli, "clipped_mean", lambda c, n, a=QUARTER: Fraction(c, n))  # no clipping at all
    assert math.log(bernoulli_max_ratio(8)) > certified[8]


def renyi_bernoulli(s: float, t: float, order: float) -> float:
    return math.log(s**order * t ** (1 - order) + (1 - s) ** order * (1 - t) ** (1 - order)) / (order - 1)


def product_renyi_excess(n: int, d: int, rho: float) -> float:
    """max over a in [1.01, 100] of (worst d-column Renyi divergence) / (rho a): <= 1 means rho-zCDP holds.
    Worst neighbours: every column moves from the same c to c + 1 (either order)."""
    pairs = [(float(bernoulli.clipped_mean(c, n)), float(bernoulli.clipped_mean(c + 1, n))) for c in range(n)]
    worst = 0.0
    for order in np.geomspace(1.01, 100, 60):
        div = max(max(renyi_bernoulli(s, t, order), renyi_bernoulli(t, s, order)) for s, t in pairs)
        worst = max(worst, d * div / (rho * order))
    return worst


def hockey_stick_delta(n: int, d: int, exp_eps: Fraction) -> Fraction:
    """Exact delta(eps) of the d-column sampler on the worst neighbours, summing over the 2^d outputs by the
    number of ones (all columns at the same c, as in the worst case)."""
    worst = Fraction(0)
    for c in range(n):
        s, t = bernoulli.clipped_mean(c, n), bernoulli.clipped_mean(c + 1, n)
        for P, Q in ((s, t), (t, s)):
            delta = sum(
                (
                    comb(d, j) * max(Fraction(0), P**j * (1 - P) ** (d - j) - exp_eps * Q**j * (1 - Q) ** (d - j))
                    for j in range(d + 1)
                ),
                Fraction(0),
            )
            worst = max(worst, delta)
    return worst


@pytest.mark.parametrize("n,d", [(40, 4), (100, 16), (64, 1)])
def test_product_renyi_and_exact_delta(n, d):
    rho = bernoulli.zcdp_rho(n, d)
    assert product_renyi_excess(n, d, rho) <= 1.0
    # pure: at e^eps = (1 + 1/(a n))^d exactly, delta is exactly 0
    assert hockey_stick_delta(n, d, (1 + 1 / (QUARTER * n)) ** d) == 0
    # approximate: the exact delta at a smaller eps stays below what rho-zCDP promises
    for frac in (0.25, 0.5):
        eps = frac * bernoulli.pure_epsilon(n, d)
        assert float(hockey_stick_delta(n, d, Fraction(math.exp(eps)))) <= cdp_delta(rho, eps) * (1 + 1e-9)


def _clip_to(lo: Fraction):
    return lambda c, n, a=QUARTER: min(max(Fraction(c, n), lo), 1 - lo)


def test_product_negative_controls(monkeypatch):
    """The Renyi check has slack (eps^2/2 over-bounds a Bernoulli pair's Renyi curve: excess 0.42 at n = 40,
    d = 4), so it catches a clip interval 4x too wide and a ledger that forgets the factor d; the exact
    hockey-stick check at the certified pure epsilon catches even a 2x error in the clip interval."""
    n, d = 40, 4
    rho = bernoulli.zcdp_rho(n, d)  # what the sampler records for a = 1/4
    exp_eps = (1 + 1 / (QUARTER * n)) ** d  # the certified pure epsilon, exactly
    assert product_renyi_excess(n, d, rho / d) > 1.0  # ledger without the factor d
    monkeypatch.setattr(bernoulli, "clipped_mean", _clip_to(Fraction(1, 16)))
    assert product_renyi_excess(n, d, rho) > 1.0
    monkeypatch.setattr(bernoulli, "clipped_mean", _clip_to(Fraction(1, 8)))
    assert hockey_stick_delta(n, d, exp_eps) > 0


def test_bernoulli_refusals_and_costs():
    X = np.ones((10, 3), dtype=int)
    acc = Accountant(1.0)
    with pytest.raises(parallel.NotEnoughRecords, match="records per draw"):
        bernoulli.bounded_bias_sample(X, epsilon=0.5, accountant=acc, noise=seeded())
    assert acc.spent == 0 and not acc.ledger
    need = bernoulli.min_n_pure(0.5, 3)
    assert bernoulli.pure_epsilon(need, 3) <= 0.5 < bernoulli.pure_epsilon(need - 1, 3)
    d = bernoulli.bounded_bias_sample(np.ones((need, 3), int), epsilon=0.5, accountant=acc, noise=seeded())
    assert d.epsilon <= 0.5 and acc.ledger[0].details["pure_epsilon"] == d.epsilon
    assert acc.spent == pytest.approx(d.epsilon**2 / 2)
    with pytest.raises(InputError, match="binary"):
        bernoulli.bounded_bias_sample(np.full((50, 2), 2), epsilon=1.0, accountant=acc, noise=seeded())
    with pytest.raises(InputError):
        bernoulli.check_clip(Fraction(1, 3))
    need = bernoulli.min_n_zcdp(0.01, 10)
    assert bernoulli.zcdp_rho(need, 10) <= 0.01 < bernoulli.zcdp_rho(need - 1, 10)
    assert need <= math.ceil(math.sqrt(8 * 10 / 0.01))  # n >= sqrt(8d/rho) is sufficient


def test_bernoulli_accuracy_reference_values():
    """Exact TV at p = 1/3 and Claim 6.2's bound; p = 1/2 is unbiased by symmetry."""
    for n, ref in ((50, 3.148e-3), (100, 6.253e-4), (200, 5.280e-5), (400, 8.05e-7)):
        assert abs(bernoulli.exact_bias(n, 1 / 3)) == pytest.approx(ref, rel=2e-3)
        assert abs(bernoulli.exact_bias(n, 1 / 3)) <= bernoulli.bias_bound(n)
    assert abs(bernoulli.exact_bias(101, 0.5)) < 1e-12
    n = bernoulli.required_n(0.01, 5)
    assert bernoulli.bias_bound(n, 5) <= 0.01 < bernoulli.bias_bound(n - 1, 5)


# ================================================================================================
# general product sampler (Alg. 4)
# ================================================================================================
def actual_sensitivity_ratio(rng, trials=300) -> float:
    """max over random and adversarial neighbour batches of ||S(x) - S(x')||_2 / claimed Delta_2."""
    worst = 0.0
    for t in range(trials):
        size = int(rng.integers(2, 12))
        b = int(rng.integers(1, 6))
        C = float(rng.uniform(0.5, size + 1))
        R = product.resolution(C, size)
        block = (rng.random((b, size)) < rng.random()).astype(np.int64)
        other = block.copy()
        i = int(rng.integers(b))
        kind = t % 3
        if kind == 0:  # random replacement
            other[i] = rng.random(size) < rng.random()
        else:  # adversarial: two disjoint rows of about C ones each, or all-zeros vs all-ones
            k = min(size // 2, max(1, int(math.floor(C))))
            block[i] = 0
            other[i] = 0
            if kind == 1:
                block[i, :k] = 1
                other[i, k : 2 * k] = 1
            else:
                other[i] = 1
        diff = product.truncated_sums(block, C, R) - product.truncated_sums(other, C, R)
        worst = max(worst, float(np.sqrt((diff.astype(float) ** 2).sum())) / product.l2_sensitivity(C, size, R))
    return worst


def test_alg4_truncated_sum_sensitivity():
    assert actual_sensitivity_ratio(np.random.default_rng(0)) <= 1.0 + 1e-12


def test_alg4_sensitivity_negative_control(monkeypatch):
    monkeypatch.setattr(product, "l2_sensitivity", lambda C, size, R: R * math.sqrt(min(C, size)))  # lost the 2
    assert actual_sensitivity_ratio(np.random.default_rng(0)) > 1.0


def alg4_data(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    p = np.array([0.0, 0.002, 0.01, 0.03, 0.06, 0.12, 0.2, 0.3, 0.5, 0.7, 0.9, 0.97, 0.05, 0.015, 0.0, 0.25])
    return (rng.random((n, len(p))) < p).astype(np.int8), p


def note_sigmas_ok(res: product.Alg4Result, n: int, d: int, rho: float, beta: float) -> bool:
    """Recompute every release's C, R, Delta_2 and sigma from Algorithm 4's formulas and the recorded sets."""
    r = max(2, math.ceil(math.log2(d)) + 1)
    Lg = math.log(16 * n * d * r / beta)
    ok = True
    for rec in res.releases:
        size, j = rec["size"], rec["round"]
        if j == 1:
            C = math.inf
        else:
            U = 2.0**-j * size
            C = U + math.sqrt(2 * U * Lg) + 2 * Lg / 3
        R = 1 if C >= size else product.RESOLUTION
        delta2 = R * math.sqrt(min(2 * C, size))
        ok &= rec["R"] == R and (rec["C"] == C or math.isclose(rec["C"], C, rel_tol=1e-12))
        ok &= rec["sigma"] >= delta2 / math.sqrt(2 * rho) * (1 - 1e-12)  # Delta_2^2 / (2 sigma^2) <= rho
        ok &= math.isclose(rec["sigma"], delta2 / math.sqrt(2 * rho), rel_tol=1e-9)
    return bool(ok)


def test_alg4_sigmas_batches_and_ledger():
    X, _ = alg4_data()
    n, d = X.shape
    rho = 0.5
    res = product.alg4_biases(X, rho, seeded(1), alpha=0.1, keep_sums=True)
    assert note_sigmas_ok(res, n, d, rho, 0.05)
    # batches: disjoint, inside the part, one per release, bucketing D_j / sampling E_j
    spans = sorted(rec["rows"] for rec in res.releases)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])) and spans[-1][1] <= n
    assert all(s[1] - s[0] == res.b for s in spans)
    # buckets partition the columns
    assert sorted(np.concatenate(res.buckets).tolist()) == list(range(d))
    acc = Accountant(rho)
    draws = product.product_sample(X, rho=rho, accountant=acc, noise=seeded(2), samples=3, rng=np.random.default_rng(0))
    assert len(acc.ledger) == 1 and acc.spent == pytest.approx(rho) and acc.ledger[0].details["parts"] == 3
    assert draws.samples.shape == (3, d) and set(np.unique(draws.samples)) <= {0, 1}


def test_alg4_sigma_negative_control(monkeypatch):
    X, _ = alg4_data()
    monkeypatch.setattr(product, "l2_sensitivity", lambda C, size, R: 0.5 * R * math.sqrt(min(2 * C, size)))
    res = product.alg4_biases(X, 0.5, seeded(1), alpha=0.1)
    assert not note_sigmas_ok(res, *X.shape, 0.5, 0.05)


def _same(a, b):
    return (
        a["phase"] == b["phase"]
        and a["round"] == b["round"]
        and np.array_equal(a["noisy"], b["noisy"])
        and np.array_equal(a["sums"], b["sums"])
    )


def test_alg4_one_record_changes_one_release():
    X, _ = alg4_data(n=4000)
    n, d = X.shape
    rho = 0.5
    base = product.alg4_biases(X, rho, seeded(9), keep_sums=True)
    r, b = base.r, base.b
    # (i) a record of sampling batch E_j: only that release differs, by at most Delta_2 before noise
    for rec in (x for x in base.releases if x["phase"] == "sampling"):
        row = rec["rows"][0]
        X2 = X.copy()
        X2[row] = 1 - X2[row]
        other = product.alg4_biases(X2, rho, seeded(9), keep_sums=True)
        assert len(other.releases) == len(base.releases)
        for a, o in zip(base.releases, other.releases):
            if a is rec:
                diff = (a["sums"] - o["sums"]).astype(float)
                assert np.sqrt((diff**2).sum()) <= a["delta2"] + 1e-9
            else:
                assert _same(a, o)
    # (ii) a record of bucketing batch D_j: earlier releases identical, release j within Delta_2
    for j in range(1, r):
        X2 = X.copy()
        X2[(j - 1) * b] = 1 - X2[(j - 1) * b]
        other = product.alg4_biases(X2, rho, seeded(9), keep_sums=True)
        for a, o in zip(base.releases, other.releases):
            if a["phase"] == "bucketing" and a["round"] < j:
                assert _same(a, o)
            elif a["phase"] == "bucketing" and a["round"] == j:
                diff = (a["sums"] - o["sums"]).astype(float)
                assert np.sqrt((diff**2).sum()) <= a["delta2"] + 1e-9
                break
    # (iii) a record of the unused batch D_r or of the remainder: nothing changes
    for row in ((r - 1) * b, 2 * r * b) if 2 * r * b < n else ((r - 1) * b,):
        X2 = X.copy()
        X2[row] = 1 - X2[row]
        other = product.alg4_biases(X2, rho, seeded(9), keep_sums=True)
        assert all(_same(a, o) for a, o in zip(base.releases, other.releases))


def test_alg4_orientation_and_accuracy():
    X, p = alg4_data(n=40000, seed=3)
    res = product.alg4_biases(X, 2.0, seeded(4))
    assert res.flipped[p > 0.6].all() and not res.flipped[p < 0.4].any()
    assert np.all((res.biases >= 0) & (res.biases <= 1))
    assert np.abs(res.biases - p).max() < 0.05


def test_alg4_required_n_matches_note():
    # a worked example of the sufficient-n calculator
    assert product.required_n(32, 0.5, 0.1) == pytest.approx(5.3e6, rel=0.03)
    assert product.rounds(1) == 2 and product.rounds(2) == 2 and product.rounds(32) == 6
    assert 2.0 ** -product.rounds(33) <= 1 / 66
    with pytest.raises(parallel.NotEnoughRecords):
        product.product_sample(np.zeros((3, 4), int), rho=1.0, accountant=Accountant(1.0), noise=seeded())


# ================================================================================================
# the secure path (OpenDP noise, secrets draws) end to end
# ================================================================================================
def test_secure_path_smoke():
    from privsample.privacy import SecureNoise

    nz = SecureNoise()
    rng = np.random.default_rng(0)
    d1 = kary.kary_sample(rng.integers(0, 3, 60), 3, epsilon=1.0, accountant=Accountant(1.0), noise=nz, samples=2)
    d2 = bernoulli.bounded_bias_sample(rng.integers(0, 2, (60, 3)), epsilon=1.0, accountant=Accountant(1.0), noise=nz)
    acc = Accountant(0.5)
    d3 = product.product_sample(rng.integers(0, 2, (200, 5)), rho=0.5, accountant=acc, noise=nz, samples=2)
    assert d1.samples.shape == (2,) and d2.samples.shape == (1, 3) and d3.samples.shape == (2, 5)
    assert acc.private and acc.ledger[0].private


# ================================================================================================
# per-record input rules (public, never refusing, never dropping)
# ================================================================================================
def test_kary_catch_all_domain_and_encoding():
    labels, catch = kary.domain_with_other(["red", "green"])
    assert labels == ["red", "green", kary.OTHER_LABEL] and catch == 2
    assert kary.domain_with_other(["red", "(other)", "green"]) == (["red", "(other)", "green"], 1)
    assert kary.domain_with_other(["red", "green"], other="green") == (["red", "green"], 1)
    with pytest.raises(InputError):
        kary.domain_with_other(["red", "green"], other="blue")
    codes = kary.encode(["red", None, "HIV", "green", "Red"], ["red", "green"], 2)
    assert codes.tolist() == [0, 2, 2, 1, 2] and codes.dtype == np.int64


def test_binarize_reads_one_iff_exactly_one():
    bits = bernoulli.binarize(["1", "true", "TRUE", "0", None, "7", "0.5", "yes", "false", "-1", ""])
    assert bits.tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0] and bits.dtype == np.int8


def test_mapped_neighbours_stay_neighbours():
    """The rules act record by record: two data sets differing in one record map to data sets differing in at
    most that record, with the same n (what the replace-one guarantees need)."""
    rng = np.random.default_rng(3)
    vals = [str(v) for v in rng.choice(["red", "green", "blue", "x", "1", "0"], 200)]
    for i in (0, 57, 199):
        other = list(vals)
        other[i] = "something else"
        a, b = kary.encode(vals, ["red", "green"], 2), kary.encode(other, ["red", "green"], 2)
        assert len(a) == len(b) == 200 and np.flatnonzero(a != b).tolist() in ([], [i])
        a, b = bernoulli.binarize(vals), bernoulli.binarize(other)
        assert len(a) == len(b) == 200 and np.flatnonzero(a != b).tolist() in ([], [i])
