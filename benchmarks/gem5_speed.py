"""Figures for the gem5 engine: how fast each kind of simulation goes, and
what a shared checkpoint saves per run.

    GEM5_ROOT=... .venv/bin/python benchmarks/gem5_speed.py [--platform 2B2L]
        [--fresh-boot] [--cold-limit 3600]

1. The atomic boot to the runner's checkpoint (the one every run of a
   machine shares): simulated seconds per wall second. With --fresh-boot
   the cached checkpoint of this kernel is deleted and the boot timed now;
   otherwise the figures recorded when it was taken are printed.
2. One small run restored into the detailed clusters (ampkit run's path):
   its wall time and simulated seconds per wall second.
3. The same run booted in the detailed clusters from scratch, as a run
   without the checkpoint would have to: its wall time, stopped at
   --cold-limit seconds (0 skips it). Where it is stopped, the ratio
   printed is a lower bound and says so.

Figures, not tests; they take from minutes to hours on one host core.
"""

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from guest import small_gem5_mix  # benchmarks/guest.py

from ampkit import build, gem5stats, kernel
from ampkit.engines import gem5
from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_file
from ampkit.platform import get_platform
from ampkit.run import RunRequest, engine_identity, execute, prepare
from ampkit.rundir import GEM5_LOG, M5OUT, RUN_DESC, RunDir


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--platform", default="2B2L")
    p.add_argument("--fresh-boot", action="store_true", help="time the atomic boot now")
    p.add_argument("--cold-limit", type=float, default=3600, help="wall s for (3); 0 skips it")
    args = p.parse_args()

    try:
        found = gem5.Gem5.locate()
    except AmpkitError as e:
        print(f"gem5_speed.py: skipped: {e.what}")
        return
    build.scons("kernel", build.INITRAMFS)
    kbuild = kernel.find_build("default")
    assert kbuild is not None
    initramfs = build.initramfs_image()
    request = RunRequest(
        platform=get_platform(args.platform),
        policy="cfs",
        mix=small_gem5_mix("gem5-speed"),
        engine="gem5",
        mix_limit_s=10,
        method="once",
    )
    engine = engine_identity("gem5")
    prepared = prepare(request, engine, kbuild.manifest["digest"], sha256_file(initramfs))
    assert isinstance(prepared.machine, gem5.Gem5Machine)
    ckpt_key = gem5.checkpoint_key(
        prepared.machine,
        gem5_sha256=engine.binary_sha256,
        kernel_sha256=kbuild.manifest["artifacts"]["vmlinux"]["sha256"],
        initramfs_sha256=prepared.inputs["initramfs_sha256"],
        cmdline=prepared.cmdline,
        disk_sha256=None,
    )
    if args.fresh_boot:
        shutil.rmtree(gem5.checkpoint_dir(ckpt_key), ignore_errors=True)
    print(f"gem5: {engine.version} ({found.binary})")
    print(f"platform {args.platform}, kernel {kbuild.directory.name}")

    with tempfile.TemporaryDirectory(prefix="ampkit-gem5-speed-") as tmp:
        restored = execute(request, Path(tmp) / "restored", kbuild, initramfs, prepared=prepared)
        if not restored.ok:
            keep = Path("runs") / "gem5-speed-failed"
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(restored.directory, keep)
            raise SystemExit(f"the restored run failed: {restored.status} (kept in {keep})")
        boot = json.loads((gem5.checkpoint_dir(ckpt_key) / "boot.json").read_text())
        manifest = RunDir(restored.directory).manifest()
        summary = RunDir(restored.directory).gem5_summary()
        when = "now" if manifest["gem5"]["boot_wall_s"] else "when the checkpoint was taken"
        print(
            f"(1) atomic boot to the checkpoint ({when}): {boot['sim_seconds']:.3f} simulated s "
            f"in {boot['wall_s']:.0f} wall s = {boot['sim_seconds'] / boot['wall_s']:.4f} sim s/s"
        )
        reuse_wall = manifest["wall_s"]
        sim = summary["sim_seconds"]
        insts = sum(c["insts"] for c in summary["cpus"])
        print(
            f"(2) restored detailed run: {sim:.4f} simulated s in {reuse_wall:.0f} wall s = "
            f"{sim / reuse_wall:.6f} sim s/s ({insts / reuse_wall / 1e3:.0f} k instructions/s)"
        )
        # gem5's own clock for the simulated region alone (every dump after
        # the one at restore: warm-up, measured run, results), without its
        # start, the restore of the checkpoint and the stats output
        after_restore = (gem5stats.read_stats(restored.directory / M5OUT) or [])[1:]
        host_s = sum(d.get("hostSeconds", float("nan")) for d in after_restore)
        simulated = sum(d.get("simSeconds", float("nan")) for d in after_restore)
        print(
            f"    of which simulating (gem5's hostSeconds): {host_s:.1f} wall s for "
            f"{simulated:.4f} simulated s (warm-up and results included) = "
            f"{host_s / simulated:.0f} wall s per simulated s "
            f"(the rest, {reuse_wall - host_s:.0f} s, is start-up, restore and output)"
        )

        if args.cold_limit <= 0:
            print("(3) skipped (--cold-limit 0)")
            return
        cold_dir = Path(tmp) / "cold"
        cold_dir.mkdir()
        cmd = gem5.run_command(
            found,
            prepared.machine,
            kernel=kbuild.vmlinux,
            initrd=initramfs,
            cmdline=prepared.cmdline,
            outdir=cold_dir / M5OUT,
            readfile=restored.directory / RUN_DESC,
            checkpoint=None,
        )
        cold = gem5.simulate(cmd, cold_dir / GEM5_LOG, args.cold_limit)
        if cold.timed_out:
            print(
                f"(3) cold detailed boot + run: not done after {cold.wall_s:.0f} wall s "
                f"(--cold-limit); reuse is at least {cold.wall_s / reuse_wall:.1f}x cheaper per run"
            )
        elif cold.exit_code != 0:
            raise SystemExit(f"(3) the cold detailed run failed (exit {cold.exit_code})")
        else:
            print(
                f"(3) cold detailed boot + run: {cold.wall_s:.0f} wall s; "
                f"reuse is {cold.wall_s / reuse_wall:.1f}x cheaper per run"
            )


if __name__ == "__main__":
    main()
