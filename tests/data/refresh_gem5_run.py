"""Makes tests/data/gem5-v24-2B2L-run/ again from a real gem5 run.

The run is the gem5 tier's COLAB run (tests/gem5/test_gem5_platform.py:
``colab_run``), made with the checkout's kernel, initramfs, core models
and calibration and the gem5 build at ``GEM5_ROOT``. Its own files are
kept, and from m5out/ the terminal, config.ini and stats.txt (xz, as
stats.json.xz already is); the machine's paths become /path/to/...; the
README's provenance paragraph is left to the person refreshing it.

    GEM5_ROOT=... .venv/bin/python tests/data/refresh_gem5_run.py

Costs one atomic boot (unless its checkpoint is cached) and about a
minute of detailed simulation.
"""

import lzma
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ampkit import kernel, paths  # noqa: E402
from ampkit.engines import gem5  # noqa: E402
from tests.gem5.test_gem5_platform import SMALL_COMPUTE, _run  # noqa: E402
from tests.qemu.helpers import probe  # noqa: E402

FIXTURE = REPO / "tests" / "data" / "gem5-v24-2B2L-run"
KEPT = (
    "console.log",
    "results.jsonl",
    "guest.json",
    "gem5.json",
    "gem5.log",
    "manifest.json",
    "run.desc",
    "status",
    "gem5-command.json",
)
KEPT_M5OUT = {"system.terminal": False, "config.ini": True, "stats.txt": True}


def main() -> int:
    found = gem5.Gem5.locate()  # no gem5: it says what it looked for
    build = kernel.find_build("default")
    if build is None:
        sys.exit("no default kernel build: run 'ampkit build kernel initramfs' first")
    initramfs = paths.build_dir() / "initramfs" / "ampkit.cpio.gz"
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        outcome = _run(runs / "colab", build, initramfs, "colab", probe("perf"), SMALL_COMPUTE)
        if not outcome.ok:
            sys.exit(f"the run did not end ok ({outcome.status}): see {outcome.directory}")
        stand_ins = {
            runs: "/path/to/runs",
            found.root: "/path/to/gem5",
            paths.cache_dir(): "/path/to/cache",
            paths.build_dir(): "/path/to/ampkit/build",
            REPO: "/path/to/ampkit",
        }
        # each path as given and resolved, the longest first: the checkout
        # may sit inside the home the cache is in
        machine_paths = sorted(
            {
                str(form): stand_in
                for path, stand_in in stand_ins.items()
                for form in (path, Path(path).resolve())
            }.items(),
            key=lambda kv: -len(kv[0]),
        )

        def scrub(data: bytes) -> bytes:
            # a console may hold bytes that are not UTF-8: kept as they are
            text = data.decode(errors="surrogateescape")
            for path, stand_in in machine_paths:
                text = text.replace(path, stand_in)
            left = [p for p, _ in machine_paths if p in text] + [str(Path.home())] * (
                str(Path.home()) in text
            )
            if left:
                sys.exit(f"a path of this machine is left in the fixture: {left[0]}")
            return text.encode(errors="surrogateescape")

        # made whole beside the fixture, then put in its place: a failure
        # leaves the committed fixture as it was
        staging = Path(tmp) / "fixture"
        (staging / "m5out").mkdir(parents=True)
        for name in KEPT:
            (staging / name).write_bytes(scrub((outcome.directory / name).read_bytes()))
        m5out = outcome.directory / "m5out"
        for name, compress in KEPT_M5OUT.items():
            data = scrub((m5out / name).read_bytes())
            target = staging / "m5out" / (f"{name}.xz" if compress else name)
            target.write_bytes(lzma.compress(data) if compress else data)
        stats_json = scrub(lzma.decompress((m5out / "stats.json.xz").read_bytes()))
        (staging / "m5out" / "stats.json.xz").write_bytes(lzma.compress(stats_json))
        for made in staging.rglob("*"):
            if made.is_file():
                shutil.copyfile(made, FIXTURE / made.relative_to(staging))
    print(
        f"{FIXTURE}: refreshed from an {outcome.status} run; its README's provenance "
        "(commit, date, capacities) is yours to update, and so are the figures "
        "tests/unit/test_gem5_real_run.py reads from stats.txt"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
