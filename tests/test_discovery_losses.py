"""What private discovery lost, named: ``discovery_losses`` on a hand-built discovered schema, the refusal that counts
columns left with one value, the command line's warnings, ``DiscoveryLossWarning`` and ``Synthesizer.losses`` in the
API, the evaluation report's section, and ``plan --rows``'s forecast of what discovery keeps (header only)."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample.data.discovery_report import (
    CLIP_LIMIT,
    Loss,
    check_not_collapsed,
    discovery_losses,
    one_value_columns,
)
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import DiscoveryLossWarning, InputError
from tests.cli import invoke


def run(argv, capsys) -> tuple[int, str]:
    code, out, err = invoke(argv, capsys)
    return code, out + err


def discovered(columns, clipped: dict[str, float], provenance: str = "private") -> Schema:
    """A schema as private discovery leaves it: provenance private, a per-column report with noisy figures."""
    report = []
    for c in columns:
        if isinstance(c, Numeric):
            report.append({"name": c.name, "kind": "numeric", "clipped_share": clipped.get(c.name, 0.0)})
        else:  # a noisy catch-all share of 10% (n_hat 1000, sigma 5: sd 0.5-0.7%), 0 for a column named const*
            counts = {str(v): 1000.0 / (len(c.categories) or 1) for v in c.categories}
            share = 0.0 if c.name.startswith("const") else 0.1
            report.append(
                {
                    "name": c.name,
                    "kind": "categorical",
                    "kept": len(c.categories),
                    "catch_all_share": share,
                    "sigma": 5.0,
                    "counts": counts,
                }
            )
    disc = {"n_hat": 1000.0, "share": 0.5, "rule": "planned", "min_category_records": 123, "columns": report}
    return Schema(columns, provenance=provenance, discovery=disc)


def every_kind() -> Schema:
    one = float(np.nextafter(1.5, np.inf))
    return discovered(
        [
            Categorical("none", (), other="(other)"),
            Categorical("blue", ("blue",), other="(other)"),
            Categorical("const", ("yes",), other="(other)"),
            Categorical("two", ("a", "b"), other="(other)"),
            Numeric("five", 5, 5, bins=1, integer=True),
            Numeric("age", 9, 63, bins=8, integer=True),
            Numeric("ok", 0, 100, bins=8, integer=True),
            Numeric("point", 1.5, one, bins=1),
            Numeric("edge", 0.0, 1.0, bins=4),
        ],
        {"age": 0.12, "ok": 0.01, "five": 0.3, "edge": CLIP_LIMIT},
    )


def test_each_kind_of_loss():
    """One loss per column kept with no value, per column kept with one value whose catch-all or clipped share
    is beyond its noise, and per numeric column clipping more than 5% (noisy). A constant column (one value, kept,
    nothing in the catch-all or clipped: ``const``, ``point``) loses nothing and is not named."""
    losses = discovery_losses(every_kind())
    assert [x.column for x in losses] == ["none", "blue", "two", "five", "age"]
    by = {x.column: x for x in losses}
    assert by["none"].what == "keeps no category: every value becomes '(other)'"
    assert by["blue"].what == (
        "keeps only one value (blue); about 10% of its records are merged into '(other)' (a noisy estimate)"
    )
    assert by["two"].what == "about 10% of its records are merged into '(other)' (a noisy estimate)"
    assert by["five"].what.startswith("numeric: keeps only one value (5): every value is clipped to it")
    assert "about 30% of the values lie elsewhere" in by["five"].what
    assert by["age"].what == (
        "numeric: about 12% of its values lie outside [9, 63] and are clipped to the bounds (a noisy estimate)"
    )
    assert all("reviewed schema" in x.advice and "larger ε" in x.advice for x in losses)
    assert "123 records" in by["none"].advice and "wider bounds" in by["age"].advice
    assert str(by["blue"]) == f"blue: {by['blue'].what}; {by['blue'].advice}"
    assert isinstance(losses[0], Loss)


def test_one_value_columns_and_reviewed_schemas():
    s = every_kind()
    assert one_value_columns(s) == ["none", "five", "point"]  # 'blue' takes blue or (other): two values
    reviewed = Schema(s.columns, provenance="user")
    assert discovery_losses(reviewed) == []  # a person declared these columns: nothing was lost by discovery


def test_refusal_counts_columns_left_with_one_value():
    """More than half of the columns with one value (a categorical catch-all or a numeric point): refused."""
    cols = [
        Categorical("a", (), other="(other)"),
        Numeric("b", 7, 7, bins=1, integer=True),
        Categorical("c", ("x", "y"), other="(other)"),
    ]
    with pytest.raises(InputError, match=r"kept at most one value in 2 of 3 columns \(a, b\)") as exc:
        check_not_collapsed(discovered(cols, {}), 0.4, 1.0)
    assert "nothing was synthesized" in str(exc.value) and "123 records" in str(exc.value)
    check_not_collapsed(discovered(cols[1:], {}), 0.4, 1.0)  # 1 of 2: not more than half


def table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "color": rng.choice(["red", "green", "blue"], n),
            "const": ["blue"] * n,  # one value: discovery keeps it alone, and nothing is lost
            "rare": rng.choice([f"r{i}" for i in range(100)], n),  # 100 values of ~4 records: none kept
            "age": rng.integers(20, 60, n),
        }
    )


def test_cli_prints_one_line_per_loss_under_one_warning(tmp_path, capsys):
    csv, out, model = tmp_path / "d.csv", tmp_path / "s.csv", tmp_path / "m.zip"
    table().to_csv(csv, index=False)
    argv = ["synth", csv, "-o", out, "--save-model", model, "-e", 5, "-m", "mst", "--iters", 20, "--seed", 0]
    code, text = run(argv, capsys)
    assert code == 0, text
    losses = privsample.load(model).losses
    assert "rare" in [x.column for x in losses] and "const" not in [x.column for x in losses]
    assert text.count("warning: private discovery lost detail in") == 1, text
    lines = " ".join(text.split("\n")).split("  - ")  # rich may wrap a long line
    named = [seg for seg in lines[1:] if any(seg.startswith(f"{x.column}: ") for x in losses)]
    assert len(named) == len(losses), text
    assert any(seg.startswith("rare: keeps no category") for seg in named)
    assert "Traceback" not in text and "DiscoveryLossWarning" not in text  # printed once, as the command's own


def test_api_warns_and_lists_the_losses():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        s = privsample.Synthesizer("mst", epsilon=5, iters=20).fit(table(), seed=0)
    mine = [w for w in seen if issubclass(w.category, DiscoveryLossWarning)]
    assert [x.column for x in s.losses] == [str(w.message).split(": ")[1] for w in mine]
    assert "rare" in [x.column for x in s.losses] and "const" not in [x.column for x in s.losses]
    assert all(os.path.samefile(w.filename, __file__) for w in mine)  # the user's line, not the library's
    assert issubclass(privsample.DiscoveryLossWarning, UserWarning)
    with pytest.warns(DiscoveryLossWarning, match="rare: keeps no category"):
        privsample.synthesize(table(), epsilon=5, method="mst", method_options={"iters": 20}, seed=0, sample=False)
    with pytest.warns(DiscoveryLossWarning, match="rare: keeps no category"):
        privsample.Schema.discover(table(), epsilon=5, seed=0)


def test_report_says_what_discovery_lost(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiscoveryLossWarning)
        s = privsample.Synthesizer("mst", epsilon=5, iters=20).fit(table(), seed=0)
    real, synth = table(seed=1), s.sample(300, seed=0)
    page = privsample.evaluate(real, synth, model=s).to_html()
    assert "What private discovery lost" in page and "keeps no category" in page
    s.save(tmp_path / "m.zip")  # the command line's --model: a saved model
    page = privsample.evaluate(real, synth, model=tmp_path / "m.zip").to_html()
    assert "What private discovery lost" in page and "rare" in page
    reviewed = privsample.Synthesizer("mst", epsilon=5, iters=20).fit(
        table(), schema=privsample.Schema(list(s.schema.columns)), seed=0
    )
    assert "What private discovery lost" not in privsample.evaluate(real, synth, model=reviewed).to_html()


def test_plan_rows_forecasts_what_discovery_keeps(tmp_path, capsys):
    """Header only (the rest is garbage): a forecast per epsilon, from the discovery's own budget functions."""
    p = tmp_path / "t.csv"
    p.write_bytes(b"color,age,flag\n" + os.urandom(5000) + b"\x00\xff")
    code, text = run(["plan", p, "-e", "0.3,3", "--rows", 5000, "-m", "mst"], capsys)
    assert code == 0, text
    assert "What private discovery keeps at 5,000 rows" in text and "2σ records" in " ".join(text.split())
    plan = privsample.plan(p, epsilon=[0.3, 3], rows=5000, method="mst", probe=False)
    assert [d["epsilon"] for d in plan.discovery] == [0.3, 3]
    lo, hi = plan.discovery
    assert lo["min_category_records"] > hi["min_category_records"] and lo["sigma_grid"] > hi["sigma_grid"]
    assert lo["min_category_records"] == plan.rows[0].min_category_records
    assert privsample.plan(p, epsilon=1, rows=5000, probe=False, schema=None).discovery  # no schema: forecast
    code, text = run(["plan", p, "-e", 1, "-m", "mst"], capsys)  # no --rows: no forecast section
    assert code == 0 and "What private discovery keeps" not in text


def test_forecast_matches_a_discovery():
    """At a large table the plan does not depend on the noisy row count: the forecast's noise is the ledger's."""
    from privsample.data.discovery import private_schema
    from privsample.data.discovery_plan import discovery_forecast
    from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_BINS, make_accountant
    from privsample.privacy.noise import make_noise

    n = 100_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"c": rng.choice(list("abcd"), n), "x": rng.integers(0, 10_000, n)})
    acc, d_disc = make_accountant(1.0, DEFAULT_DELTA, None, None)
    f = discovery_forecast(acc.rho_total, d_disc, n, 2, bins=DISCOVERY_BINS)
    s = private_schema(
        df, acc, make_noise(0, quiet=True), rho=acc.rho_total, delta=d_disc, share=None, bins=DISCOVERY_BINS
    )
    scale = {
        tuple(e["label"].split(": ", 2)[1:]): e.get("noise_scale")
        for e in s.ledger["entries"]
        if e["label"].count(":") == 2
    }
    assert math.isclose(scale["c", "category counts"], f["sigma_categories"], rel_tol=1e-9)
    # the integer column tests for codes first (10,000 values: none passes), then its grid gets the rest
    assert f["code_records"] is not None and ("x", "category counts") in scale
    assert math.isclose(scale["x", "grid histogram"], f["sigma_grid_integer"], rel_tol=1e-9)
    assert f["sigma_grid_integer"] > f["sigma_grid"]
    assert f["share"] == s.discovery["share"]


def test_a_categorical_column_merging_many_records_is_named():
    """A column whose noisy catch-all share exceeds CLIP_LIMIT (beyond its noise) is warned of, naming the share."""

    rng = np.random.default_rng(1)
    n = 3000
    df = pd.DataFrame({"k": rng.choice([f"v{i}" for i in range(40)], n, p=[0.4, 0.3] + [0.3 / 38] * 38)})
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        privsample.Schema.discover(df, epsilon=1, seed=0)
    text = " ".join(str(w.message) for w in got)
    assert "k: about" in text and "of its records are merged into '(other)'" in text


def test_a_column_whose_values_were_not_located_is_named_with_why():
    """A numeric or date column whose values the noisy grid did not locate is the catch-all (``unlocated`` in its
    report entry): its loss says so, not 'keeps no category', and says what keeps it."""
    cols = [Categorical("x", (), other="(other)"), Categorical("d", (), other="(other)"), Categorical("c", ("a", "b"))]
    s = discovered(cols, {})
    s.discovery["columns"][0].update(kind="catch-all", unlocated=True)
    s.discovery["columns"][1].update(kind="catch-all", unlocated="date")
    by = {x.column: x for x in discovery_losses(s)}
    assert by["x"].what == (
        "numeric: its values could not be located above the noise at this ε: every value becomes '(other)'"
    )
    assert by["d"].what.startswith("date: its values could not be located above the noise at this ε")
    assert by["x"].advice == "a reviewed schema (--schema; schema= in Python) with its bounds, or a larger ε, keeps it"
    assert one_value_columns(s) == ["x", "d"]


def small(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"t3": 10 * rng.standard_t(3, n), "flag": rng.choice(["yes", "no"], n), "age": rng.integers(18, 80, n)}
    )


def test_a_numeric_column_the_noise_hides_is_warned_of_and_synthesized_as_the_catch_all(tmp_path, capsys):
    """t(3) x 10 on 1,000 rows at epsilon 0.3 (seed 2: its grid shows no cell nor window above the noise): the API
    warns naming it, the command line prints it, the output holds the catch-all label in it, and a saved model
    draws again."""
    with pytest.warns(DiscoveryLossWarning, match="t3: numeric: its values could not be located above the noise"):
        s = privsample.Schema.discover(small(), epsilon=0.3, seed=2)
    assert isinstance(s.columns[0], Categorical) and s.discovery["columns"][0]["kind"] == "catch-all"
    csv, out, model, again = tmp_path / "d.csv", tmp_path / "s.csv", tmp_path / "m.zip", tmp_path / "s2.csv"
    small().to_csv(csv, index=False)
    argv = ["synth", csv, "-o", out, "--save-model", model, "-e", 0.3, "-m", "mst", "--iters", 20, "--seed", 2]
    code, text = run(argv, capsys)
    assert code == 0, text
    flat = " ".join(text.split())
    assert "t3: numeric: its values could not be located above the noise at this ε: every value becomes '(other)'" in (
        flat
    )
    assert "Traceback" not in text
    got = pd.read_csv(out)
    assert set(got["t3"].dropna()) == {"(other)"} and pd.to_numeric(got["age"]).notna().all()
    code, text = run(["sample", model, "-o", again, "--rows", 50], capsys)
    assert code == 0, text
    assert set(pd.read_csv(again)["t3"].dropna()) == {"(other)"}
