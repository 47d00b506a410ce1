"""MBDE with a q0 fitted under an accounted share of the budget (:mod:`privsample.mbde.fitted_q0`).

The sensitivity is checked against adversarial pairs of datasets (any sizes for the integral-privacy calibration,
replace-one for the DP one): the stated L1 sensitivity must bound every pair and be nearly reached. The accounting
is checked on the release: the ledger's pure epsilons add up to the total, the q0 noise scale is the sensitivity
over s epsilon, MBDE trains at (1 - s) epsilon / m with the released q0, nothing is read or drawn when the budget
is short, and the noise comes from the project's noise source.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from privsample.errors import InputError
from privsample.mbde.density import MBDE, GaussianQ0
from privsample.mbde.fitted_q0 import fit_q0, l1_sensitivity, moments
from privsample.mbde.release import release
from privsample.privacy import Accountant, BudgetExceeded
from privsample.privacy.noise import SecureNoise, SeededNoise

FAST = dict(hidden=(16, 16), epochs=30, batch_size=256, lr=0.05)


def extreme_datasets(d: int, box: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Datasets whose clipped moments sit at the corners of their ranges (and beyond the box), of varied sizes."""
    pts = [-box, -0.5, 0.0, box, 3 * box, -1e6]
    out = [np.empty((0, d))]
    for a in pts:
        for b in pts:
            out.append(np.tile(np.array([a] * d, float), (int(rng.integers(1, 40)), 1)))
            out.append(np.array([[a] * d, [b] * d] * int(rng.integers(1, 5)), float))
    out += [rng.normal(0, box, (int(rng.integers(1, 300)), d)) for _ in range(20)]
    return out


@pytest.mark.parametrize("d,box", [(1, 6.0), (2, 2.0), (3, 0.5)])
def test_ip_sensitivity_any_two_datasets(d, box):
    """calibration "ip": for ANY two datasets (any sizes, the empty one included) the L1 distance of the released
    statistics is at most d (2B + B^2), and some pair comes close (so the bound is not vacuous either)."""
    rng = np.random.default_rng(d)
    stats = [moments(s, box) for s in extreme_datasets(d, box, rng)]
    worst = max(float(np.abs(a - b).sum()) for a in stats for b in stats)
    sens = l1_sensitivity(d, box, 123, "ip")
    assert sens == pytest.approx(d * (2 * box + box * box))
    assert worst <= sens * (1 + 1e-12)
    assert worst >= d * (box * box + box + 0.25) * (1 - 1e-9)  # the exact supremum: (B, B^2) against (-1/2, 1/4)
    assert l1_sensitivity(d, box, 0, "ip") == sens  # n enters neither the noise nor the proof


@pytest.mark.parametrize("d,box", [(1, 6.0), (2, 2.0)])
def test_dp_sensitivity_replace_one(d, box):
    """calibration "dp": replacing one record of n moves the statistics by at most d (2B + B^2) / n in L1."""
    rng = np.random.default_rng(7)
    n = 50
    base = rng.normal(0, box, (n, d))
    worst = 0.0
    for old in (-box, -0.5, 0.0, box, 10 * box):
        for new in (-box, -0.5, 0.0, box, -10 * box):
            s, t = base.copy(), base.copy()
            s[0], t[0] = old, new
            worst = max(worst, float(np.abs(moments(s, box) - moments(t, box)).sum()))
    sens = l1_sensitivity(d, box, n, "dp")
    assert sens == pytest.approx(d * (2 * box + box * box) / n)
    assert d * (box * box + box + 0.25) / n * (1 - 1e-9) <= worst <= sens * (1 + 1e-12)
    assert l1_sensitivity(d, box, n, "ip") == pytest.approx(n * sens)


class Recording(SecureNoise):
    """The project's secure noise source, remembering what it was asked to perturb."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def laplace_float(self, values, scale):
        self.calls.append((np.array(values, float), float(scale)))
        return super().laplace_float(values, scale)


def test_fit_q0_noise_scale_and_ledger():
    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 2.0, (400, 2))
    acc = Accountant(1.0, target=(2.0, 0.0))
    noise = Recording()
    q0 = fit_q0(x, 0.2, box=6.0, accountant=acc, noise=noise)
    ((values, scale),) = noise.calls
    assert np.array_equal(values, moments(x, 6.0))  # clipped moments, one vector draw
    assert scale == pytest.approx(2 * (2 * 6.0 + 36.0) / 0.2)  # sensitivity / epsilon, for the box
    (e,) = acc.ledger
    assert e.rho == pytest.approx(0.2**2 / 2) and e.details["pure_epsilon"] == 0.2 and e.noise_scale == scale
    assert e.details["l1_sensitivity"] == pytest.approx(96.0) and e.private and "OpenDP" in e.details["randomness"]
    assert q0.released and not q0.is_standard and q0.box is None
    assert all(-6 <= m <= 6 for m in q0.mean) and all(0.1 <= s <= 6 for s in q0.std)
    # with the DP calibration and a large budget the fit is accurate (the estimator itself is right)
    q1 = fit_q0(x, 1e4, box=6.0, accountant=Accountant(1e9), noise=SeededNoise(1, quiet=True), calibration="dp")
    c = np.clip(x, -6, 6)  # of the values clipped to the box
    assert q1.mean == pytest.approx(tuple(c.mean(0)), abs=1e-3) and q1.std == pytest.approx(tuple(c.std(0)), abs=1e-3)


def test_fit_q0_refuses_before_noise_when_budget_short():
    class Refusing(SecureNoise):
        def laplace_float(self, values, scale):
            raise AssertionError("noise drawn despite an insufficient budget")

    acc = Accountant(0.01, target=(0.1, 0.0))
    with pytest.raises(BudgetExceeded):
        fit_q0(np.zeros((5, 1)), 1.0, box=6.0, accountant=acc, noise=Refusing())
    assert acc.ledger == []


@pytest.mark.parametrize("share", [0.1, 0.3])
def test_release_with_fitted_q0_accounts_the_total(monkeypatch, share):
    """The two spends compose to the total: pure epsilons s E + (1 - s) E = E, the q0 noise scale is the
    sensitivity over s E, MBDE trains at (1 - s) E / m with the released q0 (truncated to the public box)."""
    seen = {}
    orig = MBDE.fit

    def spy(self, data, *, seed=None):
        seen["epsilon"], seen["q0"] = self.epsilon, self.q0
        return orig(self, data, seed=seed)

    monkeypatch.setattr(MBDE, "fit", spy)
    E, m, box = 4.0, 8, 2.0
    x = np.random.default_rng(1).normal(0.5, 0.7, (300, 1))
    acc = Accountant(E**2 / 2, target=(E, 0.0))
    noise = Recording()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = release(x, m, E, acc, noise=noise, q0_share=share, q0_box=box, **FAST)
    q_entry, s_entry = acc.ledger
    assert acc.pure_epsilon_spent() == pytest.approx(E) and acc.epsilon_spent() == pytest.approx(E)
    assert q_entry.details["pure_epsilon"] == pytest.approx(share * E)
    assert s_entry.details["pure_epsilon"] == pytest.approx((1 - share) * E)
    assert q_entry.noise_scale == pytest.approx((2 * box + box * box) / (share * E))
    assert noise.calls[0][1] == q_entry.noise_scale and q_entry.details["calibration"] == "ip"
    assert acc.spent == pytest.approx(((share * E) ** 2 + ((1 - share) * E) ** 2) / 2) and acc.spent <= E**2 / 2
    assert seen["epsilon"] == pytest.approx((1 - share) * E / m) == rel.epsilon_per_sample
    assert s_entry.details["per_sample_epsilon"] == pytest.approx((1 - share) * E / m)
    assert seen["q0"].released and seen["q0"].box == box
    assert rel.info["q0_mean"] == list(seen["q0"].mean) and rel.info["q0_epsilon"] == pytest.approx(share * E)
    assert rel.private and acc.private and rel.samples.shape == (m, 1) and np.all(np.abs(rel.samples) <= box)


def test_release_with_fitted_q0_refuses_before_anything(monkeypatch):
    monkeypatch.setattr(MBDE, "fit", lambda *a, **k: pytest.fail("trained despite an insufficient budget"))
    E = 2.0
    acc = Accountant(((0.9 * E) ** 2 / 2) * 1.01, target=(E, 0.0))  # enough for the samples, not for both
    with pytest.raises(BudgetExceeded):
        release(np.zeros((10, 1)), 1, E, acc, noise=SeededNoise(0, quiet=True), q0_share=0.1, q0_box=2.0)
    assert acc.ledger == []
    with pytest.raises(InputError, match="public box"):
        release(np.zeros((10, 1)), 1, E, Accountant(10.0), noise=SeededNoise(0, quiet=True), q0_share=0.1)
    with pytest.raises(InputError, match=r"\[0, 1\)"):
        release(np.zeros((10, 1)), 1, E, Accountant(10.0), q0_share=1.0, q0_box=2.0)


def test_default_release_is_unchanged():
    """q0_share defaults to 0: one entry at the whole epsilon, q0 = N(0, I)."""
    acc = Accountant(2.0, target=(2.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release(np.random.default_rng(0).normal(size=(200, 1)), 4, 2.0, acc, seed=0, **FAST)
    (e,) = acc.ledger
    assert e.details["pure_epsilon"] == 2.0 and e.rho == 2.0


def test_empty_data_with_fitted_q0_draws_from_it():
    acc = Accountant(2.0, target=(2.0, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = release(np.empty((0, 2)), 5, 2.0, acc, seed=0, q0_share=0.5, q0_box=2.0, **FAST)
    assert rel.samples.shape == (5, 2) and len(acc.ledger) == 2 and acc.pure_epsilon_spent() == pytest.approx(2.0)


def test_mbde_keeps_the_mollifier_bound_with_a_fitted_q0():
    """The proof holds for every value of q0: with a released q0 the density ratio to it stays in e^{+-eps/2}."""
    x = np.random.default_rng(3).normal(2.0, 0.5, (500, 1))
    q0 = fit_q0(x, 1e4, box=6.0, accountant=Accountant(1e9), noise=SeededNoise(2, quiet=True), calibration="dp")
    dens = MBDE(2.0, q0=q0, **FAST).fit(x, seed=0)
    pts = np.linspace(-50, 50, 20001)[:, None]
    lz = dens.log_normaliser(100_000, np.random.default_rng(5))
    assert np.max(np.abs(dens.log_ratio(pts, lz))) <= 2.0 / 2 + 1e-9
    assert dens.q0 is q0 and math.isfinite(lz)
    with pytest.raises(ValueError, match="DP release"):
        MBDE(1.0, q0=GaussianQ0(1, None, (2.0,), (0.5,)))  # a mean and std not produced by a DP release
