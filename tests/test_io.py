"""Atomic output (privsample/io.py): nothing partial on failure, ordinary permissions on success."""

from __future__ import annotations

import os
import stat

import pytest

from privsample.io import atomic_path, atomic_write_text


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_files_and_directories_get_the_umask_default(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "out.csv", "a\n1\n")
        with atomic_path(tmp_path / "model", directory=True) as tmp:
            (tmp / "model.json").write_text("{}")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "out.csv") == 0o644  # not tempfile's 0o600
    assert _mode(tmp_path / "model") == 0o755    # not mkdtemp's 0o700
    assert (tmp_path / "model" / "model.json").read_text() == "{}"


def test_an_existing_target_keeps_its_permissions(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o640


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "out.csv") as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
