"""``Evaluation``: what ``privsample.evaluate(real, synthetic)`` returns, as tables, text and HTML.

NOT PRIVATE: every figure here is computed exactly from the real table (its values, counts and errors), without
noise. It is for the data owner judging a release; it must not be published. The text form, the notebook
form (``_repr_html_``) and the report (``to_html``) all open with a notice saying so.

The scores themselves are ``privsample.evaluation.tables.evaluate_tables``'s (``TableScores``); the report is
``privsample.evaluation.report``'s, the page ``privsample evaluate --report`` writes.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Mapping

__all__ = ["Evaluation", "REAL_DOMAIN", "SCHEMA_DOMAIN"]

REAL_DOMAIN = "real values"  # ``Evaluation.errors["domain"]``: scored on the real table's own values (headline)
SCHEMA_DOMAIN = "schema"  # scored on the schema's domain (as the synthesizer saw the real table)
ERROR_COLUMNS = ["domain", "order", "mean", "median", "max", "cliques", "cliques_total", "worst"]
LOSS_COLUMNS = ["column", "kind", "merged", "clipped", "lost"]


def _pct(x: float) -> str:
    return f"{x:.1%}"


class Evaluation:
    """The workload error of a synthetic table against the real one (NOT private: do not release).

    ``errors``: a pandas DataFrame, one row per (``domain``, ``order``): ``domain`` is ``"real values"`` (the
    headline: scored on the real table's own categories, point masses and bins, where a synthetic value the
    real table lacks counts as error) or ``"schema"`` (on the schema's domain, when one was given);
    ``order`` is k; ``mean``, ``median`` and ``max`` are the L1 distances (0 to 2) between the normalised
    real and synthetic k-way marginals over the ``cliques`` scored (of ``cliques_total``: fewer when
    sampled); ``worst`` names the worst clique. ``summary``: the headline as a dict ``{k: {...}}``
    (``privsample.evaluation.workload.summary``). ``loss`` (with a schema): per schema column, the shares of
    real records that the schema merges into its catch-all or null code, clips to its bounds, and both
    (``lost``). ``outside``: per column, the share of synthetic records whose value the real table does not
    hold. ``ledger`` and ``guarantee``: the release's privacy ledger (a ``Ledger``) and guarantee, when a
    model or a ledger was given (else None). ``left_out``: real columns the schema does not list.
    ``privacy`` (with a holdout table): the empirical privacy check, a
    ``privsample.evaluation.privacy_check.PrivacyCheck`` (its ``table``: distances to closest record, the share
    closer to the real table, the membership-inference AUC and CI, beside the baseline of releasing the real
    table; evidence, not a guarantee), else None.

    ``to_html(path)`` writes the report of ``privsample evaluate --report``; a notebook shows the errors,
    the loss and the guarantee (``_repr_html_``). Every form says that it is not private.

    Example::

        >>> import pandas as pd
        >>> from privsample.evaluation import evaluate
        >>> real = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["1", "2", "2", "2"]})
        >>> ev = evaluate(real, real.iloc[:2], workload=1)  # b: 1/4, 3/4 in the real table; 1/2, 1/2 in the other
        >>> ev.errors[["domain", "order", "mean", "max", "worst"]]
                domain  order  mean  max worst
        0  real values      1  0.25  0.5     b
        >>> "NOT PRIVATE" in ev._repr_html_() and "NOT PRIVATE" in repr(ev)
        True
    """

    def __init__(
        self,
        scores: Any,
        *,
        ledger: Mapping[str, Any] | None = None,
        guarantee: Mapping[str, Any] | None = None,
        real_name: str = "the real table",
        synthetic_name: str = "the synthetic table",
        schema_name: str | None = None,
        left_out: list[str] | None = None,
        inputs: Mapping[str, Any] | None = None,
        privacy: Any = None,
    ):
        from privsample.privacy.ledger import Ledger

        self.scores = scores  # ``privsample.evaluation.tables.TableScores``: the engines, domains and summaries
        self.ledger = None if ledger is None else Ledger(ledger)
        self.guarantee = None if guarantee is None else dict(guarantee)
        self.real_name = real_name
        self.synthetic_name = synthetic_name
        self.schema_name = schema_name
        self.left_out = list(left_out or [])
        self.privacy = privacy  # ``privsample.evaluation.privacy_check.PrivacyCheck`` (with a holdout) or None
        self._inputs = {k: v for k, v in (inputs or {}).items() if isinstance(v, (str, os.PathLike))}

    # -- the numbers ---------------------------------------------------------------------------------
    @property
    def summary(self) -> dict[int, dict[str, Any]]:
        """The headline, on the real table's own values: ``{k: {"mean", "max", "worst", "n_cliques", "n_total",
        "sampled", "errors"}}`` (``errors``: ``{clique: L1 error}``)."""
        return self.scores.summary

    @property
    def schema_summary(self) -> dict[int, dict[str, Any]] | None:
        """As ``summary``, on the schema's domain (None without a schema)."""
        return self.scores.schema_summary

    @property
    def n_real(self) -> int:
        return int(self.scores.real_engine.total())

    @property
    def n_synthetic(self) -> int:
        return int(self.scores.synth_engine.total())

    @property
    def columns(self) -> list[str]:
        """The columns scored (the schema's, or all of the real table's)."""
        return list(self.scores.domain.names)

    @property
    def errors(self):
        """A pandas DataFrame: one row per (domain, order), columns ``ERROR_COLUMNS`` (class docstring)."""
        import numpy as np
        import pandas as pd

        rows = []
        for domain, summ in ((REAL_DOMAIN, self.summary), (SCHEMA_DOMAIN, self.schema_summary)):
            for k, v in (summ or {}).items():
                vals = np.fromiter(v["errors"].values(), dtype=np.float64, count=len(v["errors"]))
                rows.append(
                    {
                        "domain": domain,
                        "order": int(k),
                        "mean": float(v["mean"]),
                        "median": float(np.median(vals)),
                        "max": float(v["max"]),
                        "cliques": int(v["n_cliques"]),
                        "cliques_total": int(v["n_total"]),
                        "worst": ", ".join(v["worst"]),
                    }
                )
        return pd.DataFrame(rows, columns=ERROR_COLUMNS)

    @property
    def loss(self):
        """Per schema column (a pandas DataFrame, columns ``LOSS_COLUMNS``): the shares of the real records that
        the schema merges, clips and loses in all; None without a schema."""
        import pandas as pd

        if self.schema_summary is None:
            return None
        rows = [(c.column, c.kind, c.merged, c.clipped, c.lost) for c in self.scores.loss]
        return pd.DataFrame(rows, columns=LOSS_COLUMNS)

    @property
    def outside(self):
        """Per column (a pandas Series): the share of synthetic records whose value the real table lacks."""
        import pandas as pd

        return pd.Series(self.scores.outside, name="outside", dtype=float)

    # -- the report ----------------------------------------------------------------------------------
    def to_html(self, path: str | os.PathLike | None = None, *, title: str = "privsample evaluation"):
        """The HTML report of ``privsample evaluate --report`` (NOT private: it opens with a banner saying so):
        the errors, the release's guarantee, what is lost per column, the worst marginals and the ledger.

        With ``path``, writes it there atomically (refused when ``path`` is one of the input files) and returns
        the path; without, returns the page as a string."""
        from privsample.evaluation.report import build_report_html, write_report

        args = (self.scores.real_engine, self.scores.synth_engine, self.scores.domain)
        kwargs = dict(
            title=title,
            ledger=self.ledger,
            evaluation=self.scores,
            schema_name=self.schema_name,
            guarantee=self.guarantee,
            privacy=self.privacy,
        )
        if path is None:
            return build_report_html(*args, **kwargs)
        from privsample.io import check_paths

        check_paths(self._inputs, {"path": path})
        return write_report(path, *args, **kwargs)

    # -- text and notebook forms ---------------------------------------------------------------------
    def _loss_rows(self) -> list[tuple[str, Any, float]]:
        """(column, ColumnLoss or None, share outside) for the columns that lose anything (as the CLI lists)."""
        loss = {c.column: c for c in self.scores.loss}
        rows = [(name, loss.get(name), self.scores.outside[name]) for name in self.columns]
        return [r for r in rows if (r[1] is not None and r[1].lost > 0) or r[2] > 0]

    def _headline(self) -> str:
        return (
            f"{self.real_name} ({self.n_real:,} records) vs {self.synthetic_name} ({self.n_synthetic:,} records), "
            f"{len(self.columns)} columns"
        )

    def __repr__(self) -> str:
        from privsample.evaluation.guarantee import guarantee_text
        from privsample.evaluation.report import NON_PRIVATE_NOTICE

        lines = [f"Evaluation (NOT PRIVATE: {NON_PRIVATE_NOTICE})", f"  {self._headline()}"]
        lines.append("  workload error (mean L1 of normalised marginals, 0-2):")
        for r in self.errors.itertuples(index=False):
            lines.append(
                f"    {r.domain:<11} {r.order}-way: mean {r.mean:.4f}, median {r.median:.4f}, max {r.max:.4f} "
                f"({r.cliques} of {r.cliques_total} cliques; worst: {r.worst})"
            )
        rows = self._loss_rows()
        if rows:
            lines.append(
                "  lost per column (real records merged / clipped; synthetic records outside the real values):"
            )
            for name, cl, out in rows:
                lost = f"{_pct(cl.merged)} / {_pct(cl.clipped)}; " if cl is not None else ""
                lines.append(f"    {name}: {lost}{_pct(out)} outside")
        if self.left_out:
            lines.append(f"  left out (not in the schema): {', '.join(self.left_out)}")
        if self.privacy is not None:
            lines += ["  " + line for line in self.privacy.text()]
        if self.guarantee is not None:
            lines.append(f"  {guarantee_text(self.guarantee)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from privsample.evaluation.guarantee import guarantee_text
        from privsample.evaluation.report import NON_PRIVATE_NOTICE

        esc = html.escape
        p = [
            "<div>",
            "<div style='background:#c00;color:#fff;font-weight:bold;padding:.5em .8em;border-radius:4px'>"
            f"NOT PRIVATE: {esc(NON_PRIVATE_NOTICE)}<br><span style='font-weight:normal;font-size:.9em'>Every "
            "figure below is computed exactly from the real table, without noise. Keep it with the data "
            "owner.</span></div>",
            f"<p><strong>Evaluation</strong>: {esc(self._headline())}. Workload error: L1 distance between the "
            "normalised real and synthetic marginals (0 = identical, 2 = disjoint), on the real table's own "
            "values" + (" and on the schema's domain" if self.schema_summary is not None else "") + ".</p>",
        ]
        err = self.errors
        head = "".join(f"<th>{esc(c)}</th>" for c in ERROR_COLUMNS)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(f'{v:.4f}' if isinstance(v, float) else str(v))}</td>" for v in r) + "</tr>"
            for r in err.itertuples(index=False)
        )
        p.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        rows = self._loss_rows()
        has_schema = self.schema_summary is not None
        if rows:
            hdr = ["column"] + (["real records merged", "real records clipped"] if has_schema else [])
            hdr.append("synthetic records outside the real values")
            trs = []
            for name, cl, out in rows:
                cells = [name] + ([_pct(cl.merged), _pct(cl.clipped)] if cl else ["", ""] if has_schema else [])
                trs.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in [*cells, _pct(out)]) + "</tr>")
            p.append(
                "<p><strong>What is lost, per column</strong></p><table><thead><tr>"
                + "".join(f"<th>{esc(h)}</th>" for h in hdr)
                + f"</tr></thead><tbody>{''.join(trs)}</tbody></table>"
            )
        else:
            p.append(
                "<p>No column loses real values"
                + (f" to {esc(self.schema_name or 'the schema')}" if has_schema else "")
                + " and no synthetic value lies outside the real values.</p>"
            )
        if self.left_out:
            p.append(f"<p>Left out (not in the schema): {esc(', '.join(self.left_out))}.</p>")
        if self.privacy is not None:
            from privsample.evaluation.report import privacy_section

            p.append(privacy_section(self.privacy, heading="p"))
        if self.guarantee is not None:
            p.append(f"<p><strong>{esc(guarantee_text(self.guarantee))}</strong></p>")
        if self.ledger is not None:
            p.append(self.ledger._repr_html_())
        else:
            p.append(
                "<p>No privacy ledger: pass <code>model=</code> or <code>ledger=</code> to show the release's.</p>"
            )
        p.append("</div>")
        return "".join(p)


def input_name(source: Any, default: str) -> str:
    """How an input is named in messages and reports: its file name, or ``default`` for an in-memory table."""
    return Path(source).name if isinstance(source, (str, os.PathLike)) else default
