"""One real gem5 run of the kit, kept as data (tests/data/gem5-v24-2B2L-run/,
its README says how it was made): the parsers and the collection against
what gem5 and the guest really wrote, on machines without gem5."""

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from ampkit import gem5stats
from ampkit.analysis.collect import collect
from ampkit.console import parse_console
from tests.gem5ini import check_cores

RUN = Path(__file__).parents[1] / "data" / "gem5-v24-2B2L-run"
CPUS = {"bigCluster.cpus0", "bigCluster.cpus1", "littleCluster.cpus0", "littleCluster.cpus1"}


def _summary(run_dir: Path) -> dict[str, Any]:
    dumps = gem5stats.read_stats(run_dir / "m5out")
    assert dumps is not None
    return gem5stats.run_summary(dumps)


def _assert_close(a: Any, b: Any, where: str = "") -> None:
    """Equal structures whose numbers agree to a part in 10^4."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            _assert_close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-4), where
    else:
        assert a == b, where


def test_the_stats_give_what_the_engine_recorded() -> None:
    s = _summary(RUN)  # m5out/stats.txt.xz
    # recorded when simSeconds came from its rounded line, not the ticks
    recorded = json.loads((RUN / "gem5.json").read_text())
    recorded_cpus = [{k: v for k, v in c.items() if k in recorded["cpus"][0]} for c in s["cpus"]]
    _assert_close({**{k: s[k] for k in recorded}, "cpus": recorded_cpus}, recorded)
    assert s["sim_seconds"] == 1400927000 / 1e12
    # restore, start, measured, exit: every figure comes from the third,
    # which covers the turnarounds' interval (to a few microseconds) and
    # neither the warm-up before it nor the results written after it
    assert s["dumps"] == 4
    records = [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines()]
    turnaround_ns = max(r["end_ns"] for r in records) - min(r["start_ns"] for r in records)
    assert turnaround_ns <= s["sim_seconds"] * 1e9 <= turnaround_ns + 5000
    cpus = {c["cpu"]: c for c in s["cpus"]}
    assert set(cpus) == CPUS
    assert all(c["insts"] > 0 and c["cycles"] > 0 and c["energy_j"] > 0 for c in cpus.values())
    clusters = {c["cluster"]: c for c in s["clusters"]}
    big, little = clusters["bigCluster"], clusters["littleCluster"]
    assert big["cpus"] == little["cpus"] == 2
    for c in (big, little):
        assert c["energy_j"] == pytest.approx(c["cpu_energy_j"] + c["l2_energy_j"])
        assert c["l2_energy_j"] > 0
    # the out-of-order 2 GHz cluster spends more per instruction
    assert big["cpu_energy_j"] / big["insts"] > little["cpu_energy_j"] / little["insts"]
    # the DRAM's energy: both ranks' totalEnergy (pJ), as stats.txt lists them
    assert s["memory"] == [
        {"memory": "mem_ctrls", "energy_j": pytest.approx((721823775 + 728534535) * 1e-12)}
    ]
    assert s["energy_j"] == pytest.approx(
        big["energy_j"] + little["energy_j"] + s["memory"][0]["energy_j"]
    )
    # one work item per application, around its only run
    assert [(i["id"], i["samples"]) for i in s["work_items"]] == [(0, 1), (1, 1)]
    assert all(0 < i["mean_s"] < s["sim_seconds"] for i in s["work_items"])


def test_gem5s_json_stats_agree_with_its_text(tmp_path: Path) -> None:
    (tmp_path / "m5out").mkdir()
    shutil.copy(RUN / "m5out" / "stats.json.xz", tmp_path / "m5out")
    dumps = gem5stats.read_stats(tmp_path / "m5out")  # no stats.txt: the JSON
    assert dumps is not None and len(dumps) == 1
    text = gem5stats.read_stats(RUN / "m5out")
    assert text is not None
    from_json, from_text = gem5stats.summary(dumps), gem5stats.summary(text)
    assert from_json["sim_seconds"] == from_text["sim_seconds"]
    for a, b in zip(from_json["cpus"], from_text["cpus"], strict=True):
        assert a["cpu"] == b["cpu"] and a["cycles"] == b["cycles"]
        # gem5 v24's JSON writes stat groups empty (a CPU's commitStats0),
        # so committed instructions come from stats.txt only (gem5 PR 2761)
        assert math.isnan(a["insts"]) and b["insts"] >= 0
        # stats.txt prints watts to six decimals, the JSON in full
        assert a["energy_j"] == pytest.approx(b["energy_j"], rel=1e-3)
    # in the last dump (gem5's at exit: the results written) one big CPU
    # ran and the others idled; stats.txt leaves their nozero instruction
    # count out but prints their commit group, so they committed 0, not NaN
    insts = {c["cpu"]: c["insts"] for c in from_text["cpus"]}
    assert insts.pop("bigCluster.cpus1") > 0 and set(insts.values()) == {0.0}, insts
    assert from_json["work_items"] == from_text["work_items"]


def test_a_truncated_compressed_stats_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "m5out").mkdir()
    packed = (RUN / "m5out" / "stats.json.xz").read_bytes()
    (tmp_path / "m5out" / "stats.json.xz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(gem5stats.StatsError, match=r"stats\.json\.xz: not a whole xz file"):
        gem5stats.read_stats(tmp_path / "m5out")


def test_the_console_gives_the_recorded_results() -> None:
    report = parse_console((RUN / "console.log").read_text())
    assert report.complete and not report.problems()
    recorded = [json.loads(line) for line in (RUN / "results.jsonl").read_text().splitlines()]
    assert report.apps == recorded
    guest = report.guest
    assert guest is not None and guest == json.loads((RUN / "guest.json").read_text())
    assert guest["clocksource"] == "arch_sys_counter"
    # what the kernel was told is what the run's platform said
    told = json.loads((RUN / "manifest.json").read_text())["platform"]["capacities"]
    assert [c["capacity"] for c in guest["cpus"]] == told
    assert guest["amp"]["policy"] == "colab"  # the run's, set after the restore


def test_collect_counts_the_run_with_its_cpus_and_clusters(tmp_path: Path) -> None:
    root = tmp_path / "campaign"
    shutil.copytree(RUN, root / "run")
    c = collect(root)
    assert c.runs["included"].tolist() == [True], c.runs["reason"].tolist()
    assert c.runs["engine"].tolist() == ["gem5"]
    assert sorted(c.apps["app"]) == ["ampkit-probe", "compute"]
    # a row per CPU per dump (restore, start, measured, exit), the
    # measured ones marked
    assert set(c.cpus["cpu"]) == CPUS and len(c.cpus) == 4 * 4
    assert c.cpus[c.cpus["measured"]]["dump"].unique().tolist() == [2]
    assert sorted(c.clusters["cluster"]) == ["bigCluster", "littleCluster"]
    assert (c.clusters["energy_j"] > 0).all()


def test_the_simulated_cpus_are_the_cores_they_claim() -> None:
    """The committed real run's config.ini: MIDR per cluster, 6 counters,
    Armv8.0-A (tests/gem5 checks a fresh run the same way)."""
    check_cores(RUN / "m5out")


def test_each_clusters_shared_accesses_add_up_to_what_the_bus_and_memory_served() -> None:
    """Fan et al.'s three resources per cluster (gem5stats.shared_accesses),
    checked against gem5's totals that no cluster's sum was read from:
    their memory reads are the controller's read requests less those its
    write queue served, their L2s' writebacks its write requests, and
    (the two L2s being the bus's only requestors) their packets its
    count."""
    dumps = gem5stats.read_stats(RUN / "m5out")
    assert dumps is not None
    measured = dumps[gem5stats.MEASURED_DUMP]
    shared = gem5stats.shared_accesses(measured)
    assert set(shared) == {"bigCluster", "littleCluster"}
    assert all(v > 0 for counts in shared.values() for v in counts), shared
    assert sum(c[1] for c in shared.values()) == measured["system.membus.pktCount::total"]
    writebacks = sum(measured[f"system.{c}.l2.writebacks::total"] for c in shared)
    assert writebacks == measured["system.mem_ctrls.writeReqs"]
    reads = sum(c[2] for c in shared.values()) - writebacks
    served_by_writes = measured["system.mem_ctrls.servicedByWrQ"]
    assert served_by_writes == 2  # the premise: not every read reached the DRAM
    assert reads == measured["system.mem_ctrls.readReqs"] - served_by_writes
    assert shared["bigCluster"][0] == measured["system.bigCluster.l2.overallAccesses::total"]
    # a measured interval cut by slice ends keeps them, summed
    twice = gem5stats.shared_accesses(gem5stats.merge([measured, measured]))
    assert twice == {c: tuple(2 * v for v in counts) for c, counts in shared.items()}


def test_a_count_gem5_leaves_out_is_zero_and_a_dump_without_any_is_refused() -> None:
    """gem5 prints no line for a count that stayed 0 (an L2 that wrote
    nothing back): such a cluster presses memory by its reads alone. A
    dump without any L2 or bus count is not one of the kit's machine."""
    dumps = gem5stats.read_stats(RUN / "m5out")
    assert dumps is not None
    measured = dumps[gem5stats.MEASURED_DUMP]
    shared = gem5stats.shared_accesses(measured)
    quiet = {k: v for k, v in measured.items() if k != "system.bigCluster.l2.writebacks::total"}
    again = gem5stats.shared_accesses(quiet)
    big_writebacks = measured["system.bigCluster.l2.writebacks::total"]
    assert big_writebacks > 0
    assert again["bigCluster"] == (
        *shared["bigCluster"][:2],
        shared["bigCluster"][2] - big_writebacks,
    )
    assert again["littleCluster"] == shared["littleCluster"]
    bare = {k: v for k, v in measured.items() if ".l2." not in k and "membus" not in k}
    with pytest.raises(gem5stats.StatsError, match="no cluster's L2 or memory-bus statistics"):
        gem5stats.shared_accesses(bare)
