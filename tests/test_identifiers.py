"""Identifier (``type: id``) and free-text (``type: text``) columns: schema, formats, fresh ids, private detection
and its accounting, the draft, and the run end to end (Python API and command line)."""

from __future__ import annotations

import math
import re
import uuid
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

import privsample
from privsample.cli import main
from privsample.data.column_scan import scan_series
from privsample.data.discovery import draft_schema, private_schema
from privsample.data.discovery_plan import (
    DISTINCT_SHARE,
    MIN_PRESENT_SIGMAS,
    column_split,
    discovery_forecast,
    distinct_rho,
    split_exact,
    values_rho,
)
from privsample.data.decoding import decode, id_formats
from privsample.data.id_discovery import LONG_SHARE, discover_identifier
from privsample.data.identifiers import MAX_EXPECTED_MATCHES, draw_ids, parse_format, signatures, widened
from privsample.data.schema import Categorical, FreeText, Identifier, Numeric, Schema
from privsample.errors import FreeTextWarning, IdentifierFormatWarning, InputError
from privsample.privacy import Accountant, SeededNoise
from privsample.privacy.mechanisms import sigma_for_rho

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]


def table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """An id column, a free-text column and two ordinary columns."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame(
        {
            "patient": [f"P-{i:06d}" for i in range(1, n + 1)],
            "sex": sex,
            "notes": [" ".join(rng.choice(WORDS, 10)) for _ in range(n)],
            "age": np.where(sex == "F", rng.integers(20, 60, n), rng.integers(40, 90, n)).astype(str),
        }
    )


def user_schema() -> dict:
    return {
        "provenance": "user",
        "columns": [
            {"name": "patient", "type": "id", "format": "P-{6 digits}"},
            {"name": "sex", "type": "categorical", "categories": ["F", "M"]},
            {"name": "notes", "type": "text"},
            {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "bins": 10, "integer": True},
        ],
    }


# -- the schema ----------------------------------------------------------------------------------------------------
def test_schema_round_trip_keeps_positions(tmp_path):
    s = Schema.from_dict(user_schema())
    assert s.names == ["sex", "age"]  # the synthesized domain only
    assert [c.name for c in s.identifiers] == ["patient"] and s.identifiers[0].position == 0
    assert [c.name for c in s.text] == ["notes"] and s.text[0].position == 2
    assert s.all_names == ["patient", "sex", "notes", "age"] and s.output_names == ["patient", "sex", "age"]
    assert s.domain_dict() == {"sex": 2, "age": 10}
    assert s.to_dict()["columns"] == Schema.from_dict(user_schema()).to_dict()["columns"]
    assert [c["name"] for c in s.to_dict()["columns"]] == ["patient", "sex", "notes", "age"]
    for name in ("s.yaml", "s.json"):
        s.save(tmp_path / name)
        back = Schema.load(tmp_path / name)
        assert back.to_dict() == s.to_dict() and back.identifiers == s.identifiers and back.text == s.text
    # declared in code: at their places in the list
    code = privsample.Schema([Identifier("patient", "P-{6 digits}"), Categorical("sex", ["F", "M"]), FreeText("n")])
    assert code.names == ["sex"] and code.all_names == ["patient", "sex", "n"]
    assert "patient" in str(code) and "fresh ids P-{6 digits}" in str(code)
    assert privsample.Schema._of(code).to_dict() == code.to_dict()


def test_text_keep_frequent_is_categorical():
    d = user_schema()
    d["columns"][2] = {"name": "notes", "type": "text", "keep": "frequent", "categories": ["hello", "bye"]}
    s = Schema.from_dict(d)
    assert s["notes"] == Categorical("notes", ("hello", "bye"), other="(other)") and not s.text
    d["columns"][2] = {"name": "notes", "type": "text", "keep": "frequent"}
    with pytest.raises(InputError, match="lists no categories"):
        Schema.from_dict(d)
    d["columns"][2] = {"name": "notes", "type": "text", "keep": "sometimes"}
    with pytest.raises(InputError, match="keep must be drop or frequent"):
        Schema.from_dict(d)


def test_schema_refusals():
    d = user_schema()
    d["columns"][0]["fromat"] = "x"
    with pytest.raises(InputError, match="did you mean 'format'"):
        Schema.from_dict(d)
    with pytest.raises(InputError, match="more than once"):
        Schema([Categorical("a", ["x"])], identifiers=[Identifier("a", "{4 digits}")])
    with pytest.raises(InputError, match="no column to synthesize"):
        Schema([Identifier("a", "{4 digits}")])


# -- formats -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, kind, width, prefix, suffix",
    [
        ("P-{6 digits}", "digits", 6, "P-", ""),
        ("{12 digits}", "digits", 12, "", ""),
        ("INV/{8 digits}/A", "digits", 8, "INV/", "/A"),
        ("{16 hex}", "hex", 16, "", ""),
        ("cust_{ 10 hex }", "hex", 10, "cust_", ""),
        ("{uuid}", "uuid", 32, "", ""),
    ],
)
def test_format_parsing(text, kind, width, prefix, suffix):
    f = parse_format(text)
    assert (f.kind, f.width, f.prefix, f.suffix) == (kind, width, prefix, suffix)
    assert parse_format(str(f)) == f


@pytest.mark.parametrize(
    "bad",
    ["", "P-000001", "{6 letters}", "{0 digits}", "{65 digits}", "A1{6 digits}", "P {6 digits}", "{uuid}{4 hex}", 6],
)
def test_bad_format_is_one_input_error(bad, tmp_path):
    with pytest.raises(InputError) as err:
        parse_format(bad, "column 'patient'")
    assert "\n" not in str(err.value) and "column 'patient'" in str(err.value)
    d = user_schema()
    d["columns"][0]["format"] = bad
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(d))
    with pytest.raises(InputError, match="patient"):
        Schema.load(path)


def test_signatures_read_back_as_formats():
    values = np.array(["P-000123", "123456", "3fa9c0d1", str(uuid.uuid4()), "hello world", "INV/0042/A", "-12"])
    sig = signatures(values).tolist()
    assert sig == ["P-{6 digits}", "{6 digits}", "{8 hex}", "{uuid}", "other", "INV/{4 digits}/A", "-{2 digits}"]
    for s in sig:
        if s != "other":
            assert str(parse_format(s)) == s
    assert signatures(np.array([5, 123456, -7])).tolist() == ["{1 digits}", "{6 digits}", "-{1 digits}"]


def test_fresh_ids_have_the_format():
    rng = np.random.default_rng(0)
    ids = draw_ids(parse_format("P-{6 digits}"), 500, rng)
    assert all(re.fullmatch(r"P-\d{6}", x) for x in ids)
    assert all(re.fullmatch(r"[0-9a-f]{10}/x", x) for x in draw_ids(parse_format("{10 hex}/x"), 200, rng))
    for x in draw_ids(parse_format("{uuid}"), 200, rng):
        assert uuid.UUID(x).version == 4 and str(uuid.UUID(x)) == x
    assert len(draw_ids(parse_format("{uuid}"), 0, rng)) == 0


def test_widening_rule():
    f = parse_format("P-{6 digits}")
    w = widened(f, 6000, 6000)
    assert (w.prefix, w.kind) == ("P-", "digits") and w.width == 14  # 6000 * 12000 / 1e6 = 72 -> 10^14 >= 7.2e13
    assert 6000 * (6000 + 6000) / w.space <= MAX_EXPECTED_MATCHES < 6000 * 12000 / 10**13
    assert widened(f, 1, 1).width == 7  # 1 * (1 + 1) / 10^6 = 2e-6 > 1e-6
    assert widened(f, 0, 10**6) == f  # no output, nothing to widen
    assert widened(parse_format("{20 digits}"), 1000, 1000) == parse_format("{20 digits}")
    assert widened(parse_format("{uuid}"), 10**9, 10**9) == parse_format("{uuid}")
    assert widened(parse_format("{4 hex}"), 100, 100).width == math.ceil(math.log(100 * 200 / 1e-6, 16))


# -- fresh ids never equal real ones ---------------------------------------------------------------------------------
def test_fresh_ids_never_equal_real_ones():
    n = 6000
    real = table(n)
    with pytest.warns(IdentifierFormatWarning, match=r"'patient'.*P-\{1[0-9] digits\}"):
        res = privsample.synthesize(
            real, epsilon=2, method="mst", schema=Schema.from_dict(user_schema()), seed=0, method_options={"iters": 20}
        )
    out = res.table
    assert list(out.columns) == ["patient", "sex", "age"]  # the input's order, free text left out
    assert not set(out["patient"]) & set(real["patient"])
    assert out["patient"].str.fullmatch(r"P-\d{14}").all() and out["patient"].is_unique


def test_decode_places_ids_and_warns():
    s = Schema.from_dict(user_schema())
    codes = {"sex": np.array([0, 1, 1]), "age": np.array([0, 5, 9])}
    with pytest.warns(IdentifierFormatWarning):
        out = decode(codes, s, np.random.default_rng(0))
    assert list(out.columns) == ["patient", "sex", "age"] and len(out) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = decode(codes, s, np.random.default_rng(0), ids={"patient": parse_format("P-{20 digits}")})
    assert out["patient"].str.fullmatch(r"P-\d{20}").all()
    assert id_formats(s, 0, 0) == {"patient": parse_format("P-{6 digits}")}


# -- private detection ---------------------------------------------------------------------------------------------
def test_private_detection_under_seeded_noise():
    rng = np.random.default_rng(3)
    df = table(3000)
    long_answers = [f"I would rather not say anything about the question number {i}" for i in range(5)]
    df["answer"] = rng.choice(long_answers + [f"{w} " * 12 for w in WORDS], 3000)  # long, but few values: categories
    df["token"] = [rng.bytes(8).hex() for _ in range(3000)]
    acc = Accountant(10.0, delta_slack=1e-6)
    s = private_schema(df, acc, SeededNoise(5, quiet=True), rho=1.0, delta=1e-7)
    assert s.names == ["sex", "age", "answer"]
    assert {c.name: c.format for c in s.identifiers} == {"patient": "P-{6 digits}", "token": "{16 hex}"}
    assert [(c.name, c.position) for c in s.text] == [("notes", 2)]
    assert isinstance(s["age"], Numeric) and s["sex"].categories == ("F", "M")
    kinds = {c["name"]: c["kind"] for c in s.discovery["columns"]}
    assert kinds["patient"] == "id" and kinds["notes"] == "text"
    assert any("'patient': an identifier" in n for n in s.notes) and any("'notes': free text" in n for n in s.notes)
    # saved and read back with its ids and text, in the table's order
    assert Schema.from_dict(s.to_dict()).all_names == list(df.columns)
    # an identifier leaves most of its budget unspent; every column stays within its own
    labels = [e.label for e in acc.ledger]
    assert "schema: patient: distinct values" in labels and "schema: patient: identifier formats" in labels
    assert not any(lab.startswith("schema: patient: category") for lab in labels)


def test_long_repeated_text_is_text_with_its_frequent_values():
    rng = np.random.default_rng(1)
    n = 4000
    frequent = [f"a long answer that a lot of people gave, about {w} and the rest" for w in WORDS[:3]]
    rare = [f"a long and unique answer that only one person gave, number {i}" for i in range(n)]
    answer = np.where(rng.random(n) < 0.3, rng.choice(frequent, n), np.array(rare, dtype=object))
    df = pd.DataFrame({"answer": answer, "x": rng.choice(["a", "b"], n)})
    s = private_schema(df, Accountant(10.0, delta_slack=1e-6), SeededNoise(2, quiet=True), rho=1.0, delta=1e-7)
    assert [c.name for c in s.text] == ["answer"] and s.names == ["x"]
    assert set(s.text[0].categories) == set(frequent)
    d = s.to_dict()
    entry = d["columns"][0]
    assert entry["type"] == "text" and entry["keep"] == "drop"
    entry["keep"] = "frequent"  # a person keeps its (privately released) frequent values
    kept = Schema.from_dict(d)
    assert kept.names == ["answer", "x"] and set(kept["answer"].categories) == set(frequent)


def test_small_table_is_not_called_an_identifier():
    """Where the counts are mostly noise, a column of few values is never taken for an identifier."""
    df = pd.DataFrame({"v": ["1", "2", "2.5", "x", None, "7"] * 5, "w": ["a", "b"] * 15}, dtype=object)
    for seed in range(40):
        s = private_schema(df, Accountant(1.0, delta_slack=0.01), SeededNoise(seed, quiet=True), rho=0.1, delta=0.01)
        assert not s.identifiers and not s.text


class RecordingNoise(SeededNoise):
    def __init__(self, seed: int):
        super().__init__(seed, quiet=True)
        self.calls: list[tuple[np.ndarray, float, np.ndarray]] = []

    def gaussian(self, counts, sigma):
        out = super().gaussian(counts, sigma)
        self.calls.append((np.asarray(counts).copy(), sigma, out))
        return out


class Run:
    """The shared state ``discover_identifier`` reads."""

    def __init__(self, accountant, noise, delta_col=1e-8, n_hat=1e6):
        self.accountant, self.noise, self.delta_col, self.notes = accountant, noise, delta_col, []
        self.n_hat = n_hat


def test_distinct_count_accounting_and_noise():
    """The distinct count's ledger entry: sensitivity 1, rho = DISTINCT_SHARE of rho_b, sigma = 1/sqrt(2 rho); the
    noise actually drawn has that sd (halving sigma would fail the variance check)."""
    sc = scan_series(pd.Series(["a", "b", "c", None, "a"] * 40, dtype=object))
    rho_b = 0.02
    noise = RecordingNoise(7)
    draws = []
    for _ in range(600):
        acc = Accountant(1.0)
        noise.calls.clear()
        out = discover_identifier(Run(acc, noise), "v", sc, rho_b, present=160.0, integer=False)
        entry = acc.ledger[0]
        assert entry.label == "schema: v: distinct values" and entry.details["sensitivity"] == 1.0
        assert entry.rho == distinct_rho(rho_b) == pytest.approx(DISTINCT_SHARE * rho_b)
        assert entry.noise_scale == sigma_for_rho(entry.rho) and 1.0 / (2 * entry.noise_scale**2) <= entry.rho
        counts, sigma, noisy = noise.calls[0]
        assert counts.tolist() == [3] and sigma == entry.noise_scale
        draws.append(int(noisy[0]) - 3)
        assert out.column is None and acc.spent <= rho_b
        assert out.rho_b + acc.spent == pytest.approx(rho_b)
    sd = float(np.std(draws))
    assert sd == pytest.approx(entry.noise_scale, rel=0.1)  # about 15.8; half of it would be far outside


def test_distinct_count_not_taken_where_no_column_could_pass():
    """Where n_hat is below MIN_PRESENT_SIGMAS sd of the distinct count, (e1) could call no column identifier-like
    (and (e3)'s count, of larger sd, no column free text): the count is not taken and the column keeps all of its
    rho_b. The rule reads n_hat and public constants only; the plan and the forecast use the same function."""
    assert LONG_SHARE <= DISTINCT_SHARE  # (e3)'s sd is at least (e1)'s, so its bar is out of reach too
    rho_b = 0.002
    sd = sigma_for_rho(split_exact(rho_b, [DISTINCT_SHARE, 1.0 - DISTINCT_SHARE])[0])  # about 50
    bar = MIN_PRESENT_SIGMAS * sd
    assert distinct_rho(rho_b, bar - 1.0) == 0.0 and values_rho(rho_b, bar - 1.0) == rho_b
    assert distinct_rho(rho_b, bar + 1.0) == distinct_rho(rho_b) == pytest.approx(DISTINCT_SHARE * rho_b)
    assert values_rho(rho_b, bar + 1.0) + distinct_rho(rho_b, bar + 1.0) == pytest.approx(rho_b)
    assert distinct_rho(rho_b, 2 * bar - 1.0, max_rows=2) == 0.0 < distinct_rho(rho_b, 2 * bar + 2.0, max_rows=2)
    sc = scan_series(pd.Series([f"P-{i:06d}" for i in range(400)], dtype=object))  # all distinct, one format
    for n_hat in (bar - 1.0, 400.0):
        acc = Accountant(1.0, delta_slack=1e-6)
        out = discover_identifier(Run(acc, SeededNoise(0, quiet=True), 1e-7, n_hat), "p", sc, rho_b, present=n_hat,
                                  integer=False)  # fmt: skip
        assert out.column is None and not out.text and out.rho_b == rho_b and acc.spent == 0 and not acc.ledger
    # in a run: no distinct counts, the values get what the plan counted on, as the forecast says
    df = pd.DataFrame({"id": [str(1000 + i) for i in range(300)], "g": ["a", "b", "c"] * 100}, dtype=object)
    acc = Accountant(1.0, delta_slack=1e-6)
    s = private_schema(df, acc, SeededNoise(1, quiet=True), rho=0.01, delta=1e-7, share=None)
    assert not any(e.label.endswith("distinct values") for e in acc.ledger) and not s.identifiers
    sd_g = next(e for e in acc.ledger if e.label == "schema: g: category counts").noise_scale
    n_hat = s.discovery["n_hat"]
    f = discovery_forecast(0.01, 1e-7, int(n_hat), 2)
    assert f["sigma_categories"] == pytest.approx(sd_g)


def test_distinct_count_has_sensitivity_one():
    """The mechanism's input, the number of distinct non-missing values, changes by at most 1 between tables
    differing in one record (added or removed), whatever the record."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        base = pd.Series(rng.choice(["a", "b", "c", "d", None], rng.integers(0, 12)), dtype=object)
        extra = rng.choice(["a", "e", None])
        big = pd.concat([base, pd.Series([extra], dtype=object)], ignore_index=True)
        assert 0 <= len(scan_series(big).values) - len(scan_series(base).values) <= 1
        if len(base):
            small = base.drop(index=int(rng.integers(len(base))))
            assert 0 <= len(scan_series(base).values) - len(scan_series(small).values) <= 1


def test_identifier_budget_within_the_column():
    sc = scan_series(pd.Series([f"P-{i:06d}" for i in range(5000)], dtype=object))
    acc = Accountant(1.0, delta_slack=1e-6)
    rho_b = column_split(0.2, 5000)[1]
    out = discover_identifier(Run(acc, SeededNoise(0, quiet=True), 1e-7), "p", sc, rho_b, present=5000, integer=False)
    assert isinstance(out.column, Identifier) and out.column.format == "P-{6 digits}"
    formats = next(e for e in acc.ledger if e.label == "schema: p: identifier formats")
    assert formats.delta == 1e-7 and formats.details["threshold"] > 1 and formats.details["sensitivity"] == 1.0
    assert acc.spent < rho_b and acc.spent + out.rho_b == pytest.approx(rho_b)  # the rest is left unspent
    assert out.entry["kind"] == "id" and out.entry["unspent_rho"] == out.rho_b


# -- the draft (NON-PRIVATE) -----------------------------------------------------------------------------------------
def test_draft_proposes_id_and_text():
    s = draft_schema(table(300))
    assert [(c.name, c.format) for c in s.identifiers] == [("patient", "P-{6 digits}")]
    assert [c.name for c in s.text] == ["notes"] and s.names == ["sex", "age"]
    # a small integer column with distinct values (ages of 30 people) stays numeric
    ages = draft_schema(pd.DataFrame({"age": [str(a) for a in range(20, 50)]}))
    assert ages.names == ["age"] and not ages.identifiers


# -- end to end ----------------------------------------------------------------------------------------------------
def test_synthesize_end_to_end_without_schema():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = privsample.synthesize(table(3000), epsilon=2, method="mst", seed=1, method_options={"iters": 20})
    dropped = [w for w in seen if issubclass(w.category, FreeTextWarning)]
    assert len(dropped) == 1 and "'notes'" in str(dropped[0].message)
    out = res.table
    assert list(out.columns) == ["patient", "sex", "age"]
    assert out["patient"].str.fullmatch(r"P-\d+").all() and not set(out["patient"]) & set(table(3000)["patient"])
    assert [c.name for c in res.schema.identifiers] == ["patient"]
    model = privsample.load(_saved(res.model))
    assert list(model.sample(50, seed=0).columns) == ["patient", "sex", "age"]


def _saved(model):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "model.zip"
    model.save(path)
    return path


def _cli(argv, capsys) -> tuple[int, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def test_cli_end_to_end(tmp_path, capsys):
    csv, out = tmp_path / "data.csv", tmp_path / "out.csv"
    table(3000).to_csv(csv, index=False)
    code, err = _cli(["synth", csv, "-o", out, "--epsilon", 2, "--seed", 1, "-m", "mst", "--iters", 20], capsys)
    assert code == 0, err
    assert "'notes' is free text" in err and "id" in err
    written = pd.read_csv(out, dtype=str)
    assert list(written.columns) == ["patient", "sex", "age"]
    assert written["patient"].str.fullmatch(r"P-\d+").all()
    # with a reviewed schema: the widened format is printed, the text column named, none "left out"
    sch = tmp_path / "s.yaml"
    sch.write_text(yaml.safe_dump(user_schema()))
    argv = ["synth", csv, "-o", out, "--epsilon", 2, "--schema", sch, "--seed", 1, "-m", "mst", "--iters", 20, "-q"]
    code, err = _cli(argv, capsys)
    assert code == 0, err
    assert "left out" not in err.replace("left out of the output", "")
    assert re.search(r"warning: identifier column 'patient'.*P-\{1\d digits\}", " ".join(err.split()))
    assert "'notes' is free text" in err
    assert list(pd.read_csv(out, dtype=str).columns) == ["patient", "sex", "age"]
    # a bad format: one line, exit 2, nothing written
    bad = user_schema()
    bad["columns"][0]["format"] = "P-{six digits}"
    sch.write_text(yaml.safe_dump(bad))
    out2 = tmp_path / "out2.csv"
    code, err = _cli(["synth", csv, "-o", out2, "--epsilon", 2, "--schema", sch, "-q"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "patient" in err and not out2.exists()
