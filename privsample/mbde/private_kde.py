"""Private KDE with the Bernstein mechanism (Aldà & Rubinstein 2017): MBDE's baseline,
plus the non-private Gaussian KDE used as a reference.

Mechanism. Map the public box [a, b]^d to [0, 1]^d (clipping), take the Gaussian KDE
f_S(u) = (1/n) sum_i prod_j phi_h(u_j - u_ij), and release its values on the Bernstein lattice,
beta_nu = f_S(nu/k) for nu in {0..k}^d, plus i.i.d. Laplace noise of scale (k+1)^d Delta / epsilon.
Replacing one record moves each beta_nu by at most Delta = (sqrt(2 pi) h)^-d / n, so the L1
sensitivity of the (k+1)^d coefficients is (k+1)^d Delta and the release is epsilon-DP for
**replace-one** neighbours with n public (the DP calibration). The integral-privacy calibration uses
Delta_IP = (sqrt(2 pi) h)^-d, n times larger (any two datasets of the public size n), i.e. the noise
of the DP release at epsilon/n. The density is f~(u) = sum_nu beta~_nu prod_j C(k, nu_j) u_j^nu_j
(1 - u_j)^(k - nu_j), made positive as the paper does by shifting and rescaling (p = (f~ - min f~ + tau)
/ integral; min over a fine grid, tau = 1e-3 (max - min)). That step only reads the released
coefficients, so it is post-processing.

Caveats, as in the paper: the bandwidth h is chosen by 10-fold cross-validation of the held-out
log-likelihood on the data (NOT private; the paper does the same), and n is treated as public.

Budget and noise. The release is pure epsilon-DP (resp. epsilon-IP), charged to the caller's
:class:`~privsample.privacy.Accountant` as rho = epsilon^2/2 (pure epsilon-DP implies epsilon^2/2-zCDP)
*before* any noise is drawn. The Laplace noise comes from the project noise source: with a private
source (``SecureNoise``), OpenDP's float Laplace mechanism (``make_laplace`` on a float vector, OpenDP's
floating-point-safe sampler; the project's ``NoiseSource.laplace`` only takes integer counts); with a
seeded source (``SeededNoise``, NOT private, warned when created) its NumPy generator, and the ledger
entry and the result are marked not private.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource

CALIBRATIONS = ("dp", "ip")
DEFAULT_DEGREE = {1: 30, 2: 20}


def _basis(u: np.ndarray, k: int) -> np.ndarray:
    """Bernstein basis b_{k,nu}(u) for a 1-D array u: shape (len(u), k+1)."""
    return binom.pmf(np.arange(k + 1)[None, :], k, np.clip(u, 0.0, 1.0)[:, None])


def _contract(beta: np.ndarray, bases: list[np.ndarray]) -> np.ndarray:
    """sum_nu beta[nu] prod_j bases[j][n, nu_j] for every row n."""
    letters = "abcdefgh"[: beta.ndim]
    spec = ",".join(f"n{c}" for c in letters) + f",{letters}->n"
    return np.einsum(spec, *bases, beta, optimize=True)


def select_bandwidth(
    u: np.ndarray,
    candidates: np.ndarray | None = None,
    *,
    folds: int = 10,
    max_points: int = 5000,
    rng: np.random.Generator | None = None,
) -> float:
    """Bandwidth (in [0,1]^d units) maximising the 10-fold held-out log-likelihood of the Gaussian KDE.
    NOT private (as in the paper). Above ``max_points`` rows, a random subset is used and the choice is
    rescaled by (subset/n)^(1/(d+4)) (the KDE rate)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    n, d = u.shape
    cand = np.geomspace(0.002, 0.2, 16) if candidates is None else np.asarray(candidates, float)
    x = u[rng.permutation(n)[:max_points]]
    m = len(x)
    folds = max(2, min(folds, m))
    parts = np.array_split(np.arange(m), folds)
    score = np.zeros(len(cand))
    for p in parts:
        train = np.setdiff1d(np.arange(m), p)
        d2 = np.sum((x[p][:, None, :] - x[train][None, :, :]) ** 2, axis=-1)
        for i, h in enumerate(cand):
            score[i] += np.sum(
                logsumexp(-d2 / (2 * h * h), axis=1) - math.log(len(train)) - d * math.log(math.sqrt(2 * math.pi) * h)
            )
    h = float(cand[int(np.argmax(score))])
    return h * (m / n) ** (1.0 / (d + 4)) if m < n else h


@dataclass
class BernsteinKDE:
    """A released (noisy) Bernstein approximation of a KDE on the box [lower, upper]."""

    lower: np.ndarray
    upper: np.ndarray
    degree: int
    bandwidth: float  # in [0,1]^d units
    beta: np.ndarray  # noisy coefficients, shape (k+1,)*d
    epsilon: float
    calibration: str
    noise_scale: float
    private: bool
    grid_points: int = 0

    def __post_init__(self):
        d = self.beta.ndim
        g = self.grid_points or (4001 if d == 1 else 301)
        self._axis = (np.arange(g) + 0.5) / g
        f = self._raw_grid()
        lo, hi = float(f.min()), float(f.max())
        self._shift = lo - 1e-3 * max(hi - lo, 1e-300)
        self._norm = float(np.mean(np.maximum(f - self._shift, 0.0)))  # midpoint rule on [0,1]^d
        self._grid_density = np.maximum(f - self._shift, 0.0) / self._norm

    @property
    def d(self) -> int:
        return self.beta.ndim

    def _raw_grid(self) -> np.ndarray:
        B = _basis(self._axis, self.degree)
        if self.d == 1:
            return B @ self.beta
        if self.d == 2:
            return B @ self.beta @ B.T
        raise ValueError("grid evaluation only for d <= 2")

    def _to_u(self, x):
        return (np.asarray(x, float) - self.lower) / (self.upper - self.lower)

    def log_pdf(self, x: np.ndarray) -> np.ndarray:
        """log density in x-space (-inf outside the box)."""
        u = self._to_u(x)
        f = _contract(self.beta, [_basis(u[:, j], self.degree) for j in range(self.d)])
        p = np.maximum(f - self._shift, 0.0) / self._norm
        inside = np.all((u >= 0) & (u <= 1), axis=1)
        with np.errstate(divide="ignore"):
            out = np.log(p) - np.sum(np.log(self.upper - self.lower))
        return np.where(inside, out, -np.inf)

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """(axis points in x-space per dimension, density on the grid in x-space)."""
        axes = self.lower[:, None] + self._axis[None, :] * (self.upper - self.lower)[:, None]
        return axes, self._grid_density / np.prod(self.upper - self.lower)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draws from the grid-discretised density (a cell by its mass, then uniform inside the cell)."""
        p = self._grid_density.ravel()
        idx = rng.choice(p.size, size=int(n), p=p / p.sum())
        g = len(self._axis)
        cells = np.stack(np.unravel_index(idx, self._grid_density.shape), -1)
        u = (cells + rng.random(cells.shape)) / g
        return self.lower + u * (self.upper - self.lower)


def bernstein_coefficients(u: np.ndarray, h: float, k: int) -> np.ndarray:
    """beta_nu = f_S(nu/k), the Gaussian KDE of ``u`` (in [0,1]^d) on the lattice {0..k}^d (noise-free)."""
    n, d = u.shape
    nodes = np.arange(k + 1) / k
    kern = [
        np.exp(-((nodes[:, None] - u[:, j][None, :]) ** 2) / (2 * h * h)) / (math.sqrt(2 * math.pi) * h)
        for j in range(d)
    ]
    letters = "abcdefgh"[:d]
    return np.einsum(",".join(f"{c}i" for c in letters) + "->" + letters, *kern, optimize=True) / n


def sensitivity(h: float, d: int, n: int, calibration: str = "dp") -> float:
    """Per-coefficient sensitivity: (sqrt(2 pi) h)^-d / n (replace one record) or n times that (integral privacy)."""
    return (math.sqrt(2 * math.pi) * h) ** (-d) / (n if calibration == "dp" else 1)


def bernstein_kde(
    x: np.ndarray,
    epsilon: float,
    *,
    lower,
    upper,
    accountant: Accountant,
    noise: NoiseSource,
    degree: int | None = None,
    bandwidth: float | None = None,
    calibration: str = "dp",
    label: str = "dpb/coefficients",
) -> BernsteinKDE:
    """The Bernstein mechanism on ``x`` (n, d) at ``epsilon``: ``calibration="dp"`` (replace one record,
    n public) or ``"ip"`` (integral privacy: sensitivity multiplied by n).

    Guarantee: epsilon-DP (resp. epsilon-IP) by the Laplace mechanism: the (k+1)^d coefficients have L1
    sensitivity (k+1)^d Delta (:func:`sensitivity`), the noise scale is that over epsilon. Charged to
    ``accountant`` as rho = epsilon^2/2 before ``noise`` is drawn (module docstring). The bandwidth, if
    not given, is chosen on the data without privacy (as in the paper)."""
    x = np.asarray(x, float)
    if x.ndim != 2 or len(x) == 0:
        raise InputError("the Bernstein mechanism needs a non-empty (n, d) array")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be finite and > 0 (got {epsilon})")
    if calibration not in CALIBRATIONS:
        raise InputError(f"calibration must be one of {CALIBRATIONS}")
    n, d = x.shape
    lower, upper = np.asarray(lower, float).reshape(d), np.asarray(upper, float).reshape(d)
    k = int(degree or DEFAULT_DEGREE.get(d, 10))
    u = np.clip((x - lower) / (upper - lower), 0.0, 1.0)
    h = float(bandwidth) if bandwidth is not None else select_bandwidth(u)
    beta = bernstein_coefficients(u, h, k)
    delta_coef = sensitivity(h, d, n, calibration)
    scale = (k + 1) ** d * delta_coef / epsilon
    accountant.spend(
        float(epsilon) ** 2 / 2,
        label,
        mechanism="Laplace (Bernstein mechanism)",
        measured=f"{(k + 1) ** d} Bernstein coefficients of a Gaussian KDE (h={h:.4g}, k={k}, d={d})",
        noise_scale=scale,
        private=bool(noise.private),
        pure_epsilon=float(epsilon),
        calibration=calibration,
        l1_sensitivity=(k + 1) ** d * delta_coef,
        guarantee="epsilon-DP, replace one record, n public"
        if calibration == "dp"
        else "epsilon-integral privacy (any two datasets of size n)",
        randomness="OpenDP float Laplace" if noise.private else SEEDED_LABEL,
    )
    noisy = noise.laplace_float(beta, scale)
    return BernsteinKDE(lower, upper, k, h, noisy, float(epsilon), calibration, scale, bool(noise.private))


def gaussian_kde_logpdf(train: np.ndarray, points: np.ndarray, bandwidth: float, chunk: int = 2000) -> np.ndarray:
    """log of the NON-PRIVATE Gaussian KDE (isotropic bandwidth, x-space): the reference density."""
    train, points = np.asarray(train, float), np.asarray(points, float)
    n, d = train.shape
    out = np.empty(len(points))
    const = -math.log(n) - d * math.log(math.sqrt(2 * math.pi) * bandwidth)
    for s in range(0, len(points), chunk):
        p = points[s : s + chunk]
        d2 = np.sum(p * p, 1)[:, None] - 2 * p @ train.T + np.sum(train * train, 1)[None, :]
        out[s : s + chunk] = logsumexp(-np.maximum(d2, 0) / (2 * bandwidth**2), axis=1) + const
    return out


__all__ = [
    "BernsteinKDE",
    "bernstein_kde",
    "bernstein_coefficients",
    "sensitivity",
    "select_bandwidth",
    "gaussian_kde_logpdf",
    "CALIBRATIONS",
]
