"""In-memory marginal engine: integer codes in NumPy arrays, counts by ``np.bincount``.

Each column's codes are held in the smallest unsigned dtype of its domain (``code_dtype``: one byte a
cell for up to 256 values); a clique's flat cell index is computed in the smallest one that holds its
cells. The counts are exact whatever the dtypes."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from privsample.data.encoding import code_dtype
from privsample.marginals.base import Clique, MarginalEngine, Opener

CACHE_BYTES = 64 * 2**20


class NumpyEngine(MarginalEngine):
    """Marginals of an encoded table held in memory as {column: int array} over ``domain``."""

    def __init__(self, codes: Mapping[str, np.ndarray], domain):
        self.domain = domain
        self._codes = {a: _compact(a, codes[a], domain[a]) for a in domain.attributes}
        lengths = {len(v) for v in self._codes.values()}
        if len(lengths) > 1:
            raise ValueError("columns have different lengths")
        self.n = lengths.pop() if lengths else 0
        self._cache: dict[Clique, np.ndarray] = {}
        self._cache_bytes = 0

    @classmethod
    def from_dataset(cls, dataset) -> "NumpyEngine":
        """From an ``mbi.Dataset``."""
        return cls(
            {
                a: np.asarray(dataset.data[a]) if isinstance(dataset.data, dict) else dataset.data[:, i]
                for i, a in enumerate(dataset.domain.attributes)
            },
            dataset.domain,
        )

    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[Clique, np.ndarray]:
        out: dict[Clique, np.ndarray] = {}
        for cl in self._check(cliques):
            hit = self._cache.get(cl)
            if hit is None:
                shape = self.domain.project(cl).shape if cl else ()
                if not cl:
                    hit = np.array(self.n, dtype=np.int64)
                else:
                    cells = int(np.prod(shape))
                    hit = np.bincount(self._flat_index(cl, shape, cells), minlength=cells)
                    hit = hit.astype(np.int64).reshape(shape)
                if self._cache_bytes + hit.nbytes <= CACHE_BYTES:  # mechanisms re-ask small cliques often
                    self._cache[cl] = hit
                    self._cache_bytes += hit.nbytes
            out[cl] = hit
        return out

    def _flat_index(self, clique: Clique, shape: tuple[int, ...], cells: int) -> np.ndarray:
        """Each record's cell of ``clique`` in C order (as ``np.ravel_multi_index``), in ``code_dtype(cells + 1)``
        (room for every index and every axis length)."""
        if len(clique) == 1:
            return self._codes[clique[0]]
        t = code_dtype(cells + 1)
        idx = self._codes[clique[0]].astype(t)
        for a, k in zip(clique[1:], shape[1:]):
            idx *= t.type(k)
            idx += self._codes[a]  # its dtype is no wider than t (domain[a] <= cells)
        return idx

    def total(self) -> int:
        return self.n

    def codes(self, attribute: str) -> np.ndarray:
        return self._codes[attribute]


def _compact(name: str, values, size: int) -> np.ndarray:
    """The codes of column ``name`` in ``code_dtype(size)``; ValueError unless they lie in [0, size)."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu":
        arr = np.asarray(values, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"codes of column '{name}' must be a 1-D array")
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= size):
        raise ValueError(f"codes of column '{name}' must lie in [0, {size})")
    return arr.astype(code_dtype(size), copy=False)


class NumpyOpener(Opener):
    """The NumPy engine's way in: a table in memory (``frame``, already read as ``read_table`` reads the same data
    from CSV), or a file read whole for discovery (``values``), or, with a reviewed schema and no discovery, coded a
    batch at a time so that only its codes are ever in memory (``read_codes``: the same codes as
    ``encode(read_table(...), release=True)``). ``reading`` / ``coding``: context managers around reading and coding
    (progress)."""

    def __init__(self, source, *, frame=None, csv: dict, reading, coding, **_):
        self.source, self.frame, self.csv, self.reading, self.coding = source, frame, csv, reading, coding
        self._read = False

    def values(self):
        from pathlib import Path

        from privsample.data.table import read_table

        if not self._read:  # once: the reading phase is entered once
            self._read = True
            with self.reading:
                if self.frame is None:
                    self.frame = read_table(Path(self.source), allow_empty=True, **self.csv)
        return self.frame

    def unit_histogram(self, column: str, grid) -> np.ndarray:
        from privsample.marginals.bounding import size_histogram

        return size_histogram(self.values()[column].to_numpy(dtype=object), grid)

    def bound(self, column: str, k: int, seed: int | None = None) -> None:
        from privsample.marginals.bounding import bound

        self.frame = bound(self.values(), column, k, seed)

    def engine(self, release) -> NumpyEngine:
        from pathlib import Path

        from privsample.data.encoding import encode, read_codes

        if self.frame is None:  # a reviewed schema and a file: coded a batch at a time
            with self.reading:
                codes = read_codes(
                    Path(self.source), release, na_values=release.na_values, allow_empty=True, **self.csv
                )
            with self.coding:
                return NumpyEngine(codes, release.domain())
        with self.coding:
            return NumpyEngine(encode(self.frame, release, release=True, compact=True), release.domain())
