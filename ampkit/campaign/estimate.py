"""What a campaign will cost on an engine that models the cores, estimated before it runs.

An estimate, from measurements of programs *alone* (the behaviour table's
cost lines and measurements: the campaign's own table, or the shipped
``configs/behaviour-gem5.toml``, each program alone on 2B2L under the
baseline, at the app's thread count where the table has it), not a
measurement of the campaign's own runs. Per run:

**Simulated time.** For each application: its region alone at its size
(the cost line), its process (the region times the process-to-region
ratio measured alone: the serial self-check after the region), its
parallelism alone (CPUs its threads kept busy, at most its threads) and
so its work in CPU-milliseconds and the CPUs it can use. The run's CPUs
are shared among the applications in proportion to their threads (the
fair share of CFS among runnable threads), none getting more than it can
use and what one leaves going to the others; under the restart method
every application runs, restarted, until the last first run ends, so the
shares hold for the whole run. The run lasts until its slowest first run
completes, plus the warm-up. On a platform of little CPUs only, an
application's work is its speedup (the mix's hint, else the cores'
capacity ratio) times longer: as if it had run on big CPUs alone, which
errs long. Where the campaign's speedup profile measured an app at its
very program, threads, size and arguments (alone on big CPUs only and on
little ones only), that measurement replaces the cost line: its time on
little CPUs on a platform that has them (errs long for an app that gets a
big CPU), on big ones otherwise. Platforms other than the lines' are estimated by the same
lines. A ``once`` run is estimated as if it restarted (errs long too).

**Wall time.** The larger of two figures, each named in the output:

- *alone lines*: the sum of the wall seconds each application's cost
  line gives for its region alone (measured, warm-up, restore and
  self-check included);
- *busy CPUs*: the wall seconds gem5 takes per simulated millisecond and
  busy CPU of each type, times the CPUs the shares keep busy (split
  between the types as the platform's CPUs are: where a thread runs is
  the policy's choice, and a short run's threads stay where they
  started), times the run's simulated milliseconds, plus a run's
  fixed part (gem5's start, the checkpoint's restore, the statistics:
  the mean of the cost lines' fixed parts, which the busy rate does not
  include). A big CPU (gem5's out-of-order model) costs far more than a
  little one (the in-order model), and a mix keeps more CPUs busy than
  a program alone, which the cost lines do not say the cost of. The
  rates come from the gem5 evaluation's own runs, with two gem5
  processes on the 2-core machine and a session's own work beside them,
  as a campaign's sittings have: its mix runs on 2B2L took 36 to 64
  wall seconds per simulated millisecond with the four CPUs busy
  (evaluations/gem5-2B2L/first-campaign; 85 beside kernel builds,
  second-start), its little-only references (0B2L, two little CPUs
  busy) 4 to 8. The estimate takes 3 a little CPU and, from 60 for
  2B2L's four, 27 a big one, and says what 2 and 16 would give (36).
  Against those runs it is within 15% in total: the mixes at 0.65 to
  1.3 times their figure, the references on 2B2L up to twice theirs,
  those on 0B2L half.

The total divides the runs' wall time by the runs at once (the
executor's jobs): the rates above are those of two gem5 processes on two
cores, so more jobs than cores would not go faster.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ampkit.behaviour import Table
from ampkit.campaign.plan import MATRIX
from ampkit.mix import App
from ampkit.platform import Platform
from ampkit.profile import Entry, Profile
from ampkit.run import RunRequest, warmup_of

#: Wall seconds per simulated millisecond and busy CPU, by core type: the
#: gem5 evaluation's first runs (the module's docstring). The estimate
#: uses the first pair; the second, the low end, is printed beside it.
BUSY_WALL_S_PER_CPU_MS = {"big": 27.0, "little": 3.0}
BUSY_WALL_S_PER_CPU_MS_LOW = {"big": 16.0, "little": 2.0}
#: What 2B2L's four CPUs busy measured, wall s per simulated ms.
MEASURED_RANGE = "36-85"
#: What the busy-CPU figure was measured with.
MEASURED_JOBS = 2


@dataclass(frozen=True)
class AppLoad:
    """One application of a run, as the cost model sees it."""

    program: str
    threads: int
    region_ms: float  # alone, at its size: by the cost line, or the profile's measurement
    work_cpu_ms: float  # CPU-milliseconds of its first run, on this platform
    usable_cpus: float  # the CPUs it can keep busy
    alone_wall_s: float  # the cost line's wall seconds for its region alone


@dataclass(frozen=True)
class RunEstimate:
    run_id: str
    role: str
    policy: str
    platform: str
    sim_ms: float  # the run's simulated time, warm-up included
    busy_cpus: float
    wall_s: float  # at the high busy rate
    wall_s_low: float  # at the low busy rate
    by: str  # "alone lines" or "busy CPUs": which figure was the larger


def _speed_factor(app: App, platform: Platform) -> float:
    """How many times longer the app's work takes on ``platform`` than on
    the lines' machine: its speedup on little CPUs only, 1 elsewhere."""
    if platform.big:
        return 1.0
    if app.speedup is not None:
        return app.speedup
    big, little = platform.big_core, platform.little_core
    return (big.dmips_per_mhz * big.clock_mhz) / (little.dmips_per_mhz * little.clock_mhz)


def measured_load(app: App, platform: Platform, entry: Entry, cpus: int, table: Table) -> AppLoad:
    """The app's load from a speedup profile's measurement of it, the very
    program, threads, size and arguments, alone on ``cpus`` big CPUs and as
    many little ones: its region on the platform's little CPUs where it has
    any (errs long where the app gets a big CPU), else on its big ones. The
    profile keeps regions only: the self-check after it and the CPUs the
    threads keep busy are the table's, measured alone at the nearest size
    (at the app's thread count where it has one), as for a cost line; a
    program the table lacks is taken to have no check and to keep
    min(threads, cpus) CPUs busy (its work errs long)."""
    big_ms = sum(entry.big_ns) / len(entry.big_ns) / 1e6
    little_ms = sum(entry.little_ns) / len(entry.little_ns) / 1e6
    region = little_ms if platform.little else big_ms
    nearest = table.at_size(app.program, app.size, threads=app.threads)
    same_threads = nearest is not None
    nearest = nearest or table.at_size(app.program, app.size)
    ratio = max(1.0, nearest.process_ns / nearest.region_ns) if nearest else 1.0
    if nearest is not None and same_threads:
        parallelism = min(max(nearest.parallelism, 1e-3), app.threads)
    else:
        parallelism = float(min(app.threads, cpus))
    check = region * (ratio - 1)
    work = region * parallelism + check
    return AppLoad(
        program=app.program,
        threads=app.threads,
        region_ms=region,
        work_cpu_ms=work,
        usable_cpus=work / (region + check),
        alone_wall_s=0.0,  # no cost line: the busy CPUs' figure alone
    )


def profile_entry(app: App, profile: Profile | None) -> Entry | None:
    """The profile's measurement of this very application, where it has
    one with times on both core types."""
    if profile is None or app.from_suite:
        return None
    entry = next((e for e in profile.entries if e.matches(app)), None)
    return entry if entry is not None and entry.big_ns and entry.little_ns else None


def app_load(
    app: App, platform: Platform, table: Table, profile: Profile | None = None
) -> AppLoad | str:
    """The app's load, or why it has none (no cost line for its program):
    from ``profile``'s measurement of the app where it has one (measured
    alone at its very size: better than a cost line's extrapolation, and
    there for programs without a line), else from the cost line."""
    if profile is not None and (entry := profile_entry(app, profile)) is not None:
        return measured_load(app, platform, entry, profile.cpus, table)
    line = table.cost(app.program, app.threads)
    if line is None or app.from_suite:
        return f"{app.program}: no {table.engine} cost line"
    region = line.region_at(app.size) / 1e6
    measured = table.at_size(app.program, app.size, threads=app.threads)
    # the self-check after the region, and the CPUs its threads kept busy,
    # as measured alone; without a measurement, one CPU and no self-check
    ratio = max(1.0, measured.process_ns / measured.region_ns) if measured else 1.0
    parallelism = max(measured.parallelism, 1e-3) if measured else 1.0
    check = region * (ratio - 1)
    work = region * parallelism + check
    # at another thread count than the line's, the same work on at most that many CPUs
    region_here = region * parallelism / min(parallelism, app.threads)
    factor = _speed_factor(app, platform)
    return AppLoad(
        program=app.program,
        threads=app.threads,
        region_ms=region,
        work_cpu_ms=work * factor,
        usable_cpus=work / (region_here + check),
        alone_wall_s=line.wall_for(region),
    )


def shares(weights: Sequence[float], caps: Sequence[float], cpus: float) -> list[float]:
    """``cpus`` split in proportion to ``weights``, none above its cap, what a
    capped one leaves going to the others (water-filling)."""
    out = [0.0] * len(weights)
    left = set(range(len(weights)))
    free = float(cpus)
    while left:
        total = sum(weights[i] for i in left)
        capped = {i for i in left if caps[i] <= free * weights[i] / total}
        if not capped:
            for i in left:
                out[i] = free * weights[i] / total
            break
        for i in capped:
            out[i] = caps[i]
            free -= caps[i]
        left -= capped
    return out


def busy_wall_s(busy: float, platform: Platform, rates: dict[str, float]) -> float:
    """Wall seconds a simulated millisecond costs with ``busy`` CPUs of
    ``platform`` busy, split between the types as its CPUs are."""
    share = busy / platform.ncpus
    return share * (rates["big"] * platform.big + rates["little"] * platform.little)


def fixed_s(table: Table) -> float:
    """A run's wall seconds beyond those its simulated time costs: the mean
    of the cost lines' fixed parts (0 without lines)."""
    return sum(c.wall_fixed_s for c in table.costs) / len(table.costs) if table.costs else 0.0


def estimate_run(
    request: RunRequest, role: str, table: Table, profile: Profile | None = None
) -> RunEstimate | str:
    """The run's estimate, or why there is none; ``profile``: the
    campaign's speedup profile, whose measurements of an app at its very
    size come before the cost lines (app_load)."""
    loads = []
    for app in request.mix.apps:
        load = app_load(app, request.platform, table, profile)
        if isinstance(load, str):
            return load
        loads.append(load)
    cpus = shares(
        [a.threads for a in loads], [a.usable_cpus for a in loads], request.platform.ncpus
    )
    span = max(a.work_cpu_ms / c for a, c in zip(loads, cpus, strict=True))
    sim_ms = span + warmup_of(request)
    busy = sum(cpus)
    alone = sum(a.alone_wall_s for a in loads)
    fixed = fixed_s(table)
    high = fixed + busy_wall_s(busy, request.platform, BUSY_WALL_S_PER_CPU_MS) * sim_ms
    low = fixed + busy_wall_s(busy, request.platform, BUSY_WALL_S_PER_CPU_MS_LOW) * sim_ms
    return RunEstimate(
        run_id=request.run_id,
        role=role,
        policy=request.policy,
        platform=request.platform.name,
        sim_ms=sim_ms,
        busy_cpus=busy,
        wall_s=max(alone, high),
        wall_s_low=max(alone, low),
        by="alone lines" if alone >= high else "busy CPUs",
    )


def _four(rates: dict[str, float]) -> float:
    """The rate of 2B2L with its four CPUs busy, the figure measured."""
    return 2 * rates["big"] + 2 * rates["little"]


def _hours(runs: Iterable[RunEstimate], jobs: int, low: bool = False) -> float:
    return sum(r.wall_s_low if low else r.wall_s for r in runs) / 3600 / jobs


def summary(
    estimates: Sequence[RunEstimate], missing: Sequence[str], jobs: int, source: str
) -> list[str]:
    """What 'campaign plan' prints of the estimate."""
    out = [
        f"estimate (not a measurement: alone-run cost lines of {source} and the busy-CPU "
        "rate of mix runs; ampkit/campaign/estimate.py):"
    ]
    if missing:
        out.append(f"  {len(missing)} runs not estimated: {'; '.join(sorted(set(missing)))}")
    if not estimates:
        return out
    sims = [r.sim_ms for r in estimates]
    walls = [r.wall_s for r in estimates]
    out.append(
        f"  a run: {min(sims):.0f}-{max(sims):.0f} simulated ms (mean "
        f"{sum(sims) / len(sims):.0f}), {min(walls):.0f}-{max(walls):.0f} wall s (mean "
        f"{sum(walls) / len(walls):.0f})"
    )
    # per policy (the matrix), the references apart, then per platform each run is on
    groups: dict[str, list[RunEstimate]] = {}
    for r in estimates:
        groups.setdefault(r.policy if r.role == MATRIX else f"references ({r.policy})", []).append(
            r
        )
    for r in estimates:
        groups.setdefault(f"on {r.platform}", []).append(r)
    for name, runs in groups.items():
        out.append(
            f"  {name}: {len(runs)} runs, {sum(r.sim_ms for r in runs):,.0f} simulated ms, "
            f"{_hours(runs, 1):.1f} wall hours of gem5"
        )
    by = {b: sum(1 for r in estimates if r.by == b) for b in ("busy CPUs", "alone lines")}
    out.append(
        f"  total: {len(estimates)} runs, {sum(sims):,.0f} simulated ms, "
        f"{_hours(estimates, 1):.1f} wall hours of gem5; {_hours(estimates, jobs):.1f} h "
        f"with {jobs} at once ({_hours(estimates, jobs, low=True):.1f} h at "
        f"{_four(BUSY_WALL_S_PER_CPU_MS_LOW):.0f} wall s per simulated ms on 2B2L's 4 busy CPUs)"
    )
    high = BUSY_WALL_S_PER_CPU_MS
    out.append(
        f"  wall time per run: the larger of its apps' alone cost lines ({by['alone lines']} "
        f"runs) and its busy CPUs at {high['big']:.0f} wall s per simulated ms a big CPU and "
        f"{high['little']:.0f} a little one ({by['busy CPUs']} runs; {_four(high):.0f} on "
        f"2B2L's 4: measured {MEASURED_RANGE} with {MEASURED_JOBS} gem5 processes on 2 cores)"
    )
    return out
