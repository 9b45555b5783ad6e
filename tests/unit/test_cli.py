"""Bad input gets an error that says what was wrong and what is valid, before any work."""

import argparse
from pathlib import Path
from typing import Any

import pytest

from ampkit import kernel, platform
from ampkit.cli import main, parser
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
    for path, p in _parsers(parser()):
        for action in p._actions:
            for flag in action.option_strings:
                options.setdefault(flag, set()).add(f"{path}: {action.help}")
    # one spelling of output, and of the two time limits
    for gone in ("--output", "--timeout", "--kernel-jobs", "--make"):
        assert gone not in options, options.get(gone)
    assert {"--out", "--mix-limit", "--wall-limit", "--make-jobs"} <= set(options)
    # --jobs is runs at once wherever it appears; make's parallelism is --make-jobs
    assert all("runs at once" in h for h in options["--jobs"]), options["--jobs"]
    assert all("make -j" in h for h in options["--make-jobs"]), options["--make-jobs"]


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


def test_campaign_status_reads_a_spec_or_its_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "c.toml"
    spec.write_text('name = "t"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\nmixes = ["demo"]\n')
    assert main(["campaign", "plan", str(spec), "--dir", str(tmp_path / "camp")]) == 0
    plan = capsys.readouterr().out
    assert "campaign t (" in plan and "5 to run" in plan
    # a spec whose directory does not exist yet: status says so, by file
    code = main(["campaign", "status", str(spec), "--dir", str(tmp_path / "camp")])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT and str(tmp_path / "camp") in err
    # a directory with --dir is a usage error
    tmp_dir = tmp_path / "d"
    tmp_dir.mkdir()
    assert main(["campaign", "status", str(tmp_dir), "--dir", "x"]) == EXIT_USAGE
