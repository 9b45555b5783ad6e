"""The interactive shell image: an ext4 disk with the kit's programs and busybox.

The initramfs stays what runs experiments; this image is for looking
around by hand (``ampkit shell``): the synthetic suite and the kit's guest
tools in /bin, Debian's static arm64 busybox for a shell and the usual
commands, and /ampkit-shell (disk-images/shell-init) as init. It is built
without root (``mkfs.ext4 -d``) and booted as a virtio disk with
``snapshot=on``, so what a session writes never reaches the file.

busybox comes from Debian's ``busybox-static`` package for arm64, fetched
with apt-get into the cache through private package lists (the host's apt
configuration is not touched) and kept by version.
"""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from ampkit import hostdeps
from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_file
from ampkit.paths import DISK_IMAGES, cache_dir

BUSYBOX_PACKAGE = "busybox-static"
SHELL_INIT = DISK_IMAGES / "shell-init"
#: Room for the suite (a few MB of static binaries) with space to spare.
IMAGE_MB = 64


def _apt(root: Path, *args: str) -> None:
    apt = hostdeps.require_program("apt-get")
    lists = root / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    (root / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    options = [
        "-q",
        "-o",
        "APT::Architecture=arm64",
        "-o",
        "APT::Architectures::=arm64",
        "-o",
        f"Dir::State::Lists={lists}",
        "-o",
        f"Dir::Cache={root / 'cache'}",
        # the download lands in a directory the _apt user cannot enter
        "-o",
        "APT::Sandbox::User=root",
    ]
    result = subprocess.run(
        [apt, *options, *args], cwd=root, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise AmpkitError(
            f"apt-get {' '.join(args)} (arm64) failed: {result.stderr.strip()[-400:]}",
            "the shell image needs Debian's arm64 busybox-static: check the package mirror",
        )


def busybox() -> Path:
    """The static arm64 busybox, fetched once into the cache."""
    root = cache_dir() / "busybox-arm64"
    found = root / "busybox.json"
    if found.is_file():
        meta = json.loads(found.read_text())
        binary = root / str(meta["binary"])
        if binary.is_file() and sha256_file(binary) == meta["sha256"]:
            return binary
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.deb"):
        old.unlink()
    _apt(root, "update")
    _apt(root, "download", BUSYBOX_PACKAGE)
    debs = sorted(root.glob(f"{BUSYBOX_PACKAGE}_*_arm64.deb"))
    if not debs:
        raise AmpkitError(f"apt-get download {BUSYBOX_PACKAGE} left no arm64 package")
    unpacked = root / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    subprocess.run(
        [hostdeps.require_program("dpkg-deb"), "-x", str(debs[-1]), str(unpacked)], check=True
    )
    binary = unpacked / "bin" / "busybox"
    if not binary.is_file():
        raise AmpkitError(f"{debs[-1].name} holds no bin/busybox")
    meta = {
        "package": debs[-1].name,
        "deb_sha256": sha256_file(debs[-1]),
        "binary": str(binary.relative_to(root)),
        "sha256": sha256_file(binary),
    }
    found.write_text(json.dumps(meta, indent=2) + "\n")
    return binary


def build_shell_image(bin_dir: Path, programs: list[str], out: Path) -> Path:
    """The ext4 image: ``programs`` from ``bin_dir`` in /bin, busybox, the init."""
    box = busybox()
    with tempfile.TemporaryDirectory(prefix="ampkit-shell-") as tmp:
        root = Path(tmp)
        for d in ("bin", "proc", "sys", "dev", "tmp", "root"):
            (root / d).mkdir()
        (root / "tmp").chmod(0o1777)
        for name in programs:
            shutil.copy2(bin_dir / name, root / "bin" / name)
        shutil.copy2(box, root / "bin" / "busybox")
        (root / "bin" / "busybox").chmod(0o755)
        (root / "bin" / "sh").symlink_to("busybox")
        shutil.copy2(SHELL_INIT, root / "ampkit-shell")
        (root / "ampkit-shell").chmod(0o755)
        make_ext4(root, out, label="ampkit-shell", size_mb=IMAGE_MB)
    return out


def _tree_bytes(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*"))


def make_ext4(root: Path, out: Path, *, label: str, size_mb: int | None = None) -> Path:
    """An ext4 image of the directory ``root``, built without root (``mkfs.ext4 -d``).

    Sized to the tree with room for the file system's own structures when
    ``size_mb`` is not given. Written beside ``out`` and renamed, so an
    interrupted build never leaves a half image under the real name.
    """
    mkfs = hostdeps.require_program("mkfs.ext4")
    if size_mb is None:
        size_mb = 16 + _tree_bytes(root) * 5 // 4 // (1 << 20)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    result = subprocess.run(
        [mkfs, "-q", "-F", "-L", label, "-E", "root_owner=0:0", "-d", str(root), str(partial),
         f"{size_mb}M"],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise AmpkitError(f"mkfs.ext4 failed: {result.stderr.strip()}")
    partial.rename(out)
    return out
