"""Escape-battery attacks through imports and code loading: the parent's own package, hand-made
code objects, marshal and pickle."""

from __future__ import annotations

from battery_case import Case, walls

IMPORTS = [
    Case(
        "import this package",
        "imports",
        "import datagauntlet (the parent's package, with its secrets-bearing code)",
        "import datagauntlet; print('ESCAPED')",
        walls("process", "audit", "landlock"),
    ),
    Case(
        "import this package by path",
        "imports",
        "put the package's source directory on sys.path and import it",
        "import sys\nsys.path.insert(0, '{pkg_src}')\nimport datagauntlet; print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "importlib loader",
        "imports",
        "load the package's __init__.py with an importlib loader",
        "import importlib.machinery\n"
        "loader = importlib.machinery.SourceFileLoader(\n"
        "    'dg', '{pkg_src}/datagauntlet/__init__.py')\n"
        "if loader.get_code('dg'): print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "types.CodeType",
        "imports",
        "build a code object by hand (forged bytecode reads and writes memory)",
        "f = lambda: 0\nc = f.__code__.replace(co_code=f.__code__.co_code)\nprint('ESCAPED')",
        walls("audit"),
    ),
    Case(
        "marshal gadget",
        "imports",
        "load bytecode with marshal.loads",
        "import marshal\ncode = marshal.loads(marshal.dumps(compile('x = 1', 'm', 'exec')))\n"
        "exec(code); print('ESCAPED')",
        walls("audit"),
    ),
    Case(
        "pickle gadget",
        "imports",
        "unpickle a payload that calls os.system",
        "import pickle\nassert pickle.loads(b\"cos\\nsystem\\n(S'echo x > ran'\\ntR.\") == 0",
        walls("audit", "seccomp", "landlock"),
    ),
]
