"""``privsample synth`` fits a DP synthesizer (PPSyn-DP, AIM, MST) and writes a synthetic table; ``privsample sample``
draws more rows from a saved model (post-processing, no privacy cost). Both stand on the Python API
(``privsample.api.run``): one check of the request, then the release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from privsample.cli.common import (
    RichProgress,
    check_paths,
    err,
    model_folders,
    no_loss_warnings,
    path_checks,
    print_discovery,
    print_dropped,
    print_ledger,
    shown_warnings,
)
from privsample.cli.options import BudgetFile, Delimiter, Encoding
from privsample.io import output_label
from privsample.privacy.released import released

# -- the options of synth -------------------------------------------------------------------------------
Input = Annotated[Path, typer.Argument(help="Sensitive table (CSV or Parquet).")]
Output = Annotated[
    Path,
    typer.Option("-o", "--output", help="Synthetic table to write (CSV, .csv.gz or .parquet; '-': CSV to stdout)."),
]
Epsilon = Annotated[float, typer.Option("--epsilon", "-e", help="Privacy budget ε (> 0).")]
Delta = Annotated[float, typer.Option("--delta", "-d", help="Privacy parameter δ in (0, 1).")]
Method = Annotated[
    str,
    typer.Option(
        "--method",
        "-m",
        help="Synthesizer: ppsyn | aim | mst, or auto (chosen from the budget, the columns and a noisy row count; "
        "the output says which and why) (ppsyn-paper, the NON-PRIVATE published algorithm, needs "
        "--unsafe-as-published).",
    ),
]
SchemaFile = Annotated[
    Optional[Path],
    typer.Option(
        "--schema",
        "-s",
        help="Public schema (YAML/JSON). Without it, "
        "the domain is discovered privately with a share of the budget (5-70%) "
        "planned from a noisy row count.",
    ),
]
Rows = Annotated[
    Optional[int],
    typer.Option(
        "--rows",
        "-n",
        help="Rows to generate (default: the noisy row count; "
        "required when that count is above 10^8, or above 10^6 with a noise sd "
        "over 10% of it). Written in chunks: any number that fits on disk.",
    ),
]
SaveModel = Annotated[Optional[Path], typer.Option("--save-model", help="Save the fitted model (dir or .zip).")]
Seed = Annotated[Optional[int], typer.Option("--seed", help="Seeded NON-PRIVATE noise for reproducible experiments.")]
Other = Annotated[
    bool,
    typer.Option(
        "--other",
        help="Give every categorical column of a reviewed schema an "
        "'(other)' catch-all for unknown categories (default: records with one are left out).",
    ),
]
Engine = Annotated[
    str,
    typer.Option(
        "--engine",
        help="Marginal engine: numpy (in memory), duckdb (out of core), spark "
        "or auto: numpy when the file is well under the "
        "available memory (1/40 of it for Parquet without --schema, 1/10 with), else duckdb.",
    ),
]
SparkMaster = Annotated[
    str,
    typer.Option(
        "--spark-master",
        help="Spark master URL for --engine spark (local[N], spark://host:7077, k8s://..., yarn).",
    ),
]
Public = Annotated[
    Optional[Path],
    typer.Option(
        "--public",
        help="AIM, MST, PPSyn-DP: a public table with the schema's columns (needs --schema), measured at no "
        "privacy cost when it helps (joint selection of public and private marginals). It must not overlap "
        "INPUT: records in both lose the guarantee.",
    ),
]
Require = Annotated[
    Optional[list[str]],
    typer.Option(
        "--require",
        help="An order constraint every synthetic record satisfies, at no privacy cost: 'A OP B' with OP one of "
        '<=, <, >=, > between two numeric columns, or a numeric column and a number (e.g. "discharged >= '
        'admitted", "copay >= 0"); repeatable. Added to the schema (given or discovered); a null value '
        "violates none.",
    ),
]
PrivacyUnitOpt = Annotated[
    Optional[str],
    typer.Option(
        "--privacy-unit",
        help="Protect people, not rows: the column naming a person (patient, customer) whose rows are protected "
        "together. At most --max-rows-per-unit rows of each are kept (chosen at random); the column is never "
        "written. Neighbours then differ by one person.",
    ),
]
MaxRowsPerUnit = Annotated[
    Optional[int],
    typer.Option(
        "--max-rows-per-unit",
        help="k: rows kept per person with --privacy-unit (default: chosen privately from a noisy count of rows "
        "per person). Noise grows with k; a smaller k drops more rows.",
    ),
]
UnitIds = Annotated[
    str,
    typer.Option(
        "--unit-ids",
        help="With --privacy-unit: none (default: the output has no person column) or fresh (a column of fresh "
        "random ids, grouping rows as the noisy count of rows per person says; rows stay independent draws).",
    ),
]
Iters = Annotated[Optional[int], typer.Option("--iters", help="Private-PGM estimation iterations.")]
MaxMemory = Annotated[float, typer.Option("--max-memory-mb", help="Refuse models estimated above this size.")]
Workload = Annotated[
    Optional[str],
    typer.Option(
        "--workload",
        help="AIM/PPSyn workload: cliques separated by ';', "
        "columns by ',' (e.g. 'age,sex;race,income'). Default: all k-way.",
    ),
]
MaxModelSize = Annotated[
    Optional[float],
    typer.Option(
        "--max-model-size", help="AIM/PPSyn model-size limit (MB; default AIM 80, PPSyn-DP 0.5, paper mode 80)."
    ),
]
Schedule = Annotated[
    Optional[str],
    typer.Option(
        "--schedule",
        help="PPSyn-DP budget schedule: annealed (default) or note (the paper's rounds made private: "
        "a noisy contribution and the η rule).",
    ),
]
MaxCandidates = Annotated[
    Optional[int],
    typer.Option(
        "--max-candidates",
        help="PPSyn-DP: candidate marginals scored a round (default 1000; more are drawn at random, "
        "independently of the data).",
    ),
]
Eta = Annotated[
    Optional[float],
    typer.Option("--eta", help="PPSyn target error ratio η in (0, 1] (--schedule note and ppsyn-paper)."),
]
Unsafe = Annotated[
    bool,
    typer.Option(
        "--unsafe-as-published",
        help="Allow --method ppsyn-paper: the published PPSyn, which is NOT differentially private.",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or ledger.")]
IndexCol = Annotated[
    Optional[str],
    typer.Option(
        "--index-col",
        help="An index column of INPUT to drop before anything reads the records (never synthesized, counted or "
        "written): its name in the header, or its 1-based position for a column with no name (a pandas index "
        "written by df.to_csv(): --index-col 1). A name wins over a position.",
    ),
]

# -- the options of sample ------------------------------------------------------------------------------
Model = Annotated[Path, typer.Argument(help="A model saved by 'synth --save-model'.")]
SampleOutput = Annotated[
    Path,
    typer.Option("-o", "--output", help="Synthetic table to write (CSV, .csv.gz or .parquet; '-': CSV to stdout)."),
]
SampleRows = Annotated[
    Optional[int],
    typer.Option(
        "--rows",
        "-n",
        help="Rows (default: the model's noisy row count, "
        "with the limits of 'synth --rows'). Written in chunks: any number that "
        "fits on disk.",
    ),
]
SampleSeed = Annotated[
    Optional[int], typer.Option("--seed", help="Seed for sampling (post-processing; no privacy cost).")
]
Condition = Annotated[
    Optional[str],
    typer.Option(
        "--where",
        help="Draw from the model given a condition, exactly (no privacy cost): clauses separated by ';', "
        "col=value, col=v1,v2 (any of), col=lo..hi for a numeric column (closed; either end may be empty), "
        'col=<null> (missing), e.g. "sex=Female; age=30..40". Every row satisfies it. Default --rows: the '
        "noisy row count times the condition's probability under the model.",
    ),
]
SampleQuiet = Annotated[bool, typer.Option("--quiet", "-q", help="No summary line (warnings are still shown).")]


def synth(
    input: Input,
    output: Output,
    epsilon: Epsilon,
    delta: Delta = 1e-9,
    method: Method = "ppsyn",
    schema: SchemaFile = None,
    rows: Rows = None,
    save_model: SaveModel = None,
    seed: Seed = None,
    other: Other = False,
    engine: Engine = "auto",
    spark_master: SparkMaster = "local[2]",
    public: Public = None,
    require: Require = None,
    iters: Iters = None,
    max_memory_mb: MaxMemory = 8192.0,
    workload: Workload = None,
    max_model_size: MaxModelSize = None,
    schedule: Schedule = None,
    max_candidates: MaxCandidates = None,
    eta: Eta = None,
    unsafe_as_published: Unsafe = False,
    quiet: Quiet = False,
    delimiter: Delimiter = None,
    encoding: Encoding = None,
    index_col: IndexCol = None,
    privacy_unit: PrivacyUnitOpt = None,
    max_rows_per_unit: MaxRowsPerUnit = None,
    unit_ids: UnitIds = "none",
    budget_file: BudgetFile = None,
) -> None:
    """Fit a DP synthesizer on INPUT and write a synthetic table."""
    from privsample.api.run import check_input, prepare, release
    from privsample.checks import cli_option
    from privsample.data.encoding import RELEASE_RULE

    options = {
        "iters": iters,
        "workload": workload,
        "max_model_size": max_model_size,
        "eta": eta,
        "schedule": schedule,
        "max_candidates": max_candidates,
        "max_memory_mb": max_memory_mb,
        "unsafe_as_published": unsafe_as_published,
    }
    paths = _paths(input, schema, public, budget_file, output, save_model)
    request = prepare(
        method=method,
        epsilon=epsilon,
        delta=delta,
        options=options,
        schema=schema,
        rows=rows,
        seed=seed,
        public=public,
        engine=engine,
        delimiter=delimiter,
        encoding=encoding,
        index_col=index_col,
        budget=budget_file,
        other=other,
        spark_master=spark_master,
        require=require,
        output=output,
        save_model=save_model,
        privacy_unit=privacy_unit,
        max_rows_per_unit=max_rows_per_unit,
        unit_ids=unit_ids,
        name=cli_option,
    )  # every check that can refuse from the arguments: once, before anything is charged or read
    note = None if quiet else lambda: err.print(f"note: {RELEASE_RULE}", highlight=False)
    with RichProgress(err, enabled=not quiet) as progress, no_loss_warnings(), shown_warnings(err):
        # the table's kind and names, then the paths (``check_input``); then the run
        done = release(request, check_input(request, input, paths), progress=progress, started=note)
    _report(done, schema is None, output, save_model, quiet)


def _paths(input, schema, public, budget_file, output, save_model) -> dict:
    """``synth``'s paths as the API's one validation checks them (``path_checks``), named as the user typed them."""
    return path_checks(
        {"INPUT": input, "--schema": schema, "--public": public, "--budget-file": budget_file},
        {"-o/--output": output, "--save-model": save_model},
        model_folders("--save-model", save_model),
        tables=("-o/--output",),
    )


def _report(done, discovered: bool, output: Path, save_model: Path | None, quiet: bool) -> None:
    """What a finished ``synth`` prints: the ledger, what discovery kept (noisy or public figures only), the
    free-text columns left out (names only) and the rows written (the noisy count or the rows asked)."""
    res = done.fitted
    choice = res.model.params.get("method_choice")
    if choice:  # --method auto: a function of noisy figures and public quantities
        err.print(f"method auto chose {released(choice['reason'])}", markup=False, highlight=False)
    if not quiet:
        print_ledger(res.accountant.to_dict(), err)
    if discovered:
        print_discovery(res.schema, err, quiet=quiet)
    print_dropped(res.schema, err)
    err.print(
        f"wrote {released(done.rows, ',')} synthetic rows to {output_label(output)}"  # noisy count; no run time
        + (f" and the model to {save_model}" if save_model else ""),
        markup=False,
    )


def sample(
    model: Model,
    output: SampleOutput,
    rows: SampleRows = None,
    seed: SampleSeed = None,
    where: Condition = None,
    quiet: SampleQuiet = False,
) -> None:
    """Draw more synthetic rows from a saved model (no privacy cost)."""
    from privsample.api.run import check_draw, model_columns, rows_to_draw, write_sample
    from privsample.api.synthesizer import load
    from privsample.checks import cli_option
    from privsample.io import check_output_size

    rows, seed = check_draw(rows, seed, cli_option)
    if where is not None:
        from privsample.data.condition import Where

        where = Where.parse(where)  # syntax: before the model is read
    check_paths({"MODEL": model}, {"-o/--output": output}, tables=("-o/--output",))
    m = load(model).model
    n = rows_to_draw(m, rows, where)  # an impossible condition: refused before anything is written
    check_output_size(model_columns(m), n, output)
    if not m.private:
        err.print("[bold red]NOTE: this model was fitted with seeded or unsafe settings: NOT PRIVATE.[/bold red]")
    with RichProgress(err, enabled=not quiet and n > m.chunk_rows) as progress, shown_warnings(err):
        written = write_sample(m, n, seed, output, progress, where=where)  # in chunks: bounded memory
    if not quiet:
        given = f" given {where}" if where is not None else ""
        err.print(
            f"wrote {written:,} rows{given} to {output_label(output)} (sampling costs no privacy budget)", markup=False
        )
