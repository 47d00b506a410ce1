"""Glue to Private-PGM (``mbi==2.0``): estimation, model (de)serialisation (JAX is set up by ``jax_setup``).

Everything here is post-processing of noisy measurements: it never sees records.
The fitted ``MarkovRandomField`` is stored as JSON metadata plus plain arrays (its log-potentials),
never with ``mbi.save`` (which pickles a tree definition).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from privsample.synth.jax_setup import configure_jax

configure_jax()

import mbi  # noqa: E402
from mbi import CliqueVector, Domain, Factor, LinearMeasurement, MarkovRandomField  # noqa: E402
from mbi import estimation  # noqa: E402


# NumPy estimation for fits of at most this many iterations (benchmarks/numpy_md.py, results/numpy_md.md,
# one run): on small junction trees a NumPy step costs about 1 ms more than a compiled XLA step (2.9x at
# 6k cells), on large ones it is cheaper (0.5x at 0.4M-2M cells), while every new model structure costs
# XLA 2-7 s of compilation; so NumPy wins below a few thousand iterations at any size. The adaptive
# mechanisms' rounds (250) and final fits (1000) run in NumPy, and so does MST's fit (1000, ``backend="tree"``).
NUMPY_MAX_ITERS = 2000


def estimate(
    domain: Domain,
    measurements: list[LinearMeasurement],
    *,
    known_total: float,
    iters: int,
    warm_start: MarkovRandomField | None = None,
    tol: float | None = None,
    on_block=None,
    backend: str = "auto",
    optimistic_step: bool = False,
    zeros=None,
    accelerated: bool = False,
    single: bool = False,
) -> MarkovRandomField:
    """Fit the graphical model to the measurements by mirror descent (Private-PGM, McKenna et al. 2019).

    ``on_block(iterations_done)`` is called every ``estimation.CALLBACK_EVERY`` iterations (progress bars).
    Fits of at most ``NUMPY_MAX_ITERS`` iterations run the same algorithm in NumPy
    (:mod:`privsample.synth.numpy_md`), which compiles nothing: on the adaptive mechanisms' small
    per-round models JAX spent 99% of the time compiling. ``backend`` forces "numpy" or "jax"; "tree" runs
    :mod:`privsample.synth.tree_md` (the same descent, vectorised for a forest of pairs: MST's model) where
    it applies, else as "auto".
    ``optimistic_step`` (NumPy path only): a larger first step, see :func:`numpy_md.optimistic_lipschitz`.
    ``accelerated``: mirror descent with restarted momentum (:mod:`numpy_md`), which takes the NumPy path whatever
    ``iters``; a fit that cannot take it (other queries, ``tol``, ``backend="jax"``) runs plain mirror descent.
    ``single`` (NumPy path only): the junction tree's huge super-cliques calibrated in float32
    (``jtree.JunctionTree.hugin_beliefs``): about twice as fast on them, marginals within about 1e-6.
    ``zeros``: structural zeros (:class:`~privsample.synth.zeros.StructuralZeros`) to fix at probability 0.
    A fit with zeros always runs the NumPy estimator, whatever ``backend`` and ``iters`` (neither mbi's JAX
    estimator nor the tree descent can hold cells fixed), and refuses ``tol`` and other query types.
    Attributes of ``domain`` that no measurement and no zero covers (the one-cell columns the synthesizers do not
    measure, ``selection.informative_attributes``) are left out of the fit and join the fitted model as independent
    uniform factors (:func:`with_attributes`): what a fit over them would give (no loss term, maximum entropy), for
    a one-cell column its one value; the fit of the others is the one it would be without them.
    """
    from privsample.synth import numpy_md

    covered = {a for M in measurements for a in M.clique}
    covered |= {a for cl in (zeros.cliques if zeros is not None else ()) for a in cl}
    inner = [a for a in domain.attributes if a in covered]
    if inner and len(inner) < len(domain.attributes):
        sub = domain.project(inner)
        start = None if warm_start is None else restrict(warm_start, sub)
        kw = dict(tol=tol, on_block=on_block, backend=backend, optimistic_step=optimistic_step, zeros=zeros)
        model = estimate(
            sub, measurements, known_total=known_total, iters=iters, warm_start=start, **kw, accelerated=accelerated,
            single=single,
        )  # fmt: skip
        return with_attributes(model, domain)

    if backend not in ("auto", "numpy", "jax", "tree"):
        raise ValueError(f"backend must be auto, numpy, jax or tree, got {backend!r}")
    if zeros is not None and (tol is not None or not numpy_md.supported(measurements)):
        from privsample.errors import InputError

        raise InputError(
            "a schema with 'forbid' or 'require' is fitted by the NumPy estimator, which takes no convergence "
            "tolerance (tol)"
        )
    if backend == "tree" and tol is None and not optimistic_step and zeros is None and not accelerated:
        from privsample.synth import tree_md

        if tree_md.applies(domain, measurements, warm_start):
            return tree_md.estimate(domain, measurements, known_total=known_total, iters=iters, on_block=on_block)
    numpy_path = backend != "jax" and tol is None and measurements and numpy_md.supported(measurements)
    if zeros is not None or (numpy_path and (backend == "numpy" or accelerated or int(iters) <= NUMPY_MAX_ITERS)):
        return numpy_md.estimate(  # structural zeros: always here (the cells stay fixed at zero)
            domain,
            measurements,
            known_total=known_total,
            iters=iters,
            warm_start=warm_start,
            on_block=on_block,
            optimistic_step=optimistic_step,
            zeros=zeros,
            accelerated=accelerated,
            single=single,
        )
    callback = None
    if on_block is not None:
        done = [0]

        def callback(_state):
            done[0] = min(done[0] + estimation.CALLBACK_EVERY, int(iters))
            on_block(done[0])

    return estimation.MirrorDescent().estimate(
        domain,
        measurements,
        known_total=float(known_total),
        iters=int(iters),
        warm_start=warm_start,
        tol=tol,
        callback_fn=callback,
    )


def with_attributes(model: MarkovRandomField, domain: Domain) -> MarkovRandomField:
    """``model`` on ``domain``, a superset of its domain: each attribute it lacks joins as a clique of its own with
    log-potential 0 (independent, uniform on its cells: all of it on the one cell of a one-cell column).
    Post-processing: no measurement is involved."""
    import dataclasses

    import jax.numpy as jnp

    extra = [a for a in domain.attributes if a not in model.domain.attributes]
    cliques = [tuple(cl) for cl in model.cliques] + [(a,) for a in extra]
    total = float(model.total)
    pots = {tuple(cl): model.potentials[cl] for cl in model.cliques}
    margs = {tuple(cl): model.marginals[cl] for cl in model.cliques}
    for a in extra:
        n = int(domain[a])
        pots[(a,)] = Factor(domain.project((a,)), jnp.asarray(np.zeros(n)))
        margs[(a,)] = Factor(domain.project((a,)), jnp.asarray(np.full(n, total / n)))
    return dataclasses.replace(
        model, potentials=CliqueVector(domain, cliques, pots), marginals=CliqueVector(domain, cliques, margs)
    )


def restrict(model: MarkovRandomField, domain: Domain) -> MarkovRandomField:
    """``model`` without its cliques outside ``domain`` (those :func:`with_attributes` added): a warm start for a
    fit on ``domain``."""
    import dataclasses

    keep = [tuple(cl) for cl in model.cliques if set(cl) <= set(domain.attributes)]
    return dataclasses.replace(
        model,
        potentials=CliqueVector(domain, keep, {cl: model.potentials[cl] for cl in keep}),
        marginals=CliqueVector(domain, keep, {cl: model.marginals[cl] for cl in keep}),
    )


def current_rss_mb() -> float | None:
    """Resident set size of this process now (Linux /proc), or None where unavailable."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return None


def trim_jax_caches(limit_mb: float | None) -> bool:
    """Drop JAX's compiled executables if the process holds more than ``limit_mb`` (True if it did).

    Every adaptive round (AIM, PPSyn) fits a model with a new clique structure, so executables pile
    up; clearing them every round costs recompiles of the shared pieces (measured on Adult: 1.7x the
    time), clearing only above a memory limit keeps both time and peak memory low.
    """
    if limit_mb is None:
        return False
    rss = current_rss_mb()
    if rss is None or rss <= limit_mb:
        return False
    import jax

    jax.clear_caches()
    return True


def identity_total(measurements: Sequence[tuple[np.ndarray, float]]) -> float:
    """Inverse-variance weighted estimate of N from identity measurements [(noisy counts y, stddev)].

    Each sum(y) is unbiased for N with variance stddev^2 * len(y); post-processing only.
    """
    est = np.array([float(np.sum(y)) for y, _ in measurements])
    var = np.array([s * s * np.size(y) for y, s in measurements])
    return max(1.0, float(np.average(est, weights=1.0 / var)))


def domain_to_dict(domain: Domain) -> dict[str, int]:
    return {a: int(n) for a, n in zip(domain.attributes, domain.shape)}


def model_to_arrays(model: MarkovRandomField) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(JSON-able metadata, arrays) describing a fitted model: its domain, cliques, log-potentials, total."""
    meta = {
        "domain": domain_to_dict(model.domain),
        "cliques": [list(cl) for cl in model.cliques],
        "total": float(model.total),
    }
    arrays = {f"potential_{i}": np.asarray(model.potentials[cl].values) for i, cl in enumerate(model.cliques)}
    return meta, arrays


def model_from_arrays(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> MarkovRandomField:
    """Inverse of :func:`model_to_arrays` (marginals recomputed by message passing)."""
    import jax.numpy as jnp

    domain = Domain.fromdict(meta["domain"])
    cliques = [tuple(cl) for cl in meta["cliques"]]
    tables, theta = {}, {}
    for i, cl in enumerate(cliques):
        theta[cl] = values = np.asarray(arrays[f"potential_{i}"], dtype=np.float64)
        if values.shape != domain.project(cl).shape:
            raise ValueError(f"potential {i} has shape {values.shape}, expected {domain.project(cl).shape}")
        tables[cl] = Factor(domain.project(cl), jnp.asarray(values))
    potentials = CliqueVector(domain, cliques, tables)
    total = float(meta["total"])
    # the marginals by NumPy message passing (mbi's JAX version compiles for every model shape, seconds)
    from privsample.synth import jtree

    mu = jtree.cached_tree(domain, tuple(cliques)).marginals(theta, total)
    for i, cl in enumerate(cliques):
        if not (np.all(np.isfinite(mu[cl])) and np.all(mu[cl] >= 0)):
            from privsample.errors import InputError

            raise InputError(f"model field 'potential_{i}' gives non-finite or negative marginals (values too large)")
    marginals = CliqueVector(domain, cliques, {cl: Factor(domain.project(cl), jnp.asarray(mu[cl])) for cl in cliques})
    return MarkovRandomField(potentials=potentials, marginals=marginals, total=total)


def record_sampler(model: MarkovRandomField, evidence: dict[str, np.ndarray] | None = None):
    """``draw(rows, seed)``: what ``sample_model(model, rows, seed)`` returns, with the junction tree
    calibrated once, for drawing a large table in chunks. ``evidence`` (attribute -> weights over the
    model's codes): records from the model conditioned on it (:class:`tree_sampler.RecordSampler`); then
    ``draw.log_probability`` is the log of the evidence's probability under the model."""
    from privsample.synth.tree_sampler import RecordSampler

    pots = {tuple(cl): model.potentials[cl].values for cl in model.cliques}
    sampler = RecordSampler(model.domain, pots, float(model.total), evidence)

    def draw(rows: int, seed: int) -> dict[str, np.ndarray]:
        return sampler.draw(int(rows), np.random.default_rng(int(seed) % (2**63)))

    draw.log_probability = sampler.log_probability
    return draw


def identity_total_sd(measurements: Sequence[tuple[np.ndarray, float]]) -> float:
    """Noise standard deviation of :func:`identity_total` (before its floor at 1): a function of the
    noise scales and the sizes of the measurements only, as public as they are."""
    var = np.array([s * s * np.size(y) for y, s in measurements], dtype=float)
    return float(np.sqrt(1.0 / np.sum(1.0 / var)))


def sample_model(model: MarkovRandomField, rows: int, seed: int, backend: str = "numpy") -> dict[str, np.ndarray]:
    """Synthetic records from the model (junction-tree ancestral sampling with randomised rounding).

    ``backend="numpy"`` (default): :mod:`privsample.synth.tree_sampler`, seeded by ``seed``; nothing is
    compiled. ``backend="mbi"``: mbi's ``synthetic_data`` (JAX; it draws from NumPy's global generator,
    which we seed from ``seed`` and restore). Sampling is post-processing: it costs no privacy budget.
    """
    if backend == "numpy":
        return record_sampler(model)(rows, seed)
    if backend != "mbi":
        raise ValueError(f"backend must be numpy or mbi, got {backend!r}")
    import jax.numpy as jnp

    # mbi orders some columns by iterating over sets of attribute names, and a set of strings iterates
    # in an order that changes with PYTHONHASHSEED, i.e. with every process: the same seed gave
    # different records. Integer names hash to themselves, so on a copy of the model whose attributes
    # are 0..d-1 the sampler's order, hence the output for a seed, is the same in every process.
    names = list(model.domain.attributes)
    index = {a: i for i, a in enumerate(names)}
    domain = Domain(list(range(len(names))), list(model.domain.shape))
    cliques = [tuple(index[a] for a in cl) for cl in model.cliques]

    def rename(vector) -> CliqueVector:
        return CliqueVector(
            domain,
            cliques,
            {
                new: Factor(domain.project(new), jnp.asarray(vector[old].values))
                for old, new in zip(model.cliques, cliques)
            },
        )

    renamed = MarkovRandomField(
        potentials=rename(model.potentials), marginals=rename(model.marginals), total=model.total
    )
    state = np.random.get_state()
    try:
        np.random.seed(int(seed) % (2**32))
        ds = renamed.synthetic_data(rows=int(rows))
    finally:
        np.random.set_state(state)
    return {a: np.asarray(ds.data[index[a]]).astype(np.int64) for a in names}


__all__ = [
    "mbi",
    "Domain",
    "Factor",
    "LinearMeasurement",
    "MarkovRandomField",
    "estimate",
    "with_attributes",
    "restrict",
    "identity_total",
    "identity_total_sd",
    "record_sampler",
    "current_rss_mb",
    "trim_jax_caches",
    "model_to_arrays",
    "model_from_arrays",
    "sample_model",
    "domain_to_dict",
]
