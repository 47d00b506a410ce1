"""Output paths on the command line: never on an input or another output (links count), never in a folder that
cannot be written, missing folders created with a note; all refused before anything is read. Ctrl-C: exit 130,
one line, nothing partial. Help shows no type after flags; ``sample -q``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from privsample.errors import InputError
from privsample.io import check_paths
from tests.cli import run
from tests.test_cli import FAST, small_schema, small_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path):
    """data.csv, schema.yaml (a reviewed schema of it), bits.csv (0/1 columns), num.yaml (numeric bounds),
    m.zip (bytes standing for a model), syn.csv (a second table)."""
    small_table().to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(small_schema()))
    pd.DataFrame({"a": [0, 1] * 50, "b": [1, 1, 0, 0] * 25}).to_csv(tmp_path / "bits.csv", index=False)
    (tmp_path / "num.yaml").write_text(
        yaml.safe_dump(
            {"provenance": "user", "columns": [{"name": "size", "type": "numeric", "lower": 0, "upper": 10}]}
        )
    )
    (tmp_path / "m.zip").write_bytes(b"stands for a model")
    small_table(seed=1).to_csv(tmp_path / "syn.csv", index=False)
    return tmp_path


def _contents(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_symlink()}


@pytest.fixture
def nothing_read(monkeypatch):
    """Any read of a table or a model fails the test: the checks come first."""
    import privsample.data.table
    import privsample.synth.model

    def refuse(*a, **k):
        raise AssertionError("read before the output paths were checked")

    monkeypatch.setattr(privsample.data.table, "read_table", refuse)
    monkeypatch.setattr(privsample.synth.model.SynthModel, "load", classmethod(refuse))


E = ["--epsilon", 1]
CLASHES = [  # (argv with {d} for the folder, the two option names the message must give)
    (["synth", "{d}/data.csv", "-o", "{d}/data.csv", *E], ("INPUT", "-o/--output")),
    (["synth", "{d}/data.csv", "-o", "{d}/./sub/../data.csv", *E], ("INPUT", "-o/--output")),
    (
        [
            "synth",
            "{d}/data.csv",
            "-o",
            "{d}/s.csv",
            "--schema",
            "{d}/schema.yaml",
            "--save-model",
            "{d}/schema.yaml",
            *E,
        ],
        ("--schema", "--save-model"),
    ),
    (
        ["synth", "{d}/data.csv", "-o", "{d}/out.zip", "--save-model", "{d}/out.zip", *E],
        ("-o/--output", "--save-model"),
    ),
    (
        ["synth", "{d}/data.csv", "-o", "{d}/schema.yaml", "--schema", "{d}/schema.yaml", *E],
        ("--schema", "-o/--output"),
    ),
    (["synth", "{d}/data.csv", "-o", "{d}/s.csv", "--save-model", "{d}/data.csv", *E], ("INPUT", "--save-model")),
    (["sample", "{d}/m.zip", "-o", "{d}/m.zip"], ("MODEL", "-o/--output")),
    (["schema", "{d}/data.csv", "-o", "{d}/data.csv"], ("INPUT", "-o/--output")),
    (["evaluate", "{d}/data.csv", "{d}/syn.csv", "--report", "{d}/data.csv"], ("REAL", "-r/--report")),
    (["evaluate", "{d}/data.csv", "{d}/syn.csv", "--report", "{d}/syn.csv"], ("SYNTHETIC", "-r/--report")),
    (
        ["evaluate", "{d}/data.csv", "{d}/syn.csv", "-s", "{d}/schema.yaml", "-r", "{d}/schema.yaml"],
        ("--schema", "-r/--report"),
    ),
    (
        ["draw", "kary", "{d}/data.csv", "-c", "color", "--categories", "red,green,blue", "-o", "{d}/data.csv", *E],
        ("INPUT", "-o/--output"),
    ),
    (["draw", "bernoulli", "{d}/bits.csv", "-o", "{d}/bits.csv", *E], ("INPUT", "-o/--output")),
    (["draw", "product", "{d}/bits.csv", "-o", "{d}/bits.csv", *E], ("INPUT", "-o/--output")),
    (
        ["mbde", "{d}/data.csv", "-s", "{d}/num.yaml", "-c", "size", "-m", 5, "-o", "{d}/data.csv", *E],
        ("INPUT", "-o/--output"),
    ),
    (
        ["mbde", "{d}/data.csv", "-s", "{d}/num.yaml", "-c", "size", "-m", 5, "-o", "{d}/num.yaml", *E],
        ("--schema", "-o/--output"),
    ),
    (["cube", "sample", "{d}/bits.csv", "-o", "{d}/bits.csv", "--k", 2, *E], ("INPUT", "-o/--output")),
    (
        ["cube", "sample", "{d}/data.csv", "-s", "{d}/schema.yaml", "-o", "{d}/schema.yaml", "--k", 2, *E],
        ("--schema", "-o/--output"),
    ),
]


@pytest.mark.parametrize("argv,names", CLASHES, ids=[" ".join(map(str, a[:2])) + f" {n[0]}={n[1]}" for a, n in CLASHES])
def test_an_output_on_an_input_or_another_output_is_refused_before_reading(files, argv, names, capsys, nothing_read):
    before = _contents(files)
    code, text = run([str(a).format(d=files) for a in argv], capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1, text
    assert lines[0].startswith("error: ") and "same file" in lines[0]
    assert all(n in lines[0] for n in names), lines[0]
    assert _contents(files) == before  # nothing overwritten, nothing added


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_links_count_as_the_same_file(files, link, capsys, nothing_read):
    data = files / "data.csv"
    alias = files / "alias.csv"
    (os.symlink if link == "symbolic" else os.link)(data, alias)
    before = data.read_bytes()
    for argv in (["synth", data, "-o", alias, "--epsilon", 1], ["schema", alias, "-o", data]):
        code, text = run(argv, capsys)
        assert code == 2 and "same file" in text and len(text.strip().splitlines()) == 1, text
    assert data.read_bytes() == before and (alias.is_symlink() or alias.stat().st_nlink == 2)


def test_an_output_under_a_regular_file_is_refused(files, capsys, nothing_read):
    blocker = files / "data.csv"
    for argv in (
        ["synth", blocker, "-o", blocker / "s.csv", "--epsilon", 1],
        ["sample", files / "m.zip", "-o", blocker / "x" / "s.csv"],
        ["evaluate", blocker, files / "syn.csv", "--report", blocker / "r.html"],
        ["cube", "bounds", "--figure", blocker / "f.png"],
        ["demo", "-o", blocker],
    ):
        code, text = run(argv, capsys)
        lines = text.strip().splitlines()
        assert code == 2 and lines[-1].startswith("error: cannot create the output folder"), text
        assert "is a file, not a folder" in lines[-1]
    assert blocker.is_file()


def test_an_output_that_is_a_folder_is_refused(files, capsys, nothing_read):
    (files / "out").mkdir()
    code, text = run(["schema", files / "data.csv", "-o", files / "out"], capsys)
    assert code == 2 and "-o/--output" in text and "is a folder" in text, text


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder where no file can be created (mode bits for an ordinary user; /proc for root)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    for folder in (ro, Path("/proc")):
        try:
            (folder / ".probe").write_text("")
        except OSError:
            return folder
        (folder / ".probe").unlink()
    pytest.skip("no folder here refuses to be written")


def test_an_unwritable_output_folder_is_refused_before_reading(files, capsys, nothing_read):
    folder = _unwritable_folder(files)
    try:
        for argv in (
            ["synth", files / "data.csv", "-o", folder / "s.csv", "--epsilon", 1],
            ["synth", files / "data.csv", "-o", files / "s.csv", "--save-model", folder / "m", "--epsilon", 1],
            ["sample", files / "m.zip", "-o", folder / "sub" / "s.csv"],
        ):
            code, text = run(argv, capsys)
            lines = text.strip().splitlines()
            assert code == 2 and len(lines) == 1 and "not writable" in lines[0], text
        assert not (files / "s.csv").exists()
    finally:
        (files / "ro").chmod(0o700)


def test_a_missing_output_folder_is_created_with_a_note(files, capsys):
    out = files / "new" / "sub" / "s.yaml"
    code, text = run(["schema", files / "data.csv", "-o", out], capsys)
    assert code == 0, text
    assert out.is_file()
    notes = [line for line in text.splitlines() if line.startswith("created the folder")]
    assert notes == [f"created the folder {out.parent} for -o/--output"]


def test_save_model_does_not_replace_a_folder_of_other_files(files, capsys, nothing_read):
    folder = files / "results"
    folder.mkdir()
    (folder / "keep.txt").write_text("precious")
    code, text = run(
        ["synth", files / "data.csv", "-o", files / "s.csv", "--save-model", folder, "--epsilon", 1], capsys
    )
    assert code == 2 and "--save-model" in text and "keep.txt" in text, text
    assert (folder / "keep.txt").read_text() == "precious"
    # an input inside the folder that would be replaced
    code, text = run(
        ["synth", files / "data.csv", "-o", files / "s.csv", "--save-model", files, "--epsilon", 1], capsys
    )
    assert code == 2 and "lies inside the folder --save-model" in text, text


def test_check_paths_unit(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("x")
    check_paths({"IN": a}, {"OUT": b})  # fine: distinct, the folder exists and is writable
    check_paths({"IN": a, "OTHER": a}, {"OUT": None})  # two inputs may be one file; None is not given
    with pytest.raises(InputError, match="IN and OUT are the same file"):
        check_paths({"IN": a}, {"OUT": tmp_path / "x" / ".." / "a.csv"})
    with pytest.raises(InputError, match="O1 and O2 are the same file"):
        check_paths({}, {"O1": b, "O2": b})
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.json").write_text("{}")
    check_paths({"IN": a}, {"M": model}, folders={"M": ("model.json", "arrays.npz")})  # a previous model: replaced
    with pytest.raises(InputError, match="lies inside the folder M"):
        check_paths({"IN": a}, {"M": model, "OUT": model / "s.csv"}, folders={"M": ("model.json", "arrays.npz")})
    notes: list[str] = []
    check_paths(
        {}, {"OUT": tmp_path / "n1" / "n2" / "o.csv", "OUT2": tmp_path / "n1" / "n2" / "p.csv"}, note=notes.append
    )
    assert notes == [f"created the folder {tmp_path / 'n1' / 'n2'} for OUT"] and (tmp_path / "n1" / "n2").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "model", "n1"]  # the write probe is gone


# -- Ctrl-C --------------------------------------------------------------------------------------------


def _interrupting_write(monkeypatch):
    """write_table that has written part of its temporary file when Ctrl-C arrives."""
    import privsample.io
    from privsample.io import atomic_path

    def write_table(df, path, *args, **kwargs):
        with atomic_path(path) as tmp:
            tmp.write_text("partial")
            raise KeyboardInterrupt

    monkeypatch.setattr(privsample.io, "write_table", write_table)
    monkeypatch.setattr(privsample.io, "write_chunks", write_table)  # synth and sample stream their rows


def test_ctrl_c_while_writing_exits_130_and_leaves_nothing(files, capsys, monkeypatch):
    _interrupting_write(monkeypatch)
    before = set(os.listdir(files))
    code, text = run(
        ["synth", files / "data.csv", "-o", files / "s.csv", "--epsilon", 2, "--schema", files / "schema.yaml", *FAST],
        capsys,
    )
    assert code == 130 and text.strip().splitlines()[-1] == "interrupted; nothing written", text
    assert set(os.listdir(files)) == before  # no output, no temporary file


def test_ctrl_c_after_one_output_names_it(files, capsys, monkeypatch):
    _interrupting_write(monkeypatch)
    model = files / "model.zip"
    code, text = run(
        [
            "synth",
            files / "data.csv",
            "-o",
            files / "s.csv",
            "--epsilon",
            2,
            "--schema",
            files / "schema.yaml",
            "--save-model",
            model,
            *FAST,
        ],
        capsys,
    )
    assert code == 130 and text.strip().splitlines()[-1] == f"interrupted; only wrote {model}", text
    assert model.is_file() and not (files / "s.csv").exists()


@pytest.mark.slow
def test_sigint_during_synth_exits_130_with_one_line_and_no_file(tmp_path):
    """A real SIGINT to ``python -m privsample.cli synth`` while it fits the bundled Adult table."""
    from privsample.datasets import demo_path

    out, model = tmp_path / "s.csv", tmp_path / "m.zip"
    # Python's own Ctrl-C handler, even where the test runner was started with SIGINT ignored (a background job)
    start = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from privsample.cli import main; main()"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            start,
            "synth",
            str(demo_path()),
            "-o",
            str(out),
            "--save-model",
            str(model),
            "--epsilon",
            "3",
            "--method",
            "aim",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    seen = []
    for line in proc.stderr:  # the fit starts after this line
        seen.append(line)
        if line.startswith("note:"):
            break
    time.sleep(1)  # into the fit (AIM at epsilon 3 on Adult: 20 s or more)
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=300)[1]
    lines = (("".join(seen)) + rest).strip().splitlines()
    assert proc.returncode == 130, lines[-5:]
    assert lines[-1] == "interrupted; nothing written"
    assert "Traceback" not in rest and os.listdir(tmp_path) == []


# -- help and -q ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["synth"], ["sample"], ["draw", "kary"], ["cube", "sample"], []])
def test_help_shows_no_type_after_flags(command, capsys):
    """Flags (--quiet, --other, --help) take no value: the help must not print a type such as <bool> after them."""
    code, _ = run([*command, "--help"])
    assert code == 0
    text = capsys.readouterr().out
    assert "--help" in text and "<bool>" not in text, text
    if command == ["sample"]:
        assert "--quiet" in text and "-q" in text


def test_sample_quiet(files, capsys):
    model = files / "model.zip"
    code, text = run(
        [
            "synth",
            files / "data.csv",
            "-o",
            files / "s.csv",
            "--epsilon",
            2,
            "--schema",
            files / "schema.yaml",
            "--save-model",
            model,
            *FAST,
        ],
        capsys,
    )
    assert code == 0, text
    code, text = run(["sample", model, "-o", files / "a.csv", "--rows", 7, "-q"], capsys)
    assert code == 0 and text.strip() == "" and len(pd.read_csv(files / "a.csv")) == 7
    code, text = run(["sample", model, "-o", files / "b.csv", "--rows", 7], capsys)
    assert code == 0 and "wrote 7 rows" in text


REFUSED_BEFORE_SPENDING = [  # (argv with {d}, what the one line says)
    (["synth", "{d}/data.csv", "-o", "{d}/out.xlsx", *E], "no writer for '.xlsx' files"),
    (["synth", "{d}/data.csv", "-o", "{d}/out.tsv", *E], "no writer for '.tsv' files"),
    (["synth", "{d}/data.csv", "-o", "{d}/out.csv", "--rows", 0, *E], "--rows 0 would spend the budget"),
    (["sample", "{d}/m.zip", "-o", "{d}/out.xlsx"], "no writer for '.xlsx' files"),
]


@pytest.mark.parametrize("argv,says", REFUSED_BEFORE_SPENDING, ids=[s for _, s in REFUSED_BEFORE_SPENDING])
def test_an_output_no_writer_serves_and_rows_0_are_refused_before_anything_is_charged(
    files, argv, says, capsys, nothing_read
):
    code, text = run(["budget", "init", files / "b.json", "--epsilon", 5], capsys)
    assert code == 0, text
    before = _contents(files)
    budget = ["--budget-file", files / "b.json"] if argv[0] == "synth" else []
    code, text = run([str(a).format(d=files) for a in argv] + budget, capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], text
    assert _contents(files) == before  # nothing written, the budget file not charged


def test_rows_0_with_save_model_is_allowed(files, capsys):
    code, text = run(["synth", files / "data.csv", "-o", files / "s.csv", "--rows", 0, "--save-model",
                      files / "m2.zip", *E, *FAST], capsys)  # fmt: skip
    assert code == 0, text
    assert (files / "m2.zip").is_file() and len(pd.read_csv(files / "s.csv")) == 0


@pytest.mark.parametrize("name", ["out.csv", "out.CSV", "out.csv.gz", "out.parquet", "out.pq", "out.txt", "out"])
def test_served_table_outputs_pass(tmp_path, name):
    from privsample.io import check_table_output

    check_table_output(tmp_path / name)


@pytest.mark.parametrize("schema", [False, True])
def test_an_unnamed_header_column_is_refused_before_anything_is_charged(files, schema, capsys, nothing_read):
    """A pandas index column (``,color,size,flag``): one line naming column 1, before any record is read; the
    budget file keeps no charge."""
    small_table().to_csv(files / "indexed.csv")
    code, text = run(["budget", "init", files / "b.json", "--epsilon", 5], capsys)
    more = ["--schema", files / "schema.yaml"] if schema else []
    argv = ["synth", files / "indexed.csv", "-o", files / "s.csv", "--budget-file", files / "b.json", *E, *more]
    code, text = run(argv, capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1, text
    assert "indexed.csv: column 1 of the header has no name" in lines[0]
    assert "--index-col 1" in lines[0]  # the way to drop it
    assert not (files / "s.csv").exists()
    from privsample.privacy.budget import Budget

    assert Budget.open(files / "b.json").epsilon_spent() == 0  # the reservation cancelled: nothing charged


@pytest.mark.parametrize("schema", [False, True])
def test_an_output_too_large_for_the_disk_is_refused_before_any_spend(files, schema, capsys, monkeypatch):
    """--rows and the schema (or, before discovery, the column names) give the size: nothing is spent, the budget
    file keeps no charge, nothing is written."""
    import privsample.io
    import privsample.privacy.accountant as accountant
    from privsample.privacy.budget import Budget

    monkeypatch.setattr(privsample.io, "free_bytes", lambda path: 1_000_000)
    monkeypatch.setattr(accountant.Accountant, "spend", lambda *a, **k: pytest.fail("spent"))
    run(["budget", "init", files / "b.json", "--epsilon", 5], capsys)
    more = ["--schema", files / "schema.yaml"] if schema else []
    argv = ["synth", files / "data.csv", "-o", files / "s.csv", "--rows", 10**9, "--budget-file", files / "b.json"]
    code, text = run([*argv, *E, *more, *FAST], capsys)
    lines = text.strip().splitlines()
    assert code == 2 and len(lines) == 1, text
    assert "1,000,000,000 rows would take about" in lines[0] and "GB in s.csv" in lines[0], text
    assert not (files / "s.csv").exists()
    assert Budget.open(files / "b.json").epsilon_spent() == 0
