"""Figures for the synthetic workloads: run time on QEMU at two sizes.

    .venv/bin/python benchmarks/workloads.py [--platform 2B2L] [--threads 4] [--program P]

Boots the kit kernel once per workload and size, with the workload alone
in the mix, and prints its turnaround (the runner's start to exit) at the
small size the QEMU tests use (SMALL_SIZES in ampkit/mix.py) and at the
program's default size (from its -h text, built for the host). These size
CI runs and gem5 runs, where the same work takes far longer; QEMU does not
model big and little speeds. Figures, not tests.
"""

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from guest import kit_kernel, run_alone  # benchmarks/guest.py

from ampkit import kernel
from ampkit.mix import SMALL_SIZES, App, known_programs
from ampkit.paths import REPO_ROOT


def default_size(program: str) -> int:
    text = subprocess.run(
        [str(REPO_ROOT / "build" / "host" / "bin" / program), "-h"],
        capture_output=True,
        text=True,
    )
    m = re.search(r"-n SIZE .*\(default (\d+)\)", text.stdout + text.stderr)
    if not m:
        raise SystemExit(f"{program} -h does not state its default size")
    return int(m.group(1))


def turnaround_ms(
    out: Path, build_: kernel.KernelBuild, program: str, size: int, *, platform: str, threads: int
) -> float:
    record = run_alone(
        out,
        build_,
        App(program, threads=threads, size=size),
        name=f"bench-{program}",
        category="compute",
        platform=platform,
        policy="cfs",
    )
    return float(record["end_ns"] - record["start_ns"]) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", default="2B2L")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument(
        "--program", action="append", help="only this workload (repeatable; default: every one)"
    )
    args = parser.parse_args()
    build_ = kit_kernel("host")
    programs = args.program or [p for p in known_programs() if not p.startswith("ampkit-")]
    print(f"QEMU {args.platform}, {args.threads} threads, policy cfs, one boot per cell")
    print(f"{'workload':10} {'small size':>10} {'ms':>8} {'default size':>13} {'ms':>8}")
    with tempfile.TemporaryDirectory(prefix="ampkit-workloads-") as tmp:
        for p in programs:
            sizes = (SMALL_SIZES[p], default_size(p))
            ms = [
                turnaround_ms(
                    Path(tmp) / f"{p}-{n}",
                    build_,
                    p,
                    n,
                    platform=args.platform,
                    threads=args.threads,
                )
                for n in sizes
            ]
            print(f"{p:10} {sizes[0]:>10} {ms[0]:>8.1f} {sizes[1]:>13} {ms[1]:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
