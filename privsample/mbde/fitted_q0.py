"""A base density q0 fitted to the data under an accounted share of the budget: MBDE's q0 = N(mu, sd^2 I)
with the per-dimension mean and standard deviation released by the Laplace mechanism.

Mechanism. Clip every value to the public box [-B, B] (B = ``box``, the box MBDE's q0 lives in) and compute,
per dimension j, the clipped mean a_j = (1/n) sum_i z_ij and the clipped mean of squares b_j = (1/n) sum_i z_ij^2
(with no record: the fixed values a_j = 0, b_j = min(1, B^2)). Release (a, b) + i.i.d. Laplace noise of scale
Delta / epsilon (one vector draw from the project noise source) and post-process:
mu_hat = clip(a~, -B, B), sd_hat = sqrt(clip(b~ - mu_hat^2, sd_min^2, B^2)) (``sd_min`` is public).

Guarantee, neighbouring relation and sensitivity. For every dataset, a_j lies in [-B, B] and b_j in [0, B^2]:

* ``calibration="ip"`` (the default; MBDE's own relation): **any two datasets**, of any sizes, the empty one
  included. The L1 distance between the (a, b) of any two datasets is at most Delta = d (2B + B^2) (the ranges
  of the statistics), so the release is epsilon-*integrally private* (Husain, Cranko and Nock 2018), hence
  epsilon-DP for every neighbouring relation. The number of records enters neither the noise nor the proof.
* ``calibration="dp"``: **replace one record, n public** (the relation of the private-KDE baseline's DP
  calibration). Replacing one record moves each a_j by at most 2B/n and each b_j by at most B^2/n, so
  Delta = d (2B + B^2) / n and the release is epsilon-DP for replace-one neighbours only. The noise scale
  reveals n: experiments only (it is refused on the release path, :func:`privsample.mbde.release.release`).

Composition with MBDE. q0 is fixed (a DP output) before the boosting reads the data again. The MBDE proof
(:mod:`privsample.mbde.density`) only needs q0 to be the same for the two datasets being compared: conditioned
on any value of q0, the density q_T lies in the mollifier M_{eps,q0} and one exact draw is eps-IP. The joint law
of (q0, samples) therefore has ratio at most e^{epsilon_q0} e^{m eps} between any two datasets (resp. between
replace-one neighbours): spending a share s of a total epsilon on q0 and (1 - s) on the samples is
epsilon-IP (``"ip"``) or epsilon-DP for replace-one neighbours with n public (``"dp"``) in total.

Accounting. One ledger entry, charged before the noise is drawn: rho = epsilon^2/2 (pure epsilon-DP implies
epsilon^2/2-zCDP) with ``pure_epsilon`` = epsilon, the L1 sensitivity and the noise scale. Noise: the project
noise source's float Laplace (OpenDP's sampler with a private source; a seeded source is NOT private and the
entry says so).
"""

from __future__ import annotations

import math

import numpy as np

from privsample.errors import InputError
from privsample.mbde.density import IP_NEIGHBOURING, GaussianQ0
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource

CALIBRATIONS = ("ip", "dp")
DP_NEIGHBOURING = "replace one record, n public"
DEFAULT_SD_MIN = 0.1


def moments(z: np.ndarray, box: float) -> np.ndarray:
    """(a_1..a_d, b_1..b_d): per-dimension clipped mean and clipped mean of squares (fixed values with no row)."""
    z = np.asarray(z, dtype=np.float64)
    d = z.shape[1]
    if len(z) == 0:
        return np.concatenate([np.zeros(d), np.full(d, min(1.0, box * box))])
    c = np.clip(z, -box, box)
    return np.concatenate([c.mean(0), (c * c).mean(0)])


def l1_sensitivity(d: int, box: float, n: int, calibration: str = "ip") -> float:
    """L1 sensitivity of :func:`moments`: d (2B + B^2) for any two datasets, divided by n for replace-one."""
    if calibration not in CALIBRATIONS:
        raise InputError(f"calibration must be one of {CALIBRATIONS} (got {calibration!r})")
    delta = d * (2.0 * box + box * box)
    return delta if calibration == "ip" else delta / max(int(n), 1)


def fit_q0(
    z: np.ndarray,
    epsilon: float,
    *,
    box: float,
    accountant: Accountant,
    noise: NoiseSource,
    calibration: str = "ip",
    sd_min: float = DEFAULT_SD_MIN,
    truncate: bool = False,
    label: str = "mbde/q0",
) -> GaussianQ0:
    """q0 = N(mu_hat, sd_hat^2 I) from the clipped per-dimension mean and mean of squares of ``z`` (model space,
    shape (n, d)), released by the Laplace mechanism at ``epsilon`` (module docstring: guarantee, neighbouring
    relation and sensitivity). ``truncate`` also truncates q0 to the public box [-box, box]^d."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2:
        raise InputError("the q0 fit needs an (n, d) array")
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be finite and > 0 (got {epsilon})")
    if not (isinstance(box, (int, float)) and math.isfinite(box) and box > 0):
        raise InputError(f"the q0 fit needs a public box [-B, B] with B finite and > 0 (got {box})")
    if not (math.isfinite(sd_min) and 0 < sd_min <= box):
        raise InputError(f"the public minimum standard deviation must be in (0, B] (got {sd_min})")
    n, d = z.shape
    sens = l1_sensitivity(d, box, n, calibration)
    scale = sens / float(epsilon)
    accountant.spend(
        float(epsilon) ** 2 / 2,
        label,
        mechanism="Laplace (clipped mean and mean of squares)",
        measured=f"per-dimension mean and mean of squares of the values clipped to [-{box:g}, {box:g}] (d={d})",
        noise_scale=scale,
        private=bool(noise.private),
        pure_epsilon=float(epsilon),
        l1_sensitivity=sens,
        calibration=calibration,
        neighbouring=IP_NEIGHBOURING if calibration == "ip" else DP_NEIGHBOURING,
        guarantee="epsilon-integral privacy (any two datasets, any sizes)"
        if calibration == "ip"
        else "epsilon-DP, replace one record, n public",
        randomness="OpenDP float Laplace" if noise.private else SEEDED_LABEL,
    )
    noisy = noise.laplace_float(moments(z, box), scale)
    return q0_from_moments(
        noisy, box, sd_min=sd_min, truncate=truncate, released=f"Laplace {calibration} eps={epsilon:g}"
    )


def q0_from_moments(
    noisy: np.ndarray, box: float, *, sd_min: float = DEFAULT_SD_MIN, truncate: bool = False, released: str = ""
) -> GaussianQ0:
    """Post-processing of the released (a~, b~): mu = clip(a~, -B, B), sd = sqrt(clip(b~ - mu^2, sd_min^2, B^2))."""
    noisy = np.asarray(noisy, dtype=np.float64)
    d = len(noisy) // 2
    mu = np.clip(noisy[:d], -box, box)
    sd = np.sqrt(np.clip(noisy[d:] - mu * mu, sd_min * sd_min, box * box))
    return GaussianQ0(
        d,
        box if truncate else None,
        tuple(float(v) for v in mu),
        tuple(float(v) for v in sd),
        released=released or "Laplace",
    )


__all__ = ["fit_q0", "moments", "l1_sensitivity", "q0_from_moments", "CALIBRATIONS", "DP_NEIGHBOURING"]
