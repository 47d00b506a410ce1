"""Atomic output: write to a temporary file beside the target, then rename.

A failure part-way leaves no partial output file (non-negotiable 4). The renamed file gets the
permissions an ordinary write would give it -- the existing target's, or else the umask's default --
not the owner-only mode of ``tempfile``'s temporary files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from privsample.errors import InputError


@contextlib.contextmanager
def atomic_path(target: str | Path, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; rename it onto ``target`` on success."""
    target = Path(target)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
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
    try:
        yield tmp
        os.chmod(tmp, _final_mode(target, directory))
        if directory and target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        os.replace(tmp, target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
        raise


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


def atomic_write_bytes(target: str | Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
