"""``privsample plan``: what a run of ``privsample synth`` would do, before the first spend.

Reads the header line (never a record) and the file's size; see :mod:`privsample.api.plan`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from privsample.cli.common import delimiter_option, encoding_option, out


def _num(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.2g}"


def _sigma(r, key: str) -> str:
    v = r.noise.get(key)
    if v is None:
        return ""
    share = r.noise["share_of_rows"].get(key, 0.0)
    return f"{_num(v)} ({share:.2%})"


def plan(
    data: Path = typer.Argument(..., help="Table to plan for (CSV, CSV.gz or Parquet): only its header and size."),
    epsilon: str = typer.Option(..., "--epsilon", "-e", help="Privacy budget ε, or a list to compare: 0.3,1,3."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy parameter δ in (0, 1)."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Reviewed schema (YAML/JSON); else discovery."),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="mst | aim | ppsyn (default: all three)."),
    rows: Optional[int] = typer.Option(None, "--rows", help="Number of records, if known (else from the size)."),
    max_memory_mb: float = typer.Option(8192.0, "--max-memory-mb", help="The memory limit the run would have."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """Forecast a synth run: budget split, discovery threshold, noise, model size, time and memory.

    Reads no record: the header line, the file size, and the schema if given. Nothing is spent."""
    from privsample.api.plan import plan as make_plan

    p = make_plan(
        data,
        epsilon=epsilon,
        delta=delta,
        schema=schema,
        method=method,
        rows=rows,
        max_memory_mb=max_memory_mb,
        delimiter=delimiter,
        encoding=encoding,
    )
    if as_json:
        print(p.to_json())
        return
    out.print(
        f"{p.path}: {len(p.columns)} columns, {p.file_bytes:,} bytes; "
        + (
            f"about {p.rows_estimate:,} rows (an estimate from the file size: --rows N if the count is public)"
            if p.rows_from != "given"
            else f"{p.rows_estimate:,} rows (given)"
        )
        + ("; reviewed schema" if p.schema else "; domain discovered privately (part of the budget)")
        + f"; δ = {p.delta:g}. No record was read; nothing was spent."
    )
    seen = set()
    for r in p.rows:  # the budget split, once per epsilon
        if r.epsilon not in seen:
            seen.add(r.epsilon)
            disc = f"discovery {r.rho_discovery:.3g} ({r.rho_discovery / r.rho_total:.0%}), " if r.rho_discovery else ""
            out.print(f"ε={r.epsilon:g}: ρ={r.rho_total:.4g} (zCDP): {disc}synthesizer {r.rho_synth:.4g}")
    t = Table(title="σ: noise sd of a measured cell (share of the rows)")
    for col in ("ε", "method", "min cat.", "σ 1-way", "σ 2-way", "model MB", "time", "peak MB"):
        t.add_column(col, justify="left" if col == "method" else "right")
    for r in p.rows:
        t.add_row(
            f"{r.epsilon:g}",
            r.method,
            f"~{r.min_category_records:,}" if r.min_category_records else "",
            _sigma(r, "sigma_1way"),
            _sigma(r, "sigma_2way") + (f" ≥{_num(r.noise['sigma_min'])}" if "sigma_min" in r.noise else ""),
            f"{r.model_mb:,.2f}" if r.model_mb is not None else "",
            _time(r.seconds),
            f"{r.peak_rss_mb:,.0f}",
        )
    out.print(t)
    out.print(
        "min cat.: records a category needs to be kept by discovery; σ 2-way for AIM/PPSyn-DP: the first rounds'"
        " (annealing lowers it, not below the ≥ value); model MB: the largest model the fit may build; time and"
        " peak MB: forecasts for this machine (benchmarks/results/planner.md)."
    )
    for line in p.verdict:
        out.print(f"• {line}")


def _time(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


__all__ = ["plan"]
