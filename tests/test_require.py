"""Order constraints between columns (``require`` in the schema): parsing, structural zeros, decoding, runs."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import privsample
from privsample.cli.app import main
from privsample.data import schema as schema_module
from privsample.data.decoding import decode
from privsample.data.encoding import encode
from privsample.data.require import Comparison, bin_value_ranges, exchange, violations
from privsample.data.require_entries import require_codes, require_comparisons
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.errors import InputError
from privsample.synth.zeros import StructuralZeros

HOSPITAL = ["admitted <= discharged", "copay >= 0", "copay <= cost", "birth <= admitted"]


def hospital_columns(nullable_birth: bool = False) -> list:
    return [
        Numeric("birth", 0, 400, bins=8, integer=True, nullable=nullable_birth),
        Numeric("admitted", 0, 400, bins=10, integer=True),
        Numeric("discharged", 0, 430, bins=12, integer=True),
        Numeric("cost", 0, 50_000, bins=10),
        Numeric("copay", -100, 5_000, bins=8),
        Categorical("ward", ["A", "B", "C"]),
    ]


def hospital_table(n: int, seed: int = 0) -> pd.DataFrame:
    """Records that satisfy HOSPITAL."""
    rng = np.random.default_rng(seed)
    admitted = rng.integers(0, 401, n)
    birth = np.minimum(admitted, rng.integers(0, 401, n))
    discharged = np.minimum(admitted + rng.geometric(0.2, n) - 1, 430)
    cost = np.round(rng.gamma(2.0, 3000.0, n).clip(0, 50_000), 2)
    copay = np.round(np.minimum(cost, rng.uniform(0, 1, n) * 0.2 * cost), 2)
    ward = rng.choice(["A", "B", "C"], n)
    return pd.DataFrame(
        {"birth": birth, "admitted": admitted, "discharged": discharged, "cost": cost, "copay": copay, "ward": ward}
    )


def broken(df: pd.DataFrame, schema: Schema) -> int:
    x = {c.name: df[c.name].to_numpy(dtype=float, na_value=np.nan) for c in schema.columns if c.kind == "numeric"}
    return int(violations(require_comparisons(schema), x).sum())


# -- parsing, validation, round trip ------------------------------------------------------------------------
def test_parse_and_round_trip(tmp_path):
    s = Schema(hospital_columns(), require=[" discharged >= admitted ", "0 <= copay", "copay<cost"])
    assert s.require == ["discharged >= admitted", "0 <= copay", "copay<cost"]
    got = [(c.low, c.high, c.strict) for c in require_comparisons(s)]
    assert got == [("admitted", "discharged", False), (0.0, "copay", False), ("copay", "cost", True)]
    assert Schema.from_dict(s.to_dict()).require == s.require
    for name in ("s.yaml", "s.json"):
        s.save(tmp_path / name)
        assert Schema.load(tmp_path / name).require == s.require
    assert privsample.Schema.load(tmp_path / "s.yaml") == privsample.Schema._of(s)
    assert "require: copay<cost" in str(privsample.Schema._of(s))


def test_require_is_a_public_field():
    assert "require*" in schema_module.PUBLIC_FIELDS


def test_constants_go_through_the_column():
    class Shifted(Numeric):  # a typed column (dates, say) reads its own constants
        def parse_constant(self, text):
            return float(text.removeprefix("day ")) + 1

    s = Schema([Shifted("t", 0, 10, bins=10, integer=True)], require=["t >= day 4"])
    assert require_comparisons(s)[0].low == 5.0


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("admitted == discharged", "needs exactly one comparison operator"),
        ("admitted => discharged", "needs exactly one comparison operator"),
        ("a < b < c", "needs exactly one comparison operator"),
        ("admitted <=", "needs a column or a constant on each side"),
        ("admited <= discharged", "'admited' is neither a column of the schema nor a constant of column "),
        ("x <= y", "names no column"),
        ("ward <= admitted", "column 'ward' is categorical; comparisons need numeric columns"),
        ("copay >= nan", "'nan' is neither a column"),
        ("copay >= abc", "'abc' is neither a column of the schema nor a constant of column 'copay'"),
        ("cost <= cost", "compares column 'cost' with itself"),
        ("copay >= 6000", "no value of column 'copay' within its bounds satisfies the comparisons"),
    ],
)
def test_bad_entries_are_one_clear_line(entry, message):
    d = Schema(hospital_columns()).to_dict()
    d["require"] = ["copay >= 0", entry]
    with pytest.raises(InputError) as info:
        Schema.from_dict(d, source="schema file s.yaml")
    text = str(info.value)
    assert message in text and "\n" not in text
    joint = "no value of column" in message  # a joint refusal names every entry
    prefix = "schema file s.yaml: 'require'" if joint else f"schema file s.yaml: require entry #2 {entry!r}"
    assert text.startswith(prefix)


def test_contradictions_are_refused():
    with pytest.raises(InputError, match="contradict each other"):
        Schema(hospital_columns(), require=["cost < copay", "copay < cost"])
    with pytest.raises(InputError, match="no value of column"):
        Schema(hospital_columns(), require=["birth > 300", "birth <= admitted", "admitted < 200"])
    Schema(hospital_columns(), require=["cost <= copay", "copay <= cost"])  # equality: fine
    with pytest.raises(InputError, match="must be a list"):
        Schema(hospital_columns(), require="cost <= copay")


# -- structural zeros -----------------------------------------------------------------------------------------
def values_of(col, b):
    """A fine grid of the values bin b of col can take (integers: all of them)."""
    mins, maxs = bin_value_ranges(col)
    if col.integer:
        return np.arange(mins[b], maxs[b] + 1)
    return np.unique(np.concatenate([np.linspace(mins[b], maxs[b], 50), [mins[b], maxs[b]]]))


def forbidden_cells(schema) -> set:
    cells = set()
    for entry in require_codes(schema):
        names = list(entry)
        for combo in itertools.product(*(entry[n] for n in names)):
            cells.add(tuple(zip(names, combo)))
    return cells


@pytest.mark.parametrize("op", ["<=", "<", ">=", ">"])
@pytest.mark.parametrize("kinds", [(True, True), (True, False), (False, False)])
def test_pair_zeros_are_exact_for_one_comparison(op, kinds):
    """A pair of bins is forbidden exactly when no pair of values in them satisfies the comparison."""
    a = Numeric("a", 0, 20, bins=7, integer=kinds[0])
    b = Numeric("b", 3, 17, edges=(3, 5, 5.5, 9, 10, 17), integer=kinds[1])
    s = Schema([a, b], require=[f"a {op} b"])
    mask = StructuralZeros.from_schema(s, s.domain()).mask(("a", "b"))  # pairs and bins forbidden alone
    cmp = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}[op]
    for i in range(a.bins):
        for j in range(b.bins):
            va, vb = values_of(a, i), values_of(b, j)
            possible = bool(cmp(va[:, None], vb[None, :]).any()) if va.size and vb.size else True
            assert mask[i, j] == (not possible), (i, j)


def zero_mask(schema, a, b):
    return StructuralZeros.from_schema(schema, schema.domain()).mask((a, b))


def test_strict_on_integers_sharing_one_integer_is_forbidden():
    a = Numeric("a", 0, 9, edges=(0, 5.5, 9), integer=True)  # 0..5, 6..9
    b = Numeric("b", 0, 9, edges=(0, 5.5, 9), integer=True)  # 0..5, 6..9
    c = Numeric("c", 0, 9, edges=(0, 4.5, 9), integer=True)  # 0..4, 5..9
    s = Schema([a, b, c], require=["b > a", "c > a"])
    assert not zero_mask(s, "a", "b")[0, 0]  # 0 < 5
    assert zero_mask(s, "a", "b")[1, 0]  # 6..9 vs 0..5
    assert zero_mask(s, "a", "c")[1, 0] and not zero_mask(s, "a", "c")[0, 0]
    d = Numeric("d", 5, 9, edges=(5, 5.5, 9), integer=True)  # {5}, 6..9
    e = Numeric("e", 0, 9, edges=(0, 5.5, 9), integer=True)  # 0..5 shares only 5 with {5}
    assert zero_mask(Schema([d, e], require=["e > d"]), "d", "e")[0, 0]
    assert not zero_mask(Schema([d, e], require=["e >= d"]), "d", "e")[0, 0]
    df = decode(
        {"d": np.zeros(500, dtype=int), "e": np.ones(500, dtype=int)},
        Schema([d, e], require=["e > d"]),
        np.random.default_rng(0),
    )
    assert (df.e > df.d).all()


def test_constant_zeros_and_nulls():
    s = Schema(
        [Numeric("copay", -100, 700, bins=8, nullable=True), Numeric("age", 0, 150, bins=15, integer=True)],
        require=["copay >= 0", "age <= 120"],
    )
    assert {"copay": (0,)} in require_codes(s)  # [-100, 0) lies wholly below 0; the null code is never forbidden
    assert {"age": (13, 14)} in require_codes(s)  # bin 12 holds 120: allowed
    zeros = StructuralZeros.from_schema(s, s.domain())
    mask = zeros.mask(("copay",))
    assert mask.tolist() == [True] + [False] * 8


def test_chains_forbid_through_columns_that_cannot_be_null():
    cols = [
        Numeric("a", 0, 99, bins=10, integer=True),
        Numeric("b", 0, 99, bins=10, integer=True),
        Numeric("c", 0, 99, bins=10, integer=True),
    ]
    assert (("a", 9), ("c", 0)) in forbidden_cells(Schema(cols, require=["a <= b", "b <= c"]))
    cols[1] = Numeric("b", 0, 99, bins=10, integer=True, nullable=True)  # b null: a and c are not compared
    assert (("a", 9), ("c", 0)) not in forbidden_cells(Schema(cols, require=["a <= b", "b <= c"]))


# -- decoding -------------------------------------------------------------------------------------------------
def allowed_codes(schema, n, rng):
    """Random codes of ``schema`` in cells its zeros allow (what a fitted model draws)."""
    codes = {c.name: rng.integers(0, c.size, n) for c in schema.columns}
    keep = np.ones(n, dtype=bool)
    for entry in require_codes(schema):
        hit = np.ones(n, dtype=bool)
        for name, cs in entry.items():
            hit &= np.isin(codes[name], cs)
        keep &= ~hit
    return {k: v[keep] for k, v in codes.items()}


def test_decoding_keeps_every_record_within_the_comparisons_and_its_bins():
    rng = np.random.default_rng(1)
    s = Schema(hospital_columns(nullable_birth=True), require=[*HOSPITAL, "admitted < discharged"])
    codes = allowed_codes(s, 50_000, rng)
    df = decode(codes, s, rng)
    assert broken(df, s) == 0
    assert df.birth.isna().any() and str(df.birth.dtype) == "Int64" and df.admitted.dtype == np.int64
    again = encode(df, s)
    for name in ("admitted", "discharged", "cost", "copay"):  # pairs only: every value stays in its bin
        assert np.array_equal(again[name], codes[name]), name
    assert (df.copay >= 0).all() and (df.discharged > df.admitted).all()


def test_decoding_repairs_bins_that_are_only_jointly_impossible():
    """a < b < c on integers, a in {5}, c in {6}: each pair of bins is possible, the three together are not."""
    cols = [
        Numeric("a", 0, 10, edges=(0, 4.5, 5.5, 10), integer=True),
        Numeric("b", 0, 10, bins=1, integer=True),
        Numeric("c", 0, 10, edges=(0, 5.5, 6.5, 10), integer=True),
    ]
    s = Schema(cols, require=["a < b", "b < c"])
    codes = {"a": np.full(100, 1), "b": np.zeros(100, dtype=int), "c": np.full(100, 1)}
    df = decode(codes, s, np.random.default_rng(0))
    assert broken(df, s) == 0


def test_exchange_keeps_each_bins_values():
    """Swaps only: every column keeps, in every bin, the very values it had, and fewer records break a comparison."""
    rng = np.random.default_rng(0)
    cols = {
        "a": Numeric("a", 0, 200, edges=(0, 100, 200), integer=True),
        "d": Numeric("d", 0, 200, bins=4, integer=True),
    }
    n = 4000
    codes = {"a": rng.integers(0, 2, n)}
    codes["d"] = 2 * codes["a"] + (rng.random(n) < 0.7)  # d's bin overlaps a's upper half, or lies above it
    x = {"a": codes["a"] * 100 + rng.integers(0, 100, n) * 1.0, "d": codes["d"] * 50 + rng.integers(0, 50, n) * 1.0}
    x["d"][:50] = np.nan  # null values break nothing and stay null
    codes["d"][:50] = 4
    before = {k: v.copy() for k, v in x.items()}
    comparisons = [Comparison("a <= d", "a", "d", False)]
    bad = violations(comparisons, x).sum()
    exchange(comparisons, cols, codes, x, rng, 16)
    assert violations(comparisons, x).sum() < bad / 20
    assert np.isnan(x["d"][:50]).all()
    for name in x:
        for code in np.unique(codes[name]):
            m = codes[name] == code
            assert np.array_equal(np.sort(x[name][m]), np.sort(before[name][m]), equal_nan=True)


def test_overlapping_bins_keep_their_shape():
    """a <= d in one shared bin: drawing again until the comparison holds would put a's values low in the bin and
    d's high (means at 1/3 and 2/3 of it); swapping between records keeps both near the middle."""
    cols = [Numeric("a", 0, 1000, bins=1, integer=True), Numeric("d", 0, 1000, bins=1, integer=True)]
    s = Schema(cols, require=["a <= d"])
    n = 20_000
    df = decode({"a": np.zeros(n, dtype=int), "d": np.zeros(n, dtype=int)}, s, np.random.default_rng(3))
    assert broken(df, s) == 0
    assert abs(df.a.mean() - 500) < 30 and abs(df.d.mean() - 500) < 30


@st.composite
def schemas(draw):
    k = draw(st.integers(2, 4))
    cols = []
    for i in range(k):
        integer = draw(st.booleans())
        lo = draw(st.integers(-5, 5))
        hi = lo + draw(st.integers(0 if not integer else 0, 12))
        bins = draw(st.integers(1, 6))
        cols.append(Numeric(f"x{i}", lo, hi, bins=bins, integer=integer, nullable=draw(st.booleans())))
    entries = []
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, k - 1))
        op = draw(st.sampled_from(["<=", "<", ">=", ">"]))
        if draw(st.booleans()):
            entries.append(f"x{i} {op} {draw(st.integers(-6, 18))}")
        else:
            j = draw(st.integers(0, k - 1).filter(lambda j: j != i))
            entries.append(f"x{i} {op} x{j}" if i < j else f"x{j} {op} x{i}")  # no cycle of one direction only
    return cols, entries


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas(), st.integers(0, 2**31))
def test_decoding_never_breaks_a_comparison(spec, seed):
    cols, entries = spec
    try:
        s = Schema(cols, require=entries)
    except InputError:
        return  # contradictory: refused at load
    rng = np.random.default_rng(seed)
    codes = allowed_codes(s, 400, rng)
    df = decode(codes, s, rng)
    assert broken(df, s) == 0
    for col in s.columns:  # whole numbers in integer columns, within the bounds
        v = df[col.name].to_numpy(dtype=float, na_value=np.nan)
        v = v[~np.isnan(v)]
        assert ((v >= col.lower) & (v <= col.upper)).all()
        if col.integer:
            assert (v == np.round(v)).all()


@pytest.mark.parametrize("seed", range(20))
def test_strict_integer_chains_over_many_seeds(seed):
    rng = np.random.default_rng(seed)
    cols = [Numeric(f"x{i}", 0, 9, bins=int(rng.integers(2, 6)), integer=True) for i in range(3)]
    s = Schema(cols, require=["x0 < x1", "x1 < x2"])
    df = decode(allowed_codes(s, 5_000, rng), s, rng)
    assert broken(df, s) == 0 and (df.x0 < df.x1).all() and (df.x1 < df.x2).all()


# -- runs -----------------------------------------------------------------------------------------------------
def test_mst_with_require_breaks_nothing(tmp_path):
    df = hospital_table(4000)
    s = Schema(hospital_columns())
    with pytest.warns(UserWarning, match="seeded"):
        res = privsample.synthesize(
            df,
            epsilon=2.0,
            method="mst",
            schema=s,
            seed=0,
            rows=20_000,
            method_options={"iters": 100},
            require=HOSPITAL,
        )
    assert res.schema.require == HOSPITAL
    assert broken(res.table, res.schema) == 0
    assert (res.table.discharged >= res.table.admitted).all() and (res.table.copay >= 0).all()
    # the model keeps its schema's constraints: a saved and loaded model samples within them too
    res.model.save(tmp_path / "m.zip")
    loaded = privsample.load(tmp_path / "m.zip")
    assert loaded.require == HOSPITAL
    assert broken(loaded.sample(5000, seed=3), res.schema) == 0


def test_conditions_and_comparisons_hold_together():
    df = hospital_table(3000)
    with pytest.warns(UserWarning, match="seeded"):
        res = privsample.synthesize(
            df,
            epsilon=2.0,
            method="mst",
            schema=Schema(hospital_columns()),
            seed=0,
            rows=10,
            require=HOSPITAL,
            method_options={"iters": 50},
        )
    where = {"admitted": (100, 120), "discharged": (110, 125)}
    t = res.model.sample_table(5000, np.random.default_rng(0), where=where)
    assert broken(t, res.schema) == 0
    assert t.admitted.between(100, 120).all() and t.discharged.between(110, 125).all()


def test_require_with_private_discovery(tmp_path):
    df = hospital_table(3000)
    with pytest.warns(UserWarning):
        res = privsample.synthesize(
            df, epsilon=4.0, method="mst", seed=1, method_options={"iters": 50}, require=["admitted <= discharged"]
        )
    assert res.schema.provenance == "private" and res.schema.require == ["admitted <= discharged"]
    assert broken(res.table, res.schema) == 0
    # discovery saw no record without a date: the null codes are zeros, even on the columns the comparisons name
    assert res.table[["admitted", "discharged"]].notna().all().all()
    with pytest.raises(InputError, match="column 'ward' is categorical.*privately discovered schema"):
        with pytest.warns(UserWarning):
            privsample.synthesize(df, epsilon=4.0, method="mst", seed=1, require=["ward <= admitted"])


def test_a_million_rows(tmp_path):
    """MST on a million records (NumPy engine, four columns): no synthetic record breaks a comparison."""
    df = hospital_table(1_000_000, seed=5)[["admitted", "discharged", "cost", "copay"]]
    s = Schema(hospital_columns()[1:5])
    with pytest.warns(UserWarning, match="seeded"):
        res = privsample.synthesize(
            df,
            epsilon=1.0,
            method="mst",
            schema=s,
            seed=2,
            engine="numpy",
            method_options={"iters": 100},
            require=["discharged >= admitted", "copay >= 0", "copay <= cost"],
        )
    assert len(res.table) > 900_000
    assert broken(res.table, res.schema) == 0


# -- the same refusals from the command line and from Python ----------------------------------------------------
@pytest.fixture
def files(tmp_path):
    df = hospital_table(300)
    df.to_csv(tmp_path / "t.csv", index=False)
    Schema(hospital_columns()).save(tmp_path / "s.yaml")
    return {"csv": str(tmp_path / "t.csv"), "schema": str(tmp_path / "s.yaml"), "dir": tmp_path}


CASES = {
    "bad operator": (["--require", "admitted = discharged"], None),
    "unknown column, no schema": (["--require", "admited <= 5"], None),
    "unknown column, no schema, two sides": (["--require", "x <= y"], None),
    "neither a column nor a number": (["--require", "admitted <= soon"], None),
    "categorical, with a schema": (["--require", "ward <= admitted"], "schema"),
    "unknown column, with a schema": (["--require", "admitted <= dischargd"], "schema"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_same_message_from_the_command_line_and_python(case, files, capsys):
    args, schema = CASES[case]
    out = files["dir"] / "out.csv"
    argv = ["synth", files["csv"], "-o", str(out), "-e", "1", "-m", "mst", *args]
    if schema:
        argv += ["--schema", files["schema"]]
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1 and not out.exists(), err
    message = err.removeprefix("error: ").replace("--require", "require")
    kw = {"schema": files["schema"]} if schema else {}
    with pytest.raises(InputError) as py:
        privsample.synthesize(files["csv"], epsilon=1.0, method="mst", require=[args[1]], **kw)
    assert str(py.value) == message
    with pytest.raises(InputError) as py:
        privsample.Synthesizer("mst", epsilon=1.0, require=[args[1]]).fit(files["csv"], **kw)
    assert str(py.value) == message


def test_header_refusal_comes_before_any_spend(files):
    from privsample.privacy.budget import Budget

    budget = Budget.create(files["dir"] / "b.json", epsilon=5, delta=1e-6)
    with pytest.raises(InputError, match="'admited' is not a column of t.csv"):
        privsample.synthesize(files["csv"], epsilon=1.0, method="mst", require=["admited <= 5"], budget=budget)
    kinds = [r["kind"] for r in json.loads(budget.path.read_text())["records"]]
    assert kinds == ["reserve", "cancel"]
    with pytest.raises(InputError, match="'admited' is not a column of the input table"):
        privsample.synthesize(pd.read_csv(files["csv"]), epsilon=1.0, method="mst", require=["admited <= 5"])


def test_require_must_be_a_list():
    with pytest.raises(InputError, match=r"^require must be a list of comparisons"):
        privsample.Synthesizer("mst", epsilon=1.0, require="a <= b")
