"""Counting over a coded table held by a SQL system (DuckDB, Spark): shared by both engines.

Setup reads the source once: ``coding_sql`` codes every row and the subclass *materialises* the
codes (one small integer per cell: a DuckDB table on disk, a persisted Spark DataFrame). A value
that cannot be encoded leaves a NULL code; only then is the source scanned again, by the check
query, to report the first bad value as ``encode`` would. Every later query scans the codes only.

``marginals`` answers from the cache (``MarginalCache``: exact, or summed out of a cached larger
clique), then counts the rest in few queries. ``batching="joint"`` (default) packs cliques into
groups whose union of columns has at most ``MAX_CELLS`` cells, counts the unions (up to
``MAX_SETS`` per query, as GROUPING SETS) and sums each clique out of its union: the 105 pairs of
15 columns are 11 unions in one scan. ``"sets"`` sends each clique as its own grouping set (up to
``MAX_SETS`` per query). Joint was faster (DuckDB, 10M rows: 6.1 s against 8.5 s,
``benchmarks/results/engines.md``, "Batching"): every grouping set is one more hash-table pass
per row (Spark expands each row once per set). ``stats`` counts queries and cache use.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import Iterable, Mapping, Sequence

import numpy as np

from privsample.data.encoding import describe_problem
from privsample.data.schema import Schema
from privsample.data.table import empty_table_error
from privsample.errors import InputError
from privsample.marginals.base import Clique, MarginalEngine
from privsample.marginals.cache import Key, MarginalCache, sum_out
from privsample.marginals.sql import Dialect, coding_sql, counts_sql, null_counts_sql

MAX_SETS = 64  # grouping sets per query
MAX_COLS = 60  # distinct columns per query
MAX_CELLS = 2**16  # joint batching: cells of one group's joint table
MAX_RESULT = 2**23  # values (rows x columns) a counting query may return, rows bounded by the cells
CACHE_MB = 256.0
BATCHING = ("joint", "sets")


class CodedTableEngine(MarginalEngine):
    """Marginals of a table coded by ``schema`` in SQL; subclasses run queries and store the codes."""

    dialect: Dialect
    max_cells = MAX_CELLS
    max_sets = MAX_SETS
    max_result = MAX_RESULT

    def _setup(
        self,
        schema: Schema,
        clean: str,
        kind_of: Mapping[str, str],
        *,
        clip: bool,
        other: bool,
        cache_mb: float,
        batching: str,
        label: str,
        release: bool = False,
    ) -> None:
        """Code ``clean`` (cleaned columns named as in the schema, of kinds ``kind_of``) and check it.

        ``release``: code by the per-record rule of ``encode(..., release=True)``: no value is an error and
        an empty table is allowed (the mechanisms release from noisy counts for n = 0 as for any n)."""
        if batching not in BATCHING:
            raise InputError(f"unknown batching '{batching}' ({'|'.join(BATCHING)})")
        self.schema, self.domain, self._label, self.batching = schema, schema.domain(), label, batching
        for col in schema.columns:
            if col.name not in kind_of:
                raise InputError(f"column '{col.name}' is in the schema but not in the data")
        self._cache = MarginalCache(int(cache_mb * 2**20))
        self._stats = {"queries": 0, "cliques_counted": 0, "seconds": 0.0}
        coded, check = coding_sql(schema, clean, kind_of, self.dialect, clip=clip, other=other, release=release)
        t0 = time.perf_counter()
        self._codes = self._materialise(coded)
        row = self._fetch(null_counts_sql(self._codes, len(schema.columns)))
        self.n = int(row["n"][0])
        if self.n == 0 and not release:
            raise empty_table_error(label)
        if any(int(row[f"k{j}"][0]) for j in range(len(schema.columns))):
            self._raise_first_problem(check)
        self._stats["setup_seconds"] = time.perf_counter() - t0

    @property
    def stats(self) -> dict:
        """Queries run, cliques counted by them, cache hits, cliques summed out of cached ones, seconds."""
        return {**self._stats, "cache_hits": self._cache.hits, "derived": self._cache.derived}

    def _raise_first_problem(self, check: str) -> None:
        row = {k: v[0] for k, v in self._fetch(check, nulls=None).items()}
        for j, col in enumerate(self.schema.columns):
            if row[f"k{j}"] is not None:
                count = int(row[f"b{j}"])
                msg = describe_problem(col, int(row[f"k{j}"]), row[f"v{j}"])
                raise InputError(f"{msg} ({count} bad row{'s' if count != 1 else ''})")
        raise InputError(f"{self._label}: the data changed while it was read")

    # -- subclass interface -----------------------------------------------------------------------
    @abstractmethod
    def _materialise(self, coded_sql: str) -> str:
        """Store the result of ``coded_sql``; return the SQL name to query it by."""

    @abstractmethod
    def _fetch(self, sql: str, nulls: int | None = -1) -> dict[str, np.ndarray]:
        """Run ``sql``; {column: array}, integer columns as int64 with NULL -> ``nulls`` (None: object
        arrays of Python values)."""

    # -- counting ---------------------------------------------------------------------------------
    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[Clique, np.ndarray]:
        t0 = time.perf_counter()
        pos = {a: i for i, a in enumerate(self.schema.names)}
        keys: dict[Clique, Key] = {}
        for cl in self._check(cliques):
            if len(set(cl)) != len(cl):
                raise InputError(f"clique {cl} names a column more than once")
            keys[cl] = tuple(sorted(pos[a] for a in cl))
        wanted = {k for k in keys.values() if k and self._cache.holder(k) is None}
        # count only maximal cliques; the others are summed out of them
        fresh = self._count(sorted(k for k in wanted if not any(set(k) < set(o) for o in wanted)))
        out: dict[Clique, np.ndarray] = {}
        for cl, key in keys.items():
            if not key:
                out[cl] = np.array(self.n, dtype=np.int64)
                continue
            counts = self._cache.get(key)
            if counts is None:  # not cached (too big, or evicted by this call's counts)
                held = next((k for k in fresh if set(key) <= set(k)), None)
                if held is None:
                    fresh.update(self._count([key]))
                    held = key
                counts = sum_out(fresh[held], held, key)
            order = [key.index(pos[a]) for a in cl]
            out[cl] = np.transpose(counts, order).copy()
        self._stats["seconds"] += time.perf_counter() - t0
        return out

    def _count(self, keys: list[Key]) -> dict[Key, np.ndarray]:
        """Count ``keys`` (and cache them): group them (``_plan``), count the groups' unions as
        GROUPING SETS, up to ``max_sets`` per query and within ``max_result`` values of result (the
        memory of the fetched counts), and sum each clique out of its union."""
        groups = self._plan(keys)
        shape = self.schema.shape
        # a query returns a row per cell that holds a record (at most n), each with 2 values a column + 1
        rows = lambda u: min(int(np.prod([shape[j] for j in u], dtype=np.float64)), max(self.n, 1))  # noqa: E731
        joint: dict[Key, np.ndarray] = {}
        batch: list[Key] = []
        held = 0  # rows the batch may return
        for union in [u for u, _ in groups] + [None]:
            if batch and (
                union is None
                or len(batch) >= self.max_sets
                or len(set().union(*batch, union)) > MAX_COLS
                or (held + rows(union)) * (2 * len(set().union(*batch, union)) + 1) > self.max_result
            ):
                joint.update(self._count_sets(batch))
                batch, held = [], 0
            if union is not None:
                batch.append(union)
                held += rows(union)
        got = dict(joint)
        for union, members in groups:
            for key in members:
                if key != union:
                    got[key] = sum_out(joint[union], union, key)
                    self._cache.put(key, got[key])
        return got

    def _plan(self, keys: list[Key]) -> list[tuple[Key, list[Key]]]:
        """Greedy: each clique joins the group whose union of columns grows least within ``max_cells``
        (with ``batching="sets"``, every clique is its own group)."""
        shape = self.schema.shape
        limit = self.max_cells if self.batching == "joint" else 0
        cells = lambda cols: int(np.prod([shape[j] for j in cols], dtype=np.float64))  # noqa: E731
        groups: list[tuple[set[int], list[Key]]] = []
        for key in sorted(keys, key=cells, reverse=True):
            fits = [
                (cells(g | set(key)), i)
                for i, (g, _) in enumerate(groups)
                if cells(g | set(key)) <= limit and len(g | set(key)) <= MAX_COLS
            ]
            if fits:
                g, members = groups[min(fits)[1]]
                g.update(key)
                members.append(key)
            else:
                groups.append((set(key), [key]))
        return [(tuple(sorted(g)), members) for g, members in groups]

    def _count_sets(self, batch: list[Key]) -> dict[Key, np.ndarray]:
        """One query: the counts of each clique of ``batch`` (GROUPING SETS), cached."""
        res = self._fetch(counts_sql(self._codes, batch))
        self._stats["queries"] += 1
        self._stats["cliques_counted"] += len(batch)
        cols = sorted(set().union(*batch))
        n = res["n"]
        shape_all = self.schema.shape
        out = {}
        for key in batch:
            sel = np.ones(len(n), dtype=bool)
            for j in cols:
                sel &= res[f"g{j}"] == (0 if j in key else 1)
            shape = tuple(shape_all[j] for j in key)
            counts = np.zeros(int(np.prod(shape)), dtype=np.int64)
            counts[np.ravel_multi_index([res[f"c{j}"][sel] for j in key], shape)] = n[sel]
            out[key] = counts.reshape(shape)
            self._cache.put(key, out[key])
        return out

    def total(self) -> int:
        return self.n

    def close(self) -> None:
        """Release the engine's resources (idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_unique(names: Sequence[str]) -> None:
    """InputError naming the columns of a relation / DataFrame that appear more than once."""
    dup = sorted({n for n in names if list(names).count(n) > 1})
    if dup:
        raise InputError(f"duplicate column name(s) in the data: {', '.join(repr(d) for d in dup)}")


def arrow_columns(table, nulls: int | None = -1) -> dict[str, np.ndarray]:
    """{column: array} of a pyarrow table; integer columns as int64 with NULL -> ``nulls``
    (``nulls=None``: object arrays of Python values)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {}
    for name, col in zip(table.column_names, table.columns):
        if nulls is None:
            out[name] = np.array(col.to_pylist(), dtype=object)
        elif pa.types.is_integer(col.type):
            out[name] = pc.fill_null(col.cast(pa.int64()), nulls).to_numpy()
        else:
            out[name] = col.to_numpy()
    return out


def arrow_values(col, kind: str) -> np.ndarray:
    """A column of distinct values fetched from SQL as a NumPy array: text as an object array of ``str``, integers
    as int64 (uint64 above it), floats as float64, booleans as bool (``ColumnValues`` takes any of them)."""
    import pyarrow as pa

    if kind == "int":
        return col.to_numpy().astype(np.uint64 if pa.types.is_uint64(col.type) else np.int64, copy=False)
    if kind == "float":
        return col.to_numpy().astype(np.float64, copy=False)
    if kind == "bool":
        return col.to_numpy(zero_copy_only=False).astype(bool)
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)
