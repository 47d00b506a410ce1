"""Partitions of a marginal's cells for PPSyn: the query, reconstruction error, paths, stopping rules.

Zhang, Deng and Yin 2023, Section 4.2.2 (Alg. 3 and 4 and the paper's stopping rules), and the planning
rule of PPSyn-DP's note schedule (:mod:`privsample.synth.ppsyn`).

A partition P of a marginal's n cells (C order over its clique) into k groups is held as
``labels`` (int array of length n, values 0..k-1). Measuring Q·x (the k group sums) has L2
sensitivity 1 under add/remove one record, since each record sits in exactly one cell.

Everything here is a deterministic function of the vector it is given. Whether that is private
depends on the caller: PPSyn-DP only passes public model marginals; the paper's mode passes true
counts (not DP: :class:`privsample.synth.ppsyn.PPSyn` says why).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import ClassVar, Iterator, NamedTuple

import numpy as np

from privsample.synth.jax_setup import configure_jax

configure_jax()  # before jax is imported below

import jax  # noqa: E402

try:  # the C version of Alg. 4's path (built with the package; optional): same partitions, ~40x faster
    from privsample.synth import splitpath as native_split
except ImportError:  # pragma: no cover - a build without a C compiler
    native_split = None

_TIE_DECIMALS = 9  # merge/split gains are rounded to this many decimals so float noise cannot break ties


@dataclass(frozen=True, eq=False)
class PartitionQuery:
    """Linear query Q·x: the sums of a marginal's cells over the groups of a partition.

    Rows of Q are disjoint 0/1 indicators, so Q Qᵀ = diag(group sizes) and ``op_norm_sq`` (the
    squared operator norm mbi uses for its step size) is the largest group size.
    Hash and equality are by identity (the arrays are unhashable; mbi treats queries as static).
    Not an identity query, so mbi never uses it to estimate the total.
    """

    labels: np.ndarray
    k: int
    use_for_total_estimation: ClassVar[bool] = False

    def __post_init__(self):
        labels = np.asarray(self.labels, dtype=np.int64).ravel()
        if labels.size and (labels.min() < 0 or labels.max() >= self.k):
            raise ValueError("partition labels must lie in 0..k-1")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "k", int(self.k))

    def __call__(self, factor) -> jax.Array:
        return jax.ops.segment_sum(factor.datavector(), self.labels, num_segments=self.k)

    def op_norm_sq(self) -> float:
        return float(np.bincount(self.labels, minlength=self.k).max())

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


# -- reconstruction error ---------------------------------------------------------------------------


def partition_sums(v: np.ndarray, labels: np.ndarray, k: int | None = None) -> np.ndarray:
    """Q·v: the sum of ``v`` over each group (float64)."""
    labels = np.asarray(labels).ravel()
    k = int(labels.max()) + 1 if k is None else int(k)
    return np.bincount(labels, weights=np.asarray(v, dtype=float).ravel(), minlength=k)


def uniform_spread(v: np.ndarray, labels: np.ndarray, k: int | None = None) -> np.ndarray:
    """U_P(v): each cell gets the mean of its group (the paper's uniform reconstruction)."""
    labels = np.asarray(labels).ravel()
    k = int(labels.max()) + 1 if k is None else int(k)
    sizes = np.bincount(labels, minlength=k)
    means = partition_sums(v, labels, k) / np.maximum(sizes, 1)
    return means[labels]


def reconstruction_error(v: np.ndarray, labels: np.ndarray, k: int | None = None) -> float:
    """RE(v, P) = ||v − U_P(v)||₁."""
    v = np.asarray(v, dtype=float).ravel()
    return float(np.abs(v - uniform_spread(v, labels, k)).sum())


def required_rho(parts, contribution, re, eta: float):
    """ρ(P, C, RE) = |P|² / (π (ηC − RE)²) if ηC > RE, else ∞ (vectorised; the paper's Section 4.2.2)."""
    parts = np.asarray(parts, dtype=float)
    gap = eta * np.asarray(contribution, dtype=float) - np.asarray(re, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(gap > 0, parts**2 / (math.pi * np.where(gap > 0, gap, 1.0) ** 2), np.inf)
    return out if out.ndim else float(out)


# -- paths ------------------------------------------------------------------------------------------


class PathEntry(NamedTuple):
    labels: np.ndarray  # group id of every cell (C order)
    parts: int  # |P|
    re: float  # RE(v, P)


class PartitionPath:
    """A lazily extended sequence of partitions P_0, P_1, ... of one vector, with |P_t| and RE_t.

    ``path[t]`` extends the path as far as needed (IndexError past its end); ``parts(t)`` and
    ``re(t)`` are cheap, ``labels(t)`` replays the first t steps. ``list(path)`` gives the whole path.
    """

    kind = ""

    def __init__(self, v: np.ndarray):
        self.v = np.asarray(v, dtype=float)
        self.n = int(self.v.size)
        self._parts: list[int] = []
        self._re: list[float] = []
        self._done = False

    def _step(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def has(self, t: int) -> bool:
        """Extend the path to step t if possible; False if it ends earlier."""
        while len(self._re) <= t and not self._done:
            if not self._step():
                self._done = True
        return t < len(self._re)

    def parts(self, t: int) -> int:
        if not self.has(t):
            raise IndexError(t)
        return self._parts[t]

    def re(self, t: int) -> float:
        if not self.has(t):
            raise IndexError(t)
        return self._re[t]

    def labels(self, t: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def labels_at(self, ts) -> list[np.ndarray]:
        """``[labels(t) for t in ts]`` (subclasses replay the path once for all of them)."""
        return [self.labels(t) for t in ts]

    def __getitem__(self, t: int) -> PathEntry:
        if t < 0 or not self.has(t):
            raise IndexError(t)
        return PathEntry(self.labels(t), self._parts[t], self._re[t])

    def __iter__(self) -> Iterator[PathEntry]:
        t = 0
        while self.has(t):
            yield self[t]
            t += 1

    def __len__(self) -> int:
        """Length of the complete path (computes all of it)."""
        while not self._done:
            self.has(len(self._re))
        return len(self._re)


class MergePath(PartitionPath):
    """Alg. 3: sort the cells ascending (stable), start from singletons and repeatedly merge the
    adjacent pair of runs (in sorted order) whose merge increases RE least (ties → leftmost).

    A heap of candidate merges with lazy invalidation: O(n log n) for the whole path.
    """

    kind = "merge"

    def __init__(self, v: np.ndarray):
        super().__init__(v)
        flat = self.v.ravel()
        self.order = np.argsort(flat, kind="stable")
        self.sorted = flat[self.order]
        self.prefix = np.concatenate([[0.0], np.cumsum(self.sorted)])
        n = self.n
        self.end = np.arange(1, n + 1)  # run starting at position s covers [s, end[s])
        self.prev = np.arange(-1, n - 1)  # start of the previous run
        self.alive = np.ones(n, dtype=bool)  # is position s the start of a run?
        self.removed: list[int] = []  # start of the right run absorbed at each step
        self.run_re = np.zeros(n)
        self._heap = [(self._merge_gain(s, s + 1), s, 1, 1) for s in range(n - 1)]
        heapq.heapify(self._heap)
        self.size = np.ones(n, dtype=np.int64)
        self._parts.append(n)
        self._re.append(0.0)

    def _run_re(self, a: int, b: int) -> float:
        """RE of the sorted values in [a, b): sum |x − mean| by prefix sums and a binary search."""
        m = b - a
        s = self.prefix[b] - self.prefix[a]
        mean = s / m
        j = int(np.searchsorted(self.sorted[a:b], mean, side="left")) + a
        below = self.prefix[j] - self.prefix[a]
        return float(mean * (j - a) - below + (s - below) - mean * (b - j))

    def _merge_gain(self, s: int, r: int) -> float:
        return round(self._run_re(s, self.end[r]) - self.run_re[s] - self.run_re[r], _TIE_DECIMALS)

    def _step(self) -> bool:
        while self._heap:
            gain, s, ls, rs = heapq.heappop(self._heap)
            if not self.alive[s] or self.size[s] != ls:
                continue
            r = self.end[s]
            if r >= self.n or not self.alive[r] or self.size[r] != rs:
                continue
            # merge run r into run s
            new_re = self._run_re(s, self.end[r])
            delta = new_re - self.run_re[s] - self.run_re[r]
            self.alive[r] = False
            self.end[s] = self.end[r]
            self.size[s] += self.size[r]
            self.run_re[s] = new_re
            if self.end[s] < self.n:
                self.prev[self.end[s]] = s
            self.removed.append(r)
            self._parts.append(self._parts[-1] - 1)
            self._re.append(max(0.0, self._re[-1] + delta))
            p = self.prev[s]
            if p >= 0:
                heapq.heappush(self._heap, (self._merge_gain(p, s), p, int(self.size[p]), int(self.size[s])))
            if self.end[s] < self.n:
                q = self.end[s]
                heapq.heappush(self._heap, (self._merge_gain(s, q), s, int(self.size[s]), int(self.size[q])))
            return True
        return False

    def labels(self, t: int) -> np.ndarray:
        if not self.has(t):
            raise IndexError(t)
        start = np.ones(self.n, dtype=np.int64)
        start[self.removed[:t]] = 0
        out = np.empty(self.n, dtype=np.int64)
        out[self.order] = np.cumsum(start) - 1
        return out


class SplitPath(PartitionPath):
    """Alg. 4: axis-aligned boxes over the clique's axes, starting from one box. Step t uses axis
    t mod k (or the next axis with a splittable box); it splits the box with the largest RE among
    those of extent ≥ 2 on that axis (ties → oldest) at the point that reduces RE most (ties →
    smallest). Ends when no box can be split or after ``max_parts`` parts.
    """

    kind = "split"
    _CHUNK_CELLS = 1_000_000  # bounds the (split points x slabs) arrays in _best_split
    _DIRECT_CELLS = 65536  # boxes with m² r up to this use _best_split_direct
    _NATIVE_FIRST = 64  # the C path is computed to this many parts first, then doubled as needed

    def __init__(self, v: np.ndarray, max_parts: int = 4096, native: bool | None = None):
        """``native``: use the C implementation (``splitpath.c``; default: when it was built) or the
        NumPy steps below. Both give the same partitions (tested); C is about 40x faster on PPSyn's
        3-way marginals, which matters because PPSyn-DP computes a path per candidate per round."""
        super().__init__(v)
        if self.v.ndim < 1:
            raise ValueError("SplitPath needs an array with at least one axis")
        if native and native_split is None:
            raise RuntimeError("the C split path (privsample.synth.splitpath) was not built")
        self.native = (native_split is not None and self.v.ndim <= 32) if native is None else bool(native)
        self.max_parts = int(max_parts)
        k, cap = self.v.ndim, 2 * self.max_parts + 1
        self.lo = np.zeros((cap, k), dtype=np.int64)
        self.hi = np.zeros((cap, k), dtype=np.int64)
        self.box_re = np.zeros(cap)
        self.live = np.zeros(cap, dtype=bool)
        self.hi[0] = self.v.shape
        self.box_re[0] = float(np.abs(self.v - self.v.mean()).sum()) if self.n else 0.0
        self.live[0] = True
        self.count = 1
        self.splits: list[tuple[tuple[slice, ...]]] = []  # region of the new (right) part at each step
        self._parts.append(1)
        self._re.append(self.box_re[0])

    def _slices(self, b: int) -> tuple[slice, ...]:
        return tuple(map(slice, self.lo[b].tolist(), self.hi[b].tolist()))

    def _best_split(self, b: int, axis: int) -> tuple[int, float, float]:
        """(s, RE(left), RE(right)) maximising RE(B) − RE(B_left) − RE(B_right), ties → smallest s.

        The box is viewed as m slabs of r cells along ``axis``. Each slab is sorted once, so the L1
        deviation of a slab from any point is a binary search plus prefix sums; all m − 1 split
        points cost O(m² log(m r)) instead of O(m² r).
        """
        x = np.moveaxis(self.v[self._slices(b)], axis, 0)
        m = x.shape[0]
        x = x.reshape(m, -1)
        r = x.shape[1]
        if m * m * r <= self._DIRECT_CELLS:
            return self._best_split_direct(b, x)
        x = np.sort(x, axis=1)
        psum = np.concatenate([np.zeros((m, 1)), np.cumsum(x, axis=1)], axis=1)
        rowsum = psum[:, r]
        cum = np.cumsum(rowsum)
        s_all = np.arange(1, m)
        mean_l = cum[:-1] / (s_all * r)
        mean_r = (cum[-1] - cum[:-1]) / ((m - s_all) * r)
        # rows made disjoint and increasing: row i lives in [i*span, i*span + span - 1]
        lo = x[:, 0].min()
        span = x[:, -1].max() - lo + 1.0
        rows = np.arange(m)
        flat = (x - lo + span * rows[:, None]).ravel()

        def deviation(points: np.ndarray) -> np.ndarray:
            """(len(points), m): sum over slab i of |x − point|."""
            q = (points[:, None] - lo) + span * rows[None, :]
            cnt = np.clip(np.searchsorted(flat, q, side="right") - r * rows[None, :], 0, r)
            below = psum[rows[None, :], cnt]
            return points[:, None] * (2 * cnt - r) - 2 * below + rowsum[None, :]

        re_l = np.empty(m - 1)
        re_r = np.empty(m - 1)
        step = max(1, self._CHUNK_CELLS // m)
        for c0 in range(0, m - 1, step):
            ss = s_all[c0 : c0 + step]
            left = rows[None, :] < ss[:, None]
            re_l[c0 : c0 + step] = np.where(left, deviation(mean_l[c0 : c0 + step]), 0.0).sum(axis=1)
            re_r[c0 : c0 + step] = np.where(left, 0.0, deviation(mean_r[c0 : c0 + step])).sum(axis=1)
        gain = np.round(self.box_re[b] - re_l - re_r, _TIE_DECIMALS)
        i = int(np.argmax(gain))
        return i + 1, max(0.0, float(re_l[i])), max(0.0, float(re_r[i]))

    def _best_split_direct(self, b: int, x: np.ndarray) -> tuple[int, float, float]:
        """:meth:`_best_split` for small boxes (m slabs of r cells, m² r small): every split point's
        deviations at once by broadcasting, a few NumPy calls instead of the sorted-prefix machinery."""
        m, r = x.shape
        cum = np.cumsum(x.sum(axis=1))
        s = np.arange(1, m)
        left = np.arange(m)[None, :] < s[:, None]  # (split, slab): slab on the left of split s
        means = np.where(left, (cum[:-1] / (s * r))[:, None], ((cum[-1] - cum[:-1]) / ((m - s) * r))[:, None])
        dev = np.abs(x[None, :, :] - means[:, :, None]).sum(axis=2)
        re_l = np.where(left, dev, 0.0).sum(axis=1)
        re_r = dev.sum(axis=1) - re_l
        gain = np.round(self.box_re[b] - re_l - re_r, _TIE_DECIMALS)
        i = int(np.argmax(gain))
        return i + 1, max(0.0, float(re_l[i])), max(0.0, float(re_r[i]))

    def _native_steps(self) -> bool:
        """Extend the path with the C version: recompute it to twice the parts computed so far (the
        prefix is the same), so the total work stays within twice that of the parts used."""
        have = len(self._re)
        target = min(self.max_parts, max(self._NATIVE_FIRST, 2 * have))
        if have >= target:
            return False
        k = self.v.ndim
        re = np.empty(target)
        lo = np.empty((max(target - 1, 0), k), dtype=np.int64)
        hi = np.empty_like(lo)
        t = native_split.split_path(
            np.ascontiguousarray(self.v, dtype=np.float64), np.asarray(self.v.shape, dtype=np.int64), target, re, lo, hi
        )
        if t + 1 <= have:
            return False
        self.splits.extend(
            tuple(map(slice, a, b)) for a, b in zip(lo[have - 1 : t].tolist(), hi[have - 1 : t].tolist())
        )
        self._re.extend(re[have : t + 1].tolist())
        self._parts.extend(range(have + 1, t + 2))
        if t + 1 < target:  # the path ended before the target
            self._done = True
        return True

    def _step(self) -> bool:
        if self.native:
            return self._native_steps()
        if self._parts[-1] >= self.max_parts:
            return False
        t = len(self._re) - 1
        k = self.v.ndim
        ext = self.hi[: self.count] - self.lo[: self.count]
        for j in range(k):
            axis = (t + j) % k
            ok = self.live[: self.count] & (ext[:, axis] >= 2)
            if ok.any():
                break
        else:
            return False
        # the largest RE (to _TIE_DECIMALS, so float noise cannot break ties); first max = oldest
        b = int(np.argmax(np.where(ok, np.round(self.box_re[: self.count], _TIE_DECIMALS), -np.inf)))
        s, re_l, re_r = self._best_split(b, axis)
        cut = self.lo[b, axis] + s
        left, right = self.count, self.count + 1
        self.lo[left], self.hi[left] = self.lo[b], self.hi[b]
        self.hi[left, axis] = cut
        self.lo[right], self.hi[right] = self.lo[b], self.hi[b]
        self.lo[right, axis] = cut
        self.box_re[left], self.box_re[right] = re_l, re_r
        self.live[b] = False
        self.live[left] = self.live[right] = True
        self.count += 2
        self.splits.append(self._slices(right))
        self._parts.append(self._parts[-1] + 1)
        self._re.append(float(self.box_re[: self.count][self.live[: self.count]].sum()))
        return True

    def labels(self, t: int) -> np.ndarray:
        if not self.has(t):
            raise IndexError(t)
        return self.labels_at([t])[0]

    def labels_at(self, ts) -> list[np.ndarray]:
        """The labels of P_t for every t in ``ts``, replaying the splits once."""
        ts = list(ts)
        for t in ts:
            if not self.has(t):
                raise IndexError(t)
        out = np.zeros(self.v.shape, dtype=np.int64)
        snap = {}
        for i, region in enumerate(self.splits[: max(ts, default=0)]):
            if i in ts:
                snap[i] = out.ravel().copy()
            out[region] = i + 1  # the right part gets a new id; the left part keeps its parent's
        return [snap[t] if t in snap else out.ravel().copy() for t in ts]


def partition_path(v: np.ndarray, max_parts: int = 4096) -> PartitionPath:
    """Alg. 3 for a one-way marginal (1-D ``v``), Alg. 4 for a marginal with ≥ 2 axes."""
    v = np.asarray(v, dtype=float)
    return MergePath(v) if v.ndim == 1 else SplitPath(v, max_parts=max_parts)


# -- stopping rules ---------------------------------------------------------------------------------


def paper_stop(path: PartitionPath, contribution: float, eta: float) -> tuple[int, float]:
    """The paper's stopping index (t, ρ_t) for a contribution C (Alg. 3 and 4).

    Alg. 3 (merge path): the first t with ρ_{t+1} > ρ_t; Alg. 4 (split path): the first t with ρ_t
    finite and ρ_{t+1} > ρ_t. At the end of the path: the last entry (ρ may be ∞).
    """
    t = 0
    rho = required_rho(path.parts(0), contribution, path.re(0), eta)
    while path.has(t + 1):
        nxt = required_rho(path.parts(t + 1), contribution, path.re(t + 1), eta)
        if nxt > rho and (path.kind == "merge" or math.isfinite(rho)):
            return t, rho
        t, rho = t + 1, nxt
    return t, rho


def plan_reference(path: PartitionPath, rho_plan: float) -> tuple[int, float]:
    """PPSyn-DP's public plan (step 3 of the note schedule): k_ref = first local minimum of
    f(k) = RE_k + |P_k| / sqrt(π ρ_plan) along the path; returns (k_ref, E = f(k_ref))."""
    unit = 1.0 / math.sqrt(math.pi * rho_plan)
    k = 0
    f = path.re(0) + path.parts(0) * unit
    while path.has(k + 1):
        nxt = path.re(k + 1) + path.parts(k + 1) * unit
        if nxt > f:
            break
        k, f = k + 1, nxt
    return k, f


__all__ = [
    "PartitionQuery",
    "partition_sums",
    "uniform_spread",
    "reconstruction_error",
    "required_rho",
    "PathEntry",
    "PartitionPath",
    "MergePath",
    "SplitPath",
    "partition_path",
    "paper_stop",
    "plan_reference",
]
