"""Command line for the seed-003 samplers: ``privsample draw kary | bernoulli | product`` (issue 5)."""

from __future__ import annotations

import typer

draw_app = typer.Typer(no_args_is_help=True, help="DP samplers from distributions (seed 003): one private draw per disjoint part.")
