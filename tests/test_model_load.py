"""A saved model is checked on load: every array and field, exit 2 naming the field when tampered."""

from __future__ import annotations

import io
import json
import math
import re
import zipfile

import numpy as np
import pytest

from privsample.data.schema import Categorical, Schema
from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.model import SynthModel
from privsample.synth.mst import MST
from tests.cli import run


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small MST model with a schema and a compressed column ('e'), saved as a .zip."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    e = np.where(rng.random(n) < 0.97, 0, rng.integers(1, 12, n))  # rare values: compressed
    domain = pgm.Domain(["a", "b", "e"], [3, 4, 12])
    eng = NumpyEngine({"a": a, "b": b, "e": e}, domain)
    schema = Schema(
        columns=[
            Categorical("a", ("x", "y", "z")),
            Categorical("b", tuple("pqrs")),
            Categorical("e", tuple(f"e{i}" for i in range(12))),
        ],
        provenance="user",
    )
    model = MST(iters=100).fit(eng, Accountant.from_epsilon_delta(4.0, 1e-9), SeededNoise(0, quiet=True), schema=schema)
    path = tmp_path_factory.mktemp("model") / "m.zip"
    model.save(path)
    assert model.compression, "the fixture needs a compressed column"
    return path


def read(path):
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("model.json"))
        with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    return meta, arrays


def write(path, meta, arrays):
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("model.json", json.dumps(meta) if not isinstance(meta, str) else meta)
        zf.writestr("arrays.npz", buf.getvalue())


def first_compression(meta) -> str:
    return meta["compression"]["e"]


def tamper(case: str, meta: dict, arrays: dict) -> str:
    """Change one thing; return the field name the error must mention."""
    comp = first_compression(meta)
    if case == "potential_nan":
        arrays["potential_0"] = arrays["potential_0"].copy()
        arrays["potential_0"].flat[0] = np.nan
        return "potential_0"
    if case == "potential_inf":
        arrays["potential_1"] = arrays["potential_1"].copy()
        arrays["potential_1"].flat[-1] = -np.inf
        return "potential_1"
    if case == "potential_shape":
        arrays["potential_0"] = arrays["potential_0"].ravel()
        return "potential_0"
    if case == "potential_dtype":
        arrays["potential_0"] = arrays["potential_0"].astype(str)
        return "potential_0"
    if case == "potential_complex":
        arrays["potential_0"] = arrays["potential_0"].astype(complex)
        return "potential_0"
    if case == "potential_missing":
        del arrays["potential_1"]
        return "potential_1"
    if case == "compression_range":
        arrays[comp] = arrays[comp].copy()
        arrays[comp][0] = meta["model"]["domain"]["e"]
        return comp
    if case == "compression_negative":
        arrays[comp] = arrays[comp].copy()
        arrays[comp][0] = -1
        return comp
    if case == "compression_not_onto":
        arrays[comp] = np.zeros_like(arrays[comp])
        return comp
    if case == "compression_length":
        arrays[comp] = arrays[comp][:-1]
        return comp
    if case == "compression_float":
        arrays[comp] = arrays[comp].astype(float)
        return comp
    if case == "compression_name":
        meta["compression"]["e"] = "nothing"
        return "compression.e"
    if case.startswith("decompression_"):
        dec = meta["decompression"]["e"]
        arrays[dec] = arrays[dec].astype(float)
        if case == "decompression_negative":
            arrays[dec][0] = -1.0
        elif case == "decompression_nan":
            arrays[dec][0] = math.nan
        elif case == "decompression_length":
            arrays[dec] = arrays[dec][:-1]
        else:  # decompression_name
            meta["decompression"]["e"] = first_compression(meta)
            return "decompression.e"
        return dec
    if case == "extra_array":
        arrays["payload"] = np.arange(3)
        return "payload"
    if case == "total_nan":
        meta["model"]["total"] = math.nan
        return "model.total"
    if case == "total_inf":
        meta["model"]["total"] = math.inf
        return "model.total"
    if case == "total_negative":
        meta["model"]["total"] = -5.0
        return "model.total"
    if case == "total_text":
        meta["model"]["total"] = "many"
        return "model.total"
    if case == "domain_zero":
        meta["domain"]["a"] = 0
        return "domain.a"
    if case == "domain_text":
        meta["domain"]["b"] = "4"
        return "domain.b"
    if case == "model_domain_columns":
        meta["model"]["domain"]["zz"] = 2
        return "model.domain"
    if case == "model_domain_size":
        meta["model"]["domain"]["a"] = 2
        return "model.domain.a"
    if case == "clique_unknown":
        meta["model"]["cliques"][0] = ["a", "nope"]
        return "model.cliques[0]"
    if case == "cliques_not_list":
        meta["model"]["cliques"] = "a,b"
        return "model.cliques"
    if case == "ledger_not_object":
        meta["ledger"] = [1, 2]
        return "ledger"
    if case == "ledger_summary":
        meta["ledger"]["summary"] = "private"
        return "ledger"
    if case == "total_sd_nan":
        meta["info"]["total_sd"] = math.nan
        return "info.total_sd"
    if case == "schema_sizes":
        meta["schema"]["columns"][0]["categories"] = ["x", "y"]
        return "schema"
    if case == "schema_garbage":
        meta["schema"] = {"columns": "x"}
        return "schema"
    if case == "mechanism_missing":
        del meta["mechanism"]
        return "mechanism"
    raise AssertionError(case)


CASES = [
    "potential_nan",
    "potential_inf",
    "potential_shape",
    "potential_dtype",
    "potential_complex",
    "potential_missing",
    "compression_range",
    "compression_negative",
    "compression_not_onto",
    "compression_length",
    "compression_float",
    "compression_name",
    "decompression_negative",
    "decompression_nan",
    "decompression_length",
    "decompression_name",
    "extra_array",
    "total_nan",
    "total_inf",
    "total_negative",
    "total_text",
    "domain_zero",
    "domain_text",
    "model_domain_columns",
    "model_domain_size",
    "clique_unknown",
    "cliques_not_list",
    "ledger_not_object",
    "ledger_summary",
    "total_sd_nan",
    "schema_sizes",
    "schema_garbage",
    "mechanism_missing",
]


@pytest.mark.parametrize("case", CASES)
def test_tampered_model_exits_2_naming_the_field(case, saved, tmp_path, capsys):
    meta, arrays = read(saved)
    field = tamper(case, meta, arrays)
    bad = tmp_path / "bad.zip"
    write(bad, meta, arrays)
    with pytest.raises(InputError, match=re.escape(f"'{field}'")):
        SynthModel.load(bad)
    out = tmp_path / "o.csv"
    code, text = run(["sample", bad, "-o", out, "--rows", 5], capsys)
    assert code == 2, text
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and f"'{field}'" in lines[0], text
    assert not out.exists()


@pytest.mark.parametrize("text", ["[1, 2]", "null", '"model"'])
def test_model_json_that_is_not_an_object_exits_2(text, saved, tmp_path, capsys):
    _, arrays = read(saved)
    bad = tmp_path / "bad.zip"
    write(bad, text, arrays)
    code, err = run(["sample", bad, "-o", tmp_path / "o.csv", "--rows", 5], capsys)
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1, err


def test_untampered_model_loads_and_samples(saved, tmp_path, capsys):
    m = SynthModel.load(saved)
    assert m.schema is not None and m.compression
    code, text = run(["sample", saved, "-o", tmp_path / "o.csv", "--rows", 50, "--seed", 1], capsys)
    assert code == 0, text


def test_overflowing_potentials_are_refused_or_sampled_never_uniform_garbage(saved, tmp_path, capsys):
    """Finite but huge log-potentials: either a valid model (a point mass) or exit 2, never NaN rows."""
    meta, arrays = read(saved)
    arrays["potential_0"] = np.full_like(arrays["potential_0"], -1e308)
    arrays["potential_0"].flat[0] = 1e308
    bad = tmp_path / "big.zip"
    write(bad, meta, arrays)
    code, text = run(["sample", bad, "-o", tmp_path / "o.csv", "--rows", 20, "--seed", 0], capsys)
    assert code in (0, 2), text
    if code == 0:
        import pandas as pd

        assert pd.read_csv(tmp_path / "o.csv").notna().all().all()
