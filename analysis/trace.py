"""A run's kernel trace (ampkit.tracing) as a tidy frame, and what moved its
threads between the clusters.

tracefs writes one line an event::

    stages-131  [002] d..3.   5.123456: sched_migrate_task: comm=stages pid=133 ...

``events()`` reads them into a frame (task and pid of the context that
logged the event, its CPU, flags, time, the event's name and its fields
as text). ``migrations()`` takes every ``sched_migrate_task`` and tells
what made it, from what surrounds it in the trace:

- ``wake-up``: the task's wake-up placed it (``try_to_wake_up`` logs
  ``sched_waking`` and then, on the same CPU with interrupts off, the
  migration: the two are adjacent in that CPU's buffer, but for COLAB's
  ``sched_colab_place`` between them);
- ``colab``: COLAB's exchange between the clusters, which logs
  ``sched_colab_move`` for the same task, CPUs and moment;
- ``stopper``: the CPU's stopper thread (``migration/N``) moved it: an
  active balance or a change of the task's allowed CPUs (WASH's binding);
- ``balance``: anything else, the load balancer (periodic, idle, newly idle).

Which of these a trace can tell depends on the events it holds: without
``sched_waking`` no move is a wake-up's, without ``sched_colab_move`` none
is COLAB's (ampkit.tracing.PRESETS gives the sets that tell them).
"""

import re
from collections.abc import Iterable

import pandas as pd

#: tracefs's line: the logging context's task and pid, [CPU], the flags
#: (irqs off, need-resched, hard/soft irq, preempt depth), seconds, the
#: event and its fields. The task's name may hold spaces and dashes: its
#: pid is the last dash-number before the CPU.
_LINE = re.compile(
    r"^\s*(?P<task>.*)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?P<flags>\S+)\s+(?P<time>\d+\.\d+):\s+(?P<event>\w+):\s?(?P<fields>.*)$"
)
_FIELD = re.compile(r"(\w+)=(\S*)")

EVENT_COLUMNS = ["time_s", "cpu", "task", "pid", "flags", "event", "fields"]
MIGRATION_COLUMNS = [
    "time_s",
    "comm",
    "pid",
    "orig_cpu",
    "dest_cpu",
    "cross",
    "direction",
    "cause",
]
CAUSES = ("wake-up", "colab", "stopper", "balance")
#: How far apart a COLAB move and the migration it made may be logged: the
#: move is logged by the worker once the task is on its new CPU, the
#: migration by whichever CPU moved it.
COLAB_WINDOW_S = 0.001


class TraceError(ValueError):
    """A trace that cannot be read as tracefs's text."""


def fields(text: str) -> dict[str, str]:
    """An event's key=value fields (values without spaces, as the scheduler's)."""
    return dict(_FIELD.findall(text))


def events(lines: Iterable[str]) -> pd.DataFrame:
    """Every event line of a trace, in the order tracefs gave them (by
    time, its buffers merged); comment lines skipped. A line that is
    neither is an error: a trace the runner cut or garbled is not read."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise TraceError(f"line {number} is not a tracefs event: {line[:120]!r}")
        rows.append(
            (
                float(m["time"]),
                int(m["cpu"]),
                m["task"].strip(),
                int(m["pid"]),
                m["flags"],
                m["event"],
                m["fields"],
            )
        )
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def migrations(frame: pd.DataFrame, big_cpus: Iterable[int]) -> pd.DataFrame:
    """Every migration of the trace, with whether it crossed the clusters,
    which way ("up" to a big CPU, "down", or "" within a cluster) and its
    cause (CAUSES; the module's doc says how each is told)."""
    big = set(big_cpus)
    frame = frame.reset_index(drop=True)
    # the event before each one in its own CPU's buffer, past COLAB's
    # placement (logged between the wake-up and the migration it decides)
    previous: dict[int, int] = {}
    before: list[int] = []
    for index, (cpu, name) in enumerate(zip(frame["cpu"], frame["event"], strict=True)):
        before.append(previous.get(cpu, -1))
        if name != "sched_colab_place":
            previous[cpu] = index
    moved = frame[frame["event"] == "sched_colab_move"]
    colab = [(t, fields(f)) for t, f in zip(moved["time_s"], moved["fields"], strict=True)]
    used: set[int] = set()
    rows = []
    for index in frame.index[frame["event"] == "sched_migrate_task"]:
        event = frame.loc[index]
        f = fields(event["fields"])
        pid, src, dst = int(f["pid"]), int(f["orig_cpu"]), int(f["dest_cpu"])
        prior = before[index]
        woke = (
            prior >= 0
            and frame.at[prior, "event"] == "sched_waking"
            and fields(str(frame.at[prior, "fields"])).get("pid") == str(pid)
        )
        match = next(
            (
                i
                for i, (t, m) in enumerate(colab)
                if i not in used
                and abs(t - event["time_s"]) <= COLAB_WINDOW_S
                and m.get("pid") == str(pid)
                and m.get("src_cpu") == str(src)
                and m.get("dst_cpu") == str(dst)
            ),
            None,
        )
        if woke:
            cause = "wake-up"
        elif match is not None:
            used.add(match)
            cause = "colab"
        elif str(event["task"]).startswith("migration/"):
            cause = "stopper"
        else:
            cause = "balance"
        cross = (src in big) != (dst in big)
        direction = ("up" if dst in big else "down") if cross else ""
        rows.append((event["time_s"], f.get("comm", ""), pid, src, dst, cross, direction, cause))
    return pd.DataFrame(rows, columns=MIGRATION_COLUMNS)


def crossings(moves: pd.DataFrame) -> pd.DataFrame:
    """Migrations between the clusters per program (the task's name) and
    cause, up and down, and within a cluster: one row a program and cause,
    with the program's threads that moved (over several runs' migrations,
    a ``run`` column tells their pids apart)."""
    if moves.empty:
        return pd.DataFrame(columns=["comm", "cause", "up", "down", "within", "threads"])
    table = (
        moves.assign(
            up=moves["direction"] == "up",
            down=moves["direction"] == "down",
            within=~moves["cross"],
        )
        .groupby(["comm", "cause"], sort=True)
        .agg(up=("up", "sum"), down=("down", "sum"), within=("within", "sum"))
        .reset_index()
    )
    # a thread is a pid of a run: pids are reused from run to run
    ids = [c for c in ("run", "pid") if c in moves.columns]
    threads = moves[["comm", *ids]].drop_duplicates().groupby("comm").size().rename("threads")
    return table.merge(threads, on="comm").astype(
        {"up": int, "down": int, "within": int, "threads": int}
    )
