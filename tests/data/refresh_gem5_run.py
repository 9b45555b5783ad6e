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
        # the longest first: the checkout may sit inside the home the cache is in
        machine_paths = sorted(
            {
                str(runs): "/path/to/runs",
                str(found.root): "/path/to/gem5",
                str(paths.cache_dir()): "/path/to/cache",
                str(REPO): "/path/to/ampkit",
            }.items(),
            key=lambda kv: -len(kv[0]),
        )

        def scrub(data: bytes) -> bytes:
            text = data.decode()
            for path, stand_in in machine_paths:
                text = text.replace(path, stand_in)
            return text.encode()

        for name in KEPT:
            (FIXTURE / name).write_bytes(scrub((outcome.directory / name).read_bytes()))
        m5out = outcome.directory / "m5out"
        for name, compress in KEPT_M5OUT.items():
            data = scrub((m5out / name).read_bytes())
            if compress:
                (FIXTURE / "m5out" / f"{name}.xz").write_bytes(lzma.compress(data))
            else:
                (FIXTURE / "m5out" / name).write_bytes(data)
        shutil.copyfile(m5out / "stats.json.xz", FIXTURE / "m5out" / "stats.json.xz")
        home = str(Path.home())
        for name in [*KEPT, *(f"m5out/{n}" for n in KEPT_M5OUT)]:
            path = FIXTURE / name
            text = (
                lzma.decompress(Path(f"{path}.xz").read_bytes()).decode()
                if not path.exists()
                else path.read_text()
            )
            if home in text or tmp in text:
                sys.exit(f"{path}: a path of this machine is left in it")
    print(f"{FIXTURE}: refreshed from {outcome.status} run; update its README's provenance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
