"""The QEMU engine's command line: the guest clock options QEMU must accept."""

import pytest

from ampkit.engines.qemu import CLOCKS, QemuMachine, base_dtb
from ampkit.errors import AmpkitError
from ampkit.platform import get_platform


@pytest.mark.parametrize("clock", CLOCKS)
def test_qemu_accepts_each_clock(clock: str) -> None:
    # dumpdtb starts QEMU with the machine's whole command line: a clock
    # option QEMU refuses (icount with MTTCG, say) fails here
    machine = QemuMachine(get_platform("2B2L"), clock=clock)
    assert base_dtb(machine).startswith(b"\xd0\x0d\xfe\xed")
    assert ("-icount" in machine.args()) == (clock != "host")


def test_an_unknown_clock_is_refused_before_qemu_starts() -> None:
    with pytest.raises(AmpkitError, match="unknown QEMU clock 'tsc'") as e:
        QemuMachine(get_platform("2B2L"), clock="tsc")
    assert "host, icount, instructions" in str(e.value)
