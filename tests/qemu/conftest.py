"""Fixtures the QEMU tests share."""

import pytest

from ampkit import build, kernel


@pytest.fixture(scope="session")
def debug_build() -> kernel.KernelBuild:
    """The debug variant (lockdep, atomic-sleep checks, KASAN), built if its inputs changed."""
    build.scons(build.kernel_target("debug"))
    found = kernel.find_build("debug")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def hz1000_build() -> kernel.KernelBuild:
    """The default variant ticking at 1000 Hz (time-scaled runs), built if its inputs changed."""
    build.scons(build.kernel_target("hz1000"))
    found = kernel.find_build("hz1000")
    assert found is not None
    return found
