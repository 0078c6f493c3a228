"""Landlock for the sandboxed child: read-only interpreter and stdlib, read-write workspace.

Runs inside the child before any user code, through ctypes (the stdlib has no Landlock API).
Standard library only: this file is part of the launcher the child runs, not imported there.
Every right the kernel's ABI knows is handled, so what no rule grants is denied: outside the
workspace and the read-only roots, nothing can be opened, created, renamed into, or executed;
from ABI 4 TCP bind/connect are denied; from ABI 6 signals and abstract unix sockets cannot
leave the sandbox.
"""

import ctypes
import os

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def landlock_abi(libc):
    """The kernel's Landlock ABI version, or 0 with the reason it is unavailable."""
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(CREATE_RULESET_VERSION),
    )
    if abi < 0:
        return 0, os.strerror(ctypes.get_errno())
    return int(abi), ""


def _fs_rights(abi):
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def install_landlock(libc, workspace, read_dirs, read_files):
    """Confine this process; returns (True, detail) or (False, reason). Never half-applies."""
    abi, why = landlock_abi(libc)
    if abi <= 0:
        return False, "kernel has no Landlock: " + why
    handled = _fs_rights(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    fd = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        ctypes.byref(attr),
        ctypes.c_size_t(size),
        ctypes.c_uint32(0),
    )
    if fd < 0:
        return False, "landlock_create_ruleset: " + os.strerror(ctypes.get_errno())
    try:
        workspace_rights = handled & (
            FS_READ_FILE
            | FS_READ_DIR
            | FS_WRITE_FILE
            | FS_REMOVE_DIR
            | FS_REMOVE_FILE
            | FS_MAKE_DIR
            | FS_MAKE_REG
            | FS_MAKE_SYM
            | FS_REFER
            | FS_TRUNCATE
        )
        rules = [(workspace, workspace_rights)]
        rules += [(d, FS_READ_FILE | FS_READ_DIR) for d in read_dirs]
        rules += [(f, FS_READ_FILE) for f in read_files]
        for path, rights in rules:
            if not _add_rule(libc, fd, path, rights) and path == workspace:
                return False, "cannot add the workspace rule: " + os.strerror(ctypes.get_errno())
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False, "no_new_privs: " + os.strerror(ctypes.get_errno())
        rc = libc.syscall(
            ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)
        )
        if rc != 0:
            return False, "landlock_restrict_self: " + os.strerror(ctypes.get_errno())
    finally:
        os.close(fd)
    scopes = "; fs, tcp and signal scopes" if abi >= 6 else ""
    return True, f"ABI {abi}{scopes}"


def _add_rule(libc, ruleset_fd, path, rights):
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False  # a read-only root this host lacks (no zoneinfo, say): nothing to grant
    try:
        beneath = _PathBeneath(rights, pfd)
        rc = libc.syscall(
            ctypes.c_long(SYS_LANDLOCK_ADD_RULE),
            ctypes.c_int(ruleset_fd),
            ctypes.c_int(RULE_PATH_BENEATH),
            ctypes.byref(beneath),
            ctypes.c_uint32(0),
        )
        return rc == 0
    finally:
        os.close(pfd)
