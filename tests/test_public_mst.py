"""Public data for MST (joint selection of public and private tree edges): the ledger, the selection's
sensitivity, free public edges, exactness without a public table, bad input, the command line and the API."""

from __future__ import annotations

import hashlib
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from privsample import InputError, Synthesizer
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm
from privsample.synth.mst import MST, PUBLIC_SENSITIVITY, compress_counts, edge_scores
from privsample.synth.public import public_data
from tests.cli import run
from tests.test_cli import small_schema, small_table
from tests.test_mst import toy_engine


DOMAIN = pgm.Domain(["a", "b", "c", "d", "e"], [3, 4, 5, 5, 30])


def toy_codes(n=3000, seed=0) -> dict[str, np.ndarray]:
    """The codes of ``tests.test_mst.toy_engine(n, seed)`` (a chain a-b-c-d and a rare-valued e)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = (b * 2 + rng.integers(0, 2, n)) % 5
    d = (c + (rng.random(n) < 0.1)) % 5
    e = np.where(rng.random(n) < 0.97, 0, rng.integers(1, 30, n))
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def fit(public=None, seed=0, eps=1.0, iters=60):
    eng = toy_engine()
    acc = Accountant.from_epsilon_delta(eps, 1e-9)
    model = MST(iters=iters).fit(eng, acc, SeededNoise(seed, quiet=True), public=public)
    return acc, model


def toy_public(n: int, seed: int):
    """Another sample of ``toy_engine``'s chain (e spread over more values: public mass in compressed cells)."""
    codes = toy_codes(n, seed)
    codes["e"] = np.random.default_rng(seed).integers(0, 30, n)
    return public_data(codes, DOMAIN, f"toy{seed}.csv")


@pytest.fixture(scope="module")
def runs():
    return {
        "none": fit(),
        "pub": fit(toy_public(1500, 1)),
        "same": fit(public_data(toy_codes(), DOMAIN, "copy.csv")),  # the private table itself: public wins
    }


def ledger_rows(acc):
    return [(e.label, e.rho, e.details.get("sensitivity")) for e in acc.ledger]


def test_without_a_public_table_mst_is_unchanged_byte_for_byte(runs):
    """MD5 of the seeded codes and the ledger of this run without public data: pinned, so that the public-data
    path cannot change MST's own (the codes' part follows MST's decompression by noisy counts)."""
    acc, model = runs["none"]
    codes = model.sample(rng=np.random.default_rng(0))
    h = hashlib.md5()
    for a in ("a", "b", "c", "d", "e"):
        h.update(np.ascontiguousarray(codes[a], "<i8").tobytes())
    for e in acc.ledger:
        h.update(f"{e.label} {e.rho!r} {e.noise_scale!r} {e.details.get('sensitivity')!r};".encode())
    assert h.hexdigest() == "dcb49717a7d436ac7d8c4fd80d756c8a"
    assert "public" not in model.info and "public_edges" not in model.info and not acc.public_inputs


@pytest.mark.parametrize("case", ["pub", "same"])
def test_the_ledger_spends_rho_and_lists_the_public_table(runs, case):
    acc, model = runs[case]
    total = sum(Fraction(e.rho) for e in acc.ledger)
    assert total <= Fraction(acc.rho_total) and float(total) == pytest.approx(acc.rho_total, rel=1e-12)
    third = acc.rho_total / 3
    for group in ("1-way", "select", "2-way"):
        assert math.fsum(e.rho for e in acc.ledger if e.label.split("/")[1] == group) == pytest.approx(third, 1e-9)
    one = [r for r in ledger_rows(acc) if "/1-way/" in r[0]]
    assert one == [r for r in ledger_rows(runs["none"][0]) if "/1-way/" in r[0]]  # step 1 is MST's
    (p,) = acc.public_inputs
    assert p["privacy"] == "public input, no privacy cost" and p["fingerprint"].startswith("sha256:")
    assert model.info["public"]["name"] == p["name"] and model.ledger["public_inputs"] == [p]


def test_public_edges_spend_nothing_and_step_3_measures_the_private_ones(runs):
    acc, model = runs["same"]
    tree = [tuple(e) for e in model.info["tree"]]
    public = [tuple(e) for e in model.info["public_edges"]]
    assert public and set(public) < set(tree)  # the public table is the private one: public edges are picked
    measured = [e.label for e in acc.ledger if e.label.startswith("mst/2-way/")]
    assert measured == [f"mst/2-way/{a},{b}" for a, b in tree if (a, b) not in public]
    share = acc.rho_total / 3 / len(measured)  # the 2-way third, split over the private edges only
    assert all(e.rho == pytest.approx(share, rel=1e-9) for e in acc.ledger if e.label.startswith("mst/2-way/"))
    assert len(acc.ledger) == 5 + 4 + len(measured)


def test_the_selection_runs_with_sensitivity_2_while_public_edges_are_offered(runs):
    acc, model = runs["same"]
    sel = [e for e in acc.ledger if e.label.startswith("mst/select/")]
    eps = math.sqrt(8 * sel[0].rho)
    public = [tuple(e) for e in model.info["public_edges"]]
    # the last draw offers private edges only when every earlier pick was public (step 3 then spends the rest)
    last_private_only = len(public) == len(sel) - 1
    expected = [PUBLIC_SENSITIVITY] * (len(sel) - 1) + [1.0 if last_private_only else PUBLIC_SENSITIVITY]
    assert [e.details["sensitivity"] for e in sel] == expected and PUBLIC_SENSITIVITY == 2.0
    assert sel[0].noise_scale == pytest.approx(2 * 2.0 / eps, rel=1e-6)
    assert {e.details["sensitivity"] for e in runs["none"][0].ledger if "/select/" in e.label} == {1.0}


def test_a_public_edge_score_moves_by_2_per_record_and_a_private_one_by_1():
    """The bound 2 is reached (so a sensitivity of 1 would be wrong): one added record moves both L1 terms."""
    mu, share, total = np.array([2.0, 5.0]), np.array([0.6, 0.4]), 10.0  # public marginal: [6, 4]
    x0, x1 = np.array([3, 4]), np.array([4, 4])  # one record added to cell 0

    def scores(x):
        return edge_scores([np.abs(x - mu).sum()], [2], 1.5, [x], [share], total)

    (p0,), (q0,) = scores(x0)
    (p1,), (q1,) = scores(x1)
    assert abs(q1 - q0) == pytest.approx(2.0) and abs(p1 - p0) == pytest.approx(1.0)
    assert p0 == pytest.approx(np.abs(x0 - mu).sum() - math.sqrt(2 / math.pi) * 1.5 * 2)


def test_toy_codes_are_the_private_table():
    eng = toy_engine()
    assert all(
        (eng.marginals([(a,)])[(a,)] == np.bincount(c, minlength=n)).all()
        for (a, c), n in zip(toy_codes().items(), DOMAIN.shape)
    )


def test_public_codes_are_compressed_like_the_private_ones(runs):
    """e is compressed (values with small noisy counts merged); the public pair is summed by the same mapping."""
    _, model = runs["pub"]
    assert "e" in model.info["compressed"]
    mapping = model.compression
    pub = toy_public(1500, 1)
    x = pub.engine.marginals([("c", "e")])[("c", "e")]
    c = compress_counts(x, ("c", "e"), mapping)
    assert c.shape == (5, model.info["compressed"]["e"]) and c.sum() == x.sum() == 1500
    assert model.sample(100, rng=np.random.default_rng(0))["e"].max() < 30


def test_a_public_table_on_another_domain_is_refused_before_any_spend():
    other = pgm.Domain(DOMAIN.attributes, [3, 4, 5, 5, 31])
    pub = public_data({a: np.zeros(5, int) for a in other.attributes}, other, "p.csv")
    acc = Accountant(1.0)
    with pytest.raises(InputError, match="public table p.csv: its schema differs"):
        MST(iters=10).fit(toy_engine(), acc, SeededNoise(0, quiet=True), public=pub)
    assert acc.spent == 0 and not acc.ledger


# -- command line and Python API ----------------------------------------------------------------------
def test_cli_mst_with_public(public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    out = tmp_path / "synth.csv"
    argv = ["synth", csv, "-e", "1", "-o", out, "-s", sch, "--public", pub, "-m", "mst", "--iters", "30", "--seed", "0"]
    code, text = run(argv, capsys)
    assert code == 0, text
    assert len(pd.read_csv(out)) > 0
    assert "public input, no privacy cost: public.csv (200 rows, sha256:" in text


@pytest.mark.parametrize(
    "case, expected",
    [
        ("missing column", "error: public table public.csv: column 'flag' is in the schema but not in the data"),
        ("empty", "error: public table public.csv: the table has no data rows"),
        ("absent", "error: public table public.csv: data file not found: "),
        ("not a table", "error: public table public.txt: "),
    ],
)
def test_cli_mst_bad_public_exits_2_one_line(case, expected, public_files, tmp_path, capsys):
    csv, pub, sch = public_files
    if case == "missing column":
        small_table(50, 1).drop(columns=["flag"]).to_csv(pub, index=False)
    elif case == "empty":
        pub.write_text("color,size,flag\n")
    elif case == "absent":
        pub.unlink()
    elif case == "not a table":
        pub = tmp_path / "public.txt"
        pub.write_text("hello\n")
    argv = ["synth", csv, "-e", "1", "-o", tmp_path / "o.csv", "-s", sch, "--public", pub, "-m", "mst", "-q"]
    code, text = run(argv, capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1 and expected in lines[0], text
    assert not (tmp_path / "o.csv").exists()


def test_synthesizer_api_mst_with_public():
    from privsample.data.schema import Schema

    schema = Schema.from_dict(small_schema())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded noise: NOT private (a reproducible test)
        s = Synthesizer("mst", epsilon=1, iters=30).fit(
            small_table(300, 0), schema=schema, public=small_table(200, 1), seed=0
        )
        assert len(s.sample(50, seed=0)) == 50
    (p,) = s.ledger.public_inputs
    assert p["rows"] == 200 and p["privacy"] == "public input, no privacy cost"
    other = small_table(200, 1).rename(columns={"flag": "other"})
    with pytest.raises(InputError, match="public table .*column 'flag'"):
        Synthesizer("mst", epsilon=1).fit(small_table(300, 0), schema=schema, public=other)
