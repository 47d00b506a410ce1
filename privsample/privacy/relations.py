"""The neighbouring relations of budget files and runs, and what a run of one relation counts in a file of another.

Neighbouring relations. A file is for add/remove-one neighbours (default) or replace-one neighbours (n
public). MBDE is integrally private (any two datasets): it fits either. In an add/remove file, replace-one
releases are refused (they say nothing about adding a record). In a replace-one file an add/remove
ρ-zCDP release counts 4ρ (group privacy for 2 records: a replacement is a removal and an addition, Bun &
Steinke 2016, Prop. 1.9); one with δ_s > 0 (private discovery) is refused. People (``person:COLUMN``, runs with
``--privacy-unit COLUMN``, whatever their k): person-level releases of that column compose as above. A record-level
release is refused there (it bounds nothing for a person with many records). A person-level ρ-zCDP release counts
4ρ in a record-level file (add/remove or replace-one): adding one record to a person's rows is removing the person
and adding them back with one record more, two person-level steps (group privacy, as above); one with δ_s > 0 is
refused.
"""

from __future__ import annotations

from privsample.errors import InputError

ADD_REMOVE = "add/remove one record"
REPLACE_ONE = "replace one record (n public)"
ANY_TWO = "any two datasets"
RELATIONS = {"add-remove": ADD_REMOVE, "replace-one": REPLACE_ONE}
PERSON = "add/remove one person of "  # + the unit column: person-level neighbours (``person_neighbours``)


def person_neighbours(column: str) -> str:
    """The relation of person-level runs and files for the unit ``column``, whatever their k."""
    return PERSON + column


def relation_of(neighbouring: str) -> str:
    """ADD_REMOVE, REPLACE_ONE, ANY_TWO or ``person_neighbours(column)`` for a ledger's neighbouring text (a
    person-level ledger says "add/remove one person (≤ k rows of COLUMN)")."""
    if neighbouring.startswith(PERSON):
        return neighbouring
    if neighbouring.startswith("add/remove one person") and " rows of " in neighbouring:
        return person_neighbours(neighbouring.split(" rows of ", 1)[1].rstrip(")"))
    text = neighbouring.lower()
    if "any two" in text or "integral" in text:
        return ANY_TWO
    if "replace" in text:
        return REPLACE_ONE
    return ADD_REMOVE


def file_charge(rho: float, delta: float, run: str, file: str, what: str) -> float:
    """The ρ a run's (ρ, δ) under relation ``run`` counts in a file for relation ``file`` (module docstring)."""
    if run in (file, ANY_TWO):
        return rho
    if file.startswith(PERSON) and run.startswith(PERSON):
        raise InputError(
            f"{what} protects one person of {run[len(PERSON) :]!r}, not of {file[len(PERSON) :]!r}: a budget file for "
            f"people ({file}) takes runs with --privacy-unit {file[len(PERSON) :]} only"
        )
    if file.startswith(PERSON):
        raise InputError(
            f"{what} is private for {run} neighbours, which bounds nothing for a person with many rows: a budget "
            f"file for people ({file}) takes runs with --privacy-unit {file[len(PERSON) :]} only"
        )
    if run.startswith(PERSON):  # a person-level run in a record-level file: two person steps
        if delta > 0:
            raise InputError(
                f"{what} is (ρ, δ)-private for one person with δ > 0 (private discovery), which has no charge for "
                "records here: pass a reviewed --schema, or use a budget file for people (--neighbouring "
                f"person:{run[len(PERSON) :]})"
            )
        return 4 * rho
    if file == ADD_REMOVE:  # run is replace-one
        raise InputError(
            f"{what} is private for replace-one neighbours with n public, which says nothing about adding or "
            "removing a record: charge it to a budget file made with --neighbouring replace-one"
        )
    if delta > 0:
        raise InputError(
            f"{what} is (ρ, δ)-private for add/remove neighbours with δ > 0 (private discovery), which has no "
            "replace-one charge here: pass a reviewed --schema, or use an add/remove budget file"
        )
    return 4 * rho  # group privacy: a replacement is two add/remove steps, (2^2)ρ


__all__ = [
    "ADD_REMOVE",
    "REPLACE_ONE",
    "ANY_TWO",
    "RELATIONS",
    "PERSON",
    "person_neighbours",
    "relation_of",
    "file_charge",
]
