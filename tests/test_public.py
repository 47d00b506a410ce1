"""Public data for AIM (joint selection of public and private marginals): the ledger, the selection's
sensitivity, free public measurements, bad input, the command line and the Python API."""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import InputError, Synthesizer
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.aim import AIM, prior_cliques, public_fitting, public_scores, selection_sensitivity
from privsample.synth.public import public_data
from privsample.synth.selection import candidate_weights
from tests.cli import run
from tests.test_cli import small_schema, small_table

DOMAIN = pgm.Domain(["a", "b", "c", "d"], [3, 4, 5, 5])


def chain(n: int, seed: int, flip: float = 0.2) -> dict[str, np.ndarray]:
    """Codes of a chain a -> b -> c -> d; ``flip`` sets how often b departs from a."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < flip)) % 4
    c = (b * 2 + rng.integers(0, 2, n)) % 5
    d = (c + (rng.random(n) < 0.1)) % 5
    return {"a": a, "b": b, "c": c, "d": d}


def fit(public=None, seed=0, eps=2.0, **kw):
    from privsample.marginals import NumpyEngine

    acc = Accountant.from_epsilon_delta(eps, 1e-9)
    model = AIM(max_model_size=1.0, rounds=6, iters=60, **kw).fit(
        NumpyEngine(chain(3000, 0), DOMAIN), acc, SeededNoise(seed, quiet=True), public=public
    )
    return acc, model


def ledger_rows(acc):
    return [(e.label, e.rho) for e in acc.ledger]


@pytest.fixture(scope="module")
def runs():
    pub = chain(1500, 1, flip=0.3)  # another sample, with a weaker a-b link: biased
    perm = np.random.default_rng(2).permutation(1500)
    doubled = {k: np.concatenate([v[perm], v]) for k, v in pub.items()}  # other rows, the same shares
    return {
        "none": fit(),
        "pub": fit(public_data(pub, DOMAIN, "pub.csv")),
        "doubled": fit(public_data(doubled, DOMAIN, "doubled.csv")),
        "same": fit(public_data(chain(3000, 0), DOMAIN, "copy.csv")),  # the private table itself: public wins
    }


def test_public_rows_never_change_the_ledger(runs):
    (acc_p, m_p), (acc_d, m_d), (acc_0, _) = runs["pub"], runs["doubled"], runs["none"]
    assert ledger_rows(acc_p) == ledger_rows(acc_d)  # same labels and rho values
    assert m_p.info["rounds"] == m_d.info["rounds"] and m_p.info["public_rounds"] > 0  # public picks happened
    assert acc_p.public_inputs[0]["fingerprint"] != acc_d.public_inputs[0]["fingerprint"]
    assert (acc_p.public_inputs[0]["rows"], acc_d.public_inputs[0]["rows"]) == (1500, 3000)
    assert acc_p.public_inputs[0]["privacy"] == "public input, no privacy cost"
    for acc, _ in runs.values():  # every run spends exactly the budget, as without public data
        total = sum(Fraction(e.rho) for e in acc.ledger)
        assert total <= Fraction(acc.rho_total) and float(total) == pytest.approx(acc_0.spent, rel=1e-12)
    init = [r for r in ledger_rows(acc_0) if r[0].startswith("aim/init/")]
    assert [r for r in ledger_rows(acc_p) if r[0].startswith("aim/init/")] == init
    assert "public_inputs" not in acc_0.to_dict() and m_p.ledger["public_inputs"] == acc_p.public_inputs
    assert m_p.info["public"]["name"] == "pub.csv"


def test_public_measurements_are_free(runs):
    acc, model = runs["same"]
    rounds = model.info["rounds"]
    assert model.info["public_rounds"] == sum(r["source"] == "public" for r in rounds) > 0
    labels = {e.label for e in acc.ledger}
    for r in rounds:
        assert f"aim/select/{r['round']}" in labels
        assert (f"aim/measure/{r['round']}" in labels) == (r["source"] == "private")
    assert rounds[-1]["source"] == "private"  # the last round spends what remains on a private measurement
    assert "source" not in runs["none"][1].info["rounds"][0]


def test_selection_sensitivity_includes_the_public_scores(runs):
    weights = candidate_weights([(cl, 1.0) for cl in itertools.combinations("abcd", 2)])  # AIM's default
    top = max(weights.values())

    def sens(acc):
        return [e.details["sensitivity"] for e in acc.ledger if e.label.startswith("aim/select/")]

    with_public, without = sens(runs["pub"][0]), sens(runs["none"][0])
    # every clique is offered here (a tiny domain): 2 x the top weight while public candidates are offered,
    # the private top weight in the last round (private candidates only) and without public data
    assert with_public[:-1] == [2.0 * top] * (len(with_public) - 1) and with_public[-1] == top
    assert set(without) == {top}
    w = {("a",): 1.0, ("a", "b"): 3.0}
    assert selection_sensitivity([("a",), ("a", "b")], w, public=[("a",), ("a", "b")]) == 6.0
    assert selection_sensitivity([("a",), ("a", "b")], w, public=[("a",)]) == 3.0  # max over all offered
    assert selection_sensitivity([("a",)], w, public=[("a", "b")]) == 6.0
    assert selection_sensitivity([("a",), ("a", "b")], w) == 3.0


def test_a_public_score_moves_by_twice_its_weight():
    """The bound 2 c(cl) is reached: one added record moves both L1 terms, in opposite directions."""
    cl, w = ("a",), {("a",): 1.5}
    mu, share, total = np.array([2.0, 5.0]), np.array([0.6, 0.4]), 10.0  # public marginal: [6, 4]
    x = {cl: np.array([3, 4])}
    x1 = {cl: np.array([4, 4])}  # one record added to cell 0
    err = lambda x: np.array([np.abs(x[cl] - mu).sum()])  # noqa: E731
    q0 = public_scores([cl], w, err(x), x, {cl: share}, total)[0]
    q1 = public_scores([cl], w, err(x1), x1, {cl: share}, total)[0]
    assert abs(q1 - q0) == pytest.approx(2 * 1.5)


def test_a_public_table_on_another_domain_is_refused_before_any_spend():
    from privsample.marginals import NumpyEngine

    other = pgm.Domain(["a", "b", "c", "d"], [3, 4, 5, 6])
    pub = public_data(chain(100, 1), other, "p.csv")
    acc = Accountant(1.0)
    with pytest.raises(InputError, match="public table p.csv: its schema differs"):
        AIM(rounds=4, iters=10).fit(NumpyEngine(chain(100, 0), DOMAIN), acc, SeededNoise(0, quiet=True), public=pub)
    assert acc.spent == 0 and not acc.ledger
    with pytest.raises(InputError, match="public table q.csv: no records"):
        public_data({k: v[:0] for k, v in chain(10, 1).items()}, DOMAIN, "q.csv")


def test_public_candidates_keep_the_model_within_the_cap():
    """With joint selection a candidate must keep the junction tree within ``max_cells`` cells, fill-in included."""
    dom = pgm.Domain(["a", "b", "c", "d"], [10, 10, 10, 10])
    model = [("a", "b"), ("b", "c")]  # 210 cells (d on its own: 10); (c, d) extends the chain: 300; (a, c) fills in
    assert public_fitting(dom, model, [("c", "d"), ("a", "c"), ("a", "b")], 300) == [("c", "d"), ("a", "b")]
    assert public_fitting(dom, model, [("c", "d"), ("a", "c"), ("a", "b")], 299) == [("a", "b")]
    assert public_fitting(dom, model, [("c", "d"), ("a", "c")], 1010) == [("c", "d"), ("a", "c")]  # (a, b, c)


def test_public_prior_is_a_public_tree_and_spends_as_aim():
    """aim+pretrain: the public one-ways and a maximum spanning tree of public mutual information enter first;
    the rounds are AIM's private ones (AIM's sensitivity, no public rounds), the whole budget is spent, and the
    public table's rows never change the output (only its shares enter)."""
    pub = chain(1500, 1, flip=0.3)
    perm = np.random.default_rng(2).permutation(1500)
    doubled = {k: np.concatenate([v[perm], v]) for k, v in pub.items()}
    acc, m = fit(public_data(pub, DOMAIN, "pub.csv"), public_prior=True)
    acc2, m2 = fit(public_data(doubled, DOMAIN, "doubled.csv"), public_prior=True)
    acc0, _ = fit()
    prior = [tuple(cl) for cl in m.info["public_prior"]]
    assert prior[:4] == [("a",), ("b",), ("c",), ("d",)]
    assert set(prior[4:]) == {("a", "b"), ("b", "c"), ("c", "d")} and len(prior) == 7  # the chain: the MI tree
    assert m.info["public_rounds"] == 0 and all(r["source"] == "private" for r in m.info["rounds"])
    top = max(candidate_weights([(cl, 1.0) for cl in itertools.combinations("abcd", 2)]).values())
    assert {e.details["sensitivity"] for e in acc.ledger if e.label.startswith("aim/select/")} == {top}
    assert float(sum(Fraction(e.rho) for e in acc.ledger)) == pytest.approx(acc0.spent, rel=1e-12)
    assert ledger_rows(acc) == ledger_rows(acc2) and m.info["rounds"] == m2.info["rounds"]
    assert prior_cliques(public_data(pub, DOMAIN, "p"), [("a",), ("b",)]) == [("a",), ("b",)]  # no two-way: none


# -- command line and Python API ----------------------------------------------------------------------
AIM_FAST = ["--method", "aim", "--iters", "30", "--max-model-size", "1", "--seed", "0"]


def test_cli_synth_with_public(public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    out = tmp_path / "synth.csv"
    code, text = run(["synth", csv, "-e", "1", "-o", out, "-s", sch, "--public", pub, *AIM_FAST], capsys)
    assert code == 0, text
    assert len(pd.read_csv(out)) > 0
    assert "public input, no privacy cost: public.csv (200 rows, sha256:" in text


@pytest.mark.parametrize(
    "case, expected",
    [
        ("ppsyn-paper", "error: --public is supported by aim, mst, ppsyn, not ppsyn-paper"),
        ("no schema", "error: --public needs --schema"),
        ("missing column", "error: public table public.csv: column 'flag' is in the schema but not in the data"),
        ("empty", "error: public table public.csv: the table has no data rows"),
        ("nothing fits", "error: public table public.csv: no records"),
        ("absent", "error: public table public.csv: data file not found: "),
    ],
)
def test_cli_public_errors_exit_2_one_line(case, expected, public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    argv = ["synth", csv, "-e", "1", "-o", tmp_path / "o.csv", "-s", sch, "--public", pub, "-m", "aim", "-q"]
    if case == "ppsyn-paper":
        argv[argv.index("aim")] = "ppsyn-paper"
        argv.append("--unsafe-as-published")
    elif case == "no schema":
        argv = [a for a in argv if a not in ("-s", sch)]
    elif case == "missing column":
        small_table(50, 1).drop(columns=["flag"]).to_csv(pub, index=False)
    elif case == "empty":
        pub.write_text("color,size,flag\n")
    elif case == "nothing fits":
        pd.DataFrame({"color": ["pink"] * 5, "size": [1] * 5, "flag": ["y"] * 5}).to_csv(pub, index=False)
    elif case == "absent":
        pub.unlink()
    code, text = run(argv, capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], text
    assert not (tmp_path / "o.csv").exists()


def test_synthesizer_api_with_public(public_files, tmp_path):
    from privsample.data.schema import Schema

    schema = Schema.from_dict(small_schema())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise: NOT private (a reproducible test)
        s = Synthesizer("aim", epsilon=1, iters=30, max_model_size=1).fit(
            small_table(300, 0), schema=schema, public=small_table(200, 1), seed=0
        )
        assert len(s.sample(50, seed=0)) == 50
    (p,) = s.ledger.public_inputs
    assert p["rows"] == 200 and p["fingerprint"].startswith("sha256:") and p["privacy"].startswith("public input")
    assert "public input, no privacy cost" in str(s.ledger)
    s.save(tmp_path / "model.zip")
    assert privsample.load(tmp_path / "model.zip").ledger.public_inputs == [p]  # kept in model.json
    with pytest.raises(InputError, match="^public is supported by aim, mst, ppsyn, not ppsyn-paper"):
        Synthesizer("ppsyn-paper", epsilon=1, unsafe_as_published=True).fit(
            small_table(300, 0), schema=schema, public=small_table(200, 1)
        )


# -- the private table is not a public one -----------------------------------------------------------------
def same_table(how: str, csv, tmp_path):
    """The private CSV ``csv`` again, as a public table: the same path (spelt otherwise), a link or a copy."""
    import os
    import shutil

    if how == "same path":
        return csv
    if how == "spelt otherwise":
        return tmp_path / "." / csv.name
    if how == "symlink":
        (tmp_path / "link.csv").symlink_to(csv)
        return tmp_path / "link.csv"
    if how == "hard link":
        os.link(csv, tmp_path / "hard.csv")
        return tmp_path / "hard.csv"
    shutil.copyfile(csv, tmp_path / "copy.csv")  # a byte-identical copy
    return tmp_path / "copy.csv"


@pytest.mark.parametrize("budget", [False, True], ids=["", "budget-file"])
@pytest.mark.parametrize("how", ["same path", "spelt otherwise", "symlink", "hard link", "copy"])
def test_cli_refuses_the_private_input_as_public_before_any_charge(how, budget, public_files, tmp_path, capsys):
    from privsample.privacy.budget import Budget

    csv, _, sch = public_files
    pub = same_table(how, csv, tmp_path)
    out, model = tmp_path / "o.csv", tmp_path / "m.zip"
    argv = ["synth", csv, "-e", "1", "-o", out, "--save-model", model, "-s", sch, "--public", pub, "-m", "aim"]
    bf = tmp_path / "steward.budget.json"
    if budget:
        Budget.create(bf, epsilon=2, delta=1e-9)
        argv += ["--budget-file", bf]
    before = bf.read_text() if budget else None
    code, text = run(argv, capsys)
    lines = text.strip().splitlines()
    why = "is a byte-identical copy of" if how == "copy" else "is the private input itself (the same file)"
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: public table {pub.name} {why}"), text
    assert "must not overlap the private one" in lines[0]
    assert not out.exists() and not model.exists()
    if budget:
        assert bf.read_text() == before and Budget.open(bf).read()["releases"] == []


def test_api_refuses_the_private_table_as_public(public_files, tmp_path):
    from privsample.data.schema import Schema
    from privsample.api.synthesizer import synthesize
    from privsample.privacy.budget import Budget

    csv, _, _ = public_files
    schema = Schema.from_dict(small_schema())
    df = small_table(300, 0)
    bf = tmp_path / "steward.budget.json"
    Budget.create(bf, epsilon=2, delta=1e-9)
    before = bf.read_text()
    s = Synthesizer("aim", epsilon=1, iters=30, max_model_size=1, budget=bf)
    for data, public in [
        (df, df),
        (df, small_table(300, 0)),  # an equal DataFrame
        (csv, csv),
        (csv, same_table("copy", csv, tmp_path)),
    ]:
        with pytest.raises(InputError, match="must not overlap the private one"):
            s.fit(data, schema=schema, public=public)
        assert not s.fitted
        with pytest.raises(InputError, match="must not overlap the private one"):
            synthesize(data, epsilon=1, method="aim", schema=schema, public=public, budget=bf)
    assert bf.read_text() == before and Budget.open(bf).read()["releases"] == []
    assert not s._spent  # refused before the budget was marked spent: the same Synthesizer may fit
    with pytest.raises(InputError, match="must not overlap"):
        privsample.Synthesizer("mst", epsilon=1).fit(df, schema=schema, public=df.copy())
