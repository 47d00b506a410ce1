"""Workload error and the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mbi import Domain

from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.evaluation.report import NON_PRIVATE_NOTICE, write_report
from privsample.evaluation.tables import OUTSIDE_LABEL, evaluate_tables, real_domain, schema_loss
from privsample.evaluation.workload import (
    all_cliques,
    marginal_counts,
    marginal_error,
    summary,
    workload_error,
    workload_errors,
)
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise, gaussian_measure
from tests.conftest import shared_file


def _engine(cols: dict[str, list[int]], sizes: dict[str, int]) -> NumpyEngine:
    return NumpyEngine({a: np.asarray(v) for a, v in cols.items()}, Domain(list(sizes), list(sizes.values())))


SIZES = {"a": 2, "b": 3, "c": 2}


@pytest.fixture
def small_pair():
    real = _engine({"a": [0, 0, 1, 1], "b": [0, 1, 2, 2], "c": [0, 1, 0, 1]}, SIZES)
    synth = _engine({"a": [0, 1, 1, 1, 1, 0, 0, 0], "b": [0, 0, 0, 0, 1, 1, 2, 2], "c": [1] * 8}, SIZES)
    return real, synth


def test_all_cliques():
    assert all_cliques(["x", "y", "z"], 2) == [("x", "y"), ("x", "z"), ("y", "z")]
    assert len(all_cliques([f"c{i}" for i in range(14)], 3)) == 364
    assert all_cliques(["x"], 2) == []


def test_marginal_counts():
    codes = {"a": np.array([0, 1, 1]), "b": np.array([2, 0, 2])}
    m = marginal_counts(codes, {"a": 2, "b": 3}, ("b", "a"))
    np.testing.assert_array_equal(m, [[0, 1], [0, 0], [1, 1]])
    with pytest.raises(InputError):
        marginal_counts(codes, {"a": 2, "b": 3}, ("zz",))


def test_identical_tables_have_zero_error(small_pair):
    real, _ = small_pair
    same = _engine({a: real.codes(a)[::-1].tolist() * 3 for a in SIZES}, SIZES)  # same distribution, other n
    errs = workload_errors(real, same, all_cliques(list(SIZES), 2) + all_cliques(list(SIZES), 3))
    assert all(v == 0.0 for v in errs.values())
    assert workload_error(real, same, [("a",), ("a", "b", "c")]) == 0.0


def test_disjoint_supports_have_error_two():
    real = _engine({"a": [0, 0, 0], "b": [1, 2, 1], "c": [0, 0, 0]}, SIZES)
    synth = _engine({"a": [1, 1], "b": [0, 0], "c": [1, 1]}, SIZES)
    errs = workload_errors(real, synth, all_cliques(list(SIZES), 1) + all_cliques(list(SIZES), 2))
    assert all(v == 2.0 for v in errs.values())


def test_hand_computed_case(small_pair):
    real, synth = small_pair
    errs = workload_errors(real, synth, [("a",), ("b",), ("c",), ("a", "b")])
    # a: real (1/2, 1/2), synth (1/2, 1/2) -> 0
    assert errs[("a",)] == pytest.approx(0.0)
    # b: real (1/4, 1/4, 1/2), synth (4/8, 2/8, 2/8) -> 1/4 + 0 + 1/4
    assert errs[("b",)] == pytest.approx(0.5)
    # c: real (1/2, 1/2), synth (0, 1) -> 1
    assert errs[("c",)] == pytest.approx(1.0)
    # (a, b): real {(0,0):1/4, (0,1):1/4, (1,2):1/2}; synth {(0,0):1/8, (1,0):3/8, (1,1):1/8, (0,1):1/8, (0,2):2/8}
    # |1/4-1/8| + |1/4-1/8| + |1/2-0| + 3/8 + 1/8 + 2/8 = 1/8 + 1/8 + 1/2 + 3/8 + 1/8 + 1/4 = 1.5
    assert errs[("a", "b")] == pytest.approx(1.5)
    assert marginal_error(np.array([1, 1, 2]), np.array([4, 2, 2])) == pytest.approx(0.5)
    assert workload_error(real, synth, [("a",), ("b",), ("c",)]) == pytest.approx(0.5)


def test_errors_on_mismatch(small_pair):
    real, _ = small_pair
    other = _engine({"a": [0], "b": [0], "c": [3]}, {"a": 2, "b": 3, "c": 4})
    with pytest.raises(InputError):
        workload_errors(real, other, [("c",)])
    empty = _engine({"a": [], "b": [], "c": []}, SIZES)
    with pytest.raises(InputError):
        workload_errors(real, empty, [("a",)])


def test_summary_sampling(small_pair):
    real, synth = small_pair
    s = summary(real, synth, ks=(1, 2, 3, 4))
    assert set(s) == {1, 2, 3}
    assert s[1]["mean"] == pytest.approx(0.5) and s[1]["max"] == pytest.approx(1.0) and s[1]["worst"] == ("c",)
    assert s[2]["n_cliques"] == 3 and not s[2]["sampled"]
    t = summary(real, synth, ks=(2,), max_cliques=2, rng=np.random.default_rng(1))
    assert t[2]["n_cliques"] == 2 and t[2]["n_total"] == 3 and t[2]["sampled"]
    assert len(set(t[2]["errors"])) == 2
    assert (
        summary(real, synth, ks=(2,), max_cliques=2, rng=5)[2]["errors"].keys()
        == summary(real, synth, ks=(2,), max_cliques=2, rng=5)[2]["errors"].keys()
    )


@pytest.fixture(scope="module")
def adult_engines():
    path = shared_file("adult.csv")
    sizes = json.loads(shared_file("adult-domain.json").read_text())
    arr = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    dom = Domain(list(sizes), list(sizes.values()))
    real = NumpyEngine({a: arr[:, i] for i, a in enumerate(sizes)}, dom)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(arr), size=5000)
    codes = {a: arr[rows, i].copy() for i, a in enumerate(sizes)}
    codes["race"] = rng.permutation(codes["race"])
    synth = NumpyEngine(codes, dom)
    return real, synth, sizes


def test_adult_triples(adult_engines):
    real, synth, sizes = adult_engines
    s = summary(real, synth, ks=(3,))
    assert s[3]["n_cliques"] == 364 and 0 < s[3]["mean"] < s[3]["max"] <= 2


# -- report -------------------------------------------------------------------------------------
def _small_schema() -> Schema:
    return Schema(
        [
            Categorical("a", ("no", "yes")),
            Numeric("b", 0, 3, bins=3, integer=True),
            Categorical("c", ("x<y",), other="(other)"),
        ]
    )


def test_report_written_with_sections(tmp_path, small_pair):
    real, synth = small_pair
    acc = Accountant.from_epsilon_delta(1.0, 1e-6)
    gaussian_measure(acc, SeededNoise(0, quiet=True), np.array([1, 2]), 0.001, "1-way a", measured="a")
    out = tmp_path / "sub" / "report.html"
    write_report(
        out,
        real,
        synth,
        _small_schema(),
        title="Test <report>",
        ledger=acc.to_dict(),
        extra={"method": "unit-test", "epsilon": 1.0},
    )
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "Test &lt;report&gt;" in page and "<report>" not in page
    for section in (
        "Workload error",
        "1-way",
        "2-way",
        "3-way",
        "Worst 1-way marginals",
        "Worst 2-way marginals",
        "Error per column pair",
        "Privacy ledger",
        "1-way a",
        "Run details",
        "unit-test",
        "epsilon-equivalent",
    ):
        assert section in page, section
    assert page.count("data:image/png;base64,") == 3
    assert "NOT PRIVATE" in page  # seeded noise in the ledger
    assert "http://" not in page and "https://" not in page  # self-contained
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]


def test_report_private_ledger_has_no_banner(tmp_path, small_pair):
    real, synth = small_pair
    ledger = {
        "summary": {
            "rho_total": 0.1,
            "rho_spent": 0.05,
            "delta_slack": 0.0,
            "delta_spent": 0.0,
            "target_epsilon_delta": [1.0, 1e-6],
            "epsilon_spent": 0.8,
            "neighbouring": "add/remove one record",
            "private": True,
        },
        "entries": [
            {
                "label": "x",
                "rho": 0.05,
                "mechanism": "discrete Gaussian",
                "measured": "a",
                "noise_scale": 3.2,
                "delta": 0.0,
                "private": True,
                "details": {},
            }
        ],
    }
    out = tmp_path / "r.html"
    write_report(out, real, synth, title="ok", ledger=ledger)
    page = out.read_text()
    assert "NOT PRIVATE" not in page and "Privacy ledger" in page
    # a private release's report still holds exact statistics of the real data: the banner opens every page
    assert page.index("<body><div class='banner real' role='alert'>" + NON_PRIVATE_NOTICE) < page.index("<h1>")
    assert NON_PRIVATE_NOTICE == "Contains non-private statistics of the real data \u2014 do not release"


def test_report_failure_leaves_no_file(tmp_path, small_pair, monkeypatch):
    real, synth = small_pair
    out = tmp_path / "r.html"
    import privsample.evaluation.report as report

    def boom(*a, **k):
        raise RuntimeError("plotting failed")

    monkeypatch.setattr(report, "_plot_pairs", boom)
    with pytest.raises(RuntimeError):
        write_report(out, real, synth, title="x")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()

    # a failure while writing (after the temporary file exists) also leaves nothing behind
    def bad_write(self, text, *a, **k):
        with open(self, "w") as fh:
            fh.write(text[:10])
        raise OSError("disk full")

    monkeypatch.setattr(Path, "write_text", bad_write)
    with pytest.raises(OSError):
        write_report(out, real, synth, title="x")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_report_on_adult(tmp_path, adult_engines):
    real, synth, _ = adult_engines
    write_report(tmp_path / "adult.html", real, synth, title="Adult")
    assert (tmp_path / "adult.html").stat().st_size > 10_000


# -- scoring on the real table's own values ----------------------------------------------------------
def _varied(n=400, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "month": rng.integers(4, 72, n),
            "status": rng.choice(["A11", "A12", "A13", "A14"], n),
            "amount": rng.lognormal(7, 1, n).round(),
            "rate": rng.integers(1, 5, n),
        }
    )


def test_values_the_real_table_lacks_get_the_outside_code():
    real = pd.DataFrame({"num": np.arange(30, dtype=float), "cat": ["a", "b", "2"] * 10})
    dom = real_domain(real)
    num, cat = dom["num"], dom["cat"]
    assert num.kind == "numeric" and cat.kind == "categorical"
    assert num.labels()[-1] == OUTSIDE_LABEL and cat.size == 4  # a, b, 2, outside (no nulls in the real table)
    codes = dom.encode(real)
    assert (codes["num"] != num.outside_code).all() and (codes["cat"] != cat.outside_code).all()
    syn = pd.DataFrame(
        {
            "num": pd.Series(["(other)", "x", 1e9, None, "-1", "29"], dtype=object),
            "cat": pd.Series(["(other)", "c", None, 2.0, "2", "a"], dtype=object),
        }
    )
    s = dom.encode(syn)  # never raises on a value
    assert s["num"].tolist()[:5] == [num.outside_code] * 5 and s["num"][5] != num.outside_code
    assert s["cat"].tolist()[:3] == [cat.outside_code] * 3
    assert s["cat"][3] == s["cat"][4] == cat.categories.index("2")  # 2.0 and "2" are the real value 2


def test_point_mass_gets_its_own_code():
    real = pd.DataFrame({"gain": [0] * 90 + list(range(100, 3100, 100))})  # 31 distinct values: numeric
    dom = real_domain(real)
    assert dom["gain"].kind == "numeric" and dom["gain"].points == (0.0,)
    spread = pd.DataFrame({"gain": np.linspace(1, 60, 100).round()})  # inside the first bin, never exactly 0
    ev = evaluate_tables(real, spread, ks=(1,))
    # 75% of the real mass sits on 0, none of the synthetic (without the point, the first bin would hide it: 0.48)
    assert ev.summary[1]["mean"] == pytest.approx(0.75 + (1 - 1 / 120) + 29 / 120)
    assert ev.outside["gain"] == 0.0


def test_synthetic_catch_all_in_a_numeric_column_scores_as_error():
    real = _varied()
    syn = real.copy()
    syn["month"] = syn["month"].astype(object)
    syn.loc[: len(syn) // 2 - 1, "month"] = "(other)"
    ev = evaluate_tables(real, syn, ks=(1, 2))
    assert ev.outside["month"] == pytest.approx(0.5) and ev.outside["status"] == 0.0
    assert ev.summary[1]["errors"][("month",)] == pytest.approx(1.0, abs=0.15)  # half the mass moved outside


def test_catch_all_only_schema_does_not_hide_the_loss():
    """A schema that merges everything into the catch-all scores ~0 on its own domain; the headline says 2."""
    real = _varied()
    syn = pd.DataFrame({c: ["(other)"] * 300 for c in real.columns})
    schema = Schema([Categorical(c, (), other="(other)") for c in real.columns], provenance="private")
    ev = evaluate_tables(real, syn, schema, ks=(1, 2))
    assert ev.schema_summary[2]["mean"] < 0.05  # what the schema's own domain sees: nothing
    assert ev.summary[2]["mean"] > 1.9 and ev.summary[1]["mean"] > 1.9  # the headline: everything lost
    assert [(c.column, c.merged, c.clipped) for c in ev.loss] == [(c, 1.0, 0.0) for c in real.columns]


def test_schema_loss_shares_on_a_constructed_table():
    real = pd.DataFrame(
        {
            "cat": pd.Series(["a"] * 5 + ["b"] * 3 + ["c", None], dtype=object),  # c and the null: merged (2/10)
            "num": pd.Series([1, 2, 3, 4, 5, 11, 12, -1, "x", None], dtype=object),  # 3 clipped, x and null merged
            "ok": pd.Series(list("pqpqpqpqpq"), dtype=object),
        }
    )
    schema = Schema(
        [Categorical("cat", ("a", "b")), Numeric("num", 0, 10, bins=2), Categorical("ok", ("p", "q"))],
        provenance="user",
    )
    loss = {c.column: c for c in schema_loss(real, schema)}
    assert (loss["cat"].merged, loss["cat"].clipped) == (pytest.approx(0.2), 0.0)
    assert (loss["num"].merged, loss["num"].clipped) == (pytest.approx(0.2), pytest.approx(0.3))
    assert loss["num"].lost == pytest.approx(0.5) and loss["num"].kind == "numeric"
    assert (loss["ok"].merged, loss["ok"].clipped) == (0.0, 0.0)
    # nullable columns hold their missing values; the catch-all label itself is not a loss
    schema2 = Schema(
        [
            Categorical("cat", ("a", "b"), nullable=True, other="c"),
            Numeric("num", -1, 12, nullable=True),
            Categorical("ok", ("p", "q")),
        ],
        provenance="user",
    )
    loss2 = {c.column: c for c in schema_loss(real, schema2)}
    assert loss2["cat"].merged == 0.0 and loss2["num"].merged == pytest.approx(0.1) and loss2["num"].clipped == 0.0


def test_headline_counts_what_the_schema_merges():
    """A synthetic table that reproduces the real one exactly as the schema sees it (rare values merged into the
    catch-all) has error 0 on the schema's domain and twice the merged share on the real domain."""
    real = pd.DataFrame({"cat": ["a"] * 60 + ["b"] * 30 + ["c"] * 6 + ["d"] * 4, "x": ["u", "v"] * 50})
    schema = Schema(
        [Categorical("cat", ("a", "b"), other="(other)"), Categorical("x", ("u", "v"))], provenance="private"
    )
    syn = real.copy()
    syn.loc[syn["cat"].isin(["c", "d"]), "cat"] = "(other)"
    ev = evaluate_tables(real, syn, schema, ks=(1,))
    assert ev.schema_summary[1]["errors"][("cat",)] == 0.0
    assert ev.summary[1]["errors"][("cat",)] == pytest.approx(2 * 0.10)
    assert {c.column: c.merged for c in ev.loss} == {"cat": pytest.approx(0.10), "x": 0.0}


def test_report_shows_the_loss_table(tmp_path):
    real = _varied()
    syn = pd.DataFrame({c: ["(other)"] * 300 for c in real.columns})
    schema = Schema([Categorical(c, (), other="(other)") for c in real.columns], provenance="private")
    ev = evaluate_tables(real, syn, schema, ks=(1, 2))
    out = tmp_path / "r.html"
    write_report(
        out, ev.real_engine, ev.synth_engine, ev.domain, title="t", evaluation=ev, schema_name="s.yaml", ks=(1, 2)
    )
    page = out.read_text()
    for section in (
        "What is lost, per column",
        "real records merged by s.yaml",
        "Workload error on the domain of s.yaml",
        "synthetic records outside the real values",
    ):
        assert section in page, section
    assert page.count("100.00%") >= 2 * len(real.columns)


_cell = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["(other)", "A11", "nan", "inf", "7"]),
)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(_cell, _cell, _cell, _cell), min_size=1, max_size=12))
def test_evaluation_never_fails_on_a_value(rows):
    real = _varied(120)
    syn = pd.DataFrame([list(r) for r in rows], columns=list(real.columns), dtype=object)
    schema = Schema(
        [
            Numeric("month", 0, 100, bins=4, integer=True),
            Categorical("status", ("A11",)),
            Numeric("amount", 0, 10, bins=2),
            Categorical("rate", ("1", "2")),
        ],
        provenance="user",
    )
    for sch in (None, schema):
        ev = evaluate_tables(real, syn, sch, ks=(1, 2))
        assert all(0.0 <= v["mean"] <= 2.0 + 1e-12 for v in ev.summary.values())
