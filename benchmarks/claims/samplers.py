"""Raskhodnikova, Sivakumar, Smith and Swanberg (2021), *Differentially private sampling from distributions*: the
paper's claims beside what ``benchmarks/samplers_accuracy.py`` measured (``results/samplers_accuracy.csv``).

The paper's formulas were lost when its text was extracted; every claim below is kept as the words that survive,
with the lost symbols restored in [brackets] from the proofs (the constants 2k/(αε), 72 ln(2/α), 4/ε and √(8d/ρ)
are the proofs' arithmetic with the clip interval [1/4, 3/4], not printed numbers). Everything under "ours" is
computed from the CSV when the page is rendered, and so is every verdict:

* an upper bound **matches** when every measured TV lies below it and the measured rate agrees with the theorem's:
  a log-log slope of TV against n within ``SLOPE_TOL`` of −1 on the profile with the largest error and no profile
  decaying slower than n^(−1 + SLOPE_TOL); for the bounded-bias Bernoulli sampler, ln TV falling at least
  (1 − ``EXP_TOL``)/72 per record; for the dimension, exponents within ``DIM_TOL`` of ½ and 1;
* a comparison of sampling with learning **matches** when the sampler needs no more records than the learner in
  every measured setting (or, for a claim stated asymptotically, when the advantage grows with d and 1/α);
* a lower bound is **not reproducible**: it is a statement about every private sampler, which running one sampler
  cannot test, and the benchmark does not run the paper's hard instances.

No privsample import: the bounds are the paper's formulas, evaluated here, or read from the CSV's ``bound`` column.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CSV_NAME = "samplers_accuracy.csv"
TITLE = (
    "# Raskhodnikova, Sivakumar, Smith and Swanberg (2021), Differentially private sampling from distributions: "
    "the paper's claims beside ours"
)
VERDICTS = ("matches", "differs", "not reproducible")

SLOPE_TOL = 0.1  # |log-log slope + 1| for a rate n^-1
EXP_TOL = 0.1  # relative shortfall allowed on the Bernoulli exponent 1/72
DIM_TOL = 0.1  # on the exponents of d (1/2 for the sampler, 1 for the learner)

CLIP_A = 0.25  # the clip interval [a, 1 - a] of Thm 6.1 (restored; the class is [1/3, 2/3])
HOEFFDING_EXP = 2 * (1 / 3 - CLIP_A) ** 2  # Claim 6.2: |E p~ - p| <= 2a exp(-2n(1/3 - a)^2) = 1/2 e^(-n/72)
KL_EXP = CLIP_A * math.log(CLIP_A / (1 / 3)) + (1 - CLIP_A) * math.log((1 - CLIP_A) / (2 / 3))  # Chernoff
BERN_FIT = (200, 3000)  # the n range of the fitted Bernoulli exponent (the report's)
KARY_ALPHAS = (0.05, 0.02)
BERN_ALPHAS = (0.1, 0.03, 0.01, 0.003, 0.001)


@dataclass(frozen=True)
class Claim:
    claim: str  # what is claimed, and where in the paper
    quote: str  # the surviving words; [..] = a symbol lost in extraction, restored from the proof
    paper: str  # the figure or statement tested


# fmt: off
THM14_BOUND = Claim(
    "k-ary sampler (Alg. 3) accuracy bound (Thm 1.4, proof in §4.1)",
    "there exists an [ε]-DP sampler that is [α]-accurate on the distribution class [C_k] for datasets of size "
    "[n = O(k/(αε))]; \"We conclude that with [n ≥ 2k/(αε)], Algorithm 3 is [α]-accurate\"",
    "TV ≤ 2k/(εn)")
THM14_RATE = Claim(
    "k-ary sampler (Alg. 3) rate in n (Thm 1.4)", "n = O(k/(αε)) [at fixed k, ε]", "TV ∝ n⁻¹")
KARY_LEARN = Claim(
    "k-ary: sampling needs fewer records than learning when α < ε (§1.1, Implications; Table 1)",
    "Even for arbitrary biases or arbitrary [k]-ary distributions, private sampling is easier when [α ≪ ε]; the "
    "complexity of private learning is \"the sample complexity of nonprivate learning, [k/α²], plus a term to "
    "account for the privacy constraint, [k/(αε)]\"",
    "sampling Θ(k/(αε)) records against learning Θ(k/α² + k/(αε))")
THM41 = Claim(
    "k = 2 lower bound (Thm 4.1, §4.2)",
    "every [ε]-differentially private sampler that is [α]-accurate on the class of Bernoulli distributions requires "
    "[Ω(1/(αε))] samples",
    "n = Ω(1/(αε)) for every sampler")
THM15 = Claim(
    "k-ary lower bound (Thm 1.5; Thm 4.10, §4.3)",
    "if there is an [(ε, δ)]-DP sampler that is [α]-accurate on the distribution class [C_k] on datasets of size "
    "[n], then [n = Ω(k/(αε))]",
    "n = Ω(k/(αε)) for every sampler")
CLAIM62_BOUND = Claim(
    "bounded-bias Bernoulli sampler accuracy bound (Claim 6.2, Thm 6.1, §6.1.1)",
    "Sampler [A] is [α]-accurate on the class [B_[1/3,2/3]] with dataset of size [n ≥ 72 ln(2/α)] ... \"where we "
    "applied the Hoeffding bound\"",
    "TV ≤ ½·e^(−n/72) (clip to [1/4, 3/4])")
CLAIM62_RATE = Claim(
    "bounded-bias Bernoulli sampler rate in n (Claim 6.2)", "[Hoeffding: Pr[|p̂ − p| > 1/12] ≤ 2e^(−n/72)]",
    "ln TV falls ≥ 1/72 = 0.0139 per record")
CLAIM63 = Claim(
    "bounded-bias Bernoulli sampler privacy (Claim 6.3, §6.1.1)",
    "Sampler [A] is [ε]-differentially private [when n ≥ 4/ε: the probabilities differ by at most a factor "
    "1 + 1/(an) ≤ e^(1/(an))]",
    "ε-DP once n ≥ 4/ε")
BERN_LEARN = Claim(
    "bounded-bias Bernoulli: sampling easy where learning is hardest (§6.1.1 before Thm 6.1; Thm 1.8)",
    "Even though class [B_[1/3,2/3]] is the hardest to learn privately among the classes of Bernoulli "
    "distributions, we show in the next theorem that private sampling from this class is easy",
    "sampling n = O(1/ε + log(1/α)) against learning Θ(1/α² + 1/(αε))")
ALPHA_EFFECT = Claim(
    "bounded bias: α barely matters (§1.1, before Thm 1.8)",
    "Curiously, the accuracy parameter [α] has almost no effect on the sample complexity",
    "n = O(√d·√ln(1/δ)/ε + ln(d/α)): α enters only as an additive ln(1/α)")
THM64 = Claim(
    "bounded-bias product sampler sufficient n (Thm 6.4, §6.1.2; Thm 1.8)",
    "there exists a [ρ]-zCDP sampler for the class of products of Bernoulli distributions with bias in [[1/3, 2/3]] "
    "that is [α]-accurate for datasets of size [n ≥ max(√(8d/ρ), 72 ln(2d/α))]",
    "n = max(√(8d/ρ), 72 ln(2d/α)) suffices")
DIM = Claim(
    "bounded bias: √d instead of d (§1.1, Implications)",
    "private sampling has a lower dependence on the dimension (specifically, [√d] instead of [d]) and essentially "
    "no dependence on [α]",
    "sampler n ∝ d^½, learner n ∝ d")
BB_LEARN = Claim(
    "bounded-bias products: sampling needs asymptotically fewer records than learning (Abstract; §6.1.2)",
    "in some parameter regimes, private sampling requires asymptotically fewer observations than learning a "
    "description of [P] nonprivately",
    "sampling O(√d/ε + ln(d/α)) against learning [Θ(d/α²)]")
THM19 = Claim(
    "bounded-bias product lower bound (Thm 1.9; Thm 6.5, §6.2)",
    "if there exists an [(ε, δ)]-DP sampler that is [α]-accurate on the class of products of Bernoulli "
    "distributions with biases in [[1/3, 2/3]] on datasets of size [n], then [n = Ω(√d/ε)]",
    "n = Ω(√d/ε) for every sampler")
THM51_RATE = Claim(
    "general product sampler (Alg. 4) rate in n (Thm 5.1, §5.1; Thm 1.6)",
    "there exists a [ρ]-zCDP sampler for the class of product Bernoulli distributions that is [α]-accurate on "
    "datasets of size [n = Õ(d/(α√ρ))]",
    "TV ∝ n⁻¹ at fixed d")
THM51_BOUND = Claim(
    "general product sampler (Alg. 4) explicit bound (Thm 5.1, proof in §5.1.5)",
    "Fix the sample size [n = ...] for this setting of [α, ρ] and [d]",
    "TV ≤ α at n = Õ(d/(α√ρ)), constants and polylog factors in the lost formula")
PROD_LEARN = Claim(
    "arbitrary products: sampling needs fewer records than learning when α < ε (§1.1, Implications; Table 1)",
    "Even for arbitrary biases ... private sampling is easier when [α ≪ ε]; private learning costs \"the sample "
    "complexity of nonprivate learning, [d/α²], and the extra privacy term, [d/(αε)]\"",
    "sampling Θ̃(d/(αε)) against learning Θ̃(d/α² + d/(αε))")
NAIVE = Claim(
    "Alg. 4 beats noisy column means (§5.1, before Alg. 4)",
    "the naive algorithm described above would require [more, of order d^(3/2)/(α√ρ) when all biases are about 1/d] "
    "records to be [α]-accurate",
    "Alg. 4 needs fewer records than one noisy release of all column means")
THM17 = Claim(
    "general product lower bound (Thm 1.7; Thm 5.9, §5.2)",
    "every [(ε, δ)]-differentially private sampler that is [α]-accurate on the class of products of Bernoulli "
    "distributions needs datasets of size [Ω(d/(αε))]",
    "n = Ω(d/(αε)) for every sampler")
HARD_REGIME = Claim(
    "sampling as hard as learning when α is not small (§1.1, Implications)",
    "for [α ≳ ε], the worst-case complexity of sampling and learning [k]-ary distributions and product "
    "distributions is the same",
    "equal worst-case n for sampling and learning")
# fmt: on


# -- reading the CSV ---------------------------------------------------------------------------------------------
def _num(v: str):
    if v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return v


def read(results: Path) -> dict[str, list[dict]]:
    """The rows of the CSV by section, numbers as floats ('' as None)."""
    with (Path(results) / CSV_NAME).open(newline="", encoding="utf-8") as f:
        rows = [{k: _num(v) for k, v in r.items()} for r in csv.DictReader(f)]
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["section"], []).append(r)
    return out


def _g(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if not math.isfinite(x):
        return "> grid"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _slope(xs, ys, log_x: bool = True) -> float:
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    ok = ys > 0
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(xs[ok]) if log_x else xs[ok], np.log(ys[ok]), 1)[0])


def _resolved(r: dict) -> bool:
    """The simulated TV is distinguishable from 0: above 3 standard errors and twice the Monte Carlo floor."""
    return r["tv"] > max(3 * r["se"], 2 * r["mc_floor"])


def _needed(ns, errs, alpha: float, log_y: bool = True) -> tuple[float, bool]:
    """(smallest n at which errs reaches alpha, interpolated; whether the first grid point already does).

    Log-log interpolation (power laws), or ln(err) linear in n with ``log_y=False`` (exponential decay)."""
    for i, (n, e) in enumerate(zip(ns, errs)):
        if e <= alpha:
            if i == 0:
                return float(n), True
            x0, x1 = ns[i - 1], n
            y0, y1 = math.log(errs[i - 1]), math.log(max(e, 1e-300))
            if log_y:
                x0, x1 = math.log(x0), math.log(x1)
            x = x0 + (math.log(alpha) - y0) * (x1 - x0) / (y1 - y0)
            return (math.exp(x) if log_y else x), False
    return math.inf, False


def _fmt_needed(n: float, first: bool) -> str:
    return f"≤ {n:,.0f}" if first else _g(n)


def _series(rows, **match) -> list[dict]:
    return sorted((r for r in rows if all(r[k] == v for k, v in match.items())), key=lambda r: r["n"])
