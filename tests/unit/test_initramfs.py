import gzip
import subprocess
from pathlib import Path

import pytest

from ampkit.errors import AmpkitError
from ampkit.initramfs import (
    build_archive,
    build_image,
    parse_list,
    with_run_description,
)

LIST = """\
# comment
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /bin 0755 0 0
file /init ${SRC}/init 0755 0 0
slink /bin/sh /init 0777 0 0
"""


def extract(archive: bytes, dest: Path) -> str:
    """Unpack with the real cpio(1); returns its verbose listing."""
    dest.mkdir()
    result = subprocess.run(
        ["cpio", "-idv", "--no-absolute-filenames", "--quiet"],
        input=archive,
        cwd=dest,
        capture_output=True,
    )
    # cpio cannot make device nodes without root; everything else must unpack.
    assert result.returncode in (0, 2), result.stderr
    return result.stderr.decode()


def test_archive_unpacks_with_cpio(tmp_path: Path) -> None:
    (tmp_path / "init").write_bytes(b"\x7fELF fake init")
    out = tmp_path / "image.cpio.gz"
    build_image_from_text(tmp_path, LIST, out)
    root = tmp_path / "root"
    extract(gzip.decompress(out.read_bytes()), root)
    assert (root / "init").read_bytes() == b"\x7fELF fake init"
    assert (root / "init").stat().st_mode & 0o777 == 0o755
    assert (root / "bin" / "sh").is_symlink()
    assert (root / "bin" / "sh").readlink() == Path("/init")


def build_image_from_text(tmp_path: Path, text: str, out: Path) -> None:
    listing = tmp_path / "initramfs.list"
    listing.write_text(text)
    build_image(listing, {"SRC": str(tmp_path)}, out)


def test_image_is_reproducible(tmp_path: Path) -> None:
    (tmp_path / "init").write_bytes(b"x" * 1000)
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    build_image_from_text(tmp_path, LIST, a)
    build_image_from_text(tmp_path, LIST, b)
    assert a.read_bytes() == b.read_bytes()


def test_run_description_travels_in_an_appended_archive(tmp_path: Path) -> None:
    base = gzip.compress(build_archive(parse_list("dir /x 0755 0 0\n", {})))
    combined = with_run_description(base, "ampkit-run 1\nrun_id t\n")
    assert combined.startswith(base)
    overlay = combined[len(base) :].lstrip(b"\0")
    assert (len(combined) - len(overlay)) % 4 == 0
    root = tmp_path / "root"
    extract(overlay, root)
    assert (root / "ampkit" / "run.desc").read_text() == "ampkit-run 1\nrun_id t\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("blob /x 0755 0 0", "unknown entry type 'blob'"),
        ("dir /x 0755 0", "'dir' takes 4 fields"),
        ("file /x ${NOPE}/y 0755 0 0", r"unknown variable \$\{NOPE\}"),
        ("dir /x 07z5 0 0", "bad field"),
        ("nod /dev/x 0600 0 0 q 1 1", "bad field"),
    ],
)
def test_bad_list_lines_name_the_line(text: str, message: str) -> None:
    with pytest.raises(AmpkitError, match=rf"initramfs\.list:2: {message}"):
        parse_list("# first line\n" + text + "\n", {})


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AmpkitError, match=r"cannot read .*/missing"):
        build_image_from_text(tmp_path, "file /x ${SRC}/missing 0755 0 0\n", tmp_path / "o.gz")
