"""The gem5 tier runs where a gem5 v24 ARM build is configured (GEM5_ROOT,
or [gem5] root in the ampkit config file); elsewhere each test is skipped
with the reason, which pytest's summary prints (-ra)."""

import pytest

from ampkit.engines import gem5
from ampkit.errors import AmpkitError


@pytest.fixture(scope="session")
def gem5_tree() -> gem5.Gem5:
    try:
        return gem5.Gem5.locate()
    except AmpkitError as e:
        pytest.skip(f"gem5 tier: {e.what} ({e.hint})")
