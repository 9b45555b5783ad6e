"""A region of interest marked in gem5's statistics (RunRequest.roi_stats):
the counts the speedup model trains on are the workload's region alone,
without its start-up and self-check.

latency is the case where the two differ most: it writes its 8 MiB ring
(a million stores) before its region and replays its walk by arithmetic
after it, while the region itself is one load per step and no store."""

import json
from pathlib import Path

import pytest

from ampkit.engines import gem5
from ampkit.kernel import KernelBuild
from ampkit.mix import App
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute
from tests.qemu.helpers import make_mix

#: 8 x 1024 steps: about a millisecond on a little CPU (the 0B2L checkpoint
#: the single-type test boots), after some more writing the ring
STEPS = 8 * 1024


def test_a_marked_region_counts_the_workloads_region_alone(
    gem5_tree: gem5.Gem5, kernel_build: KernelBuild, initramfs: Path, tmp_path: Path
) -> None:
    request = RunRequest(
        platform=get_platform("0B2L"),
        policy="cfs",
        mix=make_mix(App("latency", threads=1, size=STEPS // 1024), name="gem5-0B2L-region"),
        engine="gem5",
        mix_limit_s=5,
        method="once",
        roi_stats=True,
    )
    outcome = execute(request, tmp_path / "run", kernel_build, initramfs)
    assert outcome.ok, outcome.status
    summary = json.loads((outcome.directory / "gem5.json").read_text())
    region, whole = summary["roi"]["pmu"], summary["pmu"]
    (record,) = [json.loads(line) for line in (outcome.directory / "results.jsonl").open()]
    begin, end = record["roi_ns"]
    print(
        f"latency on 0B2L: region {summary['roi']['sim_seconds'] * 1e3:.3f} ms, "
        f"{region['INST_RETIRED']:.0f} instructions, {region['LD_RETIRED']:.0f} loads, "
        f"{region['ST_RETIRED']:.0f} stores; whole interval {whole['INST_RETIRED']:.0f}, "
        f"{whole['ST_RETIRED']:.0f} stores"
    )
    # the marks are the region's bounds: gem5's time between them is the
    # guest's, up to the clock reads beside each mark
    assert summary["roi"]["sim_seconds"] * 1e9 == pytest.approx(end - begin, rel=0.02)
    # a load a step (and the kernel's beside them: its tick, the thread's
    # start), and the ring's million stores left outside (4B0L, two
    # threads of 48 x 1024 steps: 160,586 loads and 59,317 stores in the
    # region, 3,993,791 stores in the interval)
    assert region["LD_RETIRED"] >= STEPS
    assert whole["ST_RETIRED"] > (1 << 20)
    assert region["ST_RETIRED"] < 0.1 * whole["ST_RETIRED"]
    # the interval is still the runner's: the region is inside it
    assert region["INST_RETIRED"] < whole["INST_RETIRED"]
    assert summary["roi"]["sim_seconds"] < summary["sim_seconds"]
