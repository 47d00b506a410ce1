"""Noise sources: OpenDP's exact samplers (private) or a seeded NumPy generator (NOT private).

Every DP noise draw in privsample goes through a :class:`NoiseSource`, one call per vector:

* ``gaussian(counts, sigma)``: counts + discrete Gaussian N_Z(0, sigma^2) per cell. For a query of
  L2 sensitivity 1 this is 1/(2 sigma^2)-zCDP (Canonne, Kamath & Steinke 2020, Thm 4).
* ``laplace(counts, scale)``: counts + discrete Laplace(scale); L1 sensitivity 1 gives (1/scale)-DP.
* ``exponential(scores, epsilon, sensitivity)``: the exponential mechanism,
  P(r) proportional to exp(epsilon * q_r / (2 * sensitivity)), realised as report-noisy-max with
  Gumbel noise of scale 2*sensitivity/epsilon. It is epsilon-DP and epsilon^2/8-zCDP
  (bounded range; Cesar & Rogers 2021), which is the cost the accountant charges.

:class:`SecureNoise` calls OpenDP (CSPRNG, exact arithmetic, no floating-point attacks).
:class:`SeededNoise` exists only for reproducible experiments: it uses NumPy floats, so it is NOT
private; it warns when created and every ledger entry it touches is marked "not private: seeded noise".
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod

import numpy as np

from privsample.errors import SeededNoiseWarning

SEEDED_LABEL = "not private: seeded noise"


class NoiseSource(ABC):
    """Where mechanisms get their randomness."""

    private: bool = True

    @abstractmethod
    def gaussian(self, counts: np.ndarray, sigma: float) -> np.ndarray:
        """Integer counts plus i.i.d. discrete Gaussian noise of scale ``sigma`` (one call per vector)."""

    @abstractmethod
    def laplace(self, counts: np.ndarray, scale: float) -> np.ndarray:
        """Integer counts plus i.i.d. discrete Laplace noise of scale ``scale``."""

    @abstractmethod
    def exponential(self, scores: np.ndarray, epsilon: float, sensitivity: float) -> int:
        """Index drawn with probability proportional to exp(epsilon * score / (2 * sensitivity))."""

    def laplace_float(self, values: np.ndarray, scale: float) -> np.ndarray:
        """Real values plus i.i.d. (continuous) Laplace noise of scale ``scale``: for real-valued
        releases (the private-KDE baseline's coefficients); L1 sensitivity s gives (s/scale)-DP."""
        raise NotImplementedError(f"{type(self).__name__} has no float Laplace sampler")

    @property
    def label(self) -> str:
        return "secure (OpenDP)" if self.private else SEEDED_LABEL


def _as_int_counts(counts: np.ndarray) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.dtype.kind not in "iu":
        rounded = np.rint(arr)
        if not np.array_equal(rounded, arr):
            raise TypeError("noise is added to integer counts only")
        arr = rounded
    return arr.astype(np.int64, copy=False)


class SecureNoise(NoiseSource):
    """OpenDP samplers: discrete Gaussian / discrete Laplace on integer vectors, Gumbel noisy max."""

    private = True

    def __init__(self) -> None:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        self._dp = dp
        self._cache: dict[tuple, object] = {}

    def _meas(self, kind: str, scale: float):
        key = (kind, float(scale))
        m = self._cache.get(key)
        if m is None:
            dp = self._dp
            if kind == "gaussian":
                m = dp.m.make_gaussian(
                    dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l2_distance(T=dp.i64), scale=float(scale)
                )
            elif kind == "laplace":
                m = dp.m.make_laplace(
                    dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l1_distance(T=dp.i64), scale=float(scale)
                )
            else:
                # Report-noisy-max with *Gumbel* noise == the exponential mechanism. OpenDP uses Gumbel
                # noise only for the zCDP output measure (with MaxDivergence it switches to exponential
                # noise, i.e. permute-and-flip, a different distribution), so ask for zCDP here.
                m = dp.m.make_noisy_max(
                    dp.vector_domain(dp.atom_domain(T=dp.f64, nan=False)),
                    dp.linf_distance(T=dp.f64),
                    dp.zero_concentrated_divergence(),
                    scale=float(scale),
                )
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = m
        return m

    def gaussian(self, counts, sigma):
        if not (sigma > 0 and math.isfinite(sigma)):
            raise ValueError(f"invalid sigma {sigma}")
        arr = _as_int_counts(counts)
        out = np.asarray(self._meas("gaussian", sigma)(arr.ravel().tolist()), dtype=np.int64)
        return out.reshape(arr.shape)

    def laplace(self, counts, scale):
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"invalid scale {scale}")
        arr = _as_int_counts(counts)
        out = np.asarray(self._meas("laplace", scale)(arr.ravel().tolist()), dtype=np.int64)
        return out.reshape(arr.shape)

    def laplace_float(self, values, scale):
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"invalid scale {scale}")
        v = np.asarray(values, dtype=float)
        dp = self._dp
        key = ("laplace_float", float(scale))
        m = self._cache.get(key)
        if m is None:  # OpenDP's float Laplace: exact sampling of the rounded law (no floating-point attack)
            m = self._cache[key] = dp.m.make_laplace(
                dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=float(scale)
            )
        return np.asarray(m(v.ravel().tolist()), dtype=float).reshape(v.shape)

    def exponential(self, scores, epsilon, sensitivity):
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0:
            raise ValueError("exponential mechanism needs at least one candidate")
        if not np.all(np.isfinite(scores)):
            raise ValueError("scores must be finite")
        if not (epsilon > 0 and sensitivity > 0):
            raise ValueError("epsilon and sensitivity must be > 0")
        if scores.size == 1:
            return 0
        # Shifting by the max is post-processing-free (same distribution) and keeps numbers small.
        shifted = (scores - scores.max()).tolist()
        return int(self._meas("gumbel", 2.0 * sensitivity / epsilon)(shifted))


class SeededNoise(NoiseSource):
    """Seeded NumPy noise for reproducible experiments. NOT PRIVATE (floating-point, predictable)."""

    private = False

    def __init__(self, seed: int, *, quiet: bool = False) -> None:
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)  # seeded, not private
        if not quiet:
            warnings.warn(
                f"seed={seed}: using seeded NumPy noise; the output is NOT differentially private "
                "(reproducible experiments only)",
                SeededNoiseWarning,
                stacklevel=2,
            )

    def gaussian(self, counts, sigma):
        if not (sigma > 0 and math.isfinite(sigma)):
            raise ValueError(f"invalid sigma {sigma}")
        arr = _as_int_counts(counts)
        if sigma <= 64:  # exact discrete Gaussian by table lookup (seeded, not private)
            k = int(math.ceil(14 * sigma)) + 2
            support = np.arange(-k, k + 1)
            p = np.exp(-(support.astype(float) ** 2) / (2 * sigma * sigma))
            noise = self.rng.choice(support, size=arr.shape, p=p / p.sum())  # seeded, not private
        else:  # rounded Gaussian: total variation to N_Z(0, sigma^2) is negligible here (seeded, not private)
            noise = np.rint(self.rng.normal(0.0, sigma, size=arr.shape)).astype(np.int64)  # seeded, not private
        return arr + noise

    def laplace(self, counts, scale):
        arr = _as_int_counts(counts)
        # discrete Laplace = difference of two geometric variables (seeded, not private)
        q = 1.0 - math.exp(-1.0 / scale)
        g = self.rng.geometric(q, size=(2,) + arr.shape) - 1  # seeded, not private
        return arr + (g[0] - g[1])

    def laplace_float(self, values, scale):
        v = np.asarray(values, dtype=float)
        return v + self.rng.laplace(0.0, scale, v.shape)  # seeded, not private

    def exponential(self, scores, epsilon, sensitivity):
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0:
            raise ValueError("exponential mechanism needs at least one candidate")
        logits = 0.5 * epsilon / sensitivity * (scores - scores.max())
        return int(np.argmax(logits + self.rng.gumbel(size=logits.shape)))  # seeded, not private


def make_noise(seed: int | None = None, *, quiet: bool = False) -> NoiseSource:
    """``SecureNoise()`` when ``seed`` is None, else ``SeededNoise(seed)`` (NOT private)."""
    return SecureNoise() if seed is None else SeededNoise(seed, quiet=quiet)
