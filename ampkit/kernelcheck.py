"""The patch series checked as a kernel maintainer would check it.

Two things a reviewer needs that one build of the kit's kernel cannot show:

* **Bisectability.** Every patch, applied in order on the pristine source,
  compiles in every configuration below: the objects of ``kernel/sched/``
  and ``kernel/futex/`` and every other C file the series has touched so
  far, built incrementally (only what the patch changed is recompiled).
* **Every configuration at the tip.** The whole series links a kernel
  Image without ``SCHED_COLAB``, without ``SCHED_AMP`` (which must give the
  scheduler of an unpatched kernel), with COLAB but without the ranked
  policies, and with group scheduling, CFS
  bandwidth control, cpusets and full preemption, which the kit's own
  configuration leaves out but which the fair class's hooks and WASH's
  cpuset check must survive (there with HSP and ACFS but not EEF-Driven or
  RR).

C warnings are errors in every configuration (``CONFIG_WERROR`` is in the
kit's fragment). A check is cached by its inputs' digest, like a kernel
build, so an unchanged series is not checked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ampkit import hostdeps
from ampkit.errors import AmpkitError
from ampkit.hashing import write_json
from ampkit.kernel import (
    KernelInputs,
    Log,
    SourceTree,
    apply_patch,
    config_mismatches,
    make_cmd,
    parse_config,
    run_logged,
    say,
    touched_files,
    unpack_source,
)
from ampkit.paths import cache_dir

#: Configurations beside the kit's own, as lines added to its fragment.
CONFIGS: dict[str, str] = {
    "kit": "",
    # COLAB and WASH without the ranked policies (HSP, EEF-Driven, RR, ACFS)
    "colab-alone": (
        "# CONFIG_SCHED_HSP is not set\n"
        "# CONFIG_SCHED_EEF is not set\n"
        "# CONFIG_SCHED_AMP_RR is not set\n"
        "# CONFIG_SCHED_ACFS is not set\n"
        "# CONFIG_SCHED_AMP_RANK_KUNIT_TEST is not set\n"
    ),
    "no-colab": (
        "# CONFIG_SCHED_COLAB is not set\n"
        "# CONFIG_SCHED_WASH is not set\n"
        "# CONFIG_SCHED_COLAB_KUNIT_TEST is not set\n"
        "# CONFIG_SCHED_WASH_KUNIT_TEST is not set\n"
        "# CONFIG_SCHED_HSP is not set\n"
        "# CONFIG_SCHED_EEF is not set\n"
        "# CONFIG_SCHED_AMP_RR is not set\n"
        "# CONFIG_SCHED_ACFS is not set\n"
        "# CONFIG_SCHED_AMP_RANK_KUNIT_TEST is not set\n"
    ),
    "no-amp": (
        "# CONFIG_SCHED_TIMESCALE is not set\n"
        "# CONFIG_SCHED_AMP is not set\n"
        "# CONFIG_SCHED_COLAB is not set\n"
        "# CONFIG_SCHED_WASH is not set\n"
        "# CONFIG_SCHED_COLAB_KUNIT_TEST is not set\n"
        "# CONFIG_SCHED_WASH_KUNIT_TEST is not set\n"
        "# CONFIG_SCHED_HSP is not set\n"
        "# CONFIG_SCHED_EEF is not set\n"
        "# CONFIG_SCHED_AMP_RR is not set\n"
        "# CONFIG_SCHED_ACFS is not set\n"
        "# CONFIG_SCHED_AMP_RANK_KUNIT_TEST is not set\n"
    ),
    "cgroups-preempt": (
        "CONFIG_CGROUPS=y\n"
        # WASH binds only tasks of the root cpuset (wash_in_root_cpuset())
        "CONFIG_CPUSETS=y\n"
        "CONFIG_CGROUP_SCHED=y\n"
        "CONFIG_FAIR_GROUP_SCHED=y\n"
        "CONFIG_CFS_BANDWIDTH=y\n"
        "CONFIG_PREEMPT=y\n"
        # HSP and ACFS without EEF-Driven or RR: the ranking without the
        # phase detection or the turns, ACFS's knobs without EEF's
        "# CONFIG_SCHED_EEF is not set\n"
        "# CONFIG_SCHED_AMP_RR is not set\n"
    ),
}

#: Checked at every patch (compiled objects); every configuration links at the tip.
PER_PATCH = tuple(CONFIGS)

#: Always compiled at every patch: where the series' hooks live.
BASE_TARGETS = ("kernel/sched/", "kernel/futex/")

#: Symbols a tip step records from its configuration, to show what it built.
RECORDED_SYMBOLS = (
    "CONFIG_SCHED_",
    "CONFIG_FUTEX",
    "CONFIG_PREEMPT",
    "CONFIG_FAIR_GROUP",
    "CONFIG_CFS_BANDWIDTH",
    "CONFIG_CPUSETS",
)

#: Bump when what the check does changes, so old results are not reused.
CHECK_VERSION = 1


def patch_targets(touched: set[str]) -> list[str]:
    """Make targets that compile the C files a series has touched so far."""
    targets = set(BASE_TARGETS)
    for rel in touched:
        if not rel.endswith(".c"):
            continue
        if any(rel.startswith(base) for base in BASE_TARGETS):
            continue
        targets.add(rel[: -len(".c")] + ".o")
    return sorted(targets)


@dataclass(frozen=True)
class SeriesCheck:
    """A finished check: where its record and logs are."""

    directory: Path

    @property
    def record(self) -> dict[str, Any]:
        result: dict[str, Any] = json.loads((self.directory / "check.json").read_text())
        return result

    @property
    def failures(self) -> list[str]:
        return [
            f"{s['config']} at {s['patch']}: {s['error']}"
            for s in self.record["steps"]
            if s["error"]
        ]

    @property
    def warnings(self) -> list[str]:
        return [w for s in self.record["steps"] for w in s["warnings"]]


def check_digest(inputs: KernelInputs) -> str:
    what = {
        "kernel": inputs.digest,
        "configs": CONFIGS,
        "per_patch": PER_PATCH,
        "version": CHECK_VERSION,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def find_check(inputs: KernelInputs | None = None) -> SeriesCheck | None:
    inputs = inputs or KernelInputs.discover("default")
    found = SeriesCheck(cache_dir() / "series-checks" / check_digest(inputs)[:16])
    return found if (found.directory / "check.json").is_file() else None


@dataclass
class _Builder:
    """Builds of one pristine tree, each configuration in its own directory."""

    src: Path
    base: Path
    fragment: str
    log_file: Path
    log: Log

    def configure(self, config: str) -> Path:
        """The configuration's build directory, configured for the tree as it is."""
        obj = self.base / f"obj-{config}"
        obj.mkdir(parents=True, exist_ok=True)
        extra = CONFIGS[config]
        frag = obj / "ampkit.fragment"
        frag.write_text(self.fragment + extra)
        # allnoconfig every time, not olddefconfig: a patch that adds a
        # symbol the fragment sets must get the fragment's value, not the
        # symbol's default (cheap, and an unchanged .config rebuilds nothing)
        run_logged(
            [*make_cmd(self.src, obj, 1, "allnoconfig"), f"KCONFIG_ALLCONFIG={frag}"],
            self.log_file,
            self.log,
        )
        # Only the extra lines must hold: the kit's own symbols may depend on
        # the options a check turns off (SCHED_COLAB on SCHED_AMP, for one).
        config_text = (obj / ".config").read_text()
        bad = config_mismatches(parse_config(extra), parse_config(config_text))
        if bad:
            raise AmpkitError(
                f"the check's configuration {config} does not hold: " + "; ".join(bad)
            )
        return obj

    def step(self, config: str, patch: str, targets: list[str]) -> dict[str, Any]:
        obj = self.configure(config)
        self.log(f"kernel check: {patch} ({config})")
        started = time.monotonic()
        error = ""
        warnings: list[str] = []
        try:
            warnings = run_logged(
                make_cmd(self.src, obj, os.cpu_count() or 1, *targets), self.log_file, self.log
            )
        except AmpkitError as e:
            error = e.what
        return {
            "config": config,
            "patch": patch,
            "targets": targets,
            "seconds": round(time.monotonic() - started, 1),
            "warnings": warnings,
            "error": error,
        }


def check(inputs: KernelInputs | None = None, log: Log = say) -> SeriesCheck:
    """Check the series (or return the cached check of the same inputs)."""
    inputs = inputs or KernelInputs.discover("default")
    found = find_check(inputs)
    if found is not None:
        return found
    hostdeps.require("make", "gcc", "flex", "bison", "bc", "perl", "patch", "xz")
    result = SeriesCheck(cache_dir() / "series-checks" / check_digest(inputs)[:16])
    tree = SourceTree(inputs)
    base = tree.base / "check"
    src = base / "src"
    stage = result.directory.with_name(result.directory.name + ".partial")
    with tree.locked(log):
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        log_file = stage / "check.log"
        started = time.time()

        # A pristine tree of its own: the shared one holds the whole series.
        shutil.rmtree(src, ignore_errors=True)
        log(f"kernel check: unpacking a pristine tree in {src}")
        unpack_source(inputs.tarball, src)

        builder = _Builder(
            src=src,
            base=base,
            fragment="".join(f.read_text() for f in inputs.fragments),
            log_file=log_file,
            log=log,
        )
        steps: list[dict[str, Any]] = []
        touched: set[str] = set()
        for patch in inputs.patches:
            apply_patch(src, patch, inputs.debian_version)
            touched |= touched_files(patch)
            for config in PER_PATCH:
                steps.append(builder.step(config, patch.name, patch_targets(touched)))
        for config in CONFIGS:
            if config == "kit":
                continue  # the kit's own Image is the default kernel build
            step = builder.step(config, "tip", ["Image"])
            symbols = parse_config((base / f"obj-{config}" / ".config").read_text())
            step["config_symbols"] = {
                sym: val for sym, val in symbols.items() if sym.startswith(RECORDED_SYMBOLS)
            }
            steps.append(step)

        write_json(
            stage / "check.json",
            {
                "kind": "ampkit-series-check",
                "kernel_digest": inputs.digest,
                "series": [p.name for p in inputs.patches],
                "configs": CONFIGS,
                "per_patch": list(PER_PATCH),
                "seconds": round(time.time() - started, 1),
                "steps": steps,
            },
        )
        shutil.rmtree(result.directory, ignore_errors=True)
        stage.rename(result.directory)
    failed = result.failures
    log(
        f"kernel check: {len(result.record['steps'])} steps, {len(failed)} failed, "
        f"in {result.record['seconds']} s; log {result.directory / 'check.log'}"
    )
    return result
