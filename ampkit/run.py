"""One run: a mix under one policy on one platform, booted on an engine.

What a run leaves, and how a finished run is told from an unfinished or
failed one, is ``ampkit.rundir``'s: this module decides what to run and
writes through its ``RunWriter``.
"""

import datetime
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ampkit import calibration, gem5stats, parsec, policies
from ampkit import kernel as kernel_mod
from ampkit import online as online_mod
from ampkit.console import ConsoleReport, parse_console
from ampkit.engines import (
    DEFAULT_ENGINE,
    DEFAULT_GUEST_CLOCK,
    ENGINES,
    get_engine,
    offers_guest_clock,
)
from ampkit.engines.base import BootInputs, Engine, EngineIdentity, EngineResult, Machine
from ampkit.errors import AmpkitError, UsageError
from ampkit.hashing import sha256_bytes, sha256_file
from ampkit.interference import Contention
from ampkit.mix import Mix
from ampkit.online import OnlineSpeedups
from ampkit.perturb import Perturbation, perturbation
from ampkit.platform import Platform
from ampkit.policies import check_policy
from ampkit.rundesc import MAX_WARMUP_MS, METHODS, RunDescription
from ampkit.rundir import (
    DEVICE_TREE,
    M5OUT,
    OK,
    RUN_DESC,
    STOPPED,
    Ending,
    EngineEntry,
    Manifest,
    RunKey,
    RunWriter,
)
from ampkit.sizes import sized_for

__all__ = ["ENGINES", "EngineIdentity", "RunRequest", "engine_identity", "execute", "prepare"]

#: The mix time limit: seconds the guest runner gives the mix before killing
#: what is left. The engine's wall-clock limit (wall_limit_s) adds its own
#: allowance for boot and power-off. The same two names are used by the CLI
#: (--mix-limit, --wall-limit), campaign specs ([limits]) and manifests.
DEFAULT_MIX_LIMIT_S = 120


@dataclass(frozen=True)
class RunRequest:
    platform: Platform
    policy: str
    mix: Mix
    repetition: int = 0
    engine: str = DEFAULT_ENGINE
    mix_limit_s: int = DEFAULT_MIX_LIMIT_S
    kernel_variant: str = "default"
    extra_cmdline: str = ""
    wall_limit_s: float | None = None  # the engine's limit; default mix_limit_s + allowance
    method: str = "restart"  # see rundesc.METHODS
    #: The PARSEC image's manifest (ampkit parsec build); default build/parsec/parsec.json.
    suite_manifest: Path | None = None
    #: QEMU only: how guest time advances (engines.qemu.CLOCKS).
    qemu_clock: str = DEFAULT_GUEST_CLOCK
    #: guest milliseconds of warm-up before the run is measured; None: the
    #: engine's default (gem5 2, QEMU 0; rundesc.RunDescription.warmup_ms)
    warmup_ms: int | None = None
    #: gem5: the simulated ms an app the mix leaves unsized spans alone
    #: (ampkit.sizes); None: the default span
    span_ms: float | None = None
    #: each app released after a seeded delay of up to this many
    #: microseconds (ampkit.perturb); 0: none, the description as before
    perturb_us: int = 0
    #: the PMU events to count over each app's first run, one group that the
    #: PMU holds at once (ampkit.pmu; the speedup model's training data,
    #: 'ampkit profile'); counting costs every context switch of the counted
    #: threads, so a comparison's runs count none
    pmu_events: tuple[str, ...] = ()
    #: gem5: the run in slices of this many simulated milliseconds, each
    #: ending with a checkpoint the next restores, so a run longer than its
    #: machine's time resumes (ampkit.engines.gem5.run_in_slices); None: one
    slice_ms: int | None = None
    #: NAME=value in every application's environment (the run description's
    #: env lines): for tests, such as AMPKIT_WRONG_RESULT=1 (README,
    #: "Environment"); none, the description as before
    env: tuple[str, ...] = ()
    #: the online speedup model (ampkit.online): each thread's speedup
    #: predicted in the guest from its PMU counts, the hints only its start;
    #: None, hints alone, the description as before
    online: OnlineSpeedups | None = None
    #: gem5: the application's region of interest marked in the statistics
    #: (two dumps without a reset between the runner's: ampkit.gem5stats,
    #: ROI_PREFIX), so that its counts are the region's alone, without its
    #: start-up and self-check: the speedup model's training data. A run
    #: of one application, once, in one slice
    roi_stats: bool = False
    #: kernel tracepoints ("system:event") traced over the measured run and
    #: kept in the run directory (ampkit.tracing); none, the description
    #: as before
    trace_events: tuple[str, ...] = ()
    #: the contention-aware policy's interference models and threshold
    #: (ampkit.interference.Contention), handed to its daemon; None for
    #: every other policy
    contention: Contention | None = None
    #: the CPUs each application's instances run on alone, one entry per
    #: app of the mix (None: wherever the policy puts it); empty: none
    #: pinned, the description as before. For profiling an application
    #: beside co-runners on chosen clusters (ampkit.interference)
    app_cpus: tuple[tuple[int, ...] | None, ...] = ()
    #: the index of the application whose first run ends the run, the
    #: others stopped there (records "stopped": load beside it, timed by
    #: nothing); None: the run ends when every first run has, as before
    until: int | None = None

    def __post_init__(self) -> None:
        # Every request runs sized: an app its mix left unsized gets the engine's size here.
        object.__setattr__(self, "mix", sized_for(self.mix, self.engine, self.span_ms))

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
        return self.status == OK


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def daemon_argv(request: RunRequest) -> tuple[str, ...]:
    """The policy daemon's program and arguments for ``request``; empty for
    a kernel policy."""
    daemon = policies.policy_daemon(request.policy)
    if daemon and request.contention is not None:
        daemon = (*daemon, *request.contention.daemon_args())
    return daemon


def _input_agrees(
    policy: str, needed: bool, given: bool, *, lacking: str, surplus: str, hint: str
) -> None:
    """A policy's own input (a model) given exactly when the policy takes it."""
    if needed != given:
        raise UsageError(f"policy {policy} {lacking if needed else surplus}", hint)


def check_app_cpus(request: RunRequest) -> None:
    """Pinned applications: one entry per app, CPUs the platform has, and
    no policy daemon that would set their CPUs too."""
    if not request.app_cpus:
        return
    apps = request.mix.apps
    if len(request.app_cpus) != len(apps):
        raise UsageError(
            f"CPUs given for {len(request.app_cpus)} applications of a mix of {len(apps)}",
            "give one entry per application (None: not pinned)",
        )
    ncpus = request.platform.ncpus
    for app, cpus in zip(apps, request.app_cpus, strict=True):
        if cpus is not None and (not cpus or not all(0 <= c < ncpus for c in cpus)):
            raise UsageError(
                f"{app.program} pinned to CPUs {list(cpus)}: {request.platform.name} has CPUs "
                f"0-{ncpus - 1}",
                "name CPUs of the platform (the big ones first)",
            )
    if policies.policy_daemon(request.policy) and any(c is not None for c in request.app_cpus):
        raise UsageError(
            f"policy {request.policy} places the applications itself: none can be pinned",
            "pin applications under a kernel policy (cfs)",
        )


def policy_details(request: RunRequest) -> dict[str, Any]:
    """What the manifest records of how the request's policy works
    (policies.details()), and of the models its daemon was given."""
    out: dict[str, Any] = dict(policies.details(request.policy))
    if out.get("daemon"):
        out["daemon"] = " ".join(daemon_argv(request))
    if request.contention is not None:
        out["interference"] = request.contention.describe()
    return out


def _how_it_ended(ended: dict[str, Any]) -> str:
    """A record's (or its restart failure's) exit status or signal, in words."""
    if ended.get("exit_status") is not None:
        return f"exit status {ended['exit_status']}"
    return f"signal {ended.get('signal')}"


def judge(
    boot: EngineResult,
    report: ConsoleReport,
    limit_s: float,
    *,
    engine: str = "the engine",
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
        if app.get("status") not in (OK, STOPPED):
            reasons.append(f"{name} {app['status']} ({_how_it_ended(app)})")
        if app.get("restart_failure"):
            # the others no longer met the same load: their times are not comparable
            how = _how_it_ended(app["restart_failure"])
            reasons.append(f"{name} failed when restarted ({how})")
    if not reasons and boot.exit_code != 0:
        reasons.append(f"{engine} exited with status {boot.exit_code}")
    return OK if not reasons else "failed: " + "; ".join(reasons[:4])


def engine_identity(name: str) -> EngineIdentity:
    """This host's engine ``name``, pinned by the hashes of what boots."""
    return get_engine(name).identity()


@dataclass(frozen=True)
class PreparedRun:
    """A request made concrete: every input the engine gets, and their hashes.

    ``key`` names the run by what it ran, not by where: two runs with the
    same key booted the same engine binary, kernel, device tree, initramfs,
    PARSEC image and run description with the same command line and limit,
    on any machine. A campaign runs each key once. ``run_key`` is what
    callers plan by (RunDir.done()): the key, and the keys of the same
    inputs under other limits.
    """

    request: RunRequest
    engine: EngineIdentity
    machine: Machine
    desc: str
    dtb: bytes
    cmdline: str
    limit_s: float
    suite: parsec.SuiteImage | None
    inputs: dict[str, str]
    run_key: RunKey
    #: the seeded start delays the description carries; None: unperturbed
    perturbation: Perturbation | None = None

    @property
    def key(self) -> str:
        return self.run_key.digest


def warmup_of(request: RunRequest) -> int:
    """The request's warm-up in guest milliseconds: its own, or its engine's default."""
    if request.warmup_ms is None:
        return get_engine(request.engine).default_warmup_ms
    if not 0 <= request.warmup_ms <= MAX_WARMUP_MS:
        raise UsageError(
            f"a warm-up of {request.warmup_ms} ms",
            f"give 0 (none) to {MAX_WARMUP_MS} guest milliseconds",
        )
    return request.warmup_ms


def check_guest_clock(clock: str, engine: Engine) -> None:
    """A guest clock the engine cannot give stops the run rather than being
    ignored."""
    if not offers_guest_clock(engine, clock):
        offered = ", ".join(engine.guest_clocks) or "none: it keeps its own time"
        raise UsageError(
            f"the guest clock '{clock}' was asked of a {engine.label} run",
            f"{engine.label} offers {offered}; drop --qemu-clock (qemu_clock in a campaign "
            "spec) or choose another engine",
        )


#: The longest slice a run may ask for, in simulated milliseconds
MAX_SLICE_MS = 10_000


def check_slices(slice_ms: int | None, engine: Engine) -> None:
    """A run in slices only where the engine can checkpoint one, and slices
    of a length it can use."""
    if slice_ms is None:
        return
    if not engine.runs_in_slices:
        raise UsageError(
            f"a {engine.label} run cannot go in slices",
            "drop --slice-ms (slice_ms in a campaign spec): slices are gem5's",
        )
    if not 1 <= slice_ms <= MAX_SLICE_MS:
        raise UsageError(
            f"slices of {slice_ms} simulated ms",
            f"give 1 to {MAX_SLICE_MS} ms; a slice should take well under a sitting's wall time",
        )


def check_roi_stats(request: RunRequest) -> None:
    """A run that marks its region in the statistics: on gem5, one
    application alone (a kit workload, or a PARSEC program through the
    kit's hooks), once, in one slice, so that its two marks fall between
    the runner's dumps with nothing reset between them."""
    engine = get_engine(request.engine)
    problems = []
    if not (engine.writes_statistics and engine.uses_m5ops):
        problems.append(f"{engine.label} keeps no statistics to mark")
    if len(request.mix.apps) != 1:
        problems.append(f"the mix has {len(request.mix.apps)} applications, whose regions overlap")
    if request.method != "once":
        problems.append(f"method {request.method} starts the application again")
    if request.slice_ms is not None:
        problems.append("a slice's restore between the marks would restart the counts")
    if problems:
        raise UsageError(
            "statistics of the region of interest: " + "; ".join(problems),
            "they are for one application alone on gem5, once, without slices (ampkit profile)",
        )


def prepare(
    request: RunRequest,
    engine: EngineIdentity,
    kernel_digest: str,
    initramfs_sha256: str,
    *,
    kernel_binaries: tuple[tuple[str, str], ...] = (),
    dtb_cache: dict[str, bytes] | None = None,
    suite: "parsec.SuiteImage | None" = None,
) -> PreparedRun:
    """Everything but the boot. ``dtb_cache`` (by platform name) and ``suite``
    let a campaign prepare thousands of runs without repeating work."""
    if request.engine != engine.name:
        raise AmpkitError(f"request for engine '{request.engine}' prepared for '{engine.name}'")
    check_policy(request.policy)
    if request.online is not None and request.pmu_events:
        raise UsageError(
            "a run cannot count PMU events for a profile and feed the online model at once: "
            "together they outnumber the PMU's counters",
            "profile with the policy alone",
        )
    _input_agrees(
        request.policy,
        policies.uses_online(request.policy),
        request.online is not None,
        lacking="needs the online speedup model: give a model directory",
        surplus="takes the hints alone: a model directory is for a policy named with "
        f"{policies.ONLINE_SUFFIX}",
        hint="ampkit run --policy colab+online --speedup-model DIR; in a campaign spec, "
        'speedup_model = "DIR" beside policies = [..., "colab+online"]',
    )
    if request.method not in METHODS:
        raise AmpkitError(f"unknown run method '{request.method}'", f"valid: {', '.join(METHODS)}")
    policies.check_inputs(request.policy, request.mix.apps, request.extra_cmdline)
    _input_agrees(
        request.policy,
        policies.needs_models(request.policy),
        request.contention is not None,
        lacking="needs interference models: give a model file",
        surplus="takes no interference models",
        hint="ampkit run --policy contention --interference-models FILE; in a campaign spec, "
        'interference_models = "FILE" beside policies = [..., "contention"]',
    )
    policy_data = (
        request.contention.data_lines(request.mix, request.platform, request.engine)
        if request.contention
        else ()
    )
    check_app_cpus(request)
    if request.roi_stats:
        check_roi_stats(request)
    if not any(app.from_suite for app in request.mix.apps):
        suite = None  # the image is neither attached nor part of the key
    elif suite is None:
        suite = parsec.load_image(request.suite_manifest)
    engine_impl = get_engine(request.engine)
    check_guest_clock(request.qemu_clock, engine_impl)
    check_slices(request.slice_ms, engine_impl)
    warmup_ms = warmup_of(request)
    # seeded by the run's identity but its policy (ampkit.perturb)
    perturbed = perturbation(
        request.mix.name,
        request.platform.name,
        request.repetition,
        len(request.mix.apps),
        request.perturb_us,
    )
    desc = RunDescription.for_mix(
        request.run_id,
        policies.kernel_policy(request.policy),
        request.repetition,
        request.mix_limit_s,
        request.mix,
        method=request.method,
        m5ops=engine_impl.uses_m5ops,
        warmup_ms=warmup_ms,
        suite=suite,
        start_delays_us=perturbed.start_delays_us if perturbed else None,
        pmu=request.pmu_events,
        env=request.env,
        online=request.online.lines() if request.online else (),
        roi_stats=request.roi_stats,
        trace=request.trace_events,
        policy_daemon=daemon_argv(request),
        policy_data=policy_data,
        app_cpus=request.app_cpus,
        until=request.until,
    ).render()
    setup = engine_impl.setup(request, engine, dtb_cache if dtb_cache is not None else {})
    machine, dtb, cmdline = setup.machine, setup.dtb, setup.cmdline
    limit_s = request.wall_limit_s or engine_impl.default_wall_limit_s(
        request.mix_limit_s, request.platform.ncpus, warmup_ms
    )
    inputs = {
        "cmdline": cmdline,
        "dtb_sha256": sha256_bytes(dtb),
        "initramfs_sha256": initramfs_sha256,
        "run_desc_sha256": sha256_bytes(desc.encode()),
        **({"suite_image_sha256": suite.sha256} if suite else {}),
    }
    run_key = RunKey.of(
        {
            "engine": {
                "name": engine.name,
                "binary_sha256": engine.binary_sha256,
                **setup.key_parts,
                # the key's own field name, kept so that keys stay stable;
                # a finished run keeps its key under a longer limit (RunKey)
                "wall_clock_limit_s": limit_s,
            },
            "kernel_digest": kernel_digest,
            "inputs": inputs,
        },
        kernel_binaries,
    )
    return PreparedRun(
        request, engine, machine, desc, dtb, cmdline, limit_s, suite, inputs, run_key, perturbed
    )


def prepare_for(request: RunRequest, build: kernel_mod.KernelBuild, initramfs: Path) -> PreparedRun:
    """The request prepared against this kernel build and initramfs, with
    the engine in use: its key tells whether a run already there was made
    from the same inputs."""
    engine = get_engine(request.engine).identity()
    return prepare(
        request,
        engine,
        build.manifest["digest"],
        sha256_file(initramfs),
        kernel_binaries=build.binaries(),
    )


def keep_trace(report: ConsoleReport, writer: RunWriter) -> dict[str, Any]:
    """The kernel trace the guest handed out, into the run directory
    (rundir.TRACE), and its account for the manifest: lines written and
    kept, events lost, whether it is whole and, if not, why. The trace is
    a diagnosis beside the run: one that is not whole leaves the run's
    results as they are, and the trace's readers refuse it."""
    if report.trace_file is not None:  # gem5: through the simulator, into m5out
        found = [
            d / report.trace_file
            for d in gem5stats.slice_dirs(writer.path(M5OUT))
            if (d / report.trace_file).is_file()
        ]
        text = found[-1].read_text(errors="replace") if found else None
        for path in found:
            path.unlink()  # kept compressed, once
    else:
        text = "\n".join(report.trace_lines) + "\n" if report.trace_lines else None
    kept = sum(1 for line in (text or "").splitlines() if line.strip() and line[0] != "#")
    if text is None and report.trace_written == 0:
        text = ""  # nothing was logged: an empty trace, whole
    problem = None
    if report.trace_error is not None:
        problem = f"the guest could not read its trace: {report.trace_error}"
    elif report.trace_written is None:
        problem = "the guest never handed its trace out (a run cut short?)"
    elif text is None and report.trace_written:
        problem = "the guest's trace file is missing from the simulator's output"
    elif kept != report.trace_written:
        problem = f"{kept} of the {report.trace_written} lines the guest wrote arrived"
    elif report.trace_lost:
        problem = (
            f"the kernel's trace buffers lost {report.trace_lost} events "
            "(fewer events, or a shorter run)"
        )
    if text is not None:
        writer.write_trace(text)
    return {
        "written": report.trace_written,
        "kept": kept,
        "lost": report.trace_lost,
        "complete": problem is None,
        **({"problem": problem} if problem else {}),
    }


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
    engine_impl = get_engine(request.engine)
    kmanifest = build.manifest
    if prepared is None:
        prepared = prepare_for(request, build, initramfs)
    elif prepared.request != request:
        raise AmpkitError(f"{request.run_id}: prepared for another request")
    engine = prepared.engine
    engine_impl.check_ready(build.vmlinux)  # what would stop the boot stops the run now
    try:
        writer = RunWriter(out_dir, force=force)
    except FileExistsError as e:
        raise UsageError(
            f"{out_dir} already exists", "choose another --out, or pass --force to replace it"
        ) from e

    desc, dtb, machine, suite = prepared.desc, prepared.dtb, prepared.machine, prepared.suite
    cmdline, limit_s = prepared.cmdline, prepared.limit_s
    writer.write_inputs(desc, dtb)

    manifest = Manifest(
        run_id=request.run_id,
        key=prepared.key,
        engine=EngineEntry(
            name=request.engine,
            statistics=engine_impl.writes_statistics,
            # the layout of its statistics' dumps (which one is the run)
            stats_dumps=engine_impl.stats_dumps,
            timing_notice=engine_impl.timing_notice,
            wall_limit_s=limit_s,
            details={
                "version": engine.version,
                "binary_sha256": engine.binary_sha256,
                **(
                    {"bootloader_sha256": engine.bootloader_sha256}
                    if engine.bootloader_sha256
                    else {}
                ),
                "command": machine.args(),
                "memory_mb": machine.memory_mb,
            },
        ),
        platform={
            **request.platform.describe(),
            "calibration": calibration.manifest_entry(
                gem5_sha256=engine.binary_sha256 if engine_impl.models_core_speed else None
            ),
        },
        policy=request.policy,
        policy_details=policy_details(request),
        mix=request.mix.describe(),
        repetition=request.repetition,
        method=request.method,
        warmup_ms=warmup_of(request),
        perturbation=prepared.perturbation.to_json() if prepared.perturbation else None,
        speedups=request.online.describe() if request.online else None,
        trace={"events": list(request.trace_events)} if request.trace_events else None,
        mix_limit_s=request.mix_limit_s,
        kernel={
            "variant": kmanifest["variant"],
            "digest": kmanifest["digest"],
            "directory": str(build.directory),
            "kernelversion": kmanifest["kernelversion"],
            "debian_version": kmanifest["linux"]["debian_version"],
            "series_sha256": kmanifest["series_sha256"],
            **dict(build.binaries()),
            "tick_hz": build.tick_hz,
        },
        inputs={
            **prepared.inputs,
            **({"suite_image": str(suite.image)} if suite else {}),
        },
        started=_now(),
    )
    writer.write_manifest(manifest)

    outcome = engine_impl.boot(
        BootInputs(
            identity=engine,
            machine=machine,
            cmdline=cmdline,
            limit_s=limit_s,
            image=build.image,
            vmlinux=build.vmlinux,
            vmlinux_sha256=kmanifest["artifacts"]["vmlinux"]["sha256"],
            initramfs=initramfs,
            initramfs_sha256=prepared.inputs["initramfs_sha256"],
            run_desc=writer.path(RUN_DESC),
            dtb=writer.path(DEVICE_TREE),
            dtb_bytes=dtb,
            disk=suite.image if suite else None,
            disk_sha256=suite.sha256 if suite else None,
            slice_ms=request.slice_ms,
            mix_limit_s=request.mix_limit_s,
        ),
        writer,
    )
    boot = outcome.result

    report = parse_console(writer.console_text())
    writer.write_results(report.apps)
    guest = report.guest_json()
    if guest is not None:
        writer.write_guest(guest)
    speedups = manifest.speedups
    daemon = policies.policy_daemon(request.policy)
    if daemon:
        writer.write_policy_log(report.policy_log)
    online_problems: list[str] = []
    if request.online is not None:
        writer.write_online(report.online)
        summary = online_mod.summary_of(report.online)
        speedups = {**(speedups or {}), "daemon": summary}
        if report.complete:  # a run cut short says why by itself
            online_problems = online_mod.problems(summary, request.online)
    trace = manifest.trace
    if request.trace_events:
        trace = {"events": list(request.trace_events), **keep_trace(report, writer)}
    # a kernel that refused a knob the command line set is not the run described
    amp = (report.guest or {}).get("amp")
    refused = policies.knob_problems(cmdline, amp.get("knobs") if isinstance(amp, dict) else None)
    problems = (*outcome.problems, *refused, *online_problems)
    if (
        daemon
        and report.complete
        and not any(r.get("what") == "summary" for r in report.policy_log)
    ):  # a daemon that ended well says what it did
        problems = (*problems, f"the policy daemon {daemon[0]} left no summary in its log")
    status = judge(boot, report, limit_s, engine=engine_impl.label, extra=problems)
    ending = Ending(
        finished=_now(),
        wall_s=boot.wall_s,
        exit_code=boot.exit_code,
        timed_out=boot.timed_out,
        kernel_problems=tuple(report.kernel_problems),
        status=status,
    )
    writer.write_manifest(
        replace(
            manifest,
            engine_outputs=outcome.manifest,
            ending=ending,
            speedups=speedups,
            trace=trace,
            daemons=tuple(report.daemons) or None,
        )
    )
    writer.finish(status)
    return RunOutcome(directory=out_dir, status=status, report=report)
