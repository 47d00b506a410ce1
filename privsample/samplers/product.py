"""General product-of-Bernoullis sampler (RSSS 2021, Section 5.1, Algorithm 4; Lemma 5.2;
Thms 5.1, 1.6).

Two phases on disjoint halves of the data, each cut into r batches of b = floor(n / (2r)) records:
* bucketing (batches D_1..D_{r-1}): round 1 releases the noisy column means of D_1, fixes the orientation
  (a column whose noisy mean exceeds 1/2 is flipped, x -> 1 - x, RSSS footnote 5) and assigns the columns
  with min(q, 1 - q) >= 3/16 to bucket 1; round j releases the noisy *truncated* means of D_j on the columns
  still active and assigns those >= 3 * 2^-(j+3) to bucket j; the rest form bucket r (biases <= 2^-r);
* sampling (batches E_1..E_r): for each bucket, fresh noisy truncated means of E_j on its columns, clipped
  to [0, 1]; one Bernoulli per column, un-flipped.
Truncation (Kamath et al.): a record v restricted to the active columns A with ||v||_1 = h > C becomes
(C/h) v. Ceilings C = U + sqrt(2 U Lg) + 2 Lg / 3 (a Bernstein bound for biases summing to U),
Lg = ln(16 n d r / beta), r = max(2, ceil(log2 d) + 1): our reconstruction (R) of stripped parameters.

Guarantee: rho-zCDP for replace-one neighbours with n public (Lemma 5.2). Every record lies in exactly one
batch and every batch feeds exactly one release, whose noise scale is computed from a data-independent
sensitivity bound and earlier releases only; a replaced record changes the conditional law of one
release, so the whole algorithm is rho-zCDP (not 2 r rho), the rest being post-processing. Raw cells are
first read as bits by the fixed per-record rule :func:`privsample.samplers.bernoulli.binarize` (1 iff exactly
one; anything else, missing included, is 0), which keeps replace-one neighbours neighbours with the same n. Sensitivity:
truncated records lie in [0, 1]^A with L1 norm <= C, so two differ by ||v - v'||_2^2 <= ||v - v'||_1 <=
min(2C, |A|). Secure noise: the released statistic is the integer sum of truncated records at a public
precision R (weights min(R, floor(R C / h)) in {0..R}; R = 1 where truncation cannot occur), whose L2
sensitivity is R sqrt(min(2C, |A|)) (entries <= R and L1 norm <= R C); the discrete Gaussian with
sigma = R sqrt(min(2C, |A|)) / sqrt(2 rho) is rho-zCDP (Canonne-Kamath-Steinke). In mean units that is the
note's sigma = sqrt(min(2C, |A|)) / (b sqrt(2 rho)). Estimates are rational (noisy sum / (R b)), so the
final Bernoulli draws are exact too.

Accuracy: Thm 5.1's n = O~(d / (alpha sqrt(rho))); :func:`required_n` is the note's conservative
sufficient batch size (section 4, terms (a)-(e)); measured errors are far smaller
(benchmarks/results/samplers_accuracy.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.errors import InputError
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource
from privsample.samplers import exact_draw
from privsample.samplers.bernoulli import binary_parts
from privsample.samplers.parallel import NEIGHBOURING, Draws, NotEnoughRecords

RESOLUTION = 1024  # public precision R of truncated records (integer weights 0..R)


def rounds(d: int) -> int:
    """r = max(2, ceil(log2 d) + 1), so that 2^-r <= 1/(2d) (and round 1 always fixes the orientation)."""
    return 2 if d <= 2 else int(math.ceil(math.log2(d))) + 1


def batch_size(n: int, d: int) -> int:
    return int(n) // (2 * rounds(d))


def log_term(n: int, d: int, beta: float) -> float:
    """Lg = ln(16 n d r / beta)."""
    return math.log(16.0 * n * d * rounds(d) / beta)


def ceiling(U: float, Lg: float) -> float:
    """Truncation ceiling C(U) = U + sqrt(2 U Lg) + 2 Lg / 3."""
    return U + math.sqrt(2.0 * U * Lg) + 2.0 * Lg / 3.0


def resolution(C: float, size: int) -> int:
    """R: 1 when truncation cannot fire (C >= |A|), else :data:`RESOLUTION`."""
    return 1 if C >= size else RESOLUTION


def l2_sensitivity(C: float, size: int, R: int) -> float:
    """L2 sensitivity of the integer sum of truncated records (replace one): R sqrt(min(2C, |A|))."""
    return R * math.sqrt(min(2.0 * C, float(size)))


def truncated_sums(block: np.ndarray, C: float, R: int) -> np.ndarray:
    """Sum over the rows of ``block`` (b x |A|, 0/1) of the truncated records at precision R (integers)."""
    block = np.asarray(block, dtype=np.int64)
    if C >= block.shape[1]:
        return R * block.sum(axis=0)
    h = block.sum(axis=1)
    w = np.where(h <= C, R, np.floor(R * C / np.maximum(h, 1)).astype(np.int64))
    return np.minimum(w, R) @ block


@dataclass
class Alg4Result:
    """One run of Algorithm 4 on one part: the biases it samples from and what it released."""

    bias_num: np.ndarray  # p~_i = bias_num[i] / bias_den[i], in the data's orientation
    bias_den: np.ndarray
    flipped: np.ndarray  # orientation o_i
    buckets: list[np.ndarray]
    releases: list[dict[str, Any]] = field(default_factory=list)
    r: int = 0
    b: int = 0
    Lg: float = 0.0

    @property
    def biases(self) -> np.ndarray:
        return self.bias_num / self.bias_den


def _release(
    noise: NoiseSource,
    rho: float,
    X: np.ndarray,
    rows: tuple[int, int],
    cols: np.ndarray,
    C: float,
    phase: str,
    j: int,
    keep: bool,
) -> tuple[np.ndarray, int, dict]:
    R = resolution(C, len(cols))
    sums = truncated_sums(X[rows[0] : rows[1]][:, cols], C, R)
    delta2 = l2_sensitivity(C, len(cols), R)
    sigma = sigma_for_rho(rho, delta2)
    noisy = np.asarray(noise.gaussian(sums, sigma), dtype=np.int64)
    rec = {
        "phase": phase,
        "round": j,
        "cols": cols.copy(),
        "C": C,
        "R": R,
        "size": len(cols),
        "delta2": delta2,
        "sigma": sigma,
        "rows": rows,
        "noisy": noisy,
    }
    if keep:
        rec["sums"] = sums
    return noisy, R, rec


def alg4_biases(
    X: np.ndarray,
    rho: float,
    noise: NoiseSource,
    *,
    alpha: float = 0.1,
    beta: float | None = None,
    keep_sums: bool = False,
) -> Alg4Result:
    """Run Algorithm 4 on the n x d 0/1 array X (no spending: the caller spends rho first) up to the biases."""
    X = np.asarray(X, dtype=np.int8)
    n, d = X.shape
    beta = alpha / 2 if beta is None else beta
    r, b = rounds(d), batch_size(n, d)
    if b < 1:
        raise NotEnoughRecords(
            f"Algorithm 4 with d = {d} columns needs at least 2r = {2 * r} records per draw (one per batch), got {n}"
        )
    Lg = log_term(n, d, beta)
    D = [((j - 1) * b, j * b) for j in range(1, r + 1)]  # bucketing batches (D_r unused)
    E = [(r * b + (j - 1) * b, r * b + j * b) for j in range(1, r + 1)]  # sampling batches
    res = Alg4Result(
        bias_num=np.zeros(d, np.int64),
        bias_den=np.ones(d, np.int64),
        flipped=np.zeros(d, bool),
        buckets=[],
        r=r,
        b=b,
        Lg=Lg,
    )
    # -- bucketing, round 1: all columns, no truncation, fixes the orientation
    A = np.arange(d)
    noisy, R, rec = _release(noise, rho, X, D[0], A, math.inf, "bucketing", 1, keep_sums)
    res.releases.append(rec)
    o = 2 * noisy > R * b
    res.flipped = o
    Xf = np.where(o, 1 - X, X).astype(np.int8)
    low = np.minimum(noisy, R * b - noisy)
    in_b = 16 * low >= 3 * R * b  # min(q, 1 - q) >= 3/16
    res.buckets.append(A[in_b])
    A = A[~in_b]
    # -- bucketing, rounds 2..r-1: truncated means on the active columns
    for j in range(2, r):
        if A.size == 0:
            res.buckets.append(A)
            continue
        C = ceiling(2.0**-j * A.size, Lg)
        noisy, R, rec = _release(noise, rho, Xf, D[j - 1], A, C, "bucketing", j, keep_sums)
        res.releases.append(rec)
        in_b = noisy * 2 ** (j + 3) >= 3 * R * b  # q >= 3 * 2^-(j+3)
        res.buckets.append(A[in_b])
        A = A[~in_b]
    res.buckets.append(A)  # bucket r: biases <= 2^-r
    # -- sampling: fresh truncated means per bucket, clipped to [0, 1]
    for j, B in enumerate(res.buckets, start=1):
        if B.size == 0:
            continue
        C = math.inf if j == 1 else ceiling(2.0**-j * B.size, Lg)  # u_1 = 9/16: no truncation in bucket 1
        noisy, R, rec = _release(noise, rho, Xf, E[j - 1], B, C, "sampling", j, keep_sums)
        res.releases.append(rec)
        den = R * b
        num = np.clip(noisy, 0, den)
        res.bias_num[B] = np.where(o[B], den - num, num)
        res.bias_den[B] = den
    return res


def product_sample(
    X: np.ndarray,
    *,
    rho: float,
    accountant: Accountant,
    noise: NoiseSource,
    samples: int = 1,
    alpha: float = 0.1,
    beta: float | None = None,
    rng: np.random.Generator | None = None,
) -> Draws:
    """``samples`` draws of Algorithm 4, one per disjoint part of the n x d 0/1 ``X``: rho-zCDP in all.

    One ledger spend of rho (Lemma 5.2 within a part; parallel composition across parts)."""
    if not (math.isfinite(rho) and rho > 0):
        raise InputError(f"rho must be > 0 and finite (got {rho})")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1) (got {alpha})")
    X, parts, sizes = binary_parts(X, samples, rng)
    d = X.shape[1]
    r = rounds(d)
    if min(sizes) < 2 * r:
        raise NotEnoughRecords(
            f"Algorithm 4 with d = {d} columns needs at least 2r = {2 * r} records per draw "
            f"(one per batch), i.e. n >= {2 * r * len(parts):,} for {len(parts)} draw(s); "
            f"got {min(sizes):,} per draw"
        )
    sigma1 = sigma_for_rho(rho, math.sqrt(d))
    accountant.spend(
        rho,
        "product/draw",
        mechanism="discrete Gaussian, RSSS Alg. 4 (bucketing + sampling)",
        measured=f"{len(parts)} run(s) of Alg. 4 on d={d} columns: noisy truncated column sums of "
        f"2r-1 <= {2 * r - 1} disjoint batches, each record in one batch",
        noise_scale=sigma1,
        private=noise.private,
        neighbouring=NEIGHBOURING,
        parts=len(parts),
        per_part_n=sizes,
        d=d,
        rounds=r,
        batch_size=[s // (2 * r) for s in sizes],
        alpha=alpha,
        beta=alpha / 2 if beta is None else beta,
        resolution=RESOLUTION,
        **({} if noise.private else {"note": SEEDED_LABEL}),
    )
    out = np.empty((len(parts), d), dtype=np.int8)
    runs = []
    for i, idx in enumerate(parts):
        res = alg4_biases(X[idx], rho, noise, alpha=alpha, beta=beta)
        for bucket in {int(v) for v in res.bias_den}:
            cols = np.flatnonzero(res.bias_den == bucket)
            out[i, cols] = exact_draw.bernoulli_many(res.bias_num[cols], bucket, noise)
        runs.append(
            {
                "buckets": [int(B.size) for B in res.buckets],
                "flipped": int(res.flipped.sum()),
                "releases": len(res.releases),
            }
        )
    return Draws(
        samples=out,
        per_part_n=sizes,
        guarantee=f"rho-zCDP, rho = {rho:.6g}",
        rho=rho,
        info={"d": d, "rounds": r, "runs": runs},
    )


# -- the note's sufficient sample size (section 4; conservative) ---------------------------------------
def _bern(t: float, v: float, Lg: float) -> float:
    return 2.0 * (v + t / 3.0) * Lg / (t * t)


def sufficient_batch(n: int, d: int, rho: float, alpha: float, beta: float | None = None) -> float:
    """The note's terms (a)-(e): a batch size b that suffices for TV <= alpha at total size n (Lg uses n)."""
    beta = alpha / 2 if beta is None else beta
    r, Lg = rounds(d), log_term(n, d, beta)
    need = 0.0
    for j in range(1, r):
        v = d if j == 1 else min(2 * ceiling(2.0**-j * d, Lg), d)
        u = 9 / 16 if j == 1 else 2.0**-j
        vs = d if j == 1 else min(2 * ceiling(u * d, Lg), d)
        need = max(
            need,
            2.0 ** (j + 4) * math.sqrt(v * Lg / rho),  # (a) bucketing noise
            _bern(2.0 ** (-j - 4), min(2.0**-j, 0.25), Lg),  # (b) bucketing sampling error
            2.0 ** (j + 3) * math.sqrt(vs * Lg / rho),  # (c) sampling-phase noise
            _bern(2.0 ** (-j - 3), min(u, 0.25), Lg),
        )  # (d) sampling-phase sampling error
    need = max(need, 2 / math.sqrt(math.pi) * d * math.sqrt(2 * ceiling(0.5, Lg) / rho) / alpha)  # (e) last bucket
    return need


def required_n(d: int, rho: float, alpha: float, beta: float | None = None) -> int:
    """Records per draw that the note's conservative calculator deems sufficient (n = 2 r b, fixed point in Lg)."""
    r = rounds(d)
    n = 2 * r
    for _ in range(100):
        n_new = 2 * r * int(math.ceil(sufficient_batch(n, d, rho, alpha, beta)))
        if n_new <= n:
            return n
        n = n_new
    return n


__all__ = [
    "RESOLUTION",
    "rounds",
    "batch_size",
    "log_term",
    "ceiling",
    "resolution",
    "l2_sensitivity",
    "truncated_sums",
    "Alg4Result",
    "alg4_biases",
    "product_sample",
    "sufficient_batch",
    "required_n",
]
