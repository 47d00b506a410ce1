"""AIM (McKenna, Mullins, Sheldon & Miklau 2022): adaptive, workload-aware select-measure-generate.

The design follows the reference implementation (Private-PGM's ``mechanisms/aim.py``).

Privacy (rho-zCDP, add/remove one record), with rho = everything the accountant has left:
* The workload and its candidates hold only the d columns worth measuring (``selection.informative_attributes``:
  a one-cell column's marginals are the record count and the other columns', so none is measured; the model holds
  it at its one value), and T = 16 d counts those. With none, the number of records is measured once with all of
  rho (sensitivity 1, ``base.count_measurement``) and there are no rounds.
* Initialisation measures every one-way candidate with discrete Gaussian noise sigma
  (sensitivity 1 each): 1/(2 sigma^2) apiece.
* Each round spends eps_r^2/8 on an exponential-mechanism selection and 1/(2 sigma^2) on measuring
  the selected marginal (L2 sensitivity 1). The quality of a candidate is
  q(cl) = c(cl) * (||x_cl - mu_cl||_1 - sqrt(2/pi) sigma n_cl), where mu_cl comes from the current
  model (public) and c(cl) is a public weight: adding or removing a record changes x_cl in one cell
  by 1, so q changes by at most c(cl) <= Delta = max c over the candidates offered.
* sigma, eps_r, the candidate set (model-size filter, which grows with the budget spent) and the
  annealing decision depend only on earlier outputs.
* Under the accountant's person-level unit (one person, at most k records; ``privsample.privacy.unit``) every
  sensitivity above is k times larger, and sigma and the selection's noise are calibrated to it (sigma is k times
  the record-level one for the same rho). The last round spends exactly what remains;
  the accountant refuses any overrun, so the total is <= rho on every run, and adaptive composition
  of zCDP under a filter gives rho-zCDP overall. Estimation and sampling are post-processing.
* Structural zeros (the schema's public ``forbid`` and ``require``, :mod:`privsample.synth.zeros`) cost nothing: their
  cliques are in every model (and in the size filter), their cells fixed at zero in every fit.

Public data (``public``), as in JAM (Fuentes, Mullins, McKenna, Miklau & Sheldon 2024, "Joint Selection:
Adaptively Incorporating Public Information for Private Synthetic Data"): every round but the last also offers
each clique not yet measured publicly as a public candidate, scored
q_pub(cl) = c(cl) * (||x_cl - mu_cl||_1 - ||x_cl - p_cl||_1), where p_cl is the public marginal rescaled to the
model's estimated total (a noisy output). One exponential mechanism picks among the private and public
candidates; each L1 term changes by <= 1 per record, so q_pub changes by <= 2 c(cl), and the mechanism's
sensitivity is the max of these bounds over all candidates offered. A public pick adds the rescaled public
marginal as a measurement with the stddev sigma that a private one would have had (JAM weighs public and private
measurements alike) and spends nothing beyond the selection. The schedule (when to stop, the model-size limit)
counts the measurement budget a public round did not spend as spent, as JAM's fixed rounds do, and the last
round, private candidates only, measures with everything that remains, saved budget included; a public round
never anneals (AIM's rule compares a private measurement with its noise). The ledger is AIM's, less the
measurements of public rounds, with a larger last measurement; the total spent is rho, as AIM's.
With joint selection every candidate, private or public, must also keep the model's junction tree within
``public_max_cells`` cells (fill-in included): without a noise penalty, large public marginals were picked early
and every later fit ran on a large model (discretised Adult, eps 0.1: minutes instead of seconds). The cap depends
on the model's cliques and the domain only (outputs, public), so the candidate set is chosen as before and the
sensitivity argument above is unchanged; ``public_max_cells=inf`` offers exactly the candidates without it.
``public_prior`` (off by default) uses the public table as a prior instead ("pre-train"): its one-way marginals and
the two-way marginals of a maximum spanning tree of its mutual information (public) enter the first fit, weighed
as measurements at sigma, and the rounds are AIM's, private candidates only: the ledger is AIM's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from privsample.privacy.released import released
from privsample.errors import InputError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.mechanisms import exponential_select, gaussian_measure, rho_for_sigma
from privsample.privacy.noise import NoiseSource
from privsample.synth import pgm
from privsample.progress import AtMost, Progress, no_progress, progress_phase
from privsample.synth.base import (
    DEFAULT_MAX_MEMORY_MB,
    JIT_CACHE_LIMIT_MB,
    ROUNDS_NOTE,
    WorkloadSynthesizer,
    count_measurement,
    discovery_measurements,
    estimate_phase,
)
from privsample.synth.model import SynthModel
from privsample.synth.public import PublicData, public_scores
from privsample.synth.schedule import AnnealedSchedule
from privsample.synth.model_marginals import ModelMarginals
from privsample.synth.selection import (
    candidate_weights,
    clique_graph,
    graph_cells,
    informative_attributes,
    model_size_mb,
)
from privsample.synth.zeros import StructuralZeros


WARM_ROUND_ITERS = 250
# With ``accelerated``, the final fit runs numpy_md's restarted momentum for this share of ``iters``: a lower loss
# than plain mirror descent's ``iters`` steps in about a third of the calibrations (benchmarks/results/aim_wide.md).
# The rounds keep plain mirror descent: a closer refit there changes when AIM anneals (more, costlier rounds).
ACCELERATED_FINAL_SHARE = 0.15
# The model-size cap (MB of junction-tree cells; the reference's is 80). On wide tables the late rounds' refits on
# 40-66 MB models took most of AIM's time; at 20 MB, 25 and 100 columns x 1,000,000 rows ran 1.3-3.5x faster with
# the same or lower error (3 seeds each), and narrow tables' models stay below it (benchmarks/results/aim_wide.md).
MAX_MODEL_SIZE_MB = 20.0
PUBLIC_MAX_CELLS = 2**19


def selection_sensitivity(cliques, weights, *, public=()) -> float:
    """The exponential mechanism's sensitivity: the max over ALL candidates offered of their scores' sensitivity,
    c(cl) for a private candidate (``cliques``) and 2 c(cl) for a public one (``public``, ``public_scores``);
    1 if all are 0."""
    top = max([weights[cl] for cl in cliques] + [2.0 * weights[cl] for cl in public])
    return float(top) if top > 0 else 1.0


def public_fitting(domain, model_cliques, cliques, max_cells: float) -> list:
    """The ``cliques`` that keep the model's junction tree within ``max_cells`` cells once measured (their own
    cells and any fill-in of the triangulation). Public: it depends on the model's cliques and the domain only."""
    graph = clique_graph(domain, model_cliques)
    size = tuple(int(n) for n in domain.shape)
    return [cl for cl in cliques if graph_cells(size, *clique_graph(domain, [cl], start=graph)) <= max_cells]


def prior_cliques(public: PublicData, candidates) -> list:
    """The public prior's cliques: every one-way candidate and the two-way candidates of a maximum spanning tree
    of the public table's pairwise mutual information (Chow & Liu 1968; Kruskal, ties in candidate order): a
    model fitted to the public table whose structure is fixed before any private round. Public only."""
    one = [cl for cl in candidates if len(cl) == 1]
    two = [cl for cl in candidates if len(cl) == 2]
    marg = public.engine.marginals(two) if two else {}

    def mutual_information(cl) -> float:
        p = np.asarray(marg[cl], float)
        p = p / max(p.sum(), 1.0)
        outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
        nz = p > 0
        return float((p[nz] * np.log(p[nz] / outer[nz])).sum())

    parent: dict = {}

    def root(a):
        while parent.get(a, a) != a:
            a = parent[a]
        return a

    tree = []
    for cl in sorted(two, key=mutual_information, reverse=True):  # stable: ties keep the candidates' order
        ra, rb = root(cl[0]), root(cl[1])
        if ra != rb:
            parent[ra] = rb
            tree.append(cl)
    return one + tree


def with_public(measurements, public_meas, total) -> list:
    """The private measurements and the public ones (shares rescaled to the current estimated total)."""
    scale = float(total) if total else 1.0
    return measurements + [pgm.LinearMeasurement(scale * p, cl, stddev=s) for cl, p, s in public_meas]


@dataclass
class AimState:
    """What AIM's rounds update: the private measurements, the one-way (answer, sd) pairs and the total estimated
    from them, the public measurements ((clique, share of each cell, sd)), the structural zeros, the cliques measured
    publicly, and the estimation time and JAX cache clears (``timings`` only, never saved). All of it is released
    output or public."""

    measurements: list
    identity: list
    total: float | None
    public_meas: list
    zeros: Any
    measured_public: set = field(default_factory=set)
    est_seconds: float = 0.0
    cache_clears: int = 0


@dataclass
class RoundInputs:
    """What AIM's rounds read and never change: the data's engine, the accountant, the noise, progress, the
    candidate cliques and their weights, the public table and joint selection's model-size cap (None: none)."""

    engine: MarginalEngine
    accountant: Accountant
    noise: NoiseSource
    progress: Progress
    candidates: list
    weights: dict
    public: PublicData | None
    pub_cells: float | None


class AIM(WorkloadSynthesizer):
    """AIM with the reference defaults (2-way workload, T = 16 d, alpha = 0.9) but a model-size cap of
    ``MAX_MODEL_SIZE_MB`` (the reference's is 80 MB) and the huge super-cliques of every fit in float32."""

    name = "aim"

    def __init__(
        self,
        *,
        workload: Sequence[tuple[Sequence[str], float]] | None = None,
        workload_k: int = 2,
        max_cells: int | None = 10_000,
        max_model_size: float = MAX_MODEL_SIZE_MB,
        rounds: int | None = None,
        iters: int = 1000,
        round_iters: int | None = None,
        final_iters: int | None = None,
        alpha: float = 0.9,
        max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
        cache_limit_mb: float | None = JIT_CACHE_LIMIT_MB,
        optimistic_step: bool = False,
        public_max_cells: float | None = None,
        public_prior: bool = False,
        accelerated: bool = True,
        single: bool = True,
    ):
        """``iters`` is the reference max_iters; ``round_iters``/``final_iters`` override it per phase.
        ``public_max_cells``: the junction-tree cells a pick may bring the model to with joint selection (None:
        ``PUBLIC_MAX_CELLS``, 4 MB of cells); ``public_prior``: the public table enters as a prior, not by joint
        selection (module doc).
        ``cache_limit_mb``: drop JAX's compiled code after a round when the process exceeds this much
        memory (None: never; 0: after every round), see :func:`pgm.trim_jax_caches`. ``optimistic_step``: the
        fits start from the larger step of :func:`numpy_md.optimistic_lipschitz` (off: mbi's, as the reference).
        ``accelerated``: the final fit runs mirror descent with restarted momentum (:mod:`numpy_md`) for
        ``ACCELERATED_FINAL_SHARE`` of ``iters`` unless ``final_iters`` is given (off: the reference's mirror
        descent); the rounds' refits are the reference's either way. ``single``: every fit calibrates the junction
        tree's huge super-cliques in float32 (``pgm.estimate``; off: in double, as the reference)."""
        if not 0 < alpha < 1:
            raise InputError("alpha must be in (0, 1)")
        if max_model_size <= 0:
            raise InputError("max_model_size must be > 0")
        self.workload = workload
        self.workload_k = int(workload_k)
        self.max_cells = max_cells
        self.max_model_size = float(max_model_size)
        self.rounds = rounds
        self.iters = int(iters)
        # Rounds refit from a warm start: WARM_ROUND_ITERS are enough (measured on Adult, benchmarks/aim_adult.py);
        # the final fit gets the full ``iters`` like the reference, or its accelerated share.
        self.accelerated = bool(accelerated)
        self.round_iters = int(round_iters) if round_iters else min(self.iters, WARM_ROUND_ITERS)
        share = ACCELERATED_FINAL_SHARE if self.accelerated else 1.0
        self.final_iters = int(final_iters) if final_iters else max(1, round(self.iters * share))
        self.alpha = float(alpha)
        self.max_memory_mb = float(max_memory_mb)
        self.cache_limit_mb = cache_limit_mb
        self.optimistic_step = bool(optimistic_step)  # see numpy_md.optimistic_lipschitz
        self.public_max_cells = public_max_cells  # None: PUBLIC_MAX_CELLS (see ``fit``)
        self.public_prior = bool(public_prior)  # the public table as a prior instead of joint selection
        self.single = bool(single)

    def rounds_and_sigma(self, rho: float, d: int, max_rows: int = 1) -> tuple[int, float, float]:
        """(rounds T, initial sigma, initial rho_sel) for a fit given ``rho`` on ``d`` columns (public); sigma is
        that of a count under the privacy unit's k = ``max_rows`` (k times the record-level one)."""
        T = int(self.rounds or 16 * d)
        return T, max_rows * math.sqrt(T / (2 * self.alpha * rho)), (1 - self.alpha) * rho / T

    def _select(self, engine, accountant, noise, sched, model, small, weights, public, measured_public):
        """The round's exponential mechanism among the private candidates ``small`` and, with joint selection, the
        public ones (module docstring). Returns (clique, picked publicly, the data's marginals of ``small``, the
        model's marginals, the public shares)."""
        domain = engine.domain
        answers = engine.marginals(small)
        marg = ModelMarginals(model)
        est = {cl: marg(cl) for cl in small}
        model_err = np.array([np.abs(answers[cl].ravel() - est[cl]).sum() for cl in small])
        errors = np.array(
            [weights[cl] * (e - sched.expected_noise(domain.size(cl))) for cl, e in zip(small, model_err)]
        )
        # public candidates: not in the last round (it spends what remains, privately), and each public marginal
        # at most once (measuring it again would only double its weight)
        pub_cl = (
            []
            if public is None or sched.final or self.public_prior
            else [cl for cl in small if cl not in measured_public]
        )
        shares = {}
        if pub_cl:
            pub = public.engine.marginals(pub_cl)
            shares = {cl: pub[cl].ravel().astype(float) / public.rows for cl in pub_cl}
            err_of = dict(zip(small, model_err))
            pub_err = [err_of[cl] for cl in pub_cl]
            errors = np.concatenate(
                [errors, public_scores(pub_cl, weights, pub_err, answers, shares, float(model.total))]
            )
        delta_q = selection_sensitivity(small, weights, public=pub_cl)
        idx = exponential_select(
            accountant,
            noise,
            errors,
            sched.rho_sel,
            f"aim/select/{sched.t}",
            measured="clique (private or public)" if pub_cl else "clique",
            sensitivity=delta_q,
        )
        from_public = idx >= len(small)
        cl = pub_cl[idx - len(small)] if from_public else small[idx]
        return cl, from_public, answers, est, shares

    def fit(
        self,
        engine: MarginalEngine,
        accountant: Accountant,
        noise: NoiseSource,
        progress: Progress = no_progress,
        *,
        schema=None,
        public: PublicData | None = None,
    ) -> SynthModel:
        """``public``: a public table on the same domain (``privsample.synth.public``), measured at no cost."""
        domain = engine.domain
        with progress_phase(progress, "plan workload", accountant=accountant, message="candidate marginals"):
            self.check_size(domain, schema)
            zeros = StructuralZeros.for_fit(schema, domain)  # public: forbid list, noise-born nulls
            if public is not None:
                public.check_domain(domain)
            rho = accountant.remaining
            if rho <= 0:
                raise BudgetExceeded("no privacy budget left for AIM")
            t_start = time.perf_counter()
            workload = self._workload(domain, zeros)
            weights = candidate_weights(workload)
            candidates = list(weights)
        d = max(1, len(informative_attributes(domain, zeros)))  # T = 16 d over the columns worth measuring
        T, sigma, rho_sel = self.rounds_and_sigma(rho, d, accountant.unit.max_rows)
        measurements, identity = self._measure_one_way(engine, accountant, noise, progress, candidates, sigma)
        total = pgm.identity_total(identity) if identity else None
        measurements += discovery_measurements(schema, domain)  # discovery's released counts: no new spend
        pub_cells = None  # the model-size cap of joint selection (None: AIM's filter only)
        if public is not None:
            accountant.note_public(public.name, public.rows, public.fingerprint)
            if not self.public_prior:
                pub_cells = PUBLIC_MAX_CELLS if self.public_max_cells is None else self.public_max_cells
        st = AimState(measurements, identity, total, [], zeros)
        prior = prior_cliques(public, candidates) if public is not None and self.public_prior else []
        if prior:  # "pre-train": the public marginals enter before any round, weighed as a measurement at sigma
            pub = public.engine.marginals(prior)
            st.public_meas += [(cl, pub[cl].ravel().astype(float) / public.rows, sigma) for cl in prior]
        # the schedule (privsample.synth.schedule): public rounds' measurement budget counts as spent (``saved``)
        sched = AnnealedSchedule(rho, T, self.alpha, rho_sel, sigma=sigma, max_rows=accountant.unit.max_rows)
        model = estimate_phase(
            progress,
            accountant,
            "estimate (initial)",
            self.round_iters,
            domain,
            with_public(measurements, st.public_meas, total or 1.0),
            known_total=total or 1.0,
            zeros=zeros,
        )
        rounds = RoundInputs(engine, accountant, noise, progress, candidates, weights, public, pub_cells)
        model, log = self._rounds(rounds, sched, model, st)
        timings = {  # in memory only, never saved: timings and memory use depend on the data
            "seconds": time.perf_counter() - t_start,
            "estimate_seconds": st.est_seconds,
            "cache_clears": st.cache_clears,
        }
        return SynthModel(
            mechanism="aim",
            domain={a: int(n) for a, n in zip(domain.attributes, domain.shape)},
            model=model,
            ledger=accountant.to_dict(),
            schema=schema,
            params={
                "max_model_size": self.max_model_size,
                "T": T,
                "alpha": self.alpha,
                "round_iters": self.round_iters,
                "final_iters": self.final_iters,
                "accelerated": self.accelerated,
                "workload_k": self.workload_k,
                "max_cells": self.max_cells,
            },
            info=self._info(st, domain, model, log, len(workload), T, public, prior),
            timings=timings,
        )

    @staticmethod
    def _measure_one_way(engine, accountant, noise, progress, candidates, sigma: float):
        """Initialisation: the one-way candidates, identity queries at ``sigma``; with none (no column worth
        measuring), the number of records with everything left (``count_measurement``). Returns the measurements and
        the (answer, sigma) pairs the total is estimated from."""
        one_way = [cl for cl in candidates if len(cl) == 1]
        if not one_way:
            gaussian = lambda x, r, label, **kw: gaussian_measure(accountant, noise, x, r, label, **kw)  # noqa: E731
            rest = accountant.remaining
            count, answer = count_measurement(engine.domain, engine.marginals, gaussian, rest, "aim/count")
            return [count], [answer]
        progress("measure 1-way", step=0, steps=len(one_way), accountant=accountant)
        answers = engine.marginals(one_way)
        measurements: list[pgm.LinearMeasurement] = []
        identity: list[tuple[np.ndarray, float]] = []
        for i, cl in enumerate(one_way):
            rho = rho_for_sigma(sigma, accountant.unit.sensitivity(1.0))  # sigma's cost under the privacy unit
            y, s = gaussian_measure(accountant, noise, answers[cl], rho, f"aim/init/{cl[0]}", measured=cl[0])
            y = y.astype(float).ravel()
            measurements.append(pgm.LinearMeasurement(y, cl, stddev=s))
            identity.append((y, s))
            progress("measure 1-way", step=i + 1, steps=len(one_way), accountant=accountant, message=cl[0])
        return measurements, identity

    def _rounds(self, fi: RoundInputs, sched: AnnealedSchedule, model, st: AimState):
        """The annealed rounds (module docstring): select, measure (or take the public marginal), refit, anneal.
        Returns the final model and the rounds' log."""
        accountant, progress, domain, public = fi.accountant, fi.progress, fi.engine.domain, fi.public
        progress("rounds", step=0, steps=AtMost(sched.bound(accountant)), accountant=accountant, message=ROUNDS_NOTE)
        log = []
        while sched.next_round(accountant):  # the last round (``sched.final``) spends exactly what remains
            t, terminate, sigma = sched.t, sched.final, sched.sigma
            small = self._fitting(domain, model, fi.candidates, sched.size_limit(accountant, self.max_model_size))
            if fi.pub_cells is not None:  # joint selection: every candidate keeps the model within the public cap
                small = public_fitting(domain, model.cliques, small, fi.pub_cells) or small
            cl, from_public, answers, est, shares = self._select(
                fi.engine, accountant, fi.noise, sched, model, small, fi.weights, public, st.measured_public
            )
            s = self._measure(fi, sched, st, cl, from_public, answers, shares, sigma)
            z = est[cl]
            size, sig = released(domain.size(cl)), released(s, ".3g")  # the noisily selected marginal and its σ
            what = f"{','.join(cl)}{' (public)' if from_public else ''} ({size} cells, σ={sig})"
            log.append({"round": t, "clique": list(cl), "sigma": s, "cells": int(domain.size(cl))})
            if public is not None:
                log[-1]["source"] = "public" if from_public else "private"
            model = self._refit(fi, model, st, terminate, t, what)
            if terminate:
                break
            w = ModelMarginals(model)(cl)
            # AIM's rule compares the change with a private measurement's noise at sigma: private rounds only
            # (a noise-free public measurement says nothing about sigma; JAM does not anneal at all)
            if not from_public:
                sched.anneal(np.abs(w - z).sum(), domain.size(cl))  # sigma / 2, eps_r * 2
            progress("rounds", step=t, steps=AtMost(sched.bound(accountant)), accountant=accountant, message=what)
        return model, log

    @staticmethod
    def _measure(fi: RoundInputs, sched: AnnealedSchedule, st: AimState, cl, from_public, answers, shares, sigma):
        """The round's measurement of ``cl``: the Gaussian mechanism on its marginal (L2 sensitivity 1), or, picked
        publicly, the public shares at no spend, weighed as a private measurement of this round. Returns its sd."""
        if from_public:
            st.public_meas.append((cl, shares[cl], sigma))
            sched.skip_measurement()
            st.measured_public.add(cl)
            return sigma
        y, s = gaussian_measure(
            fi.accountant,
            fi.noise,
            answers[cl],
            sched.measure_rho(fi.accountant),
            f"aim/measure/{sched.t}",
            measured=",".join(cl),
        )
        st.measurements.append(pgm.LinearMeasurement(y.astype(float).ravel(), cl, stddev=s))
        if len(cl) == 1:
            st.identity.append((y.astype(float).ravel(), s))
            st.total = pgm.identity_total(st.identity)
        return s

    def _refit(self, fi: RoundInputs, model, st: AimState, final: bool, t: int, what: str):
        """Refit after round ``t`` from a warm start; after the last round the final fit is a phase of its own."""
        domain, total = fi.engine.domain, st.total
        t_est = time.perf_counter()
        if final:  # the rounds are over: the final fit is a phase of its own
            fi.progress("rounds", step=t, steps=t, accountant=fi.accountant, message=what)
            model = estimate_phase(
                fi.progress,
                fi.accountant,
                "estimate (final)",
                self.final_iters,
                domain,
                with_public(st.measurements, st.public_meas, total),
                known_total=total,
                warm_start=model,
                optimistic_step=self.optimistic_step,
                zeros=st.zeros,
                accelerated=self.accelerated,
                single=self.single,
            )
        else:
            model = pgm.estimate(
                domain,
                with_public(st.measurements, st.public_meas, total),
                known_total=total,
                iters=self.round_iters,
                warm_start=model,
                optimistic_step=self.optimistic_step,
                zeros=st.zeros,
                single=self.single,
            )
        st.est_seconds += time.perf_counter() - t_est
        st.cache_clears += pgm.trim_jax_caches(self.cache_limit_mb)
        return model

    def _info(self, st: AimState, domain, model, log: list, workload_size: int, T: int, public, prior: list) -> dict:
        """The fit's public diagnostics, saved with the model."""
        info = {
            "rounds": log,
            "estimated_total": st.total,
            "total_sd": pgm.identity_total_sd(st.identity) if st.identity else None,
            "model_size_mb": model_size_mb(domain, model.cliques),
            "workload_size": workload_size,
            "T": T,
        }
        if public is not None:
            info["public"] = public.describe()
            info["public_rounds"] = len(st.public_meas) - len(prior)
            if self.public_prior:
                info["public_prior"] = [list(cl) for cl in prior]
        return info
