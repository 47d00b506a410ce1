"""The k-ary sampler of Raskhodnikova, Sivakumar, Smith and Swanberg (2021, Section 4.1, Algorithm 3;
Thm 1.4).

One draw: count the k categories, add noise to each count, project the noisy frequencies onto the
probability simplex, draw one category from the projection.

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public. Sensitivity: replacing one record
moves one unit of count from one cell to another, so the count vector has L1 sensitivity 2 (RSSS: the
empirical distribution has sensitivity 2/n). We add *discrete* Laplace noise of scale 2/epsilon to the
integer counts (OpenDP's exact sampler), the secure equivalent of the paper's continuous Lap(2/(epsilon n))
on frequencies: the privacy loss of the noisy counts is (epsilon/2) * (||z - c'||_1 - ||z - c||_1) <= epsilon.
Projection and draw are post-processing; both are exact (integer arithmetic, :mod:`privsample.samplers.exact_draw`).

Accuracy (Thm 1.4): TV(P, Q) <= E||z - p_hat||_1 = k E|Z| / n <= 2k / (epsilon n), since the
discrete Laplace of scale t has E|Z| = 1/sinh(1/t) <= t. So n >= 2k / (alpha epsilon) records give
alpha-accuracy; the lower bound (Thm 1.5) is Omega(k / (alpha epsilon)).

Records outside the declared domain (:func:`encode`). The domain is public: the k declared categories plus,
unless the user names one of them as the catch-all, one extra outcome "(other)" (k' = k + 1 outcomes, fixed
before the data are read). A fixed per-record map phi sends each record to its category, and a value that is
missing or not a declared category to the catch-all. phi never drops a record and never looks at another
record, so replace-one neighbours x ~ x' (same n) map to phi(x) ~ phi(x') (equal, or replace-one neighbours
with the same n): the sampler run on phi(x) keeps its pure epsilon-DP guarantee, and no refusal or message
depends on whether, or how often, phi sent a record to the catch-all. Consequence for accuracy: Thm 1.4 holds
for the law of phi(record) on k' outcomes, TV <= 2k' / (epsilon n); the catch-all can be drawn (with
probability of order k' / (epsilon n) from the noise alone even when no record needs it).

Projection: the paper's defining line is stripped; its proof only needs an L1-nearest point of the simplex.
We use the Euclidean projection max(z - tau, 0), which is L1-nearest. For z = c~/n with
integer c~ it is rational: q_j = max(r c~_j - S_r + n, 0) / (n r), S_r the sum of the r largest c~ (r the
usual support size), so the draw is exact.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource
from privsample.samplers import exact_draw
from privsample.samplers.parallel import NEIGHBOURING, Draws, partition

SENSITIVITY_L1 = 2  # replace-one: one unit of count leaves a cell and enters another
OTHER_LABEL = "(other)"  # the catch-all outcome for values outside the declared categories (or missing)


def domain_with_other(labels: Sequence[str], other: str | None = None) -> tuple[list[str], int]:
    """The public outcome list and the catch-all's index, from public parameters only.

    ``other=None``: the catch-all is :data:`OTHER_LABEL` if it is a declared label, else an extra outcome
    ``OTHER_LABEL`` appended (k + 1 outcomes). ``other`` given: that declared label is the catch-all
    (k outcomes)."""
    labels = [str(v) for v in labels]
    if other is not None:
        if other not in labels:
            raise InputError(f"the catch-all {other!r} is not one of the declared categories")
        return labels, labels.index(other)
    if OTHER_LABEL in labels:
        return labels, labels.index(OTHER_LABEL)
    return labels + [OTHER_LABEL], len(labels)


def encode(values: Sequence[str | None], labels: Sequence[str], catch_all: int) -> np.ndarray:
    """The per-record map phi of the module docstring: a value equal to a label gets its index; any other
    value, and a missing one (None), gets ``catch_all``. Never refuses, never drops (n is unchanged)."""
    index = {str(c): i for i, c in enumerate(labels)}
    return np.fromiter(
        (index.get(v, catch_all) if v is not None else catch_all for v in values), dtype=np.int64, count=len(values)
    )


def noise_scale(epsilon: float) -> float:
    """Discrete Laplace scale on the integer counts: L1 sensitivity 2 / epsilon (Alg. 3's Lap(2/(eps n)) on
    frequencies, in count units)."""
    return SENSITIVITY_L1 / float(epsilon)


def tv_bound(k: int, epsilon: float, n: int) -> float:
    """Thm 1.4's accuracy bound for one draw from n records: TV <= 2k / (epsilon n)."""
    return 2.0 * k / (epsilon * n)


def required_n(k: int, epsilon: float, alpha: float) -> int:
    """Records per draw that Thm 1.4 needs for TV <= alpha: ceil(2k / (alpha epsilon))."""
    return int(math.ceil(2.0 * k / (alpha * epsilon) - 1e-9))


def project_counts(noisy: Sequence[int], n: int) -> tuple[list[int], int]:
    """Euclidean projection of z = noisy / n onto the simplex, exactly: (numerators, denominator)."""
    c = [int(v) for v in noisy]
    n = int(n)
    if n < 1:
        raise ValueError("n must be >= 1")
    u = sorted(c, reverse=True)
    r, s, s_r = 0, 0, 0
    for j, v in enumerate(u, start=1):
        s += v
        if j * v - s + n > 0:  # u_j - (S_j/n - 1)/j * n > 0, times j
            r, s_r = j, s
    nums = [max(r * v - s_r + n, 0) for v in c]
    den = n * r
    assert sum(nums) == den, "projection does not sum to one"
    return nums, den


def kary_distribution(counts: Sequence[int], epsilon: float, noise: NoiseSource) -> tuple[list[int], int]:
    """p~ of Alg. 3 for one part (no spending; callers spend first): noisy counts, then the projection."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    noisy = noise.laplace(counts, noise_scale(epsilon))
    return project_counts(noisy.tolist(), n)


def kary_sample(
    codes: np.ndarray,
    k: int,
    *,
    epsilon: float,
    accountant: Accountant,
    noise: NoiseSource,
    samples: int = 1,
    rng: np.random.Generator | None = None,
) -> Draws:
    """``samples`` independent draws of Alg. 3, one per disjoint part of ``codes`` (integers in [0, k)).

    ``rng`` is public randomness (the partition). The ledger gets one spend: rho = epsilon^2 / 2 with
    ``pure_epsilon`` = epsilon (parallel composition over the parts)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be > 0 and finite (got {epsilon})")
    k = int(k)
    if k < 1:
        raise InputError(f"k must be >= 1 (got {k})")
    codes = np.asarray(codes)
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise InputError("k-ary codes must be a 1-d integer array")
    if codes.size and (codes.min() < 0 or codes.max() >= k):
        raise InputError(f"k-ary codes must lie in [0, {k}): map raw values with kary.encode first")
    parts = partition(len(codes), samples, rng)
    sizes = [len(p) for p in parts]
    scale = noise_scale(epsilon)
    accountant.spend(
        epsilon**2 / 2,
        "kary/draw",
        mechanism="discrete Laplace + simplex projection (RSSS Alg. 3)",
        measured=f"{len(parts)} histograms of k={k} cells, one per disjoint part",
        noise_scale=scale,
        private=noise.private,
        pure_epsilon=float(epsilon),
        neighbouring=NEIGHBOURING,
        parts=len(parts),
        per_part_n=sizes,
        k=k,
        sensitivity_l1=SENSITIVITY_L1,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    out = np.empty(len(parts), dtype=np.int64)
    for i, idx in enumerate(parts):
        nums, _ = kary_distribution(np.bincount(codes[idx], minlength=k), epsilon, noise)
        out[i] = exact_draw.categorical(nums, noise)
    return Draws(
        samples=out,
        per_part_n=sizes,
        guarantee=f"pure epsilon-DP, epsilon = {epsilon:g}",
        epsilon=float(epsilon),
        rho=epsilon**2 / 2,
        info={"k": k, "noise_scale": scale, "tv_bound": tv_bound(k, epsilon, min(sizes))},
    )


__all__ = [
    "SENSITIVITY_L1",
    "OTHER_LABEL",
    "domain_with_other",
    "encode",
    "noise_scale",
    "tv_bound",
    "required_n",
    "project_counts",
    "kary_distribution",
    "kary_sample",
]
