"""The privacy accountant: a zCDP filter with a ledger.

Guarantee. Mechanisms in privsample are compositions of rho_i-zCDP steps whose rho_i may be chosen
adaptively from earlier (public) outputs. ``Accountant`` is a privacy filter: it refuses a spend
that would make sum(rho_i) exceed ``rho_total`` *before* any noise is drawn, so every run satisfies
sum(rho_i) <= rho_total, and by the adaptive composition theorem for zCDP filters (Feldman & Zrnic
2021; Whitehouse et al. 2023) the whole interaction is rho_total-zCDP. Steps with an additional
approximate part (thresholded histograms for private schema discovery) add their delta to
``delta_spent``; that is refused beyond ``delta_slack`` the same way. The overall guarantee is then
(epsilon, delta)-DP with delta = delta_slack + cdp_delta(rho_total, epsilon).

Privacy unit. ``unit`` (``privsample.privacy.unit``; ``ROW`` by default) is the neighbouring relation every spend
is calibrated to; the ledger states it (``neighbouring`` in words, ``unit`` as column and max_rows). Under a
person-level unit (max_rows k > 1) ``spend`` also guards the calibration: a spend that measures something must state
its per-record ``sensitivity`` D and its ``noise_scale`` s, and is refused (``ValueError``: a programming error,
never the user's) unless rho >= (k D)^2 / (2 s^2), up to float rounding: the zCDP cost of Gaussian noise of scale
s, of the exponential mechanism with Gumbel scale s (epsilon = 2 k D / s, epsilon^2 / 8) and of Laplace noise of
scale s (epsilon = k D / s, epsilon^2 / 2) on a query of person-level sensitivity k D. A thresholded release (its
``threshold`` in the details) must also charge at least the person-level delta of that threshold.

Public inputs. A table the user declares public (``note_public``) is listed beside the ledger as
"public input, no privacy cost": reading it spends nothing, and it is never an entry.

Rounding. The running total is kept exactly (``fractions.Fraction`` of the float spends), so the
check ``spent + rho <= total`` has no rounding error, and ``remaining`` is rounded *down*, so
spending ``remaining`` always succeeds and never overruns.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Iterable

from privsample.errors import PrivsampleError
from privsample.privacy.conversion import cdp_epsilon, cdp_rho
from privsample.privacy.released import released
from privsample.privacy.unit import ROW, PrivacyUnit


PUBLIC_NOTE = "public input, no privacy cost"
NO_MEASUREMENT = ("none", "post-processing")  # mechanisms of spends that read and draw nothing
CALIBRATION_SLACK = 1e-9  # relative: the person-level guard's tolerance for float rounding only
# Called with each entry ``spend`` records (not ``absorb``): a budget file keeps the charge of a run that spent.
SPEND_HOOKS: list = []


class BudgetExceeded(PrivsampleError):
    """A spend would exceed the privacy budget; nothing was measured."""


@dataclass
class LedgerEntry:
    """One spend: what was measured, how, and what it cost."""

    label: str
    rho: float
    mechanism: str = ""
    measured: str = ""
    noise_scale: float | None = None
    delta: float = 0.0
    private: bool = True
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LedgerEntry":
        return cls(**d)


def _round_down(x: Fraction) -> float:
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return max(f, 0.0)


class Accountant:
    """zCDP privacy filter over a total budget ``rho_total`` (plus an optional delta slack).

    ``spend`` raises :class:`BudgetExceeded` if the spend would overrun; callers spend *before*
    drawing noise (``privsample.privacy.mechanisms`` does this for you).
    """

    def __init__(
        self,
        rho_total: float,
        *,
        delta_slack: float = 0.0,
        target: tuple[float, float] | None = None,
        neighbouring: str | None = None,
        unit: PrivacyUnit = ROW,
    ):
        if not (math.isfinite(rho_total) and rho_total > 0):
            raise ValueError(f"rho_total must be finite and > 0, got {rho_total}")
        if not 0 <= delta_slack < 1:
            raise ValueError("delta_slack must be in [0, 1)")
        self.rho_total = float(rho_total)
        self.delta_slack = float(delta_slack)
        self.target = target  # the (epsilon, delta) the user asked for, if any
        if not isinstance(unit, PrivacyUnit):
            raise ValueError(f"unit must be a PrivacyUnit, got {unit!r}")
        self.unit = unit
        self.neighbouring = unit.neighbouring if neighbouring is None else neighbouring
        self._spent = Fraction(0)
        self._delta_spent = Fraction(0)
        self.ledger: list[LedgerEntry] = []
        self.public_inputs: list[dict[str, Any]] = []  # declared public by the user: listed, never charged
        self._absorbing = False

    @classmethod
    def from_epsilon_delta(cls, epsilon: float, delta: float, *, delta_slack: float = 0.0, **kw) -> "Accountant":
        """Budget for (epsilon, delta)-DP: rho = cdp_rho(epsilon, delta - delta_slack)."""
        rho = cdp_rho(epsilon, delta - delta_slack)
        return cls(rho, delta_slack=delta_slack, target=(epsilon, delta), **kw)

    # -- state -------------------------------------------------------------------------------
    @property
    def spent(self) -> float:
        return float(self._spent)

    @property
    def remaining(self) -> float:
        """Budget left, rounded down: spending exactly this never overruns."""
        return _round_down(Fraction(self.rho_total) - self._spent)

    @property
    def delta_spent(self) -> float:
        return float(self._delta_spent)

    def can_spend(self, rho: float, delta: float = 0.0) -> bool:
        return self._spent + Fraction(rho) <= Fraction(self.rho_total) and self._delta_spent + Fraction(
            delta
        ) <= Fraction(self.delta_slack)

    # -- spending ------------------------------------------------------------------------------
    def spend(
        self,
        rho: float,
        label: str,
        *,
        mechanism: str = "",
        measured: str = "",
        noise_scale: float | None = None,
        delta: float = 0.0,
        private: bool = True,
        **details: Any,
    ) -> LedgerEntry:
        """Record a spend of ``rho`` (zCDP) and ``delta``; refuse it if the budget would overrun, or (a person-level
        unit) if its noise is not calibrated to the unit (module docstring)."""
        if not (isinstance(rho, (int, float)) and math.isfinite(rho) and rho >= 0):
            raise ValueError(f"invalid rho {rho!r} for {label}")
        if self.unit.max_rows > 1:
            self._check_calibration(rho, delta, label, mechanism, noise_scale, details)
        if not self.can_spend(rho, delta):
            if self.can_spend(rho):
                raise BudgetExceeded(
                    f"budget exceeded: '{label}' asks delta={delta:.6g} but only "
                    f"{float(Fraction(self.delta_slack) - self._delta_spent):.6g} of {self.delta_slack:.6g} "
                    "remains (nothing was measured)"
                )
            raise BudgetExceeded(
                f"budget exceeded: '{label}' asks rho={rho:.6g} but only {self.remaining:.6g} of "
                f"{self.rho_total:.6g} remains (nothing was measured)"
            )
        self._spent += Fraction(rho)
        self._delta_spent += Fraction(delta)
        entry = LedgerEntry(
            label=label,
            rho=float(rho),
            mechanism=mechanism,
            measured=measured,
            noise_scale=noise_scale,
            delta=float(delta),
            private=private,
            details=details,
        )
        self.ledger.append(entry)
        if not getattr(self, "_absorbing", False):
            for hook in list(SPEND_HOOKS):
                hook(entry)
        return entry

    def _check_calibration(self, rho, delta, label, mechanism, noise_scale, details) -> None:
        """Refuse a spend whose noise is not calibrated to the person-level unit (module docstring)."""
        if mechanism in NO_MEASUREMENT and noise_scale is None and delta == 0:  # reads and draws nothing
            return
        k, d = self.unit.max_rows, details.get("sensitivity")
        if details.get("per_person"):  # a query whose sensitivity is stated per person (the unit profile)
            k = 1
        if not (isinstance(d, (int, float)) and math.isfinite(d) and d >= 0):
            raise ValueError(f"'{label}': a spend under a person-level unit must state its per-record sensitivity")
        if d == 0:
            return
        if not (isinstance(noise_scale, (int, float)) and noise_scale > 0):
            raise ValueError(f"'{label}': a spend under a person-level unit must state its noise scale")
        need = (k * d) ** 2 / (2.0 * noise_scale * noise_scale)
        if rho < need * (1.0 - CALIBRATION_SLACK):
            raise ValueError(
                f"'{label}': rho={rho:.6g} does not pay for noise of scale {noise_scale:.6g} on sensitivity {d:g} "
                f"per record under {self.unit.neighbouring} (needs {need:.6g}): the noise is not calibrated to the unit"
            )
        tau = details.get("threshold")
        if tau is not None:
            from privsample.privacy.sparse_histogram import person_stability_delta

            if delta < person_stability_delta(noise_scale, tau, k) * (1.0 - CALIBRATION_SLACK):
                raise ValueError(f"'{label}': delta={delta:.3g} is below the person-level delta of threshold {tau:g}")

    def set_unit(self, unit: PrivacyUnit, *, chosen: bool = False) -> None:
        """Fix the unit once its k is known (chosen from the unit profile): allowed while every spend so far was
        stated per person (``per_person``) or measured nothing, so that no earlier spend was calibrated to
        another k. ``chosen``: k is a mechanism output (from the noisy profile), marked where the ledger prints it."""
        if not isinstance(unit, PrivacyUnit):
            raise ValueError(f"unit must be a PrivacyUnit, got {unit!r}")
        if unit == self.unit and not chosen:
            return
        calibrated = [
            e.label for e in self.ledger if not e.details.get("per_person") and e.mechanism not in NO_MEASUREMENT
        ]
        if calibrated:
            raise ValueError(f"the unit is fixed once spends were calibrated to it ({calibrated[0]!r})")
        self.unit = unit
        # k chosen from the noisy unit profile is a mechanism output: printed with its mark
        self.neighbouring = unit.neighbouring_with(released(unit.max_rows)) if chosen else unit.neighbouring

    def absorb(self, entries: Iterable[LedgerEntry]) -> None:
        """Add spends made elsewhere (e.g. private schema discovery) to this ledger and total."""
        self._absorbing = True
        try:
            self._absorb(entries)
        finally:
            self._absorbing = False

    def _absorb(self, entries: Iterable[LedgerEntry]) -> None:
        for e in entries:
            self.spend(
                e.rho,
                e.label,
                mechanism=e.mechanism,
                measured=e.measured,
                noise_scale=e.noise_scale,
                delta=e.delta,
                private=e.private,
                **e.details,
            )

    def note_public(self, name: str, rows: int, fingerprint: str) -> None:
        """List a public input (its name, rows and a fingerprint of its content) beside the ledger; no spend."""
        self.public_inputs.append(
            {"name": str(name), "rows": int(rows), "fingerprint": str(fingerprint), "privacy": PUBLIC_NOTE}
        )

    # -- reporting -------------------------------------------------------------------------------
    @property
    def private(self) -> bool:
        """False if any spend drew seeded (non-secure) noise."""
        return all(e.private for e in self.ledger)

    def pure_epsilon_spent(self) -> float | None:
        """Sum of the spends' pure epsilons (pure DP composes by addition), or None if a spend has none."""
        eps = [e.details.get("pure_epsilon") for e in self.ledger]
        return float(sum(eps)) if all(v is not None for v in eps) else None

    def epsilon_spent(self, delta: float | None = None) -> float:
        """epsilon such that the spends so far are (epsilon, delta)-DP (delta: the target's). At delta = 0 (a
        pure-DP target) this is :meth:`pure_epsilon_spent` when every spend records its pure epsilon."""
        if delta is None:
            delta = self.target[1] if self.target else 1e-9
        if delta == 0 and self.pure_epsilon_spent() is not None:
            return self.pure_epsilon_spent()
        return cdp_epsilon(self.spent, max(delta - self.delta_spent, 1e-300)) if self.spent > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "rho_total": self.rho_total,
            "rho_spent": self.spent,
            "delta_slack": self.delta_slack,
            "delta_spent": self.delta_spent,
            "target_epsilon_delta": list(self.target) if self.target else None,
            "epsilon_spent": self.epsilon_spent(),
            "neighbouring": self.neighbouring,
            "private": self.private,
            **({} if self.unit.is_row else {"unit": self.unit.to_dict()}),
        }

    def to_dict(self) -> dict[str, Any]:
        out = {"summary": self.summary(), "entries": [e.to_dict() for e in self.ledger]}
        if self.public_inputs:  # only then: a ledger without public inputs is as it always was
            out["public_inputs"] = [dict(p) for p in self.public_inputs]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Accountant":
        s = d["summary"]
        acc = cls(
            s["rho_total"],
            delta_slack=s.get("delta_slack", 0.0),
            target=tuple(s["target_epsilon_delta"]) if s.get("target_epsilon_delta") else None,
            neighbouring=s.get("neighbouring"),
            unit=PrivacyUnit.from_dict(s.get("unit")),
        )
        acc.absorb(LedgerEntry.from_dict(e) for e in d["entries"])
        for p in d.get("public_inputs") or []:
            acc.note_public(p["name"], p["rows"], p["fingerprint"])
        return acc
