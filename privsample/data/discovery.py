"""Differentially private schema discovery (and, re-exported, the loudly non-private draft).

``private_schema`` discovers types, categories and bounds with differential privacy under add/remove-one-record
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
depend on earlier noisy outputs, never on the data directly. Under the accountant's person-level unit (one person,
at most k records: ``privsample.privacy.unit``) every step is calibrated to it (``private_schema``, (g)).

Values are strings or missing (None / pd.NA / NaN), or the numbers of a numeric-typed column (whose text is
``str()`` of each: ``privsample.data.column_values``); a value is *numeric* if ``pd.to_numeric`` parses it
to a finite float.

``draft_schema`` and ``suggest_forbid`` (NO privacy guarantee: a person must review what they read off the data)
live in ``privsample.data.draft`` and are re-exported here, with ``sorted_categories``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from privsample.data.code_discovery import code_kind, run_column
from privsample.data.column_types import (
    FORMAT_SHARE,
    NULLABLE_SIGMAS,
    TYPE_SIGMAS,
    ColumnType,
    DiscoveryRun,
    column_type,
    number_format,
    spend_gaussian,
    temporal_column,
)
from privsample.data.column_scan import Scan, check_names, other_label, scan_values, sorted_categories
from privsample.data.column_values import ValueSource, frame_values
from privsample.data.discovery_plan import (
    COUNT_SHARE,
    MAX_SHARE,
    MIN_SHARE,
    category_threshold,
    code_test_rho,
    column_split,
    largest_share,
    noisy_row_count,
    plan_discovery,
    round_down,
    round_up,
    row_count_rho,
    split_exact,
)
from privsample.data.id_discovery import discover_identifier, free_text
from privsample.data.draft import NUMERIC_MIN_DISTINCT, PEAK_SHARE, draft_schema, suggest_forbid
from privsample.data.grid_rules import presence_threshold
from privsample.data.numeric_discovery import discover_numeric, number_text
from privsample.data.schema import Categorical, Column, FreeText, Identifier, Numeric, Schema
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.mechanisms import sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource
from privsample.privacy.unit import ROW, PrivacyUnit

__all__ = [
    "private_schema",
    "draft_schema",  # re-exported from privsample.data.draft
    "suggest_forbid",  # re-exported from privsample.data.draft
    "sorted_categories",  # re-exported from privsample.data.column_scan
    "NUMERIC_MIN_DISTINCT",
    "PEAK_SHARE",
    "NULLABLE_SIGMAS",
    "TYPE_SIGMAS",
]

MISTYPED_SIGMAS = 4.0  # a numeric column's values that are not numbers are named past this many grid sigmas

# the steps every column shares (``privsample.data.column_types``), under this module's names
_Run = DiscoveryRun
_spend_gaussian = spend_gaussian


def _discover_categorical(
    run: _Run, name: str, sc: Scan, rho: float, notes: list[str]
) -> tuple[Categorical, dict[str, int], float, int]:
    """(column, {released category: its noisy count}, sigma of those counts, noisy count of missing values)."""
    accountant, noise, max_categories = run.accountant, run.noise, run.max_categories
    sigma = sigma_for_rho(rho, accountant.unit.sensitivity(1.0))
    tau = category_threshold(sigma, run.delta_col, accountant.unit.max_rows)
    # Spent by hand (not gaussian_measure): the number of observed values is sensitive, so it must not
    # go into the ledger's details. The spend happens before any noise is drawn.
    accountant.spend(
        rho,
        f"schema: {name}: category counts",
        delta=run.delta_col,
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
    nullable = n_miss > presence_threshold(sigma, run.n_hat, NULLABLE_SIGMAS)
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
        Categorical(name, tuple(cats), nullable=nullable, other=other_label(cats)),
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


def _check_options(
    rho: float, delta: float, max_categories: int, bins: int, share: float | None, count_share: float
) -> None:
    """``InputError`` for a bad argument of ``private_schema`` (public: nothing is read or spent)."""
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


def _row_count_budget(
    accountant: Accountant, rho: float, delta: float, share: float | None, count_share: float, plan_options: dict
) -> float:
    """The up-front budget checks, before any spend: the largest amount the plan may choose fits the accountant
    (else ``BudgetExceeded``), and the smallest leaves room for the row count. Returns the row count's rho."""
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
    count_rho = row_count_rho(rho, count_share)
    lowest = round_down(
        Fraction(share if share is not None else plan_options.get("min_share", MIN_SHARE)) * Fraction(rho)
    )
    if not 0 < count_rho < lowest:  # checked before any spend: the plan can never fail on n_hat
        raise InputError(f"the smallest discovery budget (rho={lowest:.6g}) does not leave room for the row count")
    return count_rho


def _plan(
    source: ValueSource,
    accountant: Accountant,
    noise: NoiseSource,
    rho: float,
    delta: float,
    m: int,
    count_rho: float,
    share: float | None,
    plan_options: dict,
) -> tuple[float, dict[str, Any], list[tuple[float, float]]]:
    """(0): spend ``count_rho`` on the row count; from n_hat and public parameters, the plan and each column's
    (rho_a, rho_b); the plan goes into the ledger (a zero-cost entry). Returns (n_hat, plan, splits)."""
    n_hat, _ = noisy_row_count(source.row_count(), accountant, noise, count_rho)
    k = accountant.unit.max_rows
    rho_cols, plan = plan_discovery(rho, delta, n_hat, m, count_rho=count_rho, share=share, max_rows=k, **plan_options)
    col_rho = split_exact(rho_cols, [1.0] * m)
    splits = [column_split(r, n_hat, k) for r in col_rho]
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
    return n_hat, plan, splits


def _plan_notes(
    plan: dict[str, Any], rho: float, delta: float, unit: PrivacyUnit = ROW, neighbours: str | None = None
) -> list[str]:
    """The schema's first notes: the guarantee and the planned category floor (post-processing)."""
    neighbours = "add/remove-one-record" if unit.is_row else (neighbours or unit.neighbouring)
    notes = [
        f"Discovered with differential privacy: ({plan['share'] * rho:.6g}, {delta:.3g})-approximate zCDP "
        f"under {neighbours} neighbours (column names treated as public). Rare categories are "
        "mapped to the catch-all and bounds may clip extreme values."
    ]
    if plan["min_category_records"] is not None:
        notes.append(
            f"Categories with fewer than about {plan['min_category_records']} records (planned from the "
            "noisy row count) are merged into the catch-all."
        )
    return notes


def _codes_test(run: _Run, name: str, sc: Scan, rho_b: float, spent: float = 0.0) -> tuple[str | None, Any, float]:
    """(d) for an integer column: ``("categories", (b)'s output)`` when its released values are codes,
    ``("values", (column, report))`` when they are a run of integers, else ``(None, None)``; with the rho left
    for (c): ``rho_b`` less ``spent`` (by (e)) and the test's cost, or less ``spent`` only where the test does not
    pay (``code_test_rho``, which takes ``spent`` out of the test's share)."""
    k = run.accountant.unit.max_rows
    rho_c = code_test_rho(rho_b, run.delta_col, run.n_hat, spent, k)
    if not rho_c > 0:
        return None, None, round_down(Fraction(rho_b) - Fraction(spent))
    scratch: list[str] = []
    code = _discover_categorical(run, name, sc, rho_c, scratch)
    floor = category_threshold(code[2], run.delta_col, k) + 2.0 * code[2]
    kind = code_kind(code[1], code[3], run.n_hat, floor) if len(code[1]) < run.max_categories else None
    if kind == "categories":
        run.notes.extend(scratch)
        run.notes.append(
            f"column '{name}': integer codes (released values beyond -8..8 hold most records): "
            "kept as categories, so that no code between them is invented"
        )
        return kind, code, rho_b
    if kind == "values":  # a numeric column with one bin per released integer
        return kind, run_column(name, code[1], code[2], code[3], run.n_hat, floor, run.notes), rho_b
    return None, None, round_down(Fraction(rho_b) - Fraction(spent) - Fraction(rho_c))


def _numeric_column(
    run: _Run, name: str, numbers: np.ndarray, counts: np.ndarray, n_missing: int, rho_b: float, integer: bool,
    nullable: bool, missing_share: float, special: tuple[str, ...] = (),
) -> tuple[Column, dict[str, Any]]:  # fmt: skip
    """(c) for one column, from its distinct values' ``numbers`` (NaN: not a finite number, which goes to the null
    code) and their ``counts``: (column, report entry)."""
    isnum = np.isfinite(numbers)
    cand = {v: int(counts[numbers == float(v)].sum()) for v in special}  # -inf, inf: cells of their own
    text = ~isnum & ~np.isinf(numbers)
    if special:  # and the values that are not numbers (not missing): one more cell
        cand["text"] = int(counts[text].sum())
    col, info = discover_numeric(
        name,
        numbers[isnum],  # the distinct numbers, with their numbers of records as weights
        run.accountant,
        run.noise,
        rho=rho_b,
        delta=run.delta_col,
        integer=integer,
        nullable=nullable,
        n_hat=run.n_hat,
        bins=run.bins,
        notes=run.notes,
        n_null=int(n_missing + (0 if special else counts[text].sum())),  # missing (and not a number): null code
        weights=counts[isnum],
        specials=cand,
    )
    info = dict(info or {})
    mistyped = info.pop("mistyped", None)
    if mistyped is not None and mistyped > MISTYPED_SIGMAS * info.get("null_sigma", math.inf):
        info.update(mistyped_share=mistyped / run.n_hat, mistyped_sd=info["null_sigma"] / run.n_hat)
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
    return col, entry


def _categorical_column(
    run: _Run, name: str, sc: Scan, rho_b: float, code: tuple | None
) -> tuple[Column, dict[str, Any]]:
    """(b) for one column, or the output of the codes test (d) when it found codes: (column, report entry)."""
    col, released, sigma_b, n_miss = code or _discover_categorical(run, name, sc, rho_b, run.notes)
    missing_share = max(n_miss, 0) / run.n_hat if col.nullable else 0.0  # noisy, from the sharper count
    entry = {
        "name": name,
        "kind": "categorical" if col.categories else "catch-all",
        "kept": len(col.categories),
        "catch_all_share": _share_clip(1.0 - sum(released.values()) / run.n_hat - missing_share),
        "counts": released,
        "sigma": sigma_b,
        "nullable": bool(col.nullable),
        "null_count": float(n_miss),
        **({"codes": True} if code is not None else {}),
    }
    return col, entry


def _formatted_column(run: _Run, name: str, sc: Scan, rho_b: float, t: ColumnType) -> tuple[Column, dict[str, Any]]:
    """(e) a column of formatted numbers: its format (``number_format``), then (c) on the numbers read in it."""
    rho_f = round_down(Fraction(rho_b) * Fraction(FORMAT_SHARE))
    fmt, x = number_format(run, name, sc, rho_f)
    integer = t.integer and fmt.decimals == 0
    rest = round_down(Fraction(rho_b) - Fraction(rho_f))
    col, entry = _numeric_column(
        run, name, x, sc.counts, sc.n_missing, rest, integer, t.nullable, t.missing_share, t.special
    )
    if isinstance(col, Numeric):
        col = replace(col, format=fmt.spec())
        entry["format"] = fmt.spec()
    return col, entry


def _discover_column(run: _Run, name: str, sc: Scan, rho_a: float, rho_b: float) -> tuple[Column, dict[str, Any]]:
    """One column: (a), then (f) for a date or formatted column, (e) for a text or integer column, (d) for an
    integer column, then (c) or (b) (``private_schema``'s docstring). Returns (column, report entry); the column is
    an ``Identifier`` or ``FreeText`` when (e) found one."""
    t = column_type(run, name, sc, rho_a)
    if t.kind == "date":
        return temporal_column(run, name, sc, rho_b, t)
    if t.kind == "formatted":
        return _formatted_column(run, name, sc, rho_b, t)
    numeric, integer = t.kind == "numeric", t.integer
    ident = None
    if not numeric or integer:  # (e) identifiers and free text: privsample.data.id_discovery
        present = run.n_hat * (1.0 - t.missing_share)
        ident = discover_identifier(run, name, sc, rho_b, present=present, integer=numeric)
        if ident.column is not None:
            return ident.column, ident.entry
    kind, code = None, None
    if numeric and integer and not ident.delta_spent:  # (e)'s distinct count comes out of the test's share
        kind, code, rho_b = _codes_test(run, name, sc, rho_b, round_down(Fraction(rho_b) - Fraction(ident.rho_b)))
    elif ident is not None:
        rho_b = ident.rho_b
    if kind == "values":
        col, info = code
        entry = {"name": name, "kind": "numeric", "kept": f"[{number_text(col.lower)}, {number_text(col.upper)}]"}
        entry.update({"catch_all_share": None, **info})
        return col, entry
    if numeric and kind is None:
        col, entry = _numeric_column(
            run, name, sc.numbers_or_inf, sc.counts, sc.n_missing, rho_b, integer, t.nullable, t.missing_share,
            t.special,
        )  # fmt: skip
        return col, entry
    col, entry = _categorical_column(run, name, sc, rho_b, code)
    return free_text(ident, col, entry, run.notes) if ident is not None and ident.text else (col, entry)


def _ledger(
    entries: list, share: float, rho: float, delta: float, unit: PrivacyUnit = ROW, neighbours: str | None = None
) -> dict[str, Any]:
    """``schema.ledger``: discovery's entries of the accountant's ledger, in the shape of ``Accountant.to_dict()``."""
    spent_rho = float(sum((Fraction(e.rho) for e in entries), Fraction(0)))
    spent_delta = float(sum((Fraction(e.delta) for e in entries), Fraction(0)))
    return {
        "summary": {
            "rho_total": round_up(Fraction(share) * Fraction(rho)),
            "rho_spent": spent_rho,
            "delta_slack": float(delta),
            "delta_spent": spent_delta,
            "target_epsilon_delta": None,
            "neighbouring": neighbours or unit.neighbouring,
            "private": all(e.private for e in entries),
            "mechanism": "private schema discovery",
            **({} if unit.is_row else {"unit": unit.to_dict()}),
        },
        "entries": [e.to_dict() for e in entries],
    }


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
    column (d) leaves its grid histogram's part unspent, and an identifier or free-text column (e) the part it
    does not use, for the synthesizer.
    ``share=None``: ``rho`` is the whole run's budget and discovery takes the share that
    ``plan_discovery`` chooses from the noisy row count (at most ``largest_share``; ``plan_options`` go to
    ``plan_discovery``). In every case ``count_share * rho`` of it pays for the noisy row count first.

    Guarantee: (rho', delta)-approximate zCDP (Bun & Steinke 2016, Def. 8.1), rho' the amount spent,
    under add/remove-one-record neighbours (or the accountant's person-level unit, (g)); the column *names* (the
    header) are public, nothing else about the table is assumed public (not even the number of rows). Every spend
    goes through ``accountant.spend`` before its noise is drawn, so the cost is in the accountant's ledger (and
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

    (a) Type and nullability: the vector of counts of the public classes of ``format_classes.COARSE`` (missing,
        integral, non-integral, +inf, -inf, date or time, formatted number, text) partitions the column, so
        one record changes one cell by 1: L2 sensitivity 1; discrete Gaussian with sigma_a = 1/sqrt(2 rho_a).
        Decisions (post-processing, ``column_types.column_type``): numeric iff the noisy numbers (the sum of
        five cells) pass 3 times their sd and exceed the other kinds, which hold at most max(z sqrt(2)
        sigma_a, 5% of the noisy total) (coded columns such as 2, 3, 4, "5more" stay categorical); likewise a
        date or time column; integer iff noisy integral > 3 sigma_a and noisy non-integral <= z sigma_a
        (unsure -> float, whose bounds are not rounded); nullable iff noisy missing > 2 sigma_a. z =
        ``misread_sigmas(m)`` (3 sd up to 5 columns, 3.7 for 100): noise misreads a column of the table with
        probability at most 1%.
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
        ledger entry does not record how many values were observed (that number is sensitive). Person-level, (g).
    (c) Numeric bounds: ``privsample.data.numeric_discovery.discover_numeric`` on the column's finite
        numbers (one per record), with rho_b and no delta (its candidates are a public grid); its own
        docstring states its guarantee (rho_b-zCDP). Where its noisy grid histogram does not locate the values
        above the noise, the column is the catch-all (no bounds: kind "catch-all", ``unlocated`` in its report
        entry, named as a loss by ``discovery_report``), as a categorical column that kept no category.
        Non-numeric values in a column judged numeric are not represented by the schema.
    (d) Integer codes: an integer column first spends ``code_test_rho`` (half its rho_b less what (e) spent,
        where a value needs at most 10% of n_hat records to pass; else nothing) on (b)'s thresholded histogram
        of its values, with
        its delta_col (a numeric column has no other use for it). If a released value lies beyond the grid's
        unit cells and the released values hold ``CODE_COVERAGE`` of the noisy non-missing records
        (post-processing), the column is categorical with those values (3-digit codes, years: octave bins
        would invent codes between them) and the rest of its rho_b is not spent; else (c) runs with the rest.
        Either way the column spends at most rho_b and delta_col (adaptive composition).
    (e) Identifiers and free text: every text column and every integer column first runs
        ``privsample.data.id_discovery.discover_identifier`` (its docstring states the mechanisms and their
        guarantees): a noisy number of distinct values (sensitivity 1, ``DISTINCT_SHARE`` of rho_b; not taken where
        n_hat is too small for any column to pass: ``discovery_plan.distinct_rho``); for an
        identifier-like column (noisy distinct count near the noisy number of records with a value) the
        thresholded histogram of its values' format signatures with delta_col; for a mostly distinct text
        column a noisy count of long values. An identifier or free-text column is not synthesized: it is kept
        apart from the schema's columns at its position (``Schema.identifiers``, ``Schema.text``), reported with
        kind "id" or "text", and an identifier leaves the rest of its rho_b unspent (as (d)); an integer column
        whose signatures were counted skips (d) (its delta_col is spent) and goes to (c). Otherwise (b), (c) or
        (d) run with what (e) left. The column still spends at most rho_b and delta_col.
    (f) Dates, times and formatted numbers (``column_types``): ``FORMAT_SHARE`` of rho_b buys noisy counts of
        the values in each public format class (``format_classes.DATE_CLASSES`` with, for a pattern with an
        offset, ``format_classes.OFFSETS``; or ``format_classes.NUMBER_CLASSES``): each value is in one class (or
        none), sensitivity 1;
        the pattern is the largest noisy count (post-processing). A date column's bounds and bins then come
        from ``calendar_discovery.discover_calendar`` (rho-zCDP, no delta), a formatted column's from (c) on the
        numbers read in its format. In (c), -inf and inf are always two more cells of the grid histogram (a record
        is still in one cell), kept as codes of their own when their noisy counts pass its presence threshold.
    (g) Person-level unit (the accountant's ``unit``: neighbours differ by the at most k records of one person).
        Every sensitivity above is per record; a person changes each count vector by at most k in L2 (a path of k
        single-record steps), so every Gaussian step runs at sigma = k/sqrt(2 rho) and the median tree's selections
        at score sensitivity k/2: same rho. Thresholds (b), (d), (e2): the person can also bring new values with
        counts c_1..c_j, sum <= k; the released output differs beyond the Gaussian part only if one of them passes,
        with probability at most sum_i P[c_i + Z > tau], whose largest value is max(P[k + Z > tau], k P[1 + Z >
        tau]) once that is below 1/2 (one value held k times or k values held once: ``privsample.privacy.
        sparse_histogram`` proves it). ``category_threshold`` with k is the smallest tau keeping it <= delta_col:
        (rho_b, delta_col)-approximate zCDP person-level; at k = 1 it is the threshold above. The plan and every
        split use the unit's sigma (``discovery_plan``), so the floors reported are those of the run.

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
    source = frame_values(df) if isinstance(df, pd.DataFrame) else df
    names = check_names(df)
    _check_options(rho, delta, max_categories, bins, share, count_share)
    m = len(names)
    count_rho = _row_count_budget(accountant, rho, delta, share, count_share, plan_options)
    start = len(accountant.ledger)
    n_hat, plan, splits = _plan(source, accountant, noise, rho, delta, m, count_rho, share, plan_options)
    notes = _plan_notes(plan, rho, delta, accountant.unit, accountant.neighbouring)  # k marked if chosen
    run = _Run(accountant, noise, n_hat, round_down(Fraction(delta) / m), max_categories, bins, notes, m)
    columns: list[Column] = []
    outside: list[Identifier | FreeText] = []  # not synthesized (e): at their positions
    report: list[dict[str, Any]] = []
    for i, (name, (rho_a, rho_b)) in enumerate(zip(names, splits)):
        col, entry = _discover_column(run, name, scan_values(source.column_values(name)), rho_a, rho_b)
        if isinstance(col, (Identifier, FreeText)):
            outside.append(replace(col, position=i))
        else:
            columns.append(col)
        report.append(_plain(entry))
    ledger = _ledger(accountant.ledger[start:], plan["share"], rho, delta, accountant.unit, accountant.neighbouring)
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
    ids = [c for c in outside if isinstance(c, Identifier)]
    text = [c for c in outside if isinstance(c, FreeText)]
    return Schema(
        columns, provenance="private", ledger=ledger, notes=notes, discovery=discovery, identifiers=ids, text=text
    )
