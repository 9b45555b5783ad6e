"""Kernel traces of runs: the names asked for, the console's trace block,
what the run directory keeps, and what moved each thread (ampkit.tracing,
ampkit.console, ampkit.run.keep_trace, ampkit.analysis.trace)."""

import json
import lzma
from pathlib import Path

import pytest

from ampkit.analysis import trace
from ampkit.cli import main
from ampkit.console import TRACE_BEGIN, parse_console
from ampkit.errors import UsageError
from ampkit.mix import load_mix
from ampkit.run import keep_trace
from ampkit.rundesc import RunDescription
from ampkit.rundir import TRACE, Excluded, RunDir, RunWriter
from ampkit.sizes import sized_for
from ampkit.tracing import GEM5_FILE, PRESETS, check_events, events_of

# --- the names ------------------------------------------------------------------


def test_sets_expand_in_order_and_each_event_is_named_once() -> None:
    assert events_of("migrations") == PRESETS["migrations"]
    both = events_of("sched:sched_stat_runtime,colab,sched:sched_waking")
    assert both[0] == "sched:sched_stat_runtime"
    assert both[1:] == PRESETS["colab"]
    assert len(both) == len(set(both))


@pytest.mark.parametrize(
    "spec, says",
    [
        ("sched_switch", "not a tracefs name"),
        ("sched:Sched_Switch", "not a tracefs name"),
        ("sched:a:b", "not a tracefs name"),
        (",", "needs events"),
        (",".join(f"sched:e{i}" for i in range(17)), "at most 16"),
    ],
)
def test_bad_names_are_refused_saying_what_is_wanted(spec: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        events_of(spec)


def test_a_name_twice_in_a_description_is_refused() -> None:
    with pytest.raises(UsageError, match="twice"):
        check_events(["sched:sched_waking", "sched:sched_waking"])


def test_the_description_carries_the_trace_line_only_when_asked() -> None:
    mix = sized_for(load_mix("compute2-compute-compute"), "qemu")
    plain = RunDescription.for_mix("r", "colab", 0, 60, mix).render()
    traced = RunDescription.for_mix("r", "colab", 0, 60, mix, trace=PRESETS["migrations"]).render()
    assert "trace" not in plain
    assert f"trace {','.join(PRESETS['migrations'])}\n" in traced
    assert PRESETS["migrations"][0] == "sched:sched_migrate_task"
    # the rest is the same description
    assert [line for line in traced.splitlines() if not line.startswith("trace ")] == (
        plain.splitlines()
    )


# --- the console ----------------------------------------------------------------

RESULTS = [
    "==== AMPKIT RESULTS BEGIN v1 ====",
    "==== AMPKIT RESULTS END count=0 ====",
]
LINES = [
    "          stages-44      [000] d....     1.708917: sched_waking: comm=stages pid=46 "
    "prio=120 target_cpu=000",
    "          stages-44      [000] d....     1.708937: sched_migrate_task: comm=stages pid=46 "
    "prio=120 orig_cpu=0 dest_cpu=2",
]


def test_the_trace_block_is_read_apart_from_kernel_messages() -> None:
    text = "\r\n".join(
        [
            *RESULTS,
            TRACE_BEGIN,
            "# tracer: nop",
            "#",
            LINES[0],
            "[    2.000000] WARNING: CPU: 1 PID: 7 at kernel/sched/core.c:1 x",
            LINES[1],
            "==== AMPKIT TRACE END lines=2 lost=0 ====",
        ]
    )
    report = parse_console(text)
    assert report.trace_lines == ["# tracer: nop", "#", *LINES]
    assert (report.trace_written, report.trace_lost) == (2, 0)
    # one printed into the middle of a trace line: the kernel's part is its
    torn = parse_console(
        "\n".join([TRACE_BEGIN, LINES[0][:40] + "[    3.000000] BUG: scheduling while atomic"])
    )
    assert torn.trace_lines == [LINES[0][:40]]
    assert torn.kernel_problems == ["[    3.000000] BUG: scheduling while atomic"]
    # a kernel's complaint inside the block is still the kernel's
    assert report.kernel_problems and "WARNING" in report.kernel_problems[0]
    assert not report.garbled


def test_a_trace_record_names_the_file_the_simulator_wrote() -> None:
    record = {"type": "trace", "file": GEM5_FILE, "bytes": 10, "lines": 3, "lost": 1}
    report = parse_console("\n".join([*RESULTS, "@ampkit " + json.dumps(record)]))
    assert (report.trace_file, report.trace_written, report.trace_lost) == (GEM5_FILE, 3, 1)
    bad = parse_console("\n".join([*RESULTS, '@ampkit {"type":"trace","file":"x","lines":"3"}']))
    assert bad.trace_file is None and bad.garbled


# --- what the run directory keeps ------------------------------------------------


def kept(tmp_path: Path, console: list[str]) -> tuple[dict[str, object], Path]:
    writer = RunWriter(tmp_path / "run")
    account = keep_trace(parse_console("\n".join(console)), writer)
    return account, writer.path(TRACE)


def test_a_whole_trace_is_kept_compressed(tmp_path: Path) -> None:
    end = "==== AMPKIT TRACE END lines=2 lost=0 ===="
    account, path = kept(tmp_path, [*RESULTS, TRACE_BEGIN, "# tracer: nop", *LINES, end])
    assert account == {"written": 2, "kept": 2, "lost": 0, "complete": True}
    assert lzma.decompress(path.read_bytes()).decode().splitlines()[1:] == LINES


@pytest.mark.parametrize(
    "console, problem",
    [
        # a line lost on the way (a kernel message printed into it)
        (
            [*RESULTS, TRACE_BEGIN, LINES[0], "==== AMPKIT TRACE END lines=2 lost=0 ===="],
            "1 of the 2 lines",
        ),
        # the kernel's buffers overflowed
        (
            [*RESULTS, TRACE_BEGIN, *LINES, "==== AMPKIT TRACE END lines=2 lost=9 ===="],
            "lost 9 events",
        ),
        # the guest stopped before its end marker
        ([*RESULTS, TRACE_BEGIN, *LINES], "never handed its trace out"),
    ],
)
def test_a_trace_not_whole_says_why(tmp_path: Path, console: list[str], problem: str) -> None:
    account, _ = kept(tmp_path, console)
    assert account["complete"] is False
    assert problem in str(account["problem"])


def test_a_trace_the_guest_could_not_read_is_said_and_an_empty_one_is_whole(
    tmp_path: Path,
) -> None:
    error = '@ampkit {"type":"trace","error":"Cannot allocate memory"}'
    account, _ = kept(tmp_path / "a", [*RESULTS, error])
    assert account["complete"] is False
    assert account["problem"] == "the guest could not read its trace: Cannot allocate memory"
    record = {"type": "trace", "file": GEM5_FILE, "bytes": 0, "lines": 0, "lost": 0}
    empty = "@ampkit " + json.dumps(record)
    account, path = kept(tmp_path / "b", [*RESULTS, empty])
    assert account["complete"] is True and lzma.decompress(path.read_bytes()) == b""


def test_on_gem5_the_trace_is_taken_from_the_slice_that_wrote_it(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path / "run")
    last = writer.path("m5out") / "slice-1"
    last.mkdir(parents=True)
    (last / GEM5_FILE).write_text("\n".join(LINES) + "\n")
    record = {"type": "trace", "file": GEM5_FILE, "bytes": 1, "lines": 2, "lost": 0}
    report = parse_console("\n".join([*RESULTS, "@ampkit " + json.dumps(record)]))
    account = keep_trace(report, writer)
    assert account["complete"] is True
    assert not (last / GEM5_FILE).exists()  # kept once, compressed
    assert lzma.decompress(writer.path(TRACE).read_bytes()).decode().splitlines() == LINES
    # and none written at all is said
    report.trace_written = 2
    assert "missing" in str(keep_trace(report, RunWriter(tmp_path / "other"))["problem"])


def test_a_run_without_a_whole_trace_is_refused_by_its_readers(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"run_id": "r"}))
    with pytest.raises(Excluded, match="not traced"):
        RunDir(run).trace_text()
    trace_account = {"events": [], "complete": False, "problem": "the kernel's buffers lost 3"}
    (run / "manifest.json").write_text(json.dumps({"run_id": "r", "trace": trace_account}))
    with pytest.raises(Excluded, match="not whole: the kernel's buffers lost 3"):
        RunDir(run).trace_text()


# --- what moved the threads -------------------------------------------------------

#: A hand-made trace on 2B2L (CPUs 0 and 1 big): one migration of each cause
#: and one within a cluster, in tracefs's own format (the lines' shape as a
#: 6.1 guest wrote them, tests/qemu's traced run).
HAND_MADE = (Path(__file__).parent / "data" / "trace-2B2L.txt").read_text()


def test_events_read_every_line_and_refuse_one_that_is_not_an_event() -> None:
    frame = trace.events(HAND_MADE.splitlines())
    assert len(frame) == 14
    first = frame.iloc[0]
    assert (first["task"], first["pid"], first["cpu"], first["event"]) == (
        "stages",
        44,
        0,
        "sched_switch",
    )
    stacks = frame[frame["event"] == trace.STACK_EVENT]["stack"].tolist()
    assert stacks[0] == (
        "trace_event_raw_event_sched_migrate_task",
        "set_task_cpu",
        "try_to_wake_up",
        "futex_wake",
    )
    assert stacks[2] == ("set_task_cpu", "move_queued_task", "migration_cpu_stop")  # offsets cut
    assert frame.loc[6, "task"] == "<idle>"
    # a task's name whole, spaces and dashes included
    switch = trace.fields(str(frame.loc[1, "fields"]))
    assert (switch["next_comm"], switch["next_pid"]) == ("my task-x", "51")
    with pytest.raises(trace.TraceError, match="line 2"):
        trace.events([HAND_MADE.splitlines()[3], "stages-44 [000] 1.0 torn"])
    with pytest.raises(trace.TraceError, match="a stack frame without its stack"):
        trace.events([HAND_MADE.splitlines()[3], " => set_task_cpu"])


def test_each_migration_gets_its_cause_from_its_stack_and_the_cpus_idleness() -> None:
    moves = trace.migrations(trace.events(HAND_MADE.splitlines()), big_cpus=[0, 1])
    columns = [
        "comm",
        "pid",
        "orig_cpu",
        "dest_cpu",
        "direction",
        "cause",
        "orig_idle",
        "dest_idle",
    ]
    assert moves[columns].values.tolist() == [
        # woken by pipeline: placed on little CPU 2, leaving big CPU 0 idle
        ["stages", 46, 0, 2, "down", "wake-up", True, None],
        # big CPU 1's balancer (softirq) pulled it back, CPU 1 busy then
        ["stages", 46, 2, 1, "up", "balance", None, False],
        # the stopper of CPU 3, for an allowed-CPUs change; CPU 0 idle
        ["my task-x", 51, 3, 0, "up", "affinity", None, True],
        # COLAB's exchange, through its own stopper function
        ["pipeline", 50, 3, 1, "up", "colab", None, False],
        # no stack logged with it
        ["stages", 47, 3, 2, "", "unknown", None, None],
    ]
    table = trace.crossings(moves)
    stages = table[table["comm"] == "stages"].set_index("cause")
    counted = stages[["up", "down", "down_from_idle", "within"]].to_dict("index")
    assert counted["wake-up"] == {"up": 0, "down": 1, "down_from_idle": 1, "within": 0}
    assert counted["balance"] == {"up": 1, "down": 0, "down_from_idle": 0, "within": 0}
    assert counted["unknown"] == {"up": 0, "down": 0, "down_from_idle": 0, "within": 1}
    assert set(stages["threads"]) == {2}


@pytest.mark.parametrize(
    "stack, cause",
    [
        (("set_task_cpu", "try_to_wake_up", "load_balance"), "wake-up"),  # the wake-up's
        (("set_task_cpu", "detach_tasks", "load_balance"), "balance"),
        (("move_queued_task", "active_load_balance_cpu_stop"), "balance"),
        (("move_queued_task", "colab_swap_stop", "migrate_swap_stop"), "colab"),
        (
            ("move_queued_task", "__set_cpus_allowed_ptr_locked", "__set_cpus_allowed_ptr"),
            "affinity",
        ),
        (("set_task_cpu", "something_new"), "other"),
        ((), "unknown"),
    ],
)
def test_causes_read_from_stacks(stack: tuple[str, ...], cause: str) -> None:
    assert trace.cause_of(stack) == cause


def test_on_one_type_of_cpu_nothing_crosses() -> None:
    moves = trace.migrations(trace.events(HAND_MADE.splitlines()), big_cpus=[])
    assert not moves["cross"].any() and set(moves["direction"]) == {""}
    assert trace.crossings(moves.iloc[0:0]).empty


def test_a_cpu_a_task_was_just_woken_onto_is_not_idle() -> None:
    """CPU 0 switched to its idle task; a wake-up then put a task on it,
    which it has not run yet when the stopper moves another task there."""
    lines = HAND_MADE.splitlines()
    at = next(i for i, line in enumerate(lines) if "migration/3-27" in line)
    woken = (
        "        pipeline-50      [002] d..3.     1.000300: sched_wakeup: comm=init pid=1 "
        "prio=120 target_cpu=000"
    )
    moves = trace.migrations(trace.events([*lines[:at], woken, *lines[at:]]), big_cpus=[0, 1])
    affinity = moves[moves["cause"] == "affinity"].iloc[0]
    assert (affinity["dest_cpu"], affinity["dest_idle"]) == (0, False)


def test_without_context_switches_idleness_is_unknown() -> None:
    lines = [line for line in HAND_MADE.splitlines() if "sched_switch" not in line]
    moves = trace.migrations(trace.events(lines), big_cpus=[0, 1])
    assert moves["orig_idle"].isna().all() and moves["dest_idle"].isna().all()


def _switch(cpu: int, time: float, prev: str, prev_state: str, nxt: str) -> str:
    """A sched_switch line; tasks as "name-pid", the idle task "swapper-0"."""
    (pc, pp), (nc, np_) = prev.rsplit("-", 1), nxt.rsplit("-", 1)
    return (
        f"  {prev} [{cpu:03d}] d..2. {time:.6f}: sched_switch: prev_comm={pc} prev_pid={pp} "
        f"prev_prio=120 prev_state={prev_state} ==> next_comm={nc} next_pid={np_} next_prio=120"
    )


#: CPUs 0 and 1 big, 2 and 3 little; tasks A-10, B-11, C-12, D-13, F-14.
SCHEDULE = [
    _switch(0, 1.000, "swapper-0", "R", "A-10"),
    _switch(1, 1.000, "B-11", "S", "swapper-0"),
    _switch(2, 1.000, "swapper-0", "R", "C-12"),
    _switch(3, 1.000, "swapper-0", "R", "D-13"),
    # B woken onto little CPU 2, busy with C, while big CPU 1 idles
    "  C-12 [002] d.... 1.010000: sched_waking: comm=B pid=11 prio=120 target_cpu=002",
    # C preempted by B: C waits on CPU 2 now, and the big CPU still idles
    _switch(2, 1.020, "C-12", "R+", "B-11"),
    # the big CPU's balancer pulls C up; it runs there a millisecond later
    "  swapper-0 [001] d.s2. 1.030000: sched_migrate_task: comm=C pid=12 prio=120 "
    "orig_cpu=2 dest_cpu=1",
    _switch(1, 1.031, "swapper-0", "R", "C-12"),
    # D sleeps: little CPU 3 idles, then D is woken onto big CPU 0, busy
    _switch(3, 1.040, "D-13", "S", "swapper-0"),
    "  A-10 [000] d.... 1.050000: sched_wakeup: comm=D pid=13 prio=120 target_cpu=000",
    _switch(0, 1.060, "A-10", "R", "D-13"),
    # A, preempted, waits on big CPU 0 until CPU 3 pulls it down
    "  swapper-0 [003] d.s2. 1.070000: sched_migrate_task: comm=A pid=10 prio=120 "
    "orig_cpu=0 dest_cpu=3",
    _switch(3, 1.071, "swapper-0", "R", "A-10"),
    # big CPU 1 and little CPU 2 idle; F woken onto CPU 2 waits only for
    # it to switch: not queued behind another task
    _switch(1, 1.080, "C-12", "S", "swapper-0"),
    _switch(2, 1.085, "B-11", "S", "swapper-0"),
    "  A-10 [003] d.... 1.090000: sched_waking: comm=F pid=14 prio=120 target_cpu=002",
    _switch(2, 1.092, "swapper-0", "R", "F-14"),
]


def test_the_schedule_says_where_threads_ran_and_waited_and_what_idled() -> None:
    threads, machine = trace.schedule(trace.events(SCHEDULE), big_cpus=[0, 1])
    got = {row.comm: [round(v, 6) for v in row[2:7]] for row in threads.itertuples(index=False)}
    # run on big, on little; waited on big, on little; waits
    assert got == {
        # ran from its first switch in to its preemption, waited on CPU 0
        # and, moved while waiting, on little CPU 3; ran there to the end
        "A": [0.060, 0.021, 0.0, 0.011, 1],
        # ran on CPU 1 when the trace began, left it at once; woken at
        # 1.010, in at 1.020, out at 1.085
        "B": [0.0, 0.065, 0.0, 0.010, 1],
        "C": [0.049, 0.020, 0.011, 0.0, 1],
        # on CPU 0 from 1.060 to the end of the trace
        "D": [0.032, 0.040, 0.010, 0.0, 1],
        "F": [0.0, 0.0, 0.0, 0.002, 1],
    }
    m = machine.iloc[0].to_dict()
    assert {k: round(float(v), 6) for k, v in m.items()} == {
        "span_s": 0.092,
        "big_cpus": 2,
        "little_cpus": 2,
        # CPU 1 from 1.000 to C's move there at 1.030 (a CPU a task waits
        # on is not idle) and from 1.080
        "big_idle_s": 0.042,
        # CPU 3 from 1.040 to A's move there at 1.070, CPU 2 from 1.085 to
        # F's wake-up onto it at 1.090
        "little_idle_s": 0.035,
        # B, then C, queued on CPU 2 from 1.010 to 1.030 while CPU 1 idled
        # (F's wait from 1.090 on an idle CPU 2 is not queuing)
        "big_idle_little_queued_s": 0.020,
        # D, then A, queued on CPU 0 from 1.050 to 1.070 while CPU 3 idled
        "little_idle_big_queued_s": 0.020,
        "unexplained": 0,
    }


def _schedule_of(*lines: str) -> tuple[dict[str, list[float]], dict[str, float]]:
    threads, machine = trace.schedule(trace.events(list(lines)), big_cpus=[0, 1])
    got = {str(r.comm): [round(v, 6) for v in r[2:7]] for r in threads.itertuples(index=False)}
    return got, {str(k): round(float(v), 6) for k, v in machine.iloc[0].items()}


def test_a_wake_up_counts_where_the_kernel_put_the_task_not_where_it_was() -> None:
    """sched_waking names the task's previous CPU, before the kernel picks
    one; the migration of the same wake-up says where it went. Little CPU
    2 is busy with X and big CPU 0 idle: W, last on CPU 2, is woken and
    placed on CPU 0, where it waits only for the CPU to switch."""
    _, machine = _schedule_of(
        _switch(0, 1.000, "swapper-0", "R", "Y-20"),
        _switch(0, 1.001, "Y-20", "S", "swapper-0"),
        _switch(2, 1.000, "swapper-0", "R", "X-21"),
        "  X-21 [002] d.... 1.002000: sched_waking: comm=W pid=22 prio=120 target_cpu=002",
        "  X-21 [002] d..3. 1.002500: sched_migrate_task: comm=W pid=22 prio=120 "
        "orig_cpu=2 dest_cpu=0",
        _switch(0, 1.003, "swapper-0", "R", "W-22"),
    )
    assert machine["big_idle_little_queued_s"] == 0, machine
    # and CPU 0 was idle from Y's sleep to W's wake-up onto it
    assert machine["big_idle_s"] == 0.001, machine


def test_a_wait_starts_at_the_last_wake_up_and_a_bound_kthread_is_not_queued() -> None:
    """Z ran on little CPU 2 when the trace began, was woken while still
    on it (no wait) and slept; its later wake-up starts its wait. A
    kworker bound to CPU 3 waits there behind V while big CPU 1 idles:
    not work CPU 1 could have run."""
    got, machine = _schedule_of(
        "  Z-30 [002] d.... 1.000000: sched_waking: comm=Z pid=30 prio=120 target_cpu=002",
        _switch(2, 1.100, "Z-30", "S", "swapper-0"),
        "  Q-31 [002] d.... 1.200000: sched_waking: comm=Z pid=30 prio=120 target_cpu=002",
        _switch(2, 1.201, "swapper-0", "R", "Z-30"),
        _switch(1, 1.000, "swapper-0", "R", "swapper-0"),
        _switch(3, 1.000, "swapper-0", "R", "V-32"),
        "  V-32 [003] d.... 1.010000: sched_waking: comm=kworker/3:1 pid=33 prio=120 "
        "target_cpu=003",
        _switch(3, 1.050, "V-32", "S", "kworker/3:1-33"),
    )
    # (the trace ends at 1.201, as Z runs again)
    assert got["Z"] == [0.0, 0.100, 0.0, 0.001, 1], got
    assert got["kworker/3:1"][3] == 0.040, got
    assert machine["big_idle_little_queued_s"] == 0, machine
    assert machine["unexplained"] == 0, machine


def test_a_switch_to_a_task_not_shown_runnable_is_counted() -> None:
    """U slept on CPU 2 and is switched to with no wake-up in the trace:
    a sleep that raced its wake-up, or an event the trace lacks."""
    _, machine = _schedule_of(
        _switch(2, 1.000, "swapper-0", "R", "U-40"),
        _switch(2, 1.001, "U-40", "S", "swapper-0"),
        _switch(2, 1.002, "swapper-0", "R", "U-40"),
    )
    assert machine["unexplained"] == 1, machine


def test_a_task_woken_on_its_way_to_sleep_waits_from_its_switch_out() -> None:
    """The waker's sched_waking (1.001000) comes between the sleeper's
    dequeue and its sched_switch (1.001002), which prints S: T is runnable
    from its switch out, and waits there until CPU 2 runs it again."""
    got, machine = _schedule_of(
        _switch(2, 1.000, "swapper-0", "R", "T-50"),
        "  P-51 [003] d.... 1.001000: sched_waking: comm=T pid=50 prio=120 target_cpu=002",
        _switch(2, 1.001002, "T-50", "S", "swapper-0"),
        _switch(2, 1.001010, "swapper-0", "R", "T-50"),
    )
    assert got["T"] == [0.0, 0.001002, 0.0, 0.000008, 1], got
    assert machine["unexplained"] == 0, machine


def test_without_a_cluster_of_each_side_nothing_idles_while_the_other_waits() -> None:
    _, machine = trace.schedule(trace.events(SCHEDULE), big_cpus=[])
    row = machine.iloc[0]
    assert row["big_idle_s"] == 0 and round(row["little_idle_s"], 6) == 0.077
    assert row["big_idle_little_queued_s"] == 0 and row["little_idle_big_queued_s"] == 0


def traced_run(path: Path, policy: str) -> Path:
    """A run directory holding the hand-made trace, as a traced run keeps it."""
    path.mkdir(parents=True)
    account = {"events": list(PRESETS["colab"]), "complete": True, "written": 7, "kept": 7}
    (path / "manifest.json").write_text(json.dumps({"policy": policy, "trace": account}))
    cpus = [{"cpu": c, "capacity": 1024 if c < 2 else 325} for c in range(4)]
    (path / "guest.json").write_text(json.dumps({"cpus": cpus}))
    (path / TRACE).write_bytes(lzma.compress(HAND_MADE.encode()))
    return path


def test_ampkit_trace_sums_the_runs_of_each_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [traced_run(tmp_path / f"colab-{r}", "colab") for r in range(2)]
    runs.append(traced_run(tmp_path / "cfs", "cfs"))
    csv = tmp_path / "moves.csv"
    assert main(["trace", *map(str, runs), "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    rows = {tuple(line.split()[:4]): line.split()[4:] for line in out.splitlines() if line}
    # two runs of colab: each count twice, each run's pid a thread of its own
    # (up, down, down from an idle big CPU, within, threads)
    assert rows[("colab", "2", "stages", "wake-up")] == ["0", "2", "2", "0", "4"]
    assert rows[("cfs", "1", "stages", "wake-up")] == ["0", "1", "1", "0", "2"]
    assert len(csv.read_text().splitlines()) == 1 + 3 * 5
    # the CPUs' time, summed likewise: big CPU 0 idle from its switch at
    # 1.000050 to the end (1.000600), CPU 1 until its switch at 1.000060:
    # 0.56 of their 1.1 ms; stages queued on CPU 2 behind pipeline (whose
    # events show it running there) from its wake-up at 1.000100, which
    # put it there, to CPU 1's pull at 1.000200: 0.1 of the 0.55 ms
    lines = out.splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("CPUs")) :]
    cpus = next(line for line in table if line.split()[:2] == ["colab", "2"])
    assert cpus.split()[2:] == ["1.10", "50.91", "0.0", "18.18", "0.0", "0"], cpus
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "manifest.json").write_text("{}")
    assert main(["trace", str(tmp_path / "plain")]) == UsageError.exit_code
    assert "the run was not traced (ampkit run --trace)" in capsys.readouterr().err


def test_run_boots_the_kernel_variant_asked_and_refuses_two() -> None:
    from ampkit.cli import _boot_variant, parser

    def variant(*argv: str) -> str:
        return _boot_variant(parser().parse_args(["run", *argv]))

    assert variant() == "default"
    assert variant("--kernel", "hz1000") == "hz1000"
    assert variant("--debug-kernel") == variant("--kernel", "debug") == "debug"
    with pytest.raises(UsageError, match="name two kernels"):
        variant("--debug-kernel", "--kernel", "hz1000")


def test_a_trace_with_the_tgid_column_reads_alike() -> None:
    """record-tgid adds "(tgid)" before the CPU, "(-------)" when unknown."""
    lines = [
        "          stages-44      (     42) [000] d..2.     1.000050: sched_waking: comm=stages "
        "pid=46 prio=120 target_cpu=000",
        "          <idle>-0       (-------) [001] d.s2.     1.000200: sched_waking: comm=x "
        "pid=7 prio=120 target_cpu=001",
    ]
    frame = trace.events(lines)
    assert frame[["task", "pid", "cpu"]].values.tolist() == [["stages", 44, 0], ["<idle>", 0, 1]]


#: The traced gem5 runs of comm2-stages-pipeline (measurements/colab-crossings)
GEM5_TRACED = (
    Path(__file__).resolve().parents[2] / "measurements" / "colab-crossings" / "gem5" / "runs"
)


@pytest.mark.parametrize("policy", ["colab", "cfs"])
def test_the_schedule_agrees_with_the_kernels_own_counters(policy: str) -> None:
    """Each first-run thread's run time on each side, read from a real
    gem5 trace's context switches, is the kernel's per-task counters of
    the same run (they count from the release; the trace from the
    release to the last first completion, which every first run ends
    within): measured within 2.1 ms."""
    run = RunDir(GEM5_TRACED / f"{policy}-r0")
    threads, machine = trace.schedule(trace.events(run.trace_text().splitlines()), [0, 1])
    assert machine.iloc[0]["unexplained"] == 0
    records = [json.loads(line) for line in (run.path / "results.jsonl").read_text().splitlines()]
    apps = [r for r in records if r.get("app")]
    assert {r["app"] for r in apps} == {"stages", "pipeline"}
    for record in apps:
        ran = threads[threads["comm"] == record["app"]]
        for task in record["tasks"]:
            off = (ran["run_big_s"] * 1e9 - task["big_ns"]).abs() + (
                ran["run_little_s"] * 1e9 - task["little_ns"]
            ).abs()
            assert off.min() <= 2.5e6, (record["app"], task, ran)
