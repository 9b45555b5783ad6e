"""Two SCons builds in one build directory wait for each other."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ampkit import build

pytestmark = pytest.mark.unit


def test_a_second_build_waits_for_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMPKIT_BUILD", str(tmp_path / "build"))
    held, release = tmp_path / "held", tmp_path / "release"
    # another process holds the lock (the premise: it says so) until told
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import pathlib, time\n"
            "from ampkit import build\n"
            "with build.build_lock():\n"
            f"    pathlib.Path({str(held)!r}).touch()\n"
            f"    while not pathlib.Path({str(release)!r}).exists():\n"
            "        time.sleep(0.01)\n",
        ],
        env={**os.environ, "AMPKIT_BUILD": str(tmp_path / "build")},
    )
    try:
        deadline = time.monotonic() + 120
        while not held.exists():
            assert holder.poll() is None, "the holder ended before it held the lock"
            assert time.monotonic() < deadline, "the holder never took the lock"
            time.sleep(0.01)
        acquired = threading.Event()

        def second() -> None:
            with build.build_lock():
                acquired.set()

        waiter = threading.Thread(target=second)
        waiter.start()
        # while the holder holds it, the second cannot have it, however long
        assert not acquired.wait(0.5)
        release.touch()
        assert acquired.wait(120), "the second build never got the lock"
        waiter.join()
    finally:
        release.touch()
        holder.wait(timeout=120)
    assert holder.returncode == 0
