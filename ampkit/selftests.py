"""The kernel's own futex selftests, built for the guest from the kit's kernel source.

The source is the tree the kernel build unpacks from Debian's
``linux-source-6.1`` (``kernel.SourceTree``): ``tools/testing/selftests/futex``,
which the kit's patch series does not touch. SConstruct compiles each program
that ``functional/Makefile`` lists (``TEST_GEN_PROGS``) statically with the
kit's cross compiler and the Makefile's own flags, and writes ``cases``, the
invocations of ``functional/run.sh`` in order, with their arguments; both go
into the initramfs under ``/selftests/futex``. The guest has no shell for
run.sh itself: ``ampkit-selftest`` (workloads/runner) runs the cases as
run.sh would and reports each one's TAP results.

Like the kit's own guest programs, the selftests see the cross toolchain's
kernel headers (``linux-libc-dev-arm64-cross``, Linux 6.1 as well), not
headers installed from the tree: installing them would mean running kbuild
in the shared tree, and its uapi headers would carry whichever series was
applied there last.
"""

import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ampkit import kernel
from ampkit.errors import AmpkitError

#: The suite, inside the kernel tree.
SUITE_DIR = "tools/testing/selftests/futex"
#: Where its programs and ``cases`` are in the guest.
GUEST_DIR = "/selftests/futex"
#: What the programs include besides the C library: the suite's headers and
#: kselftest.h.
INCLUDE_DIRS = (f"{SUITE_DIR}/include", "tools/testing/selftests")
#: The Makefile's CFLAGS (without -g: debug information would only fatten
#: the initramfs) and LDLIBS; the kit links statically.
CFLAGS = ("-O2", "-Wall", "-D_GNU_SOURCE=", "-pthread")
LIBS = ("pthread", "rt")

#: run.sh's only variable: "-c" (colour) when tput works, which it never
#: does in the guest.
_RUN_SH_VARIABLES = {"$COLOR"}


@dataclass(frozen=True)
class Case:
    """One invocation in run.sh: where it is, the program and its arguments."""

    line: int
    argv: tuple[str, ...]

    @property
    def program(self) -> str:
        return self.argv[0]

    @property
    def command(self) -> str:
        """As ampkit-selftest reports it: the program and its arguments."""
        return " ".join(self.argv)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def source_tree() -> Path:
    """The root of the kit's kernel source, unpacked first if need be.

    Refuses a tree whose last applied series touched the suite (the kit's
    own series never does): its files would not be Debian's.
    """
    inputs = kernel.KernelInputs.discover("default")
    for patch in inputs.patches:
        if any(p.startswith("tools/testing/selftests/") for p in kernel.touched_files(patch)):
            raise AmpkitError(
                f"{patch.name} changes the selftests; the kit builds them from Debian's source",
                "keep tools/testing/selftests out of the series",
            )
    tree = kernel.SourceTree(inputs)
    if not (tree.src / "Makefile").is_file():
        with tree.locked(_say):
            tree.unpack(_say)
    if tree.state_file.is_file():
        touched = json.loads(tree.state_file.read_text()).get("touched", [])
        patched = [p for p in touched if p.startswith("tools/testing/selftests/")]
        if patched:
            raise AmpkitError(
                f"the series last applied in {tree.src} changed {', '.join(patched)}",
                "build the kernel from this checkout first ('ampkit build kernel')",
            )
    return tree.src


def programs(makefile: str, origin: str = "Makefile") -> list[str]:
    """TEST_GEN_PROGS of a selftest Makefile, in order."""
    joined = makefile.replace("\\\n", " ")
    match = re.search(r"^TEST_GEN_PROGS\s*:?=(.*)$", joined, re.MULTILINE)
    if not match or not match.group(1).split():
        raise AmpkitError(f"{origin} lists no TEST_GEN_PROGS")
    return match.group(1).split()


def parse_run_sh(text: str, known: list[str], origin: str = "run.sh") -> list[Case]:
    """The test programs run.sh runs, in order, with their arguments.

    Every line that starts with ``./`` is an invocation; ``$COLOR`` is left
    out (empty in the guest); any other variable, or a program the Makefile
    does not build, is an error rather than a guess.
    """
    cases = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line.startswith("./"):
            continue
        words = [w for w in shlex.split(line, comments=True) if w not in _RUN_SH_VARIABLES]
        program = words[0].removeprefix("./")
        if program not in known:
            raise AmpkitError(
                f"{origin}:{lineno}: runs {program}, which the Makefile does not build"
            )
        unknown = [w for w in words[1:] if "$" in w or not re.fullmatch(r"[\w.,=+-]+", w)]
        if unknown:
            raise AmpkitError(f"{origin}:{lineno}: cannot pass on {' '.join(unknown)}")
        cases.append(Case(lineno, (program, *words[1:])))
    if not cases:
        raise AmpkitError(f"{origin} runs no test program")
    return cases


def cases_text(cases: list[Case]) -> str:
    """The ``cases`` file ampkit-selftest reads: ``<line> <program> <args...>``."""
    return "".join(f"{c.line} {c.command}\n" for c in cases)


def write_cases(run_sh: Path, makefile: Path, out: Path) -> None:
    known = programs(makefile.read_text(), str(makefile))
    cases = parse_run_sh(run_sh.read_text(), known, str(run_sh))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(cases_text(cases))


# --- what ampkit-selftest reports ---------------------------------------------


@dataclass(frozen=True)
class Result:
    """One case in one phase, as ampkit-selftest saw it."""

    phase: str
    line: int  # in run.sh
    command: str
    exit: int  # -1 when a signal ended it
    ms: float
    tap: str  # one letter per TAP result line: P ok, F not ok, S skip, X xfail, E error
    lines: tuple[str, ...]  # those lines
    signal: int = 0
    timed_out: bool = False
    tail: str | None = None  # the end of its output, when it did not pass

    @property
    def passed(self) -> bool:
        """Exit status 0 and at least one TAP result, every one of them ok."""
        return (
            self.exit == 0
            and not self.signal
            and not self.timed_out
            and bool(self.tap)
            and set(self.tap) == {"P"}
        )

    @property
    def tests(self) -> list[tuple[str, str]]:
        """(letter, TAP line) for each result the case printed."""
        return list(zip(self.tap, self.lines, strict=False))

    def describe(self) -> str:
        how = "timed out" if self.timed_out else f"signal {self.signal}" if self.signal else ""
        how = how or f"exit {self.exit}"
        return f"{self.phase}: run.sh:{self.line} {self.command}: {how}, TAP {self.tap or '-'}"


@dataclass(frozen=True)
class Phase:
    name: str  # a policy, "flip" or "-"
    policy: str | None  # in force when it started
    policy_after: str | None
    ms: float
    results: tuple[Result, ...]
    flips: int | None = None  # flip only: policy writes while the cases ran
    flip_errno: int | None = None


@dataclass(frozen=True)
class Report:
    suite: str
    timeout_s: int
    phases: tuple[Phase, ...]
    done: bool  # every phase ran to the end

    @property
    def results(self) -> list[Result]:
        return [r for p in self.phases for r in p.results]


def parse_report(output: str) -> Report:
    """ampkit-selftest's output (JSON lines) as phases of results."""
    records = []
    for i, text in enumerate(output.splitlines()):
        try:
            records.append(json.loads(text))
        except ValueError:
            # the runner keeps the output's tail: its first line may be cut
            if i != 0:
                raise AmpkitError(f"ampkit-selftest's output line {i + 1} is not JSON") from None
    headers = [r for r in records if "cases" in r]
    if not headers:
        raise AmpkitError("ampkit-selftest's output has no header (cut short, or not its output)")
    header = headers[-1]
    cases = [(int(c["line"]), str(c["argv"])) for c in header["cases"]]
    shown: list[tuple[str, ...]] = [() for _ in cases]
    phases = []
    for rec in records:
        if "phase" not in rec:
            continue
        if len(rec["results"]) != len(cases):
            raise AmpkitError(
                f"phase {rec['phase']}: {len(rec['results'])} results, {len(cases)} cases"
            )
        results = []
        for i, (r, (line, command)) in enumerate(zip(rec["results"], cases, strict=True)):
            if "lines" in r:
                shown[i] = tuple(r["lines"].split("\n")) if r["lines"] else ()
            results.append(
                Result(
                    phase=rec["phase"],
                    line=line,
                    command=command,
                    exit=int(r["exit"]),
                    ms=float(r["ms"]),
                    tap=str(r["tap"]),
                    lines=shown[i],
                    signal=int(r.get("signal", 0)),
                    timed_out=bool(r.get("timed_out", False)),
                    tail=r.get("tail"),
                )
            )
        phases.append(
            Phase(
                name=rec["phase"],
                policy=rec.get("policy"),
                policy_after=rec.get("policy_after"),
                ms=float(rec["ms"]),
                results=tuple(results),
                flips=rec.get("flips"),
                flip_errno=rec.get("flip_errno"),
            )
        )
    return Report(
        suite=str(header["suite"]),
        timeout_s=int(header["timeout_s"]),
        phases=tuple(phases),
        done=any(rec.get("done") for rec in records),
    )
