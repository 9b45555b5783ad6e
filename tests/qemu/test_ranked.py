"""The ranked policies (hsp, eef, rr, acfs) on the kit kernel: a mix of four
single-threaded programs, handed their speedups and energies by the runner
the way any mix's hints are, placed by each policy's ranking (rr's turns
ignore both, acfs measures progress by the speedups).

QEMU does not slow the little CPUs, so the programs' speed says nothing;
the kernel's own counters of each thread's time on each side (and the class
it ended in) are what is judged."""

import re
from pathlib import Path
from typing import Any

import pytest

from ampkit.analysis.optimum import AppModel, opt_unfairness
from ampkit.kernel import KernelBuild
from ampkit.mix import App

from .helpers import EXECUTED, HOST, make_mix, run_mix

#: compute -t 1's size: about four seconds of guest time each. The four
#: start at once and are placed before the first ranking, so two of them
#: start on the wrong side; the class balancer's exchanges go through the
#: stopper, which under QEMU took 100-300 ms of guest time to run on both
#: CPUs (measured on an idle host), and a run this long leaves that below
#: a tenth of a thread's share
SIZE = 2_000_000

#: (speedup, energy per instruction on big CPUs in nJ): HSP ranks by the
#: first, EEF-Driven by the first over the second, so the two faster ones
#: spend the most energy and the two thrifty ones have the highest EEF
#: (1.5, 1.25, 4.0, 3.0)
APPS = ((3.0, 2.0), (2.5, 2.0), (2.0, 0.5), (1.5, 0.5))


def worker(record: dict[str, Any]) -> dict[str, Any]:
    """The counters of the thread that did the program's work: the one
    that ran longest (compute -t 1 has a main thread that waits for it)."""
    tasks: list[dict[str, Any]] = record["tasks"]
    return max(tasks, key=lambda t: t["big_ns"] + t["little_ns"])


def big_share(task: dict[str, Any]) -> float:
    return float(task["big_ns"]) / max(1.0, float(task["big_ns"] + task["little_ns"]))


def run_ranked(
    out: Path,
    kernel: KernelBuild,
    initramfs: Path,
    policy: str,
    size: int = SIZE,
    **request: Any,
) -> list[dict[str, Any]]:
    """Each program's working thread's counters, from a run of the four
    under ``policy``."""
    mix = make_mix(
        *(App("compute", threads=1, size=size, speedup=sf, epi_big_nj=epi) for sf, epi in APPS),
        name="ranked",
    )
    # restarted until the last first run ends, as Saez et al. ran their
    # mixes: all four compete for the whole of every first run, where a
    # program that ends early would hand its big CPU to the others, as it
    # should, and blur what is judged
    request.setdefault("qemu_clock", EXECUTED)
    outcome = run_mix(out, kernel, initramfs, mix, policy=policy, **request)
    assert outcome.ok, outcome.status
    assert outcome.report.kernel_problems == [], outcome.report.kernel_problems
    records = outcome.report.apps
    assert [r["epi_big_pj"] for r in records] == [round(epi * 1000) for _, epi in APPS]
    assert all(r["epi_error"] is None and r["speedup_error"] is None for r in records)
    workers = [worker(r) for r in records]
    print(policy, "share of each program's run time on big CPUs:", [big_share(w) for w in workers])
    return workers


@pytest.mark.parametrize(
    ("policy", "big_ones"),
    [
        # the two highest speedups
        ("hsp", (0, 1)),
        # the two highest EEF, though both have lower speedups than the others
        ("eef", (2, 3)),
    ],
)
def test_the_big_cpus_run_the_two_threads_of_the_highest_rank(
    tmp_path: Path,
    kernel_build: KernelBuild,
    initramfs: Path,
    policy: str,
    big_ones: tuple[int, int],
) -> None:
    shares = [big_share(w) for w in run_ranked(tmp_path / policy, kernel_build, initramfs, policy)]
    for i, share in enumerate(shares):
        if i in big_ones:
            assert share >= 0.9, (i, shares)
        else:
            assert share <= 0.1, (i, shares)


#: ACFS, which swaps threads every few periods, takes longer periods here
#: than its 10 ms, on the instructions clock: there an exchange takes
#: 100-300 ms of guest time to go through (SIZE's note), so at 10 ms the
#: classes turn over many times before a thread moves and what a thread
#: gets is the exchanges' timing, not the policy. At 200 ms a swap still
#: outlasts most exchanges; the programs run twice as long.
LONG_PERIOD = "sysctl.kernel.sched_colab_rank_period_ms=200"


#: The ranking's decisions on the console: every change of a thread's
#: class, as the kernel's tracepoint prints it (tp_printk)
RANK_TRACE = "trace_event=sched:sched_amp_rank tp_printk"
_RANK_EVENT = re.compile(
    r"\[\s*([\d.]+)\] sched_amp_rank: comm=compute pid=(\d+) key=\d+ class=(\w+)"
)


def turns(console: str) -> dict[int, int]:
    """How many times the ranking moved each of the four first-run workers
    to the big class while all four ran: from the last one's first change
    up to the first change of a worker that starts after them (a restarted
    program's). The first-run workers are the four threads whose class it
    changed most (a program's main thread is ranked for a few periods
    before it waits for its worker in the either class; a restarted
    program's worker runs for the end of the run only)."""
    events = [(float(t), int(pid), cls) for t, pid, cls in _RANK_EVENT.findall(console)]
    changes: dict[int, int] = {}
    first_seen: dict[int, float] = {}
    for t, pid, _ in events:
        changes[pid] = changes.get(pid, 0) + 1
        first_seen.setdefault(pid, t)
    workers = sorted(changes, key=lambda pid: changes[pid], reverse=True)[:4]
    start = max((first_seen[pid] for pid in workers), default=0.0)
    end = min(
        (
            first_seen[pid]
            for pid in changes
            if pid not in workers and first_seen[pid] > start and changes[pid] >= 4
        ),
        default=float("inf"),
    )
    return {
        pid: sum(1 for t, p, cls in events if p == pid and cls == "big" and start <= t < end)
        for pid in workers
    }


def test_rr_deals_the_big_cpus_evenly_whatever_the_speedups(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # the same four programs, whose speedups hsp ranks from 3.0 down to 1.5:
    # round robin deals two big CPUs among four applications in turns, so
    # each is dealt one every other period. On the host clock (MTTCG: a
    # host thread per vCPU) the class balancer's exchanges go through in
    # milliseconds, where the icount clocks' single host thread makes each
    # wait for the vCPUs' turns, up to seconds on a busy host, which turns
    # the deal over before the threads move (a run on "instructions": about
    # half the exchanges, the worker's periods stretched to 2 s)
    workers = run_ranked(
        tmp_path / "rr",
        kernel_build,
        initramfs,
        "rr",
        2 * SIZE,
        qemu_clock=HOST,
        extra_cmdline=RANK_TRACE,
    )
    # the deal: each within a tenth of the mean, or a turn (some turns go
    # to other applications, the runner's own process when it wakes; a
    # thread dealt two turns in a row shows one change of class). Measured
    # 136-137 turns each
    dealt = turns((tmp_path / "rr" / "console.log").read_text())
    assert len(dealt) == 4 and min(dealt.values()) >= 20, dealt
    mean = sum(dealt.values()) / 4
    assert all(abs(n - mean) <= max(1.0, mean / 10) for n in dealt.values()), dealt
    # and the time each ran on big CPUs, the kernel's counters: on the host
    # clock a vCPU the host preempts counts as run time for its thread,
    # which blurs the shares (measured 0.466-0.544 in six runs), hence a
    # fifth of equal (hsp gives these programs 1, 1, 0, 0)
    shares = [big_share(w) for w in workers]
    assert all(abs(share - 0.5) <= 0.1 for share in shares), shares


#: ACFS's bound on progress: the largest over the least at the end of the
#: programs' runs. The ranking swaps a pair once one lags by a period of
#: big-CPU time (200 ms here, LONG_PERIOD), and under QEMU the exchanges
#: that carry out a swap come late or not at all (the rr test's note): a
#: run measured 1.24. For scale: under hsp the two on little CPUs would
#: make 1/2 and 2/3 of the others' progress (a spread of 2), and a spread
#: like cfs's unsteered placement, up to 3
ACFS_SPREAD = 1.35


def test_acfs_evens_out_progress_and_its_edp_factor_favours_efficiency(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # the four programs of speedups 3.0 to 1.5: progress evened out takes
    # the big shares of Opt-Unf's schedule, the least unfairness any
    # schedule reaches (0.63, 0.59, 0.51, 0.27; ampkit.analysis.optimum;
    # hsp gives 1, 1, 0, 0 and rr a half each)
    even = run_ranked(
        tmp_path / "acfs", kernel_build, initramfs, "acfs", 2 * SIZE, extra_cmdline=LONG_PERIOD
    )
    progress = [w["amp_vruntime"] for w in even]
    assert min(progress) > 0 and max(progress) <= ACFS_SPREAD * min(progress), progress
    # the kernel's progress is eq. 10 of the run time it counted per side,
    # short of what it has not yet taken (the time before its first
    # ranking and since its last, a period each), give or take the run
    # time the per-side counters had not yet charged when a ranking read
    # sum_exec_runtime (counted as big-CPU time: 2 ms of 12 s, measured)
    for w, (sf, _) in zip(even, APPS, strict=True):
        counted = w["big_ns"] + w["little_ns"] / sf
        assert counted - 0.5e9 <= w["amp_vruntime"] <= counted + 0.05e9, (w, sf)
    assert all(w["acfs_weight"] == 1024 for w in even), even
    models = [AppModel(f"p{i}", sf, 1e9, epi, epi / 2) for i, (sf, epi) in enumerate(APPS)]
    best = opt_unfairness(models, 2).big_fraction
    # each program's share is over its first run, and the first runs end
    # at different times (then restarted programs join, as newcomers): the
    # shares scatter about Opt-Unf's, measured up to 0.12 away
    shares = [big_share(w) for w in even]
    assert all(abs(s - f) <= 0.15 for s, f in zip(shares, best, strict=True)), (shares, best)
    assert shares[0] >= shares[3] + 0.15, shares
    # ACFS-E: at an EDP factor of 5, the program of the highest speedup
    # over energy (the third, 2.0 / 0.5 nJ) progresses five times slower
    # for its run time, the fourth (1.5 / 0.5) 3.5 times, the first 1.4
    # times: the model's shares become 0.07, 0, 1, 0.93, so the two
    # thrifty programs take big time from the others (together 1.15 more
    # than at 1.0; QEMU's damped exchanges measured 0.83 more)
    edp = run_ranked(
        tmp_path / "acfs-e",
        kernel_build,
        initramfs,
        "acfs",
        2 * SIZE,
        extra_cmdline=f"{LONG_PERIOD} sysctl.kernel.sched_acfs_edp_factor=500",
    )
    # the weights: the highest EEF's five times its own, the lowest's its
    # own, the fourth's 1024 (1 + 4 x (3.0 - 1.25) / (4.0 - 1.25)) = 3630
    assert [w["acfs_weight"] for w in edp][1:] == [1024, 5 * 1024, 3630], edp
    thrifty = big_share(edp[2]) + big_share(edp[3])
    assert big_share(edp[2]) > shares[2] and thrifty >= shares[2] + shares[3] + 0.4, (
        [big_share(w) for w in edp],
        shares,
    )
