"""Privacy/accuracy bounds for private sampling on the Boolean cube {-1,1}^p.

Sources
-------
* Boedihardjo, Strohmer, Vershynin (BSV), *Private sampling: a noiseless approach for
  generating differentially private synthetic data* (arXiv 2109.14839): Theorem 12.2 (privacy) and
  Theorem 12.4 (accuracy). The seed text has its formulas stripped; the statements used here are
  the ones restated in Pierquin et al. 2023 (sections 4-5).
* Pierquin, Zimmermann, Boussard, arXiv 2312.07139: eqs (2)-(4), Tables 1-3, Figure 1.

Verified vs reconstructed
-------------------------
Verified (Pierquin et al. 2023's figure text, consistent with BSV's prose): the Thm 12.2 condition
``k <= eps (delta/Delta)^{3/2} e^{-d/2} L^{-1/4} sqrt(n) / (4 sqrt(2) m^{3/4})``, the three Thm 12.4
assumptions on n, m and k, eqs (2)-(4) and the printed tables.
Reconstructed by us (R): the parameter validity ``0 < delta, 2 delta <= 1 <= Delta - delta``, the
sensitivity bound ``S_inf`` (BSV Lemma 12.1's statement was not recovered; ours is the value that
makes the Thm 12.2 ratio argument exact, see :func:`sensitivity_bound`), the derived constants of
eqs (3)/(4), the p thresholds and the Figure 1 curves (axis ranges are not recoverable). BSV's
lower bound on n in Lemma 12.1 and the lemma-level constants were not recovered.

Conventions: ``L = sum_{t<=d} C(p, t)`` includes the empty set by default; Pierquin et al. 2023 uses
``p(p+1)/2`` for d = 2, i.e. the same sum without the empty set (``include_empty=False``). Logs are
natural unless a name says ``log10``. Everything is computed in log space (Mushroom-sized terms
reach 1e72 and beyond), so nothing overflows; float results that do not fit are ``inf``/``0.0``.

Documented discrepancies with Pierquin et al. 2023 (reported by ``bounds_tables.bounds_report``, never hidden)
-----------------------------------------------------------------------------------------
* Table 2, Car, 2^{p/4}: printed 77, ours 76.1 (2^{25/4}; the paper seems to round up).
  Adult's 2^{62/4} = 46340.95 is printed truncated as 46340.
* Table 2, Adult: printed ||f_n||_inf = 0.018 gives k-coefficient 9.23e-27 (printed 9.5e-27) and
  m >= 1.51e42; both printed Adult figures match ||f_n||_inf = 0.0177 (9.46e-27, 1.46e42).
* Table 2, Mushroom and Car use ||f_n||_inf = 1/n (all rows unique); the rounded Table 1 value
  1.2e-4 for Mushroom would give m >= 5.1e72 instead of the printed 5.3e72.
* Table 3 (eps = 10, ideal case): its third column, headed "2^{p/4}", is 2^p at the printed p.
  Our smallest p with k_max(p) >= k is 54, 69, 76, 83 (printed 46, 68, 75, 83); the printed 46
  is exactly the threshold for k = 0.1, and the printed m = 2.7e8 corresponds to p = 69
  (p = 68 gives 2.6e8).
* The ideal case Delta = 1 (eq. (4)) lies outside the (R) validity region 1 <= Delta - delta:
  it is the paper's formula, evaluated as printed, not a configuration the algorithm accepts.
* The note's explicit formula for S_inf carries an extra factor 1/m; with it the ratio argument
  would give m^{+1/4} instead of Thm 12.2's m^{-3/4}. :func:`sensitivity_bound` returns the value
  consistent with Thm 12.2.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from privsample.errors import InputError

__all__ = [
    "walsh_size",
    "check_parameters",
    "log_k_bound",
    "k_bound",
    "certified_epsilon",
    "max_k",
    "required_n",
    "sensitivity_bound",
    "AccuracyRequirements",
    "accuracy_requirements",
    "EQ3_M_CONSTANT",
    "EQ3_K_CONSTANT",
    "EQ4_K_CONSTANT",
    "RelaxedBounds",
    "relaxed_bounds",
    "ideal_log10_k_max",
    "ideal_log10_m_min",
    "ideal_p_threshold",
    "positive_float",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_LN_4SQRT2 = math.log(4.0 * math.sqrt(2.0))
_EXP_MAX = 700.0  # math.exp overflows just above 709.78

# --- eq. (3)/(4) choices of Pierquin et al. 2023: d = 2, delta = 1/4, gamma = 1/8, L = p(p+1)/2 -------------
_EQ_D = 2
_EQ_DELTA = 0.25
_EQ_GAMMA = 0.125

#: m lower-bound constant of eq. (3): 16 delta^-2 gamma^-1 e^{2d} / 2 = 1024 e^4 (printed 5.6e4).
EQ3_M_CONSTANT: float = 16.0 / (_EQ_DELTA**2 * _EQ_GAMMA) * math.exp(2 * _EQ_D) / 2.0
#: k constant of eq. (3): (1/(4 sqrt 2)) (1/4)^{3/2} e^{-1} 2^{1/4} (printed 9.7e-3).
EQ3_K_CONSTANT: float = _EQ_DELTA**1.5 * math.exp(-_EQ_D / 2) * 2.0**0.25 / (4.0 * math.sqrt(2.0))
#: k constant of eq. (4) with n = 2^p and m at its lower bound: EQ3_K / EQ3_M^{3/4} (printed 2.7e-6).
EQ4_K_CONSTANT: float = EQ3_K_CONSTANT / EQ3_M_CONSTANT**0.75


# ---------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------
def _as_int(name: str, value: object, minimum: int = 1) -> int:
    """Return ``value`` as an int >= minimum (ints, numpy ints or integral floats), else InputError."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(float(value))
    else:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if out < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return out


def positive_float(name: str, value: object) -> float:
    """Return ``value`` as a finite float > 0, else InputError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    out = float(value)
    if not (math.isfinite(out) and out > 0):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return out


def _check_pd(p: object, d: object) -> tuple[int, int]:
    """Validate the dimension p >= 1 and the marginal degree 1 <= d <= p."""
    pi = _as_int("p", p)
    di = _as_int("d", d)
    if di > pi:
        raise InputError(f"d must be <= p (marginals have at most p coordinates), got d={di}, p={pi}")
    return pi, di


def check_parameters(delta: float, Delta: float) -> tuple[float, float]:
    """Validate the box parameters: require 0 < delta and 2*delta <= 1 <= Delta - delta (R).

    This puts the uniform density u_m inside both boxes of the algorithm (BSV only states
    Delta > delta > 0). Returns ``(delta, Delta)`` as floats; raises :class:`InputError` otherwise.
    """
    dl = positive_float("delta", delta)
    if isinstance(Delta, bool) or not isinstance(Delta, numbers.Real) or not math.isfinite(float(Delta)):
        raise InputError(f"Delta must be a finite number, got {Delta!r}")
    Dl = float(Delta)
    if not (2.0 * dl <= 1.0 <= Dl - dl):
        raise InputError(f"need 0 < delta, 2*delta <= 1 <= Delta - delta; got delta={dl:g}, Delta={Dl:g}")
    return dl, Dl


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def walsh_size(p: int, d: int, include_empty: bool = True) -> int:
    """L = sum_{t<=d} C(p, t), the number of Walsh functions of degree <= d (exact int).

    With ``include_empty=False`` the empty set is dropped (Pierquin et al.'s p(p+1)/2 for d = 2).
    """
    from privsample.cube.walsh import walsh_size as count

    pi, di = _check_pd(p, d)  # stricter than walsh.py's check (p >= 1, 1 <= d <= p, integers)
    total = count(pi, di)
    return total if include_empty else total - 1


def _log(x: int | float) -> float:
    """Natural log of a positive int (arbitrary size) or float."""
    return math.log(x)


def _exp_int(x: float, *, ceil: bool) -> int:
    """floor/ceil of e^x as an int; exact-ish below e^700, float-accurate (approximate) above."""
    if x < _EXP_MAX:
        v = math.exp(x)
        return math.ceil(v) if ceil else math.floor(v)
    shift = int(x / _LN2) - 60
    mant = math.exp(x - shift * _LN2)
    return (math.ceil(mant) if ceil else math.floor(mant)) << shift


def _exp_float(x: float) -> float:
    """e^x as a float, ``inf`` instead of OverflowError."""
    return math.inf if x > 709.78 else math.exp(x)


def _log_bound(
    ln_n: float, ln_L: float, d: float, ln_m: float, ln_delta: float, ln_Delta: float, ln_eps: float
) -> float:
    """ln of Thm 12.2's right-hand side, all inputs as natural logs (no validation)."""
    return ln_eps - _LN_4SQRT2 + 1.5 * (ln_delta - ln_Delta) - d / 2.0 - 0.25 * ln_L + 0.5 * ln_n - 0.75 * ln_m


def _validated(
    n: object, p: object, d: object, m: object, delta: float, Delta: float, include_empty: bool
) -> tuple[int, int, int, int, float, float, int]:
    ni = _as_int("n", n)
    pi, di = _check_pd(p, d)
    mi = _as_int("m", m)
    dl, Dl = check_parameters(delta, Delta)
    L = walsh_size(pi, di, include_empty)
    if L < 1:
        raise InputError("L must be >= 1")
    return ni, pi, di, mi, dl, Dl, L


def _bound_fn(n: object, p: object, d: object, m: object, delta: float, Delta: float, include_empty: bool):
    """Validate, then return ``f(ln_n, ln_eps)`` = ln of Thm 12.2's bound on k.

    Every public function decides "k is certified" as ``ln k <= f(ln n, ln eps)`` with this same
    function, so max_k, certified_epsilon and required_n agree exactly (no rounding mismatch).
    """
    _, _, di, mi, dl, Dl, L = _validated(n, p, d, m, delta, Delta, include_empty)
    ln_L, ln_m, ln_dl, ln_Dl = _log(L), _log(mi), math.log(dl), math.log(Dl)

    def f(ln_n: float, ln_eps: float) -> float:
        return _log_bound(ln_n, ln_L, di, ln_m, ln_dl, ln_Dl, ln_eps)

    return f


# ---------------------------------------------------------------------------------------------------
# Thm 12.2 (privacy)
# ---------------------------------------------------------------------------------------------------
def log_k_bound(
    n: int, p: int, d: int, m: int, delta: float, Delta: float, epsilon: float, *, include_empty: bool = True
) -> float:
    """Natural log of Thm 12.2's bound on k:
    ``eps (delta/Delta)^{3/2} e^{-d/2} L^{-1/4} sqrt(n) / (4 sqrt(2) m^{3/4})``."""
    eps = positive_float("epsilon", epsilon)
    f = _bound_fn(n, p, d, m, delta, Delta, include_empty)
    return f(_log(_as_int("n", n)), math.log(eps))


def k_bound(
    n: int, p: int, d: int, m: int, delta: float, Delta: float, epsilon: float, *, include_empty: bool = True
) -> float:
    """Thm 12.2's real-valued bound on k (may underflow to 0.0 for huge m)."""
    return _exp_float(log_k_bound(n, p, d, m, delta, Delta, epsilon, include_empty=include_empty))


def certified_epsilon(
    n: int, p: int, d: int, m: int, delta: float, Delta: float, k: int, *, include_empty: bool = True
) -> float:
    """Smallest eps for which Thm 12.2 certifies releasing k points as eps-DP.

    Solves the k-condition for eps: ``eps = 4 sqrt(2) k (Delta/delta)^{3/2} e^{d/2} L^{1/4}
    m^{3/4} / sqrt(n)``, rounded up (by a few ulps) so that :func:`max_k` at the returned eps is
    >= k. Returns ``inf`` if eps exceeds the float range.
    """
    ki = _as_int("k", k)
    f = _bound_fn(n, p, d, m, delta, Delta, include_empty)
    ln_n = _log(_as_int("n", n))
    lk = math.log(ki)
    x = lk - f(ln_n, 0.0)
    if x > 709.0:
        return math.inf
    eps = math.exp(x)
    for _ in range(256):  # nudge up until the condition holds exactly as max_k tests it
        if lk <= f(ln_n, math.log(eps)):
            return eps
        eps = math.nextafter(eps, math.inf)
    raise AssertionError("certified_epsilon: no convergence")  # pragma: no cover


def max_k(
    n: int, p: int, d: int, m: int, delta: float, Delta: float, epsilon: float, *, include_empty: bool = True
) -> int:
    """Largest integer k allowed by Thm 12.2 at this eps (may be 0)."""
    lb = log_k_bound(n, p, d, m, delta, Delta, epsilon, include_empty=include_empty)
    k = _exp_int(lb, ceil=False)
    if k < 2**52:
        while math.log(k + 1) <= lb:
            k += 1
        while k > 0 and math.log(k) > lb:
            k -= 1
    return k


def required_n(
    p: int, d: int, m: int, delta: float, Delta: float, k: int, epsilon: float, *, include_empty: bool = True
) -> int:
    """Smallest integer n for which Thm 12.2 certifies k points at eps.

    Exact (n certifies, n - 1 does not) while n < 2^52; beyond that, accurate to float precision.
    """
    ki = _as_int("k", k)
    ln_eps = math.log(positive_float("epsilon", epsilon))
    f = _bound_fn(1, p, d, m, delta, Delta, include_empty)
    lk = math.log(ki)

    def ok(nn: int) -> bool:
        return lk <= f(_log(nn), ln_eps)

    n = max(1, _exp_int(2.0 * (lk - f(0.0, ln_eps)), ceil=True))
    if n < 2**52:
        while not ok(n):
            n += 1
        while n > 1 and ok(n - 1):
            n -= 1
    return n


def sensitivity_bound(
    n: int, p: int, d: int, m: int, delta: float, Delta: float, *, include_empty: bool = True
) -> float:
    """S_inf (R): the sup-norm sensitivity of h implied by Thm 12.2 for replace-one neighbours.

    ``S_inf = 4 sqrt(2) Delta^{3/2} delta^{-1/2} e^{d/2} L^{1/4} m^{-1/4} n^{-1/2}``. Since
    h >= delta/m, k * ln(h_X/h_X') <= k m S_inf / delta, which equals eps exactly at Thm 12.2's
    bound on k. (The note's formula has an extra 1/m, which is inconsistent with m^{-3/4} in
    Thm 12.2; BSV Lemma 12.1 itself was not recovered.)
    """
    ni, _, di, mi, dl, Dl, L = _validated(n, p, d, m, delta, Delta, include_empty)
    x = (
        _LN_4SQRT2
        + 1.5 * math.log(Dl)
        - 0.5 * math.log(dl)
        + di / 2.0
        + 0.25 * _log(L)
        - 0.25 * _log(mi)
        - 0.5 * _log(ni)
    )
    return _exp_float(x)


# ---------------------------------------------------------------------------------------------------
# Thm 12.4 (accuracy)
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccuracyRequirements:
    """Thm 12.4's assumptions (log10 where values can be huge).

    Attributes: ``log10_n_min`` (n >= 16 delta^-2 gamma^-1 e^{2d} L), ``log10_m_min``
    (m >= 16 delta^-2 gamma^-1 Delta^2 e^{2d} L), ``log10_m_max`` (m <= 2^{p/4}), ``k_min``
    (k >= 4 delta^-2 (ln(2/gamma) + ln L), natural log), ``consistent`` (m_min <= m_max),
    ``success_probability`` (1 - 4 gamma - 2^{-p/2}, may be <= 0) and ``marginal_tolerance``
    (4 delta, the guaranteed error of every marginal of dimension <= d).
    """

    log10_n_min: float
    log10_m_min: float
    log10_m_max: float
    k_min: float
    consistent: bool
    success_probability: float
    marginal_tolerance: float

    @property
    def k_min_int(self) -> int:
        """Smallest integer k meeting the k assumption."""
        return math.ceil(self.k_min)


def accuracy_requirements(
    p: int, d: int, delta: float, Delta: float, gamma: float, *, include_empty: bool = True
) -> AccuracyRequirements:
    """Thm 12.4's lower bounds on n, m, k and the upper bound 2^{p/4} on m (validated inputs)."""
    pi, di = _check_pd(p, d)
    dl, Dl = check_parameters(delta, Delta)
    g = positive_float("gamma", gamma)
    if g >= 1.0:
        raise InputError(f"gamma must be in (0, 1), got {gamma!r}")
    L = walsh_size(pi, di, include_empty)
    ln_n = math.log(16.0) - 2 * math.log(dl) - math.log(g) + 2 * di + _log(L)
    ln_m = ln_n + 2 * math.log(Dl)
    ln_mmax = pi / 4 * _LN2
    k_min = 4.0 / dl**2 * (math.log(2.0 / g) + _log(L))
    return AccuracyRequirements(
        log10_n_min=ln_n / _LN10,
        log10_m_min=ln_m / _LN10,
        log10_m_max=ln_mmax / _LN10,
        k_min=k_min,
        consistent=ln_m <= ln_mmax,
        success_probability=1.0 - 4.0 * g - 2.0 ** (-pi / 2),
        marginal_tolerance=4.0 * dl,
    )


# ---------------------------------------------------------------------------------------------------
# Pierquin et al. 2023: eq. (3) (relaxed) and eq. (4) (ideal)
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RelaxedBounds:
    """Eq. (3) for one dataset: k <= k_coefficient / m^{3/4} and m_min <= m <= 2^{p/4} (log10)."""

    p: int
    n: int
    fn_inf: float
    epsilon: float
    log10_k_coefficient: float
    log10_m_min: float
    log10_m_max: float

    @property
    def k_coefficient(self) -> float:
        """c in k <= c / m^{3/4} (0.0 on underflow)."""
        return _exp_float(self.log10_k_coefficient * _LN10)

    @property
    def m_min(self) -> float:
        """Lower bound on m (inf if beyond float range)."""
        return _exp_float(self.log10_m_min * _LN10)

    @property
    def m_max(self) -> float:
        """Upper bound 2^{p/4} on m."""
        return _exp_float(self.log10_m_max * _LN10)

    @property
    def consistent(self) -> bool:
        """Whether the m interval is non-empty."""
        return self.log10_m_min <= self.log10_m_max


def relaxed_bounds(p: int, n: int, fn_inf: float, epsilon: float = 1.0) -> RelaxedBounds:
    """Eq. (3): Thm 12.2/12.4 with d = 2, delta = 1/4, gamma = 1/8, Delta = 2^p ||f_n||_inf and
    L = p(p+1)/2 (empty set dropped, Pierquin et al.'s convention).

    Gives k <= 9.7e-3 sqrt(n) eps / (2^{3p/2} ||f_n||^{3/2} (p(p+1))^{1/4} m^{3/4}) and
    5.6e4 ||f_n||^2 p(p+1) 2^{2p} <= m <= 2^{p/4} (exact constants EQ3_K/M_CONSTANT).
    Requires 2^-p <= ||f_n||_inf <= 1 (a density on the cube).
    """
    pi = _as_int("p", p, minimum=2)
    ni = _as_int("n", n)
    f = positive_float("fn_inf", fn_inf)
    eps = positive_float("epsilon", epsilon)
    ln_f = math.log(f)
    if f > 1.0 or ln_f < -pi * _LN2 * (1 + 1e-12):
        raise InputError(f"fn_inf must be in [2^-p, 1] for a density on the cube, got {fn_inf!r}")
    ln_L = _log(pi * (pi + 1) // 2)
    ln_Delta = pi * _LN2 + ln_f
    ln_delta = math.log(_EQ_DELTA)
    ln_k = _log_bound(_log(ni), ln_L, _EQ_D, 0.0, ln_delta, ln_Delta, math.log(eps))
    ln_m = math.log(16.0) - 2 * ln_delta - math.log(_EQ_GAMMA) + 2 * _EQ_D + ln_L + 2 * ln_Delta
    return RelaxedBounds(
        p=pi,
        n=ni,
        fn_inf=f,
        epsilon=eps,
        log10_k_coefficient=ln_k / _LN10,
        log10_m_min=ln_m / _LN10,
        log10_m_max=pi / 4 * _LN2 / _LN10,
    )


def ideal_log10_m_min(p: int) -> float:
    """log10 of eq. (4)'s m lower bound 5.6e4 p(p+1) (Delta = 1; exact constant 1024 e^4)."""
    pi = _as_int("p", p)
    return math.log10(EQ3_M_CONSTANT * pi * (pi + 1))


def ideal_log10_k_max(p: int, epsilon: float) -> float:
    """log10 of eq. (4)'s k bound with n = 2^p and m at its lower bound:
    2.6588e-6 eps 2^{p/2} / (p(p+1)) (Figure 1's curve)."""
    pi = _as_int("p", p)
    eps = positive_float("epsilon", epsilon)
    return (math.log(EQ4_K_CONSTANT * eps) + pi / 2 * _LN2 - math.log(pi * (pi + 1))) / _LN10


def ideal_p_threshold(k: float, epsilon: float, p_max: int = 100_000) -> int:
    """Smallest p >= 1 with eq. (4)'s k_max(p) >= k (k may be fractional, e.g. 0.1)."""
    kk = positive_float("k", k)
    eps = positive_float("epsilon", epsilon)
    target = math.log10(kk)
    for p in range(1, p_max + 1):
        if ideal_log10_k_max(p, eps) >= target:
            return p
    raise InputError(f"no p <= {p_max} reaches k = {k!r} at epsilon = {epsilon!r}")
