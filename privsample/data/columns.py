"""The columns of a schema: categorical, numeric (with dates, times and formatted numbers), identifier and free
text. ``privsample.data.schema`` holds them in order, with the reading options, and reads and writes schema files;
its module docstring describes the codes of each column kind.
"""

from __future__ import annotations

import datetime
import math
import sys
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from privsample.data.formats import value_format
from privsample.data.identifiers import IdFormat, parse_format
from privsample.errors import InputError

DEFAULT_OTHER_LABEL = "(other)"
SPECIALS = ("-inf", "inf")  # the values a numeric column may hold beyond its bounds, each a code of its own
MAX_INTEGER_BOUND = 2**52  # integer columns: |bound| <= 2**52 (half-integers are exact floats below it)
MAX_FLOAT_BOUND = sys.float_info.max / 2  # bounds within +-this always have a finite upper - lower
TEXT_KEEP = ("drop", "frequent")  # a text column: dropped from the output, or its frequent values kept


@dataclass(frozen=True)
class Categorical:
    """A column with a public, finite list of categories (compared as strings)."""

    name: str
    categories: tuple[str, ...]
    nullable: bool = False
    other: str | None = None  # catch-all label for values outside ``categories`` (coercion target)

    kind = "categorical"

    def __post_init__(self):
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if len(self.categories) == 0 and self.other is None:
            raise InputError(f"schema column '{self.name}': a categorical column needs at least one category")
        if len(set(self.categories)) != len(self.categories):
            raise InputError(f"schema column '{self.name}': duplicate categories")
        if self.other is not None and self.other in self.categories:
            raise InputError(f"schema column '{self.name}': other label '{self.other}' is also a category")

    @property
    def size(self) -> int:
        return len(self.categories) + (self.other is not None) + self.nullable

    @property
    def other_code(self) -> int | None:
        return len(self.categories) if self.other is not None else None

    @property
    def null_code(self) -> int | None:
        return self.size - 1 if self.nullable else None

    def labels(self) -> list[str]:
        """Human-readable label of every code."""
        out = list(self.categories)
        if self.other is not None:
            out.append(self.other)
        if self.nullable:
            out.append("<null>")
        return out

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": "categorical", "categories": list(self.categories)}
        if self.nullable:
            d["nullable"] = True
        if self.other is not None:
            d["other"] = self.other
        return d


@dataclass(frozen=True)
class Numeric:
    """A numeric column with public bounds, discretised into bins (``bins`` equal-width, or ``edges``)."""

    name: str
    lower: float
    upper: float
    bins: int | None = None
    edges: tuple[float, ...] | None = None
    integer: bool = False
    nullable: bool = False
    format: str | None = None  # display pattern of a formatted number, or the pattern of a date/datetime/time
    temporal: str | None = None  # "date", "datetime" or "time": the numbers are days, minutes or seconds
    offset: str | None = None  # a datetime with an offset in its pattern is written at this offset
    special: tuple[str, ...] = ()  # "-inf", "inf": point masses of their own, coded after the bins

    kind = "numeric"

    def __post_init__(self):
        if self.temporal is not None or self.format is not None:
            fmt = value_format(self.format, self.temporal, self.offset)  # InputError when malformed
            if self.temporal is not None:
                object.__setattr__(self, "format", fmt.spec())
                object.__setattr__(self, "integer", fmt.integer)
        special = tuple(str(v).strip().lower() for v in self.special)
        if any(v not in SPECIALS for v in special) or len(set(special)) != len(special):
            raise InputError(f"schema column '{self.name}': 'special' lists values of {', '.join(SPECIALS)} only")
        object.__setattr__(self, "special", tuple(v for v in SPECIALS if v in special))
        lo, hi = float(self.lower), float(self.upper)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise InputError(f"schema column '{self.name}': bounds must be finite with lower <= upper")
        if not math.isfinite(hi - lo):
            raise InputError(
                f"schema column '{self.name}': bounds [{lo:g}, {hi:g}] are too far apart (upper - lower "
                f"overflows a float); keep them within +-{MAX_FLOAT_BOUND:.4g}"
            )
        if self.integer and max(abs(lo), abs(hi)) > MAX_INTEGER_BOUND:
            raise InputError(
                f"schema column '{self.name}': an integer column's bounds must lie within "
                f"+-{MAX_INTEGER_BOUND} (2**52); use 'integer: false' for larger numbers"
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        if self.edges is not None:
            e = tuple(float(x) for x in self.edges)
            if not all(math.isfinite(x) for x in e):
                raise InputError(f"schema column '{self.name}': edges must be finite numbers")
            if len(e) < 2 or any(b <= a for a, b in zip(e, e[1:])):
                raise InputError(f"schema column '{self.name}': edges must be strictly increasing (>= 2 values)")
            if e[0] != lo or e[-1] != hi:
                raise InputError(f"schema column '{self.name}': edges must start at lower and end at upper")
            object.__setattr__(self, "edges", e)
            object.__setattr__(self, "bins", len(e) - 1)
        else:
            b = 1 if self.bins is None else int(self.bins)
            if b < 1:
                raise InputError(f"schema column '{self.name}': bins must be >= 1")
            if lo == hi:
                b = 1
            if self.integer:  # integer-aligned bins: never more bins than integers
                n_int = math.floor(hi) - math.ceil(lo) + 1
                b = max(1, min(b, n_int))
            object.__setattr__(self, "bins", b)

    @property
    def bin_edges(self) -> np.ndarray:
        if self.edges is not None:
            return np.asarray(self.edges, dtype=float)
        if self.lower == self.upper:
            return np.array([self.lower, self.upper], dtype=float)
        if self.integer:
            # Integer columns: bins hold whole runs of integers (sizes differ by at most one); interior
            # edges sit at half-integers so every integer falls strictly inside one bin.
            first = math.ceil(self.lower)
            n_int = math.floor(self.upper) - first + 1
            b = int(self.bins)
            if n_int >= 1 and b > 1:  # exact integer arithmetic (Python ints), then floats
                inner = [first + (i * n_int) // b - 0.5 for i in range(1, b)]
                return np.array([self.lower, *inner, self.upper], dtype=float)
        if math.isinf(self.upper - self.lower):  # bounds near the float limit: halve, so no step overflows
            return 2 * np.linspace(self.lower / 2, self.upper / 2, int(self.bins) + 1)
        return np.linspace(self.lower, self.upper, int(self.bins) + 1)

    @property
    def value_format(self):
        """The column's ``privsample.data.formats`` format (``DateFormat``, ``NumberFormat``) or None."""
        return value_format(self.format, self.temporal, self.offset) if self.format or self.temporal else None

    def parse_constant(self, text: Any) -> float:
        """The number of a value written by a person (a bound, an edge, a constant): text in the column's format
        (a date as ISO 8601 too), or a number."""
        fmt = self.value_format
        if isinstance(text, (datetime.date, datetime.time)) and self.temporal:  # YAML reads ISO dates as dates
            text = text.isoformat()
        if isinstance(text, str) and fmt is not None:
            return fmt.value(text)
        if isinstance(text, bool) or not isinstance(text, (int, float, str)):
            raise InputError(f"column '{self.name}': {text!r} is not a number")
        try:
            value = float(str(text).strip())
        except ValueError:
            raise InputError(f"column '{self.name}': {text!r} is not a number") from None
        if not math.isfinite(value):
            raise InputError(f"column '{self.name}': {text!r} is not a finite number")
        return value

    @property
    def size(self) -> int:
        return int(self.bins) + len(self.special) + self.nullable

    @property
    def special_values(self) -> np.ndarray:
        """The special values (-inf, inf) in code order: code ``bins + i`` is ``special_values[i]``."""
        return np.array([float(v) for v in self.special], dtype=np.float64)

    @property
    def null_code(self) -> int | None:
        return self.size - 1 if self.nullable else None

    def labels(self) -> list[str]:
        e = self.bin_edges
        if self.integer and self.edges is None:
            lo = [math.ceil(e[0])] + [int(x + 0.5) for x in e[1:-1]]
            hi = [int(x - 0.5) for x in e[1:-1]] + [math.floor(e[-1])]
            out = [str(a) if a == b else f"{a}–{b}" for a, b in zip(lo, hi)]
        else:
            out = [f"[{e[i]:g}, {e[i + 1]:g}{']' if i == len(e) - 2 else ')'}" for i in range(len(e) - 1)]
        out += list(self.special)
        if self.nullable:
            out.append("<null>")
        return out

    def to_dict(self) -> dict[str, Any]:
        fmt = self.value_format
        show = fmt.text if self.temporal else (lambda x: x)  # dates and times in their own format
        d: dict[str, Any] = {"name": self.name, "type": self.temporal or "numeric"}
        d.update(lower=show(self.lower), upper=show(self.upper))
        if self.edges is not None:
            d["edges"] = [show(x) for x in self.edges]
        else:
            d["bins"] = int(self.bins)
        if self.integer and not self.temporal:
            d["integer"] = True
        if self.nullable:
            d["nullable"] = True
        if self.format is not None:
            d["format"] = self.format
        if self.offset is not None:
            d["offset"] = self.offset
        if self.special:
            d["special"] = list(self.special)
        return d


Column = Union[Categorical, Numeric]


@dataclass(frozen=True)
class Identifier:
    """An identifier column (a patient or customer id: every record its own value), left out of the synthesized
    domain: the marginal engines and the models never see it, and the output gets fresh ids of ``format``
    (``privsample.data.identifiers``: ``{k digits}``, ``{k hex}`` or ``{uuid}``, with an optional literal prefix
    and suffix) drawn independently of the data, at ``position`` in the column order (None: after the others).

    The fresh ids are never compared with the real ones: such a check would make the output depend on single
    records and is not differentially private. Instead the digit part is widened when the format's space is too
    small for a match to be negligible (``identifiers.widened``; the output warns, naming the column and the format
    used)."""

    name: str
    format: str = "{uuid}"
    position: int | None = None

    kind = "id"

    def __post_init__(self):
        object.__setattr__(self, "format", str(parse_format(self.format, f"schema column '{self.name}'")))

    @property
    def id_format(self) -> IdFormat:
        return parse_format(self.format)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": "id", "format": self.format}


@dataclass(frozen=True)
class FreeText:
    """A free-text column (long or nearly all-distinct values), dropped from the output (``keep: drop``): not
    synthesized, and absent from the output table (a warning names it). ``categories``: its frequent values where
    private discovery released some (noisy counts above the threshold); ``keep: frequent`` in a schema file makes
    the column categorical with them (``as_categorical``). ``position``: its place in the column order."""

    name: str
    position: int | None = None
    categories: tuple[str, ...] = ()

    kind = "text"

    def __post_init__(self):
        object.__setattr__(self, "categories", tuple(str(c) for c in self.categories))
        if len(set(self.categories)) != len(self.categories):
            raise InputError(f"schema column '{self.name}': duplicate categories")

    def as_categorical(self, nullable: bool = False, other: str | None = None) -> Categorical:
        """The column with its frequent values kept (``keep: frequent``): categorical, with a catch-all."""
        if other is None:
            other, i = DEFAULT_OTHER_LABEL, 2
            while other in self.categories:
                other, i = f"{DEFAULT_OTHER_LABEL[:-1]} {i})", i + 1
        return Categorical(self.name, self.categories, nullable=nullable, other=other)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": "text", "keep": "drop"}
        if self.categories:
            d["categories"] = list(self.categories)
        return d


Outside = Union[Identifier, FreeText]  # a column of the table that is not synthesized
