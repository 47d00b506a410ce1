"""Command line for private sampling on the Boolean cube (Boedihardjo, Strohmer and Vershynin):
``privsample cube sample | bounds``.

``cube sample`` is pure ε-DP for replace-one neighbours with n public, and only if BSV's Thm 12.2 certifies
the requested ε: the output, messages and ledger hold the draws and public parameters only (never λ* or
solver numbers). ``cube bounds`` prints the practicality study's tables (public arithmetic, no data).
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
    out,
    print_ledger,
    warn_seeded,
    warn_unused_file_columns,
)
from privsample.errors import PrivsampleError

cube_app = typer.Typer(no_args_is_help=True, help="Noise-free private sampling on the Boolean cube (BSV).")


@cube_app.command("sample")
def cube_sample(
    input: Path = typer.Argument(
        ..., help="Sensitive table (CSV or Parquet): binary 0/1 columns, or any with --schema."
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Released points, decoded to the table's columns."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Pure ε (replace-one neighbours, n public)."),
    k: int = typer.Option(..., "--k", help="Number of points to release."),
    m: Optional[int] = typer.Option(None, "--m", help="Size of the reduced space S (default 4L)."),
    degree: int = typer.Option(2, "--degree", help="Marginal degree d."),
    delta: float = typer.Option(0.25, "--small-delta", help="BSV's δ (density floor δ/m), 2δ ≤ 1 ≤ Δ − δ."),
    big_delta: float = typer.Option(4.0, "--big-delta", help="BSV's Δ (density ceiling Δ/m)."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Public schema for non-binary columns."),
    invalid: str = typer.Option("repair", "--invalid", help="Draws that are not valid one-hot codes: repair | drop."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
    theorem_bound: bool = typer.Option(
        False,
        "--theorem-bound",
        help="Also accept BSV Thm 12.2's ε when below the proved k ln(Δ/δ) (very large n); it rests on two "
        "unproved conditions (docs: privacy model).",
    ),
) -> None:
    """Release k points drawn from BSV's noise-free private density, if --epsilon is certified for them.

    Pure ε-DP for replace-one neighbours with n public: the output, messages and ledger hold the draws and
    public parameters only (never λ* or solver numbers). Values are read by a fixed per-record rule, printed
    whatever the data; a draft or privately discovered schema is refused."""
    from privsample.api.cube import cube_charge, cube_input, cube_release, cube_request
    from privsample.api.options import cli_option
    from privsample.io import write_table

    request = cube_request(
        epsilon=epsilon,
        k=k,
        m=m,
        degree=degree,
        small_delta=delta,
        big_delta=big_delta,
        invalid=invalid,
        seed=seed,
        option=cli_option,
        theorem_bound=theorem_bound,
    )
    warn_seeded(seed)
    check_paths({"INPUT": input, "--schema": schema, "--budget-file": budget_file}, {"-o/--output": output})
    with budget_spending(budget_file, seed, lambda: cube_charge(request), input, (output,)):  # before reading
        table = cube_input(input, schema, delimiter=delimiter, encoding=encoding)
        if schema is not None:  # header and schema only (public)
            warn_unused_file_columns(err, input, table.schema, schema, delimiter=delimiter, encoding=encoding)
        release = cube_release(request, table)
        write_table(release.table, output)
    err.print(release.rule, soft_wrap=True)  # every release: never says whether it fired
    print_ledger(release.ledger, err)
    err.print(f"released {len(release.table):,} points to {output}: {release.guarantee}; {'; '.join(release.notes)}")


@cube_app.command("bounds")
def cube_bounds_cmd(
    figure: Optional[Path] = typer.Option(None, "--figure", help="Also write Figure 1 (PNG) here."),
    n: Optional[int] = typer.Option(None, "--n", help="With --p/--m/--k: the certified ε for these parameters."),
    p: Optional[int] = typer.Option(None, "--p", help="Number of bits."),
    m: Optional[int] = typer.Option(None, "--m", help="Size of the reduced space."),
    k: int = typer.Option(1, "--k", help="Number of released points."),
    degree: int = typer.Option(2, "--degree", help="Marginal degree d."),
    delta: float = typer.Option(0.25, "--small-delta", help="BSV's δ."),
    big_delta: float = typer.Option(4.0, "--big-delta", help="BSV's Δ."),
) -> None:
    """Print the practicality study's tables (Tables 1-3, eqs 2-4), or the certified ε for given parameters."""
    from privsample.cube import bounds as cb
    from privsample.cube import bounds_tables as ct

    check_paths({}, {"--figure": figure})
    if n is not None or p is not None or m is not None:
        if None in (n, p, m):
            raise PrivsampleError("--n, --p and --m go together")
        cb.check_parameters(delta, big_delta)
        from privsample.cube.sampler import box_epsilon

        eps = cb.certified_epsilon(n, p, degree, m, delta, big_delta, k)
        box = box_epsilon(k, delta, big_delta)
        out.print(
            f"certified pure ε for k={k}, n={n}, p={p}, d={degree}, m={m}, δ={delta}, Δ={big_delta}: "
            f"{min(eps, box):.6g} (Thm 12.2: {eps:.6g}; the box bound k ln(Δ/δ), proved: {box:.6g}; "
            "'cube sample' also adds the solver margin to the theorem's)"
        )
        return
    typer.echo(ct.bounds_report())  # plain text: wide tables must not be re-wrapped
    if figure is not None:
        ct.plot_figure1(figure)
        err.print(f"wrote {figure}")
