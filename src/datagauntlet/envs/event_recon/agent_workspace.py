"""The episode's workspace: one private directory holding the four input files and whatever
the agent writes. Every path an agent names is resolved here, and only here.

A path is refused, with a one-line reason, when it is absolute, climbs out with `..`, resolves
(through any symlink) to a place outside the directory, or names one of the inputs for writing.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

INPUT_FILES = ("db.sqlite", "webhooks.jsonl", "partner_statement.csv", "INTEGRATION.md")
MAX_PATH_CHARS = 255
MAX_FILES = 200
MAX_WRITE_BYTES = 1_000_000


class PathRefused(ValueError):
    """The path is outside the workspace or may not be used this way."""


class Workspace:
    def __init__(self, files: dict[str, bytes], prefix: str = "event-recon-") -> None:
        self.root = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
        self._inputs = dict(files)
        for name, data in files.items():
            (self.root / name).write_bytes(data)

    # --- paths -----------------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        if not path or not path.strip():
            raise PathRefused("path is empty: name a file in the workspace, e.g. fix.py")
        if len(path) > MAX_PATH_CHARS:
            raise PathRefused(f"path is longer than {MAX_PATH_CHARS} characters")
        if "\x00" in path:
            raise PathRefused("path contains a NUL character")
        if path.startswith(("/", "\\", "~")):
            raise PathRefused(f"{path!r} is absolute: paths are relative to the workspace")
        if ".." in Path(path).parts:
            raise PathRefused(f"{path!r} climbs out of the workspace with '..'")
        target = (self.root / path).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise PathRefused(f"{path!r} resolves outside the workspace")
        return target

    def relative(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix()

    def input_bytes(self, name: str) -> bytes:
        return self._inputs[name]

    def is_input(self, target: Path) -> bool:
        return target.parent == self.root and target.name in self._inputs

    # --- files -------------------------------------------------------------------------------
    def agent_files(self) -> dict[str, bytes]:
        """Every file the agent wrote, by relative path, in sorted order."""
        out: dict[str, bytes] = {}
        for p in sorted(self.root.rglob("*")):
            if p.is_file() and not p.is_symlink() and not self.is_input(p):
                out[self.relative(p)] = p.read_bytes()
        return out

    def file_count(self) -> int:
        return sum(1 for p in self.root.rglob("*") if p.is_file())

    def write(self, path: str, data: bytes) -> Path:
        target = self.resolve(path)
        if self.is_input(target):
            raise PathRefused(
                f"{path!r} is one of the four input files; they cannot be overwritten "
                "(write your own files next to them)"
            )
        if target == self.root or target.is_dir():
            raise PathRefused(f"{path!r} is a directory")
        if len(data) > MAX_WRITE_BYTES:
            raise PathRefused(f"content is {len(data):,} bytes; at most {MAX_WRITE_BYTES:,}")
        if not target.exists() and self.file_count() >= MAX_FILES:
            raise PathRefused(f"the workspace already holds {MAX_FILES} files")
        for parent in target.relative_to(self.root).parents:
            p = self.root / parent
            if p.exists() and not p.is_dir():
                raise PathRefused(f"{self.relative(p)!r} is a file, not a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target

    def copy_to(self, dest: Path, extra: dict[str, bytes] | None = None) -> None:
        """A fresh copy: the pristine inputs plus `extra` (agent files), never live state."""
        dest.mkdir(parents=True, exist_ok=True)
        for name, data in self._inputs.items():
            (dest / name).write_bytes(data)
        for rel, data in (extra if extra is not None else self.agent_files()).items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
