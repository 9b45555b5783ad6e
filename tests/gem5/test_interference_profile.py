"""Fan et al.'s interference models profiled on gem5 (ampkit interference
profile), at the smallest sizes: two one-thread programs, each alone and
beside co-runners on each cluster, pinned, their models fitted and
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

pytestmark = pytest.mark.gem5_full

#: the profiled programs' mix: compute and stream, one thread each, sized
#: to a simulated millisecond alone
PAIR = make_mix(
    App(program="compute", threads=1, size=ENGINE_SIZE, speedup=3.0),
    App(program="stream", threads=1, size=ENGINE_SIZE, speedup=4.0),
    name="corun-pair",
)
SPAN_MS = 1.0
#: the fewest co-runs a target and core type: six unknowns and the run alone
CO_RUNS = 6


@pytest.fixture(scope="module")
def profiled(
    gem5_tree: gem5.Gem5,
    kernel_build: KernelBuild,
    initramfs: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    out = tmp_path_factory.mktemp("interference")
    mix_file = out / "pair.toml"
    mix_file.write_text(
        'description = "two programs to profile"\ncategory = "compute"\n'
        + "".join(
            f'[[app]]\nprogram = "{a.program}"\nthreads = 1\nspeedup = {a.speedup}\n'
            for a in PAIR.apps
        )
    )
    code = main(
        [
            "interference",
            "profile",
            "--engine",
            "gem5",
            "--platform",
            "2B2L",
            "--mix",
            str(mix_file),
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
    # every pressure a rate gem5 counted: accesses a second, millions of them
    assert all(v > 1e5 for m in models.apps for p in m.pressure.values() for v in p), models
    provenance = models.provenance
    assert provenance["platform"] == "2B2L" and provenance["engine"] == "gem5"
    # each program alone on each type, and six co-runs of each on each
    assert provenance["runs"] == 2 * 2 + 2 * 2 * CO_RUNS
    assert len(list((profiled / "runs").iterdir())) == provenance["runs"]
    rows = pd.read_csv(profiled / "models.coruns.csv")
    assert len(rows) == provenance["runs"]
    # a co-run's own-cluster pressure is at least its target's alone there
    alone = rows[~rows["corun"].str.contains("-with-|-beside-")]
    for _, row in rows.iterrows():
        base = alone[(alone["program"] == row["program"]) & (alone["core"] == row["core"])]
        assert row["own_cache"] >= base["own_cache"].iloc[0]
    held = pd.read_csv(profiled / "models.held-out.csv")
    assert len(held) == 2 * 2 * (CO_RUNS + 1) and held["error_pct"].notna().all()
    # the runs were pinned where the plan said: each record names its CPU
    sample = next((profiled / "runs").glob("*-corun-little-*-with-*-beside-*"))
    records = [json.loads(line) for line in (sample / "results.jsonl").read_text().splitlines()]
    # (the target on little CPU 2, its cluster's co-runner on 3, the
    # other cluster's on the big CPUs 0 and 1)
    assert [r["cpus"] for r in records] == [[2], [3], [0], [1]][: len(records)], records


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
        assert tomllib.load(f)["provenance"]["co_runs_per_core"] == CO_RUNS
