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

``accelerated=True`` replaces the descent by :func:`_accelerated_descent`: the same mirror step taken from an
extrapolated point (Nesterov's momentum on the log-potentials, restarted whenever the loss rises: O'Donoghue and
Candes 2015, "Adaptive restart for accelerated gradient schemes"), with the same Armijo rule. Its answers are not
mbi's: it reaches a given loss in fewer junction-tree calibrations (``benchmarks/results/aim_wide.md``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from privsample.synth.jtree import Clique, broadcast_to, cached_tree, sum_to

STEPS_PER_BLOCK = 50  # mbi runs ceil(iters / 50) blocks of 50 steps


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
    accelerated: bool = False,
    single: bool = False,
):
    """Mirror descent as mbi's ``MirrorDescent().estimate`` (module docstring); returns an mbi MarkovRandomField.
    ``accelerated``: :func:`_accelerated_descent` instead (not mbi's answers; a product model's fit is unchanged).
    ``single``: the junction tree's huge super-cliques calibrated in float32 (``jtree.JunctionTree.hugin_beliefs``).

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
    descent = _accelerated_descent if accelerated else _armijo_descent
    theta, mu = descent(tree, loss_fn, cliques, masks, theta, total, alpha, int(iters), on_block, single)
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


def _masked_gradient(loss_fn, masks):
    """(loss, gradient) at ``mu`` with the masked (forbidden) cells' gradient zeroed: they never move."""

    def gradient(mu):
        loss, g = loss_fn(mu)
        for c, m in masks.items():
            g[c][m] = 0.0
        return loss, g

    return gradient


def _armijo_descent(tree, loss_fn, cliques, masks, theta, total, alpha, iters, on_block, single=False):
    """:func:`estimate`'s mirror descent on the junction tree ``tree``: ``iters`` steps with Armijo's rule on
    the step (grown by 1% when accepted, halved when not); the masked cells' gradient is zeroed. Returns
    (theta, mu)."""
    work: dict = {}  # the super-clique tables, reused by every calibration of this fit
    mu = tree.marginals(theta, total, work, single)

    gradient = _masked_gradient(loss_fn, masks)

    loss, g = gradient(mu)
    blocks = math.ceil(iters / STEPS_PER_BLOCK)
    for b in range(blocks):
        for _ in range(STEPS_PER_BLOCK):
            theta2 = {c: theta[c] - alpha * g[c] for c in cliques}
            mu2 = tree.marginals(theta2, total, work, single)
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


def _accelerated_descent(tree, loss_fn, cliques, masks, theta, total, alpha, iters, on_block, single=False):
    """:func:`_armijo_descent` with momentum: each of the ``iters`` steps is the mirror step from
    y = theta + beta (theta - theta_prev), beta = k / (k + 3) after k steps without a restart, accepted by
    Armijo's rule at y (step grown by 1% when accepted, halved when not). A rejected step or an accepted one whose
    loss is above the previous iterate's restarts the momentum (k = 0: the next step is a plain mirror step).
    A step costs two calibrations (at y and at the trial point), one after a restart. Masked cells keep their
    potentials (their gradient is zeroed, and theta and theta_prev agree there). Returns (theta, mu)."""
    work: dict = {}
    mu = tree.marginals(theta, total, work, single)

    gradient = _masked_gradient(loss_fn, masks)

    loss, g = gradient(mu)
    prev, k = theta, 0
    blocks = math.ceil(iters / STEPS_PER_BLOCK)
    for b in range(blocks):
        for _ in range(STEPS_PER_BLOCK):
            if k > 0:
                beta = k / (k + 3.0)
                y = {c: theta[c] + beta * (theta[c] - prev[c]) for c in cliques}
                mu_y = tree.marginals(y, total, work, single)
                loss_y, g_y = gradient(mu_y)
            else:
                y, mu_y, loss_y, g_y = theta, mu, loss, g
            theta2 = {c: y[c] - alpha * g_y[c] for c in cliques}
            mu2 = tree.marginals(theta2, total, work, single)
            loss2 = loss_fn(mu2, grad=False)
            if loss_y - loss2 >= 0.5 * alpha * sum(float(np.vdot(g_y[c], mu_y[c] - mu2[c])) for c in cliques):
                alpha *= 1.01
                k = 0 if loss2 > loss else k + 1
                prev, theta, mu = theta, theta2, mu2
                loss, g = gradient(mu)
            else:
                alpha *= 0.5
                k = 0
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
