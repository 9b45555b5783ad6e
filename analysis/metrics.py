"""The comparison metrics (DESIGN section 7), as pure functions over tables.

For a mix of n applications under a policy, with T_i its turnaround in the
mix and T_i^alone its turnaround alone on the same setup (engine, platform,
kernel time scale and tick: ``SETUP``) under the reference policy (``cfs``
unless told otherwise):

    Slowdown_i = T_i / T_i^alone
    H_ANTT     = (1/n) sum Slowdown_i                      lower is better
    H_STP      = sum 1 / Slowdown_i                        higher is better
    Unfairness = max Slowdown_i / min Slowdown_i           lower is better
    Fairness   = 1 - (1/n) sum cv_i                        higher is better
                 cv_i: population std / mean of the wall times of
                 application i's threads (0 for one thread)
    ASP        = sum (CT_slow,i / T_i - 1)                  higher is better
                 CT_slow,i: turnaround alone on little CPUs only
    EDP        = energy x completion time                  lower is better
                 (completion time is the run's makespan, the longest
                 turnaround; energy is the CPUs', their L2s' and the
                 DRAM's, where gem5's models give them)
    EDP/inst   = energy x completion time / instructions  lower is better
                 (Saez et al. eq. 3, energy over instructions per second;
                 instructions committed by every CPU over the run)

Each is computed per run, that is per (setup, policy, mix, repetition);
then, per (setup, policy, mix), the mean over repetitions with a 95%
confidence interval (Student's t), and the mean normalised to the
reference policy's mean for the same setup and mix (NaN where that mean
is not positive: a ratio to it means nothing); then, over mixes, the
geometric mean of those ratios for the metrics whose values are positive
by definition (H_ANTT, H_STP, unfairness, energy, EDP), and their
arithmetic mean for fairness and ASP, which can be zero or negative
(fairness when a program's threads vary more than their mean, ASP when the
mix runs slower than the little-only reference) and so have no geometric
mean. The ``aggregate`` column says which mean a row is.

A new metric is a function of one run's rows plus its entry in
``PER_RUN`` (name, direction, description); the report picks it up.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from scipy import stats

from ampkit.errors import AmpkitError
from ampkit.timescale import DEFAULT_TICK_HZ, setup_parts

REFERENCE_POLICY = "cfs"
#: What makes two runs comparable: the engine, the platform, the kernel's
#: time scale (ampkit/timescale.py) and its tick (CONFIG_HZ, the manifest's
#: kernel.tick_hz). A run is referenced and normalised only against runs of
#: the same setup.
SETUP = ["engine", "platform", "timescale", "tick_hz"]
GROUP = [*SETUP, "policy", "mix"]
RUN = [*GROUP, "repetition", "run"]


# --- one run ------------------------------------------------------------------


def h_antt(slowdowns: Sequence[float]) -> float:
    return sum(slowdowns) / len(slowdowns)


def h_stp(slowdowns: Sequence[float]) -> float:
    return sum(1.0 / s for s in slowdowns)


def unfairness(slowdowns: Sequence[float]) -> float:
    return max(slowdowns) / min(slowdowns)


def coefficient_of_variation(times: Sequence[float]) -> float:
    """Population standard deviation over mean; 0 for a single thread."""
    n = len(times)
    if n < 2:
        return 0.0
    mean = sum(times) / n
    if mean == 0:
        return 0.0
    var = sum((t - mean) ** 2 for t in times) / n
    return math.sqrt(var) / mean


def fairness(thread_times: Sequence[Sequence[float]]) -> float:
    """1 - the mean over applications of the cv of their threads' times."""
    return 1.0 - sum(coefficient_of_variation(t) for t in thread_times) / len(thread_times)


def asp(slow_alone: Sequence[float], turnarounds: Sequence[float]) -> float:
    return sum(s / t - 1.0 for s, t in zip(slow_alone, turnarounds, strict=True))


def edp(energy_j: float, completion_s: float) -> float:
    return energy_j * completion_s


def edp_per_instruction(energy_j: float, completion_s: float, instructions: float) -> float:
    """Saez et al.'s form: energy / (instructions / completion time)."""
    if not instructions > 0:
        return math.nan
    return energy_j * completion_s / instructions


def energy_per_instruction_nj(energy_j: float, instructions: float) -> float:
    """Energy per committed instruction, in nJ. A run of the restart method
    does more or less extra work (apps run again until the last first
    completion) under each policy, so its energy is not the energy of equal
    work; per instruction it nearly is. Nearly: the count holds every
    instruction committed, the kernel's, the idle loop's and any spinning
    included, and a policy that runs one program again more than another
    weighs that program's energy per instruction more."""
    if not instructions > 0:
        return math.nan
    return energy_j / instructions * 1e9


@dataclass(frozen=True)
class Metric:
    name: str
    better: str  # "lower" or "higher"
    description: str
    #: Values are > 0 by definition, so ratios of them have a geometric mean.
    positive: bool = True


PER_RUN: tuple[Metric, ...] = (
    Metric("h_antt", "lower", "average normalised turnaround time: the mean slowdown"),
    Metric("h_stp", "higher", "system throughput: sum of 1/slowdown"),
    Metric("unfairness", "lower", "max slowdown / min slowdown"),
    Metric(
        "fairness",
        "higher",
        "1 - mean coefficient of variation of thread times",
        positive=False,
    ),
    Metric(
        "asp",
        "higher",
        "sum of (turnaround alone on little CPUs / turnaround - 1)",
        positive=False,
    ),
    Metric(
        "energy_j",
        "lower",
        "energy of the CPUs, their L2s and the DRAM over the run (gem5's power models)",
    ),
    Metric("cpu_energy_j", "lower", "the CPUs' part of energy_j"),
    Metric("l2_energy_j", "lower", "the L2 caches' part of energy_j"),
    Metric("dram_energy_j", "lower", "the DRAM's part of energy_j (gem5's DRAMPower model)"),
    Metric(
        "energy_per_inst",
        "lower",
        "energy_j per committed instruction, nJ: energy at (nearly) equal work",
    ),
    Metric("edp", "lower", "energy x completion time"),
    Metric(
        "edp_per_inst",
        "lower",
        "energy x completion time / instructions (Saez et al. eq. 3: energy / IPS)",
    ),
)
METRICS = {m.name: m for m in PER_RUN}


# --- references -----------------------------------------------------------------


def with_setup(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every SETUP column: tables collected before the kit
    knew time scales (and hand-made ones) ran at the hardware's, 1; those
    collected before it knew ticks ran at 250 Hz, the tick of every kit
    kernel until the manifests recorded it (DEFAULT_TICK_HZ)."""
    missing = {
        column: value
        for column, value in (("timescale", 1), ("tick_hz", DEFAULT_TICK_HZ))
        if column not in frame.columns
    }
    return frame.assign(**missing) if missing else frame


def _setup_note(timescale: int, tick_hz: int) -> str:
    parts = setup_parts(timescale, tick_hz)
    return f" at {', '.join(parts)}" if parts else ""


class MissingReference(AmpkitError):
    """Reference runs are missing; the message lists which to add."""


def _alone_runs(apps: pd.DataFrame, policy: str) -> pd.DataFrame:
    """Turnarounds of applications that ran alone under ``policy``."""
    napps = apps.groupby("run")["app"].transform("size")
    alone = apps[(napps == 1) & (apps["policy"] == policy)]
    return alone.groupby([*SETUP, "key"], as_index=False).agg(
        alone_ns=("turnaround_ns", "mean"), alone_runs=("run", lambda r: sorted(set(r)))
    )


def with_slowdowns(apps: pd.DataFrame, reference: str = REFERENCE_POLICY) -> pd.DataFrame:
    """``apps`` plus alone_ns, alone_runs and slowdown; raises if a reference is missing."""
    apps = with_setup(apps)
    refs = _alone_runs(apps, reference)
    out = apps.merge(refs, on=[*SETUP, "key"], how="left")
    missing = out[out["alone_ns"].isna()][[*SETUP, "key"]].drop_duplicates()
    if not missing.empty:
        lines = [
            f"  {engine} {platform}{_setup_note(int(scale), int(tick))}: {key} alone "
            f"under {reference}"
            for engine, platform, scale, tick, key in missing.itertuples(index=False, name=None)
        ]
        raise MissingReference(
            f"{len(lines)} reference run(s) missing: each application needs a run of a "
            f"mix holding only it, on the same engine, platform, time scale and tick, under "
            f"{reference}:\n" + "\n".join(lines),
            "run them (ampkit run --policy "
            f"{reference} --mix <a mix of that one application>) and collect again",
        )
    out["slowdown"] = out["turnaround_ns"] / out["alone_ns"]
    return out


def complete_part(
    apps: pd.DataFrame, reference: str = REFERENCE_POLICY, min_apps: int = 2
) -> tuple[pd.DataFrame, list[str]]:
    """The part of ``apps`` a report can compare while runs are still to
    come (a campaign under way): every reference run, and the runs of each
    mix (per setup) whose applications all have their alone reference under
    ``reference`` and of which a run under ``reference`` has them too. The
    rest is left out, one line per mix and setup saying what it lacks."""
    apps = with_setup(apps)
    napps = apps.groupby("run")["app"].transform("size")
    refs = _alone_runs(apps, reference)[[*SETUP, "key"]].assign(has_alone=True)
    marked = apps.merge(refs, on=[*SETUP, "key"], how="left")
    marked["has_alone"] = marked["has_alone"].astype("boolean").fillna(False)
    mixed = marked[(napps >= min_apps).to_numpy()]
    whole = mixed.groupby("run")["has_alone"].transform("all")
    runs = mixed[whole.to_numpy()]
    baselined = set(
        runs.loc[runs["policy"] == reference, [*SETUP, "mix"]].itertuples(index=False, name=None)
    )
    kept = {
        run
        for run, *setup_mix in runs[["run", *SETUP, "mix"]].itertuples(index=False, name=None)
        if tuple(setup_mix) in baselined
    }
    # every policy's means over the same mixes: a mix counts once it has a
    # complete run under each policy its setup has runs of
    # (the policies of the runs that could be compared: a policy whose runs
    # all lack something blocks no other's)
    comparable = runs[runs["run"].isin(kept)]
    policies: dict[Any, frozenset[str]] = dict(
        comparable.groupby(SETUP)["policy"].agg(frozenset).items()
    )
    done: dict[Any, frozenset[str]] = dict(
        comparable.groupby([*SETUP, "mix"])["policy"].agg(frozenset).items()
    )
    kept = {
        run
        for run, *setup, mix in runs[["run", *SETUP, "mix"]].itertuples(index=False, name=None)
        if run in kept and done[(*setup, mix)] >= policies.get(tuple(setup), frozenset())
    }
    left_out = []
    for (engine, platform, scale, tick, mix), part in mixed.groupby([*SETUP, "mix"]):
        if set(part["run"]) <= kept:
            continue
        note = _setup_note(int(str(scale)), int(str(tick)))
        lacking = sorted(set(part.loc[~part["has_alone"], "key"]))
        missing = sorted(
            policies.get((engine, platform, scale, tick), frozenset()) - set(part["policy"])
        )
        if lacking:
            why = f"no alone run under {reference} of {', '.join(lacking)}"
        elif (engine, platform, scale, tick, mix) not in baselined:
            why = f"no run under {reference}"
        else:
            why = f"no run under {', '.join(missing)}"
        policies_left = ", ".join(sorted(set(part.loc[~part["run"].isin(kept), "policy"])))
        left_out.append(f"{engine} {platform}{note}: mix {mix} ({policies_left}): {why}")
    # a run of one application alone is a reference: kept where it has its
    # own (under another policy it is compared with the reference's)
    alone_ok = (napps != 1).to_numpy() | marked["has_alone"].to_numpy(dtype=bool)
    keep = ((napps < min_apps).to_numpy() & alone_ok) | apps["run"].isin(kept).to_numpy()
    return apps[keep], left_out


def with_slow_references(
    apps: pd.DataFrame, little_only: dict[str, str], reference: str = REFERENCE_POLICY
) -> pd.DataFrame:
    """``apps`` plus slow_alone_ns: the turnaround alone on a little-only platform.

    ``little_only`` maps a platform to the platform of its little CPUs alone
    (for example 2B2L -> 0B2L); rows without such runs get NaN and no ASP.
    """
    apps = with_setup(apps)
    refs = _alone_runs(apps, reference).rename(
        columns={"platform": "slow_platform", "alone_ns": "slow_alone_ns"}
    )
    out = apps.copy()
    out["slow_platform"] = out["platform"].map(little_only)
    out = out.merge(
        refs[["engine", "slow_platform", "timescale", "tick_hz", "key", "slow_alone_ns"]],
        on=["engine", "slow_platform", "timescale", "tick_hz", "key"],
        how="left",
    )
    return out.drop(columns=["slow_platform"])


def platform_counts(apps: pd.DataFrame) -> dict[str, tuple[int | None, int | None]]:
    """Each platform's big and little CPU counts, as the run manifests recorded
    them (None where a manifest did not)."""
    if not {"platform", "big", "little"} <= set(apps.columns):
        return {}
    out: dict[str, tuple[int | None, int | None]] = {}
    for name, big, little in apps[["platform", "big", "little"]].itertuples(index=False):
        counts = tuple(None if pd.isna(c) else int(c) for c in (big, little))
        out[str(name)] = (counts[0], counts[1])
    return out


def infer_little_only(counts: dict[str, tuple[int | None, int | None]]) -> dict[str, str]:
    """Each mixed platform (big and little CPUs) whose little CPUs alone, a
    platform with no big CPU and as many little ones, have runs too
    (``ampkit run --references`` makes them, as 0B<L>L). ``counts`` are the
    platforms' CPU counts from the run manifests (``platform_counts``); a
    platform without them is skipped."""
    known = {
        name: (big, little)
        for name, (big, little) in counts.items()
        if big is not None and little is not None
    }
    out = {}
    for name, (big, little) in known.items():
        if not (big and little):
            continue
        alone = sorted(n for n, (b, l_) in known.items() if b == 0 and l_ == little)
        if alone:
            out[name] = alone[0]
    return out


# --- per run, then over repetitions ---------------------------------------------


def per_run(
    apps: pd.DataFrame,
    threads: pd.DataFrame,
    cpus: pd.DataFrame | None = None,
    clusters: pd.DataFrame | None = None,
    memory: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per run with every metric; ``apps`` must carry slowdown.

    Energy is the clusters' (CPUs and their L2s) where the collection has
    them, else the CPUs' alone, plus the DRAM's where the collection has
    memory rows (a run without any while others have them gets NaN, never
    a smaller sum); NaN where a part had no power model."""
    times = (
        threads.groupby(["run", "app", "instance"])["wall_ns"].apply(list).rename("thread_times")
    )
    apps = with_setup(apps).join(times, on=["run", "app", "instance"])
    has_clusters = clusters is not None and not clusters.empty
    has_memory = memory is not None and not memory.empty

    def by_run(frame: pd.DataFrame | None, column: str) -> pd.Series:
        if frame is None or frame.empty or column not in frame:
            return pd.Series(dtype=float)
        return frame.groupby("run")[column].sum(min_count=1)

    if has_clusters:
        cpu_energy = by_run(clusters, "cpu_energy_j")
        l2_energy = by_run(clusters, "l2_energy_j")
        core_energy = by_run(clusters, "energy_j")
        insts = by_run(clusters, "insts")
    else:
        # the measured interval's dump alone: the others hold the boot's
        # restore, the warm-up and the results being written
        measured = (
            cpus[cpus["measured"].astype(bool)]
            if cpus is not None and not cpus.empty and "measured" in cpus
            else cpus
        )
        cpu_energy = core_energy = by_run(measured, "energy_j")
        l2_energy = pd.Series(dtype=float)
        insts = by_run(measured, "insts")
    dram_energy = by_run(memory, "energy_j")
    rows = []
    for key, g in apps.groupby(RUN, sort=True):
        s = g["slowdown"].tolist()
        thread_times = [t if isinstance(t, list) and t else [1.0] for t in g["thread_times"]]
        slow = g["slow_alone_ns"].tolist() if "slow_alone_ns" in g else []
        run = key[-1]
        dram_j = float(dram_energy.get(run, math.nan))
        energy_j = float(core_energy.get(run, math.nan)) + (dram_j if has_memory else 0.0)
        completion_s = float(g["turnaround_ns"].max()) / 1e9
        rows.append(
            {
                **dict(zip(RUN, key, strict=True)),
                "apps": len(s),
                "h_antt": h_antt(s),
                "h_stp": h_stp(s),
                "unfairness": unfairness(s),
                "fairness": fairness(thread_times),
                "asp": asp(slow, g["turnaround_ns"].tolist())
                if slow and not any(math.isnan(x) for x in slow)
                else math.nan,
                "energy_j": energy_j,
                "cpu_energy_j": float(cpu_energy.get(run, math.nan)),
                "l2_energy_j": float(l2_energy.get(run, math.nan)),
                "dram_energy_j": dram_j,
                "energy_per_inst": energy_per_instruction_nj(
                    energy_j, float(insts.get(run, math.nan))
                ),
                "edp": edp(energy_j, completion_s),
                "edp_per_inst": edp_per_instruction(
                    energy_j, completion_s, float(insts.get(run, math.nan))
                ),
            }
        )
    return pd.DataFrame(rows, columns=[*RUN, "apps", *METRICS])


def ci95(values: Sequence[float]) -> float:
    """Half-width of the 95% confidence interval of the mean; NaN below 2 values."""
    xs = [v for v in values if not math.isnan(v)]
    n = len(xs)
    if n < 2:
        return math.nan
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = float(stats.t.ppf(0.975, n - 1))  # Student's t, two-sided 95%, exact
    return t * sd / math.sqrt(n)


def summarise(runs: pd.DataFrame, reference: str = REFERENCE_POLICY) -> pd.DataFrame:
    """Long table: per (engine, platform, time scale, tick, policy, mix, metric): mean,
    ci95, n, normalised (mean / the reference policy's mean), runs."""
    runs = with_setup(runs)
    long = runs.melt(id_vars=RUN, value_vars=list(METRICS), var_name="metric")
    long = long.dropna(subset=["value"])
    keys = [*GROUP, "metric"]
    summary = long.groupby(keys, as_index=False).agg(
        mean=("value", "mean"),
        ci95=("value", ci95),
        n=("value", "size"),
        runs=("run", sorted),
    )
    ref = summary[summary["policy"] == reference][[*SETUP, "mix", "metric", "mean"]].rename(
        columns={"mean": "reference_mean"}
    )
    summary = summary.merge(ref, on=[*SETUP, "mix", "metric"], how="left")
    ratio = summary["mean"] / summary["reference_mean"]
    summary["normalised"] = ratio.where(summary["reference_mean"] > 0)
    return summary


def geomean(values: Sequence[float]) -> float:
    """The geometric mean; NaN if there is no value or any is not positive
    (it is undefined there: such a value is not dropped in silence)."""
    xs = [v for v in values if not math.isnan(v)]
    if not xs or any(x <= 0 for x in xs):
        return math.nan
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def geomeans(summary: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per (engine, platform, time scale, tick, policy, metric), and per value
    of each column of ``by`` (a mix's category, say), over mixes, the
    normalised means' geometric mean (``aggregate`` "geometric") or, for a
    metric that can be zero or negative, their arithmetic mean
    ("arithmetic"), in ``across_mixes``; and how many mixes it covers."""
    g = with_setup(summary).dropna(subset=["normalised"])
    keys = [*SETUP, *by, "policy", "metric"]
    rows = []
    for values_of_keys, part in g.groupby(keys):
        row = dict(zip(keys, values_of_keys, strict=True))
        values = part["normalised"].astype(float).tolist()
        positive = METRICS[str(row["metric"])].positive
        rows.append(
            {
                **row,
                "aggregate": "geometric" if positive else "arithmetic",
                "across_mixes": geomean(values) if positive else sum(values) / len(values),
                "mixes": part["mix"].nunique(),
            }
        )
    columns = [*keys, "aggregate", "across_mixes", "mixes"]
    return pd.DataFrame(rows, columns=columns)


def compute(
    apps: pd.DataFrame,
    threads: pd.DataFrame,
    cpus: pd.DataFrame | None = None,
    *,
    clusters: pd.DataFrame | None = None,
    memory: pd.DataFrame | None = None,
    reference: str = REFERENCE_POLICY,
    little_only: dict[str, str] | None = None,
    min_apps: int = 2,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """From collected tables: (slowdowns per app, metrics per run, summary, geomeans).

    Only runs of mixes with at least ``min_apps`` applications are compared
    (the single-application runs are the references).
    """
    apps = with_setup(apps)
    napps = apps.groupby("run")["app"].transform("size")
    mixed = apps[napps >= min_apps]
    if mixed.empty:
        raise AmpkitError(
            f"no run of a mix with at least {min_apps} applications to compare",
            "collect a directory holding multi-programmed runs (or lower --min-apps)",
        )
    slow = with_slowdowns(pd.concat([mixed, apps[napps == 1]]), reference)
    slow = slow[slow["run"].isin(mixed["run"])]
    little_only = {**infer_little_only(platform_counts(apps)), **(little_only or {})}
    if little_only:
        slow = with_slow_references(pd.concat([slow, apps[napps == 1]]), little_only, reference)
        slow = slow[slow["run"].isin(mixed["run"])]
    runs = per_run(slow, threads, cpus, clusters, memory)
    have = set(
        runs.loc[runs["policy"] == reference, [*SETUP, "mix"]].itertuples(index=False, name=None)
    )
    lacking = sorted(set(runs[[*SETUP, "mix"]].itertuples(index=False, name=None)) - have)
    if lacking:
        raise MissingReference(
            f"{len(lacking)} mix(es) have no run under {reference} to normalise to:\n"
            + "\n".join(
                f"  {e} {p}{_setup_note(int(s), int(t))}: mix {m} under {reference}"
                for e, p, s, t, m in lacking
            ),
            f"run them (ampkit run --policy {reference} --platform ... --mix ...) "
            "and collect again",
        )
    summary = summarise(runs, reference)
    return slow, runs, summary, geomeans(summary)
