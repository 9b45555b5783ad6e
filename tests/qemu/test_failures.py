"""Guests that hang or crash, and CLIs that are interrupted: logs kept, no QEMU left."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ampkit.analysis.collect import collect
from ampkit.kernel import KernelBuild
from ampkit.mix import SMALL_SIZES, App

from ..conftest import qemu_processes
from .helpers import make_mix, probe, run_mix, run_probe


def test_guest_that_outlives_the_limit_is_killed(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    out = tmp_path / "run"
    outcome = run_probe(
        out,
        kernel_build,
        initramfs,
        "sleep",
        "600",
        mix_limit_s=600,
        wall_limit_s=3,
    )
    assert outcome.status.startswith("failed: timeout: the guest did not power off within 3 s")
    assert "Booting Linux" in (out / "console.log").read_text()  # the log is kept
    assert (out / "status").read_text().startswith("failed: timeout")
    assert qemu_processes(str(out)) == []


def test_application_that_hangs_is_killed_by_the_runner(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(App("compute", threads=2, size=1000), probe("sleep", "600"))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, mix_limit_s=2)
    assert outcome.status == "failed: ampkit-probe#0 timeout (signal 9)"
    compute, hung = outcome.report.apps
    assert compute["status"] == "ok"  # the other application still reports
    assert hung["status"] == "timeout"


def test_kernel_that_cannot_start_init_fails_with_the_reason(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    outcome = run_probe(
        tmp_path / "run",
        kernel_build,
        initramfs,
        "sysinfo",
        extra_cmdline="rdinit=/no/such/init init=/no/such/init",
    )
    assert outcome.status.startswith("failed: kernel reported a problem:")
    assert "Kernel panic" in outcome.status
    assert "no results" in outcome.status
    assert (tmp_path / "run" / "console.log").stat().st_size > 0


def test_failing_application_fails_the_run(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(App("compute", threads=1, size=100, args=("--bogus",)))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix)
    assert outcome.status == "failed: compute#0 failed (exit status 2)"


def test_a_self_check_that_fails_fails_the_run(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """A program's result spoilt after its region (AMPKIT_WRONG_RESULT=1 in
    its environment) is caught by its own check, in the guest: the run
    fails, with the program named, and no metric counts it."""
    mix = make_mix(App("stages", threads=3, size=SMALL_SIZES["stages"]))
    runs = tmp_path / "runs"
    outcome = run_mix(runs / "run", kernel_build, initramfs, mix, env=("AMPKIT_WRONG_RESULT=1",))
    assert outcome.status == "failed: stages#0 failed (exit status 1)"
    col = collect(runs)
    assert col.apps.empty
    assert len(col.excluded) == 1 and "stages#0 failed (exit status 1)" in str(
        col.excluded["reason"].iloc[0]
    )


SLEEPER = str(Path(__file__).parent / "sleeper.toml")


def cli_cmd(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ampkit",
        "run",
        "--no-build",
        "--out",
        str(out),
        "--mix",
        SLEEPER,
        *extra,
    ]


def start_cli(out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cli_cmd(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_qemu(out: Path, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        console = out.with_name(out.name + ".partial") / "console.log"
        pids = qemu_processes(str(out))
        if pids and console.is_file() and b"Run /init" in console.read_bytes():
            return pids
        time.sleep(0.2)
    raise AssertionError("QEMU did not start")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_interrupted_cli_leaves_no_qemu(
    sig: signal.Signals, tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    out = tmp_path / "run"
    cli = start_cli(out)
    try:
        pids = wait_for_qemu(out)
        cli.send_signal(sig)
        code = cli.wait(timeout=20)
        deadline = time.monotonic() + 10
        while qemu_processes(str(out)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert qemu_processes(str(out)) == [], f"QEMU {pids} survived {sig.name}"
        if sig != signal.SIGKILL:
            assert code == 130
            assert b"interrupted" in cli.stderr.read()  # type: ignore[union-attr]
        # unfinished: never given the final name, its console kept
        assert not out.exists()
        assert (out.with_name("run.partial") / "console.log").stat().st_size > 0
    finally:
        if cli.poll() is None:
            cli.kill()
        for pid in qemu_processes(str(out)):
            os.kill(pid, signal.SIGKILL)


def test_cli_exits_non_zero_for_a_failed_run(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    out = tmp_path / "run"
    result = subprocess.run(cli_cmd(out, "--mix-limit", "1"), capture_output=True, text=True)
    assert result.returncode == 1
    assert "ampkit-probe#0 timeout" in result.stdout
    assert (out / "console.log").is_file()


def test_runaway_console_is_capped(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ampkit.engines.qemu.MAX_CONSOLE_BYTES", 4000)
    outcome = run_probe(tmp_path / "run", kernel_build, initramfs, "sysinfo")
    assert (tmp_path / "run" / "console.log").stat().st_size == 4000
    assert outcome.status.startswith("failed: console output over the size limit was dropped")
