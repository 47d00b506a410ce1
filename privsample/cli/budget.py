"""Command line for privacy budget files: ``privsample budget init | show | upgrade``.

A budget file holds a total (ε, δ) for one dataset and every release charged to it (``--budget-file`` on
``synth``, ``schema --private-epsilon``, ``mbde``, ``cube sample`` and ``draw ...``), composed under zCDP and
kept as an append-only hash chain (``privsample.privacy.budget``). It is the steward's private record, not a
release: it names the outputs and holds the SHA-256 fingerprint of each input file.
"""

from __future__ import annotations

import math

from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.table import Table

from privsample.cli.common import err, out

budget_app = typer.Typer(no_args_is_help=True, help="Privacy budget files: one total (ε, δ) across releases.")


@budget_app.command("init")
def init(
    file: Path = typer.Argument(..., help="The budget file to create (JSON); an existing file is never overwritten."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Total ε for every release from the dataset."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Total δ in (0, 1)."),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="A name for the dataset (for the record)."),
    neighbouring: str = typer.Option(
        "add-remove",
        "--neighbouring",
        help="add-remove (synth, schema, mbde), replace-one (n public: cube, draw, mbde, and synth with a "
        "reviewed schema at 4ρ) or person:COLUMN (synth --privacy-unit COLUMN: one person, all their rows).",
    ),
) -> None:
    """Create a budget file for a total (ε, δ)-DP guarantee across releases."""
    from privsample.privacy.budget import Budget

    b = Budget.create(file, epsilon=epsilon, delta=delta, dataset=dataset, neighbouring=neighbouring)
    rho, _ = b.remaining()
    err.print(
        f"created {file}: ({epsilon:g}, {delta:g})-DP in total, ρ = {rho:.6g} (zCDP) for "
        f"{b.read()['neighbouring']} neighbours",
        highlight=False,
    )


@budget_app.command("show")
def show(file: Path = typer.Argument(..., help="A budget file.")) -> None:
    """Print the releases charged to FILE and what remains."""
    from privsample.privacy.budget import Budget

    b = Budget.open(file)
    data = b.read()
    title = f"Privacy budget {file.name}" + (f" ({data['dataset']})" if data.get("dataset") else "")
    t = Table(title=title + f": ({data['epsilon']:g}, {data['delta']:g})-DP, {data['neighbouring']} neighbours")
    t.box = box.SIMPLE_HEAD
    widths = {"date": 10, "command": 7, "mechanism": 9, "output": 10}
    for col in ("date", "command", "mechanism", "ε", "ρ", "δ", "status", "output"):
        t.add_column(col, justify="right" if col in ("ρ", "δ") else "left", overflow="fold", min_width=widths.get(col))
    for r in data["releases"]:
        asked = "" if r.get("epsilon") is None else f"{r['epsilon']:g}"  # the run's own --epsilon
        t.add_row(
            str(r.get("date", ""))[:10],
            str(r.get("command", "")),
            str(r.get("mechanism", "")),
            asked,
            f"{r['rho']:.4g}",
            f"{r['delta']:.2g}" if r["delta"] else "0",
            str(r.get("status", "")),
            ", ".join(Path(o).name for o in str(r.get("output") or "").split(", ") if o),
        )
    out.print(t)
    if data.get("cancelled"):
        out.print(f"{data['cancelled']} run(s) failed before any spend: reservation cancelled, no charge")
    out.print(f"full record (dates, output paths, SHA-256 of each input; not for release): {file}", highlight=False)
    out.print(
        f"chain head: {b.chain_head(data)} ({len(data['records'])} records; a release's ledger may record it)",
        highlight=False,
    )
    spent = data["spent"]
    rho_left, delta_left = b.remaining(data)
    out.print(
        f"spent: ρ = {spent['rho']:.6g}, δ = {spent['delta']:.3g} ⇒ ({b.epsilon_spent(data):.4f}, "
        f"{data['delta']:g})-DP so far",
        highlight=False,
    )
    out.print(f"remaining: ρ = {rho_left:.6g} (δ = {delta_left:.3g} left)", highlight=False)
    if rho_left > 0:  # what one more run may ask for: its own ε at its own δ (synth's default δ)
        from privsample.api.accounting import DEFAULT_DELTA, DISCOVERY_DELTA_SHARE
        from privsample.privacy.conversion import cdp_epsilon

        from privsample.privacy.relations import PERSON

        disc = cdp_epsilon(rho_left, (1 - DISCOVERY_DELTA_SHARE) * DEFAULT_DELTA)
        person = data["neighbouring"].startswith(PERSON)
        unit = f" --privacy-unit {data['neighbouring'][len(PERSON) :]}" if person else ""
        pure = (
            "; only person-level runs (and mbde, private for any two datasets) are charged here"
            if person
            else f"; a pure ε-DP release (cube, draw kary, mbde) up to ε = {_floor(math.sqrt(2 * rho_left))}"
        )
        out.print(
            f"one more run fits up to: synth{unit} --epsilon {_floor(disc)} (δ = {DEFAULT_DELTA:g}, schema "
            f"discovered), --epsilon {_floor(cdp_epsilon(rho_left, DEFAULT_DELTA))} with a reviewed schema{pure}",
            highlight=False,
        )


@budget_app.command("upgrade")
def upgrade(file: Path = typer.Argument(..., help="A budget file of version 1 (no hash chain).")) -> None:
    """Rewrite a version-1 budget FILE as a hash chain of the same releases (the current format)."""
    from privsample.privacy.budget import Budget

    b = Budget.upgrade(file)
    data = b.read()
    err.print(
        f"upgraded {file}: {len(data['releases'])} releases, now an append-only hash chain (chain head "
        f"{b.chain_head(data)})",
        highlight=False,
    )


def _floor(x: float) -> str:
    """``x`` rounded down to 4 significant digits (a bound the user may type and still fit)."""
    if x <= 0:
        return "0"
    step = 10 ** (math.floor(math.log10(x)) - 3)
    return f"{math.floor(x / step) * step:.4g}"
