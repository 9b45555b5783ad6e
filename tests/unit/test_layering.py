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
LEAVES = {"ampkit.rundir", "ampkit.gem5stats", "ampkit.hashing", "ampkit.errors"}

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
#: Not here: "status", a word every record uses, and "manifest.json", which
#: a kernel build also keeps (ampkit/kernel.py, its own).
RUN_FILES = {
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


def test_only_the_run_directory_module_names_its_files() -> None:
    offenders = []
    for folder, package in ((REPO / "ampkit", "ampkit"), (REPO / "analysis", "ampkit.analysis")):
        for path in sorted(folder.rglob("*.py")):
            if path.name == "rundir.py" or "analysis" in path.relative_to(folder).parts[:-1]:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and node.value in RUN_FILES:
                    offenders.append(f"{package}:{path.name}:{node.lineno}: {node.value}")
    assert offenders == []
