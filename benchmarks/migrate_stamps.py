"""One-off: rewrite the stamps of ``benchmarks/results/stamps.json`` taken with the former code digest (the bytes
of every source file) as digests of the current rule (Python files by their syntax tree without docstrings; see
``benchmarks/freshness.py``), where the code they were taken from can be found in git history.

For each stamp whose digest is not the current rule's digest of today's files: walk the commits reachable from
``--ref`` (default ``main``), newest first, back to the day before the stamp's date. At each commit whose
``benchmarks/freshness.py`` lists the script, take the script's source files as that commit's ``SOURCES`` names
them and compute the former digest from the committed contents (``git show COMMIT:path``). The first commit where
it equals the stamp's digest holds exactly the code the results came from: the stamp becomes the current rule's
digest of those same files at that commit, and the entry records the commit as ``"commit"``. Where no commit
matches (the run used uncommitted code, or code older than the walk reaches) the entry is left as it is, so it
reads stale. A stamp that already is a current-rule digest (today's, or of a commit of the walk) is left alone, so
running it twice changes nothing; a ``"mixed"`` stamp stays never fresh.

The stamps are read and rewritten under the lock every stamping script takes; only entries unchanged since they
were read are rewritten. No benchmark is run, and nothing outside ``stamps.json`` is written.

    python benchmarks/migrate_stamps.py --dry-run    # what it would change
    python benchmarks/migrate_stamps.py              # rewrite the stamps
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freshness  # noqa: E402


#: suffixes the former digest left out (compiled files; never committed here, listed for completeness)
FORMER_SKIP = {".so", ".pyd", ".pyc", ".pyo", ".o", ".dll", ".dylib"}


class Git:
    """Read-only access to the committed trees of a repository, with every blob read once."""

    def __init__(self, root: Path):
        self.root = root
        self._cat = subprocess.Popen(
            ["git", "-C", str(root), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self._blobs: dict[str, bytes] = {}
        self._trees: dict[str, dict[str, str]] = {}

    def run(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True, text=True).stdout

    def commits(self, ref: str) -> list[tuple[str, datetime.date]]:
        """(commit, committer date in UTC) reachable from ``ref``, newest first."""
        out = []
        for line in self.run("log", "--format=%H %ct", ref).splitlines():
            sha, ts = line.split()
            out.append((sha, datetime.datetime.fromtimestamp(int(ts), datetime.timezone.utc).date()))
        return out

    def tree(self, commit: str) -> dict[str, str]:
        """path -> blob id of every file of ``commit``."""
        if commit not in self._trees:
            files = {}
            for line in self.run("ls-tree", "-r", "--full-tree", commit).splitlines():
                meta, path = line.split("\t", 1)
                _, kind, oid = meta.split()
                if kind == "blob":
                    files[path] = oid
            self._trees[commit] = files
        return self._trees[commit]

    def blob(self, oid: str) -> bytes:
        if oid not in self._blobs:
            self._cat.stdin.write(oid.encode() + b"\n")
            self._cat.stdin.flush()
            header = self._cat.stdout.readline().split()
            size = int(header[2])
            data = self._cat.stdout.read(size)
            self._cat.stdout.read(1)  # the newline after the contents
            self._blobs[oid] = data
        return self._blobs[oid]

    def close(self) -> None:
        self._cat.stdin.close()
        self._cat.wait()


def _sources_at(git: Git, commit: str, cache: dict[str, dict | None]) -> dict | None:
    """``SOURCES`` of ``benchmarks/freshness.py`` at ``commit`` (None if it has none), read once per version."""
    oid = git.tree(commit).get("benchmarks/freshness.py")
    if oid is None:
        return None
    if oid not in cache:
        module = types.ModuleType("freshness_at_commit")
        module.__file__ = str(git.root / "benchmarks" / "freshness.py")
        try:
            exec(compile(git.blob(oid), "freshness.py", "exec"), module.__dict__)
            cache[oid] = dict(module.SOURCES)
        except Exception:  # a version that does not run here: its SOURCES cannot be trusted
            cache[oid] = None
    return cache[oid]


def files_at(git: Git, commit: str, script: str, sources: dict) -> list[tuple[str, str]] | None:
    """(path, blob id) of the files whose contents made ``script``'s former digest at ``commit``, as the former
    ``source_files`` chose them (the script, each listed file, every file under each listed directory; compiled
    extensions and ``__pycache__`` left out). None if the script is not in that commit's tree or ``SOURCES``."""
    tree = git.tree(commit)
    script_path = f"benchmarks/{script}"
    if script not in sources or script_path not in tree:
        return None
    chosen = {script_path}
    for entry in sources[script]:
        entry = entry.rstrip("/")
        if entry in tree:
            chosen.add(entry)
        else:
            chosen.update(p for p in tree if p.startswith(entry + "/"))
    keep = [p for p in chosen if Path(p).suffix not in FORMER_SKIP and "__pycache__" not in p.split("/")]
    return sorted((p, tree[p]) for p in keep)


def migrate(root: Path, ref: str, log=print) -> tuple[dict[str, dict], list[tuple[str, str]]]:
    """The entries to rewrite (name -> new entry) and the ones left (name, why)."""
    git = Git(root)
    stamps = freshness.read_stamps(root)
    commits = git.commits(ref)
    sources_cache: dict[str, dict | None] = {}
    old_cache: dict[tuple, str] = {}
    new_cache: dict[tuple, str] = {}
    today: dict[str, str] = {}
    found: dict[tuple[str, str, str], tuple[str, str] | str] = {}  # (script, digest, date) -> (new, commit) | why
    for key in sorted({(e["script"], e["code_digest"], e["date"]) for e in stamps.values()}):
        script, stamped, date = key
        if script not in freshness.SOURCES:
            found[key] = f"{script} is not in freshness.SOURCES"
            continue
        if stamped == "mixed":
            found[key] = "taken from runs of different code versions"
            continue
        if script not in today:
            today[script] = freshness.code_digest(script, root)
        if stamped == today[script]:
            found[key] = "already the current rule's digest (fresh)"
            continue
        docs = set(freshness.DOCSTRINGS_READ.get(script, ()))
        since = datetime.date.fromisoformat(date) - datetime.timedelta(days=1)
        walked = 0
        for commit, day in commits:
            if day < since:
                continue
            sources = _sources_at(git, commit, sources_cache)
            files = files_at(git, commit, script, sources) if sources is not None else None
            if files is None:
                continue
            walked += 1
            ident = tuple(files)
            if ident not in old_cache:
                old_cache[ident] = freshness.digest((p, git.blob(oid).replace(b"\r\n", b"\n")) for p, oid in files)
            if (ident, script) not in new_cache:
                covered = ((p, freshness.source_code(p, git.blob(oid), p in docs)) for p, oid in files)
                new_cache[(ident, script)] = freshness.digest(covered)
            if stamped == new_cache[(ident, script)]:
                found[key] = f"already the current rule's digest, of {commit[:10]}"
                break
            if stamped == old_cache[ident]:
                found[key] = (new_cache[(ident, script)], commit)
                break
        else:
            found[key] = f"no commit of {ref} since {since} ({walked} looked at) has this code"
        res = found[key]
        log(f"{script} {stamped} of {date}: " + (f"{res[0]}, code of {res[1][:10]}" if isinstance(res, tuple) else res))
    git.close()
    changes, left = {}, []
    for name, entry in sorted(stamps.items()):
        res = found[(entry["script"], entry["code_digest"], entry["date"])]
        if isinstance(res, tuple):
            changes[name] = {**entry, "code_digest": res[0], "commit": res[1]}
        else:
            left.append((name, res))
    return changes, left


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=freshness.ROOT, help="the repository (default: this one)")
    ap.add_argument("--ref", default="main", help="the history to search (default: main)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    a = ap.parse_args(argv)
    root = a.root.resolve()
    before = freshness.read_stamps(root)
    changes, left = migrate(root, a.ref)
    for name, entry in changes.items():
        print(f"{name}: {before[name]['code_digest']} -> {entry['code_digest']} (commit {entry['commit'][:10]})")
    for name, why in left:
        print(f"{name}: left as it is ({why})")
    if a.dry_run or not changes:
        return 0
    with freshness.locked_stamps(root) as stamps:
        skipped = [n for n in changes if stamps.get(n) != before[n]]
        for name, entry in changes.items():
            if name not in skipped:
                stamps[name] = entry
    for name in skipped:
        print(f"{name}: restamped while this ran, left as it is now")
    print(f"{len(changes) - len(skipped)} stamps rewritten, {len(left) + len(skipped)} left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
