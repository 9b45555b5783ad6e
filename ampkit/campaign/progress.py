"""A progress line for a campaign: counts, what is running, and an ETA.

On a terminal one line is redrawn in place; otherwise (a log file, CI) a
line is printed for every run that ends, so the log reads as a history.
"""

import sys
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    def __init__(self, total: int, parallel: int, out: TextIO | None = None) -> None:
        self.total = total
        self.parallel = max(1, parallel)
        self.ok = 0
        self.failed = 0
        self.running = 0
        self.queued = 0
        self.out = out or sys.stderr
        self.tty = self.out.isatty()
        self.started = time.monotonic()
        self._last_draw = 0.0

    @property
    def done(self) -> int:
        return self.ok + self.failed

    def eta_s(self) -> float | None:
        """Seconds left, from the pace of the runs that ended in this session."""
        if not self.done:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done)

    def line(self) -> str:
        width = 24
        filled = width * self.done // self.total if self.total else width
        bar = "#" * filled + "." * (width - filled)
        eta = self.eta_s()
        parts = [
            f"[{bar}] {self.done}/{self.total}",
            f"{self.ok} ok",
            f"{self.failed} failed",
            f"{self.running} running",
        ]
        if self.queued:
            parts.append(f"{self.queued} queued")
        parts.append(f"ETA {_duration(eta)}" if eta is not None else "ETA -")
        return ", ".join(parts)

    def update(self, running: int, queued: int = 0) -> None:
        self.running, self.queued = running, queued
        now = time.monotonic()
        if self.tty and now - self._last_draw >= 0.5:
            self._last_draw = now
            self.out.write("\r" + self.line() + "\x1b[K")
            self.out.flush()

    def finished(self, run_id: str, ok: bool, detail: str = "") -> None:
        if ok:
            self.ok += 1
        else:
            self.failed += 1
        what = "ok" if ok else f"FAILED {detail}".rstrip()
        if self.tty:
            self.out.write("\r\x1b[K")
        self.out.write(f"{run_id}: {what}\n")
        if not self.tty:
            self.out.write(self.line() + "\n")
        self._last_draw = 0.0
        self.out.flush()

    def close(self) -> None:
        if self.tty:
            self.out.write("\r" + self.line() + "\x1b[K\n")
            self.out.flush()
