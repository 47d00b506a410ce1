"""The check of a loaded model (:mod:`privsample.synth.model`) against itself before it is used: every field of
``model.json`` for type and consistency, and every array of ``arrays.npz`` for dtype, shape and values. A
saved model is untrusted input (it may have been edited): a failure is one ``InputError`` naming the field.
Nothing here reads records; the fields checked are those the model file releases."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privsample.data.schema import Schema
from privsample.errors import InputError

__all__ = ["validate_payload"]

_Bad = Callable[[str, str], InputError]


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _sizes(bad: _Bad, name: str, d: Any) -> dict[str, int]:
    """``d``, checked to be a non-empty object of column sizes (integers >= 1)."""
    if not isinstance(d, dict) or not d:
        raise bad(name, "must be a non-empty object of column sizes")
    for k, v in d.items():
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            raise bad(f"{name}.{k}", f"must be an integer >= 1 (got {v!r})")
    return d


def _check_header(bad: _Bad, meta: dict[str, Any]) -> dict[str, int]:
    """The mechanism, the domain, the ledger, parameters and facts; returns the domain."""
    if not isinstance(meta.get("mechanism"), str):
        raise bad("mechanism", "must be a string")
    domain = _sizes(bad, "domain", meta.get("domain"))
    for name in ("ledger", "params", "info"):
        if not isinstance(meta.get(name, {}), dict):
            raise bad(name, "must be an object")
    ledger = meta.get("ledger")
    if ledger is None:
        raise bad("ledger", "is missing")
    if not isinstance(ledger.get("summary", {}), dict) or not isinstance(ledger.get("entries", []), list):
        raise bad("ledger", "must hold a 'summary' object and an 'entries' list")
    sd = meta.get("info", {}).get("total_sd")
    if sd is not None and not (_is_number(sd) and math.isfinite(sd) and sd >= 0):
        raise bad("info.total_sd", f"must be a finite number >= 0 (got {sd!r})")
    return domain


def _check_model(bad: _Bad, meta: dict[str, Any], domain: dict[str, int]) -> tuple[dict, dict, dict]:
    """The model object (its domain, total) and the compression object; returns (model, its domain,
    compression)."""
    mm = meta.get("model")
    if not isinstance(mm, dict):
        raise bad("model", "must be an object")
    mdomain = _sizes(bad, "model.domain", mm.get("domain"))
    if set(mdomain) != set(domain):
        raise bad("model.domain", "must have the columns of 'domain'")
    total = mm.get("total")
    if not (_is_number(total) and math.isfinite(total) and total > 0):
        raise bad("model.total", f"must be a finite number > 0 (got {total!r})")
    comp = meta.get("compression", {})
    if not isinstance(comp, dict):
        raise bad("compression", "must be an object")
    for a, size in domain.items():
        if a not in comp and mdomain[a] != size:
            raise bad(f"model.domain.{a}", f"is {mdomain[a]}, not {size} as in 'domain', and no compression maps it")
    return mm, mdomain, comp


def _check_potentials(bad: _Bad, cliques: Any, mdomain: dict, arrays: dict, expected: set[str]) -> None:
    """The cliques (distinct columns of the model's domain) and their potentials (finite real arrays of the
    clique's shape); adds the potentials' names to ``expected``."""
    if not isinstance(cliques, list):
        raise bad("model.cliques", "must be a list")
    for i, cl in enumerate(cliques):
        if not (
            isinstance(cl, list)
            and cl
            and all(isinstance(a, str) and a in mdomain for a in cl)
            and len(set(cl)) == len(cl)
        ):
            raise bad(f"model.cliques[{i}]", "must be a non-empty list of distinct columns of 'model.domain'")
        name = f"potential_{i}"
        expected.add(name)
        arr = arrays.get(name)
        if arr is None:
            raise bad(name, "is missing")
        shape = tuple(mdomain[a] for a in cl)
        if arr.dtype.kind not in "fiu":
            raise bad(name, f"must hold real numbers (got dtype {arr.dtype})")
        if arr.shape != shape:
            raise bad(name, f"has shape {arr.shape}, expected {shape} (clique {', '.join(cl)})")
        if not np.all(np.isfinite(arr)):
            raise bad(name, "holds NaN or infinite values")


def _check_compression(bad: _Bad, comp: dict, domain: dict, mdomain: dict, arrays: dict, expected: set[str]) -> None:
    """Every compression map: integer codes mapping the column's codes onto every compressed code."""
    for a, name in comp.items():
        if a not in domain:
            raise bad(f"compression.{a}", "is not a column of 'domain'")
        if not isinstance(name, str) or name not in arrays or name.startswith("potential_"):
            raise bad(f"compression.{a}", f"must name a compression array (got {name!r})")
        expected.add(name)
        m = arrays[name]
        if m.dtype.kind not in "iu" or m.shape != (domain[a],):
            raise bad(name, f"must be {domain[a]} integer codes (got dtype {m.dtype}, shape {m.shape})")
        k = mdomain[a]
        if m.size and (m.min() < 0 or m.max() >= k):
            raise bad(name, f"must hold codes in 0..{k - 1}")
        if np.unique(m).size != k:
            raise bad(name, f"must map onto every one of the {k} compressed codes of '{a}'")


def _check_decompression(bad: _Bad, meta: dict, comp: dict, domain: dict, arrays: dict, expected: set[str]) -> None:
    """Every decompression array: finite weights >= 0, one per code of a compressed column."""
    dec = meta.get("decompression", {})
    if not isinstance(dec, dict):
        raise bad("decompression", "must be an object")
    for a, name in dec.items():
        if a not in comp:
            raise bad(f"decompression.{a}", "is not a compressed column")
        if not isinstance(name, str) or name not in arrays or name in expected:
            raise bad(f"decompression.{a}", f"must name a decompression array (got {name!r})")
        expected.add(name)
        w = arrays[name]
        if w.dtype.kind not in "fiu" or w.shape != (domain[a],) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise bad(name, f"must be {domain[a]} finite weights >= 0 (got dtype {w.dtype}, shape {w.shape})")


def _check_schema(bad: _Bad, meta: dict, domain: dict) -> Schema | None:
    """The schema (None when the model has none); its domain must be the model's."""
    if not meta.get("schema"):
        return None
    try:
        schema = Schema.from_dict(meta["schema"])
    except InputError as exc:
        raise bad("schema", f"is invalid ({' '.join(str(exc).split())})") from None
    except Exception as exc:  # noqa: BLE001 - a tampered schema is bad input
        raise bad("schema", f"is invalid ({type(exc).__name__})") from None
    if schema.domain_dict() != domain:
        raise bad("schema", "does not describe the columns and sizes of 'domain'")
    return schema


def validate_payload(meta: dict[str, Any], arrays: dict[str, np.ndarray], source: str = "model") -> Schema | None:
    """Check a loaded model against itself before use; return its schema (or None).

    Every field is checked for type and consistency: the domains (positive integer sizes, the same
    columns), the cliques (columns of the model's domain), the total (finite, > 0), every potential
    (a finite real array of its clique's shape), every compression map (integer codes mapping the column's
    codes onto every compressed code), the schema (its domain is the model's), the ledger, parameters
    and facts (objects). No other array is accepted. A failure is an ``InputError`` naming the field."""

    def bad(name: str, what: str) -> InputError:
        return InputError(f"{source}: model field '{name}' {what}")

    domain = _check_header(bad, meta)
    mm, mdomain, comp = _check_model(bad, meta, domain)
    expected: set[str] = set()
    _check_potentials(bad, mm.get("cliques"), mdomain, arrays, expected)
    _check_compression(bad, comp, domain, mdomain, arrays, expected)
    _check_decompression(bad, meta, comp, domain, arrays, expected)
    extra = sorted(set(arrays) - expected)
    if extra:
        raise bad(extra[0], "is not part of the model")
    return _check_schema(bad, meta, domain)
