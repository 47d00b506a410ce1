"""Noise-free private sampling on the Boolean cube (Boedihardjo, Strohmer and Vershynin 2021, Algorithm 2;
LP/QP of Pierquin, Zimmermann and Boussard 2023).

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public (BSV Thm 12.2), where epsilon
is :func:`privsample.cube.bounds.certified_epsilon` for (n, p, d, m, delta, Delta, k) times the
solver margin :func:`solver_margin` (below). Argument: the reduced space S is drawn
independently of the data and the conditioning test looks only at S; every density h on S that the
algorithm can output is >= delta/m, and one replaced record moves h* by at most S_inf in sup norm (BSV
Lemma 12.1, as reconstructed in the note), so h_X(y) <= (1 + m S_inf / delta) h_X'(y) <= e^{eps/k} h_X'(y)
at the certified epsilon; by the private-sampling lemma (BSV 3.3), k i.i.d. draws are then epsilon-DP.
There is no added noise: the randomness is the draw of the k indices from h*, which comes from the noise
source (OpenDP's Gumbel noisy max with scores log h*_i and scale 1 is an exact draw from h*; a seeded
source is NOT private and says so).

What is released: the k draws (decoded to the table's columns) and public parameters (n, p, d, m, L,
delta, Delta, k, the certified epsilon). Nothing computed from the data leaves :meth:`BooleanCubeSampler.sample`
otherwise: not lambda*, not the solver's residuals, iteration counts or time, not whether a retry or the
fallback happened. The fraction of draws that are valid codes is a function of the released draws and the
public encoding only (post-processing), so it may be reported.

Solver slack (accounted for by a margin). The density sampled from satisfies delta/m <= h <= Delta/m
*exactly* (checked in floating point after renormalising; :func:`privsample.cube.qp.exact_box`),
so the ratio step above holds as stated. The equality constraints hold only up to the solver's accuracy:
by the QP's KKT conditions the computed h = clip(u + A^T y) is the exact proximal point for the target
A h, which is accepted only if it is within eta(n) = max(1e-4 / n, 1e-11) of the exact target b(lambda*)
in sup norm (coefficient units; the lambda* bracket and the +tau included). One replaced record moves
every coefficient of the exact target by at most 2/n, so the computed targets of two neighbours differ by
at most 2/n + 2 eta = (2/n)(1 + n eta). Assuming, as for any bound C t^a (0 < a <= 1) in the target
difference t, that S_inf grows at most linearly under this enlargement, the sensitivity is at most
(1 + n eta) S_inf and the certified epsilon is multiplied by ``solver_margin(n) = 1 + n eta(n)``. This is
a margin under a stated assumption (Lemma 12.1 itself was not recovered), not a proof.

Failures (a data-dependent decision, documented). A solve that raises, or whose result is not within
eta(n) of its target, is retried with a fresh reduced space drawn independently of the data, at most
``SOLVER_ATTEMPTS`` times in all; if every attempt fails, the k draws come from the uniform density on the
last S (g = 1, i.e. lambda = 1, which satisfies delta/m <= h <= Delta/m). Nothing reports which of these
happened: the message, exit code, ledger and release info are the same. What a failure can reveal is
only through the draws: they come from another independently drawn S, or from the data-independent
uniform density. In exact arithmetic the exact algorithm never fails (lambda = 1 is always feasible and
the QP is feasible at every feasible lambda), so these events are floating-point ones; their probability
is not accounted for in epsilon.

In the ledger (a zCDP accountant) the release is recorded as rho = eps^2 / 2 (pure eps-DP implies
eps^2/2-zCDP) with the pure epsilon and the neighbouring relation in its details. The spend is recorded
before the data is read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.cube.encoding import CubeEncoding
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource

NEIGHBOURING = "replace one record (n public)"
DEFAULT_DELTA, DEFAULT_DELTA_UPPER = 0.25, 4.0
MAX_DENSE_BYTES = 2 * 2**30  # refuse an S (int8 signs) or a Walsh Gram matrix (float64) bigger than this
SOLVER_ATTEMPTS = 3  # solves on fresh reduced spaces before the uniform fallback
TARGET_SLACK_REL = 1e-4  # eta(n) = max(TARGET_SLACK_REL / n, TARGET_SLACK_ABS): accepted target deviation
TARGET_SLACK_ABS = 1e-11


class CertificationError(InputError):
    """The requested release is not certified at the user's epsilon (message: certified epsilon, k, n)."""


def target_slack(n: int) -> float:
    """eta(n): how far (sup norm, coefficient units) the target of the computed density may be from b(lambda*)."""
    return max(TARGET_SLACK_REL / max(int(n), 1), TARGET_SLACK_ABS)


def solver_margin(n: int) -> float:
    """1 + n eta(n): the factor on Thm 12.2's epsilon that covers the solver's accepted slack (module docstring)."""
    return 1.0 + int(n) * target_slack(n)


@dataclass
class CubeRelease:
    """What :meth:`BooleanCubeSampler.sample` returns: the draws and public parameters only."""

    codes: dict[str, np.ndarray]
    bits: np.ndarray  # the k released points of S (k x p, +-1)
    valid: np.ndarray  # which released points were valid codes (a function of ``bits`` only)
    epsilon: float  # the certified pure epsilon (replace-one, n public)
    info: dict[str, Any] = field(default_factory=dict)  # public parameters and the valid fraction

    @property
    def valid_fraction(self) -> float:
        return float(self.valid.mean()) if self.valid.size else 1.0


def default_m(p: int, d: int) -> int:
    """4 L: comfortably above the L the conditioning test needs (uniform S of size m >= 2L passes with
    high probability), and small, since the certified k shrinks like m^(-3/4)."""
    from privsample.cube.walsh import walsh_size

    return 4 * walsh_size(p, d)


def _required_n(p: int, d: int, m: int, delta: float, Delta: float, k: int, epsilon: float) -> int | None:
    """Smallest n with certified_epsilon(n) * solver_margin(n) <= epsilon, or None if no n suffices."""
    from privsample.cube import bounds as cb

    n = cb.required_n(p, d, m, delta, Delta, k, epsilon)
    for _ in range(200):  # increasing fixed-point iteration, never above the smallest solution
        if n * TARGET_SLACK_ABS > 1e3:
            return None
        nxt = cb.required_n(p, d, m, delta, Delta, k, epsilon / solver_margin(n))
        if nxt <= n:
            return n
        n = nxt
    return None


class BooleanCubeSampler:
    """BSV's private sampler (Algorithm 2): reduced space S, conditioning test, lambda*, h*, k draws."""

    def __init__(
        self,
        *,
        degree: int = 2,
        m: int | None = None,
        delta: float = DEFAULT_DELTA,
        Delta: float = DEFAULT_DELTA_UPPER,
        resample: int = 20,
        invalid: str = "repair",
        attempts: int = SOLVER_ATTEMPTS,
    ):
        from privsample.cube.bounds import check_parameters

        if int(degree) < 1:
            raise InputError(f"degree must be >= 1, got {degree}")
        if int(attempts) < 1:
            raise InputError(f"attempts must be >= 1, got {attempts}")
        check_parameters(delta, Delta)
        self.degree, self.m, self.delta, self.Delta = int(degree), m, float(delta), float(Delta)
        self.resample, self.invalid, self.attempts = int(resample), invalid, int(attempts)

    # -- public planning -------------------------------------------------------------------------
    def plan(self, encoding: CubeEncoding, n: int, k: int, epsilon: float | None = None) -> dict[str, Any]:
        """Parameters and what Thm 12.2 (with the solver margin) certifies for them (no data read; n is public)."""
        from privsample.cube import bounds as cb
        from privsample.cube.walsh import walsh_size

        p, d = encoding.p, self.degree
        if p < 1:
            raise InputError("the schema has no informative bits (every column has a single code)")
        if d > p:
            raise InputError(f"degree d = {d} exceeds the number of bits p = {p}")
        L = walsh_size(p, d)
        if 8 * L * L > MAX_DENSE_BYTES:
            raise InputError(
                f"p = {p} bits and degree d = {d} give L = {L:,} Walsh features: the L x L Gram matrix "
                f"alone needs {8 * L * L / 2**30:.1f} GB; lower --degree or encode fewer columns"
            )
        m = int(self.m) if self.m is not None else default_m(p, d)
        if m < L:
            raise InputError(
                f"m = {m} is smaller than the number of Walsh features L = {L} (p = {p}, d = {d}): "
                "the conditioning test cannot pass; use m >= 2L"
            )
        if m * p > MAX_DENSE_BYTES:
            raise InputError(f"m x p = {m} x {p} signs need {m * p / 2**30:.1f} GB: too big for memory")
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        if n < 1:
            raise InputError("the table is empty")
        theorem = cb.certified_epsilon(n, p, d, m, self.delta, self.Delta, k)
        margin = solver_margin(n)
        out = {
            "p": p,
            "d": d,
            "L": L,
            "m": m,
            "n": int(n),
            "k": int(k),
            "delta": self.delta,
            "Delta": self.Delta,
            "theorem_epsilon": theorem,
            "solver_margin": margin,
            "certified_epsilon": theorem * margin,
        }
        if epsilon is not None:
            out["epsilon"] = float(epsilon)
            out["max_k"] = cb.max_k(n, p, d, m, self.delta, self.Delta, float(epsilon) / margin)
            out["required_n"] = _required_n(p, d, m, self.delta, self.Delta, k, float(epsilon))
        return out

    def refuse_unless_certified(self, plan: dict[str, Any]) -> None:
        eps, cert = plan["epsilon"], plan["certified_epsilon"]
        if eps + 1e-12 * max(1.0, cert) < cert:
            need = (
                f"k={plan['k']} would need n >= {plan['required_n']:.4g} records"
                if plan["required_n"]
                else f"no n certifies k={plan['k']} at this epsilon"
            )
            raise CertificationError(
                f"releasing k={plan['k']} points certifies only epsilon >= {cert:.4g} (BSV Thm 12.2 with the solver "
                f"margin, n={plan['n']}, p={plan['p']}, d={plan['d']}, m={plan['m']}); at epsilon={eps:g} at most "
                f"k={plan['max_k']} points can be released, and {need}"
            )

    # -- the mechanism ------------------------------------------------------------------------------
    def reduced_space(self, p: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """S, drawn independently of the data, redrawn (data-independently) until it is well conditioned."""
        from privsample.cube.walsh import draw_reduced_space, well_conditioned

        for attempt in range(1, self.resample + 2):
            S = draw_reduced_space(p, m, rng)
            if well_conditioned(S, self.degree):
                return S, attempt
        raise InputError(
            f"the reduced space failed the conditioning test {self.resample + 1} times (m = {m}); increase m"
        )

    def _solve(self, S: np.ndarray, c_f: np.ndarray, n: int) -> np.ndarray | None:
        """h on S if the solver succeeds within eta(n) of its target, else None (never raises, prints nothing)."""
        import warnings

        from privsample.cube.lp import DEFAULT_TAU
        from privsample.cube.solver import solve

        eta = target_slack(n)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                sol = solve(S, c_f, self.degree, self.delta, self.Delta, tau=min(DEFAULT_TAU, eta / 8))
        except Exception:  # noqa: BLE001 - any failure is data-dependent: retry, never report
            return None
        h = np.asarray(sol.h, dtype=np.float64)
        m = S.shape[0]
        dev = sol.residuals.get("target", math.inf)
        ok = (
            sol.certified
            and math.isfinite(dev)
            and dev <= eta
            and h.shape == (m,)
            and bool(np.all(np.isfinite(h)))
            and float(h.min()) >= self.delta / m
            and float(h.max()) <= self.Delta / m
        )
        return h if ok else None

    def density(
        self, engine, encoding: CubeEncoding, m: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """(S, h): the density to draw from, with the retries and the uniform fallback of the module docstring."""
        n = engine.total()
        c_f = encoding.coefficients(engine, self.degree)
        S = None
        for _ in range(self.attempts):
            S, _ = self.reduced_space(encoding.p, m, rng)
            h = self._solve(S, c_f, n)
            if h is not None:
                return S, h
        return S, np.full(m, 1.0 / m)  # data-independent: the uniform density on S (lambda = 1)

    def sample(
        self,
        engine,
        encoding: CubeEncoding,
        k: int,
        accountant: Accountant,
        noise: NoiseSource,
        *,
        epsilon: float,
        rng: np.random.Generator | None = None,
    ) -> CubeRelease:
        """Release k points (decoded to the table's columns) if Thm 12.2 certifies ``epsilon`` for them.

        ``rng`` is the *public* randomness (S and the repair of invalid codes): it need not be secret,
        since the guarantee holds for every S drawn independently of the data. The result holds the
        draws and public parameters only (module docstring)."""
        rng = rng if rng is not None else np.random.default_rng()
        n = engine.total()  # public in the replace-one model
        plan = self.plan(encoding, n, k, epsilon)
        self.refuse_unless_certified(plan)
        rho = plan["certified_epsilon"] ** 2 / 2
        if not accountant.can_spend(rho):
            raise CertificationError(
                f"the certified epsilon {plan['certified_epsilon']:.4g} needs rho = {rho:.4g} "
                f"but only {accountant.remaining:.4g} remains"
            )
        accountant.spend(
            rho,
            "cube/sample",
            mechanism="BSV private sampling (noise-free)",
            measured=f"{k} draws from h* on S (p={encoding.p}, d={self.degree}, m={plan['m']})",
            private=bool(getattr(noise, "private", False)),
            pure_epsilon=plan["certified_epsilon"],
            neighbouring=NEIGHBOURING,
            k=int(k),
            n=int(n),
            m=plan["m"],
        )
        S, h = self.density(engine, encoding, plan["m"], rng)
        scores = np.log(h)  # h >= delta/m > 0 exactly
        idx = np.array([noise.exponential(scores, 2.0, 1.0) for _ in range(int(k))], dtype=np.int64)
        bits = S[idx]
        codes, valid = encoding.decode(bits, rng, self.invalid)  # post-processing of the released bits
        info = {**plan, "neighbouring": NEIGHBOURING, "valid_fraction": float(valid.mean()) if valid.size else 1.0}
        return CubeRelease(codes=codes, bits=bits, valid=valid, epsilon=plan["certified_epsilon"], info=info)


__all__ = [
    "BooleanCubeSampler",
    "CubeRelease",
    "CertificationError",
    "default_m",
    "NEIGHBOURING",
    "SOLVER_ATTEMPTS",
    "solver_margin",
    "target_slack",
]
