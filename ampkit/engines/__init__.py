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


def get_engine(name: str) -> Engine:
    """The engine called ``name``; an error lists the valid names."""
    if name not in MODULES:
        raise AmpkitError(f"unknown engine '{name}'", f"valid: {', '.join(ENGINES)}")
    engine: Engine = importlib.import_module(MODULES[name]).ENGINE
    return engine
