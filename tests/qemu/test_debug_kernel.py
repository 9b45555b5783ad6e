"""The debug variant (lockdep, atomic-sleep checks, KASAN) boots and runs a mix cleanly."""

from pathlib import Path

from ampkit import kernel
from ampkit.mix import load_mix

from .helpers import run_mix, run_schedtest

# debug_build: tests/qemu/conftest.py


def test_debug_variant_is_what_it_claims(debug_build: kernel.KernelBuild) -> None:
    config = kernel.parse_config((debug_build.directory / "config").read_text())
    for symbol in ("CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_ATOMIC_SLEEP", "CONFIG_KASAN"):
        assert config.get(symbol) == "y", symbol
    assert debug_build.manifest["build"]["warnings"] == []


def test_mix_on_the_debug_kernel_raises_no_complaint(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    outcome = run_mix(
        tmp_path / "run",
        debug_build,
        initramfs,
        load_mix("demo"),
        platform="2B4L",
        kernel_variant="debug",
    )
    assert outcome.ok, outcome.status
    console = (tmp_path / "run" / "console.log").read_text()
    assert "KernelAddressSanitizer initialized" in console
    assert "Lock dependency validator" in console
    assert outcome.report.kernel_problems == []


def test_policy_flips_under_load_on_the_debug_kernel(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    result = run_schedtest(
        tmp_path / "run",
        debug_build,
        initramfs,
        "stress",
        "60",
        policy="cfs",
        kernel_variant="debug",
        wall_limit_s=500,
    )
    # KASAN and lockdep slow every path down; the flips must still happen
    assert result["flips"] >= 200, result
    assert min(result["forks"], result["messages"], result["handoffs"]) > 0, result
    # back under cfs, no policy left a user thread with fewer allowed CPUs
    assert result["nr_restricted"] == 0, result


def test_colab_decisions_on_the_debug_kernel(
    tmp_path: Path, debug_build: kernel.KernelBuild, initramfs: Path
) -> None:
    """Every COLAB path (allocator, balancer veto, bias, futex charging) under lockdep and KASAN."""
    for scenario in (("mutex-bottleneck", "3"), ("placement", "3"), ("bias", "3", "1")):
        run_schedtest(
            tmp_path / scenario[0],
            debug_build,
            initramfs,
            *scenario,
            kernel_variant="debug",
            wall_limit_s=300,
        )
