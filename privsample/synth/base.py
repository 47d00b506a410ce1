"""The synthesizer interface and progress reporting shared by MST, AIM and PPSyn.

``Synthesizer.fit(engine, accountant, noise, progress)`` reads the data only through the marginal
``engine``, spends budget only through the ``accountant`` (it uses everything that remains), draws
noise only from ``noise``, and returns a :class:`~privsample.synth.model.SynthModel`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from privsample.errors import InputError, ResourceLimitError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource
from privsample.progress import Progress, no_progress
from privsample.synth.selection import MAX_ATTRIBUTES, informative_attributes
from privsample.synth.zeros import StructuralZeros

DEFAULT_MAX_MEMORY_MB = 8192.0
JIT_CACHE_LIMIT_MB = 2048.0  # AIM/PPSyn drop JAX's compiled code between rounds above this RSS


REUSE_SIGMAS = 3.0  # a code value's or null cell's discovery count is reused only above this many sigmas


def discovery_measurements(schema, domain) -> list:
    """The counts that private discovery released, as 1-way measurements on ``domain``.

    A privately discovered schema (``provenance: private``) keeps, per column, the noisy counts discovery
    released and their noise scale sigma (``schema.discovery``): a categorical column's released categories,
    a code column's kept values (a numeric column with unit bins, from its grid histogram) and, where the
    column is nullable, the records without a value (``null_count``). Each column's counts come from one
    measurement with one sigma, and become one measurement of its 1-way marginal: those cells with weight 1
    and stddev sigma, every other cell (the catch-all, a code's unsupported values) with weight 0, i.e. not
    measured. Privacy: these counts are outputs of discovery's mechanisms, already charged to the accountant
    and in the ledger, so using them is post-processing and costs nothing more. Utility: the budget spent on
    discovery also sharpens the 1-way marginals. The counts are conditioned on passing a threshold, which
    biases counts near it upwards: a category's threshold is many sigmas high, but a code value or a null cell
    passes at ``EXTEND_SIGMAS`` (2) sigma, where an empty cell's count, if it passes, is at least 2 sigma (an
    invented share of records); so those counts are reused only above ``REUSE_SIGMAS`` (3) sigma, where an empty
    cell passes with probability about 1e-3 and a real one near the cut is biased by about a sigma (a higher cut
    selects the upward errors of more real cells: 11.7% missing values came out at 16-20% with a cut at 4 sigma,
    benchmarks/results/small_tables.md). Columns whose domain no longer matches the released one (a schema
    edited after discovery) are left out, and so are one-cell columns (their one count is the total).
    """
    from privsample.synth import pgm

    info = getattr(schema, "discovery", None)
    if schema is None or getattr(schema, "provenance", None) != "private" or not isinstance(info, dict):
        return []
    entries = {e.get("name"): e for e in info.get("columns", []) if isinstance(e, dict)}
    # a one-cell column's count is the total: no use to the fit
    measured = set(informative_attributes(domain, StructuralZeros.for_fit(schema, domain)))
    out = []
    for col in schema.columns:
        e = entries.get(col.name)
        if e is None or col.name not in measured or not isinstance(e.get("counts"), dict) or not e["counts"]:
            continue
        if not e.get("sigma") or int(domain[col.name]) != col.size:
            continue
        codes = _released_codes(col, e)
        if codes is None:
            continue
        y, w = np.zeros(col.size), np.zeros(col.size)
        for i, v in codes.items():
            y[i], w[i] = v, 1.0
        out.append(pgm.LinearMeasurement(y, (col.name,), stddev=float(e["sigma"]), query=pgm.mbi.WeightedQuery(w)))
    return out


def _released_codes(col, entry: dict) -> dict[int, float] | None:
    """{code: noisy count} of a column's released counts (``discovery_measurements``), None when they do not
    match the column (edited after discovery, or a numeric column without unit bins)."""
    kind = getattr(col, "kind", None)
    out: dict[int, float] = {}
    if kind == "categorical":
        index = {c: i for i, c in enumerate(col.categories)}
        if any(str(c) not in index for c in entry["counts"]):
            return None
        out = {index[str(c)]: float(v) for c, v in entry["counts"].items()}
    elif kind == "numeric" and entry.get("binning") == "unit" and col.integer and col.edges is None:
        if col.bins != int(col.upper - col.lower + 1):
            return None
        for c, v in entry["counts"].items():
            code = float(c) - col.lower
            if not (code.is_integer() and 0 <= code < col.bins):
                return None
            if float(v) > REUSE_SIGMAS * float(entry["sigma"]):
                out[int(code)] = float(v)
    else:
        return None
    null = entry.get("null_count")
    sigma_null = entry.get("null_sigma", entry.get("sigma"))
    if (
        entry.get("nullable")
        and col.null_code is not None
        and null is not None
        and sigma_null == entry["sigma"]
        and float(null) > REUSE_SIGMAS * float(sigma_null)
    ):
        out[int(col.null_code)] = float(null)
    return out


COUNT_MEASURED = "number of records (no column has more than one value)"


def count_measurement(domain, read, gaussian, rho: float, label: str):
    """What a fit measures when no column is worth measuring (``selection.informative_attributes`` is empty): the
    number of records, once, with everything left (``rho``), so the model's total (the rows it describes) is a
    noisy count and no budget is left unspent. The count is the 1-way marginal of the first column, whose one cell
    holds every record: L2 sensitivity 1 (k under the privacy unit, which ``gaussian`` calibrates to), labelled as
    the number of records in the ledger. ``read(cliques)``: the data's marginals; ``gaussian(counts, rho, label,
    measured=...)``: (noisy counts, sd). Returns the measurement and its (answer, sd) for ``pgm.identity_total``."""
    from privsample.synth import pgm

    cl = (domain.attributes[0],)
    y, s = gaussian(read([cl])[cl], rho, label, measured=COUNT_MEASURED)
    y = np.asarray(y, dtype=float).ravel()
    return pgm.LinearMeasurement(y, cl, stddev=s), (y, s)


ROUNDS_NOTE = "until the budget is spent"


def rounds_bound(done: int, remaining: float, cost: float, limit: int | None = None) -> int:
    """At most how many adaptive rounds there are in all, after ``done`` rounds with ``remaining`` budget left.

    A round that is not the last needs twice its ``cost`` left and spends at least ``cost`` (the cost per
    round only grows: annealing halves sigma), so at most floor(remaining / cost) rounds remain, the last one
    included; ``limit`` caps the total. Public: a function of the accountant's state and the schedule."""
    left = math.floor(remaining / cost * (1 + 1e-9)) if cost > 0 else 1
    total = done + max(1, left)
    return max(done + 1, min(total, limit)) if limit is not None else total


def estimate_phase(
    progress: Progress, accountant: Accountant | None, stage: str, iters: int, domain, measurements, **kw
):
    """``pgm.estimate(domain, measurements, iters=iters, **kw)`` reported as a phase of ``iters`` steps."""
    from privsample.synth import pgm

    progress(stage, step=0, steps=iters, accountant=accountant, message="Private-PGM")
    model = pgm.estimate(
        domain,
        measurements,
        iters=iters,
        **kw,
        on_block=lambda k: progress(
            stage, step=min(k, iters), steps=iters, accountant=accountant, message="Private-PGM"
        ),
    )
    progress(stage, step=iters, steps=iters, accountant=accountant, message="Private-PGM")  # also if converged early
    return model


class Synthesizer(ABC):
    """Select-measure-generate synthesizer on Private-PGM.

    ``max_columns``: the widest table the method models (None: no limit), refused by ``privsample.checks.check_width``
    from the column names or the schema alone (public), before any spend."""

    name: str = "synthesizer"
    max_columns: int | None = None

    @abstractmethod
    def fit(
        self,
        engine: MarginalEngine,
        accountant: Accountant,
        noise: NoiseSource,
        progress: Progress = no_progress,
        *,
        schema=None,
        public=None,
    ):
        """Spend ``accountant.remaining`` and return a SynthModel. ``public``: a public table on the same domain
        (``privsample.synth.public.PublicData``), for the methods that take one (``PUBLIC_ONLY``)."""

    def check_public(self) -> None:
        """``InputError`` unless this configuration takes a public table (the method's own conditions; none by
        default): before any spend."""

    def check_size(self, domain, schema=None) -> float:
        """Estimated peak memory (MB) of fitting on ``domain`` (with ``schema``'s structural zeros, if any);
        raise before any spend if too big."""
        return 0.0


def refuse_if_too_big(estimated_mb: float, limit_mb: float, what: str) -> None:
    """Raise ResourceLimitError (exit 2) before any budget is spent."""
    if estimated_mb > limit_mb:
        raise ResourceLimitError(
            f"{what} would need about {estimated_mb:,.0f} MB, above the limit of {limit_mb:,.0f} MB "
            "(coarsen numeric bins or merge categories in the schema, or raise --max-memory-mb); nothing was spent"
        )


class WorkloadSynthesizer(Synthesizer):
    """Adaptive synthesizers driven by a marginal workload under a model-size limit (AIM, PPSyn).

    Subclasses set ``workload``, ``workload_k``, ``max_cells``, ``max_model_size`` and ``max_memory_mb``.
    """

    workload = None
    workload_k = 2
    # every model-size check (the one-way model, each candidate of each round) sizes a junction tree over all the
    # columns: ``graph_cells`` handles at most MAX_ATTRIBUTES
    max_columns = MAX_ATTRIBUTES
    max_cells: int | None = 10_000
    max_model_size = 80.0
    max_memory_mb = DEFAULT_MAX_MEMORY_MB

    def _workload(self, domain, zeros=None):
        """The workload on the columns worth measuring (``selection.informative_attributes`` given the structural
        ``zeros``): a given one without the others (``informative_workload``), or the default k-way cliques of those
        columns. Empty when no column is worth measuring (the fit then measures the number of records only:
        ``count_measurement``)."""
        from privsample.synth.selection import (
            check_workload,
            default_workload,
            informative_domain,
            informative_workload,
        )

        if self.workload is not None:
            return informative_workload(domain, check_workload(domain, self.workload), zeros)
        sub = informative_domain(domain, zeros)
        if sub is None:
            return []
        for k in range(min(self.workload_k, len(sub.attributes)), 0, -1):
            # no k-way clique within max_cells (large domains): fall back to smaller cliques
            wl = default_workload(sub, k, self.max_cells)
            if wl:
                return check_workload(domain, wl)
        return check_workload(domain, default_workload(sub, 1, None))

    @staticmethod
    def _fitting(domain, model, candidates, limit_mb: float):
        """Candidates that keep the model within ``limit_mb`` (public); one-way ones if none does."""
        from privsample.synth.selection import size_filter

        return (
            size_filter(domain, model.cliques, candidates, limit_mb)
            or [cl for cl in candidates if len(cl) == 1]
            or list(candidates)
        )

    cell_bytes = 16  # per cell of the candidates scored in a round: the data's marginal and the model's

    def candidate_census(self, domain, zeros=None) -> tuple[int, int, tuple[str, ...], tuple[str, ...] | None]:
        """(how many, at most how many cells in all, the largest, the smallest multi-way or None) of the
        candidates a fit scores, from the domain and the workload options only (public). The default
        workload is counted without listing its cliques (:func:`selection.clique_census`: the candidates
        are its cliques and their subsets, and every subset of a clique within max_cells is within it, so
        the cells are a bound); a given workload is listed (its size is the caller's). ``zeros``: the structural
        zeros that make a column not worth measuring (``_workload``)."""
        from privsample.synth.selection import candidate_weights, clique_census, informative_domain, model_size_mb

        sub = informative_domain(domain, zeros)  # no candidate holds a one-cell column
        if sub is None:
            return 0, 0, (), None
        if self.workload is not None:
            cands = list(candidate_weights(self._workload(domain, zeros)))
            if not cands:
                return 0, 0, (), None
            multi = [cl for cl in cands if len(cl) > 1]
            one_way = [(a,) for a in domain.attributes]
            smallest = min(multi, key=lambda cl: model_size_mb(domain, one_way + [cl])) if multi else None
            largest = max(cands, key=domain.size)
            return len(cands), sum(domain.size(cl) for cl in cands), largest, smallest
        census: dict = {}
        for k in range(min(self.workload_k, len(sub.attributes)), 0, -1):  # as _workload falls back
            census = clique_census(sub, k, self.max_cells)
            if k in census:
                break
        else:
            census = clique_census(sub, 1, None)
        count = sum(c[0] for c in census.values())
        cells = sum(c[1] for c in census.values())
        largest = max((c[2] for c in census.values()), key=domain.size)
        # the pair of the two smallest attributes adds least to the one-way model, and lies in the cliques
        # of the k smallest attributes, the smallest k-way clique
        smallest = None
        if max(census) > 1:
            order = sorted(sub.attributes, key=lambda a: domain.size((a,)))
            smallest = tuple(domain.canonical(order[:2]))
        return count, cells, largest, smallest

    def round_cells(self, domain, count: int, cells: int, largest) -> int:
        """At most how many candidate cells one round scores, given the census (every candidate's here)."""
        return cells

    def check_size(self, domain, schema=None) -> float:
        """Refuse (before any spend, from the domain and the options only) a max_model_size too small for
        the one-way model (with the cliques of ``schema``'s structural zeros, which every model holds) or for
        every multi-way candidate, or a run whose estimated memory exceeds
        max_memory_mb: the model (at most max_model_size, in the estimator's copies) and one round's
        marginals of every candidate (``cell_bytes`` per cell). Runs in time linear in the width for the
        default workloads (no candidate is listed)."""
        from privsample.synth.selection import model_size_mb
        from privsample.synth.zeros import with_zeros

        one_way = with_zeros([(a,) for a in domain.attributes], StructuralZeros.from_schema(schema, domain))
        base = model_size_mb(domain, one_way)
        if base > self.max_model_size:
            raise InputError(
                f"max_model_size {self.max_model_size:g} MB is too small: the one-way model alone needs {base:.3g} MB"
                + (
                    " with the schema's 'forbid'/'require' cliques"
                    if schema is not None and (schema.forbid or getattr(schema, "require", None))
                    else ""
                )
            )
        count, cells, largest, smallest = self.candidate_census(domain, StructuralZeros.for_fit(schema, domain))
        if smallest is not None and model_size_mb(domain, one_way + [smallest]) > self.max_model_size:
            raise InputError(f"max_model_size {self.max_model_size:g} MB is too small for any workload candidate")
        model_mb = self.max_model_size * 24 + 64
        cells = self.round_cells(domain, count, cells, largest)
        rounds_mb = self.cell_bytes * cells / 2**20
        mb = model_mb + rounds_mb
        if mb > self.max_memory_mb:
            raise ResourceLimitError(
                f"{self.name.upper()} would need about {mb:,.0f} MB, above the limit of {self.max_memory_mb:,.0f} MB: "
                f"{model_mb:,.0f} MB for a model of up to max_model_size {self.max_model_size:g} MB and "
                f"{rounds_mb:,.0f} MB for the marginals of its {count:,} candidates (up to {cells:,} cells; the "
                f"largest, {','.join(largest)}, has {domain.size(largest):,}). Merge categories or coarsen bins of "
                f"the largest columns ({', '.join(largest)}), lower max_cells or give a smaller workload, lower "
                "max_model_size, or raise --max-memory-mb; nothing was spent"
            )
        return mb
