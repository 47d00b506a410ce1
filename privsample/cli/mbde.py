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

import math
from pathlib import Path
from typing import Optional

import typer

from privsample.cli.common import (
    check_paths,
    delimiter_option,
    encoding_option,
    err,
    print_ledger,
    warn_seeded,
)


def _hidden(text: str) -> tuple[int, ...]:
    from privsample.errors import InputError

    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        sizes = ()
    if not sizes or any(s < 1 for s in sizes):
        raise InputError(f"--hidden must be comma-separated positive layer sizes (got {text!r})")
    return sizes


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
) -> None:
    """Release m rows drawn with MBDE (integral privacy, Husain et al.) from numeric columns with public bounds."""
    from privsample.data.schema import Schema
    from privsample.data.table import read_table
    from privsample.errors import InputError
    from privsample.pipeline import write_table
    from privsample.privacy import Accountant
    from privsample.privacy.noise import make_noise
    from privsample.mbde.density import IP_NEIGHBOURING, step_sizes
    from privsample.mbde.release import (
        INPUT_RULE,
        check_public_schema,
        indistinguishability_warning,
        per_sample_epsilon,
        release_table,
    )

    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"--epsilon must be > 0 and finite (got {epsilon})")
    if samples < 1:
        raise InputError(f"--samples must be >= 1 (got {samples})")
    if epochs < 1 or rounds < 1:
        raise InputError("--epochs and --rounds must be >= 1")
    eps_s = per_sample_epsilon(epsilon, samples)
    step_sizes(eps_s, c_star, rounds, schedule)  # validates C* and the schedule before reading data
    sizes = _hidden(hidden)
    check_paths({"INPUT": input, "--schema": schema}, {"-o/--output": output})  # before the data are read
    warn_seeded(seed)
    msg = indistinguishability_warning(epsilon, samples)
    if msg:
        err.print(f"[bold yellow]warning: {msg}[/bold yellow]")
    sch = Schema.load(schema)
    check_public_schema(sch)  # before the data are read
    # n is not public under integral privacy: no refusal for n = 0
    df = read_table(input, allow_empty=True, delimiter=delimiter, encoding=encoding)
    acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=IP_NEIGHBOURING)
    table, rel = release_table(
        df,
        sch,
        columns.split(","),
        epsilon,
        samples,
        acc,
        seed=seed,
        noise=make_noise(seed, quiet=True),
        sd=box_sd,
        warn=False,
        T=rounds,
        c_star=c_star,
        epochs=epochs,
        hidden=sizes,
        schedule=schedule,
    )
    write_table(table, output)
    print_ledger(acc.to_dict(), err)
    err.print(INPUT_RULE)
    err.print(
        f"released {len(table):,} rows of {', '.join(table.columns)} to {output}: ε = {epsilon:g} in total "
        f"= {samples} samples × per-sample ε {eps_s:.4g}, integral privacy (any two datasets, Husain et al.); "
        f"T={rounds}, C*={c_star:g}, C*·Σθ = {rel.info['c_star'] * sum(rel.info['thetas']):.4g} ≤ ε/4 "
        "per sample" + ("" if rel.private else " [NOT PRIVATE: seeded]")
    )
