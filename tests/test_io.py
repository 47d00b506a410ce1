"""Atomic output (privsample/io.py): nothing partial on failure, ordinary permissions on success."""

from __future__ import annotations

import os
import stat
from pathlib import Path

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


def test_stale_temporaries_of_the_same_output_are_removed_and_nothing_else(tmp_path):
    from privsample.io import remove_stale_temporaries

    stale_file, stale_dir = tmp_path / ".out.csv.abcd_123.tmp", tmp_path / ".out.csv.zz9zz9zz.tmp"
    stale_file.write_text("partial")
    stale_dir.mkdir()
    (stale_dir / "model.json").write_text("{}")
    kept = [".out.csv.abcd1234.tmp.keep", ".other.csv.abcd1234.tmp", ".out.csv.ab.tmp", "out.csv.abcd1234.tmp",
            ".out.csv.ABCD1234.tmp", ".xout.csv.abcd1234.tmp"]  # fmt: skip
    for name in kept:
        (tmp_path / name).write_text("not ours")
    atomic_write_text(tmp_path / "out.csv", "a\n1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "out.csv"])
    assert remove_stale_temporaries(tmp_path / "out.csv") == []


def test_a_live_writers_temporary_is_kept(tmp_path):
    from privsample.io import remove_stale_temporaries

    for directory in (False, True):
        with atomic_path(tmp_path / "out", directory=directory) as tmp:
            assert remove_stale_temporaries(tmp_path / "out") == [] and tmp.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_the_temporary_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    """``kill -9`` while writing: the temporary file stays (nothing can remove it then); the next write to the same
    output removes it."""
    import subprocess
    import sys
    import time

    code = (
        "import sys, time\n"
        "from privsample.io import atomic_path\n"
        "with atomic_path(sys.argv[1]) as tmp:\n"
        "    tmp.write_text('partial'); print('ready', flush=True); time.sleep(60)\n"
    )
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "m.zip")], cwd=root, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        left = [p.name for p in tmp_path.iterdir()]
        assert len(left) == 1 and left[0].startswith(".m.zip.")
        from privsample.io import remove_stale_temporaries

        assert remove_stale_temporaries(tmp_path / "m.zip") == []  # still being written: kept
    finally:
        proc.kill()
        proc.wait()
    time.sleep(0.1)
    assert len(list(tmp_path.iterdir())) == 1  # the killed writer's temporary is left behind
    atomic_write_text(tmp_path / "m.zip", "model")
    assert [p.name for p in tmp_path.iterdir()] == ["m.zip"]
