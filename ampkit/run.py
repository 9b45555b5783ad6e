"""One run: a mix under one policy on one platform, booted on an engine.

What a run leaves, and how a finished run is told from an unfinished or
failed one, is ``ampkit.rundir``'s: this module decides what to run and
writes through its ``RunWriter``.
"""

import datetime
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit import gem5stats, hostdeps, parsec
from ampkit import kernel as kernel_mod
from ampkit.console import ConsoleReport, parse_console
from ampkit.engines import gem5, qemu
from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_bytes, sha256_file_memo, sha256_json, write_json
from ampkit.initramfs import with_run_description
from ampkit.mix import Mix
from ampkit.paths import cache_dir
from ampkit.platform import Platform
from ampkit.policies import POLICY_DETAILS, check_policy
from ampkit.rundesc import METHODS, RunDescription
from ampkit.rundir import CONSOLE, DEVICE_TREE, GEM5_SUMMARY, RUN_DESC, RunDir, RunWriter

ENGINES = ("qemu", "gem5")

#: Seconds the guest runner gives the mix before killing what is left; the
#: engine's wall-clock limit adds BOOT_ALLOWANCE_S on top for boot and power-off.
DEFAULT_TIMEOUT_S = 120
BOOT_ALLOWANCE_S = 60
#: gem5: wall seconds allowed per simulated second of the mix and per
#: simulated CPU when no limit is given, so that the guest's own timeout,
#: not this limit, ends a slow mix. On one host core the detailed 2B2L
#: clusters took 1700 (COLAB, a probe beside compute) to 4600 (compute and
#: a pointer chase, three threads) wall seconds per simulated second
#: (gem5's hostSeconds, benchmarks/gem5_speed.py): about 1500 per busy
#: CPU. A campaign on gem5 should size its mixes and set [limits] run_s.
GEM5_WALL_PER_CPU_SIM_S = 2000
#: gem5: the wall-clock limit of the atomic boot that takes a checkpoint.
GEM5_BOOT_LIMIT_S = 4 * 3600


def default_wall_limit_s(engine: str, timeout_s: int, cpus: int) -> int:
    """The engine's wall-clock limit for a run whose mix may take timeout_s
    in the guest, on a machine of cpus CPUs."""
    if engine == "gem5":
        return timeout_s * GEM5_WALL_PER_CPU_SIM_S * cpus + BOOT_ALLOWANCE_S
    return timeout_s + BOOT_ALLOWANCE_S


@dataclass(frozen=True)
class RunRequest:
    platform: Platform
    policy: str
    mix: Mix
    repetition: int = 0
    engine: str = "qemu"
    timeout_s: int = DEFAULT_TIMEOUT_S
    kernel_variant: str = "default"
    extra_cmdline: str = ""
    wall_limit_s: float | None = None  # the engine's limit; default timeout_s + allowance
    method: str = "restart"  # see rundesc.METHODS
    #: The PARSEC image's manifest (ampkit parsec build); default build/parsec/parsec.json.
    suite_manifest: Path | None = None
    #: QEMU only: how guest time advances (engines.qemu.CLOCKS).
    qemu_clock: str = "host"

    @property
    def run_id(self) -> str:
        return f"{self.platform.name}-{self.policy}-{self.mix.name}-r{self.repetition}"


@dataclass(frozen=True)
class RunOutcome:
    directory: Path
    status: str
    report: ConsoleReport

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _how_it_ended(ended: dict[str, Any]) -> str:
    """A record's (or its restart failure's) exit status or signal, in words."""
    if ended.get("exit_status") is not None:
        return f"exit status {ended['exit_status']}"
    return f"signal {ended.get('signal')}"


def judge(
    boot: qemu.BootResult | gem5.Gem5Result,
    report: ConsoleReport,
    limit_s: float,
    *,
    engine: str = "QEMU",
    extra: tuple[str, ...] = (),
) -> str:
    """'ok', or 'failed: ' and the reasons, the one that explains the others first."""
    reasons = list(extra)
    if boot.timed_out:
        reasons.append(f"timeout: the guest did not power off within {limit_s:g} s")
    if boot.console_truncated:
        reasons.append("console output over the size limit was dropped")
    reasons += report.problems()
    for app in report.apps:
        name = f"{app['app']}#{app['instance']}"
        if app.get("status") != "ok":
            reasons.append(f"{name} {app['status']} ({_how_it_ended(app)})")
        if app.get("restart_failure"):
            # the others no longer met the same load: their times are not comparable
            how = _how_it_ended(app["restart_failure"])
            reasons.append(f"{name} failed when restarted ({how})")
    if not reasons and boot.exit_code != 0:
        reasons.append(f"{engine} exited with status {boot.exit_code}")
    return "ok" if not reasons else "failed: " + "; ".join(reasons[:4])


@dataclass(frozen=True)
class EngineIdentity:
    """The engine a run boots on, pinned by the hash of its binary."""

    name: str
    version: str
    binary_sha256: str
    #: gem5: the bootloader's hash (it is part of what boots)
    bootloader_sha256: str | None = None

    @classmethod
    def current(cls, engine: str = "qemu") -> "EngineIdentity":
        if engine not in ENGINES:
            raise AmpkitError(f"unknown engine '{engine}'", f"valid: {', '.join(ENGINES)}")
        digests = cache_dir() / "digests"
        if engine == "gem5":
            found = gem5.Gem5.locate()
            return cls(
                name=engine,
                version=found.version(),
                binary_sha256=sha256_file_memo(found.binary, digests),
                bootloader_sha256=sha256_file_memo(found.bootloader, digests),
            )
        binary = hostdeps.require_program(qemu.QEMU)
        digest = sha256_file_memo(Path(binary), digests)
        return cls(name=engine, version=qemu.version(), binary_sha256=digest)


@dataclass(frozen=True)
class PreparedRun:
    """A request made concrete: every input the engine gets, and their hashes.

    ``key`` names the run by what it ran, not by where: two runs with the
    same key booted the same engine binary, kernel, device tree, initramfs,
    PARSEC image and run description with the same command line and limit,
    on any machine. A campaign runs each key once.
    """

    request: RunRequest
    engine: EngineIdentity
    machine: qemu.QemuMachine | gem5.Gem5Machine
    desc: str
    dtb: bytes
    cmdline: str
    limit_s: float
    suite: parsec.SuiteImage | None
    inputs: dict[str, str]
    key: str


def prepare(
    request: RunRequest,
    engine: EngineIdentity,
    kernel_digest: str,
    initramfs_sha256: str,
    *,
    dtb_cache: dict[str, bytes] | None = None,
    suite: "parsec.SuiteImage | None" = None,
) -> PreparedRun:
    """Everything but the boot. ``dtb_cache`` (by platform name) and ``suite``
    let a campaign prepare thousands of runs without repeating work."""
    if request.engine != engine.name:
        raise AmpkitError(f"request for engine '{request.engine}' prepared for '{engine.name}'")
    check_policy(request.policy)
    if request.method not in METHODS:
        raise AmpkitError(f"unknown run method '{request.method}'", f"valid: {', '.join(METHODS)}")
    if not any(app.from_suite for app in request.mix.apps):
        suite = None  # the image is neither attached nor part of the key
    elif suite is None:
        suite = parsec.load_image(request.suite_manifest)
    on_gem5 = request.engine == "gem5"
    desc = RunDescription.for_mix(
        request.run_id,
        request.policy,
        request.repetition,
        request.timeout_s,
        request.mix,
        method=request.method,
        m5ops=on_gem5,
        suite=suite,
    ).render()
    cache = dtb_cache if dtb_cache is not None else {}
    dtb = cache.get(request.platform.name)
    machine: qemu.QemuMachine | gem5.Gem5Machine
    engine_parts: dict[str, Any]
    if on_gem5:
        machine = gem5.Gem5Machine(request.platform)
        if dtb is None:
            dtb = cache[request.platform.name] = gem5.cached_device_tree(
                machine, engine.binary_sha256
            )
        # The policy is not on the command line: the runner sets it from the
        # run description, so one boot (one checkpoint) serves every policy.
        cmdline = f"{gem5.BASE_CMDLINE} {request.extra_cmdline}".strip()
        engine_parts = {
            "bootloader_sha256": engine.bootloader_sha256,
            "configs_sha256": gem5.configs_sha256(),
            "command": [*machine.args(), "--mode", "detailed"],
        }
    else:
        machine = qemu.QemuMachine(request.platform, clock=request.qemu_clock)
        if dtb is None:
            dtb = cache[request.platform.name] = qemu.asymmetric_dtb(machine)
        cmdline = f"{qemu.BASE_CMDLINE} amp_policy={request.policy} {request.extra_cmdline}"
        cmdline = cmdline.strip()
        engine_parts = {"command": machine.args()}
    limit_s = request.wall_limit_s or default_wall_limit_s(
        request.engine, request.timeout_s, request.platform.ncpus
    )
    inputs = {
        "cmdline": cmdline,
        "dtb_sha256": sha256_bytes(dtb),
        "initramfs_sha256": initramfs_sha256,
        "run_desc_sha256": sha256_bytes(desc.encode()),
        **({"suite_image_sha256": suite.sha256} if suite else {}),
    }
    key = sha256_json(
        {
            "engine": {
                "name": engine.name,
                "binary_sha256": engine.binary_sha256,
                **engine_parts,
                "wall_clock_limit_s": limit_s,
            },
            "kernel_digest": kernel_digest,
            "inputs": inputs,
        }
    )
    return PreparedRun(request, engine, machine, desc, dtb, cmdline, limit_s, suite, inputs, key)


def execute(
    request: RunRequest,
    out_dir: Path,
    build: kernel_mod.KernelBuild,
    initramfs: Path,
    force: bool = False,
    *,
    prepared: PreparedRun | None = None,
) -> RunOutcome:
    """Run the request; its directory is left at out_dir whatever the outcome.

    ``prepared``: the request already prepared against this kernel and
    initramfs (a campaign keys a run before it decides to run it)."""
    if request.engine not in ENGINES:
        raise AmpkitError(f"unknown engine '{request.engine}'", f"valid: {', '.join(ENGINES)}")
    image = initramfs.read_bytes()
    kmanifest = build.manifest
    if prepared is None:
        engine = EngineIdentity.current(request.engine)
        prepared = prepare(request, engine, kmanifest["digest"], sha256_bytes(image))
    elif prepared.request != request:
        raise AmpkitError(f"{request.run_id}: prepared for another request")
    engine = prepared.engine
    found_gem5 = None
    if request.engine == "gem5":  # what would stop gem5 stops the run before it starts
        found_gem5 = gem5.Gem5.locate()
        gem5.check_kernel(build.vmlinux)
    try:
        writer = RunWriter(out_dir, force=force)
    except FileExistsError as e:
        raise AmpkitError(
            f"{out_dir} already exists", "choose another --out, or pass --force to replace it"
        ) from e
    work = writer.work

    desc, dtb, machine, suite = prepared.desc, prepared.dtb, prepared.machine, prepared.suite
    cmdline, limit_s = prepared.cmdline, prepared.limit_s
    writer.write_inputs(desc, dtb)

    manifest: dict[str, Any] = {
        "kind": "ampkit-run",
        "version": 1,
        "run_id": request.run_id,
        "key": prepared.key,
        "engine": {
            "name": request.engine,
            "version": engine.version,
            "binary_sha256": engine.binary_sha256,
            **({"bootloader_sha256": engine.bootloader_sha256} if engine.bootloader_sha256 else {}),
            "command": machine.args(),
            "memory_mb": machine.memory_mb,
            "wall_clock_limit_s": limit_s,
        },
        "platform": request.platform.describe(),
        "policy": request.policy,
        "policy_details": POLICY_DETAILS.get(request.policy, {}),
        "mix": request.mix.describe(),
        "repetition": request.repetition,
        "method": request.method,
        "timeout_s": request.timeout_s,
        "kernel": {
            "variant": kmanifest["variant"],
            "digest": kmanifest["digest"],
            "directory": str(build.directory),
            "kernelversion": kmanifest["kernelversion"],
            "debian_version": kmanifest["linux"]["debian_version"],
            "series_sha256": kmanifest["series_sha256"],
            "image_sha256": kmanifest["artifacts"]["Image"]["sha256"],
            "vmlinux_sha256": kmanifest["artifacts"]["vmlinux"]["sha256"],
        },
        "inputs": {
            **prepared.inputs,
            **({"suite_image": str(suite.image)} if suite else {}),
        },
        "started": _now(),
        "status": "running",
    }
    writer.write_manifest(manifest)

    boot: qemu.BootResult | gem5.Gem5Result
    extra: tuple[str, ...] = ()
    if isinstance(machine, gem5.Gem5Machine):
        assert found_gem5 is not None
        boot, extra, more = _simulate_gem5(found_gem5, prepared, build, initramfs, work)
        manifest.update(more)
        engine_name = "gem5"
    else:
        initrd = work / "initrd.img"
        initrd.write_bytes(with_run_description(image, desc))
        try:
            boot = qemu.boot(
                machine,
                image=build.image,
                dtb=work / DEVICE_TREE,
                initrd=initrd,
                cmdline=cmdline,
                console=work / CONSOLE,
                timeout_s=limit_s,
                disk=suite.image if suite else None,
            )
        finally:
            initrd.unlink(missing_ok=True)  # the shared image plus run.desc: both kept already
        engine_name = "QEMU"

    report = parse_console((work / CONSOLE).read_text(errors="replace"))
    writer.write_results(report.apps)
    if report.guest is not None:
        writer.write_guest(report.guest)
    status = judge(boot, report, limit_s, engine=engine_name, extra=extra)
    manifest.update(
        {
            "finished": _now(),
            "wall_s": boot.wall_s,
            "boot": {"exit_code": boot.exit_code, "timed_out": boot.timed_out},
            "kernel_problems": report.kernel_problems,
            "status": status,
        }
    )
    writer.write_manifest(manifest)
    writer.finish(status)
    return RunOutcome(directory=out_dir, status=status, report=report)


def _simulate_gem5(
    found: gem5.Gem5,
    prepared: PreparedRun,
    build: kernel_mod.KernelBuild,
    initramfs: Path,
    work: Path,
) -> tuple[gem5.Gem5Result, tuple[str, ...], dict[str, Any]]:
    """The run on gem5: the shared checkpoint (booted now if no run has),
    then this run restored from it into the detailed clusters.

    Returns what happened, reasons to fail the run that the console cannot
    show, and what the manifest should add. The console is the boot's
    followed by the run's: together, everything the guest printed."""
    assert isinstance(prepared.machine, gem5.Gem5Machine)
    machine, suite = prepared.machine, prepared.suite
    ckpt_key = gem5.checkpoint_key(
        machine,
        gem5_sha256=prepared.engine.binary_sha256,
        kernel_sha256=build.manifest["artifacts"]["vmlinux"]["sha256"],
        initramfs_sha256=prepared.inputs["initramfs_sha256"],
        cmdline=prepared.cmdline,
        disk_sha256=suite.sha256 if suite else None,
    )
    more: dict[str, Any] = {"gem5": {"checkpoint_key": ckpt_key}}
    try:
        ckpt = gem5.ensure_checkpoint(
            found,
            machine,
            key=ckpt_key,
            kernel=build.vmlinux,
            initrd=initramfs,
            cmdline=prepared.cmdline,
            disk=suite.image if suite else None,
            timeout_s=GEM5_BOOT_LIMIT_S,
        )
    except AmpkitError as e:
        (work / CONSOLE).write_text("")
        failed = gem5.checkpoint_dir(ckpt_key).with_name(ckpt_key + ".failed")
        for name in ("gem5.log", "m5out/system.terminal"):
            if (failed / name).is_file():
                shutil.copyfile(failed / name, work / ("boot-" + Path(name).name))
        result = gem5.Gem5Result(exit_code=None, timed_out=False, wall_s=0.0)
        return result, (f"gem5 boot: {e.what}",), more
    more["gem5"].update(
        {
            "checkpoint": str(ckpt.directory),
            "checkpoint_reused": not ckpt.booted_now,
            "boot_wall_s": ckpt.boot_wall_s,
        }
    )
    cmd = gem5.run_command(
        found,
        machine,
        kernel=build.vmlinux,
        initrd=initramfs,
        cmdline=prepared.cmdline,
        outdir=work / "m5out",
        readfile=work / RUN_DESC,
        checkpoint=ckpt.directory,
        disk=suite.image if suite else None,
    )
    write_json(work / "gem5-command.json", cmd)
    result = gem5.simulate(cmd, work / "gem5.log", prepared.limit_s)
    boot_console = ckpt.directory / gem5.BOOT_CONSOLE
    run_console = work / "m5out" / "system.terminal"
    with (work / CONSOLE).open("wb") as out:
        for part in (boot_console, run_console):
            if part.is_file():
                out.write(part.read_bytes())
    extra: list[str] = []
    booted_dtb = ckpt.directory / gem5.BOOT_DTB
    if booted_dtb.is_file() and booted_dtb.read_bytes() != prepared.dtb:
        extra.append(f"the checkpoint's device tree ({booted_dtb}) is not this run's")
    try:
        dumps = gem5stats.read_stats(work / "m5out")
    except gem5stats.StatsError as e:
        extra.append(f"gem5 stats unreadable: {e}")
        dumps = None
    gem5.compress_json_stats(work / "m5out")
    if dumps:
        write_json(work / GEM5_SUMMARY, gem5stats.summary(dumps))
    elif result.exit_code == 0:
        extra.append("gem5 wrote no statistics")
    return result, tuple(extra), more


def read_status(run_dir: Path) -> str:
    """'ok' or 'failed: <reason>' (see ampkit.rundir)."""
    return RunDir(run_dir).status()
