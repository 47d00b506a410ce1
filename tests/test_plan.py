"""The planner (``privsample plan``, ``privsample.plan``): a row per epsilon, no record read, neighbouring files
give the same plan (no file size, no row estimate), --rows or the grid of assumed row counts, the memory verdict,
JSON round trip, the synthesizers' own budget split, and bad input (one line, exit 2)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import privsample
from privsample.api import plan as plan_module
from privsample.api.plan import GRID_ROWS, Plan, header_names, plan
from privsample.errors import InputError
from privsample.privacy.conversion import cdp_rho
from tests.cli import invoke


run = invoke  # (exit code, stdout, stderr)


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
    """The rows after the header are garbage: the plan still works (it reads the header line alone)."""
    assert header_names(garbage_csv) == ["color", "size", "flag"]
    p = plan(garbage_csv, epsilon=1, probe=False)
    assert p.columns == ["color", "size", "flag"] and p.rows_from == "grid" and p.row_counts == list(GRID_ROWS)
    assert {r.method for r in p.rows} == {"mst", "aim", "ppsyn"}
    assert sorted(r.row_count for r in p.rows) == sorted(list(GRID_ROWS) * 3)
    assert not {"file_bytes", "rows_estimate"} & set(p.to_dict())
    with pytest.raises(InputError):  # the reader proper refuses the same file: the planner did not read it
        from privsample.data.table import read_table

        read_table(garbage_csv)


def test_a_row_per_epsilon(garbage_csv, tmp_path):
    p = plan(garbage_csv, epsilon="0.3,1,3", schema=schema_file(tmp_path), method="mst", probe=False, rows=500)
    assert [r.epsilon for r in p.rows] == [0.3, 1.0, 3.0]
    sig = [r.noise["sigma_1way"] for r in p.rows]
    assert sig[0] > sig[1] > sig[2]  # more budget, less noise
    for r in p.rows:  # a reviewed schema: the whole budget goes to the synthesizer
        assert r.rho_discovery == 0 and r.min_category_records is None
        assert r.rho_synth == pytest.approx(cdp_rho(r.epsilon, 1e-9))
    p = privsample.plan(garbage_csv, epsilon=[1, 2], probe=False)  # 2 epsilons x 3 methods x the grid
    assert sorted({r.epsilon for r in p.rows}) == [1.0, 2.0] and len(p.rows) == 6 * len(GRID_ROWS)


def test_split_is_the_synthesizers(garbage_csv, tmp_path):
    """The noise the plan states is the noise the fit uses: MST's split, AIM's initial sigma, discovery's plan."""
    from privsample.synth.aim import AIM
    from privsample.synth.mst import budget_split

    p = plan(garbage_csv, epsilon=1, schema=schema_file(tmp_path), probe=False, rows=1000)
    by = {r.method: r for r in p.rows}
    rho = by["mst"].rho_synth
    assert (
        by["mst"].noise["sigma_1way"] == budget_split(rho, 3)["sigma_1way"] == pytest.approx(math.sqrt(9 / (2 * rho)))
    )
    assert by["aim"].noise["sigma_1way"] == pytest.approx(math.sqrt(48 / (2 * 0.9 * rho)))
    assert by["aim"].budget["rounds_T"] == AIM().rounds_and_sigma(rho, 3)[0] == 48
    # discovery: the share planned from the stated rows, and the category threshold
    q = plan(garbage_csv, epsilon=1, method="mst", probe=False, rows=1000)
    r = q.rows[0]
    assert r.rho_discovery + r.rho_synth == pytest.approx(r.rho_total)
    assert r.rho_discovery == pytest.approx(0.7 * r.rho_total)  # a small table: discovery takes the 70% cap
    assert r.min_category_records > 20 and q.rows_from == "given"


def test_huge_domain_memory_verdict(garbage_csv, tmp_path):
    s = schema_file(tmp_path, sizes=(3000, 3000, 3000))
    p = plan(garbage_csv, epsilon=1, schema=s, method="mst", probe=False, max_memory_mb=1000)
    assert len(p.rows) == len(GRID_ROWS) and len({r.memory_bound_mb for r in p.rows}) == 1  # not n-dependent
    r = p.rows[0]
    assert r.memory_bound_mb > 1000
    assert any("needs --max-memory-mb" in v for v in r.verdict)
    assert any("needs --max-memory-mb" in v for v in p.verdict)


def test_json_round_trip(garbage_csv, capsys):
    code, out, _ = run(["plan", garbage_csv, "--epsilon", "0.5,2", "--json", "--method", "ppsyn"], capsys)
    assert code == 0
    d = json.loads(out)
    p = Plan.from_dict(d)
    assert [r.epsilon for r in p.rows][:2] == [0.5, 2.0] and p.rows[0].method == "ppsyn"
    assert d["rows_from"] == "grid" and d["row_counts"] == list(GRID_ROWS)
    assert [r["row_count"] for r in d["rows"]] == [n for n in GRID_ROWS for _ in (0.5, 2.0)]
    assert json.loads(p.to_json()) == d


def test_cli_table(garbage_csv, capsys):
    code, out, _ = run(["plan", garbage_csv, "--epsilon", "1"], capsys)
    assert code == 0
    flat = " ".join(out.split())  # the console wraps at its width
    assert "Nothing was read beyond the header" in flat and "(other)" in flat
    assert "assume the row counts shown (pass --rows N if the count is public)" in flat
    assert all(f"{n:,} rows" in flat for n in GRID_ROWS) and "estimate" not in flat and "bytes" not in flat
    code, out, _ = run(["plan", garbage_csv, "--epsilon", "1", "--rows", "4321"], capsys)
    flat = " ".join(out.split())
    assert code == 0 and "assume 4,321 rows (given with --rows)" in flat and "1,000,000 rows" not in flat


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

    from privsample.api.synthesizer import synthesize

    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    pd.DataFrame({c: rng.integers(0, k, 400).astype(str) for c, k in (("color", 3), ("size", 10), ("flag", 2))}).to_csv(
        data, index=False
    )
    s = schema_file(tmp_path)
    r = plan(data, epsilon=1, schema=s, method=method, probe=False).rows[0]
    fit = synthesize(data, epsilon=1, schema=s, method=method, seed=1, sample=False, method_options={"iters": 20})
    entries = fit.ledger["entries"]
    gauss = [e for e in entries if e["mechanism"] == "discrete Gaussian"]
    if method == "ppsyn":  # PrivSyn's split: the largest column's sigma is the smallest
        scales = [e["noise_scale"] for e in gauss if "init/" in e["label"]]
        assert min(scales) == pytest.approx(r.noise["sigma_1way_min"]) and max(scales) == pytest.approx(
            r.noise["sigma_1way"]
        )
    else:
        assert gauss[0]["noise_scale"] == pytest.approx(r.noise["sigma_1way"])
    assert sum(e["rho"] for e in entries) == pytest.approx(r.rho_synth)


# -- neighbouring files: the same plan ---------------------------------------------------------------
def _records(k: int, seed: int = 0) -> list[str]:
    import random

    rnd = random.Random(seed)  # not noise: a fixed table
    return [f"{rnd.choice(['red', 'green', 'blue'])},{rnd.randint(0, 9)},{rnd.choice('yn')}\n" for _ in range(k)]


def _plan_outputs(path, capsys, monkeypatch, extra) -> list[str]:
    """The text and JSON output of ``privsample plan`` on ``path``, at a fixed machine speed (the probe and load
    average vary from run to run; they are no function of the file)."""
    monkeypatch.setattr(plan_module, "machine_speed", lambda calibration: 1.0)
    outs = []
    for fmt in ([], ["--json"]):
        code, out, err = run(["plan", path, "--epsilon", "0.5,2", *extra, *fmt], capsys)
        assert code == 0 and err == ""
        outs.append(out)
    return outs


@pytest.mark.parametrize("extra", [[], ["--rows", "800"], ["--schema", "SCHEMA"]])
def test_neighbours_give_the_same_plan(tmp_path, capsys, monkeypatch, extra):
    """D, D plus one record, and D plus one record far longer in bytes (in a CSV, a gzipped CSV and a Parquet
    file): byte for byte the same text and JSON, with and without --rows. The plan prints no byte count."""
    import pandas as pd

    extra = [str(schema_file(tmp_path)) if a == "SCHEMA" else a for a in extra]
    head = "color,size,flag\n"
    base = _records(800)
    long = '"' + "x" * 5000 + '",' + "1" * 300 + ",y\n"  # one record of about 5 KB (the others: about 10 bytes)
    tables = {"D": base, "D+1": base + _records(1, seed=1), "D+long": base[:400] + [long] + base[400:]}
    for name in ("t.csv", "t.csv.gz", "t.parquet"):
        path = tmp_path / name
        outputs, sizes = [], set()
        for records in tables.values():
            text = head + "".join(records)
            if name.endswith(".gz"):
                import gzip

                path.write_bytes(gzip.compress(text.encode()))
            elif name.endswith(".parquet"):
                import io

                pd.read_csv(io.StringIO(text), dtype=str).to_parquet(path)
            else:
                path.write_text(text)
            sizes.add(path.stat().st_size)
            outputs.append(_plan_outputs(path, capsys, monkeypatch, extra))
        assert len(sizes) == 3  # the three files differ in size
        assert outputs[0] == outputs[1] == outputs[2], name
        text, as_json = outputs[0]
        for size in sizes:  # no byte count, as a number of its own (not a run of digits inside another number)
            for form in (str(size), f"{size:,}"):
                assert not re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d.,])", text + as_json), form
        assert "bytes" not in text + as_json and not re.search(r"\d\s*(KB|kB|KiB)\b", text)
        d = json.loads(as_json)
        assert not {"file_bytes", "rows_estimate"} & set(d)
        assert d["row_counts"] == ([800] if "--rows" in extra else list(GRID_ROWS))


def test_rows_change_the_figures(garbage_csv):
    """--rows N (public) replaces the grid: the n-dependent figures follow it, the others do not."""
    a = plan(garbage_csv, epsilon=1, method="mst", probe=False, rows=2_000)
    b = plan(garbage_csv, epsilon=1, method="mst", probe=False, rows=2_000_000)
    ra, rb = a.rows[0], b.rows[0]
    assert a.rows_from == b.rows_from == "given" and (a.row_counts, b.row_counts) == ([2_000], [2_000_000])
    assert ra.row_count == 2_000 and rb.row_count == 2_000_000
    assert rb.rho_discovery < ra.rho_discovery  # discovery's share shrinks with the rows
    assert rb.min_category_records != ra.min_category_records
    assert rb.seconds > ra.seconds and rb.peak_rss_mb > ra.peak_rss_mb
    assert rb.noise["share_of_rows"]["sigma_2way"] < ra.noise["share_of_rows"]["sigma_2way"]
    assert ra.model_mb == rb.model_mb and ra.rho_total == rb.rho_total
    grid = plan(garbage_csv, epsilon=1, method="mst", probe=False)
    by_n = {r.row_count: r for r in grid.rows}
    assert sorted(by_n) == list(GRID_ROWS) and by_n[1_000_000].seconds > by_n[1_000].seconds
    assert plan(garbage_csv, epsilon=1, method="mst", probe=False, rows=1_000).rows[0] == by_n[1_000]


def test_verdict_per_assumed_rows(garbage_csv, tmp_path):
    """With the grid, the method to pick is stated for the assumed row counts it holds at; no threshold is
    stated as if the row count were known."""
    p = plan(garbage_csv, epsilon=1, schema=schema_file(tmp_path), probe=False)
    picks = [v for v in p.verdict if "pick" in v]
    assert picks and all("rows (assumed)" in v for v in picks)
    q = plan(garbage_csv, epsilon=1, probe=False, rows=5000)
    assert any(v.startswith("at ε=1, categories below ~") for v in q.verdict)
    assert not any("assumed" in v for v in q.verdict)


def test_benchmark_forecast(monkeypatch):
    """benchmarks/planner.py still runs against this API: its --help, and its plan of a shared table (NLTCS, with
    its public row count given as rows; the benchmark's runs themselves are long)."""
    root = Path(__file__).resolve().parents[1]
    bench = root / "benchmarks"
    res = subprocess.run(
        [sys.executable, str(bench / "planner.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=bench,
        env=dict(os.environ, PYTHONPATH=str(root)),
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    monkeypatch.syspath_prepend(str(bench))
    import importlib

    planner = importlib.import_module("planner")
    if not (planner.DATA / "nltcs.csv").exists():
        pytest.skip("shared benchmark data not found")
    p, row = planner.forecast("nltcs", "mst", 1.0, probe=False)
    assert p.rows_from == "given" and p.row_counts == [21_574] and row.row_count == 21_574 and row.seconds > 0
