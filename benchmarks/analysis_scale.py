"""Figures for the analysis at campaign scale: collect, metrics, report.

    .venv/bin/python benchmarks/analysis_scale.py [--runs N]

Writes about N run directories (default 10,000) in the kit's layout with
ampkit.analysis.synthetic: 4 platforms x 3 policies x 26 mixes of 2-4
applications x as many repetitions as fit, plus every application alone
under cfs on each platform. Then times, in this one process, collection
into tables, the metrics, and the whole report (plots, Markdown, HTML,
tables), and prints the peak resident memory. Target: under 30 s for the
three on the 2-core development machine. Figures, not tests.
"""

import argparse
import os
import random
import resource
import tempfile
import time
from pathlib import Path

from ampkit.analysis import metrics
from ampkit.analysis.collect import collect
from ampkit.analysis.report import write_report
from ampkit.analysis.synthetic import SynthApp, write_run

PLATFORMS = ("2B2L", "2B4L", "4B2L", "4B4L")
POLICIES = ("cfs", "colab", "wash")
PROGRAMS = [f"prog{i:02}" for i in range(20)]


def generate(root: Path, runs: int, seed: int = 1) -> int:
    rnd = random.Random(seed)
    drawn: list[tuple[str, list[tuple[str, int]]]] = []
    for m in range(26):
        programs = rnd.sample(PROGRAMS, rnd.randint(2, 4))
        drawn.append((f"mix{m:02}", [(p, rnd.choice((1, 2, 4))) for p in programs]))
    # An application keeps the thread count of its first mix in every mix,
    # so that one reference run per platform serves it everywhere.
    threads_of: dict[str, int] = {}
    for _, apps in drawn:
        for program, threads in apps:
            threads_of.setdefault(program, threads)
    mixes = [(name, [p for p, _ in apps]) for name, apps in drawn]
    alone = {p: rnd.uniform(1.0, 5.0) for p in threads_of}
    references = len(PLATFORMS) * len(alone)
    per_rep = len(PLATFORMS) * len(POLICIES) * len(mixes)
    reps = max(1, -(-(runs - references) // per_rep))  # at least `runs` in all
    written = 0
    for platform in PLATFORMS:
        for program, threads in threads_of.items():
            t = int(alone[program] * 1e9)
            write_run(
                root / platform,
                platform=platform,
                policy="cfs",
                mix=f"alone-{program}",
                apps=[SynthApp(program, threads, t)],
            )
            written += 1
        for policy in POLICIES:
            for name, programs in mixes:
                for rep in range(reps):
                    synth = []
                    for program in programs:
                        t = int(alone[program] * rnd.uniform(1.0, 2.5) * 1e9)
                        threads = threads_of[program]
                        synth.append(
                            SynthApp(
                                program,
                                threads,
                                t,
                                [int(t * rnd.uniform(0.6, 1.0)) for _ in range(threads)],
                            )
                        )
                    write_run(
                        root / platform,
                        platform=platform,
                        policy=policy,
                        mix=name,
                        repetition=rep,
                        apps=synth,
                    )
                    written += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="run directories, about")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ampkit-analysis-scale-") as tmp:
        root = Path(tmp) / "campaign"
        t0 = time.perf_counter()
        n = generate(root, args.runs)
        print(
            f"machine: {os.cpu_count()} CPUs; {n} run directories written in "
            f"{time.perf_counter() - t0:.1f} s (not counted)"
        )
        t0 = time.perf_counter()
        col = collect(root)
        t_collect = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, per_run, summary, _ = metrics.compute(col.apps, col.threads, col.cpus)
        t_metrics = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = write_report(root, Path(tmp) / "report", collection=col)
        t_report = time.perf_counter() - t0
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        total = t_collect + t_metrics + t_report
        print(
            f"collect  {t_collect:6.1f} s  ({len(col.apps)} application rows, "
            f"{len(col.threads)} thread rows)"
        )
        print(f"metrics  {t_metrics:6.1f} s  ({len(per_run)} runs, {len(summary)} summary rows)")
        print(f"report   {t_report:6.1f} s  ({len(report.plots)} plots; includes its own metrics)")
        verdict = "within" if total <= 30 else "OVER"
        print(f"total    {total:6.1f} s  target 30 s ({verdict}); peak memory {peak_mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
