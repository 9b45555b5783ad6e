"""The gem5 tier runs where a gem5 v24 ARM build is configured (GEM5_ROOT,
or [gem5] root in the ampkit config file); elsewhere each test is skipped
with the reason, which pytest's summary prints (-ra).

``make test`` (and so CI) runs the tier's core: the device tree, one 2B2L
boot with its COLAB and CFS runs, and one single-type platform. Tests
marked ``gem5_full`` (each needs an atomic boot of its own, a few minutes
apiece: the PARSEC disk, the other single-type platform, the calibration's
1B0L and 0B1L) run with ``AMPKIT_GEM5_FULL=1``, which ``make test-gem5``
sets."""

import os

import pytest

from ampkit.engines import gem5
from ampkit.errors import AmpkitError

#: The environment variable that turns the whole gem5 tier on.
FULL = "AMPKIT_GEM5_FULL"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get(FULL) == "1":
        return
    skip = pytest.mark.skip(reason=f"gem5 tier: the full set runs with {FULL}=1 (make test-gem5)")
    for item in items:
        if item.get_closest_marker("gem5_full"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def gem5_tree() -> gem5.Gem5:
    try:
        return gem5.Gem5.locate()
    except AmpkitError as e:
        pytest.skip(f"gem5 tier: {e.what} ({e.hint})")
