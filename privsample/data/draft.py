"""A loudly NON-PRIVATE schema draft, read straight off the data, for a person to review.

``draft_schema`` reads categories and bounds directly from a DataFrame (NO privacy guarantee; a person must
review it before use); ``suggest_forbid`` lists empty cells among frequent values of pairs of its categorical
columns as candidate structural zeros (NON-PRIVATE too, for the same review). Differentially private discovery
is ``privsample.data.discovery.private_schema``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd

from privsample.data.column_scan import Scan, check_names, other_label, scan_series, sorted_categories
from privsample.data.id_discovery import INTEGER_ID_COVERAGE, LONG_TEXT, LONG_TEXT_SHARE
from privsample.data.identifiers import OTHER_SIGNATURE, signatures
from privsample.data.numeric_discovery import number_text, point_edges
from privsample.data.schema import (
    DEFAULT_OTHER_LABEL,
    MAX_FLOAT_BOUND,
    MAX_INTEGER_BOUND,
    Categorical,
    Column,
    FreeText,
    Identifier,
    Numeric,
    Schema,
)
from privsample.errors import InputError

__all__ = [
    "draft_schema",
    "suggest_forbid",
    "NUMERIC_MIN_DISTINCT",
    "PEAK_SHARE",
    "SUGGEST_MIN_SHARE",
    "SUGGEST_MIN_EXPECTED",
    "SUGGEST_MAX_PAIRS",
    "SUGGEST_MAX",
    "SUGGEST_MAX_PER_PAIR",
]

# -- draft rule ---------------------------------------------------------------------------------
NUMERIC_MIN_DISTINCT = 20  # draft: all-numeric columns with more distinct values than this are numeric
PEAK_SHARE = 0.05  # draft: a number holding at least this share of a numeric column's values gets its own bin


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
    no values at all gets only the catch-all. Before these rules, a column whose values are all distinct and
    nearly all of one format is drafted as an identifier (``type: id`` with that format), and a text column of
    mostly long values as free text (``_identifier_or_text``; noted). Raises ``InputError`` on an empty
    table.
    """
    names = check_names(df)
    if len(df) == 0:
        raise InputError("the table is empty (no rows): nothing to draft a schema from")
    if max_categories < 1 or bins < 1:
        raise InputError("max_categories and bins must be >= 1")
    columns: list[Column] = []
    notes = [
        "NON-PRIVATE DRAFT: categories and bounds were read directly from the data; there is no "
        "privacy guarantee. Review and edit it (remove rare categories, use public bounds) before use."
    ]
    outside: list[Identifier | FreeText] = []
    for i, (name, key) in enumerate(zip(names, df.columns)):
        sc = scan_series(df[key])
        nullable = sc.n_missing > 0
        n_distinct = len(sc.values)
        special = _identifier_or_text(name, sc, notes)
        if special is not None:
            outside.append(replace(special, position=i))
            continue
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
            other = other_label(cats)
        columns.append(Categorical(name, tuple(cats), nullable=nullable, other=other))
    if not columns:
        raise InputError("every column of the table looks like an identifier or free text: nothing to synthesize")
    ids = [c for c in outside if isinstance(c, Identifier)]
    text = [c for c in outside if isinstance(c, FreeText)]
    return Schema(columns, provenance="draft-nonprivate", notes=notes, identifiers=ids, text=text)


DRAFT_ID_WIDTH = 6  # an all-distinct integer column is drafted as an identifier when its values are this wide or more


def _identifier_or_text(name: str, sc: Scan, notes: list[str]) -> Identifier | FreeText | None:
    """The draft's reading of an identifier or free-text column (NON-PRIVATE, for review), else None.

    Identifier: more than ``NUMERIC_MIN_DISTINCT`` values, every one held by one record, text (not all numbers) or
    integers written with the same number of characters, at least ``DRAFT_ID_WIDTH`` (customer numbers, not ages),
    and one format of the family (``identifiers.signatures``) held by ``INTEGER_ID_COVERAGE`` of them. Free text: a
    text column whose values are mostly (over ``LONG_TEXT_SHARE``) longer than ``LONG_TEXT`` characters."""
    n_present = int(sc.counts.sum())
    if n_present == 0:
        return None
    numbers = bool(np.all(sc.is_number))
    texts = [str(v) for v in sc.values]
    if len(sc.values) > NUMERIC_MIN_DISTINCT and bool(np.all(sc.counts == 1)):
        widths = {len(t) for t in texts}
        integer_id = numbers and bool(np.all(sc.is_integral)) and len(widths) == 1 and min(widths) >= DRAFT_ID_WIDTH
        if not numbers or integer_id:
            sig = pd.Series(signatures(np.asarray(texts, dtype=object))).value_counts()
            sig = sig[sig.index != OTHER_SIGNATURE]
            if len(sig) and sig.iloc[0] >= INTEGER_ID_COVERAGE * n_present:
                best = sorted(s for s in sig.index if sig[s] == sig.iloc[0])[0]
                notes.append(f"column '{name}': every value is distinct: drafted as an identifier of format {best}")
                return Identifier(name, best)
    if not numbers:
        long = sum(c for t, c in zip(texts, sc.counts.tolist()) if len(t) > LONG_TEXT)
        if long > LONG_TEXT_SHARE * n_present:
            notes.append(f"column '{name}': mostly values longer than {LONG_TEXT} characters: free text")
            return FreeText(name)
    return None


def _peaks(sc: Scan) -> list[float]:
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
