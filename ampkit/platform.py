"""big.LITTLE platforms: how many CPUs of each kind, and what Linux must be told.

One description serves every engine (configs/platforms.toml). The capacity
each CPU advertises in its device tree (``capacity-dmips-mhz``) has to carry
both the per-MHz difference between the core types and their clock ratio:
no cpufreq driver runs on the simulated machines, so Linux never scales the
values by frequency itself. With the Juno figures (A57 1024, A53 578 per MHz)
at 2.0 and 1.2 GHz the little CPUs get round(578 * 1200 / 2000) = 347.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from ampkit.errors import AmpkitError
from ampkit.paths import CONFIGS
from ampkit.tomlfile import TomlFile

PLATFORMS_FILE = CONFIGS / "platforms.toml"

#: Linux's reference capacity (SCHED_CAPACITY_SCALE).
CAPACITY_SCALE = 1024

#: CONFIG_NR_CPUS of the kit's kernel (kernel-patches/ampkit.fragment).
MAX_CPUS = 16

_NAME = re.compile(r"^(\d+)B(\d+)L$")


@dataclass(frozen=True)
class CoreType:
    kind: str  # "big" or "little"
    model: str
    clock_mhz: int
    dmips_per_mhz: int


@dataclass(frozen=True)
class Cpu:
    index: int
    cluster: int
    core: CoreType
    capacity: int


@dataclass(frozen=True)
class Platform:
    name: str
    big: int
    little: int
    big_core: CoreType
    little_core: CoreType

    @property
    def little_only(self) -> "Platform":
        """The little CPUs alone: where ASP's slow reference runs."""
        return make_platform(0, self.little)

    @property
    def big_only(self) -> "Platform":
        """The big CPUs alone."""
        return make_platform(self.big, 0)

    @property
    def ncpus(self) -> int:
        return self.big + self.little

    @property
    def cpus(self) -> list[Cpu]:
        cores = [self.big_core] * self.big + [self.little_core] * self.little
        # The device tree of a little-only platform keeps the little cores'
        # own figure (Linux then scales the largest to 1024 all the same:
        # only the engine's CPU model makes them slow).
        top = max(c.dmips_per_mhz * c.clock_mhz for c in (self.big_core, self.little_core))
        return [
            Cpu(
                index=i,
                # clusters are numbered from 0 in the cpu-map: Linux stops
                # at the first missing one
                cluster=0 if core is self.big_core or not self.big else 1,
                core=core,
                capacity=round(CAPACITY_SCALE * core.dmips_per_mhz * core.clock_mhz / top),
            )
            for i, core in enumerate(cores)
        ]

    def describe(self) -> dict[str, object]:
        """The platform as recorded in manifests."""
        return {
            "name": self.name,
            "big": self.big,
            "little": self.little,
            "cores": {
                c.kind: {
                    "model": c.model,
                    "clock_mhz": c.clock_mhz,
                    "dmips_per_mhz": c.dmips_per_mhz,
                }
                for c in (self.big_core, self.little_core)
            },
            "capacities": [cpu.capacity for cpu in self.cpus],
        }


_CORE_KEYS = ("model", "clock_mhz", "dmips_per_mhz")


def _load(path: Path | None = None) -> tuple[dict[str, CoreType], dict[str, tuple[int, int]]]:
    """The core types and presets of ``path`` (default: configs/platforms.toml)."""
    toml = TomlFile(path or PLATFORMS_FILE)
    toml.only_keys((), ("core", "preset"), "a platforms key")
    toml.only_keys(("core",), ("big", "little"), "a core type")
    cores = {}
    for kind in ("big", "little"):
        if toml.get(("core", kind)) is None:
            toml.fail(
                ("core", kind), "is missing", hint=f"[core.{kind}] with {', '.join(_CORE_KEYS)}"
            )
        toml.only_keys(("core", kind), _CORE_KEYS, "a core key")
        cores[kind] = CoreType(
            kind=kind,
            model=toml.string(("core", kind, "model")),
            clock_mhz=toml.integer(("core", kind, "clock_mhz"), low=1, high=100_000),
            dmips_per_mhz=toml.integer(("core", kind, "dmips_per_mhz"), low=1, high=CAPACITY_SCALE),
        )
    presets = {}
    table = toml.get(("preset",))
    if table is not None and not isinstance(table, dict):
        toml.fail(("preset",), "must be a table ([preset])")
    for name in table or {}:
        toml.only_keys(("preset", name), ("big", "little"), "a preset key")
        presets[name] = (
            toml.integer(("preset", name, "big"), low=0, high=MAX_CPUS),
            toml.integer(("preset", name, "little"), low=0, high=MAX_CPUS),
        )
    return cores, presets


def preset_names() -> list[str]:
    return sorted(_load()[1])


def make_platform(big: int, little: int, name: str | None = None) -> Platform:
    cores, _ = _load()
    if big < 0 or little < 0 or big + little < 1:
        raise AmpkitError(
            f"a platform needs at least one CPU and no negative counts, not {big} and {little}",
            "single-type platforms such as 0B4L (little CPUs only) serve as references",
        )
    if big + little > MAX_CPUS:
        raise AmpkitError(
            f"{big}B{little}L has {big + little} CPUs; the kit's kernel supports at most "
            f"{MAX_CPUS} (CONFIG_NR_CPUS)"
        )
    return Platform(
        name=name or f"{big}B{little}L",
        big=big,
        little=little,
        big_core=cores["big"],
        little_core=cores["little"],
    )


def get_platform(name: str) -> Platform:
    """A preset by name, or any '<B>B<L>L' such as 1B3L."""
    _, presets = _load()
    if name in presets:
        return make_platform(*presets[name], name=name)
    m = _NAME.match(name)
    if m is None:
        raise AmpkitError(
            f"unknown platform '{name}'",
            f"valid: {', '.join(sorted(presets))}, or any '<B>B<L>L' such as 1B3L",
        )
    return make_platform(int(m.group(1)), int(m.group(2)))
