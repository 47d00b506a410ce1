"""JAX set-up for Private-PGM (``mbi``): float64 and no persistent compilation cache, done once, before
``jax`` or ``mbi`` is first imported (by :mod:`privsample.synth.pgm` and :mod:`privsample.synth.partition`)."""

from __future__ import annotations

import os
import warnings

_CONFIGURED = False


def configure_jax() -> None:
    """float64 and no persistent compilation cache (mbi recommends both); call before importing mbi."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import mbi
    try:
        mbi.set_log_fn(lambda *a, **k: None)
    except Exception:  # noqa: BLE001 - logging hook is optional
        pass
    _CONFIGURED = True


__all__ = ["configure_jax"]
