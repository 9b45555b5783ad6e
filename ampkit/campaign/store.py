"""A campaign directory, and what it says about each run.

    campaign.json       what the campaign was last run with: the spec, the
                        kernel, the initramfs and the engine, by hash
    spec.toml           the spec as last run (relative paths in it are
                        relative to spec_base in campaign.json)
    artifacts/          the initramfs every run boots, copied once, so that
                        a rebuild in the middle of a campaign changes nothing;
                        behaviour.toml, the table that sized the apps its
                        mixes leave unsized, speedups.toml, the profile its
                        hints came from, and mix-profiles/<mix>.toml, the
                        profile a mix names of its own (its energies), pinned
                        alike (run keys hold what they give)
    runs/<run_id>/      finished runs, ok or failed (ampkit/run.py); only
                        these are read by 'ampkit report'
    runs/<run_id>.partial  a run in progress, or one that was interrupted
    attempts/<run_id>/<n>-<why>/  earlier attempts, set aside (never deleted)
                        when a failed run is run again or its inputs changed
    failures/<run_id>.json  a run that never finished because its executor
                        failed it (a SLURM task cancelled, out of time, ...)
    logs/<run_id>.log   what each attempt at the run printed
    slurm/<n>/          one job array submission: job.sh, tasks.json, outputs
    lock                held by the one process running the campaign

A run's state comes from these files alone, so a campaign runner killed at
any moment (even by SIGKILL) leaves nothing that the next one misreads.

A run is ok when it is done as ``RunDir.done()`` says (the references ask
the same): it counts in the metrics, and the planned inputs made it. A run
that ended ok but does not count (a gem5 run without its statistics, a
torn results file...) is failed, its detail saying "ended ok but does not
count: " and the report's reason for leaving it out: like any failed run
it is kept and listed by 'campaign status', and run again by 'campaign
rerun --failed' (not by every 'campaign run', which would repeat a run
that fails the same way each time).
"""

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit import rundir
from ampkit.errors import AmpkitError, UsageError
from ampkit.hashing import write_json
from ampkit.rundir import CONSOLE, PlannedKey, RunDir, partial_of

META = "campaign.json"

#: Run states, in the order status lists them.
OK = "ok"  # done (RunDir.done): finished, counts, with the planned inputs
FAILED = "failed"  # finished and failed or not counting, or failed by its executor
STALE = "stale"  # finished, but with other inputs than the plan's (run again)
TODO = "todo"  # not finished (never started, or interrupted)
STATES = (OK, FAILED, STALE, TODO)
#: The detail of a run that ended ok but may not count, before the reason.
ENDED_OK_UNCOUNTED = "ended ok but does not count"


@dataclass(frozen=True)
class RunState:
    state: str
    detail: str = ""
    log: Path | None = None


class CampaignDir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs = root / "runs"
        self.attempts = root / "attempts"
        self.failures = root / "failures"
        self.logs = root / "logs"
        self.slurm = root / "slurm"
        self.artifacts = root / "artifacts"

    @classmethod
    def existing(cls, root: Path) -> "CampaignDir":
        if not (root / META).is_file():
            raise AmpkitError(
                f"{root} is not a campaign directory (no {META})",
                "give the directory 'ampkit campaign run' wrote (default campaigns/<name>)",
            )
        return cls(root)

    def create(self) -> None:
        for d in (self.runs, self.attempts, self.failures, self.logs, self.artifacts):
            d.mkdir(parents=True, exist_ok=True)

    # --- metadata ---------------------------------------------------------

    def has_meta(self) -> bool:
        """Whether a campaign has run here (and pinned its inputs)."""
        return (self.root / META).is_file()

    def meta(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.root / META).read_text())
        return data

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_json(self.root / META, meta)

    @property
    def initramfs(self) -> Path:
        return self.artifacts / "initramfs.cpio.gz"

    @property
    def behaviour(self) -> Path:
        """The behaviour table that sized the apps the mixes leave unsized."""
        return self.artifacts / "behaviour.toml"

    @property
    def speedups(self) -> Path:
        """The speedup profile the spec's hints came from."""
        return self.artifacts / "speedups.toml"

    def mix_profile(self, mix: str) -> Path:
        """The profile mix ``mix`` names of its own (its energies), as the
        campaign first read it."""
        return self.artifacts / "mix-profiles" / f"{mix}.toml"

    # --- one runner at a time ---------------------------------------------

    @contextlib.contextmanager
    def locked(self, what: str) -> Iterator[None]:
        """Hold the campaign's lock, or refuse with who holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / "lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = path.read_text().strip() or "another process"
                raise UsageError(
                    f"{self.root} is already in use: {holder}",
                    "wait for it to finish or stop it; 'ampkit campaign status' "
                    "reads a campaign while it runs",
                ) from None
            os.ftruncate(fd, 0)
            started = time.strftime("%Y-%m-%d %H:%M:%S")
            holder = f"{what} (pid {os.getpid()} on {socket.gethostname()}, since {started})"
            os.write(fd, (holder + "\n").encode())
            yield
        finally:
            os.close(fd)  # releases the lock; a killed holder releases it too

    def holder(self) -> str | None:
        """Who holds the campaign's lock now, or None."""
        path = self.root / "lock"
        if not path.exists():
            return None
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return path.read_text().strip() or "another process"
        finally:
            os.close(fd)
        return None

    @contextlib.contextmanager
    def run_locked(self, run_id: str) -> Iterator[None]:
        """One process at a time on a run, whichever executor started it."""
        self.runs.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.runs / f".{run_id}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # --- runs -------------------------------------------------------------

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id

    def log(self, run_id: str) -> Path:
        return self.logs / f"{run_id}.log"

    def failure(self, run_id: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.failures / f"{run_id}.json").read_text())
        except (OSError, ValueError):
            return None
        return data

    def record_failure(self, run_id: str, reason: str, log: Path | None, **extra: Any) -> None:
        """The executor lost the run before it finished: say why, point at the log."""
        self.failures.mkdir(parents=True, exist_ok=True)
        record = {"run_id": run_id, "reason": reason, "log": str(log) if log else None, **extra}
        record["recorded"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        write_json(self.failures / f"{run_id}.json", record)

    def state(self, run_id: str, key: PlannedKey | None) -> RunState:
        """What the directory says about a run planned with ``key``."""
        run = RunDir(self.run_dir(run_id))
        if run.is_finished():
            if key is not None and not run.made_from(key):
                return RunState(STALE, "finished with other inputs than planned", run.path)
            if run.done(key):
                return RunState(OK, "", run.path)
            status = run.status()
            if status != rundir.OK:
                return RunState(FAILED, status.removeprefix("failed: "), run.path / CONSOLE)
            # the report would leave it out: say why, rather than call it done
            return RunState(FAILED, f"{ENDED_OK_UNCOUNTED}: {run.exclusion()}", run.path)
        if failure := self.failure(run_id):
            log = Path(failure["log"]) if failure.get("log") else None
            return RunState(FAILED, str(failure.get("reason")), log)
        return RunState(TODO, "interrupted" if run.was_interrupted() else "", None)

    def set_aside(self, run_id: str, why: str) -> Path | None:
        """Move what an earlier attempt left (finished run, failure record,
        interrupted run) under attempts/<run_id>/<n>-<why>/; nothing is deleted."""
        run_dir = self.run_dir(run_id)
        leftovers = {
            "run": run_dir,
            "failure.json": self.failures / f"{run_id}.json",
            "interrupted": partial_of(run_dir),
        }
        present = {name: path for name, path in leftovers.items() if path.exists()}
        if not present:
            return None
        base = self.attempts / run_id
        base.mkdir(parents=True, exist_ok=True)
        n = 1 + sum(1 for _ in base.iterdir())
        moved = base / f"{n}-{why}"
        moved.mkdir()
        for name, path in present.items():
            path.rename(moved / name)
        return moved

    def attempt_count(self, run_id: str) -> int:
        base = self.attempts / run_id
        return sum(1 for _ in base.iterdir()) if base.is_dir() else 0
