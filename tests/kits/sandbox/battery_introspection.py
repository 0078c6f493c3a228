"""Escape-battery attacks by introspection: walking to os.system or to the audit hook through
the objects the interpreter keeps, and patching what the hook calls."""

from __future__ import annotations

from battery_case import Case, walls

INTROSPECTION = [
    Case(
        "__subclasses__ walk",
        "introspection",
        "reach os.system from object.__subclasses__() (os._wrap_close.__init__.__globals__)",
        "w = [c for c in object.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
        "assert w.__init__.__globals__['system']('echo x > ran') == 0",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "gc.get_objects walk",
        "introspection",
        "find the audit hook through gc.get_objects and rewrite it",
        "import gc\nfor f in gc.get_objects():\n"
        "    if type(f).__name__ == 'function' and f.__name__ == 'hook':\n"
        "        f.__code__ = (lambda *a: None).__code__\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "hook frame tamper",
        "introspection",
        "take the hook's frame from a refusal's traceback and rewrite what it uses",
        "import builtins\ntry:\n    open('/etc/passwd')\nexcept PermissionError as e:\n"
        "    tb = e.__traceback__\n    while tb.tb_next: tb = tb.tb_next\n"
        "    fr = tb.tb_frame\n    fr.f_globals['PermissionError'] = None\n"
        "    builtins.PermissionError = None\n"
        "    for v in fr.f_locals.values():\n"
        "        if callable(v) and hasattr(v, '__defaults__'):\n"
        "            try: v.__defaults__ = None\n            except Exception: pass\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
    Case(
        "builtins patched",
        "introspection",
        "replace builtins and os functions the hook might call, then open a secret",
        "import builtins, os, posixpath\nbuiltins.isinstance = lambda *a: True\n"
        "builtins.type = lambda *a: str\nposixpath.realpath = lambda p, **k: 'ok'\n"
        "os.path.realpath = posixpath.realpath\n"
        "print(open('/etc/passwd').read()); print('ESCAPED')",
        walls("audit", "landlock"),
    ),
]
