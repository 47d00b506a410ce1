"""Property: any small table goes through schema -> synth --seed -> sample -> evaluate without an error, and the
synthetic tables hold the schema's columns, each with values of the schema's type.

Tables are drawn by hypothesis: 1-4 columns of random kinds (text categories, integers, decimals, 0/1 flags,
numbers mixed with text), 1-30 rows, random missing cells. The draft schema is used as if reviewed
(``provenance: user``); synth runs MST with seeded noise and few iterations.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privsample.cli import main
from privsample.data.schema import Categorical, Numeric, Schema


def _run(argv) -> tuple[int, str]:
    import contextlib
    import io

    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
            main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, buf.getvalue()


KINDS = ("category", "integer", "decimal", "flag", "mixed")


@st.composite
def tables(draw) -> pd.DataFrame:
    n = draw(st.integers(1, 30))
    ncols = draw(st.integers(1, 4))
    data = {}
    for j in range(ncols):
        kind = draw(st.sampled_from(KINDS))
        if kind == "category":
            values = st.sampled_from(["a", "b", "c", "d e", "ü", "x,y"])
        elif kind == "integer":
            values = st.integers(-1000, 1000)
        elif kind == "decimal":
            values = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
        elif kind == "flag":
            values = st.sampled_from([0, 1])
        else:
            values = st.one_of(st.integers(0, 9), st.sampled_from(["t", "u"]))
        missing = draw(st.floats(0, 0.6))
        col = draw(st.lists(values, min_size=n, max_size=n))
        holes = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
        data[f"{kind}_{j}"] = [None if h < missing else v for v, h in zip(col, holes)]
    return pd.DataFrame(data)


def _check_types(df: pd.DataFrame, schema: Schema, what: str) -> None:
    assert [str(c) for c in df.columns] == schema.names, what
    for col in schema.columns:
        values = [v for v in df[col.name].tolist() if not (v is None or (isinstance(v, float) and math.isnan(v)))]
        if isinstance(col, Categorical):
            allowed = {str(c) for c in col.categories} | ({col.other} if col.other else set())
            assert {str(v) for v in values} <= allowed, (what, col.name, set(map(str, values)) - allowed)
        else:
            assert isinstance(col, Numeric)
            nums = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
            assert not nums.isna().any(), (what, col.name, values)  # numbers only
            assert ((nums >= col.lower) & (nums <= col.upper)).all(), (what, col.name)
            if col.integer:
                assert (nums == nums.round()).all(), (what, col.name)
        if len(values) < len(df):
            assert col.nullable, (what, col.name, "missing values in a column the schema says is not nullable")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=tables())
def test_schema_synth_sample_evaluate_on_random_tables(df):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        data, sch, syn, model, more = d / "data.csv", d / "s.yaml", d / "syn.csv", d / "m.zip", d / "more.csv"
        df.to_csv(data, index=False)
        code, text = _run(["schema", data, "-o", sch])
        assert code == 0, text
        spec = yaml.safe_load(sch.read_text())
        spec["provenance"] = "user"  # reviewed, as a data owner would after reading it
        sch.write_text(yaml.safe_dump(spec))
        schema = Schema.load(sch)
        assert schema.names == [str(c) for c in df.columns]
        code, text = _run(
            [
                "synth",
                data,
                "-o",
                syn,
                "--schema",
                sch,
                "-e",
                1,
                "--seed",
                0,
                "--method",
                "mst",
                "--iters",
                20,
                "--rows",
                15,
                "--save-model",
                model,
                "-q",
            ]
        )
        assert code == 0, text
        code, text = _run(["sample", model, "-o", more, "--rows", 10, "--seed", 1])
        assert code == 0, text
        for path, rows in ((syn, 15), (more, 10)):
            out = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
            out = out.astype(object).where(out.notna(), None)
            assert len(out) == rows
            _check_types(out, schema, path.name)
        code, text = _run(["evaluate", data, syn, "--schema", sch, "--model", model, "-w", 2])
        assert code == 0, text
