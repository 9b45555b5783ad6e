"""The campaign spec: one TOML file naming a matrix of runs and how to execute it.

    name = "colab-2B2L"
    engine = "qemu"
    platforms = ["2B2L", "1B3L"]
    policies = ["cfs", "colab", "wash"]
    mixes = ["sync2-contend-compute", "category:compute"]   # names, paths, categories
    repetitions = 3
    references = ["alone", "little-only"]    # added for every mix (the default)
    perturb_us = 50      # each app released after a seeded delay of 0-50 us (0: none)
    slice_ms = 20        # gem5: runs in slices of 20 simulated ms that resume (default: one)

    [mix_repetitions]    # mixes run more often than 'repetitions' says
    sync2-contend-compute = 5
    qemu_clock = "icount"  # host (default) | icount: guest time immune to host load
                           # | instructions: 1 ns per instruction, idle time skipped

    [limits]
    mix_limit_s = 120    # seconds the mix may take in the guest
    wall_limit_s = 240   # the engine's wall-clock limit (default: mix_limit_s + allowance)
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
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ampkit import perturb, policies, references
from ampkit import platform as platform_mod
from ampkit.behaviour import Table, load_table, table_path
from ampkit.engines import (
    DEFAULT_ENGINE,
    DEFAULT_GUEST_CLOCK,
    ENGINES,
    get_engine,
    guest_clocks,
    offers_guest_clock,
)
from ampkit.errors import AmpkitError
from ampkit.interference import (
    DEFAULT_THRESHOLD_PCT,
    THRESHOLD_RANGE_PCT,
    Contention,
    load_models,
)
from ampkit.kernel import setup_of
from ampkit.mix import CATEGORIES, Mix, load_mix, mix_names
from ampkit.run import DEFAULT_MIX_LIMIT_S, MAX_SLICE_MS
from ampkit.rundesc import MAX_WARMUP_MS, METHODS
from ampkit.sizes import sized_for
from ampkit.timescale import describe_setup
from ampkit.tomlfile import Key, TomlFile

EXECUTORS = ("local", "slurm")
#: The kernels a campaign may run: the kit's, its debug build (checks, not
#: timings) and its 1000 Hz build (time-scaled runs). Not 'unpatched': it
#: carries no policy but cfs.
KERNEL_VARIANTS = ("default", "debug", "hz1000")
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
    "mix_repetitions": "table: mix name = its own number of repetitions",
    "perturb_us": f"each app released after a seeded delay of 0 to this many us "
    f"(0 to {perturb.MAX_US}; 0, the default: none; ampkit/perturb.py)",
    "references": f"reference kinds: {', '.join(references.KINDS)}",
    "method": f"one of {', '.join(METHODS)}",
    "warmup_ms": "guest milliseconds of warm-up before each run is measured",
    "slice_ms": "gem5: each run in slices of this many simulated ms, each ending with a "
    "checkpoint, so a run longer than a sitting resumes (ampkit/engines/gem5.py)",
    "span_ms": "gem5: simulated ms an app its mix leaves unsized spans alone (ampkit/sizes.py)",
    "behaviour": "gem5: the behaviour table whose cost lines size the apps, measured at the "
    "campaign's kernel and time scale (default: the engine's shipped one; ampkit/behaviour.py)",
    "kernel": f"kernel variant: {', '.join(KERNEL_VARIANTS)}",
    "speedups": "a speedup profile (ampkit profile)",
    "speedup_model": "a speedup model directory (ampkit model train) for the policies named "
    "with +online (ampkit/online.py)",
    "online_period_ms": "with speedup_model: how often the estimates are refreshed (default "
    "WASH's quantum at the campaign's time scale)",
    "interference_models": "an interference model file (ampkit/interference.py) for the "
    "policies that take one (contention), profiled on the campaign's platforms",
    "contention_threshold_pct": "with interference_models: Algorithm 1's threshold S, the "
    f"predicted slowdown in % (default {DEFAULT_THRESHOLD_PCT:g})",
    "parsec": "the PARSEC image manifest (ampkit parsec build)",
    "append": "extra kernel command line",
    "archive": "a folder of this campaign's archived runs (ampkit campaign archive): "
    "runs there made with the planned inputs are taken, not run again",
    "qemu_clock": "QEMU's guest clock: host, icount or instructions (ampkit/engines/qemu.py)",
    "limits": "table",
    "executor": "table",
}
_LIMIT_KEYS = {"mix_limit_s", "wall_limit_s", "memory_mb", "cpus"}
#: [limits] keys of earlier versions, and their names now: still read, with
#: a notice that names the new key, so that a campaign directory made before
#: the rename (its copy of the spec) resumes; not both spellings at once.
_RENAMED_LIMITS = {"mix_s": "mix_limit_s", "run_s": "wall_limit_s"}
_EXECUTOR_KEYS = {"kind", "jobs", "partition", "account", "max_parallel", "sbatch_args"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Limits:
    mix_limit_s: int = DEFAULT_MIX_LIMIT_S
    wall_limit_s: int | None = None
    memory_mb: int = 2048
    cpus: int = 1
    engine: str = DEFAULT_ENGINE  # the campaign's: it sets the default wall limit
    guest_cpus: int = 4  # of the largest platform: gem5's default wall limit grows with it
    warmup_ms: int | None = None  # the spec's; None: the engine's default

    @property
    def warmup(self) -> int:
        """Guest milliseconds of warm-up per run."""
        if self.warmup_ms is not None:
            return self.warmup_ms
        return get_engine(self.engine).default_warmup_ms

    @property
    def wall_s(self) -> int:
        """The engine's wall-clock limit for one run: the given one, or the
        engine's default for the mix limit."""
        return self.wall_limit_s or get_engine(self.engine).default_wall_limit_s(
            self.mix_limit_s, self.guest_cpus, self.warmup
        )

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
    qemu_clock: str = DEFAULT_GUEST_CLOCK
    #: None: the engine's default (ampkit.run.warmup_of)
    warmup_ms: int | None = None
    limits: Limits = field(default_factory=Limits)
    executor: Executor = field(default_factory=Executor)
    #: the largest seeded start delay of an app, in us (ampkit.perturb); 0: none
    perturb_us: int = 0
    #: gem5: each run in slices of this many simulated ms (RunRequest.slice_ms)
    slice_ms: int | None = None
    #: the speedup model directory the +online policies run with (ampkit.online)
    speedup_model: Path | None = None
    #: its daemon's period; None: WASH's quantum at the time scale
    online_period_ms: float | None = None
    #: the interference models the policies that take them run with
    #: (ampkit.interference), with their threshold S
    contention: Contention | None = None
    #: mixes (by name) run a number of times of their own, not ``repetitions``
    mix_repetitions: dict[str, int] = field(default_factory=dict)
    #: The behaviour table that sized the apps its mixes leave unsized (the
    #: campaign pins a copy: ampkit.campaign.runner); None when none was.
    sized_by: Path | None = None
    #: The spec's own behaviour table (``behaviour``), whether or not it
    #: sized anything: the plan's estimate reads it.
    behaviour: Path | None = None
    #: The campaign's archived runs (a folder that may not exist yet): a
    #: run found there with the planned key is taken, not run again, and
    #: 'campaign archive' writes there unless told otherwise.
    archive: Path | None = None
    #: What relative paths in the spec are relative to (its own directory,
    #: or, for a campaign directory's copy, the original spec's).
    base: Path = Path()

    def repetitions_of(self, mix: str) -> int:
        """How many times each (platform, policy) runs the mix named ``mix``."""
        return self.mix_repetitions.get(mix, self.repetitions)


def _mixes(toml: TomlFile, names: list[str], base: Path) -> tuple[Mix, ...]:
    out: dict[str, Mix] = {}
    for i, entry in enumerate(names):
        if entry.startswith("category:"):
            category = entry.removeprefix("category:")
            if category not in CATEGORIES:
                toml.fail(
                    ("mixes", i),
                    f"names an unknown category '{category}'",
                    hint=f"valid: {', '.join(CATEGORIES)}",
                )
            # the catalogue's mixes of the category; Saez et al.'s setting
            # (mixes that name their own profile: fixed sizes, a thread an
            # application) is named by name
            chosen = [
                m
                for m in (load_mix(n) for n in mix_names())
                if m.category == category and m.profile is None
            ]
        elif entry.endswith(".toml"):
            path = Path(entry) if Path(entry).is_absolute() else base / entry
            try:
                chosen = [load_mix(str(path))]
            except AmpkitError as e:
                toml.fail(("mixes", i), f"entry '{entry}': {e.what}", hint=e.hint)
        else:
            if entry not in mix_names():
                toml.fail(
                    ("mixes", i),
                    f"names an unknown mix '{entry}'",
                    hint="see 'ampkit mix list'; a mix file must end in .toml",
                )
            chosen = [load_mix(entry)]
        for mix in chosen:
            if mix.name in out and out[mix.name].source != mix.source:
                toml.fail(("mixes", i), f"holds a second, different mix named '{mix.name}'")
            out.setdefault(mix.name, mix)
    return tuple(out.values())


def _mix_repetitions(toml: TomlFile, mixes: tuple[Mix, ...]) -> dict[str, int]:
    """[mix_repetitions]: a mix of the spec, by name, and how many times it runs."""
    names = [m.name for m in mixes]
    table = toml.only_keys(("mix_repetitions",), names, "a mix of this campaign")
    return {name: toml.integer(("mix_repetitions", name), low=1, high=1000) for name in table}


def _limit_keys(toml: TomlFile) -> dict[str, Key]:
    """Where each limit is written: under its name, or under its old one in
    a spec made before the rename, which is still read so that a campaign
    directory's own copy of the spec resumes (with a notice, each time).
    Errors then name the key and line the user wrote, not the new name."""
    keys: dict[str, Key] = {name: ("limits", name) for name in _LIMIT_KEYS}
    table = toml.get(("limits",))
    if not isinstance(table, dict):
        return keys
    for old, new in _RENAMED_LIMITS.items():
        if old not in table:
            continue
        if new in table:
            toml.fail(("limits", old), f"and {new} are one limit: keep {new}")
        print(
            f"{toml.path}:{toml.line(('limits', old))}: 'limits.{old}' is the old name of "
            f"limits.{new}: read as {new}; rename it (the same limit, "
            f"--{new[:-2].replace('_', '-')} on the command line)",
            file=sys.stderr,
        )
        keys[new] = ("limits", old)
    return keys


def _limits(
    toml: TomlFile, engine: str, platforms: list[platform_mod.Platform], warmup_ms: int | None
) -> Limits:
    key = _limit_keys(toml)
    # the old names in use are accepted, without being offered in the hint of others
    toml.only_keys(("limits",), {str(k[-1]) for k in key.values()} | _LIMIT_KEYS, "a campaign key")
    wall = key["wall_limit_s"]
    limits = Limits(
        mix_limit_s=toml.integer(
            key["mix_limit_s"], low=1, high=7 * 86400, default=DEFAULT_MIX_LIMIT_S
        ),
        wall_limit_s=toml.integer(wall, low=1, high=14 * 86400)
        if toml.get(wall) is not None
        else None,
        memory_mb=toml.integer(key["memory_mb"], low=64, high=1 << 22, default=Limits.memory_mb),
        cpus=toml.integer(key["cpus"], low=1, high=1024, default=1),
        engine=engine,
        guest_cpus=max((p.ncpus for p in platforms), default=Limits.guest_cpus),
        warmup_ms=warmup_ms,
    )
    if limits.wall_limit_s is not None and limits.wall_limit_s <= limits.mix_limit_s:
        toml.fail(
            wall,
            f"({limits.wall_limit_s} s) must leave time beyond {key['mix_limit_s'][-1]} "
            f"({limits.mix_limit_s} s) to boot",
        )
    return limits


def _path_value(toml: TomlFile, key: str, base: Path) -> Path | None:
    """The path a spec's key names, relative to ``base``; None when it is absent."""
    value = toml.get((key,))
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        toml.fail((key,), f"must be a path, not {value!r}")
    return Path(value) if Path(value).is_absolute() else base / value


def _path(toml: TomlFile, key: str, base: Path) -> Path | None:
    """A file the campaign reads: it must exist."""
    path = _path_value(toml, key, base)
    if path is not None and not path.is_file():
        toml.fail((key,), f"names {path}, which does not exist")
    return path


def _folder(toml: TomlFile, key: str, base: Path) -> Path | None:
    """A folder the campaign writes: it need not exist, but must not be a file."""
    path = _path_value(toml, key, base)
    if path is not None and path.exists() and not path.is_dir():
        toml.fail((key,), f"names {path}, which is not a folder")
    return path


def _contention(toml: TomlFile, chosen: list[str], base: Path) -> Contention | None:
    """The interference models and threshold of the policies that take
    them; an error when such a policy has none or none takes them."""
    takers = [p for p in chosen if policies.needs_models(p)]
    if not takers:
        for key in ("interference_models", "contention_threshold_pct"):
            if toml.get((key,)) is not None:
                toml.fail((key,), "no policy takes it: add contention to policies")
        return None
    path = _path(toml, "interference_models", base)
    if path is None:
        toml.fail(
            ("policies",),
            f"names {', '.join(takers)}, which places by interference models, and no "
            "interference_models says which",
            hint='add interference_models = "<a model file profiled on the platforms>"',
        )
    try:
        models = load_models(path)
    except AmpkitError as e:
        toml.fail(("interference_models",), e.what, hint=e.hint)
    low, high = THRESHOLD_RANGE_PCT
    threshold = toml.number(
        ("contention_threshold_pct",), low=low, high=high, default=DEFAULT_THRESHOLD_PCT
    )
    return Contention(models, threshold)


def _own_behaviour(toml: TomlFile, base: Path, engine: str) -> Path | None:
    """The spec's own behaviour table (``behaviour``), checked to exist."""
    if "behaviour" not in toml.data:
        return None
    if not get_engine(engine).models_core_speed:
        toml.fail(
            ("behaviour",),
            f"sizes apps only on an engine that models the cores' speed, not {engine}",
        )
    given = Path(toml.string(("behaviour",)))
    path = given if given.is_absolute() else base / given
    if not path.is_file():
        toml.fail(
            ("behaviour",),
            f"names no file: {path}",
            hint="measure the programs alone at the campaign's setup and write the table "
            "with 'ampkit mix behaviour RUNS --out FILE' (evaluations/gem5-2B2L/calibration)",
        )
    return path


def _pinned_setup(table: Table, setup: tuple[int, int]) -> None:
    """A campaign keeps the sizes its pinned table gave on its first run."""
    if table.kernel_setup != setup:
        raise AmpkitError(
            f"the campaign sized its apps on its first run by the table it pinned, "
            f"{table.source}, measured at {table.setup}, but its spec now runs at "
            f"{describe_setup(*setup)}",
            "a campaign keeps its sizes: start a new campaign directory for the new setup",
        )


def load_spec(path: Path, base: Path | None = None, behaviour: Path | None = None) -> Spec:
    """Read and check a spec; relative paths in it are relative to ``base``
    (default: the spec's directory). Apps its mixes leave unsized are sized
    by the behaviour table ``behaviour`` (a campaign's pinned copy), by
    default the engine's shipped one."""
    if not path.is_file():
        raise AmpkitError(f"no campaign spec at {path}", "give the path of a .toml campaign spec")
    toml = TomlFile(path)
    text, data = toml.text, toml.data
    base = base or path.resolve().parent
    toml.only_keys((), _TOP_KEYS, "a campaign key")
    for key in ("name", "platforms", "policies", "mixes"):
        toml.require((key,), hint=f"{key}: {_TOP_KEYS[key]}")

    name = data["name"]
    if not isinstance(name, str) or not _NAME.match(name):
        toml.fail(("name",), f"must be letters, digits, '.', '_' or '-', not {name!r}")
    engine = toml.string(("engine",), choices=ENGINES, default=DEFAULT_ENGINE)

    platforms = []
    for i, entry in enumerate(toml.strings(("platforms",), non_empty=True)):
        try:
            platforms.append(platform_mod.get_platform(entry))
        except AmpkitError as e:
            toml.fail(("platforms", i), e.what, hint=e.hint)
    chosen_policies = []
    for i, entry in enumerate(toml.strings(("policies",), non_empty=True)):
        if entry not in policies.names():
            toml.fail(
                ("policies", i),
                f"names an unknown policy '{entry}'",
                hint=f"valid: {', '.join(policies.names())}",
            )
        chosen_policies.append(entry)
    speedup_model = _path_value(toml, "speedup_model", base)
    online = [p for p in chosen_policies if policies.uses_online(p)]
    if online and speedup_model is None:
        toml.fail(
            ("policies",),
            f"names {', '.join(online)}, fed by the online speedup model, and no "
            "speedup_model says which",
            hint='add speedup_model = "<the directory ampkit model train wrote>"',
        )
    if speedup_model is not None and not online:
        toml.fail(
            ("speedup_model",),
            f"no policy takes it: name one with {policies.ONLINE_SUFFIX}, such as "
            f"colab{policies.ONLINE_SUFFIX}",
        )
    if speedup_model is not None and not speedup_model.is_dir():
        toml.fail(("speedup_model",), f"names {speedup_model}, which is not a folder")
    online_period_ms = None
    if "online_period_ms" in data:
        if speedup_model is None:
            toml.fail(("online_period_ms",), "needs speedup_model (and a +online policy)")
        online_period_ms = toml.number(("online_period_ms",), low=0.1, high=10_000)
    contention = _contention(toml, chosen_policies, base)
    mixes = _mixes(toml, toml.strings(("mixes",), non_empty=True), base)
    if not mixes:
        toml.fail(("mixes",), "selects no mix")
    span_ms = toml.number(("span_ms",), low=0.1, high=1e6) if "span_ms" in data else None
    if span_ms is not None and not get_engine(engine).models_core_speed:
        toml.fail(
            ("span_ms",),
            f"sizes apps only on an engine that models the cores' speed, not {engine}",
        )
    kernel = toml.string(("kernel",), choices=KERNEL_VARIANTS, default="default")
    append = toml.string(("append",), default="")
    try:
        # thresholds the kernel would refuse, or that cross: said now, not after builds
        policies.colab_thresholds(append)
    except AmpkitError as e:
        toml.fail(("append",), e.what, e.hint)
    own_table = _own_behaviour(toml, base, engine)
    sized_by = None
    if get_engine(engine).models_core_speed and any(a.engine_sized for m in mixes for a in m.apps):
        sized_by = behaviour or own_table or table_path(engine)
    try:
        # the engine's size for every app a mix leaves unsized, before references are named
        sizes = load_table(sized_by) if sized_by is not None else None
        setup = setup_of(kernel, append)
        if sizes is not None and behaviour is not None:
            _pinned_setup(sizes, setup)
        # a table of the campaign's own is measured for its apps: a line of
        # each app's thread count, not the nearest
        exact = own_table is not None
        mixes = tuple(sized_for(m, engine, span_ms, sizes, exact=exact, setup=setup) for m in mixes)
    except AmpkitError as e:
        at: Key = ("behaviour",) if own_table and behaviour is None else ("mixes",)
        toml.fail(at, e.what, hint=e.hint)

    repetitions = toml.integer(("repetitions",), low=1, high=1000, default=1)
    mix_repetitions = _mix_repetitions(toml, mixes)
    perturb_us = toml.integer(("perturb_us",), low=0, high=perturb.MAX_US, default=0)
    refs: tuple[str, ...] = DEFAULT_REFERENCES
    if "references" in data:
        value = data["references"]
        hint = "an empty list runs no references (the report then has no slowdowns)"
        kinds = ", ".join(references.KINDS)
        if not isinstance(value, list):
            toml.fail(("references",), f"must be a list of {kinds}, not {value!r}", hint)
        for i, kind in enumerate(value):
            if kind not in references.KINDS:
                toml.fail(("references", i), f"must be one of {kinds}, not {kind!r}", hint)
        refs = tuple(dict.fromkeys(value))
    method = toml.string(("method",), choices=METHODS, default="restart")
    warmup_ms = (
        toml.integer(("warmup_ms",), low=0, high=MAX_WARMUP_MS) if "warmup_ms" in data else None
    )
    qemu_clock = data.get("qemu_clock", DEFAULT_GUEST_CLOCK)
    clocks = guest_clocks()
    if qemu_clock not in clocks:
        toml.fail(
            ("qemu_clock",),
            f"must be one of {', '.join(clocks)}, not {qemu_clock!r}",
            hint="icount decouples guest time from host load (ampkit/engines/qemu.py)",
        )
    engine_impl = get_engine(engine)
    if not offers_guest_clock(engine_impl, qemu_clock):
        toml.fail(
            ("qemu_clock",),
            f"asks {engine_impl.label} for a guest clock it does not offer",
            hint=f"{engine_impl.label} keeps its own time: drop qemu_clock, or run on "
            "another engine",
        )

    limits = _limits(toml, engine, platforms, warmup_ms)
    slice_ms = None
    if "slice_ms" in data:
        slice_ms = toml.integer(("slice_ms",), low=1, high=MAX_SLICE_MS)
        if not engine_impl.runs_in_slices:
            toml.fail(
                ("slice_ms",),
                f"{engine_impl.label} runs cannot go in slices",
                hint="drop slice_ms: slices are gem5's",
            )

    table = toml.only_keys(("executor",), _EXECUTOR_KEYS, "a campaign key")
    kind = toml.string(("executor", "kind"), choices=EXECUTORS, default="local")
    for key in ("partition", "account"):
        if key in table and (not isinstance(table[key], str) or not table[key]):
            toml.fail(("executor", key), f"must be a non-empty string, not {table[key]!r}")
    executor = Executor(
        kind=kind,
        jobs=toml.integer(("executor", "jobs"), low=1, high=4096) if "jobs" in table else None,
        partition=table.get("partition"),
        account=table.get("account"),
        max_parallel=toml.integer(("executor", "max_parallel"), low=1, high=100000)
        if "max_parallel" in table
        else None,
        sbatch_args=tuple(toml.strings(("executor", "sbatch_args"), non_empty=True))
        if "sbatch_args" in table
        else (),
    )
    return Spec(
        base=base,
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
        speedups=_path(toml, "speedups", base),
        speedup_model=speedup_model,
        online_period_ms=online_period_ms,
        contention=contention,
        parsec=_path(toml, "parsec", base),
        append=append,
        qemu_clock=qemu_clock,
        warmup_ms=warmup_ms,
        limits=limits,
        executor=executor,
        sized_by=sized_by,
        behaviour=own_table,
        perturb_us=perturb_us,
        slice_ms=slice_ms,
        mix_repetitions=mix_repetitions,
        archive=_folder(toml, "archive", base),
    )


def slurm_minutes(limits: Limits) -> int:
    """The job time limit of one run: its wall-clock limit and a margin for
    starting the kit and writing the run directory."""
    return math.ceil((limits.job_s + 120) / 60)
