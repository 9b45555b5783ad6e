import subprocess
from pathlib import Path

import pytest

from ampkit.engines.qemu import QemuMachine, base_dtb
from ampkit.fdt import DeviceTree, FdtError, Node
from ampkit.platform import get_platform


def dts(blob: bytes, tmp_path: Path) -> str:
    path = tmp_path / "t.dtb"
    path.write_bytes(blob)
    out = subprocess.run(
        ["dtc", "-q", "-I", "dtb", "-O", "dts", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def test_round_trip_of_qemu_tree_is_lossless(tmp_path: Path) -> None:
    blob = base_dtb(QemuMachine(get_platform("2B2L")))
    again = DeviceTree.from_bytes(blob).to_bytes()
    assert dts(again, tmp_path) == dts(blob, tmp_path)


def test_edits_survive_a_round_trip() -> None:
    tree = DeviceTree(root=Node(""))
    node = tree.root.add_child("cpus").add_child("cpu@0")
    node.set_u32("reg", 0)
    node.set_u32("capacity-dmips-mhz", 347)
    node.set_str("compatible", "arm,cortex-a53")
    back = DeviceTree.from_bytes(tree.to_bytes())
    cpu = back.node("/cpus/cpu@0")
    assert cpu.u32("capacity-dmips-mhz") == 347
    assert cpu.str("compatible") == "arm,cortex-a53"


@pytest.mark.parametrize("blob", [b"", b"\xd0\x0d\xfe\xed", b"\x00" * 64])
def test_malformed_blobs_are_refused(blob: bytes) -> None:
    with pytest.raises(FdtError):
        DeviceTree.from_bytes(blob)


def test_truncated_blob_is_refused() -> None:
    blob = base_dtb(QemuMachine(get_platform("2B2L")))
    compact = DeviceTree.from_bytes(blob).to_bytes()
    with pytest.raises(FdtError):
        DeviceTree.from_bytes(compact[: len(compact) // 2])


def test_missing_node_is_an_error() -> None:
    with pytest.raises(FdtError, match="no node /nope"):
        DeviceTree(root=Node("")).node("/nope")
