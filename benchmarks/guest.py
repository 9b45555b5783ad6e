"""What the benchmark scripts share: one application booted alone in a guest."""

from pathlib import Path
from typing import Any

from ampkit import build, kernel
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import DEFAULT_TIMEOUT_S, RunRequest, execute


def run_alone(
    out: Path,
    build_: kernel.KernelBuild,
    app: App,
    *,
    name: str,
    category: str,
    platform: str,
    policy: str,
    timeout_s: int = DEFAULT_TIMEOUT_S,
) -> dict[str, Any]:
    """Boots the kit kernel with ``app`` as the whole mix ``name``; the
    application's record, or an exit naming the run directory if it failed."""
    mix = Mix(
        name=name,
        description=f"{name} benchmark",
        category=category,
        apps=(app,),
        source=Path(name),
    )
    request = RunRequest(
        platform=get_platform(platform), policy=policy, mix=mix, timeout_s=timeout_s
    )
    outcome = execute(request, out, build_, build.initramfs_image())
    if not outcome.ok:
        raise SystemExit(f"the {name} run failed: {outcome.status} ({out})")
    record: dict[str, Any] = outcome.report.apps[0]
    return record
