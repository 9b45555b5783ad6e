"""A cluster: CPUs of one core type with their clock and voltage domain,
private L1s, a shared L2, a PMU per CPU and, optionally, power models.

Both kinds of a cluster, atomic (boot) and detailed (measured runs), have
the same name and CPU count, and their CPUs the same ids, so a checkpoint
of the first restores into the second: gem5 finds each CPU's state by its
path (system.bigCluster.cpus0, ...), whatever its model.
"""

from m5.objects import (
    ArmPMU,
    ArmPPI,
    AtomicSimpleCPU,
    CpuCluster,
    L2XBar,
    SrcClockDomain,
    VoltageDomain,
)

from .caches import CACHES
from .cores import MODELS
from .power import cpu_power_model, l2_power_model

#: The PMU's interrupt, a PPI (as gem5's starter_fs.py and Arm's FVPs use).
PMU_PPI = 23

#: Event counters per CPU: both cores implement six (PMCR_EL0.N = 6 in the
#: A57 and A53 TRMs); gem5 offers 31 unless told.
PMU_COUNTERS = 6

#: MIDR_EL1 of each core model: implementer Arm (0x41), part 0xD07
#: (Cortex-A57) or 0xD03 (Cortex-A53), as Linux's asm/cputype.h names
#: them; the revisions (A57 r1p0, A53 r0p4) are those QEMU's cortex-a57
#: and cortex-a53 report. gem5 would give every CPU one value otherwise.
MIDR = {"cortex-a57": 0x411FD070, "cortex-a53": 0x410FD034}


class Cluster(CpuCluster):
    """One core type: ``cores`` CPUs numbered from ``first_cpu``, cluster ``index``."""

    def __init__(
        self,
        *,
        core,
        cores: int,
        voltage: str,
        index: int,
        first_cpu: int,
        detailed: bool,
    ):
        super().__init__()
        if cores < 1:
            raise ValueError(f"a cluster needs at least one CPU, not {cores}")
        self._core = core  # ampkit.platform.CoreType
        self._detailed = detailed
        self.voltage_domain = VoltageDomain(voltage=voltage)
        self.clk_domain = SrcClockDomain(
            clock=f"{core.clock_mhz}MHz", voltage_domain=self.voltage_domain
        )
        cpu_class = MODELS[core.model] if detailed else AtomicSimpleCPU
        # cpu_id and socket_id make the MPIDR (Aff1 = cluster, Aff0 = CPU)
        # and the device tree's reg, as on Arm's big.LITTLE parts
        self.cpus = [
            cpu_class(cpu_id=first_cpu + i, socket_id=index, clk_domain=self.clk_domain)
            for i in range(cores)
        ]
        for cpu in self.cpus:
            cpu.createThreads()
            cpu.createInterruptController()
            for isa in cpu.isa:
                isa.midr = MIDR[core.model]

    def memory_mode(self) -> str:
        return "timing" if self._detailed else "atomic"

    def add_caches(self, mem_side_ports) -> None:
        """L1s per CPU and the cluster L2 in front of mem_side_ports (detailed only)."""
        if not self._detailed:
            for cpu in self.cpus:
                cpu.connectCachedPorts(mem_side_ports)
            return
        l1i, l1d, l2 = CACHES[self._core.model]
        self.toL2Bus = L2XBar(width=64, clk_domain=self.clk_domain)
        self.l2 = l2(**_geometry(self._core.l2))
        for cpu in self.cpus:
            cpu.addPrivateSplitL1Caches(
                l1i(**_geometry(self._core.l1i)), l1d(**_geometry(self._core.l1d))
            )
            cpu.connectCachedPorts(self.toL2Bus.cpu_side_ports)
        self.toL2Bus.mem_side_ports = self.l2.cpu_side
        self.l2.mem_side = mem_side_ports

    def add_pmus(self) -> None:
        """PMUv3 on every CPU with gem5's architected events (instructions,
        cycles, branches, TLB and L1/L2 accesses where modelled)."""
        for cpu in self.cpus:
            for isa in cpu.isa:
                isa.pmu = ArmPMU(interrupt=ArmPPI(num=PMU_PPI), eventCounters=PMU_COUNTERS)
                isa.pmu.addArchEvents(
                    cpu=cpu,
                    itb=cpu.mmu.itb,
                    dtb=cpu.mmu.dtb,
                    icache=getattr(cpu, "icache", None),
                    dcache=getattr(cpu, "dcache", None),
                    l2cache=getattr(self, "l2", None),
                )

    def add_power_models(self, ipc_ref: float | None) -> None:
        """Per-CPU and L2 power models (detailed only; power.py). ``ipc_ref``:
        the core's IPC on the calibration benchmark, None if unmeasured."""
        for cpu in self.cpus:
            cpu.power_state.default_state = "ON"
            cpu.power_model = cpu_power_model(
                self._core.model, self._core.clock_mhz, cpu.path(), ipc_ref
            )
        self.l2.power_state.default_state = "ON"
        self.l2.power_model = l2_power_model(self._core.model)


def _geometry(cache) -> dict:
    """gem5's size and associativity of an ampkit.platform.Cache."""
    return {"size": f"{cache.size_kib}KiB", "assoc": cache.assoc}

