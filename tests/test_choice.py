"""The rule of ``--method auto`` (``privsample.api.choice.choose_method``): its decisions on public inputs (narrow
tables at a small and a large budget, wide tables, huge row counts, column names before discovery, a memory limit),
that it works with a noisy row count, never reads data, and that its reason names the method it picked."""

from __future__ import annotations

import builtins
import inspect
import math

import pytest

from privsample.api import choice as choice_module
from privsample.api.choice import AIM_SIGNAL, WIDE_COLUMNS, Choice, choose_method
from privsample.api.forecast import load_calibration
from privsample.errors import InputError

ADULT = [85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2]  # discretised Adult's domain sizes (public)
NLTCS = [2] * 16
WIDE = [6] * 100  # 100 columns of 6 values


def choose(epsilon, columns, rows, **kw) -> Choice:
    return choose_method(epsilon, 1e-9, columns, rows, speed=1.0, **kw)


def test_narrow_small_budget_is_ppsyn():
    c = choose(0.3, ADULT, 48_842)
    assert c.method == "ppsyn" and c.signal < AIM_SIGNAL
    assert c.reason.startswith("ppsyn:")


def test_narrow_large_budget_is_aim_when_it_fits_the_cap():
    """Eight columns of ten values, 100,000 rows, epsilon 1: a large signal, AIM's forecast well within the cap."""
    c = choose(1, [10] * 8, 100_000)
    assert c.signal >= AIM_SIGNAL
    assert c.method == "aim" and c.reason.startswith("aim:")
    assert c.forecasts["aim"].seconds_used <= c.cap_seconds


def test_few_valued_columns_stay_ppsyn_at_a_large_budget():
    """NLTCS at epsilon 3 (16 two-valued columns): PPSyn-DP's error was the best there, AIM's forecast fits."""
    c = choose(3, NLTCS, 21_574)
    assert c.signal >= AIM_SIGNAL and c.forecasts["aim"].seconds_used <= c.cap_seconds
    assert c.method == "ppsyn" and "few-valued" in c.reason


def test_narrow_large_budget_takes_aim_within_the_cap():
    """Adult at epsilon 3: AIM is the more accurate and its forecast is within the minute's cap (measured 21 s)."""
    c = choose(3, ADULT, 48_842)
    assert c.signal >= AIM_SIGNAL and c.forecasts["aim"].seconds_used <= c.cap_seconds and c.method == "aim"


def test_narrow_large_budget_falls_back_to_ppsyn_when_aim_is_too_slow():
    """Adult at epsilon 10: AIM would be the more accurate, but its forecast is over the cap."""
    c = choose(10, ADULT, 48_842)
    assert c.signal >= AIM_SIGNAL and c.forecasts["aim"].seconds_used > c.cap_seconds
    assert c.method == "ppsyn" and "aim would be more accurate" in c.reason


def test_a_larger_cap_lets_aim_run():
    assert choose(10, ADULT, 48_842, time_floor=600).method == "aim"


@pytest.mark.parametrize("rows", [100_000, 1_000_000])
@pytest.mark.parametrize("epsilon", [0.3, 1, 3])
def test_very_wide_is_mst(rows, epsilon):
    c = choose(epsilon, WIDE, rows)
    assert c.columns >= WIDE_COLUMNS
    assert c.method == "mst" and c.reason.startswith("mst:") and "beyond 60 columns" in c.reason


def test_wide_never_ppsyn():
    for d in (25, 30, 60, 200):
        for eps in (0.1, 1, 10):
            for rows in (1_000, 100_000, 10_000_000):
                assert choose(eps, [4] * d, rows).method in ("aim", "mst")


def test_huge_row_count_keeps_aim_out():
    """AIM's time grows with the signal (rows over the noise sd): at 10^8 rows its scaled forecast is over any cap
    of a few minutes, on narrow and wide tables alike."""
    narrow = choose(3, NLTCS, 100_000_000)
    assert narrow.method == "ppsyn" and narrow.forecasts["aim"].seconds_used > narrow.cap_seconds
    assert choose(1, [6] * 25, 100_000_000).method == "mst"


def test_noisy_row_count():
    """A noisy count is any real number: a fraction, or even below 1 (then 1)."""
    a = choose(1, ADULT, 48_841.37)
    b = choose(1, ADULT, 48_841)
    assert a.method == b.method == "ppsyn" and math.isclose(a.signal, b.signal, rel_tol=1e-4)
    tiny = choose(1, ADULT, -3.2)
    assert tiny.rows == 1.0 and tiny.method in ("ppsyn", "aim", "mst")


def test_names_before_discovery_leave_discovery_its_share():
    """Column names only: the sizes discovery typically keeps; the synthesizer's rho is what discovery leaves."""
    names = [f"col{i}" for i in range(14)]
    before = choose(1, names, 48_842)
    with_schema = choose(1, [17] * 14, 48_842)
    assert before.rho < with_schema.rho
    assert before.method == "ppsyn"
    assert choose(1, [f"c{i}" for i in range(60)], 1_000_000).method == "mst"


def test_rho_after_discovery_is_used():
    c = choose(1, ADULT, 48_842, rho=0.001)
    assert c.rho == 0.001 and math.isclose(c.signal, 48_842 * math.sqrt(0.002))


def test_memory_limit_rules_a_method_out():
    """25 columns of 2,000 values: the checks before any spend refuse MST's tree and AIM's model at 500 MB, PPSyn-DP's
    0.5 MB model fits; with 20,000 values every check refuses and the run will refuse before spending."""
    c = choose(1, [2_000] * 25, 50_000, max_memory_mb=500)
    assert c.forecasts["mst"].refusal and c.forecasts["aim"].refusal and not c.forecasts["ppsyn"].refusal
    assert c.method == "ppsyn" and "only method" in c.reason and c.notes
    none = choose(1, [20_000] * 4, 50_000, max_memory_mb=500)
    assert all(f.refusal for f in none.forecasts.values())
    assert none.method == "mst" and "refuse" in none.reason


@pytest.mark.parametrize(
    "args",
    [(1, 1e-9, [], 100), (1, 1e-9, [2, 0], 100), (1, 1e-9, [2, 3], "many"), (0, 1e-9, [2, 3], 100), (1, 1e-9, None, 9)],
)
def test_bad_input(args):
    with pytest.raises(InputError):
        choose_method(*args)


def test_reason_names_the_method():
    cases = [(0.1, ADULT, 48_842), (1, [10] * 8, 100_000), (1, WIDE, 10**6), (3, ADULT, 48_842), (3, NLTCS, 21_574)]
    for eps, cols, rows in cases:
        c = choose(eps, cols, rows)
        assert c.reason.split(":")[0] == c.method
        assert "\n" not in c.reason and c.reason.count(". ") == 0  # one sentence


def test_never_reads_data(monkeypatch):
    """The rule takes numbers only: no path or table among its parameters, and it opens no file (the calibration is
    passed in) and reads no table."""
    params = inspect.signature(choose_method).parameters
    assert not {"source", "path", "data", "table", "df"} & set(params)
    cal = load_calibration()

    def no_open(*a, **k):
        raise AssertionError(f"opened {a[:1]}")

    monkeypatch.setattr(builtins, "open", no_open)
    import privsample.data.table as table

    for name in ("read_table", "parquet_names", "table_format"):
        if hasattr(table, name):
            monkeypatch.setattr(table, name, no_open)
    c = choose_method(1, 1e-9, ADULT, 48_842, calibration=cal)
    assert c.method in choice_module.METHODS


def test_same_inputs_same_choice():
    """A function of its public inputs: repeated calls agree (forecasts at a fixed speed)."""
    a, b = choose(1, ADULT, 48_842), choose(1, ADULT, 48_842)
    assert a.to_dict() == b.to_dict()


def test_a_schema_gives_the_columns():
    """A reviewed schema (or a privately discovered one, after discovery) instead of the sizes: the same choice."""
    from privsample.data.schema import Categorical, Schema

    schema = Schema([Categorical(f"a{i}", tuple(str(v) for v in range(k))) for i, k in enumerate(ADULT)])
    by_schema = choose_method(1, 1e-9, None, 48_842, schema=schema, speed=1.0)
    by_sizes = choose(1, ADULT, 48_842)
    assert by_schema.method == by_sizes.method and by_schema.signal == by_sizes.signal
    assert by_schema.forecasts["ppsyn"].seconds == by_sizes.forecasts["ppsyn"].seconds
    with pytest.raises(InputError):
        choose_method(1, 1e-9, [2, 3], 48_842, schema=schema)


def test_person_level_divides_the_signal():
    """At most k rows per person: every count's noise is k times larger, so the signal is k times smaller."""
    one = choose(1, [10] * 8, 100_000)
    five = choose(1, [10] * 8, 100_000, max_rows_per_unit=5)
    assert math.isclose(five.signal, one.signal / 5)
    assert one.method == "aim" and five.method == "ppsyn"
    with pytest.raises(InputError):
        choose(1, [10] * 8, 100_000, max_rows_per_unit=0)


# -- --method auto in a run --------------------------------------------------------------------------------------------
def _table(n: int = 3000, seed: int = 0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], n)
    return pd.DataFrame({"a": a, "b": np.where(a == "x", "u", rng.choice(["u", "v"], n)), "c": rng.integers(0, 5, n)})


def test_auto_runs_the_chosen_method_and_says_why():
    import privsample

    res = privsample.synthesize(_table(), epsilon=2, method="auto", seed=0)
    choice = res.model.params["method_choice"]
    assert choice["method"] in ("ppsyn", "aim", "mst") and choice["reason"].startswith(choice["method"] + ":")
    labels = [e["label"] for e in res.ledger.entries]
    assert "auto: row count" not in labels  # discovery's noisy count is reused
    assert res.ledger.summary["rho_spent"] <= res.ledger.summary["rho_total"]


def test_auto_with_a_schema_spends_a_small_noisy_count_first():
    import privsample

    schema = privsample.Schema.draft(_table()).reviewed()
    res = privsample.synthesize(_table(), epsilon=2, method="auto", schema=schema, seed=0)
    entries = res.ledger.entries
    first = [e for e in entries if e["label"] == "auto: row count"]
    assert len(first) == 1 and first[0]["rho"] == pytest.approx(0.01 * res.ledger.summary["rho_total"], rel=1e-6)
    assert res.model.params["method_choice"]["method"] in ("ppsyn", "aim", "mst")


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"method_options": {"workload": "a,b"}}, "workload belongs to one method"),
        ({"method_options": {"schedule": "note"}}, "schedule belongs to one method"),
    ],
)
def test_auto_refuses_options_of_one_method(kw, message):
    import privsample

    with pytest.raises(InputError, match=message):
        privsample.synthesize(_table(), epsilon=1, method="auto", **kw)
