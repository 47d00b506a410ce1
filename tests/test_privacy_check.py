"""The empirical privacy check of ``evaluate --holdout`` (NOT private): distances to closest record, the
membership-inference AUC and its DeLong interval, the train-released baseline, and bad holdouts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privsample
from privsample import InputError
from privsample.cli import main
from privsample.evaluation import privacy_check as P
from privsample.evaluation.tables import real_domain


def _draw(n: int, seed: int) -> pd.DataFrame:
    """A mixed table: integers, a category, floats with missing values, a category with 100 values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).round(2).astype(object)
    x[rng.random(n) < 0.05] = None
    return pd.DataFrame(
        {
            "age": rng.integers(17, 91, n),
            "sex": rng.choice(["F", "M"], n),
            "score": x,
            "city": rng.choice([f"c{i}" for i in range(100)], n),
            "job": rng.choice(["a", "b", "c", None], n),
        }
    )


def _brute_gower(q: pd.DataFrame, r: pd.DataFrame, code: P.Coding) -> np.ndarray:
    """The module's distance written out record by record (the reference for ``dcr``)."""
    out = []
    for _, a in q.iterrows():
        best = np.inf
        for _, b in r.iterrows():
            tot = 0.0
            for name, kind, (lo, hi) in zip(code.names, code.kinds, code.bounds):
                u, v = a[name], b[name]
                if kind == "numeric":
                    mu, mv = pd.isna(u), pd.isna(v)
                    if mu or mv:
                        tot += 0.0 if (mu and mv) else 1.0
                    else:
                        su = min(max((float(u) - lo) / (hi - lo), 0.0), 1.0)
                        sv = min(max((float(v) - lo) / (hi - lo), 0.0), 1.0)
                        tot += abs(su - sv)
                else:
                    same = (pd.isna(u) and pd.isna(v)) or (not pd.isna(u) and not pd.isna(v) and str(u) == str(v))
                    tot += 0.0 if same else 1.0
            best = min(best, tot / len(code.names))
        out.append(best)
    return np.array(out)


def _dcr(q: pd.DataFrame, r: pd.DataFrame, code: P.Coding) -> np.ndarray:
    parts = P._encode(code, [q, r])
    mq, mr = P._matrix(parts[0], len(q)), P._matrix(parts[1], len(r))
    nv = [int(max(a.max(), b.max())) + 1 for a, b in zip(parts[0][1], parts[1][1])]
    return P.dcr(mq, mr, len(parts[0][0]), len(code.names), nv)[0]


def test_dcr_is_the_gower_distance_exactly_whatever_the_chunks(monkeypatch):
    real, other = _draw(60, 1), _draw(40, 2)
    code = P.coding(real_domain(real))
    assert code.kinds == ("numeric", "categorical", "numeric", "categorical", "categorical")
    expected = _brute_gower(other, real, code)
    np.testing.assert_allclose(_dcr(other, real, code), expected, atol=1e-12)
    monkeypatch.setattr(P, "WORK_ELEMENTS", 7)  # one query row at a time
    monkeypatch.setattr(P, "BLOCK", 9)  # reference blocks of 9 rows (the last one shorter)
    monkeypatch.setattr(P, "ONE_HOT_MAX", 2)  # city and job compared directly, sex by the product
    np.testing.assert_allclose(_dcr(other, real, code), expected, atol=1e-12)
    assert np.all(_dcr(real, real, code) == 0)
    monkeypatch.undo()
    np.testing.assert_allclose(_dcr(real, other, code), _brute_gower(real, other, code), atol=1e-12)
    parts = P._encode(code, [other, real])
    nv = [int(max(a.max(), b.max())) + 1 for a, b in zip(parts[0][1], parts[1][1])]
    both = P.dcr(P._matrix(parts[0], 40), P._matrix(parts[1], 60), len(parts[0][0]), len(code.names), nv)
    np.testing.assert_allclose(both[1], _brute_gower(real, other, code), atol=1e-12)  # the other way, same pass


def test_delong_on_a_case_worked_by_hand():
    # placements of the positives: 1, 1, 1/2 (0.4 ties 0.4); of the negatives: 2/3, 5/6, 1
    auc, se, lo, hi = P.delong_auc([0.9, 0.8, 0.4], [0.5, 0.4, 0.1])
    assert auc == pytest.approx(2.5 / 3)
    s10, s01 = np.var([1, 1, 0.5], ddof=1), np.var([2 / 3, 5 / 6, 1], ddof=1)  # 1/12 and 1/36
    assert se == pytest.approx(np.sqrt(s10 / 3 + s01 / 3)) and se == pytest.approx(np.sqrt(1 / 27))
    assert lo == pytest.approx(max(0.0, auc - 1.959963984540054 * se)) and hi == 1.0


def test_delong_matches_the_definition_and_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 8, 70).astype(float), rng.integers(0, 6, 90).astype(float)
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    se = np.sqrt(np.var(v10, ddof=1) / len(x) + np.var(v01, ddof=1) / len(y))
    auc, got_se, _, _ = P.delong_auc(x, y)
    assert auc == pytest.approx(psi.mean()) and auc == pytest.approx(roc_auc_score([1] * 70 + [0] * 90, [*x, *y]))
    assert got_se == pytest.approx(se)


def test_delong_interval_covers_a_known_auc():
    from scipy.stats import norm

    true = norm.cdf(0.5 / np.sqrt(2))  # X ~ N(0.5, 1) above Y ~ N(0, 1)
    rng = np.random.default_rng(4)
    covered = [lo <= true <= hi for lo, hi in (P.delong_auc(rng.normal(0.5, 1, 400), rng.normal(0, 1, 400))[2:]
                                               for _ in range(200))]  # fmt: skip
    assert 0.90 <= np.mean(covered) <= 0.99  # nominal 95%


def test_baseline_gives_auc_near_one_and_an_independent_sample_near_half():
    real, holdout, synthetic = _draw(1500, 1), _draw(1500, 2), _draw(1500, 3)
    pc = P.privacy_check(real, synthetic, holdout, P.coding(real_domain(real)))
    b, s = pc.baseline, pc.synthetic
    assert np.all(b.dcr_train == 0) and b.as_dict()["dcr_train_median"] == 0
    assert b.auc > 0.98 and b.share > 0.98
    assert s.auc_low <= 0.5 <= s.auc_high and abs(s.share - 0.5) < 0.05
    assert pc.subsampled is None and pc.n_used == 1500
    assert list(pc.table["released"]) == [P.RELEASED, P.BASELINE]


def test_the_larger_side_is_subsampled_with_a_fixed_seed():
    real, holdout, synthetic = _draw(500, 1), _draw(300, 2), _draw(200, 3)
    code = P.coding(real_domain(real))
    a, b = (P.privacy_check(real, synthetic, holdout, code) for _ in range(2))
    assert a.subsampled == "REAL" and a.n_used == 300 and "REAL subsampled from 500 to 300, seed 0" in a.sizes
    assert a.table.equals(b.table)
    c = P.privacy_check(holdout, synthetic, real, code)
    assert c.subsampled == "HOLDOUT" and c.n_used == 300


def test_evaluate_with_a_holdout_reports_the_check_everywhere_and_nothing_changes_without(tmp_path):
    real, holdout, synthetic = _draw(300, 1), _draw(300, 2), _draw(200, 3)
    ev = privsample.evaluate(real, synthetic, holdout=holdout, workload=1)
    assert ev.privacy is not None and "empirical privacy check" in repr(ev)
    assert "Empirical privacy check" in ev._repr_html_() and "Empirical privacy check" in ev.to_html()
    plain = privsample.evaluate(real, synthetic, workload=1)
    assert plain.privacy is None and "privacy check" not in plain.to_html()
    assert plain.errors.equals(ev.errors)


def _run(argv, capsys) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_holdout(tmp_path, capsys):
    real, holdout, synthetic = _draw(200, 1), _draw(200, 2), _draw(150, 3)
    paths = {}
    for name, df in (("real", real), ("holdout", holdout), ("syn", synthetic)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    code, out, _ = _run(["evaluate", paths["real"], paths["syn"], "--holdout", paths["holdout"], "-w", "1"], capsys)
    flat = " ".join(out.split())  # the table wraps its cells
    assert code == 0 and "Empirical privacy" in flat and "baseline:" in out and "attack AUC" in flat
    assert "Evidence, not a guarantee" in flat and "NOT PRIVATE" in flat
    report = tmp_path / "r.html"
    code, _, _ = _run(["evaluate", paths["real"], paths["syn"], "--holdout", paths["holdout"], "-r", report], capsys)
    assert code == 0 and "Empirical privacy check" in report.read_text()

    bad = {
        "missing": holdout.drop(columns=["city"]),
        "extra": holdout.assign(zip="x"),
        "text": holdout.assign(age="old"),
    }
    for name, df in bad.items():
        path = tmp_path / f"bad_{name}.csv"
        df.to_csv(path, index=False)
        code, out, err = _run(["evaluate", paths["real"], paths["syn"], "--holdout", path, "-w", "1"], capsys)
        lines = [x for x in err.splitlines() if x.startswith("error")]
        assert code == 2 and len(lines) == 1 and "holdout" not in out, (name, err)
        assert str(path) in lines[0] and "Traceback" not in err
    with pytest.raises(InputError, match="column 'city' of the real table is missing"):
        privsample.evaluate(real, synthetic, holdout=holdout.drop(columns=["city"]))


def test_a_holdout_that_is_the_real_table_is_refused(tmp_path, capsys):
    """The same file, a link, a byte-identical copy, the same records in Parquet, an equal DataFrame: one line
    (its AUC would be 0.5 by construction)."""
    import os
    import shutil

    real, synthetic = _draw(200, 1), _draw(150, 3)
    paths = {"real": tmp_path / "real.csv", "syn": tmp_path / "syn.csv"}
    real.to_csv(paths["real"], index=False)
    synthetic.to_csv(paths["syn"], index=False)
    shutil.copy(paths["real"], tmp_path / "copy.csv")
    os.symlink(paths["real"], tmp_path / "link.csv")
    real.to_parquet(tmp_path / "real.parquet", index=False)
    for holdout, says in (
        (paths["real"], "the real table itself (the same file)"),
        (tmp_path / "link.csv", "the real table itself (the same file)"),
        (tmp_path / "copy.csv", "a byte-identical copy of the real table"),
    ):
        code, out, err = _run(["evaluate", paths["real"], paths["syn"], "--holdout", holdout, "-w", "1"], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and says in lines[0] and str(holdout) in lines[0], err
        assert out == ""
    with pytest.raises(InputError, match="the holdout is equal to the real table"):
        privsample.evaluate(paths["real"], paths["syn"], holdout=tmp_path / "real.parquet", workload=1)
    with pytest.raises(InputError, match="the holdout is equal to the real table"):
        privsample.evaluate(real, synthetic, holdout=real.copy(), workload=1)
