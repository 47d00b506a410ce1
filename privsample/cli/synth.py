"""Commands of the synthesis pipeline: ``privsample synth | sample | schema | check | evaluate | demo``.

``synth`` fits a DP synthesizer (PPSyn-DP, AIM, MST) and writes a synthetic table; ``sample`` draws more rows
from a saved model (post-processing); ``schema`` drafts a schema (non-private) or discovers one privately;
``check`` and ``evaluate`` are NOT private (they compare with the real table exactly, for the data owner);
``demo`` runs the pipeline on the bundled UCI Adult table.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from privsample.cli.common import (
    RichProgress,
    budget_option,
    budget_spending,
    check_paths,
    delimiter_option,
    encoding_option,
    err,
    model_folders,
    out,
    print_ledger,
    warn_seeded,
    warn_unused_columns,
    warn_unused_file_columns,
)
from privsample.errors import PrivsampleError
from privsample.privacy.released import released


def print_discovery(schema, console: Console = err, quiet: bool = False) -> None:
    """Per column, what private discovery kept (post-processing of its noisy output), and one warning listing the
    losses (``discovery_losses``: a column left with at most one value, a numeric column that clips or may clip
    more than 5% of its values), one line each, under what to do. ``quiet``: the warning only."""
    from rich.markup import escape

    from privsample.data.discovery_report import discovery_losses, discovery_rows, min_category_records

    if not quiet:
        t = Table(title="Privately discovered schema (saved with the model)")
        for col, just in (("column", "left"), ("kind", "left"), ("kept", "left"), ("in catch-all (noisy)", "right")):
            t.add_column(col, justify=just)
        for r in discovery_rows(schema):
            share = "" if r.catch_all_share is None else released(r.catch_all_share, ".0%")
            t.add_row(r.column, released(r.kind), released(r.kept), share)
        console.print(t)
    losses = discovery_losses(schema)
    if not losses:
        return
    need = min_category_records(schema)
    console.print(
        f"[bold yellow]warning: private discovery lost detail in {released(len(losses))} of {len(schema.columns)} "
        "columns; a reviewed schema (--schema) keeps what it declares, a larger --epsilon keeps more"
        + (f" (a category needs about {released(need, ',.0f')} records at this ε)" if need else "")
        + ":[/bold yellow]",
        highlight=False,
    )
    for loss in losses:
        console.print(f"[yellow]  - {escape(loss.column)}: {escape(loss.what)}[/yellow]", highlight=False)


@contextmanager
def no_loss_warnings():
    """Within: ``DiscoveryLossWarning`` is not emitted (the command prints the losses itself, ``print_discovery``)."""
    import warnings

    from privsample.errors import DiscoveryLossWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiscoveryLossWarning)
        yield


# -- commands -----------------------------------------------------------------------------------------


def synth(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Synthetic table to write (CSV, or .parquet)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy budget ε (> 0)."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy parameter δ in (0, 1)."),
    method: str = typer.Option(
        "ppsyn",
        "--method",
        "-m",
        help="Synthesizer: ppsyn | aim | mst "
        "(ppsyn-paper, the NON-PRIVATE published algorithm, needs --unsafe-as-published).",
    ),
    schema: Optional[Path] = typer.Option(
        None,
        "--schema",
        "-s",
        help="Public schema (YAML/JSON). Without it, "
        "the domain is discovered privately with a share of the budget (5-70%) "
        "planned from a noisy row count.",
    ),
    rows: Optional[int] = typer.Option(
        None,
        "--rows",
        "-n",
        help="Rows to generate (default: the noisy row count; "
        "required when that count is above 10^8, or above 10^6 with a noise sd "
        "over 10% of it). Written in chunks: any number that fits on disk.",
    ),
    save_model: Optional[Path] = typer.Option(None, "--save-model", help="Save the fitted model (dir or .zip)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise for reproducible experiments."),
    clip: bool = typer.Option(False, "--clip", hidden=True, help="Kept for compatibility: clipping is always on."),
    other: bool = typer.Option(
        False,
        "--other",
        help="Give every categorical column of a reviewed schema an "
        "'(other)' catch-all for unknown categories (default: records with one are left out).",
    ),
    engine: str = typer.Option(
        "auto",
        "--engine",
        help="Marginal engine: numpy (in memory), duckdb (out of core), spark "
        "or auto: numpy when the file is well under the "
        "available memory (1/40 of it for Parquet without --schema, 1/10 with), else duckdb.",
    ),
    spark_master: str = typer.Option(
        "local[2]",
        "--spark-master",
        help="Spark master URL for --engine spark (local[N], spark://host:7077, k8s://..., yarn).",
    ),
    public: Optional[Path] = typer.Option(
        None,
        "--public",
        help="AIM, MST, PPSyn-DP: a public table with the schema's columns (needs --schema), measured at no "
        "privacy cost when it helps (joint selection of public and private marginals). It must not overlap "
        "INPUT: records in both lose the guarantee.",
    ),
    iters: Optional[int] = typer.Option(None, "--iters", help="Private-PGM estimation iterations."),
    max_memory_mb: float = typer.Option(8192.0, "--max-memory-mb", help="Refuse models estimated above this size."),
    workload: Optional[str] = typer.Option(
        None,
        "--workload",
        help="AIM/PPSyn workload: cliques separated by ';', "
        "columns by ',' (e.g. 'age,sex;race,income'). Default: all k-way.",
    ),
    max_model_size: Optional[float] = typer.Option(
        None, "--max-model-size", help="AIM/PPSyn model-size limit (MB; default AIM 80, PPSyn-DP 0.5, paper mode 80)."
    ),
    schedule: Optional[str] = typer.Option(
        None,
        "--schedule",
        help="PPSyn-DP budget schedule: annealed (default) or note (the paper's rounds made private: "
        "a noisy contribution and the η rule).",
    ),
    max_candidates: Optional[int] = typer.Option(
        None,
        "--max-candidates",
        help="PPSyn-DP: candidate marginals scored a round (default 1000; more are drawn at random, "
        "independently of the data).",
    ),
    eta: Optional[float] = typer.Option(
        None, "--eta", help="PPSyn target error ratio η in (0, 1] (--schedule note and ppsyn-paper)."
    ),
    unsafe_as_published: bool = typer.Option(
        False,
        "--unsafe-as-published",
        help="Allow --method ppsyn-paper: the published PPSyn, which is NOT differentially private.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or ledger."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """Fit a DP synthesizer on INPUT and write a synthetic table."""
    from privsample.api.run import fit, prepare, spending
    from privsample.checks import cli_option
    from privsample.data.encoding import RELEASE_RULE
    from privsample.io import check_output_size

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
    request = prepare(
        input,
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
        budget=budget_file,
        other=other,
        spark_master=spark_master,
        name=cli_option,
    )  # every check that can refuse from the arguments: once, before anything is charged or read
    warn_seeded(seed)
    check_paths(
        {"INPUT": input, "--schema": schema, "--public": public, "--budget-file": budget_file},
        {"-o/--output": output, "--save-model": save_model},
        model_folders("--save-model", save_model),
    )
    outputs = ", ".join(str(p) for p in (output, save_model) if p is not None)
    with spending(request, outputs):  # before the data are read
        if request.schema is not None:  # header and schema only (public): before any work
            warn_unused_file_columns(
                err, input, request.schema, schema, delimiter=request.delimiter, encoding=request.encoding
            )
        if not quiet:
            err.print(f"note: {RELEASE_RULE}", highlight=False)
        with RichProgress(err, enabled=not quiet) as progress, no_loss_warnings():
            res = fit(request, progress=progress)
        n = res.model.resolve_rows(request.rows)  # the default: the noisy row count, unless it is mostly noise
        check_output_size(res.model, n, output)
        if save_model is not None:
            res.model.save(save_model)
        # streamed in chunks: memory does not grow with --rows (up to one chunk, the same rows as sampling at once)
        written = _write_sample(res.model, n, request.seed, output, quiet)
        if not quiet:
            print_ledger(res.accountant.to_dict(), err)
        if schema is None:  # discovered in this run: what it kept (noisy or public figures only)
            print_discovery(res.schema, err, quiet=quiet)
        err.print(
            f"wrote {released(written, ',')} synthetic rows to {output}"  # noisy count; no run time: data-dependent
            + (f" and the model to {save_model}" if save_model else "")
        )


def _write_sample(model, rows: int, seed, output: Path, quiet: bool, where=None) -> int:
    """Sample ``rows`` rows from ``model`` (given the condition ``where``, if any) and write them to ``output``
    in chunks (bounded memory); a progress bar when there is more than one chunk."""
    import numpy as np

    from privsample.io import write_chunks

    if where is None:
        chunks = model.sample_chunks(rows, np.random.default_rng(seed))
    else:
        chunks = model.sample_chunks(rows, np.random.default_rng(seed), where=where)
    if quiet or rows <= model.chunk_rows:
        return write_chunks(chunks, output)
    with RichProgress(err) as progress:
        return write_chunks(
            chunks,
            output,
            on_chunk=lambda done: progress("sample and write rows", step=done, steps=rows, message=output.name),
        )


def sample(
    model: Path = typer.Argument(..., help="A model saved by 'synth --save-model'."),
    output: Path = typer.Option(..., "-o", "--output", help="Synthetic table to write."),
    rows: Optional[int] = typer.Option(
        None,
        "--rows",
        "-n",
        help="Rows (default: the model's noisy row count, "
        "with the limits of 'synth --rows'). Written in chunks: any number that "
        "fits on disk.",
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed for sampling (post-processing; no privacy cost)."),
    where: Optional[str] = typer.Option(
        None,
        "--where",
        help="Draw from the model given a condition, exactly (no privacy cost): clauses separated by ';', "
        "col=value, col=v1,v2 (any of), col=lo..hi for a numeric column (closed; either end may be empty), "
        'col=<null> (missing), e.g. "sex=Female; age=30..40". Every row satisfies it. Default --rows: the '
        "noisy row count times the condition's probability under the model.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary line (warnings are still shown)."),
) -> None:
    """Draw more synthetic rows from a saved model (no privacy cost)."""
    from privsample.api.run import check_draw, rows_to_draw
    from privsample.api.synthesizer import load
    from privsample.checks import cli_option
    from privsample.io import check_output_size

    rows, seed = check_draw(rows, seed, cli_option)
    if where is not None:
        from privsample.data.condition import Where

        where = Where.parse(where)  # syntax: before the model is read
    check_paths({"MODEL": model}, {"-o/--output": output})
    m = load(model).model
    n = rows_to_draw(m, rows, where)  # an impossible condition: refused before anything is written
    check_output_size(m, n, output)
    if not m.private:
        err.print("[bold red]NOTE: this model was fitted with seeded or unsafe settings: NOT PRIVATE.[/bold red]")
    written = _write_sample(m, n, seed, output, quiet=quiet, where=where)  # in chunks: bounded memory
    if not quiet:
        given = f" given {where}" if where is not None else ""
        err.print(f"wrote {written:,} rows{given} to {output} (sampling costs no privacy budget)", markup=False)


def schema(
    input: Path = typer.Argument(..., help="Table to describe (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Schema file to write (.yaml or .json)."),
    private_epsilon: Optional[float] = typer.Option(
        None, "--private-epsilon", help="Discover the schema with (ε, δ)-DP instead of reading it off the data."
    ),
    delta: float = typer.Option(1e-9, "--delta", help="δ for private discovery (thresholded category release)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
    budget_file: Optional[Path] = budget_option(),
) -> None:
    """Draft a schema: non-private (review it!) or private with --private-epsilon."""
    from functools import partial

    from privsample.api.accounting import discovery_charge
    from privsample.checks import cli_option

    check_paths({"INPUT": input, "--budget-file": budget_file}, {"-o/--output": output})
    if private_epsilon is None:
        budget_file = None  # a draft is not a private release: nothing to charge (the env var may be set)
    charge = partial(discovery_charge, private_epsilon, delta, cli_option)
    with budget_spending(budget_file, seed, charge, input, (output,)):  # before the data are read
        _schema(input, output, private_epsilon, delta, seed, delimiter, encoding)


def _schema(input, output, private_epsilon, delta, seed, delimiter, encoding) -> None:
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
    with no_loss_warnings():
        s = discover_schema(df, private_epsilon, delta, make_noise(seed, quiet=True))
    s.save(output)
    print_ledger(s.ledger, err)
    print_discovery(s, err, quiet=True)  # one warning per column discovery lost
    err.print(f"wrote a privately discovered schema to {output}; 'synth --schema' adds its cost to its own ledger")


def check(
    input: Path = typer.Argument(..., help="The sensitive table (CSV or Parquet)."),
    schema: Optional[Path] = typer.Option(
        None, "--schema", "-s", help="The schema a release would use (YAML/JSON); without it, only the CSV's lines."
    ),
    examples: int = typer.Option(5, "--examples", min=0, help="Example values (with rows) to show per problem."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """NOT PRIVATE: list the lines of INPUT that are not well-formed CSV records and the values that SCHEMA does
    not hold, for the data owner.

    Names values, rows and exact counts: never publish its output. Exit 0 when every line and value fits, 2
    otherwise."""
    from privsample.data.schema import Schema
    from privsample.data.table import read_table
    from privsample.data.validate import KIND_TEXT, left_out, validate
    from privsample.errors import DataError
    from privsample.data.encoding import release_domain

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
    if sch is None:
        out.print(f"all {len(df):,} data rows of {input} are well-formed CSV records (pass --schema to check values)")
        return
    warn_unused_columns(err, df.columns, sch, input, schema)
    problems = validate(df, sch, examples=examples, release=rel)
    if not problems:
        out.print(f"all {len(df):,} rows of {input} fit {schema}")
        return
    t = Table(title=f"Values of {input.name} outside {schema.name} (NOT PRIVATE)")
    for col in ("column", "problem", "values", "release path", "examples (row: value)"):
        t.add_column(col, justify="right" if col == "values" else "left")
    for cp in problems:
        for kind, count in cp.counts.items():
            ex = ", ".join(f"{r}: {v}" for r, v in cp.examples.get(kind, []))
            t.add_row(cp.column, KIND_TEXT[kind], f"{count:,}", cp.actions[kind], ex)
    out.print(t)
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


def evaluate(
    real: Path = typer.Argument(..., help="The real table."),
    synthetic: Path = typer.Argument(..., help="The synthetic table."),
    schema: Optional[Path] = typer.Option(
        None,
        "--schema",
        "-s",
        help="The schema the synthesizer used (e.g. "
        "the one saved with the model): also score on its domain and show, per "
        "column, the share of real records it merges or clips.",
    ),
    workload: int = typer.Option(3, "--workload", "-w", min=1, max=5, help="Largest marginal order to score."),
    report: Optional[Path] = typer.Option(None, "--report", "-r", help="Write an HTML report here."),
    max_cliques: Optional[int] = typer.Option(
        None, "--max-cliques", help="Sample at most this many cliques per order."
    ),
    delimiter: Optional[str] = delimiter_option(
        "The REAL table's CSV delimiter (default: read off its header line; the synthetic table's is always detected)."
    ),
    encoding: Optional[str] = encoding_option(
        "The REAL table's CSV encoding when it has no byte-order mark "
        "(default UTF-8; the synthetic table's: its mark, else UTF-8)."
    ),
    model: Optional[Path] = typer.Option(
        None,
        "--model",
        help="The model SYNTHETIC was sampled from (saved by "
        "'synth --save-model'): show its method, ε, δ and privacy ledger beside "
        "the errors.",
    ),
    ledger: Optional[Path] = typer.Option(
        None,
        "--ledger",
        help="A privacy ledger (JSON: a model's model.json, "
        "or a ledger with 'summary' and 'entries') to show beside the errors.",
    ),
    where: Optional[str] = typer.Option(
        None,
        "--where",
        help="Score a subgroup: both tables filtered to the records that satisfy this condition (the syntax "
        "of 'sample --where', e.g. \"sex=Female; age=30..40\").",
    ),
    holdout: Optional[Path] = typer.Option(
        None,
        "--holdout",
        help="Records of the same population NOT used for training (REAL's columns): add an empirical privacy "
        "check (distance to closest record, membership-inference AUC, beside the baseline of releasing REAL). "
        "Evidence, not a guarantee.",
    ),
) -> None:
    """Workload error (mean L1 between normalised marginals) of SYNTHETIC against REAL.

    Scored on the real table's own values: synthetic values it lacks ("(other)", non-numbers) count as error.
    With --model or --ledger, the release's guarantee (method, ε, δ, ledger) is shown beside the errors.

    NOT PRIVATE: the scores and the report are exact statistics of the real table; do not release them."""
    if model is not None and ledger is not None:
        raise PrivsampleError("--model and --ledger both give the ledger: pass one of them")
    check_paths(
        {
            "REAL": real,
            "SYNTHETIC": synthetic,
            "--schema": schema,
            "--model": model,
            "--ledger": ledger,
            "--holdout": holdout,
        },
        {"-r/--report": report},
    )
    from privsample.evaluation.guarantee import load_guarantee

    load_guarantee(model, ledger)  # a bad model or ledger: one line, before anything else is printed
    if where is not None:
        from privsample.data.condition import Where

        Where.parse(where)  # bad syntax: one line, before anything is printed
    _evaluate(
        real,
        synthetic,
        schema,
        workload,
        report,
        max_cliques,
        model=model,
        ledger=ledger,
        delimiter=delimiter,
        encoding=encoding,
        where=where,
        holdout=holdout,
    )


def _evaluate(
    real: Path,
    synthetic: Path,
    schema_path,
    workload: int,
    report,
    max_cliques,
    *,
    model=None,
    ledger=None,
    title: str = "privsample evaluation",
    delimiter: str | None = None,
    encoding: str | None = None,
    where: str | None = None,
    holdout: Path | None = None,
) -> dict:
    """Print (and with ``report`` write) the workload error of SYNTHETIC against REAL; returns the headline
    summary ({k: {...}}, ``privsample.evaluation.workload.summary``) on the real table's own values.

    The scores are ``privsample.evaluate(...)``'s (the Python API's, one implementation): on a domain read off
    the real table, so that no value of the synthetic table makes it fail and no loss of the schema is hidden;
    with ``schema_path``, also the error on that schema's domain and the share of real records it merges or
    clips, per column; with ``model`` or ``ledger``, the release's guarantee and ledger."""
    import privsample.evaluation
    from privsample.evaluation.guarantee import guarantee_text
    from privsample.evaluation.report import NON_PRIVATE_NOTICE

    err.print(
        f"[bold]{NON_PRIVATE_NOTICE}[/bold] (evaluate compares with the real table exactly)",
        highlight=False,
        soft_wrap=True,
    )
    ev = privsample.evaluation.evaluate(
        real,
        synthetic,
        schema_path,
        model=model,
        ledger=ledger,
        workload=workload,
        max_cliques=max_cliques,
        delimiter=delimiter,
        encoding=encoding,
        where=where,
        holdout=holdout,
    )
    if where is not None:
        out.print(f"subgroup: {where} ({ev.n_real:,} real and {ev.n_synthetic:,} synthetic records)", markup=False)
    if ev.left_out:
        warn_unused_columns(err, ev.left_out, ev.scores.schema, real, schema_path)
    res, schema_res = ev.summary, ev.schema_summary
    t = Table(
        title=f"Workload error: {real.name} vs {synthetic.name} (mean L1 of normalised marginals, 0–2, "
        "on the real table's own values)"
    )
    t.add_column("order")
    t.add_column("cliques", justify="right")
    t.add_column("mean L1", justify="right")
    t.add_column("max L1", justify="right")
    if schema_res is not None:
        t.add_column(f"mean L1 on {Path(schema_path).name}'s domain", justify="right")
    for k, v in res.items():
        row = [f"{k}-way", str(v.get("n_cliques", "")), f"{v['mean']:.4f}", f"{v['max']:.4f}"]
        if schema_res is not None:
            row.append(f"{schema_res[k]['mean']:.4f}" if k in schema_res else "")
        t.add_row(*row)
    out.print(t)
    if ev.guarantee is not None:
        out.print(guarantee_text(ev.guarantee), highlight=False)
        print_ledger(ev.ledger, out)
    _print_losses(ev.scores, schema_path)
    if ev.privacy is not None:
        _print_privacy_check(ev.privacy)
    if report is not None:
        ev.to_html(report, title=title)
        err.print(f"wrote report {report}")
    return res


def _print_privacy_check(check) -> None:
    """The empirical privacy check beside its baseline (``privsample.evaluation.privacy_check``; NOT private)."""
    from privsample.evaluation.privacy_check import NOTICE

    t = Table(title="Empirical privacy check (evidence, not a guarantee; NOT private)")
    for h in ("released", "DCR to REAL: median, 5%", "DCR to HOLDOUT: median, 5%", "closer to REAL", "attack AUC"):
        t.add_column(h, justify="left" if h == "released" else "right")
    for name, r in (("synthetic", check.synthetic), ("baseline: REAL itself", check.baseline)):
        d = r.as_dict()
        t.add_row(
            name,
            f"{d['dcr_train_median']:.4f}, {d['dcr_train_p5']:.4f}",
            f"{d['dcr_holdout_median']:.4f}, {d['dcr_holdout_p5']:.4f}",
            f"{d['closer_to_train']:.3f}",
            f"{r.auc:.3f} ({r.auc_low:.3f}–{r.auc_high:.3f})",
        )
    out.print(t)
    out.print(
        f"{check.sizes}. Closer to REAL: share of released records nearer REAL than HOLDOUT (ties one half); attack "
        "AUC: telling REAL records from HOLDOUT ones by their distance to the release (95% CI, DeLong). The "
        f"baseline releases REAL itself. {NOTICE[0].upper()}{NOTICE[1:]}.",
        highlight=False,
    )


def _print_losses(ev, schema_path) -> None:
    """Per column: share of real records the schema merges or clips; share of synthetic records outside the
    real values (exact, non-private evaluation figures)."""
    loss = {c.column: c for c in ev.loss}
    rows = [(name, loss.get(name), ev.outside[name]) for name in ev.domain.names]
    rows = [r for r in rows if (r[1] is not None and r[1].lost > 0) or r[2] > 0]
    if not rows:
        out.print(
            "no column loses real values"
            + (f" to {Path(schema_path).name}" if schema_path else "")
            + " and no synthetic value lies outside the real values"
        )
        return
    title = "What is lost, per column (NOT private)"
    t = Table(title=title)
    t.add_column("column")
    if schema_path:
        t.add_column(f"real records merged by {Path(schema_path).name}", justify="right")
        t.add_column("real records clipped", justify="right")
    t.add_column("synthetic records outside the real values", justify="right")
    for name, cl, outside in rows:
        row = [name]
        if schema_path:
            row += [f"{cl.merged:.1%}" if cl else "", f"{cl.clipped:.1%}" if cl else ""]
        t.add_row(*row, f"{outside:.1%}")
    out.print(t)


def demo(
    output_dir: Path = typer.Option(Path("demo-output"), "-o", "--output-dir", help="Where to write the results."),
    epsilon: float = typer.Option(1.0, "--epsilon", "-e"),
    delta: float = typer.Option(1e-9, "--delta", "-d"),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise (experiments only)."),
    method: str = typer.Option("ppsyn", "--method", "-m", help="Synthesizer: ppsyn | aim | mst."),
) -> None:
    """Bundled UCI Adult: private schema discovery, PPSyn-DP (the default method) at ε=1, δ=1e-9,
    synthetic CSV, model and schema in OUTPUT_DIR/release/, ledger; the HTML report (exact, non-private
    statistics of the real data) apart in OUTPUT_DIR/not-for-release/."""
    from privsample.datasets import demo_path
    from privsample.api.synthesizer import synthesize
    from privsample.io import write_table

    warn_seeded(seed)
    src = demo_path()
    err.print(
        f"[bold]privsample demo[/bold]: {src.name} (UCI Adult, Becker & Kohavi 1996, CC BY 4.0), "
        f"{method} at ε={epsilon:g}, δ={delta:g}, schema discovered privately "
        "(share planned from a noisy row count)"
    )
    if method not in ("ppsyn", "aim", "mst"):
        raise PrivsampleError(f"demo --method must be ppsyn, aim or mst, not {method!r}")
    from privsample.data.encoding import RELEASE_RULE

    release, private_dir = output_dir / "release", output_dir / "not-for-release"
    synth_csv, sch_path, report = release / "adult_synthetic.csv", release / "schema.yaml", private_dir / "report.html"
    model_zip = release / "model.zip"
    check_paths(
        {"the bundled data": src},
        {f"OUTPUT_DIR/{p.parent.name}/{p.name}": p for p in (synth_csv, model_zip, sch_path, report)},
    )
    err.print(f"note: {RELEASE_RULE}", highlight=False)
    with RichProgress(err) as progress, no_loss_warnings():
        res = synthesize(src, epsilon=epsilon, delta=delta, method=method, seed=seed, progress=progress)
    print_discovery(res.schema, err, quiet=True)  # the losses of the discovered schema, as warnings
    write_table(res.table, synth_csv)
    res.model.save(model_zip)
    res.schema.save(sch_path)
    _evaluate(
        src,
        synth_csv,
        sch_path,
        3,
        report,
        None,
        model=model_zip,
        title=f"privsample demo: {method} on UCI Adult at ε={epsilon:g}, δ={delta:g}",
    )
    what = "what may be published" if seed is None else "seeded noise: NOT private, not for publication"
    err.print(
        f"demo finished. The release ({what}: synthetic CSV, model, schema) is in {release}/; the "
        f"evaluation report {report} contains non-private statistics of the real data: do not release it.",
        highlight=False,
    )
