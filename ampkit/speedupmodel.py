"""A thread's big-over-little speedup, and its EEF, predicted from its PMU
counts: the offline model.

WASH (Jibaja et al., section 5) learns which performance events predict a
thread's speedup with principal component analysis, keeps as many as the
core counts at once, and fits a linear regression on them; Saez et al.
(section 4.2) keep one model per core type, since a thread's rates differ
by the core it runs on, and predict the energy-efficiency factor the same
way (EEF = speedup / EPI_big, nJ per instruction on the big core).

Training data is a speedup profile whose runs counted PMU events
('ampkit profile', ampkit.profile): per application, its events over its
process on big CPUs only and on little CPUs only, its speedup (the little
region over the big one) and, on gem5, the big cluster's energy per
instruction. A model reads the rates per instruction (ampkit.pmu) of the
core type it is for.

Choosing the events, after WASH: standardise the rates, drop an event
that repeats another (|r| of 0.99 or more), then fit a principal-component
regression (the components that explain 99% of the variance, which
leaves out the directions in which the events say the same thing) and
drop the event of the smallest weight in it (its coefficient through the
components), again, until no event is a combination of the others
(MEM_ACCESS is LD_RETIRED + ST_RETIRED on gem5) and the events fit the
PMU: INST_RETIRED in one of its COUNTERS event counters, CPU_CYCLES in
the cycle counter, the others in the rest. The model is an ordinary
least-squares fit on the chosen events' raw rates, so that applying it
online is a sum of products.

How many events: unless told, the number at which leaving one program
out of the training data errs least (choose_limit()). WASH keeps as many
as the core counts at once; with the few, alike programs a kit trains on,
a model of that many events fits them and extrapolates wildly to a
program unlike them.

Leave-one-program-out validation repeats the whole choice and fit
without each program (every thread count of it), the number of events
included (chosen among the others alone, so the validation is nested and
its error honest), and predicts it, as WASH's figure 6 does.
"""

import hashlib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import LeaveOneGroupOut
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ampkit.calibration import same_machine
from ampkit.errors import AmpkitError
from ampkit.pmu import COUNTERS, INSTRUCTIONS, NAMES, fits
from ampkit.profile import Profile
from ampkit.tomlfile import TomlFile, provenance_lines

KIND = "ampkit-speedup-model"
VERSION = 1
CORES = ("big", "little")
TARGETS = ("speedup", "eef")
#: the share of the rates' variance the principal components keep
VARIANCE = 0.99
#: two events at least this correlated say the same thing: one goes
REDUNDANT = 0.99
#: events besides INST_RETIRED that the event counters hold at once
EVENT_BUDGET = COUNTERS - 1
_HINT = "train one with 'ampkit model train' (format in ampkit/speedupmodel.py)"


def rate_name(event: str) -> str:
    """A model input: an event per instruction (CPU_CYCLES: cycles per
    instruction)."""
    return f"{event}/{INSTRUCTIONS}"


def training_frame(profile: Profile) -> pd.DataFrame:
    """One row per application and core type its runs counted on: program,
    app, core, each event's rate per instruction (ampkit.pmu's order;
    NaN where not counted), speedup and eef (NaN without the big
    cluster's energy)."""
    rows = []
    for e in profile.entries:
        app = f"{e.app.program}-t{e.app.threads}-n{e.app.size}"
        for core, counts in (("big", dict(e.big_pmu)), ("little", dict(e.little_pmu))):
            instructions = counts.get(INSTRUCTIONS, 0.0)
            if instructions <= 0:
                continue
            row: dict[str, object] = {"program": e.app.program, "app": app, "core": core}
            for name in NAMES:
                if name != INSTRUCTIONS:
                    row[rate_name(name)] = (
                        counts[name] / instructions if name in counts else math.nan
                    )
            row["speedup"] = e.speedup
            row["eef"] = e.speedup / e.big_epi_nj if e.big_epi_nj else math.nan
            rows.append(row)
    if not rows:
        raise AmpkitError(
            "the profile has no PMU counts to train on",
            "profile with counting on ('ampkit profile', which counts unless --no-pmu), "
            "on an engine whose PMU counts events (gem5)",
        )
    return pd.DataFrame(rows)


def _fits_pmu(events: Sequence[str]) -> bool:
    """Whether a model reading these rates counts its events in one group:
    INST_RETIRED and these in the event counters, CPU_CYCLES in the cycle
    counter."""
    return fits([INSTRUCTIONS, *(e.removesuffix(f"/{INSTRUCTIONS}") for e in events)])


def _pcr_weights(x: pd.DataFrame, y: pd.Series) -> pd.Series:
    """Each column's coefficient, in standard units, in a principal-component
    regression of y on x (the components keeping VARIANCE of x's)."""
    components = VARIANCE if len(x.columns) > 1 else None
    pcr = make_pipeline(
        StandardScaler(), PCA(n_components=components, svd_solver="full"), LinearRegression()
    )
    pcr.fit(x.to_numpy(), y.to_numpy())
    pca: PCA = pcr.named_steps["pca"]
    regression: LinearRegression = pcr.named_steps["linearregression"]
    return pd.Series(np.abs(pca.components_.T @ regression.coef_), index=x.columns)


def _degenerate(x: pd.DataFrame) -> bool:
    """Whether one of the columns is a combination of the others (as
    MEM_ACCESS is of LD_RETIRED and ST_RETIRED): a regression on them all
    has no single answer, and one of them would take a counter for
    nothing."""
    standard = StandardScaler().fit_transform(x.to_numpy(dtype=float))
    singular = np.linalg.svd(standard, compute_uv=False)
    return bool(singular.size and singular.min() <= 1e-9 * singular.max())


def _candidates(x: pd.DataFrame, y: pd.Series) -> list[str]:
    """The rates (columns of x) worth choosing from: without those constant
    over the data or repeating another (of two, the one closer to y stays)."""
    present = [str(c) for c in x.columns if x[c].notna().all() and float(x[c].std()) > 0]
    values = x[present].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.abs(np.atleast_2d(np.corrcoef(values, rowvar=False)))
        closeness = np.nan_to_num(
            [
                abs(np.corrcoef(values[:, i], y.to_numpy(dtype=float))[0, 1])
                for i in range(len(present))
            ]
        )
    kept_at: list[int] = []
    for i in sorted(range(len(present)), key=lambda i: -closeness[i]):
        if all(corr[i, k] < REDUNDANT for k in kept_at):
            kept_at.append(i)
    kept = {present[i] for i in kept_at}
    return [str(c) for c in x.columns if c in kept]


def _choices(
    x: pd.DataFrame, y: pd.Series, limits: Sequence[int | None]
) -> dict[int | None, list[str]]:
    """select_events() for each of ``limits`` at once. The events fall one
    at a time, the smallest principal-component weight first, whatever the
    limit: each limit takes the first set on that path that it admits."""
    events = _candidates(x, y)
    most = {limit: min(limit if limit is not None else len(events), len(x) - 2) for limit in limits}
    chosen: dict[int | None, list[str]] = {}
    while events and len(chosen) < len(most):
        admissible = _fits_pmu(events) and not _degenerate(x[events])
        for limit, bound in most.items():
            if limit not in chosen and admissible and len(events) <= bound:
                chosen[limit] = list(events)
        if len(chosen) < len(most):
            weights = _pcr_weights(x[events], y)
            events.remove(str(weights.idxmin()))
    for limit in most:
        if limit not in chosen:
            raise AmpkitError(
                f"no event to predict by: {len(x)} rows, {len(_candidates(x, y))} rates that vary",
                "profile more programs (a regression needs more of them than events)",
            )
    return chosen


def select_events(x: pd.DataFrame, y: pd.Series, limit: int | None = None) -> list[str]:
    """The rates (columns of x) to predict y by: without those constant over
    the data or repeating another, then by principal-component weight until
    none is a combination of the others, they fit the PMU, and they number
    at most ``limit`` and fewer than the rows less one (a regression needs
    more rows than inputs)."""
    return _choices(x, y, [limit])[limit]


@dataclass(frozen=True)
class Model:
    target: str  # "speedup" or "eef"
    core: str  # the core type whose counts it reads
    engine: str
    events: tuple[str, ...]  # rate names (rate_name())
    intercept: float
    coefficients: tuple[float, ...]
    provenance: tuple[tuple[str, str], ...] = ()
    source: Path | None = None

    def predict(self, rates: Mapping[str, float]) -> float:
        """The target for a thread whose rates (rate_name() -> value) were
        read on this model's core type."""
        missing = [e for e in self.events if e not in rates]
        if missing:
            raise AmpkitError(f"rates lack {', '.join(missing)}: the model reads them")
        return self.intercept + sum(
            c * rates[e] for c, e in zip(self.coefficients, self.events, strict=True)
        )

    @property
    def machine(self) -> str:
        return dict(self.provenance).get("model_sha256", "")

    def render(self) -> str:
        lines = [
            "# ampkit speedup model: target = intercept + sum(coefficient x rate), each",
            "# rate an event per instruction read on the core type below",
            f'kind = "{KIND}"',
            f"version = {VERSION}",
            f'target = "{self.target}"',
            f'core = "{self.core}"',
            f"engine = {json.dumps(self.engine)}",
            f"events = {json.dumps(list(self.events))}",
            f"intercept = {self.intercept!r}",
            f"coefficients = {json.dumps(list(self.coefficients))}",
        ]
        lines += provenance_lines(self.provenance)
        return "\n".join(lines) + "\n"


#: an event earns its counter when it lowers the held-out error by more
#: than this share of it
GAIN = 0.01
#: the event limits choose_limit() tries: one to what the PMU holds
#: (CPU_CYCLES has a counter of its own)
LIMITS = tuple(range(1, EVENT_BUDGET + 2))


def _rates(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[[rate_name(n) for n in NAMES if n != INSTRUCTIONS]]


def choose_limit(frame: pd.DataFrame, core: str, target: str) -> int:
    """How many events a model of ``target`` from ``core``'s rates should
    read, by these rows alone: the fewest at which leaving one program out
    errs least (mean |error|, within GAIN of the least), from one to what
    the PMU holds. One where the rows have too few programs to leave one
    out of a training set (four): the fewest, since more extrapolate worse.

    More events fit the training programs better and extrapolate worse to
    a program unlike them; with a few programs the second wins early
    (calibration/model/README.md of the gem5 evaluation)."""
    rows = frame[(frame["core"] == core) & frame[target].notna()].reset_index(drop=True)
    if rows["program"].nunique() < 4:
        return LIMITS[0]
    errors: dict[int, list[float]] = {limit: [] for limit in LIMITS}
    for train, test in LeaveOneGroupOut().split(rows, groups=rows["program"]):
        x, y = _rates(rows.iloc[train]), rows.iloc[train][target]
        held_out = rows.iloc[test]
        for limit, events in _choices(x, y, LIMITS).items():
            assert limit is not None
            regression = LinearRegression().fit(x[events].to_numpy(), y.to_numpy())
            predicted = regression.predict(held_out[events].to_numpy())
            errors[limit] += list(np.abs(predicted / held_out[target].to_numpy() - 1))
    mean = {limit: float(np.mean(e)) for limit, e in errors.items()}
    lowest = min(mean.values())
    return min(limit for limit in LIMITS if mean[limit] <= lowest * (1 + GAIN) + 1e-6)


def fit(frame: pd.DataFrame, core: str, target: str, limit: int | None = None) -> Model:
    """The model of ``target`` from ``core``'s rates in a training frame,
    reading at most ``limit`` events (None: as many as choose_limit() finds
    best on the frame)."""
    rows = frame[(frame["core"] == core) & frame[target].notna()]
    if rows["program"].nunique() < 2:
        raise AmpkitError(
            f"{target} from {core} counts: {rows['program'].nunique()} program(s) to train on",
            "profile more programs",
        )
    if limit is None:
        limit = choose_limit(rows, core, target)
    x = _rates(rows)
    y = rows[target]
    events = select_events(x, y, limit)
    regression = LinearRegression().fit(x[events].to_numpy(), y.to_numpy())
    return Model(
        target=target,
        core=core,
        engine="",
        events=tuple(events),
        intercept=float(regression.intercept_),
        coefficients=tuple(float(c) for c in regression.coef_),
    )


def validate(frame: pd.DataFrame, core: str, target: str, limit: int | None = None) -> pd.DataFrame:
    """Leave one program out: for each program, the model trained on the
    others (events chosen again, and with ``limit`` None their number too,
    by the others alone) predicting its applications. One row per
    application: program, app, core, target, measured, predicted, error
    (predicted / measured - 1), the events that fold chose, and what
    predicting the others' mean would have erred (mean_error): a model
    earns its counters only where it does better than that."""
    rows = frame[(frame["core"] == core) & frame[target].notna()].reset_index(drop=True)
    out = []
    for train, test in LeaveOneGroupOut().split(rows, groups=rows["program"]):
        model = fit(rows.iloc[train], core, target, limit)
        mean = float(rows.iloc[train][target].mean())
        for _, r in rows.iloc[test].iterrows():
            predicted = model.predict({e: float(r[e]) for e in model.events})
            out.append(
                {
                    "program": r["program"],
                    "app": r["app"],
                    "core": core,
                    "target": target,
                    "measured": float(r[target]),
                    "predicted": predicted,
                    "error": predicted / float(r[target]) - 1,
                    "events": " ".join(model.events),
                    "mean_error": mean / float(r[target]) - 1,
                }
            )
    return pd.DataFrame(out)


def held_out_errors(check: pd.DataFrame) -> pd.DataFrame:
    """Per target and core type of a validation (validate()): the mean
    |error| of the model on the programs it did not see, that of the other
    programs' mean, and whether the model did better (``earns``): where it
    did not, nothing shows that the counts predict the target."""
    rows = []
    for (target, core), g in check.groupby(["target", "core"], sort=False):
        model, mean = float(g["error"].abs().mean()), float(g["mean_error"].abs().mean())
        rows.append(
            {"target": target, "core": core, "model": model, "mean": mean, "earns": model < mean}
        )
    return pd.DataFrame(rows)


def train(profile: Profile, limit: int | None = None) -> tuple[list[Model], pd.DataFrame]:
    """Every model the profile's data allow (speedup from each core type;
    EEF too where it has the big cluster's energy), with provenance, and
    their leave-one-program-out validation."""
    frame = training_frame(profile)
    if profile.source is not None:
        profile_sha = hashlib.sha256(profile.source.read_bytes()).hexdigest()
    else:
        profile_sha = ""
    models, checks = [], []
    for target in TARGETS:
        for core in CORES:
            rows = frame[(frame["core"] == core) & frame[target].notna()]
            if rows.empty:
                continue
            if rows["program"].nunique() < 3:
                raise AmpkitError(
                    f"{target} from {core} counts: {rows['program'].nunique()} program(s); "
                    "leaving one out needs three at least",
                    "profile more programs",
                )
            check = validate(frame, core, target, limit)
            model = fit(frame, core, target, limit)
            provenance = {
                **dict(profile.provenance),
                "profile_sha256": profile_sha,
                "programs": " ".join(sorted(rows["program"].unique())),
                "events_limit": (
                    str(limit) if limit is not None else "chosen by leaving one program out"
                ),
                "lopo_mean_abs_error": f"{check['error'].abs().mean():.4f}",
                "lopo_max_abs_error": f"{check['error'].abs().max():.4f}",
                "lopo_mean_abs_error_of_the_mean": f"{check['mean_error'].abs().mean():.4f}",
            }
            models.append(
                Model(
                    target=target,
                    core=core,
                    engine=profile.engine,
                    events=model.events,
                    intercept=model.intercept,
                    coefficients=model.coefficients,
                    provenance=tuple(provenance.items()),
                )
            )
            checks.append(check)
    return models, pd.concat(checks, ignore_index=True)


_TOP_KEYS = (
    "kind",
    "version",
    "target",
    "core",
    "engine",
    "events",
    "intercept",
    "coefficients",
    "provenance",
)


def load_model(
    path: Path,
    *,
    core: str | None = None,
    target: str | None = None,
    engine: str | None = None,
    machine: str | None = None,
) -> Model:
    """A model file, refused with what does not match when it is for
    another core type, target, engine or machine model (gem5's calibrated
    cores: ampkit.calibration.model_sha256(); one configs/machine-models.toml
    shows to build the same machine is this one), or reads events the kit does
    not count or the PMU cannot hold at once."""
    if not path.is_file():
        raise AmpkitError(f"cannot read the speedup model {path}: no such file", _HINT)
    toml = TomlFile(path)
    for key, wanted in (("kind", KIND), ("version", VERSION)):
        if toml.get((key,)) != wanted:
            toml.fail((key,), f"must be {wanted!r}: not a speedup model's", _HINT)
    toml.only_keys((), _TOP_KEYS, "a model key")
    events = toml.strings(("events",), non_empty=True)
    known = [rate_name(n) for n in NAMES if n != INSTRUCTIONS]
    for e in events:
        if e not in known:
            toml.fail(("events",), f"has {e!r}, which is not a rate the kit counts", _HINT)
    if not _fits_pmu(events):
        toml.fail(
            ("events",),
            f"reads {len(events)} events: more than the PMU's {COUNTERS} counters hold "
            f"beside {INSTRUCTIONS}",
            _HINT,
        )
    if len(set(events)) != len(events):
        toml.fail(("events",), "names an event twice", _HINT)
    coefficients = toml.get(("coefficients",))
    if (
        not isinstance(coefficients, list)
        or len(coefficients) != len(events)
        or not all(
            isinstance(c, int | float)
            and not isinstance(c, bool)
            # finite and not subnormal: what the guest's strtod reads back (online.c)
            and math.isfinite(c)
            and (c == 0 or abs(c) >= sys.float_info.min)
            for c in coefficients
        )
    ):
        toml.fail(("coefficients",), f"must be {len(events)} finite numbers, one per event", _HINT)
    intercept = toml.get(("intercept",))
    if (
        not isinstance(intercept, int | float)
        or isinstance(intercept, bool)
        or not math.isfinite(intercept)
    ):
        toml.fail(("intercept",), "must be a number", _HINT)
    provenance = toml.get(("provenance",)) or {}
    if not isinstance(provenance, dict) or not all(isinstance(v, str) for v in provenance.values()):
        toml.fail(("provenance",), "must be a table of strings", _HINT)
    model = Model(
        target=toml.string(("target",), choices=TARGETS),
        core=toml.string(("core",), choices=CORES),
        engine=toml.string(("engine",), default=""),
        events=tuple(events),
        intercept=float(intercept),
        coefficients=tuple(float(c) for c in coefficients),
        provenance=tuple(provenance.items()),
        source=path,
    )
    asked = {"core": core, "target": target, "engine": engine, "machine": machine}
    found = {
        "core": model.core,
        "target": model.target,
        "engine": model.engine,
        "machine": model.machine,
    }
    mismatched = [
        f"{what} {found[what] or 'unrecorded'}, not {value}"
        for what, value in asked.items()
        if value is not None
        and found[what] != value
        and not (what == "machine" and found[what] and same_machine(found[what], value))
    ]
    if mismatched:
        raise AmpkitError(
            f"{path}: a model for another setup: {'; '.join(mismatched)}",
            "train one from a profile of this setup ('ampkit model train')",
        )
    return model


def plot_validation(check: pd.DataFrame, path: Path) -> None:
    """Predicted against measured per application, one panel per model, the
    diagonal where they agree (the form of WASH's figure 6)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(check.groupby(["target", "core"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
    for ax, ((target, core), rows) in zip(axes[0], panels, strict=True):
        low = float(min(rows["measured"].min(), rows["predicted"].min())) * 0.9
        high = float(max(rows["measured"].max(), rows["predicted"].max())) * 1.1
        ax.plot([low, high], [low, high], color="grey", linewidth=0.8)
        ax.scatter(rows["measured"], rows["predicted"], s=18)
        for _, r in rows.iterrows():
            ax.annotate(str(r["app"]), (r["measured"], r["predicted"]), fontsize=6)
        error = rows["error"].abs().mean()
        ax.set_title(f"{target} from {core} counts: mean |error| {error:.1%}", fontsize=9)
        ax.set_xlabel(f"measured {target}")
        ax.set_ylabel(f"predicted, {target} left out")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
