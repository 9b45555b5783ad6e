"""The scheduling policies the kit knows, as the kernel names them.

The kernel lists what it was built with in
/proc/sys/kernel/sched_amp_available_policies; every run records that list
(guest.json) and fails if its policy is not in it.
"""

import re

from ampkit.errors import AmpkitError

#: name -> one-line description
POLICIES: dict[str, str] = {
    "cfs": "Linux CFS, unmodified: the baseline every metric is normalised to",
    "colab": "COLAB: placement by predicted speedup class, futex bottleneck detection, "
    "bias-global selection, big-CPU slices divided by the speedup",
    "wash": "WASH-like baseline: every 40 ms binds each application's most productive "
    "and most waited-for threads to the big CPUs through their allowed CPUs",
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


def check_policy(name: str) -> str:
    if name not in POLICIES:
        raise AmpkitError(f"unknown policy '{name}'", f"valid: {', '.join(POLICIES)}")
    return name


#: COLAB's class thresholds as the kernel sets them by default (patch 0004;
#: kernel.sched_colab_big_speedup, kernel.sched_colab_little_speedup), as
#: speedups times 1024: big from the first up, little up to the second
COLAB_THRESHOLDS_Q10 = (2048, 1536)
_COLAB_KNOBS = ("sched_colab_big_speedup", "sched_colab_little_speedup")


def _sysctl_values(cmdline: str, knob: str) -> list[str]:
    """Every value 'sysctl.kernel.<knob>=' takes on a command line, in order
    (the kernel's sysctl.* parameters; '/' may stand for '.')."""
    pattern = rf"(?:^|\s)sysctl[./]kernel[./]{knob}=(\S*)"
    return re.findall(pattern, cmdline)


def colab_thresholds(cmdline: str) -> tuple[int, int]:
    """COLAB's (big, little) class thresholds a kernel booted with ``cmdline``
    starts with: the defaults, each replaced by the last value the command
    line gives it."""
    out = list(COLAB_THRESHOLDS_Q10)
    for i, knob in enumerate(_COLAB_KNOBS):
        values = _sysctl_values(cmdline, knob)
        if not values:
            continue
        if not values[-1].isdigit():
            raise AmpkitError(
                f"sysctl.kernel.{knob}={values[-1]} on the kernel command line: not a number",
                "give the speedup times 1024 as a whole number (2048 is 2.0)",
            )
        out[i] = int(values[-1])
    return out[0], out[1]


def colab_class(speedup: float | None, thresholds: tuple[int, int]) -> str:
    """The class COLAB puts a thread of this hint in (the run description
    gives the kernel the speedup times 1024, rounded)."""
    if speedup is None:
        return "either"
    q10 = round(speedup * 1024)
    big, little = thresholds
    return "big" if q10 >= big else "little" if q10 <= little else "either"
