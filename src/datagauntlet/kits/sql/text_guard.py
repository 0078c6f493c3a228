"""instr(X, Y), replace(X, Y, Z) and trim/ltrim/rtrim(X, Y) in time linear in their input.

SQLite compares the needle (or every character of the trim set) at each position of the
haystack: one call costs |X| x |Y|, all in one VM step, out of the progress handler's reach.
Under event-recon's 1 MB value limit, `trim` of 900,000 characters by a 9,000-character set
took 41 s of CPU and `instr` of a 450,000-character needle 6 s, against a 10 s budget. The
guard stands in for these forms on the sandboxed connection and computes them in Python, whose
substring search is linear and whose trim reads a set. It follows SQLite's rules to the letter
(NULLs, an empty pattern, a trim set cut at its first NUL, blobs searched as bytes), and for any
argument that is not text or a pair of blobs it has SQLite convert it to text first, on a
private connection, so what an honest query gets back is unchanged (tests compare the two).
"""

from __future__ import annotations

import sqlite3
from typing import Any

TRIMS = {"trim": (True, True), "ltrim": (True, False), "rtrim": (False, True)}


class TextRefused(Exception):
    """A result over the value-length limit; the message says so."""


class TextGuard:
    """The stand-in for the two- and three-argument text searches on one connection."""

    def __init__(self) -> None:
        self.inner = sqlite3.connect(":memory:", check_same_thread=False)
        self.limit: int | None = None
        self.refused: str | None = None

    def install(self, conn: sqlite3.Connection) -> None:
        conn.create_function("instr", 2, self.instr, deterministic=True)
        conn.create_function("replace", 3, self.replace, deterministic=True)
        for name, (left, right) in TRIMS.items():
            conn.create_function(name, 2, _trimmer(self, left, right), deterministic=True)

    def activate(self, limit: int | None) -> None:
        """Bound results by `limit` bytes (None: no bound, for the owner's SQL)."""
        self.limit = limit
        self.refused = None

    def close(self) -> None:
        self.inner.close()

    def text(self, value: Any) -> str:
        """sqlite3_value_text of a non-NULL argument, as SQLite itself renders it."""
        if isinstance(value, str):
            return value
        (out,) = self.inner.execute("SELECT CAST(? AS TEXT)", (value,)).fetchone()
        return out

    def instr(self, haystack: Any, needle: Any) -> int | None:
        if haystack is None or needle is None:
            return None
        if isinstance(haystack, bytes) and isinstance(needle, bytes):
            return haystack.find(needle) + 1  # two blobs: a byte offset
        return self.text(haystack).find(self.text(needle)) + 1

    def replace(self, value: Any, pattern: Any, replacement: Any) -> Any:
        if value is None or pattern is None:
            return None
        text, find = self.text(value), self.text(pattern)
        # SQLite reads the pattern as C text, so one that starts with NUL is empty; it then
        # answers X as it is, save a blob, which its reading as text has made text
        if not find or find[0] == "\x00":
            return text if isinstance(value, bytes) else value
        if replacement is None:
            return None
        put = self.text(replacement)
        if self.limit is not None:
            grown = len(text.encode()) + text.count(find) * (len(put.encode()) - len(find.encode()))
            if grown > self.limit:
                self.refused = f"a value would exceed {self.limit:,} bytes"
                raise TextRefused(self.refused)
        return text.replace(find, put)


def _trimmer(guard: TextGuard, left: bool, right: bool) -> Any:
    def trim(value: Any, chars: Any) -> str | None:
        if value is None or chars is None:
            return None
        text = guard.text(value)
        drop = set(guard.text(chars).split("\x00", 1)[0])  # SQLite stops the set at a NUL
        start, end = 0, len(text)
        while left and start < end and text[start] in drop:
            start += 1
        while right and end > start and text[end - 1] in drop:
            end -= 1
        return text[start:end]

    return trim
