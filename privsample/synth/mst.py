"""MST (McKenna, Miklau & Sheldon 2021): measure all 1-way marginals, select a maximum spanning
tree of 2-way marginals with the exponential mechanism, measure the tree, fit Private-PGM.

The design follows the reference implementation (Private-PGM's ``mechanisms/mst.py``).

Privacy (rho-zCDP, add/remove one record). The budget rho (everything the accountant has left)
is split in thirds over the d columns worth measuring (``selection.informative_attributes``: a one-cell column's
marginals are the record count and the other columns', so it is in no measurement and no tree edge; the model
holds it at its one value):
1. d one-way marginals, each with discrete Gaussian noise sigma*sqrt(d), sigma = sqrt(3/(2 rho)):
   each has L2 sensitivity 1, so each costs rho/(3d).
2. d-1 exponential-mechanism draws (Kruskal), each with epsilon = sqrt(8 (rho/3)/(d-1)); the
   quality of pair (a, b) is ||x_ab - mu_ab||_1 where mu is the independent model fitted to the
   *noisy* one-way measurements (public given step 1), so changing one record moves each quality
   by at most 1 (sensitivity 1); each draw costs (rho/3)/(d-1).
3. d-1 two-way marginals of the compressed domain (each record in one cell: sensitivity 1) with
   noise sigma*sqrt(d-1): (rho/3)/(d-1) each; the last one spends exactly what remains.
With d = 1 there is no tree and the one-way marginal gets all of rho; with d = 0, the number of records does
(one measurement, sensitivity 1: ``base.count_measurement``).
Domain compression (values whose noisy count is below 3 sd are merged) and the total estimate
N-hat are computed from step 1's noisy output only, combined (inverse variance, ``combined_one_way``) with
the counts private discovery released where the domain was discovered (``discovery_measurements``; at 1,000
records their noise is a third of step 1's). Estimation and sampling are post-processing. A merged code is
decompressed onto its original values in proportion to those estimates (clipped at 0; uniformly where all
are 0), where the reference draws uniformly: a missing-value code or a catch-all merged with real rare values
then gets the share its counts show, not an equal one.

Structural zeros (the schema's public ``forbid`` and ``require``, :mod:`privsample.synth.zeros`) cost nothing: their
columns join the model's cliques, their cells are fixed at zero in the fit, columns they name are not
compressed (a merged code would be decompressed onto forbidden values), and step 2 offers only pairs
that keep the junction tree of the tree and the zeros' cliques within ``max_memory_mb`` (a public filter:
the domain, the zeros and the edges already drawn). Without zeros every pair is offered, as in the reference.

Public data (``public``), after JAM (Fuentes, Mullins, McKenna, Miklau & Sheldon 2024, "Joint Selection:
Adaptively Incorporating Public Information for Private Synthetic Data"): each draw of step 2 offers every pair
joining two components twice, scored as the error each would remove, with sigma2 = sqrt(3 (d-1)/(2 rho)) the
noise of a step-3 measurement if every edge were private (public): private q = ||x_ab - mu_ab||_1 -
sqrt(2/pi) sigma2 cells_ab, public q = ||x_ab - mu_ab||_1 - ||x_ab - N p_ab||_1 (p_ab: the public pair's shares
on the compressed domain, N the noisy total). The private score moves by <= 1 per record, the public one by <= 2
(two L1 terms), so these draws run with sensitivity 2 (same epsilon: a flatter choice). A public pick adds
N p_ab as a measurement with stddev sigma2 and spends nothing; step 3 measures the private picks only, splitting
the 2-way third over them (their number is an output of step 2: post-processing). The last draw offers private
options only if no private edge was picked yet, so step 3 spends the rest and the total is rho, as without. Both
scores are errors removed, so they compare (JAM's rule); keeping MST's private score and adding the noise term to
the public one instead took public pairs far more often and was worse on Adult. Without ``public``: unchanged.

Estimation: 1000 mirror-descent iterations (the reference runs 10,000) by :mod:`privsample.synth.tree_md`,
the NumPy descent specialised to MST's tree of pairs. This changes only the post-processing of the same
noisy measurements: what is measured, the noise and the ledger are those of the reference design. Stopping
earlier did not raise the workload error in our runs (``benchmarks/results/mst_adult.md``).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import exponential_select, gaussian_measure, sigma_for_rho
from privsample.privacy.noise import NoiseSource
from privsample.synth import pgm
from privsample.progress import Progress, no_progress
from privsample.synth.base import (
    DEFAULT_MAX_MEMORY_MB,
    Synthesizer,
    count_measurement,
    discovery_measurements,
    estimate_phase,
    refuse_if_too_big,
)
from privsample.synth.model import SynthModel
from privsample.synth.selection import MAX_ATTRIBUTES, informative_attributes
from privsample.synth.public import PublicData
from privsample.synth.zeros import StructuralZeros

# mbi's estimation keeps several copies of every potential/marginal (state, gradient, line search).
_ESTIMATION_COPIES = 24


def combined_one_way(y: np.ndarray, sigma: float, discovered=None) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, its sd) of each cell of a 1-way marginal: the noisy count ``y`` (sd ``sigma``), combined by inverse
    variance with discovery's released count of the cell where ``discovered`` (a weighted 1-way measurement,
    ``discovery_measurements``) measures it. Post-processing of two independent noisy measurements."""
    y = np.asarray(y, dtype=float)
    sd = np.full(y.shape, float(sigma))
    if discovered is None:
        return y, sd
    w = np.asarray(discovered.query.weights, dtype=float)
    on = w > 0
    yd = np.asarray(discovered.noisy_measurement, dtype=float)[on] / w[on]
    sdd = float(discovered.stddev) / w[on]
    prec = 1.0 / sd[on] ** 2 + 1.0 / sdd**2
    y = y.copy()
    y[on] = (y[on] / sd[on] ** 2 + yd / sdd**2) / prec
    sd[on] = 1.0 / np.sqrt(prec)
    return y, sd


def compress_counts(counts: np.ndarray, clique: tuple[str, ...], mapping: dict[str, np.ndarray]) -> np.ndarray:
    """Sum the cells of a marginal that a per-attribute ``mapping`` merges (post-processing)."""
    out = np.asarray(counts)
    for axis, a in enumerate(clique):
        if a in mapping:
            m = mapping[a]
            moved = np.moveaxis(out, axis, 0)
            summed = np.zeros((int(m.max()) + 1,) + moved.shape[1:], dtype=moved.dtype)
            np.add.at(summed, m, moved)
            out = np.moveaxis(summed, 0, axis)
    return out


def compress_partial(M, mapping: dict[str, np.ndarray]):
    """A 1-way measurement with 0/1 weights (measured cells) on the compressed domain.

    A compressed cell whose original cells were all measured gets their sum, with the weights that
    ``LinearMeasurement.compress`` uses (1/sqrt(k) for k merged cells, so the loss is (mu - sum)^2 /
    (k sigma^2)); a compressed cell holding an unmeasured cell is left unmeasured (weight 0)."""
    (a,) = M.clique
    if a not in mapping:
        return M
    m = np.asarray(mapping[a])
    k = int(m.max()) + 1
    y = np.asarray(M.noisy_measurement, float).ravel()
    w = np.asarray(M.query.weights, float).ravel()
    cells = np.bincount(m, minlength=k).astype(float)
    full = np.bincount(m, weights=(w > 0).astype(float), minlength=k) == cells
    inv = np.where(full, 1.0 / np.sqrt(cells), 0.0)
    yc = np.bincount(m, weights=np.where(w > 0, y, 0.0), minlength=k) * inv
    return pgm.LinearMeasurement(yc, (a,), stddev=M.stddev, query=pgm.mbi.WeightedQuery(inv))


def weighted_simplex_projection(t: np.ndarray, w: np.ndarray, total: float) -> np.ndarray:
    """argmin_mu sum_i w_i (mu_i - t_i)^2 s.t. mu >= 0, sum mu = total (bisection on the multiplier)."""
    t = np.asarray(t, float)
    w = np.asarray(w, float)
    # mass(lam) = sum max(t - lam / w, 0) is non-increasing in lam; find lam with mass = total.
    # lo: some cell alone already holds >= total (t_i - lo / w_i >= total); hi: every cell is empty.
    lo = float(np.min(w * (t - total))) - 1.0
    hi = max(float(np.max(w * t)), 0.0) + 1.0

    def mass(lam: float) -> float:
        return float(np.maximum(t - lam / w, 0.0).sum())

    for _ in range(200):
        mid = (lo + hi) / 2
        if mass(mid) > total:
            lo = mid
        else:
            hi = mid
    mu = np.maximum(t - hi / w, 0.0)
    s = mu.sum()
    return mu * (total / s) if s > 0 else np.full_like(t, total / t.size)


def edge_scores(model_err, cells, sigma2: float, answers, shares, total: float) -> tuple[np.ndarray, np.ndarray]:
    """(private, public) scores of the pairs offered in a draw with public data: the error each option removes.

    private: ||x - mu||_1 - sqrt(2/pi) sigma2 cells (``model_err`` - the expected L1 noise of a measurement at
    sigma2, a public number), sensitivity 1; public: ||x - mu||_1 - ||x - total * share||_1, sensitivity 2 (one
    record moves x in one cell by 1, so each L1 term by <= 1). ``answers``/``shares``: one array per pair."""
    err = np.asarray(model_err, float)
    private = err - math.sqrt(2 / math.pi) * sigma2 * np.asarray(cells, float)
    public = err - np.array([np.abs(np.ravel(x) - total * np.ravel(p)).sum() for x, p in zip(answers, shares)])
    return private, public


PUBLIC_SENSITIVITY = 2.0  # the selection's sensitivity whenever public options are offered (``edge_scores``)


def budget_split(rho: float, d: int, max_rows: int = 1) -> dict[str, float]:
    """MST's split of ``rho`` over ``d`` measured columns (module docstring, steps 1-3), public: each 1-way
    measurement, each tree draw and each 2-way measurement (the last 2-way one spends what remains), and their noise
    scales (under the privacy unit's k = ``max_rows``: k times the record-level ones). With one column there is no
    tree, and its 1-way measurement (with none, the number of records) spends all of ``rho``."""
    rho_1way = rho / 3.0 / d if d > 1 else rho
    rho_pair = (rho / 3.0) / max(d - 1, 1)
    return {
        "rho_1way": rho_1way,
        "rho_select": rho_pair,
        "rho_2way": rho_pair,
        "sigma_1way": sigma_for_rho(rho_1way, max_rows * 1.0),
        "sigma_2way": max_rows * math.sqrt(1.0 / (2.0 * (rho / 3.0) / max(d - 1, 1))),
    }


def find_root(parent: dict, a):
    """The root of ``a`` in the union-find forest ``parent`` (path halving)."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@dataclass
class Compressed:
    """The compressed domain (public: a function of step 1's noisy output and the schema): each merged column's
    code map, each column's one-way estimate (decompression weights), the compressed domain and its structural
    zeros, the one-way measurements on it, and discovery's released counts on it (no new spend)."""

    mapping: dict
    estimate: dict
    cdomain: Any
    zeros: Any
    log1c: list
    prior: list


def compress_domain(domain, schema, zeros, one_way, log1) -> Compressed:
    """MST's compress_domain: a value whose noisy count (combined with discovery's released counts) is below 3 sd
    is merged with the other rare values of its column. Noise-born codes (discovery's counts did not show them:
    ``StructuralZeros.noise_born``) get a compressed code of their own, fixed at probability 0, so that
    decompression never draws them; columns named by the schema's zeros (forbid, require) are not compressed (their
    noise-born codes are zeros on their own codes: no empty value where discovery saw none), and neither are the
    columns step 1 did not measure (one cell records can take: its other, noise-born codes are zeros). Public:
    post-processing of step 1 and of released counts."""
    attrs = list(domain.attributes)
    sizes = dict(zip(attrs, domain.shape))
    fixed = {a for cl in zeros.cliques for a in cl} if zeros is not None else set()
    noise_born = StructuralZeros.noise_born(schema, domain)  # public: discovery's released counts
    born = {cols[0]: set(codes[0]) for cols, codes in (noise_born.entries if noise_born is not None else ())}
    discovered = discovery_measurements(schema, domain)  # discovery's released counts (no new spend)
    by_attr = {M.clique[0]: M for M in discovered}
    mapping: dict[str, np.ndarray] = {}
    czero: list[tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]] = []
    estimate: dict[str, np.ndarray] = {}  # each column's 1-way estimate: decompression weights
    for a in attrs:
        if a not in one_way:  # not measured (one cell records can take): its noise-born codes stay zeros
            gone = tuple(int(i) for i in sorted(born.get(a, ())))
            if gone:
                czero.append(((a,), (gone,)))
            continue
        y, s = combined_one_way(*one_way[a], by_attr.get(a))
        estimate[a] = y
        dead = np.zeros(y.size, dtype=bool)
        dead[sorted(born.get(a, ()))] = True
        sup = (y >= 3 * s) & ~dead
        if a in fixed:  # not compressed: its noise-born codes are zeros on its own codes
            if dead.any():
                czero.append(((a,), (tuple(int(i) for i in np.flatnonzero(dead)),)))
            continue
        if (sup | dead).all() and not dead.any():
            continue
        k = int(sup.sum())
        rare = ~sup & ~dead
        m = np.full(y.size, k, dtype=np.int64)
        m[sup] = np.arange(k)
        if dead.any():
            m[dead] = k + int(rare.any())
            czero.append(((a,), ((k + int(rare.any()),),)))
        mapping[a] = m
    cdomain = pgm.Domain(attrs, [int(mapping[a].max()) + 1 if a in mapping else sizes[a] for a in attrs])
    forbid = StructuralZeros.from_schema(schema, cdomain)
    entries = (forbid.entries if forbid is not None else ()) + tuple(czero)
    czeros = StructuralZeros(cdomain, entries) if entries else None
    log1c = [M.compress(mapping, domain) for M in log1]
    prior = [compress_partial(M, mapping) for M in discovered]
    return Compressed(mapping, estimate, cdomain, czeros, log1c, prior)


def mst_info(comp: Compressed, tree, public_tree, total, one_way, public) -> dict[str, Any]:
    """MST's public diagnostics, saved with the model: the tree, the compressed sizes, the noisy total."""
    info: dict[str, Any] = {
        "tree": [list(e) for e in tree],
        "compressed": {a: int(m.max()) + 1 for a, m in comp.mapping.items()},
        "estimated_total": total,
        "total_sd": pgm.identity_total_sd(list(one_way.values())),
    }
    if public is not None:
        info["public"] = public.describe()
        info["public_edges"] = [list(e) for e in public_tree]
    return info


@dataclass
class TreeInputs:
    """What steps 2 and 3 read: the accountant, the noise, progress, the compressed domain, the schema's
    structural zeros, the data's 2-way marginals (read only by the two steps' mechanisms), the pairs' quality
    against the independent model, the public shares, step 3's noise scale if every edge were private, the
    noisy total and the tree's vertices (the measured columns)."""

    accountant: Accountant
    noise: NoiseSource
    progress: Progress
    comp: Compressed
    zeros: Any
    two: dict
    weights: dict
    pub_shares: dict
    sigma2: float
    total: float
    attrs: list


class MST(Synthesizer):
    """MST with the reference design; ``iters`` controls the final Private-PGM fit (the reference: 10,000)."""

    name = "mst"
    # the junction trees of a schema's structural zeros are sized by ``graph_cells`` (at most MAX_ATTRIBUTES); well
    # below that width the time is the tree selection's (every pair of columns scored in each of d - 1 steps, all
    # d(d-1)/2 two-way marginals held): 300 columns of 3 categories take about 45 s on 50 rows, 1,000 over 6 minutes
    max_columns = MAX_ATTRIBUTES

    def __init__(
        self,
        *,
        iters: int = 1000,
        tol: float | None = None,
        max_memory_mb: float = DEFAULT_MAX_MEMORY_MB,
        select_fit: str = "closed-form",
    ):
        """``select_fit``: "closed-form" (exact independent fit) or "mirror-descent" (reference: 2500 iterations)."""
        self.iters = int(iters)
        self.tol = tol
        self.max_memory_mb = float(max_memory_mb)
        if select_fit not in ("closed-form", "mirror-descent"):
            raise ValueError("select_fit must be 'closed-form' or 'mirror-descent'")
        self.select_fit = select_fit

    def check_size(self, domain, schema=None) -> float:
        """Upper bound on fitting memory: the largest possible spanning tree of pair tables, plus the junction
        tree of the cliques of ``schema``'s structural zeros (step 2 keeps the whole tree within the limit)."""
        from privsample.synth.selection import junction_tree_cells

        attrs = list(domain.attributes)
        sizes = dict(zip(attrs, domain.shape))
        edges = sorted(((sizes[a] * sizes[b], a, b) for a, b in itertools.combinations(attrs, 2)), reverse=True)
        parent = {a: a for a in attrs}
        cells = float(sum(sizes.values()))
        for w, a, b in edges:
            ra, rb = find_root(parent, a), find_root(parent, b)
            if ra != rb:
                parent[ra] = rb
                cells += w
        biggest_pair = max((e[0] for e in edges), default=0)
        zeros = StructuralZeros.from_schema(schema, domain)
        if zeros is not None:
            cells += junction_tree_cells(domain, zeros.cliques)
        mb = (cells * 8 * _ESTIMATION_COPIES + biggest_pair * 8 * 4) / 2**20
        refuse_if_too_big(mb, self.max_memory_mb, "MST on this domain")
        return mb

    def _fitting_pairs(self, cdomain, tree, zeros, cands):
        """The pairs whose addition keeps the junction tree of ``tree``, the zeros' cliques and the pair within
        ``max_memory_mb`` (public: the domain, the zeros and the edges drawn so far)."""
        from privsample.synth.selection import clique_graph, graph_cells

        size = tuple(int(n) for n in cdomain.shape)
        graph = clique_graph(cdomain, list(tree) + zeros.cliques)
        limit = self.max_memory_mb * 2**20 / (8 * _ESTIMATION_COPIES)
        return [p for p in cands if graph_cells(size, *clique_graph(cdomain, [p], start=graph)) <= limit]

    def fit(
        self,
        engine: MarginalEngine,
        accountant: Accountant,
        noise: NoiseSource,
        progress: Progress = no_progress,
        *,
        schema=None,
        public: PublicData | None = None,
    ) -> SynthModel:
        """``public``: a public table on the same domain (``privsample.synth.public``), measured at no cost."""
        domain = engine.domain
        attrs = list(domain.attributes)
        # the tree's vertices: no column with one cell records can take (noise-born codes aside) is measured
        measured = informative_attributes(domain, StructuralZeros.for_fit(schema, domain))
        self.check_size(domain, schema)
        if public is not None:
            public.check_domain(domain)
        zeros = StructuralZeros.from_schema(schema, domain)  # public: the schema's forbid and require lists
        rho = accountant.remaining
        if rho <= 0:
            from privsample.privacy.accountant import BudgetExceeded

            raise BudgetExceeded("no privacy budget left for MST")
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        split = budget_split(rho, len(measured), accountant.unit.max_rows)
        one_way, log1 = self._measure_one_way(engine, accountant, noise, progress, split["rho_1way"], measured)  # 1.
        total = pgm.identity_total(list(one_way.values()))
        comp = compress_domain(domain, schema, zeros, one_way, log1)
        timings["measure_1way"] = time.perf_counter() - t0

        # 2. select a spanning tree (rho/3).
        t1 = time.perf_counter()
        indep = self._independent(comp, list(one_way), total)
        edges, pairs = self._tree_inputs(engine, accountant, noise, progress, comp, zeros, indep, split, total, public)
        tree, public_tree = self._select_tree(edges, pairs, split["rho_select"], public is not None)
        timings["select"] = time.perf_counter() - t1

        # 3. measure the tree edges on the compressed domain (rest of the budget).
        t2 = time.perf_counter()
        log2, log_pub = self._measure_tree(edges, tree, public_tree)
        timings["measure_2way"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        model = estimate_phase(
            progress,
            accountant,
            "estimate",
            self.iters,
            comp.cdomain,
            comp.log1c + log2 + log_pub + comp.prior,
            known_total=total,
            tol=self.tol if comp.zeros is None else None,
            backend="tree",
            zeros=comp.zeros,
        )
        timings["estimate"] = time.perf_counter() - t3
        return SynthModel(
            mechanism="mst",
            domain={a: int(n) for a, n in zip(attrs, domain.shape)},
            model=model,
            ledger=accountant.to_dict(),
            schema=schema,
            compression=comp.mapping,
            # within a merged code, the original codes in proportion to their 1-way estimates (clipped at 0)
            decompression={a: np.maximum(comp.estimate[a], 0.0) for a in comp.mapping},
            params={
                "iters": self.iters,
                "tol": self.tol,
                "select_fit": self.select_fit,
                "sigma_1way": next(iter(one_way.values()))[1],
            },
            info=mst_info(comp, tree, public_tree, total, one_way, public),
            timings=timings,
        )  # timings: in memory only, never saved

    @staticmethod
    def _measure_one_way(engine, accountant, noise, progress, rho1: float, attrs: list):
        """Step 1: the one-way marginal of every column of ``attrs`` (those worth measuring) with the Gaussian
        mechanism at ``rho1`` each (L2 sensitivity 1); with none, the number of records at ``rho1`` (everything:
        ``count_measurement``), kept as the first column's. Returns {column: (noisy counts, sd)} and the
        measurements."""
        d = len(attrs)
        progress("measure 1-way", step=0, steps=max(d, 1), accountant=accountant)
        one_way: dict[str, tuple[np.ndarray, float]] = {}
        if not attrs:
            M, answer = count_measurement(
                engine.domain,
                engine.marginals,
                lambda x, r, label, **kw: gaussian_measure(accountant, noise, x, r, label, **kw),
                rho1,
                "mst/count",
            )
            one_way[M.clique[0]] = answer
            progress("measure 1-way", step=1, steps=1, accountant=accountant, message="number of records")
            return one_way, [M]
        ones = engine.marginals([(a,) for a in attrs])
        log1: list[pgm.LinearMeasurement] = []
        for i, a in enumerate(attrs):
            y, s = gaussian_measure(accountant, noise, ones[(a,)], rho1, f"mst/1-way/{a}", measured=a)
            one_way[a] = (y.astype(float), s)
            log1.append(pgm.LinearMeasurement(y.astype(float), (a,), stddev=s))
            progress("measure 1-way", step=i + 1, steps=d, accountant=accountant, message=a)
        return one_way, log1

    def _independent(self, comp: Compressed, attrs, total) -> dict[str, np.ndarray]:
        """The independent model's shares of each column, fitted to the compressed one-way measurements: a weighted
        Euclidean projection onto the scaled simplex, in closed form (what mirror descent on these measurements
        converges to), or mirror descent itself (``select_fit``). Post-processing of step 1."""
        indep: dict[str, np.ndarray] = {}
        if self.select_fit == "mirror-descent":
            m0 = pgm.estimate(comp.cdomain, comp.log1c, known_total=total, iters=2500)
            for a in attrs:
                indep[a] = np.asarray(m0.project((a,)).datavector()) / total
        else:
            for a, M in zip(attrs, comp.log1c):
                wq = np.asarray(getattr(M.query, "weights", np.ones(np.size(M.noisy_measurement))), float)
                y = np.asarray(M.noisy_measurement, float)
                # loss sum (wq*mu - y)^2 = sum wq^2 (mu - y/wq)^2
                indep[a] = weighted_simplex_projection(y / wq, wq**2, total) / total
        return indep

    @staticmethod
    def _tree_inputs(engine, accountant, noise, progress, comp: Compressed, zeros, indep, split, total, public):
        """Read the 2-way marginals, score every pair against the independent model (``indep``) and, with a public
        table, its pairs' shares on the compressed domain. Returns the inputs of steps 2 and 3 and the pairs."""
        attrs = list(indep)  # the measured columns
        d = len(attrs)
        progress("select tree", step=0, steps=max(d - 1, 0), accountant=accountant, message="2-way marginals")
        pairs = list(itertools.combinations(attrs, 2))
        two = engine.marginals(pairs)
        weights = {}
        for a, b in pairs:
            x = compress_counts(two[(a, b)], (a, b), comp.mapping).astype(float)
            mu = np.multiply.outer(indep[a], indep[b]) * total
            weights[(a, b)] = float(np.abs(x - mu).sum())
        # public data: the pairs' public shares on the compressed domain, and the noise scale a step-3 measurement
        # would have if every edge were private (public: rho and d)
        pub_shares: dict[tuple[str, str], np.ndarray] = {}
        sigma2 = split["sigma_2way"]
        if public is not None:
            accountant.note_public(public.name, public.rows, public.fingerprint)
            pub = public.engine.marginals(pairs)
            pub_shares = {
                p: compress_counts(pub[p], p, comp.mapping).astype(float).ravel() / public.rows for p in pairs
            }
        edges = TreeInputs(accountant, noise, progress, comp, zeros, two, weights, pub_shares, sigma2, total, attrs)
        return edges, pairs

    def _select_tree(self, fi: TreeInputs, pairs, rho_sel: float, has_public: bool):
        """Step 2: Kruskal's spanning tree, each edge drawn by the exponential mechanism at ``rho_sel`` (module
        docstring: sensitivity 1, or 2 with public options). Returns the edges and those picked publicly."""
        d = len(fi.attrs)
        parent = {a: a for a in fi.attrs}
        tree: list[tuple[str, str]] = []
        public_tree: list[tuple[str, str]] = []  # the edges picked from the public table (no measurement)
        for r in range(d - 1):
            cands = [p for p in pairs if find_root(parent, p[0]) != find_root(parent, p[1])]
            if fi.zeros is not None:
                cands = self._fitting_pairs(fi.comp.cdomain, tree, fi.zeros, cands)
                if not cands:
                    break
            # the last draw offers public options only if an edge is private already: step 3 spends the rest
            offer = has_public and (r < d - 2 or len(public_tree) < len(tree))
            if offer:
                x = [compress_counts(fi.two[p], p, fi.comp.mapping) for p in cands]
                priv_q, pub_q = edge_scores(
                    [fi.weights[p] for p in cands],
                    [fi.comp.cdomain.size(p) for p in cands],
                    fi.sigma2,
                    x,
                    [fi.pub_shares[p] for p in cands],
                    fi.total,
                )
                scores = np.concatenate([priv_q, pub_q])
            else:
                scores = np.array([fi.weights[p] for p in cands])
            idx = exponential_select(
                fi.accountant,
                fi.noise,
                scores,
                rho_sel,
                f"mst/select/{r + 1}",
                measured="spanning-tree edge (private or public)" if offer else "spanning-tree edge",
                sensitivity=PUBLIC_SENSITIVITY if offer else 1.0,
            )
            from_public = idx >= len(cands)
            a, b = cands[idx - len(cands) if from_public else idx]
            parent[find_root(parent, a)] = find_root(parent, b)
            tree.append((a, b))
            if from_public:
                public_tree.append((a, b))
            what = f"{a} – {b}{' (public)' if from_public else ''}"
            fi.progress("select tree", step=r + 1, steps=d - 1, accountant=fi.accountant, message=what)
        return tree, public_tree

    @staticmethod
    def _measure_tree(fi: TreeInputs, tree, public_tree):
        """Step 3: the private edges' marginals on the compressed domain (L2 sensitivity 1), splitting what is left
        of the budget, the last one spending exactly the rest; a public pick is the public pair rescaled to the noisy
        total, weighted as a private one (sd ``sigma2``). Returns (private measurements, public ones)."""
        accountant, mapping = fi.accountant, fi.comp.mapping
        log2 = []
        log_pub = [pgm.LinearMeasurement(fi.total * fi.pub_shares[p], p, stddev=fi.sigma2) for p in public_tree]
        measure = [p for p in tree if p not in public_tree]  # the private picks share the 2-way third
        if measure:
            fi.progress("measure 2-way", step=0, steps=len(measure), accountant=accountant)
        for r, (a, b) in enumerate(measure):
            left = len(measure) - r
            rho2 = accountant.remaining if left == 1 else accountant.remaining / left
            x = compress_counts(fi.two[(a, b)], (a, b), mapping)
            y, s = gaussian_measure(
                accountant,
                fi.noise,
                x,
                rho2,
                f"mst/2-way/{a},{b}",
                measured=f"{a},{b}",
                compressed=bool(a in mapping or b in mapping),
            )
            log2.append(pgm.LinearMeasurement(y.astype(float).ravel(), (a, b), stddev=s))
            fi.progress("measure 2-way", step=r + 1, steps=len(measure), accountant=accountant, message=f"{a},{b}")
        return log2, log_pub
