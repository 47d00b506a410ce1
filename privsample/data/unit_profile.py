"""The unit profile: how many rows each person has, released with noise, and the bound k chosen from it.

A person-level run (``--privacy-unit COLUMN``) keeps at most k rows of each person (``privsample.marginals.bounding``).
Before any other spend, ``unit_profile`` measures the number of people in each cell of the public grid of rows per
person (``UNIT_GRID``: 1, 2, 3, 4, 5, 6, 8, 10, ...), on the table before bounding.

Guarantee: rho_u-zCDP under person-level neighbours (add/remove all the rows of one person). A person falls in
exactly one cell (by their number of rows), so adding or removing one moves one count by one: L2 sensitivity 1,
whatever their number of rows, and the discrete Gaussian noise sigma = 1/sqrt(2 rho_u) gives rho_u-zCDP (Canonne,
Kamath & Steinke 2020). The grid and sigma (a public function of rho_u) are public; everything derived from the
noisy counts is post-processing, with no further read of the records:

* the denoised profile (``denoise``): a noisy count of 1 sigma or 2 is mostly noise, and in the cells of many rows per
  person (representative sizes up to 1448) a few dozen people of noise could count for more rows than the table
  holds. The cells below ``TAIL_FROM`` rows are kept when at least ``DENOISE_Z`` sigma, else set to zero; from
  ``TAIL_FROM`` up, the counts are fitted by a non-increasing sequence (least squares: pool adjacent violators, as
  the tail of the distribution of rows per person thins out over cells of growing widths) and each pooled block of
  c cells is kept when its mean is at least ``DENOISE_Z * sigma / sqrt(c)`` (the sd of that mean), else set to zero;
* the share of rows bounding removes at k (``removed_share``), with each cell's people taken at the cell's
  geometric middle (twice its lower edge for the open last cell), from the denoised profile. It is an estimate:
  people spread thinly over the cells of many rows are not told apart from noise, so it tends to be low when a few
  people hold many rows (``benchmarks/results/person_level.md`` compares it with the truth). The same share from the
  raw noisy counts (negative at zero), which tends to be high (noise in the empty cells of many rows counts as
  people), is reported beside it (``removed_upper``), always, so that the wording does not depend on the noise;
* the chosen k, when none is given (``choose_k``): the grid value minimising an error proxy for a 2-way marginal,
  the share of rows removed plus the noise that k brings, ``sqrt(2/pi) * CELLS * sigma_k / n_k`` with
  sigma_k = k * sqrt(m / (2 rho)) (rho the synthesis budget spread over m = ``MARGINALS_PER_COLUMN`` times the
  column count measurements) and n_k the rows kept; public parameters and the denoised counts only.

The ledger, the model and the report show k and the estimated share removed (from the noisy counts); the exact
counts never leave here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource
from privsample.privacy.released import released

PROFILE_SHARE = 0.05  # of the run's rho, for the noisy profile (rows per person)
CELLS = 48.0  # cells of a typical 2-way marginal (e.g. 6 x 8) in the error proxy of ``choose_k`` (public constant)
MARGINALS_PER_COLUMN = 2.0  # measurements per column in the proxy (MST: every 1-way and a tree of 2-ways)
DENOISE_Z = 1.5  # a cell (or a pooled block's mean) below this many standard deviations is taken as empty
TAIL_FROM = 8  # rows per person from which the denoised profile is non-increasing from cell to cell


@dataclass(frozen=True)
class UnitProfile:
    """A released unit profile: the unit column's name, k (``chosen``: privately, else given), the noisy people
    per grid cell (``people``, as drawn), the estimated share of rows bounding removes at k and the rows kept
    (from the denoised profile: ``denoise``) and the noise's sigma (public)."""

    column: str
    k: int
    chosen: bool
    grid: tuple[int, ...]
    people: tuple[float, ...]
    removed_share: float
    rows_kept: float
    sigma: float = 0.0
    removed_upper: float | None = None  # the share removed from the raw noisy counts: high where noise fills cells

    def describe(self) -> str:
        """One line for the user: k (a mechanism output when chosen) and the noisy share of rows removed, with the
        raw estimate beside it (people with many rows too few to tell from the noise)."""
        k = released(self.k) if self.chosen else str(self.k)
        how = "chosen privately" if self.chosen else "given"
        rows = "row" if self.k == 1 else "rows"
        lo = released(100 * self.removed_share, ".1f")
        if self.removed_upper is not None:  # the same wording whatever the noise drew: only the figures are released
            hi = released(100 * self.removed_upper, ".1f")
            removed = (
                f"an estimated {lo}% of the rows, perhaps up to {hi}% (noisy estimates: the few people with many "
                "rows cannot be told from noise)"
            )
        else:
            removed = f"about {lo}% of the rows (a noisy estimate)"
        return (
            f"privacy unit '{self.column}': at most {k} {rows} per person ({how}); bounding removes {removed}; "
            "those rows are not synthesized"
        )

    def to_dict(self) -> dict:
        return {
            "column": self.column,
            "k": self.k,
            "chosen": self.chosen,
            "grid": list(self.grid),
            "people": list(self.people),
            "removed_share": self.removed_share,
            "rows_kept": self.rows_kept,
            "sigma": self.sigma,
            "removed_upper": self.removed_upper,
        }


def representative_sizes(grid) -> np.ndarray:
    """A representative number of rows per person in each grid cell (public)."""
    g = np.asarray(grid, dtype=np.float64)
    upper = np.r_[g[1:] - 1, 2 * g[-1]]
    return np.sqrt(g * np.maximum(upper, g))


def _pool_non_increasing(y: np.ndarray) -> list[tuple[float, int]]:
    """The least-squares non-increasing fit of ``y`` (pool adjacent violators), as (block mean, cells) from the
    first block on."""
    blocks: list[tuple[float, int]] = []
    for v in y.tolist():
        mean, cells = float(v), 1
        while blocks and blocks[-1][0] < mean:
            m0, c0 = blocks.pop()
            mean, cells = (m0 * c0 + mean * cells) / (c0 + cells), c0 + cells
        blocks.append((mean, cells))
    return blocks


def denoise(people, grid, sigma: float) -> np.ndarray:
    """The denoised people per cell (module docstring): post-processing of the noisy counts ``people`` with the
    public ``grid`` and noise scale ``sigma``; non-negative. ``sigma`` 0 only clips negative counts."""
    h = np.asarray(people, dtype=np.float64)
    if sigma <= 0:
        return np.maximum(h, 0.0)
    tail = int(np.searchsorted(np.asarray(grid), TAIL_FROM, side="left"))
    out = np.where(h[:tail] >= DENOISE_Z * sigma, h[:tail], 0.0)
    fitted: list[float] = []
    for mean, cells in _pool_non_increasing(h[tail:]):
        fitted += [mean if mean >= DENOISE_Z * sigma / math.sqrt(cells) else 0.0] * cells
    return np.maximum(np.r_[out, np.asarray(fitted, dtype=np.float64)], 0.0)


def rows_kept(people, grid, k: int) -> tuple[float, float]:
    """(rows kept at k, rows in all), from people per cell taken at the cells' representative sizes (negative
    counts at zero)."""
    h = np.maximum(np.asarray(people, dtype=np.float64), 0.0)
    s = representative_sizes(grid)
    return float(np.sum(h * np.minimum(s, k))), float(np.sum(h * s))


def removed_share(people, grid, k: int) -> float:
    """The share of rows bounding to ``k`` rows per person removes, from people per cell (``rows_kept``)."""
    kept, total = rows_kept(people, grid, k)
    return 0.0 if total <= 0 else float(min(max(1.0 - kept / total, 0.0), 1.0))


def choose_k(people, grid, rho: float, columns: int, sigma: float = 0.0) -> int:
    """The grid value of k with the least error proxy (module docstring): post-processing of the noisy profile
    (denoised with its noise scale ``sigma``: ``denoise``) and public quantities (``rho`` for the synthesis,
    ``columns`` from the header)."""
    h = denoise(people, grid, sigma)
    best, best_err = int(grid[0]), math.inf
    for k in grid:
        kept, total = rows_kept(h, grid, k)
        if kept <= 0 or total <= 0:
            continue
        sigma = k * math.sqrt(MARGINALS_PER_COLUMN * max(columns, 1) / (2.0 * rho))
        err = (1.0 - kept / total) + math.sqrt(2.0 / math.pi) * CELLS * sigma / kept
        if err < best_err:
            best, best_err = int(k), err
    return best


def unit_profile(
    histogram: np.ndarray,
    accountant: Accountant,
    noise: NoiseSource,
    rho: float,
    *,
    column: str,
    grid: tuple[int, ...],
    k: int | None,
    synthesis_rho: float,
    columns: int,
) -> UnitProfile:
    """Spend ``rho`` on the people per grid cell (``histogram``: exact, from the marginal engine) and return the
    profile, with ``k`` if given, else chosen (``choose_k``). Guarantee: module docstring (sensitivity 1 at the
    level of people, whatever k)."""
    from privsample.privacy.mechanisms import person_gaussian_measure

    noisy, sigma = person_gaussian_measure(
        accountant,
        noise,
        np.asarray(histogram, dtype=np.int64),
        rho,
        "unit: rows per person",
        measured=f"people per number of rows (grid of {len(grid)} cells)",
    )
    people = tuple(float(x) for x in noisy)
    chosen = k is None
    k = choose_k(people, grid, synthesis_rho, columns, sigma) if chosen else int(k)
    h = denoise(people, grid, sigma)
    kept, _ = rows_kept(h, grid, k)
    upper = removed_share(people, grid, k)  # the raw counts, negative at zero: noise in empty cells counts as people
    return UnitProfile(
        column, k, chosen, tuple(grid), people, removed_share(h, grid, k), kept, float(sigma), max(upper, 0.0)
    )


class UnitProfiler:
    """The unit profile step of a person-level run, as the marginal engine calls it: a function of the exact people
    per cell of ``grid`` (``privsample.marginals.bounding``) to k. It spends ``PROFILE_SHARE`` of the accountant's
    budget on them (``unit_profile``), takes k given (``k``) or chosen, fixes the accountant's unit to that k before
    any other spend, and states k and the noisy share of rows bounding removes in a ``ContributionBoundWarning``.
    ``profile``: the released ``UnitProfile`` once called."""

    def __init__(self, column: str, k: int | None, accountant: Accountant, noise: NoiseSource, progress):
        self.column, self.k = column, k
        self.accountant, self.noise, self.progress = accountant, noise, progress
        self.profile: UnitProfile | None = None

    def __call__(self, histogram: np.ndarray, grid: tuple[int, ...], columns: int) -> int:
        """k, from ``histogram`` (exact people per cell of ``grid``); ``columns``: the columns modelled (public)."""
        import warnings
        from fractions import Fraction

        from privsample.errors import ContributionBoundWarning
        from privsample.privacy.unit import PrivacyUnit
        from privsample.progress import progress_phase

        acc = self.accountant
        rho_u = float(Fraction(PROFILE_SHARE) * Fraction(acc.rho_total))
        with progress_phase(self.progress, "unit profile", accountant=acc, message="rows per person"):
            prof = unit_profile(
                histogram,
                acc,
                self.noise,
                rho_u,
                column=self.column,
                grid=grid,
                k=self.k,
                synthesis_rho=max(acc.remaining - rho_u, rho_u),  # what the profile leaves
                columns=columns,
            )
        acc.set_unit(PrivacyUnit(self.column, prof.k), chosen=prof.chosen)
        self.profile = prof
        warnings.warn(prof.describe(), ContributionBoundWarning, stacklevel=2)
        return prof.k


__all__ = [
    "UnitProfiler",
    "representative_sizes",
    "PROFILE_SHARE",
    "UnitProfile",
    "unit_profile",
    "choose_k",
    "denoise",
    "removed_share",
    "rows_kept",
]
