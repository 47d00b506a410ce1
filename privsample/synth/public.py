"""Public data for the adaptive mechanisms: a table the user declares public, coded by the private table's schema.

Following Fuentes, Mullins, McKenna, Miklau & Sheldon (2024), "Joint Selection: Adaptively Incorporating Public
Information for Private Synthetic Data", AIM, MST and PPSyn-DP may measure a marginal of a public table instead of
the private one (``privsample.synth.aim``, ``mst``, ``ppsyn``). This module reads and codes that table, holds
it in its own marginal engine, and gives JAM's score of a public candidate (``public_scores``, sensitivity 2c).

Guarantee. The public table is public by the user's declaration: reading, coding and measuring it costs no
privacy budget, and messages may name its values. It is coded by the same per-record rule as the private table
(``encode(..., release=True)``: values outside the schema are clipped, sent to the catch-all or the null code,
or the record is left out), so the two tables share one domain. The ledger lists it as "public input, no privacy
cost" with its name, number of rows and a SHA-256 fingerprint of its codes (``Accountant.note_public``).

A public table must not overlap the private one: a record in both is published by the user's declaration, and
the guarantee does not cover it. The private table itself is refused as public (``check_not_private``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from privsample.errors import InputError
from privsample.marginals.base import MarginalEngine

PUBLIC_ONLY = ("aim", "mst", "ppsyn")  # the methods that accept public data


@dataclass
class PublicData:
    """A public table's marginals (``engine``), its name, its number of coded rows and a fingerprint."""

    engine: MarginalEngine
    name: str
    rows: int
    fingerprint: str

    def describe(self) -> dict[str, Any]:
        from privsample.privacy.accountant import PUBLIC_NOTE

        return {"name": self.name, "rows": self.rows, "fingerprint": self.fingerprint, "privacy": PUBLIC_NOTE}

    def check_domain(self, domain) -> None:
        """``InputError`` unless the public table is coded on ``domain`` (same columns, same sizes, same order)."""
        mine = [(a, int(n)) for a, n in zip(self.engine.domain.attributes, self.engine.domain.shape)]
        theirs = [(a, int(n)) for a, n in zip(domain.attributes, domain.shape)]
        if mine != theirs:
            raise InputError(f"public table {self.name}: its schema differs from the private table's")


def public_scores(cliques, weights, model_err, answers, shares, total: float) -> np.ndarray:
    """JAM's score of each public candidate: c(cl) * (||x_cl - mu_cl||_1 - ||x_cl - total * share_cl||_1).

    ``model_err``: ||x_cl - mu_cl||_1 per clique; ``shares``: the public marginal as shares of its rows.
    Sensitivity: x_cl changes in one cell by 1 per added/removed record, so each L1 term changes by <= 1 and
    the score by <= 2 c(cl) (``privsample.synth.aim.selection_sensitivity``)."""
    return np.array(
        [
            weights[cl] * (e - np.abs(answers[cl].ravel() - total * shares[cl]).sum())
            for cl, e in zip(cliques, model_err)
        ]
    )


def fingerprint(codes: Mapping[str, np.ndarray], names) -> str:
    """'sha256:HEX' of the coded table: column names and codes (as little-endian int64), in schema order."""
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode("utf-8") + b"\0")
        h.update(np.ascontiguousarray(codes[name], dtype="<i8").tobytes())
    return "sha256:" + h.hexdigest()


def public_data(codes: Mapping[str, np.ndarray], domain, name: str) -> PublicData:
    """``PublicData`` of already coded records on ``domain``; ``InputError`` when there are none."""
    from privsample.marginals import NumpyEngine

    eng = NumpyEngine(codes, domain)
    if eng.n == 0:
        raise InputError(f"public table {name}: no records (a public table needs at least one record the schema holds)")
    return PublicData(engine=eng, name=name, rows=int(eng.n), fingerprint=fingerprint(codes, domain.attributes))


def read_public(
    source, schema, *, other: bool = False, delimiter: str | None = None, encoding: str | None = None
) -> PublicData:
    """The public table ``source`` (a CSV/Parquet path, or an in-memory table as ``Synthesizer.fit`` takes)
    coded as the private table is, by the reviewed ``schema`` (with ``other``: ``release_domain``) and the release
    rule.

    ``InputError`` (one line naming the public table) for a column of the schema missing from it, no rows, or
    any other reading problem."""
    from privsample.data.encoding import encode, read_codes, release_domain
    from privsample.data.frames import frame_kind, frame_table

    schema = release_domain(schema, other)
    kind = frame_kind(source)
    if kind is None and not isinstance(source, (str, Path)):
        raise InputError(f"public table: expected a CSV/Parquet path or a DataFrame, not {type(source).__name__}")
    name = Path(source).name if kind is None else f"(in-memory {type(source).__name__})"
    try:
        if kind is None:
            codes = read_codes(Path(source), schema, na_values=schema.na_values, delimiter=delimiter, encoding=encoding)
        else:
            df = frame_table(source, na_values=schema.na_values, label="the public table")
            codes = encode(df, schema, release=True, compact=True)
    except InputError as exc:
        raise _public_error(exc, source, name) from None
    return public_data(codes, schema.domain(), name)


def _public_error(exc: InputError, source, name: str) -> InputError:
    """``exc`` as one line that says it is about the public table."""
    text = str(exc)
    for prefix in (f"{source}: ", f"{name}: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return InputError(f"public table {name}: {text}")


def check_public_file(path) -> None:
    """``InputError`` unless ``path`` is an existing CSV/Parquet file (before anything is read)."""
    from privsample.data.table import table_format

    try:
        table_format(path)
    except InputError as exc:
        raise _public_error(exc, path, Path(path).name) from None


__all__ = [
    "PublicData",
    "public_data",
    "public_scores",
    "read_public",
    "check_public_file",
    "fingerprint",
    "PUBLIC_ONLY",
]
