"""The metrics of DESIGN section 7: hand-worked examples and invariants."""

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ampkit.analysis import metrics
from ampkit.analysis.collect import collect
from ampkit.analysis.synthetic import SynthApp, write_run

pytestmark = pytest.mark.unit

#: Student's t quantiles, two-sided 95%, from published tables (to 13 digits).
T_2DF = 4.302652729696
T_31DF = 2.039513446396


def test_hand_worked_metrics() -> None:
    # Two applications: A took 2x its alone time, B exactly its alone time.
    s = [2.0, 1.0]
    assert metrics.h_antt(s) == pytest.approx((2.0 + 1.0) / 2)  # 1.5
    assert metrics.h_stp(s) == pytest.approx(1 / 2.0 + 1 / 1.0)  # 1.5
    assert metrics.unfairness(s) == pytest.approx(2.0 / 1.0)
    # A's threads ran 1 and 3 s: mean 2, population std 1, cv 0.5; B has one thread: cv 0.
    assert metrics.coefficient_of_variation([1.0, 3.0]) == pytest.approx(0.5)
    assert metrics.fairness([[1.0, 3.0], [5.0]]) == pytest.approx(1 - (0.5 + 0.0) / 2)
    # little-only alone 6 and 4 s, in the mix 3 and 4 s: (6/3 - 1) + (4/4 - 1) = 1
    assert metrics.asp([6.0, 4.0], [3.0, 4.0]) == pytest.approx(1.0)
    assert metrics.edp(2.0, 0.5) == pytest.approx(1.0)
    # 1, 2, 3: mean 2, sample std 1, t(0.975, 2 df) = 4.302653 -> that / sqrt(3)
    assert metrics.ci95([1.0, 2.0, 3.0]) == pytest.approx(T_2DF / math.sqrt(3))
    assert math.isnan(metrics.ci95([1.0]))
    assert metrics.geomean([1.0, 4.0]) == pytest.approx(2.0)


def _tables(
    mixed: list[tuple[str, list[int]]], alone: list[int], scale: int = 1
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """apps/threads tables: each (policy, turnarounds) a run of one mix, plus
    each application alone under cfs."""
    rows, threads = [], []
    for policy, times in mixed:
        run = f"{policy}-mix"
        for i, t in enumerate(times):
            rows.append(_row(run, policy, "mix", f"p{i}", t * scale))
            threads.append(_thread(run, f"p{i}", t * scale))
    for i, t in enumerate(alone):
        run = f"alone-p{i}"
        rows.append(_row(run, "cfs", f"alone-p{i}", f"p{i}", t * scale))
        threads.append(_thread(run, f"p{i}", t * scale))
    return pd.DataFrame(rows), pd.DataFrame(threads)


def _row(run: str, policy: str, mix: str, app: str, t: int) -> dict[str, object]:
    return {
        "engine": "qemu",
        "platform": "2B2L",
        "policy": policy,
        "mix": mix,
        "repetition": 0,
        "run": run,
        "app": app,
        "instance": 0,
        "key": f"{app}/1",
        "threads": 1,
        "turnaround_ns": t,
    }


def _thread(run: str, app: str, t: int) -> dict[str, object]:
    return {"run": run, "app": app, "instance": 0, "thread": 0, "wall_ns": t}


def test_compute_hand_worked() -> None:
    # alone 10 and 20; under cfs in the mix 20 and 20 (slowdowns 2, 1);
    # under colab 10 and 40 (slowdowns 1, 2).
    apps, threads = _tables([("cfs", [20, 20]), ("colab", [10, 40])], [10, 20])
    _, runs, summary, gm = metrics.compute(apps, threads)
    by = runs.set_index("policy")
    assert by.loc["cfs", "h_antt"] == pytest.approx(1.5)
    assert by.loc["colab", "h_stp"] == pytest.approx(1.5)
    assert by.loc["colab", "unfairness"] == pytest.approx(2.0)
    norm = summary.set_index(["policy", "metric"])["normalised"]
    assert norm[("cfs", "h_antt")] == 1.0
    assert norm[("colab", "h_antt")] == pytest.approx(1.0)
    g = gm.set_index(["policy", "metric"])["across_mixes"]
    assert g[("colab", "unfairness")] == pytest.approx(1.0)


def test_missing_reference_lists_the_runs_to_add() -> None:
    apps, threads = _tables([("cfs", [20, 20])], [10])  # p1 never ran alone
    with pytest.raises(metrics.MissingReference) as e:
        metrics.compute(apps, threads)
    assert "2B2L: p1/1 alone under cfs" in str(e.value)
    assert "p0/1" not in str(e.value)


def test_a_mix_without_a_reference_policy_run_is_reported() -> None:
    apps, threads = _tables([("colab", [20, 20])], [10, 20])
    with pytest.raises(metrics.MissingReference, match="mix mix under cfs"):
        metrics.compute(apps, threads)


times = st.lists(st.integers(min_value=1_000, max_value=10**9), min_size=2, max_size=6)


@settings(max_examples=30, deadline=None)
@given(times, st.integers(min_value=2, max_value=1000), st.randoms(use_true_random=False))
def test_invariants(alone: list[int], scale: int, rnd: object) -> None:
    n = len(alone)
    mixed = [a * (1 + (i % 3)) for i, a in enumerate(alone)]
    apps, threads = _tables([("cfs", mixed), ("colab", mixed)], alone)
    _, runs, summary, _ = metrics.compute(apps, threads)
    base = runs.set_index("policy")
    for policy in ("cfs", "colab"):
        r = base.loc[policy]
        assert r["unfairness"] >= 1.0
        # arithmetic mean x harmonic-type sum: H_ANTT * H_STP >= n
        assert r["h_antt"] * r["h_stp"] >= n * (1 - 1e-12)
    # a policy identical to the reference normalises to exactly 1
    colab = summary[summary["policy"] == "colab"]
    assert (colab["normalised"] == 1.0).all()

    # scaling every time by a constant changes nothing
    apps2, threads2 = _tables([("cfs", mixed), ("colab", mixed)], alone, scale=scale)
    _, runs2, _, _ = metrics.compute(apps2, threads2)
    cols = ["h_antt", "h_stp", "unfairness", "fairness"]
    pd.testing.assert_frame_equal(
        runs[cols].reset_index(drop=True), runs2[cols].reset_index(drop=True), rtol=1e-9
    )

    # permuting the applications changes nothing
    order = list(range(n))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    apps3, threads3 = _tables(
        [("cfs", [mixed[i] for i in order]), ("colab", [mixed[i] for i in order])],
        [alone[i] for i in order],
    )
    _, runs3, _, _ = metrics.compute(apps3, threads3)
    pd.testing.assert_frame_equal(
        runs[cols].reset_index(drop=True), runs3[cols].reset_index(drop=True), rtol=1e-9
    )


def test_repetitions_give_a_mean_and_interval(tmp_path: Path) -> None:
    for rep, (a, b) in enumerate([(20, 30), (22, 30), (24, 30)]):
        for policy in ("cfs", "colab"):
            write_run(
                tmp_path,
                platform="2B2L",
                policy=policy,
                mix="m",
                repetition=rep,
                apps=[SynthApp("x", 1, a), SynthApp("y", 1, b)],
            )
    for prog, t in (("x", 10), ("y", 30)):
        write_run(
            tmp_path,
            platform="2B2L",
            policy="cfs",
            mix=f"alone-{prog}",
            apps=[SynthApp(prog, 1, t)],
        )
    col = collect(tmp_path)
    _, _, summary, _ = metrics.compute(col.apps, col.threads)
    row = summary[(summary["policy"] == "colab") & (summary["metric"] == "h_antt")].iloc[0]
    # h_antt per repetition: (2+1)/2, (2.2+1)/2, (2.4+1)/2 -> 1.5, 1.6, 1.7
    assert row["mean"] == pytest.approx(1.6)
    assert row["ci95"] == pytest.approx(T_2DF * 0.1 / math.sqrt(3))
    assert row["n"] == 3
    assert len(row["runs"]) == 3


def test_little_only_platforms_are_found_by_the_platform_model() -> None:
    found = metrics.infer_little_only(
        {
            "2B2L": (2, 2),
            "0B2L": (0, 2),
            "4B4L": (4, 4),
            "2B0L": (2, 0),
            "not-a-platform": (None, None),
        }
    )
    # 4B4L has no 0B4L runs; single-type and unreadable names map to nothing
    assert found == {"2B2L": "0B2L"}


def test_the_confidence_interval_uses_the_exact_t_quantile_past_30_degrees() -> None:
    """With 32 values (31 degrees of freedom) t is 2.0395, not the normal 1.96:
    an interval from 1.96 would be 3.9% too narrow."""
    values = [0.0, 1.0] * 16
    sd = math.sqrt(sum((v - 0.5) ** 2 for v in values) / 31)
    assert metrics.ci95(values) == pytest.approx(T_31DF * sd / math.sqrt(32), rel=1e-9)


def test_the_geometric_mean_is_undefined_with_a_value_that_is_not_positive() -> None:
    assert metrics.geomean([1.0, 4.0]) == pytest.approx(2.0)
    # not 2.0 from the two positive values while three mixes are counted
    assert math.isnan(metrics.geomean([1.0, -1.0, 4.0]))
    assert math.isnan(metrics.geomean([0.0, 4.0]))


def _summary(metric: str, normalised: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "engine": "qemu",
            "platform": "2B2L",
            "policy": "colab",
            "mix": [f"m{i}" for i in range(len(normalised))],
            "metric": metric,
            "normalised": normalised,
        }
    )


def test_metrics_that_can_be_negative_are_averaged_arithmetically_over_mixes() -> None:
    fair = metrics.geomeans(_summary("fairness", [-0.5, 1.5])).iloc[0]
    assert fair["aggregate"] == "arithmetic"
    assert fair["across_mixes"] == pytest.approx(0.5)
    assert fair["mixes"] == 2
    antt = metrics.geomeans(_summary("h_antt", [1.0, 4.0])).iloc[0]
    assert antt["aggregate"] == "geometric"
    assert antt["across_mixes"] == pytest.approx(2.0)


def test_no_ratio_to_a_reference_mean_that_is_not_positive() -> None:
    runs = pd.DataFrame(
        {
            "engine": "qemu",
            "platform": "2B2L",
            "policy": ["cfs", "colab", "cfs", "colab"],
            "mix": ["a", "a", "b", "b"],
            "repetition": 0,
            "run": ["r1", "r2", "r3", "r4"],
            **{m: 1.0 for m in metrics.METRICS},
        }
    )
    runs.loc[runs["run"] == "r1", "asp"] = -0.2  # cfs's ASP on mix a is negative
    runs.loc[runs["run"] == "r2", "asp"] = 0.4
    norm = metrics.summarise(runs).set_index(["policy", "mix", "metric"])["normalised"]
    assert math.isnan(norm[("colab", "a", "asp")])  # not -2.0
    assert norm[("colab", "b", "asp")] == pytest.approx(1.0)
