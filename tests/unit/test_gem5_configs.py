"""Pure parts of the gem5 configuration, without gem5: m5.objects is
replaced by recorders of the parameters the configuration passes."""

import importlib
import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from ampkit import gem5stats
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
        for ipc_ref in (None, 0.61):
            cpu = power.cpu_power_model(model, mhz, "system.bigCluster.cpus0", ipc_ref)
            exprs += [p.params[k] for p in cpu.params["pm"][:2] for k in ("dyn", "st")]
        l2 = power.l2_power_model(model)
        exprs += [l2.params["pm"][0].params[k] for k in ("dyn", "st")]
    for expr in exprs:
        assert "e-" not in expr, expr
        assert all(_TOKEN.match(t) for t in _tokens(expr)), expr
    assert power._num(0.4e-9) == "0.0000000004" and power._num(2.0) == "2"
    with pytest.raises(ValueError):
        power._num(1e-30)


def _evaluate(expr: str, values: dict[str, float]) -> float:
    """An expression as gem5's MathExpr computes it, with ``values`` for its
    variables (^ is its power operator)."""
    names = sorted(values, key=len, reverse=True)
    for name in names:
        expr = expr.replace(name, repr(values[name]))
    assert re.fullmatch(r"[\d.\s()*/+^-]+", expr), expr
    return float(eval(expr.replace("^", "**")))  # digits and operators only, checked above


def test_cpu_power_follows_the_work_and_the_l2_its_sourced_share(
    power: types.ModuleType,
) -> None:
    cpu = "system.bigCluster.cpus0"
    at_2ghz = {"clock_period": 500.0, "voltage": 1.0}  # 500 ps ticks
    on, gated = power.cpu_power_model("cortex-a57", 2000, cpu, 1.5).params["pm"][:2]

    def busy(insts: float, cycles: float) -> float:
        work = {f"{cpu}.commitStats0.numInsts": insts, f"{cpu}.numCycles": cycles - 1}
        return _evaluate(on.params["dyn"], {**at_2ghz, **work})

    # at the reference IPC a core draws C * f * V^2 (530 uW/MHz x 2000 MHz);
    # at half of it, half; at none, nothing dynamic
    assert busy(3e6, 2e6) == pytest.approx(1.06)
    assert busy(1.5e6, 2e6) == pytest.approx(0.53)
    assert busy(0, 2e6) == 0
    # the 1-tick dump at restore has no cycles: 0, not 0/0
    idle = {f"{cpu}.numCycles": 0.0, f"{cpu}.commitStats0.numInsts": 0.0}
    assert _evaluate(power.activity(cpu, 1.5), idle) == 0
    # static: Juno's WFI share of full power, the same in WFI
    assert _evaluate(on.params["st"], at_2ghz) == pytest.approx(1.06 * 15 / 616)
    assert gated.params["st"] == on.params["st"] and gated.params["dyn"] == "0"
    # without a measured reference, ON time x a constant
    flat = power.cpu_power_model("cortex-a57", 2000, cpu, None).params["pm"][0]
    assert _evaluate(flat.params["dyn"], at_2ghz) == pytest.approx(1.06)
    with pytest.raises(ValueError, match="must be positive"):
        power.activity(cpu, 0)
    # the A53 cluster's L2 at 1200 MHz and 1.1 V: 57/93 of C * f * V^2
    l2 = power.l2_power_model("cortex-a53").params["pm"][0]
    a53 = {"clock_period": 1e6 / 1200, "voltage": 1.1}
    assert _evaluate(l2.params["st"], a53) == pytest.approx(57 / 93 * 140e-6 * 1200 * 1.1**2)
    assert l2.params["dyn"] == "0"


def test_the_slice_record_is_named_alike_by_the_configuration_and_its_reader() -> None:
    """configs/bigLITTLE.py writes a slice's record under a name it does not
    import (the statistics' reader is no part of the configuration's hash);
    ampkit.gem5stats reads it under its own constant."""
    text = (CONFIGS / "bigLITTLE.py").read_text()
    found = re.search(r'^SLICE_RECORD = "([^"]+)"$', text, re.M)
    assert found is not None, "no SLICE_RECORD in configs/bigLITTLE.py"
    assert found.group(1) == gem5stats.SLICE_RECORD
    assert not re.search(r"^\s*(from|import) .*gem5stats", text, re.M)
