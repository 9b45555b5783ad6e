"""Figures for the foundation: kernel build times and the QEMU run time.

    .venv/bin/python benchmarks/foundation.py [--skip-fresh]

Prints, for this machine:
  - a fresh kernel build (new source tree, new object tree, ccache off),
    target <= 10 min;
  - a no-op rebuild ('ampkit build kernel' with nothing changed), target <= 5 s;
  - a QEMU run of the demo mix on 2B2L, boot to power-off, target <= 15 s.
Figures, not tests: nothing here fails because a number is over its target.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ampkit.rundir import RunDir

AMPKIT = [sys.executable, "-m", "ampkit"]


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.monotonic()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def row(name: str, seconds: list[float], target: float) -> str:
    best, median = min(seconds), statistics.median(seconds)
    verdict = "within" if median <= target else "OVER"
    return (
        f"{name:34} median {median:8.2f} s  min {best:8.2f} s  n={len(seconds)}  "
        f"target {target:g} s ({verdict})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--skip-fresh", action="store_true", help="skip the fresh kernel build (several minutes)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    print(f"machine: {os.cpu_count()} CPUs", flush=True)
    lines = []
    if not args.skip_fresh:
        with tempfile.TemporaryDirectory(prefix="ampkit-bench-") as cache:
            env = {
                **os.environ,
                "AMPKIT_CACHE": cache,
                "CCACHE_DISABLE": "1",
                "AMPKIT_BUILD": str(Path(cache) / "build"),
            }
            print("fresh kernel build (ccache off), this takes minutes...", flush=True)
            lines.append(row("fresh kernel build", [timed([*AMPKIT, "build", "kernel"], env)], 600))
            shutil.rmtree(cache, ignore_errors=True)

    subprocess.run([*AMPKIT, "build"], check=True, stdout=subprocess.DEVNULL)
    noop = [timed([*AMPKIT, "build", "kernel"]) for _ in range(args.repeat)]
    lines.append(row("no-op kernel rebuild", noop, 5))

    walls, boots = [], []
    with tempfile.TemporaryDirectory(prefix="ampkit-bench-run-") as tmp:
        for i in range(args.repeat):
            out = Path(tmp) / f"run{i}"
            walls.append(
                timed(
                    [
                        *AMPKIT,
                        "run",
                        "--no-build",
                        "--platform",
                        "2B2L",
                        "--mix",
                        "demo",
                        "--out",
                        str(out),
                    ]
                )
            )
            boots.append(RunDir(out).manifest()["wall_s"])
    lines.append(row("QEMU demo run, CLI end to end", walls, 15))
    lines.append(row("QEMU demo run, QEMU alone", boots, 15))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
