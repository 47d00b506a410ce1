"""Benchmark: NumPy mirror descent (privsample/synth/numpy_md.py) against mbi's jitted estimator.

Why: the adaptive mechanisms refit a model with a new structure every round, and each new structure
costs JAX a compilation. This measures, in one run and one process, for a ring of four 3-way cliques
over 8 attributes of k values (k = 10, 20, 40, 70): mbi's first call (compile + run), its second call
on the same structure (run only), and the NumPy estimator, each for 100 iterations. It is where
``pgm.NUMPY_MAX_WORK`` (junction-tree cells x iterations) comes from.

    python benchmarks/numpy_md.py      # about a minute; results/numpy_md.md
"""

from __future__ import annotations

import time

from common import RESULTS
from freshness import stamp

ITERS = 100


def main() -> None:
    import numpy as np

    from privsample.synth import jtree, numpy_md, pgm

    rng = np.random.default_rng(0)
    lines = [
        "# NumPy mirror descent against mbi's JAX estimator (one run, 100 iterations)",
        "",
        "Ring of four 3-way cliques over 8 attributes with k values each, plus all one-way measurements.",
        "`first` = mbi's first call on a structure (XLA compilation + run), `cached` = its second call",
        "(run only), `numpy` = privsample/synth/numpy_md.py (nothing to compile).",
        "",
        "| k | junction-tree cells | mbi first (s) | mbi cached (s) | numpy (s) | numpy / first | numpy / cached |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in (10, 20, 40, 70):
        dom = pgm.Domain(list("abcdefgh"), [k] * 8)
        cls = [(a,) for a in dom.attributes] + [("a", "b", "c"), ("c", "d", "e"), ("e", "f", "g"), ("g", "h", "a")]
        ms = [pgm.LinearMeasurement(rng.uniform(0, 100, dom.size(c)), c, stddev=5.0) for c in cls]
        cells = jtree.tree_cells(dom, numpy_md.model_cliques(ms))
        times = []
        for backend in ("jax", "jax", "numpy"):
            t = time.perf_counter()
            m = pgm.estimate(dom, ms, known_total=1e5, iters=ITERS, backend=backend)
            np.asarray(m.marginals[m.cliques[0]].values)
            times.append(time.perf_counter() - t)
        first, cached, npy = times
        lines.append(
            f"| {k} | {cells} | {first:.2f} | {cached:.2f} | {npy:.2f} | {npy / first:.2f} | {npy / cached:.2f} |"
        )
        print(lines[-1], flush=True)
    (RESULTS / "numpy_md.md").write_text("\n".join(lines) + "\n")
    stamp(__file__, RESULTS / "numpy_md.md")


if __name__ == "__main__":
    main()
