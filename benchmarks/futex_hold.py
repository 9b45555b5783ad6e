"""Figures for what the futex accounting adds to a release's hash-bucket lock.

    .venv/bin/python benchmarks/futex_hold.py [--waiters 1,8,32,64] [--rounds N] [--blocks N]
    GEM5_ROOT=... .venv/bin/python benchmarks/futex_hold.py --engine gem5

The futex core's accounting hook (patch 0007) walks a released futex's
hash bucket, under its lock, to tell the accountant about every task
still queued there, looking at 32 entries at the most. For each number
of waiters, one boot of the kit kernel on 1B1L under cfs runs
ampkit-schedtest's futex-scan scenario: that many threads wait on one
futex with bitset 1, and the main thread releases it with bitset 2, which
wakes none of them but takes the bucket lock and walks them, ROUNDS times
a sample, with the accounting off and on in turn (kernel.sched_colab_stats),
BLOCKS pairs of samples in one guest.

Printed per number of waiters: the time per release with the accounting
off and on, and the difference, which is what the hook's walk adds to the
time the bucket lock is held (the release's own walk, the lock and the
system call are in both). A waiter the release matches adds an xchg and a
clock read on top (at most 32).

On QEMU (the default) these are times of a translated CPU and pairs
scatter by several percent: the medians over the pairs are printed. On
gem5 (``--engine gem5``, the kit's calibrated cores, simulated time)
a run is deterministic: the first pair warms caches and predictors after
the checkpoint's restore, and the last pair is the figure. Figures, not
tests.
"""

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from guest import kit_kernel, run_alone  # benchmarks/guest.py

from ampkit import kernel
from ampkit.engines import DEFAULT_ENGINE, ENGINES, get_engine
from ampkit.errors import AmpkitError
from ampkit.mix import App
from ampkit.run import DEFAULT_MIX_LIMIT_S


def one_boot(
    out: Path,
    build_: kernel.KernelBuild,
    *,
    waiters: int,
    rounds: int,
    blocks: int,
    engine: str,
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
        engine=engine,
        mix_limit_s=600 if get_engine(engine).models_core_speed else DEFAULT_MIX_LIMIT_S,
    )
    samples: list[dict[str, float]] = json.loads(record["output"])["samples"]
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiters", default="1,8,32,64", help="numbers of waiters")
    parser.add_argument("--rounds", type=int, help="releases per sample (QEMU 5000, gem5 200)")
    parser.add_argument("--blocks", type=int, help="pairs of samples per boot (QEMU 8, gem5 2)")
    parser.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE)
    args = parser.parse_args()
    # a simulator of the cores (gem5) is slow and deterministic: fewer
    # releases, and the last pair after the warm-up is the figure
    detailed = get_engine(args.engine).models_core_speed
    rounds = args.rounds or (200 if detailed else 5000)
    blocks = args.blocks or (2 if detailed else 8)
    try:
        get_engine(args.engine).identity()
    except AmpkitError as e:
        print(f"futex_hold.py: skipped: {e.what}")
        return 0

    build_ = kit_kernel()
    print(
        f"machine: {os.cpu_count()} CPUs; 1B1L guest on {args.engine} under cfs; {rounds} "
        f"releases a sample, {blocks} pairs per boot"
        + ("; the last pair counts" if detailed else "; medians over the pairs")
    )
    figure = (lambda xs: xs[-1]) if detailed else statistics.median
    with tempfile.TemporaryDirectory(prefix="ampkit-futex-hold-") as tmp:
        for waiters in (int(w) for w in args.waiters.split(",")):
            samples = one_boot(
                Path(tmp) / f"w{waiters}",
                build_,
                waiters=waiters,
                rounds=rounds,
                blocks=blocks,
                engine=args.engine,
            )
            off = [s["ns_per_release"] for s in samples if not s["accounting"]]
            on = [s["ns_per_release"] for s in samples if s["accounting"]]
            added = [b - a for a, b in zip(off, on, strict=True)]
            print(
                f"  {waiters:4d} waiters: {figure(off):8.1f} ns per release without the "
                f"accounting, {figure(on):8.1f} with it; the hook adds {figure(added):7.1f} ns "
                f"(pairs {min(added):.1f} to {max(added):.1f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
