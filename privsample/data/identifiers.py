"""Identifier formats: the public family of formats of an ``id`` column, their signatures, and fresh ids.

An identifier column (a patient or customer number) is not synthesized from the data: the output gets fresh ids
drawn from the space of its format. The family of formats (``IdFormat.parse``), each with exactly one placeholder:

* ``{k digits}``: k decimal digits (``000123``), 1 <= k <= ``MAX_WIDTH``;
* ``{k hex}``: k lowercase hexadecimal digits (``3fa9c0d1``);
* ``{uuid}``: a random (version 4) UUID, 122 random bits;

each optionally with a literal prefix and suffix of letters and punctuation (no digits, spaces or braces), e.g.
``P-{6 digits}`` or ``INV/{8 digits}/A``.

Fresh ids (``draw_ids``) are drawn uniformly from the format's space, independently of the data. They are never
checked against the real ids: such a check would make the output depend on single records (whether one person's
id was drawn) and is not differentially private. Instead the space is made large (``widened``): with N_out ids
drawn and an estimate N_real of the number of records (a noisy count, never an exact one), the expected number of
synthetic ids equal to some real id is at most N_out * N_real / |space| (each draw hits one given real id with
probability 1/|space|), and equal to another synthetic id at most N_out^2 / (2 |space|). When
N_out * (N_real + N_out) / |space| would exceed ``MAX_EXPECTED_MATCHES`` (1e-6), the digit part is widened
(more digits or hex digits, the same prefix and suffix) to the fewest that bring it under; a UUID's space is
fixed. The widening is a function of public numbers (the rows asked for, a noisy count): post-processing.

``format_from_regex`` reads a codebook's regular expression for an identifier (a Frictionless ``pattern``, SDV's
``regex_format``) as a format of the family when it is one: ``P-[0-9]{6}`` or ``^P-\\d{6}$`` is ``P-{6 digits}``.

``signatures`` maps values to the format of this family they have (``"other"`` when none): what private discovery
counts (``privsample.data.id_discovery``) and what the NON-PRIVATE draft reads.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privsample.errors import InputError

__all__ = [
    "IdFormat",
    "parse_format",
    "widened",
    "draw_ids",
    "signatures",
    "OTHER_SIGNATURE",
    "MAX_WIDTH",
    "MAX_EXPECTED_MATCHES",
    "FORMAT_HELP",
    "format_from_regex",
]

MAX_WIDTH = 64  # the most digits (or hex digits) of a format
MAX_EXPECTED_MATCHES = 1e-6  # the largest expected number of synthetic ids equal to a real (or another) id
OTHER_SIGNATURE = "other"  # the signature of a value with no format of the family
UUID_BITS = 122
# literal text around the placeholder: letters and ASCII punctuation other than braces (no digits, no spaces)
_LITERAL = r"[A-Za-z!-/:-@\[-`|~]*"
_FORMAT = re.compile(rf"({_LITERAL})\{{\s*(?:(\d+)\s+(digits|hex)|(uuid))\s*\}}({_LITERAL})")
FORMAT_HELP = (
    "{k digits}, {k hex} or {uuid}, with an optional literal prefix and suffix of letters and punctuation "
    'around it (e.g. "P-{6 digits}")'
)
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


@dataclass(frozen=True)
class IdFormat:
    """One format of the family: ``kind`` "digits", "hex" or "uuid", ``width`` (digits; 32 for a UUID's hex),
    a literal ``prefix`` and ``suffix``."""

    kind: str
    width: int
    prefix: str = ""
    suffix: str = ""

    @property
    def space(self) -> int:
        """The number of distinct ids of this format."""
        if self.kind == "uuid":
            return 2**UUID_BITS
        return (10 if self.kind == "digits" else 16) ** self.width

    def __str__(self) -> str:
        inner = "uuid" if self.kind == "uuid" else f"{self.width} {self.kind}"
        return f"{self.prefix}{{{inner}}}{self.suffix}"


def parse_format(text: object, where: str = "format") -> IdFormat:
    """The ``IdFormat`` of ``text``; ``InputError`` (one line, naming ``where``) when it is not of the family."""
    m = _FORMAT.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise InputError(f"{where}: {text!r} is not an identifier format: use {FORMAT_HELP}")
    prefix, k, unit, uuid, suffix = m.groups()
    if uuid:
        return IdFormat("uuid", 32, prefix, suffix)
    width = int(k)
    if not 1 <= width <= MAX_WIDTH:
        raise InputError(f"{where}: {text!r} needs 1 to {MAX_WIDTH} {unit}")
    return IdFormat(unit, width, prefix, suffix)


def widened(fmt: IdFormat, n_out: int, n_real: float) -> IdFormat:
    """``fmt`` with the fewest digits (at least its own) such that n_out * (n_real + n_out) / |space| <=
    ``MAX_EXPECTED_MATCHES``: the expected number of the ``n_out`` fresh ids equal to one of about ``n_real`` real
    ids (a noisy count) or to one another. A UUID, and a format already at ``MAX_WIDTH``, is returned as it is.
    A function of public numbers only."""
    if fmt.kind == "uuid" or n_out <= 0:
        return fmt
    need = n_out * (max(float(n_real), 0.0) + n_out) / MAX_EXPECTED_MATCHES  # the space must hold this many
    base = 10 if fmt.kind == "digits" else 16
    width = fmt.width
    if base**width < need:
        width = max(width, math.ceil(math.log(need, base)))
        while width < MAX_WIDTH and base**width < need:  # log's rounding
            width += 1
    return IdFormat(fmt.kind, min(width, MAX_WIDTH), fmt.prefix, fmt.suffix)


def _random_text(rng: np.random.Generator, n: int, width: int, alphabet: np.ndarray) -> np.ndarray:
    """``n`` texts of ``width`` characters drawn uniformly and independently from ``alphabet`` (ASCII bytes)."""
    chars = alphabet[rng.integers(0, len(alphabet), size=(n, width))]
    return np.ascontiguousarray(chars, dtype=np.uint8).view(f"S{width}").ravel().astype(str)


def draw_ids(fmt: IdFormat, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` ids drawn uniformly from ``fmt``'s space with ``rng``, independently of any data (object array of
    str). A UUID is version 4 (RFC 4122: 122 random bits)."""
    if n <= 0:
        return np.zeros(0, dtype=object)
    if fmt.kind == "uuid":
        digits = rng.integers(0, 16, size=(n, 32))
        digits[:, 12] = 4  # version 4
        digits[:, 16] = 8 + (digits[:, 16] & 3)  # variant 10xx
        text = _HEX[digits].astype(np.uint8)
        dash = np.full((n, 1), ord("-"), dtype=np.uint8)
        parts = [text[:, 0:8], dash, text[:, 8:12], dash, text[:, 12:16], dash, text[:, 16:20], dash, text[:, 20:]]
        body = np.ascontiguousarray(np.hstack(parts)).view("S36").ravel().astype(str)
    else:
        alphabet = _HEX[:10] if fmt.kind == "digits" else _HEX
        body = _random_text(rng, n, fmt.width, alphabet)
    out = np.char.add(np.char.add(fmt.prefix, body), fmt.suffix) if (fmt.prefix or fmt.suffix) else body
    return out.astype(object)


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DIGITS = re.compile(rf"({_LITERAL})(\d+)({_LITERAL})")
_HEXTEXT = re.compile(r"[0-9a-f]*[a-f][0-9a-f]*")


def _signature(text: str) -> str:
    if _UUID.fullmatch(text):
        return "{uuid}"
    m = _DIGITS.fullmatch(text)
    if m is not None and len(m.group(2)) <= MAX_WIDTH:
        return f"{m.group(1)}{{{len(m.group(2))} digits}}{m.group(3)}"
    if _HEXTEXT.fullmatch(text) and len(text) <= MAX_WIDTH:
        return f"{{{len(text)} hex}}"
    return OTHER_SIGNATURE


def signatures(values: np.ndarray) -> np.ndarray:
    """The signature of each value (its text ``str(value)``): ``{uuid}``; ``PREFIX{k digits}SUFFIX`` for digits with
    an optional literal prefix and suffix (letters and punctuation); ``{k hex}`` for lowercase hexadecimal text with
    a letter; else ``OTHER_SIGNATURE``. Each is a format of the family (``parse_format`` reads it back), except
    ``OTHER_SIGNATURE``. An integer-typed array's values are their decimal text (a minus sign is a prefix)."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.zeros(0, dtype=object)
    if values.dtype.kind in "iu":  # decimal text: digits, with "-" before negatives
        width = np.char.str_len(np.abs(values.astype(np.int64)).astype(str))
        neg = values < 0
        return np.array([f"{'-' if s else ''}{{{w} digits}}" for s, w in zip(neg, width)], dtype=object)
    texts = pd.Series([str(v) for v in values], dtype=object)
    return np.asarray([_signature(t) for t in texts], dtype=object)


_HEX_CLASSES = ("[0-9a-f]", "[a-f0-9]")  # lowercase hexadecimal: what fresh hex ids are written in
_UUID_CLASSES = _HEX_CLASSES + ("[0-9a-fA-F]", "[0-9A-Fa-f]", "[a-fA-F0-9]", "[A-Fa-f0-9]")
_UUID_FORMS = ("H{8}-H{4}-H{4}-H{4}-H{12}", "H{8}-H{4}-4H{3}-[89ab]H{3}-H{12}", "H{8}-H{4}-4H{3}-[89aAbB]H{3}-H{12}")
_REGEX_META = set(".^$*+?()[]{}|\\")
_REGEX_BODY = re.compile(r"(\\d|\[0-9\]|\[0-9a-f\]|\[a-f0-9\])\{(\d+)\}")


def _regex_literal(regex: str, i: int) -> tuple[str, int]:
    """The literal text of ``regex`` from position ``i`` (escaped punctuation unescaped) and where it stops."""
    out = []
    while i < len(regex):
        ch = regex[i]
        if ch == "\\" and i + 1 < len(regex) and not regex[i + 1].isalnum():
            out.append(regex[i + 1])
            i += 2
        elif ch not in _REGEX_META:
            out.append(ch)
            i += 1
        else:
            break
    return "".join(out), i


def format_from_regex(regex: object) -> IdFormat | None:
    """The format of the family that the regular expression ``regex`` describes, or None when it describes none:
    an optional literal prefix, one run of ``\\d{k}``/``[0-9]{k}`` (digits) or ``[0-9a-f]{k}`` (lowercase hex)
    and an optional literal suffix, anchored or not; or the usual UUID expression. The literal parts must be what
    a format allows (letters and punctuation, no digits or spaces). A function of the public codebook only."""
    if not isinstance(regex, str):
        return None
    text = regex.strip().removeprefix("^").removesuffix("$")
    hexed = text
    for cls in _UUID_CLASSES:
        hexed = hexed.replace(cls, "H")
    if hexed in _UUID_FORMS:
        return IdFormat("uuid", 32)
    prefix, i = _regex_literal(text, 0)
    m = _REGEX_BODY.match(text, i)
    if m is None:
        return None
    suffix, end = _regex_literal(text, m.end())
    if end != len(text):
        return None
    unit = "hex" if m.group(1) in _HEX_CLASSES else "digits"
    try:
        return parse_format(f"{prefix}{{{int(m.group(2))} {unit}}}{suffix}")
    except InputError:
        return None
