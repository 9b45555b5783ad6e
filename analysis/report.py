"""The comparison report: report.md, a self-contained report.html, plots, tables.

``write_report(root, out)`` collects the run directories under ``root``,
computes the metrics and writes into ``out``:

    report.md, report.html   the same content; the HTML embeds its images
    plots/*.png              one file per figure, plots.json their bar counts
    tables/*.csv, *.parquet  the collected tables (runs, apps, threads, cpus,
                             tasks) and the derived ones (slowdowns,
                             per_run, summary, geomeans)

Every number in a table links to the run directories it came from; the
excluded runs are listed with their reasons.
"""

import base64
import html
import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot
import matplotlib.pyplot as plt
import pandas as pd

from ampkit import timescale as ts
from ampkit.analysis import metrics, optimum
from ampkit.analysis.collect import PARQUET, Collection, collect
from ampkit.categories import INDEPENDENT_SHARE, WAITING_SHARE, holds_inside
from ampkit.rundir import ALONE_PREFIX, HELD_OUT_ERRORS
from ampkit.timescale import DEFAULT_TICK_HZ, setup_parts

#: figures of normalised means, in report order
#: The parts of energy_j, for the report's energy table.
ENERGY_PARTS = ("cpu_energy_j", "l2_energy_j", "dram_energy_j", "energy_j")

#: The COLAB paper (../shared/papers/001) reports, on gem5 with four
#: big.LITTLE configurations and PARSEC/SPLASH-2 mixes, H_ANTT gains of up
#: to 25% and of 5-15% on average depending on the configuration, against
#: CFS and WASH; read by the kit as H_ANTT normalised to CFS of 0.85-0.95
#: for a configuration's average and 0.75 at best (a gain as 1 - ratio).
PAPER_COLAB_H_ANTT_AVERAGE = (0.85, 0.95)
PAPER_COLAB_H_ANTT_BEST = 0.75
PAPER_COLAB_TEXT = (
    "The COLAB paper reports, on gem5 with four big.LITTLE configurations and PARSEC "
    "and SPLASH-2 mixes, H_ANTT gains of up to 25% and of 5% to 15% on average depending "
    "on the configuration, against CFS and WASH, largest on synchronisation- and "
    "communication-intensive mixes. Read as H_ANTT normalised to cfs (a gain as 1 minus "
    f"the ratio): {PAPER_COLAB_H_ANTT_AVERAGE[0]} to {PAPER_COLAB_H_ANTT_AVERAGE[1]} for a "
    f"configuration's mean over mixes (shaded in the h_antt plot), {PAPER_COLAB_H_ANTT_BEST} "
    "at best. That reading is the kit's."
)

NORMALISED = (
    "h_antt",
    "h_stp",
    "fairness",
    "unfairness",
    "energy_j",
    "energy_per_inst",
    "edp",
    "edp_per_inst",
)


# --- a document rendered twice ------------------------------------------------


@dataclass
class Doc:
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", (level, text)))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, header: list[str], rows: list[list[Any]]) -> None:
        """Cells are text, or (text, [(label, href), ...]) for linked cells."""
        self.blocks.append(("table", (header, rows)))

    def image(self, path: Path, alt: str) -> None:
        self.blocks.append(("img", (path, alt)))

    def markdown(self, base: Path) -> str:
        out: list[str] = []
        for kind, value in self.blocks:
            if kind == "h":
                out.append(f"{'#' * value[0]} {value[1]}\n")
            elif kind == "p":
                out.append(value + "\n")
            elif kind == "img":
                out.append(f"![{value[1]}]({value[0].relative_to(base).as_posix()})\n")
            else:
                header, rows = value
                out.append("| " + " | ".join(header) + " |")
                out.append("|" + "---|" * len(header))
                for row in rows:
                    out.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
                out.append("")
        return "\n".join(out)

    def html(self, title: str) -> str:
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            "<style>body{font-family:sans-serif;max-width:75em;margin:auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px}"
            "td{text-align:right}img{max-width:100%}</style></head><body>",
        ]
        for kind, value in self.blocks:
            if kind == "h":
                out.append(f"<h{value[0]}>{html.escape(value[1])}</h{value[0]}>")
            elif kind == "p":
                out.append(f"<p>{html.escape(value)}</p>")
            elif kind == "img":
                data = base64.b64encode(value[0].read_bytes()).decode()
                out.append(
                    f'<img alt="{html.escape(value[1])}" src="data:image/png;base64,{data}">'
                )
            else:
                header, rows = value
                out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header))
                for row in rows:
                    out.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row))
                out.append("</table>")
        out.append("</body></html>")
        return "\n".join(out) + "\n"


def _md_cell(cell: Any) -> str:
    if isinstance(cell, tuple):
        text, links = cell
        return f"{text} " + " ".join(f"[{label}]({href})" for label, href in links)
    return str(cell).replace("|", "\\|")


def _html_cell(cell: Any) -> str:
    if isinstance(cell, tuple):
        text, links = cell
        anchors = " ".join(
            f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in links
        )
        return f"{html.escape(text)} {anchors}"
    return html.escape(str(cell))


# --- plots ----------------------------------------------------------------------


def grouped_bars(
    values: pd.DataFrame,
    *,
    title: str,
    ylabel: str,
    path: Path,
    reference_line: bool,
    band: tuple[float, float, str] | None = None,
) -> int:
    """A bar per (group, series) from a frame indexed by group, one column per
    series, with a shaded horizontal ``band`` (low, high, label) behind them
    if given; returns the number of bars drawn (NaN bars are not drawn)."""
    groups, series = list(values.index), list(values.columns)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(groups) * max(1, len(series))), 4))
    width = 0.8 / max(1, len(series))
    bars = 0
    for j, name in enumerate(series):
        xs, ys = [], []
        for i, group in enumerate(groups):
            y = values.loc[group, name]
            if isinstance(y, float) and math.isnan(y):
                continue
            xs.append(i + (j - (len(series) - 1) / 2) * width)
            ys.append(float(y))
        ax.bar(xs, ys, width=width, label=str(name))
        bars += len(xs)
    if reference_line:
        ax.axhline(1.0, color="black", linewidth=0.8)
    if band is not None:
        ax.axhspan(band[0], band[1], color="grey", alpha=0.2, label=band[2], zorder=0)
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)
    return bars


# --- the report -------------------------------------------------------------------


def _fmt(x: float) -> str:
    """Three significant digits (four from 10^4 up), halves rounded away
    from zero as a reader rounds them (1.125 -> 1.13, -1.125 -> -1.13), not
    to even."""
    if isinstance(x, float) and math.isnan(x):
        return "-"
    digits = 3 if abs(x) < 1e4 else 4
    if x == 0 or not math.isfinite(x):
        return f"{x:.{digits}g}"
    d = Decimal(repr(float(x)))
    step = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return f"{float(d.quantize(step, rounding=ROUND_HALF_UP)):.{digits}g}"


_REPETITION = re.compile(r"-r(\d+)$")


def _links(runs: list[str], root: Path, out: Path) -> list[tuple[str, str]]:
    """A link per run directory, labelled by its repetition (r0, r1...) or,
    for a run not named by one, by its name."""
    rel = Path(os.path.relpath(root, out))
    links = []
    for run in runs:
        name = Path(run).name
        m = _REPETITION.search(name)
        links.append((f"r{m[1]}" if m else name, (rel / run).as_posix()))
    return links


@dataclass
class Report:
    directory: Path
    plots: dict[str, int]
    collection: Collection


def write_report(
    root: Path,
    out: Path,
    *,
    reference: str = metrics.REFERENCE_POLICY,
    little_only: dict[str, str] | None = None,
    min_apps: int = 2,
    collection: Collection | None = None,
    models: Mapping[str, optimum.AppModel] | None = None,
    partial: bool = False,
) -> Report:
    col = collection if collection is not None else collect(root)
    compared, left_out = (
        metrics.complete_part(col.apps, reference, min_apps) if partial else (col.apps, [])
    )
    slow, per_run, summary, gm = metrics.compute(
        compared,
        col.threads,
        col.cpus,
        clusters=col.clusters,
        memory=col.memory,
        reference=reference,
        little_only=little_only,
        min_apps=min_apps,
    )
    gm_category = category_geomeans(summary, col.runs)
    spans, costs, work = clocks_spanned(col), run_costs(col), policy_work(col)
    tables = out / "tables"
    plots_dir = out / "plots"
    plots_dir.mkdir(parents=True, exist_ok=True)
    col.save(tables)
    for name, frame in (
        ("slowdowns", slow),
        ("per_run", per_run),
        ("summary", summary),
        ("geomeans", gm),
        ("geomeans_by_category", gm_category),
        ("clocks", spans),
        ("cost", costs),
    ):
        _save_table(tables, name, frame)
    if not work.empty:  # a report of runs that did not record it has no such table
        _save_table(tables, "policy_work", work)

    doc = Doc()
    for notice in col.notices:
        doc.p(notice)
    doc.h(1, "Scheduler comparison")
    included = int(col.runs["included"].sum())
    doc.p(
        f"{included} runs collected from {root}, {len(col.excluded)} excluded; "
        f"reference policy {reference} (slowdowns against each application alone "
        f"under it, means normalised to it); 95% confidence intervals over repetitions "
        f"(Student's t). Energy is the CPUs', their L2s' and the DRAM's (gem5's power "
        f"and DRAMPower models) over the measured interval, to the last application's "
        f"first completion; under the restart method that interval holds the work of "
        f"applications run again, more or less of it under each policy, so energy is "
        f"also given per committed instruction (energy_per_inst, nJ), nearly equal work: "
        f"the count includes the kernel's, the idle loop's and any spinning "
        f"instructions; EDP is "
        f"energy x completion time, EDP/inst (edp_per_inst) the same divided by the "
        f"instructions committed, Saez et al.'s energy / IPS. {_timescale_text(col)}"
    )
    if partial:
        doc.p(
            "A partial report (--partial): it compares only the mixes whose runs are "
            "complete so far, each with its run under the reference policy and every "
            "application's alone reference; "
            + (
                f"{len(left_out)} mix(es) left out until their runs come: " + "; ".join(left_out)
                if left_out
                else "none was left out"
            )
            + ". Its comparisons (slowdowns, per-run metrics and their means) are over "
            "those mixes alone; the sections on kernel counters, waiting, clocks and costs "
            "cover every run collected."
        )
    plots: dict[str, int] = {}
    for (engine, platform, scale, tick), part in summary.groupby(metrics.SETUP):
        timescale, tick_hz = int(str(scale)), int(str(tick))
        doc.h(2, f"{_setup_label(str(platform), timescale, tick_hz)} on {engine}")
        _platform_section(
            doc,
            part=part,
            gm=gm,
            gm_category=gm_category,
            slow=slow,
            engine=str(engine),
            platform=str(platform),
            timescale=timescale,
            tick_hz=tick_hz,
            reference=reference,
            root=root,
            out=out,
            plots=plots,
        )
    if models is not None:
        _optimum_section(
            doc,
            col,
            per_run=per_run,
            models=models,
            reference=reference,
            out=out,
            plots=plots,
        )
    _below_one_section(doc, slow, root, out, col)
    _clocks_section(doc, spans)
    _kernel_section(doc, col, out, plots)
    _policy_work_section(doc, work, daemon_shares(col))
    _interference_section(doc, interference_models(col))
    _waiting_section(doc, col)
    _cost_section(doc, costs)
    doc.h(2, "Excluded runs")
    if col.excluded.empty:
        doc.p("None: every run directory found counts.")
    else:
        doc.table(
            ["run", "reason"],
            [
                [
                    ("", [(str(r["run"]), _links([str(r["run"])], root, out)[0][1])]),
                    str(r["reason"]).replace("\n", " "),
                ]
                for r in col.excluded.to_dict("records")
            ],
        )
    (out / "report.md").write_text(doc.markdown(out))
    (out / "report.html").write_text(doc.html("ampkit scheduler comparison"))
    (plots_dir / "plots.json").write_text(json.dumps(plots, indent=2, sort_keys=True) + "\n")
    return Report(directory=out, plots=plots, collection=col)


def _alone_behaviour(col: Collection) -> dict[str, tuple[float, float]]:
    """Per run of one application: its parallelism (threads' CPU time over
    its turnaround) and its blocked share (waiting, section above)."""
    apps = col.apps
    if apps.empty or col.threads.empty:
        return {}
    alone = apps[apps.groupby("run")["app"].transform("size") == 1]
    cpu = col.threads.groupby("run")["cpu_ns"].sum(min_count=1)
    blocked = waiting(col).groupby("run")["blocked_share"].mean()
    out = {}
    for r in alone.to_dict("records"):
        run = str(r["run"])
        par = float(cpu.get(run, math.nan)) / float(r["turnaround_ns"])
        out[run] = (par, float(blocked.get(run, math.nan)))
    return out


def big_shares(col: Collection) -> dict[tuple[str, str, int], float]:
    """Per application run, (run, app, instance): the share of its threads'
    run time the kernel counted on big CPUs (its per-task counters, kept
    under every policy; by the platform's CPUs, _by_platform_cpus)."""
    tasks = col.tasks
    need = {"run", "app", "instance", "big_ns", "little_ns"}
    if tasks.empty or not need <= set(tasks.columns):
        return {}
    t = _by_platform_cpus(tasks)  # the tasks table carries each run's CPU counts
    sums = t.groupby(["run", "app", "instance"])[["big_ns", "little_ns"]].sum(min_count=1)
    ran = sums["big_ns"] + sums["little_ns"]
    share = (sums["big_ns"] / ran.where(ran > 0)).dropna().reset_index(name="share")
    return {
        (str(r["run"]), str(r["app"]), int(r["instance"])): float(r["share"])
        for r in share.to_dict("records")
    }


def _below_one_section(
    doc: Doc, slow: pd.DataFrame, root: Path, out: Path, col: Collection
) -> None:
    """Every application that ran faster in its mix than alone: its slowdown
    is averaged in with the others, so the reader must see it and its likely
    causes, with what its reference run alone shows: how long it was, how
    many CPUs' worth the program kept busy, how much it waited."""
    below = slow[slow["slowdown"] < 1.0]
    doc.h(2, "Slowdowns below 1")
    if below.empty:
        doc.p("None: no application ran faster in a mix than alone.")
        return
    doc.p(
        f"{len(below)} application runs finished faster in their mix than alone, "
        "which a slowdown cannot mean: either the reference run alone was not at "
        "steady state (too short, or timed with its start-up: see timed_by), or the "
        "program scales negatively, so that sharing the CPUs with other applications "
        "(fewer CPUs each) helped it. They are counted in the means above; check the "
        "program's scaling alone before trusting those (the catalogue's, measured on gem5: "
        'the kit\'s measurements/gem5-workloads, "Scaling alone"). Beside each: its reference '
        "alone (ms), the CPUs' worth of work it kept busy there (parallelism: threads' "
        "CPU time over turnaround, low for a program that waits on itself), the "
        "share of its threads' lives blocked on futexes there, the share of its "
        "threads' run time on big CPUs in the mix and alone (the kernel's counters), "
        "and the first cause those figures point to. A third cause is placement: "
        "the policy in the mix may give the application more of the big CPUs than "
        "the reference policy gave it alone."
    )
    behaviour = _alone_behaviour(col)
    on_big = big_shares(col)
    rows = []
    for r in below.sort_values("slowdown").to_dict("records"):
        refs = [behaviour[run] for run in r.get("alone_runs") or [] if run in behaviour]
        par = sum(p for p, _ in refs) / len(refs) if refs else math.nan
        blk = sum(b for _, b in refs) / len(refs) if refs else math.nan
        alone_ms = float(r["alone_ns"]) / 1e6 if "alone_ns" in r else math.nan
        here = on_big.get((str(r["run"]), str(r["app"]), int(r["instance"])), math.nan)
        alone_big = [
            on_big[(run, str(r["app"]), 0)]
            for run in r.get("alone_runs") or []
            if (run, str(r["app"]), 0) in on_big
        ]
        there = sum(alone_big) / len(alone_big) if alone_big else math.nan
        rows.append(
            [
                f"{r['engine']} {r['platform']}",
                str(r["mix"]),
                str(r["policy"]),
                f"{r['app']}#{r['instance']}",
                _fmt(float(r["slowdown"])),
                str(r.get("timed_by", "")),
                _fmt(alone_ms),
                _fmt(par),
                _fmt(blk),
                f"{_fmt(here)} / {_fmt(there)}",
                likely_cause(r, alone_ms, par, blk, big_here=here, big_alone=there),
                ("", _links([str(r["run"])], root, out)),
            ]
        )
    doc.table(
        [
            *("machine", "mix", "policy", "application", "slowdown", "timed by"),
            *("alone ms", "alone parallelism", "alone blocked", "on big CPUs mix / alone"),
            *("likely cause", "run"),
        ],
        rows,
    )


#: A share of its threads' run time on big CPUs this much higher in the
#: mix than alone makes placement the likely cause of a slowdown below 1:
#: moving 15% of the work to cores about three times as fast (the gem5
#: platform's speedups, 2-4) saves about a tenth of the time, as much as
#: the slowdowns below 1 seen (0.8-0.99).
PLACEMENT_GAIN = 0.15
#: A reference alone shorter than this many PELT half-lives (at its time
#: scale) is the baseline's start-up more than its steady state: a
#: thread that started on a little CPU becomes a misfit after about two
#: and a third, so under three it ran less than one at steady state.
STEADY_HALFLIVES = 3.0


def likely_cause(
    row: Mapping[Any, Any],
    alone_ms: float,
    par: float,
    blocked: float,
    *,
    big_here: float = math.nan,
    big_alone: float = math.nan,
) -> str:
    """The first of the causes a slowdown below 1 can have that the
    application's runs show, in the order a reader should rule them out:
    a reference timed by its whole process, one too short for the
    baseline to settle, a placement in the mix that gave it more of the
    big CPUs than the reference policy did alone (``big_here`` against
    ``big_alone``: shares of its threads' run time on big CPUs), a program
    that waits on itself alone (fewer CPUs each may help it); else none
    of these."""
    if row.get("timed_by") == "process":
        return "reference timed with start-up and self-check (no region)"
    known = row.get("timescale")
    scale = float(known) if isinstance(known, int | float) and not math.isnan(known) else 1.0
    halflives = alone_ms / (ts.PELT_HALFLIFE_MS / max(scale, 1.0))
    if halflives < STEADY_HALFLIVES:
        return f"reference short: {halflives:.1f} PELT half-lives, not at steady state"
    if big_here - big_alone >= PLACEMENT_GAIN:
        return (
            f"placed better than alone: {big_here:.0%} of its threads' run time on big CPUs "
            f"here, {big_alone:.0%} alone under the reference"
        )
    threads = row.get("threads")
    if blocked >= WAITING_SHARE and isinstance(threads, int | float) and par < threads / 2:
        return (
            f"waits on itself alone ({blocked:.0%} blocked, {par:.1f} of {int(threads)} "
            "threads busy): negative scaling likely"
        )
    return "none the reference shows: check the program's scaling alone"


def _setup_label(platform: str, timescale: int, tick_hz: int) -> str:
    """A setup as headings and plot titles name it: the platform, then the
    time scale where it is not 1 and the tick where it is not 250 Hz."""
    return ", ".join([platform, *setup_parts(timescale, tick_hz)])


def _setup_tag(platform: str, timescale: int, tick_hz: int) -> str:
    """A setup as plot file names name it: 2B2L, 2B2L-x4, 2B2L-x4-hz1000."""
    return (
        platform
        + (f"-x{timescale}" if timescale != 1 else "")
        + (f"-hz{tick_hz}" if tick_hz != DEFAULT_TICK_HZ else "")
    )


def _of_setup(
    frame: pd.DataFrame, engine: str, platform: str, timescale: int, tick_hz: int
) -> pd.DataFrame:
    """The rows of ``frame`` of one setup (metrics.SETUP)."""
    return frame[
        (frame["engine"] == engine)
        & (frame["platform"] == platform)
        & (frame["timescale"] == timescale)
        & (frame["tick_hz"] == tick_hz)
    ]


def _timescale_text(col: Collection) -> str:
    """The header's account of the kernel's time scale(s) (ampkit/timescale.py)
    and, where any run's is not the default 250 Hz, of its tick(s)."""
    runs = col.runs
    if "timescale" not in runs.columns or runs.empty:
        return ""
    scales = sorted({int(s) for s in runs.loc[runs["included"], "timescale"].dropna()})
    if scales in ([], [1]):
        text = "Kernel time scale 1: the scheduler's clocks as on hardware."
    else:
        named = " and ".join(str(s) for s in scales)
        text = (
            f"Kernel time scales {named} (sched_timescale=k on the command line: PELT, "
            "load balancing, CFS's slices, COLAB's periods and WASH's quantum k times as "
            "fast, the tick not): runs are compared and referenced only within one scale."
        )
    return text + _tick_text(runs) + _counters_text(runs)


def _counters_text(runs: pd.DataFrame) -> str:
    """The header's account of the kernel's per-task counters, which cost
    every policy that keeps them (the reference included): whether the
    included runs kept them, as their guests read kernel.sched_colab_stats;
    nothing where no run recorded it."""
    if "counters" not in runs.columns:
        return ""
    kept = runs.loc[runs["included"], "counters"].dropna()
    if kept.empty:
        return ""
    if (kept == 1).all():
        return (
            " Every run kept the kernel's per-task counters (kernel.sched_colab_stats=1: "
            "run time per side, futex waiting, flags, moves) under every policy, the "
            "reference included, so that every policy is measured alike and every "
            "policy carries their cost (on gem5, 0.4-0.6% of a pipe round trip and "
            "2.6-4% of a mutex hand-off under cfs: evaluations/gem5-2B2L/README.md, "
            "'Scheduler overhead')."
        )
    if (kept == 0).all():
        return " No run kept the per-task counters beyond what its policy needs."
    return (
        f" {int((kept == 1).sum())} of {len(kept)} runs kept the per-task counters under "
        "every policy and the others did not: their costs differ."
    )


def _tick_text(runs: pd.DataFrame) -> str:
    """The header's account of the kernel's tick(s), after its time scales':
    nothing when every included run ticked at the default 250 Hz (as every
    run did before the manifests recorded the tick), so that the reports of
    such runs read as they always did."""
    if "tick_hz" not in runs.columns:
        return ""
    ticks = sorted({int(t) for t in runs.loc[runs["included"], "tick_hz"].dropna()})
    if ticks in ([], [DEFAULT_TICK_HZ]):
        return ""
    if len(ticks) == 1:
        return (
            f" Kernel tick {ticks[0]} Hz (CONFIG_HZ, which the run manifests record; the "
            f"kit's default kernels tick at {DEFAULT_TICK_HZ} Hz, kernel-hz1000 at 1000 Hz)."
        )
    named = " and ".join(f"{t} Hz" for t in ticks)
    return (
        f" Kernel ticks {named} (CONFIG_HZ, which the run manifests record; the kit's "
        f"default kernels tick at {DEFAULT_TICK_HZ} Hz, kernel-hz1000 at 1000 Hz): runs are "
        "compared and referenced only within one tick."
    )


def category_geomeans(summary: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The geometric means over mixes (metrics.geomeans), per mix category
    as the runs' manifests declare it (the runs table's ``category``);
    empty where none declares one."""
    if summary.empty or "category" not in runs or runs["category"].isna().all():
        return pd.DataFrame()
    of_mix = runs.dropna(subset=["category"]).drop_duplicates("mix").set_index("mix")
    with_category = summary.join(of_mix["category"], on="mix").dropna(subset=["category"])
    return metrics.geomeans(with_category, by=("category",))


def _beyond_the_paper(g: pd.DataFrame) -> list[str]:
    """colab's means of H_ANTT normalised to cfs that beat the paper's best
    case: a gain the paper never saw is to be explained before it is
    believed (DESIGN section 11)."""
    hits = g[(g["policy"] == "colab") & (g["metric"] == "h_antt")]
    return [
        f"{r.get('category', 'all mixes')} {_fmt(r['across_mixes'])}"
        for r in hits.to_dict("records")
        if r["across_mixes"] < PAPER_COLAB_H_ANTT_BEST
    ]


def _paper_range(doc: Doc, g: pd.DataFrame, reference: str) -> None:
    """The COLAB paper's range, where colab is compared with cfs, and a
    warning for every mean beyond its best case."""
    if reference != "cfs" or "colab" not in set(g["policy"]):
        return
    doc.p(PAPER_COLAB_TEXT)
    beyond = _beyond_the_paper(g)
    if beyond:
        doc.p(
            f"Beyond the paper's best case (colab's h_antt mean under "
            f"{PAPER_COLAB_H_ANTT_BEST} of cfs): {'; '.join(beyond)}. "
            "Find out why from the kernel counters and the references (runs too short "
            "for the baseline's own clocks, a reference not at steady state, a workload "
            "artefact) before reading it as COLAB's gain."
        )


def _category_table(doc: Doc, g: pd.DataFrame) -> None:
    """Over the mixes of each category, each policy normalised to the
    reference."""
    if g.empty:
        return
    doc.h(3, "By mix category (as each mix declares it), the same means")
    doc.p(
        "A mix's category is the one its description declares; whether its programs "
        "wait as that category says is measured in the section on waiting below "
        "(ampkit mix check compares the two where a behaviour table has them)."
    )
    keys = g[["category", "policy"]].drop_duplicates().sort_values(["category", "policy"])
    rows = []
    for category, policy in keys.itertuples(index=False):
        hits = g[(g["category"] == category) & (g["policy"] == policy)]
        mixes = str(int(hits["mixes"].max()))
        rows.append([str(category), str(policy), mixes, *_means_cells(hits)])
    doc.table(["category", "policy", "mixes", *NORMALISED], rows)


def _means_cells(hits: pd.DataFrame) -> list[str]:
    """A cell per NORMALISED metric: its mean over mixes in ``hits`` (the
    geomeans rows of one policy, and category where there is one), '-'
    where it has none."""
    cells = []
    for name in NORMALISED:
        hit = hits[hits["metric"] == name]
        cells.append(_fmt(float(hit["across_mixes"].iloc[0])) if not hit.empty else "-")
    return cells


def _platform_section(
    doc: Doc,
    *,
    part: pd.DataFrame,
    gm: pd.DataFrame,
    gm_category: pd.DataFrame,
    slow: pd.DataFrame,
    engine: str,
    platform: str,
    timescale: int,
    tick_hz: int,
    reference: str,
    root: Path,
    out: Path,
    plots: dict[str, int],
) -> None:
    policies = [p for p in sorted(set(part["policy"])) if p != reference]
    g = _of_setup(gm, engine, platform, timescale, tick_hz)
    tag = _setup_tag(platform, timescale, tick_hz)
    setup = _setup_label(platform, timescale, tick_hz)
    if policies:
        doc.h(
            3,
            f"Over mixes, normalised to {reference}: the geometric mean "
            "(the arithmetic mean for fairness and ASP, which can be zero or negative)",
        )
        rows = [[policy, *_means_cells(g[g["policy"] == policy])] for policy in policies]
        doc.table(["policy", *NORMALISED], rows)
        _paper_range(doc, g, reference)
        if not gm_category.empty:
            by_category = _of_setup(gm_category, engine, platform, timescale, tick_hz)
            by_category = by_category[by_category["policy"].isin(policies)]
            _category_table(doc, by_category)
            if reference == "cfs":
                beyond = _beyond_the_paper(by_category)
                if beyond:
                    doc.p(
                        "Categories beyond the paper's best case (colab's h_antt mean): "
                        + "; ".join(beyond)
                        + "."
                    )
    for name in NORMALISED:
        m = part[part["metric"] == name]
        if m.empty:
            doc.p(f"{name}: not measured on this engine (no data in these runs).")
            continue
        metric = metrics.METRICS[name]
        doc.h(3, f"{name} ({metric.better} is better): {metric.description}")
        doc.table(
            ["mix", "policy", "mean", "± 95% CI", "n", f"/ {reference}", "runs"],
            [
                [
                    r["mix"],
                    r["policy"],
                    _fmt(r["mean"]),
                    _fmt(r["ci95"]),
                    str(r["n"]),
                    _fmt(r["normalised"]),
                    ("", _links(list(r["runs"]), root, out)),
                ]
                for r in m.sort_values(["mix", "policy"]).to_dict("records")
            ],
        )
        if policies:
            wide = m[m["policy"] != reference].pivot(
                index="mix", columns="policy", values="normalised"
            )
            over = g[g["metric"] == name].set_index("policy")["across_mixes"]
            label = "geomean" if metrics.METRICS[name].positive else "mean"
            wide.loc[label] = [over.get(p, math.nan) for p in wide.columns]
            path = out / "plots" / f"{engine}-{tag}-{name}.png"
            paper = name == "h_antt" and reference == "cfs" and "colab" in wide.columns
            plots[path.name] = grouped_bars(
                wide,
                title=f"{name} normalised to {reference}, {setup} ({engine})",
                ylabel=f"{name} / {reference}",
                path=path,
                reference_line=True,
                band=(*PAPER_COLAB_H_ANTT_AVERAGE, "COLAB paper: average") if paper else None,
            )
            doc.image(path, f"{name} per mix normalised to {reference}")
    parts = part[part["metric"].isin(ENERGY_PARTS)]
    if not parts.empty and parts["mean"].notna().any():
        doc.h(3, "Energy by component (mean over repetitions, joules)")
        wide = parts.pivot_table(
            index=["mix", "policy"], columns="metric", values="mean", dropna=False
        )
        doc.table(
            ["mix", "policy", *ENERGY_PARTS],
            [
                [
                    str(index[0]),
                    str(index[1]),
                    *(_fmt(float(row.get(c, math.nan))) for c in ENERGY_PARTS),
                ]
                for index, row in wide.iterrows()
                if isinstance(index, tuple)
            ],
        )
    s = _of_setup(slow, engine, platform, timescale, tick_hz)
    per_app = s.groupby(["mix", "app", "instance", "policy"], as_index=False)["slowdown"].mean()
    per_app["application"] = (
        per_app["mix"] + ": " + per_app["app"] + "#" + per_app["instance"].astype(str)
    )
    wide = per_app.pivot(index="application", columns="policy", values="slowdown")
    path = out / "plots" / f"{engine}-{tag}-slowdowns.png"
    plots[path.name] = grouped_bars(
        wide,
        title=f"slowdown per application (mean over repetitions), {setup} ({engine})",
        ylabel="turnaround / turnaround alone",
        path=path,
        reference_line=True,
    )
    doc.h(3, "Slowdown per application")
    doc.image(path, "slowdown per application")
    doc.p(
        "The turnarounds the slowdowns divide, in simulated (gem5) or guest (QEMU) "
        "milliseconds: each application in its mix (the mean over repetitions, with "
        "their number) and alone under the reference policy; timed by the region of "
        "interest where the program reports one, by its process otherwise."
    )
    turns = s.groupby(["mix", "app", "instance", "policy"], as_index=False).agg(
        runs=("turnaround_ns", "size"),
        turnaround_ns=("turnaround_ns", "mean"),
        alone_ns=("alone_ns", "mean"),
        slowdown=("slowdown", "mean"),
        timed_by=("timed_by", "first"),
    )
    doc.table(
        ["mix", "application", "policy", "runs", "turnaround ms", "alone ms", "slowdown"],
        [
            [
                str(r["mix"]),
                f"{r['app']}#{r['instance']}" + ("" if r["timed_by"] == "region" else " (process)"),
                str(r["policy"]),
                str(r["runs"]),
                _fmt(r["turnaround_ns"] / 1e6),
                _fmt(r["alone_ns"] / 1e6),
                _fmt(r["slowdown"]),
            ]
            for r in turns.to_dict("records")
        ],
    )


def _save_table(tables: Path, name: str, frame: pd.DataFrame) -> None:
    """A derived table as CSV, and as Parquet where pyarrow is installed."""
    frame.to_csv(tables / f"{name}.csv", index=False)
    if PARQUET:
        frame.to_parquet(tables / f"{name}.parquet", index=False)


def _optimum_section(
    doc: Doc,
    col: Collection,
    *,
    per_run: pd.DataFrame,
    models: Mapping[str, optimum.AppModel],
    reference: str,
    out: Path,
    plots: dict[str, int],
) -> None:
    """Saez et al.'s analytical schedules of each mix of single-threaded
    applications, beside each policy's schedule as measured."""
    doc.h(2, "The analytical schedules (Saez et al.)")
    points, fractions, skipped = optimum.beside_runs(
        metrics.with_setup(col.apps), _by_platform_cpus(col.tasks), per_run, models
    )
    for name, frame in (("optimum", points), ("optimum_fractions", fractions)):
        _save_table(out / "tables", name, frame)
    doc.p(
        "Per mix of single-threaded applications the speedup profile covers: the four "
        "schedules of Saez et al.'s model (eq. 1, 4-9; analysis/README.md, 'The analytical "
        "optimum'), HSP, Opt-Unf, Opt-EDP (exact optima) and EEF-Driven, and each policy's "
        "schedule as it ran (each application's share of its run time on big CPUs, from "
        "the kernel's per-task counters, the mean over repetitions) as the model reads it, "
        "beside the ASP, unfairness and EDP per instruction the runs measured. The "
        "optima are the best of the work-conserving schedules (every big CPU busy), and a "
        "measured schedule is read by the model only where its shares add up to the big "
        "CPUs (within 2%): one that left a big CPU idle, or whose applications ended at "
        "different times, is listed but not plotted. EDP is the model's, relative to "
        "Opt-EDP's for the same mix; with its time fixed, it ranks schedules by the "
        "workload's energy per instruction. Where the model's reading of a measured "
        "schedule and the measurement part, the gap holds what the model leaves out "
        "(contention, migrations, idle time), the difference between the profile's alone "
        "runs and the mix's references, and what the profile's energy per instruction "
        "holds (analysis/README.md, 'The analytical optimum')."
    )
    if points.empty:
        doc.p(
            "No mix qualifies: "
            + (
                "; ".join(f"{r['mix']} ({r['why']})" for r in skipped.to_dict("records"))
                if not skipped.empty
                else "the runs hold no multi-programmed mix"
            )
            + "."
        )
        return
    shown = fractions.groupby([*metrics.SETUP, "mix", "schedule"], sort=False)
    for (engine, platform, scale, tick), part in points.groupby(metrics.SETUP, sort=True):
        label = _setup_label(str(platform), int(str(scale)), int(str(tick)))
        doc.h(3, f"{label} on {engine}")
        rows = []
        for r in part.to_dict("records"):
            f = shown.get_group((engine, platform, scale, tick, r["mix"], r["schedule"]))
            shares = ", ".join(
                f"{a} {v:.2f}" for a, v in zip(f["app"], f["big_fraction"], strict=True)
            )
            if not r["in_model"]:
                shares += f" (sum {r['big_sum']:.2f}: not plotted)"
            measured = r["kind"] == "measured"
            rows.append(
                [
                    str(r["mix"]),
                    str(r["schedule"]) + (" (measured F)" if measured else ""),
                    shares,
                    _fmt(r["asp"]),
                    _fmt(r["unfairness"]),
                    _fmt(r["edp_vs_optimum"]),
                    _fmt(r.get("measured_asp", math.nan)),
                    _fmt(r.get("measured_unfairness", math.nan)),
                    _fmt(_against(part, r, "measured_edp_per_inst", reference)),
                ]
            )
        doc.table(
            [
                *("mix", "schedule", "big-CPU share F_i", "ASP (model)"),
                *("unfairness (model)", "EDP / Opt-EDP (model)"),
                *("ASP (measured)", "unfairness (measured)"),
                f"EDP/inst / {reference}'s (measured)",
            ],
            rows,
        )
        tag = _setup_tag(str(platform), int(str(scale)), int(str(tick)))
        path = out / "plots" / f"optimum-{tag}.png"
        plots[path.name] = _optimum_scatter(
            part[part["in_model"].astype(bool)],
            path,
            title=f"{label}: schedules in Saez et al.'s model",
        )
        doc.image(path, f"ASP and unfairness against EDP, {label}")
    if not skipped.empty:
        left_out = [
            f"{r['mix']} on {r['platform']} ({r['why']})" for r in skipped.to_dict("records")
        ]
        doc.p("Left out: " + "; ".join(left_out) + ".")


def _against(points: pd.DataFrame, row: Mapping[Any, Any], column: str, reference: str) -> float:
    """row's column over the reference policy's in the same mix (NaN where
    either is missing)."""
    if column not in points:
        return math.nan
    base = points[(points["mix"] == row["mix"]) & (points["schedule"] == reference)][column]
    value = row.get(column, math.nan)
    if base.empty or not isinstance(value, float) or not float(base.iloc[0]) > 0:
        return math.nan
    return value / float(base.iloc[0])


def _optimum_scatter(points: pd.DataFrame, path: Path, *, title: str) -> int:
    """ASP and unfairness against EDP / Opt-EDP, a marker per schedule, as
    the paper's figures 1 and 2 (a measured policy where the model reads
    its measured shares); returns the points drawn."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    drawn = 0
    markers = dict(zip(optimum.SCHEDULERS, "^sDo", strict=True))
    for schedule, part in points.groupby("schedule", sort=False):
        marker = markers.get(str(schedule), "x")
        label = str(schedule) if schedule in markers else f"{schedule} (measured F)"
        left.scatter(part["edp_vs_optimum"], part["asp"], marker=marker, label=label)
        right.scatter(part["edp_vs_optimum"], part["unfairness"], marker=marker, label=label)
        drawn += 2 * len(part)
    left.set_xlabel("EDP / Opt-EDP's (lower is better)")
    left.set_ylabel("ASP (higher is better)")
    right.set_xlabel("EDP / Opt-EDP's (lower is better)")
    right.set_ylabel("unfairness (lower is better)")
    left.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)
    return drawn


def _by_platform_cpus(tasks: pd.DataFrame) -> pd.DataFrame:
    """The kernel's big and little run time, judged by the platform the run
    described rather than by the guest's capacities: Linux rescales a
    machine of one core type to capacity 1024, so on 0B<L>L the kernel
    counts every CPU as big. On a platform without big CPUs all run time is
    little, without little CPUs all big."""
    if not {"big", "little"} <= set(tasks.columns):
        return tasks
    t = tasks.copy()
    total = t["big_ns"] + t["little_ns"]
    only_little = t["big"] == 0
    only_big = t["little"] == 0
    t["big_ns"] = total.where(only_big, t["big_ns"].where(~only_little, 0))
    t["little_ns"] = total.where(only_little, t["little_ns"].where(~only_big, 0))
    return t


def waiting(col: Collection) -> pd.DataFrame:
    """Per application run: the share of its threads' lives they spent
    blocked on futexes, and the waiting their releases ended over the same
    time (the kernel's per-task counters, kept under every policy alike)."""
    keys = ["run", "platform", "policy", "mix", "app", "instance"]
    need = {"futex_blocked_ns", "futex_caused_ns"}
    if col.tasks.empty or not need <= set(col.tasks.columns) or col.threads.empty:
        return pd.DataFrame(columns=[*keys, "blocked_share", "caused_share"])
    # min_count: a missing counter stays missing rather than reading as 0
    counters = col.tasks.groupby(keys, as_index=False)[sorted(need)].sum(min_count=1)
    lived = col.threads.groupby(keys, as_index=False)["wall_ns"].sum(min_count=1)
    w = counters.merge(lived, on=keys)
    alive = w["wall_ns"].where(w["wall_ns"] > 0)
    w["blocked_share"] = w["futex_blocked_ns"] / alive
    w["caused_share"] = w["futex_caused_ns"] / alive
    return w[[*keys, "blocked_share", "caused_share"]]


def _waiting_section(doc: Doc, col: Collection) -> None:
    w = waiting(col)
    doc.h(2, "Waiting on futexes")
    if w.empty:
        doc.p("The runs carry no per-task futex counters.")
        return
    doc.p(
        "Per application: the share of its threads' lives spent blocked on futexes "
        "and the waiting its releases ended, over the same time (the kernel's per-task "
        "counters, kept under every policy, the reference included). A "
        "synchronisation or communication mix whose programs barely wait gives a "
        "bottleneck-aware policy nothing to act on (ampkit mix check)."
    )
    agg = w.groupby(["platform", "mix", "app", "policy"], as_index=False)[
        ["blocked_share", "caused_share"]
    ].mean()
    doc.table(
        ["platform", "mix", "app", "policy", "blocked", "caused"],
        [
            [
                r["platform"],
                r["mix"],
                r["app"],
                r["policy"],
                _fmt(r["blocked_share"]),
                _fmt(r["caused_share"]),
            ]
            for r in agg.to_dict("records")
        ],
    )
    _inside_table(doc, w, col.runs, col.apps)


def categories_inside(w: pd.DataFrame, runs: pd.DataFrame, apps: pd.DataFrame) -> pd.DataFrame:
    """Per mix run of two applications or more whose mix declares a
    category: whether its applications, by their waiting inside the run,
    are of it (the catalogue's rule, ampkit.categories.holds_inside, on
    the blocked shares of the run instead of those alone). Alone, a
    program's threads have the CPUs to themselves; in a mix a policy
    decides how many they share, and a lock whose holder and waiters end
    up on one CPU stops being contended: a mix can lose its waiting under
    one policy and keep it under another. A run counts whole or not at
    all, as for 'ampkit mix waiting': one with an application whose share
    is missing (no counters, or no time lived) is not judged."""
    keys = ["platform", "mix", "policy", "run"]
    columns = [*keys, "engine", "category", "apps", "waiting", "holds"]
    if w.empty or "category" not in runs or apps.empty:
        return pd.DataFrame(columns=columns)
    per_run = w.groupby(keys, as_index=False).agg(
        apps=("blocked_share", "size"),
        judged=("blocked_share", "count"),  # the shares that are there
        waiting=("blocked_share", lambda s: int((s >= WAITING_SHARE).sum())),
        shares=("blocked_share", list),
    )
    recorded = apps.groupby("run").size().rename("recorded")
    about = runs.dropna(subset=["category"]).set_index("run")[["category", "engine"]]
    per_run = per_run.join(recorded, on="run").join(about, on="run", how="inner")
    whole = (per_run["judged"] == per_run["apps"]) & (per_run["apps"] == per_run["recorded"])
    per_run = per_run[whole & (per_run["apps"] >= 2)].copy()
    per_run["holds"] = [
        holds_inside(str(c), shares)
        for c, shares in zip(per_run["category"], per_run["shares"], strict=True)
    ]
    return per_run[columns].reset_index(drop=True)


def _inside_table(doc: Doc, w: pd.DataFrame, runs: pd.DataFrame, apps: pd.DataFrame) -> None:
    inside = categories_inside(w, runs, apps)
    if inside.empty:
        return
    doc.h(3, "Each mix's category, inside the mix")
    doc.p(
        f"Whether each mix, under each policy, kept the category it declares by its "
        f"applications' waiting inside the run (synchronisation and communication: at "
        f"least half of them blocked {WAITING_SHARE:.0%} of their threads' lives or more; "
        f"compute: every one under {INDEPENDENT_SHARE:.0%}). Where a policy's placement "
        "took the waiting away, that policy's figures for the mix compare it on a mix "
        "of another kind than the one named ('ampkit mix waiting' gives each program's "
        "shares beside its own alone)."
    )
    rows = []
    for (engine, platform, mix, policy), part in inside.groupby(
        ["engine", "platform", "mix", "policy"]
    ):
        kept = int(part["holds"].astype(bool).sum())
        rows.append(
            [
                str(engine),
                str(platform),
                str(mix),
                str(policy),
                str(part["category"].iloc[0]),
                f"{kept} of {len(part)}",
                "" if kept == len(part) else "LOST",
            ]
        )
    doc.table(["engine", "platform", "mix", "policy", "category", "runs that kept it", ""], rows)


#: The issue's aim for every clock a run is to be long against.
CLOCKS_AIM = 10


def measured_interval_ns(apps: pd.DataFrame) -> pd.Series:
    """Per run, its measured interval: to its last application's first
    completion, ns."""
    return apps.groupby("run")["turnaround_ns"].max()


def clocks_spanned(col: Collection) -> pd.DataFrame:
    """Per included run: its measured interval (to the last application's
    first completion, ms) and how many of each scheduler clock it spans at
    its setup: ticks, COLAB ranking periods, WASH quanta and PELT
    half-lives, each period the kernel's unscaled one (as the guest read
    it, the default where it did not) over the run's time scale."""
    runs = col.runs[col.runs["included"].astype(bool)]
    if runs.empty or col.apps.empty:
        return pd.DataFrame()
    interval = (measured_interval_ns(col.apps) / 1e6).rename("run_ms")
    frame = metrics.with_setup(runs).join(interval, on="run").dropna(subset=["run_ms"])
    scale = frame["timescale"].astype(float)
    tick = frame["tick_hz"].astype(float)
    rank = frame["colab_rank_period_ms"].fillna(ts.DEFAULT_COLAB_RANK_PERIOD_MS)
    quantum = frame["wash_quantum_ms"].fillna(ts.DEFAULT_WASH_QUANTUM_MS)
    floor = ts.MIN_PERIOD_TICKS * 1000 / tick
    return frame.assign(
        ticks=frame["run_ms"] * tick / 1000,
        # the knob over the scale, two ticks at the least
        colab_periods=frame["run_ms"] / (rank / scale).clip(lower=floor),
        wash_quanta=frame["run_ms"] / (quantum / scale).clip(lower=floor),
        pelt_halflives=frame["run_ms"] / (ts.PELT_HALFLIFE_MS / scale),
        knobs_read=frame["colab_rank_period_ms"].notna() & frame["wash_quantum_ms"].notna(),
        # the scale the kernel says it ran at, against the command line's
        scale_disagrees=frame["timescale_knob"].notna() & (frame["timescale_knob"] != scale),
    )


def run_costs(col: Collection) -> pd.DataFrame:
    """Per run directory that finished, counted or not: the wall-clock
    seconds it took (its manifest's) and those it spent booting the
    checkpoint it restored (gem5, where it booted one), its role (a run of
    the matrix, or a reference: an application alone, on a platform of both
    kinds or of one; told by its mix's name, ``ALONE_PREFIX``) and,
    where gem5 measured it, the simulated ms of its measured interval and
    the wall seconds each took."""
    runs = col.runs
    if runs.empty or "wall_s" not in runs or runs["wall_s"].isna().all():
        return pd.DataFrame()
    frame = runs.dropna(subset=["wall_s"])[
        ["run", "platform", "policy", "mix", "big", "little", "included", "wall_s", "boot_wall_s"]
    ].copy()
    frame["boot_wall_s"] = frame["boot_wall_s"].fillna(0.0)
    alone = frame["mix"].astype(str).str.startswith(ALONE_PREFIX)
    frame["role"] = "matrix"
    frame.loc[alone, "role"] = "reference alone"
    frame.loc[alone & (frame["big"] == 0), "role"] = "reference, little CPUs only"
    frame.loc[alone & (frame["little"] == 0), "role"] = "reference, big CPUs only"
    cpus = col.cpus
    if not cpus.empty and "sim_seconds" in cpus:
        measured = cpus[cpus["measured"].astype(bool)].groupby("run")["sim_seconds"].max()
        frame = frame.join((measured * 1e3).rename("sim_ms"), on="run")
    else:
        frame["sim_ms"] = math.nan
    frame["wall_s_per_sim_ms"] = frame["wall_s"] / frame["sim_ms"].where(frame["sim_ms"] > 0)
    return frame.drop(columns=["big", "little"]).reset_index(drop=True)


def _cost_row(labels: list[str], part: pd.DataFrame) -> list[str]:
    """A row of the cost table: its labels, then what ``part``'s runs cost."""
    wall = part["wall_s"]
    return [
        *labels,
        str(len(part)),
        str(int((~part["included"].astype(bool)).sum())),
        f"{wall.sum() / 3600:.2f}",
        f"{part['boot_wall_s'].sum() / 3600:.2f}",
        f"{wall.mean():,.0f}",
        f"{wall.min():,.0f}-{wall.max():,.0f}",
        _fmt(part["wall_s_per_sim_ms"].median()),
    ]


def _cost_section(doc: Doc, costs: pd.DataFrame) -> None:
    """The report's section of run_costs(): the frame the cost table holds."""
    doc.h(2, "What the runs cost")
    if costs.empty:
        doc.p("No run records how long it took (its manifest's wall_s).")
        return
    doc.p(
        "Wall-clock time each run took on the machine that ran it (its manifest's; "
        "for gem5, the simulation of the whole run: checkpoint restore, warm-up and "
        "the measured interval), by role, policy and platform, summed over runs (not "
        "the elapsed time of a campaign that ran several at once); runs that finished "
        "but are excluded count in the cost and in no metric, runs killed before "
        "finishing are in neither. The boots column is the checkpoint boots these runs "
        "made (a checkpoint is kept across campaigns, so a run that restored one booted "
        "before made none). The last "
        "column divides a run's wall seconds by the simulated milliseconds of its "
        "measured interval (gem5's statistics): the rest of the run is in the "
        "numerator too. Two gem5 processes sharing a machine's cores each run "
        "slower than one alone."
    )
    groups = costs.groupby(["role", "policy", "platform"], sort=True)
    rows = [_cost_row([str(k) for k in keys], part) for keys, part in groups]
    rows.append(_cost_row(["all", "", ""], costs))
    doc.table(
        [
            *("role", "policy", "platform", "runs", "excluded", "wall hours", "boots, hours"),
            *("wall s a run", "range", "wall s per simulated ms (median)"),
        ],
        rows,
    )


_CLOCKS = {
    "ticks": "ticks",
    "colab_periods": "COLAB periods",
    "wash_quanta": "WASH quanta",
    "pelt_halflives": "PELT half-lives",
}


def _clocks_section(doc: Doc, spans: pd.DataFrame) -> None:
    """The report's section of clocks_spanned(): the frame the clocks table holds."""
    doc.h(2, "Clocks each run spanned")
    if spans.empty:
        doc.p("No run counts, so none is measured against the scheduler's clocks.")
        return
    defaulted = int((~spans["knobs_read"].astype(bool)).sum())
    doc.p(
        "Each run's measured interval (to its last application's first completion) "
        "against the clocks a policy acts on, at the run's own setup: the tick, COLAB's "
        "ranking period and WASH's quantum (as the guest read them from its kernel, "
        "divided by the time scale, two ticks at the least: kernel patch 0032) and "
        f"PELT's half-life ({ts.PELT_HALFLIFE_MS:.1f} ms over the scale). The "
        f"shortest run of each mix and policy is shown; a policy has little time to act "
        f"where a run spans fewer than {CLOCKS_AIM} of a clock (the last column), and a "
        "reference alone that spans few PELT half-lives is the baseline's start-up more "
        "than its steady state."
        + (
            f" {defaulted} runs did not record their kernel's periods: they are counted "
            f"at the kernel's defaults ({ts.DEFAULT_COLAB_RANK_PERIOD_MS:g} ms and "
            f"{ts.DEFAULT_WASH_QUANTUM_MS:g} ms)."
            if defaulted
            else ""
        )
    )
    disagree = spans[spans["scale_disagrees"].astype(bool)]
    if not disagree.empty:
        doc.p(
            f"Warning: in {len(disagree)} runs the kernel's sched_timescale differs from the "
            f"scale its command line asks for ({', '.join(sorted(map(str, disagree['run'])))}): "
            "they are counted at the command line's; check the kernel."
        )
    for (engine, platform, scale, tick), part in spans.groupby(metrics.SETUP):
        # the runs table's columns are floats where an excluded run left them empty
        label = _setup_label(str(platform), int(float(str(scale))), int(float(str(tick))))
        doc.h(3, f"{label} on {engine}")
        shortest = part.loc[part.groupby(["mix", "policy"])["run_ms"].idxmin()]
        counts = part.groupby(["mix", "policy"]).size()
        rows = []
        for r in shortest.sort_values(["mix", "policy"]).to_dict("records"):
            short = [label for c, label in _CLOCKS.items() if float(r[c]) < CLOCKS_AIM]
            rows.append(
                [
                    str(r["mix"]),
                    str(r["policy"]),
                    str(int(counts[(r["mix"], r["policy"])])),
                    _fmt(float(r["run_ms"])),
                    *(_fmt(float(r[c])) for c in _CLOCKS),
                    ", ".join(short) or "-",
                ]
            )
        doc.table(
            ["mix", "policy", "runs", "ms", *_CLOCKS.values(), f"fewer than {CLOCKS_AIM}"],
            rows,
        )


#: The counters of each kernel worker the work table shows, as
#: RunDir.policy_work names them, and the kernel policies that run it:
#: COLAB's worker runs under COLAB and under the policies its core
#: allocator drives (patch 0035), whose periods count alike
POLICY_WORK: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "colab": (
        ("colab_periods", "colab_swaps", "colab_moves", "colab_pulls"),
        ("colab", "hsp", "eef", "rr", "acfs"),
    ),
    "wash": (("wash_quanta", "wash_binds", "wash_unbinds"), ("wash",)),
}


def policy_work(col: Collection) -> pd.DataFrame:
    """Per platform, policy and mix, over the included runs of a policy
    whose kernel runs a worker with counters (POLICY_WORK: COLAB's under
    colab, the policies its allocator drives and their +online forms;
    WASH's under wash) and recorded them: how many runs, and
    the mean per run of each counter's growth over the run (RunDir.
    policy_work: its periodic step's periods or quanta and what they did:
    COLAB's swaps and moves between the clusters and its big CPUs' pulls,
    WASH's binds and unbinds). Empty where no run recorded them."""
    runs = col.runs[col.runs["included"].astype(bool)]
    frames = []
    for counters, kernel in POLICY_WORK.values():
        if not set(counters) <= set(runs.columns):
            continue
        # a policy's runs by its name before any "+" (colab+online is colab's)
        under = runs["policy"].astype(str).str.split("+").str[0].isin(kernel)
        part = runs[under].dropna(subset=list(counters))
        if part.empty:
            continue
        grouped = part.groupby(["platform", "policy", "mix"])
        means = grouped[list(counters)].mean()
        means.columns = [c.split("_", 1)[1] for c in means.columns]
        frames.append(means.assign(runs=grouped.size()).reset_index())
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def daemon_shares(col: Collection) -> pd.DataFrame:
    """Per platform, policy and mix, over the included runs that had guest
    daemons: how many runs, and the daemons' CPU time as a share of the
    machine over the run's measured interval (daemon_cpu_ns over the
    interval times the platform's CPUs; the daemons also run in the
    moments before and after it, so this errs high). Empty where none."""
    runs = col.runs[col.runs["included"].astype(bool)]
    if "daemon_cpu_ns" not in runs or runs["daemon_cpu_ns"].isna().all() or col.apps.empty:
        return pd.DataFrame()
    interval = measured_interval_ns(col.apps).rename("interval_ns")
    frame = runs.dropna(subset=["daemon_cpu_ns"]).join(interval, on="run")
    cpus = (frame["big"] + frame["little"]).astype(float)
    frame["share"] = frame["daemon_cpu_ns"] / (frame["interval_ns"] * cpus)
    grouped = frame.groupby(["platform", "policy", "mix"])
    return grouped["share"].agg(["size", "mean", "max"]).reset_index()


def interference_models(col: Collection) -> pd.DataFrame:
    """Per platform, model file (its digest) and threshold S, over the
    included runs of the contention policy: how many runs, and the file's
    mean held-out errors (RunDir.interference). Empty where none ran."""
    runs = col.runs[col.runs["included"].astype(bool)]
    if "models_sha256" not in runs or runs["models_sha256"].isna().all():
        return pd.DataFrame()
    part = runs.dropna(subset=["models_sha256"])
    errors = [column for column, _ in HELD_OUT_ERRORS if column in part]
    grouped = part.groupby(["platform", "models_sha256", "threshold_pct"], dropna=False)
    return grouped[errors].first().assign(runs=grouped.size()).reset_index()


def _interference_section(doc: Doc, models: pd.DataFrame) -> None:
    """The kernel section's table of interference_models()."""
    if models.empty:
        return
    doc.h(3, "Interference models (contention)")
    doc.p(
        "The model files the contention policy's runs were handed, by digest, with the "
        "threshold S, and each file's held-out errors from its profile (ampkit "
        "interference profile): each co-run predicted by a fit without it, in points of "
        "slowdown and as a share of the run time, and each co-run beside a co-runner "
        "program the fit never saw (blank where the other co-runners could not tell the "
        "terms apart). Fan et al. report 6.66% on big cores and 9.6% on little ones, over "
        "workloads their training never saw, measured as they do not say."
    )

    def cell(r: Mapping[Any, Any], column: str, percent: bool) -> str:
        value = r.get(column)
        if value is None or pd.isna(value):
            return ""
        return f"{100 * float(value):.1f}%" if percent else _fmt(float(value))

    doc.table(
        ["platform", "models", "S", "runs", "co-run out (points)", "co-run out", "co-runner out"],
        [
            [
                str(r["platform"]),
                str(r["models_sha256"])[:12],
                _fmt(float(r["threshold_pct"])),
                str(r["runs"]),
                cell(r, "held_out_co_run_points", False),
                cell(r, "held_out_co_run_time_error", True),
                cell(r, "held_out_co_runner_time_error", True),
            ]
            for r in models.to_dict("records")
        ],
    )


def _policy_work_section(doc: Doc, work: pd.DataFrame, daemons: pd.DataFrame) -> None:
    """The kernel section's tables of policy_work() and daemon_shares()."""
    if not daemons.empty:
        doc.h(3, "Guest daemons' CPU time")
        doc.p(
            "The CPU time the guest kernel counted for the daemons beside a run (a "
            "user-level policy's, the online speedup model's), as a share of the "
            "machine (every CPU) over the run's measured interval; on QEMU a vCPU the "
            "host preempts counts as run time, so only gem5's figures are the daemons'."
        )
        doc.table(
            ["platform", "policy", "mix", "runs", "mean share", "largest"],
            [
                [
                    *(str(r["platform"]), str(r["policy"]), str(r["mix"]), str(r["size"])),
                    *(f"{100 * float(r['mean']):.2f}%", f"{100 * float(r['max']):.2f}%"),
                ]
                for r in daemons.to_dict("records")
            ],
        )
    if work.empty:
        return
    doc.h(3, "What each policy's periodic step did")
    doc.p(
        "Read from the kernel's counters before the warm-up and again after the mix "
        "(kernel.sched_colab_work, kernel.sched_wash_stats), so warm-up included: per "
        "run, the mean over a mix's runs. COLAB: its ranking periods, the threads its "
        "class balancer exchanged between a big and a little CPU (swaps) or moved to "
        "an idle CPU of the other type (moves), and the threads a big CPU going idle "
        "took from a queue (pulls); WASH: its quanta, and the threads it bound to the "
        "big CPUs and unbound."
    )
    counters = [c for c in work.columns if c not in ("platform", "policy", "mix", "runs")]
    rows = []
    for r in work.to_dict("records"):
        cells = ["" if pd.isna(r[c]) else _fmt(float(r[c])) for c in counters]
        rows.append([str(r["platform"]), str(r["policy"]), str(r["mix"]), str(r["runs"]), *cells])
    doc.table(["platform", "policy", "mix", "runs", *counters], rows)


def _kernel_section(doc: Doc, col: Collection, out: Path, plots: dict[str, int]) -> None:
    doc.h(2, "Kernel counters")
    tasks = col.tasks
    need = {"class", "big_ns", "little_ns"}
    if tasks.empty or not need <= set(tasks.columns):
        doc.p(
            "The runs carry no per-task kernel counters (an application record's "
            "'tasks' list with class, big_ns, little_ns), so there is no breakdown by "
            "sensitivity class."
        )
        return
    t = _by_platform_cpus(tasks.dropna(subset=list(need)))
    agg = t.groupby(["platform", "policy", "class"], as_index=False)[["big_ns", "little_ns"]].sum()
    agg["big_share"] = agg["big_ns"] / (agg["big_ns"] + agg["little_ns"]).where(lambda x: x > 0)
    doc.h(3, "Share of run time on big CPUs, by sensitivity class")
    doc.table(
        ["platform", "policy", "class", "big share"],
        [
            [r["platform"], r["policy"], r["class"], _fmt(r["big_share"])]
            for r in agg.to_dict("records")
        ],
    )
    wide = agg.assign(series=agg["policy"]).pivot_table(
        index=["platform", "class"], columns="series", values="big_share"
    )
    wide.index = [f"{p} {c}" for p, c in wide.index]
    path = out / "plots" / "kernel-big-share.png"
    plots[path.name] = grouped_bars(
        wide,
        title="share of run time on big CPUs",
        ylabel="big / (big + little)",
        path=path,
        reference_line=False,
    )
    doc.image(path, "share of run time on big CPUs by class")
    if "bottleneck" in t.columns:
        necks = t[t["bottleneck"].astype(bool)]
        doc.h(3, "Bottleneck threads")
        cols = [c for c in ("platform", "policy", "mix", "app", "comm", "caused_ns") if c in t]
        doc.table(cols, [[str(r[c]) for c in cols] for r in necks.to_dict("records")])
    if {"flagged_ns", "cluster_moves"} <= set(t.columns):
        counted = t.dropna(subset=["flagged_ns", "cluster_moves"])
        _flags_and_moves(doc, counted)
        _per_application(doc, counted, col.apps)


def per_application(tasks: pd.DataFrame, apps: pd.DataFrame) -> pd.DataFrame:
    """Per platform, mix, program and policy, the mean over its instances
    in the mix's runs (repetitions; a mix may run a program twice, and
    which instance fares better differs from run to run): its turnaround,
    the share of its threads' run time on big CPUs, the times a thread ran
    on the other side than where it last ran, and the share of its run
    time its threads were flagged a bottleneck (the kernel's per-task
    counters). What a policy gave one application and took from another."""
    keys = ["platform", "mix", "app", "policy"]
    columns = [*keys, "runs", "instances", "turnaround_ms", "big", "moves", "flagged"]
    if tasks.empty or apps.empty:
        return pd.DataFrame(columns=columns)
    per_instance = (
        tasks.assign(run_ns=tasks["big_ns"] + tasks["little_ns"])
        .groupby(["run", "instance", *keys], as_index=False)
        .agg(
            big_ns=("big_ns", "sum"),
            run_ns=("run_ns", "sum"),
            moves=("cluster_moves", "mean"),
            flagged_ns=("flagged_ns", "sum"),
        )
    )
    alive = per_instance["run_ns"].where(per_instance["run_ns"] > 0)
    per_instance["big"] = per_instance["big_ns"] / alive
    per_instance["flagged"] = per_instance["flagged_ns"] / alive
    timed = apps[["run", "app", "instance", "turnaround_ns"]]
    per_instance = per_instance.merge(timed, on=["run", "app", "instance"], how="left")
    per_instance["turnaround_ms"] = per_instance["turnaround_ns"] / 1e6
    out = per_instance.groupby(keys, as_index=False).agg(
        runs=("run", "nunique"),
        instances=("run", "size"),
        turnaround_ms=("turnaround_ms", "mean"),
        big=("big", "mean"),
        moves=("moves", "mean"),
        flagged=("flagged", "mean"),
    )
    return out[columns]


def _per_application(doc: Doc, tasks: pd.DataFrame, apps: pd.DataFrame) -> None:
    """per_application() of the runs of two applications or more."""
    frame = per_application(tasks, apps)
    many = apps.groupby("run")["app"].transform("size") >= 2
    mixes = set(apps.loc[many, "mix"])
    frame = frame[frame["mix"].isin(mixes)]
    if frame.empty:
        return
    doc.h(3, "Per application, under each policy")
    doc.p(
        "Per mix and program, the mean over its instances in the mix's runs (a mix may "
        "run a program twice): its turnaround (ms; its region where it has one), the "
        "share of its threads' run time on big CPUs, the times a thread of it ran on the "
        "other side than where it last ran, and the share of its run time flagged a "
        "bottleneck. What a policy gave one application and took from the other is read "
        "here; a mix's policies may have run different numbers of repetitions."
    )
    doc.table(
        [
            *("platform", "mix", "program", "policy", "runs", "ms"),
            *("on big CPUs", "moves a thread", "flagged"),
        ],
        [
            [
                str(r["platform"]),
                str(r["mix"]),
                str(r["app"]),
                str(r["policy"]),
                str(r["runs"]),
                _fmt(r["turnaround_ms"]),
                _fmt(r["big"]),
                _fmt(r["moves"]),
                _fmt(r["flagged"]),
            ]
            for r in frame.to_dict("records")
        ],
    )


def _flags_and_moves(doc: Doc, tasks: pd.DataFrame) -> None:
    """What COLAB's ranking found and what each policy's placement moved,
    from the kernel's per-task counters (patch 0033)."""
    doc.h(3, "Bottlenecks flagged, and moves between big and little CPUs")
    doc.p(
        "Per platform, policy and mix, summed over the threads of every run: how many "
        "threads COLAB's ranking flagged a bottleneck and for how much of their run "
        "time, and how often a thread ran on the other side (big or little) than where "
        "it had last run, per thread and per second of run time. Only COLAB flags; every "
        "policy moves."
    )
    t = tasks.assign(
        run_ns=tasks["big_ns"] + tasks["little_ns"],
        flagged=tasks["flagged_ns"] > 0,
    )
    agg = t.groupby(["platform", "policy", "mix"], as_index=False).agg(
        threads=("flagged", "size"),
        flagged=("flagged", "sum"),
        flagged_ns=("flagged_ns", "sum"),
        run_ns=("run_ns", "sum"),
        moves=("cluster_moves", "sum"),
    )
    rows = []
    for r in agg.to_dict("records"):
        run_s = r["run_ns"] / 1e9
        rows.append(
            [
                r["platform"],
                r["policy"],
                r["mix"],
                str(r["threads"]),
                str(int(r["flagged"])),
                _fmt(r["flagged_ns"] / 1e6),
                _fmt(r["flagged_ns"] / r["run_ns"] if r["run_ns"] else math.nan),
                _fmt(r["moves"] / r["threads"]),
                _fmt(r["moves"] / run_s if run_s else math.nan),
            ]
        )
    doc.table(
        [
            *("platform", "policy", "mix", "threads", "flagged threads", "flagged ms"),
            *("flagged share of run time", "moves a thread", "moves per run second"),
        ],
        rows,
    )
