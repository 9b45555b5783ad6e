"""A synchronisation program waits on gem5 as its category says, under the
baseline and under COLAB alike: the kernel's futex counters, which the
runner keeps under every policy, show its threads blocked for at least the
share a synchronisation mix needs (ampkit.categories.WAITING_SHARE)."""

from pathlib import Path

import pytest

from ampkit.behaviour import measurement_of
from ampkit.categories import WAITING_SHARE
from ampkit.engines import gem5
from ampkit.kernel import KernelBuild
from ampkit.mix import App
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute
from ampkit.rundir import RunDir
from tests.qemu.helpers import make_mix

#: contend at a small size: about 2.5 simulated ms alone on 2B2L, a minute
#: of wall clock; its locked half of each update is long enough that the
#: threads that meet on the lock sleep on it.
SMALL_CONTEND = App(program="contend", threads=4, size=40)


@pytest.mark.parametrize("policy", ["cfs", "colab"])
def test_a_lock_bound_program_waits_under_every_policy(
    policy: str,
    gem5_tree: gem5.Gem5,
    kernel_build: KernelBuild,
    initramfs: Path,
    tmp_path: Path,
) -> None:
    request = RunRequest(
        platform=get_platform("2B2L"),
        policy=policy,
        mix=make_mix(SMALL_CONTEND, name=f"contend-{policy}"),
        engine="gem5",
        mix_limit_s=5,
        method="once",
    )
    outcome = execute(request, tmp_path / policy, kernel_build, initramfs)
    assert outcome.ok, outcome.status
    m = measurement_of(RunDir(outcome.directory))
    assert m.blocked_share >= WAITING_SHARE, m.describe()
    # the waiting is the program's own: its releases ended it
    assert m.caused_share >= WAITING_SHARE, m.describe()
    # and the region is the work: the self-check comes after it
    assert m.region_ns < m.process_ns
