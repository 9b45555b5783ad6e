"""Figures: the kernel's futex selftests on the unpatched kernel and the kit's.

    .venv/bin/python benchmarks/futex_selftests_unpatched.py [--boots 3]
        [--clocks host,instructions]

Some of the futex selftests assume a CPU of some speed: futex_requeue's
"many" case and futex_wait's private case create waiters, sleep 10 ms of
guest time and wake them, and a waiter gives up 30 ms after it blocked;
all ten of "many"'s waiters must be blocked when the 10 ms end. Under
TCG with the host clock, a loaded host stalls vCPUs for longer than
that. Whether a case that fails there is the series' defect or the
test's timing is decided by running the suite in the same conditions on
the unpatched Debian 6.1 kernel of the same configuration (``ampkit
build kernel-unpatched``): one boot per kernel and clock on 2B2L, in
turn, BOOTS times; the unpatched kernel under whatever policy it has
(``-``), the kit's under ``cfs``. Printed per kernel and clock: in how
many boots each case failed, with its TAP letters, and the boots in
which every case passed. Figures, not tests: whether the host clock
fails a case depends on how loaded the host is. The qemu tier runs the
suite on the ``instructions`` clock, where guest time does not.
"""

import argparse
import os
import tempfile
from collections import Counter
from pathlib import Path

from guest import run_alone  # benchmarks/guest.py

from ampkit import build, kernel, selftests
from ampkit.engines.qemu import CLOCKS
from ampkit.mix import App

#: kernel variant, and the phase ampkit-selftest runs on it
KERNELS = (("unpatched", "-"), ("default", "cfs"))


def one_boot(out: Path, build_: kernel.KernelBuild, phase: str, clock: str) -> list[str]:
    """The cases that did not pass in one boot, as 'program args (TAP)'."""
    record = run_alone(
        out,
        build_,
        App(program="ampkit-selftest", threads=1, size=1, args=(selftests.GUEST_DIR, phase)),
        name="futex-selftests",
        category="synchronisation",
        platform="2B2L",
        policy="cfs",
        mix_limit_s=300,
        method="once",
        qemu_clock=clock,
        wall_limit_s=600,
    )
    report = selftests.parse_report(record["output"])
    if not report.done:
        raise SystemExit(f"the suite did not finish ({out})")
    return [f"{r.command} ({r.tap})" for r in report.results if not r.passed]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boots", type=int, default=3, help="boots per kernel and clock")
    parser.add_argument("--clocks", default="host,instructions", help=f"of {', '.join(CLOCKS)}")
    args = parser.parse_args()
    clocks = args.clocks.split(",")
    for clock in clocks:
        if clock not in CLOCKS:
            parser.error(f"unknown clock '{clock}' (valid: {', '.join(CLOCKS)})")
    build.scons(build.INITRAMFS, *(build.kernel_target(v) for v, _ in KERNELS))
    builds = {}
    for variant, _ in KERNELS:
        found = kernel.find_build(variant)
        assert found is not None
        builds[variant] = found
    load = os.getloadavg()[0]
    print(
        f"machine: {os.cpu_count()} CPUs, load {load:.1f} at the start; 2B2L guests, "
        f"{args.boots} boots per kernel and clock, the kernels in turn"
    )
    with tempfile.TemporaryDirectory(prefix="ampkit-futex-selftests-") as tmp:
        for clock in clocks:
            failed: dict[str, Counter[str]] = {v: Counter() for v, _ in KERNELS}
            clean: Counter[str] = Counter()
            for boot in range(args.boots):
                for variant, phase in KERNELS:
                    out = Path(tmp) / f"{variant}-{clock}-{boot}"
                    cases = one_boot(out, builds[variant], phase, clock)
                    failed[variant].update(cases)
                    clean[variant] += not cases
            print(f"clock {clock}:")
            for variant, _ in KERNELS:
                which = ", ".join(f"{c} in {n}" for c, n in sorted(failed[variant].items()))
                print(
                    f"  {variant:9s} every case passed in {clean[variant]} of {args.boots} "
                    f"boots; failed: {which or 'none'}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
