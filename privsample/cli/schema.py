"""``privsample schema`` drafts a schema (non-private) or discovers one privately; ``privsample check`` lists, for
the data owner, what of a table a schema does not hold (NOT private: exact values, rows and counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from privsample.cli.common import (
    budget_spending,
    check_paths,
    err,
    no_loss_warnings,
    out,
    print_discovery,
    print_ledger,
    shown_warnings,
    warn_seeded,
    warn_unused_columns,
)
from privsample.cli.options import BudgetFile, Delimiter, Encoding, ExperimentSeed
from privsample.errors import PrivsampleError

PrivateEpsilon = Annotated[
    Optional[float],
    typer.Option("--private-epsilon", help="Discover the schema with (ε, δ)-DP instead of reading it off the data."),
]
DiscoveryDelta = Annotated[
    float, typer.Option("--delta", help="δ for private discovery (thresholded category release).")
]
FromCodebook = Annotated[
    Optional[Path],
    typer.Option(
        "--from",
        help="Write the schema from a public codebook instead (a Frictionless Table Schema or SDV metadata, JSON or "
        "YAML): reads no data, spends no budget.",
    ),
]
CheckSchema = Annotated[
    Optional[Path],
    typer.Option(
        "--schema", "-s", help="The schema a release would use (YAML/JSON); without it, only the CSV's lines."
    ),
]


def schema(
    ctx: typer.Context,
    output: Annotated[Path, typer.Option("-o", "--output", help="Schema file to write (.yaml or .json).")],
    input: Annotated[Optional[Path], typer.Argument(help="Table to describe (CSV or Parquet).")] = None,
    codebook: FromCodebook = None,
    private_epsilon: PrivateEpsilon = None,
    delta: DiscoveryDelta = 1e-9,
    seed: ExperimentSeed = None,
    delimiter: Delimiter = None,
    encoding: Encoding = None,
    privacy_unit: Annotated[
        Optional[str],
        typer.Option(
            "--privacy-unit",
            help="With --private-epsilon: discover for people, not rows (the column naming a person; at most "
            "--max-rows-per-unit of their rows kept; the column is left out of the schema).",
        ),
    ] = None,
    max_rows_per_unit: Annotated[
        Optional[int], typer.Option("--max-rows-per-unit", help="k with --privacy-unit (default: chosen privately).")
    ] = None,
    budget_file: BudgetFile = None,
) -> None:
    """Draft a schema: non-private (review it!), private with --private-epsilon, or from a codebook with --from."""
    from functools import partial

    from privsample.api.accounting import discovery_charge
    from privsample.checks import check_unit, cli_option

    if codebook is not None:
        _from_codebook(ctx, input, codebook, output)
        return
    if input is None:
        raise PrivsampleError("give the table to describe (INPUT), or a codebook with --from")
    check_paths({"INPUT": input, "--budget-file": budget_file}, {"-o/--output": output})
    if private_epsilon is None:
        budget_file = None  # a draft is not a private release: nothing to charge (the env var may be set)
    unit, k = check_unit(privacy_unit, max_rows_per_unit, cli_option)
    if unit is not None and private_epsilon is None:
        raise PrivsampleError("--privacy-unit needs --private-epsilon: a draft is read off the data, not private")
    charge = partial(discovery_charge, private_epsilon, delta, cli_option, unit=unit)
    with budget_spending(budget_file, seed, charge, input, (output,)):  # before the data are read
        _schema(input, output, private_epsilon, delta, seed, delimiter, encoding, unit, k)


def _schema(input, output, private_epsilon, delta, seed, delimiter, encoding, unit=None, k=None) -> None:
    from privsample.data.discovery import draft_schema
    from privsample.data.table import read_table
    from privsample.api.accounting import discover_schema
    from privsample.checks import check_budget, cli_option
    from privsample.privacy import make_noise

    # Private discovery is a release under add/remove neighbours: an empty table is not refused.
    df = read_table(input, allow_empty=private_epsilon is not None, delimiter=delimiter, encoding=encoding)
    if private_epsilon is None:
        from privsample.data.discovery import suggest_forbid

        s = draft_schema(df)
        suggested = suggest_forbid(df, s)
        s.save(output, suggested_forbid=suggested)
        err.print(
            "[bold yellow]NON-PRIVATE DRAFT: categories and bounds were read directly from the data. Review "
            f"and edit {output} (drop rare categories, use public bounds), then set 'provenance: user'. "
            "It carries no privacy guarantee.[/bold yellow]"
        )
        if suggested:
            err.print(
                f"[bold yellow]{len(suggested)} NON-PRIVATE candidate structural zero(s) (empty cells of the "
                f"data) are listed for review in {output}; none is used until you move it under 'forbid'."
                "[/bold yellow]"
            )
        return
    check_budget(private_epsilon, delta, cli_option)
    warn_seeded(seed)
    if unit is not None:
        from privsample.data.unit_names import check_unit_column

        check_unit_column(unit, [str(c) for c in df.columns], str(input), cli_option)
    with no_loss_warnings(), shown_warnings(err):
        s = discover_schema(df, private_epsilon, delta, make_noise(seed, quiet=True), unit=unit, max_rows=k, seed=seed)
    s.save(output)
    print_ledger(s.ledger, err)
    print_discovery(s, err, quiet=True)  # one warning per column discovery lost
    err.print(f"wrote a privately discovered schema to {output}; 'synth --schema' adds its cost to its own ledger")


DATA_OPTIONS = {
    "input": "INPUT",
    "private_epsilon": "--private-epsilon",
    "delta": "--delta",
    "seed": "--seed",
    "delimiter": "--delimiter",
    "encoding": "--encoding",
    "budget_file": "--budget-file",
    "privacy_unit": "--privacy-unit",
    "max_rows_per_unit": "--max-rows-per-unit",
}


def _from_codebook(ctx: typer.Context, input, codebook: Path, output: Path) -> None:
    """``schema --from``: the schema of a public codebook (``privsample.data.codebook``); no data, no budget (a
    budget file named by the environment is left alone)."""
    from rich.markup import escape

    from privsample.data.codebook import read_codebook

    def on_command_line(name: str) -> bool:  # not a default, nor an environment variable (PRIVSAMPLE_BUDGET_FILE)
        source = ctx.get_parameter_source(name)
        return source is not None and source.name == "COMMANDLINE"

    given = [
        flag for name, flag in DATA_OPTIONS.items() if (input is not None if name == "input" else on_command_line(name))
    ]
    if given:
        raise PrivsampleError(
            f"--from reads a public codebook and no data, so it takes no {' or '.join(given)}: nothing is read or spent"
        )
    check_paths({"--from": codebook}, {"-o/--output": output})
    book = read_codebook(codebook)
    book.save(output)
    for u in book.unmapped:
        err.print(f"[yellow]warning: '{escape(u.name)}' not mapped: {escape(u.reason)}[/yellow]", highlight=False)
    n, total = len(book.columns), len(book.entries)
    err.print(
        escape(
            f"wrote {output} from {codebook} ({book.kind}): {n} of {total} field(s) mapped, provenance user, no budget "
            "spent; review what its header lists as guessed"
        ),
        highlight=False,
    )
    if n and not book.synthesized:
        err.print(
            f"[bold yellow]Only identifiers could be mapped: {escape(str(output))} cannot be used until at least one "
            "column to synthesize is filled in.[/bold yellow]"
        )
    elif not n:
        err.print(
            f"[bold yellow]No field could be mapped: {escape(str(output))} cannot be used until at least one "
            "column is filled in.[/bold yellow]"
        )


def check(
    input: Annotated[Path, typer.Argument(help="The sensitive table (CSV or Parquet).")],
    schema: CheckSchema = None,
    examples: Annotated[
        int, typer.Option("--examples", min=0, help="Example values (with rows) to show per problem.")
    ] = 5,
    binary: Annotated[
        bool,
        typer.Option(
            "--binary",
            help="Instead of a schema: list the values that are not 0 or 1, which 'cube sample' without a schema "
            "reads as 0.",
        ),
    ] = False,
    delimiter: Delimiter = None,
    encoding: Encoding = None,
) -> None:
    """NOT PRIVATE: list the lines of INPUT that are not well-formed CSV records and the values that SCHEMA does
    not hold (with --binary: that are not 0 or 1), for the data owner.

    Names values, rows and exact counts: never publish its output. Exit 0 when every line and value fits, 2
    otherwise."""
    from privsample.data.schema import Schema
    from privsample.data.table import read_table
    from privsample.data.validate import KIND_TEXT, left_out, validate, validate_binary
    from privsample.errors import DataError
    from privsample.data.encoding import release_domain

    if binary and schema is not None:
        raise PrivsampleError("--binary and --schema cannot be combined: --binary checks the reading without a schema")
    sch = Schema.load(schema) if schema is not None else None
    rel = release_domain(sch, other=False) if sch is not None else None
    err.print(
        "[bold yellow]NOT PRIVATE: this check names values, rows and exact counts of the data. It is for "
        "the data owner; do not release its output.[/bold yellow]"
    )
    na = {"na_values": sch.na_values} if sch is not None else {}
    try:
        df = read_table(input, **na, allow_empty=True, delimiter=delimiter, encoding=encoding)
    except DataError as exc:
        _list_malformed(input, delimiter, encoding, examples, exc)
    if sch is None and not binary:
        out.print(
            f"all {len(df):,} data rows of {input} are well-formed CSV records (pass --schema, or --binary, to "
            "check values)"
        )
        return
    if binary:
        problems = validate_binary(df, examples=examples)
    else:
        warn_unused_columns(err, df.columns, sch, input, schema)
        problems = validate(df, sch, examples=examples, release=rel)
    if not problems:
        out.print(f"all {len(df):,} rows of {input} {'are 0 or 1' if binary else f'fit {schema}'}")
        return
    title = "that are not 0 or 1" if binary else f"outside {schema.name}"
    t = Table(title=f"Values of {input.name} {title} (NOT PRIVATE)")
    for col in ("column", "problem", "values", "release path", "examples (row: value)"):
        t.add_column(col, justify="right" if col == "values" else "left")
    for cp in problems:
        for kind, count in cp.counts.items():
            ex = ", ".join(f"{r}: {v}" for r, v in cp.examples.get(kind, []))
            t.add_row(cp.column, KIND_TEXT[kind], f"{count:,}", cp.actions[kind], ex)
    out.print(t)
    if binary:
        raise PrivsampleError(
            f"{sum(cp.total for cp in problems):,} value(s) in {len(problems)} of {len(df.columns)} column(s) are "
            "not 0 or 1: 'cube sample' without a schema reads them as 0 (NOT PRIVATE)"
        )
    dropped = left_out(df, rel)
    raise PrivsampleError(
        f"{sum(cp.total for cp in problems):,} value(s) in {len(problems)} column(s) are outside "
        f"the schema; a release would leave out {dropped:,} of {len(df):,} rows (NOT PRIVATE)"
    )


def _list_malformed(input: Path, delimiter, encoding, examples: int, exc) -> None:
    """``check`` on a file that is not well-formed CSV: its malformed lines (NOT PRIVATE), then exit 2."""
    from privsample.data.table import malformed_lines

    try:
        count, lines = malformed_lines(input, delimiter=delimiter, encoding=encoding, limit=max(examples, 1))
    except PrivsampleError:
        count, lines = 0, []
    if not lines:  # e.g. text not valid in a transcoded encoding: the reader's own description
        raise PrivsampleError(f"{exc.detail or exc} (NOT PRIVATE)")
    t = Table(title=f"Lines of {input.name} that are not well-formed CSV records (NOT PRIVATE)")
    for col in ("line", "problem", "text"):
        t.add_column(col, justify="right" if col == "line" else "left")
    for line, problem, text in lines:
        t.add_row(f"{line:,}", problem, text.replace("\n", "\\n"))
    out.print(t)
    raise PrivsampleError(
        f"{count:,} line(s) of {input} are not well-formed CSV records: a release stops on this file, naming no "
        "line, and a budget file keeps its charge (NOT PRIVATE)"
    )
