"""privsample: differentially private sampling and synthetic data.

Data flows one way: raw table -> schema/encoding (``privsample.data``) -> marginal engine
(``privsample.marginals``, the only code that reads records) -> mechanisms that spend budget
through one accountant (``privsample.privacy``, ``privsample.synth``, ``privsample.sampling``)
-> model -> decoded synthetic records -> evaluation (``privsample.evaluate``).
"""

from privsample._version import __version__

__all__ = ["__version__"]
