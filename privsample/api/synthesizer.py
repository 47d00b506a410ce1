"""The Python API: fit a DP synthesizer on a DataFrame, sample synthetic DataFrames, save and load models.

``Synthesizer`` runs the release of ``privsample synth`` (``privsample.api.run``: one validation, then the fit)
in the scikit-learn style: ``Synthesizer("mst", epsilon=1).fit(df).sample(100)``; ``synthesize`` fits and
samples in one call. The guarantee is that of the run: the fitted model (and every table sampled from it,
post-processing) is (epsilon, delta)-DP for add/remove-one neighbouring tables, with every step's cost in one
accountant (``.ledger``). Without a schema the domain is discovered privately with a share of the same budget.
A seeded fit uses seeded noise and is NOT private (reproducible experiments only).

Fitting spends the budget, so an object is fitted at most once: a second ``fit`` is refused. Bad input (a
wrong type, empty or duplicate column names, a bad option or budget) raises ``InputError`` before any budget
is spent. Models are saved and loaded in the format of ``privsample synth --save-model`` (a folder or a
``.zip`` of ``model.json`` and ``arrays.npz``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from privsample.api.accounting import DEFAULT_DELTA, DEFAULT_SCHEMA_SHARE
from privsample.data.dtypes import restore_dtypes
from privsample.api.run import Settings, check_draw, check_input, check_request, check_settings, rows_to_draw, run
from privsample.api.schema import Schema as PublicSchema
from privsample.data.schema import Schema
from privsample.errors import InputError
from privsample.privacy.ledger import Ledger
from privsample.progress import no_progress
from privsample.synth.model import SynthModel
from privsample.synth.registry import OPTIONS


class Synthesizer:
    """A differentially private synthesizer: ``fit`` once on a sensitive table, then ``sample`` at will.

    ``method``: ``"ppsyn"`` (PPSyn-DP, the default), ``"aim"`` or ``"mst"``. ``epsilon`` > 0 and ``delta`` in
    (0, 1): the whole budget of the fit, schema discovery included. ``options``: the method's options, as
    the command line's flags (``iters``, ``workload`` as ``"a,b;c,d"`` or a list of column tuples,
    ``max_model_size`` in MB, ``schedule``, ``eta``, ``max_candidates``, ``max_memory_mb``).

    Guarantee: the fitted model is (epsilon, delta)-DP under add/remove-one neighbours (zCDP accounting,
    ``.ledger``); sampling is post-processing and costs nothing. With a ``seed`` the noise is seeded and
    the model is NOT private. ``budget``: a ``Budget`` (or its file) that ``fit`` charges the whole
    (epsilon, delta) to before reading the data, or is refused by (``BudgetExceeded``). ``require``: order
    constraints such as ``["discharged >= admitted", "copay >= 0"]``, added to the schema of the fit (given or
    discovered): public, so every synthetic record satisfies them at no privacy cost (``synthesize``).

    Example::

        >>> import numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(17, 91, 2000)})
        >>> synthetic = Synthesizer("mst", epsilon=1).fit(df).sample(100)
        >>> synthetic.shape
        (100, 2)
    """

    def __init__(
        self,
        method: str = "ppsyn",
        epsilon: float = 1.0,
        delta: float = DEFAULT_DELTA,
        *,
        budget=None,
        require: Any = None,
        **options: Any,
    ):
        from privsample.checks import check_require
        from privsample.privacy.budget import as_budget

        self._settings: Settings | None = check_settings(method, epsilon, delta, options)
        self.require = check_require(require)
        self.method = method
        self.epsilon = epsilon
        self.delta = delta
        self.budget = as_budget(budget)
        self.options = dict(options)
        self._model: SynthModel | None = None
        self._spent = False

    # -- fitting (spends the budget) -------------------------------------------------------------
    def fit(
        self,
        data: Any,
        schema: Schema | str | Path | None = None,
        seed: int | None = None,
        public: Any = None,
        index_col: str | int | None = None,
        privacy_unit: str | None = None,
        max_rows_per_unit: int | None = None,
        unit_ids: str = "none",
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
        ``index_col``: an index column of ``data`` (as ``df.to_csv()`` writes a pandas index, with an empty
        header cell), never read, synthesized or returned: its name, or its 1-based position (an int; the way to
        name a column with no name). Decided from the column names alone.
        ``privacy_unit``: a column naming a person (a patient, a customer) whose rows are protected together:
        person-level neighbours, at most ``max_rows_per_unit`` rows of each person kept (None: chosen privately
        from a noisy count of rows per person); the column is never released (see the guide's "Privacy unit"
        page). A ``ContributionBoundWarning`` states k and the noisy share of rows bounding removes.
        ``unit_ids``: ``"fresh"`` gives the synthetic tables a column of that name of fresh person ids, grouping
        rows as the released rows per person (``privsample.data.unit_ids``); ``"none"`` (default): no such column.

        Without ``schema``, each loss of private discovery (a column kept with at most one value, a numeric
        column whose bounds clip more than 5% of its values) is emitted as a ``DiscoveryLossWarning``; the list
        is ``losses``.

        Raises ``InputError`` for bad input before any budget is spent, and on a second call: the
        budget of a fitted (or attempted) fit is spent."""
        if self._spent:
            raise InputError(
                "this Synthesizer has already been fitted (its privacy budget is spent): create a new one to fit again"
            )
        request = check_request(
            self._settings,
            schema=schema,
            seed=seed,
            public=public,
            budget=self.budget,
            require=self.require,
            index_col=index_col,
            privacy_unit=privacy_unit,
            max_rows_per_unit=max_rows_per_unit,
            unit_ids=unit_ids,
        )
        table = check_input(request, data)
        self._spent = True  # from here on the budget may be spent, even if the fit fails part-way
        res = run(request, table, sample=False)
        self._model = res.model
        return self

    # -- sampling (post-processing, no privacy cost) ------------------------------------------------
    def sample(self, rows: int | None = None, seed: int | None = None, where: Any = None):
        """A synthetic table (pandas DataFrame) of ``rows`` rows (default: the model's noisy row count).

        Post-processing of the model: no privacy cost. ``seed`` makes the draw reproducible; the same seed
        gives the rows ``privsample sample --seed`` writes (with the same ``where``). A model fitted on a pandas
        DataFrame gives its columns the DataFrame's dtypes back (``privsample.data.dtypes``: a category column
        with the categories its schema released).

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
        rows, seed = check_draw(rows, seed)
        rng = np.random.default_rng(seed)
        n = rows_to_draw(model, rows, where)
        table = model.sample_table(n, rng) if where is None else model.sample_table(n, rng, where=where)
        return restore_dtypes(table, model.params.get("dtypes"), model.schema)  # a DataFrame's dtypes, if any

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
        opts += f", require={self.require!r}" if self.require else ""
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
    s.budget = None  # a loaded model spends nothing
    s.options = {}
    s.require = list(model.schema.require) if model.schema is not None else []
    s._settings = None  # it cannot be fitted again
    s._model = model
    s._spent = True
    return s


@dataclass
class Synthesis:
    """What ``synthesize`` returns: the fitted ``model``, the synthetic ``table`` (a pandas DataFrame, None with
    ``sample=False``), the privacy ``ledger`` of the fit and the ``schema`` it coded with (a ``privsample.Schema``:
    the reviewed one, or the privately discovered one)."""

    model: SynthModel
    table: Any
    ledger: Ledger
    schema: PublicSchema

    @property
    def private(self) -> bool:
        """False when the fit used seeded or unsafe settings (then the model carries no guarantee)."""
        return self.model.private


def synthesize(
    source,
    *,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    method: str = "ppsyn",
    schema: Schema | str | Path | None = None,
    rows: int | None = None,
    seed: int | None = None,
    other: bool = False,
    engine: str = "auto",
    spark_master: str = "local[2]",
    engine_options: dict | None = None,
    schema_share: float | None = DEFAULT_SCHEMA_SHARE,
    method_options: dict | None = None,
    noise=None,
    progress=no_progress,
    discovery_options: dict | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    index_col: str | int | None = None,
    sample: bool = True,
    public=None,
    budget=None,
    require: list[str] | None = None,
    privacy_unit: str | None = None,
    max_rows_per_unit: int | None = None,
    unit_ids: str = "none",
) -> Synthesis:
    """Fit ``method`` on the table at ``source`` under (epsilon, delta)-DP and sample a synthetic table: the run of
    ``privsample synth`` (``privsample.api.run``), in one call.

    ``source``: a CSV/Parquet path (for ``engine="spark"`` also a URI or a Spark DataFrame), or an in-memory
    table (a pandas DataFrame, a pyarrow Table, a polars DataFrame), read as ``read_table`` reads the same data
    written to CSV (``privsample.data.frames``) on the numpy engine. Bad input raises ``InputError`` before
    any budget is spent.
    ``method_options``: the method's options, as ``Synthesizer``'s keywords (``OPTIONS``), checked; for
    experiments, other keywords of the method's constructor (e.g. ``rounds``) are passed on unchecked.
    ``engine``: numpy | duckdb | spark | auto (``check_source``); without ``schema``, duckdb and spark discover
    it privately from their own per-column value counts, as numpy does in memory.
    ``engine_options``: keyword options of the DuckDB/Spark engine (e.g. ``memory_limit``, ``threads``).
    Values outside the schema never stop the run: ``RELEASE_RULE`` (``encode(..., release=True)``) handles
    them record by record on every engine.
    ``schema_share``: None (default) plans the discovery share from a noisy row count; a number fixes it.
    ``discovery_options``: keyword options of ``plan_discovery`` (``target_fraction``, ``min_share``,
    ``max_share``, ``pass_probability``) for planned discovery.
    ``delimiter`` / ``encoding``: a CSV file's (``read_table``; default: detected from the header line and
    a byte-order mark, else UTF-8).
    ``index_col``: an index column of ``source`` (as ``df.to_csv()`` writes a pandas index), dropped before any
    record is read, on every engine: its name, or its 1-based position (an int; for a column with no name).
    A pandas DataFrame's synthetic table has its dtypes (``privsample.data.dtypes``).
    ``sample``: False leaves ``table`` None, for callers that stream the rows (``SynthModel.sample_chunks``
    with ``np.random.default_rng(seed)`` gives the same rows).
    ``public``: a public table (path or in-memory table) with the schema's columns, for ``method`` "aim", "mst" or
    "ppsyn" with a ``schema``: coded by the same rule, measured at no privacy cost. Read with the same
    ``delimiter``/``encoding``; a missing column or no rows is an ``InputError`` before any spend.
    ``budget``: a ``Budget`` (or its file): the run's whole budget is charged to it before the data are read,
    or the run is refused (``BudgetExceeded``) (``privsample.privacy.budget``).
    ``require``: order constraints between numeric columns, or a numeric column and a constant (``["discharged >=
    admitted", "copay >= 0"]``), added to the schema (given or discovered): public, so every synthetic record
    satisfies them at no privacy cost (``privsample.data.require``). Without a schema, a comparison naming a column
    that discovery makes categorical is refused after discovery has spent its share (``check_request``).
    Without a schema, every loss of private discovery is emitted as a ``DiscoveryLossWarning``, before the run may
    stop because more than half of the columns kept one value.
    ``privacy_unit`` / ``max_rows_per_unit`` / ``unit_ids``: person-level privacy, as ``Synthesizer.fit``'s.
    """
    request = check_request(
        check_settings(method, epsilon, delta, method_options, research=True),
        schema=schema,
        rows=rows,
        seed=seed,
        public=public,
        engine=engine,
        delimiter=delimiter,
        encoding=encoding,
        index_col=index_col,
        budget=budget,
        other=other,
        spark_master=spark_master,
        engine_options=engine_options,
        schema_share=schema_share,
        discovery_options=discovery_options,
        require=require,
        privacy_unit=privacy_unit,
        max_rows_per_unit=max_rows_per_unit,
        unit_ids=unit_ids,
    )
    table = check_input(request, source)
    res = run(request, table, progress=progress, noise=noise, sample=sample)
    ledger = Ledger(res.accountant.to_dict())
    return Synthesis(model=res.model, table=res.table, ledger=ledger, schema=PublicSchema._of(res.schema))


__all__ = ["Synthesizer", "Synthesis", "synthesize", "load", "OPTIONS"]
