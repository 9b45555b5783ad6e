"""sched_timescale=: the scheduler's clocks run faster, every policy's alike.

Three boots on 2B2L: the kit's kernel without the parameter and with
sched_timescale=4, and its 1000 Hz variant (kernel-hz1000) with
sched_timescale=4, each running the ``timescale`` scenario of
ampkit-schedtest under cfs, then colab, then wash: what the kernel reads
back, CFS's latency (debugfs), how long PELT takes to call a new
CPU-bound thread on a little CPU a misfit, PELT's half-life as a
CPU-bound thread's utilisation shows it, and how many COLAB ranking
periods and WASH quanta a second of guest time holds.
"""

from pathlib import Path

from ampkit.kernel import KernelBuild

from .helpers import run_schedtest


def test_sched_timescale_runs_the_schedulers_clocks_faster(
    tmp_path: Path, kernel_build: KernelBuild, hz1000_build: KernelBuild, initramfs: Path
) -> None:
    def scenario(name: str, build: KernelBuild, cmdline: str) -> dict[str, float]:
        return run_schedtest(
            tmp_path / name,
            build,
            initramfs,
            "timescale",
            "1",
            policy="cfs",
            platform="2B2L",
            extra_cmdline=cmdline,
        )

    plain = scenario("plain", kernel_build, "")
    scaled = scenario("scaled", kernel_build, "sched_timescale=4")
    fast_tick = scenario("hz1000", hz1000_build, "sched_timescale=4")
    print(f"plain: {plain}\nscaled: {scaled}\nhz1000, scaled: {fast_tick}")
    assert plain["scale"] == 1 and scaled["scale"] == 4 == fast_tick["scale"], (plain, scaled)
    # the fair class's latency, divided exactly (18 ms on four CPUs), whatever the tick
    assert plain["latency_ns"] == 18_000_000, plain
    assert scaled["latency_ns"] * 4 == plain["latency_ns"] == fast_tick["latency_ns"] * 4
    # PELT four times as fast: the half-life a CPU-bound thread's utilisation
    # shows on a big CPU, 32 ms, then 8. (The misfit ramp the scenario also
    # reports, a new thread moved off a little CPU after 21 and 5-12 ms, is
    # a single balancer decision a tick or an interval either way: too
    # coarse to test a factor of four on.)
    assert 24 < plain["halflife_ms"] < 42, plain
    for run in (scaled, fast_tick):
        assert 0 < run["halflife_ms"] < plain["halflife_ms"] / 2, (plain, run)
    # In a second: COLAB's 10 ms ranking and WASH's 40 ms quantum keep their
    # periods, not a jiffy longer each (63 and 23 a second at HZ 250 before
    # each period was started from the last one's start, not from its end).
    assert 85 <= plain["colab_periods"] <= 105, plain
    assert 21 <= plain["wash_quanta"] <= 27, plain
    # At 4, WASH's 10 ms is still 2.5 ticks of HZ 250: a hundred a second.
    assert 85 <= scaled["wash_quanta"] <= 105, scaled
    # COLAB's 2.5 ms is shorter than the 4 ms tick: each ranking comes a
    # tick or two after the last, faster than unscaled but not four times.
    assert plain["colab_periods"] < scaled["colab_periods"] < 3 * plain["colab_periods"], scaled
    # Ticking at 1000 Hz, the same scale keeps both periods: four times as many
    # (352 to 402 rankings measured, fewer on a busy host: the worker must be
    # scheduled, and a late one does not run twice to catch up).
    assert 3 * plain["colab_periods"] <= fast_tick["colab_periods"] <= 410, fast_tick
    assert 85 <= fast_tick["wash_quanta"] <= 105, fast_tick
