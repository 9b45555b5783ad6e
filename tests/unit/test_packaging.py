"""Packaging: ranges in pyproject.toml, exact versions in the lock, and the
checkout the CLI needs."""

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ampkit import paths
from ampkit.cli import main
from ampkit.errors import EXIT_ENVIRONMENT

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def _lock() -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in (REPO / "setup" / "requirements.lock").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[canonicalize_name(name)] = version
    return pins


def test_dependencies_are_ranges_and_the_lock_pins_versions_inside_them() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += [Requirement(r) for r in extra]
    pins = _lock()
    for req in wanted:
        assert str(req.specifier) and "==" not in str(req.specifier), f"{req} is not a range"
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in setup/requirements.lock"
        assert req.specifier.contains(pins[name]), f"the lock's {name} {pins[name]} is not {req}"


def test_only_the_build_and_the_tables_need_scons_and_pyarrow() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert not core & {"scons", "pyarrow"}
    extras = project["optional-dependencies"]
    assert [Requirement(r).name for r in extras["build"]] == ["scons"]
    assert [Requirement(r).name for r in extras["parquet"]] == ["pyarrow"]


def test_outside_a_checkout_the_cli_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)  # as an installed package sees it
    assert main(["mix", "list"]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert "runs from a checkout of the ampkit repository" in err
    assert str(tmp_path) in err
    # the analysis of run directories works from anywhere
    assert main(["collect", str(tmp_path), "--out", str(tmp_path / "t")]) == 0
