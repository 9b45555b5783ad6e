"""Fixtures the QEMU tests share."""

import pytest

from ampkit import build, kernel


def _variant(name: str) -> kernel.KernelBuild:
    """A kernel variant, built if its inputs changed (cached by their hash)."""
    build.scons(build.kernel_target(name))
    found = kernel.find_build(name)
    assert found is not None
    return found


@pytest.fixture(scope="session")
def debug_build() -> kernel.KernelBuild:
    """The debug variant (lockdep, atomic-sleep checks, KASAN)."""
    return _variant("debug")


@pytest.fixture(scope="session")
def hz1000_build() -> kernel.KernelBuild:
    """The default variant ticking at 1000 Hz (time-scaled runs)."""
    return _variant("hz1000")
