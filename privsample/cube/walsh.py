"""Walsh features of degree <= d on the Boolean cube, without forming the m x L matrix
(BSV 2021 Algorithm 1; Pierquin et al.'s W_S).

Conventions:

* A reduced space / data set is an ``m x p`` int8 matrix ``S`` of signs +-1 (row i is theta_i).
* The index set is every J subset of [p] with |J| <= d, the empty set included, ordered as
  :func:`walsh_subsets`: the empty set first, then by degree, lexicographically within a degree.
  L = :func:`walsh_size` (p, d) = sum_{t <= d} C(p, t).
* w_J(x) = prod_{j in J} x_j; M is the m x L matrix M_iJ = w_J(theta_i) and A = M^T (L x m).
* ``walsh_rmatvec(S, h, d) = A h`` (length L): for a density h on S this is its coefficient vector
  c_J(h) = sum_i h_i w_J(theta_i); ``walsh_matvec(S, y, d) = A^T y`` (length m).
* ``point_coefficients(S, d) = A 1 / m`` is c_u, the coefficients of the uniform density on S; the
  same function applied to a data set X (n x p) gives c_f, the coefficients of f_n.

Products are computed in row chunks. For d <= 2 they use GEMM on the p x p level (A h needs
S^T diag(h) S, whose upper triangle holds every pair sum; A^T y is a quadratic form in each row), so
they cost O(m p^2) and never build a feature matrix. For any d >= 3 the generic path builds one chunk of
explicit features of degree <= d - 1 at a time (features as rows, so that every product is a contiguous
row operation) and gets the top degree from one GEMM with S (the same trick one degree up).

Gram matrices A_I A_I^T have integer entries (sums of +-1); they are built from float32 features in
chunks of at most 2^14 rows, so every partial sum is an integer below 2^24 and exact in float32, and
the chunks are added in float64: the result is the exact integer matrix, at half the cost of float64
GEMM (this is the cost that dominates the solvers in :mod:`privsample.cube.qp` and :mod:`privsample.cube.lp`).
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from itertools import combinations

import numpy as np

from privsample.errors import InputError

__all__ = [
    "as_signs",
    "walsh_subsets",
    "walsh_size",
    "walsh_features",
    "walsh_rmatvec",
    "walsh_matvec",
    "point_coefficients",
    "walsh_gram",
    "gram_free",
    "well_conditioned",
    "conditioning_margin",
    "draw_reduced_space",
]

_CHUNK_BYTES = 16 * 2**20  # target size of one chunk of explicit features
_GRAM_CHUNK_MAX = 2**14  # rows per float32 Gram chunk: partial sums stay exact integers < 2^24


# ---------------------------------------------------------------------------------------------------
# index sets
# ---------------------------------------------------------------------------------------------------
def _check_pd(p: int, d: int) -> tuple[int, int]:
    pi, di = int(p), int(d)
    if pi < 0 or di < 0:
        raise InputError(f"p and d must be >= 0, got p={p}, d={d}")
    return pi, min(di, pi)


def walsh_size(p: int, d: int) -> int:
    """L = sum_{t <= d} C(p, t): the number of Walsh functions of degree <= d, the empty set included."""
    pi, di = _check_pd(p, d)
    return sum(math.comb(pi, t) for t in range(di + 1))


@lru_cache(maxsize=32)
def _subsets(p: int, d: int) -> tuple[tuple[int, ...], ...]:
    return tuple(J for t in range(d + 1) for J in combinations(range(p), t))


def walsh_subsets(p: int, d: int) -> list[tuple[int, ...]]:
    """Every J subset of {0..p-1} with |J| <= d as a sorted tuple of bit indices: () first, then by degree,
    lexicographic within a degree (for d = 2: (), (0,), ..., (p-1,), (0, 1), (0, 2), ..., (p-2, p-1))."""
    pi, di = _check_pd(p, d)
    return list(_subsets(pi, di))


@lru_cache(maxsize=32)
def _plan(p: int, d: int) -> tuple[tuple[int, np.ndarray, np.ndarray], ...]:
    """Per degree t >= 1: (start index, parent index, added bit) so that w_J = w_{J minus max J} * x_{max J}."""
    subs = _subsets(p, d)
    index = {J: k for k, J in enumerate(subs)}
    out, k = [], 1
    for t in range(1, d + 1):
        n_t = math.comb(p, t)
        par = np.array([index[J[:-1]] for J in subs[k : k + n_t]], dtype=np.intp)
        bit = np.array([J[-1] for J in subs[k : k + n_t]], dtype=np.intp)
        out.append((k, par, bit))
        k += n_t
    return tuple(out)


@lru_cache(maxsize=32)
def _top_plan(p: int, d: int) -> tuple[int, int, np.ndarray, np.ndarray]:
    """For the degree-d block: (start of the degree-(d-1) block, start of the degree-d block, and per top
    subset J = K + {j} (j = max J) the row of K within the degree-(d-1) block and the bit j)."""
    subs = _subsets(p, d)
    lo = sum(math.comb(p, t) for t in range(d - 1))
    top = lo + math.comb(p, d - 1)
    index = {J: k - lo for k, J in enumerate(subs[lo:top], start=lo)}
    K = np.array([index[J[:-1]] for J in subs[top:]], dtype=np.intp)
    j = np.array([J[-1] for J in subs[top:]], dtype=np.intp)
    return lo, top, K, j


# ---------------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------------
def as_signs(S: np.ndarray) -> np.ndarray:
    """``S`` as an int8 m x p matrix of +-1 signs; :class:`InputError` if it is not one."""
    S = np.asarray(S)
    if S.ndim != 2:
        raise InputError(f"S must be an m x p matrix of +-1 signs, got shape {S.shape}")
    if S.dtype != np.int8:
        if S.size and not np.all(np.abs(S) == 1):
            raise InputError("S must contain only +1 and -1")
        S = S.astype(np.int8)
    return S


def _rows_per_chunk(L: int, itemsize: int, cap: int | None = None) -> int:
    c = max(256, _CHUNK_BYTES // max(1, L * itemsize))
    return min(c, cap) if cap else c


def walsh_features(S: np.ndarray, d: int, dtype=np.float64, transposed: bool = False) -> np.ndarray:
    """Explicit features of the rows of ``S``: the m x L matrix M (or M^T = A, L x m, if ``transposed``).

    Builds the whole matrix: meant for one chunk of rows, small tests and reference solvers."""
    S = as_signs(S)
    m, p = S.shape
    di = min(int(d), p)
    L = walsh_size(p, di)
    ST = np.ascontiguousarray(S.T).astype(dtype, copy=False)
    F = np.empty((L, m), dtype=dtype)
    F[0] = 1
    for k, par, bit in _plan(p, di):
        if k == 1:
            F[1 : 1 + p] = ST
        elif di == 2 and k == p + 1:  # pairs: one broadcast per first bit, all contiguous rows
            off = k
            for j in range(p - 1):
                np.multiply(ST[j][None, :], ST[j + 1 :], out=F[off : off + p - j - 1])
                off += p - j - 1
        else:
            F[k : k + len(par)] = F[par] * ST[bit]
    return F if transposed else F.T


# ---------------------------------------------------------------------------------------------------
# matrix-free products
# ---------------------------------------------------------------------------------------------------
def walsh_rmatvec(S: np.ndarray, h: np.ndarray, d: int) -> np.ndarray:
    """A h = sum_i h_i (w_J(theta_i))_J, length L (float64), without forming A.

    For a density h on the rows of S this is its coefficient vector; with h = 1/n on a data set X it is
    c_f. d <= 2: O(m p^2) via S^T diag(h) S; otherwise chunks of explicit features."""
    S = as_signs(S)
    m, p = S.shape
    h = np.asarray(h, dtype=np.float64)
    if h.shape != (m,):
        raise InputError(f"h must have length m = {m}, got shape {h.shape}")
    di = min(int(d), p)
    L = walsh_size(p, di)
    out = np.zeros(L)
    if di <= 2:
        out[0] = h.sum()
        if di == 0:
            return out
        c = 8192
        lin = np.zeros(p)
        Q = np.zeros((p, p)) if di == 2 else None
        for s in range(0, m, c):
            X = S[s : s + c].astype(np.float64)
            Xh = X * h[s : s + c, None]
            lin += Xh.sum(axis=0)
            if Q is not None:
                Q += Xh.T @ X
        out[1 : 1 + p] = lin
        if Q is not None:
            out[1 + p :] = Q[np.triu_indices(p, 1)]
        return out
    # d >= 3: explicit features up to degree d - 1; the degree-d block from one GEMM per chunk,
    # (W_{d-1} diag(h) S)[K, j] = sum_i h_i w_K(x_i) x_ij = c_{K + j} for j > max K
    lo, top, Kr, jb = _top_plan(p, di)
    c = _rows_per_chunk(top, 8)
    low = np.zeros(top)
    Mtop = np.zeros((top - lo, p))
    for s in range(0, m, c):
        W = walsh_features(S[s : s + c], di - 1, np.float64, transposed=True)
        hc = h[s : s + c]
        low += W @ hc
        Mtop += (W[lo:] * hc) @ S[s : s + c].astype(np.float64)
    out[:top] = low
    out[top:] = Mtop[Kr, jb]
    return out


def walsh_matvec(S: np.ndarray, y: np.ndarray, d: int) -> np.ndarray:
    """A^T y = (sum_J y_J w_J(theta_i))_i, length m (float64), without forming A.

    d <= 2: y_0 + S y_1 + x^T U x per row with U the strictly upper p x p matrix of the pair
    coefficients (one GEMM per chunk); otherwise chunks of explicit features."""
    S = as_signs(S)
    m, p = S.shape
    di = min(int(d), p)
    L = walsh_size(p, di)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (L,):
        raise InputError(f"y must have length L = {L}, got shape {y.shape}")
    out = np.empty(m)
    if di == 0:
        out.fill(y[0])
        return out
    if di <= 2:
        U = None
        if di == 2:
            U = np.zeros((p, p))
            U[np.triu_indices(p, 1)] = y[1 + p :]
        c = 8192
        for s in range(0, m, c):
            X = S[s : s + c].astype(np.float64)
            z = X @ y[1 : 1 + p]
            if U is not None:
                z += np.einsum("ij,ij->i", X @ U, X)
            out[s : s + c] = z + y[0]
        return out
    # d >= 3: sum_J y_J w_J(x) = y_low . w_low(x) + sum_K w_K(x) (Y x)_K with Y[K, j] = y_{K + j}, j > max K
    lo, top, Kr, jb = _top_plan(p, di)
    Y = np.zeros((top - lo, p))
    Y[Kr, jb] = y[top:]
    c = _rows_per_chunk(top, 8)
    for s in range(0, m, c):
        W = walsh_features(S[s : s + c], di - 1, np.float64, transposed=True)
        z = y[:top] @ W
        z += np.einsum("kc,kc->c", W[lo:], Y @ S[s : s + c].T.astype(np.float64))
        out[s : s + c] = z
    return out


def point_coefficients(S: np.ndarray, d: int) -> np.ndarray:
    """A 1 / m: the coefficient vector of the uniform density on the rows of S (c_u; c_f for data)."""
    S = as_signs(S)
    if S.shape[0] == 0:
        raise InputError("no points")
    return walsh_rmatvec(S, np.full(S.shape[0], 1.0 / S.shape[0]), d)


# ---------------------------------------------------------------------------------------------------
# Gram matrices
# ---------------------------------------------------------------------------------------------------
def _gram_rows(S: np.ndarray, d: int, rows: np.ndarray | None, weights: np.ndarray | None = None) -> np.ndarray:
    """Exact integer sum over the selected rows of k_i f_i f_i^T (float64, L x L); k = integer weights
    (multiplicities of merged duplicate points), 1 by default."""
    m, p = S.shape
    di = min(int(d), p)
    L = walsh_size(p, di)
    G = np.zeros((L, L))
    if rows is not None and rows.dtype == bool:
        rows = np.flatnonzero(rows)
    n = m if rows is None else len(rows)
    if n == 0:
        return G
    c = _rows_per_chunk(L, 4, _GRAM_CHUNK_MAX)
    if weights is not None:
        weights = np.asarray(weights)
        total = float(weights.sum()) if rows is None else float(weights[rows].sum())
        if np.any(weights != np.round(weights)) or np.any(weights < 0):
            raise InputError("Gram weights must be non-negative integers (multiplicities)")
        exact32 = total < 2**24
    for s in range(0, n, c):
        idx = slice(s, s + c) if rows is None else rows[s : s + c]
        F = walsh_features(S[idx], di, np.float32, transposed=True)
        if weights is None:
            G += F @ F.T  # float32 GEMM of +-1 entries over <= 2^14 rows: exact integers
        elif exact32:
            G += (F * weights[idx].astype(np.float32)) @ F.T  # integer partial sums < 2^24: exact
        else:
            F64 = F.astype(np.float64)
            G += (F64 * weights[idx]) @ F64.T
    return G


_GRAM_CACHE: dict[str, object] = {}


def _fingerprint(S: np.ndarray, d: int) -> str:
    hsh = hashlib.blake2b(digest_size=16)
    hsh.update(repr((S.shape, int(d))).encode())
    hsh.update(np.ascontiguousarray(S).view(np.uint8).data)
    return hsh.hexdigest()


def walsh_gram(S: np.ndarray, d: int) -> np.ndarray:
    """M^T M = A A^T (L x L, exact integers in float64): entry (I, J) is sum_i w_{I xor J}(theta_i).

    The last result is cached under a hash of S's bytes, so the conditioning test and the solver (which
    both need it, at m L^2 flops) share one computation; the cache is keyed on content, never on identity."""
    S = as_signs(S)
    key = _fingerprint(S, d)
    if _GRAM_CACHE.get("key") == key:
        return np.array(_GRAM_CACHE["G"], copy=True)
    G = _gram_rows(S, d, None)
    _GRAM_CACHE.clear()
    _GRAM_CACHE.update(key=key, G=G)
    return G.copy()


def gram_free(S: np.ndarray, free_mask: np.ndarray | None, d: int, weights: np.ndarray | None = None) -> np.ndarray:
    """A_I A_I^T for the rows I selected by ``free_mask`` (boolean mask of length m, or an index array;
    None selects every row), as an exact integer matrix in float64, by chunked float32 GEMM on explicit
    features (the generalised Jacobian of the dual Newton method). ``weights`` (integer
    multiplicities of merged duplicate points) gives A_I diag(k_I) A_I^T."""
    S = as_signs(S)
    if free_mask is None and weights is None:
        return walsh_gram(S, d)
    rows = None if free_mask is None else np.asarray(free_mask)
    if rows is not None and rows.dtype == bool and rows.shape != (S.shape[0],):
        raise InputError(f"free_mask must have length m = {S.shape[0]}")
    return _gram_rows(S, d, rows, weights)


# ---------------------------------------------------------------------------------------------------
# conditioning test and the reduced space
# ---------------------------------------------------------------------------------------------------
def conditioning_margin(S: np.ndarray, d: int) -> float:
    """lambda_min(M^T M) / (m / (4 e^{2d})): >= 1 iff BSV's test sigma_min(M) >= sqrt(m) / (2 e^d) passes
    (eigvalsh of the exact integer Gram; squaring is harmless at this threshold).
    0.0 when m < L (M then has rank < L: sigma_L = 0)."""
    S = as_signs(S)
    m, p = S.shape
    L = walsh_size(p, d)
    if m < L or m == 0:
        return 0.0
    lam_min = float(np.linalg.eigvalsh(walsh_gram(S, d))[0])
    return max(lam_min, 0.0) / (m / (4.0 * math.exp(2.0 * min(int(d), p))))


def well_conditioned(S: np.ndarray, d: int) -> bool:
    """BSV's well-conditioning test (BSV 2021, Algorithm 1 step 2): sigma_min(M) >= sqrt(m) / (2 e^d).

    Looks only at S (data-independent), so redrawing S until it passes costs no privacy. False when
    m < L. Costs one Gram matrix (m L^2 flops), which :func:`walsh_gram` caches for the solver."""
    return conditioning_margin(S, d) >= 1.0


def draw_reduced_space(p: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """S: m points drawn i.i.d. uniformly from {-1, 1}^p (int8, m x p), independently of the data
    (BSV Algorithm 1 step 1; with replacement, duplicates kept as separate atoms)."""
    pi, mi = int(p), int(m)
    if pi < 1 or mi < 1:
        raise InputError(f"p and m must be >= 1, got p={p}, m={m}")
    S = rng.integers(0, 2, size=(mi, pi), dtype=np.int8)
    S *= 2
    S -= 1
    return S
