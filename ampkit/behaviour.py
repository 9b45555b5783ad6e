"""What each workload does when it runs: its waiting, its parallelism and its cost, measured.

A mix's category (synchronisation, communication, compute) is a claim
about its programs: that their threads wait on one another, or do not.
This module holds the measurements that test the claim, and the sizes
that follow from what a program costs to simulate.

**Measured.** Each program alone on one platform of one engine (for the
shipped table, ``configs/behaviour-gem5.toml``: gem5 2B2L, four threads),
under every policy, from the run directories of a campaign of one-program
mixes (``measurements/gem5-workloads``). Per run:

- ``region_ns``: the region of interest (the threads' work); ``process_ns``
  the whole process, start-up and self-check included;
- ``blocked_share``: the time the program's threads spent blocked on
  futexes over the time they lived (the kit kernel's per-task counters,
  which the runner keeps under every policy, ``cfs`` included, so the
  figure does not depend on a policy that steers by it);
- ``caused_share``: the waiting its threads' releases ended (the same
  counters), over the same time; alone, nearly all of the program's
  waiting is ended by its own threads, so it is close to the blocked
  share, and inside a mix too (another process cannot end a program's
  private futex waits: equal in every mix run archived so far);
- ``parallelism``: the threads' CPU time over the region: how many CPUs'
  worth of work the program kept busy on average (at most its threads);
- ``wall_s``: the engine's wall-clock time for the whole run.

**Categories.** A program *waits* when its blocked share alone under the
baseline is at least ``WAITING_SHARE``; a program is *independent* when
it stays below ``INDEPENDENT_SHARE``. A synchronisation or communication
mix keeps its category when at least half of its applications are
programs that wait; a compute mix when every application is independent.
``check_category`` applies the rule to a mix; ``ampkit mix check`` reports
it, with the numbers (the rule: ``ampkit.categories``). Inside a mix the same rule on the
shares each application had there says whether a policy's placement kept
the mix of its category (``categories_inside``, ``ampkit mix waiting`` and
the report): alone a program's threads have the CPUs to themselves, in a
mix they may share one, where a lock stops being contended.

**Cost.** From runs of one program at two or more sizes under the
baseline, a line per program and thread count: simulated region time
against size (ns per unit and a fixed part) and wall-clock seconds
against simulated milliseconds. ``CostLine.size_for`` inverts it: the
size at which a program alone spans a given time, so a campaign can
choose sizes for the time it wants each run to take.

**Setup.** A table holds the runs of one setup: the kernel's time scale
and tick (``ampkit.timescale``), which it records. A program's time alone
is not its work alone: it is also how soon the baseline moves its threads
to the big CPUs, which the scheduler's clocks against the run's length
decide. Sized by the unscaled table's four-thread line to span 40
simulated ms, chase with three threads spanned 10.5 at scale 4 on the
1000 Hz kernel (``evaluations/gem5-2B2L/first-sizing``; the thread count
differed too, so the table's line was a prediction for it, not a
measurement). A campaign sizes its apps by a table of its own setup,
with a line for each app's thread count, or is refused
(``ampkit.campaign.spec``).
"""

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ampkit.categories import INDEPENDENT_SHARE, WAITING_SHARE, holds_inside
from ampkit.engines import ENGINES, get_engine
from ampkit.errors import AmpkitError
from ampkit.mix import Mix
from ampkit.paths import CONFIGS
from ampkit.rundir import Excluded, RunDir, find_run_dirs
from ampkit.rundir import Verdict as RunVerdict
from ampkit.timescale import DEFAULT_TICK_HZ, describe_setup
from ampkit.timescale import MAX as MAX_TIMESCALE
from ampkit.tomlfile import TomlFile

KIND = "ampkit-workload-behaviour"
#: 2: the table records its setup (timescale, tick_hz); 1 is read as the
#: default kernel's, unscaled
VERSION = 2
_VERSIONS = (1, 2)
#: The platform sizes are for: a program spans its time alone on it.
SIZING_PLATFORM = "2B2L"
#: The policy whose runs decide categories and cost: the unmodified scheduler.
BASELINE = "cfs"

#: The simulated time a program alone spans by default (gem5): two COLAB
#: ranking periods (kernel.sched_colab_rank_period_ms, 10), half a WASH
#: quantum (40), at 2.5 to 8.5 wall minutes a run (measured: 'ampkit mix
#: sizes'). An evaluation sets its own span (a campaign's span_ms) from
#: what its policies need to act.
DEFAULT_SPAN_MS = 20.0


_HINT = "write the table with 'ampkit workload behaviour' (format in ampkit/behaviour.py)"


@dataclass(frozen=True)
class Measurement:
    """One program alone in one run."""

    program: str
    threads: int
    size: int
    policy: str
    platform: str
    region_ns: int
    process_ns: int
    blocked_share: float
    caused_share: float
    parallelism: float
    wall_s: float
    run: str

    def describe(self) -> str:
        return (
            f"blocked {self.blocked_share:.1%}, caused {self.caused_share:.1%}, "
            f"parallelism {self.parallelism:.2f} ({self.threads} threads, size {self.size}, "
            f"alone under {self.policy} on {self.platform})"
        )


@dataclass(frozen=True)
class CostLine:
    """A program's cost against its size, alone under the baseline."""

    program: str
    threads: int
    platform: str
    sizes: tuple[int, ...]
    region_ns: tuple[int, ...]
    wall_s: tuple[float, ...]

    @property
    def grows(self) -> bool:
        """Whether the region grew with the size along a line with a fixed
        part of zero or more: a program whose time its schedule sets more
        than its work (which threads landed on big CPUs) can take less time
        at a larger size, and a line through such points would size it by
        its luck."""
        fixed, slope = _fit(self.sizes, self.region_ns)
        return slope > 0 and fixed >= 0

    @property
    def ns_per_unit(self) -> float:
        """The line's slope; where the region did not grow so, a line
        through the origin at the slowest rate measured (the most time per
        unit), which errs towards runs shorter than asked, not longer."""
        if self.grows:
            return _fit(self.sizes, self.region_ns)[1]
        return max(r / s for r, s in zip(self.region_ns, self.sizes, strict=True))

    @property
    def fixed_ns(self) -> float:
        return _fit(self.sizes, self.region_ns)[0] if self.grows else 0.0

    def _wall_fit(self) -> tuple[float, float]:
        """(fixed s, s per simulated ms); through the origin at the longest
        run where the wall time did not grow with the simulated time."""
        fixed, slope = _fit([r / 1e6 for r in self.region_ns], self.wall_s)
        if slope > 0 and fixed >= 0:
            return fixed, slope
        return 0.0, max(w / (r / 1e6) for w, r in zip(self.wall_s, self.region_ns, strict=True))

    @property
    def wall_s_per_sim_ms(self) -> float:
        return self._wall_fit()[1]

    @property
    def wall_fixed_s(self) -> float:
        return self._wall_fit()[0]

    def region_at(self, size: int) -> float:
        """The region, in ns, the program alone spans at ``size``: the line
        up to the largest size measured; beyond it, in proportion to the
        line's value there. What a shorter run adds beside its work is
        start-up and placement, which a longer one amortises. At time
        scale 4, chase with three threads took 8.0 ms at size 43604, its
        third thread on a little CPU throughout, and 10.5 ms at 87209, that
        thread moved to a big CPU once one was free: the line through both
        has a fixed part of 5.5 ms that a longer run does not show, and
        would size chase for 40 ms at nearly twice the size the longer
        run's rate gives. (Beyond the largest size is an extrapolation all
        the same: the runs made at the sizes chosen say how far it held.)"""
        largest, at_largest = self._anchor()
        if size > largest:
            return size * at_largest / largest
        return self.fixed_ns + self.ns_per_unit * size

    def _anchor(self) -> tuple[int, float]:
        """The largest size measured and the line's region there (ns)."""
        largest = max(self.sizes)
        return largest, self.fixed_ns + self.ns_per_unit * largest

    def size_for(self, span_ms: float) -> int:
        """The size at which the program's region spans ``span_ms`` (at
        least 1): ``region_at`` inverted."""
        span_ns = span_ms * 1e6
        largest, at_largest = self._anchor()
        if span_ns > at_largest:
            return max(1, round(span_ns * largest / at_largest))
        return max(1, round((span_ns - self.fixed_ns) / self.ns_per_unit))

    def wall_for(self, span_ms: float) -> float:
        """The wall-clock seconds a run spanning ``span_ms`` costs."""
        return self.wall_fixed_s + self.wall_s_per_sim_ms * span_ms


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least squares: (intercept, slope) of ys against xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 2 or sxx == 0:
        raise AmpkitError("a cost line needs runs at two sizes at least")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - slope * mx, slope


@dataclass(frozen=True)
class Verdict:
    """Whether a mix's programs, as measured, are of its declared category."""

    mix: str
    category: str
    holds: bool | None  # None: too few of its programs were measured to say
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    engine: str
    measurements: tuple[Measurement, ...]
    costs: tuple[CostLine, ...] = ()
    source: Path | None = None
    #: the setup every run of the table ran at: the kernel's time scale and tick
    timescale: int = 1
    tick_hz: int = DEFAULT_TICK_HZ

    @property
    def kernel_setup(self) -> tuple[int, int]:
        """(time scale, tick) its runs ran at: what a campaign's must be."""
        return self.timescale, self.tick_hz

    @property
    def setup(self) -> str:
        return describe_setup(*self.kernel_setup)

    def _all_of(self, program: str, policy: str, threads: int | None = None) -> list[Measurement]:
        """The program's measurements under ``policy`` on the sizing
        platform (any other where it has none there), at ``threads`` where
        the table has that thread count."""
        found = [m for m in self.measurements if m.program == program and m.policy == policy]
        on = [m for m in found if m.platform == SIZING_PLATFORM]
        found = on or found
        same = [m for m in found if m.threads == threads]
        return same or found

    def of(
        self, program: str, policy: str = BASELINE, threads: int | None = None
    ) -> Measurement | None:
        """The program's measurement under ``policy`` (at ``threads`` where
        measured) whose region is nearest the default span: the size runs
        use (the others are there for the cost lines)."""
        found = self._all_of(program, policy, threads)
        return min(found, key=lambda m: abs(m.region_ns - DEFAULT_SPAN_MS * 1e6)) if found else None

    def at_size(
        self, program: str, size: int, policy: str = BASELINE, threads: int | None = None
    ) -> Measurement | None:
        """The program's measurement under ``policy`` (at ``threads`` where
        measured) at the size nearest ``size`` (by ratio): its self-check
        and parallelism change with the size (start-up weighs more in a
        short run)."""
        found = self._all_of(program, policy, threads)
        return (
            min(found, key=lambda m: abs(math.log(max(m.size, 1) / max(size, 1))))
            if found
            else None
        )

    def cost(
        self, program: str, threads: int | None = None, *, exact: bool = False
    ) -> CostLine | None:
        """The program's cost line on the sizing platform at ``threads``
        threads; where the table has none at that count and not ``exact``,
        its line at the nearest count, the fewer threads on a tie (the span
        then differs, by the program's own scaling: fewer threads take
        longer at one size, so the nearest errs long)."""
        lines = [c for c in self.costs if c.program == program and c.platform == SIZING_PLATFORM]
        if threads is None:
            return lines[0] if lines else None
        same = [c for c in lines if c.threads == threads]
        if same or exact:
            return same[0] if same else None
        return min(lines, key=lambda c: (abs(c.threads - threads), c.threads), default=None)

    def render(self) -> str:
        lines = [
            "# ampkit workload behaviour: each program alone, measured (ampkit/behaviour.py)",
            f'kind = "{KIND}"',
            f"version = {VERSION}",
            f"engine = {json.dumps(self.engine)}",
            f"# the kernel's setup every run ran at: {self.setup}",
            f"timescale = {self.timescale}",
            f"tick_hz = {self.tick_hz}",
        ]
        for m in self.measurements:
            lines += [
                "",
                "[[measurement]]",
                f"program = {json.dumps(m.program)}",
                f"threads = {m.threads}",
                f"size = {m.size}",
                f"policy = {json.dumps(m.policy)}",
                f"platform = {json.dumps(m.platform)}",
                f"region_ns = {m.region_ns}",
                f"process_ns = {m.process_ns}",
                f"blocked_share = {m.blocked_share:.4f}",
                f"caused_share = {m.caused_share:.4f}",
                f"parallelism = {m.parallelism:.3f}",
                f"wall_s = {m.wall_s:.1f}",
                f"run = {json.dumps(m.run)}",
            ]
        for c in self.costs:
            lines += [
                "",
                "[[cost]]",
                f"program = {json.dumps(c.program)}",
                f"threads = {c.threads}",
                f"platform = {json.dumps(c.platform)}",
                f"sizes = {json.dumps(list(c.sizes))}",
                f"region_ns = {json.dumps(list(c.region_ns))}",
                f"wall_s = {json.dumps(list(c.wall_s))}",
                f"# {c.ns_per_unit:.1f} ns per unit + {c.fixed_ns / 1e6:.3f} ms"
                f"{'' if c.grows else ' (did not grow with size: through the origin)'}; "
                f"{c.wall_s_per_sim_ms:.2f} wall s per simulated ms + {c.wall_fixed_s:.0f} s",
            ]
        return "\n".join(lines) + "\n"


# --- from run directories ---------------------------------------------------


def _share(part: Iterable[int], whole: int) -> float:
    return sum(part) / whole if whole > 0 else 0.0


def measurement_of(run: RunDir, verdict: RunVerdict | None = None) -> Measurement:
    """The measurement a run of one program alone gives; Excluded when the
    run does not count, holds more than one program, or lacks the kernel's
    per-task counters (a kernel without them, or a run made before the
    runner kept them under every policy). ``verdict``: the run's, where the
    caller judged it already."""
    verdict = verdict or run.judge()
    info = verdict.info
    if len(verdict.records) != 1 or len(info.mix_apps) != 1:
        raise Excluded(f"holds {len(verdict.records)} applications, not one program alone")
    rec = verdict.records[0]
    tasks = rec.raw.get("tasks")
    walls = rec.raw.get("thread_times_ns")
    cpus = rec.raw.get("thread_cpu_ns")
    if not tasks or not walls or not cpus:
        raise Excluded("has no per-thread times or kernel counters")
    lived = sum(int(w) for w in walls)
    region = rec.turnaround_ns
    return Measurement(
        program=rec.program,
        threads=rec.threads,
        size=int(info.mix_apps[0].get("size") or 0),
        policy=info.policy,
        platform=info.platform,
        region_ns=region,
        process_ns=rec.process_ns,
        # rounded as the table writes them, so that a table read back is the one measured
        blocked_share=round(_share((int(t.get("futex_blocked_ns", 0)) for t in tasks), lived), 4),
        caused_share=round(_share((int(t.get("futex_caused_ns", 0)) for t in tasks), lived), 4),
        parallelism=round(_share((int(c) for c in cpus), region), 3),
        wall_s=round(float(run.manifest().get("wall_s") or 0.0), 1),
        run=run.path.name,
    )


def _finished_runs(roots: Iterable[Path], left_out: list[str]) -> Iterator[RunDir]:
    """The finished runs under ``roots`` (a campaign directory's runs/ only:
    attempts/ holds runs set aside); one line each in ``left_out`` for
    those that did not finish."""
    for given in roots:
        root = given / "runs" if (given / "runs").is_dir() else given
        finished, partial = find_run_dirs(root)
        left_out += [f"{p}: did not finish" for p in partial]
        yield from (RunDir(run_dir) for run_dir in finished)


def measure(roots: Iterable[Path], engine: str) -> tuple[Table, list[str]]:
    """The table the run directories under ``roots`` give, and one line per
    run left out (with why). Cost lines come from the baseline's runs of a
    program at two sizes or more."""
    found: list[Measurement] = []
    left_out: list[str] = []
    setups: dict[tuple[int, int], str] = {}  # (scale, tick) -> a run at it
    for run in _finished_runs(roots, left_out):
        try:
            info = run.info()
            if info.engine != engine:
                raise Excluded(f"ran on {info.engine}, not {engine}")
            found.append(measurement_of(run))
            setups.setdefault((info.timescale, info.tick_hz), str(run.path))
        except Excluded as e:
            left_out.append(f"{run.path}: {e}")
    if len(setups) > 1:
        raise AmpkitError(
            "the runs are of more than one setup: "
            + "; ".join(f"{describe_setup(*s)} ({run} and others)" for s, run in setups.items()),
            "a program's time alone depends on the scheduler's clocks: measure each "
            "setup's runs into a table of its own",
        )
    timescale, tick_hz = next(iter(setups), (1, DEFAULT_TICK_HZ))
    found.sort(key=lambda m: (m.program, m.threads, m.size, m.policy))
    costs = []
    for program, threads, platform in sorted({(m.program, m.threads, m.platform) for m in found}):
        base = [
            m
            for m in found
            if (m.program, m.threads, m.platform) == (program, threads, platform)
            and m.policy == BASELINE
        ]
        if len({m.size for m in base}) < 2:
            continue
        base.sort(key=lambda m: m.size)
        costs.append(
            CostLine(
                program=program,
                threads=threads,
                platform=platform,
                sizes=tuple(m.size for m in base),
                region_ns=tuple(m.region_ns for m in base),
                wall_s=tuple(m.wall_s for m in base),
            )
        )
    table = Table(
        engine=engine,
        measurements=tuple(found),
        costs=tuple(costs),
        timescale=timescale,
        tick_hz=tick_hz,
    )
    return table, left_out


# --- waiting inside mixes ----------------------------------------------------


@dataclass(frozen=True)
class MixWaiting:
    """One application of a mix in one run: its threads' waiting there,
    as ``Measurement`` gives it alone (shares of the time they lived)."""

    mix: str
    policy: str
    platform: str
    program: str
    threads: int
    blocked_share: float
    caused_share: float
    run: str
    #: the mix's declared category, where the run's manifest names one
    category: str | None = None
    #: the run directory: runs of one name under two roots are two runs
    path: str = ""


def waiting_in_mixes(
    roots: Iterable[Path], engine: str
) -> tuple[list[MixWaiting], list[Measurement], list[str]]:
    """Each application of each mix run (two programs or more) under
    ``roots`` on ``engine``, the runs of one program alone there (a
    campaign's references: the same setup), and one line per run left
    out, with why. Alone,
    a program's own threads end nearly all its waiting; inside a mix its
    threads share CPUs with others', and placement decides how long a lock
    holder or a stage runs, so the same program may wait more, or less,
    under each policy."""
    found: list[MixWaiting] = []
    alone: list[Measurement] = []
    left_out: list[str] = []
    setups: set[tuple[int, int]] = set()  # (scale, tick) of the runs counted
    for run in _finished_runs(roots, left_out):
        try:
            verdict = run.judge()
            info = verdict.info
            if info.engine != engine:
                raise Excluded(f"ran on {info.engine}, not {engine}")
            if len(verdict.records) < 2:
                alone.append(measurement_of(run, verdict))
                setups.add((info.timescale, info.tick_hz))
                continue
            # the run counts whole or not at all
            run_rows = []
            for rec in verdict.records:
                tasks = rec.raw.get("tasks")
                walls = rec.raw.get("thread_times_ns")
                if not tasks or not walls:
                    raise Excluded(f"{rec.program} has no per-thread times or kernel counters")
                lived = sum(int(w) for w in walls)
                run_rows.append(
                    MixWaiting(
                        mix=info.mix,
                        policy=info.policy,
                        platform=info.platform,
                        program=rec.program,
                        threads=rec.threads,
                        blocked_share=_share(
                            (int(t.get("futex_blocked_ns", 0)) for t in tasks), lived
                        ),
                        caused_share=_share(
                            (int(t.get("futex_caused_ns", 0)) for t in tasks), lived
                        ),
                        run=run.path.name,
                        category=info.category,
                        path=str(run.path),
                    )
                )
            found += run_rows
            setups.add((info.timescale, info.tick_hz))
        except Excluded as e:
            left_out.append(f"{run.path}: {e}")
    if len(setups) > 1:
        raise AmpkitError(
            "the runs are of more than one setup: "
            + "; ".join(describe_setup(*s) for s in sorted(setups)),
            "waiting depends on the scheduler's clocks: give the runs of one setup",
        )
    found.sort(key=lambda w: (w.platform, w.program, w.threads, w.policy, w.mix, w.run))
    return found, alone, left_out


def waiting_summary(
    rows: Sequence[MixWaiting], alone: Sequence[Measurement], table: "Table | None"
) -> list[str]:
    """Per platform, program, thread count and policy: its blocked share
    inside mixes (the mean over its applications, with their range), and
    alone on the same platform: from the runs alone beside them (the same
    setup) under the same policy, else under the baseline (a campaign's
    references run under it alone), else from the behaviour table (its own
    setup); each figure says which. (The caused share, in the CSV, equals
    the blocked share inside a mix: another process cannot end a
    program's private futex waits.)"""

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values)

    def alone_as(key: tuple[str, str, int, str], found: Iterable[Measurement]) -> list[float]:
        return [
            m.blocked_share for m in found if (m.platform, m.program, m.threads, m.policy) == key
        ]

    lines = []
    keys = sorted({(w.platform, w.program, w.threads, w.policy) for w in rows})
    for platform, program, threads, policy in keys:
        mine = [
            w.blocked_share
            for w in rows
            if (w.platform, w.program, w.threads, w.policy) == (platform, program, threads, policy)
        ]
        table_runs = table.measurements if table else ()
        alone_share: float | None = None
        if same := alone_as((platform, program, threads, policy), alone):
            alone_share = mean(same)
            alone_text = f"alone {alone_share:.1%}"
        elif base := alone_as((platform, program, threads, BASELINE), alone):
            alone_share = mean(base)
            alone_text = f"alone under {BASELINE} {alone_share:.1%}"
        elif tabled := alone_as((platform, program, threads, policy), table_runs):
            alone_share = mean(tabled)
            alone_text = f"alone {alone_share:.1%} (the behaviour table's setup)"
        else:
            alone_text = "alone: not measured"
        # a program that waits alone but not inside its mixes: placement
        # (its threads sharing fewer CPUs, a lock holder never preempted)
        # took its waiting away, and with it what a policy could shorten
        lost = (
            mean(mine) < WAITING_SHARE and alone_share is not None and alone_share >= WAITING_SHARE
        )
        flag = f"; BELOW the {WAITING_SHARE:.0%} a waiting program needs" if lost else ""
        lines.append(
            f"{platform} {program:9} t{threads} {policy:6} in {len(mine)} mix run(s): blocked "
            f"{mean(mine):.1%} ({min(mine):.1%}-{max(mine):.1%}); {alone_text}{flag}"
        )
    return lines


@dataclass(frozen=True)
class InsideVerdict:
    """Whether one mix run's applications, by their waiting inside it, are
    of the mix's declared category (``check_category``'s rule, applied to
    the blocked shares the run measured instead of those alone)."""

    platform: str
    mix: str
    policy: str
    run: str
    category: str
    holds: bool
    shares: tuple[tuple[str, float], ...]  # (program, blocked share) per application


def categories_inside(rows: Sequence[MixWaiting]) -> list[InsideVerdict]:
    """Per mix run of a declared category: whether it keeps the category
    inside the mix. Alone, a program's threads have the CPUs to themselves;
    inside a mix a policy decides how many CPUs they share, and a lock
    whose holder and waiters end up on one CPU stops being contended, so
    a synchronisation mix can lose its waiting under one policy and keep
    it under another: the comparison then is not of what the mix claims."""
    runs: dict[str, list[MixWaiting]] = {}
    for w in rows:
        if w.category is not None:
            runs.setdefault(w.path or w.run, []).append(w)
    verdicts = []
    for apps in runs.values():
        first = apps[0]
        category = first.category or ""
        shares = tuple((a.program, a.blocked_share) for a in apps)
        holds = holds_inside(category, [share for _, share in shares])
        verdicts.append(
            InsideVerdict(
                platform=first.platform,
                mix=first.mix,
                policy=first.policy,
                run=first.run,
                category=category,
                holds=holds,
                shares=shares,
            )
        )
    verdicts.sort(key=lambda v: (v.platform, v.mix, v.policy, v.run))
    return verdicts


def inside_summary(verdicts: Sequence[InsideVerdict]) -> list[str]:
    """A line per platform, mix and policy: in how many of its runs the mix
    kept its category inside, with the shares of the runs that did not."""
    lines = []
    keys = sorted({(v.platform, v.mix, v.policy) for v in verdicts})
    for platform, mix, policy in keys:
        mine = [v for v in verdicts if (v.platform, v.mix, v.policy) == (platform, mix, policy)]
        kept = sum(v.holds for v in mine)
        line = (
            f"{platform} {mix} {policy}: {mine[0].category} inside in {kept} of {len(mine)} run(s)"
        )
        lost = [v for v in mine if not v.holds]
        if lost:
            shares = ", ".join(f"{p} {s:.1%}" for p, s in lost[0].shares)
            line += f"; LOST in {lost[0].run} ({shares})"
            if len(lost) > 1:
                line += f" and {len(lost) - 1} more"
        lines.append(line)
    return lines


# --- the table file ---------------------------------------------------------

_TOP_KEYS = ("kind", "version", "engine", "timescale", "tick_hz", "measurement", "cost")
_MEASUREMENT_KEYS = (
    "program",
    "threads",
    "size",
    "policy",
    "platform",
    "region_ns",
    "process_ns",
    "blocked_share",
    "caused_share",
    "parallelism",
    "wall_s",
    "run",
)
_COST_KEYS = ("program", "threads", "platform", "sizes", "region_ns", "wall_s")


def _numbers(toml: TomlFile, key: tuple[str | int, ...], n: int | None) -> list[float]:
    value = toml.get(key)
    if (
        not isinstance(value, list)
        or len(value) < 2
        or (n is not None and len(value) != n)
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        want = f"{n} positive numbers" if n is not None else "two positive numbers or more"
        toml.fail(key, f"must be a list of {want}, not {value!r}", hint=_HINT)
    return value


def load_table(path: Path) -> Table:
    if not path.is_file():
        raise AmpkitError(f"cannot read the behaviour table {path}: no such file", _HINT)
    toml = TomlFile(path)
    if toml.get(("kind",)) != KIND or toml.get(("version",)) not in _VERSIONS:
        toml.fail(
            ("kind",), f'is not a behaviour table\'s (kind = "{KIND}", version = {VERSION})', _HINT
        )
    toml.only_keys((), _TOP_KEYS, "a behaviour table key")
    measurements = []
    for i in range(len(toml.tables(("measurement",), required=False))):
        key = ("measurement", i)
        toml.only_keys(key, _MEASUREMENT_KEYS, "a measurement key")
        measurements.append(
            Measurement(
                program=toml.string((*key, "program")),
                threads=toml.integer((*key, "threads"), low=1),
                size=toml.integer((*key, "size"), low=0),
                policy=toml.string((*key, "policy")),
                platform=toml.string((*key, "platform")),
                region_ns=toml.integer((*key, "region_ns"), low=1),
                process_ns=toml.integer((*key, "process_ns"), low=1),
                blocked_share=toml.number((*key, "blocked_share"), low=0, high=1),
                caused_share=toml.number((*key, "caused_share"), low=0),
                parallelism=toml.number((*key, "parallelism"), low=0),
                wall_s=toml.number((*key, "wall_s"), low=0),
                run=toml.string((*key, "run")),
            )
        )
    costs = []
    for i in range(len(toml.tables(("cost",), required=False))):
        key = ("cost", i)
        toml.only_keys(key, _COST_KEYS, "a cost key")
        sizes = _numbers(toml, (*key, "sizes"), None)
        if not all(isinstance(s, int) for s in sizes) or len(set(sizes)) < 2:
            toml.fail((*key, "sizes"), "must be two different integer sizes or more", _HINT)
        costs.append(
            CostLine(
                program=toml.string((*key, "program")),
                threads=toml.integer((*key, "threads"), low=1),
                platform=toml.string((*key, "platform")),
                sizes=tuple(int(s) for s in sizes),
                region_ns=tuple(int(r) for r in _numbers(toml, (*key, "region_ns"), len(sizes))),
                wall_s=tuple(float(w) for w in _numbers(toml, (*key, "wall_s"), len(sizes))),
            )
        )
    return Table(
        engine=toml.string(("engine",)),
        measurements=tuple(measurements),
        costs=tuple(costs),
        source=path,
        # a table written before the setup was recorded: the default kernel's, unscaled
        timescale=toml.integer(("timescale",), low=1, high=MAX_TIMESCALE, default=1),
        tick_hz=toml.integer(("tick_hz",), low=1, high=10000, default=DEFAULT_TICK_HZ),
    )


def table_path(engine: str) -> Path:
    """Where the kit keeps an engine's table (configs/behaviour-<engine>.toml)."""
    return CONFIGS / f"behaviour-{engine}.toml"


def table_of(engine: str) -> Table | None:
    """The engine's shipped table, or None where there is none."""
    path = table_path(engine)
    return load_table(path) if path.is_file() else None


def timing_engine() -> str:
    """The engine whose measurements mean something for categories and
    sizes: the first that models the cores' speed (gem5)."""
    return next(e for e in ENGINES if get_engine(e).models_core_speed)


def shipped_table() -> Table | None:
    """The table 'ampkit mix check' tests categories by unless told otherwise."""
    return table_of(timing_engine())


# --- categories -------------------------------------------------------------


def waits(m: Measurement) -> bool:
    return m.blocked_share >= WAITING_SHARE


def independent(m: Measurement) -> bool:
    return m.blocked_share < INDEPENDENT_SHARE


def check_category(
    name: str,
    category: str,
    programs: Sequence[str],
    table: Table,
    threads: Sequence[int] | None = None,
) -> Verdict:
    """Whether a mix of ``programs`` (with ``threads`` each, where given) is
    of ``category``, by the table's measurements under the baseline at
    those thread counts where it has them (module text: the rule)."""
    lines = []
    measured = []
    counts: Sequence[int | None] = threads if threads is not None else [None] * len(programs)
    for program, count in zip(programs, counts, strict=True):
        m = table.of(program, threads=count)
        if m is None:
            lines.append(f"{program}: not measured on {table.engine}")
            continue
        measured.append(m)
        other = count is not None and m.threads != count
        note = f"; the mix runs it with {count}, a count not measured" if other else ""
        lines.append(f"{program}: {m.describe()}{note}")
    # an unmeasured program may wait or not: the category holds when it
    # holds either way, fails when it fails either way, and is open else
    shares = [m.blocked_share for m in measured]
    unmeasured = len(programs) - len(measured)
    if_none_wait = holds_inside(category, shares + [0.0] * unmeasured)
    if_all_wait = holds_inside(category, shares + [1.0] * unmeasured)
    holds = if_none_wait if if_none_wait == if_all_wait else None
    if category == "compute":
        rule = f"every program blocked under {INDEPENDENT_SHARE:.0%} of its threads' time"
    else:
        rule = (
            f"at least {math.ceil(len(programs) / 2)} of {len(programs)} programs blocked "
            f"{WAITING_SHARE:.0%} of their threads' time or more"
        )
    lines.append(f"{category} needs {rule}, alone under {BASELINE} on {table.engine}")
    return Verdict(mix=name, category=category, holds=holds, lines=tuple(lines))


def check_mix(mix: Mix, table: Table) -> Verdict:
    """``check_category`` for a mix, each app at its own thread count."""
    return check_category(
        mix.name, mix.category, [a.program for a in mix.apps], table, [a.threads for a in mix.apps]
    )
