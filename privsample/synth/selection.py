"""Shared pieces of adaptive select-measure-generate (AIM, PPSyn): workloads, candidates, size filter.

Everything here depends only on public information (the domain, the workload, the current model),
never on the data.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Iterable, Sequence


from privsample.errors import InputError

try:  # junction-tree sizes in C (built with the package; optional): the same numbers, much faster
    from privsample.synth import graphcells as native_cells
except ImportError:  # pragma: no cover - a build without a C compiler
    native_cells = None

Clique = tuple[str, ...]

# The most attributes :func:`graph_cells` sizes a junction tree over: ``MAXA`` of ``graphcells.c`` (the Python
# reference has no limit, but at this width one call takes seconds, and AIM and PPSyn make one per candidate).
MAX_ATTRIBUTES = 4096


def informative_attributes(domain, zeros=None) -> list[str]:
    """The attributes worth measuring (domain order): those with more than one cell that records can take, i.e.
    not forbidden by a structural zero on the column alone (``zeros``, a :class:`~privsample.synth.zeros.
    StructuralZeros`: e.g. the null code private discovery found empty). MST, AIM and PPSyn measure no marginal of
    the others and offer no candidate holding one.

    A one-cell column (private discovery kept none of its categories, so every value is the catch-all, or a numeric
    column's bounds met) holds the same code in every record: its 1-way marginal is the number of records, and a
    marginal of it with other columns is theirs without it, so measuring either spends budget on nothing the other
    measurements do not carry. A column whose missing values discovery saw keeps two cells: it is measured.
    The model still holds every column: an unmeasured one is fitted with its zeros, or else independent and
    uniform (:func:`privsample.synth.pgm.estimate`), so it decodes to its one value. Public: the domain and the
    zeros only."""
    dead: dict[str, set[int]] = {}
    for cols, codes in zeros.entries if zeros is not None else ():
        if len(cols) == 1:
            dead.setdefault(cols[0], set()).update(int(c) for c in codes[0])
    return [a for a, n in zip(domain.attributes, domain.shape) if int(n) - len(dead.get(a, ())) > 1]


def informative_domain(domain, zeros=None):
    """``domain`` restricted to :func:`informative_attributes` (``domain`` itself when it keeps them all; None when
    it keeps none)."""
    keep = informative_attributes(domain, zeros)
    if not keep:
        return None
    return domain if len(keep) == len(domain.attributes) else domain.project(keep)


def informative_workload(domain, workload: Sequence[tuple[Clique, float]], zeros=None) -> list[tuple[Clique, float]]:
    """``workload`` without the columns that are not worth measuring (:func:`informative_attributes`): each clique
    loses them (its marginal is the marginal of the rest), and cliques left empty are dropped. The
    remaining candidates' weights (:func:`candidate_weights`: a sum over their attributes) are those of the whole
    workload, and no candidate holds a one-cell column. Unchanged when every column is worth measuring."""
    keep = set(informative_attributes(domain, zeros))
    if len(keep) == len(domain.attributes):
        return list(workload)
    out = []
    for cl, w in workload:
        sub = tuple(a for a in cl if a in keep)
        if sub:
            out.append((sub, w))
    return out


def default_workload(domain, k: int = 2, max_cells: int | None = 10_000) -> list[tuple[Clique, float]]:
    """All k-way cliques with at most ``max_cells`` cells, weight 1 (the AIM/PPSyn default)."""
    cls = [tuple(c) for c in itertools.combinations(domain.attributes, k)]
    if max_cells is not None:
        cls = [c for c in cls if domain.size(c) <= max_cells]
    return [(c, 1.0) for c in cls]


def clique_census(domain, k: int, max_cells: int | None) -> dict[int, tuple[int, int, Clique]]:
    """For j = 1..k: (how many, total cells, the largest) of the j-way cliques of ``domain`` with at most
    ``max_cells`` cells (any size if None), without listing them: attributes are grouped by size and the
    cliques counted by how many of each size they take, so the work grows with the number of distinct
    sizes, not with d^k. Public: reads only the domain. j missing: no such clique."""
    by_size: dict[int, list[str]] = {}
    for a, n in zip(domain.attributes, domain.shape):
        by_size.setdefault(int(n), []).append(a)
    states: dict[tuple[int, int], tuple[int, tuple]] = {(0, 1): (1, ())}  # (j, cells) -> (count, an example)
    for v, names in by_size.items():
        new = dict(states)
        for (j, p), (c, ex) in states.items():
            q = p
            for t in range(1, min(len(names), k - j) + 1):
                q *= v
                if max_cells is not None and q > max_cells:
                    break
                old = new.get((j + t, q))
                cnt = c * math.comb(len(names), t)
                new[(j + t, q)] = (old[0] + cnt, old[1]) if old else (cnt, ex + ((v, t),))
        states = new
    out: dict[int, tuple[int, int, Clique]] = {}
    best: dict[int, int] = {}
    for (j, p), (c, ex) in sorted(states.items()):
        if j == 0:
            continue
        n, cells, largest = out.get(j, (0, 0, ()))
        if p >= best.get(j, 0):
            best[j] = p
            largest = tuple(domain.canonical([a for v, t in ex for a in by_size[v][:t]]))
        out[j] = (n + c, cells + c * p, largest)
    return out


def check_workload(domain, workload: Iterable[tuple[Sequence[str], float]]) -> list[tuple[Clique, float]]:
    """Canonicalise (domain order) and validate a workload [(clique, weight)]: unknown columns -> InputError."""
    out = []
    for cl, w in workload:
        unknown = [a for a in cl if a not in domain.attributes]
        if unknown:
            raise InputError(f"workload clique {tuple(cl)} names unknown column(s): {', '.join(unknown)}")
        if not (w >= 0):
            raise InputError(f"workload weight for {tuple(cl)} must be >= 0")
        out.append((tuple(domain.canonical(cl)), float(w)))
    if not out:
        raise InputError("the workload is empty")
    return out


def downward_closure(cliques: Iterable[Clique]) -> list[Clique]:
    """All non-empty subsets of the given cliques (each in the order of its parent clique)."""
    seen: dict[Clique, None] = {}
    for cl in cliques:
        for r in range(1, len(cl) + 1):
            for sub in itertools.combinations(cl, r):
                seen.setdefault(tuple(sub), None)
    return sorted(seen, key=len)


def candidate_weights(workload: Sequence[tuple[Clique, float]]) -> dict[Clique, float]:
    """AIM's candidate weights c(cl) = sum over workload (W, w) of w * |cl ∩ W|, over the downward closure.

    Since |cl ∩ W| counts the attributes of cl in W, c(cl) = sum over a in cl of A(a), A(a) = the total
    weight of the workload cliques holding a: linear in the workload instead of quadratic. The sums are
    exact (integers, or fractions for non-integer weights) and rounded once, so integer weights (the
    default workloads) give the same floats as the direct sum."""
    from fractions import Fraction

    cands = downward_closure(cl for cl, _ in workload)
    integral = all(float(w).is_integer() for _, w in workload)
    per_attr: dict = {}
    for W, w in workload:
        v = int(w) if integral else Fraction(w)
        for a in set(W):
            per_attr[a] = per_attr.get(a, 0) + v
    return {cl: float(sum(per_attr.get(a, 0) for a in set(cl))) for cl in cands}


def model_size_mb(domain, cliques: Sequence[Clique]) -> float:
    """Memory of the junction tree of a model over ``cliques`` (MB, 8 bytes per cell)."""
    return junction_tree_cells(domain, cliques) * 8 / 2**20


def clique_graph(
    domain, cliques: Iterable[Clique], start: tuple[tuple[int, ...], int] | None = None
) -> tuple[tuple[int, ...], int]:
    """The graph mbi triangulates for ``cliques``, as bit masks: (neighbours of every attribute, in domain
    order; the attributes in some clique). ``start``: a graph of this form to add the cliques to."""
    index = {a: i for i, a in enumerate(domain.attributes)}
    nbr, covered = (list(start[0]), start[1]) if start is not None else ([0] * len(index), 0)
    for cl in cliques:
        mask = 0
        for a in cl:
            mask |= 1 << index[a]
        covered |= mask
        for a in cl:
            i = index[a]
            nbr[i] |= mask & ~(1 << i)
    return tuple(nbr), covered


def junction_tree_cells(domain, cliques: Sequence[Clique]) -> int:
    """Cells of the junction tree mbi builds for ``cliques`` (``mbi.junction_tree.hypothetical_model_size``
    is this times 8 bytes), without building it. It depends only on the cliques' graph
    (:func:`clique_graph`), and is cached by graph: AIM and PPSyn ask for the same sizes round after
    round, and a round that measures a clique whose edges the model already has leaves them all unchanged."""
    nbr, covered = clique_graph(domain, cliques)
    return graph_cells(tuple(int(n) for n in domain.shape), nbr, covered)


@lru_cache(maxsize=1 << 16)
def graph_cells(size: tuple[int, ...], nbr: tuple[int, ...], covered: int) -> int:
    """:func:`junction_tree_cells` of the graph (``nbr``, ``covered``) over attributes of these sizes:
    the C version (``graphcells.c``, about 50x faster, any number of attributes) when it was built and
    the tree's cells fit in 63 bits (elimination candidates beyond 63 bits are never chosen, and do not
    matter), else :func:`graph_cells_py` (the reference: exact integers; equality is tested)."""
    if native_cells is not None:
        out = native_cells.graph_cells(size, nbr, covered)
        if out >= 0:
            return out
    return graph_cells_py(size, nbr, covered)


def graph_cells_py(size: tuple[int, ...], nbr: tuple[int, ...], covered: int) -> int:
    """:func:`graph_cells` in Python, with exact integers.

    mbi triangulates the graph (every attribute a node) along a DFS post-order when it is a tree, else
    along its greedy order (repeatedly eliminate the first attribute, in domain order, whose cliques
    span the fewest cells; 1 for an attribute in no clique). The junction tree's nodes are the maximal
    cliques of the triangulated graph, which are the maximal elimination cliques {a} ∪ neighbours(a) of
    that order. Done with bit masks this is 8x faster than building the tree with networkx (Adult models
    of 24 cliques: 0.21 ms against 1.75 ms), and the size filter was a third of AIM's fit time on Adult.
    Equality with mbi is tested."""
    nbr = list(nbr)

    def cells(mask: int) -> int:
        out, i = 1, 0
        while mask:
            if mask & 1:
                out *= size[i]
            mask >>= 1
            i += 1
        return out

    n_edges = sum(m.bit_count() for m in nbr) // 2
    if n_edges and n_edges == len(nbr) - 1 and _connected(nbr):  # a tree: its edges are the cliques
        return sum(size[x] * size[y] for x in range(len(nbr)) for y in range(x + 1, len(nbr)) if nbr[x] >> y & 1)
    unmarked = list(range(len(nbr)))
    elim = []
    for _ in range(len(nbr)):
        a = min(unmarked, key=lambda i: cells(nbr[i] | (1 << i)) if covered >> i & 1 else 1)  # first minimum
        unmarked.remove(a)
        elim.append(nbr[a] | (1 << a))
        rest = nbr[a]
        j = 0
        while rest:  # fill in: a's neighbours become a clique; a leaves the graph
            if rest & 1:
                nbr[j] = (nbr[j] | nbr[a]) & ~(1 << j) & ~(1 << a)
            rest >>= 1
            j += 1
    elim.sort(key=lambda m: -m.bit_count())
    maximal: list[int] = []
    for m in elim:
        if not any(m & k == m for k in maximal):
            maximal.append(m)
    return sum(cells(m) for m in maximal)


def _connected(nbr: list[int]) -> bool:
    seen, todo = 1, [0]
    while todo:
        i = todo.pop()
        new = nbr[i] & ~seen
        seen |= new
        j = 0
        while new:
            if new & 1:
                todo.append(j)
            new >>= 1
            j += 1
    return seen == (1 << len(nbr)) - 1


def size_filter(
    domain,
    model_cliques: Sequence[Clique],
    candidates: Iterable[Clique],
    size_limit_mb: float,
    limit: int | None = None,
) -> list[Clique]:
    """Candidates that keep the model under ``size_limit_mb``, plus any already inside the model's cliques
    (in the order given; ``limit``: only the first ``limit`` of them, and ``candidates`` is read no further)."""
    model_cliques = [tuple(c) for c in model_cliques]
    closure = set()
    for c in model_cliques:
        closure.update(frozenset(s) for s in downward_closure([c]))
    size = tuple(int(n) for n in domain.shape)
    graph = clique_graph(domain, model_cliques)
    out = []
    for cl in candidates:
        if (
            frozenset(cl) in closure
            or graph_cells(size, *clique_graph(domain, [cl], start=graph)) * 8 / 2**20 <= size_limit_mb
        ):
            out.append(cl)
            if limit is not None and len(out) >= limit:
                break
    return out
