"""The test-run plumbing: a shared result is built once and never served for other code, and
the file order puts the longest files first without splitting any file."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import shared_results
from file_order import ordered


def test_a_shared_result_is_built_once_then_loaded_from_disk(tmp_path: Path) -> None:
    builds: list[int] = []

    def build() -> dict[str, int]:
        builds.append(1)
        return {"n": len(builds)}

    assert shared_results.computed_once(tmp_path, "thing", build) == {"n": 1}
    shared_results._memo.clear()  # as another worker would start: nothing in memory
    assert shared_results.computed_once(tmp_path, "thing", build) == {"n": 1}
    assert len(builds) == 1 and len(list(tmp_path.glob("thing-*.pickle"))) == 1


def test_changed_code_builds_anew_and_drops_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared_results.computed_once(tmp_path, "other", lambda: "old code")
    shared_results._memo.clear()
    monkeypatch.setattr(shared_results, "code_digest", lambda: "changed")
    assert shared_results.computed_once(tmp_path, "other", lambda: "new code") == "new code"
    assert [p.name for p in tmp_path.glob("other-*.pickle")] == ["other-changed.pickle"]


def test_the_digest_covers_the_package_source() -> None:
    import datagauntlet

    root = Path(datagauntlet.__file__).parent
    assert root in shared_results._package_dirs() and len(shared_results.code_digest()) == 20


def test_longest_files_go_first_and_each_file_stays_whole() -> None:
    ids = ["a.py::1", "a.py::2", "b.py::1", "c.py::1", "c.py::2", "d.py::1"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    got = [i.nodeid for i in ordered(items, {"c.py": 9.0, "b.py": 3.0})]  # type: ignore[arg-type]
    assert got == ["c.py::1", "c.py::2", "b.py::1", "a.py::1", "a.py::2", "d.py::1"]
