"""Out-of-core marginal engine: DuckDB computes the integer codes in SQL and the counts by GROUP BY.

The data never passes through pandas. The file is read with the same SQL as ``read_table``
(``privsample.data.table.source_sql``), and the codes follow ``privsample.data.encoding.encode``
exactly: same number grammar, same binning (``np.searchsorted(edges[1:-1], x, side='right')``),
same ``clip``/``other`` policy, checked by one validation query up front. Several cliques are
counted per scan with GROUPING SETS; results are cached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from privsample.data.encoding import (MISSING, NEEDS_OTHER, NOT_A_NUMBER, NUMBER_RE, OUT_OF_RANGE, UNKNOWN,
                                      describe_problem)
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.data.table import (FORMATS, clean_select, duckdb_input_error, empty_table_error, source_sql,
                                   sql_ident, sql_isnan, sql_str)
from privsample.errors import InputError
from privsample.marginals.base import Clique, MarginalEngine

CASE_LIMIT = 256  # categoricals with more categories are coded by a join instead of a CASE
_MAX_SETS = 64  # grouping sets per query
_MAX_COLS = 60  # distinct columns per query (GROUPING() bitmask)
_SRC = "privsample_source"


def _num(x: float) -> str:
    return f"CAST('{float(x)!r}' AS DOUBLE)"


class DuckDBEngine(MarginalEngine):
    """Marginals of a CSV/Parquet file (or a DuckDB relation / table) coded by ``schema``, in DuckDB.

    ``source``: a path (``.csv``, ``.csv.gz``, ``.txt``, ``.parquet``, ``.pq``), a
    ``duckdb.DuckDBPyRelation``, or the name of a table/view in ``connection`` (default: DuckDB's
    default connection). ``memory_limit`` (bytes or a DuckDB size such as ``"2GB"``) and ``threads``
    apply to the engine's own connection (file sources only).
    """

    def __init__(self, source, schema: Schema, *, clip: bool = False, other: bool = False,
                 memory_limit: int | str | None = None, threads: int | None = None, connection=None):
        import duckdb

        self.schema = schema
        self.domain = schema.domain()
        self.clip, self.other = bool(clip), bool(other)
        self._con = None
        self._owns_con = False
        self._rel = None
        self._label = str(source)
        na = tuple(schema.na_values)
        if isinstance(source, duckdb.DuckDBPyRelation):
            self._rel = source
            self._label = "relation"
            clean, names, kinds = self._clean_for(sql_ident(_SRC), source.columns, source.types, na)
        elif isinstance(source, Path) or self._looks_like_path(source):
            config = {}
            if memory_limit is not None:
                config["memory_limit"] = f"{int(memory_limit)}B" if isinstance(memory_limit, int) else str(memory_limit)
            if threads is not None:
                config["threads"] = int(threads)
            try:
                self._con = duckdb.connect(":memory:", config=config)
                self._owns_con = True
            except duckdb.Error as exc:
                raise InputError(f"DuckDB settings rejected: {str(exc).splitlines()[0]}") from None
            clean, names, kinds = source_sql(self._con, source, na)
        else:
            self._con = connection if connection is not None else duckdb.default_connection()
            try:
                rel = self._con.sql(f"SELECT * FROM {sql_ident(str(source))}")
            except duckdb.Error:
                raise InputError(f"no such data file or DuckDB table: {source}") from None
            clean, names, kinds = self._clean_for(sql_ident(str(source)), rel.columns, rel.types, na)
        kind_of = dict(zip(names, kinds))
        for col in schema.columns:
            if col.name not in kind_of:
                raise InputError(f"column '{col.name}' is in the schema but not in the data")
        self._coded, self._checked = self._build(clean, kind_of)
        self._cache: dict[tuple[int, ...], np.ndarray] = {}
        self.n = self._validate()

    # -- construction -----------------------------------------------------------------------------
    @staticmethod
    def _looks_like_path(source) -> bool:
        s = str(source)
        return "/" in s or "\\" in s or Path(s).exists() or any(s.lower().endswith(x) for x in FORMATS)

    @staticmethod
    def _clean_for(from_sql: str, names, types, na) -> tuple[str, list[str], list[str]]:
        names = list(names)
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"duplicate column name(s) in the data: {', '.join(repr(d) for d in dup)}")
        sql, kinds = clean_select(from_sql, names, [str(t) for t in types], na)
        return sql, names, kinds

    def _run(self, sql: str):
        if self._rel is not None:
            return self._rel.query(_SRC, sql)
        return self._con.sql(sql)

    def _build(self, clean: str, kind_of: dict[str, str]) -> tuple[str, str]:
        """(SQL of the coded table c0..c{d-1}; SQL of the validation query)."""
        stage1, joins, stage2, checks = [], [], [], []
        for j, col in enumerate(self.schema.columns):
            v = f"t.{sql_ident(col.name)}"
            kind = kind_of[col.name]
            if isinstance(col, Numeric):
                x = (f"CASE WHEN regexp_full_match({v}, {sql_str(NUMBER_RE)}, 'i') THEN TRY_CAST({v} AS DOUBLE) END"
                     if kind == "text" else f"CAST({v} AS DOUBLE)")
                stage1 += [f"{x} AS x{j}", f"CAST({v} AS VARCHAR) AS r{j}"]
                stage2.append(f"s.x{j} AS x{j}")
                code, problem = self._numeric_sql(col, j)
            else:
                stage1.append(f"{self._text_sql(v, kind)} AS r{j}")
                if len(col.categories) > CASE_LIMIT:
                    rows = [(c, i) for i, c in enumerate(col.categories)]
                    if col.other is not None:
                        rows.append((col.other, col.other_code))
                    values = ", ".join(f"({sql_str(c)}, {i})" for c, i in rows)
                    joins.append(f"LEFT JOIN (VALUES {values}) AS m{j}(label, code) ON s.r{j} = m{j}.label")
                    lookup = f"m{j}.code"
                else:
                    whens = [f"WHEN {sql_str(c)} THEN {i}" for i, c in enumerate(col.categories)]
                    if col.other is not None:
                        whens.append(f"WHEN {sql_str(col.other)} THEN {col.other_code}")
                    lookup = f"CASE s.r{j} {' '.join(whens)} END"
                code, problem = self._categorical_sql(col, j, lookup)
            stage2 += [f"{code} AS c{j}", f"s.r{j} AS r{j}"]
            checks.append(problem)
        inner = f"SELECT {', '.join(stage1)} FROM ({clean}) AS t"
        staged = f"SELECT {', '.join(stage2)} FROM ({inner}) AS s {' '.join(joins)}"
        d = len(self.schema.columns)
        coded = f"SELECT {', '.join(f'c{j}' for j in range(d))} FROM ({staged}) AS q"
        problems = ", ".join(f"{p} AS p{j}" for j, p in enumerate(checks))
        aggs = ", ".join(f"min(p{j}) FILTER (WHERE p{j} > 0) AS k{j}, arg_min(r{j}, p{j}) FILTER (WHERE p{j} > 0) AS v{j}, "
                         f"count(*) FILTER (WHERE p{j} > 0) AS b{j}" for j in range(d))
        check = f"SELECT count(*) AS n, {aggs} FROM (SELECT {problems}, * FROM ({staged}) AS q) AS z"
        return coded, check

    def _numeric_sql(self, col: Numeric, j: int) -> tuple[str, str]:
        def missing(t: str) -> str:
            return f"({t}.r{j} IS NULL OR coalesce({sql_isnan(f'{t}.x{j}')}, false))"

        x = f"s.x{j}"
        bad = f"({x} IS NULL)"
        outside = f"({x} < {_num(col.lower)} OR {x} > {_num(col.upper)})"
        edges = col.bin_edges
        inner_edges = edges[1:-1]
        if len(inner_edges):
            whens = " ".join(f"WHEN {x} < {_num(e)} THEN {i}" for i, e in enumerate(inner_edges))
            binned = f"CASE {whens} ELSE {len(inner_edges)} END"
        else:
            binned = "0"
        k = int(col.bins)
        on_missing = str(col.null_code) if col.nullable else "NULL"
        on_outside = f"CASE WHEN {x} < {_num(col.lower)} THEN 0 ELSE {k - 1} END" if self.clip else "NULL"
        code = (f"CASE WHEN {missing('s')} THEN {on_missing} WHEN {bad} THEN NULL "
                f"WHEN {outside} THEN {on_outside} ELSE {binned} END")
        problem = (f"CASE WHEN c{j} IS NOT NULL THEN 0 WHEN {missing('q')} THEN {MISSING} "
                   f"WHEN q.x{j} IS NULL THEN {NOT_A_NUMBER} ELSE {OUT_OF_RANGE} END")
        return code, problem

    def _categorical_sql(self, col: Categorical, j: int, lookup: str) -> tuple[str, str]:
        coerce = self.other and col.other is not None
        on_missing = str(col.null_code) if col.nullable else (str(col.other_code) if coerce else "NULL")
        on_unknown = str(col.other_code) if coerce else "NULL"
        code = f"CASE WHEN s.r{j} IS NULL THEN {on_missing} ELSE coalesce({lookup}, {on_unknown}) END"
        unknown = NEEDS_OTHER if self.other else UNKNOWN
        problem = (f"CASE WHEN c{j} IS NOT NULL THEN 0 WHEN q.r{j} IS NULL THEN {MISSING} ELSE {unknown} END")
        return code, problem

    @staticmethod
    def _text_sql(v: str, kind: str) -> str:
        """The text a categorical value is compared as (as ``encoding.value_text``)."""
        if kind == "text":
            return v
        if kind == "bool":
            return f"CASE WHEN {v} IS NULL THEN NULL WHEN {v} THEN 'True' ELSE 'False' END"
        if kind == "int":
            return f"CAST({v} AS VARCHAR)"
        return (f"CASE WHEN {v} = trunc({v}) AND abs({v}) < 9007199254740992 "
                f"THEN CAST(CAST({v} AS BIGINT) AS VARCHAR) ELSE CAST({v} AS VARCHAR) END")

    def _validate(self) -> int:
        """Run the validation query: raise InputError for the first bad column; return the row count."""
        try:
            row = self._run(self._checked).fetchall()[0]
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - reader errors are bad input
            raise duckdb_input_error(exc, self._label) from None
        n = int(row[0])
        if n == 0:
            raise empty_table_error(self._label)
        for j, col in enumerate(self.schema.columns):
            kind, value, count = row[1 + 3 * j: 4 + 3 * j]
            if kind is not None:
                msg = describe_problem(col, int(kind), value)
                raise InputError(f"{msg} ({int(count)} bad row{'s' if count != 1 else ''})")
        return n

    # -- counting ---------------------------------------------------------------------------------
    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[Clique, np.ndarray]:
        cls = self._check(cliques)
        pos = {a: i for i, a in enumerate(self.schema.names)}
        keys = {}
        for cl in cls:
            if len(set(cl)) != len(cl):
                raise InputError(f"clique {cl} names a column more than once")
            keys[cl] = tuple(sorted(pos[a] for a in cl))
        todo = sorted({k for k in keys.values() if k and k not in self._cache})
        self._count(todo)
        out: dict[Clique, np.ndarray] = {}
        for cl, key in keys.items():
            if not key:
                out[cl] = np.array(self.n, dtype=np.int64)
                continue
            order = [key.index(pos[a]) for a in cl]
            out[cl] = np.ascontiguousarray(np.transpose(self._cache[key], order))
        return out

    def _count(self, keys: list[tuple[int, ...]]) -> None:
        batch: list[tuple[int, ...]] = []
        for key in keys:
            cols = sorted(set().union(*batch, key))
            if batch and (len(batch) >= _MAX_SETS or len(cols) > _MAX_COLS):
                self._count_batch(batch)
                batch = []
            batch.append(key)
        if batch:
            self._count_batch(batch)

    def _count_batch(self, batch: list[tuple[int, ...]]) -> None:
        cols = sorted(set().union(*batch))
        names = ", ".join(f"c{j}" for j in cols)
        sets = ", ".join("(" + ", ".join(f"c{j}" for j in key) + ")" for key in batch)
        sql = (f"SELECT {names}, GROUPING({names}) AS g, count(*) AS n FROM ({self._coded}) AS coded "
               f"GROUP BY GROUPING SETS ({sets})")
        try:
            res = self._run(sql).fetchnumpy()
        except Exception as exc:  # noqa: BLE001
            raise duckdb_input_error(exc, self._label) from None
        g = np.asarray(res["g"], dtype=np.int64)
        n = np.asarray(res["n"], dtype=np.int64)
        shape_all = self.schema.shape
        for key in batch:
            mask = sum(1 << (len(cols) - 1 - cols.index(j)) for j in cols if j not in key)
            sel = g == mask
            idx = []
            for j in key:
                col = res[f"c{j}"]
                if np.ma.getmaskarray(col)[sel].any():
                    raise InputError(f"{self._label}: the data changed after validation (invalid codes)")
                idx.append(np.ma.getdata(col)[sel].astype(np.int64))
            shape = tuple(shape_all[j] for j in key)
            counts = np.zeros(int(np.prod(shape)), dtype=np.int64)
            counts[np.ravel_multi_index(idx, shape)] = n[sel]
            if counts.sum() != self.n:
                raise InputError(f"{self._label}: the data changed after validation (row count)")
            self._cache[key] = counts.reshape(shape)

    def total(self) -> int:
        return self.n

    def close(self) -> None:
        """Close the engine's own DuckDB connection (not a connection passed in)."""
        if self._con is not None and self._owns_con:
            self._con.close()
        self._con = None

    def __enter__(self) -> "DuckDBEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
