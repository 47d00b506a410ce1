"""``privsample.evaluate(real, synthetic)``: the command line's evaluation for Python (NOT private), its result
``Evaluation`` (errors, loss, ledger, report, notebook view), the callable package and its bad input."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import privsample
from privsample import InputError
from privsample.cli import main
from privsample.data.schema import Schema
from privsample.data.table import read_table
from privsample.evaluation.report import NON_PRIVATE_NOTICE
from privsample.evaluation.tables import evaluate_tables, schema_loss

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _quiet_seeded_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning (NOT private: reproducible tests)
        yield


def _real(n=400, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "month": rng.integers(4, 72, n),
            "status": rng.choice(["A11", "A12", "A13", "A14"], n),
            "amount": rng.lognormal(7, 1, n).round(),
            "rate": rng.integers(1, 5, n),
        }
    )


def _synthetic(real: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``real`` resampled, with a catch-all label in one column and a number above the real range."""
    syn = real.sample(n=300, replace=True, random_state=5).reset_index(drop=True).astype(object)
    syn.loc[:20, "status"] = "(other)"
    syn.loc[:10, "month"] = 500
    return syn


SCHEMA = {
    "provenance": "user",
    "columns": [
        {"name": "month", "type": "numeric", "lower": 0, "upper": 48, "bins": 8, "integer": True},
        {"name": "status", "type": "categorical", "categories": ["A11", "A12", "A13"], "other": "(other)"},
        {"name": "rate", "type": "numeric", "lower": 1, "upper": 4, "bins": 4, "integer": True},
    ],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("eval")
    real = _real()
    syn = _synthetic(real)
    paths = {"real": d / "real.csv", "syn": d / "syn.csv", "schema": d / "schema.yaml", "dir": d}
    real.to_csv(paths["real"], index=False)
    syn.to_csv(paths["syn"], index=False)
    paths["schema"].write_text(yaml.safe_dump(SCHEMA))
    return real, syn, paths


@pytest.fixture(scope="module")
def fitted(files):
    real, _, paths = files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise: NOT private (a reproducible test)
        synth = privsample.Synthesizer("mst", epsilon=2, iters=30).fit(real, schema=paths["schema"], seed=0)
    model = paths["dir"] / "model.zip"
    synth.save(model)
    return synth, model


def _cli(argv, capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    res = capsys.readouterr()
    return code, res.out, res.err


def _printed_errors(out: str) -> dict[int, list[float]]:
    """{k: [mean, max(, mean on the schema's domain)]} read off the table that ``privsample evaluate`` prints."""
    found = {}
    for m in re.finditer(r"(\d)-way\s*│\s*(\d+)\s*│\s*([\d.]+)\s*│\s*([\d.]+)\s*│(?:\s*([\d.]+)\s*│)?", out):
        found[int(m[1])] = [int(m[2])] + [float(x) for x in m.groups()[2:] if x is not None]
    return found


# -- the numbers ---------------------------------------------------------------------------------------
def test_errors_of_dataframes_are_those_the_cli_prints(files, capsys):
    real, syn, paths = files
    ev = privsample.evaluate(real, syn, Schema.load(paths["schema"]))
    err = ev.errors
    assert list(err.columns) == ["domain", "order", "mean", "median", "max", "cliques", "cliques_total", "worst"]
    assert list(zip(err["domain"], err["order"])) == [("real values", k) for k in (1, 2, 3)] + [
        ("schema", k) for k in (1, 2, 3)
    ]
    code, out, _ = _cli(["evaluate", paths["real"], paths["syn"], "--schema", paths["schema"]], capsys)
    assert code == 0
    printed = _printed_errors(out)
    head, on_schema = err[err["domain"] == "real values"], err[err["domain"] == "schema"]
    assert sorted(printed) == [1, 2, 3]
    for k, (cliques, mean, mx, schema_mean) in printed.items():
        row, srow = head[head["order"] == k].iloc[0], on_schema[on_schema["order"] == k].iloc[0]
        assert row["cliques"] == cliques == row["cliques_total"]
        assert (round(row["mean"], 4), round(row["max"], 4), round(srow["mean"], 4)) == (mean, mx, schema_mean)
    # the same numbers, unrounded, from the scoring of the files as the command line reads them
    sch = Schema.load(paths["schema"])
    ref = evaluate_tables(read_table(paths["real"]), read_table(paths["syn"]), sch, rng=0)
    for k, v in ref.summary.items():
        row = head[head["order"] == k].iloc[0]
        vals = list(v["errors"].values())
        assert row["mean"] == pytest.approx(v["mean"], abs=1e-12) and row["max"] == pytest.approx(v["max"])
        assert row["median"] == pytest.approx(float(np.median(vals))) and row["worst"] == ", ".join(v["worst"])
        assert on_schema[on_schema["order"] == k].iloc[0]["mean"] == pytest.approx(ref.schema_summary[k]["mean"])
    assert ev.summary[1]["mean"] == pytest.approx(ref.summary[1]["mean"])


def test_schema_loss_and_outside(files):
    real, syn, paths = files
    ev = privsample.evaluate(real, syn, paths["schema"])
    loss = ev.loss
    assert list(loss.columns) == ["column", "kind", "merged", "clipped", "lost"]
    assert list(loss["column"]) == ["month", "status", "rate"]
    ref = {c.column: c for c in schema_loss(read_table(paths["real"]), Schema.load(paths["schema"]))}
    for r in loss.itertuples(index=False):
        assert (r.merged, r.clipped, r.lost) == pytest.approx(
            (ref[r.column].merged, ref[r.column].clipped, ref[r.column].lost)
        )
    status, month = loss.set_index("column").loc["status"], loss.set_index("column").loc["month"]
    assert status["merged"] == pytest.approx((real["status"] == "A14").mean())  # A14 is not in the schema
    assert month["clipped"] == pytest.approx((real["month"] > 48).mean())
    assert ev.outside["status"] == pytest.approx(21 / 300) and ev.outside["month"] == pytest.approx(11 / 300)
    assert ev.left_out == ["amount"]
    # no schema: no loss, every column of the real table scored
    plain = privsample.evaluate(real, syn, workload=1)
    assert plain.loss is None and plain.columns == list(real.columns) and list(plain.errors["order"]) == [1]


def test_max_cliques_samples_cliques(files):
    real, syn, _ = files
    ev = privsample.evaluate(real, syn, workload=3, max_cliques=2)
    three = ev.errors.set_index("order").loc[3]
    assert (three["cliques"], three["cliques_total"]) == (2, 4)


def test_paths_and_pyarrow_give_the_same_errors(files):
    pa = pytest.importorskip("pyarrow")
    real, syn, paths = files
    base = privsample.evaluate(real, syn, workload=2).errors
    for r, s in [
        (paths["real"], paths["syn"]),
        (str(paths["real"]), str(paths["syn"])),
        (pa.Table.from_pandas(real, preserve_index=False), pa.Table.from_pandas(syn.astype(str))),
        (paths["real"], syn),
    ]:
        pd.testing.assert_frame_equal(privsample.evaluate(r, s, workload=2).errors, base)
    ev = privsample.evaluate(paths["real"], paths["syn"], workload=1)
    assert "real.csv (400 records) vs syn.csv (300 records)" in repr(ev)


def test_polars_input(files):
    pl = pytest.importorskip("polars")
    real, syn, _ = files
    base = privsample.evaluate(real, syn, workload=2).errors
    pd.testing.assert_frame_equal(privsample.evaluate(pl.from_pandas(real), syn, workload=2).errors, base)


# -- guarantee, text, notebook and report -----------------------------------------------------------------
def test_model_shows_the_guarantee_and_ledger(files, fitted):
    real, syn, paths = files
    synth, model_zip = fitted
    for model in (synth, synth.model, model_zip, str(model_zip), privsample.load(model_zip)):
        ev = privsample.evaluate(real, syn, paths["schema"], model=model, workload=1)
        assert isinstance(ev.ledger, privsample.Ledger) and ev.ledger["entries"] == synth.ledger["entries"]
        assert ev.guarantee["method"] == "mst" and ev.guarantee["epsilon"] == 2 and not ev.guarantee["private"]
        page = ev._repr_html_()
        assert "release guarantee" in page and "Privacy ledger" in page and "mst/2-way" in page
        assert page.index(NON_PRIVATE_NOTICE) < page.index("<table")
        assert "release guarantee" in repr(ev)
    # a ledger alone: a dict, a Ledger, its JSON file, or a model's model.json
    led_file = paths["dir"] / "ledger.json"
    led_file.write_text(json.dumps(dict(synth.ledger)))
    for ledger in (dict(synth.ledger), synth.ledger, led_file):
        ev = privsample.evaluate(real, syn, ledger=ledger, workload=1)
        assert ev.guarantee["epsilon"] == 2 and "mst/2-way" in ev._repr_html_()
    plain = privsample.evaluate(real, syn, workload=1)
    assert plain.ledger is None and plain.guarantee is None and "No privacy ledger" in plain._repr_html_()


def test_banner_in_every_output_and_the_report_of_the_cli(files, fitted, capsys):
    real, syn, paths = files
    _, model_zip = fitted
    ev = privsample.evaluate(paths["real"], paths["syn"], paths["schema"], model=model_zip)
    page = ev._repr_html_()
    assert page.index("NOT PRIVATE") < page.index("<table") and NON_PRIVATE_NOTICE in page
    text = repr(ev)
    assert text.splitlines()[0] == f"Evaluation (NOT PRIVATE: {NON_PRIVATE_NOTICE})"
    out = ev.to_html(paths["dir"] / "api.html")
    report = out.read_text()
    assert report.index(NON_PRIVATE_NOTICE) < report.index("<h1>") and "Privacy guarantee of the release" in report
    assert ev.to_html() == report
    # the page the command line writes for the same files
    cli_report = paths["dir"] / "cli.html"
    argv = ["evaluate", paths["real"], paths["syn"], "--schema", paths["schema"], "--model", model_zip]
    assert _cli([*argv, "--report", cli_report], capsys)[0] == 0

    def strip(page: str) -> str:
        return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)

    assert strip(cli_report.read_text()) == strip(report)
    # the report never overwrites an input
    with pytest.raises(InputError, match="same file"):
        ev.to_html(paths["syn"])


# -- the three call forms -----------------------------------------------------------------------------
def test_call_forms_in_process(files):
    import privsample.evaluation.report  # noqa: F401 - a submodule import must not hide the function
    from privsample import Evaluation as top
    from privsample import evaluate as ev_top
    from privsample.evaluation import Evaluation, evaluate

    real, syn, _ = files
    assert top is Evaluation and privsample.evaluate is ev_top is evaluate  # a plain function, not a module
    assert inspect.isfunction(privsample.evaluate) and privsample.evaluation is sys.modules["privsample.evaluation"]
    a = privsample.evaluate(real, syn, workload=1)
    b = ev_top(real, syn, workload=1)
    c = evaluate(real, syn, workload=1)
    assert all(isinstance(x, Evaluation) for x in (a, b, c))
    pd.testing.assert_frame_equal(a.errors, c.errors)
    assert {"evaluate", "Evaluation"} <= set(privsample.__all__) and "evaluate" in dir(privsample)


FRESH = {
    "submodule first": "import privsample.evaluation.report\nimport privsample\nev = privsample.evaluate(real, syn)",
    "from privsample": "from privsample import evaluate\nimport privsample.evaluation.tables\nev = evaluate(real, syn)",
    "from the package": (
        "import privsample.evaluation.workload\nfrom privsample.evaluation import evaluate, Evaluation\n"
        "ev = evaluate(real, syn)\nassert isinstance(ev, Evaluation)"
    ),
    "attribute first": "import privsample\nf = privsample.evaluate\nimport privsample.evaluation.result\n"
    "assert privsample.evaluate is f\nev = f(real, syn)",
}


@pytest.mark.parametrize("case", list(FRESH))
def test_call_forms_in_a_fresh_interpreter(case):
    code = (
        "import sys, pandas as pd\n"
        "real = pd.DataFrame({'a': ['x', 'y', 'x', 'y'], 'b': ['1', '2', '2', '2']})\n"
        "syn = pd.DataFrame({'a': ['x', 'y'], 'b': ['1', '1']})\n"
        + FRESH[case]
        + "\nassert type(ev).__name__ == 'Evaluation' and list(ev.errors['order']) == [1, 2]\nprint('ok')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]


def test_import_privsample_stays_light():
    code = "import sys, privsample\nprint('privsample.evaluation' in sys.modules, 'pandas' in sys.modules)"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.stdout.split() == ["False", "False"], res.stderr[-2000:]


# -- bad input -----------------------------------------------------------------------------------------
def test_bad_input_raises_the_cli_messages(files, capsys):
    real, syn, paths = files
    d = paths["dir"]
    missing = d / "none.csv"
    short = d / "short.csv"
    syn.drop(columns=["rate"]).to_csv(short, index=False)
    cases = [
        ((missing, paths["syn"]), {}, ["evaluate", missing, paths["syn"]]),
        ((paths["real"], short), {}, ["evaluate", paths["real"], short]),
        ((paths["real"], short, paths["schema"]), {}, ["evaluate", paths["real"], short, "-s", paths["schema"]]),
        (
            (paths["real"], paths["syn"]),
            {"model": d / "none.zip"},
            ["evaluate", paths["real"], paths["syn"], "--model", d / "none.zip"],
        ),
        (
            (paths["real"], paths["syn"]),
            {"ledger": d / "none.json"},
            ["evaluate", paths["real"], paths["syn"], "--ledger", d / "none.json"],
        ),
    ]
    for args, kwargs, argv in cases:
        with pytest.raises(InputError) as info:
            privsample.evaluate(*args, **kwargs)
        code, _, err = _cli(argv, capsys)
        assert code == 2 and err.strip().splitlines()[-1] == f"error: {info.value}"
    # a column of the schema missing from the real table
    narrow = real.drop(columns=["rate"])
    with pytest.raises(InputError, match="column 'rate' is in the schema but not in the real table"):
        privsample.evaluate(narrow, syn, paths["schema"])
    with pytest.raises(InputError, match="the synthetic table: column 'rate' of the real table is missing"):
        privsample.evaluate(real, syn.drop(columns=["rate"]))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"real": 42}, "the real table: expected a pandas DataFrame"),
        ({"synthetic": [1, 2]}, "the synthetic table: expected a pandas DataFrame"),
        ({"schema": 42}, "schema must be a Schema or a schema file, not int"),
        ({"model": object()}, "model must be a fitted Synthesizer"),
        ({"model": privsample.Synthesizer("mst", epsilon=1)}, "not fitted"),
        ({"ledger": 3.5}, "ledger must be a ledger"),
        ({"ledger": {"summary": {"x": 1}}}, "holds no valid privacy ledger"),
        ({"ledger": {"summary": {}}, "model": "m.zip"}, "model and ledger both give the ledger"),
        ({"workload": 0}, "workload must be an integer from 1 to 5"),
        ({"workload": "2"}, "workload must be an integer from 1 to 5"),
        ({"max_cliques": 0}, "max_cliques must be at least 1"),
        ({"real": pd.DataFrame({"a": pd.Series([], dtype=object)})}, "the real table: the table has no data rows"),
        ({"synthetic": pd.DataFrame({1: [1]})}, "column names must be text"),
    ],
)
def test_bad_arguments(files, kwargs, message):
    real, syn, _ = files
    args = {"real": real, "synthetic": syn, **kwargs}
    with pytest.raises(InputError, match=message) as info:
        privsample.evaluate(args.pop("real"), args.pop("synthetic"), **args)
    assert "\n" not in str(info.value)


def test_docstring_examples_run():
    import doctest

    import privsample.evaluation.result

    for module in (sys.modules["privsample.evaluation"], privsample.evaluation.result):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__
