"""A campaign's runs archived to be committed: slim, scrubbed of this
machine's paths, the same runs to the analysis."""

import json
import lzma
from pathlib import Path

import pytest

from ampkit import gem5stats, paths
from ampkit.analysis.synthetic import SynthApp, kit_stats_text, write_run
from ampkit.campaign.archive import archive, scrub
from ampkit.errors import AmpkitError
from ampkit.rundir import RunDir

pytestmark = pytest.mark.unit


def test_runs_that_count_are_archived_slim_and_scrubbed(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    runs = campaign / "runs"
    good = write_run(runs, platform="2B2L", policy="cfs", mix="m", apps=[SynthApp("a", 1, 5)])
    write_run(
        runs,
        platform="2B2L",
        policy="colab",
        mix="m",
        apps=[SynthApp("a", 1, 5)],
        status="failed: x",
    )
    cache = paths.cache_dir()
    (good / "console.log").write_text(f"booted {cache}/kernels/Image from {campaign}/artifacts\n")
    (good / "m5out").mkdir()
    (good / "m5out" / "stats.txt").write_text("simTicks 5\n")
    (good / "m5out" / "config.json").write_text("{}")  # not kept: config.ini is
    # a kernel trace, compressed: scrubbed as the text it holds
    (good / "trace.txt.xz").write_bytes(lzma.compress(f"comm=x dir={campaign}\n".encode()))
    out = tmp_path / "archive"
    lines = archive(campaign, out)
    assert lines == [
        "2B2L-cfs-m-r0: archived",
        "2B2L-colab-m-r0: left out: failed: x",
    ]
    copy = out / good.name
    assert (copy / "console.log").read_text() == (
        "booted /path/to/cache/kernels/Image from /path/to/campaign/artifacts\n"
    )
    assert lzma.decompress((copy / "m5out" / "stats.txt.xz").read_bytes()) == b"simTicks 5\n"
    assert not (copy / "m5out" / "config.json").exists()
    trace = lzma.decompress((copy / "trace.txt.xz").read_bytes())
    assert trace == b"comm=x dir=/path/to/campaign\n"
    assert RunDir(copy).counts() and RunDir(copy).recorded_key() == RunDir(good).recorded_key()
    # again: nothing is copied twice
    assert archive(campaign, out)[0] == "2B2L-cfs-m-r0: archived already"


def test_a_path_left_after_scrubbing_stops_the_archive() -> None:
    home = str(Path.home())
    if home == "/":
        pytest.skip("a home of / cannot be told from any path")
    with pytest.raises(AmpkitError, match="a path of this machine is left"):
        scrub(f"in {home}/elsewhere".encode(), [("/nowhere", "/path/to/x")], "f")
    assert scrub(b"in /nowhere/a", [("/nowhere", "/path/to/x")], "f") == b"in /path/to/x/a"


def gem5_run(campaign: Path) -> Path:
    """A finished gem5 run of the campaign, whose statistics count."""
    return write_run(
        campaign / "runs",
        platform="2B2L",
        policy="cfs",
        mix="m",
        apps=[SynthApp("a", 1, 5)],
        engine="gem5",
        statistics=True,
        timing_notice=None,
    )


def test_an_archived_gem5_run_reads_its_statistics_from_the_compressed_text(
    tmp_path: Path,
) -> None:
    """A gem5 run counts only with its statistics: archived, stats.txt is
    kept as stats.txt.xz, and the run still counts, with the same dumps."""
    campaign = tmp_path / "campaign"
    run = gem5_run(campaign)
    real = (Path(__file__).parent / "data" / "stats-with-dram.txt").read_text()
    (run / "m5out").mkdir(exist_ok=True)
    (run / "m5out" / "stats.txt").write_text(kit_stats_text(real))
    assert RunDir(run).counts()
    archive(campaign, tmp_path / "archive")
    copy = tmp_path / "archive" / run.name
    assert not (copy / "m5out" / "stats.txt").exists()
    assert (copy / "m5out" / "stats.txt.xz").is_file()
    assert RunDir(copy).counts()
    original, archived = RunDir(run).judge(), RunDir(copy).judge()
    assert archived.statistics.dumps == original.statistics.dumps


def test_the_gem5_tree_its_log_names_is_scrubbed_without_gem5_root(tmp_path: Path) -> None:
    campaign = tmp_path / "campaign"
    run = write_run(
        campaign / "runs", platform="2B2L", policy="cfs", mix="m", apps=[SynthApp("a", 1, 5)]
    )
    tree = tmp_path / "somewhere" / "gem5-v24"
    (run / "gem5.log").write_text(
        "gem5 version 24.0.0.1\n"
        f"command line: {tree}/build/ARM/gem5.opt -d m5out config.py "
        f"--bootloader {tree}/system/arm/bootloader/arm64/boot.arm64\n"
    )
    archive(campaign, tmp_path / "archive")  # no extra stand-ins: GEM5_ROOT unknown here
    log = (tmp_path / "archive" / run.name / "gem5.log").read_text()
    assert str(tree) not in log
    assert "command line: /path/to/gem5/build/ARM/gem5.opt" in log
    assert "--bootloader /path/to/gem5/system/arm/bootloader/arm64/boot.arm64" in log


def test_a_folder_of_runs_no_campaign_made_is_archived_with_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ampkit.cli import main

    runs = tmp_path / "profile-runs"
    run = write_run(runs, platform="1B0L", policy="cfs", mix="m", apps=[SynthApp("a", 1, 5)])
    (run / "console.log").write_text(f"from {runs}\n")
    assert main(["campaign", "archive", str(runs)]) != 0
    assert "a folder of runs, not a campaign" in capsys.readouterr().err
    assert main(["campaign", "archive", str(runs), "--out", str(tmp_path / "kept")]) == 0
    assert "1B0L-cfs-m-r0: archived" in capsys.readouterr().out
    assert (tmp_path / "kept" / run.name / "console.log").read_text() == (
        "from /path/to/campaign\n"
    )


def test_the_checkout_that_ran_the_campaign_is_scrubbed_too(tmp_path: Path) -> None:
    """A campaign run from a worktree kept at its starting commit, archived
    by another checkout's code: the runs name the worktree (gem5's
    configuration script), which the campaign's record points to."""
    worktree = tmp_path / "elsewhere" / "ampkit-campaign"
    (worktree / "ampkit").mkdir(parents=True)
    (worktree / "ampkit" / "__init__.py").write_text("")
    campaign = tmp_path / "campaign"
    run = write_run(
        campaign / "runs", platform="2B2L", policy="cfs", mix="m", apps=[SynthApp("a", 1, 5)]
    )
    spec = worktree / "evaluations" / "e" / "spec.toml"
    (campaign / "campaign.json").write_text(json.dumps({"spec_source": str(spec)}))
    (run / "gem5.log").write_text(f"command line: gem5.opt {worktree}/configs/bigLITTLE.py\n")
    archive(campaign, tmp_path / "archive")
    log = (tmp_path / "archive" / run.name / "gem5.log").read_text()
    assert log == "command line: gem5.opt /path/to/ampkit/configs/bigLITTLE.py\n"


def test_an_archived_run_in_slices_keeps_every_slice(tmp_path: Path) -> None:
    """Each later slice's statistics, console and record travel with the
    run (m5out/slice-<n>/), so the archived run joins its slices to the
    same measured interval."""
    campaign = tmp_path / "campaign"
    run = gem5_run(campaign)

    def block(ticks: int, final: int) -> str:
        return (
            f"{gem5stats.DUMP_BEGIN}\nsimFreq 1000000000000\nsimTicks {ticks}\n"
            f"finalTick {final}\nsystem.bigCluster.cpus0.numCycles {ticks // 1000}\n"
            f"{gem5stats.DUMP_END}\n"
        )

    m5out = run / "m5out"
    m5out.mkdir(exist_ok=True)
    (m5out / "stats.txt").write_text(block(1, 1) + block(99, 100) + block(900, 1000))
    (m5out / gem5stats.SLICE_RECORD).write_text('{"until": 1000, "checkpoint_tick": 1000}')
    later = m5out / "slice-1"
    later.mkdir()
    (later / "stats.txt").write_text(block(1, 1001) + block(499, 1500) + block(20, 1520))
    (later / "system.terminal").write_text("the second slice's console\n")
    (later / gem5stats.SLICE_RECORD).write_text('{"until": 2000}')
    original = RunDir(run).judge()
    assert original.statistics.measured is not None
    assert original.statistics.measured["sim_ticks"] == 900 + 499
    archive(campaign, tmp_path / "archive")
    copy = tmp_path / "archive" / run.name / "m5out"
    assert (copy / "slice-1" / "stats.txt.xz").is_file()
    assert (copy / "slice-1" / "system.terminal").read_text() == "the second slice's console\n"
    assert (copy / "slice-1" / gem5stats.SLICE_RECORD).is_file()
    archived = RunDir(copy.parent).judge()
    # as JSON: no power model here, and NaN is not NaN
    as_json = [json.dumps(v.statistics.measured) for v in (original, archived)]
    assert as_json[0] == as_json[1]
