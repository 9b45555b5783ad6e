"""'make demo' end to end: every policy the kernel has, a run directory each,
the references, a summary and the report; collection of those real runs."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ampkit.analysis.collect import collect
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
    mixes = [f"2B2L-{p}-demo-r0" for p in ("cfs", "colab", "wash", "hsp", "rr", "acfs")]
    alone = ["alone-compute-t2-n20000", "alone-contend-t4-n250"]
    references = [f"{p}-cfs-{a}-r0" for p in ("2B2L", "0B2L") for a in alone]
    assert runs == sorted([*mixes, *references, "report"])
    for run in [*mixes, *references]:
        assert (out / run / "status").read_text() == "ok\n"
    summary = (out / "summary.txt").read_text()
    assert summary.startswith(QEMU_NOTICE)
    assert "compute#0" in summary and "contend#0" in summary
    captured = capsys.readouterr()
    assert summary in captured.out
    # eef ranks by energies, which the demo mix does not give: said, not run
    assert "demo: eef not run" in captured.err and "epi_big_nj" in captured.err
    report = (out / "report" / "report.md").read_text()
    assert report.startswith(QEMU_NOTICE)
    plots = json.loads((out / "report" / "plots" / "plots.json").read_text())
    # one mix and its geomean, colab, wash, hsp, rr and acfs against cfs
    assert plots["qemu-2B2L-h_antt.png"] == 10
    # the little-only references give ASP without being asked for
    per_run = pd.read_csv(out / "report" / "tables" / "per_run.csv")
    assert per_run["asp"].notna().all(), per_run
    # the real runs, collected: two applications of (2 + 4) threads per mix
    # run (six policies), and each alone on 2B2L and on 0B2L
    col = collect(out)
    assert col.excluded.empty, col.excluded
    assert len(col.apps) == 6 * 2 + 2 * 2
    assert len(col.threads) == 6 * (2 + 4) + 2 * (2 + 4)
    # the kit kernel's per-thread counters reach the tasks table
    assert len(col.tasks) == len(col.threads), col.tasks
    assert (col.apps["turnaround_ns"] > 0).all()
    # a real run cut short: its results lose their last line's end
    cut = out / "cut" / mixes[1]
    shutil.copytree(out / mixes[1], cut)
    text = (cut / "results.jsonl").read_text()
    (cut / "results.jsonl").write_text(text[: text.rindex("}")])
    col = collect(out)
    assert col.excluded[["run", "reason"]].values.tolist() == [
        [f"cut/{mixes[1]}", "corrupt: results.jsonl line 2 is not JSON (truncated?)"]
    ]
    shutil.rmtree(out / "cut")
    # again: the directory is replaced, not refused
    assert main(["demo", "--out", str(out)]) == 0


def test_demo_refuses_to_replace_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("precious")
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert (tmp_path / "mine.txt").read_text() == "precious"
