"""The model's marginals on many candidate cliques (:class:`ModelMarginals`), what AIM and PPSyn-DP score every
round, by variable elimination on the calibrated junction tree in NumPy.

What it computes: for a clique inside a model clique, the sum of that clique's fitted marginal; for a clique whose
attributes lie in different connected components of the model's graph, the outer product of the components'
marginals; otherwise, the model's distribution over the smallest subtree of the junction tree that holds the
clique (beliefs of its super-cliques over the beliefs of its separators), the other attributes summed out one at
a time (greedy smallest-intermediate order, each intermediate table rescaled to max 1 against underflow), then
normalised to the model's total. A log-space version and mbi's exact inference are fallbacks for tables that
underflow.

Guarantee: post-processing only. Every input is the fitted model (a function of earlier noisy measurements and
public choices); no record is read. The answers equal mbi's ``model.project`` up to float rounding (tested).

Why the answers do not depend on what is cached (tested bit for bit): an elimination is planned from the
clique and the scopes of its factors alone (:func:`_elimination_plan`: which variable goes at each step, which
tables it combines, the einsum subscripts and contraction order), never from the tables' values, so a plan
cached from another model issues the same einsum calls as planning anew. Within one model, a step's table is a
function of the variable eliminated and the tables it combines; those are named by what they are (a super-clique
belief, a separator, or an earlier step's name), so a table another clique's elimination already made is the
very array the same call would make again. Deterministic NumPy calls on the same arrays give the same numbers;
the caches change the time, not the output. Their memory is bounded: plans per domain (``PLAN_CACHE_SIZE``) and
the shared tables per model (``STEP_CACHE_BYTES``: beyond it tables are made and not kept, under names no other
table has).
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Iterable

import numpy as np

from privsample.synth import jtree

Clique = tuple[str, ...]


def model_marginal(model, clique: Clique) -> np.ndarray:
    """The model's (public) estimate of a marginal, C order over ``clique``, as float64."""
    return np.asarray(model.project(clique).datavector(), dtype=float)


def _pop_variable(factors, todo: set, sizes: dict, rank: dict | None = None):
    """Greedy elimination step: the variable of ``todo`` whose factors' joint scope is smallest (ties:
    the first in domain order, so runs are reproducible), removed from ``todo``; returns it, the factors
    that mention it and the others. ``rank``: each attribute's position in ``sizes`` (domain order)."""
    if rank is None:
        rank = {a: i for i, a in enumerate(sizes)}
    if len(factors) == 1:  # every variable's joint scope is this factor's: the tie goes to domain order
        z = min(todo, key=rank.__getitem__)
    else:
        scope: dict[str, set] = {}
        for cl, _ in factors:
            for a in cl:
                if a in todo:
                    scope.setdefault(a, set()).update(cl)
        z = min(todo, key=lambda a: (math.prod([sizes[b] for b in scope[a]]), rank[a]))
    todo.discard(z)
    inv, rest = [], []
    for item in factors:
        (inv if z in item[0] else rest).append(item)
    return z, inv, rest


_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # numpy's letters for subscripts 0, 1, ...


def _local_index(rank: dict, attrs) -> dict:
    """Subscripts for one einsum: the attributes it involves, numbered 0, 1, ... in domain order.

    NumPy's einsum takes at most 52 subscripts, so numbering every attribute of the table would fail on
    tables of more than 52 columns; numbering only those of the call, in the same relative order, gives
    the same einsum specifications up to renaming (the same contraction orders and numbers)."""
    return {a: i for i, a in enumerate(sorted(set(attrs), key=rank.__getitem__))}


def _einsum_path(ops: list, out: list) -> list:
    """The contraction order ``np.einsum(..., optimize=True)`` chooses (greedy) for interleaved operands,
    from :func:`jtree.einsum_path`'s cache (keyed by the spec numpy builds from these subscripts, and
    the shapes): searching it was a third of the time of ModelMarginals on PPSyn-DP's Adult models, and
    the same eliminations recur for many candidates and rounds. The same order gives the same numbers
    (tested)."""
    spec = ",".join("".join(_SYMBOLS[i] for i in sub) for sub in ops[1::2]) + "->" + "".join(_SYMBOLS[i] for i in out)
    return jtree.einsum_path(spec, tuple(o.shape for o in ops[::2]))


PLAN_CACHE_SIZE = 4096  # elimination plans kept per domain (about 10 KB each; the older half dropped when full)
STEP_CACHE_BYTES = 64 << 20  # at most this much of a model's shared elimination tables is kept (ModelMarginals)
_PLANS: dict = {}  # (attributes, shape) of a domain -> {(clique, factor scopes): plan}


def _elimination_plan(clique: Clique, scopes: tuple, sizes: dict, rank: dict) -> tuple[list, list, list, list]:
    """What :meth:`ModelMarginals._eliminate` computes for ``clique`` from factors over ``scopes``: it depends on
    the scopes and the domain only, never on the tables, so it is planned once and replayed with each model's
    tables (the same einsum calls, hence the same numbers). Returns (steps, products, attributes, slot scopes):
    each step [the variable eliminated, the slots of the factors holding it, its call or None] appends a table to
    the slots (the call, :func:`_step_call`, is filled in on first use: most steps' tables are shared between
    cliques and never computed here); each product (slot, subscripts of the running product, of the slot, of
    the result) multiplies a remaining factor into the running product, whose attributes end as the returned
    list; slot scopes: the attributes of every slot's table.

    The variable eliminated at each step is :func:`_pop_variable`'s (the smallest joint scope, ties to domain
    order), found on bit sets (bit i: the attribute of domain rank i)."""
    attr_of = {rank[a]: a for cl in scopes for a in cl}
    size_of = {i: sizes[a] for i, a in attr_of.items()}
    cells: dict[int, int] = {}

    def cells_of(mask: int) -> int:
        n = cells.get(mask)
        if n is None:
            n, m = 1, mask
            while m:
                low = m & -m
                n *= size_of[low.bit_length() - 1]
                m ^= low
            cells[mask] = n
        return n

    slot_scopes = [list(cl) for cl in scopes]
    factors = []  # (bit set, slot)
    todo = 0
    for i, cl in enumerate(scopes):
        mask = 0
        for a in cl:
            mask |= 1 << rank[a]
        factors.append((mask, i))
        todo |= mask
    for a in clique:
        todo &= ~(1 << rank[a])
    steps = []
    while todo:
        if len(factors) == 1:  # every variable's joint scope is this factor's: the lowest rank
            zbit = todo & -todo
        else:
            joint: dict[int, int] = {}
            for mask, _ in factors:
                m = mask & todo
                while m:
                    low = m & -m
                    joint[low] = joint.get(low, 0) | mask
                    m ^= low
            zbit = min(joint, key=lambda b: (cells_of(joint[b]), b))
        todo ^= zbit
        union, slots, rest = 0, [], []
        for f in factors:
            if f[0] & zbit:
                union |= f[0]
                slots.append(f[1])
            else:
                rest.append(f)
        scope, m = [], union ^ zbit
        while m:
            low = m & -m
            scope.append(attr_of[low.bit_length() - 1])
            m ^= low
        steps.append([attr_of[zbit.bit_length() - 1], slots, None])
        factors = rest + [(union ^ zbit, len(slot_scopes))]
        slot_scopes.append(scope)
    products = []
    acc_attrs: list[str] = []
    for _, i in factors:
        cl = slot_scopes[i]
        scope = [a for a in clique if a in acc_attrs or a in cl]
        index = _local_index(rank, list(acc_attrs) + list(cl))
        products.append((i, [index[a] for a in acc_attrs], [index[a] for a in cl], [index[a] for a in scope]))
        acc_attrs = scope
    return steps, products, acc_attrs, slot_scopes


def _step_call(z: str, scopes: list, sizes: dict, rank: dict) -> tuple[list, list, list | bool]:
    """One elimination step's einsum call: the subscripts of the factors over ``scopes`` (the attributes of the
    call numbered in domain order, :func:`_local_index`), those of the result (all but ``z``) and the contraction
    order (:func:`_einsum_path`) for more than two factors, else False (einsum's single loop)."""
    index = _local_index(rank, [a for cl in scopes for a in cl])
    subs = [[index[a] for a in cl] for cl in scopes]
    out_idx = [i for a, i in index.items() if a != z]
    path = False
    if len(scopes) > 2:
        ops = []
        for cl, sub in zip(scopes, subs):
            ops += [np.empty([sizes[a] for a in cl]), sub]
        path = _einsum_path(ops, out_idx)
    return subs, out_idx, path


def _subtree(tree, clique: Clique) -> tuple[list, list]:
    """The nodes (sorted) and edges (J < k) of the smallest subtree of the junction tree whose
    super-cliques hold ``clique``'s attributes: leaves whose clique attributes their neighbour also
    holds are pruned, in passes over the nodes in sorted order until none is. Cached on the tree (it
    depends only on its structure).

    The passes are replayed as events (pass, position): a node can only become prunable when a
    neighbour is pruned, so only the leaves of the whole tree and the neighbours of pruned nodes are
    looked at (the same nodes are pruned in the same order as by full passes, in time that grows with
    the pruned nodes instead of the tree times the passes)."""
    cache = tree.__dict__.setdefault("_subtrees", {})
    hit = cache.get(clique)
    if hit is None:
        info = tree.__dict__.get("_subtree_info")
        if info is None:
            order = sorted(tree.supers)
            info = tree._subtree_info = (
                {J: frozenset(J) for J in tree.supers},
                {J: i for i, J in enumerate(order)},
                [J for J in order if len(tree.neighbors[J]) <= 1],
            )
        sets, pos, leaves = info
        want = set(clique)
        nodes = set(tree.supers)
        heap = [(0, pos[J], J) for J in leaves]  # already in (pass, position) order
        while heap and len(nodes) > 1:
            sweep, i, J = heapq.heappop(heap)
            if J not in nodes:
                continue
            nb = [k for k in tree.neighbors[J] if k in nodes]
            if len(nb) <= 1 and want & sets[J] <= (sets[nb[0]] if nb else frozenset()):
                nodes.discard(J)
                for k in nb:  # visited later in this pass, or in the next one
                    heapq.heappush(heap, (sweep if pos[k] > i else sweep + 1, pos[k], k))
        kept = sorted(nodes)
        edges = [(J, k) for J in kept for k in tree.neighbors[J] if k in nodes and J < k]
        hit = cache[clique] = (kept, edges)
    return hit


def _components(cliques: Iterable[Clique]) -> dict[str, int]:
    """Each attribute of ``cliques`` -> a number shared by exactly the attributes of its connected component
    in the graph joining the attributes of every clique (union-find)."""
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for cl in cliques:
        for a in cl:
            parent.setdefault(a, a)
        for a in cl[1:]:
            ra, rb = find(cl[0]), find(a)
            if ra != rb:
                parent[rb] = ra
    roots: dict[str, int] = {}
    return {a: roots.setdefault(find(a), len(roots)) for a in parent}


class ModelMarginals:
    """Fast marginals of a fitted model for many candidate cliques (NumPy, no JIT compilation).

    mbi's ``model.project`` runs variable elimination in JAX and compiles once per new clique shape,
    which dominated AIM's rounds (about 0.5 s per candidate). Here cliques inside a model clique are
    summed out of its stored marginal, and others are computed by one ``einsum`` over the
    exponentiated log-potentials (each shifted by its max), normalised to the model total.
    Results equal ``model.project`` up to float rounding (tested); post-processing only.
    """

    def __init__(self, model):
        self.model = model
        self.total = float(model.total)
        self.attrs = list(model.domain.attributes)
        self._index = {a: i for i, a in enumerate(self.attrs)}  # attribute -> domain rank
        self._sizes = dict(zip(self.attrs, model.domain.shape))
        self._plans = _PLANS.setdefault((tuple(self.attrs), tuple(model.domain.shape)), {})  # shared by models
        self._parts: dict = {}  # _product's factors (marginals of sub-cliques), computed once per model
        self._steps: dict = {}  # (variable, names of the tables) -> (a name, the table its elimination makes)
        self._step_bytes = 0
        self._unshared = 0  # the names of tables not kept: -1, -2, ... (kept ones are 0, 1, ...)
        self._marg = {tuple(cl): np.asarray(model.marginals[cl].values, dtype=float) for cl in model.marginals.cliques}
        self._sets = {mc: frozenset(mc) for mc in self._marg}
        self._holding: dict[str, list] = {}  # attribute -> the model cliques holding it, in the order of _marg
        for mc in self._marg:
            for a in mc:
                self._holding.setdefault(a, []).append(mc)
        self._component = _components(model.cliques)  # attribute -> its connected component (cliques' graph)
        self._factors = []
        self._log_factors = []
        self._tree = self._beliefs = None  # the calibrated junction tree, on first use
        for cl in model.cliques:
            th = np.asarray(model.potentials[cl].values, dtype=float)
            self._factors.append((tuple(cl), np.exp(th - th.max()), ("potential", tuple(cl))))
            self._log_factors.append((tuple(cl), th - th.max()))

    def __call__(self, clique: Clique) -> np.ndarray:
        clique = tuple(clique)
        want = set(clique)
        for mc in self._holding.get(clique[0], ()) if clique else self._marg:  # the first model clique holding it
            if want <= self._sets[mc]:
                return jtree.sum_to(self._marg[mc], mc, clique).ravel()
        groups: dict[int, list[str]] = {}
        for a in clique:
            groups.setdefault(self._component.get(a, -1 - self._index[a]), []).append(a)
        if len(groups) > 1:
            return self._product(clique, list(groups.values()))
        out_attrs, out = self._eliminate(clique, self._tree_factors(clique))
        s = out.sum()
        if not np.isfinite(s) or s <= 0:  # underflow (seen with paper mode's models): the same in log space
            out_attrs, out = self._eliminate_log(clique)
            s = out.sum()
        if not np.isfinite(s) or s <= 0:  # still numerical trouble: exact JAX inference (compiles: slow)
            return model_marginal(self.model, clique)
        out = np.transpose(out, [out_attrs.index(a) for a in clique])
        return (out * (self.total / s)).ravel()

    def _product(self, clique: Clique, groups: list[list[str]]) -> np.ndarray:
        """The marginal of a clique whose attributes lie in different connected components of the model's
        graph: those parts are independent under the model, so it is the outer product of the parts'
        marginals (each normalised), times the total. Equal to elimination up to float rounding, without
        walking the junction tree between the components (most of AIM's candidates on wide tables)."""
        out, attrs = np.ones(()), []
        sizes = dict(zip(self.attrs, self.model.domain.shape))
        for g in groups:
            part = self._parts.get(tuple(g))
            if part is None:  # the same sub-cliques recur across candidates: each is computed once
                part = self._parts[tuple(g)] = self(tuple(g))
            s = part.sum()
            part = part / s if s > 0 else np.full(part.shape, 1.0 / part.size)
            out = np.multiply.outer(out, part.reshape([sizes[a] for a in g]))
            attrs += g
        return (np.transpose(out, [attrs.index(a) for a in clique]) * self.total).ravel()

    def _tree_factors(self, clique: Clique) -> list | None:
        """The calibrated junction tree cut down to the smallest subtree whose super-cliques hold the
        clique's attributes: beliefs b_J of its nodes and 1/b_S of its separators (0 where b_S = 0), whose
        product is the model's distribution over the subtree's attributes. Eliminating the other
        attributes from these few factors is much cheaper than from every potential of the model
        (Adult, PPSyn-DP's 2 MB models). None if the beliefs are not finite (then all potentials are used).
        The subtree is cached on the (shared) tree by clique, the separator factors on this object. Each factor
        is (attributes, table, a name for the table that is unique on this object)."""
        if self._beliefs is None:
            tree = jtree.cached_tree(self.model.domain, tuple(tuple(c) for c in self.model.cliques))
            theta = {tuple(c): np.asarray(self.model.potentials[c].values, dtype=float) for c in self.model.cliques}
            b = tree.beliefs(theta, 1.0)
            ok = all(np.all(np.isfinite(v)) for v in b.values())
            self._tree, self._beliefs = tree, (b if ok else {})
            self._separators: dict = {}
        if not self._beliefs:
            return None
        nodes, edges = _subtree(self._tree, clique)
        factors = [(list(J), self._beliefs[J], ("belief", J)) for J in nodes]
        for J, k in edges:
            f = self._separators.get((J, k))
            if f is None:
                sep = [a for a in J if a in k]
                bs = jtree.sum_to(self._beliefs[J], J, tuple(sep))
                f = (sep, np.divide(1.0, bs, out=np.zeros_like(bs), where=bs > 0), ("separator", J, k))
                self._separators[(J, k)] = f
            factors.append(f)
        return factors

    def _eliminate(self, clique: Clique, factors: list | None = None) -> tuple[list[str], np.ndarray]:
        """Sum-product variable elimination (greedy smallest-intermediate order), rescaled against underflow,
        over ``factors`` (default: the model's exponentiated potentials), by the :func:`_elimination_plan` of
        the clique and the factors' scopes (cached: the same calls on the same arrays as planning anew)."""
        factors = self._factors if factors is None else factors
        key = (clique, tuple(tuple(f[0]) for f in factors))
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= PLAN_CACHE_SIZE:  # the older half (a dict keeps insertion order)
                for old in list(itertools.islice(self._plans, len(self._plans) // 2)):
                    del self._plans[old]
            plan = self._plans[key] = _elimination_plan(clique, key[1], self._sizes, self._index)
        steps, products, acc_attrs, slot_scopes = plan
        tables = [f[1] for f in factors]
        names = [f[2] for f in factors]
        for step in steps:
            z, slots, call = step
            name = (z, tuple(names[i] for i in slots))  # the table a step makes: eliminate z from these tables
            hit = self._steps.get(name)
            if hit is None:  # another clique's elimination may have made it already (the same call)
                if call is None:
                    call = step[2] = _step_call(z, [slot_scopes[i] for i in slots], self._sizes, self._index)
                ops = []
                for i, sub in zip(slots, call[0]):
                    ops += [tables[i], sub]
                g = np.einsum(*ops, call[1], optimize=call[2])
                m = g.max()
                hit = (len(self._steps), g / m if m > 0 else g)
                if self._step_bytes + g.nbytes <= STEP_CACHE_BYTES:  # kept for other cliques (bounded memory)
                    self._steps[name] = hit
                    self._step_bytes += g.nbytes
                else:  # not kept: a name no other table has, so no later step is taken for a shared one
                    self._unshared -= 1
                    hit = (self._unshared, hit[1])
            names.append(hit[0])
            tables.append(hit[1])
        # the remaining factors (all over clique attributes), multiplied one at a time and rescaled so the
        # product of many factors cannot underflow (it did in paper mode, forcing the slow JAX fallback)
        out = np.ones(())
        for i, acc_sub, sub, out_sub in products:
            out = np.einsum(out, acc_sub, tables[i], sub, out_sub)
            m = out.max()
            out = out / m if m > 0 else out
        return self._add_missing(clique, acc_attrs, out)

    def _add_missing(self, clique: Clique, acc_attrs: list[str], out: np.ndarray) -> tuple[list[str], np.ndarray]:
        sizes = dict(zip(self.attrs, self.model.domain.shape))
        out_attrs = list(acc_attrs)
        for a in clique:
            if a not in acc_attrs:  # attributes in no factor are uniform
                out = np.multiply.outer(out, np.ones(sizes[a]))
                out_attrs.append(a)
        return out_attrs, out

    def _eliminate_log(self, clique: Clique) -> tuple[list[str], np.ndarray]:
        """:meth:`_eliminate` with log-potentials: each step adds the factors over their joint scope and
        takes a logsumexp, so nothing underflows (dense over each step's scope, as einsum is)."""
        from scipy.special import logsumexp

        sizes = dict(zip(self.attrs, self.model.domain.shape))
        order = self.attrs.index
        factors = [(list(cl), f) for cl, f in self._log_factors]
        keep = set(clique)
        todo = {a for cl, _ in factors for a in cl} - keep

        def combine(parts, scope):
            total = np.zeros([sizes[a] for a in scope])
            for cl, f in parts:
                total = total + jtree.broadcast_to(f, cl, scope)
            return total

        while todo:
            z, inv, factors = _pop_variable(factors, todo, sizes)
            scope = sorted(set().union(*[set(cl) for cl, _ in inv]), key=order)
            g = logsumexp(combine(inv, scope), axis=scope.index(z))
            g = g - g.max() if np.isfinite(g.max()) else g
            factors.append(([a for a in scope if a != z], g))
        acc = sorted({a for cl, _ in factors for a in cl}, key=order)
        out = combine(factors, acc) if factors else np.zeros(())
        out = np.exp(out - out.max())
        return self._add_missing(clique, acc, out)
