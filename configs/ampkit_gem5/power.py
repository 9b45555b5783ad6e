"""Power models, one per CPU and one per cluster L2, so a run reports energy
per cluster.

gem5 weighs a power model's expression of each power state by the time
the object spent in it; a CPU is ON while it runs and CLK_GATED while all
its threads wait for an interrupt (WFI). The expressions:

  CPU, ON          dynamic C * f * V^2, static s * C * f_max * V^2
  CPU, CLK_GATED   dynamic 0, static as above
  L2               dynamic E_access * accesses per second, static as the
                   cluster's share below

C is the dynamic-power-coefficient Linux's Juno device tree gives each
core (A57 530, A53 140 uW/MHz/V^2; also in Arm's SCP-firmware
product/juno config_dvfs.c). f is the cluster's clock (gem5's
clock_period is in ticks of 1 ps) and V its voltage domain. The static
share s is the WFI-over-active ratio of Juno's energy model at the top
operating point (Android's arch/arm64/kernel/energy_model.h: A57 15/616,
A53 6/93), a rough proxy, as is E_access (assumed: 0.4 nJ for a 2 MiB
16-way L2, 0.15 nJ for 512 KiB, CACTI-scale figures for a 20-28 nm
process). These give plausible relative energies of the two clusters,
not a calibrated power model of any chip; a user with one replaces the
coefficients here.
"""

from m5.objects import MathExprPowerModel, PowerModel

#: C in W/MHz/V^2, static share, L2 energy per access in J, L2 static in W.
COEFFICIENTS = {
    "cortex-a57": {"c": 530e-6, "static": 15 / 616, "l2_access_j": 0.4e-9, "l2_static_w": 0.02},
    "cortex-a53": {"c": 140e-6, "static": 6 / 93, "l2_access_j": 0.15e-9, "l2_static_w": 0.01},
}

#: clock_period is in ticks; at 1e12 ticks per second, f in MHz is 1e6 / clock_period.
_MHZ = "(1000000 / clock_period)"


def _num(value: float) -> str:
    """A constant for gem5's MathExpr, in positional notation: its parser
    reads the '-' of an exponent (4e-10) as a subtraction."""
    text = format(value, ".18f").rstrip("0").rstrip(".")
    if abs(float(text) - value) > 1e-6 * abs(value):
        raise ValueError(f"{value} does not fit 18 decimal places")
    return text


class _Zero(MathExprPowerModel):
    dyn = "0"
    st = "0"


def cpu_power_model(model: str, max_mhz: float) -> PowerModel:
    k = COEFFICIENTS[model]
    static = f"{_num(k['static'] * k['c'] * max_mhz)} * voltage * voltage"
    on = MathExprPowerModel(dyn=f"{_num(k['c'])} * {_MHZ} * voltage * voltage", st=static)
    gated = MathExprPowerModel(dyn="0", st=static)
    # the power states, in gem5's order: ON, CLK_GATED, SRAM_RETENTION, OFF
    return PowerModel(pm=[on, gated, _Zero(), _Zero()])


def l2_power_model(model: str, l2_path: str) -> PowerModel:
    k = COEFFICIENTS[model]
    on = MathExprPowerModel(
        dyn=f"{_num(k['l2_access_j'])} * {l2_path}.overallAccesses / simSeconds",
        st=_num(k["l2_static_w"]),
    )
    return PowerModel(pm=[on, _Zero(), _Zero(), _Zero()])
