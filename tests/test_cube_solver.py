"""Walsh products and the lambda*/h* solvers (privsample/cube/walsh.py, lp.py, qp.py, solver.py;
Pierquin et al. 2023's LP and QP). Fast: small p and m, dense references (HiGHS, quadprog)."""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest

from privsample.cube import lp, qp, solver
from privsample.cube.walsh import (
    conditioning_margin,
    draw_reduced_space,
    gram_free,
    point_coefficients,
    walsh_features,
    walsh_gram,
    walsh_matvec,
    walsh_rmatvec,
    walsh_size,
    walsh_subsets,
    well_conditioned,
)
from privsample.errors import InputError

DELTA, BIG_DELTA = 0.25, 4.0


def _explicit(S: np.ndarray, d: int) -> np.ndarray:
    """M (m x L) by brute force from the definition w_J(x) = prod_{j in J} x_j."""
    subs = walsh_subsets(S.shape[1], d)
    return np.array([[np.prod(s[list(J)]) if J else 1 for J in subs] for s in S.astype(np.int64)], dtype=float)


def _skewed(p: int, n: int, seed: int, flip: float = 0.2) -> np.ndarray:
    """Data concentrated near 3 prototype points (each bit flipped with probability ``flip``): lambda* > 0."""
    rng = np.random.default_rng(seed)
    protos = rng.integers(0, 2, (3, p)) * 2 - 1
    comp = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    return (protos[comp] * np.where(rng.random((n, p)) < flip, -1, 1)).astype(np.int8)


def _mild(p: int, n: int, seed: int) -> np.ndarray:
    """Nearly uniform data (independent bits, P(+1) in [0.45, 0.55]): lambda* = 0 for m >> L."""
    rng = np.random.default_rng(seed)
    pr = rng.uniform(0.45, 0.55, p)
    return np.where(rng.random((n, p)) < pr, 1, -1).astype(np.int8)


def _space(p: int, m: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    while True:
        S = draw_reduced_space(p, m, rng)
        if well_conditioned(S, d):
            return S


# ---------------------------------------------------------------------------------------------------
# Walsh features
# ---------------------------------------------------------------------------------------------------
def test_subsets_order_and_size():
    assert walsh_subsets(3, 2) == [(), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    assert walsh_subsets(4, 3)[-4:] == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    for p, d in [(1, 1), (5, 0), (7, 2), (30, 2), (9, 3), (4, 9)]:
        assert walsh_size(p, d) == len(walsh_subsets(p, d)) == sum(math.comb(p, t) for t in range(min(p, d) + 1))
    assert walsh_size(30, 2) == 1 + 30 * 31 // 2 == 466


@pytest.mark.parametrize("p,d", [(5, 1), (6, 2), (7, 3), (4, 4)])
def test_matrix_free_products_match_the_explicit_matrix(p, d):
    rng = np.random.default_rng(p + 10 * d)
    S = draw_reduced_space(p, 97, rng)
    M = _explicit(S, d)
    h, y = rng.standard_normal(97), rng.standard_normal(M.shape[1])
    np.testing.assert_allclose(walsh_rmatvec(S, h, d), M.T @ h, rtol=0, atol=1e-12)
    np.testing.assert_allclose(walsh_matvec(S, y, d), M @ y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(point_coefficients(S, d), M.mean(axis=0), rtol=0, atol=1e-15)
    assert np.array_equal(walsh_features(S, d), M)
    assert np.array_equal(walsh_gram(S, d), M.T @ M)
    mask = rng.random(97) < 0.4
    k = rng.integers(1, 5, 97)
    assert np.array_equal(gram_free(S, mask, d), M[mask].T @ M[mask])
    assert np.array_equal(gram_free(S, np.flatnonzero(mask), d, k), (M[mask] * k[mask, None]).T @ M[mask])


def test_gram_is_close_to_m_identity_for_random_points():
    """M^T M / m ~ I for i.i.d. uniform S: diagonal exactly 1, off-diagonal O(1/sqrt m)."""
    m = 20000
    S = draw_reduced_space(8, m, np.random.default_rng(0))
    G = walsh_gram(S, 2) / m
    assert np.all(np.diag(G) == 1.0)
    assert np.abs(G - np.eye(len(G))).max() < 6 / math.sqrt(m)


def test_conditioning_test():
    rng = np.random.default_rng(1)
    p, d = 8, 2
    L = walsh_size(p, d)
    assert not well_conditioned(draw_reduced_space(p, L - 1, rng), d)  # m < L: sigma_L = 0
    assert conditioning_margin(draw_reduced_space(p, L - 1, rng), d) == 0.0
    S = draw_reduced_space(p, 4 * L, rng)
    lam_min = np.linalg.svd(_explicit(S, d), compute_uv=False)[-1] ** 2
    assert conditioning_margin(S, d) == pytest.approx(lam_min / (4 * L / (4 * math.exp(4))), rel=1e-9)
    assert well_conditioned(S, d) == (math.sqrt(lam_min) >= math.sqrt(4 * L) / (2 * math.e**2))


def test_reduced_space_is_uniform_signs_and_reproducible():
    S = draw_reduced_space(12, 5000, np.random.default_rng(7))
    assert S.dtype == np.int8 and S.shape == (5000, 12) and set(np.unique(S)) == {-1, 1}
    assert abs(S.mean()) < 0.02
    assert np.array_equal(S, draw_reduced_space(12, 5000, np.random.default_rng(7)))


# ---------------------------------------------------------------------------------------------------
# lambda* and h* against the dense references
# ---------------------------------------------------------------------------------------------------
CASES = [  # p, d, m, data, lambda* > 0 expected
    (10, 2, 300, "skewed", True),
    (12, 2, 400, "mild", False),
    (8, 1, 60, "skewed", True),
    (7, 3, 240, "skewed", True),
    (5, 2, 150, "skewed", True),  # 2^5 = 32 < m: many duplicate points (merged into weighted atoms)
    (10, 1, 800, "skewed", True),  # n > 30 L: exercises the restricted LP (sifting)
]


def _case(p, d, m, kind):
    X = (_skewed if kind == "skewed" else _mild)(p, 4000, seed=p + m)
    return point_coefficients(X, d), _space(p, m, d, seed=m)


@pytest.mark.parametrize("p,d,m,kind,positive", CASES)
def test_lambda_matches_highs(p, d, m, kind, positive):
    c_f, S = _case(p, d, m, kind)
    lr = lp.solve_lambda(S, c_f, d, DELTA, BIG_DELTA, fallback=False)
    assert lr.certified and lr.method != "highs-fallback"
    ref = lp.reference_lambda(S, c_f, d, DELTA, BIG_DELTA)
    assert (lr.lam_star > 1e-3) == positive
    assert abs(lr.lam_star - ref) <= 1e-9 and lr.lam_lower <= lr.lam_star
    assert (lr.lam_used == 0.0) if not positive else (lr.lam_used == pytest.approx(ref + lp.DEFAULT_TAU, abs=1e-9))


@pytest.mark.parametrize("p,d,m,kind,positive", CASES)
def test_h_matches_quadprog(p, d, m, kind, positive):
    pytest.importorskip("quadprog", reason="reference QP solver (test dependency)")
    c_f, S = _case(p, d, m, kind)
    sol = solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    assert sol.method != "highs-fallback" and sol.certified
    assert sol.lam == lp.solve_lambda(S, c_f, d, DELTA, BIG_DELTA).lam_used
    h_ref = qp.reference_h(S, c_f, d, DELTA, BIG_DELTA, sol.lam)
    assert np.abs(m * sol.h - m * h_ref).max() <= 1e-9
    b = (1 - sol.lam) * c_f + sol.lam * point_coefficients(S, d)
    res = qp.check_box(S, b, d, sol.h, DELTA, BIG_DELTA)
    assert res["equality"] <= 1e-10 and res["box"] <= 1e-12
    assert sol.residuals["equality"] <= 1e-10 and abs(sol.h.sum() - 1) <= 1e-12


def test_kkt_and_monotonicity_with_positive_lambda():
    """h* = clip(u + A^T y, delta/m, Delta/m) and A h* = b; the LP is infeasible at lambda* - 1e-6
    and feasible at lambda_used (monotonicity)."""
    p, d, m = 10, 2, 300
    X = _skewed(p, 4000, seed=1)
    c_f = point_coefficients(X, d)
    S = _space(p, m, d, seed=2)
    sol = solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    assert 0.05 < sol.lam < 1
    h_kkt = np.clip(1 / m + walsh_matvec(S, sol.y / m, d), DELTA / m, BIG_DELTA / m)
    assert np.abs(m * (sol.h - h_kkt)).max() <= 1e-12
    assert not lp.reference_feasible(S, c_f, d, DELTA, BIG_DELTA, sol.lam_star - 1e-6)
    assert lp.reference_feasible(S, c_f, d, DELTA, BIG_DELTA, sol.lam)
    assert sol.lam_star - sol.lam_lower <= 1e-12
    # projection at lambda = 0 onto the LP box is infeasible: a Farkas vector certifies it
    b0 = c_f
    r = qp.project_box(S, b0, d, 2 * DELTA, BIG_DELTA - DELTA, on_infeasible="certificate")
    assert r.status == "infeasible"
    z = walsh_matvec(S, r.certificate, d)
    assert m * b0 @ r.certificate > np.maximum(2 * DELTA * z, (BIG_DELTA - DELTA) * z).sum()


def test_exact_marginals_through_the_coefficient_identity():
    """For every |J| <= d and theta, M_{J,theta}(h*) = (1 - lam) M_{J,theta}(f_n) + lam M_{J,theta}(u_m),
    and both sides agree with 2^-t sum_{I subset J} theta^I c_I."""
    p, d, m = 9, 2, 260
    X = _skewed(p, 3000, seed=5, flip=0.3)
    c_f = point_coefficients(X, d)
    S = _space(p, m, d, seed=6)
    sol = solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    lam = sol.lam
    index = {J: k for k, J in enumerate(walsh_subsets(p, d))}
    b = (1 - lam) * c_f + lam * point_coefficients(S, d)
    for t in range(d + 1):
        for J in itertools.combinations(range(p), t):
            for theta in itertools.product((-1, 1), repeat=t):
                at = np.all(S[:, list(J)] == theta, axis=1) if t else np.ones(m, bool)
                model = sol.h[at].sum()
                data = np.all(X[:, list(J)] == theta, axis=1).mean() if t else 1.0
                target = (1 - lam) * data + lam * at.mean()
                ident = (
                    sum(
                        np.prod([theta[J.index(i)] for i in I]) * b[index[I]]
                        for s in range(t + 1)
                        for I in itertools.combinations(J, s)
                    )
                    / 2**t
                )
                assert model == pytest.approx(target, rel=1e-9, abs=1e-12)
                assert ident == pytest.approx(target, rel=1e-9, abs=1e-12)


def test_lambda_zero_gives_the_data_marginals_exactly():
    p, d, m = 12, 2, 400
    X = _mild(p, 4000, seed=3)
    c_f = point_coefficients(X, d)
    S = _space(p, m, d, seed=4)
    sol = solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    assert sol.lam == 0.0 and sol.method == "lambda=0"
    np.testing.assert_allclose(walsh_rmatvec(S, sol.h, d), c_f, rtol=0, atol=1e-12)
    for i, j in itertools.combinations(range(p), 2):
        for a, c in itertools.product((-1, 1), repeat=2):
            data = np.mean((X[:, i] == a) & (X[:, j] == c))
            assert sol.h[(S[:, i] == a) & (S[:, j] == c)].sum() == pytest.approx(data, abs=1e-12)
    assert sol.h.min() >= DELTA / m and sol.h.max() <= BIG_DELTA / m  # exactly, after renormalising


# ---------------------------------------------------------------------------------------------------
# the projection on its own, errors
# ---------------------------------------------------------------------------------------------------
def test_project_box_matches_quadprog_and_reports_infeasibility():
    p, d, m = 8, 2, 180
    S = _space(p, m, d, seed=9)
    X = _skewed(p, 2000, seed=9, flip=0.3)
    c_f = point_coefficients(X, d)
    lam = lp.solve_lambda(S, c_f, d, DELTA, BIG_DELTA).lam_used
    b = (1 - lam) * c_f + lam * point_coefficients(S, d)
    res = qp.project_box(S, b, d, DELTA, BIG_DELTA)
    assert res.status == "optimal" and res.residual <= 1e-12
    if importlib.util.find_spec("quadprog") is not None:
        np.testing.assert_allclose(res.g, m * qp.reference_h(S, c_f, d, DELTA, BIG_DELTA, lam), rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.g, np.clip(1 + walsh_matvec(S, res.y, d), DELTA, BIG_DELTA), rtol=0, atol=1e-12)
    bad = b.copy()
    bad[1] = 1.5  # |c_J| <= c_empty for any density: no g >= 0 has this
    with pytest.raises(qp.InfeasibleError) as e:
        qp.project_box(S, bad, d, DELTA, BIG_DELTA)
    assert isinstance(e.value, InputError)
    assert "iteration" not in str(e.value)  # no solver numbers in messages
    y = e.value.certificate
    z = walsh_matvec(S, y, d)
    assert m * bad @ y > np.maximum(DELTA * z, BIG_DELTA * z).sum()


def test_input_errors():
    p, d = 6, 2
    L = walsh_size(p, d)
    S_small = draw_reduced_space(p, L - 1, np.random.default_rng(0))
    c = np.zeros(L)
    c[0] = 1.0
    with pytest.raises(InputError, match="rank deficient"):
        solver.solve(S_small, c, d, DELTA, BIG_DELTA)
    S = _space(p, 4 * L, d, seed=0)
    with pytest.raises(InputError, match="length L"):
        solver.solve(S, c[:-1], d, DELTA, BIG_DELTA)
    with pytest.raises(InputError, match="2 delta <= 1"):
        solver.solve(S, c, d, 0.6, BIG_DELTA)
    with pytest.raises(InputError, match="total mass"):
        solver.solve(S, 2 * c, d, DELTA, BIG_DELTA)
    with pytest.raises(InputError):
        walsh_rmatvec(np.full((3, 2), 2), np.ones(3), 1)
    sol = solver.solve(S, c, d, DELTA, BIG_DELTA)  # c_f = coefficients of the uniform density on the cube
    assert sol.lam == 0.0


# ---------------------------------------------------------------------------------------------------
# exactness of the box, and nothing data-dependent in messages or logs
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "g",
    [
        [0.25] * 9 + [4.0],  # total mass 6.25 m / 10: the normalised ceiling is violated
        [0.25] + [1.1] * 9,  # total mass above m: the normalised floor is violated
        [0.2, 5.0] + [1.0] * 8,  # outside the box before normalising
        [1.0] * 10,
    ],
)
def test_exact_box_holds_the_floor_and_ceiling_exactly(g):
    m = len(g)
    h = qp.exact_box(np.array(g), DELTA, BIG_DELTA)
    assert h.shape == (m,) and abs(h.sum() - 1) <= 1e-12
    assert h.min() >= DELTA / m and h.max() <= BIG_DELTA / m


def test_solver_logs_nothing_and_failure_messages_are_generic(caplog, monkeypatch):
    import logging

    p, d, m = 8, 2, 180
    S = _space(p, m, d, seed=9)
    c_f = point_coefficients(_skewed(p, 2000, seed=9, flip=0.3), d)
    with caplog.at_level(logging.DEBUG):
        sol = solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    assert sol.lam > 0.05
    assert not [r for r in caplog.records if r.name.startswith("privsample")]
    assert sol.residuals["target"] <= 2 * lp.DEFAULT_TAU + 1e-10 and sol.h.min() >= DELTA / m
    real = solver.project_dual

    def stalled(*args, **kw):  # the QP projection (max_iter=100) stops short of its tolerance
        st = real(*args, **kw)
        if kw.get("max_iter") == 100:
            st.res_n, st.iterations = 1.234e-3, 77
        return st

    monkeypatch.setattr(solver, "project_dual", stalled)
    with pytest.raises(solver.SolverError) as e:
        solver.solve(S, c_f, d, DELTA, BIG_DELTA)
    msg = str(e.value)
    assert "1.2e-03" not in msg and "77" not in msg and "residual" not in msg
