"""Figures for the WASH policy's own overhead: its worker's CPU time.

    .venv/bin/python benchmarks/wash_overhead.py [--repeat N] [--seconds S] [--threads N]

Boots the kit kernel with amp_policy=wash on a QEMU 4B4L machine (the
platform and thread count the WASH issue asks for) a few times. In each
guest, ampkit-schedtest's wash-overhead scenario runs one application of
32 threads that WASH cannot call scalable (one thread holds a mutex 10 ms
at a time, a quarter of the others take it briefly, the rest compute in
1 ms bursts), so that every quantum walks, ranks and sorts all of them.
Around it the scenario reads kernel.sched_wash_stats, which counts the
quanta, the worker's CPU time in them (accounting, deciding and changing
allowed CPUs), its wall time (which adds the waits for a bound thread to
leave a little CPU), and the binds and unbinds.

Printed per boot and as medians: the worker's CPU time per quantum, and
as a share of the machine (CPU time / (elapsed time x CPUs)); the wall
time per quantum; binds and unbinds per quantum. QEMU runs the guest by
translation, several times slower than hardware, and the guest counts
time its vCPU waits for a host core as run time, so the per-quantum
times are upper bounds for a real Cortex-A57. Figures, not tests.
"""

import statistics
import tempfile
from pathlib import Path

from guest import worker_cost_args, worker_cost_boot  # benchmarks/guest.py


def main() -> int:
    args, build_ = worker_cost_args(__doc__.splitlines()[0], "wash")
    cpu_us: list[float] = []
    wall_us: list[float] = []
    shares: list[float] = []
    changes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ampkit-wash-overhead-") as tmp:
        for i in range(args.repeat):
            f = worker_cost_boot(
                Path(tmp) / f"boot{i}",
                build_,
                "wash-overhead",
                policy="wash",
                platform=args.platform,
                seconds=args.seconds,
                threads=args.threads,
            )
            quanta = f["quanta"]
            if not quanta:
                raise SystemExit(f"boot {i}: the WASH worker ran no quantum: {f}")
            cpu_us.append(f["cpu_ns"] / quanta / 1e3)
            wall_us.append(f["wall_ns"] / quanta / 1e3)
            shares.append(f["cpu_ns"] / (f["elapsed_ns"] * f["cpus"]))
            changes.append((f["binds"] + f["unbinds"]) / quanta)
            print(
                f"  boot {i}: {quanta:.0f} quanta (one per {f['elapsed_ns'] / quanta / 1e6:.1f} "
                f"ms); CPU {cpu_us[-1]:.1f} us, wall {wall_us[-1]:.1f} us per quantum; "
                f"{100 * shares[-1]:.4f}% of {f['cpus']:.0f} CPUs; "
                f"{changes[-1]:.1f} binds+unbinds per quantum"
            )
    median = statistics.median
    print(
        f"WASH worker ({args.threads} threads, {args.platform}, n={args.repeat}): "
        f"CPU {median(cpu_us):.1f} us per quantum = {100 * median(shares):.4f}% of the "
        f"machine; wall {median(wall_us):.1f} us per quantum; "
        f"{median(changes):.1f} binds+unbinds per quantum"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
