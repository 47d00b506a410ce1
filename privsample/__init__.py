"""privsample: differentially private sampling and synthetic data.

Data flows one way: raw table -> schema/encoding (``privsample.data``) -> marginal engine
(``privsample.marginals``, the only code that reads records) -> mechanisms that spend budget
through one accountant (``privsample.privacy``, ``privsample.synth``) -> model -> decoded synthetic records
-> evaluation (``privsample.evaluate``). The other mechanisms spend through the same accountant: private
sampling on the Boolean cube (``privsample.cube``), samplers from distributions (``privsample.samplers``)
and MBDE (``privsample.mbde``).
"""

from privsample._version import __version__

__all__ = ["__version__"]
