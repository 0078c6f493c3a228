"""`WorkspaceToolset`: `read_file`, `write_file` and `list_files` confined to one directory.

Every path is relative to the workspace root and is walked one component at a time from an
open directory handle, never following a symbolic link (`O_NOFOLLOW`), so no spelling of a
path (absolute, `..`, a link planted inside) reaches a file outside the root, and no race
between a check and the open can either. Reads return at most `max_read_bytes` per call (page
on with `offset`); writes are capped per file, in total bytes and in file count, and never
touch a write-protected file (the env's input files, by default). A refused call changes
nothing: a write is made in a temporary file and renamed into place only once it is complete.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from datagauntlet.core.temp_roots import TempRoot
from datagauntlet.core.toolset import ToolError, Toolset, params, tool

MAX_PATH_CHARS = 400
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_PATH = {
    "type": "string",
    "maxLength": MAX_PATH_CHARS,
    "description": "a path relative to the workspace, e.g. notes/plan.md",
}


def _read_schema(ws: WorkspaceToolset) -> dict[str, Any]:
    return params(
        {
            "path": _PATH,
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "byte offset to start reading at (default 0)",
            },
        },
        required=["path"],
    )


def _write_schema(ws: WorkspaceToolset) -> dict[str, Any]:
    return params(
        {
            "path": _PATH,
            "content": {
                "type": "string",
                "maxLength": ws.max_write_bytes,
                "description": f"the whole new content of the file (at most {ws.max_write_bytes:,}"
                " bytes as UTF-8)",
            },
        }
    )


class WorkspaceToolset(Toolset):
    """Files under one directory.

    `root=None` makes a fresh temporary directory at `open` and removes it at `close`; a given
    `root` is the caller's and stays. `files` are written into the root at `open`; `protected`
    lists paths (or folders, ending in "/") agents may read but not write; None protects
    exactly `files`. `writable=False` leaves `write_file` out.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        files: Mapping[str, str | bytes] | None = None,
        protected: Iterable[str] | None = None,
        max_read_bytes: int = 64_000,
        max_write_bytes: int = 256_000,
        max_total_bytes: int = 8_000_000,
        max_files: int = 500,
        writable: bool = True,
        listing: bool = True,
    ) -> None:
        if min(max_read_bytes, max_write_bytes, max_total_bytes, max_files) < 1:
            raise ValueError("workspace limits must be >= 1")
        self.given_root = Path(root) if root is not None else None
        self.files = dict(files or {})
        protected_paths = list(self.files) if protected is None else list(protected)
        self.protected = tuple(sorted({_normal(p, keep_slash=True) for p in protected_paths}))
        self.max_read_bytes = max_read_bytes
        self.max_write_bytes = max_write_bytes
        self.max_total_bytes = max_total_bytes
        self.max_files = max_files
        self.writable = writable
        self.listing = listing
        self.root: Path | None = None
        self._owned: TempRoot | None = None

    # --- lifecycle -----------------------------------------------------------------------------
    def open(self) -> None:
        if self.root is not None:
            return
        if self.given_root is None:
            self._owned = TempRoot(self, "dg-workspace-")  # removed at close, or when dropped
            self.root = self._owned.path
        else:
            self.given_root.mkdir(parents=True, exist_ok=True)
            self.root = self.given_root.resolve()
        for path, content in self.files.items():
            data = content.encode() if isinstance(content, str) else content
            self._write(_parts(path), data)

    def close(self) -> None:
        self.root = None
        if self._owned is not None:
            self._owned.remove()

    # --- for the env (not tools) -----------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        """The whole content of a workspace file (the env's own read: no byte cap)."""
        fd = self._open_file(_parts(path))
        try:
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        finally:
            os.close(fd)

    def state_digest(self) -> str:
        digest = hashlib.sha256()
        for rel, _size in self._walk():
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(hashlib.sha256(self.read_bytes(rel)).digest())
        return digest.hexdigest()

    # --- tools -----------------------------------------------------------------------------
    @tool(
        lambda ws: (
            "Read a file of the workspace as text: at most "
            f"{ws.max_read_bytes:,} bytes per call; next_offset says where to continue."
        ),
        _read_schema,
    )
    def read_file(self, path: str, offset: int = 0) -> dict[str, Any]:
        parts = _parts(path)
        fd = self._open_file(parts)
        try:
            size = os.fstat(fd).st_size
            if offset > size:
                raise ToolError(f"offset {offset} is past the end of {path!r} ({size} bytes)")
            chunk = os.pread(fd, self.max_read_bytes, offset)
        finally:
            os.close(fd)
        chunk = _whole_characters(chunk, offset + len(chunk) < size)
        end = offset + len(chunk)
        return {
            "path": "/".join(parts),
            "content": chunk.decode("utf-8", errors="replace"),
            "offset": offset,
            "bytes": len(chunk),
            "size": size,
            "next_offset": end if end < size else None,
        }

    @tool(
        lambda ws: (
            "Write a file of the workspace (created, or replaced whole). At most "
            f"{ws.max_write_bytes:,} bytes per file; input files are read-only."
        ),
        _write_schema,
        mutates=True,
        when=lambda ws: ws.writable,
    )
    def write_file(self, path: str, content: str) -> dict[str, Any]:
        parts = _parts(path)
        rel = "/".join(parts)
        if self.is_protected(rel):
            raise ToolError(f"{rel!r} is an input file and is read-only; write to a new path")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError("content is not valid UTF-8 text (a lone surrogate)") from None
        if len(data) > self.max_write_bytes:
            raise ToolError(f"content is {len(data):,} bytes; at most {self.max_write_bytes:,}")
        sizes = dict(self._walk())
        total = sum(sizes.values()) - sizes.get(rel, 0) + len(data)
        if total > self.max_total_bytes:
            raise ToolError(
                f"the workspace would hold {total:,} bytes; at most {self.max_total_bytes:,}"
            )
        if rel not in sizes and len(sizes) >= self.max_files:
            raise ToolError(
                f"the workspace already holds {len(sizes)} files; at most {self.max_files}"
            )
        self._write(parts, data)
        return {"status": "written", "path": rel, "bytes": len(data)}

    @tool("List the files of the workspace with their sizes.", when=lambda ws: ws.listing)
    def list_files(self) -> dict[str, Any]:
        files = [
            {"path": rel, "bytes": size, "read_only": self.is_protected(rel)}
            for rel, size in self._walk()
        ]
        return {"files": files}

    # --- confinement -----------------------------------------------------------------------
    def is_protected(self, rel: str) -> bool:
        return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in self.protected)

    def _root_fd(self) -> int:
        if self.root is None:
            raise ToolError("the workspace is closed")
        return os.open(self.root, _DIR_FLAGS)

    def _descend(self, dirs: list[str], created: list[str] | None = None) -> int:
        """An open handle on the folder `dirs` under the root, links refused at every step.
        With `created`, missing folders are made and their paths appended to it."""
        fd = self._root_fd()
        try:
            for i, name in enumerate(dirs):
                if created is not None:
                    try:
                        os.mkdir(name, 0o755, dir_fd=fd)
                        created.append("/".join(dirs[: i + 1]))
                    except FileExistsError:
                        pass
                    except OSError as exc:  # a name too long, say: refused, folders undone
                        raise _refusal(exc, "/".join(dirs[: i + 1]), folder=True) from None
                try:
                    nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _refusal(exc, "/".join(dirs[: i + 1]), folder=True) from None
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_file(self, parts: list[str]) -> int:
        folder = self._descend(parts[:-1])
        try:
            try:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
            except OSError as exc:
                raise _refusal(exc, "/".join(parts)) from None
        finally:
            os.close(folder)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ToolError(f"{'/'.join(parts)!r} is not a regular file")
        return fd

    def _write(self, parts: list[str], data: bytes) -> None:
        created: list[str] = []
        try:
            folder = self._descend(parts[:-1], created)
        except ToolError:
            self._remove_folders(created)
            raise
        try:
            _replace_file(folder, parts, data)
        except ToolError:
            self._remove_folders(created)
            raise
        finally:
            os.close(folder)

    def _remove_folders(self, created: list[str]) -> None:
        """Undo the folders a failed write made, so a refused call leaves nothing behind."""
        if self.root is None:
            return
        for rel in reversed(created):
            with _quiet():
                os.rmdir(self.root / rel)

    def _walk(self) -> Iterator[tuple[str, int]]:
        """(relative path, size) of every regular file, sorted; links are not followed."""
        if self.root is None:
            return
        out: list[tuple[str, int]] = []
        stack = [(self.root, "")]
        while stack:
            folder, prefix = stack.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    rel = prefix + entry.name
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((Path(entry.path), rel + "/"))
                    elif entry.is_file(follow_symlinks=False):
                        out.append((rel, entry.stat(follow_symlinks=False).st_size))
        yield from sorted(out)


def _replace_file(folder: int, parts: list[str], data: bytes) -> None:
    """Write `data` to a temporary file in `folder` and rename it over `parts[-1]`."""
    name = parts[-1]
    rel = "/".join(parts)
    try:
        existing = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise _refusal(exc, rel) from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        raise ToolError(f"{rel!r} exists and is not a regular file")
    temp = f".{name}.{os.getpid()}.partial"
    try:
        fd = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder
        )
        try:
            with os.fdopen(fd, "wb", closefd=False) as f:
                f.write(data)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as exc:
        with _quiet():
            os.unlink(temp, dir_fd=folder)
        raise ToolError(f"could not write {rel!r}: {exc.strerror}") from None


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def _normal(path: str, keep_slash: bool = False) -> str:
    rel = "/".join(_parts(path.rstrip("/") if keep_slash else path))
    return rel + "/" if keep_slash and path.endswith("/") else rel


def _parts(path: str) -> list[str]:
    """The components of a workspace path; a ToolError for any path that leaves the root."""
    if not path or not path.strip():
        raise ToolError("path is empty")
    if "\x00" in path:
        raise ToolError("path contains a NUL character")
    if path.startswith("/") or path.startswith("~"):
        raise ToolError(f"path {path!r} is outside the workspace: use a path relative to it")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ToolError(f"path {path!r} is outside the workspace: '..' is not allowed")
    if not parts:
        raise ToolError(f"path {path!r} names the workspace itself, not a file")
    return parts


def _refusal(exc: OSError, rel: str, folder: bool = False) -> ToolError:
    if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and folder):
        kind = "a symbolic link or not a folder" if folder else "a symbolic link"
        return ToolError(f"{rel!r} is {kind}; links are not followed out of the workspace")
    if exc.errno == errno.ENOENT:
        return ToolError(f"no such file in the workspace: {rel!r}")
    if exc.errno == errno.EISDIR:
        return ToolError(f"{rel!r} is a folder, not a file")
    return ToolError(f"cannot open {rel!r}: {exc.strerror}")


def _whole_characters(chunk: bytes, cut: bool) -> bytes:
    """Drop a UTF-8 character split by the byte cap, so the next read starts on it."""
    if not cut:
        return chunk
    for back in range(1, min(4, len(chunk)) + 1):
        byte = chunk[-back]
        if byte < 0x80:
            return chunk
        if byte >= 0xC0:  # a lead byte: is its character complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return chunk if back >= need else chunk[:-back]
    return chunk
