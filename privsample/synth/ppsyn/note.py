"""PPSyn-DP's note schedule: the paper's rounds made private (T = d, eta = 0.7).

Privacy (:mod:`privsample.synth.ppsyn`, "note", has the whole argument): each round's budgets, candidates and
partition plan are functions of the public state (:func:`round_budgets`, :func:`public_plan`); the selection scores
q_w = C_w(D) − E_w with C_w 1-Lipschitz in the data under add/remove one record (Δ = 1), rho_sel-zCDP; the
contribution is released by the Gaussian mechanism (sensitivity 1), rho_c-zCDP; the partition and rho_m follow from
public values by the eta rule (:func:`budget_rule`); the measurement has L2 sensitivity 1, rho_m-zCDP.
"""

from __future__ import annotations

import numpy as np

from privsample.synth import pgm
from privsample.progress import AtMost
from privsample.synth.base import ROUNDS_NOTE
from privsample.synth.partition import PartitionQuery
from privsample.synth.ppsyn.core import PPSynBase
from privsample.synth.ppsyn_steps import FitState, budget_rule, public_plan, release_contribution, round_budgets
from privsample.synth.schedule import max_rounds
from privsample.synth.model_marginals import ModelMarginals


class NoteRounds(PPSynBase):
    """The note schedule's rounds (:meth:`_rounds_dp`)."""

    def _rounds_dp(self, model, fs: FitState):
        engine, accountant, spender, progress, domain = fs.engine, fs.accountant, fs.spender, fs.progress, fs.domain
        candidates, measurements, total, T, rho = fs.candidates, fs.measurements, fs.total, fs.T, fs.rho
        k2 = accountant.unit.max_rows**2  # sigma = k / sqrt(2 rho) under the privacy unit: plans with rho / k^2
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
            plans = public_plan(mu, b.rho_plan / k2, self.max_parts)  # step 3: public
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
                k, rho_m = budget_rule(plan, c_tilde, self.eta, rho_ref, cap, self.budget_floor, k2)
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
