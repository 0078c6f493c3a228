"""The audit hook's tools: the report line, paths read without running user code, and where a
path lands (the workspace, a read-only root, or outside).

Part of the launcher (standard library only; see audit.py for the rules every function made
here follows: each name it uses is bound as an immutable default when it is made).
"""


def make_record(report_fd):
    import posix

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

    return record


def make_as_text():
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

    return as_text


def make_resolve(workspace):
    import posix

    def resolve(
        path,
        _lstat=posix.lstat,
        _readlink=posix.readlink,
        _ws=workspace,
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

    return resolve


def make_place(workspace, read_roots, as_text, resolve):
    def place(
        raw,
        _as_text=as_text,
        _resolve=resolve,
        _ws=workspace,
        _ws_slash=workspace + "/",
        _roots=tuple(read_roots),
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

    return place


def make_linked():
    import posix

    def linked(real, _lstat=posix.lstat, _OSError=OSError):
        # a regular file with other names may be a hard link planted to a file outside
        try:
            st = _lstat(real)
        except _OSError:
            return False
        return st.st_mode & 0o170000 == 0o100000 and st.st_nlink > 1

    return linked
