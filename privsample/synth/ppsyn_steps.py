"""The steps of a PPSyn round outside the synthesizer: :class:`privsample.synth.ppsyn.PPSyn` runs them, and
its module docstring has the proof they serve (rho-zCDP under add/remove one record).

* Public planning: :func:`one_way_budgets`, :func:`round_budgets`, :func:`public_plan`, :func:`public_options`
  (:func:`clique_options`) and :func:`budget_rule` take model marginals and budgets, never the data;
  :func:`public_path_options` takes a declared public table's marginals. Their outputs are functions of the
  public state (all earlier outputs, the public table), so they cost no privacy.
* The selection qualities: :func:`selection_gain`, :class:`GroupErrors` and :func:`misfit` read the data's
  marginal x; they are the scores of the exponential mechanism, and their docstrings give the sensitivities
  (QUALITY_SENSITIVITY, per unit of workload weight: 1 for "group", SELECT_SENSITIVITY = 3 for "gain").
* The fit's state the rounds share (:class:`FitState`) and the annealed schedule's public caches
  (:class:`AnnealedCaches`).
* The budgeted steps: :class:`Spender` sends every Gaussian measurement and exponential selection through the
  accountant (every entry labelled NOT PRIVATE in paper mode), and :func:`release_contribution` releases the
  contribution C̃ at exactly rho_c-zCDP (proof in its docstring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from privsample.privacy.accountant import Accountant
from privsample.privacy.mechanisms import epsilon_for_rho, exponential_select, gaussian_measure, sigma_for_rho
from privsample.privacy.noise import SEEDED_LABEL, NoiseSource
from privsample.samplers.exact_draw import uniform_below
from privsample.synth.partition import PartitionPath, paper_stop, partition_path, partition_sums, plan_reference
from privsample.synth.selection import size_filter

Clique = tuple[str, ...]


PAPER_NOTE = "NOT PRIVATE: PPSyn as published"
CONTRIBUTION_GRANULARITY = 1e-3  # g in the C̃ release (release_contribution)
SELECT_SENSITIVITY = 3.0  # annealed schedule, quality "gain": |Δ(C_w − misfit_w(P))| ≤ 1 + 2 per unit of weight
QUALITY_SENSITIVITY = {"group": 1.0, "gain": SELECT_SENSITIVITY}  # per unit of workload weight
OPTION_REFRESH = 0.2  # public_options: recompute a clique's paths once its model marginal moved this much (L1 share)
ONE_WAY_SHARE = 0.1  # PrivSyn's split: the initialisation's share of rho
WIDE_ONE_WAY_SHARE = 0.2  # the annealed schedule's share from 2 * WIDE_COLUMNS columns on
WIDE_COLUMNS = 25  # the annealed schedule: T = 16 min(d, WIDE_COLUMNS), see one_way_share


# -- public planning (no data) ---------------------------------------------------------------------


def random_order(n: int, noise: NoiseSource) -> Iterator[int]:
    """0, ..., n − 1 in a uniformly random order, drawn lazily (the caller may stop early) with
    :func:`privsample.samplers.exact_draw.uniform_below`: the OS CSPRNG, or the seeded generator of a NOT
    PRIVATE run. Independent of the data. Each new index is uniform over those not yet given (draws that
    repeat one are redrawn); once half are given, the rest follow in a Fisher–Yates shuffle."""
    seen: set[int] = set()
    while 2 * len(seen) < n:
        i = uniform_below(n, noise)
        if i not in seen:
            seen.add(i)
            yield i
    rest = [i for i in range(n) if i not in seen]
    for j in range(len(rest) - 1, 0, -1):
        k = uniform_below(j + 1, noise)
        rest[j], rest[k] = rest[k], rest[j]
    yield from rest


def candidate_subset(
    domain,
    model_cliques: Sequence[Clique],
    candidates: Sequence[Clique],
    limit_mb: float,
    cap: int | None,
    noise,
    keep: Sequence[Clique] = (),
) -> list[Clique]:
    """The candidates a round of the annealed schedule scores: those that keep the model within
    ``limit_mb`` (:func:`privsample.synth.selection.size_filter`; the one-way ones if none does), and, when
    there are more than ``cap`` candidates, at most ``cap`` of them, uniform among those that fit: the
    first ``cap`` that fit in a :func:`random_order` of all candidates (a uniform random subset of the
    fitting ones, drawn without testing them all). A function of the public state and of randomness
    independent of the data, never of the data. Returned in the order of ``candidates``. ``keep``: cliques
    (drawn earlier, independently of the data) taken first when they fit, the rest drawn as above."""
    if cap is None or len(candidates) <= cap:
        out = size_filter(domain, model_cliques, candidates, limit_mb)
    else:
        rank = dict.fromkeys(size_filter(domain, model_cliques, keep, limit_mb, limit=cap))
        order = (candidates[i] for i in random_order(len(candidates), noise))
        order = (cl for cl in order if cl not in rank)
        rank.update(dict.fromkeys(size_filter(domain, model_cliques, order, limit_mb, limit=cap - len(rank))))
        position = {cl: i for i, cl in enumerate(candidates) if cl in rank}
        out = sorted(rank, key=position.__getitem__)
    return out or [cl for cl in candidates if len(cl) == 1] or list(candidates)


def one_way_share(d: int, annealed: bool = True) -> float:
    """The initialisation's share of rho, a function of the number of columns d only (public): PrivSyn's 0.1,
    and for the annealed schedule on more than WIDE_COLUMNS columns 0.1 d / WIDE_COLUMNS, at most 0.2
    (benchmarks/results/ppsyn_wide.md)."""
    if not annealed:
        return ONE_WAY_SHARE
    return min(WIDE_ONE_WAY_SHARE, ONE_WAY_SHARE * max(1.0, d / WIDE_COLUMNS))


def one_way_budgets(cells: Sequence[int], rho_init: float) -> np.ndarray:
    """PrivSyn's split of rho_init over one-way marginals: rho_i ∝ c_i^(2/3) (the paper's Alg. 1)."""
    w = np.asarray(cells, dtype=float) ** (2.0 / 3.0)
    return rho_init * w / w.sum()


@dataclass(frozen=True)
class RoundBudgets:
    """One round's budgets (note schedule, step 1): selection, contribution, planning reference."""

    final: bool
    rho_sel: float
    rho_c: float
    rho_plan: float


def round_budgets(remaining: float, rho_sel: float, rho_c: float, rho_ref: float, last: bool = False) -> RoundBudgets:
    """Regular budgets, or the final round's 0.1R / 0.05R / 0.85R when R < 2(rho_sel + rho_c + rho_ref)."""
    if last or remaining < 2 * (rho_sel + rho_c + rho_ref):
        return RoundBudgets(True, 0.1 * remaining, 0.05 * remaining, 0.85 * remaining)
    return RoundBudgets(False, rho_sel, rho_c, rho_ref)


@dataclass
class Plan:
    """A candidate's public plan: its partition path on the model marginal, k_ref and E_w."""

    path: PartitionPath
    k_ref: int
    expected_error: float


def public_plan(model_marginals: Mapping[Clique, np.ndarray], rho_plan: float, max_parts: int) -> dict[Clique, Plan]:
    """Step 3 of the note schedule (module docstring), from model marginals only (shaped by the clique's
    domain): each candidate's partition path, k_ref and E_w (:func:`privsample.synth.partition.plan_reference`)."""
    out = {}
    for cl, v in model_marginals.items():
        path = partition_path(v, max_parts=max_parts)
        k, e = plan_reference(path, rho_plan)
        out[cl] = Plan(path, k, e)
    return out


@dataclass
class Option:
    """A public measurement option for a clique: a partition of its cells (labels, number of parts)."""

    labels: np.ndarray
    parts: int


def clique_options(v: np.ndarray, max_parts: int) -> list[Option]:
    """One clique's options (:func:`public_options`) from its model marginal ``v``."""
    n = int(np.size(v))
    opts = []
    if n > 1 and np.ndim(v) > 1:  # a 1-way merge path starts at n parts and only merges: no option below n
        path = partition_path(v, max_parts=max_parts)
        ks = []
        k = 0
        while path.has(k) and path.parts(k) < min(n, max_parts + 1):
            ks.append(k)
            k = 2 * k + 1
        opts = [Option(_compact(lab, path.parts(k)), path.parts(k)) for k, lab in zip(ks, path.labels_at(ks))]
    opts.append(Option(_compact(np.arange(n), n), n))
    return opts


def _compact(labels: np.ndarray, parts: int) -> np.ndarray:
    """Labels in the smallest unsigned integer type that holds them (1 or 2 bytes a cell instead of 8: the
    options of every candidate are cached across rounds). The same values, so the same sums."""
    return labels.astype(np.min_scalar_type(max(parts - 1, 0)))


def public_options(
    model_marginals: Mapping[Clique, np.ndarray],
    max_parts: int,
    cache: dict | None = None,
    refresh: float | None = None,
) -> dict[Clique, list[Option]]:
    """Annealed schedule, from model marginals only: for every clique, the partitions P_k of its
    Alg. 3/4 path at k = 0, 1, 3, 7, ... (about doubling |P| each time, up to ``max_parts`` parts)
    and the identity partition (every cell its own group: AIM's measurement).

    ``cache`` (clique -> (marginal, options)) keeps the options of an earlier round's model while the
    clique's model marginal has moved by less than ``refresh`` of its total in L1 (paths are the
    expensive part; any function of earlier public models is still public). Computing the paths of
    different cliques in 2 threads was slower on every setting of benchmarks/ppsyn_time.py (Adult and
    BR2000 at eps 0.1 and 0.5: 1.1-1.5x the time), so they run one after the other."""
    refresh = OPTION_REFRESH if refresh is None else refresh
    out = {}
    for cl, v in model_marginals.items():
        if cache is not None and cl in cache:
            old, opts = cache[cl]
            if np.abs(old - v).sum() <= refresh * max(float(v.sum()), 1e-300):
                out[cl] = opts
                continue
        out[cl] = opts = clique_options(v, max_parts)
        if cache is not None:
            cache[cl] = (np.array(v, dtype=float), opts)
    return out


def public_path_options(
    public_counts: Mapping[Clique, np.ndarray], max_parts: int, cache: dict | None = None
) -> dict[Clique, list[Option]]:
    """The public partition plan (PPSyn-DP with a public table): for every clique, the partitions P_1, P_3,
    P_7, ... (up to ``max_parts`` parts, fewer than the clique's cells) of the Alg. 3/4 path computed on the
    PUBLIC table's marginal ``public_counts[cl]`` (shaped by the clique's domain), a function of the public
    table only. The paper computes its paths on the true counts x_w, so that each group holds cells of
    similar count; the public marginal stands in for x_w at no privacy cost (the model path of
    :func:`public_options` stands in for it with what the model knows). Neither P_0 (the total only) nor the
    identity (already an option of :func:`public_options`) is offered. ``cache`` (clique -> options) keeps
    them for the whole fit: the public marginal does not change."""
    out = {}
    for cl, v in public_counts.items():
        if cache is not None and cl in cache:
            out[cl] = cache[cl]
            continue
        n = int(np.size(v))
        out[cl] = [o for o in clique_options(np.asarray(v, dtype=float), max_parts) if 1 < o.parts < n]
        if cache is not None:
            cache[cl] = out[cl]
    return out


def selection_gain(x: np.ndarray, mu: np.ndarray, option: Option, quality: str = "group") -> float:
    """What measuring ``option``'s group sums can fix (annealed schedule; module docstring).

    "group" (default): ||Q_P (x − mu)||₁, the model's error on the group sums. Adding a record moves one
    cell of x, hence one group sum, by 1: sensitivity 1. "gain": C − misfit_P(x), sensitivity 3."""
    if quality == "group":
        return float(
            np.abs(
                partition_sums((np.asarray(x, float) - np.asarray(mu, float)).ravel(), option.labels, option.parts)
            ).sum()
        )
    return float(np.abs(np.asarray(x, float) - mu).sum()) - misfit(x, mu, option.labels, option.parts)


class GroupErrors:
    """||Q_P (x − mu)||₁ for every option P of one clique (equal to :func:`selection_gain` with quality
    "group", up to float rounding).

    The options of a path are nested (a path only splits, or only merges, groups), so the sums over the
    finest non-identity option give every coarser option's sums by a second, tiny ``bincount``; the
    identity's error is ||x − mu||₁. One pass over the cells instead of one per option."""

    def __init__(self, options: Sequence[Option]):
        self.options = options
        n = int(options[0].labels.size) if options else 0
        coarse = [o for o in options if o.parts < n]
        self.fine = max(coarse, key=lambda o: o.parts) if coarse else None
        if self.fine is not None:
            first = np.empty(self.fine.parts, dtype=np.int64)  # a cell of every fine group
            first[self.fine.labels[::-1]] = np.arange(n - 1, -1, -1)
        self.maps = [None if o.parts >= n else (o.labels[first], o.parts) for o in options]

    def __call__(self, x: np.ndarray, mu: np.ndarray) -> np.ndarray:
        diff = (np.asarray(x, float) - np.asarray(mu, float)).ravel()
        fine = None if self.fine is None else np.bincount(self.fine.labels, weights=diff, minlength=self.fine.parts)
        out = []
        for m in self.maps:
            if m is None:
                out.append(float(np.abs(diff).sum()))
            else:
                out.append(float(np.abs(np.bincount(m[0], weights=fine, minlength=m[1])).sum()))
        return np.array(out)


def misfit(x: np.ndarray, mu: np.ndarray, labels: np.ndarray, parts: int) -> float:
    """||x − R_P(x; mu)||₁ where R_P spreads each group sum of x over the group in the model's proportions
    (what the fit keeps within a group when only the group sums are measured). One record changes it by
    at most 2: adding a record to cell i of group I moves it by up to |1 − r_i| + sum_{j≠i} r_j = 2(1 − r_i)
    (r = the public shares within I). With C_w's 1, quality "gain" has sensitivity 3 (SELECT_SENSITIVITY)."""
    x, mu = np.asarray(x, dtype=float).ravel(), np.asarray(mu, dtype=float).ravel()
    xs = np.bincount(labels, weights=x, minlength=parts)
    ms = np.bincount(labels, weights=mu, minlength=parts)
    size = np.bincount(labels, minlength=parts)
    share = np.where(ms[labels] > 0, mu / np.where(ms[labels] > 0, ms[labels], 1.0), 1.0 / size[labels])
    return float(np.abs(x - xs[labels] * share).sum())


def budget_rule(
    plan: Plan, c_tilde: float, eta: float, rho_ref: float, cap: float, floor: bool = False, scale: float = 1
) -> tuple[int, float]:
    """Step 6 of the note schedule (post-processing of the public plan and C̃): (path index, rho_m ≤ cap).

    rho_k = rho(P_k, C̃, RE_k^pub) along the public path, stopped as in Alg. 3/4; if that is ∞,
    fall back to (P_{k_ref}, rho_ref). The final round does not call this (it uses P_{k_ref}).
    Known deviation from the paper: RE is that of the *model* marginal, so the paper's "error ≤ ηC" target
    is only approximate. In practice RE^pub is small wherever the model is wrong, so the rule often asks
    for a coarse partition and a tiny rho_m (1e-7..1e-5 of a rho of 0.015 on Adult), and many rounds spend
    mostly rho_sel + rho_c. ``floor`` (not in the paper; off by default): also fall back when the rule asks
    for less than rho_ref, so no round measures with less than the reference budget; a public rule, so the
    proof is unchanged. ``scale``: k^2 under a person-level privacy unit (k records per person), whose sigma is k
    times larger for the same rho, so the rule's rho is k^2 times larger for the same error target.
    """
    k, rho = paper_stop(plan.path, c_tilde, eta)
    rho = scale * rho
    if not math.isfinite(rho) or (floor and rho < rho_ref):
        return plan.k_ref, min(rho_ref, cap)
    return k, min(rho, cap)


# -- budgeted steps --------------------------------------------------------------------------------


class Spender:
    """Gaussian / exponential steps through the accountant; in paper mode every entry is labelled unsafe. Both
    calibrate to the accountant's privacy unit (``sensitivity`` per record, times k), as ``gaussian_measure`` and
    ``exponential_select`` do."""

    def __init__(self, accountant: Accountant, noise: NoiseSource, unsafe: bool):
        self.accountant, self.noise, self.unsafe = accountant, noise, unsafe
        self.prefix = "UNSAFE-paper/" if unsafe else "ppsyn/"

    def _unsafe_spend(self, rho, label, mechanism, measured, scale, details):
        extra = {} if self.noise.private else {"noise": SEEDED_LABEL}
        self.accountant.spend(
            rho,
            self.prefix + label,
            mechanism=mechanism,
            measured=measured,
            noise_scale=scale,
            private=False,
            note=PAPER_NOTE,
            **extra,
            **details,
        )

    def gaussian(
        self, counts: np.ndarray, rho: float, label: str, *, sensitivity: float = 1.0, measured: str = "", **details
    ) -> tuple[np.ndarray, float]:
        if not self.unsafe:
            return gaussian_measure(
                self.accountant,
                self.noise,
                counts,
                rho,
                self.prefix + label,
                sensitivity=sensitivity,
                measured=measured,
                **details,
            )
        sigma = sigma_for_rho(rho, self.accountant.unit.sensitivity(sensitivity))
        self._unsafe_spend(
            rho,
            label,
            "discrete Gaussian",
            measured,
            sigma,
            dict(cells=int(np.size(counts)), sensitivity=sensitivity, **details),
        )
        return self.noise.gaussian(counts, sigma), sigma

    def select(
        self,
        scores: np.ndarray,
        rho: float,
        label: str,
        *,
        sensitivity: float = 1.0,
        measured: str = "clique",
        **details,
    ) -> int:
        if not self.unsafe:
            return exponential_select(
                self.accountant,
                self.noise,
                scores,
                rho,
                self.prefix + label,
                sensitivity=sensitivity,
                measured=measured,
                **details,
            )
        eps = epsilon_for_rho(rho)
        scale = self.accountant.unit.sensitivity(sensitivity)
        self._unsafe_spend(
            rho,
            label,
            "exponential",
            measured,
            2.0 * scale / eps,
            dict(candidates=int(np.size(scores)), sensitivity=sensitivity, **details),
        )
        return self.noise.exponential(scores, eps, scale)


@dataclass
class FitState:
    """What every PPSyn schedule's rounds share with the fit: the data's engine (read only through the
    synthesizer's data steps), the accountant and its spender, progress, the domain, the candidate cliques, the
    measurements so far (the rounds append to them), the estimated total, the planned rounds ``T``, the fit's
    budget ``rho`` and the accountant's spend before the fit (``spent_before``, e.g. schema discovery)."""

    engine: Any
    accountant: Accountant
    spender: Spender
    progress: Callable[..., None]
    domain: Any
    candidates: list
    measurements: list
    total: float
    T: int
    rho: float
    spent_before: float


@dataclass
class AnnealedCaches:
    """The annealed schedule's caches across rounds, all public: the candidates scored last round (``small``) and
    whether rounds draw subsets of them, the model paths' options and their group errors, the data's marginals of the
    subset's cliques while they stay in it, the public marginals, their paths' options and group errors, the cliques
    measured publicly, and the marginals of the last refit (``fitted``, None before the first)."""

    subsets: bool
    small: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    group_errors: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)
    pub_counts: dict = field(default_factory=dict)
    pub_options: dict = field(default_factory=dict)
    pub_errors: dict = field(default_factory=dict)
    measured_public: set = field(default_factory=set)
    fitted: Any = None

    def keep_only(self, cliques) -> None:
        """Drop every per-clique cache entry of a clique not in ``cliques`` (a drawn subset: bounded memory)."""
        keep = set(cliques)
        for cache in (self.options, self.group_errors, self.data, self.pub_counts, self.pub_options, self.pub_errors):
            for cl in [c for c in cache if c not in keep]:
                del cache[cl]


def release_contribution(
    spender: Spender, contribution: float, rho_c: float, label: str, granularity: float = CONTRIBUTION_GRANULARITY
) -> tuple[float, float]:
    """C̃ = max(0, C + N_Z noise) at granularity g (note schedule, step 5): (C̃, sigma in C units).

    C = ||x_m − mu_m||₁ is 1-Lipschitz in the data and real, while the exact sampler adds integer noise, so
    this releases g·(round(C/g) + Z), Z discrete Gaussian: rounding moves a neighbour's value by at most g
    more, so round(C/g) has sensitivity (1 + g)/g and Z gets scale sigma/g with sigma = (1 + g)/sqrt(2 rho_c):
    the cost is ((1 + g)/g)² / (2 (sigma/g)²) = rho_c exactly."""
    z = np.array([int(np.rint(contribution / granularity))], dtype=np.int64)
    y, s = spender.gaussian(
        z, rho_c, label, sensitivity=(1.0 + granularity) / granularity, measured="contribution", granularity=granularity
    )
    return max(0.0, float(y[0]) * granularity), s * granularity


__all__ = [
    "PAPER_NOTE",
    "CONTRIBUTION_GRANULARITY",
    "SELECT_SENSITIVITY",
    "QUALITY_SENSITIVITY",
    "OPTION_REFRESH",
    "ONE_WAY_SHARE",
    "WIDE_ONE_WAY_SHARE",
    "WIDE_COLUMNS",
    "one_way_share",
    "one_way_budgets",
    "random_order",
    "candidate_subset",
    "RoundBudgets",
    "round_budgets",
    "Plan",
    "public_plan",
    "Option",
    "clique_options",
    "public_options",
    "public_path_options",
    "selection_gain",
    "GroupErrors",
    "misfit",
    "budget_rule",
    "release_contribution",
]
