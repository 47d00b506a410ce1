"""Comparing a synthetic table with the real one on the real table's own values.

NOT PRIVATE, and not a release: everything here reads the real table exactly (its distinct values,
bounds and frequencies) so that the data owner can judge a release. Nothing here is a mechanism and
nothing here may be published.

The evaluation domain (``real_domain``) is built from the REAL table alone (``draft_schema``'s rule
for column kinds, bounds and categories), never from the schema a synthesizer used: a schema that
merges real values into its catch-all, clips them or bins them coarsely would otherwise be scored
after the real table went through the same loss, and a table of catch-alls would look perfect. Both
tables are encoded through this domain by a rule that never fails on a value:

* categorical column: one code per real category (the ``max_categories`` most frequent; the other
  real values share a "rest of the real values" code); numbers are compared by value ("2", "2.0"
  and 2 are one value);
* numeric column: one code per point mass (an exact value held by at least ``point_mass`` of the
  real records, such as 0 in capital gains), then equal-width bins over the real [min, max];
* a null code when the real column has missing values;
* an "outside" code for every value of the other table that the real table does not hold: a
  category the real table lacks (the synthesizer's catch-all label included), a non-number or a
  number outside the real bounds in a numeric column, a missing value where the real column has
  none. The real table never lands there, so every synthetic record there counts as error.

``schema_loss`` says, per column, what share of the REAL records a given schema merges into its
catch-all (or null code) or clips to its bounds, under the release path's rule
(``encode(..., release=True)`` with ``release_schema``). ``evaluate_tables`` puts the two together:
the workload error on the real domain (the headline) and, when a schema is given, on the schema's
domain and the per-column loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from privsample.data.encoding import parse_number, value_text
from privsample.data.schema import Categorical, NamedColumns, Numeric, Schema
from privsample.errors import InputError

__all__ = [
    "EVAL_MAX_CATEGORIES",
    "EVAL_BINS",
    "EVAL_POINT_MASS",
    "OUTSIDE_LABEL",
    "REST_LABEL",
    "EvalColumn",
    "EvalDomain",
    "real_domain",
    "ColumnLoss",
    "schema_loss",
    "TableScores",
    "evaluate_tables",
]

EVAL_MAX_CATEGORIES = 50  # categories of a column scored one by one (the rest of the real values share a code)
EVAL_BINS = 16  # equal-width bins of a numeric column over the real [min, max]
EVAL_POINT_MASS = 0.05  # a numeric value held by at least this share of the real records gets its own code
OUTSIDE_LABEL = "<outside the real values>"
REST_LABEL = "<rest of the real values>"
NULL_LABEL = "<null>"


def value_key(value: Any) -> str:
    """How a categorical value is compared: numbers by value (2, 2.0 and '2' are one key), text as is."""
    x = parse_number(value)
    if x is not None and math.isfinite(x):
        return value_text(x)
    return value_text(value)


def _factorize(s: pd.Series) -> tuple[np.ndarray, list[Any]]:
    idx, uniques = pd.factorize(pd.Series(s, copy=False).reset_index(drop=True), use_na_sentinel=True)
    return idx, list(uniques)


def numeric_values(s: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(float values, missing mask, not-a-number mask); never raises. Text that reads as NaN is missing."""
    idx, uniques = _factorize(s)
    parsed = [parse_number(u) for u in uniques]
    ux = np.array([np.nan if p is None else p for p in parsed] + [np.nan], dtype=np.float64)
    ubad = np.array([p is None for p in parsed] + [False], dtype=bool)
    missing = idx < 0
    nan_text = np.array([p is not None and math.isnan(p) for p in parsed] + [False], dtype=bool)
    missing = missing | nan_text[idx]
    return ux[idx], missing, ubad[idx] & ~missing


@dataclass(frozen=True)
class EvalColumn:
    """One column of the evaluation domain (see the module docstring for the code layout)."""

    name: str
    kind: str  # "categorical" | "numeric"
    categories: tuple[str, ...] = ()  # categorical: keys scored one by one
    rest: frozenset[str] = frozenset()  # categorical: the other real keys (share the rest code)
    points: tuple[float, ...] = ()  # numeric: point masses
    edges: tuple[float, ...] = ()  # numeric: bin edges over the real [min, max]
    integer: bool = False
    nullable: bool = False

    @property
    def n_main(self) -> int:
        if self.kind == "categorical":
            return len(self.categories) + bool(self.rest)
        return len(self.points) + max(len(self.edges) - 1, 0)

    @property
    def null_code(self) -> int | None:
        return self.n_main if self.nullable else None

    @property
    def outside_code(self) -> int:
        return self.n_main + self.nullable

    @property
    def size(self) -> int:
        return self.outside_code + 1

    def labels(self) -> list[str]:
        if self.kind == "categorical":
            out = list(self.categories) + ([REST_LABEL] if self.rest else [])
        else:
            out = [f"={value_text(p)}" for p in self.points]
            e = self.edges
            out += [f"[{e[i]:g}, {e[i + 1]:g}{']' if i == len(e) - 2 else ')'}" for i in range(len(e) - 1)]
        return out + ([NULL_LABEL] if self.nullable else []) + [OUTSIDE_LABEL]

    def encode(self, s: pd.Series) -> np.ndarray:
        """Codes of every value of ``s``; a value the real table does not hold gets the outside code."""
        if self.kind == "categorical":
            idx, uniques = _factorize(s)
            lookup = {c: i for i, c in enumerate(self.categories)}
            rest = len(self.categories)
            ucode = np.array(
                [lookup.get(k, rest if k in self.rest else self.outside_code) for k in map(value_key, uniques)]
                + [self.null_code if self.nullable else self.outside_code],
                dtype=np.int64,
            )
            return ucode[idx]  # idx -1 (missing) picks the last entry
        x, missing, bad = numeric_values(s)
        codes = np.full(len(x), self.outside_code, dtype=np.int64)
        ok = ~missing & ~bad
        if len(self.edges) >= 2:
            lo, hi = self.edges[0], self.edges[-1]
            inside = ok & (x >= lo) & (x <= hi)
            b = np.searchsorted(np.asarray(self.edges[1:-1]), x[inside], side="right")
            codes[inside] = len(self.points) + b
        for i, p in enumerate(self.points):
            codes[ok & (x == p)] = i
        if self.nullable:
            codes[missing] = self.null_code
        return codes


@dataclass
class EvalDomain(NamedColumns):
    """The evaluation domain: ``EvalColumn``s in the real table's column order (access by name as a schema)."""

    columns: list[EvalColumn]

    def domain(self):
        from privsample.data.schema import mbi_domain

        return mbi_domain(self.names, [c.size for c in self.columns])

    def encode(self, df: pd.DataFrame, source: str = "the table") -> dict[str, np.ndarray]:
        """{column: codes}; only a missing column (a header problem, public) raises ``InputError``."""
        out = {}
        for c in self.columns:
            if c.name not in df.columns:
                raise InputError(f"{source}: column '{c.name}' of the real table is missing")
            out[c.name] = c.encode(df[c.name])
        return out


def real_domain(
    real: pd.DataFrame,
    *,
    max_categories: int = EVAL_MAX_CATEGORIES,
    bins: int = EVAL_BINS,
    point_mass: float = EVAL_POINT_MASS,
) -> EvalDomain:
    """The evaluation domain read off the REAL table (NOT private: exact values, bounds, frequencies).

    Column kinds, numeric bounds and bins follow ``draft_schema``; categories are the real values
    (compared by ``value_key``), the ``max_categories`` most frequent scored one by one; point masses
    are numeric values held by at least ``point_mass`` of the real records."""
    from privsample.data.discovery import sorted_categories, draft_schema

    draft = draft_schema(real, max_categories=max_categories, bins=bins, peaks=False)  # its own point masses
    n = len(real)
    cols: list[EvalColumn] = []
    for dc in draft.columns:
        s = real[dc.name].reset_index(drop=True)
        nullable = bool(dc.nullable)
        if isinstance(dc, Numeric):
            x, missing, _ = numeric_values(s)
            vals, counts = np.unique(x[~missing], return_counts=True)
            points = tuple(float(v) for v, c in zip(vals, counts) if c >= point_mass * n)
            cols.append(
                EvalColumn(
                    dc.name,
                    "numeric",
                    points=points,
                    edges=tuple(float(e) for e in dc.bin_edges),
                    integer=dc.integer,
                    nullable=nullable,
                )
            )
            continue
        assert isinstance(dc, Categorical)
        idx, uniques = _factorize(s)
        keys = [value_key(u) for u in uniques]
        counts: dict[str, int] = {}
        for k, c in zip(keys, np.bincount(idx[idx >= 0], minlength=len(keys))):
            counts[k] = counts.get(k, 0) + int(c)
        order = sorted(counts, key=lambda k: -counts[k])  # stable: first seen among equal counts
        keep = set(order[:max_categories])
        cats = tuple(sorted_categories([k for k in counts if k in keep]))
        cols.append(
            EvalColumn(
                dc.name,
                "categorical",
                categories=cats,
                rest=frozenset(k for k in counts if k not in keep),
                nullable=nullable,
            )
        )
    return EvalDomain(cols)


# -- what a schema loses --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnLoss:
    """Shares of the REAL records (exact: NOT private) that a schema does not hold as they are."""

    column: str
    kind: str  # the schema's kind of the column
    merged: float  # into the catch-all (categories the schema lacks) or the null code (non-numbers, undeclared nulls)
    clipped: float  # numbers outside the schema's bounds, clipped to them

    @property
    def lost(self) -> float:
        return self.merged + self.clipped


def schema_loss(real: pd.DataFrame, schema: Schema) -> list[ColumnLoss]:
    """Per schema column, the share of REAL records that the release path's rule merges or clips.

    Follows ``encode(..., release=True)`` on ``release_schema(schema)`` (every value gets a code):
    a category the schema lacks and a missing value in a non-nullable categorical column go to the
    catch-all; a non-number, and a missing value in a non-nullable numeric column, go to the null
    code; a number outside the bounds is clipped. (With a reviewed schema and no catch-all, ``synth``
    leaves such records out instead: they are lost either way.)"""
    n = len(real)
    out = []
    for col in schema.columns:
        if col.name not in real.columns:
            raise InputError(f"column '{col.name}' is in the schema but not in the real table")
        s = real[col.name].reset_index(drop=True)
        if isinstance(col, Numeric):
            x, missing, bad = numeric_values(s)
            merged = bad | (missing & (not col.nullable))
            clipped = ~missing & ~bad & ((x < col.lower) | (x > col.upper))
        else:
            idx, uniques = _factorize(s)
            known = set(col.categories) | ({col.other} if col.other is not None else set())
            uok = np.array([value_text(u) in known for u in uniques] + [bool(col.nullable)], dtype=bool)
            merged = ~uok[idx]
            clipped = np.zeros(len(s), dtype=bool)
        out.append(
            ColumnLoss(
                col.name, col.kind, float(merged.sum()) / n if n else 0.0, float(clipped.sum()) / n if n else 0.0
            )
        )
    return out


# -- both together -------------------------------------------------------------------------------------
@dataclass
class TableScores:
    """Workload errors on the real domain (the headline) and, with a schema, on the schema's domain (NOT
    private). ``privsample.evaluation.Evaluation`` presents them (tables, HTML) with the release's guarantee."""

    domain: EvalDomain
    real_engine: Any
    synth_engine: Any
    summary: dict[int, dict[str, Any]]  # headline: on the real table's own values
    outside: dict[str, float]  # per column: share of synthetic records outside the real values
    schema: Schema | None = None
    schema_summary: dict[int, dict[str, Any]] | None = None
    loss: list[ColumnLoss] = field(default_factory=list)
    schema_real_engine: Any = None
    schema_synth_engine: Any = None


def evaluate_tables(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    schema: Schema | None = None,
    *,
    ks: Sequence[int] = (1, 2, 3),
    max_cliques: int | None = None,
    rng: int | None = 0,
    synthetic_name: str = "the synthetic table",
) -> TableScores:
    """Score ``synthetic`` against ``real`` (NOT private). Never raises on a value of either table.

    The headline ``summary`` is on ``real_domain(real)`` (restricted to the schema's columns when
    ``schema`` is given). With ``schema``, also the error on the schema's own domain (both tables
    encoded with the release rule on ``release_schema(schema)``, as a synthesizer saw the real
    table) and ``schema_loss``. ``max_cliques`` samples cliques with the seed ``rng``: the same
    cliques on both domains."""
    from privsample.data.encoding import encode, release_schema
    from privsample.evaluation.workload import summary
    from privsample.marginals import NumpyEngine

    if schema is not None:
        absent = [c for c in schema.names if c not in real.columns]
        if absent:
            raise InputError(f"column '{absent[0]}' is in the schema but not in the real table")
        real = real[schema.names]
    dom = real_domain(real)
    rcodes = dom.encode(real, "the real table")
    scodes = dom.encode(synthetic, synthetic_name)
    mdom = dom.domain()
    reng, seng = NumpyEngine(rcodes, mdom), NumpyEngine(scodes, mdom)
    res = summary(reng, seng, ks=ks, max_cliques=max_cliques, rng=np.random.default_rng(rng))
    ns = len(synthetic)
    outside = {
        c.name: (float(np.count_nonzero(scodes[c.name] == c.outside_code)) / ns if ns else 0.0) for c in dom.columns
    }
    ev = TableScores(dom, reng, seng, res, outside)
    if schema is not None:
        missing = [c for c in schema.names if c not in synthetic.columns]
        if missing:
            raise InputError(f"{synthetic_name}: column '{missing[0]}' of the schema is missing")
        rel = release_schema(schema)
        sdom = rel.domain()
        ev.schema = rel
        ev.schema_real_engine = NumpyEngine(encode(real, rel, release=True), sdom)
        ev.schema_synth_engine = NumpyEngine(encode(synthetic, rel, release=True), sdom)
        ev.schema_summary = summary(
            ev.schema_real_engine,
            ev.schema_synth_engine,
            ks=ks,
            max_cliques=max_cliques,
            rng=np.random.default_rng(rng),
        )
        ev.loss = schema_loss(real, schema)
    return ev
