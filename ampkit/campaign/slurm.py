"""The SLURM executor: a job array per submission, one run per array task.

Each task runs ``ampkit campaign exec --submission N --task $SLURM_ARRAY_TASK_ID
DIR``, which writes the run into DIR/runs on the shared filesystem, exactly
as a local run does. The campaign runner submits, then follows the array
until every task has ended. Task states come from ``squeue`` (live tasks),
``scontrol show job`` (recently ended ones) and ``sacct`` where the cluster
keeps accounting; a task that ended without a finished run directory
(failed, cancelled, out of time, lost) is recorded as a failure with the
path of its output, and run again only on request (``campaign rerun
--failed``). A runner that is stopped leaves the array running: the next
``campaign run`` or ``campaign status`` picks it up again.
"""

import json
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit import hostdeps
from ampkit.campaign.progress import Progress
from ampkit.campaign.spec import Spec, slurm_minutes
from ampkit.campaign.store import OK, TODO, CampaignDir
from ampkit.errors import AmpkitError
from ampkit.hashing import write_json

#: States of a task that has not ended yet.
LIVE = {
    "PENDING",
    "RUNNING",
    "CONFIGURING",
    "COMPLETING",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "RESIZING",
    "SUSPENDED",
    "STOPPED",
    "SIGNALING",
    "STAGE_OUT",
}
#: SLURM's default MaxArraySize is 1001: bigger submissions are split.
MAX_ARRAY = 1000
POLL_S = 2.0


@dataclass(frozen=True)
class Submission:
    directory: Path
    job_id: str
    run_ids: tuple[str, ...]

    def output(self, task: int) -> Path:
        return self.directory / f"task-{task}.out"

    @classmethod
    def load(cls, directory: Path) -> "Submission":
        data = json.loads((directory / "submission.json").read_text())
        return cls(directory, str(data["job_id"]), tuple(data["run_ids"]))


def submissions(cdir: CampaignDir) -> list[Submission]:
    if not cdir.slurm.is_dir():
        return []
    return [
        Submission.load(d)
        for d in sorted(cdir.slurm.iterdir())
        if (d / "submission.json").is_file()
    ]


def task_run(cdir: CampaignDir, number: str, task: int) -> str:
    """The run of a submission's array task (what the task's exec asks)."""
    tasks = json.loads((cdir.slurm / number / "tasks.json").read_text())
    if not 0 <= task < len(tasks):
        raise AmpkitError(f"submission {number} has no task {task} (it has {len(tasks)})")
    return str(tasks[task])


def _slurm(*cmd: str) -> subprocess.CompletedProcess[str]:
    hostdeps.require_program(cmd[0])
    return subprocess.run(list(cmd), capture_output=True, text=True)


def submit(cdir: CampaignDir, spec: Spec, run_ids: list[str]) -> list[Submission]:
    """Submit the runs as job arrays (of at most MAX_ARRAY tasks each)."""
    out = []
    for start in range(0, len(run_ids), MAX_ARRAY):
        out.append(_submit_one(cdir, spec, run_ids[start : start + MAX_ARRAY]))
    return out


def _submit_one(cdir: CampaignDir, spec: Spec, run_ids: list[str]) -> Submission:
    cdir.slurm.mkdir(parents=True, exist_ok=True)
    number = f"{1 + len([d for d in cdir.slurm.iterdir() if d.is_dir()]):04d}"
    directory = cdir.slurm / number
    directory.mkdir()
    (directory / "tasks.json").write_text(json.dumps(run_ids, indent=1) + "\n")
    root = cdir.root.resolve()
    script = directory / "job.sh"
    exec_cmd = [sys.executable, "-m", "ampkit", "campaign", "exec", "--submission", number]
    script.write_text(
        "#!/bin/sh\n"
        f"# ampkit campaign {spec.name}: submission {number}, one run per array task\n"
        f'exec {shlex.join(exec_cmd)} --task "$SLURM_ARRAY_TASK_ID" {shlex.quote(str(root))}\n'
    )
    script.chmod(0o755)
    ex, limits = spec.executor, spec.limits
    array = f"0-{len(run_ids) - 1}" + (f"%{ex.max_parallel}" if ex.max_parallel else "")
    cmd = [
        "sbatch",
        "--parsable",
        f"--array={array}",
        f"--job-name=ampkit-{spec.name}",
        f"--output={directory.resolve()}/task-%a.out",
        f"--time={slurm_minutes(limits)}",
        f"--mem={limits.memory_mb}M",
        f"--cpus-per-task={limits.cpus}",
        f"--chdir={root}",
        *([f"--partition={ex.partition}"] if ex.partition else []),
        *([f"--account={ex.account}"] if ex.account else []),
        *ex.sbatch_args,
        str(script.resolve()),
    ]
    result = _slurm(*cmd)
    if result.returncode != 0:
        (directory / "sbatch.err").write_text(result.stderr)
        directory.rename(directory.with_name(f"{number}-refused"))
        raise AmpkitError(
            f"sbatch refused the job array: {result.stderr.strip()}",
            "check [executor] partition, account and sbatch_args, and [limits] "
            "memory_mb and cpus against the cluster ('sinfo', 'scontrol show partition')",
        )
    job_id = result.stdout.strip().split(";")[0]
    record: dict[str, Any] = {
        "job_id": job_id,
        "run_ids": run_ids,
        "submitted": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": cmd,
    }
    write_json(directory / "submission.json", record)
    return Submission(directory, job_id, tuple(run_ids))


# --- task states ------------------------------------------------------------------


def _expand_ids(text: str) -> list[int]:
    """'3', '3-9', '3-9%2', '[3-5,7]' -> task numbers."""
    text = text.strip("[]").split("%")[0]
    out: list[int] = []
    for part in text.split(","):
        if m := re.fullmatch(r"(\d+)-(\d+)(?::(\d+))?", part):
            out += range(int(m.group(1)), int(m.group(2)) + 1, int(m.group(3) or 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def _state_word(state: str) -> str:
    return state.split(maxsplit=1)[0].rstrip("+") if state.strip() else "UNKNOWN"


def task_states(job_id: str) -> dict[int, tuple[str, str]]:
    """Task -> (state, exit code) for the tasks SLURM still knows."""
    states: dict[int, tuple[str, str]] = {}
    acct = _slurm("sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,ExitCode")
    if acct.returncode == 0:
        for line in acct.stdout.splitlines():
            fields = line.split("|")
            if len(fields) == 3 and "_" in fields[0]:
                for task in _expand_ids(fields[0].split("_", 1)[1]):
                    states[task] = (_state_word(fields[1]), fields[2])
    show = _slurm("scontrol", "-o", "show", "job", job_id)
    if show.returncode == 0:
        for line in show.stdout.splitlines():
            job = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "ArrayTaskId" in job and "JobState" in job:
                for task in _expand_ids(job["ArrayTaskId"]):
                    states[task] = (_state_word(job["JobState"]), job.get("ExitCode", ""))
    queue = _slurm("squeue", "-h", "-r", "-j", job_id, "-o", "%K|%T")
    if queue.returncode == 0:
        for line in queue.stdout.splitlines():
            ids, _, state = line.partition("|")
            for n in _expand_ids(ids):
                states[n] = (_state_word(state), "")
    return states


def reconcile(cdir: CampaignDir) -> dict[str, str]:
    """Record the failures of ended tasks; return the live runs and their states."""
    live: dict[str, str] = {}
    subs = submissions(cdir)
    for index, sub in enumerate(subs):
        if (sub.directory / "settled").exists():
            continue
        # a run submitted again later: this task's end no longer matters
        resubmitted = {run_id for later in subs[index + 1 :] for run_id in later.run_ids}
        states = task_states(sub.job_id)
        for task, run_id in enumerate(sub.run_ids):
            state, exit_code = states.get(task, ("", ""))
            if state in LIVE:
                live[run_id] = state
                continue
            if cdir.state(run_id, None).state != TODO or run_id in resubmitted:
                continue
            where = f"SLURM task {sub.job_id}_{task}"
            if not state:
                reason = f"{where} is no longer known to SLURM and left no finished run"
            elif state == "COMPLETED":
                reason = f"{where} completed without finishing the run"
            else:
                reason = f"{where} ended {state}" + (
                    f" (exit code {exit_code})" if exit_code else ""
                )
            cdir.record_failure(
                run_id, reason, sub.output(task), slurm_job=sub.job_id, slurm_task=task,
                slurm_state=state or "UNKNOWN",
            )  # fmt: skip
        if not any(run_id in live for run_id in sub.run_ids):
            (sub.directory / "settled").write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
    return live


def follow(cdir: CampaignDir, run_ids: list[str], progress: Progress) -> None:
    """Wait until none of run_ids is live, showing progress."""
    reported: set[str] = set()
    while True:
        live = reconcile(cdir)
        for run_id in run_ids:
            if run_id in reported or run_id in live:
                continue
            state = cdir.state(run_id, None)
            if state.state != TODO:
                reported.add(run_id)
                progress.finished(run_id, state.state == OK, state.detail)
        running = sum(1 for r in run_ids if live.get(r) == "RUNNING")
        queued = sum(1 for r in run_ids if r in live) - running
        progress.update(running, queued)
        if not any(r in live for r in run_ids):
            progress.close()
            return
        time.sleep(POLL_S)
