"""Command line for the seed-003 samplers: ``privsample draw kary | bernoulli | product`` (issue 5).

Each command draws ``--samples m`` records, one per disjoint part of the data (a public random partition,
parallel composition: the m draws cost one part's budget), and refuses (exit 2, nothing written) when a
part is too small for the privacy the sampler can certify or for the accuracy ``--alpha`` asks for,
saying how many records would be needed. Guarantees are for replace-one neighbours with n public.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from privsample.errors import InputError

draw_app = typer.Typer(no_args_is_help=True, help="DP samplers from distributions (seed 003): one private draw per disjoint part.")

_SKIP_HELP = "Draw even if the accuracy bound for --alpha is not met (privacy is unaffected)."
_SAMPLES_HELP = "Number of draws m; each uses its own disjoint part of about n/m records."


# -- helpers ------------------------------------------------------------------------------------------
def _check_epsilon(epsilon: float) -> None:
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"--epsilon must be > 0 and finite (got {epsilon})")


def _check_alpha(alpha: float) -> None:
    if not (0 < alpha < 1):
        raise InputError(f"--alpha must lie in (0, 1) (got {alpha})")


def _check_delta(delta: float) -> None:
    if not (0 < delta < 1):
        raise InputError(f"--delta must lie in (0, 1) (got {delta})")


def _norm(v) -> str:
    """Text form of a cell, so that CSV text, Parquet integers/floats and booleans compare alike."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    s = str(v).strip()
    if s.endswith(".0") and s[:-2].lstrip("-").isdigit():
        s = s[:-2]
    return s


def _read(input: Path, columns: list[str] | None):
    from privsample.data.table import read_table

    df = read_table(input)
    if columns is None:
        columns = [str(c) for c in df.columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"column(s) {', '.join(repr(c) for c in missing)} not in {input} "
                         f"(columns: {', '.join(map(str, df.columns))})")
    if len(set(columns)) != len(columns):
        raise InputError("--columns lists a column twice")
    for c in columns:
        if df[c].isna().any():
            raise InputError(f"column '{c}' has missing values: the samplers need complete columns")
    return df, columns


def _binary_matrix(df, columns: list[str]):
    import numpy as np

    X = np.empty((len(df), len(columns)), dtype=np.int8)
    for j, c in enumerate(columns):
        vals = [_norm(v) for v in df[c].tolist()]
        bad = next((v for v in vals if v not in ("0", "1", "true", "false")), None)
        if bad is not None:
            raise InputError(f"column '{c}' is not binary (e.g. value '{bad}'): the Bernoulli samplers need 0/1 "
                             "columns; choose binary columns with --columns")
        X[:, j] = [1 if v in ("1", "true") else 0 for v in vals]
    return X


def _parts_text(sizes: list[int]) -> str:
    from collections import Counter

    return ", ".join(f"{k} × {v:,}" for v, k in sorted(Counter(sizes).items(), reverse=True))


def _refuse_accuracy(what: str, need: int, m: int, n: int, alpha: float, skip: bool) -> None:
    from privsample.cli import err
    from privsample.sampling.parallel import NotEnoughRecords

    n_min = n // m
    if n_min >= need:
        return
    msg = (f"{what} needs n >= {need:,} records per draw for TV <= alpha = {alpha:g}, i.e. n >= {need * m:,} "
           f"for {m} draw(s); the data give {n_min:,} per draw (n = {n:,})")
    if skip:
        err.print(f"[bold yellow]WARNING: {msg}; drawing anyway (--skip-accuracy-check).[/bold yellow]")
        return
    raise NotEnoughRecords(msg + (f"; at this alpha at most {n // need:,} draw(s) are covered" if n >= need else "")
                           + "; raise --alpha or --epsilon, or pass --skip-accuracy-check")


def _finish(acc, draws, df_out, output: Path, guarantee: str) -> None:
    from privsample.cli import err, print_ledger
    from privsample.pipeline import write_table

    write_table(df_out, output)
    print_ledger(acc.to_dict(), err)
    err.print(f"guarantee: {guarantee} (neighbours: replace one record, n public)")
    err.print(f"per-part n: {_parts_text(draws.per_part_n)} ({draws.parts} disjoint part(s), one draw each; "
              "parallel composition: the draws cost one part's budget)")
    err.print(f"wrote {draws.parts:,} sample(s) to {output}")


def _setup(seed: Optional[int]):
    import numpy as np

    from privsample.cli import _warn_seeded
    from privsample.privacy import make_noise

    _warn_seeded(seed)
    return make_noise(seed, quiet=True), np.random.default_rng(seed)  # the rng is public (the partition)


# -- commands -------------------------------------------------------------------------------------------
@draw_app.command("kary")
def draw_kary(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    column: str = typer.Option(..., "--column", "-c", help="The categorical column to sample."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (one column)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Pure ε (replace-one neighbours, n public)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    categories: Optional[str] = typer.Option(None, "--categories", help="The public domain: categories separated by ','."),
    k: Optional[int] = typer.Option(None, "--k", help="The public domain size; without --categories the values "
                                    "must be the integer codes 0..k-1."),
    alpha: float = typer.Option(0.1, "--alpha", help="Target TV distance of each draw (Thm 1.4: n ≥ 2k/(αε) per draw)."),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
) -> None:
    """k-ary sampler (RSSS Alg. 3): noisy histogram, projection onto the simplex, one draw per part. Pure ε-DP."""
    import numpy as np
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.sampling import kary
    from privsample.sampling.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    if categories is None and k is None:
        raise InputError("declare the public domain of the column with --categories a,b,c or --k K "
                         "(reading it from the data would not be private)")
    cats = None
    if categories is not None:
        cats = [c.strip() for c in categories.split(",")]
        if any(c == "" for c in cats) or len(set(cats)) != len(cats):
            raise InputError("--categories must be distinct, non-empty names separated by ','")
        if k is not None and k != len(cats):
            raise InputError(f"--k {k} does not match the {len(cats)} --categories")
    kk = len(cats) if cats is not None else int(k)
    if kk < 1:
        raise InputError(f"--k must be >= 1 (got {kk})")
    df, _ = _read(input, [column])
    labels = cats if cats is not None else [str(i) for i in range(kk)]
    index = {c: i for i, c in enumerate(labels)}
    vals = [_norm(v) for v in df[column].tolist()]
    outside = [v for v in vals if v not in index]
    if outside:
        raise InputError(f"column '{column}' has {len(outside):,} value(s) outside the declared domain of k = {kk} "
                         f"categories (e.g. '{outside[0]}'); declare every category with --categories"
                         + ("" if cats is not None else " or raise --k"))
    codes = np.array([index[v] for v in vals], dtype=np.int64)
    n = len(codes)
    sizes = part_sizes(n, samples)
    _refuse_accuracy(f"the k-ary sampler (k = {kk}, ε = {epsilon:g}; RSSS Thm 1.4)",
                     kary.required_n(kk, epsilon, alpha), samples, n, alpha, skip_accuracy_check)
    noise, rng = _setup(seed)
    acc = Accountant(epsilon ** 2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    draws = kary.kary_sample(codes, kk, epsilon=epsilon, accountant=acc, noise=noise, samples=samples, rng=rng)
    assert draws.per_part_n == sizes
    out_vals = [labels[i] for i in draws.samples] if cats is not None else [int(i) for i in draws.samples]
    _finish(acc, draws, pd.DataFrame({column: out_vals}), output,
            f"pure ε-DP with ε = {epsilon:g} (discrete Laplace, scale {kary.noise_scale(epsilon):.4g} on counts; "
            f"the ledger's ρ = ε²/2 is its zCDP image); each draw has TV ≤ 2k/(ε n) = "
            f"{kary.tv_bound(kk, epsilon, min(sizes)):.3g}")


@draw_app.command("bernoulli")
def draw_bernoulli(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet) with binary 0/1 columns."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: Optional[float] = typer.Option(None, "--delta", "-d", help="With δ: (ε, δ)-DP via zCDP over the columns "
                                          "(Thm 6.4); without: pure ε-DP (Thm 6.1; basic composition over columns)."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    clip: str = typer.Option("1/4", "--clip", help="Clip margin a: the mean is clipped to [a, 1-a], 0 < a < 1/3."),
    alpha: float = typer.Option(0.1, "--alpha", help="Target TV distance of each draw (for biases in [1/3, 2/3])."),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE draws (experiments only)."),
) -> None:
    """Bounded-bias sampler (RSSS Thms 6.1/6.4): clipped column means, one Bernoulli per column, no added noise.

    Accurate for biases in [1/3, 2/3]; private for any data."""
    from fractions import Fraction

    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.privacy.conversion import cdp_rho
    from privsample.sampling import bernoulli
    from privsample.sampling.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    if delta is not None:
        _check_delta(delta)
    try:
        a = bernoulli.check_clip(Fraction(clip.strip()))
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--clip must be a number such as 1/4 or 0.25 (got {clip!r})") from None
    df, cols = _read(input, None if columns is None else [c.strip() for c in columns.split(",")])
    X = _binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    _refuse_accuracy(f"the bounded-bias sampler (d = {d}, a = {a}; RSSS Claim 6.2)", bernoulli.required_n(alpha, d, a),
                     samples, n, alpha, skip_accuracy_check)
    noise, rng = _setup(seed)
    if delta is None:
        acc = Accountant(epsilon ** 2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    else:
        acc = Accountant(cdp_rho(epsilon, delta), target=(epsilon, delta), neighbouring=NEIGHBOURING)
    draws = bernoulli.bounded_bias_sample(X, epsilon=epsilon, delta=delta, accountant=acc, noise=noise, a=a,
                                          samples=samples, rng=rng)
    if delta is None:
        guarantee = (f"pure ε-DP with ε = {draws.epsilon:.4g} ≤ {epsilon:g} (d ln(1 + 1/(a n)), n = "
                     f"{min(draws.per_part_n):,} per draw; the ledger's ρ = ε²/2 is its zCDP image)")
    else:
        guarantee = (f"ρ-zCDP with ρ = {draws.rho:.4g} ≤ ρ(ε = {epsilon:g}, δ = {delta:g}) = {acc.rho_total:.4g} "
                     f"(each column pure {draws.epsilon or bernoulli.column_epsilon(min(draws.per_part_n), a):.4g}-DP)")
    _finish(acc, draws, pd.DataFrame(draws.samples.astype(int), columns=cols), output, guarantee)


@draw_app.command("product")
def draw_product(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet) with binary 0/1 columns."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy δ in (0, 1): the sampler is ρ(ε, δ)-zCDP."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    alpha: float = typer.Option(0.1, "--alpha", help="Target TV distance of each draw (note's conservative "
                                "sufficient bound for Thm 5.1)."),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
) -> None:
    """General product sampler (RSSS Alg. 4): bucketing by noisy truncated means, then fresh noisy means and
    one Bernoulli per column. ρ-zCDP, converted to (ε, δ)-DP."""
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.sampling import product
    from privsample.sampling.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    _check_delta(delta)
    df, cols = _read(input, None if columns is None else [c.strip() for c in columns.split(",")])
    X = _binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    acc = Accountant.from_epsilon_delta(epsilon, delta, neighbouring=NEIGHBOURING)
    _refuse_accuracy(f"the product sampler (d = {d}, ρ = {acc.rho_total:.4g}; notes/dp-samplers.md §4, a "
                     "conservative sufficient bound)", product.required_n(d, acc.rho_total, alpha),
                     samples, n, alpha, skip_accuracy_check)
    noise, rng = _setup(seed)
    draws = product.product_sample(X, rho=acc.rho_total, accountant=acc, noise=noise, samples=samples, alpha=alpha,
                                   rng=rng)
    _finish(acc, draws, pd.DataFrame(draws.samples.astype(int), columns=cols), output,
            f"ρ-zCDP with ρ = {draws.rho:.4g}, i.e. ({epsilon:g}, {delta:g})-DP (RSSS Lemma 5.2)")
