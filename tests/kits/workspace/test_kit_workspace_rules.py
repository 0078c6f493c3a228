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
    }
    for path, message in cases.items():
        with pytest.raises(ToolError) as caught:
            ws.read_file(path)
        assert str(caught.value).startswith(message), (path, str(caught.value))


def test_a_write_refused_for_a_name_too_long_leaves_no_folder_behind(tmp_path: Path) -> None:
    # A component over the file system's 255 bytes passes the 400-character path bound.
    ws = _ws(tmp_path, 64, {"a.txt": "x"})
    before = ws.state_digest()
    for path in ("new/" + "x" * 300 + "/f.txt", "new/deeper/" + "y" * 300, "z" * 300):
        with pytest.raises(ToolError, match="File name too long"):
            ws.write_file(path, "data")
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
