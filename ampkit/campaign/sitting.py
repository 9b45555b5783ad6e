"""A sitting: the runs of a campaign that fit in the time a machine is there.

A campaign longer than the time its machine is there (a session, a SLURM
reservation, a night) loses the runs in flight when it stops: they run
again from their start the next time. Given the sitting's length
(``ampkit campaign run --sitting 2h30m``), the local executor starts a run
only when it is expected to end before the sitting does, the longest such
run first (the short ones then fill the sitting's end), and starts none
once no run left fits; the runs left stay to run at the next sitting. Runs
in slices (a gem5 campaign's ``slice_ms``) resume at their last finished
slice, so the sitting then starts one while any time is left (next_run).

A run's expected wall time is its estimate (``ampkit/campaign/estimate.py``)
times the largest ratio of wall time to estimate among this campaign's
finished runs of its kind (its policy, or the references, on its
platform), or among all its finished runs where none of its kind has
finished, and the estimate itself where none has; never more than the
run's wall-clock limit, at which it would fail anyway. A run without an
estimate (an engine that does not model the cores) is expected to take
its wall-clock limit. The largest ratio, not the mean: a run that outlasts
the sitting is lost whole, one that ends early only leaves a core idle.
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ampkit.errors import UsageError

#: A run's kind, as its finished peers are grouped: (policy or
#: "references", platform).
Kind = tuple[str, str]

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")


def parse_duration(text: str) -> float:
    """Seconds in ``2h30m``, ``90m``, ``1.5h`` or ``5400s``."""
    match = _DURATION.match(text.strip().lower())
    if not text.strip() or match is None or not any(match.groups()):
        raise UsageError(
            f"--sitting {text!r} is not a duration",
            "give hours, minutes and/or seconds, e.g. 2h30m, 90m or 5400s",
        )
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise UsageError(f"--sitting {text!r} is no time at all", "give a positive one: 2h30m, 90m")
    return total


@dataclass(frozen=True)
class Finished:
    """A finished run of the campaign: its kind, what it took and what it was estimated at."""

    kind: Kind
    wall_s: float
    estimate_s: float


def ratios(finished: Sequence[Finished]) -> tuple[dict[Kind, float], float | None]:
    """The largest ratio of wall time to estimate per kind, and over all."""
    per: dict[Kind, float] = {}
    for f in finished:
        if f.estimate_s > 0:
            per[f.kind] = max(per.get(f.kind, 0.0), f.wall_s / f.estimate_s)
    return per, max(per.values()) if per else None


def expected_walls(
    kinds: Mapping[str, Kind],
    estimates: Mapping[str, float],
    finished: Sequence[Finished],
    limit_s: float,
) -> dict[str, float]:
    """Each run's (of ``kinds``) expected wall seconds, as the module says."""
    per, overall = ratios(finished)
    out = {}
    for run_id, kind in kinds.items():
        estimate = estimates.get(run_id)
        if estimate is None:
            out[run_id] = limit_s
            continue
        ratio = per.get(kind, overall if overall is not None else 1.0)
        out[run_id] = min(estimate * ratio, limit_s)
    return out


def next_run(
    queue: Sequence[str], expected: Mapping[str, float], left_s: float, resumable: bool = False
) -> str | None:
    """Of the runs not started, the longest expected to end within ``left_s``
    (the first of equals, in the plan's order); None when none does. Runs
    in slices (``resumable``) keep every slice they finish, so while time
    is left one starts even if it cannot end: a stop then costs only its
    slice in flight, as an idle core would have cost the same time. The
    longest first then too, as those need the most sittings; never one
    expected never to end (math.inf: held back by the runner)."""
    best: str | None = None
    for run_id in queue:
        wall = expected[run_id]
        if wall <= left_s and (best is None or wall > expected[best]):
            best = run_id
    if best is None and resumable and left_s > 0:
        startable = [run_id for run_id in queue if expected[run_id] < math.inf]
        best = max(startable, key=lambda run_id: expected[run_id], default=None)
    return best


def describe(per: Mapping[Kind, float], overall: float | None) -> str:
    """The ratios in use, for the runner's output."""
    if overall is None:
        return "no run finished yet: each run expected at its estimate"
    parts = [f"{role} on {platform} x{r:.2f}" for (role, platform), r in sorted(per.items())]
    return f"estimates times the longest finished run of its kind: {', '.join(parts)}"
