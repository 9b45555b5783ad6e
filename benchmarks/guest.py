"""What the benchmark scripts share: one application booted alone in a guest."""

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ampkit import build, kernel, policies
from ampkit.engines import DEFAULT_ENGINE
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import DEFAULT_MIX_LIMIT_S, RunRequest, execute


def run_alone(
    out: Path,
    build_: kernel.KernelBuild,
    app: App,
    *,
    name: str,
    category: str,
    platform: str,
    policy: str,
    mix_limit_s: int = DEFAULT_MIX_LIMIT_S,
    engine: str = DEFAULT_ENGINE,
    **fields: Any,
) -> dict[str, Any]:
    """Boots ``build_`` with ``app`` as the whole mix ``name``; the
    application's record, or an exit naming the run directory if it failed.
    ``fields``: any other RunRequest field (kernel_variant, qemu_clock...)."""
    mix = Mix(
        name=name,
        description=f"{name} benchmark",
        category=category,
        apps=(app,),
        source=Path(name),
    )
    request = RunRequest(
        platform=get_platform(platform),
        policy=policy,
        mix=mix,
        engine=engine,
        mix_limit_s=mix_limit_s,
        **fields,
    )
    outcome = execute(request, out, build_, build.initramfs_image())
    if not outcome.ok:
        raise SystemExit(f"the {name} run failed: {outcome.status} ({out})")
    record: dict[str, Any] = outcome.report.apps[0]
    return record


def kit_kernel(*also: str) -> kernel.KernelBuild:
    """The kit kernel, with the initramfs (and any other SCons targets in
    ``also``) brought up to date first."""
    build.scons("kernel", build.INITRAMFS, *also)
    found = kernel.find_build("default")
    assert found is not None
    return found


def worker_cost_args(
    description: str, policy: str, choices: tuple[str, ...] = ()
) -> tuple[argparse.Namespace, kernel.KernelBuild]:
    """The command line of the worker-cost figures (WASH's and COLAB's), and
    the kit kernel and initramfs, built if need be. With ``choices``, a
    ``--policy`` among them, ``policy`` by default; ``args.policy`` is the
    one in force either way."""
    parser = argparse.ArgumentParser(description=description)
    if choices:
        parser.add_argument("--policy", choices=choices, default=policy, help="the policy")
    parser.add_argument("--repeat", type=int, default=3, help="boots")
    parser.add_argument("--seconds", type=float, default=10.0, help="scenario length per boot")
    parser.add_argument("--threads", type=int, default=32, help="threads of the application")
    parser.add_argument("--platform", default="4B4L", help="guest machine")
    args = parser.parse_args()
    if not choices:
        args.policy = policy
    build_ = kit_kernel()
    print(
        f"machine: {os.cpu_count()} CPUs; {args.platform} guest under {args.policy}; "
        f"{args.threads} threads; {args.repeat} boots x {args.seconds:g} s"
    )
    return args, build_


def worker_cost_boot(
    out: Path,
    build_: kernel.KernelBuild,
    scenario: str,
    *,
    policy: str,
    platform: str,
    seconds: float,
    threads: int,
) -> dict[str, float]:
    """One boot of an ampkit-schedtest worker-cost scenario (wash-overhead,
    colab-overhead): the figures it printed. A policy that ranks by hints
    gets nominal ones (1.0) for the application, so that the kit runs it;
    the scenario's threads set their own where they have one, and the
    others keep these."""
    needed = policies.required_inputs(policy)
    record = run_alone(
        out,
        build_,
        App(
            program="ampkit-schedtest",
            threads=threads,
            size=1,
            args=(scenario, str(seconds), str(threads)),
            speedup=1.0 if "speedup" in needed else None,
            epi_big_nj=1.0 if "epi_big_nj" in needed else None,
        ),
        name=scenario,
        category="synchronisation",
        platform=platform,
        policy=policy,
        mix_limit_s=int(seconds * 10 + 120),
    )
    figures: dict[str, float] = json.loads(record["output"])
    return figures


def small_gem5_mix(name: str) -> Mix:
    """The gem5 benchmarks' mix: a small compute beside a small pointer
    chase, a few simulated milliseconds on 2B2L."""
    return Mix(
        name=name,
        description="a small compute beside a small pointer chase",
        category="compute",
        apps=(
            App(program="compute", threads=2, size=200),
            App(program="chase", threads=1, size=1024),
        ),
        source=Path(name),
    )
