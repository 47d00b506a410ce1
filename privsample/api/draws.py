"""The samplers from distributions of Raskhodnikova, Sivakumar, Smith and Swanberg (2021) for Python:
:func:`draw_kary`, :func:`draw_bernoulli` and :func:`draw_product`, each returning a
:class:`~privsample.api.release.Release`. ``privsample draw kary | bernoulli | product`` runs the same code.

Each function draws ``samples`` records m, one per disjoint part of the data (a public random partition:
parallel composition, the m draws cost one part's budget), and refuses with ``InputError`` (before any draw)
when a part is too small for the privacy the sampler can certify or for the accuracy ``alpha`` asks for,
saying how many records would be needed. Guarantees are for replace-one neighbours with n public.

What the release and the messages hold. n is public under this relation, so n, the part sizes (functions of
n and m) and refusals computed from them are said; so are the public parameters (epsilon, delta, k, the
columns, the declared categories). Nothing else about the data: raw cells are mapped to the sampler's public
domain by a fixed per-record rule (:func:`privsample.samplers.kary.encode`: anything not declared, missing
included, is the catch-all "(other)"; :func:`privsample.samplers.bernoulli.binarize`: 1 iff exactly one,
else 0) that never refuses and never drops a record (dropping would change n). The rule is part of every
release (``Release.rule``), never whether it fired or how often.

``data`` is a pandas DataFrame, a pyarrow Table, a polars DataFrame (polars is imported only when the object
is one) or a CSV/Parquet path. A DataFrame is read as the same data written to CSV would be, so both give
the same draws for the same ``seed``. A ``seed`` makes the noise, the draws and the partition reproducible
and the release NOT PRIVATE (``Release.private`` is False; a ``UserWarning`` says so).

The command line runs the same steps: the options are checked (:func:`kary_request`, :func:`bernoulli_request`,
:func:`product_request`: public values, no data read), the table is read and mapped by the public rule
(:func:`draw_input`, which also refuses when the parts are too small), then the draws are made
(:func:`draw_release`); it checks its paths and prints its own messages in between. Messages name the options
through an option-naming function (:mod:`privsample.api.options`), as the caller writes them.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.api.options import (
    OptionName,
    check_csv_options,
    check_data,
    check_integer,
    check_number,
    python_option,
    seeded_warning,
)
from privsample.api.release import Release
from privsample.errors import InputError

NEIGHBOURS = "(neighbours: replace one record, n public)"
BINARY_RULE = (
    "input rule (applied to every record, whatever the data): a cell reads 1 iff it is exactly one "
    "(1, 1.0, '1', true); anything else, a missing cell included, reads 0"
)
INPUT_LABEL = "the input table"


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


@dataclass(frozen=True)
class DrawInput:
    """The table as a sampler reads it: ``values`` (the k-ary codes, or the n x d bits) of ``columns``, mapped
    by the public per-record rule; ``warning``: the accuracy shortfall, when ``skip_accuracy_check`` draws anyway
    (a function of the public n and options)."""

    values: np.ndarray
    columns: tuple[str, ...]
    warning: str | None

    @property
    def n(self) -> int:
        return len(self.values)


# -- reading the input -----------------------------------------------------------------------------------
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


def read_input(data, columns: Sequence[str] | None, delimiter: str | None = None, encoding: str | None = None):
    """(table, columns): the data as ``read_table`` reads a file of it, and the columns to sample (default:
    all), checked against the header. Missing cells are handled per record by each sampler's public rule,
    never refused."""
    from privsample.data.frames import frame_table

    kind = check_data(data)
    check_csv_options(kind, delimiter, encoding)
    if kind is not None:
        df, where = frame_table(data, label=INPUT_LABEL), INPUT_LABEL
    else:
        from privsample.data.table import read_table

        df, where = read_table(data, delimiter=delimiter, encoding=encoding), str(data)
    columns = [str(c) for c in df.columns] if columns is None else list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            f"column(s) {', '.join(repr(c) for c in missing)} not in {where} "
            f"(columns: {', '.join(map(str, df.columns))})"
        )
    return df, columns


def binary_matrix(df, columns: Sequence[str]) -> np.ndarray:
    """The n x d bits of ``columns`` by the fixed per-record rule :func:`bernoulli.binarize` (never refuses)."""
    from privsample.samplers.bernoulli import binarize

    X = np.empty((len(df), len(columns)), dtype=np.int8)
    for j, c in enumerate(columns):
        X[:, j] = binarize([cell_text(v) for v in df[c].tolist()])
    return X


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


# -- the input: read, mapped by the public rule, checked against n (public) ------------------------------
def _accuracy(request: DrawRequest, d: int) -> tuple[str, int]:
    """(the sampler's description, the records per draw it needs for TV <= alpha): public values only."""
    r = request
    if r.kind == "kary":
        from privsample.samplers import kary

        k = r.domain.outcomes  # public: k, or k + 1 with the extra catch-all outcome
        what = f"the k-ary sampler (k = {k} outcomes, ε = {r.epsilon:g}; RSSS Thm 1.4)"
        return what, kary.required_n(k, r.epsilon, r.alpha)
    if r.kind == "bernoulli":
        from privsample.samplers import bernoulli

        what = f"the bounded-bias sampler (d = {d}, a = {r.clip}; RSSS Claim 6.2)"
        return what, bernoulli.required_n(r.alpha, d, r.clip)
    from privsample.privacy.conversion import cdp_rho
    from privsample.samplers import product

    rho = cdp_rho(r.epsilon, r.delta)
    what = (
        f"the product sampler (d = {d}, ρ = {rho:.4g}; Raskhodnikova et al. 2021, Thm 5.1: a "
        "conservative sufficient bound)"
    )
    return what, product.required_n(d, rho, r.alpha)


def _shortfall(request: DrawRequest, n: int, d: int) -> str | None:
    """Refuse (``NotEnoughRecords``) when a part of n // m records is below what TV <= alpha needs, unless
    ``skip_accuracy_check``: then the warning to give. Depends on n and public parameters only."""
    from privsample.samplers.parallel import NotEnoughRecords

    what, need = _accuracy(request, d)
    m, alpha, option = request.samples, request.alpha, request.option
    n_min = n // m
    if n_min >= need:
        return None
    msg = (
        f"{what} needs n >= {need:,} records per draw for TV <= alpha = {alpha:g}, i.e. n >= {need * m:,} "
        f"for {m} draw(s); the data give {n_min:,} per draw (n = {n:,})"
    )
    switch = option("skip_accuracy_check", True)
    if request.skip_accuracy_check:
        return f"{msg}; drawing anyway ({switch})"
    raise NotEnoughRecords(
        msg
        + (f"; at this alpha at most {n // need:,} draw(s) are covered" if n >= need else "")
        + f"; raise {option('alpha')} or {option('epsilon')}, or pass {switch}"
    )


def draw_input(
    data: Any, request: DrawRequest, *, delimiter: str | None = None, encoding: str | None = None
) -> DrawInput:
    """Read ``data`` (an in-memory table, or a CSV/Parquet path) for ``request``: its columns, checked against
    the header, mapped to the sampler's public domain by the fixed per-record rule (never refused, never
    dropped). Refuses (``InputError``) more draws than records, and too few records per draw for ``alpha``
    unless ``skip_accuracy_check`` (then ``DrawInput.warning`` says so): n is public."""
    from privsample.samplers.parallel import part_sizes

    df, cols = read_input(data, request.columns, delimiter, encoding)
    if request.kind == "kary":
        from privsample.samplers import kary

        dom = request.domain
        values = kary.encode(
            [cell_text(v) for v in df[cols[0]].tolist()], [cell_text(c) for c in dom.declared], dom.catch
        )
        d = 1
    else:
        values = binary_matrix(df, cols)
        d = values.shape[1]
    n = len(values)
    part_sizes(n, request.samples)
    return DrawInput(values, tuple(cols), _shortfall(request, n, d))


# -- the release -------------------------------------------------------------------------------------------
def parts_note(sizes: list[int]) -> str:
    """The per-part sizes line (functions of the public n and m)."""
    parts = ", ".join(f"{k} × {v:,}" for v, k in sorted(Counter(sizes).items(), reverse=True))
    return (
        f"per-part n: {parts} ({len(sizes)} disjoint part(s), one draw each; "
        "parallel composition: the draws cost one part's budget)"
    )


def _release(acc, draws, table, guarantee: str, rule: str) -> Release:
    from privsample.privacy.ledger import Ledger

    return Release(
        table=table,
        ledger=Ledger(acc.to_dict()),
        guarantee=f"{guarantee} {NEIGHBOURS}",
        rule=rule,
        notes=[parts_note(draws.per_part_n)],
    )


def _kary_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import kary
    from privsample.samplers.parallel import NEIGHBOURING

    dom, epsilon = r.domain, r.epsilon
    acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    draws = kary.kary_sample(
        table.values, dom.outcomes, epsilon=epsilon, accountant=acc, noise=noise, samples=r.samples, rng=rng
    )
    labels, catch, kk = dom.labels, dom.catch, dom.k
    out_vals = [labels[i] for i in draws.samples] if dom.named else [int(i) for i in draws.samples]
    if dom.named:
        name = repr(labels[catch])
    else:
        name = f"code {catch}" + (f" ('{kary.OTHER_LABEL}')" if catch == kk else "")
    extra = "" if dom.outcomes == kk else f", an extra outcome: k = {kk} + 1 = {dom.outcomes} outcomes"
    rule = (
        "input rule (applied to every record, whatever the data): a value that is not "
        + ("a declared category" if dom.named else f"one of the codes 0..{kk - 1}")
        + f", or is missing, counts as {name}{extra}"
    )
    guarantee = (
        f"pure ε-DP with ε = {epsilon:g} (discrete Laplace, scale {kary.noise_scale(epsilon):.4g} on counts; "
        f"the ledger's ρ = ε²/2 is its zCDP image); each draw has TV ≤ 2k/(ε n) = "
        f"{kary.tv_bound(dom.outcomes, epsilon, min(draws.per_part_n)):.3g} with k = {dom.outcomes}"
    )
    return _release(acc, draws, pd.DataFrame({table.columns[0]: out_vals}), guarantee, rule)


def _bernoulli_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.privacy.conversion import cdp_rho
    from privsample.samplers import bernoulli
    from privsample.samplers.parallel import NEIGHBOURING

    epsilon, delta = r.epsilon, r.delta
    if delta is None:
        acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    else:
        acc = Accountant(cdp_rho(epsilon, delta), target=(epsilon, delta), neighbouring=NEIGHBOURING)
    draws = bernoulli.bounded_bias_sample(
        table.values,
        epsilon=epsilon,
        delta=delta,
        accountant=acc,
        noise=noise,
        a=r.clip,
        samples=r.samples,
        rng=rng,
        delta_name=r.option("delta"),
    )
    if delta is None:
        guarantee = (
            f"pure ε-DP with ε = {draws.epsilon:.4g} ≤ {epsilon:g} (d ln(1 + 1/(a n)), n = "
            f"{min(draws.per_part_n):,} per draw; the ledger's ρ = ε²/2 is its zCDP image)"
        )
    else:
        guarantee = (
            f"ρ-zCDP with ρ = {draws.rho:.4g} ≤ ρ(ε = {epsilon:g}, δ = {delta:g}) = "
            f"{acc.rho_total:.4g} "
            f"(each column pure {draws.epsilon or bernoulli.column_epsilon(min(draws.per_part_n), r.clip):.4g}-DP)"
        )
    bits = pd.DataFrame(draws.samples.astype(int), columns=list(table.columns))
    return _release(acc, draws, bits, guarantee, BINARY_RULE)


def _product_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import product
    from privsample.samplers.parallel import NEIGHBOURING

    acc = Accountant.from_epsilon_delta(r.epsilon, r.delta, neighbouring=NEIGHBOURING)
    draws = product.product_sample(
        table.values, rho=acc.rho_total, accountant=acc, noise=noise, samples=r.samples, alpha=r.alpha, rng=rng
    )
    guarantee = f"ρ-zCDP with ρ = {draws.rho:.4g}, i.e. ({r.epsilon:g}, {r.delta:g})-DP (RSSS Lemma 5.2)"
    bits = pd.DataFrame(draws.samples.astype(int), columns=list(table.columns))
    return _release(acc, draws, bits, guarantee, BINARY_RULE)


def draw_release(request: DrawRequest, table: DrawInput) -> Release:
    """The ``request.samples`` draws from ``table`` (read by :func:`draw_input` for this request), one per
    disjoint part of a public random partition: the draws and public texts only. The noise and the partition
    are seeded with ``request.seed`` (NOT private; the caller warns)."""
    from privsample.privacy import make_noise

    # the noise source, then the public rng of the partition (both seeded when a seed is given)
    noise, rng = make_noise(request.seed, quiet=True), np.random.default_rng(request.seed)
    run = {"kary": _kary_release, "bernoulli": _bernoulli_release, "product": _product_release}[request.kind]
    return run(request, table, noise, rng)


def _draw(request: DrawRequest, data, delimiter, encoding, budget, stacklevel: int = 3) -> Release:
    """Charge ``budget`` (before the data are read, or refuse), read the input, warn, draw: the Python front
    end of the three samplers. Warnings point at the caller of ``draw_*``."""
    if budget is not None:
        from privsample.privacy.budget import charged

        return charged(
            budget,
            request.seed,
            draw_charge(request),
            data,
            lambda: _draw(request, data, delimiter, encoding, None, stacklevel + 3),
        )
    table = draw_input(data, request, delimiter=delimiter, encoding=encoding)
    if table.warning:
        warnings.warn(table.warning, UserWarning, stacklevel=stacklevel)
    if request.seed is not None:
        warnings.warn(seeded_warning(request.seed), UserWarning, stacklevel=stacklevel)
    return draw_release(request, table)


# -- the three samplers ----------------------------------------------------------------------------------
def draw_kary(
    data,
    column: str,
    *,
    epsilon: float,
    categories: str | Sequence[Any] | None = None,
    k: int | None = None,
    other: str | int | None = None,
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    budget: Any = None,
) -> Release:
    """k-ary sampler (RSSS Alg. 3, Thm 1.4): ``samples`` draws from the distribution of ``column``, one per
    disjoint part of the data. Pure epsilon-DP.

    Guarantee: pure ``epsilon``-DP for replace-one neighbours with n public. Replacing one record moves one
    unit of count from one category to another (L1 sensitivity 2), so discrete Laplace noise of scale
    2/epsilon on the counts is epsilon-DP; the projection onto the simplex and the exact draw are
    post-processing, and the m parts compose in parallel. Accuracy: each draw is within TV 2k/(epsilon n)
    of the column's distribution (Thm 1.4); fewer than 2k/(alpha epsilon) records per draw are refused
    unless ``skip_accuracy_check``.

    The public domain is declared, never read from the data: ``categories`` (a list, or names separated by
    ',') or ``k`` (the values are then the integer codes 0..k-1). A value that is not declared, or is
    missing, counts as the catch-all: an extra outcome '(other)' (code k with ``k``), or the declared
    category named by ``other``. ``seed``: seeded noise and partition, NOT PRIVATE. ``delimiter`` and
    ``encoding``: for a CSV path. ``budget``: a ``Budget`` (or its file) charged before the data are read.

    Raises ``InputError`` (before any draw) for bad parameters, a missing column, more samples than records,
    or too few records per draw for ``alpha``, with the number of records needed.

    Example (seeded: reproducible, NOT private)::

        >>> import warnings, numpy as np, pandas as pd
        >>> df = pd.DataFrame({"color": np.random.default_rng(0).choice(["red", "green", "blue"], 3000)})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the seeded-noise warning
        ...     release = draw_kary(df, "color", categories=["red", "green", "blue"], epsilon=1, samples=5, seed=0)
        >>> release.table.shape, release.private
        ((5, 1), False)
        >>> set(release.table["color"]) <= {"red", "green", "blue", "(other)"}
        True
        >>> release.notes[0][:21]
        'per-part n: 5 × 600 ('
    """
    request = kary_request(
        column=column,
        epsilon=epsilon,
        categories=categories,
        k=k,
        other=other,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
    )
    return _draw(request, data, delimiter, encoding, budget)


def draw_bernoulli(
    data,
    columns: str | Sequence[str] | None = None,
    *,
    epsilon: float,
    delta: float | None = None,
    clip: str | float | Fraction = "1/4",
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    budget: Any = None,
) -> Release:
    """Bounded-bias sampler (RSSS Thms 6.1/6.4): per column, the mean clipped to [a, 1 - a] (a = ``clip``),
    then one Bernoulli draw; no added noise. ``samples`` draws, one per disjoint part of the data.

    Guarantee, for replace-one neighbours with n public: replacing one record moves each clipped mean by at
    most 1/n, and both output probabilities are at least a, so one column is pure eps0-DP with
    eps0 = ln(1 + 1/(a n)) (Claim 6.3). Without ``delta``: pure (d eps0)-DP over the d columns (basic
    composition, Thm 6.1), refused unless it is at most ``epsilon``; with ``delta``: (d eps0²/2)-zCDP,
    refused unless within rho(epsilon, delta) (Thm 6.4). The refusal says how many records per draw are
    needed; it depends on n only. Accurate (TV <= alpha, Claim 6.2) for biases in [1/3, 2/3]; private for
    any data.

    ``columns``: a list, or names separated by ',' (default: all). A cell reads 1 iff it is exactly one
    (1, 1.0, '1', true), else 0 (missing included). ``seed``: seeded draws and partition, NOT PRIVATE.

    Example (seeded: reproducible, NOT private)::

        >>> import warnings, numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.integers(0, 2, 2000), "b": rng.integers(0, 2, 2000)})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the seeded-noise warning
        ...     release = draw_bernoulli(df, epsilon=1, samples=4, seed=0)
        >>> release.table.shape, release.private
        ((4, 2), False)
        >>> release.guarantee.startswith("pure ε-DP")
        True
    """
    request = bernoulli_request(
        columns=columns,
        epsilon=epsilon,
        delta=delta,
        clip=clip,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
    )
    return _draw(request, data, delimiter, encoding, budget)


def draw_product(
    data,
    columns: str | Sequence[str] | None = None,
    *,
    epsilon: float,
    delta: float = 1e-9,
    samples: int = 1,
    alpha: float = 0.1,
    skip_accuracy_check: bool = False,
    seed: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    budget: Any = None,
) -> Release:
    """General product sampler (RSSS Alg. 4, Thm 5.1): bucketing of the columns by noisy truncated means,
    then fresh noisy means and one Bernoulli draw per column. ``samples`` draws, one per disjoint part.

    Guarantee: rho-zCDP with rho = rho(``epsilon``, ``delta``), hence (epsilon, delta)-DP, for replace-one
    neighbours with n public (Lemma 5.2). Each record lies in one batch of its part, and one replaced
    record moves that batch's truncated column sums by a bounded L2 amount, so discrete Gaussian noise
    calibrated to it makes every release of the part rho-zCDP in all; the m parts compose in parallel.
    Accuracy: the records per draw that the conservative sufficient bound for Thm 5.1 asks for at
    ``alpha``; fewer are refused unless ``skip_accuracy_check`` (the algorithm itself needs at least one
    record per batch, 2r, whatever the check).

    ``columns``: a list, or names separated by ',' (default: all). A cell reads 1 iff it is exactly one
    (1, 1.0, '1', true), else 0 (missing included). ``seed``: seeded noise and partition, NOT PRIVATE.

    Example (seeded: reproducible, NOT private)::

        >>> import warnings, numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"a": rng.integers(0, 2, 2000), "b": rng.integers(0, 2, 2000)})
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # the seeded-noise and accuracy warnings
        ...     release = draw_product(df, epsilon=1, skip_accuracy_check=True, seed=0)
        >>> release.table.shape, release.private
        ((1, 2), False)
        >>> release.ledger.entries[0]["label"]
        'product/draw'
    """
    request = product_request(
        columns=columns,
        epsilon=epsilon,
        delta=delta,
        samples=samples,
        alpha=alpha,
        skip_accuracy_check=skip_accuracy_check,
        seed=seed,
    )
    return _draw(request, data, delimiter, encoding, budget)


__all__ = [
    "draw_kary",
    "draw_bernoulli",
    "draw_product",
    "kary_request",
    "bernoulli_request",
    "product_request",
    "draw_input",
    "draw_release",
    "draw_charge",
    "DrawRequest",
    "DrawInput",
    "KaryDomain",
    "BINARY_RULE",
]
