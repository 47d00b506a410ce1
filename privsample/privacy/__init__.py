"""Privacy core: budgets and conversions, the zCDP accountant and ledger, noise sources."""

from privsample.privacy.accountant import Accountant, BudgetExceeded, LedgerEntry
from privsample.privacy.conversion import cdp_delta, cdp_epsilon, cdp_rho
from privsample.privacy.mechanisms import (
    epsilon_for_rho,
    exponential_select,
    gaussian_measure,
    gaussian_measure_sigma,
    rho_for_sigma,
    sigma_for_rho,
)
from privsample.privacy.noise import NoiseSource, SecureNoise, SeededNoise, make_noise
from privsample.privacy.unit import ROW, PrivacyUnit

__all__ = [
    "Accountant",
    "BudgetExceeded",
    "LedgerEntry",
    "cdp_delta",
    "cdp_epsilon",
    "cdp_rho",
    "epsilon_for_rho",
    "exponential_select",
    "gaussian_measure",
    "gaussian_measure_sigma",
    "rho_for_sigma",
    "sigma_for_rho",
    "NoiseSource",
    "SecureNoise",
    "SeededNoise",
    "make_noise",
    "PrivacyUnit",
    "ROW",
]
