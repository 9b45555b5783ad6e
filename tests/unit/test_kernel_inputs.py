"""The series, the fragments and the source tree, on a miniature source tarball."""

import tarfile
from pathlib import Path

import pytest

from ampkit import kernel, kernelcheck
from ampkit.errors import AmpkitError


def make_series(tmp_path: Path, patches: dict[str, str], series: str | None = None) -> Path:
    d = tmp_path / "series-dir"
    d.mkdir(exist_ok=True)
    for name, text in patches.items():
        (d / name).write_text(text)
    (d / "series").write_text(series if series is not None else "\n".join(patches) + "\n")
    return d


def test_series_order_and_comments(tmp_path: Path) -> None:
    d = make_series(
        tmp_path,
        {"0001-a.patch": "", "0002-b.patch": ""},
        "# comment\n0002-b.patch\n\n0001-a.patch  # trailing\n",
    )
    assert [p.name for p in kernel.read_series(d)] == ["0002-b.patch", "0001-a.patch"]


@pytest.mark.parametrize(
    ("series", "message"),
    [
        ("0001-a.patch\n0003-c.patch\n", r"series:2: names 0003-c.patch"),
        ("0001-a.patch\n0001-a.patch\n", r"series:2: 0001-a.patch is listed twice"),
        ("0001-a.patch\n", r"does not list: 0002-b.patch"),
    ],
)
def test_series_errors(tmp_path: Path, series: str, message: str) -> None:
    d = make_series(tmp_path, {"0001-a.patch": "", "0002-b.patch": ""}, series)
    with pytest.raises(AmpkitError, match=message):
        kernel.read_series(d)


def test_the_kits_series_is_consistent() -> None:
    patches = kernel.read_series()
    assert patches and patches[0].name.startswith("0001-")
    touched = set().union(*(kernel.touched_files(p) for p in patches))
    assert "kernel/sched/amp.c" in touched


def test_parse_config_and_mismatches() -> None:
    config = kernel.parse_config('CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C="x"\n')
    assert config == {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"x"'}
    wanted = kernel.parse_config("CONFIG_A=y\nCONFIG_B=y\nCONFIG_D=y\n# CONFIG_C is not set\n")
    assert kernel.config_mismatches(wanted, config) == [
        "CONFIG_B=y was requested, the configuration has n",
        "CONFIG_D=y was requested, the configuration has n",
        'CONFIG_C=n was requested, the configuration has "x"',
    ]


# --- the source tree on a miniature "kernel" -------------------------------------

HELLO = "line 1\nline 2\nline 3\n"


def patch_text(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,3 +1,3 @@\n line 1\n-{old}\n+{new}\n line 3\n"
    )


NEW_FILE = (
    "diff --git a/kernel/new.c b/kernel/new.c\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/kernel/new.c\n@@ -0,0 +1 @@\n+int x;\n"
)


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AMPKIT_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "linux-mini"
    (src / "kernel").mkdir(parents=True)
    (src / "Makefile").write_text("all:\n")
    (src / "kernel" / "hello.c").write_text(HELLO)
    tarball = tmp_path / "linux-mini.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(src, arcname="linux-mini")
    return tarball


def inputs_for(tarball: Path, patches: list[Path]) -> kernel.KernelInputs:
    record = {"series": [{"name": p.name, "sha256": p.read_text()} for p in patches]}
    return kernel.KernelInputs(
        variant="default",
        tarball=tarball,
        tarball_sha256="0",
        debian_version="0-test",
        patches=tuple(patches),
        fragments=(),
        toolchain=(),
        record=record,
    )


def tree_for(inputs: kernel.KernelInputs) -> kernel.SourceTree:
    tree = kernel.SourceTree(inputs)
    tree.unpack(lambda _msg: None)
    return tree


def test_switching_series_restores_what_the_old_one_touched(mini: Path, tmp_path: Path) -> None:
    p1 = tmp_path / "0001-two.patch"
    p1.write_text(patch_text("kernel/hello.c", "line 2", "line two") + NEW_FILE)
    tree = tree_for(inputs_for(mini, [p1]))
    assert tree.apply_series(lambda _m: None)
    hello = tree.src / "kernel" / "hello.c"
    assert hello.read_text() == "line 1\nline two\nline 3\n"
    assert (tree.src / "kernel" / "new.c").read_text() == "int x;\n"
    # the same series again: nothing to do, nothing touched
    mtime = hello.stat().st_mtime_ns
    assert not kernel.SourceTree(inputs_for(mini, [p1])).apply_series(lambda _m: None)
    assert hello.stat().st_mtime_ns == mtime

    # an empty series: back to the pristine source, the new file gone
    assert kernel.SourceTree(inputs_for(mini, [])).apply_series(lambda _m: None)
    assert hello.read_text() == HELLO
    assert not (tree.src / "kernel" / "new.c").exists()


def test_a_patch_that_does_not_apply_names_itself_and_the_file(mini: Path, tmp_path: Path) -> None:
    good = tmp_path / "0001-good.patch"
    good.write_text(NEW_FILE)
    bad = tmp_path / "0002-stale.patch"
    bad.write_text(patch_text("kernel/hello.c", "line 2 as it was long ago", "line two"))
    tree = tree_for(inputs_for(mini, [good, bad]))
    with pytest.raises(AmpkitError) as e:
        tree.apply_series(lambda _m: None)
    assert "0002-stale.patch does not apply" in str(e.value)
    assert "kernel/hello.c" in str(e.value) and "FAILED" in str(e.value)
    # the tree is left pristine, ready for a corrected series
    assert (tree.src / "kernel" / "hello.c").read_text() == HELLO
    assert not (tree.src / "kernel" / "new.c").exists()
    assert not list(tree.src.rglob("*.rej")) and not list(tree.src.rglob("*.orig"))


def test_fuzzy_patches_are_refused(mini: Path, tmp_path: Path) -> None:
    fuzzy = tmp_path / "0001-fuzzy.patch"
    fuzzy.write_text(
        "diff --git a/kernel/hello.c b/kernel/hello.c\n--- a/kernel/hello.c\n"
        "+++ b/kernel/hello.c\n@@ -1,3 +1,3 @@\n line one\n-line 2\n+line two\n"
        " line 3\n"
    )
    with pytest.raises(AmpkitError, match=r"0001-fuzzy\.patch does not apply"):
        tree_for(inputs_for(mini, [fuzzy])).apply_series(lambda _m: None)


def test_the_series_check_compiles_what_the_series_touched() -> None:
    # the hooks' directories always; any other C file the series touched as its object
    touched = {"kernel/sys.c", "include/linux/sched.h", "kernel/sched/colab.c", "init/Kconfig"}
    assert kernelcheck.patch_targets(touched) == ["kernel/futex/", "kernel/sched/", "kernel/sys.o"]
    assert kernelcheck.patch_targets(set()) == ["kernel/futex/", "kernel/sched/"]


def test_a_baseline_variant_builds_the_pristine_source_in_a_tree_of_its_own(
    mini: Path, tmp_path: Path
) -> None:
    p1 = tmp_path / "0001-two.patch"
    p1.write_text(patch_text("kernel/hello.c", "line 2", "line two"))
    patched = tree_for(inputs_for(mini, [p1]))
    assert patched.apply_series(lambda _m: None)
    baseline = kernel.KernelInputs(
        variant="unpatched",
        tarball=mini,
        tarball_sha256="0",
        debian_version="0-test",
        patches=(),
        fragments=(),
        toolchain=(),
        record={"series": []},
    )
    pristine = tree_for(baseline)
    assert pristine.base != patched.base
    assert not pristine.apply_series(lambda _m: None)  # nothing to apply
    assert (pristine.src / "kernel" / "hello.c").read_text() == HELLO
    # building the baseline never touched the patched tree
    assert (patched.src / "kernel" / "hello.c").read_text() == "line 1\nline two\nline 3\n"


def _series_symbols() -> set[str]:
    """The Kconfig symbols the series adds ('+config X' in its patches)."""
    return {
        "CONFIG_" + line.split()[1]
        for patch in sorted((kernel.SERIES_DIR).glob("*.patch"))
        for line in patch.read_text().splitlines()
        if line.startswith("+config ")
    }


def test_the_unpatched_variant_has_no_series_and_turns_the_kit_off() -> None:
    assert "unpatched" in kernel.PRISTINE_VARIANTS
    fragments = kernel.VARIANTS["unpatched"]
    assert fragments[0] == kernel.VARIANTS["default"][0]
    requested = kernel.parse_config("".join(f.read_text() for f in fragments))
    kit = kernel.parse_config(fragments[0].read_text())
    # every symbol the series adds and the kit's fragment asks for is off:
    # the pristine source has no such symbol, so a 'y' left in would fail
    # the build's check that the configuration honours its fragments
    series = _series_symbols()
    assert {"CONFIG_SCHED_AMP", "CONFIG_SCHED_COLAB", "CONFIG_SCHED_TIMESCALE"} <= series
    for symbol in series & kit.keys():
        assert requested[symbol] == "n", f"{symbol}: add '# {symbol} is not set' to unpatched"
    # everything else is the kit's configuration
    assert all(requested[s] == v for s, v in kit.items() if s not in series)
