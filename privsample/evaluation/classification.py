"""Classification utility as in the PPSyn evaluation (Zhang, Deng and Yin 2023, Section 5.2.1; PrivMRF's
protocol).

Train StandardScaler + SVC(rbf, gamma="auto") on synthetic rows (at most ``max_train`` rows,
seeded subsample), features = all other attributes' integer codes, and report the
misclassification rate on real held-out rows. A synthetic target with one class predicts it.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np


def misclassification(
    train: Mapping[str, np.ndarray],
    test: Mapping[str, np.ndarray],
    target: str,
    *,
    max_train: int = 10_000,
    seed: int = 0,
) -> float:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    feats = [a for a in train if a != target]
    X = np.column_stack([np.asarray(train[a], float) for a in feats])
    y = np.asarray(train[target])
    Xt = np.column_stack([np.asarray(test[a], float) for a in feats])
    yt = np.asarray(test[target])
    if len(y) > max_train:
        idx = np.random.default_rng(seed).choice(len(y), max_train, replace=False)
        X, y = X[idx], y[idx]
    classes = np.unique(y)
    if classes.size < 2:
        pred = np.full(len(yt), classes[0] if classes.size else 0)
    else:
        clf = make_pipeline(StandardScaler(), SVC(kernel="rbf", gamma="auto"))
        pred = clf.fit(X, y).predict(Xt)
    return float(np.mean(pred != yt))


def five_folds(n: int, seed: int = 0, k: int = 5) -> list[np.ndarray]:
    """Shuffle (seeded) and split row indices into k folds."""
    perm = np.random.default_rng(seed).permutation(n)
    return np.array_split(perm, k)
