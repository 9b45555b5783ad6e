"""The scheduling policies the kit knows, as the kernel names them.

The kernel lists what it was built with in
/proc/sys/kernel/sched_amp_available_policies; every run records that list
(guest.json) and fails if its policy is not in it.
"""

from ampkit.errors import AmpkitError

#: name -> one-line description
POLICIES: dict[str, str] = {
    "cfs": "Linux CFS, unmodified: the baseline every metric is normalised to",
    "colab": "COLAB: placement by predicted speedup, futex bottleneck detection, "
    "bias-global selection, vruntime as progress",
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
