"""Runs in slices: the statistics of a measured interval cut by slice ends
joined into one dump, and the slices run, stopped and resumed by the
engine (against a stand-in gem5 that writes what the kit's configuration
writes; the gem5 tier runs the real one)."""

import json
import math
import textwrap
from pathlib import Path

import pytest

from ampkit import gem5stats
from ampkit.campaign.spec import load_spec
from ampkit.engines import gem5
from ampkit.engines.base import BootInputs
from ampkit.errors import AmpkitError, UsageError
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, RunRequest, prepare
from ampkit.rundir import RunWriter
from tests import stand_in_gem5

pytestmark = pytest.mark.unit

GEM5 = EngineIdentity(
    name="gem5", version="gem5 version 24.0.0.1", binary_sha256="g" * 64, bootloader_sha256="b" * 64
)
CPU = "system.bigCluster.cpus0"


def dump(
    ticks: float, *, watts: float = 1.0, items: tuple[float, float] = (0, 0)
) -> dict[str, float]:
    """A dump of ``ticks`` of one CPU at 1 GHz retiring one instruction
    every two cycles, its L2 and a DRAM rank, and a work item."""
    stats = {
        "simFreq": 1e12,
        "simTicks": ticks,
        f"{CPU}.numCycles": ticks / 1000,
        f"{CPU}.commitStats0.numInsts": ticks / 2000,
        f"{CPU}.ipc": 0.5,  # a rate: a merge may not sum it
        f"{CPU}.power_model.dynamicPower": watts,
        f"{CPU}.power_model.staticPower": 0.5,
        f"{CPU}.power_state.pwrStateResidencyTicks::ON": ticks,
        "system.bigCluster.l2.power_model.dynamicPower": 0.1,
        "system.bigCluster.l2.power_model.staticPower": 0.0,
        "system.mem_ctrls.dram.rank0.totalEnergy": ticks / 1000,  # pJ
        "system.work_item_type0::samples": items[0],
        "system.work_item_type0::mean": items[1],
    }
    stats["simSeconds"] = ticks / 1e12
    return stats


def test_a_measured_interval_in_pieces_is_one_dump() -> None:
    """Worked by hand: 2 ms at 1.5 W and 1 ms at 3.5 W are 3 ms of
    (3 + 3.5) mJ, so 2.1667 W over the whole; counts add; the rate is
    dropped; the work item's mean is over its three samples."""
    parts = [
        dump(2e9, watts=1.0, items=(1, 3e9)),
        dump(0.0, watts=math.nan),  # gem5's dump at a slice's exit: no time
        dump(1e9, watts=3.0, items=(2, 6e9)),
    ]
    merged = gem5stats.merge(parts)
    assert merged["simTicks"] == 3e9 and merged["simSeconds"] == pytest.approx(3e-3)
    assert merged[f"{CPU}.commitStats0.numInsts"] == 1.5e6
    assert f"{CPU}.ipc" not in merged
    summary = gem5stats.summary([merged])
    assert summary["cpus"][0]["energy_j"] == pytest.approx(2e-3 * 1.5 + 1e-3 * 3.5)
    assert summary["cpus"][0]["residency_ticks"] == 3e9
    assert summary["memory"][0]["energy_j"] == pytest.approx(3e6 * 1e-12)
    assert summary["clusters"][0]["energy_j"] == pytest.approx(6.5e-3 + 0.1 * 3e-3)
    assert summary["work_items"] == [{"id": 0, "samples": 3, "mean_s": 0.005}]
    assert summary["pmu"]["INST_RETIRED"] == 1.5e6
    with pytest.raises(gem5stats.StatsError, match="covers any time"):
        gem5stats.merge([dump(0.0)])


def at(ticks: float, final: float, **kw: object) -> dict[str, float]:
    """dump(), ending at tick ``final``."""
    return {**dump(ticks, **kw), "finalTick": final}  # type: ignore[arg-type]


def test_the_slices_of_a_run_give_the_layout_of_one() -> None:
    """Three slices, cut at 10 and 20 ms: the measured interval starts in
    the first (at 5 ms) and ends in the last (at 23 ms); each slice's
    restore dump and its drain (gem5's dump at exit, 250 ticks) are left
    out, its own dump at its end tick is in."""
    ms, drain = 1e9, 250
    restore, start = at(1.0, 1.0), at(5 * ms - 1, 5 * ms)
    first = [restore, start, at(5 * ms, 10 * ms), at(drain, 10 * ms + drain)]
    second_from = 10 * ms + drain
    middle = [
        at(1.0, second_from + 1),
        at(20 * ms - second_from - 1, 20 * ms),
        at(drain, 20 * ms + drain),
    ]
    third_from = 20 * ms + drain
    last = [at(1.0, third_from + 1), at(23 * ms - third_from - 1, 23 * ms), at(4e8, 23.4 * ms)]
    records: list[dict[str, object] | None] = [
        {"until": int(10 * ms), "checkpoint_tick": int(10 * ms + drain)},
        {"until": int(20 * ms), "checkpoint_tick": int(20 * ms + drain)},
        None,
    ]
    dumps = gem5stats.run_dumps([first, middle, last], records)
    assert len(dumps) == len(gem5stats.RUN_DUMPS)
    assert dumps[0] is restore and dumps[1] is start and dumps[3] is last[-1]
    # 18 ms less the two cuts' restore ticks and drains
    summary = gem5stats.run_summary(dumps)
    assert summary["sim_ticks"] == 18 * ms - 2 - 2 * drain
    assert summary["cuts"] == 2 and not summary["work_items_whole"]
    # a checkpoint taken at once has no drain dump
    undrained = gem5stats.run_dumps(
        [first[:3], [at(1.0, 10 * ms + 1), at(2 * ms - 1, 12 * ms), at(1e6, 12 * ms + 1e6)]],
        [{"until": int(10 * ms), "checkpoint_tick": int(10 * ms)}, None],
    )
    assert gem5stats.run_summary(undrained)["sim_ticks"] == 7 * ms - 1
    # one slice is a run as before
    whole = [*first[:3], dump(4e8)]
    assert gem5stats.run_dumps([whole]) == whole
    assert gem5stats.run_summary(whole)["cuts"] == 0
    # a runner that never dumped its end leaves the interval unknown
    with pytest.raises(gem5stats.MeasuredUnknown, match="1 dumps of the runner in 2 slices"):
        gem5stats.run_dumps(
            [first, [at(1.0, second_from + 1), at(5e8, 11 * ms)]], [records[0], None]
        )


def cumulative(ticks: float, final: float) -> dict[str, float]:
    """A workload's mark: the counts since the runner's reset, not reset."""
    return at(ticks, final)


def test_a_region_marked_inside_the_interval_gives_its_own_counts() -> None:
    """The runner resets at 5 ms and dumps at 12; the workload marks its
    region at 6 and 10 ms without resetting (m5 dumpstats): the interval
    stays the runner's, and the region's counts are the marks' difference."""
    ms = 1e9
    restore, start = at(1.0, 1.0), at(5 * ms - 1, 5 * ms)
    begin, end = cumulative(1 * ms, 6 * ms), cumulative(5 * ms, 10 * ms)
    measured, exit_ = at(7 * ms, 12 * ms), at(4e8, 12.4 * ms)
    dumps = gem5stats.run_dumps([[restore, start, begin, end, measured, exit_]])
    assert len(dumps) == len(gem5stats.RUN_DUMPS)
    summary = gem5stats.run_summary(dumps)
    assert summary["sim_ticks"] == 7 * ms and summary["cuts"] == 0
    # 4 ms at one instruction every two cycles of 1 GHz
    assert summary["roi"]["sim_seconds"] == pytest.approx(4e-3)
    assert summary["roi"]["pmu"]["INST_RETIRED"] == pytest.approx(2e6)
    assert summary["roi"]["pmu"]["CPU_CYCLES"] == pytest.approx(4e6)
    assert summary["pmu"]["INST_RETIRED"] == pytest.approx(3.5e6)
    # a run that marked no region has none
    assert "roi" not in gem5stats.run_summary([restore, start, measured, exit_])
    # the region's energy: each power model's watts x seconds at the later
    # mark less at the earlier (1.5 W over the 4 ms between them)
    big = summary["roi"]["clusters"][0]
    assert big["cluster"] == "bigCluster" and big["insts"] == pytest.approx(2e6)
    assert big["energy_j"] == pytest.approx(1.5 * 4e-3 + 0.1 * 4e-3)
    # the runner's deadline passing between the marks: its dump resets the
    # counts, and six dumps no longer mean start, marks, measured
    reset_between = at(3 * ms, 8 * ms)
    late_mark = cumulative(2 * ms, 10 * ms)  # counts from 8 ms
    with pytest.raises(gem5stats.MeasuredUnknown, match="does not count from the runner's start"):
        gem5stats.run_dumps([[restore, start, begin, reset_between, late_mark, exit_]])


def test_a_region_a_slice_end_cuts_has_no_counts_of_its_own() -> None:
    """Marks at 6 ms (first slice) and 12 ms (second): the restore between
    them restarted the counts, so their difference would be wrong; the
    interval is still joined as any run in slices."""
    ms, drain = 1e9, 250
    first = [
        at(1.0, 1.0),
        at(5 * ms - 1, 5 * ms),
        cumulative(1 * ms, 6 * ms),
        at(5 * ms, 10 * ms),
        at(drain, 10 * ms + drain),
    ]
    from_ = 10 * ms + drain
    last = [
        at(1.0, from_ + 1),
        cumulative(12 * ms - from_ - 1, 12 * ms),
        at(14 * ms - from_ - 1, 14 * ms),
        at(4e8, 14.4 * ms),
    ]
    records: list[dict[str, object] | None] = [
        {"until": int(10 * ms), "checkpoint_tick": int(10 * ms + drain)},
        None,
    ]
    summary = gem5stats.run_summary(gem5stats.run_dumps([first, last], records))
    assert summary["sim_ticks"] == 9 * ms - 1 - drain and summary["cuts"] == 1
    assert "roi" not in summary
    # in the last slice alone, the marks count again
    marked = [*last[:1], cumulative(1 * ms, from_ + ms), *last[1:]]
    summary = gem5stats.run_summary(
        gem5stats.run_dumps([[*first[:2], at(5 * ms, 10 * ms), first[-1]], marked], records)
    )
    assert summary["roi"]["sim_seconds"] == pytest.approx((12 * ms - from_ - 1 - ms) / 1e12)


def write_stats(directory: Path, dumps: list[dict[str, float]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    blocks = []
    for d in dumps:
        lines = [f"{name} {value}" for name, value in d.items()]
        blocks.append("\n".join([gem5stats.DUMP_BEGIN, *lines, gem5stats.DUMP_END]))
    (directory / "stats.txt").write_text("\n\n".join(blocks) + "\n")


def test_a_runs_slices_are_read_from_its_m5out(tmp_path: Path) -> None:
    m5out = tmp_path / "m5out"
    write_stats(m5out, [at(1.0, 1.0), at(5e9 - 1, 5e9), at(3e9, 8e9)])
    (m5out / gem5stats.SLICE_RECORD).write_text(
        '{"until": 8000000000, "checkpoint_tick": 8000000000}'
    )
    write_stats(m5out / "slice-1", [at(1.0, 8e9 + 1), at(2e9 - 1, 10e9), at(4e8, 10.4e9)])
    assert len(gem5stats.slice_dirs(m5out)) == 2
    dumps = gem5stats.read_run(m5out)
    assert dumps is not None and gem5stats.run_summary(dumps)["sim_ticks"] == 5e9 - 1
    (m5out / "slice-2").mkdir()
    with pytest.raises(gem5stats.StatsError, match="slice without statistics"):
        gem5stats.read_run(m5out)


# --- slices run by the engine -------------------------------------------------------

#: gem5.opt as the kit calls it for a slice: restores --restore-from (its
#: m5.cpt's curTick), writes the dumps configs/bigLITTLE.py and the runner
#: would over [curTick, --slice-until] and, if the guest has not ended by
#: then, the slice's checkpoint. $FAKE_TICKS: the measured interval's start
#: and end and the guest's power-off; $FAKE_HANG_FROM: a slice starting at
#: or after that tick never ends (a machine stopped under it).
FAKE_GEM5 = textwrap.dedent(
    """\
    #!/usr/bin/env python3
    import os, sys, time
    from pathlib import Path
    args = sys.argv[1:]
    def arg(name):
        return args[args.index(name) + 1] if name in args else None
    out = Path(arg("-d"))
    out.mkdir(parents=True, exist_ok=True)
    cpt = (Path(arg("--restore-from")) / "m5.cpt").read_text()
    start = int(cpt.split("curTick=")[1].split()[0])
    until = int(arg("--slice-until"))
    with open(os.environ["FAKE_CALLS"], "a") as f:
        f.write(f"{start}\\n")
    hang = os.environ.get("FAKE_HANG_FROM")
    if hang and start >= int(hang):
        time.sleep(60)
    killed = os.environ.get("FAKE_KILLED_FROM")
    if killed and start >= int(killed):
        os.kill(os.getpid(), 9)
    roi, roi_end, off = (int(t) for t in os.environ["FAKE_TICKS"].split(","))
    end = min(until, off)
    marks = sorted({start, start + 1, end, *(t for t in (roi, roi_end) if start + 1 < t < end)})
    def block(a, b):
        t = b - a
        return "\\n".join([
            "---------- Begin Simulation Statistics ----------",
            f"simFreq 1000000000000", f"simTicks {t}", f"finalTick {b}",
            f"system.bigCluster.cpus0.numCycles {t / 1000}",
            f"system.bigCluster.cpus0.commitStats0.numInsts {t / 2000}",
            f"system.bigCluster.cpus0.power_model.dynamicPower 1.0",
            f"system.bigCluster.cpus0.power_model.staticPower 0.5",
            "---------- End Simulation Statistics   ----------",
        ])
    dumps = [block(a, b) for a, b in zip(marks, marks[1:])]
    if end < off:  # the drain, 250 ticks: gem5's dump at exit
        dumps.append(block(until, until + 250))
    (out / "stats.txt").write_text("\\n\\n".join(dumps) + "\\n")
    (out / "system.terminal").write_text(f"guest from tick {start}\\n")
    if end == off:
        print(f"ampkit: simulation ended: m5_exit instruction encountered at tick {off}")
        sys.exit(0)
    ckpt = Path(arg("--slice-checkpoint"))
    ckpt.mkdir(parents=True)
    (ckpt / "m5.cpt").write_text(f"[Globals]\\ncurTick={until + 250}\\n")
    record = f'{{"until": {until}, "checkpoint_tick": {until + 250}}}'
    (out / "ampkit-slice.json").write_text(record)
    print(f"ampkit: slice ended at tick {until + 250}, checkpoint written to {ckpt}")
    """
)

MS = gem5.TICKS_PER_MS
BOOT_TICK = 70 * MS
#: the measured interval from 3 ms to 25.5 ms after the boot, power-off at 26 ms
TICKS = f"{BOOT_TICK + 3 * MS},{BOOT_TICK + 25 * MS + MS // 2},{BOOT_TICK + 26 * MS}"


#: the simulated ms a run may take (far beyond the guest's end)
LIMIT_MS = 1000


@pytest.fixture
def sliced_gem5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> gem5.Gem5:
    monkeypatch.setenv("FAKE_CALLS", str(tmp_path / "calls"))
    monkeypatch.setenv("FAKE_TICKS", TICKS)
    return stand_in_gem5.install(tmp_path, FAKE_GEM5, monkeypatch)


def boot_inputs(tmp_path: Path, limit_s: float) -> BootInputs:
    for name in ("vmlinux", "initrd", "run.desc", "system.dtb"):
        (tmp_path / name).write_text(name)
    return BootInputs(
        identity=GEM5,
        machine=gem5.Gem5Machine(get_platform("2B2L")),
        cmdline="console=ttyAMA0",
        limit_s=limit_s,
        image=tmp_path / "vmlinux",
        vmlinux=tmp_path / "vmlinux",
        vmlinux_sha256="v" * 64,
        initramfs=tmp_path / "initrd",
        initramfs_sha256="i" * 64,
        run_desc=tmp_path / "run.desc",
        dtb=tmp_path / "system.dtb",
        dtb_bytes=b"system.dtb",
        slice_ms=10,
    )


def booted(tmp_path: Path) -> gem5.Checkpoint:
    directory = tmp_path / "boot-checkpoint"
    directory.mkdir(exist_ok=True)
    (directory / "m5.cpt").write_text(f"[Globals]\ncurTick={BOOT_TICK}\n")
    return gem5.Checkpoint(directory, "c" * 64, booted_now=False, boot_wall_s=None)


def calls(tmp_path: Path) -> list[int]:
    path = tmp_path / "calls"
    return [int(t) for t in path.read_text().split()] if path.is_file() else []


def test_a_run_in_slices_joins_them(sliced_gem5: gem5.Gem5, tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "run")
    inputs = boot_inputs(tmp_path, limit_s=30)
    out = gem5.run_in_slices(
        sliced_gem5, inputs, booted(tmp_path), 10, writer, sim_limit_ms=LIMIT_MS
    )
    # slices end at 10 and 20 ms after the boot; the guest powers off at 26
    assert calls(tmp_path) == [BOOT_TICK, BOOT_TICK + 10 * MS + 250, BOOT_TICK + 20 * MS + 250]
    assert out.result.exit_code == 0 and not out.result.timed_out
    assert [s["until_tick"] for s in out.slices] == [BOOT_TICK + n * 10 * MS for n in (1, 2, 3)]
    assert [s["resumed"] for s in out.slices] == [False] * 3
    assert ["--slice-until", str(BOOT_TICK + 10 * MS)] == out.commands[0][-4:-2]
    m5out = writer.path("m5out")
    assert len(gem5stats.slice_dirs(m5out)) == 3
    assert "=== ampkit: slice 2 ===" in writer.path("gem5.log").read_text()
    dumps = gem5stats.read_run(m5out)
    assert dumps is not None
    summary = gem5stats.run_summary(dumps)
    # 22.5 ms, less a tick at each of the two restores and their drains
    measured = 22.5 * MS - 2 - 2 * 250
    assert summary["sim_ticks"] == measured and summary["cuts"] == 2
    assert summary["cpus"][0]["insts"] == pytest.approx(measured / 2000)
    assert summary["cpus"][0]["energy_j"] == pytest.approx(1.5 * measured / 1e12)
    # the guest ended: nothing is kept to resume
    assert not (tmp_path / "cache" / "gem5-slices").exists() or not any(
        (tmp_path / "cache" / "gem5-slices").iterdir()
    )


def test_a_stopped_run_resumes_at_its_last_slice(
    sliced_gem5: gem5.Gem5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped in its third slice (a wall-clock limit here; the end of a
    sitting alike), the run starts again at the third slice and ends with
    the statistics of a run never stopped."""
    monkeypatch.setenv("FAKE_HANG_FROM", str(BOOT_TICK + 20 * MS))
    first = RunWriter(tmp_path / "first")
    stopped = gem5.run_in_slices(
        sliced_gem5, boot_inputs(tmp_path, 2), booted(tmp_path), 10, first, sim_limit_ms=LIMIT_MS
    )
    assert stopped.result.timed_out and len(stopped.slices) == 3
    store = next((tmp_path / "cache" / "gem5-slices").iterdir())
    # the second slice's checkpoint waits; the first's is gone
    assert (store / "slice-1" / "checkpoint" / "m5.cpt").is_file()
    assert not (store / "slice-0" / "checkpoint").exists()
    monkeypatch.delenv("FAKE_HANG_FROM")
    (tmp_path / "calls").unlink()
    again = RunWriter(tmp_path / "again")
    out = gem5.run_in_slices(
        sliced_gem5, boot_inputs(tmp_path, 30), booted(tmp_path), 10, again, sim_limit_ms=LIMIT_MS
    )
    assert calls(tmp_path) == [BOOT_TICK + 20 * MS + 250]  # only the slice lost
    assert [s["resumed"] for s in out.slices] == [True, True, False]
    assert out.result.exit_code == 0
    assert out.result.wall_s >= sum(s["wall_s"] for s in stopped.slices[:2])
    resumed = gem5stats.read_run(again.path("m5out"))
    assert resumed is not None
    # the same figures as a run never stopped
    (tmp_path / "calls").unlink()
    whole = RunWriter(tmp_path / "whole")
    gem5.run_in_slices(
        sliced_gem5, boot_inputs(tmp_path, 30), booted(tmp_path), 10, whole, sim_limit_ms=LIMIT_MS
    )
    assert len(calls(tmp_path)) == 3
    never_stopped = gem5stats.read_run(whole.path("m5out"))
    assert never_stopped is not None
    # (as JSON: the fake's L2 has no power model, and NaN is not NaN)
    figures = [json.dumps(gem5stats.run_summary(d)) for d in (resumed, never_stopped)]
    assert figures[0] == figures[1]
    assert not store.exists()


def test_two_runs_of_the_same_slices_are_not_run_at_once(
    sliced_gem5: gem5.Gem5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_HANG_FROM", str(BOOT_TICK))
    writer = RunWriter(tmp_path / "a")
    inputs = boot_inputs(tmp_path, 1)
    gem5.run_in_slices(sliced_gem5, inputs, booted(tmp_path), 10, writer, sim_limit_ms=LIMIT_MS)
    store = next((tmp_path / "cache" / "gem5-slices").iterdir())
    busy = pytest.raises(AmpkitError, match="another process is running the slices")
    with gem5._held(store / "lock"), busy:  # as another process running them holds it
        gem5.run_in_slices(
            sliced_gem5,
            boot_inputs(tmp_path, 1),
            booted(tmp_path),
            10,
            RunWriter(tmp_path / "b"),
            sim_limit_ms=LIMIT_MS,
        )


def test_slices_are_gem5s_and_part_of_the_key(tmp_path: Path) -> None:
    def request(**kw: object) -> RunRequest:
        return RunRequest(
            platform=get_platform("2B2L"),
            policy="cfs",
            mix=load_mix("sync2-contend-compute"),
            **kw,  # type: ignore[arg-type]
        )

    dtbs = {"2B2L": b"gem5-tree"}
    one = prepare(request(engine="gem5"), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(dtbs))
    sliced = prepare(
        request(engine="gem5", slice_ms=20), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(dtbs)
    )
    assert one.key != sliced.key
    qemu = EngineIdentity(name="qemu", version="QEMU 7.2", binary_sha256="q" * 64)
    with pytest.raises(UsageError, match="cannot go in slices"):
        prepare(request(engine="qemu", slice_ms=20), qemu, "k" * 64, "i" * 64)
    with pytest.raises(UsageError, match="slices of 0 simulated ms"):
        prepare(request(engine="gem5", slice_ms=0), GEM5, "k" * 64, "i" * 64, dtb_cache=dtbs)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "s"\nengine = "qemu"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\n'
        'mixes = ["sync2-contend-compute"]\nslice_ms = 20\n'
    )
    with pytest.raises(AmpkitError, match="slice_ms"):
        load_spec(spec)


def test_a_guest_that_never_ends_fails_at_its_limit(
    sliced_gem5: gem5.Gem5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A livelocked guest never powers off: every slice finishes in time,
    so only the simulated limit ends the run (its slices then are dropped:
    run again, they would go the same way)."""
    never = f"{BOOT_TICK + 3 * MS},{BOOT_TICK + 4 * MS},{BOOT_TICK + 10**6 * MS}"
    monkeypatch.setenv("FAKE_TICKS", never)
    writer = RunWriter(tmp_path / "run")
    out = gem5.run_in_slices(
        sliced_gem5, boot_inputs(tmp_path, 30), booted(tmp_path), 10, writer, sim_limit_ms=30
    )
    assert len(calls(tmp_path)) == 3
    assert out.problem is not None and "did not end within 30 simulated ms" in out.problem
    assert not any((tmp_path / "cache" / "gem5-slices").iterdir())


def test_a_gem5_killed_by_a_signal_keeps_the_slices(
    sliced_gem5: gem5.Gem5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill that reached gem5 (the OOM killer) is a stop, not gem5's end:
    the finished slices stay, and the run resumes at the one killed."""
    monkeypatch.setenv("FAKE_KILLED_FROM", str(BOOT_TICK + 10 * MS))
    inputs = boot_inputs(tmp_path, 30)
    out = gem5.run_in_slices(
        sliced_gem5, inputs, booted(tmp_path), 10, RunWriter(tmp_path / "a"), sim_limit_ms=LIMIT_MS
    )
    assert out.result.exit_code == -9 and len(out.slices) == 2
    monkeypatch.delenv("FAKE_KILLED_FROM")
    (tmp_path / "calls").unlink()
    again = gem5.run_in_slices(
        sliced_gem5, inputs, booted(tmp_path), 10, RunWriter(tmp_path / "b"), sim_limit_ms=LIMIT_MS
    )
    assert calls(tmp_path) == [BOOT_TICK + 10 * MS + 250, BOOT_TICK + 20 * MS + 250]
    assert again.result.exit_code == 0
    assert not any((tmp_path / "cache" / "gem5-slices").iterdir())
