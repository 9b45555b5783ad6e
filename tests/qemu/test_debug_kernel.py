"""The debug variant (lockdep, atomic-sleep checks, KASAN) boots and runs a mix cleanly."""

from pathlib import Path

import pytest

from ampkit import build, kernel
from ampkit.mix import load_mix

from .helpers import run_mix


@pytest.fixture(scope="module")
def debug_build() -> kernel.KernelBuild:
    build.scons(build.kernel_target("debug"))
    found = kernel.find_build("debug")
    assert found is not None
    return found


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
