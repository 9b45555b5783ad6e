"""Campaigns through a real SLURM cluster on localhost (tests/slurm/conftest.py)."""

import json
import subprocess
import time
from pathlib import Path

from ampkit.campaign.plan import expand
from ampkit.campaign.spec import load_spec
from ampkit.kernel import KernelBuild
from tests.qemu.test_campaign import DATA, ampkit, finished
from tests.slurm.cluster import Cluster


def write_spec(path: Path, name: str, mixes: list[str], policies: str, extra: str = "") -> Path:
    path.write_text(
        f"""
name = "{name}"
platforms = ["2B2L"]
policies = {policies}
mixes = {json.dumps([str(DATA / m) for m in mixes])}
references = []

[limits]
mix_limit_s = 60
memory_mb = 1500

[executor]
kind = "slurm"
{extra}
"""
    )
    return path


def test_a_small_campaign_completes_through_slurm(
    tmp_path: Path, slurm_cluster: Cluster, kernel_build: KernelBuild, initramfs: Path
) -> None:
    spec = write_spec(
        tmp_path / "c.toml", "slurm-ok", ["quick.toml"], '["cfs", "colab"]',
        f'partition = "{slurm_cluster.partition}"',
    )  # fmt: skip
    root = tmp_path / "camp"
    result = ampkit("campaign", "run", str(spec), "--dir", str(root), check=False)
    assert result.returncode == 0, result.stderr + slurm_cluster.log_tail()
    planned = {r.run_id for r in expand(load_spec(spec))}
    assert finished(root) == dict.fromkeys(planned, "ok")
    (submission,) = sorted((root / "slurm").iterdir())
    record = json.loads((submission / "submission.json").read_text())
    assert sorted(record["run_ids"]) == sorted(planned)
    # Every task wrote its output, and the run came back into the same tree.
    for task, run_id in enumerate(record["run_ids"]):
        assert f"{run_id}: ok" in (submission / f"task-{task}.out").read_text()

    again = ampkit("campaign", "run", str(spec), "--dir", str(root))
    assert "2 done (cached)" in again.stderr and "0 to run" in again.stderr
    assert len(list((root / "slurm").iterdir())) == 1  # nothing submitted


def _task_of(root: Path, run_id: str) -> tuple[str, int]:
    (submission,) = sorted((root / "slurm").iterdir())
    record = json.loads((submission / "submission.json").read_text())
    return record["job_id"], record["run_ids"].index(run_id)


def test_failed_and_cancelled_tasks_are_reported_and_rerun(
    tmp_path: Path, slurm_cluster: Cluster, kernel_build: KernelBuild, initramfs: Path
) -> None:
    spec = write_spec(tmp_path / "c.toml", "slurm-bad", ["fails.toml", "slow.toml"], '["cfs"]')
    root = tmp_path / "camp"
    failing, slow = "2B2L-cfs-fails-r0", "2B2L-cfs-slow-r0"
    ampkit("campaign", "run", str(spec), "--dir", str(root), "--no-wait")
    job, task = _task_of(root, slow)
    deadline = time.monotonic() + 300
    while True:
        state = subprocess.run(
            ["squeue", "-h", "-r", "-j", f"{job}_{task}", "-o", "%T"],
            capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        if state == "RUNNING":
            break
        assert time.monotonic() < deadline, f"task {job}_{task} never ran ({state!r})"
        time.sleep(0.5)
    time.sleep(3)
    subprocess.run(["scancel", f"{job}_{task}"], check=True)

    # Run again: the live array is followed, not submitted twice; both end failed.
    follow = ampkit("campaign", "run", str(spec), "--dir", str(root), check=False)
    assert follow.returncode == 1, follow.stderr
    assert len(list((root / "slurm").iterdir())) == 1
    status = ampkit("campaign", "status", str(root)).stdout
    assert "2 runs: 2 failed" in status, status
    assert f"failed {slow}: SLURM task {job}_{task} ended CANCELLED" in status, status
    assert f"failed {failing}: " in status and "ampkit-probe#0 failed" in status, status
    assert f"task-{task}.out" in status and f"{failing}/console.log" in status
    assert f"ampkit campaign rerun {root} --failed" in status

    rerun = ampkit("campaign", "rerun", str(root), "--failed", check=False)
    assert rerun.returncode == 1, rerun.stderr  # the failing one fails again
    assert finished(root) == {slow: "ok", failing: finished(root)[failing]}
    assert finished(root)[failing].startswith("failed: ")
    assert len(list((root / "slurm").iterdir())) == 2
    # The first attempts are kept, with their logs and what SLURM said.
    cancelled = json.loads((root / "attempts" / slow / "1-failed" / "failure.json").read_text())
    assert cancelled["slurm_state"] == "CANCELLED"
    assert (root / "attempts" / failing / "1-failed" / "run" / "console.log").is_file()
