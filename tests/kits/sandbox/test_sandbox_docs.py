"""docs/sandbox.md says what the code does: the battery table, its size, the filter's size."""

from __future__ import annotations

from pathlib import Path

from sandbox_battery import CASES, render_table

from datagauntlet.kits.sandbox.child.seccomp import build_filter

DOC = Path(__file__).resolve().parents[3] / "docs" / "sandbox.md"


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def test_docs_table_is_the_battery() -> None:
    text = DOC.read_text()
    table = _between(text, "(test_docs_table_is_the_battery) -->", "<!-- end battery table -->")
    assert table == render_table(), "regenerate with sandbox_battery.render_table()"


def test_docs_numbers_follow_the_code() -> None:
    text = DOC.read_text()
    assert f"holds {len(CASES)} attacks" in text
    assert f"{len(build_filter('x86_64', 1, 3))} BPF instructions" in text
    assert text.count("instructions on x86_64") == 1
    assert f"{len(build_filter('x86_64', 1, 3))} instructions on x86_64" in text
