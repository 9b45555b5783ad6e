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

from .helpers import EXECUTED, make_mix, run_mix

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
    outcome = run_mix(out, kernel, initramfs, mix, policy=policy, qemu_clock=EXECUTED, **request)
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


#: Policies that swap threads every period or few (rr, acfs) take longer
#: periods here than their 10 ms: under QEMU an exchange takes 100-300 ms
#: of guest time to go through (SIZE's note), so at 10 ms the classes turn
#: over many times before a thread moves and what a thread gets is the
#: exchanges' timing, not the policy. At 200 ms a turn still outlasts most
#: exchanges; the programs run twice as long, for about forty turns.
LONG_PERIOD = "sysctl.kernel.sched_colab_rank_period_ms=200"


#: The ranking's decisions on the console: every change of a thread's
#: class, as the kernel's tracepoint prints it (tp_printk)
RANK_TRACE = "trace_event=sched:sched_amp_rank tp_printk"
_RANK_EVENT = re.compile(
    r"\[\s*([\d.]+)\] sched_amp_rank: comm=compute pid=(\d+) key=\d+ class=(\w+)"
)


def turns(console: str) -> dict[int, int]:
    """How many times the ranking moved each of the first four workers to
    the big class while all four ran: up to the first thread that starts
    after them (a restarted program's). Workers are the threads it ever
    put in the little class (a program's main thread waits in the either
    class once it has started its worker)."""
    events = [(float(t), int(pid), cls) for t, pid, cls in _RANK_EVENT.findall(console)]
    workers: list[int] = []
    for _, pid, cls in events:
        if cls == "little" and pid not in workers:
            workers.append(pid)
    first, later = workers[:4], workers[4:]
    end = min((t for t, pid, _ in events if pid in later), default=float("inf"))
    return {
        pid: sum(1 for t, p, cls in events if p == pid and cls == "big" and t < end)
        for pid in first
    }


def test_rr_deals_the_big_cpus_evenly_whatever_the_speedups(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # the same four programs, whose speedups hsp ranks from 3.0 down to 1.5:
    # round robin deals two big CPUs among four applications in turns, so
    # each is dealt one every other period
    workers = run_ranked(
        tmp_path / "rr",
        kernel_build,
        initramfs,
        "rr",
        2 * SIZE,
        extra_cmdline=f"{LONG_PERIOD} {RANK_TRACE}",
    )
    # each within a tenth of the mean, or a turn (some turns go to other
    # applications, the runner's own process among them when it wakes, and
    # a thread dealt two turns in a row shows one change of class)
    dealt = turns((tmp_path / "rr" / "console.log").read_text())
    assert len(dealt) == 4 and min(dealt.values()) >= 8, dealt
    mean = sum(dealt.values()) / 4
    assert all(abs(n - mean) <= max(1.0, mean / 10) for n in dealt.values()), dealt
    # What each ran on big CPUs follows the deal as far as the class
    # balancer's exchanges carry it out, which under QEMU is loosely: in a
    # traced run, about half of the two exchanges each turn needs showed
    # up (sched_colab_move), and the worker's periods stretched to 500 ms
    # at times; why was not established. Each program still ran on both
    # sides.
    shares = [big_share(w) for w in workers]
    assert all(0.1 <= share <= 0.9 for share in shares), shares


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
    # short of what it has not yet taken: the time before its first
    # ranking and since its last (a period each)
    for w, (sf, _) in zip(even, APPS, strict=True):
        counted = w["big_ns"] + w["little_ns"] / sf
        assert counted - 0.5e9 <= w["amp_vruntime"] <= counted, (w, sf)
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
    assert edp[2]["acfs_weight"] == 5 * 1024 and edp[1]["acfs_weight"] < 5 * 1024, edp
    thrifty = big_share(edp[2]) + big_share(edp[3])
    assert big_share(edp[2]) > shares[2] and thrifty >= shares[2] + shares[3] + 0.4, (
        [big_share(w) for w in edp],
        shares,
    )
