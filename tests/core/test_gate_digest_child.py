"""The determinism gate's child process: whatever it prints, the gate reports a failure by
name and never raises (a child that exits 0 with no digests on stdout included)."""

from __future__ import annotations

import shutil

import pytest

import datagauntlet as dg
from datagauntlet.core import gates


def test_a_child_that_prints_no_digests_is_a_named_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    echo = shutil.which("echo")
    assert echo is not None
    # a real child that exits 0 and prints its argv instead of the digests' JSON
    monkeypatch.setattr(gates.sys, "executable", echo)
    out = gates._digests_in_subprocess(dg.make("dataclean"), "public", 1, "0")
    assert isinstance(out, str) and out.startswith("digest process printed no digests"), out


def test_a_child_that_fails_is_a_named_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    false = shutil.which("false")
    assert false is not None
    monkeypatch.setattr(gates.sys, "executable", false)
    out = gates._digests_in_subprocess(dg.make("dataclean"), "public", 1, "0")
    assert isinstance(out, str) and out.startswith("digest process failed"), out
