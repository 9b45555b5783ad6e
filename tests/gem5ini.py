"""What a gem5 run's config.ini says it simulated: the kit's tests read it
to check the machine gem5 built, not the Python that asked for it."""

import configparser
import lzma
from pathlib import Path

#: The cores' Main ID Registers: Cortex-A57 r1p0 and Cortex-A53 r0p4 (Arm's
#: technical reference manuals, MIDR_EL1), as configs/ampkit_gem5 sets them.
MIDR = {"bigCluster": 0x411FD070, "littleCluster": 0x410FD034}


def read_config(m5out: Path) -> configparser.ConfigParser:
    """config.ini of a gem5 output directory, compressed (a committed
    fixture) or not (a fresh run)."""
    packed = m5out / "config.ini.xz"
    text = (
        lzma.decompress(packed.read_bytes()).decode()
        if packed.is_file()
        else (m5out / "config.ini").read_text()
    )
    ini = configparser.ConfigParser(interpolation=None, strict=False)
    ini.read_string(text)
    return ini


def cpu_isas(ini: configparser.ConfigParser) -> dict[str, configparser.SectionProxy]:
    """Each simulated CPU's ISA section, by CPU (bigCluster.cpus0, ...)."""
    return {
        name.removeprefix("system.").removesuffix(".isa"): ini[name]
        for name in ini.sections()
        if name.endswith(".isa") and "Cluster.cpus" in name
    }


def check_cores(m5out: Path) -> None:
    """Every CPU identifies as its core (MIDR) and counts with 6 PMU
    counters, as the cores have; the machine runs Armv8.0-A (gem5's default
    release would give the guest LSE, SVE, SME and PAuth)."""
    ini = read_config(m5out)
    isas = cpu_isas(ini)
    assert {cpu.split(".")[0] for cpu in isas} == set(MIDR), sorted(isas)
    for cpu, isa in isas.items():
        assert int(isa["midr"]) == MIDR[cpu.split(".")[0]], (cpu, hex(int(isa["midr"])))
        assert ini[f"system.{cpu}.isa.pmu"]["eventCounters"] == "6", cpu
    extensions = set(ini["system.release"]["extensions"].split())
    assert not extensions & {"FEAT_LSE", "FEAT_SVE", "FEAT_SME", "FEAT_PAuth"}, extensions
