"""Boolean-cube encoding of a table (Pierquin, Zimmermann and Boussard 2023, section 3).

Every column of the *public* domain (schema codes 0..size-1) becomes bits in {-1, +1}:
* a column with two codes is one bit, code 1 <-> +1 (binary data given as 0/1 maps by x -> 2x - 1);
* a column with three or more codes (categorical, or numeric through its public bins) is one-hot,
  one bit per code, +1 on the code's bit and -1 elsewhere (as Pierquin et al. encode categorical features);
* a column with one code carries no information and gets no bit.
p is the total number of bits. Everything here is a function of the public domain, except
:meth:`CubeEncoding.coefficients`, which reads the data only through the marginal engine.

Walsh coefficients (Boedihardjo, Strohmer and Vershynin 2021): c_J(f_n) = (1/n) sum_i prod_{j in J} x_ij
for every set J of at most d bits. The bits of J come from at most d columns, so c_J is a linear function of the
marginal of those columns: the coefficient vector is computed from the engine's <= d-way marginals,
never from an n x L matrix (or even an n x p one). Decoding maps sign vectors back to codes; a
point of the cube is generally *not* a valid code (S is uniform on the cube, so a one-hot group of
size s is valid with probability s / 2^s): see :meth:`CubeEncoding.decode`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from privsample.errors import InputError

INVALID_RULES = ("repair", "drop")


@dataclass(frozen=True)
class CubeEncoding:
    """Bits of each column of a finite domain (column names and their numbers of codes)."""

    columns: tuple[str, ...]
    sizes: tuple[int, ...]

    def __post_init__(self):
        if len(self.columns) != len(self.sizes) or not self.columns:
            raise InputError("a cube encoding needs at least one column and one size per column")
        if any(int(s) < 1 for s in self.sizes):
            raise InputError("every column needs at least one code")

    @classmethod
    def from_domain(cls, domain) -> "CubeEncoding":
        """From an ``mbi.Domain`` (or any object with ``attributes`` and ``shape``)."""
        return cls(tuple(domain.attributes), tuple(int(s) for s in domain.shape))

    @classmethod
    def from_schema(cls, schema) -> "CubeEncoding":
        return cls(tuple(schema.names), tuple(int(s) for s in schema.shape))

    # -- layout ------------------------------------------------------------------------------------
    def width(self, column: str | int) -> int:
        """Number of bits of a column: 0 (one code), 1 (two codes) or its number of codes (one-hot)."""
        s = self.sizes[self._index(column)]
        return 0 if s == 1 else (1 if s == 2 else s)

    @property
    def p(self) -> int:
        return sum(self.width(i) for i in range(len(self.columns)))

    @property
    def offsets(self) -> list[int]:
        """First bit of each column."""
        return list(itertools.accumulate([0] + [self.width(i) for i in range(len(self.columns))]))[:-1]

    @property
    def bit_column(self) -> np.ndarray:
        """The column index of every bit (length p)."""
        return np.repeat(np.arange(len(self.columns)), [self.width(i) for i in range(len(self.columns))])

    def bit_names(self) -> list[str]:
        out = []
        for i, (c, s) in enumerate(zip(self.columns, self.sizes)):
            w = self.width(i)
            out += [c] if w == 1 else [f"{c}={k}" for k in range(w)]
        return out

    def signs(self, column: str | int) -> np.ndarray:
        """The (codes x bits) table of +-1 values of a column's bits for each of its codes."""
        i = self._index(column)
        s, w = self.sizes[i], self.width(i)
        if w == 0:
            return np.ones((s, 0), dtype=np.int8)
        if w == 1:
            return np.array([[-1], [1]], dtype=np.int8)
        return (2 * np.eye(s, dtype=np.int8) - 1).astype(np.int8)

    def _index(self, column: str | int) -> int:
        if isinstance(column, (int, np.integer)):
            return int(column)
        try:
            return self.columns.index(column)
        except ValueError:
            raise InputError(f"unknown column '{column}' for the cube encoding") from None

    # -- data -> cube ------------------------------------------------------------------------------
    def encode(self, codes: Mapping[str, np.ndarray]) -> np.ndarray:
        """The n x p int8 sign matrix of integer-coded rows (small tables and tests: it is n x p in memory)."""
        parts = []
        for i, c in enumerate(self.columns):
            v = np.asarray(codes[c], dtype=np.int64)
            if v.size and (v.min() < 0 or v.max() >= self.sizes[i]):
                raise InputError(f"column '{c}' has codes outside 0..{self.sizes[i] - 1}")
            parts.append(self.signs(i)[v])
        return np.concatenate(parts, axis=1) if parts else np.zeros((0, 0), np.int8)

    def coefficients(self, engine, d: int, subsets: Sequence[tuple[int, ...]] | None = None) -> np.ndarray:
        """c_J(f_n) for every J in ``subsets`` (default: :func:`privsample.cube.walsh.walsh_subsets`
        (p, d)), from the engine's marginals over the columns of each J (exact integer counts, divided by n).

        Reads the data (through the engine). The number of records n is treated as public, as in the
        replace-one privacy model of the mechanism that uses these coefficients."""
        if subsets is None:
            from privsample.cube.walsh import walsh_subsets

            subsets = walsh_subsets(self.p, d)
        col_of = self.bit_column
        groups: dict[tuple[int, ...], list[int]] = {}
        for idx, J in enumerate(subsets):
            cols = tuple(sorted({int(col_of[j]) for j in J}))
            groups.setdefault(cols, []).append(idx)
        names = {cols: tuple(self.columns[c] for c in cols) for cols in groups if cols}
        margs = engine.marginals(list(dict.fromkeys(names.values()))) if names else {}
        n = None
        out = np.zeros(len(subsets))
        signs = [self.signs(i).astype(np.float64) for i in range(len(self.columns))]
        offsets = self.offsets
        for cols, members in groups.items():
            if not cols:
                out[members] = 1.0  # c_empty = total mass of f_n
                continue
            table = np.asarray(margs[names[cols]], dtype=np.float64).reshape([self.sizes[c] for c in cols])
            if n is None:
                n = float(table.sum())
                if n <= 0:
                    raise InputError("the table is empty: no Walsh coefficients")
            for idx in members:
                vecs = []
                for c in cols:  # product of this column's bits in J, as a function of the column's code
                    bits = [j - offsets[c] for j in subsets[idx] if col_of[j] == c]
                    vecs.append(np.prod(signs[c][:, bits], axis=1))
                val = table
                for v in reversed(vecs):  # contract the last axis each time
                    val = val @ v
                out[idx] = float(val) / n
        return out

    # -- cube -> data ------------------------------------------------------------------------------
    def decode(
        self, bits: np.ndarray, rng: np.random.Generator, invalid: str = "repair"
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Codes of k sign vectors (k x p), and the mask of rows that were valid codes.

        A one-hot group is valid when exactly one of its bits is +1. Invalid groups (none or several
        +1 bits) are, with ``invalid="repair"`` (default), replaced by one of the group's +1 codes
        chosen uniformly at random, or any code uniformly at random when no bit is +1; with
        ``invalid="drop"`` the row is removed. Either way this is post-processing of the released
        points with public randomness (``rng``), so it costs no privacy; the valid fraction should be
        reported with the output."""
        if invalid not in INVALID_RULES:
            raise InputError(f"invalid must be one of {', '.join(INVALID_RULES)}, got {invalid!r}")
        bits = np.asarray(bits)
        if bits.ndim != 2 or bits.shape[1] != self.p:
            raise InputError(f"expected a k x {self.p} sign matrix, got shape {bits.shape}")
        k = bits.shape[0]
        valid = np.ones(k, dtype=bool)
        codes: dict[str, np.ndarray] = {}
        for i, (c, s) in enumerate(zip(self.columns, self.sizes)):
            w, o = self.width(i), self.offsets[i]
            if w == 0:
                codes[c] = np.zeros(k, dtype=np.int64)
                continue
            block = bits[:, o : o + w] > 0
            if w == 1:
                codes[c] = block[:, 0].astype(np.int64)
                continue
            ones = block.sum(axis=1)
            ok = ones == 1
            valid &= ok
            code = np.argmax(block, axis=1).astype(np.int64)
            for r in np.flatnonzero(~ok):  # public randomness, post-processing
                choices = np.flatnonzero(block[r]) if ones[r] else np.arange(s)
                code[r] = int(rng.choice(choices))
            codes[c] = code
        if invalid == "drop":
            codes = {c: v[valid] for c, v in codes.items()}
        return codes, valid


def valid_fraction_uniform(encoding: CubeEncoding) -> float:
    """Probability that a uniform point of the cube is a valid code: prod over one-hot groups of s / 2^s."""
    out = 1.0
    for i, s in enumerate(encoding.sizes):
        if encoding.width(i) > 1:
            out *= s / 2.0**s
    return out


__all__ = ["CubeEncoding", "INVALID_RULES", "valid_fraction_uniform"]
