"""Collection of run directories and gem5 statistics; the report's files."""

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib.image
import pandas as pd
import pytest

from ampkit import gem5stats
from ampkit.analysis import metrics
from ampkit.analysis import report as report_mod
from ampkit.analysis.collect import collect
from ampkit.analysis.report import likely_cause, write_report
from ampkit.analysis.synthetic import SynthApp, kit_stats_text, write_run
from ampkit.rundir import M5OUT
from ampkit.summary import QEMU_NOTICE

pytestmark = pytest.mark.unit

#: stats.txt of a real gem5 v24 run (see its README)
GEM5_RUN = Path(__file__).resolve().parents[1] / "data" / "gem5-v24-2B2L-atomic"


def test_gem5_text_stats_of_a_real_run() -> None:
    dumps = gem5stats.read_stats(GEM5_RUN)
    assert dumps is not None and len(dumps) == 2
    # from simTicks, not the microsecond-rounded simSeconds line
    assert dumps[0]["simSeconds"] == 112297591500 / 1e12
    rows = gem5stats.cpu_rows(dumps)
    assert len(rows) == 8  # 4 CPUs x 2 dumps
    first = {r["cpu"]: r for r in rows if r["dump"] == 0}
    assert set(first) == {
        "bigCluster.cpus0",
        "bigCluster.cpus1",
        "littleCluster.cpus0",
        "littleCluster.cpus1",
    }
    big0 = first["bigCluster.cpus0"]
    assert big0["cluster"] == "bigCluster"
    assert big0["cycles"] == 224595316
    assert big0["insts"] == 56940951
    assert math.isnan(big0["energy_j"])  # no power model in these runs
    second = {r["cpu"]: r for r in rows if r["dump"] == 1}
    assert second["littleCluster.cpus0"]["insts"] == 6041212
    assert second["littleCluster.cpus0"]["sim_seconds"] == 5095323000 / 1e12


def test_gem5_truncated_stats_are_an_error(tmp_path: Path) -> None:
    text = (GEM5_RUN / "stats.txt").read_text()
    with pytest.raises(gem5stats.StatsError, match="no end marker"):
        gem5stats.parse_text(text[: len(text) // 2])


def _scalar(value: float) -> dict[str, Any]:
    return {"value": value, "type": "Scalar", "unit": "Count", "datatype": "f64"}


def test_gem5_json_stats_with_energy() -> None:
    # the shape of gem5's pystats JSON (see tests/data/gem5-v24-2B2L-run/ for
    # a whole real file): typed nodes, CPUs as a SimObjectVector whose
    # elements carry their names, work items as a Distribution of ticks
    cpu = {
        "type": "SimObject",
        "name": "cpus0",
        "numCycles": _scalar(1000),
        "committedInsts": _scalar(400),
        "power_model": {
            "type": "SimObjectVector",
            "value": [
                {
                    "type": "SimObject",
                    "name": "power_model",
                    "dynamicPower": _scalar(1.5),
                    "staticPower": _scalar(0.5),
                }
            ],
        },
    }
    work = {
        "type": "Distribution",
        "value": {"0": _scalar(1.0), "1": _scalar(2.0)},
        "sum": 9e9,
        "underflow": 0.0,
        "overflow": 0.0,
    }
    dump = {
        "type": "SimObject",
        "simTicks": _scalar(5e11),
        "simFreq": _scalar(1e12),
        "system": {
            "type": "SimObject",
            "work_item_type0": work,
            "bigCluster": {
                "type": "SimObject",
                "cpus": {"type": "SimObjectVector", "value": [cpu]},
            },
        },
    }
    dumps = gem5stats.parse_json(json.dumps([dump, dump]))
    rows = gem5stats.cpu_rows(dumps)
    assert len(rows) == 2
    assert rows[0]["cpu"] == "bigCluster.cpus0" and rows[0]["sim_seconds"] == 0.5
    assert rows[0]["insts"] == 400 and rows[0]["cycles"] == 1000
    assert rows[0]["energy_j"] == pytest.approx((1.5 + 0.5) * 0.5)
    items = gem5stats.summary(dumps)["work_items"]
    assert items == [{"id": 0, "samples": 3, "mean_s": pytest.approx(3e-3)}]


def _campaign(root: Path, **engine: Any) -> None:
    for policy, (a, b) in (("cfs", (20, 40)), ("colab", (15, 40)), ("wash", (20, 30))):
        write_run(
            root,
            **engine,
            platform="2B2L",
            policy=policy,
            mix="pair",
            apps=[
                SynthApp("x", 2, a * 10**6, (a * 10**6, a * 10**6 // 2)),
                SynthApp("y", 1, b * 10**6),
            ],
        )
    write_run(
        root, platform="2B2L", policy="cfs", mix="alone-x", apps=[SynthApp("x", 2, 10**7)], **engine
    )
    write_run(
        root,
        platform="2B2L",
        policy="cfs",
        mix="alone-y",
        apps=[SynthApp("y", 1, 2 * 10**7)],
        **engine,
    )


def test_broken_runs_are_excluded_with_their_reasons(tmp_path: Path) -> None:
    _campaign(tmp_path)
    base = tmp_path / "2B2L-wash-pair-r0"
    broken: dict[str, Callable[[Path], object]] = {
        "truncated": lambda d: (d / "results.jsonl").write_text(
            (d / "results.jsonl").read_text()[:-40]
        ),
        "no-status": lambda d: (d / "status").unlink(),
        "failed": lambda d: (d / "status").write_text("failed: guest timed out\n"),
        "one-app-missing": lambda d: (d / "results.jsonl").write_text(
            (d / "results.jsonl").read_text().splitlines()[0] + "\n"
        ),
        "bad-manifest": lambda d: (d / "manifest.json").write_text("{"),
    }
    for name, damage in broken.items():
        d = tmp_path / "broken" / name
        shutil.copytree(base, d)
        damage(d)
    shutil.copytree(base, tmp_path / "broken" / "killed.partial")
    (tmp_path / "broken" / "killed.partial" / "status").unlink()

    col = collect(tmp_path)
    reasons = dict(zip(col.excluded["run"], col.excluded["reason"], strict=True))
    assert reasons == {
        "broken/truncated": "corrupt: results.jsonl line 2 is not JSON (truncated?)",
        "broken/no-status": "incomplete: no status file (the run did not finish)",
        "broken/failed": "failed: guest timed out",
        "broken/one-app-missing": "incomplete: no result for y#0",
        "broken/bad-manifest": reasons["broken/bad-manifest"],
        "broken/killed.partial": "incomplete: the run did not finish (a .partial directory)",
    }
    assert reasons["broken/bad-manifest"].startswith("corrupt: manifest.json is not JSON")
    # nothing of an excluded run reaches a table a metric reads
    assert not set(col.apps["run"]) & set(reasons)
    assert not set(col.threads["run"]) & set(reasons)
    assert len(col.apps) == 2 * 3 + 2
    assert sorted(col.threads[col.threads["run"] == "2B2L-cfs-pair-r0"]["wall_ns"]) == [
        10**7,
        2 * 10**7,
        4 * 10**7,
    ]


def test_the_report_renders(tmp_path: Path) -> None:
    _campaign(tmp_path / "runs")
    (tmp_path / "runs" / "junk.partial").mkdir()
    report = write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    html = (tmp_path / "report" / "report.html").read_text()
    assert md.startswith(QEMU_NOTICE)
    assert "junk.partial" in md and "junk.partial" in html
    assert '<img alt="h_antt' in html and "data:image/png;base64," in html
    # each link of a number leads to a run directory
    assert "[r0](../runs/2B2L-colab-pair-r0)" in md
    # 1 mix + the geomean group, 2 policies besides cfs: 4 bars
    for name in ("h_antt", "h_stp", "fairness", "unfairness"):
        assert report.plots[f"qemu-2B2L-{name}.png"] == 4
    # 2 applications x 3 policies
    assert report.plots["qemu-2B2L-slowdowns.png"] == 6
    for png in (tmp_path / "report" / "plots").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert matplotlib.image.imread(png).ndim == 3
    assert json.loads((tmp_path / "report" / "plots" / "plots.json").read_text()) == report.plots
    # colab: x 1.5, y 2 -> h_antt 1.75; cfs: x 2, y 2 -> 2.0
    assert "| pair | colab | 1.75 |" in md
    # beside the slowdowns, the turnarounds they divide (no region: the process's)
    assert "| pair | x#0 (process) | colab | 1 | 15 | 10 | 1.5 |" in md
    assert "| pair | y#0 (process) | wash | 1 | 30 | 20 | 1.5 |" in md
    for table in ("apps", "threads", "runs", "summary", "per_run", "slowdowns"):
        assert (tmp_path / "report" / "tables" / f"{table}.csv").is_file()
        assert (tmp_path / "report" / "tables" / f"{table}.parquet").is_file()


def test_the_report_splits_energy_by_component(tmp_path: Path) -> None:
    """gem5 runs with power models and DRAM: the report's energy table has
    the CPUs', the L2s' and the DRAM's parts beside their sum, and both
    EDPs are normalised metrics."""
    _campaign(tmp_path / "runs", **GEM5)
    stats = (Path(__file__).parent / "data" / "stats-with-dram.txt").read_text()
    for run in (tmp_path / "runs").iterdir():
        (m5out(run) / "stats.txt").write_text(kit_stats_text(stats))
    write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Energy by component" in md
    # (0.65 W) x 2 ms CPUs, (0.15 W) x 2 ms L2, 0.4 mJ DRAM: 2.0 mJ
    assert "| pair | colab | 0.0013 | 0.0003 | 0.0004 | 0.002 |" in md
    per_run = pd.read_csv(tmp_path / "report" / "tables" / "per_run.csv")
    assert per_run["energy_j"].round(6).eq(0.002).all()
    assert {"edp", "edp_per_inst", "energy_per_inst"} <= set(per_run.columns)
    assert "edp_per_inst" in md


def test_a_missing_reference_is_an_error_naming_it(tmp_path: Path) -> None:
    _campaign(tmp_path)
    shutil.rmtree(tmp_path / "2B2L-cfs-alone-y-r0")
    with pytest.raises(metrics.MissingReference, match="qemu 2B2L: y/1 alone under cfs"):
        write_report(tmp_path, tmp_path / "report")


def m5out(run: Path) -> Path:
    """A run directory's gem5 output directory, made."""
    (run / M5OUT).mkdir(exist_ok=True)
    return run / M5OUT


#: What a gem5 run's manifest records of its engine.
GEM5: dict[str, Any] = {"engine": "gem5", "statistics": True, "timing_notice": None}


def test_a_gem5_run_brings_its_cpu_rows(tmp_path: Path) -> None:
    apps = [SynthApp("x", 1, 10**7)]
    with_stats = write_run(tmp_path, platform="2B2L", policy="cfs", mix="a", apps=apps, **GEM5)
    # the real run's two dumps laid out as a kit run's four: its second
    # (the run) measured, its first (the boot) in the other places
    real = (GEM5_RUN / "stats.txt").read_text()
    (m5out(with_stats) / "stats.txt").write_text(kit_stats_text(real, measured=1))
    write_run(tmp_path, platform="2B2L", policy="colab", mix="a", apps=apps, **GEM5)
    # a run whose statistics stop short of the measured interval's dump
    short = write_run(tmp_path, platform="2B2L", policy="wash", mix="a", apps=apps, **GEM5)
    shutil.copy(GEM5_RUN / "stats.txt", m5out(short) / "stats.txt")
    # one made before the measured-interval dump: its manifest has no layout
    old = write_run(tmp_path, platform="2B2L", policy="wash", mix="b", apps=apps, **GEM5)
    shutil.copy(GEM5_RUN / "stats.txt", m5out(old) / "stats.txt")
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["engine"]["stats_dumps"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    col = collect(tmp_path)
    assert col.excluded[["run", "reason"]].values.tolist() == [
        ["2B2L-colab-a-r0", "incomplete: a gem5 run without its statistics"],
        [
            "2B2L-wash-a-r0",
            "corrupt: gem5 stats: 2 statistics dumps where a run that reached its end "
            "writes 4 (restore, start, measured, exit): the measured interval is unknown",
        ],
        [
            "2B2L-wash-b-r0",
            "outdated: a gem5 run of 2 statistics dumps, made before the runner dumped "
            "its measured interval; run it again",
        ],
    ]
    assert len(col.cpus) == 4 * 4
    assert set(col.cpus["run"]) == {"2B2L-cfs-a-r0"}
    assert set(col.cpus["cluster"]) == {"bigCluster", "littleCluster"}
    # committed instructions of the four CPUs, per dump, as stats.txt lists them
    boot = 56940951 + 1763393 + 400945 + 1722686
    run = 6186843 + 6038918 + 6041212 + 6041197
    assert col.cpus.groupby("dump")["insts"].sum().tolist() == [boot, boot, run, boot]
    assert col.cpus[col.cpus["measured"]]["insts"].sum() == run
    # per cluster, from the measured dump: no power models in these runs
    clusters = col.clusters.set_index("cluster")
    assert clusters.loc["bigCluster", "insts"] == 6186843 + 6038918
    assert clusters["cpus"].tolist() == [2, 2] and clusters["energy_j"].isna().all()


def test_energy_per_run_counts_the_l2s_where_collected() -> None:
    run: dict[str, object] = {"engine": "gem5", "platform": "2B2L", "policy": "cfs", "mix": "m"}
    run |= {"repetition": 0, "run": "r"}
    apps = pd.DataFrame(
        [{**run, "app": a, "instance": 0, "slowdown": 1.0, "turnaround_ns": 2e9} for a in "xy"]
    )
    threads = pd.DataFrame([{"run": "r", "app": a, "instance": 0, "wall_ns": 1.0} for a in "xy"])
    cpus = pd.DataFrame([{"run": "r", "energy_j": 1.0}, {"run": "r", "energy_j": 2.0}])
    clusters = pd.DataFrame([{"run": "r", "energy_j": 1.5}, {"run": "r", "energy_j": 2.5}])
    assert metrics.per_run(apps, threads, cpus).loc[0, "energy_j"] == 3.0
    with_l2 = metrics.per_run(apps, threads, cpus, clusters).loc[0]
    assert with_l2["energy_j"] == 4.0 and with_l2["edp"] == 8.0


def test_energy_per_run_adds_the_dram_and_gives_both_edps() -> None:
    """Worked by hand: CPUs 3 J and L2s 1 J in two clusters, DRAM 2 J, so
    6 J; a makespan of 2 s gives EDP 12 J s, and with 4e9 instructions
    Saez et al.'s form 12 / 4e9 J s per instruction. A run without DRAM
    rows, where others have them, has no energy rather than a smaller one."""
    base: dict[str, object] = {"engine": "gem5", "platform": "2B2L", "policy": "cfs", "mix": "m"}
    apps = pd.DataFrame(
        [
            {**base, "repetition": rep, "run": run, "app": a, "instance": 0}
            | {"slowdown": 1.0, "turnaround_ns": 2e9}
            for rep, run in enumerate(("r", "s"))
            for a in "xy"
        ]
    )
    threads = pd.DataFrame(
        [{"run": r, "app": a, "instance": 0, "wall_ns": 1.0} for r in "rs" for a in "xy"]
    )
    clusters = pd.DataFrame(
        [
            {"run": r, "cpu_energy_j": c, "l2_energy_j": l2, "energy_j": c + l2, "insts": i}
            for r in "rs"
            for c, l2, i in ((2.0, 0.75, 3e9), (1.0, 0.25, 1e9))
        ]
    )
    memory = pd.DataFrame([{"run": "r", "memory": "mem_ctrls", "energy_j": 2.0}])
    runs = metrics.per_run(apps, threads, None, clusters, memory).set_index("run")
    r = runs.loc["r"]
    assert (r["cpu_energy_j"], r["l2_energy_j"], r["dram_energy_j"]) == (3.0, 1.0, 2.0)
    assert r["energy_j"] == 6.0 and r["edp"] == 12.0
    assert r["edp_per_inst"] == pytest.approx(12.0 / 4e9)
    assert r["energy_per_inst"] == pytest.approx(6.0 / 4e9 * 1e9)  # nJ
    other = runs[runs.index == "s"]
    assert len(other) == 1 and other["energy_j"].isna().all() and other["edp"].isna().all()


def test_kernel_counters_give_big_shares_by_class_and_bottlenecks(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _campaign(runs)
    tasks = [
        {"tid": 11, "comm": "x", "class": "big", "big_ns": 30, "little_ns": 10, "bottleneck": 0},
        {
            "tid": 12,
            "comm": "x",
            "class": "little",
            "big_ns": 5,
            "little_ns": 15,
            "bottleneck": 1,
            "caused_ns": 777,
        },
    ]
    write_run(
        runs / "more",
        platform="2B2L",
        policy="colab",
        mix="pair",
        apps=[SynthApp("x", 2, 15 * 10**6, tasks=tasks), SynthApp("y", 1, 40 * 10**6)],
        repetition=1,
    )
    report = write_report(runs, tmp_path / "report")
    assert len(report.collection.tasks) == 2
    md = (tmp_path / "report" / "report.md").read_text()
    # big: 30 / (30 + 10); little: 5 / (5 + 15)
    assert "| 2B2L | colab | big | 0.75 |" in md
    assert "| 2B2L | colab | little | 0.25 |" in md
    assert "777" in md  # the bottleneck thread and the waiting it caused
    assert report.plots["kernel-big-share.png"] == 2


def test_flagged_time_and_moves_between_sides_are_reported_per_policy_and_mix(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    _campaign(runs)
    ms = 10**6
    counted = {"comm": "x", "class": "big", "futex_blocked_ns": 0, "futex_caused_ns": 0}
    for policy, tasks in (
        # colab flagged one thread for 10 of its 40 ms; it crossed sides 3 times
        (
            "colab",
            [
                {
                    **counted,
                    "big_ns": 30 * ms,
                    "little_ns": 10 * ms,
                    "flagged_ns": 10 * ms,
                    "cluster_moves": 3,
                },
                {**counted, "big_ns": 40 * ms, "little_ns": 0, "flagged_ns": 0, "cluster_moves": 1},
            ],
        ),
        # cfs flags no one, and moved one thread once
        (
            "cfs",
            [
                {**counted, "big_ns": 0, "little_ns": 40 * ms, "flagged_ns": 0, "cluster_moves": 0},
                {
                    **counted,
                    "big_ns": 20 * ms,
                    "little_ns": 20 * ms,
                    "flagged_ns": 0,
                    "cluster_moves": 1,
                },
            ],
        ),
    ):
        write_run(
            runs / f"k-{policy}",
            platform="2B2L",
            policy=policy,
            mix="pair",
            apps=[SynthApp("x", 2, 15 * ms, tasks=tasks), SynthApp("y", 1, 40 * ms)],
            repetition=1,
        )
    write_report(runs, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Bottlenecks flagged, and moves between big and little CPUs" in md
    # threads, flagged threads, flagged ms, flagged share, moves a thread, moves per second
    assert "| 2B2L | colab | pair | 2 | 1 | 10 | 0.125 | 2 | 50 |" in md, md
    assert "| 2B2L | cfs | pair | 2 | 0 | 0 | 0 | 0.5 | 12.5 |" in md, md


def test_single_type_platforms_count_their_cpus_by_the_platform_description(
    tmp_path: Path,
) -> None:
    """On 0B2L the guest kernel counts every CPU as big (Linux rescales a
    single core type to 1024); the report counts them as the little CPUs
    the platform says they are, and 2B0L's as big."""
    runs = tmp_path / "runs"
    _campaign(runs)
    guest_says = [{"tid": 1, "comm": "x", "class": "big", "big_ns": 40, "little_ns": 0}]
    for plat in ("0B2L", "2B0L"):
        for mix, policy in (("pair", "colab"), ("pair", "cfs")):
            write_run(
                runs / plat,
                platform=plat,
                policy=policy,
                mix=mix,
                apps=[SynthApp("x", 2, 15 * 10**6, tasks=guest_says), SynthApp("y", 1, 10**7)],
            )
        for name, app in (
            ("alone-x", SynthApp("x", 2, 10**7)),
            ("alone-y", SynthApp("y", 1, 10**7)),
        ):
            write_run(runs / plat, platform=plat, policy="cfs", mix=name, apps=[app])
    write_report(runs, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "| 0B2L | colab | big | 0 |" in md
    assert "| 2B0L | colab | big | 1 |" in md


def test_report_numbers_round_halves_up_and_excluded_runs_are_named(tmp_path: Path) -> None:
    assert report_mod._fmt(1.125) == "1.13"  # not 1.12, Python's round-half-to-even
    assert report_mod._fmt(-2.675) == "-2.68"
    assert report_mod._fmt(12344.5) == "1.234e+04"
    runs = tmp_path / "runs"
    _campaign(runs)
    for rep in (1, 2):
        failed = write_run(
            runs, platform="2B2L", policy="colab", mix="pair", repetition=rep,
            apps=[SynthApp("x", 2, 10**7), SynthApp("y", 1, 10**7)], status="failed: boom",
        )  # fmt: skip
        assert failed.name == f"2B2L-colab-pair-r{rep}"
    write_report(runs, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "[2B2L-colab-pair-r1](../runs/2B2L-colab-pair-r1)" in md
    assert "[2B2L-colab-pair-r2](../runs/2B2L-colab-pair-r2)" in md


def test_without_pyarrow_the_tables_are_csv_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow is an extra: collect and report write CSV and no Parquet."""
    from ampkit.analysis import collect as collect_mod

    monkeypatch.setattr(collect_mod, "PARQUET", False)
    monkeypatch.setattr(report_mod, "PARQUET", False)
    runs = tmp_path / "runs"
    _campaign(runs)
    write_report(runs, tmp_path / "report")
    tables = tmp_path / "report" / "tables"
    assert (tables / "summary.csv").is_file() and (tables / "apps.csv").is_file()
    assert not list(tables.glob("*.parquet"))


def test_a_slowdown_below_one_is_shown_with_its_likely_causes(tmp_path: Path) -> None:
    """x ran faster in the colab mix (9 ms) than alone (10 ms): the report
    lists it, with what such a slowdown can mean, rather than only
    averaging it in."""
    _campaign(tmp_path / "runs")
    for policy, x_ms in (("cfs", 20), ("colab", 9)):
        write_run(
            tmp_path / "runs",
            platform="2B2L",
            policy=policy,
            mix="fast",
            apps=[SynthApp("x", 2, x_ms * 10**6), SynthApp("y", 1, 40 * 10**6)],
        )
    write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    section = md[md.index("## Slowdowns below 1") :]
    assert "1 application runs finished faster in their mix than alone" in section
    assert "| qemu 2B2L | fast | colab | x#0 | 0.9 | process |" in section
    # beside it, its reference alone: 10 ms, two threads busy all along, no counters
    assert "| x#0 | 0.9 | process | 10 | 2 | - | - / - |" in section
    assert "scales negatively" in section
    # and the first cause its reference shows: no region, so timed whole
    assert "| reference timed with start-up and self-check (no region) |" in section


def test_a_slowdown_below_one_gets_the_first_cause_its_reference_shows() -> None:
    """In the order a reader rules them out: the reference's timing, its
    length against PELT's ramp at its time scale, the program's waiting on
    itself alone; else none of these, and the reader is sent to its
    scaling."""
    region = {"timed_by": "region", "timescale": 1, "threads": 4}
    # under three half-lives: 30 ms unscaled (32.8 ms each), 20 ms at a
    # scale of 4 (8.2 ms each); 30 ms at 4 is 3.7 and counts as long enough
    assert likely_cause({**region, "timed_by": "process"}, 500.0, 4.0, 0.0).startswith(
        "reference timed with start-up"
    )
    assert likely_cause(region, 30.0, 4.0, 0.0) == (
        "reference short: 0.9 PELT half-lives, not at steady state"
    )
    assert likely_cause({**region, "timescale": 4}, 20.0, 4.0, 0.0) == (
        "reference short: 2.4 PELT half-lives, not at steady state"
    )
    assert likely_cause({**region, "timescale": 4}, 30.0, 4.0, 0.0).startswith("none the")
    # long enough: a program that kept 1.2 of its 4 threads busy, blocked 40%
    waits = likely_cause({**region, "timescale": 4}, 60.0, 1.2, 0.4)
    assert (
        waits
        == "waits on itself alone (40% blocked, 1.2 of 4 threads busy): negative scaling likely"
    )
    # busy and not waiting: nothing the reference shows
    assert likely_cause({**region, "timescale": 4}, 60.0, 3.9, 0.4).startswith("none the reference")
    assert likely_cause({**region, "timescale": 4}, 60.0, 1.2, 0.05).startswith(
        "none the reference"
    )
    # no time scale recorded: unscaled
    assert "0.9 PELT" in likely_cause({**region, "timescale": float("nan")}, 30.0, 4.0, 0.0)
    # placed better in the mix: 0.15 more of its run time on big CPUs than
    # alone comes before waiting on itself; less, or unknown, does not count
    long = {**region, "timescale": 4}
    assert likely_cause(long, 60.0, 1.2, 0.4, big_here=0.68, big_alone=0.37) == (
        "placed better than alone: 68% of its threads' run time on big CPUs here, "
        "37% alone under the reference"
    )
    assert likely_cause(long, 60.0, 1.2, 0.4, big_here=0.5, big_alone=0.37).startswith("waits")
    assert likely_cause(long, 60.0, 1.2, 0.4, big_here=0.9).startswith("waits")
    # the short reference is still ruled out first
    assert likely_cause(region, 30.0, 4.0, 0.0, big_here=1.0, big_alone=0.0).startswith(
        "reference short"
    )


def test_no_slowdown_below_one_is_said_so(tmp_path: Path) -> None:
    _campaign(tmp_path / "runs")
    write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "None: no application ran faster in a mix than alone." in md


def test_each_run_is_counted_against_the_clocks_of_its_own_setup(tmp_path: Path) -> None:
    """A run's measured interval over the tick, COLAB's period and WASH's
    quantum as its guest read them (unscaled, divided by the time scale)
    and PELT's half-life; the kernel's defaults where the guest read none."""
    runs = tmp_path / "runs"
    scaled = write_run(
        runs,
        platform="2B2L",
        policy="colab",
        mix="m",
        apps=[
            SynthApp("a", 2, turnaround_ns=20_000_000),
            SynthApp("b", 2, turnaround_ns=12_000_000),
        ],
        cmdline="console=ttyAMA0 sched_timescale=4",
        tick_hz=1000,
    )
    knobs = {"sched_colab_rank_period_ms": 10, "sched_wash_quantum_ms": 40, "sched_timescale": 4}
    (scaled / "guest.json").write_text(json.dumps({"amp": {"policy": "colab", "knobs": knobs}}))
    write_run(
        runs,
        platform="2B2L",
        policy="cfs",
        mix="m",
        apps=[
            SynthApp("a", 2, turnaround_ns=100_000_000),
            SynthApp("b", 2, turnaround_ns=1_000_000),
        ],
    )
    # at scale 4 on the 250 Hz tick, COLAB's 2.5 ms is two ticks, 8 ms (patch 0032)
    slow_tick = write_run(
        runs,
        platform="2B2L",
        policy="wash",
        mix="m",
        apps=[SynthApp("a", 2, turnaround_ns=40_000_000)],
        cmdline="sched_timescale=4",
    )
    knobs = {"sched_colab_rank_period_ms": 10, "sched_wash_quantum_ms": 40, "sched_timescale": 2}
    knobs["sched_colab_stats"] = 1
    (slow_tick / "guest.json").write_text(json.dumps({"amp": {"knobs": knobs}}))
    col = collect(runs)
    # whether the kernel kept its per-task counters, as the guest read it
    kept = col.runs.set_index("policy")["counters"]
    assert kept["wash"] == 1.0 and pd.isna(kept["colab"]) and pd.isna(kept["cfs"])
    spans = report_mod.clocks_spanned(col).set_index("policy")
    w = spans.loc["wash"]
    assert w["colab_periods"] == pytest.approx(40 / 8) and w["wash_quanta"] == pytest.approx(4)
    assert bool(w["scale_disagrees"]) and not bool(spans.loc["colab", "scale_disagrees"])
    s = spans.loc["colab"]
    assert (s["colab_rank_period_ms"], s["wash_quantum_ms"]) == (10.0, 40.0)
    assert s["run_ms"] == 20.0 and s["ticks"] == pytest.approx(20.0)
    assert s["colab_periods"] == pytest.approx(20 / (10 / 4))  # 8
    assert s["wash_quanta"] == pytest.approx(20 / (40 / 4))  # 2
    assert s["pelt_halflives"] == pytest.approx(20 / (32.768 / 4))
    assert bool(s["knobs_read"])
    # no knobs recorded: the defaults, unscaled, at 250 Hz
    p = spans.loc["cfs"]
    assert pd.isna(p["colab_rank_period_ms"]) and not bool(p["knobs_read"])
    assert (p["run_ms"], p["ticks"], p["colab_periods"]) == (100.0, 25.0, 10.0)
    assert p["wash_quanta"] == pytest.approx(2.5) and p["pelt_halflives"] == pytest.approx(
        100 / 32.768
    )

    doc = report_mod.Doc()
    report_mod._clocks_section(doc, report_mod.clocks_spanned(col))
    section = doc.markdown(tmp_path)
    assert "1 runs did not record their kernel's periods" in section
    row = "| m | colab | 1 | 20 | 20 | 8 | 2 | 2.44 | COLAB periods, WASH quanta, PELT half-lives |"
    assert row in section
    assert "| m | cfs | 1 | 100 | 25 | 10 | 2.5 | 3.05 | WASH quanta, PELT half-lives |" in section
    assert "differs from the scale its command line asks for" in section


def test_what_the_runs_cost_by_role_policy_and_platform(tmp_path: Path) -> None:
    apps = [SynthApp("x", 1, 10**7), SynthApp("y", 1, 10**7)]
    x, y = [SynthApp("x", 1, 10**7)], [SynthApp("y", 1, 10**7)]
    # a gem5 run with its statistics: wall seconds per simulated ms of its
    # measured interval, as its measured dump gives the interval
    timed = write_run(
        tmp_path / "gem5",
        platform="2B2L",
        policy="cfs",
        mix="alone-x-t1-10",
        apps=x,
        wall_s=900.0,
        **GEM5,
    )
    (m5out(timed) / "stats.txt").write_text(
        kit_stats_text((GEM5_RUN / "stats.txt").read_text(), measured=1)
    )
    # ... which booted its checkpoint first: 360 s more
    manifest = json.loads((timed / "manifest.json").read_text())
    manifest["gem5"] = {"checkpoint_reused": False, "boot_wall_s": 360.0}
    (timed / "manifest.json").write_text(json.dumps(manifest))
    q = tmp_path / "qemu"
    write_run(q, platform="2B2L", policy="cfs", mix="a", apps=apps, wall_s=150.0)
    write_run(q, platform="2B2L", policy="colab", mix="a", apps=apps, wall_s=300.0)
    write_run(
        q,
        platform="2B2L",
        policy="colab",
        mix="a",
        apps=apps,
        wall_s=100.0,
        repetition=1,
        status="failed",
    )
    write_run(q, platform="2B2L", policy="cfs", mix="alone-x-t1-10", apps=x, wall_s=60)
    write_run(q, platform="2B2L", policy="cfs", mix="alone-y-t1-10", apps=y, wall_s=40)
    write_run(q, platform="0B2L", policy="cfs", mix="alone-x-t1-10", apps=x, wall_s=20)
    write_run(q, platform="2B0L", policy="cfs", mix="alone-x-t1-10", apps=x, wall_s=10)
    col = collect(tmp_path)
    costs = report_mod.run_costs(col).set_index("run")
    assert costs["role"].to_dict() == {
        "gem5/2B2L-cfs-alone-x-t1-10-r0": "reference alone",
        "qemu/2B2L-cfs-a-r0": "matrix",
        "qemu/2B2L-colab-a-r0": "matrix",
        "qemu/2B2L-colab-a-r1": "matrix",
        "qemu/2B2L-cfs-alone-x-t1-10-r0": "reference alone",
        "qemu/2B2L-cfs-alone-y-t1-10-r0": "reference alone",
        "qemu/0B2L-cfs-alone-x-t1-10-r0": "reference, little CPUs only",
        "qemu/2B0L-cfs-alone-x-t1-10-r0": "reference, big CPUs only",
    }
    # the failed run costs what it took, and counts in no metric
    assert costs.loc["qemu/2B2L-colab-a-r1", "wall_s"] == 100.0
    assert not costs.loc["qemu/2B2L-colab-a-r1", "included"]
    measured = col.cpus[col.cpus["measured"]]["sim_seconds"].max()
    assert measured > 0
    per_ms = costs.loc["gem5/2B2L-cfs-alone-x-t1-10-r0", "wall_s_per_sim_ms"]
    assert per_ms == pytest.approx(900 / (measured * 1e3))
    assert costs["wall_s_per_sim_ms"].isna()["qemu/2B2L-colab-a-r0"]  # no statistics

    write_report(tmp_path, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    section = md[md.index("## What the runs cost") : md.index("## Excluded runs")]
    # colab on 2B2L: two runs, one excluded, 400 s = 0.11 h, 200 s a run
    assert "| matrix | colab | 2B2L | 2 | 1 | 0.11 | 0.00 | 200 | 100-300 |" in section
    # references alone under cfs on 2B2L: 900 + 60 + 40 s
    assert "| reference alone | cfs | 2B2L | 3 | 0 | 0.28 | 0.10 | 333 | 40-900 |" in section
    assert "| all |  |  | 8 | 1 | 0.44 | 0.10 | 198 | 10-900 |" in section
    again = pd.read_csv(tmp_path / "report" / "tables" / "cost.csv")
    assert again["wall_s"].sum() == 1580.0 and again["boot_wall_s"].sum() == 360.0


def test_means_over_mixes_are_given_per_declared_category() -> None:
    def row(policy: str, mix: str, metric: str, normalised: float) -> dict[str, Any]:
        setup = {"engine": "gem5", "platform": "2B2L", "timescale": 4, "tick_hz": 1000}
        return {**setup, "policy": policy, "mix": mix, "metric": metric, "normalised": normalised}

    summary = pd.DataFrame(
        [
            row("colab", "s1", "h_antt", 0.8),
            row("colab", "s2", "h_antt", 0.5),
            row("colab", "c1", "h_antt", 1.1),
            row("colab", "s1", "fairness", 0.2),
            row("colab", "s2", "fairness", -0.4),
            row("colab", "u", "h_antt", 0.1),  # a mix no run declares a category for
        ]
    )
    runs = pd.DataFrame(
        {
            "mix": ["s1", "s2", "c1", "u"],
            "category": ["synchronisation", "synchronisation", "compute", None],
        }
    )
    g = report_mod.category_geomeans(summary, runs)
    by = g.set_index(["category", "metric"])
    # geometric for h_antt, arithmetic for fairness (it can be negative)
    assert by.loc[("synchronisation", "h_antt"), "across_mixes"] == pytest.approx(math.sqrt(0.4))
    assert by.loc[("synchronisation", "fairness"), "across_mixes"] == pytest.approx(-0.1)
    assert by.loc[("compute", "h_antt"), "across_mixes"] == pytest.approx(1.1)
    assert by.loc[("synchronisation", "h_antt"), "mixes"] == 2
    assert set(g["category"]) == {"synchronisation", "compute"}
    assert report_mod.category_geomeans(summary, runs.assign(category=None)).empty


def test_the_report_gives_mean_turnarounds_and_flags_gains_beyond_the_paper(
    tmp_path: Path,
) -> None:
    # x alone 10 ms; in the mix 30 ms under cfs, 12 and 18 ms under colab
    # (two repetitions: mean 15, slowdown 1.5 against cfs's 3)
    for policy, rep, turnaround in (("cfs", 0, 30), ("colab", 0, 12), ("colab", 1, 18)):
        write_run(
            tmp_path,
            platform="2B2L",
            policy=policy,
            mix="m",
            repetition=rep,
            apps=[SynthApp("x", 1, turnaround * 10**6), SynthApp("y", 1, 20 * 10**6)],
        )
    write_run(
        tmp_path, platform="2B2L", policy="cfs", mix="alone-x", apps=[SynthApp("x", 1, 10**7)]
    )
    write_run(
        tmp_path, platform="2B2L", policy="cfs", mix="alone-y", apps=[SynthApp("y", 1, 2 * 10**7)]
    )
    write_report(tmp_path, tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "| m | x#0 (process) | colab | 2 | 15 | 10 | 1.5 |" in md
    assert report_mod.PAPER_COLAB_TEXT in md
    # h_antt: colab (1.5 + 1) / 2 = 1.25 against cfs (3 + 1) / 2 = 2: 0.625
    assert "colab's h_antt mean under 0.75 of cfs): all mixes 0.625" in md
    # against another reference the paper's figures do not apply
    g = pd.DataFrame({"policy": ["colab"], "metric": ["h_antt"], "across_mixes": [0.5]})
    doc = report_mod.Doc()
    report_mod._paper_range(doc, g, "wash")
    assert doc.blocks == []
    report_mod._paper_range(doc, g, "cfs")
    assert len(doc.blocks) == 2


def test_each_policys_periodic_work_is_collected_and_reported_under_its_runs(
    tmp_path: Path,
) -> None:
    """The growth of COLAB's and WASH's counters over a run (guest.json's
    knobs before the run and after the mix) reaches the runs table and the
    report, per policy and mix, each policy's counters under its own runs."""
    runs = tmp_path / "runs"
    _campaign(runs)  # the pair mix's runs, which recorded no counters, and the references
    colab_work = "periods {} cpu_ns 0 swaps {} moves {} pulls {}"
    wash_work = "quanta {} cpu_ns 0 wall_ns 0 binds {} unbinds 1 fork_copy 0 fences 0"
    for policy, rep, colab_after, wash_after in (
        ("colab", 0, colab_work.format(41, 2, 1, 100), wash_work.format(0, 0)),
        ("colab", 1, colab_work.format(21, 4, 1, 50), wash_work.format(0, 0)),
        ("wash", 0, colab_work.format(1, 0, 0, 0), wash_work.format(9, 6)),
        ("cfs", 0, colab_work.format(1, 0, 0, 0), wash_work.format(0, 0)),
    ):
        run = write_run(
            runs,
            platform="2B2L",
            policy=policy,
            mix="m",
            repetition=rep,
            apps=[SynthApp("x", 2, 2 * 10**7), SynthApp("y", 1, 3 * 10**7)],
        )
        before = {"sched_colab_work": colab_work.format(1, 0, 0, 0)}
        before["sched_wash_stats"] = wash_work.format(0, 0).replace("unbinds 1", "unbinds 0")
        after = {"sched_colab_work": colab_after, "sched_wash_stats": wash_after}
        amp = {"policy": policy, "knobs": before, "knobs_after": after}
        (run / "guest.json").write_text(json.dumps({"amp": amp}))
    col = collect(runs)
    by = {(r["policy"], r["mix"], r["repetition"]): r for r in col.runs.to_dict("records")}
    assert by[("colab", "m", 1)]["colab_pulls"] == 50
    assert by[("wash", "m", 0)]["wash_binds"] == 6
    assert math.isnan(by[("colab", "pair", 0)]["colab_pulls"])  # recorded none
    work = {(r["policy"], r["mix"]): r for r in report_mod.policy_work(col).to_dict("records")}
    # COLAB's under colab's runs (the runs that recorded none left out),
    # WASH's under wash's; cfs has no periodic step of its own
    assert set(work) == {("colab", "m"), ("wash", "m")}
    colab = work[("colab", "m")]
    assert (colab["runs"], colab["periods"], colab["swaps"]) == (2, 30, 3)
    assert (colab["moves"], colab["pulls"]) == (1, 75)
    assert math.isnan(colab["binds"])
    wash = work[("wash", "m")]
    assert (wash["runs"], wash["quanta"], wash["binds"], wash["unbinds"]) == (1, 9, 6, 1)
    out = tmp_path / "report"
    write_report(runs, out)
    text = (out / "report.md").read_text()
    assert "What each policy's periodic step did" in text
    assert "| 2B2L | colab | m | 2 | 30 | 3 | 1 | 75 |" in text
    assert (out / "tables" / "policy_work.csv").is_file()


def test_the_daemons_cpu_time_is_reported_as_a_share_of_the_machine(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _campaign(runs)
    run = write_run(
        runs,
        platform="2B2L",
        policy="sfd",
        mix="pair",
        apps=[SynthApp("x", 2, 10**7), SynthApp("y", 1, 2 * 10**7)],
    )
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["daemons"] = [{"type": "daemon", "daemon": "ampkit-contention", "cpu_ns": 4_000_000}]
    (run / "manifest.json").write_text(json.dumps(manifest))
    col = collect(runs)
    by = {r["policy"]: r for r in col.runs.to_dict("records")}
    assert by["sfd"]["daemon_cpu_ns"] == 4_000_000 and math.isnan(by["cfs"]["daemon_cpu_ns"])
    shares = report_mod.daemon_shares(col)
    # 4 ms of CPU over a 20 ms interval on 4 CPUs: 5% of the machine
    assert shares.to_dict("records") == [
        {"platform": "2B2L", "policy": "sfd", "mix": "pair", "size": 1, "mean": 0.05, "max": 0.05}
    ]
    write_report(runs, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| 2B2L | sfd | pair | 1 | 5.00% | 5.00% |" in text


def test_the_contention_policys_models_and_their_held_out_errors_are_reported(
    tmp_path: Path,
) -> None:
    """A run of contention records the model file it was handed and S
    (policy_details.interference); the report names the file by digest
    beside its held-out errors, and a file without the co-runner figure
    leaves that cell blank."""
    runs = tmp_path / "runs"
    _campaign(runs)
    for rep, co_runner in ((0, 0.052), (1, None)):
        run = write_run(
            runs,
            platform="2B2L",
            policy="contention",
            mix="pair",
            repetition=rep,
            apps=[SynthApp("x", 2, 10**7), SynthApp("y", 1, 2 * 10**7)],
        )
        manifest = json.loads((run / "manifest.json").read_text())
        provenance = {
            "held_out_co_run_mean_abs_points": 2.5,
            "held_out_co_run_mean_time_error": 0.021,
        }
        if co_runner is not None:
            provenance["held_out_co_runner_mean_time_error"] = co_runner
        manifest["policy_details"] = {
            "kernel_policy": "cfs",
            "interference": {
                "models_sha256": f"{rep}" * 64,
                "threshold_pct": 30.0,
                "provenance": provenance,
            },
        }
        (run / "manifest.json").write_text(json.dumps(manifest))
    col = collect(runs)
    by = {(r["policy"], r["repetition"]): r for r in col.runs.to_dict("records")}
    assert by[("contention", 0)]["held_out_co_runner_time_error"] == 0.052
    assert math.isnan(by[("contention", 1)]["held_out_co_runner_time_error"])
    assert math.isnan(by[("cfs", 0)]["threshold_pct"])
    models = report_mod.interference_models(col)
    assert sorted(models["runs"]) == [1, 1] and set(models["threshold_pct"]) == {30.0}
    write_report(runs, tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Interference models (contention)" in text
    assert "| 2B2L | 000000000000 | 30 | 1 | 2.5 | 2.1% | 5.2% |" in text
    assert "| 2B2L | 111111111111 | 30 | 1 | 2.5 | 2.1% |  |" in text
