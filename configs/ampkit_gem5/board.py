"""The system: gem5's VExpress_GEM5_V1 platform, two clusters, a DRAM
controller, the kit's kernel and initramfs, and an optional disk.

VExpress_GEM5_V1 (GICv2, PL011 at 0x1c090000, PCI ECAM, generic timer)
is the platform gem5's own big.LITTLE example boots, and the one the kit's
kernel configuration was checked against. Memory is a DRAM controller,
not gem5's fixed-latency SimpleMemory, so that the applications of a mix
contend for it: DDR3-1600 x64 (12.8 GB/s, the peak of Juno's two 32-bit
DDR3L channels; gem5 has no DDR3L timing set).
"""

from m5.objects import (
    AddrRange,
    ArmFsLinux,
    ArmSystem,
    Armv8,
    BadAddr,
    Bridge,
    Cache,
    CowDiskImage,
    DDR3_1600_8x8,
    IOXBar,
    MemCtrl,
    PciVirtIO,
    SrcClockDomain,
    SystemXBar,
    Terminal,
    VExpress_GEM5_V1,
    VirtIOBlock,
    VncServer,
    VoltageDomain,
)


class IOCache(Cache):
    # keeps DMA coherent with the CPUs' caches (as gem5's own IOCache)
    assoc = 8
    tag_latency = 50
    data_latency = 50
    response_latency = 50
    mshrs = 20
    size = "1KiB"
    tgts_per_mshr = 12


class MemBus(SystemXBar):
    badaddr_responder = BadAddr(warn_access="warn")


class BigLittleSystem(ArmSystem):
    """Everything but the clusters, which the caller adds (add_cluster)."""

    cache_line_size = 64
    # the runner numbers its work items by application: as many ids as a
    # run has applications at most (MAX_APPS in ampkit-init.c); gem5 has 16
    num_work_ids = 64

    def __init__(self, *, memory_mb: int, kernel: str, detailed: bool):
        super().__init__()
        # Armv8.0-A with the crypto and CRC32 extensions, as both the A57
        # and the A53 implement it; gem5's default release adds LSE, SVE,
        # SME, PAuth and more, which the kernel would use and the modelled
        # cores do not have
        self.release = Armv8()
        self.voltage_domain = VoltageDomain(voltage="1.0V")
        self.clk_domain = SrcClockDomain(clock="1GHz", voltage_domain=self.voltage_domain)
        self.realview = VExpress_GEM5_V1()
        self.gic_cpu_addr = self.realview.gic.cpu_addr
        self.terminal = Terminal()
        # the platform's display controller (HDLcd) takes its input from a
        # VNC server somewhere above it; gem5 opens no port for it when its
        # standard input is not a terminal, as under ampkit
        self.vncserver = VncServer()
        self.workload = ArmFsLinux(object_file=kernel)
        # a guest panic or oops ends the simulation instead of spinning
        self.workload.panic_on_panic = True
        self.workload.panic_on_oops = True
        self.mem_ranges = [AddrRange(start=0x80000000, size=f"{memory_mb}MiB")]
        self.membus = MemBus()
        self.membus.default = self.membus.badaddr_responder.pio
        self.iobus = IOXBar()
        self.iobridge = Bridge(delay="50ns")
        self.iobridge.mem_side_port = self.iobus.cpu_side_ports
        self.iobridge.cpu_side_port = self.membus.mem_side_ports
        if detailed:
            self.iocache = IOCache(addr_ranges=self.mem_ranges)
            self.iocache.mem_side = self.membus.cpu_side_ports
            self.iocache.cpu_side = self.iobus.mem_side_ports
        else:
            self.dmabridge = Bridge(delay="50ns", ranges=self.mem_ranges)
            self.dmabridge.mem_side_port = self.membus.cpu_side_ports
            self.dmabridge.cpu_side_port = self.iobus.mem_side_ports
        self.mem_ctrls = [
            MemCtrl(dram=DDR3_1600_8x8(range=r), port=self.membus.mem_side_ports)
            for r in self.mem_ranges
        ]
        self.realview.attachOnChipIO(self.membus, self.iobridge)
        self.realview.attachIO(self.iobus)
        self.system_port = self.membus.cpu_side_ports
        self._clusters = []

    def add_cluster(self, name: str, cluster) -> None:
        setattr(self, name, cluster)
        self._clusters.append(cluster)
        self.mem_mode = cluster.memory_mode()

    def clusters(self) -> list:
        return list(self._clusters)

    def attach_disk(self, image: str) -> None:
        """A raw image as a PCI virtio block device (/dev/vda in the guest).
        Writes go to a copy-on-write layer, never to the image."""
        self.disk_image = CowDiskImage()
        self.disk_image.child.image_file = image
        self.disk_image.child.read_only = True
        self.pci_vio_block = PciVirtIO(vio=VirtIOBlock(image=self.disk_image))
        self.realview.attachPciDevice(self.pci_vio_block, self.iobus)

    def place_boot_loader(self, bootloader: str | None) -> None:
        """gem5's bootloader, and where it, the device tree and the initramfs
        go in memory. Called before the device tree is generated: the tree
        names the spin-table address the secondary CPUs wait on
        (cpu-release-addr), which this sets."""
        self.realview.setupBootLoader(self, lambda name: name, [bootloader] if bootloader else [])

    def boot_with(self, *, initrd: str, cmdline: str, dtb: str) -> None:
        self.workload.initrd_filename = initrd
        self.workload.command_line = cmdline
        self.workload.dtb_filename = dtb
