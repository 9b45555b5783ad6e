"""Fan et al.'s interference models profiled on gem5 (ampkit interference
profile), at the smallest sizes: two one-thread programs, each alone and
beside co-runners (three programs: the fewest that tell the own
cluster's terms apart) on each cluster, pinned, their models fitted and
written; then a mix of the two under the contention policy with them.

The sizes are a millisecond's (too small for stream to leave the L2s:
this checks the profile's machinery, not what contention there is)."""

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from ampkit.cli import main
from ampkit.engines import gem5
from ampkit.interference import Contention, load_models
from ampkit.kernel import KernelBuild
from ampkit.mix import ENGINE_SIZE, App
from ampkit.platform import get_platform
from ampkit.run import RunRequest, execute
from ampkit.rundir import POLICY_LOG
from ampkit.sizes import sized_for
from tests.qemu.helpers import make_mix

#: 34 runs of a few seconds' simulation each, 90-290 wall seconds apiece
#: beside two other gem5 processes (2026-11-29): more than the suite's 40
#: minutes a test
pytestmark = [pytest.mark.gem5_full, pytest.mark.timeout(4 * 3600)]

#: the profiled programs' mix: compute and stream, one thread each, sized
#: to a simulated millisecond alone
PAIR = make_mix(
    App(program="compute", threads=1, size=ENGINE_SIZE, speedup=3.0),
    App(program="stream", threads=1, size=ENGINE_SIZE, speedup=4.0),
    name="corun-pair",
)
#: the co-runners: the pair and a pointer chase
CO_RUNNERS = (*PAIR.apps, App(program="chase", threads=1, size=ENGINE_SIZE, speedup=5.0))
SPAN_MS = 1.0
#: the fewest co-runs a target and core type (ampkit.corun.MIN_CO_RUNS)
CO_RUNS = 7


@pytest.fixture(scope="module")
def profiled(
    gem5_tree: gem5.Gem5,
    kernel_build: KernelBuild,
    initramfs: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    out = tmp_path_factory.mktemp("interference")

    def mix_file(name: str, apps: tuple[App, ...]) -> Path:
        path = out / f"{name}.toml"
        path.write_text(
            f'description = "{name}"\ncategory = "compute"\n'
            + "".join(
                f'[[app]]\nprogram = "{a.program}"\nthreads = 1\nspeedup = {a.speedup}\n'
                for a in apps
            )
        )
        return path

    code = main(
        [
            "interference",
            "profile",
            "--engine",
            "gem5",
            "--platform",
            "2B2L",
            "--mix",
            str(mix_file("pair", PAIR.apps)),
            "--co-runners",
            str(mix_file("co-runners", CO_RUNNERS)),
            "--co-runs",
            str(CO_RUNS),
            "--span-ms",
            str(SPAN_MS),
            "--runs",
            str(out / "runs"),
            "--out",
            str(out / "models.toml"),
            "--no-build",
        ]
    )
    assert code == 0
    return out


def test_the_profile_writes_a_model_for_each_program_from_its_runs(profiled: Path) -> None:
    models = load_models(profiled / "models.toml")
    assert sorted(m.program for m in models.apps) == ["compute", "stream"]
    assert all(m.threads == 1 and m.size.startswith("n") for m in models.apps)
    # every pressure a rate gem5 counted: accesses a second, many of them
    assert all(v > 1e5 for m in models.apps for p in m.pressure.values() for v in p), models
    provenance = models.provenance
    assert provenance["platform"] == "2B2L" and provenance["engine"] == "gem5"
    # three programs alone on each type, and seven co-runs of each target
    # on each: every one a run, every run a row of Table II
    assert provenance["runs"] == 3 * 2 + 2 * 2 * CO_RUNS
    assert set(provenance["co_runs"].values()) == {CO_RUNS}
    assert len(list((profiled / "runs").iterdir())) == provenance["runs"]
    rows = pd.read_csv(profiled / "models.coruns.csv")
    assert len(rows) == provenance["runs"]
    held = pd.read_csv(profiled / "models.held-out.csv")
    co_run = held[held["held_out"] == "co-run"]
    assert len(co_run) == 2 * 2 * CO_RUNS and co_run["error_pct"].notna().all()
    assert provenance["held_out_co_run_mean_abs_points"] >= 0


def test_each_application_ran_on_the_cpu_it_was_pinned_to(profiled: Path) -> None:
    """What gem5 counted, not what the runner echoes: alone on a little CPU,
    stream's instructions are committed on the last little CPU (3), the
    one it was pinned to, and few on the other (2), which only the kernel
    and the runner's rare turns use."""
    stream = sized_for(PAIR, "gem5", SPAN_MS).apps[1]
    alone = profiled / "runs" / f"2B2L-cfs-corun-little-stream.{stream.workload_size}-r0"
    cpus = {c["cpu"]: c["insts"] for c in json.loads((alone / "gem5.json").read_text())["cpus"]}
    assert cpus["littleCluster.cpus1"] > 10 * cpus["littleCluster.cpus0"], cpus
    records = [json.loads(line) for line in (alone / "results.jsonl").read_text().splitlines()]
    assert [r["cpus"] for r in records] == [[3]]


def test_a_mix_runs_under_contention_with_the_profiled_models(
    profiled: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    request = RunRequest(
        platform=get_platform("2B2L"),
        policy="contention",
        mix=sized_for(PAIR, "gem5", SPAN_MS),
        engine="gem5",
        mix_limit_s=5,
        contention=Contention(load_models(profiled / "models.toml")),
    )
    outcome = execute(request, profiled / "contention-run", kernel_build, initramfs)
    assert outcome.ok, outcome.status
    log = [json.loads(line) for line in (outcome.directory / POLICY_LOG).read_text().splitlines()]
    placed = [r for r in log if r["what"] == "place"]
    # both placed at once, each with the slowdown its model predicted there
    assert sorted(r["app"] for r in placed[:2]) == [0, 1]
    assert all("predicted_pct" in r for r in placed), placed
    manifest = json.loads((outcome.directory / "manifest.json").read_text())
    interference = manifest["policy_details"]["interference"]
    assert interference["models_sha256"] == load_models(profiled / "models.toml").sha256
    with (profiled / "models.toml").open("rb") as f:
        assert tomllib.load(f)["provenance"]["co_runs_asked"] == CO_RUNS
