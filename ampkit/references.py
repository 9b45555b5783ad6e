"""Reference runs: each application of a mix alone, as the metrics need them.

Slowdowns (H_ANTT, H_STP, fairness) divide an application's turnaround in
the mix by its turnaround alone on the same platform under the baseline
policy; ASP divides by its turnaround alone on the little CPUs only; the
big-only run gives the application's speedup on this machine. The
analysis matches a reference to the mixed runs by engine, platform and the
application's key (program, threads and arguments), so the references of
one mix serve every other mix that runs the same application.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ampkit.errors import AmpkitError
from ampkit.mix import App, Mix
from ampkit.platform import Platform
from ampkit.policies import BASELINE
from ampkit.run import RunRequest
from ampkit.rundir import ALONE_PREFIX, PlannedKey, RunDir

#: Where each kind of reference runs, given the mix's platform.
KINDS = ("alone", "little-only", "big-only")


@dataclass(frozen=True)
class Reference:
    kind: str
    request: RunRequest


def alone_mix(mix: Mix, app: App) -> Mix:
    """A mix of ``app`` alone, named after what makes it distinct."""
    name = f"{ALONE_PREFIX}{app.program}-t{app.threads}-{app.workload_size}"
    if app.args:
        name += "-" + app.args_digest
    return Mix(
        name=name,
        description=f"{app.program} of the {mix.name} mix, alone",
        category=mix.category,
        apps=(app,),
        source=mix.source,
    )


def _platform_for(kind: str, platform: Platform) -> Platform | None:
    if kind == "alone":
        return platform
    if kind == "little-only":
        return platform.little_only if platform.little else None
    if kind == "big-only":
        return platform.big_only if platform.big else None
    raise AmpkitError(f"unknown reference kind '{kind}'", f"valid: {', '.join(KINDS)}")


def references(request: RunRequest, kinds: Iterable[str] = KINDS) -> list[Reference]:
    """The reference runs of the request's mix: one per distinct application
    and kind, under the baseline policy, with the request's engine, kernel
    and limits. A kind the platform cannot give (little-only on a platform
    without little CPUs) is left out."""
    seen: set[tuple[str, str]] = set()
    out = []
    for kind in kinds:
        platform = _platform_for(kind, request.platform)
        if platform is None:
            continue
        for app in request.mix.apps:
            mix = alone_mix(request.mix, app)
            if (kind, mix.name) in seen:
                continue
            seen.add((kind, mix.name))
            # untraced: a reference serves the metrics, which a trace's cost
            # would bias; nothing pinned, nothing stopped: the one app alone
            # under the baseline, and none of the policy's own inputs
            ref = replace(
                request,
                platform=platform,
                policy=BASELINE,
                mix=mix,
                method="once",
                trace_events=(),
                app_cpus=(),
                until=None,
                contention=None,
                online=None,
            )
            out.append(Reference(kind, ref))
    return out


def is_done(run_dir: Path, key: PlannedKey) -> bool:
    """A run that counts is there (finished, sound, its statistics too),
    made from the same inputs (``key``: run.PreparedRun.run_key, which hashes
    the kernel, the initramfs, the engine's binaries and configuration and
    the run's description): a second call skips it. One that does not
    count, or that other inputs made (a changed core model, a rebuilt
    kernel), is made again. RunDir.done() answers it, as it does for a
    campaign's store."""
    return RunDir(run_dir).done(key)
