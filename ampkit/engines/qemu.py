"""The QEMU engine: the kit's kernel on ``qemu-system-aarch64 -M virt`` (TCG).

QEMU gives every CPU the same speed, so its timings say nothing about
big.LITTLE performance. What it does give is a kernel that believes it runs
on big.LITTLE: the device tree comes from QEMU's own (``dumpdtb``, so every
address and interrupt matches the machine) with a two-cluster cpu-map and a
capacity on every CPU, and the scheduler's decisions are the real ones.

A boot is bounded: past its wall-clock limit QEMU is killed. QEMU runs in
its own session and dies with the process that started it (prctl
PR_SET_PDEATHSIG, through setpriv), so neither a timeout, nor Ctrl-C, nor a killed CLI
leaves a QEMU process behind.
"""

import hashlib
import math
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ampkit import hostdeps, process
from ampkit.devicetree import make_asymmetric
from ampkit.engines.base import (
    BootInputs,
    Engine,
    EngineIdentity,
    EngineOutcome,
    EngineResult,
    Setup,
)
from ampkit.errors import AmpkitError
from ampkit.fdt import DeviceTree
from ampkit.hashing import sha256_file_memo
from ampkit.initramfs import with_run_description
from ampkit.paths import cache_dir
from ampkit.platform import Platform
from ampkit.policies import kernel_policy
from ampkit.rundir import CONSOLE, QEMU_NOTICE, RunWriter

if TYPE_CHECKING:
    from ampkit.run import RunRequest

QEMU = "qemu-system-aarch64"

#: The kernel command line for every QEMU boot. panic=-1 reboots at once on a
#: panic, and -no-reboot turns that reboot into QEMU exiting.
BASE_CMDLINE = "console=ttyAMA0 earlycon=pl011,0x9000000 rdinit=/init panic=-1"

#: A runaway guest must not fill the disk.
MAX_CONSOLE_BYTES = 64 << 20

#: How the guest's clock advances. "host": every vCPU is a host thread (MTTCG)
#: and guest time is host time, so a vCPU the host does not run for 20 ms is,
#: to the guest, a CPU that stalled for 20 ms with whatever it held. Fastest,
#: and right for functional runs. "icount": one host thread runs the vCPUs in
#: turn and guest time advances with the instructions they execute
#: (``-icount shift=auto``: the rate follows the host so that guest seconds
#: stay near wall seconds; sleep=on: an idle guest waits in real time). Host
#: load then slows the guest without disturbing it; the price is one host
#: core per run, and a cross-CPU round trip (IPI, stop_machine) that waits
#: for the target's turn. For runs whose judgement is a time the guest
#: measures: lock hold times, run-queue waits, bottleneck ranking. The rate
#: follows the host, so a loaded host still makes the guest's CPUs slower
#: in its own eyes (a fixed loop measured 24 ms, then up to 1.5 s, in one
#: boot on the 2-core host busy with kernel builds).
#: "instructions": as icount, at a fixed 1 ns per instruction
#: (``-icount shift=0,sleep=off``), and idle time is skipped: when every
#: vCPU idles, guest time jumps to the next timer. Guest time is then a
#: function of what the guest executes alone, whatever the host does, and
#: a guest that mostly waits (sleeps, timeouts) finishes in a fraction of
#: its guest time. For programs that assume a CPU of some speed, such as
#: the kernel's futex selftests (threads blocked within 10 ms).
CLOCKS = ("host", "icount", "instructions")


@dataclass(frozen=True)
class QemuMachine:
    platform: Platform
    memory_mb: int = 1024
    clock: str = "host"

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise AmpkitError(
                f"unknown QEMU clock '{self.clock}'",
                f"valid: {', '.join(CLOCKS)} (see ampkit/engines/qemu.py)",
            )

    def clock_args(self) -> list[str]:
        if self.clock == "icount":
            return ["-accel", "tcg,thread=single", "-icount", "shift=auto,sleep=on"]
        if self.clock == "instructions":
            return ["-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off"]
        return []  # QEMU's default for TCG on a multi-core host: MTTCG

    def args(self) -> list[str]:
        # GICv3: GICv2 on virt stops at 8 CPUs.
        return [
            QEMU,
            "-M",
            "virt,gic-version=3",
            "-cpu",
            "cortex-a57",
            "-smp",
            str(self.platform.ncpus),
            "-m",
            f"{self.memory_mb}M",
            "-nodefaults",
            "-display",
            "none",
            "-no-reboot",
            *self.clock_args(),
        ]


def version() -> str:
    qemu = hostdeps.require_program(QEMU)
    out = subprocess.run([qemu, "--version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0]


def base_dtb(machine: QemuMachine) -> bytes:
    """QEMU's own device tree for this machine."""
    hostdeps.require_program(QEMU)
    with tempfile.TemporaryDirectory(prefix="ampkit-dtb-") as tmp:
        path = Path(tmp) / "virt.dtb"
        result = subprocess.run(
            [*machine.args(), "-machine", f"dumpdtb={path}"],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if result.returncode != 0 or not path.is_file():
            raise AmpkitError(
                f"QEMU could not produce its device tree: "
                f"{result.stderr.strip() or result.returncode}"
            )
        return path.read_bytes()


def asymmetric_dtb(machine: QemuMachine) -> bytes:
    """QEMU's tree with the platform's big and little clusters and capacities."""
    tree = DeviceTree.from_bytes(base_dtb(machine))
    # QEMU puts fresh random bytes in /chosen (rng-seed, kaslr-seed) on every
    # dumpdtb. Fixed bytes of the same length keep the guest's early entropy
    # and make the tree a function of the platform alone: a run's inputs, and
    # so its key (run.PreparedRun), are the same every time.
    chosen = tree.root.child("chosen")
    if chosen is not None:
        for prop in ("rng-seed", "kaslr-seed"):
            if prop in chosen.props:
                n = len(chosen.props[prop])
                seed = hashlib.sha256(f"ampkit {prop} {machine.platform.name}".encode()).digest()
                chosen.props[prop] = (seed * (n // len(seed) + 1))[:n]
    return make_asymmetric(tree, machine.platform).to_bytes()


#: How a QEMU boot ended (exit_code None when QEMU had to be killed).
BootResult = EngineResult


#: The kernel command line of the shell image: the ext4 disk as root, its
#: init script, and no rdinit (there is no initramfs).
SHELL_CMDLINE = "console=ttyAMA0 root=/dev/vda rw rootwait init=/ampkit-shell panic=-1"


def virtio_disk_args(disk: Path) -> list[str]:
    """A raw image as the first virtio block device; writes go to a throwaway overlay."""
    return [
        "-drive",
        f"file={disk},if=none,format=raw,id=disk0,snapshot=on",
        "-device",
        "virtio-blk-pci,drive=disk0",
    ]


def shell_command(
    machine: QemuMachine, *, image: Path, dtb: Path, disk: Path, cmdline: str
) -> list[str]:
    """QEMU with the shell image as a virtio disk and the console on stdio.

    ``snapshot=on`` keeps the image as built: writes go to a temporary
    overlay. ``mon:stdio`` multiplexes QEMU's monitor (Ctrl-A C) and lets
    Ctrl-A X quit.
    """
    return [
        *process.DIE_WITH_PARENT,
        *machine.args(),
        "-kernel",
        str(image),
        "-dtb",
        str(dtb),
        "-append",
        cmdline,
        *virtio_disk_args(disk),
        "-serial",
        "mon:stdio",
    ]


def boot(
    machine: QemuMachine,
    *,
    image: Path,
    dtb: Path,
    initrd: Path,
    cmdline: str,
    console: Path,
    timeout_s: float,
    disk: Path | None = None,
) -> BootResult:
    """Boot until the guest powers off or the limit passes; the console goes to a file.

    ``disk`` (the PARSEC image) is attached as the first virtio block device,
    /dev/vda in the guest, with ``snapshot=on``: nothing the guest does
    reaches the file.
    """
    cmd = [
        *machine.args(),
        "-kernel",
        str(image),
        "-dtb",
        str(dtb),
        "-initrd",
        str(initrd),
        "-append",
        cmdline,
        "-serial",
        "stdio",
        *(virtio_disk_args(disk) if disk else []),
    ]
    hostdeps.require(QEMU)
    started = time.monotonic()
    truncated = threading.Event()
    with console.open("wb") as out:
        proc = process.start(cmd, stdout=subprocess.PIPE)

        def copy() -> None:
            assert proc.stdout is not None
            written = 0
            while chunk := os.read(proc.stdout.fileno(), 65536):
                room = MAX_CONSOLE_BYTES - written
                if len(chunk) > room:
                    truncated.set()
                if room > 0:
                    out.write(chunk[:room])
                    out.flush()
                    written += min(len(chunk), room)

        reader = threading.Thread(target=copy, name="qemu-console", daemon=True)
        reader.start()
        try:
            timed_out = process.wait_or_kill(proc, timeout_s)
        finally:
            reader.join(timeout=10)
    return BootResult(
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        wall_s=round(time.monotonic() - started, 3),
        console_truncated=truncated.is_set(),
    )


#: Wall seconds a QEMU boot may take beyond the mix's own limit: boot and power-off.
BOOT_ALLOWANCE_S = 60


class QemuEngine:
    """The Engine protocol (ampkit.engines.base) on QEMU."""

    name = "qemu"
    label = "QEMU"
    uses_m5ops = False
    # nothing QEMU reports depends on warm caches: its timings are the host's
    default_warmup_ms = 0
    setup_allowance_s = 0
    writes_statistics = False
    stats_dumps: tuple[str, ...] = ()
    timing_notice: str | None = QEMU_NOTICE
    models_core_speed = False
    runs_in_slices = False
    guest_clocks: tuple[str, ...] = CLOCKS

    def identity(self) -> EngineIdentity:
        binary = hostdeps.require_program(QEMU)
        digest = sha256_file_memo(Path(binary), cache_dir() / "digests")
        return EngineIdentity(name=self.name, version=version(), binary_sha256=digest)

    def default_wall_limit_s(self, mix_limit_s: int, cpus: int, warmup_ms: int = 0) -> int:
        return mix_limit_s + math.ceil(warmup_ms / 1000) + BOOT_ALLOWANCE_S

    def setup(
        self, request: "RunRequest", identity: EngineIdentity, dtb_cache: dict[str, bytes]
    ) -> Setup:
        machine = QemuMachine(request.platform, clock=request.qemu_clock)
        dtb = dtb_cache.get(request.platform.name)
        if dtb is None:
            dtb = dtb_cache[request.platform.name] = asymmetric_dtb(machine)
        policy = kernel_policy(request.policy)
        cmdline = f"{BASE_CMDLINE} amp_policy={policy} {request.extra_cmdline}"
        return Setup(machine, dtb, cmdline.strip(), {"command": machine.args()})

    def check_ready(self, vmlinux: Path) -> None:
        hostdeps.require(QEMU)

    def shell_command(
        self, platform: Platform, policy: str, *, image: Path, disk: Path, append: str, tmp: Path
    ) -> tuple[list[str], str]:
        machine = QemuMachine(platform)
        dtb = tmp / "shell.dtb"
        dtb.write_bytes(asymmetric_dtb(machine))
        cmdline = f"{SHELL_CMDLINE} amp_policy={policy} {append}".strip()
        cmd = shell_command(machine, image=image, dtb=dtb, disk=disk, cmdline=cmdline)
        return cmd, "Ctrl-A X quits QEMU"

    def boot(self, inputs: BootInputs, run: RunWriter) -> EngineOutcome:
        assert isinstance(inputs.machine, QemuMachine)
        initrd = run.path("initrd.img")
        initrd.write_bytes(
            with_run_description(inputs.initramfs.read_bytes(), inputs.run_desc.read_text())
        )
        try:
            result = boot(
                inputs.machine,
                image=inputs.image,
                dtb=inputs.dtb,
                initrd=initrd,
                cmdline=inputs.cmdline,
                console=run.path(CONSOLE),
                timeout_s=inputs.limit_s,
                disk=inputs.disk,
            )
        finally:
            initrd.unlink(missing_ok=True)  # the shared image plus run.desc: both kept already
        return EngineOutcome(result)


ENGINE: Engine = QemuEngine()  # mypy checks QemuEngine against the protocol
