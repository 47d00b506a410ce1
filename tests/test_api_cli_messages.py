"""The same bad input gets the same one-line message from the command line and from Python.

``privsample synth`` (exit 2, one line on stderr), ``privsample.synthesize`` and ``Synthesizer(...).fit`` (an
``InputError``) go through one validation (``privsample.api.run``); the messages differ only in how an option is
named: ``--max-memory-mb`` on the command line, ``max_memory_mb`` in Python. Every case is refused before anything
is read or charged.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample.api.synthesizer import OPTIONS as OPTION_NAMES
from privsample.cli.app import main
from privsample.errors import ColumnsLeftOutWarning, InputError

# (command-line arguments after INPUT, Python keywords of ``synthesize``); method options as in the CLI
CASES = {
    "epsilon zero": (["-e", "0"], {"epsilon": 0.0}),
    "epsilon negative": (["-e", "-1"], {"epsilon": -1.0}),
    "epsilon infinite": (["-e", "inf"], {"epsilon": float("inf")}),
    "epsilon that overflows": (["-e", "1e308"], {"epsilon": 1e308}),
    "delta zero": (["-d", "0"], {"delta": 0.0}),
    "delta one": (["-d", "1"], {"delta": 1.0}),
    "rows negative": (["--rows", "-1"], {"rows": -1}),
    "rows above the limit": (["--rows", str(10**13)], {"rows": 10**13}),
    "seed negative": (["--seed", "-1"], {"seed": -1}),
    "method unknown": (["-m", "nope"], {"method": "nope"}),
    "paper mode without the flag": (["-m", "ppsyn-paper"], {"method": "ppsyn-paper"}),
    "iters zero": (["-m", "mst", "--iters", "0"], {"method": "mst", "iters": 0}),
    "max-memory-mb zero": (["--max-memory-mb", "0"], {"max_memory_mb": 0.0}),
    "max-memory-mb negative": (["--max-memory-mb", "-5"], {"max_memory_mb": -5.0}),
    "workload on mst": (["-m", "mst", "--workload", "a,b"], {"method": "mst", "workload": "a,b"}),
    "workload empty": (["-m", "aim", "--workload", ";"], {"method": "aim", "workload": ";"}),
    "max-model-size zero": (["-m", "aim", "--max-model-size", "0"], {"method": "aim", "max_model_size": 0.0}),
    "max-model-size that overflows": (["--max-model-size", "1e308"], {"max_model_size": 1e308}),
    "max-memory-mb that overflows": (["--max-memory-mb", "1e308"], {"max_memory_mb": 1e308}),
    "iters above the limit": (["-m", "mst", "--iters", str(10**20)], {"method": "mst", "iters": 10**20}),
    "max-candidates above the limit": (["--max-candidates", str(10**20)], {"max_candidates": 10**20}),
    "schedule unknown": (["--schedule", "fast"], {"schedule": "fast"}),
    "schedule on aim": (["-m", "aim", "--schedule", "note"], {"method": "aim", "schedule": "note"}),
    "max-candidates zero": (["--max-candidates", "0"], {"max_candidates": 0}),
    "max-candidates on note": (
        ["--schedule", "note", "--max-candidates", "5"],
        {"schedule": "note", "max_candidates": 5},
    ),
    "eta out of range": (
        ["-m", "ppsyn-paper", "--unsafe-as-published", "--eta", "2"],
        {"method": "ppsyn-paper", "eta": 2.0, "unsafe_as_published": True},
    ),  # fmt: skip
    "eta on annealed ppsyn": (["--eta", "0.5"], {"eta": 0.5}),
    "unsafe-as-published on mst": (
        ["-m", "mst", "--unsafe-as-published"],
        {"method": "mst", "unsafe_as_published": True},
    ),
    "unsafe-as-published on auto": (
        ["-m", "auto", "--unsafe-as-published"],
        {"method": "auto", "unsafe_as_published": True},
    ),
    "engine unknown": (["--engine", "pandas"], {"engine": "pandas"}),
    "public on ppsyn-paper": (
        ["-m", "ppsyn-paper", "--unsafe-as-published", "--public", "{csv}"],
        {"method": "ppsyn-paper", "unsafe_as_published": True, "public": "{csv}"},
    ),
    "public without a schema": (["-m", "mst", "--public", "{pub}"], {"method": "mst", "public": "{pub}"}),
    "require with another operator": (["--require", "a = b"], {"require": ["a = b"]}),
    "require naming no column of the header": (["--require", "zz <= 1"], {"require": ["zz <= 1"]}),
    "require on a categorical column": (
        ["--schema", "{schema}", "--require", "a <= b"],
        {"schema": "{schema}", "require": ["a <= b"]},
    ),
}
OPTIONS = set(OPTION_NAMES)
FIT = {"schema", "seed", "public"}  # Synthesizer.fit's keywords; the rest go to the constructor


def python_names(message: str) -> str:
    """A command-line message with its options named as in Python: ``--max-memory-mb`` -> ``max_memory_mb``."""
    return re.sub(r"--([a-z][a-z-]*)", lambda m: m.group(1).replace("-", "_"), message)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("frontends")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(["x", "y"], 50), "b": rng.integers(0, 9, 50)})
    df.to_csv(d / "t.csv", index=False)
    df.iloc[:20].to_csv(d / "pub.csv", index=False)
    privsample.Schema.draft(df).reviewed().save(d / "s.yaml")
    privsample.Schema.draft(df.assign(c=1.5)).reviewed().save(d / "extra.yaml")  # a column 'c' the data lack
    return {
        "csv": str(d / "t.csv"),
        "pub": str(d / "pub.csv"),
        "dir": d,
        "schema": str(d / "s.yaml"),
        "extra": str(d / "extra.yaml"),
    }


def fitted(files):
    """A seeded (NOT private) MST fit on the reviewed schema."""
    s = privsample.Synthesizer("mst", epsilon=1, iters=5)
    with pytest.warns(UserWarning, match="seeded"):
        s.fit(files["csv"], schema=files["schema"], seed=0)
    return s


def fill(value, files):
    return value.format(**files) if isinstance(value, str) else value


def cli_message(args, files, capsys) -> str:
    out = files["dir"] / "out.csv"
    argv = ["synth", files["csv"], "-o", str(out), *[fill(a, files) for a in args]]
    if "-e" not in args:
        argv += ["-e", "1"]
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert not out.exists()
    return lines[0].removeprefix("error: ")


@pytest.mark.parametrize("case", list(CASES))
def test_same_message_from_the_command_line_and_python(case, files, capsys):
    args, kwargs = CASES[case]
    kwargs = {"epsilon": 1.0, **{k: fill(v, files) for k, v in kwargs.items()}}
    expected = python_names(cli_message(args, files, capsys))
    method_options = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTIONS}
    with pytest.raises(InputError) as info:
        privsample.synthesize(files["csv"], method_options=method_options, **kwargs)
    assert str(info.value) == expected
    if {"rows", "engine"} & set(kwargs):
        return  # not keywords of Synthesizer.fit
    fit = {k: kwargs.pop(k) for k in list(kwargs) if k in FIT}
    with pytest.raises(InputError) as info:
        privsample.Synthesizer(**kwargs, **method_options).fit(files["csv"], **fit)
    assert str(info.value) == expected


def test_a_schema_column_missing_from_the_header_is_refused_alike_as_the_run_starts(files, tmp_path, capsys):
    """Read off the header, the first read of the data: once a budget file is charged, whose charge is released."""
    from privsample.privacy.budget import Budget

    budget = Budget.create(tmp_path / "b.json", epsilon=5, delta=1e-6)
    message = cli_message(["-m", "mst", "--schema", "{extra}", "--budget-file", str(budget.path)], files, capsys)
    assert message == f"{files['csv']}: column 'c' of extra.yaml is not in the data"
    assert [r["kind"] for r in json.loads(budget.path.read_text())["records"]] == ["reserve", "cancel"]
    with pytest.raises(InputError) as info:
        privsample.synthesize(files["csv"], epsilon=1.0, method="mst", schema=files["extra"])
    assert str(info.value) == message
    with pytest.raises(InputError) as info:
        privsample.Synthesizer("mst", epsilon=1.0).fit(files["csv"], schema=files["extra"])
    assert str(info.value) == message


def test_the_columns_a_schema_leaves_out_are_named_once_as_the_run_starts(files, tmp_path, capsys):
    from privsample.api.run import check_input, prepare, spending

    narrow = tmp_path / "narrow.yaml"
    privsample.Schema.draft(pd.read_csv(files["csv"])[["a"]]).reviewed().save(narrow)
    out = tmp_path / "o.csv"
    main(["synth", files["csv"], "-o", str(out), "-e", "1", "-m", "mst", "--iters", "5", "--schema", str(narrow), "-q"])
    err = " ".join(capsys.readouterr().err.split())
    assert out.exists(), err
    assert err.count("warning: column 'b' of t.csv is not in narrow.yaml and is left out") == 1, err
    request = prepare(method="mst", epsilon=1, delta=1e-9, schema=narrow)
    with warnings.catch_warnings(record=True) as caught:  # the check reads no data: the header is read at the start
        warnings.simplefilter("always")
        table = check_input(request, files["csv"])
    assert not [w for w in caught if issubclass(w.category, ColumnsLeftOutWarning)]
    with pytest.warns(ColumnsLeftOutWarning, match="column 'b' of t.csv is not in narrow.yaml and is left out"):
        with spending(request, table):
            pass
    with pytest.warns(ColumnsLeftOutWarning, match="column 'b' of t.csv"):  # the Python API names the loss too
        privsample.Synthesizer("mst", epsilon=1.0, iters=5).fit(files["csv"], schema=narrow)


@pytest.mark.parametrize("seed", [True, -1, 1.5, "1"])
def test_fit_and_sample_refuse_the_same_seeds(seed, files):
    with pytest.raises(InputError) as fit:
        privsample.Synthesizer("mst", epsilon=1, iters=5).fit(files["csv"], seed=seed)
    with pytest.raises(InputError) as sample:
        fitted(files).sample(5, seed=seed)
    assert str(fit.value) == str(sample.value) == f"seed must be a whole number >= 0 (got {seed!r})"


def test_sample_refuses_bad_rows_as_the_command_does(files, capsys):
    s = fitted(files)
    model = files["dir"] / "model.zip"
    s.save(model)
    for rows in (-1, 10**13):
        with pytest.raises(SystemExit) as info:
            main(["sample", str(model), "-o", str(files["dir"] / "s.csv"), "--rows", str(rows)])
        err = capsys.readouterr().err.strip()
        assert info.value.code == 2 and len(err.splitlines()) == 1
        with pytest.raises(InputError) as py:
            s.sample(rows)
        assert python_names(err.removeprefix("error: ")) == str(py.value)


def test_load_has_every_attribute_of_a_fitted_synthesizer(files, tmp_path):
    s = fitted(files)
    s.save(tmp_path / "m.zip")
    loaded = privsample.load(tmp_path / "m.zip")
    assert set(vars(s)) == set(vars(loaded))
    for name in ("method", "epsilon", "delta", "budget", "options", "fitted", "private", "schema", "ledger", "losses"):
        getattr(loaded, name)
    assert loaded.budget is None and loaded.method == "mst" and loaded.epsilon == 1


def test_synthesize_returns_public_types(files):
    with pytest.warns(UserWarning, match="seeded"):
        res = privsample.synthesize(
            files["csv"], epsilon=1, method="mst", schema=files["schema"], seed=0, rows=10, method_options={"iters": 5}
        )
    assert isinstance(res, privsample.Synthesis)
    assert isinstance(res.schema, privsample.Schema) and isinstance(res.ledger, privsample.Ledger)
    assert not hasattr(res, "accountant") and res.table.shape == (10, 2) and res.private is False
