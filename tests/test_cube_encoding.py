"""Boolean-cube encoding (privsample/cube/encoding.py): layout, coefficients through the engine, decoding."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privsample.cube.encoding import CubeEncoding, valid_fraction_uniform
from privsample.errors import InputError
from privsample.marginals import NumpyEngine
from privsample.synth import pgm


def _table(n=500, seed=0):
    rng = np.random.default_rng(seed)
    dom = pgm.Domain(["bin", "cat", "one", "num"], [2, 4, 1, 3])
    codes = {
        "bin": rng.integers(0, 2, n),
        "cat": rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05]),
        "one": np.zeros(n, np.int64),
        "num": rng.integers(0, 3, n),
    }
    return dom, codes


def _subsets(p, d):
    return [()] + [J for t in range(1, d + 1) for J in itertools.combinations(range(p), t)]


def test_layout_binary_one_bit_categorical_one_hot_constant_no_bit():
    dom, _ = _table()
    enc = CubeEncoding.from_domain(dom)
    assert enc.p == 1 + 4 + 0 + 3
    assert enc.offsets == [0, 1, 5, 5]
    assert enc.bit_names() == ["bin", "cat=0", "cat=1", "cat=2", "cat=3", "num=0", "num=1", "num=2"]
    assert valid_fraction_uniform(enc) == pytest.approx(4 / 16 * 3 / 8)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_coefficients_from_marginals_equal_the_direct_sums(d):
    dom, codes = _table()
    enc = CubeEncoding.from_domain(dom)
    X = enc.encode(codes).astype(float)
    subsets = _subsets(enc.p, d)
    direct = np.array([np.prod(X[:, list(J)], axis=1).mean() if J else 1.0 for J in subsets])
    got = enc.coefficients(NumpyEngine(codes, dom), d, subsets)
    np.testing.assert_allclose(got, direct, atol=1e-12)


def test_decode_round_trip_and_invalid_rows():
    dom, codes = _table(50)
    enc = CubeEncoding.from_domain(dom)
    X = enc.encode(codes)
    back, valid = enc.decode(X, np.random.default_rng(0))
    assert valid.all()
    for c in dom.attributes:
        np.testing.assert_array_equal(back[c], codes[c])
    bad = X.copy()
    bad[0, 1:5] = -1  # no category set: repaired to any code
    bad[1, 1:5] = [1, -1, 1, -1]  # two set: repaired to one of them
    fixed, valid = enc.decode(bad, np.random.default_rng(0))
    assert list(valid[:3]) == [False, False, True]
    assert fixed["cat"][1] in (0, 2) and 0 <= fixed["cat"][0] < 4
    dropped, _ = enc.decode(bad, np.random.default_rng(0), invalid="drop")
    assert len(dropped["cat"]) == 48
    with pytest.raises(InputError):
        enc.decode(bad[:, :3], np.random.default_rng(0))
