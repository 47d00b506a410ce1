"""A table wider than a method models is refused from its header or schema (public), before any spend: exit 2, one
line naming the limit and the method. The tests lower the limit (``max_columns``) to the 3 columns of a small table;
the real one is ``graph_cells``'s."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

import privsample
from privsample.errors import InputError
from privsample.synth.aim import AIM
from privsample.synth.mst import MST
from privsample.synth.ppsyn import PPSyn
from privsample.synth.selection import MAX_ATTRIBUTES
from tests.cli import run
from tests.test_cli import small_schema, small_table

CLASSES = {"ppsyn": PPSyn, "aim": AIM, "mst": MST}


@pytest.fixture
def narrow(monkeypatch):
    """Every method models at most 2 columns, and nothing may be spent."""
    import privsample.privacy.accountant as accountant

    for cls in CLASSES.values():
        monkeypatch.setattr(cls, "max_columns", 2)
    monkeypatch.setattr(accountant.Accountant, "spend", lambda *a, **k: pytest.fail("spent"))


@pytest.fixture
def files(tmp_path):
    small_table().to_csv(tmp_path / "data.csv", index=False)
    small_table().to_parquet(tmp_path / "data.parquet", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(small_schema()))
    two = {**small_schema(), "columns": small_schema()["columns"][:2]}
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(two))
    return tmp_path


@pytest.mark.parametrize("method", list(CLASSES))
@pytest.mark.parametrize("more", [[], ["--engine", "duckdb"], ["--schema", "schema.yaml"]])
@pytest.mark.parametrize("data", ["data.csv", "data.parquet"])
def test_a_table_too_wide_is_refused_before_any_spend(files, narrow, method, more, data, capsys):
    from privsample.privacy.budget import Budget

    run(["budget", "init", files / "b.json", "--epsilon", 5], capsys)
    more = [str(files / m) if m.endswith(".yaml") else m for m in more]
    argv = ["synth", files / data, "-o", files / "s.csv", "-e", 1, "-m", method, "--budget-file", files / "b.json"]
    code, text = run([*argv, *more], capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1, text
    assert re.search(rf"has 3 columns, more than {method} models \(at most 2\).*--schema", lines[0]), lines[0]
    assert not (files / "s.csv").exists()
    assert Budget.open(files / "b.json").epsilon_spent() == 0


def test_a_schema_that_keeps_few_enough_columns_runs(files, narrow, monkeypatch, capsys):
    monkeypatch.undo()  # spending allowed again; the limit stays lowered
    monkeypatch.setattr(MST, "max_columns", 2)
    argv = ["synth", files / "data.csv", "-o", files / "s.csv", "-e", 1, "-m", "mst", "--schema", files / "two.yaml"]
    code, text = run([*argv, "--iters", 20, "-q"], capsys)
    assert code == 0, text
    assert list(pd.read_csv(files / "s.csv").columns) == ["color", "size"]


@pytest.mark.parametrize("method", list(CLASSES))
def test_python_refuses_a_table_too_wide(files, narrow, method):
    message = rf"has 3 columns, more than {method} models \(at most 2\): .* reviewed schema that"
    with pytest.raises(InputError, match=message):
        privsample.Synthesizer(method, epsilon=1).fit(small_table())
    with pytest.raises(InputError, match=message):
        privsample.synthesize(files / "data.csv", epsilon=1, method=method)
    with pytest.raises(InputError, match=message):
        privsample.synthesize(files / "data.csv", epsilon=1, method=method, schema=files / "schema.yaml")


def test_the_discovery_of_a_source_known_late_checks_the_width(narrow, monkeypatch):
    """A source whose columns are first known when its engine opens (Spark) is checked again before discovery
    spends (here: an in-memory table whose limit is lowered after the request was checked)."""
    from privsample.api.run import check_input, prepare
    from privsample.api.run import run as run_request

    monkeypatch.setattr(MST, "max_columns", 3)
    request = prepare(method="mst", epsilon=1, delta=1e-9)
    table = check_input(request, small_table())
    request.synth.max_columns = 2
    with pytest.raises(InputError, match="the table has 3 columns, more than mst models"):
        run_request(request, table)


def test_the_limit_is_graph_cells_one():
    """``MAX_ATTRIBUTES`` is ``graphcells.c``'s ``MAXA``: the widest junction tree it sizes."""
    source = (Path(privsample.__file__).parent / "synth" / "graphcells.c").read_text()
    assert int(re.search(r"#define MAXA (\d+)", source).group(1)) == MAX_ATTRIBUTES
    assert {cls.max_columns for cls in CLASSES.values()} == {MAX_ATTRIBUTES}
