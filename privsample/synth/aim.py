"""AIM (McKenna, Mullins, Sheldon & Miklau 2022): adaptive, workload-aware select-measure-generate.

The design follows the reference implementation (Private-PGM's ``mechanisms/aim.py``).

Privacy (rho-zCDP, add/remove one record), with rho = everything the accountant has left:
* Initialisation measures every one-way candidate with discrete Gaussian noise sigma
  (sensitivity 1 each): 1/(2 sigma^2) apiece.
* Each round spends eps_r^2/8 on an exponential-mechanism selection and 1/(2 sigma^2) on measuring
  the selected marginal (L2 sensitivity 1). The quality of a candidate is
  q(cl) = c(cl) * (||x_cl - mu_cl||_1 - sqrt(2/pi) sigma n_cl), where mu_cl comes from the current
  model (public) and c(cl) is a public weight: adding or removing a record changes x_cl in one cell
  by 1, so q changes by at most c(cl) <= Delta = max c over the candidates offered.
* sigma, eps_r, the candidate set (model-size filter, which grows with the budget spent) and the
  annealing decision depend only on earlier outputs. The last round spends exactly what remains;
  the accountant refuses any overrun, so the total is <= rho on every run, and adaptive composition
  of zCDP under a filter gives rho-zCDP overall. Estimation and sampling are post-processing.
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np

from privsample.errors import InputError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.mechanisms import exponential_select, gaussian_measure, rho_for_sigma
from privsample.privacy.noise import NoiseSource
from privsample.synth import pgm
from privsample.synth.base import (
    DEFAULT_MAX_MEMORY_MB,
    JIT_CACHE_LIMIT_MB,
    ROUNDS_NOTE,
    AtMost,
    Progress,
    WorkloadSynthesizer,
    discovery_measurements,
    estimate_phase,
    no_progress,
    progress_phase,
    rounds_bound,
)
from privsample.synth.model import SynthModel
from privsample.synth.selection import ModelMarginals, candidate_weights, model_size_mb


WARM_ROUND_ITERS = 250


class AIM(WorkloadSynthesizer):
    """AIM with the reference defaults (2-way workload, max_model_size 80 MB, T = 16 d, alpha = 0.9)."""

    name = "aim"

    def __init__(
        self,
        *,
        workload: Sequence[tuple[Sequence[str], float]] | None = None,
        workload_k: int = 2,
        max_cells: int | None = 10_000,
        max_model_size: float = 80.0,
        rounds: int | None = None,
        iters: int = 1000,
        round_iters: int | None = None,
        final_iters: int | None = None,
        alpha: float = 0.9,
        max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
        cache_limit_mb: float | None = JIT_CACHE_LIMIT_MB,
        optimistic_step: bool = False,
    ):
        """``iters`` is the reference max_iters; ``round_iters``/``final_iters`` override it per phase.
        ``cache_limit_mb``: drop JAX's compiled code after a round when the process exceeds this much
        memory (None: never; 0: after every round), see :func:`pgm.trim_jax_caches`. ``optimistic_step``: the
        fits start from the larger step of :func:`numpy_md.optimistic_lipschitz` (off: mbi's, as the reference)."""
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
        # the final fit gets the full ``iters`` like the reference.
        self.round_iters = int(round_iters) if round_iters else min(self.iters, WARM_ROUND_ITERS)
        self.final_iters = int(final_iters) if final_iters else self.iters
        self.alpha = float(alpha)
        self.max_memory_mb = float(max_memory_mb)
        self.cache_limit_mb = cache_limit_mb
        self.optimistic_step = bool(optimistic_step)  # see numpy_md.optimistic_lipschitz

    def fit(
        self,
        engine: MarginalEngine,
        accountant: Accountant,
        noise: NoiseSource,
        progress: Progress = no_progress,
        *,
        schema=None,
    ) -> SynthModel:
        domain = engine.domain
        attrs = list(domain.attributes)
        d = len(attrs)
        with progress_phase(progress, "plan workload", accountant=accountant, message="candidate marginals"):
            self.check_size(domain)
            rho = accountant.remaining
            if rho <= 0:
                raise BudgetExceeded("no privacy budget left for AIM")
            t_start = time.perf_counter()
            workload = self._workload(domain)
            weights = candidate_weights(workload)
            candidates = list(weights)
        T = int(self.rounds or 16 * d)
        sigma = math.sqrt(T / (2 * self.alpha * rho))
        rho_sel = (1 - self.alpha) * rho / T

        # Initialisation: one-way candidates, identity queries.
        one_way = [cl for cl in candidates if len(cl) == 1]
        progress("measure 1-way", step=0, steps=len(one_way), accountant=accountant)
        answers = engine.marginals(one_way)
        measurements: list[pgm.LinearMeasurement] = []
        identity: list[tuple[np.ndarray, float]] = []
        for i, cl in enumerate(one_way):
            y, s = gaussian_measure(
                accountant, noise, answers[cl], rho_for_sigma(sigma), f"aim/init/{cl[0]}", measured=cl[0]
            )
            y = y.astype(float).ravel()
            measurements.append(pgm.LinearMeasurement(y, cl, stddev=s))
            identity.append((y, s))
            progress("measure 1-way", step=i + 1, steps=len(one_way), accountant=accountant, message=cl[0])
        total = pgm.identity_total(identity) if identity else None
        measurements += discovery_measurements(schema, domain)  # discovery's released counts: no new spend
        model = estimate_phase(
            progress, accountant, "estimate (initial)", self.round_iters, domain, measurements, known_total=total or 1.0
        )
        bound = rounds_bound(0, accountant.remaining, rho_for_sigma(sigma) + rho_sel)
        progress("rounds", step=0, steps=AtMost(bound), accountant=accountant, message=ROUNDS_NOTE)
        log = []
        est_seconds = 0.0
        cache_clears = 0
        t = 0
        terminate = False
        while not terminate:
            t += 1
            remaining = accountant.remaining
            cost = rho_for_sigma(sigma) + rho_sel
            if remaining < 2 * cost:
                # last round: spend exactly what remains
                rho_sel = (1 - self.alpha) * remaining
                sigma = math.sqrt(1 / (2 * self.alpha * remaining))
                terminate = True
            spent_after = accountant.spent + rho_for_sigma(sigma) + rho_sel
            size_limit = self.max_model_size * min(1.0, spent_after / accountant.rho_total)
            small = self._fitting(domain, model, candidates, size_limit)
            answers = engine.marginals(small)
            marg = ModelMarginals(model)
            est = {cl: marg(cl) for cl in small}
            errors = np.array(
                [
                    weights[cl]
                    * (np.abs(answers[cl].ravel() - est[cl]).sum() - math.sqrt(2 / math.pi) * sigma * domain.size(cl))
                    for cl in small
                ]
            )
            delta_q = max(weights[cl] for cl in small)
            if delta_q <= 0:
                delta_q = 1.0
            idx = exponential_select(
                accountant, noise, errors, rho_sel, f"aim/select/{t}", measured="clique", sensitivity=delta_q
            )
            cl = small[idx]
            rho_m = accountant.remaining if terminate else rho_for_sigma(sigma)
            y, s = gaussian_measure(accountant, noise, answers[cl], rho_m, f"aim/measure/{t}", measured=",".join(cl))
            measurements.append(pgm.LinearMeasurement(y.astype(float).ravel(), cl, stddev=s))
            if len(cl) == 1:
                identity.append((y.astype(float).ravel(), s))
                total = pgm.identity_total(identity)
            z = est[cl]
            what = f"{','.join(cl)} ({domain.size(cl)} cells, σ={s:.3g})"
            log.append({"round": t, "clique": list(cl), "sigma": s, "cells": int(domain.size(cl))})
            t_est = time.perf_counter()
            if terminate:  # the rounds are over: the final fit is a phase of its own
                progress("rounds", step=t, steps=t, accountant=accountant, message=what)
                model = estimate_phase(
                    progress,
                    accountant,
                    "estimate (final)",
                    self.final_iters,
                    domain,
                    measurements,
                    known_total=total,
                    warm_start=model,
                    optimistic_step=self.optimistic_step,
                )
            else:
                model = pgm.estimate(
                    domain,
                    measurements,
                    known_total=total,
                    iters=self.round_iters,
                    warm_start=model,
                    optimistic_step=self.optimistic_step,
                )
            est_seconds += time.perf_counter() - t_est
            cache_clears += pgm.trim_jax_caches(self.cache_limit_mb)
            if terminate:
                break
            w = ModelMarginals(model)(cl)
            if np.abs(w - z).sum() <= math.sqrt(2 / math.pi) * sigma * domain.size(cl):
                sigma /= 2  # anneal
                rho_sel *= 4  # eps_r *= 2
            bound = rounds_bound(t, accountant.remaining, rho_for_sigma(sigma) + rho_sel)
            progress("rounds", step=t, steps=AtMost(bound), accountant=accountant, message=what)
            if t > 100 * T:  # safety net; never reached with the annealing schedule above
                progress("rounds", step=t, steps=t, accountant=accountant, message=what)
                break
        timings = {"seconds": time.perf_counter() - t_start, "estimate_seconds": est_seconds}  # not saved
        info = {
            "rounds": log,
            "estimated_total": total,
            "cache_clears": cache_clears,
            "total_sd": pgm.identity_total_sd(identity) if identity else None,
            "model_size_mb": model_size_mb(domain, model.cliques),
            "workload_size": len(workload),
            "T": T,
        }
        return SynthModel(
            mechanism="aim",
            domain={a: int(n) for a, n in zip(attrs, domain.shape)},
            model=model,
            ledger=accountant.to_dict(),
            schema=schema,
            params={
                "max_model_size": self.max_model_size,
                "T": T,
                "alpha": self.alpha,
                "round_iters": self.round_iters,
                "final_iters": self.final_iters,
                "workload_k": self.workload_k,
                "max_cells": self.max_cells,
            },
            info=info,
            timings=timings,
        )
