"""Value formats of text columns: dates, datetimes, times of day and formatted numbers, read and written back.

A *format* turns a column's text into numbers and numbers back into text of the same look, so that such a column
is a numeric column of the schema (bounds, bins, the grid of private discovery) and comes back as it came in:

* ``DateFormat``: a ``strftime`` pattern. A date is a number of days since 1970-01-01, a datetime a number of
  seconds since 1970-01-01 00:00 UTC (with an offset in the text: the instant it names), a time of day a number
  of seconds since midnight. Written back with the same pattern; a pattern with an offset writes every value at
  one fixed offset (``offset``, e.g. ``+01:00``); ``%:z`` is an offset written with a colon (``+01:00``).
* ``NumberFormat``: a display pattern in the spreadsheet style (``$#,##0.00``, ``#.##0,00 €``, ``0.0%``,
  ``#,##0.00;(#,##0.00)`` for negatives in parentheses). ``12%`` is the number 12 (the number shown).

Private discovery decides a column's format from noisy counts of public classes of values
(``privsample.data.format_classes``). Nothing here reads records on its own: these are functions of values, used
by the mechanisms and the encoders.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timedelta, timezone
from typing import Sequence

import numpy as np
import pandas as pd

from privsample.data.cells import WHITESPACE
from privsample.errors import InputError

__all__ = [
    "DateFormat",
    "NumberFormat",
    "value_format",
    "TEMPORAL_UNIT",
    "NUMBER_SYMBOLS",
    "dropped_chars",
    "number_shape",
    "char_class",
]

SECONDS_PER_DAY = 86400
TEMPORAL_UNIT = ("date", "datetime", "time")  # the kinds of ``DateFormat``
_EPOCH = pd.Timestamp("1970-01-01")


# -- dates, datetimes and times of day ----------------------------------------------------------------------------
def _temporal_kind(pattern: str) -> str:
    has_date = any(t in pattern for t in ("%Y", "%d", "%-d", "%m", "%-m", "%b", "%B"))
    has_time = any(t in pattern for t in ("%H", "%-H", "%I", "%-I", "%M", "%S"))
    if not (has_date or has_time):
        raise InputError(f"date format '{pattern}' has no date or time field (%Y %m %d %H %M %S)")
    return "datetime" if has_date and has_time else "date" if has_date else "time"


def _offset(text: str | None) -> timezone | None:
    if text is None:
        return None
    if text == "Z":
        return timezone.utc
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", text)
    if not m or int(m.group(2)) > 23 or int(m.group(3)) > 59:
        raise InputError(f"offset '{text}' is not of the form +HH:MM, -HHMM or Z")
    sign = 1 if m.group(1) == "+" else -1
    return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))


@dataclass(frozen=True)
class DateFormat:
    """A date, datetime or time-of-day pattern (``strftime``; ``%:z`` an offset with a colon; ``%-d``, ``%-I``
    a day or 12-hour clock hour written without a leading zero, read with or without one; ``%P`` am/pm in lower
    case, read in either case as ``%p`` is), with the offset a pattern with ``%z``/``%:z`` writes at (``offset``:
    ``+01:00``, ``Z``; default UTC)."""

    pattern: str
    offset: str | None = None

    def __post_init__(self):
        _temporal_kind(self.pattern)
        _offset(self.offset)

    @property
    def kind(self) -> str:
        return _temporal_kind(self.pattern)

    @property
    def unit(self) -> int:
        """Seconds per unit of the column's numbers: a day (dates), a minute (no seconds shown), else a second."""
        if self.kind == "date":
            return SECONDS_PER_DAY
        return 1 if "%S" in self.pattern else 60

    @property
    def integer(self) -> bool:
        """Whole units, unless fractions of a second are shown (``%f``)."""
        return "%f" not in self.pattern

    @property
    def has_offset(self) -> bool:
        return "%z" in self.pattern or "%:z" in self.pattern

    def spec(self) -> str:
        return self.pattern

    @property
    def parse_pattern(self) -> str:
        """The pattern as the parsers read it (pandas, DuckDB's ``strptime``): ``%z`` for ``%:z`` (both read
        either form), ``%d`` for ``%-d`` (one or two digits either way), ``%p`` for ``%P`` (either case)."""
        return re.sub(r"%-([dmHI])", r"%\1", self.pattern.replace("%:z", "%z").replace("%P", "%p"))

    def offset_seconds(self) -> int:
        """Seconds the written offset is ahead of UTC (0 without an offset in the pattern)."""
        if not self.has_offset:
            return 0
        return int((_offset(self.offset) or timezone.utc).utcoffset(None).total_seconds())

    def parse(self, values: Sequence) -> np.ndarray:
        """float64 numbers of the values (days, or seconds), NaN where a value does not parse."""
        s = pd.Series(np.asarray(values, dtype=object), dtype=object).map(
            lambda v: v.strip(WHITESPACE) if isinstance(v, str) else v
        )
        fmt = self.parse_pattern
        if self.has_offset:  # an offset is +HH:MM or +HHMM, never 'Z' (as the SQL engines read %z)
            s = s.map(lambda v: None if isinstance(v, str) and v.endswith("Z") else v)
        if self.kind == "time":
            t = pd.to_datetime(s, format=fmt, errors="coerce")
            sec = (t - t.dt.normalize()).dt.total_seconds().to_numpy(dtype=np.float64, na_value=np.nan)
            return np.floor(sec / self.unit) if self.integer else sec
        t = pd.to_datetime(s, format=fmt, errors="coerce", utc=self.has_offset)
        if self.has_offset:
            t = t.dt.tz_localize(None)
        sec = (t - _EPOCH).dt.total_seconds().to_numpy(dtype=np.float64, na_value=np.nan)
        return np.floor(sec / self.unit) if self.integer else sec

    def value(self, text: str) -> float:
        """The number of one value (a bound or constant written by a person); ``InputError`` if it does not parse
        in this pattern or as ISO 8601."""
        x = self.parse([text])[0]
        if math.isnan(x) and self.kind != "time":
            t = pd.to_datetime(pd.Series([str(text)]), errors="coerce", utc=True, format="ISO8601")[0]
            if not pd.isna(t):
                x = (t.tz_localize(None) - _EPOCH).total_seconds() / self.unit
        if math.isnan(x):
            raise InputError(f"'{text}' is not a {self.kind} in the format '{self.pattern}'")
        return float(x)

    def write(self, x: np.ndarray) -> np.ndarray:
        """Object array of text (None where ``x`` is NaN)."""
        x = np.asarray(x, dtype=np.float64)
        ok = np.isfinite(x)
        seconds = np.where(ok, x, 0.0) * self.unit
        t = pd.Series(pd.to_datetime(np.round(seconds * 1e6).astype(np.int64), unit="us"))
        if self.kind == "time":
            t = _EPOCH + (t - t.dt.normalize())
        pattern = self.pattern
        if self.has_offset:
            tz = _offset(self.offset) or timezone.utc
            t = t.dt.tz_localize("UTC").dt.tz_convert(tz)
            colon = "%:z" in pattern
            pattern = pattern.replace("%:z", "%z")
        text = _strftime(t, pattern)
        if self.has_offset and colon:  # +0100 -> +01:00 (strftime's %z has no colon)
            text = np.array([_colon_offset(v) for v in text], dtype=object)
        text[~ok] = None
        return text

    def text(self, x: float) -> str:
        return str(self.write(np.array([x]))[0])


def _strftime(t: pd.Series, pattern: str) -> np.ndarray:
    """``t.dt.strftime(pattern)`` with ``%-d``, ``%-m``, ``%-H``, ``%-I`` (no leading zero) and ``%P`` (lower-case
    am/pm) written the same on every platform (the C library's ``strftime`` may know neither)."""
    marked = re.sub(r"%-([dmHI])", "\x01%\\1", pattern).replace("%P", "\x02%p\x03")
    text = t.dt.strftime(marked)
    if "\x01" in marked:
        text = text.str.replace(r"\x01(?:0(?=\d))?", "", regex=True)
    if "\x02" in marked:
        text = text.str.replace(r"\x02(\w*)\x03", lambda m: m.group(1).lower(), regex=True)
    return text.to_numpy(dtype=object)


def _colon_offset(v: str) -> str:
    m = re.search(r"([+-]\d{2})(\d{2})$", v)
    return v[: m.start()] + m.group(1) + ":" + m.group(2) if m else v


# -- formatted numbers ----------------------------------------------------------------------------------------------
PREFIXES = ("", "$", "€", "£", "¥")
SUFFIXES = ("", "%", " %", "€", " €")
GROUPS = ("", ",", ".", " ", "'", "\u00a0", "\u202f")
DECIMALS = (".", ",")
MAX_DECIMALS = 3  # classes by digits after the separator: 0, 1, 2, 3 or more


@dataclass(frozen=True)
class NumberFormat:
    """How a number is shown: ``prefix``/``suffix`` symbols, the ``group`` (thousands) and ``decimal`` separators,
    ``decimals`` digits after the separator, negatives in parentheses (``parens``)."""

    prefix: str = ""
    suffix: str = ""
    group: str = ""
    decimal: str = "."
    decimals: int = 0
    parens: bool = False

    def __post_init__(self):
        if self.decimal not in DECIMALS or self.group == self.decimal or self.group not in GROUPS:
            raise InputError(f"number format: group '{self.group}' and decimal '{self.decimal}' separators")
        if any(c.isdigit() for c in self.prefix + self.suffix):
            raise InputError("number format: a prefix or suffix cannot hold digits")

    def spec(self) -> str:
        """The display pattern (``$#,##0.00``)."""
        num = ("#" + self.group + "##0") if self.group else "0"
        if self.decimals:
            num += self.decimal + "0" * self.decimals
        pos = self.prefix + num + self.suffix
        return pos + ";(" + pos + ")" if self.parens else pos

    @classmethod
    def from_spec(cls, spec: str) -> "NumberFormat":
        text = str(spec)
        parens = False
        if ";" in text:
            pos, neg = text.split(";", 1)
            if neg.strip() != "(" + pos + ")":
                raise InputError(f"number format '{spec}': the negative part must be '({pos})' if given")
            text, parens = pos, True
        m = re.fullmatch(r"([^#0]*)([#0][#0,. '\u00a0\u202f]*[#0]|[#0])([^#0]*)", text)
        if not m:
            raise InputError(f"number format '{spec}' is not a pattern such as '#,##0.00', '$#,##0' or '0.0%'")
        prefix, num, suffix = m.groups()
        g = re.match(r"#([,. '\u00a0\u202f])##0", num)
        group, rest = (g.group(1), num[g.end() :]) if g else ("", num.lstrip("#0"))
        decimal, decimals = ("," if group == "." else "."), 0
        d = re.fullmatch(r"([.,])(0+)", rest)
        if d:
            decimal, decimals = d.group(1), len(d.group(2))
        elif rest:
            raise InputError(f"number format '{spec}': cannot read the separators of '{num}'")
        return cls(prefix, suffix, group, decimal, decimals, parens)

    def parse(self, values: Sequence) -> np.ndarray:
        """float64 numbers of the values (NaN where one does not read as a number in this format): the symbols
        ``dropped_chars`` (the symbols, the group separator) are dropped; what is left must read as digits with
        this format's decimal separator (``number_shape``), negative when it holds a minus or a parenthesis. The
        SQL engines read it by the same rule (``privsample.data.sql_dialect``)."""
        out = np.full(len(values), np.nan)
        for i, v in enumerate(values):
            x = self._one(v)
            if x is not None:
                out[i] = x
        return out

    def _one(self, v) -> float | None:
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return float(v)
        cleaned = re.sub(char_class(dropped_chars(self)), "", str(v))
        if not re.fullmatch(number_shape(self), cleaned):
            return None
        x = float(re.sub(r"[()-]", "", cleaned).replace(self.decimal, "."))
        return -x if ("-" in cleaned or "(" in cleaned) else x

    def value(self, text: str) -> float:
        x = self._one(text)
        if x is None or not math.isfinite(x):
            raise InputError(f"'{text}' is not a number in the format '{self.spec()}'")
        return float(x)

    def write(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        out = np.empty(len(x), dtype=object)
        for i, v in enumerate(x):
            out[i] = self.text(v) if math.isfinite(v) else None
        return out

    def text(self, v: float) -> str:
        body = f"{abs(v):,.{self.decimals}f}"
        body = body.replace(",", "\0").replace(".", self.decimal).replace("\0", self.group)
        neg = v < 0 and body.strip("0" + self.decimal + self.group) != ""
        shown = self.prefix + body + self.suffix
        if neg:
            return "(" + shown + ")" if self.parens else "-" + shown
        return shown


NUMBER_SYMBOLS = "$€£¥% \u00a0\u202f"  # dropped when a formatted number is read, with the format's group separator


def dropped_chars(fmt: "NumberFormat") -> str:
    """The characters dropped when a number is read in ``fmt``: ``NUMBER_SYMBOLS`` and its group separator; a
    format without one also drops the group separators a number above 999 may be written with (the separator
    that is not its decimal one, and the apostrophe), so that "$1,234.50" reads in "$0.00" too."""
    if fmt.group:
        return NUMBER_SYMBOLS + fmt.group
    return NUMBER_SYMBOLS + ("," if fmt.decimal == "." else ".") + "'"


def char_class(chars: str) -> str:
    """A regex character class of ``chars`` (the same in Python, RE2 and Java)."""
    return "[" + "".join("\\" + c if c in "\\]^-[" else c for c in chars) + "]"


def number_shape(fmt: "NumberFormat") -> str:
    """The regex a formatted number must match once its symbols and group separators are dropped."""
    return r"-?\(?-?[0-9]*" + char_class(fmt.decimal) + r"?[0-9]+\)?"


def value_format(spec: str | None, kind: str | None = None, offset: str | None = None):
    """The format object of a schema column: a ``DateFormat`` for ``kind`` date/datetime/time (default patterns
    when ``spec`` is None), a ``NumberFormat`` for a numeric column's display pattern, or None."""
    if kind in TEMPORAL_UNIT:
        pattern = spec or {"date": "%Y-%m-%d", "datetime": "%Y-%m-%dT%H:%M:%S", "time": "%H:%M:%S"}[kind]
        fmt = DateFormat(pattern, offset)
        if fmt.kind != kind:
            raise InputError(f"format '{pattern}' is a {fmt.kind} pattern, not a {kind} one")
        return fmt
    if spec is None:
        return None
    return NumberFormat.from_spec(spec)
