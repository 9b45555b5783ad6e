"""The gem5 engine without gem5: locating it, its command lines, checkpoint
checks, and the device tree edits applied to gem5's real generated tree."""

import json
import re
from pathlib import Path

import pytest

from ampkit.devicetree import for_gem5
from ampkit.engines import gem5
from ampkit.engines.base import EngineIdentity
from ampkit.errors import AmpkitError, UsageError
from ampkit.fdt import DeviceTree
from ampkit.mix import App, Mix
from ampkit.platform import get_platform
from ampkit.run import RunRequest, prepare
from tests.dtc import compile_dts, decompile

#: gem5 v24's own tree for 2B2L (fs_bigLITTLE.py), and the tree that was
#: measured to fix it (see the folder's README)
GEM5_DATA = Path(__file__).resolve().parents[1] / "data" / "gem5-v24-2B2L-atomic"


def fake_tree(root: Path, *, binary: bool = True, bootloader: bool = True) -> Path:
    if binary:
        (root / gem5.BINARY).parent.mkdir(parents=True)
        (root / gem5.BINARY).write_bytes(b"")
    if bootloader:
        (root / gem5.BOOTLOADER).parent.mkdir(parents=True)
        (root / gem5.BOOTLOADER).write_bytes(b"")
    return root


@pytest.fixture
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(gem5.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "ampkit" / "config.toml"


def test_without_gem5_one_message_says_how_to_configure_it(no_config: Path) -> None:
    with pytest.raises(AmpkitError, match="no gem5 build is configured") as e:
        gem5.Gem5.locate()
    assert "GEM5_ROOT" in str(e.value) and str(no_config) in str(e.value)


def test_a_missing_binary_or_bootloader_is_named_with_what_to_build(
    tmp_path: Path, no_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_tree(tmp_path / "a", binary=False)
    monkeypatch.setenv(gem5.ENV_VAR, str(root))
    with pytest.raises(AmpkitError, match=re.escape(str(root / gem5.BINARY))) as e:
        gem5.Gem5.locate()
    assert "scons build/ARM/gem5.opt" in str(e.value)

    root = fake_tree(tmp_path / "b", bootloader=False)
    monkeypatch.setenv(gem5.ENV_VAR, str(root))
    with pytest.raises(AmpkitError, match=re.escape(str(root / gem5.BOOTLOADER))) as e:
        gem5.Gem5.locate()
    assert "make -C" in str(e.value)


def test_the_config_file_names_the_tree(
    tmp_path: Path, no_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_tree(tmp_path / "gem5")
    no_config.parent.mkdir(parents=True)
    no_config.write_text(f'[gem5]\nroot = "{root}"\n')
    found = gem5.Gem5.locate()
    assert (found.binary, found.bootloader) == (root / gem5.BINARY, root / gem5.BOOTLOADER)
    # the environment wins over the file
    other = fake_tree(tmp_path / "other")
    monkeypatch.setenv(gem5.ENV_VAR, str(other))
    assert gem5.Gem5.locate().root == other


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('gem5 = "x"\n', ":1: 'gem5' must be a table"),
        ("[gem5]\nroot = 5\n", ":2: 'gem5.root' must be a string, not an integer 5"),
        ('[gem5]\nrot = "/x"\n', ":2: 'gem5.rot' is not a [gem5] key"),
    ],
)
def test_a_broken_config_file_is_named_with_line_and_key(
    no_config: Path, text: str, expected: str
) -> None:
    no_config.parent.mkdir(parents=True)
    no_config.write_text(text)
    with pytest.raises(AmpkitError) as e:
        gem5.Gem5.locate()
    assert e.value.what.startswith(str(no_config)) and expected in e.value.what


def test_the_gem5_configuration_hash_covers_every_module_it_imports() -> None:
    names = {p.name for p in gem5.config_files()}
    # bigLITTLE.py imports ampkit.platform, which reads platforms.toml through
    # ampkit.tomlfile: both decide what is simulated
    assert {"bigLITTLE.py", "platforms.toml", "platform.py", "tomlfile.py"} <= names
    assert "run.py" not in names  # nothing the configuration does not load


def elf_header(machine: int, elf_class: int = 2) -> bytes:
    return (
        b"\x7fELF"
        + bytes([elf_class, 1, 1])
        + bytes(9)
        + (2).to_bytes(2, "little")
        + (machine.to_bytes(2, "little"))
        + bytes(44)
    )


def test_the_kernel_must_be_an_arm64_elf(tmp_path: Path) -> None:
    good = tmp_path / "vmlinux"
    good.write_bytes(elf_header(183))
    gem5.check_kernel(good)

    image = tmp_path / "Image"
    image.write_bytes(bytes(56) + b"ARM\x64" + bytes(64))
    with pytest.raises(AmpkitError, match="is an arm64 Image, not an ELF vmlinux"):
        gem5.check_kernel(image)
    x86 = tmp_path / "bzImage.elf"
    x86.write_bytes(elf_header(62))
    with pytest.raises(AmpkitError, match="not a 64-bit arm64 kernel"):
        gem5.check_kernel(x86)
    with pytest.raises(AmpkitError, match="cannot read the kernel"):
        gem5.check_kernel(tmp_path / "missing")


def test_command_lines(tmp_path: Path) -> None:
    g = gem5.Gem5(root=tmp_path, binary=tmp_path / "gem5.opt", bootloader=tmp_path / "boot.arm64")
    machine = gem5.Gem5Machine(get_platform("2B4L"), memory_mb=1024)
    kernel, initrd = Path("/k/vmlinux"), Path("/i.cpio.gz")
    boot = gem5.boot_command(
        g,
        machine,
        outdir=tmp_path / "o",
        checkpoint=tmp_path / "c",
        kernel=kernel,
        initrd=initrd,
        cmdline="a b",
    )
    assert boot[:4] == [str(g.binary), "-d", str(tmp_path / "o"), str(gem5.SCRIPT)]
    text = " ".join(boot)
    for part in ("--big 2 --little 4", "--memory-mb 1024", "--mode boot", "--cmdline"):
        assert part in text
    assert boot[boot.index("--cmdline") + 1] == "a b"  # one argument, not split
    assert boot[boot.index("--bootloader") + 1] == str(g.bootloader)
    assert "--checkpoint-dir" in boot and "--restore-from" not in boot

    run = gem5.run_command(
        g,
        machine,
        outdir=tmp_path / "r",
        readfile=tmp_path / "run.desc",
        checkpoint=tmp_path / "c",
        disk=tmp_path / "parsec.img",
        kernel=kernel,
        initrd=initrd,
        cmdline="a b",
    )
    assert run[run.index("--mode") + 1] == "detailed"
    assert run[run.index("--restore-from") + 1] == str(tmp_path / "c")
    assert run[run.index("--readfile") + 1] == str(tmp_path / "run.desc")
    assert run[run.index("--disk") + 1] == str(tmp_path / "parsec.img")
    cold = gem5.run_command(
        g,
        machine,
        outdir=tmp_path / "r",
        readfile=tmp_path / "d",
        checkpoint=None,
        kernel=kernel,
        initrd=initrd,
        cmdline="a b",
    )
    assert "--restore-from" not in cold
    dtb = gem5.dtb_command(g, machine, out=tmp_path / "t.dtb")
    assert dtb[:4] == [str(g.binary), "-d", str(tmp_path / "m5out-dtb"), str(gem5.SCRIPT)]
    assert dtb[-2:] == ["--dtb-only", str(tmp_path / "t.dtb")]
    assert "--initrd" not in dtb and "--kernel" not in dtb
    assert gem5.SCRIPT.is_file()


def test_checkpoint_keys_follow_every_input() -> None:
    machine = gem5.Gem5Machine(get_platform("2B2L"))
    base = {
        "gem5_sha256": "g",
        "kernel_sha256": "k",
        "initramfs_sha256": "i",
        "cmdline": "c",
        "disk_sha256": None,
    }
    key = gem5.checkpoint_key(machine, **base)  # type: ignore[arg-type]
    assert gem5.checkpoint_key(machine, **base) == key  # type: ignore[arg-type]
    for field in base:
        changed = {**base, field: "x"}
        assert gem5.checkpoint_key(machine, **changed) != key, field  # type: ignore[arg-type]
    for other in (gem5.Gem5Machine(get_platform("2B4L")), gem5.Gem5Machine(machine.platform, 4096)):
        assert gem5.checkpoint_key(other, **base) != key  # type: ignore[arg-type]


def test_a_checkpoint_restores_only_into_its_machine(tmp_path: Path) -> None:
    cpt = tmp_path / "cpt"
    cpt.mkdir()
    machine = gem5.Gem5Machine(get_platform("2B2L"), memory_mb=2048)
    with pytest.raises(AmpkitError, match="not a gem5 checkpoint"):
        gem5.check_checkpoint(cpt, machine)
    (cpt / "m5.cpt").write_text("[root]\n")
    with pytest.raises(AmpkitError, match=r"no readable ampkit-checkpoint\.json"):
        gem5.check_checkpoint(cpt, machine)
    gem5.write_checkpoint_meta(cpt, machine, "k")
    gem5.check_checkpoint(cpt, machine)
    with pytest.raises(AmpkitError, match="taken on 2B2L with 2048 MiB; this run is 2B4L"):
        gem5.check_checkpoint(cpt, gem5.Gem5Machine(get_platform("2B4L"), memory_mb=2048))
    with pytest.raises(AmpkitError, match=r"this run is 2B2L with 1024 MiB \(MiB differ\)"):
        gem5.check_checkpoint(cpt, gem5.Gem5Machine(get_platform("2B2L"), memory_mb=1024))
    assert json.loads((cpt / "ampkit-checkpoint.json").read_text())["key"] == "k"


def test_gem5s_tree_is_made_to_tell_the_truth(tmp_path: Path) -> None:
    """gem5 v24's real tree: no cpu-map, no capacities, a memory-mapped timer
    that leaves Linux on jiffies. Edited, it matches the tree measured to
    give two clusters and arch_sys_counter, with the platform's capacities
    (1024/347 from Juno's figures when it was measured)."""
    blob = compile_dts(GEM5_DATA / "system.dts", tmp_path)
    plat = get_platform("2B2L")
    with pytest.raises(AmpkitError, match="no 'arm,armv8-pmuv3' node"):
        for_gem5(DeviceTree.from_bytes(blob), plat)
    tree = for_gem5(DeviceTree.from_bytes(blob), plat, pmu=False)
    text = decompile(tree.to_bytes(), tmp_path)
    assert re.findall(r"capacity-dmips-mhz = <(0x[0-9a-f]+)>", text) == [
        hex(c.capacity) for c in plat.cpus
    ]
    timer = re.search(r"timer@2a810000 \{(.*?)\n\t\};", text, re.S)
    assert timer is not None and 'status = "disabled";' in timer.group(1)

    measured = DeviceTree.from_bytes(compile_dts(GEM5_DATA / "system-measured-fix.dts", tmp_path))
    ours = DeviceTree.from_bytes(tree.to_bytes())
    paths = ("/cpus/cpu@0", "/cpus/cpu@1", "/cpus/cpu@102", "/cpus/cpu@103")
    for cpu, path in zip(plat.cpus, paths, strict=True):
        # the measured tree's capacities were Juno's, ours the platform's
        assert ours.node(path).u32("capacity-dmips-mhz") in (
            measured.node(path).u32("capacity-dmips-mhz"),
            cpu.capacity,
        )
    assert ours.node("/timer@2a810000").str("status") == "disabled"
    # each cluster's cores point at the CPUs the measured tree names
    clusters = ours.node("/cpus/cpu-map/socket0")
    phandles = {
        n.u32("phandle"): n.name for n in ours.node("/cpus").children if "phandle" in n.props
    }
    assert [
        [phandles[core.u32("cpu")] for core in cluster.children] for cluster in clusters.children
    ] == [["cpu@0", "cpu@1"], ["cpu@102", "cpu@103"]]


def test_a_simulation_is_bounded_and_keeps_its_output(tmp_path: Path) -> None:
    log = tmp_path / "gem5.log"
    done = gem5.simulate(["sh", "-c", "echo simulated; exit 3"], log, timeout_s=30)
    assert (done.exit_code, done.timed_out) == (3, False)
    assert log.read_text() == "simulated\n"
    hung = gem5.simulate(["sh", "-c", "echo started; sleep 60"], log, timeout_s=1)
    assert (hung.exit_code, hung.timed_out) == (None, True) and hung.wall_s < 10
    assert log.read_text() == "started\n"


def test_a_platform_above_eight_cpus_is_refused_before_gem5_starts() -> None:
    with pytest.raises(AmpkitError, match="4B5L has 9 CPUs"):
        gem5.Gem5Machine(get_platform("4B5L"))
    assert gem5.Gem5Machine(get_platform("0B2L")).args() == [
        "--big", "0", "--little", "2", "--memory-mb", "2048"
    ]  # fmt: skip


def test_gem5s_own_fatal_line_is_the_runs_reason(tmp_path: Path) -> None:
    log = tmp_path / "gem5.log"
    log.write_text(
        "info: Standard input is not a terminal, disabling listeners.\n"
        "warn: No dot file generated.\n"
        "fatal: system.littleCluster.cpus0.x without default or user set value\n"
    )
    assert gem5.gem5_errors(log) == [
        "gem5: fatal: system.littleCluster.cpus0.x without default or user set value"
    ]
    assert gem5.gem5_errors(tmp_path / "absent.log") == []


def test_a_guest_clock_asked_of_a_gem5_run_is_refused() -> None:
    """A setting gem5 cannot honour stops the run (and a campaign's plan)
    before anything is built or booted, rather than being ignored."""
    request = RunRequest(
        platform=get_platform("2B2L"),
        policy="cfs",
        mix=Mix("m", "d", "compute", (App("compute", 1, 1),), Path("m")),
        engine="gem5",
        qemu_clock="icount",
    )
    identity = EngineIdentity(name="gem5", version="v24", binary_sha256="0" * 64)
    with pytest.raises(UsageError, match="guest clock 'icount' was asked of a gem5 run"):
        prepare(request, identity, "0" * 64, "0" * 64)
