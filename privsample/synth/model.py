"""``SynthModel``: a fitted synthesizer — schema, domain, graphical model and privacy ledger.

Saved as a directory (or ``.zip``) holding ``model.json`` (schema, domain, mechanism, parameters,
ledger, library version) and ``arrays.npz`` (log-potentials, compression maps). Never pickled:
``np.load(..., allow_pickle=False)``. Sampling from a loaded model is post-processing: it costs no
privacy budget and draws from the same distribution as the original.

Everything saved is a function of the noisy measurements, the public schema and the parameters. Wall-clock
timings of a fit are not: how long the phases that read the data take depends on the data (a timing side
channel). They live in ``SynthModel.timings`` (in memory, for benchmarks) and are never written.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from privsample import __version__
from privsample.data.schema import Schema
from privsample.errors import InputError
from privsample.io import atomic_path
from privsample.synth import pgm

FORMAT = "privsample-model/1"
# Timing keys that older versions kept in ``info``: dropped on save, so re-saving such a model does not publish them.
TIMING_KEYS = frozenset({"seconds", "estimate_seconds", "phase_seconds", "timings"})
CHUNK_ROWS = 1_000_000            # rows sampled, decoded and written at a time (bounded memory)
MAX_ROWS = 10**12                 # the most rows one request may ask for
MAX_DEFAULT_ROWS = 100_000_000    # a larger table must be asked for with an explicit number of rows
NOISY_DEFAULT_FREE = 1_000_000    # up to this many rows the noisy count is the default, however noisy
NOISY_DEFAULT_SD = 0.1            # above it, only if the count's noise sd is at most this share of it


def decompress_codes(codes: np.ndarray, mapping: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Map compressed codes back to original codes, uniformly within each preimage (post-processing)."""
    mapping = np.asarray(mapping, dtype=np.int64)
    order = np.argsort(mapping, kind="stable")
    counts = np.bincount(mapping, minlength=int(mapping.max()) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    c = np.asarray(codes, dtype=np.int64)
    offs = np.floor(rng.random(c.shape) * counts[c]).astype(np.int64)
    return order[starts[c] + offs]


def check_rows(rows: int) -> int:
    """``rows`` as an int, refused (``InputError``) if negative or above ``MAX_ROWS``."""
    rows = int(rows)
    if rows < 0:
        raise InputError(f"--rows must be >= 0 (got {rows})")
    if rows > MAX_ROWS:
        raise InputError(f"--rows {rows:,} is more than the limit of {MAX_ROWS:,} rows")
    return rows


@dataclass
class SynthModel:
    """A fitted synthesizer. ``sample`` draws codes; ``sample_table`` decodes them with the schema."""

    mechanism: str
    domain: dict[str, int]                      # original (encoded) domain, schema order
    model: Any                                   # mbi.MarkovRandomField over the (possibly compressed) domain
    ledger: dict[str, Any]                       # Accountant.to_dict()
    schema: Schema | None = None
    compression: dict[str, np.ndarray] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)   # public run facts (measured cliques, rounds); saved
    # wall-clock seconds of the fit's phases: in memory only (benchmarks), never saved (a side channel on the data)
    timings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- sampling (no privacy cost) ---------------------------------------------------------
    @property
    def private(self) -> bool:
        return bool(self.ledger.get("summary", {}).get("private", True)) and not self.params.get("unsafe", False)

    @property
    def estimated_rows(self) -> int:
        """The model's noisy estimate of the number of records."""
        return max(1, int(round(float(self.model.total))))

    def resolve_rows(self, rows: int | None) -> int:
        """The number of rows to draw: ``rows``, or by default the noisy row count.

        The default is refused (``InputError``, pass ``rows``) above ``MAX_DEFAULT_ROWS``, or above
        ``NOISY_DEFAULT_FREE`` when the count's noise standard deviation (public: it follows from the noise
        scales) is more than ``NOISY_DEFAULT_SD`` of it, i.e. when the count is mostly noise (a tiny epsilon
        can draw billions). The rule reads only the noisy count and public values: post-processing."""
        if rows is not None:
            return check_rows(rows)
        n = self.estimated_rows
        sd = self.info.get("total_sd")
        noisy = isinstance(sd, (int, float)) and math.isfinite(sd) and sd > NOISY_DEFAULT_SD * n
        if n > MAX_DEFAULT_ROWS or (n > NOISY_DEFAULT_FREE and noisy):
            noise = f", noise sd {sd:.3g}" if isinstance(sd, (int, float)) else ""
            raise InputError(f"the model's noisy row count ({n:.3g}{noise}) is not used as the default number of "
                             f"rows above {MAX_DEFAULT_ROWS:,}, nor above {NOISY_DEFAULT_FREE:,} when its noise sd "
                             f"is more than {NOISY_DEFAULT_SD:.0%} of it: pass --rows")
        return n

    def sample(self, rows: int | None = None, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
        """``rows`` records as codes (default: ``resolve_rows``), drawn at once."""
        rng = rng if rng is not None else np.random.default_rng()
        return self._draw_codes(self.resolve_rows(rows), rng, self._sampler())

    def _sampler(self):
        return pgm.record_sampler(self.model)

    def _draw_codes(self, rows: int, rng: np.random.Generator, draw) -> dict[str, np.ndarray]:
        codes = draw(rows, int(rng.integers(2**32))) if rows > 0 else \
            {a: np.zeros(0, dtype=np.int64) for a in self.model.domain.attributes}
        for a, m in self.compression.items():
            codes[a] = decompress_codes(codes[a], m, rng)
        return {a: codes[a] for a in self.domain}

    def _decode(self, codes: dict[str, np.ndarray], rng: np.random.Generator):
        import pandas as pd

        if self.schema is None:
            return pd.DataFrame(codes)
        from privsample.data.encoding import decode

        return decode(codes, self.schema, rng)

    def sample_chunks(self, rows: int | None = None, rng: np.random.Generator | None = None,
                      chunk_rows: int = CHUNK_ROWS) -> Iterator:
        """Decoded synthetic tables (pandas DataFrames) of at most ``chunk_rows`` rows each, ``rows`` in all
        (default: ``resolve_rows``); at least one (an empty table for 0 rows). Memory is bounded by the
        chunk size whatever ``rows`` is. Every row has the model's distribution, chunked or not; the first
        chunk equals ``sample_table`` of as many rows with the same generator."""
        rng = rng if rng is not None else np.random.default_rng()
        n = self.resolve_rows(rows)
        chunk_rows = max(1, int(chunk_rows))
        draw = self._sampler()
        done = 0
        while True:
            k = min(chunk_rows, n - done)
            yield self._decode(self._draw_codes(k, rng, draw), rng)
            done += k
            if done >= n:
                return

    def sample_table(self, rows: int | None = None, rng: np.random.Generator | None = None):
        """A decoded synthetic table (pandas DataFrame) in the schema's columns, in memory."""
        rng = rng if rng is not None else np.random.default_rng()
        return self._decode(self.sample(rows, rng), rng)

    # -- persistence ----------------------------------------------------------------------------
    def _payload(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        mmeta, arrays = pgm.model_to_arrays(self.model)
        comp = {}
        for i, (a, m) in enumerate(self.compression.items()):
            arrays[f"compression_{i}"] = np.asarray(m, dtype=np.int64)
            comp[a] = f"compression_{i}"
        meta = {"format": FORMAT, "privsample_version": __version__, "mbi_version": pgm.mbi.__version__
                if hasattr(pgm.mbi, "__version__") else "2.0", "mechanism": self.mechanism,
                "private": self.private, "domain": self.domain, "schema": self.schema.to_dict() if self.schema else None,
                "model": mmeta, "compression": comp, "params": self.params,
                "info": {k: v for k, v in self.info.items() if k not in TIMING_KEYS}, "ledger": self.ledger}
        return meta, arrays

    def save(self, path: str | Path) -> Path:
        """Write to ``path`` (a directory, or a single ``.zip`` file), atomically."""
        path = Path(path)
        meta, arrays = self._payload()
        text = json.dumps(meta, indent=1, default=_json_default)
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        if path.suffix.lower() == ".zip":
            with atomic_path(path) as tmp:
                with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
                    zf.writestr("model.json", text)
                    zf.writestr("arrays.npz", buf.getvalue())
        else:
            with atomic_path(path, directory=True) as tmp:
                (tmp / "model.json").write_text(text)
                (tmp / "arrays.npz").write_bytes(buf.getvalue())
        return path

    @classmethod
    def load(cls, path: str | Path) -> "SynthModel":
        path = Path(path)
        try:
            if path.is_dir():
                text = (path / "model.json").read_text()
                raw = (path / "arrays.npz").read_bytes()
            elif path.is_file() and zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    text = zf.read("model.json").decode()
                    raw = zf.read("arrays.npz")
            elif not path.exists():
                raise InputError(f"model not found: {path}")
            else:
                raise InputError(f"{path} is not a privsample model (expected a directory or .zip)")
            meta = json.loads(text)
            with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - corrupt model is bad input
            raise InputError(f"cannot read model {path}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        if meta.get("format") != FORMAT:
            raise InputError(f"{path}: unknown model format {meta.get('format')!r} (expected {FORMAT})")
        model = pgm.model_from_arrays(meta["model"], arrays)
        return cls(mechanism=meta["mechanism"], domain={k: int(v) for k, v in meta["domain"].items()}, model=model,
                   ledger=meta["ledger"], schema=Schema.from_dict(meta["schema"]) if meta.get("schema") else None,
                   compression={a: arrays[k] for a, k in meta.get("compression", {}).items()},
                   params=meta.get("params", {}), info=meta.get("info", {}))


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
