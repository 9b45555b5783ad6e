"""Bad input gets an error that says what was wrong and what is valid, before any work."""

from pathlib import Path

import pytest

from ampkit.cli import main


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--platform", "3X"], "unknown platform '3X'"),
        (["run", "--policy", "fifo"], "unknown policy 'fifo'"),
        (["run", "--mix", "nope"], "no mix 'nope'"),
        (["run", "--big", "2"], "--big and --little go together"),
        (["run", "--big", "12", "--little", "12"], "at most 16"),
        (["platform", "dtb", "0B0L"], "at least one CPU"),
        (["run", "--references", "alone,slow"], "unknown reference kind(s): slow"),
        (["run", "--speedups", "/no/such/profile.toml"], "cannot read the speedup profile"),
        (["mix", "check", "nope"], "no mix 'nope'"),
        (["mix", "generate", "--category", "compute", "--apps", "0", "--seed", "1"], "1 to 16"),
        (["profile", "--cpus", "0"], "--cpus and --repetitions must be at least 1"),
    ],
)
def test_bad_input_is_a_clear_error(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("ampkit: error: ") and expected in err


def test_policy_error_lists_the_valid_policies(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "--policy", "fifo"])
    assert "valid: cfs" in capsys.readouterr().err


def test_platform_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platform", "list"]) == 0
    out = capsys.readouterr().out
    assert "2B2L" in out and "capacities 1024,1024,347,347" in out


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
