"""Differentially private samplers from distributions: one record drawn close in total variation to the
distribution the data came from (k-ary, bounded-bias Bernoulli products, general Bernoulli products).

Guarantee: for **replace-one** neighbours with n public. :mod:`~privsample.samplers.kary` is pure
epsilon-DP (discrete Laplace noise on the counts, L1 sensitivity 2); :mod:`~privsample.samplers.bernoulli`
adds no noise and is pure eps0-DP per column, eps0(n) = ln(1 + 1/(a n)), so pure (d eps0)-DP or
(d eps0^2 / 2)-zCDP for d columns; :mod:`~privsample.samplers.product` is rho-zCDP (discrete Gaussian noise
on truncated batch sums, each record in one batch). Final draws are exact
(:mod:`~privsample.samplers.exact_draw`). m draws run the sampler on m disjoint, data-independent parts
and have the guarantee of one part (parallel composition, :mod:`~privsample.samplers.parallel`).

Paper: Raskhodnikova, Sivakumar, Smith and Swanberg (2021), *Differentially Private Sampling from
Distributions* (NeurIPS 2021; full version arXiv 2211.08193).
"""
