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
