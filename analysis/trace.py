"""A run's kernel trace (ampkit.tracing) as a tidy frame, and what moved its
threads between the clusters.

tracefs writes one line an event::

    stages-131  [002] d..3.   5.123456: sched_migrate_task: comm=stages pid=133 ...

and, after each ``sched_migrate_task`` (the runner sets a stacktrace
trigger on it), the kernel stack that made the migration::

    stages-131  [002] d..3.   5.123458: <stack trace>
     => set_task_cpu
     => try_to_wake_up
     ...

``events()`` reads them into a frame (task and pid of the context that
logged the event, its CPU, flags, time, the event's name, its fields as
text, and the stack where one follows). ``migrations()`` takes every
``sched_migrate_task`` and tells what made it from its stack, the code
that did it, not a guess from what surrounds it:

- ``wake-up``: the task's wake-up placed it (``try_to_wake_up``);
- ``colab``: COLAB's exchange between the clusters (its stopper
  functions, ``colab_move_stop`` and ``colab_swap_stop``) or an idle big
  CPU's pull (``colab_newidle_pull``);
- ``balance``: the load balancer, periodic, idle, newly idle or active
  (``load_balance``, ``newidle_balance`` or Debian's
  ``sched_balance_newidle``, ``active_load_balance_cpu_stop``);
- ``affinity``: a change of the task's allowed CPUs or its exec's
  placement, through the stopper (``migration_cpu_stop``) or in the
  caller (``__set_cpus_allowed_ptr``): WASH's binding is one;
- ``other``: any other stack, and ``unknown`` a migration without one.

A new task's first CPU is set without a migration event
(``wake_up_new_task``), so forks are not among them. With
``sched_switch`` in the trace, each migration also says whether the CPU
the task left, and the one it went to, were idle then (``None`` where
the trace cannot say; with ``sched_wakeup`` too, a CPU a task has just
been woken onto counts as busy).
"""

import bisect
import re
from collections.abc import Callable, Iterable, Sequence

import pandas as pd

#: tracefs's line: the logging context's task and pid, an optional tgid
#: column, [CPU], the flags (irqs off, need-resched, hard/soft irq, preempt
#: depth), seconds, the event and its fields. The task's name may hold
#: spaces and dashes: its pid is the last dash-number before the CPU.
_LINE = re.compile(
    r"^\s*(?P<task>.*)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?P<flags>\S+)\s+(?P<time>\d+\.\d+):\s+(?P<event>\w+|<stack trace>):?\s?(?P<fields>.*)$"
)
#: A frame of a stack trace: " => function" (with "+0x../0x.." under the
#: sym-offset option).
_FRAME = re.compile(r"^\s*=> (?P<function>[^+\s]+)")
#: The scheduler's events print the task's name first and up to the pid:
#: a name may hold spaces.
_COMM = re.compile(r"(?:^|\s)(?P<key>(?:prev_|next_)?comm)=(?P<value>.*?) (?=(?:prev_|next_)?pid=)")
_FIELD = re.compile(r"(\w+)=(\S*)")
STACK_EVENT = "<stack trace>"

EVENT_COLUMNS = ["time_s", "cpu", "task", "pid", "flags", "event", "fields", "stack"]
_EVENT, _STACK = EVENT_COLUMNS.index("event"), EVENT_COLUMNS.index("stack")
MIGRATION_COLUMNS = [
    "time_s",
    "comm",
    "pid",
    "orig_cpu",
    "dest_cpu",
    "cross",
    "direction",
    "cause",
    "orig_idle",
    "dest_idle",
]
#: Causes, each with the functions whose presence in the stack makes it,
#: in the order they are tried (a wake-up inside a balancer's stack is the
#: wake-up's; COLAB's stopper runs migration_cpu_stop's kin).
CAUSES: dict[str, tuple[str, ...]] = {
    "wake-up": ("try_to_wake_up",),
    "colab": ("colab_move_stop", "colab_swap_stop", "colab_newidle_pull"),
    "balance": (
        "load_balance",
        "newidle_balance",
        "sched_balance_newidle",
        "active_load_balance_cpu_stop",
        "detach_tasks",
    ),
    "affinity": ("migration_cpu_stop", "__set_cpus_allowed_ptr", "affine_move_task"),
}
OTHER, UNKNOWN = "other", "unknown"
#: Events by which a task arrives on a CPU, and the field naming the CPU.
ARRIVALS = {
    "sched_wakeup": "target_cpu",
    "sched_wakeup_new": "target_cpu",
    "sched_migrate_task": "dest_cpu",
}


class TraceError(ValueError):
    """A trace that cannot be read as tracefs's text."""


def fields(text: str) -> dict[str, str]:
    """An event's key=value fields: values without spaces, as the
    scheduler prints them, but a task's name whole (it may hold spaces)."""
    out = dict(_FIELD.findall(text))
    out.update({m["key"]: m["value"] for m in _COMM.finditer(text)})
    return out


def events(lines: Iterable[str]) -> pd.DataFrame:
    """Every event line of a trace, in the order tracefs gave them (by
    time, its buffers merged), each stack trace's frames on its own row
    (``stack``: innermost first); comment lines skipped. A line that is
    none of these is an error: a trace the runner cut or garbled is not
    read."""
    rows: list[list[object]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        frame = _FRAME.match(line)
        if frame is not None:
            if not rows or rows[-1][_EVENT] != STACK_EVENT:
                raise TraceError(f"line {number}: a stack frame without its stack: {line!r}")
            stack = rows[-1][_STACK]
            assert isinstance(stack, tuple)
            rows[-1][_STACK] = (*stack, frame["function"])
            continue
        m = _LINE.match(line)
        if m is None:
            raise TraceError(f"line {number} is not a tracefs event: {line[:120]!r}")
        rows.append(
            [
                float(m["time"]),
                int(m["cpu"]),
                m["task"].strip(),
                int(m["pid"]),
                m["flags"],
                m["event"],
                m["fields"],
                (),
            ]
        )
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def cause_of(stack: Sequence[str]) -> str:
    """What made a migration, from the kernel stack it was logged with."""
    if not stack:
        return UNKNOWN
    for cause, functions in CAUSES.items():
        if any(f in functions for f in stack):
            return cause
    return OTHER


def _idle_then(frame: pd.DataFrame) -> Callable[[int, float], bool | None]:
    """Whether a CPU was idle at a time: its last context switch before
    then was to its idle task, and no task arrived on it since (a wake-up
    onto it, ``sched_wakeup``'s target, or a migration to it), which the
    CPU would run at its next switch; None before its first switch or
    without switches in the trace."""
    switches = frame[frame["event"] == "sched_switch"]
    if switches.empty:
        return lambda _cpu, _time: None
    by_cpu: dict[int, tuple[list[float], list[bool]]] = {}
    columns = (switches["cpu"], switches["time_s"], switches["fields"])
    for cpu, time, text in zip(*columns, strict=True):
        times, idle = by_cpu.setdefault(int(cpu), ([], []))
        times.append(float(time))
        idle.append(fields(text).get("next_pid") == "0")
    arrivals: dict[int, list[float]] = {}
    for name, key in ARRIVALS.items():
        found = frame[frame["event"] == name]
        for time, text in zip(found["time_s"], found["fields"], strict=True):
            target = fields(text).get(key)
            if target is not None:
                arrivals.setdefault(int(target), []).append(float(time))
    for times in arrivals.values():
        times.sort()

    def idle_at(cpu: int, time: float) -> bool | None:
        times, idle = by_cpu.get(cpu, ([], []))
        last = bisect.bisect_right(times, time) - 1  # the last switch before
        if last < 0:
            return None
        if not idle[last]:
            return False
        came = arrivals.get(cpu, [])
        # a task that arrived after the switch to idle and before then
        return bisect.bisect_left(came, time) == bisect.bisect_right(came, times[last])

    return idle_at


def migrations(frame: pd.DataFrame, big_cpus: Iterable[int]) -> pd.DataFrame:
    """Every migration of the trace, with whether it crossed the clusters,
    which way ("up" to a big CPU, "down", or "" within a cluster), its
    cause (CAUSES, from the stack logged with it), and whether the CPUs it
    left and went to were idle then (by the last context switch on each
    before it; None without sched_switch or before a CPU's first)."""
    big = set(big_cpus)
    frame = frame.reset_index(drop=True)
    idle_at = _idle_then(frame)
    # each migration's stack: the next stack logged on its CPU
    stack_of: dict[int, tuple[str, ...]] = {}
    waiting: dict[int, int] = {}
    for index, (cpu, name, stack) in enumerate(
        zip(frame["cpu"], frame["event"], frame["stack"], strict=True)
    ):
        if name == "sched_migrate_task":
            waiting[cpu] = index
        elif name == STACK_EVENT and cpu in waiting:
            stack_of[waiting.pop(cpu)] = stack
    rows = []
    moves = frame[frame["event"] == "sched_migrate_task"]
    for index, time, text in zip(moves.index, moves["time_s"], moves["fields"], strict=True):
        f = fields(text)
        src, dst = int(f["orig_cpu"]), int(f["dest_cpu"])
        cross = (src in big) != (dst in big)
        rows.append(
            (
                time,
                f.get("comm", ""),
                int(f["pid"]),
                src,
                dst,
                cross,
                ("up" if dst in big else "down") if cross else "",
                cause_of(stack_of.get(index, ())),
                idle_at(src, time),
                idle_at(dst, time),
            )
        )
    return pd.DataFrame(rows, columns=MIGRATION_COLUMNS)


def crossings(moves: pd.DataFrame) -> pd.DataFrame:
    """Migrations between the clusters per program (the task's name) and
    cause, up and down, and within a cluster: one row a program and cause,
    with the program's threads that moved (over several runs' migrations,
    a ``run`` column tells their pids apart), and how many of the moves
    down left a big CPU that was idle then."""
    columns = ["comm", "cause", "up", "down", "down_from_idle", "within", "threads"]
    if moves.empty:
        return pd.DataFrame(columns=columns)
    table = (
        moves.assign(
            up=moves["direction"] == "up",
            down=moves["direction"] == "down",
            down_from_idle=(moves["direction"] == "down") & (moves["orig_idle"] == True),  # noqa: E712
            within=~moves["cross"],
        )
        .groupby(["comm", "cause"], sort=True)
        .agg(
            up=("up", "sum"),
            down=("down", "sum"),
            down_from_idle=("down_from_idle", "sum"),
            within=("within", "sum"),
        )
        .reset_index()
    )
    # a thread is a pid of a run: pids are reused from run to run
    ids = [c for c in ("run", "pid") if c in moves.columns]
    threads = moves[["comm", *ids]].drop_duplicates().groupby("comm").size().rename("threads")
    out = table.merge(threads, on="comm").astype(
        {"up": int, "down": int, "down_from_idle": int, "within": int, "threads": int}
    )
    return out[columns]


THREAD_COLUMNS = [
    "comm",
    "pid",
    "run_big_s",
    "run_little_s",
    "wait_big_s",
    "wait_little_s",
    "waits",
]
MACHINE_COLUMNS = [
    "span_s",
    "big_cpus",
    "little_cpus",
    "big_idle_s",
    "little_idle_s",
    "big_idle_little_queued_s",
    "little_idle_big_queued_s",
    "unexplained",
]
#: Kernel threads bound to one CPU (by name): never work another CPU could
#: have run. A user thread's affinity is not in the trace (WASH's binding
#: is one): it counts as movable.
_PER_CPU_KTHREAD = re.compile(r"^(kworker/\d+:|ksoftirqd/|migration/|cpuhp/|rcuc/|idle_inject/)")
#: A wake-up logged while its task was still on its CPU, within this long
#: before the task's switch out, found it on its way to sleep: the waker's
#: sched_waking came between the sleeper's dequeue and its sched_switch,
#: which then prints the sleeping state, and the task is runnable once off
#: its CPU. Measured on gem5 2B2L: 237 such switches in a run, 0-41 us
#: after the wake-up (median 2 us). A task woken longer before it
#: switches out ran on and went to sleep again.
WAKE_RACE_S = 100e-6
_COUNTS = {"big_cpus": int, "little_cpus": int, "unexplained": int}
#: Wake-ups logged once the task is enqueued: they name the CPU it was put on
_ENQUEUED = ("sched_wakeup", "sched_wakeup_new")
_SCHED_EVENTS = ("sched_switch", "sched_waking", *_ENQUEUED)


def _runnable(state: str) -> bool:
    """A task switched out in this state stays on its run queue: R+ when it
    was preempted, R when it left the CPU still runnable (a yield, or a
    wake-up that raced its going to sleep)."""
    return state.startswith("R")


def _wake_targets(rows: list[tuple[float, int, str, dict[str, str]]]) -> dict[int, int]:
    """Where each wake-up put its task, by the row of its ``sched_waking``:
    that event names the task's previous CPU, logged before the kernel
    chooses one; the choice is the migration the same wake-up makes (the
    task's next migration before it is woken again or runs), or the CPU
    ``sched_wakeup`` names, or else the previous CPU."""
    targets: dict[int, int] = {}
    pending: dict[int, int] = {}  # pid -> row of its sched_waking
    for index, (_, _, name, f) in enumerate(rows):
        if name == "sched_waking":
            pending[int(f["pid"])] = index
        elif name == "sched_migrate_task":
            row = pending.pop(int(f["pid"]), None)
            if row is not None:
                targets[row] = int(f["dest_cpu"])
        elif name in _ENQUEUED:
            row = pending.pop(int(f["pid"]), None)
            if row is not None:
                targets[row] = int(f["target_cpu"])
        elif name == "sched_switch":
            pending.pop(int(f["next_pid"]), None)
    return targets


def schedule(frame: pd.DataFrame, big_cpus: Iterable[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the CPUs did over the trace, from its context switches, wake-ups
    and migrations.

    Each CPU's task at the start of the trace is the one that logged the
    CPU's first event (every later change of it is a context switch, which
    the trace holds); a CPU that logged nothing is left out. Per thread (a
    task that ran or waited): its run time on big and little CPUs and its
    time runnable but not running, by the side of the CPU it waited on,
    with how many such waits (from its wake-up or its switch out still
    runnable to its next switch in; a migration while it waits moves the
    wait; a wake-up's own placement is read from the migration or
    ``sched_wakeup`` that follows its ``sched_waking``). What still runs or
    waits at the end of the trace counts to its end. Per machine (one
    row): the span of the trace; how many big and little CPUs logged an
    event; each cluster's idle time, summed over its
    CPUs (a CPU is idle when it runs its idle task and no task waits on
    it); the time a big CPU stood idle while a task was queued on a little
    CPU behind the one running there (and the other way round): work that
    could have run on the idle side and did not. A task woken onto an idle
    CPU is not queued (it waits only for that CPU to switch to it), nor is
    a kernel thread bound to its CPU; a user thread's affinity is not in
    the trace, so one bound to its side counts as queued. A task woken
    while still on its CPU and switched out within WAKE_RACE_S waits from
    its switch out, whatever state that prints. ``unexplained`` counts the
    switches to a task the trace did not show runnable, after the task's
    first appearance: a sleep a pending signal cancelled, or events the
    trace lacks."""
    big = set(big_cpus)
    relevant = frame[frame["event"].isin((*_SCHED_EVENTS, "sched_migrate_task"))]
    rows = [
        (float(t), int(c), str(n), fields(x))
        for t, c, n, x in zip(
            relevant["time_s"], relevant["cpu"], relevant["event"], relevant["fields"], strict=True
        )
    ]
    machine = dict.fromkeys(MACHINE_COLUMNS, 0.0)
    if not rows:
        return (
            pd.DataFrame(columns=THREAD_COLUMNS),
            pd.DataFrame([machine], columns=MACHINE_COLUMNS).astype(_COUNTS),
        )
    start, end = rows[0][0], max(r[0] for r in rows)
    # each CPU's task at the start: the one that logged its first event
    first = frame.drop_duplicates("cpu")
    running: dict[int, int] = {
        int(c): int(p) for c, p in zip(first["cpu"], first["pid"], strict=True)
    }
    since: dict[int, float] = {pid: start for pid in running.values() if pid}
    waiting: dict[int, int] = {}  # pid -> the CPU it waits on
    waited: dict[int, float] = {}  # pid -> since when
    woken_on_cpu: dict[int, float] = {}  # pid -> when woken while running
    seen: set[int] = set(since)
    comm: dict[int, str] = {}
    per_thread: dict[int, list[float]] = {}
    targets = _wake_targets(rows)

    def thread(pid: int) -> list[float]:
        return per_thread.setdefault(pid, [0.0, 0.0, 0.0, 0.0, 0.0])

    def close_wait(pid: int, time: float) -> None:
        cpu = waiting.pop(pid)
        entry = thread(pid)
        entry[2 if cpu in big else 3] += time - waited.pop(pid)
        entry[4] += 1

    def movable(pid: int) -> bool:
        return _PER_CPU_KTHREAD.match(comm.get(pid, "")) is None

    last = start
    for index, (time, cpu, name, f) in enumerate(rows):
        if time > last:
            dt = time - last
            occupied = set(waiting.values())
            idle = [c for c, pid in running.items() if pid == 0 and c not in occupied]
            big_idle = sum(1 for c in idle if c in big)
            little_idle = len(idle) - big_idle
            machine["big_idle_s"] += big_idle * dt
            machine["little_idle_s"] += little_idle * dt
            # the sides where a movable task is queued behind a running one
            queued = {c in big for p, c in waiting.items() if running.get(c) and movable(p)}
            if big_idle and False in queued:
                machine["big_idle_little_queued_s"] += dt
            if little_idle and True in queued:
                machine["little_idle_big_queued_s"] += dt
            last = time
        if name == "sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            if prev:
                comm.setdefault(prev, f.get("prev_comm", ""))
                if prev in since:
                    thread(prev)[0 if cpu in big else 1] += time - since.pop(prev)
                woken = woken_on_cpu.pop(prev, None)
                raced = woken is not None and time - woken <= WAKE_RACE_S
                if _runnable(f.get("prev_state", "")) or raced:
                    waiting[prev], waited[prev] = cpu, time
                seen.add(prev)
            if nxt:
                comm[nxt] = f.get("next_comm", "")
                if nxt in waiting:
                    close_wait(nxt, time)
                elif nxt in seen:
                    machine["unexplained"] += 1
                seen.add(nxt)
                since[nxt] = time
            running[cpu] = nxt
        elif name == "sched_migrate_task":
            pid = int(f["pid"])
            if pid in waiting:
                waiting[pid] = int(f["dest_cpu"])
        else:  # a wake-up: the task waits from now, where it was put
            pid = int(f["pid"])
            comm.setdefault(pid, f.get("comm", ""))
            seen.add(pid)
            target = targets.get(index, int(f["target_cpu"]))
            if pid in waiting:  # sched_wakeup after its sched_waking
                waiting[pid] = target
            elif pid in since:
                woken_on_cpu.setdefault(pid, time)
            else:
                waiting[pid], waited[pid] = target, time
    # what still runs or waits runs or waits to the end
    for cpu, pid in running.items():
        if pid and pid in since:
            thread(pid)[0 if cpu in big else 1] += end - since.pop(pid)
    for pid in list(waiting):
        close_wait(pid, end)
    machine["span_s"] = end - start
    machine["big_cpus"] = sum(1 for c in running if c in big)
    machine["little_cpus"] = len(running) - machine["big_cpus"]
    threads = pd.DataFrame(
        [(comm.get(pid, ""), pid, *values) for pid, values in sorted(per_thread.items())],
        columns=THREAD_COLUMNS,
    ).astype({"waits": int})
    return threads, pd.DataFrame([machine], columns=MACHINE_COLUMNS).astype(_COUNTS)


def cpu_shares(machines: pd.DataFrame) -> pd.DataFrame:
    """schedule()'s machine rows of several runs (a ``policy`` column),
    summed per policy: each cluster's idle time as a percentage of its
    CPUs' time, and the time a CPU of one side idled beside a queue on the
    other as a percentage of the span."""
    total = (
        machines.assign(
            big_span=machines["span_s"] * machines["big_cpus"],
            little_span=machines["span_s"] * machines["little_cpus"],
        )
        .groupby("policy", sort=True)
        .sum(numeric_only=True)
    )
    shares = pd.DataFrame(
        {
            "runs": machines.groupby("policy", sort=True).size(),
            "span_ms": total["span_s"] * 1e3,
            "big_idle_pct": 100 * total["big_idle_s"] / total["big_span"],
            "little_idle_pct": 100 * total["little_idle_s"] / total["little_span"],
            "big_idle_little_queued_pct": 100 * total["big_idle_little_queued_s"] / total["span_s"],
            "little_idle_big_queued_pct": 100 * total["little_idle_big_queued_s"] / total["span_s"],
            "unexplained": total["unexplained"],
        }
    )
    return shares.fillna(0).reset_index()


def per_program(threads: pd.DataFrame) -> pd.DataFrame:
    """schedule()'s thread rows of several runs (a ``policy`` column),
    summed per policy and program, in milliseconds."""
    out = threads.groupby(["policy", "comm"], sort=True).agg(
        threads=("pid", "size"),
        run_big_ms=("run_big_s", "sum"),
        run_little_ms=("run_little_s", "sum"),
        wait_big_ms=("wait_big_s", "sum"),
        wait_little_ms=("wait_little_s", "sum"),
        waits=("waits", "sum"),
    )
    scaled = [c for c in out.columns if c.endswith("_ms")]
    out[scaled] = out[scaled] * 1e3
    return out.reset_index()
