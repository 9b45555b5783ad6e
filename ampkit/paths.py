"""Where the kit's inputs and outputs live."""

import os
from pathlib import Path

#: The checkout. The kit runs from its checkout: kernel patches, workloads,
#: mixes and configs are read from here, not from an installed copy.
REPO_ROOT = Path(__file__).resolve().parent.parent

KERNEL_PATCHES = REPO_ROOT / "kernel-patches"
WORKLOADS = REPO_ROOT / "workloads"
MIXES = WORKLOADS / "mixes"
CONFIGS = REPO_ROOT / "configs"
DISK_IMAGES = REPO_ROOT / "disk-images"


def _is_checkout(directory: Path) -> bool:
    """Whether ``directory`` is a checkout of the kit: its kernel patches and
    the build that reads them."""
    return (directory / "kernel-patches").is_dir() and (directory / "SConstruct").is_file()


def in_checkout() -> bool:
    """Whether the package runs from its repository's checkout (an editable
    install, as 'make setup' makes), where its inputs are."""
    return _is_checkout(REPO_ROOT)


def checkout_holding(path: Path) -> Path | None:
    """The ampkit checkout a file lies in (its nearest parent that is one),
    or None when it lies in none."""
    return next((p for p in path.resolve().parents if _is_checkout(p)), None)


def cache_dir() -> Path:
    """Kernel source trees and kernel builds: large, shared by every checkout.

    ``AMPKIT_CACHE`` overrides; otherwise ``$XDG_CACHE_HOME/ampkit`` or
    ``~/.cache/ampkit``. Outside the checkout, so a fresh clone (CI) reuses
    kernels already built from identical inputs.
    """
    env = os.environ.get("AMPKIT_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ampkit"


def build_dir() -> Path:
    """Small, fast-to-rebuild outputs: workload binaries, initramfs, device trees."""
    env = os.environ.get("AMPKIT_BUILD")
    return Path(env) if env else REPO_ROOT / "build"
