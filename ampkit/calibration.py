"""Capacities calibrated on the simulated cores.

The little CPUs' ``capacity-dmips-mhz`` must say how fast the simulated
little core is against the simulated big one, not what some silicon
measured (Juno's device tree gives the A53 578 against the A57's 1024).
``ampkit platform calibrate`` runs the kit's integer benchmark (intmark,
one thread) alone on one big CPU (1B0L) and on one little CPU (0B1L) on
gem5, and derives the little core's per-MHz performance from the two run
times and the two clocks:

    little dmips_per_mhz = 1024 * (big_ns * big_mhz) / (little_ns * little_mhz)

that is, the ratio of the cycles each core needs for the same work. The
same runs give each core's IPC on the benchmark (committed instructions
over active cycles of its one CPU), the reference of the power models'
activity factor (configs/ampkit_gem5/power.py). The
record goes to ``configs/calibration.toml`` with its provenance (the gem5
binary, the machine model, the benchmark, the runs, the date); when that
file exists, platforms.toml's little ``dmips_per_mhz`` gives way to it, on
both engines. A record made with another gem5 binary or another machine
model than the one in use is reported by every run that uses it
(``stale_reasons``), never silently taken for a measurement of this one.

    kind = "ampkit-capacity-calibration"
    version = 2
    little_dmips_per_mhz = 697
    benchmark = "intmark"
    size = 2000
    big_ns = 5123456
    little_ns = 12345678
    big_mhz = 2000
    little_mhz = 1200
    big_ipc = 1.52
    little_ipc = 0.61
    gem5_sha256 = "..."
    model_sha256 = "..."
    benchmark_sha256 = "..."
    date = "2026-11-24"
    runs = ["1B0L-cfs-alone-intmark-t1-n2000-r0", "0B1L-cfs-alone-intmark-t1-n2000-r0"]
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_file, sha256_json
from ampkit.paths import CONFIGS
from ampkit.tomlfile import TomlFile

KIND = "ampkit-capacity-calibration"
#: 2: the IPCs are measured over the measured interval alone (version 1's
#: window also held the runner's forks and its results).
VERSION = 2
CALIBRATION_FILE = CONFIGS / "calibration.toml"
#: machine models that build the same simulated machine, with the evidence
MACHINE_MODELS_FILE = CONFIGS / "machine-models.toml"
BENCHMARK = "intmark"
#: Linux's reference capacity (SCHED_CAPACITY_SCALE), the big core's figure.
SCALE = 1024


@dataclass(frozen=True)
class Calibration:
    little_dmips_per_mhz: int
    benchmark: str
    size: int
    big_ns: int
    little_ns: int
    big_mhz: int
    little_mhz: int
    big_ipc: float
    little_ipc: float
    gem5_sha256: str
    model_sha256: str
    benchmark_sha256: str
    date: str
    runs: tuple[str, ...] = ()
    source: Path | None = None

    def ipc(self, kind: str) -> float:
        """The ``kind`` ("big" or "little") core's IPC on the benchmark."""
        if kind not in ("big", "little"):
            raise AmpkitError(f"no core type '{kind}': big or little")
        return self.big_ipc if kind == "big" else self.little_ipc

    def describe(self) -> dict[str, Any]:
        """What a manifest records of it."""
        return {
            "little_dmips_per_mhz": self.little_dmips_per_mhz,
            "benchmark": self.benchmark,
            "size": self.size,
            "big_ipc": self.big_ipc,
            "little_ipc": self.little_ipc,
            "gem5_sha256": self.gem5_sha256,
            "model_sha256": self.model_sha256,
            "date": self.date,
        }

    def render(self) -> str:
        lines = [
            "# Written by 'ampkit platform calibrate': the little core's per-MHz",
            "# performance measured on gem5 (ampkit/calibration.py says how).",
            "# While this file exists it replaces [core.little] dmips_per_mhz of",
            "# platforms.toml on both engines. Delete it to go back to that value.",
            f'kind = "{KIND}"',
            f"version = {VERSION}",
            f"little_dmips_per_mhz = {self.little_dmips_per_mhz}",
            f'benchmark = "{self.benchmark}"',
            f"size = {self.size}",
            f"big_ns = {self.big_ns}",
            f"little_ns = {self.little_ns}",
            f"big_mhz = {self.big_mhz}",
            f"little_mhz = {self.little_mhz}",
            f"big_ipc = {self.big_ipc:.4f}",
            f"little_ipc = {self.little_ipc:.4f}",
            f'gem5_sha256 = "{self.gem5_sha256}"',
            f'model_sha256 = "{self.model_sha256}"',
            f'benchmark_sha256 = "{self.benchmark_sha256}"',
            f'date = "{self.date}"',
            f"runs = {json.dumps(list(self.runs))}",
        ]
        return "\n".join(lines) + "\n"


def derive(big_ns: int, little_ns: int, big_mhz: int, little_mhz: int) -> int:
    """The little core's per-MHz performance against the big core's 1024:
    the ratio of the cycles the two need for the same work."""
    if min(big_ns, little_ns, big_mhz, little_mhz) <= 0:
        raise AmpkitError(
            f"a calibration needs positive times and clocks, not big {big_ns} ns at "
            f"{big_mhz} MHz and little {little_ns} ns at {little_mhz} MHz"
        )
    value = round(SCALE * (big_ns * big_mhz) / (little_ns * little_mhz))
    if not 1 <= value <= SCALE:
        raise AmpkitError(
            f"the little core came out at {value} per MHz against the big core's {SCALE} "
            f"(big {big_ns} ns at {big_mhz} MHz, little {little_ns} ns at {little_mhz} MHz)",
            "a little core faster per MHz than the big one is not a big.LITTLE platform; "
            "check the core models in configs/ampkit_gem5/cores.py",
        )
    return value


def model_sha256(platforms: Path | None = None) -> str:
    """What decides the simulated cores' speed: the gem5 configuration's
    scripts and the core types (model, clock, caches), not the capacities
    the kernel is told (so that writing a calibration does not stale it)
    nor the power models (power.py: they measure, they do not slow)."""
    toml = TomlFile(platforms or CONFIGS / "platforms.toml")
    cores = toml.get(("core",)) or {}
    if not isinstance(cores, dict):
        toml.fail(("core",), "must be a table ([core.big] and [core.little])")
    described = {
        kind: {k: v for k, v in table.items() if k != "dmips_per_mhz"}
        for kind, table in cores.items()
        if isinstance(table, dict)
    }
    scripts = sorted(
        p for p in CONFIGS.rglob("*.py") if "__pycache__" not in p.parts and p.name != "power.py"
    )
    return sha256_json(
        {
            "cores": described,
            "scripts": {str(p.relative_to(CONFIGS)): sha256_file(p) for p in scripts},
        }
    )


def same_machine(a: str, b: str, path: Path | None = None) -> bool:
    """Whether machine models ``a`` and ``b`` (model_sha256()) build the
    same simulated machine: equal, or listed together in
    configs/machine-models.toml (which says what shows it)."""
    if a == b:
        return True
    toml = TomlFile(path or MACHINE_MODELS_FILE)
    toml.only_keys((), ("same",), "a machine-models key")
    groups = toml.get(("same",)) or []
    if not isinstance(groups, list):
        toml.fail(("same",), "must be an array of tables ([[same]])")
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            toml.fail(("same", i), "must be a table")
        toml.only_keys(("same", i), ("models", "evidence"), "a [[same]] key")
        models = toml.strings(("same", i, "models"), non_empty=True)
        toml.string(("same", i, "evidence"))
        if a in models and b in models:
            return True
    return False


def load(path: Path | None = None) -> Calibration | None:
    """The calibration record, or None where there is none."""
    path = path or CALIBRATION_FILE
    if not path.is_file():
        return None
    toml = TomlFile(path)
    keys = (
        "kind",
        "version",
        "little_dmips_per_mhz",
        "benchmark",
        "size",
        "big_ns",
        "little_ns",
        "big_mhz",
        "little_mhz",
        "big_ipc",
        "little_ipc",
        "gem5_sha256",
        "model_sha256",
        "benchmark_sha256",
        "date",
        "runs",
    )
    toml.only_keys((), keys, "a calibration key")
    if toml.get(("kind",)) != KIND:
        toml.fail(("kind",), f'must be "{KIND}"', hint="ampkit platform calibrate writes it")
    if toml.get(("version",)) != VERSION:
        toml.fail(
            ("version",),
            f"must be {VERSION}: older records measured the IPCs over a wider window",
            hint="run ampkit platform calibrate to measure the cores again (with gem5), "
            "or delete the file to boot with Juno's figure",
        )
    return Calibration(
        little_dmips_per_mhz=toml.integer(("little_dmips_per_mhz",), low=1, high=SCALE),
        benchmark=toml.string(("benchmark",)),
        size=toml.integer(("size",), low=1),
        big_ns=toml.integer(("big_ns",), low=1),
        little_ns=toml.integer(("little_ns",), low=1),
        big_mhz=toml.integer(("big_mhz",), low=1),
        little_mhz=toml.integer(("little_mhz",), low=1),
        big_ipc=_positive(toml, "big_ipc"),
        little_ipc=_positive(toml, "little_ipc"),
        gem5_sha256=toml.string(("gem5_sha256",)),
        model_sha256=toml.string(("model_sha256",)),
        benchmark_sha256=toml.string(("benchmark_sha256",)),
        date=toml.string(("date",)),
        runs=tuple(toml.strings(("runs",), default=[])),
        source=path,
    )


def _positive(toml: TomlFile, key: str) -> float:
    value = toml.get((key,))
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 16:
        toml.fail((key,), f"must be an IPC between 0 and 16, not {value!r}")
    return float(value)


def core_ipc(summary: dict[str, Any], run: str) -> float:
    """The IPC of a one-CPU run's CPU (its gem5.json summary): committed
    instructions over its cycles. O3 adds the cycles it slept to numCycles
    when it wakes, but the one CPU of these runs executes the runner's
    reset, so it is awake when the measured interval begins."""
    cpus = summary.get("cpus") or []
    if len(cpus) != 1:
        raise AmpkitError(f"calibration run {run} has {len(cpus)} CPUs in its statistics, not 1")
    insts, cycles = cpus[0].get("insts"), cpus[0].get("cycles")
    if not isinstance(insts, int | float) or not isinstance(cycles, int | float) or cycles <= 0:
        raise AmpkitError(f"calibration run {run} has no instruction or cycle count")
    return float(insts) / float(cycles)


def stale_reasons(cal: Calibration, *, gem5_sha256: str | None) -> list[str]:
    """Why the record may not describe the machine in use (empty: it does).
    ``gem5_sha256`` is the binary in use, None where no gem5 runs (QEMU)."""
    reasons = []
    where = cal.source or CALIBRATION_FILE
    if cal.model_sha256 != model_sha256():
        reasons.append(
            f"{where} was measured on another machine model (configs/ampkit_gem5, "
            "bigLITTLE.py or the core types changed since); run ampkit platform calibrate"
        )
    if gem5_sha256 is not None and cal.gem5_sha256 != gem5_sha256:
        reasons.append(
            f"{where} was measured with another gem5 binary "
            f"({cal.gem5_sha256[:12]}, this one is {gem5_sha256[:12]})"
        )
    return reasons


def manifest_entry(*, gem5_sha256: str | None) -> dict[str, Any] | None:
    """What a run's manifest records of the calibration in force: the
    record and why it may not describe this machine; None without one."""
    cal = load()
    if cal is None:
        return None
    return {"record": cal.describe(), "stale": stale_reasons(cal, gem5_sha256=gem5_sha256)}
