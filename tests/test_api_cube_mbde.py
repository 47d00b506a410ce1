"""``cube_sample`` and ``mbde_sample``: the research samplers from Python. A Release from a DataFrame, the same
draws and ledger as the command for the same seed and data, pyarrow input, refusals as ``InputError`` with the
command's message (options named as Python names them), the seeded-run warning, and the docstring examples."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

import privsample
from privsample import InputError, Ledger, Release, Schema, cube_sample, mbde_sample
from privsample.data.schema import Categorical, Numeric
from privsample.io import write_table
from tests.cli import run

CUBE_FAST = {"k": 4, "degree": 1}  # p = 3 bits, m = 4L = 16
CUBE_EPS = 5000.0  # certifies k = 4 draws of n = 500 records (binary: about 1208; schema, p = 6: 2114)
MBDE_FAST = {"rounds": 2, "epochs": 5, "hidden": "8"}
MBDE_FLAGS = ["--rounds", "2", "--epochs", "5", "--hidden", "8"]


@pytest.fixture(autouse=True)
def _quiet_seeded_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning (NOT private: reproducible tests)
        yield


@pytest.fixture(scope="module")
def bits() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, size=(500, 3))
    x[:, 1] = np.where(rng.random(500) < 0.7, x[:, 0], x[:, 1])
    return pd.DataFrame(x, columns=["a", "b", "c"])


@pytest.fixture(scope="module")
def numbers() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame(
        {"income": np.clip(rng.normal(40, 10, 200), 0, 100), "age": rng.integers(18, 90, 200).astype(np.int64)}
    )


MBDE_SCHEMA = Schema(
    [Numeric("income", 0.0, 100.0, bins=10), Numeric("age", 0.0, 120.0, bins=12, integer=True)], provenance="user"
)


def _record_ledger(monkeypatch, module) -> list:
    ledgers = []
    printed = module.print_ledger

    def record(ledger, *args, **kwargs):
        ledgers.append(ledger)
        return printed(ledger, *args, **kwargs)

    monkeypatch.setattr(module, "print_ledger", record)
    return ledgers


def _error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, text
    return lines[0][len("error: ") :]


# -- cube_sample --------------------------------------------------------------------------------------------
def test_cube_returns_a_release(bits):
    rel = cube_sample(bits, epsilon=CUBE_EPS, seed=0, **CUBE_FAST)
    assert isinstance(rel, Release) and isinstance(rel.ledger, Ledger)
    assert isinstance(rel.table, pd.DataFrame) and list(rel.table.columns) == ["a", "b", "c"] and len(rel.table) == 4
    assert set(np.unique(rel.table.to_numpy().astype(str))) <= {"0", "1"}
    assert rel.guarantee.startswith("certified pure ε = ") and "replace-one, n public; p=3, d=1, m=16" in rel.guarantee
    assert rel.rule.startswith("reading every column as binary")
    assert rel.notes == ["100.0% were valid codes (repair for the rest)"]
    entry = rel.ledger.entries[-1]
    assert entry["details"]["neighbouring"] == "replace one record (n public)" and entry["details"]["n"] == 500
    assert "lam" not in repr(rel.ledger).lower() and "λ" not in repr(rel)


@pytest.mark.parametrize("with_schema", [False, True], ids=["binary", "schema"])
def test_cube_seeded_equals_the_command(bits, tmp_path, capsys, monkeypatch, with_schema):
    import privsample.cli.cube as cli_cube

    df = bits.copy()
    args = []
    schema = None
    if with_schema:
        df["a"] = df["a"].map({0: "x", 1: "y"})
        schema = Schema([Categorical("a", ("x", "y")), Categorical("b", ("0", "1"))], provenance="user")
        schema.save(tmp_path / "s.json")
        args = ["--schema", tmp_path / "s.json"]
        df = df[["a", "b"]]
    csv, out = tmp_path / "d.csv", tmp_path / "out.csv"
    df.to_csv(csv, index=False)
    ledgers = _record_ledger(monkeypatch, cli_cube)
    code, text = run(
        ["cube", "sample", csv, "-o", out, "-e", CUBE_EPS, "--k", 4, "--degree", 1, "--seed", 3, *args], capsys
    )
    assert code == 0, text
    rel = cube_sample(df, epsilon=CUBE_EPS, seed=3, schema=schema, **CUBE_FAST)
    write_table(rel.table, tmp_path / "api.csv")
    assert (tmp_path / "api.csv").read_bytes() == out.read_bytes()
    assert dict(rel.ledger) == dict(ledgers[0]) and not rel.private
    flat = " ".join(text.split())
    assert rel.guarantee in flat and rel.notes[0] in flat and " ".join(rel.rule.split()) in flat


def test_cube_pyarrow_and_path_inputs_give_the_same_draws(bits, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pandas_rel = cube_sample(bits, epsilon=CUBE_EPS, seed=5, **CUBE_FAST)
    arrow_rel = cube_sample(pa.Table.from_pandas(bits, preserve_index=False), epsilon=CUBE_EPS, seed=5, **CUBE_FAST)
    bits.to_csv(tmp_path / "d.csv", index=False)
    path_rel = cube_sample(str(tmp_path / "d.csv"), epsilon=CUBE_EPS, seed=5, **CUBE_FAST)
    assert pandas_rel.table.equals(arrow_rel.table) and pandas_rel.table.equals(path_rel.table)
    assert dict(pandas_rel.ledger) == dict(arrow_rel.ledger)


def test_cube_seeded_warns_and_is_not_private_unseeded_is(bits):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = cube_sample(bits, epsilon=CUBE_EPS, seed=1, **CUBE_FAST)
    assert any("NOT differentially private" in str(w.message) for w in caught)
    assert rel.private is False and rel.ledger.private is False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        secure = cube_sample(bits, epsilon=CUBE_EPS, **CUBE_FAST)
    assert not [w for w in caught if "NOT" in str(w.message)]
    assert secure.private is True and len(secure.table) == 4


def test_cube_refuses_an_uncertified_epsilon_with_the_commands_message(bits, tmp_path, capsys):
    bits.to_csv(tmp_path / "d.csv", index=False)
    code, text = run(
        ["cube", "sample", tmp_path / "d.csv", "-o", tmp_path / "o.csv", "-e", 10, "--k", 4, "--degree", 1], capsys
    )
    with pytest.raises(InputError) as exc:
        cube_sample(bits, epsilon=10, **CUBE_FAST)
    assert code == 2 and str(exc.value) == _error(text)
    assert "k ln(Delta/delta), proved" in str(exc.value) and "at most k=3" in str(exc.value)
    code, text = run(
        ["cube", "sample", tmp_path / "d.csv", "-o", tmp_path / "o.csv", "-e", 10, "--k", 4, "--degree", 1]
        + ["--theorem-bound"],
        capsys,
    )
    with pytest.raises(InputError) as exc:
        cube_sample(bits, epsilon=10, theorem_bound=True, **CUBE_FAST)
    assert code == 2 and str(exc.value) == _error(text)
    assert "would need n >= " in str(exc.value) and "at most k=" in str(exc.value)


@pytest.mark.parametrize(
    "kwargs, python, cli",
    [
        ({"epsilon": 0}, "epsilon must be > 0 and finite (got 0.0)", "--epsilon must be > 0 and finite (got 0.0)"),
        ({"k": 0}, "k must be >= 1, got 0", "k must be >= 1, got 0"),
        ({"invalid": "keep"}, "invalid must be one of repair, drop, got 'keep'", None),
        ({"degree": 0}, "degree must be >= 1, got 0", "degree must be >= 1, got 0"),
    ],
)
def test_cube_bad_options_before_any_work(bits, tmp_path, capsys, monkeypatch, kwargs, python, cli):
    import privsample.cube.pipeline as pipe

    def no_read(*a, **k):
        raise AssertionError("the data was read")

    monkeypatch.setattr(pipe, "cube_codes", no_read)
    monkeypatch.setattr(pipe, "load_for_cube", no_read)
    opts = {"epsilon": CUBE_EPS, **CUBE_FAST, **kwargs}
    with pytest.raises(InputError) as exc:
        cube_sample(bits, **opts)
    assert str(exc.value) == python
    if cli:
        argv = ["cube", "sample", tmp_path / "d.csv", "-o", tmp_path / "o.csv"]
        argv += ["-e", opts["epsilon"], "--k", opts["k"], "--degree", opts["degree"]]
        code, text = run(argv, capsys)
        assert code == 2 and _error(text) == cli


@pytest.mark.parametrize("provenance, needle", [("draft-nonprivate", "draft"), ("private", "reviewed public schema")])
def test_cube_refuses_a_draft_or_private_schema_before_reading(tmp_path, capsys, provenance, needle):
    schema = Schema([Categorical("a", ("x", "y"))], provenance=provenance)
    schema.save(tmp_path / "s.json")
    missing = tmp_path / "no-such-table.csv"
    with pytest.raises(InputError, match=needle) as exc:
        cube_sample(str(missing), epsilon=CUBE_EPS, k=1, schema=tmp_path / "s.json")
    code, text = run(
        ["cube", "sample", missing, "-o", tmp_path / "o.csv", "-e", CUBE_EPS, "--k", 1, "-s", tmp_path / "s.json"],
        capsys,
    )
    assert code == 2 and _error(text) == " ".join(str(exc.value).split())


def test_bad_argument_types():
    with pytest.raises(InputError, match="expected a pandas DataFrame"):
        cube_sample([[0, 1]], epsilon=1, k=1)
    with pytest.raises(InputError, match="schema must be a Schema"):
        mbde_sample(pd.DataFrame({"a": [1]}), schema=3, columns="a", epsilon=1, samples=1)
    with pytest.raises(InputError, match="seed must be an integer"):
        cube_sample(pd.DataFrame({"a": [1]}), epsilon=1, k=1, seed="x")
    with pytest.raises(InputError, match="apply to CSV files"):
        cube_sample(pd.DataFrame({"a": [1]}), epsilon=1, k=1, delimiter=";")
    with pytest.raises(InputError, match="apply to CSV files"):
        mbde_sample(pd.DataFrame({"a": [1]}), schema=MBDE_SCHEMA, columns="a", epsilon=1, samples=1, encoding="latin-1")
    with pytest.raises(InputError, match="samples must be an integer"):
        mbde_sample(pd.DataFrame({"a": [1]}), schema=MBDE_SCHEMA, columns="a", epsilon=1, samples=2.5)


# -- mbde_sample --------------------------------------------------------------------------------------------
def test_mbde_returns_a_release(numbers):
    rel = mbde_sample(
        numbers, schema=MBDE_SCHEMA, columns=["income", "age"], epsilon=3, samples=20, seed=0, **MBDE_FAST
    )
    assert isinstance(rel, Release) and isinstance(rel.ledger, Ledger) and isinstance(rel.table, pd.DataFrame)
    assert list(rel.table.columns) == ["income", "age"] and len(rel.table) == 20
    assert rel.table["income"].between(0, 100).all() and pd.api.types.is_integer_dtype(rel.table["age"])
    assert rel.guarantee.startswith("ε = 3 in total = 20 samples × per-sample ε 0.15, integral privacy")
    assert rel.rule.startswith("input rule") and rel.notes == []
    assert rel.ledger.entries[-1]["details"]["integral_privacy"] is True and not rel.private


def test_mbde_seeded_equals_the_command(numbers, tmp_path, capsys, monkeypatch):
    import privsample.cli.mbde as cli_mbde

    csv, out, sch = tmp_path / "d.csv", tmp_path / "out.csv", tmp_path / "s.yaml"
    numbers.to_csv(csv, index=False)
    MBDE_SCHEMA.save(sch)
    ledgers = _record_ledger(monkeypatch, cli_mbde)
    argv = ["mbde", csv, "-s", sch, "-c", "income,age", "-e", 3, "-m", 20, "-o", out, "--seed", 4, *MBDE_FLAGS]
    code, text = run(argv, capsys)
    assert code == 0, text
    rel = mbde_sample(numbers, schema=sch, columns="income,age", epsilon=3, samples=20, seed=4, **MBDE_FAST)
    write_table(rel.table, tmp_path / "api.csv")
    assert (tmp_path / "api.csv").read_bytes() == out.read_bytes()
    assert dict(rel.ledger) == dict(ledgers[0])
    flat = " ".join(text.split())
    assert rel.guarantee + " [NOT PRIVATE: seeded]" in flat and " ".join(rel.rule.split()) in flat


def test_mbde_pyarrow_input(numbers):
    pa = pytest.importorskip("pyarrow")
    opts = {"schema": MBDE_SCHEMA, "columns": "income", "epsilon": 2, "samples": 5, "seed": 2, **MBDE_FAST}
    a = mbde_sample(pa.Table.from_pandas(numbers, preserve_index=False), **opts)
    b = mbde_sample(numbers, **opts)
    assert a.table.equals(b.table) and dict(a.ledger) == dict(b.ledger)


def test_mbde_warns_when_the_rows_are_practically_q0(numbers):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = mbde_sample(numbers, schema=MBDE_SCHEMA, columns="income", epsilon=1, samples=50, seed=1, **MBDE_FAST)
    messages = [str(w.message) for w in caught]
    assert any("NOT differentially private" in m for m in messages)
    assert any("practically draws from q0" in m for m in messages)
    assert len(rel.notes) == 1 and "0.02" in rel.notes[0] and rel.private is False


def test_mbde_q0_warning_includes_its_threshold():
    """ε = 10 over 100 rows (0.1 a row) keeps the density within e^0.05 of q0: warned, as below it."""
    from privsample.mbde.release import indistinguishability_warning

    assert "practically draws from q0" in indistinguishability_warning(10, 100)
    assert indistinguishability_warning(100, 10) is None


def _bad_mbde_schema(tmp_path, provenance):
    d = {"provenance": provenance, "columns": [{"name": "income", "type": "numeric", "lower": 0, "upper": 100}]}
    if provenance == "private":
        d["ledger"] = {"rho": 0.01}
    path = tmp_path / f"{provenance}.yaml"
    path.write_text(yaml.safe_dump(d))
    return path


@pytest.mark.parametrize(
    "case, kwargs, python, cli",
    [
        ("epsilon", {"epsilon": -1}, "epsilon must be > 0 and finite (got -1.0)", "--epsilon must be > 0"),
        ("samples", {"samples": 0}, "samples must be >= 1 (got 0)", "--samples must be >= 1 (got 0)"),
        ("twice", {"columns": "income,income"}, "columns lists a column twice: income,income", "--columns lists"),
        ("missing", {"columns": "income,nope"}, "column 'nope' is not in the table", "column 'nope' is not in"),
        ("unbounded", {"columns": "income,tips"}, "column 'tips' has no public bounds", "column 'tips' has no"),
        ("draft", {"schema": "draft-nonprivate"}, "unreviewed non-private draft", "unreviewed non-private draft"),
        ("private", {"schema": "private"}, "needs a reviewed public schema", "needs a reviewed public schema"),
    ],
)
def test_mbde_refusals(numbers, tmp_path, capsys, case, kwargs, python, cli):
    df = numbers.assign(tips=1.0)
    csv, sch = tmp_path / "d.csv", tmp_path / "s.yaml"
    df.to_csv(csv, index=False)
    MBDE_SCHEMA.save(sch)
    opts = {"schema": sch, "columns": "income", "epsilon": 1, "samples": 5, **MBDE_FAST, **kwargs}
    if case in ("draft", "private"):
        opts["schema"] = _bad_mbde_schema(tmp_path, kwargs["schema"])
    with pytest.raises(InputError) as exc:
        mbde_sample(df, **opts)
    message = " ".join(str(exc.value).split())
    assert python in message
    argv = ["mbde", csv, "-s", opts["schema"], "-c", opts["columns"], "-e", opts["epsilon"], "-m", opts["samples"]]
    code, text = run([*argv, "-o", tmp_path / "o.csv", *MBDE_FLAGS], capsys)
    assert code == 2 and cli in _error(text) and not (tmp_path / "o.csv").exists()
    if case not in ("epsilon", "samples", "twice"):  # options are named as each caller names them
        assert _error(text) == message


def test_mbde_refuses_a_private_schema_before_reading(tmp_path):
    with pytest.raises(InputError, match="reviewed public schema"):
        mbde_sample(
            str(tmp_path / "no-such-table.csv"),
            schema=_bad_mbde_schema(tmp_path, "private"),
            columns="income",
            epsilon=1,
            samples=2,
        )


# -- exports and examples -----------------------------------------------------------------------------------
def test_exported_lazily():
    assert {"cube_sample", "mbde_sample"} <= set(privsample.__all__)
    assert privsample.cube_sample is cube_sample and privsample.mbde_sample is mbde_sample


def test_docstring_examples_run():
    import doctest

    import privsample.api.cube
    import privsample.api.mbde

    for module in (privsample.api.cube, privsample.api.mbde):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__
