"""The one way a command writes a file a user names: never over an existing file unless forced,
never over one of the command's own inputs (not even forced), never over anything but a
regular file, and atomically (a temporary file in the same directory, then a rename), so a
failed write leaves the old file, or nothing, behind.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


class OutputRefused(ValueError):
    """An output path this command will not write; the message says why and what to do."""


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def input_files(paths: Iterable[str | os.PathLike[str]], inside: Iterable[str] = ()) -> list[Path]:
    """The files a command reads: each path given, and for a directory the files named in
    `inside` that it reads there (a run's results.jsonl, summary.json)."""
    out = []
    names = tuple(inside)
    for p in map(Path, paths):
        out.append(p)
        if p.is_dir():
            out.extend(p / name for name in names)
    return out


def check_output(
    path: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
    flag: str = "--force",
) -> Path:
    """Refuse before any work is done: an output that is one of `inputs` (any path to the same
    file), an existing entry that is not a regular file, or (without `force`) any existing file."""
    target = Path(path)
    if not str(path):
        raise OutputRefused("the output path is empty")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise OutputRefused(f"cannot write {target}: {exc.strerror}") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise OutputRefused(f"{target} is a directory, not a regular file; give a file name")
        if not stat.S_ISREG(info.st_mode):
            raise OutputRefused(
                f"{target} exists and is not a regular file; refusing to replace it"
            )
    mine = _identity(target)
    for source in inputs:
        if mine is not None and _identity(source) == mine:
            raise OutputRefused(f"{target} is one of this command's inputs; write elsewhere")
    if info is not None and not force:
        raise OutputRefused(f"{target} already exists; pass {flag} to replace it")
    return target


def write_output(
    path: str | os.PathLike[str],
    data: bytes | str,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
    flag: str = "--force",
) -> int:
    """`check_output`, then write `data` atomically; returns the bytes written."""
    target = check_output(path, inputs, force, flag)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(raw)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
