"""Select-measure-generate synthesizers on Private-PGM: MST, AIM (and PPSyn)."""

from privsample.synth.base import Synthesizer
from privsample.synth.model import SynthModel

METHODS = ("ppsyn", "aim", "mst", "ppsyn-paper")


def make_synthesizer(method: str, **kwargs) -> Synthesizer:
    """The synthesizer named ``method`` (one of METHODS)."""
    from privsample.errors import InputError

    if method == "mst":
        from privsample.synth.mst import MST

        return MST(**kwargs)
    if method == "aim":
        from privsample.synth.aim import AIM

        return AIM(**kwargs)
    if method in ("ppsyn", "ppsyn-paper"):
        from privsample.synth.ppsyn import PPSyn

        return PPSyn(mode="paper" if method == "ppsyn-paper" else "dp", **kwargs)
    raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")


__all__ = ["METHODS", "Synthesizer", "SynthModel", "make_synthesizer"]
