"""Every synthetic workload in the guest: it verifies itself and reports its threads."""

import json
from pathlib import Path

import pytest

from ampkit import references
from ampkit.analysis.collect import collect
from ampkit.kernel import KernelBuild
from ampkit.mix import SMALL_SIZES, App, known_programs
from ampkit.platform import get_platform
from ampkit.pmu import EVENT_SETS
from ampkit.profile import load_profile, measure
from ampkit.run import RunRequest, execute, prepare_for
from ampkit.rundir import RunDir

from .helpers import make_mix, run_mix


def test_every_workload_runs_in_the_guest(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    programs = [p for p in known_programs() if not p.startswith("ampkit-")]
    assert sorted(SMALL_SIZES) == programs, "give every workload a size in SMALL_SIZES"
    mix = make_mix(*(App(p, threads=3, size=SMALL_SIZES[p]) for p in programs))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, platform="2B2L")
    assert outcome.ok, outcome.status
    assert [r["app"] for r in outcome.report.apps] == programs
    for r in outcome.report.apps:
        assert r["status"] == "ok" and r["exit_status"] == 0, r
        assert len(r["thread_times_ns"]) == 3, r
        assert all(t > 0 for t in r["thread_times_ns"]), r
        # the program's own verification printed its result line
        assert r["output"].startswith(f"{r['app']}: "), r
        # the kit kernel's counters for each thread, read as it ended
        assert [t["thread"] for t in r["tasks"]] == [0, 1, 2], r
        assert all(t["class"] in {"big", "little", "either"} for t in r["tasks"]), r
        # its region of interest, inside its process, holding its threads'
        # run: what the metrics time it by
        begin, end = r["roi_ns"]
        assert r["start_ns"] <= begin < end <= r["end_ns"], r
        assert max(r["thread_times_ns"]) <= end - begin, r
    runs = collect(tmp_path).apps
    assert set(runs["timed_by"]) == {"region"}


#: How much longer than its thread a program's region may be: measured,
#: 0.7-1.4% (a thread's start and join); chase 5.4%, its thread allocating
#: and zeroing its ring's two arrays before its clock starts, a set-up
#: inside the region that the kit has left as it is (the evaluation's runs
#: are of this binary; chase is in none of its mixes)
REGION_GAP = 0.02
REGION_GAP_OF = {"chase": 0.06}
#: Times SMALL_SIZES that makes each program's region 10 ms or more of
#: guest instructions alone on one thread, against a thread's start and
#: join of 0.1-0.3 ms (measured)
REGION_SCALE = {
    "amdahl": 16, "barrier": 1, "chase": 40, "compute": 5, "contend": 12,
    "intmark": 4, "latency": 32, "pipeline": 4, "stages": 6, "stream": 6,
}  # fmt: skip


@pytest.mark.parametrize("program", sorted(SMALL_SIZES))
def test_a_programs_region_is_its_threads_work(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, program: str
) -> None:
    """A program's region of interest is its thread's run and little more
    (starting and joining it): a self-check or a set-up inside the region
    would show as the gap. One thread, on the instructions clock: guest
    time is instructions executed, so a busy host cannot stretch the gap,
    and QEMU's one TCG thread, which runs the vCPUs in turn, cannot
    serialise threads meant to overlap."""
    assert sorted(REGION_SCALE) == sorted(SMALL_SIZES), "give every workload a region scale"
    mix = make_mix(App(program, threads=1, size=REGION_SCALE[program] * SMALL_SIZES[program]))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, qemu_clock="instructions")
    assert outcome.ok, outcome.status
    (r,) = outcome.report.apps
    begin, end = r["roi_ns"]
    longest = max(r["thread_times_ns"])
    assert longest <= end - begin
    assert (end - begin - longest) / (end - begin) <= REGION_GAP_OF.get(program, REGION_GAP), r


def test_four_applications_under_the_restart_method(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(
        App("compute", threads=2, size=SMALL_SIZES["compute"]),
        App("chase", threads=2, size=SMALL_SIZES["chase"]),
        App("contend", threads=2, size=SMALL_SIZES["contend"]),
        App("ampkit-probe", threads=1, size=1, args=("sleep", "1.5")),
    )
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, method="restart")
    assert outcome.ok, outcome.status
    records = outcome.report.apps
    # exactly one counted completion per application: its first
    assert [r["app"] for r in records] == ["compute", "chase", "contend", "ampkit-probe"]
    assert len({r["start_ns"] for r in records}) == 1
    slowest = records[3]
    assert slowest["end_ns"] - slowest["start_ns"] >= 1_500_000_000
    assert slowest["restarts"] == 0
    for r in records[:3]:
        assert r["method"] == "restart" and r["status"] == "ok", r
        # the quick ones kept the machine loaded until the sleeper was done
        assert r["end_ns"] < slowest["end_ns"] and r["restarts"] >= 1, r
        assert r["restarts_completed"] >= r["restarts"] - 1, r
    manifest = json.loads((outcome.directory / "manifest.json").read_text())
    assert manifest["method"] == "restart"


@pytest.mark.parametrize("program", ["contend", "stages"])
def test_lock_workloads_show_futex_blocking_in_the_kernel_counters(
    program: str, tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # the futex accounting runs while a policy that uses it is in force. An
    # uncontended mutex never enters the kernel, and whether the threads
    # overlap is chance (once they did not, and nothing blocked), so -b: the
    # first holder of the lock keeps it until every other thread is asleep
    # in a futex wait, then 2 ms more (AMPKIT_CONVOY_HOLD_NS); the program
    # fails if it did not see them asleep
    mix = make_mix(App(program, threads=4, size=10 * SMALL_SIZES[program], args=("-b",)))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, policy="colab")
    assert outcome.ok, outcome.status
    app = outcome.report.apps[0]
    assert "3 slept on the first holder" in app["output"], app
    tasks = app["tasks"]
    # the premise: each of the three was blocked for the hold at least (half
    # of it here, to leave the sleep's clock and the futex clock some play)
    assert sum(t["futex_blocked_ns"] >= 1_000_000 for t in tasks) >= 3, tasks
    blocked = sum(t["futex_blocked_ns"] for t in tasks)
    caused = sum(t["futex_caused_ns"] for t in tasks)
    assert blocked > 0 and caused > 0, tasks
    # every released wait is charged to a thread of the program, once
    assert caused <= 1.02 * blocked, tasks
    assert sum(t["big_ns"] + t["little_ns"] for t in tasks) > 0, tasks


def test_the_balancers_hot_refusals_reach_the_results_while_schedstats_are_on(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """Each thread's count of the load balancer's refusals to move it as
    cache hot (the cause the kit's gem5 evaluation found a big CPU idling
    beside queues for) is in the record's tasks while the kernel's
    schedstats are on, and absent while they are off: the kernel prints
    it only then, and a zero must not stand in for 'not counted'."""
    mix = make_mix(App("compute", threads=6, size=SMALL_SIZES["compute"]))
    counted = {}
    for label, cmdline in (("on", "sysctl.kernel.sched_schedstats=1"), ("off", "")):
        outcome = run_mix(tmp_path / label, kernel_build, initramfs, mix, extra_cmdline=cmdline)
        assert outcome.ok, outcome.status
        tasks = outcome.report.apps[0]["tasks"]
        assert len(tasks) == 6, tasks
        counted[label] = ["failed_hot" in t for t in tasks]
        if label == "on":
            assert all(isinstance(t["failed_hot"], int) and t["failed_hot"] >= 0 for t in tasks)
    assert counted == {"on": [True] * 6, "off": [False] * 6}, counted


def test_reference_runs_of_a_mix(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(
        App("compute", threads=2, size=SMALL_SIZES["compute"]),
        App("chase", threads=2, size=SMALL_SIZES["chase"]),
        App("compute", threads=2, size=SMALL_SIZES["compute"]),  # the same one: one reference
    )
    request = RunRequest(platform=get_platform("2B2L"), policy="colab", mix=mix)
    refs = references.references(request)
    assert [(r.kind, r.request.platform.name) for r in refs] == [
        ("alone", "2B2L"),
        ("alone", "2B2L"),
        ("little-only", "0B2L"),
        ("little-only", "0B2L"),
        ("big-only", "2B0L"),
        ("big-only", "2B0L"),
    ]
    # Linux scales the largest capacity to 1024: a single-type machine is
    # symmetric to the scheduler (on gem5 the CPU models make it slow)
    mixed = [c.capacity for c in get_platform("2B2L").cpus]
    capacities = {"2B2L": mixed, "0B2L": [1024, 1024], "2B0L": [1024, 1024]}
    for ref in refs:
        assert ref.request.policy == "cfs" and len(ref.request.mix.apps) == 1
        outcome = execute(ref.request, tmp_path / ref.request.run_id, kernel_build, initramfs)
        assert outcome.ok, outcome.status
        guest = outcome.report.guest
        assert guest is not None
        got = [c["capacity"] for c in guest["cpus"]]
        assert got == capacities[ref.request.platform.name], guest
        if ref.kind != "alone":
            assert {c["cluster_id"] for c in guest["cpus"]} == {0}, guest
    # the analysis finds them: slowdowns and ASP need exactly these
    third = refs[2].request
    key = prepare_for(third, kernel_build, initramfs).key
    assert references.is_done(tmp_path / third.run_id, key)


def test_a_speedup_profile_is_measured_from_real_runs(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    app = App("compute", threads=1, size=SMALL_SIZES["compute"], speedup=2.0)
    prof = measure([app], 1, 1, tmp_path / "runs", build=kernel_build, image=initramfs)
    (entry,) = prof.entries
    assert entry.app == App("compute", threads=1, size=SMALL_SIZES["compute"])  # no hint
    alone = f"cfs-alone-compute-t1-n{SMALL_SIZES['compute']}-r0"
    assert (entry.big_runs, entry.little_runs) == ((f"1B0L-{alone}",), (f"0B1L-{alone}",))
    assert entry.big_ns[0] > 0 and entry.little_ns[0] > 0
    # QEMU runs both core types at one speed: right in shape, not in number
    assert 0.2 < entry.speedup < 5
    # the runs counted the PMU events ampkit.pmu names, one set a run (the
    # second set's run beside the timed one): QEMU's PMU counts cycles, and
    # lists neither loads nor (without a fixed icount shift) instructions
    counted = dict(entry.big_pmu)
    assert counted.get("CPU_CYCLES", 0) > 0, counted
    pmu = RunDir(tmp_path / "runs" / entry.big_runs[0]).judge().only_record().pmu
    assert set(pmu) == set(EVENT_SETS[0])
    assert pmu["CPU_CYCLES"].listed and pmu["CPU_CYCLES"].running_ns > 0, pmu
    assert not pmu["LD_RETIRED"].listed, pmu
    second = RunDir(tmp_path / "runs" / f"{entry.big_runs[0][:-3]}-pmu1-r0").judge().only_record()
    assert set(second.pmu) == set(EVENT_SETS[1])
    assert entry.big_epi_nj is None and entry.little_epi_nj is None  # no power model on QEMU
    path = tmp_path / "speedups.toml"
    path.write_text(prof.render())
    assert load_profile(path).entries == prof.entries
    # sound runs already there are reused, not run again
    again = measure([app], 1, 1, tmp_path / "runs", build=kernel_build, image=initramfs)
    assert again.entries == prof.entries
    # at a campaign's setup: the command line reaches the guest, and the
    # runs are other runs than the unscaled ones
    scaled = measure(
        [app],
        1,
        1,
        tmp_path / "scaled",
        build=kernel_build,
        image=initramfs,
        cmdline="sched_timescale=4",
        pmu_sets=(),
    )
    (run,) = scaled.entries[0].big_runs
    guest = json.loads((tmp_path / "scaled" / run / "guest.json").read_text())
    assert "sched_timescale=4" in guest["cmdline"] and guest["amp"]["knobs"]["sched_timescale"] == 4
