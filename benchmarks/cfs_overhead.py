"""Figures for what the series costs the CFS baseline, measured on gem5.

    GEM5_ROOT=$(../shared/gem5/unpack) .venv/bin/python benchmarks/cfs_overhead.py
        [--rounds 300] [--platform 1B1L] [--kernel hz1000 --append sched_timescale=4]

The kit claims that under ``cfs``, with the per-task counters off
(``kernel.sched_colab_stats=0``), the patched kernel runs what an unpatched
6.1 kernel runs on every scheduler hot path but for patched-out static
branches. This measures it. Two kernels of the same configuration boot on
gem5, one big and one little CPU by default: the unpatched Debian source
(``ampkit build kernel-unpatched``) and the kit's kernel. In each guest
ampkit-schedtest runs its two ping-pongs: pipe-pingpong (round trips
between two threads over pipes: wake-ups, context switches, placement) and
mutex-pingpong (hand-offs through a mutex and a condition variable: futex
waits and wakes). On the kit's kernel they run under ``cfs`` with the
counters off, ``cfs+stats`` (the counters on, as under every run the kit
makes), ``colab`` and ``wash``, in one guest.

gem5 is deterministic: a configuration run again gives the same cycles, so
one run is the figure and there is no noise to average away. Each guest
runs two blocks and only the second counts (the first warms caches, TLBs
and predictors after the checkpoint's restore). Three guests: the
unpatched kernel running cfs alone; the kit's kernel running cfs alone,
the same guest history, for the headline ratio; and the kit's kernel
running every policy in turn, for each policy's cost relative to cfs in
that same guest. ``--kernel`` and ``--append`` set the kernel variant and
command line of that last guest, to measure the policies at an
evaluation's setup (its tick and time scale); the kit-against-unpatched
comparison stays on the default kernel, the one variant built both ways.
Two kernels of different builds also differ in code
layout (alignment, cache and predictor conflicts), so a difference of a
few percent either way between them is not necessarily instructions.
Printed: simulated ns per round (the guest's clock is simulated time) and
the ratios. Figures, not tests.
"""

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ampkit import build, kernel
from ampkit.engines import gem5
from ampkit.errors import AmpkitError
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute

KINDS = ("pipe-pingpong", "mutex-pingpong")
PATCHED_POLICIES = ("cfs", "cfs+stats", "colab", "wash")
BLOCKS = 2  # the first warms up after the restore and is dropped


def samples(
    out: Path,
    variant: str,
    policies: tuple[str, ...],
    *,
    platform: str,
    rounds: int,
    cmdline: str = "",
) -> dict[tuple[str, str], float]:
    """ns per round of the last block, by (kind, policy), from one gem5 run."""
    build.scons(build.kernel_target(variant), build.INITRAMFS)
    built = kernel.find_build(variant)
    assert built is not None
    app = App(
        program="ampkit-schedtest",
        threads=2,
        size=1,
        args=("overhead", str(rounds), str(BLOCKS), ",".join(policies)),
    )
    mix = Mix(
        name="cfs-overhead",
        description="the scheduler's hot paths",
        category="communication",
        apps=(app,),
        source=Path("cfs-overhead"),
    )
    request = RunRequest(
        platform=get_platform(platform),
        policy="cfs",
        mix=mix,
        engine="gem5",
        kernel_variant=variant,
        extra_cmdline=cmdline,
        mix_limit_s=60,
    )
    outcome = execute(request, out, built, build.initramfs_image())
    if not outcome.ok:
        raise SystemExit(f"the {variant} run failed: {outcome.status} ({out})")
    record: dict[str, Any] = outcome.report.apps[0]
    found = json.loads(record["output"])["samples"]
    last = found[len(found) // BLOCKS * (BLOCKS - 1) :]
    return {(str(s["kind"]), str(s["policy"])): float(s["ns_per_round"]) for s in last}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=300, help="rounds per sample")
    p.add_argument("--platform", default="1B1L")
    p.add_argument("--keep", type=Path, help="keep the three run directories here")
    p.add_argument(
        "--kernel",
        default="default",
        choices=sorted(set(kernel.VARIANTS) - kernel.PRISTINE_VARIANTS),
        help="the kernel variant of the every-policy guest",
    )
    p.add_argument("--append", default="", help="its extra kernel command line")
    args = p.parse_args()
    try:
        gem5.Gem5.locate()
    except AmpkitError as e:
        print(f"cfs_overhead.py: skipped: {e.what}")
        return 0

    with tempfile.TemporaryDirectory(prefix="ampkit-cfs-overhead-") as tmp:
        where = args.keep or Path(tmp)
        common = {"platform": args.platform, "rounds": args.rounds}
        base = samples(where / "unpatched", "unpatched", ("cfs",), **common)
        alone = samples(where / "patched-cfs", "default", ("cfs",), **common)
        mixed = samples(
            where / "patched-all", args.kernel, PATCHED_POLICIES, cmdline=args.append, **common
        )
    print(f"gem5, {args.platform}, {args.rounds} rounds per sample, block 2 of {BLOCKS}")
    print("cfs alone in each guest (the same history): kit / unpatched")
    for kind in KINDS:
        ref, kit = base[(kind, "cfs")], alone[(kind, "cfs")]
        print(f"  {kind:15} unpatched {ref:9.1f} ns  kit {kit:9.1f} ns  ratio {kit / ref:.4f}")
    setup = f"kernel {args.kernel}" + (f", {args.append}" if args.append else "")
    print(f"every policy in one kit guest ({setup}): policy / cfs")
    for kind in KINDS:
        ref = mixed[(kind, "cfs")]
        ratios = "  ".join(
            f"{policy} {mixed[(kind, policy)]:8.1f} ns ({mixed[(kind, policy)] / ref:.4f})"
            for policy in PATCHED_POLICIES
        )
        print(f"  {kind:15} {ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
