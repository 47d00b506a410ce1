"""What private discovery kept, per column, and the decision to stop when it kept too little.

Everything here is post-processing of a privately discovered schema (its columns, and the noisy or
public figures that discovery stored in ``schema.discovery``): it reads no record, so printing it,
saving it with the model and deciding from it to stop cost no privacy.

* ``discovery_rows``: one row per column (identifier and free-text columns too): its kind, what was kept
  (categories or bounds and bins, a format), and the share of records in the catch-all, a noisy figure (``None``
  where discovery has none).
* ``discovery_losses``: one ``Loss`` per column that discovery kept no value of (a categorical column with no
  released category, a numeric column whose bounds meet, a numeric or date column whose values could not be
  located above the noise, left with only the catch-all), per categorical column whose noisy catch-all share
  and per numeric column whose noisy clipped share exceeds ``CLIP_LIMIT`` beyond its noise (a column holding one
  value, kept as that one category, loses nothing): what is lost, in plain words, and what to do about it.
  The command line prints them as warnings, the Python API emits them as ``DiscoveryLossWarning``
  (``warn_losses``), the evaluation report lists them.
* ``dropped_columns``: one line per free-text column, which the output leaves out; ``warn_dropped`` emits them as
  ``FreeTextWarning`` (the Python API), the command line prints them.
* ``one_value_columns``: the columns whose synthetic values can take at most one non-missing value (a
  categorical column with only the catch-all, a numeric column with ``lower == upper``).
* ``check_not_collapsed``: refuse to spend the synthesis budget when more than half of the columns are
  left with one value; the message says what discovery spent and what to do instead.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass
from typing import Any

from privsample.privacy.released import released
from privsample.data.schema import Categorical, FreeText, Identifier, Numeric, Schema
from privsample.errors import DiscoveryLossWarning, FreeTextWarning, InputError

COLLAPSE_LIMIT = 0.5  # stop when more than this share of the columns can take at most one value
CLIP_LIMIT = 0.05  # a numeric column whose noisy clipped share exceeds this is reported as a loss
REVIEWED = "a reviewed schema (--schema; schema= in Python)"  # what to give instead of private discovery


@dataclass(frozen=True)
class DiscoveryRow:
    column: str
    kind: str  # "categorical" | "numeric" | "catch-all" | "id" | "text"
    kept: str  # what the schema holds: "7 categories", "[17, 90] in 16 bins", "only (other)"
    catch_all_share: float | None  # noisy share of records in the catch-all (or clipped), if known


def _column_info(schema: Schema) -> dict[str, dict[str, Any]]:
    info = (schema.discovery or {}).get("columns", []) if getattr(schema, "discovery", None) else []
    return {str(c.get("name")): c for c in info if isinstance(c, dict)}


@dataclass(frozen=True)
class Loss:
    """What private discovery lost in one column: ``what`` (one line, plain words; figures that come from
    mechanism outputs are formatted with ``released``) and ``advice`` (what to do about it)."""

    column: str
    what: str
    advice: str

    def __str__(self) -> str:
        return f"{self.column}: {self.what}; {self.advice}"


def _one_value(col: Numeric) -> bool:
    """A numeric column whose bounds meet (a float column's [v, nextafter(v)] decodes to v alone)."""
    return col.upper <= col.lower or (not col.integer and col.upper <= math.nextafter(col.lower, math.inf))


def one_value_columns(schema: Schema) -> list[str]:
    """The columns whose synthetic values can take at most one non-missing value: a categorical column with no
    released category (only the catch-all) and a numeric column with ``lower == upper``."""
    return [
        c.name
        for c in schema.columns
        if (isinstance(c, Categorical) and not c.categories) or (isinstance(c, Numeric) and _one_value(c))
    ]


def _share(share: float) -> str:
    """A noisy share: 5.2% below 10% (so that a share just over 5% does not read as 5%), else 12%."""
    return released(share, ".1%" if share < 0.1 else ".0%")


def _value(v: float, integer: bool) -> str:
    return released(int(v) if integer else v, "d" if integer else "g")


def _merged_share(about: dict, n_hat: Any) -> float | None:
    """A categorical column's noisy share of records in the catch-all, when it exceeds ``CLIP_LIMIT`` by more than
    twice its noise sd (the released counts' sigma over n_hat, for each count summed); else None."""
    share, sigma, counts = about.get("catch_all_share"), about.get("sigma"), about.get("counts")
    if share is None or not sigma or not isinstance(counts, dict) or not n_hat:
        return None
    sd = float(sigma) * math.sqrt(len(counts) + 2) / float(n_hat)  # released counts, the missing count, n_hat
    share = min(1.0, max(0.0, float(share)))
    return share if share > CLIP_LIMIT + 2.0 * sd else None


def discovery_losses(schema: Schema) -> list[Loss]:
    """One ``Loss`` per column that private discovery kept at most one value of, per categorical column whose
    noisy catch-all share and per numeric column whose noisy clipped share (``schema.discovery``) exceeds
    ``CLIP_LIMIT``; ``[]`` for a schema that was not discovered privately. Post-processing of the discovered
    schema: reads no record."""
    if getattr(schema, "provenance", None) != "private":
        return []
    info = _column_info(schema)
    need = min_category_records(schema)
    kept_more = f"{REVIEWED} or a larger ε keeps more" + (
        f" (a category needs about {released(need, ',.0f')} records at this ε)" if need else ""
    )
    losses = []
    for col in schema.columns:
        if isinstance(col, Categorical):
            other = col.other or "(other)"
            unlocated = info.get(col.name, {}).get("unlocated")
            if unlocated and not col.categories:  # a numeric or date column whose values the noise hid: no bounds
                kind = unlocated if isinstance(unlocated, str) else "numeric"
                what = (
                    f"{kind}: its values could not be located above the noise at this ε: every value becomes '{other}'"
                )
                losses.append(Loss(col.name, what, f"{REVIEWED} with its bounds, or a larger ε, keeps it"))
            elif not col.categories:
                losses.append(Loss(col.name, f"keeps no category: every value becomes '{other}'", kept_more))
            else:  # a loss where the catch-all holds a share beyond its noise (a constant column loses nothing)
                merged = _merged_share(info.get(col.name, {}), (schema.discovery or {}).get("n_hat"))
                if merged is not None:
                    what = f"about {_share(merged)} of its records are merged into '{other}' (a noisy estimate)"
                    if len(col.categories) == 1:
                        what = f"keeps only one value ({released(col.categories[0])}); {what}"
                    losses.append(Loss(col.name, what, kept_more))
            continue
        about = info.get(col.name, {})
        kind = col.temporal or "numeric"
        mistyped = about.get("mistyped_share")
        if mistyped is not None and float(mistyped) > 3.0 * float(about.get("mistyped_sd") or 0.0):
            share = _share(min(1.0, float(mistyped)))
            noun = {"numeric": "numbers", "date": "dates", "datetime": "datetimes", "time": "times"}.get(kind, kind)
            what = f"{kind}: about {share} of its values are not {noun} and become missing"
            losses.append(Loss(col.name, what + " (a noisy estimate)", f"{REVIEWED} (a categorical column) keeps them"))
        share = about.get("clipped_share")
        share = None if share is None else min(1.0, max(0.0, float(share)))
        sd = float(about.get("clipped_sd") or 0.0)
        floor = about.get("tail_floor")
        likely = share is not None and share > CLIP_LIMIT + 2.0 * sd  # the noisy estimate, beyond its noise
        if _one_value(col):  # a loss unless the noisy share clipped to it is known and within its noise
            if likely or share is None:
                what = f"{kind}: keeps only one value ({_shown(col, col.lower)}): every value is clipped to it"
                if likely:
                    what += f" (about {_share(share)} of the values lie elsewhere, a noisy estimate)"
                losses.append(Loss(col.name, what, f"{REVIEWED} with its bounds, or a larger ε, keeps more"))
        elif likely:
            lo, hi = _shown(col, col.lower), _shown(col, col.upper)
            losses.append(
                Loss(
                    col.name,
                    f"{kind}: about {_share(share)} of its values lie outside [{lo}, {hi}] and are "
                    "clipped to the bounds (a noisy estimate)",
                    f"{REVIEWED} with wider bounds, or a larger ε, keeps the tails",
                )
            )
        elif floor is not None and 2.0 * float(floor) > CLIP_LIMIT:  # planned: what the noise can hide at this size
            lo, hi = _shown(col, col.lower), _shown(col, col.upper)
            part = "a value" if col.integer and col.bins == col.upper - col.lower + 1 else "a tail"
            losses.append(
                Loss(
                    col.name,
                    f"{kind}: {part} outside [{lo}, {hi}] holding up to about {_share(float(floor))} of the records "
                    "is not seen at this size and would be clipped to the bounds",
                    f"{REVIEWED} with its bounds, or a larger ε, keeps them",
                )
            )
    return losses


def _shown(col: Numeric, x: float) -> str:
    """A bound as the column shows its values (a date, a formatted number), else as a number."""
    fmt = col.value_format
    return released(fmt.text(x)) if fmt is not None else _value(x, col.integer)


def discovery_rows(schema: Schema) -> list[DiscoveryRow]:
    """One row per column of the table, in its order (identifier and free-text columns too)."""
    info = _column_info(schema)
    rows = []
    for col in schema.layout():
        if isinstance(col, Identifier):
            rows.append(DiscoveryRow(col.name, "id", f"fresh ids {col.format}", None))
            continue
        if isinstance(col, FreeText):
            rows.append(DiscoveryRow(col.name, "text", "dropped (free text)", None))
            continue
        share = info.get(col.name, {}).get("catch_all_share")
        share = None if share is None else min(1.0, max(0.0, float(share)))
        if isinstance(col, Numeric):
            bins = f"{col.bins} bin" + ("" if col.bins == 1 else "s")
            fmt = col.value_format  # the row is marked as a whole where it is printed
            show = fmt.text if fmt is not None else (lambda x: f"{x:g}")
            span = f"[{show(col.lower)}, {show(col.upper)}] in {bins}"
            rows.append(DiscoveryRow(col.name, col.temporal or "numeric", span, share))
        elif col.categories:
            n = len(col.categories)
            rows.append(DiscoveryRow(col.name, "categorical", f"{n} categor{'y' if n == 1 else 'ies'}", share))
        else:
            lost = " (values not located)" if info.get(col.name, {}).get("unlocated") else ""
            rows.append(DiscoveryRow(col.name, "catch-all", f"only {col.other or '(other)'}{lost}", share))
    return rows


def dropped_columns(schema: Schema) -> list[str]:
    """One line per free-text column of ``schema`` (``type: text``), which the output leaves out: its name and how
    to keep its frequent values. Public (the schema) or post-processing of a discovered one."""
    lines = []
    for col in schema.text:
        keep = (
            f"'keep: frequent' in a schema file keeps its {len(col.categories)} frequent values"
            if col.categories
            else "a reviewed schema can declare its frequent values (type: text, keep: frequent, categories: [...])"
        )
        lines.append(f"column '{col.name}' is free text: not synthesized and left out of the output ({keep})")
    return lines


def warn_dropped(schema: Schema) -> list[str]:
    """Emit one ``FreeTextWarning`` per ``dropped_columns(schema)`` (at the caller's line outside privsample)."""
    lines = dropped_columns(schema)
    for line in lines:
        warnings.warn(line, FreeTextWarning, stacklevel=_caller_level())
    return lines


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside privsample: a warning names the user's line."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "privsample":
        level, frame = level + 1, frame.f_back
    return level


def warn_losses(schema: Schema) -> list[Loss]:
    """Emit one ``DiscoveryLossWarning`` per ``discovery_losses(schema)`` (at the caller's line outside
    privsample); returns the losses."""
    losses = discovery_losses(schema)
    for loss in losses:
        warnings.warn(f"private discovery: {loss}", DiscoveryLossWarning, stacklevel=_caller_level())
    return losses


def min_category_records(schema: Schema) -> float | None:
    """The number of records a category needs to be released with good probability, if discovery said."""
    value = (schema.discovery or {}).get("min_category_records") if getattr(schema, "discovery", None) else None
    return None if value is None else float(value)


def check_not_collapsed(schema: Schema, spent_epsilon: float, epsilon: float) -> None:
    """Raise ``InputError`` (before the synthesis budget is spent) when more than half of the columns can take
    at most one value (``one_value_columns``). ``spent_epsilon``: what discovery spent, as an epsilon at the
    run's delta."""
    lost = one_value_columns(schema)
    if len(lost) <= COLLAPSE_LIMIT * len(schema.columns):
        return
    need = min_category_records(schema)
    names = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    raise InputError(
        f"private discovery kept at most one value in {released(len(lost))} of {len(schema.columns)} columns "
        f"({names}): their synthetic values would all be the same"
        + (
            f"; at epsilon={epsilon:g} a category needs about {released(need, ',.0f')} records to be kept"
            if need
            else ""
        )
        + f". Discovery spent epsilon={released(spent_epsilon, '.3g')} of {epsilon:g}; nothing was synthesized or "
        "written. Give a "
        "reviewed schema ('privsample schema data.csv -o s.yaml', review it, set 'provenance: user', then --schema "
        "s.yaml) or a larger --epsilon"
    )


__all__ = [
    "DiscoveryRow",
    "discovery_rows",
    "Loss",
    "discovery_losses",
    "one_value_columns",
    "warn_losses",
    "dropped_columns",
    "warn_dropped",
    "CLIP_LIMIT",
    "min_category_records",
    "check_not_collapsed",
    "COLLAPSE_LIMIT",
]
