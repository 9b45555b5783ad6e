"""sched_timescale=: the scheduler's clocks run faster, every policy's alike.

Two boots of the kit's kernel on 2B2L, without the parameter and with
sched_timescale=4, each running the ``timescale`` scenario of
ampkit-schedtest under cfs, then colab, then wash: what the kernel reads
back, CFS's latency (debugfs), how long PELT takes to call a new
CPU-bound thread on a little CPU a misfit, and how many COLAB ranking
periods and WASH quanta a second of guest time holds.
"""

from pathlib import Path

from ampkit.kernel import KernelBuild

from .helpers import run_schedtest


def test_sched_timescale_runs_the_schedulers_clocks_faster(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    def scenario(name: str, cmdline: str) -> dict[str, float]:
        return run_schedtest(
            tmp_path / name,
            kernel_build,
            initramfs,
            "timescale",
            "1",
            policy="cfs",
            platform="2B2L",
            extra_cmdline=cmdline,
        )

    plain = scenario("plain", "")
    scaled = scenario("scaled", "sched_timescale=4")
    print(f"plain: {plain}\nscaled: {scaled}")
    assert plain["scale"] == 1 and scaled["scale"] == 4, (plain, scaled)
    # the fair class's latency, divided exactly (18 ms on four CPUs)
    assert plain["latency_ns"] == 18_000_000, plain
    assert scaled["latency_ns"] * 4 == plain["latency_ns"], scaled
    # PELT four times as fast: the misfit ramp (21 ms unscaled, 5 at 4)
    assert plain["ramp_ms"] > 0 and scaled["ramp_ms"] > 0, (plain, scaled)
    assert scaled["ramp_ms"] < plain["ramp_ms"] / 2, (plain, scaled)
    # The workers' periods are whole jiffies (4 ms at HZ 250), and a delayed
    # work item fires a tick after its last jiffy: COLAB's 10 ms is 3 jiffies
    # and came every 4 (63 a second), its 2.5 ms at scale 4 is 1 jiffy and
    # came every 2 (126); WASH's 40 ms every 11 jiffies (23), its 10 ms
    # every 4 (63). The tick is not scaled, so neither is this rounding.
    assert scaled["colab_periods"] >= 1.5 * plain["colab_periods"] > 0, (plain, scaled)
    assert scaled["wash_quanta"] >= 2 * plain["wash_quanta"] > 0, (plain, scaled)
