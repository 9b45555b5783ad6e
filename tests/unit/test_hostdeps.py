import pytest

from ampkit import hostdeps
from ampkit.errors import AmpkitError


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


def test_missing_file_names_its_package() -> None:
    with pytest.raises(AmpkitError, match=r"linux-source-6\.1"):
        hostdeps.FILES["/nonexistent/linux.tar.xz"] = "linux-source-6.1"
        try:
            hostdeps.require_file("/nonexistent/linux.tar.xz")
        finally:
            del hostdeps.FILES["/nonexistent/linux.tar.xz"]
