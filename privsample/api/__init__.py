"""The Python API, one module per family; ``privsample`` re-exports each public name lazily.

``synthesizer`` (``Synthesizer``, ``load``, ``synthesize``) over ``run`` (the main job, validated once) and
``accounting`` (its budget plan); ``schema`` (``Schema`` declared, drafted or privately discovered;
``Categorical``, ``Numeric``), and the research samplers, each returning a ``release.Release``: ``draws``
(``draw_kary``, ``draw_bernoulli``, ``draw_product``), ``cube`` (``cube_sample``), ``mbde`` (``mbde_sample``).
``options`` holds the checks of arguments they share."""

from privsample.api.cube import cube_sample
from privsample.api.draws import draw_bernoulli, draw_kary, draw_product
from privsample.api.mbde import mbde_sample
from privsample.api.release import Release
from privsample.api.schema import Categorical, FreeText, Identifier, Numeric, Schema
from privsample.api.synthesizer import OPTIONS, Synthesis, Synthesizer, load, synthesize

__all__ = [
    "Synthesizer",
    "Synthesis",
    "synthesize",
    "load",
    "Schema",
    "Categorical",
    "Numeric",
    "Identifier",
    "FreeText",
    "draw_kary",
    "draw_bernoulli",
    "draw_product",
    "cube_sample",
    "mbde_sample",
    "Release",
    "OPTIONS",
]
