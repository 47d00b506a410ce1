"""One-cell columns (every record holds the same code): MST, AIM and PPSyn-DP measure no marginal of them and offer
no candidate holding one, spend the whole budget on the other columns, and still model, sample, save and load them.
With no column worth measuring, the number of records is measured once with everything."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.aim import AIM
from privsample.synth.base import COUNT_MEASURED
from privsample.synth.model import SynthModel
from privsample.synth.mst import MST
from privsample.synth.ppsyn import PPSyn
from privsample.synth.selection import candidate_weights, informative_attributes, informative_workload
from privsample.synth.zeros import StructuralZeros

METHODS = {
    "mst": lambda: MST(iters=100),
    "aim": lambda: AIM(iters=100),
    "ppsyn": lambda: PPSyn(iters=100),
}


def _engine(n=2000, seed=0, constant=("k",)):
    """a -> b -> c plus the one-cell columns ``constant`` (domain size 1)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = (b * 2 + rng.integers(0, 2, n)) % 5
    cols = {"a": a, "k": np.zeros(n, np.int64), "b": b, "c": c}
    names = [x for x in cols if x in constant or x in "abc"]
    sizes = {"a": 3, "k": 1, "b": 4, "c": 5}
    return NumpyEngine({x: cols[x] for x in names}, pgm.Domain(names, [sizes[x] for x in names]))


def _names(entry) -> set[str]:
    """The columns a ledger entry (accountant entry or saved dict) names: its label's last part and what it
    measured."""
    get = entry.get if isinstance(entry, dict) else lambda key: getattr(entry, key, None)
    return set(str(get("label")).rsplit("/", 1)[-1].split(",")) | set(str(get("measured") or "").split(","))


def _fit(method, eng, eps=2.0):
    acc = Accountant.from_epsilon_delta(eps, 1e-9)
    model = METHODS[method]().fit(eng, acc, SeededNoise(0, quiet=True))
    return acc, model


@pytest.mark.parametrize("method", list(METHODS))
def test_no_ledger_entry_measures_a_one_cell_column_and_the_budget_is_spent_on_the_others(method, tmp_path):
    eng = _engine()
    acc, model = _fit(method, eng)
    assert informative_attributes(eng.domain) == ["a", "b", "c"]
    assert acc.ledger and not any("k" in _names(e) for e in acc.ledger)
    assert math.fsum(e.rho for e in acc.ledger) == pytest.approx(acc.rho_total, rel=1e-9)
    assert not any("k" in cl and len(cl) > 1 for cl in model.model.cliques)  # in no measured clique
    for r in model.info.get("rounds", []):
        assert "k" not in r["clique"]
    # the model still holds the column, at its one value, and saves and loads with it
    rows = model.sample(rng=np.random.default_rng(1))
    assert set(rows) == {"a", "k", "b", "c"} and (np.asarray(rows["k"]) == 0).all()
    assert model.domain == {"a": 3, "k": 1, "b": 4, "c": 5}
    model.save(tmp_path / "m")
    again = SynthModel.load(tmp_path / "m")
    back = again.sample(rng=np.random.default_rng(1))
    assert all(np.array_equal(rows[x], back[x]) for x in rows)


def test_mst_splits_its_thirds_over_the_measured_columns():
    acc, model = _fit("mst", _engine())
    groups: dict = {}
    for e in acc.ledger:
        groups.setdefault(e.label.split("/")[1], []).append(e.rho)
    assert {g: len(v) for g, v in groups.items()} == {"1-way": 3, "select": 2, "2-way": 2}
    for v in groups.values():
        assert math.fsum(v) == pytest.approx(acc.rho_total / 3, rel=1e-9)
    assert len(model.info["tree"]) == 2 and not any("k" in e for e in model.info["tree"])


@pytest.mark.parametrize("method", ["aim", "ppsyn"])
def test_workload_candidates_hold_no_one_cell_column(method):
    eng = _engine()
    synth = METHODS[method]()
    wl = synth._workload(eng.domain)
    assert wl and not any("k" in cl for cl, _ in wl)
    full = [(("a", "k"), 1.0), (("k", "b", "c"), 2.0), (("k",), 5.0)]
    given = informative_workload(eng.domain, full)
    assert given == [(("a",), 1.0), (("b", "c"), 2.0)]
    # the candidates left keep the whole workload's weights (a sum over their attributes)
    whole, kept = candidate_weights(full), candidate_weights(given)
    assert kept == {cl: whole[cl] for cl in kept} and not any("k" in cl for cl in kept)


@pytest.mark.parametrize("method", list(METHODS))
def test_a_table_of_one_cell_columns_measures_the_number_of_records_once(method):
    eng = NumpyEngine({"k": np.zeros(700, np.int64), "j": np.zeros(700, np.int64)}, pgm.Domain(["k", "j"], [1, 1]))
    acc, model = _fit(method, eng, eps=1.0)
    assert [(e.label, e.measured) for e in acc.ledger] == [(f"{method}/count", COUNT_MEASURED)]
    assert acc.ledger[0].rho == pytest.approx(acc.rho_total, rel=1e-12)
    assert abs(model.model.total - 700) < 10 * acc.ledger[0].noise_scale
    rows = model.sample(rng=np.random.default_rng(0))
    assert set(rows) == {"k", "j"} and all((np.asarray(v) == 0).all() for v in rows.values())


@pytest.mark.parametrize("method", list(METHODS))
def test_one_column_worth_measuring_gets_the_whole_budget(method):
    rng = np.random.default_rng(0)
    eng = NumpyEngine({"k": np.zeros(900, np.int64), "a": rng.integers(0, 3, 900)}, pgm.Domain(["k", "a"], [1, 3]))
    acc, model = _fit(method, eng, eps=1.0)
    assert not any("k" in _names(e) for e in acc.ledger)
    assert math.fsum(e.rho for e in acc.ledger) == pytest.approx(acc.rho_total, rel=1e-9)
    if method == "mst":  # no tree: one measurement with everything
        assert [e.label for e in acc.ledger] == ["mst/1-way/a"]


def test_a_noise_born_code_leaves_one_cell_and_the_model_never_draws_it():
    """Private discovery keeps no category of a many-valued column: its codes are the catch-all and a null code
    that discovery found empty (a structural zero), so one cell holds every record."""
    import privsample

    rng = np.random.default_rng(0)
    n = 1500
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 4, n).astype(str),
            "rare": [f"v{i}" for i in rng.integers(0, 600, n)],
            "b": rng.integers(0, 3, n).astype(str),
        },
        dtype=object,
    )
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = privsample.Synthesizer(method, epsilon=1.0, iters=50).fit(df, seed=3)
        model = s.model
        zeros = StructuralZeros.for_fit(model.schema, pgm.Domain(list(model.domain), list(model.domain.values())))
        dom = pgm.Domain(list(model.domain), list(model.domain.values()))
        assert "rare" not in informative_attributes(dom, zeros) and model.domain["rare"] > 1
        synth_entries = [e for e in s.ledger.entries if not e["label"].startswith("schema")]
        assert synth_entries and not any("rare" in _names(e) for e in synth_entries)
        summary = s.ledger.summary
        assert math.fsum(e["rho"] for e in s.ledger.entries) == pytest.approx(summary["rho_total"], rel=1e-9)
        out = s.sample(500, seed=1)
        assert out["rare"].notna().all() and out["rare"].astype(str).str.startswith("(other").all()
