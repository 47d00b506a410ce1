"""The steps of private schema discovery that every column shares: its kind from noisy type counts, and the
format of a date, time or formatted-number column from noisy counts of public format classes.

Functions of ``privsample.data.discovery.private_schema``, whose docstring is the privacy argument (steps (a) and
(e)); each spends through the accountant before its noise is drawn.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.data.calendar_discovery import discover_calendar
from privsample.data.column_scan import Scan
from privsample.data.discovery_plan import round_down
from privsample.data.format_classes import (
    COARSE,
    DATE_CLASSES,
    NUMBER_CLASSES,
    OFFSETS,
    coarse_classes,
    date_classes,
    date_format_from,
    number_classes,
    number_format_from,
    offset_classes,
)
from privsample.data.schema import Column
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import gaussian_measure
from privsample.privacy.noise import NoiseSource

__all__ = [
    "DiscoveryRun",
    "ColumnType",
    "column_type",
    "spend_gaussian",
    "format_counts",
    "temporal_column",
    "number_format",
    "NULLABLE_SIGMAS",
    "TEXT_SHARE",
    "TYPE_SIGMAS",
    "TYPE_FALSE_ALARM",
    "misread_sigmas",
    "FORMAT_SHARE",
    "FORMAT_SIGMAS",
]

# -- private discovery: budget split and thresholds (utility choices; privacy does not depend on them)
NULLABLE_SIGMAS = 2.0  # nullable iff noisy missing count > 2 sigma (a spurious null code is cheap)
TEXT_SHARE = 0.05  # a column is numeric only if its noisy text count is at most this share (or 3 sigma)
# numeric: noisy numeric count > 3 sd (of the sum); integer: integral > 3 sigma, non-integral <= 3 sigma
TYPE_SIGMAS = 3.0
# ... where the rare kinds of a column must stay under a bound, that bound is misread_sigmas(m) sd instead (m the
# table's columns): a column holding none of them fails it with probability <= TYPE_FALSE_ALARM over the table
TYPE_FALSE_ALARM = 0.01
FORMAT_SIGMAS = 4.0  # a numeric column is formatted when its noisy count of formatted numbers passes this
FORMAT_SHARE = 0.1  # of a date or formatted column's rho_b: the noisy counts of its public format classes


# ---------------------------------------------------------------------------------------------------
# Private discovery: the steps of ``private_schema`` (its docstring is the privacy argument)
# ---------------------------------------------------------------------------------------------------
def misread_sigmas(columns: int) -> float:
    """The bound, in sds, that the noisy count of kinds a column does not hold must stay under for (a) to read its
    kind: the normal quantile of 1 - TYPE_FALSE_ALARM / ``columns`` (at least TYPE_SIGMAS), so that noise alone
    misreads any column of a table of ``columns`` columns (a number column as text, an integer column as float,
    a date column as text) with probability at most TYPE_FALSE_ALARM: 3 sd up to 5 columns, 3.7 for 100, 4.3 for
    1,000 (3 sd for every column misread one column of 100 in about 13% of the runs). Public: the header."""
    return max(TYPE_SIGMAS, NormalDist().inv_cdf(1.0 - TYPE_FALSE_ALARM / max(int(columns), 1)))


@dataclass(frozen=True)
class DiscoveryRun:
    """What every column's discovery shares: the accountant and noise, n_hat and delta_col (public after the plan),
    the options, and the schema's notes (appended to in column order)."""

    accountant: Accountant
    noise: NoiseSource
    n_hat: float
    delta_col: float
    max_categories: int
    bins: int
    notes: list[str]
    columns: int = 1  # the table's number of columns (public: the header)


def spend_gaussian(
    accountant: Accountant,
    noise: NoiseSource,
    counts: np.ndarray,
    rho: float,
    label: str,
    measured: str,
    **details: Any,
) -> tuple[np.ndarray, float]:
    return gaussian_measure(
        accountant, noise, np.asarray(counts, dtype=np.int64), rho, label, measured=measured, **details
    )


@dataclass(frozen=True)
class ColumnType:
    """What (a) decided for one column (post-processing of its noisy type counts)."""

    kind: str  # "numeric", "formatted" (a number format), "date" (a date, datetime or time pattern) or "text"
    integer: bool
    nullable: bool
    missing_share: float  # noisy share of the records missing if nullable, else 0
    special: tuple[str, ...] = ()  # "-inf", "inf": the grid histogram's cells for them (a numeric column)


def column_type(run: DiscoveryRun, name: str, sc: Scan, rho_a: float) -> ColumnType:
    """(a) for one column: its kind, integer, nullable, and the noisy share of the records missing."""
    true = np.zeros(len(COARSE), dtype=np.int64)
    np.add.at(true, coarse_classes(sc.values), np.asarray(sc.counts, dtype=np.int64))
    true[0] += sc.n_missing
    noisy, sigma_a = spend_gaussian(
        run.accountant,
        run.noise,
        true,
        rho_a,
        f"schema: {name}: type counts",
        f"counts of ({', '.join(COARSE)}) values",
    )
    n_miss, n_int, n_frac, n_pinf, n_ninf, n_date, n_fmt, n_text = (int(v) for v in noisy)
    nullable = n_miss > NULLABLE_SIGMAS * sigma_a
    missing_share = max(n_miss, 0) / run.n_hat if nullable else 0.0  # noisy; records in the null code
    # Numeric only when text is rare: a column such as doors = 2, 3, 4, "5more" is a coded category, and
    # reading it as numbers would send every text value to the null code (post-processing of noisy counts).
    # A sum of k noisy counts has sd sqrt(k) sigma_a: each test is scaled to match, and the kind must outnumber
    # the others, so that noise alone rarely changes a column's kind. Infinite values are numbers.
    numbers = n_int + n_frac + n_pinf + n_ninf + n_fmt
    total = numbers + n_date + n_text
    z = misread_sigmas(run.columns)  # the bounds on kinds a column may lack: a table-wide false-alarm rate
    integer = n_int > TYPE_SIGMAS * sigma_a and n_frac <= z * sigma_a
    kind = "text"
    if (
        numbers > TYPE_SIGMAS * math.sqrt(5.0) * sigma_a
        and numbers > n_text + n_date
        and n_text + n_date <= max(z * math.sqrt(2.0) * sigma_a, TEXT_SHARE * total)
    ):
        kind = "formatted" if n_fmt > FORMAT_SIGMAS * sigma_a else "numeric"  # a false alarm: 3e-5
    elif (
        n_date > TYPE_SIGMAS * sigma_a
        and n_date > numbers + n_text
        and numbers + n_text <= max(z * math.sqrt(6.0) * sigma_a, TEXT_SHARE * total)
    ):
        kind = "date"
    # -inf and inf: two more public cells of a numeric column's grid histogram, which keeps a value when its noisy
    # count there passes the presence threshold (no decision here, so the ledger does not depend on the data)
    special = ("-inf", "inf") if kind in ("numeric", "formatted") else ()
    return ColumnType(kind, integer, nullable, missing_share, special)


def format_counts(
    run: DiscoveryRun, name: str, sc: Scan, rho_f: float, classes: np.ndarray, what: str, k: int, sd: bool = False
):
    """Noisy counts of the values in each of ``k`` public format classes (``classes``: each distinct value's
    class, -1 for none; those go to one more cell): a partition, sensitivity 1. With ``sd``: (counts, noise sd)."""
    true = np.zeros(k + 1, dtype=np.int64)
    np.add.at(true, np.where(classes < 0, k, classes), np.asarray(sc.counts, dtype=np.int64))
    noisy, sigma = spend_gaussian(
        run.accountant,
        run.noise,
        true,
        rho_f,
        f"schema: {name}: {what} formats",
        f"counts of the values in each of {k} public {what} formats, and of the others",
    )
    return (noisy[:k], sigma) if sd else noisy[:k]


def temporal_column(
    run: DiscoveryRun, name: str, sc: Scan, rho_b: float, t: ColumnType
) -> tuple[Column, dict[str, Any]]:
    """(e) a date, datetime or time column: its pattern from noisy counts (and, for a pattern with an offset, the
    offset it is written at, from noisy counts of the public offsets), then ``discover_calendar``."""
    rho_f = round_down(Fraction(rho_b) * Fraction(FORMAT_SHARE))
    rho_p = round_down(Fraction(rho_f) * Fraction(3, 4))
    texts = sc.texts()
    fmt = date_format_from(format_counts(run, name, sc, rho_p, date_classes(texts), "date and time", len(DATE_CLASSES)))
    if fmt.has_offset:  # the rest of rho_f; else it is left unspent (for the synthesizer)
        rho_o = round_down(Fraction(rho_f) - Fraction(rho_p))
        noisy = format_counts(run, name, sc, rho_o, offset_classes(texts), "offset", len(OFFSETS))
        fmt = replace(fmt, offset=OFFSETS[int(np.argmax(noisy))])
    x = fmt.parse(texts)
    col, info = discover_calendar(
        name, x, sc.counts, fmt, run.accountant, run.noise, rho=round_down(Fraction(rho_b) - Fraction(rho_f)),
        n_hat=run.n_hat, bins=run.bins, n_null=sc.n_missing, notes=run.notes,
    )  # fmt: skip
    if "lower" in info:
        entry = {"name": name, "kind": fmt.kind, "kept": f"[{info['lower']}, {info['upper']}]", "catch_all_share": None}
    else:  # not located (``discover_calendar``): only the catch-all (every value with a date goes there)
        entry = {
            "name": name,
            "kind": "catch-all",
            "kept": 0,
            "catch_all_share": min(max(1.0 - t.missing_share, 0.0), 1.0),
        }
    entry.update({k: v for k, v in info.items() if k not in entry})
    return col, entry


def number_format(run: DiscoveryRun, name: str, sc: Scan, rho_f: float):
    """(e) the number format of a column of formatted numbers, from the noisy counts of its formatted values'
    public classes, and the number each distinct value reads as in it (NaN: none)."""
    classes = np.where(coarse_classes(sc.values) == COARSE.index("formatted number"), number_classes(sc.texts()), -1)
    fmt = number_format_from(*format_counts(run, name, sc, rho_f, classes, "number", len(NUMBER_CLASSES), sd=True))
    return fmt, fmt.parse(sc.texts())
