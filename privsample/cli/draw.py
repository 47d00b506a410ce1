"""Command line for the RSSS samplers (Raskhodnikova, Sivakumar, Smith and Swanberg 2021):
``privsample draw kary | bernoulli | product``.

Each command draws ``--samples m`` records, one per disjoint part of the data (a public random partition,
parallel composition: the m draws cost one part's budget), and refuses (exit 2, nothing written) when a
part is too small for the privacy the sampler can certify or for the accuracy ``--alpha`` asks for,
saying how many records would be needed. Guarantees are for replace-one neighbours with n public.

What reaches the terminal. n is public under this relation, so n, the part sizes (functions of n and m)
and refusals computed from them are printed; so are the public parameters (epsilon, delta, k, the columns,
the declared categories). Nothing else about the data: raw cells are mapped to the sampler's public domain
by a fixed per-record rule (:func:`privsample.samplers.kary.encode`: anything not declared, missing included,
is the catch-all "(other)"; :func:`privsample.samplers.bernoulli.binarize`: 1 iff exactly one, else 0) that
never refuses and never drops a record (dropping would change n). Each command prints its rule on every
successful run, never whether it fired or how often; ``privsample check`` (not private) lists such values
for the data owner. Problems with public facts (a column missing from the header, bad flags) are one-line
errors with exit 2.

The commands parse their options, call :mod:`privsample.api.draws` (the Python functions ``draw_kary``,
``draw_bernoulli``, ``draw_product``: one implementation, worded here with the flags), write the draws and
print the release's ledger, guarantee, input rule and part sizes.
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

draw_app = typer.Typer(
    no_args_is_help=True, help="DP samplers from distributions (RSSS 2021): one private draw per disjoint part."
)

_SKIP_HELP = "Draw even if the accuracy bound for --alpha is not met (privacy is unaffected)."
_SAMPLES_HELP = "Number of draws m; each uses its own disjoint part of about n/m records."


# -- the command line's steps and output --------------------------------------------------------------
def _draw(request, input: Path, output: Path, budget_file, delimiter, encoding) -> None:
    """The steps of :mod:`privsample.api.draws` on the command line, with ``request`` checked in its flags'
    words: charge the budget file (before the data are read), check the paths, read the input, warn, draw,
    write and print."""
    from privsample.api.draws import draw_charge, draw_input, draw_release

    with budget_spending(budget_file, request.seed, lambda: draw_charge(request), input, (output,)):
        check_paths({"INPUT": input}, {"-o/--output": output})
        table = draw_input(input, request, delimiter=delimiter, encoding=encoding)
        if table.warning:
            err.print(f"[bold yellow]WARNING: {table.warning}.[/bold yellow]")
        warn_seeded(request.seed)
        _finish(draw_release(request, table), output)


def _finish(release, output: Path) -> None:
    """Write the draws and print the ledger, the guarantee, the input rule (always: it is public) and the part
    sizes (functions of the public n and m)."""
    from privsample.io import write_table

    write_table(release.table, output)
    print_ledger(release.ledger, err)
    err.print(f"guarantee: {release.guarantee}")
    err.print(release.rule)
    for note in release.notes:
        err.print(note)
    err.print(f"wrote {len(release.table):,} sample(s) to {output}")


# -- commands -------------------------------------------------------------------------------------------
@draw_app.command("kary")
def draw_kary(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    column: str = typer.Option(..., "--column", "-c", help="The categorical column to sample."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (one column)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Pure ε (replace-one neighbours, n public)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    categories: Optional[str] = typer.Option(
        None, "--categories", help="The public domain: categories separated by ','."
    ),
    k: Optional[int] = typer.Option(
        None,
        "--k",
        help="The public domain size; without --categories the values are read as the integer codes 0..k-1.",
    ),
    other: Optional[str] = typer.Option(
        None,
        "--other",
        help="A declared category (or code) that takes the values "
        "outside the domain; default: an extra outcome '(other)' (code k with --k).",
    ),
    alpha: float = typer.Option(
        0.1, "--alpha", help="Target TV distance of each draw (Thm 1.4: n ≥ 2k/(αε) per draw)."
    ),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """k-ary sampler (RSSS Alg. 3): noisy histogram, projection onto the simplex, one draw per part. Pure ε-DP.

    A value that is not a declared category (or code), or is missing, counts as the catch-all: an extra
    outcome '(other)' (written as code k with --k), or the declared category named by --other. The rule is
    fixed before the data are read and applied to every record (none is dropped: n stays public), so the
    guarantee is unchanged; the accuracy bound is for the k' = k + 1 (or k with --other) mapped outcomes."""
    from privsample.api.draws import kary_request
    from privsample.api.options import cli_option

    request = kary_request(
        column=column,
        epsilon=epsilon,
        categories=categories,
        k=k,
        other=other,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
        option=cli_option,
    )
    _draw(request, input, output, budget_file, delimiter, encoding)


@draw_app.command("bernoulli")
def draw_bernoulli(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet); a cell reads 1 iff it is exactly 1."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: Optional[float] = typer.Option(
        None,
        "--delta",
        "-d",
        help="With δ: (ε, δ)-DP via zCDP over the columns "
        "(Thm 6.4); without: pure ε-DP (Thm 6.1; basic composition over columns).",
    ),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    clip: str = typer.Option("1/4", "--clip", help="Clip margin a: the mean is clipped to [a, 1-a], 0 < a < 1/3."),
    alpha: float = typer.Option(0.1, "--alpha", help="Target TV distance of each draw (for biases in [1/3, 2/3])."),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """Bounded-bias sampler (RSSS Thms 6.1/6.4): clipped column means, one Bernoulli per column, no added noise.

    Accurate for biases in [1/3, 2/3]; private for any data."""
    from privsample.api.draws import bernoulli_request
    from privsample.api.options import cli_option

    request = bernoulli_request(
        columns=columns,
        epsilon=epsilon,
        delta=delta,
        clip=clip,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
        option=cli_option,
    )
    _draw(request, input, output, budget_file, delimiter, encoding)


@draw_app.command("product")
def draw_product(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet); a cell reads 1 iff it is exactly 1."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy δ in (0, 1): the sampler is ρ(ε, δ)-zCDP."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    alpha: float = typer.Option(
        0.1, "--alpha", help="Target TV distance of each draw (note's conservative sufficient bound for Thm 5.1)."
    ),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """General product sampler (RSSS Alg. 4): bucketing by noisy truncated means, then fresh noisy means and
    one Bernoulli per column. ρ-zCDP, converted to (ε, δ)-DP."""
    from privsample.api.draws import product_request
    from privsample.api.options import cli_option

    request = product_request(
        columns=columns,
        epsilon=epsilon,
        delta=delta,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
        option=cli_option,
    )
    _draw(request, input, output, budget_file, delimiter, encoding)
