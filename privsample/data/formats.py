"""Value formats of text columns: dates, datetimes, times of day and formatted numbers, read and written back.

A *format* turns a column's text into numbers and numbers back into text of the same look, so that such a column
is a numeric column of the schema (bounds, bins, the grid of private discovery) and comes back as it came in:

* ``DateFormat``: a ``strftime`` pattern. A date is a number of days since 1970-01-01, a datetime a number of
  seconds since 1970-01-01 00:00 UTC (with an offset in the text: the instant it names), a time of day a number
  of seconds since midnight. Written back with the same pattern; a pattern with an offset writes every value at
  one fixed offset (``offset``, e.g. ``+01:00``); ``%:z`` is an offset written with a colon (``+01:00``).
* ``NumberFormat``: a display pattern in the spreadsheet style (``$#,##0.00``, ``#.##0,00 €``, ``0.0%``,
  ``#,##0.00;(#,##0.00)`` for negatives in parentheses). ``12%`` is the number 12 (the number shown).

Private discovery decides a column's format from noisy counts (``privsample.data.discovery``): every value falls
in exactly one class of a public list (``coarse_class``: missing, integral, non-integral, +inf, -inf, date or
time, formatted number, other text), and a date or formatted-number column takes its pattern from the noisy counts
of the finer public classes of ``date_class`` and ``number_class`` (each value in one class: sensitivity 1, however
many classes the lists hold; the choice is the largest noisy count, so no threshold depends on their number).
Nothing here reads records on its own: these are functions of values, used by the mechanisms and the encoders.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timedelta, timezone
from typing import Sequence

import numpy as np
import pandas as pd

from privsample.data.cells import NUMBER_RE, WHITESPACE
from privsample.errors import InputError

__all__ = [
    "DateFormat",
    "NumberFormat",
    "value_format",
    "COARSE",
    "coarse_classes",
    "DATE_CLASSES",
    "OFFSETS",
    "offset_classes",
    "date_classes",
    "date_format_from",
    "NUMBER_CLASSES",
    "number_classes",
    "number_format_from",
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


_NUM_SIG = re.compile(
    r"(?P<sign>-)?(?P<open>\()?(?P<sign2>-)?(?P<pre>[$€£¥])?\s?(?P<sign3>-)?"
    r"(?P<num>[0-9][0-9,.'\u00a0\u202f ]*[0-9]|[0-9])(?P<suf>\s?(?:%|€))?(?P<close>\))?"
)


def _number_signature(text: str):
    """(number, prefix, suffix, group, decimal, decimals, parens) of a formatted number, else None."""
    m = _NUM_SIG.fullmatch(text)
    if not m or bool(m.group("open")) != bool(m.group("close")):
        return None
    num = m.group("num")
    seps = [c for c in num if not c.isdigit()]
    group, decimal = "", ""
    if seps:
        last = seps[-1]
        others = set(seps[:-1])
        if others and last not in others and len(others) == 1:
            group, decimal = others.pop(), last
        elif not others and len(seps) == 1:
            tail = num.rsplit(last, 1)[1]
            if last in ",'\u00a0\u202f " and len(tail) == 3 or last in "'\u00a0\u202f ":
                group = last
            else:
                decimal = last
        elif set(seps) == {last}:
            group = last
        else:
            return None
    if decimal and decimal not in DECIMALS:
        return None
    int_part, _, frac = num.partition(decimal) if decimal else (num, "", "")
    if group:
        parts = int_part.split(group)
        if not (1 <= len(parts[0]) <= 3 and all(len(p) == 3 for p in parts[1:])):
            return None
    digits = int_part.replace(group, "") if group else int_part
    if not digits.isdigit() or (frac and not frac.isdigit()):
        return None
    number = float(digits + ("." + frac if frac else ""))
    negative = bool(m.group("sign") or m.group("sign2") or m.group("sign3") or m.group("open"))
    suffix = (m.group("suf") or "").replace("\u00a0", " ")
    return (
        -number if negative else number,
        m.group("pre") or "",
        suffix,
        group,
        decimal,
        len(frac),
        bool(m.group("open")),
    )


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


# -- the public classes private discovery counts ----------------------------------------------------------------
# Coarse class of a value (a partition: every non-missing value is in exactly one).
COARSE = ("missing", "integral", "non-integral", "+inf", "-inf", "date or time", "formatted number", "text")
_PLAIN = re.compile(NUMBER_RE, re.IGNORECASE)
_INF = re.compile(r"\+?inf(inity)?", re.IGNORECASE)
_NINF = re.compile(r"-inf(inity)?", re.IGNORECASE)
_NAN = re.compile(r"[+-]?nan", re.IGNORECASE)

# Date and time classes: (pattern, family, orientation) -- a family is one way of writing; a day/month form has
# three classes: the day first (a first field > 12), the month first (a second field > 12), either; a form whose
# day or 12-hour clock hour may be written without a leading zero also has three: with one ("pad": "05"), without
# ("nopad": "5"), either (two digits, not starting with 0: "25"). A value is in the first class that matches.
_TIME_PARTS = (("", ""), (" %H:%M", r" (\d{1,2}):(\d{2})"), (" %H:%M:%S", r" (\d{1,2}):(\d{2}):(\d{2})"))
_ISO_TIMES = (("%H:%M", r"(\d{1,2}):(\d{2})"), ("%H:%M:%S", r"(\d{1,2}):(\d{2}):(\d{2})"))
_ISO_TIMES += (("%H:%M:%S.%f", r"(\d{1,2}):(\d{2}):(\d{2})\.\d{1,6}"),)
_OFFSETS = (("", ""), ("Z", "Z"), ("%:z", r"[+-]\d{2}:\d{2}"), ("%z", r"[+-]\d{4}"))
_DAY = r"(0?[1-9]|[12]\d|3[01])"  # group 1: the field whose leading zero is read
_ABBR = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_FULL = "(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_CLOCK12 = r"(0?[1-9]|1[0-2]):[0-5]\d"
_PADDED_FORMS = (  # (pattern with the leading zero, without it, regex): month names in English, as written
    ("%d %b %Y", "%-d %b %Y", rf"{_DAY} {_ABBR} \d{{4}}"),
    ("%d %B %Y", "%-d %B %Y", rf"{_DAY} {_FULL} \d{{4}}"),
    ("%d-%b-%Y", "%-d-%b-%Y", rf"{_DAY}-{_ABBR}-\d{{4}}"),
    ("%b %d, %Y", "%b %-d, %Y", rf"{_ABBR} {_DAY}, \d{{4}}"),
    ("%B %d, %Y", "%B %-d, %Y", rf"{_FULL} {_DAY}, \d{{4}}"),
    ("%I:%M %p", "%-I:%M %p", rf"{_CLOCK12} (?:AM|PM)"),
    ("%I:%M:%S %p", "%-I:%M:%S %p", rf"{_CLOCK12}:[0-5]\d (?:AM|PM)"),
    ("%I:%M %P", "%-I:%M %P", rf"{_CLOCK12} (?:am|pm)"),
    ("%I:%M:%S %P", "%-I:%M:%S %P", rf"{_CLOCK12}:[0-5]\d (?:am|pm)"),
)


def _orientation(m: re.Match) -> str | None:
    """The orientation of a matched value in its family (None: a day/month form that cannot be a date). The
    regex of a form with or without a leading zero has one group (that field), a day/month form's more."""
    if m.re.groups == 1:
        field = m.group(1)
        return "nopad" if len(field) == 1 else "pad" if field[0] == "0" else "either"
    a, b = int(m.group(1)), int(m.group(2))
    if max(a, b) > 31 or min(a, b) < 1 or (a > 12 and b > 12):
        return None
    return "day" if a > 12 else "month" if b > 12 else "either"


def _date_class_list() -> list[tuple[str, str, str, re.Pattern]]:
    out = [("%Y-%m-%d", "iso date", "", re.compile(r"\d{4}-\d{1,2}-\d{1,2}"))]
    out.append(("%Y/%m/%d", "ymd slash", "", re.compile(r"\d{4}/\d{1,2}/\d{1,2}")))
    for sep_name, sep in (("T", "T"), ("space", " ")):
        for tp, tre in _ISO_TIMES:
            for op, ore in _OFFSETS:
                pattern = f"%Y-%m-%d{sep}{tp}{op}"
                rx = re.compile(rf"\d{{4}}-\d{{1,2}}-\d{{1,2}}{sep}{tre}{ore}")
                out.append((pattern, f"iso {sep_name} {tp}{op}", "", rx))
    for sep in ("/", ".", "-"):
        s = re.escape(sep)
        for tp, tre in _TIME_PARTS:
            fam = f"dmy {sep}{tp}"
            body = rf"(\d{{1,2}}){s}(\d{{1,2}}){s}\d{{4}}{tre}"
            out.append((f"%d{sep}%m{sep}%Y{tp}", fam, "day", re.compile(body)))
            out.append((f"%m{sep}%d{sep}%Y{tp}", fam, "month", re.compile(body)))
            out.append((f"%d{sep}%m{sep}%Y{tp}", fam, "either", re.compile(body)))
    for tp, tre in _ISO_TIMES:
        out.append((tp, f"time {tp}", "", re.compile(tre)))
    for padded, plain, body in _PADDED_FORMS:
        rx = re.compile(body)
        out += [(padded, padded, "pad", rx), (plain, padded, "nopad", rx), (padded, padded, "either", rx)]
    return out


_DATE_CLASSES = _date_class_list()
DATE_CLASSES = tuple((p, fam, orient) for p, fam, orient, _ in _DATE_CLASSES)
_ANY_DATE = re.compile("|".join(f"(?:{rx.pattern})" for _, _, _, rx in _DATE_CLASSES))  # one pass for most texts


def _date_class(text: str) -> int:
    """Index in ``DATE_CLASSES`` of a value (-1: none). Field ranges are checked (month <= 12, hour <= 23)."""
    if not _ANY_DATE.fullmatch(text):
        return -1
    for i, (pattern, fam, orient, rx) in enumerate(_DATE_CLASSES):
        m = rx.fullmatch(text)
        if not m:
            continue
        if orient:
            want = _orientation(m)
            if want is None:
                return -1
            if orient != want:
                continue
        if not _fields_ok(text, pattern):
            return -1
        return i
    return -1


def _fields_ok(text: str, pattern: str) -> bool:
    nums = [int(x) for x in re.findall(r"\d+", text)[:6]]
    if pattern.startswith("%Y-") or pattern.startswith("%Y/"):
        if not (1 <= nums[1] <= 12 and 1 <= nums[2] <= 31):
            return False
        clock = nums[3:5]
    elif pattern.startswith("%H"):
        clock = nums[0:2]
    else:
        clock = nums[3:5]
    return len(clock) < 2 or (clock[0] <= 23 and clock[1] <= 59)


def date_classes(texts: Sequence[str]) -> np.ndarray:
    """The ``DATE_CLASSES`` index of each text (-1: not a date or time)."""
    return np.array([_date_class(t) for t in texts], dtype=np.int64)


# The offsets a datetime is written at: every quarter hour from -12:00 to +14:00, and Z.
OFFSETS = tuple(f"{'-' if q < 0 else '+'}{abs(q) // 4:02d}:{abs(q) % 4 * 15:02d}" for q in range(-48, 57)) + ("Z",)
_OFFSET_INDEX = {o: i for i, o in enumerate(OFFSETS)}


def offset_classes(texts: Sequence[str]) -> np.ndarray:
    """The ``OFFSETS`` index of each text's trailing offset (+HH:MM, +HHMM or Z; -1: none)."""
    out = np.full(len(texts), -1, dtype=np.int64)
    for i, t in enumerate(texts):
        m = re.search(r"(Z|[+-]\d{2}:?\d{2})$", t)
        if m:
            o = m.group(1)
            out[i] = _OFFSET_INDEX.get(o if o == "Z" or ":" in o else o[:3] + ":" + o[3:], -1)
    return out


def date_format_from(noisy: np.ndarray) -> DateFormat:
    """The pattern the noisy counts of ``DATE_CLASSES`` choose (post-processing): the family with the largest
    noisy total; in a day/month family, the day first unless the noisy month-first count is the larger; in a family
    written with or without a leading zero, with one unless the noisy count without is the larger."""
    noisy = np.asarray(noisy, dtype=float)
    totals: dict[str, float] = {}
    for (pattern, fam, orient), y in zip(DATE_CLASSES, noisy):
        totals[fam] = totals.get(fam, 0.0) + float(y)
    fam = max(totals, key=lambda f: (totals[f], f))
    members = [(p, o, float(y)) for (p, f, o), y in zip(DATE_CLASSES, noisy) if f == fam]
    if len(members) == 1:
        return DateFormat(members[0][0])
    first, second = ("day", "month") if any(o == "day" for p, o, y in members) else ("pad", "nopad")
    count = {o: y for p, o, y in members}
    return DateFormat(next(p for p, o, y in members if o == (second if count[second] > count[first] else first)))


# Formatted-number classes: every (prefix, suffix, group, decimal, decimals, parens) of the public lists.
NUMBER_CLASSES = tuple(
    (p, s, g, d, k, par)
    for p in PREFIXES
    for s in SUFFIXES
    for g in GROUPS
    for d in DECIMALS
    if g != d
    for k in range(MAX_DECIMALS + 1)
    for par in (False, True)
)
_NUMBER_INDEX = {c: i for i, c in enumerate(NUMBER_CLASSES)}


def number_classes(texts: Sequence[str]) -> np.ndarray:
    """The ``NUMBER_CLASSES`` index of each text (-1: not a formatted number of the public lists)."""
    out = np.full(len(texts), -1, dtype=np.int64)
    for i, t in enumerate(texts):
        sig = _number_signature(t)
        if sig is None:
            continue
        _, pre, suf, group, decimal, frac, par = sig
        key = (pre, suf, group, decimal or ("," if group == "." else "."), min(frac, MAX_DECIMALS), par)
        out[i] = _NUMBER_INDEX.get(key, -1)
    return out


GROUP_SIGMAS = 3.0  # a family's grouped class above this many sd of noise gives the format its group separator


def number_format_from(noisy: np.ndarray, sigma: float = 0.0) -> NumberFormat:
    """The format from the noisy counts of ``NUMBER_CLASSES`` (post-processing). A number below 1,000 shows no
    group separator in any format, so "$854.44" and "$1,234.50" are one format shown two ways: the classes are
    summed by family (every field but the group separator), the family with the largest noisy sum is taken, and
    within it the group separator of its grouped class with the largest noisy count, when that count passes
    ``GROUP_SIGMAS`` sd (``sigma``, the counts' noise sd; several separators are tried), else none. Either format
    reads both ways of writing (``dropped_chars``): the choice only decides how numbers above 999 are written."""
    noisy = np.asarray(noisy, dtype=float)
    families: dict[tuple, list[int]] = {}
    for i, (p, s, g, d, k, par) in enumerate(NUMBER_CLASSES):
        families.setdefault((p, s, d, k, par), []).append(i)
    members = max(families.values(), key=lambda ix: (float(noisy[ix].sum()), -ix[0]))
    grouped = [i for i in members if NUMBER_CLASSES[i][2]]
    best = max(grouped, key=lambda i: (noisy[i], -i)) if grouped else None
    if best is not None and noisy[best] > GROUP_SIGMAS * sigma:
        return NumberFormat(*NUMBER_CLASSES[best])
    plain = [i for i in members if not NUMBER_CLASSES[i][2]]
    return NumberFormat(*NUMBER_CLASSES[plain[0] if plain else members[0]])


def coarse_classes(values: np.ndarray) -> np.ndarray:
    """The ``COARSE`` index (1..7) of each distinct non-missing value (a value reading as NaN counts as missing:
    0). Numeric-typed arrays are numbers (integral or not, or infinite)."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return np.ones(len(values), dtype=np.int64)
    if values.dtype.kind == "f":
        x = values.astype(np.float64)
        out = np.where(np.floor(x) == x, 1, 2)
        out = np.where(np.isposinf(x), 3, np.where(np.isneginf(x), 4, out))
        return np.where(np.isnan(x), 0, out).astype(np.int64)
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values.tolist()):
        out[i] = _coarse_one(str(v).strip(WHITESPACE))
    return out


def _coarse_one(t: str) -> int:
    if _PLAIN.fullmatch(t):
        if _NAN.fullmatch(t):
            return 0
        if _INF.fullmatch(t):
            return 3
        if _NINF.fullmatch(t):
            return 4
        x = float(t)
        return 1 if math.floor(x) == x else 2
    if _date_class(t) >= 0:
        return 5
    if _number_signature(t) is not None:
        return 6
    return 7
