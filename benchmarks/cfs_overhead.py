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

gem5 is deterministic: a configuration run again gives the same cycles,
but within one guest a sample's position matters: in a block that runs
every policy in turn, the first sample ran up to 8% slower than the last
under the same policy (the mutex ping-pong, 2026-11-26). ampkit-schedtest
reverses the policies' order every other block, so each guest runs five
blocks: the first warms caches, TLBs and predictors after the checkpoint's
restore and is dropped, and the figure is the mean over the other four,
two in each order, with their range printed beside it. Three guests: the
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
the ratios; and for the two cfs-alone guests, the instructions and cycles
of their whole run (both kinds together, and the runner's own start and
end), which tell work from layout. Figures, not tests.
"""

import argparse
import json
import tempfile
from pathlib import Path

from guest import run_alone  # benchmarks/guest.py

from ampkit import build, kernel
from ampkit.engines import gem5
from ampkit.errors import AmpkitError
from ampkit.mix import App
from ampkit.rundir import RunDir

KINDS = ("pipe-pingpong", "mutex-pingpong")
PATCHED_POLICIES = ("cfs", "cfs+stats", "colab", "wash")
BLOCKS = 5  # the first warms up after the restore and is dropped; 2-5 alternate the order


def samples(
    out: Path,
    variant: str,
    policies: tuple[str, ...],
    *,
    platform: str,
    rounds: int,
    cmdline: str = "",
) -> dict[tuple[str, str], tuple[float, float, float]]:
    """ns per round by (kind, policy), from one gem5 run: the mean over every
    block but the first, two in each order of the policies, and the range."""
    build.scons(build.kernel_target(variant), build.INITRAMFS)
    built = kernel.find_build(variant)
    assert built is not None
    record = run_alone(
        out,
        built,
        App(
            program="ampkit-schedtest",
            threads=2,
            size=1,
            args=("overhead", str(rounds), str(BLOCKS), ",".join(policies)),
        ),
        name="cfs-overhead",
        category="communication",
        platform=platform,
        policy="cfs",
        mix_limit_s=60,
        engine="gem5",
        kernel_variant=variant,
        extra_cmdline=cmdline,
    )
    found = json.loads(record["output"])["samples"]
    kept = found[len(found) // BLOCKS :]
    by: dict[tuple[str, str], list[float]] = {}
    for sample in kept:
        by.setdefault((str(sample["kind"]), str(sample["policy"])), []).append(
            float(sample["ns_per_round"])
        )
    return {k: (sum(v) / len(v), min(v), max(v)) for k, v in by.items()}


def work(run: Path) -> tuple[float, float]:
    """Instructions committed and cycles, over every CPU, of a gem5 run's
    measured interval (gem5.json, the run's statistics summary)."""
    cpus = RunDir(run).gem5_summary()["cpus"]
    return sum(float(c["insts"]) for c in cpus), sum(float(c["cycles"]) for c in cpus)


def _ns(figure: tuple[float, float, float]) -> str:
    mean, low, high = figure
    return f"{mean:8.1f} ns [{low:.0f}-{high:.0f}]"


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
        # the two cfs-alone guests run the same initramfs: what differs in
        # the instructions they commit is the kernel's
        base_work, alone_work = work(where / "unpatched"), work(where / "patched-cfs")
    print(
        f"gem5, {args.platform}, {args.rounds} rounds per sample, mean of blocks 2-{BLOCKS} "
        "(both orders of the policies), [min-max]"
    )
    print("cfs alone in each guest (the same history): kit / unpatched")
    for kind in KINDS:
        ref, kit = base[(kind, "cfs")], alone[(kind, "cfs")]
        print(f"  {kind:15} unpatched {_ns(ref)}  kit {_ns(kit)}  ratio {kit[0] / ref[0]:.4f}")
    rounds = args.rounds * BLOCKS * len(KINDS)
    print(
        f"  both guests' whole run ({rounds} rounds of both kinds): instructions "
        f"{alone_work[0] / base_work[0]:.4f} (kit {alone_work[0] / rounds:,.0f} a round, "
        f"unpatched {base_work[0] / rounds:,.0f}), cycles {alone_work[1] / base_work[1]:.4f}"
    )
    setup = f"kernel {args.kernel}" + (f", {args.append}" if args.append else "")
    print(f"every policy in one kit guest ({setup}): policy / cfs")
    for kind in KINDS:
        baseline = mixed[(kind, "cfs")][0]
        ratios = "  ".join(
            f"{policy} {_ns(mixed[(kind, policy)])} ({mixed[(kind, policy)][0] / baseline:.4f})"
            for policy in PATCHED_POLICIES
        )
        print(f"  {kind:15} {ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
