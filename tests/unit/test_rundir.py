"""ampkit/rundir.py: the manifest it writes is the one it reads, and its
verdict on a run is the same for every reader."""

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ampkit import references
from ampkit.analysis.collect import collect
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.rundir import (
    M5OUT,
    MANIFEST,
    QEMU_NOTICE,
    AppRecord,
    Ending,
    EngineEntry,
    Excluded,
    Manifest,
    RunDir,
    RunKey,
    RunWriter,
    parse_counters,
)
from ampkit.summary import summarize

pytestmark = pytest.mark.unit

GEM5: dict[str, Any] = {"engine": "gem5", "statistics": True, "timing_notice": None}


def test_the_manifest_a_run_writes_is_the_one_its_readers_read(tmp_path: Path) -> None:
    manifest = Manifest(
        run_id="3B1L-colab-m-r2",
        key="k" * 64,
        engine=EngineEntry(
            name="gem5",
            statistics=True,
            stats_dumps=("restore", "start", "measured", "exit"),
            wall_limit_s=900.0,
            details={"version": "24.0.0.1", "memory_mb": 2048},
        ),
        platform={"name": "3B1L", "big": 3, "little": 1},
        policy="colab",
        mix={"name": "m", "apps": [{"program": "x", "threads": 2}]},
        repetition=2,
        mix_limit_s=60.0,
        started="2026-11-25T00:00:00+00:00",
    )
    writer = RunWriter(tmp_path / "run")
    writer.write_manifest(manifest)
    written = json.loads(writer.path(MANIFEST).read_text())
    assert written["status"] == "running" and "finished" not in written
    assert written["engine"]["version"] == "24.0.0.1"
    assert written["engine"]["wall_limit_s"] == 900.0

    ending = Ending("2026-11-25T00:01:00+00:00", 60.5, 0, False, ("oops",), "failed: x")
    writer.write_manifest(replace(manifest, ending=ending, engine_outputs={"gem5": {"a": 1}}))
    path = writer.finish("failed: x")
    written = json.loads((path / MANIFEST).read_text())
    assert written["status"] == "failed: x" and written["boot"] == {
        "exit_code": 0,
        "timed_out": False,
    }
    assert written["kernel_problems"] == ["oops"] and written["gem5"] == {"a": 1}

    info = RunDir(path).info()
    assert (info.run_id, info.engine, info.platform, info.big, info.little) == (
        "3B1L-colab-m-r2",
        "gem5",
        "3B1L",
        3,
        1,
    )
    assert (info.policy, info.mix, info.repetition, info.key) == ("colab", "m", 2, "k" * 64)
    assert info.statistics and info.stats_dumps == ("restore", "start", "measured", "exit")
    assert info.timing_notice is None
    assert [a["program"] for a in info.mix_apps] == ["x"]


def test_a_gem5_run_without_statistics_is_excluded_alike_by_every_reader(tmp_path: Path) -> None:
    """The profile's and the benchmarks' RunDir.check() and the analysis'
    collect() give one verdict, with one reason."""
    apps = [SynthApp("x", 1, 10**7)]
    run = write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=apps, **GEM5)
    with pytest.raises(Excluded) as e:
        RunDir(run).check()
    assert str(e.value) == "incomplete: a gem5 run without its statistics"
    with pytest.raises(Excluded, match="without its statistics"):
        RunDir(run).judge().only_record()
    excluded = collect(tmp_path).excluded
    assert excluded["reason"].tolist() == [str(e.value)]
    # the same run on QEMU, whose engine keeps no statistics, counts
    qemu = write_run(tmp_path, platform="2B2L", policy="cfs", mix="q", apps=apps)
    assert RunDir(qemu).judge().only_record().turnaround_ns == 10**7


def test_the_summary_gives_the_notices_of_its_runs_engines_only(tmp_path: Path) -> None:
    apps = [SynthApp("x", 1, 10**7)]
    gem5 = write_run(tmp_path / "g", platform="2B2L", policy="cfs", mix="a", apps=apps, **GEM5)
    assert QEMU_NOTICE not in summarize([gem5])
    qemu = write_run(tmp_path / "q", platform="2B2L", policy="cfs", mix="a", apps=apps)
    assert summarize([gem5, qemu]).startswith(QEMU_NOTICE)


def record(**extra: Any) -> dict[str, Any]:
    return {
        "app": "x",
        "instance": 0,
        "threads": 2,
        "start_ns": 1_000,
        "end_ns": 9_000,
        "status": "ok",
        **extra,
    }


def test_the_region_of_interest_times_the_application() -> None:
    """Turnaround is the work: the region the program reported, inside its
    process; the process's time when it reported none or never left it."""
    rec = AppRecord.parse(record(roi_ns=[2_000, 7_500]))
    assert (rec.turnaround_ns, rec.timed_by, rec.process_ns) == (5_500, "region", 8_000)
    for roi in (None, [2_000, None]):
        rec = AppRecord.parse(record(roi_ns=roi))
        assert (rec.turnaround_ns, rec.timed_by) == (8_000, "process")


@pytest.mark.parametrize(
    ("roi", "reason"),
    [
        ([500, 7_500], "is not inside its process"),
        ([2_000, 9_500], "is not inside its process"),
        ([7_000, 2_000], "is not inside its process"),
        ([2_000], "is not [begin, end]"),
        (["a", 7_000], "is not two integers"),
    ],
)
def test_a_region_outside_its_process_is_corrupt(roi: list[Any], reason: str) -> None:
    with pytest.raises(Excluded, match=re.escape(reason)):
        AppRecord.parse(record(roi_ns=roi))


def test_per_thread_times_and_tasks_are_typed_fields() -> None:
    """thread_times_ns, thread_cpu_ns and tasks are AppRecord's fields, one
    time per thread; absent or null (a program that reported none) is empty."""
    tasks = [{"thread": 0, "class": "big"}, {"thread": 1, "class": "little"}]
    rec = AppRecord.parse(
        record(thread_times_ns=[5, 6], thread_cpu_ns=[4, 3], tasks=tasks, exit_status=0)
    )
    assert (rec.thread_wall_ns, rec.thread_cpu_ns, rec.tasks) == ((5, 6), (4, 3), tuple(tasks))
    assert rec.raw["exit_status"] == 0  # what the fields do not type stays in raw
    for absent in ({}, {"thread_times_ns": None, "thread_cpu_ns": None, "tasks": None}):
        rec = AppRecord.parse(record(**absent))
        assert (rec.thread_wall_ns, rec.thread_cpu_ns, rec.tasks) == ((), (), ())


def test_pmu_counts_are_scaled_by_the_time_they_were_counted() -> None:
    """A run that counted PMU events (a pmu line) gives each its count over the
    whole time it was enabled, the counters having been time-shared; an
    event not counted says why, and a run that did not count has none."""
    pmu = {
        "INST_RETIRED": {"count": 600, "enabled_ns": 1000, "running_ns": 600},
        "CPU_CYCLES": {"count": 900, "enabled_ns": 1000, "running_ns": 1000, "listed": False},
        "LD_RETIRED": {"error": "not listed by the kernel's PMU"},
    }
    rec = AppRecord.parse(record(pmu=pmu))
    assert rec.pmu["INST_RETIRED"].scaled == pytest.approx(1000)
    assert rec.pmu["CPU_CYCLES"].scaled == 900 and not rec.pmu["CPU_CYCLES"].listed
    assert rec.pmu["INST_RETIRED"].listed
    assert rec.pmu["LD_RETIRED"].scaled is None
    assert rec.pmu["LD_RETIRED"].error == "not listed by the kernel's PMU"
    assert AppRecord.parse(record()).pmu == {}
    for bad in ({"INST_RETIRED": 5}, {"INST_RETIRED": {"count": 5}}, [1]):
        with pytest.raises(Excluded, match="corrupt: x#0 record: pmu"):
            AppRecord.parse(record(pmu=bad))


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"thread_times_ns": [5]}, "thread_times_ns holds 1 values for 2 threads"),
        ({"thread_cpu_ns": [1, 2, 3]}, "thread_cpu_ns holds 3 values for 2 threads"),
        ({"thread_times_ns": [5, "6"]}, "thread_times_ns is not a list of integers"),
        ({"thread_cpu_ns": [1, True]}, "thread_cpu_ns is not a list of integers"),
        ({"thread_times_ns": 11}, "thread_times_ns is not a list of integers"),
        ({"tasks": [{"thread": 0}, 7]}, "tasks is not a list of objects"),
    ],
)
def test_per_thread_fields_that_do_not_fit_the_threads_are_corrupt(
    extra: dict[str, Any], reason: str
) -> None:
    with pytest.raises(Excluded, match=re.escape(f"corrupt: x#0 record: {reason}")):
        AppRecord.parse(record(**extra))


def test_a_run_whose_cpu_times_miss_a_thread_is_left_out_not_cut(tmp_path: Path) -> None:
    """The threads table once paired wall and CPU times with zip(strict=False),
    silently dropping the threads one list lacked."""
    run = write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=[SynthApp("x", 2, 9)])
    results = run / "results.jsonl"
    rec = json.loads(results.read_text())
    rec["thread_cpu_ns"] = rec["thread_cpu_ns"][:1]
    results.write_text(json.dumps(rec) + "\n")
    col = collect(tmp_path)
    assert col.threads.empty
    assert col.excluded["reason"].tolist() == [
        "corrupt: x#0 record: thread_cpu_ns holds 1 values for 2 threads"
    ]
    assert run.name in summarize([run])  # the summary still names the run


def test_the_report_names_the_programs_timed_by_their_whole_process(tmp_path: Path) -> None:
    write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=[SynthApp("x", 1, 10**7)])
    col = collect(tmp_path)
    assert col.apps["timed_by"].tolist() == ["process"]
    assert any(
        n.startswith("Timed by the whole process") and n.endswith(": x.") for n in col.notices
    )


def test_a_run_that_does_not_count_is_made_again(tmp_path: Path) -> None:
    """references.is_done() (what profiles and --references skip by) asks
    whether a run counts, not only whether it ended ok, and whether the
    same inputs made it."""
    apps = [SynthApp("x", 1, 10**7)]
    run = write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=apps, key="k", **GEM5)
    assert RunDir(run).is_ok() and not RunDir(run).counts()
    assert not references.is_done(run, "k")
    # statistics that hold no dump are no statistics
    (run / M5OUT).mkdir()
    (run / M5OUT / "stats.txt").write_text("")
    with pytest.raises(Excluded, match="without its statistics"):
        RunDir(run).judge()
    qemu = write_run(tmp_path, platform="2B2L", policy="cfs", mix="q", apps=apps, key="k")
    assert RunDir(qemu).counts() and references.is_done(qemu, "k")
    # a run that counts but that other inputs made (another core model,
    # kernel or initramfs: another key) is made again, as is one without
    # a key
    assert not references.is_done(qemu, "other")
    keyless = write_run(tmp_path, platform="2B2L", policy="cfs", mix="n", apps=apps)
    assert RunDir(keyless).counts() and not references.is_done(keyless, "k")


def test_a_finished_run_keeps_its_key_under_a_longer_wall_clock_limit(tmp_path: Path) -> None:
    """The limit is hashed into the key but decides only whether a run is
    cut short: a run that ended ok within limit L1 is the run a plan with
    limit L2 asks for while its wall time fits L2; one that was cut short
    under L1 is made again under L2."""
    inputs = {"kernel_digest": "d", "inputs": {"cmdline": "c"}}
    at_1000 = RunKey.of({**inputs, "engine": {"name": "gem5", "wall_clock_limit_s": 1000}})
    at_2000 = RunKey.of({**inputs, "engine": {"name": "gem5", "wall_clock_limit_s": 2000}})
    other = RunKey.of({**inputs, "engine": {"name": "qemu", "wall_clock_limit_s": 2000}})
    assert at_1000.digest != at_2000.digest and at_1000.under(2000) == at_2000.digest
    assert at_2000.under(1000) == at_1000.digest and at_2000.limit_s == 2000
    # the number as hashed: 1000 and 1000.0 are two keys, as they always were
    assert at_2000.under(1000.0) != at_1000.digest
    apps = [SynthApp("x", 1, 10**7)]

    def made(mix: str, status: str, wall_s: float) -> RunDir:
        return RunDir(
            write_run(tmp_path, platform="2B2L", policy="cfs", mix=mix, apps=apps,
                      key=at_1000.digest, status=status, wall_s=wall_s, wall_limit_s=1000)
        )  # fmt: skip

    ok = made("ok", "ok", 700.0)
    assert ok.recorded_limit() == (1000, 700.0)
    assert ok.made_from(at_1000) and ok.made_from(at_2000) and ok.done(at_2000)
    assert references.is_done(ok.path, at_2000)
    # a bare key matches only itself; other inputs, or a limit it did not fit, do not
    assert ok.made_from(at_1000.digest) and not ok.made_from(at_2000.digest)
    assert not ok.made_from(other)
    at_600 = RunKey.of({**inputs, "engine": {"name": "gem5", "wall_clock_limit_s": 600}})
    assert not ok.made_from(at_600)
    cut = made("cut", "failed: timeout: the guest did not power off within 1000 s", 1000.0)
    assert cut.made_from(at_1000) and not cut.made_from(at_2000)


def test_a_finished_run_keeps_its_key_when_a_new_kernel_digest_builds_the_same_files(
    tmp_path: Path,
) -> None:
    """A new revision of the kernel's source package that changes no byte
    of the kernel changes the digest of its inputs, not the run: a run
    whose recorded kernel files are the planned build's is the planned run
    if the planned inputs with its kernel digest give its key. Other files,
    or a plan that knows no build, make it again."""
    files = (("image_sha256", "i1"), ("vmlinux_sha256", "v1"))
    engine = {"name": "gem5", "wall_clock_limit_s": 1000}
    inputs = {"inputs": {"cmdline": "c"}, "engine": engine}
    old = RunKey.of({**inputs, "kernel_digest": "old"}, files)
    new = RunKey.of({**inputs, "kernel_digest": "new"}, files)
    assert new.variant(kernel_digest="old") == old.digest != new.digest
    apps = [SynthApp("x", 1, 10**7)]

    def made(mix: str, kernel: dict[str, str], wall_s: float = 700.0) -> RunDir:
        return RunDir(
            write_run(tmp_path, platform="2B2L", policy="cfs", mix=mix, apps=apps,
                      key=old.digest, wall_s=wall_s, wall_limit_s=1000,
                      kernel={"digest": "old", **kernel})
        )  # fmt: skip

    same = made("same", dict(files))
    assert same.same_kernel_as(new) == "old"
    assert same.made_from(new) and same.done(new)
    # another file, one not recorded, or a plan without a build's files
    assert not made("image", {**dict(files), "image_sha256": "i2"}).made_from(new)
    assert not made("missing", {"image_sha256": "i1"}).made_from(new)
    bare = RunKey.of({**inputs, "kernel_digest": "new"})
    assert not same.made_from(bare) and same.same_kernel_as(bare) is None
    # other inputs than the kernel's still make another run
    other = RunKey.of({"inputs": {"cmdline": "d"}, "engine": engine, "kernel_digest": "new"}, files)
    assert not same.made_from(other)
    # both at once: a longer limit and the new digest
    longer = RunKey.of(
        {**inputs, "engine": {**engine, "wall_clock_limit_s": 2000}, "kernel_digest": "new"}, files
    )
    assert same.made_from(longer)
    assert not made("long", dict(files), wall_s=2500.0).made_from(longer)


@pytest.mark.parametrize(
    "engine",
    [
        {"name": "gem5", "statistics": "false"},
        {"name": "gem5", "stats_dumps": 5},
        {"name": "gem5", "stats_dumps": "abc"},
        {"name": "qemu", "timing_notice": 3},
    ],
)
def test_a_manifest_of_the_wrong_types_is_corrupt_not_a_crash(
    tmp_path: Path, engine: dict[str, Any]
) -> None:
    run = write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=[SynthApp("x", 1, 9)])
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["engine"] = engine
    (run / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(Excluded, match=r"engine .* is not what a run writes"):
        RunDir(run).info()
    assert collect(tmp_path).excluded["reason"].str.startswith("corrupt: manifest.json").all()


def test_an_engine_output_cannot_replace_the_manifests_own_fields() -> None:
    manifest = Manifest(
        run_id="r",
        engine=EngineEntry(name="gem5"),
        platform={"name": "2B2L"},
        policy="cfs",
        mix={"name": "m", "apps": []},
        repetition=0,
        engine_outputs={"status": "ok"},
    )
    with pytest.raises(ValueError, match="would replace the manifest's \\['status'\\]"):
        manifest.to_json()


def test_a_runs_policy_work_is_its_counters_growth_over_the_run(tmp_path: Path) -> None:
    run = write_run(
        tmp_path, platform="2B2L", policy="colab", mix="m", apps=[SynthApp("a", 2, 10**7)]
    )
    before = {
        "sched_colab_work": "periods 1 cpu_ns 6040 swaps 0 moves 0 pulls 1",
        "sched_wash_stats": "quanta 0 cpu_ns 0 wall_ns 0 binds 0 unbinds 0 fork_copy 0 fences 0",
        "sched_colab_rank_period_ms": 10,
    }
    after = {
        "sched_colab_work": "periods 41 cpu_ns 96040 swaps 3 moves 7 pulls 120",
        "sched_wash_stats": "quanta 0 cpu_ns 0 wall_ns 0 binds 0 unbinds 0 fork_copy 1 fences 2",
    }
    guest = {"amp": {"policy": "colab", "knobs": before, "knobs_after": after}}
    (run / "guest.json").write_text(json.dumps(guest))
    work = RunDir(run).policy_work()
    assert work == {
        "colab_periods": 40,
        "colab_cpu_ns": 90000,
        "colab_swaps": 3,
        "colab_moves": 7,
        "colab_pulls": 119,
        **{f"wash_{c}": 0 for c in ("quanta", "cpu_ns", "wall_ns", "binds", "unbinds")},
    }  # WASH's fork_copy and fences are states, not counters: left out
    # counters that fell (the kernel reset them) are left out, not negative
    after["sched_colab_work"] = "periods 0 cpu_ns 0 swaps 0 moves 0 pulls 0"
    (run / "guest.json").write_text(json.dumps(guest))
    work = RunDir(run).policy_work()
    assert not any(k.startswith("colab_") for k in work) and work["wash_binds"] == 0
    # no second read (a runner before it), or no first: nothing
    del guest["amp"]["knobs_after"]
    (run / "guest.json").write_text(json.dumps(guest))
    assert RunDir(run).policy_work() == {}
    (run / "guest.json").write_text(json.dumps({"amp": None}))
    assert RunDir(run).policy_work() == {}


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("periods 1 pulls 2", {"periods": 1, "pulls": 2}),
        ("periods 1 pulls", {}),
        ("periods x", {}),
        (7, {}),
        (None, {}),
        ("", {}),
    ],
)
def test_a_counters_sysctl_parses_to_names_and_whole_numbers(
    text: object, parsed: dict[str, int]
) -> None:
    assert parse_counters(text) == parsed


def test_a_stopped_record_counts_only_as_load_beside_an_until_line(tmp_path: Path) -> None:
    """ "stopped" is the runner's word for load it killed when the app an
    until line names completed (a profiling run): sound there, for the
    others; anywhere else, and for that app itself, a failed application.
    The collection leaves profiling runs out of every comparison."""
    from ampkit.analysis.collect import PROFILING_REASON, collect
    from ampkit.analysis.synthetic import SynthApp, write_run

    def run_with(until: str | None, stopped: int) -> Path:
        root = tmp_path / f"{until}-{stopped}"
        path = write_run(
            root,
            platform="2B2L",
            policy="cfs",
            mix="m",
            apps=[SynthApp("x", 1, 10**7), SynthApp("y", 1, 2 * 10**7)],
        )
        lines = (path / "results.jsonl").read_text().splitlines()
        record = json.loads(lines[stopped])
        record["status"] = "stopped"
        lines[stopped] = json.dumps(record)
        (path / "results.jsonl").write_text("\n".join(lines) + "\n")
        (path / "run.desc").write_text("ampkit-run 1\n" + (f"until {until}\n" if until else ""))
        return path

    assert [r.status for r in RunDir(run_with("0", 1)).judge().records] == ["ok", "stopped"]
    for until, stopped in ((None, 1), ("0", 0)):
        with pytest.raises(Excluded, match=r"failed application: .*stopped"):
            RunDir(run_with(until, stopped)).judge()
    col = collect(tmp_path / "0-1")
    assert col.runs["reason"].tolist() == [PROFILING_REASON] and col.apps.empty
