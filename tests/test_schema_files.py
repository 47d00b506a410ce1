"""Schema files: strict keys with suggestions, the format version, and bounds whose arithmetic stays finite."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from privsample.data.discovery import draft_schema
from privsample.data.decoding import decode
from privsample.data.encoding import encode
from privsample.data.schema import (
    MAX_FLOAT_BOUND,
    MAX_INTEGER_BOUND,
    SCHEMA_VERSION,
    Numeric,
    Schema,
)
from privsample.errors import InputError


def base() -> dict:
    return {
        "provenance": "user",
        "columns": [
            {"name": "age", "type": "numeric", "lower": 0, "upper": 100, "bins": 4, "integer": True},
            {"name": "sex", "type": "categorical", "categories": ["f", "m"], "nullable": True},
        ],
    }


# -- strict keys ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit, fragments",
    [
        (lambda d: d.update(foo=1), ["unknown key 'foo'", "allowed: version"]),
        (lambda d: d.update(na_value=["?"]), ["unknown key 'na_value'", "did you mean 'na_values'?"]),
        (lambda d: d.update(provenence="user"), ["did you mean 'provenance'?"]),
        (lambda d: d["columns"][1].update(colour="red"), ["categorical column 'sex'", "unknown key 'colour'"]),
        (lambda d: d["columns"][1].update(others="(other)"), ["did you mean 'other'?"]),
        (lambda d: d["columns"][0].update(bin=8), ["numeric column 'age'", "did you mean 'bins'?"]),
        (lambda d: d["columns"][0].update(nulable=True), ["did you mean 'nullable'?"]),
        (lambda d: d["columns"][1].update(bins=3), ["categorical column 'sex'", "unknown key 'bins'"]),
    ],
)
def test_unknown_keys_are_refused_with_a_suggestion(edit, fragments, tmp_path):
    d = base()
    edit(d)
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(d))
    with pytest.raises(InputError) as err:
        Schema.load(p)
    msg = str(err.value)
    assert str(p) in msg and "\n" not in msg
    for f in fragments:
        assert f in msg


def test_version_is_written_and_checked():
    s = Schema.from_dict(base())  # no version: an older file, still read
    assert s.to_dict()["version"] == SCHEMA_VERSION == 1
    assert Schema.from_dict({**base(), "version": 1}).names == ["age", "sex"]
    with pytest.raises(InputError, match="version 2 is newer"):
        Schema.from_dict({**base(), "version": 2})
    for bad in ("1", 0, 1.5, True, None):
        with pytest.raises(InputError, match="'version' must be a whole number"):
            Schema.from_dict({**base(), "version": bad})


def test_every_key_written_is_read_back():
    s = Schema.from_dict({**base(), "na_values": ["?"], "notes": ["x"]})
    again = Schema.from_dict(s.to_dict())
    assert again.to_dict() == s.to_dict()


# -- bounds ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "column, fragment",
    [
        ({"lower": -1.7e308, "upper": 1.7e308}, "too far apart"),
        ({"lower": 0, "upper": float("inf")}, "finite"),
        ({"lower": float("nan"), "upper": 1}, "finite"),
        ({"lower": 0, "upper": 1e308, "integer": True}, "integer column"),
        ({"lower": 0, "upper": 2.0**53, "integer": True}, "2**52"),
        ({"lower": 0, "upper": 1, "edges": [0, float("nan"), 1]}, "edges must be finite"),
    ],
)
def test_absurd_bounds_are_refused_naming_the_column(column, fragment):
    d = base()
    d["columns"][0] = {"name": "income", "type": "numeric", **column}
    with pytest.raises(InputError, match="income") as err:
        Schema.from_dict(d)
    assert fragment in str(err.value)


def test_wide_bounds_keep_finite_arithmetic():
    rng = np.random.default_rng(0)
    for col in (
        Numeric("x", -MAX_FLOAT_BOUND, MAX_FLOAT_BOUND, bins=16),
        Numeric("x", 0, 1e308, bins=16),
        Numeric("x", -MAX_INTEGER_BOUND, MAX_INTEGER_BOUND, bins=7, integer=True),
        Numeric("x", 0, MAX_INTEGER_BOUND, bins=1000, integer=True),
    ):
        e = col.bin_edges
        assert np.all(np.isfinite(e)) and np.all(np.diff(e) > 0) and len(e) == col.bins + 1
        s = Schema([col])
        codes = encode(pd.DataFrame({"x": [str(col.lower), "1e308", "-1e308", "inf", "7"]}), s, release=True)
        out = decode(codes, s, rng)["x"].to_numpy(dtype=float)
        assert np.all(np.isfinite(out)) and np.all((out >= col.lower) & (out <= col.upper))


def test_integer_bin_edges_are_exact_half_integers():
    col = Numeric("x", 0, 10**15, bins=3, integer=True)
    n = 10**15 + 1
    assert col.bin_edges.tolist() == [0.0, n // 3 - 0.5, 2 * n // 3 - 0.5, 1e15]
    small = Numeric("x", 17, 90, bins=8, integer=True).bin_edges  # as before: 17 + floor(i * 74 / 8) - 0.5
    assert small.tolist() == [17.0, *(17 + np.floor(np.arange(1, 8) * 74 / 8) - 0.5), 90.0]


def test_draft_never_writes_bounds_whose_width_overflows():
    nums = [str(i) for i in range(30)]
    df = pd.DataFrame(
        {"a": nums + ["1e308"], "b": nums + ["-1.7e308"], "c": [*nums[:-1], "-1.7e308", "1.7e308"], "d": nums + ["inf"]}
    )
    s = draft_schema(df)
    a, c = s["a"], s["c"]
    assert isinstance(a, Numeric) and a.upper == 1e308 and not a.integer  # beyond 2**52: not an integer column
    assert isinstance(c, Numeric) and (c.lower, c.upper) == (-MAX_FLOAT_BOUND, MAX_FLOAT_BOUND)
    assert math.isfinite(c.upper - c.lower) and any("'c': bounds limited" in n for n in s.notes)
    assert s["b"].integer is False and s["d"].kind == "categorical"  # inf is not a finite number
    again = Schema.from_dict({**s.to_dict(), "provenance": "user"})  # what 'schema' writes is read back
    assert again["c"].upper == MAX_FLOAT_BOUND
    assert draft_schema(pd.DataFrame({"i": [str(i) for i in range(25)] + [str(2**52)]}))["i"].integer
