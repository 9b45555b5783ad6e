"""The kernel's time scale: ``sched_timescale=k`` on a run's command line.

A cycle-level simulator runs tens of milliseconds where hardware runs
seconds, so a simulated run is short against the scheduler's own clocks.
The kit's kernel (patch "sched: Add sched_timescale= ...") runs them k
times as fast under ``sched_timescale=k``: PELT's half-life, the load
balancing intervals, the fair class's latency and granularities, COLAB's
periods and bounds and WASH's quantum, alike for every policy; the tick
stays CONFIG_HZ's. A campaign asks for it with ``append =
"sched_timescale=4"``; without it (k = 1) the kernel runs as it would
without the option.

Runs of different scales measure different machines: the analysis keeps
them apart (the ``timescale`` column, part of what makes two runs
comparable, like the engine and the platform) and the report says which
scale each section ran at.
"""

import re

#: The largest scale the kernel takes; anything else it ignores (keeping 1).
MAX = 16

#: The tick of a run whose manifest does not say its kernel's: every kit
#: kernel before the tick was recorded (manifest kernel.tick_hz, the
#: kernel's CONFIG_HZ) ticked at 250 Hz, and the default kernels still do.
DEFAULT_TICK_HZ = 250

#: PELT's half-life at scale 1, in ms: LOAD_AVG_PERIOD (32) periods of
#: 1024 us; at scale k the kernel's is a k-th of it.
PELT_HALFLIFE_MS = 32 * 1.024
#: The shortest a COLAB ranking period or WASH quantum can be, in ticks:
#: each worker is queued at least a jiffy ahead and the timer wheel adds
#: one (kernel patch 0032), so a period shorter than two ticks is two.
MIN_PERIOD_TICKS = 2

#: The policies' periods when a run's guest did not record its kernel's
#: (kernel.sched_colab_rank_period_ms and kernel.sched_wash_quantum_ms at
#: their defaults), unscaled.
DEFAULT_COLAB_RANK_PERIOD_MS = 10.0
DEFAULT_WASH_QUANTUM_MS = 40.0

_PARAM = re.compile(r"(?:^|\s)sched_timescale=(\S*)")
# kstrtouint() with base 0: decimal, 0x hexadecimal, 0 octal
_DECIMAL = re.compile(r"\+?(?:0|[1-9][0-9]*)")
_HEX = re.compile(r"\+?0[xX][0-9a-fA-F]+")
_OCTAL = re.compile(r"\+?0[0-7]+")


def timescale_of(cmdline: str) -> int:
    """The scale a kernel booted with ``cmdline`` runs at, read as the
    kernel reads it: each ``sched_timescale=`` in turn, a whole number
    from 1 to MAX (as kstrtouint() reads it: decimal, 0x hex, 0 octal) setting the scale and
    anything else ignored; 1 when none does."""
    scale = 1
    for value in _PARAM.findall(cmdline):
        if _DECIMAL.fullmatch(value):
            number = int(value, 10)
        elif _HEX.fullmatch(value):
            number = int(value, 16)
        elif _OCTAL.fullmatch(value):
            number = int(value, 8)
        else:
            continue
        if 1 <= number <= MAX:
            scale = number
    return scale


def setup_parts(timescale: int, tick_hz: int) -> list[str]:
    """How messages, headings and titles name a time scale and a tick:
    nothing for scale 1, the hardware's, nor for the default tick, 250 Hz."""
    parts = [f"time scale {timescale}"] if timescale != 1 else []
    if tick_hz != DEFAULT_TICK_HZ:
        parts.append(f"{tick_hz} Hz tick")
    return parts


def describe_setup(timescale: int, tick_hz: int) -> str:
    """A setup in words, the default one's included: 'time scale 4, 1000
    Hz tick', 'time scale 1, 250 Hz tick'."""
    return f"time scale {timescale}, {tick_hz} Hz tick"
