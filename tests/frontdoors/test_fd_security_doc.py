"""docs/security.md lists every server the package starts, and each one is behind the guard."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "datagauntlet"
# what starting a server looks like in this code base
STARTS = re.compile(
    r"uvicorn\.Config\(|uvicorn_server\(|\((?:JsonHTTPServer|AioJsonServer)\)|"
    r"ThreadingHTTPServer\b|asyncio\.start_server\(|socket\.AF_UNIX"
)
GUARDED = re.compile(r"GuardedApp\(|build_app\(|uvicorn_server\(|Guard\(|Supervisor|AF_UNIX")


def server_modules() -> list[str]:
    return sorted(
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if STARTS.search(path.read_text())
    )


def test_every_server_module_is_in_the_doors_table() -> None:
    table = (ROOT / "docs" / "security.md").read_text().split("## Every door", 1)[1]
    found = server_modules()
    assert "frontdoors/mcp_server.py" in found and "frontdoors/serve.py" in found  # the scan works
    missing = [m for m in found if f"`{m}`" not in table]
    assert not missing, f"docs/security.md does not list the servers in {missing}"


def test_every_server_module_is_behind_the_guard() -> None:
    for module in server_modules():
        text = (SRC / module).read_text()
        assert GUARDED.search(text) or "(JsonHTTPServer)" in text or "(AioJsonServer)" in text, (
            f"{module} starts a server without the origin guard"
        )
