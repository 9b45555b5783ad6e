"""Running small mixes on the QEMU machine from the tests."""

import json
from pathlib import Path
from typing import Any

from ampkit.kernel import KernelBuild
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import RunOutcome, RunRequest, execute

#: The guest clock for tests judged by times the guest measures (lock holds,
#: run-queue waits, the bottleneck ranking's decay). Under "icount" a host
#: that is busy elsewhere slows the guest but cannot stall one of its vCPUs
#: in the guest's eyes; see engines/qemu.py CLOCKS.
TIMED = "icount"

#: The guest clock for tests judged by how quickly the guest's own
#: cross-CPU work completes (a worker that moves running threads through
#: the stopper). Under icount the rate follows the host, so on a busy host
#: each vCPU's turn in the round robin spans more guest time, and a move
#: that waits for another vCPU's turn takes longer in the guest's eyes
#: (measured on a host busy with kernel builds: up to 250 ms for COLAB's
#: class balancer to move a thread off a big CPU under icount, 20-170 ms
#: at 1 ns per instruction). At 1 ns per instruction the guest's time
#: depends on what the guest executes alone.
EXECUTED = "instructions"

#: The guest clock for tests of a policy that moves threads every period
#: (rr): QEMU's default, a host thread per vCPU (MTTCG), where a move
#: through the stopper takes milliseconds rather than the icount clocks'
#: turns of the one host thread; a vCPU the host preempts counts as run
#: time for the thread on it, so times blur with host load.
HOST = "host"

#: The stress scenario's limit: it runs SECONDS (60) and on until it has
#: made its flips, for up to five times SECONDS (ampkit-schedtest.c), plus
#: its start and its report.
STRESS_LIMIT_S = 5 * 60 + 30


def make_mix(*apps: App, name: str = "test") -> Mix:
    return Mix(name=name, description="test", category="compute", apps=apps, source=Path(name))


def probe(*args: str) -> App:
    return App(program="ampkit-probe", threads=1, size=1, args=tuple(args))


#: User-space instructions an iteration of 'ampkit-probe perf''s loop may
#: count: it is six (a load, two adds, a store, a compare and a branch, as
#: gcc 12 -O2 builds it, read from the binary's disassembly); bounds that a
#: counter of garbage, of the kernel too or of another event would leave,
#: and that another compiler would keep.
PROBE_LOOP_INSTRUCTIONS = (4, 10)


def run_mix(
    out: Path,
    kernel: KernelBuild,
    initramfs: Path,
    mix: Mix,
    *,
    platform: str = "2B2L",
    policy: str = "cfs",
    **request: Any,
) -> RunOutcome:
    req = RunRequest(platform=get_platform(platform), policy=policy, mix=mix, **request)
    return execute(req, out, kernel, initramfs)


def run_probe(
    out: Path, kernel: KernelBuild, initramfs: Path, *args: str, **request: Any
) -> RunOutcome:
    """A run whose one application is ampkit-probe with these arguments."""
    return run_mix(out, kernel, initramfs, make_mix(probe(*args)), **request)


def app_json(outcome: RunOutcome, index: int) -> dict[str, Any]:
    """The JSON an application (ampkit-probe) printed."""
    data: dict[str, Any] = json.loads(outcome.report.apps[index]["output"])
    return data


def schedtest(*args: str, speedup: float | None = None, epi_big_nj: float | None = None) -> App:
    return App(
        program="ampkit-schedtest",
        threads=1,
        size=1,
        args=tuple(args),
        speedup=speedup,
        epi_big_nj=epi_big_nj,
    )


def run_schedtest(
    out: Path,
    kernel: KernelBuild,
    initramfs: Path,
    *args: str,
    policy: str = "colab",
    speedup: float | None = None,
    epi_big_nj: float | None = None,
    **request: Any,
) -> dict[str, Any]:
    """Runs one ampkit-schedtest scenario; its JSON, once the run is known sound."""
    outcome = run_mix(
        out,
        kernel,
        initramfs,
        make_mix(schedtest(*args, speedup=speedup, epi_big_nj=epi_big_nj)),
        policy=policy,
        **request,
    )
    assert outcome.ok, outcome.status
    assert outcome.report.kernel_problems == [], outcome.report.kernel_problems
    return app_json(outcome, 0)


def threads_by_role(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    roles: dict[str, list[dict[str, Any]]] = {}
    for t in result["threads"]:
        roles.setdefault(t["role"], []).append(t)
    return roles
