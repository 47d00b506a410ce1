"""``privsample evaluate`` scores a synthetic table against the real one; ``privsample demo`` runs the pipeline
on the bundled UCI Adult table and evaluates it. Both are NOT private: the scores are exact statistics of the real
table, for the data owner."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from privsample.cli.common import (
    RichProgress,
    check_paths,
    err,
    no_loss_warnings,
    out,
    print_discovery,
    print_ledger,
    warn_seeded,
    warn_unused_columns,
)
from privsample.cli.options import ExperimentSeed
from privsample.errors import PrivsampleError

EvaluateSchema = Annotated[
    Optional[Path],
    typer.Option(
        "--schema",
        "-s",
        help="The schema the synthesizer used (e.g. "
        "the one saved with the model): also score on its domain and show, per "
        "column, the share of real records it merges or clips.",
    ),
]
Workload = Annotated[int, typer.Option("--workload", "-w", min=1, max=5, help="Largest marginal order to score.")]
MaxCliques = Annotated[Optional[int], typer.Option("--max-cliques", help="Sample at most this many cliques per order.")]
RealDelimiter = Annotated[
    Optional[str],
    typer.Option(
        "--delimiter",
        help="The REAL table's CSV delimiter (default: read off its header line; the synthetic table's is always "
        "detected).",
    ),
]
RealEncoding = Annotated[
    Optional[str],
    typer.Option(
        "--encoding",
        help="The REAL table's CSV encoding when it has no byte-order mark "
        "(default UTF-8; the synthetic table's: its mark, else UTF-8).",
    ),
]
Model = Annotated[
    Optional[Path],
    typer.Option(
        "--model",
        help="The model SYNTHETIC was sampled from (saved by "
        "'synth --save-model'): show its method, ε, δ and privacy ledger beside "
        "the errors.",
    ),
]
LedgerFile = Annotated[
    Optional[Path],
    typer.Option(
        "--ledger",
        help="A privacy ledger (JSON: a model's model.json, "
        "or a ledger with 'summary' and 'entries') to show beside the errors.",
    ),
]
Subgroup = Annotated[
    Optional[str],
    typer.Option(
        "--where",
        help="Score a subgroup: both tables filtered to the records that satisfy this condition (the syntax "
        "of 'sample --where', e.g. \"sex=Female; age=30..40\").",
    ),
]
Holdout = Annotated[
    Optional[Path],
    typer.Option(
        "--holdout",
        help="Records of the same population NOT used for training (REAL's columns): add an empirical privacy "
        "check (distance to closest record, membership-inference AUC, beside the baseline of releasing REAL). "
        "Evidence, not a guarantee.",
    ),
]
OutputDir = Annotated[Path, typer.Option("-o", "--output-dir", help="Where to write the results.")]


def evaluate(
    real: Annotated[Path, typer.Argument(help="The real table.")],
    synthetic: Annotated[Path, typer.Argument(help="The synthetic table.")],
    schema: EvaluateSchema = None,
    workload: Workload = 3,
    report: Annotated[Optional[Path], typer.Option("--report", "-r", help="Write an HTML report here.")] = None,
    max_cliques: MaxCliques = None,
    delimiter: RealDelimiter = None,
    encoding: RealEncoding = None,
    model: Model = None,
    ledger: LedgerFile = None,
    where: Subgroup = None,
    holdout: Holdout = None,
) -> None:
    """Workload error (mean L1 between normalised marginals) of SYNTHETIC against REAL.

    Scored on the real table's own values: synthetic values it lacks ("(other)", non-numbers) count as error.
    With --model or --ledger, the release's guarantee (method, ε, δ, ledger) is shown beside the errors.

    NOT PRIVATE: the scores and the report are exact statistics of the real table; do not release them."""
    if model is not None and ledger is not None:
        raise PrivsampleError("--model and --ledger both give the ledger: pass one of them")
    check_paths(
        {
            "REAL": real,
            "SYNTHETIC": synthetic,
            "--schema": schema,
            "--model": model,
            "--ledger": ledger,
            "--holdout": holdout,
        },
        {"-r/--report": report},
    )
    from privsample.evaluation.guarantee import load_guarantee
    from privsample.evaluation.privacy_check import check_not_real

    if holdout is not None:
        check_not_real(real, holdout, str(holdout))  # the real file itself: one line, before anything is printed
    load_guarantee(model, ledger)  # a bad model or ledger: one line, before anything else is printed
    if where is not None:
        from privsample.data.condition import Where

        Where.parse(where)  # bad syntax: one line, before anything is printed
    _evaluate(
        real,
        synthetic,
        schema,
        workload,
        report,
        max_cliques,
        model=model,
        ledger=ledger,
        delimiter=delimiter,
        encoding=encoding,
        where=where,
        holdout=holdout,
    )


def _evaluate(
    real: Path,
    synthetic: Path,
    schema_path,
    workload: int,
    report,
    max_cliques,
    *,
    model=None,
    ledger=None,
    title: str = "privsample evaluation",
    delimiter: str | None = None,
    encoding: str | None = None,
    where: str | None = None,
    holdout: Path | None = None,
) -> dict:
    """Print (and with ``report`` write) the workload error of SYNTHETIC against REAL; returns the headline
    summary ({k: {...}}, ``privsample.evaluation.workload.summary``) on the real table's own values.

    The scores are ``privsample.evaluate(...)``'s (the Python API's, one implementation): on a domain read off
    the real table, so that no value of the synthetic table makes it fail and no loss of the schema is hidden;
    with ``schema_path``, also the error on that schema's domain and the share of real records it merges or
    clips, per column; with ``model`` or ``ledger``, the release's guarantee and ledger."""
    import privsample.evaluation
    from privsample.evaluation.guarantee import guarantee_text
    from privsample.evaluation.report import NON_PRIVATE_NOTICE

    err.print(
        f"[bold]{NON_PRIVATE_NOTICE}[/bold] (evaluate compares with the real table exactly)",
        highlight=False,
        soft_wrap=True,
    )
    ev = privsample.evaluation.evaluate(
        real,
        synthetic,
        schema_path,
        model=model,
        ledger=ledger,
        workload=workload,
        max_cliques=max_cliques,
        delimiter=delimiter,
        encoding=encoding,
        where=where,
        holdout=holdout,
    )
    if where is not None:
        out.print(f"subgroup: {where} ({ev.n_real:,} real and {ev.n_synthetic:,} synthetic records)", markup=False)
    if ev.left_out:
        warn_unused_columns(err, ev.left_out, ev.scores.schema, real, schema_path)
    res, schema_res = ev.summary, ev.schema_summary
    t = Table(
        title=f"Workload error: {real.name} vs {synthetic.name} (mean L1 of normalised marginals, 0–2, "
        "on the real table's own values)"
    )
    t.add_column("order")
    t.add_column("cliques", justify="right")
    t.add_column("mean L1", justify="right")
    t.add_column("max L1", justify="right")
    if schema_res is not None:
        t.add_column(f"mean L1 on {Path(schema_path).name}'s domain", justify="right")
    for k, v in res.items():
        row = [f"{k}-way", str(v.get("n_cliques", "")), f"{v['mean']:.4f}", f"{v['max']:.4f}"]
        if schema_res is not None:
            row.append(f"{schema_res[k]['mean']:.4f}" if k in schema_res else "")
        t.add_row(*row)
    out.print(t)
    if ev.guarantee is not None:
        out.print(guarantee_text(ev.guarantee), highlight=False)
        print_ledger(ev.ledger, out)
    _print_losses(ev.scores, schema_path)
    if ev.privacy is not None:
        _print_privacy_check(ev.privacy)
    if report is not None:
        ev.to_html(report, title=title)
        err.print(f"wrote report {report}")
    return res


def _print_privacy_check(check) -> None:
    """The empirical privacy check beside its baseline (``privsample.evaluation.privacy_check``; NOT private)."""
    from privsample.evaluation.privacy_check import NOTICE

    t = Table(title="Empirical privacy check (evidence, not a guarantee; NOT private)")
    for h in ("released", "DCR to REAL: median, 5%", "DCR to HOLDOUT: median, 5%", "closer to REAL", "attack AUC"):
        t.add_column(h, justify="left" if h == "released" else "right")
    for name, r in (("synthetic", check.synthetic), ("baseline: REAL itself", check.baseline)):
        d = r.as_dict()
        t.add_row(
            name,
            f"{d['dcr_train_median']:.4f}, {d['dcr_train_p5']:.4f}",
            f"{d['dcr_holdout_median']:.4f}, {d['dcr_holdout_p5']:.4f}",
            f"{d['closer_to_train']:.3f}",
            f"{r.auc:.3f} ({r.auc_low:.3f}–{r.auc_high:.3f})",
        )
    out.print(t)
    out.print(
        f"{check.sizes}. Closer to REAL: share of released records nearer REAL than HOLDOUT (ties one half); attack "
        "AUC: telling REAL records from HOLDOUT ones by their distance to the release (95% CI, DeLong). The "
        f"baseline releases REAL itself. {NOTICE[0].upper()}{NOTICE[1:]}.",
        highlight=False,
    )


def _print_losses(ev, schema_path) -> None:
    """Per column: share of real records the schema merges or clips; share of synthetic records outside the
    real values (exact, non-private evaluation figures)."""
    loss = {c.column: c for c in ev.loss}
    rows = [(name, loss.get(name), ev.outside[name]) for name in ev.domain.names]
    rows = [r for r in rows if (r[1] is not None and r[1].lost > 0) or r[2] > 0]
    if not rows:
        out.print(
            "no column loses real values"
            + (f" to {Path(schema_path).name}" if schema_path else "")
            + " and no synthetic value lies outside the real values"
        )
        return
    title = "What is lost, per column (NOT private)"
    t = Table(title=title)
    t.add_column("column")
    if schema_path:
        t.add_column(f"real records merged by {Path(schema_path).name}", justify="right")
        t.add_column("real records clipped", justify="right")
    t.add_column("synthetic records outside the real values", justify="right")
    for name, cl, outside in rows:
        row = [name]
        if schema_path:
            row += [f"{cl.merged:.1%}" if cl else "", f"{cl.clipped:.1%}" if cl else ""]
        t.add_row(*row, f"{outside:.1%}")
    out.print(t)


def demo(
    output_dir: OutputDir = Path("demo-output"),
    epsilon: Annotated[float, typer.Option("--epsilon", "-e")] = 1.0,
    delta: Annotated[float, typer.Option("--delta", "-d")] = 1e-9,
    seed: ExperimentSeed = None,
    method: Annotated[str, typer.Option("--method", "-m", help="Synthesizer: ppsyn | aim | mst.")] = "ppsyn",
) -> None:
    """Bundled UCI Adult: private schema discovery, PPSyn-DP (the default method) at ε=1, δ=1e-9,
    synthetic CSV, model and schema in OUTPUT_DIR/release/, ledger; the HTML report (exact, non-private
    statistics of the real data) apart in OUTPUT_DIR/not-for-release/."""
    from privsample.datasets import demo_path
    from privsample.api.synthesizer import synthesize
    from privsample.io import write_table

    warn_seeded(seed)
    src = demo_path()
    err.print(
        f"[bold]privsample demo[/bold]: {src.name} (UCI Adult, Becker & Kohavi 1996, CC BY 4.0), "
        f"{method} at ε={epsilon:g}, δ={delta:g}, schema discovered privately "
        "(share planned from a noisy row count)"
    )
    if method not in ("ppsyn", "aim", "mst"):
        raise PrivsampleError(f"demo --method must be ppsyn, aim or mst, not {method!r}")
    from privsample.data.encoding import RELEASE_RULE

    release, private_dir = output_dir / "release", output_dir / "not-for-release"
    synth_csv, sch_path, report = release / "adult_synthetic.csv", release / "schema.yaml", private_dir / "report.html"
    model_zip = release / "model.zip"
    check_paths(
        {"the bundled data": src},
        {f"OUTPUT_DIR/{p.parent.name}/{p.name}": p for p in (synth_csv, model_zip, sch_path, report)},
    )
    err.print(f"note: {RELEASE_RULE}", highlight=False)
    with RichProgress(err) as progress, no_loss_warnings():
        res = synthesize(src, epsilon=epsilon, delta=delta, method=method, seed=seed, progress=progress)
    print_discovery(res.schema, err, quiet=True)  # the losses of the discovered schema, as warnings
    write_table(res.table, synth_csv)
    res.model.save(model_zip)
    res.schema.save(sch_path)
    _evaluate(
        src,
        synth_csv,
        sch_path,
        3,
        report,
        None,
        model=model_zip,
        title=f"privsample demo: {method} on UCI Adult at ε={epsilon:g}, δ={delta:g}",
    )
    what = "what may be published" if seed is None else "seeded noise: NOT private, not for publication"
    err.print(
        f"demo finished. The release ({what}: synthetic CSV, model, schema) is in {release}/; the "
        f"evaluation report {report} contains non-private statistics of the real data: do not release it.",
        highlight=False,
    )
