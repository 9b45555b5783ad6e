"""Figures for the COLAB worker's own cost: ranking and class balancing.

    .venv/bin/python benchmarks/colab_worker.py [--repeat N] [--seconds S] [--threads N]

Boots the kit kernel with amp_policy=colab on a QEMU machine (4B4L by
default) a few times. In each guest, ampkit-schedtest's colab-overhead
scenario runs the application of the WASH figure (32 threads: a lock
holder, a quarter taking the lock briefly, the rest computing in 1 ms
bursts), its threads given speedups of every class in turn, so that every
period the worker decays and ranks all of them and its class balancer
has threads of each class to place. Around it the scenario reads
kernel.sched_colab_work: the periods, the worker's CPU time in them, and
the exchanges and moves the class balancer made.

Printed per boot and as medians: CPU time per period and as a share of
the machine (CPU time / (elapsed time x CPUs)), exchanges and moves per
second. As for WASH, QEMU runs the guest by translation and the guest
counts time a vCPU waits for a host core as run time: upper bounds.
Figures, not tests.
"""

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from guest import run_alone  # benchmarks/guest.py

from ampkit import build, kernel
from ampkit.mix import App


def one_boot(
    out: Path, build_: kernel.KernelBuild, *, platform: str, seconds: float, threads: int
) -> dict[str, float]:
    args = ("colab-overhead", str(seconds), str(threads))
    record = run_alone(
        out,
        build_,
        App(program="ampkit-schedtest", threads=threads, size=1, args=args),
        name="colab-overhead",
        category="synchronisation",
        platform=platform,
        policy="colab",
        timeout_s=int(seconds * 10 + 120),
    )
    figures: dict[str, float] = json.loads(record["output"])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="boots")
    parser.add_argument("--seconds", type=float, default=10.0, help="scenario length per boot")
    parser.add_argument("--threads", type=int, default=32, help="threads of the application")
    parser.add_argument("--platform", default="4B4L", help="guest machine")
    args = parser.parse_args()

    build.scons("kernel", build.INITRAMFS)
    build_ = kernel.find_build("default")
    assert build_ is not None
    print(
        f"machine: {os.cpu_count()} CPUs; {args.platform} guest under colab; {args.threads} "
        f"threads; {args.repeat} boots x {args.seconds:g} s"
    )
    cpu_us: list[float] = []
    shares: list[float] = []
    swaps: list[float] = []
    moves: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ampkit-colab-worker-") as tmp:
        for i in range(args.repeat):
            f = one_boot(
                Path(tmp) / f"boot{i}",
                build_,
                platform=args.platform,
                seconds=args.seconds,
                threads=args.threads,
            )
            periods = f["periods"]
            if not periods:
                raise SystemExit(f"boot {i}: the COLAB worker ran no period: {f}")
            seconds = f["elapsed_ns"] / 1e9
            cpu_us.append(f["cpu_ns"] / periods / 1e3)
            shares.append(f["cpu_ns"] / (f["elapsed_ns"] * f["cpus"]))
            swaps.append(f["swaps"] / seconds)
            moves.append(f["moves"] / seconds)
            print(
                f"  boot {i}: {periods:.0f} periods (one per "
                f"{f['elapsed_ns'] / periods / 1e6:.1f} ms); CPU {cpu_us[-1]:.1f} us per "
                f"period; {100 * shares[-1]:.4f}% of {f['cpus']:.0f} CPUs; "
                f"{swaps[-1]:.1f} exchanges and {moves[-1]:.1f} moves per second"
            )
    median = statistics.median
    print(
        f"COLAB worker ({args.threads} threads, {args.platform}, n={args.repeat}): "
        f"CPU {median(cpu_us):.1f} us per period = {100 * median(shares):.4f}% of the "
        f"machine; {median(swaps):.1f} exchanges and {median(moves):.1f} moves per second"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
