"""The marginal engine interface: the only code in privsample that reads records.

An engine answers count queries over the encoded (integer-coded) table: ``marginals(cliques)``
returns, for each clique (a tuple of attribute names), the integer count vector over the clique's
cells in C order *over the clique as given*. Mechanisms see nothing else of the data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable, Sequence

import numpy as np

Clique = tuple[str, ...]


class MarginalEngine(ABC):
    """Counts for cliques of attributes over a finite domain (``mbi.Domain``)."""

    domain = None  # mbi.Domain

    @abstractmethod
    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[Clique, np.ndarray]:
        """{clique: int64 counts shaped domain.shape of the clique} for each clique (C order as given)."""

    def marginal(self, clique: Sequence[str]) -> np.ndarray:
        return self.marginals([tuple(clique)])[tuple(clique)]

    def total(self) -> int:
        """The number of records (sensitive: use only through a mechanism)."""
        first = self.domain.attributes[0]
        return int(self.marginal((first,)).sum())

    def _check(self, cliques: Iterable[Sequence[str]]) -> list[Clique]:
        out = []
        for cl in cliques:
            cl = tuple(cl)
            unknown = [a for a in cl if a not in self.domain.attributes]
            if unknown:
                from privsample.errors import InputError

                raise InputError(f"unknown column(s) in clique {cl}: {', '.join(unknown)}")
            out.append(cl)
        return out


class Opener(ABC):
    """How one engine opens a table (``privsample.marginals.open.open_engine``): ``values()`` gives what private
    discovery reads (a DataFrame, or an engine's reader of exact value counts), ``engine(release)`` the marginal
    engine coded by the release schema (taking over what ``values()`` read), ``close()`` releases what the engine
    did not take over. Reading records happens here and in the engines only."""

    def values(self):
        """The table for private discovery (read on the first call)."""
        raise NotImplementedError

    @abstractmethod
    def engine(self, release) -> MarginalEngine:
        """The engine coded by ``release`` (a release schema: ``privsample.data.encoding.release_domain``)."""

    def unit_histogram(self, column: str, grid) -> "np.ndarray":
        """People per cell of ``grid`` by their rows (``column``: the privacy unit); exact, for the unit profile
        mechanism only. Engines that cannot bound contributions refuse (checked before any spend)."""
        raise NotImplementedError("this engine does not bound contributions per person")

    def bound(self, column: str, k: int, seed: int | None = None) -> None:
        """Keep at most ``k`` rows of each person (``privsample.marginals.bounding``) and drop ``column``, before
        ``values()`` and ``engine()`` read the table."""
        raise NotImplementedError("this engine does not bound contributions per person")

    def close(self) -> None:
        """Release what ``values()`` opened and the engine did not take over."""
