"""A real one-node SLURM cluster on localhost: munged, slurmctld and slurmd
from Debian's packages, started and stopped by the slurm tier's fixture
(conftest.py) and by benchmarks/campaign.py.

Private ports, state, spool, logs and pid files live in a temporary
directory; munged uses its standard socket (SLURM's client commands find
it there), and is started only if none is answering already.
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")
MUNGE_KEY = Path("/etc/munge/munge.key")
MUNGE_RUN = Path("/run/munge")


class NotRoot(Exception):
    pass


@dataclass(frozen=True)
class Cluster:
    conf: Path
    directory: Path
    partition: str

    def log_tail(self) -> str:
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = self.directory / name
            if path.is_file():
                out.append(f"--- {name}\n" + "\n".join(path.read_text().splitlines()[-20:]))
        return "\n".join(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _munge_works() -> bool:
    munge = subprocess.run(["munge", "-n"], capture_output=True)
    if munge.returncode != 0:
        return False
    return subprocess.run(["unmunge"], input=munge.stdout, capture_output=True).returncode == 0


def _start_munge(directory: Path) -> int | None:
    """Start munged unless one answers; its pid if we started it."""
    if _munge_works():
        return None
    if not MUNGE_KEY.is_file():
        MUNGE_KEY.parent.mkdir(parents=True, exist_ok=True)
        MUNGE_KEY.write_bytes(os.urandom(1024))
        MUNGE_KEY.chmod(0o400)
    for d in (MUNGE_RUN, Path("/var/lib/munge"), Path("/var/log/munge")):
        d.mkdir(parents=True, exist_ok=True)
    pid_file = directory / "munged.pid"
    subprocess.run(
        ["munged", "--force", f"--pid-file={pid_file}", f"--log-file={directory / 'munged.log'}"],
        check=True,
        capture_output=True,
    )
    deadline = time.monotonic() + 10
    while not _munge_works():
        if time.monotonic() > deadline:
            log = _read(directory / "munged.log")
            raise RuntimeError(f"munged did not answer within 10 s:\n{log}")
        time.sleep(0.2)
    return int(pid_file.read_text())


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else f"({path} missing)"


def _kill(pid_file: Path) -> None:
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def missing_programs() -> list[str]:
    return [d for d in DAEMONS if shutil.which(d) is None]


@contextlib.contextmanager
def local_cluster(directory: Path) -> Iterator[Cluster]:
    """Start the cluster with its files in ``directory``; stop it on exit.
    SLURM_CONF points at it meanwhile, for the kit and the client commands."""
    if os.geteuid() != 0:
        raise NotRoot("the SLURM tier starts munged and the SLURM daemons as root")
    directory.mkdir(parents=True, exist_ok=True)
    munged = _start_munge(directory)
    host = socket.gethostname().split(".")[0]
    memory_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20) // 2
    conf = directory / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=ampkit-test",
                f"SlurmctldHost={host}",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"StateSaveLocation={directory / 'state'}",
                f"SlurmdSpoolDir={directory / 'spool'}",
                f"SlurmctldPidFile={directory / 'slurmctld.pid'}",
                f"SlurmdPidFile={directory / 'slurmd.pid'}",
                f"SlurmctldLogFile={directory / 'slurmctld.log'}",
                f"SlurmdLogFile={directory / 'slurmd.log'}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/backfill",
                "AccountingStorageType=accounting_storage/none",
                "JobCompType=jobcomp/none",
                "MpiDefault=none",
                "ReturnToService=2",
                "MinJobAge=600",
                f"NodeName={host} CPUs={os.cpu_count()} RealMemory={memory_mb} State=UNKNOWN",
                f"PartitionName=ampkit Nodes={host} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    for d in ("state", "spool"):
        (directory / d).mkdir()
    old_conf = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(conf)
    try:
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, capture_output=True)
        subprocess.run(["slurmd", "-f", str(conf)], check=True, capture_output=True)
        cluster = Cluster(conf, directory, "ampkit")
        deadline = time.monotonic() + 30
        while True:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True)
            if state.stdout.strip() == "idle":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the node is not idle after 30 s:\n{cluster.log_tail()}")
            time.sleep(0.5)
        yield cluster
    finally:
        subprocess.run(["scancel", "--full", "--user=root"], capture_output=True)
        _kill(directory / "slurmd.pid")
        _kill(directory / "slurmctld.pid")
        if munged is not None:
            _kill(directory / "munged.pid")
        if old_conf is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old_conf
