"""The behaviour table: waiting, parallelism and cost measured from runs of
one program alone, and the category rule it gives ampkit mix check."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from ampkit import behaviour
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.behaviour import (
    CostLine,
    Measurement,
    Table,
    check_category,
    check_mix,
    load_table,
    measure,
)
from ampkit.categories import WAITING_SHARE
from ampkit.cli import main
from ampkit.errors import EXIT_INPUT, AmpkitError
from ampkit.mix import CATEGORY_PROGRAMS, load_mix, mix_names
from ampkit.rundir import Excluded, RunDir

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def alone(
    root: Path,
    program: str,
    *,
    policy: str = "cfs",
    size: int = 100,
    region_ns: int = 1_000_000,
    blocked: tuple[int, ...] = (0, 0),
    caused: tuple[int, ...] = (0, 0),
    lived: tuple[int, ...] = (1_000_000, 1_000_000),
    cpu: tuple[int, ...] = (1_000_000, 1_000_000),
    wall_s: float = 60.0,
    cmdline: str | None = None,
    tick_hz: int | None = None,
) -> Path:
    tasks = [
        {"thread": i, "class": "big", "futex_blocked_ns": b, "futex_caused_ns": c}
        for i, (b, c) in enumerate(zip(blocked, caused, strict=True))
    ]
    return write_run(
        root,
        platform="2B2L",
        policy=policy,
        mix=f"{program}-n{size}",
        apps=[
            SynthApp(
                program,
                threads=len(lived),
                turnaround_ns=region_ns,
                thread_ns=lived,
                thread_cpu_ns=cpu,
                tasks=tasks,
                size=size,
            )
        ],
        engine="gem5",
        timing_notice=None,
        wall_s=wall_s,
        cmdline=cmdline,
        tick_hz=tick_hz,
    )


def test_the_shares_are_the_threads_counters_over_their_lives(tmp_path: Path) -> None:
    run = alone(
        tmp_path,
        "contend",
        blocked=(300_000, 500_000),
        caused=(600_000, 900_000),
        lived=(1_000_000, 1_000_000),
        cpu=(700_000, 500_000),
        region_ns=1_000_000,
    )
    m = behaviour.measurement_of(RunDir(run))
    assert m.blocked_share == pytest.approx(0.4)
    assert m.caused_share == pytest.approx(0.75)
    assert m.parallelism == pytest.approx(1.2)
    assert (m.program, m.threads, m.size, m.policy, m.wall_s) == ("contend", 2, 100, "cfs", 60.0)


def test_a_run_of_two_programs_or_without_counters_is_left_out(tmp_path: Path) -> None:
    two = write_run(
        tmp_path,
        platform="2B2L",
        policy="cfs",
        mix="pair",
        apps=[SynthApp("compute", 2, 1000), SynthApp("chase", 2, 1000)],
        engine="gem5",
        timing_notice=None,
    )
    with pytest.raises(Excluded, match="2 applications"):
        behaviour.measurement_of(RunDir(two))
    bare = write_run(
        tmp_path,
        platform="2B2L",
        policy="cfs",
        mix="bare",
        apps=[SynthApp("compute", 2, 1000)],
        engine="gem5",
        timing_notice=None,
    )
    with pytest.raises(Excluded, match="kernel counters"):
        behaviour.measurement_of(RunDir(bare))
    table, left_out = measure([tmp_path], "gem5")
    assert table.measurements == ()
    assert len(left_out) == 2


def test_cost_lines_come_from_the_baseline_at_two_sizes(tmp_path: Path) -> None:
    alone(tmp_path / "a", "compute", size=100, region_ns=1_000_000, wall_s=60)
    alone(tmp_path / "b", "compute", size=200, region_ns=1_900_000, wall_s=78)
    # another policy at a third size does not enter the line
    alone(tmp_path / "c", "compute", policy="colab", size=400, region_ns=9_000_000, wall_s=999)
    alone(tmp_path / "d", "contend", size=100)  # one size only: no line
    table, _ = measure([tmp_path], "gem5")
    assert [c.program for c in table.costs] == ["compute"]
    line = table.costs[0]
    assert line.ns_per_unit == pytest.approx(9000)
    assert line.fixed_ns == pytest.approx(100_000)
    assert line.wall_s_per_sim_ms == pytest.approx(20)
    assert line.size_for(1.0) == 100
    assert line.size_for(1.9) == 200  # the line, up to the longest run measured
    assert line.size_for(1.45) == 150
    # beyond it, in proportion to that run: 10 ms at 1.9 ms per 200 units
    assert line.size_for(10.0) == round(10 * 200 / 1.9) == 1053
    for size in (100, 150, 200, 1053):
        assert line.size_for(line.region_at(size) / 1e6) == size
    assert line.wall_for(10.0) == pytest.approx(240)
    # runs of another engine are not this table's
    other, left_out = measure([tmp_path], "qemu")
    assert other.measurements == () and all("not qemu" in line for line in left_out)


def test_a_table_reads_back_as_written(tmp_path: Path) -> None:
    alone(tmp_path / "a", "compute", size=100, region_ns=1_000_000)
    alone(tmp_path / "b", "compute", size=200, region_ns=1_900_000, wall_s=80)
    alone(tmp_path / "c", "contend", blocked=(400_000, 200_000), policy="wash")
    table, _ = measure([tmp_path], "gem5")
    path = tmp_path / "t.toml"
    path.write_text(table.render())
    back = load_table(path)
    assert back.measurements == table.measurements
    assert [c.sizes for c in back.costs] == [c.sizes for c in table.costs]
    assert back.costs[0].ns_per_unit == pytest.approx(table.costs[0].ns_per_unit)


def test_a_bad_table_names_its_line_and_key(tmp_path: Path) -> None:
    alone(tmp_path / "a", "compute")
    table, _ = measure([tmp_path], "gem5")
    text = table.render().replace("blocked_share = 0.0000", "blocked_share = 1.5")
    path = tmp_path / "t.toml"
    path.write_text(text)
    line = text.splitlines().index("blocked_share = 1.5") + 1
    with pytest.raises(AmpkitError, match=rf"t.toml:{line}: .*'blocked_share' must be"):
        load_table(path)
    path.write_text(table.render().replace("[[measurement]]", "[[measurements]]"))
    with pytest.raises(AmpkitError, match="'measurements' is not a behaviour table key"):
        load_table(path)


def _m(program: str, blocked: float) -> Measurement:
    return Measurement(program, 4, 100, "cfs", "2B2L", 1, 1, blocked, 0.0, 1.0, 1.0, "r")


TABLE = Table(
    engine="gem5",
    measurements=(_m("contend", 0.30), _m("compute", 0.001), _m("lazy", 0.05)),
)


def test_the_category_rule() -> None:
    # synchronisation: half the programs (rounded up) must wait
    assert check_category("m", "synchronisation", ["contend", "compute"], TABLE).holds is True
    assert check_category("m", "synchronisation", ["lazy", "compute"], TABLE).holds is False
    assert (
        check_category("m", "communication", ["compute", "compute", "contend"], TABLE).holds
        is False
    )
    # compute: every program independent
    assert check_category("m", "compute", ["compute", "compute"], TABLE).holds is True
    assert check_category("m", "compute", ["compute", "lazy"], TABLE).holds is False
    # unmeasured programs leave the verdict open only where they could change it
    assert check_category("m", "synchronisation", ["compute", "other"], TABLE).holds is None
    assert check_category("m", "synchronisation", ["contend", "other"], TABLE).holds is True
    assert check_category("m", "compute", ["compute", "other"], TABLE).holds is None
    assert check_category("m", "compute", ["contend", "other"], TABLE).holds is False
    # three programs need two that wait: one measured that waits is not enough
    three = ["contend", "other", "another"]
    assert check_category("m", "synchronisation", three, TABLE).holds is None
    three = ["compute", "compute", "other"]
    assert check_category("m", "synchronisation", three, TABLE).holds is False
    verdict = check_category("m", "synchronisation", ["lazy", "compute"], TABLE)
    assert any("lazy: blocked 5.0%" in line for line in verdict.lines)
    assert not any("not measured" in line for line in verdict.lines)
    # a thread count the table lacks is judged by the program's run nearest
    # the span at any count, and said so
    verdict = check_category("m", "synchronisation", ["contend", "compute"], TABLE, [4, 2])
    assert verdict.holds is True
    contend, compute = verdict.lines[:2]
    assert "a count not measured" not in contend
    assert compute.endswith(
        "(4 threads, size 100, alone under cfs on 2B2L); the mix runs it "
        "with 2, a count not measured"
    )


def test_mix_check_reports_a_mix_its_programs_do_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table_path = tmp_path / "t.toml"
    table_path.write_text(TABLE.render())
    mix = tmp_path / "m.toml"
    mix.write_text(
        'description = "d"\ncategory = "compute"\n\n'
        '[[app]]\nprogram = "contend"\nthreads = 4\nsize = 10\n'
    )
    assert main(["mix", "check", str(mix), "--behaviour", str(table_path)]) == EXIT_INPUT
    out = capsys.readouterr()
    assert "contend: blocked 30.0%" in out.out
    assert "not of their declared category" in out.err
    assert main(["mix", "check", str(mix), "--no-behaviour"]) == 0


def test_cost_lines_need_two_sizes() -> None:
    with pytest.raises(AmpkitError, match="two sizes"):
        _ = CostLine("x", 1, "2B2L", (100,), (1000,), (1.0,)).ns_per_unit


def test_the_report_gives_each_application_its_waiting(tmp_path: Path) -> None:
    from ampkit.analysis.collect import collect
    from ampkit.analysis.report import Doc, _waiting_section, waiting

    runs = tmp_path / "runs"
    alone(runs, "contend", blocked=(300_000, 500_000), caused=(100_000, 0))
    alone(runs, "contend", policy="colab", blocked=(100_000, 100_000))
    w = waiting(collect(runs)).set_index("policy")
    assert w.loc["cfs", "blocked_share"] == pytest.approx(0.4)
    assert w.loc["cfs", "caused_share"] == pytest.approx(0.05)
    assert w.loc["colab", "blocked_share"] == pytest.approx(0.1)
    doc = Doc()
    _waiting_section(doc, collect(runs))
    text = doc.markdown(tmp_path)
    assert "## Waiting on futexes" in text
    assert "| 2B2L | contend-n100 | contend | cfs | 0.4" in text


def test_the_report_says_which_mixes_lost_their_category_inside(tmp_path: Path) -> None:
    """The evaluation's comm2-pipeline-compute: under cfs pipeline waited
    14.3% of its threads' lives inside the mix, under colab (compute on the
    big CPUs, pipeline's four threads on the little ones) 8.6%: the report
    marks colab's run as having lost the mix's category."""
    from ampkit.analysis.collect import collect
    from ampkit.analysis.report import Doc, _waiting_section, categories_inside, waiting

    runs = tmp_path / "runs"
    for policy in ("cfs", "colab"):
        name = f"2B2L-{policy}-comm2-pipeline-compute-r0"
        shutil.copytree(EVALUATION / name, runs / name)
    col = collect(runs)
    inside = categories_inside(waiting(col), col.runs, col.apps).set_index("policy")
    assert bool(inside.loc["cfs", "holds"]) and inside.loc["cfs", "waiting"] == 1
    assert not bool(inside.loc["colab", "holds"]) and inside.loc["colab", "waiting"] == 0
    doc = Doc()
    _waiting_section(doc, col)
    text = doc.markdown(tmp_path)
    assert "### Each mix's category, inside the mix" in text
    assert (
        "| gem5 | 2B2L | comm2-pipeline-compute | colab | communication | 0 of 1 | LOST |" in text
    )
    assert "| gem5 | 2B2L | comm2-pipeline-compute | cfs | communication | 1 of 1 |  |" in text
    # a run with an application whose counters are missing is not judged
    # on the rest (it counts whole or not at all, as for mix waiting)
    w = waiting(col)
    dropped = w[~((w["policy"] == "colab") & (w["app"] == "compute"))]
    judged = categories_inside(dropped, col.runs, col.apps)
    assert list(judged["policy"]) == ["cfs"]
    nan = w.copy()
    nan.loc[(nan["policy"] == "colab") & (nan["app"] == "compute"), "blocked_share"] = float("nan")
    assert list(categories_inside(nan, col.runs, col.apps)["policy"]) == ["cfs"]


ARCHIVE = REPO / "measurements" / "gem5-workloads" / "runs"


def test_the_shipped_table_is_what_its_archived_runs_give() -> None:
    """configs/behaviour-gem5.toml is made from the committed runs, and
    made again from them it is the same, to the byte."""
    shipped = behaviour.table_path("gem5")
    table, left_out = measure([ARCHIVE], "gem5")
    assert left_out == []
    assert table.render() == shipped.read_text()
    # and it covers every program a category stands on, with its cost line
    programs = {p for ps in CATEGORY_PROGRAMS.values() for p in ps}
    assert programs <= {m.program for m in table.measurements}
    assert programs <= {c.program for c in table.costs}
    assert {m.policy for m in table.measurements} == {"cfs", "colab", "wash"}


def test_every_catalogue_mix_is_of_its_category_by_measurement() -> None:
    table = behaviour.shipped_table()
    assert table is not None
    # Saez et al.'s single-threaded mixes among them, whose latency has its
    # own gem5 runs (measurements/gem5-workloads, cost-latency)
    assert {"single4", "single4-dram"} <= set(mix_names())
    for name in mix_names():
        verdict = check_mix(load_mix(name), table)
        assert verdict.holds is True, "\n".join(verdict.lines)


def test_a_program_whose_time_did_not_grow_with_its_size_is_sized_by_its_slowest_rate() -> None:
    """stages took 5.2 ms at 600 items and 4.8 at 1200 (where its threads
    landed mattered more than its work): no negative slope may size it."""
    line = CostLine("stages", 4, "2B2L", (600, 1200), (5_200_000, 4_800_000), (130.0, 140.0))
    assert not line.grows
    assert line.ns_per_unit == pytest.approx(5_200_000 / 600)  # the most time per unit
    assert line.fixed_ns == 0
    assert line.size_for(20.0) == round(20e6 / (5_200_000 / 600))
    assert line.wall_s_per_sim_ms == pytest.approx(140 / 4.8)  # the most wall time per ms
    # a line that grows but would need a negative fixed part is not trusted either
    negative = CostLine("p", 4, "2B2L", (100, 200), (1_000_000, 3_000_000), (10.0, 20.0))
    assert not negative.grows and negative.ns_per_unit == pytest.approx(15_000)
    assert "did not grow" in Table("gem5", (), (line,)).render()


def _line_table(ns_per_unit: int) -> Table:
    line = CostLine(
        "contend", 4, "2B2L", (100, 200), (100 * ns_per_unit, 200 * ns_per_unit), (50.0, 60.0)
    )
    return Table(engine="gem5", measurements=(), costs=(line,))


def test_a_campaign_sizes_its_apps_by_the_table_it_pinned(tmp_path: Path) -> None:
    from ampkit.campaign.runner import dir_spec
    from ampkit.campaign.spec import load_spec
    from ampkit.campaign.store import CampaignDir
    from ampkit.hashing import write_json

    (tmp_path / "m.toml").write_text(
        'description = "d"\ncategory = "synchronisation"\n\n'
        '[[app]]\nprogram = "contend"\nthreads = 4\n'
    )
    spec_path = tmp_path / "c.toml"
    spec_path.write_text(
        'name = "c"\nengine = "gem5"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\n'
        'mixes = ["m.toml"]\nspan_ms = 10\nreferences = ["alone"]\n'
    )
    pinned, later = tmp_path / "pinned.toml", tmp_path / "later.toml"
    pinned.write_text(_line_table(10_000).render())
    later.write_text(_line_table(20_000).render())
    spec = load_spec(spec_path, behaviour=pinned)
    assert spec.sized_by == pinned
    assert [a.size for m in spec.mixes for a in m.apps] == [1000]  # 10 ms at 10 us a unit
    assert [a.size for a in load_spec(spec_path, behaviour=later).mixes[0].apps] == [500]
    # the campaign directory's copy of the spec is sized by its pinned table
    cdir = CampaignDir(tmp_path / "campaign")
    cdir.create()
    write_json(cdir.root / "campaign.json", {"spec_base": str(tmp_path)})
    (cdir.root / "spec.toml").write_text(spec_path.read_text())
    cdir.behaviour.write_text(pinned.read_text())
    assert [a.size for a in dir_spec(cdir).mixes[0].apps] == [1000]
    # and hinted by the profile it pinned, whatever the spec's file says now
    (tmp_path / "p.toml").write_text("the profile as it is now")
    (cdir.root / "spec.toml").write_text(spec_path.read_text() + 'speedups = "p.toml"\n')
    cdir.speedups.write_text("the profile as the campaign first read it")
    assert dir_spec(cdir).speedups == cdir.speedups
    # a QEMU campaign is never sized by gem5's table
    spec_path.write_text(spec_path.read_text().replace('"gem5"', '"qemu"'))
    with pytest.raises(AmpkitError, match=r"span_ms.*only on an engine that models"):
        load_spec(spec_path)


# --- the setup a table was measured at -----------------------------------------


def test_a_table_records_the_setup_its_runs_ran_at_and_reads_it_back(tmp_path: Path) -> None:
    for size, region in ((100, 2_000_000), (200, 3_000_000)):
        alone(
            tmp_path,
            "chase",
            size=size,
            region_ns=region,
            cmdline="console=ttyAMA0 sched_timescale=4",
            tick_hz=1000,
        )
    table, left_out = measure([tmp_path], "gem5")
    assert left_out == [] and (table.timescale, table.tick_hz) == (4, 1000)
    path = tmp_path / "t.toml"
    path.write_text(table.render())
    again = load_table(path)
    assert (again.timescale, again.tick_hz) == (4, 1000)
    assert again.setup == "time scale 4, 1000 Hz tick"
    # a table written before the setup was recorded is the default kernel's, unscaled
    old = "\n".join(
        line
        for line in table.render().splitlines()
        if not line.startswith(("timescale", "tick_hz"))
    )
    path.write_text(old)
    assert (load_table(path).timescale, load_table(path).tick_hz) == (1, 250)


def test_runs_of_two_setups_are_not_measured_into_one_table(tmp_path: Path) -> None:
    alone(tmp_path / "plain", "chase", size=100)
    alone(tmp_path / "scaled", "chase", size=200, cmdline="sched_timescale=4", tick_hz=1000)
    with pytest.raises(AmpkitError) as e:
        measure([tmp_path / "plain", tmp_path / "scaled"], "gem5")
    assert "time scale 1, 250 Hz tick" in e.value.what
    assert "time scale 4, 1000 Hz tick" in e.value.what
    assert "a table of its own" in (e.value.hint or "")


def test_an_app_is_sized_by_the_cost_line_of_its_own_thread_count() -> None:
    def line(threads: int, ns_per_unit: int) -> CostLine:
        return CostLine(
            "chase", threads, "2B2L", (100, 200), (100 * ns_per_unit, 200 * ns_per_unit), (1, 2)
        )

    table = Table("gem5", (), (line(4, 40_000), line(3, 10_000), line(2, 5_000)))
    assert table.cost("chase", 3) == line(3, 10_000)
    assert table.cost("chase", 2) == line(2, 5_000)
    # no line at 8 threads: the nearest thread count's
    assert table.cost("chase", 8) == line(4, 40_000)
    assert table.cost("compute", 3) is None
    from ampkit.sizes import engine_size

    # 20 ms: 500 units at 40 us a unit with four threads, 2000 at 10 us with three
    assert engine_size("chase", "gem5", 20.0, table, threads=4) == 500
    assert engine_size("chase", "gem5", 20.0, table, threads=3) == 2000


def _setup_spec(tmp_path: Path, extra: str) -> Path:
    (tmp_path / "m.toml").write_text(
        'description = "d"\ncategory = "compute"\n\n[[app]]\nprogram = "contend"\nthreads = 4\n'
    )
    spec = tmp_path / "c.toml"
    spec.write_text(
        'name = "c"\nengine = "gem5"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\n'
        'mixes = ["m.toml"]\nspan_ms = 10\nreferences = ["alone"]\n' + extra
    )
    return spec


def test_a_scaled_campaign_is_not_sized_by_a_table_of_unscaled_runs(tmp_path: Path) -> None:
    from ampkit.campaign.spec import load_spec

    plain = _line_table(10_000)
    scaled = Table("gem5", (), plain.costs, timescale=4, tick_hz=1000)
    (tmp_path / "plain.toml").write_text(plain.render())
    (tmp_path / "scaled.toml").write_text(scaled.render())
    setup = 'kernel = "hz1000"\nappend = "sched_timescale=4"\n'
    with pytest.raises(AmpkitError) as e:
        load_spec(_setup_spec(tmp_path, setup + 'behaviour = "plain.toml"\n'))
    assert "measured at time scale 1, 250 Hz tick" in e.value.what
    assert "the runs are at time scale 4, 1000 Hz tick" in e.value.what
    assert "behaviour" in e.value.what  # the key at fault
    spec = load_spec(_setup_spec(tmp_path, setup + 'behaviour = "scaled.toml"\n'))
    assert spec.sized_by == tmp_path / "scaled.toml"
    assert [a.size for a in spec.mixes[0].apps] == [1000]  # 10 ms at 10 us a unit
    # the same table for the default kernel at scale 4: the tick differs
    with pytest.raises(AmpkitError, match="250 Hz tick"):
        load_spec(
            _setup_spec(tmp_path, 'append = "sched_timescale=4"\nbehaviour = "scaled.toml"\n')
        )
    # a scaled campaign with no table of its own: the shipped one is unscaled
    with pytest.raises(AmpkitError, match="time scale 1, 250 Hz tick"):
        load_spec(_setup_spec(tmp_path, setup))
    with pytest.raises(AmpkitError, match="names no file"):
        load_spec(_setup_spec(tmp_path, setup + 'behaviour = "none.toml"\n'))
    # a campaign that pinned an unscaled table on its first run keeps its sizes
    own = _setup_spec(tmp_path, setup + 'behaviour = "scaled.toml"\n')
    with pytest.raises(AmpkitError) as pinned:
        load_spec(own, behaviour=tmp_path / "plain.toml")
    assert "the table it pinned" in pinned.value.what
    assert "start a new campaign directory" in (pinned.value.hint or "")
    # a table of the campaign's own needs a line of each app's thread count
    three = Table("gem5", (), (replace(plain.costs[0], threads=3),), timescale=4, tick_hz=1000)
    (tmp_path / "three.toml").write_text(three.render())
    with pytest.raises(AmpkitError, match="no gem5 cost line with 4 threads"):
        load_spec(_setup_spec(tmp_path, setup + 'behaviour = "three.toml"\n'))


def test_a_variant_s_tick_is_the_one_its_fragments_choose() -> None:
    from ampkit.kernel import variant_tick_hz

    assert variant_tick_hz("default") == 250
    assert variant_tick_hz("hz1000") == 1000
    with pytest.raises(AmpkitError, match="unknown kernel variant"):
        variant_tick_hz("hz42")


def test_a_single_scaled_run_is_not_sized_by_the_unscaled_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m.toml").write_text(
        'description = "d"\ncategory = "compute"\n\n[[app]]\nprogram = "chase"\nthreads = 3\n'
    )
    args = ["run", "--engine", "gem5", "--policy", "cfs", "--mix", str(tmp_path / "m.toml")]
    assert main([*args, "--span-ms", "10", "--append", "sched_timescale=4"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "measured at time scale 1, 250 Hz tick" in err
    assert "the runs are at time scale 4, 250 Hz tick" in err


EVALUATION = REPO / "evaluations" / "gem5-2B2L" / "runs"


def test_waiting_inside_mixes_is_each_application_s_from_its_kernel_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gem5 evaluation's archived runs: every application of every mix
    run, its blocked share what its threads' counters give, beside the
    campaign's own references alone."""
    rows, alone, left_out = behaviour.waiting_in_mixes([EVALUATION], "gem5")
    assert left_out == []
    assert rows and alone
    assert all(0 <= w.blocked_share <= 1 and 0 <= w.caused_share <= 1 for w in rows)
    assert {w.policy for w in rows} == {"cfs", "colab", "wash"}
    # one by hand: barrier in the cfs run of comm2-pipeline-barrier
    run = "2B2L-cfs-comm2-pipeline-barrier-r0"
    records = [
        json.loads(line)
        for line in (EVALUATION / run / "results.jsonl").read_text().splitlines()
        if '"type":"app"' in line.replace(" ", "")
    ]
    barrier = next(r for r in records if r["app"] == "barrier")
    blocked = sum(t["futex_blocked_ns"] for t in barrier["tasks"])
    share = round(blocked / sum(barrier["thread_times_ns"]), 4)
    found = [w for w in rows if w.run == run and w.program == "barrier"]
    assert [w.blocked_share for w in found] == [pytest.approx(share, abs=5e-5)] and share > 0.1
    # the summary: a line per program, thread count and policy
    lines = behaviour.waiting_summary(rows, alone, None)
    assert len(lines) == len({(w.platform, w.program, w.threads, w.policy) for w in rows})
    # alone beside it: the campaign's own reference, on the same platform
    assert any(
        line.startswith("2B2L pipeline  t3 cfs") and "alone 13.5%" in line for line in lines
    ), lines
    assert any(line.startswith("2B2L barrier   t3 colab") for line in lines)
    # the command, with every application in its CSV
    out = tmp_path / "waiting.csv"
    assert main(["mix", "waiting", str(EVALUATION), "--no-behaviour", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == len(rows) + 1
    printed = capsys.readouterr().out
    assert "2B2L barrier   t3 cfs" in printed
    assert "Each mix's category inside it" in printed
    assert "LOST in 2B2L-colab-comm2-pipeline-compute-r0" in printed
    # programs that wait alone but not inside their mixes are flagged:
    # pipeline waits 13.5% alone on 2B2L with three threads, 2.6-4.7% in
    # the cfs runs of its mixes (its own figures, not the threshold's)
    t3 = [w for w in rows if (w.program, w.threads, w.policy) == ("pipeline", 3, "cfs")]
    assert t3 and max(w.blocked_share for w in t3) < WAITING_SHARE
    flagged = [line for line in lines if "BELOW the 10%" in line]
    assert any(line.startswith("2B2L pipeline  t3 cfs") for line in flagged), lines
    assert not any(line.startswith(("2B2L barrier", "2B2L compute")) for line in flagged)
    # each mix run's category inside it, by the same rule on its own shares
    inside = behaviour.categories_inside(rows)
    assert {v.run for v in inside} == {w.run for w in rows if w.category}
    for v in inside:
        shares = [s for _, s in v.shares]
        if v.category == "compute":
            assert v.holds == (max(shares) < 0.02), v
        else:  # two applications a run: one that waits is enough
            assert len(shares) == 2 and v.holds == (max(shares) >= 0.10), v
    # colab put compute on the big CPUs and pipeline's four threads on the
    # little ones: neither program waited 10% there (pipeline 8.6%)
    colab = next(v for v in inside if v.run == "2B2L-colab-comm2-pipeline-compute-r0")
    assert not colab.holds and max(s for _, s in colab.shares) < WAITING_SHARE
    summary = behaviour.inside_summary(inside)
    assert any(
        "comm2-pipeline-compute colab: communication inside in" in s
        and "LOST in 2B2L-colab-comm2-pipeline-compute-r0 (compute 0.0%, pipeline 8.6%)" in s
        for s in summary
    ), summary
    assert len(summary) == len({(v.platform, v.mix, v.policy) for v in inside})
    # one run's name under two roots: two runs, each judged on its own apps
    name = "2B2L-colab-comm2-pipeline-compute-r0"
    for root in ("one", "two"):
        shutil.copytree(EVALUATION / name, tmp_path / root / name)
    twice, _, _ = behaviour.waiting_in_mixes([tmp_path / "one", tmp_path / "two"], "gem5")
    verdicts = behaviour.categories_inside(twice)
    assert [len(v.shares) for v in verdicts] == [2, 2]
    # runs of one program alone only: nothing to say, and said
    only_alone = tmp_path / "alone"
    shutil.copytree(EVALUATION / alone[0].run, only_alone / alone[0].run)
    assert len(behaviour.waiting_in_mixes([only_alone], "gem5")[1]) == 1
    assert main(["mix", "waiting", str(only_alone), "--no-behaviour"]) == EXIT_INPUT
    assert "no mix run of two programs or more" in capsys.readouterr().err
