"""The kernel's tick (CONFIG_HZ): read from the manifest's kernel entry, 250
Hz for manifests written before it was recorded, and a setup of its own in
the analysis, as the time scale is (test_timescale.py)."""

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ampkit.analysis import metrics, report
from ampkit.analysis.collect import RUN_COLUMNS, collect
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.rundir import RunDir
from ampkit.timescale import DEFAULT_TICK_HZ
from tests.unit.setup_tables import app_row, app_tables, mix_and_alone

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "gem5-v24-2B2L-run"


def _set_tick(run: Path, tick: object) -> None:
    """Record ``tick`` as the run's kernel tick in its manifest."""
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["kernel"] = {**(manifest.get("kernel") or {}), "tick_hz": tick}
    path.write_text(json.dumps(manifest))


def test_a_run_says_the_tick_its_manifest_records_and_250_without_one(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    # a manifest from before the tick was recorded: the kit's kernels ticked at 250 Hz
    assert "tick_hz" not in json.loads((run / "manifest.json").read_text())["kernel"]
    assert DEFAULT_TICK_HZ == 250
    info = RunDir(run).info()
    assert info.tick_hz == 250 and info.columns()["tick_hz"] == 250
    _set_tick(run, 1000)
    info = RunDir(run).info()
    assert info.tick_hz == 1000
    columns = list(info.columns())
    assert info.columns()["tick_hz"] == 1000
    assert columns.index("tick_hz") == columns.index("timescale") + 1


@pytest.mark.parametrize("tick", ["1000", 1000.0, True, None, 0, -250, [1000]])
def test_a_tick_that_is_not_a_whole_number_reads_as_250(tmp_path: Path, tick: object) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    _set_tick(run, tick)
    assert RunDir(run).info().tick_hz == 250


def test_a_manifest_without_a_kernel_entry_reads_as_250(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["kernel"]
    path.write_text(json.dumps(manifest))
    assert RunDir(run).info().tick_hz == 250


def test_the_tables_carry_the_tick_after_the_time_scale(tmp_path: Path) -> None:
    assert RUN_COLUMNS.index("tick_hz") == RUN_COLUMNS.index("timescale") + 1
    root = tmp_path / "runs"
    apps = [SynthApp("x", 1, 10 * 10**6)]
    _set_tick(write_run(root, platform="2B2L", policy="cfs", mix="a", apps=apps), 1000)
    write_run(root, platform="2B2L", policy="cfs", mix="b", apps=apps)
    col = collect(root)
    for table in (col.runs, col.apps, col.threads):
        columns = list(table.columns)
        assert columns.index("tick_hz") == columns.index("timescale") + 1
    assert dict(zip(col.apps["mix"], col.apps["tick_hz"], strict=True)) == {"a": 1000, "b": 250}


@pytest.mark.parametrize(
    ("scale", "named"),
    [(1, "2B2L at 1000 Hz tick: p0/1 alone"), (4, "2B2L at time scale 4, 1000 Hz tick: p0/1")],
)
def test_a_run_at_another_tick_is_not_referenced_by_runs_at_250(scale: int, named: str) -> None:
    """A mix at 1000 Hz whose only alone runs ticked at 250 Hz (and are
    otherwise the same): no reference, and the message names the tick."""
    apps, threads = app_tables(
        [
            app_row("mix", "mix", "p0", 20, tick=1000, scale=scale),
            app_row("mix", "mix", "p1", 20, tick=1000, scale=scale),
            app_row("alone-p0", "alone-p0", "p0", 10, tick=250, scale=scale),
            app_row("alone-p1", "alone-p1", "p1", 10, tick=250, scale=scale),
        ]
    )
    with pytest.raises(metrics.MissingReference, match=named) as raised:
        metrics.compute(apps, threads)
    assert "time scale and tick" in str(raised.value)


def test_ticks_are_kept_apart_through_to_the_summary() -> None:
    """The same mix at 250 and 1000 Hz, each with its own alone runs (alone
    10 at 250 Hz, 5 at 1000 Hz; 20 in the mix at both): slowdowns 2 and 4,
    summarised per tick, never averaged together; a table without the
    column (one collected before the tick was recorded) ticked at 250 Hz."""
    apps, threads = mix_and_alone("tick_hz", {250: 10, 1000: 5})
    slow, _, summary, gm = metrics.compute(apps, threads)
    assert dict(zip(slow["tick_hz"], slow["slowdown"], strict=False)) == {250: 2.0, 1000: 4.0}
    antt = summary[summary["metric"] == "h_antt"].set_index("tick_hz")["mean"]
    assert antt.to_dict() == {250: 2.0, 1000: 4.0}
    assert sorted(gm["tick_hz"].unique()) == [250, 1000]
    old = apps[apps["tick_hz"] == 250].drop(columns=["tick_hz"])
    assert metrics.with_setup(old)["tick_hz"].eq(250).all()
    _, _, _, gm_old = metrics.compute(old, threads)
    assert list(gm_old["tick_hz"].unique()) == [250]


def _campaign(root: Path, *, tick: int | None, scale: int = 1, colab_ms: int = 20) -> None:
    """cfs and colab on a pair, and each application alone under cfs, at
    ``tick`` (None: a manifest that records no tick) and ``scale``."""
    cmdline = "rdinit=/init" + (f" sched_timescale={scale}" if scale > 1 else "")
    runs = [
        write_run(
            root,
            platform="2B2L",
            policy=policy,
            mix="pair",
            apps=[SynthApp("x", 1, x_ms * 10**6), SynthApp("y", 1, 20 * 10**6)],
            cmdline=cmdline,
        )
        for policy, x_ms in (("cfs", 20), ("colab", colab_ms))
    ] + [
        write_run(
            root,
            platform="2B2L",
            policy="cfs",
            mix=f"alone-{app}",
            apps=[SynthApp(app, 1, 10 * 10**6)],
            cmdline=cmdline,
        )
        for app in ("x", "y")
    ]
    if tick is not None:
        for run in runs:
            _set_tick(run, tick)


def test_the_report_names_each_tick_and_keeps_them_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same campaign at 250 Hz (manifests without the field, as before
    it was recorded) and at 1000 Hz, identical but for the tick (colab
    twice as slow on x at 1000 Hz): two sections, each normalised within
    its tick, the 1000 Hz one's heading, plots and titles naming it."""
    titles: list[str] = []
    draw = report.grouped_bars

    def spy(values: pd.DataFrame, **kw: Any) -> int:
        titles.append(kw["title"])
        return draw(values, **kw)

    monkeypatch.setattr(report, "grouped_bars", spy)
    _campaign(tmp_path / "runs" / "hz250", tick=None)
    _campaign(tmp_path / "runs" / "hz1000", tick=1000, colab_ms=40)
    written = report.write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    headings = [line for line in md.splitlines() if line.startswith("## 2B2L")]
    assert headings == ["## 2B2L on qemu", "## 2B2L, 1000 Hz tick on qemu"]
    assert "Kernel time scale 1: the scheduler's clocks as on hardware. Kernel ticks " in md
    assert "Kernel ticks 250 Hz and 1000 Hz" in md
    assert "250 Hz tick" not in md
    gm = pd.read_csv(tmp_path / "report" / "tables" / "geomeans.csv")
    antt = gm[(gm["metric"] == "h_antt") & (gm["policy"] == "colab")]
    # alone 10 ms each; cfs's mix 20 and 20 (ANTT 2); colab's 20 and 20 at
    # 250 Hz (1.0 of cfs's), 40 and 20 at 1000 Hz (ANTT 3: 1.5 of cfs's).
    assert dict(zip(antt["tick_hz"], antt["across_mixes"], strict=True)) == pytest.approx(
        {250: 1.0, 1000: 1.5}
    )
    assert {p for p in written.plots if p.startswith("qemu-2B2L-hz1000-")}
    assert {p for p in written.plots if p.startswith("qemu-2B2L-h_antt")}
    assert sum(t.endswith(", 2B2L (qemu)") for t in titles) == 5
    assert sum(t.endswith(", 2B2L, 1000 Hz tick (qemu)") for t in titles) == 5


def test_the_report_names_a_scale_and_a_tick_together(tmp_path: Path) -> None:
    """At time scale 4 and 1000 Hz: the heading and the plots say both."""
    _campaign(tmp_path / "runs", tick=1000, scale=4)
    written = report.write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## 2B2L, time scale 4, 1000 Hz tick on qemu" in md
    assert "Kernel time scales 4 (" in md and "Kernel tick 1000 Hz (" in md
    assert "qemu-2B2L-x4-hz1000-h_antt.png" in written.plots


def test_a_report_of_runs_at_the_default_tick_says_nothing_of_it(tmp_path: Path) -> None:
    """Runs at 250 Hz, recorded or not: the report reads as before the tick
    was recorded (no tick in the header, headings or plot names)."""
    _campaign(tmp_path / "runs" / "old", tick=None)
    _campaign(tmp_path / "runs" / "new", tick=250, colab_ms=30)
    written = report.write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Kernel time scale 1: the scheduler's clocks as on hardware.\n" in md
    # the clocks section counts ticks whatever the tick; nothing else names it
    before, clocks = md.split("## Clocks each run spanned")
    clocks, after = clocks.split("\n## ", 1)
    assert "### 2B2L on qemu" in clocks and " Hz" not in clocks
    assert " Hz" not in before + after and "tick" not in before + after
    assert [line for line in md.splitlines() if line.startswith("## 2B2L")] == ["## 2B2L on qemu"]
    assert not any("hz" in p for p in written.plots)


def test_the_report_says_whether_every_policy_carried_the_counters() -> None:
    """The per-task counters cost every policy that keeps them: the header
    says whether the runs kept them (their guests' sched_colab_stats), and
    nothing where no guest recorded it."""
    frame = pd.DataFrame({"included": [True, True, False], "counters": [1.0, 1.0, 0.0]})
    assert "Every run kept the kernel's per-task counters" in report._counters_text(frame)
    frame["counters"] = [1.0, 0.0, 1.0]
    assert report._counters_text(frame).startswith(" 1 of 2 runs kept")
    frame["counters"] = [float("nan")] * 3
    assert report._counters_text(frame) == ""
    assert report._counters_text(frame.drop(columns="counters")) == ""
