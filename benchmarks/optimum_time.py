"""Figures for the analytical optimum's cost: Saez et al.'s model solved
for one workload.

    .venv/bin/python benchmarks/optimum_time.py [--workloads N] [--apps 6] [--platform 2B4L]

Draws N workloads (default 200) of single-threaded applications with
speedups, instructions per second and energies per instruction spread as
in the paper's Table 1 (SF 1.2-3.5, IPS_big 0.5-2.5 G, EPI_big 0.3-1.2 nJ,
EPI_little a third to two thirds of it), seeded, and times
ampkit.analysis.optimum.points() on each: HSP, EEF-Driven, the exact
Opt-EDP (every corner of the F_i polytope) and Opt-Unf (two linear
programs). Printed: the median, the 95th percentile and the slowest, in
milliseconds, and the corners Opt-EDP enumerates. Figures, not tests.
"""

import argparse
import math
import random
import statistics
import time

from ampkit.analysis.optimum import AppModel, points
from ampkit.platform import get_platform


def workload(rng: random.Random, n: int) -> list[AppModel]:
    apps = []
    for i in range(n):
        epi_big = rng.uniform(0.3, 1.2)
        apps.append(
            AppModel(
                name=f"app{i}",
                speedup=rng.uniform(1.2, 3.5),
                ips_big=rng.uniform(0.5e9, 2.5e9),
                epi_big_nj=epi_big,
                epi_little_nj=epi_big * rng.uniform(1 / 3, 2 / 3),
            )
        )
    return apps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--apps", type=int, default=6)
    parser.add_argument("--platform", default="2B4L")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    plat = get_platform(args.platform)
    n_big, n_little = plat.big, plat.little
    rng = random.Random(args.seed)
    times_ms = []
    for _ in range(args.workloads):
        apps = workload(rng, args.apps)
        start = time.perf_counter()
        points(apps, n_big, n_little)
        times_ms.append((time.perf_counter() - start) * 1e3)
    times_ms.sort()
    p95 = times_ms[min(len(times_ms) - 1, math.ceil(0.95 * len(times_ms)) - 1)]
    print(
        f"{args.workloads} workloads of {args.apps} applications on {args.platform} "
        f"({n_big} big, {n_little} little; Opt-EDP enumerates "
        f"C({args.apps},{n_big}) = {math.comb(args.apps, n_big)} corners): "
        f"median {statistics.median(times_ms):.2f} ms, 95th percentile {p95:.2f} ms, "
        f"slowest {times_ms[-1]:.2f} ms per workload"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
