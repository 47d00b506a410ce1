"""``mbde_sample``: MBDE (mollified boosted density estimation, Husain, Cranko and Nock) from Python, the
function behind ``privsample mbde``.

Guarantee: ``epsilon``-*integral privacy* for the released rows together: for **any** two datasets S, S' (no
adjacency, any sizes, the empty one included) and every set B of outputs, Pr[A(S) in B] <= e^epsilon
Pr[A(S') in B]; hence epsilon-DP for every neighbouring relation (recorded as epsilon^2/2-zCDP in the ledger).
The proof's key step: the learned density q_T = q0 exp(g_T) / Z_T keeps |g_T| <= eps/4 everywhere (a
data-independent q0, classifiers squashed to C* tanh(f/2), data-independent step sizes with C* sum(theta_t) <=
eps/4), so |log q_T / q0| <= eps/2 for every dataset, and q_T(x) / q'_T(x) <= e^eps between any two; each row
is an exact rejection draw from q_T at the per-sample eps = epsilon / samples, and the ``samples`` independent
draws are epsilon-IP together. The number of rows enters neither epsilon nor the proof, so it is not public:
nothing reports it, and no refusal depends on it.

Released: the rows only. The density, the classifiers, the fit's diagnostics and the number of rejected
proposals are never returned or saved. The schema must be a reviewed public one (a draft read off the data or
a privately discovered schema is refused before the data is read); rows are mapped by the fixed per-record
rule :data:`privsample.mbde.release.INPUT_RULE` (``Release.rule``). Release randomness comes from
``os.urandom``, or from seeded NumPy noise with a seed, which is NOT private.

Paper: Husain, Cranko and Nock (2018), *Integral Privacy for Density Estimation with Approximation
Guarantees* (arXiv 1806.04819).

The command line runs the same steps (:func:`mbde_request`, :func:`mbde_input`, :func:`mbde_release`; the schema
checked first with :func:`mbde_schema`, before a budget is charged) with its own checks of paths and messages in
between.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
class MBDERequest:
    """The checked options of an MBDE release (public values only) and the warning they call for, if any."""

    columns: tuple[str, ...]
    epsilon: float
    samples: int
    rounds: int
    c_star: float
    epochs: int
    hidden: tuple[int, ...]
    box_sd: float
    schedule: str
    seed: int | None
    warning: str | None

    @property
    def per_sample_epsilon(self) -> float:
        return self.epsilon / self.samples


def _hidden(hidden: str | Sequence[int], option: OptionName) -> tuple[int, ...]:
    if isinstance(hidden, str):
        try:
            sizes = tuple(int(s) for s in hidden.split(",") if s.strip())
        except ValueError:
            sizes = ()
        if not sizes or any(s < 1 for s in sizes):
            raise InputError(f"{option('hidden')} must be comma-separated positive layer sizes (got {hidden!r})")
        return sizes
    try:
        sizes = tuple(check_integer(s, option("hidden")) for s in hidden)
    except TypeError:
        sizes = ()
    if not sizes or any(s < 1 for s in sizes):
        raise InputError(f"{option('hidden')} must be positive layer sizes (got {hidden!r})")
    return sizes


def _columns(columns: str | Sequence[str], option: OptionName) -> tuple[str, ...]:
    if isinstance(columns, str):
        columns = columns.split(",")
    elif not all(isinstance(c, str) for c in columns):
        raise InputError(f"{option('columns')} must be column names (got {columns!r})")
    names = [c.strip() for c in columns]
    if not names or any(not c for c in names):
        raise InputError(f"{option('columns')} must name at least one column (comma separated)")
    if len(set(names)) != len(names):
        raise InputError(f"{option('columns')} lists a column twice: {','.join(names)}")
    return tuple(names)


def mbde_request(
    *,
    columns: str | Sequence[str],
    epsilon: float,
    samples: int,
    rounds: int = 3,
    c_star: float = 1.0,
    epochs: int = 600,
    hidden: str | Sequence[int] = "25,25,25",
    box_sd: float = 2.0,
    schedule: str = "paper",
    seed: int | None = None,
    option: OptionName = python_option,
) -> MBDERequest:
    """Check the options (public values, no data read); ``InputError`` names an option by ``option(name)``."""
    from privsample.mbde.density import step_sizes
    from privsample.mbde.release import indistinguishability_warning, per_sample_epsilon

    epsilon = check_number(epsilon, option("epsilon"))
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"{option('epsilon')} must be > 0 and finite (got {epsilon})")
    samples = check_integer(samples, option("samples"))
    if samples < 1:
        raise InputError(f"{option('samples')} must be >= 1 (got {samples})")
    rounds, epochs = check_integer(rounds, option("rounds")), check_integer(epochs, option("epochs"))
    if epochs < 1 or rounds < 1:
        raise InputError(f"{option('epochs')} and {option('rounds')} must be >= 1")
    c_star = check_number(c_star, option("c_star"))
    eps_s = per_sample_epsilon(epsilon, samples)
    step_sizes(eps_s, c_star, rounds, schedule)  # checks C* and the schedule
    sizes = _hidden(hidden, option)
    names = _columns(columns, option)
    box_sd = check_number(box_sd, option("box_sd"))
    if not (math.isfinite(box_sd) and box_sd > 0):  # the message of PublicStandardisation, before any work
        raise InputError(f"the box must map to a positive number of standard deviations (got {box_sd})")
    return MBDERequest(
        columns=names,
        epsilon=epsilon,
        samples=samples,
        rounds=rounds,
        c_star=c_star,
        epochs=epochs,
        hidden=sizes,
        box_sd=box_sd,
        schedule=schedule,
        seed=check_seed(seed),
        warning=indistinguishability_warning(epsilon, samples),
    )


def mbde_schema(schema: Any):
    """The public schema (a ``Schema`` or its file), refused if it is a draft or was discovered privately
    (:func:`privsample.mbde.release.check_public_schema`). No data is read."""
    from privsample.data.schema import Schema
    from privsample.mbde.release import check_public_schema

    check_schema_argument(schema, required=True)
    sch = schema if isinstance(schema, Schema) else Schema.load(as_path(schema))
    check_public_schema(sch)
    return sch


@dataclass(frozen=True)
class MBDEInput:
    """The table as MBDE reads it (all text, as ``read_table`` reads a file) and the public schema it is read
    by."""

    schema: Any
    table: Any


def mbde_input(data: Any, schema: Any, *, delimiter: str | None = None, encoding: str | None = None) -> MBDEInput:
    """Read ``data`` (an in-memory table, or a CSV/Parquet path) for MBDE: the schema (a ``Schema`` or its file)
    is checked by :func:`mbde_schema` before the data is read; an in-memory table is read through
    :func:`privsample.data.frames.frame_table`, a path with no refusal for zero rows (n is not public)."""
    from privsample.data.frames import frame_table
    from privsample.data.table import read_table

    kind = check_data(data)
    check_csv_options(kind, delimiter, encoding)
    sch = mbde_schema(schema)
    if kind is not None:
        return MBDEInput(sch, frame_table(data, label=INPUT_LABEL))
    return MBDEInput(sch, read_table(as_path(data), allow_empty=True, delimiter=delimiter, encoding=encoding))


def mbde_release(request: MBDERequest, table: MBDEInput) -> Release:
    """Train MBDE on ``table`` at the per-sample epsilon and release ``request.samples`` rows: the rows and public
    texts only (never the density or the classifiers)."""
    from privsample.mbde.density import IP_NEIGHBOURING
    from privsample.mbde.release import INPUT_RULE, release_table
    from privsample.privacy import Accountant
    from privsample.privacy.ledger import Ledger
    from privsample.privacy.noise import make_noise

    r = request
    acc = Accountant(r.epsilon**2 / 2, target=(r.epsilon, 0.0), neighbouring=IP_NEIGHBOURING)
    rows, rel = release_table(
        table.table,
        table.schema,
        list(r.columns),
        r.epsilon,
        r.samples,
        acc,
        seed=r.seed,
        noise=make_noise(r.seed, quiet=True),
        sd=r.box_sd,
        warn=False,
        T=r.rounds,
        c_star=r.c_star,
        epochs=r.epochs,
        hidden=r.hidden,
        schedule=r.schedule,
    )
    # every number here is a public parameter: the budget, m, T, C* and the data-independent step sizes
    guarantee = (
        f"ε = {r.epsilon:g} in total = {r.samples} samples × per-sample ε {r.per_sample_epsilon:.4g}, integral "
        f"privacy (any two datasets, Husain et al.); T={r.rounds}, C*={r.c_star:g}, "
        f"C*·Σθ = {rel.info['c_star'] * sum(rel.info['thetas']):.4g} ≤ ε/4 per sample"
    )
    notes = [r.warning] if r.warning else []
    return Release(rows, Ledger(acc.to_dict()), guarantee, rule=INPUT_RULE, notes=notes)


def mbde_sample(
    data: Any,
    *,
    schema: Any,
    columns: str | Sequence[str],
    epsilon: float,
    samples: int,
    rounds: int = 3,
    c_star: float = 1.0,
    epochs: int = 600,
    hidden: str | Sequence[int] = "25,25,25",
    box_sd: float = 2.0,
    schedule: str = "paper",
    seed: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    budget: Any = None,
) -> Release:
    """Release ``samples`` rows of the numeric ``columns`` drawn with MBDE (``privsample mbde``).

    Guarantee: ``epsilon``-integral privacy for all the rows together (any two datasets, of any sizes), so
    ``epsilon``-DP for every neighbouring relation; each row gets the per-sample ε = epsilon / samples, and the
    learned density stays within a factor e^(ε/2) of the data-independent q0 everywhere (the module docstring
    gives the proof's key step). The density and the classifiers are never returned.

    ``data``: a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path. ``schema``: a
    reviewed public ``Schema`` or its YAML/JSON file, with public ``lower`` and ``upper`` bounds for every
    chosen column (a draft or a privately discovered schema is refused before the data is read).
    ``columns``: names, as a list or ``"a,b"``. ``rounds``: boosting rounds T; ``c_star``: the classifier bound
    C*; ``epochs``: training epochs per round; ``hidden``: hidden layer sizes (``"25,25,25"`` or a list);
    ``box_sd``: the public bounds map to ±this many standard deviations of q0; ``schedule``: ``"paper"``
    (θ_t = r^t) or ``"finite"``; ``delimiter`` / ``encoding``: a CSV file's. ``budget``: a ``Budget`` (or its
    file) charged ε²/2 first. ``seed``: seeded NumPy noise, NOT
    private (a warning; ``release.private`` is False). When the per-sample ε is so small that the rows are
    practically draws from q0, a warning says so (also in ``release.notes``).

    Raises ``InputError`` for bad options and for a schema that is not public before the data is read; for
    columns missing from the table or the schema, or without public bounds, before anything is trained.

    Returns a ``Release``: ``table`` (the rows, in the columns' units, as the command writes them), ``ledger``,
    ``guarantee``, ``rule`` (how each row was read) and ``notes``.

    Example (seeded: NOT PRIVATE; a tiny network and few epochs, for speed)::

        >>> import warnings
        >>> import numpy as np, pandas as pd
        >>> from privsample import Schema, mbde_sample
        >>> from privsample.data.schema import Numeric
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"income": rng.normal(40, 10, 200).clip(0, 100)})
        >>> schema = Schema([Numeric("income", 0.0, 100.0)], provenance="user")
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # seed=0: NOT private
        ...     release = mbde_sample(
        ...         df, schema=schema, columns="income", epsilon=2, samples=10, rounds=2, epochs=5, hidden="8", seed=0
        ...     )
        >>> release.table.shape, bool(release.table["income"].between(0, 100).all()), release.private
        ((10, 1), True, False)
        >>> release.guarantee
        'ε = 2 in total = 10 samples × per-sample ε 0.2, integral privacy (any two datasets, Husain et al.); ...'
    """
    check_csv_options(check_data(data), delimiter, encoding)
    check_schema_argument(schema, required=True)
    request = mbde_request(
        columns=columns,
        epsilon=epsilon,
        samples=samples,
        rounds=rounds,
        c_star=c_star,
        epochs=epochs,
        hidden=hidden,
        box_sd=box_sd,
        schedule=schedule,
        seed=seed,
    )
    if request.seed is not None:
        warnings.warn(seeded_warning(request.seed), UserWarning, stacklevel=2)
    if request.warning:
        warnings.warn(request.warning, UserWarning, stacklevel=2)
    sch = mbde_schema(schema)
    if budget is not None:  # epsilon-DP for any relation: charged epsilon²/2 before the data are read, or refused
        from privsample.api.accounting import charged

        return charged(
            budget,
            request.seed,
            mbde_charge(request),
            data,
            lambda: mbde_release(request, mbde_input(data, sch, delimiter=delimiter, encoding=encoding)),
        )
    return mbde_release(request, mbde_input(data, sch, delimiter=delimiter, encoding=encoding))


def mbde_charge(request: MBDERequest) -> dict:
    """What ``mbde`` is charged in a budget file: epsilon-integral privacy, so epsilon-DP for every neighbouring
    relation (rho = epsilon²/2 fits any file)."""
    from privsample.mbde.density import IP_NEIGHBOURING
    from privsample.privacy.budget import pure_charge

    return pure_charge("mbde", "MBDE (integral privacy)", request.epsilon, IP_NEIGHBOURING)


__all__ = [
    "mbde_sample",
    "mbde_charge",
    "mbde_request",
    "mbde_schema",
    "mbde_input",
    "mbde_release",
    "MBDERequest",
    "MBDEInput",
]
