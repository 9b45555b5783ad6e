"""User-level policies on the QEMU machine: sfd's daemon (ampkit-contention)
places whole applications on a core type through their threads' allowed
CPUs, over cfs, and the run keeps what it did; under contention, the same
daemon places them where an interference model file says."""

import json
from pathlib import Path

import pytest

from ampkit.interference import AppModel, Contention, Degradation, InterferenceModels, load_models
from ampkit.kernel import KernelBuild
from ampkit.mix import ENGINE_SIZE, App
from ampkit.rundir import POLICY_LOG
from ampkit.sizes import sized_for

from .helpers import make_mix, run_mix

pytestmark = pytest.mark.qemu


def big_share(task: dict[str, int]) -> float:
    return task["big_ns"] / max(1, task["big_ns"] + task["little_ns"])


def test_sfd_gives_the_big_cpus_to_the_application_of_highest_speedup(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    # two applications of two threads on 2B2L: the big CPUs hold exactly one;
    # the one of higher speedup comes second in the mix, so the order is
    # the rule's and not the mix's
    mix = make_mix(
        App(program="compute", threads=2, size=60000, speedup=1.2),
        App(program="compute", threads=2, size=60000, speedup=3.0),
    )
    outcome = run_mix(tmp_path / "run", kernel_build, initramfs, mix, policy="sfd")
    assert outcome.ok, outcome.status
    run = outcome.directory
    log = [json.loads(line) for line in (run / POLICY_LOG).read_text().splitlines()]
    placed = [r for r in log if r["what"] == "place"]
    assert [(r["app"], r["core"], r["cpus"]) for r in placed[:2]] == [
        (1, "big", [0, 1]),
        (0, "little", [2, 3]),
    ], log
    (summary,) = [r for r in log if r["what"] == "summary"]
    assert summary["big_cpus"] == [0, 1] and summary["affinity_errors"] == 0, summary
    # restarts went where their instance was: nothing moved between types
    assert summary["moves"] == 0, log
    # what the kernel counted: each thread ran on its type alone (the runner
    # holds each instance at its gate until the daemon has placed it, so the
    # mask holds from its first instruction, its threads inheriting it)
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    shares = {r["speedup_q10"]: [big_share(t) for t in r["tasks"]] for r in records}
    assert all(s >= 0.99 for s in shares[3072]) and all(s <= 0.01 for s in shares[1229]), shares
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["policy"] == "sfd"
    assert manifest["policy_details"]["kernel_policy"] == "cfs"
    assert [d["daemon"] for d in manifest["daemons"]] == ["ampkit-contention"]
    guest = json.loads((run / "guest.json").read_text())
    assert guest["amp"]["policy"] == "cfs"


def test_contention_keeps_a_high_pressure_application_off_the_big_cpus_when_its_model_says(
    tmp_path: Path, kernel_build: KernelBuild, initramfs: Path
) -> None:
    """A model file written by hand (QEMU has no caches to profile): stream,
    of the higher speedup, puts a bus pressure of 50 on the cluster it runs
    on, and compute, on a little CPU, slows by a point per unit of the big
    cluster's bus pressure. So stream on the big CPUs predicts compute 50%
    slower, over the threshold of 30, and compute takes the big CPUs: the
    order sfd would have reversed."""
    mix = sized_for(
        make_mix(
            App(program="compute", threads=2, size=60000, speedup=1.2),
            App(program="stream", threads=2, size=ENGINE_SIZE, speedup=3.0),
        ),
        "qemu",
    )
    compute, stream = mix.apps
    zero = Degradation((0.0,) * 5, 0.0)
    other_bus = Degradation((0.0, 0.0, 0.0, 1.0, 0.0), 0.0)  # TERMS: other_bus is the 4th
    models = InterferenceModels(
        (
            AppModel(
                "compute",
                2,
                compute.workload_size,
                {"big": (1, 0, 0), "little": (1, 0, 0)},
                {"big": zero, "little": other_bus},
            ),
            AppModel(
                "stream",
                2,
                stream.workload_size,
                {"big": (0, 50, 0), "little": (0, 50, 0)},
                {"big": zero, "little": zero},
            ),
        ),
        {"platform": "2B2L", "engine": "qemu", "by": "hand, for this test"},
    )
    path = tmp_path / "models.toml"
    path.write_text(models.to_toml())
    outcome = run_mix(
        tmp_path / "run",
        kernel_build,
        initramfs,
        mix,
        policy="contention",
        contention=Contention(load_models(path), 30.0),
    )
    assert outcome.ok, outcome.status
    run = outcome.directory
    log = [json.loads(line) for line in (run / POLICY_LOG).read_text().splitlines()]
    placed = [r for r in log if r["what"] == "place"]
    # the first batch places both (logged in speedup order), neither
    # predicted slower once stream is on the little CPUs
    first = sorted(placed[:2], key=lambda r: r["app"])
    assert [(r["app"], r["core"], r["predicted_pct"]) for r in first] == [
        (0, "big", 0.0),
        (1, "little", 0.0),
    ], log
    (summary,) = [r for r in log if r["what"] == "summary"]
    assert summary["rule"] == "contention" and summary["threshold_pct"] == 30.0, summary
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    shares = {r["speedup_q10"]: [big_share(t) for t in r["tasks"]] for r in records}
    assert all(s >= 0.99 for s in shares[1229]) and all(s <= 0.01 for s in shares[3072]), shares
    manifest = json.loads((run / "manifest.json").read_text())
    details = manifest["policy_details"]
    assert details["daemon"] == "ampkit-contention -S 30", details
    assert details["interference"]["models_sha256"] == load_models(path).sha256, details
    assert details["interference"]["provenance"]["platform"] == "2B2L", details
