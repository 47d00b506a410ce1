"""``SynthModel``: a fitted synthesizer — schema, domain, graphical model and privacy ledger.

Saved as a directory (or ``.zip``) holding ``model.json`` (schema, domain, mechanism, parameters,
ledger, library version) and ``arrays.npz`` (log-potentials, compression maps). Never pickled:
``np.load(..., allow_pickle=False)``. Sampling from a loaded model is post-processing: it costs no
privacy budget and draws from the same distribution as the original.

Everything saved is a function of the noisy measurements, the public schema and the parameters. Wall-clock
timings of a fit are not: how long the phases that read the data take depends on the data (a timing side
channel); nor is the memory a fit used (e.g. how often AIM dropped JAX's compiled code), which grows with the
number of records. They live in ``SynthModel.timings`` (in memory, for benchmarks) and are never written.
Nor is the time of saving: every zip entry (of a ``.zip`` model and of ``arrays.npz``) carries the fixed date
``ZIP_DATE``, so two saves of one model are byte-identical.
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

from privsample._version import __version__
from privsample.data.schema import Schema
from privsample.checks import check_rows
from privsample.errors import InputError
from privsample.io import atomic_path
from privsample.synth import pgm
from privsample.synth.model_check import validate_payload

FORMAT = "privsample-model/1"
FOLDER_FILES = ("model.json", "arrays.npz")  # what a model saved as a folder holds
# Timing and memory keys that older versions kept in ``info``: dropped on save, so re-saving such a model does not
# publish them.
UNSAVED_INFO_KEYS = frozenset({"seconds", "estimate_seconds", "phase_seconds", "timings", "cache_clears"})
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the date of every zip entry written (the earliest a zip file can hold)
# The fields of a saved model (privsample.privacy.released): public (format, versions, the options, T = a
# function of the number of columns) or mechanism outputs (the schema's sizes when it was discovered privately,
# the selected cliques and noisy total, MST's compression by noisy one-way counts, the rounds and their
# accounting, the model's arrays). ``schema.*`` fields follow ``privsample.data.schema``'s lists. A field in
# neither list fails the leak test (tests/test_leaks.py) until it is declared here with its reason.
PUBLIC_FIELDS = (
    "format",
    "privsample_version",
    "mbi_version",
    "mechanism",
    "private",
    "params.*",
    "info.T",
    "info.public.*",  # the public table: its name, rows and fingerprint
)
RELEASED_FIELDS = (
    "params.method_choice.*",  # --method auto: the method and its reason, from a noisy row count
    "params.sigma_1way",  # from the budget left after discovery (its share follows the noisy row count)
    "params.unit.*",  # the unit profile: noisy people per cell, k if chosen from them, the noisy share removed
    "domain.*",
    "model.*",
    "compression*",
    "decompression*",
    "info.compressed*",
    "info.tree*",
    "info.rounds*",
    "info.candidates",
    "info.estimated_total",
    "info.total_sd",
    "info.model_size_mb",
    "info.workload_size",
    "info.public_rounds*",
    "info.public_prior*",
    "info.public_edges*",
    "ledger.*",
    "arrays:potential_*",
    "arrays:compression_*",
    "arrays:decompression_*",
)
CHUNK_ROWS = 1_000_000  # the most rows sampled, decoded and written at a time (bounded memory)
CHUNK_CELLS = 4_000_000  # ... and the most cells (rows x columns): about 60 bytes a cell (Adult, Parquet)
MAX_DEFAULT_ROWS = 100_000_000  # a larger table must be asked for with an explicit number of rows
NOISY_DEFAULT_FREE = 1_000_000  # up to this many rows the noisy count is the default, however noisy
NOISY_DEFAULT_SD = 0.1  # above it, only if the count's noise sd is at most this share of it


def decompress_codes(codes: np.ndarray, mapping: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Map compressed codes back to original codes, uniformly within each preimage (post-processing)."""
    mapping = np.asarray(mapping, dtype=np.int64)
    order = np.argsort(mapping, kind="stable")
    counts = np.bincount(mapping, minlength=int(mapping.max()) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    c = np.asarray(codes, dtype=np.int64)
    offs = np.floor(rng.random(c.shape) * counts[c]).astype(np.int64)
    return order[starts[c] + offs]


def preimage_weights(mapping: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Weights over the original codes for decompression: ``weights`` (clipped at 0), and 1 for every code of a
    preimage whose weights are all 0 (or for every code when ``weights`` is None): uniform there."""
    mapping = np.asarray(mapping, dtype=np.int64)
    if weights is None:
        return np.ones(mapping.shape, dtype=float)
    w = np.maximum(np.nan_to_num(np.asarray(weights, dtype=float), nan=0.0), 0.0)
    total = np.bincount(mapping, weights=w, minlength=int(mapping.max()) + 1 if mapping.size else 0)
    return np.where(total[mapping] > 0, w, 1.0)


def decompress_weighted(
    codes: np.ndarray, mapping: np.ndarray, weights: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """As ``decompress_codes``, but within each preimage in proportion to ``weights`` (over the original
    codes): the original codes given a condition of these weights. Every drawn compressed code must have a
    preimage of positive weight."""
    mapping = np.asarray(mapping, dtype=np.int64)
    w = np.asarray(weights, dtype=float)
    order = np.argsort(mapping, kind="stable")
    counts = np.bincount(mapping, minlength=int(mapping.max()) + 1)
    ends = np.cumsum(counts)
    cw = np.cumsum(w[order])
    base = np.concatenate([[0.0], cw])[ends - counts]  # the weight before each preimage
    total = cw[ends - 1] - base
    # the last code of positive weight in each preimage, where a draw rounded up to the end is put
    positive = np.flatnonzero(w[order] > 0)
    last = positive[np.maximum(np.searchsorted(positive, ends, side="left") - 1, 0)]
    c = np.asarray(codes, dtype=np.int64)
    t = base[c] + rng.random(c.shape) * total[c]
    pos = np.minimum(np.searchsorted(cw, t, side="right"), last[c])
    return order[pos]


def condition_weights(where, schema: Schema | None) -> tuple[Any, dict]:
    """(``Where``, column -> ``ColumnCondition``) of a condition on a model with this schema."""
    from privsample.data.condition import Where

    where = Where.parse(where)
    if schema is None:
        raise InputError("this model has no schema: conditions name the schema's columns and values")
    return where, where.resolve(schema)


@dataclass
class SynthModel:
    """A fitted synthesizer. ``sample`` draws codes; ``sample_table`` decodes them with the schema."""

    mechanism: str
    domain: dict[str, int]  # original (encoded) domain, schema order
    model: Any  # mbi.MarkovRandomField over the (possibly compressed) domain
    ledger: dict[str, Any]  # Accountant.to_dict()
    schema: Schema | None = None
    compression: dict[str, np.ndarray] = field(default_factory=dict)
    # weights of the original codes within each compressed code (noisy counts, public): None or absent = uniform
    decompression: dict[str, np.ndarray] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # public run facts (measured cliques, rounds); saved
    # wall-clock seconds of the fit's phases (and AIM's cache clears, memory dependent): in memory only
    # (benchmarks), never saved (a side channel on the data)
    timings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- sampling (no privacy cost) ---------------------------------------------------------
    @property
    def private(self) -> bool:
        return bool(self.ledger.get("summary", {}).get("private", True)) and not self.params.get("unsafe", False)

    @property
    def estimated_rows(self) -> int:
        """The model's noisy estimate of the number of records."""
        return max(1, int(round(float(self.model.total))))

    def resolve_rows(self, rows: int | None, where: Any = None) -> int:
        """The number of rows to draw: ``rows``, or by default the noisy row count (with ``where``: times
        the condition's probability under the model, rounded, at least 1).

        The default is refused (``InputError``, pass ``rows``) above ``MAX_DEFAULT_ROWS``, or above
        ``NOISY_DEFAULT_FREE`` when the count's noise standard deviation (public: it follows from the noise
        scales) is more than ``NOISY_DEFAULT_SD`` of it, i.e. when the count is mostly noise (a tiny epsilon
        can draw billions). The rule reads only the noisy count and public values: post-processing."""
        if rows is not None:
            return check_rows(rows)
        if where is not None:
            n = self.resolve_rows(None)
            return max(1, int(round(n * self.condition_probability(where))))
        n = self.estimated_rows
        sd = self.info.get("total_sd")
        noisy = isinstance(sd, (int, float)) and math.isfinite(sd) and sd > NOISY_DEFAULT_SD * n
        if n > MAX_DEFAULT_ROWS:
            raise InputError(
                f"the model's noisy row count ({n:.3g}) is above {MAX_DEFAULT_ROWS:,}, the most rows "
                "drawn by default: pass --rows"
            )
        if n > NOISY_DEFAULT_FREE and noisy:
            raise InputError(
                f"the model's noisy row count ({n:.3g}, noise sd {sd:.3g}) is mostly noise: pass --rows "
                f"(a noisy count above {NOISY_DEFAULT_FREE:,} rows is the default only when its noise sd "
                f"is at most {NOISY_DEFAULT_SD:.0%} of it)"
            )
        return n

    def sample(
        self, rows: int | None = None, rng: np.random.Generator | None = None, where: Any = None
    ) -> dict[str, np.ndarray]:
        """``rows`` records as codes (default: ``resolve_rows``), drawn at once; ``where``: see ``sample_table``."""
        rng = rng if rng is not None else np.random.default_rng()
        n = self.resolve_rows(rows, where)
        return self._draw_codes(n, rng, self._sampler(where))

    def condition_probability(self, where: Any) -> float:
        """The probability under the model that a record satisfies the condition ``where`` (a text such as
        ``"sex=Female; age=30..40"`` or a mapping, see :mod:`privsample.data.condition`). Post-processing of
        the model. ``InputError`` for an unknown column or value, an empty range or bad syntax."""
        return math.exp(self._conditioned(where)[3])

    def check_condition(self, where: Any):
        """The parsed condition (``privsample.data.condition.Where``); ``InputError`` if it is malformed, does
        not fit the schema, or has probability zero under the model."""
        self._sampler(where)
        return self._conditioned(where)[0]

    def _conditioned(self, where: Any) -> tuple:
        """(``Where``, column conditions, draw, log-probability) of a condition, the last one cached."""
        from privsample.data.condition import Where

        where = Where.parse(where)
        hit = self.__dict__.get("_last_condition")
        if hit is not None and hit[0] == str(where):
            return hit[1]
        where, columns = condition_weights(where, self.schema)
        evidence = {}
        for a, cc in columns.items():
            m = self.compression.get(a)
            if m is None:
                evidence[a] = cc.weights
            else:  # a compressed code holds its preimage by the decompression weights: their weighted mean
                m = np.asarray(m, dtype=np.int64)
                w = preimage_weights(m, self.decompression.get(a))
                evidence[a] = np.bincount(m, weights=w * cc.weights) / np.bincount(m, weights=w)
        draw = pgm.record_sampler(self.model, evidence)
        out = (where, columns, draw, float(draw.log_probability))
        self.__dict__["_last_condition"] = (str(where), out)
        return out

    def _sampler(self, where: Any = None):
        if where is None:
            return pgm.record_sampler(self.model)
        where, columns, draw, logp = self._conditioned(where)
        if not math.exp(logp) > 0:
            raise InputError(f"the condition '{where}' has probability zero under the model: no record satisfies it")
        draw.columns = columns
        return draw

    def _draw_codes(self, rows: int, rng: np.random.Generator, draw) -> dict[str, np.ndarray]:
        codes = (
            draw(rows, int(rng.integers(2**32)))
            if rows > 0
            else {a: np.zeros(0, dtype=np.int64) for a in self.model.domain.attributes}
        )
        columns = getattr(draw, "columns", {})
        for a, m in self.compression.items():
            w = self.decompression.get(a)
            if a in columns:
                codes[a] = decompress_weighted(codes[a], m, preimage_weights(m, w) * columns[a].weights, rng)
            elif w is not None:
                codes[a] = decompress_weighted(codes[a], m, preimage_weights(m, w), rng)
            else:
                codes[a] = decompress_codes(codes[a], m, rng)
        return {a: codes[a] for a in self.domain}

    def _decode(self, codes: dict[str, np.ndarray], rng: np.random.Generator, draw=None, ids=None):
        import pandas as pd

        if self.schema is None:
            return pd.DataFrame(codes)
        from privsample.data.decoding import decode

        columns = getattr(draw, "columns", {})
        within = {a: cc.intervals for a, cc in columns.items() if cc.intervals is not None}
        return decode(codes, self.schema, rng, within or None, self.bin_counts(), ids)

    def id_formats(self, rows: int) -> dict:
        """The formats of the fresh ids of the schema's identifier columns for an output of ``rows`` rows
        (``privsample.data.decoding.id_formats``), widened where the format's space is too small against the model's
        noisy row count plus 3 noise sd (an estimate of the real records from noisy figures only); a widening warns
        once per output. Post-processing of the model."""
        if self.schema is None or not self.schema.identifiers:
            return {}
        from privsample.data.decoding import id_formats

        sd = self.info.get("total_sd")
        margin = 3.0 * float(sd) if isinstance(sd, (int, float)) and math.isfinite(sd) and sd > 0 else 0.0
        return id_formats(self.schema, rows, self.estimated_rows + margin)

    def bin_counts(self) -> dict[str, np.ndarray]:
        """The model's expected records in each bin of each numeric column: its 1-way marginal (decompressed in
        proportion to the decompression weights, as sampling does). Decoding shapes values within a bin by
        these (``privsample.data.decoding.bin_slopes``), the same for every chunk drawn. Post-processing of the
        model; computed once."""
        cached = getattr(self, "_bin_counts", None)
        if cached is not None:
            return cached
        from privsample.data.schema import Numeric

        out: dict[str, np.ndarray] = {}
        for col in self.schema.columns if self.schema is not None else []:
            if not isinstance(col, Numeric) or col.name not in self.model.domain.attributes:
                continue
            p = np.maximum(np.asarray(self.model.project([col.name]).datavector(flatten=True), dtype=float), 0.0)
            m = self.compression.get(col.name)
            if m is not None:
                w = preimage_weights(m, self.decompression.get(col.name))
                group = np.bincount(m, weights=w, minlength=len(p))
                p = p[m] * np.where(group[m] > 0, w / np.where(group[m] > 0, group[m], 1.0), 0.0)
            out[col.name] = p
        self._bin_counts = out
        return out

    @property
    def chunk_rows(self) -> int:
        """Rows per chunk of ``sample_chunks``: ``CHUNK_ROWS``, fewer for wide tables (``CHUNK_CELLS``)."""
        return max(1_000, min(CHUNK_ROWS, CHUNK_CELLS // max(1, len(self.domain))))

    def sample_chunks(
        self,
        rows: int | None = None,
        rng: np.random.Generator | None = None,
        chunk_rows: int | None = None,
        where: Any = None,
    ) -> Iterator:
        """Decoded synthetic tables (pandas DataFrames) of at most ``chunk_rows`` rows each (default:
        ``self.chunk_rows``), ``rows`` in all (default: ``resolve_rows``); at least one (an empty table for
        0 rows). Memory is bounded by the chunk size whatever ``rows`` is. Every row has the model's
        distribution, chunked or not (the stratification of the draws is within a chunk); the first chunk
        equals ``sample_table`` of as many rows with the same generator. ``where``: see ``sample_table``."""
        rng = rng if rng is not None else np.random.default_rng()
        n = self.resolve_rows(rows, where)
        draw = self._sampler(where)
        ids = self.id_formats(n)  # for the whole output, not per chunk
        persons = self.person_ids(rng)  # a person-level model's fresh unit ids, across chunks
        chunk_rows = max(1, int(chunk_rows if chunk_rows is not None else self.chunk_rows))
        done = 0
        while True:
            k = min(chunk_rows, n - done)
            yield self._with_persons(self._decode(self._draw_codes(k, rng, draw), rng, draw, ids), persons)
            done += k
            if done >= n:
                return

    def sample_table(self, rows: int | None = None, rng: np.random.Generator | None = None, where: Any = None):
        """A decoded synthetic table (pandas DataFrame) in the schema's columns, in memory.

        ``where`` (a text such as ``"sex=Female; age=30..40"`` or a mapping column -> value, list of values
        or ``(lo, hi)`` range, see :mod:`privsample.data.condition`): records drawn exactly from the model's
        conditional distribution given the condition (evidence entered into the junction tree, no
        rejection), so every record satisfies it; the default ``rows`` is the noisy row count times the
        condition's probability. Post-processing of the model: no privacy cost. ``InputError`` for an unknown
        column or value, an empty range, bad syntax, or a condition of probability zero under the model."""
        rng = rng if rng is not None else np.random.default_rng()
        n = self.resolve_rows(rows, where)
        draw = self._sampler(where)
        persons = self.person_ids(rng)
        return self._with_persons(self._decode(self._draw_codes(n, rng, draw), rng, draw, self.id_formats(n)), persons)

    def person_ids(self, rng: np.random.Generator):
        """Fresh person ids (``privsample.data.unit_ids``) when the model was fitted with ``unit_ids="fresh"``
        (from its released unit profile), else None; their randomness is split off ``rng``."""
        profile = self.params.get("unit")
        if self.params.get("unit_ids") != "fresh" or not profile:
            return None
        from privsample.data.unit_ids import PersonIds

        return PersonIds(profile, np.random.default_rng(int(rng.integers(0, 2**63 - 1))))

    def _with_persons(self, table, persons):
        """``table`` with the unit column of fresh ids first, when ``persons`` is given."""
        if persons is not None:
            table.insert(0, self.params["unit"]["column"], persons.take(len(table)))
        return table

    # -- persistence ----------------------------------------------------------------------------
    def _payload(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        mmeta, arrays = pgm.model_to_arrays(self.model)
        comp = {}
        for i, (a, m) in enumerate(self.compression.items()):
            arrays[f"compression_{i}"] = np.asarray(m, dtype=np.int64)
            comp[a] = f"compression_{i}"
        dec = {}
        for i, (a, w) in enumerate(self.decompression.items()):
            arrays[f"decompression_{i}"] = np.asarray(w, dtype=np.float64)
            dec[a] = f"decompression_{i}"
        meta = {
            "format": FORMAT,
            "privsample_version": __version__,
            "mbi_version": pgm.mbi.__version__ if hasattr(pgm.mbi, "__version__") else "2.0",
            "mechanism": self.mechanism,
            "private": self.private,
            "domain": self.domain,
            "schema": self.schema.to_dict() if self.schema else None,
            "model": mmeta,
            "compression": comp,
            **({"decompression": dec} if dec else {}),
            "params": self.params,
            "info": {k: v for k, v in self.info.items() if k not in UNSAVED_INFO_KEYS},
            "ledger": self.ledger,
        }
        return meta, arrays

    def save(self, path: str | Path) -> Path:
        """Write to ``path`` (a directory, or a single ``.zip`` file), atomically."""
        path = Path(path)
        meta, arrays = self._payload()
        text = json.dumps(meta, indent=1, default=_json_default)
        npz = npz_bytes(arrays)
        if path.suffix.lower() == ".zip":
            with atomic_path(path) as tmp:
                with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
                    zf.writestr(zip_entry("model.json"), text)
                    zf.writestr(zip_entry("arrays.npz"), npz)
        else:
            with atomic_path(path, directory=True) as tmp:
                (tmp / "model.json").write_text(text)
                (tmp / "arrays.npz").write_bytes(npz)
        return path

    @staticmethod
    def read_meta(path: str | Path) -> dict[str, Any]:
        """The saved model's ``model.json`` (mechanism, parameters, ledger, schema), without loading its arrays."""
        path = Path(path)
        try:
            if path.is_dir():
                text = (path / "model.json").read_text()
            elif path.is_file() and zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    text = zf.read("model.json").decode()
            elif not path.exists():
                raise InputError(f"model not found: {path}")
            else:
                raise InputError(f"{path} is not a privsample model (expected a directory or .zip)")
            meta = json.loads(text)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - corrupt model is bad input
            why = str(exc).splitlines()[0] if str(exc) else ""
            raise InputError(f"cannot read model {path}: {type(exc).__name__}: {why}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            got = meta.get("format") if isinstance(meta, dict) else None
            raise InputError(f"{path}: unknown model format {got!r} (expected {FORMAT})")
        return meta

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
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise InputError(f"cannot read model {path}: {type(exc).__name__}: {first}") from None
        if not isinstance(meta, dict):
            raise InputError(f"{path}: model.json is not an object")
        if meta.get("format") != FORMAT:
            raise InputError(f"{path}: unknown model format {meta.get('format')!r} (expected {FORMAT})")
        schema = validate_payload(meta, arrays, str(path))
        try:
            model = pgm.model_from_arrays(meta["model"], arrays)
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:  # any other inconsistency
            raise InputError(f"{path}: invalid model ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
        return cls(
            mechanism=meta["mechanism"],
            domain={k: int(v) for k, v in meta["domain"].items()},
            model=model,
            ledger=meta["ledger"],
            schema=schema,
            compression={a: arrays[k] for a, k in meta.get("compression", {}).items()},
            decompression={a: arrays[k] for a, k in meta.get("decompression", {}).items()},
            params=meta.get("params", {}),
            info=meta.get("info", {}),
        )


def zip_entry(name: str) -> zipfile.ZipInfo:
    """A compressed zip entry ``name`` dated ``ZIP_DATE`` (not the time of writing), mode 0644."""
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """``arrays`` as ``np.savez_compressed`` writes them (one ``NAME.npy`` entry each, no pickles), but with
    every entry dated ``ZIP_DATE``: the same arrays give the same bytes whenever they are written."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            with zf.open(zip_entry(f"{name}.npy"), "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(arr), allow_pickle=False)
    return buf.getvalue()


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
