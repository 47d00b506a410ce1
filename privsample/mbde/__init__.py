"""MBDE, mollified boosted density estimation: integrally private sampling of continuous data, and its
private-KDE baseline.

Guarantee: epsilon-*integral privacy* for the released samples: Pr[A(S) in B] <= e^epsilon Pr[A(S') in B]
for **every** pair of datasets S, S' (no adjacency, any sizes), hence epsilon-DP for any neighbouring
relation. The density q_T = q0 exp(g_T) / Z_T keeps |g_T| <= epsilon/4 everywhere (data-independent q0,
squashed classifiers, data-independent step sizes), and released points are exact rejection draws from
q_T, so one sample is epsilon-IP and m samples are (m epsilon)-IP (:mod:`~privsample.mbde.density`,
:mod:`~privsample.mbde.release`). Optionally (off by default) q0 is fitted first by an integrally private
Laplace release of clipped moments at a share of epsilon, the costs adding up (:mod:`~privsample.mbde.fitted_q0`).
The density itself is not private and is never released. The baseline
(:mod:`~privsample.mbde.private_kde`) is pure epsilon-DP for replace-one neighbours with n public
(Laplace noise on Bernstein coefficients), or epsilon-IP between any two datasets of the public size n
with n times the noise.

Papers: Husain, Cranko and Nock (2018), *Integral Privacy for Density Estimation with Approximation
Guarantees* (arXiv 1806.04819): MBDE; Aldà and Rubinstein (2017), *The Bernstein Mechanism: Function
Release under Differential Privacy* (AAAI 2017): the baseline.
"""
