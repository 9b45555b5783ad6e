"""Pure parts of the gem5 configuration, without gem5: m5.objects is
replaced by recorders of the parameters the configuration passes."""

import importlib
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from ampkit.paths import CONFIGS

pytestmark = pytest.mark.unit


class Recorder:
    """Stands for a gem5 SimObject class: keeps its keyword parameters."""

    def __init__(self, **params: Any) -> None:
        self.params = params


@pytest.fixture
def power(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    objects = types.ModuleType("m5.objects")
    objects.MathExprPowerModel = Recorder  # type: ignore[attr-defined]
    objects.PowerModel = Recorder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "m5", types.ModuleType("m5"))
    monkeypatch.setitem(sys.modules, "m5.objects", objects)
    monkeypatch.syspath_prepend(str(CONFIGS))
    sys.modules.pop("ampkit_gem5.power", None)
    yield importlib.import_module("ampkit_gem5.power")
    sys.modules.pop("ampkit_gem5.power", None)


#: what gem5's MathExpr reads as one constant (std::stod of a token without
#: an operator in it) or one variable
_TOKEN = re.compile(r"^(?:\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_.$]*)$")


def _tokens(expr: str) -> list[str]:
    return [t for t in re.split(r"[\s()*/+^-]+", expr) if t]


def test_power_expressions_have_no_exponents(power: types.ModuleType) -> None:
    """gem5's MathExpr splits at the '-' of 4e-10: every constant must be
    written out in positional notation."""
    exprs = []
    for model, mhz in (("cortex-a57", 2000), ("cortex-a53", 1200)):
        cpu = power.cpu_power_model(model, mhz)
        l2 = power.l2_power_model(model, "system.bigCluster.l2")
        for state in (*cpu.params["pm"][:2], l2.params["pm"][0]):
            exprs += [state.params["dyn"], state.params["st"]]
    for expr in exprs:
        assert "e-" not in expr, expr
        assert all(_TOKEN.match(t) for t in _tokens(expr)), expr
    assert "0.0000000004 * system.bigCluster.l2.overallAccesses / simSeconds" in exprs
    assert power._num(0.4e-9) == "0.0000000004" and power._num(2.0) == "2"
    with pytest.raises(ValueError):
        power._num(1e-30)
