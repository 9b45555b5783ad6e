"""Figures for the gem5 machine's fidelity: what the calibration measured,
the programs' speedups, what the warm-up costs, and where a mix's energy goes.

    GEM5_ROOT=... .venv/bin/python benchmarks/gem5_fidelity.py
        [--profile PATH] [--platform 2B2L] [--skip-runs]

1. The little core's calibrated capacity (configs/calibration.toml, written
   by 'ampkit platform calibrate'): its per-MHz figure against the big
   core's 1024, the capacity at the platform's clocks, each core's IPC on
   intmark, and whether the record describes this gem5 and machine model.
2. Each program's big-over-little speedup on gem5, from a speedup profile
   ('ampkit profile --engine gem5'; default the shipped table,
   configs/speedups.toml), beside the prior the catalogue's mixes used
   before it was measured.
3. The warm-up's cost: one small mix on --platform, once without a
   warm-up and once with gem5's default, each restored from the shared
   checkpoint: wall seconds of each, and how much the cold start changed
   the mix's turnarounds.
4. The energy of that warm run, split into CPUs, L2s and DRAM.
5. What each core model makes of a result's latency: chains of dependent
   instructions ('ampkit-probe latency') alone on 1B0L and 0B1L, cycles
   per op by the PMU, beside the figures their sources give (the gem5
   tier checks the little core's; the big core's are shown against
   LLVM's A57 model, which gem5's O3 follows only in part: one latency
   per op class, whatever the operand width).

Figures, not tests: (3) to (5) take a few wall minutes (--skip-runs
leaves them out).
"""

import argparse
import json
import tempfile
from pathlib import Path

from guest import small_gem5_mix  # benchmarks/guest.py

from ampkit import build, calibration, kernel
from ampkit.engines import gem5
from ampkit.errors import AmpkitError
from ampkit.mix import PRIOR_SPEEDUPS, App, Mix
from ampkit.platform import get_platform
from ampkit.profile import SHIPPED_PROFILE, load_profile
from ampkit.run import RunRequest, execute
from ampkit.rundir import RunDir


def calibrated_capacity(platform: str, gem5_sha256: str | None) -> None:
    cal = calibration.load()
    if cal is None:
        print("(1) no configs/calibration.toml: run 'ampkit platform calibrate'")
        return
    plat = get_platform(platform)
    print(
        f"(1) little core: {cal.little_dmips_per_mhz} per MHz against the big core's "
        f"{calibration.SCALE} ({cal.benchmark} n{cal.size}, {cal.date}; Juno's figure is 578)"
    )
    print(
        f"    capacity at {plat.big_core.clock_mhz}/{plat.little_core.clock_mhz} MHz: "
        f"{plat.cpus[-1].capacity} (Juno's 578 would give 347); "
        f"big {cal.big_ns / 1e6:.3f} ms, little {cal.little_ns / 1e6:.3f} ms, "
        f"IPC big {cal.big_ipc:.3f}, little {cal.little_ipc:.3f}"
    )
    for reason in calibration.stale_reasons(cal, gem5_sha256=gem5_sha256):
        print(f"    STALE: {reason}")


def speedup_table(path: Path) -> None:
    if not path.is_file():
        print(f"(2) no speedup profile at {path}: 'ampkit profile --engine gem5 --out {path}'")
        return
    prof = load_profile(path)
    print(f"(2) speedups on {prof.engine}, {prof.cpus}B0L against 0B{prof.cpus}L ({path})")
    print(f"    {'program':10} {'threads':>7} {'size':>7} {'big ms':>9} {'little ms':>9} ", end="")
    print(f"{'speedup':>7} {'prior':>5}")
    for e in prof.entries:
        big = sum(e.big_ns) / len(e.big_ns) / 1e6
        little = sum(e.little_ns) / len(e.little_ns) / 1e6
        prior = PRIOR_SPEEDUPS.get(e.app.program)
        print(
            f"    {e.app.program:10} {e.app.threads:>7} {e.app.size:>7} {big:>9.3f} "
            f"{little:>9.3f} {e.speedup:>7.3f} {prior if prior is not None else '':>5}"
        )


def warm_up_and_energy(platform: str) -> None:
    build.scons("kernel", build.INITRAMFS)
    kbuild = kernel.find_build("default")
    assert kbuild is not None
    initramfs = build.initramfs_image()
    runs = {}
    with tempfile.TemporaryDirectory(prefix="ampkit-gem5-fidelity-") as tmp:
        for warmup in (0, gem5.WARMUP_MS):
            request = RunRequest(
                platform=get_platform(platform),
                policy="cfs",
                mix=small_gem5_mix("gem5-fidelity"),
                engine="gem5",
                mix_limit_s=10,
                method="once",
                warmup_ms=warmup,
            )
            out = execute(request, Path(tmp) / f"warmup-{warmup}", kbuild, initramfs)
            if not out.ok:
                raise SystemExit(f"the run with warmup_ms {warmup} failed: {out.status}")
            rd = RunDir(out.directory)
            _, records = rd.check()
            runs[warmup] = (rd.manifest()["wall_s"], records, rd.gem5_summary())
    (cold_wall, cold_recs, _), (warm_wall, warm_recs, summary) = runs[0], runs[gem5.WARMUP_MS]
    print(
        f"(3) warm-up of {gem5.WARMUP_MS} ms on {platform}: {warm_wall:.0f} wall s against "
        f"{cold_wall:.0f} without, {warm_wall - cold_wall:+.0f} s per run"
    )
    for cold, warm in zip(cold_recs, warm_recs, strict=True):
        change = warm.turnaround_ns / cold.turnaround_ns - 1
        print(
            f"    {cold.name}: turnaround {cold.turnaround_ns / 1e6:.3f} ms cold, "
            f"{warm.turnaround_ns / 1e6:.3f} ms warm ({change:+.1%})"
        )
    cpu = sum(c["cpu_energy_j"] for c in summary["clusters"])
    l2 = sum(c["l2_energy_j"] for c in summary["clusters"])
    dram = sum(m["energy_j"] for m in summary["memory"])
    total = summary["energy_j"]
    print(
        f"(4) energy of the warm run ({summary['sim_seconds'] * 1e3:.3f} simulated ms): "
        f"{total * 1e3:.3f} mJ = CPUs {cpu / total:.1%}, L2s {l2 / total:.1%}, "
        f"DRAM {dram / total:.1%}"
    )


def chain_latencies() -> None:
    kbuild = kernel.find_build("default")
    assert kbuild is not None
    initramfs = build.initramfs_image()
    measured = {}
    with tempfile.TemporaryDirectory(prefix="ampkit-gem5-fidelity-") as tmp:
        for kind, plat in (("big", "1B0L"), ("little", "0B1L")):
            request = RunRequest(
                platform=get_platform(plat),
                policy="cfs",
                mix=Mix(
                    name="gem5-latency",
                    description="the latency probe alone",
                    category="compute",
                    apps=(App("ampkit-probe", threads=1, size=1, args=("latency",)),),
                    source=Path("gem5-latency"),
                ),
                engine="gem5",
                mix_limit_s=10,
                method="once",
            )
            out = execute(request, Path(tmp) / plat, kbuild, initramfs)
            if not out.ok:
                raise SystemExit(f"the latency probe on {plat} failed: {out.status}")
            result = json.loads(out.report.apps[0]["output"])
            if result["errno"]:
                raise SystemExit(f"the latency probe on {plat}: {result['error']}")
            measured[kind] = result["cycles_per_op"]
    print("(5) cycles per op of dependent chains (measured, sources' figure in brackets)")
    print(f"    {'chain':12} {'big (O3, A57-like)':>20} {'little (Minor, A53-like)':>26}")
    for chain in gem5.SOURCED_CHAIN_CYCLES["little"]:
        big = f"{measured['big'][chain]:.2f} [{gem5.SOURCED_CHAIN_CYCLES['big'][chain]}]"
        little = f"{measured['little'][chain]:.2f} [{gem5.SOURCED_CHAIN_CYCLES['little'][chain]}]"
        print(f"    {chain:12} {big:>20} {little:>26}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--platform", default="2B2L")
    p.add_argument(
        "--profile",
        type=Path,
        default=SHIPPED_PROFILE,
        help="a gem5 speedup profile (default the shipped table)",
    )
    p.add_argument("--skip-runs", action="store_true", help="figures (1) and (2) only")
    args = p.parse_args()
    try:
        identity = gem5.ENGINE.identity()
    except AmpkitError as e:
        print(f"gem5_fidelity.py: no gem5 ({e.what}); (1) and (2) only")
        identity = None
    calibrated_capacity(args.platform, identity.binary_sha256 if identity else None)
    speedup_table(args.profile)
    if identity is None or args.skip_runs:
        return
    warm_up_and_energy(args.platform)
    chain_latencies()


if __name__ == "__main__":
    main()
