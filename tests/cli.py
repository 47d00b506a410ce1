"""The command line run in-process by the tests: its exit code and what it printed."""

from __future__ import annotations

from privsample.cli import main


def invoke(argv, capsys=None) -> tuple[int, str, str]:
    """``privsample ARGV`` in this process: (exit code, stdout, stderr); the output is read from ``capsys`` (pytest's
    fixture), empty without it. A ``SystemExit`` without an integer code counts as 1."""
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    if capsys is None:
        return code, "", ""
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def run(argv, capsys=None) -> tuple[int, str]:
    """(exit code, stderr) of ``privsample ARGV``: where the command line's messages go."""
    code, _, err = invoke(argv, capsys)
    return code, err
