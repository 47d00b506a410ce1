"""``Release``: what a research sampler returns to Python (the cube sampler, the samplers from
distributions, MBDE): the released table and everything public about how it was made.

Everything in a ``Release`` is part of the release: the draws (a pandas DataFrame), the ledger of the
mechanism's spend, its guarantee, the fixed per-record rule by which records were read, and notes made of
public values only (part sizes under replace-one neighbours, where n is public; warnings computed from the
budget). Nothing in it is an exact statistic of the data beyond what the guarantee covers.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from privsample.privacy.ledger import Ledger


@dataclass
class Release:
    """A private release from Python: ``table`` (the draws, a pandas DataFrame), ``ledger`` (every spend),
    ``guarantee`` (in words, with the neighbouring relation), ``rule`` (how each record was read) and
    ``notes`` (public facts printed by the command line, e.g. part sizes). ``private`` is False for seeded
    runs (NOT PRIVATE).

    Example (a seeded, NOT private, k-ary draw; a notebook shows the release as HTML)::

        >>> import warnings
        >>> import pandas as pd
        >>> import privsample
        >>> df = pd.DataFrame({"colour": ["red"] * 60 + ["blue"] * 40})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the seeded-noise warning
        ...     release = privsample.draw_kary(df, "colour", categories=["red", "blue"], epsilon=1, seed=0)
        >>> release.table.shape, release.private
        ((1, 1), False)
        >>> "Privacy ledger" in release._repr_html_()
        True
    """

    table: Any
    ledger: Ledger
    guarantee: str
    rule: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def private(self) -> bool:
        return self.ledger.private

    def __repr__(self) -> str:
        shape = getattr(self.table, "shape", None)
        flag = "" if self.private else " NOT PRIVATE"
        return (
            f"Release({shape[0] if shape else '?'} rows x {shape[1] if shape else '?'} columns; {self.guarantee}){flag}"
        )

    def _repr_html_(self) -> str:
        parts = [f"<p><strong>Release</strong>: {html.escape(self.guarantee)}</p>"]
        if not self.private:
            parts.append("<p><strong>NOT PRIVATE: seeded noise (reproducible experiment only).</strong></p>")
        if hasattr(self.table, "head"):
            parts.append(self.table.head(10).to_html(index=False))
        parts.append(self.ledger._repr_html_())
        if self.rule:
            parts.append(f"<p>{html.escape(self.rule)}</p>")
        parts += [f"<p>{html.escape(n)}</p>" for n in self.notes]
        return "".join(parts)
