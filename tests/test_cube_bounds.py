"""Tests for the Boolean-cube private-sampling bounds (BSV 2021 Theorems 12.2 and 12.4; Pierquin et al.
2023 Tables 1-3)."""

from __future__ import annotations

import math

import pytest

from privsample.cube import bounds as cb
from privsample.cube import bounds_tables as ct
from privsample.errors import InputError


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ------------------------------------------------------------------------ walsh size, validity
def test_walsh_size():
    assert cb.walsh_size(10, 2) == 1 + 10 + 45
    for p in (2, 8, 25, 119):
        assert cb.walsh_size(p, 2, include_empty=False) == p * (p + 1) // 2
        assert cb.walsh_size(p, 2) == 1 + p * (p + 1) // 2
    assert cb.walsh_size(5, 5) == 32
    assert cb.walsh_size(7, 3) == sum(math.comb(7, t) for t in range(4))


@pytest.mark.parametrize(
    "delta,Delta",
    [
        (0.0, 4.0),
        (-0.1, 4.0),
        (0.6, 4.0),
        (0.25, 1.0),
        (0.25, 1.2),
        (math.nan, 4.0),
        (0.25, math.inf),
        (True, 4.0),
        ("0.25", 4.0),
    ],
)
def test_invalid_box_raises(delta, Delta):
    with pytest.raises(InputError):
        cb.check_parameters(delta, Delta)
    with pytest.raises(InputError):
        cb.certified_epsilon(1000, 10, 2, 600, delta, Delta, 1)


def test_valid_box_edges():
    assert cb.check_parameters(0.5, 1.5) == (0.5, 1.5)
    assert cb.check_parameters(0.25, 1.25) == (0.25, 1.25)


def test_invalid_message_is_one_line():
    with pytest.raises(InputError) as ei:
        cb.check_parameters(0.25, 1.0)
    assert "\n" not in str(ei.value) and "Delta - delta" in str(ei.value)


@pytest.mark.parametrize(
    "kw", [dict(n=0), dict(p=0), dict(d=0), dict(m=0), dict(k=0), dict(d=11), dict(n=2.5), dict(k=True), dict(m=-3)]
)
def test_invalid_integers_raise(kw):
    args = dict(n=3000, p=10, d=2, m=600, delta=0.25, Delta=4.0, k=1) | kw
    with pytest.raises(InputError):
        cb.certified_epsilon(**args)


def test_invalid_epsilon_gamma():
    with pytest.raises(InputError):
        cb.max_k(3000, 10, 2, 600, 0.25, 4.0, 0.0)
    with pytest.raises(InputError):
        cb.required_n(10, 2, 600, 0.25, 4.0, 1, -1.0)
    with pytest.raises(InputError):
        cb.accuracy_requirements(10, 2, 0.25, 4.0, 1.5)
    with pytest.raises(InputError):
        cb.relaxed_bounds(8, 100, 2.0**-9)  # below 2^-p: not a density


# --------------------------------------------------------------------------------- Thm 12.2
def test_note_example_k_bound():
    # a worked example: p=10, d=2, m=600, n=3000, delta=1/4, Delta=4 -> bound on k 1.7e-4
    kb = cb.k_bound(3000, 10, 2, 600, 0.25, 4.0, 1.0)
    assert kb == pytest.approx(1.677e-4, rel=2e-3)
    assert cb.max_k(3000, 10, 2, 600, 0.25, 4.0, 1.0) == 0
    assert cb.max_k(3000, 10, 2, 600, 0.25, 4.0, 1e5) == math.floor(kb * 1e5)


def test_k_bound_formula():
    n, p, d, m, dl, Dl, eps = 50_000, 12, 2, 900, 0.3, 3.0, 2.5
    L = cb.walsh_size(p, d)
    direct = eps * (dl / Dl) ** 1.5 * math.exp(-d / 2) * L**-0.25 * math.sqrt(n) / (4 * math.sqrt(2) * m**0.75)
    assert cb.k_bound(n, p, d, m, dl, Dl, eps) == pytest.approx(direct, rel=1e-12)
    L0 = cb.walsh_size(p, d, include_empty=False)
    assert cb.k_bound(n, p, d, m, dl, Dl, eps, include_empty=False) == pytest.approx(
        direct * (L / L0) ** 0.25, rel=1e-12
    )


@pytest.mark.parametrize(
    "args",
    [
        (3000, 10, 2, 600, 0.25, 4.0),
        (10**9, 20, 2, 5000, 0.5, 1.5),
        (123_456, 15, 3, 10**5, 0.1, 2.0),
        (8124, 119, 2, 5 * 10**72, 0.25, 2.0**119 / 8124),  # Mushroom-sized
    ],
)
@pytest.mark.parametrize("k", [1, 2, 7, 100, 12345])
def test_roundtrips(args, k):
    n, p, d, m, dl, Dl = args
    eps = cb.certified_epsilon(n, p, d, m, dl, Dl, k)
    assert math.isfinite(eps) and eps > 0
    assert cb.max_k(n, p, d, m, dl, Dl, eps) >= k
    # the certified eps is (up to a few ulps) the smallest one
    assert cb.max_k(n, p, d, m, dl, Dl, eps * (1 - 1e-9)) < k
    # required_n at that eps is <= n; in general n certifies and n - 1 does not
    for e in (eps, 1.0, 10.0):
        nn = cb.required_n(p, d, m, dl, Dl, k, e)
        if nn < 2**52:
            assert cb.max_k(nn, p, d, m, dl, Dl, e) >= k
            if nn > 1:
                assert cb.max_k(nn - 1, p, d, m, dl, Dl, e) < k
    assert cb.required_n(p, d, m, dl, Dl, k, eps) <= n


def test_sensitivity_consistent_with_theorem():
    # k * m * S_inf / delta == eps exactly at Thm 12.2's bound (ratio argument with h >= delta/m)
    n, p, d, m, dl, Dl, eps = 3000, 10, 2, 600, 0.25, 4.0, 1.0
    S = cb.sensitivity_bound(n, p, d, m, dl, Dl)
    kb = cb.k_bound(n, p, d, m, dl, Dl, eps)
    assert kb * m * S / dl == pytest.approx(eps, rel=1e-12)
    L = cb.walsh_size(p, d)
    direct = 4 * math.sqrt(2) * Dl**1.5 * dl**-0.5 * math.exp(d / 2) * L**0.25 * m**-0.25 / math.sqrt(n)
    assert S == pytest.approx(direct, rel=1e-12)


def test_no_overflow_mushroom_sized():
    p, n = 119, 8124
    Dl = 2.0**p / n  # ~8e31
    m = 10**73
    assert 0 < cb.k_bound(n, p, 2, m, 0.25, Dl, 1.0) < 1e-100
    eps = cb.certified_epsilon(n, p, 2, m, 0.25, Dl, 1)
    assert 1e100 < eps < math.inf
    assert cb.max_k(n, p, 2, m, 0.25, Dl, 1.0) == 0
    nn = cb.required_n(p, 2, m, 0.25, Dl, 1, 1.0)
    assert nn > 10**200 and math.log10(nn) == pytest.approx(
        math.log10(n) - 2 * math.log10(cb.k_bound(n, p, 2, m, 0.25, Dl, 1.0)), rel=1e-9
    )
    assert cb.sensitivity_bound(n, p, 2, m, 0.25, Dl) > 0
    # beyond float range: inf / huge ints, never OverflowError
    assert cb.certified_epsilon(1, 2000, 2, 10**900, 0.25, 1e300, 10**6) == math.inf
    assert cb.required_n(2000, 2, 10**900, 0.25, 1e300, 1, 1.0) > 10**1000
    big = cb.max_k(10**900, 4, 2, 10, 0.25, 2.0, 1.0)
    assert big > 10**400
    acc = cb.accuracy_requirements(p, 2, 0.25, Dl, 0.125)
    assert acc.log10_m_min > 70 and not acc.consistent
    rb = cb.relaxed_bounds(2000, 10, 1e-300)
    assert math.isfinite(rb.log10_m_min) and rb.m_min == math.inf and rb.k_coefficient == 0.0


# --------------------------------------------------------------------------------- Thm 12.4
def test_accuracy_requirements():
    p, d, dl, Dl, g = 30, 2, 0.25, 4.0, 0.125
    L = cb.walsh_size(p, d)
    acc = cb.accuracy_requirements(p, d, dl, Dl, g)
    assert 10**acc.log10_n_min == pytest.approx(16 / (dl**2 * g) * math.exp(2 * d) * L, rel=1e-12)
    assert 10**acc.log10_m_min == pytest.approx(16 / (dl**2 * g) * Dl**2 * math.exp(2 * d) * L, rel=1e-12)
    assert 10**acc.log10_m_max == pytest.approx(2 ** (p / 4), rel=1e-12)
    assert acc.k_min == pytest.approx(4 / dl**2 * (math.log(2 / g) + math.log(L)), rel=1e-12)
    assert acc.k_min_int == math.ceil(acc.k_min)
    assert acc.marginal_tolerance == 1.0
    assert acc.success_probability == pytest.approx(0.5 - 2**-15)
    assert not acc.consistent


# --------------------------------------------------------------------------------- eqs (3), (4)
def test_constants():
    assert cb.EQ3_M_CONSTANT == pytest.approx(55908.5, abs=0.01)
    assert cb.EQ3_K_CONSTANT == pytest.approx(0.0096671, rel=1e-5)
    assert cb.EQ4_K_CONSTANT == pytest.approx(2.6588e-6, rel=1e-4)
    # printed to 2 significant digits
    assert f"{cb.EQ3_M_CONSTANT:.1e}" == "5.6e+04"
    assert f"{cb.EQ3_K_CONSTANT:.1e}" == "9.7e-03"
    assert f"{cb.EQ4_K_CONSTANT:.1e}" == "2.7e-06"


def test_eq3_is_theorem_with_paper_choices():
    # eq. (3) == Thm 12.2/12.4 with d=2, delta=1/4, gamma=1/8, Delta=2^p f, L = p(p+1)/2
    p, n, f, m = 8, 20000, 0.29, 1000
    rb = cb.relaxed_bounds(p, n, f)
    Dl = 2**p * f
    assert rb.k_coefficient / m**0.75 == pytest.approx(
        cb.k_bound(n, p, 2, m, 0.25, Dl, 1.0, include_empty=False), rel=1e-12
    )
    acc = cb.accuracy_requirements(p, 2, 0.25, Dl, 0.125, include_empty=False)
    assert rb.log10_m_min == pytest.approx(acc.log10_m_min, rel=1e-12)
    assert rb.m_min == pytest.approx(cb.EQ3_M_CONSTANT * f**2 * p * (p + 1) * 4.0**p, rel=1e-12)
    assert rb.k_coefficient == pytest.approx(
        cb.EQ3_K_CONSTANT * math.sqrt(n) / (2 ** (1.5 * p) * f**1.5 * (p * (p + 1)) ** 0.25), rel=1e-12
    )


def test_eq4_ideal():
    for p in (10, 46, 83):
        val = cb.ideal_log10_k_max(p, 10.0)
        assert 10**val == pytest.approx(2.6588e-6 * 10 * 2 ** (p / 2) / (p * (p + 1)), rel=1e-4)
        # equals eq. (3) with ||f_n|| = 2^-p, n = 2^p and m at its lower bound
        rb = cb.relaxed_bounds(p, 2**p, 2.0**-p, 10.0)
        assert val == pytest.approx(rb.log10_k_coefficient - 0.75 * rb.log10_m_min, abs=1e-9)
        assert cb.ideal_log10_m_min(p) == pytest.approx(rb.log10_m_min, abs=1e-9)


# --------------------------------------------------------------------------------- Tables 1-3
def test_table1_inputs():
    rows = {r["name"]: r for r in ct.table1_rows()}
    assert [(r["p"], r["n"]) for r in rows.values()] == [(8, 20000), (119, 8124), (25, 1727), (62, 32561)]
    for r in rows.values():  # printed 2^p to 2 significant digits
        assert rel(r["two_p"], r["paper_two_p"]) < 0.05
        assert rel(r["fn_inf"], r["paper_fn_inf"]) < 0.05
    assert rows["Mushroom"]["fn_inf"] == 1 / 8124 and rows["Car"]["fn_inf"] == 1 / 1727


def test_table2_golden():
    rows = {r.name: r for r in ct.table2_rows(1.0)}
    ours = {  # our values (where they differ from the printed table)
        "Asia": (7.34e-4, 2.22e10, 4.0),
        "Mushroom": (1.08e-49, 5.34e72, 9.03e8),
        "Car": (2.94e-8, 1.37e16, 76.1),
        "Adult": (9.23e-27, 1.51e42, 46340.95),
    }
    for name, (k, mlo, mhi) in ours.items():
        r = rows[name]
        assert rel(r.k_coefficient, k) < 5e-3, name
        assert rel(r.m_min, mlo) < 5e-3, name
        assert rel(r.m_max, mhi) < 5e-3, name
    # against the printed values (2 significant digits)
    for name, r in rows.items():
        assert rel(r.m_min, r.paper_m_min) < 0.05, name
        if name != "Adult":
            assert rel(r.k_coefficient, r.paper_k_coefficient) < 0.05, name
        if name != "Car":
            assert rel(r.m_max, r.paper_m_max) < 0.05, name
    # documented discrepancies
    assert rows["Car"].paper_m_max == 77 and round(rows["Car"].m_max, 1) == 76.1
    assert 0.02 < rel(rows["Adult"].k_coefficient, 9.5e-27) < 0.05
    adult = cb.relaxed_bounds(62, 32561, ct.ADULT_FN_INF_MATCHING)
    assert f"{adult.k_coefficient:.1e}" == "9.5e-27"
    assert f"{adult.m_min:.1e}" == "1.5e+42"
    assert adult.k_coefficient == pytest.approx(9.46e-27, rel=2e-3)
    assert adult.m_min == pytest.approx(1.46e42, rel=5e-3)
    # Mushroom with the rounded Table 1 value 1.2e-4 would not give the printed 5.3e72
    assert f"{cb.relaxed_bounds(119, 8124, 1.2e-4).m_min:.1e}" == "5.1e+72"
    # the paper's point: no dataset has a non-empty m interval
    assert all(not cb.relaxed_bounds(ds.p, ds.n, ds.fn_inf).consistent for ds in ct.TABLE1_DATASETS)


def test_table3_thresholds():
    assert [cb.ideal_p_threshold(k, 10.0) for k in (1, 100, 1000, 10000)] == [54, 69, 76, 83]
    assert [cb.ideal_p_threshold(k, 1.0) for k in (1, 100, 1000, 10000)] == [61, 76, 83, 90]
    assert [cb.ideal_p_threshold(k, 0.1) for k in (1, 100, 1000, 10000)] == [69, 83, 90, 97]
    assert cb.ideal_p_threshold(0.1, 10.0) == 46  # the printed "46"
    assert [ps for _, ps in ct.p_threshold_rows()] == [[69, 83, 90, 97], [61, 76, 83, 90], [54, 69, 76, 83]]


def test_table3_rows_against_printed():
    rows = ct.table3_rows(10.0)
    assert [r.paper_p for r in rows] == [46, 68, 75, 83]
    assert [r.p for r in rows] == [54, 69, 76, 83]
    for r in rows:
        # third column is 2^p at the printed p (2 significant digits)
        assert f"{r.two_p_at_paper_p:.1e}" == f"{r.paper_third:.1e}"
        # and not 2^{p/4}, which lies below the m lower bound
        assert 2 ** (r.paper_p / 4) < r.m_min_at_paper_p
        assert r.m_max < r.m_min
    # m column against the printed p; k=100's 2.7e8 is p=69's value, p=68 gives 2.6e8
    printed = [f"{r.m_min_at_paper_p:.1e}" for r in rows]
    assert printed == ["1.2e+08", "2.6e+08", "3.2e+08", "3.9e+08"]
    assert f"{rows[1].m_min:.1e}" == "2.7e+08"
    assert [f"{r.paper_m_min:.1e}" for r in rows] == ["1.2e+08", "2.7e+08", "3.2e+08", "3.9e+08"]
    # bound values at the printed p
    assert [round(r.k_max_at_paper_p, 3) for r in rows[:1]] == [0.103]
    assert rows[1].k_max_at_paper_p == pytest.approx(97.3, abs=0.1)
    assert rows[2].k_max_at_paper_p == pytest.approx(907, abs=1)


def test_figure1_curves():
    curves = ct.figure1_curves()
    assert sorted(curves) == [0.1, 1.0, 10.0]
    pts = dict(curves[10.0])
    assert pts[54] >= 0 > pts[53]
    # eps enters linearly: curves are shifted by exactly one decade
    assert dict(curves[1.0])[70] == pytest.approx(pts[70] - 1, abs=1e-12)


# --------------------------------------------------------------------------------- report and plot
def test_bounds_report_mentions_discrepancies():
    text = ct.bounds_report()
    for needle in (
        "77",
        "76.1",
        "0.018",
        "0.0177",
        "9.23e-27",
        "9.5e-27",
        "2^p at the printed p",
        "k = 0.1",
        "p = 69",
        "2.6e8",
        "54, 69, 76, 83",
        "5.6e4",
        "55908.5",
        "9.7e-3",
        "0.0096671",
        "2.6588e-06",
    ):
        assert needle in text, needle
    # p-threshold table for each eps in the grid
    assert "| 0.1 | 69    | 83      | 90       | 97        |" in text
    assert "| 1   | 61    | 76      | 83       | 90        |" in text
    assert "| 10  | 54    | 69      | 76       | 83        |" in text
    short = ct.bounds_report(epsilon_grid=[2.0])
    assert "| 2   |" in short


def test_plot_figure1(tmp_path):
    out = ct.plot_figure1(tmp_path / "sub" / "fig1.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert sorted(p.name for p in out.parent.iterdir()) == ["fig1.png"]  # no temp file left
