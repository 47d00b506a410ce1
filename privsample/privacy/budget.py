"""A privacy budget that lasts across releases: a JSON file holding a total (ε, δ) for one dataset and every
release charged to it, composed under zCDP, kept as an append-only hash chain.

Guarantee. Release i is charged (ρ_i, δ_i): it is δ_i-approximate ρ_i-zCDP (Bun & Steinke 2016, Def. 8.1)
under the file's neighbouring relation. Approximate zCDP composes (Bun & Steinke 2016, Lemma 8.3), also when
the i-th release is chosen after seeing the earlier ones: the releases together are (Σδ_i)-approximate
(Σρ_i)-zCDP, which implies (ε, Σδ_i + δ_conv(Σρ_i, ε))-DP with δ_conv the tight conversion of Canonne, Kamath
and Steinke (2020) (``cdp_delta``; any order α > 1 of that bound is valid, so its numerical minimum is too).
A release is accepted iff, with it, ``cdp_delta(Σρ_i, ε) <= δ - Σδ_i``: the file's (ε, δ) target then holds.
The sums are exact (``Fraction``) and rounded up; ``δ - Σδ_i`` is one float subtraction, as the accountant's
own ``cdp_rho(ε, δ - δ_slack)`` is, so a single run of the file's own (ε, δ) fits exactly.

What a run is charged: its whole budget, fixed by its options before any record is read (the accountant it
builds: ``rho_total`` and its δ slack). Synthesis and private schema discovery: (cdp_rho(ε, δ - δ_s), δ_s),
add/remove neighbours (a synth run with a privately discovered schema is charged its whole budget, which
already covers the discovery: counted twice if that schema was charged too, which is conservative). Pure
ε-DP (cube, draw kary, draw bernoulli without δ, MBDE): ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4), δ = 0.
ρ-zCDP samplers (draw product, draw bernoulli with δ): (cdp_rho(ε, δ), 0).

Neighbouring relations: ``privsample.privacy.relations`` (how a run of one relation counts in a file of another).

Reservations. ``Budget.spending`` takes an exclusive lock (``fcntl.flock`` on FILE.lock, which needs a local
filesystem), re-reads the file, checks the run fits, appends a "reserve" record for its whole charge, writes
atomically (temporary file, ``os.replace``) and unlocks, all before the data are read; so two runs that start
at once cannot both take the last of the budget. At the end a "finish" record marks it "spent" with its output
name and the input's fingerprint; a run that fails before any spend (no accountant recorded one) appends a
"cancel" record (its charge no longer counts), one that fails after, or whose records are refused
(``DataError``: not a well-formed table), keeps its charge ("failed (charged)"). A run that dies leaves
"reserved": still counted.

The chain (:mod:`privsample.privacy.budget_chain`). Records are never rewritten or removed. The header (every
top-level key but ``header_hash``, ``records``, ``spent`` and ``chain_head``; it holds a random 256-bit ``salt``)
has ``header_hash`` = SHA-256 of its canonical JSON (``json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``, UTF-8). Record i carries ``prev``, the hash of record i - 1 (of the header for the first),
and ``hash`` = SHA-256 of the canonical JSON of the record without ``hash`` (so with ``prev``). ``chain_head`` is
the last record's hash (the header's when there is none). Opening a file recomputes all of it and the totals: an
edited, removed, inserted or reordered record, or an edited header (ε, δ, relation), is refused naming the record.
This guards against mistakes, not against the steward: there is no secret key, so whoever holds the file can delete
it, make a new one, or edit it and recompute the chain; a chain head recorded elsewhere (a release's ledger) is
what shows such a rewrite. The salt makes the head reveal nothing of the file to someone without it.

The file is the steward's private record, not a release (``"not_for_release": true``): it holds the SHA-256 of
each input file and the output names. A damaged file (bad JSON, wrong version, negative or non-finite numbers,
totals that do not add up, a broken chain, a history beyond the total) is an ``InputError``; it is never
reset. A version-1 file (no chain) is refused until ``Budget.upgrade`` (``privsample budget upgrade``) rewrites
it as a chain of the same releases.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import secrets
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

from privsample.errors import DataError, InputError
from privsample.privacy.accountant import SPEND_HOOKS, BudgetExceeded
from privsample.privacy.budget_chain import FINAL, digest, file_header, file_number, replay, seal
from privsample.privacy.conversion import check_eps_delta, cdp_delta, cdp_epsilon, cdp_rho
from privsample.privacy.relations import (
    ADD_REMOVE,
    ANY_TWO,
    PERSON,
    RELATIONS,
    REPLACE_ONE,
    file_charge,
    person_neighbours,
    relation_of,
)

VERSION = 2
ENV = "PRIVSAMPLE_BUDGET_FILE"
_DERIVED = ("releases", "cancelled")  # what ``read`` adds: never written


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _up(x: Fraction) -> float:
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


@dataclass
class Reservation:
    """A release being made: its id in the file, what it is charged, where it is written, and the file's chain
    head right after its charge (``chain_head``, the hash of its "reserve" record)."""

    budget: "Budget"
    id: str
    rho: float
    delta: float
    output: str | None = None
    fingerprint: str | None = None
    chain_head: str | None = None

    def finish(self, status: str = "spent") -> None:
        """Append a "finish" record: the release is ``status`` ("spent" or "failed (charged)"), with its
        output and input fingerprint."""
        if status not in FINAL:
            raise InputError(f"status must be one of {', '.join(FINAL)} (got {status!r})")
        record = {"kind": "finish", "id": self.id, "status": status}
        record.update(output=self.output, input_fingerprint=self.fingerprint)
        self.budget._update(lambda data: self.budget._append(data, record))

    def cancel(self) -> None:
        """Append a "cancel" record: the reservation no longer counts (a run that failed before any spend)."""
        self.budget._update(lambda data: self.budget._append(data, {"kind": "cancel", "id": self.id}))


class Budget:
    """A budget file: ``Budget.create(path, epsilon=, delta=)`` makes one, ``Budget.open(path)`` opens one;
    ``spending(...)`` charges a run (module docstring). The state is re-read from the file at every use."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    # -- making and reading ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | os.PathLike,
        *,
        epsilon: float,
        delta: float,
        dataset: str | None = None,
        neighbouring: str = "add-remove",
    ) -> "Budget":
        """A new budget file for (epsilon, delta)-DP in total; ``InputError`` if ``path`` exists. ``neighbouring``:
        add-remove, replace-one or ``person:COLUMN`` (people identified by COLUMN, ``--privacy-unit COLUMN``)."""
        check_eps_delta(epsilon, delta)
        person = neighbouring.startswith("person:") and neighbouring[len("person:") :].strip()
        if neighbouring not in RELATIONS and not person:
            raise InputError(
                f"neighbouring must be one of {', '.join(RELATIONS)} or person:COLUMN (got {neighbouring!r})"
            )
        path = Path(path)
        header = {
            "version": VERSION,
            "not_for_release": True,
            "dataset": dataset or "",
            "epsilon": float(epsilon),
            "delta": float(delta),
            "neighbouring": person_neighbours(person) if person else RELATIONS[neighbouring],
            "created": _now(),
            "salt": secrets.token_hex(32),
        }
        try:
            with open(path, "x", encoding="utf-8") as fh:  # refuses to overwrite, even in a race
                json.dump(cls._body(header, []), fh, indent=2)
        except FileExistsError:
            raise InputError(f"{path} exists: a budget file is never overwritten") from None
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror}") from None
        return cls(path)

    @staticmethod
    def _body(header: dict, records: list[dict]) -> dict:
        """The file's content: ``header``, its hash, ``records`` chained after it, totals and chain head."""
        data = {**header, "header_hash": digest(header), "records": []}
        for r in records:
            data["records"].append(seal(r, data["records"][-1]["hash"] if data["records"] else data["header_hash"]))
        data["spent"] = {"rho": 0.0, "delta": 0.0}
        data["chain_head"] = data["records"][-1]["hash"] if data["records"] else data["header_hash"]
        return data

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Budget":
        """An existing budget file, checked (``InputError`` if missing or damaged)."""
        b = cls(path)
        b.read()
        return b

    def _load(self) -> Any:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"budget file {self.path} does not exist ('privsample budget init' makes one)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read budget file {self.path}: {exc}") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"damaged budget file {self.path}: not JSON ({exc.msg}, line {exc.lineno})") from None

    def read(self) -> dict:
        """The file's content, checked (``InputError`` naming the damage), with ``releases``: the releases that
        count, each with its status, output and input fingerprint (the chain replayed)."""
        data = self._load()
        if isinstance(data, dict) and data.get("version") == 1:
            raise InputError(
                f"budget file {self.path} is of version 1, without a hash chain: 'privsample budget upgrade "
                f"{self.path}' rewrites it as one (every release is kept)"
            )
        return self._check(data)

    def _check_header(self, data: Any, version: int) -> None:
        p = self.path
        if not isinstance(data, dict) or data.get("version") != version:
            got = data.get("version") if isinstance(data, dict) else type(data).__name__
            raise InputError(f"damaged budget file {p}: version {got!r}, expected {version}")
        try:
            check_eps_delta(data.get("epsilon"), data.get("delta"))
        except InputError as exc:
            raise InputError(f"damaged budget file {p}: {exc}") from None
        relation = data.get("neighbouring")
        if relation not in RELATIONS.values() and not (isinstance(relation, str) and relation.startswith(PERSON)):
            raise InputError(f"damaged budget file {p}: unknown neighbouring {data.get('neighbouring')!r}")

    def _check(self, data: Any) -> dict:
        p = self.path
        self._check_header(data, VERSION)
        if data.get("not_for_release") is not True:
            raise InputError(f'damaged budget file {p}: it must say "not_for_release": true (it holds input hashes)')
        if data.get("header_hash") != digest(file_header(data)):
            raise InputError(f"damaged budget file {p}: its header (ε, δ, relation, dataset) was edited")
        data["releases"], data["cancelled"], head = replay(data.get("records"), data["header_hash"], p)
        self._check_totals(data)
        if data.get("chain_head") != head:
            raise InputError(
                f"damaged budget file {p}: its chain head is not its last record's hash (a record was added or "
                "removed at the end)"
            )
        return data

    def _check_totals(self, data: dict) -> None:
        p, spent = self.path, data.get("spent")
        if not isinstance(spent, dict):
            raise InputError(f"damaged budget file {p}: 'spent' must be an object")
        rho, delta = self._sums(data)
        s_rho = file_number(spent.get("rho"), "spent rho", p)
        s_delta = file_number(spent.get("delta"), "spent delta", p)
        if s_rho != _up(rho) or s_delta != _up(delta):
            raise InputError(
                f"damaged budget file {p}: the totals (rho {s_rho:.6g}, delta {s_delta:.3g}) are not the sum of "
                f"its releases (rho {float(rho):.6g}, delta {float(delta):.3g})"
            )
        if not self._fits(data, Fraction(0), Fraction(0)):
            raise InputError(f"damaged budget file {p}: its releases exceed its total (ε, δ)")

    def chain_head(self, data: dict | None = None) -> str:
        """The file's chain head: the hash of its last record (of its header if it has none)."""
        return (data or self.read())["chain_head"]

    @classmethod
    def upgrade(cls, path: str | os.PathLike) -> "Budget":
        """Rewrite a version-1 file (no chain) as a chain of the same releases, in their order; ``InputError``
        if it is damaged or not of version 1. Its header gains ``not_for_release``, a salt and the date."""
        b = cls(path)
        with b._locked():
            old = b._load()
            if isinstance(old, dict) and old.get("version") == VERSION:
                raise InputError(f"budget file {b.path} is of version {VERSION} already: nothing to upgrade")
            b._check_header(old, 1)
            releases = old.get("releases")
            if not isinstance(releases, list) or not all(
                isinstance(r, dict) and isinstance(r.get("id"), str) for r in releases
            ):
                raise InputError(f"damaged budget file {b.path}: 'releases' must be a list of releases")
            header = {k: old[k] for k in ("dataset", "epsilon", "delta", "neighbouring", "created") if k in old}
            header.update(version=VERSION, not_for_release=True, salt=secrets.token_hex(32))
            header.update(upgraded_from_version=1, upgraded=_now())
            records: list[dict] = []
            for r in releases:
                if r.get("status") not in ("reserved",) + FINAL:
                    raise InputError(f"damaged budget file {b.path}: a release has an unknown status")
                keep = {k: v for k, v in r.items() if k not in ("status", "input_fingerprint", "kind", "prev", "hash")}
                records.append({"kind": "reserve", **keep})
                if r["status"] != "reserved":
                    records.append({"kind": "finish", "id": r["id"], "status": r["status"], "output": r.get("output")})
                    records[-1]["input_fingerprint"] = r.get("input_fingerprint")
            data = cls._body(header, records)
            data["releases"], data["cancelled"], _ = replay(data["records"], data["header_hash"], b.path)
            b._check_totals({**data, "spent": old.get("spent")})  # the old totals must add up
            b._write(data)
        return b

    # -- the rule ---------------------------------------------------------------------------------------
    @staticmethod
    def _sums(data: dict) -> tuple[Fraction, Fraction]:
        rs = data["releases"]
        return sum((Fraction(r["rho"]) for r in rs), Fraction(0)), sum((Fraction(r["delta"]) for r in rs), Fraction(0))

    def _fits(self, data: dict, rho: Fraction, delta: Fraction) -> bool:
        """Whether the releases plus (rho, delta) keep cdp_delta(Σρ, ε) <= δ - Σδ."""
        r, d = self._sums(data)
        r, d = _up(r + rho), _up(d + delta)
        room = data["delta"] - d
        return room > 0 and (r == 0 or cdp_delta(r, data["epsilon"]) <= room)

    def remaining(self, data: dict | None = None) -> tuple[float, float]:
        """(ρ, δ) left: a further pure-zCDP release of ρ fits (ρ rounded down), and the δ left for it."""
        data = data or self.read()
        r, d = self._sums(data)
        room = data["delta"] - _up(d)
        if room <= 0:
            return 0.0, 0.0
        rho = Fraction(cdp_rho(data["epsilon"], room)) - r
        f = float(rho)
        if Fraction(f) > rho:
            f = math.nextafter(f, -math.inf)
        while f > 0 and not self._fits(data, Fraction(f), Fraction(0)):  # rounding of the sums: step down
            f = math.nextafter(f, -math.inf)
        return max(f, 0.0), room

    def epsilon_left(self, data: dict | None = None) -> float:
        """ε of a further release at the file's δ whose cost is the remaining ρ (``cdp_epsilon``)."""
        data = data or self.read()
        rho, _ = self.remaining(data)
        return cdp_epsilon(rho, data["delta"]) if rho > 0 else 0.0

    def epsilon_spent(self, data: dict | None = None) -> float:
        """ε at which the releases so far are (ε, δ)-DP, δ the file's."""
        data = data or self.read()
        r, d = self._sums(data)
        room = data["delta"] - _up(d)
        return cdp_epsilon(_up(r), room) if r > 0 and room > 0 else 0.0

    # -- charging ---------------------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fh = open(lock, "a")
        except OSError as exc:
            raise InputError(f"cannot lock budget file {self.path}: {exc.strerror}") from None
        with fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _write(self, data: dict) -> None:
        r, d = self._sums(data)
        data["spent"] = {"rho": _up(r), "delta": _up(d)}
        data["chain_head"] = data["records"][-1]["hash"] if data["records"] else data["header_hash"]
        content = {k: v for k, v in data.items() if k not in _DERIVED}
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(content, fh, indent=2)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _append(self, data: dict, record: dict) -> dict:
        """Chain ``record`` after the last one and replay the chain (a finish or cancel of a release that is
        not in progress is an ``InputError``); the sealed record."""
        if record["kind"] != "reserve" and not any(
            r["id"] == record["id"] and r["status"] == "reserved" for r in data["releases"]
        ):
            raise InputError(f"release {record['id']} of {self.path} is not in progress: finished or cancelled already")
        head = data["records"][-1]["hash"] if data["records"] else data["header_hash"]
        sealed = seal(record, head)
        records = data["records"] + [sealed]
        data["releases"], data["cancelled"], _ = replay(records, data["header_hash"], self.path)
        data["records"] = records
        return sealed

    def _update(self, change) -> dict:
        with self._locked():
            data = self.read()
            change(data)
            self._write(data)
            return data

    def reserve(
        self,
        *,
        command: str,
        mechanism: str,
        rho: float,
        delta: float = 0.0,
        neighbouring: str = ADD_REMOVE,
        epsilon_asked: float | None = None,
        delta_asked: float | None = None,
        output: str | None = None,
    ) -> Reservation:
        """Charge a run's whole (ρ, δ) (under ``neighbouring``) as "reserved", or refuse it (``BudgetExceeded``)
        with what is left. Locked: re-read, check, append and write are one step."""
        if not (math.isfinite(rho) and rho >= 0 and math.isfinite(delta) and 0 <= delta < 1):
            raise InputError(f"invalid charge rho={rho!r}, delta={delta!r}")
        holder: dict = {}

        def add(data: dict) -> None:
            run = relation_of(neighbouring)
            charge = file_charge(rho, delta, run, data["neighbouring"], command)
            if not self._fits(data, Fraction(charge), Fraction(delta)):
                left, room = self.remaining(data)
                raise BudgetExceeded(
                    f"budget file {self.path} refuses {command}: it would cost ρ={charge:.6g}"
                    + (f", δ={delta:.3g}" if delta else "")
                    + f" but only ρ={left:.6g} and δ={max(room, 0.0):.3g} of ({data['epsilon']:g}, "
                    f"{data['delta']:g}) remain (no data was read; 'privsample budget show {self.path}' says what "
                    "one more run may ask for)"
                )
            entry = {
                "kind": "reserve",
                "id": uuid.uuid4().hex[:12],
                "command": command,
                "mechanism": mechanism,
                "neighbouring": neighbouring,
                "epsilon": epsilon_asked,
                "run_delta": delta_asked,
                "rho": float(charge),
                "delta": float(delta),
                "date": _now(),
                "output": output,
            }
            holder["entry"] = self._append(data, entry)

        self._update(add)
        e = holder["entry"]
        return Reservation(self, e["id"], e["rho"], e["delta"], output=output, chain_head=e["hash"])

    @contextmanager
    def spending(self, **charge: Any) -> Iterator[Reservation]:
        """Reserve (``reserve(**charge)``), run the body, then mark the release spent with the input's
        fingerprint (the reservation's ``fingerprint``, set by the body: the input is read only once the charge is
        reserved); on failure, remove the reservation unless an accountant recorded a spend meanwhile or the
        records themselves were refused (``DataError``: that refusal depends on the data, so it is charged)."""
        res = self.reserve(**charge)
        spent: list = []
        hook = spent.append
        SPEND_HOOKS.append(hook)
        try:
            yield res
        except BaseException as exc:
            SPEND_HOOKS.remove(hook)
            if spent or isinstance(exc, DataError):
                res.finish("failed (charged)")
            else:
                res.cancel()
            raise
        SPEND_HOOKS.remove(hook)
        res.finish("spent")

    def __repr__(self) -> str:
        return f"Budget({str(self.path)!r})"


def as_budget(budget: Any) -> Budget | None:
    """None, a ``Budget``, or a path opened as one (``InputError`` if it is missing or damaged)."""
    if budget is None or isinstance(budget, Budget):
        return budget
    if isinstance(budget, (str, os.PathLike)):
        return Budget.open(budget)
    raise InputError(f"budget must be a Budget or a budget file path, not {type(budget).__name__}")


def pure_charge(command: str, mechanism: str, epsilon: float, neighbouring: str) -> dict:
    """The charge of a pure epsilon-DP run: rho = epsilon²/2, delta = 0."""
    return {
        "command": command,
        "mechanism": mechanism,
        "rho": float(epsilon) ** 2 / 2,
        "delta": 0.0,
        "neighbouring": neighbouring,
        "epsilon_asked": float(epsilon),
        "delta_asked": 0.0,
    }


def zcdp_charge(command: str, mechanism: str, epsilon: float, delta: float, neighbouring: str) -> dict:
    """The charge of a rho-zCDP run with rho = cdp_rho(epsilon, delta): (rho, 0)."""
    return {
        "command": command,
        "mechanism": mechanism,
        "rho": cdp_rho(epsilon, delta),
        "delta": 0.0,
        "neighbouring": neighbouring,
        "epsilon_asked": float(epsilon),
        "delta_asked": float(delta),
    }


def accountant_charge(command: str, mechanism: str, accountant: Any, epsilon: float, delta: float) -> dict:
    """The charge of a run whose whole spend is bounded by ``accountant`` (an ``Accountant`` before any spend):
    its whole rho and its delta slack."""
    return {
        "command": command,
        "mechanism": mechanism,
        "rho": accountant.rho_total,
        "delta": accountant.delta_slack,
        "neighbouring": accountant.neighbouring,
        "epsilon_asked": epsilon,
        "delta_asked": delta,
    }


def refuse_seeded(budget: Any, seed: Any) -> None:
    """A seeded run is NOT private: it cannot be charged to a budget file."""
    if budget is not None and seed is not None:
        raise InputError("a seeded run is NOT private and cannot be charged to a budget file: drop the seed")


__all__ = [
    "ADD_REMOVE",
    "REPLACE_ONE",
    "ANY_TWO",
    "Budget",
    "Reservation",
    "as_budget",
    "refuse_seeded",
    "file_charge",
    "relation_of",
    "pure_charge",
    "zcdp_charge",
    "accountant_charge",
]
