"""Empirical privacy check of a synthetic table against a holdout: evidence, NOT a guarantee, and NOT private.

Given the training table (REAL), records of the same population the synthesizer never saw (HOLDOUT) and the
synthetic table, ``privacy_check`` measures what a synthesizer that memorises its training records would show:

* distance to closest record (DCR): for each synthetic record, the Gower-like distance to its closest record
  in REAL and in HOLDOUT (median, 5th percentile) and the share of synthetic records closer to REAL than to
  HOLDOUT (ties split in half: about 0.5 when nothing is memorised), as in Platzer and Reutterer (2021),
  "Holdout-based empirical assessment of mixed-type synthetic data";
* a distance-based membership-inference attack (shadow-free): each record of REAL and of HOLDOUT is scored by
  its closeness to the synthetic table; the AUC of telling REAL members from HOLDOUT records (0.5: no signal)
  with DeLong's confidence interval (DeLong, DeLong and Clarke-Pearson 1988; the midrank algorithm of Sun and
  Xu 2014), as the distance attacks of Chen, Yu, Zhang and Fritz (2020), "GAN-Leaks";
* a non-private baseline: the same check with the training records themselves released (DCR to REAL 0, AUC
  near 1), showing that the attack works on this data.

REAL and HOLDOUT are compared at equal sizes: the larger is subsampled to the smaller (seeded, reported).
Distance: the mean over columns of a per-column distance in [0, 1]: numeric columns scaled to [0, 1] by the
real range (schema bounds when a schema is given; other values clipped to it), |x - y|; categorical columns
0/1 mismatch; a missing value (or a non-number in a numeric column) is at distance 1 from any value and 0
from another missing one. It is computed exactly, both ways at once, in blocks of at most ``WORK_ELEMENTS``
distances (1 MB): categorical columns with few values as a one-hot matrix product (matches counted by BLAS),
the others one column at a time; identical records are merged first. Memory grows with n, not n x n.

Why not sdmetrics (0.32.0, whose DCROverfittingProtection computes the same DCR share): it requires pandas < 3
(this project runs on pandas 3) and pulls in copulas, plotly, narwhals, tqdm and pytz; its DCR, a pandas cross
join per 1000 x 1000 records, took 35.7 CPU seconds on 2,000 x 2,000 raw Adult records against 0.25 here, and
did not finish 10,000 x 10,000 in 25 minutes (3.3 CPU seconds here); it has no attack AUC or baseline
(measured in docs/privacy-check.md).

NOT PRIVATE: every figure reads the real and holdout tables exactly; keep it with the data owner. A
differentially private release should sit near 0.5 (share and AUC); a value near 0.5 is evidence against
gross memorisation, not a privacy guarantee (the guarantee is the release's (epsilon, delta)).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from privsample.errors import InputError

__all__ = [
    "DCR_SEED",
    "Coding",
    "CheckResult",
    "PrivacyCheck",
    "coding",
    "dcr",
    "delong_auc",
    "privacy_check",
    "check_not_real",
]

DCR_SEED = 0  # the subsample of the larger of REAL and HOLDOUT
WORK_ELEMENTS = 1 << 17  # distances held at once (float64 buffers of 1 MB: in cache)
BLOCK = 4096  # reference rows per block
ONE_HOT_MAX = 64  # a categorical column with at most this many values goes through the matrix product
TIE = 1e-9  # two distances closer than this are equal
Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal


@dataclass(frozen=True)
class Coding:
    """How records become points: per column, ``kind`` "numeric" (with ``lower``, ``upper``) or "categorical"."""

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    bounds: tuple[tuple[float, float], ...]  # numeric: (lower, upper); categorical: (0, 0)


def coding(domain: Any, schema: Any = None) -> Coding:
    """The coding of the evaluation domain's columns (``privsample.evaluation.tables.EvalDomain``): the schema's
    kind and bounds when ``schema`` holds the column, else the kind and [min, max] read off the real table."""
    from privsample.data.schema import Numeric

    kinds, bounds = [], []
    for c in domain.columns:
        sc = schema[c.name] if schema is not None and c.name in schema else None
        if sc is not None:
            numeric = isinstance(sc, Numeric)
            lo, hi = (float(sc.lower), float(sc.upper)) if numeric else (0.0, 0.0)
        else:
            numeric = c.kind == "numeric" and len(c.edges) >= 2
            lo, hi = (float(c.edges[0]), float(c.edges[-1])) if numeric else (0.0, 0.0)
        kinds.append("numeric" if numeric else "categorical")
        bounds.append((lo, hi))
    return Coding(tuple(domain.names), tuple(kinds), tuple(bounds))


def _encode(code: Coding, frames: Sequence[pd.DataFrame]) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per frame: (L1 features, categorical codes). Categorical codes are shared by all frames. A numeric
    column is one feature x in [0, 1]; with missing values anywhere, the three features (x/2, (1-x)/2, 0) and
    (0, 0, 1/2) for a missing value, whose L1 distances are |x - y|, 1 and 0 as the module docstring says."""
    from privsample.evaluation.tables import value_key, numeric_values

    out: list[tuple[list[np.ndarray], list[np.ndarray]]] = [([], []) for _ in frames]
    for name, kind, (lo, hi) in zip(code.names, code.kinds, code.bounds):
        cols = [f[name].reset_index(drop=True) for f in frames]
        if kind == "categorical":
            keys = pd.concat([c.map(lambda v: None if pd.isna(v) else value_key(v)) for c in cols], ignore_index=True)
            idx, _ = pd.factorize(keys, use_na_sentinel=False)
            start = 0
            for i, c in enumerate(cols):
                out[i][1].append(idx[start : start + len(c)].astype(np.int64))
                start += len(c)
            continue
        parsed = [numeric_values(c) for c in cols]
        width = hi - lo
        any_missing = any(bool((m | b).any()) for _, m, b in parsed)
        for i, (x, m, b) in enumerate(parsed):
            miss = m | b
            y = np.clip((x - lo) / width, 0.0, 1.0) if width > 0 else np.zeros(len(x))
            if not any_missing:
                out[i][0].append(y)
                continue
            y = np.where(miss, 0.0, y)
            out[i][0].extend([np.where(miss, 0.0, y / 2), np.where(miss, 0.0, (1 - y) / 2), np.where(miss, 0.5, 0.0)])
    return out


def _matrix(parts: tuple[list[np.ndarray], list[np.ndarray]], n: int) -> np.ndarray:
    """One row per record: the L1 features then the categorical codes (as floats, exact below 2**53)."""
    cols = list(parts[0]) + [c.astype(np.float64) for c in parts[1]]
    return np.column_stack(cols) if cols else np.zeros((n, 0))


def dcr(
    query: np.ndarray, reference: np.ndarray, n_l1: int, n_columns: int, n_values: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Distances to closest record both ways, from one pass over the distance matrix: for each row of
    ``query`` the distance to its closest row of ``reference``, and for each row of ``reference`` to its
    closest row of ``query`` (both from ``_matrix``: ``n_l1`` L1 features, then one code per categorical
    column with ``n_values`` values), divided by ``n_columns``. Exact; identical rows are merged first; at
    most ``WORK_ELEMENTS`` distances are held at once."""
    from threadpoolctl import threadpool_limits

    if len(reference) == 0 or len(query) == 0:
        raise InputError("cannot measure distances to an empty table")
    uq, qinv = np.unique(query, axis=0, return_inverse=True)
    ur, rinv = np.unique(reference, axis=0, return_inverse=True)
    ql1, qcat = uq[:, :n_l1], uq[:, n_l1:].astype(np.int64)
    rl1, rcat = np.ascontiguousarray(ur[:, :n_l1].T), np.ascontiguousarray(ur[:, n_l1:].T.astype(np.int64))
    hot = [j for j, k in enumerate(n_values) if k <= ONE_HOT_MAX]
    direct = [j for j, k in enumerate(n_values) if k > ONE_HOT_MAX]
    offs = np.cumsum([0] + [n_values[j] for j in hot])

    def one_hot(codes: np.ndarray) -> np.ndarray:
        m = np.zeros((len(codes), int(offs[-1])), dtype=np.float32)
        for i, j in enumerate(hot):
            m[np.arange(len(codes)), offs[i] + codes[:, j]] = 1.0
        return m

    rhot = one_hot(rcat.T).T.copy() if hot else None
    qhot = one_hot(qcat) if hot else None
    with threadpool_limits(1):  # small products: one BLAS thread is faster and steadier than several
        qbest, rbest = _closest(ql1, rl1, qcat, rcat, hot, direct, qhot, rhot, len(ur))
    scale = max(n_columns, 1)
    return qbest[qinv.ravel()] / scale, rbest[rinv.ravel()] / scale


def _closest(ql1, rl1, qcat, rcat, hot, direct, qhot, rhot, ur_n: int) -> tuple[np.ndarray, np.ndarray]:
    """The row and column minima (``dcr``) over blocks of at most ``BLOCK`` reference rows by as many query rows
    as ``WORK_ELEMENTS`` allows, so that each block's operands stay in cache. Reference columns ``rl1``,
    ``rcat``, ``rhot``: one row per feature."""
    qbest, rbest = np.full(len(ql1), np.inf), np.full(ur_n, np.inf)
    rb = min(BLOCK, ur_n)
    qb = max(1, WORK_ELEMENTS // rb)
    d, tmp, prod = np.empty((qb, rb)), np.empty((qb, rb)), np.empty((qb, rb), dtype=np.float32)
    for r0 in range(0, ur_n, rb):
        r1 = min(r0 + rb, ur_n)
        rh = np.ascontiguousarray(rhot[:, r0:r1]) if hot else None
        for s in range(0, len(ql1), qb):
            e = min(s + qb, len(ql1))
            dd, tt = d[: e - s, : r1 - r0], tmp[: e - s, : r1 - r0]
            if hot:
                pp = prod[: e - s, : r1 - r0]
                np.matmul(qhot[s:e], rh, out=pp)  # matching columns: small integers, exact in float32
                np.subtract(float(len(hot)), pp, out=dd)  # mismatches = columns - matches
            else:
                dd.fill(0.0)
            for j in direct:
                dd += qcat[s:e, j, None] != rcat[None, j, r0:r1]
            for j in range(ql1.shape[1]):
                np.subtract(ql1[s:e, j, None], rl1[None, j, r0:r1], out=tt)
                np.abs(tt, out=tt)
                dd += tt
            np.minimum(qbest[s:e], dd.min(axis=1), out=qbest[s:e])
            np.minimum(rbest[r0:r1], dd.min(axis=0), out=rbest[r0:r1])
    return qbest, rbest


def delong_auc(positive: np.ndarray, negative: np.ndarray, level: float = 0.95) -> tuple[float, float, float, float]:
    """(AUC, its standard error, CI low, CI high): the probability that a positive scores above a negative
    (ties count one half), with DeLong's variance (midrank algorithm of Sun and Xu 2014) and a normal
    ``level`` interval clipped to [0, 1]."""
    from scipy.stats import norm, rankdata

    x, y = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    m, n = len(x), len(y)
    if m < 2 or n < 2:
        raise InputError("the membership attack needs at least 2 records on each side")
    tz = rankdata(np.concatenate([x, y]))
    tx, ty = rankdata(x), rankdata(y)
    auc = float((tz[:m].sum() - m * (m + 1) / 2) / (m * n))
    v10 = (tz[:m] - tx) / n  # per positive: share of negatives below it (ties one half)
    v01 = 1.0 - (tz[m:] - ty) / m  # per negative: share of positives above it
    se = float(np.sqrt(np.var(v10, ddof=1) / m + np.var(v01, ddof=1) / n))
    z = Z95 if level == 0.95 else float(norm.ppf(0.5 + level / 2))
    return auc, se, max(0.0, auc - z * se), min(1.0, auc + z * se)


@dataclass
class CheckResult:
    """The check of one released table: DCR to REAL and to HOLDOUT, shares, attack AUC and its 95% CI."""

    dcr_train: np.ndarray = field(repr=False)
    dcr_holdout: np.ndarray = field(repr=False)
    auc: float
    auc_se: float
    auc_low: float
    auc_high: float

    @property
    def closer_to_train(self) -> float:
        """Share of released records strictly closer to REAL than to HOLDOUT."""
        return float(np.mean(self.dcr_train < self.dcr_holdout - TIE))

    @property
    def tied(self) -> float:
        """Share at the same distance from both (often 0 and 0: a record present in both)."""
        return float(np.mean(np.abs(self.dcr_train - self.dcr_holdout) <= TIE))

    @property
    def share(self) -> float:
        """Closer to REAL, ties counted one half: about 0.5 without memorisation, 1 for a copy of REAL."""
        return self.closer_to_train + self.tied / 2

    def as_dict(self) -> dict[str, float]:
        q = {
            f"{w}_{k}": float(np.quantile(a, p))
            for w, a in (("dcr_train", self.dcr_train), ("dcr_holdout", self.dcr_holdout))
            for k, p in (("median", 0.5), ("p5", 0.05))
        }
        return {
            **q,
            "closer_to_train": self.share,
            "tied": self.tied,
            "auc": self.auc,
            "auc_low": self.auc_low,
            "auc_high": self.auc_high,
        }


BASELINE = "training data released (baseline)"
RELEASED = "synthetic"
NOTICE = (
    "evidence, not a guarantee: a differentially private release should sit near 0.5; NOT PRIVATE (reads the "
    "real and holdout tables exactly), do not publish"
)


@dataclass
class PrivacyCheck:
    """The empirical privacy check (module docstring): ``synthetic`` and ``baseline`` (``CheckResult``s), the
    sizes and the subsample. ``table`` gives both as a pandas DataFrame (one row each)."""

    synthetic: CheckResult
    baseline: CheckResult
    n_train: int  # records of REAL
    n_holdout: int  # records of HOLDOUT
    n_used: int  # records of each side in the check
    subsampled: str | None  # "REAL" or "HOLDOUT" when that side was subsampled to n_used
    n_synthetic: int
    seed: int = DCR_SEED

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"released": RELEASED, **self.synthetic.as_dict()}, {"released": BASELINE, **self.baseline.as_dict()}]
        )

    @property
    def sizes(self) -> str:
        """How many records each side holds (exact, NOT private) and what was subsampled."""
        s = f"{self.n_used:,} REAL and {self.n_used:,} HOLDOUT records, {self.n_synthetic:,} synthetic"
        if self.subsampled:
            big = self.n_train if self.subsampled == "REAL" else self.n_holdout
            s += f" ({self.subsampled} subsampled from {big:,} to {self.n_used:,}, seed {self.seed})"
        return s

    def text(self) -> list[str]:
        """Plain-text lines (the ``Evaluation`` repr)."""
        lines = [f"empirical privacy check ({NOTICE}); {self.sizes}:"]
        for name, r in ((RELEASED, self.synthetic), (BASELINE, self.baseline)):
            d = r.as_dict()
            lines.append(
                f"  {name}: DCR to REAL median {d['dcr_train_median']:.4f} (5% {d['dcr_train_p5']:.4f}), to HOLDOUT "
                f"median {d['dcr_holdout_median']:.4f} (5% {d['dcr_holdout_p5']:.4f}); closer to REAL "
                f"{d['closer_to_train']:.3f}; attack AUC {r.auc:.3f} (95% CI {r.auc_low:.3f}-{r.auc_high:.3f})"
            )
        return lines


def _check(to_train, from_train, to_holdout, from_holdout) -> CheckResult:
    """``to_*``: each released record's DCR to REAL and HOLDOUT; ``from_*``: each REAL and HOLDOUT record's DCR
    to the release, the attack's score (closer: more likely a member)."""
    auc, se, lo, hi = delong_auc(-from_train, -from_holdout)
    return CheckResult(to_train, to_holdout, auc, se, lo, hi)


def check_not_real(real: Any, holdout: Any, name: str) -> None:
    """``InputError`` (one line) when the holdout ``holdout`` is the real table ``real`` itself: the same file (links
    resolved, hard links too), a byte-identical copy, or an equal table once read (two DataFrames). Its
    membership-inference AUC would be 0.5 by construction. NOT private, as the whole evaluation."""
    same = ""
    if isinstance(real, (str, os.PathLike)) and isinstance(holdout, (str, os.PathLike)):
        from privsample.io import same_file
        from privsample.data.table import fingerprint

        r, h = Path(real), Path(holdout)
        if r.is_file() and h.is_file():
            if same_file(r, h):
                same = "the real table itself (the same file)"
            elif r.stat().st_size == h.stat().st_size and fingerprint(r) == fingerprint(h):
                same = "a byte-identical copy of the real table"
    elif isinstance(real, pd.DataFrame) and isinstance(holdout, pd.DataFrame) and _same_records(real, holdout):
        same = "equal to the real table"
    if same:
        raise InputError(
            f"{name}: the holdout is {same}; the privacy check needs records of the same population that the "
            "synthesizer did NOT see"
        )


def _same_records(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two tables hold the same records in the same order, whatever their dtypes (a CSV file and its
    Parquet copy): the same columns and rows, equal as text (missing values alike)."""
    if list(map(str, a.columns)) != list(map(str, b.columns)) or len(a) != len(b):
        return False

    def text(s: pd.Series) -> list[str]:
        return ["" if pd.isna(v) else str(v) for v in s.astype(object)]

    try:
        return all(text(a[c]) == text(b[c]) for c in a.columns)
    except Exception:  # noqa: BLE001 - tables that cannot be compared are not refused
        return False


def check_holdout(real: pd.DataFrame, holdout: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    """``InputError`` (one line) unless ``holdout`` looks like more records of the real table: the same
    columns (those scored, when a schema leaves some out), numbers where the real table has numbers."""
    from privsample.evaluation.tables import numeric_values

    for c in columns:
        if c not in holdout.columns:
            raise InputError(f"{name}: column '{c}' of the real table is missing (the holdout must have its columns)")
    known = set(map(str, real.columns))
    for c in map(str, holdout.columns):
        if c not in known:
            raise InputError(f"{name}: column '{c}' is not in the real table (the holdout must have its columns)")
    if len(holdout) < 2:
        raise InputError(f"{name}: the privacy check needs at least 2 holdout records")
    for c in columns:
        _, rmiss, rbad = numeric_values(real[c])
        _, hmiss, hbad = numeric_values(holdout[c])
        if not rbad.any() and (~rmiss).any() and (~hmiss).any() and hbad[~hmiss].all():
            raise InputError(f"{name}: column '{c}' holds no numbers, unlike the real table's")


def privacy_check(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    code: Coding,
    *,
    seed: int = DCR_SEED,
    holdout_name: str = "the holdout table",
) -> PrivacyCheck:
    """The check of ``synthetic`` (module docstring) on the columns of ``code`` (NOT private)."""
    for c in code.names:
        if c not in holdout.columns:
            raise InputError(f"{holdout_name}: column '{c}' of the real table is missing")
    n_train, n_holdout = len(real), len(holdout)
    m = min(n_train, n_holdout)
    rng = np.random.default_rng(seed)
    subsampled = None
    if n_train > m:
        real, subsampled = real.iloc[np.sort(rng.choice(n_train, m, replace=False))], "REAL"
    elif n_holdout > m:
        holdout, subsampled = holdout.iloc[np.sort(rng.choice(n_holdout, m, replace=False))], "HOLDOUT"
    parts = _encode(code, [real, holdout, synthetic])
    tr, ho, sy = (_matrix(p, len(f)) for p, f in zip(parts, [real, holdout, synthetic]))
    n_l1 = len(parts[0][0])
    n_values = [
        int(max(a.max(initial=-1), b.max(initial=-1), c.max(initial=-1))) + 1
        for a, b, c in zip(parts[0][1], parts[1][1], parts[2][1])
    ]
    dims = (n_l1, len(code.names), n_values)
    s_tr, tr_s = dcr(sy, tr, *dims)
    s_ho, ho_s = dcr(sy, ho, *dims)
    tr_ho, ho_tr = dcr(tr, ho, *dims)
    zero = np.zeros(len(tr))  # the baseline releases REAL: every REAL record is its own closest record
    return PrivacyCheck(
        synthetic=_check(s_tr, tr_s, s_ho, ho_s),
        baseline=_check(zero, zero, tr_ho, ho_tr),
        n_train=n_train,
        n_holdout=n_holdout,
        n_used=m,
        subsampled=subsampled,
        n_synthetic=len(synthetic),
        seed=seed,
    )
