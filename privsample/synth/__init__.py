"""Select-measure-generate synthesizers on Private-PGM: MST (and, later, AIM and PPSyn)."""

from privsample.synth.base import Synthesizer
from privsample.synth.model import SynthModel

METHODS = ("mst",)


def make_synthesizer(method: str, **kwargs) -> Synthesizer:
    """The synthesizer named ``method`` (one of METHODS)."""
    from privsample.errors import InputError

    if method == "mst":
        from privsample.synth.mst import MST

        return MST(**kwargs)
    raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")


__all__ = ["METHODS", "Synthesizer", "SynthModel", "make_synthesizer"]
