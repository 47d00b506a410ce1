"""Contribution bounding for person-level privacy: at most ``k`` rows of each person (privacy unit) are kept.

A table whose rows belong to people (the values of a unit column: a patient, a customer) is released under
person-level neighbours: two tables are neighbours when one holds all the rows of one person more. Every mechanism
downstream is calibrated to tables that differ by at most ``k`` rows (``privsample.privacy.unit``); this module makes
that true. ``bound`` keeps, of each person's rows, ``min(k, rows)`` chosen uniformly at random, independently per
person, from random keys of the OS CSPRNG (``secrets``; a seed makes them reproducible and the run NOT PRIVATE),
and drops the unit column: it is never released, counted or written. A row with no unit value cannot be attributed
to a person and is left out (a per-row rule).

Stability (the proof the mechanisms rely on). Let D = X + P, P the rows of person p, and D' = X its neighbour. Give
every row its random key; the rows kept of each other person depend on that person's rows and keys only, so with
the keys of X's rows shared, B(D) = B(X) + S with S the <= k kept rows of p, and B(D') = B(X): the bounded tables
differ by adding or removing at most k rows. A mechanism M that is rho-zCDP for tables differing by at most k rows
then gives, for every fixed draw of the keys, Renyi divergences at most rho * alpha between M(B(D)) and M(B(D'));
the output of M(B(.)) is the mixture over the keys, and Renyi divergence is quasi-convex in the pair (Mironov 2017,
"Renyi differential privacy"; van Erven & Harremoes 2014), so M(B(.)) is rho-zCDP under person-level neighbours.

``size_histogram`` gives the exact number of people per cell of the public grid ``UNIT_GRID`` of rows per person:
sensitive, for the unit profile mechanism only (``privsample.data.unit_profile``), in which one person moves one
cell by one.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import numpy as np
import pandas as pd

# Public grid of rows per person: cell i holds the people with UNIT_GRID[i] <= rows < UNIT_GRID[i + 1] (the last
# cell is open). Its values are also the candidates for a privately chosen k.
UNIT_GRID: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 192, 256, 512, 1024)


def unit_codes(values) -> tuple[np.ndarray, int]:
    """(a code per row: its person, -1 for a row with no unit value; the number of people). Reads the column."""
    s = pd.Series(values, dtype=object)
    missing = s.isna().to_numpy()
    codes, uniques = pd.factorize(s.astype(str).where(~missing, None), use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    codes[missing] = -1
    return codes, len(uniques)


def size_histogram(values, grid: Sequence[int] = UNIT_GRID) -> np.ndarray:
    """People per cell of ``grid`` by their number of rows (exact: use only through a mechanism)."""
    codes, people = unit_codes(values)
    sizes = np.bincount(codes[codes >= 0], minlength=people)
    cells = np.searchsorted(np.asarray(grid), sizes, side="right") - 1
    return np.bincount(cells[cells >= 0], minlength=len(grid)).astype(np.int64)


def random_keys(n: int, seed: int | None = None) -> np.ndarray:
    """``n`` random 64-bit keys: from the OS CSPRNG, or from ``seed`` (reproducible, NOT private)."""
    if seed is not None:
        return np.random.default_rng([seed, 0x5EED]).integers(0, 2**63 - 1, size=n, dtype=np.int64)
    return np.frombuffer(secrets.token_bytes(8 * n), dtype=np.int64).copy() if n else np.zeros(0, dtype=np.int64)


def keep_mask(values, k: int, seed: int | None = None) -> np.ndarray:
    """The rows ``bound`` keeps: of each person's rows, ``min(k, rows)`` chosen uniformly at random by the keys
    (``random_keys``); a row with no unit value is left out."""
    if not (isinstance(k, int) and k >= 1):
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    codes, _ = unit_codes(values)
    n = len(codes)
    order = np.lexsort((random_keys(n, seed), codes))  # by person, then by random key
    sorted_codes = codes[order]
    start = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1] if n else np.zeros(0, dtype=np.int64)
    rank = np.arange(n) - np.repeat(start, np.diff(np.r_[start, n]))
    keep = np.zeros(n, dtype=bool)
    keep[order] = (rank < k) & (sorted_codes >= 0)
    return keep


def bound(frame: pd.DataFrame, column: str, k: int, seed: int | None = None) -> pd.DataFrame:
    """``frame`` with at most ``k`` rows of each value of ``column`` (``keep_mask``) and without that column, its
    rows in their order, indexed 0..n-1."""
    keep = keep_mask(frame[column].to_numpy(dtype=object), k, seed)
    return frame.loc[keep].drop(columns=[column]).reset_index(drop=True)


__all__ = ["UNIT_GRID", "unit_codes", "size_histogram", "random_keys", "keep_mask", "bound"]
