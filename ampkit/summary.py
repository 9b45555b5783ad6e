"""A short plain-text summary of finished runs (the end of 'make demo').

It shows what each run measured and nothing it did not: turnaround per
application and the spread of thread times. The comparison metrics (H_ANTT,
H_STP, fairness) need reference runs and come with the analysis stage.
"""

import json
from pathlib import Path
from typing import Any

from ampkit.run import read_status

QEMU_NOTICE = (
    "QEMU runs every CPU at the same speed: these timings check that the "
    "pipeline works and say nothing about big.LITTLE performance."
)


def _records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "results.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarize(run_dirs: list[Path]) -> str:
    lines = [QEMU_NOTICE, ""]
    header = f"{'run':<34} {'app':<12} {'thr':>3} {'turnaround ms':>13} {'thread ms min/max':>19}"
    lines += [header, "-" * len(header)]
    for run_dir in run_dirs:
        status = read_status(run_dir)
        records = _records(run_dir)
        if not records:
            lines.append(f"{run_dir.name:<34} {status}")
        for rec in records:
            times = rec.get("thread_times_ns") or []
            spread = f"{min(times) / 1e6:8.1f}/{max(times) / 1e6:<8.1f}" if times else "-"
            turnaround = (rec["end_ns"] - rec["start_ns"]) / 1e6
            name = f"{rec['app']}#{rec['instance']}"
            lines.append(
                f"{run_dir.name:<34} {name:<12} {rec['threads']:>3} "
                f"{turnaround:>13.1f} {spread:>19}"
            )
        if records and status != "ok":
            lines.append(f"{'':<34} {status}")
    return "\n".join(lines) + "\n"
