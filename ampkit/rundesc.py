"""The run description the guest runner reads (format in workloads/README.md)."""

import re
from dataclasses import dataclass

from ampkit.errors import AmpkitError
from ampkit.mix import Mix

VERSION = 1
#: once: every application runs once. restart: an application that finishes
#: while others still run starts again, until each has completed once; only
#: first completions count (the standard multi-program method).
METHODS = ("once", "restart")
_WORD = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII without spaces


@dataclass(frozen=True)
class AppRun:
    name: str
    instance: int
    threads: int
    speedup_q10: int  # predicted big-over-little speedup, 1024 = 1.0; 0 = none given
    argv: tuple[str, ...]


@dataclass(frozen=True)
class RunDescription:
    run_id: str
    policy: str
    repetition: int
    timeout_s: int
    apps: tuple[AppRun, ...]
    method: str = "restart"
    m5ops: bool = False  # gem5 only: work items per application, m5 exit at the end

    @classmethod
    def for_mix(
        cls,
        run_id: str,
        policy: str,
        repetition: int,
        timeout_s: int,
        mix: Mix,
        *,
        method: str = "restart",
        m5ops: bool = False,
    ) -> "RunDescription":
        seen: dict[str, int] = {}
        apps = []
        for app in mix.apps:
            instance = seen.get(app.program, 0)
            seen[app.program] = instance + 1
            apps.append(
                AppRun(
                    name=app.program,
                    instance=instance,
                    threads=app.threads,
                    speedup_q10=0 if app.speedup is None else round(app.speedup * 1024),
                    argv=app.argv,
                )
            )
        return cls(run_id, policy, repetition, timeout_s, tuple(apps), method=method, m5ops=m5ops)

    def render(self) -> str:
        if self.method not in METHODS:
            raise AmpkitError(f"unknown run method '{self.method}'", f"valid: {', '.join(METHODS)}")
        for word in (self.run_id, self.policy, *(w for a in self.apps for w in (a.name, *a.argv))):
            if not _WORD.match(word):
                raise AmpkitError(
                    f"run description: '{word}' is empty or has spaces or non-ASCII characters"
                )
        lines = [
            f"ampkit-run {VERSION}",
            f"run_id {self.run_id}",
            f"policy {self.policy}",
            f"repetition {self.repetition}",
            f"timeout_s {self.timeout_s}",
            f"method {self.method}",
            f"m5ops {int(self.m5ops)}",
        ]
        lines += [
            f"app {a.name} {a.instance} {a.threads} {a.speedup_q10} {' '.join(a.argv)}"
            for a in self.apps
        ]
        return "\n".join(lines) + "\n"
