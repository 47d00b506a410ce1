"""The weak learner of MBDE: a tiny tanh MLP trained with JAX/optax.

Everything here is *training*; none of it is private on its own and none of it is released. The
network outputs an unbounded logit f(x); the bound c(x) = C* tanh(f(x)/2) that the privacy proof needs
is applied by :class:`privsample.mbde.density.MBDEDensity`, for every input and every weight.

Shapes are fixed per fit (data and q-sample counts do not change between boosting rounds), so the
jitted trainer compiles once per (n, n_q, d, architecture, schedule) and is reused by every round
(and by every epsilon of a benchmark grid). Evaluation pads inputs to a few bucket sizes, so it
compiles a handful of times at most. Float32 throughout (the note allows it for training); the
combination into g_T and everything in log space happens in float64 NumPy.

Nothing here changes global JAX settings (no x64, no default device).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

Params = list  # [(W, b), ...] as JAX arrays

_CHUNK = 16384  # evaluation chunk; smaller inputs are padded to the next power of two (>= 256)


def init_mlp(d: int, hidden: Sequence[int], rng: np.random.Generator) -> Params:
    """A fresh MLP d -> hidden... -> 1 with N(0, 1/fan_in) weights and zero biases.

    ``rng`` is training randomness, not privacy noise: MBDE's guarantee holds for every weight
    realisation (outputs are squashed to [-C*, C*] whatever the weights; :mod:`privsample.mbde.density`),
    so these NumPy floats need no secure source. Released draws use the noise source
    (:mod:`privsample.mbde.release`)."""
    sizes = [int(d), *[int(h) for h in hidden], 1]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        w = rng.normal(0.0, 1.0 / math.sqrt(a), size=(a, b)).astype(np.float32)  # training only, not DP noise
        params.append((jnp.asarray(w), jnp.zeros((b,), jnp.float32)))
    return params


def mlp_logits(params: Params, x):
    """The logit f(x) (unbounded): tanh hidden layers, linear output."""
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[:, 0]


_logits_jit = jax.jit(mlp_logits)


def evaluate_logits(params: Params, x: np.ndarray) -> np.ndarray:
    """f(x) for an (N, d) array, as float64 NumPy (computed in float32 chunks)."""
    x = np.asarray(x, dtype=np.float32)
    n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    for s in range(0, n, _CHUNK):
        chunk = x[s : s + _CHUNK]
        k = chunk.shape[0]
        size = _CHUNK if k == _CHUNK else max(256, 1 << (k - 1).bit_length())
        if size != k:
            chunk = np.concatenate([chunk, np.zeros((size - k, x.shape[1]), np.float32)])
        out[s : s + k] = np.asarray(_logits_jit(params, jnp.asarray(chunk)), dtype=np.float64)[:k]
    return out


@functools.lru_cache(maxsize=16)
def _trainer(n_total: int, epochs: int, batch: int, lr: float, momentum: float):
    """A jitted full training run (all epochs in one ``lax.scan``) for fixed shapes."""
    opt = optax.sgd(lr, momentum=momentum, nesterov=True)
    nb = max(1, n_total // batch)
    used = nb * batch
    scale = n_total / batch  # the per-example weights sum to ~1 over all data; rescale a batch

    def loss(params, x, y, w):
        return jnp.sum(w * optax.sigmoid_binary_cross_entropy(mlp_logits(params, x), y))

    grad = jax.grad(loss)

    def run(params, x, y, w, key):
        state = opt.init(params)

        def epoch(carry, k):
            params, state = carry
            if nb == 1 and used == n_total:
                batches = (x[None], y[None], w[None])
            else:
                perm = jax.random.permutation(k, n_total)[:used]
                batches = (
                    x[perm].reshape(nb, batch, -1),
                    y[perm].reshape(nb, batch),
                    w[perm].reshape(nb, batch) * scale,
                )

            def step(c, b):
                p, s = c
                upd, s = opt.update(grad(p, *b), s, p)
                return (optax.apply_updates(p, upd), s), None

            (params, state), _ = jax.lax.scan(step, (params, state), batches)
            return (params, state), None

        (params, state), _ = jax.lax.scan(epoch, (params, state), jax.random.split(key, epochs))
        return params, loss(params, x, y, w)

    return jax.jit(run)


def train_classifier(
    x_data: np.ndarray,
    x_q: np.ndarray,
    rng: np.random.Generator,
    *,
    hidden: Sequence[int],
    epochs: int,
    batch_size: int | None,
    lr: float,
    momentum: float,
) -> tuple[Params, float]:
    """Fit a fresh MLP to tell ``x_data`` (label 1) from ``x_q`` (label 0) with class-balanced BCE and
    Nesterov SGD. Returns (params, final balanced training loss). ``rng`` is training randomness only."""
    x_data = np.asarray(x_data, np.float32)
    x_q = np.asarray(x_q, np.float32)
    n, nq = len(x_data), len(x_q)
    x = np.concatenate([x_data, x_q])
    y = np.concatenate([np.ones(n, np.float32), np.zeros(nq, np.float32)])
    w = np.concatenate([np.full(n, 0.5 / n, np.float32), np.full(nq, 0.5 / nq, np.float32)])
    n_total = n + nq
    batch = n_total if not batch_size or batch_size >= n_total else int(batch_size)
    params = init_mlp(x.shape[1], hidden, rng)
    key = jax.random.PRNGKey(int(rng.integers(0, 2**31 - 1)))
    fn = _trainer(n_total, int(epochs), batch, float(lr), float(momentum))
    params, final = fn(params, jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), key)
    return params, float(final)


def scaled_random_mlp(d: int, hidden: Sequence[int], scale: float, rng: np.random.Generator) -> Params:
    """A random MLP with every weight multiplied by ``scale`` (saturating adversarial learner for tests)."""
    return [(w * scale, b) for w, b in init_mlp(d, hidden, rng)]


__all__ = ["init_mlp", "mlp_logits", "evaluate_logits", "train_classifier", "scaled_random_mlp"]
