"""Escape-battery attacks on files outside the workspace: reading, writing and linking to
them, reaching them through /proc, SQLite and paths that change under a check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from battery_case import Case, walls


def _plant_symlink(ws: Path, ctx: Any) -> None:
    (ws / "link").symlink_to(ctx.secret)
    (ws / "dirlink").symlink_to(ctx.outside)


def _plant_hardlink(ws: Path, ctx: Any) -> None:
    (ws / "hl").hardlink_to(ctx.linked)


FILES = [
    Case(
        "read /etc/passwd",
        "files",
        "open and print /etc/passwd",
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "read /etc/shadow",
        "files",
        "open /etc/shadow (root-only)",
        "print(open('/etc/shadow').read()); print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "read /proc/self/environ",
        "files",
        "read the process environment through /proc",
        "data = open('/proc/self/environ', 'rb').read()\nprint(data)\nprint('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "parent env via os.environ",
        "files",
        "look for a variable the parent set",
        "import os; print(os.environ.get('DG_SANDBOX_CANARY'))",
        walls("process"),
        quiet=True,
    ),
    Case(
        "read the parent's environ",
        "files",
        "read /proc/<parent>/environ",
        # ESCAPED first and a capped prefix: what the parent's block holds varies (a test
        # runner that sets its process title overwrites it with zeros), the read is the escape.
        "import os\ndata = open(f'/proc/{{os.getppid()}}/environ', 'rb').read()\n"
        "print('ESCAPED', len(data), data[:200])",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "../ relative path",
        "files",
        "read a file next to the workspace through ../",
        "print(open('../{outside_name}/secret.txt').read())",
        walls("audit", "landlock"),
    ),
    Case(
        "absolute path",
        "files",
        "read a file outside by its absolute path",
        "print(open('{secret}').read())",
        walls("audit", "landlock"),
    ),
    Case(
        "write outside",
        "files",
        "create a file outside the workspace",
        "open('{outside}/new.txt', 'w').write('x'); print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "overwrite outside",
        "files",
        "overwrite a file outside",
        "open('{secret}', 'w').write('pwned'); print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "write /tmp",
        "files",
        "create a file in /tmp (world-writable)",
        "open('{tmp_marker}', 'w').write('x'); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "planted symlink read",
        "files",
        "read through a symlink to a file outside, planted in the workspace",
        "print(open('link').read())",
        walls("audit", "landlock"),
        setup=_plant_symlink,
    ),
    Case(
        "planted symlink write",
        "files",
        "write through a planted symlink to a directory outside",
        "open('dirlink/new.txt', 'w').write('x'); print('ESCAPED')",
        walls("audit", "landlock", "process"),
        setup=_plant_symlink,
    ),
    Case(
        "planted hardlink read",
        "files",
        "read a hard link to a file outside, planted in the workspace",
        "print(open('hl').read())",
        walls("audit"),
        setup=_plant_hardlink,
    ),
    Case(
        "planted hardlink write",
        "files",
        "write through a planted hard link",
        "open('hl', 'w').write('pwned'); print('ESCAPED')",
        walls("audit", "process"),
        setup=_plant_hardlink,
    ),
    Case(
        "symlink made by the script",
        "files",
        "create a symlink to a file outside, then read it",
        "import os\nos.symlink('{secret}', 'mine')\nprint(open('mine').read())",
        walls("audit", "landlock"),
    ),
    Case(
        "list a directory outside",
        "files",
        "list the names in a directory outside",
        "import os; print(os.listdir('{outside}')); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "chdir out",
        "files",
        "change directory outside, then read a relative path",
        "import os\nos.chdir('{outside}')\nprint(open('secret.txt').read())",
        walls("audit", "landlock"),
    ),
    Case(
        "rename out",
        "files",
        "move a workspace file to outside",
        "open('mine', 'w').write('x')\nimport os; os.rename('mine', '{outside}/moved')\n"
        "print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "chmod outside",
        "files",
        "change the mode of a file outside",
        "import os; os.chmod('{secret}', 0o777); print('ESCAPED')",
        walls("audit", "process"),
    ),
    Case(
        "truncate outside",
        "files",
        "truncate a file outside",
        "import os; os.truncate('{secret}', 0); print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "sqlite3.connect outside",
        "files",
        "open a database outside with sqlite3",
        "import sqlite3\ndb = sqlite3.connect('{secret_db}')\n"
        "print(db.execute('select s from t').fetchall())",
        walls("audit", "landlock"),
    ),
    Case(
        "sqlite ATTACH outside",
        "files",
        "ATTACH a database outside from SQL (SQLite opens it, not Python)",
        "import sqlite3\nc = sqlite3.connect(':memory:')\n"
        "c.execute(\"attach database '{secret_db}' as o\")\n"
        "print(c.execute('select s from o.t').fetchall())",
        walls("landlock"),
    ),
    Case(
        "/proc/self/mem",
        "files",
        "open /proc/self/mem to patch the interpreter's memory",
        "f = open('/proc/self/mem', 'r+b'); print('ESCAPED')",
        walls("audit", "landlock", "process"),
    ),
    Case(
        "lying path object",
        "files",
        "an os.PathLike that names the workspace to a check and a secret to open()",
        "class P:\n    n = 0\n    def __fspath__(self):\n        P.n += 1\n"
        "        return 'ok.txt' if P.n % 2 == 0 else '{secret}'\n"
        "print(open(P()).read())",
        walls("audit", "landlock"),
    ),
]
