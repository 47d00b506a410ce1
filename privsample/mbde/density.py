"""MBDE: mollified boosted density estimation, integrally private sampling of continuous data
(Husain, Cranko & Nock).

Guarantee (as the paper states it). A randomised algorithm A that outputs samples is epsilon-
*integrally private* (IP) if Pr[A(S) in B] <= e^epsilon Pr[A(S') in B] for every measurable B and
for **every** pair of datasets S, S' -- no adjacency condition and no equal-size condition. It
therefore protects any group of records, up to the whole dataset, and implies epsilon-DP for any
neighbouring relation (add/remove or replace one record). epsilon bounds how much any released
sample can tell apart *any two inputs*. One released sample of :class:`MBDEDensity` with per-sample
epsilon is epsilon-IP; m i.i.d. samples are (m epsilon)-IP (the joint density ratio is a product).
It is closed under post-processing (de-standardising, rounding, writing a table).

Why it holds. q_T(z) = q0(z) exp(g_T(z)) / Z_T with g_T = sum_t theta_t c_t:
1. q0 = N(0, I) (optionally truncated to a public box) is fixed before any data is read, or q0 is the output
   of a separate DP release fixed before the boosting starts (:mod:`privsample.mbde.fitted_q0`: the argument
   below holds for every value of q0, so it holds conditionally on the released q0, and the two costs add);
2. each weak classifier is squashed, c_t(z) = C* tanh(f_t(z)/2), so |c_t(z)| <= C* for **every** z
   and every weight, and the steps theta_t = r^t with r = epsilon / (epsilon + 4 C*) (data-independent)
   satisfy C* sum_t theta_t <= C* r/(1-r) = epsilon/4 for every T; hence |g_T| <= epsilon/4 everywhere,
   log Z_T in [-epsilon/4, epsilon/4] and |log q_T/q0| <= epsilon/2, i.e. q_T lies in the relative
   mollifier M_{epsilon,q0}, and q_S(z)/q_S'(z) <= e^epsilon for any two datasets;
3. released points are *exact* draws from q_T by rejection from q0 (accept with prob. exp(g_T - A),
   A = C* sum theta_t), so Pr[out in B] = Q_S(B) <= e^epsilon Q_S'(B) (the "privacy for free" lemma).
Training (which data, how many epochs, which RNG, the q_{t-1} samples used for training) only moves
the classifiers around inside the bound, so classifier training may use any randomness; the
guarantee holds for every realisation of it (:func:`mh_sample`, the paper's Metropolis-Hastings sampler,
is for those training samples only). The density q_T, its classifiers and the fit
diagnostics are deterministic functions of the data and are **not private**: they are never
released, and :class:`MBDEDensity` refuses to be pickled.

Randomness and floating point (see :mod:`privsample.mbde.release`). Released draws use OS entropy (``os.urandom``,
a CSPRNG): proposals are Gaussian floats by inverse-CDF of 53-bit uniforms (tails cut at about 8.3
standard deviations, a data-independent change of q0), accepted iff u < exp(min(g - A, 0)). Because
the proposal law is data-independent and g stays in [-A, A] in float64 (tanh is bounded by 1 in
floating point too, and a runtime guard checks every evaluated g), the output distribution on floats
is q0_float(z) exp(g(z)) / E_{q0_float}[exp g], whose ratio between any two datasets is at most
e^{2A} e^{2A} <= e^epsilon; the only slack is the 2^-53 grid of u, which inflates the ratio by at
most a factor (1 + 2^-53 e^{2A}). With a ``seed`` the draws use
NumPy's seeded generator: NOT private, labelled so everywhere. The rejection sampler's running time
depends on the data (a timing side channel), which the paper and this code ignore.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy.special import log_ndtr, logsumexp

from privsample.errors import InputError

IP_NEIGHBOURING = "any two datasets (integral privacy: no adjacency, any sizes)"
GUARANTEE = "integral privacy (Husain et al.)"
SCHEDULES = ("paper", "finite")


class PrivacyInvariantError(RuntimeError):
    """A bound the privacy proof needs does not hold (a bug or a deliberately broken variant)."""


# -- the step-size schedule (data-independent) -----------------------------------------------------


def step_sizes(epsilon: float, c_star: float = 1.0, T: int = 3, schedule: str = "paper") -> np.ndarray:
    """theta_1..theta_T, a pure function of public hyper-parameters, with C* sum theta <= epsilon/4.

    ``paper``: theta_t = r^t, r = epsilon/(epsilon + 4 C*) (sum over all t >= 1 equals epsilon/(4 C*)).
    ``finite``: the largest r with C* sum_{t<=T} r^t <= epsilon/4 (same proof, bigger steps; note 2)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be finite and > 0 (got {epsilon})")
    if not (math.isfinite(c_star) and c_star > 0):
        raise InputError(f"C* must be finite and > 0 (got {c_star})")
    if int(T) < 1:
        raise InputError(f"T must be >= 1 (got {T})")
    T = int(T)
    budget = epsilon / 4.0
    if schedule == "paper":
        r = epsilon / (epsilon + 4.0 * c_star)
    elif schedule == "finite":
        lo, hi = 0.0, max(1.0, budget / c_star)  # sum_{t<=T} hi^t >= hi >= budget/C*
        powers = np.arange(1, T + 1, dtype=np.float64)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            with np.errstate(over="ignore"):
                total = c_star * float(np.sum(mid**powers))
            if total <= budget:
                lo = mid
            else:
                hi = mid
        r = lo
    else:
        raise InputError(f"schedule must be one of {SCHEDULES} (got {schedule!r})")
    theta = r ** np.arange(1, T + 1, dtype=np.float64)
    while c_star * float(theta.sum()) > budget:  # float rounding only; never loops in practice
        theta = theta * (1.0 - 1e-15)
    return theta


# -- q0: the data-independent base density ---------------------------------------------------------


@dataclass(frozen=True)
class GaussianQ0:
    """q0 = N(mean, std^2 I) in model space, optionally truncated to the public box [-box, box]^d.

    Public use is mean 0, std 1 (``is_standard``), or a mean and std that are the output of a DP release
    (``released`` names the mechanism: :func:`privsample.mbde.fitted_q0.fit_q0`); other values exist only so
    the tests can build the "q0 fitted to the data" negative control."""

    d: int
    box: float | None = None
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    released: str | None = None

    @property
    def is_standard(self) -> bool:
        return self.mean is None and self.std is None

    def _ms(self):
        mu = np.zeros(self.d) if self.mean is None else np.asarray(self.mean, float)
        sd = np.ones(self.d) if self.std is None else np.asarray(self.std, float)
        return mu, sd

    def in_support(self, z: np.ndarray) -> np.ndarray:
        if self.box is None:
            return np.ones(len(z), dtype=bool)
        return np.all(np.abs(z) <= self.box, axis=1)

    def log_mass_in_box(self) -> float:
        if self.box is None:
            return 0.0
        mu, sd = self._ms()
        hi, lo = (self.box - mu) / sd, (-self.box - mu) / sd
        return float(np.sum(log_ndtr(hi) + np.log1p(-np.exp(log_ndtr(lo) - log_ndtr(hi)))))

    def log_pdf(self, z: np.ndarray) -> np.ndarray:
        """log q0(z) in float64 (-inf outside the box)."""
        z = np.asarray(z, np.float64)
        mu, sd = self._ms()
        u = (z - mu) / sd
        out = -0.5 * np.sum(u * u, axis=1) - np.sum(np.log(sd)) - 0.5 * self.d * math.log(2 * math.pi)
        out = out - self.log_mass_in_box()
        return np.where(self.in_support(z), out, -np.inf)

    def propose(self, n: int, rng) -> np.ndarray:
        """n draws of the *untruncated* Gaussian (callers reject those outside the box)."""
        mu, sd = self._ms()
        return mu + sd * rng.standard_normal((int(n), self.d))

    def sample(self, n: int, rng) -> np.ndarray:
        out, got = [], 0
        while got < n:
            z = self.propose(max(64, 2 * (n - got)), rng)
            z = z[self.in_support(z)]
            out.append(z)
            got += len(z)
        return np.concatenate(out)[:n]


# -- the learned density (NOT private: never release or save it) ------------------------------------

LogitFn = Callable[[np.ndarray], np.ndarray]


class MBDEDensity:
    """q_T(z) = q0(z) exp(g_T(z)) / Z_T, g_T = sum_t theta_t C* tanh(f_t(z)/2).

    NOT PRIVATE: a deterministic function of the training data. Use it to draw released samples
    (``privsample.mbde.release``) and, in experiments, to evaluate; never publish or save it."""

    def __init__(
        self,
        q0: GaussianQ0,
        epsilon: float,
        thetas: Sequence[float],
        logits: Sequence[LogitFn],
        c_star: float = 1.0,
        *,
        rounds: list[dict] | None = None,
        _unsafe_no_squash: bool = False,
        _unsafe_no_guard: bool = False,
    ):
        self.q0, self.epsilon, self.c_star = q0, float(epsilon), float(c_star)
        self.thetas = np.asarray(thetas, dtype=np.float64)
        self.logits = list(logits)
        self.rounds = rounds or []
        self._squash, self._guard = not _unsafe_no_squash, not _unsafe_no_guard
        if len(self.thetas) != len(self.logits):
            raise ValueError("one step size per classifier")
        if not (np.all(np.isfinite(self.thetas)) and np.all(self.thetas >= 0)):
            raise ValueError("step sizes must be finite and >= 0")
        self.bound = self.c_star * float(self.thetas.sum())  # A >= sup |g_T| when the squash is on
        if self._guard and not (self.bound <= self.epsilon / 4.0 * (1 + 1e-12)):
            raise PrivacyInvariantError(f"C* sum(theta) = {self.bound:.6g} exceeds epsilon/4 = {self.epsilon / 4:.6g}")

    @property
    def T(self) -> int:
        return len(self.thetas)

    def classifier_outputs(self, z: np.ndarray) -> np.ndarray:
        """c_t(z) for every round, shape (T, N), float64 (in [-C*, C*] for every z when squashed)."""
        z = np.asarray(z, np.float64).reshape(len(z), self.q0.d)
        out = np.empty((self.T, len(z)), dtype=np.float64)
        for t, f in enumerate(self.logits):
            v = np.asarray(f(z), dtype=np.float64).reshape(len(z))
            if self._squash:  # NaN logits (a diverged fit) count as 0: c_t stays a total map into [-C*, C*]
                out[t] = self.c_star * np.tanh(0.5 * np.where(np.isnan(v), 0.0, v))
            else:
                out[t] = v
        return out

    def g(self, z: np.ndarray) -> np.ndarray:
        """g_T(z) = log(q_T/q0) + log Z_T, float64; checked against the bound A unless the guard is off."""
        if self.T == 0:
            return np.zeros(len(z))
        gz = self.thetas @ self.classifier_outputs(z)
        if self._guard and not (np.all(np.isfinite(gz)) and np.all(np.abs(gz) <= self.bound * (1 + 1e-12))):
            raise PrivacyInvariantError("a classifier output left [-C*, C*] (|g_T| > C* sum theta or not finite)")
        return gz

    def log_normaliser(self, n: int = 100_000, rng: np.random.Generator | None = None) -> float:
        """Monte Carlo log Z_T = log E_{q0}[exp g_T] (evaluation only). Always within [-A, A]."""
        rng = rng if rng is not None else np.random.default_rng(0)
        return float(logsumexp(self.g(self.q0.sample(n, rng))) - math.log(n))

    def log_normaliser_quadrature(self, lo: float = -10.0, hi: float = 10.0, points: int = 801) -> float:
        """log Z_T by the midpoint rule on [lo, hi]^d (d <= 2; a cross-check of the Monte Carlo value)."""
        if self.q0.d > 2:
            raise ValueError("quadrature only for d <= 2")
        h = (hi - lo) / points
        axis = lo + h * (np.arange(points) + 0.5)
        grid = np.stack(np.meshgrid(*[axis] * self.q0.d, indexing="ij"), -1).reshape(-1, self.q0.d)
        return float(logsumexp(self.q0.log_pdf(grid) + self.g(grid)) + self.q0.d * math.log(h))

    def log_density(self, z: np.ndarray, log_z: float | None = None) -> np.ndarray:
        """log q_T(z) = log q0 + g - log Z (float64, model space). NOT private (evaluation only)."""
        log_z = self.log_normaliser() if log_z is None else log_z
        return self.q0.log_pdf(z) + self.g(z) - log_z

    def log_ratio(self, z: np.ndarray, log_z: float) -> np.ndarray:
        """L(z) = log q_T(z)/q0(z) = g_T(z) - log Z_T; |L| <= epsilon/2 everywhere."""
        return self.g(z) - log_z

    def sample(self, m: int, rng, *, return_proposals: bool = False):
        """m exact i.i.d. draws from q_T by rejection from q0: accept z ~ q0 iff u < exp(g(z) - A).

        ``rng`` needs ``standard_normal(shape)`` and ``random(n)``: the release code passes OS entropy."""
        m = int(m)
        A = self.bound
        out, got, proposals = [], 0, 0
        p_box = math.exp(self.q0.log_mass_in_box())
        while got < m:
            k = int(min(max(64, math.ceil((m - got) * math.exp(2 * A) * 1.2 / p_box)), 1 << 20))
            z = self.q0.propose(k, rng)
            u = rng.random(k)
            inside = self.q0.in_support(z)
            log_acc = np.full(k, -np.inf)
            if inside.any():
                log_acc[inside] = np.minimum(self.g(z[inside]) - A, 0.0)
            keep = z[u < np.exp(log_acc)]
            out.append(keep)
            got += len(keep)
            proposals += k
        z = np.concatenate(out)[:m] if out else np.empty((0, self.q0.d))
        return (z, proposals) if return_proposals else z

    # The density is a function of the data: refuse to be serialised (it is not a shareable model).
    def __reduce__(self):
        raise TypeError(
            "MBDEDensity is a deterministic function of the sensitive data and is NOT private: "
            "release samples (privsample.mbde.release), never the density"
        )


def mbde_density(
    epsilon: float,
    logits: Sequence[LogitFn],
    *,
    d: int,
    c_star: float = 1.0,
    schedule: str = "paper",
    q0: GaussianQ0 | None = None,
    **unsafe,
) -> MBDEDensity:
    """Assemble q_T from given raw logit functions f_1..f_T with the data-independent steps of
    :func:`step_sizes` (used by the adversarial-weak-learner tests; training builds the same object)."""
    thetas = step_sizes(epsilon, c_star, len(logits), schedule)
    if "_unsafe_theta" in unsafe:
        thetas = np.broadcast_to(np.asarray(unsafe.pop("_unsafe_theta"), float), thetas.shape).copy()
    return MBDEDensity(q0 or GaussianQ0(d), epsilon, thetas, logits, c_star, **unsafe)


# -- training ------------------------------------------------------------------------------------------


@dataclass
class MBDE:
    """The MBDE estimator at per-sample ``epsilon``, in model space
    (standardise with public bounds first: :class:`privsample.mbde.release.PublicStandardisation`).

    Defaults follow the note: T = 3, C* = 1, q0 = N(0, I), 3 x 25 tanh MLPs, Nesterov SGD (lr 0.01,
    momentum 0.9), 600 epochs with mini-batches of 5,000, N_Q = |S| (at least 1,000), 25% of S held out
    to measure the weak-learning constants, exact rejection sampling for the q_{t-1} training samples.
    ``max_train`` caps the training rows (a random subset; any preprocessing keeps integral privacy).
    ``q0``: a base density released beforehand by a DP mechanism (:mod:`privsample.mbde.fitted_q0`; its cost is
    the caller's to account), used instead of N(0, I) (and ``q0_box``)."""

    epsilon: float
    T: int = 3
    c_star: float = 1.0
    hidden: tuple[int, ...] = (25, 25, 25)
    epochs: int = 600
    batch_size: int | None = 5000
    lr: float = 0.01
    momentum: float = 0.9
    n_q: int | None = None
    holdout: float = 0.25
    schedule: str = "paper"
    q0_box: float | None = None
    train_sampler: str = "rejection"
    max_train: int = 20_000
    q0: GaussianQ0 | None = None
    mh_burn_in: int = 1000
    mh_chains: int = 20
    _unsafe_no_squash: bool = field(default=False, repr=False)
    _unsafe_theta: float | None = field(default=None, repr=False)
    _unsafe_fit_q0: bool = field(default=False, repr=False)
    _unsafe_no_guard: bool = field(default=False, repr=False)

    def __post_init__(self):
        if self.q0 is not None and not (self.q0.is_standard or self.q0.released):
            raise ValueError("a given q0 must be N(0, I) or the output of a DP release (GaussianQ0.released)")
        self.thetas = step_sizes(self.epsilon, self.c_star, self.T, self.schedule)  # before any data
        if self.train_sampler not in ("rejection", "mh"):
            raise InputError("train_sampler must be 'rejection' or 'mh'")
        if int(self.epochs) < 1 or not (0 <= self.holdout < 1):
            raise InputError("epochs must be >= 1 and holdout in [0, 1)")

    def _q0(self, d: int, z: np.ndarray) -> GaussianQ0:
        if self._unsafe_fit_q0:  # NEGATIVE CONTROL ONLY: q0 fitted to the data breaks the proof
            return GaussianQ0(d, self.q0_box, tuple(z.mean(0)), tuple(np.maximum(z.std(0), 1e-3)))
        if self.q0 is not None:
            if self.q0.d != d:
                raise InputError(f"q0 has {self.q0.d} dimensions but the data {d}")
            return self.q0
        return GaussianQ0(d, self.q0_box)

    def fit(self, data: np.ndarray, *, seed: int | None = None) -> MBDEDensity:
        """Train the T classifiers on ``data`` (model space, shape (n, d)) and return q_T (NOT private)."""
        return self.fit_grid(data, [self.epsilon], seed=seed)[0]

    def fit_grid(
        self,
        data: np.ndarray,
        epsilons: Sequence[float],
        *,
        seed: int | None = None,
        schedules: Sequence[str] | None = None,
    ) -> list[MBDEDensity]:
        """``fit`` for several per-sample epsilons (and step schedules) at once. Round 1 (S against q0)
        depends on neither, so its classifier is trained once and shared; later rounds are trained per
        entry. With a seed, each result equals ``MBDE(epsilon=e, schedule=s, ...).fit(data, seed=seed)``."""
        z = np.asarray(data, dtype=np.float64)
        if z.ndim != 2 or len(z) == 0:
            raise InputError("MBDE needs a non-empty (n, d) array")
        if not np.all(np.isfinite(z)):
            raise InputError("MBDE data must be finite")
        n, d = z.shape
        seed = int(np.random.SeedSequence().entropy % (2**63)) if seed is None else int(seed)
        hold, train = self._split(z, seed)
        n_q = int(self.n_q) if self.n_q else int(min(max(n, 1000), self.max_train))
        q0 = self._q0(d, z)
        assert q0.is_standard or q0.released or self._unsafe_fit_q0, "q0 must not depend on the data (but via DP)"
        plans = self._plans(epsilons, schedules)
        first = None  # round 1's (parameters, loss): trained once, shared by every entry
        results = []
        for eps, th in zip(epsilons, plans):
            density, first = self._fit_rounds(q0, float(eps), th, train, hold, n_q, seed, first)
            results.append(density)
        return results

    def _split(self, z: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """(held-out, training) records: a seeded permutation, ``holdout`` of them held out (none below 8
        records: then the training records stand in), the training records capped at ``max_train``."""
        n = len(z)
        perm = np.random.default_rng([seed, 0]).permutation(n)
        n_hold = int(self.holdout * n) if n >= 8 else 0
        hold, train = z[perm[:n_hold]], z[perm[n_hold:]]
        if len(train) > self.max_train:
            train = train[: self.max_train]
        if len(hold) == 0:
            hold = train
        return hold, train

    def _plans(self, epsilons: Sequence[float], schedules: Sequence[str] | None) -> list[np.ndarray]:
        """The step sizes of each (epsilon, schedule) entry: functions of the parameters only."""
        schedules = list(schedules) if schedules is not None else [self.schedule] * len(epsilons)
        if len(schedules) != len(epsilons):
            raise ValueError("one schedule per epsilon")
        plans = []
        for eps, sch in zip(epsilons, schedules):
            th = step_sizes(float(eps), self.c_star, self.T, sch)
            if self._unsafe_theta is not None:  # NEGATIVE CONTROL ONLY
                th = np.full(self.T, float(self._unsafe_theta))
            plans.append(th)
        if float(epsilons[0]) == self.epsilon and schedules[0] == self.schedule and self._unsafe_theta is None:
            assert np.array_equal(plans[0], self.thetas), "theta must not depend on the data"
        return plans

    def _fit_rounds(self, q0, eps: float, th, train, hold, n_q: int, seed: int, first):
        """The T rounds of one entry (round t's classifier separates the training records from samples of
        q_{t-1}; round 1's is ``first`` when given). Returns (q_T, round 1's (parameters, loss))."""
        from privsample.mbde import nets

        net_kw = dict(
            hidden=tuple(self.hidden),
            epochs=int(self.epochs),
            batch_size=self.batch_size,
            lr=self.lr,
            momentum=self.momentum,
        )
        params, rounds = [], []
        for t in range(self.T):
            t0 = time.perf_counter()
            rng = np.random.default_rng([seed, t + 1])
            current = MBDEDensity(
                q0,
                eps,
                th[:t],
                [_net_fn(p) for p in params],
                self.c_star,
                _unsafe_no_squash=self._unsafe_no_squash,
                _unsafe_no_guard=True,
            )
            if t == 0 and first is not None:
                p, loss = first
            else:
                xq = self._train_samples(current, n_q, rng)
                p, loss = nets.train_classifier(train, xq, rng, **net_kw)
                if t == 0:
                    first = (p, loss)
            params.append(p)
            rounds.append(self._diagnostics(current, p, th[t], hold, loss, t0, np.random.default_rng([seed, 99, t])))
        density = MBDEDensity(
            q0,
            eps,
            th,
            [_net_fn(p) for p in params],
            self.c_star,
            rounds=rounds,
            _unsafe_no_squash=self._unsafe_no_squash,
            _unsafe_no_guard=self._unsafe_no_guard,
        )
        return density, first

    def _train_samples(self, current: MBDEDensity, k: int, rng: np.random.Generator) -> np.ndarray:
        if self.train_sampler == "mh" and current.T > 0:
            return mh_sample(current, k, rng, burn_in=self.mh_burn_in, chains=self.mh_chains)
        return current.sample(k, rng)

    def _diagnostics(
        self,
        current: MBDEDensity,
        params,
        theta: float,
        hold: np.ndarray,
        loss: float,
        t0: float,
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        """Per-round weak-learning constants and the estimated KL drop (note 3). NOT private."""
        from privsample.mbde import nets

        def c(x):
            v = nets.evaluate_logits(params, x)
            return self.c_star * np.tanh(0.5 * v) if not self._unsafe_no_squash else v

        cp, cq = c(hold), c(current.sample(5000, rng))
        drop = float(theta * cp.mean() - (logsumexp(theta * cq) - math.log(len(cq))))
        return {
            "theta": float(theta),
            "gamma_P": float(cp.mean() / self.c_star),
            "gamma_Q": float(-cq.mean() / self.c_star),
            "kl_drop": drop,
            "train_loss": loss,
            "seconds": time.perf_counter() - t0,
        }


def _net_fn(params) -> LogitFn:
    from privsample.mbde import nets

    return lambda z: nets.evaluate_logits(params, z)


# -- Metropolis-Hastings (paper-faithful, for TRAINING samples only) -----------------------------------


def mh_sample(
    density: MBDEDensity, k: int, rng: np.random.Generator, *, burn_in: int = 1000, chains: int = 20, step: float = 1.0
) -> np.ndarray:
    """Random-walk Metropolis-Hastings on q_T (proposal N(0, step^2 I), chains started at q0 draws, never at
    data points). A finite chain is NOT an exact sample of q_T, so the privacy lemma does not cover it:
    use it only for the q_{t-1} training samples (the paper's choice), never for released samples."""
    d = density.q0.d
    per = int(math.ceil(k / chains))
    x = density.q0.sample(chains, rng)
    lp = density.q0.log_pdf(x) + density.g(x)
    out = np.empty((per, chains, d))
    for it in range(burn_in + per):
        prop = x + step * rng.standard_normal(x.shape)
        lpp = density.q0.log_pdf(prop)
        ok = np.isfinite(lpp)
        if ok.any():
            lpp[ok] = lpp[ok] + density.g(prop[ok])
        acc = np.log(rng.random(chains)) < lpp - lp
        x = np.where(acc[:, None], prop, x)
        lp = np.where(acc, lpp, lp)
        if it >= burn_in:
            out[it - burn_in] = x
    return out.transpose(1, 0, 2).reshape(-1, d)[:k]


__all__ = [
    "MBDE",
    "MBDEDensity",
    "GaussianQ0",
    "PrivacyInvariantError",
    "step_sizes",
    "mbde_density",
    "mh_sample",
    "IP_NEIGHBOURING",
    "GUARANTEE",
]
