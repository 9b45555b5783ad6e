"""A campaign's finished runs, slimmed and scrubbed so that they can be committed.

A gem5 run directory is a few megabytes, most of it gem5's statistics as
text, and it names the machine it ran on (the cache, the checkout, the gem5
build). An archived run keeps what the analysis and a reader need: the
run's own files (manifest, description, console, results, guest record,
gem5's log, summary and command line) and, from m5out/, the terminal and
config.ini and stats.txt compressed with xz (ampkit.gem5stats reads them
so), and a run in slices the terminal and stats.txt of each later slice
(m5out/slice-<n>/). Every path of the machine becomes a stand-in (/path/to/cache,
/path/to/gem5...), and a path left over stops the archive. The recorded
key, a hash of the inputs, is kept: the archived run is the run.

Only runs that count are archived (``RunDir.counts()``); a run already in
the archive under the same key is left as it is, so archiving again after
more runs finish adds only those.
"""

import itertools
import json
import lzma
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ampkit import gem5stats, paths
from ampkit.errors import AmpkitError
from ampkit.rundir import ARCHIVED, ARCHIVED_M5OUT, M5OUT, MANIFEST, RunDir, find_run_dirs


def machine_paths(extra: Mapping[Path, str] | None = None) -> list[tuple[str, str]]:
    """(path, stand-in) for each path of this machine an output may hold, in
    the forms given and resolved, the longest first (the checkout may sit
    inside the home the cache is in)."""
    stand_ins: dict[Path, str] = {
        **(extra or {}),
        paths.cache_dir(): "/path/to/cache",
        paths.build_dir(): "/path/to/ampkit/build",
        paths.REPO_ROOT: "/path/to/ampkit",
    }
    forms = {str(form): s for p, s in stand_ins.items() for form in (p, Path(p).resolve())}
    return sorted(forms.items(), key=lambda kv: -len(kv[0]))


def scrub(data: bytes, replacements: list[tuple[str, str]], what: str) -> bytes:
    """``data`` with every machine path replaced; bytes that are not UTF-8
    (a console may hold some) are kept as they are."""
    text = data.decode(errors="surrogateescape")
    for path, stand_in in replacements:
        text = text.replace(path, stand_in)
    home = str(Path.home())
    left = [p for p, _ in replacements if p in text] + [home] * (home != "/" and home in text)
    if left:
        raise AmpkitError(
            f"{what}: a path of this machine is left after scrubbing: {left[0]}",
            "add it to the stand-ins (ampkit/campaign/archive.py)",
        )
    return text.encode(errors="surrogateescape")


def archive_run(run: RunDir, out: Path, replacements: list[tuple[str, str]]) -> None:
    """One run into ``out`` (made whole beside it, then renamed into place)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
        staging = Path(tmp) / out.name
        (staging / M5OUT).mkdir(parents=True)
        for name in ARCHIVED:
            source = run.path / name
            if not source.is_file():
                continue
            if name.endswith(".xz"):  # compressed: scrubbed as the text it holds
                text = scrub(lzma.decompress(source.read_bytes()), replacements, str(source))
                (staging / name).write_bytes(lzma.compress(text))
            else:
                (staging / name).write_bytes(scrub(source.read_bytes(), replacements, str(source)))
        # a run in slices has its later slices' output in m5out/slice-<n>/
        slices = [d.relative_to(run.path) for d in gem5stats.slice_dirs(run.path / M5OUT)]
        for part, (name, compress) in itertools.product(slices, ARCHIVED_M5OUT.items()):
            source = run.path / part / name
            if not source.is_file():
                continue
            data = scrub(source.read_bytes(), replacements, str(source))
            target = staging / part / (f"{name}.xz" if compress else name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(lzma.compress(data) if compress else data)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)


def archive(campaign: Path, out: Path, extra: Mapping[Path, str] | None = None) -> list[str]:
    """Every run of ``campaign`` that counts into ``out``; what was done, a line per run."""
    runs = campaign / "runs" if (campaign / "runs").is_dir() else campaign
    finished, _ = find_run_dirs(runs)
    if not finished:
        raise AmpkitError(f"{campaign}: no finished run to archive")
    stand_ins: dict[Path, str] = {campaign.resolve(): "/path/to/campaign", **(extra or {})}
    checkout = _checkout_that_ran(campaign)
    if checkout is not None:
        stand_ins.setdefault(checkout, "/path/to/ampkit")
    lines = []
    for run_dir in finished:
        run = RunDir(run_dir)
        target = out / run_dir.name
        reason = run.exclusion()
        if reason is not None:
            lines.append(f"{run_dir.name}: left out: {reason}")
            continue
        if (target / MANIFEST).is_file() and RunDir(target).recorded_key() == run.recorded_key():
            lines.append(f"{run_dir.name}: archived already")
            continue
        # the gem5 tree the run's log names, where GEM5_ROOT did not name it
        gem5_root = run.gem5_root()
        named = {gem5_root: "/path/to/gem5"} if gem5_root and gem5_root not in stand_ins else {}
        archive_run(run, target, machine_paths({**stand_ins, **named}))
        lines.append(f"{run_dir.name}: archived")
    return lines


def _checkout_that_ran(campaign: Path) -> Path | None:
    """The checkout whose code ran the campaign (its runs name it: gem5's
    configuration script, the workloads), from the spec it was last run
    with, which may be another than the one archiving it (a worktree kept
    at the commit that started the campaign); None if it does not say."""
    try:
        meta = json.loads((campaign / "campaign.json").read_text())
    except (OSError, ValueError):
        return None
    source = meta.get("spec_source") if isinstance(meta, dict) else None
    if not isinstance(source, str):
        return None
    for parent in Path(source).parents:
        if (parent / "ampkit" / "__init__.py").is_file():
            return parent
    return None
