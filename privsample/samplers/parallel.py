"""m > 1 draws from a one-draw sampler: run it on m disjoint, data-independent parts (parallel composition).

RSSS (Raskhodnikova et al. 2021, Def. 1.1) define a sampler as producing *one* record; their lower-bound
reductions (Lemma 6.7) get several samples by running a sampler on disjoint parts of the data. We do the same: the
row indices are permuted by a *public* permutation (drawn independently of the data; it need not be
secret) and cut into m consecutive parts of sizes ceil(n/m) or floor(n/m) (the first n mod m parts are
the larger). For replace-one neighbours with n public, one replaced record lies in exactly one part, so
the other m - 1 draws have identical laws and the m draws together have the guarantee of *one* part,
the worst one, i.e. the smallest (parallel composition). The ledger records that as one spend with
``parts=m`` and ``per_part_n``. Each draw has n_part records, so its accuracy is the sampler's at n_part.

n is public under this relation (neighbours have the same n), so n, the part sizes (a function of n and m
only) and refusals computed from them ("needs n >= ... records per draw") may be printed: they disclose
nothing beyond n. Nothing else about the data may reach a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privsample.errors import InputError

NEIGHBOURING = "replace one record (n public)"


class NotEnoughRecords(InputError):
    """The data are too few for the requested privacy or accuracy; the message says how many are needed."""


def part_sizes(n: int, m: int) -> list[int]:
    """Sizes of the m parts of n rows: the first n mod m get ceil(n/m), the rest floor(n/m)."""
    n, m = int(n), int(m)
    if m < 1:
        raise InputError(f"the number of samples must be >= 1 (got {m})")
    if n < m:
        raise NotEnoughRecords(
            f"n = {n} records cannot be split into {m} disjoint non-empty parts (one per sample): "
            f"ask for at most {n} samples"
        )
    q, r = divmod(n, m)
    return [q + 1] * r + [q] * (m - r)


def partition(n: int, m: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Disjoint index arrays covering range(n): a public random permutation cut into :func:`part_sizes`."""
    sizes = part_sizes(n, m)
    rng = rng if rng is not None else np.random.default_rng()
    perm = rng.permutation(n)  # public randomness, independent of the data
    cuts = np.cumsum([0] + sizes)
    return [perm[cuts[i] : cuts[i + 1]] for i in range(m)]


@dataclass
class Draws:
    """What the RSSS samplers return: m independent draws, one per disjoint part."""

    samples: np.ndarray  # m (k-ary: category index) or m x d (0/1)
    per_part_n: list[int]
    guarantee: str  # e.g. "pure epsilon-DP, epsilon = 0.5"
    epsilon: float | None = None  # pure epsilon, when the release is pure DP
    rho: float | None = None  # zCDP rho recorded in the ledger
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def parts(self) -> int:
        return len(self.per_part_n)


__all__ = ["NEIGHBOURING", "NotEnoughRecords", "part_sizes", "partition", "Draws"]
