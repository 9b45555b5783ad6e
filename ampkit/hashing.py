"""Content hashes: the identity of every input and output the kit records."""

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_file_memo(path: Path, memo_dir: Path) -> str:
    """sha256 of a large file that rarely changes (the kernel source tarball).

    The digest is remembered next to the file's size and modification time,
    so that a no-op build does not read 130 MB again.
    """
    st = path.stat()
    key = sha256_bytes(f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    memo = memo_dir / f"{key}.sha256"
    if memo.is_file():
        return memo.read_text().strip()
    digest = sha256_file(path)
    memo_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(memo, digest + "\n")
    return digest


def sha256_json(value: Any) -> str:
    """Hash of a JSON-able value, independent of key order."""
    return sha256_bytes(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file so that readers see either the old or the new content."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")
