"""The core stays light: no front-door dependency is imported until a front door is used."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("openai", "mcp", "verifiers", "starlette", "uvicorn", "httpx")

# Makes the heavy packages unimportable, as if the extras were not installed.
BLOCK = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
"""


def test_import_datagauntlet_imports_no_front_door_dependency() -> None:
    code = (
        "import sys, datagauntlet as dg\n"
        "env = dg.make(dg.list_envs()[0])\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_works_without_the_extras() -> None:
    code = BLOCK + (
        "from datagauntlet.cli.main import main\n"
        "helps = [['--help'], ['eval', '--help'], ['mock-model', '--help'], ['mcp', '--help']]\n"
        "for argv in helps:\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 0, (argv, e.code)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_policy_agent_eval_runs_without_the_extras(tmp_path: object) -> None:
    code = BLOCK + (
        "from datagauntlet.cli.main import main\n"
        "argv = ['eval', '--env', 'dirty-integration', '-n', '2']\n"
        f"raise SystemExit(main([*argv, '--out', {str(tmp_path)!r}]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
