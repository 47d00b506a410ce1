"""Privacy budget files: composition across releases, refusal before any record is read, locked reservations
(two processes racing), damaged files, neighbouring relations, the CLI and the Python API."""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import yaml

from privsample.errors import InputError
from privsample.privacy import Accountant, BudgetExceeded
from privsample.data.table import fingerprint
from privsample.privacy.budget import ADD_REMOVE, REPLACE_ONE, Budget
from privsample.privacy.conversion import cdp_delta, cdp_rho
from tests.cli import run

FAST = ["--iters", "20", "--quiet", "--method", "mst"]


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], n), "flag": rng.choice(["y", "n"], n)})
    csv = tmp_path / "data.csv"
    df.to_csv(csv, index=False)
    sch = tmp_path / "schema.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "color", "type": "categorical", "categories": ["red", "green", "blue"]},
                    {"name": "flag", "type": "categorical", "categories": ["y", "n"]},
                ],
            }
        )
    )
    return csv, sch


def holds(data: dict) -> bool:
    """The file's (eps, delta) target, checked independently: sum(delta_i) + cdp_delta(sum(rho_i), eps) <= delta."""
    rho = sum(Fraction(r["rho"]) for r in data["releases"])
    d = sum(Fraction(r["delta"]) for r in data["releases"])
    return float(d) + (cdp_delta(float(rho), data["epsilon"]) if rho else 0.0) <= data["delta"] * (1 + 1e-12)


def no_reading(monkeypatch):
    """Make every way of reading a table fail loudly: a refused run must not call any of them."""

    def boom(*a, **k):
        raise AssertionError("the data were read")

    import privsample.api.accounting as accounting
    import privsample.data.encoding as encoding
    import privsample.data.table as table

    for mod, name in ((table, "read_table"), (table, "table_columns"), (encoding, "read_codes")):
        monkeypatch.setattr(mod, name, boom)
    for mod in (table, accounting):  # the input's fingerprint, read only once the charge is reserved
        monkeypatch.setattr(mod, "fingerprint", boom)


# -- the rule ------------------------------------------------------------------------------------------
def test_create_refuses_to_overwrite_and_bad_totals(tmp_path):
    p = tmp_path / "b.json"
    Budget.create(p, epsilon=1, delta=1e-9, dataset="adult")
    with pytest.raises(InputError, match="never overwritten"):
        Budget.create(p, epsilon=2, delta=1e-9)
    assert json.loads(p.read_text())["epsilon"] == 1
    for eps, delta in ((0, 1e-9), (1, 0), (1, 1), (math.inf, 1e-9)):
        with pytest.raises(InputError):
            Budget.create(tmp_path / "c.json", epsilon=eps, delta=delta)


def test_exact_fit_accepted_and_a_hair_more_refused(tmp_path):
    # one charge of the whole rho fits exactly; any more is refused
    b = Budget.create(tmp_path / "a.json", epsilon=1, delta=1e-6)
    whole = cdp_rho(1, 1e-6)
    assert b.remaining()[0] == whole
    b.reserve(command="t", mechanism="m", rho=whole)
    with pytest.raises(BudgetExceeded, match="refuses"):
        b.reserve(command="t", mechanism="m", rho=1e-15)
    assert holds(b.read())
    # with a delta part: (cdp_rho(eps, delta - d), d) fits exactly, as a synth run's accountant is built
    b = Budget.create(tmp_path / "b.json", epsilon=1, delta=1e-6)
    rho = cdp_rho(1, 1e-6 - 1e-7)
    with pytest.raises(BudgetExceeded, match="refuses"):
        b.reserve(command="t", mechanism="m", rho=math.nextafter(rho * (1 + 1e-9), 1), delta=1e-7)
    b.reserve(command="t", mechanism="m", rho=rho, delta=1e-7)
    assert b.read()["releases"][0]["delta"] == 1e-7 and holds(b.read())


def test_composition_is_the_sum(tmp_path):
    """Three charges of a third each fit; a fourth of any size does not (a rule that composed by max, or
    forgot the delta parts, would accept it)."""
    b = Budget.create(tmp_path / "a.json", epsilon=2, delta=1e-6)
    third = cdp_rho(2, 1e-6 - 3e-8) / 3
    for _ in range(3):
        b.reserve(command="t", mechanism="m", rho=third * (1 - 1e-9), delta=1e-8)
    with pytest.raises(BudgetExceeded, match="refuses"):
        b.reserve(command="t", mechanism="m", rho=third * 1e-3)
    with pytest.raises(BudgetExceeded, match="refuses"):  # no rho, but delta: the delta parts add up too
        b.reserve(command="t", mechanism="m", rho=0.0, delta=1e-6 - 3e-8)
    assert holds(b.read())
    left, _ = b.remaining()
    b.reserve(command="t", mechanism="m", rho=left)  # exactly what remains fits
    assert holds(b.read()) and b.remaining()[0] == 0.0


def test_failure_before_spend_cancels_after_spend_keeps(tmp_path):
    b = Budget.create(tmp_path / "a.json", epsilon=1, delta=1e-9)
    with pytest.raises(ValueError):
        with b.spending(command="t", mechanism="m", rho=0.001):
            raise ValueError("bad input, nothing spent")
    assert b.read()["releases"] == []
    with pytest.raises(ValueError):
        with b.spending(command="t", mechanism="m", rho=0.001):
            Accountant(0.001).spend(0.0005, "step")
            raise ValueError("failed after a spend")
    (r,) = b.read()["releases"]
    assert r["status"] == "failed (charged)" and r["rho"] == 0.001
    # absorbing an earlier ledger (a private schema's) is not a spend of this run
    with pytest.raises(ValueError):
        with b.spending(command="t", mechanism="m", rho=0.001):
            acc = Accountant(0.01)
            acc.absorb(Accountant(0.01).ledger + [Accountant(0.01).spend(0.001, "schema")])
            raise ValueError("failed before a spend")
    assert len(b.read()["releases"]) == 2  # the failure before a spend: removed (the charge above was kept)


# -- damaged files -------------------------------------------------------------------------------------
def digest(obj) -> str:
    """SHA-256 of the canonical JSON, as the budget file's chain is documented."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def total(*xs: float) -> float:
    """The exact sum rounded up to a float, as a budget file's totals are kept."""
    exact = sum(map(Fraction, xs), Fraction(0))
    f = float(exact)
    return math.nextafter(f, math.inf) if Fraction(f) < exact else f


def reseal(data: dict) -> dict:
    """The chain recomputed by hand, from the documented format alone: what anyone holding the file can do."""
    body = ("header_hash", "records", "spent", "chain_head")
    data["header_hash"] = prev = digest({k: v for k, v in data.items() if k not in body})
    for r in data["records"]:
        r["prev"] = prev
        r["hash"] = prev = digest({k: v for k, v in r.items() if k != "hash"})
    data["chain_head"] = prev
    return data


def _damage(data: dict, case: str):
    if case == "json":
        return "{not json"
    if case == "version":
        data["version"] = 99
    elif case == "negative":  # resealed: the numbers are checked, not only the chain
        data["records"][0]["rho"] = -0.001
        reseal(data)
    elif case == "totals":
        data["spent"]["rho"] = 0.0
    elif case == "overrun":
        data["records"][0]["rho"] = data["spent"]["rho"] = 1.0
        reseal(data)
    elif case == "nan":
        data["records"][0]["delta"] = float("nan")
        reseal(data)
    elif case == "epsilon":
        data["epsilon"] = -1
    elif case == "records":
        data["records"] = {"a": 1}
    elif case == "not_for_release":
        del data["not_for_release"]
        reseal(data)
    elif case == "edited":  # totals kept consistent, chain not recomputed
        data["records"][0]["rho"] = data["spent"]["rho"] = 0.0001
    return json.dumps(data)


DAMAGE = ["json", "version", "negative", "totals", "overrun", "nan", "epsilon", "records", "not_for_release", "edited"]


@pytest.mark.parametrize("case", DAMAGE)
def test_damaged_file_is_an_error_never_reset(case, tmp_path, capsys):
    p = tmp_path / "b.json"
    b = Budget.create(p, epsilon=1, delta=1e-9)
    b.reserve(command="t", mechanism="m", rho=0.001)
    p.write_text(_damage(json.loads(p.read_text()), case))
    before = p.read_text()
    with pytest.raises(InputError, match="damaged budget file"):
        Budget.open(p)
    with pytest.raises(InputError, match="damaged budget file"):
        b.reserve(command="t", mechanism="m", rho=0.0001)
    code, text = run(["budget", "show", p], capsys)
    assert code == 2 and text.count("\n") == 1 and "damaged budget file" in text
    assert p.read_text() == before  # never reset or rewritten


# -- the hash chain ------------------------------------------------------------------------------------------
def _history(p) -> tuple[Budget, list[str]]:
    """A file with a spent release, a cancelled one and one in progress: 5 records; the chain heads after each
    charge (what a release's ledger may record)."""
    b = Budget.create(p, epsilon=1, delta=1e-6, dataset="toy")
    heads = []
    with b.spending(command="t", mechanism="m", rho=0.001, delta=1e-8, epsilon_asked=0.5) as res:
        heads.append(res.chain_head)
    with pytest.raises(ValueError):
        with b.spending(command="t", mechanism="m", rho=0.002) as res:
            heads.append(res.chain_head)
            raise ValueError("fails before any spend")
    heads.append(b.reserve(command="t", mechanism="m", rho=0.003).chain_head)
    return b, heads


def test_chain_of_a_history_and_its_head(tmp_path, capsys):
    b, heads = _history(tmp_path / "b.json")
    data = json.loads(b.path.read_text())
    assert data["not_for_release"] is True and len(data["salt"]) == 64
    assert [r["kind"] for r in data["records"]] == ["reserve", "finish", "reserve", "cancel", "reserve"]
    assert [r["hash"] for r in data["records"] if r["kind"] == "reserve"] == heads  # each head: its charge
    assert data["chain_head"] == data["records"][-1]["hash"] == b.chain_head()
    assert json.dumps(reseal(json.loads(b.path.read_text()))) == json.dumps(data)  # the documented format
    view = b.read()
    assert [(r["rho"], r["status"]) for r in view["releases"]] == [(0.001, "spent"), (0.003, "reserved")]
    assert view["cancelled"] == 1 and view["spent"]["rho"] == total(0.001, 0.003)
    assert "releases" not in data  # the view is not written
    code = run(["budget", "show", b.path])[0]
    shown = capsys.readouterr().out
    assert code == 0 and f"chain head: {b.chain_head()}" in shown and "1 run(s) failed before any spend" in shown


@pytest.mark.parametrize("field", ["rho", "delta", "epsilon"])
def test_edited_past_release_is_refused(field, tmp_path, capsys):
    """An edit of a past charge with the totals kept consistent: refused, naming the record."""
    b, _ = _history(tmp_path / "b.json")
    data = json.loads(b.path.read_text())
    data["records"][0][field] = data["records"][0][field] / 2
    rhos, deltas = [data["records"][i]["rho"] for i in (0, 4)], [data["records"][i]["delta"] for i in (0, 4)]
    data["spent"] = {"rho": total(*rhos), "delta": total(*deltas)}
    resealed = tmp_path / "resealed.json"
    resealed.write_text(json.dumps(reseal(json.loads(json.dumps(data)))))
    assert Budget.open(resealed).read()["releases"][0][field] == data["records"][0][field]  # totals consistent
    b.path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"record 1 of 5 was edited"):
        Budget.open(b.path)
    # the edited record's own hash recomputed: the next record no longer follows it
    data["records"][0]["hash"] = digest({k: v for k, v in data["records"][0].items() if k != "hash"})
    b.path.write_text(json.dumps(data))
    code, text = run(["budget", "show", b.path], capsys)
    assert code == 2 and text.count("\n") == 1 and "record 2 of 5 does not follow record 1" in text


def test_removed_reordered_inserted_records_and_edited_header_are_refused(tmp_path):
    b, _ = _history(tmp_path / "b.json")
    good = json.loads(b.path.read_text())

    def refused(change, match):
        data = json.loads(json.dumps(good))
        change(data)
        b.path.write_text(json.dumps(data))
        with pytest.raises(InputError, match=match):
            Budget.open(b.path)

    def drop(i):
        return lambda d: d["records"].pop(i)

    refused(drop(3), "record 4 of 4 does not follow record 3")  # the cancel: the failed run would count again
    refused(drop(0), "record 1 of 4 does not follow the header")
    refused(lambda d: d["records"].reverse(), "record 1 of 5 does not follow the header")
    refused(lambda d: d["records"].insert(2, dict(d["records"][2])), "record 4 of 6 does not follow record 3")
    refused(lambda d: d["records"][1].update(output="elsewhere.csv"), "record 2 of 5 was edited")

    def drop_last(d):  # the last charge removed and the totals fixed: the chain head says so
        d["records"].pop()
        d["spent"]["rho"] = 0.001

    refused(drop_last, "chain head is not its last record")
    for key, value in (("epsilon", 2.0), ("delta", 1e-5), ("neighbouring", REPLACE_ONE), ("dataset", "other")):
        refused(lambda d: d.update({key: value}), "its header .* was edited")
    refused(lambda d: d.update(not_for_release=False), "not_for_release")
    b.path.write_text(json.dumps(good))
    assert Budget.open(b.path).read()["chain_head"] == good["chain_head"]


def test_a_chain_recomputed_by_hand_is_accepted_only_a_recorded_head_shows_it(tmp_path):
    """The documented limit: no secret key, so whoever holds the file can rewrite its history and recompute the
    chain. A chain head recorded elsewhere at a charge (a release's ledger) no longer occurs in the file."""
    b, heads = _history(tmp_path / "b.json")
    data = json.loads(b.path.read_text())
    data["records"][0]["rho"] = 0.0001
    data["spent"]["rho"] = total(0.0001, 0.003)
    b.path.write_text(json.dumps(reseal(data)))
    assert Budget.open(b.path).read()["releases"][0]["rho"] == 0.0001  # accepted
    hashes = [r["hash"] for r in data["records"]]
    assert not any(h in hashes for h in heads)  # every recorded head is gone: an auditor sees the rewrite


def test_finish_and_cancel_only_a_release_in_progress(tmp_path):
    b = Budget.create(tmp_path / "b.json", epsilon=1, delta=1e-9)
    res = b.reserve(command="t", mechanism="m", rho=0.001)
    res.finish()
    with pytest.raises(InputError, match="not in progress"):
        res.cancel()  # a spent release keeps its charge
    with pytest.raises(InputError, match="not in progress"):
        res.finish("failed (charged)")
    (r,) = b.read()["releases"]
    assert r["status"] == "spent" and len(b.read()["records"]) == 2


def test_version_1_file_is_refused_until_upgraded(tmp_path, capsys):
    p = tmp_path / "old.json"
    rel = {"command": "synth", "mechanism": "mst", "neighbouring": ADD_REMOVE, "epsilon": 0.5, "run_delta": 1e-9}
    releases = [
        {**rel, "id": "a1", "rho": 0.001, "delta": 0.0, "date": "2024-01-01", "status": "spent", "output": "x.csv"},
        {**rel, "id": "b2", "rho": 0.002, "delta": 1e-10, "date": "2024-02-01", "status": "failed (charged)"},
        {**rel, "id": "c3", "rho": 0.003, "delta": 0.0, "date": "2024-03-01", "status": "reserved"},
    ]
    releases[0]["input_fingerprint"] = "sha256:" + "ab" * 32
    old = {"version": 1, "dataset": "d", "epsilon": 1.0, "delta": 1e-9, "neighbouring": ADD_REMOVE}
    old.update(created="2024-01-01", releases=releases, spent={"rho": total(0.001, 0.002, 0.003), "delta": 1e-10})
    p.write_text(json.dumps(old))
    code, text = run(["budget", "show", p], capsys)
    assert code == 2 and text.count("\n") == 1 and "version 1" in text and "budget upgrade" in text
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({**old, "spent": {"rho": 0.0, "delta": 0.0}}))
    code, text = run(["budget", "upgrade", broken], capsys)
    assert code == 2 and "not the sum" in text and json.loads(broken.read_text())["version"] == 1
    code, text = run(["budget", "upgrade", p], capsys)
    assert code == 0 and "3 releases" in " ".join(text.split()), text  # the console may wrap the line
    data = Budget.open(p).read()
    assert data["upgraded_from_version"] == 1 and data["not_for_release"] is True and data["created"] == "2024-01-01"
    got = [(r["id"], r["rho"], r["delta"], r["status"], r["date"]) for r in data["releases"]]
    assert got == [(r["id"], r["rho"], r["delta"], r["status"], r["date"]) for r in releases]
    assert data["releases"][0]["input_fingerprint"] == releases[0]["input_fingerprint"]
    assert data["releases"][0]["output"] == "x.csv" and len(data["records"]) == 5
    code, text = run(["budget", "upgrade", p], capsys)
    assert code == 2 and "already" in text


# -- two processes at once -------------------------------------------------------------------------------
def _race(path, barrier, results):
    from privsample.privacy.budget import Budget

    b = Budget(path)
    barrier.wait()
    try:
        with b.spending(command="race", mechanism="m", rho=0.01):
            results.put("won")
    except Exception as exc:  # BudgetExceeded
        results.put(type(exc).__name__)


def test_two_processes_racing_exactly_one_wins(tmp_path):
    p = tmp_path / "b.json"
    Budget.create(p, epsilon=1, delta=1e-9)  # rho 0.0150: fits one charge of 0.01, not two
    ctx = mp.get_context("fork")
    for _ in range(5):
        p.unlink()
        Budget.create(p, epsilon=1, delta=1e-9)
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(p), barrier, results)) for _ in range(2)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        outcomes = sorted(results.get(timeout=5) for _ in range(2))
        assert outcomes == ["BudgetExceeded", "won"]
        data = Budget.open(p).read()
        assert [r["status"] for r in data["releases"]] == ["spent"] and holds(data)


# -- the command line --------------------------------------------------------------------------------------
def test_synth_runs_compose_and_an_overrun_is_refused_before_reading(data, tmp_path, capsys, monkeypatch):
    csv, sch = data
    bf = tmp_path / "steward.budget.json"
    assert run(["budget", "init", bf, "--epsilon", 1, "--delta", 1e-9, "--dataset", "toy"], capsys)[0] == 0
    assert run(["budget", "init", bf, "--epsilon", 2], capsys)[0] == 2  # never overwritten
    for i in (1, 2):  # 2 x rho(0.6) = 0.0112 of rho(1) = 0.0150
        code, text = run(
            ["synth", csv, "-o", tmp_path / f"s{i}.csv", "-e", 0.6, "-s", sch, "--budget-file", bf] + FAST, capsys
        )
        assert code == 0, text
    releases = Budget.open(bf).read()["releases"]
    assert [r["status"] for r in releases] == ["spent", "spent"]
    assert all(r["rho"] == cdp_rho(0.6, 1e-9) and r["delta"] == 0 for r in releases)
    assert releases[1]["output"] == str(tmp_path / "s2.csv")
    assert (
        releases[0]["input_fingerprint"]
        == fingerprint(csv)
        == "sha256:" + __import__("hashlib").sha256(csv.read_bytes()).hexdigest()
    )
    before = bf.read_text()
    no_reading(monkeypatch)
    code, text = run(
        ["synth", csv, "-o", tmp_path / "s3.csv", "-e", 0.6, "-s", sch, "--budget-file", bf] + FAST, capsys
    )
    assert code == 2 and text.count("\n") == 1 and "refuses synth" in text and "remain" in text, text
    assert not (tmp_path / "s3.csv").exists() and bf.read_text() == before
    monkeypatch.undo()
    code = run(["budget", "show", bf])[0]
    shown = capsys.readouterr().out
    assert code == 0 and "s2.csv" in shown and "remaining: ρ" in shown and shown.count(" synth ") == 3  # 2 rows, 1 hint


def test_env_var_schema_and_own_budget_fits_exactly(data, tmp_path, capsys, monkeypatch):
    csv, sch = data
    bf = tmp_path / "b.json"
    Budget.create(bf, epsilon=1, delta=1e-9)
    monkeypatch.setenv("PRIVSAMPLE_BUDGET_FILE", str(bf))
    # a run of the file's own (eps, delta), with private discovery's delta slack: fits exactly
    code, text = run(["synth", csv, "-o", tmp_path / "s.csv", "-e", 1, "-d", 1e-9] + FAST, capsys)
    assert code == 0, text
    (r,) = Budget.open(bf).read()["releases"]
    assert r["delta"] == pytest.approx(1e-10) and r["rho"] == cdp_rho(1, 1e-9 - 1e-10) and holds(Budget.open(bf).read())
    code, text = run(["schema", csv, "-o", tmp_path / "p.yaml", "--private-epsilon", 0.01], capsys)
    assert code == 2 and "refuses schema --private-epsilon" in text
    code, text = run(["schema", csv, "-o", tmp_path / "d.yaml"], capsys)  # a draft is not charged
    assert code == 0 and len(Budget.open(bf).read()["releases"]) == 1
    code, text = run(["synth", csv, "-o", tmp_path / "t.csv", "-e", 1, "--seed", 1] + FAST, capsys)
    assert code == 2 and "seeded run is NOT private" in text


def test_failed_run_before_spending_leaves_no_charge(data, tmp_path, capsys):
    csv, sch = data
    bf = tmp_path / "b.json"
    Budget.create(bf, epsilon=1, delta=1e-9)
    bad = tmp_path / "bad.csv"
    bad.write_text("color,flag\n")  # no rows: fine; make the header miss a schema column instead
    bad.write_text("colour,flag\nred,y\n")
    code, text = run(["synth", bad, "-o", tmp_path / "s.csv", "-e", 0.5, "-s", sch, "--budget-file", bf] + FAST, capsys)
    assert code == 2 and "not in the data" in text
    assert Budget.open(bf).read()["releases"] == []


def test_neighbouring_relations(data, tmp_path, capsys):
    csv, sch = data
    ar, ro = tmp_path / "ar.json", tmp_path / "ro.json"
    Budget.create(ar, epsilon=2, delta=1e-9)
    assert run(["budget", "init", ro, "--epsilon", 2, "--neighbouring", "replace-one"], capsys)[0] == 0
    assert (
        Budget.open(ro).read()["neighbouring"] == REPLACE_ONE and Budget.open(ar).read()["neighbouring"] == ADD_REMOVE
    )
    kary = ["draw", "kary", csv, "-c", "color", "--categories", "red,green,blue", "-e", 0.1, "--skip-accuracy-check"]
    code, text = run(kary + ["-o", tmp_path / "k.csv", "--budget-file", ar], capsys)
    assert code == 2 and "replace-one" in text and not (tmp_path / "k.csv").exists()
    code, text = run(kary + ["-o", tmp_path / "k.csv", "--budget-file", ro], capsys)
    assert code == 0, text
    (r,) = Budget.open(ro).read()["releases"]
    assert r["rho"] == 0.1**2 / 2 and r["command"] == "draw kary" and r["output"] == str(tmp_path / "k.csv")
    # add/remove synth with a reviewed schema counts 4 rho in a replace-one file; with discovery it is refused
    code, text = run(["synth", csv, "-o", tmp_path / "s.csv", "-e", 0.5, "-s", sch, "--budget-file", ro] + FAST, capsys)
    assert code == 0, text
    assert Budget.open(ro).read()["releases"][1]["rho"] == 4 * cdp_rho(0.5, 1e-9)
    code, text = run(["synth", csv, "-o", tmp_path / "t.csv", "-e", 0.5, "--budget-file", ro] + FAST, capsys)
    assert code == 2 and "δ > 0" in text


# -- the Python API ------------------------------------------------------------------------------------------
def test_python_api_charges_and_refuses(data, tmp_path):
    import privsample

    csv, sch = data
    df = pd.read_csv(csv)
    b = privsample.Budget.create(tmp_path / "b.json", epsilon=1, delta=1e-9)
    s = privsample.Synthesizer("mst", epsilon=0.6, budget=b, iters=20).fit(df, schema=sch)
    assert s.fitted
    privsample.synthesize(csv, epsilon=0.6, method="mst", schema=sch, budget=str(b.path), method_options={"iters": 20})
    rs = privsample.Budget.open(b.path).read()["releases"]
    assert [r["input_fingerprint"][:7] for r in rs] == ["values:", "sha256:"]
    with pytest.raises(BudgetExceeded, match="refuses synth"):
        privsample.Synthesizer("mst", epsilon=0.6, budget=b).fit(df, schema=sch)
    ro = privsample.Budget.create(tmp_path / "r.json", epsilon=1, delta=1e-9, neighbouring="replace-one")
    rel = privsample.draw_kary(
        df, "color", categories=["red", "green", "blue"], epsilon=0.1, budget=ro, skip_accuracy_check=True
    )
    assert len(rel.table) == 1 and ro.read()["releases"][0]["rho"] == 0.1**2 / 2
    with pytest.raises(InputError, match="replace-one"):
        privsample.draw_product(df.assign(color=1), ["color"], epsilon=0.5, budget=b, skip_accuracy_check=True)


def test_schema_discover_cube_and_mbde_are_charged(tmp_path):
    import privsample
    from privsample.data.schema import Numeric

    rng = np.random.default_rng(1)
    b = privsample.Budget.create(tmp_path / "b.json", epsilon=1, delta=1e-9)
    df = pd.DataFrame({"x": rng.normal(40, 10, 200).clip(0, 100), "c": rng.choice(["a", "b"], 200)})
    s = privsample.Schema.discover(df, 0.3, 1e-9, budget=b)
    assert s.provenance == "private"
    (r,) = b.read()["releases"]
    assert r["rho"] == cdp_rho(0.3, 5e-10) and r["delta"] == 5e-10 and r["command"] == "schema --private-epsilon"
    sch = privsample.Schema([Numeric("x", 0.0, 100.0)], provenance="user")
    rel = privsample.mbde_sample(
        df, schema=sch, columns="x", epsilon=0.1, samples=2, rounds=1, epochs=2, hidden="4", budget=b
    )  # integral privacy: fits an add/remove file
    assert len(rel.table) == 2 and b.read()["releases"][1]["rho"] == 0.1**2 / 2
    bits = pd.DataFrame(rng.integers(0, 2, size=(100, 3)), columns=["a", "b", "c"])
    with pytest.raises(InputError, match="replace-one"):  # cube: replace-one, refused in an add/remove file
        privsample.cube_sample(bits, epsilon=0.5, k=1, degree=1, budget=b)
    ro = privsample.Budget.create(tmp_path / "r.json", epsilon=1, delta=1e-9, neighbouring="replace-one")
    with pytest.raises(BudgetExceeded, match="no data was read"):  # pure 5-DP costs 12.5, far above rho(1, 1e-9)
        privsample.cube_sample(bits, epsilon=5, k=1, degree=1, budget=ro)
    assert ro.read()["releases"] == [] and len(b.read()["releases"]) == 2


def test_a_malformed_file_is_charged_and_named_nowhere(tmp_path):
    """Records that are not a well-formed table (found only while reading) keep the run's whole charge, from the
    API as from the command line; the message names no line, field count or value, ``detail`` does (NOT private)."""
    import re

    import privsample
    from privsample.errors import DataError

    data = tmp_path / "d.csv"
    data.write_text("a,b\n" + "".join(f"x{i % 3},{i % 5}\n" for i in range(200)) + "x1,2,SECRET-FIELD\n")
    path = tmp_path / "b.json"
    Budget.create(path, epsilon=10, delta=1e-6)
    synth = privsample.Synthesizer("mst", epsilon=1, budget=path)
    with pytest.raises(DataError) as err:
        synth.fit(data)
    message = str(err.value).replace(str(data), "<DATA>")
    assert "SECRET" not in message and not re.search(r"\d", message), message
    assert "line 202" in err.value.detail and "3" in err.value.detail
    (r,) = Budget.open(path).read()["releases"]
    assert r["status"] == "failed (charged)" and r["rho"] > 0
