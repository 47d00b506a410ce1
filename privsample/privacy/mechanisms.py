"""Budgeted mechanisms: spend through the accountant first, then draw noise.

``gaussian_measure`` releases integer counts of L2 sensitivity ``sensitivity`` (1 for a marginal or
any partition of it under add/remove-one) with discrete Gaussian noise of scale
sigma = sensitivity / sqrt(2 rho): rho-zCDP (Canonne, Kamath & Steinke 2020).
``exponential_select`` runs the exponential mechanism with epsilon = sqrt(8 rho) on scores of the
given sensitivity: epsilon^2/8 = rho-zCDP (Cesar & Rogers 2021).
In both, the accountant refuses an overrun before any noise is drawn.

Privacy unit. ``sensitivity`` is always the per-record (add/remove one record) sensitivity D. Under the
accountant's unit (``privsample.privacy.unit``: add/remove one person, at most k records) the query's sensitivity
is at most k D (the lemma there), so both functions calibrate to ``accountant.unit.sensitivity(D)`` = k D: sigma =
k D / sqrt(2 rho), and the exponential mechanism's scores get sensitivity k D at epsilon = sqrt(8 rho). The ledger
entry records D (``sensitivity``) and the noise scale used, which the accountant checks against the unit. At k = 1
nothing changes.
"""

from __future__ import annotations

import math

import numpy as np

from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource


def sigma_for_rho(rho: float, sensitivity: float = 1.0) -> float:
    """sigma with sensitivity^2 / (2 sigma^2) <= rho, rounded up so the float cost never exceeds rho."""
    if rho <= 0:
        raise ValueError("rho must be > 0")
    sigma = sensitivity / math.sqrt(2.0 * rho)
    while sensitivity * sensitivity / (2.0 * sigma * sigma) > rho:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def rho_for_sigma(sigma: float, sensitivity: float = 1.0) -> float:
    """zCDP cost of the Gaussian mechanism with scale sigma on a query of this L2 sensitivity."""
    return sensitivity * sensitivity / (2.0 * sigma * sigma)


def epsilon_for_rho(rho: float) -> float:
    """Exponential-mechanism epsilon costing exactly rho in zCDP (rho = eps^2/8), rounded down."""
    eps = math.sqrt(8.0 * rho)
    while eps * eps / 8.0 > rho:
        eps = math.nextafter(eps, 0.0)
    return eps


def _spend_gaussian(
    accountant: Accountant,
    noise: NoiseSource,
    counts,
    rho: float,
    sigma: float,
    label: str,
    sensitivity: float,
    measured: str,
    details: dict,
) -> np.ndarray:
    accountant.spend(
        rho,
        label,
        mechanism="discrete Gaussian",
        measured=measured,
        noise_scale=sigma,
        private=noise.private,
        cells=int(np.size(counts)),
        sensitivity=sensitivity,
        **({} if noise.private else {"note": SEEDED_LABEL}),
        **details,
    )
    return noise.gaussian(counts, sigma)


def gaussian_measure(
    accountant: Accountant,
    noise: NoiseSource,
    counts: np.ndarray,
    rho: float,
    label: str,
    *,
    sensitivity: float = 1.0,
    measured: str = "",
    **details,
) -> tuple[np.ndarray, float]:
    """Spend ``rho`` and return (counts + discrete Gaussian noise, sigma), sigma calibrated to the accountant's
    unit: ``sigma_for_rho(rho, k * sensitivity)``."""
    sigma = sigma_for_rho(rho, accountant.unit.sensitivity(sensitivity))
    return _spend_gaussian(accountant, noise, counts, rho, sigma, label, sensitivity, measured, details), sigma


def person_gaussian_measure(
    accountant: Accountant,
    noise: NoiseSource,
    counts: np.ndarray,
    rho: float,
    label: str,
    *,
    sensitivity: float = 1.0,
    measured: str = "",
    **details,
) -> tuple[np.ndarray, float]:
    """``gaussian_measure`` for a query whose L2 ``sensitivity`` is stated per person, whatever their number of
    records (the unit profile: one person is one count of a histogram of people), so it is not scaled by the
    unit's k: sigma = sensitivity / sqrt(2 rho), rho-zCDP under add/remove-one-person neighbours. Recorded as
    ``per_person`` in the ledger (the accountant's guard checks it at k = 1)."""
    sigma = sigma_for_rho(rho, sensitivity)
    details = {**details, "per_person": True}
    return _spend_gaussian(accountant, noise, counts, rho, sigma, label, sensitivity, measured, details), sigma


def gaussian_measure_sigma(
    accountant: Accountant,
    noise: NoiseSource,
    counts: np.ndarray,
    sigma: float,
    label: str,
    *,
    sensitivity: float = 1.0,
    measured: str = "",
    **details,
) -> np.ndarray:
    """Spend what scale ``sigma`` costs under the accountant's unit ((k sensitivity)^2/(2 sigma^2)) and return the
    noisy counts."""
    rho = rho_for_sigma(sigma, accountant.unit.sensitivity(sensitivity))
    return _spend_gaussian(accountant, noise, counts, rho, sigma, label, sensitivity, measured, details)


def exponential_select(
    accountant: Accountant,
    noise: NoiseSource,
    scores: np.ndarray,
    rho: float,
    label: str,
    *,
    sensitivity: float = 1.0,
    measured: str = "",
    **details,
) -> int:
    """Spend ``rho`` and return the index chosen by the exponential mechanism, whose score sensitivity is the
    accountant's unit's: k * ``sensitivity``."""
    eps = epsilon_for_rho(rho)
    scale = accountant.unit.sensitivity(sensitivity)
    accountant.spend(
        rho,
        label,
        mechanism="exponential",
        measured=measured,
        noise_scale=2.0 * scale / eps,
        private=noise.private,
        candidates=int(np.size(scores)),
        sensitivity=sensitivity,
        **({} if noise.private else {"note": SEEDED_LABEL}),
        **details,
    )
    return noise.exponential(scores, eps, scale)
