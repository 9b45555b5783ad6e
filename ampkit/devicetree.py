"""Device trees that tell Linux the truth about a big.LITTLE platform.

Linux 6.1 on arm64 learns CPU capacities only from ``capacity-dmips-mhz``
and only while walking ``/cpus/cpu-map`` (drivers/base/arch_topology.c).
Without both, every CPU gets capacity 1024, no sched domain carries
SD_ASYM_CPUCAPACITY, and an asymmetry-aware scheduler runs on what the
kernel believes is a symmetric machine. The functions here turn any tree
with one ``cpu@N`` node per CPU (QEMU's, gem5's) into one with a cpu-map of
two clusters, big and little, and a capacity on every CPU.
"""

from ampkit.errors import AmpkitError
from ampkit.fdt import DeviceTree, Node
from ampkit.platform import Platform


def cpu_nodes(tree: DeviceTree) -> list[Node]:
    """The /cpus/cpu@N nodes, ordered by their ``reg`` (the MPIDR affinity)."""
    cpus = tree.node("/cpus")
    nodes = [
        n
        for n in cpus.children
        if n.name.startswith("cpu@") and n.props.get("device_type") == b"cpu\0"
    ]
    return sorted(nodes, key=lambda n: n.u32s("reg"))


def make_asymmetric(tree: DeviceTree, platform: Platform) -> DeviceTree:
    """Give the tree's CPUs the platform's clusters and capacities (in place)."""
    nodes = cpu_nodes(tree)
    if len(nodes) != platform.ncpus:
        raise AmpkitError(
            f"the device tree has {len(nodes)} CPU nodes but platform {platform.name} "
            f"has {platform.ncpus} CPUs"
        )
    next_phandle = tree.max_phandle() + 1
    for node, cpu in zip(nodes, platform.cpus, strict=True):
        if "phandle" not in node.props:
            node.set_u32("phandle", next_phandle)
            next_phandle += 1
        node.set_u32("capacity-dmips-mhz", cpu.capacity)

    cpus = tree.node("/cpus")
    cpus.remove_child("cpu-map")
    # cpu-map must come before the cpu nodes only by convention; Linux looks
    # it up by name. Insert it first, where QEMU puts its own.
    cpu_map = Node("cpu-map")
    cpus.children.insert(0, cpu_map)
    socket = cpu_map.add_child("socket0")
    clusters: dict[int, Node] = {}
    cores_in: dict[int, int] = {}
    for node, cpu in zip(nodes, platform.cpus, strict=True):
        cluster = clusters.get(cpu.cluster)
        if cluster is None:
            cluster = clusters[cpu.cluster] = socket.add_child(f"cluster{cpu.cluster}")
        core_id = cores_in.get(cpu.cluster, 0)
        cores_in[cpu.cluster] = core_id + 1
        cluster.add_child(f"core{core_id}").set_u32("cpu", node.u32("phandle"))
    return tree


def _compatibles(node: Node) -> list[str]:
    raw = node.props.get("compatible", b"")
    return [c.decode() for c in raw.split(b"\0") if c]


#: The memory-mapped timer's binding. Linux 6.1 holds the CP15 counter back
#: until a node of it has been probed (arch_timer_needs_of_probing() in
#: drivers/clocksource/arm_arch_timer.c); gem5 v24's frame fails that probe
#: ("Unable to find a suitable frame"), and the guest is left with jiffies
#: as clocksource and sched_clock: 4 ms steps at HZ=250.
TIMER_MEM = "arm,armv7-timer-mem"

#: What gem5's ArmPMU puts in the tree, and what Linux's PMUv3 driver binds to.
PMUV3 = "arm,armv8-pmuv3"


def for_gem5(tree: DeviceTree, platform: Platform, *, pmu: bool = True) -> DeviceTree:
    """gem5's generated tree, made to tell Linux the truth (in place).

    Clusters and capacities as on QEMU (make_asymmetric); every
    memory-mapped timer disabled, so that the architected counter
    (``arch_sys_counter``) becomes the clocksource; and, with ``pmu``, a
    PMUv3 node required, because perf_event_open in the guest depends on it.
    """
    make_asymmetric(tree, platform)
    for node in tree.root.walk():
        if TIMER_MEM in _compatibles(node):
            node.set_str("status", "disabled")
    if pmu and not any(PMUV3 in _compatibles(n) for n in tree.root.walk()):
        raise AmpkitError(
            f"gem5's device tree has no '{PMUV3}' node",
            "the configuration must give every CPU an ArmPMU (configs/ampkit_gem5/cluster.py)",
        )
    return tree
