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
}

BASELINE = "cfs"


def check_policy(name: str) -> str:
    if name not in POLICIES:
        raise AmpkitError(f"unknown policy '{name}'", f"valid: {', '.join(POLICIES)}")
    return name
