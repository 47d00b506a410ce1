"""Where the tests find the benchmark data, and the skip when they are absent.

The benchmark data (UCI Adult raw and discretised, ...) are not in the repository: they are read from
``../shared/data/`` beside the project root, or from the folder named by ``PRIVSAMPLE_SHARED_DATA``.
On a plain clone without them, the tests that need them are skipped with a reason; the rest run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("PRIVSAMPLE_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def _reason(missing: list[str]) -> str:
    return (
        f"benchmark data not found: {SHARED_DATA / missing[0]} (the tests read ../shared/data/ or "
        "$PRIVSAMPLE_SHARED_DATA; see the README)"
    )


def needs_shared(*names: str) -> pytest.MarkDecorator:
    """A ``skipif`` marker for tests that read these files of the benchmark data."""
    missing = [n for n in names if not (SHARED_DATA / n).exists()]
    return pytest.mark.skipif(bool(missing), reason=_reason(missing) if missing else "")


def shared_file(name: str) -> Path:
    """The path of a benchmark data file; skips the calling test when it is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(_reason([name]))
    return path


@pytest.fixture
def public_files(tmp_path):
    """(private CSV, public CSV, reviewed schema) of the small table of ``tests.test_cli``: the public-data tests'."""
    import yaml

    from tests.test_cli import small_schema, small_table

    csv, pub, sch = tmp_path / "data.csv", tmp_path / "public.csv", tmp_path / "schema.yaml"
    small_table(300, 0).to_csv(csv, index=False)
    small_table(200, 1).to_csv(pub, index=False)
    sch.write_text(yaml.safe_dump(small_schema()))
    return csv, pub, sch
