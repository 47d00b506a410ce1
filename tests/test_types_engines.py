"""Column types on every engine: times with AM/PM, dates with month names, day-first dates, offsets and formatted
numbers are read by the NumPy path and by the SQL engines (DuckDB, Spark) alike, so a seeded run gives the same
schema and the same output whichever engine reads the records."""

from __future__ import annotations

import math
import os
import shutil
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from privsample.data.formats import DateFormat
from privsample.data.sql_dialect import DUCKDB, SPARK
from tests.cli import run


def clock(minutes: np.ndarray, seconds: bool = False, lower: bool = False) -> list[str]:
    """12-hour clock times: ``2:30 PM``, or ``02:30:15 pm`` (``seconds``: minutes are then seconds of the day)."""
    out = []
    for x in minutes:
        if seconds:
            h, m, s = x // 3600, x // 60 % 60, x % 60
            text = f"{(h - 1) % 12 + 1:02d}:{m:02d}:{s:02d}"
        else:
            h, m = x // 60, x % 60
            text = f"{(h - 1) % 12 + 1}:{m:02d}"
        half = "AM" if h < 12 else "PM"
        out.append(f"{text} {half.lower() if lower else half}")
    return out


def am_pm_and_month_names(n: int = 800, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    return pd.DataFrame(
        {
            "t": clock(rng.integers(0, 24 * 60, n)),
            "ts": clock(rng.integers(0, 86400, n), seconds=True, lower=True),
            "d1": [f"{d.day} {d:%b %Y}" for d in days],
            "d2": [f"{d:%b} {d.day}, {d.year}" for d in days],
            "d3": [f"{d:%B} {d.day}, {d.year}" for d in days],
            "d4": [f"{d:%d-%b-%Y}" for d in days],
            "g": rng.choice(["a", "b", "c"], n),
        }
    )


def test_am_pm_and_month_names_give_the_same_seeded_output_on_numpy_and_duckdb(tmp_path, capsys):
    am_pm_and_month_names().to_csv(tmp_path / "t.csv", index=False)
    out = {}
    for engine in ("numpy", "duckdb"):
        path = tmp_path / f"{engine}.csv"
        argv = ["synth", tmp_path / "t.csv", "--epsilon", 2, "--seed", 0, "--engine", engine, "-o", path]
        code, err = run(argv, capsys)
        assert code == 0, err
        out[engine] = path.read_bytes()
    assert out["numpy"] == out["duckdb"]
    syn = pd.read_csv(tmp_path / "numpy.csv", dtype=str, keep_default_na=False)
    shapes = {
        "t": r"(?:[1-9]|1[0-2]):[0-5]\d (?:AM|PM)",
        "ts": r"(?:0[1-9]|1[0-2]):[0-5]\d:[0-5]\d (?:am|pm)",
        "d1": r"[1-9]\d? [A-Z][a-z]{2} 20\d\d",
        "d2": r"[A-Z][a-z]{2} [1-9]\d?, 20\d\d",
        "d3": r"[A-Z][a-z]+ [1-9]\d?, 20\d\d",
        "d4": r"\d\d-[A-Z][a-z]{2}-20\d\d",
    }
    for name, shape in shapes.items():
        values = syn[name][syn[name] != ""]
        assert len(values) > 0 and values.str.fullmatch(shape).all(), name


# (pattern, values): each value reads as the same number (or as none) on every engine
PARSE_CASES = [
    ("%Y-%m-%d", ["2024-01-31", "2024-1-5", "2024-02-30", "24-01-31", "0999-01-01", "02024-01-31", "9999-12-31"]),
    ("%d/%m/%Y", ["31/01/2024", "1/2/2024", "13/13/2024", "31/01/24"]),
    ("%m/%d/%Y %H:%M", ["01/31/2024 14:22", "1/31/2024 9:05", "01/31/2024 24:00"]),
    ("%Y-%m-%dT%H:%M:%S%:z", ["2024-01-31T14:22:00+01:00", "2024-01-31T14:22:00+0100", "2024-01-31T14:22:00+01"]),
    ("%Y-%m-%dT%H:%M:%S%:z", ["2024-01-31T14:22:00Z", "2024-01-31T14:22:00-05:30", "2024-01-31T14:22:00"]),
    ("%Y-%m-%d %H:%M%z", ["2024-01-31 14:22+0100", "2024-01-31 14:22+01:00", "2024-01-31 14:22"]),
    ("%Y-%m-%dT%H:%M:%S.%f", ["2024-01-31T14:22:00.5", "2024-01-31T14:22:00.123456", "2024-01-31T14:22:00"]),
    ("%H:%M", ["9:05", "09:05", "23:59", "24:00"]),
    ("%-I:%M %p", ["2:30 PM", "02:30 pm", "12:05 AM", "13:00 PM", "0:30 AM"]),
    ("%I:%M:%S %P", ["02:30:15 pm", "2:30:15 PM", "11:59:59 am"]),
    ("%-d %b %Y", ["1 Jan 2024", "31 Jan 2024", "01 JAN 2024", "31 Feb 2024", "1 January 2024"]),
    ("%b %-d, %Y", ["Jan 31, 2024", "Sep 1, 2024", "jan 05, 2024", "Sept 1, 2024"]),
    ("%B %d, %Y", ["January 31, 2024", "May 1, 2024", "Jan 1, 2024"]),
    ("%d-%b-%Y", ["31-Jan-2024", "3-Jan-2024"]),
]


def number(x) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def sql_numbers(query, dialect, fmt: DateFormat, values: list[str]) -> list[float | None]:
    exprs = ", ".join(dialect.parse(dialect.lit(v), fmt) for v in values)
    return [number(x) for x in query(f"SELECT {exprs}")]


@pytest.mark.parametrize("pattern, values", PARSE_CASES)
def test_duckdb_reads_dates_as_pandas_does(pattern, values):
    fmt = DateFormat(pattern)
    got = sql_numbers(lambda q: duckdb.sql(q).fetchall()[0], DUCKDB, fmt, values)
    assert got == [number(x) for x in fmt.parse(values)]


NUMBER_CASES = [
    ("$0.00", ["$854.44", "$1,234.50", "$12,000.00", "(5.00)", "x1"]),
    ("$#,##0.00", ["$854.44", "$1,234.50", "$12,000.00"]),
    ("0,0", ["1,5", "1.234,5", "12"]),
    ("0.0%", ["12.5%", "1,250.0%", "-3.0%"]),
]


@pytest.mark.parametrize("spec, values", NUMBER_CASES)
def test_duckdb_reads_formatted_numbers_as_python_does(spec, values):
    from privsample.data.formats import NumberFormat

    fmt = NumberFormat.from_spec(spec)
    got = sql_numbers(lambda q: duckdb.sql(q).fetchall()[0], DUCKDB, fmt, values)
    assert got == [number(x) for x in fmt.parse(values)]


# -- Spark ------------------------------------------------------------------------------------------------------------
def java_found() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if not java_found():
        pytest.skip("Spark needs Java 17+: no 'java' on PATH and JAVA_HOME not set")
    from privsample.marginals.spark_engine import start_session

    session = start_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()


def test_spark_reads_dates_as_pandas_does(spark):
    for pattern, values in PARSE_CASES:
        fmt = DateFormat(pattern)
        got = sql_numbers(lambda q: spark.sql(q).collect()[0], SPARK, fmt, values)
        assert got == [number(x) for x in fmt.parse(values)], pattern


def typed_table(n: int = 600, seed: int = 2) -> pd.DataFrame:
    """An ISO date, a day-first date, a datetime with an offset, a formatted number, a time with AM/PM and a date
    with a month name."""
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    instants = pd.Timestamp("2022-01-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 300 * 86400, n), unit="s")
    at = instants.tz_convert("+01:00").strftime("%Y-%m-%dT%H:%M:%S%z")
    return pd.DataFrame(
        {
            "iso": days.strftime("%Y-%m-%d"),
            "dmy": days.strftime("%d/%m/%Y"),
            "at": at.str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True),
            "cost": [f"${v:,.2f}" for v in rng.gamma(2.0, 800.0, n)],
            "t": clock(rng.integers(0, 24 * 60, n)),
            "mon": [f"{d:%b} {d.day}, {d.year}" for d in days],
            "g": rng.choice(["a", "b"], n),
        }
    )


def test_spark_discovers_and_synthesizes_typed_columns_as_numpy(spark, tmp_path):
    from privsample.api.synthesizer import synthesize

    typed_table().to_csv(tmp_path / "t.csv", index=False)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for engine, opts in (("numpy", None), ("spark", {"spark": spark})):
            runs[engine] = synthesize(
                tmp_path / "t.csv", epsilon=2.0, method="mst", seed=3, engine=engine, rows=200,
                engine_options=opts, method_options={"iters": 30},
            )  # fmt: skip
    a, b = runs["numpy"], runs["spark"]
    formats = {c.name: c.format for c in a.schema.columns if c.name != "g"}
    assert formats == {
        "iso": "%Y-%m-%d",
        "dmy": "%d/%m/%Y",
        "at": "%Y-%m-%dT%H:%M:%S%:z",
        "cost": "$#,##0.00",
        "t": "%-I:%M %p",
        "mon": "%b %-d, %Y",
    }
    assert a.schema["at"].offset == "+01:00"
    assert a.schema.to_dict() == b.schema.to_dict()
    assert a.table.equals(b.table)
