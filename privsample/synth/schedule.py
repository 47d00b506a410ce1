"""The annealed select-measure schedule of AIM (McKenna, Mullins, Sheldon & Miklau 2022, "AIM: An Adaptive and
Iterative Mechanism for Differentially Private Synthetic Data", Algorithm 1), shared by AIM and PPSyn-DP's
annealed schedule, and the round cap of every adaptive schedule.

The schedule (:class:`AnnealedSchedule`):
* Budget per round: the rounds start with a measurement budget rho_m (the noise scale sigma = (2 rho_m)^(-1/2))
  and a selection budget rho_sel; a round costs rho_m + rho_sel.
* Annealing (AIM's rule): after the refit, if the model's marginal of the measured clique moved by at most the
  expected L1 norm of the measurement's noise, sqrt(2/pi) sigma n (n cells or groups measured), the measurement
  told the model little beyond noise: sigma halves (rho_m x 4) and the selection epsilon doubles (rho_sel x 4).
* The last round: when less than two rounds' cost remains, the round spends what is left, alpha of it measuring
  and 1 - alpha selecting (the measurement spends exactly what the accountant has left).
* Public rounds (joint selection with a public table) spend no measurement budget; the schedule counts rho_m as
  spent (``saved``), so the rounds, their noise and the model-size limit follow the private schedule, and the last
  measurement spends what was saved.
* The model-size limit grows with the share of the budget spent once the round is over (AIM's filter).
* The rounds bound shown in progress: a round that is not the last needs twice its cost left and spends at least
  its cost (the cost only grows), so at most floor(remaining / cost) rounds remain, the last one included
  (:func:`privsample.synth.base.rounds_bound`), capped by the round cap.

Privacy: the schedule reads no data. Every quantity above is a function of the accountant's state and of earlier
outputs (the model, the selected clique, the moved distance of the public model), so the per-round budgets are
chosen adaptively from public state; the accountant refuses any overrun and the last round spends exactly what
remains, so the total is the fit's rho (adaptive composition of zCDP under a privacy filter).

The measurement budget is held in one of two forms, as each mechanism had it: ``sigma`` (AIM, as the reference
implementation: annealing halves sigma, the last round sets sigma = (2 alpha r)^(-1/2)) or ``rho_m`` (PPSyn-DP:
annealing multiplies rho_m by 4, the last round sets rho_m = alpha r, sigma = ``sigma_for_rho(rho_m)``). They are
the same schedule up to float rounding; keeping each form keeps every seeded output as it was. Under a person-level
privacy unit (``max_rows`` = k) a measurement's sensitivity is k: sigma = k (2 rho_m)^(-1/2) in both forms.

The round cap, ``max_rounds(T) = MAX_ROUNDS_FACTOR * T`` = 10 T, for all of them (AIM, PPSyn-DP's annealed and note
schedules, PPSyn's paper mode): round 10 T is the last round and spends what remains. Why one cap, and why 10 T:
* The annealed schedule never reaches it. Its first round costs c_0 = R_0 / T (R_0 the rounds' budget; AIM's
  c_0 = rho / T with R_0 < rho after the one-way measurements), every round that is not the last needs 2 c_t left
  with c_t >= c_0 and spends c_t, so there are at most T - 1 such rounds and at most T rounds in all (T + 1 with
  float rounding). The cap is a guard only; there it used to be 100 T in AIM (and then stopped without the final fit,
  leaving budget unspent) and 10 T in PPSyn-DP: with either value no seeded output differs.
* PPSyn's note schedule and paper mode set each round's measurement budget by a rule on the data's contribution,
  so they can run more than T rounds (on 7 Adult columns, T = 7: up to 57 rounds at epsilon 4); 10 T is their
  documented bound (``max_rounds`` in the saved parameters), and making the capped round the last keeps the budget
  spent exactly.
"""

from __future__ import annotations

import math

from privsample.privacy.mechanisms import rho_for_sigma, sigma_for_rho
from privsample.synth.base import rounds_bound

MAX_ROUNDS_FACTOR = 10  # the round cap: MAX_ROUNDS_FACTOR * T rounds (module docstring)
EXHAUSTED = 1e-12  # a schedule whose remaining budget is at most this share of the fit's rho stops


def max_rounds(T: int) -> int:
    """The round cap of a schedule of ``T`` planned rounds: the round with this number is the last."""
    return MAX_ROUNDS_FACTOR * int(T)


class AnnealedSchedule:
    """AIM's annealed budget schedule (module docstring). Public state only: it never reads the data.

    ``rho``: the fit's budget (the schedule stops once at most ``EXHAUSTED * rho`` is left); ``T``: the planned
    rounds; ``alpha``: the measurement's share of the last round; ``rho_sel``: the first rounds' selection budget;
    exactly one of ``sigma`` (AIM's form) or ``rho_m`` (PPSyn-DP's form): the first rounds' measurement budget;
    ``max_rows``: the privacy unit's k (a measurement's sensitivity, so sigma = k / sqrt(2 rho_m)).
    Per round: :meth:`next_round`, then the round's budgets (:attr:`rho_sel`, :attr:`sigma`, :meth:`measure_rho`,
    :meth:`size_limit`), then :meth:`skip_measurement` (a public pick) or :meth:`anneal`, then :meth:`bound`."""

    def __init__(self, rho: float, T: int, alpha: float, rho_sel: float, *, sigma=None, rho_m=None, max_rows=1):
        if (sigma is None) == (rho_m is None):
            raise ValueError("AnnealedSchedule needs exactly one of sigma or rho_m")
        self.T, self.alpha, self.rho_sel = int(T), float(alpha), rho_sel
        self.floor = EXHAUSTED * rho
        self._sigma, self._rho_m = sigma, rho_m
        self.max_rows = int(max_rows)
        self.saved = 0.0  # the measurement budget that public rounds did not spend, counted as spent
        self.t = 0  # the current round (1, 2, ...; 0 before the first)
        self.final = False  # the current round is the last

    @property
    def max_rounds(self) -> int:
        return max_rounds(self.T)

    @property
    def rho_m(self) -> float:
        """The current measurement budget (not the last round's measurement: :meth:`measure_rho`)."""
        return rho_for_sigma(self._sigma, self.max_rows * 1.0) if self._sigma is not None else self._rho_m

    @property
    def sigma(self) -> float:
        """The current noise scale of a measurement."""
        return self._sigma if self._sigma is not None else sigma_for_rho(self._rho_m, self.max_rows * 1.0)

    def remaining(self, accountant) -> float:
        """The schedule's remaining budget: the accountant's, less what public rounds saved."""
        return accountant.remaining - self.saved

    def next_round(self, accountant) -> bool:
        """Start the next round: False when nothing is left to spend. The round is the last (:attr:`final`) when
        less than two rounds' cost remains or at the round cap: then it spends what remains."""
        self.t += 1
        remaining = accountant.remaining - self.saved
        if remaining <= self.floor:
            return False
        if remaining < 2 * (self.rho_m + self.rho_sel) or self.t >= self.max_rounds:
            self.final = True
            self.rho_sel = (1 - self.alpha) * remaining
            if self._sigma is not None:
                self._sigma = self.max_rows * math.sqrt(1 / (2 * self.alpha * remaining))
            else:
                self._rho_m = self.alpha * remaining
        return True

    def size_limit(self, accountant, max_size: float) -> float:
        """The model-size limit of this round: ``max_size`` times the share of the budget spent after it."""
        spent_after = accountant.spent + self.saved + self.rho_m + self.rho_sel
        return max_size * min(1.0, spent_after / accountant.rho_total)

    def expected_noise(self, cells) -> float:
        """The expected L1 norm of a measurement's noise on ``cells`` cells (or groups): sqrt(2/pi) sigma n."""
        return math.sqrt(2 / math.pi) * self.sigma * cells

    def measure_rho(self, accountant) -> float:
        """This round's measurement budget: everything the accountant has left in the last round."""
        return accountant.remaining if self.final else self.rho_m

    def skip_measurement(self) -> None:
        """A public pick: the measurement budget it did not spend counts as spent."""
        self.saved += self.rho_m

    def anneal(self, moved: float, cells) -> bool:
        """AIM's rule after a private measurement of ``cells`` cells (or groups) that moved the model's marginal by
        ``moved`` (L1): if that is at most the noise's expected L1 norm, halve sigma and double the selection
        epsilon. True if it annealed."""
        if not moved <= math.sqrt(2 / math.pi) * self.sigma * cells:
            return False
        if self._sigma is not None:
            self._sigma /= 2
        else:
            self._rho_m *= 4
        self.rho_sel *= 4
        return True

    def bound(self, accountant) -> int:
        """At most how many rounds there are in all, after the current one (0 before the first)."""
        return rounds_bound(self.t, accountant.remaining - self.saved, self.rho_m + self.rho_sel, self.max_rounds)


__all__ = ["AnnealedSchedule", "EXHAUSTED", "MAX_ROUNDS_FACTOR", "max_rounds"]
