"""The campaign spec: one TOML file naming a matrix of runs and how to execute it.

    name = "colab-2B2L"
    engine = "qemu"
    platforms = ["2B2L", "1B3L"]
    policies = ["cfs", "colab", "wash"]
    mixes = ["sync2-contend-compute", "category:compute"]   # names, paths, categories
    repetitions = 3
    references = ["alone", "little-only"]    # added for every mix (the default)
    qemu_clock = "icount"  # host (default) | icount: guest time immune to host load
                           # | instructions: 1 ns per instruction, idle time skipped

    [limits]
    mix_s = 120          # seconds the mix may take in the guest
    run_s = 240          # the engine's wall-clock limit (default: mix_s + boot allowance)
    memory_mb = 2048     # what one run may use on the host
    cpus = 1             # host CPUs one run needs

    [executor]
    kind = "local"       # local | slurm
    jobs = 2             # local: runs at once (default: as many as CPUs and memory allow)
    partition = "amp"    # slurm: where the job array goes
    account = "proj"
    max_parallel = 16    # slurm: the array's concurrency limit (%N)
    sbatch_args = ["--qos=normal"]

Relative paths (mix files, ``speedups``, ``parsec``) are relative to the
spec's directory. Every error names the file, the line and the key.
"""

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ampkit import platform as platform_mod
from ampkit import policies, references
from ampkit.engines import DEFAULT_ENGINE, ENGINES, get_engine, qemu
from ampkit.errors import AmpkitError
from ampkit.mix import CATEGORIES, Mix, load_mix, mix_names
from ampkit.run import DEFAULT_TIMEOUT_S, default_wall_limit_s
from ampkit.rundesc import METHODS
from ampkit.tomlfile import read_toml

EXECUTORS = ("local", "slurm")
KERNEL_VARIANTS = ("default", "debug")
#: The references every report needs: slowdowns (alone) and ASP (little-only).
DEFAULT_REFERENCES = ("alone", "little-only")

_TOP_KEYS = {
    "name": "a name for the campaign (letters, digits, . _ -)",
    "description": "free text",
    "engine": f"one of {', '.join(ENGINES)}",
    "platforms": "platform names",
    "policies": "policy names",
    "mixes": "mix names, .toml paths or 'category:<name>'",
    "repetitions": "runs of each (platform, policy, mix)",
    "references": f"reference kinds: {', '.join(references.KINDS)}",
    "method": f"one of {', '.join(METHODS)}",
    "kernel": f"kernel variant: {', '.join(KERNEL_VARIANTS)}",
    "speedups": "a speedup profile (ampkit profile)",
    "parsec": "the PARSEC image manifest (ampkit parsec build)",
    "append": "extra kernel command line",
    "qemu_clock": f"QEMU's guest clock: {', '.join(qemu.CLOCKS)}",
    "limits": "table",
    "executor": "table",
}
_LIMIT_KEYS = {"mix_s", "run_s", "memory_mb", "cpus"}
_EXECUTOR_KEYS = {"kind", "jobs", "partition", "account", "max_parallel", "sbatch_args"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Limits:
    mix_s: int = DEFAULT_TIMEOUT_S
    run_s: int | None = None
    memory_mb: int = 2048
    cpus: int = 1
    engine: str = DEFAULT_ENGINE  # the campaign's: it sets the default run_s
    guest_cpus: int = 4  # of the largest platform: gem5's default run_s grows with it

    @property
    def wall_s(self) -> int:
        """The engine's wall-clock limit for one run."""
        return self.run_s or default_wall_limit_s(self.engine, self.mix_s, self.guest_cpus)

    @property
    def job_s(self) -> int:
        """What one run's job may take: on gem5 the first run of a machine
        also boots gem5 atomically to take the checkpoint the others reuse."""
        return self.wall_s + get_engine(self.engine).setup_allowance_s


@dataclass(frozen=True)
class Executor:
    kind: str = "local"
    jobs: int | None = None
    partition: str | None = None
    account: str | None = None
    max_parallel: int | None = None
    sbatch_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Spec:
    path: Path
    text: str
    name: str
    engine: str
    platforms: tuple[platform_mod.Platform, ...]
    policies: tuple[str, ...]
    mixes: tuple[Mix, ...]
    repetitions: int
    references: tuple[str, ...]
    method: str
    kernel: str
    speedups: Path | None
    parsec: Path | None
    append: str
    qemu_clock: str = "host"
    limits: Limits = field(default_factory=Limits)
    executor: Executor = field(default_factory=Executor)


def _line_of(text: str, key: str, table: str | None) -> int | None:
    """The line of ``key = ...`` at the top level, or inside ``[table]``."""
    current: str | None = None
    header = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
    assign = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        if m := header.match(line):
            current = m.group(1).strip()
            if table is not None and current == table and key == table:
                return number
            continue
        if current == table and assign.match(line):
            return number
    return None


class _Errors:
    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def fail(
        self, key: str, msg: str, table: str | None = None, hint: str | None = None
    ) -> NoReturn:
        line = _line_of(self.text, key, table)
        where = f"{self.path}:{line}" if line else str(self.path)
        name = f"{table}.{key}" if table and table != key else key
        raise AmpkitError(f"{where}: '{name}' {msg}", hint)


def _int(
    err: _Errors, data: dict[str, Any], key: str, lo: int, hi: int, *, table: str | None = None
) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        err.fail(key, f"must be an integer from {lo} to {hi}, not {value!r}", table)
    return value


def _strings(err: _Errors, data: dict[str, Any], key: str, table: str | None = None) -> list[str]:
    value = data[key]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        err.fail(key, f"must be a non-empty list of strings, not {value!r}", table)
    return list(value)


def _unknown(err: _Errors, data: dict[str, Any], valid: set[str], table: str | None) -> None:
    for key in data:
        if key not in valid:
            err.fail(key, "is not a campaign key", table, hint=f"valid: {', '.join(sorted(valid))}")


def _mixes(err: _Errors, names: list[str], base: Path) -> tuple[Mix, ...]:
    out: dict[str, Mix] = {}
    for entry in names:
        if entry.startswith("category:"):
            category = entry.removeprefix("category:")
            if category not in CATEGORIES:
                err.fail(
                    "mixes",
                    f"names an unknown category '{category}'",
                    hint=f"valid: {', '.join(CATEGORIES)}",
                )
            chosen = [m for m in (load_mix(n) for n in mix_names()) if m.category == category]
        elif entry.endswith(".toml"):
            path = Path(entry) if Path(entry).is_absolute() else base / entry
            try:
                chosen = [load_mix(str(path))]
            except AmpkitError as e:
                err.fail("mixes", f"entry '{entry}': {e.what}", hint=e.hint)
        else:
            if entry not in mix_names():
                err.fail(
                    "mixes",
                    f"names an unknown mix '{entry}'",
                    hint="see 'ampkit mix list'; a mix file must end in .toml",
                )
            chosen = [load_mix(entry)]
        for mix in chosen:
            if mix.name in out and out[mix.name].source != mix.source:
                err.fail("mixes", f"holds two different mixes named '{mix.name}'")
            out.setdefault(mix.name, mix)
    return tuple(out.values())


def _path(err: _Errors, data: dict[str, Any], key: str, base: Path) -> Path | None:
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, str) or not value:
        err.fail(key, f"must be a path, not {value!r}")
    path = Path(value) if Path(value).is_absolute() else base / value
    if not path.is_file():
        err.fail(key, f"names {path}, which does not exist")
    return path


def load_spec(path: Path, base: Path | None = None) -> Spec:
    """Read and check a spec; relative paths in it are relative to ``base``
    (default: the spec's directory)."""
    if not path.is_file():
        raise AmpkitError(f"no campaign spec at {path}", "give the path of a .toml campaign spec")
    text, data = read_toml(path)
    err = _Errors(path, text)
    base = base or path.resolve().parent
    _unknown(err, data, set(_TOP_KEYS), None)
    for key in ("name", "platforms", "policies", "mixes"):
        if key not in data:
            err.fail(key, "is required", hint=f"{key}: {_TOP_KEYS[key]}")

    name = data["name"]
    if not isinstance(name, str) or not _NAME.match(name):
        err.fail("name", f"must be letters, digits, '.', '_' or '-', not {name!r}")
    engine = data.get("engine", DEFAULT_ENGINE)
    if engine not in ENGINES:
        err.fail("engine", f"must be one of {', '.join(ENGINES)}, not {engine!r}")

    platforms = []
    for entry in _strings(err, data, "platforms"):
        try:
            platforms.append(platform_mod.get_platform(entry))
        except AmpkitError as e:
            err.fail("platforms", e.what, hint=e.hint)
    chosen_policies = []
    for entry in _strings(err, data, "policies"):
        if entry not in policies.POLICIES:
            err.fail(
                "policies",
                f"names an unknown policy '{entry}'",
                hint=f"valid: {', '.join(policies.POLICIES)}",
            )
        chosen_policies.append(entry)
    mixes = _mixes(err, _strings(err, data, "mixes"), base)
    if not mixes:
        err.fail("mixes", "selects no mix")

    repetitions = (
        _int(err, data, "repetitions", 1, 1000, table=None) if "repetitions" in data else 1
    )
    refs: tuple[str, ...] = DEFAULT_REFERENCES
    if "references" in data:
        value = data["references"]
        if not isinstance(value, list) or not all(v in references.KINDS for v in value):
            err.fail(
                "references",
                f"must be a list of {', '.join(references.KINDS)}, not {value!r}",
                hint="an empty list runs no references (the report then has no slowdowns)",
            )
        refs = tuple(dict.fromkeys(value))
    method = data.get("method", "restart")
    if method not in METHODS:
        err.fail("method", f"must be one of {', '.join(METHODS)}, not {method!r}")
    kernel = data.get("kernel", "default")
    if kernel not in KERNEL_VARIANTS:
        err.fail("kernel", f"must be one of {', '.join(KERNEL_VARIANTS)}, not {kernel!r}")
    append = data.get("append", "")
    if not isinstance(append, str):
        err.fail("append", f"must be a string, not {append!r}")
    qemu_clock = data.get("qemu_clock", "host")
    if qemu_clock not in qemu.CLOCKS:
        err.fail(
            "qemu_clock",
            f"must be one of {', '.join(qemu.CLOCKS)}, not {qemu_clock!r}",
            hint="icount decouples guest time from host load (ampkit/engines/qemu.py)",
        )

    table = data.get("limits", {})
    if not isinstance(table, dict):
        err.fail("limits", "must be a table ([limits])", "limits")
    _unknown(err, table, _LIMIT_KEYS, "limits")
    limits = Limits(
        mix_s=_int(err, table, "mix_s", 1, 7 * 86400, table="limits")
        if "mix_s" in table
        else DEFAULT_TIMEOUT_S,
        run_s=_int(err, table, "run_s", 1, 14 * 86400, table="limits")
        if "run_s" in table
        else None,
        memory_mb=_int(err, table, "memory_mb", 64, 1 << 22, table="limits")
        if "memory_mb" in table
        else Limits.memory_mb,
        cpus=_int(err, table, "cpus", 1, 1024, table="limits") if "cpus" in table else 1,
        engine=engine,
        guest_cpus=max((p.ncpus for p in platforms), default=Limits.guest_cpus),
    )
    if limits.run_s is not None and limits.run_s <= limits.mix_s:
        err.fail(
            "run_s",
            f"({limits.run_s} s) must leave time beyond mix_s ({limits.mix_s} s) to boot",
            "limits",
        )

    table = data.get("executor", {})
    if not isinstance(table, dict):
        err.fail("executor", "must be a table ([executor])", "executor")
    _unknown(err, table, _EXECUTOR_KEYS, "executor")
    kind = table.get("kind", "local")
    if kind not in EXECUTORS:
        err.fail("kind", f"must be one of {', '.join(EXECUTORS)}, not {kind!r}", "executor")
    for key in ("partition", "account"):
        if key in table and (not isinstance(table[key], str) or not table[key]):
            err.fail(key, f"must be a non-empty string, not {table[key]!r}", "executor")
    executor = Executor(
        kind=kind,
        jobs=_int(err, table, "jobs", 1, 4096, table="executor") if "jobs" in table else None,
        partition=table.get("partition"),
        account=table.get("account"),
        max_parallel=_int(err, table, "max_parallel", 1, 100000, table="executor")
        if "max_parallel" in table
        else None,
        sbatch_args=tuple(_strings(err, table, "sbatch_args", "executor"))
        if "sbatch_args" in table
        else (),
    )
    return Spec(
        path=path,
        text=text,
        name=name,
        engine=engine,
        platforms=tuple(platforms),
        policies=tuple(dict.fromkeys(chosen_policies)),
        mixes=mixes,
        repetitions=repetitions,
        references=refs,
        method=method,
        kernel=kernel,
        speedups=_path(err, data, "speedups", base),
        parsec=_path(err, data, "parsec", base),
        append=append,
        qemu_clock=qemu_clock,
        limits=limits,
        executor=executor,
    )


def slurm_minutes(limits: Limits) -> int:
    """The job time limit of one run: its wall-clock limit and a margin for
    starting the kit and writing the run directory."""
    return math.ceil((limits.job_s + 120) / 60)
