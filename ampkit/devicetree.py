"""Device trees that tell Linux the truth about a big.LITTLE platform.

Linux 6.1 on arm64 learns CPU capacities only from ``capacity-dmips-mhz``
and only while walking ``/cpus/cpu-map`` (drivers/base/arch_topology.c).
Without both, every CPU gets capacity 1024, no sched domain carries
SD_ASYM_CPUCAPACITY, and an asymmetry-aware scheduler runs on what the
kernel believes is a symmetric machine. The functions here turn any tree
with one ``cpu@N`` node per CPU (QEMU's, gem5's) into one with a cpu-map of
two clusters, big and little, a capacity on every CPU, and the caches.

The caches matter as much as the clusters. Linux 6.1 bounds the MC domain
by the CPUs that share the last-level cache (``cpu_coregroup_mask()``);
with no cache nodes it falls back to the whole package, so big and little
CPUs look as if they shared an LLC: ``cpus_share_cache()`` holds across
clusters (wake-affine choices, remote wake lists, the LLC's idle state),
and the domain per cluster is CLS rather than one that shares a cache. With
per-CPU L1s and one L2 per cluster, linked by ``next-level-cache``, both
engines give the kernel one domain per cluster that shares its L2 and one
above it with SD_ASYM_CPUCAPACITY, as on a real big.LITTLE part.

Linux builds the cache leaves from two sources that must agree: their
number from the tree (``init_of_cache_level()``), their levels and types
from the CPU's CLIDR_EL1 (``populate_cache_leaves()``). QEMU's CPUs report
split L1s and a unified L2, as the tree says. gem5 v24's CLIDR_EL1 reads 0
(no cache at any level, and not configurable), so the kernel forms one leaf
per level the tree names; a tree with split L1s then has one leaf too many,
cacheinfo gives up ("Unable to detect cache hierarchy") and the domains
fall back to CLS over the whole package. gem5's tree therefore names the
L1 by its data cache only (``split_l1=False``): the same levels and the
same L2 sharing, which is what the domains are built from.
"""

from ampkit.errors import AmpkitError
from ampkit.fdt import DeviceTree, Node
from ampkit.platform import Cache, Platform

#: The per-cluster last-level cache nodes this module adds under /cpus.
L2_NODE = "l2-cache{}"


def cpu_nodes(tree: DeviceTree) -> list[Node]:
    """The /cpus/cpu@N nodes, ordered by their ``reg`` (the MPIDR affinity)."""
    cpus = tree.node("/cpus")
    nodes = [
        n
        for n in cpus.children
        if n.name.startswith("cpu@") and n.props.get("device_type") == b"cpu\0"
    ]
    return sorted(nodes, key=lambda n: n.u32s("reg"))


def make_asymmetric(tree: DeviceTree, platform: Platform, *, split_l1: bool = True) -> DeviceTree:
    """Give the tree's CPUs the platform's clusters, capacities and caches
    (in place; ``split_l1`` as describe_caches())."""
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
    describe_caches(tree, platform, split_l1=split_l1)
    return tree


def _set_geometry(node: Node, prefix: str, cache: Cache) -> None:
    node.set_u32(f"{prefix}cache-size", cache.size_bytes)
    node.set_u32(f"{prefix}cache-line-size", cache.line_bytes)
    node.set_u32(f"{prefix}cache-sets", cache.sets)


def describe_caches(tree: DeviceTree, platform: Platform, *, split_l1: bool = True) -> DeviceTree:
    """Per-CPU L1s and one unified L2 per cluster, as the Devicetree
    Specification's cache binding (section 3.8) and Linux's cacheinfo
    read them (in place; replaces what an earlier call added).

    With ``split_l1`` the cpu nodes carry both L1s (``i-`` and ``d-``);
    without it only the data cache, for CPUs whose CLIDR_EL1 reports no
    split level (gem5's: see the module's docstring)."""
    nodes = cpu_nodes(tree)
    cpus = tree.node("/cpus")
    for cluster in {cpu.cluster for cpu in platform.cpus}:
        cpus.remove_child(L2_NODE.format(cluster))
    next_phandle = tree.max_phandle() + 1
    l2_phandles: dict[int, int] = {}
    for cpu in platform.cpus:
        if cpu.cluster in l2_phandles:
            continue
        l2 = cpus.add_child(L2_NODE.format(cpu.cluster))
        l2.set_str("compatible", "cache")
        l2.props["cache-unified"] = b""
        l2.set_u32("cache-level", 2)
        _set_geometry(l2, "", cpu.core.l2)
        l2.set_u32("phandle", next_phandle)
        l2_phandles[cpu.cluster] = next_phandle
        next_phandle += 1
    for node, cpu in zip(nodes, platform.cpus, strict=True):
        for prop in [k for k in node.props if k.startswith(("i-cache-", "d-cache-"))]:
            del node.props[prop]
        if split_l1:
            _set_geometry(node, "i-", cpu.core.l1i)
        _set_geometry(node, "d-", cpu.core.l1d)
        node.set_u32("next-level-cache", l2_phandles[cpu.cluster])
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

    Clusters, capacities and the L2s as on QEMU (make_asymmetric; the L1
    named by its data cache alone, see the module's docstring); every
    memory-mapped timer disabled, so that the architected counter
    (``arch_sys_counter``) becomes the clocksource; and, with ``pmu``, a
    PMUv3 node required, because perf_event_open in the guest depends on it.
    """
    make_asymmetric(tree, platform, split_l1=False)
    for node in tree.root.walk():
        if TIMER_MEM in _compatibles(node):
            node.set_str("status", "disabled")
    if pmu and not any(PMUV3 in _compatibles(n) for n in tree.root.walk()):
        raise AmpkitError(
            f"gem5's device tree has no '{PMUV3}' node",
            "the configuration must give every CPU an ArmPMU (configs/ampkit_gem5/cluster.py)",
        )
    return tree
