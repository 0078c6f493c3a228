"""`datagauntlet dataclean apply`: the engine on real CSV files, with clear errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from datagauntlet.cli.main import main
from datagauntlet.envs.dataclean.tool.program import MAX_PROGRAM_BYTES

CSV_TEXT = (
    "record_id,name,email,amount,quantity,notes\n"
    'r1, Zoë Müller ,ZOE@X.COM,"$1,200.5",3.0,  keep me  \n'
    "r2,Bo,N/A,(3.00),0,\n"
    'r1, Zoë Müller ,ZOE@X.COM,"$1,200.5",3.0,  keep me  \n'
)
PROGRAM = [
    {"op": "strip", "columns": ["name", "email"]},
    {"op": "replace_missing", "columns": ["email"], "tokens": ["N/A"]},
    {"op": "lower", "columns": ["email"]},
    {"op": "decimal2", "columns": ["amount"]},
    {"op": "integer", "columns": ["quantity"]},
    {"op": "dedupe", "keys": ["record_id"]},
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    data = tmp_path / "in.csv"
    data.write_text(CSV_TEXT, encoding="utf-8")
    program = tmp_path / "program.json"
    program.write_text(json.dumps({"operations": PROGRAM}), encoding="utf-8")
    return program, data, tmp_path / "out.csv"


def read(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_apply_cleans_the_file_and_reports_cells_per_operation(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    program, data, out = files
    assert main(["dataclean", "apply", str(program), str(data), "-o", str(out)]) == 0
    assert read(out) == [
        ["record_id", "name", "email", "amount", "quantity", "notes"],
        ["r1", "Zoë Müller", "zoe@x.com", "1200.50", "3", "  keep me  "],
        ["r2", "Bo", "", "-3.00", "0", ""],
    ]
    report = capsys.readouterr().out.splitlines()
    assert report[:6] == [
        "operations[0] strip (name, email): 2 cells",
        "operations[1] replace_missing (email): 1 cells",
        "operations[2] lower (email): 2 cells",
        "operations[3] decimal2 (amount): 3 cells",
        "operations[4] integer (quantity): 2 cells",
        "operations[5] dedupe (record_id): 0 cells, 1 rows removed",
    ]
    assert report[6].startswith("10 cells changed; 3 rows in, 2 rows out")


def test_json_report_and_stdout_output(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    program, data, _ = files
    assert main(["dataclean", "apply", str(program), str(data), "-o", "-", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1] == "r1,Zoë Müller,zoe@x.com,1200.50,3,  keep me  "
    report = json.loads(captured.err)
    assert report["rows_in"] == 3 and report["rows_out"] == 2 and report["cells_changed"] == 10
    assert [o["cells_changed"] for o in report["operations"]] == [2, 1, 2, 3, 2, 0]


def run_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["dataclean", "apply", *args]) == 2
    return capsys.readouterr().err


def test_an_invalid_program_is_refused_and_nothing_is_written(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    program, data, out = files
    program.write_text(json.dumps([*PROGRAM, {"op": "lower", "columns": ["notes"]}]))
    err = run_error([str(program), str(data), "-o", str(out)], capsys)
    assert "operations[6] (lower): columns[0]: column 'notes' is protected" in err
    assert not out.exists()
    assert list(out.parent.glob("*.tmp")) == []


@pytest.mark.parametrize(
    ("csv_bytes", "fragment"),
    [
        (b"", "is empty: expected a header row"),
        (b"a,b\n1,2,3\n", "line 2: 3 fields, but the header has 2"),
        (b"a,a\n1,2\n", "names column 'a' twice"),
        (b"a,\n1,2\n", "header column 2 has no name"),
        (b"a,b\n\xff\xfe,1\n", "is not UTF-8 text"),
        (b'a,b\n"unclosed,1\n', "not a well-formed CSV file"),
        (b"a,b\n" + b"x" * 200_000 + b",1\n", "not a well-formed CSV file"),
    ],
)
def test_bad_csv_files_get_clear_errors(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    csv_bytes: bytes,
    fragment: str,
) -> None:
    program, data, out = files
    program.write_text("[]")
    data.write_bytes(csv_bytes)
    assert fragment in run_error([str(program), str(data), "-o", str(out)], capsys)
    assert not out.exists()


@pytest.mark.parametrize(
    ("program_bytes", "fragment"),
    [
        (b"not json", "not valid JSON"),
        (b'[{"op": "strip", "op": "eval"}]', "duplicate key 'op'"),
        (b"\xff[]", "is not UTF-8 text"),
        (b"[" + b" " * MAX_PROGRAM_BYTES + b"]", "larger than 1,000,000 bytes"),
        (b'{"operations": [], "exec": 1}', "unexpected 'exec'"),
    ],
)
def test_bad_program_files_get_clear_errors(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    program_bytes: bytes,
    fragment: str,
) -> None:
    program, data, out = files
    program.write_bytes(program_bytes)
    assert fragment in run_error([str(program), str(data), "-o", str(out)], capsys)


def test_missing_paths_and_directories(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program, data, _ = files
    assert (
        "no such file"
        in run_error([str(tmp_path / "nope.json"), str(data), "-o", "x"], capsys).lower()
    )
    assert (
        "no such file"
        in run_error([str(program), str(tmp_path / "nope.csv"), "-o", "x"], capsys).lower()
    )
    assert "is a directory" in run_error([str(program), str(tmp_path), "-o", "x"], capsys).lower()
    missing_dir = tmp_path / "no" / "out.csv"
    assert "does not exist" in run_error([str(program), str(data), "-o", str(missing_dir)], capsys)


def test_key_and_protect_options(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    program, data, out = files
    program.write_text(json.dumps([{"op": "dedupe", "keys": ["email"]}]))
    assert "not a supported dedupe key" in run_error([str(program), str(data), "-o", "o"], capsys)
    args = [str(program), str(data), "-o", str(out), "--key", "email"]
    assert main(["dataclean", "apply", *args]) == 0
    assert len(read(out)) == 3
    program.write_text(json.dumps([{"op": "strip", "columns": ["name"]}]))
    err = run_error([str(program), str(data), "-o", str(out), "--protect", "name"], capsys)
    assert "column 'name' is protected" in err
    assert "not a column" in run_error([str(program), str(data), "-o", "o", "--key", "zz"], capsys)


def test_dataclean_without_a_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataclean"]) == 2
    assert "apply" in capsys.readouterr().err
