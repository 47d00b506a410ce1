"""The synthesis methods and the rules of their options, in one place.

``METHODS`` names them; ``make_synthesizer`` builds one; ``method_options`` checks a method's options (the
command line's flags, the Python API's keywords) and refuses an unsafe or unsupported combination with one
``InputError`` naming the option as the caller wrote it (``privsample.checks``). The rules read public
arguments only. ``PUBLIC_ONLY``: the methods that take a public table.
"""

from __future__ import annotations

from typing import Any

from privsample.checks import OptionName, check_choice, check_count, check_fraction, check_number, python_option
from privsample.errors import InputError
from privsample.synth.base import Synthesizer
from privsample.synth.public import PUBLIC_ONLY

METHODS = ("ppsyn", "aim", "mst", "ppsyn-paper")
DEFAULT_MAX_MEMORY_MB = 8192.0
OPTIONS = (
    "iters",
    "workload",
    "max_model_size",
    "eta",
    "schedule",
    "max_candidates",
    "max_memory_mb",
    "unsafe_as_published",
)
METHOD_OPTIONS = {  # the options each method takes: the rules below look them up here and refuse the others by name
    "mst": ("iters", "max_memory_mb"),
    "aim": ("iters", "workload", "max_model_size", "max_memory_mb"),
    "ppsyn": ("iters", "workload", "max_model_size", "schedule", "max_candidates", "eta", "max_memory_mb"),
    "ppsyn-paper": ("iters", "workload", "max_model_size", "eta", "max_memory_mb", "unsafe_as_published"),
}


def synthesizer_class(method: str) -> type[Synthesizer]:
    """The class of ``method``'s synthesizer (``ppsyn`` and ``ppsyn-paper`` are modes of ``PPSyn``)."""
    if method == "mst":
        from privsample.synth.mst import MST

        return MST
    if method == "aim":
        from privsample.synth.aim import AIM

        return AIM
    if method in ("ppsyn", "ppsyn-paper"):
        from privsample.synth.ppsyn import PPSyn

        return PPSyn
    raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")


def make_synthesizer(method: str, **kwargs) -> Synthesizer:
    """The synthesizer named ``method`` (one of METHODS), with its options (``method_options``' output)."""
    if method in ("ppsyn", "ppsyn-paper"):
        kwargs["mode"] = "paper" if method == "ppsyn-paper" else "dp"
    return synthesizer_class(method)(**kwargs)


AUTO = "auto"  # chosen by the run from public quantities and a noisy row count (``privsample.api.choice``)
STAND_IN = "mst"  # the synthesizer ``auto``'s checks before any spend use (the widest, the smallest model)


def check_method(method: Any, name: OptionName = python_option) -> str:
    """``method`` one of ``METHODS`` or ``AUTO``."""
    return check_choice(method, (*METHODS, AUTO), "method", name)


def method_options(method: str, name: OptionName = python_option, research: bool = False, **options: Any) -> dict:
    """Keyword options for ``make_synthesizer`` from the method's options, or ``InputError`` for an unknown
    option, a bad value, or an option the method does not take. Applied to its own output it returns it.

    ``workload``: cliques as text ('a,b;c,d', columns by ',', cliques by ';') or a sequence of column tuples (or
    of (columns, weight) pairs). ``max_memory_mb``: default ``DEFAULT_MAX_MEMORY_MB``. ``research``: other
    keywords of the method's constructor (e.g. ``rounds``) are passed on unchecked, for experiments."""
    extra = {k: v for k, v in options.items() if k not in OPTIONS}
    if method == AUTO:
        one = [
            k for k in ("workload", "max_model_size", "schedule", "max_candidates", "eta") if options.get(k) is not None
        ] + (["unsafe_as_published"] if options.get("unsafe_as_published") else [])
        if one or extra:
            raise InputError(
                f"{name((one or sorted(extra))[0])} belongs to one method: with {name('method')} auto only "
                f"{name('iters')} and {name('max_memory_mb')} apply (name the method to set it)"
            )
        method = STAND_IN  # the options every method takes
    unknown = sorted(set(extra) - (constructor_keywords(method) if research else set()))
    if unknown:
        takes = ", ".join(name(k) for k in METHOD_OPTIONS[method])
        raise InputError(f"unknown option(s) {', '.join(unknown)} ({method} takes: {takes})")
    o = {k: options.get(k) for k in OPTIONS}
    if o["unsafe_as_published"] and not takes_option(method, "unsafe_as_published"):
        raise InputError(f"{name('unsafe_as_published')} applies to ppsyn-paper, not {method}")
    if method == "ppsyn-paper" and not o["unsafe_as_published"]:
        raise InputError(
            f"{name('method')} ppsyn-paper runs the published PPSyn, which is NOT differentially private; "
            f"add {name('unsafe_as_published')} to run it for reproduction only"
        )
    max_memory_mb = DEFAULT_MAX_MEMORY_MB if o["max_memory_mb"] is None else o["max_memory_mb"]
    check_number(max_memory_mb, "max_memory_mb", name, positive=True)
    iters, max_candidates = (
        check_count(o["iters"], "iters", name),
        check_count(o["max_candidates"], "max_candidates", name),
    )
    if o["max_model_size"] is not None:
        check_number(o["max_model_size"], "max_model_size", name, positive=True)
    if o["eta"] is not None:
        check_fraction(o["eta"], "eta", name)
    from privsample.synth.ppsyn import SCHEDULES

    schedule = o["schedule"]
    if schedule is not None and schedule not in SCHEDULES:
        raise InputError(f"{name('schedule')} must be one of {', '.join(SCHEDULES)} (got {schedule!r})")
    opts: dict = {"max_memory_mb": max_memory_mb}
    if iters is not None:
        opts["iters"] = iters
    opts.update(_workload_options(method, o["workload"], o["max_model_size"], name))
    opts.update(_ppsyn_options(method, schedule, max_candidates, o["eta"], name))
    return {**opts, **extra}


def constructor_keywords(method: str) -> set[str]:
    """The keywords the constructor of ``method``'s synthesizer takes (``mode`` is the method's own)."""
    import inspect

    params = inspect.signature(synthesizer_class(method).__init__).parameters
    return {p for p in params if p not in ("self", "mode")}


def takes_option(method: str, option: str) -> bool:
    """Whether ``method`` takes ``option`` (``METHOD_OPTIONS``; an unknown method takes none)."""
    return option in METHOD_OPTIONS.get(method, ())


def _workload_options(method: str, workload, max_model_size, name: OptionName) -> dict:
    """``workload`` and ``max_model_size``, for the methods that take them."""
    if (workload is not None and not takes_option(method, "workload")) or (
        max_model_size is not None and not takes_option(method, "max_model_size")
    ):
        raise InputError(f"{name('workload')}/{name('max_model_size')} apply to aim and ppsyn, not {method}")
    opts: dict = {}
    if workload is not None:
        opts["workload"] = parse_workload(workload, name) if isinstance(workload, str) else _workload(workload, name)
    if max_model_size is not None:
        opts["max_model_size"] = max_model_size
    return opts


def _ppsyn_options(method: str, schedule, max_candidates, eta, name: OptionName) -> dict:
    """PPSyn's ``schedule``, ``max_candidates`` and ``eta``, where its schedule uses them: a method that takes a
    ``schedule`` uses ``max_candidates`` only with the annealed one and ``eta`` only with ``note``."""
    scheduled = takes_option(method, "schedule")
    opts: dict = {}
    if schedule is not None:
        if not scheduled:
            raise InputError(f"{name('schedule')} applies to ppsyn, not {method}")
        opts["schedule"] = schedule
    if max_candidates is not None:
        if not takes_option(method, "max_candidates"):
            raise InputError(f"{name('max_candidates')} applies to ppsyn, not {method}")
        if schedule == "note":
            raise InputError(
                f"{name('max_candidates')} applies to ppsyn's annealed schedule, not {name('schedule')} note"
            )
        opts["max_candidates"] = max_candidates
    if eta is not None:
        if not takes_option(method, "eta") or (scheduled and schedule != "note"):
            raise InputError(
                f"{name('eta')} sets the budget rule of 'ppsyn {name('schedule')} note' and of ppsyn-paper; "
                f"{method}{' (annealed schedule)' if scheduled else ''} does not use it"
            )
        opts["eta"] = eta
    return opts


def parse_workload(text: str, name: OptionName = python_option) -> list[tuple[tuple[str, ...], float]]:
    """'a,b;c,d' -> [(('a','b'), 1.0), (('c','d'), 1.0)]."""
    out = []
    for part in text.split(";"):
        cols = tuple(c.strip() for c in part.split(",") if c.strip())
        if cols:
            out.append((cols, 1.0))
    if not out:
        raise InputError(f"{name('workload')} '{text}' names no cliques")
    return out


def _workload(cliques, name: OptionName) -> list[tuple[tuple[str, ...], float]]:
    """A workload given as a sequence of column tuples (or of (columns, weight) pairs)."""
    out = []
    try:
        for c in cliques:
            if len(c) == 2 and not isinstance(c[0], str) and isinstance(c[1], (int, float)):
                cols, weight = tuple(c[0]), float(c[1])
            else:
                cols, weight = tuple(c), 1.0
            if not cols or not all(isinstance(x, str) for x in cols):
                raise TypeError
            out.append((cols, weight))
    except TypeError:
        raise InputError(
            f"{name('workload')} must be text ('a,b;c,d') or a list of column tuples, not {cliques!r}"
        ) from None
    if not out:
        raise InputError(f"{name('workload')} names no cliques")
    return out


__all__ = [
    "AUTO",
    "STAND_IN",
    "METHODS",
    "OPTIONS",
    "METHOD_OPTIONS",
    "PUBLIC_ONLY",
    "DEFAULT_MAX_MEMORY_MB",
    "make_synthesizer",
    "check_method",
    "method_options",
    "parse_workload",
]
