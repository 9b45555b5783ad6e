"""PARSEC 3.0 and SPLASH-2x: cross-build from the user's archives, pack into an ext4 disk.

The kit ships no PARSEC code or inputs. Given the official archives (the
core, and the simulation inputs; SPLASH-2x comes inside as ``ext/splash2x``)
as paths, URLs or unpacked trees, ``build_suite`` does what parsecmgmt does
for an in-place build, with the kit's cross toolchain:

1. copies each wanted package (``pkgs/{apps,kernels}/<name>`` or
   ``ext/splash2x/{apps,kernels}/<name>``) out of the sources into a
   staging tree (the sources are never written);
2. reads the package's ``parsec/gcc-hooks.bldconf`` with bash, as
   parsecmgmt would: its ``build_env`` (e.g. ``version=pthreads``), that
   the build is in place, and its dependencies: ``hooks`` is the kit's own
   library (workloads/parsec/ampkit_hooks.c, compiled against the suite's
   hooks.h: the region of interest becomes a gem5 work item with the
   application's id and is reported to the runner), ``parmacs`` is
   installed from the suite; anything else is refused by name;
3. runs the package's own Makefile with the suite's gcc flags, ``-static``
   and the aarch64 cross compilers, installs into ``inst/<PLATFORM>``, and
   checks every installed program is a static aarch64 executable;
4. unpacks ``inputs/input_<set>.tar`` into ``run/<set>`` for each input
   set, and reads ``parsec/<set>.runconf`` for the program and arguments;
5. packs the installed programs, the inputs, busybox (``run.sh`` of
   SPLASH-2x is a shell script) and a manifest into an ext4 image built
   without root (``mkfs.ext4 -d``), which the engines attach as a virtio
   disk and the runner mounts read-only at ``/parsec``.

A mix names such a program ``parsec.<name>`` or ``splash2x.<name>`` with an
``input`` set instead of a size.
"""

import hashlib
import json
import os
import shlex
import shutil
import struct
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit import disk, hostdeps, mix, process
from ampkit.errors import AmpkitError, BuildFailed
from ampkit.hashing import sha256_file, sha256_json, write_json
from ampkit.paths import WORKLOADS, build_dir, cache_dir

#: Where each suite (mix.SUITES) keeps its packages, inside a PARSEC 3.0 tree.
PACKAGE_DIRS = {
    "parsec": ("pkgs/apps", "pkgs/kernels"),
    "splash2x": ("ext/splash2x/apps", "ext/splash2x/kernels"),
}
#: The input sets PARSEC defines, smallest first (the mix files check the same list).
INPUT_SETS = mix.INPUT_SETS
DEFAULT_INPUTS = ("simsmall", "simmedium")
#: The in-place pthreads builds of the suite that need no library beyond
#: hooks and parmacs, each built and run on QEMU from a PARSEC 3.0 tree
#: (README, "PARSEC and SPLASH-2x"). Not here: bodytrack, dedup, facesim,
#: ferret, freqmine, raytrace, vips and x264 use configure or external
#: libraries; canneal's atomics have no aarch64 port; SPLASH-2x volrend
#: links libtiff; SPLASH-2x ocean_ncp builds but died of SIGSEGV at the test
#: input on QEMU, even with one thread; SPLASH-2x cholesky and raytrace
#: should build like their siblings but have not been tried (ask for any of
#: them with --benchmarks).
DEFAULT_BENCHMARKS = (
    "parsec.blackscholes",
    "parsec.fluidanimate",
    "parsec.streamcluster",
    "parsec.swaptions",
    "splash2x.barnes",
    "splash2x.fft",
    "splash2x.fmm",
    "splash2x.lu_cb",
    "splash2x.lu_ncb",
    "splash2x.ocean_cp",
    "splash2x.radiosity",
    "splash2x.radix",
    "splash2x.water_nsquared",
    "splash2x.water_spatial",
)
#: PARSECPLAT of the kit's builds: what ``inst/`` is named after.
PLATFORM = "aarch64-linux.ampkit"
#: Where the runner mounts the disk in the guest.
MOUNT = "/parsec"
#: Stands for the thread count in arguments until a run fills it in.
NTHREADS = "@NTHREADS@"
HOOKS_SOURCE = WORKLOADS / "parsec" / "ampkit_hooks.c"
M5OPS_HEADER = WORKLOADS / "common" / "m5ops.h"
CROSS = "aarch64-linux-gnu-"
#: The suite's own gcc configuration (config/gcc.bldconf), plus -static.
OPT_FLAGS = "-O3 -g -funroll-loops -fprefetch-loop-arrays"
CXX_EXTRA = "-fpermissive -fno-exceptions"
#: What run.sh of SPLASH-2x needs from busybox, as links in the disk's /bin.
SHELL_APPLETS = (
    "sh", "cat", "sed", "echo", "head", "tail", "ls", "cp", "mv", "rm", "mkdir",
    "test", "[", "printf", "expr", "awk", "grep", "tr", "cut", "wc", "dirname",
    "basename", "env", "true", "false", "sleep",
)  # fmt: skip
#: The libraries the recipe provides to packages that depend on them.
KNOWN_DEPS = ("hooks", "parmacs")


# --- sources -------------------------------------------------------------


def _is_url(source: str) -> bool:
    return urllib.parse.urlparse(source).scheme in ("http", "https", "file", "ftp")


def _download(url: str) -> Path:
    """The archive at ``url``, downloaded once into the cache (named by the URL)."""
    root = cache_dir() / "parsec" / "downloads"
    root.mkdir(parents=True, exist_ok=True)
    name = Path(urllib.parse.urlparse(url).path).name or "archive"
    dest = root / f"{hashlib.sha256(url.encode()).hexdigest()[:16]}-{name}"
    if dest.is_file():
        return dest
    partial = dest.with_name(dest.name + ".partial")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            shutil.copyfileobj(response, out, 1 << 20)
    except (OSError, ValueError) as e:
        partial.unlink(missing_ok=True)
        raise AmpkitError(
            f"cannot download {url}: {e}", "check the URL, or download it and pass the path"
        ) from e
    partial.rename(dest)
    return dest


@dataclass(frozen=True)
class Source:
    """One thing the user gave: an unpacked tree, or an archive (path or downloaded URL)."""

    given: str
    path: Path
    digest: str  # archive: its sha256; tree: "tree:" + its path (not hashed: too large)

    @property
    def is_tree(self) -> bool:
        return self.path.is_dir()


def resolve_sources(given: Sequence[str]) -> list[Source]:
    if not given:
        raise AmpkitError(
            "no PARSEC source given",
            "pass the PARSEC 3.0 archives (parsec-3.0-core.tar.gz and "
            "parsec-3.0-input-sim.tar.gz, or parsec-3.0.tar.gz) as paths or URLs, or an "
            "unpacked tree",
        )
    sources = []
    for g in given:
        path = _download(g) if _is_url(g) else Path(g).expanduser()
        if path.is_dir():
            if not _tree_roots(path):
                raise AmpkitError(
                    f"{g} is a directory but not a PARSEC tree (no pkgs/ or ext/splash2x/ in it)"
                )
            sources.append(Source(g, path.resolve(), f"tree:{path.resolve()}"))
        elif path.is_file():
            sources.append(Source(g, path.resolve(), sha256_file(path)))
        else:
            raise AmpkitError(f"PARSEC source {g} does not exist", "give a path, a URL or a tree")
    return sources


def _tree_roots(path: Path) -> list[Path]:
    """The PARSEC roots in ``path``: itself, or its top-level directories (parsec-3.0/)."""
    candidates = [path, *sorted(p for p in path.iterdir() if p.is_dir())]
    return [c for c in candidates if (c / "pkgs").is_dir() or (c / "ext" / "splash2x").is_dir()]


def _unpack(source: Source, patterns: Iterable[str]) -> Path | None:
    """The parts of an archive matching ``patterns``, unpacked once into the cache."""
    pats = sorted(set(patterns))
    key = sha256_json({"archive": source.digest, "patterns": pats})[:20]
    dest = cache_dir() / "parsec" / "unpacked" / key
    done = dest / ".ampkit-unpacked"
    if not done.is_file():
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        tar = hostdeps.require_program("tar")
        # GNU tar exits 2 when a pattern matched nothing: an archive may well
        # hold only some of the packages (the inputs archive has no sources).
        result = subprocess.run(
            [tar, "-xf", str(source.path), "-C", str(dest), "--no-same-owner",
             "--no-same-permissions", "--wildcards", *pats],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        problems = [
            line
            for line in result.stderr.splitlines()
            if "Not found in archive" not in line and "Exiting with failure status" not in line
        ]
        if result.returncode != 0 and (result.returncode != 2 or problems):
            raise AmpkitError(f"cannot unpack {source.given}: {result.stderr.strip()[-400:]}")
        done.write_text("")
    roots = _tree_roots(dest)
    return roots[0] if roots else None


# --- the staging tree ---------------------------------------------------------


def package_path(suite: str, name: str, roots: Sequence[Path]) -> str:
    """Where ``suite.name`` lives in a PARSEC tree (relative), found in any root."""
    for base in PACKAGE_DIRS[suite]:
        rel = f"{base}/{name}"
        if any((r / rel).is_dir() for r in roots):
            return rel
    raise AmpkitError(
        f"{suite}.{name} is in none of the PARSEC sources given",
        f"it is looked for in {' and '.join(f'{b}/{name}' for b in PACKAGE_DIRS[suite])}",
    )


def _stage(sources: Sequence[Source], benchmarks: Sequence[str], staging: Path) -> dict[str, str]:
    """Copy the wanted packages and the libraries out of every source; package paths back."""
    patterns = ["*/pkgs/libs/hooks/*", "*/pkgs/libs/parmacs/*", "*/version"]
    parsed = []
    for b in benchmarks:
        split = mix.suite_program(b)
        if split is None:
            raise AmpkitError(
                f"'{b}' is not a suite program", "name them parsec.<name> or splash2x.<name>"
            )
        parsed.append(split)
        patterns += [f"*/{base}/{split[1]}/*" for base in PACKAGE_DIRS[split[0]]]
    roots: list[Path] = []
    for s in sources:
        if s.is_tree:
            roots += _tree_roots(s.path)
        else:
            root = _unpack(s, patterns)
            if root is not None:
                roots.append(root)
    for lib in ("hooks", "parmacs"):
        if not any((r / "pkgs" / "libs" / lib).is_dir() for r in roots):
            raise AmpkitError(
                f"the PARSEC sources have no pkgs/libs/{lib}",
                "pass the PARSEC 3.0 core archive (parsec-3.0-core.tar.gz)",
            )
    paths = {}
    for suite, name in parsed:
        paths[f"{suite}.{name}"] = package_path(suite, name, roots)
    rels = ["pkgs/libs/hooks", "pkgs/libs/parmacs", *paths.values()]
    for root in roots:
        for rel in rels:
            if (root / rel).is_dir():
                shutil.copytree(root / rel, staging / rel, symlinks=True, dirs_exist_ok=True)
        if (root / "version").is_file() and not (staging / "version").exists():
            shutil.copy2(root / "version", staging / "version")
    return paths


# --- the build ------------------------------------------------------------------


def _shell_vars(staging: Path, conf: Path, names: Sequence[str]) -> list[str]:
    """Variables a PARSEC configuration file sets, read with bash as parsecmgmt does."""
    bash = hostdeps.require_program("bash")
    script = 'PARSECDIR="$1"; NTHREADS="$2"; source "$3" || exit 1; shift 3; '
    script += 'for v in "$@"; do printf "%s\\0" "${!v}"; done'
    result = subprocess.run(
        [bash, "-c", script, "bash", str(staging), NTHREADS, str(conf), *names],
        capture_output=True, text=True, check=False, cwd=staging,
    )  # fmt: skip
    if result.returncode != 0:
        raise AmpkitError(f"cannot read {conf}: {result.stderr.strip()[-300:]}")
    values = result.stdout.split("\0")[: len(names)]
    return values + [""] * (len(names) - len(values))


@dataclass(frozen=True)
class Toolchain:
    cc: str
    cxx: str
    version: str


def toolchain() -> Toolchain:
    cc = hostdeps.require_program(CROSS + "gcc")
    cxx = hostdeps.require_program(CROSS + "g++")
    hostdeps.require_program("m4")
    hostdeps.require_program("make")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, check=True)
    return Toolchain(cc, cxx, version.stdout.splitlines()[0])


def _build_env(staging: Path, tc: Toolchain) -> dict[str, str]:
    hooks = staging / "pkgs" / "libs" / "hooks" / "inst" / PLATFORM
    version = ""
    if (staging / "version").is_file():
        version = f" -DPARSEC_VERSION={(staging / 'version').read_text().strip()}"
    common = f"{OPT_FLAGS} -static -DENABLE_PARSEC_HOOKS -I{hooks / 'include'}{version}"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(
        {
            "PARSECDIR": str(staging),
            "PARSECPLAT": PLATFORM,
            "CC": tc.cc,
            "CXX": tc.cxx,
            "CPP": f"{tc.cc} -E",
            "LD": CROSS + "ld",
            "AS": CROSS + "as",
            "AR": CROSS + "ar",
            "RANLIB": CROSS + "ranlib",
            "STRIP": CROSS + "strip",
            "M4": "m4",
            "MAKE": "make",
            "CFLAGS": common,
            "CXXFLAGS": f"{common} {CXX_EXTRA}",
            "CPPFLAGS": "",
            "CXXCPPFLAGS": "",
            "LDFLAGS": f"-static -L{hooks / 'lib'}",
            "LIBS": "-lhooks",
            "EXTRA_LIBS": "",
            "PARMACS_MACRO_FILE": "pthreads",
        }
    )
    return env


def _run_logged(cmd: list[str], cwd: Path, env: dict[str, str], log: Path, what: str) -> None:
    with log.open("a") as out:
        out.write(f"$ (cd {cwd} && {shlex.join(cmd)})\n")
        out.flush()
        # supervised: a CLI killed mid-build takes the build with it
        code = process.run_to_end(process.start(cmd, stdout=out, cwd=cwd, env=env))
    if code != 0:
        tail = log.read_text(errors="replace").splitlines()[-12:]
        raise BuildFailed(
            f"{what} failed (exit {code}); the end of {log}:\n  " + "\n  ".join(tail),
            "the whole log is kept there",
        )


def _build_hooks(staging: Path, tc: Toolchain, log: Path) -> None:
    """The kit's hooks library, against the suite's own hooks.h."""
    src = staging / "pkgs" / "libs" / "hooks" / "src" / "include" / "hooks.h"
    if not src.is_file():
        raise AmpkitError(f"the PARSEC sources have no {src.relative_to(staging)}")
    inst = staging / "pkgs" / "libs" / "hooks" / "inst" / PLATFORM
    (inst / "include").mkdir(parents=True, exist_ok=True)
    (inst / "lib").mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, inst / "include" / "hooks.h")
    obj = inst / "lib" / "ampkit_hooks.o"
    env = dict(os.environ)
    _run_logged(
        [tc.cc, "-O2", "-Wall", "-Wextra", "-Werror", "-c", str(HOOKS_SOURCE),
         f"-I{inst / 'include'}", f"-I{M5OPS_HEADER.parent}", "-o", str(obj)],
        staging, env, log, "the kit's hooks library",
    )  # fmt: skip
    _run_logged(
        [CROSS + "ar", "rcs", str(inst / "lib" / "libhooks.a"), str(obj)],
        staging, env, log, "the kit's hooks library",
    )  # fmt: skip


def _install_parmacs(staging: Path, env: dict[str, str], log: Path) -> None:
    src = staging / "pkgs" / "libs" / "parmacs" / "src"
    _run_logged(["make", "install"], src, env, log, "parmacs (the SPLASH-2x macros)")


def check_static_aarch64(path: Path) -> str | None:
    """None if ``path`` is a static aarch64 ELF executable; else what it is instead."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        return "not an ELF file"
    if data[4] != 2 or data[5] != 1:
        return "not a 64-bit little-endian ELF"
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != 183:  # EM_AARCH64
        return f"built for ELF machine {machine}, not aarch64 (183)"
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        (p_type,) = struct.unpack_from("<I", data, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP: needs a dynamic loader the guest does not have
            return "dynamically linked"
    return None


@dataclass(frozen=True)
class Built:
    program: str
    package: str
    run_exec: dict[str, str]  # input set -> run_exec of its runconf
    run_args: dict[str, list[str]]
    version: str


def _build_package(
    program: str, rel: str, staging: Path, *, env: dict[str, str], inputs: Sequence[str], logs: Path
) -> Built:
    pkg = staging / rel
    log = logs / f"{program}.log"
    log.unlink(missing_ok=True)
    conf = pkg / "parsec" / "gcc-hooks.bldconf"
    if not conf.is_file():
        raise AmpkitError(f"{program}: {rel}/parsec/gcc-hooks.bldconf is missing")
    deps, build_env, inplace, build_conf = _shell_vars(
        staging, conf, ["build_deps", "build_env", "build_inplace", "build_conf"]
    )
    unknown = [d for d in deps.split() if d not in KNOWN_DEPS]
    if unknown:
        raise AmpkitError(
            f"{program} needs {', '.join(unknown)}, which the kit's recipe does not build",
            f"the recipe builds {', '.join(DEFAULT_BENCHMARKS)}",
        )
    if inplace.strip() != "TRUE":
        raise AmpkitError(
            f"{program} is built with configure ({build_conf or 'no build_inplace'}), "
            "which the kit's recipe does not do",
            f"the recipe builds {', '.join(DEFAULT_BENCHMARKS)}",
        )
    make_env = dict(env)
    for word in shlex.split(build_env):
        key, eq, value = word.partition("=")
        if eq:
            make_env[key] = value
    src = pkg / "src"
    _run_logged(["make"], src, make_env, log, f"building {program}")
    _run_logged(["make", "install"], src, make_env, log, f"installing {program}")
    bindir = pkg / "inst" / PLATFORM / "bin"
    programs = sorted(p for p in bindir.iterdir() if p.is_file()) if bindir.is_dir() else []
    if not programs:
        raise AmpkitError(f"{program}: make install left nothing in {bindir}", f"see {log}")
    for p in programs:
        if p.suffix == ".sh":
            continue
        problem = check_static_aarch64(p)
        if problem:
            raise AmpkitError(f"{program}: {p.name} is {problem}", f"see {log}")
    run_exec, run_args = {}, {}
    for s in inputs:
        runconf = pkg / "parsec" / f"{s}.runconf"
        if not runconf.is_file():
            raise AmpkitError(f"{program} has no {rel}/parsec/{s}.runconf")
        exec_, args = _shell_vars(staging, runconf, ["run_exec", "run_args"])
        if not (pkg / "inst" / PLATFORM / exec_).is_file():
            raise AmpkitError(f"{program}: {s}.runconf runs {exec_}, which was not installed")
        run_exec[s], run_args[s] = exec_, shlex.split(args)
        tar = pkg / "inputs" / f"input_{s}.tar"
        dest = pkg / "run" / s
        dest.mkdir(parents=True, exist_ok=True)
        if tar.is_file():
            subprocess.run(
                [hostdeps.require_program("tar"), "-xf", str(tar), "-C", str(dest),
                 "--no-same-owner"],
                check=True,
            )  # fmt: skip
        elif (pkg / "inputs").is_dir():
            raise AmpkitError(
                f"{program} has no {rel}/inputs/input_{s}.tar",
                "the simulation inputs come in parsec-3.0-input-sim.tar.gz: pass it too",
            )
    version = (pkg / "version").read_text().strip() if (pkg / "version").is_file() else ""
    return Built(program, rel, run_exec, run_args, version)


# --- the image and its manifest ---------------------------------------------------------


def suite_dir() -> Path:
    return build_dir() / "parsec"


def manifest_path() -> Path:
    return suite_dir() / "parsec.json"


def recipe_digest() -> str:
    """What the build depends on in the kit itself."""
    parts = [Path(__file__), HOOKS_SOURCE, M5OPS_HEADER]
    return sha256_json({p.name: sha256_file(p) for p in parts})


def build_suite(
    given: Sequence[str],
    benchmarks: Sequence[str] = DEFAULT_BENCHMARKS,
    inputs: Sequence[str] = DEFAULT_INPUTS,
    out_dir: Path | None = None,
) -> Path:
    """Build the benchmarks and their inputs into an ext4 image; the manifest's path back."""
    for s in inputs:
        if s not in INPUT_SETS:
            raise AmpkitError(f"unknown input set '{s}'", f"valid: {', '.join(INPUT_SETS)}")
    if not benchmarks:
        raise AmpkitError("no benchmark to build")
    sources = resolve_sources(given)
    tc = toolchain()
    out = out_dir or suite_dir()
    key = sha256_json(
        {
            "sources": [s.digest for s in sources],
            "benchmarks": sorted(benchmarks),
            "inputs": sorted(inputs),
            "recipe": recipe_digest(),
            "compiler": tc.version,
        }
    )
    manifest_file = out / "parsec.json"
    if manifest_file.is_file() and not any(s.is_tree for s in sources):
        old = json.loads(manifest_file.read_text())
        image = out / str(old.get("image", ""))
        if old.get("key") == key and image.is_file() and sha256_file(image) == old["image_sha256"]:
            return manifest_file
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ampkit-parsec-") as tmp:
        staging = Path(tmp) / "parsec"
        staging.mkdir()
        paths = _stage(sources, benchmarks, staging)
        env = _build_env(staging, tc)
        _build_hooks(staging, tc, logs / "hooks.log")
        _install_parmacs(staging, env, logs / "parmacs.log")
        built = [
            _build_package(program, rel, staging, env=env, inputs=inputs, logs=logs)
            for program, rel in paths.items()
        ]
        root = Path(tmp) / "image"
        manifest = _pack_root(root, staging, built, sources=sources, key=key, tc=tc)
        image_name = "parsec.ext4"
        disk.make_ext4(root, out / image_name, label="ampkit-parsec")
        manifest["image"] = image_name
        manifest["image_sha256"] = sha256_file(out / image_name)
    write_json(manifest_file, manifest)
    return manifest_file


def _pack_root(
    root: Path,
    staging: Path,
    built: Sequence[Built],
    *,
    sources: Sequence[Source],
    key: str,
    tc: Toolchain,
) -> dict[str, Any]:
    (root / "bin").mkdir(parents=True)
    shutil.copy2(disk.busybox(), root / "bin" / "busybox")
    (root / "bin" / "busybox").chmod(0o755)
    for applet in SHELL_APPLETS:
        (root / "bin" / applet).symlink_to("busybox")
    benchmarks: dict[str, Any] = {}
    for b in built:
        pkg = staging / b.package
        shutil.copytree(pkg / "inst" / PLATFORM, root / b.package / "inst" / PLATFORM)
        shutil.copytree(pkg / "run", root / b.package / "run")
        sets = {}
        for s, run_exec in b.run_exec.items():
            target = f"{MOUNT}/{b.package}/inst/{PLATFORM}/{run_exec}"
            # run.sh and other scripts through the disk's busybox: the
            # initramfs has no /bin/sh for a #! line.
            argv = [f"{MOUNT}/bin/sh", target] if run_exec.endswith(".sh") else [target]
            sets[s] = {"argv": [*argv, *b.run_args[s]], "dir": f"{MOUNT}/{b.package}/run/{s}"}
        benchmarks[b.program] = {"package": b.package, "version": b.version, "inputs": sets}
    manifest: dict[str, Any] = {
        "kind": "ampkit-parsec",
        "version": 1,
        "key": key,
        "platform": PLATFORM,
        "mount": MOUNT,
        "sources": [{"given": s.given, "digest": s.digest} for s in sources],
        "compiler": tc.version,
        "recipe_sha256": recipe_digest(),
        "benchmarks": benchmarks,
        "env": {"PARSECDIR": MOUNT, "PARSECPLAT": PLATFORM, "PATH": f"{MOUNT}/bin:/bin"},
    }
    if any(b.package.startswith("ext/splash2x/") for b in built):
        # run.sh of lu_cb and lu_ncb in PARSEC 3.0 looks for its program
        # under ext/splash2/, the suite's old name
        (root / "ext" / "splash2").symlink_to("splash2x")
    (root / "ampkit-parsec.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


@dataclass(frozen=True)
class SuiteImage:
    """A built image: what the runner needs to run its programs."""

    manifest: dict[str, Any]
    image: Path
    sha256: str

    @property
    def mount(self) -> str:
        return str(self.manifest["mount"])

    @property
    def env(self) -> dict[str, str]:
        """What run.sh of SPLASH-2x expects (PARSECDIR, PARSECPLAT) and a PATH to busybox."""
        return {str(k): str(v) for k, v in self.manifest["env"].items()}

    def app_argv(self, program: str, input_set: str, threads: int) -> tuple[list[str], str]:
        """The argv and the input directory of ``program`` on ``input_set``."""
        bench = self.manifest["benchmarks"].get(program)
        if bench is None:
            raise AmpkitError(
                f"{program} is not in the PARSEC image {self.image}",
                f"it has {', '.join(sorted(self.manifest['benchmarks']))}; rebuild with "
                f"'ampkit parsec build SOURCES --benchmarks ...,{program}'",
            )
        entry = bench["inputs"].get(input_set)
        if entry is None:
            raise AmpkitError(
                f"{program} was built without the {input_set} inputs",
                f"it has {', '.join(sorted(bench['inputs']))}; rebuild with --inputs",
            )
        argv = [a.replace(NTHREADS, str(threads)) for a in entry["argv"]]
        return argv, str(entry["dir"])


def load_image(manifest_file: Path | None = None) -> SuiteImage:
    path = manifest_file or manifest_path()
    if not path.is_file():
        raise AmpkitError(
            "the mix runs PARSEC or SPLASH-2x programs but no PARSEC image is built",
            "run 'ampkit parsec build ARCHIVE...' first (see README, 'PARSEC and SPLASH-2x')",
        )
    manifest = json.loads(path.read_text())
    image = path.parent / str(manifest["image"])
    if not image.is_file():
        raise AmpkitError(f"{image} is missing", "run 'ampkit parsec build' again")
    return SuiteImage(manifest, image, str(manifest["image_sha256"]))
