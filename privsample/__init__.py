"""privsample: differentially private sampling and synthetic data.

Data flows one way: raw table -> schema/encoding (``privsample.data``) -> marginal engine
(``privsample.marginals``, the only code that reads records) -> mechanisms that spend budget
through one accountant (``privsample.privacy``, ``privsample.synth``) -> model -> decoded synthetic records
-> evaluation (``privsample.evaluation``). The other mechanisms spend through the same accountant: private
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

Synthetic data: ``Synthesizer`` (fit once, sample at will), ``load`` (a saved model), ``synthesize`` (fit and
sample in one call). The domain: ``Schema`` (declared with ``Categorical`` and ``Numeric`` columns, drafted
NON-PRIVATELY with ``Schema.draft``, or discovered privately with ``Schema.discover``). Evaluation (NOT
private): ``evaluate`` returns an ``Evaluation``. The research samplers, each returning a ``Release`` (the
draws, the ``Ledger``, the guarantee): ``draw_kary``, ``draw_bernoulli``, ``draw_product`` (samplers from
distributions), ``cube_sample`` (noise-free sampling on the Boolean cube), ``mbde_sample`` (integrally private
MBDE). ``plan`` forecasts a fit (budget split, noise, time, memory) from the header alone, for ``rows=N`` or a
grid of assumed row counts. ``Budget`` (``Budget.create``/``Budget.open``): a privacy budget file that composes
releases from one dataset, passed as ``budget=`` to each of them. Bad input raises ``InputError`` before any
budget is spent. When private discovery keeps at most one value of a column, or bounds that clip more than 5% of
its values, the fit warns with ``DiscoveryLossWarning`` (the list: ``Synthesizer.losses``).
"""

from typing import TYPE_CHECKING, Any

from privsample._version import __version__
from privsample.errors import DataError, DiscoveryLossWarning, InputError

if TYPE_CHECKING:
    from privsample.api import Categorical, FreeText, Identifier, Numeric, Release, Schema, Synthesizer, load
    from privsample.api.plan import plan
    from privsample.api.cube import cube_sample
    from privsample.api.draws import draw_bernoulli, draw_kary, draw_product
    from privsample.api.mbde import mbde_sample
    from privsample.evaluation import Evaluation, evaluate
    from privsample.api.synthesizer import Synthesis, synthesize
    from privsample.privacy.budget import Budget
    from privsample.privacy.ledger import Ledger

_LAZY = {
    "Synthesizer": "privsample.api",
    "load": "privsample.api",
    "synthesize": "privsample.api",
    "Synthesis": "privsample.api",
    "Schema": "privsample.api",
    "Categorical": "privsample.api",
    "Numeric": "privsample.api",
    "Identifier": "privsample.api",
    "FreeText": "privsample.api",
    "evaluate": "privsample.evaluation",
    "Evaluation": "privsample.evaluation",
    "draw_kary": "privsample.api.draws",
    "draw_bernoulli": "privsample.api.draws",
    "draw_product": "privsample.api.draws",
    "cube_sample": "privsample.api.cube",
    "mbde_sample": "privsample.api.mbde",
    "Release": "privsample.api",
    "Ledger": "privsample.privacy.ledger",
    "Budget": "privsample.privacy.budget",
    "plan": "privsample.api.plan",
}

__all__ = [
    "Synthesizer",
    "load",
    "synthesize",
    "Synthesis",
    "Schema",
    "Categorical",
    "Numeric",
    "Identifier",
    "FreeText",
    "evaluate",
    "Evaluation",
    "draw_kary",
    "draw_bernoulli",
    "draw_product",
    "cube_sample",
    "mbde_sample",
    "Release",
    "Ledger",
    "Budget",
    "plan",
    "InputError",
    "DataError",
    "DiscoveryLossWarning",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """The API's heavy names (pandas, NumPy, Private-PGM), imported when first used."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'privsample' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
