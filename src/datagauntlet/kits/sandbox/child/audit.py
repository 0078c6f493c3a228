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
native code) the kernel walls stop; the battery in tests/kits/sandbox shows which wall stops
what. Its tools are made in audit_paths.py, its rules per event in audit_rules.py; this file
puts them together and dispatches each event to its rule.
"""


def make_audit_hook(workspace, read_roots, report_fd, code_digests, dynload):
    # The make_* and AUDIT_* names come from audit_paths.py and audit_rules.py: one launcher.
    record = make_record(report_fd)  # noqa: F821
    as_text = make_as_text()  # noqa: F821
    resolve = make_resolve(workspace)  # noqa: F821
    place = make_place(workspace, read_roots, as_text, resolve)  # noqa: F821
    linked = make_linked()  # noqa: F821
    open_rule = make_open_rule(place, linked, as_text, record)  # noqa: F821
    path_rule = make_path_rule(place, record)  # noqa: F821
    link_rule = make_link_rule(place, as_text, record)  # noqa: F821
    chdir_rule = make_chdir_rule(workspace, resolve, as_text, record)  # noqa: F821
    sqlite_rule = make_sqlite_rule(place, linked, as_text, record)  # noqa: F821
    import_rule = make_import_rule(place, as_text, record, dynload)  # noqa: F821
    marshal_rule = make_marshal_rule(code_digests, record)  # noqa: F821
    setattr_rule = make_setattr_rule(as_text, record)  # noqa: F821

    def hook(
        event,
        args,
        _open=open_rule,
        _path=path_rule,
        _link=link_rule,
        _chdir=chdir_rule,
        _sqlite=sqlite_rule,
        _import=import_rule,
        _marshal=marshal_rule,
        _setattr=setattr_rule,
        _record=record,
        _len=len,
        _Deny=PermissionError,
        _process=AUDIT_PROCESS_EVENTS,  # noqa: F821
        _network=AUDIT_NETWORK_EVENTS,  # noqa: F821
        _reach=AUDIT_REACH_EVENTS,  # noqa: F821
        _writes=AUDIT_WRITE_EVENTS,  # noqa: F821
        _reads=AUDIT_READ_EVENTS,  # noqa: F821
    ):
        if event == "open":
            return _open(args)
        if event in _reads or event in _writes:
            return _path(event, args)
        if event == "os.rename" or event == "os.symlink":
            return _link(event, args)
        if event == "os.chdir":
            return _chdir(args)
        if event == "sqlite3.connect":
            return _sqlite(args)
        if event == "import":
            return _import(args)
        if event == "marshal.loads":
            return _marshal(args)
        if event == "object.__setattr__":
            return _setattr(args)
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
