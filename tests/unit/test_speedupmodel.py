"""The speedup model: events chosen by PCA, coefficients by regression,
leave-one-program-out validation, and the model file (ampkit.speedupmodel)."""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ampkit import speedupmodel as sm
from ampkit.errors import AmpkitError
from ampkit.mix import App
from ampkit.paths import REPO_ROOT
from ampkit.pmu import INSTRUCTIONS, NAMES
from ampkit.profile import Entry, Profile, load_profile

pytestmark = pytest.mark.unit

PROGRAMS = ("amdahl", "barrier", "chase", "compute", "contend", "intmark", "pipeline", "stages")
INST = 1e8


def rate(event: str) -> str:
    return sm.rate_name(event)


def synthetic_profile(
    speedup_of: Callable[[dict[str, float]], float],
    *,
    seed: int = 1,
    mem_access_sum: bool = False,
    epi_nj: float | None = 0.5,
) -> Profile:
    """Two thread counts of each program, every event's rate drawn at random
    on the big core (the little core's within 10% of it), the speedup a
    known function of the big rates; exact times, so nothing rounds."""
    rng = np.random.default_rng(seed)
    entries = []
    for program in PROGRAMS:
        for threads in (2, 3):
            big = {n: float(rng.uniform(0.01, 0.3)) * INST for n in NAMES}
            big[INSTRUCTIONS] = INST
            if mem_access_sum:
                big["MEM_ACCESS"] = big["LD_RETIRED"] + big["ST_RETIRED"]
            little = {n: v * float(rng.uniform(0.9, 1.1)) for n, v in big.items()}
            little[INSTRUCTIONS] = INST
            speedup = speedup_of({n: v / INST for n, v in big.items()})
            entries.append(
                Entry(
                    app=App(program, threads, 1000),
                    big_ns=(10**9,),
                    little_ns=(round(10**9 * speedup),),
                    big_pmu=tuple(big.items()),
                    little_pmu=tuple(little.items()),
                    big_epi_nj=epi_nj,
                )
            )
    return Profile(engine="gem5", cpus=4, entries=tuple(entries))


def known(r: dict[str, float]) -> float:
    return 1.5 + 4.0 * r["BR_MIS_PRED"] - 3.0 * r["L1D_TLB_REFILL"]


def test_training_keeps_the_informative_events_and_recovers_their_coefficients() -> None:
    models, _ = sm.train(synthetic_profile(known), limit=2)
    big = next(m for m in models if (m.target, m.core) == ("speedup", "big"))
    assert set(big.events) == {rate("BR_MIS_PRED"), rate("L1D_TLB_REFILL")}
    coefficients = dict(zip(big.events, big.coefficients, strict=True))
    assert big.intercept == pytest.approx(1.5, abs=1e-6)
    assert coefficients[rate("BR_MIS_PRED")] == pytest.approx(4.0, abs=1e-6)
    assert coefficients[rate("L1D_TLB_REFILL")] == pytest.approx(-3.0, abs=1e-6)
    # EEF = speedup / EPI_big: the same events, the coefficients over 0.5 nJ
    eef = next(m for m in models if (m.target, m.core) == ("eef", "big"))
    assert set(eef.events) == set(big.events)
    assert eef.intercept == pytest.approx(3.0, abs=1e-6)


def test_by_default_the_number_of_events_is_what_leaving_a_program_out_prefers() -> None:
    # two events say everything: one errs on every held-out program, two
    # err on none, more err no less, and the fewest of the best win
    prof = synthetic_profile(known)
    frame = sm.training_frame(prof)
    assert sm.choose_limit(frame, "big", "speedup") == 2
    models, check = sm.train(prof)
    big = next(m for m in models if (m.target, m.core) == ("speedup", "big"))
    assert set(big.events) == {rate("BR_MIS_PRED"), rate("L1D_TLB_REFILL")}
    assert dict(big.provenance)["events_limit"] == "chosen by leaving one program out"
    # nested: each fold chose its number among the other programs alone
    folds = check[(check["target"] == "speedup") & (check["core"] == "big")]
    assert all(len(str(events).split()) == 2 for events in folds["events"])
    assert folds["error"].abs().max() < 1e-6


def test_too_few_programs_to_choose_by_keep_the_fewest_events() -> None:
    frame = sm.training_frame(synthetic_profile(known))
    three = frame[frame["program"].isin(PROGRAMS[:3])]
    assert sm.choose_limit(three, "big", "speedup") == 1


def test_an_event_that_is_the_sum_of_two_others_adds_nothing() -> None:
    # MEM_ACCESS = LD_RETIRED + ST_RETIRED, as on gem5: the three together
    # have a direction of no variance, which the components leave out
    def target(r: dict[str, float]) -> float:
        return 1.0 + 2.0 * r["LD_RETIRED"] + 2.0 * r["ST_RETIRED"]

    models, check = sm.train(synthetic_profile(target, mem_access_sum=True), limit=3)
    big = next(m for m in models if (m.target, m.core) == ("speedup", "big"))
    # two of the three say it all; the third would take a counter for nothing
    assert not {rate("LD_RETIRED"), rate("ST_RETIRED"), rate("MEM_ACCESS")} <= set(big.events)
    held_out = check[(check["target"] == "speedup") & (check["core"] == "big")]
    assert held_out["error"].abs().max() < 1e-6


def test_a_repeated_event_is_dropped_before_the_components() -> None:
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [2.0, 4, 6, 8, 10, 12.1]})
    x["c"] = [0.3, 0.1, 0.4, 0.1, 0.5, 0.9]
    y = pd.Series(2 * x["a"] + x["c"])
    chosen = sm.select_events(x, y)
    assert not {"a", "b"} <= set(chosen) and "c" in chosen


def test_no_more_events_than_the_pmu_counts_at_once() -> None:
    def busy(r: dict[str, float]) -> float:
        return 1.0 + sum(r[n] * (i + 1) for i, n in enumerate(NAMES) if n != INSTRUCTIONS)

    models, _ = sm.train(synthetic_profile(busy))
    for m in models:
        besides_cycles = [e for e in m.events if e != rate("CPU_CYCLES")]
        assert len(besides_cycles) <= sm.EVENT_BUDGET, m.events


def test_validation_leaves_each_program_out_and_predicts_it() -> None:
    prof = synthetic_profile(known)
    frame = sm.training_frame(prof)
    check = sm.validate(frame, "little", "speedup", 2)
    assert list(check.columns) == [
        "program",
        "app",
        "core",
        "target",
        "measured",
        "predicted",
        "error",
        "events",
        "mean_error",
    ]
    assert len(check) == 2 * len(PROGRAMS) and set(check["program"]) == set(PROGRAMS)
    assert (check["core"] == "little").all() and (check["target"] == "speedup").all()
    assert np.allclose(check["error"], check["predicted"] / check["measured"] - 1)
    # the little core's rates are the big ones' within 10%: a close but
    # imperfect model, its errors held-out ones
    assert 0 < check["error"].abs().mean() < 0.2
    # where the counters say something, the model does better than the mean
    assert check["error"].abs().mean() < check["mean_error"].abs().mean()


def test_the_model_file_round_trips_and_refuses_another_setup(tmp_path: Path) -> None:
    models, _ = sm.train(synthetic_profile(known), limit=2)
    model = models[0]
    model = sm.Model(
        **{
            **{f: getattr(model, f) for f in ("target", "core", "engine", "events")},
            "intercept": model.intercept,
            "coefficients": model.coefficients,
            "provenance": (("model_sha256", "abc123"),),
        }
    )
    path = tmp_path / "speedup-big.toml"
    path.write_text(model.render())
    loaded = sm.load_model(path, core="big", target="speedup", engine="gem5", machine="abc123")
    assert loaded.events == model.events and loaded.coefficients == model.coefficients
    assert loaded.intercept == model.intercept
    rates = {e: 0.1 for e in model.events}
    assert loaded.predict(rates) == pytest.approx(model.predict(rates))
    with pytest.raises(AmpkitError, match="core big, not little"):
        sm.load_model(path, core="little")
    with pytest.raises(AmpkitError, match="machine abc123, not def456"):
        sm.load_model(path, machine="def456")
    with pytest.raises(AmpkitError, match="rates lack"):
        loaded.predict({})


def test_a_model_file_reading_events_the_pmu_cannot_hold_is_refused(tmp_path: Path) -> None:
    events = [rate(n) for n in NAMES if n not in (INSTRUCTIONS, "CPU_CYCLES")]
    model = sm.Model("speedup", "big", "gem5", tuple(events), 1.0, tuple(0.1 for _ in events))
    path = tmp_path / "m.toml"
    path.write_text(model.render())
    with pytest.raises(AmpkitError, match="more than the PMU's 5 counters hold"):
        sm.load_model(path)
    path.write_text(model.render().replace("BR_PRED/", "L2D_CACHE/"))
    with pytest.raises(AmpkitError, match="not a rate the kit counts"):
        sm.load_model(path)


def test_a_profile_without_counts_cannot_train() -> None:
    prof = Profile(
        engine="qemu",
        cpus=2,
        entries=(Entry(App("compute", 2, 10), (10,), (20,)),),
    )
    with pytest.raises(AmpkitError, match="no PMU counts to train on"):
        sm.training_frame(prof)


def test_the_profile_keeps_the_counts_and_refuses_unknown_events(tmp_path: Path) -> None:
    prof = synthetic_profile(known)
    path = tmp_path / "speedups.toml"
    path.write_text(prof.render())
    again = load_profile(path)
    for before, after in zip(prof.entries, again.entries, strict=True):
        assert dict(after.big_pmu) == pytest.approx({k: round(v) for k, v in before.big_pmu})
        assert after.big_epi_nj == pytest.approx(0.5)
    frame = sm.training_frame(again)
    assert len(frame) == 2 * len(again.entries)
    assert frame["eef"].to_numpy() == pytest.approx(frame["speedup"].to_numpy() / 0.5)
    path.write_text(prof.render().replace("BR_PRED =", "L2D_CACHE =", 1))
    with pytest.raises(AmpkitError, match="'L2D_CACHE', which is not an event the kit counts"):
        load_profile(path)


def test_the_command_trains_every_model_and_writes_its_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ampkit.cli import main

    profile = tmp_path / "speedups.toml"
    profile.write_text(synthetic_profile(known).render())
    out = tmp_path / "model"
    assert main(["model", "train", str(profile), "--out", str(out), "--events", "2"]) == 0
    names = {"speedup-big.toml", "speedup-little.toml", "eef-big.toml", "eef-little.toml"}
    assert names | {"validation.csv", "validation.png"} <= {p.name for p in out.iterdir()}
    model = sm.load_model(out / "speedup-big.toml", core="big", target="speedup", engine="gem5")
    provenance = dict(model.provenance)
    assert provenance["programs"] == " ".join(sorted(PROGRAMS))
    assert len(provenance["profile_sha256"]) == 64
    check = pd.read_csv(out / "validation.csv")
    assert len(check) == 4 * 2 * len(PROGRAMS)
    said = capsys.readouterr()
    assert "speedup from big counts: mean |error|" in said.out
    # the known function of two events is predicted held out: no warning
    assert "warning" not in said.err
    # the command warns where a model does no better than the mean
    check = pd.DataFrame(
        {
            "target": ["speedup"] * 4,
            "core": ["big", "big", "little", "little"],
            "error": [0.5, -1.5, 0.1, -0.1],
            "mean_error": [0.2, -0.2, 0.3, 0.3],
        }
    )
    errors = sm.held_out_errors(check).set_index("core")
    assert errors.loc["big", "model"] == pytest.approx(1.0) and not errors.loc["big", "earns"]
    assert errors.loc["little", "mean"] == pytest.approx(0.3) and errors.loc["little", "earns"]
    # a profile of too few programs to leave one out says so
    few = Profile(engine="gem5", cpus=4, entries=synthetic_profile(known).entries[:4])
    profile.write_text(few.render())
    assert main(["model", "train", str(profile), "--out", str(out)]) != 0
    assert "leaving one out needs three at least" in capsys.readouterr().err


def test_counts_beyond_what_the_cpus_committed_are_refused(tmp_path: Path) -> None:
    """gem5 v24's PMU zeroes a counter under perf at a switch between
    threads that share counters, and perf's delta gains 2^31 - 1: a count
    of more instructions than every CPU committed is refused, saying so."""
    import json

    from ampkit.profile import _check_counts
    from ampkit.rundir import AppRecord

    (tmp_path / "gem5.json").write_text(json.dumps({"cpus": [{"insts": 2_391_248.0}]}))

    def record(count: int) -> AppRecord:
        pmu = {"INST_RETIRED": {"count": count, "enabled_ns": 9, "running_ns": 9}}
        rec = {"app": "compute", "instance": 0, "threads": 1, "start_ns": 1, "end_ns": 2}
        return AppRecord.parse({**rec, "status": "ok", "pmu": pmu})

    _check_counts(tmp_path, record(1_901_736))
    with pytest.raises(AmpkitError, match="counted 2149385383 instructions for compute#0"):
        _check_counts(tmp_path, record(1_901_736 + 2**31 - 1))
    # no statistics (QEMU): nothing to check against
    _check_counts(tmp_path / "elsewhere", record(2**40))


CALIBRATION = REPO_ROOT / "evaluations" / "gem5-2B2L" / "calibration"


def test_gem5_statistics_give_every_event_as_its_probe_counts() -> None:
    """The events of a gem5 run from its statistics: instructions as the
    CPUs committed them, memory accesses the loads and stores, and on the
    out-of-order core the branches retired as commit counts its controls."""
    from ampkit import gem5stats

    run = CALIBRATION / "profile-runs" / "4B0L-cfs-alone-compute-t2-n74775-r0"
    dumps = gem5stats.read_stats(run / "m5out")
    assert dumps is not None
    measured = gem5stats.run_summary(dumps)
    counts = measured["pmu"]
    assert set(counts) == set(NAMES)
    assert counts["INST_RETIRED"] == sum(c["insts"] for c in measured["cpus"])
    assert counts["MEM_ACCESS"] == counts["LD_RETIRED"] + counts["ST_RETIRED"]
    dump = dumps[gem5stats.MEASURED_DUMP]
    controls = sum(v for k, v in dump.items() if k.endswith("committedControl::IsControl"))
    assert counts["BR_RETIRED"] == controls > 0
    assert 0 < counts["BR_MIS_PRED"] < counts["BR_PRED"]


def test_the_committed_model_is_what_its_runs_give() -> None:
    """evaluations/gem5-2B2L/calibration/model: the profile of its training
    runs (each application's region of interest) and the models'
    validation, made again from the committed runs."""
    from ampkit.profile import OVER_REGION, from_runs

    path = CALIBRATION / "model" / "profile.toml"
    committed = load_profile(path)
    again = from_runs(CALIBRATION / "model" / "runs")
    provenance = dict(again.provenance)
    assert provenance["model_sha256"] == dict(committed.provenance)["model_sha256"]
    assert provenance["pmu"].startswith(OVER_REGION)
    # the same file but where the runs were looked for
    assert replace(again, provenance=committed.provenance).render() == path.read_text()
    assert len(committed.entries) == 12
    _, check = sm.train(committed)
    expected = pd.read_csv(CALIBRATION / "model" / "validation.csv")
    pd.testing.assert_frame_equal(
        check.reset_index(drop=True), expected, check_exact=False, rtol=1e-9
    )


def test_a_profiles_counts_are_its_applications_region_where_the_run_marked_it() -> None:
    from ampkit.profile import OVER_INTERVAL, OVER_REGION, statistics_counts
    from ampkit.rundir import Statistics

    whole = {"INST_RETIRED": 9e6, "CPU_CYCLES": 12e6}
    region = {"INST_RETIRED": 1e6, "CPU_CYCLES": 5e6}
    marked = Statistics((), {"pmu": whole, "roi": {"sim_seconds": 1e-3, "pmu": region}})
    assert statistics_counts(marked) == (region, OVER_REGION)
    assert statistics_counts(Statistics((), {"pmu": whole})) == (whole, OVER_INTERVAL)
    assert statistics_counts(Statistics()) == ({}, "")


def test_a_profile_of_region_and_whole_run_counts_at_once_is_refused(tmp_path: Path) -> None:
    import shutil

    from ampkit.profile import from_runs

    app = "cfs-alone-compute-t2-n74775-r0"
    shutil.copytree(CALIBRATION / "model" / "runs" / f"4B0L-{app}", tmp_path / f"4B0L-{app}")
    shutil.copytree(CALIBRATION / "profile-runs" / f"0B4L-{app}", tmp_path / f"0B4L-{app}")
    with pytest.raises(AmpkitError, match=r"over regions of interest .* and over whole runs"):
        from_runs(tmp_path)


def test_a_profile_from_runs_needs_both_sides(tmp_path: Path) -> None:
    from ampkit.profile import from_runs

    with pytest.raises(AmpkitError, match="no application with sound alone runs"):
        from_runs(tmp_path)
    # one side only: the big runs of the hints, without their little ones
    import shutil

    for run in (CALIBRATION / "profile-runs").glob("4B0L-*"):
        shutil.copytree(run, tmp_path / run.name)
    with pytest.raises(AmpkitError, match="no application with sound alone runs"):
        from_runs(tmp_path)
