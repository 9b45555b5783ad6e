"""gem5's statistics, as the analysis needs them: per CPU, per dump.

gem5 writes one block of statistics per dump (``m5 dumpstats`` or
``dumpresetstats``, and one at exit) to ``stats.txt``, or to a JSON file
when the run asked for ``--stats-file=json://stats.json``. Each dump
becomes a list of rows, one per CPU: its cluster, cycles, committed
instructions and, where the configuration attached a power model, the
energy it spent (gem5's power models report average watts over the dump,
so energy = (dynamic + static power) x simulated seconds).
"""

import json
import lzma
import math
import re
from pathlib import Path
from typing import Any

#: the lines that open and close each dump of a stats.txt
DUMP_BEGIN = "---------- Begin Simulation Statistics ----------"
DUMP_END = "---------- End Simulation Statistics   ----------"

#: system.<cluster>.cpus<N>.<stat>, as fs_bigLITTLE.py and the kit's configs
#: name them (gem5 drops the number when a cluster has one CPU: cpus);
#: system.cpu<N> for single-cluster scripts.
_CPU = re.compile(r"^system\.(?:(?P<cluster>\w+)\.cpus(?P<n>\d*)|cpu(?P<m>\d*))\.(?P<stat>.+)$")
#: the runner's per-application work items (System::workItemEnd samples ticks)
_WORK_ITEM = re.compile(r"^system\.work_item_type(?P<id>\d+)::(?P<stat>samples|mean)$")
#: gem5's tick: one picosecond
TICKS_PER_S = 1e12

#: a DRAM rank's energy over the dump, in pJ (gem5's DRAMPower model):
#: system.<controller>.dram.rank<N>.totalEnergy; one controller per memory
#: range (mem_ctrls, or mem_ctrls0, mem_ctrls1, ...)
_DRAM_ENERGY = re.compile(r"^system\.(?P<ctrl>\w+?)\.dram\.rank\d+\.totalEnergy$")
#: a cluster's shared L2: the accesses that reach it and the blocks it
#: writes back (the kit's configs have no L3: they go to memory)
_L2_COUNT = re.compile(
    r"^system\.(?P<cluster>\w+)\.l2\.(?P<stat>overallAccesses|writebacks)::total$"
)
#: the packets crossing a cluster's L2 port on the memory bus, both ways
#: (shared_accesses says which)
_BUS_COUNT = re.compile(
    r"^system\.membus\.pktCount_system\.(?P<cluster>\w+)\.l2\.mem_side_port::total$"
)
#: the bytes a memory controller read for each requestor (a CPU's caches,
#: walkers and prefetchers, named under their cluster); writes come from
#: the L2s' writebacks and are counted there
_MEM_READ = re.compile(r"^system\.\w+?\.requestorReadBytes::(?P<requestor>[^:]+)$")
#: the cache line of the kit's gem5 configs (configs/ampkit_gem5/board.py)
LINE_BYTES = 64
#: a CPU's time in each power state (ON, CLK_GATED, ...)
_RESIDENCY = "power_state.pwrStateResidencyTicks::"

#: committed instructions under the names gem5 versions used
_INSTS = ("commitStats0.numInsts", "committedInsts", "exec_context.thread_0.numInsts")


class StatsError(ValueError):
    """The stats file cannot be read as gem5 statistics."""


class MeasuredUnknown(StatsError):
    """The statistics do not show where the measured interval was: the
    runner did not dump its start and end (it stopped early)."""


def parse_text(text: str) -> list[dict[str, float]]:
    """Every dump of a stats.txt, as {stat name: first value}."""
    dumps: list[dict[str, float]] = []
    current: dict[str, float] | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith(DUMP_BEGIN):
            current = {}
            continue
        if line.startswith(DUMP_END):
            if current is None:
                raise StatsError(f"line {lineno}: end of a dump that never began")
            dumps.append(_precise_seconds(current))
            current = None
            continue
        if current is None or not line.strip():
            continue
        fields = line.split()
        if len(fields) < 2:
            continue
        try:
            current[fields[0]] = float(fields[1])
        except ValueError:
            continue  # distribution headers, text values
    if current is not None:
        raise StatsError("the last dump has no end marker (truncated file?)")
    return dumps


def _precise_seconds(stats: dict[str, float]) -> dict[str, float]:
    """simSeconds from the ticks: stats.txt rounds it to a microsecond (a
    run of a few milliseconds would lose a part in 10^4 of its energy) and
    gem5's JSON leaves it out."""
    if stats.get("simFreq") and "simTicks" in stats:
        stats["simSeconds"] = stats["simTicks"] / stats["simFreq"]
    return stats


#: keys of gem5's JSON that describe a node rather than hold a statistic
_JSON_META = frozenset(
    {"type", "time_conversion", "name", "description", "unit", "datatype", "creation_time"}
)


def _flatten(node: Any, path: str, out: dict[str, float]) -> None:
    """gem5's JSON stats (m5.ext.pystats) under the names stats.txt gives them.

    A SimObjectVector's elements carry their own names (``cpus0``, ``cpus1``)
    that replace the vector's key, as in stats.txt; a Vector becomes
    ``name::key`` entries and a Distribution its ``::samples`` and ``::mean``,
    the parts the kit reads. Anything else with children (SimObjects, stat
    groups) is walked. gem5 v24 writes stat groups empty (commitStats0 and
    thread_0 of a CPU, so no committed instructions; fixed upstream by gem5
    PR 2761): stats.txt is the kit's first choice for that reason."""
    if isinstance(node, int | float) and not isinstance(node, bool):
        out[path] = float(node)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    value = node.get("value")
    if kind == "Scalar" or (kind is None and isinstance(value, int | float)):
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[path] = float(value)
    elif kind == "Vector" and isinstance(value, dict):
        for key, element in value.items():
            _flatten(element, f"{path}::{key}", out)
    elif kind == "Distribution" and isinstance(value, dict):
        samples = sum(_number(b) for b in value.values())
        samples += _number(node.get("underflow")) + _number(node.get("overflow"))
        out[f"{path}::samples"] = samples
        out[f"{path}::mean"] = _number(node.get("sum")) / samples if samples else math.nan
    elif kind == "SimObjectVector" and isinstance(value, list):
        parent = path.rpartition(".")[0]
        for index, element in enumerate(value):
            name = element.get("name") if isinstance(element, dict) else None
            name = name or f"{path.rpartition('.')[2]}{index}"
            _flatten(element, f"{parent}.{name}" if parent else name, out)
    elif kind in ("Vector2d", "SparseHist"):
        return  # nothing the kit reads
    else:
        for key, child in node.items():
            if key not in _JSON_META and isinstance(child, dict | list | int | float):
                _flatten(child, f"{path}.{key}" if path else key, out)


def _number(node: Any) -> float:
    """A JSON number, or the value of a Scalar node; 0 for anything else."""
    if isinstance(node, dict):
        node = node.get("value")
    if isinstance(node, int | float) and not isinstance(node, bool):
        return float(node)
    return 0.0


def parse_json(text: str) -> list[dict[str, float]]:
    """The dumps of a JSON stats file: one object, or a list of them (one per dump)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise StatsError(f"not JSON: {e}") from e
    dumps = data if isinstance(data, list) else [data]
    result = []
    for dump in dumps:
        flat: dict[str, float] = {}
        _flatten(dump, "", flat)
        result.append(_precise_seconds(flat))
    return result


def read_stats(directory: Path) -> list[dict[str, float]] | None:
    """The dumps of the gem5 statistics in ``directory`` (gem5's output
    directory; a run directory's is ``rundir.M5OUT``); None where there are
    none. stats.txt is preferred: it holds every dump, gem5's JSON file only
    the last (compressed by the kit after a run: stats.json.xz)."""
    for name, parse in (("stats.txt", parse_text), ("stats.json", parse_json)):
        path = directory / name
        if path.is_file():
            return parse(path.read_text(errors="replace"))
        packed = path.with_name(name + ".xz")
        if packed.is_file():
            try:
                text = lzma.decompress(packed.read_bytes()).decode(errors="replace")
            except lzma.LZMAError as e:
                raise StatsError(f"{packed}: not a whole xz file: {e}") from e
            return parse(text)
    return None


def cpu_rows(dumps: list[dict[str, float]]) -> list[dict[str, Any]]:
    """One row per CPU per dump: dump, cpu, cluster, cycles, insts, energy_j,
    sim_seconds, residency_ticks (its time in all power states, which the
    measured interval's ticks must equal). gem5's O3 CPU adds the cycles it
    slept to numCycles when it wakes, so a big CPU asleep across a reset
    counts some time before the dump in ``cycles`` (and in the IPC of its
    power model); its residencies and energy's static part do not."""
    rows: list[dict[str, Any]] = []
    for index, stats in enumerate(dumps):
        seconds = stats.get("simSeconds", math.nan)
        cpus: dict[str, dict[str, Any]] = {}
        for name, value in stats.items():
            m = _CPU.match(name)
            if not m:
                continue
            cluster = m["cluster"] or "cpus"
            cpu = f"{cluster}.cpus{m['n']}" if m["cluster"] else f"cpu{m['m']}"
            row = cpus.setdefault(
                cpu,
                {"dump": index, "cpu": cpu, "cluster": cluster, "sim_seconds": seconds},
            )
            stat = m["stat"]
            if stat == "numCycles":
                row["cycles"] = value
            elif stat in _INSTS and "insts" not in row:
                row["insts"] = value
            elif stat.startswith("commitStats0."):
                row["commit_group"] = True
            elif stat.endswith("power_model.dynamicPower"):
                row["dynamic_w"] = value
            elif stat.endswith("power_model.staticPower"):
                row["static_w"] = value
            elif stat.startswith(_RESIDENCY):
                row["residency_ticks"] = row.get("residency_ticks", 0.0) + value
        for row in cpus.values():
            row.setdefault("cycles", math.nan)
            # stats.txt leaves out a count gem5 flags nozero, such as
            # commitStats0.numInsts of a CPU idle all the dump, but prints
            # the rest of its group: then it committed nothing. Without the
            # group (gem5 v24's JSON writes it empty) the count is unknown.
            row.setdefault("insts", 0.0 if row.pop("commit_group", False) else math.nan)
            row.setdefault("residency_ticks", math.nan)
            watts = row.pop("dynamic_w", math.nan) + row.pop("static_w", 0.0)
            row["energy_j"] = watts * seconds
            rows.append(row)
    return rows


#: Each PMU event gem5's ArmPMU implements (ampkit.pmu), as the statistics
#: of a CPU count what feeds its probe (gem5 v24): the retired-instruction
#: probes fire at commit per instruction (loads, stores and branches per
#: micro-op, as the op classes count them), Branches at each predictor
#: lookup, Misses where it counts a conditional misprediction, a TLB's
#: Refills at each insertion. Exact but for CPU_CYCLES, which counts the
#: cycles the CPU was awake and numCycles also some it slept (cpu_rows).
PMU_STATS: dict[str, tuple[str, ...]] = {
    "INST_RETIRED": ("commitStats0.numInsts",),
    "CPU_CYCLES": ("numCycles",),
    "LD_RETIRED": (
        "commitStats0.committedInstType::MemRead",
        "commitStats0.committedInstType::FloatMemRead",
    ),
    "ST_RETIRED": (
        "commitStats0.committedInstType::MemWrite",
        "commitStats0.committedInstType::FloatMemWrite",
    ),
    "BR_RETIRED": ("branchPred.committed_0::total",),
    "BR_PRED": ("branchPred.lookups_0::total",),
    "BR_MIS_PRED": ("branchPred.condIncorrect",),
    "L1I_TLB_REFILL": ("mmu.itb.inserts",),
    "L1D_TLB_REFILL": ("mmu.dtb.inserts",),
}
PMU_STATS["MEM_ACCESS"] = PMU_STATS["LD_RETIRED"] + PMU_STATS["ST_RETIRED"]


def pmu_counts(stats: dict[str, float]) -> dict[str, float]:
    """Each PMU event of PMU_STATS over one dump, summed over its CPUs (a
    statistic a CPU leaves out, as gem5 does a zero it flags nozero,
    counts 0)."""
    per_stat: dict[str, float] = {}
    for name, value in stats.items():
        m = _CPU.match(name)
        if m:
            per_stat[m["stat"]] = per_stat.get(m["stat"], 0.0) + value
    return {
        event: sum(per_stat.get(stat, 0.0) for stat in names) for event, names in PMU_STATS.items()
    }


def _energy(stats: dict[str, float], prefix: str, seconds: float) -> float:
    """Energy of the object whose power model's stats start with prefix."""
    dynamic = stats.get(f"{prefix}.power_model.dynamicPower", math.nan)
    static = stats.get(f"{prefix}.power_model.staticPower", 0.0)
    return (dynamic + static) * seconds


def shared_accesses(stats: dict[str, float]) -> dict[str, tuple[float, float, float]]:
    """Per cluster, its accesses over the dump to the three resources Fan et
    al.'s interference model names (ampkit.interference.RESOURCES), as gem5
    counts them.

    - cache: its shared L2's accesses (demand and its L1s' prefetches; the
      L1s' writebacks into it are not counted);
    - bus: the packets crossing its L2's port on the memory bus, gem5's
      coherent crossbar between the clusters and memory, where the paper's
      board had its CCI: both ways (a read miss counts its request and its
      response; writebacks, clean evictions and upgrades once each), its
      L2 prefetcher's too, and the interrupt controller's accesses; the
      snoops it receives are not counted;
    - memory: the memory controller's accesses for it, the lines read for
      its requestors (its CPUs' caches, walkers and prefetchers, its L2's
      prefetcher) and its L2's writebacks.

    With no L3 nearly every read miss goes to memory, so bus and memory
    are close to collinear on gem5. The big cluster's L2 prefetcher reads
    memory that its L2's accesses do not count; the little cluster's L1D
    prefetches are counted as L2 accesses. gem5 leaves out a count that
    is 0 (an L2 that wrote nothing back): 0 here, for every cluster whose
    CPUs are in the dump. Counts, not rates: divide by the dump's seconds."""
    clusters = sorted({m["cluster"] for n in stats if (m := _CPU.match(n)) and m["cluster"]})
    counts: dict[str, dict[str, float]] = {c: {} for c in clusters}
    reads = dict.fromkeys(clusters, 0.0)
    seen = False
    for name, value in stats.items():
        if (m := _L2_COUNT.match(name)) and m["cluster"] in counts:
            counts[m["cluster"]][m["stat"]] = value
            seen = True
        elif (m := _BUS_COUNT.match(name)) and m["cluster"] in counts:
            counts[m["cluster"]]["bus"] = value
            seen = True
        elif (m := _MEM_READ.match(name)) and (cluster := m["requestor"].split(".")[0]) in reads:
            reads[cluster] += value / LINE_BYTES
    if not seen:
        raise StatsError("no cluster's L2 or memory-bus statistics in the dump")
    return {
        c: (
            got.get("overallAccesses", 0.0),
            got.get("bus", 0.0),
            reads[c] + got.get("writebacks", 0.0),
        )
        for c, got in counts.items()
    }


def dram_rows(stats: dict[str, float]) -> list[dict[str, Any]]:
    """One row per memory controller: its DRAM's energy over the dump (all
    ranks, from gem5's DRAMPower model), in joules."""
    picojoules: dict[str, float] = {}
    for name, value in stats.items():
        m = _DRAM_ENERGY.match(name)
        if m:
            picojoules[m["ctrl"]] = picojoules.get(m["ctrl"], 0.0) + value
    return [{"memory": ctrl, "energy_j": pj * 1e-12} for ctrl, pj in sorted(picojoules.items())]


#: The dumps a run of the kit's gem5 configuration writes, in order: one at
#: restore (bigLITTLE.py: the checkpoint's boot is not counted), one as the
#: runner releases the measured applications (so the warm-up and the forks
#: before it are not counted either), one when their last first run
#: completes (the measured interval: what the turnarounds cover), and
#: gem5's own at exit (the results written, restarts killed).
RUN_DUMPS = ("restore", "start", "measured", "exit")
#: the index of the measured interval's dump among them
MEASURED_DUMP = RUN_DUMPS.index("measured")


#: Where the statistics of a run's later slices are, under its m5out/:
#: slice-1/, slice-2/, ... (ampkit.engines.gem5); the first slice's are in
#: m5out/ itself, as those of a run of one slice.
SLICE_DIR = "slice-{}"
#: A slice's record beside its statistics (configs/bigLITTLE.py writes it
#: when the slice reached its end tick): {"until": its end tick,
#: "checkpoint_tick": where the checkpoint was taken, if it was}
SLICE_RECORD = "ampkit-slice.json"

#: the CPU statistics a merged dump keeps, by name (cpu_rows, pmu_counts)
_CPU_COUNTS = frozenset(
    {"numCycles", *_INSTS, *(stat for names in PMU_STATS.values() for stat in names)}
)
_POWER = ("power_model.dynamicPower", "power_model.staticPower")
#: The kit's own entry in a merged dump: how many slice ends cut the
#: interval (each a restore with cold caches, TLBs and predictors)
CUTS = "ampkit.cuts"


def _merge_rule(name: str) -> str | None:
    """How merge() combines a statistic: "sum", "power" (watts: averaged
    over time), "mean" (a work item's: averaged over its samples), or None
    (not kept)."""
    if name in ("simTicks", "hostSeconds"):
        return "sum"
    if name.endswith(_POWER):
        return "power"
    if any(r.match(name) for r in (_DRAM_ENERGY, _L2_COUNT, _BUS_COUNT, _MEM_READ)):
        return "sum"
    item = _WORK_ITEM.match(name)
    if item:
        return "sum" if item["stat"] == "samples" else "mean"
    cpu = _CPU.match(name)
    if cpu:
        stat = cpu["stat"]
        if stat in _CPU_COUNTS or stat.startswith((_RESIDENCY, "commitStats0.")):
            return "sum"
    return None


def merge(parts: list[dict[str, float]]) -> dict[str, float]:
    """One dump of the interval that consecutive dumps ``parts`` cover
    together (a measured interval cut by slice ends), holding what the kit
    reads of a dump (cpu_rows, summary, pmu_counts): counts, ticks,
    residencies and DRAM energy summed, each power model's watts averaged
    over the parts' time (so watts x seconds is the energy of every part),
    each work item's mean over its samples. Other statistics, such as
    rates, are left out rather than summed. A part that covers no time adds
    nothing and is skipped: its watts are not numbers. gem5 forgets a work
    item begun in one slice when the next restores (System::workItemEnd
    ignores an end without its begin), so only items that began and ended
    in one slice are counted."""
    timed = [part for part in parts if part.get("simTicks", 0.0) > 0]
    if not timed:
        raise StatsError("no statistics dump of the measured interval covers any time")
    merged: dict[str, float] = {"simFreq": timed[0].get("simFreq", TICKS_PER_S)}
    if "finalTick" in timed[-1]:
        merged["finalTick"] = timed[-1]["finalTick"]
    seconds = [part["simTicks"] / merged["simFreq"] for part in timed]
    names = {name for part in timed for name in part}
    for name in sorted(names):
        rule = _merge_rule(name)
        if rule == "sum":
            merged[name] = sum(part.get(name, 0.0) for part in timed)
        elif rule == "power":
            # a part without the model's statistic leaves its energy unknown
            watts = (part.get(name, math.nan) for part in timed)
            merged[name] = sum(w * s for w, s in zip(watts, seconds, strict=True)) / sum(seconds)
        elif rule == "mean":
            samples_name = name.replace("::mean", "::samples")
            pairs = [(p.get(samples_name, 0.0), p.get(name, 0.0)) for p in timed]
            count = sum(n for n, _ in pairs)
            merged[name] = sum(n * m for n, m in pairs if n) / count if count else math.nan
    return _precise_seconds(merged)


#: The kit's own entries in a measured dump for a run whose application
#: marked its region of interest (ampkit/run.py, roi_stats): each counted
#: statistic (merge()'s "sum") over the region alone, under this prefix
ROI_PREFIX = "ampkit.roi."


#: Statistics of the "sum" rule that are formulas over counts, not counts
_FORMULAS = (".ipc", ".cpi")


def _roi_counts(begin: dict[str, float], end: dict[str, float]) -> dict[str, float]:
    """The region between two dumps of one interval that nothing reset in
    between (the workload's marks: m5 dumpstats), as a dump of its own under
    ROI_PREFIX: each count the later mark's less the earlier's, and each
    power model's average watts over the region (its watts times the
    seconds since the reset, at the later mark less at the earlier, over
    the region's seconds), so that summary() reads it as any dump."""
    ticks = end.get("simTicks", math.nan) - begin.get("simTicks", 0.0)
    region: dict[str, float] = {"simFreq": end.get("simFreq", TICKS_PER_S)}
    for name, value in end.items():
        if name.startswith(ROI_PREFIX):
            continue
        rule = _merge_rule(name)
        if rule == "sum" and not name.endswith(_FORMULAS):
            region[name] = value - begin.get(name, 0.0)
        elif rule == "power":
            earlier = begin.get(name, math.nan) * begin["simTicks"] if begin.get("simTicks") else 0
            region[name] = (value * end.get("simTicks", math.nan) - earlier) / ticks
    return {f"{ROI_PREFIX}{name}": value for name, value in region.items()}


def _origin(dump: dict[str, float]) -> float:
    """The tick a dump's counts began at: its last reset."""
    return dump.get("finalTick", math.nan) - dump.get("simTicks", math.nan)


def run_dumps(
    slices: list[list[dict[str, float]]], records: list[dict[str, Any] | None] | None = None
) -> list[dict[str, float]]:
    """A run's dumps in the RUN_DUMPS layout, from the dumps of each of its
    slices in order and each slice's record (SLICE_RECORD; None for the
    last, which ended with the guest). A run of one slice is its own dumps.

    A slice's first dump is at its restore: one tick, not counted, so a
    measured interval cut n times misses n ticks. A slice that reached its
    end tick has its own dump there, then, if it was checkpointed, gem5's
    at exit over the drain (a few hundred ns, in which a CPU woken from WFI
    counts every cycle it slept): not counted either. Its other dumps are
    the runner's, two in the whole run: the measured interval's start and
    end. The interval's pieces become one merged dump (merge()) that says
    how many cuts it spans (CUTS). A run whose runner did not dump twice
    raises MeasuredUnknown (its dumps in order could pass for the four of
    a run in one).

    A run of one application that marked its region of interest has two
    dumps more between the runner's, without a reset (the workload's, at
    the region's bounds): their difference is the region's counts, which
    the measured dump carries under ROI_PREFIX; the interval is the same.
    Only a region within one slice has them (a restore between the marks
    restarts the counts)."""
    records = records or [None] * len(slices)
    if len(slices) == 1 and records[0] is None and len(slices[0]) != len(RUN_DUMPS) + 2:
        return slices[0]  # run_summary() says what a count other than RUN_DUMPS' means
    timeline: list[tuple[str, dict[str, float]]] = []
    for index, (dumps, record) in enumerate(zip(slices, records, strict=True)):
        until = record.get("until") if record else None
        checkpointed = bool(record and "checkpoint_tick" in record)
        final = index == len(slices) - 1
        for at, dump in enumerate(dumps):
            kind = "runner"
            if at == 0:
                kind = "restore"
            elif until is not None and dump.get("finalTick") == until:
                kind = "slice end"
            elif at == len(dumps) - 1 and checkpointed:
                kind = "drain"
            elif at == len(dumps) - 1 and final:
                kind = "exit"
            timeline.append((kind, dump))
    runner = [at for at, (kind, _) in enumerate(timeline) if kind == "runner"]
    if len(runner) not in (2, 4):
        raise MeasuredUnknown(
            f"{len(runner)} dumps of the runner in {len(slices)} slices where a run that "
            "reached its end writes 2 (start, measured), or 4 where its application marked "
            "its region of interest: the measured interval is unknown"
        )
    start, end = runner[0], runner[-1]
    marks = runner[1:-1]
    if marks and len(slices) == 1:
        # the marks are told from the runner's dumps by where their counts
        # began: at the runner's reset (the start), which a dump of the
        # runner's between them (its deadline passing) would move
        for at in [*marks, end]:
            if _origin(timeline[at][1]) != timeline[start][1].get("finalTick"):
                raise MeasuredUnknown(
                    f"{len(runner)} dumps of the runner and its application, but the "
                    f"{'measured' if at == end else 'region'} dump at tick "
                    f"{timeline[at][1].get('finalTick')} does not count from the runner's "
                    "start: the measured interval is unknown"
                )
    inside = [
        (at, kind, dump)
        for at, (kind, dump) in enumerate(timeline[start + 1 : end + 1], start + 1)
        if at not in marks
    ]
    cuts = sum(1 for _, kind, _ in inside if kind == "restore")
    if cuts == 0 and len(slices) == 1:
        measured = dict(timeline[end][1])  # one piece: the dump as gem5 wrote it
    else:
        measured = merge([dump for _, kind, dump in inside if kind not in ("restore", "drain")])
        measured[CUTS] = cuts
    if marks:
        first, last = marks
        if not any(kind == "restore" for kind, _ in timeline[first:last]):
            measured.update(_roi_counts(timeline[first][1], timeline[last][1]))
    return [slices[0][0], timeline[start][1], measured, slices[-1][-1]]


def _slice_record(directory: Path) -> dict[str, Any] | None:
    path = directory / SLICE_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise StatsError(f"{path}: not JSON: {e}") from e
    if not isinstance(record, dict) or not isinstance(record.get("until"), int):
        raise StatsError(f"{path}: no end tick ('until')")
    return record


def read_run(m5out: Path) -> list[dict[str, float]] | None:
    """A run's statistics dumps in the RUN_DUMPS layout, its slices joined
    (run_dumps); None where gem5 wrote none."""
    first = read_stats(m5out)
    if first is None:
        return None
    slices, records = [first], [_slice_record(m5out)]
    for later in slice_dirs(m5out)[1:]:
        dumps = read_stats(later)
        if not dumps:
            raise StatsError(f"{later}: a slice without statistics")
        slices.append(dumps)
        records.append(_slice_record(later))
    return run_dumps(slices, records)


def slice_dirs(m5out: Path) -> list[Path]:
    """Where each slice of a run left its gem5 output: m5out/ itself, then
    m5out/slice-1/, ... (only m5out/ for a run not in slices)."""
    found = [m5out]
    while (m5out / SLICE_DIR.format(len(found))).is_dir():
        found.append(m5out / SLICE_DIR.format(len(found)))
    return found


def run_summary(dumps: list[dict[str, float]]) -> dict[str, Any]:
    """The summary of a kit run's measured interval (RUN_DUMPS)."""
    if len(dumps) != len(RUN_DUMPS):
        raise StatsError(
            f"{len(dumps)} statistics dumps where a run that reached its end writes "
            f"{len(RUN_DUMPS)} ({', '.join(RUN_DUMPS)}): the measured interval is unknown"
        )
    return summary(dumps, measured=MEASURED_DUMP)


def summary(dumps: list[dict[str, float]], measured: int = -1) -> dict[str, Any]:
    """What a gem5 run measured, from one dump (by default the last, that of
    a script that dumps once at exit; run_summary picks a kit run's
    measured interval): simulated seconds and ticks, per-CPU
    committed instructions, cycles and power-state residency, per-cluster
    energy (its CPUs and its L2), the DRAM's energy, and the work items of each
    application (id = its index in the mix): the runner's, around its
    first run, and for a PARSEC/SPLASH-2x program a second one, its region
    of interest (the hooks' thread id 1); gem5 keeps their mean."""
    if not dumps:
        raise StatsError("no statistics dump")
    dump = dumps[measured]
    seconds = dump.get("simSeconds", math.nan)
    cpus = cpu_rows([dump])
    clusters: dict[str, dict[str, Any]] = {}
    for row in cpus:
        empty = {"cluster": row["cluster"], "cpus": 0, "insts": 0.0, "cpu_energy_j": 0.0}
        c = clusters.setdefault(row["cluster"], empty)
        c["cpus"] += 1
        c["insts"] += row["insts"]
        c["cpu_energy_j"] += row["energy_j"]
    for name, c in clusters.items():
        c["l2_energy_j"] = _energy(dump, f"system.{name}.l2", seconds)
        c["energy_j"] = c["cpu_energy_j"] + c["l2_energy_j"]
    items: dict[int, dict[str, Any]] = {}
    for name, value in dump.items():
        m = _WORK_ITEM.match(name)
        if m:
            item = items.setdefault(int(m["id"]), {"id": int(m["id"])})
            if m["stat"] == "samples":
                item["samples"] = int(value)
            else:
                item["mean_s"] = value / TICKS_PER_S
    memory = dram_rows(dump)
    return {
        "dumps": len(dumps),
        "sim_seconds": seconds,
        "sim_ticks": dump.get("simTicks", math.nan),
        "cpus": [{k: v for k, v in row.items() if k != "dump"} for row in cpus],
        "clusters": list(clusters.values()),
        "memory": memory,
        # NaN where a part has no power model: a sum that leaves one out
        # would pass for the whole machine's energy
        "energy_j": sum(c["energy_j"] for c in clusters.values())
        + sum(m["energy_j"] for m in memory),
        # what the PMU's architected events would have counted on every CPU
        "pmu": pmu_counts(dump),
        "work_items": [items[k] for k in sorted(items) if items[k].get("samples")],
        # slice ends inside the interval (run_dumps): each restarted the
        # machine cold, and lost the work items in progress across it
        "cuts": int(dump.get(CUTS, 0)),
        "work_items_whole": not dump.get(CUTS, 0),
        **_roi_summary(dump),
    }


def _roi_summary(dump: dict[str, float]) -> dict[str, Any]:
    """The region of interest's part of a summary, where the measured dump
    has it (ROI_PREFIX): its simulated seconds, its PMU events summed over
    the CPUs, and each cluster's instructions and energy."""
    region = {k.removeprefix(ROI_PREFIX): v for k, v in dump.items() if k.startswith(ROI_PREFIX)}
    if not region:
        return {}
    whole = summary([_precise_seconds(region)])
    return {
        "roi": {
            "sim_seconds": whole["sim_seconds"],
            "pmu": whole["pmu"],
            "clusters": [
                {"cluster": c["cluster"], "insts": c["insts"], "energy_j": c["energy_j"]}
                for c in whole["clusters"]
            ],
        }
    }
