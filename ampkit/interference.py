"""Fan, Sui and Xue's interference model: an application's slowdown beside
its co-runners, predicted from the pressure they put on shared resources.

Every application has, per core type, its pressure on each shared
resource when it runs alone there (C in the paper's eq. 1: an access
rate, per second, on the cluster's cache, the bus between the clusters
and memory, ``RESOURCES``). Co-running applications add their pressures
per cluster (eq. 1); an application's slowdown in percent on a core type
is a linear function of the pressures on its own cluster's cache, bus and
memory and on the other cluster's bus and memory (eq. 2-4), fitted per
application and core type by ordinary least squares from co-runs in
which it ran on that type ("Table II": one row per co-run, the pressures
of that co-run and the slowdown measured).

A model file (TOML) holds, per application (program, threads and size:
its pressures are its working set's), both pressures and both functions,
with its provenance; a run of the
contention-aware policy hands them to the guest daemon as policy_data
lines, one per application of its mix, by the mix's index
(workloads/README.md, policy_data; workloads/runner/ampkit-contention.c
predicts with them). What gem5 measures as each resource is
gem5stats.shared_accesses'; the co-runs that train a function are the
profiling command's (ampkit.corun); this module fits, validates, stores
and hands over.

A run of the policy ``contention`` takes a model file and Algorithm 1's
threshold S (Contention): its mix is refused before boot when the file
has no model for one of its applications or was profiled on another
platform or engine.
"""

import hashlib
import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ampkit import gem5stats
from ampkit.errors import AmpkitError, UsageError
from ampkit.mix import App, Mix
from ampkit.platform import Platform

if TYPE_CHECKING:
    import pandas as pd

# pandas and scikit-learn are imported where a fit needs them: a run of the
# policy reads a model file only, and every run imports this module

#: the shared resources of eq. 1, in the order the daemon reads them
RESOURCES = ("cache", "bus", "mem")
CORES = ("big", "little")
#: the degradation function's terms (eq. 4): the pressures on the
#: application's own cluster's cache, bus and memory, on the other
#: cluster's bus and memory; then its constant
TERMS = ("own_cache", "own_bus", "own_mem", "other_bus", "other_mem")
#: 2: applications keyed by size too
FORMAT = 2


@dataclass(frozen=True)
class Degradation:
    """One core type's degradation function: slowdown % = intercept +
    sum of coefficient x pressure over TERMS."""

    coefficients: tuple[float, ...]  # in TERMS order
    intercept: float

    def predict(self, terms: Mapping[str, float]) -> float:
        return self.intercept + sum(
            c * terms[t] for c, t in zip(self.coefficients, TERMS, strict=True)
        )


def size_of(app: App) -> str:
    """What, beside its program and threads, makes an application's
    pressures its own: its size as run names carry it (n<size>, or a PARSEC
    input set) and the arguments it runs with, if any."""
    return " ".join((app.workload_size, *app.args))


@dataclass(frozen=True)
class AppModel:
    """An application's model: its pressures alone per core type, and its
    degradation function per core type."""

    program: str
    threads: int
    #: its size and arguments (size_of()): a program's pressures are its
    #: working set's
    size: str
    pressure: Mapping[str, tuple[float, ...]]  # core -> RESOURCES order
    degradation: Mapping[str, Degradation]  # core -> its function

    def data_line(self, index: int) -> str:
        """The run description's policy_data line of this application at
        mix index ``index`` (workloads/runner/ampkit-contention.c)."""
        words = ["app", str(index), "pressure"]
        words += [_num(v) for core in CORES for v in self.pressure[core]]
        for core in CORES:
            d = self.degradation[core]
            words += [core, *(_num(c) for c in d.coefficients), _num(d.intercept)]
        return "policy_data " + " ".join(words)


#: the kit's gem5 cluster of each core type (configs/bigLITTLE.py CLUSTER_NAMES)
GEM5_CLUSTERS = {"big": "bigCluster", "little": "littleCluster"}


def pressures(dump: Mapping[str, float]) -> dict[str, tuple[float, float, float]]:
    """Each core type's cluster's accesses per second to RESOURCES over a
    gem5 statistics dump (gem5stats.shared_accesses says what stands for
    each on gem5): C in eq. 1 for an application run alone on that type's
    cluster; a type without a cluster (0B2L) is absent."""
    seconds = dump.get("simTicks", math.nan) / gem5stats.TICKS_PER_S
    if not seconds > 0:
        raise AmpkitError(f"a statistics dump of {seconds} simulated seconds: no rate to take")
    counts = gem5stats.shared_accesses(dict(dump))
    return {
        core: tuple(v / seconds for v in counts[cluster])  # type: ignore[misc]
        for core, cluster in GEM5_CLUSTERS.items()
        if cluster in counts
    }


def _num(value: float) -> str:
    if not math.isfinite(value):
        raise AmpkitError(f"an interference model value that is not a finite number: {value}")
    return repr(float(value))


def fit_degradation(samples: "pd.DataFrame", *, whole: bool = True) -> Degradation:
    """One core type's function from its co-runs: ``samples`` has a column
    per TERMS and ``slowdown_pct``, one row per co-run. Needs more co-runs
    than unknowns and, for a model (``whole``), co-runs that tell every
    term apart: pressures that vary along fewer directions than there are
    terms leave some coefficients to the solver's choice (least squares
    takes the smallest), which a prediction beside other co-runners would
    then use as if measured. A fit of a held-out fold (``whole`` False)
    takes what its rows allow: its predictions are what is being judged."""
    unknowns = len(TERMS) + 1
    if len(samples) <= unknowns:
        raise AmpkitError(
            f"{len(samples)} co-runs for a degradation function of {unknowns} unknowns",
            "profile more co-runs (the paper uses 40 a core type)",
        )
    import numpy as np
    from sklearn.linear_model import LinearRegression

    terms = samples[list(TERMS)].to_numpy(float)
    if whole:
        rank = int(np.linalg.matrix_rank(np.column_stack([terms, np.ones(len(terms))])))
        if rank < unknowns:
            raise AmpkitError(
                f"the co-runs' pressures vary along {rank} independent directions, and the "
                f"function has {unknowns} unknowns: its coefficients cannot be told apart",
                "profile beside at least three co-runner programs of different pressures "
                "(the own cluster's cache, bus and memory terms need three directions)",
            )
    fitted = LinearRegression().fit(terms, samples["slowdown_pct"].to_numpy(float))
    return Degradation(tuple(float(c) for c in fitted.coef_), float(fitted.intercept_))


def condition_number(samples: "pd.DataFrame") -> float:
    """How near to dependent the co-runs' terms are (the 2-norm condition
    number of the terms scaled to unit range, with the constant): near 1,
    every coefficient is well determined; in the thousands, some are
    nearly interchangeable (on gem5, bus and memory: gem5stats.shared_accesses)."""
    import numpy as np

    terms = samples[list(TERMS)].to_numpy(float)
    span = terms.max(axis=0) - terms.min(axis=0)
    scaled = (terms - terms.min(axis=0)) / np.where(span > 0, span, 1.0)
    return float(np.linalg.cond(np.column_stack([scaled, np.ones(len(terms))])))


def fit_app(
    program: str,
    threads: int,
    size: str,
    pressure: Mapping[str, Sequence[float]],
    samples: "pd.DataFrame",
) -> AppModel:
    """An application's model: ``pressure`` measured alone per core type,
    and its co-runs (``samples``, a ``core`` column saying where it ran)."""
    degradation = {}
    for core in CORES:
        part = samples[samples["core"] == core]
        if part.empty:
            raise AmpkitError(f"{program} t{threads} {size}: no co-run with it on a {core} CPU")
        degradation[core] = fit_degradation(part)
    return AppModel(
        program,
        threads,
        size,
        {core: tuple(float(v) for v in pressure[core]) for core in CORES},
        degradation,
    )


def held_out_errors(samples: "pd.DataFrame") -> "pd.DataFrame":
    """Each co-run predicted by the function fitted without it (per
    application and core type: the columns ``program``, ``threads``,
    ``size``, ``core``, TERMS and ``slowdown_pct``, and ``corun`` naming
    the co-run; rows of one co-run are left out together), beside what was
    measured: leave-one-co-run-out validation, in points of slowdown. It
    checks the fit on co-runners the training had; the paper's errors
    (6.66% on big cores, 9.6% on little ones) are over new workloads, with
    co-runners the training did not have, and it does not say how it
    measured them. Columns: program, threads, size, core, corun,
    measured_pct, predicted_pct, error_pct (predicted - measured, points
    of slowdown)."""
    import pandas as pd
    from sklearn.model_selection import LeaveOneGroupOut

    rows = []
    for _, group in samples.groupby(["program", "threads", "size", "core"]):
        part = group.reset_index(drop=True)
        for train, test in LeaveOneGroupOut().split(part, groups=part["corun"]):
            model = fit_degradation(part.iloc[train], whole=False)
            rows += [prediction(part.iloc[i], model) for i in test]
    return pd.DataFrame(rows)


def prediction(row: "pd.Series[Any]", model: Degradation) -> dict[str, Any]:
    """A co-run's slowdown as ``model`` predicts it from its row's TERMS,
    beside the one measured: held_out_errors()'s columns."""
    predicted = model.predict({t: float(row[t]) for t in TERMS})
    measured = float(row["slowdown_pct"])
    return {
        "program": row["program"],
        "threads": int(row["threads"]),
        "size": row["size"],
        "core": row["core"],
        "corun": row["corun"],
        "measured_pct": measured,
        "predicted_pct": predicted,
        "error_pct": predicted - measured,
    }


@dataclass(frozen=True)
class InterferenceModels:
    """A model file: the applications' models and where they came from."""

    apps: tuple[AppModel, ...]
    provenance: Mapping[str, Any]
    source: Path | None = None
    sha256: str | None = None

    def of(self, app: App) -> AppModel | None:
        """The model of ``app`` (by program, threads and size), if any."""
        key = (app.program, app.threads, size_of(app))
        return next((a for a in self.apps if (a.program, a.threads, a.size) == key), None)

    def lines(self, mix: Mix) -> tuple[str, ...]:
        """The policy_data lines of ``mix``'s applications, by mix index;
        an error naming every application the models lack."""
        missing = [
            f"app {i + 1} ({a.program}, {a.threads} threads, {size_of(a)}; mix index {i})"
            for i, a in enumerate(mix.apps)
            if self.of(a) is None
        ]
        if missing:
            raise AmpkitError(
                f"the interference models{f' of {self.source}' if self.source else ''} have "
                f"none for {', '.join(missing)} of mix {mix.name}",
                "ampkit interference profile profiles one-thread applications at their "
                "sizes (workloads/README.md, Interference models); a model of more threads "
                "is written by hand",
            )
        return tuple(
            model.data_line(i) for i, a in enumerate(mix.apps) if (model := self.of(a)) is not None
        )

    def to_toml(self) -> str:
        # values as JSON writes them, which TOML reads (as ampkit.profile does)
        out = [f"format = {FORMAT}", "", "[provenance]"]
        out += [f"{k} = {json.dumps(v)}" for k, v in sorted(self.provenance.items())]
        for a in self.apps:
            out += ["", "[[app]]", f"program = {json.dumps(a.program)}", f"threads = {a.threads}"]
            out.append(f"size = {json.dumps(a.size)}")
            for core in CORES:
                values = ", ".join(_num(v) for v in a.pressure[core])
                out.append(f"pressure_{core} = [{values}]")
            for core in CORES:
                d = a.degradation[core]
                values = ", ".join(_num(c) for c in d.coefficients)
                out.append(
                    f"{core} = {{ coefficients = [{values}], intercept = {_num(d.intercept)} }}"
                )
        return "\n".join(out) + "\n"


def _number(value: object) -> float:
    """A TOML number that is finite (not a string, a boolean, nan or inf)."""
    if type(value) not in (int, float) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise ValueError(f"{value!r}")
    return float(value)  # type: ignore[arg-type]


def load_models(path: Path) -> InterferenceModels:
    """A model file, checked: an error names what is wrong and where."""
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise AmpkitError(f"cannot read the interference models {path}: {e}") from e
    if type(data.get("format")) is not int or data.get("format") != FORMAT:
        raise AmpkitError(f"{path}: format {data.get('format')!r}, this kit reads {FORMAT}")
    if not isinstance(data.get("provenance", {}), dict) or not isinstance(
        data.get("app", []), list
    ):
        raise AmpkitError(
            f"{path}: provenance must be a table and app an array of tables",
            "[provenance] then [[app]] entries (ampkit/interference.py writes them)",
        )
    apps: list[AppModel] = []
    for i, entry in enumerate(data.get("app", [])):
        where = f"{path}, app {i + 1}"
        try:
            pressure = {c: tuple(_number(v) for v in entry[f"pressure_{c}"]) for c in CORES}
            degradation = {
                c: Degradation(
                    tuple(_number(v) for v in entry[c]["coefficients"]),
                    _number(entry[c]["intercept"]),
                )
                for c in CORES
            }
            threads = entry["threads"]
            if type(threads) is not int or threads < 1:
                raise ValueError(f"threads {threads!r}")
            size = entry["size"]
            if type(size) is not str or not size:
                raise ValueError(f"size {size!r}")
            app = AppModel(str(entry["program"]), threads, size, pressure, degradation)
        except (KeyError, TypeError, ValueError) as e:
            raise AmpkitError(f"{where}: {e!r} missing or not a finite number") from e
        if any(len(p) != len(RESOURCES) for p in pressure.values()):
            raise AmpkitError(f"{where}: a pressure needs {len(RESOURCES)} values {RESOURCES}")
        if any(len(d.coefficients) != len(TERMS) for d in degradation.values()):
            raise AmpkitError(f"{where}: a function needs {len(TERMS)} coefficients {TERMS}")
        if any(v < 0 for p in pressure.values() for v in p):
            raise AmpkitError(f"{where}: a negative pressure (an access rate)")
        key = (app.program, app.threads, app.size)
        if any((a.program, a.threads, a.size) == key for a in apps):
            raise AmpkitError(
                f"{where}: {app.program} with {app.threads} threads at {app.size} given twice"
            )
        apps.append(app)
    return InterferenceModels(
        tuple(apps),
        dict(data.get("provenance", {})),
        source=path,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


#: Algorithm 1's threshold S, in percent of predicted slowdown, where none
#: is given. The paper tunes S per machine (its Fig. 9) and gives no
#: default; its worked example sits at 50-60% on its board. 30 is the
#: kit's starting point, not the paper's: tune it on the platform with
#: --contention-threshold or a spec's contention_threshold_pct.
DEFAULT_THRESHOLD_PCT = 30.0
#: the thresholds the kit takes: a slowdown beyond 1000% is no threshold
THRESHOLD_RANGE_PCT = (0.0, 1000.0)


@dataclass(frozen=True)
class Contention:
    """What a run of the contention-aware policy hands its daemon: the
    applications' interference models and Algorithm 1's threshold S."""

    models: InterferenceModels
    threshold_pct: float = DEFAULT_THRESHOLD_PCT

    def __post_init__(self) -> None:
        low, high = THRESHOLD_RANGE_PCT
        if not math.isfinite(self.threshold_pct) or not low <= self.threshold_pct <= high:
            raise UsageError(
                f"a contention threshold of {self.threshold_pct}%: it must be {low:g} to "
                f"{high:g} (percent of predicted slowdown)",
                f"the kit's default is {DEFAULT_THRESHOLD_PCT:g}",
            )

    def daemon_args(self) -> tuple[str, ...]:
        """The daemon's arguments for S (workloads/runner/ampkit-contention.c -S)."""
        return ("-S", f"{self.threshold_pct:g}")

    def data_lines(self, mix: Mix, platform: Platform, engine: str) -> tuple[str, ...]:
        """The run description's policy_data lines for ``mix`` on
        ``platform`` and ``engine``: an error, before any boot, when the
        models were profiled on another platform or engine or lack one of
        its applications."""
        profiled_on = self.models.provenance.get("platform")
        where = f" ({self.models.source})" if self.models.source else ""
        profiled_by = self.models.provenance.get("engine")
        if profiled_by != engine:
            raise AmpkitError(
                f"the interference models{where} were profiled on engine {profiled_by!r}, the "
                f"run is on {engine}: pressures are an engine's (QEMU models no cache)",
                f"profile on {engine}, or write a model file for it by hand saying engine = "
                f'"{engine}" in its [provenance]',
            )
        if profiled_on is None:
            raise AmpkitError(
                f"the interference models{where} do not say which platform they were "
                "profiled on (provenance.platform)",
                "profile the applications on the run's platform; a model file names it",
            )
        if profiled_on != platform.name:
            raise AmpkitError(
                f"the interference models{where} were profiled on {profiled_on}, the run is "
                f"on {platform.name}: pressures and slowdowns are the platform's",
                f"profile the applications on {platform.name}",
            )
        return self.models.lines(mix)

    def describe(self) -> dict[str, Any]:
        """What a run's manifest records of it (policy_details.interference)."""
        return {
            "models": str(self.models.source) if self.models.source else None,
            "models_sha256": self.models.sha256,
            "provenance": dict(self.models.provenance),
            "threshold_pct": self.threshold_pct,
        }
