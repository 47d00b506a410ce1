"""What every command shares: the two consoles, the checks of output paths, the progress bar, the
privacy ledger table, the warning for seeded (non-private) noise, and the options of commands that read a
table (CSV delimiter and encoding) with the warning that names the columns a schema leaves out (column
names are public)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import ProgressColumn
from rich.table import Table
from rich.text import Text

err = Console(stderr=True)
out = Console()


def check_paths(inputs: dict, outputs: dict, folders: dict | None = None) -> None:
    """Before anything is read: no output on an input or another output, every output's folder writable;
    missing output folders are created, with one line each on stderr (``privsample.io.check_paths``)."""
    from privsample.io import check_paths as check

    check(inputs, outputs, folders=folders, note=lambda line: print(line, file=sys.stderr))


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

    Phases follow one another (``privsample.synth.base.Progress``): when a phase starts, the bars of the
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
        from privsample.synth.base import AtMost

        budget = ""
        if accountant is not None:
            budget = (
                f"ρ spent {accountant.spent:.4g} / {accountant.rho_total:.4g} (remaining {accountant.remaining:.4g})"
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


def _phase(label: str) -> str:
    """Group key of a ledger label: 'mst/2-way/a,b' -> 'mst/2-way';
    'schema: age: type counts' -> 'schema: type counts'."""
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
    pure = (
        bool(target)
        and target[1] == 0
        and all(e.get("details", {}).get("pure_epsilon") is not None for e in ledger["entries"])
    )
    t = Table(title="Privacy ledger (pure ε-DP)" if pure else "Privacy ledger (zCDP; ε at the target δ)")
    for col, just in (
        ("phase", "left"),
        ("steps", "right"),
        ("mechanism", "left"),
        ("ρ", "right"),
        ("noise scale", "right"),
        ("δ", "right"),
        ("cum. ε", "right"),
    ):
        t.add_column(col, justify=just)
    cum, dsum, cum_pure = 0.0, 0.0, 0.0
    for phase, es in groups.items():
        rho = sum(e["rho"] for e in es)
        cum += rho
        cum_pure += sum(e["details"]["pure_epsilon"] for e in es) if pure else 0.0
        dsum += sum(e.get("delta", 0.0) for e in es)
        scales = [e["noise_scale"] for e in es if e.get("noise_scale") is not None]
        sc = (
            ""
            if not scales
            else (
                f"{min(scales):.3g}"
                if max(scales) - min(scales) <= 1e-9 * max(scales)
                else f"{min(scales):.3g}–{max(scales):.3g}"
            )
        )
        ds = sum(e.get("delta", 0.0) for e in es)
        eps = cum_pure if pure else (cdp_epsilon(cum, max(delta - dsum, 1e-300)) if cum > 0 else 0.0)
        mechs = "/".join(sorted({e.get("mechanism", "").split(",")[0] for e in es}))
        t.add_row(phase, str(len(es)), mechs, f"{rho:.4g}", sc, f"{ds:.2g}" if ds else "", f"{eps:.4f}")
    console.print(t)
    console.print(
        f"Total ρ = {s['rho_spent']:.6g} of {s['rho_total']:.6g}"
        + (f", δ-slack {s['delta_spent']:.2g}" if s.get("delta_spent") else "")
        + (
            f" ⇒ pure {cum_pure:.4g}-DP"
            if pure
            else f" ⇒ ({s['epsilon_spent']:.4f}, {delta:g})-DP"
            if s.get("epsilon_spent") is not None
            else ""
        )
        + (f" (target ε={target[0]:g}, δ={target[1]:g})" if target else "")
        + f"; neighbours: {s.get('neighbouring', 'add/remove one record')}"
    )
    if not s.get("private", True):
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


def unused_columns(columns: Iterable, schema) -> list[str]:
    """The table's column names that ``schema`` does not list, in table order."""
    return [str(c) for c in columns if str(c) not in schema]


def warn_unused_columns(console, columns: Iterable, schema, table, schema_path) -> list[str]:
    """Print one warning naming the columns of ``table`` that ``schema`` leaves out; returns them."""
    left = unused_columns(columns, schema)
    if left:
        many = len(left) > 1
        console.print(
            f"[bold yellow]warning: column{'s' if many else ''} {', '.join(repr(c) for c in left)} of "
            f"{Path(table).name} {'are' if many else 'is'} not in {Path(schema_path).name} and "
            f"{'are' if many else 'is'} left out[/bold yellow]",
            highlight=False,
            soft_wrap=True,
        )
    return left


def warn_unused_file_columns(console, table, schema, schema_path, *, delimiter=None, encoding=None) -> list[str]:
    """``warn_unused_columns`` for a local table file, from its header alone (nothing when ``table`` is not a
    local file, e.g. a Spark URI: the engine reports its own problems)."""
    from privsample.data.table import DELIMITERS, table_columns
    from privsample.errors import InputError

    if not Path(table).is_file():
        return []
    names = table_columns(table, delimiter=delimiter, encoding=encoding)
    missing = [c for c in schema.names if c not in names]
    if missing:  # refused later anyway: say it now, with the likely cause
        held = [d for d in DELIMITERS if any(d in n for n in names)]
        hint = ""
        if held:
            hint = (
                f" (a column name of the header holds {'tab' if held[0] == chr(9) else repr(held[0])}: "
                "is --delimiter right?)"
            )
        raise InputError(
            f"{table}: column{'s' if len(missing) > 1 else ''} {', '.join(repr(c) for c in missing)} "
            f"of {Path(schema_path).name} {'are' if len(missing) > 1 else 'is'} not in the data{hint}"
        )
    return warn_unused_columns(console, names, schema, table, schema_path)
