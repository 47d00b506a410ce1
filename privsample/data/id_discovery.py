"""Private detection of identifier and free-text columns, a step of private schema discovery.

``privsample.data.discovery.private_schema`` calls :func:`discover_identifier` for every text column and every
integer column, after the column's type counts (step (a)) and before its categories, codes or grid; it spends
part of the column's rho_b, so the column's total stays within its share. Guarantee: each measurement below is a
zCDP mechanism (approximate zCDP for the thresholded one) under add/remove-one-record neighbours, charged to the
accountant (with a ledger entry) before its noise is drawn; every decision is post-processing of noisy counts, the
noisy row count n_hat and public constants.

(e1) Distinct values. The number of distinct non-missing values of the column, with discrete Gaussian noise
     (Canonne, Kamath & Steinke 2020) of sigma_d = 1/sqrt(2 rho_d), rho_d = ``DISTINCT_SHARE`` of rho_b.
     Sensitivity 1: adding a record adds a value that is new (the count grows by 1) or already present (by 0),
     and a missing value adds nothing; removing one is the reverse. Hence rho_d-zCDP.
     Let present = n_hat less the noisy missing count of (a) (n_hat when the column is not nullable): the noisy
     number of records with a value. The column is *identifier-like* when
     noisy distinct - sigma_d >= ``ID_DISTINCT_SHARE`` (0.9) * present and present >= ``MIN_PRESENT_SIGMAS`` (10)
     sigma_d: post-processing of noisy counts and public numbers (the second condition keeps a small table, whose
     counts are mostly noise, from passing by chance: a column of few distinct values would need noise of about
     9 sigma_d). Where even n_hat is below ``MIN_PRESENT_SIGMAS`` sigma_d, no column can pass, nor (e3) (its sd is
     larger): the count is not taken and the column keeps all of rho_b for its categories, codes or grid
     (``discovery_plan.distinct_rho``: a function of n_hat and public constants, decided before any spend).
(e2) Format, for an identifier-like column. Every value maps to its signature in the public family of formats
     (``privsample.data.identifiers.signatures``: ``{k digits}`` with an optional literal prefix and suffix,
     ``{uuid}``, ``{k hex}``, else "other"). The signature counts are released with the stability-based
     (thresholded) histogram the categories use: a record adds 1 to the count of its value's signature (L2
     sensitivity 1); a signature is released iff its noisy count > tau (the exact discrete Gaussian tail at
     delta_col, ``category_threshold``), so a literal prefix held by one record is released with probability at
     most delta_col (Korolova et al. 2009; Bun & Steinke 2016 section 8). Hence (rho_s, delta_col)-approximate
     zCDP, rho_s = ``SIGNATURE_SHARE`` of rho_b. The column's delta_col is spent here, so an integer column
     skips the codes test (which would spend it again) and goes to the grid. The released signature with the
     largest noisy count (ties by text) that is not "other" and holds ``ID_COVERAGE`` of present (text) or, less
     ``MARGIN_SIGMAS`` of its sd, ``INTEGER_ID_COVERAGE`` (an integer column: a fixed-width number holds nearly all
     its values, while amounts that are mostly distinct rarely share one width, and an amount column taken for an
     identifier loses all it holds; a missed integer identifier is only synthesized as a number) is the format:
     the column is an ``Identifier``, not synthesized, and the rest of its rho_b is left unspent (for the
     synthesizer, as a code column leaves its grid's part). Otherwise a text column is free text (``FreeText``,
     dropped; nearly every value is distinct, so it has no frequent values to keep) and an integer column goes to
     the numeric grid with the rest.
(e3) Long values, for a text column that is not identifier-like but whose noisy distinct count exceeds
     ``TEXT_DISTINCT_SHARE`` of present (mostly distinct answers): the number of records whose value is longer than
     ``LONG_TEXT`` characters, with discrete Gaussian noise of sigma_l = 1/sqrt(2 rho_l), rho_l = ``LONG_SHARE``
     of rho_b; a record adds 1 or 0 to it (sensitivity 1), hence rho_l-zCDP. The column is free text when noisy
     long - sigma_l > ``LONG_TEXT_SHARE`` * present (and present >= ``MIN_PRESENT_SIGMAS`` sigma_l); its
     categories are then discovered with the rest of rho_b as for any column and kept with it (``keep: frequent``
     in the schema file makes it categorical with them).

Adaptive composition: which of (e2), (e3) runs, and what the column's categories, codes or grid receive, are
decided from earlier noisy outputs only, and the amounts spent never exceed rho_b (``split_exact``) and delta_col.
The shares are utility choices; privacy does not depend on them.
Under the accountant's person-level unit (one person, at most k records; ``privsample.privacy.unit``) every count
above has sensitivity k (sigma calibrated to it), and (e2)'s threshold is the person-level one of the categories
(``category_threshold`` with k: the new signatures one person can bring have counts summing to at most k).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.data.column_scan import Scan
from privsample.data.discovery_plan import (
    DISTINCT_SHARE,
    MIN_PRESENT_SIGMAS,
    category_threshold,
    distinct_rho,
    round_down,
    split_exact,
)
from privsample.data.identifiers import OTHER_SIGNATURE, signatures
from privsample.data.schema import Categorical, FreeText, Identifier
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import gaussian_measure, sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource

__all__ = [
    "IdOutcome",
    "discover_identifier",
    "free_text",
    "DISTINCT_SHARE",
    "SIGNATURE_SHARE",
    "LONG_SHARE",
    "ID_DISTINCT_SHARE",
    "ID_COVERAGE",
    "INTEGER_ID_COVERAGE",
    "TEXT_DISTINCT_SHARE",
    "LONG_TEXT",
    "LONG_TEXT_SHARE",
    "MARGIN_SIGMAS",
    "MIN_PRESENT_SIGMAS",
]

SIGNATURE_SHARE = 0.5  # of rho_b: the thresholded counts of the format signatures of an identifier-like column (e2)
LONG_SHARE = 0.05  # of rho_b: the noisy number of long values of a mostly distinct text column (e3)
ID_DISTINCT_SHARE = 0.9  # identifier-like: noisy distinct values - 1 sd >= 90% of the noisy records with a value
ID_COVERAGE = 0.5  # a text column's format must hold half of those records (noisy count) ...
INTEGER_ID_COVERAGE = 0.95  # ... an integer column's 95%, its noisy count less 1 sd (amounts rarely share a width)
TEXT_DISTINCT_SHARE = 0.5  # a text column with more distinct values than this share is checked for long values
LONG_TEXT = 40  # characters: a longer value is long
LONG_TEXT_SHARE = 0.5  # free text: noisy long values - 1 sd > half of the noisy records with a value
MARGIN_SIGMAS = 1.0
INTEGER_FORMAT_SIGMAS = 1.0  # an integer identifier's format count must pass its coverage by this many sd
# MIN_PRESENT_SIGMAS (discovery_plan, 10): ... and only where the records with a value are at least 10 sd of the count


@dataclass
class IdOutcome:
    """What (e) decided for a column. ``column`` and ``entry``: an ``Identifier`` or ``FreeText`` column and its
    report entry, when the column is decided (not synthesized); else None, and the column goes on with ``rho_b``
    (the rest of its budget) to its categories, codes or grid. ``text``: a long-valued text column, whose categories
    are discovered next and kept with it (``free_text``). ``delta_spent``: (e2) spent the column's delta (an integer
    column then skips the codes test)."""

    column: Identifier | FreeText | None
    entry: dict[str, Any] | None
    rho_b: float
    text: bool = False
    delta_spent: bool = False
    distinct_share: float | None = None
    long_share: float | None = None


def _rest(rho_b: float, *spent: float) -> float:
    return round_down(Fraction(rho_b) - sum((Fraction(s) for s in spent), Fraction(0)))


def _signature_counts(sc: Scan) -> tuple[list[str], np.ndarray]:
    """(signatures in text order, the number of records of each): exact, for the mechanism's input only."""
    sig = signatures(sc.values)
    found: dict[str, int] = {}
    for s, c in zip(sig.tolist(), sc.counts.tolist()):
        found[s] = found.get(s, 0) + int(c)
    names = sorted(found)
    return names, np.array([found[s] for s in names], dtype=np.int64)


def _formats(
    accountant: Accountant, noise: NoiseSource, name: str, sc: Scan, rho: float, delta_col: float
) -> tuple[dict[str, int], float]:
    """(e2): the released signatures with their noisy counts, and the counts' sigma (both calibrated to the
    accountant's privacy unit: sensitivity k and the person-level threshold, as the categories)."""
    sigma = sigma_for_rho(rho, accountant.unit.sensitivity(1.0))
    tau = category_threshold(sigma, delta_col, accountant.unit.max_rows)
    # Spent by hand (as the category counts): the number of observed signatures is sensitive and stays out of the
    # ledger. The spend happens before any noise is drawn.
    accountant.spend(
        rho,
        f"schema: {name}: identifier formats",
        delta=delta_col,
        mechanism="discrete Gaussian, thresholded (stability histogram)",
        measured="count of each observed format signature of the values (released iff noisy count > tau)",
        noise_scale=sigma,
        private=noise.private,
        threshold=tau,
        sensitivity=1.0,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    names, counts = _signature_counts(sc)
    noisy = noise.gaussian(counts, sigma) if len(counts) else np.zeros(0, dtype=np.int64)
    return {s: int(v) for s, v in zip(names, noisy) if v > tau}, sigma


def _long_count(sc: Scan) -> int:
    """The number of records whose value is longer than ``LONG_TEXT`` characters (exact: the mechanism's input)."""
    if len(sc.values) == 0:
        return 0
    lengths = np.fromiter((len(str(v)) for v in sc.values), dtype=np.int64, count=len(sc.values))
    return int(sc.counts[lengths > LONG_TEXT].sum())


def discover_identifier(run: Any, name: str, sc: Scan, rho_b: float, *, present: float, integer: bool) -> IdOutcome:
    """(e) of ``private_schema`` for one text or integer column (the module docstring states the mechanism, its
    guarantee and the rules): spends at most ``rho_b`` and the column's ``delta_col``. ``run``: discovery's shared
    state (``accountant``, ``noise``, ``delta_col``, ``notes``, appended to). ``present``: the noisy number of
    records with a value (n_hat less the noisy missing count). ``integer``: an integer column (else text)."""
    accountant, noise, delta_col, notes = run.accountant, run.noise, run.delta_col, run.notes
    present = max(float(present), 1.0)
    rho_d = distinct_rho(rho_b, run.n_hat, accountant.unit.max_rows)  # 0 where n_hat is too small for (e1) and (e3)
    if not rho_d > 0:
        return IdOutcome(None, None, rho_b)
    noisy, sigma_d = gaussian_measure(
        accountant,
        noise,
        np.array([len(sc.values)], dtype=np.int64),
        rho_d,
        f"schema: {name}: distinct values",
        measured="number of distinct non-missing values (sensitivity 1)",
    )
    distinct = int(noisy[0])
    share = max(distinct, 0) / present
    if present >= MIN_PRESENT_SIGMAS * sigma_d and distinct - MARGIN_SIGMAS * sigma_d >= ID_DISTINCT_SHARE * present:
        return _identifier(accountant, noise, name, sc, rho_b, rho_d, present, delta_col, integer, share, notes)
    if integer or distinct <= TEXT_DISTINCT_SHARE * present:
        return IdOutcome(None, None, _rest(rho_b, rho_d), distinct_share=share)
    rho_l = split_exact(rho_b, [LONG_SHARE, 1.0 - LONG_SHARE])[0]
    noisy_long, sigma_l = gaussian_measure(
        accountant,
        noise,
        np.array([_long_count(sc)], dtype=np.int64),
        rho_l,
        f"schema: {name}: long values",
        measured=f"number of records whose value is longer than {LONG_TEXT} characters (sensitivity 1)",
    )
    long = int(noisy_long[0])
    text = present >= MIN_PRESENT_SIGMAS * sigma_l and long - MARGIN_SIGMAS * sigma_l > LONG_TEXT_SHARE * present
    return IdOutcome(
        None, None, _rest(rho_b, rho_d, rho_l), text=text, distinct_share=share, long_share=max(long, 0) / present
    )


def _identifier(
    accountant: Accountant,
    noise: NoiseSource,
    name: str,
    sc: Scan,
    rho_b: float,
    rho_d: float,
    present: float,
    delta_col: float,
    integer: bool,
    share: float,
    notes: list[str],
) -> IdOutcome:
    """(e2) for an identifier-like column."""
    rho_s = split_exact(rho_b, [SIGNATURE_SHARE, 1.0 - SIGNATURE_SHARE])[0]
    released, sigma = _formats(accountant, noise, name, sc, rho_s, delta_col)
    candidates = sorted((s for s in released if s != OTHER_SIGNATURE), key=lambda s: (-released[s], s))
    coverage = INTEGER_ID_COVERAGE if integer else ID_COVERAGE
    margin = INTEGER_FORMAT_SIGMAS * sigma if integer else 0.0  # an integer column: the format's count beyond noise
    best = candidates[0] if candidates and released[candidates[0]] - margin >= coverage * present else None
    unspent = _rest(rho_b, rho_d, rho_s)
    entry: dict[str, Any] = {
        "name": name,
        "distinct_share": min(share, 1.0),
        "formats": released,
        "sigma": sigma,
        "unspent_rho": unspent,
    }
    if best is not None:
        notes.append(
            f"column '{name}': an identifier (noisy distinct values about {min(share, 1.0):.0%} of its records): "
            f"not synthesized; the output gets fresh ids of format {best} drawn independently of the data"
        )
        entry.update({"kind": "id", "kept": best, "format": best, "catch_all_share": None})
        return IdOutcome(Identifier(name, best), entry, unspent, delta_spent=True, distinct_share=share)
    if integer:  # all-distinct numbers without one format: amounts, not ids; the grid takes the rest
        return IdOutcome(None, None, unspent, delta_spent=True, distinct_share=share)
    notes.append(
        f"column '{name}': free text (noisy distinct values about {min(share, 1.0):.0%} of its records, no "
        "identifier format held most of them): dropped from the output"
    )
    entry.update({"kind": "text", "kept": 0, "catch_all_share": None})
    return IdOutcome(FreeText(name), entry, unspent, distinct_share=share)


def free_text(outcome: IdOutcome, col: Categorical, entry: dict[str, Any], notes: list[str]):
    """(column, report entry) of a long-valued text column (``outcome.text``) whose categories ``col`` were
    discovered: a ``FreeText`` column keeping them (for ``keep: frequent``), reported as text. Post-processing."""
    kept = len(col.categories)
    notes.append(
        f"column '{col.name}': free text (noisy share of values longer than {LONG_TEXT} characters about "
        f"{min(outcome.long_share or 0.0, 1.0):.0%}): dropped from the output"
        + (f"; 'keep: frequent' in the schema file keeps its {kept} frequent values" if kept else "")
    )
    entry = dict(entry, kind="text", kept=kept, long_share=outcome.long_share, distinct_share=outcome.distinct_share)
    return FreeText(col.name, None, col.categories), entry
