"""The main job, once for every front end: validate once, discover the schema if needed, open the engine, fit, sample.

``privsample synth``, ``Synthesizer.fit`` and ``privsample.synthesize`` all go through ``prepare`` (or, for a
``Synthesizer``, ``check_settings`` at construction and ``check_request`` at ``fit``): every check that can refuse
from public information (the budget, the method and its options, the rows, the seed, the schema, the public
table, the table's kind, the engine, a budget file's seed rule) runs there, once, before anything is charged or
spent, with one wording whose option names follow the caller (``privsample.checks``). ``spending`` starts the run:
it charges a budget file, then reads the table's header (the first read of the data) and refuses a schema column it
lacks; the columns a schema leaves out are a ``ColumnsLeftOutWarning``. ``fit`` then runs the release: no check of
its own. ``release`` is the command line's whole run after ``prepare``: ``fit`` inside ``spending``, then the model
saved and the synthetic table written in chunks, each output's size checked from public quantities first. The
budget plan is ``privsample.api.accounting``'s.

Records reach the mechanisms only through the marginal engine, which encodes every record by the fixed rule of
``encode(..., release=True)`` on every engine (clip, catch-all, null code; a record the schema cannot hold is left
out: ``RELEASE_RULE``). The rule is per record, so it is 1-stable under add/remove-one neighbours and the guarantee
holds for the raw table; no message, exit code or decision depends on how many records it touched. An empty table
is released from like any other (n = 0 and n = 1 are neighbours).

A public table (``public``, AIM, MST and PPSyn-DP, with a reviewed schema) is read and coded by the same rule into
a marginal engine of its own, before any spend; it is the user's declared public input, charged nothing and listed
in the ledger as such (``privsample.synth.public``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privsample.api.accounting import (
    DEFAULT_DELTA,
    DEFAULT_SCHEMA_SHARE,
    DISCOVERY_BINS,
    DISCOVERY_MAX_CATEGORIES,
    charging,
    make_accountant,
    synth_charge,
    worst_case_domain,
)
from privsample.data.dtypes import dtype_specs, frame_dtypes, restore_dtypes
from privsample.api.person import check_schema_unit, unit_engine
from privsample.data.unit_names import check_unit_column, hint_unit
from privsample.checks import (
    OptionName,
    check_budget,
    check_columns,
    check_require,
    check_index_col,
    check_rows,
    check_rows_written,
    check_seed,
    check_unit,
    check_width,
    left_out_note,
    python_option,
)
from privsample.data.discovery_report import warn_dropped
from privsample.data.table import check_not_private
from privsample.data.require_entries import add_require, check_require_names
from privsample.data.schema import Schema, check_schema_usable
from privsample.errors import ColumnsLeftOutWarning, InputError
from privsample.io import check_output_size, check_paths, output_label
from privsample.marginals.open import ENGINES, check_source, open_engine
from privsample.privacy.accountant import Accountant
from privsample.privacy.noise import NoiseSource, make_noise
from privsample.privacy.unit import ROW, PrivacyUnit
from privsample.progress import no_progress, progress_phase
from privsample.synth.registry import AUTO, PUBLIC_ONLY, STAND_IN, check_method, make_synthesizer, method_options


@dataclass(frozen=True)
class Settings:
    """A checked method and budget: ``options`` are ``make_synthesizer``'s keywords (``method_options``)."""

    method: str
    epsilon: float
    delta: float
    options: dict


@dataclass
class Request:
    """A checked run: everything ``fit`` needs, read from public arguments only. ``frame``: an in-memory table
    converted (once) as ``read_table`` reads the same data from CSV; ``schema`` loaded (once) and checked; ``synth``
    the synthesizer, built and checked, to fit once; ``output`` / ``save_model``: where ``release`` writes the
    synthetic table and the model (paths, checked by ``prepare``)."""

    settings: Settings
    schema: Schema | None
    rows: int | None
    seed: int | None
    synth: Any
    public: Any = None
    other: bool = False
    engine: str = "auto"  # the engine asked ("auto", or the one a person-level run needs); ``check_input`` chooses
    spark_master: str = "local[2]"
    engine_options: dict | None = None
    schema_share: float | None = DEFAULT_SCHEMA_SHARE
    discovery_options: dict | None = None
    delimiter: str | None = None
    encoding: str | None = None
    index_col: str | int | None = None  # an index column, dropped by its name or position (public) on every engine
    budget: Any = None
    schema_name: str = "the schema"  # as messages name it: the schema file's name
    option_name: OptionName = python_option  # how the caller names options (``privsample.checks``)
    require: list[str] = field(default_factory=list)  # order constraints added to the schema (public)
    output: Path | None = None
    save_model: Path | None = None
    unit: str | None = None  # the privacy unit's column: person-level neighbours (``privsample.privacy.unit``)
    max_rows: int | None = None  # k of contribution bounding; None: chosen from the noisy unit profile
    unit_ids: str = "none"  # "fresh": the output's unit column of fresh ids (``privsample.data.unit_ids``)


@dataclass
class SynthInput:
    """The private table of a run, apart from the public ``Request``: ``source`` as given (a path, an in-memory
    or a Spark table), ``frame`` the in-memory table converted once (as ``read_table`` reads the same data from CSV;
    None for a path or a Spark table), ``engine`` the engine that reads it (``check_source``), ``dtypes`` a pandas
    DataFrame's column types (``privsample.data.dtypes``: public, the types the caller chose, not values; a category
    dtype's categories are used only where the release has them), ``header`` a local file's column names (public),
    read as the run starts (``spending``). Only the marginal engine reads its records."""

    source: Any
    frame: Any = None
    engine: str = "auto"
    dtypes: dict | None = None
    header: list | None = None


@dataclass
class Fitted:
    """What ``fit`` returns: the model, the run's accountant, the schema it coded with, the table if sampled."""

    model: Any
    accountant: Accountant
    schema: Schema
    table: Any = None


def check_settings(
    method: Any,
    epsilon: Any,
    delta: Any,
    options: dict | None = None,
    name: OptionName = python_option,
    research: bool = False,
) -> Settings:
    """The method, the budget and the method's options, checked (``InputError``); ``research``: also other
    keywords of the method's constructor, unchecked (``method_options``)."""
    check_budget(epsilon, delta, name)
    method = check_method(method, name)
    return Settings(method, epsilon, delta, method_options(method, name, research, **(options or {})))


def check_request(
    settings: Settings,
    *,
    schema: Any = None,
    rows: Any = None,
    seed: Any = None,
    public: Any = None,
    engine: str = "auto",
    delimiter: str | None = None,
    encoding: str | None = None,
    index_col: Any = None,
    budget: Any = None,
    require: Any = None,
    output: Any = None,
    save_model: Any = None,
    privacy_unit: Any = None,
    max_rows_per_unit: Any = None,
    unit_ids: Any = "none",
    name: OptionName = python_option,
    **run: Any,
) -> Request:
    """Every check of a run's public arguments, once, before anything is charged or spent (the schema loaded once);
    the private table's are ``check_input``'s, next. ``run``: ``other``, ``spark_master``, ``engine_options``,
    ``schema_share``, ``discovery_options`` (as ``synthesize``).

    ``require``: order constraints (``A OP B``, public) added to the schema's ``require`` list. With a schema they
    are checked against it here; without one, their columns are checked against an in-memory table's names here
    and a file's header as the run starts (``spending``), before any spend. That a column is numeric is known
    only once discovery has spent its share: a comparison naming a column discovered categorical is refused
    then, before the synthesis spends anything (a Spark table's names are known only then too).

    ``output`` / ``save_model``: the paths ``release`` writes (``rows`` 0 with no model to save is refused).

    ``privacy_unit``: the column naming a person (person-level neighbours), never released: refused in a reviewed
    schema, needed in the table (an in-memory table's names here, a file's header as the run starts), read by the
    NumPy engine (``max_rows_per_unit``: k of contribution bounding, else chosen privately)."""
    from privsample.data.csv_layout import check_delimiter, check_encoding
    from privsample.privacy.budget import as_budget, refuse_seeded

    delimiter, encoding = check_delimiter(delimiter), check_encoding(encoding)
    index_col = check_index_col(index_col, name)
    rows = None if rows is None else check_rows(rows, name)
    check_rows_written(rows, output, save_model, name)
    seed = check_seed(seed, name)
    schema_name = Path(schema).name if isinstance(schema, (str, os.PathLike)) else "the schema"
    require = check_require(require, name)
    unit, max_rows = check_unit(privacy_unit, max_rows_per_unit, name, unit_ids)
    schema = load_schema(schema, name)
    if schema is not None:
        schema = add_require(schema, require, name("require"))
    max_rows = check_schema_unit(schema, unit, schema_name, name, max_rows)
    check_public(public, settings.method, schema, name)
    if unit is not None:
        engine = unit_engine(unit, engine, schema, schema_name, name)
    synth = make_synthesizer(STAND_IN if settings.method == AUTO else settings.method, **settings.options)
    if schema is not None:  # the columns modelled: the schema's (an in-memory table's: ``check_input``)
        check_width(len(schema.columns), synth.max_columns, schema_name, settings.method, name("schema"))
    if public is not None:
        synth.check_public()  # a method's own conditions on a public table (PPSyn: the annealed schedule)
    budget = as_budget(budget)
    refuse_seeded(budget, seed)
    make_accountant(settings.epsilon, settings.delta, schema, run.get("schema_share"), name)  # refusals only
    return Request(
        settings,
        schema,
        rows,
        seed,
        synth,
        public,
        delimiter=delimiter,
        encoding=encoding,
        index_col=index_col,
        budget=budget,
        schema_name=schema_name,
        option_name=name,
        require=require,
        output=None if output is None else Path(output),
        save_model=None if save_model is None else Path(save_model),
        unit=unit,
        max_rows=max_rows,
        engine=engine,
        unit_ids=unit_ids,
        **run,
    )


def check_input(r: Request, source: Any, paths: dict | None = None) -> SynthInput:
    """The private table's checks that its kind, column names and types can refuse (public: never its values), after
    ``check_request``'s, before anything is charged or spent: ``check_source``'s (table, engine); an in-memory
    table's names held against the unit, the comparisons and the method's width; not the declared public table
    (``check_not_private``); a DataFrame's dtypes. ``paths``: ``privsample.io.check_paths``'s arguments (the front
    end's option names for its paths), checked last, once every argument has passed (a missing output folder is
    created only then)."""
    if r.engine not in ENGINES:
        raise InputError(f"unknown engine '{r.engine}' ({'|'.join(ENGINES)})")
    frame, engine = check_source(source, r.engine, r.schema, r.index_col)  # frame: None for a path or Spark table
    if frame is not None:
        names = [str(c) for c in frame.columns]
        if r.unit is not None:
            check_unit_column(r.unit, names, "the input table", r.option_name)
        if r.schema is None:
            if r.require:
                check_require_names(r.require, names, r.option_name("require"), "the input table")
            width = len(names) - (r.unit is not None)
            check_width(width, r.synth.max_columns, "the input table", r.settings.method, r.option_name("schema"))
    # Reads the private table, but refuses only when it IS the declared public table, where no guarantee is left to
    # protect (check_not_private); done before the budget file or the accountant is charged.
    check_not_private(r.public, source)
    dtypes = frame_dtypes(source)  # public: a pandas DataFrame's column types, not its values
    if paths is not None:
        check_paths(**paths)
    return SynthInput(source, frame, engine, dtypes)


def prepare(*, method: Any, epsilon: Any, delta: Any, options: dict | None = None, **kw: Any) -> Request:
    """``check_settings`` then ``check_request``: the one validation of a run's public arguments (``kw``:
    ``check_request``'s); ``check_input`` checks its table next."""
    return check_request(check_settings(method, epsilon, delta, options, kw.get("name", python_option)), **kw)


def load_schema(schema: Any, name: OptionName = python_option) -> Schema | None:
    """``schema`` (a ``Schema``, a schema file or None) loaded and checked usable (reviewed or private)."""
    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.load(schema)
    elif schema is not None and not isinstance(schema, Schema):
        raise InputError(f"{name('schema')} must be a Schema or a schema file, not {type(schema).__name__}")
    if schema is not None:
        check_schema_usable(schema)
    return schema


def check_public(public, method: str, schema: Schema | None, name: OptionName = python_option) -> None:
    """``InputError`` unless a public table can be used: ``method`` takes one, the schema is reviewed and the file
    exists (that it is not the private table is ``check_input``'s). Before any budget is reserved or spent."""
    if public is None:
        return
    from privsample.synth.public import check_public_file

    if method not in PUBLIC_ONLY:
        raise InputError(f"{name('public')} is supported by {', '.join(PUBLIC_ONLY)}, not {method}")
    if schema is None:
        raise InputError(
            f"{name('public')} needs {name('schema')}: both tables are coded by the same schema "
            "('privsample schema PUBLIC' drafts one from the public table at no privacy cost)"
        )
    if isinstance(public, (str, os.PathLike)):
        check_public_file(public)


def charge(request: Request) -> dict:
    """What a budget file is charged for ``request`` (``synth_charge``): public arguments only."""
    s = request.settings
    return synth_charge(s.epsilon, s.delta, request.schema, request.schema_share, s.method, request.unit)


@contextmanager
def spending(request: Request, table: SynthInput, output: str = "in-memory result") -> Iterator[Request]:
    """The whole run's context: the request's budget file, if any, charged for it (``charge``, recording ``output``
    and the input's fingerprint; a failure before any spend releases the charge: ``Budget.spending``); then, and
    only then, the first read of the data: a table file's header (an empty or duplicate name is refused there), held
    against the schema (column names, public). A schema column the header lacks is refused there (``InputError``);
    the columns the schema leaves out are a ``ColumnsLeftOutWarning``. A run the budget file refuses reads nothing."""
    from privsample.data.table import table_columns
    from privsample.data.csv_layout import DELIMITERS

    r = request
    source = table.source
    with charging(r.budget, charge(r), source, output):
        if table.frame is None and isinstance(source, (str, os.PathLike)) and Path(source).is_file():
            # not a Spark URI: that engine reports its own problems; an empty or duplicate name is refused here
            header = table_columns(source, delimiter=r.delimiter, encoding=r.encoding, index_col=r.index_col)
            if r.unit is not None:
                check_unit_column(r.unit, header, str(source), r.option_name)
            header = table.header = [c for c in header if c != r.unit]  # the unit's column: never modelled nor written
            if r.schema is None:
                if r.require:  # the columns the comparisons name, from the header (public)
                    check_require_names(r.require, header, r.option_name("require"), Path(source).name)
                check_width(len(header), r.synth.max_columns, str(source), r.settings.method, r.option_name("schema"))
            else:
                declared = r.schema.all_names  # identifier and free-text columns are not left out
                left = check_columns(source, header, declared, r.schema_name, r.option_name, DELIMITERS)
                if left:
                    warnings.warn(left_out_note(left, source, r.schema_name), ColumnsLeftOutWarning, stacklevel=2)
        yield r


def run(
    request: Request, table: SynthInput, *, progress=no_progress, noise: NoiseSource | None = None, sample: bool = True
) -> Fitted:
    """``fit`` (and with ``sample`` the synthetic table), with the request's budget file, if any, charged
    for the whole run before the data are read."""
    with spending(request, table):
        return fit(request, table, progress=progress, noise=noise, sample=sample)


def fit(
    request: Request, table: SynthInput, *, progress=no_progress, noise: NoiseSource | None = None, sample: bool = False
) -> Fitted:
    """Fit ``request``'s method under its (epsilon, delta)-DP; with ``sample``, draw the default table too
    (``request.rows``, seeded by ``request.seed``). No check of its own: ``request`` is checked."""
    r, s = request, request.settings
    unit = ROW if r.unit is None else PrivacyUnit(r.unit, r.max_rows or 1)  # k fixed by the profile if chosen
    accountant, d_disc = make_accountant(s.epsilon, s.delta, r.schema, r.schema_share, unit=unit)
    pub = None
    if r.public is not None:  # public: read and coded before anything private, at no cost
        from privsample.synth.public import read_public

        with progress_phase(progress, "read public table", message="no privacy cost"):
            pub = read_public(r.public, r.schema, other=r.other, delimiter=r.delimiter, encoding=r.encoding)
    noise = noise if noise is not None else make_noise(r.seed)  # seeded noise warns: NOT private
    rng = np.random.default_rng(r.seed)  # sampling/decoding randomness (post-processing)
    profiler = None
    if r.unit is not None:  # the unit profile, called by the engine before any other spend
        from privsample.data.unit_profile import UnitProfiler

        profiler = UnitProfiler(r.unit, r.max_rows, accountant, noise, progress)
    eng, schema = open_engine(
        table.source,
        r.schema,
        table.engine,
        frame=table.frame,
        discover=_discovery(r, accountant, noise, d_disc, progress),
        check_size=r.synth.check_size,
        other=r.other,
        delimiter=r.delimiter,
        encoding=r.encoding,
        index_col=r.index_col,
        spark_master=r.spark_master,
        engine_options=r.engine_options,
        reading=progress_phase(progress, "read table"),
        coding=progress_phase(progress, "encode table", accountant=accountant),
        unit=r.unit,
        profile=profiler,
        seed=r.seed,
    )
    table.frame = None  # only the codes are needed from here on
    if r.unit is None:  # a column named like a person's id, unless the schema holds it as an identifier (one row each)
        ids = {c.name for c in schema.identifiers}
        hint_unit([n for n in schema.all_names if n not in ids], r.option_name)
    warn_dropped(schema)  # free-text columns, left out of the output: one FreeTextWarning each (names only)
    choice = None
    if s.method == AUTO:  # the method chosen from public quantities and a noisy row count, before it spends
        from privsample.api.choice import choose_for_run

        r.synth, choice = choose_for_run(s, accountant, noise, schema, eng)
    try:
        model = r.synth.fit(eng, accountant, noise, progress, schema=schema, public=pub)
    finally:
        getattr(eng, "close", lambda: None)()
    model.params.update({"epsilon": s.epsilon, "delta": s.delta, "seed": r.seed, "engine": table.engine})
    if choice is not None:  # post-processing of DP outputs and public quantities
        model.params["method_choice"] = {"method": choice.method, "reason": choice.reason}
    if profiler is not None:  # the unit profile: noisy figures and k only
        model.params["unit"] = profiler.profile.to_dict()
        if r.unit_ids == "fresh":
            model.params["unit_ids"] = "fresh"
    if table.dtypes is not None:  # a DataFrame's dtypes, for its synthetic tables (public; categories as released)
        model.params["dtypes"] = dtype_specs(table.dtypes, model.schema)
    table = None
    if sample:
        with progress_phase(
            progress, "sample", accountant=accountant, message="draw synthetic records (no privacy cost)"
        ):
            table = restore_dtypes(model.sample_table(r.rows, rng), model.params.get("dtypes"), model.schema)
    return Fitted(model=model, accountant=accountant, schema=schema, table=table)


@dataclass
class Released:
    """What ``release`` returns: the fitted run and the number of synthetic rows written (the rows asked, or the
    model's noisy row count: public)."""

    fitted: Fitted
    rows: int


def release(request: Request, table: SynthInput, *, progress=no_progress, started=None) -> Released:
    """The command line's run of a checked ``request`` (``prepare`` with ``output``): the budget file charged and
    the header read (``spending``); with ``rows`` given, the table's size checked from public quantities before any
    spend (the rows asked, the schema or the header's names); ``fit``; the size checked again from the noisy row
    count; the model saved (``save_model``); the synthetic table written in chunks (bounded memory, atomic).
    Every output is post-processing of the fit; nothing here reads a record. ``started()``, if given, is called
    once the header has passed and the output's size is checked: before any spend."""
    r = request
    outputs = ", ".join(str(p) for p in (r.output, r.save_model) if p is not None)
    with spending(r, table, outputs):
        columns = r.schema.output_columns if r.schema is not None else table.header  # None: a table only Spark reads
        if r.rows is not None and columns is not None:  # before any spend: the rows asked, the schema or the names
            check_output_size(columns, r.rows, r.output)
        noise = make_noise(r.seed)  # seeded noise says so (``SeededNoiseWarning``) before the run starts
        if started is not None:
            started()
        fitted = fit(r, table, progress=progress, noise=noise)
        model = fitted.model
        n = model.resolve_rows(r.rows)  # the default: the noisy row count, unless it is mostly noise
        check_output_size(model_columns(model), n, r.output)  # the noisy count and the schema: public
        if r.save_model is not None:
            model.save(r.save_model)
        # streamed in chunks: memory does not grow with the rows (the same rows as sampling at once)
        written = write_sample(model, n, r.seed, r.output, progress)
    return Released(fitted, written)


def write_sample(model, rows: int, seed, output: Path, progress=no_progress, where=None) -> int:
    """Sample ``rows`` rows from ``model`` (given the condition ``where``, if any) and write them to ``output`` in
    chunks (bounded memory); ``progress`` follows the chunks when there are more than one. Parquet holds types: a
    model fitted on a pandas DataFrame writes its columns with the DataFrame's dtypes, as ``Synthesizer.sample``
    returns them (``privsample.data.dtypes``); CSV is text, in the columns' own formats. Post-processing: no
    privacy cost."""
    from privsample.data.dtypes import streamed_specs
    from privsample.io import is_stdout, table_kind, write_chunks  # looked up at the call (tests replace them)

    extra = {} if where is None else {"where": where}
    chunks = model.sample_chunks(rows, np.random.default_rng(seed), **extra)
    specs = (getattr(model, "params", None) or {}).get("dtypes")
    if specs and not is_stdout(output) and table_kind(Path(output)) == "parquet":
        if rows > model.chunk_rows:  # one type per column in every chunk, missing values drawn or not
            specs = streamed_specs(specs, model.schema)
        chunks = (restore_dtypes(chunk, specs, model.schema) for chunk in chunks)
    if rows <= model.chunk_rows:
        return write_chunks(chunks, output)
    label = output_label(output)
    return write_chunks(
        chunks, output, on_chunk=lambda done: progress("sample and write rows", step=done, steps=rows, message=label)
    )


def model_columns(model) -> list:
    """A fitted model's output columns: its schema's (public), else its attributes' names."""
    schema = getattr(model, "schema", None)
    columns = schema.output_columns if schema is not None else list(model.model.domain.attributes)
    params = getattr(model, "params", None) or {}
    if params.get("unit_ids") == "fresh":  # a column of 16-digit ids first
        columns = [params["unit"]["column"], *columns]
    return columns


def check_draw(rows: Any, seed: Any, name: OptionName = python_option) -> tuple[int | None, int | None]:
    """(rows, seed) of a draw from a fitted model, checked: ``Synthesizer.sample`` and ``privsample sample``."""
    return (None if rows is None else check_rows(rows, name)), check_seed(seed, name)


def rows_to_draw(model, rows: int | None, where: Any = None) -> int:
    """The rows to draw from ``model`` (``SynthModel.resolve_rows``: by default its noisy row count, times the
    probability of ``where``); a condition the model gives probability zero is refused (``InputError``) here,
    before anything is drawn or written. Post-processing of the model only."""
    n = model.resolve_rows(rows, where)
    if where is not None:
        model.check_condition(where)
    return n


def _discovery(r: Request, accountant: Accountant, noise: NoiseSource, d_disc: float, progress):
    """A function of a table (a DataFrame or an engine's ``ValueSource``) to its privately discovered schema."""

    def discover(table) -> Schema:
        from privsample.data.column_values import ValueSource

        s = r.settings
        names = table.names if isinstance(table, ValueSource) else table.columns  # public: the column names
        # before any spend; a Spark source's width is first known here
        check_width(len(names), r.synth.max_columns, "the table", s.method, r.option_name("schema"))
        schema = _discover(
            table, r.synth, accountant, noise, d_disc, r.schema_share, r.discovery_options, s.epsilon, s.delta, progress
        )
        try:  # public constraints added to the discovered schema; before the synthesis spends anything
            return add_require(schema, r.require, r.option_name("require"))
        except InputError as exc:
            raise InputError(
                f"{exc} (in the privately discovered schema, whose share of the budget is spent: give a reviewed "
                "schema with the compared columns numeric)"
            ) from None

    return discover


def _discover(
    table, synth, accountant, noise, d_disc, schema_share, discovery_options, epsilon, delta, progress
) -> Schema:
    """The schema of ``table`` (a DataFrame, or an engine's ``ValueSource``) discovered privately with a share of
    the run's budget. The model size is checked first on the worst case of discovery (the column names only,
    public), before any spend; the losses are warned of and a collapsed schema refused before the synthesis
    spends anything."""
    from privsample.data.column_values import ValueSource
    from privsample.data.discovery import private_schema
    from privsample.data.discovery_report import check_not_collapsed, warn_losses

    names = list(table.names) if isinstance(table, ValueSource) else [str(c) for c in table.columns]
    with progress_phase(progress, "check model size", message="worst case of discovery"):
        synth.check_size(worst_case_domain(names))  # before any spend
    with progress_phase(
        progress, "discover schema", accountant=accountant, message="private category/bounds discovery"
    ):
        # Discovery takes a share of the whole budget: planned from a noisy row count (share=None) or fixed.
        schema = private_schema(
            table,
            accountant,
            noise,
            rho=accountant.rho_total,
            delta=d_disc,
            share=schema_share,
            bins=DISCOVERY_BINS,
            max_categories=DISCOVERY_MAX_CATEGORIES,
            **(discovery_options or {}),
        )
    warn_losses(schema)  # one DiscoveryLossWarning per column discovery lost (post-processing)
    check_not_collapsed(schema, accountant.epsilon_spent(delta), epsilon)  # before the synthesis spend
    return schema


__all__ = [
    "DEFAULT_DELTA",
    "Settings",
    "Request",
    "SynthInput",
    "Fitted",
    "check_settings",
    "check_request",
    "check_input",
    "prepare",
    "load_schema",
    "check_public",
    "charge",
    "spending",
    "run",
    "fit",
    "Released",
    "release",
    "write_sample",
    "model_columns",
    "check_draw",
    "rows_to_draw",
]
