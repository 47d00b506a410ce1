"""Command line for MBDE (seed 002): ``privsample mbde IN --schema S --columns a,b --epsilon E --samples m -o OUT`` (issue 6)."""

from __future__ import annotations


def register(app) -> None:
    """Add the ``mbde`` command to the main Typer app (filled in by issue 6)."""
