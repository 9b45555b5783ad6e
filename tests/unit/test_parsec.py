"""The PARSEC / SPLASH-2x recipe on a miniature release in PARSEC's layout (tests/parsec_mini.py).

Real cross builds (aarch64-linux-gnu-gcc, m4, make), real bash reading the
configuration files, a real ext4 image read back with debugfs.
"""

import functools
import http.server
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from ampkit import parsec
from ampkit.errors import EXIT_BUILD, AmpkitError, BuildFailed
from ampkit.hashing import sha256_file
from ampkit.mix import load_mix, render_mix
from ampkit.paths import cache_dir
from ampkit.rundesc import RunDescription
from tests.parsec_mini import make_release

BENCHMARKS = ["parsec.blackscholes", "splash2x.fft"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # downloads and unpacked archives go to the cache: keep each test's own,
    # but share busybox (fetched once with apt-get) with the real cache
    cache = tmp_path / "cache"
    real = cache_dir() / "busybox-arm64"
    monkeypatch.setenv("AMPKIT_CACHE", str(cache))
    if real.is_dir():
        cache.mkdir()
        (cache / "busybox-arm64").symlink_to(real)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_release(tmp_path_factory.mktemp("release"))


def debugfs(image: Path, command: str) -> str:
    result = subprocess.run(
        ["debugfs", "-R", command, str(image)], capture_output=True, text=True, check=True
    )
    return result.stdout


def test_builds_both_suites_from_the_archives(release: tuple[Path, Path], tmp_path: Path) -> None:
    core, sim = release
    out = tmp_path / "out"
    manifest_file = parsec.build_suite(
        [str(core), str(sim)], BENCHMARKS, ["simsmall", "simmedium"], out_dir=out
    )
    manifest = json.loads(manifest_file.read_text())
    assert sorted(manifest["benchmarks"]) == BENCHMARKS
    bs = manifest["benchmarks"]["parsec.blackscholes"]
    assert bs["package"] == "pkgs/apps/blackscholes" and bs["version"] == "2.2-mini"
    small = bs["inputs"]["simsmall"]
    # the runconf's command, the thread count left for the run to fill in
    assert small["argv"] == [
        f"/parsec/pkgs/apps/blackscholes/inst/{parsec.PLATFORM}/bin/blackscholes",
        parsec.NTHREADS,
        "in_small.txt",
        "prices.txt",
    ]
    assert small["dir"] == "/parsec/pkgs/apps/blackscholes/run/simsmall"
    fft = manifest["benchmarks"]["splash2x.fft"]["inputs"]["simmedium"]
    # run.sh goes through the disk's busybox: the initramfs has no /bin/sh
    assert fft["argv"] == [
        "/parsec/bin/sh",
        f"/parsec/ext/splash2x/kernels/fft/inst/{parsec.PLATFORM}/bin/run.sh",
        parsec.NTHREADS,
        "simmedium",
    ]
    assert manifest["env"]["PARSECPLAT"] == parsec.PLATFORM
    assert manifest["env"]["PARSECDIR"] == "/parsec"

    image = out / manifest["image"]
    assert sha256_file(image) == manifest["image_sha256"]
    assert image.read_bytes()[1080:1082] == b"\x53\xef"  # the ext4 superblock magic
    # the image holds the programs, each input set unpacked, busybox and the manifest
    assert "blackscholes" in debugfs(
        image, f"ls -l /pkgs/apps/blackscholes/inst/{parsec.PLATFORM}/bin"
    )
    assert "in_medium.txt" in debugfs(image, "ls -l /pkgs/apps/blackscholes/run/simmedium")
    assert "input.template" in debugfs(image, "ls -l /ext/splash2x/kernels/fft/run/simsmall")
    assert "busybox" in debugfs(image, "ls -l /bin")
    assert "run.sh" in debugfs(image, f"ls -l /ext/splash2x/kernels/fft/inst/{parsec.PLATFORM}/bin")
    on_disk = json.loads(debugfs(image, "cat /ampkit-parsec.json"))
    assert on_disk["benchmarks"] == manifest["benchmarks"]

    # the programs are static aarch64 executables, linked with the kit's hooks
    dump = tmp_path / "blackscholes"
    subprocess.run(
        ["debugfs", "-R",
         f"dump /pkgs/apps/blackscholes/inst/{parsec.PLATFORM}/bin/blackscholes {dump}",
         str(image)],
        check=True, capture_output=True,
    )  # fmt: skip
    assert parsec.check_static_aarch64(dump) is None
    symbols = subprocess.run(
        ["aarch64-linux-gnu-nm", str(dump)], capture_output=True, text=True, check=True
    ).stdout
    assert " T __parsec_roi_begin" in symbols
    assert "ampkit" in (out / "logs" / "hooks.log").read_text()

    # the same inputs again: nothing is rebuilt
    mtime = image.stat().st_mtime_ns
    again = parsec.build_suite(
        [str(core), str(sim)], BENCHMARKS, ["simmedium", "simsmall"], out_dir=out
    )
    assert again == manifest_file and image.stat().st_mtime_ns == mtime


def test_archives_from_a_url(release: tuple[Path, Path], tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    for a in release:
        shutil.copy2(a, served / a.name)
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(served)
    )  # fmt: skip
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        urls = [f"{base}/{a.name}" for a in release]
        manifest_file = parsec.build_suite(
            urls, ["parsec.blackscholes"], ["simsmall"], out_dir=tmp_path / "out"
        )
        assert "parsec.blackscholes" in json.loads(manifest_file.read_text())["benchmarks"]
        with pytest.raises(AmpkitError, match="cannot download"):
            parsec.build_suite([f"{base}/missing.tar.gz"], ["parsec.blackscholes"], ["simsmall"])
    finally:
        httpd.shutdown()


def test_an_unpacked_tree_is_a_source(release: tuple[Path, Path], tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for a in release:
        subprocess.run(["tar", "-xzf", str(a), "-C", str(tree)], check=True)
    manifest_file = parsec.build_suite(
        [str(tree)], ["splash2x.fft"], ["simsmall"], out_dir=tmp_path / "out"
    )
    assert list(json.loads(manifest_file.read_text())["benchmarks"]) == ["splash2x.fft"]
    # the user's tree is read, never written
    assert not list(tree.rglob("inst"))


@pytest.mark.parametrize(
    ("benchmarks", "inputs", "core_only", "message"),
    [
        (["parsec.x264"], ["simsmall"], False, "configure"),
        (["parsec.ferret"], ["simsmall"], False, "needs gsl, libjpeg"),
        (["parsec.dedup"], ["simsmall"], False, "parsec.dedup is in none of the PARSEC sources"),
        (["blackscholes"], ["simsmall"], False, "not a suite program"),
        (["parsec.blackscholes"], ["simhuge"], False, "unknown input set 'simhuge'"),
        (["parsec.blackscholes"], ["simsmall"], True, "parsec-3.0-input-sim"),
        (["parsec.blackscholes"], ["native"], False, "no pkgs/apps/blackscholes/parsec/native"),
    ],
)
def test_what_the_recipe_refuses_it_names(
    release: tuple[Path, Path],
    tmp_path: Path,
    *,
    benchmarks: list[str],
    inputs: list[str],
    core_only: bool,
    message: str,
) -> None:
    sources = [str(release[0])] if core_only else [str(a) for a in release]
    with pytest.raises(AmpkitError, match=message):
        parsec.build_suite(sources, benchmarks, inputs, out_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "parsec.json").exists()


def test_bad_sources_are_named(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError, match="no PARSEC source given"):
        parsec.build_suite([], BENCHMARKS)
    with pytest.raises(AmpkitError, match="does not exist"):
        parsec.build_suite([str(tmp_path / "nope.tar.gz")], BENCHMARKS)
    with pytest.raises(AmpkitError, match="not a PARSEC tree"):
        parsec.build_suite([str(tmp_path)], BENCHMARKS)


def test_a_failed_build_keeps_its_log(release: tuple[Path, Path], tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for a in release:
        subprocess.run(["tar", "-xzf", str(a), "-C", str(tree)], check=True)
    source = tree / "parsec-3.0" / "pkgs" / "apps" / "blackscholes" / "src" / "sum.c"
    source.write_text(source.read_text() + "\nthis does not compile;\n")
    out = tmp_path / "out"
    with pytest.raises(BuildFailed, match=r"building parsec\.blackscholes failed") as e:
        parsec.build_suite([str(tree)], ["parsec.blackscholes"], ["simsmall"], out_dir=out)
    # the message shows the end of the kept log, which has the compiler's complaint
    found = re.search(r"the end of (\S+\.log):", e.value.what)
    assert found, e.value.what
    log = Path(found[1])
    assert "this does not compile" in log.read_text()
    assert "sum.c" in e.value.what and e.value.exit_code == EXIT_BUILD
    assert "error" in (out / "logs" / "parsec.blackscholes.log").read_text()


def test_static_aarch64_check_says_what_is_wrong(tmp_path: Path) -> None:
    assert "not aarch64" in str(parsec.check_static_aarch64(Path("/bin/true")))
    text = tmp_path / "run.sh"
    text.write_text("#!/bin/sh\n")
    assert parsec.check_static_aarch64(text) == "not an ELF file"
    dynamic = tmp_path / "dyn"
    (tmp_path / "m.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(["aarch64-linux-gnu-gcc", str(tmp_path / "m.c"), "-o", str(dynamic)], check=True)
    assert parsec.check_static_aarch64(dynamic) == "dynamically linked"


def test_mixes_name_suite_programs_with_an_input_set(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'category = "compute"\n[[app]]\nprogram = "parsec.blackscholes"\nthreads = 2\n'
        'input = "simsmall"\nspeedup = 2.0\n[[app]]\nprogram = "compute"\nthreads = 1\n'
        "size = 100\n"
    )
    mix = load_mix(str(path))
    assert mix.apps[0].from_suite and mix.apps[0].input == "simsmall"
    assert not mix.apps[1].from_suite
    again = tmp_path / "again.toml"
    again.write_text(render_mix(mix))
    assert load_mix(str(again)).apps == mix.apps
    with pytest.raises(AmpkitError, match="needs the PARSEC image"):
        RunDescription.for_mix("r", "cfs", 0, 10, mix)


@pytest.mark.parametrize(
    ("app", "message"),
    [
        (
            'program = "parsec.blackscholes"\nthreads = 2\n',
            "bad.toml:3: app 1: 'program' a PARSEC program",
        ),
        (
            'program = "parsec.blackscholes"\nthreads = 2\ninput = "simsmall"\nsize = 4\n',
            "bad.toml:6: app 1: 'size' a PARSEC program takes its input set",
        ),
        (
            'program = "compute"\nthreads = 2\nsize = 4\ninput = "simsmall"\n',
            "bad.toml:6: app 1: 'input' only",
        ),
        ('program = "parsec."\nthreads = 2\ninput = "test"\n', "names no benchmark"),
        (
            'program = "splash2x.fft"\nthreads = 2\ninput = "huge"\n',
            "bad.toml:5: app 1: 'input' a PARSEC program needs an input set, not 'huge'",
        ),
    ],
)
def test_bad_suite_apps_are_rejected_with_line_and_key(
    tmp_path: Path, app: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(f'category = "compute"\n[[app]]\n{app}')
    with pytest.raises(AmpkitError, match=message):
        load_mix(str(path))


def test_run_description_for_a_suite_mix(release: tuple[Path, Path], tmp_path: Path) -> None:
    manifest_file = parsec.build_suite(
        [str(a) for a in release], BENCHMARKS, ["simsmall"], out_dir=tmp_path / "out"
    )
    path = tmp_path / "p.toml"
    path.write_text(
        'category = "compute"\n[[app]]\nprogram = "splash2x.fft"\nthreads = 3\n'
        'input = "simsmall"\n[[app]]\nprogram = "compute"\nthreads = 1\nsize = 100\n'
    )
    suite = parsec.load_image(manifest_file)
    text = RunDescription.for_mix("r", "cfs", 0, 10, load_mix(str(path)), suite=suite).render()
    lines = text.splitlines()
    assert "disk /dev/vda /parsec" in lines
    assert f"env PARSECPLAT={parsec.PLATFORM}" in lines
    app = lines.index(
        f"app splash2x.fft 0 3 0 /parsec/bin/sh "
        f"/parsec/ext/splash2x/kernels/fft/inst/{parsec.PLATFORM}/bin/run.sh 3 simsmall"
    )
    assert lines[app + 1] == "inputs /parsec/ext/splash2x/kernels/fft/run/simsmall"
    assert lines[app + 2].startswith("app compute 0 1 0 /bin/compute")
    # an input set the image was not built with, a program it lacks
    path.write_text(path.read_text().replace("simsmall", "simmedium"))
    with pytest.raises(AmpkitError, match="built without the simmedium inputs"):
        RunDescription.for_mix("r", "cfs", 0, 10, load_mix(str(path)), suite=suite)
    path.write_text(path.read_text().replace("splash2x.fft", "splash2x.radix"))
    with pytest.raises(AmpkitError, match=r"splash2x\.radix is not in the PARSEC image"):
        RunDescription.for_mix("r", "cfs", 0, 10, load_mix(str(path)), suite=suite)
