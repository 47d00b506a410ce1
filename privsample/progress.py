"""Progress reporting of a run's phases: the ``Progress`` callback's protocol, the silent ``no_progress`` and the
one-step ``progress_phase``. Messages hold public facts and noisy outputs only; the callback sees the accountant (its
budget spent so far, public), never a record."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class AtMost(int):
    """A phase's ``steps`` that is an upper bound, not the total: adaptive rounds end when the budget is spent,
    which may come before the bound. An ``int``, so callbacks that read ``steps`` as a number still work."""

    def __repr__(self) -> str:
        return f"AtMost({int(self)})"


class Progress(Protocol):
    """Progress callback: ``progress(stage, step=, steps=, accountant=, message=)``.

    A phase is a run of calls with the same ``stage`` (a label such as "measure 1-way" or "rounds"); phases
    follow one another and never interleave. ``steps`` is the phase's total, or an :class:`AtMost` bound where
    only a bound is known. A phase ends with a call whose ``step`` equals ``steps`` (a plain int: the number of
    steps it took), before the next phase starts. ``accountant``: the run's ``privsample.privacy.Accountant``, for
    the budget spent so far. Messages hold public facts and noisy outputs only."""

    def __call__(
        self,
        stage: str,
        *,
        step: int | None = None,
        steps: int | None = None,
        accountant: Any = None,
        message: str = "",
    ) -> None: ...


def no_progress(stage: str, **_: Any) -> None:
    return None


@contextmanager
def progress_phase(progress: Progress, stage: str, *, accountant: Any = None, message: str = "") -> Iterator[None]:
    """A one-step phase: ``0/1`` when it starts, ``1/1`` (with the budget spent so far) when it ends."""
    progress(stage, step=0, steps=1, accountant=accountant, message=message)
    yield
    progress(stage, step=1, steps=1, accountant=accountant, message=message)


__all__ = ["AtMost", "Progress", "no_progress", "progress_phase"]
