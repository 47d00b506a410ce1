"""The unit profile (privsample.data.unit_profile): its spend is sensitivity 1 per person, its noise has the scale it
states, k is chosen sensibly from a clean profile, the share removed is exact where it can be, and the denoising is
post-processing of the noisy counts only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from privsample.data.unit_profile import (
    PROFILE_SHARE,
    UnitProfile,
    choose_k,
    denoise,
    removed_share,
    rows_kept,
    unit_profile,
)
from privsample.marginals.bounding import UNIT_GRID, keep_mask, size_histogram
from privsample.privacy import Accountant, SeededNoise
from privsample.privacy.unit import PrivacyUnit

GRID = UNIT_GRID
RHO = 0.5  # the synthesis budget in choose_k's proxy (a public number)


def sizes() -> np.ndarray:
    """The representative sizes of the grid's cells (geometric middles; twice the lower edge for the last)."""
    g = np.asarray(GRID, dtype=np.float64)
    upper = np.r_[g[1:] - 1, 2 * g[-1]]
    return np.sqrt(g * np.maximum(upper, g))


def person_column(rows_per_person: list[int]) -> np.ndarray:
    return np.repeat(np.array([f"p{i}" for i in range(len(rows_per_person))], dtype=object), rows_per_person)


def accountant(rho: float = 1.0) -> Accountant:
    return Accountant(rho, unit=PrivacyUnit("pid", 1))


def profile(hist, rho_u: float, seed: int = 0, k: int | None = None) -> UnitProfile:
    return unit_profile(
        np.asarray(hist),
        accountant(),
        SeededNoise(seed, quiet=True),
        rho_u,
        column="pid",
        grid=GRID,
        k=k,
        synthesis_rho=RHO,
        columns=6,
    )


# -- the spend: sensitivity 1 per person --------------------------------------------------------------------------
@pytest.mark.parametrize("extra", [1, 2, 7, 64, 1500])
def test_one_person_moves_one_cell_by_one(extra):
    """Adding a person, whatever their number of rows, changes the exact histogram in one cell by one: L2
    sensitivity 1 (the sigma of the profile is not scaled by any k)."""
    base = [1] * 50 + [3] * 20 + [12] * 5 + [300]
    h0 = size_histogram(person_column(base), GRID)
    h1 = size_histogram(person_column(base + [extra]), GRID)
    diff = h1 - h0
    assert int(np.abs(diff).sum()) == 1 and float(np.linalg.norm(diff)) == 1.0
    assert diff[int(np.searchsorted(GRID, extra, side="right")) - 1] == 1


def test_removing_a_person_with_all_their_rows_moves_one_cell():
    ids = person_column([2, 5, 5, 40])
    h = size_histogram(ids, GRID)
    h_without = size_histogram(ids[ids != "p3"], GRID)  # all 40 rows of one person removed
    assert int(np.abs(h - h_without).sum()) == 1


def test_noise_scale_is_one_over_sqrt_2_rho_and_charged_at_rho():
    rho_u = 0.02
    sigma = 1 / math.sqrt(2 * rho_u)
    acc = accountant()
    prof = unit_profile(
        np.zeros(len(GRID), dtype=np.int64),
        acc,
        SeededNoise(3, quiet=True),
        rho_u,
        column="pid",
        grid=GRID,
        k=2,
        synthesis_rho=RHO,
        columns=6,
    )
    assert prof.sigma == pytest.approx(sigma)
    assert acc.spent == pytest.approx(rho_u)
    entry = acc.ledger[-1]
    assert entry.rho == pytest.approx(rho_u) and entry.noise_scale == pytest.approx(sigma)
    # the empirical sd of the noise (seeded, over many draws of the 23 cells) matches sigma
    draws = np.concatenate([np.asarray(profile(np.zeros(len(GRID)), rho_u, seed=s, k=2).people) for s in range(120)])
    assert abs(draws.mean()) < 0.2 * sigma
    assert draws.std() == pytest.approx(sigma, rel=0.06)


def test_profile_share_is_a_small_share():
    assert 0 < PROFILE_SHARE <= 0.1


# -- choose_k on a clean profile ------------------------------------------------------------------------------
def test_everyone_with_one_row_gives_k_1():
    h = np.zeros(len(GRID))
    h[0] = 10_000
    assert choose_k(h, GRID, RHO, 6) == 1
    assert choose_k(h, GRID, RHO, 6, sigma=5.0) == 1


def test_a_heavy_tail_gives_a_larger_k():
    rng = np.random.default_rng(0)
    rows = np.clip(np.round(np.exp(rng.normal(np.log(3), 1.1, 20_000))), 1, 500).astype(int)
    h_tail = size_histogram(person_column(rows.tolist()), GRID)
    h_light = size_histogram(person_column(np.minimum(rows, 2).tolist()), GRID)
    k_tail, k_light = choose_k(h_tail, GRID, RHO, 6), choose_k(h_light, GRID, RHO, 6)
    assert k_light <= 2 < 5 <= k_tail
    # more budget for the synthesis: the noise of a larger k costs less, so k does not shrink
    assert choose_k(h_tail, GRID, 10 * RHO, 6) >= k_tail


def test_the_chosen_k_is_on_the_grid():
    h = np.array([100.0 * (0.7**i) for i in range(len(GRID))])
    assert choose_k(h, GRID, RHO, 6) in GRID


# -- removed_share: exact at the representative sizes ----------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 12, 20, 64])
def test_removed_share_is_exact_when_people_sit_at_the_representative_sizes(k):
    s = sizes()
    counts = [40, 30, 20, 10, 8, 6, 5, 4, 3, 2, 2, 1, 1]
    rows_per_person = []
    h = np.zeros(len(GRID))
    for i, c in enumerate(counts):
        if float(s[i]).is_integer():  # cells whose representative size is a whole number of rows
            rows_per_person += [int(s[i])] * c
            h[i] = c
    assert h.sum() > 50
    assert np.array_equal(size_histogram(person_column(rows_per_person), GRID), h)
    ids = person_column(rows_per_person)
    exact = 1 - keep_mask(ids, k, seed=0).sum() / len(ids)
    assert removed_share(h, GRID, k) == pytest.approx(exact, abs=1e-12)
    kept, total = rows_kept(h, GRID, k)
    assert total == len(ids) and kept == pytest.approx(keep_mask(ids, k, seed=0).sum())


def test_removed_share_is_zero_when_no_one_is_over_k():
    h = np.zeros(len(GRID))
    h[:3] = [10, 5, 2]
    assert removed_share(h, GRID, 3) == 0.0
    assert removed_share(np.zeros(len(GRID)), GRID, 1) == 0.0


# -- denoising: post-processing that removes the noise of empty cells ----------------------------------------------
def test_denoise_clears_pure_noise_in_the_cells_of_many_rows():
    """A profile whose people all have 1-4 rows: the noise in the empty cells of many rows, counted at their sizes
    (up to 1448 rows), would have made bounding look costly; denoised, the estimate is the truth (0) in most draws
    and far below the raw one on average (a noisy count can still pass now and then)."""
    h = np.zeros(len(GRID))
    h[:4] = [3000, 2000, 1000, 500]
    sigma = 1 / math.sqrt(2 * 0.0005)  # about 32 people
    errs_raw, errs = [], []
    for seed in range(40):
        noisy = h + np.asarray(SeededNoise(seed, quiet=True).gaussian(np.zeros(len(GRID), dtype=np.int64), sigma))
        errs_raw.append(removed_share(noisy, GRID, 4))
        errs.append(removed_share(denoise(noisy, GRID, sigma), GRID, 4))
    assert np.median(errs) == 0.0 and np.mean(errs) < 0.25 * np.mean(errs_raw)
    assert np.mean(errs_raw) > 0.2


def test_denoise_keeps_clear_counts_and_is_non_increasing_in_the_tail():
    sigma = 10.0
    noisy = np.array([900, 400, -3, 250, 100, 90, 60, 70, 30, 35, 5, -8, 12, 0, 3, -2, 9, 0, 0, 4, -5, 30, -1.0])
    d = denoise(noisy, GRID, sigma)
    assert (d >= 0).all()
    assert d[0] == 900 and d[1] == 400 and d[2] == 0  # head: kept at >= 1.5 sigma, else zero
    tail = d[list(GRID).index(8) :]
    assert (np.diff(tail) <= 1e-12).all()
    assert tail[-1] == 0  # a lone noisy count among empty cells of many rows is pooled away
    assert np.array_equal(denoise(noisy, GRID, 0.0), np.maximum(noisy, 0))  # sigma 0: clipping only


def test_unit_profile_reports_the_denoised_estimate():
    rng = np.random.default_rng(1)
    rows = np.clip(np.round(np.exp(rng.normal(np.log(3), 1.0, 8000))), 1, 300).astype(int)
    ids = person_column(rows.tolist())
    hist = size_histogram(ids, GRID)
    prof = profile(hist, 0.001, seed=5)
    assert prof.chosen and prof.k in GRID
    d = denoise(prof.people, GRID, prof.sigma)
    assert prof.removed_share == pytest.approx(removed_share(d, GRID, prof.k))
    exact = 1 - keep_mask(ids, prof.k, seed=0).sum() / len(ids)
    assert abs(prof.removed_share - exact) < 0.1
    given = profile(hist, 0.001, seed=5, k=3)
    assert given.k == 3 and not given.chosen
    assert set(given.to_dict()) >= {"k", "people", "removed_share", "sigma"}
    pd.Series(given.to_dict()["people"]).astype(float)  # plain numbers (saved in the model)
