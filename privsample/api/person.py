"""Person-level runs (``privacy_unit``): the checks of a unit column before any spend, and the unit profile that
fixes k before any other spend.

Neighbouring tables differ by all the rows of one person, the rows sharing a value of the unit column
(``privsample.privacy.unit``). The NumPy engine keeps at most k rows of each person (contribution bounding,
``privsample.marginals.bounding``: its stability proof); k is given, or chosen from the noisy unit profile
(``privsample.data.unit_profile``: sensitivity 1 per person, ``PROFILE_SHARE`` of the budget); the accountant's unit is
then fixed to k, and every later spend is calibrated to it (and guarded: ``privsample.privacy.accountant``). The
column itself is never released, counted in a message or written.
"""

from __future__ import annotations


from privsample.checks import OptionName
from privsample.data.schema import Schema
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource
from privsample.progress import no_progress


def unit_engine(unit: str, engine: str, schema: Schema | None, schema_name: str, name: OptionName) -> str:
    """The engine of a person-level run (NumPy: the one that bounds contributions), after the public checks of
    its unit column against the schema."""
    if schema is not None and unit in schema.all_names:
        raise InputError(
            f"{name('privacy_unit')} {unit!r} is a column of {schema_name}: the unit's column is never released; "
            "leave it out of the schema"
        )
    if engine in ("duckdb", "spark"):
        raise InputError(f"{name('privacy_unit')} needs the numpy engine (contribution bounding), not {engine}")
    return "numpy"


def check_schema_unit(
    schema: Schema | None, unit: str | None, schema_name: str, name: OptionName, max_rows: int | None = None
) -> int | None:
    """``InputError`` when a privately discovered schema's neighbours are not the run's: its ledger is absorbed into
    the run's, which holds only for the same relation (a record-level discovery says nothing about a person with
    many records; a person-level one is not charged as a record-level cost here). Returns the run's k: a
    person-level schema's own (its noise is calibrated to it), which a given ``max_rows`` must equal."""
    if schema is None or schema.provenance != "private":
        return max_rows
    saved = ((schema.ledger or {}).get("summary") or {}).get("unit") or {}
    column = saved.get("column")
    if column != unit:
        theirs = f"one person of {column!r}" if column else "one record"
        ours = f"one person of {unit!r} ({name('privacy_unit')} {unit})" if unit else "one record"
        raise InputError(
            f"{schema_name} was discovered privately for add/remove {theirs}, not {ours}: its cost does not carry "
            "over; give a reviewed schema, or none"
        )
    if column is None:
        return max_rows
    k = int(saved.get("max_rows", 1))
    if max_rows is not None and max_rows != k:
        raise InputError(
            f"{schema_name} was discovered with at most {k} rows per person: {name('max_rows_per_unit')} must be "
            f"{k} with it (or left out)"
        )
    return k


def bound_for_discovery(df, unit: str, max_rows: int | None, accountant: Accountant, noise: NoiseSource, seed):
    """``df`` (a table read in memory) bounded to at most k rows per person for ``schema --private-epsilon
    --privacy-unit``: the unit profile spends first and fixes the accountant's unit (``UnitProfiler``), then
    ``privsample.marginals.bounding.bound``."""
    from privsample.marginals.bounding import UNIT_GRID, bound, size_histogram

    from privsample.data.unit_profile import UnitProfiler

    people = size_histogram(df[unit].to_numpy(dtype=object), UNIT_GRID)
    k = UnitProfiler(unit, max_rows, accountant, noise, no_progress)(people, UNIT_GRID, max(len(df.columns) - 1, 1))
    return bound(df, unit, k, seed)


UNIT_PLAN_K = (1, 2, 3, 5, 10, 20, 50)  # the k the plan shows
AFFORD_SHARE = 0.01  # k is "afforded" while MST's 2-way noise sd stays within this share of the rows


def unit_forecast(entries, unit: str, k: int | None) -> dict:
    """How the noise of a person-level run grows with k, from a plan's entries (``privsample.api.plan``): every
    measurement's sd is k times the record-level one at the same budget (the lemma of ``privsample.privacy.unit``),
    so per epsilon and row count, MST's 2-way sd at each k of ``UNIT_PLAN_K`` (and the given k), its share of the
    rows, and the largest k keeping it within ``AFFORD_SHARE`` of them. Public: the plan's own forecasts."""
    ks = sorted(set(UNIT_PLAN_K) | ({k} if k else set()))
    rows = []
    for e in [e for e in entries if e.method == "mst"] or list(entries):
        if "sigma_2way" not in e.noise:
            continue
        sigma = float(e.noise["sigma_2way"])
        afford = max((x for x in range(1, 1025) if x * sigma <= AFFORD_SHARE * e.row_count), default=0)
        rows.append(
            {
                "epsilon": e.epsilon,
                "method": e.method,
                "row_count": e.row_count,
                "sigma_2way": {str(x): x * sigma for x in ks},
                "afforded_k": afford,
            }
        )
    return {"column": unit, "k": k, "ks": ks, "afford_share": AFFORD_SHARE, "forecast": rows}


__all__ = [
    "unit_engine",
    "check_schema_unit",
    "unit_forecast",
]
