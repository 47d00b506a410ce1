"""The QP of noise-free private sampling on the Boolean cube: h* (step 5 of Boedihardjo, Strohmer and
Vershynin's (2021) Algorithm 1; Pierquin et al.'s (2023) QP), by the dual
semismooth Newton method of its dual, which the LP path (:mod:`privsample.cube.lp`) reuses. Notation
and scaling (g = m h, v = g - 1, residuals in coefficient units): :mod:`privsample.cube.solver`.

* :func:`project_box`: the dual semismooth Newton method on
  Theta(y) = sum_i phi(z_i) - q^T y, z = A^T y, phi(z) = z^2/2 - dist(z, [l, u])^2 / 2, whose gradient is
  A clip(z) - q. Newton matrix A_I A_I^T + mu I on the free set I = {l < z_i < u}, kept exactly (integer
  Gram, updated only for the rows whose status changed, or rebuilt from the full Gram minus the bound
  rows, whichever is cheaper); exact line search on the piecewise-linear derivative; warm start from the
  box-free projection y_0 = (A A^T)^{-1} q. Infeasibility is certified by a Farkas vector y with
  q^T y > sigma(A^T y) = sum_i max(l z_i, u z_i).
* Identical points of S are merged first (an atom of multiplicity k becomes one column of weight k; the
  LP and the QP are unchanged, since averaging over identical columns keeps feasibility and, for the
  QP, optimality), which keeps the LP crossover's square systems nonsingular when 2^p is not >> m.
* :func:`exact_box` turns g into probabilities that satisfy the box delta/m <= h <= Delta/m exactly.
* :func:`reference_h` (quadprog, or OSQP, on Pierquin et al.'s QP) builds the dense matrices: for tests and
  benchmarks at small m only.

Everything computed here from the data's coefficients (duals, residuals, iteration counts, times) is a
function of the data: nothing here logs or prints it, and error messages are generic.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from privsample.cube.walsh import (
    as_signs,
    gram_free,
    point_coefficients,
    walsh_features,
    walsh_gram,
    walsh_matvec,
    walsh_rmatvec,
    walsh_size,
)
from privsample.errors import InputError

__all__ = [
    "FreeGram",
    "InfeasibleError",
    "NewtonState",
    "ProjectionResult",
    "WalshOperator",
    "check_box",
    "check_coefficients",
    "dual_newton",
    "exact_box",
    "newton_mu",
    "project_box",
    "project_dual",
    "reference_h",
    "solve_newton_system",
]

_LM_MAX = 1e6  # cap of the Levenberg-Marquardt factor on mu


class InfeasibleError(InputError):
    """The constraint set {A g = m b, lo <= g <= hi} is empty; ``certificate`` is a Farkas vector y with
    m b^T y > sum_i max(lo z_i, hi z_i), z = A^T y."""

    def __init__(self, message: str, certificate: np.ndarray | None = None):
        super().__init__(message)
        self.certificate = certificate


@dataclass
class ProjectionResult:
    """:func:`project_box`'s answer, in the g = m h scaling."""

    g: np.ndarray  # primal, length m: argmin ||g - 1|| s.t. A g / m = b, lo <= g <= hi
    y: np.ndarray  # dual, length L: g = clip(1 + A^T y, lo, hi)
    iterations: int
    residual: float  # ||A g / m - b||_inf (coefficient units)
    status: str  # "optimal" | "infeasible" | "max_iter"
    certificate: np.ndarray | None = None  # Farkas vector when infeasible
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------------
# the operator: merged atoms, products, exact free-set Gram matrices
# ---------------------------------------------------------------------------------------------------
def _merge_duplicates(S: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(unique rows, inverse index, counts), or (S, None, None) when the rows are distinct."""
    m, p = S.shape
    if m < 2 or p == 0:
        return S, None, None
    packed = np.packbits(S > 0, axis=1)
    nb = packed.shape[1]
    if nb <= 8:
        buf = np.zeros((m, 8), np.uint8)
        buf[:, :nb] = packed
        keys = buf.view(np.uint64).ravel()
    else:
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, nb))).ravel()
    _, first, inv, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    if len(first) == m:
        return S, None, None
    return S[first], inv.ravel(), counts


class WalshOperator:
    """A on the merged atoms of S (weights k = multiplicities) with work counters."""

    def __init__(self, S: np.ndarray, d: int, gram: np.ndarray | None = None, merge: bool = True):
        self.S_full = S
        self.m, self.p = S.shape
        self.d = min(int(d), self.p)
        self.L = walsh_size(self.p, self.d)
        self.S, self.inv, counts = _merge_duplicates(S) if merge else (S, None, None)
        self.k = None if counts is None else counts.astype(np.float64)
        self.n = self.S.shape[0]
        self._G = gram
        self.counts = {"matvec": 0, "rmatvec": 0, "gram_rows": 0}

    def restrict(self, atoms: np.ndarray) -> WalshOperator:
        """The operator on a subset of the atoms (same m for the residual scale, own Gram and counters)."""
        sub = object.__new__(WalshOperator)
        sub.S_full = None
        sub.m, sub.p, sub.d, sub.L = self.m, self.p, self.d, self.L
        sub.S = self.S[atoms]
        sub.inv = None
        sub.k = None if self.k is None else self.k[atoms]
        sub.n = len(atoms)
        sub._G = None
        sub.counts = self.counts
        return sub

    def matvec(self, y: np.ndarray) -> np.ndarray:
        self.counts["matvec"] += 1
        return walsh_matvec(self.S, y, self.d)

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        self.counts["rmatvec"] += 1
        return walsh_rmatvec(self.S, v if self.k is None else self.k * v, self.d)

    def wsum(self, x: np.ndarray) -> float:
        return float(x.sum() if self.k is None else self.k @ x)

    def sigma(self, z: np.ndarray, l: float, u: float) -> float:
        """Support function of the box [l, u]^m at A^T y = z: sum_i k_i max(l z_i, u z_i)."""
        zp = np.maximum(z, 0.0)
        return u * self.wsum(zp) + l * self.wsum(z - zp)

    def full_gram(self) -> np.ndarray:
        if self._G is None:
            if self.S_full is None:
                self._G = self.gram(np.arange(self.n))
            else:
                self.counts["gram_rows"] += self.m
                self._G = walsh_gram(self.S_full, self.d)
        return self._G

    def gram(self, rows: np.ndarray) -> np.ndarray:
        self.counts["gram_rows"] += int(len(rows))
        return gram_free(self.S, rows, self.d, self.k)

    def expand(self, x: np.ndarray) -> np.ndarray:
        """Per-atom values back on the m points of S."""
        return x if self.inv is None else x[self.inv]


class FreeGram:
    """A_I diag(k_I) A_I^T for the current free set, maintained at the least cost: update by the rows that
    changed status, or rebuild from the full Gram minus the bound rows, or sum the free rows directly."""

    def __init__(self, op: WalshOperator):
        self.op = op
        self.mask: np.ndarray | None = None
        self.G: np.ndarray | None = None

    def get(self, mask: np.ndarray) -> np.ndarray:
        op = self.op
        n_free = int(mask.sum())
        n_bound = op.n - n_free
        full_cost = 0 if op._G is not None else op.n
        options = {"direct": n_free, "complement": n_bound + full_cost}
        if self.mask is not None:
            options["update"] = int(np.count_nonzero(mask != self.mask))
        how = min(options, key=options.get)
        if how == "update":
            add = np.flatnonzero(mask & ~self.mask)
            rem = np.flatnonzero(self.mask & ~mask)
            G = self.G.copy()
            if len(add):
                G += op.gram(add)
            if len(rem):
                G -= op.gram(rem)
        elif how == "complement":
            G = op.full_gram() - op.gram(np.flatnonzero(~mask))
        else:
            G = op.gram(np.flatnonzero(mask))
        self.mask, self.G = mask.copy(), G
        return G


# ---------------------------------------------------------------------------------------------------
# the dual Newton method
# ---------------------------------------------------------------------------------------------------
def _line_search(op: WalshOperator, z: np.ndarray, dz: np.ndarray, l: float, u: float, qdw: float, d0: float) -> float:
    """Step s in (0, 1] minimising Theta(y + s dy) (Theta' piecewise linear, nondecreasing): s = 1 if the
    derivative is still <= 0 there, else regula falsi (Illinois) to |Theta'(s)| <= 0.05 |Theta'(0)|."""

    def deriv(s: float) -> float:
        return op.wsum(dz * np.clip(z + s * dz, l, u)) - qdw

    d1 = deriv(1.0)
    if d1 <= 0.0:
        return 1.0
    a, fa, b, fb, side = 0.0, d0, 1.0, d1, 0
    for _ in range(60):
        s = a - fa * (b - a) / (fb - fa)
        fs = deriv(s)
        if abs(fs) <= 0.05 * abs(d0):
            return s
        if fs < 0:
            a, fa = s, fs
            if side == -1:
                fb /= 2
            side = -1
        else:
            b, fb = s, fs
            if side == 1:
                fa /= 2
            side = 1
        if b - a <= 1e-15:
            break
    return a if a > 0 else b


def solve_newton_system(
    G: np.ndarray, mu: float, rhs: np.ndarray, r: np.ndarray | None = None, c: float = 0.0
) -> np.ndarray:
    """dy with (G + mu I) dy = rhs; or, given r, the dy of the bordered system
    [[G + mu I, r], [r^T, 0]] (dy, nu) = (rhs, c), solved in the orthogonal complement of r: a Householder
    reflection P maps r to a multiple of e_1, and the trailing block of P (G + mu I) P is positive definite
    (Cholesky, half the cost of a symmetric indefinite solve); LDL^T / least squares as fallbacks."""
    L = G.shape[0]
    H = G.copy()
    H[np.arange(L), np.arange(L)] += mu
    if r is None:
        for _ in range(6):
            try:
                return sla.cho_solve(sla.cho_factor(H, check_finite=False), rhs, check_finite=False)
            except np.linalg.LinAlgError:
                bump = max(mu * 99.0, 1e-12 * max(1.0, float(np.trace(G)) / L))
                H[np.arange(L), np.arange(L)] += bump
                mu += bump
        return np.linalg.lstsq(H, rhs, rcond=None)[0]
    rn = float(np.linalg.norm(r))
    v = r / rn
    alpha = -1.0 if v[0] >= 0 else 1.0  # P v = alpha e_1, w = (v - alpha e_1) / ||.||
    w = v.copy()
    w[0] -= alpha
    w /= np.linalg.norm(w)
    Hw = H @ w
    PHP = H - 2.0 * np.outer(w, Hw) - 2.0 * np.outer(Hw, w) + 4.0 * float(w @ Hw) * np.outer(w, w)
    Pb = rhs - 2.0 * w * float(w @ rhs)
    u1 = c / (rn * alpha)
    try:
        cf = sla.cho_factor(PHP[1:, 1:], check_finite=False)
        u2 = sla.cho_solve(cf, Pb[1:] - PHP[1:, 0] * u1, check_finite=False)
        u = np.concatenate([[u1], u2])
        return u - 2.0 * w * float(w @ u)
    except np.linalg.LinAlgError:
        pass
    K = np.zeros((L + 1, L + 1))
    K[:L, :L] = H
    K[:L, L] = r
    K[L, :L] = r
    full = np.concatenate([rhs, [c]])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            return sla.solve(K, full, assume_a="sym", check_finite=False)[:L]
    except (np.linalg.LinAlgError, sla.LinAlgWarning):
        return np.linalg.lstsq(K, full, rcond=None)[0][:L]


def _farkas(op: WalshOperator, q: np.ndarray, y: np.ndarray, z: np.ndarray, l: float, u: float) -> bool:
    """Is y a Farkas vector for {A v = q, v in [l, u]^n}: q^T y > sigma(A^T y)? (z ~ A^T y; a candidate is
    re-checked with a freshly computed A^T y, since z is updated incrementally.)"""

    def gap(zz: np.ndarray) -> bool:
        qy, sig = float(q @ y), op.sigma(zz, l, u)
        return qy - sig > 1e-10 * (abs(qy) + abs(sig)) + 1e-300

    return gap(z) and gap(op.matvec(y))


def newton_mu(op: WalshOperator, res_n: float) -> float:
    """The regularisation mu of the Newton matrix A_I A_I^T + mu I at scaled residual ``res_n``."""
    return op.m * max(1e-15, min(1e-7, res_n))


@dataclass
class NewtonState:
    """The dual iterate of :func:`dual_newton` (y and z = A^T y) and where it stopped."""

    y: np.ndarray
    z: np.ndarray
    status: str = "max_iter"
    res_n: float = math.inf
    t: float = 0.0
    iterations: int = 0
    certificate: np.ndarray | None = None


def dual_newton(
    op: WalshOperator,
    fg: FreeGram,
    st: NewtonState,
    l: float,
    u: float,
    *,
    q: np.ndarray | None = None,
    r: np.ndarray | None = None,
    tol: float,
    max_iter: int,
    farkas: bool = False,
) -> NewtonState:
    """Dual semismooth Newton. Projection mode (r None): min ||v||^2/2 s.t. A v = q,
    v in [l, u]. Path mode (r given): the same with right-hand side q + t r (q may be None: 0), t free,
    and the dual kept on r^T y = const (the exactly regularised LP min ||v||^2/2 - kappa t)."""
    m = op.m
    y, z = st.y, st.z
    st.status = "max_iter"
    it = 0
    lm = 1.0  # Levenberg-Marquardt factor on mu: raised after short steps (rank-deficient A_I), lowered after full ones
    while True:
        v = np.clip(z, l, u)
        Av = op.rmatvec(v)
        if r is None:
            res = Av - q
            t = 0.0
        else:
            if q is not None:
                Av = Av - q
            t = float(r @ Av) / float(r @ r)
            res = Av - t * r
        res_n = float(np.abs(res).max()) / m
        st.res_n, st.t = res_n, t
        if res_n <= tol:
            st.status = "optimal"
            break
        if it >= max_iter:
            break
        if farkas and _farkas(op, q, y, z, l, u):
            st.status, st.certificate = "infeasible", y.copy()
            break
        mask = (z > l) & (z < u)
        G = fg.get(mask)
        mu = newton_mu(op, res_n) * lm
        if r is None:
            dy = solve_newton_system(G, mu, -res, None)
        else:
            dy = solve_newton_system(G, mu, -res, r, 0.0)
            dy -= (float(r @ dy) / float(r @ r)) * r  # keep r^T y fixed exactly
        dz = op.matvec(dy)
        qdw = 0.0 if q is None else float(q @ dy)
        d0 = op.wsum(dz * v) - qdw
        if farkas and _farkas(op, q, dy, dz, l, u):
            st.status, st.certificate = "infeasible", dy.copy()
            break
        if not d0 < 0.0:
            st.status = "stalled"
            break
        s = _line_search(op, z, dz, l, u, qdw, d0)
        lm = min(lm * 10.0, _LM_MAX) if s < 0.1 else (max(lm / 10.0, 1.0) if s == 1.0 else lm)
        y = y + s * dy
        z = z + s * dz
        it += 1
    st.y, st.z, st.iterations = y, z, st.iterations + it
    return st


# ---------------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------------
def check_coefficients(c: np.ndarray, L: int, name: str) -> np.ndarray:
    """``c`` as a finite float vector of length ``L``; :class:`InputError` (naming ``name``) otherwise."""
    c = np.asarray(c, dtype=np.float64)
    if c.shape != (L,):
        raise InputError(f"{name} must have length L = {L}, got shape {c.shape}")
    if not np.all(np.isfinite(c)):
        raise InputError(f"{name} has non-finite entries")
    return c


# ---------------------------------------------------------------------------------------------------
# public: the QP (projection)
# ---------------------------------------------------------------------------------------------------
def project_dual(
    op: WalshOperator,
    q: np.ndarray,
    l: float,
    u: float,
    *,
    y0: np.ndarray | None,
    tol: float,
    max_iter: int,
    farkas: bool,
    fg: FreeGram | None = None,
) -> NewtonState:
    """min ||v||^2/2 s.t. A v = q, v in [l, u] (v = g - 1), from y0 or the box-free projection."""
    if y0 is None:
        G = op.full_gram()
        try:
            y0 = sla.cho_solve(sla.cho_factor(G, check_finite=False), q, check_finite=False)
        except np.linalg.LinAlgError:
            y0 = np.linalg.lstsq(G, q, rcond=None)[0]
    st = NewtonState(y=np.asarray(y0, float).copy(), z=op.matvec(y0))
    return dual_newton(op, fg or FreeGram(op), st, l, u, q=q, tol=tol, max_iter=max_iter, farkas=farkas)


def project_box(
    S: np.ndarray,
    b: np.ndarray,
    d: int,
    lo: float,
    hi: float,
    *,
    y0: np.ndarray | None = None,
    tol: float = 1e-12,
    max_iter: int = 100,
    on_infeasible: str = "raise",
    gram: np.ndarray | None = None,
) -> ProjectionResult:
    """The dual QP in the g = m h scaling:

        min 1/2 ||g - 1||^2  s.t.  A g / m = b,  lo <= g <= hi      (h = g / m; u_m becomes 1),

    by dual semismooth Newton (g(y) = clip(1 + A^T y, lo, hi), Jacobian A_I A_I^T + mu I, exact line search
    on the dual, warm start from the box-free projection y0 = (A A^T)^{-1} (m b - A 1) unless ``y0`` is given).
    For step 5 of the algorithm: b = b(lambda), lo = delta, hi = Delta. Requires lo <= 1 <= hi.

    ``tol`` bounds the residual ||A g / m - b||_inf. When the set is empty, a Farkas vector y with
    m b^T y > sum_i max(lo z_i, hi z_i) (z = A^T y) is found: ``on_infeasible="raise"`` raises
    :class:`InfeasibleError` (an :class:`~privsample.errors.InputError`) carrying it, ``"certificate"``
    returns it with status "infeasible". ``gram`` may pass a precomputed A A^T."""
    t0 = time.perf_counter()
    S = as_signs(S)
    m, p = S.shape
    L = walsh_size(p, d)
    b = check_coefficients(b, L, "b")
    lo, hi = float(lo), float(hi)
    if not lo <= 1.0 <= hi:
        raise InputError(f"need lo <= 1 <= hi (the box must contain u_m, i.e. g = 1), got [{lo}, {hi}]")
    if on_infeasible not in ("raise", "certificate"):
        raise InputError("on_infeasible must be 'raise' or 'certificate'")
    op = WalshOperator(S, d, gram)
    q = m * (b - point_coefficients(S, d))
    st = project_dual(op, q, lo - 1.0, hi - 1.0, y0=y0, tol=tol, max_iter=max_iter, farkas=True)
    g = 1.0 + op.expand(np.clip(st.z, lo - 1.0, hi - 1.0))
    res = ProjectionResult(
        g=g,
        y=st.y,
        iterations=st.iterations,
        residual=st.res_n,
        status=st.status,
        certificate=st.certificate,
        seconds=time.perf_counter() - t0,
    )
    if st.status == "infeasible" and on_infeasible == "raise":
        raise InfeasibleError(
            f"no g in [{lo}, {hi}]^{m} has A g / m = b (a Farkas certificate is attached)", st.certificate
        )
    return res


def exact_box(g: np.ndarray, delta: float, Delta: float) -> np.ndarray:
    """Probabilities h from g (about m h*) with delta/m <= h_i <= Delta/m checked in floating point.

    g is clipped to [delta, Delta] and normalised; if round-off in the total mass leaves the box, h is
    mixed with the uniform density u_m ((1 - t) h + t u_m, the smallest t of a doubling sequence that
    works; t = 1 gives u_m, which lies in the box since 2 delta <= 1 <= Delta - delta). Mixing with u_m
    moves the target towards c_u along the lambda direction, so it stays feasible (monotonicity)."""
    g = np.clip(np.asarray(g, dtype=np.float64), delta, Delta)
    m = g.size
    lo, hi = delta / m, Delta / m
    t = 0.0
    while t < 1.0:
        gt = g if t == 0.0 else (1.0 - t) * g + t
        h = gt / gt.sum()
        if np.all(np.isfinite(h)) and float(h.min()) >= lo and float(h.max()) <= hi:
            return h
        t = min(1.0, max(2.0 * t, 1e-15))
    return np.full(m, 1.0 / m)


def check_box(S: np.ndarray, c: np.ndarray, d: int, h: np.ndarray, lo: float, hi: float) -> dict[str, float]:
    """Constraint residuals of a density h: ||A h - c||_inf and the box violation in g = m h units."""
    m = np.asarray(S).shape[0]
    h = np.asarray(h, float)
    return {
        "equality": float(np.abs(walsh_rmatvec(S, h, d) - c).max()),
        "box": float(max(0.0, np.max(lo - m * h), np.max(m * h - hi))),
    }


# ---------------------------------------------------------------------------------------------------
# reference solver (dense; small m; tests and benchmarks)
# ---------------------------------------------------------------------------------------------------
def reference_h(
    S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, lam: float, *, solver: str = "quadprog"
) -> np.ndarray:
    """h* at ``lam`` by a generic dense QP solver on Pierquin et al.'s QP in g = m h:
    min 1/2 ||g||^2 - 1^T g s.t. A g / m = b(lam), delta <= g <= Delta; returns h = g / m.

    ``solver="quadprog"`` (Goldfarb-Idnani, Pierquin et al.'s choice; dense constraint matrix m x (L + 2m)) or
    ``"osqp"`` (sparse ADMM, polished). Both are imported lazily: test/benchmark-only dependencies."""
    S = as_signs(S)
    m = S.shape[0]
    c_f = np.asarray(c_f, float)
    b = (1 - lam) * c_f + lam * point_coefficients(S, d)
    A = walsh_features(S, d, np.float64, transposed=True)
    if solver == "quadprog":
        import quadprog

        C = np.hstack([A.T, np.eye(m), -np.eye(m)])
        rhs = np.concatenate([m * b, np.full(m, float(delta)), np.full(m, -float(Delta))])
        g = quadprog.solve_qp(np.eye(m), np.ones(m), C, rhs, meq=A.shape[0])[0]
        return g / m
    if solver == "osqp":
        import osqp
        import scipy.sparse as sp

        P = sp.identity(m, format="csc")
        Acon = sp.vstack([sp.csc_matrix(A), sp.identity(m, format="csc")], format="csc")
        lo = np.concatenate([m * b, np.full(m, float(delta))])
        hi = np.concatenate([m * b, np.full(m, float(Delta))])
        prob = osqp.OSQP()
        prob.setup(
            P, -np.ones(m), Acon, lo, hi, eps_abs=1e-10, eps_rel=1e-10, max_iter=200000, polishing=True, verbose=False
        )
        return np.asarray(prob.solve().x) / m
    raise InputError(f"unknown reference QP solver {solver!r}")
