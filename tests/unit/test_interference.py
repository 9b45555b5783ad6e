"""Fan et al.'s interference model (ampkit.interference): the fit recovers
a known answer, held-out co-runs are predicted by functions that did not
see them, the model file round-trips, and a mix's applications become
the daemon's policy_data lines, or an error naming what is missing."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ampkit import gem5stats
from ampkit.errors import AmpkitError
from ampkit.interference import (
    CORES,
    TERMS,
    AppModel,
    Degradation,
    InterferenceModels,
    fit_app,
    held_out_errors,
    load_models,
    pressures,
)
from ampkit.mix import App, Mix

pytestmark = pytest.mark.unit

TRUTH = {
    "big": Degradation((0.1358, 1.5498, 0.0091, 0.4163, 0.0357), -14.4522),
    "little": Degradation((0.4814, 0.9847, 0.0542, 0.6163, 0.0105), -56.2996),
}


def coruns(truth: Degradation, n: int, noise_pct: float, seed: int) -> pd.DataFrame:
    """``n`` co-runs with pressures spread as the paper's (tens to a
    hundred), their slowdowns ``truth``'s plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.uniform(5, 120, (n, len(TERMS))), columns=list(TERMS))
    exact = [truth.predict(dict(zip(TERMS, row, strict=True))) for row in frame.to_numpy()]
    frame["slowdown_pct"] = np.array(exact) + rng.normal(0, noise_pct, n)
    return frame


def samples(noise_pct: float) -> pd.DataFrame:
    parts = []
    for k, core in enumerate(CORES):
        part = coruns(TRUTH[core], 40, noise_pct, seed=k)
        parts.append(part.assign(core=core, corun=[f"W{k * 40 + i + 1}" for i in range(40)]))
    return pd.concat(parts, ignore_index=True).assign(program="vpr", threads=1, size="n100")


def test_the_fit_recovers_the_functions_that_made_the_data() -> None:
    model = fit_app("vpr", 1, "n100", {"big": (1, 2, 3), "little": (4, 5, 6)}, samples(0.0))
    for core in CORES:
        got = model.degradation[core]
        assert got.coefficients == pytest.approx(TRUTH[core].coefficients, abs=1e-9)
        assert got.intercept == pytest.approx(TRUTH[core].intercept, abs=1e-7)
    noisy = fit_app("vpr", 1, "n100", {"big": (1, 2, 3), "little": (4, 5, 6)}, samples(2.0))
    # with two points of noise, the largest coefficient within a few percent
    assert noisy.degradation["big"].coefficients[1] == pytest.approx(1.5498, rel=0.05)


def test_too_few_coruns_or_none_on_a_type_is_an_error_saying_so() -> None:
    few = samples(0.0).groupby("core").head(6)
    with pytest.raises(AmpkitError, match="6 co-runs for a degradation function of 6 unknowns"):
        fit_app("vpr", 1, "n100", {"big": (1, 2, 3), "little": (4, 5, 6)}, few)
    every = samples(0.0)
    big_only = every[every["core"] == "big"]
    with pytest.raises(AmpkitError, match="no co-run with it on a little CPU"):
        fit_app("vpr", 1, "n100", {"big": (1, 2, 3), "little": (4, 5, 6)}, big_only)


def test_held_out_coruns_are_predicted_by_functions_that_did_not_see_them() -> None:
    data = samples(0.0)
    # one co-run measured 50 points slower than its function says: held
    # out, the others' fit predicts it as the function does, 50 below; a
    # fit that saw it would have pulled toward it and erred less
    data.loc[data["corun"] == "W7", "slowdown_pct"] += 50
    errors = held_out_errors(data)
    assert len(errors) == 80 and set(errors["core"]) == set(CORES)
    assert list(errors.columns) == [
        *("program", "threads", "size", "core", "corun", "measured_pct", "predicted_pct"),
        "error_pct",
    ]
    odd = errors[errors["corun"] == "W7"]["error_pct"]
    assert odd.tolist() == [pytest.approx(-50, abs=1e-6)]
    # the other big co-runs are predicted by fits that include W7: off, by
    # less than W7 is (its 50 points shared among 39 co-runs' fit)
    others = errors[(errors["core"] == "big") & (errors["corun"] != "W7")]["error_pct"]
    assert 0 < others.abs().max() < 25


def test_the_rows_of_one_corun_are_left_out_together() -> None:
    data = samples(0.0)
    twice = data[data["corun"] == "W3"]
    data = pd.concat([data, twice.assign(slowdown_pct=twice["slowdown_pct"] + 30)])
    errors = held_out_errors(data)
    w3 = errors[errors["corun"] == "W3"]["error_pct"].tolist()
    # neither row helped predict the other: the fit is the exact function's,
    # so the errors are 0 and -30, not pulled toward each other
    assert sorted(w3) == [pytest.approx(-30, abs=1e-6), pytest.approx(0, abs=1e-6)]


def model(program: str, threads: int, size: str = "n1000") -> AppModel:
    return AppModel(
        program, threads, size, {"big": (10.0, 0.5, 0.25), "little": (12.0, 0.5, 0.25)}, TRUTH
    )


def test_a_model_file_round_trips_with_its_provenance(tmp_path: Path) -> None:
    models = InterferenceModels(
        (model("compute", 2), model("stream", 3)), {"engine": "gem5", "co_runs": 80}
    )
    path = tmp_path / "models.toml"
    path.write_text(models.to_toml())
    again = load_models(path)
    assert again.apps == models.apps and again.provenance == models.provenance
    assert again.sha256 is not None and again.source == path
    path.write_text(models.to_toml().replace("pressure_little = [12.0, 0.5, 0.25]", "", 1))
    with pytest.raises(AmpkitError, match="app 1: KeyError"):
        load_models(path)
    for bad, says in (
        ("intercept = -14.4522", "intercept = nan"),
        ("threads = 2", "threads = 2.5"),
        ('size = "n1000"', "size = 1000"),
        ("pressure_big = [10.0,", "pressure_big = [-10.0,"),
    ):
        path.write_text(models.to_toml().replace(bad, says, 1))
        with pytest.raises(AmpkitError, match="app 1: "):
            load_models(path)
    path.write_text(models.to_toml().replace('"stream"', '"compute"').replace("= 3\n", "= 2\n"))
    with pytest.raises(AmpkitError, match="app 2: compute with 2 threads at n1000 given twice"):
        load_models(path)
    # a file of the format before sizes were part of the key
    path.write_text(models.to_toml().replace("format = 2", "format = 1"))
    with pytest.raises(AmpkitError, match="format 1, this kit reads 2"):
        load_models(path)


def test_a_mix_becomes_the_daemons_lines_or_an_error_naming_what_is_missing() -> None:
    models = InterferenceModels((model("compute", 2), model("stream", 3)), {})
    mix = Mix(
        "m",
        "test",
        "compute",
        (App("stream", 3, 1000), App("compute", 2, 1000)),
        Path("m"),
    )
    lines = models.lines(mix)
    assert [line.split()[:4] for line in lines] == [
        ["policy_data", "app", "0", "pressure"],
        ["policy_data", "app", "1", "pressure"],
    ]
    # the daemon's shape: 'data' then 23 words (ampkit-contention.c, model_line)
    assert all(len(line.split()) == 24 for line in lines)
    words = lines[1].split()
    assert words[10] == "big" and words[17] == "little"
    assert [float(w) for w in words[11:17]] == [*TRUTH["big"].coefficients, -14.4522]
    short = Mix("m", "test", "compute", (App("compute", 3, 1000), App("chase", 1, 10)), Path("m"))
    with pytest.raises(
        AmpkitError, match=r"none for app 1 \(compute, 3 threads, n1000; mix index 0\)"
    ):
        models.lines(short)
    # a program's pressures are its working set's: another size is another application
    resized = Mix(
        "m", "test", "compute", (App("stream", 3, 2000), App("compute", 2, 1000)), Path("m")
    )
    with pytest.raises(
        AmpkitError, match=r"none for app 1 \(stream, 3 threads, n2000; mix index 0\)"
    ):
        models.lines(resized)


def test_a_gem5_dump_gives_each_core_types_pressures_as_rates() -> None:
    """C in eq. 1 from the real gem5 run kept as data: each cluster's
    accesses to the three resources over the measured interval, per
    simulated second, by core type."""
    run = Path(__file__).parents[1] / "data" / "gem5-v24-2B2L-run" / "m5out"
    dumps = gem5stats.read_stats(run)
    assert dumps is not None
    measured = dumps[gem5stats.MEASURED_DUMP]
    rates = pressures(measured)
    seconds = measured["simTicks"] / 1e12
    counts = gem5stats.shared_accesses(measured)
    assert rates == {
        "big": pytest.approx([v / seconds for v in counts["bigCluster"]]),
        "little": pytest.approx([v / seconds for v in counts["littleCluster"]]),
    }
    # the big cluster's L2 took more accesses than the little one's, in
    # millions a second (a run of the demo mix, 1.4 ms)
    assert rates["big"][0] > rates["little"][0] > 1e6
    with pytest.raises(AmpkitError, match="no rate to take"):
        pressures({**measured, "simTicks": 0.0})


def test_a_fit_whose_co_runs_cannot_tell_the_terms_apart_is_refused(tmp_path: Path) -> None:
    """Pressures that move along fewer directions than there are terms (here
    the own cluster's cache and bus always in the same ratio) leave the
    coefficients to the solver's choice: refused for a model, named; a
    held-out fold's fit takes what its rows allow."""
    data = samples(0.0)
    data["own_bus"] = 2 * data["own_cache"]
    with pytest.raises(AmpkitError, match="vary along 5 independent directions"):
        fit_app("vpr", 1, "n100", {"big": (1, 2, 3), "little": (4, 5, 6)}, data)
    assert len(held_out_errors(data)) == 80
    # and a model file's tables must be tables
    path = tmp_path / "m.toml"
    path.write_text('format = 2\nprovenance = "x"\n')
    with pytest.raises(AmpkitError, match="provenance must be a table"):
        load_models(path)
