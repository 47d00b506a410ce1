"""Schema discovery: the non-private draft and DP discovery (utility, accounting, privacy checks)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from privsample.data.discovery import draft_schema, private_schema
from privsample.data.discovery_plan import (
    COUNT_SHARE,
    MAX_SHARE,
    SMALL_FRACTION,
    SMALL_MAX_SHARE,
    MIN_SHARE,
    TYPE_SHARE,
    category_threshold,
    min_category_records,
    noisy_row_count,
    plan_discovery,
)
from privsample.data.schema import DEFAULT_OTHER_LABEL, Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.privacy import Accountant, BudgetExceeded, SeededNoise
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def adult_raw() -> pd.DataFrame:
    return pd.read_csv(shared_file("adult_raw.csv"), dtype=str, keep_default_na=False, na_values=["?"])


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
    assert (age.lower, age.upper, age.bins, age.edges) == (17.0, 90.0, 16, None)  # no age holds 5%
    hours = s["hours-per-week"].bin_edges.tolist()
    assert hours[hours.index(39.5) + 1] == 40.5  # 40 hours (46% of the records): a bin of its own
    assert s["capital-gain"].bin_edges[1] == 0.5  # and a capital gain of 0
    for name in ("workclass", "education", "occupation", "sex", "native-country", "education-num"):
        assert isinstance(s[name], Categorical), name
    wc = s["workclass"]
    assert wc.nullable and "Private" in wc.categories and len(wc.categories) == 8
    assert not s["sex"].nullable and s["sex"].categories == ("Female", "Male")
    # education-num has 16 distinct numbers (<= 20): categorical, sorted numerically
    assert s["education-num"].categories == tuple(str(i) for i in range(1, 17))


def test_draft_rules_small():
    df = pd.DataFrame(
        {
            "x": [str(v / 2) for v in range(30)] + [None],  # numeric, non-integral, nullable
            "k": [str(v) for v in range(3, 33)] + [pd.NA],  # integers 3..32 -> bins = min(16, 30)
            "small": ["10", "9", "100"] * 10 + [np.nan],  # few distinct numbers -> categorical sorted numerically
            "many": [f"v{i}" for i in range(31)],  # more than max_categories -> truncated + other
        },
        dtype=object,
    )
    s = draft_schema(df, max_categories=5, bins=8)
    assert isinstance(s["x"], Numeric) and not s["x"].integer and s["x"].nullable
    assert (s["x"].lower, s["x"].upper, s["x"].bins) == (0.0, 14.5, 8)
    assert s["k"].integer and (s["k"].lower, s["k"].upper, s["k"].bins) == (3.0, 32.0, 8)
    assert s["small"].categories == ("9", "10", "100") and s["small"].nullable
    assert len(s["many"].categories) == 5 and s["many"].other == DEFAULT_OTHER_LABEL
    s2 = draft_schema(pd.DataFrame({"k": [str(v) for v in range(21, 45)]}), bins=64)
    assert s2["k"].bins == 24


def _hours(n: int = 5000, seed: int = 0) -> pd.Series:
    """Hours a week: 47% at 40, the rest uniform on 1..99, a few missing (as text, like a CSV read)."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.47, 40, rng.integers(1, 100, size=n))
    s = pd.Series([str(v) for v in x], dtype=object)
    s[rng.random(n) < 0.02] = None
    return s


def test_draft_peak_gets_a_bin_of_its_own():
    s = draft_schema(pd.DataFrame({"hours": _hours()}))
    col = s["hours"]
    assert isinstance(col, Numeric) and col.integer and col.nullable and (col.lower, col.upper) == (1.0, 99.0)
    e = col.bin_edges.tolist()
    i = e.index(39.5)
    assert e[i + 1] == 40.5  # the bin [39.5, 40.5) holds 40 and nothing else
    # the rest is today's 16 equal-width bins, the one holding 40 cut in three
    today = Numeric("hours", 1, 99, bins=16, integer=True).bin_edges.tolist()
    assert sorted(set(today) | {39.5, 40.5}) == e and col.bins == 18
    assert any("'hours'" in n and "40" in n and "5%" in n and "sensitive" in n for n in s.notes)
    again = Schema.from_dict({**s.to_dict(), "provenance": "user"})  # what 'schema' writes is read back
    assert again["hours"].bin_edges.tolist() == e
    # a spelling of the same number counts with it: 40 and 40.0 hold 6% together
    mixed = pd.Series([str(v) for v in range(1, 95)] + ["40"] * 3 + ["40.0"] * 3, dtype=object)
    assert 39.5 in draft_schema(pd.DataFrame({"h": mixed}))["h"].bin_edges


def test_draft_peak_round_trip_keeps_its_share():
    from privsample.data.decoding import decode
    from privsample.data.encoding import encode

    df = pd.DataFrame({"hours": _hours()})
    real = float((pd.to_numeric(df["hours"]) == 40).sum() / df["hours"].notna().sum())

    def synthetic_share(schema: Schema) -> float:
        codes = encode(df, schema)["hours"]
        p = np.bincount(codes, minlength=schema["hours"].size) / len(codes)  # the exact 1-way marginal
        rng = np.random.default_rng(1)
        out = decode({"hours": rng.choice(len(p), size=20_000, p=p)}, schema, rng)["hours"]
        return float((out == 40).sum() / out.notna().sum())

    draft = draft_schema(df)
    assert abs(synthetic_share(draft) - real) <= 0.02
    flat = Schema([Numeric("hours", 1, 99, bins=16, integer=True, nullable=True)])  # the draft without the peak
    assert synthetic_share(flat) < real / 3


def test_draft_float_peaks_decode_to_the_value():
    from privsample.data.decoding import decode

    rng = np.random.default_rng(2)
    x = np.concatenate([np.full(300, 2.5), np.full(100, 9.75), rng.uniform(0, 9.5, size=600)])
    s = draft_schema(pd.DataFrame({"x": [repr(float(v)) for v in x]}))
    col = s["x"]
    assert not col.integer and col.upper == np.nextafter(9.75, np.inf)  # room for the bin [9.75, nextafter]
    e = col.bin_edges.tolist()
    assert e[e.index(2.5) + 1] == np.nextafter(2.5, np.inf)
    k = e.index(2.5)
    out = decode({"x": np.full(50, k)}, s, np.random.default_rng(0))["x"]
    assert (out == 2.5).all()


def test_draft_without_peaks_is_unchanged():
    # no value holds 5%: the equal-width bins, as before (no edges, no note)
    flat = pd.DataFrame({"k": [str(v) for v in range(1, 101)] * 3})
    s = draft_schema(flat)
    assert s["k"] == Numeric("k", 1, 100, bins=16, integer=True) and s["k"].edges is None
    assert len(s.notes) == 1
    # unit bins already give every integer its own bin: a peak changes nothing
    unit = pd.DataFrame({"k": [str(v) for v in range(1, 26)] + ["7"] * 20})
    assert draft_schema(unit, bins=32)["k"] == Numeric("k", 1, 25, bins=25, integer=True)


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
    # budget: rho, less the grid part a run of integers does not need (education-num 1..16: one bin per value),
    # at most delta, and the schema carries the entries
    runs = [c["name"] for c in s.discovery["columns"] if c.get("codes")]
    assert "education-num" in runs and s["education-num"].bins == 16
    assert all(s[r].bins == s[r].upper - s[r].lower + 1 <= 48 for r in runs)
    # the grid part each run leaves unspent equals its codes test's with its identifier check's (half each)
    tests = {f"schema: {r}: {what}" for r in runs for what in ("category counts", "distinct values")}
    unspent = math.fsum(e.rho for e in acc.ledger if e.label in tests)
    assert acc.spent <= rho and acc.spent + unspent == pytest.approx(rho, rel=1e-9)
    assert 0 < acc.delta_spent <= delta
    entries = s.ledger["entries"]
    assert len(entries) == len(acc.ledger)
    assert math.fsum(e["rho"] for e in entries) == pytest.approx(acc.spent, rel=1e-12)
    assert Accountant.from_dict(s.ledger).spent == pytest.approx(acc.spent, rel=1e-12)
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
    # bounds are private quantiles (0.5% / 99.5% at this size): the extremes are clipped by design
    assert 16 <= age.lower <= 20 and 70 <= age.upper <= 127
    cg = s["capital-gain"]
    assert isinstance(cg, Numeric) and cg.lower == 0 and cg.upper > 1000
    assert cg.bin_edges[1] <= 0.5  # a point bin for 0, which decodes to exactly 0
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
    df = pd.DataFrame(
        {
            "f": [f"{v:.3f}" for v in x],
            "i": [str(int(v)) for v in rng.integers(-40, 1000, size=4000)],
            "c": rng.choice(["red", "green", "blue"], size=4000).astype(object),
        }
    )
    df.loc[:99, "i"] = None
    s = private_schema(df, Accountant(100.0, delta_slack=1e-5), SeededNoise(11, quiet=True), rho=30.0, delta=1e-6)
    f, i = s["f"], s["i"]
    assert isinstance(f, Numeric) and not f.integer and not f.nullable
    # private quantile bounds (0.5% / 99.5% at this size): within a few percent of the range of the data
    assert -4.0 <= f.lower <= 0.0 and 240.0 <= f.upper <= 256.0
    assert isinstance(i, Numeric) and i.integer and i.nullable
    assert -64 <= i.lower <= -20 and 950 <= i.upper <= 1100
    assert i.bins == 16
    assert s["c"].categories == ("blue", "green", "red")


# -- private discovery: privacy checks that can fail ---------------------------------------------
def test_new_category_released_with_probability_at_most_delta_col():
    """Neighbours D and D + {new value}: the new value must appear with probability <= delta/m.

    With tau = 1 (no threshold) it would appear ~40% of the time; without the "+1" or with delta
    instead of delta/m the rate would match the exact tail of a different threshold (checked too). At this size
    the identifier check's distinct count is taken only where n_hat reaches ten of its sd (``distinct_rho``), so
    the categories' sigma and tau depend on the run's n_hat: each run is checked against its own.
    """
    m, delta = 2, 0.2
    rho = m * 1.0 / 6.0  # per column about 1/6 (after the row count), most of it for the categories
    base = {"c": ["a"] * 30 + ["b"] * 30, "d": ["x"] * 60}
    d_plus = pd.DataFrame({"c": base["c"] + ["zzz"], "d": base["d"] + ["x"]}, dtype=object)
    runs = 2000
    noise = SeededNoise(12345, quiet=True)
    released = 0
    delta_col = delta / m
    exact: list[float] = []
    for _ in range(runs):
        acc = Accountant(rho, delta_slack=delta)
        s = private_schema(d_plus, acc, noise, rho=rho, delta=delta)
        released += "zzz" in s["c"].categories
        assert set(s["c"].categories) <= {"a", "b", "zzz"}
        entry = next(e for e in acc.ledger if e.label.endswith("c: category counts"))
        sigma, tau = entry.noise_scale, entry.details["threshold"]
        assert sigma == pytest.approx(1.0 / math.sqrt(2.0 * entry.rho)) and 1.8 < sigma < 2.0
        assert entry.delta == pytest.approx(delta_col)
        assert tau <= 1 + sigma * math.sqrt(2 * math.log(1 / delta_col))  # the exact threshold, at most the bound
        assert _dgauss_tail(sigma, tau - 2) > delta_col  # and no smaller integer threshold would do
        exact.append(_dgauss_tail(sigma, tau - 1))  # P[1 + Z > tau]
    # the guarantee (a wrong tau such as 1 gives ~0.4); the exact threshold is tight
    assert max(exact) <= delta_col
    rate, expected = released / runs, float(np.mean(exact))
    assert abs(rate - expected) <= 4 * math.sqrt(expected * (1 - expected) / runs) + 1e-3


def test_type_count_noise_matches_spent_rho():
    """The noise added to the type counts has variance sigma^2 with sigma = 1/sqrt(2 rho_spent)."""
    df = pd.DataFrame({"v": ["1", "2", "2.5", "x", None, "7"] * 5}, dtype=object)
    # missing, integral, non-integral, +inf, -inf, date or time, formatted number, text
    true = np.array([5, 15, 5, 0, 0, 0, 0, 5])
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
    """The exact threshold: a count-1 value passes with probability <= delta, one less would not do, and it is
    never above the sub-Gaussian bound 1 + sigma sqrt(2 ln(1/delta))."""
    assert category_threshold(1.0, math.exp(-2)) == pytest.approx(2.0)  # the bound gives 3
    for sigma in (0.5, 1.0, 3.0, 28.7):
        for d in (0.1, 1e-3, 1e-10):
            tau = category_threshold(sigma, d)
            assert _dgauss_tail(sigma, tau - 1) <= d < _dgauss_tail(sigma, tau - 2)
            assert tau <= 1 + sigma * math.sqrt(2 * math.log(1 / d))


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


# -- row count and budget plan ----------------------------------------------------------------------------------
def test_row_count_first_in_ledger_with_the_spent_noise_scale():
    """The row count is the first spend (COUNT_SHARE of rho), its noise scale is the one its rho pays for, the
    noise actually drawn has that scale, and n_hat = max(noisy, 1) is what the plan and the report use."""
    from privsample.privacy.mechanisms import sigma_for_rho

    df = pd.DataFrame({"c": ["a", "b"] * 60, "v": [str(i) for i in range(120)]}, dtype=object)
    rho = 0.5
    noise = RecordingNoise(77)
    diffs = []
    for _ in range(300):
        acc = Accountant(rho, delta_slack=1e-3)
        noise.calls.clear()
        s = private_schema(df, acc, noise, rho=rho, delta=1e-3)
        first, plan = acc.ledger[0], acc.ledger[1]
        assert first.label == "schema: row count" and first.rho == pytest.approx(COUNT_SHARE * rho)
        assert first.noise_scale == sigma_for_rho(first.rho)
        counts, sigma_used, out = noise.calls[0]
        assert sigma_used == first.noise_scale
        np.testing.assert_array_equal(counts, [len(df)])
        assert s.discovery["n_hat"] == max(int(out[0]), 1) == plan.details["n_hat"]
        assert plan.label == "schema: plan" and plan.rho == 0.0 and plan.details["share"] == 1.0
        diffs.append(int(out[0]) - len(df))
    sigma = first.noise_scale  # 1/sqrt(2 * 0.005) = 10
    assert sigma == pytest.approx(10.0)
    d = np.asarray(diffs, dtype=float)
    assert abs(d.mean()) < 4 * sigma / math.sqrt(len(d))
    assert d.var() == pytest.approx(sigma**2, rel=0.2)  # a wrong scale (e.g. sensitivity or rho off) fails


def test_noisy_row_count_scale_and_floor():
    noise = SeededNoise(5, quiet=True)
    acc = Accountant(100.0)
    vals = [noisy_row_count(1000, acc, noise, 0.02)[0] for _ in range(2000)]  # sigma = 5
    assert np.var(vals) == pytest.approx(25.0, rel=0.15) and abs(np.mean(vals) - 1000) < 0.5
    assert all(e.noise_scale == pytest.approx(5.0) and e.details["sensitivity"] == 1.0 for e in acc.ledger)
    assert min(noisy_row_count(0, acc, noise, 0.02)[0] for _ in range(50)) >= 1.0  # n = 0: n_hat >= 1


def test_plan_small_table_gets_larger_share():
    from privsample.privacy.conversion import cdp_rho

    total = cdp_rho(1.0, 0.9e-9)
    small, ds = plan_discovery(total, 1e-10, 1_000, 15, count_rho=COUNT_SHARE * total)
    large, dl = plan_discovery(total, 1e-10, 1_000_000, 15, count_rho=COUNT_SHARE * total)
    assert ds["share"] > dl["share"] and small > large
    # 1,000 records: categories would need more than SMALL_FRACTION of them at MAX_SHARE: the small-table cap
    assert ds["share"] == SMALL_MAX_SHARE and dl["share"] == MIN_SHARE and ds["rule"] == dl["rule"] == "planned"
    at_max = plan_discovery(total, 1e-10, 1_000, 15, count_rho=COUNT_SHARE * total, share=MAX_SHARE)[1]
    assert at_max["min_category_records"] > SMALL_FRACTION * 1_000
    # Car's shape (1,728 records, 7 columns): the 2% target is out of reach, but at MAX_SHARE categories need less
    # than SMALL_FRACTION of the records: MAX_SHARE; an explicit max_share caps small tables too
    _, dc = plan_discovery(total, 1e-10, 1_728, 7, count_rho=COUNT_SHARE * total)
    assert dc["share"] == MAX_SHARE and 0.02 * 1_728 < dc["min_category_records"] <= SMALL_FRACTION * 1_728
    _, du = plan_discovery(total, 1e-10, 1_000, 15, count_rho=COUNT_SHARE * total, max_share=0.3)
    assert du["share"] == 0.3
    assert ds["min_category_records"] < dl["min_category_records"]
    assert ds["min_category_fraction"] == pytest.approx(ds["min_category_records"] / 1_000)
    # in between, the share is the smallest at which a 2% category passes: its threshold is at the target
    _, dm = plan_discovery(total, 1e-10, 20_000, 15, count_rho=COUNT_SHARE * total)
    assert MIN_SHARE < dm["share"] < MAX_SHARE
    assert dm["min_category_records"] == pytest.approx(0.02 * 20_000, abs=1.5)
    # a fixed share is honoured
    fixed, df_ = plan_discovery(total, 1e-10, 1_000, 15, count_rho=COUNT_SHARE * total, share=0.1)
    assert df_["rule"] == "fixed" and df_["share"] == 0.1 and fixed == pytest.approx(0.09 * total)


def test_min_category_records_pass_rate():
    """A category holding min_category_records records passes tau about PASS_PROBABILITY (0.9) of the time."""
    sigma, delta_col = 3.0, 1e-6
    c = math.ceil(min_category_records(sigma, delta_col))
    tau = category_threshold(sigma, delta_col)
    assert 0.86 <= _dgauss_tail(sigma, tau - c) <= 0.95


@settings(max_examples=300, deadline=None)
@given(
    n_hat=st.floats(1.0, 1e9),
    m=st.integers(1, 300),
    eps=st.floats(0.01, 20.0),
    share=st.one_of(st.none(), st.floats(0.02, 1.0)),
)
def test_plan_never_exceeds_the_budget(n_hat, m, eps, share):
    from fractions import Fraction

    from privsample.privacy.conversion import cdp_rho

    total = cdp_rho(eps, 0.9e-9)
    count = COUNT_SHARE * total
    rho, d = plan_discovery(total, 1e-10, n_hat, m, count_rho=count, share=share)
    cap = share if share is not None else SMALL_MAX_SHARE
    assert rho > 0 and Fraction(rho) + Fraction(count) <= Fraction(d["share"]) * Fraction(total)
    assert (MIN_SHARE <= d["share"] <= SMALL_MAX_SHARE) if share is None else d["share"] == share
    assert d["share"] <= cap
    # monotone: more records never ask for a larger planned share
    if share is None:
        assert plan_discovery(total, 1e-10, n_hat * 2, m, count_rho=count)[1]["share"] <= d["share"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(0, 60),
    m=st.integers(1, 6),
    eps=st.floats(0.05, 10.0),
    seed=st.integers(0, 2**16),
    share=st.one_of(st.none(), st.floats(0.05, 0.9)),
)
@example(n=9, m=2, eps=0.25, seed=62, share=0.5)  # a column read as dates leaves part of its budget
def test_discovery_and_synthesis_budget_never_exceeded(n, m, eps, seed, share):
    """Planned or fixed discovery spends at most its cap; what is left is all the synthesizer can spend."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"c{j}": rng.choice(["a", "b", "1", "2.5", None], n) for j in range(m)}, dtype=object)
    acc = Accountant.from_epsilon_delta(eps, 1e-9, delta_slack=1e-10)
    s = private_schema(df, acc, SeededNoise(seed, quiet=True), rho=acc.rho_total, delta=1e-10, share=share)
    cap = share if share is not None else SMALL_MAX_SHARE
    spent = sum((Fraction(e.rho) for e in acc.ledger), Fraction(0))
    assert spent <= Fraction(cap) * Fraction(acc.rho_total) and acc.delta_spent <= 1e-10
    assert spent <= Fraction(s.discovery["share"]) * Fraction(acc.rho_total)
    # a fixed share is a cap, not an amount: a column found to be codes leaves the rest of its budget, and so can a
    # column read as dates (seen at n = 9: about 2% of its budget); the synthesizer spends it (it takes what is left)
    acc.spend(acc.remaining, "synthesis")  # everything that is left
    assert sum((Fraction(e.rho) for e in acc.ledger), Fraction(0)) <= Fraction(acc.rho_total)
    with pytest.raises(BudgetExceeded):
        acc.spend(1e-12, "more")
    assert Accountant.from_dict(s.ledger).spent == pytest.approx(float(spent))


# -- the per-column report -----------------------------------------------------------------------------------------
class NoNoise(SeededNoise):
    """Exact counts (for checking post-processing formulas only)."""

    def __init__(self):
        super().__init__(0, quiet=True)

    def gaussian(self, counts, sigma):
        return np.asarray(counts, dtype=np.int64)


def test_report_catch_all_share_from_released_counts():
    df = pd.DataFrame(
        {
            "c": ["a"] * 700 + ["b"] * 200 + ["r1", "r2"] * 25 + [None] * 50,
            "d": [f"u{i // 3}" for i in range(1000)],
            "e": [f"u{i}" for i in range(1000)],
        },
        dtype=object,
    )
    s = private_schema(df, Accountant(50.0, delta_slack=1e-3), NoNoise(), rho=50.0, delta=1e-3)
    rep = {c["name"]: c for c in s.discovery["columns"]}
    assert s.discovery["n_hat"] == 1000 and s.discovery["share"] == 1.0
    # tau is about 1 + 0.6 * 4 = 3.4: r1, r2 (25 each) pass too; no catch-all mass but the missing values
    c = rep["c"]
    assert c["kind"] == "categorical" and c["kept"] == 4 and s["c"].nullable
    assert c["catch_all_share"] == pytest.approx(0.0)
    # every value of e is unique: an identifier with the format most values have, not synthesized
    assert rep["e"]["kind"] == "id" and s.identifiers[0].format == "u{3 digits}" and "e" not in s.names
    # smaller budget: r1, r2 fall below tau and go to the catch-all, with the missing values unless nullable
    s2 = private_schema(df, Accountant(1.0, delta_slack=1e-3), NoNoise(), rho=0.01, delta=1e-3)
    c2 = {c["name"]: c for c in s2.discovery["columns"]}["c"]
    assert set(s2["c"].categories) == {"a", "b"}
    assert c2["catch_all_share"] == pytest.approx(0.05 if s2["c"].nullable else 0.1)
    assert 25 < s2.discovery["min_category_records"] < 200
    # every value of d is held by 3 records or fewer: nothing passes, the whole column is in the catch-all
    d2 = {c["name"]: c for c in s2.discovery["columns"]}["d"]
    assert {k: v for k, v in d2.items() if k != "sigma"} == {
        "name": "d",
        "kind": "catch-all",
        "kept": 0,
        "catch_all_share": 1.0,
        "counts": {},
        "nullable": False,
        "null_count": 0.0,
    }


def test_discovery_field_round_trip(tmp_path):
    df = pd.DataFrame({"c": ["x", "y"] * 200, "v": [str(i % 90) for i in range(400)]}, dtype=object)
    s = private_schema(df, Accountant(5.0, delta_slack=1e-4), SeededNoise(1, quiet=True), rho=5.0, delta=1e-4)
    assert set(s.discovery) >= {"n_hat", "share", "min_category_records", "columns"}
    assert [c["name"] for c in s.discovery["columns"]] == ["c", "v"]
    assert {c["kind"] for c in s.discovery["columns"]} <= {"categorical", "numeric", "catch-all"}
    num = s.discovery["columns"][1]
    assert num["kind"] == "numeric" and num["kept"] == f"[{int(s['v'].lower)}, {int(s['v'].upper)}]"
    d = s.to_dict()
    assert d["discovery"] == s.discovery
    for name in ("s.yaml", "s.json"):
        s.save(tmp_path / name)
        assert Schema.load(tmp_path / name).discovery == s.discovery
    plain = Schema(s.columns, provenance="user")
    assert "discovery" not in plain.to_dict() and Schema.from_dict(plain.to_dict()).discovery is None


@pytest.mark.parametrize("n", [0, 1, 3])
def test_planned_discovery_on_empty_and_tiny_tables(n):
    from privsample.api.accounting import worst_case_domain
    from privsample.data.encoding import release_domain

    df = pd.DataFrame({"a": ["x"] * n, "b": ["1"] * n}, dtype=object)
    acc = Accountant.from_epsilon_delta(1.0, 1e-9, delta_slack=1e-10)
    s = private_schema(df, acc, SeededNoise(n, quiet=True), rho=acc.rho_total, delta=1e-10, share=None)
    assert s.names == ["a", "b"] and s.discovery["n_hat"] >= 1
    assert s.discovery["share"] == SMALL_MAX_SHARE  # tiny: the small-table cap
    assert acc.spent <= SMALL_MAX_SHARE * acc.rho_total
    rel = release_domain(s, other=False)
    assert all(k >= 1 for k in rel.shape)
    assert all(k <= c for k, c in zip(rel.shape, worst_case_domain(s.names).shape))


def test_adult_sample_keeps_frequent_categories_at_eps_1(adult_raw):
    """1,000 records of Adult at epsilon = 1 (the pipeline's plan): the frequent categories survive."""
    from privsample.api.accounting import (
        DISCOVERY_BINS,
        DISCOVERY_DELTA_SHARE,
        DISCOVERY_MAX_CATEGORIES,
        make_accountant,
        worst_case_domain,
    )
    from privsample.data.encoding import release_domain

    df = adult_raw.sample(1000, random_state=0).reset_index(drop=True)
    acc, d_disc = make_accountant(1.0, 1e-9, None, None)
    assert d_disc == DISCOVERY_DELTA_SHARE * 1e-9
    s = private_schema(
        df,
        acc,
        SeededNoise(2, quiet=True),
        rho=acc.rho_total,
        delta=d_disc,
        share=None,
        bins=DISCOVERY_BINS,
        max_categories=DISCOVERY_MAX_CATEGORIES,
    )
    plan = s.discovery
    assert plan["share"] > 0.1  # more than the old fixed 10% at this size
    need = plan["min_category_records"]
    assert 150 < need < 450 and plan["min_category_fraction"] == pytest.approx(need / plan["n_hat"])
    assert acc.spent <= plan["share"] * acc.rho_total * (1 + 1e-12)
    for name in ("workclass", "education", "marital-status", "race", "sex", "relationship", "income-per-year"):
        col = s[name]
        assert isinstance(col, Categorical), name
        vc = df[name].value_counts()
        assert set(vc[vc >= 1.3 * need].index) <= set(col.categories), name  # frequent: kept
        assert set(col.categories) <= set(vc.index), name  # nothing invented
        assert len(col.categories) <= DISCOVERY_MAX_CATEGORIES
    rep = {c["name"]: c for c in plan["columns"]}
    assert rep["sex"]["kept"] == 2 and rep["sex"]["catch_all_share"] < 0.15
    assert rep["workclass"]["kind"] == "categorical" and 0 < rep["workclass"]["catch_all_share"] < 0.5
    labels = [e.label for e in acc.ledger]
    assert labels[:2] == ["schema: row count", "schema: plan"]
    rel = release_domain(s, other=False)
    assert all(k <= c for k, c in zip(rel.shape, worst_case_domain(s.names).shape))


@pytest.mark.parametrize("schema_share", [None, 0.2])
def test_pipeline_discovery_share_planned_or_fixed(tmp_path, schema_share):
    """synthesize: discovery is planned from the noisy row count by default; an explicit share is honoured.
    Either way discovery + synthesis spend at most the user's budget, all in one ledger."""
    from privsample.api.synthesizer import synthesize

    rng = np.random.default_rng(1)
    p = tmp_path / "t.csv"
    pd.DataFrame({"c": rng.choice(["a", "b", "c"], 400), "k": rng.integers(0, 50, 400)}).to_csv(p, index=False)
    res = synthesize(
        p,
        epsilon=2.0,
        delta=1e-9,
        method="mst",
        method_options={"iters": 20},
        schema_share=schema_share,
        noise=SeededNoise(4, quiet=True),
        seed=4,
    )
    disc = [e for e in res.ledger["entries"] if e["label"].startswith("schema: ")]
    assert [e["label"] for e in disc[:2]] == ["schema: row count", "schema: plan"]
    spent = math.fsum(e["rho"] for e in disc)
    plan = res.schema.discovery
    if schema_share is None:
        assert plan["rule"] == "planned" and MIN_SHARE <= plan["share"] <= SMALL_MAX_SHARE
    else:
        assert plan["rule"] == "fixed" and plan["share"] == 0.2
    summary = res.ledger["summary"]
    assert spent == pytest.approx(plan["share"] * summary["rho_total"], rel=1e-9)
    assert summary["rho_spent"] <= summary["rho_total"] and summary["delta_spent"] <= 1e-9
    assert res.model.schema.discovery == plan  # saved with the model


def test_impossible_budget_refused_before_any_spend():
    df = pd.DataFrame({"a": ["x"] * 50}, dtype=object)
    acc = Accountant(1.0, delta_slack=1e-3)
    with pytest.raises(InputError):  # the smallest planned share would not cover the row count
        private_schema(df, acc, SeededNoise(0, quiet=True), rho=1.0, delta=1e-3, share=None, min_share=0.005)
    small = Accountant(0.3, delta_slack=1e-3)
    with pytest.raises(BudgetExceeded):  # the largest planned share does not fit what is left
        private_schema(df, small, SeededNoise(0, quiet=True), rho=1.0, delta=1e-3, share=None)
    assert acc.ledger == [] and small.ledger == []


# -- discovery's released counts reused as 1-way measurements -----------------------------------------
def _counts_table() -> pd.DataFrame:
    return pd.DataFrame(
        {"c": ["a"] * 600 + ["b"] * 300 + ["r"] * 3 + [None] * 97, "k": ["x"] * 550 + ["y"] * 450}, dtype=object
    )


def test_released_counts_are_the_noisy_outputs_with_their_sigma():
    """The counts kept in ``schema.discovery`` are exactly the released noisy counts, with the sigma the
    ledger charged for: if either were the true count or a wrong scale, this fails."""
    df = _counts_table()
    noise = RecordingNoise(3)
    acc = Accountant(5.0, delta_slack=1e-6)
    s = private_schema(df, acc, noise, rho=0.05, delta=1e-6)
    rep = {c["name"]: c for c in s.discovery["columns"]}
    for name, true in (("c", {"a": 600, "b": 300, "r": 3}), ("k", {"x": 550, "y": 450})):
        entry = next(e for e in acc.ledger if e.label == f"schema: {name}: category counts")
        assert rep[name]["sigma"] == pytest.approx(entry.noise_scale)
        call = next(
            c
            for c in noise.calls
            if c[1] == pytest.approx(entry.noise_scale) and sorted(c[0].tolist()[:-1]) == sorted(true.values())
        )  # the last cell of the vector: the missing values (a public candidate)
        released = {cat: int(call[2][call[0].tolist().index(v)]) for cat, v in true.items()}  # counts distinct
        assert set(rep[name]["counts"]) == set(s[name].categories) and rep[name]["counts"]
        for cat, v in rep[name]["counts"].items():
            assert v == released[cat] and v > entry.details["threshold"]
        assert rep[name]["counts"] != {c: true[c] for c in rep[name]["counts"]}  # noisy, not exact


def test_discovery_measurements_cover_released_cells_only():
    from privsample.data.encoding import release_schema
    from privsample.synth import pgm
    from privsample.synth.base import discovery_measurements

    df = _counts_table()
    s = release_schema(private_schema(df, Accountant(50.0, delta_slack=1e-6), NoNoise(), rho=50.0, delta=1e-6))
    dom = pgm.Domain(s.names, [c.size for c in s.columns])
    ms = {M.clique[0]: M for M in discovery_measurements(s, dom)}
    assert set(ms) == {"c", "k"}
    col, M = s["c"], ms["c"]
    w = np.asarray(M.query.weights)
    # the released categories and the null code (97 missing, passed); the catch-all is not measured
    assert w.tolist() == [1.0] * len(col.categories) + [0.0, 1.0]
    y = np.asarray(M.noisy_measurement)
    assert y[: len(col.categories)].tolist() == [600, 300, 3][: len(col.categories)] and y[-1] == 97
    sig = {c["name"]: c["sigma"] for c in s.discovery["columns"]}
    assert M.stddev == pytest.approx(sig["c"])
    # a reviewed schema (or one whose categories were edited) gives none
    import dataclasses

    assert discovery_measurements(dataclasses.replace(s, provenance="user"), dom) == []
    edited = dataclasses.replace(s, columns=[dataclasses.replace(s["c"], categories=("a", "zz", "r")), s["k"]])
    assert [M.clique for M in discovery_measurements(edited, dom)] == [("k",)]


def test_compress_partial_keeps_only_fully_measured_groups():
    from privsample.synth import pgm
    from privsample.synth.mst import compress_partial

    M = pgm.LinearMeasurement(
        np.array([10.0, 20.0, 30.0, 0.0]),
        ("a",),
        stddev=2.0,
        query=pgm.mbi.WeightedQuery(np.array([1.0, 1.0, 1.0, 0.0])),
    )
    C = compress_partial(M, {"a": np.array([0, 1, 1, 2])})
    w = np.asarray(C.query.weights)
    y = np.asarray(C.noisy_measurement)
    assert w.tolist() == pytest.approx([1.0, 2**-0.5, 0.0])
    assert (y / np.where(w > 0, w, 1)).tolist() == pytest.approx([10.0, 50.0, 0.0])  # sums; group 2 unmeasured
    C2 = compress_partial(M, {"a": np.array([0, 0, 1, 1])})
    assert np.asarray(C2.query.weights).tolist() == pytest.approx([2**-0.5, 0.0])


@pytest.mark.parametrize("method", ["mst", "aim", "ppsyn"])
def test_synthesis_reuses_discovery_counts_without_new_spend(method, tmp_path, monkeypatch):
    """Without a schema the fit adds discovery's counts as measurements; the ledger is unchanged in
    shape (no extra entry) and the budget is exactly spent."""
    import importlib

    from privsample.api.synthesizer import synthesize
    from privsample.synth import base

    got = []

    def spy(schema, domain):
        out = base.discovery_measurements(schema, domain)
        got.extend(M.clique for M in out)
        return out

    where = {"ppsyn": "ppsyn.mechanism"}.get(method, method)  # the module that calls it
    monkeypatch.setattr(importlib.import_module(f"privsample.synth.{where}"), "discovery_measurements", spy)

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"c": rng.choice(["a", "b", "c"], 3000, p=[0.6, 0.3, 0.1]), "k": rng.choice(["x", "y"], 3000)}, dtype=object
    )
    opts = {"mst": {"iters": 200}, "aim": {"rounds": 4}, "ppsyn": {}}[method]
    df.to_csv(tmp_path / "t.csv", index=False)
    r = synthesize(tmp_path / "t.csv", epsilon=2.0, method=method, seed=1, method_options=opts, rows=500)
    labels = [e["label"] for e in r.ledger["entries"]]
    assert not any("discovery" in lb and "reuse" in lb for lb in labels)
    assert r.ledger["summary"]["rho_spent"] == pytest.approx(r.ledger["summary"]["rho_total"], rel=1e-9)
    assert {"a", "b"} <= set(r.table["c"])
    assert sorted(got) == [("c",), ("k",)]


def test_discovery_measurements_of_a_code_column_are_its_grid_counts():
    """A code column (unit bins) is measured by its kept values' grid counts and its null cell, with the grid's
    sigma; a value between kept ones that its counts did not show is not measured (it is a structural zero)."""
    from privsample.data.encoding import release_schema
    from privsample.synth import pgm
    from privsample.synth.base import discovery_measurements

    df = pd.DataFrame({"k": ["1"] * 500 + ["2"] * 300 + ["4"] * 150 + [None] * 50}, dtype=object)
    noise = RecordingNoise(5)
    s = release_schema(private_schema(df, Accountant(5.0, delta_slack=1e-6), noise, rho=0.5, delta=1e-6))
    col = s["k"]
    assert col.kind == "numeric" and (col.lower, col.upper, col.bins) == (1.0, 4.0, 4)
    rep = s.discovery["columns"][0]
    grid = [c for c in noise.calls if len(c[0]) > 4][-1]  # the grid histogram: (true counts, sigma, noisy)
    assert rep["sigma"] == pytest.approx(grid[1]) and rep["null_count"] == grid[2][-1]
    dom = pgm.Domain(s.names, [c.size for c in s.columns])
    (M,) = discovery_measurements(s, dom)
    w, y = np.asarray(M.query.weights), np.asarray(M.noisy_measurement)
    assert w.tolist() == [1.0, 1.0, 0.0, 1.0, 1.0]  # 1, 2, (3 unsupported), 4, null
    assert M.stddev == pytest.approx(grid[1])
    assert y.tolist() == [rep["counts"]["1"], rep["counts"]["2"], 0.0, rep["counts"]["4"], rep["null_count"]]
    assert y.tolist() != [500, 300, 0, 150, 50]  # noisy, not exact


def test_discovery_counts_near_their_pass_level_are_not_reused():
    """A code value or null cell passes at 2 sigma; a count that passed there is biased upwards (an empty cell's
    would invent records), so only counts above ``REUSE_SIGMAS`` sigma become measurements."""
    from privsample.data.schema import Numeric, Schema
    from privsample.synth import pgm
    from privsample.synth.base import REUSE_SIGMAS, discovery_measurements

    col = Numeric("c", 1.0, 3.0, bins=3, integer=True, nullable=True)
    entry = {"name": "c", "kind": "numeric", "binning": "unit", "sigma": 10.0, "nullable": True}
    dom = pgm.Domain(["c"], [col.size])

    def weights(counts, null):
        report = {"columns": [{**entry, "counts": counts, "null_count": null}]}
        s = Schema([col], provenance="private", discovery=report)
        (M,) = discovery_measurements(s, dom)
        return np.asarray(M.query.weights).tolist()

    high = REUSE_SIGMAS * 10.0 + 1
    assert weights({"1": 900.0, "2": high, "3": 25.0}, high) == [1.0, 1.0, 0.0, 1.0]
    low = REUSE_SIGMAS * 10.0 - 1
    assert weights({"1": 900.0, "2": low, "3": 25.0}, low) == [1.0, 0.0, 0.0, 0.0]


def test_integer_codes_beyond_the_unit_grid_become_categories():
    """3-digit codes are kept as their values (octave bins would invent codes between them); a run of ages and small
    counts stay numeric; the codes test spends at most the column's values budget and its delta_col once, and a
    code column leaves its grid part unspent. At 1,000 records the test does not pay and is not run."""
    from privsample.data.discovery_plan import CODE_SHARE

    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame(
        {
            "code": rng.choice([101, 205, 330, 412], n, p=[0.4, 0.3, 0.2, 0.1]).astype(str),
            "age": rng.integers(18, 90, n).astype(str),
            "kids": rng.poisson(1.5, n).astype(str),
            "month": rng.integers(1, 13, n).astype(str),
            "grade": rng.integers(1, 41, n).astype(str),
        },
        dtype=object,
    )
    acc = Accountant.from_epsilon_delta(4.0, 1e-9, delta_slack=1e-10)
    s = private_schema(df, acc, SeededNoise(1, quiet=True), rho=acc.rho_total, delta=1e-10, share=0.5)
    assert s["code"].kind == "categorical" and s["code"].categories == ("101", "205", "330", "412")
    assert s["age"].kind == "numeric" and s["kids"].kind == "numeric"
    # runs of integers beyond -8..8 (months, codes 1..40): one bin per released value, no octave bins
    for name, hi in (("month", 12), ("grade", 40)):
        col = s[name]
        assert col.kind == "numeric" and col.integer and (col.lower, col.upper, col.bins) == (1, hi, hi), name
    rep = {c["name"]: c for c in s.discovery["columns"]}
    assert rep["code"]["codes"] is True and "codes" not in rep["age"]
    by = {}
    for e in acc.ledger:
        if e.label.startswith("schema: ") and e.label.count(":") >= 2:
            by.setdefault(e.label.split(": ")[1], []).append(e)
    col_rho = (0.5 * acc.rho_total - by_rho(acc, "schema: row count")) / 5
    for name, entries in by.items():
        assert math.fsum(e.rho for e in entries) <= col_rho * (1 + 1e-9)
        assert math.fsum(e.delta for e in entries) <= 1e-10 / 5 * (1 + 1e-9)
    code_counts = [e for e in by["code"] if e.label.endswith("category counts")]
    assert len(code_counts) == 1 and not any("grid" in e.label for e in by["code"])  # the grid part is unspent
    assert any(e.label.endswith("category counts") for e in by["age"])  # tested, then numeric with the rest
    distinct = [e for e in by["code"] if e.label.endswith("distinct values")]  # the identifier check first
    rho_b = col_rho - by["code"][0].rho  # the test's share pays for the identifier check too
    assert code_counts[0].rho == pytest.approx(CODE_SHARE * rho_b - distinct[0].rho, rel=1e-6)
    assert not any("grid" in e.label for e in by["month"] + by["grade"])
    rep_m = rep["month"]
    assert rep_m["binning"] == "unit" and set(rep_m["counts"]) == {str(v) for v in range(1, 13)}
    assert rep_m["sigma"] == pytest.approx(code_counts[0].noise_scale)
    acc_small = Accountant(1.0, delta_slack=1e-6)
    small = private_schema(df.iloc[:1000], acc_small, SeededNoise(1, quiet=True), rho=0.01, delta=1e-9)
    assert all(c.kind == "numeric" for c in small.columns)
    assert not any(e.label.endswith("category counts") for e in acc_small.ledger)


def by_rho(acc, label):
    return math.fsum(e.rho for e in acc.ledger if e.label == label)


def test_a_run_needs_its_share_from_counts_well_above_the_threshold():
    """Values released just above the threshold got there by their noise: counted in a run's share they overstate
    it, and a run whose share is overstated clips the column's other values to its bounds without a word."""
    from privsample.data.code_discovery import code_kind

    n, tau, sigma = 37_000, 1_000.0, 188.0
    released = {"10": 20_000, "11": 14_000, "12": 1_300}  # 12 below tau + 2 sigma: its count is not trusted
    assert sum(released.values()) >= 0.95 * n  # the overstated share would pass
    assert code_kind(released, 0, n, tau + 2 * sigma) is None
    assert code_kind(released | {"12": 1_400}, 0, n, tau + 2 * sigma) == "values"  # a solid 12: 95.7%


def test_sparse_codes_whose_rarest_values_stay_unreleased_are_kept_as_codes():
    """8 diagnosis codes in 6,000 records, the two rarest (5% each) below the trusted floor: the released codes
    hold about 90% of the records, which is a code column (kept as categories, its rare codes in the catch-all),
    while a numeric column with a few round values (hours per week: 40, 50, 45 hold about 60%) stays numbers."""
    from privsample.data.code_discovery import SPARSE_CODE_COVERAGE, code_kind

    n, floor = 6020, 370.9
    seed0 = {"101": 1797, "205": 1215, "233": 584, "310": 621, "412": 556, "555": 630, "777": 313}
    seed2 = {"101": 1777, "205": 1156, "233": 680, "310": 638, "412": 484, "555": 592}
    assert 0.85 < sum(v for v in seed0.values() if v >= floor) / n < 0.9  # the trusted share: under 90%
    assert code_kind(seed0, 0, n, floor) == "categories"
    assert code_kind(seed2, 0, 5963, floor) == "categories"
    hours = {"40": 2_700, "50": 500, "45": 380}  # of 6,000 records, beyond the unit cells: 60%
    assert sum(hours.values()) < SPARSE_CODE_COVERAGE * n
    assert code_kind(hours, 0, n, floor) is None
    # round hours 20..60 holding 84%: not very sparse (41 integers for 7 values), so 90% is asked: numbers
    round_hours = {"20": 400, "30": 400, "35": 400, "40": 2_600, "45": 400, "50": 500, "60": 380}
    assert 0.8 < sum(round_hours.values()) / n < 0.9
    assert code_kind(round_hours, 0, n, floor) is None
