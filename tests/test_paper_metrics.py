"""Range-query and classification metrics of the PPSyn evaluation protocol."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privsample.evaluation.classification import five_folds, misclassification
from privsample.evaluation.range_queries import answer, range_query_mse, range_workload
from privsample.marginals import NumpyEngine
from tests.conftest import shared_file


def adult_engine():
    """Discretised Adult (benchmark data) with its public domain; skips the test where the data are absent."""
    import json

    import pandas as pd

    from privsample.synth import pgm

    sizes = json.loads(shared_file("adult-domain.json").read_text())
    df = pd.read_csv(shared_file("adult.csv"))
    return NumpyEngine(
        {a: df[a].to_numpy().astype("int64") for a in sizes}, pgm.Domain(list(sizes), [int(v) for v in sizes.values()])
    )


def test_adult_size_limit_gives_the_papers_210_and_37():
    eng = adult_engine()
    dom = eng.domain
    n3 = sum(dom.size(c) <= 10_000 for c in itertools.combinations(dom.attributes, 3))
    n5 = sum(dom.size(c) <= 10_000 for c in itertools.combinations(dom.attributes, 5))
    assert (n3, n5) == (210, 37)
    q = range_workload(dom, 3, 210)
    assert len(q) == 2100 and all(lo <= hi for r in q for lo, hi in zip(r.lo, r.hi))
    assert range_workload(dom, 3, 210) == q  # fixed public seeds


def test_range_answers_are_box_fractions():
    rng = np.random.default_rng(0)
    from privsample.synth import pgm

    dom = pgm.Domain(["a", "b"], [4, 5])
    codes = {"a": rng.integers(0, 4, 500), "b": rng.integers(0, 5, 500)}
    eng = NumpyEngine(codes, dom)
    qs = range_workload(dom, 2, 1, per_combination=20)
    got = answer(eng, qs)
    for q, g in zip(qs, got):
        inside = np.ones(500, bool)
        for a, lo, hi in zip(q.clique, q.lo, q.hi):
            inside &= (codes[a] >= lo) & (codes[a] <= hi)
        assert g == pytest.approx(inside.mean())
    assert range_query_mse(eng, eng, qs) == 0.0


def test_misclassification_protocol():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, 2000)
    data = {"x": x, "noise": rng.integers(0, 3, 2000), "y": (x >= 2).astype(int)}
    folds = five_folds(2000)
    test_idx = folds[0]
    train = {k: np.delete(v, test_idx) for k, v in data.items()}
    test = {k: v[test_idx] for k, v in data.items()}
    assert misclassification(train, test, "y") < 0.02
    const = dict(train, y=np.zeros_like(train["y"]))
    assert misclassification(const, test, "y") == pytest.approx(np.mean(test["y"] != 0))
