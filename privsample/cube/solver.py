"""Solvers for noise-free private sampling on the Boolean cube: lambda* (step 4) and h* (step 5) of
Boedihardjo, Strohmer and Vershynin's (2021) Algorithm 1, i.e. the LP and QP of Pierquin et al.
(2023), solved at scale by dual (semismooth Newton) methods:
the LP in :mod:`privsample.cube.lp`, the QP in :mod:`privsample.cube.qp`, both steps in
:func:`solve`.

Notation. S = (theta_1..theta_m) is an m x p int8 matrix of signs, A = M^T the
L x m Walsh matrix (:mod:`privsample.cube.walsh`, never formed), c_u = A 1 / m and, for the
data's coefficient vector c_f (length L, c_empty = 1), b(lambda) = (1 - lambda) c_f + lambda c_u:

  lambda* = min{lambda in [0, 1] : exists h in [2 delta/m, (Delta - delta)/m]^m with A h = b(lambda)},
  h*      = argmin{||h - 1/m||_2 : A h = b(lambda*), delta/m <= h <= Delta/m}.

**Scaling (one convention throughout).** We work in g = m h (u_m becomes 1, the
boxes become [delta, Delta] and [2 delta, Delta - delta]) and in the shifted variable v = g - 1, with
the constraint written in *sums*: A v = m (b - c_u). For lambda this is A v = t r with
r = m (c_f - c_u) and t = 1 - lambda (the geometric form). Residuals are reported in
*coefficient units*, ||A h - b||_inf = ||A g / m - b||_inf. Dual vectors y live in the same g scaling:
g = clip(1 + A^T y, lo, hi), i.e. h = clip(u_m + A^T (y / m), lo / m, hi / m).

**Exactness and privacy.** The DP proof (BSV Thm 12.2) assumes the exact lambda* and h*. :func:`solve`
returns lambda_used = lambda* + tau with residuals ~1e-12 in coefficient units; the h it returns satisfies
the box delta/m <= h <= Delta/m exactly (:func:`privsample.cube.qp.exact_box`), and ``residuals["target"]``
bounds the distance of its target from b(lambda*), which the sampler (:mod:`privsample.cube.sampler`) turns
into a margin on epsilon. Everything this module computes from c_f (lambda*, the bracket, residuals,
iteration counts, times) is a function of the data: nothing here logs or prints it, and error messages are
generic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.cube.lp import DEFAULT_TAU, check_inputs, lambda_bracket
from privsample.cube.qp import InfeasibleError, WalshOperator, exact_box, project_dual
from privsample.cube.walsh import point_coefficients, walsh_rmatvec
from privsample.errors import InputError, PrivsampleError

__all__ = ["CubeSolution", "SolverError", "solve"]


class SolverError(PrivsampleError):
    """The solver stopped before reaching its tolerance. The message is generic: residuals and iteration
    counts are functions of the data and stay in the result objects (``iterations``, ``residuals``)."""


@dataclass
class CubeSolution:
    """:func:`solve`'s answer. ``h`` are probabilities on the m points of S (sum 1)."""

    lam: float  # lambda_used = min(1, lambda* + tau) (0.0 when lambda = 0 is feasible)
    h: np.ndarray  # h* at lambda_used, in [delta/m, Delta/m] exactly (exact_box)
    y: np.ndarray  # QP dual (g scaling): m h = clip(1 + A^T y, delta, Delta)
    lam_star: float
    lam_lower: float
    certified: bool
    iterations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    residuals: dict[str, float] = field(default_factory=dict)
    method: str = ""


def solve(
    S: np.ndarray,
    c_f: np.ndarray,
    d: int,
    delta: float,
    Delta: float,
    *,
    tau: float = DEFAULT_TAU,
    tol: float = 1e-12,
    gram: np.ndarray | None = None,
) -> CubeSolution:
    """Steps 4-5 of BSV's Algorithm 1 (Pierquin et al.'s LP then QP): lambda_used = min(1, lambda* + tau)
    by :func:`privsample.cube.lp.solve_lambda`, then h* = argmin ||h - u_m|| s.t. A h = b(lambda_used),
    delta/m <= h <= Delta/m by the dual Newton projection. h is returned as probabilities
    that satisfy the box exactly (:func:`privsample.cube.qp.exact_box`: clipped, renormalised, and mixed
    with u_m if round-off left the box). ``residuals["target"]`` bounds
    ||A h - b(lambda*)||_inf over the certified bracket. Failures raise with generic messages (no residuals
    or iteration counts: they depend on the data).

    ``S`` must have m >= L points (the conditioning test should have passed:
    :func:`privsample.cube.walsh.well_conditioned`, whose Gram matrix is reused through a content-keyed
    cache). The DP proof assumes the exact lambda* and h*; residuals of ~1e-12 and the +tau are the
    documented floating-point caveat."""
    t0 = time.perf_counter()
    S, m, L, delta, Delta, c_f = check_inputs(S, c_f, d, delta, Delta)
    if abs(c_f[0] - 1.0) > 1e-9:
        raise InputError(f"c_f[0] (the total mass of f_n) must be 1, got {c_f[0]}")
    op = WalshOperator(S, d, gram)
    c_u = point_coefficients(S, d)
    timings: dict[str, float] = {}
    t1 = time.perf_counter()
    op.full_gram()
    timings["gram"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    stats: dict[str, Any] = {}
    t_lo, t_hi, method, _ = lambda_bracket(
        op, c_f, c_u, delta, Delta, tol=tol, max_stages=60, fallback=True, stats=stats
    )
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
    st = project_dual(op, q, delta - 1.0, Delta - 1.0, y0=None, tol=tol, max_iter=100, farkas=True)
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
    return CubeSolution(
        lam=lam,
        h=h,
        y=st.y,
        lam_star=lam_star,
        lam_lower=lam_lower,
        certified=certified,
        iterations=stats,
        seconds=time.perf_counter() - t0,
        timings=timings,
        residuals=residuals,
        method=method,
    )
