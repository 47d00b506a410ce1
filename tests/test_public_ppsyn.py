"""Public data for PPSyn-DP (JAM's public options and the public partition plan, annealed schedule): the ledger,
the selection's sensitivity, free public measurements, public paths computed from the public table only, the
unchanged seeded output without a public table, refusals, the command line and the Python API."""

from __future__ import annotations

import hashlib
import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from privsample import InputError, Synthesizer
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import ppsyn_steps, selection
from privsample.synth.ppsyn import DATA_STEPS, PPSyn, annealed
from privsample.synth.public import public_data
from tests.cli import run
from tests.test_cli import small_schema, small_table
from tests.test_ppsyn import RecordingEngine
from tests.test_public import DOMAIN, chain

PRIVATE = chain(2000, 0)


def fit(public=None, seed=0, eps=1.0, engine=None, synth=None, **kw):
    synth = synth or PPSyn(rounds=4, iters=60, **kw)
    acc = Accountant.from_epsilon_delta(eps, 1e-9)
    eng = engine(synth) if engine else NumpyEngine(PRIVATE, DOMAIN)
    model = synth.fit(eng, acc, SeededNoise(seed, quiet=True), public=public)
    return acc, model


def ledger_rows(acc):
    return [(e.label, e.rho) for e in acc.ledger]


@pytest.fixture(scope="module")
def runs():
    return {
        "none": fit(),
        "pub": fit(public_data(chain(1500, 1, flip=0.3), DOMAIN, "pub.csv")),  # biased: a weaker a-b link
        "same": fit(public_data(PRIVATE, DOMAIN, "copy.csv")),  # the private table itself: public picks win
    }


# MD5s of seeded fits computed before public data was added to PPSyn (same code path without a public table)
MAIN_MD5 = {
    "plain": ("3b874693f546013145210fc2ec6695ea", "eeac0aafaef0e876bd78b94d06b33d3b"),
    "subset": ("ce81c87d60985dafef09ab7bf487ac23", "1b947135f1cc9fd30ef466cc425883e7"),
}


@pytest.mark.parametrize("case", ["plain", "subset"])
def test_without_a_public_table_the_output_is_unchanged_byte_for_byte(case):
    acc, model = fit(**({"max_candidates": 3} if case == "subset" else {}))
    rows = model.sample_table(500, np.random.default_rng(0)).to_csv(index=False).encode()
    ledger = json.dumps([(e.label, e.rho, e.details.get("sensitivity")) for e in acc.ledger]).encode()
    assert (hashlib.md5(rows).hexdigest(), hashlib.md5(ledger).hexdigest()) == MAIN_MD5[case]
    assert "public_inputs" not in acc.to_dict() and "public" not in model.info
    assert all("source" not in r and "path" not in r for r in model.info["rounds"])


def test_the_ledger_spends_rho_and_lists_the_public_input(runs):
    acc_0 = runs["none"][0]
    init = [r for r in ledger_rows(acc_0) if r[0].startswith("ppsyn/init/")]
    for name, (acc, model) in runs.items():
        total = sum(Fraction(e.rho) for e in acc.ledger)
        assert total <= Fraction(acc.rho_total) and float(total) == pytest.approx(acc.rho_total, rel=1e-9), name
        assert [r for r in ledger_rows(acc) if r[0].startswith("ppsyn/init/")] == init  # same initialisation
    acc, model = runs["pub"]
    (p,) = acc.public_inputs
    assert (p["name"], p["rows"], p["privacy"]) == ("pub.csv", 1500, "public input, no privacy cost")
    assert model.ledger["public_inputs"] == acc.public_inputs and model.info["public"]["name"] == "pub.csv"


def test_public_picks_spend_nothing_beyond_their_selection(runs):
    acc, model = runs["same"]
    rounds = model.info["rounds"]
    assert model.info["public_rounds"] == sum(r["source"] == "public" for r in rounds) > 0
    labels = {e.label for e in acc.ledger}
    for r in rounds:
        assert f"ppsyn/select/{r['round']}" in labels
        assert (f"ppsyn/measure/{r['round']}" in labels) == (r["source"] == "private")
        assert (r["rho_m"] == 0.0) == (r["source"] == "public")
    assert rounds[-1]["source"] == "private" and rounds[-1]["final"]  # the last round spends what remains
    measured = [e.rho for e in acc.ledger if e.label.startswith("ppsyn/measure/")]
    assert measured[-1] > max(measured[:-1], default=0.0)  # the saved budget went into the last measurement


@pytest.mark.parametrize("quality", ["group", "gain"])
def test_the_selection_sensitivity_is_the_max_over_every_option_offered(quality):
    """2 c_w for a public option, c_w (3 c_w for quality "gain") for a partition option: fails with c for public."""
    seen, offered = [], []

    def select(self, scores, rho, label, *, sensitivity=1.0, **kw):
        seen.append((label, sensitivity, len(scores)))
        return real(self, scores, rho, label, sensitivity=sensitivity, **kw)

    def scores(cliques, weights, *args):
        offered.append((len(seen), list(cliques), weights))
        return real_scores(cliques, weights, *args)

    def subset(*args, **kw):
        out = real_subset(*args, **kw)
        subsets.append(out)
        return out

    real, real_scores, real_subset, subsets = (
        ppsyn_steps.Spender.select,
        annealed.public_scores,
        annealed.candidate_subset,
        [],
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ppsyn_steps.Spender, "select", select)
        mp.setattr(annealed, "public_scores", scores)
        mp.setattr(annealed, "candidate_subset", subset)
        acc, model = fit(public_data(chain(1500, 1, flip=0.3), DOMAIN, "p.csv"), quality=quality, max_candidates=4)
    public_by_round = {i: (cl, w) for i, cl, w in offered}
    assert len(offered) == len(seen) - 1  # public options in every round but the last
    factor = {"group": 1.0, "gain": 3.0}[quality]
    for i, ((label, sens, n), small) in enumerate(zip(seen, subsets)):
        weights = selection.candidate_weights([(c, 1.0) for c in _triples()])
        expected = factor * max(weights[c] for c in small)
        if i in public_by_round:
            cl, w = public_by_round[i]
            expected = max(expected, 2.0 * max(w[c] for c in cl))
            assert n > len(cl)  # private and public options in one exponential mechanism
        assert sens == expected, (label, sens, expected)
    entries = [e for e in acc.ledger if e.label.startswith("ppsyn/select/")]
    assert [e.details["sensitivity"] for e in entries] == [s for _, s, _ in seen]
    if quality == "group":
        assert any(s == 2.0 * 9.0 for _, s, _ in seen)  # a public triple (weight 9) doubles the sensitivity


def _triples():
    import itertools

    return list(itertools.combinations(DOMAIN.attributes, 3))


def test_public_paths_are_computed_from_the_public_table_only():
    pub_codes = chain(1500, 1, flip=0.3)
    truth = NumpyEngine(pub_codes, DOMAIN)
    seen = []
    holder = {}

    def engine(synth):
        holder["eng"] = RecordingEngine(NumpyEngine(PRIVATE, DOMAIN), synth)
        holder["synth"] = synth
        return holder["eng"]

    def wrapped(counts, *args, **kw):
        eng, synth = holder["eng"], holder["synth"]
        assert synth.data_step is None  # no data step is running
        eng.planning = True  # and the private engine raises if it is read
        try:
            for cl, v in counts.items():
                assert np.array_equal(v, truth.marginals([cl])[cl].reshape(DOMAIN.project(cl).shape)), cl
                seen.append(cl)
            return real(counts, *args, **kw)
        finally:
            eng.planning = False

    real = ppsyn_steps.public_path_options
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(annealed, "public_path_options", wrapped)
        _, model = fit(public_data(pub_codes, DOMAIN, "p.csv"), engine=engine)
    assert seen and {step for step, _ in holder["eng"].calls} <= set(DATA_STEPS)
    assert any(r.get("path") == "public" for r in model.info["rounds"])  # a public-path partition was measured
    # the options are a function of the public marginal only: the same for any private table
    opts = real({("a", "b", "c"): truth.marginals([("a", "b", "c")])[("a", "b", "c")].reshape(3, 4, 5)}, 64)
    (o,) = opts.values()
    assert o and all(1 < x.parts < 60 for x in o)


@pytest.mark.parametrize("kw", [{"schedule": "note"}, {"mode": "paper"}])
def test_note_schedule_and_paper_mode_refuse_a_public_table_before_any_spend(kw):
    acc = Accountant(1.0)
    pub = public_data(chain(100, 1), DOMAIN, "p.csv")
    with pytest.raises(InputError, match="--public needs PPSyn-DP") as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            PPSyn(rounds=2, iters=10, **kw).fit(NumpyEngine(chain(100, 0), DOMAIN), acc, SeededNoise(0), public=pub)
    assert "\n" not in str(err.value) and acc.spent == 0 and not acc.ledger


# -- command line and Python API ----------------------------------------------------------------------
def test_cli_ppsyn_with_public(public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    out = tmp_path / "synth.csv"
    argv = [
        "synth",
        csv,
        "-e",
        "1",
        "-o",
        out,
        "-s",
        sch,
        "--public",
        pub,
        "-m",
        "ppsyn",
        "--iters",
        "30",
        "--seed",
        "0",
    ]
    code, text = run(argv, capsys)
    assert code == 0, text
    assert len(pd.read_csv(out)) > 0
    assert "public input, no privacy cost: public.csv (200 rows, sha256:" in text


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--schedule", "note"], "error: --public needs PPSyn-DP's annealed schedule, not schedule 'note'"),
        (
            ["-m", "ppsyn-paper", "--unsafe-as-published"],
            "error: --public is supported by aim, mst, ppsyn, not ppsyn-paper",
        ),
    ],
)
def test_cli_refusals_exit_2_one_line(extra, expected, public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    argv = ["synth", csv, "-e", "1", "-o", tmp_path / "o.csv", "-s", sch, "--public", pub, "-m", "ppsyn", "-q", *extra]
    code, text = run(argv, capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], text
    assert not (tmp_path / "o.csv").exists()


def test_synthesizer_api_ppsyn_with_public(public_files):
    from privsample.data.schema import Schema

    schema = Schema.from_dict(small_schema())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise: NOT private (a reproducible test)
        s = Synthesizer("ppsyn", epsilon=1, iters=30).fit(
            small_table(300, 0), schema=schema, public=small_table(200, 1), seed=0
        )
        assert len(s.sample(50, seed=0)) == 50
    (p,) = s.ledger.public_inputs
    assert p["rows"] == 200 and p["fingerprint"].startswith("sha256:")
    with pytest.raises(InputError, match="annealed schedule"):
        Synthesizer("ppsyn", epsilon=1, schedule="note").fit(
            small_table(300, 0), schema=schema, public=small_table(200, 1)
        )
