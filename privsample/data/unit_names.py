"""The privacy unit's column among a table's column names: public checks from the names alone.

``check_unit_column`` refuses a person-level run whose unit column the table lacks; ``hint_unit`` gives a record-level
run on a table with a column named like a person's identifier one ``PrivacyUnitHint`` suggesting ``--privacy-unit``
(``privsample.api.person`` runs person-level releases). Both read column names only, which are public; the run
leaves out of the hint the columns its schema holds as identifiers (one row per person: reviewed, or discovered
from a noisy distinct count).
"""

from __future__ import annotations

import warnings

from privsample.checks import OptionName
from privsample.errors import InputError, PrivacyUnitHint


def check_unit_column(unit: str, names: list, where: str, name: OptionName) -> None:
    """``InputError`` unless the unit's column is among ``names`` (a table's column names: public)."""
    if unit not in names:
        raise InputError(f"{name('privacy_unit')} {unit!r} is not a column of {where}")


# Column names that usually name a person: ``id``, ``*_id`` / ``*id`` (patient_id, customerid), or a word for one.
_PERSON_WORDS = ("patient", "customer", "client", "person", "member", "user", "employee", "worker", "student")


def unit_candidates(names) -> list[str]:
    """The column names that look like a person's identifier (public: the names only)."""
    out = []
    for n in map(str, names):
        low = n.strip().lower()
        words = low.replace("-", "_").replace(" ", "_").split("_")
        if low == "id" or low.endswith(("_id", " id", "-id")) or any(w in _PERSON_WORDS for w in words):
            out.append(n)
    return out


def hint_unit(names, name: OptionName) -> None:
    """A ``PrivacyUnitHint`` for a record-level run on a table with a column named like a person's identifier:
    from the column names alone, one warning naming the first."""
    found = unit_candidates(names)
    if found:
        warnings.warn(
            f"column '{found[0]}' looks like a person's identifier: if a person can have several rows, protect "
            f"people, not rows, with {name('privacy_unit')} {found[0]} (see the guide's 'Privacy unit' page)",
            PrivacyUnitHint,
            stacklevel=3,
        )


__all__ = ["check_unit_column", "unit_candidates", "hint_unit"]
