"""Private discovery of one numeric column: utility, exact spending and privacy checks."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from privsample.data import numeric_discovery as nd
from privsample.data.encoding import decode, encode
from privsample.data.numeric_discovery import discover_numeric
from privsample.data.schema import Numeric, Schema
from privsample.privacy import Accountant, SeededNoise


class RecordingNoise(SeededNoise):
    """Seeded noise that records every call (what the mechanism was given)."""

    def __init__(self, seed: int):
        super().__init__(seed, quiet=True)
        self.calls: list[tuple] = []

    def gaussian(self, counts, sigma):
        self.calls.append(("gaussian", np.asarray(counts).copy(), sigma))
        return super().gaussian(counts, sigma)

    def exponential(self, scores, epsilon, sensitivity):
        self.calls.append(("exponential", np.asarray(scores, dtype=float).copy(), epsilon, sensitivity))
        return super().exponential(scores, epsilon, sensitivity)


def run(x, *, rho=0.05, delta=1e-6, integer=True, n_hat=None, seed=0, bins=16, noise=None):
    acc = Accountant(10.0, delta_slack=1e-3)
    noise = noise or RecordingNoise(seed)
    x = np.asarray(x, dtype=float)
    col, info = discover_numeric(
        "c",
        x,
        acc,
        noise,
        rho=rho,
        delta=delta,
        integer=integer,
        nullable=False,
        n_hat=len(x) if n_hat is None else n_hat,
        bins=bins,
    )
    return col, info, acc, noise


def roundtrip(x, col):
    schema = Schema([col], provenance="private")
    codes = encode(pd.DataFrame({"c": x}), schema, release=True)
    return decode(codes, schema, np.random.default_rng(0))["c"].to_numpy(dtype=float)


def capital_gain_like(n, rng):
    nonzero = rng.random(n) >= 0.917
    return np.where(nonzero, np.round(np.exp(rng.normal(8.0, 1.0, n))), 0.0)


# -- utility ------------------------------------------------------------------------------------------
def test_large_clean_column_bounds_near_the_design_quantiles():
    x = np.random.default_rng(1).normal(1000.0, 100.0, 20000)
    col, info, _, _ = run(x, integer=False)
    q = info["clipped_share_design"][0]
    assert 0.005 <= q < 0.05
    # at this size the coarse histogram passes: its range covers the data (log-scale buckets)
    below, above = np.mean(x < col.lower), np.mean(x > col.upper)
    assert below <= 0.005 and above <= 0.005, (below, above)
    assert 512 <= col.lower < 900 and 1100 < col.upper <= 2048
    assert info["binning"] == "quantile" and col.bins >= 8


def test_small_integer_range_gets_exact_unit_bins():
    x = np.random.default_rng(2).integers(1, 6, 3000).astype(float)
    col, info, _, _ = run(x)
    assert info["binning"] == "unit" and col.lower == 1.0 and 5.0 <= col.upper <= 7.0  # buckets [1,2) .. [4,8)
    assert col.bins == col.upper - col.lower + 1 and col.integer
    assert np.array_equal(roundtrip(x, col), x)  # every value recovered exactly


def test_point_mass_at_zero_gets_its_own_bin_and_decodes_to_zero():
    rng = np.random.default_rng(3)
    x = capital_gain_like(20000, rng)
    col, info, _, _ = run(x, rho=0.02)
    assert 0.0 in info["points"] and col.lower == 0.0
    e = col.bin_edges
    assert e[0] == 0.0 and e[1] == 0.5  # [0, 0.5): exactly the integer 0
    dec = roundtrip(x, col)
    assert np.array_equal(dec == 0, x == 0)  # zeros stay zeros, and no other value becomes 0
    assert np.mean(dec == 0) == pytest.approx(0.917, abs=0.01)


def test_float_point_mass_decodes_exactly():
    rng = np.random.default_rng(4)
    x = np.where(rng.random(20000) < 0.5, 2.5, rng.uniform(0.0, 10.0, 20000))
    col, info, _, _ = run(x, integer=False, rho=0.02)
    assert 2.5 in info["points"]
    dec = roundtrip(x, col)
    assert np.all(dec[x == 2.5] == 2.5)


@pytest.mark.parametrize(
    "x", [np.zeros(0), np.arange(50, dtype=float), np.full(50, 7.0), np.array([-1e300, 1e300] * 25)]
)
@pytest.mark.parametrize("integer", [True, False])
def test_tiny_or_empty_columns_still_give_a_valid_numeric(x, integer):
    for seed in range(3):
        col, info, _, _ = run(x, rho=1e-3, integer=integer, seed=seed)
        assert isinstance(col, Numeric)
        assert math.isfinite(col.lower) and math.isfinite(col.upper) and col.lower <= col.upper
        e = col.bin_edges
        assert np.all(np.diff(e) > 0) and e[0] == col.lower and e[-1] == col.upper
        assert info["lower"] == col.lower and info["upper"] == col.upper and info["bins"] == col.bins
        roundtrip(x, col)  # encodes and decodes without error


def test_info_holds_only_public_or_noisy_values():
    x = capital_gain_like(5000, np.random.default_rng(5))
    _, info, _, _ = run(x)
    assert set(info) <= {
        "kind",
        "integer",
        "lower",
        "upper",
        "bins",
        "points",
        "binning",
        "clipped_share_design",
        "tree_levels",
    }
    assert info["kind"] == "numeric" and info["binning"] in ("unit", "quantile", "equal-width")


# -- spending -----------------------------------------------------------------------------------------
def _spent(acc):
    return sum((Fraction(e.rho) for e in acc.ledger), Fraction(0)), sum(
        (Fraction(e.delta) for e in acc.ledger), Fraction(0)
    )


@pytest.mark.parametrize("rho", [1e-4, 0.0123, 0.3])
def test_spends_exactly_rho_on_any_data(rho):
    rng = np.random.default_rng(6)
    datasets = [
        np.zeros(0),
        np.arange(3, dtype=float),
        rng.integers(1, 5, 1000).astype(float),
        capital_gain_like(5000, rng),
        rng.normal(0, 1e6, 5000).round(),
    ]
    for x in datasets:
        for n_hat in (len(x), 10.0, 1e5):
            _, _, acc, _ = run(x, rho=rho, n_hat=n_hat)
            spent, delta = _spent(acc)
            assert spent == Fraction(rho), (len(x), n_hat)
            assert delta <= Fraction(1e-6)
            assert all(e.label.startswith("schema: c: ") for e in acc.ledger)


def test_budget_plan_does_not_depend_on_the_data():
    """Same public inputs (rho, n_hat, bins) -> the same bound spends, whatever the data."""
    rng = np.random.default_rng(7)
    plans = set()
    for x in (rng.normal(0, 1, 2000), rng.normal(1e4, 10, 2000), np.zeros(2000)):
        _, _, acc, _ = run(x, integer=False, n_hat=2000)
        plans.add(tuple((e.label, e.rho) for e in acc.ledger[:2]))
    assert len(plans) == 1


# -- privacy ------------------------------------------------------------------------------------------
def check_calls_against_ledger(acc, noise):
    """Every noise call is paid for by a ledger entry: exponential draws use epsilon with eps^2/8 <= rho of
    their entry (several draws of one entry are disjoint cells of one tree level), Gaussian draws use sigma
    with 1/(2 sigma^2) <= rho."""
    entries = [e for e in acc.ledger if e.mechanism != "none"]
    calls = list(noise.calls)
    i = 0
    for e in entries:
        mine = []
        while i < len(calls) and (not mine or e.details.get("cells", 1) > len(mine)):
            if (calls[i][0] == "exponential") != (e.mechanism == "exponential"):
                break
            mine.append(calls[i])
            i += 1
        for call in mine:
            if call[0] == "exponential":
                _, _, eps, sens = call
                assert eps * eps / 8 <= e.rho * (1 + 1e-12), e.label
                assert sens == e.details["sensitivity"]
                assert e.noise_scale == pytest.approx(2 * sens / eps)
            else:
                _, _, sigma = call
                assert 1 / (2 * sigma * sigma) <= e.rho * (1 + 1e-12), e.label
    assert i == len(calls)


def test_noise_scales_match_the_ledger():
    rng = np.random.default_rng(8)
    for x in (rng.normal(0, 1, 3000), capital_gain_like(20000, rng), rng.integers(0, 1000, 20000).astype(float)):
        _, _, acc, noise = run(x, integer=bool(np.all(x == np.round(x))), rho=0.02)
        assert any(c[0] == "exponential" for c in noise.calls)
        check_calls_against_ledger(acc, noise)


def test_ledger_check_catches_a_doubled_epsilon(monkeypatch):
    orig = nd.epsilon_for_rho
    monkeypatch.setattr(nd, "epsilon_for_rho", lambda r: 2 * orig(r))
    x = np.random.default_rng(9).normal(0, 1, 3000)
    _, _, acc, noise = run(x, integer=False, rho=0.02)
    with pytest.raises(AssertionError):
        check_calls_against_ledger(acc, noise)


def _neighbours(x, extra):
    yield from (np.append(x, v) for v in extra)
    yield from (np.delete(x, i) for i in range(len(x)))


@pytest.mark.parametrize("q", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("side", ["lower", "upper"])
def test_bound_scores_have_the_stated_sensitivity(q, side):
    rng = np.random.default_rng(10)
    grid = np.arange(-3.0, 9.0)
    for _ in range(30):
        x = np.sort(rng.integers(0, 6, rng.integers(0, 12)).astype(float))
        u = nd._rank_scores(x, grid, q, side)
        for y in _neighbours(x, [-5.0, 0.0, 2.0, 5.0, 20.0]):
            du = np.abs(nd._rank_scores(np.sort(y), grid, q, side) - u)
            assert du.max() <= max(q, 1 - q) + 1e-12


def test_median_scores_have_sensitivity_one_half():
    rng = np.random.default_rng(11)
    cand = np.arange(-0.5, 7.0, 1.0)
    for _ in range(30):
        x = np.sort(rng.integers(0, 6, rng.integers(0, 12)).astype(float))
        u = nd._median_scores(x, cand)
        for y in _neighbours(x, [0.0, 3.0, 5.0]):
            assert np.abs(nd._median_scores(np.sort(y), cand) - u).max() <= 0.5 + 1e-12


def _selection_probs(scores, eps, sens):
    logits = eps * np.asarray(scores) / (2 * sens)
    p = np.exp(logits - logits.max())
    return p / p.sum()


def _max_log_ratio(x, neighbours, monkeypatch, rho):
    """Largest |log P(c | D) - log P(c | D')| of the two bound selections over the given neighbours, from
    the exact selection laws of the scores/epsilon/sensitivity the mechanism passed to its noise source."""
    monkeypatch.setattr(nd, "bound_grid", lambda integer: np.arange(-3.0, 9.0))

    def laws(data):
        noise = RecordingNoise(0)
        _, _, acc, _ = run(data, rho=rho, n_hat=20, noise=noise)
        calls = [c for c in noise.calls if c[0] == "exponential"][:2]  # lower, upper
        eps = [e.details["epsilon"] for e in acc.ledger if e.label.endswith("bound")][:2]
        return [_selection_probs(s, e_used, sens) for (_, s, e_used, sens) in calls], eps

    base, eps = laws(x)
    worst = 0.0
    for y in neighbours:
        other, _ = laws(y)
        for p, p2, e in zip(base, other, eps):
            worst = max(worst, float(np.max(np.abs(np.log(p) - np.log(p2)))) / e)
    return worst


def test_bound_selection_neighbour_ratio_is_within_epsilon(monkeypatch):
    x = np.array([0.0, 1, 1, 2, 3, 3, 3, 4, 5, 5, 6, 2, 2, 1, 0, 4, 4, 3, 2, 1])
    ratio = _max_log_ratio(x, _neighbours(x, [-3.0, 0.0, 3.0, 8.0, 50.0]), monkeypatch, rho=0.5)
    assert ratio <= 1.0 + 1e-9  # log-ratio <= epsilon of the step


def test_neighbour_ratio_check_catches_a_wrong_sensitivity(monkeypatch):
    orig = nd._rank_scores
    monkeypatch.setattr(nd, "_rank_scores", lambda *a: 3.0 * orig(*a))  # scores 3x steeper, same stated sensitivity
    x = np.array([0.0, 1, 1, 2, 3, 3, 3, 4, 5, 5, 6, 2, 2, 1, 0, 4, 4, 3, 2, 1])
    ratio = _max_log_ratio(x, _neighbours(x, [-3.0, 0.0, 3.0, 8.0, 50.0]), monkeypatch, rho=0.5)
    assert ratio > 1.0 + 1e-6


def test_seeded_selection_frequencies_follow_the_exact_law():
    """The draws themselves follow P(c) ~ exp(eps u(c) / (2 sens)) (empirical check on a tiny grid)."""
    scores = nd._rank_scores(np.array([1.0, 2, 2, 3, 4]), np.arange(0.0, 6.0), 0.2, "lower")
    eps, sens = 1.0, 0.8
    noise = SeededNoise(12, quiet=True)
    draws = np.bincount([noise.exponential(scores, eps, sens) for _ in range(20000)], minlength=len(scores)) / 20000
    assert np.abs(draws - _selection_probs(scores, eps, sens)).max() < 0.015


def test_point_mass_threshold_and_noise_match_the_stability_argument():
    """tau = 1 + sigma sqrt(2 ln(1/delta)) with sigma = 1/sqrt(2 rho_p): a value held by one record passes
    with probability <= delta; the Gaussian draw uses that sigma."""
    x = capital_gain_like(20000, np.random.default_rng(13))
    _, _, acc, noise = run(x, rho=0.02, delta=1e-6)
    (entry,) = [e for e in acc.ledger if e.label == "schema: c: point masses"]
    sigma = 1 / math.sqrt(2 * entry.rho)
    assert entry.noise_scale == pytest.approx(sigma)
    assert entry.details["threshold"] == pytest.approx(1 + sigma * math.sqrt(2 * math.log(1e6)))
    assert entry.delta == 1e-6
    calls = [c for c in noise.calls if c[0] == "gaussian"]  # the range buckets, then the point masses
    assert calls[-1][2] == entry.noise_scale
    assert "cells" not in entry.details
