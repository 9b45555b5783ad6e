"""ampkit's big.LITTLE platform on gem5 v24 (ARM full system).

    gem5.opt [-d OUTDIR] configs/bigLITTLE.py --platform 2B2L \\
        --kernel vmlinux --initrd ampkit.cpio.gz \\
        --bootloader <gem5>/system/arm/bootloader/arm64/boot.arm64 \\
        --mode boot --checkpoint-dir CKPT             # atomic boot, checkpoint
    gem5.opt -d RUN configs/bigLITTLE.py --platform 2B2L ... \\
        --mode detailed --restore-from CKPT --readfile run.desc   # one run

--mode boot: atomic CPUs without caches boot the kernel to the kit's
runner, which asks for a checkpoint (m5 checkpoint); it is written to
--checkpoint-dir and gem5 exits. --mode detailed: the out-of-order big and
in-order little clusters with their caches, PMUs and power models, either
restored from such a checkpoint (the runner then reads its run description
with m5 readfile) or, without --restore-from, booted from scratch. Either
way the simulation ends when the runner executes m5 exit, and stats go to
OUTDIR/stats.txt and OUTDIR/stats.json. --dtb-only PATH writes the device
tree and exits without simulating.

--slice-until TICK --slice-checkpoint DIR (detailed): a run in slices, so
that one longer than the time its machine is there resumes where it
stopped. If the guest has not ended by TICK, the slice's statistics are
dumped and reset, the system is drained, a checkpoint of it is written to
DIR (OUTDIR/ampkit-slice.json says so) and gem5 exits 0; the next slice
restores it. The host chooses the
ticks (ampkit.engines.gem5); every run restarts from a checkpoint at each
of them, interrupted or not, so where a machine stopped never changes a
result.

The platform (clusters, clocks, capacities) comes from configs/platforms.toml
through ampkit's own modules, and the device tree is gem5's, edited by
ampkit.devicetree.for_gem5: the same cpu-map and capacities QEMU's tree
gets, the PMU, and the architected counter as clocksource. The kernel
must be the ELF vmlinux (gem5 loads no raw Image).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import _m5.drain
import _m5.event
import m5
from m5.objects import Root
from m5.util.fdthelper import Fdt, FdtState

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # ampkit's platform and device-tree modules

from ampkit_gem5.board import BigLittleSystem  # noqa: E402
from ampkit_gem5.cluster import Cluster  # noqa: E402

from ampkit import calibration, devicetree, fdt  # noqa: E402
from ampkit.errors import AmpkitError  # noqa: E402
from ampkit.platform import check_gem5_platform, get_platform, make_platform  # noqa: E402

#: Cluster names: part of every CPU's path, so of the checkpoint's sections.
CLUSTER_NAMES = {"big": "bigCluster", "little": "littleCluster"}

#: Cluster voltages [assumed]: Exynos 5433's table gives 1.2625 V at 1.9 GHz
#: for the A57 and 1.1125 V at 1.2 GHz for the A53 (Linux exynos5433.dtsi).
VOLTAGES = {"big": "1.25V", "little": "1.1V"}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--platform", default="2B2L", help="a preset or <B>B<L>L")
    p.add_argument("--big", type=int, help="big CPUs (with --little)")
    p.add_argument("--little", type=int, help="little CPUs (with --big)")
    p.add_argument("--kernel", default="", help="the ELF vmlinux (not for --dtb-only)")
    p.add_argument("--initrd", help="the initramfs (ampkit.cpio.gz)")
    p.add_argument("--bootloader", help="gem5's boot.arm64")
    p.add_argument("--memory-mb", type=int, default=2048)
    p.add_argument("--cmdline", default="", help="the kernel command line")
    p.add_argument("--disk", help="a raw ext4 image, attached as /dev/vda")
    p.add_argument("--mode", choices=("boot", "detailed"), default="detailed")
    p.add_argument("--checkpoint-dir", help="boot: where the checkpoint goes")
    p.add_argument("--restore-from", help="detailed: the checkpoint to restore")
    p.add_argument("--readfile", help="the file m5 readfile gives the guest")
    p.add_argument(
        "--slice-until",
        type=int,
        metavar="TICK",
        help="detailed: end this slice at TICK with a checkpoint (--slice-checkpoint)",
    )
    p.add_argument("--slice-checkpoint", help="detailed: where the slice's checkpoint goes")
    p.add_argument("--no-power", action="store_true", help="no power models")
    p.add_argument("--dtb-only", metavar="PATH", help="write the device tree and exit")
    return p.parse_args()


def platform_of(args: argparse.Namespace):
    if args.big is not None or args.little is not None:
        if args.big is None or args.little is None:
            raise AmpkitError("--big and --little go together")
        return make_platform(args.big, args.little)
    return get_platform(args.platform)


def build(args: argparse.Namespace, plat) -> Root:
    detailed = args.mode == "detailed"
    system = BigLittleSystem(memory_mb=args.memory_mb, kernel=args.kernel, detailed=detailed)
    # parented first: the L2 power models name their cache by its full path
    root = Root(full_system=True, system=system)
    first_cpu = 0
    kinds = []
    for kind in ("big", "little"):
        core = plat.big_core if kind == "big" else plat.little_core
        count = plat.big if kind == "big" else plat.little
        if count == 0:
            continue
        cluster = Cluster(
            core=core,
            cores=count,
            voltage=VOLTAGES[kind],
            # clusters are numbered among those present, so the boot CPU
            # (the first) has MPIDR affinity 0 on single-type platforms too:
            # gem5's bootloader starts the CPU whose affinity is 0
            index=len(system.clusters()),
            first_cpu=first_cpu,
            detailed=detailed,
        )
        system.add_cluster(CLUSTER_NAMES[kind], cluster)
        kinds.append(kind)
        first_cpu += count
    for cluster in system.clusters():
        cluster.add_caches(system.membus.cpu_side_ports)
        cluster.add_pmus()
    if detailed and not args.no_power:
        # the power models' reference IPC is measured with the capacities
        cal = calibration.load()
        for kind, cluster in zip(kinds, system.clusters(), strict=True):
            cluster.add_power_models(cal.ipc(kind) if cal else None)
    if args.disk:
        system.attach_disk(args.disk)
    if args.readfile:
        system.readfile = args.readfile
    return root


def write_dtb(system, plat, path: str) -> None:
    """gem5's tree for this system, as ampkit.devicetree.for_gem5 edits it."""
    state = FdtState(addr_cells=2, size_cells=2, cpu_cells=1)
    tree = Fdt()
    tree.add_rootnode(system.generateDeviceTree(state))
    raw = path + ".gem5"
    tree.writeDtbFile(raw)
    edited = devicetree.for_gem5(fdt.DeviceTree.from_bytes(Path(raw).read_bytes()), plat)
    Path(path).write_bytes(edited.to_bytes())


def main() -> None:
    args = parse_args()
    try:
        plat = platform_of(args)
        check_gem5_platform(plat)
    except AmpkitError as e:
        m5.fatal(str(e))
    root = build(args, plat)
    system = root.system
    outdir = m5.options.outdir
    system.place_boot_loader(args.bootloader)
    dtb = args.dtb_only or os.path.join(outdir, "system.dtb")
    write_dtb(system, plat, dtb)
    if args.dtb_only:
        print(f"ampkit: device tree written to {dtb}")
        return
    if not (args.kernel and args.initrd and args.bootloader):
        m5.fatal("--kernel, --initrd and --bootloader are needed to boot")
    system.boot_with(initrd=args.initrd, cmdline=args.cmdline, dtb=dtb)
    m5.stats.addStatVisitor(f"json://{os.path.join(outdir, 'stats.json')}")

    if args.mode == "detailed" and args.restore_from:
        m5.instantiate(args.restore_from)
        # the statistics then cover the detailed region only, not the boot.
        # A dump first: resetting alone leaves each power state's last
        # evaluation tick where the checkpoint put it (PowerState keeps it
        # across a reset and only a dump moves it on), so the residencies
        # of the measured interval would also count the time before it.
        # One tick simulated before it: the power models resolve their
        # statistics at startup, which the first simulate() runs, and a
        # dump before then fails their assertion.
        m5.simulate(1)
        m5.stats.dump()
        m5.stats.reset()
    else:
        m5.instantiate()

    slicing = args.mode == "detailed" and args.slice_until is not None
    if slicing and not args.slice_checkpoint:
        m5.fatal("--slice-until needs --slice-checkpoint")
    if slicing and args.slice_until <= m5.curTick():
        m5.fatal(f"--slice-until {args.slice_until} is not after tick {m5.curTick()}")
    while True:
        event = m5.simulate(args.slice_until - m5.curTick()) if slicing else m5.simulate()
        cause = event.getCause()
        if cause == "checkpoint":
            if args.mode != "boot" or not args.checkpoint_dir:
                print("ampkit: the guest asked for a checkpoint; not taking one")
                continue
            m5.checkpoint(args.checkpoint_dir)
            print(f"ampkit: checkpoint written to {args.checkpoint_dir} at tick {m5.curTick()}")
            sys.exit(0)
        if slicing and cause == SLICE_LIMIT and m5.curTick() >= args.slice_until:
            # the slice's own dump first, at its end tick: draining wakes a
            # CPU asleep in WFI, and gem5 then counts every cycle it slept
            # (its numCycles, so its power model's IPC); the drain's few
            # hundred ns are gem5's dump at exit, which the kit leaves out
            m5.stats.dump()
            m5.stats.reset()
            record = {"until": args.slice_until}
            ended = drain_or_exit()
            if ended is None:
                m5.checkpoint(args.slice_checkpoint)
                record["checkpoint_tick"] = m5.curTick()
                write_slice_record(outdir, record)
                print(
                    f"ampkit: slice ended at tick {m5.curTick()}, "
                    f"checkpoint written to {args.slice_checkpoint}"
                )
                sys.exit(0)
            write_slice_record(outdir, record)
            event, cause = ended, ended.getCause()
        print(f"ampkit: simulation ended: {cause} at tick {m5.curTick()}")
        sys.exit(event.getCode())


#: A slice's record in gem5's output directory (ampkit.gem5stats.SLICE_RECORD;
#: not imported: the statistics' reader is not the configuration, whose
#: hash is in every run's key)
SLICE_RECORD = "ampkit-slice.json"

#: what m5.simulate(ticks) returns with when the ticks have passed
SLICE_LIMIT = "simulate() limit reached"


def drain_or_exit():
    """The system drained for the slice's end, or the exit event that came
    first. Draining takes simulated time (an out-of-order CPU completes what
    it has in flight), in which the guest may end; m5.drain() would drop
    that event and checkpoint a guest past its end. A guest's request for a
    checkpoint is not taken here either."""
    manager = _m5.drain.DrainManager.instance()
    while not manager.isDrained():
        if manager.tryDrain():
            break
        while True:
            event = _m5.event.simulate()
            cause = event.getCause()
            if cause == "Finished drain":
                break
            if cause != "checkpoint":
                return event
    return None


def write_slice_record(outdir: str, record: dict) -> None:
    """What the kit needs to tell this slice's dumps apart
    (ampkit.gem5stats.run_dumps): its end tick and, if it was taken, the
    checkpoint's."""
    path = os.path.join(outdir, SLICE_RECORD)
    with open(path, "w") as f:
        json.dump(record, f)


if __name__ == "__m5_main__":
    main()
