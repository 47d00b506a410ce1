"""PPSyn's paper mode: Algorithms 1–4 of Zhang, Deng and Yin (2023) as published, for replication only.

NOT differentially private (:class:`privsample.synth.ppsyn.PPSyn` says why: the selection score has no finite
sensitivity, the partitions and the noise scales are computed from the true counts). Every ledger entry is labelled
"UNSAFE-paper/..." with ``private=False``; rho_m is capped by what remains so the budget is spent exactly.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from privsample.synth import pgm
from privsample.progress import AtMost
from privsample.synth.base import ROUNDS_NOTE
from privsample.synth.partition import PartitionPath, paper_stop, partition_path
from privsample.synth.ppsyn.core import Clique, PPSynBase, UnsafeMechanismWarning
from privsample.synth.ppsyn_steps import FitState
from privsample.synth.schedule import max_rounds
from privsample.synth.model_marginals import ModelMarginals


def warn_unsafe(stacklevel: int = 2) -> None:
    """Warn that paper mode is running: its output must not be released as private."""
    warnings.warn(
        "PPSyn mode='paper' runs the algorithm AS PUBLISHED, which is NOT differentially private "
        "(data-dependent partitions and noise scales, unbounded selection sensitivity; see "
        "the docstring of privsample.synth.ppsyn.PPSyn). Its output must not be released as private.",
        UnsafeMechanismWarning,
        stacklevel=stacklevel + 1,
    )


class PaperRounds(PPSynBase):
    """Paper mode's rounds (:meth:`_rounds_paper`)."""

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
