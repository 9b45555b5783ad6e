"""The online speedup model: each thread's speedup predicted in the guest
from its own PMU counts, in place of the hints.

A run asks for it with a model directory (``ampkit model train`` writes
one: ``speedup-big.toml`` and ``speedup-little.toml``). The run
description then carries the two models' coefficients (``online`` and
``online_model`` lines, workloads/README.md) and the runner starts
``ampkit-online`` (workloads/runner/ampkit-online.c) over the measured
run: every period it counts each thread's events on each CPU, predicts
its speedup with the model of the core type it ran on (weighted by the
instructions it retired on each), smooths the prediction with Saez et
al.'s phase handling and gives it to the kernel through the speedup
interface, where the policies read it as they read a hint. An instance
starts on its hint; a thread keeps what it inherited (the hint, or its
creator's estimate) until its own first estimate, and for good if its
counters cannot be opened.

The period is WASH's sampling quantum at the run's time scale (40 ms at
scale 1, 10 ms at ``sched_timescale=4``), the period at which WASH reads
each thread's counters for the same purpose: each period costs one
system call per thread and CPU (on gem5, 68 us of CPU a period on
average with four threads on 2B2L, tests/gem5/test_online.py), so a
shorter one is dearer. The daemon's log comes back as the
run's ``online.jsonl`` (one line per thread, per thread and period with
an estimate, and a summary with the daemon's CPU time); the manifest's
``speedups`` entry says where the run's speedups came from.

On QEMU the estimates mean nothing (its PMU counts cycles and, with a
fixed icount shift, instructions, and nothing else): a QEMU run takes any
model, to check the pipeline, and its manifest says so.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ampkit import calibration
from ampkit.engines import get_engine
from ampkit.errors import AmpkitError
from ampkit.hashing import sha256_file
from ampkit.pmu import INSTRUCTIONS
from ampkit.timescale import DEFAULT_WASH_QUANTUM_MS, timescale_of

if TYPE_CHECKING:  # scikit-learn and pandas load only where a model does
    from ampkit.speedupmodel import Model

#: A core type's period counts toward an estimate from this many
#: instructions on: rates of a few thousand instructions are noise.
MIN_INSTRUCTIONS = 100_000
#: The runner's bounds on the period (ampkit-init.c, the online line).
MIN_PERIOD_US, MAX_PERIOD_US = 100, 10_000_000
MODEL_FILES = {"big": "speedup-big.toml", "little": "speedup-little.toml"}
QEMU_NOTICE = (
    "QEMU's PMU counts cycles and instructions only: the online estimates of a "
    "QEMU run check the pipeline and mean nothing"
)


@dataclass(frozen=True)
class OnlineSpeedups:
    """What a run's online speedup model is: the two models, the period."""

    models: tuple["Model", "Model"]  # big, little
    period_us: int
    min_instructions: int = MIN_INSTRUCTIONS
    #: the engine models the cores' speed (gem5): the estimates mean something
    meaningful: bool = True

    def lines(self) -> list[str]:
        """The run description's lines (ampkit-init.c reads them)."""
        out = [f"online {self.period_us} {self.min_instructions}"]
        for model in self.models:
            terms = " ".join(
                f"{_numerator(e)}={c!r}"
                for e, c in zip(model.events, model.coefficients, strict=True)
            )
            out.append(f"online_model {model.core} {model.intercept!r} {terms}".rstrip())
        return out

    def describe(self) -> dict[str, Any]:
        """The manifest's ``speedups`` entry of a run that uses it."""
        return {
            "source": "online",
            "period_us": self.period_us,
            "min_instructions": self.min_instructions,
            "models": {
                m.core: {
                    "file": m.source.name if m.source else None,
                    "sha256": sha256_file(m.source) if m.source else None,
                    "events": list(m.events),
                    "trained_on": dict(m.provenance).get("programs"),
                }
                for m in self.models
            },
            **({} if self.meaningful else {"notice": QEMU_NOTICE}),
        }


def _numerator(rate: str) -> str:
    event, _, per = rate.partition("/")
    if per != INSTRUCTIONS:
        raise AmpkitError(f"model rate {rate!r} is not an event per {INSTRUCTIONS}")
    return event


def period_us(timescale: int, period_ms: float | None = None) -> int:
    """The daemon's period: ``period_ms`` if given, else WASH's quantum at
    the run's time scale; within the runner's bounds."""
    us = round((period_ms if period_ms is not None else DEFAULT_WASH_QUANTUM_MS / timescale) * 1000)
    if not MIN_PERIOD_US <= us <= MAX_PERIOD_US:
        raise AmpkitError(
            f"an online period of {us} us: the runner takes {MIN_PERIOD_US} to {MAX_PERIOD_US}"
        )
    return us


def load_online(
    directory: Path,
    *,
    engine: str,
    meaningful: bool,
    machine: str | None,
    period: int,
) -> OnlineSpeedups:
    """The models in ``directory`` for a run on ``engine``. Where the
    engine models the cores' speed (``meaningful``), a model of another
    engine or machine model is refused, saying which; elsewhere any model
    drives the pipeline."""
    from ampkit.speedupmodel import load_model

    if not directory.is_dir():
        raise AmpkitError(
            f"the speedup model directory {directory} does not exist",
            "train one with 'ampkit model train PROFILE --out DIR'",
        )
    models = tuple(
        load_model(
            directory / MODEL_FILES[core],
            core=core,
            target="speedup",
            engine=engine if meaningful else None,
            machine=machine if meaningful else None,
        )
        for core in ("big", "little")
    )
    return OnlineSpeedups(models=(models[0], models[1]), period_us=period, meaningful=meaningful)


def for_run(
    directory: Path, *, engine: str, cmdline: str, period_ms: float | None = None
) -> OnlineSpeedups:
    """The models in ``directory`` for runs on ``engine`` booted with the
    kit's ``cmdline`` (its time scale sets the default period): checked
    against the machine model in use where the engine models the cores'
    speed, taken as they are elsewhere."""
    meaningful = get_engine(engine).models_core_speed
    return load_online(
        directory,
        engine=engine,
        meaningful=meaningful,
        machine=calibration.model_sha256() if meaningful else None,
        period=period_us(timescale_of(cmdline), period_ms),
    )


def problems(summary: Mapping[str, Any] | None, spec: OnlineSpeedups) -> list[str]:
    """Why a run fed by the online model is not the run described: its
    daemon wrote no summary, a write to the kernel failed, or (where the
    estimates mean something) it made no estimate at all, so the run ran
    on its hints alone and would pass for one fed by the model."""
    if summary is None:
        return ["the online speedup daemon wrote no summary"]
    out = []
    if summary.get("write_errors"):
        out.append(
            f"the online speedup daemon failed {summary['write_errors']} write(s) to the kernel"
        )
    if spec.meaningful and not summary.get("estimates"):
        out.append(
            "the online speedup daemon made no estimate: every thread ran on its hint "
            f"(threads {summary.get('threads')}, without counters "
            f"{summary.get('threads_without_counters')})"
        )
    return out


def summary_of(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The daemon's summary among a run's online records, if it wrote one."""
    found = [r for r in records if r.get("what") == "summary"]
    return found[-1] if found else None
