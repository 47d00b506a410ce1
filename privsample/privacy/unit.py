"""The privacy unit: the neighbouring relation every mechanism of a run is calibrated to.

``ROW`` (the default): neighbouring tables differ by one record (add/remove). ``PrivacyUnit(column, k)``:
neighbouring tables differ by all the records of one person (the records sharing a value of ``column``), of which
contribution bounding keeps at most ``k`` (drawn per person independently of the others), so after bounding
neighbours differ by adding or removing at most k records.

Lemma. Let f have sensitivity D in a norm ||.|| under add/remove one record. Then under add/remove up to k records
its sensitivity is at most k D. Proof: if D' = D plus (or minus) records r_1..r_j, j <= k, the tables
D_0 = D, D_i = D_(i-1) plus (minus) r_i form a path of j single-record steps, and by the triangle inequality
||f(D) - f(D')|| <= sum_i ||f(D_(i-1)) - f(D_i)|| <= j D <= k D.

Consequences, with sensitivity k D in place of D (``PrivacyUnit.sensitivity``):
* Gaussian mechanism: (discrete) Gaussian noise with sigma = k D / sqrt(2 rho) on a query of L2 sensitivity D per
  record is rho-zCDP person-level (Bun & Steinke 2016, "Concentrated differential privacy: simplifications,
  extensions, and lower bounds", the Gaussian mechanism; Canonne, Kamath & Steinke 2020 for the discrete Gaussian).
* Exponential mechanism: scores of sensitivity D per record, run at epsilon with score sensitivity k D
  (Gumbel scale 2 k D / epsilon), is epsilon-DP person-level, hence epsilon^2/8-zCDP (bounded range; Cesar &
  Rogers 2021, the bound the accountant already charges).
* Parallel parts (disjoint cells each with its own draw, as the median tree's levels): calibrated to k D, each
  part is (epsilon c_j / k)-DP when the person has c_j of their records in it, and sum_j c_j <= k, so the whole
  is still epsilon-DP; equivalently, the row-level mechanism is (epsilon / k)-DP and group privacy over the path
  above gives epsilon. (For zCDP the same path gives k^2 rho / k^2 = rho: group privacy, Bun & Steinke 2016.)
* Thresholded release (the stability histogram of schema discovery): one person can add up to k records to values
  already present (an L2 change <= k: the Gaussian case) and bring new values whose counts c_1..c_j sum to at most
  k. With the values already present at person-level sigma, the output differs from the smaller table's only on
  the event that a new value passes, of probability at most sum_i P[c_i + Z > tau] (union bound); the threshold
  is the smallest tau keeping the worst case of that sum <= delta_col, which is max(P[k + Z > tau],
  k P[1 + Z > tau]) (one value held k times, or k values held once: ``privsample.privacy.sparse_histogram``).
  Hence (rho, delta_col)-approximate zCDP person-level; at k = 1 it is the row-level threshold.

The accountant (``privsample.privacy.accountant``) holds the unit, states it in the ledger and refuses a spend whose
noise is not calibrated to it. The unit is a public choice of the user (the column name and k), not a fact read off
the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PrivacyUnit", "ROW", "ROW_NEIGHBOURS"]

ROW_NEIGHBOURS = "add/remove one record"


@dataclass(frozen=True)
class PrivacyUnit:
    """Who is protected: one record (``column`` None, ``max_rows`` 1) or one person, identified by ``column``, with
    at most ``max_rows`` records kept per person (module docstring)."""

    column: str | None = None
    max_rows: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.max_rows, bool) or not isinstance(self.max_rows, int) or self.max_rows < 1:
            raise ValueError(f"max_rows must be an integer >= 1, got {self.max_rows!r}")
        if self.column is None and self.max_rows != 1:
            raise ValueError("a record-level unit has max_rows 1; a person-level unit names its column")
        if self.column is not None and not (isinstance(self.column, str) and self.column):
            raise ValueError(f"the privacy unit's column must be a non-empty string, got {self.column!r}")

    @property
    def is_row(self) -> bool:
        return self.column is None

    def sensitivity(self, delta_row: float) -> float:
        """The sensitivity under this unit of a query whose add/remove-one-record sensitivity is ``delta_row``:
        ``max_rows * delta_row`` (the lemma of the module docstring); ``delta_row`` itself at k = 1."""
        return self.max_rows * delta_row

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation in words, as the ledger states it."""
        return self.neighbouring_with(str(self.max_rows))

    def neighbouring_with(self, k_text: str) -> str:
        """``neighbouring`` with k written as ``k_text`` (marked as a mechanism output when k was chosen from the
        noisy unit profile: ``privsample.privacy.released``)."""
        if self.is_row:
            return ROW_NEIGHBOURS
        return f"add/remove one person (≤ {k_text} rows of {self.column})"

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "max_rows": self.max_rows}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "PrivacyUnit":
        """The unit a saved ledger states; ``ROW`` for a ledger saved without one."""
        if not d:
            return ROW
        return cls(d.get("column"), int(d.get("max_rows", 1)))


ROW = PrivacyUnit()
