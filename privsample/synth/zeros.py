"""Structural zeros: cells of the domain that cannot occur, from the schema's public ``forbid`` and ``require`` lists.

A schema's ``forbid`` entries (``privsample.data.schema.parse_forbid``) name combinations of values
of two or more columns that cannot occur (``{sex: Male, relationship: Wife}``); its ``require`` entries
(order constraints such as ``discharged >= admitted``, ``privsample.data.require.zero_codes``) forbid the bins,
and pairs of bins, where a comparison cannot hold. They are public, like
the rest of the schema, so using them costs no privacy budget. The synthesizers use them in three ways,
all post-processing of noisy measurements and public facts:

* every entry's columns are a clique of the model (:attr:`StructuralZeros.cliques`), so the junction
  tree and its size checks include them;
* in every model clique covering an entry, the log-potential of a forbidden cell is fixed at ``NEG``
  (``exp(NEG)`` is exactly 0 in float64) and the mirror-descent gradient there is zeroed, so the
  model gives those cells probability exactly 0 however long it is fitted;
* a noisy count of a forbidden cell (identity or weighted identity query, or a partition group made
  only of forbidden cells) is replaced by 0 before estimation: the true count is 0.

Sampling then never draws a forbidden combination: the conditional probability of a forbidden value
is exactly 0 (``tree_sampler``). Potentials stay finite, so a constrained model saves and loads like
any other.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Sequence

import numpy as np

Clique = tuple[str, ...]

NEG = -1e9  # log-potential of a forbidden cell: exp(NEG + anything a fit reaches) is exactly 0


@dataclass(frozen=True)
class StructuralZeros:
    """Forbidden cells on a domain: ``entries`` is a list of (columns, codes forbidden per column);
    an entry forbids every cell of the product of its code sets."""

    domain: object  # mbi Domain
    entries: tuple[tuple[Clique, tuple[tuple[int, ...], ...]], ...]

    @classmethod
    def from_schema(cls, schema, domain) -> "StructuralZeros | None":
        """The zeros of ``schema.forbid`` and ``schema.require`` on ``domain`` (None if there are none). Codes are
        the schema's, which a catch-all or null code added by the release path leaves unchanged."""
        from privsample.data.forbid import forbid_codes
        from privsample.data.require_entries import require_codes

        if schema is None or not (getattr(schema, "forbid", None) or getattr(schema, "require", None)):
            return None
        order = {a: i for i, a in enumerate(domain.attributes)}
        entries = []
        for codes in forbid_codes(schema) + require_codes(schema):
            cols = tuple(sorted(codes, key=order.__getitem__))
            entries.append((cols, tuple(tuple(codes[a]) for a in cols)))
        return cls(domain, tuple(entries))

    @classmethod
    def noise_born(cls, schema, domain) -> "StructuralZeros | None":
        """Codes of a privately discovered schema that discovery's noisy counts did not show: the null code the
        release domain adds to every column although the noisy count of the records without a value (categorical)
        or without a number (numeric, date) did not pass (``nullable`` False in ``schema.discovery``), a
        categorical column's catch-all when the records its released counts leave are within twice their noise
        (``_noise_born_other``), and a code column's values between its kept ones whose counts did not pass
        (``unsupported``). Probability 0, so noise alone puts
        no synthetic record there (no empty value, no invented code). Post-processing of released counts (public
        after discovery); None if none."""
        if schema is None or getattr(schema, "provenance", None) != "private" or not getattr(schema, "discovery", None):
            return None
        report = {str(c.get("name")): c for c in schema.discovery.get("columns", []) if isinstance(c, dict)}
        entries = []
        for col in schema.columns:
            info = report.get(col.name, {})
            kinds = ("numeric", "categorical", "catch-all", "date", "datetime", "time")
            if info.get("kind") not in kinds or col.name not in domain.attributes:
                continue
            codes = []
            if info.get("nullable") is False and getattr(col, "null_code", None) is not None:
                codes.append(int(col.null_code))
            if _noise_born_other(info, col, schema.discovery.get("n_hat")):
                codes.append(int(col.other_code))
            if info.get("binning") == "unit":  # a code's values between the kept ones that its counts did not show
                codes += [int(round(v - col.lower)) for v in info.get("unsupported", []) if col.lower <= v <= col.upper]
            codes = sorted({c for c in codes if 0 <= c < int(domain[col.name])})
            if codes:
                entries.append(((col.name,), (tuple(codes),)))
        return cls(domain, tuple(entries)) if entries else None

    @classmethod
    def for_fit(cls, schema, domain) -> "StructuralZeros | None":
        """Every structural zero a fit on ``schema`` uses: the schema's ``forbid`` list and the noise-born null
        codes (:meth:`noise_born`)."""
        parts = [z for z in (cls.from_schema(schema, domain), cls.noise_born(schema, domain)) if z is not None]
        if not parts:
            return None
        return cls(domain, tuple(e for z in parts for e in z.entries))

    @property
    def cliques(self) -> list[Clique]:
        """Every entry's columns (domain order), each once."""
        return list(dict.fromkeys(cols for cols, _ in self.entries))

    def mask(self, clique: Sequence[str]) -> np.ndarray | None:
        """Boolean table over ``clique`` (its axis order): True at the cells some entry inside it forbids;
        None if no entry lies inside ``clique``."""
        clique = tuple(clique)
        out = None
        for cols, codes in self.entries:
            if not set(cols) <= set(clique):
                continue
            if out is None:
                out = np.zeros(tuple(int(self.domain[a]) for a in clique), dtype=bool)
            axes = [
                np.asarray(codes[cols.index(a)]) if a in cols else np.arange(out.shape[i]) for i, a in enumerate(clique)
            ]
            out[np.ix_(*axes)] = True
        return out

    def zero_measurements(self, measurements) -> list:
        """The measurements with every noisy count of a forbidden cell set to 0 (post-processing)."""
        from mbi import LinearMeasurement
        from mbi.marginal_loss import DatavectorQuery, WeightedQuery

        from privsample.synth.partition import PartitionQuery

        out = []
        for M in measurements:
            m = self.mask(M.clique)
            if m is None:
                out.append(M)
                continue
            flat = m.ravel()
            y = np.array(M.noisy_measurement, dtype=float).ravel()
            if isinstance(M.query, (DatavectorQuery, WeightedQuery)) and y.size == flat.size:
                y[flat] = 0.0
            elif isinstance(M.query, PartitionQuery):
                labels = np.asarray(M.query.labels)
                allowed = np.bincount(labels, weights=(~flat).astype(float), minlength=int(M.query.k))
                y[allowed[: y.size] == 0] = 0.0  # a group made only of forbidden cells
            else:
                out.append(M)
                continue
            out.append(LinearMeasurement(y, tuple(M.clique), stddev=M.stddev, query=M.query))
        return out


def with_zeros(cliques: Sequence[Clique], zeros: StructuralZeros | None) -> list[Clique]:
    """``cliques`` plus the zeros' cliques (for size checks of the model a fit would build)."""
    out = [tuple(c) for c in cliques]
    return out + (zeros.cliques if zeros is not None else [])


__all__ = ["NEG", "StructuralZeros", "with_zeros"]


def _noise_born_other(info: dict, col, n_hat) -> bool:
    """Whether a categorical column's catch-all is noise-born: the noisy number of records its released categories
    (and missing values) leave, n_hat less their noisy counts, is under twice the sd of that sum (sigma of each
    count, sqrt of their number). Then the column holds (about) no value discovery did not release, and the catch-all
    gets probability 0. Post-processing of released counts."""
    counts, sigma = info.get("counts"), info.get("sigma")
    if getattr(col, "kind", None) != "categorical" or col.other_code is None or not counts or not sigma or not n_hat:
        return False
    parts = [float(v) for v in counts.values()]
    if info.get("nullable") and info.get("null_count") is not None:
        parts.append(float(info["null_count"]))
    rest = float(n_hat) - sum(parts)
    return rest < 2.0 * float(sigma) * math.sqrt(len(parts))
