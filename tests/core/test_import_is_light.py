"""`import datagauntlet` loads no optional dependency and no env module."""

import subprocess
import sys

HEAVY = (
    "verifiers",
    "openai",
    "mcp",
    "fastapi",
    "starlette",
    "uvicorn",
    "httpx",
    "aiohttp",
    "rich",
    "plotly",
    "ray",
    "websockets",
)


def test_import_pulls_in_nothing_heavy() -> None:
    code = (
        "import sys, datagauntlet; "
        f"print([m for m in {HEAVY!r} if m in sys.modules]); "
        "print([m for m in sys.modules if m.startswith('datagauntlet.envs.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "[]"]
