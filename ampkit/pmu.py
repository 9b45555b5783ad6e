"""The PMU events the kit counts: the speedup model's vocabulary.

The runner counts them per application when a run description lists them
(``pmu INST_RETIRED,...``: workloads/runner/pmu.c, each by its
architected number on the CPU PMU); ``ampkit profile`` keeps them per
program and core type; ampkit.speedupmodel trains on their rates per
instruction.

They are the architected events gem5's ArmPMU implements (addArchEvents
in gem5's src/arch/arm/ArmPMU.py), SW_INCR aside, each fed by a probe of
the CPU model, its branch predictor or its TLBs. Cache refills are not
among them: gem5 leaves those events unimplemented. QEMU's PMU counts
cycles only (and instructions with a fixed icount shift): a QEMU run
records the others as unlisted, with counts of zero, and drives the
pipeline, not a model.
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

#: Event counters a model may use beside the cycle counter. The kit's
#: cores are Cortex-A57s and A53s, six counters each, and gem5 is told so
#: (configs/ampkit_gem5/cluster.py); gem5 v24 builds one fewer than it is
#: told while reporting all six to the guest (its PMU constructor loops to
#: the count less one; fixed after v24, gem5 pull request 1993), so on the
#: gem5 a user has, five count.
COUNTERS = 5

#: The events a profile counts, one run each (ampkit.profile): one group
#: each, INST_RETIRED its leader, that the PMU holds at once (COUNTERS
#: event counters and the cycle counter), so that the kernel never
#: time-shares the counters, which gem5 v24 miscounts (workloads/runner/
#: pmu.h). The first set's run also times the application.
EVENT_SETS: tuple[tuple[str, ...], ...] = (
    ("INST_RETIRED", "CPU_CYCLES", "LD_RETIRED", "ST_RETIRED", "BR_RETIRED", "BR_MIS_PRED"),
    ("INST_RETIRED", "CPU_CYCLES", "MEM_ACCESS", "BR_PRED", "L1I_TLB_REFILL", "L1D_TLB_REFILL"),
)


def fits(events: tuple[str, ...] | list[str]) -> bool:
    """Whether one group of these events fits the PMU at once."""
    return sum(1 for e in events if e != CYCLES) <= COUNTERS
