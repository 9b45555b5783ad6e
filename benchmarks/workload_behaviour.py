"""Figures for what the workloads do on gem5: waiting, parallelism, cost.

    .venv/bin/python benchmarks/workload_behaviour.py [DIR ...]

Reads the runs of each catalogue program alone on gem5 2B2L (by default
the committed archive, measurements/gem5-workloads/runs; give a campaign
directory to read one being made) and prints, per program and policy:
its region of interest and its whole process (start-up and self-check
included), the share of its threads' lives blocked on futexes and the
waiting it ended, its parallelism (CPU time over region), and the run's
wall-clock cost; then each program's cost line and the sizes for a few
spans; then, per catalogue mix, whether its programs make its category
by the rule of ampkit/behaviour.py, with the count the rule reads and
each program's blocked share. Figures, not tests: the runs are made
by the campaigns in measurements/gem5-workloads (README there).
"""

import argparse
import math
from pathlib import Path

from ampkit.behaviour import (
    BASELINE,
    INDEPENDENT_SHARE,
    WAITING_SHARE,
    check_category,
    independent,
    measure,
    waits,
)
from ampkit.mix import load_mix, mix_names
from ampkit.paths import REPO_ROOT

ARCHIVE = REPO_ROOT / "measurements" / "gem5-workloads" / "runs"
SPANS_MS = (10.0, 20.0, 40.0, 80.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=[str(ARCHIVE)])
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
    print(
        f"\ncatalogue mixes against their categories (a program waits at "
        f"{WAITING_SHARE:.0%} blocked alone under {BASELINE} or more, is independent "
        f"under {INDEPENDENT_SHARE:.0%}): its programs' blocked shares"
    )
    for name in mix_names():
        mix = load_mix(name)
        programs = [a.program for a in mix.apps]
        verdict = check_category(name, mix.category, programs, table)
        word = {True: "holds", False: "DOES NOT HOLD", None: "not all measured"}[verdict.holds]
        found = [table.of(p) for p in programs]
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
