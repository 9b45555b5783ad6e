"""Engines boot the kit's kernel and initramfs on a platform and capture the console.

Each engine is a module with an ``ENGINE`` object that implements
``ampkit.engines.base.Engine``; ``get_engine()`` loads the one a run asks
for. The run and the campaign code know engines only through it.
"""

import importlib

from ampkit.engines.base import Engine
from ampkit.errors import AmpkitError

#: The registered engines, by name: the module of each.
MODULES = {"qemu": "ampkit.engines.qemu", "gem5": "ampkit.engines.gem5"}
ENGINES = tuple(MODULES)
#: The engine of a run that names none: the one every machine can run.
DEFAULT_ENGINE = ENGINES[0]
#: The guest clock of a run that asks for none: every engine gives it (its own).
DEFAULT_GUEST_CLOCK = "host"


def get_engine(name: str) -> Engine:
    """The engine called ``name``; an error lists the valid names."""
    if name not in MODULES:
        raise AmpkitError(f"unknown engine '{name}'", f"valid: {', '.join(ENGINES)}")
    engine: Engine = importlib.import_module(MODULES[name]).ENGINE
    return engine


def offers_guest_clock(engine: Engine, clock: str) -> bool:
    """Whether ``engine`` can run a guest on ``clock``: the default, which
    asks for nothing, or one of the clocks it offers."""
    return clock == DEFAULT_GUEST_CLOCK or clock in engine.guest_clocks


def guest_clocks() -> list[str]:
    """Every guest clock some engine offers, the default first."""
    offered = {c for name in ENGINES for c in get_engine(name).guest_clocks}
    return [DEFAULT_GUEST_CLOCK, *sorted(offered - {DEFAULT_GUEST_CLOCK})]
