"""Bounded-bias Bernoulli sampler and its product version (RSSS 2021, Section 6.1, Thms 6.1 and 6.4,
Claims 6.2-6.3; Thm 1.8).

One draw, per column: p_hat = mean of the column, p~ = clip(p_hat, a, 1 - a), output Ber(p~). There is no
added noise: the privacy comes from the Bernoulli draw itself, which is therefore exact (``Fraction``
arithmetic, :func:`exact_draw.bernoulli`: secrets.randbelow with a private noise source).

Guarantee (replace-one neighbours, n public). Sensitivity: replacing one record moves p_hat, hence p~, by
at most 1/n, and p~, 1 - p~ >= a, so both output probabilities change by a factor <= 1 + 1/(a n)
(Claim 6.3): one column is pure eps0-DP with eps0(n) = ln(1 + 1/(a n)), exactly the worst case when a n is
an integer. For d columns one replaced record can move every column: pure (d eps0)-DP (basic composition,
tight), or (d eps0^2 / 2)-zCDP (eps-DP implies eps^2/2-zCDP; zCDP composes), which is Thm 6.4's route to
(eps, delta)-DP with n = O(sqrt(d ln(1/delta)) / eps). The paper's clip interval is stripped; we use
a = 1/4 (the note's reconstruction, any 0 < a < 1/3 keeps the proof) and keep it configurable.

Input mapping (:func:`binarize`, also used by :mod:`privsample.samplers.product`). A fixed per-record
rule reads each cell as a bit: 1 iff the value is exactly one (1, 1.0, "1", true), 0 for anything else,
including a missing value, another number or text. It never refuses and never drops a record, so replace-one
neighbours (same n) stay replace-one neighbours (or become equal) after the mapping and every guarantee
below holds unchanged; no message depends on whether, or how often, a cell was not 0/1. The accuracy
statements are about the law of the mapped bits (a non-0/1 value counts as 0).

Accuracy (Claim 6.2): for biases in [1/3, 2/3], |E p~ - p| <= a Pr[|p_hat - p| > 1/3 - a]
<= 2a exp(-2 n (1/3 - a)^2) (Hoeffding), i.e. 1/2 exp(-n/72) for a = 1/4; TV of the product is at most the
sum over columns (Lemma 2.21). So n >= ln(2 a d / alpha) / (2 (1/3 - a)^2) records give alpha-accuracy.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.conversion import cdp_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource
from privsample.samplers import exact_draw
from privsample.samplers.parallel import NEIGHBOURING, Draws, NotEnoughRecords, partition

DEFAULT_CLIP = Fraction(1, 4)
BIAS_LOW = Fraction(1, 3)  # the class: biases in [1/3, 2/3]
_MARGIN = 1e-12  # relative safety margin on float privacy losses (rounding up)


def check_clip(a) -> Fraction:
    a = Fraction(a)
    if not 0 < a < BIAS_LOW:
        raise InputError(f"the clip margin a must satisfy 0 < a < 1/3 (got {a})")
    return a


def clipped_mean(count: int, n: int, a: Fraction = DEFAULT_CLIP) -> Fraction:
    """p~ = clip(count / n, a, 1 - a), exactly."""
    return min(max(Fraction(int(count), int(n)), a), 1 - a)


def column_epsilon(n: int, a: Fraction = DEFAULT_CLIP) -> float:
    """eps0(n) = ln(1 + 1/(a n)), the pure-DP loss of one column (Claim 6.3), rounded up."""
    return math.log1p(float(1 / (Fraction(a) * int(n)))) * (1 + _MARGIN)


def pure_epsilon(n: int, d: int, a: Fraction = DEFAULT_CLIP) -> float:
    """Pure epsilon of d columns at n records: d eps0(n)."""
    return d * column_epsilon(n, a)


def zcdp_rho(n: int, d: int, a: Fraction = DEFAULT_CLIP) -> float:
    """zCDP rho of d columns at n records: d eps0(n)^2 / 2 (Thm 6.4)."""
    return d * column_epsilon(n, a) ** 2 / 2


def _smallest_n(ok, guess: float) -> int:
    n = max(1, int(math.ceil(guess)))
    while not ok(n):
        n += 1
    while n > 1 and ok(n - 1):
        n -= 1
    return n


def min_n_pure(epsilon: float, d: int = 1, a: Fraction = DEFAULT_CLIP) -> int:
    """Fewest records per draw for pure epsilon-DP: d ln(1 + 1/(a n)) <= epsilon (about 4d/epsilon for a = 1/4)."""
    return _smallest_n(lambda n: pure_epsilon(n, d, a) <= epsilon, 1 / (float(a) * math.expm1(epsilon / d)))


def min_n_zcdp(rho: float, d: int = 1, a: Fraction = DEFAULT_CLIP) -> int:
    """Fewest records per draw for rho-zCDP: d eps0(n)^2 / 2 <= rho (about sqrt(8d/rho) for a = 1/4)."""
    return _smallest_n(lambda n: zcdp_rho(n, d, a) <= rho, 1 / (float(a) * math.expm1(math.sqrt(2 * rho / d))))


def bias_bound(n: int, d: int = 1, a: Fraction = DEFAULT_CLIP) -> float:
    """Claim 6.2 via Hoeffding, summed over d columns: d * 2a exp(-2 n (1/3 - a)^2) >= TV(P, Q)."""
    g = float(BIAS_LOW - Fraction(a))
    return d * 2 * float(a) * math.exp(-2 * n * g * g)


def required_n(alpha: float, d: int = 1, a: Fraction = DEFAULT_CLIP) -> int:
    """Records per draw that make :func:`bias_bound` <= alpha: ln(2 a d / alpha) / (2 (1/3 - a)^2)."""
    g = float(BIAS_LOW - Fraction(a))
    return _smallest_n(
        lambda n: bias_bound(n, d, a) <= alpha, math.log(max(2 * float(a) * d / alpha, 1.0)) / (2 * g * g)
    )


def exact_bias(n: int, p: float, a: Fraction = DEFAULT_CLIP) -> float:
    """E p~ - p for X ~ Bin(n, p) (its absolute value is the TV of one column), as
    E[clip(p_hat) - p_hat] = sum_{c < a n} Bin(c)(a - c/n) - sum_{c > (1-a) n} Bin(c)(c/n - 1 + a):
    no cancellation, so it stays accurate far below float epsilon."""
    from scipy.stats import binom

    lo, hi = float(a), 1 - float(a)
    c_lo = np.arange(0, int(math.ceil(float(a) * n)))
    c_hi = np.arange(int(math.floor(hi * n)) + 1, n + 1)
    up = float(np.dot(np.exp(binom.logpmf(c_lo, n, p)), lo - c_lo / n)) if c_lo.size else 0.0
    down = float(np.dot(np.exp(binom.logpmf(c_hi, n, p)), c_hi / n - hi)) if c_hi.size else 0.0
    return up - down


ONE_TEXTS = frozenset({"1", "true"})  # the only cell texts (lower case) read as 1


def binarize(texts) -> np.ndarray:
    """The per-record rule of the module docstring on normalised cell texts (None = missing): 1 iff the
    lower-cased text is "1" or "true", else 0. Returns an int8 vector of the same length (n unchanged)."""
    return np.fromiter(
        (1 if (t is not None and str(t).lower() in ONE_TEXTS) else 0 for t in texts), dtype=np.int8, count=len(texts)
    )


def check_binary(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise InputError("expected an n x d array of 0/1 values")
    if X.size and not np.isin(X, (0, 1)).all():
        raise InputError("the Bernoulli samplers need a binary 0/1 array: map raw values with bernoulli.binarize first")
    return X.astype(np.int8)


def binary_parts(X: np.ndarray, samples: int, rng: np.random.Generator | None):
    """Checked n x d 0/1 data (d >= 1) and its public partition into ``samples`` parts: (X, parts, sizes)."""
    X = check_binary(X)
    if X.shape[1] < 1:
        raise InputError("no columns to sample")
    parts = partition(X.shape[0], samples, rng)
    return X, parts, [len(p) for p in parts]


def bounded_bias_sample(
    X: np.ndarray,
    *,
    epsilon: float,
    accountant: Accountant,
    noise: NoiseSource,
    delta: float | None = None,
    samples: int = 1,
    a: Fraction = DEFAULT_CLIP,
    rng: np.random.Generator | None = None,
    delta_name: str = "--delta",
) -> Draws:
    """``samples`` draws of the clip-and-sample product sampler, one per disjoint part of the n x d 0/1 ``X``.

    ``delta=None``: pure epsilon-DP, refused unless d eps0(n_part) <= epsilon. Otherwise rho-zCDP with
    rho = d eps0(n_part)^2 / 2, refused unless rho <= cdp_rho(epsilon, delta). The cost is set by n, not
    chosen: the ledger records it (one spend, parallel composition over the parts). ``delta_name``: how the
    refusal names the delta option."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be > 0 and finite (got {epsilon})")
    a = check_clip(a)
    X, parts, sizes = binary_parts(X, samples, rng)
    d = X.shape[1]
    n_min, m = min(sizes), len(parts)
    if delta is None:
        eps = pure_epsilon(n_min, d, a)
        if eps > epsilon:
            need = min_n_pure(epsilon, d, a)
            raise NotEnoughRecords(
                f"pure epsilon = {epsilon:g} over d = {d} column(s) needs n >= {need:,} records per draw "
                f"(d ln(1 + 1/(a n)) <= epsilon, a = {a}; RSSS Claim 6.3), i.e. n >= {need * m:,} for {m} draw(s); "
                f"the data give {n_min:,} per draw (certified epsilon {eps:.4g})"
                + (f"; with {delta_name} the columns compose in zCDP and need fewer" if d > 1 else "")
            )
        rho, guarantee = eps**2 / 2, f"pure epsilon-DP, epsilon = {eps:.6g}"
        extra = {"pure_epsilon": eps}
    else:
        rho = zcdp_rho(n_min, d, a)
        budget = cdp_rho(epsilon, delta)
        if rho > budget:
            need = min_n_zcdp(budget, d, a)
            raise NotEnoughRecords(
                f"(epsilon, delta) = ({epsilon:g}, {delta:g}) is rho = {budget:.4g}-zCDP, and d = {d} column(s) need "
                f"n >= {need:,} records per draw (d ln(1 + 1/(a n))^2 / 2 <= rho, a = {a}; RSSS Thm 6.4), i.e. "
                f"n >= {need * m:,} for {m} draw(s); the data give {n_min:,} per draw"
            )
        guarantee = f"rho-zCDP, rho = {rho:.6g} (each column pure {column_epsilon(n_min, a):.4g}-DP)"
        extra = {"column_pure_epsilon": column_epsilon(n_min, a)}
    accountant.spend(
        rho,
        "bernoulli/draw",
        mechanism="clip-and-sample, no added noise (RSSS Thm 6.1/6.4)",
        measured=f"{m} draw(s) of d={d} clipped column means, one per disjoint part",
        noise_scale=None,
        private=noise.private,
        neighbouring=NEIGHBOURING,
        parts=m,
        per_part_n=sizes,
        d=d,
        clip=str(a),
        **extra,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    out = np.empty((m, d), dtype=np.int8)
    for i, idx in enumerate(parts):
        counts = X[idx].sum(axis=0, dtype=np.int64)
        out[i] = [exact_draw.bernoulli(clipped_mean(c, len(idx), a), noise) for c in counts.tolist()]
    return Draws(
        samples=out,
        per_part_n=sizes,
        guarantee=guarantee,
        epsilon=extra.get("pure_epsilon"),
        rho=rho,
        info={"d": d, "clip": a, "bias_bound": bias_bound(n_min, d, a)},
    )


__all__ = [
    "DEFAULT_CLIP",
    "check_clip",
    "clipped_mean",
    "column_epsilon",
    "pure_epsilon",
    "zcdp_rho",
    "min_n_pure",
    "min_n_zcdp",
    "bias_bound",
    "required_n",
    "exact_bias",
    "ONE_TEXTS",
    "binarize",
    "check_binary",
    "binary_parts",
    "bounded_bias_sample",
]
