"""Child processes the kit supervises: engines, campaign executors, builds.

Every long-lived child (QEMU, gem5, a campaign's run executor, the kernel's
and PARSEC's make) is started
the same way: in a session of its own, so that it and everything it starts
can be killed as one group, and with a parent-death signal, so that a CLI
killed outright (SIGKILL, which runs no cleanup) still takes it down. A
wait has a wall-clock limit, and whatever ends the wait (the limit, Ctrl-C,
SystemExit) kills the group: no child outlives the kit.
"""

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from ampkit import hostdeps

#: util-linux's setpriv sets the parent-death signal and then runs the
#: program, so the child dies with the process that started it.
DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "KILL", "--"]


def start(
    cmd: list[str],
    *,
    stdout: int | IO[bytes] | IO[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> "subprocess.Popen[bytes]":
    """Start ``cmd`` supervised: its own session, killed with its parent;
    stdin from /dev/null, stderr into ``stdout``."""
    hostdeps.require(DIE_WITH_PARENT[0])
    return subprocess.Popen(
        [*DIE_WITH_PARENT, *cmd],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=cwd,
        env=env,
    )


def run_to_end(proc: "subprocess.Popen[bytes]") -> int:
    """Wait for a supervised child however long it takes (a build); its
    exit code. Whatever ends the wait early (Ctrl-C, SystemExit, an error
    while reading its output) kills its group first."""
    try:
        return proc.wait()
    finally:
        kill_session(proc)


def kill_session(proc: "subprocess.Popen[bytes]") -> None:
    """Kill a child started by ``start()``, and everything it started."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def wait_or_kill(proc: "subprocess.Popen[bytes]", timeout_s: float) -> bool:
    """Wait for a child at most ``timeout_s``; whether it had to be killed.
    Killed also on KeyboardInterrupt or SystemExit: no child outlives us."""
    try:
        proc.wait(timeout=timeout_s)
        return False
    except subprocess.TimeoutExpired:
        return True
    finally:
        kill_session(proc)


def stop_all(procs: Iterable["subprocess.Popen[bytes]"], grace_s: float = 15) -> None:
    """SIGTERM to every child's group first (it unwinds: its own children
    killed, its logs kept), then SIGKILL to those still there after
    ``grace_s``."""
    procs = list(procs)
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
