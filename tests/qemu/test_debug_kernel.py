"""The debug variant (lockdep, atomic-sleep checks, KASAN) boots and runs a mix cleanly."""

from pathlib import Path
from typing import Any

from ampkit import kernel
from ampkit.mix import load_mix

from .helpers import HOST, STRESS_LIMIT_S, run_mix, run_schedtest

# debug_build: tests/qemu/conftest.py


def test_debug_variant_is_what_it_claims(debug_build: kernel.KernelBuild) -> None:
    config = kernel.parse_config((debug_build.directory / "config").read_text())
    for symbol in ("CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_ATOMIC_SLEEP", "CONFIG_KASAN"):
        assert config.get(symbol) == "y", symbol
    assert debug_build.manifest["build"]["warnings"] == []


def test_mix_on_the_debug_kernel_raises_no_complaint(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    outcome = run_mix(
        tmp_path / "run",
        debug_build,
        initramfs,
        load_mix("demo"),
        platform="2B4L",
        kernel_variant="debug",
    )
    assert outcome.ok, outcome.status
    console = (tmp_path / "run" / "console.log").read_text()
    assert "KernelAddressSanitizer initialized" in console
    assert "Lock dependency validator" in console
    assert outcome.report.kernel_problems == []


def test_policy_flips_under_load_on_the_debug_kernel(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    result = run_schedtest(
        tmp_path / "run",
        debug_build,
        initramfs,
        "stress",
        "60",
        "200",
        policy="cfs",
        kernel_variant="debug",
        mix_limit_s=STRESS_LIMIT_S,  # up to five times its 60 s (test_colab.py)
        wall_limit_s=STRESS_LIMIT_S + 180,
    )
    # KASAN and lockdep slow every path down: 60 s and on until 200 switches
    # (up to 300 s), the premise made
    assert result["flips"] >= 200, result
    assert min(result["forks"], result["messages"], result["handoffs"]) > 0, result
    # back under cfs, no policy left a user thread with fewer allowed CPUs
    assert result["nr_restricted"] == 0, result


def test_colab_decisions_on_the_debug_kernel(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    """Every COLAB path (allocator, balancer veto, bias, futex charging, a
    big CPU's pull as it goes idle) under lockdep and KASAN."""
    scenarios = (("mutex-bottleneck", "3"), ("placement", "3"), ("bias", "3", "1"), ("strand", "3"))
    for scenario in scenarios:
        result = run_schedtest(
            tmp_path / scenario[0],
            debug_build,
            initramfs,
            *scenario,
            kernel_variant="debug",
            wall_limit_s=300,
        )
        if scenario[0] == "strand":
            # the pull's path ran, not just its premise
            assert result["pulls"] > 0, result


#: The guest clock of the cpuset and hotplug tests. On this kernel under
#: the instructions clock (one host thread runs the vCPUs in turn), a CPU
#: stalled the guest looping in softirq handling: a little CPU from idle
#: once both big CPUs were taken offline (1 of 6 runs with WASH's binding,
#: 3 of 3 with the threads binding themselves under cfs, and the same on
#: the unpatched kernel with these debug options), and once (CI,
#: 2026-11-29) a big CPU interrupted in user mode, a quarter of a second
#: into the cpuset scenario, after WASH's first binds: RCU's self-detected
#: stall at 30 s of guest time, the same registers at 108 s. Whether the
#: second is the series' is not known. Under the host clock (parallel
#: vCPUs) the hotplug stall was not seen: README, "The debug kernel under
#: the instructions clock". What the tests check (a binding ended, none
#: taken again) is the same on any clock.
OWNED_CLOCK = HOST


def run_owned(
    tmp_path: Path,
    debug_build: kernel.KernelBuild,
    initramfs: Path,
    scenario: str,
    *,
    clock: str = OWNED_CLOCK,
) -> Any:
    # As tests/qemu/test_wash.py runs WASH: 2B4L, two CPU-bound threads
    # that WASH binds to the two big CPUs.
    return run_schedtest(
        tmp_path / "run",
        debug_build,
        initramfs,
        scenario,
        # a bound on each wait (for the binding, for the first rounds after
        # the move): on this kernel under QEMU a move took seconds
        "10",
        policy="wash",
        platform="2B4L",
        kernel_variant="debug",
        qemu_clock=clock,
        wall_limit_s=500,
    )


def test_a_cpuset_takes_bound_threads_away_from_wash(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    """Bound by WASH, two threads are moved into a cpuset of the four
    little CPUs: the move ends their bindings, and WASH neither binds them
    again (it binds only threads of the root cpuset) nor widens their
    masks, also not when it stops."""
    config = kernel.parse_config((debug_build.directory / "config").read_text())
    assert config.get("CONFIG_CPUSETS") == "y"
    result = run_owned(tmp_path, debug_build, initramfs, "wash-cpuset")
    assert result["bound_before"] == 1, result  # the premise: WASH bound both
    assert result["move_errno"] == 0, result
    assert result["ran_after"] == 1, result
    for thread in result["threads"]:
        assert thread["at_release"]["wash_bound"] == 0, thread
        assert thread["cpus"] == result["cpuset_cpus"] == 4, thread
        assert thread["widened_rounds"] == 0, thread
        assert thread["kernel"]["wash_bound"] == 0, thread


def test_a_hotplug_fallback_ends_a_wash_binding(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    """Bound by WASH to the two big CPUs, two threads lose both to CPU
    hotplug: the fallback gives them every CPU and ends their bindings,
    and while the big CPUs are gone no quantum narrows them again."""
    config = kernel.parse_config((debug_build.directory / "config").read_text())
    assert config.get("CONFIG_HOTPLUG_CPU") == "y"
    result = run_owned(tmp_path, debug_build, initramfs, "wash-hotplug")
    assert result["bound_before"] == 1, result
    assert result["offline_errno"] == 0, result
    assert result["ran_after"] == 1, result
    assert result["big_cpus"] == 2, result
    for thread in result["threads"]:
        assert thread["at_release"]["wash_bound"] == 0, thread
        # every CPU, as sched_getaffinity() shows it: the four still active
        assert thread["cpus"] == 4, thread
        assert thread["widened_rounds"] == 0, thread
