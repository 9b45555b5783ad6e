"""The analytical model of Saez et al. (paper 002, section 2.3: eq. 1 and
4-9) and the four schedules it compares: HSP, EEF-Driven and the two
theoretical optima, Opt-Unf and Opt-EDP.

The model's world: n single-threaded applications on N_big big and
N_little little CPUs, n <= N_big + N_little, all running for the same time
T; every big CPU is kept busy (the schedule is work conserving), so
application i spends a fraction F_i of T on a big CPU and the rest on a
little one, with 0 <= F_i <= 1 and sum F_i = min(N_big, n). Its speedup
SF_i (big over little, in instructions per second) and its energy per
instruction on each core type are constant; contention and migrations
cost nothing. Write w_i = 1/SF_i + F_i (1 - 1/SF_i): the application's
speed relative to a big CPU of its own, the inverse of its slowdown (eq. 5
with f_i from eq. 6). Then

    slowdown_i  = 1 / w_i                                   (5, 6)
    ASP         = sum (SF_i w_i - 1)                        (4)
    unfairness  = max slowdown_i / min slowdown_i            (1)
    EDP         = T sum P_i / sum IPS_i                      (7)
      IPS_i = IPS_big,i w_i                                  (8)
      P_i   = IPS_i EPI_i                                    (9)
            = F_i IPS_big,i EPI_big,i + (1 - F_i) IPS_little,i EPI_little,i

with IPS_little,i = IPS_big,i / SF_i. (Eq. 9 weighs the two EPIs by f_i,
the share of instructions retired on a big CPU; times IPS_i that is the
power above, in which F_i appears linearly.)

The paper finds the optima by stepping each F_i by 0.01 with a
branch-and-bound search. Both are found exactly here, because every w_i,
the ASP, each IPS_i and each P_i is affine in F, and the feasible
schedules form a polytope whose corners are the schedules with exactly
min(N_big, n) applications on big CPUs the whole time (F_i in {0, 1}):

- **Opt-EDP**, the schedule of least EDP and, among those, the most ASP:
  EDP is a ratio of two positive affine functions of F, so it is
  quasi-linear; its minimum over a polytope is reached at a corner, the
  schedules that reach it form a face, and the ASP, linear, is largest on
  that face at one of its corners, which are corners of the polytope.
  Enumerating the C(n, N_big) corners is therefore exact (70 on eight
  CPUs).
- **Opt-Unf**, the least unfairness and, among those, the most ASP:
  minimising max w / min w subject to u <= w_i <= v is a linear-fractional
  program, which the Charnes-Cooper substitution (t = 1/u; y = t F,
  z = t v) turns into a linear one; a second linear program then
  maximises the ASP with the ratio held at its optimum. Both are solved
  by scipy's HiGHS. The result is at least as fair as any schedule of the
  paper's 0.01 grid (the unit tests check it against that grid).

HSP gives the big CPUs the min(N_big, n) applications of highest SF, and
EEF-Driven those of highest EEF = SF / EPI_big (section 2.4), each for
the whole time; ties go to the application listed first.

Units: EDP is in the units of T (seconds) times those of the EPIs
(nJ here) over the instruction's: only ratios between schedules of one
workload mean anything, and IPS_big,i may be in any unit common to the
workload's applications (the paper's Table 1 gives IPC, all CPUs of a type
at one frequency).
"""

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from ampkit.analysis.metrics import SETUP
from ampkit.errors import AmpkitError

#: The schedules the model compares, in the paper's order.
SCHEDULERS = ("HSP", "Opt-Unf", "Opt-EDP", "EEF-Driven")
#: The paper's T for its figures (s): EDP scales with it, rankings do not.
DEFAULT_SECONDS = 10.0
#: Relative slack when holding an optimum fixed in a second search: the
#: solver's answer is exact to about 1e-9, so "equal" means within this.
_TIE = 1e-9


@dataclass(frozen=True)
class AppModel:
    """One application as the model sees it, measured alone."""

    name: str
    speedup: float  # SF: instructions per second on a big CPU over a little one
    ips_big: float  # instructions per second on a big CPU (any unit common to the mix)
    epi_big_nj: float  # energy per instruction on a big CPU
    epi_little_nj: float  # ... and on a little one

    @property
    def eef(self) -> float:
        """Energy-efficiency factor (section 2.4): SF over EPI_big."""
        return self.speedup / self.epi_big_nj


@dataclass(frozen=True)
class Point:
    """A schedule and what the model says of it."""

    scheduler: str
    big_fraction: tuple[float, ...]  # F_i, in the order of the applications
    slowdowns: tuple[float, ...]
    asp: float
    unfairness: float
    edp: float


def check_workload(apps: Sequence[AppModel], n_big: int, n_little: int) -> None:
    """Refuse what the model cannot describe, saying what to change."""
    if n_big < 0 or n_little < 0 or n_big + n_little == 0:
        raise AmpkitError(
            f"a platform of {n_big} big and {n_little} little CPUs",
            "give at least one CPU, and no negative count",
        )
    if not apps:
        raise AmpkitError("a workload of no application", "give at least one")
    if len(apps) > n_big + n_little:
        raise AmpkitError(
            f"{len(apps)} applications on {n_big + n_little} CPUs: the model gives "
            "each application a CPU of its own (Saez et al., section 2.3)",
            "give at most as many applications as CPUs",
        )
    for app in apps:
        for field in ("speedup", "ips_big", "epi_big_nj", "epi_little_nj"):
            value = getattr(app, field)
            if not (math.isfinite(value) and value > 0):
                raise AmpkitError(
                    f"application {app.name!r}: {field} = {value}",
                    "every measurement the model takes must be a positive number",
                )


def evaluate(
    apps: Sequence[AppModel],
    big_fraction: Sequence[float],
    *,
    scheduler: str = "",
    seconds: float = DEFAULT_SECONDS,
) -> Point:
    """Eq. 1 and 4-9 for one schedule (F_i per application)."""
    sf = np.array([a.speedup for a in apps])
    ips_big = np.array([a.ips_big for a in apps])
    fraction = np.asarray(big_fraction, dtype=float)
    if fraction.shape != sf.shape or np.any(fraction < -_TIE) or np.any(fraction > 1 + _TIE):
        raise AmpkitError(
            f"big-CPU fractions {list(big_fraction)} for {len(apps)} applications",
            "give one fraction in [0, 1] per application",
        )
    speed = 1 / sf + fraction * (1 - 1 / sf)  # w_i
    slowdowns = 1 / speed
    power = fraction * ips_big * np.array([a.epi_big_nj for a in apps]) + (1 - fraction) * (
        ips_big / sf
    ) * np.array([a.epi_little_nj for a in apps])
    return Point(
        scheduler=scheduler,
        big_fraction=tuple(float(f) for f in fraction),
        slowdowns=tuple(float(s) for s in slowdowns),
        asp=float(np.sum(sf * speed - 1)),
        unfairness=float(slowdowns.max() / slowdowns.min()),
        edp=float(seconds * power.sum() / (ips_big * speed).sum()),
    )


def _on_big(n: int, chosen: Sequence[int]) -> tuple[float, ...]:
    return tuple(1.0 if i in chosen else 0.0 for i in range(n))


def _top(keys: Sequence[float], count: int) -> list[int]:
    """The indices of the count largest keys; ties to the lower index."""
    return sorted(range(len(keys)), key=lambda i: (-keys[i], i))[:count]


def hsp(apps: Sequence[AppModel], n_big: int, *, seconds: float = DEFAULT_SECONDS) -> Point:
    """High-SPeedup: the big CPUs to the applications of highest SF."""
    chosen = _top([a.speedup for a in apps], min(n_big, len(apps)))
    return evaluate(apps, _on_big(len(apps), chosen), scheduler="HSP", seconds=seconds)


def eef_driven(apps: Sequence[AppModel], n_big: int, *, seconds: float = DEFAULT_SECONDS) -> Point:
    """EEF-Driven: the big CPUs to the applications of highest SF / EPI_big."""
    chosen = _top([a.eef for a in apps], min(n_big, len(apps)))
    return evaluate(apps, _on_big(len(apps), chosen), scheduler="EEF-Driven", seconds=seconds)


def opt_edp(apps: Sequence[AppModel], n_big: int, *, seconds: float = DEFAULT_SECONDS) -> Point:
    """The least EDP any schedule reaches, with the most ASP among those:
    the best corner of the polytope (the module's docstring says why no
    other schedule can do better)."""
    n = len(apps)
    corners = [
        evaluate(apps, _on_big(n, chosen), scheduler="Opt-EDP", seconds=seconds)
        for chosen in itertools.combinations(range(n), min(n_big, n))
    ]
    least = min(p.edp for p in corners)
    ties = [p for p in corners if p.edp <= least * (1 + _TIE)]
    return max(ties, key=lambda p: p.asp)


def _solve(
    cost: np.ndarray,
    upper: tuple[np.ndarray, np.ndarray],
    equal: tuple[np.ndarray, list[float]],
    bounds: list[tuple[float, float | None]],
) -> np.ndarray:
    """Minimise cost x subject to A x <= b (upper), A x = b (equal) and bounds."""
    result = linprog(
        cost, A_ub=upper[0], b_ub=upper[1], A_eq=equal[0], b_eq=equal[1], bounds=bounds
    )
    if result.status != 0:  # the programs below are feasible and bounded by construction
        raise AmpkitError(f"the optimum's linear program failed: {result.message}")
    return np.asarray(result.x)


def opt_unfairness(
    apps: Sequence[AppModel], n_big: int, *, seconds: float = DEFAULT_SECONDS
) -> Point:
    """The least unfairness any schedule reaches, with the most ASP among
    those: two linear programs (the module's docstring)."""
    n = len(apps)
    on_big = min(n_big, n)
    if on_big == n:  # a big CPU each: nothing to share
        return evaluate(apps, [1.0] * n, scheduler="Opt-Unf", seconds=seconds)
    sf = np.array([a.speedup for a in apps])
    base, gain = 1 / sf, 1 - 1 / sf  # w_i = base_i + gain_i F_i
    eye = np.eye(n)

    # 1. minimise z over (y_1..y_n, t, z), with t = 1/min w, y = t F, z = t max w:
    #    t w_i >= 1, t w_i <= z, y_i <= t, sum y = N_big t, y, t >= 0
    a_ub = np.vstack(
        [
            np.hstack([-gain[:, None] * eye, -base[:, None], np.zeros((n, 1))]),
            np.hstack([gain[:, None] * eye, base[:, None], -np.ones((n, 1))]),
            np.hstack([eye, -np.ones((n, 1)), np.zeros((n, 1))]),
        ]
    )
    b_ub = np.concatenate([-np.ones(n), np.zeros(n), np.zeros(n)])
    a_eq = np.hstack([np.ones((1, n)), [[-on_big, 0.0]]])
    cost = np.zeros(n + 2)
    cost[-1] = 1.0
    x = _solve(cost, (a_ub, b_ub), (a_eq, [0.0]), [(0, None)] * (n + 2))
    ratio = x[-1]  # the least max w / min w, which is the least unfairness

    # 2. maximise sum SF_i w_i over (F_1..F_n, v): w_i <= v, ratio' w_i >= v,
    #    sum F = N_big, 0 <= F <= 1, with ratio' the optimum and its slack
    held = ratio * (1 + _TIE)
    a_ub = np.vstack(
        [
            np.hstack([gain[:, None] * eye, -np.ones((n, 1))]),
            np.hstack([-held * gain[:, None] * eye, np.ones((n, 1))]),
        ]
    )
    b_ub = np.concatenate([-base, held * base])
    a_eq = np.hstack([np.ones((1, n)), [[0.0]]])
    cost = np.concatenate([-sf * gain, [0.0]])
    x = _solve(cost, (a_ub, b_ub), (a_eq, [float(on_big)]), [(0, 1)] * n + [(0, None)])
    fraction = np.clip(x[:n], 0.0, 1.0)
    return evaluate(apps, fraction, scheduler="Opt-Unf", seconds=seconds)


def points(
    apps: Sequence[AppModel],
    n_big: int,
    n_little: int,
    *,
    seconds: float = DEFAULT_SECONDS,
) -> list[Point]:
    """The four schedules of a workload on a platform, in SCHEDULERS' order."""
    check_workload(apps, n_big, n_little)
    if len({a.name for a in apps}) != len(apps):
        raise AmpkitError(
            f"applications named twice in {[a.name for a in apps]}",
            "name each application of the workload once (add its threads or size)",
        )
    return [
        hsp(apps, n_big, seconds=seconds),
        opt_unfairness(apps, n_big, seconds=seconds),
        opt_edp(apps, n_big, seconds=seconds),
        eef_driven(apps, n_big, seconds=seconds),
    ]


def table(apps: Sequence[AppModel], found: Sequence[Point]) -> pd.DataFrame:
    """Tidy: a row per (scheduler, application) with its F_i and slowdown,
    and the workload's ASP, unfairness and EDP under that scheduler."""
    rows = [
        {
            "scheduler": p.scheduler,
            "application": app.name,
            "big_fraction": f,
            "slowdown": s,
            "asp": p.asp,
            "unfairness": p.unfairness,
            "edp": p.edp,
        }
        for p in found
        for app, f, s in zip(apps, p.big_fraction, p.slowdowns, strict=True)
    ]
    return pd.DataFrame(rows)


# --- beside measured runs --------------------------------------------------------


def beside_runs(
    apps: pd.DataFrame,
    tasks: pd.DataFrame,
    per_run: pd.DataFrame,
    models: Mapping[str, AppModel],
    *,
    seconds: float = DEFAULT_SECONDS,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """For every mix of the runs whose applications are all single-threaded
    and in ``models`` (keyed by the apps table's ``key``): the model's four
    schedules, and each policy's schedule as measured (each application's
    share of its run time on big CPUs, from the kernel's per-task counters,
    the mean over repetitions) read by the model, beside the policy's
    measured ASP, unfairness and EDP per instruction. Three tidy frames:
    ``points`` (a row per setup, mix and schedule: asp, unfairness, edp,
    edp_vs_optimum, big_sum (the F_i's sum) and in_model; for a measured
    one also measured_asp, measured_unfairness, measured_edp_per_inst and
    its runs), ``fractions`` (a row per setup, mix, schedule and
    application: F_i) and ``skipped`` (a row per setup and mix left out,
    with why).

    A measured schedule is one of the model's only where its F_i sum to
    min(N_big, n), within IN_MODEL: a policy that leaves a big CPU idle,
    or runs whose applications end at different times, give F_i that no
    work-conserving schedule has, and the model's EDP or ASP of those can
    pass the optima's. in_model says which; the report plots only those."""
    schedule_rows: list[dict[str, object]] = []
    fraction_rows: list[dict[str, object]] = []
    skipped_rows: list[dict[str, object]] = []
    if apps.empty:
        return pd.DataFrame(schedule_rows), pd.DataFrame(fraction_rows), pd.DataFrame(skipped_rows)
    mixed = apps[apps.groupby("run")["app"].transform("size") >= 2]
    shares = _measured_big_shares(tasks)
    for (*setup, mix), part in mixed.groupby([*SETUP, "mix"], sort=True):
        where = dict(zip([*SETUP, "mix"], [*setup, mix], strict=True))
        first = part[part["run"] == part["run"].iloc[0]].sort_values(["app", "instance"])
        names = [f"{a}#{i}" for a, i in zip(first["app"], first["instance"], strict=True)]
        why = [
            f"{n}: {t} threads" if t != 1 else f"{n}: not in the profile"
            for n, t, k in zip(names, first["threads"], first["key"], strict=True)
            if t != 1 or k not in models
        ]
        if why:
            skipped_rows.append({**where, "why": "; ".join(why)})
            continue
        inputs = [replace(models[k], name=n) for n, k in zip(names, first["key"], strict=True)]
        n_big, n_little = int(first["big"].iloc[0]), int(first["little"].iloc[0])
        try:
            found = points(inputs, n_big, n_little, seconds=seconds)
        except AmpkitError as e:
            skipped_rows.append({**where, "why": e.what})
            continue
        optimum_edp = next(p.edp for p in found if p.scheduler == "Opt-EDP")
        on_big = min(n_big, len(inputs))
        for p in found:
            schedule_rows.append(
                {
                    **where,
                    "schedule": p.scheduler,
                    "kind": "model",
                    **_values(p, on_big, optimum_edp),
                }
            )
        for policy, runs in part.groupby("policy", sort=True):
            measured = shares[shares["run"].isin(runs["run"])]
            by_app = measured.groupby(["app", "instance"])["big_share"].mean()
            keys = list(zip(first["app"], first["instance"], strict=True))
            if not all(k in by_app.index for k in keys):
                continue  # no per-task counters: nothing to read the schedule from
            fraction = [min(1.0, max(0.0, float(by_app[k]))) for k in keys]
            p = evaluate(inputs, fraction, scheduler=str(policy), seconds=seconds)
            got = per_run[per_run["run"].isin(runs["run"])]
            schedule_rows.append(
                {
                    **where,
                    "schedule": str(policy),
                    "kind": "measured",
                    **_values(p, on_big, optimum_edp),
                    "measured_asp": _mean(got, "asp"),
                    "measured_unfairness": _mean(got, "unfairness"),
                    "measured_edp_per_inst": _mean(got, "edp_per_inst"),
                    "runs": int(runs["run"].nunique()),
                }
            )
            found = [*found, p]
        for p in found:
            for name, f in zip(names, p.big_fraction, strict=True):
                fraction_rows.append(
                    {**where, "schedule": p.scheduler, "app": name, "big_fraction": f}
                )
    return pd.DataFrame(schedule_rows), pd.DataFrame(fraction_rows), pd.DataFrame(skipped_rows)


#: How far the F_i of a measured schedule may sum from min(N_big, n), as a
#: share of it, for the schedule to be one of the model's.
IN_MODEL = 0.02


def _values(p: Point, on_big: int, optimum_edp: float) -> dict[str, object]:
    total = sum(p.big_fraction)
    return {
        "asp": p.asp,
        "unfairness": p.unfairness,
        "edp": p.edp,
        "edp_vs_optimum": p.edp / optimum_edp,
        "big_sum": total,
        "in_model": abs(total - on_big) <= IN_MODEL * max(on_big, 1),
    }


def _mean(frame: pd.DataFrame, column: str) -> float:
    if column not in frame:
        return math.nan
    return float(frame[column].mean())


def _measured_big_shares(tasks: pd.DataFrame) -> pd.DataFrame:
    """Per run and application: its tasks' time on big CPUs over their time
    on either (NaN where they ran for no time)."""
    need = {"run", "app", "instance", "big_ns", "little_ns"}
    if tasks.empty or not need <= set(tasks.columns):
        return pd.DataFrame(columns=["run", "app", "instance", "big_share"])
    t = tasks.dropna(subset=["big_ns", "little_ns"])
    sums = t.groupby(["run", "app", "instance"], as_index=False)[["big_ns", "little_ns"]].sum()
    total = (sums["big_ns"] + sums["little_ns"]).where(lambda x: x > 0)
    sums["big_share"] = sums["big_ns"] / total
    return sums[["run", "app", "instance", "big_share"]].dropna()
