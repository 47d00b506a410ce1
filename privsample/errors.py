"""Errors that the command line turns into a one-line message and exit code 2."""

from __future__ import annotations


class PrivsampleError(Exception):
    """Bad input or a refused request: shown to the user as one line, exit code 2."""


class InputError(PrivsampleError):
    """The input (file, table, schema, option) is malformed or inconsistent."""


class ResourceLimitError(PrivsampleError):
    """A request would exceed a memory/size limit; refused before any budget is spent."""
