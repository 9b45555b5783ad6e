"""The package's layering, checked: the analysis reads run directories through
ampkit.rundir and gem5's statistics through ampkit.gem5stats, and loads
nothing of the kit that runs things (engines, kernel builder, platform
catalogue, PARSEC, disks).

Two checks, each able to fail on its own: the imports written in each
module (so that a lazy import inside a function is caught too), and what
importing the analysis really loads in a fresh interpreter.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]

#: Modules that import nothing of the kit but one another: what reads a run
#: directory, gem5's statistics (which the run directory module reads a
#: run's with), and the file and error helpers they use.
LEAVES = {
    "ampkit.rundir",
    "ampkit.gem5stats",
    "ampkit.hashing",
    "ampkit.errors",
    # the kernel's time scale, read from a run's command line
    "ampkit.timescale",
    # a mix's category as a rule on its programs' waiting
    "ampkit.categories",
}

#: What the analysis (ampkit.analysis.*) may import of the kit.
ANALYSIS_MAY_IMPORT = LEAVES


def kit_imports(path: Path, package: str) -> set[str]:
    """Every ampkit module a file imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # "from ampkit import gem5stats" imports the module ampkit.gem5stats
            names = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        found.update(n for n in names if n == "ampkit" or n.startswith("ampkit."))
    return found


def modules_of(folder: Path, package: str) -> dict[str, Path]:
    return {f"{package}.{p.stem}": p for p in sorted(folder.glob("*.py"))}


def is_module(name: str) -> bool:
    """Whether an imported name is a module of the kit (not a class in one)."""
    parts = name.split(".")
    path = REPO.joinpath("ampkit", *parts[1:])
    return name == "ampkit" or path.with_suffix(".py").is_file() or path.is_dir()


def test_the_analysis_imports_only_the_run_directory_and_gem5_statistics() -> None:
    analysis = modules_of(REPO / "analysis", "ampkit.analysis")
    assert "ampkit.analysis.collect" in analysis and "ampkit.analysis.report" in analysis
    for name, path in analysis.items():
        imported = {m for m in kit_imports(path, "ampkit.analysis") if is_module(m)}
        outside = {
            m
            for m in imported
            if m not in ANALYSIS_MAY_IMPORT
            and not m.startswith("ampkit.analysis")
            and m != "ampkit"
        }
        assert not outside, f"{name} imports {sorted(outside)}"


def test_the_leaves_import_nothing_else_of_the_kit() -> None:
    for name in sorted(LEAVES):
        path = REPO / (name.replace(".", "/") + ".py")
        imported = {m for m in kit_imports(path, "ampkit") if is_module(m)} - {"ampkit"}
        assert imported <= LEAVES - {name}, f"{name} imports {sorted(imported - LEAVES)}"


def test_importing_the_report_loads_no_engine_kernel_or_platform_code() -> None:
    probe = (
        "import sys, ampkit.analysis.report, ampkit.analysis.collect, ampkit.summary\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('ampkit'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    assert "ampkit.rundir" in loaded  # the probe saw the kit's modules at all
    allowed = LEAVES | {"ampkit", "ampkit.summary"}
    unexpected = [m for m in loaded if m not in allowed and not m.startswith("ampkit.analysis")]
    assert unexpected == [], unexpected


def test_the_checker_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The rule's own premise: a module importing the engines is reported,
    however it spells the import."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def later():\n"
        "    from ampkit.engines import qemu\n"
        "    from .. import run\n"
        "    import ampkit.kernel\n"
    )
    found = kit_imports(bad, "ampkit.analysis")
    assert {"ampkit.engines.qemu", "ampkit.run", "ampkit.kernel"} <= found


#: The run directory's own files, which only ampkit/rundir.py names (the
#: engines write their outputs through its RunWriter, by its constants).
RUN_FILES = {
    "manifest.json",
    "status",
    "results.jsonl",
    "guest.json",
    "run.desc",
    "platform.dtb",
    "console.log",
    "gem5.json",
    "m5out",
    "gem5.log",
    "gem5-command.json",
}

#: Where another module spells one of those names for something of its own.
OTHER_MEANINGS = {
    "manifest.json": {"ampkit/kernel.py"},  # a kernel build's own manifest
    "status": {
        "ampkit/cli.py",  # the 'campaign status' command
        "ampkit/console.py",  # an application record's field
        "ampkit/run.py",  # an application record's field
        "ampkit/devicetree.py",  # a device tree node's property
        "analysis/collect.py",  # the apps table's column (a record's field)
        "analysis/synthetic.py",  # an application record's field, as written
    },
}


def modules_but_rundir() -> list[tuple[Path, str]]:
    """Every module of the kit and the analysis but rundir itself (the
    analysis once, through its own folder, not the package's link to it),
    with its path from the repository."""
    found = []
    for folder in (REPO / "ampkit", REPO / "analysis"):
        for path in sorted(folder.rglob("*.py")):
            if path.name == "rundir.py" or "analysis" in path.relative_to(folder).parts[:-1]:
                continue
            found.append((path, str(path.relative_to(REPO))))
    return found


def test_only_the_run_directory_module_names_its_files() -> None:
    offenders = []
    for path, where in modules_but_rundir():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Constant) and node.value in RUN_FILES):
                continue
            if where not in OTHER_MEANINGS.get(node.value, set()):
                offenders.append(f"{where}:{node.lineno}: {node.value}")
    assert offenders == []


#: rundir's names of a run directory's files.
RUN_FILE_CONSTANTS = {
    "MANIFEST",
    "STATUS",
    "RESULTS",
    "CONSOLE",
    "GUEST",
    "GEM5_SUMMARY",
    "RUN_DESC",
    "DEVICE_TREE",
    "M5OUT",
    "GEM5_LOG",
    "GEM5_COMMAND",
    "GEM5_TERMINAL",
}
#: Reads by those names of what is not a run directory.
NOT_A_RUN = {("ampkit/engines/gem5.py", "GEM5_LOG")}  # the checkpoint boot's own log


def reads_by_run_file_name(path: Path) -> list[tuple[str, int]]:
    """Each read (read_text, read_bytes, open for reading) of a path built
    with one of rundir's file names: (the name, its line)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "open":
            mode = node.args[0] if node.args else None
            writes = isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax")
            if writes:
                continue
        elif node.func.attr not in ("read_text", "read_bytes"):
            continue
        for sub in ast.walk(node.func.value):
            name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
            if name in RUN_FILE_CONSTANTS:
                found.append((str(name), node.lineno))
    return found


def test_only_the_run_directory_module_reads_its_files() -> None:
    """A run directory is read through ampkit.rundir (RunDir, or RunWriter
    while it is written): a module that reads one of its files by rundir's
    name of it, as run.py once read console.log, is reported."""
    offenders = []
    for path, where in modules_but_rundir():
        for name, line in reads_by_run_file_name(path):
            if (where, name) not in NOT_A_RUN:
                offenders.append(f"{where}:{line}: reads {name}")
    assert offenders == []


def test_the_read_checker_sees_a_direct_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f(work, run):\n"
        "    a = (work / CONSOLE).read_text(errors='replace')\n"
        "    b = run.path(rundir.STATUS).open()\n"
        "    run.path(CONSOLE).open('wb')\n"
    )
    assert reads_by_run_file_name(bad) == [("CONSOLE", 2), ("STATUS", 3)]
