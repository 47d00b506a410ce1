"""Noise-free private sampling on the Boolean cube (Boedihardjo, Strohmer and Vershynin 2021, Algorithm 2;
LP/QP of Pierquin, Zimmermann and Boussard 2023).

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public, epsilon = the box bound (proved), or, with
``theorem_bound=True``, the smaller of it and the theorem bound (``plan()["bound"]`` says which; the printed
guarantee names it). No noise is added: the k draws are OpenDP's
Gumbel noisy max on the scores log(h / max h), an exact draw for those scores (a seeded source is NOT private).
Released: the k draws and public parameters; never lambda*, residuals, iteration counts, times, or which branch
below was taken (messages, exit code, ledger and info are the same on every branch).

The box bound (proved, on every branch): :func:`box_epsilon` = k (ln(Delta/delta) + 3 NORM_SLACK +
SAMPLING_SLACK). Whatever the data and whichever branch ran, the density drawn from lies in [delta/m, Delta/m]
on S and sums to 1 within NORM_SLACK (an accepted solve is checked for both, exactly; the uniform density of a
rejected one is in the box since delta <= 1 <= Delta). So one draw gives any point of S a probability within
the factor (Delta/delta)(1 + t)/(1 - t) e^{4 tau} of its probability on any other dataset (t = NORM_SLACK, tau
the score rounding below), and k independent draws multiply the factors (S is public). This holds for any two
datasets, neighbours or not, and needs neither Lemma 12.1 nor a bound on how often the solve is rejected.

The theorem bound (only with ``theorem_bound=True``, and when smaller, at very large n): the certified epsilon of
BSV Thm 12.2 (:func:`privsample.cube.bounds.certified_epsilon`) times :func:`solver_margin`, *provided* conditions
(i) and (ii) below hold; neither is proved here. Argument: one replaced record moves the exact h* by at most S_inf
in sup norm (BSV Lemma 12.1, reconstructed), so h_X(y) <= (1 + m S_inf / delta) h_X'(y) <= e^{eps/k} h_X'(y), and k
i.i.d. draws are eps-DP (BSV Lemma 3.3).

Branches. Decided by public quantities only (n, p, d, m, k, epsilon, delta, Delta, the public rng): the refusal,
the budget check, drawing S and redrawing it until the conditioning test passes with a round-off allowance
(:meth:`BooleanCubeSampler.reduced_space`), refusing after ``resample + 1`` draws, and the repair of invalid codes
(post-processing of the draws). S and the state of the public rng afterwards do not depend on the data. Decided by
the data, exactly one: the solve of lambda*, h* on that S is *accepted* iff it returns, certifies its lambda*
bracket, gives a finite h inside [delta/m, Delta/m] exactly and a target A h within eta(n) of b(lambda*) (sup
norm, coefficient units; +tau and any repair by ``exact_box`` included). Accepted: k draws from h. Rejected: k
draws from the uniform density on the same S (lambda = 1), which does not depend on the data. There is no retry on
a fresh S (it would consume public randomness depending on the data and add a branch per attempt).
(i) Rejection (theorem bound only). Given S: both neighbours accepted, the ratio above holds; both rejected, equal
outputs; otherwise nothing bounds the ratio. So the release is (eps, beta_X + beta_X')-DP, beta_X = P_S[the solve on
X is rejected]. The exact algorithm always has an answer (lambda = 1 is feasible, the QP is feasible at every
feasible lambda), so a rejection is the solver stopping short numerically; no proof bounds beta for every dataset,
so no delta is charged: the ledger states the pure epsilon. Adversarial tables gave no rejection
(tests/test_cube_release.py): a measurement, not a bound.
(ii) Target slack (theorem bound only). One replaced record moves each coefficient of c_f by at most 2/n; an
accepted target is within eta of the exact shrunk target, an error that enters Lemma 12.1's chain after the
shrinkage step (Lipschitz constant >= 1), so it does no more than enlarging 2/n to 2/n + 2 eta = (2/n)(1 + n eta).
The margin multiplies S_inf by 1 + n eta. That is valid if Lemma 12.1 bounds the sensitivity by an increasing
concave function of a quantity its proof bounds through the per-coefficient difference (the L^{1/4} n^{-1/2} form of
S_inf suggests the square root of an l2 bound, for which the factor would be sqrt(1 + n eta)), if the perturbed
targets stay feasible for the LP box, and if the accepted h is the exact proximal point for its own target A h (KKT,
up to round-off). Lemma 12.1 was not recovered from the paper: an assumption, not a proof.
Sampling slack (proved, given numpy's log within 99 ulp). The scores log h - log max h (h normal floats: delta/m
below the smallest normal is refused) have |log h| < 2^10 and |score| < 2^11, so each is within 100 * 2^-42 of
log(h / max h), and each draw's log-ratio grows by <= 4 * 100 * 2^-42 < SAMPLING_SLACK = 1e-10. As 2 delta <= 1 <=
Delta - delta, d >= 1 and m >= L >= 2, the certified per-draw epsilon is >= EPS1_FLOOR / sqrt(n) (EPS1_FLOOR = 96),
so the term SAMPLING_SLACK sqrt(n) / EPS1_FLOOR of the margin covers it.

Ledger (zCDP accountant): rho = eps^2 / 2 (pure eps-DP implies eps^2/2-zCDP), with the pure epsilon and the
neighbouring relation in its details, spent before the data is read.
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
TARGET_SLACK_REL = 1e-4  # eta(n) = max(TARGET_SLACK_REL / n, TARGET_SLACK_ABS): accepted target deviation
TARGET_SLACK_ABS = 1e-11
SAMPLING_SLACK = 1e-10  # bound on the per-draw log-ratio added by rounding the scores (module docstring)
EPS1_FLOOR = 96.0  # sqrt(n) times the certified per-draw epsilon is at least this for admissible parameters
CONDITIONING_ROUNDOFF = 32.0  # the conditioning test's allowance: CONDITIONING_ROUNDOFF L^2 u e^{2d}
NORM_SLACK = 1e-9  # an accepted h sums to 1 within this (math.fsum): the box bound's normalisation term


class CertificationError(InputError):
    """The requested release is not certified at the user's epsilon (message: certified epsilon, k, n)."""


def target_slack(n: int) -> float:
    """eta(n): how far (sup norm, coefficient units) the target of the computed density may be from b(lambda*)."""
    return max(TARGET_SLACK_REL / max(int(n), 1), TARGET_SLACK_ABS)


def solver_margin(n: int) -> float:
    """1 + n eta(n) + SAMPLING_SLACK sqrt(n) / EPS1_FLOOR: the factor on Thm 12.2's epsilon that covers the
    solver's accepted target slack (an assumption) and the rounding of the sampling scores (proved); module
    docstring, (ii) and "Sampling slack"."""
    n = int(n)
    return 1.0 + n * target_slack(n) + SAMPLING_SLACK * math.sqrt(n) / EPS1_FLOOR


def box_epsilon(k: int, delta: float, Delta: float) -> float:
    """The proved bound (module docstring, "The box bound"): k (ln(Delta/delta) + 3 NORM_SLACK + SAMPLING_SLACK).
    Every density drawn from lies in [delta/m, Delta/m] and sums to 1 within NORM_SLACK, whichever branch ran, so
    one draw's probabilities on any two datasets differ by at most that factor: a function of public values."""
    return int(k) * (math.log(Delta / delta) + 3 * NORM_SLACK + SAMPLING_SLACK)


def conditioning_allowance(L: int, d: int) -> float:
    """How far above 1 :func:`privsample.cube.walsh.conditioning_margin` must be for the test to pass: a
    backward-error allowance for eigvalsh on the L x L integer Gram matrix (|error| <= L u ||G||, ||G|| <= m L,
    against the threshold m / (4 e^{2d})). A function of public quantities only."""
    return CONDITIONING_ROUNDOFF * float(L) ** 2 * np.finfo(np.float64).eps * math.exp(2.0 * int(d))


def sampling_scores(h: np.ndarray) -> np.ndarray:
    """log h - log max h: the scores of the noisy-max draw (probabilities proportional to h; h > 0 normal floats).
    |log h| < 2^10 and |score| < 2^11, so each score is within 100 ulp of 2^11 of its exact value if numpy's log
    is within 99 ulp; that is what SAMPLING_SLACK covers (no division, so nothing underflows)."""
    logs = np.log(np.asarray(h, dtype=np.float64))
    return logs - logs.max()


def accept_solution(sol, m: int, n: int, delta: float, Delta: float) -> bool:
    """Whether a solve on S is sampled from (the one data-dependent branch; module docstring): certified lambda*
    bracket, target within eta(n) of b(lambda*), finite h inside [delta/m, Delta/m] exactly, summing to 1 within
    NORM_SLACK (what the box bound needs)."""
    h = np.asarray(sol.h, dtype=np.float64)
    dev = sol.residuals.get("target", math.inf)
    return bool(
        sol.certified
        and math.isfinite(dev)
        and dev <= target_slack(n)
        and h.shape == (m,)
        and np.all(np.isfinite(h))
        and float(h.min()) >= delta / m
        and float(h.max()) <= Delta / m
        and abs(math.fsum(h.tolist()) - 1.0) <= NORM_SLACK
    )


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
        theorem_bound: bool = False,
    ):
        """``theorem_bound``: also allow BSV Thm 12.2's epsilon (with the solver margin) when it is smaller than the
        proved box bound; it rests on the two unproved conditions of the module docstring. Default: the box
        bound alone, proved on every branch."""
        from privsample.cube.bounds import check_parameters

        if int(degree) < 1:
            raise InputError(f"degree must be >= 1, got {degree}")
        check_parameters(delta, Delta)
        self.degree, self.m, self.delta, self.Delta = int(degree), m, float(delta), float(Delta)
        self.resample, self.invalid, self.theorem_bound = int(resample), invalid, bool(theorem_bound)

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
        if self.delta / m < np.finfo(np.float64).tiny:
            raise InputError(f"delta/m = {self.delta:g}/{m} is below the smallest normal float: raise delta")
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
            "box_epsilon": box_epsilon(k, self.delta, self.Delta),
        }
        # The release's epsilon: the proved box bound, or (only if asked) Thm 12.2's with its assumptions when smaller.
        use_theorem = self.theorem_bound and theorem * margin < out["box_epsilon"]
        out["bound"] = "theorem" if use_theorem else "box"
        out["certified_epsilon"] = theorem * margin if use_theorem else out["box_epsilon"]
        if epsilon is not None:
            out["epsilon"] = float(epsilon)
            box_k = int(float(epsilon) // box_epsilon(1, self.delta, self.Delta))
            thm_k = cb.max_k(n, p, d, m, self.delta, self.Delta, float(epsilon) / margin) if self.theorem_bound else 0
            out["max_k"] = max(thm_k, box_k)
            out["required_n"] = (
                _required_n(p, d, m, self.delta, self.Delta, k, float(epsilon)) if self.theorem_bound else None
            )
        return out

    def refuse_unless_certified(self, plan: dict[str, Any]) -> None:
        eps, cert = plan["epsilon"], plan["certified_epsilon"]
        if eps + 1e-12 * max(1.0, cert) < cert:
            if self.theorem_bound:
                need = (
                    f"k={plan['k']} would need n >= {plan['required_n']:.4g} records"
                    if plan["required_n"]
                    else f"no n certifies k={plan['k']} at this epsilon"
                )
                how = "the smaller of k ln(Delta/delta) and BSV Thm 12.2 with the solver margin"
            else:
                need = "a box closer to 1 (--small-delta up, --big-delta down) certifies more"
                how = "k ln(Delta/delta), proved"
            raise CertificationError(
                f"releasing k={plan['k']} points certifies only epsilon >= {cert:.4g} ({how}; n={plan['n']}, "
                f"p={plan['p']}, d={plan['d']}, m={plan['m']}, delta={self.delta:g}, Delta={self.Delta:g}); at "
                f"epsilon={eps:g} at most k={plan['max_k']} points can be released, and {need}"
            )

    # -- the mechanism ------------------------------------------------------------------------------
    def reduced_space(self, p: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """S, drawn from the public rng, redrawn until well conditioned (with :func:`conditioning_allowance`):
        a function of (p, m, d, rng) only, so neither S nor the number of draws depends on the data."""
        from privsample.cube.walsh import conditioning_margin, draw_reduced_space, walsh_size

        need = 1.0 + conditioning_allowance(walsh_size(p, self.degree), self.degree)
        for attempt in range(1, self.resample + 2):
            S = draw_reduced_space(p, m, rng)
            if conditioning_margin(S, self.degree) >= need:
                return S, attempt
        raise InputError(
            f"the reduced space failed the conditioning test {self.resample + 1} times (m = {m}); increase m"
        )

    def _solve(self, S: np.ndarray, c_f: np.ndarray, n: int) -> np.ndarray | None:
        """h on S if the solve is accepted (:func:`accept_solution`), else None (never raises, prints nothing)."""
        import warnings

        from privsample.cube.lp import DEFAULT_TAU
        from privsample.cube.solver import solve

        eta = target_slack(n)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                sol = solve(S, c_f, self.degree, self.delta, self.Delta, tau=min(DEFAULT_TAU, eta / 8))
            ok = accept_solution(sol, S.shape[0], n, self.delta, self.Delta)
        except Exception:  # noqa: BLE001 - a failure is the rejected branch: never reported
            return None
        return np.asarray(sol.h, dtype=np.float64) if ok else None

    def density(
        self, engine, encoding: CubeEncoding, m: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """(S, h): S from the public rng before the data is read, then one solve on it; a rejected solve gives
        the uniform density on the same S (module docstring, branches)."""
        S, _ = self.reduced_space(encoding.p, m, rng)  # public: nothing below changes S or the rng's state
        n = engine.total()  # public under replace-one
        c_f = encoding.coefficients(engine, self.degree)  # the only read of the records
        h = self._solve(S, c_f, n)
        return S, (h if h is not None else np.full(m, 1.0 / m))  # rejected: uniform on S (lambda = 1)

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
        scores = sampling_scores(h)  # h >= delta/m > 0 exactly; rounding covered by SAMPLING_SLACK
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
    "accept_solution",
    "conditioning_allowance",
    "sampling_scores",
    "solver_margin",
    "target_slack",
]
