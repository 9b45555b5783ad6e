"""A user-level policy's daemon beside the runner, as ordinary processes on
this machine: ampkit-contention places the applications through their
threads' allowed CPUs, the runner tells it what starts and ends, collects
its log and its CPU time, and fails the run when it dies."""

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ampkit import policies
from ampkit.console import RESULTS_BEGIN, ConsoleReport, parse_console
from ampkit.errors import AmpkitError
from ampkit.interference import AppModel, Degradation
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, RunRequest, prepare

pytestmark = pytest.mark.unit

#: models for the online daemon, which on this machine's PMU keeps every hint
ONLINE_BIG = "1.5 CPU_CYCLES=0.5"
ONLINE_LITTLE = "1.0 CPU_CYCLES=0.25"


def header(policy: str = "cfs") -> str:
    return f"ampkit-run 1\nrun_id host-test\npolicy {policy}\nrepetition 0\ntimeout_s 60\n"


def start_runner(
    host_bin: Path, tmp_path: Path, desc: str, cpus: set[int] | None = None
) -> subprocess.Popen[str]:
    """The runner, on ``cpus`` when given (the daemon's little CPUs are the
    ones it may use but the big ones, so a test names both sets)."""
    path = tmp_path / "run.desc"
    path.write_text(desc)
    work = tmp_path / "work"
    work.mkdir()
    pinned = ["taskset", "-c", ",".join(map(str, sorted(cpus)))] if cpus else []
    return subprocess.Popen(
        [*pinned, str(host_bin / "ampkit-init"), "-d", str(path), "-T", str(work)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(runner: subprocess.Popen[str], status: int) -> ConsoleReport:
    """The runner's console once it has ended, with the exit ``status`` asked for."""
    out, err = runner.communicate(timeout=60)
    assert runner.returncode == status, out + err
    return parse_console(out)


def run_to_end(
    host_bin: Path, tmp_path: Path, desc: str, cpus: set[int] | None = None, status: int = 0
) -> ConsoleReport:
    """A run left alone to its end (finish())."""
    return finish(start_runner(host_bin, tmp_path, desc, cpus), status)


def two_cpus() -> tuple[int, int]:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs to place two applications apart")
    return allowed[0], allowed[1]


def processes(argv_tail: str) -> list[int]:
    """The pids whose command line ends with ``argv_tail`` (NUL-separated words)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes().rstrip(b"\0").endswith(argv_tail.encode()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def allowed_cpus(pid: int) -> set[str]:
    """The allowed-CPU lists of every thread of ``pid``."""
    out = set()
    for task in (Path("/proc") / str(pid) / "task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out.add(line.split(":", 1)[1].strip())
    return out


def wait_for(what: str, found: Callable[[], list[int] | bool], seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what}: not within {seconds} s")


def test_the_daemon_places_applications_by_speedup_and_reports_what_it_did(
    host_bin: Path, tmp_path: Path
) -> None:
    big, little = two_cpus()
    # two sleeping applications, long enough to look at their threads'
    # masks while they run; the higher speedup first in the ranking, the
    # lower one second in the description, so the order is the rule's
    desc = header() + (
        f"policy_daemon ampkit-contention -b {big} -p 2000\n"
        f"app probe 0 1 1229 {host_bin}/ampkit-probe sleep 2.51\n"
        f"app probe 1 1 3072 {host_bin}/ampkit-probe sleep 2.52\n"
    )
    runner = start_runner(host_bin, tmp_path, desc, {big, little})
    slow = wait_for("the low-speedup instance", lambda: processes("sleep\x002.51"))
    fast = wait_for("the high-speedup instance", lambda: processes("sleep\x002.52"))
    # its threads' masks, as the kernel holds them: the one with the
    # higher speedup on the big CPU, the other on the little one
    assert wait_for("placed", lambda: allowed_cpus(fast[0]) == {str(big)}), allowed_cpus(fast[0])
    assert wait_for("placed", lambda: allowed_cpus(slow[0]) == {str(little)})
    report = finish(runner, 0)
    assert report.complete and not report.problems(), report.problems()
    placed = [r for r in report.policy_log if r["what"] == "place"]
    assert [(r["app"], r["core"], r["cpus"]) for r in placed[:2]] == [
        (1, "big", [big]),
        (0, "little", [little]),
    ]
    summary = [r for r in report.policy_log if r["what"] == "summary"]
    assert len(summary) == 1 and summary[0]["big_cpus"] == [big]
    assert summary[0]["instances"] >= 2 and summary[0]["affinity_errors"] == 0
    # the runner's own account of the daemon's cost
    assert [d["daemon"] for d in report.daemons] == ["ampkit-contention"]
    assert report.daemons[0]["cpu_ns"] > 0  # a sweep of the masks every 2 ms for 2.5 s


def test_a_restart_is_placed_as_its_instance_was_and_moves_nothing_else(
    host_bin: Path, tmp_path: Path
) -> None:
    """Under the restart method an instance's end and its restart reach the
    daemon as one batch: the restart goes where its instance was, and the
    other application is never moved. The online daemon runs beside it,
    told the same lines."""
    big, little = two_cpus()
    desc = (
        header().replace("timeout_s 60\n", "timeout_s 60\nmethod restart\n")
        + f"online 2000 1000\nonline_model big {ONLINE_BIG}\nonline_model little {ONLINE_LITTLE}\n"
        + f"policy_daemon ampkit-contention -b {big} -p 2000\n"
        + f"app probe 0 1 1229 {host_bin}/ampkit-probe sleep 0.02\n"
        + f"app probe 1 1 3072 {host_bin}/ampkit-probe sleep 1.5\n"
    )
    report = run_to_end(host_bin, tmp_path, desc, {big, little})
    assert report.complete and not report.problems(), report.problems()
    short = next(a for a in report.apps if a["instance"] == 0 and a["app"] == "probe")
    assert short["restarts"] >= 5, short  # the premise: it ended and started again, often
    # the long one's end ends the run: the daemon is not told of it, and
    # nothing is placed again while the instances left are killed
    log = report.policy_log
    assert not any(r["what"] == "end" and r["app"] == 1 for r in log)
    placed = [r for r in log if r["what"] == "place"]
    assert [r["core"] for r in placed if r["app"] == 1] == ["big"]  # placed once, never moved
    assert {r["core"] for r in placed if r["app"] == 0} == {"little"}
    assert all(r["from"] == "none" for r in placed)  # placements only, no moves
    restarted = [r for r in placed if r["app"] == 0]
    ended = [r for r in log if r["what"] == "end" and r["app"] == 0]
    # every end told came with its restart (one ending beside the long
    # one's last reap is started, then killed untold)
    assert len(restarted) == len(ended) + 1, (len(restarted), len(ended))
    assert short["restarts"] - 1 <= len(ended) <= short["restarts"], (len(ended), short)
    (summary,) = [r for r in log if r["what"] == "summary"]
    assert summary["moves"] == 0, summary
    # both daemons ran to the end and were accounted for
    assert {d["daemon"] for d in report.daemons} == {"ampkit-online", "ampkit-contention"}
    assert any(r["what"] == "summary" for r in report.online)


def test_an_application_too_wide_for_the_big_cpus_takes_them_and_spills(
    host_bin: Path, tmp_path: Path
) -> None:
    """The big CPUs are dealt out a thread each in speedup order: the first
    application, wider than they are, runs on both types; none is left
    for the next, which runs on the little CPUs, until the first ends."""
    big, little = two_cpus()
    # the second outlasts the first by seconds: an end that comes with the
    # run's last is never told (nothing is left to place), so two ends
    # reaped together (a CI run saw it with both sleeping 0.2 s) would
    # leave no end to look at
    desc = header() + (
        f"policy_daemon ampkit-contention -b {big}\n"
        f"app probe 0 2 3072 {host_bin}/ampkit-probe sleep 0.2\n"
        f"app probe 1 1 2048 {host_bin}/ampkit-probe sleep 3\n"
    )
    log = run_to_end(host_bin, tmp_path, desc, {big, little}).policy_log
    assert [(r["what"], r["app"], r.get("core"), r.get("cpus")) for r in log[:2]] == [
        ("place", 0, "both", sorted([big, little])),
        ("place", 1, "little", [little]),
    ]
    # once the first has ended, the big CPU goes to the next
    ends = [i for i, r in enumerate(log) if r["what"] == "end"]
    assert [log[i]["app"] for i in ends] == [0], log
    after = [r for r in log[ends[0] :] if r["what"] == "place"]
    assert (after[0]["app"], after[0]["core"], after[0]["from"]) == (1, "big", "little"), log


def test_a_daemon_that_dies_fails_the_run_and_takes_the_instances_with_it(
    host_bin: Path, tmp_path: Path
) -> None:
    big, _ = two_cpus()
    desc = header() + (
        f"policy_daemon ampkit-contention -b {big}\n"
        f"app probe 0 1 2048 {host_bin}/ampkit-probe sleep 30.01\n"
    )
    runner = start_runner(host_bin, tmp_path, desc, set(two_cpus()))
    app = wait_for("the instance", lambda: processes("sleep\x0030.01"))
    daemon = wait_for("the daemon", lambda: children(runner.pid, "/ampkit-contention"))
    os.kill(daemon[0], signal.SIGKILL)
    report = finish(runner, 1)
    assert report.runner_errors and report.runner_errors[0].startswith(
        "the policy daemon ended during the run: killed by signal 9"
    ), report.runner_errors
    # no instance outlives it, and so no mask it set
    assert not Path(f"/proc/{app[0]}").exists() or "Z" in state(app[0])


def children(parent: int, program_tail: str) -> list[int]:
    """The children of ``parent`` whose program path ends with ``program_tail``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if f"\nPPid:\t{parent}\n" in status and argv0.endswith(program_tail):
            found.append(int(entry.name))
    return found


def state(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().split()[2]
    except OSError:
        return "gone"


@pytest.mark.parametrize(
    "line, says",
    [
        ("policy_daemon ampkit-init", "policy_daemon needs the name of a kit daemon"),
        ("policy_daemon ampkit-probe", "policy_daemon needs the name of a kit daemon"),
        ("policy_daemon ampkit--", "policy_daemon needs the name of a kit daemon"),
        ("policy_daemon /bin/sh", "policy_daemon needs the name of a kit daemon"),
        ("policy_daemon", "policy_daemon needs the name of a kit daemon"),
        ("policy_daemon ampkit-nosuch", "the policy daemon did not start: exit status 127"),
        ("policy_daemon ampkit-contention -b 4096", "the policy daemon did not start"),
    ],
)
def test_a_bad_policy_daemon_line_is_refused_with_the_reason(
    host_bin: Path, tmp_path: Path, line: str, says: str
) -> None:
    desc = header() + f"{line}\napp probe 0 1 2048 {host_bin}/ampkit-probe sleep 0.01\n"
    report = run_to_end(host_bin, tmp_path, desc, status=1)
    assert report.runner_errors and says in report.runner_errors[0], report.runner_errors


# --- the kit's side: the policy's name, its run description, its records -----

ENGINE = EngineIdentity(name="qemu", version="QEMU emulator version 7.2.0", binary_sha256="e" * 64)


def test_a_user_level_policy_runs_its_daemon_over_its_kernel_policy() -> None:
    assert "sfd" in policies.names() and "sfd+online" not in policies.names()
    assert policies.kernel_policy("sfd") == "cfs" and policies.policy_daemon("cfs") == ()
    assert policies.details("sfd") == {"kernel_policy": "cfs", "daemon": "ampkit-contention"}
    request = RunRequest(platform=get_platform("2B2L"), policy="sfd", mix=load_mix("demo"))
    prepared = prepare(request, ENGINE, "k" * 64, "i" * 64, dtb_cache={"2B2L": b"2B2L"})
    lines = prepared.desc.splitlines()
    # the kernel runs cfs; the daemon's line is there, once; the run is sfd's
    assert "policy cfs" in lines and lines.count("policy_daemon ampkit-contention") == 1
    assert request.run_id.startswith("2B2L-sfd-demo")
    cfs = replace(request, policy="cfs")
    plain = prepare(cfs, ENGINE, "k" * 64, "i" * 64, dtb_cache={"2B2L": b"2B2L"})
    assert not any(line.startswith("policy_daemon") for line in plain.desc.splitlines())
    assert plain.key != prepared.key


def test_sfd_ranks_by_speedups_so_a_mix_without_them_is_refused() -> None:
    mix = load_mix("demo")
    bare = replace(mix, apps=tuple(replace(a, speedup=None) for a in mix.apps))
    request = RunRequest(platform=get_platform("2B2L"), policy="sfd", mix=bare)
    with pytest.raises(AmpkitError, match="policy sfd ranks threads by values the mix does not"):
        prepare(request, ENGINE, "k" * 64, "i" * 64, dtb_cache={"2B2L": b"2B2L"})


def test_the_daemons_records_are_read_apart_from_the_results() -> None:
    place = {"type": "policy", "what": "place", "app": 0, "core": "big", "cpus": [0]}
    summary = {"type": "policy", "what": "summary", "placements": 1}
    cost = {"type": "daemon", "daemon": "ampkit-contention", "cpu_ns": 1234}
    text = "\r\n".join(
        [
            *("@ampkit " + json.dumps(r) for r in (place, summary, cost)),
            RESULTS_BEGIN,
            "==== AMPKIT RESULTS END count=0 ====",
        ]
    )
    report = parse_console(text + "\r\n")
    assert report.policy_log == [place, summary] and report.daemons == [cost]
    assert not report.garbled


#: Two one-thread applications and their models, worked by hand: app 0
#: (speedup 3.0) slows by the big cluster's cache pressure when on a big
#: CPU, app 1 (2.0) by the little cluster's when on a little one, and
#: neither otherwise. With app 0 on the one big CPU: 10 and 30 (app 1 on
#: the little one, beside its own 30); with app 1 there: 0 and 0.
MODELS = (
    "policy_data app 0 pressure 10 0 0 10 0 0 big 1 0 0 0 0 0 little 0 0 0 0 0 0\n"
    "policy_data app 1 pressure 30 0 0 30 0 0 big 0 0 0 0 0 0 little 1 0 0 0 0 0\n"
)


@pytest.mark.parametrize(
    "threshold, big_app, predicted",
    [
        # within S at its boundary: the candidate of highest speedup
        ("-S 30", 0, {0: 10.0, 1: 30.0}),
        ("", 0, {0: 10.0, 1: 30.0}),  # no threshold: every prediction is within it
        # app 0 beside app 1 predicts 30 > 29.9: the next candidate
        ("-S 29.9", 1, {0: 0.0, 1: 0.0}),
        # none within: the least total predicted slowdown (0 against 40)
        ("-S -1", 1, {0: 0.0, 1: 0.0}),
    ],
)
def test_algorithm_1_gives_the_big_cpu_by_speedup_within_the_slowdown_threshold(
    host_bin: Path, tmp_path: Path, threshold: str, big_app: int, predicted: dict[int, float]
) -> None:
    big, little = two_cpus()
    desc = header() + (
        f"policy_daemon ampkit-contention -b {big} {threshold}\n"
        + MODELS
        + f"app probe 0 1 3072 {host_bin}/ampkit-probe sleep 0.05\n"
        f"app probe 1 1 2048 {host_bin}/ampkit-probe sleep 0.05\n"
    )
    log = run_to_end(host_bin, tmp_path, desc, {big, little}).policy_log
    first = sorted(log[:2], key=lambda r: r["app"])
    assert [(r["what"], r["core"]) for r in first] == [
        ("place", "big" if big_app == 0 else "little"),
        ("place", "big" if big_app == 1 else "little"),
    ], log
    assert {r["app"]: r["predicted_pct"] for r in first} == predicted
    (summary,) = [r for r in log if r["what"] == "summary"]
    # a threshold makes it the contention-aware rule; without one, sfd's
    assert summary["rule"] == ("contention" if threshold else "speedup")
    assert summary["threshold_pct"] == (float(threshold[3:]) if threshold else None)


def test_a_bad_model_line_fails_the_daemon_with_the_reason(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + (
        "policy_daemon ampkit-contention\n"
        "policy_data app 0 pressure 10 0 0 10 0 0 big 1 0 0 0 0 little 0 0 0 0 0 0\n"
        f"app probe 0 1 3072 {host_bin}/ampkit-probe sleep 0.05\n"
    )
    errors = run_to_end(host_bin, tmp_path, desc, status=1).runner_errors
    assert errors and "a model line needs 'data app INDEX pressure" in errors[0], errors


def test_the_kits_model_lines_are_the_ones_the_daemon_was_worked_with() -> None:
    """ampkit.interference writes the lines the hand-worked cases above give
    the daemon: the same words, the same numbers."""
    zero = Degradation((0.0,) * 5, 0.0)
    cache = Degradation((1.0, 0.0, 0.0, 0.0, 0.0), 0.0)
    apps = (
        AppModel(
            "a", 1, "n1", {"big": (10, 0, 0), "little": (10, 0, 0)}, {"big": cache, "little": zero}
        ),
        AppModel(
            "b", 1, "n1", {"big": (30, 0, 0), "little": (30, 0, 0)}, {"big": zero, "little": cache}
        ),
    )
    for index, (app, line) in enumerate(zip(apps, MODELS.splitlines(), strict=True)):
        ours, worked = app.data_line(index).split(), line.split()
        assert len(ours) == len(worked) == 24
        assert [w for w in ours if not _is_number(w)] == [w for w in worked if not _is_number(w)]
        numbers = [(float(a), float(b)) for a, b in zip(ours, worked, strict=True) if _is_number(a)]
        assert all(a == b for a, b in numbers), numbers


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    "lines, says",
    [
        # eq. 1 sums every co-runner's pressure: a model for each or none
        (MODELS.splitlines()[0] + "\n", "models were given, but none for the application of index"),
        (
            MODELS.replace("pressure 10 0 0", "pressure -10 0 0"),
            "a model line with a negative pressure",
        ),
        (MODELS.replace("app 1 pressure", "app 64 pressure"), "an application index out of 0-63"),
        (MODELS + MODELS.splitlines()[0] + "\n", "an application given one already"),
    ],
)
def test_models_that_cannot_be_predicted_by_fail_the_run_with_the_reason(
    host_bin: Path, tmp_path: Path, lines: str, says: str
) -> None:
    desc = header() + (
        "policy_daemon ampkit-contention -S 50\n"
        + lines
        + f"app probe 0 1 3072 {host_bin}/ampkit-probe sleep 0.05\n"
        f"app probe 1 1 2048 {host_bin}/ampkit-probe sleep 0.05\n"
    )
    errors = run_to_end(host_bin, tmp_path, desc, status=1).runner_errors
    assert errors and says in errors[0], errors


def test_policy_data_without_a_daemon_is_refused(host_bin: Path, tmp_path: Path) -> None:
    desc = header() + MODELS + f"app probe 0 1 3072 {host_bin}/ampkit-probe sleep 0.01\n"
    errors = run_to_end(host_bin, tmp_path, desc, status=1).runner_errors
    assert errors and "policy_data lines without a policy_daemon" in errors[0], errors
