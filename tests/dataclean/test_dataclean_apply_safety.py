"""`dataclean apply` never destroys its input or a special file, and never runs unbounded."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from datagauntlet.cli.main import main
from datagauntlet.envs.dataclean.tool.csvio import MAX_LINE_CHARS

CSV_TEXT = "record_id,name\nr1, Bo \nr1, Bo \nr2,Al\n"
PROGRAM = [{"op": "strip", "columns": ["name"]}, {"op": "dedupe", "keys": ["record_id"]}]
CLI = [sys.executable, "-m", "datagauntlet.cli.main", "dataclean", "apply"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "in.csv"
    data.write_text(CSV_TEXT)
    program = tmp_path / "p.json"
    program.write_text(json.dumps(PROGRAM))
    return program, data


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["dataclean", "apply", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_the_input_is_never_the_output(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program, data = files
    link = tmp_path / "link.csv"
    link.symlink_to(data)
    hard = tmp_path / "hard.csv"
    os.link(data, hard)
    for out in (data, tmp_path / "." / "in.csv", link, hard):
        assert "is the input" in _error([str(program), str(data), "-o", str(out)], capsys)
    assert data.read_text() == CSV_TEXT  # dedupe would have dropped a row


def test_special_files_and_directories_are_refused(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Special files made here, never a real device: a regression would replace a device node
    # of the shared machine (as root, a rename over /dev/null succeeds).
    program, data = files
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        for out, says in ((fifo, "not a regular file"), (sock_path, "not a regular file"),
                          (tmp_path, "is a directory")):  # fmt: skip
            assert says in _error([str(program), str(data), "-o", str(out)], capsys)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISSOCK(os.stat(sock_path).st_mode)
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_an_existing_output_keeps_its_permissions(files: tuple[Path, Path], tmp_path: Path) -> None:
    program, data = files
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    out.chmod(0o640)
    assert main(["dataclean", "apply", str(program), str(data), "-o", str(out)]) == 0
    assert out.read_text().splitlines() == ["record_id,name", "r1,Bo", "r2,Al"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.timeout(60)
def test_input_without_newlines_is_refused_at_the_line_cap(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program, _ = files
    long = tmp_path / "long.csv"
    long.write_text("record_id,name\n" + "x" * (MAX_LINE_CHARS + 10))
    assert f"longer than {MAX_LINE_CHARS}" in _error(
        [str(program), str(long), "-o", "o.csv"], capsys
    )
    # an endless stream without a newline stops at the cap too
    err = _error([str(program), "/dev/zero", "-o", str(tmp_path / "o.csv")], capsys)
    assert "/dev/zero" in err


def test_a_closed_pipe_on_stdout_is_quiet(files: tuple[Path, Path]) -> None:
    program, data = files
    data.write_text("record_id,name\n" + "".join(f"r{i},n{i}\n" for i in range(200_000)))
    proc = subprocess.Popen([*CLI, str(program), str(data), "-o", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader went away (`| head`)
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == "", err  # no traceback, no error line: the reader chose to stop
