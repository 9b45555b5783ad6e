"""The patched kernel on the asymmetric QEMU machine, checked from inside the guest."""

import json
from pathlib import Path

import pytest

from ampkit.kernel import KernelBuild
from ampkit.mix import App, load_mix
from ampkit.platform import get_platform

from .helpers import PROBE_LOOP_INSTRUCTIONS, app_json, make_mix, run_mix, run_probe


@pytest.mark.parametrize("name", ["2B2L", "2B4L", "1B3L", "4B4L", "0B2L"])
def test_guest_sees_big_little(
    name: str, tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    plat = get_platform(name)
    outcome = run_probe(tmp_path / "run", kernel_build, initramfs, "sysinfo", platform=name)
    assert outcome.ok, outcome.status
    guest = json.loads((outcome.directory / "guest.json").read_text())
    # the runner's record (before the mix) and the probe (inside it) agree
    assert app_json(outcome, 0)["cpus"] == guest["cpus"]
    cpus = guest["cpus"]
    # Linux scales the largest capacity to 1024: a little-only machine's too
    little = get_platform("2B2L").cpus[-1].capacity if plat.big else 1024
    assert [c["capacity"] for c in cpus] == [1024] * plat.big + [little] * plat.little
    assert [c["cluster_id"] for c in cpus] == [cpu.cluster for cpu in plat.cpus]
    assert all(c["online"] == 1 for c in cpus)
    # one domain per cluster sharing its L2, one above with both core types,
    # with the spans and flags the platform implies (the gem5 tier checks
    # the same structure on gem5)
    assert plat.domain_differences(guest["sched_domains"]) == []
    assert "Unable to detect cache hierarchy" not in (outcome.directory / "console.log").read_text()
    # the per-task counters are kept under cfs too, as under every policy
    amp = dict(guest["amp"])
    knobs = amp.pop("knobs")
    # and read again once the mix was over: the same sysctls
    assert set(amp.pop("knobs_after")) == set(knobs)
    assert amp == {
        "policy": "cfs",
        "available": ["cfs", "colab", "wash", "hsp", "eef", "rr", "acfs"],
        "stats": "1",
    }
    # the policies' knobs as the kernel holds them, which a report counts a
    # run's periods by: the defaults, unscaled, and only knobs of theirs
    assert knobs["sched_colab_rank_period_ms"] == 10, knobs
    assert knobs["sched_wash_quantum_ms"] == 40 and knobs["sched_timescale"] == 1, knobs
    assert (knobs["sched_eef_phase_pct"], knobs["sched_eef_sample_ms"]) == (10, 200), knobs
    assert (knobs["sched_acfs_edp_factor"], knobs["sched_acfs_unfairness_factor"]) == (100, 100)
    prefixes = ("sched_colab_", "sched_wash_", "sched_eef_", "sched_acfs_", "sched_timescale")
    assert all(k.startswith(prefixes) for k in knobs)
    assert guest["clocksource"] == "arch_sys_counter"
    assert outcome.report.kernel_problems == []


def test_perf_counters_from_the_guest(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    outcome = run_probe(tmp_path / "run", kernel_build, initramfs, "perf")
    assert outcome.ok, outcome.status
    result = app_json(outcome, 0)
    counters = {c["event"]: c for c in result["counters"]}
    # the PMU of QEMU's cortex-a57 counts cycles; a loop of N additions takes at least N
    assert counters["cycles"]["errno"] == 0 and counters["cycles"]["count"] >= result["loop"]
    # QEMU 7.2 implements the instructions event only with a fixed icount
    # shift: Linux then finds it missing from PMCEID (ENOENT). gem5 counts both.
    # Where counted, the loop's instructions (PROBE_LOOP_INSTRUCTIONS)
    instructions = counters["instructions"]
    low, high = (n * result["loop"] for n in PROBE_LOOP_INSTRUCTIONS)
    assert instructions["errno"] == 2 or low <= instructions["count"] <= high, instructions


def test_policy_knob_reads_back_and_rejects_junk(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    junk = ["cfs-and-then-something-longer", "CFS", "col", "colab-", "washing"]
    outcome = run_probe(tmp_path / "run", kernel_build, initramfs, "set-policy", "colab", *junk)
    assert outcome.ok, outcome.status
    steps = app_json(outcome, 0)["steps"]
    # anything but a whole policy name is EINVAL and leaves the policy in force
    assert [(s["errno"], s["in_force"]) for s in steps] == [(0, "colab")] + [(22, "colab")] * 5
    outcome = run_probe(tmp_path / "run2", kernel_build, initramfs, "set-policy", "cfs", "x", "cfs")
    assert outcome.ok, outcome.status
    steps = app_json(outcome, 0)["steps"]
    assert [(s["errno"], s["in_force"]) for s in steps] == [(0, "cfs"), (22, "cfs"), (0, "cfs")]


def test_the_ranked_policies_knobs_refuse_what_is_out_of_range(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    steps = [
        # EEF-Driven's threshold and sampling interval: 1-24 %, 1-60000 ms
        "sched_eef_phase_pct=25",
        "sched_eef_phase_pct=0",
        "sched_eef_sample_ms=0",
        "sched_eef_sample_ms=60001",
        "sched_eef_sample_ms=50",
        # ACFS's factors: hundredths, 1.0 to 10.0, one above 1.0 at a time
        "sched_acfs_edp_factor=99",
        "sched_acfs_edp_factor=1001",
        "sched_acfs_edp_factor=300",
        "sched_acfs_unfairness_factor=200",
        "sched_acfs_edp_factor=100",
        "sched_acfs_unfairness_factor=200",
        "sched_acfs_edp_factor=150",
    ]
    outcome = run_probe(tmp_path / "run", kernel_build, initramfs, "set-knob", *steps)
    assert outcome.ok, outcome.status
    got = [(s["errno"], s["in_force"]) for s in app_json(outcome, 0)["steps"]]
    # EINVAL leaves the value in force; the last is refused for the other
    assert got == [
        (22, "10"),
        (22, "10"),
        (22, "200"),
        (22, "200"),
        (0, "50"),
        (22, "100"),
        (22, "100"),
        (0, "300"),
        (22, "100"),
        (0, "100"),
        (0, "200"),
        (22, "100"),
    ], got


def test_the_guest_records_the_scale_beside_the_unscaled_periods(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    outcome = run_probe(
        tmp_path / "run", kernel_build, initramfs, "sysinfo", extra_cmdline="sched_timescale=4"
    )
    assert outcome.ok, outcome.status
    knobs = json.loads((outcome.directory / "guest.json").read_text())["amp"]["knobs"]
    # the kernel divides its periods by the scale; the knobs keep what was set
    assert knobs["sched_timescale"] == 4, knobs
    assert (knobs["sched_colab_rank_period_ms"], knobs["sched_wash_quantum_ms"]) == (10, 40)


def test_knobs_set_on_the_command_line_are_held_and_a_refused_one_fails_the_run(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # the kernel's own sysctl.* parameters, as a campaign's append sets COLAB's classes
    held = run_probe(
        tmp_path / "held",
        kernel_build,
        initramfs,
        "sysinfo",
        extra_cmdline="sysctl.kernel.sched_colab_big_speedup=2891 "
        "sysctl/kernel/sched_colab_little_speedup=2531",
    )
    assert held.ok, held.status
    knobs = json.loads((held.directory / "guest.json").read_text())["amp"]["knobs"]
    assert (knobs["sched_colab_big_speedup"], knobs["sched_colab_little_speedup"]) == (2891, 2531)
    # a value out of the knob's range: the kernel logs it and boots on its
    # default; the run is then not the one described, and fails
    refused = run_probe(
        tmp_path / "refused",
        kernel_build,
        initramfs,
        "sysinfo",
        extra_cmdline="sysctl.kernel.sched_colab_rank_period_ms=0",
    )
    assert not refused.ok
    assert (
        "the kernel holds sched_colab_rank_period_ms=10 where its command line sets 0"
        in refused.status
    ), refused.status


def test_unknown_boot_policy_is_reported_and_ignored(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    outcome = run_probe(
        tmp_path / "run",
        kernel_build,
        initramfs,
        "sysinfo",
        extra_cmdline="amp_policy=bogus",
    )
    assert outcome.ok, outcome.status
    console = (outcome.directory / "console.log").read_text()
    assert "sched_amp: unknown amp_policy=bogus, keeping cfs" in console
    assert app_json(outcome, 0)["amp"]["policy"] == "cfs"


def test_mix_completes_with_well_formed_results(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = load_mix("demo")
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix)
    assert outcome.ok, outcome.status
    assert (outcome.directory / "status").read_text() == "ok\n"
    records = [
        json.loads(x) for x in (outcome.directory / "results.jsonl").read_text().split("\n") if x
    ]
    assert [(r["app"], r["threads"]) for r in records] == [(a.program, a.threads) for a in mix.apps]
    assert len({r["start_ns"] for r in records}) == 1  # started at the same moment
    for r in records:
        assert r["status"] == "ok" and r["exit_status"] == 0
        assert r["end_ns"] > r["start_ns"]
        assert len(r["thread_times_ns"]) == r["threads"]
        assert all(t > 0 for t in r["thread_times_ns"])
    manifest = json.loads((outcome.directory / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["kernel_problems"] == []
    assert (
        manifest["kernel"]["image_sha256"] == kernel_build.manifest["artifacts"]["Image"]["sha256"]
    )
    for key in ("dtb_sha256", "initramfs_sha256", "run_desc_sha256"):
        assert len(manifest["inputs"][key]) == 64
    console = (outcome.directory / "console.log").read_text()
    for word in ("WARNING", "BUG", "Oops"):
        assert word not in console


def test_many_threads_on_few_cpus(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(
        App("pipeline", threads=6, size=100),
        App("contend", threads=8, size=63),
        App("compute", threads=3, size=5000),
    )
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, platform="1B3L")
    assert outcome.ok, outcome.status
    assert [len(a["thread_times_ns"]) for a in outcome.report.apps] == [6, 8, 3]
