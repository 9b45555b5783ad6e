"""Running a campaign: build once, pin the inputs, run only what is missing.

The process that runs a campaign never boots a guest itself: every run is
one ``ampkit campaign exec DIR RUN_ID`` process (a child of the local
executor, or a SLURM array task), which takes the run's own lock, sets
aside what an earlier attempt left, and writes the run directory under a
temporary name that is renamed when it is complete. Whatever is killed,
and however, the next ``campaign run`` finds each run either finished or
not, and runs only the missing ones.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ampkit import build as build_mod
from ampkit import kernel as kernel_mod
from ampkit import parsec, process
from ampkit.behaviour import load_table, table_path
from ampkit.campaign import estimate, sitting
from ampkit.campaign.plan import (
    MATRIX,
    KernelPin,
    PlannedRun,
    colab_classes,
    expand,
    keys,
    pins_for,
    unreferenced,
)
from ampkit.campaign.progress import Progress
from ampkit.campaign.spec import Spec, load_spec
from ampkit.campaign.store import FAILED, OK, STALE, TODO, CampaignDir, RunState
from ampkit.engines import get_engine
from ampkit.errors import AmpkitError, MissingDependency, UsageError
from ampkit.hashing import atomic_write_text, sha256_file
from ampkit.paths import REPO_ROOT, cache_dir
from ampkit.profile import load_profile
from ampkit.run import engine_identity, execute, prepare
from ampkit.rundir import MANIFEST, Excluded, PlannedKey, RunDir, RunKey, find_run_dirs
from ampkit.timescale import describe_setup

#: exec's exit statuses: the run is done (RunDir.done) / it failed or does not count.
EXEC_OK, EXEC_RUN_FAILED = 0, 1


@dataclass(frozen=True)
class Entry:
    run: PlannedRun
    key: PlannedKey | None
    state: RunState


def default_dir(spec: Spec) -> Path:
    return Path("campaigns") / spec.name


def entries(
    spec: Spec, cdir: CampaignDir, kernel: KernelPin, initramfs: Path | None
) -> list[Entry]:
    """Every planned run with its key and what the directory says about it;
    keys are None while the initramfs is not built."""
    runs = expand(spec)
    if initramfs is None or not initramfs.is_file():
        return [Entry(r, None, cdir.state(r.run_id, None)) for r in runs]
    pins = pins_for(spec, runs, kernel, initramfs)
    return [Entry(r, key, cdir.state(r.run_id, key)) for r, key in keys(runs, pins)]


# --- plan ---------------------------------------------------------------------


def _last_kernel_build_s() -> float | None:
    times = []
    for manifest in (cache_dir() / "kernels").glob("*/manifest.json"):
        try:
            times.append(float(json.loads(manifest.read_text())["build"]["seconds"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return max(times) if times else None


def build_needs(spec: Spec, inputs: kernel_mod.KernelInputs, initramfs_final: bool) -> list[str]:
    """What 'campaign run' would build first, and what each costs."""
    needs = []
    if kernel_mod.find_build(spec.kernel) is None:
        last = _last_kernel_build_s()
        cost = f"; the last kernel build here took {last / 60:.0f} min" if last else ""
        needs.append(f"kernel {spec.kernel} {inputs.digest[:16]}: to build{cost}")
    else:
        needs.append(f"kernel {spec.kernel} {inputs.digest[:16]}: built (cached)")
    if initramfs_final:
        needs.append("initramfs: up to date")
    else:
        needs.append("initramfs: to build (about a minute: workloads and runner, cross-compiled)")
    if spec.parsec or any(a.from_suite for m in spec.mixes for a in m.apps):
        where = spec.parsec or parsec.manifest_path()
        needs.append(
            f"PARSEC image {where}: "
            + ("present" if where.is_file() else "missing: build it with 'ampkit parsec build'")
        )
    return needs


def _estimates(
    spec: Spec, rows: list[Entry]
) -> tuple[dict[str, estimate.RunEstimate], list[str], list[str]]:
    """Each run's estimate by its id, why others have none, and how the
    lines were read; nothing on an engine without a cost model."""
    if not get_engine(spec.engine).models_core_speed:
        return {}, [], []
    path = spec.sized_by or spec.behaviour or table_path(spec.engine)
    if not path.is_file():
        return {}, [], [f"estimate: none (no behaviour table at {path})"]
    table = load_table(path)
    setup = kernel_mod.setup_of(spec.kernel, spec.append)
    note = (
        f" (measured at {table.setup}, not the campaign's {describe_setup(*setup)})"
        if table.kernel_setup != setup
        else ""
    )
    profile = load_profile(spec.speedups) if spec.speedups else None
    unused = ""
    if profile is not None and profile.engine != table.engine:
        unused = (
            f"; the profile {_shown(spec.speedups or path)} is of {profile.engine} runs: unused"
        )
        profile = None
    found: dict[str, estimate.RunEstimate] = {}
    missing: list[str] = []
    for e in rows:
        got = estimate.estimate_run(e.run.request, e.run.role, table, profile)
        if isinstance(got, str):
            missing.append(got)
        else:
            found[e.run.run_id] = got
    source = f"{_shown(path)}{note}{unused}"
    if profile is not None:
        apps = {a for e in rows for a in e.run.request.mix.apps}
        measured = sorted(
            {
                f"{a.program} t{a.threads} n{a.size}"
                for a in apps
                if estimate.profile_entry(a, profile) is not None
            }
        )
        if measured:
            profile_setup = kernel_mod.setup_of(
                dict(profile.provenance).get("kernel_variant", "default"),
                dict(profile.provenance).get("cmdline", ""),
            )
            other = (
                f", measured at {describe_setup(*profile_setup)}, not the campaign's"
                if profile_setup != setup
                else ""
            )
            source += (
                f", and for {', '.join(measured)} their regions measured at that size by "
                f"{_shown(profile.source or spec.speedups or path)}{other} (on little CPUs "
                "where the platform has them)"
            )
    return found, missing, [source]


def _shown(path: Path) -> Path:
    """A path named from the checkout where it is there, so that the plan's
    text has no machine's paths."""
    shown = path.resolve()
    return shown.relative_to(REPO_ROOT) if shown.is_relative_to(REPO_ROOT) else shown


def plan_lines(spec: Spec, root: Path, runs: bool) -> list[str]:
    """What 'campaign plan' prints; with ``runs``, a line per run, its state
    and, on an engine with a cost model, its estimate."""
    cdir = CampaignDir(root)
    inputs = kernel_mod.KernelInputs.discover(spec.kernel)
    image = build_mod.initramfs_image()
    final = build_mod.up_to_date(build_mod.INITRAMFS)
    out = [f"campaign {spec.name} ({spec.path}) -> {root}", "builds:"]
    out += [f"  {line}" for line in build_needs(spec, inputs, final)]
    built = kernel_mod.find_build(spec.kernel)
    # a run of the same kernel files under another digest is known by them:
    # without a build the states are provisional
    kernel = KernelPin.of(built) if built is not None else KernelPin(inputs.digest)
    final = final and built is not None
    # the states 'campaign run' will find: by the inputs it resumes with,
    # the pinned build where it still is ('campaign run' builds the
    # checkout's otherwise, and keeps the runs of the same kernel files)
    pinned = _pinned_kernel(cdir.meta(), spec.kernel) if cdir.has_meta() else None
    if pinned is not None and cdir.initramfs.is_file():
        kernel, image, final = KernelPin.of(pinned), cdir.initramfs, True
        out.append(
            f"  pinned by the campaign, which resumes with them: kernel "
            f"{kernel.digest[:16]} and its copy of the initramfs (--new-inputs "
            "takes the checkout's)"
        )
    try:
        rows = entries(spec, cdir, kernel, image if final else None)
    except MissingDependency as missing_engine:
        # the plan is still worth reading where the engine is not installed
        rows = entries(spec, cdir, kernel, None)
        out.append(f"  engine: {missing_engine.what}")
        final = False
    if not final:
        out.append(
            "  (run keys are known once the initramfs is built and the engine found: "
            "states below are provisional)"
        )
    counts = {s: sum(1 for e in rows if e.state.state == s) for s in (OK, FAILED, STALE, TODO)}
    matrix = sum(1 for e in rows if e.run.role == MATRIX)
    out += [f"unreferenced: {line}" for line in unreferenced(spec)]
    out += colab_classes(spec)
    out.append(
        f"runs: {len(rows)} ({matrix} in the matrix, {len(rows) - matrix} references); "
        f"{counts[OK]} done (cached), {counts[FAILED]} failed, {counts[STALE]} stale, "
        f"{counts[TODO]} to run"
    )
    wall = spec.limits.wall_s
    todo = counts[TODO] + counts[STALE]
    out.append(
        f"cost: each run at most {wall} s of wall clock on {spec.limits.cpus} CPU(s); "
        f"{todo} to run: at most {todo * wall / 3600:.1f} CPU-slot hours"
    )
    found, missing, source = _estimates(spec, rows)
    if source and not found and not missing:
        out += source  # why there is none
    elif source:
        jobs = spec.executor.jobs or default_jobs(spec)
        todo_ids = {e.run.run_id for e in rows if e.state.state in (TODO, STALE)}
        out += estimate.summary(list(found.values()), missing, jobs, source[0])
        if todo_ids and len(todo_ids) < len(rows):
            left = [r for i, r in found.items() if i in todo_ids]
            hours = sum(r.wall_s for r in left) / 3600
            out.append(f"  to run: {len(left)} runs, {hours / jobs:.1f} h with {jobs} at once")
    if not runs:
        return [*out, "(--list-runs lists every run and its state)"]
    for e in rows:
        state = e.state.state + (f" ({e.state.detail})" if e.state.detail else "")
        cost = found.get(e.run.run_id)
        est = f"  ~{cost.sim_ms:.0f} ms, ~{cost.wall_s:.0f} s" if cost else ""
        out.append(f"  {e.run.run_id:60s} {e.run.role:12s} {state}{est}")
    return out


# --- run -----------------------------------------------------------------------


def prepare_dir(
    spec: Spec, root: Path, no_build: bool, new_inputs: bool = False
) -> tuple[CampaignDir, list[Entry]]:
    """Build what is needed once, pin it in the campaign directory, and read
    every run's state. Called with the campaign lock held.

    A campaign pins what its runs boot the first time it runs: the kernel
    build (by its digest), the initramfs (a copy) and the engine (by its
    binary's hash), and resumes with them, whatever the checkout holds by
    then, so that its runs are of one set of inputs. When one of them is no
    longer to be had as pinned, it stops and says which, unless
    ``new_inputs``: then the campaign takes today's, and its finished runs
    of the old ones are stale (run again, the old kept aside)."""
    cdir = CampaignDir(root)
    old = cdir.meta() if cdir.has_meta() else None
    target = build_mod.kernel_target(spec.kernel)
    found = _pinned_kernel(old, spec.kernel) if old and not new_inputs else None
    if found is None:
        if not no_build:
            build_mod.scons(target, build_mod.INITRAMFS)
        found = kernel_mod.find_build(spec.kernel)
    image = build_mod.initramfs_image()
    if found is None or not (image.is_file() or (old and cdir.initramfs.is_file())):
        raise AmpkitError(
            "the kernel or the initramfs is not built",
            f"run 'ampkit build {target} {build_mod.INITRAMFS}', or drop --no-build",
        )
    engine = engine_identity(spec.engine)
    if old is not None and not new_inputs:
        _refuse_new_inputs(cdir, old, spec, KernelPin.of(found), engine.binary_sha256)
    cdir.create()
    if new_inputs or not cdir.initramfs.is_file():
        initramfs_sha256 = sha256_file(image)
        tmp = cdir.initramfs.with_name(".initramfs.tmp")
        shutil.copyfile(image, tmp)
        tmp.replace(cdir.initramfs)
    else:
        initramfs_sha256 = sha256_file(cdir.initramfs)
        if image.is_file() and sha256_file(image) != initramfs_sha256:
            print(
                f"campaign {spec.name}: keeps the initramfs it pinned ({cdir.initramfs}); the "
                "checkout's differs (--new-inputs takes it, and runs every run again)",
                file=sys.stderr,
            )
    spec = pin_tables(spec, cdir)
    atomic_write_text(root / "spec.toml", spec.text)  # SLURM tasks may be reading it
    meta: dict[str, Any] = {
        "kind": "ampkit-campaign",
        "version": 1,
        "name": spec.name,
        # a spec read from the campaign directory keeps its original's
        # source and base, so that its relative paths still resolve
        "spec_source": str(_spec_source(spec, root)),
        "spec_base": str(spec.base.resolve()),
        "kernel": {
            "variant": spec.kernel,
            "digest": found.manifest["digest"],
            "directory": str(found.directory),
            # what a run boots: a run of the same files under another
            # digest is the same run (RunKey), wherever the build has gone
            "binaries": dict(found.binaries()),
        },
        "initramfs_sha256": initramfs_sha256,
        **({"behaviour_sha256": sha256_file(cdir.behaviour)} if cdir.behaviour.is_file() else {}),
        "engine": {
            "name": engine.name,
            "version": engine.version,
            "binary_sha256": engine.binary_sha256,
        },
        "executor": spec.executor.kind,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    cdir.write_meta(meta)
    return cdir, entries(spec, cdir, KernelPin.of(found), cdir.initramfs)


def _campaign_kernel(meta: dict[str, Any], variant: str | None = None) -> KernelPin | None:
    """The kernel a campaign pinned (of ``variant`` where given): its digest
    and the files a run boots, as its metadata records them, else as the
    pinned build, where it still is, has them; None without one."""
    pinned = meta.get("kernel") or {}
    digest = pinned.get("digest")
    if not isinstance(digest, str) or (variant is not None and pinned.get("variant") != variant):
        return None
    recorded = pinned.get("binaries")
    if isinstance(recorded, dict) and all(isinstance(v, str) for v in recorded.values()):
        return KernelPin(digest, tuple(sorted(recorded.items())))
    build = _pinned_kernel(meta, str(pinned.get("variant")))
    return KernelPin.of(build) if build is not None else KernelPin(digest)


def _pinned_kernel(old: dict[str, Any], variant: str) -> kernel_mod.KernelBuild | None:
    """The kernel build a campaign pinned, if it is still where it was, whole,
    of the variant asked for and of the digest recorded."""
    pinned = old.get("kernel") or {}
    if pinned.get("variant") != variant or not pinned.get("directory"):
        return None
    build = kernel_mod.KernelBuild(Path(pinned["directory"]))
    try:
        if build.is_complete() and build.manifest.get("digest") == pinned.get("digest"):
            return build
    except (OSError, ValueError):
        pass
    return None


def _refuse_new_inputs(
    cdir: CampaignDir, old: dict[str, Any], spec: Spec, kernel: KernelPin, engine_sha256: str | None
) -> None:
    """Stop a resumed campaign whose kernel or engine is no longer the one
    its finished runs booted: resuming would run them all again, not mix
    them, and that should be asked for. A kernel of another digest whose
    files are the pinned one's (a new revision of the source package that
    changed no byte of it) is the same kernel: its runs are kept."""
    changed = []
    pinned_kernel = old.get("kernel") or {}
    digest = kernel.digest
    pinned = _campaign_kernel(old)
    same_files = pinned is not None and bool(pinned.binaries) and pinned.binaries == kernel.binaries
    if pinned_kernel.get("digest") not in (None, digest) and not same_files:
        changed.append(
            f"kernel {spec.kernel}: the campaign ran {str(pinned_kernel['digest'])[:16]} "
            f"(gone from {pinned_kernel.get('directory')}), the checkout builds {digest[:16]}"
        )
    pinned_engine = old.get("engine") or {}
    if pinned_engine.get("binary_sha256") not in (None, engine_sha256):
        changed.append(
            f"{spec.engine}: the campaign ran a binary with sha256 "
            f"{str(pinned_engine['binary_sha256'])[:16]}, this one is "
            f"{str(engine_sha256)[:16]}"
        )
    finished, _ = find_run_dirs(cdir.runs)
    if changed and finished:
        raise AmpkitError(
            f"campaign {spec.name} ({cdir.root}) has {len(finished)} finished runs of other "
            "inputs than today's:\n  " + "\n  ".join(changed),
            "point the kit back at what they ran on (the checkout of the campaign's kernel, "
            "GEM5_ROOT), or pass --new-inputs to run again with today's every run they "
            "made (the finished ones are kept aside, never mixed in)",
        )


def _spec_source(spec: Spec, root: Path) -> Path:
    """Where the spec came from: its file, or, when it is the campaign
    directory's own copy, the file that copy was made from."""
    if spec.path.resolve() == (root / "spec.toml").resolve():
        meta = CampaignDir(root).meta() if (root / "campaign.json").is_file() else {}
        return Path(meta.get("spec_source", spec.path))
    return spec.path.resolve()


def pin_tables(spec: Spec, cdir: CampaignDir) -> Spec:
    """Copy into the campaign the tables its runs are sized, hinted and
    given energies by, once: every later reading of the spec (with_pins())
    takes these copies, whatever the files it names hold by then."""
    own = [(m.profile, cdir.mix_profile(m.name)) for m in spec.mixes if m.profile is not None]
    for source, pin in ((spec.sized_by, cdir.behaviour), (spec.speedups, cdir.speedups), *own):
        if source is None:
            continue
        if not pin.is_file():
            pin.parent.mkdir(parents=True, exist_ok=True)
            tmp = pin.with_name(f".{pin.name}.tmp")
            shutil.copyfile(source, tmp)
            tmp.replace(pin)
        elif source.resolve() != pin.resolve() and sha256_file(source) != sha256_file(pin):
            print(
                f"campaign {spec.name}: keeps the copy it pinned of {source.name} ({pin}); "
                f"{source} differs now (a campaign in a new --dir takes it)",
                file=sys.stderr,
            )
    return with_pins(spec, cdir.root)


def pinned_behaviour(root: Path) -> Path | None:
    """The behaviour table a campaign pinned when it first sized its apps."""
    path = CampaignDir(root).behaviour
    return path if path.is_file() else None


def with_pins(spec: Spec, root: Path) -> Spec:
    """The spec as the campaign in ``root`` first read it: its apps sized
    by the table it pinned, its hints from the profile it pinned and each
    mix's energies from the copy it pinned of the mix's own profile, so
    that a table or profile measured again later changes none of its runs."""
    pinned = pinned_behaviour(root)
    if pinned is not None and spec.sized_by is not None and spec.sized_by != pinned:
        spec = load_spec(spec.path, base=spec.base, behaviour=pinned)
    cdir = CampaignDir(root)
    if spec.speedups is not None and cdir.speedups.is_file():
        spec = replace(spec, speedups=cdir.speedups)
    mixes = tuple(
        replace(m, profile=cdir.mix_profile(m.name))
        if m.profile is not None and cdir.mix_profile(m.name).is_file()
        else m
        for m in spec.mixes
    )
    return replace(spec, mixes=mixes)


def dir_spec(cdir: CampaignDir) -> Spec:
    """The spec a campaign directory was last run with, read as it first was."""
    meta = cdir.meta()
    spec = load_spec(
        cdir.root / "spec.toml",
        base=Path(meta["spec_base"]),
        behaviour=pinned_behaviour(cdir.root),
    )
    return with_pins(spec, cdir.root)


def exec_run(cdir: CampaignDir, run_id: str) -> int:
    """Run one planned run into runs/<run_id> (what a child or a SLURM task does)."""
    meta = cdir.meta()
    spec = dir_spec(cdir)
    planned = {r.run_id: r for r in expand(spec)}
    if run_id not in planned:
        raise AmpkitError(f"{run_id} is not a run of campaign {spec.name}")
    run = planned[run_id]
    request = run.request
    build = kernel_mod.KernelBuild(Path(meta["kernel"]["directory"]))
    if not build.is_complete():
        raise AmpkitError(
            f"the campaign's kernel {build.directory} is gone",
            "run 'ampkit campaign run' again: it rebuilds what is missing",
        )
    with cdir.run_locked(run_id):
        pins = pins_for(spec, [run], KernelPin.of(build), cdir.initramfs)
        prepared = prepare(
            request,
            pins.engine,
            pins.kernel_digest,
            pins.initramfs_sha256,
            kernel_binaries=pins.kernel_binaries,
            suite=pins.suite,
        )
        state = cdir.state(run_id, prepared.run_key)
        if state.state == OK:
            print(f"{run_id}: ok (already done with the same inputs)")
            return EXEC_OK
        if state.state != TODO or state.detail:
            moved = cdir.set_aside(run_id, state.state if state.state != TODO else "interrupted")
            if moved:
                print(f"{run_id}: the earlier attempt is kept in {moved}")
        outcome = execute(
            request, cdir.run_dir(run_id), build, cdir.initramfs, force=True, prepared=prepared
        )
        print(f"{run_id}: {outcome.status}")
        # done as the campaign judges it (RunDir.done), not only ended ok
        done = cdir.state(run_id, prepared.run_key).state == OK
        return EXEC_OK if done else EXEC_RUN_FAILED


def settle(cdir: CampaignDir, run_id: str, reason: str, log: Path | None, **extra: Any) -> RunState:
    """After an executor ended a run: what it left, recording a failure if
    the run never finished."""
    state = cdir.state(run_id, None)
    if state.state == TODO:
        cdir.record_failure(run_id, reason, log, **extra)
        state = cdir.state(run_id, None)
    return state


# --- the local executor ----------------------------------------------------------


def default_jobs(spec: Spec) -> int:
    """As many runs at once as the machine's CPUs and memory allow."""
    cpus = len(os.sched_getaffinity(0))
    try:
        pages, size = os.sysconf("SC_AVPHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory_mb = pages * size // (1 << 20)
    except (ValueError, OSError):
        memory_mb = spec.limits.memory_mb
    return max(1, min(cpus // spec.limits.cpus, memory_mb // spec.limits.memory_mb))


def _spawn(cdir: CampaignDir, run_id: str) -> "subprocess.Popen[bytes]":
    cdir.logs.mkdir(parents=True, exist_ok=True)
    with cdir.log(run_id).open("ab") as log:
        log.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} local executor\n".encode())
        log.flush()
        # its own session: Ctrl-C reaches the runner only, which stops the runs
        return process.start(
            [sys.executable, "-m", "ampkit", "campaign", "exec", str(cdir.root), run_id],
            stdout=log,
        )


@dataclass(frozen=True)
class Budget:
    """A sitting's end (``time.monotonic()``) and each run's expected wall seconds."""

    ends: float
    expected: dict[str, float]
    #: runs in slices resume where they stopped (sitting.next_run)
    resumable: bool = False


def run_local(
    cdir: CampaignDir,
    todo: list[str],
    jobs: int,
    progress: Progress,
    budget: Budget | None = None,
) -> list[str]:
    """Run ``todo`` with at most ``jobs`` at once: in order, or within a
    sitting's ``budget`` the longest expected to end before it first
    (ampkit/campaign/sitting.py). Returns the runs not started: with a
    budget, those no longer expected to fit. On Ctrl-C (or SIGTERM) the
    runs in flight are stopped and stay not-done; the interrupt propagates."""
    queue = list(todo)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        while queue or procs:
            while queue and len(procs) < jobs:
                if budget is None:
                    run_id = queue.pop(0)
                else:
                    left = budget.ends - time.monotonic()
                    picked = sitting.next_run(queue, budget.expected, left, budget.resumable)
                    if picked is None:
                        break
                    run_id = picked
                    queue.remove(run_id)
                procs[run_id] = _spawn(cdir, run_id)
            if not procs:
                break  # only with a budget: nothing left fits
            time.sleep(0.2)
            for run_id, proc in list(procs.items()):
                if proc.poll() is None:
                    continue
                del procs[run_id]
                state = settle(
                    cdir,
                    run_id,
                    f"its process exited with status {proc.returncode} before the run finished",
                    cdir.log(run_id),
                )
                progress.finished(run_id, state.state == OK, state.detail)
            progress.update(len(procs))
    finally:
        process.stop_all(procs.values())
        progress.close()
    return queue


def _kind(e: Entry) -> sitting.Kind:
    """What a run's cost is compared with: its policy's runs (the references
    apart) on its platform."""
    role = e.run.request.policy if e.run.role == MATRIX else "references"
    return role, e.run.request.platform.name


def _spent_s(cdir: CampaignDir, run_id: str) -> float | None:
    """A finished run's wall seconds, a checkpoint boot it made included."""
    try:
        info = RunDir(cdir.runs / run_id).info()
    except Excluded:
        return None
    return None if info.wall_s is None else info.wall_s + info.boot_wall_s


def sitting_budget(
    spec: Spec,
    cdir: CampaignDir,
    rows: list[Entry],
    todo: list[str],
    length_s: float,
    *,
    jobs: int = 1,
) -> tuple[Budget, list[str]]:
    """The budget of a sitting of ``length_s`` from now for the runs ``todo``,
    ``jobs`` at once, and what to say of it."""
    found, _, _ = _estimates(with_pins(spec, cdir.root), rows)
    finished = []
    for e in rows:
        if e.state.state != OK or e.run.run_id not in found:
            continue
        spent = _spent_s(cdir, e.run.run_id)
        if spent is not None:
            finished.append(sitting.Finished(_kind(e), spent, found[e.run.run_id].wall_s))
    wanted = set(todo)
    expected = sitting.expected_walls(
        {e.run.run_id: _kind(e) for e in rows if e.run.run_id in wanted},
        {run_id: est.wall_s for run_id, est in found.items()},
        finished,
        spec.limits.wall_s,
    )
    # A run of the same mix under the same policy on the same platform that
    # ran out of the wall-clock limit says the others would too: each is
    # hours of the machine for nothing, until the limit is changed.
    doomed = _timed_out(cdir, rows)
    held = [e.run.run_id for e in rows if e.run.run_id in wanted and _mix_kind(e) in doomed]
    for run_id in held:
        expected[run_id] = math.inf
    fits = sum(1 for run_id in todo if expected[run_id] <= length_s)
    lines = [
        f"  sitting of {length_s / 3600:.2f} h: {fits} of the {len(todo)} runs to run are "
        f"expected to fit one each ({sitting.describe(*sitting.ratios(finished))}; at most "
        f"the wall-clock limit, {spec.limits.wall_s:,} s); the longest that fits the time "
        "left starts first"
    ]
    # what the whole of it asks: how many sittings like this one are left
    startable = [expected[run_id] for run_id in todo if math.isfinite(expected[run_id])]
    if startable:
        hours = sum(startable) / 3600 / max(1, jobs)
        # no fewer than the longest run needs: it runs on one executor slot
        sittings = max(math.ceil(hours * 3600 / length_s), math.ceil(max(startable) / length_s))
        lines.append(
            f"  together, as expected: {hours:,.1f} h with {jobs} at once, about "
            f"{sittings} sitting(s) of this length"
        )
    if held:
        kinds = ", ".join(sorted(f"{m} under {p} on {pl}" for pl, p, m in doomed))
        lines.append(
            f"  not started: {len(held)} run(s) of {kinds}, where a run already ran out of "
            f"the {spec.limits.wall_s:,} s wall-clock limit (a longer limit, or smaller "
            "sizes, first; outside a sitting they run)"
        )
    if spec.slice_ms:
        lines.append(
            f"  runs in slices of {spec.slice_ms} simulated ms resume at their last finished "
            "slice: one that cannot end in the sitting starts while time is left"
        )
    return Budget(time.monotonic() + length_s, expected, resumable=bool(spec.slice_ms)), lines


def _mix_kind(e: Entry) -> tuple[str, str, str]:
    request = e.run.request
    return (request.platform.name, request.policy, request.mix.name)


def _timed_out(cdir: CampaignDir, rows: list[Entry]) -> set[tuple[str, str, str]]:
    """The (platform, policy, mix) of the runs that ran out of a wall-clock
    limit no shorter than the planned one: failed so now (with the planned
    inputs, the planned limit), or in an attempt set aside. A run cut short
    by a shorter limit says nothing of a longer one."""
    out = set()
    for e in rows:
        planned = e.key.limit_s if isinstance(e.key, RunKey) else None
        details = [e.state.detail] if e.state.state == FAILED else []
        base = cdir.attempts / e.run.run_id
        if base.is_dir():
            for attempt in sorted(base.iterdir()):
                run = RunDir(attempt / "run")
                if not run.path.is_dir():
                    continue
                limit, _ = run.recorded_limit()
                if planned is None or limit is None or limit >= planned:
                    details.append(run.status().removeprefix("failed: "))
        if any(d.startswith("timeout") for d in details):
            out.add(_mix_kind(e))
    return out


# --- the campaign commands -----------------------------------------------------------

_SET_ASIDE_AS = {OK: "forced", FAILED: "failed", STALE: "stale"}


def run_campaign(
    spec: Spec,
    root: Path,
    *,
    jobs: int | None = None,
    force: bool = False,
    failed: bool = False,
    no_build: bool = False,
    wait: bool = True,
    new_inputs: bool = False,
    sitting_s: float | None = None,
) -> bool:
    """Run every run of the spec that is not done (within a sitting of
    ``sitting_s`` seconds, those expected to end in it); True if all are ok,
    or, with a sitting, if every run it started is."""
    from ampkit.campaign import slurm

    if sitting_s is not None and spec.executor.kind != "local":
        raise UsageError(
            "--sitting is for the local executor",
            "a SLURM array's tasks have the cluster's own time limits: leave --sitting out",
        )

    cdir = CampaignDir(root)
    with cdir.locked(f"ampkit campaign run {spec.name}"):
        cdir, rows = prepare_dir(spec, root, no_build, new_inputs)
        if spec.archive is not None:
            for line in take_archived(cdir, rows, spec.archive):
                print(line, file=sys.stderr)
            rows = [Entry(e.run, e.key, cdir.state(e.run.run_id, e.key)) for e in rows]
        live: dict[str, str] = {}
        if slurm.submissions(cdir):
            live = slurm.reconcile(cdir)
            # reconcile may have recorded failures: read the states again
            rows = [Entry(e.run, e.key, cdir.state(e.run.run_id, e.key)) for e in rows]
        todo: list[str] = []
        cached = kept_failed = 0
        for e in rows:
            run_id, state = e.run.run_id, e.state.state
            if run_id in live:
                continue
            if state == OK and not force:
                cached += 1
                continue
            if state == FAILED and not (failed or force):
                kept_failed += 1
                continue
            if state in _SET_ASIDE_AS:
                cdir.set_aside(run_id, _SET_ASIDE_AS[state])
            todo.append(run_id)
        for line in unreferenced(spec):
            print(f"  unreferenced: {line}", file=sys.stderr)
        for line in colab_classes(spec):
            print(f"  {line}", file=sys.stderr)
        print(
            f"campaign {spec.name}: {len(rows)} runs; {cached} done (cached), "
            f"{len(live)} already in SLURM, {kept_failed} failed (kept), {len(todo)} to run",
            file=sys.stderr,
        )
        if kept_failed:
            print(
                "  failed runs are run again only on request: "
                f"ampkit campaign rerun {root} --failed",
                file=sys.stderr,
            )
        kind = spec.executor.kind
        later: list[str] = []
        if kind == "local":
            if todo:
                n = jobs or spec.executor.jobs or default_jobs(spec)
                print(f"  local executor: {n} run(s) at once", file=sys.stderr)
                budget = None
                if sitting_s is not None:
                    budget, lines = sitting_budget(spec, cdir, rows, todo, sitting_s, jobs=n)
                    print("\n".join(lines), file=sys.stderr)
                later = run_local(cdir, todo, n, Progress(len(todo), n), budget)
                if later:
                    print(
                        f"  the sitting ends: {len(later)} run(s) left, none expected to end "
                        "in the time left; 'campaign run' again runs them",
                        file=sys.stderr,
                    )
        else:
            subs = slurm.submit(cdir, spec, todo) if todo else []
            for sub in subs:
                print(
                    f"  submitted job array {sub.job_id} ({len(sub.run_ids)} runs): "
                    f"{sub.directory}",
                    file=sys.stderr,
                )
            following = [*live, *todo]
            if wait and following:
                try:
                    slurm.follow(cdir, following, Progress(len(following), 1))
                except KeyboardInterrupt:
                    print(
                        "ampkit: no longer following; the job arrays keep running "
                        f"('ampkit campaign status {root}' follows them, scancel stops them)",
                        file=sys.stderr,
                    )
                    raise
            elif following:
                print(
                    f"  not waiting: 'ampkit campaign status {root}' follows them", file=sys.stderr
                )
        # Without waiting, runs still in SLURM count as neither ok nor failed.
        pending = slurm.reconcile(cdir) if kind == "slurm" and not wait else {}
        return all(
            e.run.run_id in pending
            or e.run.run_id in later
            or cdir.state(e.run.run_id, e.key).state == OK
            for e in rows
        )


def take_archived(cdir: CampaignDir, rows: list[Entry], archive: Path) -> list[str]:
    """Copy into the campaign the runs its archive holds with the planned key
    (a committed campaign resumed on another machine), so that they are not
    run again; what was taken, and what was not and why."""
    taken, other = 0, 0
    for e in rows:
        source = archive / e.run.run_id
        if e.key is None or e.state.state != TODO or not (source / MANIFEST).is_file():
            continue
        if not RunDir(source).done(e.key):
            other += 1
            continue
        target = cdir.run_dir(e.run.run_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.from-archive")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(source, tmp)
        tmp.replace(target)
        taken += 1
    lines = []
    if taken:
        lines.append(f"  {taken} run(s) taken from the archive {archive}")
    if other:
        lines.append(
            f"  {other} run(s) of the archive {archive} were made with other inputs than "
            "planned (or do not count): run again"
        )
    return lines


def status_lines(root: Path) -> tuple[list[str], bool]:
    """What a campaign directory holds, run by run where it matters; and
    whether every planned run is done and ok."""
    from ampkit.campaign import slurm

    cdir = CampaignDir.existing(root)
    spec = dir_spec(cdir)
    meta = cdir.meta()
    live = slurm.reconcile(cdir) if slurm.submissions(cdir) else {}
    pin = _campaign_kernel(meta) or KernelPin(str(meta["kernel"]["digest"]))
    rows = entries(spec, cdir, pin, cdir.initramfs)
    holder = cdir.holder()
    out = [f"campaign {spec.name} in {root}" + (f"; being run by {holder}" if holder else "")]
    counts: dict[str, int] = {}
    for e in rows:
        state = live.get(e.run.run_id, "").lower() or e.state.state
        if state == TODO and e.state.detail == "interrupted" and holder:
            state = "running"
        counts[state] = counts.get(state, 0) + 1
    order = [OK, "running", "pending", FAILED, STALE, TODO]
    names = sorted(counts, key=lambda s: order.index(s) if s in order else len(order))
    out.append(f"{len(rows)} runs: " + ", ".join(f"{counts[s]} {s}" for s in names))
    for e in rows:
        if e.run.run_id in live:
            continue
        if e.state.state == FAILED:
            out.append(f"  failed {e.run.run_id}: {e.state.detail}")
            out.append(f"         log: {e.state.log}")
        elif e.state.state == STALE:
            out.append(f"  stale  {e.run.run_id}: {e.state.detail}")
    if counts.get(FAILED):
        out.append(f"run them again: ampkit campaign rerun {root} --failed")
    out += cost_lines(spec, cdir, rows)
    return out, counts.get(OK, 0) == len(rows)


def cost_lines(spec: Spec, cdir: CampaignDir, rows: list[Entry]) -> list[str]:
    """What the finished runs cost in wall-clock hours (their manifests'; a
    checkpoint boot a run made counts with it), per policy of the matrix,
    for the references and per platform, and how long the runs still to
    run would take at the mean so far of their own role and platform."""
    spent: dict[str, list[float]] = {}
    kinds: dict[tuple[str, str], list[float]] = {}
    todo: list[tuple[str, str]] = []
    for e in rows:
        role, platform = kind = _kind(e)
        if e.state.state == TODO:
            todo.append(kind)
        if e.state.state != OK:
            continue
        wall = _spent_s(cdir, e.run.run_id)
        if wall is None:
            continue
        kinds.setdefault(kind, []).append(wall)
        for group in (role, f"on {platform}", "total"):
            spent.setdefault(group, []).append(wall)
    if "total" not in spent:
        return []

    def hours(group: str) -> str:
        walls = spent[group]
        mean = sum(walls) / len(walls)
        return f"{group}: {len(walls)} runs, {sum(walls) / 3600:.1f} h ({mean:,.0f} s a run)"

    groups = [g for g in spent if g != "total"]
    out = ["cost so far (wall clock of the engine, checkpoint boots included, summed over runs):"]
    out += [f"  {hours(g)}" for g in sorted(groups, key=lambda g: (g.startswith("on "), g))]
    out.append(f"  {hours('total')}")
    if todo:
        jobs = spec.executor.jobs or default_jobs(spec)
        overall = sum(spent["total"]) / len(spent["total"])
        guessed = sum(sum(kinds[k]) / len(kinds[k]) if k in kinds else overall for k in todo)
        unseen = sum(1 for k in todo if k not in kinds)
        out.append(
            f"  to run: {len(todo)} runs, about {guessed / 3600 / jobs:.1f} h with {jobs} at "
            "once at the mean so far of each one's policy (or references) and platform"
            + (
                f" ({unseen} of them at the overall mean: none of their kind has run)"
                if unseen
                else ""
            )
        )
    return out
