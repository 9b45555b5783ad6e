"""The PMU events the kit counts: the speedup model's vocabulary.

The runner counts them per application when a run description says
``pmu 1`` (workloads/runner/pmu.c, by the names the kernel's armv8 PMU
driver lists in sysfs); ``ampkit profile`` keeps them per program and core
type; ampkit.speedupmodel trains on their rates per instruction.

They are the architected events gem5's ArmPMU implements (addArchEvents
in gem5's src/arch/arm/ArmPMU.py), SW_INCR aside, each fed by a probe of
the CPU model, its branch predictor or its TLBs. Cache refills are not
among them: gem5 leaves those events unimplemented. QEMU's PMU counts
cycles only (and instructions with a fixed icount shift), so a QEMU run
records the others as not listed: its counts drive the pipeline, not a
model.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PmuEvent:
    name: str  # the Arm ARM's, as records and files spell it
    number: int  # the architected event number
    counts: str  # what it counts on gem5 (the probe that feeds it)


EVENTS: tuple[PmuEvent, ...] = (
    PmuEvent("INST_RETIRED", 0x08, "instructions committed (the CPU's RetiredInsts probe)"),
    PmuEvent("CPU_CYCLES", 0x11, "cycles the CPU was active (ActiveCycles)"),
    PmuEvent("LD_RETIRED", 0x06, "loads committed (RetiredLoads)"),
    PmuEvent("ST_RETIRED", 0x07, "stores committed (RetiredStores)"),
    PmuEvent("MEM_ACCESS", 0x13, "loads and stores committed (RetiredLoads + RetiredStores)"),
    PmuEvent("BR_RETIRED", 0x21, "branches committed (RetiredBranches)"),
    PmuEvent("BR_PRED", 0x12, "branch predictor lookups, wrong path included (Branches)"),
    PmuEvent("BR_MIS_PRED", 0x10, "branches the predictor got wrong (Misses)"),
    PmuEvent("L1I_TLB_REFILL", 0x02, "instruction TLB refills (the ITB's Refills)"),
    PmuEvent("L1D_TLB_REFILL", 0x05, "data TLB refills (the DTB's Refills)"),
)

NAMES: tuple[str, ...] = tuple(e.name for e in EVENTS)

#: What every rate is per: a model's inputs are events per instruction.
INSTRUCTIONS = "INST_RETIRED"

#: Counted by the PMU's dedicated cycle counter (PMCCNTR), beside the
#: event counters.
CYCLES = "CPU_CYCLES"

#: Event counters the kit's gem5 cores have (Cortex-A57 and A53: six each;
#: configs/ampkit_gem5/cluster.py). A model reading its events online must
#: count INST_RETIRED in one of them, and CPU_CYCLES in the cycle counter.
COUNTERS = 6
