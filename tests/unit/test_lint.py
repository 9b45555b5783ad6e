"""The Python code is formatted, linted and type-checked; the shell scripts parse."""

import subprocess
import sys
from pathlib import Path

from ampkit.paths import REPO_ROOT

BIN = Path(sys.executable).parent


def check(*cmd: str) -> None:
    result = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_lint() -> None:
    check(str(BIN / "ruff"), "check", ".")


def test_ruff_format() -> None:
    check(str(BIN / "ruff"), "format", "--check", ".")


def test_mypy_strict() -> None:
    check(str(BIN / "mypy"))


def test_shell_scripts_parse() -> None:
    for script in ("setup/install.sh", ".ci/run"):
        check("sh", "-n", script)
