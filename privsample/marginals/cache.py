"""An LRU of computed marginals, bounded in bytes, that also answers sub-cliques of what it holds.

Keys are cliques as sorted tuples of column positions; a value's axes follow its key. A clique
that is not held but is contained in a held one is derived by summing out the other columns
(exact, and much cheaper than a scan); the smallest such holder is used.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

Key = tuple[int, ...]


def sum_out(counts: np.ndarray, held: Key, key: Key) -> np.ndarray:
    """The marginal of ``key`` (a subset of ``held``) from the counts of ``held``."""
    if held == key:
        return counts
    return counts.sum(axis=tuple(i for i, j in enumerate(held) if j not in key), dtype=np.int64)


class MarginalCache:
    """``get(key)`` -> counts or None; ``put(key, counts)``. ``max_bytes`` bounds the held arrays."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.nbytes = 0
        self._held: OrderedDict[Key, np.ndarray] = OrderedDict()
        self.hits = self.derived = 0

    def __contains__(self, key: Key) -> bool:
        return key in self._held

    def holder(self, key: Key) -> Key | None:
        """The smallest held key that contains ``key`` (``key`` itself if held)."""
        if key in self._held:
            return key
        s = set(key)
        best = [k for k in self._held if s.issubset(k)]
        return min(best, key=lambda k: self._held[k].size) if best else None

    def get(self, key: Key) -> np.ndarray | None:
        src = self.holder(key)
        if src is None:
            return None
        self._held.move_to_end(src)
        if src == key:
            self.hits += 1
            return self._held[src]
        self.derived += 1
        out = sum_out(self._held[src], src, key)
        self.put(key, out)
        return out

    def put(self, key: Key, counts: np.ndarray) -> None:
        if key in self._held:
            self.nbytes -= self._held.pop(key).nbytes
        if counts.nbytes > self.max_bytes:
            return
        counts.flags.writeable = False  # callers get copies (transposes) or read-only views
        self._held[key] = counts
        self.nbytes += counts.nbytes
        while self.nbytes > self.max_bytes:
            _, old = self._held.popitem(last=False)
            self.nbytes -= old.nbytes
