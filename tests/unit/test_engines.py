"""The engine interface and process supervision.

ampkit.run knows engines only through ampkit.engines.base.Engine: these
tests hold it to that (no engine name in its code), check that both
engines implement the protocol, and check ampkit.process with real child
processes: a wait past its limit kills the child's whole group, and a
child dies with the process that started it.
"""

import ast
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ampkit import process
from ampkit.engines import ENGINES, get_engine
from ampkit.errors import AmpkitError

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def engine_names_in(path: Path) -> list[str]:
    """Engine names written as string constants in a module's code."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr):
                docstrings.add(id(first.value))
    return [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lower() in ENGINES
        and id(node) not in docstrings
    ]


def test_the_run_names_no_engine() -> None:
    """No module of the kit outside ampkit/engines/ spells an engine's name:
    a new engine is a new module there, and nothing else branches on it."""
    modules = [p for p in sorted((REPO / "ampkit").rglob("*.py")) if "engines" not in p.parts]
    assert REPO / "ampkit" / "run.py" in modules and REPO / "ampkit" / "cli.py" in modules
    for path in modules:
        assert engine_names_in(path) == [], path
    # the analysis judges runs by what their manifests record of their engine
    # (synthetic.py writes fixture runs, QEMU's by default)
    for path in sorted((REPO / "analysis").glob("*.py")):
        if path.name != "synthetic.py":
            assert engine_names_in(path) == [], path.name


def test_the_name_check_sees_a_branch(tmp_path: Path) -> None:
    code = tmp_path / "branchy.py"
    code.write_text('def f(engine):\n    if engine == "gem5":\n        return 1\n')
    assert engine_names_in(code) == ["branchy.py:2: 'gem5'"]


@pytest.mark.parametrize("name", ENGINES)
def test_each_engine_implements_the_protocol(name: str) -> None:
    engine = get_engine(name)
    assert engine.name == name
    for member in ("label", "uses_m5ops", "setup_allowance_s"):
        assert hasattr(engine, member), member
    for method in (
        "identity",
        "default_wall_limit_s",
        "setup",
        "check_ready",
        "shell_command",
        "boot",
    ):
        assert callable(getattr(engine, method)), method
    assert engine.default_wall_limit_s(10, 4) > 10


def test_an_unknown_engine_is_refused_with_the_valid_names() -> None:
    with pytest.raises(AmpkitError) as e:
        get_engine("bochs")
    assert "unknown engine 'bochs'" in e.value.what
    assert "qemu" in (e.value.hint or "") and "gem5" in (e.value.hint or "")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers signal 0; it is dead for our purpose. It may
    # also be reaped between the signal and the read.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, within_s: float = 10) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_wait_past_its_limit_kills_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    # the child starts a grandchild in the same session, says its pid, and waits
    script = f"sleep 300 & echo $! > {pidfile}; wait"
    proc = process.start(["sh", "-c", script], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not pidfile.is_file() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the grandchild never started"
        time.sleep(0.02)
    grandchild = int(pidfile.read_text())
    assert _alive(grandchild)  # the premise: something to kill
    assert process.wait_or_kill(proc, 0.2) is True
    assert proc.returncode is not None
    assert _wait_gone(grandchild), "the grandchild outlived the wait"


def test_a_child_that_ends_in_time_is_not_reported_killed() -> None:
    proc = process.start(["true"], stdout=subprocess.DEVNULL)
    assert process.wait_or_kill(proc, 30) is False
    assert proc.returncode == 0


def test_a_child_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A parent killed outright (SIGKILL runs no cleanup) takes its
    supervised child with it: the parent-death signal."""
    pidfile = tmp_path / "child.pid"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            "from ampkit import process\n"
            "p = process.start(['sleep', '300'], stdout=subprocess.DEVNULL)\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(300)\n",
        ],
        cwd=REPO,
    )
    # a premise, not a timing: a busy host once took 20 s to get here
    deadline = time.monotonic() + 120
    while not pidfile.is_file() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.02)
    child = int(pidfile.read_text())
    assert _alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _wait_gone(child), "the child outlived its parent"


def test_stop_all_ends_children_that_ignore_sigterm(tmp_path: Path) -> None:
    ready = tmp_path / "trap-set"
    stubborn = process.start(
        ["sh", "-c", f"trap '' TERM; touch {ready}; sleep 300"], stdout=subprocess.DEVNULL
    )
    polite = process.start(["sleep", "300"], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not ready.exists():  # the premise: SIGTERM is ignored from here on
        assert time.monotonic() < deadline, "the shell never set its trap"
        time.sleep(0.02)
    process.stop_all([stubborn, polite], grace_s=0.5)
    assert polite.returncode == -signal.SIGTERM
    assert stubborn.returncode == -signal.SIGKILL


def test_a_build_step_interrupted_takes_its_whole_group_with_it(tmp_path: Path) -> None:
    """The kernel's make runs supervised (ampkit.kernel.run_logged): in a
    session of its own, and a Ctrl-C while it runs kills what it started."""
    from ampkit import kernel

    pidfile = tmp_path / "grandchild.pid"
    idfile = tmp_path / "ids"
    script = (
        f"echo session=$(ps -o sid= -p $$ | tr -d ' ') process=$$ > {idfile}; "
        f"sleep 300 & echo $! > {pidfile}; wait"
    )

    def ctrl_c_once_started() -> None:
        deadline = time.monotonic() + 10
        while not pidfile.is_file() or not pidfile.read_text().strip():
            if time.monotonic() > deadline:
                break  # the assertions below say what is missing
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)  # Python raises KeyboardInterrupt in the main thread

    # Python's own Ctrl-C handler, even where the test runs with SIGINT
    # ignored (a background job of a non-interactive shell)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=ctrl_c_once_started, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            kernel.run_logged(["sh", "-c", script], tmp_path / "build.log", lambda _: None)
    finally:
        signal.signal(signal.SIGINT, old)
    grandchild = int(pidfile.read_text())
    assert _wait_gone(grandchild), "the build's grandchild outlived the interrupt"
    ids = re.search(r"^session=(\d+) process=(\d+)$", idfile.read_text(), re.M)
    assert ids is not None, "the build step never ran"
    assert ids[1] == ids[2], "make did not run in a session of its own"
