"""Person-level runs end to end (``--privacy-unit`` / ``privacy_unit=``): the public checks before any spend, the
released table and model, the ledger's unit, the hint on id-like columns, and budget files for people."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample.errors import ContributionBoundWarning, InputError, PrivacyUnitHint
from privsample.privacy.budget import Budget
from tests.cli import invoke

FAST = ["--method", "mst", "--iters", "20"]


def visits(seed: int = 0, people: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(0.25, people), 60)
    pid = np.repeat([f"P{i:04d}" for i in range(people)], sizes)
    n = len(pid)
    return pd.DataFrame(
        {
            "patient": pid,
            "sex": np.repeat(rng.choice(["F", "M"], people), sizes),
            "dept": rng.choice(["a", "b", "c"], n),
            "cost": rng.integers(10, 500, n),
        }
    )


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "visits.csv"
    visits().to_csv(path, index=False)
    return path


def run(argv, capsys) -> tuple[int, str]:
    code, out, err = invoke(argv, capsys)
    return code, " ".join((out + err).split())


def test_a_person_level_run_writes_no_unit_column_and_states_the_unit(table, tmp_path, capsys):
    out, model = tmp_path / "out.csv", tmp_path / "model.zip"
    code, text = run(
        [
            "synth",
            table,
            "-o",
            out,
            "--epsilon",
            4,
            "--privacy-unit",
            "patient",
            "--max-rows-per-unit",
            4,
            "--save-model",
            model,
            *FAST,
        ],
        capsys,
    )
    assert code == 0, text
    assert "patient" not in pd.read_csv(out).columns
    assert "at most 4 rows per person (given)" in text and "bounding removes" in text and "of the rows" in text
    assert "neighbours: add/remove one person (≤ 4 rows of patient)" in text
    assert "looks like a person's identifier" not in text
    fitted = privsample.load(model)
    assert fitted.ledger.summary["unit"] == {"column": "patient", "max_rows": 4}
    assert fitted.model.params["unit"]["k"] == 4 and not fitted.model.params["unit"]["chosen"]
    labels = [e["label"] for e in fitted.ledger.entries]
    assert labels[0] == "unit: rows per person"


def test_python_names_the_bound_and_chooses_k(tmp_path):
    with pytest.warns(ContributionBoundWarning, match="rows per person \\(chosen privately\\)"):
        res = privsample.synthesize(visits(), epsilon=2, method="mst", privacy_unit="patient", seed=0)
    assert "patient" not in res.table.columns
    k = res.model.params["unit"]["k"]
    assert res.ledger.summary["unit"] == {"column": "patient", "max_rows": k}
    from privsample.marginals.bounding import UNIT_GRID

    assert k in UNIT_GRID


def test_a_column_named_like_an_id_gets_one_hint(table, tmp_path, capsys):
    code, text = run(["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 2, *FAST], capsys)
    assert code == 0 and text.count("column 'patient' looks like a person's identifier") == 1, text
    assert "--privacy-unit patient" in text
    with pytest.warns(PrivacyUnitHint, match="privacy_unit patient"):
        privsample.synthesize(visits(), epsilon=2, method="mst", seed=0)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-rows-per-unit", 3], "--max-rows-per-unit needs --privacy-unit"),
        (["--privacy-unit", "nobody"], "a budget file for people (add/remove one person of patient) takes runs"),
        (["--privacy-unit", "patient", "--max-rows-per-unit", 0], "--max-rows-per-unit must be a whole number >= 1"),
        (["--privacy-unit", "patient", "--engine", "duckdb"], "--privacy-unit needs the numpy engine"),
    ],
)
def test_bad_unit_options_are_refused_before_any_spend(table, tmp_path, capsys, extra, message):
    budget = tmp_path / "b.json"
    Budget.create(budget, epsilon=5, delta=1e-6, neighbouring="person:patient")
    code, text = run(
        ["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 1, "--budget-file", budget, *extra, *FAST], capsys
    )
    assert code == 2 and message in text, text
    assert not (tmp_path / "o.csv").exists()
    assert Budget.open(budget).remaining()[0] == pytest.approx(Budget.open(budget).remaining()[0])
    spent = [r for r in Budget.open(budget).read()["releases"] if r.get("status") != "cancelled"]
    assert not spent


def test_a_unit_column_missing_from_the_header_is_refused(table, tmp_path, capsys):
    code, text = run(["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 1, "--privacy-unit", "nobody"], capsys)
    assert code == 2 and f"--privacy-unit 'nobody' is not a column of {table}" in text, text


def test_python_refuses_as_the_command_does():
    with pytest.raises(InputError, match="max_rows_per_unit needs privacy_unit"):
        privsample.synthesize(visits(), epsilon=1, max_rows_per_unit=3)
    with pytest.raises(InputError, match="privacy_unit 'nobody' is not a column of the input table"):
        privsample.synthesize(visits(), epsilon=1, privacy_unit="nobody")


def test_the_unit_column_is_refused_in_a_reviewed_schema(table, tmp_path, capsys):
    schema = tmp_path / "s.yaml"
    privsample.Schema.draft(pd.read_csv(table)).reviewed().save(schema)
    code, text = run(
        ["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 1, "--schema", schema, "--privacy-unit", "patient"],
        capsys,
    )
    assert code == 2 and "is a column of s.yaml: the unit's column is never released" in text, text


def test_a_record_level_private_schema_does_not_carry_over(table, tmp_path, capsys):
    schema = tmp_path / "p.yaml"
    assert run(["schema", table, "-o", schema, "--private-epsilon", 1, "--seed", 0], capsys)[0] == 0
    code, text = run(
        ["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 1, "--schema", schema, "--privacy-unit", "patient"],
        capsys,
    )
    assert code == 2 and "discovered privately for add/remove one record, not one person" in text, text


# -- budget files for people -------------------------------------------------------------------------------------
def _charges(path) -> list[dict]:
    return [r for r in json.loads(path.read_text())["records"] if r["kind"] == "reserve"]


def test_a_person_file_takes_person_runs_of_its_column_only(table, tmp_path, capsys):
    people = tmp_path / "people.json"
    Budget.create(people, epsilon=20, delta=1e-6, neighbouring="person:patient")
    ok = ["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 4, "--budget-file", people, *FAST]
    code, text = run(ok + ["--privacy-unit", "patient"], capsys)
    assert code == 0, text
    assert _charges(people)[0]["neighbouring"] == "add/remove one person of patient"
    code, text = run(ok, capsys)  # a record-level run
    assert code == 2 and "takes runs with --privacy-unit patient only" in text, text
    assert len(_charges(people)) == 1


def test_a_person_run_in_a_record_file_counts_four_times_or_is_refused(table, tmp_path, capsys):
    rows = tmp_path / "rows.json"
    Budget.create(rows, epsilon=10, delta=1e-6)
    base = [
        "synth",
        table,
        "-o",
        tmp_path / "o.csv",
        "--epsilon",
        1,
        "--budget-file",
        rows,
        "--privacy-unit",
        "patient",
    ]
    code, text = run(base + FAST, capsys)  # private discovery: delta > 0
    assert code == 2 and "which has no charge for records here" in text, text
    schema = tmp_path / "s.yaml"
    privsample.Schema.draft(pd.read_csv(table).drop(columns=["patient"])).reviewed().save(schema)
    code, text = run(base + ["--schema", schema, *FAST], capsys)
    assert code == 0, text
    charge = _charges(rows)[-1]
    from privsample.privacy.conversion import cdp_rho

    assert charge["rho"] == pytest.approx(4 * cdp_rho(1, 1e-9))


def test_relations_of_person_ledgers():
    from privsample.privacy.relations import person_neighbours, relation_of

    assert relation_of("add/remove one person (≤ 7 rows of patient)") == person_neighbours("patient")
    assert relation_of("add/remove one person (≤ ⟦7⟧ rows of patient)") == person_neighbours("patient")
    assert relation_of(person_neighbours("x")) == "add/remove one person of x"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert relation_of("add/remove one record") == "add/remove one record"


def test_plan_shows_the_noise_at_each_k(table, capsys):
    from privsample.api.plan import plan

    p = plan(table, epsilon="1", rows=10_000, privacy_unit="patient", probe=False)
    assert "patient" not in p.columns
    f = p.unit["forecast"][0]
    assert f["sigma_2way"]["10"] == pytest.approx(10 * f["sigma_2way"]["1"])
    assert f["afforded_k"] * f["sigma_2way"]["1"] <= 0.01 * 10_000 < (f["afforded_k"] + 1) * f["sigma_2way"]["1"]
    code, text = run(["plan", table, "--epsilon", 1, "--privacy-unit", "patient"], capsys)
    assert code == 0 and "Privacy unit 'patient'" in text, text
    code, text = run(["plan", table, "--epsilon", 1, "--privacy-unit", "nobody"], capsys)
    assert code == 2 and "--privacy-unit 'nobody' is not a column of" in text


def test_a_person_level_private_schema_carries_its_k_over(table, tmp_path, capsys):
    schema = tmp_path / "p.yaml"
    code, text = run(
        ["schema", table, "-o", schema, "--private-epsilon", 4, "--privacy-unit", "patient", "--max-rows-per-unit", 5],
        capsys,
    )
    assert code == 0 and "neighbours: add/remove one person (≤ 5 rows of patient)" in text, text
    assert "patient" not in [c.name for c in privsample.Schema.load(schema).columns]
    base = ["synth", table, "-o", tmp_path / "o.csv", "--epsilon", 6, "--schema", schema, *FAST]
    code, text = run(base + ["--privacy-unit", "patient", "--max-rows-per-unit", 3], capsys)
    assert code == 2 and "must be 5 with it" in text, text
    code, text = run(base, capsys)
    assert code == 2 and "not one record" in text, text
    code, text = run(base + ["--privacy-unit", "patient"], capsys)
    assert code == 0 and "neighbours: add/remove one person (≤ 5 rows of patient)" in text, text
    code, text = run(["schema", table, "-o", tmp_path / "d.yaml", "--privacy-unit", "patient"], capsys)
    assert code == 2 and "--privacy-unit needs --private-epsilon" in text


def test_fresh_unit_ids_group_rows_as_the_profile_says(tmp_path, table, capsys):
    real = visits()
    res = privsample.synthesize(real, epsilon=4, method="mst", privacy_unit="patient", unit_ids="fresh", seed=0)
    t = res.table
    assert list(t.columns)[0] == "patient" and t["patient"].str.fullmatch(r"[0-9a-f]{16}").all()
    k = res.model.params["unit"]["k"]
    per = t["patient"].value_counts()
    assert per.max() <= k and 1.5 < per.mean() <= k
    assert not set(t["patient"]) & set(real["patient"])
    model = tmp_path / "m.zip"
    res.model.save(model)
    again = privsample.load(model).sample(100, seed=1)
    assert list(again.columns)[0] == "patient"
    with pytest.raises(InputError, match="unit_ids fresh needs privacy_unit"):
        privsample.synthesize(real, epsilon=1, unit_ids="fresh")
    out = tmp_path / "o.csv"
    code, text = run(
        ["synth", table, "-o", out, "--epsilon", 4, "--privacy-unit", "patient", "--unit-ids", "fresh", *FAST], capsys
    )
    assert code == 0 and pd.read_csv(out, dtype=str).columns[0] == "patient", text


def test_no_hint_for_an_id_column_held_as_an_identifier(tmp_path):
    """One row per person (every id distinct): discovery holds the column as an identifier, and record-level
    privacy is person-level already, so no hint."""
    rng = np.random.default_rng(1)
    n = 4000
    df = pd.DataFrame(
        {
            "patient_id": [f"P-{i:06d}" for i in rng.permutation(n)],
            "a": rng.choice(["x", "y"], n),
            "b": rng.integers(0, 4, n),
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = privsample.synthesize(df, epsilon=2, method="mst", seed=0)
    assert [c.name for c in res.schema.identifiers] == ["patient_id"]
    assert not any(issubclass(w.category, PrivacyUnitHint) for w in caught)
