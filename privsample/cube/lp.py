"""Solvers for noise-free private sampling on the Boolean cube: lambda* (step 4) and h* (step 5) of
Boedihardjo, Strohmer and Vershynin's (2021) Algorithm 1, i.e. the LP and QP of Pierquin et al.
(2023, decoded in notes/private-sampling.md section 3), solved at scale by the dual methods of
note section 8.

Notation (note sections 1-2). S = (theta_1..theta_m) is an m x p int8 matrix of signs, A = M^T the
L x m Walsh matrix (:mod:`privsample.sampling.walsh`, never formed), c_u = A 1 / m and, for the
data's coefficient vector c_f (length L, c_empty = 1), b(lambda) = (1 - lambda) c_f + lambda c_u:

  lambda* = min{lambda in [0, 1] : exists h in [2 delta/m, (Delta - delta)/m]^m with A h = b(lambda)},
  h*      = argmin{||h - 1/m||_2 : A h = b(lambda*), delta/m <= h <= Delta/m}.

**Scaling (one convention throughout, note section 7).** We work in g = m h (u_m becomes 1, the
boxes become [delta, Delta] and [2 delta, Delta - delta]) and in the shifted variable v = g - 1, with
the constraint written in *sums*: A v = m (b - c_u). For lambda this is A v = t r with
r = m (c_f - c_u) and t = 1 - lambda (the geometric form of note section 8). Residuals are reported in
*coefficient units*, ||A h - b||_inf = ||A g / m - b||_inf. Dual vectors y live in the same g scaling:
g = clip(1 + A^T y, lo, hi), i.e. h = clip(u_m + A^T (y / m), lo / m, hi / m).

**Methods.**

* :func:`project_box` (the QP, note section 8): the dual semismooth Newton method on
  Theta(y) = sum_i phi(z_i) - q^T y, z = A^T y, phi(z) = z^2/2 - dist(z, [l, u])^2 / 2, whose gradient is
  A clip(z) - q. Newton matrix A_I A_I^T + mu I on the free set I = {l < z_i < u}, kept exactly (integer
  Gram, updated only for the rows whose status changed, or rebuilt from the full Gram minus the bound
  rows, whichever is cheaper); exact line search on the piecewise-linear derivative; warm start from the
  box-free projection y_0 = (A A^T)^{-1} q. Infeasibility is certified by a Farkas vector y with
  q^T y > sigma(A^T y) = sum_i max(l z_i, u z_i) (note section 8).
* :func:`solve_lambda` (the LP, in the geometric form t* = max{t : t r in A [l, u]^m}, lambda* = 1 - t*):

  (A) lambda = 0 is tested first by projecting onto the LP box (converges iff feasible; a Farkas vector
      proves t* < 1).
  (B) Otherwise the exactly regularised LP min ||v||^2/2 - kappa t s.t. A v = t r, v in box, is followed
      along increasing kappa: its dual is the projection dual restricted to r^T y = kappa (tangent
      predictor; Newton corrector on the bordered system [[A_I A_I^T, r], [r^T, 0]], solved by Cholesky in
      the complement of r). Its free set shrinks towards the L - 1 basic atoms of an optimal vertex.
  (C) A *crossover* at every stage takes the free atoms as a basis and solves the square systems for the
      vertex (v_F, t) and the dual y (A_F^T y = 0, r^T y = 1). Once at most 1.05 L atoms are free, a
      bounded *dual simplex* with a bound-flipping ratio test and dual steepest-edge pricing starts from
      the basis the path points to (dual feasible by construction) and finishes at the optimal vertex.
  (D) For large m ("sifting", the prototype's lesson 3 turned around): once the free set is small, the LP
      is solved on the atoms nearest the box only (the others fixed at their bounds; its cost no longer
      depends on m), its dual is checked on all m atoms, and atoms whose bound it contradicts are added.

  Every lower bound on t is backed by a feasible point (residual <= tol) and every upper bound by a dual
  vector y (weak duality: t <= sigma(A^T y) / r^T y), so the returned bracket
  [lam_lower, lam_star] is certified up to floating-point round-off; it closes to ~1e-15 in practice.
  lambda_used = min(1, lam_star + tau) is feasible by monotonicity (note sections 2 and 7). If a small
  problem is not certified, HiGHS is used instead (``fallback``); a large one returns the bracket.
* Identical points of S are merged first (an atom of multiplicity k becomes one column of weight k; the
  LP and the QP are unchanged, since averaging over identical columns keeps feasibility and, for the
  QP, optimality), which keeps the crossover's square systems nonsingular when 2^p is not >> m.
* :func:`reference_lambda` (HiGHS on Pierquin et al.'s LP) and :func:`reference_h` (quadprog, or OSQP, on
  Pierquin et al.'s QP) build the dense matrices: for tests and benchmarks at small m only.

**Exactness and privacy.** The DP proof (BSV Thm 12.2) assumes the exact lambda* and h*. :func:`solve`
returns lambda_used = lambda* + tau with residuals ~1e-12 in coefficient units; the h it returns satisfies
the box delta/m <= h <= Delta/m exactly (:func:`exact_box`), and ``residuals["target"]`` bounds the distance
of its target from b(lambda*), which the sampler (:mod:`privsample.sampling.cube`) turns into a margin on
epsilon. Everything this module computes from c_f (lambda*, the bracket, residuals, iteration counts,
times) is a function of the data: nothing here logs or prints it, and error messages are generic.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from privsample.errors import InputError, PrivsampleError
from privsample.sampling.walsh import (
    _signs, gram_free, point_coefficients, walsh_features, walsh_gram, walsh_matvec, walsh_rmatvec, walsh_size,
)

__all__ = [
    "ProjectionResult", "LambdaResult", "CubeSolution", "InfeasibleError", "SolverError",
    "project_box", "solve_lambda", "solve", "check_box", "exact_box",
    "reference_lambda", "reference_feasible", "reference_h",
]

DEFAULT_TAU = 1e-9
_FALLBACK_MAX_ENTRIES = 3e7   # dense LP size (atoms x L) up to which HiGHS may stand in for the path
_LM_MAX = 1e6        # cap of the Levenberg-Marquardt factor on mu
_SIMPLEX_AT = 1.05   # the dual simplex finish starts once at most 1.05 L atoms are free on the path


class SolverError(PrivsampleError):
    """The solver stopped before reaching its tolerance. The message is generic: residuals and iteration
    counts are functions of the data and stay in the result objects (``iterations``, ``residuals``)."""


class InfeasibleError(InputError):
    """The constraint set {A g = m b, lo <= g <= hi} is empty; ``certificate`` is a Farkas vector y with
    m b^T y > sum_i max(lo z_i, hi z_i), z = A^T y (note section 8)."""

    def __init__(self, message: str, certificate: np.ndarray | None = None):
        super().__init__(message)
        self.certificate = certificate


# ---------------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------------
@dataclass
class ProjectionResult:
    """:func:`project_box`'s answer, in the g = m h scaling."""

    g: np.ndarray                 # primal, length m: argmin ||g - 1|| s.t. A g / m = b, lo <= g <= hi
    y: np.ndarray                 # dual, length L: g = clip(1 + A^T y, lo, hi)
    iterations: int
    residual: float               # ||A g / m - b||_inf (coefficient units)
    status: str                   # "optimal" | "infeasible" | "max_iter"
    certificate: np.ndarray | None = None   # Farkas vector when infeasible
    seconds: float = 0.0


@dataclass
class LambdaResult:
    """:func:`solve_lambda`'s answer. lambda* lies in [lam_lower, lam_star]; lam_star is feasible."""

    lam_star: float               # feasible (primal point found), = lambda* up to the certified gap
    lam_lower: float              # certified lower bound (a dual vector proves lambda < lam_lower infeasible)
    lam_used: float               # min(1, lam_star + tau); 0.0 exactly when lambda = 0 is feasible
    certified: bool               # lam_star - lam_lower <= tolerance
    method: str                   # "lambda=0" | "path" | "path+crossover" | "path+dual simplex" | "path+sifting"
    #                               | "highs-fallback"
    iterations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    y: np.ndarray | None = None   # dual direction of the LP (r^T y = 1), when lambda* > 0


@dataclass
class CubeSolution:
    """:func:`solve`'s answer. ``h`` are probabilities on the m points of S (sum 1)."""

    lam: float                    # lambda_used = min(1, lambda* + tau) (0.0 when lambda = 0 is feasible)
    h: np.ndarray                 # h* at lambda_used, in [delta/m, Delta/m] exactly (exact_box)
    y: np.ndarray                 # QP dual (g scaling): m h = clip(1 + A^T y, delta, Delta)
    lam_star: float
    lam_lower: float
    certified: bool
    iterations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    residuals: dict[str, float] = field(default_factory=dict)
    method: str = ""


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


class _Op:
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

    def restrict(self, atoms: np.ndarray) -> _Op:
        """The operator on a subset of the atoms (same m for the residual scale, own Gram and counters)."""
        sub = object.__new__(_Op)
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


class _FreeGram:
    """A_I diag(k_I) A_I^T for the current free set, maintained at the least cost: update by the rows that
    changed status, or rebuild from the full Gram minus the bound rows, or sum the free rows directly."""

    def __init__(self, op: _Op):
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
def _line_search(op: _Op, z: np.ndarray, dz: np.ndarray, l: float, u: float, qdw: float, d0: float) -> float:
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


def _solve_newton(G: np.ndarray, mu: float, rhs: np.ndarray, r: np.ndarray | None = None, c: float = 0.0
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
    alpha = -1.0 if v[0] >= 0 else 1.0          # P v = alpha e_1, w = (v - alpha e_1) / ||.||
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


def _farkas(op: _Op, q: np.ndarray, y: np.ndarray, z: np.ndarray, l: float, u: float) -> bool:
    """Is y a Farkas vector for {A v = q, v in [l, u]^n}: q^T y > sigma(A^T y)? (z ~ A^T y; a candidate is
    re-checked with a freshly computed A^T y, since z is updated incrementally.)"""
    def gap(zz: np.ndarray) -> bool:
        qy, sig = float(q @ y), op.sigma(zz, l, u)
        return qy - sig > 1e-10 * (abs(qy) + abs(sig)) + 1e-300
    return gap(z) and gap(op.matvec(y))


def _mu(op: _Op, res_n: float) -> float:
    return op.m * max(1e-15, min(1e-7, res_n))


@dataclass
class _State:
    y: np.ndarray
    z: np.ndarray
    status: str = "max_iter"
    res_n: float = math.inf
    t: float = 0.0
    iterations: int = 0
    certificate: np.ndarray | None = None


def _newton(op: _Op, fg: _FreeGram, st: _State, l: float, u: float, *, q: np.ndarray | None = None,
            r: np.ndarray | None = None, tol: float, max_iter: int, farkas: bool = False) -> _State:
    """Dual semismooth Newton (note section 8). Projection mode (r None): min ||v||^2/2 s.t. A v = q,
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
        mu = _mu(op, res_n) * lm
        if r is None:
            dy = _solve_newton(G, mu, -res, None)
        else:
            dy = _solve_newton(G, mu, -res, r, 0.0)
            dy -= (float(r @ dy) / float(r @ r)) * r   # keep r^T y fixed exactly
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
def _check_params(delta: float, Delta: float) -> tuple[float, float]:
    de, De = float(delta), float(Delta)
    if not (de > 0 and De > de):
        raise InputError(f"need 0 < delta < Delta, got delta={delta}, Delta={Delta}")
    if not (2 * de <= 1.0 <= De - de):
        raise InputError(f"need 2 delta <= 1 <= Delta - delta (note section 1) so that lambda = 1 is feasible, "
                         f"got delta={delta}, Delta={Delta}")
    return de, De


def _check_c(c: np.ndarray, L: int, name: str) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    if c.shape != (L,):
        raise InputError(f"{name} must have length L = {L}, got shape {c.shape}")
    if not np.all(np.isfinite(c)):
        raise InputError(f"{name} has non-finite entries")
    return c


# ---------------------------------------------------------------------------------------------------
# public: the QP (projection)
# ---------------------------------------------------------------------------------------------------
def _project(op: _Op, q: np.ndarray, l: float, u: float, *, y0: np.ndarray | None, tol: float, max_iter: int,
             farkas: bool, fg: _FreeGram | None = None) -> _State:
    """min ||v||^2/2 s.t. A v = q, v in [l, u] (v = g - 1), from y0 or the box-free projection."""
    if y0 is None:
        G = op.full_gram()
        try:
            y0 = sla.cho_solve(sla.cho_factor(G, check_finite=False), q, check_finite=False)
        except np.linalg.LinAlgError:
            y0 = np.linalg.lstsq(G, q, rcond=None)[0]
    st = _State(y=np.asarray(y0, float).copy(), z=op.matvec(y0))
    return _newton(op, fg or _FreeGram(op), st, l, u, q=q, tol=tol, max_iter=max_iter, farkas=farkas)


def project_box(S: np.ndarray, b: np.ndarray, d: int, lo: float, hi: float, *, y0: np.ndarray | None = None,
                tol: float = 1e-12, max_iter: int = 100, on_infeasible: str = "raise",
                gram: np.ndarray | None = None) -> ProjectionResult:
    """The QP of note section 8 in the g = m h scaling:

        min 1/2 ||g - 1||^2  s.t.  A g / m = b,  lo <= g <= hi      (h = g / m; u_m becomes 1),

    by dual semismooth Newton (g(y) = clip(1 + A^T y, lo, hi), Jacobian A_I A_I^T + mu I, exact line search
    on the dual, warm start from the box-free projection y0 = (A A^T)^{-1} (m b - A 1) unless ``y0`` is given).
    For step 5 of the algorithm: b = b(lambda), lo = delta, hi = Delta. Requires lo <= 1 <= hi.

    ``tol`` bounds the residual ||A g / m - b||_inf. When the set is empty, a Farkas vector y with
    m b^T y > sum_i max(lo z_i, hi z_i) (z = A^T y) is found: ``on_infeasible="raise"`` raises
    :class:`InfeasibleError` (an :class:`~privsample.errors.InputError`) carrying it, ``"certificate"``
    returns it with status "infeasible". ``gram`` may pass a precomputed A A^T."""
    t0 = time.perf_counter()
    S = _signs(S)
    m, p = S.shape
    L = walsh_size(p, d)
    b = _check_c(b, L, "b")
    lo, hi = float(lo), float(hi)
    if not lo <= 1.0 <= hi:
        raise InputError(f"need lo <= 1 <= hi (the box must contain u_m, i.e. g = 1), got [{lo}, {hi}]")
    if on_infeasible not in ("raise", "certificate"):
        raise InputError("on_infeasible must be 'raise' or 'certificate'")
    op = _Op(S, d, gram)
    q = m * (b - point_coefficients(S, d))
    st = _project(op, q, lo - 1.0, hi - 1.0, y0=y0, tol=tol, max_iter=max_iter, farkas=True)
    g = 1.0 + op.expand(np.clip(st.z, lo - 1.0, hi - 1.0))
    res = ProjectionResult(g=g, y=st.y, iterations=st.iterations, residual=st.res_n, status=st.status,
                           certificate=st.certificate, seconds=time.perf_counter() - t0)
    if st.status == "infeasible" and on_infeasible == "raise":
        raise InfeasibleError(f"no g in [{lo}, {hi}]^{m} has A g / m = b (a Farkas certificate is attached)",
                              st.certificate)
    return res


# ---------------------------------------------------------------------------------------------------
# public: lambda*
# ---------------------------------------------------------------------------------------------------
def _dual_bound(op: _Op, r: np.ndarray, q: np.ndarray | None, y: np.ndarray, z: np.ndarray, l: float, u: float
                ) -> float:
    """Weak duality: every feasible (v, t) of max t s.t. A v = q + t r, v in [l, u], has
    t <= (sigma(A^T y) - q^T y) / r^T y for any y with r^T y > 0 (z = A^T y)."""
    ry = float(r @ y)
    if not ry > 0:
        return math.inf
    return (op.sigma(z, l, u) - (0.0 if q is None else float(q @ y))) / ry


def _crossover(op: _Op, r: np.ndarray, q: np.ndarray | None, z: np.ndarray, l: float, u: float,
               tol: float) -> dict[str, Any] | None:
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
        F = np.argpartition(dist, L - 2)[:L - 1]
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
    out: dict[str, Any] = {"y": y, "t_hi": _dual_bound(op, r, q, y, op.matvec(y), l, u)}
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


def _dual_simplex(op: _Op, r: np.ndarray, q: np.ndarray | None, l: float, u: float, F: np.ndarray, *,
                  tol: float, max_pivots: int, stats: dict[str, Any]) -> dict[str, Any] | None:
    """Bounded dual simplex with a bound-flipping ratio test for max t s.t. A v = q + t r, v in [l, u]^n,
    from the basis F (L - 1 atoms; t is always basic). Nonbasic atoms sit at the bound that matches the sign
    of z = A^T y (u where z > 0, l where z < 0), so the start is dual feasible and every pivot keeps it so
    while lowering the dual bound sigma(z) - q^T y; it stops when the basic atoms are in the box (then the
    vertex is optimal and the bound is attained). B^-1 is kept explicitly with rank-one updates (O(L^2) per
    pivot) and refreshed every 50 pivots. Returns {t_lo, t_hi, y, v} or None (singular basis, no progress)."""
    L, n = op.L, op.n
    if len(F) != L - 1 or n < L:
        return None
    F = np.asarray(F, dtype=np.intp).copy()
    k = op.k

    def basis_inverse(F: np.ndarray) -> np.ndarray | None:
        AF = walsh_features(op.S[F], op.d, np.float64, transposed=True)
        if k is not None:
            AF = AF * k[F]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sla.LinAlgWarning)
                Binv = sla.inv(np.column_stack([AF, -r]), check_finite=False)
        except (np.linalg.LinAlgError, ValueError, sla.LinAlgWarning):
            return None
        return Binv if np.all(np.isfinite(Binv)) else None

    def refresh(F: np.ndarray, v: np.ndarray | None):
        Binv = basis_inverse(F)
        if Binv is None:
            return None
        y = -Binv[-1]                       # B^T y = (0, .., 0, -1): A_F^T y = 0, r^T y = 1
        z = op.matvec(y)
        if v is None:
            v = np.where(z > 0, u, l)
        v[F] = 0.0
        AvN = op.rmatvec(v)
        return Binv, y, z, v, AvN

    st = refresh(F, None)
    if st is None:
        return None
    Binv, y, z, v, AvN = st
    inB = np.zeros(n, bool)
    inB[F] = True
    width = u - l
    feas = 1e-11 * max(1.0, width)
    kk = np.ones(n) if k is None else k
    pivots = 0
    while True:
        rhs = -AvN if q is None else q - AvN
        xB = Binv @ rhs
        vF, t = xB[:-1], float(xB[-1])
        viol = np.maximum(np.maximum(l - vF, vF - u), 0.0)
        if viol.max() <= feas:
            pos = 0
        else:  # dual steepest edge: largest violation relative to the norm of its row of B^-1
            pos = int(np.argmax(viol ** 2 / np.einsum("ij,ij->i", Binv[:-1], Binv[:-1])))
        if viol[pos] <= feas:
            vv = v.copy()
            vv[F] = np.clip(vF, l, u)
            Av = op.rmatvec(vv)
            if q is not None:
                Av -= q
            res_n = float(np.abs(Av - t * r).max()) / op.m
            zf = op.matvec(y)
            t_hi = _dual_bound(op, r, q, y, zf, l, u)
            stats["dual_simplex_pivots"] = stats.get("dual_simplex_pivots", 0) + pivots
            out: dict[str, Any] = {"t_hi": t_hi, "y": y.copy()}
            if res_n <= max(tol, 1e-11):
                out.update(t_lo=t, v=vv)
            return out
        if pivots >= max_pivots:
            stats["dual_simplex_pivots"] = stats.get("dual_simplex_pivots", 0) + pivots
            return {"t_hi": _dual_bound(op, r, q, y, op.matvec(y), l, u), "y": y.copy()}
        p = F[pos]
        sgn = 1.0 if vF[pos] > u else -1.0
        rho = Binv[pos]
        zr = sgn * op.matvec(rho)                # dz/dtheta along y + theta sgn rho
        cand = ~inB & (((v >= u) & (zr < 0)) | ((v <= l) & (zr > 0)))
        idx = np.flatnonzero(cand)
        if len(idx) == 0:
            return None                          # dual unbounded: the LP (restricted) is infeasible
        theta = np.abs(z[idx]) / np.abs(zr[idx])
        order = np.argsort(theta, kind="stable")
        inc = kk[idx[order]] * np.abs(zr[idx[order]]) * width
        slope = -float(viol[pos]) + np.cumsum(inc)
        j = int(np.searchsorted(slope >= 0, True))  # first breakpoint where the dual bound stops falling
        if j >= len(order):
            return None
        flips, qa = idx[order[:j]], int(idx[order[j]])
        th = float(theta[order[j]])
        # dual step
        y = y + (th * sgn) * rho
        z = z + th * zr
        # primal bookkeeping: flipped atoms change bound, p leaves at its violated bound, q enters
        delta_v = np.zeros(n)
        if len(flips):
            newv = np.where(v[flips] >= u, l, u)
            delta_v[flips] = newv - v[flips]
            v[flips] = newv
        bp = u if sgn > 0 else l
        delta_v[p] += bp
        v[p] = bp
        delta_v[qa] -= v[qa]
        v[qa] = 0.0
        ch = np.flatnonzero(delta_v)
        Fc = walsh_features(op.S[ch], op.d, np.float64, transposed=True)
        AvN = AvN + Fc @ (kk[ch] * delta_v[ch])
        inB[p], inB[qa] = False, True
        F[pos] = qa
        z[qa] = 0.0
        # basis update: column pos becomes b_q = k_q a_q
        bq = walsh_features(op.S[[qa]], op.d, np.float64, transposed=True)[:, 0] * kk[qa]
        w = Binv @ bq
        piv = w[pos]
        pivots += 1
        if abs(piv) < 1e-11 or pivots % 50 == 0:
            st = refresh(F, v)
            if st is None:
                return None
            Binv, y, z, v, AvN = st
        else:
            w[pos] -= 1.0
            Binv = Binv - np.outer(w, Binv[pos] / piv)


def _basis_from_path(z: np.ndarray, zdot: np.ndarray, l: float, u: float, L: int) -> np.ndarray:
    """L - 1 atoms for a starting basis: the free atoms of the path point that its tangent moves least
    (smallest |zdot|), completed by the bound atoms nearest the box."""
    free = (z > l) & (z < u)
    idx = np.flatnonzero(free)
    if len(idx) >= L - 1:
        return idx[np.argsort(np.abs(zdot[idx]), kind="stable")[:L - 1]]
    dist = np.where(z >= u, z - u, l - z)
    dist[free] = -1.0
    return np.argpartition(dist, L - 2)[:L - 1]


@dataclass
class _LP:
    t_lo: float = 0.0                  # backed by v_lo (feasible up to the residual tolerance)
    t_hi: float = math.inf             # backed by y_hi (dual bound)
    v_lo: np.ndarray | None = None
    y_hi: np.ndarray | None = None
    method: str = "path"

    def lower(self, t: float, v: np.ndarray | None) -> None:
        if t > self.t_lo:
            self.t_lo, self.v_lo = t, v

    def upper(self, t: float, y: np.ndarray) -> None:
        if t < self.t_hi:
            self.t_hi, self.y_hi = t, y


def _lp_path(op: _Op, r: np.ndarray, q: np.ndarray | None, l: float, u: float, y: np.ndarray, z: np.ndarray, *,
             tol: float, max_stages: int, stats: dict[str, Any], sift: bool, depth: int = 0) -> _LP:
    """max t s.t. A v = q + t r, v in [l, u]^n (t = 1 - lambda; q = None means 0), by the path in
    kappa = r^T y of the exactly regularised LP min ||v||^2/2 - kappa t (Newton corrector on the bordered
    system, tangent predictor), a crossover at every stage and, when the free set is small (``sift``),
    the LP restricted to the atoms nearest the box, verified on all atoms (module docstring)."""
    fg = _FreeGram(op)
    out = _LP()
    kappa = float(r @ y)
    if kappa <= 0:
        y = y + ((1.0 - kappa) / float(r @ r)) * r
        z = op.matvec(y)
    out.upper(_dual_bound(op, r, q, y, z, l, u), y)
    if q is None:
        out.lower(0.0, np.zeros(op.n))  # v = 0 is feasible for t = 0
    gamma, stages, base_its = 4.0, 0, 0
    pst = _State(y=y, z=z)
    L = op.L
    simplex_at = _SIMPLEX_AT * L   # free-set size at which the dual simplex finish is tried
    for stages in range(1, max_stages + 1):
        pst = _newton(op, fg, pst, l, u, q=q, r=r, tol=tol, max_iter=30)
        its, base_its = pst.iterations - base_its, pst.iterations
        if pst.status == "optimal":
            out.lower(pst.t, None)
        out.upper(_dual_bound(op, r, q, pst.y, pst.z, l, u), pst.y)
        free = (pst.z > l) & (pst.z < u)
        n_free = int(free.sum())
        cx = _crossover(op, r, q, pst.z, l, u, tol) if n_free <= L - 1 else None
        if cx is not None:
            out.upper(cx["t_hi"], cx["y"])
            if "t_lo" in cx and cx["t_lo"] > out.t_lo:
                out.lower(cx["t_lo"], cx["v"])
                out.method = "path+crossover"
        if out.t_lo >= 1.0 or out.t_hi - out.t_lo <= tol:
            break
        if sift and pst.status == "optimal" and n_free <= min(20.0, max(4.0, op.n / (40.0 * L))) * L \
                and op.n > 30 * L:
            if _sift(op, r, l, u, pst, out, tol=tol, stats=stats, depth=depth):
                out.method = "path+sifting"
                break
            sift = False  # did not certify: go on along the full path
        # tangent of the path at the current active set: [[G_I, r], [r^T, 0]] (ydot, nu) = (0, 1)
        G = fg.get(free)
        ydot = _solve_newton(G, _mu(op, pst.res_n) * 1e-3, np.zeros(L), r, 1.0)
        ydot /= float(r @ ydot)
        zdot = op.matvec(ydot)
        out.upper(_dual_bound(op, r, q, ydot, zdot, l, u), ydot)
        if out.t_hi - out.t_lo > tol and n_free <= simplex_at and op.n >= L:
            # finish with the dual simplex from the basis the path points to
            simplex_at = min(simplex_at, n_free) - max(1, L // 10)
            F = _basis_from_path(pst.z, zdot, l, u, L)
            ds = _dual_simplex(op, r, q, l, u, F, tol=tol, max_pivots=max(2 * L, 200), stats=stats)
            if ds is not None:
                out.upper(ds["t_hi"], ds["y"])
                if "t_lo" in ds:
                    out.lower(ds["t_lo"], ds["v"])
                    if out.t_hi - out.t_lo <= tol:
                        out.method = "path+dual simplex"
        if out.t_hi - out.t_lo <= tol:
            break
        gamma = min(100.0, gamma * 2.0) if its <= 3 else (max(1.5, gamma / 2.0) if its > 8 else gamma)
        dk = (gamma - 1.0) * float(r @ pst.y)
        pst.y = pst.y + dk * ydot
        pst.z = pst.z + dk * zdot
    stats[f"path_stages{depth or ''}"] = stats.get(f"path_stages{depth or ''}", 0) + stages
    stats[f"path_iterations{depth or ''}"] = stats.get(f"path_iterations{depth or ''}", 0) + pst.iterations
    return out


def _sift(op: _Op, r: np.ndarray, l: float, u: float, pst: _State, out: _LP, *, tol: float,
          stats: dict[str, Any], depth: int, rounds: int = 4) -> bool:
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
        res = _lp_path(sub, r, q_sub, l, u, pst.y, z[C], tol=tol, max_stages=80, stats=stats, sift=False,
                       depth=depth + 1)
        if res.v_lo is not None:
            v = v_fix.copy()
            v[C] = res.v_lo
            out.lower(res.t_lo, v)
        else:
            out.lower(res.t_lo, None)  # a path point of the restricted LP: feasible to the residual tolerance
        if res.y_hi is None:
            return False
        zy = op.matvec(res.y_hi)
        out.upper(_dual_bound(op, r, None, res.y_hi, zy, l, u), res.y_hi)
        if out.t_hi - out.t_lo <= tol:
            return True
        # atoms outside C whose fixed bound contradicts the restricted dual's sign
        wrong = ~inC & (((v_fix >= u) & (zy < 0)) | ((v_fix <= l) & (zy > 0)))
        if not wrong.any():
            return False
        C = np.union1d(C, np.flatnonzero(wrong))
    return False


def _lambda_core(op: _Op, c_f: np.ndarray, c_u: np.ndarray, delta: float, Delta: float, *, tol: float,
                 max_stages: int, fallback: bool, stats: dict[str, Any]) -> tuple[float, float, str, np.ndarray | None]:
    """(t_lo, t_hi, method, y) with t* in [t_lo, t_hi] (t = 1 - lambda); t_lo backed by a feasible point."""
    m = op.m
    l, u = 2.0 * delta - 1.0, Delta - delta - 1.0
    r = m * (c_f - c_u)
    if float(np.abs(r).max()) <= 1e-13 * m:
        return 1.0, 1.0, "lambda=0", None  # c_f = c_u: g = 1 is feasible
    # (A) is lambda = 0 feasible? project 0 onto {A v = r, v in LP box}; a Farkas vector proves t* < 1.
    st = _project(op, r, l, u, y0=None, tol=tol, max_iter=40, farkas=True)
    stats["phase_a_iterations"] = st.iterations
    if st.status == "optimal":
        return 1.0, 1.0, "lambda=0", None
    # (B) the path (with crossover and sifting) from the projection's last dual iterate.
    res = _lp_path(op, r, None, l, u, st.y, st.z, tol=tol, max_stages=max_stages, stats=stats, sift=True)
    if st.status == "infeasible":
        yc = st.certificate
        res.upper(_dual_bound(op, r, None, yc, op.matvec(yc), l, u), yc)
    t_lo, t_hi, method = res.t_lo, res.t_hi, res.method
    if t_lo >= 1.0:
        return 1.0, 1.0, "lambda=0", None
    if t_hi - t_lo > tol and fallback and op.n * op.L <= _FALLBACK_MAX_ENTRIES:
        lam_ref = _highs_lambda(op.S, op.k, c_f, op.d, delta, Delta, c_u=c_u)
        if lam_ref is not None:
            return 1.0 - lam_ref, 1.0 - lam_ref, "highs-fallback", res.y_hi
    return t_lo, max(min(t_hi, 1.0), t_lo), method, res.y_hi


def _inputs(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float):
    """Validated (S as signs, m, L, delta, Delta, c_f) shared by :func:`solve_lambda` and :func:`solve`."""
    S = _signs(S)
    m, p = S.shape
    L = walsh_size(p, d)
    delta, Delta = _check_params(delta, Delta)
    c_f = _check_c(c_f, L, "c_f")
    if m < L:
        raise InputError(f"m = {m} < L = {L}: the Walsh matrix of S is rank deficient and S fails the "
                         "conditioning test (note section 9); use m >= 2L")
    return S, m, L, delta, Delta, c_f


def solve_lambda(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, *, tau: float = DEFAULT_TAU,
                 tol: float = 1e-12, max_stages: int = 60, fallback: bool = True,
                 gram: np.ndarray | None = None) -> LambdaResult:
    """lambda* of BSV Algorithm 1 step 4 / Pierquin et al.'s LP (note sections 2-3, 8), at scale.

    lambda = 0 is tested first (a projection onto the LP box [2 delta, Delta - delta] in g = m h; common for
    regular data). Otherwise: geometric form lambda* = 1 - t*, t* = max{t : c_u + t (c_f - c_u) in A box / m},
    by the exactly regularised LP path, crossover, dual simplex and sifting (module docstring). The result
    is a certified bracket lambda* in [lam_lower, lam_star] (gap <= tol when ``certified``), lam_star backed
    by a feasible point; lam_used = min(1, lam_star + tau) is feasible by monotonicity (note section 7). If the
    path cannot certify and the dense LP is small, HiGHS (scipy) is used instead (``fallback``).

    The DP proof assumes the exact lambda*; the tolerance-level deviation is a documented caveat."""
    t0 = time.perf_counter()
    S, m, L, delta, Delta, c_f = _inputs(S, c_f, d, delta, Delta)
    op = _Op(S, d, gram)
    c_u = point_coefficients(S, d)
    stats: dict[str, Any] = {}
    t_lo, t_hi, method, y = _lambda_core(op, c_f, c_u, delta, Delta, tol=tol, max_stages=max_stages,
                                         fallback=fallback, stats=stats)
    if method == "lambda=0":
        lam_star = lam_lower = lam_used = 0.0
    else:
        lam_star, lam_lower = 1.0 - t_lo, 1.0 - t_hi
        lam_used = min(1.0, lam_star + tau)
    stats.update({k: int(v) for k, v in op.counts.items()})
    return LambdaResult(lam_star=lam_star, lam_lower=lam_lower, lam_used=lam_used,
                        certified=(lam_star - lam_lower) <= max(tol, 1e-12), method=method,
                        iterations={k: int(v) for k, v in stats.items()}, seconds=time.perf_counter() - t0, y=y)


# ---------------------------------------------------------------------------------------------------
# public: both steps
# ---------------------------------------------------------------------------------------------------
def solve(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, *, tau: float = DEFAULT_TAU,
          tol: float = 1e-12, gram: np.ndarray | None = None) -> CubeSolution:
    """Steps 4-5 of BSV's Algorithm 1 (Pierquin et al.'s LP then QP): lambda_used = min(1, lambda* + tau)
    by :func:`solve_lambda`, then h* = argmin ||h - u_m|| s.t. A h = b(lambda_used), delta/m <= h <= Delta/m
    by the dual Newton projection (note section 8). h is returned as probabilities that satisfy the box
    exactly (:func:`exact_box`: clipped, renormalised, and mixed with u_m if round-off left the box; note
    section 2 step 6). ``residuals["target"]`` bounds ||A h - b(lambda*)||_inf over the certified bracket.
    Failures raise with generic messages (no residuals or iteration counts: they depend on the data).

    ``S`` must have m >= L points (the conditioning test should have passed: :func:`walsh.well_conditioned`,
    whose Gram matrix is reused through a content-keyed cache). The DP proof assumes the exact lambda*
    and h*; residuals of ~1e-12 and the +tau are the documented floating-point caveat (note section 7)."""
    t0 = time.perf_counter()
    S, m, L, delta, Delta, c_f = _inputs(S, c_f, d, delta, Delta)
    if abs(c_f[0] - 1.0) > 1e-9:
        raise InputError(f"c_f[0] (the total mass of f_n) must be 1, got {c_f[0]}")
    op = _Op(S, d, gram)
    c_u = point_coefficients(S, d)
    timings: dict[str, float] = {}
    t1 = time.perf_counter()
    op.full_gram()
    timings["gram"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    stats: dict[str, Any] = {}
    t_lo, t_hi, method, _ = _lambda_core(op, c_f, c_u, delta, Delta, tol=tol, max_stages=60, fallback=True,
                                         stats=stats)
    if method == "lambda=0":
        lam_star = lam_lower = lam = 0.0
    else:
        lam_star, lam_lower = 1.0 - t_lo, 1.0 - t_hi
        lam = min(1.0, lam_star + tau)
    certified = (lam_star - lam_lower) <= max(tol, 1e-12)
    timings["lambda"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    b = (1.0 - lam) * c_f + lam * c_u
    q = m * (1.0 - lam) * (c_f - c_u)
    st = _project(op, q, delta - 1.0, Delta - 1.0, y0=None, tol=tol, max_iter=100, farkas=True)
    timings["qp"] = time.perf_counter() - t1
    if st.status == "infeasible":  # cannot happen when lam is feasible for the narrower LP box
        raise InfeasibleError("the QP for h* is infeasible (round-off in lambda*)", st.certificate)
    if st.res_n > 1e-9:
        raise SolverError("the projection for h* did not reach its tolerance; h* is not released")
    g = 1.0 + op.expand(np.clip(st.z, delta - 1.0, Delta - 1.0))
    h = exact_box(g, delta, Delta)
    stats["qp_iterations"] = st.iterations
    stats.update({k: int(v) for k, v in op.counts.items()})
    equality = float(np.abs(walsh_rmatvec(S, h, d) - b).max())
    residuals = {
        "qp": st.res_n,
        "equality": equality,
        "box": float(max(0.0, np.max(delta / m - h), np.max(h - Delta / m))) * m,
        "lambda_gap": lam_star - lam_lower,
        # sup-norm distance (coefficient units) from A h to every b(lambda) with lambda in [lam_lower, lam]
        "target": equality + (lam - lam_lower) * float(np.abs(c_f - c_u).max()),
    }
    return CubeSolution(lam=lam, h=h, y=st.y, lam_star=lam_star, lam_lower=lam_lower, certified=certified,
                        iterations=stats,
                        seconds=time.perf_counter() - t0, timings=timings, residuals=residuals, method=method)


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
    return {"equality": float(np.abs(walsh_rmatvec(S, h, d) - c).max()),
            "box": float(max(0.0, np.max(lo - m * h), np.max(m * h - hi)))}


# ---------------------------------------------------------------------------------------------------
# reference solvers (dense; small m; tests and benchmarks)
# ---------------------------------------------------------------------------------------------------
def _highs_lambda(S: np.ndarray, k: np.ndarray | None, c_f: np.ndarray, d: int, delta: float, Delta: float, *,
                  c_u: np.ndarray, lam_fixed: float | None = None) -> float | None:
    """Seed 000's LP (note section 3) in g = m h: min lambda s.t. A g / m + lambda (c_f - c_u) = c_f,
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
        res = linprog(np.zeros(n), A_eq=A / m, b_eq=b, bounds=[(2 * delta, Delta - delta)] * n,
                      method="highs", options=opts)
        return lam_fixed if res.status == 0 else None
    A_eq = np.column_stack([c_f - c_u, A / m])
    cost = np.zeros(n + 1)
    cost[0] = 1.0
    res = linprog(cost, A_eq=A_eq, b_eq=c_f, bounds=[(0.0, 1.0)] + [(2 * delta, Delta - delta)] * n,
                  method="highs", options=opts)
    return float(res.x[0]) if res.status == 0 else None


def reference_lambda(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float) -> float:
    """lambda* by HiGHS (``scipy.optimize.linprog(method="highs")``) on Pierquin et al.'s LP (note section 3), with
    the dense L x (m + 1) matrix, in the g = m h scaling. Small m only."""
    S = _signs(S)
    c_f = np.asarray(c_f, float)
    lam = _highs_lambda(S, None, c_f, d, delta, Delta, c_u=point_coefficients(S, d))
    if lam is None:
        raise InputError("HiGHS did not solve the lambda LP")
    return lam


def reference_feasible(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, lam: float) -> bool:
    """Is there h in the LP box [2 delta/m, (Delta - delta)/m]^m with A h = b(lam)? (HiGHS, dense.)"""
    S = _signs(S)
    return _highs_lambda(S, None, np.asarray(c_f, float), d, delta, Delta, c_u=point_coefficients(S, d),
                         lam_fixed=float(lam)) is not None


def reference_h(S: np.ndarray, c_f: np.ndarray, d: int, delta: float, Delta: float, lam: float, *,
                solver: str = "quadprog") -> np.ndarray:
    """h* at ``lam`` by a generic dense QP solver on Pierquin et al.'s QP (note section 3) in g = m h:
    min 1/2 ||g||^2 - 1^T g s.t. A g / m = b(lam), delta <= g <= Delta; returns h = g / m.

    ``solver="quadprog"`` (Goldfarb-Idnani, Pierquin et al.'s choice; dense constraint matrix m x (L + 2m)) or
    ``"osqp"`` (sparse ADMM, polished). Both are imported lazily: test/benchmark-only dependencies."""
    S = _signs(S)
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
        prob.setup(P, -np.ones(m), Acon, lo, hi, eps_abs=1e-10, eps_rel=1e-10, max_iter=200000, polishing=True,
                   verbose=False)
        return np.asarray(prob.solve().x) / m
    raise InputError(f"unknown reference QP solver {solver!r}")
