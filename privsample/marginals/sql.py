"""The schema encoding as SQL: one text for DuckDB and Spark SQL, with a small ``Dialect`` for the rest.

``coding_sql`` turns a cleaned table (``privsample.data.table.clean_select``: trimmed text, NA values
and NaN as NULL) into the integer codes of ``privsample.data.encoding.encode`` exactly: same number
grammar (``NUMBER_RE``), same binning (``np.searchsorted(edges[1:-1], x, side='right')``), same
``clip``/``other`` policy. Its second query finds the first bad value of each column, so that a
failure reads as ``encode``'s. ``counts_sql`` counts cliques of code columns with GROUPING SETS.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from privsample.data.encoding import MISSING, NEEDS_OTHER, NOT_A_NUMBER, NUMBER_RE, OUT_OF_RANGE, UNKNOWN
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.data.table import WHITESPACE, sql_ident, sql_isnan, sql_str

CASE_LIMIT = 256  # categoricals with more categories are coded by a join instead of a CASE
_WS = " || ".join(f"chr({ord(c)})" for c in WHITESPACE)  # as ``privsample.data.table.clean_select``
_EXACT = "9007199254740992"  # 2**53: larger floats are not printed as integers (``encoding.value_text``)


class Dialect:
    """DuckDB SQL; ``SparkDialect`` overrides what Spark SQL spells differently."""

    name = "duckdb"
    code_types = ((255, "UTINYINT"), (65535, "USMALLINT"), (2**32 - 1, "UINTEGER"))

    def lit(self, s: str) -> str:
        return sql_str(s)

    def ident(self, s: str) -> str:
        return sql_ident(s)

    def isnan(self, x: str) -> str:
        return sql_isnan(x)

    def number(self, v: str) -> str:
        """The DOUBLE that text ``v`` denotes under ``NUMBER_RE``, else NULL."""
        return f"CASE WHEN regexp_full_match({v}, {self.lit(NUMBER_RE)}, 'i') THEN TRY_CAST({v} AS DOUBLE) END"

    def code_type(self, size: int) -> str:
        return next((t for top, t in self.code_types if size - 1 <= top), "BIGINT")

    def trim(self, v: str) -> str:
        """``v`` as text, stripped of ``WHITESPACE`` at both ends."""
        return f"trim(CAST({v} AS VARCHAR), {_WS})"


class SparkDialect(Dialect):
    name = "spark"
    code_types = ((127, "TINYINT"), (32767, "SMALLINT"), (2**31 - 1, "INT"))

    def lit(self, s: str) -> str:
        return "'" + str(s).replace("\\", "\\\\").replace("'", "\\'") + "'"

    def ident(self, s: str) -> str:
        return "`" + str(s).replace("`", "``") + "`"

    def isnan(self, x: str) -> str:
        return f"isnan({x})"

    def trim(self, v: str) -> str:
        return f"trim(BOTH {self.lit(WHITESPACE)} FROM CAST({v} AS STRING))"

    def number(self, v: str) -> str:
        # Java regexes: \z (``$`` would also match before a final U+2028); Spark's cast rejects '+nan'.
        pattern = self.lit(f"(?i)^(?:{NUMBER_RE})\\z")
        text = f"CASE WHEN lower({v}) IN ('+nan', '-nan') THEN 'NaN' ELSE {v} END"
        return f"CASE WHEN {v} RLIKE {pattern} THEN TRY_CAST({text} AS DOUBLE) END"


DUCKDB, SPARK = Dialect(), SparkDialect()


def clean_sql(from_sql: str, columns: Sequence[tuple[str, str, str]], na_values: Sequence[str],
              dialect: Dialect = DUCKDB) -> str:
    """SQL selecting ``columns`` of ``from_sql`` cleaned as ``read_table`` cleans them (the SQL of
    ``privsample.data.table.clean_select``, in any dialect): text trimmed of ``WHITESPACE``, with
    ``na_values`` as NULL; floats as DOUBLE with NaN as NULL; integers and booleans as they are.
    ``columns``: (source expression, output name, kind: 'text' | 'int' | 'float' | 'bool')."""
    d = dialect
    na = ", ".join(d.lit(v) for v in na_values)
    inner, outer = [], []
    for src, name, kind in columns:
        q = d.ident(name)
        if kind == "text":
            inner.append(f"{d.trim(src)} AS {q}")
            outer.append(f"CASE WHEN {q} IN ({na}) THEN NULL ELSE {q} END AS {q}" if na else q)
        elif kind == "float":
            inner.append(f"CAST({src} AS DOUBLE) AS {q}")
            outer.append(f"CASE WHEN {d.isnan(q)} THEN NULL ELSE {q} END AS {q}")
        else:
            inner.append(f"{src} AS {q}")
            outer.append(q)
    return f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {from_sql}) AS _raw"


def text_sql(v: str, kind: str) -> str:
    """The text a categorical value is compared as (as ``encoding.value_text``), from a cleaned column."""
    if kind == "text":
        return v
    if kind == "bool":
        return f"CASE WHEN {v} IS NULL THEN NULL WHEN {v} THEN 'True' ELSE 'False' END"
    if kind == "int":
        return f"CAST({v} AS STRING)"
    return (f"CASE WHEN abs({v}) >= {_EXACT} THEN CAST({v} AS STRING) "
            f"WHEN {v} = floor({v}) THEN CAST(CAST({v} AS BIGINT) AS STRING) ELSE CAST({v} AS STRING) END")


class _Coder:
    """Builds the coding SQL for one schema and policy."""

    def __init__(self, schema: Schema, dialect: Dialect, clip: bool, other: bool):
        self.schema, self.d, self.clip, self.other = schema, dialect, clip, other

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
        code = (f"CASE WHEN {missing('s')} THEN {on_missing} WHEN {x} IS NULL THEN NULL "
                f"WHEN {outside} THEN {on_outside} ELSE {binned} END")
        problem = (f"CASE WHEN c{j} IS NOT NULL THEN 0 WHEN {missing('q')} THEN {MISSING} "
                   f"WHEN q.x{j} IS NULL THEN {NOT_A_NUMBER} ELSE {OUT_OF_RANGE} END")
        return code, problem

    def categorical(self, col: Categorical, j: int, lookup: str) -> tuple[str, str]:
        coerce = self.other and col.other is not None
        on_missing = str(col.null_code) if col.nullable else (str(col.other_code) if coerce else "NULL")
        on_unknown = str(col.other_code) if coerce else "NULL"
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
                x = self.d.number(v) if kind == "text" else f"CAST({v} AS DOUBLE)"
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
        coded = (f"SELECT {', '.join(f'CAST(c{j} AS {self.d.code_type(sizes[j])}) AS c{j}' for j in range(len(sizes)))} "
                 f"FROM ({staged}) AS q")
        problems = ", ".join(f"{p} AS p{j}" for j, p in enumerate(checks))
        aggs = ", ".join(f"min(p{j}) FILTER (WHERE p{j} > 0) AS k{j}, min_by(r{j}, p{j}) FILTER (WHERE p{j} > 0) AS v{j}, "
                         f"count(*) FILTER (WHERE p{j} > 0) AS b{j}" for j in range(len(checks)))
        check = f"SELECT count(*) AS n, {aggs} FROM (SELECT {problems}, q.* FROM ({staged}) AS q) AS z"
        return coded, check


def coding_sql(schema: Schema, clean: str, kind_of: Mapping[str, str], dialect: Dialect = DUCKDB, *,
               clip: bool = False, other: bool = False) -> tuple[str, str]:
    """(SQL of the code columns c0..c{d-1}, NULL where a value cannot be encoded; SQL of the check query).

    ``clean`` selects the cleaned columns, named as in the schema; ``kind_of`` maps each to
    'text' | 'int' | 'float' | 'bool'. The check query returns one row: ``n`` (rows) and, per column
    j, ``k{j}`` (the smallest problem kind, ``privsample.data.encoding``), ``v{j}`` (a value with that
    problem) and ``b{j}`` (bad rows).
    """
    return _Coder(schema, dialect, bool(clip), bool(other)).build(clean, kind_of)


def null_counts_sql(table: str, d: int) -> str:
    """One row: ``n`` (rows) and, per code column j, ``k{j}`` (rows whose code is NULL)."""
    return f"SELECT count(*) AS n, {', '.join(f'count(*) - count(c{j}) AS k{j}' for j in range(d))} FROM {table}"


def counts_sql(table: str, batch: Sequence[tuple[int, ...]]) -> str:
    """Counts of each clique (sorted code positions) of ``batch`` in one scan: columns c{j}, g{j}, n."""
    cols = sorted(set().union(*batch))
    sets = ", ".join("(" + ", ".join(f"c{j}" for j in key) + ")" for key in batch)
    select = ", ".join([f"c{j}" for j in cols] + [f"grouping(c{j}) AS g{j}" for j in cols])
    return f"SELECT {select}, count(*) AS n FROM {table} GROUP BY GROUPING SETS ({sets})"
