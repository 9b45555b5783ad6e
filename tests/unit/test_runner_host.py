"""The guest runner as an ordinary process: same code as /init, minus mounts and power-off."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from ampkit.console import parse_console
from ampkit.engines.qemu import BootResult
from ampkit.run import judge


def run_runner(host_bin: Path, tmp_path: Path, desc: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "run.desc"
    path.write_text(desc)
    work = tmp_path / "work"
    work.mkdir()
    return subprocess.run(
        [str(host_bin / "ampkit-init"), "-d", str(path), "-T", str(work)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def header(timeout: int = 30, policy: str = "cfs") -> str:
    return f"ampkit-run 1\nrun_id host-test\npolicy {policy}\nrepetition 0\ntimeout_s {timeout}\n"


def test_mix_runs_together_and_reports(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + (
        f"app compute 0 2 1946 {host_bin}/compute -t 2 -n 2000\n"
        f"app contend 0 3 0 {host_bin}/contend -t 3 -n 25\n"
        f"app pipeline 0 3 0 {host_bin}/pipeline -t 3 -n 200\n"
    )
    result = run_runner(host_bin, tmp_path, desc)
    assert result.returncode == 0, result.stdout + result.stderr
    report = parse_console(result.stdout)
    assert report.complete and not report.problems(), report.problems()
    assert [a["app"] for a in report.apps] == ["compute", "contend", "pipeline"]
    # all started at the same moment, each ended after it started
    assert len({a["start_ns"] for a in report.apps}) == 1
    for a in report.apps:
        assert a["end_ns"] > a["start_ns"]
        assert a["status"] == "ok" and a["exit_status"] == 0
        assert len(a["thread_times_ns"]) == a["threads"]
        assert len(a["thread_cpu_ns"]) == a["threads"]
    assert report.apps[0]["speedup_q10"] == 1946
    # the host kernel has no speedup interface: said, not fatal (a kit kernel's
    # refusal fails the app; tests/qemu checks that the hint arrives)
    assert report.apps[0]["speedup_error"] == "Invalid argument"
    assert "speedup_error" not in report.apps[1]
    assert report.guest is not None and report.guest["cpus"]
    # the policies' knobs read again after the mix: none on a kernel without them
    assert report.knobs_after == {}


def test_failure_and_timeout_are_records_not_missing_lines(host_bin: Path, tmp_path: Path) -> None:
    desc = header(timeout=2) + (
        "app false 0 1 0 /bin/false\n"
        f"app hang 0 1 0 {host_bin}/ampkit-probe sleep 60\n"
        "app missing 0 1 0 /no/such/program\n"
        f"app crash 0 1 0 {host_bin}/compute -t 0\n"
    )
    result = run_runner(host_bin, tmp_path, desc)
    report = parse_console(result.stdout)
    assert report.complete
    by_name = {a["app"]: a for a in report.apps}
    assert by_name["false"]["status"] == "failed" and by_name["false"]["exit_status"] == 1
    assert by_name["hang"]["status"] == "timeout" and by_name["hang"]["signal"] == 9
    assert by_name["missing"]["exit_status"] == 127
    assert "cannot execute /no/such/program" in by_name["missing"]["output"]
    assert by_name["crash"]["exit_status"] == 2
    assert by_name["hang"]["end_ns"] - by_name["hang"]["start_ns"] >= 2_000_000_000


def test_bad_description_names_the_line(host_bin: Path, tmp_path: Path) -> None:
    result = run_runner(host_bin, tmp_path, header() + "app x 0 zero 0 /bin/true\n")
    assert result.returncode == 1
    report = parse_console(result.stdout)
    assert report.runner_errors == ["run description: bad instance, threads or speedup: line 6"]


@pytest.mark.parametrize(
    "line, says",
    [
        ("trace sched_switch", "trace needs system:event names (lower case, digits and _), not"),
        ("trace sched:Bad", "not: sched:Bad"),
        ("trace " + ",".join(f"sched:e{i}" for i in range(17)), "at most 16 events: line 6"),
    ],
)
def test_a_bad_trace_line_is_refused_before_anything_runs(
    host_bin: Path, tmp_path: Path, line: str, says: str
) -> None:
    result = run_runner(host_bin, tmp_path, header() + line + "\napp t 0 1 0 /bin/true\n")
    report = parse_console(result.stdout)
    assert result.returncode == 1 and not report.saw_begin
    assert report.runner_errors and says in report.runner_errors[0], report.runner_errors


def test_policy_unknown_to_this_kernel_is_refused(host_bin: Path, tmp_path: Path) -> None:
    # The build machine's kernel has no sched_amp_policy: only cfs can run.
    result = run_runner(host_bin, tmp_path, header(policy="colab") + "app t 0 1 0 /bin/true\n")
    report = parse_console(result.stdout)
    assert report.runner_errors and "no AMP policies" in report.runner_errors[0]
    assert not report.saw_begin


def test_restart_method_counts_first_completions_only(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + (
        "method restart\n"
        f"app compute 0 1 0 {host_bin}/compute -t 1 -n 500\n"
        f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 1\n"
    )
    result = run_runner(host_bin, tmp_path, desc)
    report = parse_console(result.stdout)
    assert report.complete and not report.problems(), report.problems()
    quick, slow = report.apps
    # exactly one record per application, each its first run's
    assert [a["app"] for a in report.apps] == ["compute", "probe"]
    assert quick["end_ns"] - quick["start_ns"] < 1_000_000_000 <= slow["end_ns"] - slow["start_ns"]
    assert len(quick["thread_times_ns"]) == 1
    # the quick one ran again and again while the slow one ran; the last
    # restart was killed when the slow one completed
    assert quick["method"] == "restart"
    assert quick["restarts"] >= 2
    assert quick["restarts_completed"] in {quick["restarts"] - 1, quick["restarts"]}
    assert slow["restarts"] == 0
    assert "restart_failure" not in quick


def test_once_method_runs_each_application_once(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + (
        "method once\n"
        f"app compute 0 1 0 {host_bin}/compute -t 1 -n 500\n"
        f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 0.3\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert [(a["method"], a["restarts"]) for a in report.apps] == [("once", 0), ("once", 0)]


def test_the_warm_up_runs_the_mix_then_measures_fresh_instances(
    host_bin: Path, tmp_path: Path
) -> None:
    # each instance of quick logs its pid and completes at once, so the
    # warm-up's second restarts it; each instance of the sleeper logs its
    # start and, 3 s later, its end: the warm-up's instance outlives the
    # warm-up and must be killed at its end (with its sleep), not waited for
    log = tmp_path / "instances.log"
    quick = tmp_path / "quick.sh"
    quick.write_text(f"#!/bin/sh\necho quick $$ >> {log}\n")
    sleeper = tmp_path / "sleeper.sh"
    sleeper.write_text(
        f"#!/bin/sh\necho sleeper-start $$ >> {log}\nsleep 3\necho sleeper-end $$ >> {log}\n"
    )
    quick.chmod(0o755)
    sleeper.chmod(0o755)
    desc = header(timeout=30) + (
        f"method once\nwarmup_ms 1000\napp quick 0 1 0 {quick}\napp sleeper 0 1 0 {sleeper}\n"
    )
    result = run_runner(host_bin, tmp_path, desc)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ampkit-init: warming up for 1000 ms" in result.stdout
    done = re.search(
        r"ampkit-init: warm-up of 1000 ms done \((\d+) us of guest time, (\d+) of them stopping; "
        r"(\d+) instances\); "
        "the measured run starts",
        result.stdout,
    )
    assert done, result.stdout
    # a second and no more than the kills take: the warm-up's sleeper (3 s)
    # was not waited for; quick ran at least twice beside it
    assert 1_000_000 <= int(done[1]) < 2_500_000 and int(done[3]) >= 3, done[0]
    # killing and reaping two programs (one asleep) takes milliseconds
    assert int(done[2]) < 500_000, done[0]
    report = parse_console(result.stdout)
    assert report.complete and not report.problems(), report.problems()
    # one record each, of the measured instance: nothing of the warm-up
    assert [(a["app"], a["status"], a["restarts"]) for a in report.apps] == [
        ("quick", "ok", 0),
        ("sleeper", "ok", 0),
    ]
    lines = [line.split() for line in log.read_text().splitlines()]
    quick_pids = [pid for what, pid in lines if what == "quick"]
    # the warm-up started quick, started it again when it completed, and
    # the measured run started a fresh instance after them
    assert len(quick_pids) >= 3 and len(set(quick_pids)) == len(quick_pids), lines
    # two sleepers started; the warm-up's was killed and never ended, the
    # measured one (a fresh process) ran its full 3 s
    started = [pid for what, pid in lines if what == "sleeper-start"]
    ended = [pid for what, pid in lines if what == "sleeper-end"]
    assert len(started) == 2 and ended == started[1:], lines
    measured = report.apps[1]
    assert measured["end_ns"] - measured["start_ns"] >= 3_000_000_000


def test_a_bad_warm_up_names_the_line(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + "warmup_ms -5\napp quick 0 1 0 /bin/true\n"
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert report.runner_errors == ["run description: warmup_ms must be 0 to 600000: line 6"]


def test_a_failed_restart_is_recorded_and_not_repeated(host_bin: Path, tmp_path: Path) -> None:
    # succeeds the first time, fails from the second on
    script = tmp_path / "flaky.sh"
    marker = tmp_path / "ran-once"
    script.write_text(
        f"#!/bin/sh\nif [ -e {marker} ]; then echo second run refused; exit 3; fi\ntouch {marker}\n"
    )
    script.chmod(0o755)
    desc = header() + (
        "method restart\n"
        f"app flaky 0 1 0 {script}\n"
        f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 0.5\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    flaky = report.apps[0]
    assert flaky["status"] == "ok" and flaky["exit_status"] == 0
    assert flaky["restarts"] == 1 and flaky["restarts_completed"] == 0
    assert flaky["restart_failure"]["exit_status"] == 3
    assert "second run refused" in flaky["restart_failure"]["output"]
    # the host fails the run: the others no longer met the same load
    boot = BootResult(exit_code=0, timed_out=False, wall_s=1.0, console_truncated=False)
    assert judge(boot, report, 60) == "failed: flaky#0 failed when restarted (exit status 3)"


def test_bad_method_names_the_line(host_bin: Path, tmp_path: Path) -> None:
    result = run_runner(host_bin, tmp_path, header() + "method twice\napp t 0 1 0 /bin/true\n")
    report = parse_console(result.stdout)
    assert report.runner_errors == ["run description: method must be once or restart: line 6"]


def test_inputs_env_and_roi_of_suite_programs(host_bin: Path, tmp_path: Path) -> None:
    """What PARSEC programs get: a directory of their own linking the inputs, the
    suite's environment, the disk's mountpoint; their ROI marks reach the record."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "data.txt").write_text("the input\n")
    prog = tmp_path / "prog.sh"
    # reads its input where it stands, writes an output there (twice: two
    # instances must not share it), marks a ROI the way the kit's hooks do
    prog.write_text(
        "#!/bin/sh\n"
        'echo "roi_begin 5" >&"$AMPKIT_REPORT_FD"\n'
        "test ! -e out.txt || exit 9\n"
        "cat data.txt > out.txt && cat out.txt\n"
        'echo "PARSECPLAT=$PARSECPLAT pwd=$(pwd)"\n'
        'echo "roi_end 9" >&"$AMPKIT_REPORT_FD"\n'
    )
    prog.chmod(0o755)
    desc = header() + (
        f"disk /dev/null {tmp_path}\n"
        "env PARSECPLAT=aarch64-linux.ampkit\n"
        f"app a 0 1 0 {prog}\ninputs {inputs}\n"
        f"app a 1 1 0 {prog}\ninputs {inputs}\n"
        f"app b 0 1 0 {host_bin}/ampkit-probe sleep 0.2\n"
    )
    result = run_runner(host_bin, tmp_path, desc)
    assert result.returncode == 0, result.stdout + result.stderr
    report = parse_console(result.stdout)
    a0, a1, b = report.apps
    for a in (a0, a1):
        assert a["status"] == "ok", a["output"]
        assert "the input" in a["output"]
        assert "PARSECPLAT=aarch64-linux.ampkit" in a["output"]
        assert a["roi_ns"] == [5, 9]
    # each in a directory of its own, under the runner's work directory
    dirs = {
        line.split("pwd=")[1]
        for a in (a0, a1)
        for line in a["output"].splitlines()
        if "pwd=" in line
    }
    assert len(dirs) == 2 and all(d.startswith(str(tmp_path / "work")) for d in dirs)
    # gone once their instances were reaped, with what the programs wrote
    # there (restarts would otherwise fill the guest's tmpfs)
    assert not any(Path(d).exists() for d in dirs), dirs
    assert list((tmp_path / "work").glob("app*.d")) == []
    assert "roi_ns" not in b
    assert (inputs / "out.txt").exists() is False  # the inputs stay as they were


def test_a_roi_never_left_and_bad_suite_lines(host_bin: Path, tmp_path: Path) -> None:
    prog = tmp_path / "prog.sh"
    prog.write_text('#!/bin/sh\necho "roi_begin 7" >&"$AMPKIT_REPORT_FD"\nexit 3\n')
    prog.chmod(0o755)
    result = run_runner(host_bin, tmp_path, header() + f"app a 0 1 0 {prog}\n")
    (a,) = parse_console(result.stdout).apps
    assert a["status"] == "failed" and a["roi_ns"] == [7, None]

    missing = tmp_path / "no-inputs"
    second = tmp_path / "second"
    second.mkdir()
    result = run_runner(host_bin, second, header() + f"app a 0 1 0 {prog}\ninputs {missing}\n")
    (a,) = parse_console(result.stdout).apps
    assert a["status"] == "failed" and a["exit_status"] == 126
    assert f"cannot prepare the inputs of {prog} from {missing}" in a["output"]

    for bad, says in [
        (f"inputs {missing}\napp a 0 1 0 {prog}\n", "inputs needs an app line before it"),
        ("env NOEQUALS\n" + f"app a 0 1 0 {prog}\n", "env needs NAME=value"),
        (f"disk /dev/vda relative\napp a 0 1 0 {prog}\n", "disk needs a device and an absolute"),
        (f"disk /dev/vda {tmp_path}/none\napp a 0 1 0 {prog}\n", "mountpoint is not a directory"),
    ]:
        sub = tmp_path / f"case-{says.split()[0]}-{len(bad)}"
        sub.mkdir()
        result = run_runner(host_bin, sub, header() + bad)
        assert result.returncode != 0
        assert says in result.stdout + result.stderr, result.stdout + result.stderr


def test_a_start_delay_releases_its_app_that_much_later(host_bin: Path, tmp_path: Path) -> None:
    """A perturbed run's delayed application starts its first run at least
    its delay after the others (by its own clock: its region of interest),
    and is timed from its own release; restarts start at once."""
    delay_us = 300_000
    desc = header() + (
        "method restart\n"
        f"app compute 0 1 0 {host_bin}/compute -t 1 -n 200\n"
        "start_delay_us 0\n"
        f"app compute 1 1 0 {host_bin}/compute -t 1 -n 200\n"
        f"start_delay_us {delay_us}\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert report.complete and not report.problems(), report.problems()
    first, delayed = report.apps
    gate = first["start_ns"]
    assert delayed["start_ns"] == gate + delay_us * 1000
    assert delayed["start_delay_us"] == delay_us and "start_delay_us" not in first
    # the program itself began its work no earlier than the delay after the gate
    assert delayed["roi_ns"][0] >= gate + delay_us * 1000
    # while the undelayed one ran (and, done, restarted) in the meantime
    assert first["roi_ns"][0] < gate + delay_us * 1000
    assert first["restarts"] >= 1 and delayed["restarts"] == 0
    assert delayed["end_ns"] - delayed["start_ns"] < delayed["end_ns"] - gate


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ("start_delay_us 5\napp t 0 1 0 /bin/true\n", "start_delay_us needs an app line before it"),
        ("app t 0 1 0 /bin/true\nstart_delay_us 1000001\n", "and 0 to 1000000: line 7"),
        ("app t 0 1 0 /bin/true\nstart_delay_us -1\n", "and 0 to 1000000: line 7"),
        ("epi_big_pj 5\napp t 0 1 0 /bin/true\n", "epi_big_pj needs an app line before it"),
        ("app t 0 1 0 /bin/true\nepi_big_pj 0\n", "and 1 to 1000000: line 7"),
        ("app t 0 1 0 /bin/true\nepi_big_pj 1000001\n", "and 1 to 1000000: line 7"),
    ],
)
def test_a_bad_line_after_an_app_names_the_line(
    host_bin: Path, tmp_path: Path, lines: str, says: str
) -> None:
    report = parse_console(run_runner(host_bin, tmp_path, header() + lines).stdout)
    assert len(report.runner_errors) == 1 and says in report.runner_errors[0]
    assert not report.saw_begin


def test_an_energy_hint_is_handed_on_and_recorded(host_bin: Path, tmp_path: Path) -> None:
    """An epi_big_pj line gives its app the hint: the record carries it and
    what applying it said (the host kernel has no such prctl: said, not
    fatal; tests/qemu checks that the kernel holds it). An app without one
    records neither."""
    desc = header() + (
        f"app compute 0 1 2048 {host_bin}/compute -t 1 -n 200\n"
        "epi_big_pj 450\n"
        f"app compute 1 1 0 {host_bin}/compute -t 1 -n 200\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert report.complete and not report.problems(), report.problems()
    hinted, plain = report.apps
    assert hinted["epi_big_pj"] == 450 and hinted["epi_error"] == "Invalid argument"
    assert hinted["status"] == "ok"
    assert "epi_big_pj" not in plain and "epi_error" not in plain


def test_pmu_counting_records_every_event_or_why_not(host_bin: Path, tmp_path: Path) -> None:
    """With a pmu line each first run's record holds the events it names:
    counted, with its times and whether the kernel's PMU lists it, or why
    not (this host has no armv8 PMU: the counts themselves are checked on
    QEMU and gem5). Without the line, none; a bad list names the line."""
    from ampkit.pmu import EVENT_SETS

    events = EVENT_SETS[0]
    app = f"app compute 0 2 0 {host_bin}/compute -t 2 -n 200\n"
    desc = header() + f"pmu {','.join(events)}\n" + app
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert report.complete and not report.problems(), report.problems()
    pmu = report.apps[0]["pmu"]
    assert list(pmu) == list(events)
    for event in pmu.values():
        assert (
            event == {"error": "no CPU PMU in sysfs"} or event["running_ns"] <= event["enabled_ns"]
        ), event
    for i, (lines, says) in enumerate(
        [
            ("", None),
            ("pmu INST_RETIRED,L2D_CACHE\n", "not: L2D_CACHE"),
            ("pmu CPU_CYCLES,INST_RETIRED\n", "not: CPU_CYCLES"),
            ("pmu " + ",".join(["INST_RETIRED"] * 9) + "\n", "not: INST_RETIRED"),
        ]
    ):
        (tmp_path / str(i)).mkdir()
        result = run_runner(host_bin, tmp_path / str(i), header() + lines + app)
        if says is None:
            report = parse_console(result.stdout)
            assert report.complete and "pmu" not in report.apps[0]
        else:
            assert result.returncode != 0, result.stdout
            assert says in result.stdout + result.stderr, result.stdout + result.stderr


def test_probe_snapshot_reads_at_the_times_asked_and_refuses_bad_ones(host_bin: Path) -> None:
    # run as root (CI), the probe turns real-time for its reads of the
    # host's /proc: a few milliseconds, then it exits
    probe = str(host_bin / "ampkit-probe")
    done = subprocess.run(
        [probe, "snapshot", "0", ".2", "0.25"], capture_output=True, text=True, check=True
    )
    read = json.loads(done.stdout)
    # the times as numbers JSON takes, whatever their spelling
    assert [s["at"] for s in read["snapshots"]] == [0, 0.2, 0.25]
    # each no earlier than asked, and read in a moment (a host kernel holds
    # no hints, so no thread is read here; the guest tests read them)
    for s in read["snapshots"]:
        assert s["at"] * 1e9 <= s["at_ns"] <= s["done_ns"] < s["at"] * 1e9 + 0.15e9, s
        assert s["threads"] == []
    assert isinstance(read["realtime"], bool)
    # times must be numbers, strictly rising, and the command needs one
    for bad in (["1", "0.5"], ["0.5", "0.5"], ["x"], ["0x"], ["-1"], ["nan"], []):
        refused = subprocess.run([probe, "snapshot", *bad], capture_output=True, text=True)
        assert refused.returncode == 2 and "snapshot SECONDS..." in refused.stderr, bad
        assert refused.stdout == "", bad


def test_a_cpus_line_runs_its_app_on_those_cpus_alone(host_bin: Path, tmp_path: Path) -> None:
    """The allowed CPUs a cpus line names are set before the gate opens,
    so the program inherits them from its first instruction (cat reads
    its own); its record names them, and an app without one keeps the
    runner's."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs to tell a pinned app from the others")
    last = allowed[-1]
    desc = header() + (
        f"app cat 0 1 0 /bin/cat /proc/self/status\ncpus {last}\n"
        "app cat 1 1 0 /bin/cat /proc/self/status\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert report.complete and not report.problems(), report.problems()
    pinned, free = report.apps
    assert f"Cpus_allowed_list:\t{last}\n" in pinned["output"], pinned["output"]
    assert pinned["cpus"] == [last] and "cpus" not in free
    assert f"Cpus_allowed_list:\t{last}\n" not in free["output"]


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ("cpus 0\napp t 0 1 0 /bin/true\n", "cpus needs an app line before it"),
        ("app t 0 1 0 /bin/true\ncpus 0,x\n", "CPU numbers, comma separated: line 7"),
        ("app t 0 1 0 /bin/true\ncpus 0\ncpus 1\n", "(one each)"),
        (
            "policy_daemon ampkit-contention\napp t 0 1 0 /bin/true\ncpus 0\n",
            "cpus lines and a policy_daemon would both set the applications' CPUs",
        ),
        ("app t 0 1 0 /bin/true\ncpus 0,,1\n", "CPU numbers, comma separated: line 7"),
        ("app t 0 1 0 /bin/true\ncpus 0,\n", "CPU numbers, comma separated: line 7"),
        # a CPU this machine does not have: no run of it means what it says,
        # alone or beside one it has (the kernel would drop it silently)
        ("app t 0 1 0 /bin/true\ncpus 1023\n", "cannot run an application on the CPUs"),
        ("app t 0 1 0 /bin/true\ncpus 0,1023\n", "the machine lacks some of them"),
    ],
)
def test_a_bad_cpus_line_fails_the_run_with_the_reason(
    host_bin: Path, tmp_path: Path, lines: str, says: str
) -> None:
    report = parse_console(run_runner(host_bin, tmp_path, header() + lines).stdout)
    assert len(report.runner_errors) == 1 and says in report.runner_errors[0], report.runner_errors
    assert not report.apps


def test_an_until_line_ends_the_run_with_its_app_and_stops_the_others(
    host_bin: Path, tmp_path: Path
) -> None:
    """The run is app 0's: it completes in 0.3 s, and the other, which would
    sleep a minute, is stopped there, its record saying so; a short one
    beside it restarted while it ran and completed its first run."""
    desc = header(timeout=60) + (
        "method restart\nuntil 0\n"
        f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 0.3\n"
        f"app probe 1 1 0 {host_bin}/ampkit-probe sleep 60\n"
        f"app probe 2 1 0 {host_bin}/ampkit-probe sleep 0.05\n"
    )
    started = time.monotonic()
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    assert time.monotonic() - started < 30  # the premise: not the minute's sleep
    assert report.complete and not report.problems(), report.problems()
    target, long, short = report.apps
    assert target["status"] == "ok" and long["status"] == "stopped"
    assert short["status"] == "ok" and short["restarts"] >= 1
    assert long["end_ns"] - long["start_ns"] < 30_000_000_000
    # the kit takes the stopped one as load, not as a failure
    assert (
        judge(
            BootResult(exit_code=0, timed_out=False, wall_s=1.0, console_truncated=False),
            report,
            60,
        )
        == "ok"
    )


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ("until 1\napp t 0 1 0 /bin/true\n", "until names an application the run does not have"),
        (
            "until x\napp t 0 1 0 /bin/true\n",
            "until needs an application's index (one line): line 6",
        ),
    ],
)
def test_a_bad_until_line_is_refused(host_bin: Path, tmp_path: Path, lines: str, says: str) -> None:
    report = parse_console(run_runner(host_bin, tmp_path, header() + lines).stdout)
    assert len(report.runner_errors) == 1 and says in report.runner_errors[0], report.runner_errors


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ("until 0\nuntil 0\napp t 0 1 0 /bin/true\n", "(one line): line 7"),
        ("method once\nuntil 0\napp t 0 1 0 /bin/true\n", "until needs method restart"),
    ],
)
def test_an_until_line_takes_one_index_and_the_restart_method(
    host_bin: Path, tmp_path: Path, lines: str, says: str
) -> None:
    report = parse_console(run_runner(host_bin, tmp_path, header() + lines).stdout)
    assert len(report.runner_errors) == 1 and says in report.runner_errors[0], report.runner_errors


def test_a_co_runner_that_fails_as_the_run_ends_is_not_stopped(
    host_bin: Path, tmp_path: Path
) -> None:
    """Only the runner's own kill makes a record "stopped": a co-runner that
    ended by itself is judged by how it ended. Here it fails at once, and
    the restart method does not run a failed program again, so its first
    run's failure stands and fails the run."""
    desc = header(timeout=60) + (
        "method restart\nuntil 0\n"
        f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 0.3\n"
        "app false 0 1 0 /bin/false\n"
    )
    report = parse_console(run_runner(host_bin, tmp_path, desc).stdout)
    target, failing = report.apps
    assert target["status"] == "ok" and failing["status"] == "failed", report.apps
    boot = BootResult(exit_code=0, timed_out=False, wall_s=1.0, console_truncated=False)
    assert judge(boot, report, 60).startswith("failed: false#0 failed")
