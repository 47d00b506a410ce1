"""Progress that tells the truth: every phase of a synth run is labelled, has a total (or a stated bound), and
ends before the next one starts; the progress bars show a finished phase as finished."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
import yaml
from rich.console import Console

from privsample.cli.common import RichProgress
from privsample.api.synthesizer import synthesize
from privsample.progress import AtMost
from privsample.synth.base import rounds_bound


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(0)
    n = 400
    color = rng.choice(["red", "green", "blue"], n)
    df = pd.DataFrame(
        {
            "color": color,
            "size": np.where(color == "red", rng.integers(0, 5, n), rng.integers(5, 10, n)),
            "flag": rng.choice(["y", "n"], n),
        }
    )
    csv = d / "data.csv"
    df.to_csv(csv, index=False)
    sch = d / "schema.yaml"
    sch.write_text(
        yaml.safe_dump(
            {
                "provenance": "user",
                "columns": [
                    {"name": "color", "type": "categorical", "categories": ["red", "green", "blue"]},
                    {"name": "size", "type": "numeric", "lower": 0, "upper": 10, "bins": 5, "integer": True},
                    {"name": "flag", "type": "categorical", "categories": ["y", "n"]},
                ],
            }
        )
    )
    return csv, sch


class Recorder:
    def __init__(self):
        self.calls: list[dict] = []

    def __call__(self, stage, *, step=None, steps=None, accountant=None, message=""):
        self.calls.append(
            {
                "stage": stage,
                "step": step,
                "steps": steps,
                "message": message,
                "spent": None if accountant is None else accountant.spent,
            }
        )


def phases(calls: list[dict]) -> list[tuple[str, list[dict]]]:
    out: list[tuple[str, list[dict]]] = []
    for c in calls:
        if out and out[-1][0] == c["stage"]:
            out[-1][1].append(c)
        else:
            out.append((c["stage"], [c]))
    return out


METHODS = {
    "mst": ("mst", {"iters": 40}),
    "aim": ("aim", {"iters": 40}),
    "ppsyn": ("ppsyn", {"iters": 40}),
    "ppsyn-note": ("ppsyn", {"iters": 40, "schedule": "note"}),
    "ppsyn-paper": ("ppsyn-paper", {"iters": 40, "unsafe_as_published": True}),
}
EXPECTED = {
    "mst": ["measure 1-way", "select tree", "measure 2-way", "estimate"],
    "aim": ["plan workload", "measure 1-way", "estimate (initial)", "rounds", "estimate (final)"],
    "ppsyn": ["plan workload", "measure 1-way", "estimate (initial)", "rounds", "estimate (final)"],
    "ppsyn-note": ["plan workload", "measure 1-way", "estimate (initial)", "rounds", "estimate (final)"],
    "ppsyn-paper": ["plan workload", "measure 1-way", "estimate (initial)", "rounds", "estimate (final)"],
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("with_schema", [False, True], ids=["discovery", "schema"])
@pytest.mark.parametrize("method", list(METHODS))
def test_every_phase_is_labelled_counted_and_finished_before_the_next(table, method, with_schema):
    csv, sch = table
    name, opts = METHODS[method]
    rec = Recorder()
    synthesize(
        csv, epsilon=2.0, method=name, schema=sch if with_schema else None, seed=0, method_options=opts, progress=rec
    )
    runs = phases(rec.calls)
    stages = [s for s, _ in runs]
    head = ["read table"] + ([] if with_schema else ["check model size", "discover schema"]) + ["encode table"]
    assert stages == head + EXPECTED[method] + ["sample"]  # each phase once: none resumes after another started
    for stage, calls in runs:
        assert stage.strip() and all(c["steps"] is not None for c in calls), stage  # labelled, with a total/bound
        assert all(0 <= c["step"] <= c["steps"] for c in calls), stage
        last = calls[-1]
        assert last["step"] == last["steps"] and not isinstance(last["steps"], AtMost), stage  # finished
        exact = [c["steps"] for c in calls if not isinstance(c["steps"], AtMost)]
        assert len(set(exact)) <= 1, stage  # a known total does not change
    rounds = dict(runs).get("rounds", [])
    if rounds:
        done = rounds[-1]["step"]
        assert rounds[0]["step"] == 0 and done >= 1
        # the bound shown while the rounds run is never below the number of rounds they took
        assert all(c["steps"] >= done for c in rounds if isinstance(c["steps"], AtMost))
        assert all("until the budget is spent" in c["message"] for c in rounds if c["step"] == 0)
    spent = [c["spent"] for c in rec.calls if c["spent"] is not None]
    assert spent == sorted(spent)  # the budget shown only grows


def test_rounds_bound():
    assert rounds_bound(0, 1.0, 0.1) == 10
    assert rounds_bound(3, 0.25, 0.1) == 5  # a round needs twice its cost unless it is the last
    assert rounds_bound(3, 0.05, 0.1) == 4  # less than one round's cost: this is the last round
    assert rounds_bound(3, 1.0, 0.1, limit=6) == 6 and rounds_bound(5, 1.0, 0.1, limit=5) == 6


def render(steps_calls) -> tuple[RichProgress, str]:
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False)
    with RichProgress(console) as p:
        for stage, kw in steps_calls:
            p(stage, **kw)
        tasks = {t.description.split(":")[0]: t for t in p.progress.tasks}
        states = {k: (t.finished, t.total, t.completed) for k, t in tasks.items()}
    return states, buf.getvalue()


def test_rich_progress_closes_a_phase_when_the_next_starts():
    """A phase left without its final call (e.g. discovery) is shown finished once the next phase runs."""
    states, text = render(
        [
            ("discover schema", {"step": 0, "steps": 1}),
            ("rounds", {"step": 0, "steps": AtMost(20), "message": "until the budget is spent"}),
            ("rounds", {"step": 3, "steps": AtMost(12), "message": "a,b"}),
        ]
    )
    assert states["discover schema"][0]  # finished, not running beside the rounds
    assert states["rounds"][:1] == (False,) and states["rounds"][1:] == (12, 3)
    assert "3/≤12" in text and "discover schema" in text


def test_rich_progress_shows_exact_totals_and_an_eta_only_for_them():
    _, text = render(
        [("measure 1-way", {"step": 1, "steps": 4, "message": "a"}), ("select tree", {"step": 0, "steps": 0})]
    )
    assert "1/1" in text  # measure 1-way closed when select tree started; a phase with nothing to do is done
    _, text = render([("rounds", {"step": 2, "steps": AtMost(9)})])
    assert "2/≤9" in text and "ETA" not in text
