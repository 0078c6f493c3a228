"""The audit hook's rules, one per kind of event that names a path, a module or bytecode, and
the sets of events it refuses outright.

Part of the launcher (standard library only; see audit.py for the rules every function made
here follows). Each `make_*_rule` returns a function of the event's arguments that returns
when the event may go on and raises PermissionError, after writing the refusal, when not.
"""

AUDIT_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "_posixsubprocess.fork_exec",
    }
)
AUDIT_NETWORK_EVENTS = frozenset(
    {
        "urllib.Request",
        "http.client.connect",
        "ftplib.connect",
        "smtplib.connect",
        "poplib.connect",
        "imaplib.open",
        "nntplib.connect",
        "telnetlib.Telnet.open",
        "webbrowser.open",
        "syslog.openlog",
        "syslog.syslog",
    }
)
AUDIT_REACH_EVENTS = frozenset(
    {
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys._current_frames",
        "sys._current_exceptions",
        "code.__new__",
        "marshal.load",
        "setopencode",
        "cpython.PyInterpreterState_New",
        "sqlite3.enable_load_extension",
        "sqlite3.load_extension",
        "resource.setrlimit",
        "os.link",
    }
)
AUDIT_WRITE_EVENTS = frozenset(
    {
        "os.mkdir",
        "os.remove",
        "os.rmdir",
        "os.truncate",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.setxattr",
        "os.removexattr",
    }
)
AUDIT_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr"})
AUDIT_DENY_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "cffi",
        "_cffi_backend",
        "_posixsubprocess",
        "_xxsubinterpreters",
        "_xxinterpchannels",
    }
)


def make_open_rule(place, linked, as_text, record):
    import posix

    write_flags = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND

    def open_rule(
        args,
        _place=place,
        _linked=linked,
        _as_text=as_text,
        _record=record,
        _type=type,
        _int=int,
        _Deny=PermissionError,
        _write_flags=write_flags,
    ):
        path, mode, flags = args
        if _type(path) is _int:
            return  # an fd this process already holds
        where, real = _place(path)
        if where == "ws" and not _linked(real):
            return
        if where == "ro":
            if mode is None:
                writing = flags & _write_flags
            else:
                text = _as_text(mode) or "w"
                writing = "w" in text or "a" in text or "+" in text or "x" in text
            if not writing:
                return
        why = "hard-linked file " if where == "ws" else ""
        _record("open", why + real)
        raise _Deny(f"sandbox: open of {why}{real} refused (outside the workspace)")

    return open_rule


def make_path_rule(place, record):
    def path_rule(
        event,
        args,
        _place=place,
        _record=record,
        _type=type,
        _int=int,
        _Deny=PermissionError,
        _reads=AUDIT_READ_EVENTS,
    ):
        # a listing or a change of one path (AUDIT_READ_EVENTS, AUDIT_WRITE_EVENTS)
        path = args[0] if args else None
        if path is None or _type(path) is _int:
            return
        where, real = _place(path)
        if where == "ws" or (where == "ro" and event in _reads):
            return
        _record(event, real)
        raise _Deny(f"sandbox: {event} of {real} refused (outside the workspace)")

    return path_rule


def make_link_rule(place, as_text, record):
    def link_rule(
        event, args, _place=place, _as_text=as_text, _record=record, _Deny=PermissionError
    ):
        # os.rename and os.symlink: both ends in the workspace
        src, dst = args[0], args[1]
        dst_where, dst_real = _place(dst)
        if event == "os.symlink":
            text = _as_text(src)
            if text is not None and not text.startswith("/"):
                base = dst_real.rsplit("/", 1)[0]
                text = base + "/" + text
            src_where, src_real = _place(text if text is not None else src)
        else:
            src_where, src_real = _place(src)
        if src_where == "ws" and dst_where == "ws":
            return
        _record(event, src_real + " -> " + dst_real)
        raise _Deny(f"sandbox: {event} {src_real} -> {dst_real} refused")

    return link_rule


def make_chdir_rule(workspace, resolve, as_text, record):
    def chdir_rule(
        args,
        _resolve=resolve,
        _as_text=as_text,
        _record=record,
        _type=type,
        _int=int,
        _Deny=PermissionError,
        _ws=workspace,
    ):
        path = args[0]
        real = None if _type(path) is _int else _resolve(_as_text(path) or "\0")
        if real == _ws:
            return
        _record("os.chdir", real or "<fd>")
        raise _Deny("sandbox: chdir refused (the working directory stays the workspace)")

    return chdir_rule


def make_sqlite_rule(place, linked, as_text, record):
    import posix

    def sqlite_rule(
        args,
        _place=place,
        _linked=linked,
        _as_text=as_text,
        _record=record,
        _type=type,
        _str=str,
        _bytes=bytes,
        _Deny=PermissionError,
        _fspath=posix.fspath,
        _TypeError=TypeError,
    ):
        event = "sqlite3.connect"
        database = args[0]
        if _type(database) is not _str and _type(database) is not _bytes:
            try:
                database = _fspath(database)  # a Path; what it says is rechecked by Landlock
            except _TypeError:
                database = None
        database = _as_text(database)
        if database is None:
            _record(event, "<non-text database>")
            raise _Deny("sandbox: sqlite3.connect refused (database must be a path)")
        if database == ":memory:" or database == "":
            return
        if database.startswith("file:"):
            database = database[5:].split("?", 1)[0] or ":memory:"
            if database == ":memory:":
                return
        where, real = _place(database)
        if where == "ws" and not _linked(real):
            return
        _record(event, real)
        raise _Deny(f"sandbox: sqlite3.connect to {real} refused (outside the workspace)")

    return sqlite_rule


def make_import_rule(place, as_text, record, dynload):
    def import_rule(
        args,
        _place=place,
        _as_text=as_text,
        _record=record,
        _len=len,
        _Deny=PermissionError,
        _deny_imports=AUDIT_DENY_IMPORTS,
        _dynload=dynload,
    ):
        name = _as_text(args[0]) or ""
        top = name.split(".", 1)[0]
        if top in _deny_imports or top.startswith("_test") or top.startswith("datagauntlet"):
            _record("import", name)
            raise _Deny(f"sandbox: import of {name} refused")
        if _len(args) > 1 and args[1] is not None:
            # native code is about to be loaded from this file: only the stdlib's own
            where, real = _place(args[1])
            if where != "ro" or not real.startswith(_dynload + "/"):
                _record("import", "native module " + name + " from " + real)
                raise _Deny(f"sandbox: loading native code from {real} refused")

    return import_rule


def make_marshal_rule(code_digests, record):
    import _blake2

    def marshal_rule(
        args,
        _record=record,
        _type=type,
        _bytes=bytes,
        _bytearray=bytearray,
        _Deny=PermissionError,
        _digests=frozenset(code_digests),
        _blake=_blake2.blake2b,
    ):
        data = args[0]
        if (_type(data) is _bytes or _type(data) is _bytearray) and _blake(
            data, digest_size=16
        ).digest() in _digests:
            return
        _record("marshal.loads", "bytecode not from the stdlib")
        raise _Deny("sandbox: marshal.loads refused (only the stdlib's own bytecode loads)")

    return marshal_rule


def make_setattr_rule(as_text, record):
    # a function's code is never rewritten; the launcher's functions keep their defaults too
    function = type(make_setattr_rule)

    def setattr_rule(
        args,
        _as_text=as_text,
        _record=record,
        _type=type,
        _len=len,
        _Deny=PermissionError,
        _frozen_attrs=frozenset({"__defaults__", "__kwdefaults__"}),
        _function=function,
        _func_code=function.__dict__["__code__"].__get__,
    ):
        name = _as_text(args[1]) if _len(args) > 1 else None
        if name == "__code__" or (
            name in _frozen_attrs
            and _type(args[0]) is _function
            and _func_code(args[0]).co_filename == "<sandbox-launcher>"
        ):
            _record("object.__setattr__", name)
            raise _Deny(f"sandbox: setting {name} refused")

    return setattr_rule
