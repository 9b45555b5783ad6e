"""Speedup profiles: each program's measured big-over-little speedup.

A profile is a TOML file (``ampkit profile`` writes it) holding, for each
application (program, threads, size, arguments), its turnaround alone on a
platform of big CPUs only and on one of as many little CPUs only, one value
per repetition, the run directories they came from, and the speedup: mean
little time over mean big time. ``ampkit run --speedups`` and ``ampkit mix
generate --speedups`` take their hints from it.

    kind = "ampkit-speedup-profile"
    version = 1
    engine = "qemu"
    cpus = 2                       # the platforms were 2B0L and 0B2L

    [[program]]
    program = "compute"
    threads = 2
    size = 8000
    args = []
    big_ns = [812345678]
    little_ns = [1623456789]
    big_runs = ["2B0L-cfs-alone-compute-t2-n8000-r0"]
    little_runs = ["0B2L-cfs-alone-compute-t2-n8000-r0"]
    speedup = 1.998
    # where the runs counted PMU events (ampkit.pmu names them): each
    # event's count over the application's process on each core type, the
    # mean over repetitions (absent: not counted there)
    big_pmu = { INST_RETIRED = 151234567, CPU_CYCLES = 98765432 }
    little_pmu = { INST_RETIRED = 151234890, CPU_CYCLES = 197530864 }
    # on gem5: the big cluster's energy (CPUs and L2, its power model) per
    # instruction its CPUs committed over the big runs' region (or measured
    # interval), nJ: the kit's stand-in for Saez et al.'s EPI_big, without
    # DRAM and with the static power of the cluster's idle CPUs; and the
    # little cluster's over the little runs, for their EPI_small
    big_epi_nj = 0.51
    little_epi_nj = 0.37

An optional ``[provenance]`` table (strings) says what measured it: the
engine binary's hash, on gem5 the machine model's (ampkit.calibration),
the kernel's digest, the size scale and the date.

QEMU runs every CPU at the same speed, so a QEMU profile is right in shape
and says nothing in its numbers (speedups near 1); gem5's are real.
"""

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ampkit.engines import DEFAULT_ENGINE, ENGINES
from ampkit.errors import AmpkitError
from ampkit.mix import (
    EPI_NJ_MAX,
    EPI_NJ_MIN,
    MAX_THREADS,
    SPEEDUP_MAX,
    SPEEDUP_MIN,
    App,
    Mix,
    check_program,
    known_programs,
)
from ampkit.paths import CONFIGS
from ampkit.pmu import EVENT_SETS, INSTRUCTIONS
from ampkit.pmu import NAMES as PMU_NAMES
from ampkit.rundir import AppRecord, Excluded, RunDir, Statistics
from ampkit.tomlfile import TomlFile, provenance_lines

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ampkit.analysis.optimum import AppModel
    from ampkit.kernel import KernelBuild

KIND = "ampkit-speedup-profile"
VERSION = 1
#: The speedup table the kit ships: a gem5 profile of the catalogue's
#: programs, with its provenance. Its per-program speedups are the
#: catalogue mixes' hints and the default of 'ampkit mix generate'.
SHIPPED_PROFILE = CONFIGS / "speedups.toml"


def unhinted(app: App) -> App:
    """The application as a profile measures it: without the hints (speedup,
    energy) a mix may give it, which describe it and do not change it."""
    return replace(app, speedup=None, epi_big_nj=None)


def apps_of_mixes(apps: "Iterable[App]") -> list[App]:
    """The applications of mixes to profile, once each whatever hints each
    mix gives them, in order of first appearance."""
    return list(dict.fromkeys(unhinted(a) for a in apps))


@dataclass(frozen=True)
class Entry:
    app: App  # what ran: program, threads, size, arguments (no hint)
    big_ns: tuple[int, ...]
    little_ns: tuple[int, ...]
    big_runs: tuple[str, ...] = ()
    little_runs: tuple[str, ...] = ()
    #: PMU event -> count over the process, the mean over repetitions, on
    #: each core type; empty where the runs did not count
    big_pmu: tuple[tuple[str, float], ...] = ()
    little_pmu: tuple[tuple[str, float], ...] = ()
    #: nJ per instruction of the big cluster over the big runs (gem5)
    big_epi_nj: float | None = None
    #: ... and of the little cluster over the little runs
    little_epi_nj: float | None = None

    @property
    def speedup(self) -> float:
        return (sum(self.little_ns) / len(self.little_ns)) / (sum(self.big_ns) / len(self.big_ns))

    def matches(self, app: App) -> bool:
        return self.app == unhinted(app)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class Profile:
    engine: str
    cpus: int
    entries: tuple[Entry, ...]
    source: Path | None = None
    provenance: tuple[tuple[str, str], ...] = ()

    def speedups(self) -> dict[str, float]:
        """Per program: the geometric mean over its entries."""
        by_program: dict[str, list[float]] = {}
        for e in self.entries:
            by_program.setdefault(e.app.program, []).append(e.speedup)
        return {p: _geomean(vs) for p, vs in by_program.items()}

    def _tiers(self, app: App) -> tuple[list[Entry], list[Entry], list[Entry]]:
        """The entries a hint for ``app`` is taken from, most specific first:
        this very application, its program at its thread count, its program."""
        return (
            [e for e in self.entries if e.matches(app)],
            [
                e
                for e in self.entries
                if e.app.program == app.program and e.app.threads == app.threads
            ],
            [e for e in self.entries if e.app.program == app.program],
        )

    def hint_for(self, app: App) -> float | None:
        """The speedup measured for this very application, else for its
        program at its thread count (the geometric mean over sizes), else
        for its program, else None; clamped to what the kernel accepts."""
        exact, threads, program = self._tiers(app)
        if exact:
            value = exact[0].speedup
        elif threads or program:
            value = _geomean([e.speedup for e in threads or program])
        else:
            return None
        return round(min(SPEEDUP_MAX, max(SPEEDUP_MIN, value)), 3)

    def epi_hint_for(self, app: App) -> float | None:
        """The energy per instruction on big CPUs measured for this very
        application, else for its program at its thread count, else for its
        program (arithmetic means: it is a ratio of sums), else None; kept
        to what the kernel accepts."""
        for tier in self._tiers(app):
            values = [e.big_epi_nj for e in tier if e.big_epi_nj]
            if values:
                value = sum(values) / len(values)
                return round(min(EPI_NJ_MAX, max(EPI_NJ_MIN, value)), 4)
        return None

    def model_input(self, app: App) -> "AppModel | str":
        """Saez et al.'s model's inputs (ampkit.analysis.optimum) for this
        very application: its speedup, its instructions per second on big
        CPUs (its region's retired instructions over its time there) and
        its energy per instruction on each core type; else what is missing
        (the model's applications are single-threaded: a CPU each)."""
        from ampkit.analysis.optimum import AppModel

        label = f"{app.program} t{app.threads} n{app.size}"
        if app.threads != 1:
            return f"{label}: {app.threads} threads (the model's have one)"
        entry = next((e for e in self.entries if e.matches(app)), None)
        if entry is None:
            return f"{label}: not in the profile"
        instructions = dict(entry.big_pmu).get(INSTRUCTIONS)
        if not (instructions and entry.big_epi_nj and entry.little_epi_nj):
            lacks = [
                key
                for key, value in (
                    ("big_pmu.INST_RETIRED", instructions),
                    ("big_epi_nj", entry.big_epi_nj),
                    ("little_epi_nj", entry.little_epi_nj),
                )
                if not value
            ]
            return f"{label}: no {', '.join(lacks)}"
        return AppModel(
            name=label,
            speedup=entry.speedup,
            ips_big=instructions / (sum(entry.big_ns) / len(entry.big_ns) / 1e9),
            epi_big_nj=entry.big_epi_nj,
            epi_little_nj=entry.little_epi_nj,
        )

    def model_inputs(self, mix: Mix) -> "list[AppModel]":
        """model_input() of each application of the mix, or an error that
        lists everything missing."""
        found = [self.model_input(app) for app in mix.apps]
        missing = [f for f in found if isinstance(f, str)]
        if missing:
            raise AmpkitError(
                f"{mix.name}: the analytical model lacks inputs from "
                f"{self.source or 'the profile'}: " + "; ".join(missing),
                "a mix of single-threaded applications, profiled on gem5 with its PMU "
                "events counted (ampkit profile --engine gem5 --mix MIX --cpus 1): that "
                "gives each its speedup, instructions and energy per instruction on each "
                "core type",
            )
        return [f for f in found if not isinstance(f, str)]

    def models_by_key(self) -> "dict[str, AppModel]":
        """model_input() of every application the profile has them all for,
        by the key its runs' records give it (ampkit.rundir.app_key): what a
        report reads a mix's with."""
        from ampkit.rundir import app_key

        found = {}
        for e in self.entries:
            model = self.model_input(e.app)
            if not isinstance(model, str):
                found[app_key(e.app.program, e.app.threads, e.app.argv)] = model
        return found

    def with_energies(self, mix: Mix) -> Mix:
        """The mix with each application's energy per instruction on big
        CPUs from this profile where it has one, its speedups untouched."""
        apps = []
        for app in mix.apps:
            epi = self.epi_hint_for(app)
            apps.append(app if epi is None else replace(app, epi_big_nj=epi))
        return replace(mix, apps=tuple(apps))

    def apply(self, mix: Mix, *, energies: bool = False) -> Mix:
        """The mix with its speedup hints taken from this profile where it
        has them, and with ``energies`` its energies per instruction on big
        CPUs too: only for a policy that weighs them (eef, ACFS-E), so that every
        other run's description, and key, is what it was."""
        apps = []
        for app in mix.apps:
            hint = self.hint_for(app)
            apps.append(app if hint is None else replace(app, speedup=hint))
        hinted = replace(mix, apps=tuple(apps))
        return self.with_energies(hinted) if energies else hinted

    def render(self) -> str:
        lines = [
            "# ampkit speedup profile: each application alone on big CPUs only and on",
            "# as many little CPUs only; speedup = mean little time / mean big time",
            f'kind = "{KIND}"',
            f"version = {VERSION}",
            f"engine = {json.dumps(self.engine)}",
            f"cpus = {self.cpus}",
        ]
        lines += provenance_lines(self.provenance)
        for e in self.entries:
            lines += [
                "",
                "[[program]]",
                f"program = {json.dumps(e.app.program)}",
                f"threads = {e.app.threads}",
                f"size = {e.app.size}",
                f"args = {json.dumps(list(e.app.args))}",
                f"big_ns = {json.dumps(list(e.big_ns))}",
                f"little_ns = {json.dumps(list(e.little_ns))}",
                f"big_runs = {json.dumps(list(e.big_runs))}",
                f"little_runs = {json.dumps(list(e.little_runs))}",
                f"speedup = {e.speedup:.4f}",
            ]
            for key, counts in (("big_pmu", e.big_pmu), ("little_pmu", e.little_pmu)):
                if counts:
                    table = ", ".join(f"{name} = {round(value)}" for name, value in counts)
                    lines.append(f"{key} = {{ {table} }}")
            for key, epi in (("big_epi_nj", e.big_epi_nj), ("little_epi_nj", e.little_epi_nj)):
                if epi is not None:
                    lines.append(f"{key} = {epi:.6g}")
        return "\n".join(lines) + "\n"


_HINT = "write profiles with 'ampkit profile' (format in ampkit/profile.py)"
_TOP_KEYS = ("kind", "version", "engine", "cpus", "provenance", "program")
_PROGRAM_KEYS = (
    "program",
    "threads",
    "size",
    "args",
    "big_ns",
    "little_ns",
    "big_runs",
    "little_runs",
    "speedup",
    "big_pmu",
    "little_pmu",
    "big_epi_nj",
    "little_epi_nj",
)


#: How far a written ``speedup`` may be from the one its times give:
#: render() writes it with four decimals.
_SPEEDUP_ROUNDING = 1e-4


def _times(toml: TomlFile, i: int, key: str) -> tuple[int, ...]:
    value = toml.get(("program", i, key))
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        toml.fail(("program", i, key), "must be a non-empty list of positive ns", hint=_HINT)
    return tuple(value)


def _pmu_counts(toml: TomlFile, i: int, key: str) -> tuple[tuple[str, float], ...]:
    value = toml.get(("program", i, key))
    if value is None:
        return ()
    if not isinstance(value, dict):
        toml.fail(("program", i, key), "must be a table of PMU event counts", hint=_HINT)
    for name in value:
        if name not in PMU_NAMES:
            toml.fail(
                ("program", i, key),
                f"has {name!r}, which is not an event the kit counts",
                hint=f"the events: {', '.join(PMU_NAMES)} (ampkit/pmu.py)",
            )
    return tuple((name, toml.number(("program", i, key, name), low=0)) for name in value)


def _optional_number(toml: TomlFile, i: int, key: str) -> float | None:
    if toml.get(("program", i, key)) is None:
        return None
    return toml.number(("program", i, key), low=0)


def _check_identity(toml: TomlFile) -> None:
    """The file says it is a profile of this format: an error at the line of
    the key that does not (the first line when the key is absent)."""
    identity = f'kind = "{KIND}", version = {VERSION}'
    for key, wanted in (("kind", KIND), ("version", VERSION)):
        value = toml.get((key,))
        if value is None:
            toml.fail(
                (key,), f"is required but absent: not a speedup profile's ({identity})", _HINT
            )
        if value != wanted:
            toml.fail((key,), f"is {value!r}: not a speedup profile's ({identity})", _HINT)


def load_profile(path: Path) -> Profile:
    if not path.is_file():
        raise AmpkitError(f"cannot read the speedup profile {path}: no such file", _HINT)
    toml = TomlFile(path)
    _check_identity(toml)
    toml.only_keys((), _TOP_KEYS, "a profile key")
    programs = toml.tables(("program",), required=False)
    if not programs:
        toml.fail(
            ("program",), "is required but absent: the file has no [[program]] entries", _HINT
        )
    engine = toml.string(("engine",), choices=ENGINES, default="")
    known = known_programs()
    entries = []
    for i in range(len(programs)):
        toml.only_keys(("program", i), _PROGRAM_KEYS, "a program key")
        args = toml.strings(("program", i, "args"), default=[])
        entries.append(
            Entry(
                app=App(
                    program=check_program(toml, ("program", i, "program"), known),
                    threads=toml.integer(("program", i, "threads"), low=1, high=MAX_THREADS),
                    # 0 for a PARSEC program, which takes an input set instead
                    size=toml.integer(("program", i, "size"), low=0),
                    args=tuple(args),
                ),
                big_ns=_times(toml, i, "big_ns"),
                little_ns=_times(toml, i, "little_ns"),
                big_runs=tuple(toml.strings(("program", i, "big_runs"), default=[])),
                little_runs=tuple(toml.strings(("program", i, "little_runs"), default=[])),
                big_pmu=_pmu_counts(toml, i, "big_pmu"),
                little_pmu=_pmu_counts(toml, i, "little_pmu"),
                big_epi_nj=_optional_number(toml, i, "big_epi_nj"),
                little_epi_nj=_optional_number(toml, i, "little_epi_nj"),
            )
        )
        _check_speedup(toml, i, entries[-1])
    provenance = toml.get(("provenance",)) or {}
    if not isinstance(provenance, dict) or not all(isinstance(v, str) for v in provenance.values()):
        toml.fail(("provenance",), "must be a table of strings", hint=_HINT)
    return Profile(
        engine=engine,
        cpus=toml.integer(("cpus",), low=0, default=0),
        entries=tuple(entries),
        source=path,
        provenance=tuple(provenance.items()),
    )


def _check_speedup(toml: TomlFile, i: int, entry: Entry) -> None:
    """An entry's ``speedup``, if written, is the one its times give:
    render() writes it for the reader, and Entry.speedup always computes it
    from big_ns and little_ns, so any other value would be silently ignored."""
    key = ("program", i, "speedup")
    if toml.get(key) is None:
        return
    written = toml.number(key, low=0)
    if abs(written - entry.speedup) > _SPEEDUP_ROUNDING:
        toml.fail(
            key,
            f"must be the mean of little_ns over the mean of big_ns, "
            f"{entry.speedup:.4f}, not {written}",
            hint="the speedup is derived from the times: change big_ns and little_ns, "
            "or leave speedup out",
        )


def shipped_speedups() -> dict[str, float]:
    """Per program, the shipped table's speedup; empty where none is shipped."""
    if not SHIPPED_PROFILE.is_file():
        return {}
    return load_profile(SHIPPED_PROFILE).speedups()


def measure(
    apps: list[App],
    cpus: int,
    repetitions: int,
    runs_dir: Path,
    *,
    build: "KernelBuild",
    image: Path,
    engine: str = DEFAULT_ENGINE,
    kernel_variant: str = "default",
    cmdline: str = "",
    pmu_sets: tuple[tuple[str, ...], ...] = EVENT_SETS,
) -> Profile:
    """Runs each application alone on <cpus>B0L and 0B<cpus>L under the
    baseline, ``repetitions`` times each, into ``runs_dir`` (sound runs
    already there are kept), on ``build`` (of ``kernel_variant``) with
    ``cmdline`` appended, and returns the profile they give.

    With ``pmu_sets`` (ampkit.pmu.EVENT_SETS: groups the PMU holds at
    once), each application's PMU events on each core type: on an engine
    that writes statistics (gem5) what they count of every event over the
    measured interval (statistics_counts; the guest counts nothing), with the big
    cluster's energy per instruction; elsewhere as the guest's PMU counts
    them, the first set in the run that times the application, each
    further set in a run of its own (its mix named ...-pmu<k>, not among
    the entry's runs), its counts brought to the first run's instructions,
    so that every rate is the one its own run measured."""
    # imported here: ampkit.run needs the engines, the profile format does not
    from ampkit.engines import get_engine
    from ampkit.platform import make_platform
    from ampkit.policies import BASELINE
    from ampkit.references import alone_mix, is_done
    from ampkit.run import RunRequest, execute, prepare_for

    from_statistics = get_engine(engine).writes_statistics
    guest_sets = () if from_statistics else pmu_sets
    holder = Mix(
        name="profile",
        description="speedup profile",
        category="compute",
        apps=tuple(apps),
        source=Path("profile"),
    )
    platforms = {"big": make_platform(cpus, 0), "little": make_platform(0, cpus)}

    def run(request: "RunRequest") -> tuple[Path, AppRecord, Statistics]:
        run_dir = runs_dir / request.run_id
        prepared = prepare_for(request, build, image)
        if not is_done(run_dir, prepared.run_key):
            execute(request, run_dir, build, image, force=True, prepared=prepared)
        try:
            verdict = RunDir(run_dir).judge()
            record = verdict.only_record()
        except Excluded as e:
            raise AmpkitError(
                f"{run_dir}: made again, and still does not count: {e}",
                "see its console.log and manifest.json; a profile is made of runs that count only",
            ) from e
        _check_counts(run_dir, record)
        _, over = statistics_counts(verdict.statistics)
        if request.roi_stats and over != OVER_REGION:
            raise AmpkitError(
                f"{run_dir}: asked for its region's statistics and has none",
                "see its console.log: a workload marks them as its region begins and ends",
            )
        return run_dir, record, verdict.statistics

    entries = []
    for app in apps:
        times: dict[str, list[int]] = {"big": [], "little": []}
        runs: dict[str, list[str]] = {"big": [], "little": []}
        pmu: dict[str, list[dict[str, float]]] = {"big": [], "little": []}
        epi: dict[str, list[float]] = {"big": [], "little": []}
        alone = alone_mix(holder, app)
        for kind, plat in platforms.items():
            for rep in range(repetitions):
                passes = []
                for k, events in enumerate(guest_sets or ((),)):
                    request = RunRequest(
                        platform=plat,
                        policy=BASELINE,
                        mix=alone if k == 0 else replace(alone, name=f"{alone.name}-pmu{k}"),
                        repetition=rep,
                        engine=engine,
                        method="once",
                        kernel_variant=kernel_variant,
                        extra_cmdline=cmdline,
                        pmu_events=events,
                        # the statistics' counts of the region alone, as the
                        # speedup is its time (gem5; the kit's workloads and
                        # its PARSEC hooks mark them)
                        roi_stats=bool(pmu_sets) and from_statistics,
                    )
                    passes.append(run(request))
                run_dir, record, statistics = passes[0]
                times[kind].append(record.turnaround_ns)
                runs[kind].append(run_dir.name)
                if pmu_sets and from_statistics:
                    pmu[kind].append(statistics_counts(statistics)[0])
                    epi[kind].extend(_epi_nj(statistics))
                elif pmu_sets:
                    pmu[kind].append(_merged([_counted(r) for _, r, _ in passes]))
        entries.append(
            Entry(
                app=unhinted(app),
                big_ns=tuple(times["big"]),
                little_ns=tuple(times["little"]),
                big_runs=tuple(runs["big"]),
                little_runs=tuple(runs["little"]),
                big_pmu=_mean_counts(pmu["big"]),
                little_pmu=_mean_counts(pmu["little"]),
                big_epi_nj=_mean_if_each(epi["big"], repetitions),
                little_epi_nj=_mean_if_each(epi["little"], repetitions),
            )
        )
    return Profile(engine=engine, cpus=cpus, entries=tuple(entries))


#: What a profile's PMU counts cover (its provenance's "pmu" entry)
OVER_REGION = "the engine's statistics over each application's region of interest"
OVER_INTERVAL = "the engine's statistics over each run's measured interval"


def statistics_counts(statistics: Statistics) -> tuple[dict[str, float], str]:
    """Every PMU event on all a run's CPUs as the engine's statistics count
    it (ampkit.gem5stats.PMU_STATS), and what they cover: the application's
    region of interest where the run marked it (RunRequest.roi_stats: the
    work its speedup times, without its start-up and self-check), else the
    measured interval (the whole process, with the little the runner and
    the kernel did beside it); empty without statistics."""
    measured = statistics.measured or {}
    region = measured.get("roi")
    if isinstance(region, dict) and isinstance(region.get("pmu"), dict):
        return dict(region["pmu"]), OVER_REGION
    counts = measured.get("pmu")
    return (dict(counts), OVER_INTERVAL) if isinstance(counts, dict) else ({}, "")


def from_runs(root: Path) -> Profile:
    """The profile the sound alone runs under ``root`` give, without
    running anything: each application's runs on big CPUs only (<N>B0L)
    and on as many little ones (0B<N>L), its PMU events from the engine's
    statistics (statistics_counts) and, on gem5, the big cluster's energy per
    instruction. Applications measured on one side only are left out."""
    from ampkit.rundir import find_run_dirs

    found, _ = find_run_dirs(root)
    sides: dict[App, dict[str, list[tuple[str, int, dict[str, float], list[float]]]]] = {}
    engines, cpus, machines = set(), set(), set()
    covers: dict[str, list[str]] = {}
    for path in sorted(found):
        run = RunDir(path)
        try:
            verdict = run.judge()
            record = verdict.only_record()
        except Excluded:
            continue
        info = verdict.info
        if info.big is None or info.little is None or (info.big and info.little):
            continue
        kind = "big" if info.big else "little"
        # what ran, as the manifest describes its mix (as ampkit.behaviour reads it)
        (described,) = info.mix_apps
        app = App(
            program=record.program,
            threads=record.threads,
            size=int(described.get("size") or 0),
            args=tuple(str(a) for a in described.get("args") or ()),
        )
        epi = _epi_nj(verdict.statistics)
        runs = sides.setdefault(app, {"big": [], "little": []})[kind]
        counts, over = statistics_counts(verdict.statistics)
        runs.append((path.name, record.turnaround_ns, counts, epi))
        if over:
            covers.setdefault(over, []).append(path.name)
        engines.add(info.engine)
        cpus.add(info.big or info.little)
        machines.add(_machine_of(run) if not info.calibration_stale else "")
    entries = []
    for app, by_kind in sides.items():
        big, little = by_kind["big"], by_kind["little"]
        if not big or not little:
            continue
        entries.append(
            Entry(
                app=app,
                big_ns=tuple(t for _, t, _, _ in big),
                little_ns=tuple(t for _, t, _, _ in little),
                big_runs=tuple(n for n, _, _, _ in big),
                little_runs=tuple(n for n, _, _, _ in little),
                big_pmu=_mean_counts([c for _, _, c, _ in big if c]),
                little_pmu=_mean_counts([c for _, _, c, _ in little if c]),
                big_epi_nj=_mean_if_each([e for _, _, _, es in big for e in es], len(big)),
                little_epi_nj=_mean_if_each([e for _, _, _, es in little for e in es], len(little)),
            )
        )
    if not entries:
        raise AmpkitError(
            f"{root}: no application with sound alone runs on big CPUs only and on "
            "little CPUs only",
            "point at the runs 'ampkit profile' made (<N>B0L and 0B<N>L)",
        )
    if len(engines) != 1 or len(cpus) != 1:
        raise AmpkitError(
            f"{root}: runs of {len(engines)} engines and {len(cpus)} CPU counts: "
            "a profile is of one engine and one platform size",
        )
    if len(covers) > 1:
        raise AmpkitError(
            f"{root}: PMU counts over regions of interest ({covers[OVER_REGION][0]}, ...) "
            f"and over whole runs ({covers[OVER_INTERVAL][0]}, ...): rates of the two "
            "differ by the start-up and self-check, and a model would learn the difference",
            "keep the runs of one kind under the folder (ampkit profile makes region runs)",
        )
    provenance = {
        "runs": str(root),
        "pmu": f"{next(iter(covers), OVER_INTERVAL)} (ampkit.gem5stats)",
    }
    if len(machines) == 1 and (machine := machines.pop()):
        provenance["model_sha256"] = machine
    return Profile(
        engine=engines.pop(),
        cpus=cpus.pop(),
        entries=tuple(entries),
        provenance=tuple(provenance.items()),
    )


def _machine_of(run: RunDir) -> str:
    """The simulated machine's model hash the run's calibration record
    holds (ampkit.calibration.model_sha256), or ""."""
    platform = run.manifest().get("platform")
    calibration = platform.get("calibration") if isinstance(platform, dict) else None
    record = calibration.get("record") if isinstance(calibration, dict) else None
    model = record.get("model_sha256") if isinstance(record, dict) else None
    return model if isinstance(model, str) else ""


def _check_counts(run_dir: Path, record: AppRecord) -> None:
    """Refuses counts that cannot be: more instructions counted for the
    application than the engine's statistics say every CPU committed over
    the measured interval. gem5 v24 does that: its PMU zeroes a counter
    when the PMU is enabled again unless the counter was written since it
    last counted (PMU::CounterState::attach), and Linux's perf disables and
    enables the PMU around a switch between two threads that share
    inherited counters without writing them, so perf's next delta gains
    2^31 - 1 (measured once; by the source, again at each such switch)."""
    counted = record.pmu.get(INSTRUCTIONS)
    scaled = counted.scaled if counted else None
    if scaled is None:
        return
    try:
        cpus = RunDir(run_dir).gem5_summary().get("cpus") or []
    except Excluded:
        return  # an engine without statistics: nothing to check against
    committed = sum(float(c.get("insts", 0)) for c in cpus if isinstance(c, dict))
    if committed and scaled > committed:
        raise AmpkitError(
            f"{run_dir}: the guest's PMU counted {scaled:.0f} instructions for "
            f"{record.name}, and the CPUs committed {committed:.0f} in all: the "
            "counters were reset under the kernel (gem5 v24's PMU zeroes a counter "
            "when the PMU is enabled again, which perf does at switches between "
            "threads that share counters)",
            "profile without counting (--no-pmu), or with a gem5 whose PMU keeps "
            "a counter's value when it is enabled again",
        )


def _merged(passes: list[dict[str, float]]) -> dict[str, float]:
    """One application's counts from the runs of each event set: the first
    run's, and each later run's other events brought to the first run's
    instructions (each rate stays its own run's); none without them."""
    first = passes[0]
    instructions = first.get(INSTRUCTIONS, 0.0)
    merged = dict(first)
    for more in passes[1:]:
        theirs = more.get(INSTRUCTIONS, 0.0)
        if instructions <= 0 or theirs <= 0:
            continue
        for name, count in more.items():
            merged.setdefault(name, count * instructions / theirs)
    return merged


def _counted(record: AppRecord) -> dict[str, float]:
    """The events the run counted, each over the whole process."""
    return {name: scaled for name, c in record.pmu.items() if (scaled := c.scaled) is not None}


def _mean_counts(per_run: list[dict[str, float]]) -> tuple[tuple[str, float], ...]:
    """Each event counted in every repetition: the mean, a whole count (as
    the profile writes it), in ampkit.pmu's order."""
    if not per_run:
        return ()
    return tuple(
        (name, float(round(sum(run[name] for run in per_run) / len(per_run))))
        for name in PMU_NAMES
        if all(name in run for run in per_run)
    )


def _mean_if_each(values: list[float], runs: int) -> float | None:
    """The mean of one value per run, or None unless every run gave one."""
    return sum(values) / len(values) if values and len(values) == runs else None


def _epi_nj(statistics: Statistics) -> list[float]:
    """The cluster's nJ per instruction (a profile's runs use CPUs of one
    type, so one cluster) over a gem5 run's region of interest where the
    run marked it (as its PMU counts: statistics_counts), else over its
    measured interval (its CPUs and L2, by the power model); none for a run
    without gem5's statistics or a power model. From the
    statistics themselves (RunDir.statistics), not the summary the run
    wrote, so that runs made before the region's energy was summed have it."""
    summary = statistics.measured
    if not summary:
        return []
    region = summary.get("roi")
    if isinstance(region, dict) and "clusters" in region:
        clusters = region.get("clusters") or []
    else:
        clusters = summary.get("clusters") or []
    if len(clusters) != 1:
        return []
    energy, insts = clusters[0].get("energy_j"), clusters[0].get("insts")
    if not isinstance(energy, int | float) or not isinstance(insts, int | float):
        return []
    if not math.isfinite(energy) or insts <= 0:
        return []
    return [energy / insts * 1e9]
