"""Calibration of a junction tree: the marginals of a graphical model's cliques from its log-potentials.

Private-PGM's estimators (McKenna, Sheldon & Miklau 2019, "Graphical-model based estimation and inference for
differential privacy") calibrate mbi's junction tree of the model cliques hundreds of times per fit. This module
does it in NumPy: Shafer-Shenoy message passing in linear space (log space when a table underflows), and Hugin
sweeps (what the estimator uses), which update each super-clique's table in place. A super-clique of many cells
computes the marginals it owes (its model cliques, its children's separators) and adds up the potentials it holds
by a :class:`~privsample.synth.table_plan.TablePlan`: a few passes over the large table instead of one per clique.
Every answer equals plain message passing up to float rounding (tested).

Post-processing only: it sees model tables, never records.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np

from privsample.synth.table_plan import TablePlan, broadcast_to, sum_spec

Clique = tuple[str, ...]


def sum_to(arr: np.ndarray, src: Sequence[str], dst: Sequence[str]) -> np.ndarray:
    """Marginalise a table over ``src`` onto ``dst`` (a subset), axes in ``dst``'s order.

    One ``einsum`` per call: for the partial sums over inner axes of message passing it was 2.6x
    faster than ``ndarray.sum(axis=...)`` plus a transpose (PPSyn-DP's Adult models)."""
    spec = sum_spec(tuple(src), tuple(dst))
    return arr if spec is None else np.einsum(spec, arr)


def _product_sum(arrays: Sequence[np.ndarray], scopes: tuple, dst: Sequence[str]) -> np.ndarray:
    """sum over the axes not in ``dst`` of the product of ``arrays`` (``scopes[0]`` contains the other scopes).

    With two or more arrays, einsum follows a contraction order chosen once per (scopes, shapes) by
    ``np.einsum_path`` (pairwise products through temporaries): on PPSyn-DP's Adult models the messages
    of the junction tree took 1.2 ms per sweep against 2.0 ms for einsum's single nested loop, which is
    still the faster choice for one array. The order depends only on the shapes, so results are
    reproducible."""
    if len(arrays) == 1:
        return sum_to(arrays[0], scopes[0], dst)
    spec = _product_spec(scopes, tuple(dst))
    return np.einsum(spec, *arrays, optimize=einsum_path(spec, tuple(a.shape for a in arrays)))


@lru_cache(maxsize=1 << 14)
def einsum_path(spec: str, shapes: tuple) -> list:
    """``np.einsum_path``'s greedy contraction order for ``spec`` on arrays of ``shapes`` (cached)."""
    return np.einsum_path(spec, *(np.empty(s) for s in shapes), optimize="greedy")[0]


@lru_cache(maxsize=1 << 14)
def _product_spec(scopes: tuple, dst: tuple) -> str:
    src = scopes[0]
    letter = {a: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, a in enumerate(src)}
    return ",".join("".join(letter[a] for a in s) for s in scopes) + "->" + "".join(letter[a] for a in dst)


def logsumexp_to(arr: np.ndarray, src: Sequence[str], dst: Sequence[str]) -> np.ndarray:
    """:func:`sum_to` in log space: log of the sum of exp(``arr``) over the axes of ``src`` not in ``dst``."""
    src = list(src)
    drop = tuple(i for i, a in enumerate(src) if a not in dst)
    if drop:
        m = arr.max(axis=drop, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        out = np.log(np.exp(arr - m).sum(axis=drop)) + m.reshape([s for i, s in enumerate(m.shape) if i not in drop])
    else:
        out = arr
    kept = [a for a in src if a in dst]
    return np.transpose(out, [kept.index(a) for a in dst]) if kept != list(dst) else out


class JunctionTree:
    """mbi's junction tree for a set of model cliques: Shafer-Shenoy message passing (linear or log space) and
    Hugin sweeps (:meth:`hugin_beliefs`, what the estimator uses)."""

    def __init__(self, domain, cliques: Sequence[Clique]):
        from mbi import junction_tree
        from mbi.clique_utils import clique_mapping

        self.domain = domain
        self.cliques = [tuple(c) for c in cliques]
        jtree, order = junction_tree.make_junction_tree(domain, self.cliques)
        self.elimination_order = list(order)
        self.order = junction_tree.message_passing_order(jtree)
        self.supers = [tuple(c) for c in junction_tree.maximal_cliques(jtree)]
        self.neighbors = {c: [tuple(k) for k in jtree.neighbors(c)] for c in self.supers}
        home = clique_mapping(self.supers, self.cliques, domain=domain)
        self.home = {c: tuple(home[c]) for c in self.cliques}
        self.shape = {c: tuple(domain.project(c).shape) for c in self.supers + self.cliques}
        self.sep = {(i, j): tuple(a for a in i if a in j) for i, j in self.order}
        self.cells = int(sum(math.prod(self.shape[c]) for c in self.supers))
        self.log_space = False  # set once the linear-space sweep underflows: later sweeps go straight to logs
        self.homed = {J: [c for c in self.cliques if self.home[c] == J] for J in self.supers}
        # large super-cliques that hold no model clique (the triangulation's fill-in): log-potential 0, so their
        # linear-space table before the messages is all ones, which the Hugin sweep never writes out
        self.bare = {J for J in self.supers if self._large(J) and not self.homed[J]}
        self.huge = {J for J in self.supers if math.prod(self.shape[J]) >= SINGLE_MIN_CELLS}  # float32 if asked
        self.index = {c: None if self._large(self.home[c]) else _cell_index(self.shape[self.home[c]], self.home[c], c)
                      for c in self.cliques}  # fmt: skip
        self._plans: dict = {}

    def _large(self, J: Clique) -> bool:
        return math.prod(self.shape[J]) > PLAN_MIN_CELLS

    def plans(self, J: Clique) -> tuple[TablePlan, TablePlan, TablePlan] | None:
        """For a super-clique of more than ``PLAN_MIN_CELLS`` cells, its :class:`TablePlan` s: the potentials of
        the cliques it holds in, its children's messages in, its cliques' and children's marginals out (the
        children of :meth:`hugin_beliefs`' rooting); None for a smaller one. Built once."""
        if J not in self._plans:
            self._plans[J] = None
            if self._large(J):
                parent = dict(self._rooted())[J]
                kids = [self.sep[(J, k)] for k in self.neighbors[J] if k != parent and self.sep[(J, k)]]
                homed, shape = self.homed[J], self.shape[J]
                self._plans[J] = tuple(TablePlan(J, shape, t) for t in (homed, kids, homed + kids))
        return self._plans[J]

    def marginals(
        self, theta: dict[Clique, np.ndarray], total: float, work: dict | None = None, single: bool = False
    ) -> dict[Clique, np.ndarray]:
        """The model's marginals on its own cliques (each summing to ``total``), by :meth:`hugin_beliefs`.
        ``work``: a dict kept by the caller between calls, whose super-clique tables are reused (see there).
        ``single``: the super-cliques of at least ``SINGLE_MIN_CELLS`` cells in single precision (see there)."""
        out: dict = {}  # a large super-clique's cliques: filled by the sweep itself
        b = self.hugin_beliefs(theta, total, work, out, single=single)
        for c in self.cliques:
            J, idx = self.home[c], self.index[c]
            if c in out:
                continue
            if idx is None:
                out[c] = sum_to(b[J], J, c)
                if work is not None and np.may_share_memory(out[c], b[J]):  # the next call overwrites b[J]
                    out[c] = out[c].copy()
            else:
                out[c] = np.bincount(idx, weights=b[J].reshape(-1), minlength=math.prod(self.shape[c])).reshape(
                    self.shape[c]
                )
        return out

    def beliefs(self, theta: dict[Clique, np.ndarray], total: float) -> dict[Clique, np.ndarray]:
        """The model's marginals on the junction tree's super-cliques (each summing to ``total``).

        Shafer-Shenoy in linear space (one exp per super-clique, messages are plain sums rescaled to
        max 1), which is about twice as fast as log space; if anything underflows to an empty belief,
        the log-space version runs instead (and for every later call on this tree)."""
        if self.log_space:
            return self.log_beliefs(self._init(theta), total)
        phi = self._init(theta)
        for v in phi.values():  # in place: phi_J = exp(init_J - max)
            v -= v.max()
            np.exp(v, out=v)
        lin: dict[tuple, np.ndarray] = {}
        for i, j in self.order:
            # phi_i times the incoming messages, summed onto the separator: one einsum, no temporary table
            ks = [k for k in self.neighbors[i] if k != j]
            m = _product_sum(
                [phi[i]] + [lin[(k, i)] for k in ks], (i,) + tuple(self.sep[(k, i)] for k in ks), self.sep[(i, j)]
            )
            top = m.max()
            lin[(i, j)] = m / top if top > 0 else m
        for J in self.supers:  # beliefs, in place (phi is not needed any more)
            b = phi[J]
            for k in self.neighbors[J]:
                b *= broadcast_to(lin[(k, J)], self.sep[(k, J)], J)
            z = b.sum()
            if not _normal_total(z, b.dtype):
                self.log_space = True
                return self.log_beliefs(self._init(theta), total)
            b *= total / z
        return phi

    def _rooted(self) -> list[tuple[Clique, Clique | None]]:
        """(super-clique, its parent or None) with every child before its parent: each tree of the forest
        rooted at its largest super-clique (first in domain order among equals). Cached."""
        hit = self.__dict__.get("_post")
        if hit is None:
            seen: set = set()
            hit = []
            for r in sorted(self.supers, key=lambda J: -math.prod(self.shape[J])):
                if r in seen:
                    continue
                seen.add(r)
                pre, stack = [], [(r, None)]
                while stack:
                    J, p = stack.pop()
                    pre.append((J, p))
                    for k in self.neighbors[J]:
                        if k not in seen:
                            seen.add(k)
                            stack.append((k, J))
                hit += reversed(pre)
            self._post = hit
        return hit

    def hugin_beliefs(
        self,
        theta: dict[Clique, np.ndarray],
        total: float,
        work: dict | None = None,
        margs: dict | None = None,
        single: bool = False,
    ) -> dict[Clique, np.ndarray]:
        """:meth:`beliefs` by two sweeps that update the super-cliques' tables in place (Hugin): collect
        multiplies every child's message into its parent's table; distribute sends each child its
        parent's belief summed onto their separator, divided by the child's own message (0 where that is
        0: the child's table is 0 there). An empty separator (mbi joins the graph's connected components
        by such edges) carries a number, which the normalisation to ``total`` cancels: it is skipped.
        Each table is read about twice per neighbour with no
        temporary copy, where Shafer-Shenoy multiplies a node's table with all but one incoming message
        once per neighbour: on large trees (AIM's models of wide tables) this is several times faster.
        Equal to :meth:`beliefs` up to float rounding (tested). ``work`` (a dict the caller keeps between calls):
        the tables are computed in the arrays it holds from the last call, which the result then overwrites:
        a fit's hundreds of calibrations allocate (and the system zeroes) each large table once, not every time.
        A super-clique of more than ``PLAN_MIN_CELLS`` cells takes its children's messages and gives its children's
        separators by its :meth:`plans`; with ``margs`` (a dict), the marginals of the cliques it holds too, into
        ``margs`` (left empty when the sweep falls back to log space).

        ``single``: the tables of the super-cliques of at least ``SINGLE_MIN_CELLS`` cells (:attr:`huge`) are kept
        in single precision, which halves the memory each pass reads and doubles the SIMD width (about 2x faster
        per pass); everything they send out (messages, marginals) is double again. Their sums carry relative errors
        of about 1e-6 (float32 rounding over the summed cells): counts off by about one in a million, far below any
        measurement's noise. A huge table whose largest cell falls below ``SINGLE_RESCALE`` after its children's
        messages is rescaled to max 1; below ``SINGLE_MIN_TOP`` (where float32 has lost digits to underflow) the
        whole sweep runs in double instead."""
        if self.log_space:
            return self.log_beliefs(self._init(theta), total)
        phi = self._init(theta, work, skip_bare=True, single=single)
        for J, v in phi.items():
            if J not in self.bare:  # a bare table is exp(0 - 0) = 1 everywhere: _gather writes it fresh
                v -= v.max()
                np.exp(v, out=v)
        post = self._rooted()
        up: dict[Clique, np.ndarray] = {}  # child -> its message to its parent, over sep[(parent, child)]
        for J, p in post:  # collect: children first
            b = self._gather(J, p, phi[J], up)
            if b.dtype == np.float32 and not _rescaled(b):  # deep in float32's underflow (rare): sweep in double
                return self.hugin_beliefs(theta, total, work, margs)
            if p is not None and self.sep[(p, J)]:
                m = sum_to(b, J, self.sep[(p, J)]).astype(np.float64, copy=False)
                top = m.max()
                up[J] = m / top if top > 0 else m
        down: dict = {}  # (large super-clique, separator or clique) -> its belief summed onto it
        for J, p in reversed(post):  # distribute: parents first
            b = phi[J]
            if p is not None and self.sep[(p, J)]:
                s = self.sep[(p, J)]
                m = down[(p, s)] if (p, s) in down else sum_to(phi[p], p, s).astype(np.float64, copy=False)
                ratio = np.divide(m, up[J], out=np.zeros_like(m), where=up[J] > 0)
                b *= broadcast_to(ratio.astype(b.dtype, copy=False), s, J)
            z = b.sum()
            if not _normal_total(z, b.dtype):
                if b.dtype == np.float32:  # a float32 table short of range (rare): this sweep in double
                    return self.hugin_beliefs(theta, total, work, margs)
                self.log_space = True
                if margs is not None:
                    margs.clear()
                return self.log_beliefs(self._init(theta), total)
            b *= total / z
            plans = self.plans(J)
            if plans is not None:
                for t, v in plans[2].marginals(b).items():
                    down[(J, t)] = v.astype(np.float64, copy=False)
                if margs is not None:
                    margs.update((c, down[(J, c)]) for c in self.homed[J])
        return phi

    def _gather(self, J: Clique, parent: Clique | None, b: np.ndarray, up: dict) -> np.ndarray:
        """``b`` (``J``'s table) times the messages ``up`` of ``J``'s children, in place; a large super-clique's by
        its plan (children with the same separator multiplied together first). A bare one's (:attr:`bare`) ``b``
        is not read: its table of ones times the messages is the messages' product, the same numbers (1 x = x)."""
        plans = self.plans(J)
        msgs: dict = {}
        for k in self.neighbors[J]:
            if k != parent and self.sep[(J, k)]:
                s = self.sep[(J, k)]
                if plans is None:
                    b *= broadcast_to(up[k], s, J)
                else:
                    msgs[s] = up[k] if s not in msgs else msgs[s] * up[k]
        if plans is not None:
            plans[1].expand(msgs, b, np.multiply, fresh=J in self.bare)
        return b

    def log_potentials(self, theta: dict[Clique, np.ndarray]) -> dict[Clique, np.ndarray]:
        """Log-potentials of the super-cliques (float64 arrays of their shapes, fresh): for each, the sum of
        the potentials ``theta`` of the model cliques it holds. The input of :meth:`log_beliefs`."""
        return self._init(theta)

    def _init(
        self, theta: dict[Clique, np.ndarray], work: dict | None = None, skip_bare: bool = False, single: bool = False
    ) -> dict[Clique, np.ndarray]:
        """Log-potentials of the super-cliques: the sum of the potentials of the cliques they hold (in the
        arrays of ``work``, filled with 0, when it has them; then ``work`` holds the new arrays). ``skip_bare``: the
        tables of the :attr:`bare` super-cliques (0) are left unwritten (their values are arbitrary). ``single``:
        the :attr:`huge` ones in float32."""
        dtype = {J: np.float32 if single and J in self.huge else np.float64 for J in self.supers}
        if work is None:
            init = {J: np.empty(self.shape[J], dtype[J]) if skip_bare and J in self.bare
                    else np.zeros(self.shape[J], dtype[J]) for J in self.supers}  # fmt: skip
        else:
            init = {}
            for J in self.supers:
                buf = work.get(J)
                if buf is None or buf.dtype != dtype[J]:
                    buf = work[J] = np.zeros(self.shape[J], dtype[J])
                elif not self._large(J):  # a large one is overwritten by its plan
                    buf.fill(0.0)
                init[J] = buf
        for c in self.cliques:
            J, idx = self.home[c], self.index[c]
            if self._large(J):
                continue
            if idx is None:
                init[J] += broadcast_to(theta[c], c, J)
            else:
                flat = init[J].reshape(-1)
                flat += np.asarray(theta[c]).reshape(-1).take(idx)
        for J in self.supers:  # a large super-clique: its cliques' potentials added up by its plan
            plans = self.plans(J)
            if plans is not None and not (skip_bare and J in self.bare):
                plans[0].expand({c: np.asarray(theta[c]) for c in self.homed[J]}, init[J], fresh=True)
        return init

    def log_beliefs(self, init: dict[Clique, np.ndarray], total: float) -> dict[Clique, np.ndarray]:
        """:meth:`beliefs` in log space (messages by logsumexp), given the super-cliques' log-potentials."""
        msgs: dict[tuple, np.ndarray] = {}
        for i, j in self.order:
            tau = init[i]
            for k in self.neighbors[i]:
                if k != j:
                    tau = tau + broadcast_to(msgs[(k, i)], self.sep[(k, i)], i)
            msgs[(i, j)] = logsumexp_to(tau, i, self.sep[(i, j)])
        probs = {}
        for J in self.supers:
            b = init[J]
            for k in self.neighbors[J]:
                b = b + broadcast_to(msgs[(k, J)], self.sep[(k, J)], J)
            m = b.max()
            p = np.exp(b - m)
            probs[J] = p * (total / p.sum())
        return probs


PLAN_MIN_CELLS = 1 << 16  # super-cliques of more cells are calibrated by table plans (``JunctionTree.plans``)
MIN_TOTAL = 1e-200  # a double belief table whose total is below this is computed again in log space
SINGLE_MIN_CELLS = 1 << 20  # super-cliques of at least this many cells may be calibrated in float32 (``single``)
SINGLE_RESCALE = 1e-20  # a float32 table whose largest cell is below this is rescaled to max 1 before summing
SINGLE_MIN_TOP = 1e-30  # ... and below this (float32's smallest normal number is 1.2e-38) the sweep runs in double
INDEX_MAX_CELLS = 1 << 20  # super-cliques up to this many cells get index maps (8 bytes per cell per model clique)


def _normal_total(z, dtype) -> bool:
    """Whether a belief table's total ``z`` can be normalised to a count without losing digits: finite and at least
    ``MIN_TOTAL`` (float64) or ``SINGLE_MIN_TOP`` (float32). Below that its cells have fallen into the subnormal
    range, where they keep few significant digits, and ``total / z`` can overflow to infinity (seen: the published
    PPSyn's Adult models at epsilon 0.2, whose log-potentials span 500, gave NaN beliefs and garbage records)."""
    floor = SINGLE_MIN_TOP if dtype == np.float32 else MIN_TOTAL
    return bool(np.isfinite(z) and z >= floor)


def _rescaled(b: np.ndarray) -> bool:
    """A float32 table after its children's messages: rescaled to max 1 in place when its largest cell is below
    ``SINGLE_RESCALE`` (which keeps the normalisation ``total / z``, later, within float32's range); False, and left
    as it is, when that cell is below ``SINGLE_MIN_TOP`` (or the table is 0 or not finite)."""
    top = float(b.max())
    if not top >= SINGLE_MIN_TOP:
        return False
    if top < SINGLE_RESCALE:
        b *= 1.0 / top
    return True


def _cell_index(shape: tuple, src: Clique, dst: Clique) -> np.ndarray | None:
    """For every cell of a table over ``src`` (C order), the flat index of its cell in the marginal over
    ``dst``; None where a reshape-sum is as fast (``dst`` is a leading block of ``src``, same order) or the
    table is too big. Marginalising by ``np.bincount`` over this map (and expanding by ``take``) was 3-6x
    faster than ``einsum`` or broadcasting on the strided axes of PPSyn-DP's Adult models."""
    n = math.prod(shape)
    if n > INDEX_MAX_CELLS or tuple(src[: len(dst)]) == tuple(dst):
        return None
    size = dict(zip(src, shape))
    idx = np.zeros(shape, dtype=np.intp)
    stride = 1
    for a in reversed(dst):
        i = src.index(a)
        idx += (np.arange(size[a], dtype=np.intp) * stride).reshape([size[a] if j == i else 1 for j in range(len(src))])
        stride *= size[a]
    return idx.reshape(-1)


@lru_cache(maxsize=64)
def cached_tree(domain, cliques: tuple[Clique, ...]) -> JunctionTree:
    """The :class:`JunctionTree` of ``cliques`` over ``domain``, built once per (domain, cliques)."""
    return JunctionTree(domain, cliques)


def tree_cells(domain, cliques: Sequence[Clique]) -> int:
    """Cells of the junction tree over ``cliques`` (what one message-passing sweep touches)."""
    return cached_tree(domain, tuple(tuple(c) for c in cliques)).cells
