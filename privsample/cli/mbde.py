"""Command line for MBDE (Husain, Cranko & Nock):
``privsample mbde IN --schema S --columns a,b --epsilon E --samples m -o OUT``.

Integral privacy (any two datasets, of any sizes), so nothing about the rows may reach the terminal, not even
their number: the schema must be a reviewed public one (a draft read off the data or a privately discovered
schema is refused before the data are read), rows are mapped by the fixed per-record rule
:data:`privsample.mbde.release.INPUT_RULE` (clip to the public bounds; leave out a row with a missing
or non-numeric value), which is printed on every run, and the messages carry public parameters only (epsilon,
m, T, C*, the columns). Errors concern public facts: flags, the output path, the header, the schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from privsample.cli.common import (
    budget_option,
    budget_spending,
    check_paths,
    delimiter_option,
    encoding_option,
    err,
    print_ledger,
    warn_seeded,
)


def mbde(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    schema: Path = typer.Option(
        ...,
        "--schema",
        "-s",
        help="Public schema (YAML/JSON): every chosen column must be numeric with public 'lower' and 'upper' bounds.",
    ),
    columns: str = typer.Option(..., "--columns", "-c", help="Numeric columns to model, comma separated."),
    epsilon: float = typer.Option(
        ...,
        "--epsilon",
        "-e",
        help="Total ε for all released samples (integral privacy: any two datasets); each sample gets ε/m.",
    ),
    samples: int = typer.Option(..., "--samples", "-m", help="Number of rows m to release."),
    output: Path = typer.Option(..., "-o", "--output", help="Released rows (CSV, or .parquet)."),
    rounds: int = typer.Option(3, "--rounds", help="Boosting rounds T."),
    c_star: float = typer.Option(1.0, "--c-star", help="Classifier bound C* (outputs C*·tanh(f/2))."),
    epochs: int = typer.Option(600, "--epochs", help="Training epochs per round."),
    hidden: str = typer.Option("25,25,25", "--hidden", help="Hidden layer sizes of each classifier."),
    box_sd: float = typer.Option(
        2.0,
        "--box-sd",
        help="The public bounds map to ±this many standard deviations of q0 = N(0, I) (truncated to the box).",
    ),
    schedule: str = typer.Option(
        "paper", "--schedule", help="Step sizes: paper (θ_t = r^t) or finite (largest r with C*·Σθ_t = ε/4 for this T)."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """Release m rows drawn with MBDE (integral privacy, Husain et al.) from numeric columns with public bounds."""
    from privsample.api.mbde import mbde_charge, mbde_input, mbde_release, mbde_request, mbde_schema
    from privsample.api.options import cli_option
    from privsample.io import write_table

    request = mbde_request(
        columns=columns,
        epsilon=epsilon,
        samples=samples,
        rounds=rounds,
        c_star=c_star,
        epochs=epochs,
        hidden=hidden,
        box_sd=box_sd,
        schedule=schedule,
        seed=seed,
        option=cli_option,
    )
    check_paths(
        {"INPUT": input, "--schema": schema, "--budget-file": budget_file}, {"-o/--output": output}
    )  # before the data are read
    warn_seeded(seed)
    if request.warning:
        err.print(f"[bold yellow]warning: {request.warning}[/bold yellow]")
    sch = mbde_schema(schema)  # before the data are read
    # n is not public under integral privacy: no refusal for n = 0
    with budget_spending(budget_file, seed, lambda: mbde_charge(request), input, (output,)):  # before reading
        release = mbde_release(request, mbde_input(input, sch, delimiter=delimiter, encoding=encoding))
        table = release.table
        write_table(table, output)
    print_ledger(release.ledger, err)
    err.print(release.rule, markup=False)  # "[lower, upper]" is text, not a style
    err.print(
        f"released {len(table):,} rows of {', '.join(table.columns)} to {output}: {release.guarantee}"
        + ("" if release.private else " [NOT PRIVATE: seeded]")
    )
