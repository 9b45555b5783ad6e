"""The gem5 engine: the kit's kernel and initramfs on gem5's big.LITTLE system.

The kit never builds gem5 and ships none of its code. It runs the user's
gem5 v24 ARM build, found through ``GEM5_ROOT`` or ``[gem5] root`` in the
ampkit config file (``$XDG_CONFIG_HOME/ampkit/config.toml``), a gem5
source tree in which two things have been built:

    build/ARM/gem5.opt                        scons build/ARM/gem5.opt
    system/arm/bootloader/arm64/boot.arm64    make -C system/arm/bootloader/arm64

and runs ``configs/bigLITTLE.py`` (the kit's own configuration, written
against ``m5.objects``) with it. A run is two simulations, the first one
shared: an atomic boot up to the runner's m5 checkpoint, cached per
(platform, memory, kernel, initramfs, command line, gem5 binary,
configuration) hash, then, per run, a restore into the detailed clusters
that hands the runner its run description through m5 readfile.

Every check that can fail before gem5 starts does: a missing binary or
bootloader, a kernel that is a raw Image rather than an ELF vmlinux, a
checkpoint taken for another platform or memory size.
"""

import ast
import fcntl
import json
import lzma
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ampkit import calibration, gem5stats, process, tracing
from ampkit.console import RESULTS_END
from ampkit.engines.base import (
    BootInputs,
    Engine,
    EngineIdentity,
    EngineOutcome,
    EngineResult,
    Setup,
)
from ampkit.errors import AmpkitError, MissingDependency
from ampkit.hashing import atomic_write_text, sha256_file, sha256_file_memo, sha256_json, write_json
from ampkit.paths import CONFIGS, cache_dir
from ampkit.platform import Platform, check_gem5_platform
from ampkit.rundir import (
    BOOT_PREFIX,
    CONSOLE,
    GEM5_COMMAND,
    GEM5_LOG,
    GEM5_TERMINAL,
    M5OUT,
    RunWriter,
)
from ampkit.tomlfile import TomlFile

if TYPE_CHECKING:
    from ampkit.run import RunRequest

BINARY = Path("build/ARM/gem5.opt")
BOOTLOADER = Path("system/arm/bootloader/arm64/boot.arm64")
SCRIPT = CONFIGS / "bigLITTLE.py"

#: The kernel command line on gem5: the PL011 of VExpress_GEM5_V1, the
#: initramfs's runner, the run description from the simulator, and
#: memory as simulated (gem5's DTB memory node says the same).
BASE_CMDLINE = "console=ttyAMA0 earlycon=pl011,0x1c090000 rdinit=/init panic=-1 ampkit_desc=m5"

#: Names the gem5 tree; the config file's [gem5] root is read when it is unset.
ENV_VAR = "GEM5_ROOT"


def config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ampkit" / "config.toml"


@dataclass(frozen=True)
class Gem5:
    """A gem5 v24 tree with the ARM binary and the arm64 bootloader built."""

    root: Path
    binary: Path
    bootloader: Path

    @classmethod
    def locate(cls) -> "Gem5":
        """The configured gem5, or one error naming what is missing and what to build."""
        root_s = os.environ.get(ENV_VAR)
        source = f"${ENV_VAR}"
        if not root_s:
            path = config_file()
            if path.is_file():
                config = TomlFile(path)
                config.only_keys((), ("gem5",), "an ampkit config table")
                config.only_keys(("gem5",), ("root",), "a [gem5] key")
                root_s = config.string(("gem5", "root"), default="") or None
                source = f"{path} ([gem5] root)"
        if not root_s:
            raise MissingDependency(
                "no gem5 build is configured",
                f"set {ENV_VAR} to a gem5 v24 source tree with build/ARM/gem5.opt built, "
                f'or write [gem5] root = "..." in {config_file()}',
            )
        root = Path(root_s).expanduser()
        binary, bootloader = root / BINARY, root / BOOTLOADER
        if not binary.is_file():
            raise MissingDependency(
                f"no gem5 binary at {binary} (gem5 tree from {source})",
                f"build it: cd {root} && scons build/ARM/gem5.opt -j$(nproc)",
            )
        if not bootloader.is_file():
            raise MissingDependency(
                f"no arm64 bootloader at {bootloader} (gem5 tree from {source})",
                f"build it: make -C {root / BOOTLOADER.parent}",
            )
        return cls(root=root, binary=binary, bootloader=bootloader)

    def version(self) -> str:
        """gem5's version, as its banner prints it (``--build-info`` fails in
        v24: m5.defines lost gem5Version, the core module has it)."""
        ask = "import _m5.core; print('gem5 version', _m5.core.gem5Version)"
        with tempfile.TemporaryDirectory(prefix="ampkit-gem5-version-") as tmp:
            # gem5 makes its output directory (m5out) even for this
            out = subprocess.run(
                [str(self.binary), "-q", "-d", tmp, "-c", ask],
                capture_output=True,
                text=True,
                timeout=120,
            )
        for line in out.stdout.splitlines():
            if line.startswith("gem5 version"):
                return line.strip()
        return "gem5 (version unknown)"


def check_kernel(vmlinux: Path) -> None:
    """gem5 loads ELF files only, and needs the symbols to use the device tree."""
    try:
        with vmlinux.open("rb") as f:
            head = f.read(64)
    except OSError as e:
        raise AmpkitError(f"cannot read the kernel {vmlinux}: {e.strerror}") from e
    if head[:4] != b"\x7fELF":
        hint = "pass the ELF vmlinux of the kernel build (ampkit build kernel keeps it)"
        if head[56:60] == b"ARM\x64" or vmlinux.name == "Image":
            raise AmpkitError(f"{vmlinux} is an arm64 Image, not an ELF vmlinux", hint)
        raise AmpkitError(f"{vmlinux} is not an ELF file", hint)
    if head[4] != 2 or int.from_bytes(head[18:20], "little") != 183:  # ELFCLASS64, EM_AARCH64
        raise AmpkitError(f"{vmlinux} is an ELF file but not a 64-bit arm64 kernel")


@dataclass(frozen=True)
class Gem5Machine:
    """What the configuration builds, and what a checkpoint must match."""

    platform: Platform
    memory_mb: int = 2048

    def __post_init__(self) -> None:
        check_gem5_platform(self.platform)

    def args(self) -> list[str]:
        return [
            "--big",
            str(self.platform.big),
            "--little",
            str(self.platform.little),
            "--memory-mb",
            str(self.memory_mb),
        ]

    def describe(self) -> dict[str, Any]:
        return {
            "platform": self.platform.name,
            "big": self.platform.big,
            "little": self.platform.little,
            "memory_mb": self.memory_mb,
        }


def _script_command(
    gem5: Gem5, machine: Gem5Machine, *, outdir: Path, kernel: Path | None
) -> list[str]:
    """gem5, its output directory, the kit's script, the machine and the kernel."""
    return [
        str(gem5.binary),
        "-d",
        str(outdir),
        str(SCRIPT),
        *machine.args(),
        *(["--kernel", str(kernel)] if kernel else []),
    ]


def gem5_errors(log: Path) -> list[str]:
    """gem5's own fatal and panic lines in its log ("fatal: ..."): why a
    simulation stopped before the guest could say anything."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [f"gem5: {line.strip()}" for line in lines if line.startswith(("fatal:", "panic:"))]


def dtb_command(gem5: Gem5, machine: Gem5Machine, *, out: Path) -> list[str]:
    """gem5 writing the device tree of this machine to out, simulating nothing."""
    shared = _script_command(gem5, machine, outdir=out.parent / "m5out-dtb", kernel=None)
    return [*shared, "--dtb-only", str(out)]


def device_tree(gem5: Gem5, machine: Gem5Machine, timeout_s: float = 300) -> bytes:
    """The device tree the kernel boots with on this machine, as the kit's
    configuration makes it (gem5's tree, then devicetree.for_gem5)."""
    with tempfile.TemporaryDirectory(prefix="ampkit-gem5-dtb-") as tmp:
        out = Path(tmp) / "system.dtb"
        log = Path(tmp) / GEM5_LOG
        result = simulate(dtb_command(gem5, machine, out=out), log, timeout_s)
        if result.exit_code != 0 or not out.is_file():
            tail = log.read_text(errors="replace")[-2000:]
            raise AmpkitError(
                f"gem5 could not write the device tree of {machine.platform.name} "
                f"(exit {result.exit_code}); its output ends:\n{tail}",
                "check that GEM5_ROOT is a gem5 v24 ARM build",
            )
        return out.read_bytes()


def _simulate_command(
    gem5: Gem5,
    machine: Gem5Machine,
    *,
    kernel: Path,
    initrd: Path,
    cmdline: str,
    outdir: Path,
    disk: Path | None,
) -> list[str]:
    """What a boot and a run share: the machine, the kernel, its initramfs
    and command line, gem5's bootloader, the disk."""
    return [
        *_script_command(gem5, machine, outdir=outdir, kernel=kernel),
        "--initrd",
        str(initrd),
        "--bootloader",
        str(gem5.bootloader),
        "--cmdline",
        cmdline,
        *(["--disk", str(disk)] if disk else []),
    ]


def boot_command(
    gem5: Gem5,
    machine: Gem5Machine,
    *,
    kernel: Path,
    initrd: Path,
    cmdline: str,
    outdir: Path,
    checkpoint: Path,
    disk: Path | None = None,
) -> list[str]:
    """The atomic boot that ends in the runner's checkpoint."""
    shared = _simulate_command(
        gem5, machine, kernel=kernel, initrd=initrd, cmdline=cmdline, outdir=outdir, disk=disk
    )
    return [*shared, "--mode", "boot", "--checkpoint-dir", str(checkpoint)]


def run_command(
    gem5: Gem5,
    machine: Gem5Machine,
    *,
    kernel: Path,
    initrd: Path,
    cmdline: str,
    outdir: Path,
    readfile: Path,
    checkpoint: Path | None,
    disk: Path | None = None,
    slice_until: int | None = None,
    slice_checkpoint: Path | None = None,
) -> list[str]:
    """One run in the detailed clusters: restored from checkpoint, or booted
    in them when checkpoint is None (slow; the benchmark compares the two).
    With ``slice_until``, one slice of it, ending at that tick with a
    checkpoint in ``slice_checkpoint`` unless the guest ends first."""
    shared = _simulate_command(
        gem5, machine, kernel=kernel, initrd=initrd, cmdline=cmdline, outdir=outdir, disk=disk
    )
    restore = ["--restore-from", str(checkpoint)] if checkpoint else []
    sliced = []
    if slice_until is not None:
        if slice_checkpoint is None:
            raise AmpkitError("a slice of a run needs the directory of its checkpoint")
        sliced = ["--slice-until", str(slice_until), "--slice-checkpoint", str(slice_checkpoint)]
    return [*shared, "--mode", "detailed", *restore, "--readfile", str(readfile), *sliced]


def inputs_command(
    gem5: Gem5,
    inputs: BootInputs,
    *,
    outdir: Path,
    checkpoint: Path,
    slice_until: int | None = None,
    slice_checkpoint: Path | None = None,
) -> list[str]:
    """run_command for a run's boot inputs, restored from ``checkpoint``."""
    machine = inputs.machine
    assert isinstance(machine, Gem5Machine)
    return run_command(
        gem5,
        machine,
        kernel=inputs.vmlinux,
        initrd=inputs.initramfs,
        cmdline=inputs.cmdline,
        outdir=outdir,
        readfile=inputs.run_desc,
        checkpoint=checkpoint,
        disk=inputs.disk,
        slice_until=slice_until,
        slice_checkpoint=slice_checkpoint,
    )


def checkpoint_key(
    machine: Gem5Machine,
    *,
    gem5_sha256: str,
    kernel_sha256: str,
    initramfs_sha256: str,
    cmdline: str,
    disk_sha256: str | None,
) -> str:
    """What a checkpoint depends on: the machine, every input of the boot, and
    the configuration scripts (they decide what the checkpoint holds)."""
    return sha256_json(
        {
            "machine": machine.describe(),
            "gem5_sha256": gem5_sha256,
            "kernel_sha256": kernel_sha256,
            "initramfs_sha256": initramfs_sha256,
            "cmdline": cmdline,
            "disk_sha256": disk_sha256,
            "configs_sha256": configs_sha256(),
        }
    )


def config_files() -> list[Path]:
    """What gem5 runs as the configuration: the kit's scripts, the platform
    descriptions, and every ampkit module the scripts import, followed
    through their own imports (found in the code, so none is missed)."""
    package = CONFIGS.parent / "ampkit"
    scripts = sorted(p for p in CONFIGS.rglob("*.py") if "__pycache__" not in p.parts)
    modules: set[Path] = {package / "__init__.py"}
    todo = list(scripts)
    while todo:
        tree = ast.parse(todo.pop().read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] != "ampkit":
                    continue
                path = package.joinpath(*parts[1:]).with_suffix(".py")
                if path.is_file() and path not in modules:
                    modules.add(path)
                    todo.append(path)
    # a calibration record changes the capacities in the tree it writes
    calibrated = [CONFIGS / "calibration.toml"] if (CONFIGS / "calibration.toml").is_file() else []
    return [*scripts, CONFIGS / "platforms.toml", *calibrated, *sorted(modules)]


def configs_sha256() -> str:
    """The hash of config_files(): all decide what is simulated."""
    root = CONFIGS.parent
    return sha256_json({str(p.relative_to(root)): sha256_file(p) for p in config_files()})


def cached_device_tree(machine: Gem5Machine, gem5_sha256: str) -> bytes:
    """device_tree() of the configured gem5, remembered per (gem5 binary,
    configuration, machine): a campaign's jobs need it without starting gem5."""
    key = sha256_json(
        {"gem5": gem5_sha256, "configs": configs_sha256(), "machine": machine.describe()}
    )
    path = cache_dir() / "gem5-dtb" / f"{key}.dtb"
    if path.is_file():
        return path.read_bytes()
    dtb = device_tree(Gem5.locate(), machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(dtb)
    tmp.replace(path)
    return dtb


def checkpoint_dir(key: str) -> Path:
    return cache_dir() / "gem5-checkpoints" / key


def check_checkpoint(checkpoint: Path, machine: Gem5Machine) -> None:
    """A checkpoint restores only into the machine it was taken on: same
    clusters and CPU counts, same memory size."""
    meta_path = checkpoint / "ampkit-checkpoint.json"
    if not (checkpoint / "m5.cpt").is_file():
        raise AmpkitError(f"{checkpoint} is not a gem5 checkpoint (no m5.cpt)")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as e:
        raise AmpkitError(
            f"{checkpoint} has no readable {meta_path.name}",
            "only checkpoints the kit took can be checked; take one with the kit",
        ) from e
    taken, wanted = meta.get("machine", {}), machine.describe()
    for field, what in (("big", "big CPUs"), ("little", "little CPUs"), ("memory_mb", "MiB")):
        if taken.get(field) != wanted[field]:
            raise AmpkitError(
                f"checkpoint {checkpoint} was taken on {taken.get('platform')} with "
                f"{taken.get('memory_mb')} MiB; this run is {wanted['platform']} with "
                f"{wanted['memory_mb']} MiB ({what} differ)",
                "a checkpoint restores only into the machine it was taken on",
            )


def write_checkpoint_meta(checkpoint: Path, machine: Gem5Machine, key: str) -> None:
    atomic_write_text(
        checkpoint / "ampkit-checkpoint.json",
        json.dumps({"key": key, "machine": machine.describe()}, indent=2, sort_keys=True) + "\n",
    )


#: How a simulation ended (exit_code None when gem5 had to be killed; gem5's
#: terminal file has no size limit, so the console is never truncated).
Gem5Result = EngineResult


def power_models() -> dict[str, Any]:
    """What a run's manifest says of its power models (configs/ampkit_gem5/
    power.py): whether CPU power follows the work, and the reference IPCs."""
    cal = calibration.load()
    if cal is None:
        return {
            "activity": None,
            "note": "no calibration record: CPU power is ON time x a constant "
            "(ampkit platform calibrate measures the reference IPCs)",
        }
    return {"activity": "ipc / ipc_ref", "ipc_ref": {"big": cal.big_ipc, "little": cal.little_ipc}}


def simulate(cmd: list[str], log: Path, timeout_s: float) -> Gem5Result:
    """gem5 under a wall-clock limit, its output to log; it never outlives us."""
    started = time.monotonic()
    with log.open("wb") as out:
        proc = process.start(cmd, stdout=out)
        timed_out = process.wait_or_kill(proc, timeout_s)
    return Gem5Result(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        wall_s=round(time.monotonic() - started, 3),
    )


def compress_json_stats(m5out: Path) -> None:
    """xz gem5's stats.json in place (stats.json.xz): gem5 writes every
    statistic with every histogram bucket, 36 MB for one dump of 2B2L,
    and a campaign keeps one per run. xz's fastest preset makes that
    0.1 MB in a third of a second (gzip: 0.5 MB)."""
    source = m5out / "stats.json"
    if not source.is_file():
        return
    target = source.with_name("stats.json.xz")
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    with source.open("rb") as src, lzma.open(tmp, "wb", preset=1) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    tmp.replace(target)
    source.unlink()


#: Files of a boot kept beside its checkpoint: what the guest printed
#: while booting is the first part of every run's console.
BOOT_CONSOLE = "boot-console.log"
#: what configs/bigLITTLE.py prints when it has taken the checkpoint
CHECKPOINT_TICK = re.compile(r"ampkit: checkpoint written to .* at tick (\d+)")
#: gem5's tick: one picosecond
TICKS_PER_S = 1e12
BOOT_DTB = "system.dtb"


@contextmanager
def _locked(path: Path, busy: AmpkitError | None = None) -> Iterator[None]:
    """One holder at a time, across processes (the runs of a campaign):
    the others wait, or, given ``busy``, get it raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (fcntl.LOCK_NB if busy else 0))
        except BlockingIOError as e:
            assert busy is not None
            raise busy from e
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Checkpoint:
    directory: Path
    key: str
    booted_now: bool  # False: taken by an earlier run and reused
    boot_wall_s: float | None  # the atomic boot's wall time when booted now


def ensure_checkpoint(
    gem5: Gem5,
    machine: Gem5Machine,
    *,
    key: str,
    kernel: Path,
    initrd: Path,
    cmdline: str,
    disk: Path | None,
    timeout_s: float,
) -> Checkpoint:
    """The checkpoint of ``key``, booting gem5 atomically to take it if no
    earlier run has. Concurrent runs wait for one boot rather than each
    booting; a boot that fails leaves its output under ``<key>.failed`` and
    raises, and the next run tries again."""
    target = checkpoint_dir(key)
    with _locked(target.with_name(key + ".lock")):
        if (target / "m5.cpt").is_file():
            check_checkpoint(target, machine)
            return Checkpoint(target, key, booted_now=False, boot_wall_s=None)
        work = target.with_name(key + ".partial")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        outdir, cpt = work / M5OUT, work / "cpt"
        cmd = boot_command(
            gem5,
            machine,
            kernel=kernel,
            initrd=initrd,
            cmdline=cmdline,
            outdir=outdir,
            checkpoint=cpt,
            disk=disk,
        )
        atomic_write_text(work / "command.json", json.dumps(cmd, indent=1) + "\n")
        result = simulate(cmd, work / GEM5_LOG, timeout_s)
        if result.exit_code != 0 or not (cpt / "m5.cpt").is_file():
            failed = target.with_name(key + ".failed")
            shutil.rmtree(failed, ignore_errors=True)
            work.rename(failed)
            why = (
                f"did not reach the runner's checkpoint within {timeout_s:g} s"
                if result.timed_out
                else f"ended with exit status {result.exit_code} and no checkpoint"
            )
            raise AmpkitError(
                f"the atomic gem5 boot of {machine.platform.name} {why}",
                f"its output is kept in {failed} (gem5.log, m5out/system.terminal)",
            )
        for name, source in (
            (BOOT_CONSOLE, outdir / "system.terminal"),
            (BOOT_DTB, outdir / "system.dtb"),
        ):
            if source.is_file():
                shutil.copyfile(source, cpt / name)
        shutil.copyfile(work / GEM5_LOG, cpt / (BOOT_PREFIX + GEM5_LOG))
        write_checkpoint_meta(cpt, machine, key)
        m = CHECKPOINT_TICK.search((work / GEM5_LOG).read_text(errors="replace"))
        boot = {
            "wall_s": result.wall_s,
            "sim_seconds": int(m.group(1)) / TICKS_PER_S if m else None,
            "command": cmd,
        }
        atomic_write_text(cpt / "boot.json", json.dumps(boot, indent=1) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        cpt.rename(target)
        shutil.rmtree(work, ignore_errors=True)
        return Checkpoint(target, key, booted_now=True, boot_wall_s=result.wall_s)


#: What configs/bigLITTLE.py prints when a slice reached its end tick
SLICE_ENDED = re.compile(r"ampkit: slice ended at tick (\d+)")
#: gem5 ticks in a simulated millisecond
TICKS_PER_MS = 10**9
#: A finished slice's account, in its directory of the slice store
SLICE_ACCOUNT = "slice.json"
#: A finished slice's checkpoint, which the next slice restores
SLICE_CHECKPOINT = "checkpoint"
#: What a later slice's gem5 output gives the run directory: its statistics
#: and console (the configuration is the first slice's), and the kernel
#: trace the guest writes at its end, if it was asked for one
SLICE_OUTPUTS = (
    "stats.txt",
    "stats.json",
    "system.terminal",
    gem5stats.SLICE_RECORD,
    tracing.GEM5_FILE,
)


def slice_key(slice_ms: int | None) -> list[str]:
    """What slicing adds to a run's key: the slice's length, which decides
    where every run restarts from a checkpoint (nothing for a run in one)."""
    return ["--slice-ms", str(slice_ms)] if slice_ms else []


def slices_dir(key: str) -> Path:
    """Where the finished slices of a run in slices wait for the next one."""
    return cache_dir() / "gem5-slices" / key


def checkpoint_tick(checkpoint: Path) -> int:
    """The tick a gem5 checkpoint was taken at (m5.cpt's curTick)."""
    cpt = checkpoint / "m5.cpt"
    with cpt.open(errors="replace") as f:
        for line in f:
            if line.startswith("curTick="):
                return int(line.split("=", 1)[1])
    raise AmpkitError(
        f"{cpt} gives no curTick: not a whole gem5 checkpoint",
        f"delete {checkpoint}; the next run takes it again",
    )


def _held(path: Path) -> AbstractContextManager[None]:
    """``path`` locked by this process, or an error if another holds it."""
    busy = AmpkitError(
        f"another process is running the slices of this run ({path.parent})",
        "wait for it, or stop it: a run of the same inputs gives the same result",
    )
    return _locked(path, busy)


@dataclass(frozen=True)
class SlicedOutcome:
    """A run in slices, as far as it got: the last slice's ending, the wall
    seconds of its slices (those finished in earlier attempts too; a slice
    lost to a stop is not counted), the account of each slice, the gem5
    command of each one run now, and why the run cannot count, if the
    slices say so."""

    result: Gem5Result
    slices: list[dict[str, Any]]
    commands: list[list[str]]
    problem: str | None = None


#: Simulated milliseconds a run in slices may go beyond its mix's limit (the
#: guest's own, after which the runner stops the mix and powers off): the
#: warm-up, the runner's start and its stop. A guest still running then
#: will not end (a livelocked kernel): the run fails rather than slicing on.
SLICE_SIM_MARGIN_MS = 1000


def _finished_slices(store: Path) -> list[Path]:
    """The store's finished slices, from the first; none when the last has
    lost its checkpoint (the run then starts again from its first)."""
    found: list[Path] = []
    while (store / f"slice-{len(found)}" / SLICE_ACCOUNT).is_file():
        found.append(store / f"slice-{len(found)}")
    if found and not (found[-1] / SLICE_CHECKPOINT / "m5.cpt").is_file():
        for directory in found:
            shutil.rmtree(directory)
        return []
    return found


def run_in_slices(
    gem5: Gem5,
    inputs: BootInputs,
    boot: Checkpoint,
    slice_ms: int,
    run: RunWriter,
    *,
    sim_limit_ms: int,
) -> SlicedOutcome:
    """The run in slices of ``slice_ms`` simulated milliseconds, ending at
    fixed ticks from the boot's checkpoint: every slice but the last ends
    with a checkpoint, and the next restores it in a new gem5 process. The
    finished slices wait in a store named by the run's inputs
    (slices_dir()), so a run stopped with its machine (a wall-clock limit,
    the end of a sitting) resumes at its last finished slice and loses at
    most one slice's work; gem5 being deterministic and the ends fixed, the
    result is the same as a run never stopped. Each slice gets the run's
    wall-clock limit; the run ends failed when its slices reach
    ``sim_limit_ms`` after the boot without the guest's end. Every slice's
    output is copied into the run: the
    first's gem5 output in m5out/, the others' statistics and console in
    m5out/slice-<n>/ (gem5stats.read_run joins them), every gem5 log in
    the run's. The store is removed once gem5 ended on its own (the guest
    powered off, or gem5 failed, which it would again)."""
    key = sha256_json(
        {
            "checkpoint": boot.key,
            "run_desc_sha256": sha256_file(inputs.run_desc),
            "dtb_sha256": sha256_file(inputs.dtb),
            "slice_ms": slice_ms,
        }
    )
    store = slices_dir(key)
    with _held(store / "lock"):
        first_tick = checkpoint_tick(boot.directory)
        directories = _finished_slices(store)
        slices: list[dict[str, Any]] = [
            {**json.loads((d / SLICE_ACCOUNT).read_text()), "resumed": True} for d in directories
        ]
        restore = directories[-1] / SLICE_CHECKPOINT if directories else boot.directory
        commands: list[list[str]] = []
        problem = None
        while True:
            index = len(directories)
            if index * slice_ms >= sim_limit_ms:
                problem = (
                    f"the guest did not end within {sim_limit_ms:,} simulated ms "
                    f"({index} slices of {slice_ms} ms): a guest past its mix's limit "
                    "that does not power off"
                )
                result = Gem5Result(exit_code=None, timed_out=False, wall_s=0.0)
                break
            work = store / f"slice-{index}.partial"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            until = first_tick + (index + 1) * slice_ms * TICKS_PER_MS
            cmd = inputs_command(
                gem5,
                inputs,
                outdir=work / M5OUT,
                checkpoint=restore,
                slice_until=until,
                slice_checkpoint=work / SLICE_CHECKPOINT,
            )
            commands.append(cmd)
            result = simulate(cmd, work / GEM5_LOG, inputs.limit_s)
            record: dict[str, Any] = {
                "slice": index,
                "until_tick": until,
                "wall_s": result.wall_s,
                "resumed": False,
            }
            ended = SLICE_ENDED.search((work / GEM5_LOG).read_text(errors="replace"))
            cpt = work / SLICE_CHECKPOINT / "m5.cpt"
            if result.exit_code != 0 or ended is None or not cpt.is_file():
                directories.append(work)
                slices.append(record)
                break
            record["ended_tick"] = int(ended.group(1))
            atomic_write_text(work / SLICE_ACCOUNT, json.dumps(record, indent=1) + "\n")
            final = store / f"slice-{index}"
            shutil.rmtree(final, ignore_errors=True)
            work.rename(final)
            if directories:  # its checkpoint is restored no more
                shutil.rmtree(directories[-1] / SLICE_CHECKPOINT, ignore_errors=True)
            directories.append(final)
            slices.append(record)
            restore = final / SLICE_CHECKPOINT
        _copy_slices(directories, run)
        if problem is not None or not _stopped(result):
            # gem5 ended on its own (or never will): removed under the
            # lock, renamed first so that a removal cut short leaves no
            # slice to resume from half a checkpoint; a run of these inputs
            # started after that starts from the first slice, to the same
            # result
            dead = store.with_name(f"{store.name}.dead-{os.getpid()}")
            store.rename(dead)
            shutil.rmtree(dead, ignore_errors=True)
    total = round(sum(float(r["wall_s"]) for r in slices), 3)
    return SlicedOutcome(replace(result, wall_s=total), slices, commands, problem)


def _stopped(result: Gem5Result) -> bool:
    """Whether gem5 was stopped rather than ending on its own: the run's
    wall-clock limit, or a signal (the OOM killer, a kill that reached it
    first). gem5's own panic is a signal too (SIGABRT): its finished
    slices are kept, and the run again fails where it failed."""
    return result.timed_out or result.exit_code is None or result.exit_code < 0


def _copy_slices(directories: list[Path], run: RunWriter) -> None:
    """Each slice's output into the run directory (run_in_slices)."""
    with run.path(GEM5_LOG).open("wb") as log:
        for index, directory in enumerate(directories):
            log.write(f"=== ampkit: slice {index} ===\n".encode())
            if (directory / GEM5_LOG).is_file():
                log.write((directory / GEM5_LOG).read_bytes())
            source = directory / M5OUT
            if not source.is_dir():
                continue
            if index == 0:
                shutil.copytree(source, run.path(M5OUT), dirs_exist_ok=True)
                continue
            target = run.path(M5OUT) / gem5stats.SLICE_DIR.format(index)
            target.mkdir(parents=True, exist_ok=True)
            for name in SLICE_OUTPUTS:
                if (source / name).is_file():
                    shutil.copyfile(source / name, target / name)


#: Wall seconds allowed per simulated second of the mix and per simulated
#: CPU when no limit is given, so that the guest's own timeout, not this
#: limit, ends a slow mix. On one host core the detailed 2B2L clusters took
#: 1700 (COLAB, a probe beside compute) to 4600 (compute and a pointer
#: chase, three threads) wall seconds per simulated second (gem5's
#: hostSeconds, benchmarks/gem5_speed.py): about 1500 per busy CPU. A
#: campaign on gem5 should size its mixes and set [limits] wall_limit_s.
WALL_PER_CPU_SIM_S = 2000
#: Cycles per op its sources give a chain of dependent instructions
#: ('ampkit-probe latency') on each core model. The little core's are
#: what its model must make of them (configs/ampkit_gem5/cores.py; the
#: gem5 tier checks them): an ALU result due in 3 cycles, read 2 late
#: (ReadI 2), or 1 late when shifted; CSEL's registers as any ALU operand;
#: a multiply due in 4, its multiplicands read 1 late and its accumulator
#: 2; a pointer chase at the L1's load-to-use, 3; FADD 4. The big core's
#: are [LLVM-A57]'s (64-bit forms: MUL and MADD 5, FADD 5, a load 4 to an
#: ALU), which gem5's O3 follows only in part (benchmarks/gem5_fidelity.py
#: prints both).
SOURCED_CHAIN_CYCLES: dict[str, dict[str, int]] = {
    "little": {
        "alu": 1,
        "alu_reg": 1,
        "alu_shifted": 2,
        "csel": 1,
        "mul": 3,
        "madd_acc": 2,
        "load": 3,
        "fadd": 4,
    },
    "big": {
        "alu": 1,
        "alu_reg": 1,
        "alu_shifted": 2,
        "csel": 1,
        "mul": 5,
        "madd_acc": 5,
        "load": 4,
        "fadd": 5,
    },
}

#: Guest milliseconds of warm-up before a run is measured (the runner's
#: warm_up: the mix's own programs, killed at its end; gem5's statistics
#: are reset as the measured run starts). Runs restore from a checkpoint
#: taken by atomic CPUs without caches, so every cache, TLB and branch
#: predictor starts cold; refilling the largest L2 (2 MiB, 32768 lines)
#: from DRAM takes well under 1 ms at DDR3-1600's 12.8 GB/s, and 2 ms
#: also lets the predictors see each program's loops thousands of times.
#: benchmarks/gem5_fidelity.py measures what it costs in wall seconds.
WARMUP_MS = 2
#: Wall seconds allowed per second of warmup_ms and per CPU. The warm-up
#: runs past warmup_ms while its instances are killed and reaped (the
#: tier's COLAB mix on 2B2L: 20-25 ms of guest time for 2 ms asked, 35-43
#: wall s: up to 5,400 per CPU per second asked), so more than the mix's.
WARMUP_WALL_PER_CPU_SIM_S = 6000
#: Wall seconds beyond that for restoring and powering off.
RESTORE_ALLOWANCE_S = 60
#: The wall-clock limit of the atomic boot that takes a checkpoint.
BOOT_LIMIT_S = 4 * 3600


class Gem5Engine:
    """The Engine protocol (ampkit.engines.base) on gem5: the shared
    checkpoint (booted now if no run has), then the run restored from it
    into the detailed clusters."""

    name = "gem5"
    label = "gem5"
    uses_m5ops = True
    default_warmup_ms = WARMUP_MS
    setup_allowance_s = BOOT_LIMIT_S
    writes_statistics = True
    stats_dumps: tuple[str, ...] = gem5stats.RUN_DUMPS
    timing_notice: str | None = None
    models_core_speed = True
    runs_in_slices = True
    guest_clocks: tuple[str, ...] = ()  # simulated time

    def identity(self) -> EngineIdentity:
        found = Gem5.locate()
        digests = cache_dir() / "digests"
        return EngineIdentity(
            name=self.name,
            version=found.version(),
            binary_sha256=sha256_file_memo(found.binary, digests),
            bootloader_sha256=sha256_file_memo(found.bootloader, digests),
        )

    def default_wall_limit_s(self, mix_limit_s: int, cpus: int, warmup_ms: int = 0) -> int:
        run_s = mix_limit_s * WALL_PER_CPU_SIM_S + warmup_ms / 1000 * WARMUP_WALL_PER_CPU_SIM_S
        return math.ceil(run_s * cpus) + RESTORE_ALLOWANCE_S

    def setup(
        self, request: "RunRequest", identity: EngineIdentity, dtb_cache: dict[str, bytes]
    ) -> Setup:
        machine = Gem5Machine(request.platform)
        dtb = dtb_cache.get(request.platform.name)
        if dtb is None:
            dtb = dtb_cache[request.platform.name] = cached_device_tree(
                machine, identity.binary_sha256
            )
        # The policy is not on the command line: the runner sets it from the
        # run description, so one boot (one checkpoint) serves every policy.
        cmdline = f"{BASE_CMDLINE} {request.extra_cmdline}".strip()
        key_parts = {
            "bootloader_sha256": identity.bootloader_sha256,
            "configs_sha256": configs_sha256(),
            "command": [*machine.args(), "--mode", "detailed", *slice_key(request.slice_ms)],
        }
        return Setup(machine, dtb, cmdline, key_parts)

    def check_ready(self, vmlinux: Path) -> None:
        Gem5.locate()
        check_kernel(vmlinux)

    def shell_command(
        self, platform: Platform, policy: str, *, image: Path, disk: Path, append: str, tmp: Path
    ) -> tuple[list[str], str]:
        raise AmpkitError(
            "ampkit shell has no gem5 engine: a detailed simulation is too slow to type into",
            "use --engine qemu",
        )

    def boot(self, inputs: BootInputs, run: RunWriter) -> EngineOutcome:
        """The console is the boot's followed by the run's: together,
        everything the guest printed."""
        machine = inputs.machine
        assert isinstance(machine, Gem5Machine)
        m5out = run.path(M5OUT)
        found = Gem5.locate()
        ckpt_key = checkpoint_key(
            machine,
            gem5_sha256=inputs.identity.binary_sha256,
            kernel_sha256=inputs.vmlinux_sha256,
            initramfs_sha256=inputs.initramfs_sha256,
            cmdline=inputs.cmdline,
            disk_sha256=inputs.disk_sha256,
        )
        more: dict[str, Any] = {"gem5": {"checkpoint_key": ckpt_key, "power": power_models()}}
        try:
            ckpt = ensure_checkpoint(
                found,
                machine,
                key=ckpt_key,
                kernel=inputs.vmlinux,
                initrd=inputs.initramfs,
                cmdline=inputs.cmdline,
                disk=inputs.disk,
                timeout_s=BOOT_LIMIT_S,
            )
        except AmpkitError as e:
            run.path(CONSOLE).write_text("")
            failed = checkpoint_dir(ckpt_key).with_name(ckpt_key + ".failed")
            for name in (GEM5_LOG, GEM5_TERMINAL):
                if (failed / name).is_file():
                    shutil.copyfile(failed / name, run.path(BOOT_PREFIX + Path(name).name))
            result = EngineResult(exit_code=None, timed_out=False, wall_s=0.0)
            return EngineOutcome(result, (f"gem5 boot: {e.what}",), more)
        more["gem5"].update(
            {
                "checkpoint": str(ckpt.directory),
                "checkpoint_reused": not ckpt.booted_now,
                "boot_wall_s": ckpt.boot_wall_s,
            }
        )
        early: list[str] = []
        if inputs.slice_ms:
            try:
                sim_limit_ms = inputs.mix_limit_s * 1000 + SLICE_SIM_MARGIN_MS
                sliced = run_in_slices(
                    found, inputs, ckpt, inputs.slice_ms, run, sim_limit_ms=sim_limit_ms
                )
            except AmpkitError as e:
                run.path(CONSOLE).write_text("")
                result = EngineResult(exit_code=None, timed_out=False, wall_s=0.0)
                return EngineOutcome(result, (f"gem5 slices: {e.what}",), more)
            write_json(run.path(GEM5_COMMAND), sliced.commands)
            result = sliced.result
            more["gem5"]["slice_ms"] = inputs.slice_ms
            more["gem5"]["slices"] = sliced.slices
            early = [sliced.problem] if sliced.problem else []
        else:
            cmd = inputs_command(found, inputs, outdir=m5out, checkpoint=ckpt.directory)
            write_json(run.path(GEM5_COMMAND), cmd)
            result = simulate(cmd, run.path(GEM5_LOG), inputs.limit_s)
        slice_outputs = gem5stats.slice_dirs(m5out)
        terminals = [d / Path(GEM5_TERMINAL).name for d in slice_outputs]
        with run.path(CONSOLE).open("wb") as out:
            for part in (ckpt.directory / BOOT_CONSOLE, *terminals):
                if part.is_file():
                    out.write(part.read_bytes())
        problems: list[str] = [*early, *gem5_errors(run.path(GEM5_LOG))]
        booted_dtb = ckpt.directory / BOOT_DTB
        if booted_dtb.is_file() and booted_dtb.read_bytes() != inputs.dtb_bytes:
            problems.append(f"the checkpoint's device tree ({booted_dtb}) is not this run's")
        try:
            dumps = gem5stats.read_run(m5out)
        except gem5stats.MeasuredUnknown as e:
            # as run_summary's below: a runner that stopped early says why
            if RESULTS_END.search(run.console_text()):
                problems.append(f"gem5 stats: {e}")
            dumps = None
        except gem5stats.StatsError as e:
            problems.append(f"gem5 stats unreadable: {e}")
            dumps = None
        for directory in slice_outputs:
            compress_json_stats(directory)
        if dumps:
            try:
                run.write_gem5_summary(gem5stats.run_summary(dumps))
            except gem5stats.StatsError as e:
                # a runner that stopped early wrote no measured dump, and
                # says why itself (its error, incomplete results): the count
                # would only hide that
                console = run.console_text()
                if RESULTS_END.search(console):
                    problems.append(f"gem5 stats: {e}")
        elif result.exit_code == 0:
            problems.append("gem5 wrote no statistics")
        return EngineOutcome(result, tuple(problems), more)


ENGINE: Engine = Gem5Engine()  # mypy checks Gem5Engine against the protocol
