from pathlib import Path

import pytest

from ampkit import hostdeps
from ampkit.errors import EXIT_ENVIRONMENT, AmpkitError, MissingDependency


def test_every_package_the_checks_name_is_installed_by_setup() -> None:
    listed = hostdeps.listed_packages()
    named = set(hostdeps.PROGRAMS.values()) | set(hostdeps.FILES.values())
    assert named <= listed, named - listed


def test_missing_program_names_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(AmpkitError) as e:
        hostdeps.require_program("qemu-system-aarch64")
    assert "Debian package qemu-system-arm" in str(e.value)
    assert "make setup" in str(e.value)


def test_missing_file_names_its_package(tmp_path: Path) -> None:
    """The kit's own registry: each file it checks, absent from an empty
    root, is reported with the package setup installs it from."""
    assert hostdeps.FILES  # the premise: there are files to check
    for path, package in hostdeps.FILES.items():
        with pytest.raises(MissingDependency) as e:
            hostdeps.require_file(path, root=tmp_path)
        assert e.value.what == f"the file {tmp_path}{path} is missing (Debian package {package})"
        assert e.value.exit_code == EXIT_ENVIRONMENT


def test_a_file_the_kit_does_not_know_is_missing_without_a_made_up_package(
    tmp_path: Path,
) -> None:
    with pytest.raises(MissingDependency) as e:
        hostdeps.require_file("/opt/nothing", root=tmp_path)
    assert e.value.what == f"the file {tmp_path}/opt/nothing is missing"


def test_a_present_file_is_found_under_its_root(tmp_path: Path) -> None:
    (tmp_path / "usr").mkdir()
    (tmp_path / "usr" / "thing").write_text("x")
    assert hostdeps.require_file("/usr/thing", root=tmp_path) == tmp_path / "usr" / "thing"
