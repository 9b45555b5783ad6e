"""The kit's kernel: Debian's Linux 6.1 source, the patch series, the config fragment.

A build is identified by the hash of everything that goes into it (the
source tarball, each patch, the fragments, the cross toolchain's version and
this recipe's version). Its outputs, the ELF ``vmlinux`` that gem5 loads,
the ``Image`` that QEMU boots, the ``.config`` and a manifest, live under
``$AMPKIT_CACHE/kernels/<variant>-<hash>/``: identical inputs are never
built twice, and a checkout that switches back to an earlier series finds
its kernel still there.

The source is unpacked once per Debian package version into one persistent
tree. Going from one series to another restores only the files the old
series touched and applies the new one, so make recompiles only what the
patches change; with ccache even a fresh checkout rebuilds quickly.
"""

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ampkit import hostdeps, process
from ampkit.errors import AmpkitError, BuildFailed, MissingDependency
from ampkit.hashing import (
    sha256_bytes,
    sha256_file,
    sha256_file_memo,
    sha256_json,
    write_json,
)
from ampkit.paths import KERNEL_PATCHES, REPO_ROOT, cache_dir
from ampkit.rundir import KERNEL_BINARIES
from ampkit.timescale import timescale_of

SOURCE_PACKAGE = "linux-source-6.1"
TARBALL = "/usr/src/linux-source-6.1.tar.xz"
SERIES_DIR = KERNEL_PATCHES / "linux-6.1"
SERIES_FILE = SERIES_DIR / "series"
ARCH = "arm64"
CROSS_COMPILE = "aarch64-linux-gnu-"

#: Config fragments of each variant, applied in order on top of allnoconfig.
VARIANTS: dict[str, tuple[Path, ...]] = {
    "default": (KERNEL_PATCHES / "ampkit.fragment",),
    "debug": (KERNEL_PATCHES / "ampkit.fragment", KERNEL_PATCHES / "debug.fragment"),
    "unpatched": (KERNEL_PATCHES / "ampkit.fragment", KERNEL_PATCHES / "unpatched.fragment"),
    "hz1000": (KERNEL_PATCHES / "ampkit.fragment", KERNEL_PATCHES / "hz1000.fragment"),
}

#: Variants built from the pristine source, without the series: baselines.
PRISTINE_VARIANTS = frozenset({"unpatched"})

#: Bump when the way a kernel is built changes, so old builds are not reused.
RECIPE_VERSION = 1

#: Fixed build identity, so identical inputs give identical binaries.
_BUILD_ENV = {
    "KBUILD_BUILD_USER": "ampkit",
    "KBUILD_BUILD_HOST": "ampkit",
    "KBUILD_BUILD_VERSION": "1",
    "KBUILD_BUILD_TIMESTAMP": "Thu Jan  1 00:00:00 UTC 1970",
}

Log = Callable[[str], None]


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _run(cmd: list[str], **kw: Any) -> str:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)
    return str(out.stdout)


# --- inputs ------------------------------------------------------------------


def debian_version(package: str = SOURCE_PACKAGE) -> str:
    # without dpkg-query nothing can be said about the package: say that instead
    dpkg_query = hostdeps.require_program("dpkg-query")
    try:
        return _run([dpkg_query, "-W", "-f=${Version}", package]).strip()
    except subprocess.CalledProcessError as e:
        raise MissingDependency(
            f"the Debian package {package} is not installed",
            f"run 'make setup', or 'sudo apt-get install {package}'",
        ) from e


def read_series(series_dir: Path = SERIES_DIR) -> list[Path]:
    """The patches named in ``series``, in order; every patch file must be named."""
    series = series_dir / "series"
    if not series.is_file():
        raise AmpkitError(f"{series} is missing", "list the patches to apply, one per line")
    patches: list[Path] = []
    for lineno, line in enumerate(series.read_text().splitlines(), 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        path = series_dir / name
        if not path.is_file():
            raise AmpkitError(f"{series}:{lineno}: names {name}, which is not in {series_dir}")
        if path in patches:
            raise AmpkitError(f"{series}:{lineno}: {name} is listed twice")
        patches.append(path)
    unlisted = sorted(p.name for p in series_dir.glob("*.patch") if p not in patches)
    if unlisted:
        raise AmpkitError(
            f"{series_dir} holds patches that {series.name} does not list: {', '.join(unlisted)}",
            "add them to the series or delete them",
        )
    return patches


_DIFF_PATH = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(\S+)")
_GIT_RENAME = re.compile(r"^(?:rename|copy) (?:from|to) (\S+)")


def touched_files(patch: Path) -> set[str]:
    """Paths (relative to the tree) a patch creates, changes, renames or deletes."""
    files: set[str] = set()
    for line in patch.read_text(errors="replace").splitlines():
        m = _DIFF_PATH.match(line) or _GIT_RENAME.match(line)
        if m and m.group(1) != "/dev/null":
            files.add(m.group(1))
    return files


#: Debian packages of the cross toolchain, whose exact versions name it.
TOOLCHAIN_PACKAGES = ("gcc-12-aarch64-linux-gnu", "binutils-aarch64-linux-gnu")


def toolchain_id() -> dict[str, str]:
    """The cross toolchain: what the compiler and linker say, and their package versions."""
    gcc = hostdeps.require_program(f"{CROSS_COMPILE}gcc")
    ident = {
        "gcc": _run([gcc, "--version"]).splitlines()[0],
        "ld": _run([f"{CROSS_COMPILE}ld", "--version"]).splitlines()[0],
    }
    for package in TOOLCHAIN_PACKAGES:
        ident[package] = debian_version(package)
    return ident


@dataclass(frozen=True)
class KernelInputs:
    """Everything a kernel build depends on, and the hash that names it."""

    variant: str
    tarball: Path
    tarball_sha256: str
    debian_version: str
    patches: tuple[Path, ...]
    fragments: tuple[Path, ...]
    toolchain: tuple[tuple[str, str], ...]
    record: dict[str, Any] = field(compare=False, hash=False)

    @classmethod
    def discover(cls, variant: str = "default") -> "KernelInputs":
        if variant not in VARIANTS:
            raise AmpkitError(
                f"unknown kernel variant '{variant}'", f"valid: {', '.join(VARIANTS)}"
            )
        tarball = hostdeps.require_file(TARBALL)
        version = debian_version()
        tar_sha = sha256_file_memo(tarball, cache_dir() / "digests")
        patches = () if variant in PRISTINE_VARIANTS else tuple(read_series())
        fragments = VARIANTS[variant]
        toolchain = toolchain_id()
        record = {
            "recipe": RECIPE_VERSION,
            "variant": variant,
            "linux": {
                "package": SOURCE_PACKAGE,
                "debian_version": version,
                "tarball_sha256": tar_sha,
            },
            "series": [{"name": p.name, "sha256": sha256_file(p)} for p in patches],
            "fragments": [
                {"name": str(f.relative_to(REPO_ROOT)), "sha256": sha256_file(f)} for f in fragments
            ],
            "toolchain": toolchain,
        }
        record["series_sha256"] = sha256_json(record["series"])
        return cls(
            variant=variant,
            tarball=tarball,
            tarball_sha256=tar_sha,
            debian_version=version,
            patches=patches,
            fragments=fragments,
            toolchain=tuple(sorted(toolchain.items())),
            record=record,
        )

    @property
    def digest(self) -> str:
        return sha256_json(self.record)

    @property
    def output_dir(self) -> Path:
        return cache_dir() / "kernels" / f"{self.variant}-{self.digest[:16]}"


def unpack_source(tarball: Path, dest: Path) -> None:
    """Unpack the kernel source tarball so that its one top folder becomes dest."""
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    hostdeps.require("xz")
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(tmp)], check=True)
    tops = list(tmp.iterdir())
    if len(tops) != 1 or not (tops[0] / "Makefile").is_file():
        raise AmpkitError(f"{tarball} does not hold one kernel source tree")
    tops[0].rename(dest)
    tmp.rmdir()


@dataclass(frozen=True)
class KernelBuild:
    """A finished build: its directory holds Image, vmlinux, config, build.log, manifest.json."""

    directory: Path

    @property
    def image(self) -> Path:
        return self.directory / "Image"

    @property
    def vmlinux(self) -> Path:
        return self.directory / "vmlinux"

    @property
    def manifest(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.directory / "manifest.json").read_text())
        return data

    def is_complete(self) -> bool:
        return all((self.directory / f).is_file() for f in ("Image", "vmlinux", "manifest.json"))

    def binaries(self) -> tuple[tuple[str, str], ...]:
        """The hashes of the files a run boots, named as a run's manifest
        records them (rundir.KERNEL_BINARIES): what makes two builds the
        same kernel, whatever the digests of their inputs."""
        artifacts = self.manifest["artifacts"]
        files = ("Image", "vmlinux")
        return tuple(
            (name, str(artifacts[f]["sha256"]))
            for name, f in zip(KERNEL_BINARIES, files, strict=True)
        )

    @property
    def tick_hz(self) -> int:
        """The kernel's CONFIG_HZ, read from the configuration it was built with."""
        config = parse_config((self.directory / "config").read_text())
        try:
            return int(config["CONFIG_HZ"])
        except (KeyError, ValueError):
            raise AmpkitError(
                f"{self.directory / 'config'} has no CONFIG_HZ",
                "the build is damaged: remove its directory and build the kernel again",
            ) from None


#: The tick a variant whose fragments choose none runs at: allnoconfig's,
#: which the kit's fragment keeps (CONFIG_HZ_250).
ALLNOCONFIG_TICK_HZ = 250
_HZ_CHOICE = re.compile(r"CONFIG_HZ_([0-9]+)")


def variant_tick_hz(variant: str) -> int:
    """The tick a variant's fragments ask for (its CONFIG_HZ_<n>=y), before
    it is built: what a campaign compares with a behaviour table's setup.
    The build's own configuration says what it got (KernelBuild.tick_hz)."""
    if variant not in VARIANTS:
        raise AmpkitError(f"unknown kernel variant '{variant}'", f"valid: {', '.join(VARIANTS)}")
    tick = ALLNOCONFIG_TICK_HZ
    for fragment in VARIANTS[variant]:
        for symbol, value in parse_config(fragment.read_text()).items():
            if (m := _HZ_CHOICE.fullmatch(symbol)) and value == "y":
                tick = int(m.group(1))
    return tick


def setup_of(variant: str, cmdline: str) -> tuple[int, int]:
    """(time scale, tick) a run of ``variant`` with ``cmdline`` appended
    runs at: what a behaviour table it is sized by must have been measured at."""
    return timescale_of(cmdline), variant_tick_hz(variant)


def find_build(variant: str = "default") -> KernelBuild | None:
    build = KernelBuild(KernelInputs.discover(variant).output_dir)
    return build if build.is_complete() else None


# --- the source tree ---------------------------------------------------------


class SourceTree:
    """One unpacked, patched Debian source tree and its out-of-tree build dirs.

    ``state.json`` records which files the applied series touched, and
    pristine copies of those files are kept under ``orig/``, so that the
    next series starts from the pristine source without unpacking again.
    """

    def __init__(self, inputs: KernelInputs) -> None:
        self.inputs = inputs
        # A tree without the series is kept apart, so that building a
        # baseline never touches the files every patched build depends on.
        pristine = "-pristine" if inputs.variant in PRISTINE_VARIANTS else ""
        self.base = cache_dir() / "linux" / f"{inputs.debian_version}{pristine}"
        self.src = self.base / "src"
        self.orig = self.base / "orig"
        self.state_file = self.base / "state.json"

    def obj(self, variant: str) -> Path:
        return self.base / f"obj-{variant}"

    @contextmanager
    def locked(self, log: Log) -> Iterator[None]:
        self.base.mkdir(parents=True, exist_ok=True)
        with (self.base / "lock").open("w") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log(f"kernel: waiting for another build in {self.base}")
                fcntl.flock(f, fcntl.LOCK_EX)
            yield

    def unpack(self, log: Log) -> None:
        if self.src.is_dir():
            return
        log(f"kernel: unpacking {self.inputs.tarball} (once per Debian version)")
        unpack_source(self.inputs.tarball, self.src)
        self._save_state({"touched": [], "absent": [], "applied": []})

    def _load_state(self) -> dict[str, Any]:
        if not self.state_file.is_file():  # unpacked, then interrupted before the first save
            return {"touched": [], "absent": [], "applied": []}
        state: dict[str, Any] = json.loads(self.state_file.read_text())
        return state

    def _save_state(self, state: dict[str, Any]) -> None:
        write_json(self.state_file, state)

    def _restore(self, rel: str, absent: set[str]) -> None:
        target = self.src / rel
        if rel in absent:
            target.unlink(missing_ok=True)
        else:
            # copyfile gives the file a new mtime, so make rebuilds what
            # depends on it.
            shutil.copyfile(self.orig / rel, target)

    def apply_series(self, log: Log) -> bool:
        """Bring the tree to pristine source + the series. False if it already is."""
        wanted = [e["sha256"] for e in self.inputs.record["series"]]
        state = self._load_state()
        if state.get("applied") == wanted:
            return False
        absent = set(state.get("absent", []))
        for rel in state.get("touched", []):
            self._restore(rel, absent)

        touched: set[str] = set()
        for patch in self.inputs.patches:
            touched |= touched_files(patch)
        for rel in sorted(touched):
            backup = self.orig / rel
            if backup.exists() or rel in absent:
                continue
            if (self.src / rel).is_file():
                backup.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.src / rel, backup)
            else:
                absent.add(rel)
        self._save_state({"touched": sorted(touched), "absent": sorted(absent), "applied": None})

        hostdeps.require("patch")
        for patch in self.inputs.patches:
            log(f"kernel: applying {patch.name}")
            try:
                self._apply(patch)
            except AmpkitError:
                for rel in touched:
                    self._restore(rel, absent)
                self._save_state({"touched": [], "absent": sorted(absent), "applied": []})
                raise
        self._save_state({"touched": sorted(touched), "absent": sorted(absent), "applied": wanted})
        return True

    def _apply(self, patch: Path) -> None:
        apply_patch(self.src, patch, self.inputs.debian_version)


def apply_patch(src: Path, patch: Path, debian_version: str) -> None:
    """Apply one patch of the series to the tree at src, exactly (no fuzz)."""
    cmd = [
        "patch",
        "-p1",
        "--forward",
        "--batch",
        "--fuzz=0",
        "--no-backup-if-mismatch",
        "--reject-file=-",
        "-d",
        str(src),
        "-i",
        str(patch),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode == 0:
        return
    raise BuildFailed(
        f"{patch.name} does not apply to {SOURCE_PACKAGE} {debian_version}: "
        + describe_patch_failure(result.stdout + result.stderr),
        "refresh the patch against the Debian source (kernel-patches/README.md)",
    )


def describe_patch_failure(output: str) -> str:
    """The file and hunks that failed, from GNU patch's output."""
    current = "?"
    problems: list[str] = []
    for line in output.splitlines():
        if m := re.match(r"patching file '?([^']+?)'?$", line):
            current = m.group(1)
        elif "FAILED" in line or "previously applied" in line or "can't find file" in line:
            problems.append(f"{current}: {line.strip()}")
        elif line.startswith("patch: ****"):
            problems.append(line.removeprefix("patch: **** ").strip())
    return "; ".join(problems) or output.strip().splitlines()[-1]


# --- configuration -----------------------------------------------------------

_SET = re.compile(r"^(CONFIG_\w+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_\w+) is not set$")


def parse_config(text: str) -> dict[str, str]:
    """CONFIG_ symbols of a .config or fragment; unset symbols map to 'n'."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if m := _SET.match(line):
            values[m.group(1)] = m.group(2)
        elif m := _UNSET.match(line):
            values[m.group(1)] = "n"
    return values


def config_mismatches(requested: dict[str, str], config: dict[str, str]) -> list[str]:
    """Requested symbols that the configuration does not have as asked."""
    return [
        f"{sym}={want} was requested, the configuration has {config.get(sym, 'n')}"
        for sym, want in requested.items()
        if config.get(sym, "n") != want
    ]


# --- the build ---------------------------------------------------------------


def _ccache() -> bool:
    """ccache is used when present, unless CCACHE_DISABLE says otherwise."""
    return shutil.which("ccache") is not None and "CCACHE_DISABLE" not in os.environ


def make_cmd(src: Path, obj: Path, jobs: int, *targets: str) -> list[str]:
    cmd = [
        "make",
        "-C",
        str(src),
        f"O={obj}",
        f"ARCH={ARCH}",
        f"CROSS_COMPILE={CROSS_COMPILE}",
        f"-j{jobs}",
    ]
    if _ccache():
        cmd.append(f"CC=ccache {CROSS_COMPILE}gcc")
    return [*cmd, *targets]


_WARNING = re.compile(r"\bwarning:", re.IGNORECASE)
_STEP = re.compile(r"^\s+(CC|AS|LD|AR|HOSTCC)\s")


def run_logged(cmd: list[str], log_file: Path, log: Log) -> list[str]:
    """Run make, streaming its output to log_file; return the warning lines."""
    env = {**os.environ, **_BUILD_ENV}
    warnings: list[str] = []
    steps = 0
    last_report = time.monotonic()
    with log_file.open("a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        # supervised: a CLI killed mid-build takes make and its compilers with it
        proc = process.start(cmd, stdout=subprocess.PIPE, env=env)
        try:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode(errors="replace")
                out.write(line)
                if _WARNING.search(line):
                    warnings.append(line.rstrip())
                if _STEP.match(line):
                    steps += 1
                    if time.monotonic() - last_report > 30:
                        log(f"kernel: {steps} build steps so far ({line.strip()})")
                        last_report = time.monotonic()
        except BaseException:
            process.kill_session(proc)  # Ctrl-C, or an error while reading: make goes too
            raise
        code = process.run_to_end(proc)
    if code != 0:
        tail = log_file.read_text(errors="replace").splitlines()[-15:]
        raise BuildFailed(
            f"kernel build step failed (make exited {code}); last lines:\n    "
            + "\n    ".join(tail),
            f"the full log is {log_file}",
        )
    return warnings


def build(inputs: KernelInputs, jobs: int | None = None, log: Log = say) -> KernelBuild:
    """Build the kernel for these inputs, unless a build of them already exists."""
    result = KernelBuild(inputs.output_dir)
    if result.is_complete():
        return result
    hostdeps.require("make", "gcc", "flex", "bison", "bc", "perl", f"{CROSS_COMPILE}gcc")
    jobs = jobs or os.cpu_count() or 1
    tree = SourceTree(inputs)
    with tree.locked(log):
        if result.is_complete():  # built by whoever held the lock
            return result
        started = time.time()
        tree.unpack(log)
        tree.apply_series(log)

        stage = result.directory.with_name(result.directory.name + ".partial")
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        log_file = stage / "build.log"
        obj = tree.obj(inputs.variant)
        obj.mkdir(parents=True, exist_ok=True)

        fragment = "".join(f.read_text() for f in inputs.fragments)
        (obj / "ampkit.fragment").write_text(fragment)
        log(
            f"kernel: configuring {inputs.variant} (allnoconfig + {len(inputs.fragments)} "
            f"fragment(s))"
        )
        warnings = run_logged(
            [
                *make_cmd(tree.src, obj, 1, "allnoconfig"),
                f"KCONFIG_ALLCONFIG={obj / 'ampkit.fragment'}",
            ],
            log_file,
            log,
        )
        config_text = (obj / ".config").read_text()
        bad = config_mismatches(parse_config(fragment), parse_config(config_text))
        if bad:
            raise BuildFailed(
                "the kernel configuration does not honour the fragments:\n    "
                + "\n    ".join(bad),
                "a requested symbol lacks a dependency; see " + str(log_file),
            )

        log(f"kernel: building {inputs.variant} with make -j{jobs}, log in {log_file}")
        warnings += run_logged(make_cmd(tree.src, obj, jobs, "Image"), log_file, log)
        kernelversion = _run(make_cmd(tree.src, obj, 1, "-s", "kernelversion")).strip()

        shutil.copyfile(obj / "arch" / ARCH / "boot" / "Image", stage / "Image")
        shutil.copyfile(obj / "vmlinux", stage / "vmlinux")
        (stage / "config").write_text(config_text)
        manifest = {
            **inputs.record,
            "kind": "ampkit-kernel",
            "digest": inputs.digest,
            "kernelversion": kernelversion,
            "artifacts": {
                name: {"sha256": sha256_file(stage / name), "bytes": (stage / name).stat().st_size}
                for name in ("Image", "vmlinux", "config")
            },
            "build": {
                "seconds": round(time.time() - started, 1),
                "jobs": jobs,
                "ccache": _ccache(),
                "warnings": warnings,
                "config_sha256": sha256_bytes(config_text.encode()),
            },
        }
        write_json(stage / "manifest.json", manifest)
        shutil.rmtree(result.directory, ignore_errors=True)
        stage.rename(result.directory)
        log(f"kernel: built {result.directory} in {manifest['build']['seconds']} s")
    return result
