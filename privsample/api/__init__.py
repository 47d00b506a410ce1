"""The Python API, one module per family: ``synthesizer`` (``Synthesizer``, ``load``) and ``release``
(``Release``, what the research samplers return). ``privsample`` re-exports each public name lazily."""

from privsample.api.draws import draw_bernoulli, draw_kary, draw_product
from privsample.api.release import Release
from privsample.api.synthesizer import OPTIONS, Synthesizer, load

__all__ = ["Synthesizer", "load", "Release", "OPTIONS"]
__all__ += ["draw_kary", "draw_bernoulli", "draw_product"]
