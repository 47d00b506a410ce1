"""Integer codes in private discovery: what an integer column's released value counts make it.

``privsample.data.discovery.private_schema`` (step (d)) may spend part of an integer column's budget on the
thresholded histogram of its values (the stability histogram of the categories, with the column's delta; see its
docstring for the guarantee). Everything here is post-processing of those released noisy counts:

* :func:`code_kind` decides whether the column is sparse codes (101, 205, 330: kept as categories), a run of
  integers (months 1..12, years, codes 1..40: one bin per integer) or neither (the numeric grid);
* :func:`run_column` builds the ``Numeric`` column of a run and its report.

Shares are summed over counts well above the release threshold only: a count released just above it was
released because its noise was high, and would overstate the share the released values hold.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from privsample.data.numeric_discovery import UNIT_GRID, number_text
from privsample.data.schema import Numeric

__all__ = [
    "code_kind",
    "run_column",
    "CODE_COVERAGE",
    "SPARSE_CODE_COVERAGE",
    "SPARSE_CODE_SPREAD",
    "CODE_MAX_VALUES",
    "RUN_MAX_VALUES",
    "RUN_COVERAGE",
]

# An integer column is a code column when its released values beyond -8..8 are at most CODE_MAX_VALUES, sparse in
# their range, and hold CODE_COVERAGE of the records beyond them (counting only counts well above the release
# threshold); SPARSE_CODE_COVERAGE when they are very sparse (their range more than SPARSE_CODE_SPREAD times their
# number). Adult's hours-per-week, whose released round hours 20..60 (8 values) held about 79%, stays numeric at
# 90%; a register's 8 diagnosis codes 101..777, the two rarest (10%) below the trusted floor, came to 0.89-0.92 and
# at 90% fell to the numeric grid in two seeds of three (codes invented between them): very sparse, 80% keeps them.
CODE_COVERAGE = 0.9
SPARSE_CODE_COVERAGE = 0.8
SPARSE_CODE_SPREAD = 8
CODE_MAX_VALUES = 32
RUN_MAX_VALUES = 48  # ... a run of integers (months, years, codes 1..40) at most this long, one bin each, when its
RUN_COVERAGE = 0.95  # released values hold this share of the records with a value


def code_kind(released: dict[str, int], n_miss: int, n_hat: float, floor: float) -> str | None:
    """What an integer column's released values (noisy counts) make it; post-processing of released counts.

    ``"categories"``: codes such as 101, 205, 330. The released values beyond the unit cells -8..8 of the numeric
    grid (which keep small values exactly anyway) are at most ``CODE_MAX_VALUES``, sparse in their range (more
    than twice as many integers between the smallest and the largest) and hold at least ``CODE_COVERAGE`` of the
    records beyond the unit cells (``SPARSE_CODE_COVERAGE`` when the range holds more than ``SPARSE_CODE_SPREAD``
    times as many integers as there are released values: such codes are not the round values of a quantity);
    the records beyond the unit cells are n_hat minus the noisy missing count minus the released unit values' (a
    capital gain of 0 plus a few round amounts is not a code).
    ``"values"``: a run of integers such as months 1..12, years 2015..2023 or codes 1..40: one of them beyond
    -8..8, each spelled once, at most ``RUN_MAX_VALUES`` integers from the smallest to the largest, and holding at
    least ``RUN_COVERAGE`` of the records with a value (they become one bin each; octave bins would invent values).
    None: neither (ages over 70 years, amounts): the numeric grid. (The caller also passes None when the released
    values reached ``max_categories``, where the largest noisy counts were kept: not a whole run.)
    The shares held count only released values whose noisy count is at least ``floor`` (the release threshold plus
    2 sigma): a value released near the threshold was released because its noise was high, and summing such counts
    overstates the share (a run 8..15 holding 93% of a column came out above 95% and clipped its 0..4)."""
    numbers = pd.to_numeric(pd.Series(list(released), dtype=object), errors="coerce").to_numpy(dtype=float)
    counts = np.asarray(list(released.values()), dtype=float)
    counts = np.where(counts >= floor, counts, 0.0)  # for the shares only
    ok = np.isfinite(numbers)
    beyond = ok & (np.abs(numbers) > UNIT_GRID)
    k = int(beyond.sum())
    if k == 0:
        return None
    present = max(n_hat - max(n_miss, 0), 1.0)
    spread = numbers[beyond].max() - numbers[beyond].min() + 1
    if k <= CODE_MAX_VALUES and spread > 2 * k:
        rest = max(present - counts[ok & ~beyond].sum(), 1.0)
        need = SPARSE_CODE_COVERAGE if spread > SPARSE_CODE_SPREAD * k else CODE_COVERAGE
        return "categories" if counts[beyond].sum() >= need * rest else None
    values = numbers[ok]
    run = values.max() - values.min() + 1
    if len(np.unique(values)) == len(values) and run <= RUN_MAX_VALUES and counts[ok].sum() >= RUN_COVERAGE * present:
        return "values"
    return None


def run_column(
    name: str, released: dict[str, int], sigma: float, n_miss: int, n_hat: float, floor: float, notes: list[str]
):
    """(``Numeric`` column, report) of an integer column whose released values are a run (``code_kind``
    "values"): bounds at the smallest and largest released value, one bin per integer; an integer between them
    that was not released is ``unsupported`` (the synthesizers give it probability 0). The null code holds the
    missing values and the released non-numbers (noisy counts). Post-processing of released counts."""
    from privsample.data.grid_rules import presence_threshold

    numbers = pd.to_numeric(pd.Series(list(released), dtype=object), errors="coerce").to_numpy(dtype=float)
    counts = np.asarray(list(released.values()), dtype=float)
    ok = np.isfinite(numbers)
    lower, upper = float(numbers[ok].min()), float(numbers[ok].max())
    kept = {float(v) for v in numbers[ok]}
    null_count = float(max(n_miss, 0) + counts[~ok].sum())
    nullable = null_count > presence_threshold(sigma, n_hat)
    outside = max(n_hat - null_count - counts[ok & (counts >= floor)].sum(), 0.0)  # as ``code_kind``: not overstated
    col = Numeric(name, lower, upper, bins=int(upper - lower + 1), integer=True, nullable=nullable)
    info = {
        "integer": True,
        "clipped_share": min(max(outside / n_hat, 0.0), 1.0),
        "clipped_sd": sigma * math.sqrt(len(released) + 2) / n_hat,  # the estimate's noise sd (n_hat's included)
        "tail_floor": None,
        "null_count": null_count,
        "null_sigma": sigma,
        "nullable": bool(nullable),
        "lower": lower,
        "upper": upper,
        "bins": col.bins,
        "points": [],
        "binning": "unit",
        "unsupported": [float(v) for v in np.arange(lower, upper + 1) if float(v) not in kept],
        "counts": {number_text(v): float(c) for v, c in zip(numbers[ok], counts[ok])},
        "sigma": sigma,
        "codes": True,
    }
    notes.append(
        f"column '{name}': integers {number_text(lower)}..{number_text(upper)}, one bin each (released values; "
        f"about {info['clipped_share']:.0%} of the records outside, a noisy estimate)"
    )
    return col, info
