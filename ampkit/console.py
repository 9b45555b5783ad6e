"""Reading a guest's console: the runner's records and the kernel's complaints.

The runner (workloads/runner/ampkit-init.c) prints one ``@ampkit {json}``
line per record: a ``guest`` record (what the kernel believes about the
machine) before the mix starts, an ``error`` record if the runner itself
fails, and one ``app`` record per application between the markers

    ==== AMPKIT RESULTS BEGIN v1 ====
    ==== AMPKIT RESULTS END count=N ====

The console is shared with the kernel's own messages, and a guest can die
at any moment, so the parser assumes nothing: a record that does not parse
is reported as garbled, a missing end marker or a count that does not match
as truncated, and every line in which the kernel reports a bug is kept.

The kernel writes its messages straight to the UART, so one can land in the
middle of a runner line: ``@ampkit {"a":1,[    1.25] msg`` followed by
``"b":2}`` on the next line. Such a line is untangled before it is read:
the kernel's part (from its time stamp to the end of the line) becomes a
line of its own and the runner's line continues with the next one. Only
runner lines that are not already well formed are untangled, and an
untangled record must still parse and carry every field, so a wrong guess
is reported as garbled, never counted.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

RESULTS_BEGIN = "==== AMPKIT RESULTS BEGIN v1 ===="
RESULTS_END = re.compile(r"==== AMPKIT RESULTS END count=(\d+) ====")
#: The kernel trace a run asked for, after the results (ampkit.tracing):
#: tracefs's own lines, then how many the runner wrote and how many events
#: the kernel's buffers lost.
TRACE_BEGIN = "==== AMPKIT TRACE BEGIN v1 ===="
TRACE_END = re.compile(r"==== AMPKIT TRACE END lines=(\d+) lost=(\d+) ====")
RECORD_PREFIX = "@ampkit "

#: The time stamp that opens every kernel console line (printk.time=1).
KERNEL_STAMP = re.compile(r"\[\s*\d+\.\d+\] ")
#: How many kernel messages one runner line may be untangled from.
MAX_UNTANGLE = 8

#: Lines by which the kernel reports that something is wrong with it.
KERNEL_PROBLEM = re.compile(
    r"WARNING:|BUG:|Oops|Kernel panic|Unable to handle kernel|"
    r"possible circular locking|possible recursive locking|inconsistent lock state|"
    r"sleeping function called from invalid context|KASAN:|UBSAN:|"
    r"rcu_sched self-detected stall|rcu: INFO: rcu_sched detected stalls|"
    r"hung_task|soft lockup|hard LOCKUP|cpu_capacity: partial information|"
    # a sysctl.* boot parameter the kernel did not apply (unknown name, bad value)
    r"to set sysctl parameter|to set sysctl from command line"
)

#: Fields every app record must carry (DESIGN.md section 6).
APP_FIELDS = (
    "app",
    "instance",
    "threads",
    "start_ns",
    "end_ns",
    "exit_status",
    "status",
    "thread_times_ns",
)


@dataclass
class ConsoleReport:
    guest: dict[str, Any] | None = None
    #: the policies' knobs read again once the mix was over ("knobs_after"
    #: record): their counters against guest.amp.knobs, read before it
    knobs_after: dict[str, Any] | None = None
    apps: list[dict[str, Any]] = field(default_factory=list)
    #: the online speedup model's log (ampkit.online), in the order written
    online: list[dict[str, Any]] = field(default_factory=list)
    #: a user-level policy's daemon's log ("policy" records), in order
    policy_log: list[dict[str, Any]] = field(default_factory=list)
    #: each guest daemon that ran and its CPU time ("daemon" records)
    daemons: list[dict[str, Any]] = field(default_factory=list)
    runner_errors: list[str] = field(default_factory=list)
    garbled: list[str] = field(default_factory=list)
    kernel_problems: list[str] = field(default_factory=list)
    saw_begin: bool = False
    end_count: int | None = None
    #: the kernel trace's lines from the console (TRACE_BEGIN), if any
    trace_lines: list[str] = field(default_factory=list)
    #: the runner's account of its trace: lines written and events lost
    #: (from TRACE_END, or from a "trace" record on gem5, whose trace
    #: goes through the simulator: ampkit.tracing)
    trace_written: int | None = None
    trace_lost: int | None = None
    #: the "trace" record's file name in gem5's output directory
    trace_file: str | None = None
    #: why the runner could not hand its trace out ("trace" record's error)
    trace_error: str | None = None

    def guest_json(self) -> dict[str, Any] | None:
        """What guest.json holds: the guest record, with the knobs read after
        the mix as amp.knobs_after where the guest gave both."""
        if self.guest is None:
            return None
        amp = self.guest.get("amp")
        if self.knobs_after is None or not isinstance(amp, dict):
            return self.guest
        return {**self.guest, "amp": {**amp, "knobs_after": self.knobs_after}}

    @property
    def complete(self) -> bool:
        """The results block is whole: begun, ended, and every record counted."""
        return (
            self.saw_begin
            and self.end_count is not None
            and self.end_count == len(self.apps)
            and not self.garbled
        )

    def problems(self) -> list[str]:
        """Why these results cannot be trusted, most important first; empty if they can."""
        out = [f"runner error: {e}" for e in self.runner_errors]
        out += [f"kernel reported a problem: {line}" for line in self.kernel_problems[:3]]
        if self.garbled:
            out.append(f"garbled result line: {self.garbled[0][:120]}")
        if not self.saw_begin:
            out.append("no results: the guest never reached the end of its run")
        elif self.end_count is None:
            out.append(f"results truncated after {len(self.apps)} record(s)")
        elif self.end_count != len(self.apps):
            out.append(
                f"results block announces {self.end_count} record(s) but holds {len(self.apps)}"
            )
        return out


def _clean(line: str) -> str:
    return line.replace("\0", "").rstrip("\r")


def _well_formed(line: str) -> bool:
    if line.strip() == RESULTS_BEGIN or RESULTS_END.fullmatch(line.strip()):
        return True
    if not line.startswith(RECORD_PREFIX):
        return False
    try:
        json.loads(line[len(RECORD_PREFIX) :])
    except ValueError:
        return False
    return True


def _runner_text(head: str) -> bool:
    """``head`` is how a runner line ("@ampkit ..." or "==== AMPKIT ...") begins."""
    return any(head.startswith(p) or p.startswith(head) for p in (RECORD_PREFIX, "==== AMPKIT"))


def untangle(lines: list[str]) -> list[str]:
    """Separate kernel messages that were printed into the middle of runner lines."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = _clean(lines[i])
        i += 1
        for _ in range(MAX_UNTANGLE):
            m = KERNEL_STAMP.search(line, 1)
            if not m or _well_formed(line) or not _runner_text(line[: m.start()]):
                break
            out.append(line[m.start() :])
            line = line[: m.start()]
            if i < len(lines):
                line += _clean(lines[i])
                i += 1
        out.append(line)
    return out


def _trace_record(record: dict[str, Any]) -> bool:
    """Whether a "trace" record names its file and counts its lines."""
    counts = (record.get("lines"), record.get("lost"))
    return isinstance(record.get("file"), str) and all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts
    )


def parse_console(text: str) -> ConsoleReport:
    report = ConsoleReport()
    in_block = in_trace = False
    for line in untangle(text.splitlines()):
        if in_trace:
            if m := TRACE_END.search(line):
                report.trace_written, report.trace_lost = int(m.group(1)), int(m.group(2))
                in_trace = False
                continue
            # the kernel's messages, between trace lines or inside one
            # (which the line count then finds short of the runner's)
            traced = line
            if (m := KERNEL_STAMP.search(line)) is not None:
                if KERNEL_PROBLEM.search(line[m.start() :]):
                    report.kernel_problems.append(line[m.start() :].strip())
                traced = line[: m.start()]
            if traced.strip():
                report.trace_lines.append(traced)
            continue
        if line.strip() == TRACE_BEGIN:
            in_trace = True
            continue
        if KERNEL_PROBLEM.search(line) and RECORD_PREFIX not in line:
            report.kernel_problems.append(line.strip())
        if line.strip() == RESULTS_BEGIN:
            report.saw_begin = in_block = True
            continue
        if m := RESULTS_END.search(line):
            if in_block:
                report.end_count = int(m.group(1))
            in_block = False
            continue
        pos = line.find(RECORD_PREFIX)
        if pos < 0:
            continue
        payload = line[pos + len(RECORD_PREFIX) :]
        try:
            record = json.loads(payload)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError:
            report.garbled.append(line)
            continue
        kind = record.get("type")
        if kind == "guest":
            report.guest = record.get("guest")
        elif kind == "knobs_after" and not in_block:
            knobs = record.get("knobs")
            report.knobs_after = knobs if isinstance(knobs, dict) else None
        elif kind == "error":
            report.runner_errors.append(str(record.get("error")))
        elif kind == "online" and not in_block:
            report.online.append(record)
        elif kind == "policy" and not in_block:
            report.policy_log.append(record)
        elif kind == "daemon" and not in_block and isinstance(record.get("daemon"), str):
            report.daemons.append(record)
        elif kind == "trace" and not in_block and isinstance(record.get("error"), str):
            report.trace_error = record["error"]
        elif kind == "trace" and not in_block and _trace_record(record):
            report.trace_file = record["file"]
            report.trace_written, report.trace_lost = record["lines"], record["lost"]
        elif kind == "app" and in_block:
            missing = [f for f in APP_FIELDS if f not in record]
            if missing:
                report.garbled.append(f"{line} (missing {', '.join(missing)})")
            else:
                report.apps.append(record)
        else:
            report.garbled.append(line)
    return report
