"""How a text cell is read, the same way by ``read_table`` (pandas), the DuckDB engine and the Spark engine:
surrounding ``WHITESPACE`` is stripped, and a text is a number when it matches ``NUMBER_RE`` (any case).

Python applies these rules in :mod:`privsample.data.table` and :mod:`privsample.data.encoding`; the SQL
engines spell the same rules in :mod:`privsample.data.sql_dialect`.
"""

WHITESPACE = " \t\n\r\f\v"
# Numbers in text (Python's ``re`` and DuckDB's RE2 read it the same way; Spark's Java regex too).
NUMBER_RE = r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?|inf|infinity|nan)"

__all__ = ["NUMBER_RE", "WHITESPACE"]
