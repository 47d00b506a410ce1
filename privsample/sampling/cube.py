"""Noise-free private sampling on the Boolean cube (Boedihardjo, Strohmer and Vershynin, seed 001,
Algorithm 2; LP/QP of Pierquin et al., seed 000; notes/private-sampling.md sections 2-4).

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public (BSV Thm 12.2), where epsilon
is the value :func:`privsample.sampling.cube_bounds.certified_epsilon` computes for (n, p, d, m,
delta, Delta, k). Argument (note section 4): the reduced space S is drawn independently of the data
and the conditioning test looks only at S; every density h on S that the algorithm can output is
>= delta/m, and one replaced record moves h* by at most S_inf in sup norm (BSV Lemma 12.1, as
reconstructed in the note), so h_X(y) <= (1 + m S_inf / delta) h_X'(y) <= e^{eps/k} h_X'(y) at the
certified epsilon; by the private-sampling lemma (BSV 3.3), k i.i.d. draws are then epsilon-DP. There is
no added noise: the randomness is the draw of the k indices from h*, which comes from the noise
source (OpenDP's Gumbel noisy max with scores log h*_i and scale 1 is an exact draw from h*; a
seeded source is NOT private and says so).

Caveats, stated rather than hidden: the proof assumes the exact lambda* and h*; we use
lambda_used = min(1, lambda* + tau) (feasible by monotonicity, note section 7) and a solver accurate to
about 1e-10, and the reconstructed sensitivity bound rests on the note's reading of BSV Lemma 12.1.
In the ledger (a zCDP accountant) the release is recorded as rho = eps^2 / 2 (pure eps-DP implies
eps^2/2-zCDP) with the pure epsilon and the neighbouring relation in its details.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.data.cube import CubeEncoding
from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource

NEIGHBOURING = "replace one record (n public)"
DEFAULT_DELTA, DEFAULT_DELTA_UPPER = 0.25, 4.0
MAX_DENSE_BYTES = 2 * 2**30  # refuse an S (int8 signs) or a Walsh Gram matrix (float64) bigger than this


class CertificationError(InputError):
    """The requested release is not certified at the user's epsilon (message: certified epsilon, k, n)."""


@dataclass
class CubeRelease:
    """What :meth:`BooleanCubeSampler.sample` returns."""

    codes: dict[str, np.ndarray]
    bits: np.ndarray               # the k released points of S (k x p, +-1)
    valid: np.ndarray              # which released points were valid codes of the table's columns
    epsilon: float                 # the certified pure epsilon (replace-one, n public)
    lam: float                     # lambda* used
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def valid_fraction(self) -> float:
        return float(self.valid.mean()) if self.valid.size else 1.0


def default_m(p: int, d: int) -> int:
    """4 L: comfortably above the L the conditioning test needs (uniform S of size m >= 2L passes with
    high probability), and small, since the certified k shrinks like m^(-3/4)."""
    from privsample.sampling.walsh import walsh_size

    return 4 * walsh_size(p, d)


class BooleanCubeSampler:
    """BSV's private sampler (seed 001 Alg. 2): reduced space S, conditioning test, lambda*, h*, k draws."""

    def __init__(self, *, degree: int = 2, m: int | None = None, delta: float = DEFAULT_DELTA,
                 Delta: float = DEFAULT_DELTA_UPPER, resample: int = 20, invalid: str = "repair"):
        from privsample.sampling.cube_bounds import check_parameters

        if int(degree) < 1:
            raise InputError(f"degree must be >= 1, got {degree}")
        check_parameters(delta, Delta)
        self.degree, self.m, self.delta, self.Delta = int(degree), m, float(delta), float(Delta)
        self.resample, self.invalid = int(resample), invalid

    # -- public planning -------------------------------------------------------------------------
    def plan(self, encoding: CubeEncoding, n: int, k: int, epsilon: float | None = None) -> dict[str, Any]:
        """Parameters and what Thm 12.2 certifies for them (no data read; n is public)."""
        from privsample.sampling import cube_bounds as cb
        from privsample.sampling.walsh import walsh_size

        p, d = encoding.p, self.degree
        if p < 1:
            raise InputError("the table has no informative bits (every column has a single value)")
        if d > p:
            raise InputError(f"degree d = {d} exceeds the number of bits p = {p}")
        L = walsh_size(p, d)
        if 8 * L * L > MAX_DENSE_BYTES:
            raise InputError(f"p = {p} bits and degree d = {d} give L = {L:,} Walsh features: the L x L Gram matrix "
                             f"alone needs {8 * L * L / 2**30:.1f} GB; lower --degree or encode fewer columns")
        m = int(self.m) if self.m is not None else default_m(p, d)
        if m < L:
            raise InputError(f"m = {m} is smaller than the number of Walsh features L = {L} (p = {p}, d = {d}): "
                             "the conditioning test cannot pass; use m >= 2L")
        if m * p > MAX_DENSE_BYTES:
            raise InputError(f"m x p = {m} x {p} signs need {m * p / 2**30:.1f} GB: too big for memory")
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        if n < 1:
            raise InputError("the table is empty")
        out = {"p": p, "d": d, "L": L, "m": m, "n": int(n), "k": int(k), "delta": self.delta, "Delta": self.Delta,
               "certified_epsilon": cb.certified_epsilon(n, p, d, m, self.delta, self.Delta, k)}
        if epsilon is not None:
            out["epsilon"] = float(epsilon)
            out["max_k"] = cb.max_k(n, p, d, m, self.delta, self.Delta, epsilon)
            out["required_n"] = cb.required_n(p, d, m, self.delta, self.Delta, k, epsilon)
        return out

    def refuse_unless_certified(self, plan: dict[str, Any]) -> None:
        eps, cert = plan["epsilon"], plan["certified_epsilon"]
        if eps + 1e-12 * max(1.0, cert) < cert:
            raise CertificationError(
                f"releasing k={plan['k']} points certifies only epsilon >= {cert:.4g} (BSV Thm 12.2, n={plan['n']}, "
                f"p={plan['p']}, d={plan['d']}, m={plan['m']}); at epsilon={eps:g} at most k={plan['max_k']} points "
                f"can be released, and k={plan['k']} would need n >= {plan['required_n']:.4g} records")

    # -- the mechanism ------------------------------------------------------------------------------
    def reduced_space(self, p: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """S, drawn independently of the data, redrawn (data-independently) until it is well conditioned."""
        from privsample.sampling.walsh import draw_reduced_space, well_conditioned

        for attempt in range(1, self.resample + 2):
            S = draw_reduced_space(p, m, rng)
            if well_conditioned(S, self.degree):
                return S, attempt
        raise InputError(f"the reduced space failed the conditioning test {self.resample + 1} times "
                         f"(m = {m}); increase m")

    def sample(self, engine, encoding: CubeEncoding, k: int, accountant: Accountant, noise: NoiseSource, *,
               epsilon: float, rng: np.random.Generator | None = None) -> CubeRelease:
        """Release k points (decoded to the table's columns) if Thm 12.2 certifies ``epsilon`` for them.

        ``rng`` is the *public* randomness (S and the repair of invalid codes): it need not be secret,
        since the guarantee holds for every S drawn independently of the data."""
        from privsample.sampling.cube_solver import solve

        rng = rng if rng is not None else np.random.default_rng()
        n = engine.total()  # public in the replace-one model
        plan = self.plan(encoding, n, k, epsilon)
        self.refuse_unless_certified(plan)
        rho = plan["certified_epsilon"] ** 2 / 2
        if not accountant.can_spend(rho):
            raise CertificationError(f"the certified epsilon {plan['certified_epsilon']:.4g} needs rho = {rho:.4g} "
                                     f"but only {accountant.remaining:.4g} remains")
        S, attempts = self.reduced_space(encoding.p, plan["m"], rng)
        c_f = encoding.coefficients(engine, self.degree)
        sol = solve(S, c_f, self.degree, self.delta, self.Delta)
        accountant.spend(rho, "cube/sample", mechanism="BSV private sampling (noise-free)",
                         measured=f"{k} draws from h* on S (p={encoding.p}, d={self.degree}, m={plan['m']})",
                         private=bool(getattr(noise, "private", False)), pure_epsilon=plan["certified_epsilon"],
                         neighbouring=NEIGHBOURING, k=int(k), n=int(n), m=plan["m"], lam=float(sol.lam))
        scores = np.log(np.maximum(np.asarray(sol.h, float), 1e-300))
        idx = np.array([noise.exponential(scores, 2.0, 1.0) for _ in range(int(k))], dtype=np.int64)
        bits = S[idx]
        codes, valid = encoding.decode(bits, rng, self.invalid)
        info = {**plan, "attempts": attempts, "lam": float(sol.lam), "solver_seconds": getattr(sol, "seconds", None),
                "valid_fraction": float(valid.mean()) if valid.size else 1.0, "neighbouring": NEIGHBOURING}
        return CubeRelease(codes=codes, bits=bits, valid=valid, epsilon=plan["certified_epsilon"],
                           lam=float(sol.lam), info=info)


__all__ = ["BooleanCubeSampler", "CubeRelease", "CertificationError", "default_m", "NEIGHBOURING"]
