"""Bounds inside the records' range: the edge cells of the numeric grid refined (``privsample.data.edge_bounds``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privsample.data.edge_bounds import EDGE_SHARE, edge_budget, edge_cut, inner_bounds
from privsample.data.numeric_discovery import discover_numeric, grid_index
from privsample.privacy import make_noise
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import sigma_for_rho
from tests.test_discovery import RecordingNoise


def test_edge_cut_needs_the_stated_sd_beyond_the_bound():
    assert edge_cut(np.array([0.0, 0.0, 10.0, 10.0]), 1.0, 3.0) == 3  # 10 > 3 sqrt(3)
    assert edge_cut(np.zeros(5), 1.0) == 5  # none: the whole run


def test_the_budget_goes_to_the_edges_only_where_it_pays():
    assert edge_budget(1e-6, 1000.0) == (1e-6, 0.0)  # a sub-cell passing 2 sigma would hold most records
    grid, edge = edge_budget(0.01, 100_000.0)
    assert edge == pytest.approx(EDGE_SHARE * 0.01) and grid + edge == pytest.approx(0.01)


@pytest.mark.parametrize("integer", [True, False])
def test_bounds_lie_inside_the_records_range_at_large_n(integer):
    rng = np.random.default_rng(0)
    x = rng.integers(18, 91, 60_000).astype(float) if integer else rng.gamma(2.0, 800.0, 60_000)
    for seed in range(3):
        acc = Accountant(1.0)
        col, info = discover_numeric(
            "x", x, acc, make_noise(seed, quiet=True), rho=0.05, integer=integer, nullable=False, n_hat=len(x)
        )
        assert any(e.label.endswith("edge cells") for e in acc.ledger)
        assert x.min() <= col.lower and col.upper <= x.max()
        assert float(np.mean((x < col.lower) | (x > col.upper))) < 0.05
        assert acc.spent == pytest.approx(0.05)


def test_edge_counts_have_sensitivity_one_and_the_stated_noise():
    """One more record changes one sub-cell count by one (each record in the one grid cell the grid put it in),
    and the noise drawn has the sigma of the rho charged."""
    rng = np.random.default_rng(1)
    x = rng.gamma(2.0, 800.0, 5000)
    vectors = []
    for extra in (None, 5000.0):
        xs = x if extra is None else np.append(x, extra)
        w = np.ones(len(xs), dtype=np.int64)
        cells = (int(grid_index(np.array([100.0]), False)[0]), int(grid_index(np.array([5000.0]), False)[0]))
        spans = ((64.0, 128.0), (4096.0, 8192.0))
        noise, acc = RecordingNoise(0), Accountant(1.0)
        inner_bounds("x", (xs, w), grid_index(xs, False), cells, spans, (64.0, 8192.0), False, acc, noise, 0.01, 5000)
        ((counts, sigma, _),) = noise.calls
        assert sigma == pytest.approx(sigma_for_rho(0.01)) and acc.ledger[0].noise_scale == pytest.approx(sigma)
        assert math.isclose(acc.spent, 0.01)
        vectors.append(counts)
    assert np.abs(vectors[1] - vectors[0]).sum() == 1
