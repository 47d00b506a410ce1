"""Errors that the command line turns into a one-line message and exit code 2, and the library's warnings."""

from __future__ import annotations


class PrivsampleError(Exception):
    """Bad input or a refused request: shown to the user as one line, exit code 2."""


class InputError(PrivsampleError):
    """The input (file, table, schema, option) is malformed or inconsistent."""


class ResourceLimitError(PrivsampleError):
    """A request would exceed a memory/size limit; refused before any budget is spent."""


class DataError(InputError):
    """Bad input found in the records themselves, after the data was opened (a line that is not a well-formed
    CSV record, text not valid in its encoding).

    Its message names no line, field count or value: the refusal depends on the records, so it tells only that
    the file is not well-formed, and a release run charged to a budget file stays charged (probing is not free).
    ``detail`` holds the reader's own description (with line numbers and record text): NOT private, for the
    data owner only (``privsample check`` prints it); release paths never show it."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.detail = detail


class DiscoveryLossWarning(UserWarning):
    """Private schema discovery lost something in a column: it kept at most one value of it, or its bounds clip
    more than 5% of its values (a noisy estimate). The message names the column, the loss and what to do; the
    losses of a fit are also in ``Synthesizer.losses``."""


class IdentifierFormatWarning(UserWarning):
    """An identifier column's format was widened (more digits, the same prefix) for the fresh ids of an output, so
    that a synthetic id equal to a real one is negligible. The message names the column and the format used."""


class FreeTextWarning(UserWarning):
    """A free-text column (``type: text``) is not synthesized and is left out of the output. The message names the
    column and how to keep its frequent values."""


class ColumnsLeftOutWarning(UserWarning):
    """A reviewed schema leaves out columns of the table: they are not synthesized and not in the output. The message
    names them (column names, public) and how to keep them."""


class SeededNoiseWarning(UserWarning):
    """A run uses seeded NumPy noise (a ``seed`` for its noise): reproducible, NOT differentially private."""


class ContributionBoundWarning(UserWarning):
    """A person-level run keeps at most k rows of each person: the message states k and the noisy share of the rows
    that bounding removes (those rows are not synthesized)."""


class PrivacyUnitHint(UserWarning):
    """A table has a column named like a person's identifier and the run protects records, not people: the message
    suggests ``--privacy-unit`` (from the column names alone)."""
