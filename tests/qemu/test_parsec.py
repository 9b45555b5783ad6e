"""PARSEC / SPLASH-2x programs from the recipe's disk image, run in the guest.

The miniature release of tests/parsec_mini.py, cross-built by the real
recipe, attached as a virtio disk and mounted by the runner; each program
checks its own result (exit 0 only when right).
"""

import json
from pathlib import Path

import pytest

from ampkit import parsec, references
from ampkit.kernel import KernelBuild
from ampkit.mix import App
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute
from tests.parsec_mini import make_release

from .helpers import make_mix, run_mix


@pytest.fixture(scope="module")
def suite_manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    core, sim = make_release(tmp_path_factory.mktemp("release"))
    out = tmp_path_factory.mktemp("parsec")
    return parsec.build_suite(
        [str(core), str(sim)], ["parsec.blackscholes", "splash2x.fft"], ["simsmall"], out_dir=out
    )


def test_a_suite_mix_runs_from_the_disk(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, suite_manifest: Path
) -> None:
    mix = make_mix(
        App("parsec.blackscholes", threads=2, size=0, input="simsmall", speedup=1.5),
        App("splash2x.fft", threads=2, size=0, input="simsmall"),
        App("ampkit-probe", threads=1, size=1, args=("sleep", "2")),
        name="suite",
    )
    outcome = run_mix(
        tmp_path / "run", kernel_build, initramfs, mix, policy="colab",
        suite_manifest=suite_manifest,
    )  # fmt: skip
    assert outcome.ok, outcome.status
    bs, fft, sleeper = outcome.report.apps
    assert "mini-blackscholes: 2000 values, 2 threads" in bs["output"]
    assert "(right)" in bs["output"] and bs["status"] == "ok", bs
    # run.sh (busybox sh from the disk) generated its input for 2 threads, then ran fft
    assert "mini-fft: m=12 p=2" in fft["output"] and "(right)" in fft["output"], fft
    assert fft["status"] == "ok"
    for r in (bs, fft):
        # the kit's hooks: the region of interest, inside the first run
        begin, end = r["roi_ns"]
        assert r["start_ns"] <= begin < end <= r["end_ns"], r
        # quick programs beside a 2 s sleeper are restarted, and each restart
        # finds its inputs (every instance gets a fresh directory of links)
        assert r["restarts"] >= 1 and r["restarts_completed"] >= 1, r
        assert "restart_failure" not in r
    assert bs["speedup_error"] is None  # the hint reached the kit kernel
    assert "roi_ns" not in sleeper
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    built = json.loads(suite_manifest.read_text())
    assert manifest["inputs"]["suite_image_sha256"] == built["image_sha256"]
    desc = (tmp_path / "run" / "run.desc").read_text()
    assert "disk /dev/vda /parsec" in desc


def test_references_of_a_suite_program(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path, suite_manifest: Path
) -> None:
    mix = make_mix(App("parsec.blackscholes", threads=2, size=0, input="simsmall"), name="one")
    request = RunRequest(
        platform=get_platform("2B2L"), policy="cfs", mix=mix, suite_manifest=suite_manifest
    )
    (ref,) = references.references(request, ["little-only"])
    assert ref.request.run_id == "0B2L-cfs-alone-parsec.blackscholes-t2-simsmall-r0"
    outcome = execute(ref.request, tmp_path / ref.request.run_id, kernel_build, initramfs)
    assert outcome.ok, outcome.status
    assert "(right)" in outcome.report.apps[0]["output"]
