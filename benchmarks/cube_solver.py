"""Benchmark: the cube solvers (lambda* and h*, privsample/cube/lp.py, qp.py and solver.py) against the generic
solvers Pierquin, Zimmermann and Boussard (2023) used, versus the size m of the reduced space.

Setting: p = 30, d = 2 (L = 466), delta = 0.25, Delta = 4. The data
c_f are the Walsh coefficients of n = 20,000 rows drawn from a *skewed* distribution: a mixture of three
prototype points of {-1, 1}^30 (drawn once, seed 0) with weights 0.5 / 0.3 / 0.2, each bit of a row
flipped independently with probability 0.35. This is far from uniform (lambda* ~ 0.4-0.75 here), so both
phases run: lambda* > 0 is the hard case for the LP. S = m i.i.d. uniform points (seed m), redrawn until
BSV's conditioning test passes (data-independent).

Each measurement runs in a fresh subprocess (``--worker``); its time is the wall time of the measured call
only (data and S generation and the conditioning test excluded, the Gram cache cleared), its memory is
the **peak RSS of the whole subprocess** (interpreter, NumPy/SciPy, data, S, solver), read with
``os.wait4`` (ru_maxrss); the RSS of a worker that only builds the data and S is reported as the baseline.
BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1; multi-threaded OpenBLAS is slower on this VM).

* ``ours``: :func:`solve` end to end (lambda* and h*), m in {1e3, 4e3, 3e4, 1e5, 1e6}; also the QP alone
  (:func:`project_box` at ours' lambda_used, Gram included) for the like-for-like comparison with quadprog.
* ``quadprog``: Pierquin et al.'s QP (dense, Goldfarb-Idnani) at ours' lambda_used, the same S and c_f.
* ``highs``: Pierquin et al.'s LP for lambda* by ``scipy.optimize.linprog(method="highs")`` (dense L x (m + 1)).
A reference is skipped at the sizes above one that exceeded the time cap (default 120 s; the run is
killed at the cap; quadprog at m = 4000, the targets' comparison point, gets 900 s) and, for quadprog,
where its dense m x (L + 2m) constraint matrix alone would exceed 4 GB. ``ours`` is timed best of 3 for
m <= 1e5 (single run at 1e6).

    python benchmarks/cube_solver.py            # full: writes benchmarks/results/cube_solver.{md,csv}
    python benchmarks/cube_solver.py --quick    # m <= 4000, references at m = 1000 (< 1 min); prints only
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed copy
from benchmarks.freshness import stamp  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
P, D, DELTA, BIG_DELTA, N_ROWS = 30, 2, 0.25, 4.0, 20_000
FULL_M = [1_000, 4_000, 30_000, 100_000, 1_000_000]
QUICK_M = [1_000, 4_000]
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ---------------------------------------------------------------------------------------------------
# worker (one measurement per process)
# ---------------------------------------------------------------------------------------------------
def make_problem(m: int):
    import numpy as np

    from privsample.cube.walsh import draw_reduced_space, point_coefficients, well_conditioned

    rng = np.random.default_rng(0)
    protos = rng.integers(0, 2, (3, P)) * 2 - 1
    comp = rng.choice(3, size=N_ROWS, p=[0.5, 0.3, 0.2])
    X = (protos[comp] * np.where(rng.random((N_ROWS, P)) < 0.35, -1, 1)).astype(np.int8)
    c_f = point_coefficients(X, D)
    srng = np.random.default_rng(m)
    t0 = time.perf_counter()
    attempts = 0
    while True:
        attempts += 1
        S = draw_reduced_space(P, m, srng)
        if well_conditioned(S, D):
            break
    return S, c_f, {"conditioning_s": time.perf_counter() - t0, "attempts": attempts}


def worker(task: str, m: int, lam: float | None, out: str | None) -> dict:
    import numpy as np
    from threadpoolctl import threadpool_info

    from privsample.cube import lp, qp, walsh
    from privsample.cube.solver import solve

    S, c_f, info = make_problem(m)
    walsh._GRAM_CACHE.clear()  # the timed call computes its own Gram matrix
    info["blas_threads"] = max((i.get("num_threads", 0) for i in threadpool_info()), default=0)
    if task == "baseline":
        return info
    if task == "ours":
        reps = 3 if m <= 100_000 else 1  # best of 3 where a run is short (the machine is shared)
        runs, qp_runs, best = [], [], None
        for _ in range(reps):
            walsh._GRAM_CACHE.clear()
            t0 = time.perf_counter()
            sol = solve(S, c_f, D, DELTA, BIG_DELTA)
            runs.append(time.perf_counter() - t0)
            if runs[-1] == min(runs):
                best = sol.timings  # the phase split of the fastest run
        b = (1 - sol.lam) * c_f + sol.lam * walsh.point_coefficients(S, D)
        for _ in range(reps):
            walsh._GRAM_CACHE.clear()
            t1 = time.perf_counter()
            proj = qp.project_box(S, b, D, DELTA, BIG_DELTA)
            qp_runs.append(time.perf_counter() - t1)
        secs, qp_s = min(runs), min(qp_runs)
        if out:
            np.save(out, sol.h)
        return {
            **info,
            "seconds": secs,
            "runs": runs,
            "qp_runs": qp_runs,
            "lam": sol.lam,
            "lam_star": sol.lam_star,
            "lam_lower": sol.lam_lower,
            "certified": sol.certified,
            "method": sol.method,
            "timings": best,
            "iterations": sol.iterations,
            "residuals": sol.residuals,
            "qp_only_s": qp_s,
            "qp_only_diff": float(np.abs(proj.g / m - sol.h).max() * m),
        }
    if task == "quadprog":
        t0 = time.perf_counter()
        h = qp.reference_h(S, c_f, D, DELTA, BIG_DELTA, float(lam))
        secs = time.perf_counter() - t0
        if out:
            np.save(out, h)
        b = (1 - lam) * c_f + lam * walsh.point_coefficients(S, D)
        return {**info, "seconds": secs, "residuals": qp.check_box(S, b, D, h, DELTA, BIG_DELTA)}
    if task == "highs":
        t0 = time.perf_counter()
        lam_ref = lp.reference_lambda(S, c_f, D, DELTA, BIG_DELTA)
        return {**info, "seconds": time.perf_counter() - t0, "lam_star": lam_ref}
    raise SystemExit(f"unknown task {task}")


# ---------------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------------
def run(task: str, m: int, cap: float, lam: float | None = None, out: str | None = None) -> dict:
    """One worker in a fresh interpreter; wall-clock cap (killed at the cap); peak RSS by wait4."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", task, "--m", str(m)]
    if lam is not None:
        cmd += ["--lam", repr(float(lam))]
    if out:
        cmd += ["--out", out]
    env = {**os.environ, **SINGLE_THREAD, "PYTHONWARNINGS": "ignore"}
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=env, text=True)
        t0 = time.perf_counter()
        timed_out = False
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > cap:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read(), se.read()
    rec = {"task": task, "m": m, "peak_rss_mb": ru.ru_maxrss / 1024, "process_s": time.perf_counter() - t0}
    if timed_out:
        return {**rec, "status": f"killed at the {cap:.0f} s cap"}
    if proc.returncode != 0:
        return {**rec, "status": "failed: " + (stderr.strip().splitlines() or ["?"])[-1][:200]}
    return {**rec, "status": "ok", **json.loads(stdout.strip().splitlines()[-1])}


def slope(rows: list[dict]) -> float | None:
    pts = [(math.log(r["m"]), math.log(r["seconds"])) for r in rows if r.get("status") == "ok"]
    if len(pts) < 2:
        return None
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", choices=["baseline", "ours", "quadprog", "highs"])
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--lam", type=float)
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true", help="m <= 4000, references at m = 1000 only; prints only")
    ap.add_argument("--cap", type=float, default=120.0, help="time cap per reference run (s)")
    ap.add_argument(
        "--target-cap",
        type=float,
        default=900.0,
        help="time cap for quadprog at m = 4000, the targets' comparison point (s)",
    )
    ap.add_argument("--ms", help="comma-separated m values for ours (default: the full or quick list)")
    ap.add_argument(
        "--results",
        default=None,
        help="output prefix (default: benchmarks/results/cube_solver for the full run, none for --quick)",
    )
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker, a.m, a.lam, a.out)))
        return

    ms = [int(float(x)) for x in a.ms.split(",")] if a.ms else (QUICK_M if a.quick else FULL_M)
    ref_ms = [1_000] if a.quick else [m for m in ms if m <= 30_000]
    t_start = time.perf_counter()
    rows: list[dict] = []
    tmp = Path(tempfile.mkdtemp(prefix="cube_bench_"))
    base = run("baseline", max(ms), cap=600)
    print(f"baseline (data + S at m = {max(ms)}): peak RSS {base['peak_rss_mb']:.0f} MB", flush=True)
    rows.append({**base, "solver": "baseline"})
    ours: dict[int, dict] = {}
    for m in ms:
        r = run("ours", m, cap=600, out=str(tmp / f"ours_{m}.npy"))
        r["solver"] = "ours"
        ours[m] = r
        rows.append(r)
        if r["status"] == "ok":
            print(
                f"ours     m={m:>8}: {r['seconds']:8.2f} s  peak RSS {r['peak_rss_mb']:6.0f} MB  "
                f"lambda*={r['lam_star']:.12f}"
                f" ({r['method']}, gram {r['timings']['gram']:.2f} s, lambda {r['timings']['lambda']:.2f} s,"
                f" QP {r['timings']['qp']:.2f} s; QP alone {r['qp_only_s']:.3f} s)",
                flush=True,
            )
        else:
            print(f"ours     m={m:>8}: {r['status']}", flush=True)
    for solver in ("highs", "quadprog"):
        skip = None
        for m in ref_ms:
            if skip:
                rows.append({"solver": solver, "task": solver, "m": m, "status": skip})
                print(f"{solver:8} m={m:>8}: {skip}", flush=True)
                continue
            if solver == "quadprog" and 8 * m * (466 + 2 * m) > 4 * 2**30:
                rows.append(
                    {
                        "solver": solver,
                        "task": solver,
                        "m": m,
                        "status": f"skipped: dense constraint matrix {8 * m * (466 + 2 * m) / 2**30:.0f} GB",
                    }
                )
                print(f"{solver:8} m={m:>8}: {rows[-1]['status']}", flush=True)
                continue
            lam = ours[m].get("lam") if solver == "quadprog" else None
            cap = max(a.cap, a.target_cap) if (solver == "quadprog" and m == 4000) else a.cap
            r = run(solver, m, cap=cap, lam=lam, out=str(tmp / f"{solver}_{m}.npy") if solver == "quadprog" else None)
            r["solver"] = solver
            rows.append(r)
            if r["status"] != "ok":
                skip = f"skipped: a smaller m exceeded the {cap:.0f} s cap"
                print(f"{solver:8} m={m:>8}: {r['status']}", flush=True)
                continue
            if solver == "quadprog":
                import numpy as np

                h_o, h_q = np.load(tmp / f"ours_{m}.npy"), np.load(tmp / f"quadprog_{m}.npy")
                r["max_diff_g"] = float(np.abs(h_o - h_q).max() * m)
                print(
                    f"quadprog m={m:>8}: {r['seconds']:8.2f} s  peak RSS {r['peak_rss_mb']:6.0f} MB  "
                    f"max |m h - m h_quadprog| = {r['max_diff_g']:.2e}",
                    flush=True,
                )
            else:
                r["lam_diff"] = abs(r["lam_star"] - ours[m]["lam_star"])
                print(
                    f"highs    m={m:>8}: {r['seconds']:8.2f} s  peak RSS {r['peak_rss_mb']:6.0f} MB  "
                    f"|lambda* - lambda*_HiGHS| = {r['lam_diff']:.2e}",
                    flush=True,
                )
    total = time.perf_counter() - t_start
    report(rows, ms, a, base, total)


def _get(rows: list[dict], solver: str, m: int) -> dict:
    return next((r for r in rows if r.get("solver") == solver and r["m"] == m), {})


def report(rows: list[dict], ms: list[int], a, base: dict, total: float) -> None:
    ours_rows = [r for r in rows if r.get("solver") == "ours"]
    exps = {s: slope([r for r in rows if r.get("solver") == s]) for s in ("ours", "quadprog", "highs")}
    qp_exp = slope(
        [{"m": r["m"], "seconds": r["qp_only_s"], "status": r["status"]} for r in ours_rows if r["status"] == "ok"]
    )
    big_exp = slope([r for r in ours_rows if r["m"] >= 100_000])
    lines = [
        "# Cube solvers: lambda* and h* versus m (p = 30, d = 2, L = 466, delta = 0.25, Delta = 4)",
        "",
        "Data: c_f of n = 20,000 rows from a mixture of 3 prototype points (weights 0.5/0.3/0.2, each bit "
        "flipped with probability 0.35; seed 0). S: m uniform points (seed m) that pass the conditioning test.",
        "Time: wall time of the measured call only (data, S and the conditioning test excluded; Gram cache "
        "cleared; best of 3 runs for m <= 1e5). Memory: peak RSS of the whole worker subprocess "
        "(interpreter + NumPy/SciPy + data + S + "
        "solver), by os.wait4; a worker that only builds data and S at the largest m peaks at "
        f"{base.get('peak_rss_mb', float('nan')):.0f} MB. One BLAS thread. Machine: 2 shared cores.",
        "",
        "| m | ours: lambda*+h* (s) | gram / lambda / QP (s) | ours: QP alone (s) | ours peak RSS (MB) "
        "| lambda* (ours) | method | quadprog QP (s) | quadprog RSS (MB) | max abs diff m·h | HiGHS LP (s) "
        "| HiGHS RSS (MB) | abs diff lambda* |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(r: dict, key: str, fmt: str) -> str:
        if not r:
            return "–"
        if r.get("status") != "ok":
            return r.get("status", "–")
        v = r.get(key)
        return "–" if v is None else format(v, fmt)

    for m in ms:
        o, q, h = _get(rows, "ours", m), _get(rows, "quadprog", m), _get(rows, "highs", m)
        split = (
            f"{o['timings']['gram']:.2f} / {o['timings']['lambda']:.2f} / {o['timings']['qp']:.2f}"
            if o.get("status") == "ok"
            else "–"
        )
        lines.append(
            f"| {m:,} | {cell(o, 'seconds', '.3f')} | {split} | {cell(o, 'qp_only_s', '.3f')} | "
            f"{cell(o, 'peak_rss_mb', '.0f')} | {cell(o, 'lam_star', '.10f')} | {o.get('method', '–')} | "
            f"{cell(q, 'seconds', '.2f')} | "
            f"{cell(q, 'peak_rss_mb', '.0f') if q.get('status') == 'ok' else '–'} | "
            f"{cell(q, 'max_diff_g', '.1e')} | {cell(h, 'seconds', '.2f')} | "
            f"{cell(h, 'peak_rss_mb', '.0f') if h.get('status') == 'ok' else '–'} | "
            f"{cell(h, 'lam_diff', '.1e')} |"
        )
    lines += [
        "",
        "Log-log scaling exponents (least squares of log time on log m over the measured sizes): "
        + ", ".join(
            f"{k} {v:.2f}"
            for k, v in [
                ("ours (lambda*+h*)", exps["ours"]),
                ("ours for m >= 1e5", big_exp),
                ("ours QP alone", qp_exp),
                ("quadprog", exps["quadprog"]),
                ("HiGHS", exps["highs"]),
            ]
            if v is not None
        )
        + ". Small m are dominated by the L x L work (L^3 per Newton step or pivot), large m by the O(m p^2)"
        " products and the m L^2 Gram matrix.",
    ]
    have_4000 = any(r.get("solver") == "quadprog" and r["m"] == 4000 and r.get("status") == "ok" for r in rows)
    mref = 4000 if have_4000 else 1000
    o, q = _get(rows, "ours", mref), _get(rows, "quadprog", mref)
    targets = []
    if o.get("status") == "ok" and q.get("status") == "ok":
        r_qp, r_all = q["seconds"] / o["qp_only_s"], q["seconds"] / o["seconds"]
        lines += [
            "",
            f"At m = {mref:,}: quadprog / ours = **{r_qp:,.0f}x** for the same QP (ours: projection "
            f"alone, Gram included) and **{r_all:,.0f}x** against ours end to end (lambda* and h*); "
            f"max |m h - m h_quadprog| = "
            f"{q['max_diff_g']:.1e}.",
        ]
        if mref == 4000:
            targets.append(
                f"- >= 1000x faster than quadprog at m = 4000 with the same answer: "
                f"{'met' if r_qp >= 1000 and q['max_diff_g'] <= 1e-9 else 'NOT met'} for the QP "
                f"({r_qp:,.0f}x, max diff {q['max_diff_g']:.1e}); end to end including lambda* (which "
                f"quadprog does not compute) the ratio is {r_all:,.0f}x."
            )
    if mref != 4000:
        targets.append(
            "- quadprog at m = 4000 was not measured in this run (--quick, or it failed): the 1000x target "
            "is not assessed here."
        )
    big = _get(rows, "ours", 1_000_000)
    if big.get("status") == "ok":
        ok = big["seconds"] < 60 and big["peak_rss_mb"] < 1024
        targets.append(
            f"- m = 10^6 end to end (lambda* and h*) under 60 s and 1 GB: {'met' if ok else 'NOT met'} "
            f"({big['seconds']:.1f} s, peak RSS {big['peak_rss_mb']:.0f} MB; certified gap "
            f"{big['lam_star'] - big['lam_lower']:.1e}, "
            f"equality residual {big['residuals']['equality']:.1e})."
        )
    if targets:
        lines += ["", "Targets:", *targets]
    lines += [
        "",
        "Residuals of ours (||A h - b(lambda_used)||_inf, coefficient units) and certified lambda* gaps: "
        + ", ".join(
            f"m={r['m']:,}: {r['residuals']['equality']:.1e} / {r['lam_star'] - r['lam_lower']:.1e}"
            for r in ours_rows
            if r["status"] == "ok"
        )
        + ".",
        "",
        f"Command: `python benchmarks/cube_solver.py{' --quick' if a.quick else ''}` "
        f"(total {total:.0f} s including process start-ups).",
    ]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    prefix = a.results if a.results else (None if a.quick else str(RESULTS / "cube_solver"))
    if prefix:
        Path(prefix).parent.mkdir(parents=True, exist_ok=True)
        Path(prefix + ".md").write_text(text)
        keys = [
            "solver",
            "m",
            "status",
            "seconds",
            "peak_rss_mb",
            "lam",
            "lam_star",
            "lam_lower",
            "method",
            "qp_only_s",
            "max_diff_g",
            "lam_diff",
            "conditioning_s",
            "blas_threads",
        ]
        with open(prefix + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys + ["timings", "iterations", "residuals"], extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(
                    {
                        **{k: r.get(k, "") for k in keys},
                        **{k: json.dumps(r[k]) if k in r else "" for k in ("timings", "iterations", "residuals")},
                    }
                )
        stamp(__file__, prefix + ".md", prefix + ".csv")
        print(f"wrote {prefix}.md and {prefix}.csv")


if __name__ == "__main__":
    main()
