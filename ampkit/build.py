"""Running the SCons build graph (SConstruct) from the CLI and the tests."""

import contextlib
import fcntl
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from ampkit.errors import BuildFailed, MissingDependency
from ampkit.paths import REPO_ROOT, build_dir

INITRAMFS = "initramfs"
SHELL_IMAGE = "shell-image"


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    """One SCons at a time in a build directory: two at once (two runs
    started together from one checkout) race on the same objects, one
    linking what the other has not written yet."""
    path = build_dir() / "scons.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def scons(*targets: str, kernel_jobs: int | None = None) -> None:
    """Bring targets up to date; a no-op when nothing they depend on changed."""
    cmd = [sys.executable, "-m", "SCons", "-C", str(REPO_ROOT), f"-j{os.cpu_count() or 1}", "-Q"]
    if kernel_jobs:
        cmd.append(f"kernel_jobs={kernel_jobs}")
    if importlib.util.find_spec("SCons") is None:
        raise MissingDependency(
            "building needs SCons, which this environment lacks",
            "run 'make setup' (the kit's environment), or pip install 'ampkit[build]'",
        )
    with build_lock():
        result = subprocess.run([*cmd, *targets])
    if result.returncode != 0:
        raise BuildFailed(f"building {' '.join(targets)} failed (see the messages above)")


def up_to_date(*targets: str) -> bool:
    """Whether building targets would do nothing (SCons's question mode, -q)."""
    cmd = [sys.executable, "-m", "SCons", "-C", str(REPO_ROOT), "-Q", "-q", *targets]
    with build_lock():
        return subprocess.run(cmd, capture_output=True).returncode == 0


def kernel_target(variant: str) -> str:
    return "kernel" if variant == "default" else f"kernel-{variant}"


def initramfs_image() -> Path:
    return build_dir() / "initramfs" / "ampkit.cpio.gz"


def shell_image() -> Path:
    return build_dir() / "disk" / "ampkit-shell.ext4"
