"""big.LITTLE platforms: how many CPUs of each kind, and what Linux must be told.

One description serves every engine (configs/platforms.toml). The capacity
each CPU advertises in its device tree (``capacity-dmips-mhz``) has to carry
both the per-MHz difference between the core types and their clock ratio:
no cpufreq driver runs on the simulated machines, so Linux never scales the
values by frequency itself. With the Juno figures (A57 1024, A53 578 per MHz)
at 2.0 and 1.2 GHz the little CPUs get round(578 * 1200 / 2000) = 347.
A calibration measured on the simulated cores (configs/calibration.toml,
ampkit.calibration) replaces the little figure where it exists: the kit
ships one, 542 per MHz, so capacity 325.
"""

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ampkit import calibration
from ampkit.errors import AmpkitError
from ampkit.paths import CONFIGS
from ampkit.tomlfile import TomlFile

PLATFORMS_FILE = CONFIGS / "platforms.toml"

#: Linux's reference capacity (SCHED_CAPACITY_SCALE).
CAPACITY_SCALE = 1024

#: CONFIG_NR_CPUS of the kit's kernel (kernel-patches/ampkit.fragment).
MAX_CPUS = 16

_NAME = re.compile(r"(\d+)B(\d+)L")
#: What a preset may be called: its name starts run ids and directory
#: names and is given on command lines.
_PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Cache:
    """One cache's geometry: what the device tree tells Linux and what gem5
    simulates, from the one description (configs/platforms.toml)."""

    size_kib: int
    assoc: int
    line_bytes: int = 64

    @property
    def size_bytes(self) -> int:
        return self.size_kib * 1024

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.assoc * self.line_bytes)


@dataclass(frozen=True)
class CoreType:
    kind: str  # "big" or "little"
    model: str
    clock_mhz: int
    dmips_per_mhz: int
    l1i: Cache
    l1d: Cache
    l2: Cache  # one per cluster, shared by its CPUs: the last level
    #: where dmips_per_mhz comes from: platforms.toml, or a calibration
    #: measured on gem5 (configs/calibration.toml, ampkit.calibration)
    dmips_source: str = "platforms.toml"


@dataclass(frozen=True)
class Cpu:
    index: int
    cluster: int
    core: CoreType
    capacity: int


@dataclass(frozen=True)
class SchedDomain:
    """One scheduling domain a CPU of the platform must be in, as Linux
    6.1 (SCHED_MC, SCHED_CLUSTER) builds it from a tree with clusters,
    capacities and per-cluster L2s (ampkit.devicetree)."""

    name: str  # the topology level: MC (one cluster, its L2) or DIE (all)
    span: tuple[int, ...]
    shares_cache: bool  # SD_SHARE_PKG_RESOURCES: its CPUs share the LLC
    asymmetric: bool  # SD_ASYM_CPUCAPACITY and _FULL: both core types in it


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

    def sched_domains(self) -> dict[int, list[SchedDomain]]:
        """The domains of every CPU, lowest first: the cluster sharing its
        L2 (MC; CLS spans the same CPUs and is dropped), then the whole
        machine (DIE) when there are two core types. A domain of one CPU
        is degenerate and dropped, as Linux does (a 1B3L big CPU has DIE
        only; 1B0L has none)."""
        clusters: dict[int, tuple[int, ...]] = {}
        for cpu in self.cpus:
            clusters[cpu.cluster] = (*clusters.get(cpu.cluster, ()), cpu.index)
        everyone = tuple(range(self.ncpus))
        domains: dict[int, list[SchedDomain]] = {}
        for cpu in self.cpus:
            mine = domains[cpu.index] = []
            own = clusters[cpu.cluster]
            if len(own) > 1:
                mine.append(SchedDomain("MC", own, shares_cache=True, asymmetric=False))
            if len(clusters) > 1:
                mine.append(SchedDomain("DIE", everyone, shares_cache=False, asymmetric=True))
        return domains

    def domain_differences(self, guest: dict[str, list[dict[str, Any]]]) -> list[str]:
        """How the guest's domains (guest.json's ``sched_domains``: per CPU,
        lowest first, each with name, flags and span) differ from
        sched_domains(); empty when the kernel was told this platform."""
        wrong: list[str] = []
        want = self.sched_domains()
        if sorted(guest) != sorted(str(c) for c in want):
            return [f"the guest has domains for CPUs {sorted(guest)}, not {sorted(want)}"]
        for cpu, expected in want.items():
            seen = guest[str(cpu)]
            names = [d.get("name") for d in seen]
            if names != [d.name for d in expected]:
                wrong.append(f"CPU {cpu}: domains {names}, expected {[d.name for d in expected]}")
                continue
            for d, g in zip(expected, seen, strict=True):
                flags = set(g.get("flags") or ())
                checks = (
                    ("span", tuple(g.get("span") or ()), d.span),
                    ("SD_SHARE_PKG_RESOURCES", "SD_SHARE_PKG_RESOURCES" in flags, d.shares_cache),
                    ("SD_ASYM_CPUCAPACITY", "SD_ASYM_CPUCAPACITY" in flags, d.asymmetric),
                    ("SD_ASYM_CPUCAPACITY_FULL", "SD_ASYM_CPUCAPACITY_FULL" in flags, d.asymmetric),
                )
                for what, got, expect in checks:
                    if got != expect:
                        wrong.append(f"CPU {cpu} {d.name}: {what} is {got}, expected {expect}")
        return wrong

    def describe(self) -> dict[str, Any]:
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
                    "dmips_source": c.dmips_source,
                    "caches": {
                        level: {"size_kib": cache.size_kib, "assoc": cache.assoc}
                        for level, cache in (("l1i", c.l1i), ("l1d", c.l1d), ("l2", c.l2))
                    },
                }
                for c in (self.big_core, self.little_core)
            },
            "capacities": [cpu.capacity for cpu in self.cpus],
        }


#: CPUs the kit's gem5 platform can interrupt: VExpress_GEM5_V1 has a GICv2,
#: whose CPU interface numbers at most 8 CPUs (the COLAB evaluation's
#: largest platform, 4B4L, has 8).
GEM5_MAX_CPUS = 8


def check_gem5_platform(platform: Platform) -> None:
    """Refuse, before gem5 starts, a platform its configuration cannot boot."""
    if platform.ncpus > GEM5_MAX_CPUS:
        raise AmpkitError(
            f"platform {platform.name} has {platform.ncpus} CPUs; the kit's gem5 platform "
            f"(VExpress_GEM5_V1, GICv2) serves at most {GEM5_MAX_CPUS}",
            "choose a platform of at most 8 CPUs for gem5 (QEMU takes up to 16)",
        )


_CORE_KEYS = ("model", "clock_mhz", "dmips_per_mhz", "l1i", "l1d", "l2")
_CACHE_KEYS = ("size_kib", "assoc")
_LINE_BYTES = 64


def _cache(toml: TomlFile, key: tuple[str, ...]) -> Cache:
    if toml.get(key) is None:
        toml.fail(key, "is missing", hint=f"{key[-1]} = {{ size_kib = 32, assoc = 4 }}")
    toml.only_keys(key, _CACHE_KEYS, "a cache key")
    cache = Cache(
        size_kib=toml.integer((*key, "size_kib"), low=1, high=1 << 20),
        assoc=toml.integer((*key, "assoc"), low=1, high=64),
        line_bytes=_LINE_BYTES,
    )
    if cache.size_bytes % (cache.assoc * cache.line_bytes):
        toml.fail(
            (*key, "assoc"),
            f"must divide the cache into whole sets of {_LINE_BYTES}-byte lines "
            f"({cache.size_kib} KiB / {cache.assoc} ways does not)",
        )
    return cache


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
            l1i=_cache(toml, ("core", kind, "l1i")),
            l1d=_cache(toml, ("core", kind, "l1d")),
            l2=_cache(toml, ("core", kind, "l2")),
        )
    # a calibration beside the platforms file replaces the little core's figure
    cal = calibration.load((path or PLATFORMS_FILE).with_name(calibration.CALIBRATION_FILE.name))
    if cal is not None:
        cores["little"] = replace(
            cores["little"],
            dmips_per_mhz=cal.little_dmips_per_mhz,
            dmips_source=f"calibration: {cal.benchmark} on gem5 {cal.gem5_sha256[:12]}, {cal.date}",
        )
    presets = {}
    table = toml.get(("preset",))
    if table is not None and not isinstance(table, dict):
        toml.fail(("preset",), "must be a table ([preset])")
    for name in table or {}:
        presets[name] = _preset(toml, name)
    return cores, presets


def _preset(toml: TomlFile, name: str) -> tuple[int, int]:
    """A preset's big and little counts, checked as make_platform() would."""
    key = ("preset", name)
    if not _PRESET_NAME.fullmatch(name):
        toml.fail(
            key,
            "cannot name a platform: it goes into run ids and directory names",
            hint="letters, digits, '.', '_' and '-', starting with a letter or digit",
        )
    toml.only_keys(key, ("big", "little"), "a preset key")
    big = toml.integer((*key, "big"), low=0, high=MAX_CPUS)
    little = toml.integer((*key, "little"), low=0, high=MAX_CPUS)
    if not 1 <= big + little <= MAX_CPUS:
        toml.fail(
            key,
            f"must have from 1 to {MAX_CPUS} CPUs in all, not {big + little} "
            f"(big = {big}, little = {little})",
            hint=f"the kit's kernel supports at most {MAX_CPUS} CPUs (CONFIG_NR_CPUS); "
            "single-type platforms such as { big = 0, little = 4 } serve as references",
        )
    m = _NAME.fullmatch(name)
    if m is not None and (int(m.group(1)), int(m.group(2))) != (big, little):
        toml.fail(
            key,
            f"has big = {big}, little = {little}: a name of the form <B>B<L>L "
            "must say the preset's counts",
            hint=f"call it {big}B{little}L, or give it a name of another form",
        )
    return big, little


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
    m = _NAME.fullmatch(name)
    if m is None:
        raise AmpkitError(
            f"unknown platform '{name}'",
            f"valid: {', '.join(sorted(presets))}, or any '<B>B<L>L' such as 1B3L",
        )
    return make_platform(int(m.group(1)), int(m.group(2)))
