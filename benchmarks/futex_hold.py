"""Figures for what the futex accounting adds to a release's hash-bucket lock.

    .venv/bin/python benchmarks/futex_hold.py [--waiters 1,8,32,64] [--rounds N] [--blocks N]

The futex core's accounting hook (patch 0007) walks a released futex's
hash bucket, under its lock, to tell the accountant about every task
still queued there, looking at 32 entries at the most. For each number
of waiters, one boot of the kit kernel on QEMU 1B1L under cfs runs
ampkit-schedtest's futex-scan scenario: that many threads wait on one
futex with bitset 1, and the main thread releases it with bitset 2, which
wakes none of them but takes the bucket lock and walks them, ROUNDS times
a sample, with the accounting off and on in turn (kernel.sched_colab_stats),
BLOCKS pairs of samples in one guest.

Printed per number of waiters: the median over the pairs of the time per
release with the accounting off and on, and of the difference, which is
what the hook's walk adds to the time the bucket lock is held (the
release's own walk, the lock and the system call are in both). A waiter
the release matches adds an xchg and a clock read on top (at most 32).
QEMU translates the guest: these are times of a translated CPU, and pairs
scatter by several percent. Figures, not tests.
"""

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from guest import kit_kernel, run_alone  # benchmarks/guest.py

from ampkit import kernel
from ampkit.mix import App


def one_boot(
    out: Path, build_: kernel.KernelBuild, *, waiters: int, rounds: int, blocks: int
) -> list[dict[str, float]]:
    record = run_alone(
        out,
        build_,
        App(
            program="ampkit-schedtest",
            threads=waiters + 1,
            size=1,
            args=("futex-scan", str(waiters), str(rounds), str(blocks)),
        ),
        name="futex-scan",
        category="synchronisation",
        platform="1B1L",
        policy="cfs",
    )
    samples: list[dict[str, float]] = json.loads(record["output"])["samples"]
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiters", default="1,8,32,64", help="numbers of waiters")
    parser.add_argument("--rounds", type=int, default=5000, help="releases per sample")
    parser.add_argument("--blocks", type=int, default=8, help="pairs of samples per boot")
    args = parser.parse_args()

    build_ = kit_kernel()
    print(
        f"machine: {os.cpu_count()} CPUs; 1B1L guest under cfs; {args.rounds} releases a "
        f"sample, {args.blocks} pairs per boot"
    )
    median = statistics.median
    with tempfile.TemporaryDirectory(prefix="ampkit-futex-hold-") as tmp:
        for waiters in (int(w) for w in args.waiters.split(",")):
            samples = one_boot(
                Path(tmp) / f"w{waiters}",
                build_,
                waiters=waiters,
                rounds=args.rounds,
                blocks=args.blocks,
            )
            off = [s["ns_per_release"] for s in samples if not s["accounting"]]
            on = [s["ns_per_release"] for s in samples if s["accounting"]]
            added = [b - a for a, b in zip(off, on, strict=True)]
            print(
                f"  {waiters:4d} waiters: {median(off):8.1f} ns per release without the "
                f"accounting, {median(on):8.1f} with it; the hook adds {median(added):7.1f} ns "
                f"(pairs {min(added):.1f} to {max(added):.1f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
