"""MBDE paper experiments (Husain, Cranko and Nock 2018, section 5): integrally private sampling of continuous
data.

Domains: the ring of 8 Gaussians (radius 2, sd 0.25), the 1-D mixture of three Gaussians (weights
0.3/0.4/0.3, means -2/0/2, sd 0.5), random 1-D and 2-D mixtures (5 equal components, means U[-3, 3]^d,
sd 0.5, redrawn per repetition). n = 10,000 training points, 10,000 fresh test points, 4 repetitions.
Methods: MBDE (T = 3, C* = 1, q0 = N(0, I), 3 x 25 tanh MLPs, 600 epochs; epsilon = per-sample IP budget)
on eps in {0.1, 0.25, 0.5, 1, 2, 5, 10}; the Bernstein-mechanism private KDE (DPB, degree 20 in 2-D and
30 in 1-D, box [-6, 6]^d, CV bandwidth) with the DP calibration up to eps = 1000 and the integral-privacy
calibration; q0 itself (T = 0) and the non-private Gaussian KDE as references. Metrics: NLL on the test
points and mode coverage (the target mass where q_hat exceeds its own 5% quantile, AdaGAN-style).
All randomness is seeded (reproducible, NOT private).

    python benchmarks/mbde_paper.py            # full grid (about 55 minutes with --no-finite, 2 shared cores)
    python benchmarks/mbde_paper.py --quick    # ring + 1-D mixture, n = 2,000, 3 epsilons, 1 repetition (< 1 min)

Writes benchmarks/results/mbde_paper.{md,csv} and mbde_paper.fig1/fig4/fig5.png (``--quick``:
mbde_paper.quick.*), and prints the time of one ring experiment (n = 10,000, T = 3, eps = 1).

    python benchmarks/mbde_paper.py --q0-fitted    # the q0-fitted arm only (1-D domains, same data and seeds)

runs MBDE with q0 = N(mu_hat, sd_hat^2) released by the Laplace mechanism on the clipped moments
(privsample.mbde.fitted_q0) at a share s (``--q0-share``, default 0.1) of each epsilon, the rest (1 - s) epsilon
going to MBDE: "mbde (q0 fitted)" with the integral-privacy calibration (MBDE's own guarantee, epsilon-IP in
total), "mbde (q0 fitted, replace-one)" with the DP calibration (epsilon-DP for replace-one neighbours, n public:
the relation of DPB (DP)). Writes benchmarks/results/mbde_paper.q0.csv and replaces the section between the
q0 markers of mbde_paper.md (the rest of the report is left as it is).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

from privsample.mbde.density import MBDE, GaussianQ0  # noqa: E402
from privsample.mbde.fitted_q0 import fit_q0  # noqa: E402
from privsample.mbde.private_kde import bernstein_kde, gaussian_kde_logpdf, select_bandwidth  # noqa: E402
from privsample.privacy import Accountant  # noqa: E402
from privsample.privacy.noise import SeededNoise  # noqa: E402

from benchmarks.freshness import stamp  # noqa: E402

EPS_MBDE = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)
EPS_DPB = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
BOX = 6.0
DOMAINS = ("ring", "mix3-1d", "random-1d", "random-2d")


# -- domains ------------------------------------------------------------------------------------------


@dataclass
class Mixture:
    name: str
    weights: np.ndarray
    means: np.ndarray  # (K, d)
    sd: float

    @property
    def d(self) -> int:
        return self.means.shape[1]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        k = rng.choice(len(self.weights), size=n, p=self.weights)
        return self.means[k] + self.sd * rng.standard_normal((n, self.d))

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        d2 = np.sum((x[:, None, :] - self.means[None]) ** 2, axis=-1)
        return logsumexp(-d2 / (2 * self.sd**2) + np.log(self.weights)[None], axis=1) - self.d * math.log(
            math.sqrt(2 * math.pi) * self.sd
        )


def domain(name: str, rep: int) -> Mixture:
    if name == "ring":
        a = np.arange(8) * np.pi / 4
        return Mixture(name, np.full(8, 1 / 8), 2.0 * np.c_[np.cos(a), np.sin(a)], 0.25)
    if name == "mix3-1d":
        return Mixture(name, np.array([0.3, 0.4, 0.3]), np.array([[-2.0], [0.0], [2.0]]), 0.5)
    d = 1 if name == "random-1d" else 2
    rng = np.random.default_rng([2024, d, rep])
    return Mixture(name, np.full(5, 0.2), rng.uniform(-3, 3, (5, d)), 0.5)


# -- metrics ------------------------------------------------------------------------------------------


def coverage(logq_test: np.ndarray, logq_own: np.ndarray) -> float:
    """P_target(q_hat(X) > t) with t the 5% quantile of q_hat(Y), Y ~ q_hat (normaliser-free)."""
    return float(np.mean(logq_test > np.quantile(logq_own, 0.05)))


def eval_mbde(dens, x_test: np.ndarray, rng: np.random.Generator) -> dict:
    lz = dens.log_normaliser(100_000, rng)
    own = dens.sample(10_000, rng)
    lt = dens.log_density(x_test, lz)
    return {"nll": float(-lt.mean()), "coverage": coverage(lt, dens.log_density(own, lz)), "log_z": lz}


def eval_density(logpdf, sampler, x_test, rng) -> dict:
    lt = logpdf(x_test)
    return {"nll": float(-lt.mean()), "coverage": coverage(lt, logpdf(sampler(10_000, rng)))}


# -- one (domain, repetition) --------------------------------------------------------------------------


def run_one(name: str, rep: int, cfg: argparse.Namespace, keep: dict) -> list[dict]:
    dom = domain(name, rep)
    rng = np.random.default_rng([7, rep, DOMAINS.index(name)])
    S, X = dom.sample(cfg.n, rng), dom.sample(cfg.n_test, rng)
    rows = []

    def add(method, eps, res, seconds, **extra):
        rows.append(
            {
                "domain": name,
                "rep": rep,
                "method": method,
                "epsilon": eps,
                "nll": res["nll"],
                "coverage": res["coverage"],
                "seconds": round(seconds, 2),
                **extra,
            }
        )

    add("target", "", {"nll": float(-dom.logpdf(X).mean()), "coverage": 0.95}, 0.0)
    g0 = GaussianQ0(dom.d)
    add("q0", "", eval_density(g0.log_pdf, g0.sample, X, rng), 0.0)
    t0 = time.perf_counter()
    u = np.clip((S + BOX) / (2 * BOX), 0, 1)
    h = select_bandwidth(u, max_points=cfg.cv_points)
    hx = h * 2 * BOX
    cv_s = time.perf_counter() - t0
    add(
        "kde (non-private)",
        "",
        eval_density(
            lambda z: gaussian_kde_logpdf(S, z, hx),
            lambda k, r: S[r.integers(0, len(S), k)] + hx * r.standard_normal((k, dom.d)),
            X,
            rng,
        ),
        cv_s,
        bandwidth=hx,
    )
    t0 = time.perf_counter()
    model = MBDE(cfg.eps[0], epochs=cfg.epochs, hidden=cfg.hidden)
    variants = [("mbde", "paper")] + ([("mbde-finite", "finite")] if cfg.finite else [])
    grid = [(m, sch, e) for m, sch in variants for e in (cfg.eps if sch == "paper" else cfg.eps_finite)]
    dens = model.fit_grid(S, [e for _, _, e in grid], seed=rep, schedules=[sch for _, sch, _ in grid])
    fit_s = (time.perf_counter() - t0) / len(grid)
    for (method, _, eps), q in zip(grid, dens):
        t1 = time.perf_counter()
        res = eval_mbde(q, X, rng)
        add(
            method,
            eps,
            res,
            fit_s + time.perf_counter() - t1,
            gamma_P=";".join(f"{r['gamma_P']:.3f}" for r in q.rounds),
            gamma_Q=";".join(f"{r['gamma_Q']:.3f}" for r in q.rounds),
            kl_drop=";".join(f"{r['kl_drop']:.4f}" for r in q.rounds),
        )
        if rep == 0:
            keep[(name, method, eps)] = q
    for cal in ("dp", "ip"):
        for eps in cfg.eps_dpb:
            t1 = time.perf_counter()
            acc = Accountant(eps**2 / 2, target=(eps, 0.0))  # pure eps, one release
            m = bernstein_kde(
                S,
                eps,
                lower=[-BOX] * dom.d,
                upper=[BOX] * dom.d,
                bandwidth=h,
                calibration=cal,
                accountant=acc,
                noise=SeededNoise(1000 * rep + int(eps * 100), quiet=True),
            )  # NOT private
            add(f"dpb-{cal}", eps, eval_density(m.log_pdf, m.sample, X, rng), time.perf_counter() - t1, bandwidth=hx)
            if rep == 0:
                keep[(name, f"dpb-{cal}", eps)] = m
    keep[(name, "domain", rep)] = dom
    return rows


Q0_METHODS = {"ip": "mbde (q0 fitted)", "dp": "mbde (q0 fitted, replace-one)"}
Q0_BEGIN, Q0_END = "<!-- q0-fitted: begin -->", "<!-- q0-fitted: end -->"


def run_q0_fitted(name: str, rep: int, cfg: argparse.Namespace) -> list[dict]:
    """The q0-fitted arm on the data of :func:`run_one` (same domain, repetition, S and X; MBDE seed = rep):
    per epsilon and calibration, q0 from s epsilon, MBDE at (1 - s) epsilon with that q0 (rounds not shared)."""
    dom = domain(name, rep)
    rng = np.random.default_rng([7, rep, DOMAINS.index(name)])
    S, X = dom.sample(cfg.n, rng), dom.sample(cfg.n_test, rng)
    ev = np.random.default_rng([7, rep, DOMAINS.index(name), 1])
    rows = []
    for cal in cfg.q0_calibrations:
        for eps in cfg.q0_ip_eps if cal == "ip" else cfg.q0_eps:
            t0 = time.perf_counter()
            acc = Accountant(eps**2 / 2, target=(eps, 0.0))
            q0 = fit_q0(
                S,
                cfg.q0_share * eps,
                box=BOX,
                accountant=acc,
                noise=SeededNoise(1000 * rep + int(eps * 100) + 17, quiet=True),  # NOT private
                calibration=cal,
            )
            q0_res = eval_density(q0.log_pdf, q0.sample, X, ev)
            dens = MBDE((1 - cfg.q0_share) * eps, epochs=cfg.epochs, hidden=cfg.hidden, q0=q0).fit(S, seed=rep)
            acc.spend(
                ((1 - cfg.q0_share) * eps) ** 2 / 2, "mbde/sample", pure_epsilon=(1 - cfg.q0_share) * eps
            )  # one sample's cost: the density is what is evaluated
            assert abs(acc.pure_epsilon_spent() - eps) <= 1e-9 * eps
            res = eval_mbde(dens, X, ev)
            rows.append(
                {
                    "domain": name,
                    "rep": rep,
                    "method": Q0_METHODS[cal],
                    "epsilon": eps,
                    "q0_share": cfg.q0_share,
                    "nll": res["nll"],
                    "coverage": res["coverage"],
                    "q0_nll": q0_res["nll"],
                    "q0_mean": q0.mean[0],
                    "q0_std": q0.std[0],
                    "seconds": round(time.perf_counter() - t0, 2),
                }
            )
            print(
                f"{name} rep {rep} {cal} eps={eps:g}: q0 N({q0.mean[0]:.3f}, {q0.std[0]:.3f}^2) NLL "
                f"{q0_res['nll']:.3f}, MBDE NLL {res['nll']:.3f} ({rows[-1]['seconds']:.0f} s)",
                flush=True,
            )
    return rows


Q0_VERDICT = (
    "**Does a fitted q0 explain the gap?** Under the relation DPB (DP) is calibrated for, largely yes: a q0 fitted "
    "with 10% of ε under the replace-one calibration improves MBDE on random-1d by 0.33–0.86 nats at every ε (N(0, 1) "
    "misses mixtures whose means are drawn in [-3, 3], and the mollifier keeps q_T within e^{±ε/2} of q0, so "
    "boosting cannot move the mass far enough) and makes it beat DPB (DP) at ε = 10 in 3/3 repetitions (N(0, 1): "
    "1/3); on mix3-1d it makes MBDE beat DPB (DP) at ε = 1 (3/3) and ε = 2 (2/3), where N(0, 1) never did. It "
    "does not make MBDE win on random-1d at ε ≤ 2 (1/3 repetitions), on mix3-1d at ε = 10 N(0, 1) is slightly "
    "better (its narrow centre sits on the middle mode), and the plain moment estimator is fragile at s·ε = 0.01 "
    "(ε = 0.1: the square of a noisy mean exceeds the noisy second moment, σ̂ hits its floor; NLL 329 in one "
    "mix3-1d repetition). The fitted Gaussian alone (T = 0) is already within 0.02 nats of DPB (DP) on mix3-1d at "
    "ε ≥ 1 (a degree-30 Bernstein KDE on [-6, 6] is itself strongly smoothed), so much of the paper's 1-D "
    "advantage is q0. Under MBDE's own guarantee, no: an ε_q0-IP release must have nearly the same law (within "
    "e^{ε_q0}) for a dataset piled at -6 and one at +6, so at s·ε ≤ 1 (ε ≤ 10) the Laplace noise "
    "(scale 48 at ε = 10) swamps "
    "statistics whose ranges are 12 and 36; the IP-fitted q0 is a random Gaussian at the edge of the box, worse "
    "than N(0, 1) alone in every repetition, and MBDE on it is worse in 5 of 6; post-processing that shrinks it "
    "towards N(0, 1) could at best give the N(0, 1) column back. The authors' data-fitted q0 (fitted without "
    "noise) therefore plausibly explains the paper's 1-D results, at the price of integral privacy. The product "
    "keeps q0 = N(0, 1): `release(q0_share=...)` stays off by default (on the release path only the IP calibration "
    "is offered, which does not help at these budgets); the replace-one calibration is for experiments."
)


def q0_section(q0_rows: list[dict], stored: list[dict], cfg) -> list[str]:
    """The markdown section of the q0-fitted arm: a table against the stored rows (same domains, seeds)."""
    reps = sorted({int(r["rep"]) for r in q0_rows})
    lines = [
        Q0_BEGIN,
        "## MBDE with a q0 fitted under an accounted budget (1-D domains)",
        "",
        f"`python benchmarks/mbde_paper.py --q0-fitted`: q0 = N(μ̂, σ̂²) from the per-dimension mean and mean of "
        f"squares of the values clipped to the public box [-{BOX:g}, {BOX:g}], released by the Laplace mechanism "
        f"(`privsample.mbde.fitted_q0`, σ̂ ≥ 0.1) at s·ε, s = {cfg.q0_share:g}; MBDE then runs at (1 − s)·ε with "
        "that q0 (same data, test points and MBDE seed as the stored rows; one sample's cost, as the stored "
        "rows). `q0 fitted` uses the integral-privacy calibration (L1 sensitivity 2B + B² = "
        f"{2 * BOX + BOX * BOX:g}: the ranges of the two statistics, any two datasets): the whole is ε-IP, MBDE's own "
        "guarantee. `replace-one` uses the DP calibration (sensitivity (2B + B²)/n): the whole is only ε-DP for "
        "replace-one neighbours with n public, the relation DPB (DP) is calibrated for. "
        f"NLL, mean ± std over repetitions {', '.join(map(str, reps))} (seeds = repetition numbers, as the "
        "stored rows; the stored columns are the rows of the table above, over the same repetitions). In brackets: "
        "the NLL of the fitted q0 alone (T = 0). Only the ε and repetitions shown were run (a CPU budget of about "
        "25 minutes on two shared cores; the IP calibration only at ε = 10, its most favourable budget).",
        "",
    ]
    for d in dict.fromkeys(r["domain"] for r in q0_rows):
        st = [r for r in stored if r["domain"] == d and int(r["rep"]) in reps]
        lines += [
            f"### {d}",
            "",
            "| ε | MBDE, q0 = N(0, 1) | MBDE, q0 fitted (ε-IP) | MBDE, q0 fitted (replace-one) | DPB (DP) |",
            "|---:|---:|---:|---:|---:|",
        ]
        for eps in sorted(set(cfg.q0_eps) | set(cfg.q0_ip_eps)):
            cells = [_fmt(_stats(st, d, "mbde", eps, "nll"))]
            for cal in ("ip", "dp"):
                m = Q0_METHODS[cal]
                q = _stats(q0_rows, d, m, eps, "nll")
                q0n = _stats(q0_rows, d, m, eps, "q0_nll")[0]
                cells.append("–" if math.isnan(q[0]) else f"{_fmt(q)} ({q0n:.3f})")
            cells.append(_fmt(_stats(st, d, "dpb-dp", eps, "nll")))
            lines.append(f"| {eps:g} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["### Verdict", ""] + q0_facts(q0_rows, stored, cfg, reps) + ["", Q0_VERDICT, "", Q0_END]
    return lines


def q0_facts(q0_rows: list[dict], stored: list[dict], cfg, reps: list[int]) -> list[str]:
    """Statements computed from the numbers (paired by repetition), so they stay true when the arm is rerun."""
    out = []

    def by_rep(rows, d, m, eps, key="nll"):
        return {
            int(r["rep"]): float(r[key]) for r in rows if r["domain"] == d and r["method"] == m and r["epsilon"] == eps
        }

    for d in dict.fromkeys(r["domain"] for r in q0_rows):
        parts = []
        for eps in cfg.q0_eps:
            fit = by_rep(q0_rows, d, Q0_METHODS["dp"], eps)
            base = by_rep(stored, d, "mbde", eps)
            dpb = by_rep(stored, d, "dpb-dp", eps)
            ks = [k for k in reps if k in fit and k in base and k in dpb]
            if not ks:
                continue
            gain = np.mean([base[k] - fit[k] for k in ks])
            wins = sum(fit[k] < dpb[k] for k in ks)
            wins0 = sum(base[k] < dpb[k] for k in ks)
            parts.append(
                f"ε = {eps:g}: {gain:+.3f} nats against q0 = N(0, 1), below DPB (DP) in {wins}/{len(ks)} "
                f"repetitions (q0 = N(0, 1): {wins0}/{len(ks)})"
            )
        ip = []
        for eps in cfg.q0_ip_eps:
            alone = by_rep(q0_rows, d, Q0_METHODS["ip"], eps, "q0_nll")
            fit, base, q00 = (
                by_rep(q0_rows, d, Q0_METHODS["ip"], eps),
                by_rep(stored, d, "mbde", eps),
                by_rep(stored, d, "q0", ""),
            )
            ks = [k for k in reps if k in fit and k in base and k in q00]
            if ks:
                slash = lambda v: "/".join(f"{v[k]:.3f}" for k in ks)  # noqa: E731
                ip.append(
                    f"ε = {eps:g}, per repetition: q0 alone {slash(alone)} (N(0, 1) alone: {slash(q00)}), "
                    f"MBDE {slash(fit)} (with q0 = N(0, 1): {slash(base)})"
                )
        out.append(
            f"- **{d}**, q0 fitted (replace-one), mean NLL gain per repetition: "
            + "; ".join(parts)
            + ". q0 fitted (ε-IP): "
            + "; ".join(ip)
            + "."
        )
    return out


def write_q0_section(path: Path, section: list[str]) -> None:
    """Replace the q0 section of the report (between its markers) or insert it before the figures."""
    text = path.read_text()
    block = "\n".join(section)
    if Q0_BEGIN in text:
        head, rest = text.split(Q0_BEGIN, 1)
        text = head + block + rest.split(Q0_END, 1)[1]
    else:
        text = text.replace("## Figures", block + "\n\n## Figures", 1)
    path.write_text(text)


def ring_timing(cfg) -> float:
    """One ring experiment: n = 10,000 points, MBDE at eps = 1 with T = 3 (JAX compile included), NLL and coverage."""
    t0 = time.perf_counter()
    dom = domain("ring", 0)
    rng = np.random.default_rng(99)
    S, X = dom.sample(10_000, rng), dom.sample(10_000, rng)
    q = MBDE(1.0, epochs=cfg.epochs, hidden=cfg.hidden).fit(S, seed=0)
    res = eval_mbde(q, X, rng)
    sec = time.perf_counter() - t0
    print(
        f"ring experiment (n = 10,000, T = 3, eps = 1, {cfg.epochs} epochs): {sec:.1f} s "
        f"(NLL {res['nll']:.3f}, coverage {res['coverage']:.3f})",
        flush=True,
    )
    return sec


# -- reporting -------------------------------------------------------------------------------------------


def _stats(rows, domain_, method, eps, key):
    v = np.array(
        [r[key] for r in rows if r["domain"] == domain_ and r["method"] == method and r["epsilon"] == eps], float
    )
    return (float(v.mean()), float(v.std())) if len(v) else (math.nan, math.nan)


def _fmt(ms):
    m, s = ms
    return "–" if math.isnan(m) else f"{m:.3f} ± {s:.3f}"


def write_markdown(path: Path, rows: list[dict], cfg, ring_s: float, total_s: float, figs: list[str]) -> None:
    lines = [
        f"# MBDE (Husain, Cranko and Nock 2018): integrally private sampling, paper experiments"
        f"{' (QUICK)' if cfg.quick else ''}" + (f" ({cfg.partial})" if getattr(cfg, "partial", "") else ""),
        "",
        "The paper's claims beside these runs, a verdict for each: [`mbde_paper.claims.md`](mbde_paper.claims.md) "
        "(written from the stored CSV by `benchmarks/paper_claims.py`).",
        "",
        f"`python benchmarks/mbde_paper.py{' --quick' if cfg.quick else ''}"
        f"{'' if cfg.quick or cfg.finite else ' --no-finite'}`: n = {cfg.n:,} training and "
        f"{cfg.n_test:,} test points, {cfg.reps} repetition(s) (mean ± std), MBDE with T = 3, C* = 1, "
        f"q0 = N(0, I), {'×'.join(map(str, cfg.hidden))} tanh MLPs, {cfg.epochs} epochs (Nesterov SGD, lr 0.01, "
        "batches of 5,000), exact rejection sampling. DPB = Bernstein-mechanism private KDE on [-6, 6]^d "
        "(degree 30 in 1-D, 20 in 2-D, 10-fold CV bandwidth, non-private as in the paper): `dpb-dp` is "
        "calibrated for ε-DP (replace one record, n public), `dpb-ip` for ε-integral privacy (sensitivity × n). "
        "ε for MBDE is the per-sample integral-privacy budget (m samples cost m·ε). Seeded randomness "
        "throughout: these are experiments, NOT private releases.",
        "",
        (
            f"The ring domain at n = {cfg.n:,} (fit + evaluation, all ε): {ring_s:.1f} s. "
            if cfg.quick
            else "One ring experiment (n = 10,000, T = 3, ε = 1, fit + NLL + coverage, JAX compile included, "
            f"one core): **{ring_s:.1f} s**. "
        )
        + f"Whole run: {total_s / 60:.1f} min.",
        "",
    ]
    domains = list(dict.fromkeys(r["domain"] for r in rows))
    for key, title in (("nll", "NLL (lower is better)"), ("coverage", "Mode coverage (higher is better)")):
        lines += [f"## {title}", ""]
        for d in domains:
            refs = {m: _fmt(_stats(rows, d, m, "", key)) for m in ("target", "q0", "kde (non-private)")}
            lines += [
                f"### {d}",
                "",
                f"References: target {refs['target']}, q0 {refs['q0']}, non-private KDE {refs['kde (non-private)']}."
                if key == "nll"
                else f"References: q0 {refs['q0']}, non-private KDE {refs['kde (non-private)']} (target: 0.95 by "
                "definition).",
                "",
                "| ε | MBDE | MBDE (finite schedule) | DPB (DP) | DPB (IP) |",
                "|---:|---:|---:|---:|---:|",
            ]
            for eps in sorted(set(cfg.eps) | set(cfg.eps_dpb)):
                lines.append(
                    f"| {eps:g} | "
                    + " | ".join(
                        _fmt(_stats(rows, d, m, eps, key)) for m in ("mbde", "mbde-finite", "dpb-dp", "dpb-ip")
                    )
                    + " |"
                )
            lines.append("")
    lines += [
        "## Weak learners (MBDE, mean over repetitions, rounds 1/2/3)",
        "",
        "| domain | ε | γ̂_P | γ̂_Q | estimated KL drop per round |",
        "|---|---:|---|---|---|",
    ]
    for d in domains:
        for eps in cfg.eps:
            rs = [r for r in rows if r["domain"] == d and r["method"] == "mbde" and r["epsilon"] == eps]
            if not rs:
                continue
            avg = lambda k: "/".join(f"{np.mean([float(r[k].split(';')[t]) for r in rs]):.3f}" for t in range(3))  # noqa: E731
            lines.append(f"| {d} | {eps:g} | {avg('gamma_P')} | {avg('gamma_Q')} | {avg('kl_drop')} |")
    lines += ["", "## Reading", ""] + discussion(rows, domains, cfg) + [""]
    lines += ["## Figures", ""] + [f"![{f}]({f})" for f in figs] + [""]
    path.write_text("\n".join(lines))


def discussion(rows, domains, cfg) -> list[str]:
    """Statements computed from the numbers (so they stay true when the run is repeated)."""
    out = []
    for d in domains:
        nll = [_stats(rows, d, "mbde", e, "nll")[0] for e in cfg.eps]
        q0 = _stats(rows, d, "q0", "", "nll")[0]
        mono = all(b <= a + 1e-3 for a, b in zip(nll, nll[1:]))
        beats = [e for e in cfg.eps if _stats(rows, d, "mbde", e, "nll")[0] < _stats(rows, d, "dpb-dp", e, "nll")[0]]
        best_dpb = min(_stats(rows, d, "dpb-dp", e, "nll")[0] for e in cfg.eps_dpb)
        match = [e for e in cfg.eps if _stats(rows, d, "mbde", e, "nll")[0] <= best_dpb]
        sd_m = np.nanmean([_stats(rows, d, "mbde", e, "nll")[1] for e in cfg.eps])
        sd_d = np.nanmean([_stats(rows, d, "dpb-dp", e, "nll")[1] for e in cfg.eps])
        cov = [_stats(rows, d, "mbde", e, "coverage")[0] for e in cfg.eps]
        out.append(
            f"- **{d}**: MBDE's NLL goes {nll[0]:.3f} → {nll[-1]:.3f} from ε = {cfg.eps[0]:g} to {cfg.eps[-1]:g} "
            f"({'monotone' if mono else 'NOT monotone'}; q0: {q0:.3f}). "
            f"MBDE beats DP-calibrated DPB at equal nominal ε "
            f"for ε ∈ {{{', '.join(f'{e:g}' for e in beats) or 'none'}}}; "
            + (
                f"from ε = {match[0]:g} on it is at least as good as DPB's best NLL over ε ≤ {cfg.eps_dpb[-1]:g} "
                f"({best_dpb:.3f}). "
                if match
                else f"it never reaches DPB's best NLL over ε ≤ {cfg.eps_dpb[-1]:g} ({best_dpb:.3f}). "
            )
            + f"Mean std over repetitions: MBDE {sd_m:.4f}, DPB {sd_d:.4f}. "
            f"Coverage: {cov[0]:.3f} → min {min(cov):.3f} → {cov[-1]:.3f} "
            f"(q0: {_stats(rows, d, 'q0', '', 'coverage')[0]:.3f})."
        )
    ip = [
        (
            d,
            min(_stats(rows, d, "dpb-ip", e, "nll")[0] for e in cfg.eps_dpb),
            max(_stats(rows, d, "dpb-ip", e, "nll")[0] for e in cfg.eps_dpb),
        )
        for d in domains
    ]
    dims = {d: 1 if ("1d" in d) else 2 for d in domains}
    out.append(
        "- Integral-privacy-calibrated DPB (noise × n, i.e. DP at ε/n): NLL between "
        + "; ".join(
            f"{d} {lo:.2f}–{hi:.2f} (uniform on the box: {dims[d] * math.log(2 * BOX):.2f})" for d, lo, hi in ip
        )
        + ", i.e. essentially noise. At equal nominal ε MBDE is compared with DP-calibrated DPB, "
        "as in the paper, which favours DPB: DPB's ε protects one record (n public), MBDE's protects the "
        "whole dataset, per sample."
    )
    fin = [
        (d, e, _stats(rows, d, "mbde", e, "nll")[0], _stats(rows, d, "mbde-finite", e, "nll")[0])
        for d in domains
        for e in getattr(cfg, "eps_finite", ())
        if any(r["method"] == "mbde-finite" for r in rows)
    ]
    r10 = 10 / 14
    out.append(
        "- What bounds MBDE is the mollifier: |log q/q0| ≤ ε/2. The paper's steps use C*Σθ_t = r + r² + r³ of the "
        f"ε/4 the proof allows for |g_T| (at ε = 10: {r10 + r10**2 + r10**3:.2f} of 2.5), "
        "and BCE-trained classifiers "
        "are calibrated, c ≈ (p − q)/(p + q), so they rarely saturate at ±C*: the learned log-ratio stays well inside "
        "its range. The ring needs q/q0 ≈ 15 on the circle and ≈ 0 at the origin; the mollifier allows only e^{±ε/2}."
        + (
            " The `finite` schedule (C*Σθ_t = ε/4 exactly, same proof) changes the NLL as follows: "
            + "; ".join(f"{d} ε={e:g}: {p:.3f} → {f:.3f}" for d, e, p, f in fin)
            + "."
            if fin
            else ""
        )
    )
    out.append(
        "- The comparison in per-sample ε flatters MBDE for large releases: m samples cost m·ε, while a DPB "
        "density costs ε once for any number of samples (and its CV bandwidth is not private, as in the paper). "
        "Mode coverage is uninformative for near-flat densities (a flat q_hat's 5% level set covers everything, "
        "hence DPB's coverage ≈ 1)."
    )
    return out


def plot(keep: dict, rows: list[dict], cfg, prefix: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    domains = list(dict.fromkeys(r["domain"] for r in rows))
    two_d = [d for d in domains if keep[(d, "domain", 0)].d == 2]
    ax1 = np.linspace(-4, 4, 161)
    G = np.stack(np.meshgrid(ax1, ax1, indexing="ij"), -1).reshape(-1, 2)
    eps_show = [e for e in (0.5, 1.0, 10.0) if e in cfg.eps] or list(cfg.eps[-1:])
    dpb_show = [e for e in (10.0, 1000.0) if e in cfg.eps_dpb] or list(cfg.eps_dpb[-1:])

    def panels(d):
        dom = keep[(d, "domain", 0)]
        out = [("target", dom.logpdf(G))]
        out += [(f"MBDE ε={e:g}", keep[(d, "mbde", e)].log_density(G)) for e in eps_show]
        out += [(f"private KDE (DP) ε={e:g}", keep[(d, "dpb-dp", e)].log_pdf(G)) for e in dpb_show]
        return out

    for fig_name, ds in (("fig1", ["ring"] if "ring" in two_d else two_d[:1]), ("fig4", two_d)):
        if not ds:
            continue
        ps = [panels(d) for d in ds]
        ncol = len(ps[0])
        fig, axes = plt.subplots(len(ds), ncol, figsize=(2.6 * ncol, 2.6 * len(ds)), squeeze=False)
        for i, (d, row) in enumerate(zip(ds, ps)):
            for j, (title, lp) in enumerate(row):
                a = axes[i, j]
                a.contourf(ax1, ax1, np.exp(lp).reshape(len(ax1), len(ax1)).T, levels=12, cmap="viridis")
                a.set_title(f"{d}: {title}" if j == 0 else title, fontsize=8)
                a.set_xticks([]), a.set_yticks([])
        fig.tight_layout()
        f = f"{prefix}.{fig_name}.png"
        fig.savefig(RESULTS / f, dpi=110)
        plt.close(fig)
        files.append(f)
    # 1-D densities (part of figure 4)
    one_d = [d for d in domains if keep[(d, "domain", 0)].d == 1]
    if one_d:
        x = np.linspace(-6, 6, 1201)[:, None]
        fig, axes = plt.subplots(1, len(one_d), figsize=(5 * len(one_d), 3.2), squeeze=False)
        for a, d in zip(axes[0], one_d):
            a.plot(x[:, 0], np.exp(keep[(d, "domain", 0)].logpdf(x)), "k", lw=2, label="target")
            for e in eps_show:
                a.plot(x[:, 0], np.exp(keep[(d, "mbde", e)].log_density(x)), label=f"MBDE ε={e:g}")
            for e in dpb_show:
                a.plot(x[:, 0], np.exp(keep[(d, "dpb-dp", e)].log_pdf(x)), "--", label=f"DPB (DP) ε={e:g}")
            a.set_title(d)
            a.legend(fontsize=7)
        fig.tight_layout()
        f = f"{prefix}.fig4-1d.png"
        fig.savefig(RESULTS / f, dpi=110)
        plt.close(fig)
        files.append(f)
    # figure 5: metrics against epsilon
    fig, axes = plt.subplots(2, len(domains), figsize=(4 * len(domains), 6.4), squeeze=False)
    for j, d in enumerate(domains):
        for i, key in enumerate(("nll", "coverage")):
            a = axes[i, j]
            for method, grid, style in (
                ("mbde", cfg.eps, "o-"),
                ("mbde-finite", cfg.eps_finite, "^-"),
                ("dpb-dp", cfg.eps_dpb, "s--"),
                ("dpb-ip", cfg.eps_dpb, "x:"),
            ):
                if not any(r["method"] == method for r in rows):
                    continue
                st = np.array([_stats(rows, d, method, e, key) for e in grid])
                a.errorbar(grid, st[:, 0], yerr=st[:, 1], fmt=style, ms=3, capsize=2, label=method)
            for ref, c in (("q0", "grey"), ("kde (non-private)", "green")):
                a.axhline(_stats(rows, d, ref, "", key)[0], color=c, ls="-.", lw=1, label=ref)
            if key == "nll":
                a.axhline(_stats(rows, d, "target", "", key)[0], color="k", lw=1, label="target")
            a.set_xscale("log")
            a.set_title(f"{d}: {'NLL' if key == 'nll' else 'mode coverage'}", fontsize=9)
            a.set_xlabel("ε")
        axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    f = f"{prefix}.fig5.png"
    fig.savefig(RESULTS / f, dpi=110)
    plt.close(fig)
    return files + [f]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="ring + 1-D mixture, n = 2,000, 3 epsilons, 1 repetition")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--domains", default=None, help="comma-separated subset of ring,mix3-1d,random-1d,random-2d")
    ap.add_argument(
        "--no-finite",
        dest="finite",
        action="store_false",
        help="skip the MBDE variant with the 'finite' step schedule (C* sum theta = eps/4 exactly; eps 1 and 10)",
    )
    ap.add_argument("--q0-fitted", action="store_true", help="run only the q0-fitted arm (1-D domains)")
    ap.add_argument("--q0-share", type=float, default=0.1, help="share of each epsilon spent on q0 (default 0.1)")
    ap.add_argument("--q0-eps", default=None, help="comma-separated epsilons of the q0-fitted arm (default: all)")
    ap.add_argument(
        "--q0-ip-eps", default=None, help="epsilons of the integral-privacy calibration (default: --q0-eps)"
    )
    ap.add_argument("--q0-report", action="store_true", help="rewrite the q0 section from mbde_paper.q0.csv only")
    ap.add_argument("--q0-calibrations", default="ip,dp", help="ip, dp or both (default ip,dp)")
    cfg = ap.parse_args(argv)
    cfg.hidden = (25, 25, 25)
    if cfg.q0_fitted or cfg.q0_report:
        return main_q0(cfg)
    if cfg.quick:
        cfg.n, cfg.n_test, cfg.epochs, cfg.cv_points = 2000, 5000, 300, 1500
        cfg.eps, cfg.eps_dpb, cfg.eps_finite = (0.5, 2.0, 10.0), (0.5, 2.0, 10.0, 1000.0), (10.0,)
        cfg.reps = cfg.reps or 1
        cfg.finite = False  # keep the quick run well under a minute
        doms = (cfg.domains or "ring,mix3-1d").split(",")
        prefix = "mbde_paper.quick"
    else:
        cfg.n, cfg.n_test, cfg.epochs, cfg.cv_points = 10_000, 10_000, 600, 4000
        cfg.eps, cfg.eps_dpb, cfg.eps_finite = EPS_MBDE, EPS_DPB, (1.0, 10.0)
        cfg.reps = cfg.reps or 4
        doms = (cfg.domains or "ring,mix3-1d,random-1d,random-2d").split(",")
        prefix = "mbde_paper"
    RESULTS.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    ring_s = ring_timing(cfg) if not cfg.quick else math.nan
    rows, keep = [], {}
    for i_dom, name in enumerate(doms):
        for rep in range(cfg.reps):
            t0 = time.perf_counter()
            rows += run_one(name, rep, cfg, keep)
            mb = [r for r in rows if r["domain"] == name and r["rep"] == rep and r["method"] == "mbde"]
            print(
                f"{name} rep {rep}: {time.perf_counter() - t0:.1f} s; MBDE NLL "
                + ", ".join(f"ε={r['epsilon']:g}: {r['nll']:.3f}" for r in mb),
                flush=True,
            )
            keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
            with open(RESULTS / f"{prefix}.csv", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=keys)
                w.writeheader()
                w.writerows(rows)
        if i_dom < len(doms) - 1:  # partial report after each finished domain (a long run can be cut short)
            cfg.partial = f"PARTIAL: {i_dom + 1} of {len(doms)} domains done"
            write_markdown(
                RESULTS / f"{prefix}.md",
                rows,
                cfg,
                ring_s,
                time.perf_counter() - t_start,
                plot(keep, rows, cfg, prefix),
            )
    cfg.partial = ""
    if cfg.quick:  # the quick run times its ring domain instead (n = 2,000)
        ring_s = sum(r["seconds"] for r in rows if r["domain"] == "ring" and r["method"] == "mbde")
    figs = plot(keep, rows, cfg, prefix)
    total = time.perf_counter() - t_start
    write_markdown(RESULTS / f"{prefix}.md", rows, cfg, ring_s, total, figs)
    stamp(__file__, *(RESULTS / f for f in [f"{prefix}.md", f"{prefix}.csv", *figs]))
    print(f"wrote {RESULTS / (prefix + '.md')} and .csv, figures {', '.join(figs)}; total {total:.1f} s")


def main_q0(cfg) -> None:
    cfg.n, cfg.n_test, cfg.epochs = 10_000, 10_000, 600
    cfg.q0_eps = tuple(float(e) for e in cfg.q0_eps.split(",")) if cfg.q0_eps else EPS_MBDE
    cfg.q0_ip_eps = tuple(float(e) for e in cfg.q0_ip_eps.split(",")) if cfg.q0_ip_eps else cfg.q0_eps
    cfg.q0_calibrations = tuple(cfg.q0_calibrations.split(","))
    reps = cfg.reps or 4
    doms = (cfg.domains or "random-1d,mix3-1d").split(",")
    out = RESULTS / "mbde_paper.q0.csv"
    if cfg.q0_report:  # re-render the section from the stored CSV (nothing is run)
        with open(out) as f:
            rows = [
                {**r, "epsilon": float(r["epsilon"]), "nll": float(r["nll"]), "q0_nll": float(r["q0_nll"])}
                for r in csv.DictReader(f)
            ]
        cfg.q0_eps = tuple(sorted({r["epsilon"] for r in rows if r["method"] == Q0_METHODS["dp"]}))
        cfg.q0_ip_eps = tuple(sorted({r["epsilon"] for r in rows if r["method"] == Q0_METHODS["ip"]}))
    else:
        rows = []
        for name in doms:
            for rep in range(reps):
                rows += run_q0_fitted(name, rep, cfg)
                with open(out, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
    with open(RESULTS / "mbde_paper.csv") as f:
        stored = [{**r, "epsilon": float(r["epsilon"]) if r["epsilon"] else ""} for r in csv.DictReader(f)]
    for r in stored:
        r["nll"] = float(r["nll"])
    write_q0_section(RESULTS / "mbde_paper.md", q0_section(rows, stored, cfg))
    if not cfg.q0_report:
        stamp(__file__, out)
    print(f"wrote {out} and the q0 section of mbde_paper.md")


if __name__ == "__main__":
    main()
