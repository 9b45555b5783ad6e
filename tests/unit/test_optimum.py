"""Saez et al.'s analytical model (analysis/optimum.py): the paper's own
workloads, hand-worked cases, and the optima against every schedule of the
paper's 0.01 grid and against random schedules."""

import itertools
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ampkit.analysis import optimum
from ampkit.analysis.optimum import AppModel
from ampkit.errors import AmpkitError

pytestmark = pytest.mark.unit

#: Saez et al., Table 1 (ARM Juno, Cortex-A57 big and A53 little cores):
#: name: (IPC_big, SF, EPI_big nJ, EPI_little nJ). SF is the IPC ratio
#: there, so IPC stands for IPS.
JUNO = {
    "A1": (0.60, 2.47, 1.59, 1.86),
    "A2": (0.58, 1.86, 1.40, 1.10),
    "A3": (1.49, 2.02, 0.61, 0.45),
    "A4": (0.80, 3.07, 1.31, 1.45),
    "A5": (1.30, 3.16, 0.82, 0.91),
    "A6": (2.01, 2.91, 0.51, 0.49),
    "A7": (1.09, 1.79, 0.75, 0.54),
    "A8": (1.07, 1.70, 0.78, 0.56),
    "A9": (1.83, 1.96, 0.51, 0.37),
    "A10": (2.80, 2.69, 0.42, 0.36),
    "A11": (0.18, 2.02, 3.98, 4.44),
    "A12": (1.28, 2.17, 0.85, 0.65),
    "A13": (1.42, 2.01, 0.60, 0.47),
    "A14": (1.77, 2.27, 0.54, 0.41),
    "A15": (1.15, 2.19, 0.85, 0.66),
    "A16": (0.52, 2.53, 1.68, 1.86),
    "A17": (0.25, 2.24, 3.11, 3.34),
    "A18": (1.73, 2.41, 0.56, 0.45),
    "A19": (1.63, 2.56, 0.66, 0.54),
}
#: Table 2: the workloads of figure 1, four applications on two big and two
#: little CPUs.
WORKLOADS = {
    "W1": ("A5", "A4", "A6", "A10"),
    "W2": ("A16", "A17", "A13", "A9"),
    "W3": ("A16", "A1", "A18", "A14"),
    "W4": ("A5", "A4", "A10", "A15"),
    "W5": ("A5", "A4", "A6", "A12"),
    "W6": ("A1", "A12", "A3", "A13"),
    "W7": ("A1", "A17", "A7", "A8"),
    "W8": ("A15", "A11", "A13", "A2"),
    "W9": ("A4", "A11", "A3", "A8"),
    "W10": ("A10", "A19", "A16", "A9"),
}


#: Table 3 (Odroid XU4, Cortex-A15 big and A7 little), B1-B13 in its order.
ODROID = {
    "B1": (0.76, 2.05, 4.53, 1.70),
    "B2": (2.46, 2.47, 1.54, 0.54),
    "B3": (0.54, 2.83, 6.32, 3.30),
    "B4": (1.68, 2.21, 2.02, 0.69),
    "B5": (3.08, 2.97, 1.31, 0.57),
    "B6": (0.29, 3.52, 10.57, 7.94),
    "B7": (2.53, 3.44, 1.86, 0.94),
    "B8": (2.45, 2.45, 1.46, 0.51),
    "B9": (2.80, 2.68, 1.36, 0.54),
    "B10": (2.15, 2.90, 1.91, 0.62),
    "B11": (1.90, 3.92, 1.90, 1.01),
    "B12": (0.62, 3.29, 5.71, 3.46),
    "B13": (0.75, 3.21, 4.89, 2.93),
}
#: Table 4: the workloads of figure 2.
ODROID_WORKLOADS = {
    "X1": ("B6", "B12", "B5", "B2"),
    "X2": ("B12", "B3", "B9", "B8"),
    "X3": ("B11", "B6", "B5", "B3"),
    "X4": ("B11", "B6", "B5", "B1"),
    "X5": ("B10", "B3", "B9", "B8"),
    "X6": ("B7", "B13", "B5", "B9"),
    "X7": ("B11", "B6", "B7", "B5"),
    "X8": ("B11", "B6", "B5", "B10"),
    "X9": ("B11", "B3", "B9", "B4"),
    "X10": ("B6", "B7", "B5", "B4"),
}


def models(
    table: dict[str, tuple[float, float, float, float]], names: tuple[str, ...]
) -> list[AppModel]:
    return [
        AppModel(name, speedup=sf, ips_big=ipc, epi_big_nj=big, epi_little_nj=little)
        for name in names
        for ipc, sf, big, little in [table[name]]
    ]


def juno(workload: str) -> list[AppModel]:
    return models(JUNO, WORKLOADS[workload])


def by_name(found: list[optimum.Point]) -> dict[str, optimum.Point]:
    return {p.scheduler: p for p in found}


def grid(n: int, on_big: int, step: float = 0.01) -> np.ndarray:
    """Every schedule of the paper's search: each F_i in steps of 0.01, the
    last one what the others leave of on_big."""
    g = np.round(np.arange(0, 1 + step / 2, step), 10)
    free = np.array(np.meshgrid(*[g] * (n - 1), indexing="ij")).reshape(n - 1, -1).T
    last = on_big - free.sum(axis=1)
    keep = (last >= -1e-9) & (last <= 1 + 1e-9)
    return np.hstack([free[keep], last[keep, None]])


def test_eef_driven_is_opt_edp_on_the_papers_workloads_but_two() -> None:
    """Section 2.5: EEF-Driven makes the big-core distribution of Opt-EDP in
    most of Table 2's workloads, and differs in W9 and W10, where its EDP is
    at most 4% above the optimum's; in W9 Opt-EDP gives up 44% of HSP's ASP.
    The model gives exactly those two, 3.9% and 3.3%, and 44.3%. (Where it
    and the text part, HSP's EDP excess and W7's ASP loss: analysis/README.md
    and the next test.) In W9, A11 and A3 have the same SF: HSP takes A11,
    listed first, and so matches EEF-Driven; with A3 its EDP excess would be
    3.9%, not 20.6%, at the same ASP."""
    differ = {}
    for workload in WORKLOADS:
        found = by_name(optimum.points(juno(workload), 2, 2))
        best, eef = found["Opt-EDP"], found["EEF-Driven"]
        assert eef.edp >= best.edp * (1 - 1e-12)
        if eef.big_fraction != best.big_fraction:
            differ[workload] = eef.edp / best.edp - 1
    assert set(differ) == {"W9", "W10"}, differ
    assert max(differ.values()) == pytest.approx(0.04, abs=0.002)
    w9 = by_name(optimum.points(juno("W9"), 2, 2))
    assert 1 - w9["Opt-EDP"].asp / w9["HSP"].asp == pytest.approx(0.44, abs=0.005)
    # HSP, throughput's optimum in this model: no schedule has more ASP
    for workload in WORKLOADS:
        every = optimum.points(juno(workload), 2, 2)
        assert max(p.asp for p in every) == pytest.approx(by_name(every)["HSP"].asp)


def test_the_odroid_workloads_and_the_order_of_both_tables() -> None:
    """Section 2.5 on Table 4: EEF-Driven makes Opt-EDP's distribution in
    every one of X1-X10. The text puts HSP's EDP up to 22% (Table 2) and 65%
    (Table 4) above the optimum; eq. 7-9 give 37.0% (W1) and 67% (X1). Both
    tables list their workloads in decreasing order of that excess under
    eq. 7-9 (W1-W8, the eight where EEF-Driven is optimal; X1-X10), which
    suggests the figures were drawn from eq. 7-9 and the two numbers in the
    text slipped. W7's Opt-EDP gives up 45.0% of HSP's ASP, where the text
    names W9's, 44.3%, as the largest loss."""

    def excess(found: dict[str, optimum.Point]) -> float:
        return found["HSP"].edp / found["Opt-EDP"].edp - 1

    odroid = {
        x: by_name(optimum.points(models(ODROID, a), 2, 2)) for x, a in ODROID_WORKLOADS.items()
    }
    for found in odroid.values():
        assert found["EEF-Driven"].big_fraction == found["Opt-EDP"].big_fraction
    table4 = [excess(found) for found in odroid.values()]
    assert table4 == sorted(table4, reverse=True)
    assert table4[0] == pytest.approx(0.67, abs=0.005)
    juno_found = {w: by_name(optimum.points(juno(w), 2, 2)) for w in WORKLOADS}
    table2 = [excess(juno_found[f"W{i}"]) for i in range(1, 9)]
    assert table2 == sorted(table2, reverse=True)
    assert table2[0] == pytest.approx(0.370, abs=0.0005)
    w7 = juno_found["W7"]
    assert 1 - w7["Opt-EDP"].asp / w7["HSP"].asp == pytest.approx(0.450, abs=0.0005)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_the_optima_beat_every_schedule_of_the_papers_grid(workload: str) -> None:
    apps = juno(workload)
    found = by_name(optimum.points(apps, 2, 2))
    schedules = grid(4, 2)
    sf = np.array([a.speedup for a in apps])
    ips = np.array([a.ips_big for a in apps])
    big = np.array([a.epi_big_nj for a in apps])
    little = np.array([a.epi_little_nj for a in apps])
    speed = 1 / sf + schedules * (1 - 1 / sf)
    unfair = speed.max(axis=1) / speed.min(axis=1)
    power = schedules * ips * big + (1 - schedules) * ips / sf * little
    edp = optimum.DEFAULT_SECONDS * power.sum(axis=1) / (ips * speed).sum(axis=1)
    assert found["Opt-EDP"].edp <= edp.min() * (1 + 1e-12)
    assert found["Opt-Unf"].unfairness <= unfair.min() * (1 + 1e-9)
    # these four can be slowed down alike (F_i below 1 each, summing to 2;
    # not every four can: SF 1.1 beside three of 10 cannot); the grid only
    # comes within 1%
    assert found["Opt-Unf"].unfairness == pytest.approx(1.0, abs=1e-7)
    # the grid's own check of the point found: eq. 1-9 agree
    again = optimum.evaluate(apps, found["Opt-Unf"].big_fraction)
    assert again.asp == pytest.approx(found["Opt-Unf"].asp)


def test_two_applications_by_hand() -> None:
    """SF 2 and 3 on one big and one little CPU. Equal slowdowns: w = 1/2 +
    F/2 = 1/3 + (2/3)(1 - F) gives F = 3/7, w = 5/7, slowdown 1.4 each, ASP
    2(5/7) - 1 + 3(5/7) - 1 = 11/7. HSP puts the SF 3 one on the big CPU:
    slowdowns 2 and 1, ASP 0 + 2.

    EDP with IPS_big 1: the SF 2 one on big, EPI 1 there and 0.5 on little;
    the SF 3 one, EPI 3 on big and 0.5 on little. First on big: power 1 +
    (1/3)(0.5) = 7/6 over IPS 1 + 1/3, EDP/T = 0.875; second on big: power
    (1/2)(0.5) + 3 = 13/4 over 3/2, EDP/T = 13/6. EEF: 2/1 against 3/3."""
    apps = [AppModel("a", 2.0, 1.0, 1.0, 0.5), AppModel("b", 3.0, 1.0, 3.0, 0.5)]
    found = by_name(optimum.points(apps, 1, 1, seconds=1.0))
    fair = found["Opt-Unf"]
    assert fair.big_fraction == pytest.approx((3 / 7, 4 / 7))
    assert fair.slowdowns == pytest.approx((1.4, 1.4))
    assert fair.asp == pytest.approx(11 / 7)
    assert fair.unfairness == pytest.approx(1.0)
    assert found["HSP"].big_fraction == (0.0, 1.0)
    assert found["HSP"].slowdowns == pytest.approx((2.0, 1.0))
    assert found["HSP"].asp == pytest.approx(2.0)
    assert found["HSP"].edp == pytest.approx(13 / 6)
    assert found["Opt-EDP"].big_fraction == (1.0, 0.0)
    assert found["Opt-EDP"].edp == pytest.approx(0.875)
    assert found["EEF-Driven"].big_fraction == (1.0, 0.0)


def test_when_slowdowns_cannot_be_equal() -> None:
    """An application the big CPU does not speed up (SF 1) runs at its
    alone speed whatever it gets; two of SF 3 share the one big CPU. The
    fairest schedule gives them half each, slowdown 3 / (1 + 2 x 0.5) = 1.5,
    against 1: unfairness 1.5, not 1. A big CPU given to the SF 1 one
    would only slow the others more."""
    apps = [AppModel(n, sf, 1.0, 1.0, 1.0) for n, sf in (("flat", 1.0), ("x", 3.0), ("y", 3.0))]
    fair = by_name(optimum.points(apps, 1, 2))["Opt-Unf"]
    assert fair.big_fraction == pytest.approx((0.0, 0.5, 0.5), abs=1e-7)
    assert fair.unfairness == pytest.approx(1.5)


def test_a_big_cpu_each_leaves_nothing_to_choose() -> None:
    apps = [AppModel("a", 2.0, 1.0, 1.0, 0.5), AppModel("b", 3.0, 1.0, 3.0, 0.5)]
    for point in optimum.points(apps, 2, 2):
        assert point.big_fraction == (1.0, 1.0)
        assert point.slowdowns == (1.0, 1.0)
        assert point.asp == pytest.approx(1.0 + 2.0)


def test_the_table_is_tidy() -> None:
    apps = juno("W1")
    found = optimum.points(apps, 2, 2)
    frame = optimum.table(apps, found)
    assert list(frame.columns) == [
        "scheduler",
        "application",
        "big_fraction",
        "slowdown",
        "asp",
        "unfairness",
        "edp",
    ]
    assert len(frame) == 4 * 4
    assert list(frame["scheduler"].unique()) == list(optimum.SCHEDULERS)
    sums = frame.groupby("scheduler")["big_fraction"].sum()
    assert sums.to_numpy() == pytest.approx([2.0] * 4)


apps_strategy = st.lists(
    st.tuples(
        st.floats(0.6, 5.0),  # SF, some below 1
        st.floats(0.1, 3.0),  # IPS on big
        st.floats(0.2, 5.0),  # EPI big
        st.floats(0.2, 5.0),  # EPI little
    ),
    min_size=2,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(apps_strategy, st.integers(1, 5), st.randoms(use_true_random=False))
def test_no_schedule_beats_the_optima(
    raw: list[tuple[float, float, float, float]], n_big: int, rng: random.Random
) -> None:
    """Random workloads and random feasible schedules (convex combinations of
    the corners, which are every feasible schedule): none has less EDP than
    Opt-EDP or less unfairness than Opt-Unf, and every point is feasible."""
    apps = [AppModel(f"p{i}", *values) for i, values in enumerate(raw)]
    n = len(apps)
    n_big = min(n_big, n)
    found = by_name(optimum.points(apps, n_big, n))
    for point in found.values():
        assert sum(point.big_fraction) == pytest.approx(n_big)
        assert all(-1e-9 <= f <= 1 + 1e-9 for f in point.big_fraction)
    corners = [
        np.array([1.0 if i in chosen else 0.0 for i in range(n)])
        for chosen in itertools.combinations(range(n), n_big)
    ]
    for _ in range(40):
        weights = np.array([rng.random() for _ in corners]) ** 3 + 1e-6
        schedule = sum(w * c for w, c in zip(weights / weights.sum(), corners, strict=True))
        other = optimum.evaluate(apps, np.clip(schedule, 0, 1))
        assert found["Opt-EDP"].edp <= other.edp * (1 + 1e-9)
        assert found["Opt-Unf"].unfairness <= other.unfairness * (1 + 1e-7)
        assert found["HSP"].asp >= other.asp - 1e-9


def test_bad_input_says_what_to_change() -> None:
    ok = AppModel("a", 2.0, 1.0, 1.0, 0.5)
    with pytest.raises(AmpkitError, match="3 applications on 2 CPUs"):
        optimum.points([ok, AppModel("b", 2, 1, 1, 1), AppModel("c", 2, 1, 1, 1)], 1, 1)
    with pytest.raises(AmpkitError, match="epi_little_nj = 0"):
        optimum.points([AppModel("a", 2.0, 1.0, 1.0, 0.0)], 1, 1)
    with pytest.raises(AmpkitError, match="speedup = nan"):
        optimum.points([AppModel("a", math.nan, 1.0, 1.0, 1.0)], 1, 1)
    with pytest.raises(AmpkitError, match="named twice"):
        optimum.points([ok, ok], 1, 1)
    with pytest.raises(AmpkitError, match="one fraction in \\[0, 1\\]"):
        optimum.evaluate([ok], [1.5])


def _profile_and_mix(tmp_path: Path, *, little_epi: bool = True) -> tuple[Path, Path]:
    from ampkit.mix import App
    from ampkit.profile import Entry, Profile

    def entry(program: str, speedup: float, inst: float, big: float, little: float) -> Entry:
        return Entry(
            app=App(program, 1, 1000),
            big_ns=(10**8,),
            little_ns=(round(10**8 * speedup),),
            big_pmu=(("INST_RETIRED", inst),),
            little_pmu=(("INST_RETIRED", inst),),
            big_epi_nj=big,
            little_epi_nj=little if little_epi else None,
        )

    # the hand-worked pair of test_two_applications_by_hand, at 1e8 per second
    profile = Profile(
        engine="gem5",
        cpus=1,
        entries=(entry("compute", 2.0, 1e7, 1.0, 0.5), entry("stream", 3.0, 1e7, 3.0, 0.5)),
    )
    (tmp_path / "speedups.toml").write_text(profile.render())
    (tmp_path / "pair.toml").write_text(
        'description = "two single-threaded programs"\ncategory = "compute"\n'
        '\n[[app]]\nprogram = "compute"\nthreads = 1\nsize = 1000\n'
        '\n[[app]]\nprogram = "stream"\nthreads = 1\nsize = 1000\n'
    )
    return tmp_path / "speedups.toml", tmp_path / "pair.toml"


def test_the_command_gives_the_four_schedules_of_a_profiled_mix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    from ampkit.cli import main

    speedups, mix = _profile_and_mix(tmp_path)
    out = tmp_path / "optimum.csv"
    args = ["mix", "optimum", str(mix), "--platform", "1B1L", "--speedups", str(speedups)]
    assert main([*args, "--seconds", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pair on 1B1L" in printed and "Opt-EDP" in printed, printed
    frame = pd.read_csv(out)
    fair = frame[frame["scheduler"] == "Opt-Unf"]
    assert fair["big_fraction"].to_numpy() == pytest.approx([3 / 7, 4 / 7])
    edp = frame[frame["scheduler"] == "Opt-EDP"]
    assert edp["big_fraction"].to_numpy() == pytest.approx([1.0, 0.0])
    assert edp["edp"].iloc[0] == pytest.approx(0.875)


def test_the_command_lists_every_input_the_profile_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ampkit.cli import main
    from ampkit.errors import EXIT_INPUT

    speedups, mix = _profile_and_mix(tmp_path, little_epi=False)
    args = ["mix", "optimum", str(mix), "--platform", "1B1L", "--speedups", str(speedups)]
    assert main(args) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "compute t1 n1000: no little_epi_nj" in err, err
    assert "stream t1 n1000: no little_epi_nj" in err, err
    assert main(["mix", "optimum", "comm2-pipeline-barrier", *args[3:]]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "pipeline t3" in err and "3 threads (the model's have one)" in err, err


def test_the_report_puts_each_policys_schedule_beside_the_models(tmp_path: Path) -> None:
    """Two single-threaded programs on 1B1L, the hand-worked pair above: cfs
    left x on the little CPU and y on the big one (HSP's schedule), colab
    split both halves. The report reads each measured schedule with the
    model beside the four analytical ones, and leaves out a mix with a
    two-thread application, saying why."""
    from ampkit.analysis.collect import collect
    from ampkit.analysis.report import write_report
    from ampkit.analysis.synthetic import SynthApp, write_run

    runs = tmp_path / "runs"
    ms = 10**6
    half = {"big_ns": 20 * ms, "little_ns": 20 * ms}
    schedules = {
        "cfs": ({"big_ns": 0, "little_ns": 40 * ms}, {"big_ns": 40 * ms, "little_ns": 0}),
        "colab": (half, half),
        # on the big CPU both, each when the other was not running: no
        # work-conserving schedule of one big CPU has that
        "wash": ({"big_ns": 40 * ms, "little_ns": 0}, {"big_ns": 40 * ms, "little_ns": 0}),
    }
    for policy, (x, y) in schedules.items():
        for repetition in (0, 1):
            write_run(
                runs,
                platform="1B1L",
                policy=policy,
                mix="pair",
                repetition=repetition,
                apps=[
                    SynthApp("x", 1, 50 * ms, tasks=[{"comm": "x", **x}]),
                    SynthApp("y", 1, 40 * ms, tasks=[{"comm": "y", **y}]),
                ],
            )
        write_run(
            runs,
            platform="1B1L",
            policy=policy,
            mix="wide",
            apps=[SynthApp("x", 1, 50 * ms), SynthApp("z", 2, 40 * ms)],
        )
    for plat, factor in (("1B1L", 1), ("0B1L", 3)):
        for name in ("x", "y"):
            write_run(
                runs,
                platform=plat,
                policy="cfs",
                mix=f"alone-{name}",
                apps=[SynthApp(name, 1, factor * 20 * ms)],
            )
        write_run(
            runs, platform=plat, policy="cfs", mix="alone-z", apps=[SynthApp("z", 2, 20 * ms)]
        )
    keys = dict(collect(runs).apps[["app", "key"]].drop_duplicates().to_numpy())
    models = {
        keys["x"]: AppModel("x", 2.0, 1.0, 1.0, 0.5),
        keys["y"]: AppModel("y", 3.0, 1.0, 3.0, 0.5),
    }
    out = tmp_path / "report"
    report = write_report(runs, out, models=models)
    md = (out / "report.md").read_text()
    assert "## The analytical schedules (Saez et al.)" in md, md
    assert "wide on 1B1L (z#0: 2 threads)" in md, md
    table = pd.read_csv(out / "tables" / "optimum.csv").set_index("schedule")
    assert list(table.index) == [*optimum.SCHEDULERS, "cfs", "colab", "wash"]
    assert set(table["kind"]) == {"model", "measured"}
    assert list(table["in_model"]) == [True] * 6 + [False]
    assert table.loc["wash", "big_sum"] == pytest.approx(2.0)
    assert "x#0 1.00, y#0 1.00 (sum 2.00: not plotted)" in md, md
    # cfs ran HSP's schedule: the model reads it as HSP
    assert table.loc["cfs", "asp"] == pytest.approx(table.loc["HSP", "asp"])
    assert table.loc["cfs", "edp_vs_optimum"] == pytest.approx(52 / 21)  # (13/6) / (7/8)
    assert table.loc["Opt-EDP", "edp_vs_optimum"] == pytest.approx(1.0)
    assert table.loc["cfs", "runs"] == 2
    # each measured: the ASP the runs give (alone 60 ms on the little CPU)
    assert table.loc["cfs", "measured_asp"] == pytest.approx(60 / 50 - 1 + 60 / 40 - 1)
    fractions = pd.read_csv(out / "tables" / "optimum_fractions.csv")
    colab = fractions[fractions["schedule"] == "colab"]
    assert colab["big_fraction"].to_numpy() == pytest.approx([0.5, 0.5])
    assert report.plots["optimum-1B1L.png"] == 2 * 6  # two panels, six schedules, not wash
    # the measured EDP per instruction, against cfs's (no energy on qemu)
    assert "EDP/inst / cfs's (measured)" in md


def test_the_gem5_measurement_is_what_its_runs_give_and_says() -> None:
    """measurements/saez-model: the profile its archived runs give, and what
    its README reads from it: on both four-program mixes HSP, EEF-Driven and
    Opt-EDP make one schedule, and Opt-Unf evens out the slowdowns."""
    from ampkit.mix import load_mix
    from ampkit.paths import REPO_ROOT
    from ampkit.profile import Profile, from_runs, load_profile

    folder = REPO_ROOT / "measurements" / "saez-model"
    committed = load_profile(folder / "profile.toml")
    again = from_runs(folder / "runs")

    def measured(profile: Profile) -> list[tuple[str, int, float, float]]:
        return sorted(
            (e.app.program, e.app.size, round(e.speedup, 4), round(e.little_epi_nj or 0, 4))
            for e in profile.entries
        )

    # the file keeps four decimals of a speedup and six digits of an EPI
    assert measured(again) == measured(committed)
    for name in ("single4", "single4-dram"):
        apps = committed.model_inputs(load_mix(name))
        found = by_name(optimum.points(apps, 2, 2))
        assert found["HSP"].big_fraction == found["Opt-EDP"].big_fraction, name
        assert found["EEF-Driven"].big_fraction == found["Opt-EDP"].big_fraction, name
        assert found["Opt-Unf"].unfairness == pytest.approx(1.0, abs=1e-6)
