"""Options that several commands declare alike (the same flags, default and help), as ``Annotated`` types:
``delimiter: Delimiter = None`` in a command's signature declares ``--delimiter`` with its help."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from privsample.cli.common import BUDGET_HELP, DELIMITER_HELP, ENCODING_HELP

Delimiter = Annotated[Optional[str], typer.Option("--delimiter", help=DELIMITER_HELP)]
Encoding = Annotated[Optional[str], typer.Option("--encoding", help=ENCODING_HELP)]
BudgetFile = Annotated[Optional[Path], typer.Option("--budget-file", envvar="PRIVSAMPLE_BUDGET_FILE", help=BUDGET_HELP)]
ExperimentSeed = Annotated[Optional[int], typer.Option("--seed", help="Seeded NON-PRIVATE noise (experiments only).")]

__all__ = ["Delimiter", "Encoding", "BudgetFile", "ExperimentSeed"]
