"""Exact draws from rational probabilities, shared by the RSSS samplers.

The final draw of a RSSS sampler (a Bernoulli with the clipped empirical mean, RSSS Thm 6.1; a category
from the projected noisy histogram, Alg. 3) is where a noise-free sampler gets its privacy, so it must be
exact: every probability here is a ratio of integers, ``num / den``, and the draw is ``U < num`` with U
uniform on {0, ..., den - 1}. With a private noise source U comes from :mod:`secrets` (the OS CSPRNG);
with a seeded source (``SeededNoise``, NOT private) from its NumPy generator, for reproducible experiments.
"""

from __future__ import annotations

import secrets
from fractions import Fraction
from typing import Sequence

import numpy as np

from privsample.privacy.noise import NoiseSource


def seeded_rng(noise: NoiseSource) -> np.random.Generator:
    rng = getattr(noise, "rng", None)
    if not isinstance(rng, np.random.Generator):
        raise TypeError("a non-private noise source must expose a NumPy Generator as .rng")
    return rng


def uniform_below(den: int, noise: NoiseSource) -> int:
    """U uniform on {0, ..., den - 1}: :func:`secrets.randbelow` if ``noise.private``, else the seeded rng."""
    den = int(den)
    if den < 1:
        raise ValueError(f"denominator must be >= 1, got {den}")
    if noise.private:
        return secrets.randbelow(den)
    return int(seeded_rng(noise).integers(0, den))  # seeded, not private


def bernoulli(p: Fraction, noise: NoiseSource) -> int:
    """One draw of Ber(p) for a rational p in [0, 1]: 1 iff U < numerator, U uniform below the denominator."""
    p = Fraction(p)
    if not 0 <= p <= 1:
        raise ValueError(f"probability {p} is outside [0, 1]")
    return int(uniform_below(p.denominator, noise) < p.numerator)


def bernoulli_many(nums: Sequence[int], den: int, noise: NoiseSource) -> np.ndarray:
    """Independent draws of Ber(nums[i] / den) (0 <= nums[i] <= den), as an int8 vector."""
    nums_list = [int(v) for v in nums]
    den = int(den)
    if any(v < 0 or v > den for v in nums_list):
        raise ValueError("numerators must lie in [0, den]")
    if not nums_list:
        return np.zeros(0, dtype=np.int8)
    if noise.private:
        return np.array([int(secrets.randbelow(den) < v) for v in nums_list], dtype=np.int8)
    if den < 2**62:
        u = seeded_rng(noise).integers(0, den, size=len(nums_list))  # seeded, not private
        return (u < np.asarray(nums_list, dtype=np.int64)).astype(np.int8)
    return np.array([int(uniform_below(den, noise) < v) for v in nums_list], dtype=np.int8)


def categorical(weights: Sequence[int], noise: NoiseSource) -> int:
    """Index j drawn with probability weights[j] / sum(weights) (non-negative integers, positive sum)."""
    w = [int(v) for v in weights]
    if any(v < 0 for v in w) or sum(w) <= 0:
        raise ValueError("weights must be non-negative integers with a positive sum")
    u = uniform_below(sum(w), noise)
    acc = 0
    for j, v in enumerate(w):
        acc += v
        if u < acc:
            return j
    raise AssertionError("unreachable")  # pragma: no cover


__all__ = ["uniform_below", "bernoulli", "bernoulli_many", "categorical"]
