"""The generated device trees, checked the way a person would: decompiled by dtc."""

import re
import subprocess
from pathlib import Path

import pytest

from ampkit.devicetree import make_asymmetric
from ampkit.engines.qemu import QemuMachine, asymmetric_dtb, base_dtb
from ampkit.errors import AmpkitError
from ampkit.fdt import DeviceTree
from ampkit.platform import get_platform


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
        assert cap == (1024 if reg < plat.big else 347), (name, reg)

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
