"""The public classes of values that private discovery counts, to decide a column's type and format.

Every value falls in exactly one class of each public list: ``coarse_classes`` (missing, integral, non-integral,
+inf, -inf, date or time, formatted number, other text), ``date_classes`` (the date, datetime and time patterns),
``offset_classes`` (the public UTC offsets) and ``number_classes`` (prefix, suffix, group and decimal separators,
decimals, parentheses). A record adds one to one class count, so each list's noisy counts have sensitivity 1
however many classes it holds; ``date_format_from`` and ``number_format_from`` turn those noisy counts into a
format (post-processing, ``privsample.data.formats`` for the formats themselves). Nothing here reads records on
its own: these are functions of values, used by the mechanisms of ``privsample.data.column_types``.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np

from privsample.data.cells import NUMBER_RE, WHITESPACE
from privsample.data.formats import (
    DECIMALS,
    GROUPS,
    MAX_DECIMALS,
    PREFIXES,
    SUFFIXES,
    DateFormat,
    NumberFormat,
)

__all__ = [
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
]


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
