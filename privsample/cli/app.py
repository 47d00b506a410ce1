"""The ``privsample`` Typer app, assembled from the command modules, and its entry point :func:`main`.

Exit codes: 0 success; 2 bad input or a refused request (budget, size), with a one-line message;
130 interrupted (Ctrl-C); 1 unexpected error. Output paths are checked before anything is read (never on
an input or another output, in a folder that can be written); outputs are written to a temporary file and
renamed when complete.
"""

from __future__ import annotations

import os
import sys

import typer

from privsample.cli import budget, cube, draw, evaluate, mbde, schema, synth
from privsample.cli.plan import plan
from privsample.cli.common import err
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
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Differentially private synthetic data and sampling.",
)
for command in (synth.synth, synth.sample, schema.schema, schema.check, evaluate.evaluate, evaluate.demo):
    app.command()(command)
app.command("mbde")(mbde.mbde)  # MBDE, integral privacy
app.command("plan")(plan)  # a forecast before the first spend (reads no record)
app.add_typer(cube.cube_app, name="cube")  # private sampling on the Boolean cube
app.add_typer(draw.draw_app, name="draw")  # DP samplers from distributions
app.add_typer(budget.budget_app, name="budget")  # privacy budget files across releases


def _click_exceptions() -> tuple[type, ...]:
    """Click's usage-error base classes: the copy typer >= 0.29 bundles (which it raises even when ``click`` is
    installed, e.g. by MkDocs) and ``click``'s own, for older typers that use it."""
    found: list[type] = []
    try:
        from typer._click.exceptions import ClickException as Bundled

        found.append(Bundled)
    except ImportError:
        pass
    try:
        from click import ClickException

        found.append(ClickException)
    except ImportError:
        pass
    return tuple(found)


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
        if isinstance(exc, _click_exceptions()):
            exc.show()
            sys.exit(exc.exit_code)
        if os.environ.get("PRIVSAMPLE_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(set PRIVSAMPLE_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
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
