"""Test tiers (unit, kernel, qemu, slurm, gem5) follow the directory a test lives in."""

import signal
from pathlib import Path

import pytest

from ampkit import build, kernel
from ampkit.paths import build_dir

TIERS = ("unit", "kernel", "qemu", "slurm", "gem5")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = Path(str(item.fspath)).parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(scope="session")
def host_bin() -> Path:
    """The guest programs built for this machine, to test them without a guest."""
    build.scons("host")
    return build_dir() / "host" / "bin"


@pytest.fixture(scope="session")
def kernel_build() -> kernel.KernelBuild:
    """The default kernel, built if its inputs changed (cached by their hash)."""
    build.scons("kernel")
    found = kernel.find_build("default")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def initramfs(kernel_build: kernel.KernelBuild) -> Path:
    build.scons(build.INITRAMFS)
    return build.initramfs_image()


# A shell starts background jobs with SIGINT ignored, and children inherit
# that: Python would then install no KeyboardInterrupt handler in the ampkit
# processes the tests interrupt, and those tests would check how the suite
# was started, not ampkit. Ctrl-C goes back to Python's default here, which
# an exec'd child sees as SIGINT's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def qemu_processes(marker: str) -> list[int]:
    """PIDs of QEMU processes whose command line mentions marker (a run's path)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"qemu-system-aarch64" in argv[0] and any(marker.encode() in a for a in argv):
            pids.append(int(proc.name))
    return pids
