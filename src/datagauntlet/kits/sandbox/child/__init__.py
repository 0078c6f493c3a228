"""Code that runs inside the sandboxed child, before and around the user's script.

These files use the standard library only and are never imported by the child: the runtime
joins their sources, with a two-line entry point, into one launcher compiled to a .pyc (see
`runtime.py`). The parent imports them only to test their pure parts (the BPF assembler).
"""

from __future__ import annotations

from pathlib import Path

PARTS = ("landlock.py", "seccomp.py", "audit_paths.py", "audit_rules.py", "audit.py", "main.py")
ENTRY = """
import sys as _sys
run_user(*launch(eval(_sys.argv[1], {"__builtins__": {}})))
"""


def launcher_source() -> str:
    here = Path(__file__).parent
    return "\n".join((here / name).read_text() for name in PARTS) + ENTRY
