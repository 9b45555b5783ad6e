"""Every synthetic workload in the guest: it verifies itself and reports its threads."""

from pathlib import Path

from ampkit.kernel import KernelBuild
from ampkit.mix import SMALL_SIZES, App, known_programs

from .helpers import make_mix, run_mix


def test_every_workload_runs_in_the_guest(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    programs = [p for p in known_programs() if not p.startswith("ampkit-")]
    assert sorted(SMALL_SIZES) == programs, "give every workload a size in SMALL_SIZES"
    mix = make_mix(*(App(p, threads=3, size=SMALL_SIZES[p]) for p in programs))
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, platform="2B2L")
    assert outcome.ok, outcome.status
    assert [r["app"] for r in outcome.report.apps] == programs
    for r in outcome.report.apps:
        assert r["status"] == "ok" and r["exit_status"] == 0, r
        assert len(r["thread_times_ns"]) == 3, r
        assert all(t > 0 for t in r["thread_times_ns"]), r
        # the program's own verification printed its result line
        assert r["output"].startswith(f"{r['app']}: "), r
