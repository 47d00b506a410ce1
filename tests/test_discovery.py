"""Schema discovery: the non-private draft and DP discovery (utility, accounting, privacy checks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privsample.data.discovery import (COUNT_SHARE, MAX_SHARE, MIN_SHARE, TYPE_SHARE, bucket_edges,
                                       category_threshold, draft_schema, min_category_records, noisy_row_count,
                                       plan_discovery, private_schema)
from privsample.data.schema import DEFAULT_OTHER_LABEL, Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.privacy import Accountant, BudgetExceeded, SeededNoise

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ADULT_RAW = DATA / "adult_raw.csv"


@pytest.fixture(scope="module")
def adult_raw() -> pd.DataFrame:
    if not ADULT_RAW.exists():
        pytest.skip("shared data not available")
    return pd.read_csv(ADULT_RAW, dtype=str, keep_default_na=False, na_values=["?"])


class RecordingNoise(SeededNoise):
    """Seeded noise that remembers every Gaussian call (input counts, sigma, output)."""

    def __init__(self, seed: int):
        super().__init__(seed, quiet=True)
        self.calls: list[tuple[np.ndarray, float, np.ndarray]] = []

    def gaussian(self, counts, sigma):
        out = super().gaussian(counts, sigma)
        self.calls.append((np.asarray(counts).copy(), sigma, out))
        return out


def _dgauss_tail(sigma: float, t: float) -> float:
    """P[Z > t] for the discrete Gaussian N_Z(0, sigma^2)."""
    k = int(math.ceil(40 * sigma)) + 2
    z = np.arange(-k, k + 1)
    p = np.exp(-(z.astype(float) ** 2) / (2 * sigma * sigma))
    p /= p.sum()
    return float(p[z > t].sum())


# -- draft --------------------------------------------------------------------------------------
def test_draft_adult(adult_raw):
    s = draft_schema(adult_raw)
    assert s.provenance == "draft-nonprivate"
    assert any("NON-PRIVATE" in n and "review" in n.lower() for n in s.notes)
    for name in ("age", "fnlwgt", "capital-gain", "capital-loss", "hours-per-week"):
        assert isinstance(s[name], Numeric), name
        assert s[name].integer
    age = s["age"]
    assert (age.lower, age.upper, age.bins) == (17.0, 90.0, 16)
    for name in ("workclass", "education", "occupation", "sex", "native-country", "education-num"):
        assert isinstance(s[name], Categorical), name
    wc = s["workclass"]
    assert wc.nullable and "Private" in wc.categories and len(wc.categories) == 8
    assert not s["sex"].nullable and s["sex"].categories == ("Female", "Male")
    # education-num has 16 distinct numbers (<= 20): categorical, sorted numerically
    assert s["education-num"].categories == tuple(str(i) for i in range(1, 17))


def test_draft_rules_small():
    df = pd.DataFrame({
        "x": [str(v / 2) for v in range(30)] + [None],  # numeric, non-integral, nullable
        "k": [str(v) for v in range(3, 33)] + [pd.NA],  # integers 3..32 -> bins = min(16, 30)
        "small": ["10", "9", "100"] * 10 + [np.nan],  # few distinct numbers -> categorical sorted numerically
        "many": [f"v{i}" for i in range(31)],  # more than max_categories -> truncated + other
    }, dtype=object)
    s = draft_schema(df, max_categories=5, bins=8)
    assert isinstance(s["x"], Numeric) and not s["x"].integer and s["x"].nullable
    assert (s["x"].lower, s["x"].upper, s["x"].bins) == (0.0, 14.5, 8)
    assert s["k"].integer and (s["k"].lower, s["k"].upper, s["k"].bins) == (3.0, 32.0, 8)
    assert s["small"].categories == ("9", "10", "100") and s["small"].nullable
    assert len(s["many"].categories) == 5 and s["many"].other == DEFAULT_OTHER_LABEL
    s2 = draft_schema(pd.DataFrame({"k": [str(v) for v in range(21, 45)]}), bins=64)
    assert s2["k"].bins == 24


def test_draft_empty_table():
    with pytest.raises(InputError):
        draft_schema(pd.DataFrame({"a": pd.Series([], dtype=str)}))
    with pytest.raises(InputError):
        draft_schema(pd.DataFrame())


# -- private discovery: utility and accounting ---------------------------------------------------
def test_private_adult_large_rho(adult_raw):
    acc = Accountant(100.0, delta_slack=1e-5)
    rho, delta = 30.0, 1e-6
    s = private_schema(adult_raw, acc, SeededNoise(7, quiet=True), rho=rho, delta=delta)
    assert s.provenance == "private" and s.names == list(adult_raw.columns)
    # budget: exactly rho, at most delta, and the schema carries the entries
    assert acc.spent <= rho and acc.spent == pytest.approx(rho, rel=1e-12)
    assert 0 < acc.delta_spent <= delta
    entries = s.ledger["entries"]
    assert len(entries) == len(acc.ledger)
    assert math.fsum(e["rho"] for e in entries) == pytest.approx(rho, rel=1e-12)
    assert Accountant.from_dict(s.ledger).spent == pytest.approx(rho, rel=1e-12)
    # every category with >= 20 records is found
    for name in ("workclass", "education", "occupation", "marital-status", "race", "sex", "native-country"):
        col = s[name]
        assert isinstance(col, Categorical) and col.other == DEFAULT_OTHER_LABEL, name
        vc = adult_raw[name].value_counts()
        assert set(vc[vc >= 20].index) <= set(col.categories), name
        assert set(col.categories) <= set(vc.index), name
    assert s["workclass"].nullable and s["occupation"].nullable and not s["sex"].nullable
    age = s["age"]
    assert isinstance(age, Numeric) and age.integer and not age.nullable
    assert 16 <= age.lower <= 17 and 90 <= age.upper <= 127
    cg = s["capital-gain"]
    assert isinstance(cg, Numeric) and cg.lower == 0 and cg.upper >= 99999
    # the schema is usable
    Schema.from_dict(s.to_dict())
    assert all(n >= 1 for n in s.shape)


def test_private_tiny_rho_still_valid(adult_raw):
    acc = Accountant(1.0, delta_slack=1e-6)
    s = private_schema(adult_raw.head(500), acc, SeededNoise(3, quiet=True), rho=1e-8, delta=1e-9)
    assert s.names == list(adult_raw.columns)
    assert acc.spent == pytest.approx(1e-8, rel=1e-12) and acc.spent <= 1e-8 and acc.delta_spent <= 1e-9
    Schema.from_dict(s.to_dict())
    assert all(n >= 1 for n in s.shape)
    for c in s.columns:
        if isinstance(c, Categorical):
            assert c.other is not None


def test_private_empty_table_and_refusals():
    df = pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=object)})
    acc = Accountant(1.0, delta_slack=1e-6)
    s = private_schema(df, acc, SeededNoise(0, quiet=True), rho=0.5, delta=1e-7)  # n = 0 is not public
    assert s.names == ["a", "b"] and acc.spent == pytest.approx(0.5)
    # not enough delta slack: refused before anything is spent
    acc2 = Accountant(1.0)
    with pytest.raises(BudgetExceeded):
        private_schema(df, acc2, SeededNoise(0, quiet=True), rho=0.5, delta=1e-7)
    assert acc2.spent == 0 and acc2.ledger == []
    with pytest.raises(InputError):
        private_schema(df, acc, SeededNoise(0, quiet=True), rho=0.1, delta=0.0)


def test_private_numeric_bounds_and_types():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 250.0, size=4000)
    df = pd.DataFrame({"f": [f"{v:.3f}" for v in x],
                       "i": [str(int(v)) for v in rng.integers(-40, 1000, size=4000)],
                       "c": rng.choice(["red", "green", "blue"], size=4000).astype(object)})
    df.loc[:99, "i"] = None
    s = private_schema(df, Accountant(100.0, delta_slack=1e-5), SeededNoise(11, quiet=True), rho=30.0, delta=1e-6)
    f, i = s["f"], s["i"]
    assert isinstance(f, Numeric) and not f.integer and not f.nullable
    assert -4.0 <= f.lower <= -2.5 and 250.0 <= f.upper <= 256.0
    assert isinstance(i, Numeric) and i.integer and i.nullable
    assert -64 <= i.lower <= -40 and 999 <= i.upper <= 1023
    assert i.bins == 16
    assert s["c"].categories == ("blue", "green", "red")
    assert set(bucket_edges(True)) >= {0.0, 1.0, -1.0, 2.0 ** 63}


# -- private discovery: privacy checks that can fail ---------------------------------------------
def test_new_category_released_with_probability_at_most_delta_col():
    """Neighbours D and D + {new value}: the new value must appear with probability <= delta/m.

    With tau = 1 (no threshold) it would appear ~40% of the time; without the "+1" or with delta
    instead of delta/m the rate would match the exact tail of a different threshold (checked too).
    """
    m, delta = 2, 0.2
    rho = m * 1.0 / 6.0  # per column about 1/6 (after the row count), most of it for the categories
    base = {"c": ["a"] * 30 + ["b"] * 30, "d": ["x"] * 60}
    d_plus = pd.DataFrame({"c": base["c"] + ["zzz"], "d": base["d"] + ["x"]}, dtype=object)
    runs = 2000
    noise = SeededNoise(12345, quiet=True)
    released = 0
    sigma = tau = None
    for _ in range(runs):
        acc = Accountant(rho, delta_slack=delta)
        s = private_schema(d_plus, acc, noise, rho=rho, delta=delta)
        released += "zzz" in s["c"].categories
        assert set(s["c"].categories) <= {"a", "b", "zzz"}
    entry = next(e for e in acc.ledger if e.label.endswith("c: category counts"))
    sigma, tau = entry.noise_scale, entry.details["threshold"]
    assert sigma == pytest.approx(1.0 / math.sqrt(2.0 * entry.rho)) and 1.8 < sigma < 2.0
    delta_col = delta / m
    assert entry.delta == pytest.approx(delta_col)
    assert tau == pytest.approx(1 + sigma * math.sqrt(2 * math.log(1 / delta_col)))
    rate = released / runs
    assert rate <= delta_col  # the guarantee (a wrong tau such as 1 gives ~0.4)
    exact = _dgauss_tail(sigma, tau - 1)  # P[1 + Z > tau]
    assert exact <= delta_col
    assert abs(rate - exact) <= 4 * math.sqrt(exact * (1 - exact) / runs) + 1e-3


def test_type_count_noise_matches_spent_rho():
    """The noise added to the type counts has variance sigma^2 with sigma = 1/sqrt(2 rho_spent)."""
    df = pd.DataFrame({"v": ["1", "2", "2.5", "x", None, "7"] * 5}, dtype=object)
    true = np.array([5, 15, 5, 5])  # missing, integral, non-integral, non-numeric
    rho = 1.0 / (2 * 25.0) / (TYPE_SHARE * (1 - COUNT_SHARE))  # 30 records: the type counts get TYPE_SHARE
    noise = RecordingNoise(2024)
    samples = []
    for _ in range(400):
        acc = Accountant(rho, delta_slack=0.01)
        noise.calls.clear()
        private_schema(df, acc, noise, rho=rho, delta=0.01)
        counts, sigma_used, out = noise.calls[1]  # calls[0] is the row count
        entry = acc.ledger[2]  # row count, plan, type counts
        assert entry.label.endswith("type counts")
        assert entry.rho == pytest.approx(TYPE_SHARE * (1 - COUNT_SHARE) * rho)
        sigma_spent = 1.0 / math.sqrt(2.0 * entry.rho)
        assert sigma_used == pytest.approx(sigma_spent) and entry.noise_scale == pytest.approx(sigma_spent)
        np.testing.assert_array_equal(counts, true)
        samples.append(out - counts)
    noise_vals = np.concatenate(samples).astype(float)
    assert abs(noise_vals.mean()) < 0.6
    assert noise_vals.var() == pytest.approx(25.0, rel=0.15)


def test_category_threshold_formula():
    assert category_threshold(1.0, math.exp(-2)) == pytest.approx(3.0)
    # subgaussian tail bound holds for the exact discrete Gaussian
    for sigma in (0.5, 1.0, 3.0):
        for d in (0.1, 1e-3):
            assert _dgauss_tail(sigma, category_threshold(sigma, d) - 1) <= d


def test_category_cap_breaks_ties_by_value_not_data_order():
    """Equal noisy counts: the cap keeps the smallest values, whatever order the records came in."""
    from privsample.privacy.noise import NoiseSource

    class NoNoise(NoiseSource):
        def gaussian(self, counts, sigma):
            return np.asarray(counts, dtype=np.int64)

        laplace = gaussian

        def exponential(self, scores, epsilon, sensitivity):
            return 0

    kept = []
    for order in (["z", "y", "x", "w"], ["w", "x", "y", "z"]):
        df = pd.DataFrame({"c": [v for v in order for _ in range(400)]})
        acc = Accountant(10.0, delta_slack=1e-3)
        s = private_schema(df, acc, NoNoise(), rho=10.0, delta=1e-3, max_categories=2)
        kept.append(s["c"].categories)
    assert kept[0] == kept[1] == ("w", "x")


def test_schema_file_must_state_provenance(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("columns:\n- {name: a, type: categorical, categories: [x]}\n")
    with pytest.raises(InputError, match="provenance"):
        Schema.load(p)
    p.write_text("provenance: reviewed\ncolumns:\n- {name: a, type: categorical, categories: [x]}\n")
    with pytest.raises(InputError, match="provenance"):
        Schema.load(p)
