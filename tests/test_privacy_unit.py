"""The privacy unit (``privsample.privacy.unit``): person-level calibration of every mechanism of ``synth``
(discovery, MST, AIM, PPSyn-DP), the accountant's guard, the person-level category threshold and the ledger."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privsample.data.discovery import private_schema
from privsample.data.discovery_plan import category_threshold, discovery_forecast, plan_discovery
from privsample.data.median_tree import tree_levels
from privsample.marginals import NumpyEngine
from privsample.privacy import (
    ROW,
    Accountant,
    PrivacyUnit,
    SeededNoise,
    epsilon_for_rho,
    exponential_select,
    gaussian_measure,
    sigma_for_rho,
)
from privsample.privacy.ledger import Ledger
from privsample.privacy.sparse_histogram import (
    discrete_gaussian_tail,
    person_stability_delta,
    person_stability_threshold,
    stability_threshold,
)
from privsample.synth import pgm
from privsample.synth.aim import AIM
from privsample.synth.mst import MST, budget_split
from privsample.synth.ppsyn import PPSyn
from privsample.synth.ppsyn_steps import Spender

K = 5
PERSON = PrivacyUnit("pid", K)


def quiet(seed: int = 0) -> SeededNoise:
    return SeededNoise(seed, quiet=True)


def no_progress(*args, **kwargs) -> None:
    return None


def chain_engine(n: int = 2000, seed: int = 0) -> NumpyEngine:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = (b * 2 + rng.integers(0, 2, n)) % 5
    d = rng.integers(0, 6, n)
    domain = pgm.Domain(["a", "b", "c", "d"], [3, 4, 5, 6])
    return NumpyEngine({"a": a, "b": b, "c": c, "d": d}, domain)


def wide_engine(cells: int = 2500, n: int = 3000, seed: int = 1) -> NumpyEngine:
    """Four columns of many cells: one measurement draws thousands of noise values."""
    rng = np.random.default_rng(seed)
    names = ["p", "q", "r", "s"]
    return NumpyEngine({c: rng.integers(0, cells, n) for c in names}, pgm.Domain(names, [cells] * 4))


def small_table(n: int = 3000, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "grade": rng.choice(list("ABCDEFG"), n, p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.05, 0.05]),
            "age": rng.integers(17, 91, n),
            "code": rng.choice([101, 205, 310, 999], n),
            "x": rng.normal(size=n),
            "id": [f"X{i:06d}" for i in rng.permutation(n)],
        }
    )


# -- the unit ---------------------------------------------------------------------------------------------------------
def test_unit_states_the_neighbouring_relation_and_scales_sensitivity():
    assert ROW == PrivacyUnit() and ROW.is_row and ROW.neighbouring == "add/remove one record"
    assert PERSON.neighbouring == "add/remove one person (≤ 5 rows of pid)"
    assert ROW.sensitivity(0.5) == 0.5 and PERSON.sensitivity(0.5) == 2.5 and PERSON.sensitivity(3.0) == 15.0
    for bad in (dict(column="pid", max_rows=0), dict(column=None, max_rows=2), dict(column="", max_rows=2)):
        with pytest.raises(ValueError):
            PrivacyUnit(**bad)
    assert Accountant(1.0).unit == ROW and Accountant(1.0).neighbouring == "add/remove one record"
    assert Accountant(1.0, unit=PERSON).neighbouring == PERSON.neighbouring


# -- k = 1: nothing changes -----------------------------------------------------------------------------------------
# Values of the planning functions before the privacy unit existed (same arguments, record-level).
BEFORE = {
    "category_threshold": [5.0, 18.0, 131.0, 12875797.157736083, 6.053838262973949],
    "forecast": {
        "row_count": 20000,
        "share": 0.05,
        "rho": 0.01,
        "min_category_records": 218,
        "sigma_categories": 29.617443887954618,
        "sigma_grid": 44.42616583193193,
        "numeric_records": 155.49158041176176,
        "code_records": 326,
        "sigma_grid_integer": 62.828086243754335,
    },
    "budget_split": {
        "rho_1way": 0.014285714285714285,
        "rho_select": 0.016666666666666666,
        "rho_2way": 0.016666666666666666,
        "sigma_1way": 5.916079783099616,
        "sigma_2way": 5.477225575051661,
    },
    "aim": (112, 14.40164599646191, 0.00026785714285714276),
    "tree_levels": [4, 1],
}


def test_record_level_planning_is_unchanged():
    args = [(0.7, 1e-9), (3.0, 1e-8), (25.0, 1e-7), (2e6, 1e-9), (5.0, 0.6)]
    assert [category_threshold(s, d) for s, d in args] == BEFORE["category_threshold"]
    assert [category_threshold(s, d, 1) for s, d in args] == BEFORE["category_threshold"]
    assert discovery_forecast(0.2, 1e-8, 20000, 12) == BEFORE["forecast"]
    assert budget_split(0.3, 7) == BEFORE["budget_split"] == budget_split(0.3, 7, 1)
    assert AIM().rounds_and_sigma(0.3, 7) == BEFORE["aim"] == AIM().rounds_and_sigma(0.3, 7, 1)
    assert [tree_levels(0.01, 30000.0, 4), tree_levels(0.001, 3000.0, 4)] == BEFORE["tree_levels"]


def _entries(acc: Accountant) -> list[dict]:
    return [e.to_dict() for e in acc.ledger]


def test_one_row_per_person_gives_the_record_level_outputs():
    """A person-level unit with k = 1 draws exactly what the record-level run draws (same seed): discovery, then
    MST, AIM and PPSyn-DP; the ledgers differ only in the neighbouring relation they state."""
    df = small_table(1500)
    one = PrivacyUnit("pid", 1)
    outs = []
    for unit in (ROW, one):
        acc = Accountant.from_epsilon_delta(4.0, 1e-6, delta_slack=1e-7, unit=unit)
        schema = private_schema(df, acc, quiet(), rho=acc.rho_total * 0.3, delta=1e-7, share=None)
        fits = []
        for synth in (MST(iters=60), AIM(rounds=4, iters=40), PPSyn(rounds=4, iters=40)):
            a = Accountant.from_epsilon_delta(2.0, 1e-9, unit=unit)
            model = synth.fit(chain_engine(), a, quiet())
            codes = model.sample(200, rng=np.random.default_rng(0))
            fits.append(({c: v.tolist() for c, v in codes.items()}, _entries(a)))
        outs.append((repr(schema.columns), schema.discovery, _entries(acc), fits))
    assert outs[0] == outs[1]


# -- the Gaussian scale at person level, through the real code paths --------------------------------------------------
def _sd(noisy, true) -> float:
    return float(np.std(np.asarray(noisy, float).ravel() - np.asarray(true, float).ravel()))


def test_gaussian_scale_is_k_times_the_record_level_one():
    """Seeded measurements with a unit of k = 5 (many cells each): the noise sd is k D / sqrt(2 rho), not
    D / sqrt(2 rho), in ``gaussian_measure``, MST's and AIM's one-way measurements and PPSyn's Spender."""
    rho = 0.02
    person, row = K / math.sqrt(2 * rho), 1 / math.sqrt(2 * rho)
    eng = wide_engine()
    true = eng.marginals([(c,) for c in eng.domain.attributes])

    acc = Accountant(10.0, unit=PERSON)
    y, s = gaussian_measure(acc, quiet(1), np.zeros(20000, dtype=np.int64), rho, "direct", sensitivity=2.0)
    assert _sd(y, 0) == pytest.approx(2 * person, rel=0.03)  # the noise drawn, then the scale reported
    assert s == pytest.approx(2 * person, rel=1e-12)

    acc = Accountant(10.0, unit=PERSON)
    one_way, _ = MST._measure_one_way(eng, acc, quiet(2), no_progress, rho, list(eng.domain.attributes))
    sds = [_sd(y, true[(c,)]) for c, (y, _) in one_way.items()]
    assert np.mean(sds) == pytest.approx(person, rel=0.03) and np.mean(sds) > 3 * row
    assert all(s == pytest.approx(person, rel=1e-12) for _, s in one_way.values())
    assert acc.spent == pytest.approx(4 * rho)

    acc = Accountant(10.0, unit=PERSON)
    _, sigma, _ = AIM(rounds=20).rounds_and_sigma(1.0, 4, K)
    candidates = [(c,) for c in eng.domain.attributes]
    _, identity = AIM._measure_one_way(eng, acc, quiet(3), no_progress, candidates, sigma)
    sds = [_sd(y, true[c]) for (y, _), c in zip(identity, candidates)]
    assert np.mean(sds) == pytest.approx(sigma, rel=0.03) and sigma == pytest.approx(K * math.sqrt(10.0 / 0.9))
    assert acc.spent == pytest.approx(4 * 0.9 / 20)  # each costs 1/(2 (sigma/k)^2): the record-level rho of AIM

    acc = Accountant(10.0, unit=PERSON)
    y, s = Spender(acc, quiet(4), unsafe=False).gaussian(true[("p",)], rho, "init/p", measured="p")
    assert _sd(y, true[("p",)]) == pytest.approx(person, rel=0.06) and s == pytest.approx(person)


def test_exponential_mechanism_is_calibrated_to_k():
    """Two candidates whose scores differ by D: the exponential mechanism at epsilon picks the better one with odds
    exp(epsilon D / (2 k D)) = exp(epsilon / (2 k)) under a unit of k, exp(epsilon / 2) under one record."""
    rho, n = 2.0, 20000
    eps = epsilon_for_rho(rho)
    acc = Accountant(n * rho + 1, unit=PERSON)
    noise = quiet(5)
    picks = sum(exponential_select(acc, noise, np.array([0.0, 3.0]), rho, "pick", sensitivity=3.0) for _ in range(n))
    odds_person, odds_row = math.exp(eps / (2 * K)), math.exp(eps / 2)
    p_person, p_row = odds_person / (1 + odds_person), odds_row / (1 + odds_row)
    assert abs(picks / n - p_person) < 4 * math.sqrt(p_person * (1 - p_person) / n)
    assert p_row - picks / n > 0.2
    assert acc.ledger[0].noise_scale == pytest.approx(2 * K * 3.0 / eps)


# -- the accountant's guard -----------------------------------------------------------------------------------------
def test_guard_refuses_a_spend_not_calibrated_to_the_unit():
    rho = 0.01
    acc = Accountant(1.0, delta_slack=1e-6, unit=PERSON)
    row_sigma, person_sigma = sigma_for_rho(rho), sigma_for_rho(rho, float(K))
    with pytest.raises(ValueError, match="not calibrated"):
        acc.spend(rho, "m", mechanism="discrete Gaussian", noise_scale=row_sigma, sensitivity=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        acc.spend(rho, "m", mechanism="discrete Gaussian", noise_scale=person_sigma)
    with pytest.raises(ValueError, match="noise scale"):
        acc.spend(rho, "m", mechanism="discrete Gaussian", sensitivity=1.0)
    eps = epsilon_for_rho(rho)
    with pytest.raises(ValueError, match="not calibrated"):
        acc.spend(rho, "s", mechanism="exponential", noise_scale=2.0 * 0.5 / eps, sensitivity=0.5)
    tau_row = category_threshold(person_sigma, 1e-9)
    with pytest.raises(ValueError, match="threshold"):
        acc.spend(rho, "t", delta=1e-9, mechanism="thresholded", noise_scale=person_sigma, sensitivity=1.0,
                  threshold=tau_row)  # fmt: skip
    assert acc.spent == 0 and not acc.ledger  # nothing refused was charged
    acc.spend(rho, "m", mechanism="discrete Gaussian", noise_scale=person_sigma, sensitivity=1.0)
    acc.spend(rho, "s", mechanism="exponential", noise_scale=2.0 * K * 0.5 / eps, sensitivity=0.5)
    acc.spend(rho, "t", delta=1e-9, mechanism="thresholded", noise_scale=person_sigma, sensitivity=1.0,
              threshold=category_threshold(person_sigma, 1e-9, K))  # fmt: skip
    acc.spend(0.0, "plan", mechanism="post-processing")
    acc.spend(rho, "unused", mechanism="none")
    # the record-level accountant is unchanged: it does not check calibration
    Accountant(1.0).spend(rho, "m", mechanism="discrete Gaussian", noise_scale=row_sigma / 10)


# -- the person-level category threshold ----------------------------------------------------------------------------
def _partitions(n: int, largest: int | None = None):
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for c in range(min(n, largest), 0, -1):
        for rest in _partitions(n - c, c):
            yield (c,) + rest


@pytest.mark.parametrize("sigma,delta,k", [(3.0, 1e-3, 5), (10.0, 1e-9, 2), (40.0, 1e-7, 12), (1.5, 0.05, 7)])
def test_person_threshold_is_the_smallest_with_the_worst_person_below_delta(sigma, delta, k):
    tau = person_stability_threshold(sigma, delta, k)
    t = int(tau)

    def worst(threshold: int) -> float:  # brute force over every partition of k
        h = {c: discrete_gaussian_tail(sigma, threshold + 1 - c) for c in range(1, k + 1)}
        return max(sum(h[c] for c in p) for p in _partitions(k))

    assert worst(t) <= delta * (1 + 1e-12) and worst(t - 1) > delta  # (k copies of delta/k: float rounding)
    for u in range(t - 3, t + 6):  # the worst case is one value held k times or k values held once (or, where a
        # value held k times passes with probability >= 1/2, the exact maximum over the partitions of k)
        assert person_stability_delta(sigma, u, k) == pytest.approx(min(1.0, worst(u)), rel=1e-12)
    assert category_threshold(sigma, delta, k) <= tau  # (the sub-Gaussian bound, where lower, is also valid)
    assert person_stability_delta(sigma, category_threshold(sigma, delta, k), k) <= delta
    # the record-level threshold is not enough for a person with k rows
    assert person_stability_delta(sigma, category_threshold(sigma, delta), k) > delta


def test_person_threshold_at_one_row_is_the_record_level_one():
    for sigma, delta in [(0.7, 1e-9), (3.0, 1e-8), (25.0, 1e-7), (400.0, 1e-12)]:
        assert person_stability_threshold(sigma, delta, 1) == stability_threshold(sigma, delta)
        assert category_threshold(sigma, delta, 1) == category_threshold(sigma, delta)
        assert person_stability_delta(sigma, 7.5, 1) == discrete_gaussian_tail(sigma, 7)


def test_a_value_held_by_one_person_passes_with_probability_at_most_delta():
    """Monte Carlo with the discrete Gaussian sampler: one value held k times, or k values held once each."""
    sigma, delta, k, n = 3.0, 0.01, K, 400_000
    tau = category_threshold(sigma, delta, k)
    z = SeededNoise(6, quiet=True).gaussian(np.zeros((n, k), dtype=np.int64), sigma)
    one_value = float(np.mean(k + z[:, 0] > tau))
    k_values = float(np.mean((1 + z > tau).any(axis=1)))
    sd = math.sqrt(delta / n)
    assert one_value <= delta + 4 * sd and k_values <= delta + 4 * sd
    assert float(np.mean(k + z[:, 0] > category_threshold(sigma, delta))) > 5 * delta  # record level: far above


def test_discovery_releases_categories_at_the_person_level_threshold():
    df = small_table()
    acc = Accountant.from_epsilon_delta(8.0, 1e-6, delta_slack=1e-7, unit=PERSON)
    schema = private_schema(df, acc, quiet(), rho=acc.rho_total * 0.5, delta=1e-7, share=1.0)
    delta_col = 1e-7 / len(df.columns)
    thresholded = [e for e in acc.ledger if "threshold" in e.details]
    assert thresholded
    for e in thresholded:
        assert e.noise_scale == sigma_for_rho(e.rho, float(K))
        assert e.details["threshold"] == category_threshold(e.noise_scale, e.delta, K)
        assert person_stability_delta(e.noise_scale, e.details["threshold"], K) <= delta_col * (1 + 1e-9)
    gaussian = [e for e in acc.ledger if e.mechanism == "discrete Gaussian"]
    assert gaussian and all(e.noise_scale == pytest.approx(K / math.sqrt(2 * e.rho)) for e in gaussian)
    assert "add/remove one person (≤ 5 rows of pid)" in schema.notes[0]
    assert schema.ledger["summary"]["unit"] == {"column": "pid", "max_rows": K}
    assert Accountant.from_dict(schema.ledger).unit == PERSON  # the guard accepts every entry again


def test_planning_uses_the_person_level_sigma():
    row = discovery_forecast(0.2, 1e-8, 20000, 12, share=0.3)
    person = discovery_forecast(0.2, 1e-8, 20000, 12, max_rows=K, share=0.3)
    assert person["sigma_categories"] == pytest.approx(K * row["sigma_categories"], rel=1e-9)
    assert person["min_category_records"] > 3 * row["min_category_records"]
    planned = plan_discovery(0.2, 1e-8, 20000.0, 12, count_rho=0.002, max_rows=K)[1]
    assert planned["share"] > plan_discovery(0.2, 1e-8, 20000.0, 12, count_rho=0.002)[1]["share"]
    split = budget_split(0.3, 7, K)
    assert split["sigma_2way"] == pytest.approx(K * BEFORE["budget_split"]["sigma_2way"])


# -- the ledger -----------------------------------------------------------------------------------------------------
def test_a_unit_ledger_round_trips_and_an_old_ledger_loads_as_row():
    acc = Accountant.from_epsilon_delta(1.0, 1e-9, unit=PERSON)
    gaussian_measure(acc, quiet(), np.array([5, 7]), 0.001, "1-way/a", measured="a")
    exponential_select(acc, quiet(), np.array([1.0, 2.0]), 0.001, "select/1")
    saved = json.loads(json.dumps(acc.to_dict()))
    assert saved["summary"]["unit"] == {"column": "pid", "max_rows": K}
    back = Accountant.from_dict(saved)
    assert back.unit == PERSON and back.neighbouring == PERSON.neighbouring
    assert back.to_dict() == acc.to_dict() and back.spent == acc.spent
    assert "neighbours: add/remove one person (≤ 5 rows of pid)" in str(Ledger(saved)).splitlines()
    assert "neighbours: add/remove one person" in Ledger(saved)._repr_html_()

    row = Accountant.from_epsilon_delta(1.0, 1e-9)
    gaussian_measure(row, quiet(), np.array([5, 7]), 0.001, "1-way/a", measured="a")
    old = row.to_dict()
    assert "unit" not in old["summary"]  # a record-level ledger is saved as it always was
    for summary in (old["summary"], {k: v for k, v in old["summary"].items() if k != "neighbouring"}):
        loaded = Accountant.from_dict({**old, "summary": summary})
        assert loaded.unit == ROW and loaded.neighbouring == "add/remove one record"


def test_every_synthesizer_spends_exactly_its_budget_at_person_level():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for synth in (MST(iters=60), AIM(rounds=4, iters=40), PPSyn(rounds=4, iters=40),
                      PPSyn(rounds=3, iters=40, schedule="note")):  # fmt: skip
            acc = Accountant.from_epsilon_delta(2.0, 1e-9, unit=PERSON)
            synth.fit(chain_engine(), acc, quiet())
            assert acc.spent == pytest.approx(acc.rho_total, rel=1e-9)
            assert all(e.details.get("sensitivity") is not None for e in acc.ledger if e.rho > 0)


def test_partitions_helper():
    assert sorted(_partitions(4)) == sorted([(4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1)])
    assert len(list(_partitions(8))) == 22 and all(sum(p) == 8 for p in _partitions(8))
    assert list(itertools.islice(_partitions(3), 1)) == [(3,)]
