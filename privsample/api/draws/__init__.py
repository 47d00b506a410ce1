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

The steps live in their own modules: :mod:`privsample.api.draws.requests` (the checked options),
:mod:`privsample.api.draws.inputs` (the table as the sampler reads it) and
:mod:`privsample.api.draws.releases` (the draws and their public texts); every name is importable from here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

# the steps, and the helpers they share (importable from here as well, outside ``__all__``)
from privsample.api.draws.inputs import INPUT_LABEL as INPUT_LABEL
from privsample.api.draws.inputs import DrawInput, draw_input
from privsample.api.draws.inputs import binary_matrix as binary_matrix
from privsample.api.draws.inputs import read_input as read_input
from privsample.api.draws.releases import BINARY_RULE, draw_release
from privsample.api.draws.releases import NEIGHBOURS as NEIGHBOURS
from privsample.api.draws.releases import parts_note as parts_note
from privsample.api.draws.requests import (
    DrawRequest,
    KaryDomain,
    bernoulli_request,
    draw_charge,
    kary_request,
    product_request,
)
from privsample.api.draws.requests import cell_text as cell_text
from privsample.api.options import seeded_warning
from privsample.api.release import Release


def _draw(request: DrawRequest, data, delimiter, encoding, budget, stacklevel: int = 3) -> Release:
    """Charge ``budget`` (before the data are read, or refuse), read the input, warn, draw: the Python front
    end of the three samplers. Warnings point at the caller of ``draw_*``."""
    if budget is not None:
        from privsample.api.accounting import charged

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
