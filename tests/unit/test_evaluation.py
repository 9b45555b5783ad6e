"""The gem5 evaluation's spec (evaluations/gem5-2B2L): it validates, plans
to the run count its lists give (counted here from the TOML files alone,
not by the planner), and each mix is of its category by measurement."""

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from ampkit import policies
from ampkit.analysis.metrics import MissingReference
from ampkit.analysis.report import write_report
from ampkit.behaviour import check_mix, load_table
from ampkit.campaign import estimate
from ampkit.campaign.plan import MATRIX, expand
from ampkit.campaign.spec import load_spec
from ampkit.paths import MIXES, REPO_ROOT
from ampkit.timescale import timescale_of

SPEC = REPO_ROOT / "evaluations" / "gem5-2B2L" / "spec.toml"


def test_the_evaluation_plans_to_the_run_count_its_lists_give() -> None:
    raw = tomllib.loads(SPEC.read_text())
    mixes = {name: tomllib.loads((MIXES / f"{name}.toml").read_text()) for name in raw["mixes"]}
    own = raw.get("mix_repetitions", {})
    reps = raw.get("repetitions", 1)
    matrix = len(raw["platforms"]) * len(raw["policies"]) * sum(own.get(m, reps) for m in mixes)
    # a reference per distinct application (program and threads: every app is
    # sized by the span alone, so one program has one size) and kind, on each
    # platform, at each of 'repetitions' (a mix's own count repeats its runs only)
    apps = {(a["program"], a["threads"]) for m in mixes.values() for a in m["app"]}
    references = len(apps) * len(raw["references"]) * len(raw["platforms"]) * reps

    spec = load_spec(SPEC)
    runs = expand(spec)
    assert len([r for r in runs if r.role == MATRIX]) == matrix
    assert len([r for r in runs if r.role != MATRIX]) == references
    assert len(runs) == len({r.run_id for r in runs}) == matrix + references
    # what the issue asks of it
    assert set(spec.policies) == {"cfs", "colab", "wash"}
    assert [p.name for p in spec.platforms] == ["2B2L"]
    assert set(spec.references) == {"alone", "little-only"}
    # time-scaled, the tick with the rest (README.md there)
    assert spec.kernel == "hz1000" and timescale_of(spec.append) == 4
    assert spec.perturb_us > 0 and spec.speedups is not None and spec.speedups.is_file()
    assert len([m for m in spec.mixes if spec.repetitions_of(m.name) >= 5]) >= 2
    assert all(a.speedup is not None for r in runs for a in r.request.mix.apps)


SECOND = REPO_ROOT / "evaluations" / "gem5-2B2L-v2" / "spec.toml"


def test_the_second_evaluation_plans_the_first_ones_runs_exactly() -> None:
    """evaluations/gem5-2B2L-v2 runs the first evaluation again at a later
    kernel series: every run request (mix, sizes, hints, boot line,
    perturbation, repetitions, references) the same, so that its runs
    differ from the first's by the kernel alone, which each campaign pins
    on its first run; its runs are archived apart from the first's."""
    first, second = load_spec(SPEC), load_spec(SECOND)
    assert [r.request for r in expand(second)] == [r.request for r in expand(first)]
    assert [r.role for r in expand(second)] == [r.role for r in expand(first)]
    assert second.name != first.name and second.archive != first.archive


def test_colabs_classes_split_the_hints_range_in_thirds() -> None:
    """The spec sets COLAB's class thresholds by a rule on its hints
    (README.md there, "COLAB's classes"): the range of the hints in equal
    thirds. Measured again, the hints would move the thresholds with them."""
    spec = load_spec(SPEC)
    assert spec.speedups is not None
    # each threshold set once, in whichever form the kernel reads ('.' or '/')
    for knob in ("sched_colab_big_speedup", "sched_colab_little_speedup"):
        assert len(re.findall(rf"sysctl[./]kernel[./]{knob}=", spec.append)) == 1, knob
    hints = [e["speedup"] for e in tomllib.loads(spec.speedups.read_text())["program"]]
    low, high = min(hints), max(hints)
    big, little = policies.colab_thresholds(spec.append)  # as the kit reads the kernel's
    assert big == round((low + 2 * (high - low) / 3) * 1024)
    assert little == round((low + (high - low) / 3) * 1024)
    # the hints as the runs carry them (the spec's profile, by program and threads)
    mixes = [r.request.mix for r in expand(spec) if r.role == MATRIX]
    classes = [{policies.colab_class(a.speedup, (big, little)) for a in m.apps} for m in mixes]
    # every class is held by some app, and some mix holds two classes: the
    # allocator has something to do (with the kernel's defaults, 2.0 and
    # 1.5, every app here was big)
    assert set().union(*classes) == {"big", "either", "little"}
    assert any(len(c) > 1 for c in classes)


def test_each_mix_is_of_its_category_by_measurement_three_of_each() -> None:
    spec = load_spec(SPEC)
    assert spec.sized_by is not None  # the campaign pins this table on its first run
    table = load_table(spec.sized_by)
    categories: dict[str, int] = {}
    for mix in spec.mixes:
        verdict = check_mix(mix, table)
        assert verdict.holds, verdict.lines
        categories[mix.category] = categories.get(mix.category, 0) + 1
    assert categories == {"compute": 3, "synchronisation": 3, "communication": 3}


def test_every_run_of_the_evaluation_has_an_estimate_near_the_one_its_readme_gives() -> None:
    spec = load_spec(SPEC)
    assert spec.sized_by is not None
    table = load_table(spec.sized_by)
    got = [estimate.estimate_run(r.request, r.role, table) for r in expand(spec)]
    runs = [e for e in got if isinstance(e, estimate.RunEstimate)]
    assert len(runs) == len(got)  # every program has a cost line
    # about twenty-nine wall hours with two gem5 processes by the estimate at
    # the rates the campaign's first runs measured, well over the issue's
    # twelve (README here, "The plan's estimate")
    hours = sum(r.wall_s for r in runs) / 3600 / (spec.executor.jobs or 1)
    assert 25 <= hours <= 35
    # every mix run, by the estimate, ten COLAB ranking periods long or more
    # at the evaluation's scale (10 ms over 4), so ten 1 ms ticks too
    assert timescale_of(spec.append) == 4
    assert min(r.sim_ms for r in runs if r.role == MATRIX) >= 10 * 10 / 4


def _committed_reports() -> list[Path]:
    """The reports git holds under evaluations/ (not a local campaign's)."""
    listed = subprocess.run(
        ["git", "ls-files", "--", "evaluations/**/report/report.md"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted((REPO_ROOT / p).parent for p in listed)


def test_there_is_a_committed_report_to_reproduce() -> None:
    assert _committed_reports(), "no evaluations/**/report/report.md"


@pytest.mark.parametrize(
    "report", _committed_reports(), ids=lambda p: str(p.relative_to(REPO_ROOT))
)
def test_a_committed_report_is_what_its_committed_runs_give(report: Path, tmp_path: Path) -> None:
    """Every table of a committed report, made again from the run
    directories committed beside it, byte for byte: a reader who opens the
    runs gets the figures the README quotes."""
    runs = report.parent / "runs"
    assert runs.is_dir(), f"{report}: no runs/ beside it"
    write_report(runs, tmp_path / "again")
    committed = sorted(p.name for p in (report / "tables").glob("*.csv"))
    assert {"per_run.csv", "slowdowns.csv", "summary.csv", "geomeans.csv", "clocks.csv"} <= set(
        committed
    )
    for name in committed:
        here = (report / "tables" / name).read_text()
        again = (tmp_path / "again" / "tables" / name).read_text()
        assert here == again, f"{report.relative_to(REPO_ROOT)}/tables/{name} differs"


#: A campaign under way, made of the evaluation's archived runs: one mix
#: with every policy's run, one without wash's, one without cfs's and one
#: whose amdahl has no reference alone
PARTIAL = {
    "sync2-contend-barrier": ("cfs", "colab", "wash"),
    "comm2-pipeline-barrier": ("cfs", "colab"),
    "comm2-stages-pipeline": ("colab", "wash"),
    "sync2-amdahl-contend": ("cfs", "colab"),
}
REFERENCES = (
    "contend-t3-n1127",
    "barrier-t3-n35526",
    "pipeline-t3-n1650",
    "stages-t4-n1675",
)


def test_a_partial_report_compares_the_mixes_complete_so_far(tmp_path: Path) -> None:
    runs = REPO_ROOT / "evaluations" / "gem5-2B2L" / "runs"
    under_way = tmp_path / "runs"
    under_way.mkdir()
    names = [f"2B2L-{p}-{mix}-r0" for mix, ps in PARTIAL.items() for p in ps]
    names += [f"2B2L-cfs-alone-{ref}-r0" for ref in REFERENCES]
    for name in names:
        shutil.copytree(runs / name, under_way / name)
    # in full, the report refuses, naming what is missing
    with pytest.raises(MissingReference):
        write_report(under_way, tmp_path / "full")
    report = write_report(under_way, tmp_path / "partial", partial=True)
    text = (report.directory / "report.md").read_text()
    assert "3 mix(es) left out until their runs come" in text
    assert "mix comm2-pipeline-barrier (cfs, colab): no run under wash" in text
    assert "mix comm2-stages-pipeline (colab, wash): no run under cfs" in text
    assert "mix sync2-amdahl-contend (cfs, colab): no alone run under cfs of amdahl" in text
    summary = (report.directory / "tables" / "summary.csv").read_text()
    assert "sync2-contend-barrier" in summary
    assert not any(mix in summary for mix in list(PARTIAL)[1:])
    # what it compares is what a full report of the complete mix gives
    complete = tmp_path / "complete"
    complete.mkdir()
    for name in names:
        if "sync2-contend-barrier" in name or "contend-t3" in name or "barrier-t3" in name:
            shutil.copytree(runs / name, complete / name)
    full = write_report(complete, tmp_path / "complete-report")
    assert (full.directory / "tables" / "summary.csv").read_text() == summary


def test_a_slowdown_below_one_from_a_better_placement_is_said_so(tmp_path: Path) -> None:
    """The evaluation's sync2-amdahl-contend under colab: amdahl finished
    faster than alone under cfs, where its threads ran 37% of their time
    on big CPUs; in the mix 68%. The report names placement as the cause,
    with both shares from the kernel's counters."""
    runs = REPO_ROOT / "evaluations" / "gem5-2B2L" / "runs"
    mine = tmp_path / "runs"
    for name in (
        "2B2L-colab-sync2-amdahl-contend-r0",
        "2B2L-cfs-sync2-amdahl-contend-r0",
        "2B2L-cfs-alone-amdahl-t3-n60048-r0",
        "2B2L-cfs-alone-contend-t3-n1127-r0",
    ):
        shutil.copytree(runs / name, mine / name)
    report = write_report(mine, tmp_path / "report")
    text = (report.directory / "report.md").read_text()
    section = text[text.index("## Slowdowns below 1") : text.index("## Clocks")]
    colab = next(line for line in section.splitlines() if "| colab | amdahl#0 |" in line)
    assert "| 0.677 / 0.373 |" in colab
    assert "placed better than alone: 68% of its threads' run time on big CPUs here" in colab


def test_the_report_gives_each_application_its_placement_under_each_policy(
    tmp_path: Path,
) -> None:
    """comm2-stages-pipeline, whose seven threads are all of COLAB's little
    class: under colab stages' threads ran on the other side than last 122
    times each and 43% of their run time on big CPUs, under cfs 14 times
    and 63%. The report's table per application says so, from the same
    counters the evaluation's README quotes."""
    from ampkit.analysis.collect import collect
    from ampkit.analysis.report import per_application

    runs = REPO_ROOT / "evaluations" / "gem5-2B2L" / "runs"
    mine = tmp_path / "runs"
    for name in ("2B2L-cfs-comm2-stages-pipeline-r0", "2B2L-colab-comm2-stages-pipeline-r0"):
        shutil.copytree(runs / name, mine / name)
    col = collect(mine)
    frame = per_application(col.tasks, col.apps)
    rows = {(str(r["app"]), str(r["policy"])): r for r in frame.to_dict("records")}
    stages_colab, stages_cfs = rows[("stages", "colab")], rows[("stages", "cfs")]
    assert stages_colab["moves"] == pytest.approx(122.5)
    assert stages_cfs["moves"] == pytest.approx(14.25)
    assert stages_colab["big"] == pytest.approx(0.429, abs=5e-4)
    assert stages_cfs["big"] == pytest.approx(0.633, abs=5e-4)
    assert stages_colab["turnaround_ms"] == pytest.approx(67.26, abs=0.01)
    assert stages_colab["flagged"] > 0.5 and stages_cfs["flagged"] == 0
    assert stages_colab["runs"] == 1
