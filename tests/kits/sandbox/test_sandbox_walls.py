"""The walls themselves, outside the escape battery: a kernel refusal the result names, an
audit hook nothing can rebind, a seccomp filter that assembles, a read-only runtime."""

from __future__ import annotations

import dis
import types
from pathlib import Path

from sandbox_runner_helpers import QUICK, ledger, root_only

from datagauntlet.kits.sandbox import fresh_workspace, run_script
from datagauntlet.kits.sandbox.child import launcher_source
from datagauntlet.kits.sandbox.child.seccomp import ARCHES, build_filter
from datagauntlet.kits.sandbox.runtime import runtime


@root_only
def test_sqlite_opening_a_database_outside_the_workspace_is_a_kernel_refusal(
    tmp_path: Path,
) -> None:
    # SQLite opens an ATTACHed file itself, past the audit hook: the kernel walls refuse it,
    # and the run's result must say so (judged against the run's own workspace).
    outside = tmp_path / "elsewhere.db"
    ledger(outside)
    code = (
        "import sqlite3\nc = sqlite3.connect('db.sqlite')\n"
        f"c.execute(\"ATTACH DATABASE '{outside}' AS o\")\n"
        "print(c.execute('SELECT count(*) FROM o.ledger').fetchone())\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK)
        inside = run_script(code.replace(str(outside), "other.db"), ws, QUICK)
    assert res.exit_code != 0 and "(3,)" not in res.stdout
    refused = [v for v in res.violations if (v.wall, v.event) == ("kernel", "refused")]
    assert refused and str(outside) in refused[0].detail, res.violations
    assert inside.exit_code != 0  # an empty database of its own: no such table, not a wall
    assert not [v for v in inside.violations if v.wall == "kernel"], inside.violations


def _functions(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _functions(const)


def test_the_audit_hook_looks_up_no_global_or_free_name() -> None:
    """Everything the hook uses is bound at creation: rebinding a builtin, a module
    attribute or the launcher's globals cannot change what it does."""
    code = compile(launcher_source(), "<sandbox-launcher>", "exec")
    factories = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    factories = [c for c in factories if c.co_name.startswith("make_")]
    inner = [c for f in factories for c in _functions(f) if c.co_name != "<genexpr>"]
    names = {c.co_name for c in inner}
    tools = {"hook", "record", "as_text", "resolve", "place", "linked", "deny_fork_exec"}
    rules = {"open", "path", "link", "chdir", "sqlite", "import", "marshal", "setattr"}
    assert tools | {f"{rule}_rule" for rule in rules} <= names
    for fn in inner:
        loads = {
            i.opname
            for i in dis.get_instructions(fn)
            if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE")
        }
        assert not loads, f"{fn.co_name} looks up {loads}"
        assert not fn.co_freevars, fn.co_name


def test_seccomp_filter_assembles_with_jumps_in_range() -> None:
    prog = build_filter("x86_64", 4242, 7)
    assert 50 < len(prog) < 255
    for _, jt, jf, k in prog:
        assert 0 <= jt < 256 and 0 <= jf < 256 and 0 <= k < 1 << 32
    # the last instructions are the verdicts: allow, EPERM, ENOSYS, kill
    assert [k for _, _, _, k in prog[-4:]] == [0x7FFF0000, 0x50001, 0x50026, 0x80000000]
    denied = ARCHES["x86_64"]["deny"]
    ks = {k for code, _, _, k in prog if code == 0x15}
    assert {denied["socket"], denied["execve"], denied["ptrace"], denied["mount"]} <= ks
    assert 4242 in ks and 7 in ks  # own pid for kill, report fd for close/dup


@root_only
def test_runtime_is_a_root_owned_readonly_stdlib_without_site_packages() -> None:
    rt = runtime()
    assert not (rt.stdlib / "site-packages").exists()
    assert not (rt.stdlib / "test").exists()
    assert not list((rt.stdlib / "lib-dynload").glob("_testcapi*"))
    for path in (rt.root, rt.stdlib, rt.python, rt.launcher):
        st = path.stat()
        assert st.st_uid == 0 and not st.st_mode & 0o022, path
    assert rt.scratch.stat().st_mode & 0o777 == 0o711
