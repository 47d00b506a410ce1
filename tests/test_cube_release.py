"""What ``privsample cube sample`` lets out: the draws and public parameters only (privsample/cube/sampler.py,
pipeline.py). Every test here fails if a data-dependent number (lambda*, solver residuals or iteration
counts, whether a retry happened), a value of a record, or a data-dependent refusal reaches the user."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from privsample.cli import main
from privsample.cube import bounds as cb
from privsample.cube import sampler as cube_mod
from privsample.cube import solver as cs
from privsample.cube.pipeline import load_for_cube
from privsample.cube.sampler import SOLVER_ATTEMPTS, BooleanCubeSampler, solver_margin
from privsample.cube.encoding import CubeEncoding
from privsample.data.schema import Categorical, Numeric, Schema
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm

P, D, M, N, K = 6, 2, 200, 3000, 5
PUBLIC_INFO = {
    "p",
    "d",
    "L",
    "m",
    "n",
    "k",
    "delta",
    "Delta",
    "theorem_epsilon",
    "solver_margin",
    "certified_epsilon",
    "epsilon",
    "max_k",
    "required_n",
    "neighbouring",
    "valid_fraction",
}
PUBLIC_LEDGER = {"mechanism", "measured", "private", "pure_epsilon", "neighbouring", "k", "n", "m"}


def _skewed(n=N, seed=0):
    """Strongly dependent bits: lambda* > 0 (the shrinkage is a non-trivial function of the data)."""
    rng = np.random.default_rng(seed)
    x = (rng.random((n, P)) < 0.5 + 0.3 * (rng.random(P) - 0.5)).astype(np.int64)
    x[:, 1] = np.where(rng.random(n) < 0.8, x[:, 0], x[:, 1])
    return x


def _neighbours():
    x = _skewed()
    y = x.copy()
    y[0] = 1 - np.round(x.mean(axis=0)).astype(np.int64)  # replace one record by the rarest pattern
    return x, y


def _engine(x):
    dom = pgm.Domain([f"b{i}" for i in range(P)], [2] * P)
    return NumpyEngine({f"b{i}": x[:, i] for i in range(P)}, dom), CubeEncoding.from_domain(dom)


def _eps(n=N, k=K, p=P, m=M):
    return cb.certified_epsilon(n, p, D, m, 0.25, 4.0, k) * solver_margin(n) * 1.01


def _release(x, seed=1):
    eng, enc = _engine(x)
    acc = Accountant(_eps() ** 2 / 2)
    rel = BooleanCubeSampler(degree=D, m=M).sample(
        eng, enc, K, acc, SeededNoise(seed, quiet=True), epsilon=_eps(), rng=np.random.default_rng(seed)
    )
    return rel, acc


def test_neighbours_get_the_same_info_and_ledger_although_lambda_differs(caplog):
    x, y = _neighbours()
    # the exact LP optimum differs between the neighbours on the first reduced space the sampler draws
    S, _ = BooleanCubeSampler(degree=D, m=M).reduced_space(P, M, np.random.default_rng(1))
    lams = [cs.solve(S, _engine(t)[1].coefficients(_engine(t)[0], D), D, 0.25, 4.0).lam for t in (x, y)]
    assert lams[0] > 0.01 and lams[0] != lams[1]
    with caplog.at_level(logging.DEBUG):
        (rx, ax), (ry, ay) = _release(x), _release(y)
    assert not [r for r in caplog.records if r.name.startswith("privsample")]
    assert rx.info == ry.info and set(rx.info) <= PUBLIC_INFO
    assert not hasattr(rx, "lam")
    ex, ey = ax.ledger[-1], ay.ledger[-1]
    assert ex.details == ey.details and set(ex.details) <= PUBLIC_LEDGER and ex.rho == ey.rho
    text = repr(rx.info) + repr(ex.details)
    for lam in lams:
        assert f"{lam:.3g}" not in text and f"{lam:.6f}" not in text


def _write(path, x):
    np.savetxt(path, x, fmt="%d", delimiter=",", header=",".join(f"b{i}" for i in range(P)), comments="")
    return path


def _cli(capsys, args):
    try:
        main(args)
        code = 0
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr()


def test_cli_messages_identical_for_neighbours_and_without_lambda(tmp_path, capsys):
    x, y = _neighbours()
    outs = []
    for name, t in (("x", x), ("y", y)):
        src, out = _write(tmp_path / f"{name}.csv", t), tmp_path / f"{name}_out.csv"
        code, cap = _cli(
            capsys,
            [
                "cube",
                "sample",
                str(src),
                "-o",
                str(out),
                "--epsilon",
                f"{_eps()}",
                "--k",
                str(K),
                "--m",
                str(M),
                "--seed",
                "1",
            ],
        )
        assert code == 0 and out.exists()
        outs.append((cap.out, cap.err.replace(str(out), "OUT")))
    assert outs[0] == outs[1]
    assert "λ" not in outs[0][1] and "lambda" not in outs[0][1].lower() and "residual" not in outs[0][1]


def test_solver_failure_is_silent_retried_then_uniform(monkeypatch, tmp_path, capsys):
    """A failing solve is retried on fresh reduced spaces, then falls back to the uniform density on S: no
    error, same exit code and same messages as a successful release, no solver numbers."""
    src = _write(tmp_path / "x.csv", _skewed())
    args = ["cube", "sample", str(src), "--epsilon", f"{_eps()}", "--k", str(K), "--m", str(M), "--seed", "1"]
    code_ok, ok = _cli(capsys, args[:3] + ["-o", str(tmp_path / "oka.csv")] + args[3:])
    calls = []

    def failing(*a, **kw):
        calls.append(1)
        raise cs.SolverError("the projection stopped at residual 1.234e-03 after 77 iterations")

    monkeypatch.setattr(cs, "solve", failing)
    code_bad, bad = _cli(capsys, args[:3] + ["-o", str(tmp_path / "bad.csv")] + args[3:])
    assert len(calls) == SOLVER_ATTEMPTS
    assert code_ok == code_bad == 0 and (tmp_path / "bad.csv").exists()
    assert ok.err.replace("oka.csv", "X") == bad.err.replace("bad.csv", "X")
    assert "1.234e-03" not in bad.err and "77" not in bad.err
    # the fallback density is the uniform one on the last reduced space
    eng, enc = _engine(_skewed())
    S, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    assert np.array_equal(h, np.full(M, 1.0 / M)) and S.shape == (M, P)


def test_inexact_solution_is_rejected_and_retried(monkeypatch):
    """A solution whose target is further than eta(n) from b(lambda*), or outside the box, is not sampled from."""
    real = cs.solve
    calls = []

    def sloppy(*a, **kw):
        sol = real(*a, **kw)
        calls.append(1)
        if len(calls) == 1:
            sol.residuals["target"] = 10 * cube_mod.target_slack(N)
        elif len(calls) == 2:
            sol.h = sol.h.copy()
            sol.h[0] = 0.5 * 0.25 / len(sol.h)  # below the floor delta/m
        return sol

    monkeypatch.setattr(cs, "solve", sloppy)
    eng, enc = _engine(_skewed())
    S, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    assert len(calls) == 3 and h.min() >= 0.25 / M and not np.allclose(h, 1.0 / M)


def test_margin_covers_the_accepted_slack():
    for n in (10, 3000, 10**6, 10**9):
        eta = cube_mod.target_slack(n)
        assert solver_margin(n) == pytest.approx(1 + n * eta)  # (2/n + 2 eta) / (2/n)
        assert eta >= cube_mod.TARGET_SLACK_ABS


# -- reading: per-record rules, never a refusal from a value ------------------------------------------
SCHEMA = Schema([Categorical("a", ("x", "y", "z")), Numeric("v", 0.0, 10.0, bins=2)], provenance="user")


def _schema_table(path, first):
    rng = np.random.default_rng(0)
    rows = [f"{rng.choice(['x', 'y', 'z'])},{rng.uniform(0, 10):.2f}" for _ in range(399)]
    path.write_text("\n".join(["a,v", first] + rows) + "\n")
    return path


def test_schema_values_outside_the_domain_do_not_change_exit_code_or_message(tmp_path, capsys):
    sch = tmp_path / "s.json"
    SCHEMA.save(sch)
    enc = load_for_cube(_schema_table(tmp_path / "c.csv", "x,1.0"), sch)[1]
    eps = cb.certified_epsilon(400, enc.p, D, M, 0.25, 4.0, 2) * solver_margin(400) * 1.01
    results = []
    for i, first in enumerate(["x,1.0", "nope,abc", ",", "y,1e9", "z,-inf"]):
        src, out = _schema_table(tmp_path / f"t{i}.csv", first), tmp_path / f"o{i}.csv"
        code, cap = _cli(
            capsys,
            [
                "cube",
                "sample",
                str(src),
                "-o",
                str(out),
                "-s",
                str(sch),
                "--epsilon",
                f"{eps}",
                "--k",
                "2",
                "--m",
                str(M),
                "--seed",
                "3",
            ],
        )
        assert code == 0 and out.exists()
        results.append(cap.err.replace(str(out), "OUT"))
        for value in ("nope", "abc", "1e9", "-inf", "row"):
            assert value not in cap.err
    assert all(r == results[0] for r in results)
    assert "clipped to the bounds" in results[0]


def test_schema_reading_is_total_and_per_record(tmp_path):
    src = _schema_table(tmp_path / "t.csv", "nope,abc")
    eng, enc, sch = load_for_cube(src, SCHEMA)
    assert sch["a"].other == "(other)" and sch["v"].nullable  # widened public domain, not read from the data
    assert eng.total() == 400  # no record dropped: n is unchanged
    clean = load_for_cube(_schema_table(tmp_path / "c.csv", "x,1.0"), SCHEMA)
    assert clean[1] == enc  # the encoding (p, layout) does not depend on the values


def test_no_schema_binary_rule_maps_per_record(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,0\n2,1.0\n,abc\n1,-1\n")
    eng, enc, sch = load_for_cube(src)
    assert enc.sizes == (2, 2) and eng.total() == 4
    m = eng.marginals([("a",), ("b",)])
    assert list(np.asarray(m[("a",)]).ravel()) == [2, 2] and list(np.asarray(m[("b",)]).ravel()) == [3, 1]


@pytest.mark.parametrize("provenance,needle", [("draft-nonprivate", "draft"), ("private", "reviewed public schema")])
def test_draft_and_private_schemas_are_refused(tmp_path, capsys, provenance, needle):
    sch = tmp_path / "s.json"
    Schema(SCHEMA.columns, provenance=provenance).save(sch)
    src, out = _schema_table(tmp_path / "t.csv", "x,1.0"), tmp_path / "o.csv"
    code, cap = _cli(
        capsys,
        ["cube", "sample", str(src), "-o", str(out), "-s", str(sch), "--epsilon", "1e9", "--k", "1", "--m", str(M)],
    )
    assert code == 2 and not out.exists()
    assert needle in cap.err and len(cap.err.strip().splitlines()) == 1


def test_empty_table_is_refused_n_is_public(tmp_path, capsys):
    src, out = tmp_path / "t.csv", tmp_path / "o.csv"
    src.write_text("a,b\n")
    code, cap = _cli(capsys, ["cube", "sample", str(src), "-o", str(out), "--epsilon", "1e9", "--k", "1"])
    assert code == 2 and not out.exists() and "no data rows" in cap.err
