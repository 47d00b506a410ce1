"""The column types of a register: `privsample synth` with no schema, with `--require`, and with a schema read
from a Frictionless Table Schema file (`privsample schema --from`).

Table (``register``, our own, 6,000 records, seed ``SEED``): a patient id ``P-000001``..; ``birth_date``
(``%d/%m/%Y``), ``admitted`` (ISO date, 2019-2023) and ``discharged`` (ISO date, after admission by a skewed stay)
in that order; ``arrival`` (an ISO datetime at +01:00 on the day of admission); ``cost`` (``$#,##0.00``, skewed),
``copay`` (``0.0%``), ``ward`` (integer codes 1..6), ``diagnosis`` (3-digit codes) and ``sex``. The columns
depend on each other through an age and a severity per patient.

Arms (epsilon 1, delta 1e-9, MST, seeded noise: NOT private; one process per run):

* ``none``: no schema (private discovery of every type);
* ``require``: no schema, with ``--require`` for the known order (birth_date <= admitted <= discharged);
* ``codebook``: a schema written by ``privsample schema --from register.tableschema.json`` (the table's public
  codebook: types, date patterns, separators and ranges), reviewed as its header asks (``REVIEW``: the id format,
  the symbols of the two amounts and the colon of the datetime's offset, which a Table Schema cannot state), with
  the same order constraints.

Per run and column (exact, NOT private; diagnosis of the output only): the kind discovered, whether every output
value reads in the input's format, whether it lies in the real min..max, the share of empty cells; for dates the
1-way error by month (L1 of the monthly shares, 0..2) and its floor: the same error for a resample of the real
table of the same size (what sampling alone costs); order violations; ids equal to a real one.

    python benchmarks/register_types.py --seeds 0,1,2
    python benchmarks/register_types.py --report
Results: benchmarks/results/register_types.{csv,md}.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from common import RESULTS, ROOT
from freshness import stamp

N, SEED, EPSILON = 6000, 20261127, 1.0
CACHE = ROOT / "benchmarks" / ".cache"
TABLE = CACHE / "register-6000.csv"
CODEBOOK = CACHE / "register.tableschema.json"
CSV_PATH = RESULTS / "register_types.csv"
MD_PATH = RESULTS / "register_types.md"
ORDER = ["birth_date <= admitted", "admitted <= discharged"]
FORMATS = {
    "birth_date": ("date", "%d/%m/%Y"),
    "admitted": ("date", "%Y-%m-%d"),
    "discharged": ("date", "%Y-%m-%d"),
    "arrival": ("datetime", "%Y-%m-%dT%H:%M:%S%z"),
    "cost": ("number", "$#,##0.00"),
    "copay": ("number", "0.0%"),
}
ARMS = ("none", "require", "codebook")
REVIEW = {  # what a person adds to the codebook's schema (its header lists them as guesses to review)
    "patient": {"format": "P-{6 digits}"},
    "cost": {"format": "$#,##0.00"},
    "copay": {"format": "0.0%"},
    "arrival": {"format": "%Y-%m-%dT%H:%M:%S%:z"},  # the offset comes from the codebook's bounds
}


def register() -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    age = rng.integers(18, 95, N)
    severity = rng.gamma(1.5, 1.0, N)
    admitted = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 5 * 365, N), unit="D")
    born = admitted - pd.to_timedelta(age * 365 + rng.integers(0, 365, N), unit="D")
    stay = np.minimum(np.round(rng.gamma(1.0 + severity, 2.0)), 120).astype(int)
    discharged = admitted + pd.to_timedelta(stay, unit="D")
    arrival = (admitted + pd.to_timedelta(rng.integers(6 * 3600, 23 * 3600, N), unit="s")).tz_localize("+01:00")
    cost = np.round(300 + stay * rng.gamma(2.0, 400.0, N) * (1 + severity / 3), 2)
    copay = np.round(np.clip(rng.normal(12 + age / 10, 4, N), 0, 40), 1)
    ward = np.clip((severity * 2).astype(int) + 1, 1, 6)
    diagnosis = rng.choice([101, 205, 233, 310, 412, 555, 610, 777], N, p=[0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05])
    return pd.DataFrame(
        {
            "patient": [f"P-{i:06d}" for i in range(1, N + 1)],
            "birth_date": born.strftime("%d/%m/%Y"),
            "admitted": admitted.strftime("%Y-%m-%d"),
            "discharged": discharged.strftime("%Y-%m-%d"),
            "arrival": arrival.strftime("%Y-%m-%dT%H:%M:%S%z").str.replace(r"(\d\d)(\d\d)$", r"\1:\2", regex=True),
            "cost": [f"${v:,.2f}" for v in cost],
            "copay": [f"{v:.1f}%" for v in copay],
            "ward": ward,
            "diagnosis": diagnosis,
            "sex": rng.choice(["F", "M"], N),
        }
    )


def codebook(df: pd.DataFrame) -> dict:
    """A Table Schema a steward would have (public ranges: the register's period, the hospital's codes)."""
    return {
        "fields": [
            {"name": "patient", "type": "string", "constraints": {"required": True, "unique": True}},
            {"name": "birth_date", "type": "date", "format": "%d/%m/%Y",
             "constraints": {"minimum": "1900-01-01", "maximum": "2005-12-31"}},
            {"name": "admitted", "type": "date", "constraints": {"minimum": "2019-01-01", "maximum": "2023-12-31"}},
            {"name": "discharged", "type": "date", "constraints": {"minimum": "2019-01-01", "maximum": "2024-06-30"}},
            {"name": "arrival", "type": "datetime", "format": "%Y-%m-%dT%H:%M:%S%z",
             "constraints": {"minimum": "2019-01-01T00:00:00+01:00", "maximum": "2024-01-01T00:00:00+01:00"}},
            {"name": "cost", "type": "number", "bareNumber": False, "groupChar": ",",
             "constraints": {"minimum": 0, "maximum": 100000}},
            {"name": "copay", "type": "number", "bareNumber": False, "constraints": {"minimum": 0, "maximum": 100}},
            {"name": "ward", "type": "integer", "constraints": {"enum": [1, 2, 3, 4, 5, 6]}},
            {"name": "diagnosis", "type": "integer", "constraints": {"enum": [101, 205, 233, 310, 412, 555, 610, 777]}},
            {"name": "sex", "type": "string", "constraints": {"enum": ["F", "M"]}},
        ],
        "primaryKey": "patient",
    }  # fmt: skip


def prepare() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    if not TABLE.exists():
        register().to_csv(TABLE, index=False)
    CODEBOOK.write_text(json.dumps(codebook(pd.read_csv(TABLE, dtype=str)), indent=1))


def privsample(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "privsample.cli", *args], capture_output=True, text=True, cwd=ROOT)


def run(arm: str, seed: int) -> dict:
    out = CACHE / f"register-{arm}-{seed}.csv"
    args = ["synth", str(TABLE), "--epsilon", str(EPSILON), "--seed", str(seed), "--method", "mst", "-o", str(out)]
    if arm in ("require", "codebook"):
        args += [a for r in ORDER for a in ("--require", r)]
    if arm == "codebook":
        schema = CACHE / "register-codebook.yaml"
        p = privsample("schema", "--from", str(CODEBOOK), "-o", str(schema))
        if p.returncode:
            return {"arm": arm, "seed": seed, "status": "schema --from: " + p.stderr.strip().splitlines()[-1]}
        import yaml

        d = yaml.safe_load(schema.read_text())
        for col in d["columns"]:
            col.update(REVIEW.get(col["name"], {}))
        schema.write_text(yaml.safe_dump(d, sort_keys=False, allow_unicode=True))
        args += ["--schema", str(schema)]
    t0 = time.perf_counter()
    p = privsample(*args)
    row = {"arm": arm, "seed": seed, "seconds": round(time.perf_counter() - t0, 1)}
    if p.returncode:
        return {**row, "status": p.stderr.strip().splitlines()[-1][:200]}
    return {**row, "status": "ok", **score(pd.read_csv(TABLE, dtype=str), pd.read_csv(out, dtype=str))}


def _values(kind: str, pattern: str, s: pd.Series) -> pd.Series:
    from privsample.data.formats import NumberFormat

    if kind == "number":
        return pd.Series(NumberFormat.from_spec(pattern).parse(list(s.fillna(""))), index=s.index)
    return pd.to_datetime(s, format=pattern.replace("%z", "%z"), errors="coerce", utc=kind == "datetime")


def score(real: pd.DataFrame, synth: pd.DataFrame) -> dict:
    out: dict = {}
    for name, (kind, pattern) in FORMATS.items():
        r, s = _values(kind, pattern, real[name]), _values(kind, pattern, synth[name])
        present = synth[name].notna()
        out[f"{name}:format"] = float(s[present].notna().mean())
        inside = s[present].dropna()
        out[f"{name}:inside"] = float(((inside >= r.min()) & (inside <= r.max())).mean()) if len(inside) else 0.0
        out[f"{name}:empty"] = float(1 - present.mean())
        if kind != "number":
            rm = r.dt.tz_localize(None) if kind == "datetime" else r
            sm = inside.dt.tz_localize(None) if kind == "datetime" else inside
            a = rm.dt.to_period("M").value_counts(normalize=True)
            b = sm.dt.to_period("M").value_counts(normalize=True)
            out[f"{name}:month_error"] = float(a.subtract(b, fill_value=0).abs().sum())
            boot = rm.sample(len(sm), replace=True, random_state=0).dt.to_period("M").value_counts(normalize=True)
            out[f"{name}:month_floor"] = float(a.subtract(boot, fill_value=0).abs().sum())
    d = {c: _values("date", FORMATS[c][1], synth[c]) for c in ("birth_date", "admitted", "discharged")}
    both = d["birth_date"].notna() & d["admitted"].notna() & d["discharged"].notna()
    bad = (d["birth_date"] > d["admitted"]) | (d["admitted"] > d["discharged"])
    out["order_violations"] = int((bad & both).sum())
    if "patient" in synth:
        out["ids_equal_real"] = int(synth["patient"].isin(set(real["patient"])).sum())
        out["ids_distinct"] = int(synth["patient"].nunique())
    for c in ("ward", "diagnosis", "sex"):
        a, b = real[c].value_counts(normalize=True), synth[c].value_counts(normalize=True)
        out[f"{c}:error"] = float(a.subtract(b, fill_value=0).abs().sum())
    return out


def write_report(rows: list[dict]) -> None:
    ok = [r for r in rows if r.get("status") == "ok"]
    lines = [
        "# The column types of a register (`benchmarks/register_types.py`)",
        "",
        f"{N:,} records of our own (module docstring), ε = {EPSILON:g}, δ = 1e-9, MST, seeded noise (NOT private). "
        "Every figure below is exact and computed from the output against the real table (diagnosis only).",
        "",
        "## Per column (mean over seeds; min-max)",
        "",
        "| arm | column | in its format | inside real min..max | empty | 1-way error by month | its resample floor |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for arm in ARMS:
        runs = [r for r in ok if r["arm"] == arm]
        if not runs:
            continue
        for name in FORMATS:
            cells = []
            for key in ("format", "inside", "empty", "month_error", "month_floor"):
                v = [float(r[f"{name}:{key}"]) for r in runs if r.get(f"{name}:{key}") not in (None, "")]
                cells.append(f"{statistics.mean(v):.3f} ({min(v):.3f}-{max(v):.3f})" if v else "")
            lines.append(f"| {arm} | {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Per run", "", "| arm | seed | status | s | order violations | ids equal to a real one |"]
    lines += ["|---|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['arm']} | {r['seed']} | {r.get('status')} | {r.get('seconds', '')} | "
            f"{r.get('order_violations', '')} | {r.get('ids_equal_real', '')} |"
        )
    notes = MD_PATH.with_suffix(".notes.md")
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    MD_PATH.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    rows = list(csv.DictReader(CSV_PATH.open())) if CSV_PATH.exists() else []
    if not a.report:
        prepare()
        done = {(r["arm"], str(r["seed"])) for r in rows}
        for arm in a.arms.split(","):
            for seed in a.seeds.split(","):
                if (arm, seed) in done:
                    continue
                row = run(arm, int(seed))
                print(json.dumps(row)[:400], flush=True)
                rows.append(row)
                keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("arm", "seed", "status"), k))
                with CSV_PATH.open("w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=keys)
                    w.writeheader()
                    w.writerows(rows)
                stamp(__file__, CSV_PATH)  # the code of the last run added
    write_report(rows)
    stamp(__file__, MD_PATH, like=CSV_PATH)


if __name__ == "__main__":
    main()
