"""The patch series against the Debian source: applies, builds clean, passes checkpatch."""

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from ampkit import build, kernel, kernelcheck


@pytest.fixture(scope="module")
def tree(kernel_build: kernel.KernelBuild) -> kernel.SourceTree:
    return kernel.SourceTree(kernel.KernelInputs.discover("default"))


def test_every_patch_of_the_series_is_applied(
    kernel_build: kernel.KernelBuild, tree: kernel.SourceTree
) -> None:
    series = kernel.read_series()
    manifest = kernel_build.manifest
    # The build was made from exactly the patch files in the repository now.
    assert [p["name"] for p in manifest["series"]] == [p.name for p in series]
    assert [p["sha256"] for p in manifest["series"]] == [
        hashlib.sha256(p.read_bytes()).hexdigest() for p in series
    ]
    # The source tree is shared by every checkout on this machine and may hold
    # another branch's series; bringing it to this one must work from any state.
    with tree.locked(print):
        tree.apply_series(print)
        state = json.loads(tree.state_file.read_text())
    assert state["applied"] == [p["sha256"] for p in manifest["series"]]
    assert (tree.src / "kernel" / "sched" / "amp.c").is_file()


def test_build_has_no_warnings(kernel_build: kernel.KernelBuild) -> None:
    manifest = kernel_build.manifest
    assert manifest["build"]["warnings"] == []
    log = (kernel_build.directory / "build.log").read_text()
    assert "warning:" not in log.lower()
    # C warnings are errors in this configuration, so none can slip by.
    assert "CONFIG_WERROR=y" in (kernel_build.directory / "config").read_text()


def test_outputs_for_both_engines(kernel_build: kernel.KernelBuild) -> None:
    assert kernel_build.vmlinux.read_bytes()[:4] == b"\x7fELF"  # gem5 loads the ELF
    # arm64 Image header: "ARM\x64" magic at offset 56
    assert kernel_build.image.read_bytes()[56:60] == b"ARM\x64"
    manifest = kernel_build.manifest
    assert manifest["linux"]["debian_version"] == kernel.debian_version()
    assert manifest["kernelversion"].startswith("6.1.")
    assert manifest["toolchain"]["gcc"].startswith("aarch64-linux-gnu-gcc")
    assert manifest["toolchain"]["gcc-12-aarch64-linux-gnu"].startswith("12.")
    for name in ("Image", "vmlinux", "config"):
        assert len(manifest["artifacts"][name]["sha256"]) == 64


def test_configuration_carries_the_kit(kernel_build: kernel.KernelBuild) -> None:
    config = kernel.parse_config((kernel_build.directory / "config").read_text())
    for symbol in ("CONFIG_SCHED_AMP", "CONFIG_SCHED_DEBUG", "CONFIG_SCHED_MC", "CONFIG_FUTEX"):
        assert config.get(symbol) == "y", symbol
    # group scheduling would hide tasks behind group entities from the AMP policies
    assert config.get("CONFIG_FAIR_GROUP_SCHED", "n") == "n"


@pytest.mark.parametrize("patch", kernel.read_series(), ids=lambda p: p.name)
def test_checkpatch_is_clean(patch: Path, tree: kernel.SourceTree) -> None:
    result = subprocess.run(
        ["perl", "scripts/checkpatch.pl", "--strict", "--no-summary", "--terse", str(patch)],
        cwd=tree.src,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout


def test_unchanged_inputs_are_not_rebuilt(kernel_build: kernel.KernelBuild) -> None:
    image = kernel_build.image
    before = (image.stat().st_mtime_ns, kernel_build.manifest)
    build.scons("kernel")
    assert (image.stat().st_mtime_ns, kernel_build.manifest) == before


def test_every_patch_compiles_and_the_tip_builds_in_every_configuration(
    kernel_build: kernel.KernelBuild,
) -> None:
    # cached by the inputs' digest: a series that did not change is not checked again
    result = kernelcheck.check()
    record = result.record
    patches = [p.name for p in kernel.read_series()]
    assert record["series"] == patches
    # bisectable: every patch compiles in every configuration
    assert set(kernelcheck.PER_PATCH) == set(kernelcheck.CONFIGS)
    per_patch = [(s["patch"], s["config"]) for s in record["steps"] if s["patch"] != "tip"]
    assert per_patch == [(p, c) for p in patches for c in kernelcheck.PER_PATCH]
    assert all("kernel/sched/" in s["targets"] for s in record["steps"] if s["patch"] != "tip")
    # the tip links an Image in every other configuration
    tips = {s["config"]: s for s in record["steps"] if s["patch"] == "tip"}
    assert set(tips) == set(kernelcheck.CONFIGS) - {"kit"}
    assert result.failures == [], result.failures
    assert result.warnings == [], result.warnings

    def symbols(config: str) -> dict[str, str]:
        found: dict[str, str] = tips[config]["config_symbols"]
        return {
            s: found.get(s, "n")
            for s in (
                "CONFIG_SCHED_AMP",
                "CONFIG_SCHED_COLAB",
                "CONFIG_FUTEX_ACCT",
                "CONFIG_FAIR_GROUP_SCHED",
                "CONFIG_CFS_BANDWIDTH",
                "CONFIG_CPUSETS",
                "CONFIG_PREEMPT",
            )
        }

    # each configuration is the one it claims to be
    assert symbols("no-colab") == {
        "CONFIG_SCHED_AMP": "y",
        "CONFIG_SCHED_COLAB": "n",
        "CONFIG_FUTEX_ACCT": "n",
        "CONFIG_FAIR_GROUP_SCHED": "n",
        "CONFIG_CFS_BANDWIDTH": "n",
        "CONFIG_CPUSETS": "n",
        "CONFIG_PREEMPT": "n",
    }
    assert symbols("no-amp")["CONFIG_SCHED_AMP"] == "n"
    assert symbols("no-amp")["CONFIG_FUTEX_ACCT"] == "n"
    # ...and without the time scale: its stubs build too
    assert tips["no-amp"]["config_symbols"].get("CONFIG_SCHED_TIMESCALE", "n") == "n"
    assert symbols("cgroups-preempt") == {
        "CONFIG_SCHED_AMP": "y",
        "CONFIG_SCHED_COLAB": "y",
        "CONFIG_FUTEX_ACCT": "y",
        "CONFIG_FAIR_GROUP_SCHED": "y",
        "CONFIG_CFS_BANDWIDTH": "y",
        "CONFIG_CPUSETS": "y",
        "CONFIG_PREEMPT": "y",
    }

    def ranked(config: str) -> dict[str, str]:
        found: dict[str, str] = tips[config]["config_symbols"]
        names = ("CONFIG_SCHED_HSP", "CONFIG_SCHED_EEF", "CONFIG_SCHED_AMP_RR", "CONFIG_SCHED_ACFS")
        return {s: found.get(s, "n") for s in (*names, "CONFIG_SCHED_AMP_RANK")}

    # the ranked policies: none without COLAB or alone with it; with
    # cgroups, HSP and ACFS without EEF-Driven (ACFS's knobs alone) or RR
    assert set(ranked("colab-alone").values()) == {"n"}
    assert symbols("colab-alone")["CONFIG_SCHED_COLAB"] == "y"
    assert set(ranked("no-colab").values()) == {"n"}
    assert ranked("cgroups-preempt") == {
        "CONFIG_SCHED_HSP": "y",
        "CONFIG_SCHED_EEF": "n",
        "CONFIG_SCHED_AMP_RR": "n",
        "CONFIG_SCHED_ACFS": "y",
        "CONFIG_SCHED_AMP_RANK": "y",
    }
