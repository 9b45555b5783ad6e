"""The online speedup model's estimates as tidy frames, and their error
against measured speedups.

A run fed by the online model (ampkit/online.py) leaves its daemon's log
as ``online.jsonl``: one record per thread and period with an estimate.
``estimates()`` makes them one row each, named by run, policy, platform
and application, and says whether the period lies wholly in the
application's region of interest; ``accuracy()`` sets each application's
estimate over its region (the mean over those periods, weighted by the
instructions behind each) beside its measured speedup, as WASH's figure 6 sets its
model's predictions beside the measured ones. The region, because the
measured speedup is the region's: a program's set-up and self-check run
other code (stream's serial replay, predicted at 0.25 on gem5, would pull
its estimate anywhere).
"""

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from ampkit.rundir import Excluded, RunDir

COLUMNS = [
    "run_id",
    "policy",
    "platform",
    "app_index",
    "app",
    "tid",
    "from_ns",
    "t_ns",
    "t_ms",
    "in_region",
    "instructions_big",
    "instructions_little",
    "predicted_big",
    "predicted_little",
    "estimate",
    "used",
    "stable",
]


def estimates(run_dirs: Iterable[Path]) -> pd.DataFrame:
    """One row per estimate of every run that has an online log (runs
    without one add nothing): ``predicted_*`` is the core type's model's
    prediction (NaN where the thread ran too little there), ``estimate``
    the period's, ``used`` what the daemon gave the kernel after
    smoothing."""
    rows = []
    for path in run_dirs:
        run = RunDir(path)
        records = run.online_records()
        if not records:
            continue
        try:
            info = run.info()
            # the region of interest; the process where a program marked none
            regions = [rec.roi_ns or (rec.start_ns, rec.end_ns) for rec in run.records(info)]
        except Excluded:
            continue  # not a run the analysis can read: collect and report say why
        apps = [a["program"] for a in info.mix_apps]
        first = min((r["from_ns"] for r in records if r.get("what") == "estimate"), default=0)
        for r in records:
            if r.get("what") != "estimate":
                continue
            region = regions[r["app"]] if 0 <= r["app"] < len(regions) else None
            big, little = r["per_type"]
            rows.append(
                {
                    "run_id": info.run_id,
                    "policy": info.policy,
                    "platform": info.platform,
                    "app_index": r["app"],
                    "app": apps[r["app"]] if 0 <= r["app"] < len(apps) else None,
                    "tid": r["tid"],
                    "from_ns": r["from_ns"],
                    "t_ns": r["t_ns"],
                    "t_ms": (r["t_ns"] - first) / 1e6,
                    "in_region": _in_region(r["from_ns"], r["t_ns"], region),
                    "instructions_big": r["instructions"][0],
                    "instructions_little": r["instructions"][1],
                    "predicted_big": float("nan") if big is None else big,
                    "predicted_little": float("nan") if little is None else little,
                    "estimate": r["estimate"],
                    "used": r["speedup_q10"] / 1024,
                    "stable": r["stable"],
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def _in_region(start: int, end: int, region: tuple[int, int] | None) -> bool:
    """Whether the estimate's span [start, end] lies wholly in the region.

    A span across a bound mixes the region's work with the set-up's or
    the self-check's, in proportions its counts cannot tell: a main thread
    that joins its workers through the region and then replays their work
    has its counts held back over the join (online_carry) and one estimate
    whose span covers most of the region and whose instructions all come
    after it (latency's, on gem5: 3.07 from the replay beside its walker's
    0.83, the replay's 1.6 million instructions outweighing the walk's
    0.15)."""
    if region is None or end <= start:
        return False
    return region[0] <= start and end <= region[1]


def accuracy(frame: pd.DataFrame, measured: Mapping[str, float]) -> pd.DataFrame:
    """Per run and application: the estimate over its region of interest
    (its periods there, weighted by their instructions), its measured
    speedup (``measured``: program -> speedup; NaN where it has none) and
    the relative error. An application with no period in its region has
    no row."""
    frame = frame[frame["in_region"].astype(bool)]
    if frame.empty:
        return pd.DataFrame(
            columns=["run_id", "policy", "app", "periods", "estimate", "measured", "error"]
        )
    weight = frame["instructions_big"] + frame["instructions_little"]
    weighted = frame.assign(weight=weight, weighted=frame["estimate"] * weight)
    out = (
        weighted.groupby(["run_id", "policy", "app_index", "app"], as_index=False)
        .agg(periods=("estimate", "size"), weighted=("weighted", "sum"), weight=("weight", "sum"))
        .assign(estimate=lambda d: d["weighted"] / d["weight"])
        .drop(columns=["weighted", "weight", "app_index"])
    )
    out["measured"] = out["app"].map(lambda a: measured.get(a, float("nan")))
    out["error"] = (out["estimate"] - out["measured"]) / out["measured"]
    return out
