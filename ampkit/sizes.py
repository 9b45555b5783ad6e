"""Each engine's size for a program whose mix leaves it out.

The same program runs for very different times on the two engines: QEMU
runs every CPU at the host's speed, gem5 simulates the cores at a few
wall seconds per simulated millisecond. A mix that writes no ``size`` for
an application gets the engine's:

- an engine that does not model the cores' speed (QEMU):
  ``mix.CATALOGUE_SIZES``, a few tenths of a second each;
- an engine that does (gem5): the size at which the program alone on 2B2L
  spans ``span_ms`` simulated milliseconds (``DEFAULT_SPAN_MS`` unless a
  campaign or ``ampkit run --span-ms`` says otherwise), by the cost lines
  of a behaviour table (ampkit.behaviour): the engine's shipped one
  (``configs/behaviour-<engine>.toml``, measured with four threads on the
  default kernel, unscaled) or a campaign's own (its ``behaviour``). The
  line of the app's thread count where the table has one; else the
  nearest, and the span then differs by the program's own scaling.

A size written in the mix is always used as written.
"""

from dataclasses import replace

from ampkit.behaviour import DEFAULT_SPAN_MS, Table, table_of
from ampkit.engines import get_engine
from ampkit.errors import AmpkitError
from ampkit.mix import CATALOGUE_SIZES, Mix
from ampkit.timescale import describe_setup


def engine_size(
    program: str,
    engine: str,
    span_ms: float | None = None,
    table: Table | None = None,
    threads: int | None = None,
    *,
    exact: bool = False,
) -> int:
    """The engine's size for ``program`` with ``threads`` threads; with
    ``exact``, only by a cost line of that thread count (a campaign's own
    table, measured for its apps), else by the nearest."""
    if not get_engine(engine).models_core_speed:
        if program not in CATALOGUE_SIZES:
            raise AmpkitError(
                f"{program}: has no catalogue size; write its size in the mix",
                f"programs with one: {', '.join(sorted(CATALOGUE_SIZES))}",
            )
        return CATALOGUE_SIZES[program]
    table = table if table is not None else table_of(engine)
    line = table.cost(program, threads, exact=exact) if table is not None else None
    if line is None:
        where = f" in {table.source}" if table is not None and table.source else ""
        count = f" with {threads} threads" if exact else ""
        raise AmpkitError(
            f"{program}: no {engine} cost line{count}{where} to size it by; "
            "write its size in the mix",
            "measure it alone at two sizes (measurements/gem5-workloads/README.md, "
            "evaluations/gem5-2B2L/calibration), then 'ampkit mix behaviour'",
        )
    return line.size_for(span_ms if span_ms is not None else DEFAULT_SPAN_MS)


def check_setup(table: Table, setup: tuple[int, int]) -> None:
    """Refuse to size apps by a table measured at another kernel setup
    (time scale, tick): a program's time alone is also how soon the
    baseline moves it to the big CPUs, which the scheduler's clocks decide."""
    if table.kernel_setup != setup:
        raise AmpkitError(
            f"sizes apps by {table.source}, measured at {table.setup}, but the runs are "
            f"at {describe_setup(*setup)}: the programs would not span what span_ms asks",
            "measure them alone at the runs' kernel and command line (a campaign of "
            "one-program mixes, as evaluations/gem5-2B2L/calibration), write the table with "
            "'ampkit mix behaviour RUNS --out FILE' and name it in a campaign with "
            'behaviour = "FILE"; or write every app\'s size in its mix',
        )


def sized_for(
    mix: Mix,
    engine: str,
    span_ms: float | None = None,
    table: Table | None = None,
    *,
    exact: bool = False,
    setup: tuple[int, int] | None = None,
) -> Mix:
    """The mix with every application it leaves unsized given the engine's
    size, by ``table`` (default: the engine's shipped behaviour table),
    which must have been measured at ``setup`` (time scale, tick) where
    that is given."""
    if not any(a.engine_sized for a in mix.apps):
        return mix
    if table is None and get_engine(engine).models_core_speed:
        table = table_of(engine)
    if table is not None and setup is not None and get_engine(engine).models_core_speed:
        check_setup(table, setup)
    apps = tuple(
        replace(a, size=engine_size(a.program, engine, span_ms, table, a.threads, exact=exact))
        if a.engine_sized
        else a
        for a in mix.apps
    )
    return replace(mix, apps=apps)
