"""The vertex steps of the cube LP max t s.t. A v = q + t r, v in [l, u]^n (:mod:`privsample.cube.lp`; the LP
of Pierquin, Zimmermann and Boussard (2023), *Practical considerations on using private sampling for synthetic
data*, in the geometric form of that module): the weak-duality bound that backs every upper bound on t, the
crossover from a path point to the vertex of its free atoms, and a bounded dual simplex with a bound-flipping
ratio test and dual steepest-edge pricing that finishes at the optimal vertex.

Everything computed here is a function of the data's coefficients: nothing here logs or prints it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla

from privsample.cube.qp import WalshOperator
from privsample.cube.walsh import walsh_features

__all__ = ["basis_from_path", "crossover", "dual_bound", "dual_simplex"]


def dual_bound(
    op: WalshOperator, r: np.ndarray, q: np.ndarray | None, y: np.ndarray, z: np.ndarray, l: float, u: float
) -> float:
    """Weak duality: every feasible (v, t) of max t s.t. A v = q + t r, v in [l, u], has
    t <= (sigma(A^T y) - q^T y) / r^T y for any y with r^T y > 0 (z = A^T y)."""
    ry = float(r @ y)
    if not ry > 0:
        return math.inf
    return (op.sigma(z, l, u) - (0.0 if q is None else float(q @ y))) / ry


def crossover(
    op: WalshOperator, r: np.ndarray, q: np.ndarray | None, z: np.ndarray, l: float, u: float, tol: float
) -> dict[str, Any] | None:
    """When at most L - 1 atoms of a path point are free, take them as the LP basis F (completed to L - 1
    by the atoms nearest their bound; the others stay at the bound they are at) and verify it:
    [A_F diag(k_F), -r] (v_F, t) = q - A v_fixed gives the vertex, [A_F, -r]^T y = (0, -1) the dual.
    Returns t_lo (if the vertex is in the box, with its point v), t_hi (the dual bound of y) and y."""
    L = op.L
    if op.n < L - 1:
        return None
    free = (z > l) & (z < u)
    nf = int(free.sum())
    if nf > L - 1:
        return None
    if nf < L - 1:
        dist = np.where(z >= u, z - u, l - z)
        dist[free] = -1.0
        F = np.argpartition(dist, L - 2)[: L - 1]
    else:
        F = np.flatnonzero(free)
    v = np.clip(z, l, u)
    v[F] = 0.0
    rhs = -op.rmatvec(v)
    if q is not None:
        rhs += q
    AF = walsh_features(op.S[F], op.d, np.float64, transposed=True)
    if op.k is not None:
        AF = AF * op.k[F]
    B = np.column_stack([AF, -r])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            lu = sla.lu_factor(B, check_finite=False)
    except (np.linalg.LinAlgError, ValueError, sla.LinAlgWarning):
        return None  # singular basis guess
    sol = sla.lu_solve(lu, rhs, check_finite=False)
    e = np.zeros(L)
    e[-1] = -1.0
    y = sla.lu_solve(lu, e, trans=1, check_finite=False)
    if not (np.all(np.isfinite(sol)) and np.all(np.isfinite(y))):
        return None
    out: dict[str, Any] = {"y": y, "t_hi": dual_bound(op, r, q, y, op.matvec(y), l, u)}
    vF, t = sol[:-1], float(sol[-1])
    slack = 1e-9 * max(1.0, u - l)
    if np.all(vF >= l - slack) and np.all(vF <= u + slack):
        v[F] = np.clip(vF, l, u)
        Av = op.rmatvec(v)
        if q is not None:
            Av -= q
        res_n = float(np.abs(Av - t * r).max()) / op.m
        if res_n <= max(tol, 1e-11):
            out.update(t_lo=t, v=v, res_n=res_n)
    return out


def _basis_inverse(op: WalshOperator, r: np.ndarray, F: np.ndarray) -> np.ndarray | None:
    """B^-1 for the basis B = [A_F diag(k_F), -r], or None when B is singular (or its inverse not finite)."""
    AF = walsh_features(op.S[F], op.d, np.float64, transposed=True)
    if op.k is not None:
        AF = AF * op.k[F]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            Binv = sla.inv(np.column_stack([AF, -r]), check_finite=False)
    except (np.linalg.LinAlgError, ValueError, sla.LinAlgWarning):
        return None
    return Binv if np.all(np.isfinite(Binv)) else None


@dataclass
class _Basis:
    """The dual simplex's state: the basic atoms F (t is always basic, last), B^-1, the dual y (A_F^T y = 0,
    r^T y = 1), z = A^T y, the values v of the nonbasic atoms (0 on F) and AvN = A v."""

    F: np.ndarray
    Binv: np.ndarray
    y: np.ndarray
    z: np.ndarray
    v: np.ndarray
    AvN: np.ndarray


def _refresh(op: WalshOperator, r: np.ndarray, l: float, u: float, F: np.ndarray, v: np.ndarray | None):
    """The state of basis F from scratch (nonbasic atoms at the bound matching the sign of z when ``v`` is
    None); None when the basis is singular."""
    Binv = _basis_inverse(op, r, F)
    if Binv is None:
        return None
    y = -Binv[-1]  # B^T y = (0, .., 0, -1): A_F^T y = 0, r^T y = 1
    z = op.matvec(y)
    if v is None:
        v = np.where(z > 0, u, l)
    v[F] = 0.0
    return _Basis(F, Binv, y, z, v, op.rmatvec(v))


def _leaving(viol: np.ndarray, Binv: np.ndarray, feas: float) -> int:
    """The basic position to leave: dual steepest edge, the largest violation relative to the norm of its row
    of B^-1 (position 0 when no basic atom is outside the box)."""
    if viol.max() <= feas:
        return 0
    return int(np.argmax(viol**2 / np.einsum("ij,ij->i", Binv[:-1], Binv[:-1])))


def _vertex(
    op: WalshOperator, r: np.ndarray, q: np.ndarray | None, l: float, u: float, b: _Basis, vF, t: float, tol: float
) -> dict[str, Any]:
    """The answer at a primal feasible basis: the dual bound of y, and the vertex when its residual is small."""
    vv = b.v.copy()
    vv[b.F] = np.clip(vF, l, u)
    Av = op.rmatvec(vv)
    if q is not None:
        Av -= q
    res_n = float(np.abs(Av - t * r).max()) / op.m
    out: dict[str, Any] = {"t_hi": dual_bound(op, r, q, b.y, op.matvec(b.y), l, u), "y": b.y.copy()}
    if res_n <= max(tol, 1e-11):
        out.update(t_lo=t, v=vv)
    return out


def _ratio_test(
    op: WalshOperator, b: _Basis, inB: np.ndarray, kk: np.ndarray, l: float, u: float, pos: int, sgn: float, viol_p
):
    """Bound-flipping ratio test for the leaving position ``pos``: (dz/dtheta, the atoms that flip bound, the
    entering atom, the step theta), or None (dual unbounded, i.e. the restricted LP is infeasible, or no
    breakpoint where the dual bound stops falling)."""
    zr = sgn * op.matvec(b.Binv[pos])  # dz/dtheta along y + theta sgn rho
    cand = ~inB & (((b.v >= u) & (zr < 0)) | ((b.v <= l) & (zr > 0)))
    idx = np.flatnonzero(cand)
    if len(idx) == 0:
        return None
    theta = np.abs(b.z[idx]) / np.abs(zr[idx])
    order = np.argsort(theta, kind="stable")
    inc = kk[idx[order]] * np.abs(zr[idx[order]]) * (u - l)
    slope = -float(viol_p) + np.cumsum(inc)
    j = int(np.searchsorted(slope >= 0, True))  # first breakpoint where the dual bound stops falling
    if j >= len(order):
        return None
    return zr, idx[order[:j]], int(idx[order[j]]), float(theta[order[j]])


def _pivot(op: WalshOperator, b: _Basis, inB, kk, l: float, u: float, pos: int, sgn: float, step) -> tuple:
    """One dual step and its primal bookkeeping (flipped atoms change bound, the leaving atom leaves at its
    violated bound, the entering one takes position ``pos``). Returns (w, pivot) with w = B^-1 b_q for the
    basis update."""
    zr, flips, qa, th = step
    p = b.F[pos]
    b.y = b.y + (th * sgn) * b.Binv[pos]
    b.z = b.z + th * zr
    n = op.n
    delta_v = np.zeros(n)
    if len(flips):
        newv = np.where(b.v[flips] >= u, l, u)
        delta_v[flips] = newv - b.v[flips]
        b.v[flips] = newv
    bp = u if sgn > 0 else l
    delta_v[p] += bp
    b.v[p] = bp
    delta_v[qa] -= b.v[qa]
    b.v[qa] = 0.0
    ch = np.flatnonzero(delta_v)
    Fc = walsh_features(op.S[ch], op.d, np.float64, transposed=True)
    b.AvN = b.AvN + Fc @ (kk[ch] * delta_v[ch])
    inB[p], inB[qa] = False, True
    b.F[pos] = qa
    b.z[qa] = 0.0
    # basis update: column pos becomes b_q = k_q a_q
    bq = walsh_features(op.S[[qa]], op.d, np.float64, transposed=True)[:, 0] * kk[qa]
    w = b.Binv @ bq
    return w, w[pos]


def dual_simplex(
    op: WalshOperator,
    r: np.ndarray,
    q: np.ndarray | None,
    l: float,
    u: float,
    F: np.ndarray,
    *,
    tol: float,
    max_pivots: int,
    stats: dict[str, Any],
) -> dict[str, Any] | None:
    """Bounded dual simplex with a bound-flipping ratio test for max t s.t. A v = q + t r, v in [l, u]^n,
    from the basis F (L - 1 atoms; t is always basic). Nonbasic atoms sit at the bound that matches the sign
    of z = A^T y (u where z > 0, l where z < 0), so the start is dual feasible and every pivot keeps it so
    while lowering the dual bound sigma(z) - q^T y; it stops when the basic atoms are in the box (then the
    vertex is optimal and the bound is attained). B^-1 is kept explicitly with rank-one updates (O(L^2) per
    pivot) and refreshed every 50 pivots. Returns {t_lo, t_hi, y, v} or None (singular basis, no progress)."""
    L, n = op.L, op.n
    if len(F) != L - 1 or n < L:
        return None
    b = _refresh(op, r, l, u, np.asarray(F, dtype=np.intp).copy(), None)
    if b is None:
        return None
    inB = np.zeros(n, bool)
    inB[b.F] = True
    feas = 1e-11 * max(1.0, u - l)
    kk = np.ones(n) if op.k is None else op.k
    pivots = 0
    while True:
        xB = b.Binv @ (-b.AvN if q is None else q - b.AvN)
        vF, t = xB[:-1], float(xB[-1])
        viol = np.maximum(np.maximum(l - vF, vF - u), 0.0)
        pos = _leaving(viol, b.Binv, feas)
        if viol[pos] <= feas or pivots >= max_pivots:
            stats["dual_simplex_pivots"] = stats.get("dual_simplex_pivots", 0) + pivots
            if viol[pos] <= feas:
                return _vertex(op, r, q, l, u, b, vF, t, tol)
            return {"t_hi": dual_bound(op, r, q, b.y, op.matvec(b.y), l, u), "y": b.y.copy()}
        sgn = 1.0 if vF[pos] > u else -1.0
        step = _ratio_test(op, b, inB, kk, l, u, pos, sgn, viol[pos])
        if step is None:
            return None
        w, piv = _pivot(op, b, inB, kk, l, u, pos, sgn, step)
        pivots += 1
        if abs(piv) < 1e-11 or pivots % 50 == 0:
            b = _refresh(op, r, l, u, b.F, b.v)
            if b is None:
                return None
        else:
            w[pos] -= 1.0
            b.Binv = b.Binv - np.outer(w, b.Binv[pos] / piv)


def basis_from_path(z: np.ndarray, zdot: np.ndarray, l: float, u: float, L: int) -> np.ndarray:
    """L - 1 atoms for a starting basis: the free atoms of the path point that its tangent moves least
    (smallest |zdot|), completed by the bound atoms nearest the box."""
    free = (z > l) & (z < u)
    idx = np.flatnonzero(free)
    if len(idx) >= L - 1:
        return idx[np.argsort(np.abs(zdot[idx]), kind="stable")[: L - 1]]
    dist = np.where(z >= u, z - u, l - z)
    dist[free] = -1.0
    return np.argpartition(dist, L - 2)[: L - 1]
