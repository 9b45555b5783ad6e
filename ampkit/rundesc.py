"""The run description the guest runner reads (format in workloads/README.md)."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ampkit.errors import AmpkitError, UsageError
from ampkit.mix import Mix
from ampkit.parsec import SuiteImage
from ampkit.perturb import MAX_US
from ampkit.rundir import instances
from ampkit.tracing import check_events

VERSION = 1
#: once: every application runs once. restart: an application that finishes
#: while others still run starts again, until each has completed once; only
#: first completions count (the standard multi-program method).
METHODS = ("once", "restart")
#: the runner's bound on warmup_ms (workloads/runner/ampkit-init.c)
MAX_WARMUP_MS = 600_000
#: the largest energy per instruction the kernel takes, pJ (COLAB_EPI_PJ_MAX)
MAX_EPI_PJ = 1_000_000
_WORD = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII without spaces


#: What the runner sets in every application's environment itself
#: (workloads/runner/ampkit-init.c): an env line must not change them.
RUNNER_ENV = frozenset({"AMPKIT_REPORT_FD", "AMPKIT_APP_ID", "AMPKIT_M5OPS"})
#: What asks a workload to mark its region in gem5's statistics
#: (workloads/common/ampkit_workload.c): the kit's own line, for a run that
#: asks for it (for_mix's roi_stats), never a caller's.
ROI_STATS_ENV = "AMPKIT_ROI_STATS"
#: The runner's bound on env lines (MAX_ENV in ampkit-init.c).
MAX_ENV = 16


def _env_lines(kit_env: Sequence[str], env: Sequence[str]) -> tuple[str, ...]:
    """The kit's environment (the suite's, the region marks') and the
    caller's (each NAME=value, none of the runner's or the kit's own),
    within the runner's bound."""
    for entry in env:
        name, eq, _ = entry.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise AmpkitError(
                f"environment entry {entry!r} is not NAME=value (a name of letters, "
                "digits and underscores)"
            )
        if name in RUNNER_ENV:
            raise AmpkitError(
                f"environment entry {entry!r}: the runner sets {name} itself",
                f"names it keeps: {', '.join(sorted(RUNNER_ENV))}",
            )
        if name == ROI_STATS_ENV:
            raise UsageError(
                f"{ROI_STATS_ENV} is the kit's to set: the statistics it marks need a run "
                "made for them",
                "ask for them with roi_stats (ampkit profile does on gem5)",
            )
    lines = (*kit_env, *env)
    if len(lines) > MAX_ENV:
        raise AmpkitError(
            f"{len(lines)} environment entries ({len(kit_env)} of the kit's): the runner "
            f"takes at most {MAX_ENV}"
        )
    return lines


@dataclass(frozen=True)
class AppRun:
    name: str
    instance: int
    threads: int
    speedup_q10: int  # predicted big-over-little speedup, 1024 = 1.0; 0 = none given
    argv: tuple[str, ...]
    inputs: str | None = None  # a directory of inputs each instance runs beside
    #: microseconds the first run waits after the others' release (a
    #: perturbation, ampkit.perturb); None: no line at all, as before
    #: perturbations existed, so that an unperturbed description is unchanged
    start_delay_us: int | None = None
    #: predicted energy per instruction on a big CPU, pJ; None: no line
    epi_big_pj: int | None = None
    #: the CPUs its instances run on alone (a cpus line); None: no line
    cpus: tuple[int, ...] | None = None


#: The device the benchmark disk is on: the first virtio block device, on
#: both engines (QEMU's virtio-blk-pci, gem5's PCI virtio block device).
SUITE_DISK_DEVICE = "/dev/vda"


@dataclass(frozen=True)
class RunDescription:
    run_id: str
    policy: str
    repetition: int
    #: the mix time limit (--mix-limit); the runner's key for it is timeout_s
    mix_limit_s: int
    apps: tuple[AppRun, ...]
    method: str = "restart"
    #: gem5 only: statistics reset and dumped around the measured run, work
    #: items per application, m5 exit at the end
    m5ops: bool = False
    #: guest milliseconds of the mix's programs before the measured run
    #: (killed then; with m5ops the statistics reset after it); 0: none
    warmup_ms: int = 0
    disk: tuple[str, str] | None = None  # (device, mountpoint) of the PARSEC disk
    env: tuple[str, ...] = ()  # NAME=value for every application
    #: the PMU events to count over each application's first run (the
    #: speedup model's training data: ampkit.pmu); none, the line is absent
    pmu: tuple[str, ...] = ()
    #: the online speedup model's lines (ampkit.online.OnlineSpeedups.lines);
    #: none, the lines are absent
    online: tuple[str, ...] = ()
    #: kernel tracepoints ("system:event") traced over the measured run
    #: (ampkit.tracing); none, the line is absent
    trace: tuple[str, ...] = ()
    #: a user-level policy's daemon, its program and arguments
    #: (ampkit.policies.USER_POLICIES); none, the line is absent
    policy_daemon: tuple[str, ...] = ()
    #: the index of the application whose first run ends the run (the
    #: others are stopped there: load beside it); None, the line is absent
    until: int | None = None
    #: the daemon's data, whole "policy_data ..." lines (for ampkit-contention,
    #: ampkit.interference.AppModel.data_line); none, the lines are absent
    policy_data: tuple[str, ...] = ()

    @classmethod
    def for_mix(
        cls,
        run_id: str,
        policy: str,
        repetition: int,
        mix_limit_s: int,
        mix: Mix,
        *,
        method: str = "restart",
        m5ops: bool = False,
        warmup_ms: int = 0,
        suite: SuiteImage | None = None,
        start_delays_us: Sequence[int] | None = None,
        pmu: tuple[str, ...] = (),
        env: Sequence[str] = (),
        online: Sequence[str] = (),
        roi_stats: bool = False,
        trace: Sequence[str] = (),
        policy_daemon: Sequence[str] = (),
        policy_data: Sequence[str] = (),
        app_cpus: Sequence[Sequence[int] | None] = (),
        until: int | None = None,
    ) -> "RunDescription":
        """The description of ``mix``; ``suite`` is the PARSEC image its suite
        programs need; ``start_delays_us``, one per app in mix order, its
        perturbation's delays (ampkit.perturb); ``env``, NAME=value lines
        for every application beside the suite's; ``roi_stats``, the
        workloads' region marked in gem5's statistics (ampkit.run.RunRequest)."""
        if start_delays_us is not None and len(start_delays_us) != len(mix.apps):
            raise AmpkitError(
                f"{len(start_delays_us)} start delays for the {len(mix.apps)} apps of {mix.name}"
            )
        if app_cpus and len(app_cpus) != len(mix.apps):
            raise AmpkitError(
                f"{len(app_cpus)} CPU lists for the {len(mix.apps)} apps of {mix.name}"
            )
        apps = []
        # numbered as the analysis reads them back (ampkit.rundir)
        for i, (app, (_, instance)) in enumerate(
            zip(mix.apps, instances(a.program for a in mix.apps), strict=True)
        ):
            inputs = None
            if not app.from_suite:
                argv = app.argv
            elif suite is None:
                raise AmpkitError(f"{app.program} needs the PARSEC image, and none was given")
            else:
                suite_argv, inputs = suite.app_argv(app.program, str(app.input), app.threads)
                argv = tuple(suite_argv)
            apps.append(
                AppRun(
                    name=app.program,
                    instance=instance,
                    threads=app.threads,
                    speedup_q10=0 if app.speedup is None else round(app.speedup * 1024),
                    argv=argv,
                    inputs=inputs,
                    start_delay_us=None if start_delays_us is None else start_delays_us[i],
                    epi_big_pj=None if app.epi_big_nj is None else round(app.epi_big_nj * 1000),
                    cpus=tuple(cpus) if app_cpus and (cpus := app_cpus[i]) is not None else None,
                )
            )
        disk: tuple[str, str] | None = None
        suite_env: tuple[str, ...] = ()
        if any(a.inputs is not None for a in apps) and suite is not None:
            disk = (SUITE_DISK_DEVICE, suite.mount)
            suite_env = tuple(f"{k}={v}" for k, v in sorted(suite.env.items()))
        return cls(
            run_id,
            policy,
            repetition,
            mix_limit_s,
            tuple(apps),
            method=method,
            m5ops=m5ops,
            warmup_ms=warmup_ms,
            disk=disk,
            env=_env_lines((*suite_env, *([f"{ROI_STATS_ENV}=1"] if roi_stats else [])), env),
            pmu=pmu,
            online=tuple(online),
            trace=tuple(trace),
            policy_daemon=tuple(policy_daemon),
            policy_data=tuple(policy_data),
            until=until,
        )

    def render(self) -> str:
        if self.method not in METHODS:
            raise AmpkitError(f"unknown run method '{self.method}'", f"valid: {', '.join(METHODS)}")
        words = [w for a in self.apps for w in (a.name, *a.argv, *([a.inputs] if a.inputs else []))]
        words += [*self.env, *(self.disk or ())]
        words += self.policy_daemon
        for word in (self.run_id, self.policy, *words):
            if not _WORD.match(word):
                raise AmpkitError(
                    f"run description: '{word}' is empty or has spaces or non-ASCII characters"
                )
        lines = [
            f"ampkit-run {VERSION}",
            f"run_id {self.run_id}",
            f"policy {self.policy}",
            f"repetition {self.repetition}",
            # the mix limit, under the name workloads/runner/ampkit-init.c reads
            f"timeout_s {self.mix_limit_s}",
            f"method {self.method}",
            f"m5ops {int(self.m5ops)}",
        ]
        if not 0 <= self.warmup_ms <= MAX_WARMUP_MS:
            raise AmpkitError(
                f"a warm-up of {self.warmup_ms} ms: it must be 0 to {MAX_WARMUP_MS} ms"
            )
        if self.warmup_ms:
            lines.append(f"warmup_ms {self.warmup_ms}")
        if self.until is not None:
            if not 0 <= self.until < len(self.apps):
                raise AmpkitError(
                    f"until {self.until}: the run has applications 0-{len(self.apps) - 1}"
                )
            lines.append(f"until {self.until}")
        if self.pmu:
            lines.append(f"pmu {','.join(self.pmu)}")
        if self.trace:
            lines.append(f"trace {','.join(check_events(self.trace))}")
        if self.disk:
            lines.append(f"disk {self.disk[0]} {self.disk[1]}")
        lines += [f"env {e}" for e in self.env]
        lines += self.online
        if self.policy_daemon:
            lines.append(f"policy_daemon {' '.join(self.policy_daemon)}")
        elif self.policy_data:
            raise AmpkitError("run description: policy_data lines without a policy daemon")
        for line in self.policy_data:
            if not line.startswith("policy_data ") or not all(
                _WORD.match(w) for w in line.split(" ")[1:]
            ):
                raise AmpkitError(f"run description: a malformed policy_data line: {line!r}")
            lines.append(line)
        for a in self.apps:
            head = f"app {a.name} {a.instance} {a.threads} {a.speedup_q10}"
            lines.append(f"{head} {' '.join(a.argv)}")
            if a.inputs:
                lines.append(f"inputs {a.inputs}")
            if a.start_delay_us is not None:
                if not 0 <= a.start_delay_us <= MAX_US:
                    raise AmpkitError(
                        f"a start delay of {a.start_delay_us} us: it must be 0 to {MAX_US} us"
                    )
                lines.append(f"start_delay_us {a.start_delay_us}")
            if a.epi_big_pj is not None:
                if not 1 <= a.epi_big_pj <= MAX_EPI_PJ:
                    raise AmpkitError(
                        f"an energy per instruction of {a.epi_big_pj} pJ: the kernel takes "
                        f"1 to {MAX_EPI_PJ} pJ"
                    )
                lines.append(f"epi_big_pj {a.epi_big_pj}")
            if a.cpus is not None:
                if not a.cpus or any(c < 0 for c in a.cpus):
                    raise AmpkitError(
                        f"{a.name}: a CPU list {list(a.cpus)}: CPU numbers, at least one"
                    )
                lines.append(f"cpus {','.join(str(c) for c in sorted(set(a.cpus)))}")
        return "\n".join(lines) + "\n"
