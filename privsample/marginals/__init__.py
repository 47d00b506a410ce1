"""Marginal engines: the only code that reads records (NumPy in memory, DuckDB out of core)."""

from privsample.marginals.base import Clique, MarginalEngine
from privsample.marginals.numpy_engine import NumpyEngine

__all__ = ["Clique", "MarginalEngine", "NumpyEngine"]
