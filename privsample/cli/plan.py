"""``privsample plan``: what a run of ``privsample synth`` would do, before the first spend.

Reads the header line (the column names) and nothing else of the file; see :mod:`privsample.api.plan`.
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
    return f"{_num(v)} ({_percent(r.noise['share_of_rows'].get(key, 0.0))})"


def _percent(share: float) -> str:
    """A share as a percentage to two significant digits: 17%, 1.7%, 0.0039% (below 0.001%: '<0.001%')."""
    pct = 100 * share
    if pct < 0.001:
        return "<0.001%"
    return f"{pct:.2g}%" if pct < 10 else f"{pct:.0f}%"


def plan(
    data: Path = typer.Argument(..., help="Table to plan for (CSV, CSV.gz or Parquet): only its header is read."),
    epsilon: str = typer.Option(..., "--epsilon", "-e", help="Privacy budget ε, or a list to compare: 0.3,1,3."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy parameter δ in (0, 1)."),
    schema: Optional[Path] = typer.Option(None, "--schema", "-s", help="Reviewed schema (YAML/JSON); else discovery."),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="mst | aim | ppsyn (default: all three)."),
    rows: Optional[int] = typer.Option(
        None, "--rows", help="Number of records, if public (else a grid of assumed counts)."
    ),
    max_memory_mb: float = typer.Option(8192.0, "--max-memory-mb", help="The memory limit the run would have."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    privacy_unit: Optional[str] = typer.Option(
        None, "--privacy-unit", help="A person-level run: the column naming a person (how the noise grows with k)."
    ),
    max_rows_per_unit: Optional[int] = typer.Option(
        None, "--max-rows-per-unit", help="k, the rows kept per person, if you would fix it."
    ),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """Forecast a synth run: budget split, discovery threshold, noise, model size, time and memory; with --rows
    and no schema, also what private discovery keeps of each column kind at each ε.

    Reads the header line (column names) only, and the schema if given: no record, not the file's size. Figures
    that depend on the number of records assume --rows N, else each of 1,000 / 10,000 / 100,000 / 1,000,000.
    Nothing is spent."""
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
        privacy_unit=privacy_unit,
        max_rows_per_unit=max_rows_per_unit,
    )
    if as_json:
        print(p.to_json())
        return
    given = p.rows_from == "given"
    out.print(
        f"{p.path}: {len(p.columns)} columns"
        + ("; reviewed schema" if p.schema else "; domain discovered privately (part of the budget)")
        + f"; δ = {p.delta:g}. Nothing was read beyond the header; nothing was spent."
    )
    if given:
        out.print(f"Figures that depend on the number of records assume {p.row_counts[0]:,} rows (given with --rows).")
    else:
        out.print(
            "Figures that depend on the number of records assume the row counts shown "
            "(pass --rows N if the count is public)."
        )
    by = {(r.row_count, r.epsilon, r.method): r for r in p.rows}
    keys = list(dict.fromkeys((r.epsilon, r.method) for r in p.rows))
    epsilons = list(dict.fromkeys(r.epsilon for r in p.rows))
    if given or p.schema:  # the budget split, once per epsilon
        for e in epsilons:
            r = by[p.row_counts[0], e, keys[0][1]]
            disc = f"discovery {r.rho_discovery:.3g} ({r.rho_discovery / r.rho_total:.0%}), " if r.rho_discovery else ""
            out.print(f"ε={e:g}: ρ={r.rho_total:.4g} (zCDP): {disc}synthesizer {r.rho_synth:.4g}")
    else:
        _discovery_table(p, by, keys[0][1], epsilons)
    if given:
        _one_table(p, by, keys)
        if p.discovery:
            _survival_table(p)
    else:
        _grid_tables(p, by, keys)
    if p.unit is not None:
        _unit_table(p.unit)
    for line in p.verdict:
        out.print(f"• {line}")


def _unit_table(unit: dict) -> None:
    """Person-level runs: the 2-way noise sd at each k (k times the record-level one) and the k it affords."""
    from privsample.data.unit_profile import PROFILE_SHARE

    ks = unit["ks"]
    t = Table(title=f"Privacy unit '{unit['column']}': noise sd of a 2-way cell at k rows per person")
    for col in ("ε", "rows", "method", *[f"k={k}" for k in ks], "σ ≤ 1% rows"):
        t.add_column(col, justify="right")
    for f in unit["forecast"]:
        n = f["row_count"]
        cells = [_num(f["sigma_2way"][str(k)]) for k in ks]
        t.add_row(
            f"{f['epsilon']:g}", f"{n:,}", f["method"], *cells, f"≤ {f['afforded_k']:,}" if f["afforded_k"] else "–"
        )
    out.print(t)
    out.print(
        "With --privacy-unit every noise sd is k times the record-level one at the same ε (neighbours differ by one "
        "person, at most k of their rows kept), and so are the records a category needs in discovery: the figures "
        "above are for k = 1. A smaller k removes more rows of people with many. Without --max-rows-per-unit the run "
        f"chooses k from a noisy count of rows per person ({PROFILE_SHARE:.0%} of the budget)."
    )


def _one_table(p, by, keys) -> None:
    n = p.row_counts[0]
    t = Table(title=f"σ: noise sd of a measured cell (share of the {n:,} rows)")
    for col in ("ε", "method", "min cat.", "σ 1-way", "σ 2-way", "model MB", "time", "peak MB"):
        t.add_column(col, justify="left" if col == "method" else "right")
    for e, m in keys:
        r = by[n, e, m]
        t.add_row(
            f"{e:g}",
            m,
            f"~{r.min_category_records:,}" if r.min_category_records else "",
            _sigma(r, "sigma_1way"),
            _sigma(r, "sigma_2way") + _floor(r),
            _model(r),
            _time(r.seconds),
            f"{r.peak_rss_mb:,.0f}",
        )
    out.print(t)
    out.print(
        "min cat.: records a category needs to be kept by discovery; σ 2-way for AIM/PPSyn-DP: the first rounds'"
        " (annealing lowers it, not below the ≥ value); model MB: the largest model the fit may build; time and"
        " peak MB: forecasts for this machine (benchmarks/results/planner.md)."
    )


def _survival_table(p) -> None:
    """Per epsilon, what private discovery keeps of each column kind at the given row count (a forecast)."""
    n = p.row_counts[0]
    t = Table(title=f"What private discovery keeps at {n:,} rows (a forecast: nothing is spent)")
    for col in ("ε", "discovery share", "a category needs", "numeric: σ of a count", "a value or tail needs"):
        t.add_column(col, justify="right")
    for d in p.discovery:
        t.add_row(
            f"{d['epsilon']:g}",
            f"{d['share']:.0%}",
            f"~{d['min_category_records']:,} records" if d["min_category_records"] else "–",
            _num(d["sigma_grid"]) if d["sigma_grid"] is not None else "–",
            f"~{_num(d['numeric_records'])} records" if d["numeric_records"] is not None else "–",
        )
    out.print(t)
    out.print(
        "Categorical: a category with fewer records merges into (other); a column with no category that large "
        "keeps only (other), one with a single one keeps one value. Numeric: the bounds come from noisy counts on "
        "a public grid (σ: their noise sd); a value or tail holding fewer than about 2σ records may be clipped to "
        "the bounds or merged into a neighbouring bin. A reviewed schema (--schema) keeps everything it declares."
    )
    codes = [d for d in p.discovery if d.get("code_records")]
    if codes:
        out.print(
            "Integer columns first test for codes (such as 101, 205, 330: kept as categories when their released "
            "values hold most records) at ε "
            + ", ".join(f"{d['epsilon']:g} (a code needs ~{d['code_records']:,} records)" for d in codes)
            + "; their grid then gets the rest of the budget."
        )


def _discovery_table(p, by, method: str, epsilons) -> None:
    t = Table(title="Discovery: its share of ρ, ~ the records a category needs")
    for col in ("ε", "ρ (zCDP)", *(f"{n:,} rows" for n in p.row_counts)):
        t.add_column(col, justify="right")
    for e in epsilons:
        at = [by[n, e, method] for n in p.row_counts]
        cells = (f"{r.rho_discovery / r.rho_total:.0%}, ~{r.min_category_records:,}" for r in at)
        t.add_row(f"{e:g}", f"{at[0].rho_total:.4g}", *cells)
    out.print(t)


def _grid_tables(p, by, keys) -> None:
    heads = [f"{n:,} rows" for n in p.row_counts]
    t = Table(title="σ 2-way: noise sd of a measured cell of a pair (share of the rows)")
    for col in ("ε", "method", *heads):
        t.add_column(col, justify="left" if col == "method" else "right")
    for e, m in keys:
        t.add_row(f"{e:g}", m, *(_sigma(by[n, e, m], "sigma_2way") + _floor(by[n, e, m]) for n in p.row_counts))
    out.print(t)
    t = Table(title="Time and peak memory (MB) on this machine")
    for col in ("ε", "method", "model MB", *heads):
        t.add_column(col, justify="left" if col == "method" else "right")
    for e, m in keys:
        cells = (f"{_time(by[n, e, m].seconds)}, {by[n, e, m].peak_rss_mb:,.0f}" for n in p.row_counts)
        t.add_row(f"{e:g}", m, _model(by[p.row_counts[0], e, m]), *cells)
    out.print(t)
    out.print(
        ("Discovery: categories with fewer records than ~ merge into (other); " if not p.schema else "")
        + "σ 2-way for AIM/PPSyn-DP: the first rounds' (annealing lowers it, not below the ≥ value); σ 1-way and"
        " the budget details: --json; model MB: the largest model the fit may build; time and peak MB: forecasts"
        " (benchmarks/results/planner.md)."
    )


def _floor(r) -> str:
    return f" ≥{_num(r.noise['sigma_min'])}" if "sigma_min" in r.noise else ""


def _model(r) -> str:
    return f"{r.model_mb:,.2f}" if r.model_mb is not None else ""


def _time(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


__all__ = ["plan"]
