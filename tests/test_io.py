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
    assert _mode(tmp_path / "model") == 0o755  # not mkdtemp's 0o700
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


def test_an_output_under_a_regular_file_is_bad_input(tmp_path):
    from privsample.errors import InputError

    (tmp_path / "data.csv").write_text("a\n1\n")
    with pytest.raises(InputError, match="data.csv is a file, not a folder"):
        atomic_write_text(tmp_path / "data.csv" / "out.csv", "x")
    assert (tmp_path / "data.csv").read_text() == "a\n1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any directory")
def test_an_output_in_a_read_only_folder_is_bad_input(tmp_path):
    from privsample.errors import InputError

    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match="cannot write"):
            atomic_write_text(ro / "out.csv", "x")
    finally:
        ro.chmod(0o755)
