"""The kernel's time scale: read from a run's command line as the kernel
reads sched_timescale=, and a setup of its own in the analysis."""

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ampkit.analysis import metrics, report
from ampkit.analysis.synthetic import SynthApp, write_run
from ampkit.rundir import RunDir
from ampkit.timescale import MAX, timescale_of
from tests.unit.setup_tables import app_row, app_tables, mix_and_alone

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "gem5-v24-2B2L-run"


@pytest.mark.parametrize(
    ("cmdline", "scale"),
    [
        ("console=ttyAMA0 rdinit=/init", 1),
        ("rdinit=/init sched_timescale=4", 4),
        ("sched_timescale=4 sched_timescale=99", 4),  # the kernel ignores 99
        ("sched_timescale=0x8", 8),  # kstrtouint() with base 0
        ("sched_timescale=010", 8),
        (f"sched_timescale={MAX + 1}", 1),
        ("sched_timescale=0", 1),
        ("sched_timescale=1_6", 1),
        ("xsched_timescale=4", 1),  # another parameter's name
    ],
)
def test_the_scale_is_read_as_the_kernel_reads_it(cmdline: str, scale: int) -> None:
    assert timescale_of(cmdline) == scale


def test_a_run_says_its_scale_from_the_command_line_its_manifest_records(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    assert RunDir(run).info().timescale == 1
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["inputs"]["cmdline"] += " sched_timescale=4"
    (run / "manifest.json").write_text(json.dumps(manifest))
    info = RunDir(run).info()
    assert info.timescale == 4 and info.columns()["timescale"] == 4


def test_a_scaled_run_is_referenced_only_by_runs_of_its_scale() -> None:
    """A mix at scale 4 beside alone runs at scale 1 only: no reference,
    and the message says which scale is missing."""
    apps, threads = app_tables(
        [
            app_row("mix4", "mix", "p0", 20, policy="cfs", scale=4),
            app_row("mix4", "mix", "p1", 20, policy="cfs", scale=4),
            app_row("alone-p0", "alone-p0", "p0", 10, policy="cfs", scale=1),
            app_row("alone-p1", "alone-p1", "p1", 10, policy="cfs", scale=1),
        ]
    )
    with pytest.raises(metrics.MissingReference, match="2B2L at time scale 4: p0/1 alone"):
        metrics.compute(apps, threads)


def test_scales_are_kept_apart_through_to_the_summary() -> None:
    """The same mix at scales 1 and 4, each with its own alone runs (alone
    10 at scale 1, 5 at scale 4; 20 in the mix at both): slowdowns 2 and 4,
    summarised per scale, never averaged together."""
    apps, threads = mix_and_alone("timescale", {1: 10, 4: 5})
    slow, _, summary, gm = metrics.compute(apps, threads)
    assert dict(zip(slow["timescale"], slow["slowdown"], strict=False)) == {1: 2.0, 4: 4.0}
    antt = summary[summary["metric"] == "h_antt"].set_index("timescale")["mean"]
    assert antt.to_dict() == {1: 2.0, 4: 4.0}
    assert sorted(gm["timescale"].unique()) == [1, 4]


def test_the_report_names_each_scale_and_keeps_them_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One campaign of runs at scale 1 and the same at scale 4 (twice as
    slow in the mix under colab): two sections, each normalised within its
    scale, the header saying which scales ran, and each plot's title its
    section's setup."""
    titles: list[str] = []
    draw = report.grouped_bars

    def spy(values: pd.DataFrame, **kw: Any) -> int:
        titles.append(kw["title"])
        return draw(values, **kw)

    monkeypatch.setattr(report, "grouped_bars", spy)
    for scale, colab_ms in ((1, 20), (4, 40)):
        root = tmp_path / "runs" / f"x{scale}"
        cmdline = "rdinit=/init" + (f" sched_timescale={scale}" if scale > 1 else "")
        for policy, x_ms in (("cfs", 20), ("colab", colab_ms)):
            write_run(
                root,
                platform="2B2L",
                policy=policy,
                mix="pair",
                apps=[SynthApp("x", 1, x_ms * 10**6), SynthApp("y", 1, 20 * 10**6)],
                cmdline=cmdline,
            )
        for app in ("x", "y"):
            write_run(
                root,
                platform="2B2L",
                policy="cfs",
                mix=f"alone-{app}",
                apps=[SynthApp(app, 1, 10 * 10**6)],
                cmdline=cmdline,
            )
    written = report.write_report(tmp_path / "runs", tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Kernel time scales 1 and 4" in md
    assert "## 2B2L on qemu" in md and "## 2B2L, time scale 4 on qemu" in md
    gm = pd.read_csv(tmp_path / "report" / "tables" / "geomeans.csv")
    antt = gm[(gm["metric"] == "h_antt") & (gm["policy"] == "colab")]
    # alone 10 ms each; cfs's mix 20 and 20 (ANTT 2); colab's 20 and 20 at
    # scale 1 (1.0 of cfs's), 40 and 20 at scale 4 (ANTT 3: 1.5 of cfs's).
    # Pooled, the two scales would give one figure, 1.25.
    assert dict(zip(antt["timescale"], antt["across_mixes"], strict=True)) == pytest.approx(
        {1: 1.0, 4: 1.5}
    )
    assert {p for p in written.plots if "x4" in p}  # the scaled section's own plots
    # five plots a section (four metrics, the slowdowns), each titled by its setup
    assert sum(t.endswith(", 2B2L (qemu)") for t in titles) == 5
    assert sum(t.endswith(", 2B2L, time scale 4 (qemu)") for t in titles) == 5
