"""The release of the samplers from distributions (:mod:`privsample.api.draws`): :func:`draw_release` makes
the draws of a :class:`~privsample.api.draws.requests.DrawRequest` from its
:class:`~privsample.api.draws.inputs.DrawInput`, one per disjoint part of a public random partition, and
returns the draws with public texts only: the ledger, the guarantee, the input rule and the part sizes
(functions of the public n and m).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from privsample.api.draws.inputs import DrawInput
from privsample.api.draws.requests import DrawRequest
from privsample.api.release import Release

NEIGHBOURS = "(neighbours: replace one record, n public)"
BINARY_RULE = (
    "input rule (applied to every record, whatever the data): a cell reads 1 iff it is exactly one "
    "(1, 1.0, '1', true); anything else, a missing cell included, reads 0"
)


def parts_note(sizes: list[int]) -> str:
    """The per-part sizes line (functions of the public n and m)."""
    parts = ", ".join(f"{k} × {v:,}" for v, k in sorted(Counter(sizes).items(), reverse=True))
    return (
        f"per-part n: {parts} ({len(sizes)} disjoint part(s), one draw each; "
        "parallel composition: the draws cost one part's budget)"
    )


def _release(acc, draws, table, guarantee: str, rule: str) -> Release:
    from privsample.privacy.ledger import Ledger

    return Release(
        table=table,
        ledger=Ledger(acc.to_dict()),
        guarantee=f"{guarantee} {NEIGHBOURS}",
        rule=rule,
        notes=[parts_note(draws.per_part_n)],
    )


def _kary_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import kary
    from privsample.samplers.parallel import NEIGHBOURING

    dom, epsilon = r.domain, r.epsilon
    acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    draws = kary.kary_sample(
        table.values, dom.outcomes, epsilon=epsilon, accountant=acc, noise=noise, samples=r.samples, rng=rng
    )
    labels, catch, kk = dom.labels, dom.catch, dom.k
    out_vals = [labels[i] for i in draws.samples] if dom.named else [int(i) for i in draws.samples]
    if dom.named:
        name = repr(labels[catch])
    else:
        name = f"code {catch}" + (f" ('{kary.OTHER_LABEL}')" if catch == kk else "")
    extra = "" if dom.outcomes == kk else f", an extra outcome: k = {kk} + 1 = {dom.outcomes} outcomes"
    rule = (
        "input rule (applied to every record, whatever the data): a value that is not "
        + ("a declared category" if dom.named else f"one of the codes 0..{kk - 1}")
        + f", or is missing, counts as {name}{extra}"
    )
    guarantee = (
        f"pure ε-DP with ε = {epsilon:g} (discrete Laplace, scale {kary.noise_scale(epsilon):.4g} on counts; "
        f"the ledger's ρ = ε²/2 is its zCDP image); each draw has TV ≤ 2k/(ε n) = "
        f"{kary.tv_bound(dom.outcomes, epsilon, min(draws.per_part_n)):.3g} with k = {dom.outcomes}"
    )
    return _release(acc, draws, pd.DataFrame({table.columns[0]: out_vals}), guarantee, rule)


def _bernoulli_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.privacy.conversion import cdp_rho
    from privsample.samplers import bernoulli
    from privsample.samplers.parallel import NEIGHBOURING

    epsilon, delta = r.epsilon, r.delta
    if delta is None:
        acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    else:
        acc = Accountant(cdp_rho(epsilon, delta), target=(epsilon, delta), neighbouring=NEIGHBOURING)
    draws = bernoulli.bounded_bias_sample(
        table.values,
        epsilon=epsilon,
        delta=delta,
        accountant=acc,
        noise=noise,
        a=r.clip,
        samples=r.samples,
        rng=rng,
        delta_name=r.option("delta"),
    )
    if delta is None:
        guarantee = (
            f"pure ε-DP with ε = {draws.epsilon:.4g} ≤ {epsilon:g} (d ln(1 + 1/(a n)), n = "
            f"{min(draws.per_part_n):,} per draw; the ledger's ρ = ε²/2 is its zCDP image)"
        )
    else:
        guarantee = (
            f"ρ-zCDP with ρ = {draws.rho:.4g} ≤ ρ(ε = {epsilon:g}, δ = {delta:g}) = "
            f"{acc.rho_total:.4g} "
            f"(each column pure {draws.epsilon or bernoulli.column_epsilon(min(draws.per_part_n), r.clip):.4g}-DP)"
        )
    bits = pd.DataFrame(draws.samples.astype(int), columns=list(table.columns))
    return _release(acc, draws, bits, guarantee, BINARY_RULE)


def _product_release(r: DrawRequest, table: DrawInput, noise, rng) -> Release:
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import product
    from privsample.samplers.parallel import NEIGHBOURING

    acc = Accountant.from_epsilon_delta(r.epsilon, r.delta, neighbouring=NEIGHBOURING)
    draws = product.product_sample(
        table.values, rho=acc.rho_total, accountant=acc, noise=noise, samples=r.samples, alpha=r.alpha, rng=rng
    )
    guarantee = f"ρ-zCDP with ρ = {draws.rho:.4g}, i.e. ({r.epsilon:g}, {r.delta:g})-DP (RSSS Lemma 5.2)"
    bits = pd.DataFrame(draws.samples.astype(int), columns=list(table.columns))
    return _release(acc, draws, bits, guarantee, BINARY_RULE)


def draw_release(request: DrawRequest, table: DrawInput) -> Release:
    """The ``request.samples`` draws from ``table`` (read by :func:`draw_input` for this request), one per
    disjoint part of a public random partition: the draws and public texts only. The noise and the partition
    are seeded with ``request.seed`` (NOT private; the caller warns)."""
    from privsample.privacy import make_noise

    # the noise source, then the public rng of the partition (both seeded when a seed is given)
    noise, rng = make_noise(request.seed, quiet=True), np.random.default_rng(request.seed)
    run = {"kary": _kary_release, "bernoulli": _bernoulli_release, "product": _product_release}[request.kind]
    return run(request, table, noise, rng)
