"""Command line: the main job end to end, and bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli import run

FAST = ["--iters", "30", "--quiet", "--method", "mst"]  # the default method (ppsyn) has its own test below


def small_table(n=300, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    color = rng.choice(["red", "green", "blue"], n)
    size = np.where(color == "red", rng.integers(0, 5, n), rng.integers(5, 10, n))
    return pd.DataFrame({"color": color, "size": size, "flag": rng.choice(["y", "n"], n)})


def small_schema() -> dict:
    return {
        "provenance": "user",
        "columns": [
            {"name": "color", "type": "categorical", "categories": ["red", "green", "blue"]},
            {"name": "size", "type": "numeric", "lower": 0, "upper": 10, "bins": 5, "integer": True},
            {"name": "flag", "type": "categorical", "categories": ["y", "n"]},
        ],
    }


@pytest.fixture
def data(tmp_path):
    csv = tmp_path / "data.csv"
    small_table().to_csv(csv, index=False)
    sch = tmp_path / "schema.yaml"
    sch.write_text(yaml.safe_dump(small_schema()))
    return csv, sch


def only_inputs_left(directory: Path, inputs: set[str]) -> bool:
    return {p.name for p in directory.iterdir()} <= inputs


def test_synth_with_schema_save_and_sample(data, tmp_path, capsys):
    csv, sch = data
    out, model = tmp_path / "synth.csv", tmp_path / "model.zip"
    code, _ = run(["synth", csv, "-o", out, "--epsilon", 2, "--schema", sch, "--save-model", model, *FAST], capsys)
    assert code == 0
    syn = pd.read_csv(out)
    assert list(syn.columns) == ["color", "size", "flag"]
    assert set(syn["color"]) <= {"red", "green", "blue"} and syn["size"].between(0, 10).all()
    assert abs(len(syn) - 300) < 150  # noisy row count
    more = tmp_path / "more.csv"
    code, _ = run(["sample", model, "-o", more, "--rows", 1000], capsys)
    assert code == 0 and len(pd.read_csv(more)) == 1000
    saved = json.loads(__import__("zipfile").ZipFile(model).read("model.json"))
    assert saved["ledger"]["summary"]["rho_spent"] == pytest.approx(saved["ledger"]["summary"]["rho_total"])


def test_synth_without_schema_discovers_privately(data, tmp_path, capsys):
    csv, _ = data
    out, model = tmp_path / "synth.csv", tmp_path / "model"
    code, _ = run(["synth", csv, "-o", out, "--epsilon", 5, "--save-model", model, *FAST], capsys)
    assert code == 0 and out.exists()
    ledger = json.loads((model / "model.json").read_text())["ledger"]
    labels = [e["label"] for e in ledger["entries"]]
    assert any(lab.startswith("mst/") for lab in labels)
    assert any(not lab.startswith("mst/") for lab in labels)  # discovery spends are in the same ledger
    s = ledger["summary"]
    assert s["rho_spent"] <= s["rho_total"] * (1 + 1e-12)
    assert s["delta_spent"] <= 1e-9 * 0.1 * (1 + 1e-9)


def test_seeded_run_is_marked_not_private(data, tmp_path, capsys):
    csv, sch = data
    model = tmp_path / "m.zip"
    code, text = run(
        [
            "synth",
            csv,
            "-o",
            tmp_path / "s.csv",
            "--epsilon",
            1,
            "--schema",
            sch,
            "--seed",
            3,
            "--save-model",
            model,
            "--iters",
            "30",
        ],
        capsys,
    )
    assert code == 0 and "NOT" in text and "private" in text
    saved = json.loads(__import__("zipfile").ZipFile(model).read("model.json"))
    assert saved["private"] is False


@pytest.mark.parametrize(
    "case",
    [
        "missing_file",
        "ragged_csv",
        "empty_table",
        "schema_column_missing",
        "eps_zero",
        "eps_negative",
        "delta_one",
        "delta_zero",
        "too_big",
        "draft_schema",
        "bad_schema_file",
        "no_provenance",
        "workload_unknown_column",
        "model_size_too_small",
        "eta_zero",
        "eta_above_one",
        "eta_with_annealed_schedule",
        "paper_without_flag",
        "unknown_method",
        "unknown_schedule",
    ],
)
def test_bad_input_exit_2_one_line_nothing_written(case, data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "synth.csv"
    args = ["synth", csv, "-o", out, "--epsilon", 1, "--schema", sch, *FAST]
    s = small_schema()
    df = small_table()
    if case == "missing_file":
        args[1] = tmp_path / "nope.csv"
    elif case == "ragged_csv":
        csv.write_text("color,size,flag\nred,1,y\nblue,2,n,extra,cols\n")
    elif case == "empty_table":
        csv.write_text("")
    elif case == "schema_column_missing":
        df.drop(columns=["flag"]).to_csv(csv, index=False)
    elif case == "no_provenance":
        sch.write_text(yaml.safe_dump({k: v for k, v in s.items() if k != "provenance"}))
    elif case == "eps_zero":
        args[args.index("--epsilon") + 1] = "0"
    elif case == "eps_negative":
        args[args.index("--epsilon") + 1] = "-1"
    elif case == "delta_one":
        args += ["--delta", "1"]
    elif case == "delta_zero":
        args += ["--delta", "0"]
    elif case == "too_big":
        s["columns"][1] = {"name": "size", "type": "numeric", "lower": 0, "upper": 10, "bins": 100000}
        s["columns"][0]["categories"] = [f"c{i}" for i in range(100000)] + ["red", "green", "blue"]
        sch.write_text(yaml.safe_dump(s))
    elif case == "draft_schema":
        s["provenance"] = "draft-nonprivate"
        sch.write_text(yaml.safe_dump(s))
    elif case == "bad_schema_file":
        sch.write_text("columns: [unclosed\n")
    elif case == "workload_unknown_column":
        args += ["--method", "ppsyn", "--workload", "color,size;flag,weight"]
    elif case == "model_size_too_small":
        args += ["--method", "aim", "--max-model-size", "1e-9"]
    elif case == "eta_zero":
        args += ["--method", "ppsyn", "--schedule", "note", "--eta", "0"]
    elif case == "eta_above_one":
        args += ["--method", "ppsyn-paper", "--unsafe-as-published", "--eta", "1.5"]
    elif case == "eta_with_annealed_schedule":
        args += ["--method", "ppsyn", "--eta", "0.5"]
    elif case == "paper_without_flag":
        args += ["--method", "ppsyn-paper"]
    elif case == "unknown_method":
        args += ["--method", "gan"]
    elif case == "unknown_schedule":
        args += ["--method", "ppsyn", "--schedule", "fast"]
    code, text = run(args, capsys)
    assert code == 2, text
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), text
    assert "Traceback" not in text
    assert not out.exists()
    assert only_inputs_left(tmp_path, {"data.csv", "schema.yaml"})


def test_value_policies_clip_and_other(data, tmp_path, capsys):
    csv, sch = data
    df = small_table()
    df.loc[3, "size"] = 42
    df.loc[7, "color"] = "purple"
    df.to_csv(csv, index=False)
    out = tmp_path / "s.csv"
    code, text = run(["synth", csv, "-o", out, "--epsilon", 1, "--schema", sch, "--other", *FAST], capsys)
    assert code == 0, text
    assert set(pd.read_csv(out)["color"]) <= {"red", "green", "blue", "(other)"}


def _masked(text: str) -> list[str]:
    import re

    progress = ("━", "ρ spent")  # progress bars depend on timing
    return [
        re.sub(r"\d[\d,.]*(e[+-]?\d+)?", "#", ln)
        for ln in text.splitlines()
        if ln.strip() and not any(p in ln for p in progress)
    ]


@pytest.mark.parametrize(
    "case", ["header_only", "unknown_category", "out_of_bounds", "missing_value", "not_a_number", "missing_number"]
)
@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_one_record_does_not_change_the_outcome(case, engine, data, tmp_path, capsys):
    """Release path: a record outside the schema is handled by the per-record rule; the exit code, the
    printed lines (numbers masked) and the output's columns are those of the run without it."""
    csv, sch = data
    df = small_table()
    if case == "header_only":
        df = df.iloc[:0]
    elif case == "unknown_category":
        df.loc[7, "color"] = "ZEBRA7741"
    elif case == "out_of_bounds":
        df.loc[3, "size"] = 987654
    elif case == "missing_value":
        df.loc[5, "flag"] = None
    elif case == "not_a_number":
        df["size"] = df["size"].astype(object)
        df.loc[5, "size"] = "ZEBRA7741"
    elif case == "missing_number":
        df.loc[5, "size"] = None
    odd = tmp_path / "odd.csv"
    df.to_csv(odd, index=False)
    runs = []
    for src in (csv, odd):
        out = tmp_path / f"s-{src.stem}.csv"
        code, text = run(
            [
                "synth",
                src,
                "-o",
                out,
                "--epsilon",
                1,
                "--schema",
                sch,
                "--engine",
                engine,
                "--iters",
                "30",
                "--method",
                "mst",
            ],
            capsys,
        )
        assert code == 0, text
        runs.append((_masked(text.replace(str(src), "IN").replace(str(out), "OUT")), out.read_text()))
    assert runs[0][0] == runs[1][0]
    assert "ZEBRA" not in runs[1][1] and "987654" not in runs[1][1]
    assert runs[1][1].splitlines()[0] == "color,size,flag"


def test_check_lists_problems_not_private(data, tmp_path, capsys):
    csv, sch = data
    code, text = run(["check", csv, "--schema", sch], capsys)
    assert code == 0 and "NOT PRIVATE" in text
    df = small_table()
    df.loc[3, "size"] = 42
    df.loc[7, "color"] = "purple"
    df.to_csv(csv, index=False)
    code, _ = run(["check", csv, "--schema", sch], None)
    printed = capsys.readouterr()
    assert code == 2
    assert "purple" in printed.out and "8: purple" in printed.out  # data row 8 (1-based)
    assert "clipped" in printed.out and "record left out" in printed.out
    assert "leave out 1 of 300 rows" in printed.err


def test_check_binary_lists_what_the_cube_reads_as_zero(tmp_path, capsys):
    """'cube sample' without a schema reads any value but the number 1 as 0, and points to 'check --binary'."""
    from privsample.cube.pipeline import BINARY_RULE

    assert "check INPUT --binary" in BINARY_RULE
    csv = tmp_path / "bits.csv"
    csv.write_text("a,b\n1,0\n1.0,0\n0,1\n", encoding="utf-8")
    code, _ = run(["check", csv, "--binary"], None)
    printed = capsys.readouterr()
    assert code == 0 and "are 0 or 1" in " ".join(printed.out.split()) and "NOT PRIVATE" in printed.err
    csv.write_text("a,b\n1,0\n2,\n0,yes\n", encoding="utf-8")
    code, _ = run(["check", csv, "--binary"], None)
    printed = capsys.readouterr()
    out, err = " ".join(printed.out.split()), " ".join(printed.err.split())
    assert code == 2
    assert "2: 2" in out and "3: yes" in out and "2: <missing>" in out and "read as 0" in out
    assert "3 value(s) in 2 of 2 column(s) are not 0 or 1" in err
    code, text = run(["check", csv, "--binary", "--schema", csv], capsys)
    assert code == 2 and "cannot be combined" in text and "Traceback" not in text


def test_schema_draft_and_private(data, tmp_path, capsys):
    csv, _ = data
    draft = tmp_path / "draft.yaml"
    code, text = run(["schema", csv, "-o", draft], capsys)
    assert code == 0 and "NON-PRIVATE" in text
    assert "NON-PRIVATE DRAFT" in draft.read_text()
    priv = tmp_path / "priv.yaml"
    code, text = run(["schema", csv, "-o", priv, "--private-epsilon", 2], capsys)
    assert code == 0
    d = yaml.safe_load(priv.read_text())
    assert d["provenance"] == "private" and d["ledger"]["entries"]
    # synth adds the schema's cost to its own ledger, within one budget
    m = tmp_path / "m"
    code, text = run(
        ["synth", csv, "-o", tmp_path / "s.csv", "--epsilon", 3, "--schema", priv, "--save-model", m, *FAST], capsys
    )
    assert code == 0, text
    ledger = json.loads((m / "model.json").read_text())["ledger"]
    assert len(ledger["entries"]) > len(d["ledger"]["entries"])
    assert ledger["summary"]["rho_spent"] <= ledger["summary"]["rho_total"] * (1 + 1e-12)
    # a schema that costs more than the whole budget is refused
    code, text = run(["synth", csv, "-o", tmp_path / "t.csv", "--epsilon", 0.5, "--schema", priv, *FAST], capsys)
    assert code == 2 and not (tmp_path / "t.csv").exists()


def test_evaluate_and_report(data, tmp_path, capsys):
    csv, sch = data
    out = tmp_path / "s.csv"
    assert run(["synth", csv, "-o", out, "--epsilon", 2, "--schema", sch, *FAST], capsys)[0] == 0
    rep = tmp_path / "r.html"
    code, text = run(["evaluate", csv, out, "--schema", sch, "--report", rep], capsys)
    assert code == 0 and rep.exists() and "<html" in rep.read_text().lower()
    # exact statistics of the real table: evaluate says so on stderr, the report at the top of its page
    assert "Contains non-private statistics of the real data — do not release" in " ".join(text.split())
    page = rep.read_text()
    banner = page.index("Contains non-private statistics of the real data \u2014 do not release")
    assert banner < page.index("<h1>")


def test_evaluate_shows_the_guarantee_of_the_model_or_ledger(data, tmp_path, capsys):
    """--model / --ledger: method, ε, δ and the ledger beside the errors, printed and in the report."""
    csv, sch = data
    out, model = tmp_path / "s.csv", tmp_path / "m"
    assert run(["synth", csv, "-o", out, "--epsilon", 2, "--schema", sch, "--save-model", model, *FAST])[0] == 0
    capsys.readouterr()
    rep = tmp_path / "r.html"
    code, _ = run(["evaluate", csv, out, "--model", model, "--report", rep])
    printed = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "release guarantee (m): mst, target ε=2, δ=1e-09; spent ε=2 (add/remove one record)" in printed
    assert "Privacy ledger" in printed and "mst/2-way" in printed
    page = rep.read_text()
    assert page.index("Workload error") < page.index("Privacy guarantee of the release") < page.index("mst/2-way")
    assert "No ledger was given" not in page and "<td>mst</td>" in page
    # the same from the ledger alone (a model.json, or its 'ledger' part)
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps(json.loads((model / "model.json").read_text())["ledger"]))
    for source in (model / "model.json", ledger):
        code, _ = run(["evaluate", csv, out, "--ledger", source])
        printed = " ".join(capsys.readouterr().out.split())
        assert code == 0 and "target ε=2, δ=1e-09" in printed and "Privacy ledger" in printed
    # without either, the report says how to get one
    assert run(["evaluate", csv, out, "--report", rep])[0] == 0
    assert "evaluate --model model.zip" in rep.read_text()


@pytest.mark.parametrize("case", ["not-json", "no-ledger", "both", "report-is-model", "missing"])
def test_evaluate_refuses_a_bad_model_or_ledger(data, tmp_path, capsys, case):
    csv, _ = data
    syn = tmp_path / "s.csv"
    small_table(50, seed=3).to_csv(syn, index=False)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json" if case == "not-json" else json.dumps({"summary": {"x": 1}}))
    model = tmp_path / "m.zip"
    model.write_bytes(b"PK-not-a-zip")
    argv = {
        "not-json": ["--ledger", bad],
        "no-ledger": ["--ledger", bad],
        "both": ["--ledger", bad, "--model", model],
        "report-is-model": ["--model", model, "--report", model],
        "missing": ["--model", tmp_path / "none.zip"],
    }
    before = model.read_bytes()
    code, text = run(["evaluate", csv, syn, *argv[case]], capsys)
    assert code == 2 and text.startswith("error: ") and len(text.strip().splitlines()) == 1, text
    assert model.read_bytes() == before


def _credit_like(n=300, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "month": rng.integers(4, 72, n),
            "status": rng.choice(["A11", "A12", "A13", "A14"], n),
            "amount": rng.lognormal(7, 1, n).round(),
            "rate": rng.integers(1, 5, n),
        }
    )


def test_evaluate_accepts_a_catch_all_in_a_numeric_column(tmp_path, capsys):
    """A table that synth wrote with '(other)' in a numeric column is scored (the catch-all counts as error)."""
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    df = _credit_like()
    df.to_csv(real, index=False)
    bad = df.astype(object)
    bad["month"] = "(other)"
    bad.to_csv(syn, index=False)
    code, text = run(["evaluate", real, syn, "--workload", 2], capsys)
    assert code == 0, text
    assert "is not a number" not in text
    from privsample.cli.evaluate import _evaluate

    res = _evaluate(real, syn, None, 2, None, None)
    assert res[1]["errors"][("month",)] == pytest.approx(2.0) and res[1]["errors"][("status",)] == 0.0
    assert res[2]["max"] == pytest.approx(2.0) and res[2]["mean"] == pytest.approx(1.0)  # 3 of 6 pairs hold month
    printed = " ".join(capsys.readouterr().out.split())
    assert "synthetic records outside the real values" in printed and "100.0%" in printed
    # a column missing from the synthetic table is about the header (public): one line, exit 2
    bad.drop(columns=["rate"]).to_csv(syn, index=False)
    code, text = run(["evaluate", real, syn], capsys)
    assert code == 2 and text.strip().splitlines()[-1] == f"error: {syn}: column 'rate' of the real table is missing"


def test_evaluate_with_a_catch_all_only_schema_reports_the_loss(tmp_path, capsys):
    """The model's own (coarse) schema must not hide its loss: headline near 2, per-column loss 100%."""
    real, syn, sch, rep = tmp_path / "real.csv", tmp_path / "syn.csv", tmp_path / "s.yaml", tmp_path / "r.html"
    df = _credit_like()
    df.to_csv(real, index=False)
    pd.DataFrame({c: ["(other)"] * 250 for c in df.columns}).to_csv(syn, index=False)
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "private",
                "columns": [
                    {"name": c, "type": "categorical", "categories": [], "other": "(other)"} for c in df.columns
                ],
            }
        )
    )
    from privsample.cli.evaluate import _evaluate

    capsys.readouterr()
    res = _evaluate(real, syn, sch, 2, rep, None)
    assert res[2]["mean"] > 1.9
    printed = " ".join(capsys.readouterr().out.split())
    assert "domain" in printed and "0.0000" in printed  # the schema's own view, shown beside (table cells wrap)
    assert "merged" in printed and "clipped" in printed and printed.count("100.0%") >= 2 * len(df.columns)
    page = rep.read_text()
    assert "What is lost, per column" in page and page.count("100.00%") >= 2 * len(df.columns)
    code, text = run(["evaluate", real, syn, "--schema", sch], capsys)
    assert code == 0, text


def test_demo_writes_the_report_apart_from_the_release(data, tmp_path, capsys, monkeypatch):
    """demo: synthetic CSV, model and schema in release/, the (non-private) report in not-for-release/."""
    import privsample.datasets

    csv, _ = data
    monkeypatch.setattr(privsample.datasets, "demo_path", lambda: csv)
    outdir = tmp_path / "demo"
    code, text = run(["demo", "-o", outdir, "--method", "mst", "--epsilon", 5, "--seed", 0], capsys)
    assert code == 0, text
    assert {p.name for p in outdir.iterdir()} == {"release", "not-for-release"}
    assert {p.name for p in (outdir / "release").iterdir()} == {"adult_synthetic.csv", "model.zip", "schema.yaml"}
    assert {p.name for p in (outdir / "not-for-release").iterdir()} == {"report.html"}
    assert "Contains non-private statistics" in (outdir / "not-for-release" / "report.html").read_text()
    flat = " ".join(text.split())
    assert f"is in {outdir / 'release'}/" in flat and "report.html contains non-private statistics" in flat
    assert "do not release it" in flat


def test_sample_bad_model(tmp_path, capsys):
    bad = tmp_path / "m.zip"
    bad.write_bytes(b"not a zip")
    code, text = run(["sample", bad, "-o", tmp_path / "o.csv", "--rows", 5], capsys)
    assert code == 2 and not (tmp_path / "o.csv").exists()


cell = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6),
    st.sampled_from(["red", "green", "blue", "y", "n", "1", "5", "11", "-3", "", "?", "NaN", "1e9", '"', ",", "\n"]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.lists(cell, min_size=0, max_size=5), min_size=0, max_size=8),
    header=st.sampled_from(["color,size,flag", "color,size", "a,b,c", "color,color,flag", ""]),
    use_schema=st.booleans(),
)
def test_random_malformed_tables_never_traceback_or_partial_output(tmp_path_factory, rows, header, use_schema):
    d = tmp_path_factory.mktemp("fuzz")
    csv = d / "data.csv"
    csv.write_text(header + "\n" + "\n".join(",".join(r) for r in rows) + ("\n" if rows else ""))
    sch = d / "schema.yaml"
    sch.write_text(yaml.safe_dump(small_schema()))
    out = d / "out.csv"
    args = ["synth", csv, "-o", out, "--epsilon", 1, *FAST] + (["--schema", sch] if use_schema else [])
    code, _ = run(args)
    assert code in (0, 2)
    if code == 2:
        assert not out.exists()
    assert only_inputs_left(d, {"data.csv", "schema.yaml", "out.csv"})


def test_synth_with_duckdb_engine_on_parquet(data, tmp_path, capsys):
    csv, sch = data
    pq = tmp_path / "data.parquet"
    small_table().to_parquet(pq, index=False)
    out = tmp_path / "s.csv"
    code, text = run(["synth", pq, "-o", out, "--epsilon", 2, "--schema", sch, "--engine", "duckdb", *FAST], capsys)
    assert code == 0, text
    assert list(pd.read_csv(out).columns) == ["color", "size", "flag"]
    # without a schema DuckDB discovers it privately from its own per-column counts
    code, text = run(["synth", pq, "-o", tmp_path / "t.csv", "--epsilon", 2, "--engine", "duckdb", *FAST], capsys)
    assert code == 0, text
    assert list(pd.read_csv(tmp_path / "t.csv").columns) == ["color", "size", "flag"]


def test_default_method_is_ppsyn_dp_with_progress_and_ledger(data, tmp_path, capsys):
    csv, sch = data
    out, model = tmp_path / "synth.csv", tmp_path / "model.zip"
    code, text = run(
        [
            "synth",
            csv,
            "-o",
            out,
            "--epsilon",
            2,
            "--schema",
            sch,
            "--iters",
            "30",
            "--workload",
            "color,size;size,flag",
            "--save-model",
            model,
        ],
        capsys,
    )
    assert code == 0, text
    saved = json.loads(__import__("zipfile").ZipFile(model).read("model.json"))
    assert saved["mechanism"] == "ppsyn" and saved["params"]["mode"] == "dp" and saved["private"] is True
    labels = [e["label"] for e in saved["ledger"]["entries"]]
    assert any(lab.startswith("ppsyn/measure/") for lab in labels)
    assert saved["ledger"]["summary"]["rho_spent"] <= saved["ledger"]["summary"]["rho_total"] * (1 + 1e-12)
    assert "ppsyn" in text  # the ledger is printed
    assert len(pd.read_csv(out)) > 0


@pytest.mark.parametrize("argv", [["no-such-command"], ["synth"], ["synth", "x.csv", "--no-such-option"]])
def test_usage_errors_exit_2(argv, capsys):
    """Unknown commands, missing arguments and unknown options are usage errors: exit 2, no traceback."""
    code, text = run(argv, capsys)
    assert code == 2
    assert "Traceback" not in text and "internal error" not in text


def test_discovery_collapse_stops_before_synthesis(tmp_path, capsys):
    """Most columns left with only the catch-all: exit 2 before the synthesis budget is spent, nothing written."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{j}": rng.choice([f"v{i}" for i in range(40)], 60) for j in range(4)})
    csv, out = tmp_path / "d.csv", tmp_path / "s.csv"
    df.to_csv(csv, index=False)
    # seeded: with secure noise a column is judged numeric by noise alone in a small share of runs (3 of 4 then)
    code, text = run(["synth", csv, "-o", out, "--epsilon", 0.1, "--seed", 0, *FAST], capsys)
    assert code == 2, text
    assert "kept at most one value in 4 of 4 columns" in text and "nothing was synthesized" in text
    assert not out.exists()


def test_discovery_table_and_warning(data, tmp_path, capsys):
    csv, _ = data
    df = small_table()
    # every value held by 2 records: no category can be released (all unique values would make it an identifier)
    df["rare"] = [f"r{i // 2}" for i in range(len(df))]
    df.to_csv(csv, index=False)
    out = tmp_path / "s.csv"
    code, text = run(["synth", csv, "-o", out, "--epsilon", 5, "--iters", "30", "--method", "mst"], capsys)
    assert code == 0, text
    assert "Privately discovered schema" in text and "warning: private discovery lost detail" in text
    assert "  - rare: keeps no category" in text


def test_ledger_phase_groups_a_step_not_needed_with_the_same_step():
    """The ledger groups 'schema: <column>: <step>' by step; a step the run did not need (a noisy decision) with
    the same step where it was needed, so that the printed phases do not depend on that decision."""
    from privsample.privacy.ledger import phase_of as _phase

    assert _phase("schema: age: range refinement (not needed: too few records)") == "schema: range refinement"
    assert _phase("schema: age: point masses (not needed: unit bins)") == "schema: point masses"
    assert _phase("schema: age: type counts") == "schema: type counts"
    assert _phase("mst/2-way/a,b") == "mst/2-way" and _phase("schema: row count") == "schema: row count"


def test_output_dash_writes_csv_to_stdout_and_nothing_else(tmp_path, capsys):
    """``-o -``: the table as CSV on standard output, every message on standard error, no file named '-'; the
    same for ``sample``."""
    import io

    small_table().to_csv(tmp_path / "data.csv", index=False)
    model = tmp_path / "m.zip"
    argv = ["synth", tmp_path / "data.csv", "-o", "-", "--save-model", model, "--epsilon", "1", "--iters", "30"]
    code, _ = run([*argv, "--method", "mst", "--seed", "0"], None)  # not quiet: the ledger and notes go to stderr
    captured = capsys.readouterr()
    assert code == 0, captured.err
    table = pd.read_csv(io.StringIO(captured.out))
    assert list(table.columns) == ["color", "size", "flag"] and len(table) > 0
    assert "synthetic rows to standard output" in captured.err and "ledger" not in captured.out.lower()
    assert not (tmp_path / "-").exists() and not Path("-").exists()
    code, _ = run(["sample", model, "-o", "-", "--rows", "7", "--seed", "1"], None)
    captured = capsys.readouterr()
    assert code == 0 and "7 rows to standard output" in captured.err, captured.err
    assert len(pd.read_csv(io.StringIO(captured.out))) == 7
