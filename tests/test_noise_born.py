"""Noise-born cells: a privately discovered schema's release domain gives every column a null code, and the
synthesizers' noise puts mass there even when no record lacks a value. Discovery counts the records without a value
(a number, in a numeric column) as one public cell of its histogram; where that noisy count does not pass, the
synthesizers fix the null code at probability 0 (post-processing of released counts)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privsample.data.discovery import private_schema
from privsample.data.encoding import release_schema
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.zeros import StructuralZeros


def _table(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    full = rng.integers(1, 5, n).astype(float)  # no missing value
    holes = rng.normal(50, 10, n).round()
    holes[rng.random(n) < 0.3] = np.nan  # 30% missing
    return pd.DataFrame(
        {
            "code": [str(int(v)) for v in full],
            "amount": [None if np.isnan(v) else str(int(v)) for v in holes],
            "label": rng.choice(["yes", "no"], n).tolist(),
            "grade": [None if u < 0.25 else g for u, g in zip(rng.random(n), rng.choice(["A", "B"], n))],
        },
        dtype=object,
    )


def _discover(df, seed):
    return private_schema(df, Accountant(1.0, delta_slack=1e-6), SeededNoise(seed, quiet=True), rho=0.02, delta=1e-9)


def test_null_code_of_a_column_without_missing_values_is_a_structural_zero():
    df = _table()
    others = 0
    for seed in range(5):
        s = _discover(df, seed)
        rep = {c["name"]: c for c in s.discovery["columns"]}
        assert rep["code"]["nullable"] is False and rep["amount"]["nullable"] is True
        rel = release_schema(s)
        dom = pgm.Domain(rel.names, [c.size for c in rel.columns])
        z = StructuralZeros.noise_born(rel, dom)
        zeros = {name: set(codes[0]) for (name,), codes in z.entries}
        # the numeric column without missing values and the categorical one: their null codes
        assert zeros["code"] == {rel["code"].null_code} and rel["label"].null_code in zeros["label"]
        assert "amount" not in zeros and rel["grade"].null_code not in zeros.get("grade", set())
        # the categorical columns whose released categories hold every record: their catch-alls, when the records
        # the released counts leave are within their noise (a noisy decision: most seeds)
        others += rel["label"].other_code in zeros["label"] and rel["grade"].other_code in zeros.get("grade", set())
        assert StructuralZeros.noise_born(release_schema(s.__class__(s.columns, provenance="user")), dom) is None
    assert others >= 3


@pytest.mark.parametrize("method", ["aim", "ppsyn", "mst"])
def test_synthetic_data_gains_no_empty_values_where_the_real_table_has_none(method):
    import privsample

    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = privsample.Synthesizer(method, epsilon=1.0, iters=50).fit(df, seed=3).sample(2000, seed=1)
    assert out["code"].isna().mean() == 0.0 and out["label"].isna().mean() == 0.0
    assert 0.15 < out["amount"].isna().mean() < 0.45  # a real missing share stays (30%)
    assert 0.12 < out["grade"].isna().mean() < 0.38  # 25%: missing, never the catch-all
    # no record is in the catch-all: its code is a structural zero, so no synthetic record gets it either
    assert not out["grade"].dropna().astype(str).str.startswith("(other").any()
    assert not out["label"].astype(str).str.startswith("(other").any()


def test_a_code_value_its_counts_did_not_show_is_a_structural_zero():
    """A code whose bounds take in a value without records (kept values 1, 2 and 4; 3 never occurs): the
    unsupported value gets probability 0 (post-processing of the grid counts)."""
    from privsample.data.schema import Numeric, Schema

    col = Numeric("c", 1.0, 4.0, bins=4, integer=True, nullable=True)
    s = Schema(
        [col],
        provenance="private",
        discovery={
            "columns": [{"name": "c", "kind": "numeric", "binning": "unit", "unsupported": [3.0], "nullable": False}]
        },
    )
    dom = pgm.Domain(["c"], [col.size])
    z = StructuralZeros.noise_born(s, dom)
    assert z.entries == ((("c",), ((2, 4),)),)  # the value 3 (code 2) and the null code (4)
