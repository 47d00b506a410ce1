"""The hash chain of a budget file (:mod:`privsample.privacy.budget`): records are never rewritten or removed.
The header (every top-level key but ``header_hash``, ``records``, ``spent`` and ``chain_head``; it holds a random
256-bit ``salt``) has ``header_hash`` = SHA-256 of its canonical JSON (``json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False)``, UTF-8). Record i carries ``prev``, the hash of record i - 1 (of
the header for the first), and ``hash`` = SHA-256 of the canonical JSON of the record without ``hash`` (so with
``prev``). Replaying the chain recomputes every hash: an edited, removed, inserted or reordered record is an
``InputError`` naming it. The file is the steward's private record, not a release; nothing here reads records
of a dataset."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from privsample.errors import InputError

__all__ = ["BODY", "FINAL", "KINDS", "digest", "file_header", "file_number", "replay", "seal"]

# the file's own keys besides its header (everything else is the header, covered by ``header_hash``)
BODY = ("header_hash", "records", "spent", "chain_head")
KINDS = ("reserve", "finish", "cancel")  # the kinds of record
FINAL = ("spent", "failed (charged)")  # the statuses a finished release may have


def file_number(value: Any, what: str, path: Path) -> float:
    """``value`` as a float, checked to be a finite number >= 0 (else the file at ``path`` is damaged)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InputError(f"damaged budget file {path}: {what} must be a finite number >= 0 (got {value!r})")
    return float(value)


def digest(obj: Any) -> str:
    """SHA-256 (hex) of ``obj``'s canonical JSON: sorted keys, no spaces, UTF-8 (lone surrogates kept)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_header(data: dict) -> dict:
    """The file's header: every top-level key but the chain, its records and the totals."""
    return {k: v for k, v in data.items() if k not in BODY}


def seal(record: dict, prev: str) -> dict:
    """``record`` chained after ``prev``: with ``prev`` and its own ``hash`` (over the record and ``prev``)."""
    record = {k: v for k, v in record.items() if k not in ("prev", "hash")}
    record["prev"] = prev
    record["hash"] = digest(record)
    return record


def replay(records: Any, header_hash: str, path: Path) -> tuple[list[dict], int, str]:
    """Check the chain of ``records`` from ``header_hash`` and replay it: (the releases that count, each with
    its status, output and input fingerprint; how many reservations were cancelled; the chain head)."""

    def bad(i: int, what: str) -> InputError:
        return InputError(f"damaged budget file {path}: record {i + 1} of {len(records)} {what}")

    if not isinstance(records, list):
        raise InputError(f"damaged budget file {path}: 'records' must be a list")
    releases: dict[str, dict] = {}
    seen: set[str] = set()
    cancelled, prev = 0, header_hash
    for i, r in enumerate(records):
        if not isinstance(r, dict) or r.get("kind") not in KINDS or not isinstance(r.get("id"), str):
            raise bad(i, "is not a record")
        if r.get("prev") != prev:
            after = f"record {i}" if i else "the header"
            raise bad(i, f"does not follow {after} (a record was edited, removed, inserted or reordered)")
        if r.get("hash") != digest({k: v for k, v in r.items() if k != "hash"}):
            raise bad(i, "was edited (its hash does not match)")
        prev, rid = r["hash"], r["id"]
        if r["kind"] == "reserve":
            if rid in seen:
                raise bad(i, "reuses the id of an earlier release")
            seen.add(rid)
            rho = file_number(r.get("rho"), f"record {i + 1}'s rho", path)
            delta = file_number(r.get("delta"), f"record {i + 1}'s delta", path)
            view = {k: v for k, v in r.items() if k not in ("kind", "prev", "hash")}
            releases[rid] = {**view, "rho": rho, "delta": delta, "status": "reserved", "input_fingerprint": None}
        elif releases.get(rid, {}).get("status") != "reserved":
            raise bad(i, f"{'finishes' if r['kind'] == 'finish' else 'cancels'} no release in progress")
        elif r["kind"] == "cancel":
            del releases[rid]
            cancelled += 1
        else:
            if r.get("status") not in FINAL:
                raise bad(i, f"has an unknown status (one of {', '.join(FINAL)})")
            releases[rid].update(
                status=r["status"], output=r.get("output"), input_fingerprint=r.get("input_fingerprint")
            )
    return list(releases.values()), cancelled, prev
