"""``cube_sample``: private sampling on the Boolean cube from Python (Boedihardjo, Strohmer and Vershynin), the
function behind ``privsample cube sample``.

Guarantee: pure epsilon-DP for **replace-one** neighbours with n public, and only when BSV's Thm 12.2 (with
the solver margin of :func:`privsample.cube.sampler.solver_margin`) certifies the requested epsilon for
(n, p, d, m, delta, Delta, k); otherwise the release is refused before the data's density is computed. The
proof's key step: the reduced space S is drawn independently of the data, every density h* the sampler can
draw from is >= delta/m on S, and one replaced record moves h* by at most S_inf in sup norm, so
h_X(y) <= (1 + m S_inf / delta) h_X'(y) <= e^(epsilon/k) h_X'(y); the k points are independent exact draws
from h*, so together they are epsilon-DP (BSV's private-sampling lemma). There is no added noise: the draws'
randomness comes from the project's secure noise source (OpenDP), or from seeded NumPy noise with a seed, which
is NOT private.

Released: the draws (decoded to the table's columns) and public parameters (the certified epsilon, p, d, m,
the fraction of draws that were valid codes, a function of the draws alone); never lambda*, the solver's
residuals, iteration counts or times. Records are read by a fixed per-record rule (``Release.rule``), never
refused or dropped for their values; a draft schema read off the data or a privately discovered one is
refused before the data is read.

Paper: Boedihardjo, Strohmer and Vershynin (2021), *Private sampling: a noiseless approach for generating
differentially private synthetic data* (arXiv 2109.14839); the LP/QP for h* and the bounds' tables follow
Pierquin, Zimmermann and Boussard (2023), arXiv 2312.07139.

The command line runs the same steps (:func:`cube_request`, :func:`cube_input`, :func:`cube_release`) with
its own checks of paths and messages in between.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

from privsample.privacy.released import released
from privsample.api.options import (
    OptionName,
    as_path,
    check_csv_options,
    check_data,
    check_integer,
    check_number,
    check_schema_argument,
    check_seed,
    python_option,
    seeded_warning,
)
from privsample.api.release import Release
from privsample.errors import InputError

INPUT_LABEL = "the input table"


@dataclass(frozen=True)
class CubeRequest:
    """The checked options of a cube release: public values only (``sampler`` holds d, m, delta, Delta and
    the rule for invalid codes)."""

    epsilon: float
    k: int
    sampler: Any  # privsample.cube.sampler.BooleanCubeSampler
    invalid: str
    seed: int | None


@dataclass(frozen=True)
class CubeInput:
    """The table as the sampler reads it: the engine of its codes, their encoding on the cube, the schema the
    codes are in, and whether a schema was given (which fixes the printed reading rule)."""

    engine: Any
    encoding: Any
    schema: Any
    schema_given: bool


def cube_request(
    *,
    epsilon: float,
    k: int,
    m: int | None = None,
    degree: int = 2,
    small_delta: float = 0.25,
    big_delta: float = 4.0,
    invalid: str = "repair",
    seed: int | None = None,
    option: OptionName = python_option,
    theorem_bound: bool = False,
) -> CubeRequest:
    """Check the options (public values, no data read); ``InputError`` names an option by ``option(name)``."""
    from privsample.cube.encoding import INVALID_RULES
    from privsample.cube.sampler import BooleanCubeSampler

    epsilon = check_number(epsilon, option("epsilon"))
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise InputError(f"{option('epsilon')} must be > 0 and finite (got {epsilon})")
    k = check_integer(k, option("k"))
    m = None if m is None else check_integer(m, option("m"))
    degree = check_integer(degree, option("degree"))
    small_delta = check_number(small_delta, option("small_delta"))
    big_delta = check_number(big_delta, option("big_delta"))
    seed = check_seed(seed)
    sampler = BooleanCubeSampler(
        degree=degree, m=m, delta=small_delta, Delta=big_delta, invalid=invalid, theorem_bound=theorem_bound
    )
    if invalid not in INVALID_RULES:  # the message of CubeEncoding.decode, before any work
        raise InputError(f"invalid must be one of {', '.join(INVALID_RULES)}, got {invalid!r}")
    if k < 1:  # the message of BooleanCubeSampler.plan, before any work
        raise InputError(f"k must be >= 1, got {k}")
    return CubeRequest(epsilon=epsilon, k=k, sampler=sampler, invalid=invalid, seed=seed)


def cube_input(
    data: Any, schema: Any = None, *, delimiter: str | None = None, encoding: str | None = None
) -> CubeInput:
    """Read ``data`` (an in-memory table, or a CSV/Parquet path) for the cube by the per-record rule of
    :mod:`privsample.cube.pipeline`: the schema (a ``Schema`` or its file) is checked before the data is read;
    an in-memory table is read as its CSV would be (:func:`privsample.data.frames.frame_table`)."""
    from privsample.cube.pipeline import cube_codes, cube_schema, load_for_cube
    from privsample.data.frames import frame_table

    kind = check_data(data)
    check_csv_options(kind, delimiter, encoding)
    check_schema_argument(schema)
    if kind is None:
        eng, enc, sch = load_for_cube(as_path(data), as_path(schema), delimiter=delimiter, encoding=encoding)
    else:
        checked = cube_schema(as_path(schema))  # before the data is read
        df = frame_table(data, label=INPUT_LABEL, **({"na_values": checked.na_values} if checked else {}))
        eng, enc, sch = cube_codes(df, checked, INPUT_LABEL)
    return CubeInput(engine=eng, encoding=enc, schema=sch, schema_given=schema is not None)


def cube_release(request: CubeRequest, table: CubeInput) -> Release:
    """Release ``request.k`` points if Thm 12.2 certifies ``request.epsilon`` (else ``CertificationError``, an
    ``InputError``, before the density is computed): the draws and public texts only."""
    import numpy as np

    from privsample.cube.pipeline import decode_table, reading_rule
    from privsample.cube.sampler import NEIGHBOURING
    from privsample.privacy import Accountant, make_noise
    from privsample.privacy.ledger import Ledger

    eps = request.epsilon
    acc = Accountant(eps**2 / 2, target=(eps, 0.0), neighbouring=NEIGHBOURING)
    rng = np.random.default_rng(request.seed)  # public randomness (S, repairs); seeded, not private, with a seed
    noise = make_noise(request.seed, quiet=True)
    rel = request.sampler.sample(table.engine, table.encoding, request.k, acc, noise, epsilon=eps, rng=rng)
    draws = decode_table(rel.codes, table.schema, rng)
    how = (
        "proved: k ln(Δ/δ), the density of every draw lies in [δ/m, Δ/m]"
        if rel.info["bound"] == "box"
        else "BSV Thm 12.2 with the solver margin, which rests on two unproved conditions (docs: privacy model)"
    )
    guarantee = (
        f"certified pure ε = {rel.epsilon:.4g} ({how}; replace-one, n public; p={rel.info['p']}, "
        f"d={request.sampler.degree}, m={rel.info['m']})"
    )
    # a function of the released draws and the public encoding only
    valid = f"{released(rel.valid_fraction, '.1%')} were valid codes ({request.invalid} for the rest)"
    return Release(draws, Ledger(acc.to_dict()), guarantee, rule=reading_rule(table.schema_given), notes=[valid])


def cube_sample(
    data: Any,
    *,
    epsilon: float,
    k: int,
    m: int | None = None,
    degree: int = 2,
    small_delta: float = 0.25,
    big_delta: float = 4.0,
    schema: Any = None,
    invalid: str = "repair",
    seed: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    budget: Any = None,
    theorem_bound: bool = False,
) -> Release:
    """Release ``k`` points drawn from BSV's noise-free private density on the Boolean cube, if ``epsilon`` is
    certified for them (``privsample cube sample``).

    Guarantee: pure ``epsilon``-DP for replace-one neighbours with n public, proved by the box bound k
    ln(Delta/delta): every density drawn from lies in [delta/m, Delta/m] on a data-independent S, which bounds every
    output probability's change by Delta/delta per draw, whichever branch ran (``privsample.cube.sampler``).
    ``theorem_bound=True`` also accepts BSV Thm 12.2's epsilon when smaller (very large n); it rests on two
    conditions not proved here (docs: the privacy model). Otherwise ``InputError`` (``CertificationError``) with the
    certified epsilon, the largest k at this epsilon and the number of records k points would need; nothing is
    computed from the data but n (public) before that.

    ``data``: a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path: binary 0/1
    columns, or any columns with ``schema`` (a reviewed public ``Schema`` or its YAML/JSON file; a draft or a
    privately discovered schema is refused). ``m``: size of the reduced space (default 4L); ``degree``: the
    marginal degree d; ``small_delta`` / ``big_delta``: BSV's δ and Δ (density between δ/m and Δ/m);
    ``invalid``: draws that are not valid one-hot codes are ``"repair"``-ed or ``"drop"``-ped;
    ``delimiter`` / ``encoding``: a CSV file's. ``budget``: a ``Budget`` (or its file) charged ε²/2 first.
    ``seed``: seeded NumPy noise, NOT private (a warning;
    ``release.private`` is False).

    Returns a ``Release``: ``table`` (the draws, decoded to the columns, as the command writes them),
    ``ledger``, ``guarantee`` (the certified ε), ``rule`` (how each record was read) and ``notes`` (the
    fraction of valid codes).

    Example (seeded: NOT PRIVATE; the certified ε of so few records is large)::

        >>> import warnings
        >>> import numpy as np, pandas as pd
        >>> from privsample import cube_sample
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.integers(0, 2, size=(500, 3)), columns=["a", "b", "c"])
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # seed=0: NOT private
        ...     release = cube_sample(df, epsilon=1000, k=2, degree=1, seed=0)
        >>> release.table.shape, release.private
        ((2, 3), False)
        >>> release.guarantee
        'certified pure ε = ... (proved: k ln(Δ/δ), ...; replace-one, n public; p=3, d=1, m=16)'
        >>> cube_sample(df, epsilon=1, k=2, degree=1)
        Traceback (most recent call last):
        ...
        privsample.cube.sampler.CertificationError: releasing k=2 points certifies only epsilon >= ...
    """
    check_csv_options(check_data(data), delimiter, encoding)
    check_schema_argument(schema)
    request = cube_request(
        epsilon=epsilon,
        k=k,
        m=m,
        degree=degree,
        small_delta=small_delta,
        big_delta=big_delta,
        invalid=invalid,
        seed=seed,
        theorem_bound=theorem_bound,
    )
    if request.seed is not None:
        warnings.warn(seeded_warning(request.seed), UserWarning, stacklevel=2)
    if budget is not None:  # pure epsilon-DP: charged epsilon²/2 before the data are read, or refused
        from privsample.api.accounting import charged

        return charged(
            budget,
            request.seed,
            cube_charge(request),
            data,
            lambda: cube_release(request, cube_input(data, schema, delimiter=delimiter, encoding=encoding)),
        )
    return cube_release(request, cube_input(data, schema, delimiter=delimiter, encoding=encoding))


def cube_charge(request: CubeRequest) -> dict:
    """What ``cube sample`` is charged in a budget file: pure epsilon-DP, rho = epsilon²/2, replace-one."""
    from privsample.cube.sampler import NEIGHBOURING
    from privsample.privacy.budget import pure_charge

    return pure_charge("cube sample", "BSV cube sampler", request.epsilon, NEIGHBOURING)


__all__ = ["cube_sample", "cube_charge", "cube_request", "cube_input", "cube_release", "CubeRequest", "CubeInput"]
