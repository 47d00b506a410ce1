"""The user guide's examples run: every ```python block of every ``docs/*.md`` page and of the README, in order, one
namespace per page, in a temporary working directory; every ``privsample ...`` line of a ```bash block (in the
guide and the README) names a command that exists, with options that command has.

A block right after ``<!-- pending -->`` (an API being built) or ``<!-- no-run -->`` (needs a cluster, say) is
not run. The guide builds with ``mkdocs build --strict`` in ``make test`` (``scripts/dev.sh``); the docstrings'
own examples run in ``tests/test_api.py``.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
SKIP_MARKERS = ("<!-- pending -->", "<!-- no-run -->")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # 1-based line of the opening fence
    marker: str | None  # the skip marker right before the block, if any


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a markdown file (dedented to their fence), with the marker before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m["indent"], m["fence"], m["lang"].lower()
        prev = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        body, j = [], i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and lines[j].strip().strip(fence[0]) == ""
        ):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        out.append(Block(lang, textwrap.dedent("\n".join(body)) + "\n", i + 1, prev if prev in SKIP_MARKERS else None))
        i = j + 1
    return out


def test_pages_found():
    assert {p.name for p in PAGES} >= {"index.md", "getting-started.md", "cli.md", "python.md", "reference.md"}


# -- python blocks run -----------------------------------------------------------------------------------------
PY_PAGES = [p for p in [*PAGES, ROOT / "README.md"] if any(b.lang in ("python", "py") for b in blocks(p))]


@pytest.mark.filterwarnings("ignore:.*seeded NumPy noise")  # the guide shows seeded (NOT PRIVATE) runs on purpose
@pytest.mark.parametrize("page", PY_PAGES, ids=[p.name for p in PY_PAGES])
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    ran = 0
    for b in blocks(page):
        if b.lang not in ("python", "py") or b.marker:
            continue
        try:
            exec(compile(b.code, f"{page.name}:{b.line}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{page.name}, the python block at line {b.line} failed: {exc!r}") from exc
        ran += 1
    if not ran:
        pytest.skip(f"{page.name}: every python block is marked pending or no-run")


# -- bash blocks parse -----------------------------------------------------------------------------------------
def privsample_lines(path: Path) -> list[tuple[int, list[str]]]:
    """(line, argv) of every command line of a ```bash block that runs ``privsample`` (continuations joined)."""
    out = []
    for b in blocks(path):
        if b.lang not in ("bash", "sh", "shell", "console"):
            continue
        raw = b.code.splitlines()
        k = 0
        while k < len(raw):
            start, text = k, raw[k]
            while text.rstrip().endswith("\\") and k + 1 < len(raw):
                k += 1
                text = text.rstrip()[:-1] + " " + raw[k]
            k += 1
            text = text.strip().removeprefix("$ ")
            if not text.startswith("privsample"):
                continue
            argv = shlex.split(text, comments=True)
            if argv and argv[0] == "privsample":
                out.append((b.line + 1 + start, argv[1:]))
    return out


def _cli():
    import typer

    from privsample.cli.app import app

    return typer.main.get_command(app)


def check_argv(root, argv: list[str]) -> str | None:
    """None if ``argv`` names an existing (sub)command and only options it has, else what is wrong."""
    cmd, path = root, ["privsample"]
    args = list(argv)
    while hasattr(cmd, "commands"):  # a group: the next word is a subcommand
        if not args or args[0] in ("--help", "-h"):
            return None
        name = args.pop(0)
        if name not in cmd.commands:
            return f"'{' '.join(path)}' has no command '{name}' (commands: {', '.join(sorted(cmd.commands))})"
        cmd, path = cmd.commands[name], path + [name]
    opts = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))} | {"--help"}
    for a in args:
        if a == "--":
            break
        if re.match(r"^--?[A-Za-z]", a):
            name = a.split("=", 1)[0]
            if name not in opts:
                return f"'{' '.join(path)}' has no option '{name}'"
    return None


BASH_LINES = [(p, n, argv) for p in [*PAGES, ROOT / "README.md"] for n, argv in privsample_lines(p)]


def test_bash_examples_found():
    assert len(BASH_LINES) >= 20, "the guide's command-line examples were not found"


@pytest.mark.parametrize("page,line,argv", BASH_LINES, ids=[f"{p.name}:{n}" for p, n, _ in BASH_LINES])
def test_bash_command_exists(page, line, argv):
    problem = check_argv(_cli(), argv)
    assert problem is None, f"{page.name}:{line}: privsample {' '.join(argv)}: {problem}"


def test_checker_catches_mistakes():
    root = _cli()
    assert check_argv(root, ["synth", "in.csv", "-o", "out.csv", "--epsilon", "1"]) is None
    assert check_argv(root, ["cube", "sample", "in.csv", "--k", "5"]) is None
    assert check_argv(root, ["synthesize", "in.csv"]) is not None
    assert check_argv(root, ["draw", "ternary", "in.csv"]) is not None
    assert check_argv(root, ["synth", "in.csv", "--epsilonn", "1"]) is not None
    assert check_argv(root, ["sample", "m.zip", "--epsilon=1"]) is not None


def test_blocks_and_markers(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "Text\n\n<!-- pending -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
        "\n* item\n\n    ```bash\n    privsample synth a.csv \\\n        -o b.csv  # comment\n    ```\n",
        encoding="utf-8",
    )
    bs = blocks(md)
    assert [(b.lang, b.marker) for b in bs] == [("python", "<!-- pending -->"), ("python", None), ("bash", None)]
    assert privsample_lines(md) == [(15, ["synth", "a.csv", "-o", "b.csv"])]
