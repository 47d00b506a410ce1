"""The PPSyn synthesizer: its options, the initialisation (Alg. 1) and the fit, which runs one schedule's rounds
(:mod:`privsample.synth.ppsyn.annealed`, :mod:`.note`, :mod:`.paper`).

Privacy: :mod:`privsample.synth.ppsyn` (the guarantee, the neighbouring relation and each step's sensitivity).
"""

from __future__ import annotations

import time
from typing import Sequence

from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.noise import NoiseSource
from privsample.synth import pgm
from privsample.progress import Progress, no_progress
from privsample.synth.base import (
    DEFAULT_MAX_MEMORY_MB,
    JIT_CACHE_LIMIT_MB,
    ROUNDS_NOTE,
    count_measurement,
    discovery_measurements,
    estimate_phase,
)
from privsample.synth.model import SynthModel
from privsample.synth.ppsyn.annealed import AnnealedRounds
from privsample.synth.ppsyn.core import (
    DP_MAX_CANDIDATES,
    DP_MAX_MODEL_SIZE,
    PAPER_MAX_MODEL_SIZE,
    check_options,
    refit_steps,
)
from privsample.synth.ppsyn.note import NoteRounds
from privsample.synth.ppsyn.paper import PaperRounds, warn_unsafe
from privsample.synth.ppsyn_steps import OPTION_REFRESH, PAPER_NOTE, WIDE_COLUMNS, FitState, Spender, one_way_budgets
from privsample.synth.public import PublicData
from privsample.synth.schedule import max_rounds
from privsample.synth.selection import candidate_weights, informative_attributes, model_size_mb
from privsample.synth.zeros import StructuralZeros


class PPSyn(AnnealedRounds, NoteRounds, PaperRounds):
    """PPSyn: PPSyn-DP by default (rho-zCDP); ``mode="paper"`` replicates the published, non-private algorithm.

    Defaults: 3-way workload (cliques ≤ max_cells cells), Alg. 4 capped at max_parts parts, at most 10T
    rounds. ``schedule="annealed"`` (default): T = 16 min(d, 25), one-way share 0.1 of rho up to 25 columns
    and 0.1 d / 25 (at most 0.2) beyond (:func:`one_way_share`; on wider tables the one-way marginals carry
    most pairs of columns and fewer, larger rounds measure more cliques: benchmarks/results/ppsyn_wide.md),
    alpha 0.9, size filter growing with the budget spent up to 0.5 MB, a converged one-way model (1000
    steps), optimistic refit steps, 50 steps per round and 100 for the last fit;
    ``schedule="note"`` and paper mode: one-way share 0.1, eta 0.7, T = d, static 80 MB size filter, mbi's
    refit steps.

    ``mode="paper"`` runs the published Algorithms 1–4 (the paper states no sensitivity for the selection; the
    EM runs with Δ = 1). It is NOT differentially private:
    * F1: the selection score C_w/rho_w = π C (ηC − RE)² / |P|² grows like C³ (C ≤ 2N is unbounded), so no
      finite sensitivity exists;
    * F2: the partition is a deterministic function of the true counts and is released (uniform
      reconstruction makes it readable from the output), so a neighbour that flips one merge or split gives
      disjoint outputs: epsilon = ∞;
    * F3: the noise scale sigma_m is computed from the data (C and RE on D);
    * F4: "while rho_used < rho" with an uncapped rho_m can overspend (capped here, see below).
    Paper mode warns, sets ``params["unsafe"] = True`` (so ``SynthModel.private`` is False) and labels every
    ledger entry "UNSAFE-paper/..." with ``private=False`` and a NOT PRIVATE note. Deviations from the paper,
    kept for bookkeeping: rho_m is capped by what remains, and the round after which less than rho_exp would
    be left (or round 10T) spends the whole remainder, so the budget is used exactly; and a rule value below
    1e-9 rho is raised to it (a value of 0 would make sigma infinite).
    """

    name = "ppsyn"

    def __init__(
        self,
        *,
        mode: str = "dp",
        eta: float = 0.7,
        workload: Sequence[tuple[Sequence[str], float]] | None = None,
        workload_k: int = 3,
        max_cells: int | None = 10_000,
        max_model_size: float | None = None,
        rounds: int | None = None,
        iters: int = 1000,
        round_iters: int | None = None,
        final_iters: int | None = None,
        max_parts: int = 4096,
        budget_floor: bool = False,
        schedule: str = "annealed",
        alpha: float = 0.9,
        max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
        cache_limit_mb: float | None = JIT_CACHE_LIMIT_MB,
        option_parts: int = 64,
        quality: str = "group",
        optimistic_step: bool | None = None,
        max_candidates: int | None = DP_MAX_CANDIDATES,
    ):
        """``budget_floor=True`` departs from the paper's rule: see :func:`budget_rule` (still rho-zCDP: a public
        rule).

        ``max_model_size`` (MB) and ``optimistic_step`` default to 0.5 MB and on for PPSyn-DP's annealed
        schedule, 80 MB and off (mbi's step) for paper mode and the note schedule
        (benchmarks/results/ppsyn_dp_variants.md has the measurements).

        ``max_candidates`` (annealed schedule): a round scores at most this many candidates, drawn
        uniformly, independently of the data, among those that fit the size limit (None: all of them; a
        workload with at most this many candidates is scored whole, so nothing is drawn)."""
        warm = mode == "dp" and schedule == "annealed"
        if max_model_size is None:
            max_model_size = DP_MAX_MODEL_SIZE if warm else PAPER_MAX_MODEL_SIZE
        check_options(
            mode=mode,
            schedule=schedule,
            quality=quality,
            alpha=alpha,
            eta=eta,
            max_model_size=max_model_size,
            max_parts=max_parts,
            rounds=rounds,
            workload_k=workload_k,
            max_candidates=max_candidates,
        )
        self.mode = mode
        self.eta = float(eta)
        self.workload = workload
        self.workload_k = int(workload_k)
        self.max_cells = max_cells
        self.max_model_size = float(max_model_size)
        self.max_candidates = None if max_candidates is None else int(max_candidates)
        self.rounds = rounds
        self.iters = int(iters)
        self.round_iters, self.final_iters, self.init_iters = refit_steps(self.iters, round_iters, final_iters, warm)
        self.max_parts = int(max_parts)
        self.budget_floor = bool(budget_floor)
        self.schedule = schedule
        self.cache_limit_mb = cache_limit_mb
        self.option_parts = int(option_parts)
        self.quality = quality
        self.optimistic_step = warm if optimistic_step is None else bool(optimistic_step)
        self.alpha = float(alpha)
        self.max_memory_mb = float(max_memory_mb)
        self.candidate_refresh = 1.0
        self.option_refresh = OPTION_REFRESH  # experiments may override these two (public choices)
        self.round_factor = 16  # annealed schedule: T = round_factor * min(d, round_width_cap)
        self.round_width_cap: int | None = WIDE_COLUMNS  # None: T = round_factor * d
        self.one_way_share: float | None = None  # the initialisation's share of rho (None: one_way_share(d))
        self.data_step: str | None = None  # which of DATA_STEPS is reading the data right now (None: none)

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
        """``public``: a public table on the same domain (``privsample.synth.public``; annealed schedule only),
        measured at no cost and used for public partition plans (:mod:`privsample.synth.ppsyn`, "Public data")."""
        domain = engine.domain
        progress("plan workload", step=0, steps=1, accountant=accountant, message="candidate marginals")
        self.check_size(domain, schema)
        if public is not None:
            self.check_public()
            public.check_domain(domain)
        self._public = public
        self._zeros = StructuralZeros.for_fit(schema, domain)  # public: forbid list, noise-born nulls
        rho = accountant.remaining  # this fit's budget: what is left after, e.g., private schema discovery
        spent_before = accountant.spent
        if rho <= 0:
            raise BudgetExceeded("no privacy budget left for PPSyn")
        unsafe = self.mode == "paper"
        if unsafe:
            warn_unsafe()
        t_start = time.perf_counter()
        self._estimate_seconds = 0.0
        workload = self._workload(domain, self._zeros)
        self._weights = candidate_weights(workload)
        candidates = list(self._weights)
        progress("plan workload", step=1, steps=1, accountant=accountant, message="candidate marginals")
        T, share = self.rounds_and_share(max(1, len(informative_attributes(domain, self._zeros))))  # d: those measured
        spender = Spender(accountant, noise, unsafe)
        measurements, identity = self._measure_one_way(engine, spender, progress, candidates, share * rho)
        total = pgm.identity_total(identity) if identity else 1.0
        measurements += discovery_measurements(schema, domain)  # discovery's released counts: no new spend
        if public is not None:
            accountant.note_public(public.name, public.rows, public.fingerprint)
        model = estimate_phase(
            progress,
            accountant,
            "estimate (initial)",
            self.init_iters,
            domain,
            measurements,
            known_total=total,
            zeros=self._zeros,
        )
        state = FitState(
            engine, accountant, spender, progress, domain, candidates, measurements, total, T, rho, spent_before
        )
        annealed = not unsafe and self.schedule == "annealed"
        runner = self._rounds_paper if unsafe else (self._rounds_annealed if annealed else self._rounds_dp)
        model, log = runner(model, state)
        if not (log and log[-1].get("final")):  # stopped before a final round (nothing left to measure)
            progress("rounds", step=len(log), steps=len(log), accountant=accountant, message=ROUNDS_NOTE)
        timings = {
            "seconds": time.perf_counter() - t_start,
            "estimate_seconds": self._estimate_seconds,
            "phase_seconds": getattr(self, "_phase_seconds", {}),
        }  # in memory only, never saved
        return SynthModel(
            mechanism="ppsyn-paper" if unsafe else "ppsyn",
            domain={a: int(n) for a, n in zip(domain.attributes, domain.shape)},
            model=model,
            ledger=accountant.to_dict(),
            schema=schema,
            params=self._params(T, share),
            info=self._info(state, model, log, len(workload), identity, public),
            timings=timings,
        )

    def _measure_one_way(self, engine, spender: Spender, progress, candidates, rho_init: float):
        """Initialisation (Alg. 1): the one-way candidates, identity queries, PrivSyn's split of ``rho_init``.
        Returns the measurements and the (answer, sigma) pairs the total is estimated from."""
        accountant, domain = spender.accountant, engine.domain
        one_way = [cl for cl in candidates if len(cl) == 1]
        budgets = one_way_budgets([domain.size(cl) for cl in one_way], rho_init)
        progress("measure 1-way", step=0, steps=len(one_way), accountant=accountant)
        if not one_way:  # no column has more than one value: the number of records, with everything left
            read = lambda cliques: self._read(engine, cliques, "init")  # noqa: E731
            count, answer = count_measurement(domain, read, spender.gaussian, accountant.remaining, "count")
            return [count], [answer]
        answers = self._read(engine, one_way, "init")
        measurements: list[pgm.LinearMeasurement] = []
        identity = []
        for i, (cl, r) in enumerate(zip(one_way, budgets)):
            y, s = spender.gaussian(answers[cl], float(r), f"init/{cl[0]}", measured=cl[0])
            y = y.astype(float).ravel()
            measurements.append(pgm.LinearMeasurement(y, cl, stddev=s))
            identity.append((y, s))
            progress("measure 1-way", step=i + 1, steps=len(one_way), accountant=accountant, message=cl[0])
        return measurements, identity

    @staticmethod
    def _info(fs: FitState, model, log: list, workload_size: int, identity: list, public) -> dict:
        """The fit's public diagnostics, saved with the model: the rounds, the estimated total and sizes."""
        total, domain, candidates, T = fs.total, fs.domain, fs.candidates, fs.T
        info = {
            "rounds": log,
            "estimated_total": total,
            "total_sd": pgm.identity_total_sd(identity) if identity else None,
            "model_size_mb": model_size_mb(domain, model.cliques),
            "workload_size": workload_size,
            "candidates": len(candidates),
            "T": T,
        }
        if public is not None:
            info["public"] = public.describe()
            info["public_rounds"] = sum(r.get("source") == "public" for r in log)
        return info

    def _params(self, T: int, share: float) -> dict:
        """The fit's public parameters, saved with the model."""
        unsafe = self.mode == "paper"
        params = {
            "mode": self.mode,
            "schedule": "paper" if unsafe else self.schedule,
            "alpha": self.alpha,
            "eta": self.eta,
            "T": T,
            "one_way_share": share,
            "max_rounds": max_rounds(T),
            "max_model_size": self.max_model_size,
            "max_candidates": self.max_candidates,
            "max_parts": self.max_parts,
            "option_parts": self.option_parts,
            "budget_floor": self.budget_floor,
            "round_iters": self.round_iters,
            "final_iters": self.final_iters,
            "workload_k": self.workload_k,
            "max_cells": self.max_cells,
        }
        if unsafe:
            params["unsafe"] = True
            params["warning"] = PAPER_NOTE
        return params


__all__ = ["PPSyn"]
