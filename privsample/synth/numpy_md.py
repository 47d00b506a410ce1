"""Private-PGM's mirror descent in NumPy, for small models (McKenna et al. 2019, Algorithm 1).

Why it exists: adaptive mechanisms (AIM, PPSyn) refit the
model with a new clique structure every round, and mbi's jitted estimator recompiles for every new
structure. Profiled on discretised Adult, AIM at eps = 0.1: XLA compilation was 99% of estimation
time (about 5 s per round against 0.05 s of running the compiled code). This module runs the same
algorithm as ``mbi.estimation.MirrorDescent`` (mbi 2.0) -- the same loss (sum over measurements of
0.5 ||(Q mu_c - y) / sigma||^2), the same initial step 2 / (L N) with mbi's Lipschitz bound, the same
Armijo rule (x1.01 on success, x0.5 on failure), the same warm start (old potentials expanded onto
the new cliques), the same number of steps -- with NumPy on mbi's junction tree, so nothing is
compiled. Its answers equal mbi's to float rounding (tested).

Post-processing only: it sees noisy measurements, never records. :func:`privsample.synth.pgm.estimate`
uses it for fits of at most ``pgm.NUMPY_MAX_ITERS`` iterations when every query is an identity or a
:class:`~privsample.synth.partition.PartitionQuery` or mbi's ``WeightedQuery`` (PPSyn paper mode's uniform
reconstruction); otherwise mbi's JAX estimator runs.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np

Clique = tuple[str, ...]

STEPS_PER_BLOCK = 50  # mbi runs ceil(iters / 50) blocks of 50 steps


def broadcast_to(arr: np.ndarray, src: Sequence[str], dst: Sequence[str]) -> np.ndarray:
    """A table over ``src`` (a subset of ``dst``) as an array broadcastable over ``dst``'s axes."""
    src = list(src)
    kept = [a for a in dst if a in src]
    out = np.transpose(arr, [src.index(a) for a in kept]) if kept != src else arr
    return out.reshape([arr.shape[src.index(a)] if a in src else 1 for a in dst])


def sum_to(arr: np.ndarray, src: Sequence[str], dst: Sequence[str]) -> np.ndarray:
    """Marginalise a table over ``src`` onto ``dst`` (a subset), axes in ``dst``'s order.

    One ``einsum`` per call: for the partial sums over inner axes of message passing it was 2.6x
    faster than ``ndarray.sum(axis=...)`` plus a transpose (PPSyn-DP's Adult models)."""
    spec = _sum_spec(tuple(src), tuple(dst))
    return arr if spec is None else np.einsum(spec, arr)


@lru_cache(maxsize=1 << 14)
def _sum_spec(src: tuple, dst: tuple) -> str | None:
    if src == dst:
        return None
    letter = {a: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, a in enumerate(src)}
    return "".join(letter[a] for a in src) + "->" + "".join(letter[a] for a in dst)


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
        self.index = {c: _cell_index(self.shape[self.home[c]], self.home[c], c) for c in self.cliques}

    def marginals(
        self, theta: dict[Clique, np.ndarray], total: float, work: dict | None = None
    ) -> dict[Clique, np.ndarray]:
        """The model's marginals on its own cliques (each summing to ``total``), by :meth:`hugin_beliefs`.
        ``work``: a dict kept by the caller between calls, whose super-clique tables are reused (see there)."""
        b = self.hugin_beliefs(theta, total, work)
        out = {}
        for c in self.cliques:
            J, idx = self.home[c], self.index[c]
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
            if not (np.isfinite(z) and z > 0):
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
        self, theta: dict[Clique, np.ndarray], total: float, work: dict | None = None
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
        a fit's hundreds of calibrations allocate (and the system zeroes) each large table once, not every time."""
        if self.log_space:
            return self.log_beliefs(self._init(theta), total)
        phi = self._init(theta, work)
        for v in phi.values():
            v -= v.max()
            np.exp(v, out=v)
        post = self._rooted()
        up: dict[Clique, np.ndarray] = {}  # child -> its message to its parent, over sep[(parent, child)]
        for J, p in post:  # collect: children first
            b = phi[J]
            for k in self.neighbors[J]:
                if k != p and self.sep[(J, k)]:
                    b *= broadcast_to(up[k], self.sep[(J, k)], J)
            if p is not None and self.sep[(p, J)]:
                m = sum_to(b, J, self.sep[(p, J)])
                top = m.max()
                up[J] = m / top if top > 0 else m
        for J, p in reversed(post):  # distribute: parents first
            b = phi[J]
            if p is not None and self.sep[(p, J)]:
                s = self.sep[(p, J)]
                m = sum_to(phi[p], p, s)
                b *= broadcast_to(np.divide(m, up[J], out=np.zeros_like(m), where=up[J] > 0), s, J)
            z = b.sum()
            if not (np.isfinite(z) and z > 0):
                self.log_space = True
                return self.log_beliefs(self._init(theta), total)
            b *= total / z
        return phi

    def _init(self, theta: dict[Clique, np.ndarray], work: dict | None = None) -> dict[Clique, np.ndarray]:
        """Log-potentials of the super-cliques: the sum of the potentials of the cliques they hold (in the
        arrays of ``work``, filled with 0, when it has them; then ``work`` holds the new arrays)."""
        if work is None:
            init = {J: np.zeros(self.shape[J]) for J in self.supers}
        else:
            init = {}
            for J in self.supers:
                buf = work.get(J)
                if buf is None:
                    buf = work[J] = np.zeros(self.shape[J])
                else:
                    buf.fill(0.0)
                init[J] = buf
        for c in self.cliques:
            J, idx = self.home[c], self.index[c]
            if idx is None:
                init[J] += broadcast_to(theta[c], c, J)
            else:
                flat = init[J].reshape(-1)
                flat += np.asarray(theta[c]).reshape(-1).take(idx)
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


INDEX_MAX_CELLS = 1 << 20  # super-cliques up to this many cells get index maps (8 bytes per cell per model clique)


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


class _Loss:
    """sum_M 0.5 ||(Q_M mu_{c_M} - y_M) / sigma_M||^2 and its gradient on the model cliques (mbi's l2 loss)."""

    def __init__(self, measurements, home: dict[Clique, Clique], shape: dict[Clique, tuple], domain_shape: dict):
        from mbi.marginal_loss import WeightedQuery

        from privsample.synth.partition import PartitionQuery

        self.terms = []
        for M in measurements:
            cl = tuple(M.clique)
            labels = M.query.labels if isinstance(M.query, PartitionQuery) else None
            k = M.query.k if labels is not None else 0
            w = np.asarray(M.query.weights, float).ravel() if isinstance(M.query, WeightedQuery) else None
            self.terms.append(
                (
                    cl,
                    home[cl],
                    np.asarray(M.noisy_measurement, float).ravel(),
                    max(float(M.stddev), 1e-12),
                    labels,
                    k,
                    w,
                )
            )
        self.shape = shape
        self.domain_shape = domain_shape
        self._seen = None  # (marginals, loss, scaled residuals) of the last call

    def __call__(self, mu: dict[Clique, np.ndarray], grad: bool = True):
        if self._seen is not None and self._seen[0] is mu:  # the loss of these marginals was just computed
            loss, diffs = self._seen[1], self._seen[2]
        else:
            loss, diffs = 0.0, []
            for cl, home, y, s, labels, k, w in self.terms:
                x = sum_to(mu[home], home, cl).ravel()
                qx = np.bincount(labels, weights=x, minlength=k) if labels is not None else x
                if w is not None:
                    qx = w * qx
                diff = (qx - y) / s
                loss += 0.5 * float(diff @ diff)
                diffs.append(diff)
            self._seen = (mu, loss, diffs)  # mirror descent asks for the gradient right after an accepted step
        if not grad:
            return loss
        g = {c: np.zeros(s) for c, s in self.shape.items()}
        for (cl, home, y, s, labels, k, w), diff in zip(self.terms, diffs):
            gx = diff / s
            if w is not None:
                gx = w * gx
            if labels is not None:
                gx = gx[labels]
            g[home] = g[home] + broadcast_to(gx.reshape([self.domain_shape[a] for a in cl]), cl, home)
        return loss, g


def model_cliques(measurements, extra: Sequence[Clique] = ()) -> list[Clique]:
    """The model's cliques: the maximal measured cliques (as mbi's loss function chooses them), with
    ``extra`` cliques (structural zeros' columns, :mod:`privsample.synth.zeros`) counted as measured."""
    from mbi.clique_utils import maximal_subset

    return [tuple(c) for c in maximal_subset([tuple(M.clique) for M in measurements] + [tuple(c) for c in extra])]


def supported(measurements) -> bool:
    """True when every query is an identity (mbi's default), a weighted identity or a PartitionQuery."""
    from mbi.marginal_loss import DatavectorQuery, WeightedQuery

    from privsample.synth.partition import PartitionQuery

    return all(isinstance(M.query, (DatavectorQuery, WeightedQuery, PartitionQuery)) for M in measurements)


def optimistic_lipschitz(domain, measurements) -> float:
    """max over model cliques of sum 1/sigma_M^2: mbi's bound with every query and marginalisation norm set to 1.

    mbi's bound multiplies each term by ||Q_M||^2 |C| / |c_M|, which for a partition query with large
    groups (or a one-way measurement inside a big clique) makes the first step hundreds of times smaller
    than needed; Armijo then grows it by only 1% per step, so a 250-step warm-started refit barely
    moves (seen in PPSyn-DP: group sums off by 19,000 moved the model by 1,300). Starting from this
    smaller L (a larger step), Armijo halves the step until it decreases the loss: at most
    log2(||Q||^2 |C| / |c|) rejected steps, after which the descent is as safe as with mbi's start."""
    from mbi.clique_utils import clique_mapping

    cliques = model_cliques(measurements)
    routing = clique_mapping(cliques, [tuple(M.clique) for M in measurements], domain)
    blocks: dict = {}
    for M in measurements:
        home = tuple(routing[tuple(M.clique)])
        blocks[home] = blocks.get(home, 0.0) + 1.0 / max(float(M.stddev), 1e-12) ** 2
    return max(blocks.values()) if blocks else 1.0


def estimate(
    domain,
    measurements,
    *,
    known_total: float,
    iters: int,
    warm_start=None,
    on_block=None,
    optimistic_step: bool = False,
    zeros=None,
):
    """Mirror descent as mbi's ``MirrorDescent().estimate`` (module docstring); returns an mbi MarkovRandomField.

    ``optimistic_step``: start from the step of :func:`optimistic_lipschitz` instead of mbi's (Armijo
    backtracks from there); off by default, so the default answers equal mbi's.
    ``zeros``: a :class:`~privsample.synth.zeros.StructuralZeros`: its cliques join the model, the noisy
    counts of forbidden cells are set to 0, and the forbidden cells' log-potentials are fixed at
    ``zeros.NEG`` (the gradient there is zeroed), so the fitted model gives them probability exactly 0."""
    from mbi.clique_utils import clique_mapping
    from mbi.marginal_loss import calculate_l2_lipschitz_from_metadata

    if zeros is not None:
        measurements = zeros.zero_measurements(measurements)
    cliques = model_cliques(measurements, zeros.cliques if zeros is not None else ())
    shape = {c: tuple(domain.project(c).shape) for c in cliques}
    total = float(known_total)

    theta, masks = _start_potentials(domain, cliques, shape, warm_start, zeros)
    L = (
        optimistic_lipschitz(domain, measurements)
        if optimistic_step
        else calculate_l2_lipschitz_from_metadata(domain, measurements)
    )
    alpha = 2.0 / (float(L) * total)
    if not masks and _is_product(cliques, measurements):
        theta, mu = _product_descent(cliques, measurements, theta, total, alpha, int(iters), on_block)
        return markov_field(domain, cliques, theta, mu, total)
    tree = cached_tree(domain, tuple(cliques))
    routing = clique_mapping(cliques, [tuple(M.clique) for M in measurements], domain)
    loss_fn = _Loss(
        measurements,
        {tuple(k): tuple(v) for k, v in routing.items()},
        shape,
        dict(zip(domain.attributes, domain.shape)),
    )
    theta, mu = _armijo_descent(tree, loss_fn, cliques, masks, theta, total, alpha, int(iters), on_block)
    return markov_field(domain, cliques, theta, mu, total)


def _start_potentials(domain, cliques, shape, warm_start, zeros) -> tuple[dict, dict]:
    """The starting log-potentials of :func:`estimate` (0, or ``warm_start``'s spread onto ``cliques``) and the
    masks of the forbidden cells of ``zeros``, whose log-potentials are set to ``zeros.NEG``."""
    from mbi.clique_utils import reverse_clique_mapping

    theta = {c: np.zeros(shape[c]) for c in cliques}
    if warm_start is not None:
        old = warm_start.potentials
        mapping = reverse_clique_mapping(cliques, old.cliques, domain=domain)
        for c in cliques:
            for c2 in mapping[c]:
                f = old[c2]
                theta[c] = theta[c] + broadcast_to(np.asarray(f.values, float), tuple(f.domain.attributes), c)
    masks = {}
    if zeros is not None:
        from privsample.synth.zeros import NEG

        for c in cliques:
            m = zeros.mask(c)
            if m is not None and m.any():
                masks[c] = m
                theta[c][m] = NEG
    return theta, masks


def _armijo_descent(tree, loss_fn, cliques, masks, theta, total, alpha, iters, on_block):
    """:func:`estimate`'s mirror descent on the junction tree ``tree``: ``iters`` steps with Armijo's rule on
    the step (grown by 1% when accepted, halved when not); the masked cells' gradient is zeroed. Returns
    (theta, mu)."""
    work: dict = {}  # the super-clique tables, reused by every calibration of this fit
    mu = tree.marginals(theta, total, work)

    def gradient(mu):
        loss, g = loss_fn(mu)
        for c, m in masks.items():  # forbidden cells never move
            g[c][m] = 0.0
        return loss, g

    loss, g = gradient(mu)
    blocks = math.ceil(iters / STEPS_PER_BLOCK)
    for b in range(blocks):
        for _ in range(STEPS_PER_BLOCK):
            theta2 = {c: theta[c] - alpha * g[c] for c in cliques}
            mu2 = tree.marginals(theta2, total, work)
            loss2 = loss_fn(mu2, grad=False)
            if loss - loss2 >= 0.5 * alpha * sum(float(np.vdot(g[c], mu[c] - mu2[c])) for c in cliques):
                alpha *= 1.01
                theta, mu = theta2, mu2
                loss, g = gradient(mu)
            else:
                alpha *= 0.5
        if on_block is not None:
            on_block(min((b + 1) * STEPS_PER_BLOCK, iters))
    return theta, mu


def markov_field(domain, cliques, theta, mu, total):
    """mbi's ``MarkovRandomField`` with log-potentials ``theta`` and marginals ``mu`` on ``cliques``."""
    import jax.numpy as jnp
    from mbi import CliqueVector, Factor, MarkovRandomField

    pots = CliqueVector(domain, cliques, {c: Factor(domain.project(c), jnp.asarray(theta[c])) for c in cliques})
    margs = CliqueVector(domain, cliques, {c: Factor(domain.project(c), jnp.asarray(mu[c])) for c in cliques})
    return MarkovRandomField(potentials=pots, marginals=margs, total=total)


def _is_product(cliques, measurements) -> bool:
    """True for the one-way models AIM and PPSyn start from: one-way model cliques, each measured once by a
    plain (unweighted, unpartitioned) identity query."""
    from mbi.marginal_loss import DatavectorQuery

    attrs = [a for c in cliques for a in c]
    measured = [tuple(M.clique) for M in measurements]
    return (
        all(len(c) == 1 for c in cliques)
        and len(set(attrs)) == len(attrs)
        and sorted(measured) == sorted(cliques)
        and all(type(M.query) is DatavectorQuery for M in measurements)
    )


def _product_descent(cliques, measurements, theta, total, alpha, iters, on_block):
    """The loop of :func:`estimate` for a product model (:func:`_is_product`), on one flat vector.

    There the junction tree has no separators: each clique's marginal is ``total`` times the softmax of its
    potentials, each measurement's gradient is ``(mu - y) / sigma^2`` on its own clique. This does the same
    float operations on slices of a flat array instead of one dict entry per clique, so its answers are
    bit-identical to the general loop (tested) in about a fifth of the time (the one-way fits of 1000 steps
    that PPSyn-DP starts from)."""
    sizes = [int(np.prod(theta[c].shape)) for c in cliques]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    segs = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    lens = np.asarray(sizes)
    by_clique = {tuple(M.clique): M for M in measurements}
    order = [cliques.index(tuple(M.clique)) for M in measurements]  # the loss adds its terms in this order
    y = np.concatenate([np.asarray(by_clique[c].noisy_measurement, float).ravel() for c in cliques])
    sd = np.repeat([max(float(by_clique[c].stddev), 1e-12) for c in cliques], lens)
    th = np.concatenate([np.asarray(theta[c], float).ravel() for c in cliques])

    def marginals(th):
        v = th - np.repeat(np.maximum.reduceat(th, bounds[:-1]), lens)
        np.exp(v, out=v)
        z = [v[s].sum() for s in segs]
        v *= np.repeat([total / zi for zi in z], lens)
        return v

    def loss_of(mu):
        diff = (mu - y) / sd
        loss = 0.0
        for i in order:
            d = diff[segs[i]]
            loss += 0.5 * float(d @ d)
        return loss, diff

    mu = marginals(th)
    loss, diff = loss_of(mu)
    g = diff / sd
    for b in range(math.ceil(iters / STEPS_PER_BLOCK)):
        for _ in range(STEPS_PER_BLOCK):
            th2 = th - alpha * g
            mu2 = marginals(th2)
            loss2, diff2 = loss_of(mu2)
            step = mu - mu2
            if loss - loss2 >= 0.5 * alpha * sum(float(np.vdot(g[s], step[s])) for s in segs):
                alpha *= 1.01
                th, mu, loss = th2, mu2, loss2
                g = diff2 / sd
            else:
                alpha *= 0.5
        if on_block is not None:
            on_block(min((b + 1) * STEPS_PER_BLOCK, iters))
    shape = {c: theta[c].shape for c in cliques}
    return (
        {c: th[s].reshape(shape[c]).copy() for c, s in zip(cliques, segs)},
        {c: mu[s].reshape(shape[c]).copy() for c, s in zip(cliques, segs)},
    )
