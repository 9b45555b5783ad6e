"""Run directories into tidy tables.

``collect(root)`` walks every run directory under ``root`` (a directory
with a ``manifest.json``) and returns a ``Collection`` of pandas tables:

runs     one row per run directory, whether it counts (``included``) and,
         if not, why (``reason``); its mix's declared ``category``; the
         wall-clock seconds it took
         (``wall_s``, from its manifest, whether it counts or not) and
         those it spent booting the checkpoint it restored (``boot_wall_s``,
         gem5; 0 where it restored one booted before); for a
         run that counts, the policies'
         periods as its kernel held them (guest.json's amp.knobs, unscaled:
         the kernel divides them by the time scale): colab_rank_period_ms,
         wash_quantum_ms, and the scale the kernel says it runs at,
         timescale_knob (NaN where the guest did not record them); and
         counters, whether the kernel kept its per-task counters under
         every policy (kernel.sched_colab_stats: 1 or 0; NaN unrecorded);
         and where the guest read the policies' counters again after the
         mix, what each policy's periodic step did over the run
         (RunDir.policy_work: colab_periods, colab_swaps, colab_moves,
         colab_pulls, colab_cpu_ns, wash_quanta, wash_binds, ...; absent
         columns, or NaN, where a run did not record them); and
         daemon_cpu_ns, the CPU time of the guest daemons that ran beside
         it (RunDir.daemon_work: a user-level policy's, the online model's);
         for a run of the contention policy, its interference models'
         digest and threshold and their held-out errors (RunDir.interference:
         models_sha256, threshold_pct, held_out_co_run_time_error,
         held_out_co_runner_time_error, held_out_co_run_points);
apps     one row per application per included run: campaign, run, run_id,
         engine, platform, timescale (the kernel's time scale), tick_hz
         (its tick, CONFIG_HZ), big, little (its CPU counts), policy, mix,
         repetition, app, instance, key, threads, turnaround_ns (the
         region of interest's where the program reported one, the
         process's otherwise), timed_by ("region" or "process"),
         process_ns, status;
threads  one row per thread of those applications: wall_ns, cpu_ns;
cpus     one row per CPU per gem5 stats dump where the run has gem5 stats:
         dump, measured (whether it is the dump of the measured interval,
         gem5stats.RUN_DUMPS), cpu, cluster, cycles, insts, energy_j,
         sim_seconds, residency_ticks;
clusters one row per CPU cluster of such a run, from its measured dump:
         cpus, insts, cpu_energy_j, l2_energy_j, energy_j (CPUs and L2);
memory   one row per memory controller of such a run, from its measured
         dump: memory, energy_j (its DRAM, gem5's DRAMPower model);
tasks    the kernel's per-task counters, where an application record
         carries them (a ``tasks`` list of objects), one row per task.

A run counts only when ``ampkit.rundir`` says so (``RunDir.judge()``: it
finished with status ``ok``, its manifest and results parse, and every
application of its mix has exactly one record with status ``ok``) and, on
gem5, its statistics parse and have the dumps of a kit run. Anything else
is listed in ``runs`` with its reason and enters no other table, so it can
never reach a metric. ``key`` identifies
an application across mixes (program, threads, arguments): the reference
runs are found by it.
"""

import contextlib
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ampkit import gem5stats
from ampkit.rundir import (
    PARTIAL_REASON,
    AppRecord,
    Excluded,
    RunDir,
    RunInfo,
    app_key,
    find_run_dirs,
)

__all__ = [
    "PARQUET",
    "RUN_COLUMNS",
    "Collection",
    "Excluded",
    "app_key",
    "collect",
    "find_run_dirs",
]

#: Whether the tables are written as Parquet too: pyarrow is there (the
#: kit's environment has it; 'ampkit[parquet]' adds it elsewhere).
PARQUET = importlib.util.find_spec("pyarrow") is not None

RUN_COLUMNS = [
    "campaign",
    "run",
    "run_id",
    "engine",
    "platform",
    "timescale",
    "tick_hz",
    "big",
    "little",
    "policy",
    "mix",
    "repetition",
]


@dataclass
class Collection:
    runs: pd.DataFrame
    apps: pd.DataFrame
    threads: pd.DataFrame
    cpus: pd.DataFrame
    tasks: pd.DataFrame
    clusters: pd.DataFrame
    memory: pd.DataFrame
    #: What the engines of the included runs say their timings can and
    #: cannot show (the manifests' timing notices), for the report.
    notices: tuple[str, ...] = ()

    TABLES = ("runs", "apps", "threads", "cpus", "clusters", "memory", "tasks")

    def save(self, out: Path) -> list[Path]:
        """Each table as CSV in ``out``, and as Parquet where pyarrow is
        installed (the kit's environment has it; 'ampkit[parquet]' adds it
        elsewhere); the paths written."""
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name in self.TABLES:
            table: pd.DataFrame = getattr(self, name)
            if PARQUET:
                table.to_parquet(out / f"{name}.parquet", index=False)
                written.append(out / f"{name}.parquet")
            table.to_csv(out / f"{name}.csv", index=False)
            written.append(out / f"{name}.csv")
        return written

    @property
    def excluded(self) -> pd.DataFrame:
        return self.runs[~self.runs["included"]]


def _run_columns(run_dir: Path, root: Path, info: RunInfo) -> dict[str, Any]:
    rel = run_dir.relative_to(root) if run_dir != root else Path(run_dir.name)
    campaign = info.campaign or (rel.parts[0] if len(rel.parts) > 1 else root.name)
    return {
        "campaign": str(campaign),
        "run": str(rel),
        **info.columns(),
        "big": info.big,
        "little": info.little,
    }


def _costs(info: RunInfo) -> dict[str, Any]:
    """The runs table's own columns: the mix's category, and what the run
    cost in wall-clock seconds (its own, and booting its checkpoint)."""
    return {"category": info.category, "wall_s": info.wall_s, "boot_wall_s": info.boot_wall_s}


#: Run columns from the guest's record of the policies' knobs (sysctl name).
KNOB_COLUMNS = {
    "colab_rank_period_ms": "sched_colab_rank_period_ms",
    "wash_quantum_ms": "sched_wash_quantum_ms",
    "timescale_knob": "sched_timescale",
}


def _knob_columns(run: RunDir) -> dict[str, float]:
    """The policies' periods the guest read from its kernel at the start of
    the run; NaN for any it did not record (a guest before it read them, a
    kernel without the policy)."""
    knobs = run.policy_knobs()
    out = {}
    for column, name in KNOB_COLUMNS.items():
        value = knobs.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            out[column] = float(value)
        else:
            out[column] = math.nan
    stats = knobs.get("sched_colab_stats")
    kept = stats in (0, 1) and isinstance(stats, int) and not isinstance(stats, bool)
    out["counters"] = float(stats == 1) if kept else math.nan
    return out


def _app_rows(
    info: dict[str, Any], records: list[AppRecord]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    apps, threads, tasks = [], [], []
    for rec in records:
        ident = {**info, "app": rec.program, "instance": rec.instance}
        apps.append(
            {
                **ident,
                "key": rec.key,
                "threads": rec.threads,
                "turnaround_ns": rec.turnaround_ns,
                "timed_by": rec.timed_by,
                "process_ns": rec.process_ns,
                "status": rec.status,
            }
        )
        # AppRecord.parse checked both: one value per thread, or none at all
        cpu: tuple[float, ...] = rec.thread_cpu_ns or (math.nan,) * rec.threads
        for t, wall in enumerate(rec.thread_wall_ns):
            threads.append({**ident, "thread": t, "wall_ns": wall, "cpu_ns": cpu[t]})
        tasks += [{**ident, **task} for task in rec.tasks]
    return apps, threads, tasks


#: Why a profiling run (an until line: ampkit.corun) is no run of a
#: comparison: its other applications were stopped when the first ended.
PROFILING_REASON = (
    "a profiling run (until): its other applications were load, stopped when the first "
    "completed, and time nothing"
)


def collect(root: Path) -> Collection:
    """Every run directory under ``root`` into tables; see the module's text."""
    runs: list[dict[str, Any]] = []
    apps: list[dict[str, Any]] = []
    threads: list[dict[str, Any]] = []
    cpus: list[dict[str, Any]] = []
    clusters: list[dict[str, Any]] = []
    memory: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    notices: set[str] = set()
    finished, partial = find_run_dirs(root)
    for run_dir in partial:
        rel = str(run_dir.relative_to(root))
        runs.append(
            {"campaign": root.name, "run": rel, "included": False, "reason": PARTIAL_REASON}
        )
    for run_dir in finished:
        run = RunDir(run_dir)
        info: dict[str, Any] = {"campaign": root.name, "run": str(run_dir.relative_to(root))}
        try:
            if run.until() is not None:
                raise Excluded(PROFILING_REASON)
            verdict = run.judge()
        except Excluded as e:
            costs: dict[str, Any] = {"category": None, "wall_s": None, "boot_wall_s": 0.0}
            with contextlib.suppress(Excluded):  # the run's columns, where it gives them
                excluded_info = run.info()
                info, costs = _run_columns(run_dir, root, excluded_info), _costs(excluded_info)
            runs.append({**info, "included": False, "reason": str(e), **costs})
            continue
        run_info, stats = verdict.info, verdict.statistics
        info = _run_columns(run_dir, root, run_info)
        a, t, k = _app_rows(info, verdict.records)
        runs.append(
            {
                **info,
                "included": True,
                "reason": "",
                **_costs(run_info),
                **_knob_columns(run),
                **run.policy_work(),
                **run.daemon_work(),
                **run.interference(),
            }
        )
        if run_info.timing_notice:
            notices.add(str(run_info.timing_notice))
        for reason in run_info.calibration_stale:
            notices.add(f"Capacities: {reason}.")
        apps += a
        threads += t
        tasks += k
        for row in gem5stats.cpu_rows(list(stats.dumps)):
            cpus.append({**info, **row, "measured": row["dump"] == gem5stats.MEASURED_DUMP})
        if stats.measured:
            measured = stats.measured
            for row in measured["clusters"]:
                clusters.append({**info, **row})
            for row in measured["memory"]:
                memory.append({**info, **row})
    by_process = sorted({a["app"] for a in apps if a["timed_by"] == "process"})
    if by_process:
        notices.add(
            "Timed by the whole process (no region of interest reported, so start-up "
            f"and self-check included): {', '.join(by_process)}."
        )
    return Collection(
        notices=tuple(sorted(notices)),
        runs=_frame(runs, [*RUN_COLUMNS, "included", "reason", *KNOB_COLUMNS]),
        apps=_frame(
            apps,
            [
                *RUN_COLUMNS,
                *("app", "instance", "key", "threads", "turnaround_ns", "timed_by"),
                *("process_ns", "status"),
            ],
        ),
        threads=_frame(threads, [*RUN_COLUMNS, "app", "instance", "thread", "wall_ns", "cpu_ns"]),
        cpus=_frame(
            cpus,
            [
                *RUN_COLUMNS,
                *("dump", "measured", "cpu", "cluster", "cycles", "insts", "energy_j"),
                "sim_seconds",
                "residency_ticks",
            ],
        ),
        tasks=_frame(tasks, [*RUN_COLUMNS, "app", "instance"]),
        clusters=_frame(
            clusters,
            [*RUN_COLUMNS, "cluster", "cpus", "insts", "cpu_energy_j", "l2_energy_j", "energy_j"],
        ),
        memory=_frame(memory, [*RUN_COLUMNS, "memory", "energy_j"]),
    )


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame.columns:
            frame[column] = pd.Series(dtype="object")
    extra = [c for c in frame.columns if c not in columns]
    return frame[columns + extra]
