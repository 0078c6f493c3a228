"""Read and write real CSV files as tables, with clear errors for files that are not tables.

Every cell read is a string (an empty field is ""); a missing cell (None) is written as an
empty field. The output is written to a temporary file and renamed, so a failed run never
leaves half a file behind.
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
from pathlib import Path

from datagauntlet.envs.dataclean.engine import Table


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
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, strict=True)
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
    except OSError as exc:
        raise CsvError(unreadable(path, exc, "a CSV file")) from None
    except UnicodeDecodeError as exc:
        raise CsvError(f"{path} is not UTF-8 text (byte offset {exc.start})") from None
    except csv.Error as exc:
        raise CsvError(f"{path} is not a well-formed CSV file: {exc}") from None
    return Table.from_rows(header, rows)


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
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except FileNotFoundError:
        raise CsvError(f"{target}: the directory {directory} does not exist") from None
    except PermissionError:
        raise CsvError(f"{target}: permission denied") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            _write(table, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write(table: Table, fh: object) -> None:
    writer = csv.writer(fh)  # type: ignore[arg-type]
    writer.writerow(table.columns)
    columns = [table.data[c] for c in table.columns]
    writer.writerows(["" if v is None else v for v in row] for row in zip(*columns, strict=True))
