"""An episode nobody closes leaves no temporary root behind: a finaliser removes it when the
episode is dropped, as `close` does; the workspace kit's own temporary root likewise. A refused
write_file leaves no folder behind, whatever makes the path invalid."""

from __future__ import annotations

import gc
import os

import pytest

import datagauntlet as dg
from datagauntlet.kits.workspace import WorkspaceToolset


@pytest.fixture(scope="module")
def env():
    return dg.make("event-recon")


def test_a_dropped_episode_removes_its_root(env) -> None:
    ep = env.episode(env.tasks("eval", 1)[0])
    root = ep.root
    assert root.is_dir() and root.name.startswith("event-recon-")
    del ep
    gc.collect()
    assert not root.exists()


def test_close_still_removes_it_at_once(env) -> None:
    ep = env.episode(env.tasks("eval", 1)[0])
    root = ep.root
    ep.close()
    assert not root.exists()
    ep.close()  # twice is fine


def test_the_workspace_kit_root_goes_when_dropped() -> None:
    ws = WorkspaceToolset(files={"a.txt": "x"})
    ws.open()
    root = ws.root
    assert root is not None and (root / "a.txt").exists()
    del ws
    gc.collect()
    assert not root.exists()


INVALID = [
    "new/" + "x" * 256,
    "new/deeper/" + "y" * 250,
    "new/" + "z" * 256 + "/f",
    "new/INTEGRATION.md/../x",
    "new/\x00",
    "/abs/x",
    "new/../../x",
    "new/" + "é" * 200,
    "INTEGRATION.md/x",
    "new/" * 120 + "f",
]


@pytest.mark.parametrize("path", INVALID, ids=range(len(INVALID)))
def test_a_refused_write_leaves_no_folder(env, path: str) -> None:
    ep = env.episode(env.tasks("eval", 1)[0])
    try:
        before = sorted(os.listdir(ep.root))
        out = ep.call("write_file", {"path": path, "content": "x"})
        assert "error" in out, out
        assert sorted(os.listdir(ep.root)) == before
    finally:
        ep.close()
