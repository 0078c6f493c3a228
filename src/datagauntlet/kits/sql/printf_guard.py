"""printf() and format() with every width and precision bounded before SQLite builds the text.

SQLite's printf builds `%.*c` by appending the character once per unit of precision, and keeps
looping after its length limit has already refused the text: `printf('%.*c', 1e8, 'x')` costs
0.6 s and 2**31 - 1 costs 14 s, all in one VM step, out of the progress handler's reach. The
guard stands in for both functions on the sandboxed connection: it reads the format as SQLite
does (flags, width or `*`, `.` precision or `*`, `l`/`ll`, the conversion), refuses any width
or precision over the value-length limit, and otherwise has SQLite's own printf build the text
on a private connection, so what an honest query gets back is unchanged. A result past the
length limit, which SQLite answers with NULL, becomes an error too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

_FLAGS = frozenset("-+ #!0,")
# Conversions SQLite's printf knows; T and S are internal-only (it stops there), as it does
# at any other character. Every known one takes an argument but %n and %%.
_CONVERSIONS = frozenset("dsgzqQwcouxXfeEGinpr%")
_NO_ARGUMENT = frozenset("n%")
NAMES = ("printf", "format")


class WidthRefused(Exception):
    """A printf width or precision over the bound; the message says which."""


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class PrintfGuard:
    """The stand-in for printf/format on one connection; `limit` is None while inactive."""

    def __init__(self) -> None:
        self.inner = sqlite3.connect(":memory:", check_same_thread=False)
        self._unbounded = self.inner.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
        self.limit: int | None = None
        self.refused: str | None = None
        self._sql: dict[int, str] = {}

    def install(self, conn: sqlite3.Connection) -> None:
        for name in NAMES:
            conn.create_function(name, -1, self, deterministic=True)

    def activate(self, limit: int | None) -> None:
        """Bound widths and results by `limit` (None: pass through, for the owner's SQL)."""
        self.limit = limit
        self.refused = None
        bound = self._unbounded if limit is None else limit
        self.inner.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, bound)

    def close(self) -> None:
        self.inner.close()

    def _as_int(self, value: Any) -> int:
        """sqlite3_value_int64 of an argument, as printf's `*` reads it."""
        if isinstance(value, int):
            return value
        if value is None:
            return 0
        (text,) = self.inner.execute("SELECT printf('%d', ?)", (value,)).fetchone()
        return int(text)

    def widths(self, fmt: str, args: tuple[Any, ...]) -> Iterator[int]:
        """Every width and precision `fmt` asks for, in SQLite's reading, as magnitudes."""
        i, n, used = 0, len(fmt), 0
        while (i := fmt.find("%", i)) >= 0 and i + 1 < n:
            i += 1
            while i < n and fmt[i] in _FLAGS:
                i += 1
            for lead in ("", "."):
                if lead and (i >= n or fmt[i] != "."):
                    break
                i += len(lead)
                if i < n and fmt[i] == "*":
                    star = self._as_int(args[used]) if used < len(args) else 0
                    used += 1
                    i += 1
                    yield abs(_int32(star))
                    continue
                digits = 0
                while i < n and "0" <= fmt[i] <= "9":
                    digits = (digits * 10 + ord(fmt[i]) - 48) & 0xFFFFFFFF
                    i += 1
                yield digits & 0x7FFFFFFF
            while i < n and fmt[i] == "l":
                i += 1
            if i >= n or fmt[i] not in _CONVERSIONS:
                return  # SQLite stops building at an unknown conversion
            used += fmt[i] not in _NO_ARGUMENT
            i += 1

    def __call__(self, *args: Any) -> Any:
        if not args:
            return None
        fmt = args[0]
        if self.limit is not None and isinstance(fmt, str | bytes):
            text = fmt if isinstance(fmt, str) else fmt.decode("utf-8", "replace")
            for width in self.widths(text, args[1:]):
                if width > self.limit:
                    self.refused = (
                        f"a printf width or precision of {width:,} is over the "
                        f"{self.limit:,}-byte value limit"
                    )
                    raise WidthRefused(self.refused)
        sql = self._sql.get(len(args))
        if sql is None:
            sql = self._sql[len(args)] = f"SELECT printf({', '.join('?' * len(args))})"
        (out,) = self.inner.execute(sql, args).fetchone()
        if out is None and fmt is not None and self.limit is not None:
            self.refused = f"printf's text would exceed {self.limit:,} bytes"
            raise WidthRefused(self.refused)
        return out
