"""The one way a file a user names is read: a regular file only, of bounded size, strict JSON.

Every command that reads a path from its arguments, its config or the environment goes through
`read_bytes`, so none of them can be made to block on a FIFO (the open is non-blocking and the
file's kind is checked on the open descriptor, after any symlink was followed), read a device
like /dev/zero without end, or take a directory for a file. `parse_json` bounds the nesting
before the C parser recurses, and refuses what `json.loads` lets through: NaN, Infinity, numbers
that overflow to infinity and duplicate keys (the last one would silently win).

Every refusal is a `FileRefused` (a ValueError) whose message names the file and the reason, on
one line, so the CLI answers it like any other bad input.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from datagauntlet.core.call_text import no_constant, no_duplicate_keys

MAX_DEPTH = 64  # nesting deeper than any run, case or config file this package writes
_CHUNK = 1 << 20
# A JSON string (escapes included), written so the regex engine never backtracks.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Outside strings valid JSON is ASCII: deleting every ASCII character but brackets leaves them.
_KEEP_BRACKETS = {c: None for c in range(128) if chr(c) not in "[]{}"}


class FileRefused(ValueError):
    """A user-named file that cannot be read as asked; the message says which and why."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The whole content of a regular file of at most `limit` bytes."""
    name = os.fspath(path)
    if not name:
        raise FileRefused(f"the {what} path is empty")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise FileRefused(f"cannot read the {what} {name}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"the {what} {name} is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise FileRefused(_too_large(what, name, limit))
        parts, size = [], 0
        while size <= limit:  # the size may grow after fstat: read at most limit + 1
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
        if size > limit:
            raise FileRefused(_too_large(what, name, limit))
        return b"".join(parts)
    except OSError as exc:
        raise FileRefused(f"cannot read the {what} {name}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _too_large(what: str, name: str, limit: int) -> str:
    return f"the {what} {name} is larger than {limit:,} bytes"


def read_text(path: str | os.PathLike[str], limit: int, what: str = "file") -> str:
    """`read_bytes` decoded as strict UTF-8 (a leading BOM dropped)."""
    data = read_bytes(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRefused(
            f"the {what} {os.fspath(path)} is not UTF-8 text (byte offset {exc.start})"
        ) from None


def nesting_depth_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest deeper than `limit`: innermost pairs are removed
    one level per round (each round a C-speed pass), so the cost is bounded by `limit` passes."""
    brackets = _STRING.sub("", text).translate(_KEEP_BRACKETS)
    if re.search("[\\[{]{" + str(limit + 1) + "}", brackets):  # deep whether or not it closes
        return True
    for _ in range(limit):
        if not brackets:
            return False
        shorter = brackets.replace("[]", "").replace("{}", "")
        if len(shorter) == len(brackets):
            return False  # unbalanced: the parser reports it
        brackets = shorter
    return bool(brackets) and len(brackets.replace("[]", "").replace("{}", "")) < len(brackets)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} overflows a float")
    return value


def parse_json(text: str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON; any refusal is a one-line `FileRefused` naming `where`."""
    if nesting_depth_exceeds(text, max_depth):
        raise FileRefused(f"{where}: JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(
            text,
            object_pairs_hook=no_duplicate_keys,
            parse_constant=no_constant,
            parse_float=_finite,
        )
    except RecursionError:  # unreachable after the depth check; kept as a backstop
        raise FileRefused(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:
        raise FileRefused(f"{where}: not valid JSON: {' '.join(str(exc).split())}") from None


def json_lines(text: str, where: str, skip_torn: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line of JSONL text. With `skip_torn`, a last
    line without its newline that does not parse (an interrupted write) is dropped."""
    lines = text.split("\n")
    torn = len(lines) - 1 if lines and lines[-1].strip() else -1
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            yield n + 1, parse_json(line, f"{where}:{n + 1}")
        except FileRefused:
            if skip_torn and n == torn:
                return
            raise


def load_json_file(path: str | Path, limit: int, what: str = "file") -> Any:
    return parse_json(read_text(path, limit, what), os.fspath(path))
