"""The ranked policies (hsp, eef) on the kit kernel: a mix of four
single-threaded programs, handed their speedups and energies by the runner
the way any mix's hints are, placed by each policy's ranking.

QEMU does not slow the little CPUs, so the programs' speed says nothing;
the kernel's own counters of each thread's time on each side (and the class
it ended in) are what is judged."""

from pathlib import Path
from typing import Any

import pytest

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


def run_ranked(out: Path, kernel: KernelBuild, initramfs: Path, policy: str) -> list[float]:
    mix = make_mix(
        *(App("compute", threads=1, size=SIZE, speedup=sf, epi_big_nj=epi) for sf, epi in APPS),
        name="ranked",
    )
    # restarted until the last first run ends, as Saez et al. ran their
    # mixes: all four compete for the whole of every first run, where a
    # program that ends early would hand its big CPU to the others, as it
    # should, and blur what is judged
    outcome = run_mix(out, kernel, initramfs, mix, policy=policy, qemu_clock=EXECUTED)
    assert outcome.ok, outcome.status
    assert outcome.report.kernel_problems == [], outcome.report.kernel_problems
    records = outcome.report.apps
    assert [r["epi_big_pj"] for r in records] == [round(epi * 1000) for _, epi in APPS]
    assert all(r["epi_error"] is None and r["speedup_error"] is None for r in records)
    shares = [big_share(worker(r)) for r in records]
    print(policy, "share of each program's run time on big CPUs:", shares)
    return shares


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
    shares = run_ranked(tmp_path / policy, kernel_build, initramfs, policy)
    for i, share in enumerate(shares):
        if i in big_ones:
            assert share >= 0.9, (i, shares)
        else:
            assert share <= 0.1, (i, shares)
