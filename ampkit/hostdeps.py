"""Host programs and files the kit needs, and the Debian packages that provide them.

``make setup`` (setup/install.sh) installs everything in
``setup/debian-packages.txt``. The checks here turn a missing piece into an
error that names the package, for users who run the CLI without setup.
"""

import shutil
from pathlib import Path

from ampkit.errors import MissingDependency
from ampkit.paths import REPO_ROOT

PACKAGE_LIST = REPO_ROOT / "setup" / "debian-packages.txt"

#: program -> Debian package
PROGRAMS: dict[str, str] = {
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "apt-get": "apt",
    "bc": "bc",
    "bison": "bison",
    "cpio": "cpio",
    "dpkg-deb": "dpkg",
    "dpkg-query": "dpkg",
    "dtc": "device-tree-compiler",
    "flex": "flex",
    "gcc": "gcc",
    "make": "make",
    "mkfs.ext4": "e2fsprogs",
    "patch": "patch",
    "perl": "perl",
    "qemu-system-aarch64": "qemu-system-arm",
    # the SLURM executor (a cluster's own SLURM serves as well)
    "sacct": "slurm-client",
    "sbatch": "slurm-client",
    "scontrol": "slurm-client",
    "squeue": "slurm-client",
    "setpriv": "util-linux",
    "xz": "xz-utils",
}

#: file -> Debian package
FILES: dict[str, str] = {
    "/usr/src/linux-source-6.1.tar.xz": "linux-source-6.1",
    "/usr/aarch64-linux-gnu/lib/libc.a": "libc6-dev-arm64-cross",
}


def listed_packages() -> set[str]:
    """The packages setup installs, read from setup/debian-packages.txt."""
    names = set()
    for line in PACKAGE_LIST.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.add(name)
    return names


def _missing(package: str, what: str) -> MissingDependency:
    return MissingDependency(
        f"{what} is missing (Debian package {package})",
        f"run 'make setup', or 'sudo apt-get install {package}'",
    )


def require_program(name: str) -> str:
    """Path of a host program; an error naming its package if it is absent."""
    path = shutil.which(name)
    if path is None:
        raise _missing(PROGRAMS.get(name, name), f"the program '{name}'")
    return path


def require_file(path: str, root: Path = Path("/")) -> Path:
    """A host file, under ``root`` (a sysroot or container image; the
    host by default); an error naming its package if it is absent."""
    found = root / path.lstrip("/")
    if not found.exists():
        if path in FILES:
            raise _missing(FILES[path], f"the file {found}")
        raise MissingDependency(f"the file {found} is missing")
    return found


def require(*programs: str) -> None:
    for name in programs:
        require_program(name)
