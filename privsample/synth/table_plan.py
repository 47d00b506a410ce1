"""Many marginals of one large table in a few passes, and the adjoint: many small tables broadcast into it.

A junction tree's largest super-clique can hold millions of cells (AIM's models of tables with large domains or
many columns); each calibration reads it once per model clique and separator it holds, and a sum onto a few of its
axes (``np.einsum``) runs at a fraction of the memory's speed when the axes summed out are inner ones. A
:class:`TablePlan` computes all of them at once: it sums out one axis at a time into smaller tables, chosen
greedily so that each intermediate serves as many targets as possible (the one axis that the most targets lack;
among equals, the cheapest to sum out), and computes each target from the smallest intermediate that holds it.
On a BR2000 model of 1.5M cells (AIM at epsilon 3) its 14 targets took 3.8 ms against 57 ms one by one.

:meth:`TablePlan.expand` runs the same plan backwards: the broadcast sum (or product) of tables over the targets,
accumulated in the small intermediates first and broadcast into the large table once per intermediate (the
log-potentials of the model cliques a super-clique holds; the messages its children send it).

Exact arithmetic: every result is the same sum or product as computed one target at a time, in another order of
floating-point additions (equal up to rounding, tested). Post-processing only: it sees model tables, never records.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

SMALL_CELLS = 1 << 14  # an intermediate this small computes its targets directly


def _drop_cost(shape: tuple, i: int) -> float:
    """Relative cost of summing out axis ``i`` of a C-ordered table: a pass over it, slower when the axes
    inside ``i`` hold few cells (measured: 0.3 ms per 1.5M cells with 512 inner cells, 2.9 ms with 1)."""
    return math.prod(shape) * (0.1 + 1.0 / math.sqrt(math.prod(shape[i + 1 :])))


@lru_cache(maxsize=1 << 14)
def sum_spec(src: tuple, dst: tuple) -> str | None:
    """The ``einsum`` spec that sums a table over ``src`` onto ``dst`` (None when they are equal)."""
    if src == dst:
        return None
    letter = {a: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, a in enumerate(src)}
    return "".join(letter[a] for a in src) + "->" + "".join(letter[a] for a in dst)


def broadcast_to(arr: np.ndarray, src: Sequence[str], dst: Sequence[str]) -> np.ndarray:
    """A table over ``src`` (a subset of ``dst``) as an array broadcastable over ``dst``'s axes."""
    src = list(src)
    kept = [a for a in dst if a in src]
    out = np.transpose(arr, [src.index(a) for a in kept]) if kept != src else arr
    return out.reshape([arr.shape[src.index(a)] if a in src else 1 for a in dst])


class TablePlan:
    """The plan for a table over ``axes`` (of ``shape``) and its ``targets`` (subsets of ``axes``, each a tuple
    of axis names in the order its results take)."""

    def __init__(self, axes: Sequence[str], shape: Sequence[int], targets: Sequence[tuple]):
        self.axes, self.shape = tuple(axes), tuple(int(s) for s in shape)
        self.children: list[TablePlan] = []
        remaining = list(dict.fromkeys(tuple(t) for t in targets))
        while remaining and math.prod(self.shape) > SMALL_CELLS and remaining != [self.axes]:
            best = None
            for i, x in enumerate(self.axes):
                served = [t for t in remaining if x not in t]
                key = (len(served), -_drop_cost(self.shape, i))
                if served and (best is None or key > best[0]):
                    best = (key, i, served)
            if best is None:
                break
            _, i, served = best
            self.children.append(
                TablePlan(self.axes[:i] + self.axes[i + 1 :], self.shape[:i] + self.shape[i + 1 :], served)
            )
            remaining = [t for t in remaining if t not in served]
        self.direct = remaining
        self.specs = [sum_spec(self.axes, c.axes) for c in self.children] + [
            sum_spec(self.axes, t) for t in self.direct
        ]

    def marginals(self, table: np.ndarray, out: dict | None = None) -> dict[tuple, np.ndarray]:
        """Every target's sum of ``table`` (over ``axes``), keyed by target: new arrays, never views of ``table``."""
        out = {} if out is None else out
        for child, spec in zip(self.children, self.specs):
            child.marginals(np.einsum(spec, table), out)
        for t, spec in zip(self.direct, self.specs[len(self.children) :]):
            out[t] = np.einsum(spec, table) if t != self.axes else table.copy()
        return out

    def expand(
        self, tables: dict[tuple, np.ndarray], out: np.ndarray, op: Callable = np.add, fresh: bool = False
    ) -> np.ndarray:
        """``out`` (over ``axes``) combined by ``op`` (``np.add`` or ``np.multiply``) with every target's table in
        ``tables`` broadcast over ``axes``, in place; targets missing from ``tables`` are skipped. ``fresh``:
        ``out``'s values are not read, as if it held ``op``'s unit (0 or 1): the first table is copied in, which
        saves a pass over ``out`` and gives the same numbers. The intermediates take ``out``'s dtype."""
        parts = [
            (child.expand(tables, np.empty(child.shape, out.dtype), op, fresh=True), child.axes)
            for child in self.children
            if any(t in tables for t in child.targets())
        ]
        parts += [(tables[t].astype(out.dtype, copy=False), t) for t in self.direct if t in tables]
        for i, (table, axes) in enumerate(parts):
            if fresh and i == 0:
                np.copyto(out, broadcast_to(table, axes, self.axes))
            else:
                op(out, broadcast_to(table, axes, self.axes), out=out)
        if fresh and not parts:
            out.fill(0.0 if op is np.add else 1.0)
        return out

    def targets(self) -> list[tuple]:
        """The targets this plan (with its intermediates) computes."""
        hit = self.__dict__.get("_targets")
        if hit is None:
            hit = self._targets = [t for c in self.children for t in c.targets()] + list(self.direct)
        return hit
