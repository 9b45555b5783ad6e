"""The WASH baseline on the asymmetric QEMU machine, judged from inside the guest.

Each test runs a wash-* scenario of ampkit-schedtest (workloads/runner) on
2B4L under the policy wash. The threads note when their allowed CPUs were
first narrowed; the kernel's per-task lines (colab.big_ns / little_ns,
wash.bound) say where they ran and what WASH holds. As for COLAB, QEMU
does not model big and little speeds: these are checks of decisions.
"""

import json
from pathlib import Path
from typing import Any

from ampkit.kernel import KernelBuild

from .helpers import (
    EXECUTED,
    app_json,
    make_mix,
    run_mix,
    run_schedtest,
    schedtest,
    threads_by_role,
)

QUANTUM_MS = 40

#: Run time charged to a wash-lock light thread, by the time WASH bound
#: it, that explains the binding: see the test.
LIGHT_CHARGE_EXPLAINS_NS = 10_000_000


def big_share_since_binding(thread: dict[str, Any]) -> float:
    end, start = thread["kernel"], thread["at_bind"]
    big = end["big_ns"] - start["big_ns"]
    little = end["little_ns"] - start["little_ns"]
    return float(big) / max(1.0, float(big + little))


def run_wash(tmp_path: Path, kernel: KernelBuild, initramfs: Path, scenario: str) -> Any:
    # WASH judges threads by their run time over its last quanta. Under
    # QEMU's icount the vCPUs take turns, and a thread is charged the guest
    # time that passes while other vCPUs have their turn; on the adaptive
    # clock (TIMED) a busy host stretches those turns in guest time. A CI
    # run on a loaded host saw a light thread, which spins 50 us a round,
    # charged 24 ms of run time in its first rounds, as much work as the
    # lock holder had done by then, and ExecRank rightly bound it with the
    # threads that did most of the work (reproduced with two host CPU hogs
    # and the threads' wash.work read at the binding). At 1 ns per
    # instruction (EXECUTED) the guest's time depends only on what the
    # guest executes, so the host's load no longer stretches it; the
    # vCPUs still take turns, and what that charges is bounded in the
    # lock test.
    return run_schedtest(
        tmp_path / "run",
        kernel,
        initramfs,
        scenario,
        "4",
        policy="wash",
        platform="2B4L",
        qemu_clock=EXECUTED,
    )


def test_as_many_threads_as_big_cpus_run_there(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    outcome = run_mix(
        tmp_path / "run",
        kernel_build,
        initramfs,
        make_mix(schedtest("wash-few", "4")),
        policy="wash",
        platform="2B4L",
    )
    assert outcome.ok, outcome.status
    assert outcome.report.kernel_problems == [], outcome.report.kernel_problems
    for t in app_json(outcome, 0)["threads"]:
        k = t["kernel"]
        share = k["big_ns"] / max(1, k["big_ns"] + k["little_ns"])
        assert share >= 0.9, (share, t)
        # bound while it worked (its mask at exit is not asserted: as the
        # threads exit, WASH may rightly judge the application anew)
        assert "bound_at_ms" in t, t
    # the run says what WASH's ExecRank measured work with
    manifest = json.loads((outcome.directory / "manifest.json").read_text())
    assert manifest["policy"] == "wash"
    assert "run time" in manifest["policy_details"]["work_source"]


def test_a_scalable_application_is_not_confined(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    result = run_wash(tmp_path, kernel_build, initramfs, "wash-scalable")
    little = sum(t["kernel"]["little_ns"] for t in result["threads"])
    run = sum(t["kernel"]["big_ns"] + t["kernel"]["little_ns"] for t in result["threads"])
    # six threads on six CPUs, four of them little: most run time is there
    assert little >= 0.4 * run, (little, run, result)
    for t in result["threads"]:
        # Not confined: unrestricted nearly all the time, and free at the
        # end. The threads start together behind a gate, so WASH never sees
        # an application of one or two threads; a moment bound is allowed
        # while its quanta catch up with the six that start at once.
        assert t["restricted_rounds"] <= 0.05 * t["rounds"], t
        assert t["kernel"]["wash_bound"] == 0, t


def test_the_lock_holder_is_bound_and_the_light_threads_are_not(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    result = run_wash(tmp_path, kernel_build, initramfs, "wash-lock")
    roles = threads_by_role(result)
    holder = roles["holder"][0]
    print("holder bound at", holder.get("bound_at_ms"), "ms")
    # within a few quanta of the start (QEMU's pace makes a quantum longer)
    assert "bound_at_ms" in holder, result
    assert holder["bound_at_ms"] <= 10 * QUANTUM_MS, holder
    assert big_share_since_binding(holder) >= 0.8, holder
    # Each light thread checks its allowed CPUs every round (40 ms, a
    # quantum) until the deadline; not after it: once the others have
    # exited, two threads are no more than the big CPUs and lines 7-8 of
    # Algorithm 1 rightly bind them (a CI run caught a last round's check
    # that came after the others had gone).
    #
    # QEMU charges a thread for time it did not run: one host thread runs
    # the vCPUs in turn, and a light thread caught on its CPU when that
    # vCPU's turn ends is charged the others' turns, tens of ms at once
    # (stalled_ms is what its spins saw of it). Charged as a worker, it is
    # ranked as one until the charge decays: one CI run in several, on a
    # busy host, saw a light thread bound for a round or two, with 24 to
    # 67 ms charged by then against the 0.1 ms it had spun. So a light
    # thread may be bound only once charged 10 ms (a quarter quantum, a
    # hundred times its work by then), and only for a tenth of its rounds:
    # ranked by work, a binding is not kept.
    assert len(roles["light"]) == 2
    for t in roles["light"]:
        assert t["rounds"] > 50, t
        if "bound_at_ms" in t:
            charged = t["at_bind"]["big_ns"] + t["at_bind"]["little_ns"]
            assert charged >= LIGHT_CHARGE_EXPLAINS_NS, t
            assert t["restricted_rounds"] <= 0.1 * t["rounds"], t


def test_a_thread_that_sets_its_own_cpus_leaves_wash_for_good(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """Two CPU-bound threads on 2B4L are bound to the big CPUs (Algorithm 1,
    lines 7-8). Once bound, the first sets its allowed CPUs itself, to the
    very CPUs WASH chose, and creates a third thread. That choice is the
    application's: WASH's binding ends with it (wash.bound 0, own_affinity
    1), WASH never widens the mask afterwards (with three threads it would
    release the ones it bound), and the new thread inherits the chosen mask
    rather than all CPUs."""
    result = run_wash(tmp_path, kernel_build, initramfs, "wash-own")
    roles = threads_by_role(result)
    chooser, child = roles["chooser"][0], roles["child"][0]
    assert "bound_at_ms" in chooser, chooser  # the premise: WASH bound it
    assert chooser["cpus"] == 2, chooser
    assert chooser["widened_rounds"] == 0, chooser
    assert chooser["kernel"]["wash_bound"] == 0, chooser
    assert chooser["kernel"]["wash_own_affinity"] == 1, chooser
    assert child["cpus"] == 2, child


def test_the_fork_copy_outlasts_wash_until_its_threads_return_to_user_space(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """A fork may hold a copy of a mask WASH narrowed for as long as it
    sleeps, so forks copy their allowed CPUs again after WASH stops until
    every thread it bound has run a task_work queued at the stop (its
    fence). A thread bound, then blocked in read() across the switch to
    cfs, keeps the copy on; woken, it lets it go, and forks take no lock
    for WASH again."""
    result = run_wash(tmp_path, kernel_build, initramfs, "wash-fence")
    assert result["bound_at_ms"] > 0, result  # the premise: WASH bound it
    assert result["widened"] == 1, result  # stopping widened it at once
    blocked = result["blocked"]
    assert blocked["binds"] >= 1 and blocked["fork_copy"] == 1, result
    # the blocked thread's fence; the main thread (bound too, as WASH binds
    # every active thread of an application with no more than the big CPUs)
    # passed its own on its way back from the switch
    assert blocked["fences"] == 1, result
    assert result["woken"] == {"fork_copy": 0, "fences": 0}, result
