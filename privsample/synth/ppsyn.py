"""PPSyn on Private-PGM: select-measure-generate where a round may measure a marginal on a partition of its cells
(Zhang, Deng and Yin 2023, "Partition-based differentially private synthetic data generation", Section 4).

``mode="dp"`` (default), PPSyn-DP. Guarantee: rho-zCDP under add/remove one record, with rho = everything the
accountant has left. Proof sketch (it covers the steps both schedules below share):
* Initialisation (Alg. 1) measures the one-way marginal of every attribute of the workload with discrete
  Gaussian noise; attribute i gets rho_i = s rho c_i^(2/3) / sum_j c_j^(2/3) (c = cells, PrivSyn's split; s a
  function of the width d only, :func:`one_way_share`). Each has L2 sensitivity 1: this costs s rho.
* In each round, given the public state H (all earlier outputs, hence the fitted model p̂), the candidates
  (a model-size filter), the model marginals mu_w, their partition paths (Alg. 3/4 run on mu_w, *never* on the
  data), the plans and the round's budgets are functions of H only (:func:`public_plan`, :func:`public_options`,
  :func:`round_budgets`, :func:`budget_rule` receive no data). Only the steps in DATA_STEPS read the data.
* Selection: the exponential mechanism on a quality of sensitivity Δ (below), rho_sel-zCDP given the public
  candidates; the annealed schedule scores at most ``max_candidates``, drawn independently of the data
  (:func:`candidate_subset`).
* Measurement: Q·x_w, the integer sums of x_w over the groups of the chosen partition, with discrete Gaussian
  noise sigma_m = (2 rho_m)^(-1/2). Every record is in one cell, hence in one group: L2 sensitivity 1,
  rho_m-zCDP given its public parameters.
* Per-round costs are chosen adaptively from H and capped so that the total never exceeds rho (the accountant
  also refuses any overrun); the last round spends exactly what remains. Adaptive composition of zCDP under a
  privacy filter (Feldman & Zrnic 2021; Whitehouse et al. 2023) gives rho-zCDP overall. Estimation
  (Private-PGM) and sampling are post-processing.
* Structural zeros (the schema's public ``forbid``, :mod:`privsample.synth.zeros`) cost nothing: their
  cliques are in every model (and in the size filter), their cells fixed at zero in every fit.

``schedule="annealed"`` (default): AIM's budget schedule. After initialisation, (1 − s) rho is cut into T = 16
min(d, 25) rounds of rho_r (AIM's T = 16 d up to 25 columns; a function of d only), alpha = 0.9 of which measures
(rho_m) and 0.1 selects (rho_sel). The exponential mechanism picks a (clique w, partition P) pair among public
options (:func:`public_options`: P_1, P_3, P_7, ... of w's path, up to ``option_parts`` parts, and the identity,
AIM's measurement) by q(w, P) = c_w (G_w(P) − sqrt(2/pi) sigma_m |P|) with G_w(P) = ||Q_P (x_w − mu_w)||₁
(``quality="group"``): one record moves one cell of x_w, hence one group sum, by 1, so Δ = max c_w, AIM's
sensitivity (tested: attained). ``quality="gain"`` scores C_w − misfit_w(P) (:func:`misfit`), and one record moves
misfit by at most 2, so Δ = 3 max c_w (SELECT_SENSITIVITY; tested). After the refit, if the model marginal moved
less than sqrt(2/pi) sigma_m |P|, sigma_m halves and the selection epsilon doubles (AIM's annealing); when less than
two rounds' budget remains, the last round spends exactly what is left. No contribution release; eta unused. The
defaults (size limit, refit steps, path refresh, quality, T, s) are public choices (measured in
benchmarks/results/ppsyn_dp_variants.md and ppsyn_wide.md).

Public data (``public``, annealed schedule only; the note schedule and paper mode refuse it). JAM's options
(Fuentes, Mullins, McKenna, Miklau & Sheldon 2024, as in :mod:`privsample.synth.aim`): every round but the last
also offers (w, public) for each candidate not yet measured publicly, scored c_w (||x_w − mu_w||₁ − ||x_w − N̂ p_w||₁)
(p_w the public shares, N̂ the model's total): sensitivity 2 c_w, and the EM's Δ is the max over all options offered.
A public pick adds N̂ p_w as a measurement with the round's sigma_m and spends nothing beyond its selection; the
schedule counts the saved rho_m as spent, the last round (private options only) spends everything left, and a
public round never anneals. The public partition plan: the paper cuts the TRUE marginal x_w so that each group
holds cells of similar count (Alg. 3/4 minimise the reconstruction error on x_w); the model path stands in for
x_w with mu_w, the public marginal is a second stand-in, free and independent of what the model already knows. So
the partitions P_1, P_3, ... of the path on the public counts (:func:`public_path_options`, computed once per
clique) are offered as extra private measurements beside the model path's: P is public, so q(w, P) keeps the
sensitivity c_w (3 c_w for "gain"). Without a public table the fit is unchanged (same ledger and seeded output).

``schedule="note"``: the paper's rounds made private (T = d, eta = 0.7). Each round: 1. budgets
(:func:`round_budgets`); 2. candidates (static 80 MB size filter); 3. the public plan (:func:`public_plan`);
4. selection on q_w = C_w(D) − E_w, C_w = ||x_w − mu_w||₁ (1-Lipschitz in the data) and E_w fixed given H: Δ = 1;
5. the contribution C̃ = max(0, C_m(D) + noise), a Gaussian mechanism, rho_c-zCDP (:func:`release_contribution`);
6. the partition P_m and rho_m from (H, m, C̃) by the paper's eta rule (:func:`budget_rule`, post-processing);
7. the measurement at rho_m; 8. the refit.

``mode="paper"``: Algorithms 1–4 as published, for replication only. It is NOT differentially private
(:class:`PPSyn` says why); it warns and labels its ledger entries, model and outputs NOT PRIVATE.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from contextlib import contextmanager
from typing import Sequence

import numpy as np

from privsample.privacy.released import released
from privsample.errors import InputError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant, BudgetExceeded
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
)
from privsample.synth.model import SynthModel
from privsample.synth.partition import PartitionPath, PartitionQuery, paper_stop, partition_path, partition_sums
from privsample.synth.ppsyn_steps import (
    OPTION_REFRESH,
    PAPER_NOTE,
    WIDE_COLUMNS,
    QUALITY_SENSITIVITY,
    AnnealedCaches,
    FitState,
    GroupErrors,
    Spender,
    budget_rule,
    candidate_subset,
    one_way_budgets,
    one_way_share,
    random_order,
    public_options,
    public_path_options,
    public_plan,
    release_contribution,
    round_budgets,
    selection_gain,
)
from privsample.synth.public import PublicData, public_scores
from privsample.synth.schedule import AnnealedSchedule, max_rounds
from privsample.synth.selection import ModelMarginals, candidate_weights, model_size_mb
from privsample.synth.zeros import StructuralZeros

Clique = tuple[str, ...]

DATA_STEPS = ("init", "select", "contribution", "measure")
SCHEDULES = ("annealed", "note")
ANNEALED_ROUND_ITERS = 50  # with the optimistic step (measured: benchmarks/results/ppsyn_dp_variants.md)
ANNEALED_FINAL_ITERS = 100  # the last refit: 1000 steps over-fit (benchmarks/results/ppsyn_dp_variants.md)
ANNEALED_INIT_ITERS = 1000  # the one-way model the first round selects from (same file)
DP_MAX_MODEL_SIZE = 0.5  # MB: the annealed schedule's default size limit (same file)
DP_MAX_CANDIDATES = 1000  # annealed schedule: candidates scored a round (benchmarks/results/ppsyn_wide.md)
PAPER_MAX_MODEL_SIZE = 80.0  # MB: the static size filter of paper mode and the note schedule


class UnsafeMechanismWarning(UserWarning):
    """A mechanism that is not differentially private was run."""


# -- the synthesizer --------------------------------------------------------------------------------


class PPSyn(WorkloadSynthesizer):
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
        if mode not in ("dp", "paper"):
            raise InputError(f"PPSyn mode must be 'dp' or 'paper', got {mode!r}")
        if schedule not in SCHEDULES:
            raise InputError(f"PPSyn schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        if quality not in QUALITY_SENSITIVITY:
            raise InputError(f"PPSyn quality must be one of {', '.join(QUALITY_SENSITIVITY)}, got {quality!r}")
        if not 0 < alpha < 1:
            raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
        if not (isinstance(eta, (int, float)) and 0 < eta <= 1):
            raise InputError(f"eta must be in (0, 1], got {eta!r}")
        warm = mode == "dp" and schedule == "annealed"
        if max_model_size is None:
            max_model_size = DP_MAX_MODEL_SIZE if warm else PAPER_MAX_MODEL_SIZE
        if max_model_size <= 0:
            raise InputError("max_model_size must be > 0")
        if int(max_parts) < 1:
            raise InputError("max_parts must be >= 1")
        if rounds is not None and int(rounds) < 1:
            raise InputError("rounds must be >= 1")
        if int(workload_k) < 1:
            raise InputError("workload_k must be >= 1")
        if max_candidates is not None and int(max_candidates) < 1:
            raise InputError("max_candidates must be >= 1 (or None: every candidate)")
        self.mode = mode
        self.eta = float(eta)
        self.workload = workload
        self.workload_k = int(workload_k)
        self.max_cells = max_cells
        self.max_model_size = float(max_model_size)
        self.max_candidates = None if max_candidates is None else int(max_candidates)
        self.rounds = rounds
        self.iters = int(iters)
        # the annealed schedule refits every round from a warm start with the optimistic step, and fits the
        # last model with 100 steps instead of ``iters`` (benchmarks/results/ppsyn_dp_variants.md)
        self.round_iters = (
            int(round_iters) if round_iters else (min(self.iters, ANNEALED_ROUND_ITERS) if warm else self.iters)
        )
        self.final_iters = (
            int(final_iters) if final_iters else (min(self.iters, ANNEALED_FINAL_ITERS) if warm else self.iters)
        )
        self.init_iters = max(self.round_iters, ANNEALED_INIT_ITERS) if warm else self.round_iters
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

    # per candidate cell in a round: the data's and the model's marginals (8 + 8), and the cached options
    # (:func:`public_options`: the model marginal, 8, and every option's labels in small integers)
    cell_bytes = 32

    def round_cells(self, domain, count, cells, largest):
        """The annealed schedule scores at most ``max_candidates`` candidates a round."""
        cap = self.max_candidates if (self.mode == "dp" and self.schedule == "annealed") else None
        return cells if cap is None or count <= cap else min(cells, cap * domain.size(largest))

    def rounds_and_share(self, d: int) -> tuple[int, float]:
        """(rounds T, the initialisation's share of rho) on ``d`` columns: public (class docstring)."""
        annealed = self.mode != "paper" and self.schedule == "annealed"
        width = d if self.round_width_cap is None else min(d, int(self.round_width_cap))  # public: d
        T = int(self.rounds or (self.round_factor * width if annealed else d))
        share = one_way_share(d, annealed) if self.one_way_share is None else float(self.one_way_share)
        return T, share

    def round_split(self, rho_left: float, T: int) -> tuple[float, float]:
        """The annealed schedule's first rounds: (rho_m, rho_sel) when ``rho_left`` is cut into ``T`` rounds."""
        rho_round = rho_left / T
        return self.alpha * rho_round, (1 - self.alpha) * rho_round

    @contextmanager
    def _reading(self, step: str):
        """Marks the only places that read the data (initialisation, selection, contribution, measurement)."""
        assert step in DATA_STEPS
        self.data_step = step
        try:
            yield
        finally:
            self.data_step = None

    def _read(self, engine: MarginalEngine, cliques: Sequence[Clique], step: str) -> dict[Clique, np.ndarray]:
        with self._reading(step):
            return engine.marginals(list(cliques))

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
        measured at no cost and used for public partition plans (module docstring, "Public data")."""
        domain = engine.domain
        attrs = list(domain.attributes)
        d = len(attrs)
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
            warnings.warn(
                "PPSyn mode='paper' runs the algorithm AS PUBLISHED, which is NOT differentially private "
                "(data-dependent partitions and noise scales, unbounded selection sensitivity; see "
                "the docstring of privsample.synth.ppsyn.PPSyn). Its output must not be released as private.",
                UnsafeMechanismWarning,
                stacklevel=2,
            )
        t_start = time.perf_counter()
        self._estimate_seconds = 0.0
        workload = self._workload(domain)
        self._weights = candidate_weights(workload)
        candidates = list(self._weights)
        progress("plan workload", step=1, steps=1, accountant=accountant, message="candidate marginals")
        annealed = not unsafe and self.schedule == "annealed"
        T, share = self.rounds_and_share(d)
        spender = Spender(accountant, noise, unsafe)

        # Initialisation (Alg. 1): one-way candidates, identity queries, PrivSyn's split of share * rho.
        one_way = [cl for cl in candidates if len(cl) == 1]
        budgets = one_way_budgets([domain.size(cl) for cl in one_way], share * rho)
        progress("measure 1-way", step=0, steps=len(one_way), accountant=accountant)
        answers = self._read(engine, one_way, "init")
        measurements: list[pgm.LinearMeasurement] = []
        identity = []
        for i, (cl, r) in enumerate(zip(one_way, budgets)):
            y, s = spender.gaussian(answers[cl], float(r), f"init/{cl[0]}", measured=cl[0])
            y = y.astype(float).ravel()
            measurements.append(pgm.LinearMeasurement(y, cl, stddev=s))
            identity.append((y, s))
            progress("measure 1-way", step=i + 1, steps=len(one_way), accountant=accountant, message=cl[0])
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
        runner = self._rounds_paper if unsafe else (self._rounds_annealed if annealed else self._rounds_dp)
        model, log = runner(model, state)
        if not (log and log[-1].get("final")):  # stopped before a final round (nothing left to measure)
            progress("rounds", step=len(log), steps=len(log), accountant=accountant, message=ROUNDS_NOTE)

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
        timings = {
            "seconds": time.perf_counter() - t_start,
            "estimate_seconds": self._estimate_seconds,
            "phase_seconds": getattr(self, "_phase_seconds", {}),
        }  # in memory only, never saved
        info = {
            "rounds": log,
            "estimated_total": total,
            "total_sd": pgm.identity_total_sd(identity) if identity else None,
            "model_size_mb": model_size_mb(domain, model.cliques),
            "workload_size": len(workload),
            "candidates": len(candidates),
            "T": T,
        }
        if public is not None:
            info["public"] = public.describe()
            info["public_rounds"] = sum(r.get("source") == "public" for r in log)
        return SynthModel(
            mechanism="ppsyn-paper" if unsafe else "ppsyn",
            domain={a: int(n) for a, n in zip(attrs, domain.shape)},
            model=model,
            ledger=accountant.to_dict(),
            schema=schema,
            params=params,
            info=info,
            timings=timings,
        )

    # -- shared helpers --------------------------------------------------------------------------------
    def check_public(self) -> None:
        """``InputError`` unless this configuration takes a public table: PPSyn-DP's annealed schedule only."""
        if self.mode == "paper":
            raise InputError("--public needs PPSyn-DP: ppsyn-paper (mode 'paper') takes no public table")
        if self.schedule != "annealed":
            raise InputError(f"--public needs PPSyn-DP's annealed schedule, not schedule {self.schedule!r}")

    def _candidates(self, domain, model, candidates):
        # the static size filter of paper mode and the note schedule
        return self._fitting(domain, model, candidates, self.max_model_size)

    def _refit(self, domain, model, measurements, total, final, progress=no_progress, accountant=None):
        """Refit after a round; the final refit (``final_iters``) is a progress phase of its own."""
        iters = self.final_iters if final else self.round_iters
        t0 = time.perf_counter()
        kw = dict(
            known_total=total,
            warm_start=model,
            optimistic_step=self.optimistic_step,
            zeros=getattr(self, "_zeros", None),
        )
        if final:
            model = estimate_phase(progress, accountant, "estimate (final)", iters, domain, measurements, **kw)
        else:
            model = pgm.estimate(domain, measurements, iters=iters, **kw)
        np.asarray(model.marginals[model.cliques[0]].values)  # wait for JAX, so the timing is honest
        self._estimate_seconds += time.perf_counter() - t0
        pgm.trim_jax_caches(self.cache_limit_mb)
        return model

    def _measure(self, engine, spender, clique, path, k, rho_m, t):
        """Q·x for partition P_k of the clique's path with noise (2 rho_m)^(-1/2) (note schedule, step 7)."""
        return self._measure_partition(engine, spender, clique, path.labels(k), path.parts(k), rho_m, t)

    def _measure_partition(self, engine, spender, clique, labels, parts, rho_m, t):
        """The group sums of the clique's marginal (L2 sensitivity 1) with noise (2 rho_m)^(-1/2)."""
        x = self._read(engine, [clique], "measure")[clique]
        sums = np.rint(partition_sums(x, labels, parts)).astype(np.int64)
        y, sigma = spender.gaussian(sums, rho_m, f"measure/{t}", measured=",".join(clique), parts=int(parts))
        return labels, parts, y.astype(float), sigma

    def _log(self, log, progress, accountant, t, clique, parts, rho_m, sigma, domain, steps, **extra):
        """Log round ``t`` and report it: ``steps`` is the bound on the rounds (``AtMost``), or ``t`` after the
        last round."""
        log.append(
            {
                "round": t,
                "clique": list(clique),
                "parts": int(parts),
                "cells": int(domain.size(clique)),
                "rho_m": float(rho_m),
                "sigma_m": float(sigma),
                **extra,
            }
        )
        progress(
            "rounds",
            step=t,
            steps=steps,
            accountant=accountant,
            message=f"{','.join(clique)} |P|={released(parts)} ρ={released(rho_m, '.3g')}",  # noisy selection
        )

    # -- PPSyn-DP, annealed schedule (the default) ------------------------------------------------------
    @contextmanager
    def _phase(self, name: str):
        """Wall time per phase of the annealed rounds (benchmarks/ppsyn_time.py); SynthModel.timings only."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._phase_seconds[name] = self._phase_seconds.get(name, 0.0) + time.perf_counter() - t0

    def _annealed_schedule(self, fs: FitState) -> AnnealedSchedule:
        """AIM's schedule over what this fit was given (rho) less what it spent on initialisation; the accountant's
        spend before the fit (``spent_before``: schema discovery) is already outside rho."""
        spent = fs.accountant.spent - fs.spent_before
        rho_m, rho_sel = self.round_split(fs.rho - spent if spent < fs.rho else 0.0, fs.T)
        return AnnealedSchedule(fs.rho, fs.T, self.alpha, rho_sel, rho_m=rho_m)

    def _annealed_plan(self, cache: AnnealedCaches, sched: AnnealedSchedule, fs: FitState, model):
        """The round's public plan: the candidates (size filter, a data-independent draw), their model marginals
        mu and the (clique, partition) options; ``pairs[:n_model]`` are the model paths' options, then the public
        paths'. Public: the model, the schedule, the public table and data-independent randomness only."""
        domain, public = fs.domain, getattr(self, "_public", None)
        with self._phase("size filter"):
            keep = []
            if cache.subsets and self.candidate_refresh < 1:  # a random share of the last subset is kept
                n_keep = round((1 - self.candidate_refresh) * len(cache.small))
                keep = [
                    cache.small[i] for i in itertools.islice(random_order(len(cache.small), fs.spender.noise), n_keep)
                ]
            size_limit = sched.size_limit(fs.accountant, self.max_model_size)
            cache.small = small = candidate_subset(
                domain, model.cliques, fs.candidates, size_limit, self.max_candidates, fs.spender.noise, keep
            )
            if cache.subsets:  # a drawn subset: keep the caches of this round's candidates only (bounded memory)
                cache.keep_only(small)
        with self._phase("model marginals"):
            marg = cache.fitted if cache.fitted is not None else ModelMarginals(model)  # the last refit's, if any
            mu = {cl: marg(cl).reshape(domain.project(cl).shape) for cl in small}
        popts = {}
        with self._phase("partition paths"):
            parts = min(self.max_parts, self.option_parts)
            options = public_options(mu, parts, cache.options, self.option_refresh)  # public
            if public is not None:  # the public partition plan: paths on the public marginals
                new = [cl for cl in small if cl not in cache.pub_counts]
                if new:
                    got = public.engine.marginals(new)
                    cache.pub_counts.update({cl: np.asarray(got[cl], float).reshape(mu[cl].shape) for cl in new})
                popts = public_path_options({cl: cache.pub_counts[cl] for cl in small}, parts, cache.pub_options)
        pairs = [(cl, o) for cl in small for o in options[cl] if o.parts > 1]  # P_0 measures only the total
        n_model = len(pairs)
        if public is not None and pairs:
            pairs += [(cl, o) for cl in small for o in popts[cl]]
        return small, mu, options, popts, pairs, n_model

    def _annealed_select(self, cache, sched, fs, plan, pub_cl, sigma):
        """The exponential mechanism over the round's options (and JAM's public options ``pub_cl``): reads D.
        Returns the index picked (from ``len(pairs)`` on: a public option) and the public shares."""
        small, mu, options, popts, pairs, _ = plan
        weights, public = self._weights, getattr(self, "_public", None)
        with self._phase("selection"):
            if cache.subsets:
                cache.data.update(self._read(fs.engine, [cl for cl in small if cl not in cache.data], "select"))
                x = cache.data
            else:
                x = self._read(fs.engine, small, "select")  # reads D
            if self.quality == "group":  # all options of a clique in one bincount
                gain = []
                for cl in small:
                    gain += [
                        g
                        for g, o in zip(self._group_errors(cache.group_errors, options, cl, x, mu), options[cl])
                        if o.parts > 1
                    ]
                for cl in small if public is not None else ():
                    gain += list(self._group_errors(cache.pub_errors, popts, cl, x, mu)) if popts[cl] else []
            else:
                gain = [selection_gain(x[cl], mu[cl], o, self.quality) for cl, o in pairs]
            noise_err = math.sqrt(2 / math.pi) * sigma
            quality = np.array([weights[cl] * (g - noise_err * o.parts) for g, (cl, o) in zip(gain, pairs)])
            c_max = max(weights[cl] for cl in small)
            delta_q = QUALITY_SENSITIVITY[self.quality] * (c_max or 1.0)
            shares = {}
            if pub_cl:  # JAM's scores, sensitivity 2 c_w: the EM's sensitivity is the max over all options
                shares = {cl: cache.pub_counts[cl].ravel() / public.rows for cl in pub_cl}
                model_err = [float(np.abs(np.ravel(x[cl]) - mu[cl].ravel()).sum()) for cl in pub_cl]
                xs = {cl: x[cl] for cl in pub_cl}
                quality = np.concatenate([quality, public_scores(pub_cl, weights, model_err, xs, shares, fs.total)])
                delta_q = max(delta_q, 2.0 * max(weights[cl] for cl in pub_cl))
            what = {"measured": "clique and partition (private or public)"} if pub_cl else {}
            idx = fs.spender.select(quality, sched.rho_sel, f"select/{sched.t}", sensitivity=delta_q, **what)
        return idx, shares

    @staticmethod
    def _group_errors(cache: dict, options: dict, cl, x, mu):
        """G_w(P) of every option of ``cl`` (:class:`GroupErrors`, rebuilt when the clique's options changed)."""
        ge = cache.get(cl)
        if ge is None or ge.options is not options[cl]:
            ge = cache[cl] = GroupErrors(options[cl])
        return ge(x[cl], mu[cl])

    def _rounds_annealed(self, model, fs: FitState):
        """AIM's budget schedule (:class:`AnnealedSchedule`); the EM picks a (clique, partition) pair (module
        docstring, "annealed"). Public data (module docstring, "Public data"): a public pick adds the public
        marginal, spends nothing beyond its selection (the schedule counts the measurement as spent) and never
        anneals (AIM's rule compares a private measurement with its noise)."""
        self._phase_seconds = {}
        accountant, domain, progress = fs.accountant, fs.domain, fs.progress
        public = getattr(self, "_public", None)
        sched = self._annealed_schedule(fs)
        cache = AnnealedCaches(subsets=self.max_candidates is not None and len(fs.candidates) > self.max_candidates)
        log = []
        progress("rounds", step=0, steps=AtMost(sched.bound(accountant)), accountant=accountant, message=ROUNDS_NOTE)
        while sched.next_round(accountant):
            t, final, sigma = sched.t, sched.final, sched.sigma
            plan = self._annealed_plan(cache, sched, fs, model)
            small, mu, _, _, pairs, n_model = plan
            if not pairs:  # every candidate has one cell (public: the domain): nothing left to measure
                break
            # JAM's public options: not in the last round (it spends what remains, privately), each clique once
            pub_cl = [] if public is None or final else [cl for cl in small if cl not in cache.measured_public]
            idx, shares = self._annealed_select(cache, sched, fs, plan, pub_cl, sigma)
            source = {} if public is None else {"source": "public" if idx >= len(pairs) else "private"}
            if idx >= len(pairs):  # a public pick: the public marginal, weighed as a private one of this round
                cl = pub_cl[idx - len(pairs)]
                fs.measurements.append(pgm.LinearMeasurement(fs.total * shares[cl], cl, stddev=sigma))
                cache.measured_public.add(cl)
                sched.skip_measurement()
                model = self._refit(domain, model, fs.measurements, fs.total, False)
                cache.fitted = ModelMarginals(model)
                steps = AtMost(sched.bound(accountant))
                parts = int(domain.size(cl))
                self._log(log, progress, accountant, t, cl, parts, 0.0, sigma, domain, steps, final=False, **source)
                continue
            cl, opt = pairs[idx]
            if public is not None:
                source["path"] = "model" if idx < n_model else "public"
            rho_m = sched.measure_rho(accountant)  # the last round spends exactly what is left
            labels, parts, y, sigma = self._measure_partition(
                fs.engine, fs.spender, cl, opt.labels, opt.parts, rho_m, t
            )
            fs.measurements.append(pgm.LinearMeasurement(y, cl, stddev=sigma, query=PartitionQuery(labels, parts)))
            if final:  # the rounds are over: the final refit is a phase of its own
                self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, t, final=True, **source)
                model = self._refit(domain, model, fs.measurements, fs.total, True, progress, accountant)
                break
            model = self._refit(domain, model, fs.measurements, fs.total, False)  # timed in SynthModel.timings
            cache.fitted = ModelMarginals(model)  # the next round's model marginals too
            moved = float(np.abs(cache.fitted(cl) - mu[cl].ravel()).sum())
            # public diagnostics only (the model and sigma); the selection scores read the data and stay out
            extra = dict(final=False, moved=moved, expected_noise=sched.expected_noise(parts), **source)
            sched.anneal(moved, parts)  # sigma / 2, eps_sel * 2
            steps = AtMost(sched.bound(accountant))
            self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, steps, **extra)
        return model, log

    # -- PPSyn-DP, note schedule --------------------------------------------------------------------------
    def _rounds_dp(self, model, fs: FitState):
        engine, accountant, spender, progress, domain = fs.engine, fs.accountant, fs.spender, fs.progress, fs.domain
        candidates, measurements, total, T, rho = fs.candidates, fs.measurements, fs.total, fs.T, fs.rho
        rho_sel, rho_c, rho_ref = 0.1 * rho / T, 0.05 * rho / T, 0.8 * rho / T
        log = []
        t = 0
        progress("rounds", step=0, steps=AtMost(max_rounds(T)), accountant=accountant, message=ROUNDS_NOTE)
        while True:
            t += 1
            remaining = accountant.remaining
            if remaining <= 1e-12 * rho:
                break
            b = round_budgets(remaining, rho_sel, rho_c, rho_ref, last=t >= max_rounds(T))
            small = self._candidates(domain, model, candidates)
            marg = ModelMarginals(model)
            mu = {cl: marg(cl).reshape(domain.project(cl).shape) for cl in small}
            plans = public_plan(mu, b.rho_plan, self.max_parts)  # step 3: public
            expected = np.array([plans[cl].expected_error for cl in small])

            x = self._read(engine, small, "select")  # step 4: reads D
            contrib = np.array([np.abs(x[cl] - mu[cl]).sum() for cl in small])
            idx = spender.select(contrib - expected, b.rho_sel, f"select/{t}")
            cl = small[idx]

            xm = self._read(engine, [cl], "contribution")[cl]  # step 5: reads D
            c_tilde, _ = release_contribution(spender, float(np.abs(xm - mu[cl]).sum()), b.rho_c, f"contribution/{t}")

            plan = plans[cl]  # step 6: public
            final = b.final
            if final:
                k = plan.k_ref
            else:
                cap = remaining - b.rho_sel - b.rho_c
                k, rho_m = budget_rule(plan, c_tilde, self.eta, rho_ref, cap, self.budget_floor)
                final = rho_m >= cap
            if final:
                rho_m = accountant.remaining  # spend exactly what is left

            labels, parts, y, sigma = self._measure(engine, spender, cl, plan.path, k, rho_m, t)  # step 7: reads D
            measurements.append(pgm.LinearMeasurement(y, cl, stddev=sigma, query=PartitionQuery(labels, parts)))
            extra = dict(
                k_ref=int(plan.k_ref), expected_error=float(plan.expected_error), c_tilde=c_tilde, final=bool(final)
            )
            if final:  # the rounds are over: the final refit is a phase of its own
                self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, t, **extra)
                model = self._refit(domain, model, measurements, total, True, progress, accountant)
                break
            model = self._refit(domain, model, measurements, total, False)
            self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, AtMost(max_rounds(T)), **extra)
        return model, log

    # -- the paper as published (NOT private) ---------------------------------------------------------
    def _rounds_paper(self, model, fs: FitState):
        engine, accountant, spender, progress, domain = fs.engine, fs.accountant, fs.spender, fs.progress, fs.domain
        candidates, measurements, total, T, rho = fs.candidates, fs.measurements, fs.total, fs.T, fs.rho
        rho_exp = 0.1 * rho / T
        paths: dict[Clique, PartitionPath] = {}  # the paper's precomputation: paths of the true marginals
        log = []
        t = 0
        progress("rounds", step=0, steps=AtMost(max_rounds(T)), accountant=accountant, message=ROUNDS_NOTE)
        while accountant.remaining - rho_exp > 1e-12 * rho:
            t += 1
            remaining = accountant.remaining
            small = self._candidates(domain, model, candidates)
            marg = ModelMarginals(model)
            x = self._read(engine, small, "select")
            scores, stops = [], []
            for cl in small:
                c = float(np.abs(x[cl].ravel() - marg(cl)).sum())
                if cl not in paths:
                    paths[cl] = partition_path(x[cl].astype(float), max_parts=self.max_parts)
                k, r = paper_stop(paths[cl], c, self.eta)
                if math.isfinite(r):
                    r = max(r, 1e-9 * rho)  # a rule value of 0 (|P| = 0 or float underflow) would make sigma infinite
                stops.append((k, r))
                scores.append(min(c / r, 1e300) if (math.isfinite(r) and c > 0) else 0.0)
            idx = spender.select(np.array(scores), rho_exp, f"select/{t}")
            cl = small[idx]
            k, rho_m = stops[idx]
            avail = remaining - rho_exp
            final = (
                not math.isfinite(rho_m)
                or rho_m >= avail
                or avail - rho_m <= rho_exp * (1 + 1e-9)
                or t >= max_rounds(T)
            )
            rho_m = accountant.remaining if final else rho_m
            labels, parts, y, sigma = self._measure(engine, spender, cl, paths[cl], k, rho_m, t)
            # Est(m, P̃): uniform within each group, fed as a weighted identity measurement (paper mode)
            size = np.bincount(labels, minlength=parts).astype(float)[labels]
            w = np.sqrt(size)
            yhat = y[labels] / size
            measurements.append(pgm.LinearMeasurement(w * yhat, cl, stddev=sigma, query=pgm.mbi.WeightedQuery(w)))
            if final:  # the rounds are over: the final refit is a phase of its own
                self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, t, final=True)
                model = self._refit(domain, model, measurements, total, True, progress, accountant)
                break
            model = self._refit(domain, model, measurements, total, False)
            self._log(log, progress, accountant, t, cl, parts, rho_m, sigma, domain, AtMost(max_rounds(T)), final=False)
        return model, log


__all__ = [
    "PPSyn",
    "UnsafeMechanismWarning",
    "DATA_STEPS",
    "SCHEDULES",
]
