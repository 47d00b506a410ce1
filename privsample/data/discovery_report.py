"""What private discovery kept, per column, and the decision to stop when it kept too little.

Everything here is post-processing of a privately discovered schema (its columns, and the noisy or
public figures that discovery stored in ``schema.discovery``): it reads no record, so printing it,
saving it with the model and deciding from it to stop cost no privacy.

* ``discovery_rows``: one row per column: its kind, what was kept (categories or bounds and bins),
  and the share of records in the catch-all, a noisy figure (``None`` where discovery has none).
* ``collapsed_columns``: the columns left with only the catch-all (a categorical column without any
  released category): their synthetic values can only be ``(other)``.
* ``check_not_collapsed``: refuse to spend the synthesis budget when more than half of the columns
  collapsed; the message says what discovery spent and what to do instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from privsample.privacy.released import released
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError

COLLAPSE_LIMIT = 0.5  # stop when more than this share of the columns holds only the catch-all


@dataclass(frozen=True)
class DiscoveryRow:
    column: str
    kind: str  # "categorical" | "numeric" | "catch-all"
    kept: str  # what the schema holds: "7 categories", "[17, 90] in 16 bins", "only (other)"
    catch_all_share: float | None  # noisy share of records in the catch-all (or clipped), if known


def _column_info(schema: Schema) -> dict[str, dict[str, Any]]:
    info = (schema.discovery or {}).get("columns", []) if getattr(schema, "discovery", None) else []
    return {str(c.get("name")): c for c in info if isinstance(c, dict)}


def collapsed_columns(schema: Schema) -> list[str]:
    """Categorical columns with no released category (only the catch-all, and maybe the null code)."""
    return [c.name for c in schema.columns if isinstance(c, Categorical) and not c.categories]


def discovery_rows(schema: Schema) -> list[DiscoveryRow]:
    info = _column_info(schema)
    rows = []
    for col in schema.columns:
        share = info.get(col.name, {}).get("catch_all_share")
        share = None if share is None else min(1.0, max(0.0, float(share)))
        if isinstance(col, Numeric):
            rows.append(DiscoveryRow(col.name, "numeric", f"[{col.lower:g}, {col.upper:g}] in {col.bins} bins", share))
        elif col.categories:
            n = len(col.categories)
            rows.append(DiscoveryRow(col.name, "categorical", f"{n} categor{'y' if n == 1 else 'ies'}", share))
        else:
            rows.append(DiscoveryRow(col.name, "catch-all", f"only {col.other or '(other)'}", share))
    return rows


def min_category_records(schema: Schema) -> float | None:
    """The number of records a category needs to be released with good probability, if discovery said."""
    value = (schema.discovery or {}).get("min_category_records") if getattr(schema, "discovery", None) else None
    return None if value is None else float(value)


def check_not_collapsed(schema: Schema, spent_epsilon: float, epsilon: float) -> None:
    """Raise ``InputError`` (before the synthesis budget is spent) when more than half of the columns
    hold only the catch-all. ``spent_epsilon``: what discovery spent, as an epsilon at the run's delta."""
    lost = collapsed_columns(schema)
    if len(lost) <= COLLAPSE_LIMIT * len(schema.columns):
        return
    need = min_category_records(schema)
    names = ", ".join(lost[:8]) + (f" and {len(lost) - 8} more" if len(lost) > 8 else "")
    raise InputError(
        f"private discovery kept only the catch-all in {released(len(lost))} of {len(schema.columns)} columns ({names})"
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
    "collapsed_columns",
    "min_category_records",
    "check_not_collapsed",
    "COLLAPSE_LIMIT",
]
