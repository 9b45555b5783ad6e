"""Bad input gets an error that says what was wrong and what is valid, before any work."""

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ampkit import build as build_mod
from ampkit import cli, hostdeps, kernel, paths, platform
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.cli import calibration_notice, cmd_images_build, cmd_kernel_build, main, parser
from ampkit.console import ConsoleReport
from ampkit.errors import (
    EXIT_BUILD,
    EXIT_ENVIRONMENT,
    EXIT_FAILED_RUN,
    EXIT_INPUT,
    EXIT_USAGE,
    BuildFailed,
    MissingDependency,
)
from ampkit.platform import get_platform
from ampkit.run import RunOutcome, RunRequest
from ampkit.rundir import RunDir


@pytest.mark.parametrize(
    ("args", "expected", "code"),
    [
        (["run", "--platform", "3X"], "unknown platform '3X'", EXIT_INPUT),
        (["run", "--policy", "fifo"], "unknown policy 'fifo'", EXIT_INPUT),
        (["run", "--mix", "nope"], "no mix 'nope'", EXIT_INPUT),
        (["run", "--big", "2"], "--big and --little go together", EXIT_USAGE),
        (["run", "--big", "12", "--little", "12"], "at most 16", EXIT_INPUT),
        (["platform", "dtb", "0B0L"], "at least one CPU", EXIT_INPUT),
        (["run", "--references", "alone,slow"], "unknown reference kind(s): slow", EXIT_INPUT),
        (
            ["run", "--speedups", "/no/such/profile.toml"],
            "cannot read the speedup profile",
            EXIT_INPUT,
        ),
        (["mix", "check", "nope"], "no mix 'nope'", EXIT_INPUT),
        (
            ["mix", "generate", "--category", "compute", "--apps", "0", "--seed", "1"],
            "1 to 16",
            EXIT_INPUT,
        ),
        (["profile", "--cpus", "0"], "--cpus and --repetitions must be at least 1", EXIT_USAGE),
        (["profile", "--scale", "2"], "--scale must be above 0 and at most 1, not 2", EXIT_USAGE),
        (["run", "--warmup-ms", "-1"], "a warm-up of -1 ms", EXIT_USAGE),
    ],
)
def test_bad_input_is_a_clear_error(
    args: list[str], expected: str, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == code
    err = capsys.readouterr().err
    assert err.startswith("ampkit: error: ") and expected in err


def test_the_exit_codes_are_distinct() -> None:
    codes = [EXIT_FAILED_RUN, EXIT_USAGE, EXIT_INPUT, EXIT_ENVIRONMENT, EXIT_BUILD]
    assert len(set(codes)) == len(codes) and 0 not in codes
    assert MissingDependency("x").exit_code == EXIT_ENVIRONMENT
    assert BuildFailed("x").exit_code == EXIT_BUILD


def test_help_works_with_a_broken_platforms_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "platforms.toml"
    broken.write_text("[core.big]\nmodel = 1\n")
    monkeypatch.setattr(platform, "PLATFORMS_FILE", broken)
    for args in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 0
        assert "usage: ampkit" in capsys.readouterr().out
    # what needs the file says what is wrong in it, where
    assert main(["platform", "list"]) == EXIT_INPUT
    assert f"{broken}:2: 'core.big.model' must be a string" in capsys.readouterr().err


def test_a_missing_dpkg_query_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without dpkg-query
    with pytest.raises(MissingDependency) as e:
        kernel.debian_version()
    assert "the program 'dpkg-query' is missing (Debian package dpkg)" in e.value.what


def test_a_package_that_is_not_installed_is_named() -> None:
    with pytest.raises(MissingDependency) as e:
        kernel.debian_version("ampkit-no-such-package")
    assert e.value.what == "the Debian package ampkit-no-such-package is not installed"


def test_policy_error_lists_the_valid_policies(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "--policy", "fifo"])
    assert "valid: cfs" in capsys.readouterr().err


def test_platform_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform", "list"]) == 0
    out = capsys.readouterr().out
    caps = ",".join(str(c.capacity) for c in get_platform("2B2L").cpus)
    assert "2B2L" in out and f"capacities {caps}" in out


def test_mix_generate_writes_a_mix_that_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "g.toml"
    args = ["mix", "generate", "--category", "synchronisation", "--apps", "4", "--seed", "5"]
    assert main([*args, "-o", str(path)]) == 0
    first = path.read_text()
    assert first.startswith("# ampkit mix generate --category synchronisation")
    assert main(args) == 0
    assert capsys.readouterr().out == first  # the same seed, the same mix
    assert main(["mix", "check", str(path)]) == 0
    assert "ok (synchronisation, 4 applications)" in capsys.readouterr().out


def test_mix_list_shows_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mix", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 28  # 26 in the catalogue, the demo and the pipeline pair
    assert any(line.startswith("sync4-") and "synchronisation" in line for line in lines)


def _parsers(p: argparse.ArgumentParser, path: str = "ampkit") -> list[tuple[str, Any]]:
    """Every (sub)command's parser, by its command path."""
    out = [(path, p)]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _parsers(sub, f"{path} {name}")
    return out


def test_flags_mean_one_thing_everywhere() -> None:
    options: dict[str, set[str]] = {}
    takes_value: dict[str, set[bool]] = {}
    for path, p in _parsers(parser()):
        for action in p._actions:
            if action.help == argparse.SUPPRESS:
                continue  # a hidden alias
            for flag in action.option_strings:
                options.setdefault(flag, set()).add(f"{path}: {action.help}")
                takes_value.setdefault(flag, set()).add(action.nargs != 0)
    # one spelling of output, and of the two time limits
    for gone in ("--output", "--timeout", "--kernel-jobs", "--make", "--debug"):
        assert gone not in options, options.get(gone)
    assert {"--out", "--mix-limit", "--wall-limit", "--make-jobs"} <= set(options)
    # --jobs is runs at once wherever it appears; make's parallelism is --make-jobs
    assert all("runs at once" in h for h in options["--jobs"]), options["--jobs"]
    assert all("make -j" in h for h in options["--make-jobs"]), options["--make-jobs"]
    # a flag takes a value everywhere or nowhere: --runs is where runs go
    for flag, kinds in takes_value.items():
        assert len(kinds) == 1, (flag, options[flag])
    assert all("where the runs go" in h for h in options["--runs"]), options["--runs"]
    # the debug kernel has one spelling, wherever a kernel variant is chosen
    debug = {h.partition(":")[0] for h in options["--debug-kernel"]}
    assert debug == {"ampkit kernel build", "ampkit kernel info", "ampkit run", "ampkit shell"}


def test_campaign_commands_take_a_spec_or_a_directory_and_exec_is_hidden(
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands = dict(_parsers(parser()))
    for action in ("plan", "run", "status", "rerun"):
        positionals = [
            a.metavar
            for a in commands[f"ampkit campaign {action}"]._actions
            if not a.option_strings
        ]
        assert positionals == ["CAMPAIGN"], (action, positionals)
    with pytest.raises(SystemExit):
        main(["campaign", "--help"])
    listed = capsys.readouterr().out
    assert "status" in listed and "exec" not in listed


def test_a_misspelt_campaign_action_is_not_offered_the_internal_exec(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["campaign", "bogus"])
    assert e.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "invalid choice: 'bogus'" in err and "'plan'" in err and "'status'" in err
    assert "exec" not in err
    # it still runs, for the executors that start it
    args = parser().parse_args(["campaign", "exec", "camp", "run-1"])
    assert (args.campaign_command, args.dir, args.run_id) == ("exec", "camp", "run-1")


def test_the_old_build_aliases_work_but_are_not_offered(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """'ampkit build' is the one way to build: 'kernel build' and 'images
    build' are kept for old scripts, listed by no --help nor error."""
    for args, func in (
        (["kernel", "build", "--debug-kernel"], cmd_kernel_build),
        (["images", "build"], cmd_images_build),
    ):
        assert parser().parse_args(args).func is func
    listings = {}
    for args in (["--help"], ["kernel", "--help"], ["images", "--help"]):
        with pytest.raises(SystemExit):
            main(args)
        listings[args[0]] = capsys.readouterr().out

    def offered(listing: str) -> set[str]:
        return set(re.findall(r"^    (\w+) ", listing, re.MULTILINE))

    assert {"build", "kernel"} <= offered(listings["--help"])
    assert "images" not in offered(listings["--help"])
    assert offered(listings["kernel"]) == {"info", "check"}
    assert offered(listings["images"]) == set()
    with pytest.raises(SystemExit):
        main(["bogus"])
    assert "'images'" not in capsys.readouterr().err


def test_a_run_that_finishes_failed_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """EXIT_FAILED_RUN. What boots the guest is an engine, which a unit test
    has not: execute() is replaced by one that leaves what a failed run
    leaves, and the rest of 'ampkit run' is the real one."""

    def failed_run(request: RunRequest, out: Path, *_: object, **__: object) -> RunOutcome:
        made = write_run(
            out.parent,
            platform=request.platform.name,
            policy=request.policy,
            mix=request.mix.name,
            apps=[SynthApp("x", 1, 10**7)],
            status="failed: x#0 crashed (exit status 1)",
        )
        return RunOutcome(made, RunDir(made).status(), ConsoleReport())

    monkeypatch.setattr(cli, "_artifacts", lambda *_: (None, tmp_path / "initramfs"))
    monkeypatch.setattr(cli, "execute", failed_run)
    assert main(["run", "--no-build", "--out", str(tmp_path / "run")]) == EXIT_FAILED_RUN
    assert "failed: x#0 crashed" in capsys.readouterr().out


def test_campaign_status_reads_a_spec_or_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "c.toml"
    spec.write_text('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n')
    assert main(["campaign", "plan", str(spec), "--dir", str(tmp_path / "camp")]) == 0
    plan = capsys.readouterr().out
    assert "campaign t (" in plan and "5 to run" in plan
    assert "colab classes" not in plan  # no colab in this campaign
    spec.write_text(spec.read_text().replace('["cfs"]', '["cfs", "colab"]'))
    assert main(["campaign", "plan", str(spec), "--dir", str(tmp_path / "camp")]) == 0
    plan = capsys.readouterr().out
    assert "colab classes (big from 2.000, little up to 1.500: the kernel's defaults)" in plan
    # a spec whose directory does not exist yet: status says so, by file
    code = main(["campaign", "status", str(spec), "--dir", str(tmp_path / "camp")])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and str(tmp_path / "camp") in err
    # a directory with --dir is a usage error
    tmp_dir = tmp_path / "d"
    tmp_dir.mkdir()
    assert main(["campaign", "status", str(tmp_dir), "--dir", "x"]) == EXIT_USAGE


def test_a_spec_in_another_checkout_is_refused_and_this_ones_are_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a worktree set aside for a campaign, run with another checkout's ampkit:
    # its runs would be built from the wrong kernel series and workloads
    other = tmp_path / "ampkit-campaign"
    (other / "kernel-patches").mkdir(parents=True)
    (other / "SConstruct").write_text("")
    spec = other / "evaluations" / "e" / "spec.toml"
    spec.parent.mkdir(parents=True)
    spec.write_text('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n')
    for command in ("plan", "run", "status"):
        assert main(["campaign", command, str(spec), "--dir", str(tmp_path / "c")]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert f"in the ampkit checkout {other}" in err and f"PYTHONPATH={other}" in err
    assert paths.checkout_holding(spec) == other
    # a spec of this checkout, and one in no checkout, are read
    assert paths.checkout_holding(paths.REPO_ROOT / "evaluations" / "x.toml") == paths.REPO_ROOT
    assert paths.checkout_holding(tmp_path / "c.toml") is None


def test_campaign_plan_lists_every_run_with_list_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "c.toml"
    spec.write_text('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n')
    args = ["campaign", "plan", str(spec), "--dir", str(tmp_path / "camp")]
    assert main([*args, "--list-runs"]) == 0
    listed = capsys.readouterr().out
    assert "2B2L-cfs-demo-r0" in listed and "todo" in listed
    # --runs is a directory wherever it appears, so plan has none
    with pytest.raises(SystemExit) as e:
        main([*args, "--runs"])
    assert e.value.code == EXIT_USAGE


def test_the_hidden_debug_alias_picks_the_debug_kernel() -> None:
    for command in ("build", "info"):
        assert parser().parse_args(["kernel", command, "--debug"]).debug_kernel
        assert parser().parse_args(["kernel", command, "--debug-kernel"]).debug_kernel
    assert main(["kernel", "info", "--debug-kernel", "--unpatched"]) == EXIT_USAGE


def test_doctor_exits_4_when_the_host_lacks_something(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(hostdeps, "FILES", {})
    monkeypatch.setattr(hostdeps, "PROGRAMS", {"sh": "dash"})
    assert main(["doctor"]) == 0
    monkeypatch.setattr(hostdeps, "PROGRAMS", {"sh": "dash", "ampkit-no-such-tool": "nopkg"})
    assert main(["doctor"]) == EXIT_ENVIRONMENT
    assert "MISSING  ampkit-no-such-tool" in capsys.readouterr().out
    monkeypatch.setattr(hostdeps, "PROGRAMS", {"sh": "dash"})
    monkeypatch.setattr(hostdeps, "FILES", {"/no/such/ampkit/file": "nopkg"})
    assert main(["doctor"]) == EXIT_ENVIRONMENT


@pytest.mark.parametrize(
    ("step", "code"),
    [
        ({"error": "", "warnings": []}, 0),
        ({"error": "make exited 2", "warnings": []}, EXIT_BUILD),
        ({"error": "", "warnings": ["kernel/sched/fair.c:1: warning: unused"]}, EXIT_BUILD),
    ],
)
def test_kernel_check_exits_5_when_a_patch_fails(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    step: dict[str, Any],
    code: int,
) -> None:
    """A patch that does not build (or warns, CONFIG_WERROR) is a failed build."""
    from ampkit import kernelcheck

    found = kernelcheck.SeriesCheck(tmp_path / "check")
    found.directory.mkdir()
    steps = [{"patch": "0001-x.patch", "config": "kit", "seconds": 1.0, **step}]
    (found.directory / "check.json").write_text(json.dumps({"seconds": 2.0, "steps": steps}))
    monkeypatch.setattr(kernelcheck, "check", lambda: found)
    assert main(["kernel", "check"]) == code
    out = capsys.readouterr().out
    assert "0001-x.patch" in out and str(found.directory) in out


#: What 'ampkit build' builds (SConstruct's aliases).
BUILD_TARGETS = {
    *(build_mod.kernel_target(v) for v in ("default", "debug", "unpatched")),
    build_mod.INITRAMFS,
    build_mod.SHELL_IMAGE,
    "guest",
    "host",
    "selftests",
}


def test_make_and_the_readme_build_with_ampkit_build() -> None:
    commands = dict(_parsers(parser()))
    build_help = next(a.help for a in commands["ampkit build"]._actions if a.dest == "targets")
    assert all(t in build_help for t in BUILD_TARGETS)
    makefile = (paths.REPO_ROOT / "Makefile").read_text()
    calls = re.findall(r"^\t\$\(AMPKIT\) (.*)$", makefile, re.MULTILINE)
    builds = [c.split() for c in calls if c.split()[0] in ("build", "kernel", "images")]
    assert builds, calls
    for words in builds:
        assert words[0] == "build" and set(words[1:]) <= BUILD_TARGETS, words
    # the README builds with 'ampkit build'; its CLI list names each alias once
    readme = (paths.REPO_ROOT / "README.md").read_text()
    assert readme.count("ampkit kernel build") == 1
    assert readme.count("ampkit images build") == 1
    assert not re.search(r"--debug\b(?!-kernel)", readme)
    assert "--runs]" not in readme and "plan CAMPAIGN [--list-runs]" in readme


def test_the_run_description_carries_the_mix_limit() -> None:
    """The kit calls it the mix limit; the guest runner reads it as
    timeout_s (workloads/runner/ampkit-init.c), the one place the old name
    stays, until the runner is changed with it."""
    from dataclasses import fields

    from ampkit.mix import load_mix
    from ampkit.rundesc import RunDescription

    assert "mix_limit_s" in {f.name for f in fields(RunDescription)}
    assert "timeout_s" not in {f.name for f in fields(RunDescription)}
    desc = RunDescription.for_mix("r", "cfs", 0, mix_limit_s=42, mix=load_mix("demo"))
    assert desc.mix_limit_s == 42 and "\ntimeout_s 42\n" in desc.render()


def test_pmu_counting_is_in_the_description_only_when_asked() -> None:
    """Counting costs the counted threads' context switches: a run asks for
    it (the profile's), and a description that does not ask is the one it
    was before counting existed, so that its run key is too."""
    from ampkit.mix import load_mix
    from ampkit.pmu import EVENT_SETS, NAMES, fits
    from ampkit.rundesc import RunDescription

    plain = RunDescription.for_mix("r", "cfs", 0, mix_limit_s=42, mix=load_mix("demo"))
    events = EVENT_SETS[0]
    counted = RunDescription.for_mix("r", "cfs", 0, 42, load_mix("demo"), pmu=events)
    assert "pmu" not in plain.render()
    line = f"\npmu {','.join(events)}\napp "
    assert counted.render() == plain.render().replace("\napp ", line, 1)
    # every set a profile counts is one group the PMU holds, led by INST_RETIRED
    assert all(fits(s) and s[0] == "INST_RETIRED" for s in EVENT_SETS)
    assert sorted({e for s in EVENT_SETS for e in s}) == sorted(NAMES)


def test_a_run_under_a_stale_calibration_says_so(tmp_path: Path) -> None:
    """The manifest records why the calibration in force may not describe
    the machine that ran; 'ampkit run' tells the user at once."""
    run = write_run(tmp_path, platform="2B2L", policy="cfs", mix="m", apps=[SynthApp("x", 1, 9)])
    assert calibration_notice(run) is None
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["platform"]["calibration"] = {"record": {}, "stale": ["another gem5 binary"]}
    (run / "manifest.json").write_text(json.dumps(manifest))
    notice = calibration_notice(run)
    assert notice is not None and "may not describe the machine that ran: another gem5" in notice
