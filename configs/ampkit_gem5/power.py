"""Power models, one per CPU and one per cluster L2, so a run reports energy
per cluster and per component.

gem5 weighs a power model's expression for each power state by the time
the object spent in it. A CPU is ON while it runs, and CLK_GATED while
all its threads wait for an interrupt (WFI). The expressions:

  CPU, ON          dynamic  C * f * V^2 * IPC / IPC_ref
                   static   s * C * f_max * V^2
  CPU, CLK_GATED   dynamic  0; static as above
  L2 (cluster)     static   k * C * f * V^2, whatever the activity

Where each coefficient comes from:

- C, the dynamic-power coefficient: Linux's Juno device tree (A57 530,
  A53 140 uW/MHz/V^2; the same constants are in Arm's SCP-firmware
  product/juno config_dvfs.c). Linux's energy model reads it as the power
  of a core busy at frequency f and voltage V.
- The activity factor IPC / IPC_ref makes dynamic power follow the work
  done: IPC is the interval's committed instructions over its active
  cycles (``commitStats0.numInsts`` / ``numCycles``; gem5 does not count
  WFI cycles), IPC_ref the same core's IPC on the kit's own integer
  benchmark, measured by ``ampkit platform calibrate`` on this gem5
  (configs/calibration.toml, ``big_ipc``/``little_ipc``). So a core running
  intmark draws C * f * V^2, a core stalled on memory less, and the
  dynamic energy is C * V^2 * instructions / IPC_ref. Reading C as "busy on
  integer code like Dhrystone" is the kit's assumption. Without a
  calibration record the factor is 1, gem5's usual ON x constant, and the
  run's manifest says so (``power.activity``).
  This is an energy-per-instruction model, and so a bound rather than a
  fit: it has no floor (a core stalled on memory still clocks its
  pipeline and fetches, and draws more than IPC / IPC_ref of C * f * V^2)
  and no cap (code above the reference IPC draws proportionally more).
  It under-charges memory-bound intervals against compute-bound ones; a
  floor would need a per-core coefficient that no public source gives for
  these cores, and a made-up one would only move the error. The static
  share below is the floor that is sourced.
- s, the static share: Juno's energy model (Android's
  arch/arm64/kernel/energy_model.h, the table EAS was developed on) gives
  each core's power when idle in WFI against busy at the top operating
  point: A57 15/616, A53 6/93.
- k, the L2's share: the same energy model's cluster cost (L2, snoop
  control, the cluster's clock tree) against one core's, busy at the top
  operating point: A57 64/616, A53 57/93. Its cluster cost in WFI is about
  the same (65, 56), so it is modelled as independent of activity; gem5
  does not model the cluster power-down that would remove it.

The energy model's units are "bogo-watts", but for the A57 they land near
milliwatts (C * f * V^2 at 1100 MHz and 1.0 V is 583 mW; the table says
616), which is why its ratios are taken and C supplies the scale. Juno is
a 28 nm part; the clocks and voltages here are the platform's
(configs/platforms.toml, bigLITTLE.py). A user with a calibrated power
model of a real chip replaces the coefficients here.
"""

from m5.objects import MathExprPowerModel, PowerModel

#: C in W/MHz/V^2; static share of C * f_max * V^2; the L2's share.
COEFFICIENTS = {
    "cortex-a57": {"c": 530e-6, "static": 15 / 616, "l2": 64 / 616},
    "cortex-a53": {"c": 140e-6, "static": 6 / 93, "l2": 57 / 93},
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


def activity(cpu_path: str, ipc_ref: float | None) -> str:
    """The ON state's activity factor: the interval's IPC over the reference.
    One cycle is added so that an interval without cycles (the 1-tick
    dump at restore) gives 0, not 0/0."""
    if ipc_ref is None:
        return "1"
    if ipc_ref <= 0:
        raise ValueError(f"a reference IPC must be positive, not {ipc_ref}")
    insts = f"{cpu_path}.commitStats0.numInsts"
    return f"({insts} / ({cpu_path}.numCycles + 1) / {_num(ipc_ref)})"


def cpu_power_model(model: str, max_mhz: float, cpu_path: str, ipc_ref: float | None) -> PowerModel:
    k = COEFFICIENTS[model]
    static = f"{_num(k['static'] * k['c'] * max_mhz)} * voltage * voltage"
    busy = f"{_num(k['c'])} * {_MHZ} * voltage * voltage"
    on = MathExprPowerModel(dyn=f"{busy} * {activity(cpu_path, ipc_ref)}", st=static)
    gated = MathExprPowerModel(dyn="0", st=static)
    # the power states, in gem5's order: ON, CLK_GATED, SRAM_RETENTION, OFF
    return PowerModel(pm=[on, gated, _Zero(), _Zero()])


def l2_power_model(model: str) -> PowerModel:
    k = COEFFICIENTS[model]
    on = MathExprPowerModel(dyn="0", st=f"{_num(k['l2'] * k['c'])} * {_MHZ} * voltage * voltage")
    return PowerModel(pm=[on, _Zero(), _Zero(), _Zero()])
