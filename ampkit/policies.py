"""The scheduling policies the kit knows.

Kernel policies, as the kernel names them: the kernel lists what it was
built with in /proc/sys/kernel/sched_amp_available_policies; every run
records that list (guest.json) and fails if its policy is not in it.
User-level policies (USER_POLICIES): a guest daemon that places the
applications' threads through their allowed CPUs, over a kernel policy.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ampkit.errors import AmpkitError

if TYPE_CHECKING:
    from ampkit.mix import App

#: name -> one-line description
POLICIES: dict[str, str] = {
    "cfs": "Linux CFS, unmodified: the baseline every metric is normalised to",
    "colab": "COLAB: placement by predicted speedup class, futex bottleneck detection, "
    "bias-global selection, big-CPU slices divided by the speedup",
    "wash": "WASH-like baseline: every 40 ms binds each application's most productive "
    "and most waited-for threads to the big CPUs through their allowed CPUs",
    "hsp": "HSP (Saez et al.): every ranking period the threads of the highest predicted "
    "speedup get the big CPUs, one each, the rest the little CPUs (COLAB's allocator)",
    "eef": "EEF-Driven (Saez et al.): as hsp, ranked by speedup over energy per instruction "
    "on a big CPU, through a phase detection",
    "rr": "round robin: every ranking period the big CPUs are dealt out one per "
    "application in turn, longest waiting first, speedup-blind (COLAB's allocator)",
    "acfs": "ACFS (Saez et al.): every ranking period the threads of least progress (run "
    "time as big-CPU time, by speedup, over weight) get the big CPUs; ACFS-E's EDP and "
    "unfairness factors as knobs (COLAB's allocator)",
}

#: What each policy needs of every application of a mix: the mix keys
#: (ampkit.mix) whose values the kernel ranks by. A run that lacks one is
#: refused before boot (missing_inputs()).
REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {
    "sfd": ("speedup",),
    "contention": ("speedup",),
    "hsp": ("speedup",),
    "eef": ("speedup", "epi_big_nj"),
    "acfs": ("speedup",),
}

#: what a run's manifest records about how a policy measured its inputs
POLICY_DETAILS: dict[str, dict[str, str]] = {
    "wash": {
        "work_source": "capacity-weighted run time: the kernel worker reads no "
        "per-thread retired-instruction counter (QEMU's PMU counts cycles only), "
        "so a thread's work is its run time on each CPU type times that type's capacity",
    },
}

BASELINE = "cfs"


@dataclass(frozen=True)
class UserPolicy:
    """A policy that a guest daemon carries out from user space, acting on
    the kernel only through the applications' threads' allowed CPUs
    (workloads/runner/ampkit-init.c, "daemons beside the run")."""

    description: str
    #: the kernel policy the daemon runs over
    kernel: str
    #: the daemon's program (/bin in the guest) and its arguments, as the
    #: run description's policy_daemon line gives them
    daemon: tuple[str, ...]
    #: whether its runs take an interference model file and a threshold
    #: (ampkit.interference.Contention), handed to the daemon
    models: bool = False


#: name -> the user-level policy
USER_POLICIES: dict[str, UserPolicy] = {
    "sfd": UserPolicy(
        "speedup-factor-driven placement (Fan et al.'s baseline): whenever the running "
        "applications change, the big CPUs are dealt out a thread each to whole "
        "applications in order of speedup (the one that takes the last runs on both "
        "types), the rest to the little CPUs, through their threads' allowed CPUs (a "
        "guest daemon over cfs; the warm-up runs under cfs alone)",
        kernel="cfs",
        daemon=("ampkit-contention",),
    ),
    "contention": UserPolicy(
        "contention-aware placement (Fan et al., Algorithm 1): as sfd, but the big CPUs "
        "go, in order of speedup, to the first application with which no application's "
        "slowdown predicted by its interference model exceeds the threshold S, or to the "
        "one of least total predicted slowdown (a guest daemon over cfs, fed a model "
        "file: ampkit run --interference-models FILE)",
        kernel="cfs",
        daemon=("ampkit-contention",),
        models=True,
    ),
}

#: A policy's name with this suffix is the policy fed by the online speedup
#: model (ampkit.online) instead of the hints alone: the kernel runs the
#: policy itself, the kit labels its runs apart (run ids, reports), and its
#: runs need a model (ampkit run --speedup-model, a spec's speedup_model).
#: colab and wash read the speedups; cfs reads none, so cfs+online observes
#: the model's estimates without their changing the schedule.
ONLINE_SUFFIX = "+online"


def kernel_policy(name: str) -> str:
    """The policy the kernel runs for a kit policy name."""
    name = name.removesuffix(ONLINE_SUFFIX)
    user = USER_POLICIES.get(name)
    return user.kernel if user else name


def policy_daemon(name: str) -> tuple[str, ...]:
    """The daemon (program and arguments) a kit policy name runs beside the
    applications; empty for a kernel policy."""
    user = USER_POLICIES.get(name)
    return user.daemon if user else ()


def needs_models(name: str) -> bool:
    """Whether a kit policy name's runs take interference models."""
    user = USER_POLICIES.get(name)
    return bool(user and user.models)


def uses_online(name: str) -> bool:
    """Whether a kit policy name asks for the online speedup model."""
    return name.endswith(ONLINE_SUFFIX)


def details(name: str) -> dict[str, str]:
    """What a run's manifest records of how policy ``name`` works: its
    kernel policy's details (POLICY_DETAILS) and, for a user-level
    policy, the kernel policy under it and its daemon."""
    out = dict(POLICY_DETAILS.get(kernel_policy(name), {}))
    user = USER_POLICIES.get(name)
    if user:
        out |= {"kernel_policy": user.kernel, "daemon": " ".join(user.daemon)}
    return out


def names() -> list[str]:
    """Every kit policy name: the kernel's, each with the online model, and
    the user-level ones (whose daemons read the hints the applications
    start with, not the model's estimates)."""
    return [*POLICIES, *(p + ONLINE_SUFFIX for p in POLICIES), *USER_POLICIES]


#: ACFS's factors (kernel.sched_acfs_edp_factor, ..._unfairness_factor), in
#: hundredths: 1.0 by default, the range the kernel accepts (patch 0044)
ACFS_FACTOR_ONE = 100
ACFS_FACTOR_RANGE = (100, 1000)
_ACFS_KNOBS = ("sched_acfs_edp_factor", "sched_acfs_unfairness_factor")


def acfs_factors(cmdline: str) -> tuple[int, int]:
    """ACFS-E's EDP factor and ACFS's unfairness factor (hundredths) a
    kernel booted with ``cmdline`` starts with. As for COLAB's thresholds,
    the kit takes only values the kernel takes: a value it would refuse
    (and boot on the previous one) is an error here, as is the second
    factor above 1.0, which the kernel refuses while the other is."""
    out = {name: ACFS_FACTOR_ONE for name in _ACFS_KNOBS}
    low, high = ACFS_FACTOR_RANGE
    hint = (
        f"give a decimal number in [{low}, {high}] (hundredths: 500 is 5.0), and at most "
        "one of the two factors above 100"
    )
    for name, value in _SYSCTL_ARG.findall(_kernel_params(cmdline)):
        if name not in _ACFS_KNOBS:
            continue
        given = f"sysctl.kernel.{name}={value} on the kernel command line"
        if not re.fullmatch(r"[1-9][0-9]*", value) or not low <= int(value) <= high:
            raise AmpkitError(
                f"{given}: the kernel takes a decimal number from {low} to {high} (it would "
                "read a leading 0 as octal and 0x as hex) and would boot on its previous "
                "value instead",
                hint,
            )
        other = _ACFS_KNOBS[1 - _ACFS_KNOBS.index(name)]
        if int(value) > ACFS_FACTOR_ONE and out[other] > ACFS_FACTOR_ONE:
            raise AmpkitError(
                f"{given}: the kernel takes one factor above 1.0 at a time and would refuse "
                f"this one, {other} being {out[other]}",
                hint,
            )
        out[name] = int(value)
    return out[_ACFS_KNOBS[0]], out[_ACFS_KNOBS[1]]


def acfs_edp_factor(cmdline: str) -> int:
    """ACFS-E's EDP factor (hundredths) a kernel booted with ``cmdline``
    starts with (acfs_factors())."""
    return acfs_factors(cmdline)[0]


def required_inputs(name: str, cmdline: str = "") -> tuple[str, ...]:
    """The mix keys policy ``name`` needs of every application, on a kernel
    booted with ``cmdline`` appended: ACFS-E (an EDP factor above 1.0)
    weighs each thread by its energy efficiency factor, so it needs the
    energies too, where acfs itself needs the speedups only."""
    policy = name if name in USER_POLICIES else kernel_policy(name)
    needed = REQUIRED_INPUTS.get(policy, ())
    if policy == "acfs" and acfs_edp_factor(cmdline) > ACFS_FACTOR_ONE:
        needed = (*needed, "epi_big_nj")
    return needed


def missing_inputs(name: str, apps: "Sequence[App]", cmdline: str = "") -> list[str]:
    """What the applications lack of what policy ``name`` ranks by (on a
    kernel booted with ``cmdline`` appended), one entry per application and
    key, in the mix's order; empty when nothing is missing. The online
    model supplies speedups (``+online``), not energies."""
    needed = required_inputs(name, cmdline)
    if uses_online(name):
        needed = tuple(k for k in needed if k != "speedup")
    return [
        f"app {i + 1} ({app.program}): {key}"
        for i, app in enumerate(apps)
        for key in needed
        if getattr(app, key) is None
    ]


def needs_energies(name: str, cmdline: str = "") -> bool:
    """Whether policy ``name``, on a kernel booted with ``cmdline``
    appended, weighs threads by their energies per instruction: only its
    runs take them from a profile. acfs does at an EDP factor above 1.0
    (ACFS-E) and not at 1.0, where the kernel never reads them, so that its
    runs there keep their key when a profile's energies are measured again."""
    return "epi_big_nj" in required_inputs(name, cmdline)


def check_inputs(name: str, apps: "Sequence[App]", cmdline: str = "") -> None:
    """Refuse a run whose applications lack what its policy ranks by."""
    missing = missing_inputs(name, apps, cmdline)
    if missing:
        factor = acfs_edp_factor(cmdline)
        why = (
            f" (the command line's sched_acfs_edp_factor={factor} weighs energies)"
            if "epi_big_nj" in required_inputs(name, cmdline)
            and "epi_big_nj" not in REQUIRED_INPUTS.get(kernel_policy(name), ())
            else ""
        )
        raise AmpkitError(
            f"policy {name} ranks threads by values the mix does not give{why}: "
            + "; ".join(missing),
            "set them per [[app]] in the mix (speedup = 2.1, epi_big_nj = 0.45), or take them "
            "from a profile ('ampkit profile' on gem5 measures both): --speedups PROFILE, or "
            "speedups = PROFILE in a campaign spec; the online model (+online) gives speedups"
            + ("; or leave the EDP factor at 100" if why else ""),
        )


def check_policy(name: str) -> str:
    if name not in names():
        raise AmpkitError(f"unknown policy '{name}'", f"valid: {', '.join(names())}")
    return name


#: COLAB's class thresholds as the kernel sets them by default (patch 0004;
#: kernel.sched_colab_big_speedup, kernel.sched_colab_little_speedup), as
#: speedups times 1024: big from the first up, little up to the second
COLAB_THRESHOLDS_Q10 = (2048, 1536)
#: the range the kernel accepts for them (a write outside fails with EINVAL)
COLAB_SPEEDUP_Q10_RANGE = (256, 8192)
_COLAB_KNOBS = ("sched_colab_big_speedup", "sched_colab_little_speedup")
#: sysctl.kernel.<name>=<value> on a kernel command line; the kernel takes
#: '/' for '.' in the name (fs/proc/proc_sysctl.c, process_sysctl_arg())
_SYSCTL_ARG = re.compile(r"(?:^|\s)sysctl[./]kernel[./]([A-Za-z0-9_]+)=(\S*)")
#: knobs the runner writes itself once the guest is up, whatever the command line said
RUNNER_KNOBS = frozenset({"sched_colab_stats"})


def _kernel_params(cmdline: str) -> str:
    """The part of a command line the kernel parses as its parameters:
    everything before ' -- ' goes to the kernel, the rest to init."""
    return f" {cmdline} ".split(" -- ", 1)[0]


def kernel_sysctl_args(cmdline: str) -> dict[str, str]:
    """The kernel.* sysctls a command line sets, each to the last value it
    gives (the kernel applies them in order)."""
    return {name: value for name, value in _SYSCTL_ARG.findall(_kernel_params(cmdline))}


def colab_thresholds(cmdline: str) -> tuple[int, int]:
    """COLAB's (big, little) class thresholds a kernel booted with ``cmdline``
    starts with: the defaults, or what the command line sets. The kit takes
    only values the kernel takes: a value it would refuse (it logs the
    refusal and boots on the previous value) is an error here, as are
    thresholds that cross."""
    out = list(COLAB_THRESHOLDS_Q10)
    low, high = COLAB_SPEEDUP_Q10_RANGE
    hint = f"give a decimal number in [{low}, {high}] (2048 is a speedup of 2.0)"
    # every value in turn, as the kernel applies them: each must be one it takes
    for name, value in _SYSCTL_ARG.findall(_kernel_params(cmdline)):
        if name not in _COLAB_KNOBS:
            continue
        given = f"sysctl.kernel.{name}={value} on the kernel command line"
        if not re.fullmatch(r"[1-9][0-9]*", value):
            # the kernel reads 0x.. as hex and 0.. as octal: 03000 is 1536
            raise AmpkitError(
                f"{given}: the kit takes these thresholds as plain decimal numbers (the "
                "kernel would read a leading 0 as octal, 0x as hex, and refuse anything else)",
                hint,
            )
        if not low <= int(value) <= high:
            raise AmpkitError(
                f"{given}: the kernel takes a speedup times 1024 from {low} to {high} and "
                "would boot on its previous value instead",
                hint,
            )
        out[_COLAB_KNOBS.index(name)] = int(value)
    big, little = out
    if little >= big:
        raise AmpkitError(
            f"COLAB's thresholds cross on the kernel command line: little up to {little}, "
            f"big from {big}",
            "the little-class threshold (sched_colab_little_speedup) must be below the "
            "big-class one (sched_colab_big_speedup)",
        )
    return big, little


def knob_problems(cmdline: str, knobs: object) -> list[str]:
    """The policy knobs a kernel booted with ``cmdline`` does not hold as the
    command line set them, by the guest's record of them (guest.json's
    amp.knobs); none where the guest recorded none."""
    if not isinstance(knobs, dict):
        return []
    out = []
    for name, value in kernel_sysctl_args(cmdline).items():
        held = knobs.get(name)
        # plain decimal values only: the kernel reads 010 as 8, 0x10 as 16
        plain = re.fullmatch(r"0|[1-9][0-9]*", value) is not None
        if name in RUNNER_KNOBS or not isinstance(held, int) or not plain:
            continue
        if held != int(value):
            out.append(
                f"the kernel holds {name}={held} where its command line sets {value} "
                "(a value it refused?)"
            )
    return out


def colab_class(speedup: float | None, thresholds: tuple[int, int]) -> str:
    """The class COLAB puts a thread of this hint in (the run description
    gives the kernel the speedup times 1024, rounded); a thread without a
    hint is of the either class."""
    if speedup is None:
        return "either"
    q10 = round(speedup * 1024)
    big, little = thresholds
    return "big" if q10 >= big else "little" if q10 <= little else "either"
