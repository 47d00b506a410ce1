"""Range-query error as in the PPSyn evaluation (Zhang, Deng and Yin 2023, Section 5.1.2).

Queries are axis-aligned boxes over integer codes (categorical codes treated as ordered, as the
paper implies). Workload construction, all from fixed public seeds:
* attribute weights w_a = E_a^2, E_a ~ Exp(1) from ``default_rng(1)``;
* among the m-combinations with at most ``max_cells`` cells, sample ``count`` without replacement
  with probability proportional to prod_{a in c} w_a (all of them if there are no more);
* for each combination, ``per_combination`` boxes from ``default_rng(2)``: per attribute draw
  u, v ~ U{0..n_a-1} and take [min(u, v), max(u, v)].
Answer = fraction of rows in the box; error = mean over queries of (p(q) - p_hat(q))^2.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
import numpy as np

from privsample.marginals.base import MarginalEngine


@dataclass(frozen=True)
class RangeQuery:
    clique: tuple[str, ...]
    lo: tuple[int, ...]
    hi: tuple[int, ...]  # inclusive


def range_workload(
    domain, m: int, count: int, *, max_cells: int = 10_000, per_combination: int = 10
) -> list[RangeQuery]:
    attrs = list(domain.attributes)
    e = np.random.default_rng(1).exponential(1.0, size=len(attrs))
    weight = dict(zip(attrs, e**2))
    combos = [c for c in itertools.combinations(attrs, m) if domain.size(c) <= max_cells]
    if len(combos) > count:
        p = np.array([np.prod([weight[a] for a in c]) for c in combos])
        idx = np.random.default_rng(1).choice(len(combos), size=count, replace=False, p=p / p.sum())
        combos = [combos[i] for i in sorted(idx)]
    rng = np.random.default_rng(2)
    out = []
    for c in combos:
        sizes = [domain.size((a,)) for a in c]
        for _ in range(per_combination):
            u = [int(rng.integers(0, n)) for n in sizes]
            v = [int(rng.integers(0, n)) for n in sizes]
            out.append(RangeQuery(tuple(c), tuple(map(min, u, v)), tuple(map(max, u, v))))
    return out


def answer(engine: MarginalEngine, queries: list[RangeQuery]) -> np.ndarray:
    """Fraction of records in each box, from the engine's marginals (one marginal per clique)."""
    cliques = sorted({q.clique for q in queries})
    margs = engine.marginals(cliques)
    out = np.empty(len(queries))
    for i, q in enumerate(queries):
        x = margs[q.clique]
        box = tuple(slice(a, b + 1) for a, b in zip(q.lo, q.hi))
        out[i] = x[box].sum() / max(x.sum(), 1)
    return out


def range_query_mse(real: MarginalEngine, synth: MarginalEngine, queries: list[RangeQuery]) -> float:
    return float(np.mean((answer(real, queries) - answer(synth, queries)) ** 2))
