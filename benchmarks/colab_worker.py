"""Figures for the COLAB worker's own cost: ranking and class balancing.

    .venv/bin/python benchmarks/colab_worker.py [--policy colab|hsp|eef|rr|acfs] [--repeat N]
        [--seconds S] [--threads N]

Boots the kit kernel with amp_policy=colab on a QEMU machine (4B4L by
default) a few times. In each guest, ampkit-schedtest's colab-overhead
scenario runs the application of the WASH figure (32 threads: a lock
holder, a quarter taking the lock briefly, the rest computing in 1 ms
bursts), its threads given speedups of every class in turn, so that every
period the worker decays and ranks all of them and its class balancer
has threads of each class to place. Around it the scenario reads
kernel.sched_colab_work: the periods, the worker's CPU time in them, and
the exchanges and moves the class balancer made.

The ranked policies (--policy hsp, eef, rr, acfs) run the same worker:
instead of the bottleneck ranking it sorts the threads by speedup (hsp),
by speedup over energy per instruction through the phase detection (eef),
by their turns within their application (rr, a sort more to group them)
or by progress from their run time per side (acfs); the scenario gives the
threads energies in a cycle of four, so that each one with a speedup has
its own rank.

Printed per boot and as medians: CPU time per period and as a share of
the machine (CPU time / (elapsed time x CPUs)), exchanges and moves per
second. As for WASH, QEMU runs the guest by translation and the guest
counts time a vCPU waits for a host core as run time: upper bounds.
Figures, not tests.
"""

import statistics
import tempfile
from pathlib import Path

from guest import worker_cost_args, worker_cost_boot  # benchmarks/guest.py


def main() -> int:
    args, build_ = worker_cost_args(
        __doc__.splitlines()[0], "colab", ("colab", "hsp", "eef", "rr", "acfs")
    )
    cpu_us: list[float] = []
    shares: list[float] = []
    swaps: list[float] = []
    moves: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ampkit-colab-worker-") as tmp:
        for i in range(args.repeat):
            f = worker_cost_boot(
                Path(tmp) / f"boot{i}",
                build_,
                "colab-overhead",
                policy=args.policy,
                platform=args.platform,
                seconds=args.seconds,
                threads=args.threads,
            )
            periods = f["periods"]
            if not periods:
                raise SystemExit(f"boot {i}: the {args.policy} worker ran no period: {f}")
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
        f"{args.policy} worker ({args.threads} threads, {args.platform}, n={args.repeat}): "
        f"CPU {median(cpu_us):.1f} us per period = {100 * median(shares):.4f}% of the "
        f"machine; {median(swaps):.1f} exchanges and {median(moves):.1f} moves per second"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
