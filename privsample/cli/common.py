"""What every command shares: the two consoles, the checks of output paths, the progress bar, the
privacy ledger table, the warning for seeded (non-private) noise, the options of commands that read a
table (CSV delimiter and encoding) with the warning that names the columns a schema leaves out (column
names are public), and the report of what private schema discovery kept."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from collections.abc import Iterable
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import ProgressColumn
from rich.table import Table
from rich.text import Text

from privsample.privacy.ledger import PHASE_HEADER, Ledger
from privsample.privacy.released import released

err = Console(stderr=True)
out = Console()


def check_paths(inputs: dict, outputs: dict, folders: dict | None = None, tables: tuple[str, ...] = ()) -> None:
    """Before anything is read: no output on an input or another output, every output's folder writable, the
    outputs named in ``tables`` written in a format a writer serves; missing output folders are created, with one
    line each on stderr (``privsample.io.check_paths``)."""
    from privsample.io import check_paths as check

    check(inputs, outputs, folders=folders, tables=tables, note=lambda line: print(line, file=sys.stderr))


def path_checks(inputs: dict, outputs: dict, folders: dict | None = None, tables: tuple[str, ...] = ()) -> dict:
    """``check_paths``'s checks as arguments, for a front end that hands them to the API's one validation
    (``privsample.api.run.check_request``'s ``paths``)."""
    return {
        "inputs": inputs,
        "outputs": outputs,
        "folders": folders,
        "tables": tables,
        "note": lambda line: print(line, file=sys.stderr),
    }


def model_folders(label: str, path: Path | None) -> dict:
    """``folders`` for :func:`check_paths` when ``path`` is a model written as a folder (not a .zip)."""
    from privsample.synth.model import FOLDER_FILES

    return {label: FOLDER_FILES} if path is not None and path.suffix.lower() != ".zip" else {}


def warn_seeded(seed: Optional[int]) -> None:
    """One red line on stderr when --seed is given: seeded noise is not private."""
    if seed is not None:
        err.print(
            f"[bold red]WARNING: --seed {seed} uses seeded NumPy noise. The output is NOT differentially "
            "private (reproducible experiments only).[/bold red]"
        )


class RichProgress:
    """Progress bars, one per phase: label, step/total (``k/≤N`` when only a bound is known), elapsed time,
    the time left where the total is known, and the budget spent/remaining.

    Phases follow one another (``privsample.progress.Progress``): when a phase starts, the bars of the
    earlier ones are completed, so no finished phase is shown as running."""

    def __init__(self, console: Console, enabled: bool = True):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.enabled = enabled
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            _StepsColumn(),
            TimeElapsedColumn(),
            _TimeLeftColumn(),
            TextColumn("{task.fields[budget]}"),
            console=console,
            transient=False,
            disable=not enabled,
        )
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
        from privsample.progress import AtMost

        budget = ""
        if accountant is not None:
            budget = (  # spent and remaining follow the run's noisy decisions (privsample.privacy.released)
                f"ρ spent {released(accountant.spent, '.4g')} / {released(accountant.rho_total, '.4g')} "
                f"(remaining {released(accountant.remaining, '.4g')})"
            )
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


def print_ledger(ledger: dict, console: Console = out) -> None:
    """The privacy ledger, one row per phase, with cumulative epsilon-equivalents (full list: model.json)."""
    led = ledger if isinstance(ledger, Ledger) else Ledger(ledger)
    t = Table(title=led.title())
    for col in PHASE_HEADER:
        t.add_column(col, justify="left" if col in ("phase", "mechanism") else "right")
    for row in led.phase_table():
        t.add_row(*row)
    console.print(t)
    console.print(led.total_line() + f"; neighbours: {led.summary.get('neighbouring', 'add/remove one record')}")
    for line in led.public_lines():
        console.print(line, highlight=False, soft_wrap=True)
    if not led.summary.get("private", True):
        console.print("[bold red]NOT PRIVATE: seeded noise was used (reproducible experiment only).[/bold red]")


# -- options of the commands that read a table -------------------------------------------------------
DELIMITER_HELP = (
    "CSV delimiter: ',', ';', tab or '|' (or any one character). Default: read off the header line; "
    "a header that splits on several is refused."
)
ENCODING_HELP = (
    "CSV encoding when the file has no byte-order mark (which decides: UTF-8, UTF-16), e.g. latin-1, "
    "cp1252. Default: UTF-8."
)


def delimiter_option(help: str = DELIMITER_HELP):
    return typer.Option(None, "--delimiter", help=help)


def encoding_option(help: str = ENCODING_HELP):
    return typer.Option(None, "--encoding", help=help)


def warn_unused_columns(console, columns: Iterable, schema, table, schema_path) -> list[str]:
    """Print one warning naming the columns of ``table`` that ``schema`` leaves out; returns them."""
    from privsample.checks import left_out_note

    left = [str(c) for c in columns if str(c) not in schema]
    if left:
        note = left_out_note(left, table, Path(schema_path).name)
        console.print(f"[bold yellow]warning: {note}[/bold yellow]", highlight=False, soft_wrap=True)
    return left


def warn_unused_file_columns(console, table, schema, schema_path, *, delimiter=None, encoding=None) -> list[str]:
    """``warn_unused_columns`` for a local table file, from its header alone (nothing when ``table`` is not a
    local file, e.g. a Spark URI: the engine reports its own problems); ``InputError`` when the schema names a
    column the header lacks (``privsample.checks.check_columns``)."""
    from privsample.checks import check_columns, cli_option
    from privsample.data.table import table_columns
    from privsample.data.csv_layout import DELIMITERS

    if not Path(table).is_file():
        return []
    header = table_columns(table, delimiter=delimiter, encoding=encoding)
    left = check_columns(table, header, schema.names, Path(schema_path).name, cli_option, DELIMITERS)
    return warn_unused_columns(console, left, schema, table, schema_path)


# -- the privacy budget file shared by the release commands ------------------------------------------
BUDGET_HELP = (
    "Privacy budget file ('privsample budget init'): this run's whole budget is charged to it before the data "
    "are read, or the run is refused (exit 2) when the file's total would be exceeded. Env: PRIVSAMPLE_BUDGET_FILE."
)


def budget_option():
    return typer.Option(None, "--budget-file", envvar="PRIVSAMPLE_BUDGET_FILE", help=BUDGET_HELP)


def budget_spending(budget_file: Optional[Path], seed: Optional[int], charge, source, outputs: Iterable):
    """A context that charges ``charge()`` (a dict for ``Budget.reserve``) to ``budget_file`` for the whole
    run, recording the output names and the fingerprint of ``source``; does nothing without a file."""
    from contextlib import nullcontext

    if budget_file is None:
        return nullcontext()
    from privsample.api.accounting import charging
    from privsample.privacy.budget import Budget, refuse_seeded

    budget = Budget.open(budget_file)
    refuse_seeded(budget, seed)
    return charging(budget, charge(), source, ", ".join(str(p) for p in outputs if p is not None))


# -- what private discovery kept, shared by the commands that discover a schema --------------------------
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
    """Within: ``DiscoveryLossWarning`` and ``FreeTextWarning`` are not emitted (the command prints the losses
    itself, ``print_discovery``, and the dropped columns, ``print_dropped``)."""
    import warnings

    from privsample.errors import DiscoveryLossWarning, FreeTextWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiscoveryLossWarning)
        warnings.simplefilter("ignore", FreeTextWarning)
        yield


def print_dropped(schema, console: Console = err) -> None:
    """One warning line per free-text column of ``schema``, which the output leaves out (``dropped_columns``)."""
    from rich.markup import escape

    from privsample.data.discovery_report import dropped_columns

    for line in dropped_columns(schema):
        console.print(f"[bold yellow]warning: {escape(line)}[/bold yellow]", highlight=False, soft_wrap=True)


@contextmanager
def shown_warnings(console: Console = err):
    """Within: each ``ColumnsLeftOutWarning`` (columns a reviewed schema leaves out) and ``IdentifierFormatWarning``
    (a widened identifier format) is printed at once as one warning line, a ``SeededNoiseWarning`` (seeded noise:
    NOT private) once, in red; other warnings as Python shows them."""
    import warnings

    from rich.markup import escape

    from privsample.errors import (
        ColumnsLeftOutWarning,
        ContributionBoundWarning,
        IdentifierFormatWarning,
        PrivacyUnitHint,
        SeededNoiseWarning,
    )

    shown = (ColumnsLeftOutWarning, IdentifierFormatWarning, ContributionBoundWarning, PrivacyUnitHint)
    with warnings.catch_warnings():  # restores ``showwarning`` and the filters on leaving
        previous = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, SeededNoiseWarning):
                console.print(f"[bold red]WARNING: {escape(str(message))}[/bold red]", highlight=False, soft_wrap=True)
            elif issubclass(category, shown):
                console.print(
                    f"[bold yellow]warning: {escape(str(message))}[/bold yellow]", highlight=False, soft_wrap=True
                )
            else:
                previous(message, category, filename, lineno, file, line)

        for category in shown:
            warnings.simplefilter("always", category)
        warnings.simplefilter("once", SeededNoiseWarning)
        warnings.showwarning = show
        yield
