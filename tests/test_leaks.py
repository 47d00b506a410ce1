"""Leak test: a release command behaves the same on a table D and on a neighbour D′ up to its DP outputs.

Every command that reads sensitive data runs on a small table D (made here from a fixed NumPy seed) and on a
neighbour D′ that differs by one adversarial record: an outlier number, a missing value, an unseen category, a
non-binary value in a 0/1 column, or a distinctive string ("ZEBRA-7741-LEAK") in a categorical or a numeric
column. D′ adds the record for commands whose guarantee is for add/remove neighbours (``synth``, private
``schema``) or for any two datasets (``mbde``); it replaces D's last record for those whose guarantee is for
replace-one neighbours with n public (``cube sample``, ``draw``). The noise is secure (no ``--seed``). Checks:

(a) the exit code is the same on D and D′ (and 0 on D, so that a release is exercised);
(b) the added record's distinctive value appears nowhere in stdout, stderr, warnings or any file the command
    wrote (the output table, every file of the saved model, the privately discovered schema);
(c) with every number masked (DP outputs are numbers) and the public column names masked, the set of printed
    lines is the same on D and D′, and so are the key paths of the saved model (keys compared, not values);
(d) no line prints a count of the records a rule touched ("dropped 3 rows", "(17 bad rows)"): (c) cannot see
    a count printed on D and D′ alike. λ* of ``cube sample`` is such a number: it has its own test.

Why it is robust to the noise: the lines are compared as sets after masking numbers, public column names (lists of
them collapse to one placeholder: the noisy selection picks different cliques), table borders, progress-bar glyphs
and spacing; model keys that are column names are masked, list positions are merged, ``nullable`` is ignored
(private discovery declares a column nullable from a noisy count: a DP output), and a map keyed by column name
counts the same empty or not (MST compresses the columns whose noisy one-way counts have small cells: an "(other)"
cell holding only the added record is compressed or not by the noise). D is built so that private discovery is
stable at the budgets used (clear types, large counts, heavy extremes), so that the same schema kinds come out on D
and D′; private discovery runs at ε = 20, where the noisy text count of a numeric column passes the 5% rule by about
5 sd (at ε = 8 it was 3 sd, and about 1 discovery in 170 typed a column differently, which failed every neighbour
compared with that run). ``synth`` runs without ``--quiet``: its progress lines are the ones that may carry messages
about the data, so they are normalised rather than hidden. Warnings about library versions, and the JVM's one-time
fork warning (Spark is started before the captured runs), are not compared.

Release paths may print an unconditional notice about the per-record rule for out-of-domain values: it is the
same on D and D′ and passes. Cost: about 20-40 s for the file on 2 cores, of which the Spark case (marked slow)
takes 15-45 s depending on whether the JVM is cached.

What each test catches (each was seen to fail on an implementation with that leak):
- test_synth_neighbour[none-numpy-text-in-numeric], [private-numpy-text-in-numeric], test_synth_ppsyn_no_schema
  (and [none|private-numpy-missing-number] unless the noisy schema says nullable): "encode: dropped 1 rows
  outside the private schema" on D′ only, an exact count (c, d).
- test_synth_neighbour[private-duckdb-*]: D passes but D′ stops, exit 2, "column 'income': value '987654' is
  outside the schema bounds [19456, 81920] ... (1 bad row)" (a, b, c, d).
- test_cube_does_not_release_lambda[binary], [schema]: "λ*=0.6" printed, "lam" in the ledger and the info.
- one out-of-domain record turns a release into exit 2 naming the value or the row (a, b, c):
  test_synth_neighbour[user-numpy-*], [user-duckdb-*] ("data row 401: value '987654' ...", "(1 bad row)"),
  test_synth_spark_user_schema, test_draw_neighbour[kary-*] ("1 value(s) outside ... (e.g. 'ZEBRA-7741-LEAK')",
  missing values refused), test_draw_neighbour[bernoulli-*], [product-*] ("not binary (e.g. value '97531')",
  missing values refused), test_cube_neighbour[*] (not binary / missing refused; with a schema "data row 400:
  value ..."), test_mbde_neighbour[text-in-numeric] ("column 'income' has non-numeric values").
- test_draft_schema_refused[mbde], [cube]: an unreviewed draft schema (provenance draft-nonprivate) is accepted.
- test_synth_empty_table[none-numpy], [user-numpy], [user-duckdb]: exit 2 "the table has no data rows" on the
  header-only table, exit 0 on one record.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from privsample.cli import main
from privsample.data import schema as schema_module
from privsample.privacy.budget import Budget
from privsample.privacy.released import CLOSE, MARK_ENV, OPEN, is_released_path
from privsample.synth import model as model_module

# -- the data -------------------------------------------------------------------------------------------------
N = 400
TOKEN = "ZEBRA-7741-LEAK"
OUTLIER = 987654
NONBINARY = 97531
MAIN = ("color", "tier", "income", "fa", "fb")  # synth, draw, mbde
BINARY = ("fa", "fb", "fc")  # cube without a schema: every column 0/1
CUBE = ("color", "fa", "fb")  # cube with a schema
ALL_COLUMNS = ("color", "tier", "income", "fa", "fb", "fc")
TYPICAL = {"color": "red", "tier": "4", "income": "50000.5", "fa": "1", "fb": "0", "fc": "1"}

# name -> (column, CSV text of the record's value there, its distinctive value or None)
RECORDS = {
    "outlier-number": ("income", str(OUTLIER), OUTLIER),
    "missing-number": ("income", "", None),
    "text-in-numeric": ("income", TOKEN, TOKEN),
    "unseen-category": ("color", TOKEN, TOKEN),
    "missing-category": ("color", "", None),
    "non-binary": ("fa", str(NONBINARY), NONBINARY),
}
BINARY_RECORDS = {
    "non-binary": ("fa", str(NONBINARY), NONBINARY),
    "missing-binary": ("fa", "", None),
    "text-in-binary": ("fa", TOKEN, TOKEN),
}

USER_SCHEMA = {
    "provenance": "user",
    "columns": [
        {"name": "color", "type": "categorical", "categories": ["red", "green", "blue"]},
        {"name": "tier", "type": "numeric", "lower": 0, "upper": 9, "bins": 10, "integer": True},
        {"name": "income", "type": "numeric", "lower": 0, "upper": 100000, "bins": 10},
        {"name": "fa", "type": "categorical", "categories": ["0", "1"]},
        {"name": "fb", "type": "numeric", "lower": 0, "upper": 1, "bins": 2, "integer": True},
    ],
}
CUBE_SCHEMA = {
    "provenance": "user",
    "columns": [
        {"name": "color", "type": "categorical", "categories": ["red", "green", "blue"]},
        {"name": "fa", "type": "categorical", "categories": ["0", "1"]},
        {"name": "fb", "type": "categorical", "categories": ["0", "1"]},
    ],
}


@functools.lru_cache(maxsize=1)
def base_rows() -> tuple[dict[str, str], ...]:
    """D: N records from a fixed seed. Clear types and large counts, so that private discovery is stable;
    income has more than 20 distinct values (a non-private draft calls it numeric) and 15% of the records at
    each extreme, so that privately discovered bounds cover every value of D."""
    rng = np.random.default_rng(20240607)
    color = rng.choice(["red", "green", "blue"], N)
    tier = rng.integers(0, 10, N)
    income = rng.integers(21, 80, N) * 1000 + 0.5
    ends = rng.permutation(N)
    income[ends[:60]], income[ends[60:120]] = 20000.5, 80000.5
    bits = rng.integers(0, 2, (N, 3))
    return tuple(
        {
            "color": str(color[i]),
            "tier": str(tier[i]),
            "income": f"{income[i]:.1f}",
            "fa": str(bits[i, 0]),
            "fb": str(bits[i, 1]),
            "fc": str(bits[i, 2]),
        }
        for i in range(N)
    )


def write_table(
    path: Path, columns, record: tuple[str, str, object] | None = None, how: str = "add", rows=None
) -> None:
    rows = list(base_rows() if rows is None else rows)
    if record is not None:
        extra = dict(TYPICAL, **{record[0]: record[1]})
        rows = rows + [extra] if how == "add" else rows[:-1] + [extra]
    lines = [",".join(columns)] + [",".join(r[c] for c in columns) for r in rows]
    path.write_text("\n".join(lines) + "\n")


# -- running a command in-process -----------------------------------------------------------------------------
# Warnings about library versions are not about the data (and some fire only on the first import).
_VERSION_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning, ResourceWarning)


def cli(argv) -> tuple[int, str]:
    """(exit code, stdout + stderr + warnings) of ``privsample ARGV`` run in-process."""
    out, err = io.StringIO(), io.StringIO()
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        warnings.simplefilter("always")
        try:
            main([str(a) for a in argv])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    warned = "".join(
        f"{w.category.__name__}: {w.message}\n" for w in caught if not issubclass(w.category, _VERSION_WARNINGS)
    )
    return code, out.getvalue() + err.getvalue() + warned


@dataclass
class Outcome:
    code: int
    text: str
    root: Path  # the run's directory: its input data.csv and everything the commands wrote


Chain = Callable[[Path], list]  # run directory -> the argv lists to run in order (stop at the first failure)


BUDGET_EPSILON = 1e12  # large enough for every chain (cube sample asks ε = 20,000: ρ = 2e8)


def release(root: Path, chain: Chain, relation: str | None = None) -> Outcome:
    """Run the chain in ``root``; with ``relation`` every command is charged to ``root/budget.json`` (a budget file
    for that neighbouring relation), which is then compared too."""
    code, texts = 0, []
    if relation is not None:
        budget = root / "budget.json"
        Budget.create(budget, epsilon=BUDGET_EPSILON, delta=1e-3, neighbouring=relation)
        os.environ["PRIVSAMPLE_BUDGET_FILE"] = str(budget)
    try:
        for argv in chain(root):
            code, text = cli(argv)
            texts.append(text)
            if code:
                break
    finally:
        os.environ.pop("PRIVSAMPLE_BUDGET_FILE", None)
    return Outcome(code, "".join(texts), root)


# -- what is compared -----------------------------------------------------------------------------------------
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GLYPHS = re.compile(r"[\u2500-\u259f\u2026]+")  # box drawing, progress bars, block elements, ellipsis
_NUMBER = re.compile(r"[-+]?(?:\d(?:[\d,]*\d)?(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?")
_COLUMN = re.compile(r"\b(?:" + "|".join(sorted(ALL_COLUMNS, key=len, reverse=True)) + r")\b")
_COLUMNS = re.compile(r"<col>(?:\s*[,–\-|]\s*<col>|\s+<col>)*")
_RELEASED = re.compile(re.escape(OPEN) + "[^" + CLOSE + "]*" + re.escape(CLOSE))
# The progress bar's own columns: steps done of the phase's steps and the elapsed time (and time left). Their
# lengths are public or follow noisy decisions (AIM's rounds), and wall-clock time is a timing channel, which no
# printed figure may carry and this test cannot judge: they are masked by their fixed format, nothing else.
_PROGRESS = re.compile(r"(?<![\w.])\d+/(?:≤?\d+|\?)(?![\w.])|(?<![\w.])\d+:\d\d:\d\d(?![\w.])|ETA \d+:\d\d:\d\d")


def masked_lines(o: Outcome) -> set[str]:
    """The printed lines with the run directory, public column names, marked mechanism outputs (``⟦...⟧``,
    ``privsample.privacy.released``), the progress bar's steps and times, and layout masked. Every other
    number is compared as printed."""
    text = _ANSI.sub("", o.text).replace(str(o.root), "<DIR>")
    text = _RELEASED.sub("<R>", text)
    text = re.sub(r"<R>(?:\s*[–\-]\s*<R>)+", "<R>", text)  # a range of noisy values vs a single one
    text = _COLUMNS.sub("<cols>", _COLUMN.sub("<col>", text))
    text = _PROGRESS.sub("<P>", text)
    text = _GLYPHS.sub(" ", text)
    return {" ".join(line.split()) for line in text.splitlines() if line.strip()}


KIND_RETRIES = 2
_KIND = re.compile(r"│\s*(\S+)\s*│\s*" + re.escape(OPEN) + r"([a-z]+)" + re.escape(CLOSE) + r"\s*│")


def discovered_kinds(o: Outcome) -> dict[str, str]:
    """The kind private discovery gave each column, as its report printed them (marked outputs)."""
    return dict(_KIND.findall(_ANSI.sub("", o.text)))


def same_kinds(make_d: Callable[[bool], Outcome], make_dp: Callable[[bool], Outcome]) -> tuple[Outcome, Outcome]:
    """D and D′ (``make_*(fresh)``; fresh: not a cached run); when private discovery's noisy type decisions (marked
    outputs) differ between them, both are run again, at most ``KIND_RETRIES`` times. A type test's false alarm
    (about 1e-3 a column) changes which steps the ledger lists: a legitimate difference that masking cannot hide.
    A difference the neighbour's record caused would persist, and fail the comparison."""
    d, dp = make_d(False), make_dp(False)
    for _ in range(KIND_RETRIES):
        if discovered_kinds(d) == discovered_kinds(dp):
            break
        d, dp = make_d(True), make_dp(True)
    return d, dp


def _leaves(obj, prefix: str):
    """(path, value) of every leaf of a JSON/YAML document: keys joined by '.', list items as '[]'; a map keyed
    by column names (or an empty map) gives '<col>' keys (a noisy step chooses which columns it holds)."""
    if isinstance(obj, dict):
        if not obj:
            yield prefix, {}
            return
        for k, v in obj.items():
            key = "<col>" if k in ALL_COLUMNS else str(k)
            yield from _leaves(v, f"{prefix}.{key}" if prefix else key)
    elif isinstance(obj, list):
        if not obj:
            yield prefix + "[]", []
        for v in obj:
            yield from _leaves(v, prefix + "[]")
    else:
        yield prefix, obj


def _declared(path: str, public, released) -> str | None:
    """'public' | 'released' | None for a saved field's path (column names as '*' in the patterns' view)."""
    plain = path.replace("<col>", "x")
    if is_released_path(plain, released):
        return "released"
    if is_released_path(plain, public):
        return "public"
    return None


MODEL_LISTS = (model_module.PUBLIC_FIELDS, model_module.RELEASED_FIELDS)
SCHEMA_LISTS = (schema_module.PUBLIC_FIELDS, schema_module.RELEASED_FIELDS)


def _document_fields(name: str, doc, lists, out: set[str], undeclared: set[str]) -> None:
    for path, value in _leaves(doc, ""):
        if name.startswith("model") and path.startswith("schema."):
            kind, shown = _declared(path[len("schema.") :], *SCHEMA_LISTS), path
        else:
            kind, shown = _declared(path, *lists), path
        if kind is None:
            undeclared.add(f"{name}:{shown}")
        elif kind == "public":
            out.add(f"{name}:{shown}={json.dumps(value, sort_keys=True, default=str)}")


def saved_fields(o: Outcome) -> tuple[set[str], set[str]]:
    """(the public fields of every saved model and schema with their values, the fields declared neither public
    nor released). Mechanism outputs (``RELEASED_FIELDS`` of the model and the schema) are left out; every
    array of the model is declared by name in the same lists (``arrays:NAME``)."""
    fields: set[str] = set()
    undeclared: set[str] = set()
    for p in sorted(o.root.rglob("*")):
        rel = str(p.relative_to(o.root))
        if not p.is_file() or rel.startswith(("public", "data.csv", "budget.json")):
            continue
        inside_model = rel.startswith("model")
        lists = MODEL_LISTS if inside_model else SCHEMA_LISTS
        if p.suffix == ".json" and inside_model:
            _document_fields(f"model/{p.name}", json.loads(p.read_text()), lists, fields, undeclared)
        elif p.suffix in (".yaml", ".yml"):
            _document_fields(p.name, yaml.safe_load(p.read_text()), SCHEMA_LISTS, fields, undeclared)
        elif p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                for k in z.files:
                    kind = _declared(f"arrays:{k}", *MODEL_LISTS)
                    if kind is None:
                        undeclared.add(f"{p.name}:{k}")
                    elif kind == "public":
                        fields.add(f"{p.name}:{k}={z[k].tolist()}")
        elif p.suffix == ".json":
            undeclared.add(rel)  # a JSON file no list declares
    return fields, undeclared


def budget_records(o: Outcome) -> list[tuple] | None:
    """What the run's budget file says of each release: command, mechanism, charge and status (its ids, dates,
    output names and the input's SHA-256 are the file's own and not compared). A release after a private schema
    discovery, with that schema, is charged what the schema's ledger leaves (its thresholds' delta follows the
    discovery's noisy decisions): a DP output, masked as printed ones are."""
    path = o.root / "budget.json"
    if not path.exists():
        return None
    out, after_private_schema = [], False
    for r in Budget.open(path).read()["releases"]:
        charge = ("<R>", "<R>") if after_private_schema else (r["rho"], r["delta"])
        out.append((r["command"], r["mechanism"], r["neighbouring"], *charge, r["status"]))
        after_private_schema |= r["mechanism"] == "private schema discovery"
    return out


def _blobs(root: Path):
    """(where, bytes) of every file written under root (zip members unpacked), without the input table."""
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name == "data.csv":
            continue
        data = p.read_bytes()
        yield str(p.relative_to(root)), data
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                for name in z.namelist():
                    yield f"{p.relative_to(root)}:{name}", z.read(name)


def _number_pattern(x: int) -> re.Pattern:
    mantissa = str(x)[0] + r"\." + str(x)[1:]
    return re.compile(rf"(?<![\d.]){x}(?:\.0*)?(?!\d)|(?<![\d.]){mantissa}0*[eE]\+?0*{len(str(x)) - 1}(?!\d)")


def leaks(o: Outcome, needle) -> list[str]:
    """Where the distinctive value shows: in the printed text, or in any file the commands wrote."""
    found = []
    if isinstance(needle, str):
        low = needle.lower()
        encoded = [low.encode(enc) for enc in ("utf-8", "utf-16-le", "utf-32-le")]  # NumPy strings are UTF-32
        if low in o.text.lower():
            found.append("the printed text")
        found += [where for where, data in _blobs(o.root) if any(e in data.lower() for e in encoded)]
        return found
    pattern = _number_pattern(int(needle))
    if pattern.search(o.text):
        found.append("the printed text")
    for where, data in _blobs(o.root):
        if pattern.search(data.decode("utf-8", errors="ignore")):
            found.append(where)
        if where.endswith(".npy"):
            arr = np.load(io.BytesIO(data), allow_pickle=False)
            if arr.dtype.kind in "iuf" and np.any(arr == needle):
                found.append(where + " (array value)")
    return found


# A count of the records a rule touched ("dropped 3 rows", "(17 bad rows)", "2 values outside ..."): masking
# numbers in (c) cannot see such a count when it is printed on D and D′ alike, so it is looked for by its words.
_AFFECTED = re.compile(
    r"\b(?:dropped|skipped|removed|clipped|mapped|replaced|ignored|coerced|excluded|repaired)\s+\d[\d,]*\b"
    r"|\b\d[\d,]*\s+(?:bad|invalid|unknown|missing|dropped|skipped|clipped|mapped|out-of-range|non-numeric|"
    r"non-binary|unencodable)\s+(?:rows?|records?|values?|cells?)\b"
    r"|\b\d[\d,]*\s+(?:rows?|records?|values?)(?:\(s\))?\s+(?:outside|not|with|had|have|has|are|were|that)\b",
    re.IGNORECASE,
)


def check_neighbours(d: Outcome, dp: Outcome, needle, layout: bool = True) -> None:
    """(a) exit codes, (b) the added value nowhere, (c) the printed lines, the saved public fields and the budget
    file the same on D and D′ (mechanism outputs masked only where marked), every saved field declared, and
    (d) no count of affected records; all problems together.

    ``layout=False`` skips (c): when private discovery cannot be stable (an empty table), which columns it
    judges numeric is a noisy decision, and the ledger's phases and the model's fields follow it."""
    problems = []
    for name, o in (("D", d), ("D′", dp)):
        counts = sorted({m.group(0) for m in _AFFECTED.finditer(o.text)})
        if counts:
            problems.append(f"(d) a count of affected records is printed on {name}: {counts}")
    if d.code != 0:
        problems.append(f"the release fails on the clean table D (exit {d.code}):\n{d.text}")
    if dp.code != d.code:
        problems.append(f"(a) exit code {d.code} on D but {dp.code} on D′")
    if needle is not None:
        where = leaks(dp, needle)
        if where:
            problems.append(f"(b) the added record's value {needle!r} shows in: {', '.join(where)}")
    (fd, ud), (fdp, udp) = saved_fields(d), saved_fields(dp)
    if ud | udp:
        problems.append(f"(c) saved fields declared neither public nor released: {sorted(ud | udp)}")
    if layout:
        ld, ldp = masked_lines(d), masked_lines(dp)
        if ld != ldp:
            problems.append(
                f"(c) printed lines differ beyond marked mechanism outputs; only on D: {sorted(ld - ldp)}; "
                f"only on D′: {sorted(ldp - ld)}"
            )
        if fd != fdp:
            problems.append(
                f"(c) saved public fields differ; only on D: {sorted(fd - fdp)}; only on D′: {sorted(fdp - fd)}"
            )
        bd, bdp = budget_records(d), budget_records(dp)
        if bd != bdp:
            problems.append(f"(c) the budget files differ: D {bd}, D′ {bdp}")
    assert not problems, "\n".join(problems) + f"\n--- D output ---\n{d.text}\n--- D′ output ---\n{dp.text}"


# -- the lab: public files, D once per command, D′ per record -------------------------------------------------
class Lab:
    def __init__(self, root: Path):
        self.root = root
        self.public = root / "public"
        self.public.mkdir()
        self.user_schema = self.public / "user.yaml"
        self.user_schema.write_text(yaml.safe_dump(USER_SCHEMA, sort_keys=False))
        self.cube_schema = self.public / "cube.yaml"
        self.cube_schema.write_text(yaml.safe_dump(CUBE_SCHEMA, sort_keys=False))
        self._baselines: dict[str, Outcome] = {}
        self._count = 0

    def run(self, chain: Chain, columns, record=None, how: str = "add", rows=None, budget: bool = True) -> Outcome:
        """The chain on D (``record`` None) or a neighbour, charged to a budget file for the relation ``how``."""
        self._count += 1
        root = self.root / f"run{self._count}"
        root.mkdir()
        write_table(root / "data.csv", columns, record, how, rows)
        relation = {"replace": "replace-one", "person": "person:person"}.get(how, "add-remove")
        return release(root, chain, relation if budget else None)

    def baseline(self, key: str, chain: Chain, columns, how: str = "add") -> Outcome:
        """The release on D (computed once per command and reused against every neighbour)."""
        if key not in self._baselines:
            self._baselines[key] = self.run(chain, columns, how=how)
        return self._baselines[key]

    def neighbours(self, key: str, chain: Chain, columns, record, how: str) -> None:
        def baseline(fresh: bool) -> Outcome:
            if fresh:
                self._baselines.pop(key, None)
            return self.baseline(key, chain, columns, how)

        d, dp = same_kinds(baseline, lambda fresh: self.run(chain, columns, record, how))
        check_neighbours(d, dp, record[2])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with warnings.catch_warnings():  # first imports outside the captured runs (some print once)
        warnings.simplefilter("ignore")
        import privsample.marginals.duckdb_engine
        import privsample.cube.pipeline
        import privsample.mbde.release
        import privsample.synth  # noqa: F401
    return Lab(tmp_path_factory.mktemp("leaks"))


@pytest.fixture(autouse=True)
def _plain_console(monkeypatch):
    """Wide, plain console output, so that line wrapping never depends on the width of a number; mechanism
    outputs printed with their mark (``privsample.privacy.released``)."""
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.setenv(MARK_ENV, "1")
    for var in ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)


# -- synth ----------------------------------------------------------------------------------------------------
def synth_chain(mode: str, engine: str, method: str = "mst", lab: Lab | None = None) -> Chain:
    def chain(d: Path) -> list:
        argv = [
            "synth",
            d / "data.csv",
            "-o",
            d / "out.csv",
            "--epsilon",
            20,
            "--method",
            method,
            "--iters",
            30,
            "--engine",
            engine,
            "--save-model",
            d / "model",
        ]
        if mode == "user":
            return [argv + ["--schema", lab.user_schema]]
        if mode == "private":
            return [
                ["schema", d / "data.csv", "-o", d / "schema.yaml", "--private-epsilon", 20],
                argv + ["--schema", d / "schema.yaml"],
            ]
        return [argv]

    return chain


# No-schema discovery reads the table in memory: the duckdb/spark engines need a schema.
SYNTH_CONFIGS = [("none", "numpy"), ("user", "numpy"), ("user", "duckdb"), ("private", "numpy"), ("private", "duckdb")]


@pytest.mark.parametrize("record", list(RECORDS))
@pytest.mark.parametrize("mode, engine", SYNTH_CONFIGS, ids=[f"{m}-{e}" for m, e in SYNTH_CONFIGS])
def test_synth_neighbour(lab, mode, engine, record):
    lab.neighbours(f"synth-{mode}-{engine}", synth_chain(mode, engine, lab=lab), MAIN, RECORDS[record], "add")


def test_synth_ppsyn_no_schema(lab):
    chain = synth_chain("none", "numpy", method="ppsyn")
    for record in ("text-in-numeric", "unseen-category"):
        lab.neighbours("synth-ppsyn", chain, MAIN, RECORDS[record], "add")


@pytest.mark.slow
def test_synth_spark_user_schema(lab):
    """One Spark case (about 40 s: the first session starts a JVM); the other engines cover the rest."""
    from privsample.marginals.spark_engine import _java_home_ok

    if not _java_home_ok():
        pytest.skip("Spark needs Java 17+")
    from privsample.marginals.spark_engine import start_session

    with warnings.catch_warnings():  # launch the JVM outside the captured runs (it warns once, about os.fork)
        warnings.simplefilter("ignore")
        start_session("local[2]").stop()
    lab.neighbours("synth-user-spark", synth_chain("user", "spark", lab=lab), MAIN, RECORDS["unseen-category"], "add")


EMPTY_CONFIGS = [("none", "numpy"), ("user", "numpy"), ("user", "duckdb")]


@pytest.mark.parametrize("mode, engine", EMPTY_CONFIGS, ids=[f"{m}-{e}" for m, e in EMPTY_CONFIGS])
def test_synth_empty_table(lab, mode, engine):
    """Header only vs one record (add/remove neighbours): both release from the model, exit 0."""
    chain = synth_chain(mode, engine, lab=lab)
    empty = lab.run(chain, MAIN, rows=())
    one = lab.run(chain, MAIN, rows=(TYPICAL,))
    if mode == "none":
        # Without a schema, discovery on 0 or 1 record keeps at most one value a column, and the run stops before the
        # synthesis spend: a decision on the private schema (post-processing), the same for both tables.
        assert empty.code == one.code == 2, f"{empty.text}\n{one.text}"
        assert all("kept at most one value" in o.text for o in (empty, one))
        return
    assert empty.code == 0 and one.code == 0, (
        f"exit {empty.code} on the empty table, {one.code} on one record:\n{empty.text}\n{one.text}"
    )
    check_neighbours(empty, one, None)


# -- cube sample ----------------------------------------------------------------------------------------------
def cube_chain(lab: Lab, schema: bool) -> Chain:
    def chain(d: Path) -> list:
        argv = ["cube", "sample", d / "data.csv", "-o", d / "out.csv", "--epsilon", 20000, "--k", 1]
        return [argv + (["--schema", lab.cube_schema] if schema else [])]

    return chain


CUBE_CASES = [("binary", r) for r in BINARY_RECORDS] + [("schema", "unseen-category"), ("schema", "non-binary")]


@pytest.mark.parametrize("kind, record", CUBE_CASES, ids=[f"{k}-{r}" for k, r in CUBE_CASES])
def test_cube_neighbour(lab, kind, record):
    rec = {**RECORDS, **BINARY_RECORDS}[record]
    columns = BINARY if kind == "binary" else CUBE
    lab.neighbours(f"cube-{kind}", cube_chain(lab, kind == "schema"), columns, rec, "replace")


@pytest.mark.parametrize("kind", ["binary", "schema"])
def test_cube_does_not_release_lambda(lab, kind, monkeypatch):
    """λ* is computed from the data without noise: it must not be printed, nor kept in the ledger or the info."""
    import privsample.cli.cube as cli_module
    from privsample.cube.sampler import BooleanCubeSampler

    ledgers, infos = [], []
    print_ledger, sample = cli_module.print_ledger, BooleanCubeSampler.sample

    def record_ledger(ledger, *args, **kwargs):
        ledgers.append(ledger)
        return print_ledger(ledger, *args, **kwargs)

    def record_sample(self, *args, **kwargs):
        rel = sample(self, *args, **kwargs)
        infos.append(dict(getattr(rel, "info", {}) or {}))
        return rel

    monkeypatch.setattr(cli_module, "print_ledger", record_ledger)
    monkeypatch.setattr(BooleanCubeSampler, "sample", record_sample)
    o = lab.run(cube_chain(lab, kind == "schema"), BINARY if kind == "binary" else CUBE, how="replace")
    assert o.code == 0, o.text
    assert "λ" not in o.text and "lambda" not in o.text.lower(), o.text
    found = {
        k for path, _ in _leaves({"ledger": ledgers, "info": infos}, "") for k in path.replace("[]", "").split(".")
    }
    lam = sorted(k for k in found if re.fullmatch(r"(lam|lambda|λ)\w*\*?", k, re.IGNORECASE))
    dumped = json.dumps({"ledger": ledgers, "info": infos}, default=str, ensure_ascii=False)
    lam += ["a ledger or info text"] if ("λ" in dumped or "lambda" in dumped.lower()) else []
    assert not lam, f"λ* is carried in {lam}"


# -- draw kary | bernoulli | product ---------------------------------------------------------------------------
DRAW_ARGS = {
    "kary": ["--column", "color", "--categories", "red,green,blue", "--epsilon", 1],
    "bernoulli": ["--columns", "fa,fb", "--epsilon", 1],
    "product": ["--columns", "fa,fb", "--epsilon", 5, "--skip-accuracy-check"],
}
DRAW_CASES = [("kary", r) for r in ("unseen-category", "missing-category")] + [
    (s, r) for s in ("bernoulli", "product") for r in BINARY_RECORDS
]


@pytest.mark.parametrize("sampler, record", DRAW_CASES, ids=[f"{s}-{r}" for s, r in DRAW_CASES])
def test_draw_neighbour(lab, sampler, record):
    def chain(d: Path) -> list:
        return [["draw", sampler, d / "data.csv", "-o", d / "out.csv", *DRAW_ARGS[sampler]]]

    rec = {**RECORDS, **BINARY_RECORDS}[record]
    lab.neighbours(f"draw-{sampler}", chain, MAIN, rec, "replace")


# -- mbde -----------------------------------------------------------------------------------------------------
def mbde_chain(schema: Path) -> Chain:
    def chain(d: Path) -> list:
        return [
            [
                "mbde",
                d / "data.csv",
                "--schema",
                schema,
                "--columns",
                "income,tier",
                "--epsilon",
                3,
                "--samples",
                5,
                "-o",
                d / "out.csv",
                "--epochs",
                5,
                "--hidden",
                8,
                "--rounds",
                1,
            ]
        ]

    return chain


@pytest.mark.parametrize("record", ["outlier-number", "missing-number", "text-in-numeric"])
def test_mbde_neighbour(lab, record):
    lab.neighbours("mbde", mbde_chain(lab.user_schema), MAIN, RECORDS[record], "add")


# -- an unreviewed draft schema is refused --------------------------------------------------------------------
@pytest.mark.parametrize("command", ["mbde", "cube", "synth"])
def test_draft_schema_refused(lab, command):
    """``privsample schema`` without --private-epsilon reads bounds and categories off the data
    (provenance draft-nonprivate): release commands must refuse it (exit 2, nothing written)."""
    columns = {"mbde": MAIN, "cube": CUBE, "synth": MAIN}[command]

    def chain(d: Path) -> list:
        draft = ["schema", d / "data.csv", "-o", d / "draft.yaml"]
        out = d / "out.csv"
        run = {
            "mbde": [
                "mbde",
                d / "data.csv",
                "--schema",
                d / "draft.yaml",
                "--columns",
                "income",
                "--epsilon",
                3,
                "--samples",
                5,
                "-o",
                out,
                "--epochs",
                5,
                "--hidden",
                8,
                "--rounds",
                1,
            ],
            "cube": [
                "cube",
                "sample",
                d / "data.csv",
                "-o",
                out,
                "--epsilon",
                20000,
                "--k",
                1,
                "--schema",
                d / "draft.yaml",
            ],
            "synth": [
                "synth",
                d / "data.csv",
                "-o",
                out,
                "--epsilon",
                20,
                "--method",
                "mst",
                "--iters",
                30,
                "--engine",
                "numpy",
                "--schema",
                d / "draft.yaml",
                "--quiet",
            ],
        }[command]
        return [draft, run]

    o = lab.run(chain, columns, budget=False)
    assert yaml.safe_load((o.root / "draft.yaml").read_text())["provenance"] == "draft-nonprivate"
    assert o.code == 2, f"{command} accepted a non-private draft schema (exit {o.code}):\n{o.text}"
    assert not (o.root / "out.csv").exists()


# -- a line that is not a well-formed record ------------------------------------------------------------------
# One rule for every release command (privsample.errors.DataError): once the data is opened the run is charged,
# and a file with a line that does not read as a record stops it with one line that names no line, field count
# or value. The refusal tells that the file is not well-formed (the guarantee is for well-formed tables); it
# costs the run's whole budget, so probing is not free, and nothing else differs from D.
SECRET = "SECRET-EXTRA-FIELD"


def malformed_line(kind: str, columns) -> bytes:
    values = [TYPICAL[c] for c in columns]
    if kind == "extra-field":
        return ",".join(values + [SECRET]).encode()
    if kind == "stray-quote":
        return ('"' + ",".join(values)).encode()
    if kind == "whitespace-only":
        return b"   "
    return ",".join(values).encode().replace(b"1", b"1\xff", 1)  # "non-utf8": one byte not valid UTF-8


MALFORMED = ("extra-field", "stray-quote", "whitespace-only", "non-utf8")


def run_malformed(lab: Lab, chain: Chain, columns, kind: str, how: str) -> Outcome:
    """The chain on D′: D with one malformed line added (``how`` add) or in place of its last record (replace)."""
    lab._count += 1
    root = lab.root / f"run{lab._count}"
    root.mkdir()
    write_table(root / "data.csv", columns)
    lines = (root / "data.csv").read_bytes().rstrip(b"\n").split(b"\n")
    lines = lines + [malformed_line(kind, columns)] if how == "add" else lines[:-1] + [malformed_line(kind, columns)]
    (root / "data.csv").write_bytes(b"\n".join(lines) + b"\n")
    return release(root, chain, "replace-one" if how == "replace" else "add-remove")


def check_malformed(d: Outcome, dp: Outcome) -> None:
    """D releases; D′ stops (exit 2) with the one DataError line, names nothing of the data, writes no output,
    prints nothing D does not print, and its budget file keeps the failed run's whole charge."""
    problems = []
    if d.code != 0:
        problems.append(f"the release fails on D (exit {d.code})")
    if dp.code != 2:
        problems.append(f"exit {dp.code} on D′ with a malformed line (expected 2)")
    errors = [ln for ln in dp.text.replace(str(dp.root), "<DIR>").splitlines() if ln.startswith("error:")]
    if len(errors) != 1 or "not a well-formed CSV table" not in errors[0]:
        problems.append(f"not the one refusal for a malformed file: {errors}")
    elif re.search(r"\d", errors[0]) or SECRET.lower() in errors[0].lower():
        problems.append(f"the refusal names a line, a count or a value: {errors[0]}")
    if leaks(dp, SECRET):
        problems.append(f"the malformed line's text shows in: {leaks(dp, SECRET)}")
    extra = {ln for ln in masked_lines(dp) if not ln.startswith("error:")} - masked_lines(d)
    if extra:
        problems.append(f"lines printed on D′ only: {sorted(extra)}")
    written = [p.name for p in dp.root.iterdir() if p.name.startswith("out")]
    if written:
        problems.append(f"output written on D′: {written}")
    bd, bdp = budget_records(d) or [], budget_records(dp) or []
    if not bdp or bdp[-1][-1] != "failed (charged)" or [r[:-1] for r in bdp] != [r[:-1] for r in bd[: len(bdp)]]:
        problems.append(f"the budget file does not keep the failed run's charge: D {bd}, D′ {bdp}")
    assert not problems, "\n".join(problems) + f"\n--- D output ---\n{d.text}\n--- D′ output ---\n{dp.text}"


MALFORMED_CHAINS = {
    "synth-none": (lambda lab: synth_chain("none", "numpy"), MAIN, "add"),
    "synth-user-numpy": (lambda lab: synth_chain("user", "numpy", lab=lab), MAIN, "add"),
    "synth-user-duckdb": (lambda lab: synth_chain("user", "duckdb", lab=lab), MAIN, "add"),
    "synth-private": (lambda lab: synth_chain("private", "numpy", lab=lab), MAIN, "add"),
    "draw-kary": (
        lambda lab: lambda d: [["draw", "kary", d / "data.csv", "-o", d / "out.csv", *DRAW_ARGS["kary"]]],
        MAIN,
        "replace",
    ),
    "cube-binary": (lambda lab: cube_chain(lab, False), BINARY, "replace"),
    "mbde": (lambda lab: mbde_chain(lab.user_schema), MAIN, "add"),
}


@pytest.mark.parametrize("kind", MALFORMED)
@pytest.mark.parametrize("command", list(MALFORMED_CHAINS))
def test_malformed_line(lab, command, kind):
    make, columns, how = MALFORMED_CHAINS[command]
    chain = make(lab)
    d = lab.baseline(f"malformed-{command}", chain, columns, how)
    check_malformed(d, run_malformed(lab, chain, columns, kind, how))


@pytest.mark.slow
def test_malformed_line_spark(lab):
    """Spark's reader: the same rule, and no record text in any message (Spark's own logger included)."""
    from privsample.marginals.spark_engine import _java_home_ok, start_session

    if not _java_home_ok():
        pytest.skip("Spark needs Java 17+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start_session("local[2]").stop()
    chain = synth_chain("user", "spark", lab=lab)
    d = lab.baseline("malformed-spark", chain, MAIN, "add")
    check_malformed(d, run_malformed(lab, chain, MAIN, "extra-field", "add"))


# -- plan and public data ---------------------------------------------------------------------------------------
def test_plan_neighbour(lab, monkeypatch):
    """``plan`` reads the header alone: D and D′ give the same text, number for number (at a fixed machine speed,
    which the speed probe measures afresh each run)."""
    from privsample.api import plan as plan_module

    monkeypatch.setattr(plan_module, "machine_speed", lambda calibration: 1.0)

    def chain(d: Path) -> list:
        return [["plan", d / "data.csv", "--epsilon", "0.3,1"]]

    d = lab.run(chain, MAIN, budget=False)
    for record in ("outlier-number", "text-in-numeric"):
        dp = lab.run(chain, MAIN, RECORDS[record], budget=False)
        assert d.code == dp.code == 0, dp.text
        assert d.text.replace(str(d.root), "<DIR>") == dp.text.replace(str(dp.root), "<DIR>")


def test_public_neighbour(lab):
    """``--public``: a fixed public table P beside D or D′ (add/remove): the same comparisons as every release."""
    public = lab.public / "p.csv"
    write_table(public, MAIN, rows=base_rows()[:200])

    def chain(d: Path) -> list:
        return [synth_chain("user", "numpy", method="aim", lab=lab)(d)[0] + ["--public", public]]

    for record in ("unseen-category", "outlier-number"):
        lab.neighbours("synth-public", chain, MAIN, RECORDS[record], "add")


def test_public_is_not_the_private_table(lab):
    """The private table itself (a copy) as --public is refused before anything is charged."""

    def chain(d: Path) -> list:
        copy = d / "copy.csv"
        copy.write_bytes((d / "data.csv").read_bytes())
        return [synth_chain("user", "numpy", lab=lab)(d)[0] + ["--public", copy]]

    o = lab.run(chain, MAIN)
    assert o.code == 2 and "public table" in o.text, o.text
    assert budget_records(o) == [] and not (o.root / "out.csv").exists()


# -- person-level runs (--privacy-unit) -----------------------------------------------------------------------------
PEOPLE = ("person",) + MAIN
HEAVY_ROWS = 12  # the added person's rows: more than k


def person_rows(heavy: bool) -> list[dict[str, str]]:
    """D: the base records, two per person; D′: D and one more person with ``HEAVY_ROWS`` rows, each carrying a
    distinctive category and an outlier income (a neighbour under add/remove one person)."""
    rows = [dict(r, person=f"p{i // 2:04d}") for i, r in enumerate(base_rows())]
    if heavy:
        extra = dict(TYPICAL, person="HEAVY", color=TOKEN, income=str(OUTLIER))
        rows += [dict(extra) for _ in range(HEAVY_ROWS)]
    return rows


def person_chain(mode: str, k: int | None, lab: Lab) -> Chain:
    def chain(d: Path) -> list:
        argv = synth_chain("user" if mode == "user" else "none", "numpy", lab=lab)(d)[-1]
        argv = argv + ["--privacy-unit", "person"] + ([] if k is None else ["--max-rows-per-unit", k])
        return [argv]

    return chain


PERSON_CONFIGS = [("none", 3), ("none", None), ("user", 3)]


@pytest.mark.parametrize("mode, k", PERSON_CONFIGS, ids=[f"{m}-k{k or 'chosen'}" for m, k in PERSON_CONFIGS])
def test_person_neighbour(lab, mode, k):
    """Add/remove one person with more rows than k, under a budget file for people: the same comparisons as every
    release (the person's distinctive values nowhere, the printed lines and saved fields the same up to marked
    mechanism outputs, the same budget records)."""
    chain = person_chain(mode, k, lab)
    d, dp = same_kinds(
        lambda fresh: lab.run(chain, PEOPLE, how="person", rows=person_rows(False)),
        lambda fresh: lab.run(chain, PEOPLE, how="person", rows=person_rows(True)),
    )
    check_neighbours(d, dp, TOKEN)
    assert "add/remove one person" in d.text and "person" not in (d.root / "out.csv").read_text().splitlines()[0]


@pytest.mark.parametrize("mode", ["none", "user"])
def test_synth_auto_neighbour(lab, mode):
    """``--method auto``: the choice is a function of a noisy row count and public quantities; the same comparisons
    as every release (the chosen method and its reason are marked mechanism outputs)."""

    def chain(d: Path) -> list:
        argv = synth_chain(mode, "numpy", lab=lab)(d)[-1]
        i = argv.index("--method")
        return [argv[:i] + ["--method", "auto"] + argv[i + 2 :]]

    for record in ("unseen-category", "outlier-number"):
        lab.neighbours(f"synth-auto-{mode}", chain, MAIN, RECORDS[record], "add")


def test_discovered_kinds_reads_the_report():
    """The retry on a noisy type decision sees the kinds as the report prints them (marked), and nothing else."""
    text = (
        f"│ schema: type counts │ {OPEN}5{CLOSE} │ discrete Gaussian │\n"
        f"│ income │ {OPEN}categorical{CLOSE} │ {OPEN}6 categories{CLOSE} │ {OPEN}59%{CLOSE} │\n"
        f"│ tier   │ {OPEN}numeric{CLOSE}     │ {OPEN}[0, 9] in 10 bins{CLOSE} │  │\n"
    )
    assert discovered_kinds(Outcome(0, text, Path("."))) == {"income": "categorical", "tier": "numeric"}


def test_same_kinds_runs_both_again_on_a_noisy_type_flip():
    def report(kind: str) -> Outcome:
        return Outcome(0, f"│ income │ {OPEN}{kind}{CLOSE} │\n", Path("."))

    flips = iter(["categorical", "numeric"])  # D's first run flipped; the rerun did not
    d, dp = same_kinds(lambda fresh: report(next(flips)), lambda fresh: report("numeric"))
    assert discovered_kinds(d) == discovered_kinds(dp) == {"income": "numeric"}
    # a difference that persists (the record's doing) is handed to the comparison, which then fails
    d, dp = same_kinds(lambda fresh: report("categorical"), lambda fresh: report("numeric"))
    assert discovered_kinds(d) != discovered_kinds(dp)
