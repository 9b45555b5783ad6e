"""Bad input gets an error that says what was wrong and what is valid, before any work."""

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
        (["platform", "dtb", "0B2L"], "at least one big"),
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
