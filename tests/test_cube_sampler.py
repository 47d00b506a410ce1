"""BSV private sampling on the cube (privsample/cube/sampler.py; Boedihardjo, Strohmer and Vershynin 2021)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privsample.cli import main
from privsample.cube import bounds as cb
from privsample.cube.sampler import box_epsilon, BooleanCubeSampler, CertificationError, solver_margin
from privsample.cube.solver import solve
from privsample.cube.walsh import draw_reduced_space, walsh_rmatvec, well_conditioned
from privsample.cube.encoding import CubeEncoding
from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.privacy import Accountant, SeededNoise
from privsample.synth import pgm

P, D = 6, 2


def _binary(n=3000, p=P, seed=0, skew=0.3, dep=0.3):
    rng = np.random.default_rng(seed)
    x = (rng.random((n, p)) < 0.5 + skew * (rng.random(p) - 0.5)).astype(np.int64)
    x[:, 1] = np.where(rng.random(n) < dep, x[:, 0], x[:, 1])  # some dependence (0.8: lambda* > 0 below)
    dom = pgm.Domain([f"b{i}" for i in range(p)], [2] * p)
    return {f"b{i}": x[:, i] for i in range(p)}, dom, x


def _space(p=P, m=200, seed=1):
    rng = np.random.default_rng(seed)
    while True:
        S = draw_reduced_space(p, m, rng)
        if well_conditioned(S, D):
            return S


@pytest.mark.parametrize("dep", [0.3, 0.8])
def test_exact_marginals(dep):
    """Every marginal of h* of dimension <= d is (1 - lambda*) times the data's plus lambda* times
    the uniform-on-S one (to 1e-9); lambda* = 0 (regular data, dep 0.3) means the data's exactly."""
    codes, dom, x = _binary(dep=dep)
    enc = CubeEncoding.from_domain(dom)
    c_f = enc.coefficients(NumpyEngine(codes, dom), D)
    S = _space()
    sol = solve(S, c_f, D, 0.25, 4.0)
    lam = sol.lam
    assert (lam == 0.0) == (dep == 0.3)
    h = np.asarray(sol.h)
    signs = 2 * x - 1
    for i, j in itertools.combinations(range(P), 2):
        for a, b in itertools.product((-1, 1), repeat=2):
            on_s = (S[:, i] == a) & (S[:, j] == b)
            target = (1 - lam) * np.mean((signs[:, i] == a) & (signs[:, j] == b)) + lam * on_s.mean()
            assert h[on_s].sum() == pytest.approx(target, abs=1e-9)
    if lam == 0.0:
        np.testing.assert_allclose(walsh_rmatvec(S, h, D), c_f, atol=1e-9)
    assert np.all(h >= 0.25 / len(S) - 1e-12) and np.all(h <= 4.0 / len(S) + 1e-12)


def _replace_one(x, i, row):
    y = x.copy()
    y[i] = row
    return y


def test_sensitivity_smoke_neighbouring_tables():
    """For replace-one neighbours, ||h_X - h_X'||_inf <= S_inf and the per-draw privacy loss is
    within what Thm 12.2 certifies for k = 1 (huge slack expected: this cannot prove DP)."""
    codes, dom, x = _binary(n=3000)
    S = _space()
    n, m = len(x), len(S)
    enc = CubeEncoding.from_domain(dom)
    s_inf = cb.sensitivity_bound(n, P, D, m, 0.25, 4.0)
    eps1 = cb.certified_epsilon(n, P, D, m, 0.25, 4.0, 1)

    def h_of(xx):
        c = enc.coefficients(NumpyEngine({f"b{i}": xx[:, i] for i in range(P)}, dom), D)
        return np.asarray(solve(S, c, D, 0.25, 4.0).h)

    base = h_of(x)
    rng = np.random.default_rng(3)
    rare = 1 - np.round(x.mean(axis=0)).astype(np.int64)  # adversarial: the least likely pattern
    for row in [rare, rng.integers(0, 2, P), 1 - x[0]]:
        for i in (0, int(rng.integers(n))):
            other = h_of(_replace_one(x, i, row))
            assert np.abs(base - other).max() <= s_inf
            assert np.abs(np.log(base) - np.log(other)).max() <= eps1


def test_refuses_uncertified_release_and_says_what_would_be_needed():
    codes, dom, _ = _binary()
    enc = CubeEncoding.from_domain(dom)
    sampler = BooleanCubeSampler(degree=D, m=200, theorem_bound=True)
    plan = sampler.plan(enc, 3000, 1, epsilon=1.0)
    theorem = cb.certified_epsilon(3000, P, D, 200, 0.25, 4.0, 1)
    assert plan["theorem_epsilon"] == pytest.approx(theorem)
    box = box_epsilon(1, 0.25, 4.0)  # the proved bound: the release's epsilon is the smaller of the two
    assert plan["certified_epsilon"] == pytest.approx(min(box, theorem * solver_margin(3000)))
    assert solver_margin(3000) > 1 and plan["bound"] == ("box" if box <= theorem * solver_margin(3000) else "theorem")
    # required_n certifies with the margin, n - 1 does not
    need = plan["required_n"]
    cert = lambda nn: cb.certified_epsilon(nn, P, D, 200, 0.25, 4.0, 1) * solver_margin(nn)  # noqa: E731
    assert cert(need) <= 1.0 * (1 + 1e-9) and cert(need - 1) > 1.0
    assert plan["max_k"] == max(cb.max_k(3000, P, D, 200, 0.25, 4.0, 1.0 / solver_margin(3000)), int(1.0 // box))
    with pytest.raises(CertificationError, match=r"certifies only epsilon >= .* would need n >="):
        sampler.sample(NumpyEngine(codes, dom), enc, 1, Accountant(0.5), SeededNoise(0, quiet=True), epsilon=1.0)


def test_release_at_certified_epsilon_is_in_the_ledger_and_draws_follow_h():
    codes, dom, _ = _binary()
    enc = CubeEncoding.from_domain(dom)
    sampler = BooleanCubeSampler(degree=D, m=200)
    k = 4000
    eps = sampler.plan(enc, 3000, k)["certified_epsilon"] * 1.0001
    acc = Accountant(eps**2 / 2)
    rel = sampler.sample(
        NumpyEngine(codes, dom), enc, k, acc, SeededNoise(0, quiet=True), epsilon=eps, rng=np.random.default_rng(0)
    )
    entry = acc.ledger[-1]
    assert entry.details["pure_epsilon"] == pytest.approx(rel.epsilon)
    assert entry.rho == pytest.approx(rel.epsilon**2 / 2)
    assert rel.valid_fraction == 1.0  # binary columns: every point of the cube is a valid row
    # empirical one-way marginals of the draws within a Hoeffding band of the data's (lambda* = 0)
    band = math.sqrt(math.log(2 * P / 1e-6) / (2 * k))
    for c in dom.attributes:
        assert abs(rel.codes[c].mean() - codes[c].mean()) <= band + 1e-9


def test_parameter_errors():
    codes, dom, _ = _binary()
    enc = CubeEncoding.from_domain(dom)
    with pytest.raises(InputError, match="smaller than the number of Walsh features"):
        BooleanCubeSampler(degree=D, m=10).plan(enc, 3000, 1)
    wide = CubeEncoding(tuple(f"c{i}" for i in range(400)), (2,) * 400)  # p = 400, d = 3: L = 10.7 million
    with pytest.raises(InputError, match="Gram matrix alone needs"):
        BooleanCubeSampler(degree=3).plan(wide, 3000, 1)
    for lo, hi in [(0.6, 4.0), (0.25, 1.1), (0.0, 4.0)]:
        with pytest.raises(InputError):
            BooleanCubeSampler(delta=lo, Delta=hi)


def _write_binary(tmp_path, n=3000):
    _, _, x = _binary(n)
    path = tmp_path / "bin.csv"
    np.savetxt(path, x, fmt="%d", delimiter=",", header=",".join(f"b{i}" for i in range(P)), comments="")
    return path


def test_cli_refuses_with_the_certified_epsilon_and_writes_nothing(tmp_path, capsys):
    src, out = _write_binary(tmp_path), tmp_path / "out.csv"
    with pytest.raises(SystemExit) as e:
        main(["cube", "sample", str(src), "-o", str(out), "--epsilon", "1", "--k", "1", "--m", "200"])
    assert e.value.code == 2 and not out.exists()
    msg = capsys.readouterr().err
    assert "certifies only epsilon" in msg and len(msg.strip().splitlines()) == 1


def test_cli_releases_when_certified(tmp_path, capsys):
    src, out = _write_binary(tmp_path), tmp_path / "out.csv"
    eps = cb.certified_epsilon(3000, P, D, 200, 0.25, 4.0, 5) * 1.01
    main(["cube", "sample", str(src), "-o", str(out), "--epsilon", f"{eps}", "--k", "5", "--m", "200", "--seed", "1"])
    lines = out.read_text().strip().splitlines()
    assert len(lines) == 6 and lines[0] == ",".join(f"b{i}" for i in range(P))
    assert "certified" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--m", "10"], "Walsh features"),
        (["--small-delta", "0.7"], "δ"),
        (["--epsilon", "0"], "epsilon"),
    ],
)
def test_cli_bad_parameters_exit_2(tmp_path, capsys, args, needle):
    src, out = _write_binary(tmp_path), tmp_path / "out.csv"
    base = ["cube", "sample", str(src), "-o", str(out), "--epsilon", "1", "--k", "1"]
    with pytest.raises(SystemExit) as e:
        main(base + args)
    assert e.value.code == 2 and not out.exists()


def test_cli_non_binary_or_missing_without_schema_is_read_as_0_not_refused(tmp_path, capsys):
    """A value other than 0/1, or a missing one, is read as 0 per record: same exit code, same message and the
    same release (same seed) as the table with a 0 there; the rule is printed either way."""
    _, _, x = _binary(3000)
    header = ",".join(f"b{i}" for i in range(P))
    x[0, :] = 0
    rows = [",".join(map(str, r)) for r in x]
    eps = cb.certified_epsilon(3000, P, D, 200, 0.25, 4.0, 5) * solver_margin(3000) * 1.01
    results = []
    for first in ("0,0,0,0,0,0", "2,,abc,0.5,-1,0"):
        src, out = tmp_path / f"t{len(results)}.csv", tmp_path / f"o{len(results)}.csv"
        src.write_text("\n".join([header, first] + rows[1:]) + "\n")
        main(
            ["cube", "sample", str(src), "-o", str(out), "--epsilon", f"{eps}", "--k", "5", "--m", "200", "--seed", "1"]
        )
        err = capsys.readouterr().err.replace(str(out), "OUT")
        results.append((err, out.read_text()))
    assert results[0] == results[1]
    assert "any other value (missing included) is read as 0" in results[0][0]


def test_cli_bounds_prints_the_study_tables(capsys, tmp_path):
    main(["cube", "bounds", "--figure", str(tmp_path / "fig1.png")])
    text = capsys.readouterr().out
    assert "Mushroom" in text and "Table 3" in text
    assert (tmp_path / "fig1.png").stat().st_size > 1000
