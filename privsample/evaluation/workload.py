"""Workload error: L1 distance between normalised k-way marginals of real and synthetic data.

The metric used by the AIM/MST/PPSyn evaluations (McKenna et al. 2022, "AIM", section 6): for a
clique C, err(C) = || M_C(D) / |D| - M_C(S) / |S| ||_1, in [0, 2]; the workload error is the mean
over a workload of cliques (here: all k-way cliques, optionally a uniform sample of them).

This is evaluation, not a mechanism: it reads the real data without privacy and its output is
not differentially private.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from privsample.errors import InputError
from privsample.marginals import Clique, MarginalEngine, NumpyEngine

__all__ = ["all_cliques", "marginal_counts", "marginal_error", "workload_errors", "workload_error", "summary"]


def all_cliques(attributes: Sequence[str], k: int) -> list[Clique]:
    """All k-subsets of ``attributes`` as tuples, in the attributes' order."""
    if k < 0:
        raise InputError(f"k must be >= 0, got {k}")
    return [tuple(c) for c in itertools.combinations(list(attributes), k)]


def _as_domain(domain: Any):
    if isinstance(domain, Mapping):
        from privsample.data.schema import mbi_domain

        return mbi_domain(list(domain), domain.values())
    return domain


def marginal_counts(codes: Mapping[str, np.ndarray], domain: Any, clique: Sequence[str]) -> np.ndarray:
    """Integer counts of ``clique`` (shape = its domain shape, C order) over integer-coded columns.

    ``domain``: an ``mbi.Domain`` or a mapping {column: size}.
    """
    clique = tuple(clique)
    if not clique:
        return np.array(len(next(iter(codes.values()))) if codes else 0, dtype=np.int64)
    dom = _as_domain(domain)
    unknown = [a for a in clique if a not in dom.attributes]
    if unknown:
        raise InputError(f"column(s) not in the domain: {', '.join(unknown)}")
    missing = [a for a in clique if a not in codes]
    if missing:
        raise InputError(f"no codes for column(s): {', '.join(missing)}")
    return NumpyEngine({a: codes[a] for a in clique}, dom.project(clique)).marginal(clique)


def marginal_error(real: np.ndarray, synth: np.ndarray) -> float:
    """L1 distance between the two count arrays, each divided by its own total (0..2)."""
    real = np.asarray(real, dtype=np.float64)
    synth = np.asarray(synth, dtype=np.float64)
    if real.shape != synth.shape:
        raise InputError(f"marginal shapes differ: {real.shape} vs {synth.shape}")
    tr, ts = real.sum(), synth.sum()
    if tr <= 0 or ts <= 0:
        raise InputError("cannot normalise a marginal of an empty table")
    return float(np.abs(real / tr - synth / ts).sum())


def _check_domains(real_engine: MarginalEngine, synth_engine: MarginalEngine, cliques: Sequence[Clique]) -> None:
    rd, sd = real_engine.domain, synth_engine.domain
    for a in {a for cl in cliques for a in cl}:
        if a not in rd.attributes or a not in sd.attributes:
            raise InputError(f"column '{a}' is not in both domains")
        if rd[a] != sd[a]:
            raise InputError(f"column '{a}' has domain size {rd[a]} (real) but {sd[a]} (synthetic)")


def workload_errors(
    real_engine: MarginalEngine, synth_engine: MarginalEngine, cliques: Iterable[Sequence[str]], *, batch: int = 64
) -> dict[Clique, float]:
    """{clique: L1 distance between normalised real and synthetic marginals} (each in [0, 2]).

    Marginals are fetched from the engines ``batch`` cliques at a time to bound memory.
    """
    cls = [tuple(c) for c in cliques]
    _check_domains(real_engine, synth_engine, cls)
    nr, ns = real_engine.total(), synth_engine.total()
    if nr <= 0 or ns <= 0:
        raise InputError("cannot compare marginals: the real or the synthetic table is empty")
    out: dict[Clique, float] = {}
    for i in range(0, len(cls), batch):
        chunk = cls[i : i + batch]
        mr, ms = real_engine.marginals(chunk), synth_engine.marginals(chunk)
        for cl in chunk:
            a = mr[cl].ravel()
            b = ms[cl].ravel()
            # |a/nr - b/ns| summed; integer cross-multiplication keeps it exact until the final divide
            out[cl] = float(np.abs(a * ns - b * nr).sum() / (nr * ns)) if nr * ns < 2**62 else marginal_error(a, b)
    return out


def workload_error(
    real_engine: MarginalEngine, synth_engine: MarginalEngine, cliques: Iterable[Sequence[str]]
) -> float:
    """Mean of ``workload_errors`` over the cliques."""
    errs = workload_errors(real_engine, synth_engine, cliques)
    if not errs:
        raise InputError("empty workload")
    return float(np.mean(list(errs.values())))


def summary(
    real_engine: MarginalEngine,
    synth_engine: MarginalEngine,
    ks: Sequence[int] = (1, 2, 3),
    max_cliques: int | None = None,
    rng: np.random.Generator | int | None = None,
) -> dict[int, dict[str, Any]]:
    """Mean and max workload error for each k in ``ks``.

    Uses all k-way cliques of the real engine's attributes, or ``max_cliques`` of them drawn
    uniformly without replacement with ``rng`` (a Generator, a seed, or None) when there are more.
    Returns {k: {"mean", "max", "worst" (clique), "n_cliques" (evaluated), "n_total", "sampled", "errors"}};
    a k with no cliques (k > number of columns) is left out.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    attrs = list(real_engine.domain.attributes)
    out: dict[int, dict[str, Any]] = {}
    for k in ks:
        cls = all_cliques(attrs, int(k))
        if not cls or k == 0:
            continue
        n_total = len(cls)
        sampled = max_cliques is not None and n_total > max_cliques
        if sampled:
            pick = np.sort(gen.choice(n_total, size=int(max_cliques), replace=False))
            cls = [cls[j] for j in pick]
        errs = workload_errors(real_engine, synth_engine, cls)
        vals = np.fromiter(errs.values(), dtype=np.float64, count=len(errs))
        worst = cls[int(np.argmax(vals))]
        out[int(k)] = {
            "mean": float(vals.mean()),
            "max": float(vals.max()),
            "worst": worst,
            "n_cliques": len(cls),
            "n_total": n_total,
            "sampled": bool(sampled),
            "errors": errs,
        }
    return out
