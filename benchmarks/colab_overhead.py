"""Figures for COLAB's scheduler overhead inside the guest, against CFS.

    .venv/bin/python benchmarks/colab_overhead.py [--repeat N] [--rounds N]

Boots the kit kernel on the 2B2L QEMU machine once per policy, scenario and
repetition (alternating the policies, so drift hits both alike) and runs
ampkit-schedtest's pipe-pingpong (round trips between two threads over a
pipe: wake-ups and placements) and mutex-pingpong (hand-offs through a
mutex and a condition variable: futex waits and wakes, the path COLAB
charges). Prints the median time per round under each policy and their
ratio colab / cfs, with targets 1.03 (pipe) and 1.05 (mutex).

QEMU runs the guest by translation, so absolute times mean little; the
ratio, measured in one run of this script, is the figure. Figures, not
tests: nothing here fails because a ratio is over its target.
"""

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from ampkit import build, kernel
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute

TARGETS = {"pipe-pingpong": 1.03, "mutex-pingpong": 1.05}


def one_run(
    out: Path, build_: kernel.KernelBuild, policy: str, scenario: str, rounds: int
) -> float:
    """ns per round of one scenario in one fresh guest."""
    mix = Mix(
        name=scenario,
        description="overhead benchmark",
        category="communication",
        apps=(App(program="ampkit-schedtest", threads=2, size=1, args=(scenario, str(rounds))),),
        source=Path(scenario),
    )
    request = RunRequest(platform=get_platform("2B2L"), policy=policy, mix=mix)
    outcome = execute(request, out, build_, build.initramfs_image())
    if not outcome.ok:
        raise SystemExit(f"{scenario} under {policy} failed: {outcome.status} ({out})")
    return float(json.loads(outcome.report.apps[0]["output"])["ns_per_round"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="boots per policy and scenario")
    parser.add_argument("--rounds", type=int, default=20000, help="rounds per boot")
    args = parser.parse_args()

    build.scons("kernel", build.INITRAMFS)
    build_ = kernel.find_build("default")
    assert build_ is not None
    print(f"machine: {os.cpu_count()} CPUs; 2B2L guest; {args.rounds} rounds per boot")
    results: dict[str, dict[str, list[float]]] = {s: {"cfs": [], "colab": []} for s in TARGETS}
    with tempfile.TemporaryDirectory(prefix="ampkit-overhead-") as tmp:
        n = 0
        for i in range(args.repeat):
            for scenario in TARGETS:
                for policy in ("cfs", "colab") if i % 2 == 0 else ("colab", "cfs"):
                    n += 1
                    ns = one_run(Path(tmp) / f"run{n}", build_, policy, scenario, args.rounds)
                    results[scenario][policy].append(ns)
                    print(f"  {scenario:15} {policy:6} {ns:10.1f} ns/round", flush=True)
    for scenario, target in TARGETS.items():
        cfs = statistics.median(results[scenario]["cfs"])
        colab = statistics.median(results[scenario]["colab"])
        ratio = colab / cfs
        verdict = "within" if ratio <= target else "OVER"
        print(
            f"{scenario:15} cfs {cfs:10.1f} ns  colab {colab:10.1f} ns  "
            f"ratio {ratio:5.3f}  target {target} ({verdict})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
