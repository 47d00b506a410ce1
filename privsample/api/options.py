"""What the research samplers' Python functions share with their commands: how an option is named in a
message, the checks of the arguments every function takes (the table, the schema, the seed), the warning for
seeded runs, and reading a table given in memory or as a file.

A function and its command raise the same one-line ``InputError`` for the same bad input; the message names
the option as the caller wrote it: ``python_option`` (``epsilon``, ``small_delta``) for Python,
``cli_option`` (``--epsilon``, ``--small-delta``) for the command line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from privsample.errors import InputError

OptionName = Callable[..., str]
"""How a front end names an option in a message: ``option(name)``, or ``option(name, value)`` for the option set to
a value (``True``: a switch turned on; a list or tuple: a list of names)."""


def python_option(name: str, value: Any = None) -> str:
    """An option as Python names it: the keyword argument itself (``epsilon``), with a value ``k=3``,
    ``skip_accuracy_check=True`` or ``categories=['a', 'b']``."""
    if value is None:
        return name
    return f"{name}={list(value)!r}" if isinstance(value, (list, tuple)) else f"{name}={value}"


def cli_option(name: str, value: Any = None) -> str:
    """An option as the command line names it: ``small_delta`` -> ``--small-delta``; with a value ``--k 3``, a
    switch alone (``--skip-accuracy-check``) and a list separated by ',' (``--categories a,b``)."""
    flag = "--" + name.replace("_", "-")
    if value is None or value is True:
        return flag
    return f"{flag} {','.join(map(str, value))}" if isinstance(value, (list, tuple)) else f"{flag} {value}"


def seeded_warning(seed: int) -> str:
    """The warning of a seeded run, in the words of ``make_noise(seed)`` (the command line prints its own)."""
    return (
        f"seed={seed}: using seeded NumPy noise; the output is NOT differentially private "
        "(reproducible experiments only)"
    )


def check_seed(seed: Any) -> int | None:
    """``seed`` as an int or None (an integer of Python or NumPy, not a bool), else ``InputError``."""
    if seed is None:
        return None
    import numpy as np

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer or None (got {seed!r})")
    return int(seed)


def check_integer(value: Any, name: str) -> int:
    """``value`` as an int (an integer of Python or NumPy, not a bool), else ``InputError``."""
    import numpy as np

    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer (got {value!r})")
    return int(value)


def check_number(value: Any, name: str) -> float:
    """``value`` as a float (a real number, not a bool), else ``InputError``."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number (got {value!r})")
    return float(value)


def check_data(data: Any) -> str | None:
    """'pandas' | 'arrow' | 'polars' for an in-memory table, None for a path; ``InputError`` for anything else
    (polars is imported only if ``data`` is a polars object)."""
    from privsample.data.frames import ACCEPTED, frame_kind

    kind = frame_kind(data)
    if kind is None and not isinstance(data, (str, os.PathLike)):
        raise InputError(f"expected {ACCEPTED}, not {type(data).__name__}")
    return kind


def check_csv_options(kind: str | None, delimiter: str | None, encoding: str | None) -> None:
    """``delimiter`` and ``encoding`` are a CSV file's: refused for an in-memory table (``kind`` not None)."""
    if kind is not None and (delimiter is not None or encoding is not None):
        raise InputError("delimiter and encoding apply to CSV files, not to an in-memory table")


def check_schema_argument(schema: Any, required: bool = False) -> None:
    """A ``Schema``, a schema file (str or path) or, unless ``required``, None."""
    from privsample.data.schema import Schema

    if schema is None and not required:
        return
    if not isinstance(schema, (Schema, str, os.PathLike)):
        raise InputError(f"schema must be a Schema or a schema file, not {type(schema).__name__}")


def as_path(value: Any) -> Any:
    """A str or path-like as a ``Path``; anything else unchanged."""
    return Path(value) if isinstance(value, (str, os.PathLike)) else value


__all__ = [
    "OptionName",
    "python_option",
    "cli_option",
    "seeded_warning",
    "check_seed",
    "check_integer",
    "check_number",
    "check_data",
    "check_csv_options",
    "check_schema_argument",
    "as_path",
]
