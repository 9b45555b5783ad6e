"""Figures for campaigns: planning at scale, and what an executor adds to a run.

    .venv/bin/python benchmarks/campaign.py [--runs N] [--executor-runs M]

1. Planning: a spec of 4 platforms x 3 policies x the 26 catalogue mixes
   with enough repetitions for N runs (default 10,000) with their
   references; times reading the spec, expanding it, keying every run (each
   run's description and inputs hashed, one device tree per platform) and
   reading each run's state from the campaign directory. Target: under 5 s.
2. Executor overhead: M short runs (default 6; a probe that sleeps a
   second, on QEMU 2B2L) through the local executor, one at a time, and,
   when this machine can start the localhost SLURM cluster of the slurm
   tier (root, 'make setup' done), through SLURM. Overhead per run is the
   campaign's wall time less the engine's own (each manifest's wall_s),
   over M: the process start, build check, locking, keying and bookkeeping
   the executor adds. Figures, not tests.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ampkit import build as build_mod  # noqa: E402
from ampkit import kernel  # noqa: E402
from ampkit.campaign.plan import KernelPin, expand, keys, pins_for  # noqa: E402
from ampkit.campaign.spec import load_spec  # noqa: E402
from ampkit.campaign.store import CampaignDir  # noqa: E402
from ampkit.mix import mix_names  # noqa: E402
from ampkit.rundir import RunDir  # noqa: E402

PLATFORMS = ["2B2L", "2B4L", "4B2L", "4B4L"]


def plan_figures(tmp: Path, target: int) -> None:
    mixes = [m for m in mix_names() if m not in ("demo", "pipeline-pair")]
    spec_path = tmp / "big.toml"
    body = (
        f'name = "big"\nplatforms = {json.dumps(PLATFORMS)}\npolicies = ["cfs", "colab", "wash"]\n'
        f"mixes = {json.dumps(mixes)}\nrepetitions = {{reps}}\n"
    )
    spec_path.write_text(body.format(reps=1))
    per_rep = len(expand(load_spec(spec_path)))  # the matrix and its references
    reps = -(-target // per_rep)
    spec_path.write_text(body.format(reps=reps))
    found = kernel.find_build("default")
    pin = KernelPin.of(found) if found else KernelPin(kernel.KernelInputs.discover().digest)
    t0 = time.perf_counter()
    spec = load_spec(spec_path)
    t1 = time.perf_counter()
    runs = expand(spec)
    t2 = time.perf_counter()
    pins = pins_for(spec, runs, pin, build_mod.initramfs_image())
    keyed = list(keys(runs, pins))
    t3 = time.perf_counter()
    cdir = CampaignDir(tmp / "big")
    cdir.create()
    states = [cdir.state(run.run_id, key) for run, key in keyed]
    t4 = time.perf_counter()
    matrix = sum(1 for r in runs if r.role == "matrix")
    print(
        f"plan: {len(runs)} runs ({matrix} matrix = {len(mixes)} mixes x {reps} repetitions "
        f"x 4 platforms x 3 policies, {len(runs) - matrix} references)"
    )
    print(f"  read and check the spec   {t1 - t0:6.2f} s")
    print(f"  expand                    {t2 - t1:6.2f} s")
    print(f"  key every run             {t3 - t2:6.2f} s  (engine, 8 device trees, descriptions)")
    print(f"  state of every run        {t4 - t3:6.2f} s  ({len(states)} lookups)")
    print(f"  total                     {t4 - t0:6.2f} s  (target: under 5 s)")


def executor_figures(tmp: Path, runs: int, executor: str) -> None:
    mix = REPO / "tests" / "data" / "campaign" / "quick.toml"
    spec = tmp / f"{executor}.toml"
    spec.write_text(
        f'name = "overhead-{executor}"\nplatforms = ["2B2L"]\npolicies = ["cfs"]\n'
        f'mixes = ["{mix}"]\nrepetitions = {runs}\nreferences = []\n'
        f'[executor]\nkind = "{executor}"\njobs = 1\nmax_parallel = 1\n'
    )
    root = tmp / executor
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "ampkit", "campaign", "run", str(spec), "--dir", str(root)],
        capture_output=True,
        text=True,
    )
    total = time.monotonic() - started
    if result.returncode != 0:
        print(f"{executor}: the campaign failed:\n{result.stderr[-2000:]}")
        return
    engine = sum(RunDir(d).manifest()["wall_s"] for d in (root / "runs").iterdir() if d.is_dir())
    print(
        f"{executor} executor: {runs} runs one at a time in {total:.1f} s, the engine "
        f"{engine:.1f} s of it: {(total - engine) / runs:.2f} s per run added"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--executor-runs", type=int, default=6)
    args = p.parse_args()
    build_mod.scons("kernel", build_mod.INITRAMFS)
    with tempfile.TemporaryDirectory(prefix="ampkit-bench-campaign-") as tmp:
        plan_figures(Path(tmp), args.runs)
        executor_figures(Path(tmp), args.executor_runs, "local")
        from tests.slurm.cluster import NotRoot, local_cluster, missing_programs

        if missing_programs():
            print("slurm executor: skipped (SLURM not installed: run 'make setup')")
            return
        try:
            with local_cluster(Path(tmp) / "cluster"):
                executor_figures(Path(tmp), args.executor_runs, "slurm")
        except NotRoot as e:
            print(f"slurm executor: skipped ({e})")


if __name__ == "__main__":
    main()
