"""The profiling that fits Fan et al.'s interference models (ampkit.interference):
each application alone on each core type, then beside co-runners on its
own cluster and on the other, on gem5, whose statistics give what each
run pressed on the shared cache, bus and memory.

One application a CPU, one thread each, as the paper profiles: the target
runs on the last CPU of its core type, co-runners of its own cluster on
the ones before, co-runners of the other cluster on that cluster's CPUs
(CoRun.app_cpus), each pinned (RunRequest.app_cpus) under cfs, so the placement is the
profile's and not a scheduler's. A run alone gives the application's
pressures on that type (C in eq. 1: gem5stats.shared_accesses over the
measured interval, per second) and its time alone; a co-run gives one
row of the paper's Table II: the pressures summed per cluster from the
applications' runs alone (eq. 1, the target's own included), and the
target's slowdown, its time beside them over its time alone. The run
alone is a row too (no co-runner, no slowdown).

The co-runs of a target on a core type are every choice of up to
``MAX_BESIDE`` co-runners for each cluster, as many as its free CPUs
allow (repeats allowed: two streams press twice), or an evenly spread
subset of them when fewer are asked for. Pressures are graded by the
co-runners chosen: a compute-bound program presses little, a stream
beyond the L2s presses the bus and memory, a pointer chase the cache.
Three co-runner programs at least: the own cluster's pressures are the
target's plus its co-runners', so they vary along as many directions as
there are co-runners, and its three terms need three. The paper samples
its training co-runners from a grid over the pressures; the kit takes
the ones it is given.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ampkit.errors import AmpkitError, UsageError
from ampkit.interference import (
    CORES,
    RESOURCES,
    TERMS,
    InterferenceModels,
    condition_number,
    fit_app,
    fit_degradation,
    held_out_errors,
    prediction,
    pressures,
    size_of,
)
from ampkit.mix import App, Mix
from ampkit.platform import Platform
from ampkit.rundir import OK

if TYPE_CHECKING:
    import pandas as pd

    from ampkit.kernel import KernelBuild
    from ampkit.rundir import Verdict

#: co-runners a cluster takes at most in one co-run (2B2L: one beside the
#: target, two on the other cluster, the machine full, as on the paper's
#: board of two big and three little cores)
MAX_BESIDE = 2
#: a profiling run's name begins so (its mix, its run directory)
PREFIX = "corun-"
#: the fewest co-runs of a target on a core type: with the run alone,
#: one more row than the function's unknowns in each held-out fold
MIN_CO_RUNS = len(TERMS) + 2


def other(core: str) -> str:
    return "little" if core == "big" else "big"


def tag(app: App) -> str:
    """An application as a profiling run's name carries it."""
    name = f"{app.program}.{app.workload_size}"
    if app.args:  # as reference runs name them
        name += "." + app.args_digest
    return name


@dataclass(frozen=True)
class CoRun:
    """One profiling run: ``target`` on a CPU of type ``core``, ``same``
    beside it on its cluster, ``beside`` on the other cluster."""

    target: App
    core: str
    same: tuple[App, ...] = ()
    beside: tuple[App, ...] = ()

    @property
    def alone(self) -> bool:
        return not self.same and not self.beside

    @property
    def name(self) -> str:
        name = f"{PREFIX}{self.core}-{tag(self.target)}"
        if self.same:
            name += "-with-" + "+".join(tag(a) for a in self.same)
        if self.beside:
            name += "-beside-" + "+".join(tag(a) for a in self.beside)
        return name

    def mix(self) -> Mix:
        """Its mix: the target first (instance 0 of its program), then its
        cluster's co-runners, then the other's."""
        return Mix(
            name=self.name,
            description=f"{tag(self.target)} on a {self.core} CPU"
            + (f" beside {len(self.same) + len(self.beside)} co-runners" if not self.alone else ""),
            category="compute",
            apps=(self.target, *self.same, *self.beside),
            source=Path(self.name),
        )

    def app_cpus(self, platform: Platform) -> tuple[tuple[int, ...], ...]:
        """Each application's CPU, in the mix's order: the target on the
        last CPU of its type, its cluster's co-runners on the ones before,
        the other cluster's on that one's from its last down. CPU 0 is
        taken last: the devices' interrupts go to it (the guest balances
        none), and the runner, which no line pins, started there; their
        time beside the target would read as interference. Neither is
        kept off the other CPUs: the runner sleeps in wait4 but for the
        moments it reaps and restarts."""
        own = cpus_of(platform, self.core)[::-1]
        far = cpus_of(platform, other(self.core))[::-1]
        if len(self.same) + 1 > len(own) or len(self.beside) > len(far):
            raise AmpkitError(f"{self.name}: more applications than {platform.name} has CPUs for")
        return (
            (own[0],),
            *((own[1 + i],) for i in range(len(self.same))),
            *((far[i],) for i in range(len(self.beside))),
        )


def cpus_of(platform: Platform, core: str) -> list[int]:
    """The CPUs of a core type (the big ones first: ampkit.platform)."""
    return [c.index for c in platform.cpus if c.core.kind == core]


def _choices(apps: Sequence[App], most: int) -> list[tuple[App, ...]]:
    """Every multiset of up to ``most`` of ``apps``, the smallest first."""
    return [c for n in range(most + 1) for c in itertools.combinations_with_replacement(apps, n)]


def spread(items: Sequence[Any], count: int) -> list[Any]:
    """``count`` of ``items`` evenly spaced over them, the first and the
    last included (all of them when ``count`` is not fewer)."""
    if count >= len(items):
        return list(items)
    if count < 2:
        return list(items[:count])
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def plan(
    targets: Sequence[App],
    co_runners: Sequence[App],
    platform: Platform,
    co_runs: int | None = None,
) -> list[CoRun]:
    """Every profiling run: each target and co-runner alone on each core
    type, then each target's co-runs on each type (all of them, or
    ``co_runs`` of them spread evenly), in the order they are run."""
    if not platform.big or not platform.little:
        raise UsageError(
            f"profiling on {platform.name}: interference between the clusters needs both "
            "core types",
            "profile on the platform the policy runs on, such as 2B2L",
        )
    several = [a for a in (*targets, *co_runners) if a.threads != 1 or a.from_suite]
    if several:
        raise UsageError(
            f"{', '.join(sorted({tag(a) + f' t{a.threads}' for a in several}))}: the "
            "profile runs one application a CPU, one thread each, as the paper's",
            "profile the one-thread applications of mixes such as single4",
        )
    # a fit needs more rows than unknowns, and so does each of its
    # held-out folds, one co-run short: the run alone and MIN_CO_RUNS
    if co_runs is not None and co_runs < MIN_CO_RUNS:
        raise UsageError(
            f"{co_runs} co-runs a target and core type: its function has {len(TERMS) + 1} "
            "unknowns, and each held-out fit is one co-run short",
            f"ask for {MIN_CO_RUNS} at least",
        )
    kinds = list(dict.fromkeys(co_runners))
    if len(kinds) < len(RESOURCES):
        raise UsageError(
            f"{len(kinds)} co-runner application(s) ({', '.join(tag(a) for a in kinds)}): the "
            f"pressures on a target's own cluster then vary along {len(kinds)} directions, "
            f"and its cache, bus and memory terms need {len(RESOURCES)}",
            "give --co-runners mixes with at least three applications of different "
            "pressures (compute, chase, stream)",
        )
    everyone = list(dict.fromkeys((*targets, *co_runners)))
    runs = [CoRun(app, core) for app in everyone for core in CORES]
    for target in dict.fromkeys(targets):
        for core in CORES:
            free_own = len(cpus_of(platform, core)) - 1
            free_far = len(cpus_of(platform, other(core)))
            grid = [
                CoRun(target, core, same, beside)
                for same in _choices(co_runners, min(free_own, MAX_BESIDE))
                for beside in _choices(co_runners, min(free_far, MAX_BESIDE))
                if same or beside
            ]
            if len(grid) < MIN_CO_RUNS:
                raise UsageError(
                    f"{platform.name} leaves {tag(target)} on a {core} CPU {len(grid)} co-runs "
                    f"with these co-runners, and a fit needs {MIN_CO_RUNS}",
                    "profile on a platform of more CPUs or with more co-runners",
                )
            runs += spread(grid, co_runs) if co_runs is not None else grid
    return runs


@dataclass(frozen=True)
class Measured:
    """What one profiling run gave: the target's time and, run alone, its
    pressures on its type (RESOURCES order, per second)."""

    run: CoRun
    time_ns: int
    pressure: tuple[float, float, float] | None = None


def measured(run: CoRun, verdict: "Verdict") -> Measured:
    """A sound profiling run's measure (the target's record: the first
    instance of its program, first in the mix)."""
    record = next(
        (
            r
            for r in verdict.records
            if (r.program, r.instance) == (run.target.program, 0) and r.status == OK
        ),
        None,
    )
    if record is None:
        raise AmpkitError(f"{run.name}: no completed record of {tag(run.target)}")
    if not run.alone:
        return Measured(run, record.turnaround_ns)
    dumps = verdict.statistics.dumps
    from ampkit.gem5stats import MEASURED_DUMP

    if len(dumps) <= MEASURED_DUMP:
        raise AmpkitError(
            f"{run.name}: no statistics of its measured interval",
            "profiling reads gem5's statistics of the shared caches, bus and memory",
        )
    if (verdict.statistics.measured or {}).get("cuts"):
        raise AmpkitError(
            f"{run.name}: its measured interval was cut by slice ends, each a restore with "
            "cold caches: its pressures are not the application's",
            "profile in runs of one slice (no --slice-ms)",
        )
    rates = pressures(dumps[MEASURED_DUMP])
    if run.core not in rates:
        raise AmpkitError(f"{run.name}: the statistics have no {run.core} cluster")
    return Measured(run, record.turnaround_ns, rates[run.core])


def table(results: Sequence[Measured]) -> "pd.DataFrame":
    """Table II: one row per run of a target (alone included), the
    pressures on its cluster's cache, bus and memory and on the other's
    bus and memory, summed from each application's run alone on the type
    it ran on (eq. 1), and its slowdown in percent over its time alone.
    Columns: program, threads, size, core, corun, TERMS, slowdown_pct,
    time_ns, alone_ns."""
    import pandas as pd

    alone = {(m.run.target, m.run.core): m for m in results if m.run.alone}

    def pressure(app: App, core: str) -> tuple[float, float, float]:
        m = alone.get((app, core))
        if m is None or m.pressure is None:
            raise AmpkitError(f"{tag(app)} has no run alone on a {core} CPU to take its pressure")
        return m.pressure

    rows = []
    for m in results:
        run = m.run
        base = alone.get((run.target, run.core))
        if base is None:
            raise AmpkitError(f"{run.name}: {tag(run.target)} has no run alone to compare with")
        own = [pressure(a, run.core) for a in (run.target, *run.same)]
        far = [pressure(a, other(run.core)) for a in run.beside]
        rows.append(
            {
                "program": run.target.program,
                "threads": run.target.threads,
                "size": size_of(run.target),
                "core": run.core,
                "corun": run.name,
                "own_cache": sum(p[0] for p in own),
                "own_bus": sum(p[1] for p in own),
                "own_mem": sum(p[2] for p in own),
                "other_bus": sum(p[1] for p in far),
                "other_mem": sum(p[2] for p in far),
                "slowdown_pct": 100.0 * (m.time_ns / base.time_ns - 1.0),
                "time_ns": m.time_ns,
                "alone_ns": base.time_ns,
            }
        )
    return pd.DataFrame(rows)


def relative_time_error(held_out: "pd.DataFrame") -> "pd.Series[float]":
    """Each held-out prediction's error in the target's run time, relative
    to the time measured: |(1 + predicted) / (1 + measured) - 1|, slowdowns
    as fractions. The paper reports average errors of 6.66% (big cores) and
    9.6% (little ones) without saying how it measured them, over new
    workloads: a figure beside it, not the same one."""
    return ((1 + held_out["predicted_pct"] / 100) / (1 + held_out["measured_pct"] / 100) - 1).abs()


def check_engine(engine: str) -> None:
    """Profiling needs an engine that keeps statistics of the shared
    caches, bus and memory (gem5)."""
    from ampkit.engines import get_engine

    if not get_engine(engine).writes_statistics:
        raise UsageError(
            f"profiling on {engine}: the pressures are the engine's statistics of the shared "
            "caches, bus and memory, and this engine keeps none",
            "profile with --engine gem5",
        )


def run_all(
    runs: Sequence[CoRun],
    platform: Platform,
    runs_dir: Path,
    *,
    build: "KernelBuild",
    image: Path,
    engine: str,
    kernel_variant: str = "default",
    cmdline: str = "",
    log: Any = None,
) -> list[Measured]:
    """Runs each profiling run into ``runs_dir`` (sound runs made from the
    same inputs are kept: an interrupted profile resumes) and measures it.
    A run that does not count stops the profile with its reason: a model
    fitted around a hole would not say so."""
    from ampkit.policies import BASELINE
    from ampkit.references import is_done
    from ampkit.run import RunRequest, execute, prepare_for
    from ampkit.rundir import Excluded, RunDir

    check_engine(engine)
    out = []
    for i, run in enumerate(runs):
        request = RunRequest(
            platform=platform,
            policy=BASELINE,
            mix=run.mix(),
            engine=engine,
            kernel_variant=kernel_variant,
            extra_cmdline=cmdline,
            app_cpus=run.app_cpus(platform),
            # the run is the target's: the co-runners, restarted while it
            # runs, are stopped when it completes (and the statistics'
            # measured interval is its run, alone too)
            until=0,
        )
        run_dir = runs_dir / request.run_id
        prepared = prepare_for(request, build, image)
        if not is_done(run_dir, prepared.run_key):
            if log:
                print(f"[{i + 1}/{len(runs)}] {request.run_id}", file=log, flush=True)
            execute(request, run_dir, build, image, force=True, prepared=prepared)
        try:
            verdict = RunDir(run_dir).judge()
        except Excluded as e:
            raise AmpkitError(
                f"{run_dir}: does not count: {e}",
                "see its console.log; run the profile again to make it again",
            ) from e
        out.append(measured(run, verdict))
    return out


def fit(
    results: Sequence[Measured], provenance: dict[str, Any]
) -> tuple[InterferenceModels, "pd.DataFrame", "pd.DataFrame"]:
    """The models of every target (an application with co-runs), Table II
    and each co-run's held-out predictions: leaving the co-run out
    (interference.held_out_errors), and leaving out every co-run with one
    co-runner program (``by_co_runner``: a prediction beside a program the
    fit never saw, where the remaining co-runners still tell the terms
    apart). The provenance gains their mean errors over co-runs (the runs
    alone are training rows, not predictions), the co-runs each model was
    fitted on, and each fit's condition number."""
    import pandas as pd

    rows = table(results)
    targets = list(dict.fromkeys(m.run.target for m in results if not m.run.alone))
    alone = {
        (m.run.target, m.run.core): m.pressure
        for m in results
        if m.run.alone and m.pressure is not None
    }
    runs = {m.run.name: m.run for m in results}
    mine = rows["corun"].isin([m.run.name for m in results if m.run.target in targets])
    models, conditions, co_runs = [], {}, {}
    for app in targets:
        for core in CORES:
            own = rows[mine & _is(rows, app) & (rows["core"] == core)]
            conditions[f"{tag(app)} {core}"] = round(condition_number(own), 1)
            co_runs[f"{tag(app)} {core}"] = int((~own["corun"].map(lambda n: runs[n].alone)).sum())
        pressure = {core: alone[(app, core)] for core in CORES}
        models.append(
            fit_app(app.program, app.threads, size_of(app), pressure, rows[mine & _is(rows, app)])
        )
    held = held_out_errors(rows[mine]).assign(held_out="co-run")
    by_program = _held_out_by_co_runner(rows[mine], runs)
    held = pd.concat([held, by_program], ignore_index=True)
    held["time_error"] = relative_time_error(held)
    held = held[~held["corun"].map(lambda n: runs[n].alone)].reset_index(drop=True)
    summary: dict[str, Any] = {"co_runs": co_runs, "condition_numbers": conditions}
    for kind, part in held.groupby("held_out"):
        summary[f"held_out_{kind}_mean_abs_points".replace("-", "_")] = round(
            float(part["error_pct"].abs().mean()), 3
        )
        summary[f"held_out_{kind}_mean_time_error".replace("-", "_")] = round(
            float(part["time_error"].mean()), 4
        )
    return InterferenceModels(tuple(models), {**provenance, **summary}), rows, held


def _is(rows: "pd.DataFrame", app: App) -> "pd.Series[bool]":
    return (
        (rows["program"] == app.program)
        & (rows["threads"] == app.threads)
        & (rows["size"] == size_of(app))
    )


def _held_out_by_co_runner(rows: "pd.DataFrame", runs: dict[str, CoRun]) -> "pd.DataFrame":
    """Each co-run with a co-runner program predicted by the function fitted
    on the co-runs without it (and the run alone), where those still tell
    the terms apart (a full-rank fit: interference.fit_degradation);
    held_out "co-runner"."""
    import pandas as pd

    out = []
    for (_, _, _, _), part in rows.groupby(["program", "threads", "size", "core"]):
        programs = {tag(a) for name in part["corun"] for a in _co_runners(runs[name])}
        for program in sorted(programs):
            with_it = part["corun"].map(
                lambda n, p=program: p in {tag(a) for a in _co_runners(runs[n])}
            )
            try:
                model = fit_degradation(part[~with_it])
            except AmpkitError:
                continue  # the others alone cannot tell the terms apart
            out += [
                {**prediction(row, model), "held_out": "co-runner"}
                for _, row in part[with_it].iterrows()
            ]
    return pd.DataFrame(out)


def _co_runners(run: CoRun) -> tuple[App, ...]:
    return (*run.same, *run.beside)
