"""ampkit's big.LITTLE system for gem5 v24 (ARM), written against m5.objects.

Small classes with one job each, in the manner of gem5's stdlib components:

    cores.py     the A57-like out-of-order and A53-like in-order CPUs
    caches.py    their L1s and cluster L2s
    cluster.py   a cluster: CPUs, caches, PMUs, clock and voltage domain
    power.py     per-CPU and per-L2 power models (energy per cluster)
    board.py     the VExpress_GEM5_V1 system: DRAM controller, disk, boot

Only gem5's own Python runs this package (configs/bigLITTLE.py imports
it); nothing here is imported by ampkit on the host. The platform
description (configs/platforms.toml) and the device-tree edits
(ampkit/devicetree.py) are ampkit's, shared with QEMU, and read from
there, so both engines show the kernel the same machine.
"""
