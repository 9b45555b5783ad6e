"""A small reader and writer for flattened device trees (DTB, version 17).

The kit edits the trees that QEMU and gem5 generate (CPU topology,
capacities, timers) as data structures, never as text. The format is the one
in the Devicetree Specification, chapter 5: a header, a memory reservation
block, a structure block of tokens and a strings block.
"""

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

FDT_MAGIC = 0xD00DFEED
FDT_BEGIN_NODE = 1
FDT_END_NODE = 2
FDT_PROP = 3
FDT_NOP = 4
FDT_END = 9

_HEADER = struct.Struct(">10I")
_VERSION = 17
_LAST_COMPATIBLE_VERSION = 16


class FdtError(ValueError):
    """A blob that is not a well-formed flattened device tree."""


def _align4(n: int) -> int:
    return (n + 3) & ~3


@dataclass
class Node:
    name: str
    props: dict[str, bytes] = field(default_factory=dict)
    children: list["Node"] = field(default_factory=list)

    def child(self, name: str) -> "Node | None":
        return next((c for c in self.children if c.name == name), None)

    def add_child(self, name: str) -> "Node":
        if self.child(name) is not None:
            raise FdtError(f"node '{name}' already exists")
        node = Node(name)
        self.children.append(node)
        return node

    def remove_child(self, name: str) -> None:
        self.children = [c for c in self.children if c.name != name]

    def set_u32(self, prop: str, *values: int) -> None:
        self.props[prop] = struct.pack(f">{len(values)}I", *values)

    def u32s(self, prop: str) -> list[int]:
        raw = self.props[prop]
        if len(raw) % 4:
            raise FdtError(f"property '{prop}' is not a list of 32-bit cells")
        return list(struct.unpack(f">{len(raw) // 4}I", raw))

    def u32(self, prop: str) -> int:
        values = self.u32s(prop)
        if len(values) != 1:
            raise FdtError(f"property '{prop}' holds {len(values)} cells, not one")
        return values[0]

    def set_str(self, prop: str, value: str) -> None:
        self.props[prop] = value.encode() + b"\0"

    def str(self, prop: str) -> str:
        return self.props[prop].rstrip(b"\0").decode()

    def walk(self) -> Iterator["Node"]:
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class DeviceTree:
    root: Node
    reservations: list[tuple[int, int]] = field(default_factory=list)
    boot_cpuid: int = 0

    def node(self, path: str) -> Node:
        node = self.root
        for part in filter(None, path.split("/")):
            nxt = node.child(part)
            if nxt is None:
                raise FdtError(f"no node {path}")
            node = nxt
        return node

    def max_phandle(self) -> int:
        return max((n.u32("phandle") for n in self.root.walk() if "phandle" in n.props), default=0)

    @classmethod
    def from_bytes(cls, blob: bytes) -> "DeviceTree":
        if len(blob) < _HEADER.size:
            raise FdtError("blob shorter than a device tree header")
        (
            magic,
            total,
            off_struct,
            off_strings,
            off_rsv,
            version,
            _last,
            boot_cpuid,
            size_strings,
            size_struct,
        ) = _HEADER.unpack_from(blob)
        if magic != FDT_MAGIC:
            raise FdtError(f"bad magic 0x{magic:08x}")
        if version < _LAST_COMPATIBLE_VERSION or total > len(blob):
            raise FdtError(f"unsupported version {version} or truncated blob")
        strings = blob[off_strings : off_strings + size_strings]

        reservations = []
        pos = off_rsv
        while True:
            addr, size = struct.unpack_from(">QQ", blob, pos)
            pos += 16
            if addr == 0 and size == 0:
                break
            reservations.append((addr, size))

        def string_at(offset: int) -> str:
            end = strings.index(b"\0", offset)
            return strings[offset:end].decode()

        pos = off_struct
        end_struct = off_struct + size_struct
        stack: list[Node] = []
        root: Node | None = None
        while pos < end_struct:
            (token,) = struct.unpack_from(">I", blob, pos)
            pos += 4
            if token == FDT_BEGIN_NODE:
                end = blob.index(b"\0", pos)
                node = Node(blob[pos:end].decode())
                pos = _align4(end + 1)
                if stack:
                    stack[-1].children.append(node)
                elif root is None:
                    root = node
                else:
                    raise FdtError("more than one root node")
                stack.append(node)
            elif token == FDT_END_NODE:
                if not stack:
                    raise FdtError("unbalanced end of node")
                stack.pop()
            elif token == FDT_PROP:
                if not stack:
                    raise FdtError("property outside any node")
                length, name_off = struct.unpack_from(">II", blob, pos)
                pos += 8
                stack[-1].props[string_at(name_off)] = blob[pos : pos + length]
                pos = _align4(pos + length)
            elif token == FDT_NOP:
                continue
            elif token == FDT_END:
                break
            else:
                raise FdtError(f"unknown token {token} at offset {pos - 4}")
        if root is None or stack:
            raise FdtError("structure block ends inside a node")
        return cls(root=root, reservations=reservations, boot_cpuid=boot_cpuid)

    def to_bytes(self) -> bytes:
        strings = bytearray()
        string_offsets: dict[str, int] = {}

        def string_off(name: str) -> int:
            if name not in string_offsets:
                string_offsets[name] = len(strings)
                strings.extend(name.encode() + b"\0")
            return string_offsets[name]

        out = bytearray()

        def emit(node: Node) -> None:
            name = node.name.encode() + b"\0"
            out.extend(struct.pack(">I", FDT_BEGIN_NODE) + name)
            out.extend(b"\0" * (_align4(len(out)) - len(out)))
            for prop, value in node.props.items():
                out.extend(struct.pack(">III", FDT_PROP, len(value), string_off(prop)))
                out.extend(value)
                out.extend(b"\0" * (_align4(len(out)) - len(out)))
            for child in node.children:
                emit(child)
            out.extend(struct.pack(">I", FDT_END_NODE))

        emit(self.root)
        out.extend(struct.pack(">I", FDT_END))

        rsv = b"".join(struct.pack(">QQ", a, s) for a, s in self.reservations)
        rsv += struct.pack(">QQ", 0, 0)
        off_rsv = _align4(_HEADER.size)
        off_rsv = (off_rsv + 7) & ~7  # the reservation block is 8-byte aligned
        off_struct = off_rsv + len(rsv)
        off_strings = off_struct + len(out)
        total = off_strings + len(strings)
        header = _HEADER.pack(
            FDT_MAGIC,
            total,
            off_struct,
            off_strings,
            off_rsv,
            _VERSION,
            _LAST_COMPATIBLE_VERSION,
            self.boot_cpuid,
            len(strings),
            len(out),
        )
        blob = bytearray(header)
        blob.extend(b"\0" * (off_rsv - len(blob)))
        blob.extend(rsv)
        blob.extend(out)
        blob.extend(strings)
        return bytes(blob)
