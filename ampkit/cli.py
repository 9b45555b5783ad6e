"""The one command line: ``ampkit <command> ...`` (``ampkit --help`` lists them)."""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from ampkit import build as build_mod
from ampkit import (
    calibration,
    hostdeps,
    kernel,
    parsec,
    paths,
    perturb,
    platform,
    policies,
    references,
    tracing,
)
from ampkit.engines import DEFAULT_ENGINE, gem5, get_engine, qemu
from ampkit.errors import (
    EXIT_BUILD,
    EXIT_ENVIRONMENT,
    EXIT_FAILED_RUN,
    AmpkitError,
    MissingDependency,
    UsageError,
)
from ampkit.interference import DEFAULT_THRESHOLD_PCT, Contention, load_models
from ampkit.mix import CATEGORIES, MIN_THREADS, Mix, load_mix, mix_names
from ampkit.online import OnlineSpeedups
from ampkit.online import for_run as online_for_run
from ampkit.profile import load_profile
from ampkit.run import DEFAULT_MIX_LIMIT_S, ENGINES, RunRequest, execute, prepare_for, warmup_of
from ampkit.rundesc import METHODS
from ampkit.rundir import GUEST, Excluded, RunDir
from ampkit.sizes import sized_for
from ampkit.summary import summarize

if TYPE_CHECKING:
    import pandas as pd

    from ampkit.behaviour import Table
    from ampkit.campaign.spec import Spec


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    # Unwinds like Ctrl-C, so every 'finally' runs: QEMU is killed, partial
    # run directories keep their logs.
    raise KeyboardInterrupt(f"signal {signum}")


# --- commands ----------------------------------------------------------------


def cmd_doctor(_args: argparse.Namespace) -> int:
    missing = 0
    for program, package in sorted(hostdeps.PROGRAMS.items()):
        found = shutil.which(program)
        missing += found is None
        print(f"{'ok' if found else 'MISSING':8} {program:24} ({package})")
    for path, package in sorted(hostdeps.FILES.items()):
        exists = Path(path).exists()
        missing += not exists
        print(f"{'ok' if exists else 'MISSING':8} {path:24} ({package})")
    print(f"{'ok' if shutil.which('ccache') else 'absent':8} {'ccache':24} (optional)")
    if missing:
        print("\nrun 'make setup' to install what is missing")
    return EXIT_ENVIRONMENT if missing else 0


def cmd_build(args: argparse.Namespace) -> int:
    build_mod.scons(*args.targets, kernel_jobs=args.make_jobs)
    return 0


def _kernel_variant(args: argparse.Namespace) -> str:
    if args.debug_kernel and args.unpatched:
        raise UsageError("--debug-kernel and --unpatched exclude each other", "choose one variant")
    return "debug" if args.debug_kernel else "unpatched" if args.unpatched else "default"


def cmd_kernel_build(args: argparse.Namespace) -> int:
    # 'ampkit kernel build': kept, hidden, for old scripts; 'ampkit build' is the way
    variant = _kernel_variant(args)
    started = time.monotonic()
    build_mod.scons(build_mod.kernel_target(variant), kernel_jobs=args.make_jobs)
    found = kernel.find_build(variant)
    assert found is not None
    print(f"{found.directory}  ({time.monotonic() - started:.1f} s)")
    return 0


def cmd_kernel_info(args: argparse.Namespace) -> int:
    variant = _kernel_variant(args)
    inputs = kernel.KernelInputs.discover(variant)
    found = kernel.find_build(variant)
    info = {
        "variant": variant,
        "digest": inputs.digest,
        "directory": str(inputs.output_dir),
        "built": found is not None,
        "inputs": inputs.record,
    }
    print(json.dumps(info, indent=2))
    return 0


def cmd_kernel_check(_args: argparse.Namespace) -> int:
    from ampkit import kernelcheck  # only this command needs it

    result = kernelcheck.check()
    record = result.record
    for step in record["steps"]:
        state = "FAILED" if step["error"] else ("warnings" if step["warnings"] else "ok")
        print(f"{step['patch']:<72} {step['config']:<16} {state:<8} {step['seconds']:>7.1f} s")
    print(f"{result.directory}  ({record['seconds']:.0f} s when checked)")
    if result.failures or result.warnings:
        # C warnings are errors (CONFIG_WERROR): either way the series fails to build
        for line in result.failures + result.warnings:
            print(line)
        return EXIT_BUILD
    return 0


def cmd_images_build(_args: argparse.Namespace) -> int:
    # 'ampkit images build': kept, hidden, for old scripts; 'ampkit build' is the way
    build_mod.scons(build_mod.INITRAMFS)
    print(build_mod.initramfs_image())
    return 0


def cmd_platform_list(_args: argparse.Namespace) -> int:
    for name in platform.preset_names():
        p = platform.get_platform(name)
        caps = ",".join(str(c.capacity) for c in p.cpus)
        print(
            f"{name:6} {p.big} big ({p.big_core.model} {p.big_core.clock_mhz} MHz) + "
            f"{p.little} little ({p.little_core.model} {p.little_core.clock_mhz} MHz); "
            f"capacities {caps}"
        )
    print("any <B>B<L>L, such as 1B3L, works too")
    return 0


def cmd_platform_calibrate(args: argparse.Namespace) -> int:
    from datetime import date

    from ampkit.hashing import sha256_file
    from ampkit.mix import App
    from ampkit.profile import measure

    if args.size < 1:
        raise UsageError(f"--size must be at least 1, not {args.size}")
    identity = gem5.ENGINE.identity()  # no gem5, no calibration: it says what it looked for
    build, image = _artifacts("default", args.no_build)
    runs = Path(args.runs)
    app = App(program=calibration.BENCHMARK, threads=1, size=args.size)
    prof = measure([app], 1, 1, runs, build=build, image=image, engine=gem5.ENGINE.name)
    entry = prof.entries[0]
    plat = platform.make_platform(1, 1)
    big_mhz, little_mhz = plat.big_core.clock_mhz, plat.little_core.clock_mhz
    benchmark = paths.build_dir() / "aarch64" / "bin" / calibration.BENCHMARK
    big_run, little_run = entry.big_runs[0], entry.little_runs[0]
    record = calibration.Calibration(
        little_dmips_per_mhz=calibration.derive(
            entry.big_ns[0], entry.little_ns[0], big_mhz, little_mhz
        ),
        benchmark=calibration.BENCHMARK,
        size=args.size,
        big_ns=entry.big_ns[0],
        little_ns=entry.little_ns[0],
        big_mhz=big_mhz,
        little_mhz=little_mhz,
        big_ipc=calibration.core_ipc(RunDir(runs / big_run).gem5_summary(), big_run),
        little_ipc=calibration.core_ipc(RunDir(runs / little_run).gem5_summary(), little_run),
        gem5_sha256=identity.binary_sha256,
        model_sha256=calibration.model_sha256(),
        benchmark_sha256=sha256_file(benchmark),
        date=date.today().isoformat(),
        runs=(*entry.big_runs, *entry.little_runs),
    )
    out = Path(args.out) if args.out else calibration.CALIBRATION_FILE
    out.write_text(record.render())
    capacity = round(platform.CAPACITY_SCALE * entry.big_ns[0] / entry.little_ns[0])
    print(
        f"{calibration.BENCHMARK} n{args.size}: big {entry.big_ns[0] / 1e6:.3f} ms at "
        f"{big_mhz} MHz, little {entry.little_ns[0] / 1e6:.3f} ms at {little_mhz} MHz"
    )
    ipcs = f"big {record.big_ipc:.3f}, little {record.little_ipc:.3f}"
    print(f"IPC on {calibration.BENCHMARK}: {ipcs}")
    print(
        f"little core: {record.little_dmips_per_mhz} per MHz against the big core's 1024 "
        f"(capacity {capacity} at these clocks); written to {out}"
    )
    return 0


def cmd_platform_dtb(args: argparse.Namespace) -> int:
    machine = qemu.QemuMachine(platform.get_platform(args.platform))
    blob = qemu.asymmetric_dtb(machine)
    if args.dts:
        dtc = hostdeps.require_program("dtc")
        text = subprocess.run(
            [dtc, "-q", "-I", "dtb", "-O", "dts"], input=blob, capture_output=True, check=True
        ).stdout
        blob = text
    if args.out:
        Path(args.out).write_bytes(blob)
    else:
        sys.stdout.buffer.write(blob)
    return 0


def _platform_from(args: argparse.Namespace) -> platform.Platform:
    if args.big is not None or args.little is not None:
        if args.big is None or args.little is None:
            raise UsageError("--big and --little go together")
        return platform.make_platform(args.big, args.little)
    return platform.get_platform(args.platform)


#: What a guest boots beside the kernel: SCons target -> where it lands.
GUEST_IMAGES = {
    build_mod.INITRAMFS: build_mod.initramfs_image,
    build_mod.SHELL_IMAGE: build_mod.shell_image,
}


def _artifacts(
    variant: str, no_build: bool, image_target: str = build_mod.INITRAMFS
) -> tuple[kernel.KernelBuild, Path]:
    """The kernel and the guest image, brought up to date unless no_build."""
    kernel_target = build_mod.kernel_target(variant)
    if not no_build:
        build_mod.scons(kernel_target, image_target)
    found = kernel.find_build(variant)
    image = GUEST_IMAGES[image_target]()
    if found is None or not image.is_file():
        raise AmpkitError(
            f"the kernel or the {image_target} is not built",
            f"run 'ampkit build {kernel_target} {image_target}', or drop --no-build",
        )
    return found, image


def calibration_notice(run_dir: Path) -> str | None:
    """What to tell the user of a run made under a capacity calibration that
    may not describe the machine that ran (its manifest records why; the
    report repeats it); None when there is nothing to tell."""
    try:
        stale = RunDir(run_dir).info().calibration_stale
    except Excluded:
        return None
    if not stale:
        return None
    return (
        "notice: the capacity calibration in force (configs/calibration.toml) may not "
        f"describe the machine that ran: {'; '.join(stale)}. Run 'ampkit platform "
        "calibrate' on this machine model, or delete the file to use the platforms' figures."
    )


def _span_ms(args: argparse.Namespace) -> float | None:
    if args.span_ms is None:
        return None
    if not get_engine(args.engine).models_core_speed:
        raise UsageError(
            f"--span-ms sizes apps only on an engine that models the cores' speed, "
            f"not {args.engine}"
        )
    if args.span_ms <= 0:
        raise UsageError(f"--span-ms must be positive, not {args.span_ms:g}")
    return float(args.span_ms)


def cmd_run(args: argparse.Namespace) -> int:
    variant = _boot_variant(args)
    policies.colab_thresholds(args.append or "")  # values the kernel would refuse: said now
    request = RunRequest(
        platform=_platform_from(args),
        policy=policies.check_policy(args.policy),
        # sized first: a profile's hint for this very application needs its size
        mix=_with_hints(
            sized_for(
                load_mix(args.mix),
                args.engine,
                _span_ms(args),
                setup=kernel.setup_of(variant, args.append or ""),
            ),
            args.speedups,
            energies=policies.needs_energies(args.policy, args.append or ""),
        ),
        repetition=args.repetition,
        engine=args.engine,
        mix_limit_s=args.mix_limit,
        kernel_variant=variant,
        extra_cmdline=args.append or "",
        method=args.method,
        suite_manifest=Path(args.parsec) if args.parsec else None,
        qemu_clock=args.qemu_clock,
        wall_limit_s=args.wall_limit,
        warmup_ms=args.warmup_ms,
        span_ms=_span_ms(args),
        perturb_us=perturb.check_max(args.perturb_us),
        slice_ms=args.slice_ms,
        online=_online(args),
        trace_events=tracing.events_of(args.trace) if args.trace else (),
        contention=_contention(args),
    )
    if args.wall_limit is not None and args.wall_limit <= 0:
        raise UsageError(f"--wall-limit must be positive, not {args.wall_limit:g}")
    warmup_of(request)  # a bad --warmup-ms stops before anything is built
    # so does a missing hint
    policies.check_inputs(request.policy, request.mix.apps, request.extra_cmdline)
    kinds = _reference_kinds(args.references)
    build, image = _artifacts(request.kernel_variant, args.no_build)
    out = (
        Path(args.out)
        if args.out
        else Path("runs") / (time.strftime("%Y%m%d-%H%M%S-") + request.run_id)
    )
    print(f"run {request.run_id} -> {out}", file=sys.stderr)
    outcome = execute(request, out, build, image, force=args.force)
    print(f"{outcome.directory}: {outcome.status}")
    if notice := calibration_notice(outcome.directory):
        print(notice, file=sys.stderr)
    all_ok = outcome.ok
    # Beside the run, named by run id alone, so that mixes sharing an
    # application share its references; sound ones already there are kept.
    for ref in references.references(request, kinds):
        ref_dir = out.parent / ref.request.run_id
        prepared = prepare_for(ref.request, build, image)
        if references.is_done(ref_dir, prepared.run_key) and not args.force:
            print(f"{ref_dir}: ok (kept; {ref.kind} reference)")
            continue
        print(f"reference ({ref.kind}) {ref.request.run_id} -> {ref_dir}", file=sys.stderr)
        ref_outcome = execute(ref.request, ref_dir, build, image, force=True, prepared=prepared)
        print(f"{ref_outcome.directory}: {ref_outcome.status}")
        all_ok = all_ok and ref_outcome.ok
    return 0 if all_ok else EXIT_FAILED_RUN


def _online(args: argparse.Namespace) -> OnlineSpeedups | None:
    if args.speedup_model is None:
        if args.online_period_ms is not None:
            raise UsageError("--online-period-ms needs --speedup-model")
        if policies.uses_online(args.policy):
            raise UsageError(
                f"--policy {args.policy} is fed by the online speedup model",
                "give --speedup-model DIR (a directory 'ampkit model train' wrote)",
            )
        return None
    if not policies.uses_online(args.policy):
        raise UsageError(
            f"--speedup-model feeds a policy named with {policies.ONLINE_SUFFIX}, not "
            f"{args.policy}",
            f"run --policy {policies.kernel_policy(args.policy)}{policies.ONLINE_SUFFIX}",
        )
    return online_for_run(
        Path(args.speedup_model),
        engine=args.engine,
        cmdline=args.append or "",
        period_ms=args.online_period_ms,
    )


def _contention(args: argparse.Namespace) -> Contention | None:
    """The contention-aware policy's models and threshold, from
    --interference-models and --contention-threshold."""
    if not policies.needs_models(args.policy):
        if args.interference_models is not None or args.contention_threshold is not None:
            takers = ", ".join(p for p in policies.names() if policies.needs_models(p))
            raise UsageError(
                f"--interference-models and --contention-threshold are for the policies "
                f"that take them ({takers}), not {args.policy}",
                "drop them, or run --policy contention",
            )
        return None
    if args.interference_models is None:
        raise UsageError(
            f"--policy {args.policy} places by interference models",
            "give --interference-models FILE (a model file: ampkit/interference.py)",
        )
    models = load_models(Path(args.interference_models))
    if args.contention_threshold is None:
        return Contention(models)
    return Contention(models, args.contention_threshold)


def _with_hints(mix: Mix, profile: str | None, *, energies: bool = False) -> Mix:
    """A mix that names its own profile keeps its hints, and a policy that
    weighs energies takes them from that profile; any other mix is hinted
    by ``profile`` where given."""
    if mix.profile is not None:
        return load_profile(mix.profile).with_energies(mix) if energies else mix
    if profile:
        return load_profile(Path(profile)).apply(mix, energies=energies)
    return mix


def _reference_kinds(spec: str | None) -> list[str]:
    if not spec:
        return []
    kinds = [k.strip() for k in spec.split(",") if k.strip()]
    bad = [k for k in kinds if k not in references.KINDS]
    if bad:
        raise AmpkitError(
            f"unknown reference kind(s): {', '.join(bad)}",
            f"valid: {', '.join(references.KINDS)} (comma-separated)",
        )
    return kinds


def cmd_demo(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and any(out.iterdir()) and not (out / "summary.txt").exists():
        raise UsageError(f"{out} exists and is not a demo directory", "choose another --out")
    build, image = _artifacts("default", no_build=False)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    plat = platform.get_platform("2B2L")
    mix = load_mix("demo")
    done: list[Path] = []
    all_ok = True
    todo = [policies.BASELINE]
    while todo:
        policy = todo.pop(0)
        request = RunRequest(platform=plat, policy=policy, mix=mix)
        print(f"demo: {request.run_id} on QEMU", file=sys.stderr)
        outcome = execute(request, out / request.run_id, build, image, force=True)
        print(f"demo: {outcome.directory}: {outcome.status}", file=sys.stderr)
        done.append(outcome.directory)
        all_ok = all_ok and outcome.ok
        if policy == policies.BASELINE and outcome.report.guest:
            # Every further policy this kernel has and the kit knows, but
            # those that rank by values the demo mix does not give (eef:
            # energies, which only a gem5 profile measures), said so.
            amp = outcome.report.guest.get("amp") or {}
            for p in amp.get("available") or []:
                if p not in policies.POLICIES or p == policies.BASELINE:
                    continue
                if missing := policies.missing_inputs(p, mix.apps):
                    print(
                        f"demo: {p} not run: the demo mix does not give what it ranks by "
                        f"({'; '.join(missing)})",
                        file=sys.stderr,
                    )
                    continue
                todo.append(p)
    # The references: each application alone under the baseline, on the
    # same platform (slowdowns) and on its little CPUs only (ASP).
    base = RunRequest(platform=plat, policy=policies.BASELINE, mix=mix)
    for ref in references.references(base, ("alone", "little-only")):
        request = ref.request
        print(f"demo: {request.run_id} on QEMU ({ref.kind} reference)", file=sys.stderr)
        outcome = execute(request, out / request.run_id, build, image, force=True)
        print(f"demo: {outcome.directory}: {outcome.status}", file=sys.stderr)
        done.append(outcome.directory)
        all_ok = all_ok and outcome.ok
    text = summarize(done)
    (out / "summary.txt").write_text(text)
    print(text)
    from ampkit.analysis.report import write_report

    report = write_report(out, out / "report")
    print(f"run directories and summary.txt are in {out}; the report is {report.directory}/")
    return 0 if all_ok else EXIT_FAILED_RUN


def _names(spec: str) -> list[str]:
    return [w for w in (x.strip() for x in spec.split(",")) if w]


def cmd_parsec_build(args: argparse.Namespace) -> int:
    manifest_file = parsec.build_suite(
        args.sources,
        benchmarks=_names(args.benchmarks) if args.benchmarks else parsec.DEFAULT_BENCHMARKS,
        inputs=_names(args.inputs),
        out_dir=Path(args.out) if args.out else None,
    )
    return _print_suite(manifest_file)


def _print_suite(manifest_file: Path) -> int:
    suite = parsec.load_image(manifest_file)
    print(f"{suite.image} (sha256 {suite.sha256[:16]}), manifest {manifest_file}")
    for program, bench in sorted(suite.manifest["benchmarks"].items()):
        print(f"  {program:26} {bench['package']:32} inputs: {', '.join(sorted(bench['inputs']))}")
    return 0


def cmd_parsec_list(args: argparse.Namespace) -> int:
    manifest_file = Path(args.manifest) if args.manifest else parsec.manifest_path()
    if not manifest_file.is_file():
        print("no PARSEC image built; 'ampkit parsec build SOURCES' builds by default:")
        for program in parsec.DEFAULT_BENCHMARKS:
            print(f"  {program}")
        return 0
    return _print_suite(manifest_file)


def cmd_shell(args: argparse.Namespace) -> int:
    engine = get_engine(args.engine)
    if args.policy in policies.USER_POLICIES:
        raise UsageError(
            f"policy {args.policy} is a daemon beside a run's applications; a shell boots "
            "the kernel's policies alone",
            f"ampkit shell --policy {policies.kernel_policy(args.policy)}, and run "
            f"/bin/{policies.policy_daemon(args.policy)[0]} yourself",
        )
    policy = policies.kernel_policy(policies.check_policy(args.policy))
    target = _platform_from(args)
    variant = _boot_variant(args)
    found, disk = _artifacts(variant, args.no_build, build_mod.SHELL_IMAGE)
    with tempfile.TemporaryDirectory(prefix="ampkit-shell-") as tmp:
        cmd, how_to_quit = engine.shell_command(
            target, policy, image=found.image, disk=disk, append=args.append or "", tmp=Path(tmp)
        )
        print(f"ampkit shell: {target.name}, policy {policy}; {how_to_quit}", file=sys.stderr)
        # The engine owns the terminal until it exits; Ctrl-C goes to the guest.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return subprocess.run(cmd, check=False).returncode
        finally:
            signal.signal(signal.SIGINT, previous)


def cmd_profile(args: argparse.Namespace) -> int:
    from datetime import date

    from ampkit.engines import get_engine
    from ampkit.mix import CATALOGUE_SIZES, App
    from ampkit.pmu import EVENT_SETS
    from ampkit.profile import OVER_INTERVAL, OVER_REGION, apps_of_mixes, from_runs, measure

    if args.from_runs:
        prof = from_runs(Path(args.from_runs))
        Path(args.out).write_text(prof.render())
        for e in prof.entries:
            print(f"{e.app.program:10} t{e.app.threads} n{e.app.size}: speedup {e.speedup:.3f}")
        print(f"{args.out}: {len(prof.entries)} applications from the runs in {args.from_runs}")
        return 0
    if args.cpus < 1 or args.repetitions < 1:
        raise UsageError("--cpus and --repetitions must be at least 1")
    if not 0 < args.scale <= 1:
        raise UsageError(
            f"--scale must be above 0 and at most 1, not {args.scale:g}",
            "it shrinks the catalogue's sizes (gem5 simulates them for hours)",
        )
    if args.mix:
        apps = apps_of_mixes(
            a for name in args.mix for a in sized_for(load_mix(name), args.engine).apps
        )
    else:
        apps = [
            App(
                program=p,
                threads=max(args.cpus, MIN_THREADS.get(p, 1)),
                size=max(1, round(size * args.scale)),
            )
            for p, size in sorted(CATALOGUE_SIZES.items())
        ]
    build, image = _artifacts(args.kernel, args.no_build)
    runs = Path(args.runs)
    prof = measure(
        apps,
        args.cpus,
        args.repetitions,
        runs,
        build=build,
        image=image,
        engine=args.engine,
        kernel_variant=args.kernel,
        cmdline=args.append,
        pmu_sets=() if args.no_pmu else EVENT_SETS,
    )
    identity = get_engine(args.engine).identity()
    provenance = {
        "engine_sha256": identity.binary_sha256,
        "kernel_digest": build.manifest["digest"],
        "scale": f"{args.scale:g}" if not args.mix else "mix sizes",
        **({"kernel_variant": args.kernel} if args.kernel != "default" else {}),
        **({"cmdline": args.append} if args.append else {}),
        "date": date.today().isoformat(),
    }
    if get_engine(args.engine).models_core_speed:
        provenance["model_sha256"] = calibration.model_sha256()
    if not args.no_pmu and get_engine(args.engine).writes_statistics:
        # one kind for all: measure() refuses PARSEC beside the kit's workloads
        over = OVER_INTERVAL if any(e.app.from_suite for e in prof.entries) else OVER_REGION
        provenance["pmu"] = f"{over} (ampkit.gem5stats)"
    prof = replace(prof, provenance=tuple(provenance.items()))
    Path(args.out).write_text(prof.render())
    for e in prof.entries:
        print(f"{e.app.program:10} t{e.app.threads} n{e.app.size}: speedup {e.speedup:.3f}")
    print(f"{args.out}: {len(prof.entries)} applications; runs in {runs}")
    return 0


def cmd_interference_profile(args: argparse.Namespace) -> int:
    from datetime import date

    from ampkit import corun
    from ampkit.engines import get_engine
    from ampkit.mix import App
    from ampkit.profile import apps_of_mixes

    def apps_of(names: list[str]) -> list[App]:
        return apps_of_mixes(
            a for name in names for a in sized_for(load_mix(name), args.engine, args.span_ms).apps
        )

    platform = _platform_from(args)
    targets = apps_of(args.mix)
    co_runners = apps_of(args.co_runners) if args.co_runners else targets
    corun.check_engine(args.engine)
    runs = corun.plan(targets, co_runners, platform, args.co_runs)
    print(
        f"{len(runs)} runs: {len(targets)} applications profiled beside {len(co_runners)} "
        f"co-runners on {platform.name} -> {args.runs}",
        file=sys.stderr,
    )
    build, image = _artifacts(args.kernel, args.no_build)
    results = corun.run_all(
        runs,
        platform,
        Path(args.runs),
        build=build,
        image=image,
        engine=args.engine,
        kernel_variant=args.kernel,
        cmdline=args.append,
        log=sys.stderr,
    )
    identity = get_engine(args.engine).identity()
    provenance = {
        "platform": platform.name,
        "engine": args.engine,
        "engine_sha256": identity.binary_sha256,
        "kernel_digest": build.manifest["digest"],
        **({"cmdline": args.append} if args.append else {}),
        "co_runners": [corun.tag(a) for a in co_runners],
        "co_runs_asked": args.co_runs if args.co_runs is not None else "all",
        "runs": len(runs),
        "date": date.today().isoformat(),
    }
    models, rows, held = corun.fit(results, provenance)
    out = Path(args.out)
    out.write_text(models.to_toml())
    rows.to_csv(out.with_suffix(".coruns.csv"), index=False)
    held.to_csv(out.with_suffix(".held-out.csv"), index=False)
    for m in models.apps:
        print(f"{m.program:10} t{m.threads} {m.size}: fitted on each core type")
    for kind, what in (
        ("co_run", "each co-run left out"),
        ("co_runner", "each co-runner left out"),
    ):
        points = models.provenance.get(f"held_out_{kind}_mean_abs_points")
        if points is None:
            print(f"held out, {what}: no fit without it tells the terms apart")
            continue
        time_error = models.provenance[f"held_out_{kind}_mean_time_error"]
        print(
            f"held out, {what}: {points} points of slowdown on average, "
            f"{100 * time_error:.1f}% of the run time"
        )
    print(f"{out}: {len(models.apps)} models; Table II in {out.with_suffix('.coruns.csv')}")
    return 0


def cmd_model_online(args: argparse.Namespace) -> int:
    from ampkit.analysis import online as online_analysis
    from ampkit.rundir import find_run_dirs

    root = _finished_runs(_runs_dir(args.dir))
    found, _ = find_run_dirs(root)
    frame = online_analysis.estimates(found)
    if frame.empty:
        raise AmpkitError(
            f"no run under {root} was fed by the online speedup model (no online.jsonl)",
            "run a policy named with +online (--policy colab+online --speedup-model DIR)",
        )
    measured = load_profile(Path(args.speedups)).speedups()
    table = online_analysis.accuracy(frame, measured)
    for _, r in table.iterrows():
        print(
            f"{r['run_id']:48} {r['app']:10} {r['periods']:4} periods  estimate "
            f"{r['estimate']:6.3f}  measured {r['measured']:6.3f}  error {r['error']:+.1%}"
        )
    print(f"mean |error| {table['error'].abs().mean():.1%} over {len(table)} applications")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out / "online-estimates.csv", index=False)
        table.to_csv(out / "online-accuracy.csv", index=False)
        print(f"{out}: online-estimates.csv, online-accuracy.csv")
    return 0


def cmd_model_train(args: argparse.Namespace) -> int:
    from ampkit import speedupmodel

    if args.events is not None and args.events < 1:
        raise UsageError("--events must be at least 1")
    prof = load_profile(Path(args.profile))
    models, check = speedupmodel.train(prof, args.events)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for m in models:
        path = out / f"{m.target}-{m.core}.toml"
        path.write_text(m.render())
        terms = " ".join(f"{c:+.4g} x {e}" for c, e in zip(m.coefficients, m.events, strict=True))
        print(f"{path}: {m.target} = {m.intercept:.4g} {terms}")
    check.to_csv(out / "validation.csv", index=False)
    speedupmodel.plot_validation(check, out / "validation.png")
    print("leave one program out (each program predicted by a model trained without it):")
    for _, r in check.iterrows():
        print(
            f"  {r['target']:7} {r['core']:6} {r['app']:24} measured {r['measured']:8.4g}  "
            f"predicted {r['predicted']:8.4g}  error {r['error']:+.1%}"
        )
    for _, r in speedupmodel.held_out_errors(check).iterrows():
        print(
            f"  {r['target']} from {r['core']} counts: mean |error| {r['model']:.1%} "
            f"(the other programs' mean as the prediction: {r['mean']:.1%})"
        )
        if not r["earns"]:
            print(
                f"warning: {r['target']} from {r['core']} counts errs more on a program it did "
                "not see than the others' mean does: no evidence that the counts predict it; "
                "train on more varied programs before a policy relies on it",
                file=sys.stderr,
            )
    print(f"{out}: {len(models)} models, validation.csv, validation.png")
    return 0


def _add_machine_args(s: argparse.ArgumentParser) -> None:
    """The engine and the platform, for the commands that boot a guest."""
    s.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINES)
    s.add_argument(
        "--platform",
        default="2B2L",
        help="a preset (see 'ampkit platform list') or <B>B<L>L",
    )
    s.add_argument("--big", type=int, help="number of big CPUs (with --little)")
    s.add_argument("--little", type=int, help="number of little CPUs (with --big)")


def _add_boot_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--debug-kernel", action="store_true", help="boot the debug kernel variant")
    s.add_argument(
        "--kernel",
        choices=BOOT_VARIANTS,
        help="the kernel variant to boot (default: default; hz1000: a campaign's at "
        "sched_timescale=4, to diagnose its runs at their setup)",
    )
    s.add_argument("--append", help="extra kernel command-line arguments")


#: The kernel variants 'run' and 'shell' boot (the pristine one is a
#: campaign's baseline: ampkit/kernel.py).
BOOT_VARIANTS = ("default", "debug", "hz1000")


def _boot_variant(args: argparse.Namespace) -> str:
    """--kernel, or the debug kernel that --debug-kernel names."""
    if args.debug_kernel and args.kernel not in (None, "debug"):
        raise UsageError(
            f"--debug-kernel and --kernel {args.kernel} name two kernels", "give one of them"
        )
    return str(args.kernel or ("debug" if args.debug_kernel else "default"))


def _add_variant_args(s: argparse.ArgumentParser, debug_help: str, unpatched_help: str) -> None:
    """The kernel variant, spelt as 'run' and 'shell' spell the debug kernel."""
    s.add_argument("--debug-kernel", action="store_true", help=debug_help)
    # the spelling of earlier versions, hidden
    s.add_argument("--debug", dest="debug_kernel", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--unpatched", action="store_true", help=unpatched_help)


def cmd_mix_list(args: argparse.Namespace) -> int:
    from ampkit.behaviour import check_mix, shipped_table

    table = shipped_table()
    words = {True: "measured: holds", False: "measured: NOT its category", None: ""}
    for name in mix_names():
        mix = load_mix(name)
        apps = " ".join(f"{a.program}x{a.threads}" for a in mix.apps)
        verdict = check_mix(mix, table).holds if table is not None else None
        print(f"{name:44} {mix.category:16} {apps:40} {words[verdict]}".rstrip())
    return 0


def _behaviour_table(args: argparse.Namespace) -> "Table | None":
    from ampkit.behaviour import load_table, shipped_table

    if getattr(args, "no_behaviour", False):
        return None
    return load_table(Path(args.behaviour)) if args.behaviour else shipped_table()


def cmd_mix_check(args: argparse.Namespace) -> int:
    from ampkit.behaviour import check_mix

    table = _behaviour_table(args)
    if table is None and not args.no_behaviour:
        print("notice: no behaviour table (configs/behaviour-gem5.toml): categories not tested")
    wrong = []
    for path in args.files:
        mix = load_mix(path)
        print(f"{path}: ok ({mix.category}, {len(mix.apps)} applications)")
        if table is None:
            continue
        verdict = check_mix(mix, table)
        for line in verdict.lines:
            print(f"  {line}")
        if verdict.holds is False:
            print(f"  {path}: its programs, as measured, do not make a {mix.category} mix")
            wrong.append(str(path))
        elif verdict.holds is None:
            print(f"  {path}: too few of its programs measured to say")
    if wrong:
        raise AmpkitError(
            f"{len(wrong)} mix(es) not of their declared category by measurement: "
            f"{', '.join(wrong)}",
            "change the mix's programs or its category, or measure again "
            "(measurements/gem5-workloads/README.md); --no-behaviour checks the files only",
        )
    return 0


def cmd_mix_waiting(args: argparse.Namespace) -> int:
    import csv
    import dataclasses

    from ampkit.behaviour import (
        MixWaiting,
        categories_inside,
        inside_summary,
        load_table,
        table_of,
        timing_engine,
        waiting_in_mixes,
        waiting_summary,
    )

    engine = args.engine or timing_engine()
    rows, alone, left_out = waiting_in_mixes([Path(d) for d in args.dirs], engine)
    for line in left_out:
        print(f"left out: {line}", file=sys.stderr)
    if not rows:
        raise AmpkitError(
            f"no mix run of two programs or more on {engine} under {', '.join(args.dirs)}",
            "point it at a campaign's directory or its archived runs (--engine qemu for QEMU runs)",
        )
    table = None
    if not args.no_behaviour:
        table = load_table(Path(args.behaviour)) if args.behaviour else table_of(engine)
    if table is not None and table.engine != engine:
        raise AmpkitError(
            f"the behaviour table is of {table.engine} runs, these of {engine}",
            f"give a table of {engine} runs (--behaviour), or --no-behaviour",
        )
    for line in waiting_summary(rows, alone, table):
        print(line)
    if verdicts := categories_inside(rows):
        print("\nEach mix's category inside it (its applications' shares in the run):")
        for line in inside_summary(verdicts):
            print(line)
    if args.out:
        with Path(args.out).open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow([field.name for field in dataclasses.fields(MixWaiting)])
            for w in rows:
                writer.writerow(dataclasses.astuple(w))
        print(f"{args.out}: {len(rows)} applications of {len({w.run for w in rows})} runs")
    return 0


def cmd_mix_behaviour(args: argparse.Namespace) -> int:
    from ampkit.behaviour import measure, timing_engine

    engine = args.engine or timing_engine()
    table, left_out = measure([Path(d) for d in args.dirs], engine)
    for line in left_out:
        print(f"left out: {line}", file=sys.stderr)
    if not table.measurements:
        raise AmpkitError(
            f"no run of one program alone on {engine} under {', '.join(args.dirs)}",
            "run a campaign of one-program mixes first (measurements/gem5-workloads)",
        )
    text = table.render()
    if args.out:
        Path(args.out).write_text(text)
        print(f"{args.out}: {len(table.measurements)} measurements, {len(table.costs)} cost lines")
    else:
        sys.stdout.write(text)
    return 0


def cmd_mix_sizes(args: argparse.Namespace) -> int:
    table = _behaviour_table(args)
    if table is None or not table.costs:
        raise AmpkitError(
            "no cost lines to size programs by",
            "give --behaviour a table with [[cost]] entries (ampkit mix behaviour)",
        )
    print(
        f"sizes for {args.span_ms} simulated ms alone on {table.engine} at {table.setup} "
        f"({table.source}):"
    )
    for c in table.costs:
        print(
            f"  {c.program:10} -t {c.threads} -n {c.size_for(args.span_ms):<8} "
            f"about {c.wall_for(args.span_ms):.0f} wall s on {c.platform} "
            f"({c.ns_per_unit:.1f} ns per unit, {c.wall_s_per_sim_ms:.2f} wall s per ms)"
            + ("" if c.grows else "; its region did not grow with its size: see the table")
        )
    return 0


def cmd_mix_optimum(args: argparse.Namespace) -> int:
    from ampkit.analysis import optimum
    from ampkit.platform import get_platform

    mix = load_mix(args.mix)
    plat = get_platform(args.platform)
    apps = load_profile(Path(args.speedups)).model_inputs(mix)
    if not args.seconds > 0:
        raise AmpkitError(f"--seconds {args.seconds}", "give the model's T in seconds, above 0")
    found = optimum.points(apps, plat.big, plat.little, seconds=args.seconds)
    frame = optimum.table(apps, found)
    print(f"{mix.name} on {plat.name}: Saez et al.'s model (eq. 1, 4-9), T = {args.seconds:g} s")
    names = [a.name for a in apps]
    print(f"{'':12} {'ASP':>7} {'unfair':>7} {'EDP':>9}  " + "  ".join(f"F {n}" for n in names))
    for p in found:
        fractions = "  ".join(
            f"{f:>{len(n) + 2}.3f}" for n, f in zip(names, p.big_fraction, strict=True)
        )
        print(f"{p.scheduler:12} {p.asp:7.3f} {p.unfairness:7.3f} {p.edp:9.4g}  {fractions}")
    if args.out:
        frame.to_csv(args.out, index=False)
        print(f"{args.out}: {len(frame)} rows", file=sys.stderr)
    return 0


def cmd_mix_generate(args: argparse.Namespace) -> int:
    from ampkit.mix import generate_mix, render_mix
    from ampkit.profile import shipped_speedups

    speedups = load_profile(Path(args.speedups)).speedups() if args.speedups else shipped_speedups()
    mix = generate_mix(args.category, args.apps, args.seed, speedups)
    text = f"# ampkit mix generate --category {args.category} --apps {args.apps} "
    text += f"--seed {args.seed}\n" + render_mix(mix)
    if args.out:
        Path(args.out).write_text(text)
        print(f"{args.out}: {mix.name}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_mix_rehint(args: argparse.Namespace) -> int:
    from ampkit.mix import Mix, rehint_text
    from ampkit.paths import MIXES
    from ampkit.profile import SHIPPED_PROFILE, Profile

    source = Path(args.speedups) if args.speedups else SHIPPED_PROFILE
    hints = load_profile(source).speedups()
    files = [Path(f) for f in args.files] if args.files else sorted(MIXES.glob("*.toml"))
    mixes = [load_mix(str(path)) for path in files]  # a broken mix is reported before any write
    own: dict[Path, Profile] = {}

    def own_hints(mix: Mix, profile: Profile) -> dict[str, float]:
        """Per program, the hint its own profile measured for this very
        application; one program at two hints cannot be written."""
        found: dict[str, float] = {}
        for app in mix.apps:
            hint = profile.hint_for(app)
            if hint is not None and found.setdefault(app.program, hint) != hint:
                raise AmpkitError(
                    f"{mix.source}: {app.program} appears twice with different hints in "
                    f"{profile.source}",
                    "give each application its own speedup by hand, or split the mix",
                )
        return found

    changed = 0
    for path, mix in zip(files, mixes, strict=True):
        text = path.read_text()
        if mix.profile is not None:
            profile = own.setdefault(mix.profile, load_profile(mix.profile))
            new = rehint_text(text, own_hints(mix, profile))
        else:
            new = rehint_text(text, hints)
        if new != text:
            path.write_text(new)
            changed += 1
    print(f"{changed} of {len(files)} mixes took their hints from {source}", end="")
    if own:
        print(f" or from their own profile ({', '.join(str(p) for p in sorted(own))})", end="")
    print()
    return 0


def _little_only(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        platform_name, sep, slow = pair.partition("=")
        if not sep or not platform_name or not slow:
            raise AmpkitError(
                f"--little-only {pair!r} is not PLATFORM=LITTLE_ONLY_PLATFORM",
                "for example --little-only 2B2L=0B2L",
            )
        mapping[platform_name] = slow
    return mapping


def _runs_dir(arg: str) -> Path:
    root = Path(arg)
    if not root.is_dir():
        raise AmpkitError(f"{root} is not a directory", "give a directory of run directories")
    return root


def _finished_runs(root: Path) -> Path:
    """A campaign's finished runs are in its runs/ (attempts/ holds what was set aside)."""
    return root / "runs" if (root / "campaign.json").is_file() else root


def cmd_collect(args: argparse.Namespace) -> int:
    from ampkit.analysis.collect import collect

    root = _runs_dir(args.dir)
    col = collect(_finished_runs(root))
    out = Path(args.out) if args.out else root / "collected"
    col.save(out)
    print(
        f"{int(col.runs['included'].sum())} runs collected, {len(col.excluded)} excluded; "
        f"tables in {out}"
    )
    for r in col.excluded.to_dict("records"):
        print(f"  excluded {r['run']}: {r['reason']}")
    return 0


def _traced_moves(path: Path) -> "tuple[pd.DataFrame, pd.DataFrame, list[int]]":
    """A traced run's events, its migrations with their causes, and its big CPUs."""
    from ampkit.analysis import trace

    run = RunDir(path)
    try:
        text = run.trace_text()
        frame = trace.events(text.splitlines())
    except (Excluded, trace.TraceError) as e:
        raise UsageError(str(e), "trace a run with 'ampkit run --trace EVENTS'") from e
    guest = run.path / GUEST
    cpus = (json.loads(guest.read_text()).get("cpus") or []) if guest.is_file() else []
    capacities = {int(c["cpu"]): int(c["capacity"]) for c in cpus}
    if not capacities:
        raise UsageError(f"{run.path}: no guest.json with the CPUs' capacities")
    big = sorted(c for c, cap in capacities.items() if cap == max(capacities.values()))
    if len(big) == len(capacities):
        big = []  # one type of CPU: no migration crosses
    return frame, trace.migrations(frame, big), big


def cmd_trace(args: argparse.Namespace) -> int:
    import pandas as pd

    from ampkit.analysis import trace

    every, threads, machines = [], [], []
    for path in map(Path, args.runs):
        frame, moves, big = _traced_moves(path)
        policy = RunDir(path).manifest().get("policy", "?")
        events = ", ".join(f"{name} {n}" for name, n in frame["event"].value_counts().items())
        print(f"{path.name} ({policy}): {len(frame)} events ({events}); big CPUs {big}")
        every.append(moves.assign(run=path.name, policy=policy))
        ran, machine = trace.schedule(frame, big)
        threads.append(ran.assign(policy=policy))
        machines.append(machine.assign(policy=policy))
    moves = pd.concat(every, ignore_index=True)
    tables = []
    for policy, group in moves.groupby("policy", sort=True):
        table = trace.crossings(group)
        runs = group["run"].nunique()
        tables.append(table.assign(policy=policy, runs=runs))
    print("\nMigrations, by program and cause (summed over each policy's runs):")
    if tables:
        table = pd.concat(tables, ignore_index=True)
        columns = ["policy", "runs", "comm", "cause", "up", "down", "down_from_idle"]
        columns += ["within", "threads"]
        print(table[columns].to_string(index=False))
    else:
        print("no migrations")
    _print_schedule(pd.concat(threads, ignore_index=True), pd.concat(machines, ignore_index=True))
    if args.csv:
        moves.to_csv(args.csv, index=False)
        print(f"every migration: {args.csv}")
    return 0


def _print_schedule(threads: "pd.DataFrame", machines: "pd.DataFrame") -> None:
    """Where the traced time went (ampkit.analysis.trace.schedule), summed
    over each policy's runs."""
    from ampkit.analysis import trace

    print(
        "\nCPUs, summed over runs: each cluster's idle time as a share of its CPUs' "
        "time; the time a CPU of one side idled while a task was queued behind "
        "another on the other side, as a share of the span:"
    )
    print(trace.cpu_shares(machines).round(2).to_string(index=False))
    per_program = trace.per_program(threads)
    print("\nThreads by program (ms running, and runnable but waiting, by the side of the CPU):")
    if per_program.empty:
        print("no thread ran or waited in the trace")
    else:
        print(per_program.round(2).to_string(index=False))


def cmd_report(args: argparse.Namespace) -> int:
    from ampkit.analysis.report import write_report

    root = _runs_dir(args.dir)
    out = Path(args.out) if args.out else root / "report"
    report = write_report(
        _finished_runs(root),
        out,
        reference=policies.check_policy(args.reference),
        little_only=_little_only(args.little_only),
        min_apps=args.min_apps,
        models=load_profile(Path(args.speedups)).models_by_key() if args.speedups else None,
        partial=args.partial,
    )
    excluded = report.collection.excluded
    print(f"{out / 'report.md'}, {out / 'report.html'}; {len(excluded)} runs excluded")
    return 0


def _spec_and_dir(args: argparse.Namespace) -> tuple["Spec", Path]:
    """The CAMPAIGN argument: a spec (and --dir, or its default directory), or
    a campaign directory with the spec it was last run with."""
    from ampkit.campaign.runner import default_dir, dir_spec, with_pins
    from ampkit.campaign.spec import load_spec
    from ampkit.campaign.store import CampaignDir

    target = Path(args.campaign)
    if target.is_dir():
        if args.dir:
            raise UsageError(
                f"{target} is a campaign directory; --dir goes with a spec",
                "give the spec and --dir, or the directory alone",
            )
        spec, root = dir_spec(CampaignDir.existing(target)), target
    else:
        _same_checkout(target)
        spec = load_spec(target)
        root = Path(args.dir) if args.dir else default_dir(spec)
        spec = with_pins(spec, root)  # sized and hinted as the campaign first was
    return _with_executor(spec, getattr(args, "executor", None)), root


def _same_checkout(spec: Path) -> None:
    """Refuse a spec kept in another ampkit checkout than the one this ampkit
    runs from: its runs would be built from this checkout's kernel series and
    workloads, not from the spec's (a worktree set aside for a campaign, run
    with the main checkout's virtualenv, is the usual way to get there)."""
    from ampkit.paths import REPO_ROOT, checkout_holding

    holder = checkout_holding(spec)
    if holder is not None and holder != REPO_ROOT:
        raise UsageError(
            f"{spec} is in the ampkit checkout {holder}, but this ampkit runs from"
            f" {REPO_ROOT}: its runs would be built from {REPO_ROOT}'s kernel series"
            " and workloads",
            f"run that checkout's code: cd {holder} && python -m ampkit ..."
            f" (python -m puts the current directory first), or PYTHONPATH={holder}",
        )


def _with_executor(spec: "Spec", kind: str | None) -> "Spec":
    """The spec with --executor, when given, in place of its [executor] kind."""
    return replace(spec, executor=replace(spec.executor, kind=kind)) if kind else spec


def cmd_campaign_plan(args: argparse.Namespace) -> int:
    from ampkit.campaign.runner import plan_lines

    spec, root = _spec_and_dir(args)
    print("\n".join(plan_lines(spec, root, runs=args.list_runs)))
    return 0


def cmd_campaign_run(args: argparse.Namespace) -> int:
    from ampkit.campaign.runner import run_campaign

    spec, root = _spec_and_dir(args)
    ok = run_campaign(
        spec,
        root,
        jobs=args.jobs,
        force=args.force,
        no_build=args.no_build,
        wait=not args.no_wait,
        new_inputs=args.new_inputs,
        sitting_s=_sitting(args),
    )
    return _campaign_end(root, ok)


def _sitting(args: argparse.Namespace) -> float | None:
    from ampkit.campaign.sitting import parse_duration

    return None if args.sitting is None else parse_duration(args.sitting)


def _campaign_end(root: Path, ok: bool) -> int:
    from ampkit.campaign.runner import status_lines

    lines, _ = status_lines(root)
    print("\n".join(lines))
    print(f"report: ampkit report {root}")
    return 0 if ok else EXIT_FAILED_RUN


def cmd_campaign_rerun(args: argparse.Namespace) -> int:
    from ampkit.campaign.runner import run_campaign
    from ampkit.campaign.store import CampaignDir

    if not args.failed:
        raise UsageError("say what to run again", "--failed: the runs that failed")
    spec, root = _spec_and_dir(args)
    CampaignDir.existing(root)  # rerun needs a campaign that ran
    ok = run_campaign(
        spec,
        root,
        jobs=args.jobs,
        failed=True,
        no_build=args.no_build,
        wait=not args.no_wait,
        new_inputs=args.new_inputs,
        sitting_s=_sitting(args),
    )
    return _campaign_end(root, ok)


def cmd_campaign_status(args: argparse.Namespace) -> int:
    from ampkit.campaign.runner import status_lines

    _, root = _spec_and_dir(args)
    lines, _ = status_lines(root)
    print("\n".join(lines))
    return 0


def cmd_campaign_archive(args: argparse.Namespace) -> int:
    from ampkit.campaign.archive import archive

    target = Path(args.campaign)
    if target.is_dir() and not (target / "campaign.json").is_file() and not args.dir:
        # a folder of run directories no campaign made (ampkit profile's --runs)
        if not args.out:
            raise UsageError(
                f"{target} is a folder of runs, not a campaign: it names no archive",
                "give --out DIR",
            )
        root, out = target, Path(args.out)
    else:
        spec, root = _spec_and_dir(args)
        found = Path(args.out) if args.out else spec.archive
        if found is None:
            raise UsageError(
                f"where to? campaign {spec.name} names no archive",
                'give --out DIR, or set archive = "DIR" in its spec',
            )
        out = found
    extra: dict[Path, str] = {}
    with contextlib.suppress(AmpkitError):  # locate() reads GEM5_ROOT and the config file
        extra[gem5.Gem5.locate().root] = "/path/to/gem5"
    for line in archive(root, out, extra):
        print(line)
    return 0


def cmd_campaign_exec(args: argparse.Namespace) -> int:
    from ampkit.campaign.runner import exec_run
    from ampkit.campaign.slurm import task_run
    from ampkit.campaign.store import CampaignDir

    cdir = CampaignDir.existing(Path(args.dir))
    if args.submission is not None and args.task is not None:
        run_id = task_run(cdir, args.submission, args.task)
    elif args.run_id and args.submission is None and args.task is None:
        run_id = args.run_id
    else:
        raise UsageError("give a RUN_ID, or --submission and --task (as a SLURM task does)")
    return exec_run(cdir, run_id)


# --- parser ------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that a misspelt command offers only the
    commands --help lists. A command registered without help is hidden
    (argparse 3.11 prints help=SUPPRESS as "==SUPPRESS==" for a command, so
    no help is how one hides it): --help leaves it out, but argparse's
    "invalid choice" message would still list it."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if isinstance(action, argparse._SubParsersAction) and value not in action.choices:
            listed = {sub.dest for sub in action._get_subactions()}  # those with help
            offered = ", ".join(repr(name) for name in action.choices if name in listed)
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r} (choose from {offered})"
            )
        super()._check_value(action, value)


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ampkit",
        description="Build, boot and compare schedulers for asymmetric multicore processors.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("doctor", help="check that the host has every tool the kit needs")
    s.set_defaults(func=cmd_doctor)

    s = sub.add_parser("build", help="bring build targets up to date (SConstruct)")
    s.add_argument(
        "targets",
        nargs="*",
        default=[],
        help="kernel, kernel-debug, kernel-unpatched, kernel-hz1000, guest, host, selftests, "
        "initramfs, shell-image (default: kernel initramfs)",
    )
    s.add_argument("--make-jobs", type=int, metavar="N", help="make -j for kernel builds")
    s.set_defaults(func=cmd_build)

    k = sub.add_parser("kernel", help="the patched kernel").add_subparsers(
        dest="kernel_command", required=True, metavar="ACTION"
    )
    # An alias of 'ampkit build kernel' (kernel-debug, kernel-unpatched) that
    # prints where the build is, kept for old scripts: without help, so that
    # --help offers 'ampkit build' alone as the way to build.
    s = k.add_parser("build")
    _add_variant_args(
        s,
        "the debug variant: lockdep, atomic-sleep checks, KASAN",
        "the same configuration without the series: the baseline for overhead figures",
    )
    s.add_argument("--make-jobs", type=int, metavar="N", help="make -j (default: all CPUs)")
    s.set_defaults(func=cmd_kernel_build)
    s = k.add_parser("info", help="the inputs, their hash and where the build lives")
    _add_variant_args(s, "the debug variant", "the variant without the series")
    s.set_defaults(func=cmd_kernel_info)
    s = k.add_parser(
        "check",
        help="check the series as a maintainer would: every patch compiles, and the "
        "tip builds without COLAB, without the AMP policies, and with cgroups and PREEMPT",
    )
    s.set_defaults(func=cmd_kernel_check)

    # An alias of 'ampkit build initramfs' that prints where it is, kept for
    # old scripts: without help, so that --help does not offer it.
    i = sub.add_parser("images").add_subparsers(
        dest="images_command", required=True, metavar="ACTION"
    )
    s = i.add_parser("build")
    s.set_defaults(func=cmd_images_build)

    pl = sub.add_parser("platform", help="big.LITTLE platforms").add_subparsers(
        dest="platform_command", required=True, metavar="ACTION"
    )
    s = pl.add_parser("list", help="the presets and their CPU capacities")
    s.set_defaults(func=cmd_platform_list)
    s = pl.add_parser(
        "calibrate",
        help="measure the little core's capacity on gem5 (intmark alone on 1B0L and 0B1L)",
    )
    s.add_argument("--size", type=int, default=2000, help="intmark's rounds (default 2000)")
    s.add_argument(
        "--runs",
        default="runs/calibrate",
        help="where the runs go (kept; reused when the same inputs made them)",
    )
    s.add_argument("--out", help="the record to write (default configs/calibration.toml)")
    s.add_argument("--no-build", action="store_true", help="use the artifacts as they are")
    s.set_defaults(func=cmd_platform_calibrate)
    s = pl.add_parser("dtb", help="the QEMU device tree of a platform")
    s.add_argument("platform", help="a preset or <B>B<L>L")
    s.add_argument("-o", "--out", help="file to write (default: stdout)")
    s.add_argument("--dts", action="store_true", help="decompiled source instead of a blob")
    s.set_defaults(func=cmd_platform_dtb)

    mx = sub.add_parser("mix", help="the mix catalogue (workloads/mixes)").add_subparsers(
        dest="mix_command", required=True
    )
    s = mx.add_parser("list", help="every mix of the catalogue, its category and programs")
    s.set_defaults(func=cmd_mix_list)
    s = mx.add_parser(
        "check",
        help="validate mix files (errors give file, line and key), and test each mix's "
        "category against its programs' measured waiting",
    )
    s.add_argument("files", nargs="+", help="mix names or .toml paths")
    behaviour_help = "a behaviour table (ampkit mix behaviour; default configs/behaviour-gem5.toml)"
    s.add_argument("--behaviour", help=behaviour_help)
    s.add_argument(
        "--no-behaviour", action="store_true", help="check the files only, not the categories"
    )
    s.set_defaults(func=cmd_mix_check)
    s = mx.add_parser(
        "behaviour",
        help="each program's waiting, parallelism and cost from runs of it alone, as a table",
    )
    s.add_argument("dirs", nargs="+", help="campaign or run directories")
    s.add_argument("--engine", choices=ENGINES, help="whose runs (default: gem5's)")
    s.add_argument("-o", "--out", help="file to write (default: stdout)")
    s.set_defaults(func=cmd_mix_behaviour)
    s = mx.add_parser(
        "waiting",
        help="each program's futex waiting inside mixes, per policy, beside alone",
    )
    s.add_argument("dirs", nargs="+", help="campaign or run directories")
    s.add_argument("--engine", choices=ENGINES, help="whose runs (default: gem5's)")
    s.add_argument("--behaviour", help=behaviour_help)
    s.add_argument(
        "--no-behaviour", action="store_true", help="without the alone figures of a table"
    )
    s.add_argument("-o", "--out", help="a CSV of every application's figures")
    s.set_defaults(func=cmd_mix_waiting)
    s = mx.add_parser("sizes", help="the size at which each program alone spans a time")
    s.add_argument("--span-ms", type=float, required=True, help="simulated milliseconds")
    s.add_argument("--behaviour", help=behaviour_help)
    s.set_defaults(func=cmd_mix_sizes)
    s = mx.add_parser(
        "optimum",
        help="Saez et al.'s analytical schedules of a mix of single-threaded applications "
        "on a platform: HSP, Opt-Unf, Opt-EDP and EEF-Driven",
    )
    s.add_argument("mix", help="a mix name or .toml path")
    s.add_argument("--platform", required=True, help="a platform (ampkit platform list)")
    s.add_argument(
        "--speedups",
        required=True,
        help="a gem5 profile of the mix's applications with PMU counts and energy (ampkit profile)",
    )
    s.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="the model's T, which scales EDP and nothing else (default 10, the paper's)",
    )
    s.add_argument("-o", "--out", help="write the tidy table (CSV) here")
    s.set_defaults(func=cmd_mix_optimum)
    s = mx.add_parser("generate", help="a mix from a category and a seed (deterministic)")
    s.add_argument("--category", required=True, choices=CATEGORIES)
    s.add_argument("--apps", type=int, default=2, help="number of applications (default 2)")
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--speedups", help="a speedup profile (ampkit profile) for the hints")
    s.add_argument("-o", "--out", help="file to write (default: stdout)")
    s.set_defaults(func=cmd_mix_generate)
    s = mx.add_parser(
        "rehint", help="set the mixes' speedup hints from a profile (default the shipped table)"
    )
    s.add_argument("files", nargs="*", help="mix files (default: every catalogue mix)")
    s.add_argument("--speedups", help="a speedup profile (default configs/speedups.toml)")
    s.set_defaults(func=cmd_mix_rehint)

    ps = sub.add_parser(
        "parsec", help="PARSEC 3.0 / SPLASH-2x from your archives into a disk image"
    ).add_subparsers(dest="parsec_command", required=True, metavar="ACTION")
    s = ps.add_parser("build", help="cross-build benchmarks and pack them with their inputs")
    s.add_argument(
        "sources",
        nargs="+",
        help="PARSEC 3.0 archives (core, input-sim) as paths or URLs, or an unpacked tree",
    )
    s.add_argument(
        "--benchmarks",
        help="comma-separated parsec.<name> / splash2x.<name> (default: every one the "
        "recipe builds; 'ampkit parsec list')",
    )
    s.add_argument(
        "--inputs",
        default=",".join(parsec.DEFAULT_INPUTS),
        help=f"input sets (default {','.join(parsec.DEFAULT_INPUTS)}; any of "
        f"{', '.join(parsec.INPUT_SETS)})",
    )
    s.add_argument("--out", help="where the image and its manifest go (default build/parsec)")
    s.set_defaults(func=cmd_parsec_build)
    s = ps.add_parser("list", help="what the built image holds (or what build would build)")
    s.add_argument("--manifest", help="an image's parsec.json (default build/parsec)")
    s.set_defaults(func=cmd_parsec_list)

    s = sub.add_parser("shell", help="boot the shell image and give its console (interactive)")
    _add_machine_args(s)
    s.add_argument("--policy", default=policies.BASELINE, help="the policy at boot")
    _add_boot_args(s)
    s.add_argument("--no-build", action="store_true", help="use the kernel and image as built")
    s.set_defaults(func=cmd_shell)

    s = sub.add_parser(
        "profile", help="measure speedups: each application alone on big-only and little-only"
    )
    s.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINES)
    s.add_argument("--mix", action="append", help="profile this mix's applications (repeatable)")
    s.add_argument(
        "--cpus",
        type=int,
        default=2,
        help="CPUs of each platform (<N>B0L and 0B<N>L); without --mix, threads too",
    )
    s.add_argument("--repetitions", type=int, default=1)
    s.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="without --mix: the catalogue's sizes times this (at most 1; the profile "
        "records the sizes that ran)",
    )
    s.add_argument(
        "--runs",
        default="runs/profile",
        help="where the runs go (kept; reused when the same inputs made them)",
    )
    s.add_argument("--out", default="speedups.toml", help="the profile to write")
    s.add_argument(
        "--kernel",
        default="default",
        choices=("default", "hz1000"),
        help="the kernel variant the runs boot (a campaign's, to measure at its setup)",
    )
    s.add_argument("--append", default="", help="extra kernel command line (sched_timescale=4)")
    s.add_argument("--no-build", action="store_true", help="use the kernel and image as built")
    s.add_argument(
        "--no-pmu",
        action="store_true",
        help="do not count PMU events (the speedup model's training data: ampkit/pmu.py)",
    )
    s.add_argument(
        "--from-runs",
        metavar="DIR",
        help="run nothing: the profile of the alone runs already under DIR (on big CPUs "
        "only and on little CPUs only), PMU events from the engine's statistics",
    )
    s.set_defaults(func=cmd_profile)

    md = sub.add_parser(
        "model", help="the speedup model: speedup and EEF from PMU counts"
    ).add_subparsers(dest="model_cmd", required=True)
    s = md.add_parser(
        "train",
        help="train from a profile's PMU counts, validated leaving one program out "
        "(ampkit/speedupmodel.py)",
    )
    s.add_argument("profile", help="a speedup profile whose runs counted PMU events")
    s.add_argument("--out", default="model", help="where the models and their validation go")
    s.add_argument(
        "--events",
        type=int,
        help="at most this many events a model (default: the number that errs least when "
        "one training program is left out, chosen again within each validation fold)",
    )
    s.set_defaults(func=cmd_model_train)
    s = md.add_parser(
        "online",
        help="the online model's estimates in runs against measured speedups "
        "(ampkit/analysis/online.py)",
    )
    s.add_argument("dir", help="run directories (or a campaign's), fed by the online model")
    s.add_argument("--speedups", required=True, help="the measured speedups (ampkit profile)")
    s.add_argument("--out", help="write the per-estimate and per-app tables (CSV) here")
    s.set_defaults(func=cmd_model_online)

    ip = sub.add_parser(
        "interference", help="Fan et al.'s interference models for the contention policy"
    ).add_subparsers(dest="interference_cmd", required=True)
    s = ip.add_parser(
        "profile",
        help="run one-thread applications alone and beside co-runners on each cluster "
        "(gem5), fit their models and write the model file (ampkit/corun.py)",
    )
    _add_machine_args(s)
    s.add_argument(
        "--mix",
        action="append",
        required=True,
        help="profile this mix's applications (one thread each; repeatable)",
    )
    s.add_argument(
        "--co-runners",
        metavar="MIX",
        action="append",
        help="the co-runners: this mix's applications (repeatable; default: the profiled ones)",
    )
    s.add_argument(
        "--co-runs",
        type=int,
        metavar="N",
        help="co-runs a target and core type, spread over every choice of co-runners "
        "(default: all of them)",
    )
    s.add_argument("--span-ms", type=float, help="gem5: the simulated ms an unsized app spans")
    s.add_argument(
        "--runs", default="runs/interference", help="where the runs go (kept, and reused)"
    )
    s.add_argument("--out", default="interference.toml", help="the model file to write")
    s.add_argument("--kernel", default="default", choices=("default", "hz1000"))
    s.add_argument("--append", default="", help="extra kernel command line")
    s.add_argument("--no-build", action="store_true", help="use the kernel and image as built")
    s.set_defaults(func=cmd_interference_profile)

    s = sub.add_parser("run", help="run one mix under one policy")
    _add_machine_args(s)
    s.add_argument(
        "--policy",
        default=policies.BASELINE,
        help=f"one of: {', '.join(policies.names())} (+online: fed by --speedup-model)",
    )
    s.add_argument(
        "--mix", default="demo", help=f"a mix name ({', '.join(mix_names())}) or a .toml path"
    )
    s.add_argument("--repetition", type=int, default=0)
    s.add_argument(
        "--mix-limit",
        type=int,
        default=DEFAULT_MIX_LIMIT_S,
        metavar="SECONDS",
        help="the mix time limit: seconds the mix may take in the guest (default "
        f"{DEFAULT_MIX_LIMIT_S}; the engine's wall limit allows boot time on top)",
    )
    s.add_argument("--speedups", help="take the speedup hints from this profile (ampkit profile)")
    s.add_argument(
        "--speedup-model",
        metavar="DIR",
        help="predict each thread's speedup in the guest from its PMU counts with the "
        "models in DIR (ampkit model train), the hints only its start (ampkit/online.py)",
    )
    s.add_argument(
        "--online-period-ms",
        type=float,
        metavar="MS",
        help="with --speedup-model: how often the estimates are refreshed (default WASH's "
        "quantum at the run's sched_timescale: 40 ms, 10 at a scale of 4)",
    )
    s.add_argument(
        "--interference-models",
        metavar="FILE",
        help="--policy contention: the applications' interference models, profiled on "
        "the run's platform (ampkit/interference.py)",
    )
    s.add_argument(
        "--contention-threshold",
        type=float,
        metavar="PCT",
        help="--policy contention: Algorithm 1's threshold S, the predicted slowdown (%%) "
        f"an application may suffer on the big CPUs (default {DEFAULT_THRESHOLD_PCT:g})",
    )
    s.add_argument(
        "--parsec",
        metavar="MANIFEST",
        help="the PARSEC image for parsec.* / splash2x.* programs (default build/parsec)",
    )
    s.add_argument(
        "--method",
        default="restart",
        choices=METHODS,
        help="restart: applications that finish early run again until each has "
        "completed once; only first completions count (default)",
    )
    s.add_argument(
        "--span-ms",
        type=float,
        metavar="MS",
        help="gem5: the simulated ms each app the mix leaves unsized spans alone "
        "(its size from the measured cost lines; default 20, ampkit/sizes.py)",
    )
    s.add_argument(
        "--warmup-ms",
        type=int,
        metavar="MS",
        help="guest milliseconds the mix's programs run before the measured run, "
        f"whose statistics start after it (default: gem5 {gem5.WARMUP_MS}, QEMU 0)",
    )
    s.add_argument(
        "--slice-ms",
        type=int,
        metavar="MS",
        help="gem5: run in slices of MS simulated milliseconds, each ending with a "
        "checkpoint the next restores, so a run stopped midway resumes at its last "
        "slice (default: one; ampkit/engines/gem5.py)",
    )
    s.add_argument(
        "--perturb-us",
        type=int,
        default=0,
        metavar="US",
        help="release each app after a delay of 0 to US microseconds seeded by the mix, "
        "platform and repetition, the same under every policy (default 0: none; "
        "ampkit/perturb.py)",
    )
    s.add_argument(
        "--trace",
        metavar="EVENTS",
        help="trace these kernel events over the measured run, kept in the run directory "
        "(system:event names or sets, comma-separated: "
        f"{', '.join(sorted(tracing.PRESETS))}; read with 'ampkit trace'; "
        "ampkit/tracing.py)",
    )
    s.add_argument(
        "--references",
        nargs="?",
        const=",".join(references.KINDS),
        metavar="KINDS",
        help="also run each application alone under the baseline, beside the run: "
        f"{', '.join(references.KINDS)} (default: all); sound ones already there are kept",
    )
    s.add_argument(
        "--qemu-clock",
        default="host",
        choices=qemu.CLOCKS,
        help="host: guest time is host time, vCPUs in parallel (default); icount: guest "
        "time follows executed instructions, so host load cannot stall a vCPU in the guest's "
        "eyes; instructions: 1 ns per instruction and idle time skipped, whatever the host does",
    )
    s.add_argument(
        "--wall-limit",
        type=float,
        metavar="SECONDS",
        help="the engine's wall-clock limit for the run (default: the mix limit plus "
        f"{qemu.BOOT_ALLOWANCE_S} s on QEMU; {gem5.WALL_PER_CPU_SIM_S} x the mix limit x the "
        "CPUs on "
        "gem5, whose "
        "first run of a machine also boots it atomically, within its own limit)",
    )
    s.add_argument("--out", help="run directory (default: runs/<time>-<run id>)")
    s.add_argument("--force", action="store_true", help="replace an existing run directory")
    _add_boot_args(s)
    s.add_argument(
        "--no-build",
        action="store_true",
        help="use the kernel and initramfs as built; do not check them",
    )
    s.set_defaults(func=cmd_run)

    _add_campaign(sub)

    s = sub.add_parser("collect", help="run directories into tidy tables (Parquet and CSV)")
    s.add_argument("dir", help="a directory holding run directories (searched recursively)")
    s.add_argument("--out", help="where the tables go (default: DIR/collected)")
    s.set_defaults(func=cmd_collect)

    s = sub.add_parser(
        "trace",
        help="what moved a traced run's threads between the clusters (ampkit run --trace)",
    )
    s.add_argument("runs", nargs="+", help="run directories made with --trace (summed per policy)")
    s.add_argument("--csv", help="also write every migration, with its cause, to this CSV")
    s.set_defaults(func=cmd_trace)

    s = sub.add_parser("report", help="metrics and the comparison report of run directories")
    s.add_argument("dir", help="a directory holding run directories (searched recursively)")
    s.add_argument("--out", help="where the report goes (default: DIR/report)")
    s.add_argument(
        "--speedups",
        help="a gem5 speedup profile with energy (ampkit profile): adds Saez et al.'s "
        "analytical schedules of each mix of single-threaded applications it covers",
    )
    s.add_argument(
        "--reference",
        default=policies.BASELINE,
        help="the policy slowdowns and normalised means are relative to",
    )
    s.add_argument(
        "--little-only",
        action="append",
        default=[],
        metavar="PLATFORM=PLATFORM",
        help="where the little-only reference runs of a platform are, for ASP "
        "(default: 0B<L>L for <B>B<L>L, when there are runs on it)",
    )
    s.add_argument(
        "--min-apps",
        type=int,
        default=2,
        help="compare mixes of at least this many applications (single ones are references)",
    )
    s.add_argument(
        "--partial",
        action="store_true",
        help="while runs are still to come (a campaign under way): compare the mixes whose "
        "runs are complete so far and list the rest, rather than refuse",
    )
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("demo", help="the small end-to-end run of 'make demo'")
    s.add_argument("--out", default="runs/demo", help="where the runs go (replaced)")
    s.set_defaults(func=cmd_demo)
    return p


def _add_campaign(sub: "argparse._SubParsersAction[_Parser]") -> None:
    c = sub.add_parser(
        "campaign", help="platform x policy x mix matrices, locally or on SLURM"
    ).add_subparsers(dest="campaign_command", required=True, metavar="ACTION")

    def campaign_arg(s: argparse.ArgumentParser) -> None:
        s.add_argument(
            "campaign",
            metavar="CAMPAIGN",
            help="a campaign spec (.toml) or a campaign directory (which keeps its spec)",
        )
        s.add_argument(
            "--dir", help="with a spec: the campaign directory (default: campaigns/<name>)"
        )

    def spec_args(s: argparse.ArgumentParser) -> None:
        campaign_arg(s)
        s.add_argument("--executor", choices=("local", "slurm"), help="override [executor] kind")

    def run_args(s: argparse.ArgumentParser) -> None:
        s.add_argument("--jobs", type=int, help="local executor: runs at once")
        s.add_argument(
            "--sitting",
            metavar="DURATION",
            help="local executor: the time the machine is there (2h30m, 90m): start only "
            "runs expected to end within it, the longest first; the rest stay to run",
        )
        s.add_argument("--no-build", action="store_true", help="use the kernel and image as built")
        s.add_argument(
            "--no-wait", action="store_true", help="slurm: submit and return (status follows)"
        )
        s.add_argument(
            "--new-inputs",
            action="store_true",
            help="resume with today's kernel, initramfs and engine, not those the campaign "
            "pinned: its finished runs are then run again (the old kept aside)",
        )

    s = c.add_parser("plan", help="the runs, which are done, and what must be built")
    spec_args(s)
    s.add_argument("--list-runs", action="store_true", help="list every run and its state")
    s.set_defaults(func=cmd_campaign_plan)

    s = c.add_parser("run", help="build once, then run every run that is not done")
    spec_args(s)
    run_args(s)
    s.add_argument("--force", action="store_true", help="run again even runs that are done")
    s.set_defaults(func=cmd_campaign_run)

    s = c.add_parser("status", help="what a campaign directory holds (follows SLURM arrays)")
    campaign_arg(s)
    s.set_defaults(func=cmd_campaign_status)

    s = c.add_parser(
        "archive",
        help="copy the runs that count, slimmed and with this machine's paths replaced, "
        "to a directory that can be committed (CAMPAIGN may also be a folder of run "
        "directories, such as ampkit profile's --runs, with --out)",
    )
    campaign_arg(s)
    s.add_argument(
        "--out",
        help="the archive (runs already in it are kept; default: the spec's 'archive')",
    )
    s.set_defaults(func=cmd_campaign_archive)

    s = c.add_parser("rerun", help="run failed runs again (earlier attempts are kept)")
    spec_args(s)
    s.add_argument("--failed", action="store_true", help="the runs that failed")
    run_args(s)
    s.set_defaults(func=cmd_campaign_rerun)

    # Internal: what the executors start for one run. No help, so it is not
    # listed in 'ampkit campaign --help', nor offered for a misspelt action (_Parser).
    s = c.add_parser("exec")
    s.add_argument("dir")
    s.add_argument("run_id", nargs="?")
    s.add_argument("--submission", help="a SLURM submission of the campaign")
    s.add_argument("--task", type=int, help="its array task")
    s.set_defaults(func=cmd_campaign_exec)


#: The commands that read only run directories: they work from an installed
#: package too. Every other one needs the checkout (patches, workloads, configs).
CHECKOUT_FREE = {"collect", "report", "trace"}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    try:
        if args.command not in CHECKOUT_FREE and not paths.in_checkout():
            raise MissingDependency(
                f"'ampkit {args.command}' runs from a checkout of the ampkit repository "
                f"(kernel-patches/, workloads/, configs/), and there is none at {paths.REPO_ROOT}",
                "clone the repository and run 'make setup' there; an installed package "
                f"gives {', '.join(sorted(CHECKOUT_FREE))} only",
            )
        code: int = args.func(args)
        return code
    except AmpkitError as e:
        print(f"ampkit: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(
            "ampkit: interrupted; unfinished runs are left as *.partial with their logs",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        # the reader went away ('ampkit mix list | head'): not an error of ours;
        # stdout is pointed at /dev/null so that the interpreter's flush at exit is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
