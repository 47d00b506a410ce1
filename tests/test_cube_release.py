"""What ``privsample cube sample`` lets out: the draws and public parameters only (privsample/cube/sampler.py,
pipeline.py). Every test here fails if a data-dependent number (lambda*, solver residuals or iteration
counts, whether the solve was rejected), a value of a record, or a data-dependent refusal reaches the user, or if
a decision other than the one documented (accept or reject the solve) reads the data."""

from __future__ import annotations

import logging
import math
import warnings
from decimal import Decimal, getcontext

import re

import numpy as np
import pytest

from privsample.cli import main
from privsample.cube import bounds as cb
from privsample.cube import sampler as cube_mod
from privsample.cube import solver as cs
from privsample.cube.pipeline import load_for_cube
from privsample.cube.sampler import BooleanCubeSampler, solver_margin
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
    "box_epsilon",
    "bound",
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


def test_solver_failure_is_silent_one_solve_then_uniform_on_the_same_S(monkeypatch, tmp_path, capsys):
    """A failing solve is not retried: the draws come from the uniform density on the S a successful run would
    have used. No error, same exit code and same messages as a successful release, no solver numbers."""
    src = _write(tmp_path / "x.csv", _skewed())
    args = ["cube", "sample", str(src), "--epsilon", f"{_eps()}", "--k", str(K), "--m", str(M), "--seed", "1"]
    code_ok, ok = _cli(capsys, args[:3] + ["-o", str(tmp_path / "oka.csv")] + args[3:])
    eng, enc = _engine(_skewed())
    S_ok, h_ok = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    calls = []

    def failing(*a, **kw):
        calls.append(1)
        raise cs.SolverError("the projection stopped at residual 1.234e-03 after 77 iterations")

    monkeypatch.setattr(cs, "solve", failing)
    code_bad, bad = _cli(capsys, args[:3] + ["-o", str(tmp_path / "bad.csv")] + args[3:])
    assert len(calls) == 1
    assert code_ok == code_bad == 0 and (tmp_path / "bad.csv").exists()
    assert ok.err.replace("oka.csv", "X") == bad.err.replace("bad.csv", "X")
    # the solver's numbers, not digits of a (wrapped) temporary folder's name such as pytest-677
    assert "1.234e-03" not in bad.err and not re.search(r"(?<![\w/-])77(?!\w)", bad.err)
    S, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    assert np.array_equal(h, np.full(M, 1.0 / M)) and np.array_equal(S, S_ok) and not np.allclose(h_ok, 1.0 / M)


@pytest.mark.parametrize("flaw", ["target", "floor", "uncertified"])
def test_inexact_solution_is_rejected_for_the_uniform_density(monkeypatch, flaw):
    """A solution whose target is further than eta(n) from b(lambda*), that leaves the box, or whose lambda*
    bracket is not certified, is not sampled from; the uniform density on the same S is."""
    real = cs.solve
    calls = []

    def sloppy(*a, **kw):
        sol = real(*a, **kw)
        calls.append(1)
        if flaw == "target":
            sol.residuals["target"] = 10 * cube_mod.target_slack(N)
        elif flaw == "floor":
            sol.h = sol.h.copy()
            sol.h[0] = 0.5 * 0.25 / len(sol.h)  # below the floor delta/m
        else:
            sol.certified = False
        return sol

    eng, enc = _engine(_skewed())
    S_ok, _ = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    monkeypatch.setattr(cs, "solve", sloppy)
    S, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    assert len(calls) == 1 and np.array_equal(S, S_ok) and np.array_equal(h, np.full(M, 1.0 / M))


def test_public_decisions_do_not_read_the_data(monkeypatch):
    """S, the number of conditioning draws and the public rng's state afterwards are the same for neighbouring
    tables under one seed, even when the solve is rejected for one of them and accepted for the other (a retry on a
    fresh S, or any public decision that looked at the data, fails this); S is drawn before the records are read."""
    x, y = _neighbours()
    (ex, enc), (ey, _) = _engine(x), _engine(y)
    c_x = enc.coefficients(ex, D)
    real = cs.solve

    def reject_x(S, c_f, *a, **kw):
        if np.array_equal(c_f, c_x):
            raise cs.SolverError("rejected")
        return real(S, c_f, *a, **kw)

    monkeypatch.setattr(cs, "solve", reject_x)
    events = []
    real_space, real_coef = BooleanCubeSampler.reduced_space, CubeEncoding.coefficients

    def space(self, *a, **kw):
        out = real_space(self, *a, **kw)
        events.append(("S", out[1]))
        return out

    def coef(self, *a, **kw):
        events.append(("data", None))
        return real_coef(self, *a, **kw)

    monkeypatch.setattr(BooleanCubeSampler, "reduced_space", space)
    monkeypatch.setattr(CubeEncoding, "coefficients", coef)
    out = []
    for eng in (ex, ey):
        events.clear()
        rng = np.random.default_rng(5)
        S, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, rng)
        out.append((S, h, rng.bit_generator.state, list(events)))
    (Sx, hx, stx, evx), (Sy, hy, sty, evy) = out
    assert np.array_equal(Sx, Sy) and stx == sty and evx == evy
    assert [e[0] for e in evx] == ["S", "data"]  # S (and its redraws) before the one read of the records
    assert np.array_equal(hx, np.full(M, 1.0 / M)) and not np.allclose(hy, 1.0 / M)  # the decision did differ


def _adversarial_tables():
    rng = np.random.default_rng(7)
    same = np.ones((N, P), dtype=np.int64)  # a point mass: the largest shrinkage
    one_off = same.copy()
    one_off[0] = 0
    half = np.repeat(rng.integers(0, 2, (1, P)), N, axis=0)
    half[N // 2 :] = 1 - half[N // 2 :]  # two antipodal points
    rare = (rng.random((N, P)) < 0.02).astype(np.int64)  # nearly all-zero rows
    return [same, one_off, half, rare, _skewed(), rng.integers(0, 2, (N, P))]


def test_rejection_did_not_happen_on_adversarial_tables():
    """A measurement, not a proof (module docstring, (i)): no solve on these tables and reduced spaces was
    rejected, so on them the release was the accepted branch."""
    sampler, rejected, total = BooleanCubeSampler(degree=D, m=M), 0, 0
    for t in _adversarial_tables():
        eng, enc = _engine(t)
        c_f = enc.coefficients(eng, D)
        for seed in range(3):
            S, _ = sampler.reduced_space(P, M, np.random.default_rng(seed))
            rejected += sampler._solve(S, c_f, N) is None
            total += 1
    assert total == 18 and rejected == 0


def test_margin_covers_the_accepted_slack_and_the_sampling_slack():
    for n in (10, 3000, 10**6, 10**9):
        eta = cube_mod.target_slack(n)
        extra = cube_mod.SAMPLING_SLACK * math.sqrt(n) / cube_mod.EPS1_FLOOR
        assert solver_margin(n) == pytest.approx(1 + n * eta + extra, rel=1e-15)  # (2/n + 2 eta) / (2/n), plus
        assert eta >= cube_mod.TARGET_SLACK_ABS and extra > 0
    # the per-draw certified epsilon is >= EPS1_FLOOR / sqrt(n) at the smallest admissible parameters
    for n in (1, 3000, 10**9):
        eps1 = cb.certified_epsilon(n, 1, 1, 2, 0.5, 1.5, 1)
        assert eps1 * math.sqrt(n) >= cube_mod.EPS1_FLOOR


def test_sampling_scores_are_within_the_slack():
    """The scores passed to the noisy max are within SAMPLING_SLACK / 4 of log(h / max h), for a solved h and for
    values at the extremes of the float range (a box with Delta / delta near the largest float)."""
    getcontext().prec = 50
    eng, enc = _engine(_skewed())
    _, h = BooleanCubeSampler(degree=D, m=M).density(eng, enc, M, np.random.default_rng(0))
    extreme = np.array([2.3e-308, 1e-200, 0.5, 1.7e308, 3.3e-7])
    for v in (h, extreme):
        s = cube_mod.sampling_scores(v)
        top = Decimal(float(v.max()))
        err = max(abs(Decimal(float(si)) - (Decimal(float(vi)) / top).ln()) for si, vi in zip(s, v))
        assert float(err) <= cube_mod.SAMPLING_SLACK / 4
    assert 0 < cube_mod.conditioning_allowance(56, 2) < 1e-6  # public, negligible next to the test's 1


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


# -- the box bound: proved, on every branch ----------------------------------------------------------------------
def _draw_probabilities(h: np.ndarray) -> np.ndarray:
    """The exact probabilities of one draw from the scores the sampler uses (softmax of log h - log max h)."""
    from privsample.cube.sampler import sampling_scores

    s = sampling_scores(h)
    w = np.exp(s - s.max())
    return w / w.sum()


def test_box_bound_holds_for_any_two_densities_in_the_box():
    """One draw from any density in [delta/m, Delta/m] that sums to 1 (an accepted solve, or the uniform of a
    rejected one) has probabilities within exp(box_epsilon(1)) of any other's: the extreme pair reaches
    Delta/delta, so a bound of ln(Delta) or of ln(Delta/delta)/2 would fail here."""
    from privsample.cube.sampler import NORM_SLACK, accept_solution, box_epsilon

    m, delta, Delta = 8, 0.25, 4.0
    hi = np.full(m, (1 - Delta / m) / (m - 1))
    hi[0] = Delta / m  # as much mass as the box allows on point 0
    lo = np.full(m, (1 - delta / m) / (m - 1))
    lo[0] = delta / m  # as little
    uniform = np.full(m, 1.0 / m)
    for h in (hi, lo):
        assert h.min() >= delta / m and h.max() <= Delta / m and abs(h.sum() - 1) <= NORM_SLACK
    bound = math.exp(box_epsilon(1, delta, Delta))
    worst = 1.0
    for a in (hi, lo, uniform):
        for b in (hi, lo, uniform):
            worst = max(worst, float(np.max(_draw_probabilities(a) / _draw_probabilities(b))))
    assert worst <= bound and worst > 0.999 * Delta / delta  # tight: the bound cannot be smaller
    assert box_epsilon(5, delta, Delta) == pytest.approx(5 * math.log(Delta / delta))

    class Sol:  # an accepted solve must also sum to 1 (what the bound needs)
        certified = True
        residuals = {"target": 0.0}

    Sol.h = hi * (1 + 10 * NORM_SLACK)
    assert not accept_solution(Sol, m, 100, delta, Delta)
    Sol.h = hi
    assert accept_solution(Sol, m, 100, delta, Delta)


def test_the_release_epsilon_is_the_smaller_bound_and_says_which():
    """The plan charges min(box, theorem x margin); with few records the box bound (proved) is the smaller one,
    and the guarantee names it; an epsilon below both is refused."""
    import pandas as pd

    from privsample import cube_sample
    from privsample.cube.sampler import CertificationError, box_epsilon

    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.integers(0, 2, size=(300, 3)), columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded: NOT private
        rel = cube_sample(df, epsilon=20, k=3, degree=1, seed=1)
        assert rel.ledger.entries[-1]["details"]["pure_epsilon"] == pytest.approx(box_epsilon(3, 0.25, 4.0))
        assert "proved" in rel.guarantee
        with pytest.raises(CertificationError):
            cube_sample(df, epsilon=box_epsilon(3, 0.25, 4.0) * 0.99, k=3, degree=1, seed=1)
