"""Command line for the RSSS samplers (Raskhodnikova, Sivakumar, Smith and Swanberg 2021):
``privsample draw kary | bernoulli | product``.

Each command draws ``--samples m`` records, one per disjoint part of the data (a public random partition,
parallel composition: the m draws cost one part's budget), and refuses (exit 2, nothing written) when a
part is too small for the privacy the sampler can certify or for the accuracy ``--alpha`` asks for,
saying how many records would be needed. Guarantees are for replace-one neighbours with n public.

What reaches the terminal. n is public under this relation, so n, the part sizes (functions of n and m)
and refusals computed from them are printed; so are the public parameters (epsilon, delta, k, the columns,
the declared categories). Nothing else about the data: raw cells are mapped to the sampler's public domain
by a fixed per-record rule (:func:`privsample.samplers.kary.encode`: anything not declared, missing included,
is the catch-all "(other)"; :func:`privsample.samplers.bernoulli.binarize`: 1 iff exactly one, else 0) that
never refuses and never drops a record (dropping would change n). Each command prints its rule on every
successful run, never whether it fired or how often; ``privsample check`` (not private) lists such values
for the data owner. Problems with public facts (a column missing from the header, bad flags) are one-line
errors with exit 2.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from privsample.cli.common import (
    check_paths,
    delimiter_option,
    encoding_option,
    err,
    print_ledger,
    warn_seeded,
)
from privsample.errors import InputError

draw_app = typer.Typer(
    no_args_is_help=True, help="DP samplers from distributions (RSSS 2021): one private draw per disjoint part."
)

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


def _norm(v) -> str | None:
    """Text form of a cell, so that CSV text, Parquet integers/floats and booleans compare alike; None if the
    cell is missing (None, NaN, pd.NA: what ``read_table`` makes of empty cells and its NA markers)."""
    import pandas as pd

    if v is None or (not isinstance(v, str) and bool(pd.isna(v))):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    s = str(v).strip()
    if s.endswith(".0") and s[:-2].lstrip("-").isdigit():
        s = s[:-2]
    return s


def _read(
    input: Path, columns: list[str] | None, output: Path, delimiter: str | None = None, encoding: str | None = None
):
    """The table, once the output path has been checked (:func:`privsample.cli.common.check_paths`)."""
    from privsample.data.table import read_table

    check_paths({"INPUT": input}, {"-o/--output": output})
    df = read_table(input, delimiter=delimiter, encoding=encoding)
    if columns is None:
        columns = [str(c) for c in df.columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(
            f"column(s) {', '.join(repr(c) for c in missing)} not in {input} "
            f"(columns: {', '.join(map(str, df.columns))})"
        )
    if len(set(columns)) != len(columns):
        raise InputError("--columns lists a column twice")
    return df, columns  # missing cells are handled per record by each sampler's public rule, never refused


BINARY_RULE = (
    "input rule (applied to every record, whatever the data): a cell reads 1 iff it is exactly one "
    "(1, 1.0, '1', true); anything else, a missing cell included, reads 0"
)


def _binary_matrix(df, columns: list[str]):
    """The n x d bits of ``columns`` by the fixed per-record rule :func:`bernoulli.binarize` (never refuses)."""
    import numpy as np

    from privsample.samplers.bernoulli import binarize

    X = np.empty((len(df), len(columns)), dtype=np.int8)
    for j, c in enumerate(columns):
        X[:, j] = binarize([_norm(v) for v in df[c].tolist()])
    return X


def _parts_text(sizes: list[int]) -> str:
    from collections import Counter

    return ", ".join(f"{k} × {v:,}" for v, k in sorted(Counter(sizes).items(), reverse=True))


def _refuse_accuracy(what: str, need: int, m: int, n: int, alpha: float, skip: bool) -> None:
    from privsample.samplers.parallel import NotEnoughRecords

    n_min = n // m
    if n_min >= need:
        return
    msg = (
        f"{what} needs n >= {need:,} records per draw for TV <= alpha = {alpha:g}, i.e. n >= {need * m:,} "
        f"for {m} draw(s); the data give {n_min:,} per draw (n = {n:,})"
    )
    if skip:
        err.print(f"[bold yellow]WARNING: {msg}; drawing anyway (--skip-accuracy-check).[/bold yellow]")
        return
    raise NotEnoughRecords(
        msg
        + (f"; at this alpha at most {n // need:,} draw(s) are covered" if n >= need else "")
        + "; raise --alpha or --epsilon, or pass --skip-accuracy-check"
    )


def _finish(acc, draws, df_out, output: Path, guarantee: str, rule: str) -> None:
    """Write the draws and print the ledger, the guarantee, the input rule (always: it is public) and the part
    sizes (functions of the public n and m)."""
    from privsample.pipeline import write_table

    write_table(df_out, output)
    print_ledger(acc.to_dict(), err)
    err.print(f"guarantee: {guarantee} (neighbours: replace one record, n public)")
    err.print(rule)
    err.print(
        f"per-part n: {_parts_text(draws.per_part_n)} ({draws.parts} disjoint part(s), one draw each; "
        "parallel composition: the draws cost one part's budget)"
    )
    err.print(f"wrote {draws.parts:,} sample(s) to {output}")


def _setup(seed: Optional[int]):
    import numpy as np

    from privsample.privacy import make_noise

    warn_seeded(seed)
    return make_noise(seed, quiet=True), np.random.default_rng(seed)  # the rng is public (the partition)


# -- commands -------------------------------------------------------------------------------------------
@draw_app.command("kary")
def draw_kary(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet)."),
    column: str = typer.Option(..., "--column", "-c", help="The categorical column to sample."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (one column)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Pure ε (replace-one neighbours, n public)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    categories: Optional[str] = typer.Option(
        None, "--categories", help="The public domain: categories separated by ','."
    ),
    k: Optional[int] = typer.Option(
        None,
        "--k",
        help="The public domain size; without --categories the values are read as the integer codes 0..k-1.",
    ),
    other: Optional[str] = typer.Option(
        None,
        "--other",
        help="A declared category (or code) that takes the values "
        "outside the domain; default: an extra outcome '(other)' (code k with --k).",
    ),
    alpha: float = typer.Option(
        0.1, "--alpha", help="Target TV distance of each draw (Thm 1.4: n ≥ 2k/(αε) per draw)."
    ),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """k-ary sampler (RSSS Alg. 3): noisy histogram, projection onto the simplex, one draw per part. Pure ε-DP.

    A value that is not a declared category (or code), or is missing, counts as the catch-all: an extra
    outcome '(other)' (written as code k with --k), or the declared category named by --other. The rule is
    fixed before the data are read and applied to every record (none is dropped: n stays public), so the
    guarantee is unchanged; the accuracy bound is for the k' = k + 1 (or k with --other) mapped outcomes."""
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import kary
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    if categories is None and k is None:
        raise InputError(
            "declare the public domain of the column with --categories a,b,c or --k K "
            "(reading it from the data would not be private)"
        )
    cats = None
    if categories is not None:
        cats = [c.strip() for c in categories.split(",")]
        if any(c == "" for c in cats) or len(set(cats)) != len(cats) or len({_norm(c) for c in cats}) != len(cats):
            raise InputError("--categories must be distinct, non-empty names separated by ','")
        if k is not None and k != len(cats):
            raise InputError(f"--k {k} does not match the {len(cats)} --categories")
    kk = len(cats) if cats is not None else int(k)
    if kk < 1:
        raise InputError(f"--k must be >= 1 (got {kk})")
    declared = cats if cats is not None else [str(i) for i in range(kk)]
    if other is not None and other.strip() not in declared:
        raise InputError(
            f"--other {other.strip()!r} is not one of the declared "
            + ("--categories" if cats is not None else f"codes 0..{kk - 1}")
        )
    labels, catch = kary.domain_with_other(declared, None if other is None else other.strip())
    k_out = len(labels)  # public: k, or k + 1 with the extra catch-all outcome
    df, _ = _read(input, [column], output, delimiter, encoding)
    codes = kary.encode([_norm(v) for v in df[column].tolist()], [_norm(c) for c in declared], catch)
    n = len(codes)
    sizes = part_sizes(n, samples)
    _refuse_accuracy(
        f"the k-ary sampler (k = {k_out} outcomes, ε = {epsilon:g}; RSSS Thm 1.4)",
        kary.required_n(k_out, epsilon, alpha),
        samples,
        n,
        alpha,
        skip_accuracy_check,
    )
    noise, rng = _setup(seed)
    acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    draws = kary.kary_sample(codes, k_out, epsilon=epsilon, accountant=acc, noise=noise, samples=samples, rng=rng)
    assert draws.per_part_n == sizes
    out_vals = [labels[i] for i in draws.samples] if cats is not None else [int(i) for i in draws.samples]
    if cats is not None:
        name = repr(labels[catch])
    else:
        name = f"code {catch}" + (f" ('{kary.OTHER_LABEL}')" if catch == kk else "")
    extra = "" if k_out == kk else f", an extra outcome: k = {kk} + 1 = {k_out} outcomes"
    rule = (
        "input rule (applied to every record, whatever the data): a value that is not "
        + ("a declared category" if cats is not None else f"one of the codes 0..{kk - 1}")
        + f", or is missing, counts as {name}{extra}"
    )
    _finish(
        acc,
        draws,
        pd.DataFrame({column: out_vals}),
        output,
        f"pure ε-DP with ε = {epsilon:g} (discrete Laplace, scale {kary.noise_scale(epsilon):.4g} on counts; "
        f"the ledger's ρ = ε²/2 is its zCDP image); each draw has TV ≤ 2k/(ε n) = "
        f"{kary.tv_bound(k_out, epsilon, min(sizes)):.3g} with k = {k_out}",
        rule,
    )


@draw_app.command("bernoulli")
def draw_bernoulli(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet); a cell reads 1 iff it is exactly 1."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: Optional[float] = typer.Option(
        None,
        "--delta",
        "-d",
        help="With δ: (ε, δ)-DP via zCDP over the columns "
        "(Thm 6.4); without: pure ε-DP (Thm 6.1; basic composition over columns).",
    ),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    clip: str = typer.Option("1/4", "--clip", help="Clip margin a: the mean is clipped to [a, 1-a], 0 < a < 1/3."),
    alpha: float = typer.Option(0.1, "--alpha", help="Target TV distance of each draw (for biases in [1/3, 2/3])."),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """Bounded-bias sampler (RSSS Thms 6.1/6.4): clipped column means, one Bernoulli per column, no added noise.

    Accurate for biases in [1/3, 2/3]; private for any data."""
    from fractions import Fraction

    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.privacy.conversion import cdp_rho
    from privsample.samplers import bernoulli
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    if delta is not None:
        _check_delta(delta)
    try:
        a = bernoulli.check_clip(Fraction(clip.strip()))
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--clip must be a number such as 1/4 or 0.25 (got {clip!r})") from None
    names = None if columns is None else [c.strip() for c in columns.split(",")]
    df, cols = _read(input, names, output, delimiter, encoding)
    X = _binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    _refuse_accuracy(
        f"the bounded-bias sampler (d = {d}, a = {a}; RSSS Claim 6.2)",
        bernoulli.required_n(alpha, d, a),
        samples,
        n,
        alpha,
        skip_accuracy_check,
    )
    noise, rng = _setup(seed)
    if delta is None:
        acc = Accountant(epsilon**2 / 2, target=(epsilon, 0.0), neighbouring=NEIGHBOURING)
    else:
        acc = Accountant(cdp_rho(epsilon, delta), target=(epsilon, delta), neighbouring=NEIGHBOURING)
    draws = bernoulli.bounded_bias_sample(
        X, epsilon=epsilon, delta=delta, accountant=acc, noise=noise, a=a, samples=samples, rng=rng
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
            f"(each column pure {draws.epsilon or bernoulli.column_epsilon(min(draws.per_part_n), a):.4g}-DP)"
        )
    _finish(acc, draws, pd.DataFrame(draws.samples.astype(int), columns=cols), output, guarantee, BINARY_RULE)


@draw_app.command("product")
def draw_product(
    input: Path = typer.Argument(..., help="Sensitive table (CSV or Parquet); a cell reads 1 iff it is exactly 1."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the draws (the chosen columns)."),
    epsilon: float = typer.Option(..., "--epsilon", "-e", help="Privacy ε (> 0)."),
    delta: float = typer.Option(1e-9, "--delta", "-d", help="Privacy δ in (0, 1): the sampler is ρ(ε, δ)-zCDP."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Binary columns separated by ',' (default: all)."),
    samples: int = typer.Option(1, "--samples", "-m", help=_SAMPLES_HELP),
    alpha: float = typer.Option(
        0.1, "--alpha", help="Target TV distance of each draw (note's conservative sufficient bound for Thm 5.1)."
    ),
    skip_accuracy_check: bool = typer.Option(False, "--skip-accuracy-check", help=_SKIP_HELP),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded NON-PRIVATE noise and draws (experiments only)."),
    delimiter: Optional[str] = delimiter_option(),
    encoding: Optional[str] = encoding_option(),
) -> None:
    """General product sampler (RSSS Alg. 4): bucketing by noisy truncated means, then fresh noisy means and
    one Bernoulli per column. ρ-zCDP, converted to (ε, δ)-DP."""
    import pandas as pd

    from privsample.privacy import Accountant
    from privsample.samplers import product
    from privsample.samplers.parallel import NEIGHBOURING, part_sizes

    _check_epsilon(epsilon)
    _check_alpha(alpha)
    _check_delta(delta)
    names = None if columns is None else [c.strip() for c in columns.split(",")]
    df, cols = _read(input, names, output, delimiter, encoding)
    X = _binary_matrix(df, cols)
    n, d = X.shape
    part_sizes(n, samples)
    acc = Accountant.from_epsilon_delta(epsilon, delta, neighbouring=NEIGHBOURING)
    _refuse_accuracy(
        f"the product sampler (d = {d}, ρ = {acc.rho_total:.4g}; Raskhodnikova et al. 2021, Thm 5.1: a "
        "conservative sufficient bound)",
        product.required_n(d, acc.rho_total, alpha),
        samples,
        n,
        alpha,
        skip_accuracy_check,
    )
    noise, rng = _setup(seed)
    draws = product.product_sample(
        X, rho=acc.rho_total, accountant=acc, noise=noise, samples=samples, alpha=alpha, rng=rng
    )
    _finish(
        acc,
        draws,
        pd.DataFrame(draws.samples.astype(int), columns=cols),
        output,
        f"ρ-zCDP with ρ = {draws.rho:.4g}, i.e. ({epsilon:g}, {delta:g})-DP (RSSS Lemma 5.2)",
        BINARY_RULE,
    )
