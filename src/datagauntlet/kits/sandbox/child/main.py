"""The launcher's sequence: raise each requested wall, report it, then run the user's code.

Standard library only. It runs as the first code of the child interpreter (compiled into the
runtime as a .pyc), with the names of landlock.py, seccomp.py and the three audit files in
its globals. Order matters: the network namespace needs root, so it comes before the drop to an
unprivileged user; Landlock and seccomp need no_new_privs; seccomp refuses the very calls
the earlier walls make, so it comes last among the kernel walls; the audit hook refuses
ctypes, which the others use, so it is installed after them and after ctypes is unloaded.

Report lines on the channel fd (tab-separated): `W name up|down detail` for each wall,
`R names` when a required wall is down (the script never runs), `S` when user code starts,
`V wall event detail` for each refusal, `X type errno message` for an uncaught exception,
`E` when user code has finished.
"""

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
REFUSED_EXIT = 125


def launch(cfg):
    import os
    import sys

    fd = cfg["report_fd"]

    def say(*parts):
        os.write(fd, ("\t".join(parts) + "\n").encode("utf-8", "replace"))

    source = _read_source()
    wanted = set(cfg["walls"])
    state = {}
    libc = None
    if wanted & {"netns", "process", "landlock", "seccomp"}:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)

    def errno_text():
        import ctypes

        return os.strerror(ctypes.get_errno())

    if "netns" in wanted:
        if libc.unshare(CLONE_NEWNET) == 0:
            state["netns"] = (True, "new network namespace; loopback down")
        else:
            state["netns"] = (False, "unshare(CLONE_NEWNET): " + errno_text())

    if "rlimits" in wanted:
        state["rlimits"] = _set_rlimits(cfg["limits"])

    if "process" in wanted:
        state["process"] = _drop_privileges(cfg, libc, errno_text)
    if state.get("rlimits", (False,))[0] and os.geteuid() == 0:
        up, detail = state["rlimits"]
        state["rlimits"] = (
            up,
            detail + "; still root, so NPROC is ignored and hard limits can rise",
        )

    if "landlock" in wanted:
        state["landlock"] = install_landlock(  # noqa: F821 (from landlock.py)
            libc, cfg["workspace"], cfg["read_dirs"], cfg["read_files"]
        )

    if "seccomp" in wanted:
        state["seccomp"] = install_seccomp(libc, fd)  # noqa: F821 (from seccomp.py)

    for name in [m for m in sys.modules if m == "_ctypes" or m.split(".")[0] == "ctypes"]:
        del sys.modules[name]
    libc = None

    if "audit" in wanted:
        state["audit"] = _install_audit(cfg)

    for name in cfg["all_walls"]:
        if name in state:
            up, detail = state[name]
            say("W", name, "up" if up else "down", detail)
        else:
            say("W", name, "down", "not requested")
    missing = [n for n in cfg["require"] if not state.get(n, (False, ""))[0]]
    if missing:
        say("R", ",".join(missing))
        os.write(2, b"sandbox: refused to run: required walls down: " + ",".join(missing).encode())
        os._exit(REFUSED_EXIT)

    if state.get("process", (False, ""))[0]:
        sys.path[:] = [p for p in sys.path if p.startswith(cfg["runtime"] + "/")]
    say("S")
    return compile(source, cfg["filename"], "exec", dont_inherit=True), fd


def _read_source():
    """The user's script, all of stdin; stdin then reads /dev/null."""
    import os

    chunks = []
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.close(null)
    return b"".join(chunks)


def _set_rlimits(limits):
    import resource

    pairs = [
        ("CPU", (limits["cpu_s"], limits["cpu_s"] + 1)),
        ("AS", (limits["memory_bytes"],) * 2),
        ("FSIZE", (limits["file_size_bytes"],) * 2),
        ("NOFILE", (limits["open_files"],) * 2),
        ("NPROC", (limits["processes"],) * 2),
        ("CORE", (0, 0)),
    ]
    try:
        for name, value in pairs:
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), value)
    except (OSError, ValueError) as exc:
        return False, f"setrlimit {name}: {exc}"
    return True, "cpu, address space, file size, open files, processes, core=0"


def _drop_privileges(cfg, libc, errno_text):
    import os

    uid, gid = cfg["uid"], cfg["gid"]
    if os.geteuid() == 0:
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        except OSError as exc:
            return False, f"cannot drop to uid {uid}: {exc}"
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
            return False, "uid/gid did not change"
        try:
            os.setuid(0)
            return False, "could regain root after dropping"
        except PermissionError:
            pass
        who = f"dropped root to uid {uid}"
    else:
        who = f"already unprivileged (uid {os.geteuid()})"
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, "no_new_privs: " + errno_text()
    # the parent-death signal is cleared by a credential change, so it is set after it
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.getppid() != cfg["parent_pid"]:
        os._exit(REFUSED_EXIT)  # the parent is already gone: nobody will collect the result
    return True, "python -I -S, scrubbed env, stdlib-only sys.path; " + who + "; no_new_privs"


def _install_audit(cfg):
    import _posixsubprocess
    import sys

    with open(cfg["digests"], "rb") as fh:
        raw = fh.read()
    digests = [raw[i : i + 16] for i in range(0, len(raw), 16)]
    hook, deny_fork_exec = make_audit_hook(  # noqa: F821 (from audit.py)
        cfg["workspace"],
        cfg["audit_roots"],
        cfg["report_fd"],
        digests,
        cfg["dynload"],
    )
    # subprocess, multiprocessing and friends all end in fork_exec, which raises no event
    _posixsubprocess.fork_exec = deny_fork_exec
    sys.addaudithook(hook)
    what = "opens, sockets, processes, ctypes, bytecode forging"
    return True, f"{what}; {len(digests)} stdlib code digests"


def run_user(code, fd):
    """Run the user's code as `__main__`; report an uncaught exception and the end."""
    import builtins
    import os
    import sys

    def say(*parts):
        try:  # noqa: SIM105 (keep the user's run free of a contextlib import)
            os.write(fd, ("\t".join(parts) + "\n").encode("utf-8", "replace"))
        except (OSError, MemoryError):
            pass

    module = type(sys)("__main__")
    module.__file__ = code.co_filename
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    except SystemExit:
        say("E")
        raise
    except BaseException as exc:
        try:
            message = str(exc)[:300].replace("\n", " ").replace("\t", " ")
        except BaseException:
            message = ""
        say("X", type(exc).__name__, str(getattr(exc, "errno", "") or ""), message)
        tb = exc.__traceback__
        tb = tb.tb_next if tb is not None else None  # start at the user's code, not here
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        say("E")
        raise SystemExit(1) from None
    say("E")
