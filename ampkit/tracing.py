"""Kernel tracepoints traced over a run's measured interval.

A run asked for a trace (``ampkit run --trace``) names kernel events as
tracefs does, ``system:event``. The guest runner (ampkit-init.c) sets the
trace up before the warm-up, on the results' clock (CLOCK_MONOTONIC),
with a stacktrace trigger on ``sched_migrate_task``; it empties the
buffers and switches tracing on at the applications' release and off
when the last first run ends, and hands the trace out after the results:
on the console between markers (ampkit.console), or on gem5 through the
simulator into its output directory (``GEM5_FILE``), since a few
megabytes through the simulated UART would cost minutes of simulated
time. The run directory keeps it xz-compressed (ampkit.rundir.TRACE);
ampkit.analysis.trace reads it.

Tracing costs every traced event a few hundred nanoseconds in the guest:
a traced run is a diagnosis of a policy, not one of a comparison's runs
(its key differs, so a campaign never mixes the two).
"""

import re
from collections.abc import Iterable

from ampkit.errors import UsageError

#: The runner's bound (MAX_TRACE_EVENTS in ampkit-init.c).
MAX_EVENTS = 16
#: The name the guest writes its trace under in gem5's output directory
#: (TRACE_FILE in ampkit-init.c).
GEM5_FILE = "ampkit-trace.txt"
#: A tracefs event name, as the runner takes it.
_EVENT = re.compile(r"^[a-z0-9_]+:[a-z0-9_]+$")

#: Named sets of events. ``migrations``: every change of a task's CPU (each
#: with the kernel stack that made it: the runner adds a stacktrace trigger
#: to sched_migrate_task), the wake-ups (as they begin and as the task is
#: put on its CPU) and the context switches, which tell whether a CPU was
#: idle; events every kernel has, so that a trace
#: under ``cfs`` on a pristine kernel reads like one under ``colab``
#: (ampkit.analysis.trace tells the causes apart). ``colab``: those and
#: COLAB's own placement, move, bottleneck and idle pull tracepoints
#: (kernel-patches, 0016, 0018, 0049).
PRESETS: dict[str, tuple[str, ...]] = {
    "migrations": (
        "sched:sched_migrate_task",
        "sched:sched_waking",
        "sched:sched_wakeup",
        "sched:sched_switch",
    ),
    "colab": (
        "sched:sched_migrate_task",
        "sched:sched_waking",
        "sched:sched_wakeup",
        "sched:sched_switch",
        "sched:sched_colab_place",
        "sched:sched_colab_move",
        "sched:sched_colab_bottleneck",
        "sched:sched_colab_pull",
    ),
}


def check_events(names: Iterable[str]) -> tuple[str, ...]:
    """The names, each checked as the runner takes it."""
    out = tuple(names)
    bad = [n for n in out if not _EVENT.match(n)]
    if bad:
        raise UsageError(
            f"trace event '{bad[0]}' is not a tracefs name",
            "name events as system:event, e.g. sched:sched_migrate_task "
            f"(or a set: {', '.join(sorted(PRESETS))})",
        )
    if len(set(out)) != len(out):
        raise UsageError(f"trace events named twice: {', '.join(out)}")
    if len(out) > MAX_EVENTS:
        raise UsageError(f"{len(out)} trace events: the runner takes at most {MAX_EVENTS}")
    return out


def events_of(spec: str) -> tuple[str, ...]:
    """``--trace``'s argument: comma-separated event names and set names,
    each event once, in the order given."""
    out: list[str] = []
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            continue
        for name in PRESETS.get(word, (word,)):
            if name not in out:
                out.append(name)
    if not out:
        raise UsageError(
            "--trace needs events", f"system:event names or a set: {', '.join(sorted(PRESETS))}"
        )
    return check_events(out)
