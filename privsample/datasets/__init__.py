"""Bundled demo data: the raw UCI Adult training split (CC BY 4.0; see ATTRIBUTION.md)."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def demo_path() -> Path:
    """Path of the bundled raw UCI Adult table (``adult.csv.gz``, 32,561 rows)."""
    return _HERE / "adult.csv.gz"
