"""The online speedup model: ampkit-online's arithmetic (its replay mode,
on hand-made counts), the runner starting, feeding and stopping it on this
machine, and the host side (ampkit/online.py) that describes it to a run."""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ampkit import calibration, online, policies
from ampkit.analysis import online as online_analysis
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.console import parse_console
from ampkit.errors import AmpkitError, UsageError
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, RunRequest, prepare
from ampkit.speedupmodel import Model, load_model

BIG = "3.0 CPU_CYCLES=-1.0 MEM_ACCESS=2.0"
ENGINE = EngineIdentity(name="qemu", version="QEMU emulator version 7.2.0", binary_sha256="e" * 64)
LITTLE = "1.5 CPU_CYCLES=0.5"


def replay(host_bin: Path, tmp_path: Path, counts: str, *extra: str) -> list[dict[str, Any]]:
    path = tmp_path / "counts.txt"
    path.write_text(counts)
    result = subprocess.run(
        [str(host_bin / "ampkit-online"), "-B", BIG, "-L", LITTLE, *extra, "-r", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def estimates(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["what"] == "estimate"]


def test_a_period_predicts_each_core_type_and_weights_by_instructions(
    host_bin: Path, tmp_path: Path
) -> None:
    records = replay(
        host_bin,
        tmp_path,
        # big: CPI 1.5, 0.2 memory accesses per instruction; little: CPI 1.6
        "count 7 big 1000000 1500000 200000\nperiod\n"
        "count 7 big 1000000 1500000 200000\ncount 7 little 500000 800000\nperiod\n",
    )
    first, second = estimates(records)
    big = 3.0 - 1.0 * 1.5 + 2.0 * 0.2
    little = 1.5 + 0.5 * 1.6
    assert first["per_type"] == [pytest.approx(big), None]
    assert first["estimate"] == pytest.approx(big)
    assert first["speedup_q10"] == round(big * 1024) and first["written"]
    weighted = (big * 1_000_000 + little * 500_000) / 1_500_000
    assert second["per_type"] == [pytest.approx(big), pytest.approx(little)]
    assert second["estimate"] == pytest.approx(weighted, abs=1e-4)
    # the running average moved by less than the threshold: not a transition,
    # but one quiet period is not yet a stable phase, so the average is used
    average = big + 0.5 * (weighted - big)
    assert second["average"] == pytest.approx(average, abs=1e-4)
    assert not second["stable"]
    assert second["speedup_q10"] == round(average * 1024)
    summary = records[-1]
    assert summary["what"] == "summary"
    assert (summary["periods"], summary["estimates"], summary["writes"]) == (2, 2, 2)


def test_too_few_instructions_wait_for_the_next_periods_counts(
    host_bin: Path, tmp_path: Path
) -> None:
    # a thread that runs a little in every period: 400 instructions a
    # period on big, 999 on little (one short), against a threshold of 1000
    period = "count 7 big 400 600 80\ncount 7 little 999 1500\nperiod\n"
    records = replay(host_bin, tmp_path, period * 3, "-m", "1000")
    first, second = estimates(records)
    # the second period: little's 1998 are enough, big's 800 are not yet
    assert first["instructions"] == [0, 1998] and first["per_type"][0] is None
    # the third: big's 1200 over three periods, little's 999 held back
    assert second["instructions"] == [1200, 0]
    assert second["per_type"][0] == pytest.approx(3.0 - 1.0 * 1.5 + 2.0 * 0.2)
    # each estimate spans from the earliest counts it uses: little's two
    # periods, then big's three (held back while little's were used)
    assert first["t_ns"] - first["from_ns"] == 2_000_000
    assert second["from_ns"] == first["from_ns"] and second["t_ns"] - second["from_ns"] == 3_000_000


def test_what_an_ended_thread_held_back_is_counted_as_never_estimated(
    host_bin: Path, tmp_path: Path
) -> None:
    # thread 7 runs 400 instructions on big, then 300 in the period it
    # ends: 700 against a threshold of 1000, never estimated; thread 8's
    # 1500 are
    records = replay(
        host_bin,
        tmp_path,
        "count 7 big 400 600 80\ncount 8 big 1500 2000 300\nperiod\n"
        "count 7 big 300 450 60\nend 7\nperiod\n"
        "count 8 big 1500 2000 300\nperiod\n",
        "-m",
        "1000",
    )
    assert [e["tid"] for e in estimates(records)] == [8, 8]
    summary = records[-1]
    assert summary["unestimated_instructions"] == 700
    assert summary["periods"] == 3


def test_a_stable_phase_uses_the_latest_estimate_and_a_transition_the_average(
    host_bin: Path, tmp_path: Path
) -> None:
    # CPI 1.0 on big: 2.0 + 0.4 = 2.4... then a small step, then a jump
    def period(cycles: int) -> str:
        return f"count 9 big 1000000 {cycles} 200000\nperiod\n"

    records = replay(
        host_bin,
        tmp_path,
        period(1_000_000) * 3 + period(1_050_000) + period(400_000) + period(400_000) * 3,
    )
    got = estimates(records)
    values = [3.0 - c / 1e6 + 0.4 for c in (1e6, 1e6, 1e6, 1.05e6, 4e5, 4e5, 4e5, 4e5)]
    assert [e["estimate"] for e in got] == [pytest.approx(v, abs=1e-4) for v in values]
    # periods 2 and 3 repeat the first: quiet, stable from the second quiet one
    assert [e["stable"] for e in got[:3]] == [False, False, True]
    # a 2% step moves the average by 1%: still stable, the step itself used
    assert got[3]["stable"] and got[3]["speedup_q10"] == round(values[3] * 1024)
    # a jump moves the average by more than 10%: a transition, the average used
    assert not got[4]["stable"]
    assert got[4]["speedup_q10"] == round(got[4]["average"] * 1024)
    assert got[4]["speedup_q10"] != round(values[4] * 1024)
    # the average closes in, 50% a period; stable again once two periods move it under 10%
    stable_again = next(i for i, e in enumerate(got) if i > 4 and e["stable"])
    assert got[stable_again]["speedup_q10"] == round(values[stable_again] * 1024)


def test_predictions_are_held_to_the_range_the_kernel_takes(host_bin: Path, tmp_path: Path) -> None:
    # CPI 10 on big: 3 - 10 < 0; many memory accesses: far above 8
    records = replay(
        host_bin,
        tmp_path,
        "count 1 big 1000000 10000000 0\nperiod\ncount 2 big 1000000 0 9000000\nperiod\n",
    )
    low, high = estimates(records)
    assert low["per_type"] == [0.25, None] and low["speedup_q10"] == 256
    assert high["per_type"] == [8.0, None] and high["speedup_q10"] == 8192


@pytest.mark.parametrize(
    "model",
    [
        "x CPU_CYCLES=1",
        "1.0 INST_RETIRED=1",
        "1.0 NO_SUCH=1",
        "1.0 CPU_CYCLES=1 CPU_CYCLES=2",
        "1.0 CPU_CYCLES",
        "1.0 "
        + " ".join(
            f"{e}=1"
            for e in (
                "CPU_CYCLES",
                "LD_RETIRED",
                "ST_RETIRED",
                "MEM_ACCESS",
                "BR_RETIRED",
                "BR_PRED",
            )
        ),
    ],
)
def test_a_model_it_cannot_read_is_refused_saying_which_word(
    host_bin: Path, tmp_path: Path, model: str
) -> None:
    (tmp_path / "counts.txt").write_text("period\n")
    result = subprocess.run(
        [str(host_bin / "ampkit-online"), "-B", model, "-r", str(tmp_path / "counts.txt")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert "a model" in result.stderr


# --- the runner and the daemon ------------------------------------------------


def online_desc(host_bin: Path, apps: str, period_us: int = 2000) -> str:
    return (
        "ampkit-run 1\nrun_id host-online\npolicy cfs\nrepetition 0\ntimeout_s 30\n"
        f"method once\nonline {period_us} 1000\n"
        f"online_model big {BIG}\nonline_model little {LITTLE}\n" + apps
    )


def run_runner(runner: Path, tmp_path: Path, desc: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "run.desc"
    path.write_text(desc)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [str(runner), "-d", str(path), "-T", str(work)], capture_output=True, text=True, timeout=60
    )


def test_the_runner_runs_the_daemon_over_the_run_and_returns_its_log(
    host_bin: Path, tmp_path: Path
) -> None:
    # this machine's PMU is not an arm64 one: every thread keeps its hint, said;
    # both apps live for many periods of 2 ms, so that the daemon finds them
    apps = f"app probe 0 1 1946 {host_bin}/ampkit-probe sleep 0.3\n"
    apps += f"app probe 1 1 0 {host_bin}/ampkit-probe sleep 0.2\n"
    result = run_runner(host_bin / "ampkit-init", tmp_path, online_desc(host_bin, apps))
    assert result.returncode == 0, result.stdout + result.stderr
    report = parse_console(result.stdout)
    assert report.complete and not report.problems(), report.problems()
    threads = [r for r in report.online if r["what"] == "thread"]
    # both instances were announced and their threads found while they ran
    assert {r["app"] for r in threads} == {0, 1}
    assert all("keeps its hint" in r["counters"] for r in threads)
    summary = online.summary_of(report.online)
    assert summary is not None
    assert summary["threads_without_counters"] == summary["threads"] == len(threads)
    assert summary["periods"] >= 1 and summary["period_us"] == 2000
    assert summary["models"]["little"] == {"intercept": 1.5, "events": {"CPU_CYCLES": 0.5}}
    assert summary["cpu_ns"] > 0
    # the records come before the results block, which stays the apps'
    assert [(a["app"], a["status"]) for a in report.apps] == [("probe", "ok"), ("probe", "ok")]


def test_a_thread_on_cpus_of_a_type_without_a_model_keeps_its_hint_and_says_why(
    host_bin: Path, tmp_path: Path
) -> None:
    # this machine's CPUs are all of one capacity, so all "big"; the run
    # has a model for little CPUs only: nothing of a thread's to count
    desc = online_desc(host_bin, f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 0.3\n")
    desc = "".join(line for line in desc.splitlines(True) if "online_model big" not in line)
    result = run_runner(host_bin / "ampkit-init", tmp_path, desc)
    assert result.returncode == 0, result.stdout + result.stderr
    report = parse_console(result.stdout)
    threads = [r for r in report.online if r["what"] == "thread"]
    assert threads and all(
        r["counters"] == "no model for its CPUs' core types: it keeps its hint" for r in threads
    ), threads
    summary = online.summary_of(report.online)
    assert summary is not None and summary["threads_without_counters"] == len(threads)


def test_a_daemon_that_cannot_start_fails_the_run_with_its_reason(
    host_bin: Path, tmp_path: Path
) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(host_bin / "ampkit-init", alone / "ampkit-init")  # no ampkit-online beside it
    result = run_runner(
        alone / "ampkit-init", tmp_path, online_desc(host_bin, "app t 0 1 0 /bin/true\n")
    )
    assert result.returncode == 1
    report = parse_console(result.stdout)
    (error,) = report.runner_errors
    assert error.startswith("the online speedup daemon did not start: exit status 127")
    assert "cannot execute" in error
    assert not report.saw_begin


def test_a_daemon_that_never_says_it_is_ready_fails_the_run_in_time(
    host_bin: Path, tmp_path: Path
) -> None:
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    shutil.copy(host_bin / "ampkit-init", stuck / "ampkit-init")
    # a daemon that holds its ready pipe open and writes nothing
    daemon = stuck / "ampkit-online"
    daemon.write_text("#!/bin/sh\nexec sleep 120\n")
    daemon.chmod(0o755)
    begun = time.monotonic()
    result = run_runner(
        stuck / "ampkit-init", tmp_path, online_desc(host_bin, "app t 0 1 0 /bin/true\n")
    )
    assert time.monotonic() - begun < 60
    assert result.returncode == 1
    report = parse_console(result.stdout)
    (error,) = report.runner_errors
    assert error.startswith(
        "the online speedup daemon did not say it was ready in 10 s of guest time: "
        "killed by signal 9"
    ), error
    assert not report.saw_begin


def _child_of(runner: int, comm: str, deadline: float) -> int:
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
            if name == comm and int(rest.split()[1]) == runner:
                return int(entry.name)
        time.sleep(0.05)
    raise AssertionError(f"the runner started no {comm}")


def test_a_daemon_that_dies_during_the_run_fails_it_at_once(host_bin: Path, tmp_path: Path) -> None:
    # the app runs 30 s: only the daemon's end can end the run sooner
    path = tmp_path / "run.desc"
    path.write_text(online_desc(host_bin, f"app probe 0 1 0 {host_bin}/ampkit-probe sleep 30\n"))
    (tmp_path / "work").mkdir()
    begun = time.monotonic()
    runner = subprocess.Popen(
        [str(host_bin / "ampkit-init"), "-d", str(path), "-T", str(tmp_path / "work")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        daemon = _child_of(runner.pid, "ampkit-online", time.monotonic() + 20)
        # the premise: the run is under way, past the daemon's ready byte
        # (the application starts after it), however slowly a busy machine
        # got there
        _child_of(runner.pid, "ampkit-probe", time.monotonic() + 20)
        os.kill(daemon, signal.SIGSEGV)
        out, _ = runner.communicate(timeout=25)
    finally:
        runner.kill()
    assert time.monotonic() - begun < 25
    assert runner.returncode == 1
    (error,) = parse_console(out).runner_errors
    assert error.startswith("the online speedup daemon ended during the run: killed by signal 11")


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ("online 2000 1000\n", "online and online_model go together"),
        (f"online_model big {BIG}\n", "online and online_model go together"),
        (f"online 50 1000\nonline_model big {BIG}\n", "a period of 100 to 10000000 us"),
        ("online 2000 1000\nonline_model huge 1.0\n", "big or little"),
        (f"online 2000 1000\nonline_model big {BIG}\nonline_model big {BIG}\n", "each once"),
        ("online 2000 1000\nonline_model big 1.0 INST_RETIRED=2\n", "not: INST_RETIRED=2"),
    ],
)
def test_bad_online_lines_are_refused_before_anything_runs(
    host_bin: Path, tmp_path: Path, lines: str, said: str
) -> None:
    desc = "ampkit-run 1\nrun_id x\npolicy cfs\nrepetition 0\n" + lines + "app t 0 1 0 /bin/true\n"
    result = run_runner(host_bin / "ampkit-init", tmp_path, desc)
    assert result.returncode == 1
    (error,) = parse_console(result.stdout).runner_errors
    assert said in error


# --- the host side ------------------------------------------------------------


def _model(core: str, path: Path | None = None) -> Model:
    return Model(
        target="speedup",
        core=core,
        engine="gem5",
        events=("CPU_CYCLES/INST_RETIRED", "MEM_ACCESS/INST_RETIRED"),
        intercept=3.0,
        coefficients=(-1.0, 0.1),
        provenance=(("model_sha256", "m" * 64), ("programs", "a b c")),
        source=path,
    )


def test_the_description_lines_are_what_the_runner_takes(host_bin: Path, tmp_path: Path) -> None:
    spec = online.OnlineSpeedups(models=(_model("big"), _model("little")), period_us=2500)
    lines = spec.lines()
    assert lines == [
        "online 2500 100000",
        "online_model big 3.0 CPU_CYCLES=-1.0 MEM_ACCESS=0.1",
        "online_model little 3.0 CPU_CYCLES=-1.0 MEM_ACCESS=0.1",
    ]
    desc = (
        "ampkit-run 1\nrun_id x\npolicy cfs\nrepetition 0\nmethod once\n"
        + "\n".join(lines)
        + "\napp t 0 1 0 /bin/true\n"
    )
    result = run_runner(host_bin / "ampkit-init", tmp_path, desc)
    assert result.returncode == 0, result.stdout
    summary = online.summary_of(parse_console(result.stdout).online)
    assert summary is not None and summary["period_us"] == 2500
    assert summary["models"]["big"]["events"] == {"CPU_CYCLES": -1.0, "MEM_ACCESS": 0.1}


def test_the_period_follows_the_time_scale_unless_given() -> None:
    # WASH's 40 ms quantum, at the time scale
    assert online.period_us(1) == 40_000
    assert online.period_us(4) == 10_000
    assert online.period_us(4, 1.0) == 1_000
    with pytest.raises(AmpkitError, match="100 to 10000000"):
        online.period_us(1, 0.05)


def _write(directory: Path, core: str, engine: str, machine: str) -> None:
    directory.mkdir(exist_ok=True)
    (directory / online.MODEL_FILES[core]).write_text(
        'kind = "ampkit-speedup-model"\nversion = 1\ntarget = "speedup"\n'
        f'core = "{core}"\nengine = "{engine}"\n'
        'events = ["CPU_CYCLES/INST_RETIRED"]\nintercept = 2.0\ncoefficients = [0.5]\n'
        f'[provenance]\nmodel_sha256 = "{machine}"\nprograms = "a b c"\n'
    )


def test_a_model_of_another_engine_or_machine_is_refused_where_it_would_mean_something(
    tmp_path: Path,
) -> None:
    for core in ("big", "little"):
        _write(tmp_path / "m", core, "gem5", "a" * 64)
    with pytest.raises(AmpkitError, match=r"another setup: machine a+, not b+"):
        online.load_online(
            tmp_path / "m", engine="gem5", meaningful=True, machine="b" * 64, period=2500
        )
    with pytest.raises(AmpkitError, match="engine gem5, not other"):
        online.load_online(
            tmp_path / "m", engine="other", meaningful=True, machine="a" * 64, period=2500
        )
    # on QEMU any model drives the pipeline, and the run says its estimates mean nothing
    spec = online.load_online(
        tmp_path / "m", engine="qemu", meaningful=False, machine=None, period=2500
    )
    entry = spec.describe()
    assert entry["source"] == "online" and "mean nothing" in entry["notice"]
    assert entry["models"]["big"]["file"] == "speedup-big.toml"
    assert len(entry["models"]["little"]["sha256"]) == 64
    with pytest.raises(AmpkitError, match="does not exist"):
        online.load_online(
            tmp_path / "none", engine="qemu", meaningful=False, machine=None, period=2500
        )


# --- policies fed online: ampkit run and campaign specs --------------------------


def write_spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def test_a_policy_fed_online_is_its_kernel_policy_labelled_apart() -> None:
    assert policies.kernel_policy("colab+online") == "colab"
    assert policies.uses_online("wash+online") and not policies.uses_online("colab")
    assert policies.check_policy("colab+online") == "colab+online"
    # the baseline reads no speedup: fed online, it observes the model
    assert policies.kernel_policy(policies.check_policy("cfs+online")) == "cfs"
    with pytest.raises(AmpkitError, match="unknown policy 'fifo\\+online'"):
        policies.check_policy("fifo+online")


def _models(tmp_path: Path) -> Path:
    for core in ("big", "little"):
        _write(tmp_path / "model", core, "qemu", "a" * 64)
    return tmp_path / "model"


def test_a_campaign_runs_policies_fed_online_with_its_model_and_the_others_with_hints(
    tmp_path: Path,
) -> None:
    _models(tmp_path)
    spec = load_spec(
        write_spec(
            tmp_path,
            """
            name = "o"
            platforms = ["2B2L"]
            policies = ["cfs", "colab", "colab+online"]
            mixes = ["sync2-contend-compute"]
            speedup_model = "model"
            append = "sched_timescale=4"
            """,
        )
    )
    matrix = {r.request.policy: r for r in expand(spec) if r.role == MATRIX}
    assert sorted(matrix) == ["cfs", "colab", "colab+online"]
    fed = matrix["colab+online"].request
    assert fed.online is not None and fed.online.period_us == 10_000
    assert matrix["colab"].request.online is None and matrix["cfs"].request.online is None
    assert fed.run_id == "2B2L-colab+online-sync2-contend-compute-r0"
    # the kernel runs colab; the description carries the model; the keys differ
    dtbs = {"2B2L": b"2B2L"}
    prepared = prepare(fed, ENGINE, "k" * 64, "i" * 64, dtb_cache=dtbs)
    plain = prepare(matrix["colab"].request, ENGINE, "k" * 64, "i" * 64, dtb_cache=dtbs)
    assert "\npolicy colab\n" in prepared.desc and "\nonline 10000 100000\n" in prepared.desc
    assert "online" not in plain.desc
    assert prepared.key != plain.key


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('policies = ["colab+online"]\n', "no speedup_model says which"),
        ('policies = ["colab"]\nspeedup_model = "model"\n', "no policy takes it"),
        ('policies = ["colab+online"]\nspeedup_model = "nowhere"\n', "which is not a folder"),
    ],
)
def test_a_spec_says_what_its_online_policies_lack(tmp_path: Path, body: str, said: str) -> None:
    _models(tmp_path)
    path = write_spec(
        tmp_path, 'name = "o"\nplatforms = ["2B2L"]\nmixes = ["sync2-contend-compute"]\n' + body
    )
    with pytest.raises(AmpkitError, match=said):
        load_spec(path)


def test_a_request_and_its_policy_must_agree_on_the_model(tmp_path: Path) -> None:
    mix = load_mix("demo")
    spec = online.load_online(
        _models(tmp_path), engine="qemu", meaningful=False, machine=None, period=10_000
    )
    for policy, model, said in (
        ("colab+online", None, "needs the online speedup model"),
        ("colab", spec, "takes the hints alone"),
    ):
        request = RunRequest(platform=get_platform("2B2L"), policy=policy, mix=mix, online=model)
        with pytest.raises(UsageError, match=said):
            prepare(request, ENGINE, "k" * 64, "i" * 64, dtb_cache={"2B2L": b"2B2L"})


def test_the_cli_pairs_the_policy_and_the_model(tmp_path: Path) -> None:
    for args, said in (
        (["--policy", "colab+online"], "is fed by the online speedup model"),
        (["--policy", "colab", "--speedup-model", str(_models(tmp_path))], "run --policy colab+"),
        (["--online-period-ms", "5"], "needs --speedup-model"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "ampkit", "run", "--mix", "demo", "--no-build", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode != 0
        assert said in result.stderr, result.stderr


# --- the estimates, tabulated ----------------------------------------------------


def test_estimates_tabulate_and_weigh_by_instructions(tmp_path: Path) -> None:
    # both regions from 2 to 6 ms on the runner's clock; the process from 1 to 11
    region = (2_000_000, 6_000_000)
    apps = [SynthApp(p, 1, 10_000_000, roi_ns=region) for p in ("compute", "stream")]
    run = write_run(tmp_path, platform="2B2L", policy="colab+online", mix="m", apps=apps)
    plain = write_run(tmp_path, platform="2B2L", policy="colab", mix="m", apps=apps)

    def estimate(app: int, big: int, little: int, value: float, span: tuple[int, int]) -> str:
        return json.dumps(
            {
                "type": "online",
                "what": "estimate",
                "from_ns": span[0],
                "t_ns": span[1],
                "tid": 10 + app,
                "app": app,
                "instructions": [big, little],
                "per_type": [value if big else None, value if little else None],
                "estimate": value,
                "average": value,
                "stable": False,
                "speedup_q10": round(value * 1024),
                "written": True,
            }
        )

    lines = [
        json.dumps({"type": "online", "what": "thread", "tid": 10, "app": 0, "counters": "open"}),
        estimate(0, 3_000_000, 0, 3.0, (2_000_000, 3_000_000)),
        estimate(0, 0, 1_000_000, 2.0, (3_000_000, 4_000_000)),
        estimate(1, 500_000, 0, 2.5, (2_500_000, 3_500_000)),
        # the self-check after the region: other code, not the measured speedup's
        estimate(0, 0, 9_000_000, 0.25, (5_800_000, 6_800_000)),
        # a main thread's counts held back over its join, then its replay:
        # the span covers most of the region, the instructions come after it
        estimate(1, 8_000_000, 0, 3.1, (2_600_000, 6_400_000)),
    ]
    (run / "online.jsonl").write_text("\n".join(lines) + "\n")
    frame = online_analysis.estimates([run, plain])  # a run without the model adds nothing
    assert list(frame["app"]) == ["compute", "compute", "stream", "compute", "stream"]
    assert frame["in_region"].tolist() == [True, True, True, False, False]
    assert frame["predicted_big"].isna().tolist() == [False, True, False, True, False]
    assert frame["used"].tolist()[:4] == [3.0, 2.0, pytest.approx(2.5, abs=1e-3), 0.25]
    table = online_analysis.accuracy(frame, {"compute": 2.5})
    compute = table[table["app"] == "compute"].iloc[0]
    assert compute["periods"] == 2
    assert compute["estimate"] == pytest.approx((3.0 * 3 + 2.0 * 1) / 4)
    assert compute["error"] == pytest.approx(((11 / 4) - 2.5) / 2.5)
    assert table[table["app"] == "stream"][["measured", "error"]].isna().all(axis=None)
    assert set(frame["run_id"]) == {"2B2L-colab+online-m-r0"}


# --- one machine under two hashes ----------------------------------------------


def test_machine_models_listed_together_are_one_machine(tmp_path: Path) -> None:
    path = tmp_path / "machine-models.toml"
    path.write_text(
        f'[[same]]\nmodels = ["{"a" * 64}", "{"b" * 64}"]\nevidence = "config.ini alike"\n'
    )
    assert calibration.same_machine("a" * 64, "b" * 64, path)
    assert calibration.same_machine("b" * 64, "a" * 64, path)
    assert calibration.same_machine("c" * 64, "c" * 64, path)
    assert not calibration.same_machine("a" * 64, "c" * 64, path)
    path.write_text(f'[[same]]\nmodels = ["{"a" * 64}"]\n')
    with pytest.raises(AmpkitError, match="evidence"):
        calibration.same_machine("a" * 64, "b" * 64, path)


def test_a_model_is_taken_on_a_machine_listed_as_its_own(tmp_path: Path) -> None:
    # configs/machine-models.toml: two configurations whose scripts differ
    # by slice control only build one machine; a model trained on either
    # is taken on the other, and on no third
    shipped = Path(__file__).parents[2] / "evaluations" / "gem5-2B2L" / "calibration" / "model"
    first, second = tomllib.loads(
        (Path(__file__).parents[2] / "configs" / "machine-models.toml").read_text()
    )["same"][0]["models"]
    for path in shipped.glob("*-*.toml"):
        text = path.read_text()
        (tmp_path / path.name).write_text(text.replace(calibration.model_sha256(), first))
    spec = online.load_online(tmp_path, engine="gem5", meaningful=True, machine=second, period=2500)
    assert {m.machine for m in spec.models} == {first}
    with pytest.raises(AmpkitError, match="another setup: machine"):
        online.load_online(tmp_path, engine="gem5", meaningful=True, machine="f" * 64, period=2500)


def test_a_spec_may_set_the_daemons_period(tmp_path: Path) -> None:
    _models(tmp_path)
    body = (
        'name = "o"\nplatforms = ["2B2L"]\nmixes = ["sync2-contend-compute"]\n'
        'policies = ["cfs+online"]\nspeedup_model = "model"\nonline_period_ms = 2\n'
    )
    spec = load_spec(write_spec(tmp_path, body))
    (run,) = [r for r in expand(spec) if r.role == MATRIX]
    assert run.request.online is not None and run.request.online.period_us == 2000
    lone = body.replace('speedup_model = "model"\n', "").replace('"cfs+online"', '"cfs"')
    with pytest.raises(AmpkitError, match="needs speedup_model"):
        load_spec(write_spec(tmp_path, lone))


# --- what a review found -------------------------------------------------------


def test_a_five_event_model_replays_and_a_long_line_is_refused(
    host_bin: Path, tmp_path: Path
) -> None:
    model = "1.0 CPU_CYCLES=0.1 LD_RETIRED=0.2 ST_RETIRED=0.3 BR_RETIRED=0.4 BR_MIS_PRED=0.5"
    counts = tmp_path / "counts.txt"
    counts.write_text("count 3 big 1000000 1000000 1000000 1000000 1000000 1000000\nperiod\n")
    args = [str(host_bin / "ampkit-online"), "-B", model, "-r", str(counts)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    (only,) = [json.loads(x) for x in result.stdout.splitlines() if '"estimate"' in x]
    assert only["estimate"] == pytest.approx(1.0 + 0.1 + 0.2 + 0.3 + 0.4 + 0.5)
    counts.write_text("count 3 big 1 1 1 1 1 1 1\nperiod\n")
    result = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "more words" in result.stderr


def test_a_run_cannot_profile_and_feed_the_model_at_once(host_bin: Path, tmp_path: Path) -> None:
    desc = (
        "ampkit-run 1\nrun_id x\npolicy cfs\nrepetition 0\npmu INST_RETIRED,CPU_CYCLES\n"
        f"online 2000 1000\nonline_model big {BIG}\napp t 0 1 0 /bin/true\n"
    )
    (error,) = parse_console(
        run_runner(host_bin / "ampkit-init", tmp_path, desc).stdout
    ).runner_errors
    assert "pmu and online cannot count at once" in error
    spec = online.load_online(
        _models(tmp_path), engine="qemu", meaningful=False, machine=None, period=10_000
    )
    request = RunRequest(
        platform=get_platform("2B2L"),
        policy="colab+online",
        mix=load_mix("demo"),
        online=spec,
        pmu_events=("INST_RETIRED", "CPU_CYCLES"),
    )
    with pytest.raises(UsageError, match="at once"):
        prepare(request, ENGINE, "k" * 64, "i" * 64, dtb_cache={"2B2L": b"2B2L"})


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("coefficients = [nan]", "finite numbers"),
        ("coefficients = [5e-324]", "finite numbers"),
        (
            'events = ["CPU_CYCLES/INST_RETIRED", "CPU_CYCLES/INST_RETIRED"]\n'
            "coefficients = [0.5, 0.5]",
            "names an event twice",
        ),
    ],
)
def test_a_model_the_guest_would_refuse_is_refused_on_the_host(
    tmp_path: Path, change: str, said: str
) -> None:
    _write(tmp_path / "m", "big", "qemu", "a" * 64)
    path = tmp_path / "m" / online.MODEL_FILES["big"]
    text = path.read_text().replace("coefficients = [0.5]", "")
    if change.startswith("events"):
        text = text.replace('events = ["CPU_CYCLES/INST_RETIRED"]\n', "")
    path.write_text(text.replace("[provenance]", change + "\n[provenance]"))
    with pytest.raises(AmpkitError, match=said):
        load_model(path)


def test_a_run_fed_by_a_model_that_made_no_estimate_is_not_counted(tmp_path: Path) -> None:
    spec = online.load_online(
        _models(tmp_path), engine="qemu", meaningful=True, machine=None, period=10_000
    )
    quiet = {"estimates": 0, "write_errors": 0, "threads": 3, "threads_without_counters": 3}
    assert online.problems(None, spec) == ["the online speedup daemon wrote no summary"]
    (why,) = online.problems(quiet, spec)
    assert "made no estimate" in why and "without counters 3" in why
    assert online.problems({**quiet, "estimates": 5, "write_errors": 2}, spec) == [
        "the online speedup daemon failed 2 write(s) to the kernel"
    ]
    # where the estimates mean nothing (QEMU), none is no failure
    assert online.problems(quiet, replace(spec, meaningful=False)) == []
