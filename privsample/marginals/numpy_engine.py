"""In-memory marginal engine: integer codes in NumPy arrays, counts by ``np.bincount``."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from privsample.marginals.base import Clique, MarginalEngine

CACHE_BYTES = 64 * 2**20


class NumpyEngine(MarginalEngine):
    """Marginals of an encoded table held in memory as {column: int array} over ``domain``."""

    def __init__(self, codes: Mapping[str, np.ndarray], domain):
        self.domain = domain
        self._codes = {a: np.asarray(codes[a], dtype=np.int64) for a in domain.attributes}
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
                    idx = np.ravel_multi_index([self._codes[a] for a in cl], shape)
                    hit = np.bincount(idx, minlength=int(np.prod(shape))).astype(np.int64).reshape(shape)
                if self._cache_bytes + hit.nbytes <= CACHE_BYTES:  # mechanisms re-ask small cliques often
                    self._cache[cl] = hit
                    self._cache_bytes += hit.nbytes
            out[cl] = hit
        return out

    def total(self) -> int:
        return self.n

    def codes(self, attribute: str) -> np.ndarray:
        return self._codes[attribute]
