"""The workspace kit: files confined to one directory, capped, inputs write-protected."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.workspace import WorkspaceToolset

INPUTS = {"input/ledger.csv": "id,amount\n1,10\n", "README.txt": "read me"}


@pytest.fixture
def ws(tmp_path: Path) -> WorkspaceToolset:
    w = WorkspaceToolset(tmp_path / "ws", files=INPUTS, max_read_bytes=8, max_write_bytes=64)
    w.open()
    return w


def test_read_pages_through_a_file_within_the_byte_cap(ws: WorkspaceToolset) -> None:
    first = ws.read_file("input/ledger.csv")
    assert first == {
        "path": "input/ledger.csv",
        "content": "id,amoun",
        "offset": 0,
        "bytes": 8,
        "size": 15,
        "next_offset": 8,
    }
    rest = ws.read_file("./input//ledger.csv", offset=8)
    assert first["content"] + rest["content"] == INPUTS["input/ledger.csv"]
    assert rest["next_offset"] is None
    with pytest.raises(ToolError, match="past the end"):
        ws.read_file("README.txt", offset=99)


def test_a_cut_never_splits_a_character(ws: WorkspaceToolset) -> None:
    ws.write_file("notes/u.txt", "abcdefgé€x")  # é and € are 2 and 3 bytes
    text, offset = "", 0
    while offset is not None:
        page = ws.read_file("notes/u.txt", offset=offset)
        assert page["bytes"] <= 8 and "\ufffd" not in page["content"]
        text += page["content"]
        offset = page["next_offset"]
    assert text == "abcdefgé€x"


def test_writes_create_files_and_folders_and_report_bytes(ws: WorkspaceToolset) -> None:
    assert ws.write_file("out/fix.sql", "UPDATE x;") == {
        "status": "written",
        "path": "out/fix.sql",
        "bytes": 9,
    }
    assert ws.read_bytes("out/fix.sql") == b"UPDATE x;"
    ws.write_file("out/fix.sql", "v2")  # replaced whole
    assert ws.read_bytes("out/fix.sql") == b"v2"
    listing = ws.list_files()["files"]
    assert [f["path"] for f in listing] == ["README.txt", "input/ledger.csv", "out/fix.sql"]
    assert [f["read_only"] for f in listing] == [True, True, False]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "outside the workspace"),
        ("../outside.txt", "outside the workspace"),
        ("a/../../outside.txt", "outside the workspace"),
        ("~/x", "outside the workspace"),
        ("", "path is empty"),
        ("a\x00b", "NUL"),
        (".", "names the workspace itself"),
        ("input", "not a regular file"),
        ("missing.txt", "no such file"),
    ],
)
def test_paths_that_leave_the_workspace_are_refused(
    ws: WorkspaceToolset, path: str, message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        ws.read_file(path)


def test_symlinks_are_never_followed(ws: WorkspaceToolset, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the truth")
    root = ws.root
    assert root is not None
    os.symlink(secret, root / "link.txt")
    os.symlink(tmp_path, root / "linkdir")
    os.symlink(root / "README.txt", root / "inner.txt")  # even one that stays inside
    for path in ("link.txt", "linkdir/secret.txt", "inner.txt"):
        with pytest.raises(ToolError, match="symbolic link"):
            ws.read_file(path)
    before = ws.state_digest()
    for path in ("link.txt", "linkdir/new.txt"):
        with pytest.raises(ToolError, match=r"symbolic link|not a regular file"):
            ws.write_file(path, "overwrite")
    assert secret.read_text() == "the truth" and not (tmp_path / "new.txt").exists()
    assert ws.state_digest() == before
    assert [f["path"] for f in ws.list_files()["files"]] == ["README.txt", "input/ledger.csv"]


def test_input_files_and_caps_refuse_writes_without_changing_anything(
    ws: WorkspaceToolset,
) -> None:
    ws.write_file("a.txt", "x" * 10)
    before = ws.state_digest()
    refused = [
        ("input/ledger.csv", "1,0", "read-only"),
        ("README.txt", "", "read-only"),
        ("big.txt", "x" * 65, "at most 64"),
        ("big.txt", "é" * 33, "at most 64"),  # bytes, not characters
        ("bad.txt", "\udcff", "not valid UTF-8"),
        ("input", "x", "not a regular file"),
        ("input/ledger.csv/x", "x", "not a folder"),
        ("new/deep/../../../x", "x", "outside"),
    ]
    for path, content, message in refused:
        with pytest.raises(ToolError, match=message):
            ws.write_file(path, content)
    assert ws.state_digest() == before
    assert ws.read_bytes("input/ledger.csv") == INPUTS["input/ledger.csv"].encode()
    assert not (Path(str(ws.root)) / "new").exists()


def test_total_bytes_and_file_count_are_capped(tmp_path: Path) -> None:
    ws = WorkspaceToolset(tmp_path, max_write_bytes=50, max_total_bytes=100, max_files=3)
    ws.open()
    ws.write_file("a", "x" * 50)
    ws.write_file("b", "x" * 40)
    with pytest.raises(ToolError, match="would hold 140 bytes"):
        ws.write_file("c", "x" * 50)
    ws.write_file("a", "x" * 10)  # replacing counts the new size only
    ws.write_file("c", "x" * 50)
    with pytest.raises(ToolError, match="already holds 3 files"):
        ws.write_file("d", "")


def test_a_temporary_workspace_is_removed_at_close_and_a_given_one_kept(tmp_path: Path) -> None:
    temp = WorkspaceToolset(files={"in.txt": b"\x00\x01"})
    temp.open()
    root = temp.root
    assert root is not None and (root / "in.txt").read_bytes() == b"\x00\x01"
    temp.close()
    temp.close()
    assert not root.exists()
    with pytest.raises(ToolError, match="closed"):
        temp.read_file("in.txt")
    given = WorkspaceToolset(tmp_path / "mine")
    given.open()
    given.write_file("keep.txt", "k")
    given.close()
    assert (tmp_path / "mine" / "keep.txt").read_text() == "k"


def test_tools_declared_follow_the_options(tmp_path: Path) -> None:
    full = WorkspaceToolset(tmp_path, max_read_bytes=1000, max_write_bytes=2000)
    names = {b.tool.name: b.tool for b in full.tools()}
    assert list(names) == ["read_file", "write_file", "list_files"]
    assert names["write_file"].mutates and not names["read_file"].mutates
    assert "1,000 bytes" in names["read_file"].description
    assert names["write_file"].parameters["properties"]["content"]["maxLength"] == 2000
    read_only = WorkspaceToolset(tmp_path, writable=False, listing=False)
    assert [b.tool.name for b in read_only.tools()] == ["read_file"]
