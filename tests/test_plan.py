"""The planner (``privsample plan``, ``privsample.plan``): a row per epsilon, no record read, the memory verdict,
JSON round trip, the synthesizers' own budget split, and bad input (one line, exit 2)."""

from __future__ import annotations

import json
import math
import os

import pytest
import yaml

import privsample
from privsample.api.plan import Plan, header_names, plan
from privsample.cli import main
from privsample.errors import InputError
from privsample.privacy.conversion import cdp_rho


def run(argv, capsys) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.fixture
def garbage_csv(tmp_path):
    """A header line, then bytes no CSV reader accepts (NULs, invalid UTF-8, ragged): only the header is readable."""
    p = tmp_path / "t.csv"
    with open(p, "wb") as fh:
        fh.write(b"color,size,flag\n")
        fh.write(os.urandom(20_000) + b'\x00\xff\xfe"unterminated\n' + b"\x00" * 1000)
    return p


def schema_file(tmp_path, sizes=(3, 10, 2)):
    cols = [
        {"name": n, "type": "categorical", "categories": [str(i) for i in range(k)]}
        for n, k in zip(("color", "size", "flag"), sizes)
    ]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"provenance": "user", "columns": cols}))
    return p


def test_no_record_is_read(garbage_csv):
    """The rows after the header are garbage: the plan still works (it reads the header line and the size)."""
    assert header_names(garbage_csv) == ["color", "size", "flag"]
    p = plan(garbage_csv, epsilon=1, probe=False)
    assert p.columns == ["color", "size", "flag"] and p.rows_from == "file size (estimate)"
    assert p.rows_estimate > 0 and p.file_bytes == garbage_csv.stat().st_size
    assert {r.method for r in p.rows} == {"mst", "aim", "ppsyn"}
    with pytest.raises(InputError):  # the reader proper refuses the same file: the planner did not read it
        from privsample.data.table import read_table

        read_table(garbage_csv)


def test_a_row_per_epsilon(garbage_csv, tmp_path):
    p = plan(garbage_csv, epsilon="0.3,1,3", schema=schema_file(tmp_path), method="mst", probe=False)
    assert [r.epsilon for r in p.rows] == [0.3, 1.0, 3.0]
    sig = [r.noise["sigma_1way"] for r in p.rows]
    assert sig[0] > sig[1] > sig[2]  # more budget, less noise
    for r in p.rows:  # a reviewed schema: the whole budget goes to the synthesizer
        assert r.rho_discovery == 0 and r.min_category_records is None
        assert r.rho_synth == pytest.approx(cdp_rho(r.epsilon, 1e-9))
    p = privsample.plan(garbage_csv, epsilon=[1, 2], probe=False)
    assert sorted({r.epsilon for r in p.rows}) == [1.0, 2.0] and len(p.rows) == 6


def test_split_is_the_synthesizers(garbage_csv, tmp_path):
    """The noise the plan states is the noise the fit uses: MST's split, AIM's initial sigma, discovery's plan."""
    from privsample.synth.aim import AIM
    from privsample.synth.mst import budget_split

    p = plan(garbage_csv, epsilon=1, schema=schema_file(tmp_path), probe=False)
    by = {r.method: r for r in p.rows}
    rho = by["mst"].rho_synth
    assert (
        by["mst"].noise["sigma_1way"] == budget_split(rho, 3)["sigma_1way"] == pytest.approx(math.sqrt(9 / (2 * rho)))
    )
    assert by["aim"].noise["sigma_1way"] == pytest.approx(math.sqrt(48 / (2 * 0.9 * rho)))
    assert by["aim"].budget["rounds_T"] == AIM().rounds_and_sigma(rho, 3)[0] == 48
    # discovery: the share planned from the estimated rows, and the category threshold
    q = plan(garbage_csv, epsilon=1, method="mst", probe=False, rows=1000)
    r = q.rows[0]
    assert r.rho_discovery + r.rho_synth == pytest.approx(r.rho_total)
    assert r.rho_discovery == pytest.approx(0.5 * r.rho_total)  # a small table: discovery takes the 50% cap
    assert r.min_category_records > 20 and q.rows_from == "given"


def test_huge_domain_memory_verdict(garbage_csv, tmp_path):
    s = schema_file(tmp_path, sizes=(3000, 3000, 3000))
    p = plan(garbage_csv, epsilon=1, schema=s, method="mst", probe=False, max_memory_mb=1000)
    r = p.rows[0]
    assert r.memory_bound_mb > 1000
    assert any("needs --max-memory-mb" in v for v in r.verdict)
    assert any("needs --max-memory-mb" in v for v in p.verdict)


def test_json_round_trip(garbage_csv, capsys):
    code, out, _ = run(["plan", garbage_csv, "--epsilon", "0.5,2", "--json", "--method", "ppsyn"], capsys)
    assert code == 0
    d = json.loads(out)
    p = Plan.from_dict(d)
    assert [r.epsilon for r in p.rows] == [0.5, 2.0] and p.rows[0].method == "ppsyn"
    assert json.loads(p.to_json()) == d


def test_cli_table(garbage_csv, capsys):
    code, out, _ = run(["plan", garbage_csv, "--epsilon", "1"], capsys)
    assert code == 0
    flat = " ".join(out.split())  # the console wraps at its width
    assert "No record was read" in flat and "estimate from the file size" in flat and "(other)" in flat


@pytest.mark.parametrize(
    "args, what",
    [
        (["plan", "MISSING.csv", "--epsilon", "1"], "not found"),
        (["plan", "DATA", "--epsilon", "0"], "epsilon"),
        (["plan", "DATA", "--epsilon", "1,x"], "epsilon"),
        (["plan", "DATA", "--epsilon", "nan"], "epsilon"),
        (["plan", "DATA", "--epsilon", "1", "--method", "foo"], "method"),
        (["plan", "DATA", "--epsilon", "1", "--rows", "0"], "rows"),
    ],
)
def test_bad_input(garbage_csv, tmp_path, capsys, args, what):
    args = [garbage_csv if a == "DATA" else tmp_path / a if a == "MISSING.csv" else a for a in args]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and what in err


@pytest.mark.parametrize("method", ["mst", "aim", "ppsyn"])
def test_noise_matches_a_fit(tmp_path, method):
    """The plan's sigma of the first measurements is the noise scale a seeded fit's ledger records."""
    import numpy as np
    import pandas as pd

    from privsample.pipeline import synthesize

    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    pd.DataFrame({c: rng.integers(0, k, 400).astype(str) for c, k in (("color", 3), ("size", 10), ("flag", 2))}).to_csv(
        data, index=False
    )
    s = schema_file(tmp_path)
    r = plan(data, epsilon=1, schema=s, method=method, probe=False).rows[0]
    fit = synthesize(data, epsilon=1, schema=s, method=method, seed=1, sample=False, method_options={"iters": 20})
    entries = fit.accountant.to_dict()["entries"]
    gauss = [e for e in entries if e["mechanism"] == "discrete Gaussian"]
    if method == "ppsyn":  # PrivSyn's split: the largest column's sigma is the smallest
        scales = [e["noise_scale"] for e in gauss if "init/" in e["label"]]
        assert min(scales) == pytest.approx(r.noise["sigma_1way_min"]) and max(scales) == pytest.approx(
            r.noise["sigma_1way"]
        )
    else:
        assert gauss[0]["noise_scale"] == pytest.approx(r.noise["sigma_1way"])
    assert sum(e["rho"] for e in entries) == pytest.approx(r.rho_synth)
