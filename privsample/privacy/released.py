"""Marking mechanism outputs in what the tool prints and saves, so that a test can tell them from exact figures.

Everything a release command prints or writes is either public (options, column names, the budget, counts of
columns) or a mechanism output: a noisy count, total or share, a noisily selected marginal, a bound found by
private discovery, and anything computed from those alone (post-processing, Dwork & Roth 2014, Prop. 2.1). The
second kind legitimately differs between two runs on neighbouring tables (the noise differs); the first must
not differ at all. The leak test (tests/test_leaks.py) runs every release command on a table D and a neighbour
D′ and compares everything except what is marked here:

* printed figures: a figure that is a mechanism output is formatted with :func:`released`. With the
  environment variable ``PRIVSAMPLE_MARK_RELEASED=1`` it comes out as ``⟦text⟧`` (the leak test sets it and
  masks only those spans); otherwise it is the plain text. An exact figure computed from the records (a count
  of rows, a line number) that reached a printed line unmarked is then seen on D and D′ with different values.
* saved fields: the writer of a model or a schema lists the field paths whose values are mechanism outputs
  (``privsample.synth.model.RELEASED_FIELDS``, ``privsample.data.schema.RELEASED_FIELDS``) as patterns for
  :func:`is_released_path`; every other field is compared by value.

Marking is a claim, reviewed like the mechanism it names: mark a figure only when it is computed from mechanism
outputs and public values alone.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

MARK_ENV = "PRIVSAMPLE_MARK_RELEASED"
OPEN, CLOSE = "⟦", "⟧"


def marking() -> bool:
    """Whether released figures are printed with their mark (``PRIVSAMPLE_MARK_RELEASED=1``; tests only)."""
    return os.environ.get(MARK_ENV, "") not in ("", "0")


def released(value, spec: str = "") -> str:
    """``format(value, spec)`` for a figure that is a mechanism output (or computed from mechanism outputs and
    public values only): marked ``⟦...⟧`` when :func:`marking` is on, plain otherwise."""
    text = format(value, spec)
    return f"{OPEN}{text}{CLOSE}" if marking() else text


def is_released_path(path: str, patterns: Iterable[str]) -> bool:
    """Whether a saved field's ``path`` (keys joined by ``.``, list items as ``[]``) matches one of ``patterns``
    (``fnmatch`` wildcards: ``info.rounds*`` covers every field under ``info.rounds``)."""
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


__all__ = ["MARK_ENV", "marking", "released", "is_released_path"]
