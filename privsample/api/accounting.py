"""The budget plan of a synthesis run, and of private schema discovery; what a budget file is charged for them.

For a user budget (epsilon, delta), ``make_accountant`` makes the one accountant of the run:

* With a reviewed schema (provenance "user"): all of rho = cdp_rho(epsilon, delta) goes to the synthesizer.
* With a schema produced by ``privsample schema --private-epsilon``: its ledger (rho_s, delta_s) is added to this
  run's accountant, which covers both: rho = cdp_rho(epsilon, delta - delta_s).
* Without a schema: the domain is discovered privately (``private_schema``). A noisy row count is measured first
  with 1% of rho; from it and public parameters only (post-processing) the discovery share of rho is planned
  (``plan_discovery``: from 5% for large tables up to 50% for small ones, 70% at ~1,000 rows, so that categories
  above a stated frequency survive the threshold), with a delta slack of ``DISCOVERY_DELTA_SHARE * delta`` (10%)
  for thresholded release. An explicit ``schema_share`` fixes the share instead (and the delta slack at
  ``schema_share * delta``). The rest of rho goes to the synthesizer. Domains are never read from the data
  silently.

Every step's (epsilon, delta) is covered by that accountant, which refuses overruns; a budget file is charged its
whole rho and delta slack (``synth_charge``), before the data are read. Public arguments only.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Iterator

from privsample.checks import OptionName, check_budget, python_option
from privsample.data.schema import Schema
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant, LedgerEntry
from privsample.data.table import fingerprint
from privsample.privacy.budget import accountant_charge, as_budget, person_neighbours, refuse_seeded
from privsample.privacy.conversion import cdp_rho
from privsample.privacy.noise import NoiseSource
from privsample.privacy.unit import ROW, PrivacyUnit

DEFAULT_DELTA = 1e-9
DEFAULT_SCHEMA_SHARE = None  # planned from the noisy row count (``plan_discovery``)
DISCOVERY_DELTA_SHARE = 0.1  # delta slack of planned discovery, as a share of the user's delta
DISCOVERY_BINS = 16
DISCOVERY_MAX_CATEGORIES = 64


def worst_case_domain(names: list[str]):
    """The largest domain private discovery can produce for these columns (for size checks before spending).

    A categorical column has at most ``DISCOVERY_MAX_CATEGORIES`` categories plus the catch-all and the
    null code; a numeric one its bins plus the null code, within the same bound. Public: names only."""
    from privsample.synth.pgm import Domain

    cells = max(DISCOVERY_MAX_CATEGORIES + 2, DISCOVERY_BINS + 1)
    return Domain(list(names), [cells] * len(names))


def make_accountant(
    epsilon: float,
    delta: float,
    schema: Schema | None,
    schema_share: float | None,
    name: OptionName = python_option,
    unit: PrivacyUnit = ROW,
) -> tuple[Accountant, float]:
    """(accountant for the whole run, delta reserved for private discovery), for a budget already checked
    (``privsample.checks.check_budget``). ``InputError`` (naming options by ``name``) when a private schema's
    own delta leaves none for the run or ``schema_share`` is not in (0, 1).

    ``schema_share`` None (planned discovery): the discovery delta is ``DISCOVERY_DELTA_SHARE * delta``;
    a fixed share s in (0, 1): ``s * delta``, as its rho share. ``unit``: the privacy unit every spend is calibrated
    to (``privsample.privacy.unit``)."""
    if schema is not None and schema.provenance == "private" and schema.ledger:
        entries = [LedgerEntry.from_dict(e) for e in schema.ledger.get("entries", [])]
        exact = sum((Fraction(e.delta) for e in entries), Fraction(0))
        d_s = float(exact)
        if Fraction(d_s) < exact:  # round up, so that the accountant's exact sum fits the slack
            d_s = math.nextafter(d_s, math.inf)
        if d_s >= delta:
            raise InputError(f"the schema's discovery used delta={d_s:g}, not below {name('delta')} {delta:g}")
        acc = Accountant(cdp_rho(epsilon, delta - d_s), delta_slack=d_s, target=(epsilon, delta), unit=unit)
        acc.absorb(entries)  # raises BudgetExceeded if the schema alone costs more than the budget
        return acc, 0.0
    if schema is not None:
        return Accountant.from_epsilon_delta(epsilon, delta, unit=unit), 0.0
    if schema_share is None:
        d_disc = DISCOVERY_DELTA_SHARE * delta
    elif not (isinstance(schema_share, (int, float)) and 0 < schema_share < 1):
        raise InputError(f"{name('schema_share')} must be in (0, 1) (got {schema_share!r})")
    else:
        d_disc = schema_share * delta
    return Accountant.from_epsilon_delta(epsilon, delta, delta_slack=d_disc, unit=unit), d_disc


def synth_charge(
    epsilon: float,
    delta: float,
    schema: Schema | None,
    schema_share: float | None,
    method: str,
    unit: str | None = None,
) -> dict:
    """What a synthesis run is charged in a budget file, from its checked options and the (public, loaded and
    checked) schema only: its accountant's whole rho and delta slack (``privsample.privacy.budget``)."""
    acc, _ = make_accountant(epsilon, delta, schema, schema_share)
    mechanism = method + ("" if schema is not None else " + discovery")
    charge = accountant_charge("synth", mechanism, acc, epsilon, delta)
    if unit is not None:  # whatever k: the file's relation is the person (``privsample.privacy.budget``)
        charge["neighbouring"] = person_neighbours(unit)
    return charge


def discovery_accountant(epsilon: float, delta: float) -> Accountant:
    """The accountant of private schema discovery on its own: (epsilon, delta) with delta/2 for the thresholds."""
    return Accountant.from_epsilon_delta(epsilon, delta, delta_slack=delta / 2)


def discovery_charge(epsilon: float, delta: float, name: OptionName = python_option, unit: str | None = None) -> dict:
    """What ``discover_schema`` (``privsample schema --private-epsilon``) is charged in a budget file (``unit``: a
    person-level discovery, charged under the file relation of that column's people)."""
    check_budget(epsilon, delta, name)
    acc = discovery_accountant(epsilon, delta)
    charge = accountant_charge("schema --private-epsilon", "private schema discovery", acc, epsilon, delta)
    if unit is not None:
        charge["neighbouring"] = person_neighbours(unit)
    return charge


def discover_schema(
    df,
    epsilon: float,
    delta: float,
    noise: NoiseSource,
    *,
    unit: str | None = None,
    max_rows: int | None = None,
    seed: int | None = None,
) -> Schema:
    """The schema of ``df`` discovered under (epsilon, delta)-DP, as ``privsample schema --private-epsilon``
    discovers it: the whole budget goes to discovery (``private_schema`` with ``rho`` of (epsilon, delta/2)
    and delta/2 for the category thresholds, ``DISCOVERY_BINS`` bins, at most ``DISCOVERY_MAX_CATEGORIES``
    categories a column). The schema has provenance "private" and carries the accountant's ledger, so that a
    later fit with it adds this cost to its own. ``InputError`` for a bad budget, before any spend.

    ``unit``: person-level discovery (``privsample.api.person``): the unit profile fixes k (``max_rows``, else
    chosen), at most k rows of each person are kept (``seed``: reproducible selection, NOT private) and the column
    dropped; the schema's ledger states the unit, and a run with it keeps that k."""
    from privsample.data.discovery import private_schema

    check_budget(epsilon, delta)
    acc = discovery_accountant(epsilon, delta)
    if unit is not None:
        from privsample.api.person import bound_for_discovery

        df = bound_for_discovery(df, unit, max_rows, acc, noise, seed)
    s = private_schema(
        df,
        acc,
        noise,
        rho=acc.rho_total if unit is None else acc.remaining,  # what the unit profile left
        delta=delta / 2,
        bins=DISCOVERY_BINS,
        max_categories=DISCOVERY_MAX_CATEGORIES,
    )
    s.ledger = acc.to_dict()
    s.provenance = "private"
    from privsample.data.discovery_report import warn_losses

    warn_losses(s)  # one DiscoveryLossWarning per column discovery lost (post-processing)
    return s


@contextmanager
def charging(budget: Any, charge: dict, source: Any, output: str = "in-memory result") -> Iterator:
    """The run's context with ``charge`` reserved on ``budget`` (a ``Budget``, its file, or None: no charge) for its
    whole length; only once reserved is ``source`` read, for its ``fingerprint`` (kept in the budget file, with
    ``output``). A run the budget refuses reads nothing. Yields the reservation (None without a budget)."""
    budget = as_budget(budget)
    if budget is None:
        yield None
        return
    with budget.spending(**charge, output=output) as reservation:
        reservation.fingerprint = fingerprint(source)
        yield reservation


def charged(budget: Any, seed: Any, charge: dict, source: Any, run, output: str = "in-memory result"):
    """``run()`` with ``charge`` reserved on ``budget`` (a ``Budget`` or its file) for its whole length
    (``charging``); a seeded run is refused a budget (``refuse_seeded``)."""
    refuse_seeded(budget, seed)
    with charging(budget, charge, source, output):
        return run()


__all__ = [
    "charging",
    "charged",
    "DEFAULT_DELTA",
    "DEFAULT_SCHEMA_SHARE",
    "DISCOVERY_DELTA_SHARE",
    "DISCOVERY_BINS",
    "DISCOVERY_MAX_CATEGORIES",
    "worst_case_domain",
    "make_accountant",
    "synth_charge",
    "discovery_accountant",
    "discovery_charge",
    "discover_schema",
]
