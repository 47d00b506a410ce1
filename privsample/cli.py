"""Command line: ``privsample synth | sample | schema | check | evaluate | demo | cube sample|bounds``.

Exit codes: 0 success; 2 bad input or a refused request (budget, size), with a one-line message;
130 interrupted (Ctrl-C); 1 unexpected error. Output paths are checked before anything is read (never on
an input or another output, in a folder that can be written); outputs are written to a temporary file and
renamed when complete.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import ProgressColumn
from rich.table import Table
from rich.text import Text

from privsample.cli_draw import draw_app
from privsample.cli_mbde import register as register_mbde
from privsample.cli_options import (
    delimiter_option,
    encoding_option,
    warn_unused_columns,
    warn_unused_file_columns,
)
from privsample.errors import PrivsampleError

def _flags_show_no_type() -> None:
    """Help without a type after flags: typer's rich help panel (0.29) prints ``<bool>`` after every flag
    (--quiet, --help) as if it took a value; its plain help, and earlier versions, print nothing there."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "flags_show_no_type", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return shown(self, ctx)

    display_type_rich.flags_show_no_type = True
    TyperOption.display_type_rich = display_type_rich


_flags_show_no_type()
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Differentially private synthetic data and sampling.")
err = Console(stderr=True)
out = Console()


# -- shared helpers -------------------------------------------------------------------------------

def check_paths(inputs: dict, outputs: dict, folders: dict | None = None) -> None:
    """Before anything is read: no output on an input or another output, every output's folder writable;
    missing output folders are created, with one line each on stderr (``privsample.io.check_paths``)."""
    from privsample.io import check_paths as check

    check(inputs, outputs, folders=folders, note=lambda line: print(line, file=sys.stderr))


def model_folders(label: str, path: Path | None) -> dict:
    """``folders`` for :func:`check_paths` when ``path`` is a model written as a folder (not a .zip)."""
    from privsample.synth.model import FOLDER_FILES

    return {label: FOLDER_FILES} if path is not None and path.suffix.lower() != ".zip" else {}


def _warn_seeded(seed: Optional[int]) -> None:
    if seed is not None:
        err.print(f"[bold red]WARNING: --seed {seed} uses seeded NumPy noise. The output is NOT differentially "
                  "private (reproducible experiments only).[/bold red]")


class _RichProgress:
    """Progress bars, one per phase: label, step/total (``k/≤N`` when only a bound is known), elapsed time,
    the time left where the total is known, and the budget spent/remaining.

    Phases follow one another (``privsample.synth.base.Progress``): when a phase starts, the bars of the
    earlier ones are completed, so no finished phase is shown as running."""

    def __init__(self, console: Console, enabled: bool = True):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.enabled = enabled
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), _StepsColumn(),
                                 TimeElapsedColumn(), _TimeLeftColumn(), TextColumn("{task.fields[budget]}"),
                                 console=console, transient=False, disable=not enabled)
        self.tasks: dict[str, int] = {}
        self.current: str | None = None

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def _finish(self, stage: str) -> None:
        task = next(t for t in self.progress.tasks if t.id == self.tasks[stage])
        if not task.finished:
            done = int(task.completed)
            self.progress.update(task.id, total=max(done, 1), completed=max(done, 1), bound=False)
        self.progress.stop_task(task.id)

    def __call__(self, stage: str, *, step=None, steps=None, accountant=None, message: str = "") -> None:
        from privsample.synth.base import AtMost

        budget = ""
        if accountant is not None:
            budget = (f"ρ spent {accountant.spent:.4g} / {accountant.rho_total:.4g} "
                      f"(remaining {accountant.remaining:.4g})")
        if stage != self.current:
            if self.current is not None:
                self._finish(self.current)  # phases never interleave: the one before is over
            self.tasks[stage] = self.progress.add_task(stage, total=None, budget=budget, bound=False)
            self.current = stage
        tid = self.tasks[stage]
        desc = f"{stage}: {message}" if message else stage
        kw = {"description": desc[:60], "bound": isinstance(steps, AtMost)}
        if budget:
            kw["budget"] = budget
        if steps is not None and int(steps) == 0:  # a phase with nothing to do is done at once
            steps = step = 1
        if steps is not None:
            kw["total"] = int(steps)
        if step is not None:
            kw["completed"] = int(step)
        self.progress.update(tid, **kw)


class _StepsColumn(ProgressColumn):
    """``k/N``; ``k/≤N`` when N is only a bound; ``k/?`` when unknown."""

    def render(self, task):
        total = "?" if task.total is None else f"{'≤' if task.fields.get('bound') else ''}{int(task.total)}"
        return Text(f"{int(task.completed)}/{total}", style="progress.download")


class _TimeLeftColumn(ProgressColumn):
    """Estimated time left, only while the total is known exactly."""

    def render(self, task):
        if task.finished or task.total is None or task.fields.get("bound") or task.time_remaining is None:
            return Text("")
        m, sec = divmod(int(task.time_remaining), 60)
        h, m = divmod(m, 60)
        return Text(f"ETA {h}:{m:02d}:{sec:02d}", style="progress.remaining")


def _phase(label: str) -> str:
    """Group key of a ledger label: 'mst/2-way/a,b' -> 'mst/2-way'; 'schema: age: type counts' -> 'schema: type counts'."""
    if "/" in label:
        return label.rsplit("/", 1)[0]
    parts = label.split(": ", 2)  # the step may itself hold ': ' ('range refinement (not needed: too few records)')
    return f"{parts[0]}: {parts[2]}" if len(parts) == 3 else label


def print_ledger(ledger: dict, console: Console = out) -> None:
    """The privacy ledger, one row per phase, with cumulative epsilon-equivalents (full list: model.json)."""
    from privsample.privacy.conversion import cdp_epsilon

    s = ledger["summary"]
    target = s.get("target_epsilon_delta")
    delta = target[1] if target else 1e-9
    groups: dict[str, list[dict]] = {}
    for e in ledger["entries"]:
        groups.setdefault(_phase(e["label"]), []).append(e)
    # A pure-DP target (δ = 0) whose spends all carry their pure ε: pure ε composes by addition, and the
    # zCDP conversion at δ = 0 would be meaningless (it needs δ > 0).
    pure = bool(target) and target[1] == 0 and all(e.get("details", {}).get("pure_epsilon") is not None
                                                    for e in ledger["entries"])
    t = Table(title="Privacy ledger (pure ε-DP)" if pure else "Privacy ledger (zCDP; ε at the target δ)")
    for col, just in (("phase", "left"), ("steps", "right"), ("mechanism", "left"), ("ρ", "right"),
                      ("noise scale", "right"), ("δ", "right"), ("cum. ε", "right")):
        t.add_column(col, justify=just)
    cum, dsum, cum_pure = 0.0, 0.0, 0.0
    for phase, es in groups.items():
        rho = sum(e["rho"] for e in es)
        cum += rho
        cum_pure += sum(e["details"]["pure_epsilon"] for e in es) if pure else 0.0
        dsum += sum(e.get("delta", 0.0) for e in es)
        scales = [e["noise_scale"] for e in es if e.get("noise_scale") is not None]
        sc = "" if not scales else (f"{min(scales):.3g}" if max(scales) - min(scales) <= 1e-9 * max(scales)
                                     else f"{min(scales):.3g}–{max(scales):.3g}")
        ds = sum(e.get("delta", 0.0) for e in es)
        eps = cum_pure if pure else (cdp_epsilon(cum, max(delta - dsum, 1e-300)) if cum > 0 else 0.0)
        mechs = "/".join(sorted({e.get("mechanism", "").split(",")[0] for e in es}))
        t.add_row(phase, str(len(es)), mechs, f"{rho:.4g}", sc, f"{ds:.2g}" if ds else "", f"{eps:.4f}")
    console.print(t)
    console.print(f"Total ρ = {s['rho_spent']:.6g} of {s['rho_total']:.6g}"
                  + (f", δ-slack {s['delta_spent']:.2g}" if s.get("delta_spent") else "")
                  + (f" ⇒ pure {cum_pure:.4g}-DP" if pure else
                     f" ⇒ ({s['epsilon_spent']:.4f}, {delta:g})-DP" if s.get("epsilon_spent") is not None else "")
                  + (f" (target ε={target[0]:g}, δ={target[1]:g})" if target else "")
                  + f"; neighbours: {s.get('neighbouring', 'add/remove one record')}")
    if not s.get("private", True):
        console.print("[bold red]NOT PRIVATE: seeded noise was used (reproducible experiment only).[/bold red]")


def print_discovery(schema, console: Console = err, quiet: bool = False) -> None:
    """Per column, what private discovery kept (post-processing of its noisy output), and a warning naming
    the columns left with only the catch-all."""
    from privsample.data.discovery_report import (
        collapsed_columns,
        discovery_rows,
        min_category_records,
    )

    if not quiet:
        t = Table(title="Privately discovered schema (saved with the model)")
        for col, just in (("column", "left"), ("kind", "left"), ("kept", "left"), ("in catch-all (noisy)", "right")):
            t.add_column(col, justify=just)
        for r in discovery_rows(schema):
            t.add_row(r.column, r.kind, r.kept, "" if r.catch_all_share is None else f"{r.catch_all_share:.0%}")
        console.print(t)
    lost = collapsed_columns(schema)
    if lost:
        need = min_category_records(schema)
        console.print(f"[bold yellow]warning: {', '.join(lost)}: no category was frequent enough to be released at "
                      f"this ε{f' (a category needs about {need:,.0f} records)' if need else ''}; "
                      f"{'these columns hold' if len(lost) > 1 else 'this column holds'} only '(other)'. A reviewed "
                      "schema (--schema) or a larger --epsilon keeps them.[/bold yellow]")


# -- commands -------------------------------------------------------------------------------------

def parse_workload(text: str) -> list[tuple[tuple[str, ...], float]]:
    """'a,b;c,d' -> [(('a','b'), 1.0), (('c','d'), 1.0)]."""
    out = []
    for part in text.split(";"):
        cols = tuple(c.strip() for c in part.split(",") if c.strip())
        if cols:
            out.append((cols, 1.0))
    if not out:
        raise PrivsampleError(f"--workload '{text}' names no cliques")
    return out


def method_options(method: str, *, max_memory_mb: float, iters=None, workload=None, max_model_size=None, eta=None,
                   schedule=None, unsafe_as_published: bool = False) -> dict:
    """Keyword options for ``make_synthesizer`` from CLI flags; refuses unsafe/unsupported combinations."""
    if method == "ppsyn-paper" and not unsafe_as_published:
        raise PrivsampleError("--method ppsyn-paper runs the published PPSyn, which is NOT differentially private; "
                              "add --unsafe-as-published to run it for reproduction only")
    opts: dict = {"max_memory_mb": max_memory_mb}
    if iters is not None:
        opts["iters"] = iters
    if method in ("aim", "ppsyn", "ppsyn-paper"):
        if workload is not None:
            opts["workload"] = parse_workload(workload)
        if max_model_size is not None:
            opts["max_model_size"] = max_model_size
    elif workload is not None or max_model_size is not None:
        raise PrivsampleError(f"--workload/--max-model-size apply to aim and ppsyn, not {method}")
    if schedule is not None:
        if method != "ppsyn":
            raise PrivsampleError(f"--schedule applies to ppsyn, not {method}")
        opts["schedule"] = schedule
    if eta is not None:
        if method != "ppsyn-paper" and not (method == "ppsyn" and schedule == "note"):
            raise PrivsampleError("--eta sets the budget rule of 'ppsyn --schedule note' and of ppsyn-paper; "
                                  f"{method}{' (annealed schedule)' if method == 'ppsyn' else ''} does not use it")
        opts["eta"] = eta
    return opts


@app.command()
def synth(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Synthetic table to write (CSV, or .parquet)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy budget ε (> 0)."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy parameter δ in (0, 1)."),
    method: str = typer.Option("ppsyn", "--method", "-m", help="Synthesizer: ppsyn | aim | mst "
                               "(ppsyn-paper, the NON-PRIVATE published algorithm, needs --unsafe-as-published)."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Public schema (YAML/JSON). Without it, "
                                          "the domain is discovered privately with a share of the budget (5-50%) "
                                          "planned from a noisy row count."),
    rows: Optional[int] = typer.Option(None, "--rows", "-n", help="Rows to generate (default: the noisy row count; "
                                       "required when that count is above 10^8, or above 10^6 with a noise sd "
                                       "over 10% of it). Written in chunks: any number that fits on disk."),
    save_model: Optional[Path] = typer.Option(None, "--save-model", help="Save the fitted model (dir or .zip)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise for reproducible experiments."),
    clip: bool = typer.Option(False, "--clip", hidden=True, help="Kept for compatibility: clipping is always on."),
    other: bool = typer.Option(False, "--other", help="Give every categorical column of a reviewed schema an "
                               "'(other)' catch-all for unknown categories (default: records with one are left out)."),
    engine: str = typer.Option("auto", "--engine", help="Marginal engine: numpy (in memory), duckdb (out of core, "
                               "needs --schema), spark (needs --schema) or auto: numpy when the file is smaller than "
                               "1/40 (Parquet, .csv.gz) or 1/20 (CSV) of the available memory, else duckdb."),
    spark_master: str = typer.Option("local[2]", "--spark-master", help="Spark master URL for --engine spark "
                                     "(local[N], spark://host:7077, k8s://..., yarn)."),
    iters: Optional[int] = typer.Option(None, "--iters", help="Private-PGM estimation iterations."),
    max_memory_mb: float = typer.Option(8192.0, "--max-memory-mb", help="Refuse models estimated above this size."),
    workload: Optional[str] = typer.Option(None, "--workload", help="AIM/PPSyn workload: cliques separated by ';', "
                                           "columns by ',' (e.g. 'age,sex;race,income'). Default: all k-way."),
    max_model_size: Optional[float] = typer.Option(
        None, "--max-model-size", help="AIM/PPSyn model-size limit (MB; default AIM 80, PPSyn-DP 0.5, paper mode 80)."),
    schedule: Optional[str] = typer.Option(None, "--schedule", help="PPSyn-DP budget schedule: annealed "
                                           "(default) or note (notes §4.3: noisy contribution and the η rule)."),
    eta: Optional[float] = typer.Option(None, "--eta", help="PPSyn target error ratio η in (0, 1] "
                                        "(--schedule note and ppsyn-paper)."),
    unsafe_as_published: bool = typer.Option(False, "--unsafe-as-published", help="Allow --method ppsyn-paper: "
                                              "the published PPSyn, which is NOT differentially private."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or ledger."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """Fit a DP synthesizer on INPUT and write a synthetic table."""
    from privsample.data.table import check_delimiter, check_encoding
    from privsample.pipeline import check_budget, check_output_size, synthesize
    from privsample.synth.model import check_rows

    check_budget(epsilon, delta)
    delimiter, encoding = check_delimiter(delimiter), check_encoding(encoding)
    if rows is not None:
        check_rows(rows)
    _warn_seeded(seed)
    opts = method_options(method, max_memory_mb=max_memory_mb, iters=iters, workload=workload,
                          max_model_size=max_model_size, eta=eta, schedule=schedule,
                          unsafe_as_published=unsafe_as_published)
    check_paths({"INPUT": input, "--schema": schema}, {"-o/--output": output, "--save-model": save_model},
                model_folders("--save-model", save_model))
    if schema is not None:  # header and schema only (public): before any work
        from privsample.data.schema import Schema
        from privsample.pipeline import check_schema_usable

        sch = Schema.load(schema)
        check_schema_usable(sch)
        warn_unused_file_columns(err, input, sch, schema, delimiter=delimiter, encoding=encoding)
    if not quiet:
        from privsample.pipeline import RELEASE_RULE

        err.print(f"note: {RELEASE_RULE}", highlight=False)
    with _RichProgress(err, enabled=not quiet) as progress:
        res = synthesize(input, epsilon=epsilon, delta=delta, method=method, schema=schema, rows=rows, seed=seed,
                         clip=clip, other=other, engine=engine, spark_master=spark_master, method_options=opts,
                         progress=progress, delimiter=delimiter, encoding=encoding, sample=False)
    n = res.model.resolve_rows(rows)  # the default: the noisy row count, unless it is mostly noise
    check_output_size(res.model, n, output)
    if save_model is not None:
        res.model.save(save_model)
    # streamed in chunks: memory does not grow with --rows (up to one chunk, the same rows as sampling at once)
    written = _write_sample(res.model, n, seed, output, quiet)
    if not quiet:
        print_ledger(res.accountant.to_dict(), err)
    if schema is None:  # discovered in this run: what it kept (noisy or public figures only)
        print_discovery(res.schema, err, quiet=quiet)
    err.print(f"wrote {written:,} synthetic rows to {output}"  # no run time: it depends on the data
              + (f" and the model to {save_model}" if save_model else ""))


def _write_sample(model, rows: int, seed, output: Path, quiet: bool) -> int:
    """Sample ``rows`` rows from ``model`` and write them to ``output`` in chunks (bounded memory); a
    progress bar when there is more than one chunk."""
    import numpy as np

    from privsample.pipeline import write_chunks

    chunks = model.sample_chunks(rows, np.random.default_rng(seed))
    if quiet or rows <= model.chunk_rows:
        return write_chunks(chunks, output)
    with _RichProgress(err) as progress:
        return write_chunks(chunks, output, on_chunk=lambda done: progress("sample and write rows", step=done,
                                                                            steps=rows, message=output.name))


@app.command()
def sample(
    model: Path = typer.Argument(..., help="A model saved by 'synth --save-model'."),
    output: Path = typer.Option(..., "-o", "--output", help="Synthetic table to write."),
    rows: Optional[int] = typer.Option(None, "--rows", "-n", help="Rows (default: the model's noisy row count, "
                                       "with the limits of 'synth --rows'). Written in chunks: any number that "
                                       "fits on disk."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed for sampling (post-processing; no privacy cost)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary line (warnings are still shown)."),
) -> None:
    """Draw more synthetic rows from a saved model (no privacy cost)."""
    from privsample.pipeline import check_output_size
    from privsample.synth.model import SynthModel, check_rows

    if rows is not None:
        check_rows(rows)
    check_paths({"MODEL": model}, {"-o/--output": output})
    m = SynthModel.load(model)
    n = m.resolve_rows(rows)
    check_output_size(m, n, output)
    if not m.private:
        err.print("[bold red]NOTE: this model was fitted with seeded or unsafe settings: NOT PRIVATE.[/bold red]")
    written = _write_sample(m, n, seed, output, quiet=quiet)  # in chunks: bounded memory
    if not quiet:
        err.print(f"wrote {written:,} rows to {output} (sampling costs no privacy budget)")


@app.command()
def schema(
    input: Path = typer.Argument(..., help="Table to describe (CSV or Parquet)."),
    output: Path = typer.Option(..., "-o", "--output", help="Schema file to write (.yaml or .json)."),
    private_epsilon: Optional[float] = typer.Option(None, "--private-epsilon", help="Discover the schema with "
                                                    "(ε, δ)-DP instead of reading it off the data."),
    delta: float = typer.Option(1e-9, "--delta", help="δ for private discovery (thresholded category release)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """Draft a schema: non-private (review it!) or private with --private-epsilon."""
    from privsample.data.discovery import draft_schema, private_schema
    from privsample.data.table import read_table
    from privsample.pipeline import (
        DISCOVERY_BINS,
        DISCOVERY_MAX_CATEGORIES,
        check_budget,
    )
    from privsample.privacy import Accountant, make_noise

    check_paths({"INPUT": input}, {"-o/--output": output})
    # Private discovery is a release under add/remove neighbours: an empty table is not refused.
    df = read_table(input, allow_empty=private_epsilon is not None, delimiter=delimiter, encoding=encoding)
    if private_epsilon is None:
        s = draft_schema(df)
        s.save(output)
        err.print("[bold yellow]NON-PRIVATE DRAFT: categories and bounds were read directly from the data. Review "
                  f"and edit {output} (drop rare categories, use public bounds), then set 'provenance: user'. "
                  "It carries no privacy guarantee.[/bold yellow]")
        return
    check_budget(private_epsilon, delta)
    _warn_seeded(seed)
    acc = Accountant.from_epsilon_delta(private_epsilon, delta, delta_slack=delta / 2)
    s = private_schema(df, acc, make_noise(seed, quiet=True), rho=acc.rho_total, delta=delta / 2,
                       bins=DISCOVERY_BINS, max_categories=DISCOVERY_MAX_CATEGORIES)
    s.ledger = acc.to_dict()
    s.provenance = "private"
    s.save(output)
    print_ledger(acc.to_dict(), err)
    err.print(f"wrote a privately discovered schema to {output}; 'synth --schema' adds its cost to its own ledger")


@app.command()
def check(
    input: Path = typer.Argument(..., help="The sensitive table (CSV or Parquet)."),
    schema: Path = typer.Option(..., "--schema", "-s", help="The schema a release would use (YAML/JSON)."),
    examples: int = typer.Option(5, "--examples", min=0, help="Example values (with rows) to show per problem."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """NOT PRIVATE: list the values of INPUT that SCHEMA does not hold, for the data owner.

    Names values, rows and exact counts: never publish its output. Exit 0 when every value fits, 2 otherwise."""
    from privsample.data.schema import Schema
    from privsample.data.table import read_table
    from privsample.data.validate import KIND_TEXT, left_out, validate
    from privsample.pipeline import release_domain

    sch = Schema.load(schema)
    rel = release_domain(sch, other=False)
    df = read_table(input, na_values=sch.na_values, allow_empty=True, delimiter=delimiter, encoding=encoding)
    err.print("[bold yellow]NOT PRIVATE: this check names values, rows and exact counts of the data. It is for "
              "the data owner; do not release its output.[/bold yellow]")
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
    raise PrivsampleError(f"{sum(cp.total for cp in problems):,} value(s) in {len(problems)} column(s) are outside "
                          f"the schema; a release would leave out {dropped:,} of {len(df):,} rows (NOT PRIVATE)")


@app.command()
def evaluate(
    real: Path = typer.Argument(..., help="The real table."),
    synthetic: Path = typer.Argument(..., help="The synthetic table."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="The schema the synthesizer used (e.g. "
                                          "the one saved with the model): also score on its domain and show, per "
                                          "column, the share of real records it merges or clips."),
    workload: int = typer.Option(3, "--workload", "-w", min=1, max=5, help="Largest marginal order to score."),
    report: Optional[Path] = typer.Option(None, "--report", "-r", help="Write an HTML report here."),
    max_cliques: Optional[int] = typer.Option(None, "--max-cliques", help="Sample at most this many cliques per order."),
    delimiter: Optional[str] = delimiter_option("The REAL table's CSV delimiter (default: read off its header line; "
                                                "the synthetic table's is always detected)."),
    encoding: Optional[str] = encoding_option("The REAL table's CSV encoding when it has no byte-order mark "
                                              "(default UTF-8; the synthetic table's: its mark, else UTF-8)."),
    model: Optional[Path] = typer.Option(None, "--model", help="The model SYNTHETIC was sampled from (saved by "
                                         "'synth --save-model'): show its method, ε, δ and privacy ledger beside "
                                         "the errors."),
    ledger: Optional[Path] = typer.Option(None, "--ledger", help="A privacy ledger (JSON: a model's model.json, "
                                          "or a ledger with 'summary' and 'entries') to show beside the errors."),
) -> None:
    """Workload error (mean L1 between normalised marginals) of SYNTHETIC against REAL.

    Scored on the real table's own values: synthetic values it lacks ("(other)", non-numbers) count as error.
    With --model or --ledger, the release's guarantee (method, ε, δ, ledger) is shown beside the errors.

    NOT PRIVATE: the scores and the report are exact statistics of the real table; do not release them."""
    if model is not None and ledger is not None:
        raise PrivsampleError("--model and --ledger both give the ledger: pass one of them")
    check_paths({"REAL": real, "SYNTHETIC": synthetic, "--schema": schema, "--model": model, "--ledger": ledger},
                {"-r/--report": report})
    led, guarantee = load_guarantee(model, ledger)
    _evaluate(real, synthetic, schema, workload, report, max_cliques, ledger=led, guarantee=guarantee,
              delimiter=delimiter, encoding=encoding)


def load_guarantee(model: Path | None, ledger: Path | None) -> tuple[dict | None, dict | None]:
    """(ledger, guarantee) read from a saved model or a ledger file; (None, None) without either.

    ``guarantee``: source, method, the target ε and δ, the ε spent and whether the noise was secure."""
    import json

    from privsample.privacy.accountant import Accountant

    if model is None and ledger is None:
        return None, None
    source = model if model is not None else ledger
    method = None
    if model is not None:
        from privsample.synth.model import SynthModel

        meta = SynthModel.read_meta(model)
        led, method = meta.get("ledger"), meta.get("mechanism")
        params = meta.get("params") or {}
    else:
        try:
            doc = json.loads(Path(ledger).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PrivsampleError(f"ledger not found: {ledger}") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise PrivsampleError(f"cannot read ledger {ledger}: {type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        if isinstance(doc, dict) and isinstance(doc.get("ledger"), dict):  # a model's model.json
            led, method, params = doc["ledger"], doc.get("mechanism"), doc.get("params") or {}
        else:
            led, params = doc, {}
    try:
        acc = Accountant.from_dict(led)
    except Exception:  # noqa: BLE001 - any malformed ledger is bad input
        raise PrivsampleError(f"{source} holds no valid privacy ledger (expected 'summary' with rho_total and "
                              "'entries')") from None
    s = led["summary"]
    target = s.get("target_epsilon_delta")
    eps, dlt = (target[0], target[1]) if target else (params.get("epsilon"), params.get("delta"))
    private = bool(s.get("private", True)) and acc.private and not params.get("unsafe", False)
    guarantee = {"source": str(source), "method": method or "not recorded in the ledger", "epsilon": eps,
                 "delta": dlt, "epsilon_spent": acc.epsilon_spent(dlt if dlt is not None else None),
                 "rho_spent": acc.spent, "rho_total": acc.rho_total,
                 "neighbouring": s.get("neighbouring", "add/remove one record"), "private": private}
    return led, guarantee


def guarantee_text(g: dict) -> str:
    """One line: the release's method and (ε, δ) guarantee, or that it carries none."""
    eps = "ε not recorded" if g["epsilon"] is None else f"ε={g['epsilon']:g}"
    dlt = "" if g["delta"] is None else f", δ={g['delta']:g}"
    head = f"release guarantee ({Path(g['source']).name}): {g['method']}, target {eps}{dlt}"
    if not g["private"]:
        return head + "; NOT PRIVATE: seeded or unsafe settings were used"
    return head + f"; spent ε={g['epsilon_spent']:.4g} ({g['neighbouring']})"


def _evaluate(real: Path, synthetic: Path, schema_path, workload: int, report, max_cliques, ledger=None,
              title: str = "privsample evaluation", guarantee: dict | None = None, delimiter: str | None = None,
              encoding: str | None = None) -> dict:
    """Print (and with ``report`` write) the workload error of SYNTHETIC against REAL; returns the headline
    summary ({k: {...}}, ``privsample.evaluate.workload.summary``) on the real table's own values.

    Scores on a domain read off the real table (``privsample.evaluate.tables``), so that no value of the
    synthetic table makes it fail and no loss of the schema is hidden; with ``schema_path``, also the
    error on that schema's domain and the share of real records it merges or clips, per column."""
    from privsample.data.schema import Schema
    from privsample.data.table import read_table
    from privsample.evaluate.report import NON_PRIVATE_NOTICE
    from privsample.evaluate.tables import evaluate_tables

    err.print(f"[bold]{NON_PRIVATE_NOTICE}[/bold] (evaluate compares with the real table exactly)",
              highlight=False, soft_wrap=True)
    sch = Schema.load(schema_path) if schema_path else None
    rdf = read_table(real, delimiter=delimiter, encoding=encoding, **({"na_values": sch.na_values} if sch else {}))
    sdf = read_table(synthetic, **({"na_values": sch.na_values} if sch else {}))
    if sch is not None:
        warn_unused_columns(err, rdf.columns, sch, real, schema_path)
    ev = evaluate_tables(rdf, sdf, sch, ks=tuple(range(1, workload + 1)), max_cliques=max_cliques, rng=0,
                         synthetic_name=str(synthetic))
    res = ev.summary
    t = Table(title=f"Workload error: {real.name} vs {synthetic.name} (mean L1 of normalised marginals, 0–2, "
                    "on the real table's own values)")
    t.add_column("order")
    t.add_column("cliques", justify="right")
    t.add_column("mean L1", justify="right")
    t.add_column("max L1", justify="right")
    if ev.schema_summary is not None:
        t.add_column(f"mean L1 on {Path(schema_path).name}'s domain", justify="right")
    for k, v in res.items():
        row = [f"{k}-way", str(v.get("n_cliques", "")), f"{v['mean']:.4f}", f"{v['max']:.4f}"]
        if ev.schema_summary is not None:
            row.append(f"{ev.schema_summary[k]['mean']:.4f}" if k in ev.schema_summary else "")
        t.add_row(*row)
    out.print(t)
    if guarantee is not None:
        out.print(guarantee_text(guarantee), highlight=False)
        print_ledger(ledger, out)
    _print_losses(ev, schema_path)
    if report is not None:
        from privsample.evaluate.report import write_report

        write_report(report, ev.real_engine, ev.synth_engine, ev.domain, title=title, ledger=ledger, evaluation=ev,
                     schema_name=Path(schema_path).name if schema_path else None, guarantee=guarantee)
        err.print(f"wrote report {report}")
    return res


def _print_losses(ev, schema_path) -> None:
    """Per column: share of real records the schema merges or clips; share of synthetic records outside the
    real values (exact, non-private evaluation figures)."""
    loss = {c.column: c for c in ev.loss}
    rows = [(name, loss.get(name), ev.outside[name]) for name in ev.domain.names]
    rows = [r for r in rows if (r[1] is not None and r[1].lost > 0) or r[2] > 0]
    if not rows:
        out.print("no column loses real values"
                  + (f" to {Path(schema_path).name}" if schema_path else "")
                  + " and no synthetic value lies outside the real values")
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


@app.command()
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
    from privsample.pipeline import synthesize, write_table

    _warn_seeded(seed)
    src = demo_path()
    err.print(f"[bold]privsample demo[/bold]: {src.name} (UCI Adult, Becker & Kohavi 1996, CC BY 4.0), "
              f"{method} at ε={epsilon:g}, δ={delta:g}, schema discovered privately "
              "(share planned from a noisy row count)")
    if method not in ("ppsyn", "aim", "mst"):
        raise PrivsampleError(f"demo --method must be ppsyn, aim or mst, not {method!r}")
    from privsample.pipeline import RELEASE_RULE

    release, private_dir = output_dir / "release", output_dir / "not-for-release"
    synth_csv, sch_path, report = release / "adult_synthetic.csv", release / "schema.yaml", private_dir / "report.html"
    model_zip = release / "model.zip"
    check_paths({"the bundled data": src}, {f"OUTPUT_DIR/{p.parent.name}/{p.name}": p
                                            for p in (synth_csv, model_zip, sch_path, report)})
    err.print(f"note: {RELEASE_RULE}", highlight=False)
    with _RichProgress(err) as progress:
        res = synthesize(src, epsilon=epsilon, delta=delta, method=method, seed=seed, progress=progress)
    write_table(res.table, synth_csv)
    res.model.save(model_zip)
    res.schema.save(sch_path)
    led, guarantee = load_guarantee(release / "model.zip", None)
    _evaluate(src, synth_csv, sch_path, 3, report, None, ledger=led, guarantee=guarantee,
              title=f"privsample demo: {method} on UCI Adult at ε={epsilon:g}, δ={delta:g}")
    what = "what may be published" if seed is None else "seeded noise: NOT private, not for publication"
    err.print(f"demo finished. The release ({what}: synthetic CSV, model, schema) is in {release}/; the "
              f"evaluation report {report} contains non-private statistics of the real data: do not release it.",
              highlight=False)


# -- private sampling on the Boolean cube (Boedihardjo, Strohmer & Vershynin) ---------------------
cube_app = typer.Typer(no_args_is_help=True, help="Noise-free private sampling on the Boolean cube (BSV).")
app.add_typer(cube_app, name="cube")
app.add_typer(draw_app, name="draw")  # DP samplers from distributions (privsample/cli_draw.py)
register_mbde(app)  # MBDE, integral privacy (privsample/cli_mbde.py)


@cube_app.command("sample")
def cube_sample(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet): binary 0/1 columns, or any with --schema."),
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
) -> None:
    """Release k points drawn from BSV's noise-free private density, if Thm 12.2 certifies --epsilon.

    Pure ε-DP for replace-one neighbours with n public: the output, messages and ledger hold the draws and
    public parameters only (never λ* or solver numbers). Values are read by a fixed per-record rule, printed
    whatever the data; a draft or privately discovered schema is refused."""
    import numpy as np

    from privsample.cube.pipeline import (
        decode_table,
        load_for_cube,
        reading_rule,
    )
    from privsample.cube.sampler import NEIGHBOURING, BooleanCubeSampler
    from privsample.pipeline import write_table
    from privsample.privacy import Accountant, make_noise

    if not (epsilon > 0 and epsilon < float("inf")):
        raise PrivsampleError(f"--epsilon must be > 0 and finite (got {epsilon})")
    _warn_seeded(seed)
    sampler = BooleanCubeSampler(degree=degree, m=m, delta=delta, Delta=big_delta, invalid=invalid)
    check_paths({"INPUT": input, "--schema": schema}, {"-o/--output": output})
    eng, enc, sch = load_for_cube(input, schema, delimiter=delimiter, encoding=encoding)
    if schema is not None:  # header and schema only (public)
        warn_unused_file_columns(err, input, sch, schema, delimiter=delimiter, encoding=encoding)
    acc = Accountant(epsilon ** 2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    rng = np.random.default_rng(seed)
    rel = sampler.sample(eng, enc, k, acc, make_noise(seed, quiet=True), epsilon=epsilon, rng=rng)
    write_table(decode_table(rel.codes, sch, rng), output)
    err.print(reading_rule(schema is not None), soft_wrap=True)  # every release: never says whether it fired
    print_ledger(acc.to_dict(), err)
    # The count and valid fraction are functions of the released draws and the public encoding only.
    err.print(f"released {len(rel.codes[sch.names[0]]):,} points to {output}: certified pure ε = {rel.epsilon:.4g} "
              f"(replace-one, n public; p={rel.info['p']}, d={degree}, m={rel.info['m']}); "
              f"{rel.valid_fraction:.1%} were valid codes ({invalid} for the rest)")


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

    check_paths({}, {"--figure": figure})
    if n is not None or p is not None or m is not None:
        if None in (n, p, m):
            raise PrivsampleError("--n, --p and --m go together")
        cb.check_parameters(delta, big_delta)
        eps = cb.certified_epsilon(n, p, degree, m, delta, big_delta, k)
        out.print(f"certified pure ε for k={k}, n={n}, p={p}, d={degree}, m={m}, δ={delta}, Δ={big_delta}: {eps:.6g}")
        return
    typer.echo(cb.bounds_report())  # plain text: wide tables must not be re-wrapped
    if figure is not None:
        cb.plot_figure1(figure)
        err.print(f"wrote {figure}")


def _click_exception() -> type:
    """Click's usage-error base class: from ``click`` if installed, else the copy typer >= 0.29 bundles."""
    try:
        from click import ClickException
    except ImportError:
        from typer._click.exceptions import ClickException
    return ClickException


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors with exit code 2 for bad input; 1 for bugs."""
    import warnings

    warnings.filterwarnings("ignore", message=".*seeded NumPy noise.*")
    from privsample.io import written

    done = len(written())
    try:
        code = app(args=argv, standalone_mode=False)
    except KeyboardInterrupt:
        _interrupted(written()[done:])
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # click < 8.2 turns Ctrl-C into Abort
            _interrupted(written()[done:])
        err.print("aborted")
        sys.exit(1)
    except PrivsampleError as exc:
        print("error: " + " ".join(str(exc).split()), file=sys.stderr)  # exactly one line
        sys.exit(2)
    except (typer.Exit, SystemExit) as exc:
        code = getattr(exc, "exit_code", getattr(exc, "code", 0))
        sys.exit(code if isinstance(code, int) else 0)
    except Exception as exc:  # click usage errors carry their own exit code
        if isinstance(exc, _click_exception()):
            exc.show()
            sys.exit(exc.exit_code)
        if os.environ.get("PRIVSAMPLE_DEBUG"):
            raise
        print(f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
              "(set PRIVSAMPLE_DEBUG=1 for a traceback)", file=sys.stderr)
        sys.exit(1)
    if isinstance(code, int) and code:  # without standalone mode, typer returns an exit code instead of exiting
        if code == INTERRUPTED_EXIT:  # typer's code for Ctrl-C (KeyboardInterrupt)
            _interrupted(written()[done:])
        sys.exit(code)


INTERRUPTED_EXIT = 130  # 128 + SIGINT, as shells report a process stopped by Ctrl-C


def _interrupted(done: list) -> None:
    """Ctrl-C: one line, exit 130. Outputs are renamed into place only when complete, so the only files
    written are those finished before the interrupt (named)."""
    what = "nothing written" if not done else "only wrote " + ", ".join(str(p) for p in done)
    print(f"interrupted; {what}", file=sys.stderr)
    sys.exit(INTERRUPTED_EXIT)


if __name__ == "__main__":
    main()
