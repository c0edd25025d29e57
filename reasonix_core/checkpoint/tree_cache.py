"""The last snapshot's tree, held in memory and updated path by path.

When the watcher (:mod:`checkpoint.watcher`) names the few paths that changed,
a snapshot needs no git process at all: the changed files are hashed and
written as loose objects here, the trees on their way to the root are
rewritten, and the root's id is the snapshot. Everything else keeps the ids it
had. The objects are git's own format (zlib-deflated ``<type> <size>\\0<body>``
named by its SHA-1), so the store reads them back like any other.

The store's git index is not touched on this path: it lags behind, which costs
the next full read (``git status``) only the paths changed since, and never
exactness (a path git finds unchanged against the index is unchanged on disk).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterable
from pathlib import Path

from reasonix_core.fsutil import PRIVATE_DIR

TREE_MODE = b"40000"


def object_id(kind: bytes, body: bytes) -> tuple[str, bytes]:
    """Git's id of an object of ``kind`` holding ``body``, and its stored bytes."""
    data = kind + b" %d\0" % len(body) + body
    return hashlib.sha1(data, usedforsecurity=False).hexdigest(), data


# The store lives in the private Reasonix home (fsutil): objects read-only to their
# owner alone, as git writes them under core.sharedRepository=0600.
_OBJECT_MODE = 0o400


def write_object(objects: Path, kind: bytes, body: bytes) -> str:
    """Store one object (a no-op when it is there) and return its id."""
    oid, data = object_id(kind, body)
    folder = objects / oid[:2]
    path = folder / oid[2:]
    if os.path.exists(path):
        return oid
    folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)
    tmp = folder / f"tmp_obj_{os.getpid()}_{oid[2:10]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, _OBJECT_MODE)
    try:
        os.write(fd, zlib.compress(data, 1))
    finally:
        os.close(fd)
    os.replace(tmp, path)  # same bytes whoever wins a race
    return oid


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}


def write_pack(objects: Path, items: list[tuple[bytes, bytes]]) -> list[str]:
    """Store many objects as one pack (and its index) instead of a loose file
    each: creating thousands of small files costs seconds on some filesystems.
    ``items``: (kind, body); returns their ids. The index is renamed into place
    last, so git never sees a pack without it."""
    import struct

    seen: dict[str, tuple[int, int]] = {}  # id -> (offset, crc32)
    ids: list[str] = []
    chunks: list[bytes] = [b"PACK" + struct.pack(">II", 2, 0)]  # count patched below
    offset = 12
    for kind, body in items:
        oid, _data = object_id(kind, body)
        ids.append(oid)
        if oid in seen:
            continue
        size = len(body)
        byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        header = bytearray()
        while size:
            header.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        header.append(byte)
        packed = bytes(header) + zlib.compress(body, 1)
        seen[oid] = (offset, zlib.crc32(packed))
        chunks.append(packed)
        offset += len(packed)
    if not seen:
        return ids
    if offset >= 1 << 31:
        raise OSError("a seed pack over 2 GiB")
    chunks[0] = b"PACK" + struct.pack(">II", 2, len(seen))
    digest = hashlib.sha1(usedforsecurity=False)
    for chunk in chunks:
        digest.update(chunk)
    trailer = digest.digest()
    order = sorted(seen)
    fanout = [0] * 256
    for oid in order:
        fanout[int(oid[:2], 16)] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += b"".join(bytes.fromhex(oid) for oid in order)
    idx += b"".join(struct.pack(">I", seen[oid][1]) for oid in order)
    idx += b"".join(struct.pack(">I", seen[oid][0]) for oid in order)
    idx += trailer
    idx += hashlib.sha1(idx, usedforsecurity=False).digest()
    folder = objects / "pack"
    folder.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    name = f"pack-{trailer.hex()}"
    for suffix, data in ((".pack", b"".join(chunks) + trailer), (".idx", bytes(idx))):
        tmp = folder / f"tmp_{name}{suffix}_{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, _OBJECT_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / f"{name}{suffix}")
    return ids


def _sort_key(item: tuple[bytes, tuple[bytes, bytes]]) -> bytes:
    name, (mode, _oid) = item
    return name + b"/" if mode == TREE_MODE else name  # git's tree order


def _tree_body(entries: dict[bytes, tuple[bytes, bytes]]) -> bytes:
    """A tree object's body: its entries (name -> (mode, binary id)) in git's order."""
    return b"".join(
        mode + b" " + name + b"\0" + oid
        for name, (mode, oid) in sorted(entries.items(), key=_sort_key)
    )


class TreeCache:
    """Folder -> its entries (name -> (mode, binary id)), for one root tree."""

    def __init__(self, objects: Path, listing: bytes, root: str) -> None:
        """``listing``: ``git ls-tree -r -t -z --full-tree`` of ``root``."""
        self.objects = objects
        self.root = root
        self._folders: dict[str, dict[bytes, tuple[bytes, bytes]]] = {"": {}}
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, oid = meta.split(b" ")
            mode = mode.lstrip(b"0")  # ls-tree pads a folder's mode: 040000
            parent, _, name = path.rpartition(b"/")
            folder = os.fsdecode(parent)
            self._folders.setdefault(folder, {})[name] = (mode, bytes.fromhex(oid.decode()))
            if mode == TREE_MODE:
                self._folders.setdefault(os.fsdecode(path), {})

    @staticmethod
    def build(objects: Path, files: list[tuple[bytes, bytes, bytes]]) -> str:
        """Write every tree of ``files`` ((path, mode, hex id), as an index
        lists them) as one pack; returns the root tree's id. A whole
        repository's trees at once, without the per-path bookkeeping of
        :meth:`apply`."""
        folders: dict[bytes, dict[bytes, tuple[bytes, bytes]]] = {b"": {}}
        for path, mode, oid in files:
            parent, _, name = path.rpartition(b"/")
            entries = folders.get(parent)
            if entries is None:
                entries = folders[parent] = {}
                # Its ancestors, up to the first one already known.
                child = parent
                while child:
                    up, _, base = child.rpartition(b"/")
                    known = up in folders
                    folders.setdefault(up, {})[base] = (TREE_MODE, b"")
                    if known:
                        break
                    child = up
            entries[name] = (mode, bytes.fromhex(oid.decode()))
        packed: list[tuple[bytes, bytes]] = []
        root = ""
        for folder in sorted(folders, key=lambda f: -f.count(b"/") if f else 1):
            body = _tree_body(folders[folder])
            oid_hex = object_id(b"tree", body)[0]
            packed.append((b"tree", body))
            if folder:
                up, _, base = folder.rpartition(b"/")
                folders[up][base] = (TREE_MODE, bytes.fromhex(oid_hex))
            else:
                root = oid_hex
        write_pack(objects, packed)
        return root

    def get(self, path: str) -> tuple[str, str] | None:
        """(mode, id) of a file, or None (absent, or a folder)."""
        parent, _, name = path.rpartition("/")
        found = self._folders.get(parent, {}).get(os.fsencode(name))
        if found is None or found[0] == TREE_MODE:
            return None
        return found[0].decode(), found[1].hex()

    def is_folder(self, path: str) -> bool:
        return path in self._folders and path != ""

    def files_under(self, folder: str) -> list[str]:
        prefix = folder + "/"
        found = []
        for name in [f for f in self._folders if f == folder or f.startswith(prefix)]:
            for entry, (mode, _oid) in self._folders[name].items():
                if mode != TREE_MODE:
                    found.append(f"{name}/{os.fsdecode(entry)}" if name else os.fsdecode(entry))
        return found

    def apply(self, changes: Iterable[tuple[str, tuple[str, str] | None]]) -> str:
        """Set (mode, id) or remove (None) each path; returns the new root tree id."""
        touched: set[str] = set()
        for path, entry in changes:
            parent, _, name = path.rpartition("/")
            key = os.fsencode(name)
            if entry is None:
                self._remove(path)
                if parent in self._folders:
                    self._folders[parent].pop(key, None)
                    touched.add(parent)
                continue
            self._remove(path)  # a folder that became a file
            self._ensure(parent, touched)
            self._folders[parent][key] = (entry[0].encode(), bytes.fromhex(entry[1]))
            touched.add(parent)
        if not touched:
            return self.root
        # Deepest first: a folder's id is known before its parent's is written.
        pending = set()
        for folder in touched:
            while True:
                pending.add(folder)
                if folder == "":
                    break
                folder = folder.rpartition("/")[0]
        for folder in sorted(pending, key=lambda f: (-f.count("/") if f else 1, f)):
            entries = self._folders.get(folder, {})
            parent, _, name = folder.rpartition("/")
            if not entries and folder != "":
                del self._folders[folder]  # git keeps no empty folder
                self._folders.get(parent, {}).pop(os.fsencode(name), None)
                continue
            oid = write_object(self.objects, b"tree", _tree_body(entries))
            if folder == "":
                self.root = oid
            else:
                self._folders[parent][os.fsencode(name)] = (TREE_MODE, bytes.fromhex(oid))
        return self.root

    def _remove(self, path: str) -> None:
        """Drop the folder ``path`` and everything below it, if it is one."""
        if path not in self._folders or path == "":
            return
        prefix = path + "/"
        for name in [f for f in self._folders if f == path or f.startswith(prefix)]:
            del self._folders[name]
        parent, _, name = path.rpartition("/")
        self._folders.get(parent, {}).pop(os.fsencode(name), None)

    def _ensure(self, folder: str, touched: set[str]) -> None:
        # A loop, not recursion: a path may be deeper than Python's stack.
        missing: list[str] = []
        while folder not in self._folders:
            missing.append(folder)
            folder = folder.rpartition("/")[0]
        for folder in reversed(missing):  # the shallowest first
            parent, _, name = folder.rpartition("/")
            # A file in the way becomes a folder.
            self._folders[parent][os.fsencode(name)] = (TREE_MODE, bytes(20))
            touched.add(parent)
            self._folders[folder] = {}


def nul_terminated(names: Iterable[str]) -> bytes:
    """Paths as git's ``-z --stdin`` reads them: each one followed by NUL."""
    return b"".join(os.fsencode(n) + b"\0" for n in names)
