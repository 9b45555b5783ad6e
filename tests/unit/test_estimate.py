"""The plan's estimate of what a gem5 campaign costs, from alone-run cost
lines (ampkit/campaign/estimate.py), worked by hand on a small table."""

from pathlib import Path

import pytest

from ampkit.behaviour import CostLine, Measurement, Table
from ampkit.campaign import estimate, runner
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.campaign.store import CampaignDir
from ampkit.cli import main
from ampkit.errors import MissingDependency


def measured(
    program: str, size: int, region_ms: float, process_ms: float, par: float
) -> Measurement:
    return Measurement(
        program=program, threads=4, size=size, policy="cfs", platform="2B2L",
        region_ns=int(region_ms * 1e6), process_ns=int(process_ms * 1e6), blocked_share=0.0,
        caused_share=0.0, parallelism=par, wall_s=1.0, run=f"{program}-{size}",
    )  # fmt: skip


#: contend: 0.5 ms a unit, 20 wall s per simulated ms + 10 s, one CPU busy,
#: no self-check; compute: 0.1 ms a unit, 10 wall s per ms + 10 s, two CPUs
#: busy over its region and a self-check of a quarter of it after it.
TABLE = Table(
    engine="gem5",
    measurements=(
        measured("contend", 20, 10, 10, 1.0),
        measured("compute", 200, 20, 25, 2.0),
        # at a far smaller size start-up weighs more: not the one to use
        measured("compute", 2, 0.2, 2.0, 1.0),
    ),
    costs=(
        CostLine("contend", 4, "2B2L", (10, 20), (5_000_000, 10_000_000), (110.0, 210.0)),
        CostLine("compute", 4, "2B2L", (100, 200), (10_000_000, 20_000_000), (110.0, 210.0)),
    ),
)
MIX = """
description = "a lock beside pricing"
category = "synchronisation"

[[app]]
program = "contend"
threads = 4
speedup = 3.0

[[app]]
program = "compute"
threads = 2
speedup = 2.0
"""
SPEC = """
name = "small"
engine = "gem5"
platforms = ["2B2L"]
policies = ["cfs", "colab"]
mixes = ["m.toml"]
span_ms = 20
warmup_ms = 2
references = ["alone", "little-only"]

[executor]
jobs = 2
"""


def small_spec(tmp_path: Path) -> Path:
    (tmp_path / "m.toml").write_text(MIX)
    (tmp_path / "table.toml").write_text(TABLE.render())
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    return spec


def test_shares_fill_the_cpus_by_threads_up_to_what_each_can_use() -> None:
    assert estimate.shares([4, 2], [1.0, 1.8], 4) == [1.0, 1.8]
    assert estimate.shares([3, 3], [2.5, 2.2], 4) == [2.0, 2.0]
    # what one cannot use goes to the others, in proportion to their threads
    assert estimate.shares([1, 2, 1], [0.4, 9, 9], 4) == pytest.approx([0.4, 2.4, 1.2])
    assert estimate.shares([2], [1.5], 4) == [1.5]


def test_each_run_of_a_small_spec_as_worked_by_hand(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path), behaviour=tmp_path / "table.toml")
    assert [a.size for a in spec.mixes[0].apps] == [40, 200]  # 20 ms alone each
    table = Table("gem5", TABLE.measurements, TABLE.costs)
    got = {r.run_id: estimate.estimate_run(r.request, r.role, table) for r in expand(spec)}
    assert all(isinstance(e, estimate.RunEstimate) for e in got.values())
    runs = {k: v for k, v in got.items() if isinstance(v, estimate.RunEstimate)}
    assert estimate.fixed_s(table) == pytest.approx(10.0)
    # contend: 20 ms of one CPU; compute: 20 ms x 2 CPUs + a 5 ms self-check
    # = 45 CPU-ms, on at most 45 / (20 + 5) = 1.8 CPUs with its 2 threads.
    # Together on 4 CPUs: contend 1 (its most), compute 1.8: 20 and 25 ms,
    # the run 25 + 2 of warm-up; its wall time the busy figure: 2.8 CPUs
    # busy, split as 2B2L's are (1.4 big, 1.4 little), 10 + (1.4 x 27 +
    # 1.4 x 3) x 27 = 1144 s, above the alone lines' 410 + 210.
    for policy in ("cfs", "colab"):
        mix = runs[f"2B2L-{policy}-m-r0"]
        assert mix.sim_ms == pytest.approx(27.0)
        assert mix.busy_cpus == pytest.approx(2.8)
        assert mix.wall_s == pytest.approx(1144.0) and mix.by == "busy CPUs"
        # at the low rates, 16 a big CPU and 2 a little one: 10 + 25.2 x 27
        assert mix.wall_s_low == pytest.approx(690.4)
    # contend alone: its alone line (10 + 20 x 20 = 410 s) beats one CPU
    # busy, half big and half little, 10 + 15 x 22 = 340 s
    alone = runs["2B2L-cfs-alone-contend-t4-n40-r0"]
    assert alone.sim_ms == pytest.approx(22.0)
    assert alone.wall_s == alone.wall_s_low == pytest.approx(410.0)
    assert alone.by == "alone lines"
    # compute alone: 1.8 CPUs busy, 10 + 27 x 27 = 739 s beats its line's 210
    compute = runs["2B2L-cfs-alone-compute-t2-n200-r0"]
    assert compute.sim_ms == pytest.approx(27.0) and compute.wall_s == pytest.approx(739.0)
    assert compute.wall_s_low == pytest.approx(447.4)
    # little CPUs only: the work times the app's speedup, on at most 2 CPUs
    slow = runs["0B2L-cfs-alone-contend-t4-n40-r0"]
    # on little CPUs only, 3 s a ms: 10 + 3 x 1 x 62 = 196 s, under its line's 410
    assert slow.sim_ms == pytest.approx(62.0) and slow.wall_s == pytest.approx(410.0)
    assert slow.by == "alone lines"
    slow = runs["0B2L-cfs-alone-compute-t2-n200-r0"]
    assert slow.sim_ms == pytest.approx(52.0) and slow.wall_s == pytest.approx(290.8)
    assert slow.by == "busy CPUs"
    # at the low rate (10 + 2 x 1.8 x 52 = 197.2) its line's 210 is the larger
    assert slow.wall_s_low == pytest.approx(210.0)

    lines = estimate.summary(list(runs.values()), [], 2, "table.toml")
    text = "\n".join(lines)
    total_h = (2 * 1144 + 410 + 739 + 410 + 290.8) / 3600
    assert "not a measurement" in lines[0] and "table.toml" in lines[0]
    assert f"total: 6 runs, 217 simulated ms, {total_h:.1f} wall hours of gem5" in text
    assert f"{total_h / 2:.1f} h with 2 at once" in text
    assert "cfs: 1 runs, 27 simulated ms" in text and "colab: 1 runs" in text
    assert "references (cfs): 4 runs" in text
    assert "on 2B2L: 4 runs" in text and "on 0B2L: 2 runs" in text
    assert "alone cost lines (2 runs)" in text
    assert "27 wall s per simulated ms a big CPU and 3 a little one (4 runs" in text
    assert "60 on 2B2L's 4: measured 36-85" in text


def test_a_program_without_a_cost_line_is_said_not_estimated(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path), behaviour=tmp_path / "table.toml")
    only_compute = Table("gem5", TABLE.measurements, TABLE.costs[1:])
    run = next(r for r in expand(spec) if r.role == MATRIX)
    assert estimate.estimate_run(run.request, run.role, only_compute) == (
        "contend: no gem5 cost line"
    )
    lines = estimate.summary([], ["contend: no gem5 cost line"], 2, "t")
    assert lines[1] == "  1 runs not estimated: contend: no gem5 cost line"


def test_campaign_plan_prints_the_estimate_even_where_gem5_is_not_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = small_spec(tmp_path)
    # the campaign's pinned table, as a campaign directory keeps it
    camp = CampaignDir(tmp_path / "camp")
    camp.create()
    camp.behaviour.write_text(TABLE.render())

    def no_gem5(*args: object, **kwargs: object) -> None:
        raise MissingDependency("no gem5 build is configured")

    monkeypatch.setattr(runner, "pins_for", no_gem5)
    assert main(["campaign", "plan", str(spec), "--dir", str(camp.root), "--list-runs"]) == 0
    out = capsys.readouterr().out
    assert "runs: 6 (2 in the matrix, 4 references)" in out
    assert "estimate (not a measurement" in out
    total_h = (2 * 1144 + 410 + 739 + 410 + 290.8) / 3600
    assert f"{total_h / 2:.1f} h with 2 at once" in out
    assert "2B2L-cfs-m-r0" in out and "~27 ms, ~1144 s" in out
    # a QEMU campaign has no cost model: its limits' bound only
    spec.write_text(SPEC.replace('"gem5"', '"qemu"').replace("span_ms = 20\n", ""))
    (tmp_path / "m.toml").write_text(MIX.replace("speedup = 3.0", "size = 40\nspeedup = 3.0"))
    assert main(["campaign", "plan", str(spec), "--dir", str(tmp_path / "q")]) == 0
    assert "estimate" not in capsys.readouterr().out


def test_a_profile_s_measurement_of_an_app_at_its_size_replaces_the_cost_line(
    tmp_path: Path,
) -> None:
    """The campaign's speedup profile measured contend t4 n40 alone on two
    big CPUs (12 ms) and two little ones (30 ms), and compute t2 n200 (8
    and 16 ms): on 2B2L the estimate takes their little regions, on 2B0L
    their big ones; the self-check after the region and the CPUs kept busy
    are the table's at the nearest size, as for a cost line."""
    from dataclasses import replace

    from ampkit.mix import App
    from ampkit.platform import get_platform
    from ampkit.profile import Entry, Profile

    spec = load_spec(small_spec(tmp_path), behaviour=tmp_path / "table.toml")
    profile = Profile(
        engine="gem5",
        cpus=2,
        entries=(
            Entry(App("contend", 4, 40), big_ns=(11_000_000, 13_000_000), little_ns=(30_000_000,)),
            Entry(App("compute", 2, 200), big_ns=(8_000_000,), little_ns=(16_000_000,)),
            Entry(App("compute", 2, 999), big_ns=(1_000_000,), little_ns=(2_000_000,)),
        ),
    )
    runs = {r.run_id: r for r in expand(spec)}
    alone = runs["2B2L-cfs-alone-contend-t4-n40-r0"]
    got = estimate.estimate_run(alone.request, alone.role, TABLE, profile)
    assert not isinstance(got, str)
    # contend: 30 ms, no self-check and one CPU busy (the table's at n20,
    # four threads); plus the warm-up: 32 ms, and 10 + 15 x 32 = 490 s
    assert got.sim_ms == pytest.approx(32.0) and got.busy_cpus == pytest.approx(1.0)
    assert got.wall_s == pytest.approx(490.0) and got.by == "busy CPUs"
    without = estimate.estimate_run(alone.request, alone.role, TABLE)
    assert not isinstance(without, str) and without.sim_ms == pytest.approx(22.0)
    # compute t2 n200: 16 ms, and the table's self-check at n200 (a
    # quarter of the region: 4 ms), on min(2 threads, 2 CPUs) (the table
    # measured four threads): 36 CPU-ms on at most 36 / 20 = 1.8 CPUs
    compute = runs["2B2L-cfs-alone-compute-t2-n200-r0"].request.mix.apps[0]
    load = estimate.app_load(compute, alone.request.platform, TABLE, profile)
    assert not isinstance(load, str)
    assert load.region_ms == pytest.approx(16.0)
    assert load.work_cpu_ms == pytest.approx(36.0) and load.usable_cpus == pytest.approx(1.8)
    # hints do not stop the match: the mix gives contend a speedup, the profile none
    mix = runs["2B2L-cfs-m-r0"]
    assert mix.request.mix.apps[0].speedup == 3.0
    got = estimate.estimate_run(mix.request, mix.role, TABLE, profile)
    assert not isinstance(got, str) and got.sim_ms == pytest.approx(32.0)
    # on big CPUs only, the big time (the mean, 12 ms)
    big_only = replace(alone.request, platform=get_platform("2B0L"))
    got = estimate.estimate_run(big_only, alone.role, TABLE, profile)
    assert not isinstance(got, str) and got.sim_ms == pytest.approx(14.0)
    # a profile of another engine is not read for a gem5 campaign's plan
    spec_file = tmp_path / "spec.toml"
    (tmp_path / "p.toml").write_text(replace(profile, engine="qemu").render())
    spec_file.write_text(SPEC.replace("span_ms = 20", 'span_ms = 20\nspeedups = "p.toml"'))
    _, _, how = runner._estimates(load_spec(spec_file, behaviour=tmp_path / "table.toml"), [])
    assert "p.toml is of qemu runs: unused" in how[0]
