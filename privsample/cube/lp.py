"""The LP of noise-free private sampling on the Boolean cube: lambda* (step 4 of Boedihardjo, Strohmer and
Vershynin's (2021) Algorithm 1; Pierquin et al.'s (2023) LP), at scale, in
the geometric form t* = max{t : t r in A [l, u]^m}, lambda* = 1 - t*. Notation and scaling:
:mod:`privsample.cube.solver`; the dual Newton steps are those of the QP (:mod:`privsample.cube.qp`).

(A) lambda = 0 is tested first by projecting onto the LP box (converges iff feasible; a Farkas vector
    proves t* < 1).
(B) Otherwise the exactly regularised LP min ||v||^2/2 - kappa t s.t. A v = t r, v in box, is followed
    along increasing kappa: its dual is the projection dual restricted to r^T y = kappa (tangent
    predictor; Newton corrector on the bordered system [[A_I A_I^T, r], [r^T, 0]], solved by Cholesky in
    the complement of r). Its free set shrinks towards the L - 1 basic atoms of an optimal vertex.
(C) A *crossover* at every stage takes the free atoms as a basis and solves the square systems for the
    vertex (v_F, t) and the dual y (A_F^T y = 0, r^T y = 1). Once at most 1.05 L atoms are free, a
    bounded *dual simplex* with a bound-flipping ratio test and dual steepest-edge pricing starts from
    the basis the path points to (dual feasible by construction) and finishes at the optimal vertex. The crossover
    and the dual simplex are :mod:`privsample.cube.vertex`'s.
(D) For large m ("sifting"): once the free set is small, the LP is solved on the atoms nearest the box only
    (the others fixed at their bounds; its cost no longer depends on m), its dual is checked on all m atoms,
    and atoms whose bound it contradicts are added.

Every lower bound on t is backed by a feasible point (residual <= tol) and every upper bound by a dual
vector y (weak duality: t <= sigma(A^T y) / r^T y), so the returned bracket [lam_lower, lam_star] is
certified up to floating-point round-off; it closes to ~1e-15 in practice. lambda_used = min(1, lam_star
+ tau) is feasible by monotonicity. If a small problem is not certified, HiGHS is
used instead (``fallback``); a large one returns the bracket. :func:`reference_lambda` (HiGHS on Pierquin
et al.'s LP) builds the dense matrix: for tests and benchmarks at small m only.

Everything computed here from the data's coefficients (lambda*, the bracket, iteration counts, times) is a
function of the data: nothing here logs or prints it, and error messages are generic.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.cube.qp import (
    FreeGram,
    NewtonState,
    WalshOperator,
    check_coefficients,
    dual_newton,
    newton_mu,
    project_dual,
    solve_newton_system,
)
from privsample.cube.vertex import basis_from_path, crossover, dual_bound, dual_simplex
from privsample.cube.walsh import as_signs, point_coefficients, walsh_features, walsh_size
from privsample.errors import InputError

__all__ = [
    "DEFAULT_TAU",
    "LambdaResult",
    "check_inputs",
    "lambda_bracket",
    "reference_feasible",
    "reference_lambda",
    "solve_lambda",
]

DEFAULT_TAU = 1e-9
_FALLBACK_MAX_ENTRIES = 3e7  # dense LP size (atoms x L) up to which HiGHS may stand in for the path
_SIMPLEX_AT = 1.05  # the dual simplex finish starts once at most 1.05 L atoms are free on the path


@dataclass
class LambdaResult:
    """:func:`solve_lambda`'s answer. lambda* lies in [lam_lower, lam_star]; lam_star is feasible."""

    lam_star: float  # feasible (primal point found), = lambda* up to the certified gap
    lam_lower: float  # certified lower bound (a dual vector proves lambda < lam_lower infeasible)
    lam_used: float  # min(1, lam_star + tau); 0.0 exactly when lambda = 0 is feasible
    certified: bool  # lam_star - lam_lower <= tolerance
    method: str  # "lambda=0" | "path" | "path+crossover" | "path+dual simplex" | "path+sifting"
    #                               | "highs-fallback"
    iterations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    y: np.ndarray | None = None  # dual direction of the LP (r^T y = 1), when lambda* > 0


# ---------------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------------
def _check_params(delta: float, Delta: float) -> tuple[float, float]:
    de, De = float(delta), float(Delta)
    if not (de > 0 and De > de):
        raise InputError(f"need 0 < delta < Delta, got delta={delta}, Delta={Delta}")
    if not (2 * de <= 1.0 <= De - de):
        raise InputError(
            f"need 2 delta <= 1 <= Delta - delta so that lambda = 1 is feasible, got delta={delta}, Delta={Delta}"
        )
    return de, De


# ---------------------------------------------------------------------------------------------------
# public: lambda*
# ---------------------------------------------------------------------------------------------------
@dataclass
class _LP:
    t_lo: float = 0.0  # backed by v_lo (feasible up to the residual tolerance)
    t_hi: float = math.inf  # backed by y_hi (dual bound)
    v_lo: np.ndarray | None = None
    y_hi: np.ndarray | None = None
    method: str = "path"

    def lower(self, t: float, v: np.ndarray | None) -> None:
        if t > self.t_lo:
            self.t_lo, self.v_lo = t, v

    def upper(self, t: float, y: np.ndarray) -> None:
        if t < self.t_hi:
            self.t_hi, self.y_hi = t, y


def _take_crossover(op: WalshOperator, r, q, z: np.ndarray, l: float, u: float, tol: float, out: _LP) -> None:
    """Bounds from the crossover at the path point z (:func:`privsample.cube.vertex.crossover`) into ``out``."""
    cx = crossover(op, r, q, z, l, u, tol)
    if cx is not None:
        out.upper(cx["t_hi"], cx["y"])
        if "t_lo" in cx and cx["t_lo"] > out.t_lo:
            out.lower(cx["t_lo"], cx["v"])
            out.method = "path+crossover"


def _take_dual_simplex(op: WalshOperator, r, q, l: float, u: float, F, tol: float, stats, out: _LP) -> None:
    """Bounds from the dual simplex started at the basis F (:func:`privsample.cube.vertex.dual_simplex`)."""
    ds = dual_simplex(op, r, q, l, u, F, tol=tol, max_pivots=max(2 * op.L, 200), stats=stats)
    if ds is not None:
        out.upper(ds["t_hi"], ds["y"])
        if "t_lo" in ds:
            out.lower(ds["t_lo"], ds["v"])
            if out.t_hi - out.t_lo <= tol:
                out.method = "path+dual simplex"


def _lp_path(
    op: WalshOperator,
    r: np.ndarray,
    q: np.ndarray | None,
    l: float,
    u: float,
    y: np.ndarray,
    z: np.ndarray,
    *,
    tol: float,
    max_stages: int,
    stats: dict[str, Any],
    sift: bool,
    depth: int = 0,
) -> _LP:
    """max t s.t. A v = q + t r, v in [l, u]^n (t = 1 - lambda; q = None means 0), by the path in
    kappa = r^T y of the exactly regularised LP min ||v||^2/2 - kappa t (Newton corrector on the bordered
    system, tangent predictor), a crossover at every stage and, when the free set is small (``sift``),
    the LP restricted to the atoms nearest the box, verified on all atoms (module docstring)."""
    fg = FreeGram(op)
    out = _LP()
    kappa = float(r @ y)
    if kappa <= 0:
        y = y + ((1.0 - kappa) / float(r @ r)) * r
        z = op.matvec(y)
    out.upper(dual_bound(op, r, q, y, z, l, u), y)
    if q is None:
        out.lower(0.0, np.zeros(op.n))  # v = 0 is feasible for t = 0
    gamma, stages, base_its = 4.0, 0, 0
    pst = NewtonState(y=y, z=z)
    L = op.L
    simplex_at = _SIMPLEX_AT * L  # free-set size at which the dual simplex finish is tried
    for stages in range(1, max_stages + 1):
        pst = dual_newton(op, fg, pst, l, u, q=q, r=r, tol=tol, max_iter=30)
        its, base_its = pst.iterations - base_its, pst.iterations
        if pst.status == "optimal":
            out.lower(pst.t, None)
        out.upper(dual_bound(op, r, q, pst.y, pst.z, l, u), pst.y)
        free = (pst.z > l) & (pst.z < u)
        n_free = int(free.sum())
        if n_free <= L - 1:
            _take_crossover(op, r, q, pst.z, l, u, tol, out)
        if out.t_lo >= 1.0 or out.t_hi - out.t_lo <= tol:
            break
        if sift and pst.status == "optimal" and n_free <= min(20.0, max(4.0, op.n / (40.0 * L))) * L and op.n > 30 * L:
            if _sift(op, r, l, u, pst, out, tol=tol, stats=stats, depth=depth):
                out.method = "path+sifting"
                break
            sift = False  # did not certify: go on along the full path
        # tangent of the path at the current active set: [[G_I, r], [r^T, 0]] (ydot, nu) = (0, 1)
        G = fg.get(free)
        ydot = solve_newton_system(G, newton_mu(op, pst.res_n) * 1e-3, np.zeros(L), r, 1.0)
        ydot /= float(r @ ydot)
        zdot = op.matvec(ydot)
        out.upper(dual_bound(op, r, q, ydot, zdot, l, u), ydot)
        if out.t_hi - out.t_lo > tol and n_free <= simplex_at and op.n >= L:
            # finish with the dual simplex from the basis the path points to
            simplex_at = min(simplex_at, n_free) - max(1, L // 10)
            _take_dual_simplex(op, r, q, l, u, basis_from_path(pst.z, zdot, l, u, L), tol, stats, out)
        if out.t_hi - out.t_lo <= tol:
            break
        gamma = min(100.0, gamma * 2.0) if its <= 3 else (max(1.5, gamma / 2.0) if its > 8 else gamma)
        dk = (gamma - 1.0) * float(r @ pst.y)
        pst.y = pst.y + dk * ydot
        pst.z = pst.z + dk * zdot
    stats[f"path_stages{depth or ''}"] = stats.get(f"path_stages{depth or ''}", 0) + stages
    stats[f"path_iterations{depth or ''}"] = stats.get(f"path_iterations{depth or ''}", 0) + pst.iterations
    return out


def _sift(
    op: WalshOperator,
    r: np.ndarray,
    l: float,
    u: float,
    pst: NewtonState,
    out: _LP,
    *,
    tol: float,
    stats: dict[str, Any],
    depth: int,
    rounds: int = 4,
) -> bool:
    """Solve the LP on the atoms C nearest the box (the rest fixed at their current bounds), verify its
    dual on all atoms, add the atoms whose bound it contradicts, repeat. True when certified."""
    L = op.L
    z = pst.z
    dist = np.maximum(np.maximum(l - z, z - u), 0.0)
    k0 = min(op.n, max(10 * L, 3 * int((dist == 0).sum())))
    C = np.sort(np.argpartition(dist, k0 - 1)[:k0])
    for rnd in range(rounds):
        stats["sift_rounds"] = stats.get("sift_rounds", 0) + 1
        inC = np.zeros(op.n, bool)
        inC[C] = True
        v_fix = np.where(inC, 0.0, np.clip(z, l, u))
        q_sub = -op.rmatvec(v_fix)
        sub = op.restrict(C)
        res = _lp_path(
            sub, r, q_sub, l, u, pst.y, z[C], tol=tol, max_stages=80, stats=stats, sift=False, depth=depth + 1
        )
        if res.v_lo is not None:
            v = v_fix.copy()
            v[C] = res.v_lo
            out.lower(res.t_lo, v)
        else:
            out.lower(res.t_lo, None)  # a path point of the restricted LP: feasible to the residual tolerance
        if res.y_hi is None:
            return False
        zy = op.matvec(res.y_hi)
        out.upper(dual_bound(op, r, None, res.y_hi, zy, l, u), res.y_hi)
        if out.t_hi - out.t_lo <= tol:
            return True
        # atoms outside C whose fixed bound contradicts the restricted dual's sign
        wrong = ~inC & (((v_fix >= u) & (zy < 0)) | ((v_fix <= l) & (zy > 0)))
        if not wrong.any():
            return False
        C = np.union1d(C, np.flatnonzero(wrong))
    return False


def lambda_bracket(
    op: WalshOperator,
    c_f: np.ndarray,
    c_u: np.ndarray,
    delta: float,
    Delta: float,
    *,
    tol: float,
    max_stages: int,
    fallback: bool,
    stats: dict[str, Any],
) -> tuple[float, float, str, np.ndarray | None]:
    """(t_lo, t_hi, method, y) with t* in [t_lo, t_hi] (t = 1 - lambda); t_lo backed by a feasible point."""
    m = op.m
    l, u = 2.0 * delta - 1.0, Delta - delta - 1.0
    r = m * (c_f - c_u)
    if float(np.abs(r).max()) <= 1e-13 * m:
        return 1.0, 1.0, "lambda=0", None  # c_f = c_u: g = 1 is feasible
    # (A) is lambda = 0 feasible? project 0 onto {A v = r, v in LP box}; a Farkas vector proves t* < 1.
    st = project_dual(op, r, l, u, y0=None, tol=tol, max_iter=40, farkas=True)
    stats["phase_a_iterations"] = st.iterations
    if st.status == "optimal":
        return 1.0, 1.0, "lambda=0", None
    # (B) the path (with crossover and sifting) from the projection's last dual iterate.
    res = _lp_path(op, r, None, l, u, st.y, st.z, tol=tol, max_stages=max_stages, stats=stats, sift=True)
    if st.status == "infeasible":
        yc = st.certificate
        res.upper(dual_bound(op, r, None, yc, op.matvec(yc), l, u), yc)
    t_lo, t_hi, method = res.t_lo, res.t_hi, res.method
    if t_lo >= 1.0:
        return 1.0, 1.0, "lambda=0", None
    if t_hi - t_lo > tol and fallback and op.n * op.L <= _FALLBACK_MAX_ENTRIES:
        lam_ref = _highs_lambda(op.S, op.k, c_f, op.d, delta, Delta, c_u=c_u)
        if lam_ref is not None:
            return 1.0 - lam_ref, 1.0 - lam_ref, "highs-fallback", res.y_hi
    return t_lo, max(min(t_hi, 1.0), t_lo), method, res.y_hi


def check_inputs(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float):
    """Validated (S as signs, m, L, delta, Delta, c_f) shared by :func:`solve_lambda` and
    :func:`privsample.cube.solver.solve`."""
    S = as_signs(S)
    m, p = S.shape
    L = walsh_size(p, d)
    delta, Delta = _check_params(delta, Delta)
    c_f = check_coefficients(c_f, L, "c_f")
    if m < L:
        raise InputError(
            f"m = {m} < L = {L}: the Walsh matrix of S is rank deficient and S fails the conditioning test; use m >= 2L"
        )
    return S, m, L, delta, Delta, c_f


def solve_lambda(
    S: np.ndarray,
    c_f: np.ndarray,
    d: int,
    delta: float,
    Delta: float,
    *,
    tau: float = DEFAULT_TAU,
    tol: float = 1e-12,
    max_stages: int = 60,
    fallback: bool = True,
    gram: np.ndarray | None = None,
) -> LambdaResult:
    """lambda* of BSV Algorithm 1 step 4 / Pierquin et al.'s LP, at scale.

    lambda = 0 is tested first (a projection onto the LP box [2 delta, Delta - delta] in g = m h; common for
    regular data). Otherwise: geometric form lambda* = 1 - t*, t* = max{t : c_u + t (c_f - c_u) in A box / m},
    by the exactly regularised LP path, crossover, dual simplex and sifting (module docstring). The result
    is a certified bracket lambda* in [lam_lower, lam_star] (gap <= tol when ``certified``), lam_star backed
    by a feasible point; lam_used = min(1, lam_star + tau) is feasible by monotonicity. If the
    path cannot certify and the dense LP is small, HiGHS (scipy) is used instead (``fallback``).

    The DP proof assumes the exact lambda*; the tolerance-level deviation is a documented caveat."""
    t0 = time.perf_counter()
    S, m, L, delta, Delta, c_f = check_inputs(S, c_f, d, delta, Delta)
    op = WalshOperator(S, d, gram)
    c_u = point_coefficients(S, d)
    stats: dict[str, Any] = {}
    t_lo, t_hi, method, y = lambda_bracket(
        op, c_f, c_u, delta, Delta, tol=tol, max_stages=max_stages, fallback=fallback, stats=stats
    )
    if method == "lambda=0":
        lam_star = lam_lower = lam_used = 0.0
    else:
        lam_star, lam_lower = 1.0 - t_lo, 1.0 - t_hi
        lam_used = min(1.0, lam_star + tau)
    stats.update({k: int(v) for k, v in op.counts.items()})
    return LambdaResult(
        lam_star=lam_star,
        lam_lower=lam_lower,
        lam_used=lam_used,
        certified=(lam_star - lam_lower) <= max(tol, 1e-12),
        method=method,
        iterations={k: int(v) for k, v in stats.items()},
        seconds=time.perf_counter() - t0,
        y=y,
    )


# ---------------------------------------------------------------------------------------------------
# reference solvers (dense; small m; tests and benchmarks)
# ---------------------------------------------------------------------------------------------------
def _highs_lambda(
    S: np.ndarray,
    k: np.ndarray | None,
    c_f: np.ndarray,
    d: int,
    delta: float,
    Delta: float,
    *,
    c_u: np.ndarray,
    lam_fixed: float | None = None,
) -> float | None:
    """Pierquin et al.'s LP in g = m h: min lambda s.t. A g / m + lambda (c_f - c_u) = c_f,
    g in [2 delta, Delta - delta]^m (per atom, weights k), lambda in [0, 1]; or, with ``lam_fixed``, the
    feasibility problem at that lambda (returns lam_fixed if feasible, None if not)."""
    from scipy.optimize import linprog

    n = S.shape[0]
    m = n if k is None else float(k.sum())
    A = walsh_features(S, d, np.float64, transposed=True)
    if k is not None:
        A = A * k
    opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    if lam_fixed is not None:
        b = (1 - lam_fixed) * c_f + lam_fixed * c_u
        res = linprog(
            np.zeros(n), A_eq=A / m, b_eq=b, bounds=[(2 * delta, Delta - delta)] * n, method="highs", options=opts
        )
        return lam_fixed if res.status == 0 else None
    A_eq = np.column_stack([c_f - c_u, A / m])
    cost = np.zeros(n + 1)
    cost[0] = 1.0
    res = linprog(
        cost, A_eq=A_eq, b_eq=c_f, bounds=[(0.0, 1.0)] + [(2 * delta, Delta - delta)] * n, method="highs", options=opts
    )
    return float(res.x[0]) if res.status == 0 else None


def reference_lambda(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float) -> float:
    """lambda* by HiGHS (``scipy.optimize.linprog(method="highs")``) on Pierquin et al.'s LP, with
    the dense L x (m + 1) matrix, in the g = m h scaling. Small m only."""
    S = as_signs(S)
    c_f = np.asarray(c_f, float)
    lam = _highs_lambda(S, None, c_f, d, delta, Delta, c_u=point_coefficients(S, d))
    if lam is None:
        raise InputError("HiGHS did not solve the lambda LP")
    return lam


def reference_feasible(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, lam: float) -> bool:
    """Is there h in the LP box [2 delta/m, (Delta - delta)/m]^m with A h = b(lam)? (HiGHS, dense.)"""
    S = as_signs(S)
    return (
        _highs_lambda(
            S, None, np.asarray(c_f, float), d, delta, Delta, c_u=point_coefficients(S, d), lam_fixed=float(lam)
        )
        is not None
    )
