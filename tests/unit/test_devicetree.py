"""The generated device trees, checked the way a person would: decompiled by dtc."""

import re
import subprocess
from pathlib import Path

import pytest

from ampkit.devicetree import cpu_nodes, describe_caches, for_gem5, make_asymmetric
from ampkit.engines.qemu import QemuMachine, asymmetric_dtb, base_dtb
from ampkit.errors import AmpkitError
from ampkit.fdt import DeviceTree, Node
from ampkit.platform import get_platform
from tests.dtc import compile_dts

GEM5_DATA = Path(__file__).resolve().parents[1] / "data" / "gem5-v24-2B2L-atomic"


def decompile(blob: bytes, tmp_path: Path) -> str:
    path = tmp_path / "p.dtb"
    path.write_bytes(blob)
    result = subprocess.run(
        ["dtc", "-I", "dtb", "-O", "dts", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def cell(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m is not None, pattern
    return int(m.group(1), 16)


def block(text: str, name: str) -> str:
    """The body of the first node called name (brace-matched)."""
    start = text.index(f"{name} {{")
    depth, i = 0, start
    while True:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1


@pytest.mark.parametrize("name", ["2B2L", "2B4L", "4B2L", "4B4L", "1B3L"])
def test_clusters_and_capacities(name: str, tmp_path: Path) -> None:
    plat = get_platform(name)
    text = decompile(asymmetric_dtb(QemuMachine(plat)), tmp_path)

    phandle = {}
    for reg in range(plat.ncpus):
        node = block(text, f"cpu@{reg}")
        phandle[cell(r"phandle = <(0x[0-9a-f]+)>", node)] = reg
        cap = cell(r"capacity-dmips-mhz = <(0x[0-9a-f]+)>", node)
        assert cap == plat.cpus[reg].capacity, (name, reg)

    cpu_map = block(text, "cpu-map")
    clusters = {}
    for c in (0, 1):
        body = block(cpu_map, f"cluster{c}")
        refs = [int(x, 16) for x in re.findall(r"cpu = <(0x[0-9a-f]+)>", body)]
        clusters[c] = sorted(phandle[r] for r in refs)
    assert clusters[0] == list(range(plat.big))
    assert clusters[1] == list(range(plat.big, plat.ncpus))
    assert "cluster2" not in cpu_map


def test_existing_cpu_map_is_replaced_not_duplicated() -> None:
    machine = QemuMachine(get_platform("2B2L"))
    tree = DeviceTree.from_bytes(base_dtb(machine))
    make_asymmetric(tree, machine.platform)
    make_asymmetric(tree, machine.platform)
    cpus = tree.node("/cpus")
    assert [c.name for c in cpus.children].count("cpu-map") == 1


def test_cpu_count_must_match_the_platform() -> None:
    tree = DeviceTree.from_bytes(base_dtb(QemuMachine(get_platform("2B2L"))))
    with pytest.raises(AmpkitError, match="4 CPU nodes but platform 4B4L has 8"):
        make_asymmetric(tree, get_platform("4B4L"))


def test_cpus_without_phandles_get_fresh_ones() -> None:
    tree = DeviceTree.from_bytes(base_dtb(QemuMachine(get_platform("2B2L"))))
    for node in tree.node("/cpus").children:
        node.props.pop("phandle", None)
    tree.node("/cpus").remove_child("cpu-map")
    make_asymmetric(tree, get_platform("2B2L"))
    handles = [n.u32("phandle") for n in tree.root.walk() if "phandle" in n.props]
    assert len(handles) == len(set(handles))


def test_the_tree_is_the_same_every_time() -> None:
    """QEMU's dumpdtb puts random seeds in /chosen; the kit's tree (a run's
    input, hashed into its key) must not change from one call to the next."""
    machine = QemuMachine(get_platform("2B2L"))
    first, second = asymmetric_dtb(machine), asymmetric_dtb(machine)
    assert first == second
    chosen = DeviceTree.from_bytes(first).root.child("chosen")
    assert chosen is not None and len(chosen.props.get("rng-seed", b"")) == 32


def _cache_props(node: Node) -> dict[str, bytes]:
    return {k: v for k, v in node.props.items() if "cache" in k and k != "next-level-cache"}


def _l2_of(tree: DeviceTree, cpu: Node) -> Node:
    handle = cpu.props["next-level-cache"]
    found = [n for n in tree.root.walk() if n.props.get("phandle") == handle]
    assert len(found) == 1, (cpu.name, handle)
    return found[0]


@pytest.mark.parametrize("name", ["2B2L", "1B3L", "0B2L"])
def test_caches_are_described_per_cpu_and_per_cluster(name: str) -> None:
    """Per-CPU L1s on the cpu nodes, one unified L2 per cluster that every
    CPU of the cluster (and no other) names as its next level: what Linux's
    cacheinfo turns into llc_sibling, hence the MC domain's span."""
    plat = get_platform(name)
    tree = DeviceTree.from_bytes(asymmetric_dtb(QemuMachine(plat)))
    nodes = cpu_nodes(tree)
    l2s: dict[int, set[str]] = {}
    for node, cpu in zip(nodes, plat.cpus, strict=True):
        l1i, l1d = cpu.core.l1i, cpu.core.l1d
        assert node.u32("i-cache-size") == l1i.size_kib * 1024
        assert node.u32("i-cache-sets") * l1i.assoc * 64 == l1i.size_kib * 1024
        assert node.u32("d-cache-size") == l1d.size_kib * 1024
        assert node.u32("d-cache-sets") * l1d.assoc * 64 == l1d.size_kib * 1024
        l2 = _l2_of(tree, node)
        assert l2.str("compatible") == "cache" and "cache-unified" in l2.props
        assert l2.u32("cache-level") == 2
        assert l2.u32("cache-size") == cpu.core.l2.size_kib * 1024
        l2s.setdefault(cpu.cluster, set()).add(l2.name)
    # one L2 per cluster, and no two clusters share one
    assert all(len(names) == 1 for names in l2s.values()), l2s
    assert len({n for names in l2s.values() for n in names}) == len(l2s)


def test_both_engines_tell_the_kernel_the_same_machine(tmp_path: Path) -> None:
    """QEMU's tree (from its dumpdtb) and gem5's (the real v24 tree in
    tests/data), each edited by the kit: node by node, where they must
    agree, they do. CPU reg values differ (gem5's MPIDR carries the cluster
    in Aff1), so CPUs are paired in order."""
    plat = get_platform("2B2L")
    qemu = DeviceTree.from_bytes(asymmetric_dtb(QemuMachine(plat)))
    raw = compile_dts(GEM5_DATA / "system.dts", tmp_path)
    gem5_tree = for_gem5(DeviceTree.from_bytes(raw), plat, pmu=False)
    pairs = list(zip(cpu_nodes(qemu), cpu_nodes(gem5_tree), strict=True))
    assert len(pairs) == plat.ncpus
    for q, g in pairs:
        assert q.u32("capacity-dmips-mhz") == g.u32("capacity-dmips-mhz"), (q.name, g.name)
        data_l1 = {k: v for k, v in _cache_props(q).items() if k.startswith("d-cache-")}
        assert _cache_props(g) == data_l1, (q.name, g.name)
        assert _cache_props(_l2_of(qemu, q)) == _cache_props(_l2_of(gem5_tree, g))
        assert _l2_of(qemu, q).name == _l2_of(gem5_tree, g).name

    def clusters(tree: DeviceTree) -> list[list[int]]:
        order = {n.u32("phandle"): i for i, n in enumerate(cpu_nodes(tree))}
        socket = tree.node("/cpus/cpu-map/socket0")
        return [[order[core.u32("cpu")] for core in c.children] for c in socket.children]

    assert clusters(qemu) == clusters(gem5_tree) == [[0, 1], [2, 3]]


def _of_leaves(node: Node) -> int:
    """Linux 6.1's of_count_cache_leaves()."""
    found = sum(p in node.props for p in ("cache-size", "i-cache-size", "d-cache-size"))
    return found or (1 if "cache-unified" in node.props else 2)


def test_gem5_tree_names_one_cache_leaf_per_level(tmp_path: Path) -> None:
    """gem5 v24's CLIDR_EL1 reads 0, so Linux forms one cache leaf per level
    the tree names; the tree must name exactly that many, or cacheinfo
    fails and the L2 no longer bounds the MC domain. QEMU's CPUs report
    split L1s, and there the tree names both."""
    plat = get_platform("2B2L")
    raw = compile_dts(GEM5_DATA / "system.dts", tmp_path)
    gem5_tree = for_gem5(DeviceTree.from_bytes(raw), plat, pmu=False)
    qemu = DeviceTree.from_bytes(asymmetric_dtb(QemuMachine(plat)))
    for tree, l1_leaves in ((gem5_tree, 1), (qemu, 2)):
        for cpu in cpu_nodes(tree):
            l2 = _l2_of(tree, cpu)
            assert (_of_leaves(cpu), _of_leaves(l2)) == (l1_leaves, 1), cpu.name
            assert "next-level-cache" not in l2.props


def test_describing_caches_twice_leaves_one_description() -> None:
    """A gem5 tree edited again (as a checkpoint's tree is) keeps no L1
    instruction-cache properties from a QEMU-style description."""
    plat = get_platform("2B2L")
    tree = DeviceTree.from_bytes(asymmetric_dtb(QemuMachine(plat)))
    describe_caches(tree, plat, split_l1=False)
    for node, cpu in zip(cpu_nodes(tree), plat.cpus, strict=True):
        assert not any(k.startswith("i-cache-") for k in node.props), node.name
        assert node.u32("d-cache-size") == cpu.core.l1d.size_kib * 1024
