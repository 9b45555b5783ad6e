"""The gem5 evaluation in miniature: a campaign of two mixes at the smallest
sizes under cfs and colab, with its alone references, perturbed, on the
1000 Hz kernel at a time scale of 4, as evaluations/gem5-2B2L runs; run,
reported, archived, and the archive reported again to the same figures."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

from ampkit.engines import gem5

DATA = Path(__file__).parents[1] / "data" / "campaign"

#: contend beside compute, each a couple of simulated ms alone on 2B2L
SYNC = """
description = "contend and compute, small"
category = "synchronisation"

[[app]]
program = "contend"
threads = 2
size = 20

[[app]]
program = "compute"
threads = 2
size = 4000
"""


def ampkit(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "ampkit", *args], capture_output=True, text=True, timeout=3600
    )
    assert result.returncode == 0, f"ampkit {' '.join(args)}: {result.returncode}\n{result.stderr}"
    return result


def test_a_miniature_gem5_campaign_runs_to_a_report_its_archive_reproduces(
    gem5_tree: gem5.Gem5, tmp_path: Path
) -> None:
    (tmp_path / "sync.toml").write_text(SYNC)
    spec = tmp_path / "mini.toml"
    spec.write_text(
        f"""
name = "gem5-mini"
engine = "gem5"
platforms = ["2B2L"]
policies = ["cfs", "colab"]
mixes = ["{DATA / "pair.toml"}", "sync.toml"]
references = ["alone"]
perturb_us = 20
kernel = "hz1000"
append = "sched_timescale=4"
archive = "archive"

[limits]
mix_limit_s = 2

[executor]
jobs = 2
"""
    )
    root = tmp_path / "campaign"
    plan = ampkit("campaign", "plan", str(spec), "--dir", str(root)).stdout
    # two mixes under two policies, compute, chase and contend alone
    assert "runs: 7 (4 in the matrix, 3 references)" in plan, plan
    assert "unreferenced: no ASP for any mix" in plan, plan
    ran = ampkit("campaign", "run", str(spec), "--dir", str(root))
    assert "7 runs: 7 ok" in ran.stdout, ran.stdout + ran.stderr

    ampkit("report", str(root), "--out", str(tmp_path / "report"))
    md = (tmp_path / "report" / "report.md").read_text()
    assert "7 runs collected" in md and "0 excluded" in md, md
    assert "2B2L, time scale 4, 1000 Hz tick on gem5" in md, md
    assert "| pair | colab |" in md and "| sync | colab |" in md, md

    ampkit("campaign", "archive", str(spec), "--dir", str(root))
    archived = sorted(p.name for p in (tmp_path / "archive").iterdir())
    assert len(archived) == 7, archived
    ampkit("report", str(tmp_path / "archive"), "--out", str(tmp_path / "report-archive"))
    for table in ("slowdowns", "per_run", "summary", "geomeans"):
        # every figure the same; only the folder the runs were read from differs
        here = pd.read_csv(tmp_path / "report" / "tables" / f"{table}.csv")
        there = pd.read_csv(tmp_path / "report-archive" / "tables" / f"{table}.csv")
        assert not here.empty, table
        pd.testing.assert_frame_equal(
            here.drop(columns=["campaign"], errors="ignore"),
            there.drop(columns=["campaign"], errors="ignore"),
            check_like=True,
        )
