"""L1 and cluster L2 caches of the two core types (classic memory system).

Sizes and associativities are not here: they come from the platform
description (configs/platforms.toml, with their sources), which the device
trees of both engines describe to Linux too, so what is simulated and what
the kernel is told cannot drift apart (Cluster.add_caches sets them).
Latencies are not published for either core; the L1s give the
load-to-use latencies of [LLVM-A57] (4) and [LLVM-A53]'s LoadLatency (3,
which LLVM calls optimistic; its per-operand load latency is 4) with the
core's own pipeline cycle, the L2s follow gem5's A15 and HPI models
(ex5_big 15 cycles; HPI 13 + 5), the Cortex-A15 measurement of about 21
cycles load-to-use on Exynos 5250 (7-cpu.com) bounding them. The little
core's L1s and prefetcher are [HPI]'s (gem5's configs/common/cores/arm/
HPI.py: HPI_ICache, HPI_DCache). Miss queues (MSHRs, targets, write
buffers) are not published for either core [assumed]: the big core's are
sized for an out-of-order window with many misses in flight, the little
core's L2 for two cores' L1 misses.
"""

from m5.objects import Cache, StridePrefetcher


class BigL1I(Cache):
    # instructions are never written through it (as gem5's own L1_ICache)
    is_read_only = True
    writeback_clean = True
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 4
    tgts_per_mshr = 8


class BigL1D(Cache):
    tag_latency = 2
    data_latency = 2
    response_latency = 1
    mshrs = 16
    tgts_per_mshr = 16
    write_buffers = 16


class BigL2(Cache):
    tag_latency = 12
    data_latency = 12
    response_latency = 5
    mshrs = 32
    tgts_per_mshr = 8
    write_buffers = 8
    # inclusive of L1D on the A57 [A57-TRM]; gem5's classic caches offer
    # mostly_incl, which is the default
    prefetcher = StridePrefetcher(degree=8, latency=1)


class LittleL1I(Cache):
    # instructions are never written through it (as gem5's own L1_ICache)
    is_read_only = True
    writeback_clean = True
    tag_latency = 1
    data_latency = 1
    response_latency = 1
    mshrs = 2
    tgts_per_mshr = 8


class LittleL1D(Cache):
    # [HPI]'s 1/1/1 gave a pointer chase 2 cycles a load (ampkit-probe
    # latency, measured): the data array's second cycle gives the A53's 3
    tag_latency = 1
    data_latency = 2
    response_latency = 1
    mshrs = 4
    tgts_per_mshr = 8
    write_buffers = 4
    prefetcher = StridePrefetcher(queue_size=4, degree=4)


class LittleL2(Cache):
    tag_latency = 13
    data_latency = 13
    response_latency = 5
    mshrs = 8
    tgts_per_mshr = 8
    write_buffers = 8


#: The caches of each core model: L1I, L1D, L2.
CACHES = {
    "cortex-a57": (BigL1I, BigL1D, BigL2),
    "cortex-a53": (LittleL1I, LittleL1D, LittleL2),
}
