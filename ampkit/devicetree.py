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
