"""The initramfs every guest boots: written here, without root and without cpio(1).

The recipe (disk-images/initramfs.list) uses the kernel's gen_init_cpio
format (``dir``, ``nod``, ``file``, ``slink``), so it reads like any other
kernel initramfs list. The archive is the "newc" cpio format Linux unpacks
(Documentation/driver-api/early-userspace/buffer-format.rst), written with
fixed timestamps and owners so identical inputs give identical bytes, and
compressed with gzip (CONFIG_RD_GZIP).

A run adds its description without rebuilding the image: Linux unpacks a
concatenation of archives, so the run's initrd is the shared compressed
image followed by a tiny uncompressed archive holding /ampkit/run.desc.
"""

import gzip
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ampkit.errors import AmpkitError

RUN_DESC_PATH = "ampkit/run.desc"


@dataclass(frozen=True)
class Entry:
    kind: str  # dir | file | nod | slink
    path: str  # inside the image, without the leading '/'
    mode: int  # permission bits
    source: Path | None = None  # file: where its contents come from
    data: bytes | None = None  # file: contents given directly
    target: str | None = None  # slink
    devtype: str | None = None  # nod: 'c' or 'b'
    major: int = 0
    minor: int = 0


class CpioWriter:
    """A newc archive built in memory."""

    def __init__(self) -> None:
        self._out = bytearray()
        self._ino = 721  # arbitrary start, as gen_init_cpio's

    def _header(
        self, name: str, mode: int, size: int, nlink: int, *, rmajor: int = 0, rminor: int = 0
    ) -> None:
        encoded = name.encode() + b"\0"
        fields = [self._ino, mode, 0, 0, nlink, 0, size, 0, 0, rmajor, rminor, len(encoded), 0]
        self._ino += 1
        self._out += b"070701" + b"".join(b"%08X" % f for f in fields)
        self._out += encoded
        self._pad()

    def _pad(self) -> None:
        self._out += b"\0" * (-len(self._out) % 4)

    def add(self, entry: Entry) -> None:
        if entry.kind == "dir":
            self._header(entry.path, stat.S_IFDIR | entry.mode, 0, 2)
        elif entry.kind == "file":
            data = entry.data if entry.data is not None else _read(entry.source)
            self._header(entry.path, stat.S_IFREG | entry.mode, len(data), 1)
            self._out += data
            self._pad()
        elif entry.kind == "slink":
            target = (entry.target or "").encode()
            self._header(entry.path, stat.S_IFLNK | entry.mode, len(target), 1)
            self._out += target
            self._pad()
        elif entry.kind == "nod":
            kind = stat.S_IFCHR if entry.devtype == "c" else stat.S_IFBLK
            self._header(
                entry.path, kind | entry.mode, 0, 1, rmajor=entry.major, rminor=entry.minor
            )
        else:
            raise ValueError(entry.kind)

    def finish(self) -> bytes:
        self._header("TRAILER!!!", 0, 0, 1)
        return bytes(self._out)


def _read(source: Path | None) -> bytes:
    if source is None:
        raise ValueError("file entry without a source")
    try:
        return source.read_bytes()
    except OSError as e:
        raise AmpkitError(f"initramfs: cannot read {source}: {e.strerror}") from e


_VAR = re.compile(r"\$\{(\w+)\}")


def parse_list(text: str, variables: dict[str, str], origin: str = "initramfs.list") -> list[Entry]:
    """Entries of a gen_init_cpio list; ${NAME} is replaced from variables."""
    entries: list[Entry] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue

        def subst(m: re.Match[str], lineno: int = lineno) -> str:
            if m.group(1) not in variables:
                raise AmpkitError(f"{origin}:{lineno}: unknown variable ${{{m.group(1)}}}")
            return variables[m.group(1)]

        words = _VAR.sub(subst, line).split()
        kind, args = words[0], words[1:]
        expected = {"dir": 4, "file": 5, "slink": 5, "nod": 7}
        if kind not in expected:
            raise AmpkitError(
                f"{origin}:{lineno}: unknown entry type '{kind}'", "use dir, file, slink or nod"
            )
        if len(args) != expected[kind]:
            raise AmpkitError(f"{origin}:{lineno}: '{kind}' takes {expected[kind]} fields")
        path = args[0].lstrip("/")
        try:
            if kind == "dir":
                entries.append(Entry("dir", path, int(args[1], 8)))
            elif kind == "file":
                entries.append(Entry("file", path, int(args[2], 8), source=Path(args[1])))
            elif kind == "slink":
                entries.append(Entry("slink", path, int(args[2], 8), target=args[1]))
            else:
                if args[4] not in ("c", "b"):
                    raise ValueError(args[4])
                entries.append(
                    Entry(
                        "nod",
                        path,
                        int(args[1], 8),
                        devtype=args[4],
                        major=int(args[5]),
                        minor=int(args[6]),
                    )
                )
        except ValueError as e:
            raise AmpkitError(f"{origin}:{lineno}: bad field in '{line}': {e}") from e
    return entries


def build_archive(entries: list[Entry]) -> bytes:
    writer = CpioWriter()
    for entry in entries:
        writer.add(entry)
    return writer.finish()


def build_image(list_path: Path, variables: dict[str, str], out: Path) -> None:
    """Write the gzip-compressed image described by a list file."""
    entries = parse_list(list_path.read_text(), variables, str(list_path))
    data = gzip.compress(build_archive(entries), compresslevel=9, mtime=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)


def with_run_description(image: bytes, description: str) -> bytes:
    """The shared image plus an uncompressed archive holding the run description."""
    overlay = build_archive(
        [
            Entry("dir", "ampkit", 0o755),
            Entry("file", RUN_DESC_PATH, 0o644, data=description.encode()),
        ]
    )
    # Archives in an initramfs buffer may be separated by zero padding;
    # start the next one 4-byte aligned.
    return image + b"\0" * (-len(image) % 4) + overlay
