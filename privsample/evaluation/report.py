"""A self-contained HTML evaluation report: workload errors, what a schema loses, worst marginals, privacy ledger.

Plots are PNGs (matplotlib's Agg renderer through ``matplotlib.figure.Figure``, no pyplot and no
global backend change) embedded as base64, so the page has no external resources. The page is built
in memory and written atomically (``privsample.io.atomic_write_text``): a failure leaves no file.

Like ``privsample.evaluation.workload`` this reads the real data without privacy: the report holds exact
statistics of the real table (record count, marginals, errors) next to the release's ledger, so it is NOT
differentially private and must not be published. Every page opens with a banner saying so
(``NON_PRIVATE_NOTICE``); keep reports apart from the release (``privsample demo`` writes its report to
``not-for-release/``).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from privsample.errors import InputError
from privsample.evaluation.workload import all_cliques, summary, workload_errors
from privsample.io import atomic_write_text
from privsample.marginals import Clique, MarginalEngine

__all__ = ["write_report", "build_report_html", "privacy_section", "discovery_section", "NON_PRIVATE_NOTICE"]

NON_PRIVATE_NOTICE = "Contains non-private statistics of the real data \u2014 do not release"

N_WORST_1WAY = 6
N_WORST_2WAY = 3
MAX_TICKS = 40  # tick labels are drawn only for axes with at most this many cells
MAX_PAIR_COLUMNS = 150  # the per-pair error heatmap is skipped above this many columns

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;padding:0 1em}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em} th,td{border:1px solid #ccc;padding:.25em .6em;
text-align:left;vertical-align:top} th{background:#f3f3f3} td.num{text-align:right;font-variant-numeric:tabular-nums}
.banner{background:#c00;color:#fff;font-size:2em;font-weight:bold;text-align:center;padding:.6em;margin:1em 0;
border-radius:6px} .banner small{display:block;font-size:.45em;font-weight:normal}
.banner.real{background:#222;border:6px solid #c00;font-size:1.6em}
.note{color:#555;font-size:.9em} img{max-width:100%;height:auto;border:1px solid #eee}
"""


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------
def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(x: Any) -> str:
    if x is None:
        return "&ndash;"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if not math.isfinite(x):
            return _esc(x)
        return f"{x:.4g}" if (x == 0 or 1e-3 <= abs(x) < 1e6) else f"{x:.3e}"
    if isinstance(x, (list, tuple, dict)):
        return _esc(json.dumps(x, default=str))
    return _esc(x)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    numeric = numeric or [False] * len(header)
    out = ["<table><thead><tr>", *(f"<th>{_esc(h)}</th>" for h in header), "</tr></thead><tbody>"]
    for r in rows:
        out.append(
            "<tr>"
            + "".join(
                f"<td class='num'>{_fmt(v)}</td>" if isnum else f"<td>{_fmt(v)}</td>" for v, isnum in zip(r, numeric)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=85)
    return "<img alt='plot' src='data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii") + "'>"


def _figure(w: float, h: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h))


def _labels(schema: Any, attr: str, size: int) -> list[str]:
    if schema is not None and attr in schema:
        labs = [str(x) for x in schema[attr].labels()]
        if len(labs) == size:
            return [lab if len(lab) <= 18 else lab[:17] + "\u2026" for lab in labs]
    return [str(i) for i in range(size)]


def _norm(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    t = a.sum()
    return a / t if t > 0 else a


# ---------------------------------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------------------------------
def _plot_1way(real_engine, synth_engine, worst: list[tuple[Clique, float]], schema) -> str:
    n = len(worst)
    ncol = min(3, n)
    nrow = math.ceil(n / ncol)
    fig = _figure(5.2 * ncol, 3.6 * nrow)
    cls = [c for c, _ in worst]
    mr, ms = real_engine.marginals(cls), synth_engine.marginals(cls)
    for i, (cl, err) in enumerate(worst):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        r, s = _norm(mr[cl]), _norm(ms[cl])
        x = np.arange(r.size)
        ax.bar(x - 0.2, r, width=0.4, label="real", color="#1f77b4")
        ax.bar(x + 0.2, s, width=0.4, label="synthetic", color="#ff7f0e")
        ax.set_title(f"{cl[0]}  (L1 error {err:.3f})", fontsize=10)
        ax.set_ylabel("share of records", fontsize=8)
        if r.size <= MAX_TICKS:
            ax.set_xticks(x)
            ax.set_xticklabels(_labels(schema, cl[0], r.size), rotation=60, ha="right", fontsize=7)
        else:
            ax.set_xlabel(f"{r.size} codes", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        if i == 0:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _plot_2way(real_engine, synth_engine, worst: list[tuple[Clique, float]], schema) -> str:
    from matplotlib.colors import PowerNorm

    n = len(worst)
    fig = _figure(11, 4.2 * n)
    cls = [c for c, _ in worst]
    mr, ms = real_engine.marginals(cls), synth_engine.marginals(cls)
    for i, (cl, err) in enumerate(worst):
        r, s = _norm(mr[cl]), _norm(ms[cl])
        vmax = max(float(r.max()), float(s.max()), 1e-12)
        norm = PowerNorm(gamma=0.5, vmin=0.0, vmax=vmax)  # square-root scale: skewed marginals stay visible
        for j, (mat, name) in enumerate(((r, "real"), (s, "synthetic"))):
            ax = fig.add_subplot(n, 2, 2 * i + j + 1)
            im = ax.imshow(mat, aspect="auto", cmap="viridis", norm=norm, interpolation="nearest")
            ax.set_title(f"{name}: {cl[0]} \u00d7 {cl[1]}  (L1 error {err:.3f}; sqrt colour scale)", fontsize=9)
            ax.set_ylabel(cl[0], fontsize=8)
            ax.set_xlabel(cl[1], fontsize=8)
            if mat.shape[0] <= MAX_TICKS:
                ax.set_yticks(np.arange(mat.shape[0]))
                ax.set_yticklabels(_labels(schema, cl[0], mat.shape[0]), fontsize=7)
            if mat.shape[1] <= MAX_TICKS:
                ax.set_xticks(np.arange(mat.shape[1]))
                ax.set_xticklabels(_labels(schema, cl[1], mat.shape[1]), rotation=60, ha="right", fontsize=7)
            fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    return _png(fig)


def _plot_pairs(attrs: list[str], e1: Mapping[Clique, float], e2: Mapping[Clique, float]) -> str:
    m = len(attrs)
    pos = {a: i for i, a in enumerate(attrs)}
    mat = np.full((m, m), np.nan)
    for (a,), v in e1.items():
        mat[pos[a], pos[a]] = v
    for (a, b), v in e2.items():
        mat[pos[a], pos[b]] = mat[pos[b], pos[a]] = v
    side = min(4 + 0.45 * m, 16)
    fig = _figure(side + 1.5, side)
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(
        mat, cmap="Reds", vmin=0.0, vmax=max(float(np.nanmax(mat)) if m else 0.0, 1e-9), interpolation="nearest"
    )
    fs = 8 if m <= 20 else 6
    if m <= 60:
        ax.set_xticks(np.arange(m))
        ax.set_xticklabels(attrs, rotation=60, ha="right", fontsize=fs)
        ax.set_yticks(np.arange(m))
        ax.set_yticklabels(attrs, fontsize=fs)
    if m <= 20:
        for i in range(m):
            for j in range(m):
                if np.isfinite(mat[i, j]):
                    ax.text(
                        j,
                        i,
                        f"{mat[i, j]:.2f}",
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="white" if mat[i, j] > 0.6 * np.nanmax(mat) else "black",
                    )
    ax.set_title("L1 error of each 2-way marginal (diagonal: 1-way)", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    return _png(fig)


# ---------------------------------------------------------------------------------------------------
# sections
# ---------------------------------------------------------------------------------------------------
def _ledger_section(ledger: Mapping[str, Any]) -> str:
    s = dict(ledger.get("summary") or {})
    entries = list(ledger.get("entries") or [])
    parts = ["<h2>Privacy ledger</h2>"]
    target = s.get("target_epsilon_delta")
    rows = [
        ("neighbouring datasets", s.get("neighbouring")),
        ("budget rho (zCDP)", s.get("rho_total")),
        ("rho spent", s.get("rho_spent")),
        ("target (epsilon, delta)", f"({target[0]:g}, {target[1]:g})" if target else None),
        ("epsilon-equivalent of the spend" + (f" at delta={target[1]:g}" if target else ""), s.get("epsilon_spent")),
        ("delta slack / spent (thresholds)", f"{s.get('delta_slack', 0):g} / {s.get('delta_spent', 0):g}"),
        ("noise", "secure (OpenDP)" if s.get("private", True) else "SEEDED: NOT PRIVATE"),
    ]
    parts.append(_table(["", "value"], [r for r in rows if r[1] is not None]))
    if entries:
        total = s.get("rho_spent") or sum(float(e.get("rho", 0.0)) for e in entries) or 1.0
        rows2 = [
            (
                i + 1,
                e.get("label", ""),
                e.get("mechanism", ""),
                e.get("measured", ""),
                float(e.get("rho", 0.0)),
                100.0 * float(e.get("rho", 0.0)) / total,
                e.get("noise_scale"),
                float(e.get("delta", 0.0)),
                bool(e.get("private", True)),
            )
            for i, e in enumerate(entries)
        ]
        parts.append(
            _table(
                ["#", "label", "mechanism", "measured", "rho", "% of rho", "noise scale", "delta", "private"],
                rows2,
                [True, False, False, False, True, True, True, True, False],
            )
        )
    else:
        parts.append("<p class='note'>The ledger has no entries.</p>")
    return "".join(parts)


def _guarantee_section(g: Mapping[str, Any]) -> str:
    """The release's method and (ε, δ) next to the errors (from ``privsample.evaluation.guarantee.load_guarantee``)."""
    rows = [
        ("method", g.get("method")),
        ("from", g.get("source")),
        ("target epsilon", g.get("epsilon")),
        ("target delta", g.get("delta")),
        ("epsilon spent (at the target delta)", g.get("epsilon_spent")),
        ("rho spent / budget (zCDP)", f"{g.get('rho_spent', 0):.6g} / {g.get('rho_total', 0):.6g}"),
        ("neighbouring datasets", g.get("neighbouring")),
        ("differentially private", "yes" if g.get("private") else "NO: seeded or unsafe settings"),
    ]
    return (
        "<h2>Privacy guarantee of the release</h2><p class='note'>The errors above are those of a release "
        "with this guarantee; its full ledger is at the end of the page.</p>"
        + _table(["", "value"], [r for r in rows if r[1] is not None])
    )


def discovery_section(losses: Sequence[Mapping[str, Any]]) -> str:
    """ "What private discovery lost": one row per loss of the model's privately discovered schema (the
    guarantee's ``discovery_losses``; post-processing of the released schema, no statistic of the real table)."""
    head = (
        "<h2>What private discovery lost</h2><p class='note'>The model's schema was discovered privately, from "
        "noisy counts: a column kept with no value, or whose catch-all holds or bounds clip more than 5% of its "
        "values (a noisy estimate), is listed here with what to do about it.</p>"
    )
    if not losses:
        return head + "<p>Nothing: every column kept its values, up to 5% in the catch-all or clipped.</p>"
    return head + _table(
        ["column", "what was lost", "what to do"], [(x["column"], x["what"], x["advice"]) for x in losses]
    )


def privacy_section(check: Any, heading: str = "h2") -> str:
    """The empirical privacy check (a ``privsample.evaluation.privacy_check.PrivacyCheck``) beside its baseline."""
    from privsample.evaluation.privacy_check import BASELINE, RELEASED

    rows = []
    for name, r in ((RELEASED, check.synthetic), (BASELINE, check.baseline)):
        d = r.as_dict()
        rows.append(
            (
                name,
                d["dcr_train_median"],
                d["dcr_train_p5"],
                d["dcr_holdout_median"],
                d["dcr_holdout_p5"],
                f"{d['closer_to_train']:.3f}",
                f"{r.auc:.3f} ({r.auc_low:.3f}\u2013{r.auc_high:.3f})",
            )
        )
    title = "Empirical privacy check (evidence, not a guarantee; NOT private)"
    head = f"<h2>{_esc(title)}</h2>" if heading == "h2" else f"<p><strong>{_esc(title)}</strong></p>"
    return (
        head + "<p class='note'>Distance to closest record (DCR; Gower-like, 0\u20131: numeric columns scaled by their "
        "range, categorical columns 0/1) from each released record to the training table (REAL) and to the "
        "holdout (records the synthesizer did not see); the share of released records closer to REAL than "
        "to the holdout (ties count one half); and the AUC of a membership-inference attack that scores each "
        "REAL and holdout record by its closeness to the release (95% CI, DeLong). About 0.5 means no "
        "measurable memorisation; a differentially private release should sit near 0.5. The baseline "
        "releases the training records themselves: it shows what the attack finds when everything leaks. "
        f"{_esc(check.sizes)}. This is evidence, not a guarantee (the guarantee is the release's \u03b5, "
        "\u03b4), and, like the rest of this page, it reads the real data exactly: do not publish it.</p>"
        + _table(
            [
                "released",
                "DCR to REAL, median",
                "DCR to REAL, 5%",
                "DCR to holdout, median",
                "DCR to holdout, 5%",
                "closer to REAL",
                "attack AUC (95% CI)",
            ],
            rows,
            [False, True, True, True, True, True, True],
        )
    )


def _loss_section(evaluation: Any, schema_name: str | None) -> str:
    """Per-column loss (share of real records a schema merges or clips; share of synthetic records outside the
    real values) and the error on the schema's own domain, from a ``privsample.evaluation.tables.TableScores``."""
    name = schema_name or "the schema"
    parts = []
    if evaluation.schema_summary is not None:
        parts.append(
            f"<h2>Workload error on the domain of {_esc(name)}</h2><p class='note'>Both tables encoded "
            f"through {_esc(name)} (its catch-alls, bounds and bins), as the synthesizer saw the real "
            "table. Real values that the schema merges or clips are already merged or clipped there, so this "
            "figure does not count that loss; the headline above is on the real table's own "
            "values.</p>"
        )
        rows = [
            (
                f"{k}-way",
                v["mean"],
                v["max"],
                ", ".join(v["worst"]),
                v["n_cliques"] if not v["sampled"] else f"{v['n_cliques']} of {v['n_total']} (uniform sample)",
            )
            for k, v in evaluation.schema_summary.items()
        ]
        parts.append(
            _table(["marginals", "mean", "max", "worst clique", "cliques"], rows, [False, True, True, False, True])
        )
    loss = {c.column: c for c in evaluation.loss}
    has_schema = evaluation.schema_summary is not None
    header = (
        ["column"]
        + ([f"real records merged by {name}", "real records clipped", "real records lost"] if has_schema else [])
        + ["synthetic records outside the real values"]
    )
    rows = []
    for col in evaluation.domain.names:
        cl = loss.get(col)
        row: list[Any] = [col]
        if has_schema:
            row += [f"{cl.merged:.2%}", f"{cl.clipped:.2%}", f"{cl.lost:.2%}"] if cl else ["", "", ""]
        rows.append(row + [f"{evaluation.outside[col]:.2%}"])
    parts.append(
        "<h2>What is lost, per column</h2><p class='note'>"
        + (
            f"Merged: real records whose value {_esc(name)} does not hold (they go to its catch-all or "
            "null code); clipped: real numbers outside its bounds. "
            if has_schema
            else ""
        )
        + "Outside: synthetic records whose value the real table does not hold (a catch-all label, a "
        "non-number in a numeric column, a number outside the real range); they count as error in "
        "the headline.</p>"
    )
    parts.append(_table(header, rows, [False] + [True] * (len(header) - 1)))
    return "".join(parts)


def build_report_html(
    real_engine: MarginalEngine,
    synth_engine: MarginalEngine,
    schema: Any = None,
    *,
    title: str,
    ledger: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    ks: Sequence[int] = (1, 2, 3),
    max_cliques: int | None = 1000,
    rng: np.random.Generator | int | None = 0,
    evaluation: Any = None,
    schema_name: str | None = None,
    guarantee: Mapping[str, Any] | None = None,
    privacy: Any = None,
) -> str:
    """The report page as a string (see ``write_report``)."""
    attrs = list(real_engine.domain.attributes)
    if not attrs:
        raise InputError("cannot report on a table without columns")
    e1 = workload_errors(real_engine, synth_engine, all_cliques(attrs, 1))
    pairs = all_cliques(attrs, 2) if len(attrs) <= MAX_PAIR_COLUMNS else []
    e2 = workload_errors(real_engine, synth_engine, pairs) if pairs else {}
    by_k = _errors_by_order(real_engine, synth_engine, e1, e2, ks, max_cliques, rng)
    p = _page_head(title, ledger, len(attrs), real_engine.total(), synth_engine.total(), extra)
    p.append(_workload_section(by_k, evaluation is not None))
    if guarantee is not None:
        p.append(_guarantee_section(guarantee))
        if guarantee.get("discovery_losses") is not None:
            p.append(discovery_section(guarantee["discovery_losses"]))
    if privacy is not None:
        p.append(privacy_section(privacy))
    if evaluation is not None:
        p.append(_loss_section(evaluation, schema_name))
    worst1 = sorted(e1.items(), key=lambda kv: -kv[1])[:N_WORST_1WAY]
    p.append(f"<h2>Worst 1-way marginals</h2>{_plot_1way(real_engine, synth_engine, worst1, schema)}")
    if e2:
        worst2 = sorted(e2.items(), key=lambda kv: -kv[1])[:N_WORST_2WAY]
        p.append(f"<h2>Worst 2-way marginals</h2>{_plot_2way(real_engine, synth_engine, worst2, schema)}")
        p.append(f"<h2>Error per column pair</h2>{_plot_pairs(attrs, e1, e2)}")
    if ledger is not None:
        p.append(_ledger_section(ledger))
    else:
        p.append(
            "<h2>Privacy ledger</h2><p class='note'>No ledger was given: pass the model the synthetic "
            "table was sampled from (<code>evaluate --model model.zip</code>) or its ledger "
            "(<code>--ledger</code>) to show the release's guarantee here.</p>"
        )
    p.append("</body></html>\n")
    return "".join(p)


def _errors_by_order(real_engine, synth_engine, e1, e2, ks, max_cliques, rng) -> dict[int, tuple[dict, int]]:
    """{k: (errors per clique, number of k-way cliques)} for each k in ``ks`` (1-way and 2-way from ``e1`` and
    ``e2``; k >= 3 on at most ``max_cliques`` cliques sampled with ``rng``)."""
    n_attrs = len(real_engine.domain.attributes)
    by_k: dict[int, tuple[dict[Clique, float], int]] = {}
    for k in ks:
        if k == 1:
            by_k[1] = (e1, len(e1))
        elif k == 2 and e2:
            by_k[2] = (e2, len(e2))
        elif 1 <= k <= n_attrs:
            d = summary(real_engine, synth_engine, ks=[k], max_cliques=max_cliques, rng=rng)[k]
            by_k[k] = (d["errors"], d["n_total"])
    return by_k


def _page_head(title: str, ledger, n_columns: int, n_real, n_synth, extra) -> list[str]:
    """The page up to the workload error: the not-private notice, the title, the seeded-noise banner, the
    sizes and the run details."""
    p: list[str] = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<div class='banner real' role='alert'>{_esc(NON_PRIVATE_NOTICE)}<small>Every table and plot "
        "below is computed exactly from the real table, without noise, beside the release's privacy "
        "ledger. Keep this report with the data owner; publish only the synthetic data, the model and "
        "the schema.</small></div>",
        f"<h1>{_esc(title)}</h1>",
    ]
    not_private = ledger is not None and (ledger.get("summary") or {}).get("private") is False
    if not_private:
        p.append(
            "<div class='banner'>NOT PRIVATE<small>This run used seeded (non-secure) noise: the synthetic "
            "data carries no differential privacy guarantee. For reproducible experiments only.</small></div>"
        )
    p.append(
        f"<p class='note'>{n_columns} columns; {n_real} real and {n_synth} synthetic records. "
        "This report compares against the real data directly and is itself not differentially private."
        "</p>"
    )
    if extra:
        p.append("<h2>Run details</h2>")
        p.append(_table(["", "value"], [(k, v) for k, v in extra.items()]))
    return p


def _workload_section(by_k: dict[int, tuple[dict, int]], on_real_values: bool) -> str:
    """The workload error table: mean, median and max per order, the worst clique, how many cliques."""
    rows = []
    for k, (errs, n_total) in by_k.items():
        vals = np.fromiter(errs.values(), dtype=np.float64, count=len(errs))
        worst = list(errs)[int(np.argmax(vals))]
        rows.append(
            (
                f"{k}-way",
                float(vals.mean()),
                float(np.median(vals)),
                float(vals.max()),
                ", ".join(worst),
                len(errs) if len(errs) == n_total else f"{len(errs)} of {n_total} (uniform sample)",
            )
        )
    return (
        "<h2>Workload error</h2><p class='note'>L1 distance between the normalised real and synthetic "
        "marginals (0 = identical, 2 = disjoint supports)"
        + (
            ", on the real table's own values (its categories, point masses and bins over its range; "
            "synthetic values the real table does not hold have a code of their own)"
            if on_real_values
            else ""
        )
        + ".</p>"
        + _table(
            ["marginals", "mean", "median", "max", "worst clique", "cliques"],
            rows,
            [False, True, True, True, False, True],
        )
    )


def write_report(
    path: str | Path,
    real_engine: MarginalEngine,
    synth_engine: MarginalEngine,
    schema: Any = None,
    *,
    title: str,
    ledger: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    ks: Sequence[int] = (1, 2, 3),
    max_cliques: int | None = 1000,
    rng: np.random.Generator | int | None = 0,
    evaluation: Any = None,
    schema_name: str | None = None,
    guarantee: Mapping[str, Any] | None = None,
    privacy: Any = None,
) -> Path:
    """Write a self-contained HTML report comparing ``synth_engine`` with ``real_engine``.

    Sections: a banner ``NON_PRIVATE_NOTICE`` at the top (always: the page holds exact statistics of the
    real data); a red "NOT PRIVATE" banner when ``ledger["summary"]["private"]`` is False; run
    details (``extra``, a mapping); the mean/median/max L1 workload error per k in ``ks`` (k >= 3
    on at most ``max_cliques`` cliques sampled with ``rng``); bar charts (real vs synthetic) of the
    6 worst 1-way marginals; side-by-side heatmaps of the 3 worst 2-way marginals; a heatmap of the
    error of every column pair; the privacy ledger (``Accountant.to_dict()`` shape: summary with the
    epsilon-equivalent, and one row per entry). Labels come from ``schema`` (``Column.labels()``)
    when it is given and matches the domain. With ``evaluation`` (``privsample.evaluation.tables.TableScores``,
    whose real-domain engines are ``real_engine``/``synth_engine``), also the error on the domain of the
    schema named ``schema_name`` and, per column, the share of real records that schema merges or clips and
    the share of synthetic records outside the real values. With ``guarantee``
    (``privsample.evaluation.guarantee.load_guarantee``), the release's method, target (epsilon, delta) and
    spend right after the workload error (and, when the model's schema was discovered privately, what discovery
    lost: ``discovery_section``); with ``privacy`` (``privsample.evaluation.privacy_check.PrivacyCheck``),
    the empirical privacy check beside its baseline. The file is written atomically; returns its path.
    """
    page = build_report_html(
        real_engine,
        synth_engine,
        schema,
        title=title,
        ledger=ledger,
        extra=extra,
        ks=ks,
        max_cliques=max_cliques,
        rng=rng,
        evaluation=evaluation,
        schema_name=schema_name,
        guarantee=guarantee,
        privacy=privacy,
    )
    path = Path(path)
    atomic_write_text(path, page)
    return path
