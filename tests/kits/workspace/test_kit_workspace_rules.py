"""The workspace kit's rules one by one: pages end on whole characters, each refusal says
what it refused, a refused write leaves nothing behind, and the state digest sees every file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.workspace import WorkspaceToolset

# One-, two-, three- and four-byte characters, in every order, with the edge lead bytes (E0, F0)
# and continuation bytes of 0x80 (U+0100, U+0800, U+1000).
TEXT = (
    "a\u00e9\u20ac\U0001f600b\U0001f600\u20ac\u00e9c\u00e9\U0001f600\u20acd"
    "\u0100x\u0800y\u1000\u0100\u0800\U00010000z\u1000"
)


def _ws(tmp_path: Path, cap: int, files: dict[str, str | bytes]) -> WorkspaceToolset:
    ws = WorkspaceToolset(tmp_path / f"ws{cap}", files=files, protected=(), max_read_bytes=cap)
    ws.open()
    return ws


@pytest.mark.parametrize("cap", range(4, 10))
def test_every_page_is_the_longest_run_of_whole_characters_under_the_cap(
    tmp_path: Path, cap: int
) -> None:
    ws = _ws(tmp_path, cap, {"t.txt": TEXT})
    data = TEXT.encode()
    offset, pages = 0, []
    while offset is not None:
        page = ws.read_file("t.txt", offset=offset)
        chunk = data[offset : offset + page["bytes"]]
        assert chunk.decode("utf-8") == page["content"]  # strict: no character was split
        assert 0 < page["bytes"] <= cap
        rest = data[offset + page["bytes"] :].decode()
        if rest:  # the next character would not have fitted
            assert page["bytes"] + len(rest[0].encode()) > cap
            assert page["next_offset"] == offset + page["bytes"]
        else:
            assert page["next_offset"] is None
        pages.append(page["content"])
        offset = page["next_offset"]
    assert "".join(pages) == TEXT


def test_the_last_page_is_returned_whole_even_if_its_bytes_are_not_text(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 8, {"bin": b"ab\xf0\x9f"})  # a four-byte character cut by the file's end
    page = ws.read_file("bin")
    assert page["bytes"] == 4 and page["next_offset"] is None
    assert page["content"] == "ab\ufffd"


def test_a_run_of_continuation_bytes_is_not_mistaken_for_a_split_character(
    tmp_path: Path,
) -> None:
    data = b"a" + b"\x80" * 8 + b"tail"
    ws = _ws(tmp_path, 6, {"junk": data})
    page = ws.read_file("junk")
    assert page["bytes"] == 6  # nothing to step back to: the page keeps the cap


def test_refusals_say_what_was_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 64, {"input/a.csv": "x", "b.txt": "y"})
    root = Path(ws.root or "")
    (root / "link.txt").symlink_to(root / "b.txt")
    (root / "linkdir").symlink_to(root / "input")
    cases = {
        "link.txt": "'link.txt' is a symbolic link; links are not followed out of the workspace",
        "linkdir/a.csv": "'linkdir' is a symbolic link or not a folder; links are not followed",
        "b.txt/inner": "'b.txt' is a symbolic link or not a folder; links are not followed",
        "missing/a.csv": "no such file in the workspace: 'missing'",
        "input/missing.csv": "no such file in the workspace: 'input/missing.csv'",
        "q" * 300: f"cannot open {'q' * 300!r}: File name too long",
        "input/" + "q" * 300 + "/more/a.csv": f"cannot open {'input/' + 'q' * 300!r}: File name",
    }
    for path, message in cases.items():
        with pytest.raises(ToolError) as caught:
            ws.read_file(path)
        assert str(caught.value).startswith(message), (path, str(caught.value))


def test_a_write_refused_for_a_name_too_long_leaves_no_folder_behind(tmp_path: Path) -> None:
    # A component over the file system's 255 bytes passes the 400-character path bound.
    ws = _ws(tmp_path, 64, {"a.txt": "x"})
    before = ws.state_digest()
    refused = {  # the part of the path refused, by name
        "new/" + "x" * 300 + "/f.txt": "new/" + "x" * 300,
        "new/deeper/" + "y" * 300: "new/deeper/" + "y" * 300,
        "new/" + "w" * 300 + "/more/f.txt": "new/" + "w" * 300,  # named up to the part refused
        "z" * 300: "z" * 300,
    }
    for path, named in refused.items():
        with pytest.raises(ToolError) as caught:
            ws.write_file(path, "data")
        assert str(caught.value) == f"cannot open {named!r}: File name too long", path
        assert sorted(os.listdir(ws.root or "")) == ["a.txt"], path
    assert ws.state_digest() == before


def test_a_write_refused_after_making_folders_removes_only_those(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 64, {"keep/a.txt": "x"})
    root = Path(ws.root or "")
    (root / "keep" / "sub").mkdir()
    (root / "keep" / "sub" / "f").mkdir()  # a folder where the file would go
    ws.write_file("keep/sub/other.txt", "kept")
    with pytest.raises(ToolError, match="exists and is not a regular file"):
        ws.write_file("keep/sub/f", "no")
    with pytest.raises(ToolError, match="File name too long"):
        ws.write_file("keep/n1/n2/" + "w" * 300, "no")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "keep",
        "keep/a.txt",
        "keep/sub",
        "keep/sub/f",
        "keep/sub/other.txt",
    ]


def test_the_state_digest_covers_names_contents_and_undecodable_names(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 64, {"a.txt": "x"})
    root = Path(ws.root or "")
    first = ws.state_digest()
    assert first == ws.state_digest()
    ws.write_file("a.txt", "y")
    changed = ws.state_digest()
    ws.write_file("a.txt", "x")
    assert changed != first and ws.state_digest() == first
    os.rename(root / "a.txt", root / "b.txt")
    assert ws.state_digest() != first
    with open(os.path.join(os.fsencode(root), b"\xff.bin"), "wb") as f:  # not UTF-8
        f.write(b"z")
    named = ws.state_digest()
    assert named != first and len(named) == 64
    ws.close()
    assert ws._remove_folders(["anything"]) is None  # closed: nothing to undo, nothing raised


def test_a_write_whose_temporary_name_is_too_long_is_refused_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    # 250 bytes fit a name, but not the ".name.pid.partial" file the write goes through first
    ws = _ws(tmp_path, 64, {"a.txt": "x"})
    with pytest.raises(ToolError, match=r"could not write .nnn.*File name too long"):
        ws.write_file("n" * 250, "data")
    assert sorted(os.listdir(ws.root or "")) == ["a.txt"]


def test_invalid_bytes_page_through_even_under_a_small_cap(tmp_path: Path) -> None:
    # 0xC0 is a lead byte (of an overlong form): cut before it like any other
    ws = _ws(tmp_path, 3, {"a": b"ab\xc0\x80cd", "b": b"\x80\x80\x80\x80"})
    assert ws.read_file("a")["bytes"] == 2
    page = ws.read_file("b")  # continuation bytes only: nothing to step back to
    assert page["bytes"] == 3 and page["next_offset"] == 3


# --- rules the full mutation run found untested (docs/mutation/survivors.md) ---------------
def test_a_protected_folder_ending_in_a_slash_protects_everything_under_it(
    tmp_path: Path,
) -> None:
    ws = WorkspaceToolset(tmp_path / "w", files={"input/a.csv": "x"}, protected=(".//input//",))
    ws.open()
    assert ws.protected == ("input/",)
    for path in ("input/a.csv", "input/new.csv", "input/deep/new.csv"):
        with pytest.raises(ToolError, match="is an input file and is read-only"):
            ws.write_file(path, "y")
    for path in ("inputs.csv", "input2/a.csv", "out/input/a.csv"):
        assert ws.write_file(path, "y")["status"] == "written"
    listed = {f["path"]: f["read_only"] for f in ws.list_files()["files"]}
    assert listed == {"input/a.csv": True, "inputs.csv": False, "input2/a.csv": False,
                      "out/input/a.csv": False}  # fmt: skip
    trailing_x = WorkspaceToolset(tmp_path / "x", protected=("outX/",))
    assert trailing_x.protected == ("outX/",)
    exact = WorkspaceToolset(tmp_path / "e", files={"a.txt": "x"})  # the files, exactly
    exact.open()
    assert exact.protected == ("a.txt",)
    assert exact.write_file("a.txt2", "y")["status"] == "written"
    with pytest.raises(ToolError, match="read-only"):
        exact.write_file("./a.txt", "y")


def test_a_protected_path_is_taken_as_written_and_one_outside_the_workspace_is_refused(
    tmp_path: Path,
) -> None:
    spaced = WorkspaceToolset(tmp_path / "s", protected=("draft ", "notes/ "))
    assert spaced.protected == ("draft ", "notes/ ")  # a trailing space is part of the name
    spaced.open()
    assert spaced.write_file("draft", "y")["status"] == "written"
    with pytest.raises(ToolError, match="read-only"):
        spaced.write_file("draft ", "y")
    for absolute in ("/etc/", "/etc/passwd"):  # an env's mistake fails loudly, never protects
        with pytest.raises(ToolError, match="outside the workspace"):
            WorkspaceToolset(tmp_path / "a", protected=(absolute,))


LIMITS = ["max_read_bytes", "max_write_bytes", "max_total_bytes", "max_files"]


@pytest.mark.parametrize("limit", LIMITS)
def test_every_limit_must_be_at_least_one(tmp_path: Path, limit: str) -> None:
    with pytest.raises(ValueError, match=r"^workspace limits must be >= 1$"):
        WorkspaceToolset(tmp_path, **{limit: 0})  # type: ignore[arg-type]
    assert getattr(WorkspaceToolset(tmp_path, **{limit: 1}), limit) == 1  # type: ignore[arg-type]


def test_the_default_limits_are_the_documented_ones(tmp_path: Path) -> None:
    ws = WorkspaceToolset(tmp_path / "w")
    ws.open()
    assert ws.write_file("big.txt", "a" * 256_000)["bytes"] == 256_000
    with pytest.raises(ToolError, match="at most 256,000"):
        ws.write_file("big2.txt", "a" * 256_001)
    assert ws.read_file("big.txt")["bytes"] == 64_000
    for i in range(30):  # 31 files of 256,000 bytes = 7,936,000; 64,000 more would pass 8 MB
        ws.write_file(f"f{i}.txt", "a" * 256_000)
    ws.write_file("fill.txt", "a" * 64_000)
    with pytest.raises(ToolError, match="at most 8,000,000"):
        ws.write_file("one.txt", "a")
    few = WorkspaceToolset(tmp_path / "n")
    few.open()
    for i in range(500):
        few.write_file(f"{i}", "")
    with pytest.raises(ToolError, match="already holds 500 files; at most 500"):
        few.write_file("501", "")


def test_a_given_root_is_made_with_its_parents_and_kept_after_close(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "ws"
    ws = WorkspaceToolset(root, files={"f.txt": "x"})
    ws.open()
    ws.close()
    assert (root / "f.txt").read_text() == "x"
    with pytest.raises(ToolError, match=r"^the workspace is closed$"):
        ws.read_file("f.txt")


def test_closing_a_workspace_whose_folder_is_already_gone_is_quiet() -> None:
    import shutil

    ws = WorkspaceToolset(files={"f.txt": "x"})
    ws.open()
    shutil.rmtree(ws.root or "")
    ws.close()
    ws.close()


def test_folders_and_files_are_made_with_fixed_modes_whatever_the_umask(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 64, {})
    old = os.umask(0)
    try:
        ws.write_file("d/e/f.txt", "x")
    finally:
        os.umask(old)
    root = Path(ws.root or "")
    assert (root / "d").stat().st_mode & 0o777 == 0o755
    assert (root / "d" / "e").stat().st_mode & 0o777 == 0o755
    assert (root / "d" / "e" / "f.txt").stat().st_mode & 0o777 == 0o644


def test_write_refusals_name_the_part_of_the_path_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 64, {"input/sub/a.csv": "x", "b.txt": "y"})
    root = Path(ws.root or "")
    (root / "input" / "linkdir").symlink_to(root / "input" / "sub")
    cases = {
        "b.txt/inner/x.txt": "'b.txt' is a symbolic link or not a folder",
        "input/linkdir/x.txt": "'input/linkdir' is a symbolic link or not a folder",
        "input/sub/a.csv/x": "'input/sub/a.csv' is a symbolic link or not a folder",
        "input/sub": "'input/sub' exists and is not a regular file",
    }
    for path, message in cases.items():
        with pytest.raises(ToolError) as caught:
            ws.write_file(path, "data")
        assert str(caught.value).startswith(message), (path, str(caught.value))
    for path in ("input", "input/sub"):
        with pytest.raises(ToolError, match=f"^'{path}' is not a regular file$"):
            ws.read_file(path)


def test_a_write_that_fails_midway_leaves_no_partial_file(tmp_path: Path) -> None:
    import resource
    import signal

    ws = _ws(tmp_path, 64, {"keep.txt": "k"})
    before = ws.state_digest()
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (10, hard))  # a write past 10 bytes fails: EFBIG
    try:
        with pytest.raises(ToolError) as caught:
            ws.write_file("sub/big.txt", "x" * 100)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert str(caught.value) == "could not write 'sub/big.txt': File too large"
    assert sorted(os.listdir(ws.root or "")) == ["keep.txt"]  # no folder, no .partial file
    assert ws.state_digest() == before


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "path is empty"),
        ("   ", "path is empty"),
        ("a\x00b", "path contains a NUL character"),
        (".", "path '.' names the workspace itself, not a file"),
    ],
)
def test_a_path_that_names_no_file_is_refused_with_its_reason(
    tmp_path: Path, path: str, message: str
) -> None:
    ws = _ws(tmp_path, 64, {})
    for call in (lambda: ws.read_file(path), lambda: ws.write_file(path, "x")):
        with pytest.raises(ToolError) as caught:
            call()
        assert str(caught.value) == message


def test_the_schemas_bound_the_offset_and_the_content() -> None:
    ws = WorkspaceToolset(max_write_bytes=1234)
    tools = {b.tool.name: b.tool for b in ws.tools()}
    offset = tools["read_file"].parameters["properties"]["offset"]
    assert offset == {
        "type": "integer",
        "minimum": 0,
        "description": "byte offset to start reading at (default 0)",
    }
    for name in ("read_file", "write_file"):
        schema = tools[name].parameters
        assert "path" in schema["properties"] and "path" in schema["required"], name
    assert tools["read_file"].parameters["required"] == ["path"]  # offset is optional
    content = tools["write_file"].parameters["properties"]["content"]
    assert content == {
        "type": "string",
        "maxLength": 1234,
        "description": "the whole new content of the file (at most 1,234 bytes as UTF-8)",
    }
