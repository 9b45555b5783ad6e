"""'ampkit shell': the ext4 shell image boots to a console that runs the suite."""

import os
import subprocess
import sys
import threading
import time

from ampkit import build
from ampkit.kernel import KernelBuild
from ampkit.paths import REPO_ROOT
from ampkit.platform import get_platform


class Console:
    """A process's output, read as it comes, with a way to wait for a text."""

    def __init__(self, proc: "subprocess.Popen[bytes]") -> None:
        self.proc, self.text, self.lock = proc, "", threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            with self.lock:
                self.text += chunk.decode(errors="replace")

    def wait_for(self, text: str, after: int = 0, timeout: float = 120) -> int:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                at = self.text.find(text, after)
            if at >= 0:
                return at + len(text)
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} within {timeout} s; console:\n{self.text[-3000:]}")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()


def test_shell_boots_runs_a_workload_and_powers_off(kernel_build: KernelBuild) -> None:
    build.scons(build.SHELL_IMAGE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ampkit", "shell", "--no-build", "--policy", "colab"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    console = Console(proc)
    try:
        at = console.wait_for("ampkit:/# ")
        assert "policy in force: colab" in console.text
        caps = " ".join(str(c.capacity) for c in get_platform("2B2L").cpus)
        assert f"capacities {caps}" in console.text
        # markers the shell computes, so that the echo of the line is no match
        console.send("compute -t 2 -n 1000 && echo WORKLOAD-$((40 + 2))")
        at = console.wait_for("WORKLOAD-42", at)
        assert "compute: 1000 options" in console.text
        # the kernel state the tests read is there by hand too
        console.send("grep -c colab.futex_caused_ns /proc/self/sched; echo STATE-$((6 * 7))")
        console.wait_for("1\r\nSTATE-42", at)
        console.send("exit")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "reboot: Power down" in console.text
    # the image is booted with snapshot=on: nothing the session did is kept
    assert build.shell_image().is_file()
