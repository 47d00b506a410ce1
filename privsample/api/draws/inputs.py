"""The input of the samplers from distributions (:mod:`privsample.api.draws`): :func:`draw_input` reads the
table, maps the columns of a :class:`~privsample.api.draws.requests.DrawRequest` to the sampler's public domain
by the fixed per-record rule (never refused, never dropped: n stays public) and refuses, from n and the public
options only, more draws than records or too few records per draw for the accuracy asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privsample.api.draws.requests import DrawRequest, cell_text
from privsample.api.options import check_csv_options, check_data
from privsample.errors import InputError

INPUT_LABEL = "the input table"


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
