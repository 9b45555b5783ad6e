"""The COLAB policy on the asymmetric QEMU machine, checked from the kernel's own counters.

Each test runs a scenario of ampkit-schedtest (workloads/runner) inside a
mix and judges what the kernel reports for every thread in
/proc/<pid>/task/<tid>/sched (colab.* lines) and schedstat. QEMU does not
model big and little speeds, so these tests check decisions (where threads
ran, who was charged, who was picked), never performance.
"""

from pathlib import Path
from typing import Any

import pytest

from ampkit.kernel import KernelBuild

from .helpers import EXECUTED, STRESS_LIMIT_S, TIMED, run_mix, run_schedtest, threads_by_role


def big_share(thread: dict[str, Any]) -> float:
    k = thread["kernel"]
    return float(k["big_ns"]) / max(1.0, float(k["big_ns"] + k["little_ns"]))


def blocked_total(result: dict[str, Any]) -> int:
    return sum(int(t["kernel"]["futex_blocked_ns"]) for t in result["threads"])


def test_speedup_hint_is_applied_inherited_and_validated(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    result = run_schedtest(
        tmp_path / "run", kernel_build, initramfs, "speedup", speedup=2.5, epi_big_nj=0.45
    )
    roles = threads_by_role(result)
    # the runner set 2.5 and 450 pJ before exec; the thread the program
    # creates inherits both
    for role in ("main", "child"):
        k = roles[role][0]["kernel"]
        assert (k["speedup"], k["class"], k["epi_big_pj"]) == (2560, "big", 450), role
        # not ranked under colab
        assert k["rank_key"] == 0, role
    assert result["get"] == 2560
    assert result["epi_get"] == 450
    einval, esrch = 22, 3
    assert result["errno"] == {
        "too_small": einval,
        "too_large": einval,
        "bad_op": einval,
        "arg5": einval,
        "no_such_thread": esrch,
        "lowest": 0,
        "highest": 0,
        "clear": 0,
    }
    assert result["after_clear"] == 0
    assert result["epi_errno"] == {
        "too_large": einval,
        "arg5": einval,
        "get_with_value": einval,
        "no_such_thread": esrch,
        "lowest": 0,
        "highest": 0,
        "clear": 0,
    }
    assert result["epi_after_clear"] == 0


@pytest.mark.parametrize(
    ("scenario", "bottleneck_role"),
    [("mutex-bottleneck", "long-holder"), ("condvar-pipeline", "slow-stage")],
)
def test_bottleneck_is_flagged_and_charged(
    scenario: str,
    bottleneck_role: str,
    tmp_path: Path,
    kernel_build: KernelBuild,
    initramfs: Path,
) -> None:
    result = run_schedtest(
        tmp_path / "run", kernel_build, initramfs, scenario, "4", qemu_clock=TIMED
    )
    roles = threads_by_role(result)
    neck = roles[bottleneck_role][0]["kernel"]
    others = [t["kernel"] for t in result["threads"] if t["role"] != bottleneck_role]
    blocked = blocked_total(result)
    assert blocked > 0, result
    share = neck["futex_caused_ns"] / blocked
    assert share >= 0.75, (share, result)
    assert neck["bottleneck"] == 1, result
    # it ran flagged (colab.flagged_ns, patch 0033), longer than any other.
    # Not that no other is flagged at the instant the counters are read: on
    # a busy host (host time drives this clock) a vCPU stalled while a short
    # holder holds the mutex makes it, for that moment, what the others wait
    # on, and COLAB rightly flags it (seen once, beside a gem5 campaign and
    # the rest of the QEMU tier); over the run the long holder leads
    assert neck["flagged_ns"] > max(int(k["flagged_ns"]) for k in others), result
    # every wait here ends in a release, so every stretch of it is charged
    # to someone, once; wakeup latency counts as neither, however busy the
    # host is. Not to the percent: the counters are read at the deadline,
    # when waits are in progress, and a wait in progress has been charged up
    # to its last release but is added to its waiter's blocked time only
    # when it ends. The unfair mutex lets the long holder take it back
    # before a woken waiter runs, so a waiter may be tens of ms into its
    # wait: a CI run saw 3% more charged than blocked (three short holders
    # mid-wait). Charging a stretch twice, or never, is far outside these.
    charged = sum(int(t["kernel"]["futex_caused_ns"]) for t in result["threads"])
    assert 0.95 * blocked <= charged <= 1.10 * blocked, (charged, blocked)


def test_a_dead_main_thread_does_not_hide_the_bottleneck(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """A thread's exit wakes the threads joining it, which is no release of
    anything they waited on for it: it is charged nothing, or the 2 s a
    watcher spent joining the main thread would outweigh the long lock
    holder for the main thread's life as a zombie."""
    result = run_schedtest(
        tmp_path / "run", kernel_build, initramfs, "exit-join", "2", qemu_clock=TIMED
    )
    leader, before, after = result["leader"], result["before"], result["after"]
    # the watcher's wait, about 2 s, was charged to nobody (the kit's kernel
    # before exit wakes were skipped at the source charged the leader 2 s)
    assert leader["futex_caused_ns"] < 1e7, result
    assert leader["caused_recent_ns"] < 1e7, result
    # the long holder lived through both windows (1 s and 200 ms, every 10 ms)
    assert before["unreadable"] == after["unreadable"] == 0, result
    assert before["taken"] >= 20 and after["taken"] >= 5, result
    # counted, the dead leader's 2 s would outweigh the holder for the
    # whole of the window after, leaving it unflagged
    assert before["flagged"] >= 0.8 * before["taken"], result
    assert after["flagged"] >= 0.8 * after["taken"], result


def test_placement_by_class_on_2b2l(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    shares: dict[str, dict[str, list[float]]] = {}
    for policy in ("colab", "cfs"):
        result = run_schedtest(
            tmp_path / policy,
            kernel_build,
            initramfs,
            "placement",
            "4",
            policy=policy,
            qemu_clock=TIMED,
        )
        roles = threads_by_role(result)
        shares[policy] = {role: [big_share(t) for t in ts] for role, ts in roles.items()}
        for t in result["threads"]:
            want = "big" if t["role"] == "speedup-3.0" else "little"
            assert t["kernel"]["class"] == want
    print("share of run time on big CPUs, by policy:", shares)
    colab = shares["colab"]
    assert all(s >= 0.9 for s in colab["speedup-3.0"]), shares
    assert all(s <= 0.1 for s in colab["speedup-1.1"]), shares


def test_balancer_vetoes_hold_the_classes_and_are_not_affinity_failures(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """Two little-class threads, then four big-class ones on 2B2L: the big
    CPUs run two threads each, and the busy little CPUs would pull big-class
    threads to even the load, which COLAB vetoes. A veto is the policy's
    choice, not an affinity constraint: none of these unpinned threads may
    count an affinity failure (a veto counted as one also backs the
    balancing interval off)."""
    result = run_schedtest(
        tmp_path / "run", kernel_build, initramfs, "crowded", "4", qemu_clock=TIMED
    )
    roles = threads_by_role(result)
    assert len(roles["speedup-3.0"]) == 4 and len(roles["speedup-1.1"]) == 2, result
    big = [big_share(t) for t in roles["speedup-3.0"]]
    little = [big_share(t) for t in roles["speedup-1.1"]]
    print("share of run time on big CPUs:", big, little)
    assert all(s >= 0.85 for s in big), (big, little)
    assert all(s <= 0.15 for s in little), (big, little)
    # schedstats are on for this scenario, so the counter is there to read
    assert all(t["kernel"]["failed_affine"] == 0 for t in result["threads"]), result


def big_share_between(before: dict[str, Any], after: dict[str, Any]) -> float:
    big = float(after["big_ns"] - before["big_ns"])
    return big / max(1.0, big + float(after["little_ns"] - before["little_ns"]))


def test_either_class_threads_leave_big_cpus_to_queued_big_class_threads(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """On 2B2L, two little-class threads hold the little CPUs, and two
    either-class threads are held on the big CPUs for 300 ms, then let free;
    then two big-class threads arrive and, with every CPU busy, queue on big
    CPUs beside the either-class ones. COLAB's class balancer moves those to
    the little side within a period or two (10 ms each), and busy big CPUs
    may not pull them back: from the moment the big-class threads run, they
    have the big CPUs to themselves. Under cfs they share them. The share
    allows for the moves' own latency, which the guest's clock must not let
    a busy host stretch (EXECUTED: a CI run on a loaded host saw 0.15)."""
    shares: dict[str, dict[str, list[float]]] = {}
    either_under: dict[str, list[dict[str, Any]]] = {}
    for policy in ("colab", "cfs"):
        result = run_schedtest(
            tmp_path / policy,
            kernel_build,
            initramfs,
            "evict",
            "4",
            policy=policy,
            qemu_clock=EXECUTED,
        )
        roles = threads_by_role(result)
        either, big = roles["speedup-1.75"], roles["speedup-3.0"]
        either_under[policy] = either
        assert len(either) == 2 and len(big) == 2, result
        for t in either:
            assert t["kernel"]["class"] == "either", t
            # the premise: they held the big CPUs until the big class came
            # (pinned for 300 ms, then free for as long as a busy host takes
            # to run the main thread again, when the balancer may move them)
            if policy == "colab":
                assert big_share_between(t["at_pin"], t["at_release"]) >= 0.5, t
        shares[policy] = {
            "big class": [big_share(t) for t in big],
            "either class, beside the big class": [
                big_share_between(t["at_release"], t["kernel"]) for t in either
            ],
        }
    print("share of run time on big CPUs, by policy:", shares)
    colab = shares["colab"]
    assert all(s >= 0.85 for s in colab["big class"]), shares
    assert all(s <= 0.1 for s in colab["either class, beside the big class"]), shares
    # so each either-class thread went from the big side to the little one
    # at least once, and its count of moves between sides (patch 0033) says so
    moves = [int(t["kernel"]["cluster_moves"]) for t in either_under["colab"]]
    assert all(m >= 1 for m in moves), either_under


def test_shares_of_a_big_cpu_do_not_depend_on_the_speedup(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """Two CPU-bound threads share big CPU 0, with speedups 2.0 and 1.0.
    COLAB divides each one's slice there by its speedup, and virtual runtime
    counts time: both get the same CPU time, as under CFS (the kit's earlier
    vruntime scaling gave the 1.0 thread twice the 2.0 thread's time). The
    slice division does not show in the turns either: CFS picks again the
    thread whose vruntime is still the smaller, so turns stay as long (the
    ratio is printed, measured 0.99 under colab, 1.00 under cfs)."""
    turns, shares = {}, {}
    for policy in ("colab", "cfs"):
        result = run_schedtest(
            tmp_path / policy,
            kernel_build,
            initramfs,
            "vscale",
            "4",
            "0",
            policy=policy,
            qemu_clock=TIMED,
        )
        roles = threads_by_role(result)
        fast, slow = roles["speedup-2.0"][0], roles["speedup-1.0"][0]
        # CPU 0 is big; a thread runs briefly elsewhere before it pins
        # itself, and never on a little CPU after
        for t in (fast, slow):
            assert t["kernel"]["little_ns"] - t["at_pin"]["little_ns"] <= 1e6, t
            assert t["kernel"]["class"] == ("big" if t is fast else "little"), t

        def turn(t: dict[str, Any]) -> float:
            return float(t["kernel"]["run_ns"]) / max(1, int(t["kernel"]["slices"]))

        turns[policy] = turn(fast) / turn(slow)
        shares[policy] = slow["cpu_ns"] / fast["cpu_ns"]
    print("turn length of the 2.0 thread over the 1.0 thread:", turns)
    print("CPU time of the 1.0 thread over the 2.0 thread:", shares)
    for policy, share in shares.items():
        assert 0.85 <= share <= 1.15, (policy, shares)


def taken_of_free_big_time(result: dict[str, Any]) -> tuple[float, float]:
    """The strand scenario's window: the share of the big CPUs' time the
    blinkers left free, and the share of that the little-class threads
    ran there."""

    def big_ns(t: dict[str, Any]) -> int:
        return int(t["kernel"]["big_ns"] - t["at_release"]["big_ns"])

    roles = threads_by_role(result)
    window = int(result["window_ns"]) * int(result["nr_big"])
    free = window - sum(big_ns(t) for t in roles["blinker"])
    taken = sum(big_ns(t) for t in roles["little"])
    return free / window, taken / max(1, free)


def test_an_idle_big_cpu_takes_a_little_class_thread_that_waits(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """On 2B2L a big-class thread pinned to each big CPU runs 5 ms and
    sleeps 10 ms; four little-class threads share the two little CPUs, so
    two wait there, one for each big CPU a blinker leaves. Every task
    counts as cache hot, so the fair class's newly idle balance refuses
    them all (their schedstats count the refusals). COLAB's pull (patch
    0047) has a big CPU going idle take a waiting thread; with
    kernel.sched_colab_idle_pull=0, the control, the big CPU idles until a
    periodic balance gives up on hotness."""
    shares: dict[str, tuple[float, float]] = {}
    pulls: dict[str, int] = {}
    refused: dict[str, int] = {}
    for label, cmdline in (("pull", ""), ("no pull", "sysctl.kernel.sched_colab_idle_pull=0")):
        result = run_schedtest(
            tmp_path / label.replace(" ", "-"),
            kernel_build,
            initramfs,
            "strand",
            "3",
            policy="colab",
            qemu_clock=EXECUTED,
            extra_cmdline=cmdline,
        )
        roles = threads_by_role(result)
        assert len(roles["blinker"]) == 2 and len(roles["little"]) == 4, result
        for t in roles["little"]:
            assert t["kernel"]["class"] == "little", t
        shares[label] = taken_of_free_big_time(result)
        pulls[label] = int(result["pulls"])
        refused[label] = sum(
            int(t["kernel"]["failed_hot"] - t["at_release"]["failed_hot"]) for t in roles["little"]
        )
    print("big CPU time left free, share of it the little class took:", shares)
    print("pulls:", pulls, "balancer's refusals of the little class as hot:", refused)
    # the premise: the balancer refused the waiting threads as cache hot
    assert refused["no pull"] >= 10, refused
    # the premise: the blinkers left the big CPUs free about two thirds of
    # the time, in both runs
    for free, _ in shares.values():
        assert 0.5 <= free <= 0.8, shares
    # a pulled thread stays until the class balancer moves it off, and a
    # blinker's next sleep finds it there: fewer pulls than sleeps
    assert pulls["no pull"] == 0 and pulls["pull"] >= 20, pulls
    # measured 0.74-0.82 with the pull, 0.16-0.24 without (2026-11-29)
    assert shares["pull"][1] >= 0.6, shares
    assert shares["no pull"][1] <= shares["pull"][1] - 0.3, shares


def bias_run(
    out: Path,
    kernel_build: KernelBuild,
    initramfs: Path,
    policy: str,
    *,
    nice: int = 0,
    sysctls: dict[str, int] | None = None,
    qemu_clock: str = TIMED,
    min_samples: int = 50,
    spin_to_lock: bool = False,
) -> tuple[float, dict[str, Any]]:
    """The bias scenario on CPU 1 with the holder at nice (spinning to take
    the lock with spin_to_lock): the bottleneck's share of CPU 1 (beside its
    two hogs) and the scenario's result, whose flag samples were all
    readable and enough. sysctls (kernel.NAME) are set from the command
    line."""
    args: tuple[str, ...] = ("bias", "4", "1")
    if nice or spin_to_lock:
        args += (str(nice), *(["spin"] if spin_to_lock else []))
    cmdline = " ".join(f"sysctl.kernel.{k}={v}" for k, v in (sysctls or {}).items())
    result = run_schedtest(
        out,
        kernel_build,
        initramfs,
        *args,
        policy=policy,
        qemu_clock=qemu_clock,
        extra_cmdline=cmdline,
    )
    roles = threads_by_role(result)
    neck = roles["bottleneck"][0]
    on_cpu1 = neck["cpu_ns"] + sum(h["cpu_ns"] for h in roles["hog"])
    flag = result["flag"]
    assert flag["unreadable"] == 0 and flag["taken"] >= min_samples, result
    return float(neck["cpu_ns"] / on_cpu1), result


def test_bias_global_runs_the_bottleneck_first_within_a_share_bound(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """The bottleneck, always runnable (it holds the lock 1 ms of every
    1.2), shares CPU 1 with two CPU hogs. CFS gives each of the three a
    third of it. Bias-global picks the bottleneck first while its virtual
    runtime leads the others' by less than 4 ms plus 25% of the CPU time it
    has run since it was flagged (kernel.sched_colab_bias_share_pct): what
    it runs beyond its third is at most a quarter of what it runs, so it
    gets more than a third and less than 1/3 / (1 - 0.25) = 0.44. With the
    share at 0 only the 4 ms lead is left, and over seconds it gets its
    fair third."""
    share, wait_per_slice = {}, {}
    runs: dict[str, tuple[str, dict[str, int]]] = {
        "cfs": ("cfs", {}),
        "colab": ("colab", {}),
        "colab-share-0": ("colab", {"sched_colab_bias_share_pct": 0}),
    }
    for name, (policy, sysctls) in runs.items():
        share[name], result = bias_run(
            tmp_path / name,
            kernel_build,
            initramfs,
            policy,
            sysctls=sysctls,
            # always runnable by construction: one that slept for the lock
            # whenever a waiter had it would, when a waiter's vCPU lost its
            # turn holding it, wait on the waiter, who would be charged
            spin_to_lock=True,
        )
        neck = threads_by_role(result)["bottleneck"][0]
        wait_per_slice[name] = neck["kernel"]["wait_ns"] / max(1, neck["kernel"]["slices"])
        flag = result["flag"]
        if policy == "colab":
            # flagged through most of the run. The waiters also hold the
            # lock, briefly, and a waiter's vCPU that loses its turn holding
            # it makes the bottleneck wait on it: that is charged to the
            # waiter, and the flag can drop for a while (seen: 74% of samples)
            assert flag["flagged"] >= 0.6 * flag["taken"], result
        else:
            assert flag["flagged"] == 0, result  # no ranking outside COLAB
    print("bottleneck's share of CPU 1:", share)
    print("bottleneck's mean run-queue wait per slice (ns):", wait_per_slice)
    assert 0.25 <= share["cfs"] <= 0.42, share
    # 0.44 is the bound; the flag lapses now and then, so less is taken
    # (measured 0.40)
    assert share["cfs"] + 0.03 <= share["colab"] <= 0.44 + 0.03, share
    # and it waits less each time it becomes runnable (measured 0.45-0.54)
    assert wait_per_slice["colab"] <= 0.75 * wait_per_slice["cfs"], wait_per_slice
    assert share["colab-share-0"] <= share["cfs"] + 0.05, share


def test_a_nice_19_bottleneck_does_not_jump_nice_0_tasks(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """The bias scenario with the bottleneck at nice 19: it still holds the
    others up and is flagged, but it weighs less than the nice 0 hogs on its
    CPU, so COLAB gives it what CFS gives it and no more. The share bound
    is at its widest, so that only the weight rule can hold it back."""
    share = {}
    for policy in ("colab", "cfs"):
        share[policy], result = bias_run(
            tmp_path / policy,
            kernel_build,
            initramfs,
            policy,
            nice=19,
            sysctls={"sched_colab_bias_share_pct": 100},
            # what the guest executes alone sets its clock: a host busy
            # elsewhere cannot starve the nice 19 thread of rounds (CI beside
            # two gem5 processes once saw it flagged in 0 of 60 samples
            # under icount, its rounds too few for a release to rank); the
            # sampler's sleeps are skipped with the idle time on this clock,
            # and a busy host stretches them, so the scenario goes on until
            # it has its samples (18 in its 4 s beside a kernel check, once)
            qemu_clock=EXECUTED,
            # starved, it gets a turn about every half second: one that
            # slept for the lock whenever a waiter held it would sleep out
            # the half second holding nothing (CI once: 8 rounds, flagged
            # in 1 of 105 samples). Spinning, it leaves the CPU only when
            # preempted, and then most likely holding the lock
            spin_to_lock=True,
        )
        flag = result["flag"]
        neck = threads_by_role(result)["bottleneck"][0]
        print(f"{policy}: bottleneck's rounds {neck['rounds']}, flag samples {flag}")
        if policy == "colab":
            # the premise: it is a bottleneck the bias could favour for long
            # enough to show. A bias that ignored its weight would give it at
            # least its third of CPU 1 while flagged, so flagged in 15% of the
            # samples or more, its share would pass the 5% asserted below.
            assert flag["flagged"] >= 0.15 * flag["taken"], (flag, result)
    print("nice 19 bottleneck's share of CPU 1:", share)
    # nice 19 weighs 15 against 1024 for each hog: about 1% under CFS
    assert share["cfs"] <= 0.05, share
    assert share["colab"] <= max(0.05, 2 * share["cfs"]), share


def test_balancing_takes_a_waiting_bottleneck_first(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """Two bottlenecks (each holds its own lock 1 ms at a time while threads
    on the big CPUs take it briefly) and a CPU hog run pinned to one little
    CPU; forty times, they are pinned there again and then allowed both
    little CPUs while the other one idles, which pulls one of the two that
    wait: the bias runs one bottleneck, so the other one or the hog. The
    fair class takes whichever it looks at first, the one that ran longest
    ago; taking the hog leaves the two bottlenecks sharing a CPU. COLAB
    makes it look at the waiting bottleneck first. Checked against the
    series without that patch (2026-11-28, two runs): the hog came first in
    3 and in 1 of 15 rounds with both flagged; with it, in none of 110
    (seven runs, three of them beside two busy host processes). Without it
    this test would pass about once in fifty: 24 rounds or more, each taken
    by the waiting bottleneck with a chance of 26 in 30."""
    result = run_schedtest(tmp_path / "run", kernel_build, initramfs, "pull", "1")
    rounds = result["rounds"]
    print("pull rounds:", rounds)
    assert len(rounds) == 40, result
    # the premise: both were bottlenecks before and after the pull; a
    # round where one's flag lapsed says nothing (seen: 1 to 6 of 20)
    flagged = [r for r in rounds if r["flagged"]]
    assert len(flagged) >= 24, result
    assert [r["first"] for r in flagged] == ["bottleneck"] * len(flagged), result


def test_tracepoints_log_placements_and_bottlenecks(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    result = run_schedtest(
        tmp_path / "run", kernel_build, initramfs, "trace", "4", qemu_clock=TIMED
    )
    counts, sample = result["counts"], result["sample"]
    print("trace events:", counts)
    # the placement half creates two threads of each class; every thread
    # of the mutex half is of the either class
    assert counts["class=big"] >= 2 and counts["class=little"] >= 2, result
    assert counts["class=either"] >= 4, result
    assert counts["sched_colab_bottleneck:"] >= 1, result
    assert "speedup=3072 class=big" in sample["class=big"], sample
    assert "bottleneck=1" in sample["sched_colab_bottleneck:"], sample


def test_policy_flips_under_load_without_a_complaint(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    result = run_schedtest(
        tmp_path / "run",
        kernel_build,
        initramfs,
        "stress",
        "60",
        policy="cfs",
        # the scenario goes on for up to five times its 60 s to make its
        # flips: the application's limit must let it (its default, 120 s,
        # killed it at 78 s of 1000 flips' worth on a loaded host), and the
        # run's covers that and the boot
        mix_limit_s=STRESS_LIMIT_S,
        wall_limit_s=STRESS_LIMIT_S + 120,
    )
    # every 10 ms for 60 s, and on until 1000 switches where a busy host
    # gave the guest's flipper fewer turns (up to 300 s): the premise made
    assert result["flips"] >= 1000, result
    assert min(result["forks"], result["messages"], result["handoffs"]) > 0, result
    # back under cfs, no policy left a user thread with fewer allowed CPUs
    assert result["nr_restricted"] == 0, result
    # WASH ran, and once every thread it bound has exited its fork path
    # is off again (its fences: Documentation/scheduler/sched-wash.rst)
    assert result["wash_quanta"] > 0, result
    assert result["wash_fork_copy_after_exit"] == 0, result
    assert result["wash_fences_after_exit"] == 0, result


def test_a_policy_flip_while_a_waiter_is_queued_does_not_charge_the_releaser(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # A thread waits under colab and is woken, waits again under cfs (no
    # accounting), and colab returns while it is queued. A stamp left from
    # the first wait would charge the releaser the whole window since then.
    result = run_schedtest(tmp_path / "run", kernel_build, initramfs, "futex-flip")
    assert result["stale_window_ns"] >= 300_000_000, result
    assert result["charged_ns"] < 1_000_000, result
    assert result["releaser_flagged"] == 0, result


def test_waiting_counted_while_colab_was_off_does_not_flag_at_its_start(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # The runner keeps the counters on under every policy: a thread's 300 ms
    # wait under cfs is charged to its releaser. When colab starts, its
    # first ranking may count only what was caused since, or it flags the
    # releaser for waiting that happened before it ran.
    result = run_schedtest(tmp_path / "run", kernel_build, initramfs, "futex-flip-stats")
    assert result["caused_under_cfs_ns"] >= 250_000_000, result
    assert result["releaser_flagged"] == 0, result


def test_every_kind_of_release_charges_every_queued_waiter(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # Two threads wait on one futex; FUTEX_WAKE, WAKE_OP and CMP_REQUEUE each
    # wake one of them (the requeue moves the other); then two threads wait
    # on a PI lock the main thread holds, and FUTEX_UNLOCK_PI hands it to
    # one. Each release ends a stretch for both waiters, so each charges
    # the releaser both waits.
    # Against the wait the scenario measured (a 100 ms sleep, which a loaded
    # host can stretch), not the 100 ms it asked for.
    result = run_schedtest(tmp_path / "run", kernel_build, initramfs, "futex-release-kinds")
    kinds = {"wake", "wake-op", "requeue", "pi-unlock"}
    assert set(result["charged_ns"]) == set(result["waited_ns"]) == kinds, result
    for kind, charged in result["charged_ns"].items():
        waited = result["waited_ns"][kind]
        assert waited >= 100_000_000, (kind, result)
        assert 1.8 * waited <= charged <= 2.5 * waited, (kind, result)


#: what each policy keeps on with kernel.sched_colab_stats off: the
#: run-time counters, the futex accounting
COUNTERS_KEPT = {"acfs": (True, False), "colab": (True, True), "cfs": (False, False)}


@pytest.mark.parametrize("policy", sorted(COUNTERS_KEPT))
def test_which_counters_a_policy_keeps(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, policy: str
) -> None:
    # With kernel.sched_colab_stats off, a thread waits on a futex for
    # 100 ms while its releaser computes. acfs ranks by run time per side
    # and reads no waiting: it keeps the run-time counters on and leaves
    # the futex accounting off; colab keeps both; cfs neither. The
    # releaser's counters and run time are read while it sleeps, so they
    # are of one moment.
    run_time, waiting = COUNTERS_KEPT[policy]
    result = run_schedtest(tmp_path / "run", kernel_build, initramfs, "counters", policy)
    waited, ran = result["waited_ns"], result["run_ns"]
    assert waited >= 100_000_000 and ran >= 90_000_000, result
    # the fair class's run time, all of the releaser's, or none of it
    assert result["counted_run_ns"] == (ran if run_time else 0), result
    if waiting:
        assert result["blocked_ns"] >= waited, result
        assert result["caused_ns"] >= waited, result
    else:
        assert result["blocked_ns"] == result["caused_ns"] == 0, result
    # its stop gave back what its start took: under cfs nothing counts
    assert result["counted_after_stop_ns"] == 0, result


def test_a_traced_run_tells_what_moved_its_threads(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seven threads of two programs, stages and pipeline, handing work to
    one another on four CPUs under colab: they wake each other hundreds of
    times and outnumber the CPUs, so threads are placed at wake-ups and
    moved between the clusters. The run keeps a whole trace of it, COLAB's
    placement decisions among it, and 'ampkit trace' reads it."""
    from ampkit.analysis import trace
    from ampkit.cli import main
    from ampkit.mix import load_mix
    from ampkit.rundir import RunDir
    from ampkit.tracing import PRESETS

    mix = load_mix("comm2-stages-pipeline")
    outcome = run_mix(
        tmp_path / "run",
        kernel_build,
        initramfs,
        mix,
        policy="colab",
        trace_events=PRESETS["colab"],
        qemu_clock=TIMED,
    )
    assert outcome.ok, outcome.status
    account = RunDir(outcome.directory).manifest()["trace"]
    assert account["complete"] and account["lost"] == 0, account
    assert account["kept"] == account["written"] > 0
    frame = trace.events(RunDir(outcome.directory).trace_text().splitlines())
    counts = frame["event"].value_counts()
    # the premise: the threads woke each other, and COLAB placed every wake-up
    assert counts.get("sched_waking", 0) >= 50, counts
    placed = frame[frame["event"] == "sched_colab_place"]
    assert set(placed["fields"].map(lambda f: trace.fields(f)["comm"])) >= {"stages", "pipeline"}
    moves = trace.migrations(frame, big_cpus=[0, 1])
    assert (moves["cause"] == "wake-up").any(), moves
    # every migration came with the stack that made it, and the context
    # switches tell the CPUs' idleness
    assert not (moves["cause"] == "unknown").any(), moves
    assert moves["orig_idle"].notna().any(), moves
    # the trace holds the measured run alone, on the results' clock: from
    # the release to the last first completion
    apps = outcome.report.apps
    assert frame["time_s"].min() >= min(r["start_ns"] for r in apps) / 1e9 - 0.001
    assert frame["time_s"].max() <= max(r["end_ns"] for r in apps) / 1e9 + 0.005
    assert main(["trace", str(outcome.directory)]) == 0
    printed = capsys.readouterr().out
    assert "sched_colab_place" in printed and "wake-up" in printed


def test_an_event_the_kernel_lacks_fails_the_run_naming_it(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    from ampkit.mix import load_mix

    outcome = run_mix(
        tmp_path / "run",
        kernel_build,
        initramfs,
        load_mix("compute2-compute-compute"),
        trace_events=("sched:sched_no_such_event",),
    )
    assert not outcome.ok
    assert "this kernel has no such event: sched:sched_no_such_event" in outcome.status
