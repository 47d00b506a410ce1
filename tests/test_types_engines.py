"""Column types on every engine: times with AM/PM, dates with month names, day-first dates, offsets and formatted
numbers are read by the NumPy path and by the SQL engines (DuckDB, Spark) alike, so a seeded run gives the same
schema and the same output whichever engine reads the records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from privsample.cli import main


def run(argv, capsys) -> tuple[int, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


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
