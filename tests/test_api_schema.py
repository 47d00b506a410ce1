"""The public ``privsample.Schema``: declared in code, drafted (NON-PRIVATE), discovered with DP, reviewed, shown."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import Categorical, InputError, Numeric, Schema, Synthesizer
from privsample.data import schema as data_schema
from privsample.privacy.accountant import Accountant
from privsample.privacy.ledger import Ledger

FAST = {"iters": 30}


@pytest.fixture(autouse=True)
def _quiet_seeded_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning (NOT private: reproducible tests)
        yield


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 2000
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["A", "B", "C"], n, p=[0.6, 0.3, 0.1]),
            "age": rng.integers(17, 91, n),
        }
    )


@pytest.fixture
def spent(monkeypatch) -> list:
    """Every budget spend (``Accountant.spend``) of the test."""
    calls: list = []
    original = Accountant.spend

    def spend(self, *args, **kwargs):
        calls.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Accountant, "spend", spend)
    return calls


def test_exports():
    for name in ("Schema", "Categorical", "Numeric"):
        assert name in privsample.__all__ and name in dir(privsample)
    assert privsample.Schema is privsample.api.schema.Schema
    assert issubclass(privsample.Schema, data_schema.Schema)
    assert privsample.Categorical is data_schema.Categorical and privsample.Numeric is data_schema.Numeric


def test_built_in_code_is_declared_by_a_person():
    s = Schema([Categorical("sex", ["F", "M"]), Numeric("age", 17, 90, bins=16)])
    assert s.provenance == "user" and s.names == ["sex", "age"] and s.shape == (2, 16)
    assert s["sex"].categories == ("F", "M")
    assert "Categorical('sex', ['F', 'M'])" in repr(s) and "NON-PRIVATE" not in repr(s)
    assert "declared or reviewed by a person" in str(s)


def test_bad_schemas_in_code():
    with pytest.raises(InputError, match="more than once"):
        Schema([Categorical("a", ["x"]), Categorical("a", ["y"])])
    with pytest.raises(InputError, match="no columns"):
        Schema([])
    with pytest.raises(InputError, match="non-empty text"):
        Schema([Categorical(" ", ["x"])])
    with pytest.raises(InputError, match="a list of"):
        Schema(Categorical("a", ["x"]))
    with pytest.raises(InputError, match="unknown provenance"):
        Schema([Categorical("a", ["x"])], provenance="trusted")
    with pytest.raises(InputError, match="Categorical or Numeric"):
        Schema(["a"])


def test_draft_is_marked_and_refused_until_reviewed(df, spent):
    draft = Schema.draft(df)
    assert isinstance(draft, Schema) and draft.provenance == "draft-nonprivate"
    assert draft.names == ["sex", "race", "age"] and draft["race"].categories == ("A", "B", "C")
    assert draft["age"].lower == 17 and draft["age"].upper == 90 and draft.ledger is None
    assert "NON-PRIVATE DRAFT" in repr(draft) and str(draft).startswith("NON-PRIVATE DRAFT")
    assert not spent  # a draft spends nothing (and guarantees nothing)

    s = Synthesizer("mst", epsilon=1, **FAST)
    with pytest.raises(InputError, match="unreviewed non-private draft"):
        s.fit(df, schema=draft)
    assert not spent and not s._spent  # refused before the budget is marked spent: the object can still fit
    with pytest.raises(InputError, match="unreviewed non-private draft"):
        privsample.synthesize(df, epsilon=1, method="mst", schema=draft, method_options=FAST)
    assert not spent

    reviewed = draft.reviewed()
    assert reviewed.provenance == "user" and draft.provenance == "draft-nonprivate"
    assert reviewed.columns == draft.columns and reviewed.columns is not draft.columns
    assert not any(n.startswith("NON-PRIVATE DRAFT") for n in reviewed.notes)
    assert "NON-PRIVATE" not in repr(reviewed)
    s.fit(df, schema=reviewed, seed=0)
    assert isinstance(s.schema, Schema) and s.schema.provenance == "user" and len(s.sample(20, seed=0)) == 20


def test_draft_options_and_many_categories():
    df = pd.DataFrame({"city": [f"c{i % 30}" for i in range(300)], "x": np.arange(300) / 7})
    d = Schema.draft(df, max_categories=5, bins=4)
    assert len(d["city"].categories) == 5 and d["city"].other == "(other)" and d["x"].bins == 4
    assert any("30 distinct values" in n for n in d.notes)
    with pytest.raises(InputError, match="bins must be"):
        Schema.draft(df, bins=0)
    with pytest.raises(InputError, match="max_categories must be"):
        Schema.draft(df, max_categories=2.5)
    with pytest.raises(InputError, match="empty"):
        Schema.draft(df.iloc[:0])


def test_discover_is_the_cli_run_with_its_ledger(df, tmp_path, spent):
    s = Schema.discover(df, epsilon=1.0)
    assert isinstance(s, Schema) and s.provenance == "private" and s.names == ["sex", "race", "age"]
    assert isinstance(s.ledger, Ledger) and s.ledger.private and len(s.ledger.entries) == len(spent) > 0
    summary = s.ledger.summary
    assert summary["epsilon_spent"] <= 1.0 + 1e-9 and summary["target_epsilon_delta"] == [1.0, 1e-9]
    assert summary["rho_spent"] <= summary["rho_total"] * (1 + 1e-12)
    assert s.discovery is not None
    assert "ε=" in str(s) and "<table>" in s.ledger._repr_html_()
    with pytest.raises(InputError, match="needs no review"):
        s.reviewed()

    # save/load keep the provenance, the ledger and the discovery report; load gives the public class
    for name in ("schema.yaml", "schema.json"):
        s.save(tmp_path / name)
        back = Schema.load(tmp_path / name)
        assert isinstance(back, Schema) and isinstance(back.ledger, Ledger)
        assert back.provenance == "private" and back.to_dict() == s.to_dict() and back == s
        assert data_schema.Schema.load(tmp_path / name).to_dict() == s.to_dict()  # the file the CLI writes

    # a fit with it adds the discovery's cost to its own ledger
    fit = Synthesizer("mst", epsilon=2, **FAST).fit(df, schema=s, seed=0)
    labels = [e["label"] for e in fit.ledger.entries]
    assert all(e["label"] in labels for e in s.ledger.entries)


def test_discover_matches_the_cli(df, tmp_path):
    from privsample.cli import main

    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "cli.yaml"
    try:
        main(["schema", str(path), "-o", str(out), "--private-epsilon", "1", "--seed", "4"])
    except SystemExit as exc:
        assert not exc.code
    cli = Schema.load(out)
    api = Schema.discover(df, 1, seed=4)
    assert api.to_dict() == cli.to_dict()
    assert Schema.discover(path, 1, seed=4).to_dict() == cli.to_dict()  # a path as well as a DataFrame


def test_seeded_discovery_is_flagged_not_private(df):
    with pytest.warns(UserWarning, match="NOT differentially private"):
        s = Schema.discover(df, 1, seed=0)
    assert not s.ledger.private and s.ledger.summary["private"] is False
    assert "NOT PRIVATE" in str(s) and "NOT PRIVATE" in s._repr_html_()
    assert Schema.discover(df, 1, seed=0).to_dict() == s.to_dict()  # reproducible


def test_pyarrow_and_parquet_inputs(df, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    assert Schema.draft(table).to_dict() == Schema.draft(df).to_dict()
    assert Schema.discover(table, 1, seed=1).to_dict() == Schema.discover(df, 1, seed=1).to_dict()
    pq.write_table(table, tmp_path / "t.parquet")
    assert Schema.draft(tmp_path / "t.parquet").names == ["sex", "race", "age"]


def test_polars_input(df):
    pl = pytest.importorskip("polars")
    assert Schema.draft(pl.from_pandas(df)).to_dict() == Schema.draft(df).to_dict()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: Schema.discover(d, 0), "^epsilon must be a finite number > 0"),
        (lambda d: Schema.discover(d, -1), "^epsilon must be"),
        (lambda d: Schema.discover(d, float("inf")), "^epsilon must be"),
        (lambda d: Schema.discover(d, "1"), "^epsilon must be"),
        (lambda d: Schema.discover(d, 1, 0), "^delta must be in"),
        (lambda d: Schema.discover(d, 1, 1.0), "^delta must be in"),
        (lambda d: Schema.discover(d, 1, seed="x"), "seed must be"),
        (lambda d: Schema.discover([[1, 2]], 1), "expected a pandas DataFrame"),
        (lambda d: Schema.discover(d.to_dict(), 1), "not dict"),
        (lambda d: Schema.discover(d.set_axis(["a", "a", "b"], axis=1), 1), "duplicate column name"),
        (lambda d: Schema.discover(d.set_axis(["a", " ", "b"], axis=1), 1), "empty name"),
        (lambda d: Schema.discover("/no/such/file.csv", 1), "data file not found"),
        (lambda d: Schema.draft(42), "not int"),
        (lambda d: Schema.draft(d.set_axis(["a", "a", "b"], axis=1)), "duplicate column name"),
    ],
)
def test_bad_input_raises_before_any_spend(df, spent, call, message):
    with pytest.raises(InputError, match=message) as info:
        call(df)
    assert "\n" not in str(info.value)
    assert not spent


def test_html_shows_every_column_and_the_draft_banner():
    df = pd.DataFrame({"sex": ["F", "M"] * 20, "<b>x</b>": np.arange(40), "note": ["a&b", None] * 20})
    draft = Schema.draft(df)
    page = draft._repr_html_()
    assert "NON-PRIVATE DRAFT" in page and "draft-nonprivate" in page
    for name in ("sex", "&lt;b&gt;x&lt;/b&gt;", "note"):
        assert f"<td>{name}</td>" in page
    assert "<b>x</b>" not in page and "a&amp;b" in page  # escaped
    assert "<td>yes</td>" in page  # nullable
    declared = Schema([Categorical("c", ["x", "y"], other="(other)"), Numeric("n", 0, 1, edges=(0, 0.5, 1))])
    page = declared._repr_html_()
    assert "NON-PRIVATE" not in page and "<td>(other)</td>" in page and "edges 0, 0.5, 1" in page


def test_draft_yaml_file_is_labelled_and_round_trips(tmp_path):
    draft = Schema.draft(pd.DataFrame({"sex": ["F", "M"] * 5}))
    draft.save(tmp_path / "d.yaml")
    assert (tmp_path / "d.yaml").read_text().startswith("# NON-PRIVATE DRAFT")
    back = Schema.load(tmp_path / "d.yaml")
    assert back.provenance == "draft-nonprivate" and "NON-PRIVATE DRAFT" in repr(back)
    draft.reviewed().save(tmp_path / "r.yaml")
    assert Schema.load(tmp_path / "r.yaml").provenance == "user"


def test_docstring_examples_run():
    import doctest

    import privsample.api.schema

    result = doctest.testmod(privsample.api.schema, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 10
