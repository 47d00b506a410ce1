"""benchmarks/check_fresh.py on a temporary copy of the repository: a stamp that matches today's code passes, a
changed source file or an unstamped results file fails, while an edit to docstrings, comments or formatting only
leaves the digest as it was; and every script's entry in ``benchmarks/freshness.py`` covers the privsample modules
it imports. The real repository's results are not checked here."""

from __future__ import annotations

import ast
import datetime
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def freshness():
    return _load("freshness_under_test", BENCH / "freshness.py")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy holding the package sources, numpy_md.py and its helpers, and one results file it writes."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    shutil.copytree(ROOT / "privsample", tmp_path / "privsample", ignore=ignore)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    for name in ("freshness.py", "check_fresh.py", "common.py", "numpy_md.py"):
        shutil.copy(BENCH / name, tmp_path / "benchmarks" / name)
    (tmp_path / "benchmarks" / "results" / "numpy_md.md").write_text("# a table\n")
    return tmp_path


def check(root: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(root / "benchmarks" / "check_fresh.py"), "--root", str(root), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def test_fresh_then_stale(repo: Path, freshness):
    res = check(repo)
    assert res.returncode == 1 and "numpy_md.md" in res.stdout and "unstamped" in res.stdout

    freshness.stamp(repo / "benchmarks" / "numpy_md.py", repo / "benchmarks" / "results" / "numpy_md.md")
    res = check(repo)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout == ""
    listed = check(repo, "--list")
    assert listed.returncode == 0 and "numpy_md.md" in listed.stdout and "fresh" in listed.stdout

    module = repo / "privsample" / "synth" / "numpy_md.py"
    module.write_text(module.read_text() + "\n_CHANGED = 1\n")
    res = check(repo)
    assert res.returncode == 1
    assert res.stdout.count("\n") == 1 and "numpy_md.md" in res.stdout and "stale" in res.stdout


def test_digest_is_content_only(repo: Path, freshness):
    """Same contents, same digest (whatever the modification times or a compiled extension beside them); a module
    the script does not depend on does not count."""
    before = freshness.code_digest("numpy_md.py", repo)
    module = repo / "privsample" / "synth" / "numpy_md.py"
    module.write_bytes(module.read_bytes())
    (repo / "privsample" / "synth" / "_extra.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0")
    (repo / "privsample" / "cli" / "_probe.py").write_text("# not measured by numpy_md.py\n")
    assert freshness.code_digest("numpy_md.py", repo) == before


def test_docstrings_comments_and_formatting_do_not_count(repo: Path, freshness):
    """Docstrings (module, class, function), comments, blank lines and line breaks are not code: the digest stays.
    A change to what runs, or to any byte of a C source, changes it."""
    before = freshness.code_digest("numpy_md.py", repo)
    module = repo / "privsample" / "synth" / "numpy_md.py"
    text = module.read_text()
    assert text.startswith('"""') and '\n    """' in text and "\n\n\ndef " in text
    edited = text.replace('"""', '"""Reworded. ', 1).replace('\n    """', '\n    """Reworded too. ', 1)
    edited = edited.replace("\n\n\ndef ", "\n\n\n# a comment\n\ndef ", 1).replace("):\n", "):  # why\n\n", 1)
    module.write_text("# a comment\n" + edited + "\n\n# the end\n")
    assert freshness.code_digest("numpy_md.py", repo) == before

    probe = repo / "privsample" / "synth" / "_probe.py"
    probe.write_text('class A:\n    """One."""\n\n    x = (1 +\n         2)\n')
    with_probe = freshness.code_digest("numpy_md.py", repo)
    probe.write_text('# probe\nclass A:\n    """Two:\n    longer."""\n    x = (1 + 2)  # three\n')
    assert freshness.code_digest("numpy_md.py", repo) == with_probe
    probe.write_text('class A:\n    """One."""\n\n    x = (1 + 3)\n')
    assert freshness.code_digest("numpy_md.py", repo) != with_probe
    probe.unlink()

    for code in ("\n_CHANGED = 1\n", "\nTOL = 1e-9\n"):
        module.write_text(text + code)
        assert freshness.code_digest("numpy_md.py", repo) != before
    module.write_text(text)
    assert freshness.code_digest("numpy_md.py", repo) == before
    c_source = repo / "privsample" / "synth" / "graphcells.c"
    c_source.write_text(c_source.read_text() + "/* a comment */\n")
    assert freshness.code_digest("numpy_md.py", repo) != before


def test_docstrings_a_script_reads_count(freshness):
    """A module whose docstring a script copies into its results counts with its docstrings for that script; and
    a script that reads another module's ``__doc__`` (its own is its ``--help``) lists that module."""
    code, reworded = b"'''The rule.'''\nX = 1\n", b"'''The new rule.'''\nX = 1\n"
    assert freshness.source_code("m.py", code) == freshness.source_code("m.py", reworded)
    assert freshness.source_code("m.py", code, True) != freshness.source_code("m.py", reworded, True)
    for path in BENCH.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Attribute) and n.attr == "__doc__" for n in ast.walk(tree)):
            assert freshness.DOCSTRINGS_READ.get(path.name), f"{path.name} copies a docstring into its results?"


def test_reports_take_their_runs_stamp(repo: Path, freshness):
    results = repo / "benchmarks" / "results"
    script = repo / "benchmarks" / "numpy_md.py"
    (results / "runs.csv").write_text("a\n1\n")
    freshness.stamp(script, results / "numpy_md.md", like=results / "runs.csv")  # runs unstamped: no stamp
    assert "numpy_md.md" not in freshness.read_stamps(repo)
    freshness.stamp(script, results / "runs.csv")
    freshness.stamp(script, results / "numpy_md.md", like=[results / "runs.csv"])
    stamps = freshness.read_stamps(repo)
    assert stamps["numpy_md.md"] == stamps["runs.csv"]
    outside = repo / "elsewhere.md"
    outside.write_text("x")
    freshness.stamp(script, outside)
    assert set(freshness.read_stamps(repo)) == {"numpy_md.md", "runs.csv"}


def test_every_script_is_listed(freshness):
    scripts = {p.name for p in BENCH.glob("*.py")} - {
        "common.py",
        "freshness.py",
        "check_fresh.py",
        "migrate_stamps.py",
        "reproduce.py",
    }
    assert scripts == set(freshness.SOURCES)
    for name in scripts:
        assert "stamp(" in (BENCH / name).read_text(), f"{name} does not stamp its results"
    for entry in {e for v in freshness.SOURCES.values() for e in v}:
        assert (ROOT / entry).exists(), entry


def _imports_of_tests():
    return _load("test_imports_graph", ROOT / "tests" / "test_imports.py")


def test_sources_cover_the_imports(freshness):
    """Every privsample module a script imports, directly, through the benchmark helpers it imports or through
    the package's own imports, lies under one of its entries (``privsample/__init__.py``'s imports are lazy)."""
    ti = _imports_of_tests()
    graph = ti.import_graph()
    lazy = _load("privsample_init", ROOT / "privsample" / "__init__.py")._LAZY  # privsample.X -> its module
    helpers = {p.stem for p in BENCH.glob("*.py")}

    def direct(path: Path, seen: set[Path]) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "privsample":
                names = [f"privsample.{node.attr}"]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for n in names:
                parts = n.split(".")
                if parts[0] == "privsample":
                    lazy_module = lazy.get(parts[1]) if len(parts) == 2 else None
                    found.add(n if ti.is_module(n) else lazy_module or n.rpartition(".")[0])
                helper = parts[1] if parts[0] == "benchmarks" and len(parts) > 1 else parts[0]
                if helper in helpers and helper != "freshness":
                    p = BENCH / f"{helper}.py"
                    if p not in seen:
                        seen.add(p)
                        found |= direct(p, seen)
        return found

    missing: dict[str, list[str]] = {}
    for script, entries in freshness.SOURCES.items():
        seen = {BENCH / script}
        todo, mods = list(direct(BENCH / script, seen)), set()
        while todo:
            m = todo.pop()
            if m in mods or m == "privsample" or not ti.is_module(m):
                continue
            mods.add(m)
            parts = m.split(".")
            todo += [".".join(parts[:i]) for i in range(2, len(parts))]  # the subpackages' __init__
            todo += graph.get(m, ())
        helper_files = {p.relative_to(ROOT).as_posix() for p in seen} - {f"benchmarks/{script}"}
        missing[script] = sorted(helper_files - set(entries))
        covered = [ROOT / e for e in entries]
        for m in mods:
            path = ROOT.joinpath(*m.split("."))
            file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
            if not file.exists():  # a C extension: its directory must be covered
                file = path.parent
            if not any(file == c or c in file.parents for c in covered):
                missing[script].append(m)
    assert not {k: v for k, v in missing.items() if v}, "imported but not in freshness.SOURCES"


def test_migrating_former_stamps(repo: Path, freshness):
    """A stamp of the former digest (the files' bytes) becomes the code digest of the commit whose files gave it;
    a stamp no commit matches is left as it is (it reads stale)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    shutil.copy(BENCH / "migrate_stamps.py", repo / "benchmarks" / "migrate_stamps.py")
    results = repo / "benchmarks" / "results"
    (results / "numpy_md.csv").write_text("a\n1\n")

    def git(*args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        }
        cmd = ["git", "-C", str(repo), "-c", "init.defaultBranch=main", *args]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "first")
    first = git("rev-parse", "HEAD").strip()
    files = freshness.source_files("numpy_md.py", repo)
    former = freshness.digest((p.relative_to(repo).as_posix(), p.read_bytes()) for p in files)
    code_then = freshness.code_digest("numpy_md.py", repo)
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    stamps = {
        "numpy_md.md": {"script": "numpy_md.py", "code_digest": former, "date": today},
        "numpy_md.csv": {"script": "numpy_md.py", "code_digest": "0123456789abcdef", "date": today},
    }
    (results / "stamps.json").write_text(json.dumps(stamps))
    module = repo / "privsample" / "synth" / "numpy_md.py"
    module.write_text(module.read_text() + "\n_CHANGED = 1\n")
    git("commit", "-q", "-am", "second")

    cmd = [sys.executable, str(repo / "benchmarks" / "migrate_stamps.py"), "--root", str(repo)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    after = freshness.read_stamps(repo)
    assert after["numpy_md.md"] == {**stamps["numpy_md.md"], "code_digest": code_then, "commit": first}
    assert after["numpy_md.csv"] == stamps["numpy_md.csv"]
    assert {r[0]: r[1] for r in freshness.status(repo)}["numpy_md.md"] == "stale"  # the code changed since
    module.write_text(module.read_text().replace("\n_CHANGED = 1\n", "\n# a comment\n"))
    assert {r[0]: r[1] for r in freshness.status(repo)}["numpy_md.md"] == "fresh"
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0 and freshness.read_stamps(repo) == after


def test_bench_full_runs_every_script(freshness):
    """``make bench-full`` (scripts/dev.sh) runs every script that writes results, so that it regenerates them all;
    and every results file a stamp names still exists."""
    text = (ROOT / "scripts" / "dev.sh").read_text()
    runs = text[text.index("<<'RUNS'") : text.index("\nRUNS\n")].splitlines()[1:]
    assert set(freshness.SOURCES) <= {line.split()[0] for line in runs if line.strip()}
    stamps = json.loads((BENCH / "results" / "stamps.json").read_text())
    assert [n for n in stamps if not (BENCH / "results" / n).exists()] == []
