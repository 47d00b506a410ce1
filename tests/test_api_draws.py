"""``privsample.draw_kary | draw_bernoulli | draw_product``: the samplers from distributions from Python, the
same implementation as ``privsample draw``: same draws for the same seed, same ledger, same refusals."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import InputError, Release
from privsample.api import draws as api_draws
from privsample.privacy.accountant import Accountant
from privsample.privacy.ledger import Ledger
from tests.cli import run


def flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


@pytest.fixture(autouse=True)
def _quiet_seeded_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the seeded-noise warning (NOT private: reproducible tests)
        yield


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 2400
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "a": (rng.random(n) < 0.4).astype(int),
            "b": (rng.random(n) < 0.6).astype(int),
            "c": (rng.random(n) < 0.5).astype(int),
        }
    )


@pytest.fixture
def csv(df, tmp_path) -> Path:
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


# (Python call, CLI arguments after the input): the same job
JOBS = {
    "kary": (
        lambda data, **kw: privsample.draw_kary(
            data, "color", categories=["red", "green", "blue"], epsilon=1, samples=8, **kw
        ),
        ["--column", "color", "--categories", "red,green,blue", "--epsilon", 1, "--samples", 8],
    ),
    "kary-codes": (
        lambda data, **kw: privsample.draw_kary(data, "a", k=1, epsilon=2, samples=3, **kw),
        ["--column", "a", "--k", 1, "--epsilon", 2, "--samples", 3],
    ),
    "bernoulli": (
        lambda data, **kw: privsample.draw_bernoulli(data, ["a", "b"], epsilon=1, samples=4, **kw),
        ["--columns", "a,b", "--epsilon", 1, "--samples", 4],
    ),
    "bernoulli-zcdp": (
        lambda data, **kw: privsample.draw_bernoulli(data, "a,b,c", epsilon=1, delta=1e-6, clip=0.25, **kw),
        ["--columns", "a,b,c", "--epsilon", 1, "--delta", 1e-6, "--clip", "0.25"],
    ),
    "product": (
        lambda data, **kw: privsample.draw_product(
            data, ["a", "b", "c"], epsilon=1, samples=2, skip_accuracy_check=True, **kw
        ),
        ["--columns", "a,b,c", "--epsilon", 1, "--samples", 2, "--skip-accuracy-check"],
    ),
}
SHAPES = {"kary": (8, 1), "kary-codes": (3, 1), "bernoulli": (4, 2), "bernoulli-zcdp": (1, 3), "product": (2, 3)}


@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_dataframe_gives_a_release_in_the_public_domain(df, job):
    release = JOBS[job][0](df)
    assert isinstance(release, Release) and isinstance(release.ledger, Ledger)
    assert release.table.shape == SHAPES[job] and release.private
    values = set(release.table.to_numpy().ravel().tolist())
    if job == "kary":
        assert list(release.table.columns) == ["color"] and values <= {"red", "green", "blue", "(other)"}
    elif job == "kary-codes":
        assert values <= {0, 1}  # code 1 is the catch-all '(other)' of k = 1
    else:
        assert values <= {0, 1}
    assert "(neighbours: replace one record, n public)" in release.guarantee
    assert release.rule.startswith("input rule") and release.notes[0].startswith("per-part n: ")
    assert "Release(" in repr(release) and "<p>" in release._repr_html_()


@pytest.mark.parametrize("job", sorted(JOBS))
def test_seeded_release_is_what_the_command_line_writes_and_prints(df, csv, tmp_path, capsys, job):
    call, argv = JOBS[job]
    out = tmp_path / "out.csv"
    code, err = run(["draw", job.split("-")[0], csv, *argv, "--seed", 11, "-o", out], capsys)
    assert code == 0, err
    release = call(df, seed=11)
    assert release.table.to_csv(index=False) == out.read_text()
    text = flat(err)
    assert flat(f"guarantee: {release.guarantee}") in text
    assert flat(release.rule) in text and all(flat(n) in text for n in release.notes)
    assert flat(release.ledger.total_line()) in text
    assert not release.private and "NOT PRIVATE" in err
    (entry,) = release.ledger.entries
    assert entry["label"] == f"{job.split('-')[0]}/draw" and entry["private"] is False
    assert entry["details"]["parts"] == SHAPES[job][0]
    assert release.ledger.summary["neighbouring"] == "replace one record (n public)"


@pytest.mark.parametrize("job", sorted(JOBS))
def test_csv_path_and_pyarrow_table_give_the_same_draws(df, csv, job):
    pa = pytest.importorskip("pyarrow")
    call = JOBS[job][0]
    expected = call(df, seed=5).table
    pd.testing.assert_frame_equal(call(pa.Table.from_pandas(df, preserve_index=False), seed=5).table, expected)
    pd.testing.assert_frame_equal(call(str(csv), seed=5).table, expected)
    pd.testing.assert_frame_equal(call(csv, seed=5).table, expected)


def test_polars_dataframe(df):
    pl = pytest.importorskip("polars")
    call = JOBS["bernoulli"][0]
    pd.testing.assert_frame_equal(call(pl.from_pandas(df), seed=2).table, call(df, seed=2).table)


def test_seeded_run_warns_and_is_not_private_secure_run_does_not_warn(df):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = privsample.draw_bernoulli(df, "a", epsilon=1, seed=3)
        assert not release.private and not release.ledger.private
        assert any("NOT differentially private" in str(w.message) for w in caught)
        assert all(w.filename == __file__ for w in caught)  # the warning points at the caller
        caught.clear()
        release = privsample.draw_bernoulli(df, "a", epsilon=1)
        assert release.private and not caught


def test_skip_accuracy_check_warns_with_the_numbers(df):
    with pytest.warns(UserWarning, match=r"needs n >= [\d,]+ records per draw .*skip_accuracy_check=True"):
        privsample.draw_product(df, ["a", "b", "c"], epsilon=1, skip_accuracy_check=True, seed=0)


@pytest.fixture
def no_spend(monkeypatch):
    """Fails the test if any budget is spent (refusals come before any draw)."""

    def spend(*args, **kwargs):
        raise AssertionError("budget spent before the refusal")

    monkeypatch.setattr(Accountant, "spend", spend)


def _cli_error(capsys, argv) -> str:
    code, err = run(argv, capsys)
    assert code == 2 and err.startswith("error: ")
    return flat(err[len("error: ") :])


@pytest.mark.parametrize(
    "call,argv",
    [
        (  # too few records per draw for alpha: the numbers needed
            lambda d: privsample.draw_kary(d, "color", categories="red,green,blue", epsilon=0.1, samples=10),
            ["draw", "kary", "{t}", "--column", "color", "--categories", "red,green,blue", "--epsilon", 0.1, "-m", 10],
        ),
        (
            lambda d: privsample.draw_product(d, "a,b,c", epsilon=1),
            ["draw", "product", "{t}", "--columns", "a,b,c", "--epsilon", 1],
        ),
        (
            lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, alpha=1e-30),
            ["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--alpha", 1e-30],
        ),
        (  # more samples than records
            lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, samples=5000),
            ["draw", "bernoulli", "{t}", "--columns", "a", "--epsilon", 1, "--samples", 5000],
        ),
        (  # too few records for the privacy the sampler can certify
            lambda d: privsample.draw_bernoulli(d, epsilon=0.001, skip_accuracy_check=True),
            ["draw", "bernoulli", "{t}", "--epsilon", 0.001, "--skip-accuracy-check"],
        ),
        (
            lambda d: privsample.draw_bernoulli(d, ["a", "b"], epsilon=0.0001, delta=1e-9, skip_accuracy_check=True),
            ["draw", "bernoulli", "{t}", "--columns", "a,b", "-e", 0.0001, "-d", 1e-9, "--skip-accuracy-check"],
        ),
        (  # a column missing: the public header is named
            lambda d: privsample.draw_bernoulli(d, ["a", "zz"], epsilon=1),
            ["draw", "bernoulli", "{t}", "--columns", "a,zz", "--epsilon", 1],
        ),
    ],
)
def test_refusals_raise_input_error_with_the_command_lines_numbers(df, csv, tmp_path, capsys, no_spend, call, argv):
    cli = _cli_error(capsys, [str(csv) if a == "{t}" else a for a in argv] + ["-o", tmp_path / "o.csv"])
    with pytest.raises(InputError) as info:
        call(df)
    api = str(info.value)
    assert "\n" not in api and "--" not in api
    in_python_words = re.sub(r"--([a-z-]+)", lambda m: m.group(1).replace("-", "_"), cli)
    in_python_words = in_python_words.replace(str(csv), "the input table")
    assert api == in_python_words.replace("pass skip_accuracy_check", "pass skip_accuracy_check=True")


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda d: privsample.draw_kary(d, "color", categories="red", epsilon=0), "epsilon must be > 0 and finite"),
        (lambda d: privsample.draw_kary(d, "color", epsilon=1), "categories=['a', 'b', 'c'] or k=K"),
        (lambda d: privsample.draw_kary(d, "color", k=3, categories=["r", "g"], epsilon=1), "k=3 does not match"),
        (lambda d: privsample.draw_kary(d, "color", categories=["r", "r"], epsilon=1), "must be distinct"),
        (lambda d: privsample.draw_kary(d, "color", categories=[], epsilon=1), "must be distinct"),
        (lambda d: privsample.draw_kary(d, "color", categories="r,g", other="b", epsilon=1), "other='b' is not"),
        (lambda d: privsample.draw_kary(d, "colour", categories="r", epsilon=1), "'colour' not in the input table"),
        (lambda d: privsample.draw_kary(d, "color", k=0, epsilon=1), "k must be >= 1"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=-1), "epsilon must be > 0"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon="1"), "epsilon must be a number"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, alpha=1), "alpha must lie in (0, 1)"),
        (lambda d: privsample.draw_bernoulli(d, "a,a", epsilon=1), "columns lists a column twice"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, clip="1/2"), "clip margin"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, clip="x"), "clip must be a number such as 1/4"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, samples=0), "samples must be >= 1"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, samples=1.5), "samples must be an integer"),
        (lambda d: privsample.draw_bernoulli(d, "a", epsilon=1, seed="0"), "seed must be an integer or None"),
        (lambda d: privsample.draw_product(d, "a", epsilon=1, delta=2), "delta must lie in (0, 1)"),
        (lambda d: privsample.draw_product(d, "a", epsilon=1, delimiter=";"), "apply to CSV files"),
        (lambda d: privsample.draw_product(d.to_dict(), "a", epsilon=1), "expected a pandas DataFrame"),
    ],
)
def test_bad_input_is_one_input_error_in_python_words(df, no_spend, call, message):
    with pytest.raises(InputError) as info:
        call(df)
    assert message in str(info.value) and "\n" not in str(info.value) and " --" not in str(info.value)


def test_exported_lazily_from_privsample():
    for name in ("draw_kary", "draw_bernoulli", "draw_product"):
        assert name in privsample.__all__ and getattr(privsample, name) is getattr(api_draws, name)


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(api_draws, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def test_the_steps_give_the_release_of_the_function(df):
    from privsample.api.draws import draw_input, draw_release, kary_request, product_request

    request = kary_request(column="color", categories=["red", "green", "blue"], epsilon=1, samples=8, seed=11)
    steps = draw_release(request, draw_input(df, request))
    pd.testing.assert_frame_equal(steps.table, JOBS["kary"][0](df, seed=11).table)
    assert steps.guarantee == JOBS["kary"][0](df, seed=11).guarantee
    request = product_request(columns="a,b,c", epsilon=1, samples=2, skip_accuracy_check=True, seed=11)
    table = draw_input(df, request)
    assert table.warning.endswith("drawing anyway (skip_accuracy_check=True)") and table.n == len(df)
    pd.testing.assert_frame_equal(draw_release(request, table).table, JOBS["product"][0](df, seed=11).table)


def test_one_shape_for_the_research_samplers_options_named_by_a_function():
    import inspect

    from privsample.api import cube, mbde
    from privsample.api.draws import bernoulli_request, kary_request, product_request
    from privsample.api.options import cli_option, python_option

    functions = [privsample.draw_kary, privsample.draw_bernoulli, privsample.draw_product]
    functions += [privsample.cube_sample, privsample.mbde_sample]
    for f in functions:
        assert "frontend" not in inspect.signature(f).parameters, f.__name__
    requests = [kary_request, bernoulli_request, product_request, cube.cube_request, mbde.mbde_request]
    for f in requests:
        assert inspect.signature(f).parameters["option"].default is python_option, f.__name__
    for name in ("draw_input", "draw_release", "draw_charge"):
        assert callable(getattr(api_draws, name))
    for module, prefix in ((cube, "cube"), (mbde, "mbde")):
        for step in ("request", "input", "release", "charge"):
            assert callable(getattr(module, f"{prefix}_{step}"))
    assert [python_option("k"), python_option("k", 3), python_option("skip_accuracy_check", True)] == [
        "k",
        "k=3",
        "skip_accuracy_check=True",
    ]
    assert [cli_option("small_delta"), cli_option("k", 3), cli_option("skip_accuracy_check", True)] == [
        "--small-delta",
        "--k 3",
        "--skip-accuracy-check",
    ]
    assert cli_option("categories", ["a", "b"]) == "--categories a,b"
    assert python_option("categories", ["a", "b"]) == "categories=['a', 'b']"
    with pytest.raises(InputError, match=r"^--k 3 does not match the 2 --categories$"):
        kary_request(column="c", categories="r,g", k=3, epsilon=1, option=cli_option)
    with pytest.raises(InputError, match=r"^--columns lists a column twice$"):
        product_request(columns="a,a", epsilon=1, option=cli_option)
