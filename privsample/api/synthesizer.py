"""The Python API: fit a DP synthesizer on a DataFrame, sample synthetic DataFrames, save and load models.

``Synthesizer`` wraps :func:`privsample.pipeline.synthesize` (the run of ``privsample synth``) in the
scikit-learn style: ``Synthesizer("mst", epsilon=1).fit(df).sample(100)``. The guarantee is that of the
pipeline: the fitted model (and every table sampled from it, post-processing) is (epsilon, delta)-DP for
add/remove-one neighbouring tables, with every step's cost in one accountant (``.ledger``). Without a schema
the domain is discovered privately with a share of the same budget. A seeded fit uses seeded noise and is
NOT private (reproducible experiments only).

Fitting spends the budget, so an object is fitted at most once: a second ``fit`` is refused. Bad input (a
wrong type, empty or duplicate column names, a bad option or budget) raises ``InputError`` before any budget
is spent. Models are saved and loaded in the format of ``privsample synth --save-model`` (a folder or a
``.zip`` of ``model.json`` and ``arrays.npz``).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import numpy as np

from privsample.api.schema import Schema as PublicSchema
from privsample.data.schema import Schema, check_schema_usable
from privsample.data.table import table_format
from privsample.errors import InputError
from privsample.pipeline import (
    DEFAULT_DELTA,
    check_budget,
    check_public,
    in_memory_table,
    method_options,
    synthesize,
)
from privsample.privacy.ledger import Ledger
from privsample.synth import METHODS
from privsample.synth.model import SynthModel

OPTIONS = (
    "iters",
    "workload",
    "max_model_size",
    "eta",
    "schedule",
    "max_candidates",
    "max_memory_mb",
    "unsafe_as_published",
)


class Synthesizer:
    """A differentially private synthesizer: ``fit`` once on a sensitive table, then ``sample`` at will.

    ``method``: ``"ppsyn"`` (PPSyn-DP, the default), ``"aim"`` or ``"mst"``. ``epsilon`` > 0 and ``delta`` in
    (0, 1): the whole budget of the fit, schema discovery included. ``options``: the method's options, as
    the command line's flags (``iters``, ``workload`` as ``"a,b;c,d"`` or a list of column tuples,
    ``max_model_size`` in MB, ``schedule``, ``eta``, ``max_candidates``, ``max_memory_mb``).

    Guarantee: the fitted model is (epsilon, delta)-DP under add/remove-one neighbours (zCDP accounting,
    ``.ledger``); sampling is post-processing and costs nothing. With a ``seed`` the noise is seeded and
    the model is NOT private. ``budget``: a ``Budget`` (or its file) that ``fit`` charges the whole
    (epsilon, delta) to before reading the data, or is refused by (``BudgetExceeded``).

    Example::

        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(17, 91, 2000)})
        >>> synthetic = Synthesizer("mst", epsilon=1).fit(df).sample(100)
        >>> synthetic.shape
        (100, 2)
    """

    def __init__(
        self, method: str = "ppsyn", epsilon: float = 1.0, delta: float = DEFAULT_DELTA, *, budget=None, **options: Any
    ):
        from privsample.privacy.budget import as_budget

        if method not in METHODS:
            raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")
        check_budget(epsilon, delta)
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise InputError(f"unknown option(s) {', '.join(unknown)} (choose from: {', '.join(OPTIONS)})")
        self.method = method
        self.epsilon = epsilon
        self.delta = delta
        self.budget = as_budget(budget)
        self.options = dict(options)
        self._method_options = method_options(method, **options)
        self._model: SynthModel | None = None
        self._spent = False

    # -- fitting (spends the budget) -------------------------------------------------------------
    def fit(
        self, data: Any, schema: Schema | str | Path | None = None, seed: int | None = None, public: Any = None
    ) -> Synthesizer:
        """Fit on ``data`` under (epsilon, delta)-DP; returns ``self``.

        ``data``: a pandas DataFrame, a pyarrow Table, a polars DataFrame, a CSV/Parquet path or a Spark
        DataFrame. A DataFrame is read as the same data written to CSV would be (every value as text), so
        both give the same model for the same ``seed``. ``schema``: a reviewed public schema (a ``Schema``
        or its YAML/JSON file; an unreviewed ``Schema.draft`` is refused); without it the domain is discovered
        privately with a share of the budget.
        ``seed``: seeded noise, NOT private (experiments only).
        ``public``: a public table (a DataFrame or a CSV/Parquet path) with the schema's columns, for ``"aim"``
        ``"mst"`` or ``"ppsyn"`` (annealed schedule) with a ``schema``: the method may take its marginals instead
        of measuring the private ones, at no privacy cost (the ledger lists it as a public input); see the guide's
        "Public data" page. It must not overlap ``data``: a public table overlapping the private one voids the
        guarantee for the shared records (the private table itself, or an identical copy, is an ``InputError``).

        Without ``schema``, each loss of private discovery (a column kept with at most one value, a numeric
        column whose bounds clip more than 5% of its values) is emitted as a ``DiscoveryLossWarning``; the list
        is ``losses``.

        Raises ``InputError`` for bad input before any budget is spent, and on a second call: the
        budget of a fitted (or attempted) fit is spent."""
        if self._spent:
            raise InputError(
                "this Synthesizer has already been fitted (its privacy budget is spent): create a new one to fit again"
            )
        if isinstance(schema, (str, Path)):
            schema = Schema.load(schema)
        elif schema is not None and not isinstance(schema, Schema):
            raise InputError(f"schema must be a Schema or a schema file, not {type(schema).__name__}")
        if schema is not None:
            check_schema_usable(schema)  # an unreviewed draft is refused before the budget is marked spent
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise InputError(f"seed must be an integer or None (got {seed!r})")
        check_public(public, self.method, schema, data)  # not the private table itself: before any budget is spent
        if isinstance(public, (str, os.PathLike)):
            from privsample.synth.public import check_public_file

            check_public_file(public)
        if in_memory_table(data, "auto", schema) is None and isinstance(data, (str, os.PathLike)):
            table_format(data)  # a file that exists, CSV or Parquet (an in-memory table's names are checked above)
        if self.budget is not None:
            from privsample.privacy.budget import refuse_seeded

            refuse_seeded(self.budget, seed)
        self._spent = True  # from here on the budget may be spent, even if the fit fails part-way
        res = synthesize(
            data,
            epsilon=self.epsilon,
            delta=self.delta,
            method=self.method,
            schema=schema,
            seed=seed,
            method_options=self._method_options,
            sample=False,
            public=public,
            budget=self.budget,
        )
        self._model = res.model
        return self

    # -- sampling (post-processing, no privacy cost) ------------------------------------------------
    def sample(self, rows: int | None = None, seed: int | None = None, where: Any = None):
        """A synthetic table (pandas DataFrame) of ``rows`` rows (default: the model's noisy row count).

        Post-processing of the model: no privacy cost. ``seed`` makes the draw reproducible; the same seed
        gives the rows ``privsample sample --seed`` writes (with the same ``where``).

        ``where``: conditional generation. A mapping column -> a value, a list of values (any of), or for a
        numeric column a ``(lo, hi)`` range (closed; ``None`` for an open end), e.g. ``{"sex": "Female",
        "age": (30, 40)}``; or the text form ``"sex=Female; age=30..40"``. The records are drawn exactly
        from the model's distribution given the condition, so every record satisfies it; the default
        ``rows`` is the noisy row count times the condition's probability under the model (at least 1).
        ``InputError`` for an unknown column or value, an empty range, or a condition the model gives
        probability zero.

        Example::

            >>> s = privsample.load("model.zip")  # doctest: +SKIP
            >>> s.sample(1000, seed=0, where={"sex": "Female", "age": (30, 40)})  # doctest: +SKIP
        """
        model = self._fitted()
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise InputError(f"seed must be a whole number >= 0 or None (got {seed!r})")
        if where is None:
            return model.sample_table(model.resolve_rows(rows), np.random.default_rng(seed))
        return model.sample_table(model.resolve_rows(rows, where), np.random.default_rng(seed), where=where)

    def condition_probability(self, where: Any) -> float:
        """The probability, under the fitted model, that a record satisfies ``where`` (as in ``sample``):
        post-processing of the model, no privacy cost."""
        return self._fitted().condition_probability(where)

    # -- the fitted model ------------------------------------------------------------------------
    def _fitted(self) -> SynthModel:
        if self._model is None:
            raise InputError("this Synthesizer is not fitted: call fit(data) first")
        return self._model

    @property
    def fitted(self) -> bool:
        return self._model is not None

    @property
    def model(self) -> SynthModel:
        """The fitted ``SynthModel`` (what ``save`` writes)."""
        return self._fitted()

    @property
    def schema(self) -> PublicSchema | None:
        """The schema of the fitted model (the reviewed one, or the privately discovered one), a copy as a
        ``privsample.Schema``."""
        schema = self._fitted().schema
        return None if schema is None else PublicSchema._of(schema)

    @property
    def losses(self) -> list:
        """What private discovery lost, per column (``privsample.data.discovery_report.Loss``: ``column``,
        ``what``, ``advice``): a column kept with at most one value, a numeric column whose bounds clip more than
        5% of its values (a noisy estimate). ``fit`` warns with one ``DiscoveryLossWarning`` per loss. Empty for
        a reviewed schema. Post-processing of the discovered schema: no privacy cost."""
        from privsample.data.discovery_report import discovery_losses

        schema = self._fitted().schema
        return [] if schema is None else discovery_losses(schema)

    @property
    def ledger(self) -> Ledger:
        """The privacy ledger of the fit (a copy): ``summary`` (target, spent, private) and one entry per
        measurement; it renders as a table per phase in a notebook (``Ledger``)."""
        return Ledger(copy.deepcopy(self._fitted().ledger))

    @property
    def private(self) -> bool:
        """False when the fit used seeded or unsafe settings (then the model carries no guarantee)."""
        return self._fitted().private

    def save(self, path: str | Path) -> Path:
        """Write the fitted model to ``path`` (a folder, or a ``.zip`` file), as ``synth --save-model`` does."""
        return self._fitted().save(path)

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self.options.items())
        state = "fitted" if self.fitted else "not fitted"
        return f"Synthesizer({self.method!r}, epsilon={self.epsilon!r}, delta={self.delta!r}{opts}) [{state}]"


def load(path: str | Path) -> Synthesizer:
    """The fitted ``Synthesizer`` saved at ``path`` (by ``Synthesizer.save`` or ``privsample synth
    --save-model``); it samples but cannot be fitted again.

    Example::

        >>> import privsample
        >>> s = privsample.load("model.zip")  # doctest: +SKIP
        >>> s.sample(10, seed=0)  # doctest: +SKIP
    """
    model = SynthModel.load(path)
    params = model.params or {}
    s = Synthesizer.__new__(Synthesizer)
    s.method = model.mechanism
    s.epsilon = params.get("epsilon")
    s.delta = params.get("delta")
    s.options = {}
    s._method_options = {}
    s._model = model
    s._spent = True
    return s


__all__ = ["Synthesizer", "load", "OPTIONS"]
