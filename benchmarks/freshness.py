"""Which code version each stored result came from, and whether it is still the current one.

Convention: a benchmark script that writes files under ``benchmarks/results/`` calls ``stamp(__file__, *paths)``
once they are written. The stamps live beside the results in ``benchmarks/results/stamps.json`` (one entry per
results file, so CSV files stay plain CSV for their readers and figures need no metadata):

    "aim_adult.md": {"script": "aim_adult.py", "code_digest": "3f9c...", "date": "2026-12-01"}

(an entry may also name the git ``commit`` whose code it was matched to; the check prints it, never needs it).

The *code version* is ``code_digest(script)``: a SHA-256 over the files listed for the script in ``SOURCES`` (the
script itself, the benchmark helpers it imports, the package modules it measures and any stored results it reads),
taken in sorted order of their paths relative to the repository root, each as its path, its length and its *code*:

* a Python file counts by its syntax tree (``ast``), without its docstrings (module, class, function) and other
  bare string statements, written out field by field (line numbers, comments and formatting are not in the tree).
  A docstring, a comment or a reformatting cannot change a number the script computes, so it leaves the digest,
  and the results above it, as they were; any change to what runs (a constant, an operator, a default, an import,
  a string the code uses) changes it. ``DOCSTRINGS_READ`` lists the modules whose docstrings a script copies into
  its results: their docstrings count. A file Python cannot parse counts by its bytes;
* any other file (the C sources of the extensions, stored results a script reads, data) counts by its bytes,
  line endings normalised to LF; ``__pycache__`` and compiled extensions are left out.

No git commit id and no modification time enters it, so a clean clone computes the same digest. (The syntax tree
is Python's own: a Python release that parses the same source into other nodes computes other digests; fields
that are empty or None are left out, so a field that a later release adds empty changes nothing.) An entry of
``SOURCES`` that names a directory stands for every file under it.

A results file is *fresh* when its stamp's digest equals the digest of today's files, *stale* when it does not
(or its script is no longer listed), *unstamped* when it has no stamp. ``KEPT`` lists the files of
``results/`` that no script writes (notes written by hand, records of one-off experiment arms or of earlier
builds): they are reported as *kept* and never checked. ``benchmarks/check_fresh.py`` runs the check.

*Fresh by reproduction.* The rows of a resumable grid are seeded runs: each is a function of its arguments and the
code. ``benchmarks/reproduce.py`` reruns a sample of a file's rows with the script's own worker and compares every
seeded figure exactly (not times or memory); when all k rerun rows are equal, it stamps the file with today's
digest and ``"reproduced": {"rows": k, "of": n, "date": ..., "from_digest": ...}`` (the stamp's ``date`` stays the
rows' date). Such a stamp claims that a sample of k of the n rows reran equal under the code of its digest, not
that every row would; it is fresh by the same rule as any other (``status`` names it "reproduced k of n rows").

The lists below follow the package's layers (``tests/test_imports.py``): a script that measures a layer depends on
that layer and on every layer below it. ``tests/test_check_fresh.py`` checks that every privsample module a
script imports (directly or through the modules it imports) is covered by its entry.
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAMPS = "stamps.json"  # under benchmarks/results/

_BASE = (
    "privsample/_version.py",
    "privsample/errors.py",
    "privsample/checks.py",
    "privsample/io.py",
    "privsample/progress.py",
)
PRIVACY = _BASE + ("privsample/privacy",)
TABLES = PRIVACY + ("privsample/data", "privsample/marginals")  # schemas, encoding, engines
SYNTH = TABLES + ("privsample/synth", "privsample/samplers")  # the synthesizers (they use the samplers)
EVALUATION = SYNTH + ("privsample/evaluation",)
API = EVALUATION + ("privsample/__init__.py", "privsample/api", "privsample/cube", "privsample/mbde")
CLI = API + ("privsample/cli", "privsample/datasets")

COMMON = "benchmarks/common.py"
WIDE = "benchmarks/wide_tables.py"
SMALL = "benchmarks/small_tables.py"

#: script (a file of benchmarks/) -> what its results depend on besides the script itself
SOURCES: dict[str, tuple[str, ...]] = {
    "aim_adult.py": EVALUATION + (COMMON,),
    "category_threshold.py": API + (COMMON,),
    "cube_bounds_tables.py": ("privsample/_version.py", "privsample/errors.py", "privsample/io.py", "privsample/cube")
    + ("benchmarks/results/cube_study.csv",),
    "cube_solver.py": ("privsample/errors.py", "privsample/cube"),
    "cube_study.py": EVALUATION + ("privsample/cube", COMMON),
    "discovery_rates.py": API + (SMALL,),
    "engines.py": CLI + (COMMON,),
    "latent_wide.py": API + (COMMON, WIDE),
    "mbde_paper.py": ("privsample/errors.py", "privsample/privacy", "privsample/mbde"),
    "method_choice.py": API + (COMMON, WIDE, "benchmarks/results/wide_tables.csv"),
    "mst_adult.py": EVALUATION + (COMMON, "benchmarks/results/mst_adult.history.md"),
    "numeric_discovery.py": SYNTH + (COMMON,),
    "numpy_md.py": SYNTH + (COMMON,),
    "paper_claims.py": ("benchmarks/claims",)
    + tuple(
        f"benchmarks/results/{f}"
        for f in ("mbde_paper.csv", "mbde_paper.q0.csv", "samplers_accuracy.csv", "cube_study.csv", "cube_solver.csv")
    ),
    "person_level.py": API + (COMMON,),
    "planner.py": API + (COMMON, WIDE, "benchmarks/results/wide_tables.csv"),
    "ppsyn_paper.py": EVALUATION,
    "ppsyn_time.py": EVALUATION + ("benchmarks/ppsyn_paper.py",),
    "privacy_check.py": EVALUATION + (COMMON,),
    "public_data.py": EVALUATION + (COMMON,),
    "register_types.py": CLI + (COMMON,),  # runs `python -m privsample.cli`
    "samplers_accuracy.py": ("privsample/errors.py", "privsample/privacy", "privsample/samplers"),
    "small_tables.py": API
    + ("benchmarks/results/small_tables.shares.csv", "benchmarks/results/small_tables.timing.csv"),
    "structural_zeros.py": EVALUATION + (COMMON,),
    "wide_discovery.py": API + (COMMON, SMALL, WIDE),
    "wide_tables.py": API + (COMMON,),
}

#: script -> the Python files whose docstrings it writes into its results (their docstrings count in its digest)
DOCSTRINGS_READ: dict[str, tuple[str, ...]] = {
    "method_choice.py": ("privsample/api/choice.py",),  # the report quotes choice.py's module docstring
}

#: files of results/ that no script writes: not checked (reason shown by ``check_fresh.py --list``)
KEPT: dict[str, str] = {
    "aim_final_fit_adult.csv": "record of an experiment arm of aim_adult.py (--csv)",
    "aim_final_fit_br2000.csv": "record of an experiment arm of aim_adult.py (--table br2000 --csv)",
    "aim_cap_adult.csv": "record of an experiment arm of aim_adult.py (--csv)",
    "aim_cap_br2000.csv": "record of an experiment arm of aim_adult.py (--table br2000 --csv)",
    "aim_hugin_adult.csv": "record of an experiment arm of aim_adult.py (--csv)",
    "aim_rounds_adult.csv": "record of an experiment arm of aim_adult.py (--csv)",
    "aim_wide.md": "notes (profiles of AIM on wide tables)",
    "aim_wide_cap.csv": "record of runs of wide_tables.py --worker, read into aim_wide.md",
    "latent_wide.before.csv": "record of an earlier build's runs (50-200 columns)",
    "mst_adult.history.md": "notes, read into mst_adult.md",
    "person_level.before.csv": "record of an earlier build's runs (the unit profile before the chosen-k change)",
    "person_level.notes.md": "notes",
    "ppsyn_paper.before.csv": "record of an earlier build's runs (the reading compares them with today's)",
    "ppsyn_dp_variants.md": "notes (the measurements behind PPSyn-DP's defaults)",
    "ppsyn_wide.md": "notes (experiment arms of wide_tables.py)",
    "privacy_check.md": "notes on privacy_check.csv (the script writes the CSV only)",
    "public_data.notes.md": "notes (the reading and cap measurements of an earlier build)",
    "register_types.notes.md": "notes",
    "small_tables.history.md": "notes: earlier arms of the credit-like table (records below)",
    "small_tables.shares.csv": "record of the discovery-share sweep, read into small_tables.md",
    "small_tables.timing.csv": "record of timing runs, read into small_tables.md",
    "small_tables_caps_check.csv": "record of an experiment arm of small_tables.py",
    "small_tables_credit_cap.csv": "record of an experiment arm of small_tables.py --credit",
    "small_tables_credit_caps.csv": "record of an experiment arm of small_tables.py --credit",
    "small_tables_credit_grid.csv": "record of an experiment arm of small_tables.py --credit",
    "wide_discovery.before.csv": "record of an earlier build's runs",
    "wide_tables.before.csv": "record of an earlier build's runs (AIM with the 80 MB cap)",
    "wide_discovery.notes.md": "notes",
    "wide_discovery.uniform.csv": "record of an earlier build's runs",
    "wide_width.md": "notes (width limits of the wide tables)",
}

_SKIP_SUFFIXES = {".so", ".pyd", ".pyc", ".pyo", ".o", ".dll", ".dylib"}


def source_files(script: str, root: Path = ROOT) -> list[Path]:
    """The files whose contents make ``script``'s code version, sorted by their path under ``root``."""
    found: set[Path] = {root / "benchmarks" / script}
    for entry in SOURCES[script]:
        path = root / entry
        if path.is_dir():
            found.update(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            found.add(path)
    keep = [p for p in found if p.suffix not in _SKIP_SUFFIXES and "__pycache__" not in p.parts]
    return sorted(keep, key=lambda p: p.relative_to(root).as_posix())


def _canonical(node: object) -> str:
    """A syntax tree written out field by field; fields that are None or empty are left out."""
    if isinstance(node, ast.AST):
        fields = []
        for name in node._fields:
            value = getattr(node, name, None)
            if value is not None and not (isinstance(value, list) and not value):
                fields.append(f"{name}={_canonical(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_canonical(v) for v in node) + "]"
    return repr(node)


def _drop_docstrings(tree: ast.AST) -> None:
    """Remove every statement that is a bare string (docstrings included): Python evaluates it to nothing."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list):
                body[:] = [
                    s
                    for s in body
                    if not (
                        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
                    )
                ]


_CODE: dict[tuple[str, bytes, bool], bytes] = {}  # (path, SHA-256 of contents, docstrings) -> code: parse once


def source_code(rel: str, data: bytes, docstrings: bool = False) -> bytes:
    """What the digest covers of the file ``rel`` (its path under the repository root) with contents ``data``:
    a Python file's syntax tree without its docstrings (with them if ``docstrings``), else its bytes."""
    data = data.replace(b"\r\n", b"\n")
    if not rel.endswith(".py"):
        return data
    key = (rel, hashlib.sha256(data).digest(), docstrings)
    if key not in _CODE:
        _CODE[key] = _python_code(rel, data, docstrings)
    return _CODE[key]


def _python_code(rel: str, data: bytes, docstrings: bool) -> bytes:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: the tree is the same
            tree = ast.parse(data, filename=rel)
    except (SyntaxError, ValueError):
        return data
    if not docstrings:
        _drop_docstrings(tree)
    return _canonical(tree).encode()


def digest(files: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 (hex, first 16 digits) of ``(path, covered contents)`` pairs, taken in sorted order of the paths."""
    h = hashlib.sha256()
    for rel, data in sorted(files):
        r = rel.encode()
        h.update(b"%d:%s\0%d:" % (len(r), r, len(data)) + data)
    return h.hexdigest()[:16]


def code_digest(script: str, root: Path = ROOT) -> str:
    """The code version of ``script``'s results: the digest of its source files' code (see the module's text)."""
    read_docs = set(DOCSTRINGS_READ.get(script, ()))
    files = []
    for path in source_files(script, root):
        rel = path.relative_to(root).as_posix()
        files.append((rel, source_code(rel, path.read_bytes(), rel in read_docs)))
    return digest(files)


def results_dir(root: Path = ROOT) -> Path:
    return root / "benchmarks" / "results"


def read_stamps(root: Path = ROOT) -> dict[str, dict]:
    path = results_dir(root) / STAMPS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _dump(stamps: dict[str, dict]) -> str:
    """One line per results file, sorted: small diffs, few merge conflicts."""
    lines = [f"  {json.dumps(k)}: {json.dumps(stamps[k], sort_keys=True)}" for k in sorted(stamps)]
    return "{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n"


@contextlib.contextmanager
def locked_stamps(root: Path = ROOT) -> Iterator[dict[str, dict]]:
    """The stamps, read and written back (as they are on leaving the block) under an exclusive lock on
    ``stamps.json``: scripts may finish at the same time."""
    results = results_dir(root)
    results.mkdir(parents=True, exist_ok=True)
    with open(results / STAMPS, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.seek(0)
        text = fh.read()
        stamps = json.loads(text) if text.strip() else {}
        yield stamps
        fh.seek(0)
        fh.truncate()
        fh.write(_dump(stamps))


def _common_stamp(entries: list[dict | None]) -> dict | None:
    """The stamp of results derived from stored results with these stamps: theirs if they all agree, none if one
    has none, else a stamp that is never fresh (its sources came from different code versions)."""
    if not entries or any(e is None for e in entries):
        return None
    if len({(e["script"], e["code_digest"]) for e in entries}) == 1:
        return max(entries, key=lambda e: e["date"])
    return {"script": entries[0]["script"], "code_digest": "mixed", "date": max(e["date"] for e in entries)}


def stamp(
    script_file: str | os.PathLike,
    *paths: str | os.PathLike,
    like: str | os.PathLike | list[str | os.PathLike] | None = None,
) -> None:
    """Record that the results ``paths`` were just written by ``script_file`` from today's code.

    ``like``: the paths were rewritten only from the stored results file(s) ``like`` (a report of stored runs), so
    they take the stamp of those files (none if one has none; a never-fresh one if they disagree). Paths outside
    ``benchmarks/results/`` of the script's checkout are ignored (a run told to write elsewhere)."""
    script = Path(script_file).resolve()
    root = script.parents[1]
    results = results_dir(root)
    names = []
    for p in paths:
        p = Path(p).resolve()
        if p.parent == results and p.name != STAMPS:
            names.append(p.name)
    if not names:
        return
    if like is None:
        entry = {
            "script": script.name,
            "code_digest": code_digest(script.name, root),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        }
    with locked_stamps(root) as stamps:
        if like is not None:
            sources = like if isinstance(like, list) else [like]
            entry = _common_stamp([stamps.get(Path(s).name) for s in sources])
        for name in names:
            if entry is None:
                stamps.pop(name, None)
            else:
                stamps[name] = dict(entry)


def status(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(file, status, detail) for every file of results/ and every stamp without its file; status is one of
    fresh, stale, unstamped, kept, missing."""
    results = results_dir(root)
    stamps = read_stamps(root)
    files = sorted(p.name for p in results.iterdir() if p.is_file() and p.name != STAMPS and p.suffix != ".tmp")
    digests: dict[str, str] = {}
    out = []
    for name in sorted(set(files) | set(stamps)):
        entry = stamps.get(name)
        if name not in files:
            out.append((name, "missing", "stamped, but the file is not in results/"))
        elif name in KEPT:
            out.append((name, "kept", KEPT[name]))
        elif entry is None:
            out.append((name, "unstamped", "no stamp: rerun the script that writes it"))
        elif entry["script"] not in SOURCES:
            out.append((name, "stale", f"written by {entry['script']}, which is not in freshness.SOURCES"))
        else:
            script = entry["script"]
            if script not in digests:
                digests[script] = code_digest(script, root)
            done = reproduced(entry)
            if digests[script] == entry["code_digest"]:
                at = f", commit {entry['commit'][:10]}" if entry.get("commit") else ""
                if done:
                    ran = f"rows run {entry['date']}"
                    out.append((name, "fresh", f"({done}) {script}, code {entry['code_digest']}, {ran}{at}"))
                else:
                    out.append((name, "fresh", f"{script}, code {entry['code_digest']}, {entry['date']}{at}"))
            else:
                then = f"{script}: code {entry['code_digest']} of {entry['date']}, now {digests[script]}"
                out.append((name, "stale", then + (f" ({done} under that code)" if done else "")))
    return out


def reproduced(entry: dict) -> str:
    """``"reproduced k of n rows on DATE"`` for a stamp written by ``benchmarks/reproduce.py``, else ``""``."""
    done = entry.get("reproduced")
    if not done:
        return ""
    return f"reproduced {done['rows']} of {done['of']} rows on {done['date']}"
