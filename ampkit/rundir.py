"""The run directory: the one place that writes, reads and judges one.

A run directory holds everything needed to trust, or distrust, a run's
numbers:

    manifest.json   what ran: engine, platform, policy, mix, and the hash of
                    every input (kernel, device tree, initramfs, description)
    run.desc        the run description the guest runner read
    platform.dtb    the device tree the guest booted with
    console.log     the whole guest console, kept whatever happened
    guest.json      what the guest kernel believed: CPUs, capacities,
                    clusters, scheduling domains, AMP policies and their
                    knobs (read again after the mix: amp.knobs_after)
    results.jsonl   one record per application, as the runner printed it
    status          "ok" or "failed: <reason>"

and on gem5, where the console is the boot's (kept with the checkpoint)
followed by the run's:

    m5out/          gem5's output: config.ini/json, stats.txt, stats.json.xz
                    (compressed by the kit: tens of MB as gem5 writes it), the terminal;
                    a run in slices: ampkit-slice.json (where the first slice
                    ended) and slice-<n>/ (each later slice's statistics,
                    terminal and record: gem5stats.read_run joins them)
    gem5.log        gem5's own messages
    gem5.json       the statistics the analysis uses: simulated seconds, per-CPU
                    committed instructions, per-cluster energy, per-application
                    work items (region of interest)

    gem5-command.json  the gem5 command line that ran (a list of them, one
                    a slice, for a run in slices)
    boot-gem5.log,  what a failed checkpoint boot left (its gem5 log and
    boot-system.terminal  terminal), when the boot failed

A run is written under ``<name>.partial`` (``RunWriter``) and renamed when
it is over, so a directory with the final name is always a finished run;
its ``status`` says whether it ended ok (what the summary reports).
Whether a finished run may count in a metric, and if not why, is
``RunDir.judge()`` (``check()``, ``counts()``, ``exclusion()``): the
analysis, the profiles, the references and the benchmarks ask it. Whether a
run is done, so that nobody makes it again, is ``RunDir.done(key)``: it
counts, and the inputs the caller plans made it; a campaign's store and the
references both ask it, so the two cannot disagree. What the manifest
holds is ``Manifest`` (written) and ``RunInfo`` (read).

This module imports nothing of the kit but its file helpers and gem5's
statistics reader, so that whatever reads run directories (the analysis
above all) does not load the engines, the kernel builder or the platform
catalogue.
"""

import json
import lzma
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ampkit import gem5stats
from ampkit.hashing import atomic_write_text, sha256_json, write_json
from ampkit.timescale import DEFAULT_TICK_HZ, timescale_of

#: How a reference run's mix is named (ampkit.references): its application
#: alone, on whichever platform; the analysis tells references by it.
ALONE_PREFIX = "alone-"

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
STATUS = "status"
CONSOLE = "console.log"
GUEST = "guest.json"
#: the online speedup model's log (ampkit.online), where a run had one
ONLINE = "online.jsonl"
#: a user-level policy's daemon's log: its placements and its summary
POLICY_LOG = "policy.jsonl"
GEM5_SUMMARY = "gem5.json"
#: the kernel trace over the measured run, xz-compressed, where the run
#: asked for one (ampkit.tracing)
TRACE = "trace.txt.xz"
RUN_DESC = "run.desc"
DEVICE_TREE = "platform.dtb"
M5OUT = "m5out"
GEM5_LOG = "gem5.log"
GEM5_COMMAND = "gem5-command.json"
#: gem5's terminal in its output directory: the guest console of the run
GEM5_TERMINAL = f"{M5OUT}/system.terminal"
#: What an archived run keeps (ampkit.campaign.archive): its own files...
ARCHIVED = (
    MANIFEST,
    RUN_DESC,
    CONSOLE,
    RESULTS,
    GUEST,
    ONLINE,
    STATUS,
    GEM5_SUMMARY,
    GEM5_LOG,
    GEM5_COMMAND,
    TRACE,
)
#: ...and from m5out/, each of these, xz-compressed where True (the
#: statistics reader, ampkit.gem5stats, reads stats.txt.xz).
ARCHIVED_M5OUT = {
    "system.terminal": False,
    "config.ini": True,
    "stats.txt": True,
    # a slice's end, by which its dumps are told apart (gem5stats.read_run)
    gem5stats.SLICE_RECORD: False,
}
#: What a failed checkpoint boot's files are called in the run directory.
BOOT_PREFIX = "boot-"
PARTIAL_SUFFIX = ".partial"

#: What a QEMU run's timings can and cannot say (summaries and reports say it).
QEMU_NOTICE = (
    "QEMU runs every CPU at the same speed: these timings check that the "
    "pipeline works and say nothing about big.LITTLE performance."
)

#: The manifest's format. 2: the two time limits are mix_limit_s and
#: engine.wall_limit_s (1 called them timeout_s and engine.wall_clock_limit_s).
MANIFEST_VERSION = 2

#: The status of a run that succeeded.
OK = "ok"
#: an application's record in a run with an until line (RunRequest.until):
#: load beside the one whose first run ended the run, stopped there
STOPPED = "stopped"
#: The held-out errors of a contention run's model file, as the runs table
#: names them (RunDir.interference), each from its provenance key
#: (ampkit.corun.fit)
HELD_OUT_ERRORS = (
    ("held_out_co_run_points", "held_out_co_run_mean_abs_points"),
    ("held_out_co_run_time_error", "held_out_co_run_mean_time_error"),
    ("held_out_co_runner_time_error", "held_out_co_runner_mean_time_error"),
)
#: What ``RunDir.status()`` says of a directory without a status file.
NO_STATUS = "failed: no status file (the run did not finish)"


class Excluded(Exception):
    """A run that must not count, and why (the message is the reason)."""


#: Where the key's hashed value holds the engine's wall-clock limit.
_KEY_LIMIT = ("engine", "wall_clock_limit_s")


#: Where the key's hashed value holds the digest of the kernel's inputs.
_KEY_KERNEL = "kernel_digest"
#: The kernel files a run boots, as its manifest records their hashes
#: (``kernel.image_sha256``: QEMU's Image; ``kernel.vmlinux_sha256``: gem5's ELF).
KERNEL_BINARIES = ("image_sha256", "vmlinux_sha256")


@dataclass(frozen=True)
class RunKey:
    """A planned run's key (run.PreparedRun.key), and the keys the same
    run has under another wall-clock limit or another digest of the same
    kernel.

    The key hashes every input of a run and, since the first manifests, the
    engine's wall-clock limit, kept in it so that keys stay stable. The
    limit decides only whether a run is cut short, not what the guest does
    (the engines run it alike under any limit), so a run that ended ok
    under limit L1 is the run a plan with limit L2 asks for, if the planned
    inputs hashed with L1 give its key and its wall time fits in L2: a
    campaign whose limit is raised after runs ran out of it keeps every
    run that finished, and runs again those that were cut short.

    The kernel enters the key as the digest of what it is built from (the
    Debian source package with its revision, the series, the
    configuration, the toolchain), so that a build is found before it is
    made. A new revision of the source package that changes no byte of the
    kernel (the build is reproducible: linux-source-6.1 6.1.192-2 and -3
    gave the same Image and vmlinux) changes the digest and not the run,
    so a run whose recorded kernel files are the planned build's
    (``kernel_binaries``, not hashed) is the run planned if the planned
    inputs with its kernel digest give its key.
    """

    digest: str
    limit_s: float
    #: the hashed value, as canonical JSON
    hashed: str
    #: the planned kernel's files, (KERNEL_BINARIES name, sha256) each;
    #: empty where the plan has no build yet (a digest only matches itself)
    kernel_binaries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(
        cls, value: dict[str, Any], kernel_binaries: tuple[tuple[str, str], ...] = ()
    ) -> "RunKey":
        """The key of ``value``, the run's inputs with its limit at _KEY_LIMIT."""
        limit = value[_KEY_LIMIT[0]][_KEY_LIMIT[1]]
        return cls(sha256_json(value), limit, json.dumps(value, sort_keys=True), kernel_binaries)

    def under(self, limit_s: float) -> str:
        """The key of the same inputs under ``limit_s`` (the number as the
        manifest recorded it: 4084 and 4084.0 hash apart)."""
        return self.variant(limit_s=limit_s)

    def variant(self, *, limit_s: float | None = None, kernel_digest: str | None = None) -> str:
        """The key of the same inputs under ``limit_s``, with the kernel
        known by ``kernel_digest``, where given."""
        value = json.loads(self.hashed)
        if limit_s is not None:
            value[_KEY_LIMIT[0]][_KEY_LIMIT[1]] = limit_s
        if kernel_digest is not None:
            value[_KEY_KERNEL] = kernel_digest
        return sha256_json(value)


#: What a caller plans: a RunKey, or a bare key that only itself matches.
PlannedKey = RunKey | str


#: Why a ``*.partial`` directory, one whose run never finished, does not count.
PARTIAL_REASON = "incomplete: the run did not finish (a .partial directory)"


def partial_of(run_dir: Path) -> Path:
    """Where the run that will be ``run_dir`` is written until it is over."""
    return run_dir.with_name(run_dir.name + PARTIAL_SUFFIX)


def app_key(program: str, threads: int, argv: Iterable[str]) -> str:
    """One application, whatever mix it ran in: references are matched by it."""
    return " ".join([f"{program}/{threads}", *argv])


def instances(programs: Iterable[str]) -> list[tuple[str, int]]:
    """The (program, instance) of each application of a mix, in mix order:
    the guest runner numbers the instances of each program from 0."""
    seen: dict[str, int] = {}
    out = []
    for program in programs:
        n = seen.get(program, 0)
        seen[program] = n + 1
        out.append((program, n))
    return out


def _region(name: str, roi: Any, record: "AppRecord") -> tuple[int, int] | None:
    """The record's region of interest, checked against its process: the
    runner writes "roi_ns": [begin, end], end null if the program never left
    it (then the process's time is all there is)."""
    if roi is None:
        return None
    if not (isinstance(roi, list) and len(roi) == 2):
        raise Excluded(f"corrupt: {name} record: roi_ns is not [begin, end]: {roi!r}")
    begin, end = roi
    if end is None:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (begin, end)):
        raise Excluded(f"corrupt: {name} record: roi_ns is not two integers: {roi!r}")
    if not record.start_ns <= begin < end <= record.end_ns:
        raise Excluded(
            f"corrupt: {name} record: its region of interest [{begin}, {end}] is not "
            f"inside its process [{record.start_ns}, {record.end_ns}]"
        )
    return begin, end


def _per_thread(name: str, key: str, value: Any, threads: int) -> tuple[int, ...]:
    """One integer per thread of the record, or none: absent or null when
    the program reported no thread times (the runner writes null then)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise Excluded(f"corrupt: {name} record: {key} is not a list of integers: {value!r}")
    if len(value) != threads:
        # a shorter list would pair the wrong threads' wall and CPU times
        raise Excluded(
            f"corrupt: {name} record: {key} holds {len(value)} values for {threads} threads"
        )
    return tuple(value)


def _tasks(name: str, value: Any) -> tuple[dict[str, Any], ...]:
    """The kernel's per-task counters, or none (a kernel without them)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise Excluded(f"corrupt: {name} record: tasks is not a list of objects: {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class PmuCount:
    """One PMU event of an application's first run (the runner's pmu line):
    its count as read, and for how long it was enabled and counting (the
    kernel time-shares the counters when more events are open than the
    PMU has); or why it was not counted."""

    count: int | None
    enabled_ns: int = 0
    running_ns: int = 0
    error: str | None = None
    #: whether the guest kernel's PMU lists it as implemented (gem5 lists
    #: what its boot CPUs count: not the branch predictor's events)
    listed: bool = True

    @property
    def scaled(self) -> float | None:
        """The count over the whole time the event was enabled (perf's
        estimate when the counters were shared); None when not counted."""
        if self.count is None or self.running_ns <= 0:
            return None
        return self.count * self.enabled_ns / self.running_ns


def _pmu(name: str, value: Any) -> dict[str, PmuCount]:
    """The runner's "pmu" object, or none (a run that did not count)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Excluded(f"corrupt: {name} record: pmu is not an object: {value!r}")
    counts = {}
    for event, entry in value.items():
        if not isinstance(entry, dict):
            raise Excluded(f"corrupt: {name} record: pmu {event} is not an object")
        try:
            if "count" in entry:
                counts[str(event)] = PmuCount(
                    count=int(entry["count"]),
                    enabled_ns=int(entry["enabled_ns"]),
                    running_ns=int(entry["running_ns"]),
                    listed=bool(entry.get("listed", True)),
                )
            else:
                counts[str(event)] = PmuCount(count=None, error=str(entry.get("error")))
        except (KeyError, TypeError, ValueError) as e:
            raise Excluded(f"corrupt: {name} record: pmu {event}: {e!r}") from e
    return counts


@dataclass(frozen=True)
class AppRecord:
    """One application's record in results.jsonl."""

    program: str
    instance: int
    threads: int
    argv: tuple[str, ...]
    start_ns: int
    end_ns: int
    status: str
    #: The record as the runner printed it, for what the fields do not type
    #: (exit status, output tail...).
    raw: dict[str, Any]
    #: The region of interest the program reported, (begin, end) on the
    #: runner's clock: its work, without start-up and self-check. None when
    #: it reported none, or never left it.
    roi_ns: tuple[int, int] | None = None
    #: Each thread's wall-clock time ("thread_times_ns"), one per thread;
    #: empty when the program reported none.
    thread_wall_ns: tuple[int, ...] = ()
    #: Each thread's CPU time ("thread_cpu_ns"), one per thread; empty when
    #: the program reported none.
    thread_cpu_ns: tuple[int, ...] = ()
    #: The kit kernel's counters of each task (objects: class, big_ns,
    #: little_ns...); empty on a kernel without them.
    tasks: tuple[dict[str, Any], ...] = ()
    #: Its PMU events over its first run, by event name (INST_RETIRED...),
    #: where the run counted them (the runner's pmu line); empty otherwise.
    pmu: dict[str, PmuCount] = field(default_factory=dict)

    @property
    def process_ns(self) -> int:
        """From the start of the process to its end, as the runner saw them."""
        return self.end_ns - self.start_ns

    @property
    def turnaround_ns(self) -> int:
        """The time the metrics use: the region of interest where the program
        reported one (the work, not its start-up or its self-check), the
        process's turnaround otherwise (``timed_by`` says which)."""
        if self.roi_ns is None:
            return self.process_ns
        return self.roi_ns[1] - self.roi_ns[0]

    @property
    def timed_by(self) -> str:
        """ "region" or "process": what turnaround_ns is the time of."""
        return "process" if self.roi_ns is None else "region"

    @property
    def key(self) -> str:
        return app_key(self.program, self.threads, self.argv)

    @property
    def name(self) -> str:
        return f"{self.program}#{self.instance}"

    @classmethod
    def parse(cls, rec: dict[str, Any]) -> "AppRecord":
        """Raises Excluded when a field the metrics need is absent or wrong."""
        name = f"{rec.get('app')}#{rec.get('instance')}"
        try:
            record = cls(
                program=str(rec["app"]),
                instance=int(rec["instance"]),
                threads=int(rec["threads"]),
                argv=tuple(str(a) for a in rec.get("argv") or ()),
                start_ns=int(rec["start_ns"]),
                end_ns=int(rec["end_ns"]),
                status=str(rec["status"]),
                raw=rec,
            )
        except KeyError as e:
            raise Excluded(f"corrupt: {name} record lacks {e}") from e
        except (TypeError, ValueError) as e:
            raise Excluded(f"corrupt: {name} record: {e}") from e
        if record.status == OK and record.end_ns <= record.start_ns:
            raise Excluded(f"corrupt: {name} ended before it started")
        return replace(
            record,
            roi_ns=_region(name, rec.get("roi_ns"), record),
            thread_wall_ns=_per_thread(
                name, "thread_times_ns", rec.get("thread_times_ns"), record.threads
            ),
            thread_cpu_ns=_per_thread(
                name, "thread_cpu_ns", rec.get("thread_cpu_ns"), record.threads
            ),
            tasks=_tasks(name, rec.get("tasks")),
            pmu=_pmu(name, rec.get("pmu")),
        )


@dataclass(frozen=True)
class RunInfo:
    """What the manifest says a run was: the columns every table shares."""

    run_id: str
    engine: str
    platform: str
    #: The platform's big and little CPU counts (None in old manifests).
    big: int | None
    little: int | None
    policy: str
    mix: str
    repetition: int
    #: The manifest's copy of the mix's applications, in mix order.
    mix_apps: tuple[dict[str, Any], ...]
    campaign: str | None
    #: The key a campaign planned the run with (None outside campaigns).
    key: str | None
    #: Whether a sound run has the engine's statistics (manifest version 2;
    #: False for older runs, which are then not required to have them).
    statistics: bool = False
    #: The layout of those statistics' dumps (gem5stats.RUN_DUMPS); empty
    #: for a run made before the runner dumped its measured interval.
    stats_dumps: tuple[str, ...] = ()
    #: What the engine's timings can and cannot say (manifest version 2).
    timing_notice: str | None = None
    #: Why the capacity calibration in force may not describe the machine
    #: that ran (ampkit.calibration; empty when it does, or there is none).
    calibration_stale: tuple[str, ...] = ()
    #: The kernel's time scale (sched_timescale= on the command line the
    #: manifest records; 1 without one, and for manifests without inputs).
    timescale: int = 1
    #: The kernel's tick, its CONFIG_HZ (manifest kernel.tick_hz;
    #: DEFAULT_TICK_HZ, 250, for manifests written before it was recorded).
    tick_hz: int = DEFAULT_TICK_HZ
    #: Wall-clock seconds the run took, as its manifest records once it is
    #: over (None while it runs, or where the manifest has no number).
    wall_s: float | None = None
    #: Wall-clock seconds the run spent booting the checkpoint it restored
    #: (gem5; not in ``wall_s``); 0 where it restored one booted before it.
    boot_wall_s: float = 0.0
    #: The mix's declared category (compute, synchronisation, communication),
    #: as the manifest's copy of the mix gives it; None where it gives none.
    category: str | None = None

    def columns(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "engine": self.engine,
            "platform": self.platform,
            "timescale": self.timescale,
            "tick_hz": self.tick_hz,
            "policy": self.policy,
            "mix": self.mix,
            "repetition": self.repetition,
        }


@dataclass(frozen=True)
class EngineEntry:
    """The manifest's engine: what ran the guest, and what its numbers can say."""

    name: str
    #: Whether a sound run has the engine's statistics (gem5's m5out/).
    statistics: bool = False
    #: The layout of those statistics' dumps (gem5stats.RUN_DUMPS).
    stats_dumps: tuple[str, ...] = ()
    #: What the engine's timings can and cannot say (QEMU_NOTICE on QEMU).
    timing_notice: str | None = None
    #: The wall-clock limit the engine ran under.
    wall_limit_s: float | None = None
    #: The engine's own identity: version, binary hashes, command, memory.
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.details,
            "name": self.name,
            **({} if self.wall_limit_s is None else {"wall_limit_s": self.wall_limit_s}),
            "statistics": self.statistics,
            "stats_dumps": list(self.stats_dumps),
            "timing_notice": self.timing_notice,
        }


@dataclass(frozen=True)
class Ending:
    """How a run ended, as the manifest records it."""

    finished: str
    wall_s: float
    exit_code: int | None
    timed_out: bool
    kernel_problems: tuple[str, ...]
    status: str


#: The manifest's own fields, which no engine output may replace.
_MANIFEST_FIELDS = frozenset(
    [
        "kind",
        "version",
        "run_id",
        "key",
        "engine",
        "platform",
        "policy",
        "policy_details",
        "mix",
        "repetition",
        "method",
        "warmup_ms",
        "perturbation",
        "speedups",
        "trace",
        "daemons",
        "mix_limit_s",
        "kernel",
        "inputs",
        "started",
        "status",
        "finished",
        "wall_s",
        "boot",
        "kernel_problems",
    ]
)


@dataclass(frozen=True)
class Manifest:
    """What manifest.json says of a run, as the run writes it: first while
    it runs (``ending`` None, status "running"), then once it is over.
    ``RunInfo`` is what the readers take from it."""

    run_id: str
    engine: EngineEntry
    #: The platform's description (name, big, little, cores...) and calibration.
    platform: Mapping[str, Any]
    policy: str
    #: The mix's description: its name and its applications in mix order.
    mix: Mapping[str, Any]
    repetition: int
    #: The key a campaign plans and finds the run by.
    key: str | None = None
    policy_details: Mapping[str, Any] = field(default_factory=dict)
    method: str | None = None
    warmup_ms: int | None = None
    #: The seeded start delays the run was released with (ampkit.perturb):
    #: max_us, seed, start_delays_us; None (and absent) when unperturbed.
    perturbation: Mapping[str, Any] | None = None
    #: Where the run's speedups came from when not (only) the mix's hints:
    #: the online model (ampkit.online.OnlineSpeedups.describe), with what
    #: its daemon said at the end; None (and absent) for hints alone.
    speedups: Mapping[str, Any] | None = None
    #: The kernel trace the run asked for (ampkit.tracing): its events and,
    #: once over, lines written and kept, events lost, whether it is whole;
    #: None (and absent) for a run without one.
    trace: Mapping[str, Any] | None = None
    #: The guest daemons that ran beside the run (the online model's, a
    #: user-level policy's) and the CPU time the kernel counted each;
    #: None (and absent) for a run without one.
    daemons: tuple[Mapping[str, Any], ...] | None = None
    mix_limit_s: float | None = None
    #: The kernel build: variant, digest, versions, artifact hashes.
    kernel: Mapping[str, Any] | None = None
    #: The hashes of every input (command line, device tree, initramfs...).
    inputs: Mapping[str, Any] | None = None
    started: str | None = None
    #: What the engine adds once it has run (gem5: its checkpoint, power models).
    engine_outputs: Mapping[str, Any] = field(default_factory=dict)
    ending: Ending | None = None

    def to_json(self) -> dict[str, Any]:
        clash = set(self.engine_outputs) & _MANIFEST_FIELDS
        if clash:
            raise ValueError(f"engine outputs would replace the manifest's {sorted(clash)}")
        optional = {
            "key": self.key,
            "method": self.method,
            "warmup_ms": self.warmup_ms,
            "perturbation": dict(self.perturbation) if self.perturbation is not None else None,
            "speedups": dict(self.speedups) if self.speedups is not None else None,
            "trace": dict(self.trace) if self.trace is not None else None,
            "daemons": [dict(d) for d in self.daemons] if self.daemons is not None else None,
            "kernel": dict(self.kernel) if self.kernel is not None else None,
            "inputs": dict(self.inputs) if self.inputs is not None else None,
            "started": self.started,
        }
        out: dict[str, Any] = {
            "kind": "ampkit-run",
            "version": MANIFEST_VERSION,
            "run_id": self.run_id,
            "engine": self.engine.to_json(),
            "platform": dict(self.platform),
            "policy": self.policy,
            "policy_details": dict(self.policy_details),
            "mix": dict(self.mix),
            "repetition": self.repetition,
            "mix_limit_s": self.mix_limit_s,
            **{k: v for k, v in optional.items() if v is not None},
            **self.engine_outputs,
            "status": "running",
        }
        if self.ending is not None:
            e = self.ending
            out.update(
                {
                    "finished": e.finished,
                    "wall_s": e.wall_s,
                    "boot": {"exit_code": e.exit_code, "timed_out": e.timed_out},
                    "kernel_problems": list(e.kernel_problems),
                    "status": e.status,
                }
            )
        return out


@dataclass(frozen=True)
class Verdict:
    """A run that may count, as RunDir.judge() read it."""

    info: "RunInfo"
    records: list["AppRecord"]
    statistics: "Statistics"

    def only_record(self) -> "AppRecord":
        """The record of a run of one application (a reference or profile
        run); Excluded when it holds another number."""
        if len(self.records) != 1:
            raise Excluded(f"expected one application, found {len(self.records)}")
        return self.records[0]


@dataclass(frozen=True)
class Statistics:
    """A run's engine statistics: every dump, and the summary of the
    measured one (gem5stats.run_summary); empty when the engine keeps none."""

    dumps: tuple[dict[str, float], ...] = ()
    measured: dict[str, Any] | None = None


def _name_of(value: Any) -> Any:
    return value.get("name") if isinstance(value, dict) else value


def _calibration_stale(platform: Any) -> tuple[str, ...]:
    cal = platform.get("calibration") if isinstance(platform, dict) else None
    stale = cal.get("stale") if isinstance(cal, dict) else None
    return tuple(str(r) for r in stale) if isinstance(stale, list) else ()


def _seconds(value: Any) -> float | None:
    """A manifest's count of seconds, or None where it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _category(mix: Any) -> str | None:
    """The mix's declared category, where its manifest copy names one."""
    category = mix.get("category") if isinstance(mix, dict) else None
    return category if isinstance(category, str) else None


def _checkpoint_boot_s(engine_outputs: Any) -> float:
    """The wall seconds a run spent booting the checkpoint it restored (its
    engine's outputs' boot_wall_s, as gem5 records it; 0 where it restored
    one made before, or its engine boots no checkpoint)."""
    if not isinstance(engine_outputs, dict):
        return 0.0
    return _seconds(engine_outputs.get("boot_wall_s")) or 0.0


def _tick_hz(kernel: Any) -> int:
    """The tick the manifest's kernel entry records; DEFAULT_TICK_HZ (250)
    where it records none, as every manifest before the field did: all the
    kit's kernels then ticked at 250 Hz."""
    tick = kernel.get("tick_hz") if isinstance(kernel, dict) else None
    if isinstance(tick, int) and not isinstance(tick, bool) and tick > 0:
        return tick
    return DEFAULT_TICK_HZ


def _engine_field(manifest: dict[str, Any], key: str) -> Any:
    engine = manifest.get("engine")
    return engine.get(key) if isinstance(engine, dict) else None


#: The policies' counters among their sysctls: the sysctl, the policy's
#: name and the counters in it (the kernel prints "name value" pairs; the
#: pairs not listed, such as WASH's fork_copy and fences, are states)
POLICY_COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sched_colab_work": ("colab", ("periods", "cpu_ns", "swaps", "moves", "pulls")),
    "sched_wash_stats": ("wash", ("quanta", "cpu_ns", "wall_ns", "binds", "unbinds")),
}


def parse_counters(text: object) -> dict[str, int]:
    """A counters sysctl's "name value name value ..." as a dict; empty
    for anything else (absent, not text, an odd count of words, a value
    that is not a whole number)."""
    if not isinstance(text, str):
        return {}
    words = text.split()
    if len(words) % 2:
        return {}
    try:
        return {name: int(value) for name, value in zip(words[::2], words[1::2], strict=True)}
    except ValueError:
        return {}


def _object(value: object) -> dict[str, Any]:
    """A JSON object as a dict; empty for anything else."""
    return dict(value) if isinstance(value, dict) else {}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as e:
        raise Excluded(f"incomplete: no {path.name}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise Excluded(f"corrupt: {path.name} is not JSON ({e})") from e


#: gem5's log opens with the command that ran it.
_GEM5_COMMAND = re.compile(r"^command line: (/\S+)/build/[^/\s]+/gem5\.\w+ ", re.M)


class RunDir:
    """A finished (or unfinished) run directory, read."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def partial(self) -> Path:
        return partial_of(self.path)

    # --- done-ness --------------------------------------------------------

    def is_finished(self) -> bool:
        """The run is over (whatever its outcome): its status was written."""
        return (self.path / STATUS).is_file()

    def status(self) -> str:
        """'ok', or 'failed: <reason>'; NO_STATUS when the run did not finish."""
        try:
            return (self.path / STATUS).read_text().strip()
        except OSError:
            return NO_STATUS

    def is_ok(self) -> bool:
        """The run ended ok, as its status says. Whether it counts, and
        whether it is done, are counts() and done(): a run that ended ok
        may still lack what the metrics need."""
        return self.path.is_dir() and self.status() == OK

    def done(self, key: PlannedKey | None) -> bool:
        """The one answer to "is this run done?": it counts (judge()), and
        the inputs the caller plans, ``key`` (run.PreparedRun.run_key), made
        it (made_from()); a run made from other inputs, or without a key, is
        not done. With ``key`` None (a caller that does not know the plan's
        key yet: a campaign before its initramfs is built, an executor
        reporting what a run left) any inputs will do. A campaign and the
        references skip a run by it, and make again any run it does not call
        done."""
        if key is not None and not self.made_from(key):
            return False
        return self.counts()

    def made_from(self, key: PlannedKey) -> bool:
        """Whether the inputs ``key`` plans made this run: its recorded key
        is the key, or (a RunKey) one of the planned run's other keys gives
        it: under a wall-clock limit of the run's own, within the planned
        one, where the run ended ok under it; and with the digest the run
        recorded for its kernel, where the kernel files it booted are the
        planned build's (RunKey)."""
        recorded = self.recorded_key()
        if isinstance(key, str):
            return recorded == key
        if recorded is None or recorded == key.digest:
            return recorded is not None
        limit, wall = self.recorded_limit()
        limits: list[float | None] = [None]
        if limit is not None and wall is not None and wall <= key.limit_s and self.is_ok():
            limits.append(limit)
        kernels: list[str | None] = [None]
        if (same := self.same_kernel_as(key)) is not None:
            kernels.append(same)
        return any(
            key.variant(limit_s=lim, kernel_digest=kd) == recorded
            for lim in limits
            for kd in kernels
            if (lim, kd) != (None, None)
        )

    def same_kernel_as(self, key: RunKey) -> str | None:
        """The kernel digest the run recorded, where every kernel file the
        key plans has the hash the run recorded for it; else None."""
        if not key.kernel_binaries:
            return None
        try:
            kernel = self.manifest().get("kernel")
        except Excluded:
            return None
        if not isinstance(kernel, dict) or not isinstance(kernel.get("digest"), str):
            return None
        if any(kernel.get(name) != sha for name, sha in key.kernel_binaries):
            return None
        digest: str = kernel["digest"]
        return digest

    def recorded_limit(self) -> tuple[int | float | None, float | None]:
        """(the engine's wall-clock limit, the wall seconds the run took),
        as the manifest recorded them; None for either it lacks. The limit
        keeps the type it was hashed with (RunKey.under())."""
        try:
            m = self.manifest()
        except Excluded:
            return None, None
        engine = m.get("engine")
        if not isinstance(engine, dict):
            return None, _seconds(m.get("wall_s"))
        # manifests of format 1 called it wall_clock_limit_s
        limit = engine.get("wall_limit_s", engine.get("wall_clock_limit_s"))
        if _seconds(limit) is None:
            limit = None
        return limit, _seconds(m.get("wall_s"))

    def was_interrupted(self) -> bool:
        return self.partial.exists()

    # --- contents ---------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        data = _read_json(self.path / MANIFEST)
        if not isinstance(data, dict):
            raise Excluded(f"corrupt: {MANIFEST} is not an object")
        return data

    def gem5_root(self) -> Path | None:
        """The gem5 tree the run's gem5 came from, as its log names it (the
        log opens with the command line, whose binary is
        build/<ISA>/gem5.<variant> under the tree); None where it names
        none. A path of the machine to scrub when archiving."""
        try:
            head = (self.path / GEM5_LOG).read_text(errors="replace")[:8192]
        except OSError:
            return None
        m = _GEM5_COMMAND.search(head)
        return Path(m[1]) if m else None

    def policy_knobs(self) -> dict[str, Any]:
        """The policies' knobs the guest read from its kernel at the start
        of the run (guest.json's amp.knobs: sysctl name to value); empty
        where it recorded none (a guest before it read them, a kernel
        without the policies, a run that never reached the guest)."""
        return _object(self._amp().get("knobs"))

    def _amp(self) -> dict[str, Any]:
        """guest.json's amp, what the guest read of the policies; empty where absent."""
        try:
            guest = _read_json(self.path / GUEST)
        except Excluded:
            return {}
        return _object(guest.get("amp") if isinstance(guest, dict) else None)

    def daemon_work(self) -> dict[str, int]:
        """The CPU time the guest kernel counted for the daemons that ran
        beside the run (the manifest's daemons: the online model's, a
        user-level policy's), summed as ``daemon_cpu_ns``; empty where the
        run had none or its manifest cannot be read."""
        try:
            daemons = self.manifest().get("daemons")
        except Excluded:
            return {}
        if not isinstance(daemons, list) or not daemons:
            return {}
        spent = [d.get("cpu_ns") for d in daemons if isinstance(d, dict)]
        if not spent or not all(isinstance(v, int) and v >= 0 for v in spent):
            return {}
        return {"daemon_cpu_ns": sum(v for v in spent if isinstance(v, int))}

    def interference(self) -> dict[str, Any]:
        """What a run of the contention policy was handed (the manifest's
        policy_details.interference): its model file's digest, the
        threshold S, and the file's mean held-out errors (ampkit.corun.fit)
        as fractions of run time and points of slowdown; named models_sha256,
        threshold_pct, held_out_co_run_time_error, ..._co_runner_time_error,
        held_out_co_run_points. Empty for any other run; a figure the file
        does not give is left out."""
        try:
            details = _object(self.manifest().get("policy_details"))
        except Excluded:
            return {}
        given = _object(details.get("interference"))
        if not given:
            return {}
        provenance = _object(given.get("provenance"))
        out: dict[str, Any] = {
            "models_sha256": given.get("models_sha256"),
            "threshold_pct": given.get("threshold_pct"),
        }
        for column, key in HELD_OUT_ERRORS:
            value = provenance.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                out[column] = float(value)
        return out

    def policy_work(self) -> dict[str, int]:
        """What each policy's periodic step did over the run: the growth of
        its counters (POLICY_COUNTERS) between guest.json's amp.knobs, read
        before the warm-up, and amp.knobs_after, read once the mix was over;
        named <policy>_<counter> (colab_pulls, wash_binds). Empty where the
        guest did not record both (a runner before it read them again, a
        kernel without the policies); a policy whose counters fell between
        the reads (the kernel reset them) is left out rather than given as
        negative."""
        amp = self._amp()
        before, after = _object(amp.get("knobs")), _object(amp.get("knobs_after"))
        out: dict[str, int] = {}
        for sysctl, (policy, names) in POLICY_COUNTERS.items():
            start, end = parse_counters(before.get(sysctl)), parse_counters(after.get(sysctl))
            grown = {n: end[n] - start[n] for n in names if n in start and n in end}
            if all(g >= 0 for g in grown.values()):  # none reset between the reads
                out |= {f"{policy}_{n}": g for n, g in grown.items()}
        return out

    def recorded_key(self) -> str | None:
        """The key in the manifest, or None if it cannot be read."""
        try:
            key = self.manifest().get("key")
        except Excluded:
            return None
        return key if isinstance(key, str) else None

    def trace_text(self) -> str:
        """The kernel trace the run kept (TRACE), as tracefs wrote it;
        Excluded when there is none or it is not whole (the manifest's
        trace account says why)."""
        account = self.manifest().get("trace")
        if not isinstance(account, dict):
            raise Excluded(f"{self.path}: the run was not traced (ampkit run --trace)")
        if not account.get("complete"):
            raise Excluded(
                f"{self.path}: its trace is not whole: {account.get('problem', 'unknown')}"
            )
        try:
            return lzma.decompress((self.path / TRACE).read_bytes()).decode(errors="replace")
        except (OSError, lzma.LZMAError) as e:
            raise Excluded(f"{self.path / TRACE}: unreadable: {e}") from e

    def online_records(self) -> list[dict[str, Any]]:
        """The online speedup model's log (ONLINE), one record a line;
        empty for a run the model did not feed."""
        path = self.path / ONLINE
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def info(self, campaign: str | None = None) -> RunInfo:
        """The manifest's account of the run; Excluded when it lacks any of it."""
        m = self.manifest()
        platform, mix = m.get("platform"), m.get("mix")
        values = {
            "run_id": m.get("run_id"),
            "engine": _name_of(m.get("engine")),
            "platform": _name_of(platform),
            "policy": m.get("policy"),
            "mix": _name_of(mix),
        }
        missing = [k for k, v in values.items() if v is None]
        repetition = m.get("repetition")
        if missing or not isinstance(repetition, int) or isinstance(repetition, bool):
            raise Excluded(f"corrupt: {MANIFEST} lacks {', '.join(missing) or 'repetition'}")
        apps = mix.get("apps") if isinstance(mix, dict) else None
        if not isinstance(apps, list) or not apps or not all(isinstance(a, dict) for a in apps):
            raise Excluded(f"corrupt: {MANIFEST} names no applications of the mix")
        if not all(isinstance(a.get("program"), str) for a in apps):
            raise Excluded(f"corrupt: {MANIFEST} has an application without a program")
        engine = m.get("engine")
        statistics = _engine_field(m, "statistics")
        dumps = _engine_field(m, "stats_dumps")
        notice = _engine_field(m, "timing_notice")
        if (
            not isinstance(statistics, bool | None)
            or not (
                dumps is None
                or (isinstance(dumps, list) and all(isinstance(d, str) for d in dumps))
            )
            or not isinstance(notice, str | None)
        ):
            raise Excluded(
                f"corrupt: {MANIFEST}: engine {engine!r} is not what a run writes "
                "(statistics a boolean, stats_dumps a list of names, timing_notice a text)"
            )
        inputs = m.get("inputs")
        cmdline = inputs.get("cmdline") if isinstance(inputs, dict) else None
        counts = (platform.get("big"), platform.get("little")) if isinstance(platform, dict) else ()
        big, little = counts if all(isinstance(c, int) for c in counts) and counts else (None, None)
        return RunInfo(
            run_id=str(values["run_id"]),
            engine=str(values["engine"]),
            platform=str(values["platform"]),
            big=big,
            little=little,
            policy=str(values["policy"]),
            mix=str(values["mix"]),
            repetition=repetition,
            mix_apps=tuple(apps),
            campaign=str(m["campaign"]) if m.get("campaign") else campaign,
            key=m.get("key") if isinstance(m.get("key"), str) else None,
            statistics=bool(statistics),
            stats_dumps=tuple(dumps or ()),
            timing_notice=notice,
            calibration_stale=_calibration_stale(platform),
            timescale=timescale_of(cmdline) if isinstance(cmdline, str) else 1,
            tick_hz=_tick_hz(m.get("kernel")),
            wall_s=_seconds(m.get("wall_s")),
            # the engine's own outputs are filed under its name
            boot_wall_s=_checkpoint_boot_s(m.get(str(values["engine"]))),
            category=_category(mix),
        )

    def until(self) -> int | None:
        """The index of the application whose first run ended the run (its
        description's until line: a profiling run, RunRequest.until), or
        None for a run of every first run."""
        try:
            text = (self.path / RUN_DESC).read_text()
        except OSError:
            return None
        for line in text.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == "until" and words[1].isdigit():
                return int(words[1])
        return None

    def raw_records(self) -> list[dict[str, Any]]:
        """Every record of results.jsonl; Excluded when it is absent or torn."""
        path = self.path / RESULTS
        if not path.is_file():
            raise Excluded(f"incomplete: no {RESULTS}")
        records = []
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise Excluded(f"corrupt: {RESULTS} line {lineno} is not JSON (truncated?)") from e
            if not isinstance(record, dict):
                raise Excluded(f"corrupt: {RESULTS} line {lineno} is not an object")
            records.append(record)
        return records

    def gem5_summary(self) -> dict[str, Any]:
        """gem5.json, the statistics a gem5 run's analysis uses."""
        data = _read_json(self.path / GEM5_SUMMARY)
        if not isinstance(data, dict):
            raise Excluded(f"corrupt: {GEM5_SUMMARY} is not an object")
        return data

    def statistics(self, info: RunInfo) -> "Statistics":
        """The engine's statistics (gem5's dumps, in m5out/) and the summary
        of the measured interval; empty for a run without any, such as
        QEMU's. Excluded when they are unreadable, when the run predates
        the measured dump, or when an engine that writes them left none."""
        try:
            dumps = gem5stats.read_run(self.path / M5OUT)
        except gem5stats.StatsError as e:
            raise Excluded(f"corrupt: gem5 stats: {e}") from e
        if not dumps:
            if info.statistics:
                raise Excluded(f"incomplete: a {info.engine} run without its statistics")
            return Statistics()
        try:
            measured = gem5stats.run_summary(dumps)
        except gem5stats.StatsError as e:
            if not info.stats_dumps:
                raise Excluded(
                    f"outdated: a gem5 run of {len(dumps)} statistics dumps, made "
                    "before the runner dumped its measured interval; run it again"
                ) from e
            raise Excluded(f"corrupt: gem5 stats: {e}") from e
        return Statistics(tuple(dumps), measured)

    # --- the verdict ------------------------------------------------------

    def judge(self, campaign: str | None = None) -> "Verdict":
        """Everything a sound run gives the metrics: its account, its
        records and its statistics; Excluded, with the reason, if it may not
        count (see info(), records() and statistics())."""
        info = self.info(campaign)
        records = self.records(info)
        return Verdict(info, records, self.statistics(info))

    def check(self, campaign: str | None = None) -> tuple[RunInfo, list[AppRecord]]:
        """judge(), for readers that need the account and the records only."""
        verdict = self.judge(campaign)
        return verdict.info, verdict.records

    def exclusion(self) -> str | None:
        """Why the run may not count in a metric (judge()'s reason), or None
        when it may."""
        try:
            self.judge()
        except Excluded as e:
            return str(e)
        return None

    def counts(self) -> bool:
        """Whether the run may count in a metric (see done(), which also
        asks whether the planned inputs made it)."""
        return self.exclusion() is None

    def records(self, info: RunInfo) -> list[AppRecord]:
        """The records of the run ``info`` accounts for, one per application
        of its mix in mix order, if it may count in a metric; Excluded, with
        the reason, if not: it did not finish, it failed, its files are torn,
        or an application has no record, two records, or one that is not ok."""
        if not self.is_finished():
            raise Excluded("incomplete: no status file (the run did not finish)")
        status = self.status()
        if status != OK:
            raise Excluded(status)
        wanted = instances(str(a.get("program")) for a in info.mix_apps)
        by_app: dict[tuple[str, int], dict[str, Any]] = {}
        for rec in self.raw_records():
            if rec.get("type", "app") != "app":
                continue
            try:
                ident = (str(rec.get("app")), int(rec.get("instance", -1)))
            except (TypeError, ValueError) as e:
                raise Excluded(f"corrupt: a record with instance {rec.get('instance')!r}") from e
            if ident not in wanted:
                raise Excluded(f"corrupt: a record of {ident[0]}#{ident[1]}, which the mix lacks")
            if ident in by_app:
                raise Excluded(f"corrupt: two records of {ident[0]}#{ident[1]}")
            by_app[ident] = rec
        absent = [f"{p}#{i}" for p, i in wanted if (p, i) not in by_app]
        if absent:
            raise Excluded(f"incomplete: no result for {', '.join(absent)}")
        # load beside the application an until line names, stopped when it
        # completed: sound, in a run that has such a line, for the others
        until = self.until()
        stoppable = {ident for k, ident in enumerate(wanted) if until is not None and k != until}
        bad = [
            f"{p}#{i}: {r.get('status')}"
            for (p, i), r in by_app.items()
            if r.get("status") != OK and not (r.get("status") == STOPPED and (p, i) in stoppable)
        ]
        if bad:
            raise Excluded(f"failed application: {'; '.join(bad)}")
        return [AppRecord.parse(by_app[ident]) for ident in wanted]


def find_run_dirs(root: Path) -> tuple[list[Path], list[Path]]:
    """Run directories under ``root`` (or ``root`` itself), in one walk: those
    that hold a manifest, and the ``*.partial`` ones of unfinished runs."""
    if (root / MANIFEST).is_file():
        return [root], []
    finished, partial = [], []
    for dirpath, _, filenames in os.walk(root):
        here = Path(dirpath)
        if here.name.endswith(PARTIAL_SUFFIX):
            partial.append(here)
        elif MANIFEST in filenames:
            finished.append(here)
    return sorted(finished), sorted(partial)


class RunWriter:
    """Writes a run directory: under ``<final>.partial`` while the run lasts,
    renamed to ``final`` by ``finish()``. What a failed run wrote stays."""

    def __init__(self, final: Path, *, force: bool = False) -> None:
        if final.exists():
            if not force:
                raise FileExistsError(final)
            shutil.rmtree(final)
        self.final = final
        self.work = partial_of(final)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)

    def path(self, name: str) -> Path:
        """Where the run's file ``name`` is written (engines write their own
        outputs, such as gem5's m5out/, through this)."""
        return self.work / name

    def write_inputs(self, desc: str, dtb: bytes) -> None:
        (self.work / RUN_DESC).write_text(desc)
        (self.work / DEVICE_TREE).write_bytes(dtb)

    def write_manifest(self, manifest: Manifest) -> None:
        write_json(self.work / MANIFEST, manifest.to_json())

    def write_results(self, records: Iterable[dict[str, Any]]) -> None:
        with (self.work / RESULTS).open("w") as f:
            for record in records:
                f.write(json.dumps(record, sort_keys=True) + "\n")

    def write_online(self, records: Iterable[dict[str, Any]]) -> None:
        with (self.work / ONLINE).open("w") as f:
            for record in records:
                f.write(json.dumps(record, sort_keys=True) + "\n")

    def write_policy_log(self, records: Iterable[dict[str, Any]]) -> None:
        with (self.work / POLICY_LOG).open("w") as f:
            for record in records:
                f.write(json.dumps(record, sort_keys=True) + "\n")

    def write_trace(self, text: str) -> None:
        (self.work / TRACE).write_bytes(lzma.compress(text.encode()))

    def write_guest(self, guest: dict[str, Any]) -> None:
        write_json(self.work / GUEST, guest)

    def write_gem5_summary(self, summary: dict[str, Any]) -> None:
        write_json(self.work / GEM5_SUMMARY, summary)

    def console_text(self) -> str:
        """The guest console the engine wrote so far, whole; bytes that are
        not UTF-8 (a console garbled by the guest) are replaced, not fatal."""
        return (self.work / CONSOLE).read_text(errors="replace")

    def finish(self, status: str) -> Path:
        """Write the status (the run is over) and give the directory its name."""
        atomic_write_text(self.work / STATUS, status + "\n")
        self.work.rename(self.final)
        return self.final


def walk_records(run_dirs: Iterable[Path]) -> Iterator[tuple[RunDir, list[AppRecord]]]:
    """Each directory with those of its application records that can be read
    (none when results.jsonl is absent or torn): for summaries of any run."""
    for path in run_dirs:
        run = RunDir(path)
        records = []
        try:
            raw = run.raw_records()
        except Excluded:
            raw = []
        for rec in raw:
            if rec.get("type", "app") != "app":
                continue
            try:
                records.append(AppRecord.parse(rec))
            except Excluded:
                continue
        yield run, records
