"""A spec expanded into runs, each named by the hash of what it runs.

The matrix is platforms x policies x mixes x repetitions (a mix's own
count where the spec's [mix_repetitions] gives one); for every (platform,
mix) and each of the spec's ``repetitions`` the reference runs the metrics
need are added (each application alone under the baseline, on the platform
and on its little CPUs), once each however many mixes share an
application. A mix's own count repeats its runs, not its references: the
references of an application serve every mix that runs it, and each is
made as many times as every other.
"""

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ampkit import kernel as kernel_mod
from ampkit import parsec, policies, references
from ampkit.campaign.spec import Spec
from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_file
from ampkit.mix import Mix
from ampkit.online import OnlineSpeedups
from ampkit.online import for_run as online_for_run
from ampkit.profile import Profile, load_profile
from ampkit.run import EngineIdentity, RunRequest, engine_identity, prepare
from ampkit.rundir import RunKey

#: The role of a run that is part of the matrix (references carry their kind).
MATRIX = "matrix"


@dataclass(frozen=True)
class PlannedRun:
    request: RunRequest
    role: str  # MATRIX, or the reference kind

    @property
    def run_id(self) -> str:
        return self.request.run_id


def online_of(spec: Spec) -> OnlineSpeedups | None:
    """The online speedup model the spec's +online policies run with."""
    if spec.speedup_model is None:
        return None
    return online_for_run(
        spec.speedup_model,
        engine=spec.engine,
        cmdline=spec.append,
        period_ms=spec.online_period_ms,
    )


def expand(spec: Spec) -> list[PlannedRun]:
    """Every run of the campaign, in the order they are started: repetition
    by repetition, so that an unfinished campaign already holds whole ones."""
    profile = load_profile(spec.speedups) if spec.speedups else None
    online = online_of(spec)
    out: dict[str, PlannedRun] = {}

    def add(run: PlannedRun) -> None:
        out.setdefault(run.run_id, run)

    most = max(spec.repetitions_of(m.name) for m in spec.mixes)
    for repetition in range(most):
        for platform in spec.platforms:
            for listed in spec.mixes:
                runs_mix = repetition < spec.repetitions_of(listed.name)
                runs_references = repetition < spec.repetitions
                if not runs_mix and not runs_references:
                    continue
                # a mix that names its own profile keeps its hints (measured
                # for its very applications); the others take the spec's
                own = own_profile(listed)
                hints_from = own if own is not None else profile
                mix = profile.apply(listed) if profile is not None and own is None else listed
                # the runs of a policy that weighs energies (eef, ACFS-E)
                # alone take them from the profile (the mix's own, else the
                # spec's), and nothing else from it: every other run's
                # description, and key, stays what it was
                energy_mix = hints_from.with_energies(mix) if hints_from is not None else mix
                base = RunRequest(
                    platform=platform,
                    policy=policies.BASELINE,
                    mix=mix,
                    repetition=repetition,
                    engine=spec.engine,
                    mix_limit_s=spec.limits.mix_limit_s,
                    kernel_variant=spec.kernel,
                    extra_cmdline=spec.append,
                    wall_limit_s=spec.limits.wall_limit_s,
                    method=spec.method,
                    suite_manifest=spec.parsec,
                    qemu_clock=spec.qemu_clock,
                    warmup_ms=spec.warmup_ms,
                    perturb_us=spec.perturb_us,
                    slice_ms=spec.slice_ms,
                )
                if runs_mix:
                    for policy in spec.policies:
                        fed = online if policies.uses_online(policy) else None
                        policy_mix = (
                            energy_mix if policies.needs_energies(policy, spec.append) else mix
                        )
                        # what a ranked policy ranks by, hints and profile
                        # applied: refused before any run starts
                        policies.check_inputs(policy, policy_mix.apps, spec.append)
                        contention = spec.contention if policies.needs_models(policy) else None
                        if contention is not None:  # a model missing: refused now too
                            contention.data_lines(policy_mix, platform, spec.engine)
                        request = replace(
                            base, policy=policy, online=fed, mix=policy_mix, contention=contention
                        )
                        add(PlannedRun(request, MATRIX))
                if runs_references:
                    for ref in references.references(base, spec.references):
                        add(PlannedRun(ref.request, ref.kind))
    return list(out.values())


@dataclass(frozen=True)
class KernelPin:
    """The kernel a campaign's runs are keyed by: the digest of its inputs,
    and the hashes of the files a run boots where the build is known
    (RunKey.kernel_binaries: a run booted from the same files under
    another digest is the same run)."""

    digest: str
    binaries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, build: kernel_mod.KernelBuild) -> "KernelPin":
        return cls(build.manifest["digest"], build.binaries())


def own_profile(mix: Mix) -> Profile | None:
    """The profile a mix names for its hints, where it names one."""
    return load_profile(mix.profile) if mix.profile is not None else None


@dataclass(frozen=True)
class Pins:
    """What every run of a campaign shares, by hash."""

    engine: EngineIdentity
    kernel_digest: str
    initramfs_sha256: str
    suite: parsec.SuiteImage | None
    #: the kernel files of the build, where there is one (RunKey.kernel_binaries)
    kernel_binaries: tuple[tuple[str, str], ...] = ()


def pins_for(spec: Spec, runs: list[PlannedRun], kernel: KernelPin, initramfs: Path) -> Pins:
    suite = None
    if any(app.from_suite for run in runs for app in run.request.mix.apps):
        suite = parsec.load_image(spec.parsec)
    if not initramfs.is_file():
        raise AmpkitError(f"no initramfs at {initramfs}", "run 'ampkit build initramfs'")
    return Pins(
        engine=engine_identity(spec.engine),
        kernel_digest=kernel.digest,
        initramfs_sha256=sha256_file(initramfs),
        suite=suite,
        kernel_binaries=kernel.binaries,
    )


def keys(runs: list[PlannedRun], pins: Pins) -> Iterator[tuple[PlannedRun, RunKey]]:
    """Each run with its key (run.PreparedRun.run_key)."""
    dtbs: dict[str, bytes] = {}
    for run in runs:
        prepared = prepare(
            run.request,
            pins.engine,
            pins.kernel_digest,
            pins.initramfs_sha256,
            kernel_binaries=pins.kernel_binaries,
            dtb_cache=dtbs,
            suite=pins.suite,
        )
        yield run, prepared.run_key


def unreferenced(spec: Spec) -> list[str]:
    """What the report of this campaign cannot give, and why: the runs its
    metrics are referenced by that the spec leaves out, or that a platform
    cannot have. Said before a campaign starts, not found in its report."""
    out: list[str] = []
    # a mix of one program run under the baseline only is a measurement of
    # it, not a comparison: its report has no slowdowns to miss; under
    # another policy its slowdown is against the baseline's run alone
    only_baseline = set(spec.policies) <= {policies.BASELINE}
    compared = [m.name for m in spec.mixes if len(m.apps) > 1 or not only_baseline]
    mixes = ", ".join(compared)
    if compared:
        if "alone" not in spec.references:
            out.append(
                "no slowdowns (h_antt, h_stp, fairness, unfairness) for any mix: "
                "'references' lacks 'alone' (each application alone under "
                f"{policies.BASELINE}) for {mixes}"
            )
        if "little-only" not in spec.references:
            out.append(f"no ASP for any mix: 'references' lacks 'little-only' for {mixes}")
        else:
            out += [
                f"no ASP on {p.name}: it has no little CPUs to run a little-only reference on"
                for p in spec.platforms
                if not p.little
            ]
    if policies.BASELINE not in spec.policies:
        out.append(
            f"nothing normalised to {policies.BASELINE} (the report's figures): 'policies' lacks it"
        )
    return out


def colab_classes(spec: Spec) -> list[str]:
    """The classes COLAB puts the campaign's apps in, by their hints and the
    thresholds the runs' kernels boot with; a warning when every app falls in
    one class, where COLAB's allocator has nothing to decide, or when each
    mix's apps do."""
    runs = [r for r in expand(spec) if policies.kernel_policy(r.request.policy) == "colab"]
    if not runs:
        return []
    cmdline = runs[0].request.extra_cmdline
    thresholds = policies.colab_thresholds(cmdline)
    given = thresholds != policies.COLAB_THRESHOLDS_Q10
    classes: dict[str, set[str]] = {}
    mixed: set[str] = set()  # the mixes whose apps are of more than one class
    for run in runs:
        held = set()
        for app in run.request.mix.apps:
            name = app.program + (f" t{app.threads}" if app.threads else "")
            name += "" if app.speedup is not None else " (no hint)"
            cls = policies.colab_class(app.speedup, thresholds)
            classes.setdefault(cls, set()).add(name)
            held.add(cls)
        if len(held) > 1:
            mixed.add(run.request.mix.name)
    big, little = thresholds
    out = [
        f"colab classes (big from {big / 1024:.3f}, little up to {little / 1024:.3f}: "
        + ("the command line's" if given else "the kernel's defaults")
        + "): "
        + "; ".join(
            f"{cls}: {', '.join(sorted(classes[cls]))}"
            for cls in ("big", "either", "little")
            if cls in classes
        )
    ]
    if len(classes) == 1:
        (only,) = classes
        out.append(
            f"warning: under colab every app is {only}-class, so its allocator has nothing "
            "to place; set the thresholds for these hints with "
            "sysctl.kernel.sched_colab_big_speedup=N and "
            "sysctl.kernel.sched_colab_little_speedup=N (speedup x 1024) in the spec's append"
        )
    elif not mixed:
        out.append(
            "warning: no mix holds apps of two classes, so COLAB never places one app "
            "of a mix apart from another by its sensitivity"
        )
    return out
