"""What an engine is to the rest of the kit.

An engine boots the kit's kernel and initramfs on a platform, runs the
guest until it powers off (or a wall-clock limit passes) and leaves its
outputs in the run's directory. ``ampkit.run`` knows engines only through
the ``Engine`` protocol below, so a third one (real hardware over SSH, gem5
with another ISA) is one new module registered in ``ampkit.engines``.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ampkit.rundir import RunWriter

if TYPE_CHECKING:
    from ampkit.platform import Platform
    from ampkit.run import RunRequest


@dataclass(frozen=True)
class EngineIdentity:
    """The engine a run boots on, pinned by the hash of its binary."""

    name: str
    version: str
    binary_sha256: str
    #: gem5: the bootloader's hash (it is part of what boots)
    bootloader_sha256: str | None = None


@dataclass(frozen=True)
class EngineResult:
    """How the engine's process ended."""

    exit_code: int | None  # None when it had to be killed
    timed_out: bool
    wall_s: float
    console_truncated: bool = False


class Machine(Protocol):
    """The simulated machine an engine builds for a platform."""

    @property
    def memory_mb(self) -> int: ...

    def args(self) -> list[str]: ...


@dataclass(frozen=True)
class Setup:
    """An engine's decisions for one request: the machine, the device tree
    the kernel boots with, the kernel command line, and the engine's part of
    the run's key (whatever else changes what boots)."""

    machine: Machine
    dtb: bytes
    cmdline: str
    key_parts: dict[str, Any]


@dataclass(frozen=True)
class BootInputs:
    """Everything one boot needs; the paths are in the run's directory or
    in the kit's caches."""

    identity: EngineIdentity
    machine: Machine
    cmdline: str
    limit_s: float
    #: the kernel: the arm64 Image, the ELF vmlinux and the latter's hash
    image: Path
    vmlinux: Path
    vmlinux_sha256: str
    initramfs: Path
    initramfs_sha256: str
    #: written by the run before the boot: the run description and the tree
    run_desc: Path
    dtb: Path
    dtb_bytes: bytes
    #: the PARSEC image, attached as the first virtio disk, if the mix needs it
    disk: Path | None = None
    disk_sha256: str | None = None
    #: simulated milliseconds per slice of a run in slices (gem5); None: one
    slice_ms: int | None = None
    #: the guest seconds the mix may take (the runner's own limit)
    mix_limit_s: int = 0


@dataclass(frozen=True)
class EngineOutcome:
    """What a boot gave: how the engine ended, reasons to fail the run that
    the console cannot show, and what the run's manifest should add."""

    result: EngineResult
    problems: tuple[str, ...] = ()
    manifest: dict[str, Any] = field(default_factory=dict)


class Engine(Protocol):
    #: the name in requests, specs and manifests
    name: str
    #: the name in messages ("QEMU exited with status 1")
    label: str
    #: whether the guest runner marks its work with m5ops (gem5's work items)
    uses_m5ops: bool
    #: guest milliseconds of warm-up before a run is measured, unless the
    #: request says otherwise (workloads/runner/ampkit-init.c, warm_up)
    default_warmup_ms: int
    #: wall seconds a campaign slot must allow beyond the run's own limit
    #: (gem5: the atomic boot to the shared checkpoint, once)
    setup_allowance_s: int
    #: whether a sound run has the engine's statistics (gem5.json and
    #: m5out/stats): recorded in the manifest, judged by the analysis
    writes_statistics: bool
    #: the layout of those statistics' dumps, recorded in the manifest for
    #: the analysis to find the measured one (ampkit.gem5stats.RUN_DUMPS)
    stats_dumps: tuple[str, ...]
    #: what the engine's timings can and cannot say, for summaries and
    #: reports of its runs (recorded in the manifest); None: nothing to add
    timing_notice: str | None
    #: whether the engine models the cores' speed (gem5): a capacity
    #: calibration (ampkit.calibration) is then tied to its binary
    models_core_speed: bool
    #: whether a run can go in slices that each end with a checkpoint
    #: (RunRequest.slice_ms; gem5), so it resumes where its machine stopped
    runs_in_slices: bool
    #: the guest clocks a request may ask for (RunRequest.qemu_clock, a
    #: campaign's qemu_clock) beyond the default "host"; empty for an engine
    #: that keeps its own time (gem5's simulated time)
    guest_clocks: tuple[str, ...]

    def identity(self) -> EngineIdentity:
        """This host's engine, pinned by hashes; an error names what is missing."""
        ...

    def default_wall_limit_s(self, mix_limit_s: int, cpus: int, warmup_ms: int = 0) -> int:
        """The wall-clock limit for a run whose mix may take ``mix_limit_s``
        in the guest after a warm-up of ``warmup_ms``, on a machine of
        ``cpus`` CPUs."""
        ...

    def setup(
        self, request: "RunRequest", identity: EngineIdentity, dtb_cache: dict[str, bytes]
    ) -> Setup:
        """The machine, device tree and command line for ``request``;
        ``dtb_cache`` (by platform name) spares a campaign repeated work."""
        ...

    def check_ready(self, vmlinux: Path) -> None:
        """Whatever would stop the boot, found before the run starts."""
        ...

    def shell_command(
        self, platform: "Platform", policy: str, *, image: Path, disk: Path, append: str, tmp: Path
    ) -> tuple[list[str], str]:
        """An interactive guest on the shell image ``disk`` (ampkit shell):
        the command, which owns the terminal, and how to quit it. ``tmp``
        holds what the command needs while it runs. An error if the engine
        has no interactive guest."""
        ...

    def boot(self, inputs: BootInputs, run: RunWriter) -> EngineOutcome:
        """Boot, run and collect the engine's own outputs into the run's
        directory through ``run``: at least ``console.log`` with everything
        the guest printed."""
        ...
