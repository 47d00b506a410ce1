"""Select-measure-generate synthesizers on Private-PGM: MST, AIM (and PPSyn); ``registry`` names them."""

from privsample.synth.base import Synthesizer
from privsample.synth.model import SynthModel
from privsample.synth.registry import METHODS, make_synthesizer

__all__ = ["METHODS", "Synthesizer", "SynthModel", "make_synthesizer"]
