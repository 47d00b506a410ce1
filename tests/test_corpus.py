"""Hostile-input corpus: every CLI command that reads a table, on every file of ``tests/corpus/make_corpus.py``.

Each run must end in exit 0 with an output table holding the expected columns, or in exit 2 with exactly one
``error: ...`` line on stderr (its last line); never a traceback, never exit 1, never a partial or leftover
output file, and the input files are byte for byte the same afterwards. Entries that a correct reader must
read (``Entry.must_read``) must give exit 0 for the commands that take any table (synth, schema, evaluate).
The output cases put the output on the input, under a regular file, or in a directory without write permission.

Commands run in-process through ``privsample.cli.main`` (fast), with seeded noise, MST with few iterations
and a handful of rows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from privsample.cli import main

sys.path.insert(0, str(Path(__file__).parent / "corpus"))
from make_corpus import Entry, make_corpus  # noqa: E402

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False

COMMANDS = [
    "synth",
    "synth-schema",
    "synth-draft-schema",
    "schema",
    "schema-private",
    "check",
    "evaluate",
    "draw-kary",
    "draw-bernoulli",
    "draw-product",
    "cube-sample",
    "mbde",
]
# commands that accept any readable table (synth without a schema may refuse: private discovery of a small table
# can keep nothing, a noisy and accounted decision)
ANY_TABLE = {"synth-schema", "schema", "schema-private", "evaluate"}
OUTPUT_CASES = ["output-is-input", "output-under-a-file", "output-in-read-only-dir"]
OUTPUT_COMMANDS = ["synth-schema", "schema", "evaluate", "draw-kary", "cube-sample", "mbde"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    entries = make_corpus(d)
    yield d, entries
    (d / "unreadable.csv").chmod(0o644)


def _hashes(directory: Path) -> dict[str, str]:
    out = {}
    for p in sorted(directory.rglob("*")):
        if p.is_file():
            try:
                out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
            except PermissionError:
                st = p.stat()
                out[p.name] = f"unreadable {st.st_size} {st.st_mtime_ns}"
    return out


def _run(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def _schema_for(entry: Entry | None, d: Path, numeric_only: bool = False) -> Path:
    """A reviewed schema for the entry's columns (numeric ones with public bounds), or for the basic table."""
    cols = entry.columns if entry is not None and entry.columns else ["colour", "size", "flag"]
    num = set(entry.numeric if entry is not None and entry.columns else ["size", "flag"])
    spec = []
    for c in cols:
        if c in num:
            spec.append({"name": c, "type": "numeric", "lower": 0, "upper": 10})
        elif not numeric_only:
            spec.append({"name": c, "type": "categorical", "categories": ["red", "green", "blue", "x"]})
    if not spec:  # mbde needs a numeric column: a schema for one the table does not have (refused, exit 2)
        spec = [{"name": "not_in_the_table", "type": "numeric", "lower": 0, "upper": 1}]
    path = d / ("schema_num.yaml" if numeric_only else "schema.yaml")
    path.write_text(yaml.safe_dump({"provenance": "user", "columns": spec}, allow_unicode=True))
    return path


def _argv(
    command: str, src: Path, out: Path, entry: Entry | None, aux: Path, output_case: bool = False
) -> tuple[list, list[str] | None]:
    """(argv, the columns its output table must have) for ``command`` on ``src`` writing ``out``."""
    cols = entry.columns if entry is not None else None
    first = cols[0] if cols else "colour"
    if command.startswith("synth"):
        schema = []
        if command == "synth-schema":
            schema = ["--schema", _schema_for(entry, aux), "--other"]
        elif command == "synth-draft-schema":
            schema = ["--schema", _draft_schema(src, aux)]
        return [
            "synth",
            src,
            "-o",
            out,
            "-e",
            1,
            "--method",
            "mst",
            "--iters",
            20,
            "--seed",
            0,
            "--rows",
            20,
            "-q",
            *schema,
        ], cols
    if command == "schema":
        return ["schema", src, "-o", out], cols
    if command == "schema-private":
        return ["schema", src, "-o", out, "--private-epsilon", 1, "--seed", 0], cols
    if command == "check":
        return ["check", src, "--schema", _schema_for(entry, aux)], None
    if command == "evaluate":  # the (slow) HTML report only where the output path is the point
        report = ["--report", out] if output_case else []
        return ["evaluate", src, src, "-w", 2, "--max-cliques", 20, *report], None
    if command == "draw-kary":
        return ["draw", "kary", src, "--column", first, "-o", out, "-e", 1, "--seed", 0, "--skip-accuracy-check"], [
            first
        ]
    if command in ("draw-bernoulli", "draw-product"):
        return ["draw", command.split("-")[1], src, "-o", out, "-e", 1, "--seed", 0, "--skip-accuracy-check"], cols
    if command == "cube-sample":
        return ["cube", "sample", src, "-o", out, "-e", 1, "--k", 2, "--degree", 1, "--seed", 0], cols
    if command == "mbde":
        num = entry.numeric[:1] if entry is not None and entry.numeric else ["not_in_the_table"]
        return [
            "mbde",
            src,
            "--schema",
            _schema_for(entry, aux, numeric_only=True),
            "--columns",
            num[0],
            "-e",
            1,
            "-m",
            2,
            "-o",
            out,
            "--epochs",
            2,
            "--rounds",
            1,
            "--hidden",
            4,
            "--seed",
            0,
        ], num
    raise AssertionError(command)


def _draft_schema(src: Path, aux: Path) -> Path:
    """The draft 'privsample schema' writes for ``src``, marked reviewed as a data owner would after reading it;
    a schema for other columns if the draft cannot be made (then synth refuses: the table does not fit)."""
    path = aux / "draft.yaml"
    try:
        main(["schema", str(src), "-o", str(path)])
    except SystemExit:
        pass
    if not path.exists():
        return _schema_for(None, aux)
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["provenance"] = "user"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    return path


def _out_name(command: str) -> str:
    return {"schema": "schema.yaml", "schema-private": "schema.yaml", "evaluate": "report.html"}.get(command, "out.csv")


def _output_columns(path: Path, command: str) -> list[str] | None:
    if command.startswith("schema"):
        return [c["name"] for c in yaml.safe_load(path.read_text(encoding="utf-8"))["columns"]]
    if command == "evaluate":
        return None
    return [str(c) for c in pd.read_csv(path, nrows=5).columns]


def _check(code: int, text: str, command: str, out: Path, expected: list[str] | None, outdir: Path) -> None:
    assert "Traceback" not in text and "internal error" not in text, text
    assert code in (0, 2), f"exit {code}: {text}"
    leftovers = sorted(p.name for p in outdir.iterdir() if p != out)
    assert not leftovers, f"files left beside the output: {leftovers}"
    if code == 2:
        errors = [ln for ln in text.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and text.strip().splitlines()[-1] == errors[0], text
        if command != "check":  # check prints what it found, then refuses
            assert not out.exists(), "an output was written although the command failed"
        return
    if command not in ("check", "evaluate"):  # evaluate writes its report in the output cases only
        assert out.is_file(), "exit 0 but no output"
        if expected is not None:
            assert _output_columns(out, command) == expected


def _cases():
    names = [e.name for e in make_corpus_names()]
    for name in names:
        for command in COMMANDS:
            marks = []
            if name == "unreadable.csv" and ROOT:
                marks.append(pytest.mark.skip(reason="root reads any file"))
            yield pytest.param(name, command, id=f"{command}-{name}", marks=marks)
    for case in OUTPUT_CASES:
        for command in OUTPUT_COMMANDS:
            marks = []
            if case == "output-in-read-only-dir" and ROOT:
                marks.append(pytest.mark.skip(reason="root writes in any directory"))
            yield pytest.param(case, command, id=f"{command}-{case}", marks=marks)


def make_corpus_names() -> list[Entry]:
    """The corpus entries (names and expectations only), made once in a scratch directory at collection."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        entries = list(make_corpus(d).values())
        (Path(d) / "unreadable.csv").chmod(0o644)
    return entries


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("name", "command"), list(_cases()))
def test_corpus(corpus, name, command, tmp_path, capsys):
    d, entries = corpus
    outdir = tmp_path / "out"
    outdir.mkdir()
    aux = tmp_path / "aux"
    aux.mkdir()
    if name in entries:
        entry, src = entries[name], d / name
        out = outdir / _out_name(command)
        watched = d
    else:  # an output case, on a copy of the plain table
        entry = entries["comma.csv"]
        src = outdir / "comma.csv"
        shutil.copy(d / "comma.csv", src)
        watched = outdir
        if name == "output-is-input":
            out = src
        elif name == "output-under-a-file":
            out = src / _out_name(command)
        else:
            ro = outdir / "read-only"
            ro.mkdir()
            ro.chmod(0o555)
            out = ro / _out_name(command)
    argv, expected = _argv(command, src, out, entry, aux, output_case=name not in entries)
    before = _hashes(watched)
    try:
        code, text = _run(argv, capsys)
    finally:
        if name == "output-in-read-only-dir":
            (outdir / "read-only").chmod(0o755)
    assert _hashes(watched) == before, "an input file was changed"
    if name in entries:
        _check(code, text, command, out, expected, outdir)
        if entry.must_read and command in ANY_TABLE:
            assert code == 0, text
    else:
        assert "Traceback" not in text and "internal error" not in text, text
        assert code == 2, text
        errors = [ln for ln in text.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and text.strip().splitlines()[-1] == errors[0], text
        assert sorted(p.name for p in outdir.rglob("*") if p.is_file()) == ["comma.csv"]
