"""Column types of real registers: dates, datetimes, times, formatted numbers, infinite values."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample.data.calendar_discovery import discover_calendar
from privsample.data.decoding import decode
from privsample.data.discovery import private_schema
from privsample.data.encoding import encode
from privsample.data.formats import DateFormat, NumberFormat
from privsample.data.format_classes import (
    DATE_CLASSES,
    coarse_classes,
    date_classes,
    date_format_from,
    number_classes,
    number_format_from,
)
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.privacy import make_noise
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import sigma_for_rho
from tests.test_discovery import RecordingNoise

N = 4000


def discover(df: pd.DataFrame, rho: float = 0.5, seed: int = 0) -> Schema:
    acc = Accountant(rho, delta_slack=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_schema(df, acc, make_noise(seed, quiet=True), rho=rho, delta=1e-9)


def synth(df: pd.DataFrame, seed: int = 0, epsilon: float = 4.0) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return privsample.synthesize(df, epsilon=epsilon, method="mst", seed=seed).table


def dates(n: int = N, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Timestamp("2020-03-10") + pd.to_timedelta(rng.integers(0, 1000, n), unit="D")


# -- formats: reading and writing ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "pattern, text, back",
    [
        ("%Y-%m-%d", "2024-01-31", "2024-01-31"),
        ("%d/%m/%Y", "31/01/2024", "31/01/2024"),
        ("%m/%d/%Y", "01/31/2024", "01/31/2024"),
        ("%d.%m.%Y", "31.01.2024", "31.01.2024"),
        ("%Y-%m-%dT%H:%M:%S", "2024-01-31T14:22:00", "2024-01-31T14:22:00"),
        ("%Y-%m-%d %H:%M", "2024-01-31 14:22", "2024-01-31 14:22"),
        ("%H:%M", "9:05", "09:05"),
        ("%-I:%M %p", "2:30 PM", "2:30 PM"),
        ("%-I:%M %p", "12:05 AM", "12:05 AM"),
        ("%I:%M:%S %P", "02:30:15 pm", "02:30:15 pm"),
        ("%I:%M %p", "11:05 am", "11:05 AM"),
        ("%d %b %Y", "31 Jan 2024", "31 Jan 2024"),
        ("%-d %b %Y", "01 Feb 2024", "1 Feb 2024"),
        ("%b %-d, %Y", "Jan 3, 2024", "Jan 3, 2024"),
        ("%B %d, %Y", "January 31, 2024", "January 31, 2024"),
        ("%d-%b-%Y", "3-Jan-2024", "03-Jan-2024"),
    ],
)
def test_dates_read_and_write_back_in_their_pattern(pattern, text, back):
    fmt = DateFormat(pattern)
    x = fmt.parse([text, "not a date", None])
    assert np.isfinite(x[0]) and np.isnan(x[1]) and np.isnan(x[2])
    assert fmt.write(x)[0] == back and fmt.write(x)[1] is None


def test_datetimes_with_offsets_are_instants_written_at_one_offset():
    fmt = DateFormat("%Y-%m-%dT%H:%M:%S%:z", "+01:00")
    x = fmt.parse(["2024-01-31T14:22:00+01:00", "2024-01-31T13:22:00+00:00", "2024-01-31T14:22:00+0100"])
    assert x[0] == x[1] == x[2]
    assert list(fmt.write(x)) == ["2024-01-31T14:22:00+01:00"] * 3
    assert DateFormat("%Y-%m-%d").unit == 86400 and DateFormat("%Y-%m-%d %H:%M").unit == 60


@pytest.mark.parametrize(
    "spec, values, numbers, shown",
    [
        ("#,##0.00", ["1,234.50", "999.5", "(1,234.00)"], [1234.5, 999.5, -1234.0], "1,234.50"),
        ("$#,##0.00", ["$1,234.50", "-$12.00", "$0.5"], [1234.5, -12.0, 0.5], "$1,234.50"),
        ("#.##0,00 €", ["1.234,50 €", "12,00 €", "-3,5 €"], [1234.5, 12.0, -3.5], "1.234,50 €"),
        ("0.0%", ["12.5%", "3%", "-0.5%"], [12.5, 3.0, -0.5], "1234.5%"),
        ("#,##0.00;(#,##0.00)", ["(1,234.50)", "12.00"], [-1234.5, 12.0], "1,234.50"),
    ],
)
def test_formatted_numbers_read_and_write_back(spec, values, numbers, shown):
    fmt = NumberFormat.from_spec(spec)
    assert fmt.spec() == spec
    np.testing.assert_allclose(fmt.parse(values), numbers)
    assert fmt.text(1234.5) == shown
    assert np.isnan(fmt.parse(["abc"])[0])


def test_bad_formats_are_refused_in_one_line():
    with pytest.raises(InputError, match="pattern such as"):
        NumberFormat.from_spec("abc")
    with pytest.raises(InputError, match="no date or time field"):
        DateFormat("plain text")


def test_coarse_classes_are_a_partition_of_the_values():
    values = np.array(
        ["12", "1.5", "inf", "-Infinity", "NaN", "2024-01-31", "1,234.50", "$5", "12%", "abc"], dtype=object
    )
    assert list(coarse_classes(values)) == [1, 2, 3, 4, 0, 5, 6, 6, 6, 7]
    assert list(coarse_classes(np.array([1.0, 1.5, np.inf, -np.inf]))) == [1, 2, 3, 4]


def test_day_first_or_month_first_from_the_unambiguous_values():
    dmy = ["31/01/2024", "01/02/2024", "15/03/2024", "03/04/2024"]
    mdy = ["01/31/2024", "02/01/2024", "03/15/2024", "04/03/2024"]
    for texts, want in ((dmy, "%d/%m/%Y"), (mdy, "%m/%d/%Y")):
        counts = np.bincount(date_classes(texts), minlength=len(DATE_CLASSES)).astype(float)
        assert date_format_from(counts).pattern == want


@pytest.mark.parametrize(
    "texts, want",
    [
        (["2:30 PM", "11:05 AM", "9:00 AM", "12:45 PM"], "%-I:%M %p"),
        (["02:30:15 pm", "11:05:00 am", "09:00:59 am"], "%I:%M:%S %P"),
        (["31 Jan 2024", "5 Mar 2024", "12 Dec 2023"], "%-d %b %Y"),
        (["Jan 31, 2024", "Mar 05, 2024", "Dec 01, 2023"], "%b %d, %Y"),
        (["January 31, 2024", "March 5, 2024", "May 1, 2024"], "%B %-d, %Y"),  # 'May' is also an abbreviation
        (["31 January 2024", "05 March 2024"], "%d %B %Y"),
        (["31-Jan-2024", "05-Mar-2024", "01-Dec-2023"], "%d-%b-%Y"),
    ],
)
def test_am_pm_times_and_month_names_are_public_classes(texts, want):
    classes = date_classes(texts)
    assert (classes >= 0).all() and (coarse_classes(np.array(texts, dtype=object)) == 5).all()
    fmt = date_format_from(np.bincount(classes, minlength=len(DATE_CLASSES)).astype(float))
    assert fmt.pattern == want and np.isfinite(fmt.parse(texts)).all()
    assert list(fmt.write(fmt.parse(texts))) == texts  # written back as they came


def test_am_pm_and_month_name_values_out_of_range_are_no_dates():
    bad = ["13:00 PM", "0:30 AM", "2:30PM", "2:30 P.M.", "32 Jan 2024", "Jan 1,2024", "31-JAN-2024", "Sept 1, 2024"]
    assert (date_classes(bad) == -1).all()


def test_number_format_from_counts():
    counts = np.bincount(number_classes(["$1,234.50", "$2,000.00", "$5.25"]), minlength=2400).astype(float)
    assert number_format_from(counts).spec() == "$#,##0.00"


def test_numbers_below_a_thousand_and_grouped_ones_are_one_format():
    """Most values below 1,000 ("$854.44") and a fifth above ("$1,234.50"): one format, with its group separator
    when the grouped class's noisy count passes 2 sd, else without; the grouped format reads both."""
    texts = ["$854.44"] * 780 + ["$1,234.50"] * 220
    counts = np.bincount(number_classes(texts), minlength=2400).astype(float)
    fmt = number_format_from(counts, sigma=50.0)
    assert fmt.spec() == "$#,##0.00" and np.isfinite(fmt.parse(["$854.44", "$1,234.50", "$12,000.00"])).all()
    plain = number_format_from(counts, sigma=200.0)  # 220 records below 3 sd: not told from noise
    assert plain.spec() == "$0.00" and plain.parse(["$1,234.50", "$854.44"]).tolist() == [1234.5, 854.44]


def test_amounts_mostly_below_a_thousand_keep_their_grouped_values():
    amounts = np.round(np.random.default_rng(8).lognormal(6.0, 1.0, N), 2)  # a fifth above 1,000
    df = pd.DataFrame({"charge": [f"${a:,.2f}" for a in amounts]})
    col = discover(df)["charge"]
    assert isinstance(col, Numeric) and col.format == "$#,##0.00" and col.upper > 1000
    out = synth(df)
    assert np.isfinite(NumberFormat.from_spec(col.format).parse(list(out["charge"]))).all()


# -- schema files ----------------------------------------------------------------------------------------------------
def test_schema_date_columns_round_trip_and_read_iso_bounds():
    d = {
        "provenance": "user",
        "columns": [
            {"name": "admitted", "type": "date", "format": "%d/%m/%Y", "lower": "2021-01-01", "upper": "31/12/2024"},
            {"name": "at", "type": "datetime", "lower": "2021-01-01T00:00:00", "upper": "2021-12-31T23:59:59"},
            {"name": "t", "type": "time", "lower": "00:00:00", "upper": "23:59:59", "bins": 24},
            {"name": "cost", "type": "numeric", "format": "$#,##0.00", "lower": 0, "upper": 1000, "bins": 4},
            {"name": "x", "type": "numeric", "lower": 0, "upper": 1, "special": ["inf", "-inf"]},
        ],
    }
    s = Schema.from_dict(d)
    assert s["admitted"].lower == (pd.Timestamp("2021-01-01") - pd.Timestamp("1970-01-01")).days
    assert s["x"].special == ("-inf", "inf") and s["x"].size == 3
    back = Schema.from_dict(s.to_dict())
    assert back.columns == s.columns
    assert s.to_dict()["columns"][0]["lower"] == "01/01/2021"


def test_a_date_bound_in_another_shape_is_refused_naming_the_column():
    d = {"provenance": "user", "columns": [{"name": "d", "type": "date", "lower": "yesterday", "upper": "2024-01-01"}]}
    with pytest.raises(InputError, match="'yesterday' is not a date"):
        Schema.from_dict(d)


def test_encode_decode_keeps_formats_and_special_values():
    s = Schema(
        [
            Numeric("d", 19000, 19400, bins=8, integer=True, format="%d/%m/%Y", temporal="date"),
            Numeric("c", 0, 5000, bins=8, format="$#,##0.00"),
            Numeric("x", -3, 3, bins=4, nullable=True, special=("-inf", "inf")),
        ]
    )
    df = pd.DataFrame({"d": ["05/01/2022", "31/12/2022"], "c": ["$1,234.50", "$5.00"], "x": ["inf", "-1.5"]})
    codes = encode(df, s, release=True)
    assert codes["x"][0] == s["x"].bins + 1  # the code of inf
    out = decode(codes, s, np.random.default_rng(0))
    assert all(len(v.split("/")) == 3 for v in out["d"])
    assert all(v.startswith("$") for v in out["c"])
    assert out["x"][0] == np.inf


# -- private discovery of each type: the rows of a register --------------------------------------------------------
def test_iso_dates_are_discovered_as_dates_and_come_back_as_dates():
    d = dates()
    df = pd.DataFrame({"admitted": d.strftime("%Y-%m-%d"), "g": np.random.default_rng(1).choice(["a", "b"], N)})
    s = discover(df)
    col = s["admitted"]
    assert col.temporal == "date" and col.format == "%Y-%m-%d"
    real = d.strftime("%Y-%m-%d")
    assert real.min() <= col.value_format.text(col.lower) and col.value_format.text(col.upper) <= real.max()
    out = synth(df)
    parsed = pd.to_datetime(out["admitted"], format="%Y-%m-%d")
    assert parsed.notna().mean() > 0.99 and parsed.min() >= d.min() and parsed.max() <= d.max()  # a few noise nulls
    parsed = parsed.dropna()
    by_month = lambda s: s.dt.to_period("M").value_counts(normalize=True)  # noqa: E731
    error = by_month(parsed).subtract(by_month(pd.Series(d)), fill_value=0).abs().sum()
    assert error <= 0.3


def test_day_first_dates_and_datetimes_are_discovered():
    d = dates()
    rng = np.random.default_rng(2)
    at = d + pd.to_timedelta(rng.integers(0, 86400, N), unit="s")
    df = pd.DataFrame({"born": d.strftime("%d/%m/%Y"), "at": at.strftime("%Y-%m-%dT%H:%M:%S")})
    s = discover(df)
    assert s["born"].format == "%d/%m/%Y" and s["at"].temporal == "datetime"
    assert s["at"].format == "%Y-%m-%dT%H:%M:%S"
    out = synth(df)
    for name, pattern in (("born", "%d/%m/%Y"), ("at", "%Y-%m-%dT%H:%M:%S")):
        text = out[name].dropna()
        assert len(text) > 0.99 * len(out) and pd.to_datetime(text, format=pattern).notna().all()


def test_tz_aware_datetimes_in_a_dataframe_keep_their_offset_and_dtype():
    at = pd.Series(dates()).dt.tz_localize("Etc/GMT-1")  # +01:00 all year
    result = privsample.synthesize(
        pd.DataFrame({"at": at, "g": np.random.default_rng(3).choice(["a", "b"], N)}), epsilon=4.0, seed=0
    )
    assert result.schema["at"].temporal == "datetime" and result.schema["at"].offset == "+01:00"
    out = result.table["at"]
    assert out.dtype == at.dtype  # datetime64 with its time zone, as the input
    assert out.min() >= at.min() and out.max() <= at.max()


def test_am_pm_times_and_month_name_dates_are_discovered():
    rng = np.random.default_rng(6)
    minutes = rng.integers(0, 24 * 60, N)
    stamps = dates()
    df = pd.DataFrame(
        {
            "t": [f"{(m // 60 - 1) % 12 + 1}:{m % 60:02d} {'AM' if m < 720 else 'PM'}" for m in minutes],
            "d": [f"{s:%b} {s.day}, {s.year}" for s in stamps],
        }
    )
    schema = discover(df)
    assert (schema["t"].temporal, schema["t"].format) == ("time", "%-I:%M %p")
    assert (schema["d"].temporal, schema["d"].format) == ("date", "%b %-d, %Y")
    out = synth(df)
    assert out["t"].dropna().str.fullmatch(r"(?:[1-9]|1[0-2]):[0-5]\d (?:AM|PM)").all()
    assert out["d"].dropna().str.fullmatch(r"[A-Z][a-z]{2} [1-9]\d?, 20\d\d").all()


def test_times_of_day_are_discovered_in_hours():
    rng = np.random.default_rng(4)
    minutes = rng.integers(8 * 60, 18 * 60, N)
    df = pd.DataFrame({"t": [f"{m // 60:02d}:{m % 60:02d}" for m in minutes]})
    col = discover(df)["t"]
    assert col.temporal == "time" and col.format == "%H:%M"
    assert "08:00" <= col.value_format.text(col.lower) and col.value_format.text(col.upper) <= "17:59"


@pytest.mark.parametrize(
    "shown, spec",
    [(lambda a: f"{a:,.2f}", "#,##0.00"), (lambda a: f"${a:,.2f}", "$#,##0.00"), (lambda a: f"{a / 100:.1f}%", "0.0%")],
)
def test_formatted_numbers_are_numbers_in_their_format(shown, spec):
    amounts = np.round(np.random.default_rng(5).gamma(2.0, 900.0, N), 2)
    df = pd.DataFrame({"amount": [shown(a) for a in amounts]})
    col = discover(df)["amount"]
    assert isinstance(col, Numeric) and col.format == spec
    out = synth(df)
    fmt = NumberFormat.from_spec(spec)
    assert np.isfinite(fmt.parse(list(out["amount"]))).all()
    sample = list(out["amount"][:50])
    assert [fmt.text(v) for v in fmt.parse(sample)] == sample  # each value in the format


def test_thousands_separators_are_not_reported_as_categories():
    amounts = np.random.default_rng(6).gamma(2.0, 900.0, N)
    df = pd.DataFrame({"amount": [f"{a:,.2f}" for a in amounts]})
    with pytest.warns(Warning) as record:
        privsample.synthesize(df, epsilon=4.0, method="mst", seed=0, sample=False)
    assert not any("categor" in str(w.message) for w in record)


def test_a_normal_column_with_five_percent_inf_keeps_its_numbers_and_the_inf():
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=N), 3).astype(object)
    x[rng.random(N) < 0.05] = "inf"
    df = pd.DataFrame({"x": x})
    col = discover(df)["x"]
    assert isinstance(col, Numeric) and col.special == ("inf",)
    out = pd.to_numeric(synth(df)["x"])
    assert 0.02 < float(np.mean(out == np.inf)) < 0.08 and np.isfinite(out).mean() > 0.9


def test_a_normal_column_with_twenty_percent_nan_and_inf_literals_is_not_a_constant():
    rng = np.random.default_rng(8)
    x = np.round(rng.normal(size=N), 3).astype(object)
    r = rng.random(N)
    x[r < 0.1] = "NaN"
    x[(r >= 0.1) & (r < 0.2)] = "-inf"
    df = pd.DataFrame({"x": x})
    col = discover(df)["x"]
    assert isinstance(col, Numeric) and col.nullable and col.special == ("-inf",) and col.upper > col.lower
    out = pd.to_numeric(synth(df)["x"])
    assert out.isna().mean() > 0.05 and (out == -np.inf).mean() > 0.05 and out[np.isfinite(out)].std() > 0.5


# -- privacy: the calendar's noise and accounting ------------------------------------------------------------------
def test_calendar_counts_have_sensitivity_one_and_the_stated_noise():
    """Years then months: each a histogram of disjoint public cells (one record changes one cell by one), with
    sigma = 1/sqrt(2 rho) of the rho charged; the two charges add up to exactly rho."""
    fmt = DateFormat("%Y-%m-%d")
    x = fmt.parse(list(dates(500).strftime("%Y-%m-%d")))
    for extra in (False, True):
        xs = np.append(x, 25000.0) if extra else x  # a neighbour: one more record (2038)
        noise, acc = RecordingNoise(0), Accountant(1.0)
        discover_calendar("d", xs, np.ones(len(xs), np.int64), fmt, acc, noise, rho=0.2, n_hat=500, bins=8,
                          n_null=0)  # fmt: skip
        years, months = noise.calls
        assert years[0][:-1].sum() == len(xs) and years[0][-1] == 0 and months[0].sum() <= len(xs)
        rhos = [e.rho for e in acc.ledger]
        assert math.isclose(sum(rhos), 0.2)
        for (counts, sigma, _), e in zip(noise.calls, acc.ledger):
            assert sigma == pytest.approx(sigma_for_rho(e.rho)) and e.noise_scale == pytest.approx(sigma)
        if not extra:
            base = years[0]
        else:
            assert np.abs(years[0] - base).sum() == 1  # one cell, by one


def test_dates_the_year_counts_do_not_locate_are_the_catch_all():
    """500 dates over 2020-2022 at a budget whose year noise (sd 224 a year, 707 a decade) hides them: no decade nor
    window of decades passes, so the column is the catch-all (where the largest noisy decade was taken, often a
    decade without a record); the months' rho is charged unused, so exactly rho is spent, and a note says why."""
    fmt = DateFormat("%Y-%m-%d")
    x = fmt.parse(list(dates(500).strftime("%Y-%m-%d")))
    lost = 0
    for seed in range(10):
        acc, notes = Accountant(1.0), []
        col, info = discover_calendar("d", x, np.ones(len(x), np.int64), fmt, acc, make_noise(seed, quiet=True),
                                      rho=1e-5 / 0.3, n_hat=500, bins=8, n_null=0, notes=notes)  # fmt: skip
        assert math.isclose(acc.spent, 1e-5 / 0.3)
        if isinstance(col, Numeric):
            continue
        lost += 1
        assert col == Categorical("d", (), nullable=info["nullable"], other="(other)")
        assert info["unlocated"] == "date" and info["format"] == "%Y-%m-%d"
        assert [e.mechanism for e in acc.ledger][1:] == ["none"] and "no year located" in acc.ledger[1].label
        assert "could not be located above the noise" in notes[-1]
    assert lost >= 8, lost
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = discover(pd.DataFrame({"d": dates(500).strftime("%Y-%m-%d")}), rho=3e-4, seed=1)
    entry = s.discovery["columns"][0]
    assert isinstance(s.columns[0], Categorical) and entry["kind"] == "catch-all" and entry["unlocated"] == "date"


def test_dates_within_two_years_are_located_by_their_years_where_no_decade_stands_out():
    """1,000 dates over 2019-2020 at year noise sd 104 (decade sd 329: no decade passes): the windows of two years
    locate them; the bounds always hold dates (the largest noisy decade held none in about half the runs)."""
    fmt = DateFormat("%Y-%m-%d")
    rng = np.random.default_rng(0)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(-350, 350, 1000), unit="D")
    x = fmt.parse(list(days.strftime("%Y-%m-%d")))
    inside = []
    for seed in range(20):
        acc = Accountant(1.0)
        col, info = discover_calendar("d", x, np.ones(len(x), np.int64), fmt, acc, make_noise(seed, quiet=True),
                                      rho=4.647e-05 / 0.3, n_hat=1000, bins=16, n_null=0)  # fmt: skip
        assert math.isclose(acc.spent, 4.647e-05 / 0.3)
        if isinstance(col, Numeric):
            inside.append(np.mean((x >= col.lower) & (x <= col.upper)))
            assert inside[-1] > 0.1, (seed, info["lower"], info["upper"])  # (the months may narrow it further)
    assert len(inside) >= 17 and np.mean(inside) > 0.8, inside


@pytest.mark.parametrize("shape", ["flat", "normal"])
def test_dates_spread_thin_over_decades_are_clipped_little(shape):
    """6,000 birth dates over 80 years (about 75 a year, ramps at both ends) or normal (sd 15 years), at year noise
    sd 52: no year, or only the peak's, passes the core threshold. The year window errs wide (the decades plus a
    pad; thin years beyond the peak grown block by block), so only step 2 cuts: the bounds stay inside the records'
    range and clip under 15% (flat) or 30% (normal) of them on average, where a window cut at the years clipped 43%
    and 80% on the same draws."""
    fmt = DateFormat("%Y-%m-%d")
    rng = np.random.default_rng(0)
    if shape == "flat":
        born = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 5 * 365, 6000), unit="D")
        born -= pd.to_timedelta(rng.integers(18, 95, 6000) * 365 + rng.integers(0, 365, 6000), unit="D")
    else:
        born = pd.Timestamp("1974-01-01") + pd.to_timedelta(np.round(rng.normal(0, 15 * 365.25, 6000)), unit="D")
    x = fmt.parse(list(born.strftime("%Y-%m-%d")))
    clipped = []
    for seed in range(10):
        noise = make_noise(seed, quiet=True)
        col, _ = discover_calendar("d", x, np.ones(len(x), np.int64), fmt, Accountant(1.0), noise, rho=6.2e-4,
                                   n_hat=6000, bins=16, n_null=0)  # fmt: skip
        assert x.min() <= col.lower and col.upper <= x.max(), seed
        clipped.append(np.mean((x < col.lower) | (x > col.upper)))
    assert np.mean(clipped) < (0.15 if shape == "flat" else 0.3), clipped


def test_discovery_charges_the_format_counts_and_stays_within_rho():
    df = pd.DataFrame({"d": dates(1000).strftime("%d/%m/%Y"), "c": [f"${v:,.2f}" for v in np.arange(1000) * 3.5]})
    acc = Accountant(0.3, delta_slack=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private_schema(df, acc, make_noise(0, quiet=True), rho=0.3, delta=1e-9)
    labels = [e.label for e in acc.ledger]
    assert "schema: d: date and time formats" in labels and "schema: c: number formats" in labels
    assert acc.spent <= 0.3 + 1e-12


def test_format_counts_are_a_partition_with_the_stated_noise():
    """The date and number format counts: adding one record changes one cell by one (sensitivity 1), and the noise
    drawn has sigma = 1/sqrt(2 rho) of the rho charged (a sigma other than the charged one fails)."""
    base = pd.DataFrame({"d": dates(400).strftime("%d/%m/%Y"), "c": [f"${v:,.2f}" for v in np.arange(400) * 7.5]})
    more = pd.concat([base, pd.DataFrame({"d": ["29/02/2020"], "c": ["$12,345.67"]})], ignore_index=True)
    vectors = []
    for df in (base, more):
        noise, acc = RecordingNoise(1), Accountant(0.3, delta_slack=1e-9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            private_schema(df, acc, noise, rho=0.3, delta=1e-9)
        entries = [e for e in acc.ledger if e.label.endswith("formats")]
        calls = [c[:2] for c in noise.calls if len(c[0]) in (len(DATE_CLASSES) + 1, 2401)]
        assert len(entries) == len(calls) == 2
        for (counts, sigma), e in zip(calls, entries):
            assert sigma == pytest.approx(sigma_for_rho(e.rho))
        vectors.append([c for c, _ in calls])
    for a, b in zip(*vectors):
        assert np.abs(b - a).sum() == 1


def test_values_of_another_kind_in_a_numeric_column_are_named():
    rng = np.random.default_rng(9)
    x = np.round(rng.normal(size=N), 2).astype(object)
    x[rng.random(N) < 0.04] = "see notes"
    s = discover(pd.DataFrame({"x": x}))
    entry = s.discovery["columns"][0]
    assert isinstance(s["x"], Numeric) and s["x"].nullable
    assert 0.02 < entry["mistyped_share"] < 0.06
    from privsample.data.discovery_report import discovery_losses

    assert any("are not numbers" in loss.what for loss in discovery_losses(s))


def test_type_bounds_keep_a_table_wide_false_alarm_rate():
    """The bound that a column's absent kinds must stay under grows with the table's width, so that noise misreads
    any of its columns with probability at most TYPE_FALSE_ALARM (3 sd per column misread one of 100 in 13%)."""
    from statistics import NormalDist

    from privsample.data.column_types import TYPE_FALSE_ALARM, TYPE_SIGMAS, misread_sigmas

    assert misread_sigmas(1) == misread_sigmas(5) == TYPE_SIGMAS
    for m in (10, 100, 1000):
        z = misread_sigmas(m)
        assert z > misread_sigmas(m // 10)
        assert 1.0 - NormalDist().cdf(z) <= TYPE_FALSE_ALARM / m * (1 + 1e-9)
    assert round(misread_sigmas(100), 2) == 3.72


def test_thin_dates_over_years_keep_their_end_years():
    """1,000 dates spread evenly over five years (17 a month, below a month count's noise sd at this budget): the
    years show where they lie, so the bounds keep the end years (a cut from the months alone went 20 months in from
    each end and clipped most records)."""
    rng = np.random.default_rng(3)
    d = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 1826, 1000), unit="D")
    df = pd.DataFrame({"visit": d.strftime("%d/%m/%Y")})
    for seed in range(5):
        col = discover(df, rho=0.003, seed=seed)["visit"]
        lo = pd.Timestamp("1970-01-01") + pd.Timedelta(days=col.lower)
        hi = pd.Timestamp("1970-01-01") + pd.Timedelta(days=col.upper)
        kept = ((d >= lo) & (d <= hi)).mean()
        assert kept >= 0.85 and lo >= pd.Timestamp("2019-01-01") and hi <= pd.Timestamp("2023-12-31"), (seed, lo, hi)
