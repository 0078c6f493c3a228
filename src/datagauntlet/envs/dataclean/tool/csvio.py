"""Read and write real CSV files as tables, with clear errors for files that are not tables.

Every cell read is a string (an empty field is ""); a missing cell (None) is written as an
empty field. The output is written to a temporary file in the output's own directory and
renamed, so a failed run never leaves half a file behind; an output that is the input, or an
existing file that is not a regular file (a device, a FIFO), is refused. Lines are read with
a cap, so input without newlines (a huge one-line file, /dev/zero) cannot exhaust memory.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from datagauntlet.core.user_files import FileRefused, read_text
from datagauntlet.envs.dataclean.tool.engine import Table

MAX_LINE_CHARS = 1_000_000
MAX_CSV_BYTES = 256 << 20  # read whole (a regular file only): past this, refused


class CsvError(ValueError):
    """The file cannot be read as a table; the message names the file and the line."""


def unreadable(path: str | Path, exc: OSError, what: str) -> str:
    """Why a file cannot be opened, in words (shared by the CSV and program readers)."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory, not {what}"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    return f"{path}: cannot be read ({exc.strerror or exc})"


def read_csv(path: str | Path) -> Table:
    path = Path(path)
    try:
        text = read_text(path, MAX_CSV_BYTES, "CSV file")
    except FileRefused as exc:
        raise CsvError(str(exc)) from None
    try:
        reader = csv.reader(_capped_lines(io.StringIO(text, newline=""), path), strict=True)
        try:
            header = next(reader)
        except StopIteration:
            raise CsvError(f"{path} is empty: expected a header row") from None
        _check_header(path, header)
        rows = []
        for row in reader:
            if len(row) != len(header):
                if not row:
                    continue  # a blank line
                raise CsvError(
                    f"{path} line {reader.line_num}: {len(row)} fields, "
                    f"but the header has {len(header)}"
                )
            rows.append(row)
    except csv.Error as exc:
        raise CsvError(f"{path} is not a well-formed CSV file: {exc}") from None
    return Table.from_rows(header, rows)


def _capped_lines(fh: TextIO, path: Path) -> Iterator[str]:
    number = 0
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise CsvError(
                f"{path} line {number} is longer than {MAX_LINE_CHARS} characters; "
                "is it a CSV file?"
            )
        yield line


def check_output(output: str | Path, source: str | Path) -> None:
    """Refuse an output that is the input (any path to the same file) or an existing file
    that a rename must not replace (a directory, device, FIFO or socket)."""
    if str(output) == "-":
        return
    target = Path(output)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CsvError(unreadable(target, exc, "an output file")) from None
    if stat.S_ISDIR(info.st_mode):
        raise CsvError(f"{target} is a directory; -o takes a file name")
    if not stat.S_ISREG(info.st_mode):
        raise CsvError(f"{target} exists and is not a regular file; refusing to replace it")
    try:
        same = os.path.samefile(target, source)
    except OSError:
        same = False
    if same:
        raise CsvError(f"{target} is the input file; write the cleaned table elsewhere")


def _check_header(path: Path, header: list[str]) -> None:
    if not header or all(not name.strip() for name in header):
        raise CsvError(f"{path}: the first line must be a header of column names")
    seen: set[str] = set()
    for i, name in enumerate(header):
        if not name.strip():
            raise CsvError(f"{path}: header column {i + 1} has no name")
        if name in seen:
            raise CsvError(f"{path}: the header names column {name!r} twice")
        seen.add(name)


def write_csv(table: Table, path: str | Path) -> None:
    """Write `table`; "-" writes to standard output."""
    if str(path) == "-":
        _write(table, sys.stdout)
        return
    target = Path(path)
    existing = _regular_mode(target)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except FileNotFoundError:
        raise CsvError(f"{target}: the directory {directory} does not exist") from None
    except PermissionError:
        raise CsvError(f"{target}: permission denied") from None
    try:
        os.fchmod(fd, existing if existing is not None else 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            _write(table, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _regular_mode(target: Path) -> int | None:
    """The permission bits of an existing regular file (kept on replace); CsvError for an
    existing file of another kind, which a rename would destroy."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CsvError(unreadable(target, exc, "an output file")) from None
    if stat.S_ISDIR(info.st_mode):
        raise CsvError(f"{target} is a directory; -o takes a file name")
    if not stat.S_ISREG(info.st_mode):
        raise CsvError(f"{target} exists and is not a regular file; refusing to replace it")
    return stat.S_IMODE(info.st_mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write(table: Table, fh: object) -> None:
    writer = csv.writer(fh)  # type: ignore[arg-type]
    writer.writerow(table.columns)
    columns = [table.data[c] for c in table.columns]
    writer.writerows(["" if v is None else v for v in row] for row in zip(*columns, strict=True))
