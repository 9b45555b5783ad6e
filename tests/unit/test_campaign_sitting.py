"""A campaign's sitting (ampkit/campaign/sitting.py): which runs are expected
to end in the time the machine is there, and the local executor starting
only those, the longest first."""

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ampkit.campaign import runner, sitting
from ampkit.campaign.plan import expand
from ampkit.campaign.progress import Progress
from ampkit.campaign.spec import load_spec
from ampkit.campaign.store import FAILED, OK, TODO, CampaignDir, RunState
from ampkit.cli import main
from ampkit.errors import EXIT_USAGE, UsageError
from ampkit.rundir import RunKey
from tests.unit.test_campaign import finish_run
from tests.unit.test_estimate import small_spec

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2h30m", 9000), ("90m", 5400), ("1.5h", 5400), ("5400s", 5400), ("1h0m30s", 3630)],
)
def test_a_sitting_is_hours_minutes_and_seconds(text: str, seconds: float) -> None:
    assert sitting.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "2", "soon", "2h30", "-1h", "0m", "1d"])
def test_a_sitting_that_is_not_a_duration_is_refused_with_examples(text: str) -> None:
    with pytest.raises(UsageError) as err:
        sitting.parse_duration(text)
    assert "2h30m" in str(err.value.hint)


def test_a_run_is_expected_at_its_estimate_times_the_longest_overrun_of_its_kind() -> None:
    cfs, colab, refs = ("cfs", "2B2L"), ("colab", "2B2L"), ("references", "0B2L")
    finished = [
        sitting.Finished(cfs, 1800.0, 1000.0),  # 1.8
        sitting.Finished(cfs, 1200.0, 1000.0),  # 1.2: the larger counts
        sitting.Finished(colab, 3400.0, 1000.0),  # 3.4
    ]
    kinds = {"a": cfs, "b": colab, "c": refs, "d": cfs, "e": cfs}
    estimates = {"a": 1000.0, "b": 1000.0, "c": 100.0, "d": 4000.0}
    got = sitting.expected_walls(kinds, estimates, finished, limit_s=5000.0)
    assert got["a"] == pytest.approx(1800.0)
    assert got["b"] == pytest.approx(3400.0)
    # no finished run of its kind: the largest ratio over all kinds
    assert got["c"] == pytest.approx(340.0)
    # never more than the wall-clock limit, where it would fail anyway
    assert got["d"] == 5000.0
    # no estimate (an engine without a cost model): the limit
    assert got["e"] == 5000.0
    # nothing finished yet: the estimates themselves
    assert sitting.expected_walls(kinds, estimates, [], 5000.0)["a"] == 1000.0
    assert "cfs on 2B2L x1.80" in sitting.describe(*sitting.ratios(finished))


def test_the_longest_run_that_fits_the_time_left_is_next() -> None:
    expected = {"a": 100.0, "b": 900.0, "c": 500.0, "d": 900.0}
    queue = ["a", "b", "c", "d"]
    assert sitting.next_run(queue, expected, 1000.0) == "b"  # the first of equals
    assert sitting.next_run(queue, expected, 600.0) == "c"
    assert sitting.next_run(queue, expected, 100.0) == "a"
    assert sitting.next_run(queue, expected, 99.0) is None
    # runs in slices keep what they finish: one starts while time is left,
    # the longest, never one held back; none once the sitting is over
    assert sitting.next_run(queue, expected, 600.0, resumable=True) == "c"
    assert sitting.next_run(queue, expected, 99.0, resumable=True) == "b"
    held = {**expected, "b": math.inf, "d": math.inf}
    assert sitting.next_run(queue, held, 99.0, resumable=True) == "c"
    assert sitting.next_run(queue, expected, 0.0, resumable=True) is None


def _stand_in_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every run a process that sleeps a tenth of a second, not a guest: the
    executor's choices are what is tested, and they are recorded."""
    started: list[str] = []

    def spawn(cdir: CampaignDir, run_id: str) -> "subprocess.Popen[bytes]":
        started.append(run_id)
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.1)"])

    monkeypatch.setattr(runner, "_spawn", spawn)
    monkeypatch.setattr(runner, "settle", lambda *a, **k: RunState(OK))
    return started


def test_a_sitting_starts_the_longest_runs_that_fit_and_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _stand_in_runs(monkeypatch)
    cdir = CampaignDir(tmp_path)
    # expected walls far above what the stand-ins take, so that the choices
    # do not depend on how busy the machine is: 600 s of sitting, 100 s gone
    # at most by the time the last one starts
    expected = {"short": 60.0, "long": 500.0, "middle": 300.0, "too-long": 700.0}
    budget = runner.Budget(time.monotonic() + 600.0, expected)
    left = runner.run_local(cdir, list(expected), 2, Progress(4, 2), budget)
    assert started == ["long", "middle", "short"]
    assert left == ["too-long"]


def test_without_a_sitting_runs_start_in_the_plans_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _stand_in_runs(monkeypatch)
    left = runner.run_local(CampaignDir(tmp_path), ["b", "a", "c"], 1, Progress(3, 1))
    assert started == ["b", "a", "c"] and left == []


def test_a_sitting_budget_learns_from_the_campaigns_finished_runs(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path), behaviour=tmp_path / "table.toml")
    cdir = CampaignDir(tmp_path / "camp")
    # finished: the cfs mix at twice its estimate (1144 s, test_estimate),
    # and contend alone on 2B2L at 1.5 times its (410 s)
    spent = {"2B2L-cfs-m-r0": 2288.0, "2B2L-cfs-alone-contend-t4-n40-r0": 615.0}
    rows = []
    for r in expand(spec):
        if r.run_id in spent:
            finish_run(cdir, r, spent[r.run_id])
        rows.append(runner.Entry(r, None, RunState(OK if r.run_id in spent else TODO)))
    todo = [e.run.run_id for e in rows if e.state.state == TODO]
    budget, lines = runner.sitting_budget(spec, cdir, rows, todo, 900.0, jobs=2)
    assert set(budget.expected) == set(todo)
    # colab's mix: none of its kind finished, the largest ratio over all (2)
    assert budget.expected["2B2L-colab-m-r0"] == pytest.approx(2288.0)
    # compute alone on 2B2L: the references' ratio on 2B2L (1.5 x 739 s)
    assert budget.expected["2B2L-cfs-alone-compute-t2-n200-r0"] == pytest.approx(1108.5)
    # on 0B2L no reference finished: the overall ratio (2 x 410 s, 2 x 290.8 s)
    assert budget.expected["0B2L-cfs-alone-contend-t4-n40-r0"] == pytest.approx(820.0)
    assert budget.expected["0B2L-cfs-alone-compute-t2-n200-r0"] == pytest.approx(581.6)
    assert budget.ends > time.monotonic() + 800
    assert "2 of the 4 runs to run are expected to fit" in lines[0]
    assert "cfs on 2B2L x2.00" in lines[0] and "references on 2B2L x1.50" in lines[0]
    # and all of them: 2288 + 1108.5 + 820 + 581.6 s, two at once, 2399.05 s:
    # three sittings of 900 s, as the longest run alone needs too
    assert lines[1] == (
        "  together, as expected: 0.7 h with 2 at once, about 3 sitting(s) of this length"
    )
    # with four at once the sum would say two; the longest run still needs three
    _, lines = runner.sitting_budget(spec, cdir, rows, todo, 900.0, jobs=4)
    assert lines[1].endswith("about 3 sitting(s) of this length")


def test_a_sitting_is_for_the_local_executor(tmp_path: Path) -> None:
    spec_path = small_spec(tmp_path)
    spec_path.write_text(
        spec_path.read_text().replace("[executor]\njobs = 2", '[executor]\nkind = "slurm"')
    )
    code = main(["campaign", "run", str(spec_path), "--sitting", "2h", "--no-build"])
    assert code == EXIT_USAGE


def test_a_sitting_holds_back_the_runs_of_a_mix_that_ran_out_of_the_limit(
    tmp_path: Path,
) -> None:
    """A run that ran out of the wall-clock limit, failed now or set aside
    as an earlier attempt, keeps the other runs of its mix under its policy
    on its platform out of a sitting: each would cost the limit for
    nothing. The other runs are planned as before, and the sitting says so."""
    spec_path = small_spec(tmp_path)
    text = spec_path.read_text().replace("span_ms = 20", "span_ms = 20\nrepetitions = 2")
    spec_path.write_text(text)
    spec = load_spec(spec_path, behaviour=tmp_path / "table.toml")
    cdir = CampaignDir(tmp_path / "camp")
    timeout = "timeout: the guest did not power off within 600 s"
    rows = []
    for r in expand(spec):
        state = RunState(FAILED, timeout) if r.run_id == "2B2L-colab-m-r0" else RunState(TODO)
        rows.append(runner.Entry(r, None, state))
    todo = [e.run.run_id for e in rows if e.state.state == TODO]
    assert "2B2L-colab-m-r1" in todo and "2B2L-cfs-m-r1" in todo
    budget, lines = runner.sitting_budget(spec, cdir, rows, todo, 1e6)
    assert budget.expected["2B2L-colab-m-r1"] == float("inf")
    assert budget.expected["2B2L-cfs-m-r1"] < float("inf")
    assert "not started: 1 run(s) of m under colab on 2B2L" in lines[-1]
    # run again after 'rerun --failed': the timed-out attempt, set aside, still counts
    attempt = cdir.attempts / "2B2L-colab-m-r0" / "1-failed" / "run"
    attempt.mkdir(parents=True)
    (attempt / "status").write_text(f"failed: {timeout}\n")
    rows = [runner.Entry(e.run, None, RunState(TODO)) for e in rows]
    todo = [e.run.run_id for e in rows]
    budget, lines = runner.sitting_budget(spec, cdir, rows, todo, 1e6)
    held = {k for k, v in budget.expected.items() if v == float("inf")}
    assert held == {"2B2L-colab-m-r0", "2B2L-colab-m-r1"}, lines
    # an attempt cut short by a shorter limit than the one planned now holds nothing back
    manifest = {"key": "k", "wall_s": 600.0, "engine": {"name": "gem5", "wall_limit_s": 600}}
    (attempt / "manifest.json").write_text(json.dumps(manifest))

    def planned(limit_s: int) -> RunKey:
        return RunKey.of({"engine": {"name": "gem5", "wall_clock_limit_s": limit_s}})

    for limit_s, expect in ((600, {"2B2L-colab-m-r0", "2B2L-colab-m-r1"}), (1200, set())):
        rows = [runner.Entry(e.run, planned(limit_s), RunState(TODO)) for e in rows]
        budget, lines = runner.sitting_budget(spec, cdir, rows, todo, 1e6)
        held = {k for k, v in budget.expected.items() if v == float("inf")}
        assert held == expect, (limit_s, lines)
