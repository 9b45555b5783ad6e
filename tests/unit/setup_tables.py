"""Hand-made apps and threads tables of one setup each (engine, platform,
time scale, tick), for the tests that the analysis keeps setups apart."""

import pandas as pd


def app_row(
    run: str,
    mix: str,
    app: str,
    turnaround_ns: int,
    *,
    policy: str = "cfs",
    scale: int = 1,
    tick: int = 250,
) -> dict[str, object]:
    """One application of one run, on gem5 2B2L, one thread, its key its name."""
    return {
        "engine": "gem5",
        "platform": "2B2L",
        "timescale": scale,
        "tick_hz": tick,
        "policy": policy,
        "mix": mix,
        "repetition": 0,
        "run": run,
        "app": app,
        "instance": 0,
        "key": f"{app}/1",
        "threads": 1,
        "turnaround_ns": turnaround_ns,
    }


def app_tables(rows: list[dict[str, object]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The apps table and a threads table of one thread per app, as long as it."""
    apps = pd.DataFrame(rows)
    threads = apps[["run", "app", "instance"]].assign(thread=0, wall_ns=apps["turnaround_ns"])
    return apps, threads


def mix_and_alone(column: str, alone_ns: dict[int, int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A mix of p0 and p1 (20 ns each) and each alone, once per value of
    the setup column ``column`` (timescale or tick_hz), alone taking
    ``alone_ns[value]``: the tables of that many setups side by side."""
    rows = []
    for value, alone in alone_ns.items():
        scale = value if column == "timescale" else 1
        tick = value if column == "tick_hz" else 250
        rows += [
            app_row(f"mix{value}", "mix", app, 20, scale=scale, tick=tick) for app in ("p0", "p1")
        ]
        rows += [
            app_row(f"alone-{app}-{value}", f"alone-{app}", app, alone, scale=scale, tick=tick)
            for app in ("p0", "p1")
        ]
    return app_tables(rows)
