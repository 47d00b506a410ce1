"""PPSyn on Private-PGM: select-measure-generate where a round may measure a marginal on a partition of its cells
(Zhang, Deng and Yin 2023, "Partition-based differentially private synthetic data generation", Section 4).

``mode="dp"`` (default), PPSyn-DP. Guarantee: rho-zCDP under add/remove one record, with rho = everything the
accountant has left. Proof sketch (it covers the steps both schedules below share):
* Initialisation (Alg. 1) measures the one-way marginal of every attribute of the workload with discrete
  Gaussian noise; attribute i gets rho_i = s rho c_i^(2/3) / sum_j c_j^(2/3) (c = cells, PrivSyn's split; s a
  function of the width d only, :func:`one_way_share`). Each has L2 sensitivity 1: this costs s rho. The workload,
  its candidates and d hold only the columns worth measuring (``selection.informative_attributes``: a one-cell
  column's marginals are the record count and the other columns'); with none, the number of records is measured
  once with all of rho (sensitivity 1, ``base.count_measurement``) and there are no rounds.
* In each round, given the public state H (all earlier outputs, hence the fitted model p̂), the candidates
  (a model-size filter), the model marginals mu_w, their partition paths (Alg. 3/4 run on mu_w, *never* on the
  data), the plans and the round's budgets are functions of H only (:func:`public_plan`, :func:`public_options`,
  :func:`round_budgets`, :func:`budget_rule` receive no data). Only the steps in DATA_STEPS read the data.
* Selection: the exponential mechanism on a quality of sensitivity Δ (below), rho_sel-zCDP given the public
  candidates; the annealed schedule scores at most ``max_candidates``, drawn independently of the data
  (:func:`candidate_subset`).
* Measurement: Q·x_w, the integer sums of x_w over the groups of the chosen partition, with discrete Gaussian
  noise sigma_m = (2 rho_m)^(-1/2). Every record is in one cell, hence in one group: L2 sensitivity 1,
  rho_m-zCDP given its public parameters.
* Per-round costs are chosen adaptively from H and capped so that the total never exceeds rho (the accountant
  also refuses any overrun); the last round spends exactly what remains. Adaptive composition of zCDP under a
  privacy filter (Feldman & Zrnic 2021; Whitehouse et al. 2023) gives rho-zCDP overall. Estimation
  (Private-PGM) and sampling are post-processing.
* Structural zeros (the schema's public ``forbid`` and ``require``, :mod:`privsample.synth.zeros`) cost nothing: their
  cliques are in every model (and in the size filter), their cells fixed at zero in every fit.
* Under the accountant's person-level unit (one person, at most k records; ``privsample.privacy.unit``) every
  sensitivity stated here is per record and the person-level one is k times it: each Gaussian measurement and
  selection is calibrated to that (sigma_m = k (2 rho_m)^(-1/2); the Spender does it), so each step keeps its rho.

``schedule="annealed"`` (default): AIM's budget schedule. After initialisation, (1 − s) rho is cut into T = 16
min(d, 25) rounds of rho_r (AIM's T = 16 d up to 25 columns; a function of d only), alpha = 0.9 of which measures
(rho_m) and 0.1 selects (rho_sel). The exponential mechanism picks a (clique w, partition P) pair among public
options (:func:`public_options`: P_1, P_3, P_7, ... of w's path, up to ``option_parts`` parts, and the identity,
AIM's measurement) by q(w, P) = c_w (G_w(P) − sqrt(2/pi) sigma_m |P|) with G_w(P) = ||Q_P (x_w − mu_w)||₁
(``quality="group"``): one record moves one cell of x_w, hence one group sum, by 1, so Δ = max c_w, AIM's
sensitivity (tested: attained). ``quality="gain"`` scores C_w − misfit_w(P) (:func:`misfit`), and one record moves
misfit by at most 2, so Δ = 3 max c_w (SELECT_SENSITIVITY; tested). After the refit, if the model marginal moved
less than sqrt(2/pi) sigma_m |P|, sigma_m halves and the selection epsilon doubles (AIM's annealing); when less than
two rounds' budget remains, the last round spends exactly what is left. No contribution release; eta unused. The
defaults (size limit, refit steps, path refresh, quality, T, s) are public choices (measured in
benchmarks/results/ppsyn_dp_variants.md and ppsyn_wide.md).

Public data (``public``, annealed schedule only; the note schedule and paper mode refuse it). JAM's options
(Fuentes, Mullins, McKenna, Miklau & Sheldon 2024, as in :mod:`privsample.synth.aim`): every round but the last
also offers (w, public) for each candidate not yet measured publicly, scored c_w (||x_w − mu_w||₁ − ||x_w − N̂ p_w||₁)
(p_w the public shares, N̂ the model's total): sensitivity 2 c_w, and the EM's Δ is the max over all options offered.
A public pick adds N̂ p_w as a measurement with the round's sigma_m and spends nothing beyond its selection; the
schedule counts the saved rho_m as spent, the last round (private options only) spends everything left, and a
public round never anneals. The public partition plan: the paper cuts the TRUE marginal x_w so that each group
holds cells of similar count (Alg. 3/4 minimise the reconstruction error on x_w); the model path stands in for
x_w with mu_w, the public marginal is a second stand-in, free and independent of what the model already knows. So
the partitions P_1, P_3, ... of the path on the public counts (:func:`public_path_options`, computed once per
clique) are offered as extra private measurements beside the model path's: P is public, so q(w, P) keeps the
sensitivity c_w (3 c_w for "gain"). Without a public table the fit is unchanged (same ledger and seeded output).

``schedule="note"``: the paper's rounds made private (T = d, eta = 0.7). Each round: 1. budgets
(:func:`round_budgets`); 2. candidates (static 80 MB size filter); 3. the public plan (:func:`public_plan`);
4. selection on q_w = C_w(D) − E_w, C_w = ||x_w − mu_w||₁ (1-Lipschitz in the data) and E_w fixed given H: Δ = 1;
5. the contribution C̃ = max(0, C_m(D) + noise), a Gaussian mechanism, rho_c-zCDP (:func:`release_contribution`);
6. the partition P_m and rho_m from (H, m, C̃) by the paper's eta rule (:func:`budget_rule`, post-processing);
7. the measurement at rho_m; 8. the refit.

``mode="paper"``: Algorithms 1–4 as published, for replication only. It is NOT differentially private
(:class:`PPSyn` says why); it warns and labels its ledger entries, model and outputs NOT PRIVATE.

The package: :mod:`.core` (options, the data steps, measurement, refit), :mod:`.annealed`, :mod:`.note` and
:mod:`.paper` (each schedule's rounds) and :mod:`.mechanism` (the :class:`PPSyn` synthesizer and its fit);
:mod:`privsample.synth.ppsyn_steps` has the public planning, the selection qualities and the budgeted steps.
"""

from privsample.synth.ppsyn.core import (
    ANNEALED_FINAL_ITERS,
    ANNEALED_INIT_ITERS,
    ANNEALED_ROUND_ITERS,
    DATA_STEPS,
    DP_MAX_CANDIDATES,
    DP_MAX_MODEL_SIZE,
    PAPER_MAX_MODEL_SIZE,
    SCHEDULES,
    UnsafeMechanismWarning,
)
from privsample.synth.ppsyn.mechanism import PPSyn

__all__ = [
    "PPSyn",
    "UnsafeMechanismWarning",
    "DATA_STEPS",
    "SCHEDULES",
    "ANNEALED_FINAL_ITERS",
    "ANNEALED_INIT_ITERS",
    "ANNEALED_ROUND_ITERS",
    "DP_MAX_CANDIDATES",
    "DP_MAX_MODEL_SIZE",
    "PAPER_MAX_MODEL_SIZE",
]
