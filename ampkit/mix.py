"""Workload mixes: which programs run together, with how many threads and what input.

A mix is a TOML file in workloads/mixes/ (format in workloads/README.md):

    description = "..."
    category = "synchronisation"      # synchronisation | communication | compute

    [[app]]
    program = "compute"               # a workload in workloads/src (or ampkit-probe)
    threads = 2
    size = 20000                      # its -n; absent: the engine's size (ampkit/sizes.py)
    speedup = 1.8                     # optional predicted big-over-little speedup
    epi_big_nj = 0.45                 # optional energy per instruction on a big CPU
                                      # (nJ; the eef policy ranks by speedup / this)

    [[app]]
    program = "parsec.blackscholes"   # PARSEC / SPLASH-2x: parsec.<name>, splash2x.<name>
    threads = 2                       # (built by 'ampkit parsec build', ampkit/parsec.py)
    input = "simsmall"                # an input set instead of a size

Errors name the file, the line and the key.
"""

import hashlib
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit.errors import AmpkitError
from ampkit.paths import MIXES, WORKLOADS
from ampkit.tomlfile import Key, TomlFile

CATEGORIES = ("synchronisation", "communication", "compute")
MAX_THREADS = 1024
_MIX_KEYS = {"description", "category", "profile", "app"}
_APP_KEYS = {"program", "threads", "size", "args", "speedup", "epi_big_nj", "input"}
#: PARSEC's input sets (ampkit/parsec.py keeps the same list).
INPUT_SETS = ("test", "simdev", "simsmall", "simmedium", "simlarge", "native")
#: The benchmark suites a program name may start with (``parsec.<name>``).
SUITES = ("parsec", "splash2x")
_TOKEN = re.compile(r"^[A-Za-z0-9._,:=+/-]+$")


def suite_program(program: str) -> tuple[str, str] | None:
    """``("parsec", "blackscholes")`` for ``parsec.blackscholes``; None if not a suite program."""
    suite, dot, name = program.partition(".")
    if dot and suite in SUITES and name:
        return suite, name
    return None


@dataclass(frozen=True)
class App:
    program: str
    threads: int
    size: int
    args: tuple[str, ...] = ()
    speedup: float | None = None
    input: str | None = None  # PARSEC / SPLASH-2x programs: the input set (size unused)
    #: predicted energy per instruction on a big CPU, nJ (prctl
    #: PR_SCHED_AMP_SET_EPI_BIG takes it in pJ); None: none given
    epi_big_nj: float | None = None

    def __post_init__(self) -> None:
        # an application built in code meets the bounds a mix file's does,
        # here rather than when its run description is written
        if self.speedup is not None and not SPEEDUP_MIN <= self.speedup <= SPEEDUP_MAX:
            raise AmpkitError(
                f"{self.program}: a speedup of {self.speedup:g}: the kernel takes "
                f"{SPEEDUP_MIN:g} to {SPEEDUP_MAX:g}",
                "give a speedup in that range, or none",
            )
        if self.epi_big_nj is not None and not EPI_NJ_MIN <= self.epi_big_nj <= EPI_NJ_MAX:
            raise AmpkitError(
                f"{self.program}: an energy per instruction of {self.epi_big_nj:g} nJ: the "
                f"kernel takes {EPI_NJ_MIN:g} to {EPI_NJ_MAX:g} nJ (1 to 1,000,000 pJ)",
                "give epi_big_nj in that range, or none",
            )

    @property
    def from_suite(self) -> bool:
        """A PARSEC or SPLASH-2x program, run from the benchmark disk."""
        return self.input is not None

    @property
    def engine_sized(self) -> bool:
        """Whether the mix leaves the size to the engine (no ``size`` written):
        ampkit.sizes.sized_for() gives it the engine's before it runs."""
        return not self.from_suite and self.size == ENGINE_SIZE

    @property
    def argv(self) -> tuple[str, ...]:
        if self.from_suite:
            raise AmpkitError(f"{self.program}: its command line comes from the PARSEC image")
        if self.engine_sized:
            raise AmpkitError(
                f"{self.program}: no size yet: the engine's is given by ampkit.sizes.sized_for()"
            )
        return (f"/bin/{self.program}", "-t", str(self.threads), "-n", str(self.size), *self.args)

    @property
    def workload_size(self) -> str:
        """The size or input set, as the names of reference runs carry it."""
        return self.input if self.input is not None else f"n{self.size}"

    @property
    def args_digest(self) -> str:
        """Its arguments as run names carry them, which may hold any
        character: the first 8 hex digits of their SHA-256; empty without
        arguments."""
        if not self.args:
            return ""
        return hashlib.sha256(" ".join(self.args).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Mix:
    name: str
    description: str
    category: str
    apps: tuple[App, ...]
    source: Path
    #: the speedup profile the mix's speedup hints are measured in, where it
    #: names its own (its key ``profile``, relative to the mix file), and
    #: where a policy that weighs energies per instruction takes them when
    #: the run names no profile; None: the shipped table's hints
    profile: Path | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "source": self.source.name,
            "apps": [
                {
                    "program": a.program,
                    "threads": a.threads,
                    "size": a.size,
                    "args": list(a.args),
                    "speedup": a.speedup,
                    **({"input": a.input} if a.input is not None else {}),
                    **({"epi_big_nj": a.epi_big_nj} if a.epi_big_nj is not None else {}),
                }
                for a in self.apps
            ],
        }


#: The predicted speedups the kernel accepts (prctl PR_SCHED_AMP_SET_SPEEDUP).
SPEEDUP_MIN = 0.25
SPEEDUP_MAX = 8.0
#: The energies per instruction it accepts, in nJ (PR_SCHED_AMP_SET_EPI_BIG
#: takes 1 to 1,000,000 pJ).
EPI_NJ_MIN = 0.001
EPI_NJ_MAX = 1000.0

#: Guest programs beside the workloads that a mix may run (workloads/runner).
GUEST_TOOLS = ("ampkit-probe", "ampkit-schedtest")


#: The size of an app whose mix writes none: the engine chooses it when the
#: mix runs (ampkit.sizes.sized_for: CATALOGUE_SIZES on QEMU, the measured
#: cost lines on gem5).
ENGINE_SIZE = 0

#: A size per workload at which it runs in a fraction of a second on QEMU:
#: for the guest tests and the workload benchmark (defaults are in each
#: program's -h text).
SMALL_SIZES = {
    "amdahl": 512,
    "barrier": 2048,
    "chase": 4096,
    "compute": 4000,
    "contend": 63,
    "intmark": 200,
    "latency": 64,
    "pipeline": 40,
    "stages": 50,
    "stream": 16384,
}


#: The size each workload has in the catalogue's mixes: a few tenths of a
#: second on QEMU, a size gem5 can simulate in hours rather than days.
CATALOGUE_SIZES = {
    "amdahl": 1024,
    "barrier": 4096,
    "chase": 8192,
    "compute": 8000,
    "contend": 125,
    "intmark": 2000,
    "latency": 128,
    "pipeline": 100,
    "stages": 100,
    "stream": 32768,
}

#: Prior big-over-little speedups, for a program no measured table covers:
#: the 2.0 / 1.2 GHz clock ratio (1.67) times a guess of the out-of-order
#: core's IPC gain for the pattern (high for independent arithmetic, low
#: where memory latency or waiting dominates). The catalogue's hints come
#: from the shipped gem5 table (ampkit.profile.SHIPPED_PROFILE) instead.
PRIOR_SPEEDUPS = {
    "amdahl": 2.0,
    "barrier": 1.9,
    "chase": 1.3,
    "compute": 2.2,
    "contend": 1.5,
    "intmark": 2.0,
    "latency": 1.2,
    "pipeline": 1.6,
    "stages": 1.7,
    "stream": 1.4,
}

#: The programs that give a category its character: a generated mix draws
#: its first half from its category's programs (a compute mix draws all).
CATEGORY_PROGRAMS = {
    "synchronisation": ("amdahl", "barrier", "contend", "stages"),
    "communication": ("barrier", "pipeline", "stages"),
    "compute": ("chase", "compute", "stream"),
}

#: Workloads that calibrate the platform (ampkit platform calibrate) rather
#: than stand for a category: generated mixes do not draw them.
CALIBRATION_PROGRAMS = ("intmark",)

#: Fewest threads a workload accepts (stages needs one per stage).
MIN_THREADS = {"stages": 3}


def known_programs() -> list[str]:
    return sorted([*(p.stem for p in (WORKLOADS / "src").glob("*.c")), *GUEST_TOOLS])


def check_program(toml: TomlFile, key: Key, programs: Sequence[str]) -> str:
    """The program named at ``key`` of a mix or profile: one of ``programs``
    (known_programs()) or a suite's benchmark, parsec.<name> or splash2x.<name>."""
    hint = f"workloads: {', '.join(programs)}; PARSEC: parsec.<name>, splash2x.<name>"
    if toml.get(key) is None:
        toml.fail(key, "is missing", hint=hint)
    program = toml.get(key)
    if not isinstance(program, str):
        toml.fail(key, f"must be a string naming a program, not {program!r}", hint=hint)
    if program.partition(".")[0] in SUITES:
        if suite_program(program) is None:
            toml.fail(key, f"names no benchmark: {program!r}", hint=hint)
    elif program not in programs:
        toml.fail(key, f"names no workload: {program!r}", hint=hint)
    return program


def mix_names() -> list[str]:
    return sorted(p.stem for p in MIXES.glob("*.toml"))


def load_mix(name_or_path: str) -> Mix:
    """A mix by name (workloads/mixes/<name>.toml) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = MIXES / f"{name_or_path}.toml"
    if not path.is_file():
        raise AmpkitError(
            f"no mix '{name_or_path}'",
            f"valid names: {', '.join(mix_names())}, or a path to a .toml file",
        )
    toml = TomlFile(path)
    toml.only_keys((), _MIX_KEYS, "a mix key")
    category = toml.string(("category",), choices=CATEGORIES)
    description = toml.string(("description",), default="")
    profile = None
    if "profile" in toml.data:
        profile = (path.resolve().parent / toml.string(("profile",))).resolve()
        if not profile.is_file():
            toml.fail(
                ("profile",),
                f"names no file: {profile}",
                hint="a speedup profile (ampkit profile), relative to the mix file",
            )
    specs = toml.tables(("app",))
    programs = known_programs()
    apps = []
    for i, spec in enumerate(specs):
        toml.only_keys(("app", i), _APP_KEYS, "an app key")
        program = check_program(toml, ("app", i, "program"), programs)
        suite = suite_program(program) is not None
        threads = toml.integer(("app", i, "threads"), low=1, high=MAX_THREADS)
        input_set = spec.get("input")
        if suite:
            if input_set not in INPUT_SETS:
                toml.fail(
                    ("app", i, "input" if "input" in spec else "program"),
                    f"a PARSEC program needs an input set, not {input_set!r}",
                    hint=f"input = one of {', '.join(INPUT_SETS)}",
                )
            for key in ("size", "args"):
                if key in spec:
                    toml.fail(
                        ("app", i, key), "a PARSEC program takes its input set, not a size or args"
                    )
            size = 0
        else:
            if input_set is not None:
                toml.fail(
                    ("app", i, "input"), "only PARSEC and SPLASH-2x programs take an input set"
                )
            # absent: the engine's size for the program (ampkit.sizes), set per run
            size = toml.integer(("app", i, "size"), low=1, high=1 << 40, default=ENGINE_SIZE)
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(
            isinstance(a, str) and _TOKEN.match(a) for a in args
        ):
            toml.fail(("app", i, "args"), "must be a list of strings without spaces")
        speedup = spec.get("speedup")
        if speedup is not None:
            speedup = toml.number(("app", i, "speedup"), low=SPEEDUP_MIN, high=SPEEDUP_MAX)
        epi = spec.get("epi_big_nj")
        if epi is not None:
            epi = toml.number(("app", i, "epi_big_nj"), low=EPI_NJ_MIN, high=EPI_NJ_MAX)
        apps.append(
            App(
                program=program,
                threads=threads,
                size=size,
                args=tuple(args),
                speedup=None if speedup is None else float(speedup),
                input=None if input_set is None else str(input_set),
                epi_big_nj=None if epi is None else float(epi),
            )
        )
    return Mix(
        name=path.stem,
        description=str(description),
        category=str(category),
        apps=tuple(apps),
        source=path.resolve(),
        profile=profile,
    )


def generate_mix(
    category: str, napps: int, seed: int, speedups: dict[str, float] | None = None
) -> Mix:
    """A mix of ``napps`` applications in ``category``, the same for the same
    seed: the first half (all, for compute) from the category's programs,
    the rest from every workload; 2 to 4 threads each in a mix of two, 2 in
    larger ones; catalogue sizes; hints from ``speedups`` (a measured
    profile) or the priors."""
    if category not in CATEGORIES:
        raise AmpkitError(f"unknown category '{category}'", f"valid: {', '.join(CATEGORIES)}")
    if not 1 <= napps <= 16:
        raise AmpkitError(f"a generated mix has 1 to 16 applications, not {napps}")
    rng = random.Random(f"{category}/{napps}/{seed}")
    everything = sorted(p for p in CATALOGUE_SIZES if p not in CALIBRATION_PROGRAMS)
    own = CATEGORY_PROGRAMS[category]
    half = napps if category == "compute" else (napps + 1) // 2
    hints = {**PRIOR_SPEEDUPS, **(speedups or {})}
    apps = []
    for i in range(napps):
        program = rng.choice(own if i < half else everything)
        threads = rng.choice((2, 3, 4)) if napps <= 2 else 2
        threads = max(threads, MIN_THREADS.get(program, 1))
        apps.append(
            App(
                program=program,
                threads=threads,
                size=ENGINE_SIZE,  # the engine's, as the catalogue's mixes
                speedup=round(min(SPEEDUP_MAX, max(SPEEDUP_MIN, hints[program])), 3),
            )
        )
    short = {"synchronisation": "sync", "communication": "comm", "compute": "compute"}
    name = f"gen-{short[category]}{napps}-s{seed}"
    return Mix(
        name=name,
        description=f"generated: {category}, {napps} applications, seed {seed}",
        category=category,
        apps=tuple(apps),
        source=Path(f"{name}.toml"),
    )


_PROGRAM_LINE = re.compile(r'^program\s*=\s*"([^"]+)"')
_SPEEDUP_LINE = re.compile(r"^speedup\s*=\s*[^#]*(#.*)?$")


def rehint_text(text: str, hints: dict[str, float]) -> str:
    """A mix file's text with each application's ``speedup`` set from
    ``hints`` (per program), clamped to what the kernel accepts; comments
    and everything else kept. An application without a hint keeps its line;
    one with a hint and no line gets one at the end of its table.
    (Energies per instruction are not written: a run of a policy that
    weighs them takes them from a profile, so that every other run's
    description stays what it was.)"""
    out: list[str] = []
    missing: str | None = None  # a program whose hint is not written yet

    def close_table() -> None:
        if missing is not None:
            at = len(out) - 1 if out and out[-1] == "" else len(out)
            out.insert(at, _speedup_line(hints[missing]))

    for original in text.splitlines():
        line, stripped = original, original.strip()
        program = _PROGRAM_LINE.match(stripped)
        speedup = _SPEEDUP_LINE.match(stripped)
        if stripped.startswith("["):
            close_table()
            missing = None
        elif program:
            missing = program.group(1) if program.group(1) in hints else None
        elif speedup and missing is not None:
            comment = f"   {speedup.group(1)}" if speedup.group(1) else ""
            line = _speedup_line(hints[missing]) + comment
            missing = None
        out.append(line)
    close_table()
    return "\n".join(out) + "\n"


def _speedup_line(value: float) -> str:
    return f"speedup = {round(min(SPEEDUP_MAX, max(SPEEDUP_MIN, value)), 3)!r}"


def render_mix(mix: Mix, at: Path | None = None) -> str:
    """The mix as a TOML file that load_mix() reads back to the same mix,
    written at ``at`` (where a profile it names is relative to; without
    it, the profile's absolute path)."""
    lines = [f"description = {json.dumps(mix.description)}", f'category = "{mix.category}"']
    if mix.profile is not None:
        profile = str(mix.profile)
        if at is not None:
            profile = os.path.relpath(mix.profile, at.resolve().parent)
        lines.append(f"profile = {json.dumps(profile, ensure_ascii=False)}")
    for app in mix.apps:
        lines += ["", "[[app]]", f'program = "{app.program}"', f"threads = {app.threads}"]
        if app.input is not None:
            lines.append(f'input = "{app.input}"')
        elif not app.engine_sized:
            lines.append(f"size = {app.size}")
        if app.args:
            lines.append(f"args = {json.dumps(list(app.args))}")
        if app.speedup is not None:
            lines.append(f"speedup = {app.speedup!r}")
        if app.epi_big_nj is not None:
            lines.append(f"epi_big_nj = {app.epi_big_nj!r}")
    return "\n".join(lines) + "\n"
