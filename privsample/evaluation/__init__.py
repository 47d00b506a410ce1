"""Evaluation of a synthetic table against the real one: NOT PRIVATE, for the data owner, never for release.

:func:`evaluate` (``privsample.evaluate(real, synthetic)``, exported by the package ``privsample``) scores the
synthetic table by its workload error, the L1 distance between the normalised real and synthetic k-way
marginals, as ``privsample evaluate`` does, and returns an :class:`Evaluation` (tables, text, notebook HTML, the
HTML report). Everything it computes reads the real table exactly: it is not differentially private.

    >>> import numpy as np, pandas as pd
    >>> import privsample
    >>> rng = np.random.default_rng(0)
    >>> real = pd.DataFrame({"sex": rng.choice(["F", "M"], 1000), "age": rng.integers(17, 91, 1000)})
    >>> synthetic = pd.DataFrame({"sex": rng.choice(["F", "M"], 500), "age": rng.integers(17, 91, 500)})
    >>> ev = privsample.evaluate(real, synthetic, workload=2)
    >>> ev.errors[["domain", "order", "cliques"]]
            domain  order  cliques
    0  real values      1        2
    1  real values      2        1
    >>> bool(ev.errors["max"].max() < 0.3)
    True
    >>> print(repr(ev).splitlines()[0])
    Evaluation (NOT PRIVATE: Contains non-private statistics of the real data — do not release)

Modules: ``tables`` (the scoring: the real table's own domain, what a schema loses), ``workload`` (the
metric), ``report`` (the HTML report), ``result`` (:class:`Evaluation`), ``guarantee`` (the release's
guarantee from its model or ledger), ``privacy_check`` (with a holdout: distances to closest record and a
membership-inference AUC; evidence, not a guarantee), and the paper metrics ``classification`` and
``range_queries``.
"""

from __future__ import annotations

import os
from typing import Any

from privsample.errors import InputError
from privsample.evaluation.result import Evaluation

__all__ = ["evaluate", "Evaluation"]

MAX_WORKLOAD = 5  # the largest marginal order scored (as ``evaluate --workload``)


def _schema(schema: Any):
    from privsample.data.schema import Schema

    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, (str, os.PathLike)):
        return Schema.load(schema)
    raise InputError(f"schema must be a Schema or a schema file, not {type(schema).__name__}")


def _table(source: Any, label: str, schema, **csv: Any):
    """``source`` (an in-memory table or a CSV/Parquet path) as ``read_table`` reads a file of it."""
    from privsample.data.frames import ACCEPTED, frame_kind, frame_table
    from privsample.data.table import empty_table_error, read_table

    na = {"na_values": schema.na_values} if schema is not None else {}
    if isinstance(source, (str, os.PathLike)):
        return read_table(source, **csv, **na)
    if frame_kind(source) is None:
        raise InputError(f"{label}: expected {ACCEPTED}, not {type(source).__name__}")
    df = frame_table(source, label=label, **na)
    if len(df) == 0:
        raise empty_table_error(label)
    return df


def evaluate(
    real: Any,
    synthetic: Any,
    schema: Any = None,
    *,
    model: Any = None,
    ledger: Any = None,
    workload: int = 3,
    max_cliques: int | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    where: Any = None,
    holdout: Any = None,
) -> Evaluation:
    """Score ``synthetic`` against ``real`` by workload error, as ``privsample evaluate`` (NOT private).

    ``real``, ``synthetic``: a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path
    (an in-memory table is read as the same data written to CSV). The error of every k-way marginal, k = 1 to
    ``workload`` (at most 5; ``max_cliques``: a uniform sample of at most that many cliques per order), is
    the L1 distance between the normalised real and synthetic marginals, scored on the real table's own
    values (a synthetic value the real table lacks counts as error). ``schema`` (a ``Schema`` or a schema
    file, e.g. the one the synthesizer used): only its columns are scored, also on its own domain, with the
    share of real records it merges or clips per column. ``model`` (a fitted ``Synthesizer``, a
    ``SynthModel`` or a saved model) or ``ledger`` (a ledger dict or its JSON file): the release's method,
    ε, δ and privacy ledger, shown beside the errors. ``delimiter``, ``encoding``: of the real table's CSV
    file (default: detected). ``where`` (a condition, as ``Synthesizer.sample(where=...)``: a mapping or
    ``"sex=Female; age=30..40"``): score a subgroup, both tables filtered to the records that satisfy it
    (checked against ``schema`` when one is given). ``holdout`` (a table as ``real``: records of the same
    population that the synthesizer did NOT see, with the real table's columns): also run the empirical
    privacy check (``privsample.evaluation.privacy_check``: distance to closest record, a membership-inference
    AUC with its 95% CI, and the baseline of releasing the real table itself) into ``Evaluation.privacy``;
    evidence, not a guarantee.

    NOT PRIVATE: the result holds exact statistics of the real table; keep it with the data owner. Bad input
    raises ``InputError`` (one line, as the command line prints it)."""
    from privsample.evaluation.guarantee import load_guarantee
    from privsample.evaluation.result import input_name
    from privsample.evaluation.tables import evaluate_tables

    _check_options(workload, max_cliques)
    led, guarantee = load_guarantee(model, ledger)
    sch = _schema(schema)
    rdf, sdf, hdf, synthetic_label, holdout_label = _inputs(real, synthetic, holdout, sch, where, delimiter, encoding)
    scores = evaluate_tables(
        rdf,
        sdf,
        sch,
        ks=tuple(range(1, workload + 1)),
        max_cliques=max_cliques,
        rng=0,
        synthetic_name=synthetic_label,
    )
    return Evaluation(
        scores,
        privacy=None if hdf is None else _privacy(rdf, sdf, hdf, scores, sch, holdout_label),
        ledger=led,
        guarantee=guarantee,
        real_name=input_name(real, "the real table"),
        synthetic_name=input_name(synthetic, "the synthetic table"),
        schema_name=input_name(schema, "the schema") if sch is not None else None,
        left_out=[str(c) for c in rdf.columns if sch is not None and str(c) not in sch],
        inputs={
            "real": real,
            "synthetic": synthetic,
            "schema": schema,
            "model": model,
            "ledger": ledger,
            "holdout": holdout,
        },
    )


def _check_options(workload: Any, max_cliques: Any) -> None:
    """``workload`` an integer from 1 to ``MAX_WORKLOAD``; ``max_cliques`` None or a positive integer."""
    if isinstance(workload, bool) or not isinstance(workload, int) or not 1 <= workload <= MAX_WORKLOAD:
        raise InputError(f"workload must be an integer from 1 to {MAX_WORKLOAD}, not {workload!r}")
    if max_cliques is not None and (isinstance(max_cliques, bool) or not isinstance(max_cliques, int)):
        raise InputError(f"max_cliques must be a positive integer or None, not {max_cliques!r}")
    if max_cliques is not None and max_cliques < 1:
        raise InputError(f"max_cliques must be at least 1, not {max_cliques}")


def _inputs(real, synthetic, holdout, sch, where, delimiter, encoding):
    """The real, synthetic and holdout tables read (the holdout None when not given), filtered to the subgroup
    ``where`` when one is given, with the labels that name the synthetic and holdout tables in messages."""
    from privsample.evaluation.privacy_check import check_not_real

    holdout_label = str(holdout) if isinstance(holdout, (str, os.PathLike)) else "the holdout table"
    if holdout is not None:
        check_not_real(real, holdout, holdout_label)  # the same file: before anything is read
    rdf = _table(real, "the real table", sch, delimiter=delimiter, encoding=encoding)
    synthetic_label = str(synthetic) if isinstance(synthetic, (str, os.PathLike)) else "the synthetic table"
    sdf = _table(synthetic, synthetic_label, sch)
    hdf = None
    if holdout is not None:
        hdf = _table(holdout, holdout_label, sch, delimiter=delimiter, encoding=encoding)
        check_not_real(rdf, hdf, holdout_label)  # the same records in another file or form
    if where is not None:
        rdf, sdf = _subgroup(where, sch, rdf, sdf, synthetic_label)
        if hdf is not None:
            from privsample.data.condition import Where

            hdf = hdf[Where.parse(where).mask(hdf)].reset_index(drop=True)
    return rdf, sdf, hdf, synthetic_label, holdout_label if holdout is not None else None


def _privacy(rdf, sdf, hdf, scores, sch, holdout_label: str):
    """The empirical privacy check against the holdout table (``privsample.evaluation.privacy_check``)."""
    from privsample.evaluation.privacy_check import check_holdout, coding, privacy_check

    check_holdout(rdf, hdf, scores.domain.names, holdout_label)
    return privacy_check(rdf, sdf, hdf, coding(scores.domain, sch), holdout_name=holdout_label)


def _subgroup(where: Any, schema, real, synthetic, synthetic_label: str):
    """The records of both tables that satisfy ``where``; ``InputError`` if either table has none."""
    from privsample.data.condition import Where

    where = Where.parse(where)
    if schema is not None:
        where.resolve(schema)  # the columns and values must be the schema's
    out = []
    for df, label in ((real, "the real table"), (synthetic, synthetic_label)):
        sub = df[where.mask(df)].reset_index(drop=True)
        if len(sub) == 0:
            raise InputError(f"no record of {label} satisfies the condition '{where}'")
        out.append(sub)
    return out[0], out[1]
