"""Run directories written without running anything, in the layout of ampkit.run.

For the analysis' tests and its scaling benchmark: the files a finished run
leaves (manifest.json, results.jsonl, status), with turnarounds and thread
times chosen by the caller. Nothing here is ever collected as a result of
the kit's own runs.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ampkit.gem5stats import DUMP_BEGIN, DUMP_END, RUN_DUMPS
from ampkit.rundir import QEMU_NOTICE, Ending, EngineEntry, Manifest, RunWriter, instances


@dataclass(frozen=True)
class SynthApp:
    program: str
    threads: int
    turnaround_ns: int
    thread_ns: Sequence[int] = ()
    argv: Sequence[str] = ()
    tasks: Sequence[dict[str, object]] = ()  # the kernel's per-task counters, if any
    size: int = 1
    thread_cpu_ns: Sequence[int] = ()  # default: the thread times
    roi_ns: tuple[int, int] | None = None  # the region the program reports; default none


def write_run(
    parent: Path,
    *,
    platform: str,
    policy: str,
    mix: str,
    apps: Sequence[SynthApp],
    repetition: int = 0,
    engine: str = "qemu",
    status: str = "ok",
    statistics: bool = False,
    timing_notice: str | None = QEMU_NOTICE,
    key: str | None = None,
    wall_s: float = 0.0,
    wall_limit_s: float | None = None,
    cmdline: str | None = None,
    tick_hz: int | None = None,
    kernel: dict[str, str] | None = None,
) -> Path:
    """A finished run directory; ``statistics`` and ``timing_notice`` are
    what its engine records (the defaults: QEMU's), ``key`` the inputs'
    hash its manifest records, ``wall_s`` and ``wall_limit_s`` its wall
    time and its engine's wall-clock limit, ``cmdline`` the kernel command
    line its inputs record, ``tick_hz`` its kernel's tick (none by
    default) and ``kernel`` more of what its manifest records of the kernel
    (its digest and files' hashes, say)."""
    run_id = f"{platform}-{policy}-{mix}-r{repetition}"
    writer = RunWriter(parent / run_id)
    counts = re.fullmatch(r"(\d+)B(\d+)L", platform)
    manifest = Manifest(
        run_id=run_id,
        key=key,
        engine=EngineEntry(
            name=engine,
            statistics=statistics,
            stats_dumps=RUN_DUMPS if statistics else (),
            timing_notice=timing_notice,
            wall_limit_s=wall_limit_s,
        ),
        platform={
            "name": platform,
            **({"big": int(counts[1]), "little": int(counts[2])} if counts else {}),
        },
        policy=policy,
        mix={
            "name": mix,
            "apps": [
                {"program": a.program, "threads": a.threads, "size": a.size, "args": list(a.argv)}
                for a in apps
            ],
        },
        repetition=repetition,
        inputs={"cmdline": cmdline} if cmdline is not None else None,
        kernel=(
            {**(kernel or {}), **({"tick_hz": tick_hz} if tick_hz is not None else {})}
            if kernel or tick_hz is not None
            else None
        ),
        ending=Ending(
            finished="1970-01-01T00:00:00+00:00",
            wall_s=wall_s,
            exit_code=0,
            timed_out=False,
            kernel_problems=(),
            status=status,
        ),
    )
    writer.write_manifest(manifest)
    records = []
    for a, (_, instance) in zip(apps, instances(a.program for a in apps), strict=True):
        times = list(a.thread_ns) or [a.turnaround_ns] * a.threads
        records.append(
            {
                "type": "app",
                "run_id": run_id,
                "app": a.program,
                "instance": instance,
                "threads": a.threads,
                "argv": list(a.argv),
                "start_ns": 1_000_000,
                "end_ns": 1_000_000 + a.turnaround_ns,
                "status": "ok",
                "thread_times_ns": times,
                "thread_cpu_ns": list(a.thread_cpu_ns) or times,
                **({"tasks": list(a.tasks)} if a.tasks else {}),
                **({"roi_ns": list(a.roi_ns)} if a.roi_ns else {}),
            }
        )
    writer.write_results(records)
    return writer.finish(status)


_DUMP = re.compile(
    rf"^{re.escape(DUMP_BEGIN)}\n.*?^{re.escape(DUMP_END)}\n",
    re.S | re.M,
)


def kit_stats_text(text: str, measured: int = -1) -> str:
    """A stats.txt laid out as a kit run's (gem5stats.RUN_DUMPS: restore,
    start, measured, exit) from any gem5 stats.txt: its dump ``measured`` in
    the measured place, its first dump in the others."""
    dumps: list[str] = _DUMP.findall(text)
    if not dumps:
        raise ValueError("no statistics dump in the text")
    other = dumps[0]
    return other + other + dumps[measured] + other
