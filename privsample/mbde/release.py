"""Releasing MBDE samples: secure randomness, the ledger and the public
standardisation of table columns.

Accounting. m i.i.d. samples from q_T in M_{eps,q0} are (m eps)-integrally private. To release m
samples under a total budget eps_total, MBDE is trained at the per-sample eps = eps_total / m and the
release is recorded once in the (zCDP) ledger like any pure-epsilon release: rho = eps_total^2 / 2
(eps-IP implies eps-DP for every neighbouring relation, which implies eps^2/2-zCDP), with the pure
epsilon, the per-sample epsilon, m, and ``guarantee="integral privacy (Husain et al.)"`` in the
details. Only the samples are released: the boosting rounds cost nothing, the density is never shown.

Input (:func:`release_table`). The schema must be public: reviewed or written by a person
(``provenance: user``). A draft read off the data (``draft-nonprivate``) would make the "public" box the
data's own min/max, and a privately discovered schema (``private``) carries a zCDP add/remove cost that
cannot be composed into an integral-privacy statement, so both are refused (:func:`check_public_schema`).
Rows are then mapped by a fixed per-record rule: each value is clipped to its column's public
[lower, upper], and a row with a missing or non-numeric value in a chosen column is left out. Integral
privacy quantifies over *any* two datasets, of any sizes, and the number of rows enters neither epsilon
nor the proof, so any such preprocessing keeps the guarantee (it maps two datasets to two datasets), and
no message or exit code depends on whether, or how often, the rule fired. If no row is left, the release
draws from q0 itself (classifiers identically 0), which lies in the mollifier class M_{eps,q0} like every
trained q_T: the output is still produced and still eps-IP.

Randomness. Released draws (Gaussian proposals and acceptance coins) take their randomness from the
project's noise source (:func:`privsample.privacy.noise.make_noise`), as the other exact samplers do
(:mod:`privsample.samplers.exact_draw`): a private source (``SecureNoise``) means :class:`OSEntropy`
(``os.urandom``, the operating system's CSPRNG; OpenDP has no continuous Gaussian/uniform sampler that
fits a rejection sampler); a seeded source (``SeededNoise``, which warns loudly when created) means its
NumPy generator, NOT private, and the ledger entry, the release and the CLI say so.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from privsample.errors import InputError
from privsample.mbde.density import GUARANTEE, IP_NEIGHBOURING, MBDE, GaussianQ0, MBDEDensity
from privsample.privacy.accountant import Accountant, BudgetExceeded
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource, make_noise

INDISTINGUISHABLE_EPSILON = 0.1  # per-sample epsilon up to which q_T is within e^{+-0.05} of q0 everywhere
INPUT_RULE = (
    "input rule (applied to every row, whatever the data): a value outside its column's public "
    "[lower, upper] is clipped to it; a row with a missing or non-numeric value in a chosen column is "
    "left out (integral privacy covers any two datasets, of any sizes); with no row left, the rows are "
    "drawn from q0"
)


def check_public_schema(schema) -> None:
    """Refuse a schema whose bounds are not public facts for an integral-privacy statement: an unreviewed
    draft read off the data (:func:`privsample.data.schema.check_schema_usable`) or a privately discovered one
    (its zCDP add/remove cost cannot be composed into integral privacy). Depends on the schema file only."""
    from privsample.data.schema import check_schema_usable

    if schema.provenance == "private":
        raise InputError(
            "the schema was discovered privately (provenance: private) and its cost cannot be composed "
            "into MBDE's integral-privacy guarantee: MBDE needs a reviewed public schema "
            "('provenance: user')"
        )
    check_schema_usable(schema)


class OSEntropy:
    """Uniforms and Gaussians from ``os.urandom`` (a CSPRNG): the release randomness of MBDE.

    ``random(n)``: multiples of 2^-53 in [0, 1). ``standard_normal(shape)``: the inverse normal CDF of
    (k + 1/2) 2^-53, k a uniform 53-bit integer; a float approximation of N(0, 1) whose tails are cut
    near 8.3 (data-independent, so it only changes q0, not the privacy argument)."""

    private = True

    @staticmethod
    def _bits(n: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * int(n)), dtype=np.uint64) >> np.uint64(11)

    def random(self, n: int) -> np.ndarray:
        return self._bits(n).astype(np.float64) * 2.0**-53

    def standard_normal(self, shape) -> np.ndarray:
        from scipy.special import ndtri

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape))
        return ndtri((self._bits(n).astype(np.float64) + 0.5) * 2.0**-53).reshape(shape)


def release_rng(noise: NoiseSource):
    """The release randomness for a project noise source: :class:`OSEntropy` (private) for a private source,
    the seeded source's NumPy generator (NOT private) otherwise (as :mod:`privsample.samplers.exact_draw`)."""
    if noise.private:
        return OSEntropy()
    from privsample.samplers.exact_draw import seeded_rng

    return seeded_rng(noise)  # seeded, not private


# -- public standardisation --------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicStandardisation:
    """x -> z = sd (x - mid) / half: the public box [lower, upper] becomes [-sd, sd]^d in model space.

    Built from a schema's public bounds only, never from the data's mean or spread."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    sd: float = 2.0

    def __post_init__(self):
        lo, hi = np.asarray(self.lower, float), np.asarray(self.upper, float)
        if lo.shape != hi.shape or lo.ndim != 1 or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise InputError("public bounds must be finite, one (lower, upper) pair per column")
        if np.any(hi <= lo):
            raise InputError("public bounds need lower < upper for every column")
        if not (math.isfinite(self.sd) and self.sd > 0):
            raise InputError(f"the box must map to a positive number of standard deviations (got {self.sd})")

    @property
    def mid(self) -> np.ndarray:
        return (np.asarray(self.lower) + np.asarray(self.upper)) / 2

    @property
    def half(self) -> np.ndarray:
        return (np.asarray(self.upper) - np.asarray(self.lower)) / 2

    def to_model(self, x: np.ndarray) -> np.ndarray:
        return self.sd * (np.asarray(x, float) - self.mid) / self.half

    def to_data(self, z: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(z, float) * self.half / self.sd + self.mid, self.lower, self.upper)


# -- the release -------------------------------------------------------------------------------------


@dataclass
class MBDERelease:
    """m released samples (model space) and the public parameters that made them. Deliberately absent:
    the density, the classifiers, the fit diagnostics and the number of rejected proposals (whose rate
    estimates Z_T, a function of the data); none of them is private."""

    samples: np.ndarray
    epsilon_total: float
    epsilon_per_sample: float
    m: int
    private: bool
    info: dict[str, Any] = field(default_factory=dict)


def per_sample_epsilon(epsilon_total: float, m: int) -> float:
    if not (isinstance(epsilon_total, (int, float)) and math.isfinite(epsilon_total) and epsilon_total > 0):
        raise InputError(f"epsilon must be finite and > 0 (got {epsilon_total})")
    if int(m) != m or m < 1:
        raise InputError(f"the number of samples must be a positive integer (got {m})")
    return float(epsilon_total) / int(m)


def indistinguishability_warning(epsilon_total: float, m: int) -> str | None:
    """A message when the per-sample epsilon leaves q_T practically equal to q0, else None."""
    eps = per_sample_epsilon(epsilon_total, m)
    if eps > INDISTINGUISHABLE_EPSILON:
        return None
    return (
        f"per-sample epsilon = {epsilon_total:g}/{m} = {eps:.3g}: the learned density differs from the "
        f"data-independent q0 by at most a factor {math.exp(eps / 2):.4f} anywhere, so the {m} samples are "
        "practically draws from q0; release fewer samples or spend more epsilon"
    )


def _zero_logits(z: np.ndarray) -> np.ndarray:
    return np.zeros(len(z))


def _split_budget(epsilon_total: float, m: int, q0_share: float, q0_box) -> tuple[float, float, float]:
    """(epsilon of the fitted q0, epsilon of the m samples, epsilon per sample) of ``release``, checked
    (``InputError``): a share of epsilon_total in [0, 1) for q0, which needs its public box."""
    per_sample_epsilon(epsilon_total, m)
    if not (isinstance(q0_share, (int, float)) and 0 <= q0_share < 1):
        raise InputError(f"the share of epsilon spent on q0 must be in [0, 1) (got {q0_share})")
    if q0_share > 0 and q0_box is None:
        raise InputError("fitting q0 needs the public box (q0_box) its values are clipped to")
    eps_q0 = float(epsilon_total) * q0_share
    eps_samples = float(epsilon_total) - eps_q0
    return eps_q0, eps_samples, per_sample_epsilon(eps_samples, m)


def release(
    data: np.ndarray,
    m: int,
    epsilon_total: float,
    accountant: Accountant,
    *,
    seed: int | None = None,
    noise: NoiseSource | None = None,
    label: str = "mbde/sample",
    warn: bool = True,
    q0_share: float = 0.0,
    **mbde_options,
) -> MBDERelease:
    """Train MBDE on ``data`` (model space) at epsilon_total/m and release m exact samples of q_T.

    ``q0_share`` s (default 0: q0 = N(0, I), data-independent): spend s epsilon_total first on a q0 fitted to the
    data (:func:`privsample.mbde.fitted_q0.fit_q0`, integral-privacy calibration, in the public box ``q0_box``,
    which is then required), then train at (1 - s) epsilon_total / m per sample with that q0. Two ledger
    entries whose pure epsilons add up to epsilon_total; the whole is still epsilon_total-IP (the MBDE bound
    holds for every value of q0, and the costs add). Both spends are checked before anything is read.

    Guarantee: (epsilon_total)-integral privacy for the m samples together (any two datasets, any sizes,
    the empty one included: with no row, the samples are draws from q0),
    hence epsilon_total-DP and epsilon_total^2/2-zCDP, which is what the accountant is charged. The
    "sensitivity" argument is the mollifier bound of :mod:`privsample.mbde.density`: for every dataset,
    |log q_T/q0| <= eps/2 with eps = epsilon_total/m, so each exact draw changes probabilities by at most
    e^eps between any two inputs and m independent draws by e^(m eps).

    ``noise`` is the project noise source (default ``make_noise(seed)``: secure without a seed, seeded and
    NOT private with one). The spend is checked before training and recorded before any release randomness
    is drawn."""
    eps_q0, eps_samples, eps = _split_budget(epsilon_total, m, q0_share, mbde_options.get("q0_box"))
    m = int(m)
    msg = indistinguishability_warning(eps_samples, m)
    if msg and warn:
        warnings.warn(msg, UserWarning, stacklevel=2)
    rho = eps_samples**2 / 2
    rho_q0 = eps_q0**2 / 2
    if not accountant.can_spend(rho + rho_q0):
        raise BudgetExceeded(
            f"releasing {m} MBDE samples at epsilon = {epsilon_total:g} needs rho = {rho + rho_q0:.6g} "
            f"but only {accountant.remaining:.6g} remains (nothing was trained or drawn)"
        )
    noise = noise if noise is not None else make_noise(seed)
    data = np.asarray(data, dtype=np.float64)
    if q0_share > 0:
        from privsample.mbde.fitted_q0 import fit_q0

        if data.ndim != 2:
            raise InputError("MBDE needs an (n, d) array")
        box = float(mbde_options["q0_box"])
        mbde_options["q0"] = fit_q0(
            data, eps_q0, box=box, accountant=accountant, noise=noise, calibration="ip", truncate=True
        )
    model = MBDE(eps, **mbde_options)
    if data.ndim == 2 and len(data) == 0:  # nothing to learn from: q0 itself (in M_{eps,q0}), never a refusal
        q0 = model.q0 if model.q0 is not None else GaussianQ0(data.shape[1], model.q0_box)
        density = MBDEDensity(q0, eps, model.thetas, [_zero_logits] * model.T, model.c_star)
    else:
        density = model.fit(data, seed=seed)  # training randomness: not privacy-relevant (module docstring)
    private = bool(noise.private)
    accountant.spend(
        rho,
        label,
        mechanism="MBDE exact rejection sampling (integral privacy)",
        measured=f"{m} samples of q_T (T={model.T}, d={density.q0.d})",
        private=private,
        pure_epsilon=eps_samples,
        per_sample_epsilon=eps,
        samples=m,
        integral_privacy=True,
        guarantee=GUARANTEE,
        neighbouring=IP_NEIGHBOURING,
        T=model.T,
        c_star=model.c_star,
        thetas=[float(t) for t in density.thetas],
        log_ratio_bound=2 * density.bound,
        randomness="os.urandom (CSPRNG)" if private else f"seeded NumPy ({SEEDED_LABEL})",
    )
    rng = release_rng(noise)
    z = density.sample(m, rng)
    info = {"T": model.T, "c_star": model.c_star, "thetas": density.thetas.tolist(), "warning": msg}
    if q0_share > 0:  # a DP output: releasable
        info.update(q0_epsilon=eps_q0, q0_mean=list(density.q0.mean), q0_std=list(density.q0.std))
    return MBDERelease(
        samples=z,
        epsilon_total=float(epsilon_total),
        epsilon_per_sample=eps,
        m=m,
        private=private,
        info=info,
    )


def release_table(
    df,
    schema,
    columns: Sequence[str],
    epsilon_total: float,
    m: int,
    accountant: Accountant,
    *,
    seed: int | None = None,
    noise: NoiseSource | None = None,
    sd: float = 2.0,
    warn: bool = True,
    **mbde_options,
):
    """Release m rows of the numeric ``columns`` of ``df`` with MBDE, using the schema's public bounds.

    The schema must be public (:func:`check_public_schema`). q0 is N(0, I) truncated to the public box
    (mapped to [-sd, sd]^d). Rows follow the fixed per-record rule :data:`INPUT_RULE` (module docstring):
    values outside the bounds are clipped, rows with a missing or non-numeric value in a chosen column are
    left out, and no row left means draws from q0; nothing here refuses or reports anything about the rows.
    Errors concern public facts only (the columns asked for, the header, the schema).
    Returns (DataFrame in original units, MBDERelease)."""
    import pandas as pd

    from privsample.data.schema import Numeric

    per_sample_epsilon(epsilon_total, m)
    check_public_schema(schema)
    columns = [c.strip() for c in columns]
    if not columns or any(not c for c in columns):
        raise InputError("--columns must name at least one column (comma separated)")
    if len(set(columns)) != len(columns):
        raise InputError(f"--columns lists a column twice: {','.join(columns)}")
    for c in columns:
        if c not in df.columns:
            raise InputError(f"column '{c}' is not in the table (columns: {', '.join(map(str, df.columns))})")
        if c not in schema:
            raise InputError(
                f"column '{c}' has no public bounds: add it to the schema as a numeric column with "
                "'lower' and 'upper' (MBDE never reads bounds off the data)"
            )
        col = schema[c]
        if not isinstance(col, Numeric):
            raise InputError(f"column '{c}' is {col.kind} in the schema: MBDE needs numeric columns with public bounds")
        if not col.upper > col.lower:
            raise InputError(
                f"column '{c}': the public bounds must satisfy lower < upper (got {col.lower}, {col.upper})"
            )
    # the per-record rule (INPUT_RULE): non-numeric text becomes NaN like a missing cell, such rows are left
    # out, +-inf and every other value are clipped to the public bounds; never a refusal, never a count
    values = [pd.to_numeric(df[c].astype(object), errors="coerce").to_numpy(dtype=float) for c in columns]
    x = np.column_stack(values) if len(df) else np.empty((0, len(columns)))
    x = x[~np.any(np.isnan(x), axis=1)]
    std = PublicStandardisation(tuple(schema[c].lower for c in columns), tuple(schema[c].upper for c in columns), sd)
    x = np.clip(x, std.lower, std.upper)
    rel = release(
        std.to_model(x), m, epsilon_total, accountant, seed=seed, noise=noise, warn=warn, q0_box=sd, **mbde_options
    )
    out = std.to_data(rel.samples)
    table = pd.DataFrame({c: out[:, i] for i, c in enumerate(columns)})
    for c in columns:
        if schema[c].integer:  # post-processing
            table[c] = np.clip(np.rint(table[c]), math.ceil(schema[c].lower), math.floor(schema[c].upper)).astype(
                "int64"
            )
    return table, rel


__all__ = [
    "OSEntropy",
    "release_rng",
    "PublicStandardisation",
    "INPUT_RULE",
    "check_public_schema",
    "MBDERelease",
    "release",
    "release_table",
    "per_sample_epsilon",
    "indistinguishability_warning",
    "INDISTINGUISHABLE_EPSILON",
]
