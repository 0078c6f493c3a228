"""--secret-file goes through the bounded reader: a FIFO, /dev/zero, a directory or a huge file
is one line and exit 2 within a bounded time, never a hang or an unbounded read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "datagauntlet.cli.main"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "huge", "link-to-fifo"])
def test_a_hostile_secret_file_is_one_line(kind: str, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge"
    with huge.open("wb") as fh:
        fh.truncate(1 << 30)  # sparse
    (tmp_path / "link").symlink_to(fifo)
    path = {"fifo": fifo, "dev-zero": Path("/dev/zero"), "directory": tmp_path,
            "huge": huge, "link-to-fifo": tmp_path / "link"}[kind]  # fmt: skip
    argv = [*CLI, "play", "dataclean", "--split", "private", "--secret-file", str(path)]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=os.environ
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "secret file" in proc.stderr
