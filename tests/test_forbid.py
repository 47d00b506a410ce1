"""Structural zeros (``forbid`` in the schema): parsing, fitting with fixed zeros, sampling, the ledger."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from privsample.data.forbid import forbid_codes, forbidden_bins
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.api.synthesizer import synthesize
from privsample.synth import numpy_md, pgm
from privsample.synth.model import SynthModel
from privsample.synth.zeros import StructuralZeros

RELS = ["Husband", "Wife", "Child", "Other"]
MARRIED = ["Married", "Single", "Divorced"]
FORBID = [
    {"sex": "Male", "relationship": "Wife"},
    {"sex": "Female", "relationship": "Husband"},
    {"relationship": ["Husband", "Wife"], "marital": ["Single", "Divorced"]},
    {"age": "0..15", "marital": "Married"},
]


def columns():
    return [
        Categorical("sex", ["Female", "Male"]),
        Categorical("relationship", RELS),
        Categorical("marital", MARRIED),
        Numeric("age", 0, 89, bins=9, integer=True),  # bins of ten years: 0–9, 10–19, ...
        Categorical("income", ["low", "high"]),
    ]


def schema(forbid=FORBID) -> Schema:
    return Schema(columns(), provenance="user", forbid=forbid)


def violations(df: pd.DataFrame) -> int:
    """Records breaking FORBID (ages 0–9 are the only whole bin inside 0..15)."""
    bad = (df.sex == "Male") & (df.relationship == "Wife")
    bad |= (df.sex == "Female") & (df.relationship == "Husband")
    bad |= df.relationship.isin(["Husband", "Wife"]) & df.marital.isin(["Single", "Divorced"])
    bad |= (df.age.astype(float) <= 9) & (df.marital == "Married")
    return int(bad.sum())


def toy_table(n=3000, seed=0) -> pd.DataFrame:
    """Records that respect FORBID; the forbidden cells are common under independence."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    age = rng.integers(0, 90, n)
    married = (age >= 18) & (rng.random(n) < 0.6)
    spouse = married & (rng.random(n) < 0.8)
    rel = np.where(spouse, np.where(sex == "Male", "Husband", "Wife"), rng.choice(["Child", "Other"], n))
    marital = np.where(married, "Married", rng.choice(["Single", "Divorced"], n))
    income = np.where(rng.random(n) < 0.3 + 0.3 * married, "high", "low")
    df = pd.DataFrame({"sex": sex, "relationship": rel, "marital": marital, "age": age, "income": income})
    assert violations(df) == 0
    return df


# -- the schema ---------------------------------------------------------------------------------------
def test_round_trip_dict_yaml_json(tmp_path):
    s = schema()
    assert s.forbid[2] == {"relationship": ["Husband", "Wife"], "marital": ["Single", "Divorced"]}
    again = Schema.from_dict(json.loads(json.dumps(s.to_dict())))
    assert again.forbid == s.forbid
    for name in ("s.yaml", "s.json"):
        s.save(tmp_path / name)
        assert Schema.load(tmp_path / name).forbid == s.forbid
    assert "forbid" not in Schema(columns(), provenance="user").to_dict()


def test_codes_and_ranges():
    s = schema()
    codes = forbid_codes(s)
    assert codes[0] == {"sex": (1,), "relationship": (1,)}
    assert codes[2] == {"relationship": (0, 1), "marital": (1, 2)}
    assert codes[3] == {"age": (0,), "marital": (0,)}  # only 0–9 lies entirely inside 0..15
    age = s["age"]
    assert forbidden_bins(age, "0..19") == (0, 1)
    assert forbidden_bins(age, "80..") == (8,)  # an open end is the column's bound
    assert forbidden_bins(Numeric("x", 0.0, 1.0, bins=4), "0.25..0.75") == (1, 2)


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"sexx": "Male", "relationship": "Wife"}, ["forbid entry #1", "unknown column 'sexx'", "did you mean 'sex'"]),
        ({"sex": "Mal", "relationship": "Wife"}, ["'Mal' is not a category of column 'sex'"]),
        ({"sex": "Male"}, ["names only column 'sex'", "2 or more columns"]),
        ({"age": "3..7", "sex": "Male"}, ["range '3..7' holds no whole bin of column 'age'"]),
        ({"age": "a..b", "sex": "Male"}, ["'a..b' is not a range"]),
        ({"age": "Male", "sex": "Male"}, ["not a number or a range"]),
        ({"sex": [], "relationship": "Wife"}, ["column 'sex' lists no value"]),
        ("sex", ["must be a mapping"]),
    ],
)
def test_bad_entries_one_line(entry, words):
    d = schema([]).to_dict()
    d["forbid"] = [entry]
    with pytest.raises(InputError) as exc:
        Schema.from_dict(d, source="schema file s.yaml")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("schema file s.yaml")
    for w in words:
        assert w in msg
    with pytest.raises(InputError):  # the Python API checks the same
        schema([entry])


def test_suggestions_are_refused_until_renamed(tmp_path):
    s = schema([])
    s.save(tmp_path / "d.json", suggested_forbid=[{"sex": "Male", "relationship": "Wife"}])
    with pytest.raises(InputError, match="NON-PRIVATE candidates"):
        Schema.load(tmp_path / "d.json")
    s.save(tmp_path / "d.yaml", suggested_forbid=[{"sex": "Male", "relationship": "Wife"}])
    text = (tmp_path / "d.yaml").read_text()
    assert "# - {sex: Male, relationship: Wife}" in text and "NON-PRIVATE SUGGESTIONS" in text
    assert Schema.load(tmp_path / "d.yaml").forbid == []  # a comment: never used


def test_suggest_forbid_finds_the_empty_cells():
    from privsample.data.discovery import draft_schema, suggest_forbid

    df = toy_table()
    found = suggest_forbid(df, draft_schema(df))
    assert {"relationship": "Wife", "sex": "Male"} in found or {"sex": "Male", "relationship": "Wife"} in found
    assert all(len(e) == 2 for e in found)


def test_public_schema_shows_forbid():
    import privsample

    s = privsample.Schema(columns(), forbid=FORBID[:1])
    assert s.forbid == FORBID[:1]
    assert "forbid: sex=Male, relationship=Wife" in str(s)
    assert s.reviewed().forbid == s.forbid


# -- fitting --------------------------------------------------------------------------------------------
def test_masked_cells_stay_zero_after_estimation():
    s = schema()
    domain = s.domain()
    zeros = StructuralZeros.from_schema(s, domain)
    rng = np.random.default_rng(0)
    # noisy measurements that put mass on forbidden cells: estimation must still give them exactly 0
    ms = [
        pgm.LinearMeasurement(rng.uniform(50, 150, domain.size(cl)), cl, stddev=5.0)
        for cl in [("sex", "relationship"), ("relationship", "marital"), ("marital", "age"), ("income",)]
    ]
    model = numpy_md.estimate(domain, ms, known_total=2000.0, iters=200, zeros=zeros)
    for cl in model.cliques:
        m = zeros.mask(cl)
        if m is not None:
            mu = np.asarray(model.marginals[cl].values)
            assert np.all(mu[m] == 0.0) and mu[~m].sum() > 0
    sr = np.asarray(model.project(("sex", "relationship")).datavector()).reshape(2, 4)
    assert sr[1, 1] == 0.0 and sr[0, 0] == 0.0
    # warm start keeps them at zero, as does the JAX-free dispatcher for any iteration count
    again = pgm.estimate(domain, ms, known_total=2000.0, iters=3000, warm_start=model, zeros=zeros)
    assert np.asarray(again.project(("sex", "relationship")).datavector()).reshape(2, 4)[1, 1] == 0.0
    assert set(zeros.cliques) <= {tuple(c) for c in again.cliques} | set()  # zeros' cliques are model cliques


def test_noisy_counts_of_forbidden_cells_are_zeroed():
    s = schema()
    zeros = StructuralZeros.from_schema(s, s.domain())
    M = pgm.LinearMeasurement(np.ones(8), ("sex", "relationship"), stddev=1.0)
    (Z,) = zeros.zero_measurements([M])
    assert np.asarray(Z.noisy_measurement).reshape(2, 4)[1, 1] == 0 and Z.noisy_measurement.sum() == 6


def test_tol_is_refused_with_zeros():
    s = schema()
    zeros = StructuralZeros.from_schema(s, s.domain())
    M = pgm.LinearMeasurement(np.ones(8), ("sex", "relationship"), stddev=1.0)
    with pytest.raises(InputError, match="tolerance"):
        pgm.estimate(s.domain(), [M], known_total=8.0, iters=10, tol=1e-3, zeros=zeros)


FAST = {
    "mst": {"iters": 300},
    "aim": {"rounds": 12, "iters": 300},
    "ppsyn": {"rounds": 10, "iters": 300},
}


@pytest.fixture(scope="module")
def fits():
    df = toy_table()
    out = {}
    for method, opts in FAST.items():
        with pytest.warns(UserWarning, match="NOT differentially private"):
            a = synthesize(df, epsilon=1.0, schema=schema(), method=method, method_options=opts, seed=3, sample=False)
            b = synthesize(df, epsilon=1.0, schema=schema([]), method=method, method_options=opts, seed=3, sample=False)
        out[method] = (a, b)
    return out


@pytest.mark.parametrize("method", list(FAST))
def test_no_synthetic_record_violates(fits, method, tmp_path):
    with_zeros, without = fits[method]
    draw = with_zeros.model.sample_table(50_000, np.random.default_rng(0))
    assert violations(draw) == 0
    # the constraint bites: the same fit without it draws forbidden records
    assert violations(without.model.sample_table(50_000, np.random.default_rng(0))) > 0
    # saved and loaded (JSON + npz), the model still never draws them
    path = with_zeros.model.save(tmp_path / "m")
    loaded = SynthModel.load(path)
    assert loaded.schema.forbid == FORBID
    assert violations(loaded.sample_table(20_000, np.random.default_rng(1))) == 0


@pytest.mark.parametrize("method", list(FAST))
def test_constraints_cost_no_budget(fits, method):
    with_zeros, without = fits[method]
    a, b = with_zeros.ledger["summary"], without.ledger["summary"]
    assert a["rho_spent"] == pytest.approx(b["rho_spent"]) and a["rho_spent"] == pytest.approx(a["rho_total"])
    if method == "mst":  # a fixed schedule: the same spends, entry by entry
        spends = [(e["label"], e["rho"]) for e in with_zeros.model.ledger["entries"]]
        assert spends == [(e["label"], e["rho"]) for e in without.model.ledger["entries"]]


def test_size_check_counts_the_zero_cliques():
    from privsample.synth.aim import AIM

    big = Schema(
        [Categorical(f"c{i}", [str(v) for v in range(30)]) for i in range(4)],
        provenance="user",
        forbid=[{"c0": "0", "c1": "0", "c2": "0", "c3": "0"}],
    )
    AIM(max_model_size=1.0).check_size(big.domain())  # the one-way model alone fits
    with pytest.raises(InputError, match="forbid"):
        AIM(max_model_size=1.0).check_size(big.domain(), big)  # 30^4 cells of the zeros' clique do not


# -- the command line ---------------------------------------------------------------------------------------
def test_cli_synth_respects_forbid_and_refuses_bad_entries(tmp_path, capsys):
    import yaml

    from privsample.cli import main

    def run(argv) -> int:
        try:
            main([str(a) for a in argv])
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
        return 0

    csv, sch, out = tmp_path / "d.csv", tmp_path / "s.yaml", tmp_path / "o.csv"
    toy_table(1000).to_csv(csv, index=False)
    sch.write_text(yaml.safe_dump(schema().to_dict()))
    assert run(["synth", csv, "-s", sch, "-o", out, "--epsilon", 2, "--method", "mst", "--rows", 5000, "--quiet"]) == 0
    assert violations(pd.read_csv(out)) == 0
    bad = schema().to_dict()
    bad["forbid"] = [{"sex": "Male", "relationshp": "Wife"}]
    sch.write_text(yaml.safe_dump(bad))
    out.unlink()
    capsys.readouterr()
    assert run(["synth", csv, "-s", sch, "-o", out, "--epsilon", 2, "--method", "mst", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown column 'relationshp'" in err and "Traceback" not in err and not out.exists()
