"""A short plain-text summary of finished runs (the end of 'make demo').

It shows what each run measured and nothing it did not: turnaround per
application and the spread of thread times. The comparison metrics (H_ANTT,
H_STP, fairness) need reference runs and come with the analysis stage.
"""

from pathlib import Path

from ampkit.rundir import OK, QEMU_NOTICE, Excluded, RunDir, walk_records

__all__ = ["QEMU_NOTICE", "summarize"]


def timing_notices(run_dirs: list[Path]) -> list[str]:
    """What the runs' engines say their timings can and cannot say, each
    once (QEMU's for QEMU runs; nothing for gem5's), as their manifests
    record it."""
    notices: list[str] = []
    for path in run_dirs:
        try:
            notice = RunDir(path).info().timing_notice
        except Excluded:
            continue
        if notice and notice not in notices:
            notices.append(str(notice))
    return notices


def summarize(run_dirs: list[Path]) -> str:
    notices = timing_notices(run_dirs)
    lines = [*notices, ""] if notices else []
    header = f"{'run':<34} {'app':<12} {'thr':>3} {'turnaround ms':>13} {'thread ms min/max':>19}"
    lines += [header, "-" * len(header)]
    for run, records in walk_records(run_dirs):
        name, status = run.path.name, run.status()
        if not records:
            lines.append(f"{name:<34} {status}")
        for rec in records:
            times = rec.thread_wall_ns
            spread = f"{min(times) / 1e6:8.1f}/{max(times) / 1e6:<8.1f}" if times else "-"
            lines.append(
                f"{name:<34} {rec.name:<12} {rec.threads:>3} "
                f"{rec.turnaround_ns / 1e6:>13.1f} {spread:>19}"
            )
        if records and status != OK:
            lines.append(f"{'':<34} {status}")
    return "\n".join(lines) + "\n"
