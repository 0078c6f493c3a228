"""The audit hook: refuses opens outside the workspace, sockets, processes, ctypes and the
introspection that would reach past it; each refusal is written to the report channel.

Standard library only (part of the launcher). An audit hook is Python code running inside the
process it polices, so it is written to leave user code nothing to tamper with:

- no global or builtin name is looked up at call time: everything it uses is bound as a
  default argument (`_name=value`), so replacing a builtin, a module attribute or the
  launcher's globals changes nothing it does (a test checks the bytecode for global loads);
- those defaults are immutable (str, int, tuple, frozenset, builtin functions), so a frame
  reached through a traceback's `tb_frame` offers nothing to mutate;
- it runs no user code: arguments are used only when their type is exactly str, bytes or int
  (subclasses are copied through the C slots of str and bytes, never their own methods);
- the ways to rewrite a function or forge bytecode (`__code__`, `code.__new__`, `marshal`)
  are refused, except `marshal.loads` of the stdlib's own bytecode, known by digest.

The hook is one wall of six. What it cannot see (SQLite's own file opens such as ATTACH,
native code) the
kernel walls stop; the battery in tests/kits/sandbox shows which wall stops what.
"""


def make_audit_hook(workspace, read_roots, report_fd, code_digests, dynload):
    import _blake2
    import posix

    ws = workspace
    ws_slash = workspace + "/"
    roots = tuple(read_roots)
    digests = frozenset(code_digests)

    def record(
        event,
        detail,
        _write=posix.write,
        _fd=report_fd,
        _OSError=OSError,
        _len=len,
    ):
        if _len(detail) > 300:
            detail = detail[:300] + "..."
        line = "V\taudit\t" + event + "\t" + detail.replace("\n", " ").replace("\t", " ") + "\n"
        try:  # noqa: SIM105 (contextlib would be a global lookup)
            _write(_fd, line.encode("utf-8", "replace"))
        except _OSError:
            pass  # the channel is gone; the refusal still stands

    def as_text(
        value,
        _type=type,
        _str=str,
        _bytes=bytes,
        _issub=type.__subclasscheck__,
        _str_copy=str.__str__,
        _bytes_copy=bytes.__bytes__,
        _decode=bytes.decode,
    ):
        # None means "not a path we can read without running the caller's code": refused
        t = _type(value)
        if t is _str:
            return value
        if t is _bytes:
            return _decode(value, "utf-8", "surrogateescape")
        if _issub(_str, t):
            return _str_copy(value)
        if _issub(_bytes, t):
            return _decode(_bytes_copy(value), "utf-8", "surrogateescape")
        return None

    def resolve(
        path,
        _lstat=posix.lstat,
        _readlink=posix.readlink,
        _ws=ws,
        _OSError=OSError,
        _ValueError=ValueError,
        _len=len,
    ):
        # realpath from C primitives only; relative paths start at the workspace, where the
        # working directory is pinned. Components that do not exist are kept lexically.
        if not path.startswith("/"):
            path = _ws + "/" + path
        rest = path.split("/")[::-1]
        out = []
        hops = 0
        while rest:
            part = rest.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            here = "/" + "/".join([*out, part])
            try:
                mode = _lstat(here).st_mode
            except (_OSError, _ValueError):
                out.append(part)
                continue
            if mode & 0o170000 == 0o120000:
                hops += 1
                if hops > 40:
                    return None
                try:
                    target = _readlink(here)
                except (_OSError, _ValueError):
                    return None
                if target.startswith("/"):
                    out = []
                rest.extend(target.split("/")[::-1])
                continue
            out.append(part)
        return "/" + "/".join(out)

    def place(
        raw,
        _as_text=as_text,
        _resolve=resolve,
        _ws=ws,
        _ws_slash=ws_slash,
        _roots=roots,
    ):
        # "ws", "ro" (a read-only root) or "out", and the resolved path
        text = _as_text(raw)
        if text is None:
            return "out", "<a path that is not text>"
        if "\0" in text:
            return "out", text
        real = _resolve(text)
        if real is None:
            return "out", text
        if real == _ws or real.startswith(_ws_slash):
            return "ws", real
        for root in _roots:
            if real == root or real.startswith(root + "/"):
                return "ro", real
        return "out", real

    def linked(real, _lstat=posix.lstat, _OSError=OSError):
        # a regular file with other names may be a hard link planted to a file outside
        try:
            st = _lstat(real)
        except _OSError:
            return False
        return st.st_mode & 0o170000 == 0o100000 and st.st_nlink > 1

    write_flags = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND
    process_events = frozenset(
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
    network_events = frozenset(
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
    reach_events = frozenset(
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
    write_events = frozenset(
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
    read_events = frozenset({"os.listdir", "os.scandir", "os.getxattr", "os.listxattr"})
    deny_imports = frozenset(
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
    # a function's code is never rewritten; the launcher's functions keep their defaults too
    frozen_attrs = frozenset({"__defaults__", "__kwdefaults__"})
    function = type(make_audit_hook)

    def hook(
        event,
        args,
        _record=record,
        _place=place,
        _linked=linked,
        _as_text=as_text,
        _resolve=resolve,
        _type=type,
        _int=int,
        _str=str,
        _bytes=bytes,
        _bytearray=bytearray,
        _len=len,
        _Deny=PermissionError,
        _ws=ws,
        _ws_slash=ws_slash,
        _write_flags=write_flags,
        _process=process_events,
        _network=network_events,
        _reach=reach_events,
        _writes=write_events,
        _reads=read_events,
        _deny_imports=deny_imports,
        _frozen_attrs=frozen_attrs,
        _function=function,
        _func_code=function.__dict__["__code__"].__get__,
        _digests=digests,
        _blake=_blake2.blake2b,
        _dynload=dynload,
        _fspath=posix.fspath,
        _TypeError=TypeError,
    ):
        if event == "open":
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
        if event in _reads or event in _writes:
            path = args[0] if args else None
            if path is None or _type(path) is _int:
                return
            where, real = _place(path)
            if where == "ws" or (where == "ro" and event in _reads):
                return
            _record(event, real)
            raise _Deny(f"sandbox: {event} of {real} refused (outside the workspace)")
        if event == "os.rename" or event == "os.symlink":
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
        if event == "os.chdir":
            path = args[0]
            real = None if _type(path) is _int else _resolve(_as_text(path) or "\0")
            if real == _ws:
                return
            _record(event, real or "<fd>")
            raise _Deny("sandbox: chdir refused (the working directory stays the workspace)")
        if event == "sqlite3.connect":
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
        if event == "import":
            name = _as_text(args[0]) or ""
            top = name.split(".", 1)[0]
            if top in _deny_imports or top.startswith("_test") or top.startswith("datagauntlet"):
                _record(event, name)
                raise _Deny(f"sandbox: import of {name} refused")
            if _len(args) > 1 and args[1] is not None:
                # native code is about to be loaded from this file: only the stdlib's own
                where, real = _place(args[1])
                if where != "ro" or not real.startswith(_dynload + "/"):
                    _record(event, "native module " + name + " from " + real)
                    raise _Deny(f"sandbox: loading native code from {real} refused")
            return
        if event == "marshal.loads":
            data = args[0]
            if (_type(data) is _bytes or _type(data) is _bytearray) and _blake(
                data, digest_size=16
            ).digest() in _digests:
                return
            _record(event, "bytecode not from the stdlib")
            raise _Deny("sandbox: marshal.loads refused (only the stdlib's own bytecode loads)")
        if event == "object.__setattr__":
            name = _as_text(args[1]) if _len(args) > 1 else None
            if name == "__code__" or (
                name in _frozen_attrs
                and _type(args[0]) is _function
                and _func_code(args[0]).co_filename == "<sandbox-launcher>"
            ):
                _record(event, name)
                raise _Deny(f"sandbox: setting {name} refused")
            return
        if event == "resource.prlimit":
            if _len(args) > 2 and args[2] is not None:
                _record(event, "raise or set a limit")
                raise _Deny("sandbox: resource.prlimit refused")
            return
        if event in _process:
            _record(event, "start or signal a process")
            raise _Deny(f"sandbox: {event} refused (no processes)")
        if event.startswith("socket.") or event in _network:
            _record(event, "network")
            raise _Deny(f"sandbox: {event} refused (no network)")
        if event.startswith("ctypes."):
            _record(event, "native code")
            raise _Deny(f"sandbox: {event} refused (no ctypes)")
        if event in _reach:
            _record(event, "refused")
            raise _Deny(f"sandbox: {event} refused")

    def deny_fork_exec(*args, _record=record, _Deny=PermissionError):
        _record("_posixsubprocess.fork_exec", "start a process")
        raise _Deny("sandbox: _posixsubprocess.fork_exec refused (no processes)")

    return hook, deny_fork_exec
