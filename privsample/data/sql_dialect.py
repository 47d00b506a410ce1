"""How the cleaning and coding SQL is spelled in DuckDB and in Spark SQL (``Dialect``; DuckDB's literals,
identifiers and NaN test are ``sql_str``, ``sql_ident``, ``sql_isnan``), and the cleaning itself
(``clean_sql``): one text for ``read_table``'s DuckDB path (``privsample.data.table``), the DuckDB marginal
engine and the Spark engine, so all of them see exactly the values ``read_table`` sees (the rules of
:mod:`privsample.data.cells`).
"""

from __future__ import annotations

import re
from typing import Sequence

from privsample.data.cells import NUMBER_RE, WHITESPACE
from privsample.data.formats import char_class, dropped_chars, number_shape

_WS = " || ".join(f"chr({ord(c)})" for c in WHITESPACE)
# strftime tokens as Java (Spark) pattern letters; a one-letter field reads one or two digits, ``a`` AM/PM in either
# case (Spark parses case-insensitively), ``MMM``/``MMMM`` English month names (Spark's locale is US)
_JAVA = {"%Y": "yyyy", "%m": "M", "%d": "d", "%H": "H", "%M": "m", "%S": "s", "%f": "SSSSSS", "%b": "MMM"}
_JAVA.update({"%B": "MMMM", "%I": "h", "%p": "a", "%P": "a", "%-d": "d", "%-m": "M", "%-H": "H", "%-I": "h"})
_JAVA.update({"%:z": "xxx", "%z": "xx"})
_JAVA_TOKENS = sorted(_JAVA, key=len, reverse=True)  # the longest first: %:z before %z, %-d before %d


def year_shape(pattern: str) -> str:
    """A regex (the same in RE2 and Java) that a text in the ``strftime`` ``pattern`` matches only when its
    ``%Y`` has exactly 4 digits (any other field: anything)."""
    parts = re.split(r"(%[-:]?[a-zA-Z])", pattern)
    meta = set(".^$*+?()[]{}|\\/")
    out = [
        "[0-9]{4}" if p == "%Y" else ".+?" if p.startswith("%") else "".join("\\" + c if c in meta else c for c in p)
        for p in parts
        if p
    ]
    return "".join(out)


def java_pattern(pattern: str) -> str:
    """A ``strftime`` pattern (``privsample.data.formats.DateFormat``) as a Java (Spark) datetime pattern;
    letters are quoted."""
    out, i = [], 0
    while i < len(pattern):
        token = next((t for t in _JAVA_TOKENS if pattern.startswith(t, i)), None)
        if token:
            out.append(_JAVA[token])
            i += len(token)
        else:
            c = pattern[i]
            out.append(f"'{c}'" if c.isalpha() else c)
            i += 1
    return "".join(out)


def sql_str(s: str) -> str:
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def sql_ident(s: str) -> str:
    """A quoted SQL identifier."""
    return '"' + str(s).replace('"', '""') + '"'


def sql_isnan(x: str) -> str:
    """SQL: is the DOUBLE ``x`` NaN. Not ``isnan(x)``: DuckDB 2.0 folds that to false for Parquet
    columns whose min/max statistics exclude NaN (so NaN would escape as a value)."""
    return f"(NOT isfinite({x}) AND NOT isinf({x}))"


class Dialect:
    """DuckDB SQL; ``SparkDialect`` overrides what Spark SQL spells differently."""

    name = "duckdb"
    code_types = ((255, "UTINYINT"), (65535, "USMALLINT"), (2**32 - 1, "UINTEGER"))

    def lit(self, s: str) -> str:
        return sql_str(s)

    def ident(self, s: str) -> str:
        return sql_ident(s)

    def isnan(self, x: str) -> str:
        return sql_isnan(x)

    def number(self, v: str) -> str:
        """The DOUBLE that text ``v`` denotes under ``NUMBER_RE``, else NULL."""
        return f"CASE WHEN regexp_full_match({v}, {self.lit(NUMBER_RE)}, 'i') THEN TRY_CAST({v} AS DOUBLE) END"

    def parse(self, v: str, fmt) -> str:
        """The DOUBLE that text ``v`` denotes in ``fmt`` (``privsample.data.formats``: a date, time or formatted
        number, read as ``fmt.parse`` reads it), else NULL; ``fmt`` None: ``number``."""
        if fmt is None:
            return self.number(v)
        if hasattr(fmt, "pattern"):
            return self.datetime(v, fmt)
        symbols = self.lit(char_class(dropped_chars(fmt)))
        cleaned = f"regexp_replace({v}, {symbols}, '', 'g')"
        core = f"regexp_replace({cleaned}, '[()-]', '', 'g')"
        shape = self.lit(number_shape(fmt))
        sign = f"CASE WHEN {cleaned} LIKE '%-%' OR {cleaned} LIKE '%(%' THEN -1.0 ELSE 1.0 END"
        value = f"TRY_CAST(replace({core}, {self.lit(fmt.decimal)}, '.') AS DOUBLE)"
        return f"CASE WHEN regexp_full_match({cleaned}, {shape}) THEN {sign} * {value} END"

    def datetime(self, v: str, fmt) -> str:
        pattern = fmt.parse_pattern
        if fmt.kind == "time":
            v, pattern = f"('1970-01-01 ' || {v})", "%Y-%m-%d " + pattern
        seconds = f"epoch(try_strptime({v}, {self.lit(pattern)}))"
        if "%Y" in fmt.pattern:  # DuckDB's %Y also reads '24' (the year 24); pandas and Spark read 4 digits only
            seconds = f"CASE WHEN regexp_full_match({v}, {self.lit(year_shape(pattern))}) THEN {seconds} END"
        return f"floor({seconds} / {fmt.unit})" if fmt.integer else seconds

    def code_type(self, size: int) -> str:
        return next((t for top, t in self.code_types if size - 1 <= top), "BIGINT")

    def trim(self, v: str) -> str:
        """``v`` as text, stripped of ``WHITESPACE`` at both ends."""
        return f"trim(CAST({v} AS VARCHAR), {_WS})"


class SparkDialect(Dialect):
    name = "spark"
    code_types = ((127, "TINYINT"), (32767, "SMALLINT"), (2**31 - 1, "INT"))

    def parse(self, v: str, fmt) -> str:
        if fmt is None or hasattr(fmt, "pattern"):
            return super().parse(v, fmt)
        symbols = self.lit(char_class(dropped_chars(fmt)))
        cleaned = f"regexp_replace({v}, {symbols}, '')"
        core = f"regexp_replace({cleaned}, '[()-]', '')"
        shape = self.lit("^(?:" + number_shape(fmt) + ")\\z")
        sign = f"CASE WHEN {cleaned} LIKE '%-%' OR {cleaned} LIKE '%(%' THEN -1.0 ELSE 1.0 END"
        value = f"TRY_CAST(replace({core}, {self.lit(fmt.decimal)}, '.') AS DOUBLE)"
        return f"CASE WHEN {cleaned} RLIKE {shape} THEN {sign} * {value} END"

    def datetime(self, v: str, fmt) -> str:
        pattern = java_pattern(fmt.pattern)
        if fmt.has_offset:  # +HHMM and +HH as +HH:MM, read with 'xxx': pandas and DuckDB read all three for %z, %:z
            v = f"regexp_replace({v}, '([+-][0-9]{{2}})([0-9]{{2}})$', '$1:$2')"
            v = f"regexp_replace({v}, '([+-][0-9]{{2}})$', '$1:00')"
            pattern = pattern.replace("xxx", "xx").replace("xx", "xxx")
        if fmt.kind == "time":
            v, pattern = f"concat('1970-01-01 ', {v})", "yyyy-MM-dd " + pattern
        seconds = f"unix_micros(try_to_timestamp({v}, {self.lit(pattern)})) / 1e6"
        return f"floor({seconds} / {fmt.unit})" if fmt.integer else seconds

    def lit(self, s: str) -> str:
        return "'" + str(s).replace("\\", "\\\\").replace("'", "\\'") + "'"

    def ident(self, s: str) -> str:
        return "`" + str(s).replace("`", "``") + "`"

    def isnan(self, x: str) -> str:
        return f"isnan({x})"

    def trim(self, v: str) -> str:
        return f"trim(BOTH {self.lit(WHITESPACE)} FROM CAST({v} AS STRING))"

    def number(self, v: str) -> str:
        # Java regexes: \z (``$`` would also match before a final U+2028); Spark's cast rejects '+nan'.
        pattern = self.lit(f"(?i)^(?:{NUMBER_RE})\\z")
        text = f"CASE WHEN lower({v}) IN ('+nan', '-nan') THEN 'NaN' ELSE {v} END"
        return f"CASE WHEN {v} RLIKE {pattern} THEN TRY_CAST({text} AS DOUBLE) END"


DUCKDB, SPARK = Dialect(), SparkDialect()


def clean_value(src: str, kind: str, na_values: Sequence[str], dialect: Dialect = DUCKDB) -> str:
    """SQL: the cleaned value of the expression ``src`` of kind ``kind``, as :func:`clean_sql` cleans it (a
    function of the value alone, so it may run on a column's distinct values after they are grouped)."""
    d = dialect
    na = ", ".join(d.lit(v) for v in na_values)
    if kind == "text":
        t = d.trim(src)
        return f"CASE WHEN {t} IN ({na}) THEN NULL ELSE {t} END" if na else t
    if kind == "float":
        x = f"CAST({src} AS DOUBLE)"
        return f"CASE WHEN {d.isnan(x)} THEN NULL ELSE {x} END"
    return src


def clean_sql(
    from_sql: str, columns: Sequence[tuple[str, str, str]], na_values: Sequence[str], dialect: Dialect = DUCKDB
) -> str:
    """SQL selecting ``columns`` of ``from_sql`` cleaned as ``read_table`` cleans them (in any dialect;
    ``privsample.data.table.clean_select`` is this in DuckDB): text trimmed of ``WHITESPACE``, with
    ``na_values`` as NULL; floats as DOUBLE with NaN as NULL; integers and booleans as they are.
    ``columns``: (source expression, output name, kind: 'text' | 'int' | 'float' | 'bool')."""
    d = dialect
    na = ", ".join(d.lit(v) for v in na_values)
    inner, outer = [], []
    for src, name, kind in columns:
        q = d.ident(name)
        if kind == "text":
            inner.append(f"{d.trim(src)} AS {q}")
            outer.append(f"CASE WHEN {q} IN ({na}) THEN NULL ELSE {q} END AS {q}" if na else q)
        elif kind == "float":
            inner.append(f"CAST({src} AS DOUBLE) AS {q}")
            outer.append(f"CASE WHEN {d.isnan(q)} THEN NULL ELSE {q} END AS {q}")
        else:
            inner.append(f"{src} AS {q}")
            outer.append(q)
    return f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {from_sql}) AS _raw"


__all__ = [
    "Dialect",
    "SparkDialect",
    "DUCKDB",
    "SPARK",
    "clean_sql",
    "clean_value",
    "java_pattern",
    "year_shape",
    "sql_ident",
    "sql_isnan",
    "sql_str",
]
