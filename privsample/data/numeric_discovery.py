"""Private numeric bounds for schema discovery (stand-in: wraps the log-scale bucket method of
``privsample.data.discovery``; to be replaced by the quantile-based method with the same interface).

Guarantee: (rho, delta)-approximate zCDP under add/remove-one-record neighbours (here rho-zCDP, no
delta is used): see ``privsample.data.discovery.private_schema`` (c) for the proof.
"""

from __future__ import annotations

import numpy as np

from privsample.data.schema import Numeric

__all__ = ["discover_numeric"]


def discover_numeric(name: str, x: np.ndarray, accountant, noise, *, rho: float, delta: float,
                     integer: bool, nullable: bool, n_hat: float, bins: int = 16,
                     notes: list[str] | None = None) -> tuple[Numeric, dict]:
    """Bounds of the finite numeric values ``x`` (one per record); spends exactly ``rho`` and no delta.

    This version may return a categorical column with only the catch-all when no bucket passes."""
    from privsample.data.discovery import _discover_numeric, _Scan

    x = np.asarray(x, dtype=np.float64)
    values, counts = np.unique(x, return_counts=True)
    sc = _Scan(0, np.asarray([repr(v) for v in values], dtype=object), counts.astype(np.int64), values)
    col = _discover_numeric(name, sc, accountant, noise, rho, integer, nullable, bins,
                            notes if notes is not None else [])
    return col, {}
