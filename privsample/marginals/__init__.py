"""Marginal engines: the only code that reads records (NumPy in memory, DuckDB out of core, Spark)."""

from privsample.marginals.base import Clique, MarginalEngine
from privsample.marginals.numpy_engine import NumpyEngine

__all__ = ["Clique", "MarginalEngine", "NumpyEngine", "DuckDBEngine", "SparkEngine"]


def __getattr__(name: str):
    # imported lazily: duckdb is only needed out of core, pyspark only with Spark
    if name == "DuckDBEngine":
        from privsample.marginals.duckdb_engine import DuckDBEngine

        return DuckDBEngine
    if name == "SparkEngine":
        from privsample.marginals.spark_engine import SparkEngine

        return SparkEngine
    raise AttributeError(name)
