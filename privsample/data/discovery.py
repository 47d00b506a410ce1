"""Schema discovery: a loudly non-private draft, and differentially private discovery.

``draft_schema`` reads categories and bounds straight off the data (NO privacy guarantee; a person
must review it); ``suggest_forbid`` lists empty cells among frequent values of pairs of its categorical
columns as candidate structural zeros (NON-PRIVATE too, for the same review). ``private_schema``
discovers types, categories and bounds with differential privacy under add/remove-one-record
neighbours and charges its cost to the accountant:

* the number of records: one discrete Gaussian count (Canonne, Kamath & Steinke 2020), from which,
  with public parameters only, ``plan_discovery`` sizes the discovery budget (post-processing; both in
  ``privsample.data.discovery_plan``);
* type and nullability: discrete Gaussian counts;
* categories: the stability-based (thresholded) histogram with discrete Gaussian noise, released
  values pass the smallest tau at which a count-1 value passes with probability <= delta_col, from the
  exact tail of the discrete Gaussian (``privsample.privacy.sparse_histogram``; at most the sub-Gaussian
  bound 1 + sigma sqrt(2 ln(1/delta_col)); Korolova et al. 2009; Bun & Steinke 2016 section 8);
* numeric bounds, codes and bins: ``privsample.data.numeric_discovery.discover_numeric`` (a Gaussian histogram
  on a public grid, no delta).

All steps are composed adaptively by the one accountant (a zCDP filter): each step's budget may
depend on earlier noisy outputs, never on the data directly.

Values are strings or missing (None / pd.NA / NaN), or the numbers of a numeric-typed column (whose text is
``str()`` of each: ``privsample.data.column_values``); a value is *numeric* if ``pd.to_numeric`` parses it
to a finite float.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import pandas as pd

from privsample.data.column_values import ColumnValues, ValueSource, frame_values, series_values, value_numbers
from privsample.data.discovery_plan import (
    COUNT_SHARE,
    MAX_SHARE,
    MIN_SHARE,
    row_count_rho,
    category_threshold,
    code_test_rho,
    column_split,
    largest_share,
    noisy_row_count,
    plan_discovery,
    round_down,
    round_up,
    split_exact,
)
from privsample.data.code_discovery import code_kind, run_column
from privsample.data.numeric_discovery import number_text, point_edges, presence_threshold
from privsample.data.schema import (
    DEFAULT_OTHER_LABEL,
    MAX_FLOAT_BOUND,
    MAX_INTEGER_BOUND,
    Categorical,
    Column,
    Numeric,
    Schema,
)
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.mechanisms import gaussian_measure, sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource

__all__ = [
    "draft_schema",
    "private_schema",
    "NUMERIC_MIN_DISTINCT",
    "PEAK_SHARE",
    "NULLABLE_SIGMAS",
    "TYPE_SIGMAS",
]

# -- draft rule ---------------------------------------------------------------------------------
NUMERIC_MIN_DISTINCT = 20  # draft: all-numeric columns with more distinct values than this are numeric
PEAK_SHARE = 0.05  # draft: a number holding at least this share of a numeric column's values gets its own bin

# -- private discovery: budget split and thresholds (utility choices; privacy does not depend on them)
NULLABLE_SIGMAS = 2.0  # nullable iff noisy missing count > 2 sigma (a spurious null code is cheap)
TEXT_SHARE = 0.05  # a column is numeric only if its noisy text count is at most this share (or 3 sigma)
# numeric: noisy numeric count > 3 sd (of the sum); integer: integral > 3 sigma, non-integral <= 3 sigma
TYPE_SIGMAS = 3.0


# ---------------------------------------------------------------------------------------------------
# Reading a column
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Scan:
    """The distinct non-missing values of a column with their counts and parsed numbers."""

    n_missing: int
    # distinct non-missing values in canonical order (``ColumnValues``): object array of str, or the int64 / float64
    # array of a numeric-typed column (``str()`` of an element is its text)
    values: np.ndarray
    counts: np.ndarray  # int64 count of each value
    numbers: np.ndarray  # float64 parsed value, NaN where not a finite number

    @property
    def is_number(self) -> np.ndarray:
        return np.isfinite(self.numbers)

    @property
    def is_integral(self) -> np.ndarray:
        x = self.numbers
        ok = np.isfinite(x)
        out = np.zeros(x.shape, dtype=bool)
        out[ok] = np.floor(x[ok]) == x[ok]
        return out


def _scan(column: pd.Series) -> _Scan:
    return _scan_of(series_values(column))


def _scan_of(cv: ColumnValues) -> _Scan:
    """The scan of a column's exact counts (``ColumnValues``: canonical order, the same on every engine)."""
    return _Scan(cv.n_missing, cv.values, cv.counts, value_numbers(cv.values))


def sorted_categories(values: Sequence[str]) -> list[str]:
    """Sort numerically when every value parses as a finite number, else as strings."""
    vals = [str(v) for v in values]
    if not vals:
        return []
    nums = np.asarray(pd.to_numeric(pd.Series(vals, dtype=object), errors="coerce"), dtype=np.float64)
    if np.all(np.isfinite(nums)):
        order = sorted(range(len(vals)), key=lambda i: (nums[i], vals[i]))
        return [vals[i] for i in order]
    return sorted(vals)


def _other_label(categories: Sequence[str]) -> str:
    label, i, taken = DEFAULT_OTHER_LABEL, 2, set(categories)
    while label in taken:
        label, i = f"{DEFAULT_OTHER_LABEL[:-1]} {i})", i + 1
    return label


def _check_names(table: pd.DataFrame | ValueSource) -> list[str]:
    """The column names of a DataFrame or of a ``ValueSource``: text, at least one, distinct."""
    if isinstance(table, ValueSource):
        names = [str(n) for n in table.names]
    elif isinstance(table, pd.DataFrame):
        names = [str(c) for c in table.columns]
    else:
        raise InputError(f"expected a pandas DataFrame, got {type(table).__name__}")
    if not names:
        raise InputError("the table has no columns")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"the table has duplicate column names: {', '.join(dup)}")
    return names


# ---------------------------------------------------------------------------------------------------
# Non-private draft
# ---------------------------------------------------------------------------------------------------
def draft_schema(df: pd.DataFrame, *, max_categories: int = 50, bins: int = 16, peaks: bool = True) -> Schema:
    """NON-PRIVATE draft schema read directly off ``df`` (must be reviewed before use).

    Rule per column: *numeric* if every non-missing value parses as a finite number and there are
    more than ``NUMERIC_MIN_DISTINCT`` (20) distinct values; bounds are the observed min/max (limited to
    +-``MAX_FLOAT_BOUND`` if ``upper - lower`` would overflow), ``integer`` if all values are integral
    and within +-``MAX_INTEGER_BOUND``, ``bins = min(bins, upper - lower + 1)`` for integers. Every
    number held by at least ``PEAK_SHARE`` (5%) of the column's non-missing values (a peak, such as 40
    hours a week or a capital gain of 0) gets a bin of its own, cut out of those equal-width bins as
    private discovery marks a point mass (``privsample.data.numeric_discovery.point_edges``: [v - 1/2,
    v + 1/2) for integers, [v, nextafter(v)) for floats, so that it decodes to v; a float peak at the
    maximum moves ``upper`` to nextafter(v), and that last, closed bin decodes to v or nextafter(v)); the
    column then has explicit ``edges`` (the peaks are listed in a note), else ``bins`` as before.
    ``peaks=False`` leaves them out (the evaluation's fixed measuring domain, ``real_domain``).
    Otherwise *categorical* with the sorted distinct values (numerically if all look numeric); a
    column with more than ``max_categories`` distinct values keeps the most frequent ones plus an
    ``"(other)"`` catch-all (noted). ``nullable`` iff the column has missing values. A column with
    no values at all gets only the catch-all. Raises ``InputError`` on an empty table.
    """
    names = _check_names(df)
    if len(df) == 0:
        raise InputError("the table is empty (no rows): nothing to draft a schema from")
    if max_categories < 1 or bins < 1:
        raise InputError("max_categories and bins must be >= 1")
    columns: list[Column] = []
    notes = [
        "NON-PRIVATE DRAFT: categories and bounds were read directly from the data; there is no "
        "privacy guarantee. Review and edit it (remove rare categories, use public bounds) before use."
    ]
    for name, key in zip(names, df.columns):
        sc = _scan(df[key])
        nullable = sc.n_missing > 0
        n_distinct = len(sc.values)
        if n_distinct > NUMERIC_MIN_DISTINCT and bool(np.all(sc.is_number)):
            lo, hi = float(sc.numbers.min()), float(sc.numbers.max())
            integer = bool(np.all(sc.is_integral)) and max(abs(lo), abs(hi)) <= MAX_INTEGER_BOUND
            if not math.isfinite(hi - lo):  # keep every arithmetic on the bounds finite
                lo, hi = max(lo, -MAX_FLOAT_BOUND), min(hi, MAX_FLOAT_BOUND)
                notes.append(
                    f"column '{name}': bounds limited to +-{MAX_FLOAT_BOUND:.4g} (upper - lower must be a "
                    "finite number); values beyond them are clipped"
                )
            b = int(min(bins, hi - lo + 1)) if integer else int(bins)
            col = Numeric(name, lo, hi, bins=b, integer=integer, nullable=nullable)
            columns.append(_with_peaks(col, _peaks(sc), name, notes) if peaks else col)
            continue
        if n_distinct == 0:
            columns.append(Categorical(name, (), nullable=nullable, other=DEFAULT_OTHER_LABEL))
            notes.append(f"column '{name}' has no non-missing values: only the catch-all category")
            continue
        other = None
        keep = sc.values
        if n_distinct > max_categories:
            order = np.argsort(-sc.counts, kind="stable")[:max_categories]
            keep = sc.values[np.sort(order)]
            notes.append(
                f"column '{name}' has {n_distinct} distinct values: kept the {max_categories} most "
                f"frequent, the rest map to the catch-all"
            )
        cats = sorted_categories(list(keep))
        if n_distinct > max_categories:
            other = _other_label(cats)
        columns.append(Categorical(name, tuple(cats), nullable=nullable, other=other))
    return Schema(columns, provenance="draft-nonprivate", notes=notes)


def _peaks(sc: _Scan) -> list[float]:
    """The numbers held by at least ``PEAK_SHARE`` of the column's non-missing values (spellings of one number,
    such as 40 and 40.0, counted together), sorted."""
    ok = sc.is_number
    numbers, inverse = np.unique(sc.numbers[ok], return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=sc.counts[ok], minlength=len(numbers))
    total = float(counts.sum())
    if total <= 0:
        return []
    return [float(v) for v, c in zip(numbers, counts) if c / total >= PEAK_SHARE]


def _with_peaks(col: Numeric, peaks: list[float], name: str, notes: list[str]) -> Numeric:
    """``col`` with a bin of its own for every peak inside its bounds; ``col`` itself if each already has one."""
    lo, hi = col.lower, col.upper
    peaks = [v for v in peaks if lo <= v <= hi]
    if not col.integer and peaks and peaks[-1] == hi:  # room for the point bin [v, nextafter(v)]
        up = float(np.nextafter(hi, np.inf))
        if math.isfinite(up) and math.isfinite(up - lo):
            hi = up
        else:
            peaks = peaks[:-1]
    if not peaks:
        return col
    edges = point_edges(col.bin_edges[1:-1].tolist(), peaks, lo, hi, col.integer)
    if edges == col.bin_edges.tolist():  # every peak already alone in its bin (unit bins, say)
        return col
    notes.append(
        f"column '{name}': a bin of its own for each value held by {PEAK_SHARE:.0%} or more of its non-missing values: "
        f"{', '.join(number_text(v) for v in peaks)} (read off the data: remove any that is itself sensitive)"
    )
    return Numeric(col.name, lo, hi, edges=tuple(edges), integer=col.integer, nullable=col.nullable)


SUGGEST_MIN_SHARE = 0.01  # a value is frequent when it holds at least this share of the records
SUGGEST_MIN_EXPECTED = 10.0  # an empty cell is suggested when independence expects at least this many records
SUGGEST_MAX_PAIRS = 300  # pairs of categorical columns looked at (the first ones, schema order)
SUGGEST_MAX = 20  # suggestions listed
SUGGEST_MAX_PER_PAIR = 5  # ... at most this many per pair of columns, so that one dense pair does not fill the list


def suggest_forbid(
    df: pd.DataFrame,
    schema: Schema,
    *,
    min_share: float = SUGGEST_MIN_SHARE,
    min_expected: float = SUGGEST_MIN_EXPECTED,
    max_pairs: int = SUGGEST_MAX_PAIRS,
    max_suggestions: int = SUGGEST_MAX,
) -> list[dict[str, str]]:
    """NON-PRIVATE candidate structural zeros: ``{a: value, b: value}`` for empty cells of ``df``.

    For pairs of categorical columns (the first ``max_pairs`` in schema order), among values holding at
    least ``min_share`` of the records, a combination no record has although independence would expect
    at least ``min_expected`` records; the ``max_suggestions`` with the largest expectation, largest
    first (at most ``SUGGEST_MAX_PER_PAIR`` per pair). It reads the data directly: the list is for a
    person to review, keeping only combinations that are impossible by public knowledge (an empty cell
    may be merely rare). Cost: one count per pair.
    """
    from privsample.data.encoding import encode

    cats = [c for c in schema.columns if isinstance(c, Categorical) and len(c.categories) > 1]
    if len(df) == 0 or len(cats) < 2:
        return []
    sub = Schema(cats, na_values=schema.na_values, provenance="draft-nonprivate")
    codes = encode(df[[c.name for c in cats]], sub, release=True)
    n = len(next(iter(codes.values())))
    if n == 0:
        return []
    freq = {}
    for c in cats:
        share = np.bincount(codes[c.name], minlength=c.size)[: len(c.categories)] / n
        freq[c.name] = (share, share >= min_share)
    found = []
    for a, b in list(itertools.combinations(cats, 2))[:max_pairs]:
        (pa, fa), (pb, fb) = freq[a.name], freq[b.name]
        if not (fa.any() and fb.any()):
            continue
        joint = np.bincount(codes[a.name] * b.size + codes[b.name], minlength=a.size * b.size).reshape(a.size, b.size)
        expected = n * np.outer(pa, pb)
        empty = (joint[: len(a.categories), : len(b.categories)] == 0) & np.outer(fa, fb) & (expected >= min_expected)
        cells = sorted(zip(*np.nonzero(empty)), key=lambda ij: -expected[ij])[:SUGGEST_MAX_PER_PAIR]
        for i, j in cells:
            found.append((-float(expected[i, j]), a.name, a.categories[i], b.name, b.categories[j]))
    found.sort()
    return [{an: av, bn: bv} for _, an, av, bn, bv in found[:max_suggestions]]


# ---------------------------------------------------------------------------------------------------
# Private discovery
# ---------------------------------------------------------------------------------------------------
def _spend_gaussian(
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


def _discover_categorical(
    name: str,
    sc: _Scan,
    accountant: Accountant,
    noise: NoiseSource,
    rho: float,
    delta: float,
    max_categories: int,
    notes: list[str],
    n_hat: float | None = None,
) -> tuple[Categorical, dict[str, int], float, int]:
    """(column, {released category: its noisy count}, sigma of those counts, noisy count of missing values)."""
    sigma = sigma_for_rho(rho)
    tau = category_threshold(sigma, delta)
    # Spent by hand (not gaussian_measure): the number of observed values is sensitive, so it must not
    # go into the ledger's details. The spend happens before any noise is drawn.
    accountant.spend(
        rho,
        f"schema: {name}: category counts",
        delta=delta,
        mechanism="discrete Gaussian, thresholded (stability histogram)",
        measured="count of each observed value (released iff noisy count > tau) and of the missing values",
        noise_scale=sigma,
        private=noise.private,
        threshold=tau,
        sensitivity=1.0,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    # Missing is a public value: its count is one more cell of the same vector (a record is missing or holds one
    # value: sensitivity 1), released without a threshold; the column is nullable when it passes NULLABLE_SIGMAS
    # sigma, or more where sigma is small against n_hat (``presence_threshold``).
    both = noise.gaussian(np.append(np.asarray(sc.counts, dtype=np.int64), sc.n_missing), sigma)
    noisy, n_miss = both[:-1], int(both[-1])
    nullable = n_miss > presence_threshold(sigma, n_hat, NULLABLE_SIGMAS)
    passed = np.flatnonzero(noisy > tau)
    if len(passed) > max_categories:  # keep the largest noisy counts, ties by value (post-processing)
        order = sorted(passed.tolist(), key=lambda i: (-int(noisy[i]), str(sc.values[i])))
        passed = np.asarray(order[:max_categories], dtype=np.int64)
        notes.append(f"column '{name}': more than {max_categories} categories passed; kept the largest")
    released = {str(sc.values[i]): int(noisy[i]) for i in passed}
    cats = sorted_categories(list(released))
    if not cats:
        notes.append(f"column '{name}': no category passed the threshold; only the catch-all remains")
    return (
        Categorical(name, tuple(cats), nullable=nullable, other=_other_label(cats)),
        {c: released[c] for c in cats},
        sigma,
        n_miss,
    )


def _plain(obj: Any) -> Any:
    """``obj`` with NumPy scalars and tuples turned into plain Python values (for YAML/JSON)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _share_clip(x: float) -> float:
    return float(min(max(x, 0.0), 1.0))


def private_schema(
    df: pd.DataFrame | ValueSource,
    accountant: Accountant,
    noise: NoiseSource,
    *,
    rho: float,
    delta: float,
    bins: int = 16,
    max_categories: int = 50,
    share: float | None = 1.0,
    count_share: float = COUNT_SHARE,
    **plan_options: Any,
) -> Schema:
    """Discover a schema with differential privacy, charging the accountant at most ``rho`` and ``delta``.

    ``df``: a pandas DataFrame, or a ``ValueSource`` (``privsample.data.column_values``: the column names, the
    number of records and, column by column, its exact value counts, as an out-of-core engine gives them).
    Either way each column's distinct values are taken in canonical order (``ColumnValues``), so the same data
    gives the same noisy answers on every engine under the same seeded noise.

    Budget. ``share=1.0`` (default): spend ``rho``. ``share=s``: spend ``s * rho``. Exactly, except that a code
    column (d) leaves its grid histogram's part unspent, for the synthesizer.
    ``share=None``: ``rho`` is the whole run's budget and discovery takes the share that
    ``plan_discovery`` chooses from the noisy row count (at most ``largest_share``; ``plan_options`` go to
    ``plan_discovery``). In every case ``count_share * rho`` of it pays for the noisy row count first.

    Guarantee: (rho', delta)-approximate zCDP (Bun & Steinke 2016, Def. 8.1), rho' the amount spent,
    under add/remove-one-record neighbours; the column *names* (the header) are public, nothing else
    about the table is assumed public (not even the number of rows). Every spend goes through
    ``accountant.spend`` before its noise is drawn, so the cost is in the accountant's ledger (and
    copied into ``schema.ledger``). The budget is checked up front against the largest amount the
    plan may choose: nothing is spent if it does not fit.

    (0) Row count: n_hat = max(n + Z, 1), discrete Gaussian, sensitivity 1 (``noisy_row_count``).
        The plan (``plan_discovery``) and every per-column split below are functions of n_hat and
        public parameters only: post-processing. The plan is recorded in the ledger (a zero-cost entry).
    The columns' budget is split evenly over the m columns; in a column, ``column_split`` gives the
    type counts the rho for sigma_a = n_hat/30 (clamped to 5%..``TYPE_SHARE`` of the column's rho)
    and the rest pays for (b) or (c), chosen from (a)'s noisy output (adaptive composition). A record
    touches one value of every column, so the per-column costs add up, and the deltas of the columns
    (at most delta/m each) add up to at most delta.

    (a) Type and nullability: the vector (missing, integral numbers, non-integral numbers,
        non-numeric) partitions the column, so one record changes one cell by 1: L2 sensitivity 1;
        discrete Gaussian with sigma_a = 1/sqrt(2 rho_a). Decisions (post-processing): numeric iff
        noisy numeric (integral + non-integral) > 3 sqrt(2) sigma_a (its sd) and above the noisy
        non-numeric count, which is at most max(3 sigma_a, 5% of the noisy non-missing total) (coded
        columns such as 2, 3, 4, "5more" stay categorical); integer iff noisy
        integral > 3 sigma_a and noisy non-integral <= 3 sigma_a (unsure -> float, whose bounds are
        not rounded); nullable iff noisy missing > 2 sigma_a (a spurious null code is cheap).
    (b) Categories: stability-based histogram. Noisy counts (discrete Gaussian, sigma_b) of every
        *observed* value; a value is released iff its noisy count > tau (``category_threshold``: the exact
        discrete Gaussian tail, at most 1 + sigma_b sqrt(2 ln(1/delta_col))),
        delta_col = delta/m. If the neighbour's extra record has a value already present, the count
        vectors differ by 1 in one cell (rho_b-zCDP). If its value is new, its count is 1 and it is
        released with probability P[1 + Z > tau] <= delta_col (summed exactly for the discrete Gaussian,
        Canonne-Kamath-Steinke 2020; sparse_histogram.stability_threshold); otherwise the
        outputs have the same distribution. Hence (rho_b, delta_col)-approximate zCDP. Released values
        are sorted (numerically if all look numeric) -- never in data order -- and capped at
        ``max_categories`` by noisy count, ties by value (post-processing). Every column gets the
        ``"(other)"`` catch-all for unreleased values; if nothing passes it is the only category. The
        ledger entry does not record how many values were observed (that number is sensitive).
    (c) Numeric bounds: ``privsample.data.numeric_discovery.discover_numeric`` on the column's finite
        numbers (one per record), with rho_b and no delta (its candidates are a public grid); its own
        docstring states its guarantee (rho_b-zCDP).
        Non-numeric values in a column judged numeric are not represented by the schema.
    (d) Integer codes: an integer column first spends ``code_test_rho`` (half its rho_b, where a value needs at
        most 10% of n_hat records to pass; else nothing) on (b)'s thresholded histogram of its values, with
        its delta_col (a numeric column has no other use for it). If a released value lies beyond the grid's
        unit cells and the released values hold ``CODE_COVERAGE`` of the noisy non-missing records
        (post-processing), the column is categorical with those values (3-digit codes, years: octave bins
        would invent codes between them) and the rest of its rho_b is not spent; else (c) runs with the rest.
        Either way the column spends at most rho_b and delta_col (adaptive composition).

    ``schema.discovery`` reports the plan and, per column, its kind, what was kept and the share of
    records in the catch-all: 1 - (sum of the released categories' noisy counts + noisy missing count
    if nullable) / n_hat, clipped to [0, 1] -- post-processing of released noisy counts, no exact figure.
    A categorical column's entry also keeps the released noisy counts and their sigma (``counts``,
    ``sigma``: outputs of (b), so public): the synthesizers reuse them as 1-way measurements
    (``privsample.synth.base.discovery_measurements``) at no further cost.
    Thresholds and shares are utility choices (constants of this module and of ``discovery_plan``); privacy
    does not depend on them.
    ``schema.ledger`` is ``{"summary": {...}, "entries": [LedgerEntry.to_dict(), ...]}`` (the shape
    of ``Accountant.to_dict()``, so ``Accountant.from_dict(schema.ledger)`` rebuilds the cost).
    """
    from privsample.data.numeric_discovery import discover_numeric

    source = frame_values(df) if isinstance(df, pd.DataFrame) else df
    names = _check_names(df)
    if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho > 0):
        raise InputError(f"rho must be a finite number > 0, got {rho!r}")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise InputError(f"delta must be in (0, 1) (the category threshold needs it), got {delta!r}")
    if max_categories < 1 or bins < 1:
        raise InputError("max_categories and bins must be >= 1")
    if share is not None and not (0 < share <= 1):
        raise InputError(f"the discovery share must be in (0, 1] (got {share!r})")
    if not 0 < count_share < 1:
        raise InputError(f"count_share must be in (0, 1) (got {count_share!r})")
    cap = (
        share
        if share is not None
        else largest_share(plan_options.get("max_share", MAX_SHARE), plan_options.get("small_max_share"))
    )
    limit = round_down(Fraction(cap) * Fraction(rho))
    if not accountant.can_spend(limit, delta):
        raise BudgetExceeded(
            f"budget exceeded: private schema discovery asks up to rho={limit:.6g}, "
            f"delta={delta:.3g} but only rho={accountant.remaining:.6g} and delta="
            f"{accountant.delta_slack - accountant.delta_spent:.3g} remain (nothing was measured)"
        )
    m = len(names)
    count_rho = row_count_rho(rho, count_share)
    lowest = round_down(
        Fraction(share if share is not None else plan_options.get("min_share", MIN_SHARE)) * Fraction(rho)
    )
    if not 0 < count_rho < lowest:  # checked before any spend: the plan can never fail on n_hat
        raise InputError(f"the smallest discovery budget (rho={lowest:.6g}) does not leave room for the row count")
    start = len(accountant.ledger)
    n_hat, _ = noisy_row_count(source.row_count(), accountant, noise, count_rho)
    rho_cols, plan = plan_discovery(rho, delta, n_hat, m, count_rho=count_rho, share=share, **plan_options)
    col_rho = split_exact(rho_cols, [1.0] * m)
    splits = [column_split(r, n_hat) for r in col_rho]
    if any(min(a, b) <= 0 for a, b in splits):
        raise InputError(f"rho={rho!r} is too small to split over {m} columns")
    accountant.spend(
        0.0,
        "schema: plan",
        mechanism="post-processing",
        measured="discovery budget from the noisy row count and public parameters",
        private=noise.private,
        **{k: plan[k] for k in ("rule", "share", "n_hat", "min_category_records")},
    )
    delta_col = round_down(Fraction(delta) / m)
    spent_share = plan["share"]
    notes = [
        f"Discovered with differential privacy: ({spent_share * rho:.6g}, {delta:.3g})-approximate zCDP "
        "under add/remove-one-record neighbours (column names treated as public). Rare categories are "
        "mapped to the catch-all and bounds may clip extreme values."
    ]
    if plan["min_category_records"] is not None:
        notes.append(
            f"Categories with fewer than about {plan['min_category_records']} records (planned from the "
            "noisy row count) are merged into the catch-all."
        )
    columns: list[Column] = []
    report: list[dict[str, Any]] = []
    for name, (rho_a, rho_b) in zip(names, splits):
        sc = _scan_of(source.column_values(name))
        isnum, integ = sc.is_number, sc.is_integral
        true = np.array(
            [
                sc.n_missing,
                int(sc.counts[integ].sum()),
                int(sc.counts[isnum & ~integ].sum()),
                int(sc.counts[~isnum].sum()),
            ],
            dtype=np.int64,
        )
        noisy, sigma_a = _spend_gaussian(
            accountant,
            noise,
            true,
            rho_a,
            f"schema: {name}: type counts",
            "counts of (missing, integral, non-integral, non-numeric) values",
        )
        n_miss, n_int, n_frac, n_text = (int(v) for v in noisy)
        nullable = n_miss > NULLABLE_SIGMAS * sigma_a
        missing_share = max(n_miss, 0) / n_hat if nullable else 0.0  # noisy; records in the null code
        # Numeric only when text is rare: a column such as doors = 2, 3, 4, "5more" is a coded category, and
        # reading it as numbers would send every text value to the null code (post-processing of noisy counts).
        # The numeric count is the sum of two noisy counts (sd sqrt(2) sigma_a): its test is scaled to match,
        # and numbers must outnumber text, so that noise alone rarely makes a text column numeric.
        numeric = (
            (n_int + n_frac) > TYPE_SIGMAS * math.sqrt(2.0) * sigma_a
            and (n_int + n_frac) > n_text
            and n_text <= max(TYPE_SIGMAS * sigma_a, TEXT_SHARE * (n_int + n_frac + n_text))
        )
        code = None
        if numeric:
            integer = n_int > TYPE_SIGMAS * sigma_a and n_frac <= TYPE_SIGMAS * sigma_a
            rho_c = code_test_rho(rho_b, delta_col, n_hat) if integer else 0.0
            if rho_c > 0:  # (d) the codes test: thresholded counts of the values first
                scratch: list[str] = []
                code = _discover_categorical(
                    name, sc, accountant, noise, rho_c, delta_col, max_categories, scratch, n_hat
                )
                floor = category_threshold(code[2], delta_col) + 2.0 * code[2]
                kind = code_kind(code[1], code[3], n_hat, floor) if len(code[1]) < max_categories else None
                if kind == "categories":
                    notes.extend(scratch)
                    notes.append(
                        f"column '{name}': integer codes (released values beyond -8..8 hold most records): "
                        "kept as categories, so that no code between them is invented"
                    )
                    numeric = False
                elif kind == "values":
                    col, info = run_column(name, code[1], code[2], code[3], n_hat, floor, notes)
                    numeric = None  # done: a numeric column with one bin per released integer
                else:
                    code, rho_b = None, round_down(Fraction(rho_b) - Fraction(rho_c))
        if numeric is None:
            entry = {"name": name, "kind": "numeric", "kept": f"[{number_text(col.lower)}, {number_text(col.upper)}]"}
            entry.update({"catch_all_share": None, **info})
        elif numeric:
            x = np.repeat(sc.numbers[isnum], sc.counts[isnum])
            col, info = discover_numeric(
                name,
                x,
                accountant,
                noise,
                rho=rho_b,
                delta=delta_col,
                integer=integer,
                nullable=nullable,
                n_hat=n_hat,
                bins=bins,
                notes=notes,
                n_null=int(sc.n_missing + sc.counts[~isnum].sum()),  # missing or not a number: the null code
            )
            info = dict(info or {})
            if isinstance(col, Numeric):
                entry = {
                    "name": name,
                    "kind": "numeric",
                    "kept": f"[{number_text(col.lower)}, {number_text(col.upper)}]",
                    "catch_all_share": info.pop("catch_all_share", None),
                }
            else:  # no bounds: only the catch-all (every non-missing value goes there)
                entry = {
                    "name": name,
                    "kind": "catch-all",
                    "kept": 0,
                    "catch_all_share": _share_clip(1.0 - missing_share),
                }
            entry.update({k: v for k, v in info.items() if k not in entry})
        else:
            col, released, sigma_b, n_miss = code or _discover_categorical(
                name, sc, accountant, noise, rho_b, delta_col, max_categories, notes, n_hat
            )
            missing_share = max(n_miss, 0) / n_hat if col.nullable else 0.0  # noisy, from the sharper count
            entry = {
                "name": name,
                "kind": "categorical" if col.categories else "catch-all",
                "kept": len(col.categories),
                "catch_all_share": _share_clip(1.0 - sum(released.values()) / n_hat - missing_share),
                "counts": released,
                "sigma": sigma_b,
                "nullable": bool(col.nullable),
                "null_count": float(n_miss),
                **({"codes": True} if code is not None else {}),
            }
        columns.append(col)
        report.append(_plain(entry))
    entries = accountant.ledger[start:]
    spent_rho = float(sum((Fraction(e.rho) for e in entries), Fraction(0)))
    spent_delta = float(sum((Fraction(e.delta) for e in entries), Fraction(0)))
    ledger = {
        "summary": {
            "rho_total": round_up(Fraction(spent_share) * Fraction(rho)),
            "rho_spent": spent_rho,
            "delta_slack": float(delta),
            "delta_spent": spent_delta,
            "target_epsilon_delta": None,
            "neighbouring": "add/remove one record",
            "private": all(e.private for e in entries),
            "mechanism": "private schema discovery",
        },
        "entries": [e.to_dict() for e in entries],
    }
    if not noise.private:
        notes.append(f"{SEEDED_LABEL}: this schema was discovered with seeded noise")
    discovery = _plain(
        {
            "n_hat": n_hat,
            "share": plan["share"],
            "rule": plan["rule"],
            "min_category_records": plan["min_category_records"],
            "min_category_fraction": plan["min_category_fraction"],
            "columns": report,
        }
    )
    return Schema(columns, provenance="private", ledger=ledger, notes=notes, discovery=discovery)
