"""The synthesizer interface and progress reporting shared by MST, AIM and PPSyn.

``Synthesizer.fit(engine, accountant, noise, progress)`` reads the data only through the marginal
``engine``, spends budget only through the ``accountant`` (it uses everything that remains), draws
noise only from ``noise``, and returns a :class:`~privsample.synth.model.SynthModel`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from privsample.errors import ResourceLimitError
from privsample.marginals.base import MarginalEngine
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource

DEFAULT_MAX_MEMORY_MB = 8192.0


class Progress(Protocol):
    def __call__(self, stage: str, *, step: int | None = None, steps: int | None = None,
                 accountant: Accountant | None = None, message: str = "") -> None: ...


def no_progress(stage: str, **_: Any) -> None:
    return None


class Synthesizer(ABC):
    """Select-measure-generate synthesizer on Private-PGM."""

    name: str = "synthesizer"

    @abstractmethod
    def fit(self, engine: MarginalEngine, accountant: Accountant, noise: NoiseSource,
            progress: Progress = no_progress, *, schema=None):
        """Spend ``accountant.remaining`` and return a SynthModel."""

    def check_size(self, domain) -> float:
        """Estimated peak memory (MB) of fitting on ``domain``; raise before any spend if too big."""
        return 0.0


def refuse_if_too_big(estimated_mb: float, limit_mb: float, what: str) -> None:
    """Raise ResourceLimitError (exit 2) before any budget is spent."""
    if estimated_mb > limit_mb:
        raise ResourceLimitError(
            f"{what} would need about {estimated_mb:,.0f} MB, above the limit of {limit_mb:,.0f} MB "
            "(coarsen numeric bins or merge categories in the schema, or raise --max-memory-mb); nothing was spent")
