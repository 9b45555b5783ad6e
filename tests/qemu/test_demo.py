"""'make demo' end to end: every policy the kernel has, a run directory each, a summary."""

from pathlib import Path

import pytest

from ampkit.cli import main
from ampkit.kernel import KernelBuild
from ampkit.summary import QEMU_NOTICE


def test_demo_runs_every_policy_and_summarises(
    tmp_path: Path,
    kernel_build: KernelBuild,
    initramfs: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    runs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert runs == ["2B2L-cfs-demo-r0", "2B2L-colab-demo-r0", "2B2L-wash-demo-r0"]
    assert (out / runs[0] / "status").read_text() == "ok\n"
    summary = (out / "summary.txt").read_text()
    assert summary.startswith(QEMU_NOTICE)
    assert "compute#0" in summary and "contend#0" in summary
    assert summary in capsys.readouterr().out
    # again: the directory is replaced, not refused
    assert main(["demo", "--out", str(out)]) == 0


def test_demo_refuses_to_replace_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("precious")
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert (tmp_path / "mine.txt").read_text() == "precious"
