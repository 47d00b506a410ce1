"""privsample: differentially private sampling and synthetic data.

Data flows one way: raw table -> schema/encoding (``privsample.data``) -> marginal engine
(``privsample.marginals``, the only code that reads records) -> mechanisms that spend budget
through one accountant (``privsample.privacy``, ``privsample.synth``) -> model -> decoded synthetic records
-> evaluation (``privsample.evaluate``). The other mechanisms spend through the same accountant: private
sampling on the Boolean cube (``privsample.cube``), samplers from distributions (``privsample.samplers``)
and MBDE (``privsample.mbde``).

The Python API (imported on first use, so that ``import privsample`` stays light)::

    >>> import numpy as np, pandas as pd
    >>> import privsample
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"sex": rng.choice(["F", "M"], 2000), "age": rng.integers(17, 91, 2000)})
    >>> synth = privsample.Synthesizer("mst", epsilon=1).fit(df)  # (1, 1e-9)-DP, domain discovered privately
    >>> synth.sample(100).shape  # a pandas DataFrame; sampling costs no privacy
    (100, 2)
    >>> synth.ledger["summary"]["private"]  # what the fit spent, step by step: synth.ledger["entries"]
    True

``data`` may also be a pyarrow Table, a polars DataFrame or a CSV/Parquet path. ``synth.save("model.zip")``
writes the model as ``privsample synth --save-model`` does; ``privsample.load("model.zip")`` reads it back.

``Synthesizer`` (fit once, sample at will), ``load`` (a saved model), ``synthesize`` (fit and sample in one
call), ``Schema`` (the public description of the columns) and ``InputError`` (raised for bad input, before any
budget is spent).
"""

from typing import TYPE_CHECKING, Any

from privsample._version import __version__
from privsample.errors import InputError

if TYPE_CHECKING:
    from privsample.api import Release, Synthesizer, load
    from privsample.api.draws import draw_bernoulli, draw_kary, draw_product
    from privsample.data.schema import Schema
    from privsample.pipeline import synthesize
    from privsample.privacy.ledger import Ledger

_LAZY = {
    "Synthesizer": "privsample.api",
    "load": "privsample.api",
    "Release": "privsample.api",
    "synthesize": "privsample.pipeline",
    "Schema": "privsample.data.schema",
    "Ledger": "privsample.privacy.ledger",
    "draw_kary": "privsample.api.draws",
    "draw_bernoulli": "privsample.api.draws",
    "draw_product": "privsample.api.draws",
}

__all__ = ["Synthesizer", "load", "synthesize", "Schema", "Ledger", "Release", "InputError", "__version__"]
__all__ += ["draw_kary", "draw_bernoulli", "draw_product"]


def __getattr__(name: str) -> Any:
    """The API's heavy names (pandas, NumPy, Private-PGM), imported when first used."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'privsample' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
