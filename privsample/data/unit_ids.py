"""Fresh person ids for the output of a person-level model (``--unit-ids fresh``).

A person-level run never releases its unit column. With ``unit_ids="fresh"`` the synthetic table gets a column of the
same name holding fresh ids that group its rows so that the number of rows per person follows the released unit
profile (``privsample.data.unit_profile``: the denoised noisy people per grid cell, each cell's people at its
representative size, at most k). Each id is 16 random hexadecimal digits: it carries nothing of the real ids, and the
chance that it equals one is about (real ids) x (synthetic ids) / 16^16. The rows of one synthetic person are
independent draws of the model, like any two rows: the ids give the table its shape of rows per person, not a
person's own history. Post-processing of the released profile: no privacy cost.
"""

from __future__ import annotations

import numpy as np

from privsample.data.unit_profile import denoise, representative_sizes

UNIT_IDS = ("none", "fresh")


class PersonIds:
    """Ids for consecutive rows, across chunks: each synthetic person's number of rows drawn from the profile."""

    def __init__(self, profile: dict, rng: np.random.Generator):
        grid, k = profile["grid"], int(profile["k"])
        people = denoise(profile["people"], grid, float(profile.get("sigma", 0.0)))
        self.sizes = np.clip(np.round(representative_sizes(grid)), 1, k).astype(np.int64)
        total = float(people.sum())
        self.p = people / total if total > 0 else np.eye(len(grid))[0]
        self.rng = rng
        self.current, self.left = "", 0

    def _new_id(self) -> str:
        return f"{int(self.rng.integers(0, 2**63 - 1)):016x}"

    def take(self, n: int) -> np.ndarray:
        """Ids for the next ``n`` rows."""
        out = np.empty(n, dtype=object)
        done = min(self.left, n)
        out[:done] = self.current
        self.left -= done
        while done < n:
            size = int(self.rng.choice(self.sizes, p=self.p))
            self.current, self.left = self._new_id(), size
            m = min(size, n - done)
            out[done : done + m] = self.current
            self.left -= m
            done += m
        return out


__all__ = ["UNIT_IDS", "PersonIds"]
