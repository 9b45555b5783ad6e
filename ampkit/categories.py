"""A mix's category as a rule on its programs' waiting: one owner for
the catalogue's check (``ampkit.behaviour``, alone) and the analysis's
(``ampkit.analysis.report``, inside each mix run). A leaf: it imports
nothing of the kit, so the analysis can read it (tests/unit/test_layering).

A program *waits*, for a synchronisation or communication mix, when its
threads spend at least ``WAITING_SHARE`` of their lives blocked on
futexes; it is *independent*, for a compute mix, below
``INDEPENDENT_SHARE``.
"""

import math
from collections.abc import Sequence

#: A tenth is enough for a scheduler that shortens the waits to change the
#: program's time by a measurable amount.
WAITING_SHARE = 0.10
#: Start and join alone cost a few thousandths.
INDEPENDENT_SHARE = 0.02


def holds_inside(category: str, blocked_shares: Sequence[float]) -> bool:
    """The rule on the blocked shares of a mix's applications (alone or
    inside the mix): compute, every one under ``INDEPENDENT_SHARE``;
    synchronisation and communication, at least half (rounded up) at
    ``WAITING_SHARE`` or more."""
    if category == "compute":
        return all(share < INDEPENDENT_SHARE for share in blocked_shares)
    need = math.ceil(len(blocked_shares) / 2)
    return sum(share >= WAITING_SHARE for share in blocked_shares) >= need
