"""The kernel's own futex selftests in the guest, under every policy and while it flips.

tools/testing/selftests/futex/functional of the kit's kernel source, built
static for the guest (ampkit/selftests.py), is run by ampkit-selftest
(workloads/runner) case by case with run.sh's arguments, in one boot per
kernel: under cfs, colab and wash in turn, then while a process in the guest
writes every policy the kernel lists to sched_amp_policy in turn every
10 ms. Every case must pass, and the kernel must not complain.
"""

from pathlib import Path
from typing import Any

from ampkit import selftests
from ampkit.kernel import KernelBuild
from ampkit.mix import App

from .helpers import EXECUTED, make_mix, run_mix

PHASES = ("cfs", "colab", "wash", "flip")

#: The tests assume a CPU of some speed: futex_requeue's "many" case, say,
#: wants ten new threads blocked within 10 ms and requeued within 30 ms of
#: the first. Under the host clock a loaded host stalls vCPUs for longer
#: (measured: 22-67 ms to create the ten, up to 8 of them timed out); under
#: icount the rate follows the host, and so does the guest's view of its
#: speed (measured: a fixed loop 24 ms, later 1.5 s; "many" failed under cfs).
#: At 1 ns per instruction the guest's time depends on the guest alone, and
#: the suite's 9 s of sleeps per phase cost no wall time.
CLOCK = EXECUTED


def run_suite(out: Path, kernel: KernelBuild, initramfs: Path, **request: Any) -> selftests.Report:
    app = App(
        program="ampkit-selftest",
        threads=1,
        size=1,
        args=(selftests.GUEST_DIR, *PHASES),
    )
    outcome = run_mix(
        out,
        kernel,
        initramfs,
        make_mix(app, name="futex-selftests"),
        policy="cfs",
        method="once",
        **request,
    )
    assert outcome.report.apps, outcome.status
    output = outcome.report.apps[0]["output"]
    report = selftests.parse_report(output)
    print_table(report)
    assert outcome.ok, outcome.status
    assert outcome.report.kernel_problems == [], outcome.report.kernel_problems
    assert report.done, output
    return report


def print_table(report: selftests.Report) -> None:
    """Each case's TAP letters and milliseconds per phase (pytest -s shows it)."""
    print(f"\n{'run.sh case':<42}" + "".join(f"{p.name:>14}" for p in report.phases))
    for row in zip(*(p.results for p in report.phases), strict=True):
        cells = "".join(f"{r.tap or '-':>6} {r.ms:>6.0f}ms" for r in row)
        print(f"{row[0].line:>3} {row[0].command:<38}{cells}")
    print(f"{'phase total':<42}" + "".join(f"{p.ms / 1000:>13.1f}s" for p in report.phases))
    flip = report.phases[-1]
    print(f"flips: {flip.flips} (errno {flip.flip_errno})")


def check(report: selftests.Report) -> None:
    assert [p.name for p in report.phases] == list(PHASES)
    for phase in report.phases[:3]:
        assert phase.policy == phase.policy_after == phase.name, phase
    # a switch asked every 10 ms of guest time, each taking what it takes:
    # a switch between COLAB's modes (colab, hsp, eef) stops and starts
    # COLAB (two static key changes, RCU grace periods), and with five
    # policies a switch took 21 ms on average (438 in 9.3 s on 2B2L); at
    # least one per 40 ms keeps every case of the phase under switches
    flip = report.phases[3]
    assert flip.flip_errno == 0 and flip.flips is not None, flip
    assert flip.flips >= flip.ms / 40, flip
    failed = [r for r in report.results if not r.passed]
    assert failed == [], "\n".join(f"{r.describe()}\n{r.tail}" for r in failed)


def test_futex_selftests_on_2b2l(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    report = run_suite(
        tmp_path / "run",
        kernel_build,
        initramfs,
        platform="2B2L",
        qemu_clock=CLOCK,
        mix_limit_s=300,
        wall_limit_s=300,
    )
    check(report)


def test_futex_selftests_on_the_debug_kernel_at_4b4l(
    tmp_path: Path, debug_build: KernelBuild, initramfs: Path
) -> None:
    report = run_suite(
        tmp_path / "run",
        debug_build,
        initramfs,
        platform="4B4L",
        kernel_variant="debug",
        qemu_clock=CLOCK,
        mix_limit_s=300,
        wall_limit_s=900,
    )
    check(report)
    console = (tmp_path / "run" / "console.log").read_text()
    assert "KernelAddressSanitizer initialized" in console
    assert "Lock dependency validator" in console
