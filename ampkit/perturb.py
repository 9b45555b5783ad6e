"""A seeded perturbation of a run's start that favours no policy.

gem5 is deterministic: the same run made twice is the same to the
nanosecond, and a second repetition that changes only the repetition's
number in the run description moves a turnaround by hundredths of a
percent. Repetitions then say nothing about how far one run is from
another, so the kit perturbs them: with ``perturb_us`` (a campaign spec's
key, ``ampkit run --perturb-us``) above 0, each application of a mix is
released after a delay of its own, uniform in [0, perturb_us] whole
microseconds, which the run description carries (``start_delay_us``,
read by the guest runner) and the manifest records with its seed. The
delayed application sleeps, holding no CPU, and its times are counted
from its own release, so the delay itself is in no turnaround.

**Seed.** Drawn from the run's identity *without its policy*: the mix,
the platform and the repetition. Every policy of one repetition meets the
same delays (common random numbers): a difference between two policies is
never a difference between their perturbations, and no policy can draw
luckier starts than another. Each repetition draws its own, and the same
run planned twice, on any machine, gets the same delays and so the same
run description and key.

**Off.** ``perturb_us = 0`` (the default) writes no delay at all: the
run description is byte for byte what it was before perturbations
existed, so the keys of existing campaigns do not change.

The delays come from SHA-256, not from Python's ``random``, whose
integer draws are not promised to stay the same across versions.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from ampkit.errors import UsageError

#: The longest delay the guest runner takes (workloads/runner/ampkit-init.c):
#: a second is far beyond what perturbs a run and still short against a
#: mix's time limit.
MAX_US = 1_000_000
#: What goes into every seed first: a new way of drawing delays gets a new
#: tag, so that it can never be mistaken for this one.
_TAG = "ampkit-perturbation-1"


@dataclass(frozen=True)
class Perturbation:
    """A run's perturbation: the bound, the seed and each application's delay, in mix order."""

    max_us: int
    seed: str
    start_delays_us: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "max_us": self.max_us,
            "seed": self.seed,
            "start_delays_us": list(self.start_delays_us),
        }


def check_max(max_us: int) -> int:
    if isinstance(max_us, bool) or not isinstance(max_us, int) or not 0 <= max_us <= MAX_US:
        raise UsageError(
            f"a perturbation of up to {max_us!r} us",
            f"give 0 (none) to {MAX_US} whole microseconds",
        )
    return max_us


def seed_of(mix: str, platform: str, repetition: int) -> str:
    """The seed of a run of ``mix`` on ``platform``, its ``repetition``-th:
    16 hex digits. The policy is left out on purpose (module text)."""
    text = "\0".join((_TAG, mix, platform, str(repetition)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def start_delays(seed: str, apps: int, max_us: int) -> tuple[int, ...]:
    """``apps`` delays, each uniform in [0, max_us], drawn from ``seed``
    (a 64-bit draw each: the modulo's bias is below 1e-13)."""
    check_max(max_us)
    out = []
    for i in range(apps):
        draw = hashlib.sha256(f"{seed}:{i}".encode()).digest()[:8]
        out.append(int.from_bytes(draw, "big") % (max_us + 1))
    return tuple(out)


def perturbation(
    mix: str, platform: str, repetition: int, apps: int, max_us: int
) -> Perturbation | None:
    """The perturbation of that run, or None when ``max_us`` is 0 (off)."""
    if check_max(max_us) == 0:
        return None
    seed = seed_of(mix, platform, repetition)
    return Perturbation(max_us, seed, start_delays(seed, apps, max_us))
