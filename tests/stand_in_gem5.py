"""A stand-in gem5.opt for the unit tier: a script where GEM5_ROOT's
binary would be, with an empty bootloader beside it, and the kit's cache
in the test's own directory."""

from pathlib import Path

import pytest

from ampkit.engines import gem5


def install(tmp_path: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> gem5.Gem5:
    root = tmp_path / "gem5"
    binary, bootloader = root / gem5.BINARY, root / gem5.BOOTLOADER
    binary.parent.mkdir(parents=True)
    bootloader.parent.mkdir(parents=True)
    binary.write_text(script)
    binary.chmod(0o755)
    bootloader.write_bytes(b"")
    monkeypatch.setenv("AMPKIT_CACHE", str(tmp_path / "cache"))
    return gem5.Gem5(root=root, binary=binary, bootloader=bootloader)
