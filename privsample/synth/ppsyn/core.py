"""What every PPSyn schedule shares: the options' checks and defaults, the base class whose methods read the data
(the only places that do: ``DATA_STEPS``), measure a partition, refit the model and log a round.

Privacy: see :mod:`privsample.synth.ppsyn`. Here, a measurement (:meth:`PPSynBase._measure_partition`) releases the
integer group sums of a clique's marginal over a partition fixed beforehand, with discrete Gaussian noise
(2 rho_m)^(-1/2): under add/remove one record, the record is in one cell, hence in one group, so the L2 sensitivity
is 1 and the step is rho_m-zCDP given its public parameters. Refits are post-processing.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Sequence

import numpy as np

from privsample.errors import InputError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.released import released
from privsample.synth import pgm
from privsample.progress import no_progress
from privsample.synth.base import WorkloadSynthesizer, estimate_phase
from privsample.synth.partition import partition_sums
from privsample.synth.ppsyn_steps import QUALITY_SENSITIVITY, one_way_share

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


def check_options(
    *, mode, schedule, quality, alpha, eta, max_model_size, max_parts, rounds, workload_k, max_candidates
):
    """``InputError`` for the first PPSyn option out of range (``max_model_size``: after its default)."""
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


def refit_steps(iters: int, round_iters, final_iters, warm: bool) -> tuple[int, int, int]:
    """(steps of a round's refit, of the final refit, of the initial one-way fit). The annealed schedule (``warm``)
    refits every round from a warm start with the optimistic step, fits the last model with 100 steps instead of
    ``iters`` and the one-way model with 1000 (benchmarks/results/ppsyn_dp_variants.md)."""
    round_iters = int(round_iters) if round_iters else (min(iters, ANNEALED_ROUND_ITERS) if warm else iters)
    final_iters = int(final_iters) if final_iters else (min(iters, ANNEALED_FINAL_ITERS) if warm else iters)
    init_iters = max(round_iters, ANNEALED_INIT_ITERS) if warm else round_iters
    return round_iters, final_iters, init_iters


class PPSynBase(WorkloadSynthesizer):
    """The steps every PPSyn schedule shares (:class:`privsample.synth.ppsyn.PPSyn` sets the options)."""

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
