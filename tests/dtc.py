"""Device trees to and from text with the real dtc, for the tests."""

import subprocess
from pathlib import Path


def compile_dts(path: Path, tmp_path: Path) -> bytes:
    out = tmp_path / (path.stem + ".dtb")
    subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", str(out), str(path)], check=True)
    return out.read_bytes()


def decompile(blob: bytes, tmp_path: Path) -> str:
    path = tmp_path / "out.dtb"
    path.write_bytes(blob)
    return subprocess.run(
        ["dtc", "-q", "-I", "dtb", "-O", "dts", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
