"""The privacy ledger as users read it: a dict (``summary`` and ``entries``, as saved in ``model.json``) that
also renders itself, per phase, as text, a pandas DataFrame and HTML (Jupyter shows ``_repr_html_``).

Every number here is the accountant's record of what was spent (ρ, δ, noise scales, ε-equivalents): public
values, fixed by the budget and the mechanisms' parameters, never by the data. Cumulative ε per phase is the
zCDP conversion of the cumulative ρ at the target δ (less the δ spent by thresholds), or, for a pure-DP target
whose spends all carry their pure ε, the plain sum of those ε (pure DP composes by addition).
"""

from __future__ import annotations

import html
from typing import Any

from privsample.privacy.conversion import cdp_epsilon
from privsample.privacy.released import released

PHASE_HEADER = ("phase", "steps", "mechanism", "ρ", "noise scale", "δ", "cum. ε")


NOT_NEEDED = " (not needed: "  # a step's note: budget set aside for it, charged though the run did not need it
NOT_NEEDED_SHOWN = "not needed (charged)"  # the mechanism column of a phase none of whose steps was needed


def phase_of(label: str) -> str:
    """Group key of a ledger label: 'mst/2-way/a,b' -> 'mst/2-way';
    'schema: age: type counts' -> 'schema: type counts'. A step the run did not need ('schema: age: point masses
    (not needed: unit bins)') is grouped with the same step where it was needed: whether it was follows the run's
    noisy decisions."""
    if "/" in label:
        return label.rsplit("/", 1)[0]
    label = label.split(NOT_NEEDED, 1)[0]
    parts = label.split(": ", 2)
    return f"{parts[0]}: {parts[2]}" if len(parts) == 3 else label


def _mechanisms(entries: list[dict]) -> str:
    """The mechanisms of a phase's entries, 'a/b'; a step charged though not needed (mechanism 'none') is named,
    as "not needed (charged)", only when no step of its phase was needed (whether one was follows the run's noisy
    decisions)."""
    names = {e.get("mechanism", "").split(",")[0] for e in entries}
    return "/".join(sorted(names - {"none"} or {NOT_NEEDED_SHOWN}))


class Ledger(dict):
    """A privacy ledger: ``ledger["summary"]`` (budget, spend, target (ε, δ), whether the noise was secure)
    and ``ledger["entries"]`` (one dict per spend: label, mechanism, what was measured, noise scale, ρ, δ).

    ``phases()`` groups the entries as ``privsample`` prints them, ``to_frame()`` lists every entry as a
    pandas DataFrame, and a notebook renders the ledger as an HTML table.

    Example (an accountant's record of one seeded, NOT private, Gaussian measurement)::

        >>> import numpy as np
        >>> from privsample.privacy import Accountant, SeededNoise, gaussian_measure
        >>> acc = Accountant.from_epsilon_delta(1.0, 1e-9)
        >>> _ = gaussian_measure(acc, SeededNoise(0, quiet=True), np.array([5, 7]), 0.01, "1-way/a", measured="a")
        >>> ledger = Ledger(acc.to_dict())
        >>> [row["phase"] for row in ledger.phases()], ledger.private
        (['1-way'], False)
        >>> list(ledger.to_frame().columns)
        ['label', 'mechanism', 'measured', 'noise_scale', 'rho', 'delta', 'private']
    """

    @property
    def summary(self) -> dict[str, Any]:
        return self.get("summary") or {}

    @property
    def entries(self) -> list[dict[str, Any]]:
        return list(self.get("entries") or [])

    @property
    def public_inputs(self) -> list[dict[str, Any]]:
        """Tables the user declared public (name, rows, fingerprint): listed, never charged."""
        return list(self.get("public_inputs") or [])

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation the spends are calibrated to (the accountant's privacy unit), in words."""
        return str(self.summary.get("neighbouring") or "add/remove one record")

    def neighbours_line(self) -> str:
        """'neighbours: add/remove one record', or 'neighbours: add/remove one person (≤ k rows of COLUMN)'."""
        return f"neighbours: {self.neighbouring}"

    def public_lines(self) -> list[str]:
        """One line per public input: 'public input, no privacy cost: NAME (ROWS rows, sha256 PREFIX...)'."""
        return [
            f"{p.get('privacy', 'public input, no privacy cost')}: {p.get('name')} ({int(p.get('rows', 0)):,} rows, "
            f"{str(p.get('fingerprint', ''))[:19]}...)"
            for p in self.public_inputs
        ]

    @property
    def private(self) -> bool:
        """False when any spend drew seeded (non-secure) noise, or the run was marked NOT PRIVATE."""
        return bool(self.summary.get("private", True)) and all(e.get("private", True) for e in self.entries)

    @property
    def pure(self) -> bool:
        """A pure ε-DP ledger: the target's δ is 0 and every spend records its pure ε."""
        target = self.summary.get("target_epsilon_delta")
        return (
            bool(target)
            and target[1] == 0
            and all(e.get("details", {}).get("pure_epsilon") is not None for e in self.entries)
        )

    def phases(self) -> list[dict[str, Any]]:
        """One row per phase (the entries grouped by ``phase_of(label)``, in order), with cumulative ε."""
        target = self.summary.get("target_epsilon_delta")
        delta = target[1] if target else 1e-9
        pure = self.pure
        groups: dict[str, list[dict]] = {}
        for e in self.entries:
            groups.setdefault(phase_of(e.get("label", "")), []).append(e)
        rows, cum, dsum, cum_pure = [], 0.0, 0.0, 0.0
        for phase, es in groups.items():
            rho = sum(float(e.get("rho", 0.0)) for e in es)
            ds = sum(float(e.get("delta", 0.0)) for e in es)
            cum += rho
            dsum += ds
            cum_pure += sum(e["details"]["pure_epsilon"] for e in es) if pure else 0.0
            scales = [e["noise_scale"] for e in es if e.get("noise_scale") is not None]
            eps = cum_pure if pure else (cdp_epsilon(cum, max(delta - dsum, 1e-300)) if cum > 0 else 0.0)
            rows.append(
                {
                    "phase": phase,
                    "steps": len(es),
                    "mechanism": _mechanisms(es),
                    "rho": rho,
                    "noise_scale": (min(scales), max(scales)) if scales else None,
                    "delta": ds,
                    "cumulative_epsilon": eps,
                }
            )
        return rows

    def total_line(self) -> str:
        """The closing line: total ρ of the budget and the (ε, δ) it amounts to."""
        s = self.summary
        target = s.get("target_epsilon_delta")
        delta = target[1] if target else 1e-9
        pure_eps = self.phases()[-1]["cumulative_epsilon"] if self.pure and self.entries else 0.0
        # What was spent follows the run's noisy decisions (how many rounds, which discovery plan): a mechanism
        # output (privsample.privacy.released); so does the total after a privately discovered schema (the budget
        # less the delta its thresholds spent); the target is public.
        return (
            f"Total ρ = {released(s.get('rho_spent', 0.0), '.6g')} of {released(s.get('rho_total', 0.0), '.6g')}"
            + (f", δ-slack {released(s['delta_spent'], '.2g')}" if s.get("delta_spent") else "")
            + (
                f" ⇒ pure {released(pure_eps, '.4g')}-DP"
                if self.pure
                else f" ⇒ ({released(s['epsilon_spent'], '.4f')}, {delta:g})-DP"
                if s.get("epsilon_spent") is not None
                else ""
            )
            + (f" (target ε={target[0]:g}, δ={target[1]:g})" if target else "")
        )

    def to_frame(self):
        """Every entry as a row of a pandas DataFrame (label, mechanism, measured, noise_scale, rho, delta,
        private)."""
        import pandas as pd

        cols = ["label", "mechanism", "measured", "noise_scale", "rho", "delta", "private"]
        return pd.DataFrame([{c: e.get(c) for c in cols} for e in self.entries], columns=cols)

    def title(self) -> str:
        return "Privacy ledger (pure ε-DP)" if self.pure else "Privacy ledger (zCDP; ε at the target δ)"

    def phase_table(self) -> list[tuple[str, ...]]:
        """``phases()`` as the printed table's text cells (columns: ``PHASE_HEADER``). A phase's steps and charges
        follow the run's noisy decisions (rounds, discovery's plan): marked as mechanism outputs
        (``privsample.privacy.released``)."""
        out = []
        for r in self.phases():
            sc = r["noise_scale"]
            scale = (
                ""
                if sc is None
                else (
                    released(sc[0], ".3g")
                    if sc[1] - sc[0] <= 1e-9 * sc[1]
                    else f"{released(sc[0], '.3g')}–{released(sc[1], '.3g')}"
                )
            )
            out.append(
                (
                    r["phase"],
                    released(r["steps"]),
                    r["mechanism"],
                    released(r["rho"], ".4g"),
                    scale,
                    released(r["delta"], ".2g") if r["delta"] else "",
                    released(r["cumulative_epsilon"], ".4f"),
                )
            )
        return out

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in PHASE_HEADER)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.phase_table()
        )
        warning = "" if self.private else "<p><strong>NOT PRIVATE: seeded or unsafe settings.</strong></p>"
        return (
            f"<div><strong>{self.title()}</strong>{warning}<table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table><p>{html.escape(self.total_line())}</p>"
            + f"<p>{html.escape(self.neighbours_line())}</p>"
            + "".join(f"<p>{html.escape(line)}</p>" for line in self.public_lines())
            + "</div>"
        )

    def __str__(self) -> str:
        lines = [f"{r[0]}: {r[1]} step(s), {r[2]}, ρ={r[3]}, cum. ε={r[6]}" for r in self.phase_table()]
        return "\n".join(lines + [self.total_line(), self.neighbours_line()] + self.public_lines())
