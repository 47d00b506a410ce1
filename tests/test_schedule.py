"""The annealed schedule shared by AIM and PPSyn-DP: its rules, the round cap, and seeded fits pinned."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from privsample.privacy import Accountant, SeededNoise
from privsample.synth import aim, schedule
from privsample.synth.ppsyn import annealed as ppsyn_annealed
from privsample.synth.aim import AIM
from privsample.synth.ppsyn import PPSyn
from privsample.synth.schedule import AnnealedSchedule, max_rounds
from tests.test_mst import toy_engine


class Budget:
    """The accountant's state the schedule reads (remaining, spent, rho_total)."""

    def __init__(self, rho_total: float):
        self.rho_total, self.spent = rho_total, 0.0

    @property
    def remaining(self) -> float:
        return self.rho_total - self.spent


def run(sched: AnnealedSchedule, budget: Budget, anneal_every: int = 0) -> list[bool]:
    """Spend each round's cost (the last: everything left); anneal every ``anneal_every``-th round."""
    finals = []
    while sched.next_round(budget):
        finals.append(sched.final)
        budget.spent += sched.rho_sel  # the selection, then the measurement (the last: what is left)
        budget.spent += sched.measure_rho(budget)
        if sched.final:
            break
        if anneal_every and sched.t % anneal_every == 0:
            assert sched.anneal(0.0, 1)
    return finals


@pytest.mark.parametrize("form", ["sigma", "rho_m"])
@pytest.mark.parametrize("T,anneal_every", [(1, 0), (5, 0), (16, 0), (16, 1), (50, 3), (112, 7)])
def test_annealed_rounds_end_by_round_T_and_never_reach_the_cap(form, T, anneal_every):
    """The module's argument: each round but the last spends at least the first round's cost and needs twice its
    cost left, so there are at most T rounds; the cap (10 T) never binds and the budget is spent exactly."""
    rho = 1.0
    budget = Budget(rho)
    budget.spent = 0.3  # the one-way measurements
    r = (rho - budget.spent) / T
    kw = {"sigma": (2 * 0.9 * r) ** -0.5} if form == "sigma" else {"rho_m": 0.9 * r}
    sched = AnnealedSchedule(rho, T, 0.9, 0.1 * r, **kw)
    finals = run(sched, budget, anneal_every)
    assert finals[-1] and not any(finals[:-1])
    assert len(finals) <= T < sched.max_rounds
    assert budget.spent == pytest.approx(rho, rel=1e-12)


def test_the_round_cap_makes_its_round_the_last():
    """A schedule whose rounds cost far less than a T-th of the budget reaches the cap: round 10 T is the last
    and spends what remains."""
    budget = Budget(1.0)
    sched = AnnealedSchedule(1.0, 2, 0.9, 1e-4, rho_m=9e-4)
    finals = run(sched, budget)
    assert len(finals) == max_rounds(2) == 20 and finals[-1] and not any(finals[:-1])
    assert budget.spent == pytest.approx(1.0, rel=1e-12)


def test_anneal_rule_and_the_two_forms_agree():
    a = AnnealedSchedule(1.0, 10, 0.9, 0.01, sigma=(2 * 0.09) ** -0.5)
    b = AnnealedSchedule(1.0, 10, 0.9, 0.01, rho_m=0.09)
    assert a.rho_m == pytest.approx(b.rho_m) and a.sigma == pytest.approx(b.sigma)
    cells = 10
    assert not a.anneal(a.expected_noise(cells) * 1.01, cells)  # moved more than the noise: keep going
    assert a.anneal(a.expected_noise(cells), cells) and b.anneal(b.expected_noise(cells), cells)
    assert (a.rho_sel, b.rho_sel) == (0.04, 0.04)
    assert a.rho_m == pytest.approx(4 * 0.09) and b.rho_m == 4 * 0.09
    assert a.sigma == pytest.approx(b.sigma)
    with pytest.raises(ValueError):
        AnnealedSchedule(1.0, 10, 0.9, 0.01)


def test_public_rounds_count_as_spent():
    budget = Budget(1.0)
    sched = AnnealedSchedule(1.0, 10, 0.9, 0.01, rho_m=0.09)
    assert sched.bound(budget) == 10  # before the first round: ten rounds' cost left
    assert sched.next_round(budget) and not sched.final
    limit = sched.size_limit(budget, 80.0)
    sched.skip_measurement()
    budget.spent += sched.rho_sel
    assert sched.remaining(budget) == pytest.approx(0.9)
    assert sched.bound(budget) == 10  # one round done, nine left
    assert sched.next_round(budget) and sched.size_limit(budget, 80.0) == pytest.approx(2 * limit)


@pytest.mark.parametrize("mech", ["aim", "ppsyn"])
def test_aim_and_ppsyn_dp_run_the_shared_schedule(mech, monkeypatch):
    """Both mechanisms' rounds are the rounds of one ``AnnealedSchedule``."""
    made = []

    class Recording(AnnealedSchedule):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    module = {"aim": aim, "ppsyn": ppsyn_annealed}[mech]
    assert module.AnnealedSchedule is schedule.AnnealedSchedule
    monkeypatch.setattr(module, "AnnealedSchedule", Recording)
    synth = AIM(rounds=12, iters=30) if mech == "aim" else PPSyn(rounds=12, iters=30)
    model = synth.fit(toy_engine(n=1000), Accountant.from_epsilon_delta(2.0, 1e-9), SeededNoise(3, quiet=True))
    (sched,) = made
    assert sched.final and sched.t == len(model.info["rounds"]) <= sched.T == 12


# Seeded fits (toy chain, 2000 records, epsilon 2, seed 3): rounds, MD5 of 500 sampled rows and of the ledger's
# (label, rho). The same before and after AIM and PPSyn-DP shared the schedule (and under the former round caps);
# "aim" with the reference's final fit (plain mirror descent), "aim-accelerated" with the default one.
PINNED = {
    "aim-accelerated": (6, "f8a7a96812e3b54323472837b3ed8fe0", "864ae622ecc8d0cae1b057e29bc0628c"),
    "aim": (6, "9d2bfb052d0f4908a066481808c0d531", "864ae622ecc8d0cae1b057e29bc0628c"),
    "ppsyn": (6, "5b852e21694c6c2eb62ced59406d4b35", "756651b1630b5f52e74355ddcb36d3ab"),
    "ppsyn-note": (19, "5a189a25c7c7d8b9ea434ad885a9916b", "4cb9f6578ee9775c7eae12ddf5e7f733"),
}


@pytest.mark.parametrize("case", list(PINNED))
def test_seeded_fits_are_unchanged(case):
    make = {
        "aim": lambda: AIM(max_model_size=1.0, rounds=12, iters=60, accelerated=False),
        "aim-accelerated": lambda: AIM(max_model_size=1.0, rounds=12, iters=60),
        "ppsyn": lambda: PPSyn(rounds=12, iters=60),
        "ppsyn-note": lambda: PPSyn(schedule="note", iters=60),
    }[case]
    acc = Accountant.from_epsilon_delta(2.0, 1e-9)
    model = make().fit(toy_engine(n=2000), acc, SeededNoise(3, quiet=True))
    rounds = len(model.info["rounds"])
    prefix = "aim" if case.startswith("aim") else "ppsyn"
    steps = ["select", "measure"] if case != "ppsyn-note" else ["select", "contribution", "measure"]
    expected = [f"{prefix}/{s}/{t}" for t in range(1, rounds + 1) for s in steps]
    assert [e.label for e in acc.ledger if "/init/" not in e.label] == expected
    rows = model.sample_table(500, np.random.default_rng(0)).to_csv(index=False).encode()
    ledger = json.dumps([(e.label, e.rho) for e in acc.ledger]).encode()
    assert (rounds, hashlib.md5(rows).hexdigest(), hashlib.md5(ledger).hexdigest()) == PINNED[case]
    assert model.params.get("max_rounds", max_rounds(model.info["T"])) == max_rounds(model.info["T"])
