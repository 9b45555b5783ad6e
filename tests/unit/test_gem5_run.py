"""A run on gem5 without gem5: what it is keyed by, how a checkpoint is
shared, and what its statistics become.

The checkpoint tests start a stand-in for gem5.opt, a shell script that
answers the kit's command line as gem5 would (a checkpoint directory, a
terminal file, an exit status): they test the kit's caching and its
failure handling, not gem5. tests/gem5/ runs the real one."""

import json
import math
import textwrap
import threading
from pathlib import Path

import pytest

from ampkit import gem5stats
from ampkit.campaign.spec import Limits, slurm_minutes
from ampkit.engines import gem5
from ampkit.engines.gem5 import BOOT_LIMIT_S as GEM5_BOOT_LIMIT_S
from ampkit.engines.gem5 import RESTORE_ALLOWANCE_S as BOOT_ALLOWANCE_S
from ampkit.engines.gem5 import WALL_PER_CPU_SIM_S as GEM5_WALL_PER_CPU_SIM_S
from ampkit.errors import AmpkitError
from ampkit.mix import load_mix
from ampkit.platform import get_platform
from ampkit.run import EngineIdentity, RunRequest, prepare
from tests import stand_in_gem5

pytestmark = pytest.mark.unit

GEM5 = EngineIdentity(
    name="gem5", version="gem5 version 24.0.0.1", binary_sha256="g" * 64, bootloader_sha256="b" * 64
)
DTBS = {"2B2L": b"gem5-tree"}


def request(policy: str = "colab", **kw: object) -> RunRequest:
    kw.setdefault("mix", load_mix("sync2-contend-compute"))
    return RunRequest(
        platform=get_platform("2B2L"),
        policy=policy,
        engine="gem5",
        **kw,  # type: ignore[arg-type]
    )


def test_a_gem5_run_reads_its_description_from_the_simulator() -> None:
    colab = prepare(request(), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert "m5ops 1" in colab.desc.splitlines()
    assert "ampkit_desc=m5" in colab.cmdline.split()
    # the policy is the runner's to set: one boot serves every policy
    cfs = prepare(request("cfs"), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert "amp_policy" not in colab.cmdline and cfs.cmdline == colab.cmdline
    assert cfs.key != colab.key and "policy cfs" in cfs.desc.splitlines()
    assert isinstance(colab.machine, gem5.Gem5Machine) and colab.dtb == b"gem5-tree"
    # the mix and its warm-up (dearer per simulated second) on 4 CPUs
    wall_s = colab.request.mix_limit_s * GEM5_WALL_PER_CPU_SIM_S + (
        gem5.WARMUP_MS / 1000 * gem5.WARMUP_WALL_PER_CPU_SIM_S
    )
    assert colab.limit_s == math.ceil(wall_s * 4) + BOOT_ALLOWANCE_S


def test_a_gem5_run_warms_up_unless_told_otherwise() -> None:
    default = prepare(request(), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert f"warmup_ms {gem5.WARMUP_MS}" in default.desc.splitlines()
    cold = prepare(request(warmup_ms=0), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert not any(line.startswith("warmup_ms") for line in cold.desc.splitlines())
    assert cold.key != default.key and cold.limit_s < default.limit_s
    longer = prepare(request(warmup_ms=20), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert "warmup_ms 20" in longer.desc.splitlines()
    with pytest.raises(AmpkitError) as e:
        prepare(request(warmup_ms=-3), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert e.value.what == "a warm-up of -3 ms" and "0 (none) to 600000" in (e.value.hint or "")


def test_a_gem5_run_is_keyed_by_the_bootloader_and_the_tree() -> None:
    base = prepare(request(), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS)).key
    other_loader = EngineIdentity(**{**GEM5.__dict__, "bootloader_sha256": "c" * 64})
    assert prepare(request(), other_loader, "k" * 64, "i" * 64, dtb_cache=dict(DTBS)).key != base
    other_tree = {"2B2L": b"another tree"}
    assert prepare(request(), GEM5, "k" * 64, "i" * 64, dtb_cache=other_tree).key != base
    limited = prepare(request(wall_limit_s=99), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS))
    assert limited.limit_s == 99 and limited.key != base


def test_a_run_that_marks_its_region_is_one_workload_alone_once_in_one_slice() -> None:
    from ampkit.errors import UsageError
    from ampkit.mix import App
    from tests.qemu.helpers import make_mix

    alone = make_mix(App("latency", threads=2, size=8))

    def prepared(**kw: object) -> str:
        kw.setdefault("mix", alone)
        kw.setdefault("method", "once")
        made = request("cfs", roi_stats=True, **kw)
        return prepare(made, GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS)).desc

    assert "env AMPKIT_ROI_STATS=1" in prepared().splitlines()
    plain = prepare(
        request("cfs", mix=alone, method="once"), GEM5, "k" * 64, "i" * 64, dtb_cache=dict(DTBS)
    )
    assert "AMPKIT_ROI_STATS" not in plain.desc
    cases: list[tuple[dict[str, object], str]] = [
        ({"mix": load_mix("sync2-contend-compute")}, "the mix has 2 applications"),
        ({"method": "restart"}, "method restart starts the application again"),
        ({"slice_ms": 10}, "a slice's restore between the marks"),
    ]
    for kw, said in cases:
        with pytest.raises(UsageError, match="statistics of the region of interest") as e:
            prepared(**kw)
        assert said in e.value.what, e.value.what
    with pytest.raises(UsageError, match="keeps no statistics"):
        prepare(
            RunRequest(
                platform=get_platform("2B2L"),
                policy="cfs",
                mix=alone,
                method="once",
                roi_stats=True,
            ),
            EngineIdentity(name="qemu", version="QEMU 7.2", binary_sha256="q" * 64),
            "k" * 64,
            "i" * 64,
        )
    # the marks are the kit's to ask for: an env entry of the user's may not
    with pytest.raises(UsageError, match="AMPKIT_ROI_STATS is the kit's to set"):
        prepare(
            request("cfs", mix=alone, method="once", env=("AMPKIT_ROI_STATS=1",)),
            GEM5,
            "k" * 64,
            "i" * 64,
            dtb_cache=dict(DTBS),
        )


def test_gem5_campaign_jobs_allow_for_the_boot() -> None:
    qemu_limits, gem5_limits = Limits(mix_limit_s=10), Limits(mix_limit_s=10, engine="gem5")
    # the engine's default warm-up, dearer per simulated second than the mix
    per_cpu_s = (
        10 * GEM5_WALL_PER_CPU_SIM_S + gem5.WARMUP_MS / 1000 * gem5.WARMUP_WALL_PER_CPU_SIM_S
    )
    assert gem5_limits.wall_s == math.ceil(per_cpu_s * 4) + BOOT_ALLOWANCE_S
    # the largest machine of the campaign sets it
    big = Limits(mix_limit_s=10, engine="gem5", guest_cpus=8)
    assert big.wall_s == math.ceil(per_cpu_s * 8) + BOOT_ALLOWANCE_S
    cold = Limits(mix_limit_s=10, engine="gem5", warmup_ms=0)
    assert cold.wall_s == 10 * GEM5_WALL_PER_CPU_SIM_S * 4 + BOOT_ALLOWANCE_S
    assert slurm_minutes(gem5_limits) * 60 >= gem5_limits.wall_s + GEM5_BOOT_LIMIT_S
    assert slurm_minutes(qemu_limits) == 4  # 10 s + 60 s boot + 120 s margin
    assert Limits(mix_limit_s=10, wall_limit_s=500, engine="gem5").wall_s == 500


# --- the checkpoint cache ------------------------------------------------------

#: gem5.opt as the kit calls it: "-d OUTDIR script ... --checkpoint-dir CPT".
#: $FAKE_GEM5 says how the boot ends: ok, or fail.
FAKE_GEM5 = textwrap.dedent(
    """\
    #!/bin/sh
    outdir=$2
    while [ $# -gt 0 ]; do
        [ "$1" = --checkpoint-dir ] && cpt=$2
        shift
    done
    mkdir -p "$outdir"
    echo "[    0.000000] Booting Linux" > "$outdir/system.terminal"
    echo boot >> "$(dirname "$0")/boots"
    sleep 0.5
    if [ "$FAKE_GEM5" = fail ]; then
        echo "panic: the guest stopped" >&2
        exit 134
    fi
    mkdir -p "$cpt" && echo "[root]" > "$cpt/m5.cpt"
    echo "ampkit: checkpoint written to $cpt at tick 1500000000000"
    """
)


@pytest.fixture
def fake_gem5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> gem5.Gem5:
    monkeypatch.setenv("FAKE_GEM5", "ok")
    return stand_in_gem5.install(tmp_path, FAKE_GEM5, monkeypatch)


def boot_once(found: gem5.Gem5, tmp_path: Path, key: str = "k1") -> gem5.Checkpoint:
    return gem5.ensure_checkpoint(
        found,
        gem5.Gem5Machine(get_platform("2B2L")),
        key=key,
        kernel=tmp_path / "vmlinux",
        initrd=tmp_path / "initrd",
        cmdline="console=ttyAMA0",
        disk=None,
        timeout_s=30,
    )


def test_one_boot_serves_every_run(fake_gem5: gem5.Gem5, tmp_path: Path) -> None:
    results: list[gem5.Checkpoint] = []
    runs = [threading.Thread(target=lambda: results.append(boot_once(fake_gem5, tmp_path)))]
    runs.append(threading.Thread(target=lambda: results.append(boot_once(fake_gem5, tmp_path))))
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    boots = (fake_gem5.binary.parent / "boots").read_text().split()
    assert boots == ["boot"]  # two runs at once, one boot
    assert sorted(r.booted_now for r in results) == [False, True]
    ckpt = results[0].directory
    assert (ckpt / "m5.cpt").is_file() and ckpt.name == "k1"
    assert "Booting Linux" in (ckpt / gem5.BOOT_CONSOLE).read_text()
    boot = json.loads((ckpt / "boot.json").read_text())
    assert boot["sim_seconds"] == 1.5 and boot["wall_s"] > 0
    meta = json.loads((ckpt / "ampkit-checkpoint.json").read_text())
    assert meta["key"] == "k1" and meta["machine"]["platform"] == "2B2L"
    # a later run with another machine may not restore it
    with pytest.raises(AmpkitError, match="taken on 2B2L"):
        gem5.check_checkpoint(ckpt, gem5.Gem5Machine(get_platform("2B4L")))


def test_a_failed_boot_keeps_its_output_and_is_retried(
    fake_gem5: gem5.Gem5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GEM5", "fail")
    with pytest.raises(AmpkitError, match="exit status 134 and no checkpoint") as e:
        boot_once(fake_gem5, tmp_path, key="k2")
    failed = gem5.checkpoint_dir("k2").with_name("k2.failed")
    assert e.value.hint is not None and str(failed) in e.value.hint
    assert "panic: the guest stopped" in (failed / "gem5.log").read_text()
    assert "Booting Linux" in (failed / "m5out" / "system.terminal").read_text()
    assert not gem5.checkpoint_dir("k2").exists()
    monkeypatch.setenv("FAKE_GEM5", "ok")
    assert boot_once(fake_gem5, tmp_path, key="k2").booted_now


# --- statistics -------------------------------------------------------------------

STATS = """
---------- Begin Simulation Statistics ----------
simSeconds                                   2.000000                       # (Second)
---------- End Simulation Statistics   ----------

---------- Begin Simulation Statistics ----------
simSeconds                                   0.500000                       # (Second)
system.bigCluster.cpus.numCycles                 1000000                       # (Cycle)
system.bigCluster.cpus.commitStats0.numInsts     1500000                       # (Count)
system.bigCluster.cpus.power_model.dynamicPower     0.800000                       # (Watt)
system.bigCluster.cpus.power_model.staticPower     0.200000                       # (Watt)
system.bigCluster.l2.power_model.dynamicPower     0.100000                       # (Watt)
system.bigCluster.l2.power_model.staticPower     0.020000                       # (Watt)
system.littleCluster.cpus0.numCycles              600000                       # (Cycle)
system.littleCluster.cpus0.commitStats0.numInsts   300000                       # (Count)
system.littleCluster.cpus0.power_model.dynamicPower     0.100000                       # (Watt)
system.littleCluster.cpus0.power_model.staticPower     0.010000                       # (Watt)
system.littleCluster.cpus1.numCycles              600000                       # (Cycle)
system.littleCluster.cpus1.commitStats0.numInsts   200000                       # (Count)
system.littleCluster.cpus1.power_model.dynamicPower     0.050000                       # (Watt)
system.littleCluster.cpus1.power_model.staticPower     0.010000                       # (Watt)
system.work_item_type0::samples                    1                       # (Tick)
system.work_item_type0::mean            250000000000                       # (Tick)
system.work_item_type1::samples                    1                       # (Tick)
system.work_item_type1::mean            400000000000                       # (Tick)
system.work_item_type2::samples                    0                       # (Tick)
---------- End Simulation Statistics   ----------
"""


def test_a_runs_statistics_per_cpu_cluster_and_application(tmp_path: Path) -> None:
    (tmp_path / "m5out").mkdir()
    (tmp_path / "m5out" / "stats.txt").write_text(STATS)
    dumps = gem5stats.read_stats(tmp_path / "m5out")
    assert dumps is not None
    s = gem5stats.summary(dumps)
    assert s["dumps"] == 2 and s["sim_seconds"] == 0.5  # the last dump: the run
    cpus = {c["cpu"]: c for c in s["cpus"]}
    assert set(cpus) == {"bigCluster.cpus", "littleCluster.cpus0", "littleCluster.cpus1"}
    assert cpus["bigCluster.cpus"]["insts"] == 1500000
    clusters = {c["cluster"]: c for c in s["clusters"]}
    big, little = clusters["bigCluster"], clusters["littleCluster"]
    assert (big["cpus"], little["cpus"]) == (1, 2)
    assert little["insts"] == 500000
    assert big["cpu_energy_j"] == pytest.approx(1.0 * 0.5)
    assert big["energy_j"] == pytest.approx((1.0 + 0.12) * 0.5)
    assert little["cpu_energy_j"] == pytest.approx(0.17 * 0.5)
    # an L2 without a power model makes the cluster's energy unknown, not smaller
    assert math.isnan(little["l2_energy_j"]) and math.isnan(little["energy_j"])
    assert s["work_items"] == [
        {"id": 0, "samples": 1, "mean_s": 0.25},
        {"id": 1, "samples": 1, "mean_s": 0.4},
    ]
    with pytest.raises(gem5stats.StatsError):
        gem5stats.summary([])


def test_a_kit_runs_figures_come_from_its_measured_dump_alone() -> None:
    """Restore, start, measured, exit: the exit dump also counts the
    results being written, the start dump the warm-up; neither is the run."""
    dumps = [{"simSeconds": s, "simTicks": s * 1e12} for s in (1e-9, 2e-3, 1.5e-3, 4e-4)]
    assert gem5stats.run_summary(dumps)["sim_seconds"] == 1.5e-3
    with pytest.raises(gem5stats.StatsError, match=r"3 statistics dumps where .* writes 4"):
        gem5stats.run_summary(dumps[:3])


#: A hand-worked dump: one big CPU with its L2, and a DRAM of two ranks.
STATS_WITH_DRAM = (Path(__file__).parent / "data" / "stats-with-dram.txt").read_text()


def test_dram_energy_and_residencies_of_a_dump(tmp_path: Path) -> None:
    """Worked by hand: the cluster (0.65 + 0.15 W) x 2 ms = 1.6 mJ; the DRAM
    (300 + 100) uJ = 0.4 mJ from its ranks' totalEnergy in pJ (not their
    parts, not averagePower); the machine 2.0 mJ; the CPU's residencies sum
    to the dump's 2e9 ticks."""
    (tmp_path / "stats.txt").write_text(STATS_WITH_DRAM)
    dumps = gem5stats.read_stats(tmp_path)
    assert dumps is not None
    s = gem5stats.summary(dumps)
    assert s["sim_ticks"] == 2e9
    assert s["clusters"][0]["energy_j"] == pytest.approx(1.6e-3)
    assert s["memory"] == [{"memory": "mem_ctrls", "energy_j": pytest.approx(0.4e-3)}]
    assert s["energy_j"] == pytest.approx(2.0e-3)
    assert [c["residency_ticks"] for c in s["cpus"]] == [2e9]
