"""The public schema for Python users: declare it in code, draft it (NON-PRIVATE), or discover it with DP.

A schema is the *public* description of every column (categories, numeric bounds and bins) from which the
synthesizers build their finite domain. Whatever it says is treated as public knowledge: a synthesizer
fitted with it releases its categories and bounds as they are, at no privacy cost. There are three sources,
named by ``provenance``:

* ``"user"``: declared by a person, ``Schema([Categorical(...), Numeric(...)])``, or a draft a person has
  reviewed (``Schema.reviewed``). It is public because a person says so: nothing about it is checked
  against the data.
* ``"draft-nonprivate"``: ``Schema.draft(data)`` reads categories and bounds directly off the data. It has
  NO privacy guarantee (a rare category or an extreme value of one record shows in it) and ``Synthesizer``
  refuses it until a person has reviewed it.
* ``"private"``: ``Schema.discover(data, epsilon)`` discovers it under (epsilon, delta)-DP, as ``privsample
  schema --private-epsilon`` does; its cost is in ``schema.ledger``, and a fit with it adds that cost to
  its own ledger (the fit's (epsilon, delta) covers both).

``Schema`` here is a subclass of ``privsample.data.schema.Schema`` (the class the run works with), so it
goes wherever a schema is accepted; ``load`` and ``from_dict`` return this class. It renders as a table in a
notebook (``_repr_html_``) and drafts say NON-PRIVATE DRAFT wherever they show.

Example::

    >>> from privsample import Categorical, Numeric, Schema
    >>> schema = Schema([Categorical("sex", ["F", "M"]), Numeric("age", 17, 90, bins=16, integer=True)])
    >>> schema.provenance, schema.names
    ('user', ['sex', 'age'])
    >>> print(schema)
    Schema (provenance: user, declared or reviewed by a person), 2 columns
      sex  categorical  F, M
      age  numeric      [17, 90], 16 bins, integer
"""

from __future__ import annotations

import copy
import dataclasses
import html
import os
from typing import Any

from privsample.data.schema import PROVENANCES, Categorical, Column, FreeText, Identifier, Numeric
from privsample.data.schema import Schema as _BaseSchema
from privsample.errors import InputError
from privsample.privacy.ledger import Ledger

DRAFT_BANNER = (
    "NON-PRIVATE DRAFT: categories and bounds were read directly from the data; it carries no privacy "
    "guarantee. Review every column (public knowledge only), then use schema.reviewed()."
)
DRAFT_NOTE_PREFIX = "NON-PRIVATE DRAFT"
SHOWN_CATEGORIES = 12  # categories listed per column in text and HTML (the rest are counted)
DEFAULT_DRAFT_MAX_CATEGORIES = 50
DEFAULT_DRAFT_BINS = 16
DEFAULT_DISCOVERY_DELTA = 1e-9


def _read(data: Any, *, allow_empty: bool):
    """``data`` as ``read_table`` reads a CSV file of it (a pandas/pyarrow/polars table, or a CSV/Parquet path);
    ``InputError`` for anything else, before any value is read."""
    from privsample.data.frames import ACCEPTED, frame_kind, frame_table
    from privsample.data.table import read_table, table_format

    if frame_kind(data) is not None:
        return frame_table(data, label="the input table")
    if isinstance(data, (str, os.PathLike)):
        table_format(data)  # an existing CSV or Parquet file
        return read_table(data, allow_empty=allow_empty)
    raise InputError(f"expected {ACCEPTED}, not {type(data).__name__}")


def _check_positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a whole number >= 1 (got {value!r})")
    return value


def _column_cells(c: Column | Identifier | FreeText) -> tuple[str, str, str, str, str]:
    """(name, kind, categories or bounds/bins, nullable, catch-all) as text."""
    if isinstance(c, Identifier):
        return c.name, "id", f"fresh ids {c.format} (not synthesized)", "", ""
    if isinstance(c, FreeText):
        return c.name, "text", "dropped from the output (free text)", "", ""
    if isinstance(c, Categorical):
        cats = list(c.categories)
        shown = ", ".join(cats[:SHOWN_CATEGORIES])
        if len(cats) > SHOWN_CATEGORIES:
            shown += f", … (+{len(cats) - SHOWN_CATEGORIES} more)"
        if not cats:
            shown = "(none: catch-all only)"
        return c.name, "categorical", shown, "yes" if c.nullable else "", c.other or ""
    desc = f"[{c.lower:g}, {c.upper:g}], {c.bins} bin{'s' if c.bins != 1 else ''}"
    if c.edges is not None:
        edges = [f"{e:g}" for e in c.edges]
        desc += ", edges " + ", ".join(edges if len(edges) <= 8 else [*edges[:3], "…", *edges[-2:]])
    if c.integer:
        desc += ", integer"
    return c.name, "numeric", desc, "yes" if c.nullable else "", ""


def _forbid_text(entry: dict[str, Any]) -> str:
    """One forbid entry as ``a=x, b=y|z``."""
    return ", ".join(f"{k}={'|'.join(map(str, v)) if isinstance(v, list) else v}" for k, v in entry.items())


class Schema(_BaseSchema):
    """Ordered public columns (``Categorical``, ``Numeric``) and where they came from (``provenance``).

    ``Schema(columns)`` declares a schema in code: columns in order, provenance ``"user"`` (a person
    declares every category and bound as public knowledge; nothing is read from the data). The list may also
    hold ``Identifier("patient", "P-{6 digits}")`` (fresh ids in the output, not synthesized) and
    ``FreeText("notes")`` (left out of the output) at their places: they are kept apart from ``columns``
    (``identifiers``, ``text``), outside the synthesized domain. Other
    keywords: ``na_values`` (texts read as missing), ``provenance``, ``ledger``, ``notes``, ``discovery``,
    ``forbid`` (structural zeros: combinations that cannot occur, e.g. ``[{"sex": "Male", "relationship":
    "Wife"}]``; public, so the synthesizers fix them at zero at no privacy cost; see the user guide), ``require``
    (order constraints between numeric columns, e.g. ``["discharged >= admitted", "copay >= 0"]``; public, every
    synthetic record satisfies them).
    ``Schema.draft`` (NON-PRIVATE, refused by ``Synthesizer`` until ``reviewed``) and ``Schema.discover``
    ((epsilon, delta)-DP, its cost in ``ledger``) read one off a table; ``Schema.load`` reads a YAML/JSON
    file and ``save`` writes one (provenance, ledger and discovery report included).

    Example::

        >>> schema = Schema([Categorical("sex", ["F", "M"]), Numeric("age", 17, 90, bins=16)])
        >>> schema.provenance, schema.shape
        ('user', (2, 16))
        >>> schema["age"].bins
        16
    """

    def __post_init__(self) -> None:
        kinds = (Categorical, Numeric, Identifier, FreeText)
        if isinstance(self.columns, (*kinds, str, bytes)) or not hasattr(self.columns, "__iter__"):
            raise InputError(
                f"schema columns must be a list of Categorical or Numeric, not {type(self.columns).__name__}"
            )
        self.columns = list(self.columns)
        bad = [c for c in self.columns if not isinstance(c, kinds)]
        if bad:
            raise InputError(
                f"schema columns must be Categorical or Numeric (or Identifier, FreeText), not {type(bad[0]).__name__}"
            )
        if any(not isinstance(c.name, str) or not c.name.strip() for c in self.columns):
            raise InputError("schema column names must be non-empty text")
        if self.provenance not in PROVENANCES:
            raise InputError(f"schema: unknown provenance {self.provenance!r} ({' | '.join(PROVENANCES)})")
        super().__post_init__()

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "ledger" and value is not None and not isinstance(value, Ledger):
            if not isinstance(value, dict):
                raise InputError(f"schema: the ledger must be a mapping (got {type(value).__name__})")
            value = Ledger(value)  # renders in a notebook; still the dict that is saved
        super().__setattr__(name, value)

    # -- reading a schema off a table ----------------------------------------------------------------
    @classmethod
    def draft(
        cls,
        data: Any,
        *,
        max_categories: int = DEFAULT_DRAFT_MAX_CATEGORIES,
        bins: int = DEFAULT_DRAFT_BINS,
    ) -> Schema:
        """A NON-PRIVATE draft read directly off ``data``, as ``privsample schema data.csv`` writes it.

        NOT PRIVATE: its categories are the values found in ``data`` (the ``max_categories`` most frequent,
        the rest in an ``"(other)"`` catch-all) and its numeric bounds are the exact minimum and maximum,
        so one record's rare value or extreme number can show in it. Its provenance is
        ``"draft-nonprivate"``; it prints as a NON-PRIVATE DRAFT and ``Synthesizer.fit`` / ``synthesize``
        refuse it until a person has reviewed it and called ``reviewed()`` (or use ``Schema.discover``
        for a schema with a guarantee). Nothing is spent and nothing is recorded in a ledger.

        ``data``: a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path, read as the
        CSV file of the same data is. A column is numeric when every value is a number and it has more
        than 20 distinct values (``bins`` equal-width bins, and a bin of its own for every value held by 5% or
        more of its non-missing records, such as 40 hours a week: also read off the data), else categorical.
        ``InputError`` for bad input (not a table, empty or duplicate column names, no rows).

        Example::

            >>> import pandas as pd
            >>> df = pd.DataFrame({"sex": ["F", "M", "F"] * 10, "age": range(20, 50)})
            >>> draft = Schema.draft(df, bins=8)
            >>> draft.provenance
            'draft-nonprivate'
            >>> print(draft)  # doctest: +ELLIPSIS
            NON-PRIVATE DRAFT: ...
            Schema (provenance: draft-nonprivate, NOT PRIVATE: read directly from the data), 2 columns
              sex  categorical  F, M
              age  numeric      [20, 49], 8 bins, integer
        """
        from privsample.data.discovery import draft_schema

        _check_positive_int(max_categories, "max_categories")
        _check_positive_int(bins, "bins")
        df = _read(data, allow_empty=False)
        return cls._of(draft_schema(df, max_categories=max_categories, bins=bins))

    @classmethod
    def discover(
        cls,
        data: Any,
        epsilon: float,
        delta: float = DEFAULT_DISCOVERY_DELTA,
        *,
        seed: int | None = None,
        budget: Any = None,
    ) -> Schema:
        """A schema discovered under (``epsilon``, ``delta``)-DP, as ``privsample schema data.csv
        --private-epsilon EPSILON --delta DELTA`` discovers it (the same mechanisms, budget split and file).

        Guarantee: the returned schema is (epsilon, delta)-DP for add/remove-one-record neighbouring tables
        (zCDP accounting, Bun & Steinke 2016): a noisy row count plans the split, then per column noisy
        type counts, a stability-based histogram of categories (noisy counts above a threshold; every
        column gets an ``"(other)"`` catch-all) and private numeric bounds. The thresholds and bounds
        use delta/2 in all, the conversion from zCDP to (epsilon, delta) the other half. Only the column
        names (the header) are treated as public. The cost is in ``schema.ledger`` (a
        ``Ledger``: per-step ρ, δ and noise scale; it renders in a notebook), ``save`` keeps it, and a
        ``Synthesizer`` fitted with this schema adds it to its own ledger, so the fit's (epsilon, delta)
        covers discovery and synthesis together.

        ``data``: a pandas DataFrame, a pyarrow Table, a polars DataFrame or a CSV/Parquet path (a table
        without rows is an input like any other). ``seed``: seeded NumPy noise, NOT PRIVATE (reproducible
        experiments only); the ledger then says ``private: False``. ``budget``: a ``Budget`` (or its file) charged
        (ρ(epsilon, delta/2), delta/2) before the data are read, or refusing the run (``BudgetExceeded``).
        ``InputError`` for bad input (epsilon <= 0, delta not in (0, 1), a non-table object, empty or duplicate
        column names), before any budget is spent.

        Example::

            >>> import numpy as np, pandas as pd
            >>> rng = np.random.default_rng(0)
            >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(17, 91, 2000)})
            >>> schema = Schema.discover(df, epsilon=1)
            >>> schema.provenance, schema.names
            ('private', ['sex', 'age'])
            >>> schema.ledger.private, schema.ledger.summary["epsilon_spent"] <= 1
            (True, True)
        """
        from privsample.api.accounting import discover_schema
        from privsample.checks import check_budget, check_seed
        from privsample.privacy.noise import make_noise

        check_budget(epsilon, delta)
        seed = check_seed(seed)
        if budget is not None:  # ``budget``: a Budget (or its file) charged (rho(eps, delta/2), delta/2) first
            from privsample.api.accounting import charged, discovery_charge

            return charged(
                budget, seed, discovery_charge(epsilon, delta), data, lambda: cls.discover(data, epsilon, delta)
            )
        df = _read(data, allow_empty=True)  # a release under add/remove neighbours: n = 0 is not refused
        return cls._of(discover_schema(df, epsilon, delta, make_noise(seed)))

    @classmethod
    def _of(cls, schema: _BaseSchema) -> Schema:
        """A copy of ``schema`` (any ``privsample.data.schema.Schema``) as this class."""
        values = {f.name: copy.deepcopy(getattr(schema, f.name)) for f in dataclasses.fields(_BaseSchema)}
        values["ledger"] = None if schema.ledger is None else dict(copy.deepcopy(schema.ledger))
        return cls(**values)

    # -- review ---------------------------------------------------------------------------------------
    def reviewed(self) -> Schema:
        """A copy with provenance ``"user"``: the schema as a person has checked and accepted it.

        Call it only after checking every column yourself: each category and each numeric bound must be
        public knowledge (a code book, a standard list, a legal range, a published dictionary), not
        something read off the sensitive records. A draft lists the values found in the data: remove
        rare or identifying categories (a name, a single person's value), replace observed minima and
        maxima with public bounds, and check the bins. Edit a column by replacing it, e.g.
        ``schema.columns[i] = Numeric("age", 0, 120, bins=12)``, then call ``reviewed()``. From then on
        the schema is treated as public: a synthesizer releases it as it is, at no privacy cost, so the
        guarantee holds only if this review was honest. The draft's NON-PRIVATE note is dropped; other
        notes are kept.

        A privately discovered schema needs no review and is refused here: calling it "user" would drop
        its discovery cost from later ledgers.

        Example::

            >>> import pandas as pd
            >>> draft = Schema.draft(pd.DataFrame({"sex": ["F", "M"] * 5}))
            >>> draft.provenance
            'draft-nonprivate'
            >>> # ... a person checks that "F" and "M" are public, known categories ...
            >>> schema = draft.reviewed()
            >>> schema.provenance, draft.provenance
            ('user', 'draft-nonprivate')
        """
        if self.provenance == "private":
            raise InputError(
                "this schema was discovered privately: it needs no review, and its ledger must stay with it "
                "(its cost is added to the fit's)"
            )
        notes = [n for n in self.notes if not str(n).startswith(DRAFT_NOTE_PREFIX)]
        return dataclasses.replace(
            self,
            columns=list(self.columns),
            provenance="user",
            notes=notes,
            ledger=copy.deepcopy(self.ledger),
            discovery=copy.deepcopy(self.discovery),
        )

    # -- (de)serialisation ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if "ledger" in d:
            d["ledger"] = dict(d["ledger"])  # a plain mapping (YAML writes no dict subclass)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _BaseSchema):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the base class

    # -- display -----------------------------------------------------------------------------------------
    def _provenance_text(self) -> str:
        if self.provenance == "draft-nonprivate":
            return "draft-nonprivate, NOT PRIVATE: read directly from the data"
        if self.provenance == "private":
            led = self.ledger or Ledger({})
            eps = led.summary.get("epsilon_spent")
            target = led.summary.get("target_epsilon_delta")
            text = "private, discovered with DP"
            if eps is not None and target:
                text += f": ε={eps:.4g} of {target[0]:g} at δ={target[1]:g} (schema.ledger)"
            if not led.entries:
                text += "; NO LEDGER: refused until reviewed"
            elif not led.private:
                text += "; NOT PRIVATE: seeded noise"
            return text
        return "user, declared or reviewed by a person"

    def __str__(self) -> str:
        rows = [_column_cells(c) for c in self.layout()]
        w_name = max(len(r[0]) for r in rows)
        w_kind = max(len(r[1]) for r in rows)
        lines = [DRAFT_BANNER] if self.provenance == "draft-nonprivate" else []
        n = len(self.columns)
        lines.append(f"Schema (provenance: {self._provenance_text()}), {n} column{'s' if n != 1 else ''}")
        for name, kind, desc, nullable, other in rows:
            extra = (", nullable" if nullable else "") + (f", catch-all {other!r}" if other else "")
            lines.append(f"  {name:<{w_name}}  {kind:<{w_kind}}  {desc}{extra}".rstrip())
        lines += [f"forbid: {_forbid_text(e)}" for e in self.forbid]
        lines += [f"require: {e}" for e in self.require]
        lines += [f"note: {note}" for note in self.notes if not str(note).startswith(DRAFT_NOTE_PREFIX)]
        return "\n".join(lines)

    def __repr__(self) -> str:
        cols = []
        for c in self.columns:
            if isinstance(c, Categorical):
                cats = list(c.categories)
                shown = repr(cats[:SHOWN_CATEGORIES])
                if len(cats) > SHOWN_CATEGORIES:
                    shown = shown[:-1] + f", ... (+{len(cats) - SHOWN_CATEGORIES})]"
                opts = (", nullable=True" if c.nullable else "") + (f", other={c.other!r}" if c.other else "")
                cols.append(f"Categorical({c.name!r}, {shown}{opts})")
            else:
                opts = f", edges={list(c.edges)!r}" if c.edges is not None else f", bins={c.bins}"
                opts += (", integer=True" if c.integer else "") + (", nullable=True" if c.nullable else "")
                cols.append(f"Numeric({c.name!r}, {c.lower:g}, {c.upper:g}{opts})")
        cols += [repr(c) for c in (*self.identifiers, *self.text)]
        forbid = f", forbid={self.forbid!r}" if self.forbid else ""
        forbid += f", require={self.require!r}" if self.require else ""
        text = f"Schema([{', '.join(cols)}], provenance={self.provenance!r}{forbid})"
        if self.provenance == "draft-nonprivate":
            text = "<NON-PRIVATE DRAFT: review, then .reviewed()> " + text
        return text

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{h}</th>" for h in ("column", "kind", "categories / bounds", "nullable", "catch-all"))
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in _column_cells(c)) + "</tr>" for c in self.layout()
        )
        banner = ""
        if self.provenance == "draft-nonprivate":
            banner = f'<p style="color:#b00;font-weight:bold">{esc(DRAFT_BANNER)}</p>'
        notes = [n for n in self.notes if not str(n).startswith(DRAFT_NOTE_PREFIX)]
        notes_html = "<ul>" + "".join(f"<li>{esc(str(n))}</li>" for n in notes) + "</ul>" if notes else ""
        ledger_html = self.ledger._repr_html_() if self.provenance == "private" and self.ledger else ""
        return (
            f"<div>{banner}<strong>Schema</strong> (provenance: {esc(self._provenance_text())})"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes_html}{ledger_html}</div>"
        )


__all__ = ["Schema", "Categorical", "Numeric", "Identifier", "FreeText"]
