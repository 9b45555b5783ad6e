"""Run directories into tidy tables.

``collect(root)`` walks every run directory under ``root`` (a directory
with a ``manifest.json``) and returns a ``Collection`` of pandas tables:

runs     one row per run directory, whether it counts (``included``) and,
         if not, why (``reason``);
apps     one row per application per included run: campaign, run, run_id,
         engine, platform, policy, mix, repetition, app, instance, key,
         threads, turnaround_ns, status;
threads  one row per thread of those applications: wall_ns, cpu_ns;
cpus     one row per CPU per gem5 stats dump where the run has gem5 stats:
         dump, cpu, cluster, cycles, insts, energy_j, sim_seconds;
clusters one row per CPU cluster of such a run, from its last dump: cpus,
         insts, cpu_energy_j, l2_energy_j, energy_j (CPUs and L2);
tasks    the kernel's per-task counters, where an application record
         carries them (a ``tasks`` list of objects), one row per task.

A run counts only when it finished (``status`` is ``ok``), its manifest and
results parse, and every application of its mix has exactly one record
with status ``ok``. Anything else is listed in ``runs`` with its reason and
enters no other table, so it can never reach a metric. ``key`` identifies
an application across mixes (program, threads, arguments): the reference
runs are found by it.
"""

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ampkit.analysis import gem5stats

RUN_COLUMNS = ["campaign", "run", "run_id", "engine", "platform", "policy", "mix", "repetition"]


@dataclass
class Collection:
    runs: pd.DataFrame
    apps: pd.DataFrame
    threads: pd.DataFrame
    cpus: pd.DataFrame
    tasks: pd.DataFrame
    clusters: pd.DataFrame

    TABLES = ("runs", "apps", "threads", "cpus", "clusters", "tasks")

    def save(self, out: Path) -> list[Path]:
        """Each table as Parquet and CSV in ``out``; the paths written."""
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name in self.TABLES:
            table: pd.DataFrame = getattr(self, name)
            table.to_parquet(out / f"{name}.parquet", index=False)
            table.to_csv(out / f"{name}.csv", index=False)
            written += [out / f"{name}.parquet", out / f"{name}.csv"]
        return written

    @property
    def excluded(self) -> pd.DataFrame:
        return self.runs[~self.runs["included"]]


class Excluded(Exception):
    """A run that must not count, and why."""


def app_key(program: str, threads: int, argv: list[str]) -> str:
    """One application, whatever mix it ran in: the reference runs are matched by it."""
    return " ".join([f"{program}/{threads}", *argv])


def find_run_dirs(root: Path) -> tuple[list[Path], list[Path]]:
    """Run directories under ``root`` (or ``root`` itself), in one walk: those
    that hold a manifest.json, and the ``*.partial`` ones of unfinished runs."""
    if (root / "manifest.json").is_file():
        return [root], []
    finished, partial = [], []
    for dirpath, _, filenames in os.walk(root):
        here = Path(dirpath)
        if here.name.endswith(".partial"):
            partial.append(here)
        elif "manifest.json" in filenames:
            finished.append(here)
    return sorted(finished), sorted(partial)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as e:
        raise Excluded(f"incomplete: no {path.name}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise Excluded(f"corrupt: {path.name} is not JSON ({e})") from e


def _read_results(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise Excluded("incomplete: no results.jsonl")
    records = []
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise Excluded(f"corrupt: results.jsonl line {lineno} is not JSON (truncated?)") from e
        if not isinstance(record, dict):
            raise Excluded(f"corrupt: results.jsonl line {lineno} is not an object")
        records.append(record)
    return records


def _run_info(run_dir: Path, root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    rel = run_dir.relative_to(root) if run_dir != root else Path(run_dir.name)
    campaign = manifest.get("campaign") or (rel.parts[0] if len(rel.parts) > 1 else root.name)
    engine = manifest.get("engine")
    platform = manifest.get("platform")
    mix = manifest.get("mix")
    return {
        "campaign": str(campaign),
        "run": str(rel),
        "run_id": manifest.get("run_id"),
        "engine": engine.get("name") if isinstance(engine, dict) else engine,
        "platform": platform.get("name") if isinstance(platform, dict) else platform,
        "policy": manifest.get("policy"),
        "mix": mix.get("name") if isinstance(mix, dict) else mix,
        "repetition": manifest.get("repetition"),
    }


def _check_manifest(info: dict[str, Any], manifest: dict[str, Any]) -> list[dict[str, Any]]:
    missing = [k for k in ("run_id", "engine", "platform", "policy", "mix") if info.get(k) is None]
    if missing or not isinstance(info.get("repetition"), int):
        raise Excluded(f"corrupt: manifest.json lacks {', '.join(missing) or 'repetition'}")
    apps = manifest["mix"].get("apps") if isinstance(manifest["mix"], dict) else None
    if not isinstance(apps, list) or not apps:
        raise Excluded("corrupt: manifest.json names no applications of the mix")
    return apps


def _app_rows(
    info: dict[str, Any], mix_apps: list[dict[str, Any]], records: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    # The runner numbers instances per program, in mix order.
    wanted: dict[tuple[str, int], dict[str, Any]] = {}
    for app in mix_apps:
        program = str(app["program"])
        instance = sum(1 for p, _ in wanted if p == program)
        wanted[(program, instance)] = app
    by_app: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        if rec.get("type", "app") != "app":
            continue
        ident = (str(rec.get("app")), int(rec.get("instance", -1)))
        if ident not in wanted:
            raise Excluded(f"corrupt: a record of {ident[0]}#{ident[1]}, which the mix lacks")
        if ident in by_app:
            raise Excluded(f"corrupt: two records of {ident[0]}#{ident[1]}")
        by_app[ident] = rec
    absent = [f"{p}#{i}" for p, i in wanted if (p, i) not in by_app]
    if absent:
        raise Excluded(f"incomplete: no result for {', '.join(absent)}")
    bad = [f"{p}#{i}: {r.get('status')}" for (p, i), r in by_app.items() if r.get("status") != "ok"]
    if bad:
        raise Excluded(f"failed application: {'; '.join(bad)}")

    apps, threads, tasks = [], [], []
    for (program, instance), rec in by_app.items():
        try:
            start, end = int(rec["start_ns"]), int(rec["end_ns"])
            nthreads = int(rec["threads"])
        except (KeyError, TypeError, ValueError) as e:
            raise Excluded(f"corrupt: {program}#{instance} record lacks {e}") from e
        if end <= start:
            raise Excluded(f"corrupt: {program}#{instance} ended before it started")
        argv = [str(a) for a in rec.get("argv") or []]
        row = {
            **info,
            "app": program,
            "instance": instance,
            "key": app_key(program, nthreads, argv),
            "threads": nthreads,
            "turnaround_ns": end - start,
            "status": rec["status"],
        }
        apps.append(row)
        wall = rec.get("thread_times_ns") or []
        cpu = rec.get("thread_cpu_ns") or [math.nan] * len(wall)
        for t, (w, c) in enumerate(zip(wall, cpu, strict=False)):
            threads.append(
                {
                    **info,
                    "app": program,
                    "instance": instance,
                    "thread": t,
                    "wall_ns": w,
                    "cpu_ns": c,
                }
            )
        for task in rec.get("tasks") or []:
            if isinstance(task, dict):
                tasks.append({**info, "app": program, "instance": instance, **task})
    return apps, threads, tasks


def collect(root: Path) -> Collection:
    """Every run directory under ``root`` into tables; see the module's text."""
    runs: list[dict[str, Any]] = []
    apps: list[dict[str, Any]] = []
    threads: list[dict[str, Any]] = []
    cpus: list[dict[str, Any]] = []
    clusters: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    finished, partial = find_run_dirs(root)
    for run_dir in partial:
        rel = str(run_dir.relative_to(root))
        reason = "incomplete: the run did not finish (a .partial directory)"
        runs.append({"campaign": root.name, "run": rel, "included": False, "reason": reason})
    for run_dir in finished:
        info: dict[str, Any] = {"campaign": root.name, "run": str(run_dir.relative_to(root))}
        try:
            manifest = _read_json(run_dir / "manifest.json")
            if not isinstance(manifest, dict):
                raise Excluded("corrupt: manifest.json is not an object")
            info = _run_info(run_dir, root, manifest)
            mix_apps = _check_manifest(info, manifest)
            try:
                status = (run_dir / "status").read_text().strip()
            except FileNotFoundError as e:
                raise Excluded("incomplete: no status file (the run did not finish)") from e
            if status != "ok":
                raise Excluded(status)
            records = _read_results(run_dir / "results.jsonl")
            a, t, k = _app_rows(info, mix_apps, records)
            try:
                dumps = gem5stats.read_stats(run_dir)
            except gem5stats.StatsError as e:
                raise Excluded(f"corrupt: gem5 stats: {e}") from e
            if info["engine"] == "gem5" and dumps is None:
                raise Excluded("incomplete: a gem5 run without stats.txt or stats.json")
        except Excluded as e:
            runs.append({**info, "included": False, "reason": str(e)})
            continue
        runs.append({**info, "included": True, "reason": ""})
        apps += a
        threads += t
        tasks += k
        for row in gem5stats.cpu_rows(dumps or []):
            cpus.append({**info, **row})
        if dumps:
            for row in gem5stats.summary(dumps)["clusters"]:
                clusters.append({**info, **row})
    return Collection(
        runs=_frame(runs, [*RUN_COLUMNS, "included", "reason"]),
        apps=_frame(
            apps, [*RUN_COLUMNS, "app", "instance", "key", "threads", "turnaround_ns", "status"]
        ),
        threads=_frame(threads, [*RUN_COLUMNS, "app", "instance", "thread", "wall_ns", "cpu_ns"]),
        cpus=_frame(
            cpus,
            [*RUN_COLUMNS, "dump", "cpu", "cluster", "cycles", "insts", "energy_j", "sim_seconds"],
        ),
        tasks=_frame(tasks, [*RUN_COLUMNS, "app", "instance"]),
        clusters=_frame(
            clusters,
            [*RUN_COLUMNS, "cluster", "cpus", "insts", "cpu_energy_j", "l2_energy_j", "energy_j"],
        ),
    )


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame.columns:
            frame[column] = pd.Series(dtype="object")
    extra = [c for c in frame.columns if c not in columns]
    return frame[columns + extra]
