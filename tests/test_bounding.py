"""Contribution bounding (``privsample.marginals.bounding``): at most k rows per person, chosen at random, so that
removing one person moves no marginal by more than k."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest

from privsample.data.draft import draft_schema
from privsample.data.encoding import release_domain
from privsample.data.schema import Schema
from privsample.marginals.bounding import UNIT_GRID, bound, keep_mask, size_histogram
from privsample.marginals.numpy_engine import NumpyOpener


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.geometric(0.3, size=200)
    units = np.repeat([f"p{i}" for i in range(len(sizes))], sizes)
    n = len(units)
    return pd.DataFrame(
        {
            "person": units,
            "a": rng.choice(["x", "y", "z"], n),
            "b": rng.choice(["u", "v"], n),
            "c": rng.integers(0, 4, n).astype(str),
        }
    )


def test_keep_mask_keeps_at_most_k_rows_of_each_person_and_none_without_a_unit():
    units = ["a"] * 10 + ["b"] * 2 + [None, None] + ["c"]
    for k in (1, 2, 3, 20):
        keep = keep_mask(units, k)
        kept = pd.Series(units)[keep]
        assert kept.isna().sum() == 0
        assert kept.value_counts().to_dict() == {u: min(k, n) for u, n in {"a": 10, "b": 2, "c": 1}.items()}


def test_each_row_of_a_person_is_kept_with_the_same_probability():
    units = ["a"] * 8
    hits = np.zeros(8)
    for _ in range(4000):
        hits += keep_mask(units, 2)
    assert np.allclose(hits / 4000, 2 / 8, atol=0.03)  # uniform: 2 of 8 rows each time


def test_seeded_selection_is_reproducible_and_the_secure_one_varies():
    units = ["a"] * 50
    assert (keep_mask(units, 3, seed=4) == keep_mask(units, 3, seed=4)).all()
    assert len({tuple(np.flatnonzero(keep_mask(units, 3))) for _ in range(10)}) > 1


def test_bound_drops_the_unit_column():
    df = _table()
    out = bound(df, "person", 2, seed=0)
    assert list(out.columns) == ["a", "b", "c"]
    assert len(out) == sum(min(2, n) for n in df["person"].value_counts())


def test_size_histogram_counts_people_on_the_public_grid():
    units = ["a"] * 10 + ["b"] * 2 + ["c", "d"] + [None]
    h = size_histogram(units)
    assert len(h) == len(UNIT_GRID) and h.sum() == 4
    assert h[UNIT_GRID.index(1)] == 2 and h[UNIT_GRID.index(2)] == 1 and h[UNIT_GRID.index(10)] == 1


def _marginals(frame: pd.DataFrame, schema: Schema, k: int, seed: int) -> dict:
    opener = NumpyOpener(None, frame=frame, csv={}, reading=_null(), coding=_null())
    opener.bound("person", k, seed)
    release = release_domain(schema, False)
    eng = opener.engine(release)
    cols = list(release.domain().attributes)
    cliques = [c for r in (1, 2, 3) for c in itertools.combinations(cols, r)]
    return eng.marginals(cliques)


def _null():
    from contextlib import nullcontext

    return nullcontext()


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_person_with_ten_times_k_rows_moves_no_marginal_by_more_than_k(k):
    df = _table(1)
    heavy = pd.DataFrame({"person": "heavy", "a": "x", "b": "u", "c": "1"}, index=range(10 * k))
    heavy.loc[::2, "a"] = "y"  # spread over cells too
    with_p = pd.concat([df, heavy], ignore_index=True)
    schema = dataclasses.replace(draft_schema(df.drop(columns=["person"])), provenance="user")
    # the same keys for everyone else: the seeded selection of a person depends on their rows' positions, so the
    # heavy person is appended last and the others keep theirs
    a = _marginals(with_p, schema, k, seed=3)
    b = _marginals(df, schema, k, seed=3)
    for clique in a:
        diff = np.abs(a[clique].astype(np.int64) - b[clique].astype(np.int64))
        assert diff.sum() <= k, (clique, diff.sum())
        assert np.sqrt((diff**2).sum()) <= k


def test_one_person_costs_at_most_rho_through_bounding_and_the_measurement():
    """D and D′ (D and one person with 10 k rows, all in one cell): through contribution bounding and MST's one-way
    measurement under a unit of k, the noisy count of that cell moves by k on average while its noise sd is
    k / sqrt(2 rho), so the privacy loss shift^2 / (2 sd^2) is rho. Without the factor k in the noise it would be
    k^2 rho: this test fails if the sensitivity factor, the noise scale or the bound were wrong."""
    from privsample.privacy.accountant import Accountant
    from privsample.privacy.noise import SeededNoise
    from privsample.privacy.unit import PrivacyUnit
    from privsample.progress import no_progress
    from privsample.synth.mst import MST

    k, rho, reps = 4, 0.05, 300
    df = _table(2)
    heavy = pd.DataFrame({"person": "heavy", "a": "x", "b": "u", "c": "1"}, index=range(10 * k))
    schema = dataclasses.replace(draft_schema(df.drop(columns=["person"])), provenance="user")
    release = release_domain(schema, False)
    x = list(release.domain().attributes).index("a")
    cell = list(release.columns[x].categories).index("x")

    def noisy_cell(frame: pd.DataFrame, rep: int) -> float:
        opener = NumpyOpener(None, frame=frame, csv={}, reading=_null(), coding=_null())
        opener.bound("person", k, seed=11)  # the same selection for everyone else on D and D′
        acc = Accountant(10.0, unit=PrivacyUnit("person", k))
        eng = opener.engine(release)
        one_way, _ = MST._measure_one_way(
            eng, acc, SeededNoise(rep, quiet=True), no_progress, rho, list(eng.domain.attributes)
        )
        return float(one_way["a"][0][cell])

    d = np.array([noisy_cell(df, r) for r in range(reps)])
    dp = np.array([noisy_cell(pd.concat([df, heavy], ignore_index=True), r) for r in range(reps)])
    shift, sd = float(np.mean(dp - d)), float(np.std(d))  # the same noise seeds: dp - d is the exact shift
    assert shift == pytest.approx(k)
    assert sd == pytest.approx(k / np.sqrt(2 * rho), rel=0.1)
    assert shift**2 / (2 * sd**2) <= 1.25 * rho
