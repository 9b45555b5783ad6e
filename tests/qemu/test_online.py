"""The online speedup model end to end on QEMU: the daemon counts the
threads' instructions and cycles (all QEMU's PMU counts: the estimates
mean nothing here, and the run says so), predicts, and the kernel holds
what it wrote; without a model the hints are what the kernel holds."""

import json
from pathlib import Path

from ampkit import online
from ampkit.kernel import KernelBuild
from ampkit.mix import App
from ampkit.rundir import MANIFEST, ONLINE, RunDir

from .helpers import EXECUTED, make_mix, run_mix

#: The shipped evaluation's model: on QEMU any model drives the pipeline.
MODEL = Path(__file__).parents[2] / "evaluations" / "gem5-2B2L" / "calibration" / "model"
#: Two workers that compute for seconds of guest time (1 ns per executed
#: instruction): the daemon opens their counters and reads them over many
#: periods, however long QEMU takes to deliver its interrupts.
LONG = make_mix(App(program="compute", threads=2, size=4_000_000, speedup=2.0), name="online-long")


def test_estimates_reach_the_kernel(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    models = online.load_online(MODEL, engine="qemu", meaningful=False, machine=None, period=10_000)
    outcome = run_mix(
        tmp_path / "run",
        kernel_build,
        initramfs,
        LONG,
        policy="colab+online",
        method="once",
        qemu_clock=EXECUTED,
        online=models,
    )
    assert outcome.ok, outcome.status
    records = RunDir(outcome.directory).online_records()
    opened = [r for r in records if r["what"] == "thread" and r["counters"] == "open"]
    assert len(opened) >= 3  # the main thread and both workers
    written = [r for r in records if r["what"] == "estimate" and r["written"]]
    assert written, records[-1]
    for r in written:
        # what the policies read is what the daemon wrote
        assert r["kernel_q10"] == r["speedup_q10"]
        assert 256 <= r["speedup_q10"] <= 8192
        # each core type that ran enough instructions had its prediction
        for count, predicted in zip(r["instructions"], r["per_type"], strict=True):
            assert (predicted is not None) == (count >= online.MIN_INSTRUCTIONS)
    manifest = json.loads((outcome.directory / MANIFEST).read_text())
    speedups = manifest["speedups"]
    assert speedups["source"] == "online" and "mean nothing" in speedups["notice"]
    assert speedups["daemon"]["writes"] == len(written)
    assert speedups["daemon"]["cpu_ns"] > 0


def test_without_a_model_the_hints_are_what_the_kernel_holds(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    mix = make_mix(App(program="compute", threads=2, size=20_000, speedup=2.0), name="hinted")
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, policy="colab")
    assert outcome.ok, outcome.status
    assert not (outcome.directory / ONLINE).exists()
    manifest = json.loads((outcome.directory / MANIFEST).read_text())
    assert "speedups" not in manifest
    (app,) = outcome.report.apps
    assert app["speedup_q10"] == 2048 and app["speedup_error"] is None
    assert "online" not in (outcome.directory / "run.desc").read_text()
