"""Marginal engines: the only code that reads records (NumPy in memory, DuckDB out of core)."""

from privsample.marginals.base import Clique, MarginalEngine
from privsample.marginals.numpy_engine import NumpyEngine

__all__ = ["Clique", "MarginalEngine", "NumpyEngine", "DuckDBEngine"]


def __getattr__(name: str):
    if name == "DuckDBEngine":  # imported lazily: duckdb is only needed for out-of-core tables
        from privsample.marginals.duckdb_engine import DuckDBEngine

        return DuckDBEngine
    raise AttributeError(name)
