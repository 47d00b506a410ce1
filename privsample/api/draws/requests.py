"""The checked options of the samplers from distributions (:mod:`privsample.api.draws`): public values only,
no data read. :func:`kary_request`, :func:`bernoulli_request` and :func:`product_request` check the options of
one draw (``InputError`` naming an option as the caller writes it) and return a :class:`DrawRequest`;
:func:`draw_charge` is what it costs in a budget file, from the options alone. :func:`cell_text` is the text
form of a cell, shared by the declared k-ary domain and the reading of the input, so that both compare alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.api.options import OptionName, check_integer, check_number, python_option
from privsample.errors import InputError


@dataclass(frozen=True)
class KaryDomain:
    """The k-ary sampler's public domain, declared before the data are read: the ``declared`` values (named
    ``categories``, or the codes 0..k-1), the outcomes drawn (``labels``: the declared values, plus '(other)'
    unless ``other`` names one of them) and the index of the catch-all outcome."""

    declared: tuple[str, ...]
    named: bool
    labels: tuple[str, ...]
    catch: int

    @property
    def k(self) -> int:
        """The number of declared values."""
        return len(self.declared)

    @property
    def outcomes(self) -> int:
        """The number of outcomes drawn: k, or k + 1 with the extra catch-all outcome."""
        return len(self.labels)


@dataclass(frozen=True)
class DrawRequest:
    """The checked options of a draw (``kind``: 'kary', 'bernoulli' or 'product'): public values only.
    ``columns`` is None for every column of the table; ``domain`` is the k-ary sampler's, ``clip`` the
    bounded-bias sampler's margin a; ``option`` names the options in the refusals that come once n is known."""

    kind: str
    columns: tuple[str, ...] | None
    epsilon: float
    delta: float | None
    alpha: float
    samples: int
    skip_accuracy_check: bool
    seed: int | None
    option: OptionName = python_option
    domain: KaryDomain | None = None
    clip: Fraction | None = None


def cell_text(v) -> str | None:
    """Text form of a cell, so that CSV text, Parquet integers/floats and booleans compare alike; None if the
    cell is missing (None, NaN, pd.NA: what ``read_table`` makes of empty cells and its NA markers)."""
    import pandas as pd

    if v is None or (not isinstance(v, str) and bool(pd.isna(v))):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    s = str(v).strip()
    if s.endswith(".0") and s[:-2].lstrip("-").isdigit():
        s = s[:-2]
    return s


def _names(value: str | Sequence[Any]) -> list[str]:
    """A list of names from a sequence, or from one string of names separated by ',' (the command line's form)."""
    if isinstance(value, str):
        return [c.strip() for c in value.split(",")]
    return [str(c).strip() for c in value]


# -- checks of public parameters (before the data are read) --------------------------------------------
def _check_epsilon(epsilon, option: OptionName) -> float:
    epsilon = check_number(epsilon, option("epsilon"))
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"{option('epsilon')} must be > 0 and finite (got {epsilon})")
    return epsilon


def _check_alpha(alpha, option: OptionName) -> float:
    alpha = check_number(alpha, option("alpha"))
    if not (0 < alpha < 1):
        raise InputError(f"{option('alpha')} must lie in (0, 1) (got {alpha})")
    return alpha


def _check_delta(delta, option: OptionName) -> float:
    delta = check_number(delta, option("delta"))
    if not (0 < delta < 1):
        raise InputError(f"{option('delta')} must lie in (0, 1) (got {delta})")
    return delta


def _check_int(value, param: str, option: OptionName, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if optional and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
        raise InputError(f"{option(param)} must be an integer or None (got {value!r})")
    return check_integer(value, option(param))


def _check_common(epsilon, delta, alpha, samples, seed, option: OptionName, *, delta_given: bool) -> tuple:
    """(epsilon, delta, alpha, samples, seed) checked, in this order: epsilon, alpha, delta, samples, seed."""
    epsilon = _check_epsilon(epsilon, option)
    alpha = _check_alpha(alpha, option)
    if delta_given:
        delta = _check_delta(delta, option)
    samples = _check_int(samples, "samples", option)
    seed = _check_int(seed, "seed", option, optional=True)
    return epsilon, delta, alpha, samples, seed


def _check_columns(columns, option: OptionName) -> tuple[str, ...] | None:
    if columns is None:
        return None
    names = _names(columns)
    if len(set(names)) != len(names):
        raise InputError(f"{option('columns')} lists a column twice")
    return tuple(names)


def _kary_domain(categories, k: int | None, other, option: OptionName) -> KaryDomain:
    """The declared domain of the k-ary sampler (never read from the data)."""
    from privsample.samplers import kary

    if categories is None and k is None:
        raise InputError(
            f"declare the public domain of the column with {option('categories', ['a', 'b', 'c'])} or "
            f"{option('k', 'K')} (reading it from the data would not be private)"
        )
    cats = None
    if categories is not None:
        cats = _names(categories)
        if (
            not cats
            or any(c == "" for c in cats)
            or len(set(cats)) != len(cats)
            or len({cell_text(c) for c in cats}) != len(cats)
        ):
            raise InputError(
                f"{option('categories')} must be distinct, non-empty names"
                + (" separated by ','" if isinstance(categories, str) else "")
            )
        if k is not None and k != len(cats):
            raise InputError(f"{option('k', k)} does not match the {len(cats)} {option('categories')}")
    kk = len(cats) if cats is not None else k
    if kk < 1:
        raise InputError(f"{option('k')} must be >= 1 (got {kk})")
    declared = cats if cats is not None else [str(i) for i in range(kk)]
    other = None if other is None else str(other).strip()
    if other is not None and other not in declared:
        raise InputError(
            f"{option('other', repr(other))} is not one of the declared "
            + (option("categories") if cats is not None else f"codes 0..{kk - 1}")
        )
    labels, catch = kary.domain_with_other(declared, other)
    return KaryDomain(tuple(declared), cats is not None, tuple(labels), catch)


def kary_request(
    *,
    column: str,
    epsilon: float,
    categories: str | Sequence[Any] | None = None,
    k: int | None = None,
    other: str | int | None = None,
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    option: OptionName = python_option,
) -> DrawRequest:
    """The options of :func:`draw_kary`, checked (public values, no data read); ``InputError`` names an option
    by ``option(name)``."""
    epsilon, _, alpha, samples, seed = _check_common(epsilon, None, alpha, samples, seed, option, delta_given=False)
    k = _check_int(k, "k", option, optional=True)
    domain = _kary_domain(categories, k, other, option)
    return DrawRequest(
        "kary", (str(column),), epsilon, None, alpha, samples, bool(skip_accuracy_check), seed, option, domain
    )


def bernoulli_request(
    *,
    columns: str | Sequence[str] | None = None,
    epsilon: float,
    delta: float | None = None,
    clip: str | float | Fraction = "1/4",
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    option: OptionName = python_option,
) -> DrawRequest:
    """The options of :func:`draw_bernoulli`, checked (public values, no data read); ``InputError`` names an
    option by ``option(name)``."""
    from privsample.samplers import bernoulli

    given = delta is not None
    epsilon, delta, alpha, samples, seed = _check_common(
        epsilon, delta, alpha, samples, seed, option, delta_given=given
    )
    try:
        if isinstance(clip, str):
            value = Fraction(clip.strip())
        elif isinstance(clip, float):
            value = Fraction(repr(clip))  # 0.25 as written, not its binary expansion
        else:
            value = Fraction(clip)
    except (ValueError, ZeroDivisionError, TypeError):
        raise InputError(f"{option('clip')} must be a number such as 1/4 or 0.25 (got {clip!r})") from None
    a = bernoulli.check_clip(value)
    cols = _check_columns(columns, option)
    return DrawRequest(
        "bernoulli", cols, epsilon, delta, alpha, samples, bool(skip_accuracy_check), seed, option, clip=a
    )


def product_request(
    *,
    columns: str | Sequence[str] | None = None,
    epsilon: float,
    delta: float = 1e-9,
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    option: OptionName = python_option,
) -> DrawRequest:
    """The options of :func:`draw_product`, checked (public values, no data read); ``InputError`` names an
    option by ``option(name)``."""
    epsilon, delta, alpha, samples, seed = _check_common(epsilon, delta, alpha, samples, seed, option, delta_given=True)
    cols = _check_columns(columns, option)
    return DrawRequest("product", cols, epsilon, delta, alpha, samples, bool(skip_accuracy_check), seed, option)


def draw_charge(request: DrawRequest) -> dict:
    """What ``draw KIND`` is charged in a budget file (``privsample.privacy.budget``), from its options alone:
    kary and bernoulli without delta are pure epsilon-DP (rho = epsilon²/2); product and bernoulli with delta
    are rho(epsilon, delta)-zCDP. Replace-one neighbours with n public."""
    from privsample.privacy.budget import pure_charge, zcdp_charge
    from privsample.samplers.parallel import NEIGHBOURING

    kind = request.kind
    what = {"kary": "RSSS k-ary", "bernoulli": "RSSS bounded-bias", "product": "RSSS product"}[kind]
    if request.delta is None:
        return pure_charge(f"draw {kind}", what, request.epsilon, NEIGHBOURING)
    return zcdp_charge(f"draw {kind}", what, request.epsilon, request.delta, NEIGHBOURING)
