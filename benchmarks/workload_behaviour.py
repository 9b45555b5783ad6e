"""Figures for what the workloads do on gem5: waiting, parallelism, cost.

    .venv/bin/python benchmarks/workload_behaviour.py [DIR ...] [--scaling DIR]
        [--speedups PROFILE ...]

Reads the runs of each catalogue program alone on gem5 2B2L (by default
the committed archive, measurements/gem5-workloads/runs; give a campaign
directory to read one being made) and prints, per program and policy:
its region of interest and its whole process (start-up and self-check
included), the share of its threads' lives blocked on futexes and the
waiting it ended, its parallelism (CPU time over region), and the run's
wall-clock cost; then each program's cost line and the sizes for a few
spans; then, per catalogue mix, whether its programs make its category
by the rule of ampkit/behaviour.py, with the count the rule reads and
each program's blocked share. The scaling table converts a one-thread
run to a big CPU by the program's speedup: the first of the --speedups
profiles (default configs/speedups.toml) that has it. Figures, not
tests: the runs are made
by the campaigns in measurements/gem5-workloads (README there).
"""

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from ampkit.behaviour import (
    BASELINE,
    Table,
    check_mix,
    independent,
    measure,
    waits,
)
from ampkit.categories import INDEPENDENT_SHARE, WAITING_SHARE
from ampkit.mix import load_mix, mix_names
from ampkit.paths import REPO_ROOT
from ampkit.profile import load_profile
from ampkit.rundir import RunDir, find_run_dirs

ARCHIVE = REPO_ROOT / "measurements" / "gem5-workloads" / "runs"
SCALING = REPO_ROOT / "measurements" / "gem5-workloads" / "scaling-runs"
SPEEDUPS = REPO_ROOT / "configs" / "speedups.toml"
SPANS_MS = (10.0, 20.0, 40.0, 80.0)


@dataclass(frozen=True)
class OneThread:
    """A program's run alone with one thread: its region and where it ran."""

    program: str
    size: int
    region_ns: int
    big_ns: int
    little_ns: int


def one_thread_runs(root: Path) -> list[OneThread]:
    """The one-thread runs under ``root`` (scaling.toml's), by program."""
    out = []
    finished, _ = find_run_dirs(root)
    for run_dir in finished:
        verdict = RunDir(run_dir).judge()
        if len(verdict.records) != 1 or verdict.records[0].threads != 1:
            continue
        rec = verdict.records[0]
        (task,) = rec.raw["tasks"]
        out.append(
            OneThread(
                program=rec.program,
                size=int(verdict.info.mix_apps[0].get("size") or 0),
                region_ns=rec.turnaround_ns,
                big_ns=int(task.get("big_ns", 0)),
                little_ns=int(task.get("little_ns", 0)),
            )
        )
    return sorted(out, key=lambda o: o.program)


def print_scaling(table: Table, ones: list[OneThread], profiles: list[Path]) -> None:
    """Each program's region with four threads against one, at one size.
    On 2B2L one thread runs on a big or a little CPU as the baseline put
    it, so its time is also given as if all of it had run on a big CPU
    (its little time over its big/little speedup: the first of ``profiles``
    that has the program, configs/speedups.toml by default).
    Efficiency is the speedup over that, per thread. Two bounds for four
    threads on two big and two little CPUs, one thread each: equal shares
    of the work (the little CPUs' threads finish last) give 4 / speedup;
    work that moves to whichever CPU is free, 2 + 2 / speedup."""
    speedups: dict[str, float] = {}
    source: dict[str, str] = {}
    for path in profiles:
        for program, value in load_profile(path).speedups().items():
            if program not in speedups:
                speedups[program], source[program] = value, _shown(path)
    print(
        "\nscaling alone under cfs on 2B2L, one thread against four at one size "
        f"(speedups: {', '.join(_shown(p) for p in profiles)}, the first that has the program):"
    )
    print(
        f"{'program':9} {'size':>7} {'t1 ms':>8} {'on big':>6} {'t1 big ms':>9} "
        f"{'t4 ms':>8} {'speedup':>7} {'effic.':>6} {'equal':>5} {'moved':>5}"
    )
    first = _shown(profiles[0])
    for one in ones:
        four = next(
            (m for m in table.measurements if (m.program, m.threads, m.size, m.policy)
             == (one.program, 4, one.size, BASELINE)),
            None,
        )  # fmt: skip
        s = speedups.get(one.program)
        if four is None or s is None:
            missing = "no four-thread run at this size" if four is None else "no speedup"
            print(f"{one.program:9} {one.size:7} {missing}")
            continue
        on_cpu = one.big_ns + one.little_ns
        big_share = one.big_ns / on_cpu if on_cpu else math.nan
        # the region as if its CPU time had all been on a big CPU, the rest (waiting) as it was
        as_big = one.region_ns - one.little_ns + one.little_ns / s
        speedup = as_big / four.region_ns
        print(
            f"{one.program:9} {one.size:7} {one.region_ns / 1e6:8.3f} {big_share:6.0%} "
            f"{as_big / 1e6:9.3f} {four.region_ns / 1e6:8.3f} {speedup:7.2f} "
            f"{speedup / 4:6.0%} {4 / s:5.2f} {2 + 2 / s:5.2f}"
            + (
                f"  (speedup {s:.2f}: {source[one.program]})"
                if source[one.program] != first
                else ""
            )
        )


def _shown(path: Path) -> str:
    """A profile's path as the output shows it: from the repository where inside it."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=[str(ARCHIVE)])
    parser.add_argument(
        "--scaling", type=Path, default=SCALING, help="the one-thread runs (scaling.toml's)"
    )
    parser.add_argument(
        "--speedups",
        type=Path,
        action="append",
        help="a speedup profile for the scaling table, repeatable: the first that has a "
        "program gives its speedup (default configs/speedups.toml)",
    )
    args = parser.parse_args()
    table, left_out = measure([Path(d) for d in args.dirs], "gem5")
    for line in left_out:
        print(f"left out: {line}")
    print(
        f"{'program':9} {'policy':6} {'thr':>3} {'size':>7} {'region ms':>9} {'process ms':>10} "
        f"{'blocked':>7} {'caused':>7} {'parall.':>7} {'wall s':>6}"
    )
    for m in table.measurements:
        print(
            f"{m.program:9} {m.policy:6} {m.threads:3} {m.size:7} {m.region_ns / 1e6:9.3f} "
            f"{m.process_ns / 1e6:10.3f} {m.blocked_share:7.1%} {m.caused_share:7.1%} "
            f"{m.parallelism:7.2f} {m.wall_s:6.0f}"
        )
    print(f"\ncost lines (alone under {BASELINE}): sizes for {', '.join(map(str, SPANS_MS))} ms")
    for c in table.costs:
        sizes = " ".join(f"{c.size_for(s):>8}" for s in SPANS_MS)
        print(
            f"{c.program:9} {c.ns_per_unit:10.1f} ns/unit + {c.fixed_ns / 1e6:6.3f} ms; "
            f"{c.wall_s_per_sim_ms:5.2f} wall s/ms + {c.wall_fixed_s:4.0f} s; sizes {sizes}"
        )
    if args.scaling.is_dir():
        print_scaling(table, one_thread_runs(args.scaling), args.speedups or [SPEEDUPS])
    print(
        f"\ncatalogue mixes against their categories (a program waits at "
        f"{WAITING_SHARE:.0%} blocked alone under {BASELINE} or more, is independent "
        f"under {INDEPENDENT_SHARE:.0%}): its programs' blocked shares"
    )
    for name in mix_names():
        mix = load_mix(name)
        programs = [a.program for a in mix.apps]
        verdict = check_mix(mix, table)
        word = {True: "holds", False: "DOES NOT HOLD", None: "not all measured"}[verdict.holds]
        found = [table.of(a.program, threads=a.threads) for a in mix.apps]
        shares = " ".join(
            f"{p} {m.blocked_share:.0%}" if m else f"{p} -"
            for p, m in zip(programs, found, strict=True)
        )
        measured = [m for m in found if m is not None]
        if mix.category == "compute":
            count = f"{sum(independent(m) for m in measured)} of {len(programs)} independent"
        else:
            need = math.ceil(len(programs) / 2)
            count = f"{sum(waits(m) for m in measured)} of {len(programs)} wait (needs {need})"
        print(f"{name:44} {mix.category:16} {word:16} {count:26} {shares}")


if __name__ == "__main__":
    main()
