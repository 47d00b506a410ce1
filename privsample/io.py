"""Output files: checked before any work, written to a temporary file beside the target, then renamed.

:func:`check_paths` refuses, before anything is read, an output that would land on an input or on another
output, or in a folder that cannot be written. A failure part-way leaves no partial output file; the
renamed file gets the permissions an ordinary write would give it -- the existing target's, or else the
umask's default -- not the owner-only mode of ``tempfile``'s temporary files.

Tables are written as CSV, gzipped CSV or Parquet by the target's extension (``write_table`` at once,
``write_chunks`` streaming); :func:`check_output_size` refuses, before anything is written, a table that would not
fit on the disk.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path

from privsample.errors import InputError

PathLike = str | Path

_written: list[Path] = []  # targets renamed into place by this process (see ``written``)


def written() -> list[Path]:
    """The outputs completed so far by :func:`atomic_path` in this process (for an honest message when a run
    is interrupted)."""
    return list(_written)


@contextlib.contextmanager
def atomic_path(target: str | Path, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the target's directory (``.NAME.XXXXXXXX.tmp``, held under an advisory lock while
    it is written); rename it onto ``target`` on success. Temporary files of ``target`` left by an earlier run that
    was killed (``kill -9``: nothing could remove them) are removed first (``remove_stale_temporaries``)."""
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(target)
        if directory:
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
        else:
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
            os.close(fd)
            tmp = Path(name)
    except OSError as exc:  # a folder that cannot be made or written (or a file where a folder should be)
        blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a folder" if blocker else f"{exc.strerror or exc} ({exc.filename or parent})"
        raise InputError(f"cannot write {target}: {why}") from None
    lock = _hold(tmp)
    try:
        yield tmp
        os.chmod(tmp, _final_mode(target, directory))
        if directory and target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        os.replace(tmp, target)
        _written.append(target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
        raise
    finally:
        if lock is not None:
            os.close(lock)


STALE_SECONDS = 3600  # without advisory locks (not POSIX): a temporary file untouched this long is stale


def _temporaries(target: Path) -> Iterator[Path]:
    """The temporary files (or folders) ``atomic_path`` makes for ``target``: ``.NAME.`` + tempfile's 8 random
    characters + ``.tmp``, beside it. Nothing else matches."""
    import re

    pattern = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")
    parent = target.parent if str(target.parent) else Path(".")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if pattern.fullmatch(entry.name) and not entry.is_symlink():
            yield Path(entry.path)


def _hold(path: Path) -> int | None:
    """An exclusive advisory lock on ``path`` (a file or a folder), held until the descriptor returned is closed
    (or the process ends, however it ends); None where there are no such locks."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _in_use(path: Path) -> bool:
    """Whether another live writer holds ``path`` (its lock); without locks, whether it was touched recently."""
    try:
        import fcntl
    except ImportError:
        import time

        try:
            return time.time() - path.stat().st_mtime < STALE_SECONDS
        except OSError:
            return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True  # cannot tell: leave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def remove_stale_temporaries(target: str | Path) -> list[Path]:
    """Remove the temporary files of ``target`` that an earlier, killed run of ``atomic_path`` left beside it (only
    names of that exact pattern for that exact output, and only those no live writer holds); returns them."""
    removed = []
    for path in _temporaries(Path(target)):
        if _in_use(path):
            continue
        try:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _final_mode(target: Path, directory: bool) -> int:
    """The existing target's permission bits, else what open()/mkdir() would give a new one."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mask = os.umask(0o077)  # read the umask (restoring it at once; meanwhile it errs on the private side)
        os.umask(mask)
        return (0o777 if directory else 0o666) & ~mask


def atomic_write_text(target: str | Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)


# -- checks before any work --------------------------------------------------------------------------


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: equal once links are resolved, or one inode (hard links)."""
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):  # a symbolic-link loop: compare what exists below
        pass
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve()) and not same_file(path, folder)
    except (OSError, RuntimeError):
        return False


def _existing_ancestor(folder: Path) -> Path:
    """The nearest of ``folder`` and its parents that exists (as anything: folder or file)."""
    folder = folder.absolute()
    while not os.path.lexists(folder) and folder.parent != folder:
        folder = folder.parent
    return folder


def _writable(folder: Path) -> str | None:
    """None if a file can be created in ``folder`` (tried, not guessed from the mode bits), else why not."""
    try:
        fd, name = tempfile.mkstemp(prefix=".privsample-", suffix=".tmp", dir=folder)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    os.close(fd)
    os.unlink(name)
    return None


def check_paths(
    inputs: Mapping[str, PathLike | None],
    outputs: Mapping[str, PathLike | None],
    *,
    folders: Mapping[str, Collection[str]] | None = None,
    tables: Collection[str] = (),
    note: Callable[[str], None] | None = None,
) -> None:
    """Refuse (:class:`InputError`, one line naming the options) outputs that cannot be written safely;
    then create missing output folders, telling ``note`` about each.

    ``inputs`` and ``outputs`` map an option's name as the user typed it (``INPUT``, ``--schema``,
    ``-o/--output``) to its path (None: not given). Refused: an output that is the same file as an input or
    as another output (after resolving symbolic links; hard links too), an output that is an existing
    folder, an output under a regular file or in a folder where no file can be created. ``folders`` names
    the outputs written as a folder, replaced whole, with the file names such a folder may already hold
    (an existing folder holding anything else is refused, as is any other path inside it). ``tables`` names the
    outputs written as a table: one whose extension no writer serves is refused (``check_table_output``); ``-``
    among them is standard output, not a file.

    Nothing is read or written but a probe file in each output's folder (created and removed at once) and
    the missing folders, made only once every check has passed."""
    folders = dict(folders or {})
    given_in = [(k, Path(v)) for k, v in inputs.items() if v is not None]
    given_out = [(k, Path(v)) for k, v in outputs.items() if v is not None and not (k in tables and is_stdout(v))]
    paths = [(k, p, False) for k, p in given_in] + [(k, p, True) for k, p in given_out]
    _refuse_same_files(paths)
    _refuse_folder_clashes(given_out, paths, folders)
    for label, path in given_out:
        if label in tables:
            check_table_output(path, label)
    missing = _missing_output_folders(given_out, folders)
    _create_folders(missing, note)


def _refuse_same_files(paths: list[tuple[str, Path, bool]]) -> None:
    """Refuse two of ``paths`` (label, path, is an output) that are the same file, one of them an output."""
    for i, (ka, a, a_out) in enumerate(paths):
        for kb, b, b_out in paths[i + 1 :]:
            if (a_out or b_out) and same_file(a, b):
                raise InputError(
                    f"{ka} and {kb} are the same file ({b}): an output must not overwrite an input or another output"
                )


def _refuse_folder_clashes(
    given_out: list[tuple[str, Path]], paths: list[tuple[str, Path, bool]], folders: Mapping[str, Collection[str]]
) -> None:
    """For each output written as a folder (in ``folders``): refuse any other of ``paths`` inside it, then an
    existing folder holding files other than the ones it may hold."""
    for label, folder in given_out:
        if label not in folders:
            continue
        for other, p, _ in paths:
            if other != label and _inside(p, folder):
                raise InputError(
                    f"{other} ({p}) lies inside the folder {label} ({folder}), which is replaced when written"
                )
        if folder.is_dir():
            extra = sorted(set(os.listdir(folder)) - set(folders[label]))
            if extra:
                shown = ", ".join(extra[:3]) + (", ..." if len(extra) > 3 else "")
                raise InputError(
                    f"{label} {folder} is an existing folder holding other files ({shown}); it "
                    "would be replaced: give a new or empty folder"
                )


def _missing_output_folders(
    given_out: list[tuple[str, Path]], folders: Mapping[str, Collection[str]]
) -> dict[Path, tuple[str, Path]]:
    """Refuse, output by output, a file output that is a folder, a parent that lies under a regular file or
    is in a folder where no file can be created; return the missing parent folders (each with the first
    output's label and its parent as typed), in the order met. Creates nothing."""
    missing: dict[Path, tuple[str, Path]] = {}
    for label, path in given_out:
        if label not in folders and path.is_dir():
            raise InputError(f"{label} {path} is a folder: give a file name")
        parent = path.absolute().parent
        base = _existing_ancestor(parent)
        if not base.is_dir():
            raise InputError(
                f"cannot create the output folder {path.parent} for {label}: {base} is a file, not a folder"
            )
        why = _writable(base)
        if why is not None:
            raise InputError(f"cannot write {label} {path}: the folder {base} is not writable ({why})")
        if base != parent:
            missing.setdefault(parent, (label, path.parent))
    return missing


def _create_folders(missing: Mapping[Path, tuple[str, Path]], note: Callable[[str], None] | None) -> None:
    """Create the ``missing`` output folders, telling ``note`` about each; a failure is one ``InputError``."""
    for parent, (label, shown) in missing.items():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the output folder {shown} for {label}: {exc.strerror or exc}") from None
        if note is not None:
            note(f"created the folder {shown} for {label}")


# -- tables ----------------------------------------------------------------------------------------------


def table_kind(path: str | Path) -> str:
    """The output format of ``path`` by its extension: "parquet", "csv.gz" or "csv"."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return "parquet"
    return "csv.gz" if "".join(path.suffixes[-2:]).lower().endswith(".gz") else "csv"


STDOUT = "-"
"""A table output named ``-`` is written as CSV to standard output."""


def is_stdout(path: str | Path | None) -> bool:
    """Whether a table output ``path`` is standard output (``-``)."""
    return path is not None and str(path) == STDOUT


def output_label(path: str | Path) -> str:
    """An output as messages name it: ``-`` is standard output."""
    return "standard output" if is_stdout(path) else str(path)


TABLE_SUFFIXES = (".csv", ".txt", ".csv.gz", ".txt.gz", ".gz", ".parquet", ".pq")
"""The extensions a table writer serves (no extension: CSV)."""


def check_table_output(path: str | Path, label: str = "-o/--output") -> None:
    """Refuse (``InputError``, before any work) a table output whose extension no writer serves (``-o out.xlsx``
    would get CSV text under that name). The path alone is read."""
    p = Path(path)
    last, two = p.suffix.lower(), "".join(p.suffixes[-2:]).lower()
    if not last or last in TABLE_SUFFIXES or two in TABLE_SUFFIXES:
        return
    raise InputError(
        f"{label} {p}: no writer for '{last}' files; name the output .csv, .csv.gz or .parquet (nothing was written)"
    )


def write_table(df, path: str | Path) -> None:
    """Write CSV (or Parquet by extension) atomically: temp file, then rename."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if table_kind(path) == "parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, compression="gzip" if table_kind(path) == "csv.gz" else None)


def _arrow_schema(df):
    """The Parquet schema of every chunk, fixed by the first: a column of text or of missing values only
    is a string column, a nullable integer column an int64 one; with pandas' metadata (the dtypes, so that
    ``Int64`` or ``boolean`` is read back as itself)."""
    import pyarrow as pa

    base = pa.Schema.from_pandas(df, preserve_index=False)
    fields = [pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f for f in base]
    return pa.schema(fields, metadata=base.metadata)


def write_chunks(chunks, path: str | Path, on_chunk=None) -> int:
    """Write an iterable of DataFrames (same columns) as one table, CSV, .csv.gz or Parquet by extension,
    streaming: one chunk in memory at a time. Atomic (temporary file, then rename); returns the number of
    rows. Running out of disk space is an ``InputError`` and leaves no file. ``on_chunk(rows_so_far)``
    is called after each chunk."""
    import errno
    import gzip

    if is_stdout(path):
        return _write_stdout(chunks, on_chunk)
    path = Path(path)
    kind = table_kind(path)
    rows = 0
    try:
        with atomic_path(path) as tmp:
            if kind == "parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq

                writer = None
                try:
                    for df in chunks:
                        if writer is None:
                            schema = _arrow_schema(df)
                            writer = pq.ParquetWriter(tmp, schema)
                        writer.write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False))
                        rows += len(df)
                        on_chunk and on_chunk(rows)
                finally:
                    if writer is not None:
                        writer.close()
            else:
                first = True
                with (
                    gzip.open(tmp, "wt", newline="", encoding="utf-8", compresslevel=GZIP_LEVEL)
                    if kind == "csv.gz"
                    else open(tmp, "w", newline="", encoding="utf-8")
                ) as fh:
                    for df in chunks:
                        df.to_csv(fh, index=False, header=first)
                        first = False
                        rows += len(df)
                        on_chunk and on_chunk(rows)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise InputError(f"not enough disk space to write {path} (nothing was written)") from None
        raise
    return rows


def _write_stdout(chunks, on_chunk=None) -> int:
    """Write the chunks as CSV to standard output (nothing else goes there); the number of rows. A reader that
    closes it early (``| head``) ends the write with one ``InputError``."""
    import sys

    rows, first = 0, True
    try:
        for df in chunks:
            df.to_csv(sys.stdout, index=False, header=first, lineterminator="\n")
            first = False
            rows += len(df)
            on_chunk and on_chunk(rows)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail again
        os.close(devnull)
        raise InputError("standard output was closed before every row was written") from None
    return rows


GZIP_LEVEL = 6  # zlib's default: on synthetic Adult, 1.6x faster than level 9 for a 4% larger file


def free_bytes(path: str | Path) -> int:
    """Free disk space where ``path`` would be written (its nearest existing ancestor directory)."""
    import shutil

    p = Path(path).absolute().parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def _human(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} PB"


FLOAT_BYTES = 18  # a float as CSV writes a decoded value: about 17 significant digits and a point
PACKED = {"csv": 1.0, "csv.gz": 10.0, "parquet": 20.0}  # how much smaller than CSV a format is, at best (about)


def value_bytes(column) -> float:
    """The bytes of one value of ``column`` in CSV, from public facts alone: a schema column's categories (their
    mean length, quotes included), an integer column's bounds (the wider), any other number ``FLOAT_BYTES``; a
    column known by its name alone (a ``str``): 1, the least a value takes."""
    kind = getattr(column, "kind", None)
    if kind == "categorical":
        labels = [*column.categories, *([column.other] if column.other is not None else [])]
        sizes = [len(x.encode("utf-8")) + (2 + x.count('"') if any(c in x for c in ',"\r\n') else 0) for x in labels]
        return sum(sizes) / len(sizes) if sizes else 0.0
    if kind == "numeric":
        if column.integer:
            return float(max(len(str(int(column.lower))), len(str(int(column.upper)))))
        return float(FLOAT_BYTES)
    return 1.0


def estimate_output_bytes(columns, rows: int, path: str | Path) -> float:
    """Bytes that ``rows`` rows of ``columns`` (schema columns, or column names when the schema is not known yet)
    would take at ``path`` (its format by extension): the header, then per row each value (``value_bytes``) and
    its delimiter, CSV divided by the format's best packing (``PACKED``). Public quantities only: the rows asked or
    a noisy count, the schema or the names; never the records."""
    columns = list(columns)
    header = sum(len(str(getattr(c, "name", c)).encode("utf-8")) + 1 for c in columns)
    per_row = sum(value_bytes(c) + 1 for c in columns)
    return (header + int(rows) * per_row) / PACKED[table_kind(path)]


def check_output_size(columns, rows: int, path: str | Path) -> None:
    """Refuse (``InputError``) ``rows`` rows of ``columns`` that would not fit in the free disk space at ``path``
    (``estimate_output_bytes``), stating the size they would take. Standard output is not checked."""
    if is_stdout(path):
        return
    need, free = estimate_output_bytes(columns, rows, path), free_bytes(path)
    if need > free:
        raise InputError(
            f"{rows:,} rows would take about {_human(need)} in {Path(path).name}, more than the "
            f"{_human(free)} free on its disk: pass a smaller --rows"
        )
