"""The privacy guarantee of a release, read from its model or its ledger, to show beside its errors.

A saved model (``synth --save-model``: ``model.json`` holds the mechanism, its parameters and the ledger), a
fitted model in memory, or a ledger alone (``Accountant.to_dict()``, or a model's ``model.json``) gives the
ledger and a summary of the guarantee: method, target (ε, δ), the ε spent and whether the noise was secure.
These are public figures of the release (fixed by its budget and parameters); the evaluation they are shown
beside is not.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Mapping

from privsample.errors import InputError

__all__ = ["load_guarantee", "model_guarantee", "ledger_guarantee", "guarantee_of", "guarantee_text"]


def guarantee_of(led: Any, method: str | None, params: Mapping[str, Any] | None, source: str) -> dict[str, Any]:
    """``guarantee`` of the ledger ``led`` (a dict with ``summary`` and ``entries``): source, method, the
    target ε and δ, the ε and ρ spent, the budget, the neighbouring relation and whether it is private.

    ``InputError`` when ``led`` is not a valid ledger."""
    from privsample.privacy.accountant import Accountant

    params = params or {}
    try:
        acc = Accountant.from_dict(led)
    except Exception:  # noqa: BLE001 - any malformed ledger is bad input
        raise InputError(
            f"{source} holds no valid privacy ledger (expected 'summary' with rho_total and 'entries')"
        ) from None
    s = led["summary"]
    target = s.get("target_epsilon_delta")
    eps, dlt = (target[0], target[1]) if target else (params.get("epsilon"), params.get("delta"))
    private = bool(s.get("private", True)) and acc.private and not params.get("unsafe", False)
    return {
        "source": str(source),
        "method": method or "not recorded in the ledger",
        "epsilon": eps,
        "delta": dlt,
        "epsilon_spent": acc.epsilon_spent(dlt if dlt is not None else None),
        "rho_spent": acc.spent,
        "rho_total": acc.rho_total,
        "neighbouring": s.get("neighbouring", "add/remove one record"),
        "private": private,
    }


def model_guarantee(model: Any) -> tuple[dict, dict]:
    """(ledger, guarantee) of a model: a saved one (a path: folder or ``.zip``), a ``SynthModel``, or any
    object holding one as ``.model`` (a fitted ``privsample.Synthesizer``). When the model's schema was
    discovered privately, the guarantee also holds ``discovery_losses``: what discovery lost, one dict
    (``column``, ``what``, ``advice``) per ``privsample.data.discovery_report.discovery_losses`` entry
    (post-processing of the released schema)."""
    from privsample.data.schema import Schema
    from privsample.synth.model import SynthModel

    if isinstance(model, (str, os.PathLike)):
        meta = SynthModel.read_meta(model)
        led, method, params = meta.get("ledger"), meta.get("mechanism"), meta.get("params") or {}
        g = guarantee_of(led, method, params, str(model))
        try:
            schema = Schema.from_dict(meta["schema"]) if isinstance(meta.get("schema"), dict) else None
        except Exception:  # noqa: BLE001 - a schema that does not read shows no losses; loading it refuses it
            schema = None
        return led, _with_losses(g, schema)
    # a fitted Synthesizer holds its SynthModel as .model (an unfitted one raises InputError there)
    inner = model if isinstance(model, SynthModel) else getattr(model, "model", None)
    if not isinstance(inner, SynthModel):
        raise InputError(
            "model must be a fitted Synthesizer, a SynthModel or a saved model (folder or .zip), "
            f"not {type(model).__name__}"
        )
    led = copy.deepcopy(dict(inner.ledger))
    return led, _with_losses(guarantee_of(led, inner.mechanism, inner.params, "the given model"), inner.schema)


def _with_losses(g: dict[str, Any], schema: Any) -> dict[str, Any]:
    """``g`` with ``discovery_losses`` when ``schema`` was discovered privately."""
    from privsample.data.discovery_report import discovery_losses

    if schema is not None and getattr(schema, "provenance", None) == "private":
        g["discovery_losses"] = [
            {"column": x.column, "what": x.what, "advice": x.advice} for x in discovery_losses(schema)
        ]
    return g


def ledger_guarantee(ledger: Any) -> tuple[dict, dict]:
    """(ledger, guarantee) of a ledger: a dict (``summary`` and ``entries``, or a model's ``model.json``
    holding one as ``ledger``) or a JSON file of one."""
    if isinstance(ledger, (str, os.PathLike)):
        source = str(ledger)
        try:
            doc = json.loads(Path(ledger).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"ledger not found: {ledger}") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InputError(
                f"cannot read ledger {ledger}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from None
    elif isinstance(ledger, Mapping):
        source, doc = "the given ledger", ledger
    else:
        raise InputError(f"ledger must be a ledger (a dict) or a JSON file of one, not {type(ledger).__name__}")
    if isinstance(doc, Mapping) and isinstance(doc.get("ledger"), Mapping):  # a model's model.json
        led, method, params = dict(doc["ledger"]), doc.get("mechanism"), doc.get("params") or {}
    else:
        led, method, params = (dict(doc) if isinstance(doc, Mapping) else doc), None, {}
    return led, guarantee_of(led, method, params, source)


def load_guarantee(model: Any = None, ledger: Any = None) -> tuple[dict | None, dict | None]:
    """(ledger, guarantee) from a model (``model_guarantee``) or a ledger (``ledger_guarantee``); (None, None)
    without either. Both at once is an ``InputError``."""
    if model is not None and ledger is not None:
        raise InputError("model and ledger both give the ledger: pass one of them")
    if model is not None:
        return model_guarantee(model)
    if ledger is not None:
        return ledger_guarantee(ledger)
    return None, None


def guarantee_text(g: Mapping[str, Any]) -> str:
    """One line: the release's method and (ε, δ) guarantee, or that it carries none."""
    eps = "ε not recorded" if g["epsilon"] is None else f"ε={g['epsilon']:g}"
    dlt = "" if g["delta"] is None else f", δ={g['delta']:g}"
    head = f"release guarantee ({Path(g['source']).name}): {g['method']}, target {eps}{dlt}"
    if not g["private"]:
        return head + "; NOT PRIVATE: seeded or unsafe settings were used"
    return head + f"; spent ε={g['epsilon_spent']:.4g} ({g['neighbouring']})"
