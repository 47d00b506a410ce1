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
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from privsample.api.options import check_csv_options, check_data, check_integer, check_number
from privsample.api.release import Release
from privsample.errors import InputError

NEIGHBOURS = "(neighbours: replace one record, n public)"
BINARY_RULE = (
    "input rule (applied to every record, whatever the data): a cell reads 1 iff it is exactly one "
    "(1, 1.0, '1', true); anything else, a missing cell included, reads 0"
)


class Frontend:
    """How messages name the parameters and where warnings go. This one speaks Python (``epsilon``,
    ``k=3``, :func:`warnings.warn`); the command line subclasses it to speak of its flags and print on its
    console, so that both run one implementation with the same checks in the same order."""

    cli = False

    def name(self, param: str) -> str:
        """How a message names a parameter: ``epsilon`` (``--epsilon`` on the command line)."""
        return param

    def setting(self, param: str, value: str) -> str:
        """A parameter with its value: ``k=3`` (``--k 3``)."""
        return f"{param}={value}"

    def switch(self, param: str) -> str:
        """How to turn a yes/no option on: ``skip_accuracy_check=True`` (``--skip-accuracy-check``)."""
        return f"{param}=True"

    def before_read(self, path) -> None:
        """Called before a table file is read (the command line checks its input and output paths)."""

    def warn_accuracy(self, message: str) -> None:
        """The accuracy bound is not met but ``skip_accuracy_check`` was given: draw anyway, say so."""
        warnings.warn(f"{message}; drawing anyway ({self.switch('skip_accuracy_check')})", UserWarning, stacklevel=4)

    def warn_seeded(self, seed: int) -> None:
        """A seed was given: the release is NOT PRIVATE."""
        warnings.warn(
            f"seed={seed}: using seeded NumPy noise; the output is NOT differentially private "
            "(reproducible experiments only)",
            UserWarning,
            stacklevel=4,
        )


PYTHON = Frontend()


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


def read_input(
    data, columns: list[str] | None, fe: Frontend, delimiter: str | None = None, encoding: str | None = None
):
    """(table, columns): the data as ``read_table`` reads a file of it, and the columns to sample (default:
    all), checked against the header. Missing cells are handled per record by each sampler's public rule,
    never refused."""
    from privsample.data.frames import frame_table

    kind = check_data(data)
    check_csv_options(kind, delimiter, encoding)
    if kind is not None:
        df, where = frame_table(data, label="the input table"), "the input table"
    else:
        from privsample.data.table import read_table

        fe.before_read(data)
        df, where = read_table(data, delimiter=delimiter, encoding=encoding), str(data)
    if columns is None:
        columns = [str(c) for c in df.columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            f"column(s) {', '.join(repr(c) for c in missing)} not in {where} "
            f"(columns: {', '.join(map(str, df.columns))})"
        )
    if len(set(columns)) != len(columns):
        raise InputError(f"{fe.name('columns')} lists a column twice")
    return df, columns


def binary_matrix(df, columns: list[str]) -> np.ndarray:
    """The n x d bits of ``columns`` by the fixed per-record rule :func:`bernoulli.binarize` (never refuses)."""
    from privsample.samplers.bernoulli import binarize

    X = np.empty((len(df), len(columns)), dtype=np.int8)
    for j, c in enumerate(columns):
        X[:, j] = binarize([cell_text(v) for v in df[c].tolist()])
    return X


# -- checks of public parameters (before the data are read) --------------------------------------------
def _number(value, param: str, fe: Frontend) -> float:
    return check_number(value, fe.name(param))


def _check_epsilon(epsilon, fe: Frontend) -> float:
    epsilon = _number(epsilon, "epsilon", fe)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"{fe.name('epsilon')} must be > 0 and finite (got {epsilon})")
    return epsilon


def draw_charge(kind: str, epsilon, delta, fe: Frontend) -> dict:
    """What ``draw KIND`` is charged in a budget file (``privsample.privacy.budget``), from its options alone:
    kary and bernoulli without delta are pure epsilon-DP (rho = epsilon²/2); product and bernoulli with delta
    are rho(epsilon, delta)-zCDP. Replace-one neighbours with n public."""
    from privsample.privacy.budget import pure_charge, zcdp_charge
    from privsample.samplers.parallel import NEIGHBOURING

    epsilon = _check_epsilon(epsilon, fe)
    what = {"kary": "RSSS k-ary", "bernoulli": "RSSS bounded-bias", "product": "RSSS product"}
    if delta is None:
        return pure_charge(f"draw {kind}", what[kind], epsilon, NEIGHBOURING)
    return zcdp_charge(f"draw {kind}", what[kind], epsilon, _check_delta(delta, fe), NEIGHBOURING)


def _check_alpha(alpha, fe: Frontend) -> float:
    alpha = _number(alpha, "alpha", fe)
    if not (0 < alpha < 1):
        raise InputError(f"{fe.name('alpha')} must lie in (0, 1) (got {alpha})")
    return alpha


def _check_delta(delta, fe: Frontend) -> float:
    delta = _number(delta, "delta", fe)
    if not (0 < delta < 1):
        raise InputError(f"{fe.name('delta')} must lie in (0, 1) (got {delta})")
    return delta


def _check_int(value, param: str, fe: Frontend, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if optional and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
        raise InputError(f"{fe.name(param)} must be an integer or None (got {value!r})")
    return check_integer(value, fe.name(param))


def _refuse_accuracy(what: str, need: int, m: int, n: int, alpha: float, skip: bool, fe: Frontend) -> None:
    """Refuse (``NotEnoughRecords``) when a part of n // m records is below ``need`` for TV <= alpha, unless
    ``skip``: then warn and go on. Depends on n and public parameters only."""
    from privsample.samplers.parallel import NotEnoughRecords

    n_min = n // m
    if n_min >= need:
        return
    msg = (
        f"{what} needs n >= {need:,} records per draw for TV <= alpha = {alpha:g}, i.e. n >= {need * m:,} "
        f"for {m} draw(s); the data give {n_min:,} per draw (n = {n:,})"
    )
    if skip:
        fe.warn_accuracy(msg)
        return
    raise NotEnoughRecords(
        msg
        + (f"; at this alpha at most {n // need:,} draw(s) are covered" if n >= need else "")
        + f"; raise {fe.name('alpha')} or {fe.name('epsilon')}, or pass {fe.switch('skip_accuracy_check')}"
    )


def _setup(seed: int | None, fe: Frontend):
    """The noise source and the public rng of the partition (both seeded when ``seed`` is given)."""
    from privsample.privacy import make_noise

    if seed is not None:
        fe.warn_seeded(seed)
    return make_noise(seed, quiet=True), np.random.default_rng(seed)


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
    frontend: Frontend = PYTHON,
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
    ``encoding``: for a CSV path. ``frontend``: how messages and warnings are worded (the command line
    passes its own).

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
    if budget is not None:  # charged before the data are read, or refused
        args = dict(locals(), budget=None)  # the arguments, before any other local name
        from privsample.privacy.budget import charged

        charge = draw_charge("kary", epsilon, None, frontend)
        return charged(budget, seed, charge, data, lambda: draw_kary(**args))
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import kary
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    fe = frontend
    epsilon = _check_epsilon(epsilon, fe)
    alpha = _check_alpha(alpha, fe)
    samples = _check_int(samples, "samples", fe)
    seed = _check_int(seed, "seed", fe, optional=True)
    k = _check_int(k, "k", fe, optional=True)
    if categories is None and k is None:
        raise InputError(
            "declare the public domain of the column with "
            + ("--categories a,b,c or --k K" if fe.cli else "categories=[...] or k=K")
            + " (reading it from the data would not be private)"
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
                f"{fe.name('categories')} must be distinct, non-empty names" + (" separated by ','" if fe.cli else "")
            )
        if k is not None and k != len(cats):
            raise InputError(f"{fe.setting('k', k)} does not match the {len(cats)} {fe.name('categories')}")
    kk = len(cats) if cats is not None else k
    if kk < 1:
        raise InputError(f"{fe.name('k')} must be >= 1 (got {kk})")
    declared = cats if cats is not None else [str(i) for i in range(kk)]
    other = None if other is None else str(other).strip()
    if other is not None and other not in declared:
        raise InputError(
            f"{fe.setting('other', repr(other))} is not one of the declared "
            + (fe.name("categories") if cats is not None else f"codes 0..{kk - 1}")
        )
    labels, catch = kary.domain_with_other(declared, other)
    k_out = len(labels)  # public: k, or k + 1 with the extra catch-all outcome
    df, _ = read_input(data, [str(column)], fe, delimiter, encoding)
    column = str(column)
    codes = kary.encode([cell_text(v) for v in df[column].tolist()], [cell_text(c) for c in declared], catch)
    n = len(codes)
    sizes = part_sizes(n, samples)
    _refuse_accuracy(
        f"the k-ary sampler (k = {k_out} outcomes, ε = {epsilon:g}; RSSS Thm 1.4)",
        kary.required_n(k_out, epsilon, alpha),
        samples,
        n,
        alpha,
        skip_accuracy_check,
        fe,
    )
    noise, rng = _setup(seed, fe)
    acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    draws = kary.kary_sample(codes, k_out, epsilon=epsilon, accountant=acc, noise=noise, samples=samples, rng=rng)
    assert draws.per_part_n == sizes
    out_vals = [labels[i] for i in draws.samples] if cats is not None else [int(i) for i in draws.samples]
    if cats is not None:
        name = repr(labels[catch])
    else:
        name = f"code {catch}" + (f" ('{kary.OTHER_LABEL}')" if catch == kk else "")
    extra = "" if k_out == kk else f", an extra outcome: k = {kk} + 1 = {k_out} outcomes"
    rule = (
        "input rule (applied to every record, whatever the data): a value that is not "
        + ("a declared category" if cats is not None else f"one of the codes 0..{kk - 1}")
        + f", or is missing, counts as {name}{extra}"
    )
    guarantee = (
        f"pure ε-DP with ε = {epsilon:g} (discrete Laplace, scale {kary.noise_scale(epsilon):.4g} on counts; "
        f"the ledger's ρ = ε²/2 is its zCDP image); each draw has TV ≤ 2k/(ε n) = "
        f"{kary.tv_bound(k_out, epsilon, min(sizes)):.3g} with k = {k_out}"
    )
    return _release(acc, draws, pd.DataFrame({column: out_vals}), guarantee, rule)


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
    frontend: Frontend = PYTHON,
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
    if budget is not None:  # charged before the data are read, or refused
        args = dict(locals(), budget=None)  # the arguments, before any other local name
        from privsample.privacy.budget import charged

        charge = draw_charge("bernoulli", epsilon, delta, frontend)
        return charged(budget, seed, charge, data, lambda: draw_bernoulli(**args))
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.privacy.conversion import cdp_rho
    from privsample.samplers import bernoulli
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    fe = frontend
    epsilon = _check_epsilon(epsilon, fe)
    alpha = _check_alpha(alpha, fe)
    if delta is not None:
        delta = _check_delta(delta, fe)
    samples = _check_int(samples, "samples", fe)
    seed = _check_int(seed, "seed", fe, optional=True)
    try:
        if isinstance(clip, str):
            value = Fraction(clip.strip())
        elif isinstance(clip, float):
            value = Fraction(repr(clip))  # 0.25 as written, not its binary expansion
        else:
            value = Fraction(clip)
    except (ValueError, ZeroDivisionError, TypeError):
        raise InputError(f"{fe.name('clip')} must be a number such as 1/4 or 0.25 (got {clip!r})") from None
    a = bernoulli.check_clip(value)
    df, cols = read_input(data, None if columns is None else _names(columns), fe, delimiter, encoding)
    X = binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    _refuse_accuracy(
        f"the bounded-bias sampler (d = {d}, a = {a}; RSSS Claim 6.2)",
        bernoulli.required_n(alpha, d, a),
        samples,
        n,
        alpha,
        skip_accuracy_check,
        fe,
    )
    noise, rng = _setup(seed, fe)
    if delta is None:
        acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    else:
        acc = Accountant(cdp_rho(epsilon, delta), target=(epsilon, delta), neighbouring=NEIGHBOURING)
    draws = bernoulli.bounded_bias_sample(
        X,
        epsilon=epsilon,
        delta=delta,
        accountant=acc,
        noise=noise,
        a=a,
        samples=samples,
        rng=rng,
        delta_name=fe.name("delta"),
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
            f"(each column pure {draws.epsilon or bernoulli.column_epsilon(min(draws.per_part_n), a):.4g}-DP)"
        )
    return _release(acc, draws, pd.DataFrame(draws.samples.astype(int), columns=cols), guarantee, BINARY_RULE)


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
    frontend: Frontend = PYTHON,
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
    if budget is not None:  # charged before the data are read, or refused
        args = dict(locals(), budget=None)  # the arguments, before any other local name
        from privsample.privacy.budget import charged

        charge = draw_charge("product", epsilon, delta, frontend)
        return charged(budget, seed, charge, data, lambda: draw_product(**args))
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import product
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    fe = frontend
    epsilon = _check_epsilon(epsilon, fe)
    alpha = _check_alpha(alpha, fe)
    delta = _check_delta(delta, fe)
    samples = _check_int(samples, "samples", fe)
    seed = _check_int(seed, "seed", fe, optional=True)
    df, cols = read_input(data, None if columns is None else _names(columns), fe, delimiter, encoding)
    X = binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    acc = Accountant.from_epsilon_delta(epsilon, delta, neighbouring=NEIGHBOURING)
    _refuse_accuracy(
        f"the product sampler (d = {d}, ρ = {acc.rho_total:.4g}; Raskhodnikova et al. 2021, Thm 5.1: a "
        "conservative sufficient bound)",
        product.required_n(d, acc.rho_total, alpha),
        samples,
        n,
        alpha,
        skip_accuracy_check,
        fe,
    )
    noise, rng = _setup(seed, fe)
    draws = product.product_sample(
        X, rho=acc.rho_total, accountant=acc, noise=noise, samples=samples, alpha=alpha, rng=rng
    )
    guarantee = f"ρ-zCDP with ρ = {draws.rho:.4g}, i.e. ({epsilon:g}, {delta:g})-DP (RSSS Lemma 5.2)"
    return _release(acc, draws, pd.DataFrame(draws.samples.astype(int), columns=cols), guarantee, BINARY_RULE)


__all__ = ["draw_kary", "draw_bernoulli", "draw_product", "Frontend", "PYTHON", "BINARY_RULE"]
