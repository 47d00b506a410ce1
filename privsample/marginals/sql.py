"""The schema encoding as SQL: one text for DuckDB and Spark SQL, with a small ``Dialect`` for the rest
(``privsample.data.sql_dialect``, which also holds the cleaning SQL ``clean_sql``).

``coding_sql`` turns a cleaned table (``privsample.data.table.clean_select``: trimmed text, NA values
and NaN as NULL) into the integer codes of ``privsample.data.encoding.encode`` exactly: same number
grammar (``NUMBER_RE``), same binning (``np.searchsorted(edges[1:-1], x, side='right')``), same
``clip``/``other``/``release`` policy. Its second query finds the first bad value of each column, so that a
failure reads as ``encode``'s. ``counts_sql`` counts cliques of code columns with GROUPING SETS.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from privsample.data.encoding import MISSING, NEEDS_OTHER, NOT_A_NUMBER, OUT_OF_RANGE, UNKNOWN
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.data.sql_dialect import DUCKDB, Dialect

CASE_LIMIT = 256  # categoricals with more categories are coded by a join instead of a CASE
_EXACT = "9007199254740992"  # 2**53: larger floats are not printed as integers (``encoding.value_text``)


def text_sql(v: str, kind: str) -> str:
    """The text a categorical value is compared as (as ``encoding.value_text``), from a cleaned column."""
    if kind == "text":
        return v
    if kind == "bool":
        return f"CASE WHEN {v} IS NULL THEN NULL WHEN {v} THEN 'True' ELSE 'False' END"
    if kind == "int":
        return f"CAST({v} AS STRING)"
    return (
        f"CASE WHEN abs({v}) >= {_EXACT} THEN CAST({v} AS STRING) "
        f"WHEN {v} = floor({v}) THEN CAST(CAST({v} AS BIGINT) AS STRING) ELSE CAST({v} AS STRING) END"
    )


class _Coder:
    """Builds the coding SQL for one schema and policy."""

    def __init__(self, schema: Schema, dialect: Dialect, clip: bool, other: bool, release: bool = False):
        self.schema, self.d, self.clip, self.other, self.release = schema, dialect, clip or release, other, release

    def num(self, x: float) -> str:
        return f"CAST({self.d.lit(repr(float(x)))} AS DOUBLE)"

    def numeric(self, col: Numeric, j: int) -> tuple[str, str]:
        def missing(t: str) -> str:
            return f"({t}.z{j} OR coalesce({self.d.isnan(f'{t}.x{j}')}, false))"

        x = f"s.x{j}"
        outside = f"({x} < {self.num(col.lower)} OR {x} > {self.num(col.upper)})"
        inner_edges = col.bin_edges[1:-1]
        if len(inner_edges):
            whens = " ".join(f"WHEN {x} < {self.num(e)} THEN {i}" for i, e in enumerate(inner_edges))
            binned = f"CASE {whens} ELSE {len(inner_edges)} END"
        else:
            binned = "0"
        k = int(col.bins)
        on_missing = str(col.null_code) if col.nullable else "NULL"
        on_outside = f"CASE WHEN {x} < {self.num(col.lower)} THEN 0 ELSE {k - 1} END" if self.clip else "NULL"
        on_text = on_missing if self.release else "NULL"  # release: a non-number counts as missing
        top = self.num(1.7976931348623157e308)  # the largest float: beyond it, +inf (-inf below its negative)
        specials = "".join(
            f"WHEN {x} {'>' if v == 'inf' else '<'} {top if v == 'inf' else '-' + top} THEN {k + i} "
            for i, v in enumerate(col.special)
        )
        code = (
            f"CASE WHEN {missing('s')} THEN {on_missing} WHEN {x} IS NULL THEN {on_text} "
            f"{specials}WHEN {outside} THEN {on_outside} ELSE {binned} END"
        )
        problem = (
            f"CASE WHEN c{j} IS NOT NULL THEN 0 WHEN {missing('q')} THEN {MISSING} "
            f"WHEN q.x{j} IS NULL THEN {NOT_A_NUMBER} ELSE {OUT_OF_RANGE} END"
        )
        return code, problem

    def categorical(self, col: Categorical, j: int, lookup: str) -> tuple[str, str]:
        coerce = (self.other or self.release) and col.other is not None
        on_missing = str(col.null_code) if col.nullable else (str(col.other_code) if coerce else "NULL")
        on_unknown = str(col.other_code) if coerce else "NULL"
        if self.release and col.other is None and col.nullable:
            on_unknown = str(col.null_code)
        code = f"CASE WHEN s.r{j} IS NULL THEN {on_missing} ELSE coalesce({lookup}, {on_unknown}) END"
        unknown = NEEDS_OTHER if self.other else UNKNOWN
        problem = f"CASE WHEN c{j} IS NOT NULL THEN 0 WHEN q.r{j} IS NULL THEN {MISSING} ELSE {unknown} END"
        return code, problem

    def labels(self, col: Categorical) -> list[tuple[str, int]]:
        rows = [(c, i) for i, c in enumerate(col.categories)]
        return rows + ([(col.other, col.other_code)] if col.other is not None else [])

    def build(self, clean: str, kind_of: Mapping[str, str]) -> tuple[str, str]:
        stage1, joins, stage2, checks = [], [], [], []
        for j, col in enumerate(self.schema.columns):
            v = f"t.{self.d.ident(col.name)}"
            kind = kind_of[col.name]
            if isinstance(col, Numeric):
                x = self.d.parse(v, col.value_format) if kind == "text" else f"CAST({v} AS DOUBLE)"
                stage1 += [f"{x} AS x{j}", f"{v} IS NULL AS z{j}", f"CAST({v} AS STRING) AS r{j}"]
                stage2 += [f"s.x{j} AS x{j}", f"s.z{j} AS z{j}"]
                code, problem = self.numeric(col, j)
            else:
                stage1.append(f"{text_sql(v, kind)} AS r{j}")
                if len(col.categories) > CASE_LIMIT:
                    values = ", ".join(f"({self.d.lit(c)}, {i})" for c, i in self.labels(col))
                    joins.append(f"LEFT JOIN (VALUES {values}) AS m{j}(label, code) ON s.r{j} = m{j}.label")
                    lookup = f"m{j}.code"
                else:
                    whens = " ".join(f"WHEN {self.d.lit(c)} THEN {i}" for c, i in self.labels(col))
                    lookup = f"CASE s.r{j} {whens} END"
                code, problem = self.categorical(col, j, lookup)
            stage2 += [f"{code} AS c{j}", f"s.r{j} AS r{j}"]
            checks.append(problem)
        inner = f"SELECT {', '.join(stage1)} FROM ({clean}) AS t"
        staged = f"SELECT {', '.join(stage2)} FROM ({inner}) AS s {' '.join(joins)}"
        sizes = self.schema.shape
        casts = ", ".join(f"CAST(c{j} AS {self.d.code_type(sizes[j])}) AS c{j}" for j in range(len(sizes)))
        coded = f"SELECT {casts} FROM ({staged}) AS q"
        if self.release:  # records the schema cannot hold are left out (``encode(..., release=True)``)
            coded += " WHERE " + " AND ".join(f"c{j} IS NOT NULL" for j in range(len(sizes)))
        problems = ", ".join(f"{p} AS p{j}" for j, p in enumerate(checks))
        aggs = ", ".join(
            f"min(p{j}) FILTER (WHERE p{j} > 0) AS k{j}, "
            f"min_by(r{j}, p{j}) FILTER (WHERE p{j} > 0) AS v{j}, "
            f"count(*) FILTER (WHERE p{j} > 0) AS b{j}"
            for j in range(len(checks))
        )
        check = f"SELECT count(*) AS n, {aggs} FROM (SELECT {problems}, q.* FROM ({staged}) AS q) AS z"
        return coded, check


def coding_sql(
    schema: Schema,
    clean: str,
    kind_of: Mapping[str, str],
    dialect: Dialect = DUCKDB,
    *,
    clip: bool = False,
    other: bool = False,
    release: bool = False,
) -> tuple[str, str]:
    """(SQL of the code columns c0..c{d-1}, NULL where a value cannot be encoded; SQL of the check query).

    ``clean`` selects the cleaned columns, named as in the schema; ``kind_of`` maps each to
    'text' | 'int' | 'float' | 'bool'. The check query returns one row: ``n`` (rows) and, per column
    j, ``k{j}`` (the smallest problem kind, ``privsample.data.encoding``), ``v{j}`` (a value with that
    problem) and ``b{j}`` (bad rows). ``release``: the per-record rule of ``encode(..., release=True)``;
    rows with a value the schema cannot hold are left out of the codes (the check query is then unused).
    """
    return _Coder(schema, dialect, bool(clip), bool(other), bool(release)).build(clean, kind_of)


def null_counts_sql(table: str, d: int) -> str:
    """One row: ``n`` (rows) and, per code column j, ``k{j}`` (rows whose code is NULL)."""
    return f"SELECT count(*) AS n, {', '.join(f'count(*) - count(c{j}) AS k{j}' for j in range(d))} FROM {table}"


def counts_sql(table: str, batch: Sequence[tuple[int, ...]]) -> str:
    """Counts of each clique (sorted code positions) of ``batch`` in one scan: columns c{j}, g{j}, n."""
    cols = sorted(set().union(*batch))
    sets = ", ".join("(" + ", ".join(f"c{j}" for j in key) + ")" for key in batch)
    select = ", ".join([f"c{j}" for j in cols] + [f"grouping(c{j}) AS g{j}" for j in cols])
    return f"SELECT {select}, count(*) AS n FROM {table} GROUP BY GROUPING SETS ({sets})"
